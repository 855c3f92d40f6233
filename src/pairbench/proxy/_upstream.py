"""Asking a model server what it is: one GET, answered with data or the reason there is none.

A server that does not serve an endpoint (not llama.cpp, or an endpoint switched off) is a
fact to record, never an exception.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import httpx

TIMEOUT_S = 10.0


class Fetched(NamedTuple):
    """An endpoint's answer: ``data`` (JSON, or text when ``text``) or ``missing`` (why not)."""

    data: Any
    missing: str | None


def fetch(base_url: str, path: str, *, text: bool = False) -> Fetched:
    """GET ``base_url + path``; any failure becomes ``missing`` with the reason.

    >>> fetch("http://127.0.0.1:9", "/props").missing.startswith("GET http://127.0.0.1:9/props")
    True
    """
    url = base_url.rstrip("/") + path
    try:
        # trust_env off: a proxy in the environment must not answer for a loopback server
        response = httpx.get(url, timeout=TIMEOUT_S, trust_env=False)
    except httpx.HTTPError as exc:
        return Fetched(None, f"GET {url} failed: {exc!r}")
    if response.status_code != 200:
        hint = " (not a llama.cpp server, or the endpoint is off)" if response.status_code in (
            404, 501) else ""  # fmt: skip
        return Fetched(None, f"GET {url} answered {response.status_code}{hint}{_said(response)}")
    if text:
        return Fetched(response.text, None)
    try:
        return Fetched(response.json(), None)
    except ValueError:
        return Fetched(None, f"GET {url} answered 200 with a body that is not JSON")


def _said(response: httpx.Response) -> str:
    """The server's own error message, if it gave one (llama.cpp: "Loading model")."""
    try:
        err = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    message = err.get("message") if isinstance(err, dict) else err
    return f": {message}" if isinstance(message, str) and message else ""
