"""The validity classifier on the playwright site's audit log: an agent that reached the
site without the browser the arm gives it is flagged, and one that used it is not."""

from __future__ import annotations

import contextvars
from pathlib import Path
from typing import Any

import httpx

from pairbench.grading import classify_validity
from pairbench.spec import load_experiment
from pairbench.studies.mcp_transports_playwright import SITE_FIXTURE, STUDY

ARMS = load_experiment(STUDY.experiment_path).experiment.arms
CHROMIUM_HEADERS = {
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0 Safari/537.36",
    "sec-fetch-mode": "navigate",
}


def _events(*calls: str) -> list[dict[str, Any]]:
    connect = {
        "kind": "mcp_connect",
        "server": "playwright",
        "ok": True,
        "tools": ["browser_navigate", "browser_evaluate"],
    }
    return [connect] + [
        {"kind": "tool_call", "server": "playwright", "tool": tool, "arguments": {}}
        for tool in calls
    ]


def _visit(tmp_path: Path, headers: dict[str, str] | None) -> Any:
    ctx = contextvars.copy_context()
    content = ctx.run(SITE_FIXTURE.content, 2)
    httpx.get(content["site"]["url"] + "catalog", headers=headers)
    return ctx.run(SITE_FIXTURE.read_state, tmp_path)


def test_a_fetch_from_outside_the_browser_makes_the_trial_invalid(tmp_path: Path) -> None:
    # The agent navigated the browser, and also fetched the page itself (curl, WebFetch...).
    state = _visit(tmp_path, None)
    validity = classify_validity(ARMS["local-stdio"], _events("browser_navigate"), state)
    assert not validity.valid
    assert validity.off_surface == ["fixture:view"]


def test_reaching_the_site_with_no_tool_call_is_invalid(tmp_path: Path) -> None:
    # Browser-shaped requests, but the transcript holds no call that could have made them.
    state = _visit(tmp_path, CHROMIUM_HEADERS)
    for arm in ("baseline", "remote-http"):
        validity = classify_validity(ARMS[arm], _events() if arm != "baseline" else [], state)
        assert validity.off_surface == ["fixture:reached without a tool call"], arm


def test_browsing_through_the_server_is_valid(tmp_path: Path) -> None:
    state = _visit(tmp_path, CHROMIUM_HEADERS)
    assert classify_validity(ARMS["remote-http"], _events("browser_navigate"), state).valid
    # Without the fixture's state the classifier judges the transcript alone, as before.
    assert classify_validity(ARMS["local-stdio"], _events("browser_navigate")).valid
