"""webmcp-vs-pdf with the REAL CLI agents: every declared surface reaches them.

The PDF arm's attachment is placed in the CLI's working folder and named in the prompt; the
WebMCP arm's page reaches the CLI through the WebMCP bridge (a stdio MCP server pairbench
starts per attempt, driving the page in headless Chromium). Both arms get the same ordinary
tools (Codex: its read-only sandboxed shell, with ``pdftotext``), so the tool lists the model
was offered differ only in the page's tools.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, skip_outside_ci
from pairbench import start_run
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.studies.webmcp_vs_pdf import PDF_PATH, STUDY
from pairbench.testing.responses_double import start_responses_double
from test_real_codex import codex_agent

pytestmark = pytest.mark.cli

PAGE_TOOLS = {"fit_random_effects", "egger_test", "get_dataset"}
CODEX_MCP_HELPERS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}


def _need_tools() -> None:
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"the WebMCP arm needs Chromium >= 156: {problem}")
    if shutil.which("pdftotext") is None:
        skip_outside_ci("the PDF arm's shell tool needs pdftotext (Debian poppler-utils)")


def _study(tmp_path: Path) -> Path:
    shutil.copytree(STUDY.root, tmp_path / "study", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "study" / "experiment.yaml"


def _offered(body: dict[str, Any]) -> set[str]:
    """Every tool name a Responses request offered, namespaced tools as ``ns__name``."""
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            names |= {f"{tool['name']}__{t['name']}" for t in tool.get("tools") or []}
        else:
            names.add(str(tool.get("name") or tool.get("type")))
    return names


def _page_audit(run_dir: Path) -> list[dict[str, Any]]:
    found = sorted((run_dir / "fixtures" / "webmcp").rglob("webmcp-page.audit.jsonl"))
    return [json.loads(line) for p in found for line in p.read_text().splitlines()]


def test_real_codex_reads_the_pdf_and_calls_the_pages_tools(tmp_path: Path) -> None:
    _need_tools()
    exp = _study(tmp_path)
    with start_responses_double() as double:
        edit_experiment(exp, trials=1, agent=codex_agent(double.url))
        outcome = start_run(exp, tmp_path / "runs", run_seed=3)
        requests = list(double.requests)
        outputs = list(double.tool_outputs)
    assert outcome.status == "complete", outcome.status
    results = {r.arm: r for r in outcome.results}
    # The PDF arm's agent read the PDF: text found only in the PDF came back to the model.
    pdf = results["pdf"]
    assert pdf.outcome in ("passed", "failed"), (pdf.reason, pdf.final_answer)
    assert any("s04" in o and "yi" in o for o in outputs), outputs[:2]
    given = [
        json.loads(line)
        for line in (outcome.run_dir / "transcripts" / "pdf" / "common-prompt" / "0.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if '"attachments_given"' in line
    ]
    assert given[0]["files"][0]["sha256"] == hashlib.sha256(PDF_PATH.read_bytes()).hexdigest()
    # The WebMCP arm's agent called the page's tools through the bridge; the audit shows it.
    web = results["webmcp"]
    assert web.outcome == "passed", (web.reason, web.final_answer)
    audited = [a["tool"] for a in _page_audit(outcome.run_dir)]
    assert sorted(audited) == ["egger_test", "fit_random_effects", "fit_random_effects"]
    # What the model was offered per arm differs only in the page's tools.
    by_arm: dict[str, set[str]] = {}
    for body in requests:
        arm = "pdf" if "benchmark-baseline.pdf" in json.dumps(body.get("input")) else "webmcp"
        by_arm.setdefault(arm, set()).update(_offered(body))
    page = {f"mcp__page__{t}" for t in PAGE_TOOLS}
    assert by_arm["pdf"] <= by_arm["webmcp"]  # the same ordinary tools in both arms
    # Beyond the page's tools, only codex's generic MCP resource tools, which it offers
    # whenever any MCP server is configured.
    extra = by_arm["webmcp"] - by_arm["pdf"]
    assert {n for n in extra if n.startswith("mcp__page__")} == page
    assert extra - page <= CODEX_MCP_HELPERS, extra
    assert "exec_command" in by_arm["pdf"]


def test_real_claude_reads_the_pdf_and_calls_the_pages_tools(tmp_path: Path) -> None:
    from pairbench.studies.webmcp_vs_pdf import PDF_SHA256
    from pairbench.testing.anthropic_double import start_anthropic_double
    from test_real_claude import claude_agent

    _need_tools()
    exp = _study(tmp_path)
    with start_anthropic_double() as double:
        # The same ordinary tool in both arms: Read, in the attempt's working folder.
        edit_experiment(exp, trials=1, agent=claude_agent(double.url, tools=["Read"]))
        outcome = start_run(exp, tmp_path / "runs", run_seed=3)
        documents = list(double.documents)
        mains = [e.body for e in double.exchanges if e.main]
    assert outcome.status == "complete", outcome.status
    results = {r.arm: r for r in outcome.results}
    # The PDF arm's agent read the PDF: the double got its exact bytes in a document block.
    assert PDF_SHA256 in {d.sha256 for d in documents}, documents
    pdf = results["pdf"]
    assert pdf.outcome in ("passed", "failed"), (pdf.reason, pdf.final_answer)
    assert pdf.grade is not None and pdf.grade.details["correct"] > 0
    web = results["webmcp"]
    assert web.outcome == "passed", (web.reason, web.final_answer)
    audited = [a["tool"] for a in _page_audit(outcome.run_dir)]
    assert sorted(audited) == ["egger_test", "fit_random_effects", "fit_random_effects"]
    by_arm: dict[str, set[str]] = {}
    for body in mains:
        arm = "pdf" if "benchmark-baseline.pdf" in json.dumps(body.get("messages")) else "webmcp"
        by_arm.setdefault(arm, set()).update(str(t.get("name")) for t in body.get("tools") or [])
    assert by_arm["pdf"] == {"Read"}
    assert by_arm["webmcp"] - by_arm["pdf"] == {f"mcp__page__{t}" for t in PAGE_TOOLS}
