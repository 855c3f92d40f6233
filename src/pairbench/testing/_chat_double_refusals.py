"""Which requests the chat double refuses instead of answering, and the file parts it records.

**Errors by request number** (1-based, over every chat request the server received):
``rate_limit_on`` (429 ``rate_limit_exceeded``), ``quota_on`` (429 ``insufficient_quota``),
``server_error_on`` (500); ``fail_auth`` answers 401 to everything, ``api_key`` answers 401
unless the bearer token matches. (``omit_usage_on``, a 200 without ``usage``, is no refusal:
the double's reply handles it.)

**File parts** (``{"type": "file", "file": {"filename", "file_data"}}``) are accepted and
recorded (``double.files``, one ``file_record`` each); ``reject_file_parts`` answers any
request carrying one with 400 ``invalid_value`` (``file_refusal``), as endpoints without
file input do.

Every refusal has OpenAI's error shape: ``{"error": {message, type, param, code}}``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from starlette.responses import JSONResponse

from pairbench.testing._messages import file_bytes as _file_bytes

if TYPE_CHECKING:
    pass


def error(
    status: int, message: str, kind: str, code: str | None, param: str | None = None
) -> JSONResponse:
    """An OpenAI-shaped error response."""
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


class Refusals(Protocol):
    """What a double's script says about refusing requests (the chat and Responses doubles'
    scripts both have it)."""

    @property
    def fail_auth(self) -> bool: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def quota_on(self) -> Collection[int]: ...
    @property
    def rate_limit_on(self) -> Collection[int]: ...
    @property
    def server_error_on(self) -> Collection[int]: ...


def refusal_for(script: Refusals, authorization: str, n: int | None) -> JSONResponse | None:
    """The error request ``n`` (with this ``Authorization`` header) gets, or None; a request
    the double does not number (``n`` None, e.g. ``GET /models``) is refused only for auth."""
    s = script
    if s.fail_auth or (s.api_key is not None and authorization != f"Bearer {s.api_key}"):
        return error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    if n is None:
        return None
    if n in s.quota_on:
        msg = "You exceeded your current quota, please check your plan and billing details."
        return error(429, msg, "insufficient_quota", "insufficient_quota")
    if n in s.rate_limit_on:
        msg = "Rate limit reached for requests per min (RPM): limit 3, used 3."
        return error(429, msg, "requests", "rate_limit_exceeded")
    if n in s.server_error_on:
        return error(
            500, "The server had an error while processing your request.", "server_error", None
        )
    return None


def file_parts(body: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(``messages[i].content[j]``, part) for every file content part of a request."""
    out: list[tuple[str, dict[str, Any]]] = []
    for i, m in enumerate(body.get("messages") or []):
        content = m.get("content") if isinstance(m, dict) else None
        for j, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") == "file":
                out.append((f"messages[{i}].content[{j}]", part))
    return out


def file_record(n: int, where: str, part: Mapping[str, Any], accepted: bool) -> dict[str, Any]:
    """One entry of ``double.files``: ``{n, where, filename, mime, bytes, sha256, accepted}``."""
    file = part.get("file") or {}
    data = _file_bytes(file)
    prefix = str(file.get("file_data") or "").partition(";base64,")[0]
    return {
        "n": n,
        "where": where,
        "filename": file.get("filename"),
        "mime": prefix.removeprefix("data:") or None,
        "bytes": None if data is None else len(data),
        "sha256": None if data is None else hashlib.sha256(data).hexdigest(),
        "accepted": accepted,
    }


def file_refusal(where: str) -> JSONResponse:
    """The 400 an endpoint without file input gives a file part at ``where``."""
    msg = "Invalid value: 'file'. Supported values are: 'text' and 'image_url'."
    return error(400, msg, "invalid_request_error", "invalid_value", where + ".type")
