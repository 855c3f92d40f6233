"""Browser state isolation on one warm ``@playwright/mcp`` over streamable HTTP, the way the
study's remote-http arm runs it (``--isolated``, no ``--shared-browser-context``): a cookie
and a localStorage value set in one MCP session are absent in a session open at the same
time and in the session after it. With the real binary and Chromium, on the study's site."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from pairbench.fixtures._serve_port import start_port_server
from pairbench.spec import load_experiment
from pairbench.studies.mcp_transports_playwright import SITE_FIXTURE, STUDY

pytestmark = pytest.mark.browser

_READ = "() => JSON.stringify({cookie: document.cookie, stored: localStorage.getItem('pb')})"


def _serve_argv(binary: Path) -> list[str]:
    spec = load_experiment(STUDY.experiment_path).experiment.arms["remote-http"]
    assert spec.tools != "none"
    server = spec.tools.mcp["playwright"]
    assert server.warm and server.serve is not None
    return [str(binary), *server.serve[1:]]


def _result(text: str) -> dict[str, Any]:
    # browser_evaluate answers "### Result\n<JSON of the returned value>".
    body = text.split("### Result", 1)[1].strip().split("\n###", 1)[0]
    found: dict[str, Any] = json.loads(json.loads(body))
    return found


@asynccontextmanager
async def _session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client() as client,
        streamable_http_client(url, http_client=client) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _call(session: ClientSession, tool: str, **args: Any) -> str:
    result = await session.call_tool(tool, args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    return text


async def _visit(session: ClientSession, page: str, mark: str | None) -> dict[str, Any]:
    """What the page's origin holds on arrival; then leave ``mark`` in cookie and storage."""
    await _call(session, "browser_navigate", url=page)
    seen = _result(await _call(session, "browser_evaluate", function=_READ))
    if mark is not None:
        script = (
            f"() => {{ document.cookie = 'pb={mark}; path=/; max-age=3600'; "
            f"localStorage.setItem('pb', '{mark}'); return document.cookie; }}"
        )
        await _call(session, "browser_evaluate", function=script)
        again = _result(await _call(session, "browser_evaluate", function=_READ))
        assert again == {"cookie": f"pb={mark}", "stored": mark}  # it did stick
    return seen


@pytest.mark.browser
def test_warm_http_server_gives_each_session_its_own_browser_state(
    tmp_path: Path, playwright_mcp: Path
) -> None:
    # Every page of every trial is on one origin (the site's host and port): what one
    # trial leaves there is what another would find.
    page = SITE_FIXTURE.content(11)["site"]["url"]

    async def scenario() -> list[dict[str, Any]]:
        server = await start_port_server(
            "playwright",
            _serve_argv(playwright_mcp),
            "/mcp",
            tmp_path,
            {},
            what="playwright",
            cwd=tmp_path,
        )
        try:
            async with _session(server.url) as first:
                before_first = await _visit(first, page, "trial-k")
                # A concurrent trial: the first session is still open, its values set.
                async with _session(server.url) as concurrent:
                    during = await _visit(concurrent, page, None)
            # The next trial on the same warm server.
            async with _session(server.url) as following:
                after = await _visit(following, page, None)
        finally:
            await server.aclose()
        return [before_first, during, after]

    seen = anyio.run(scenario)
    assert seen == [{"cookie": "", "stored": None}] * 3, seen
