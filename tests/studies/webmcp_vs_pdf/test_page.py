"""The agent-facing page in real headless Chromium: its WebMCP tools equal the engine, and
its bytes are frozen (the committed file, in the lock, the same in every run).

Outside CI a missing Chromium >= 156 (or Playwright) skips these tests loudly; under
``CI=true`` it fails them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from helpers.common import skip_outside_ci
from pairbench.fixtures._procs import start_warm_server
from pairbench.fixtures._webmcp import WebMcpSurface, chromium_problem, launch_chromium
from pairbench.spec import load_experiment
from pairbench.spec._models import Tools, WebMcpPage
from pairbench.store._transcript import Transcript
from pairbench.studies.webmcp_vs_pdf import (
    PDF_SHA256,
    STUDY,
    build_page,
    egger_test,
    fit_dataset,
    load_dataset,
)
from pairbench.studies.webmcp_vs_pdf._page import NO_RUNS, PAGE_PATH, TOOL_NAMES
from pairbench.studies.webmcp_vs_pdf.site import HEADERS

pytestmark = pytest.mark.browser

Body = Callable[[str], Awaitable[None]]


@pytest.fixture(autouse=True)
def _chromium() -> None:
    problem = chromium_problem()
    if problem is None:
        return
    skip_outside_ci(f"WebMCP browser tests: {problem}")


def _close(value: object) -> object:
    """The same engine, to the last bits: the site runs under the scrubbed environment, where
    OpenBLAS may pick another kernel (OPENBLAS_CORETYPE) and differ in the final ULPs."""
    if isinstance(value, float):
        return pytest.approx(value, rel=1e-12, abs=1e-15)
    return value


def _page_spec() -> WebMcpPage:
    tools = load_experiment(STUDY.experiment_path).experiment.arms["webmcp"].tools
    assert isinstance(tools, Tools)
    return tools.webmcp["page"]


async def _with_site(tmp_path: Path, env: dict[str, str], body: Body) -> None:
    site = await start_warm_server("page", _page_spec(), tmp_path / "fixtures", env)
    async with site:
        await body(site.url)


def test_the_page_registers_its_tools_as_the_draft_defines(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    async def body(url: str) -> None:
        async with launch_chromium() as browser:
            page = await (await browser.new_context()).new_page()
            await page.goto(url + "/")
            await page.wait_for_function(
                "document.getElementById('webmcp-status').textContent.includes('registered')"
            )
            tools = {t["name"]: t for t in await page.webmcp.tools()}
            assert set(tools) == set(TOOL_NAMES)
            for tool in tools.values():
                assert tool["description"]
                annotations = tool.get("annotations") or {}
                assert annotations.get("readOnly") or annotations.get("readOnlyHint")
            fit_schema = tools["fit_random_effects"]["inputSchema"]
            egger_schema = tools["egger_test"]["inputSchema"]
            assert fit_schema is not None and egger_schema is not None
            exclude = fit_schema["properties"]["exclude"]
            assert exclude["type"] == "array" and exclude["items"]["type"] == "string"
            variant = egger_schema["properties"]["variant"]
            assert variant["enum"] == ["classic", "rma"] and variant["default"] == "classic"
            # The page itself: registered through document.modelContext, no navigator API.
            titles = await page.evaluate(
                "document.modelContext.getTools().then(ts => ts.map(t => t.title).sort())"
            )
            assert "Fit the REML random-effects model" in titles
            assert await page.evaluate("navigator.modelContext === undefined")
            assert NO_RUNS in await page.locator("#living-evidence").inner_text()
            assert await page.locator("#pdf-sha256").inner_text() == PDF_SHA256

    anyio.run(_with_site, tmp_path, server_env, body)


def test_tool_results_through_chromium_equal_the_engine(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    tr = Transcript(tmp_path / "t.jsonl")
    records = load_dataset()
    yi, vi = [r.yi for r in records], [r.vi for r in records]

    async def body(url: str) -> None:
        async with WebMcpSurface({"page": _page_spec()}, {"page": url}, tr) as surface:
            assert {t.name for t in surface.tools["page"]} == set(TOOL_NAMES)
            for exclude in ((), ("s04",)):
                args: dict[str, Any] = {"exclude": list(exclude)} if exclude else {}
                out = await surface.call("page", "fit_random_effects", args)
                assert not out.is_error and json.loads(out.text) == out.structured
                expected = asdict(fit_dataset(exclude))
                expected["excluded"] = list(exclude)
                for key, value in expected.items():
                    assert out.structured[key] == _close(value), key
            for variant in ("classic", "rma"):
                args = {} if variant == "classic" else {"variant": variant}
                out = await surface.call("page", "egger_test", args)
                test = egger_test(yi, vi, variant)
                assert out.structured["variant"] == variant
                assert out.structured["p"] == _close(test.p)
                assert out.structured["statistic"] == _close(test.z_or_t)
            dataset = await surface.call("page", "get_dataset", {})
            got = [(r["record"], r["yi"], r["vi"]) for r in dataset.structured["records"]]
            assert got == [(r.record, r.yi, r.vi) for r in records]
            bad = await surface.call("page", "fit_random_effects", {"exclude": ["s99"]})
            assert bad.is_error and "unknown record" in bad.text
            wrong = await surface.call("page", "egger_test", {"variant": "fancy"})
            assert wrong.is_error and "variant" in wrong.text

    anyio.run(_with_site, tmp_path, server_env, body)
    tr.close()
    assert tr.of_kind("mcp_connect")[0]["transport"] == "webmcp"


def test_the_agent_page_is_frozen_committed_and_locked(
    tmp_path: Path, server_env: dict[str, str]
) -> None:
    served: list[bytes] = []

    async def body(url: str) -> None:
        async with httpx.AsyncClient() as client:
            response = await client.get(url + "/")
            assert response.headers["origin-agent-cluster"] == HEADERS["Origin-Agent-Cluster"]
            served.append(response.content)
            for private in ("/people", "/api/score"):  # the trial site shows no runs
                assert (await client.post(url + private, json={})).status_code in {404, 405}

    for run in ("one", "two"):  # two separate sites, as two runs start them
        anyio.run(_with_site, tmp_path / run, server_env, body)
    committed = PAGE_PATH.read_bytes()
    assert served == [committed, committed]
    assert build_page().encode("utf-8") == committed  # the builder reproduces it
    lock = json.loads((STUDY.root / "experiment.lock.json").read_text(encoding="utf-8"))
    locked = {f["path"]: f["sha256"] for f in lock["files"]}
    assert locked["page/index.html"] == hashlib.sha256(committed).hexdigest()
    text = committed.decode("utf-8")
    assert text.count(NO_RUNS) == 1 and PDF_SHA256 in text
    assert "navigator.modelContext" not in text and "provideContext" not in text
