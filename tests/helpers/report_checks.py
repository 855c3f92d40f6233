"""Checks every built-in study's report must pass: its declared plots and no others, its
stated limits, self-contained HTML, and no table cell that wraps at 1,400 px."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable
from pairbench.spec._report_spec import CORE_PLOTS

VIEWPORT = {"width": 1400, "height": 900}
FREE_TEXT_HEADERS = {"Reason", "Final answer (excerpt)", "Trials (arm/task/trial)", "Note"}
"""Columns of agent or grader text: their tables may scroll sideways (never wrap)."""


def figures_in(html: str) -> list[str]:
    """The plots drawn in a report.html, by name, in page order."""
    return re.findall(r'<figure class="plot" id="plot-([a-z-]+)">', html)


def check_declared_plots(run_dir: Path) -> dict[str, Any]:
    """The report shows exactly the plots the experiment declares (each drawn, or a sentence
    saying why not), its limits, and no URL; returns the summary."""
    summary: dict[str, Any] = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    declared = summary["run"]["experiment"]["plots"]
    assert declared is not None, "every built-in study declares its plots"
    drawn = figures_in(html)
    assert set(drawn) <= set(declared), drawn
    for name in declared:
        assert name in drawn or f"Plot {name!r} not drawn: " in md, name
    for name in set(CORE_PLOTS) - set(declared):
        assert f'id="plot-{name}"' not in html
    for limit in summary["run"]["experiment"]["limits"]:
        assert limit.replace("'", "&#39;").replace('"', "&#34;") in html or limit in html, limit
    assert summary["run"]["experiment"]["limits"], "every built-in study states its limits"
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", html, re.IGNORECASE)
    return summary


def check_renders_offline_without_wrapping(run_dir: Path, shot: Path | None = None) -> None:
    """report.html in Chromium at 1,400 px: no request leaves the file, no script error,
    every table cell one line, and tables of numbers fit the page without scrolling."""
    from playwright.sync_api import sync_playwright

    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            page = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto((run_dir / "report.html").resolve().as_uri())
            page.wait_for_load_state("load")
            if shot is not None:
                page.screenshot(path=str(shot), full_page=True)
            wrapped = page.evaluate(
                """() => [...document.querySelectorAll('td, th')].filter(c => {
                    const style = getComputedStyle(c);
                    const line = parseFloat(style.lineHeight) || 1.45 * parseFloat(style.fontSize);
                    const pad = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
                    return c.clientHeight - pad > 1.6 * line;
                }).map(c => c.textContent.slice(0, 60))"""
            )
            overflowing = page.evaluate(
                """(free) => [...document.querySelectorAll('section > .table > table')]
                .filter(t => {
                    const heads = [...t.querySelectorAll('th')].map(h => h.textContent);
                    if (heads.some(h => free.includes(h))) return false;
                    return t.scrollWidth > t.parentElement.clientWidth + 1;
                }).map(t => t.querySelector('th').textContent)""",
                sorted(FREE_TEXT_HEADERS),
            )
        finally:
            browser.close()
    assert [u for u in requests if not u.startswith("file://")] == []
    assert errors == []
    assert wrapped == []
    assert overflowing == []


def check_proxy_usage_is_never_unmeasured(run_dir: Path) -> None:
    """A run whose proxy saw model responses with usage never says its usage went unreported:
    "not measured" only where nothing pairbench saw measured it."""
    from pairbench.proxy import read_records

    records = read_records(run_dir / "proxy" / "exchanges.jsonl")
    measured = [r for r in records if r.is_model_request and (r.usage or {}).get("prompt_tokens")]
    assert measured, f"{run_dir}: the proxy saw no measured model response"
    for name in ("report.md", "report.html"):
        text = (run_dir / name).read_text(encoding="utf-8")
        assert "no model usage reported" not in text, f"{run_dir / name}"
