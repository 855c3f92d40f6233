"""webmcp-vs-pdf with the openai agent against the local Chat Completions double.

Real parts only: the double is real HTTP on loopback; the webmcp arm's page is served by the
study's site and its WebMCP tools run in real headless Chromium (every call the model makes
goes through the browser); the pdf arm attaches the real frozen PDF; the run goes through
``pairbench.start_run``. The double builds its final answer from the tool results it received,
so the webmcp arm scores 13/13 only if the whole tool path works. The pdf arm need not pass:
the double estimates by hand from the PDF's table (DerSimonian-Laird, not REML).

Skips loudly outside CI when Chromium >= 156 is missing; under ``CI=true`` it fails instead.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, skip_outside_ci
from pairbench import start_run
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.spec import Tools, load_experiment
from pairbench.store import TrialResult
from pairbench.studies.webmcp_vs_pdf import PDF_SHA256, STUDY, reference_answer, score_answer
from pairbench.testing.chat_double import Exchange, decide, start_chat_double

pytestmark = pytest.mark.browser

PROMPT = (STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8")
PAGE = "page"  # the webmcp arm's page, by its name in experiment.yaml
CALLS = [
    ("fit_random_effects", {}),
    ("fit_random_effects", {"exclude": ["s04"]}),
    ("egger_test", {"variant": "classic"}),
]


@dataclass
class Ran:
    status: str
    run_dir: Path
    results: list[TrialResult]
    exchanges: list[Exchange]
    files: list[dict[str, Any]]


def _need_chromium() -> None:
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"the openai webmcp-vs-pdf run: {problem}")


def _run(root: Path, trials: int, script: dict[str, Any]) -> Ran:
    _need_chromium()
    shutil.copytree(STUDY.root, root / "study", ignore=shutil.ignore_patterns("__pycache__"))
    exp = root / "study" / "experiment.yaml"
    with start_chat_double(script) as double:
        settings = {"base_url": f"{double.url}/v1", "model": "double"}
        edit_experiment(exp, trials=trials, agent={"adapter": "openai", "settings": settings})
        outcome = start_run(exp, root / "runs", run_seed=41)
        exchanges, files = list(double.exchanges), double.files
    return Ran(outcome.status, outcome.run_dir, list(outcome.results), exchanges, files)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    yield _run(tmp_path_factory.mktemp("openai-webmcp"), trials=2, script={})


def _transcript(run_dir: Path, r: TrialResult) -> list[dict[str, Any]]:
    path = run_dir / "transcripts" / r.arm / r.task / f"{r.trial}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]


def _offered(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def test_the_page_is_named_page_in_the_study() -> None:
    web = load_experiment(STUDY.experiment_path).experiment.arms["webmcp"].tools
    assert isinstance(web, Tools) and list(web.webmcp) == [PAGE]


def test_both_arms_ran_and_the_webmcp_arm_scores_13_of_13(ran: Ran) -> None:
    assert ran.status == "complete"
    assert sorted((r.arm, r.trial) for r in ran.results) == [
        ("pdf", 0),
        ("pdf", 1),
        ("webmcp", 0),
        ("webmcp", 1),
    ]
    for r in ran.results:
        assert r.seeding is not None and r.seeding.status == "seeded", (r.arm, r.trial)
        assert r.metrics is not None and r.metrics.input_tokens.provenance == "measured"
        if r.arm == "webmcp":
            assert r.outcome == "passed", (r.reason, r.final_answer)
            assert r.grade is not None and r.grade.details["correct"] == 13
            assert r.validity is not None and r.validity.valid
        else:  # answered in the protocol's shape from the PDF, by hand: scored, not 13/13
            assert r.outcome == "failed", (r.reason, r.final_answer)
            assert r.grade is not None and 0 < r.grade.details["correct"] < 13


def test_the_webmcp_arms_calls_went_through_chromium(ran: Ran) -> None:
    for r in (r for r in ran.results if r.arm == "webmcp"):
        lines = _transcript(ran.run_dir, r)
        (connect,) = [e for e in lines if e["kind"] == "mcp_connect"]
        assert connect["transport"] == "webmcp" and connect["ok"] is True
        assert connect["server"] == PAGE and int(connect["browser"].split(".")[0]) >= 156
        assert {"fit_random_effects", "egger_test"} <= set(connect["tools"])
        calls = [e for e in lines if e["kind"] == "tool_call"]
        assert [(c["server"], c["tool"], c["arguments"]) for c in calls] == [
            (PAGE, tool, args) for tool, args in CALLS
        ]
        results = [e for e in lines if e["kind"] == "tool_result"]
        assert [(e["server"], e["tool"], e["is_error"]) for e in results] == [
            (PAGE, tool, False) for tool, _ in CALLS
        ]
        assert not [e for e in lines if e["kind"] in ("invalid_tool_call", "attachment")]


def test_the_double_answered_from_the_tool_results_it_received(ran: Ran) -> None:
    webmcp_requests = [e.body for e in ran.exchanges if _offered(e.body)]
    assert webmcp_requests and all(
        {f"{PAGE}__fit_random_effects", f"{PAGE}__egger_test"} <= set(_offered(b))
        for b in webmcp_requests
    )
    received = [_tool_messages(b) for b in webmcp_requests]
    for r in (r for r in ran.results if r.arm == "webmcp"):
        texts = [e["text"] for e in _transcript(ran.run_dir, r) if e["kind"] == "tool_result"]
        # The browser's results reached the model verbatim, as tool messages...
        assert texts in received
        full, without, egger = (json.loads(t) for t in texts)
        # ...and the final answer's numbers are exactly those results (not recomputed).
        answer = json.loads(r.final_answer or "")
        keys = ("k", "estimate", "ci_lower", "ci_upper", "p")
        assert {k: answer["overall"][k] for k in keys} == {k: full[k] for k in keys}
        assert {k: answer["exclude_s04"][k] for k in keys} == {k: without[k] for k in keys}
        assert answer["exclude_s04"]["excluded"] == ["s04"] == without["excluded"]
        assert answer["bias"]["egger_p"] == egger["p"]
        assert answer["bias"]["rule_outcome"] == reference_answer()["bias"]["rule_outcome"]
        assert score_answer(r.final_answer or "").correct == 13


def test_the_pdf_arm_sent_the_pdf_as_a_file_part_and_recorded_it(ran: Ran) -> None:
    for r in (r for r in ran.results if r.arm == "pdf"):
        lines = _transcript(ran.run_dir, r)
        kinds = [e["kind"] for e in lines]
        assert "tool_call" not in kinds and "mcp_connect" not in kinds
        (event,) = [e for e in lines if e["kind"] == "attachment"]
        assert event["name"] == "benchmark-baseline.pdf" and event["sha256"] == PDF_SHA256
        assert event["mode"] == "file" and event["requested"] == "auto"
        assert "fallback_reason" not in event
    pdf_requests = [e for e in ran.exchanges if not _offered(e.body)]
    assert len(pdf_requests) == 2 and all(e.status == 200 for e in pdf_requests)
    assert [(f["filename"], f["sha256"], f["accepted"]) for f in ran.files] == [
        ("benchmark-baseline.pdf", PDF_SHA256, True)
    ] * 2
    assert {f["n"] for f in ran.files} == {e.n for e in pdf_requests}


def test_auto_falls_back_to_text_when_the_endpoint_rejects_files(tmp_path: Path) -> None:
    ran = _run(tmp_path, trials=1, script={"reject_file_parts": True})
    assert ran.status == "complete"
    (pdf,) = [r for r in ran.results if r.arm == "pdf"]
    (web,) = [r for r in ran.results if r.arm == "webmcp"]
    assert web.outcome == "passed" and pdf.outcome == "failed", (pdf.reason, web.reason)
    lines = _transcript(ran.run_dir, pdf)
    (event,) = [e for e in lines if e["kind"] == "attachment"]
    assert event["mode"] == "text" and event["requested"] == "auto"
    assert event["sha256"] == PDF_SHA256 and "(400)" in event["fallback_reason"]
    requests = [e for e in ran.exchanges if not _offered(e.body)]
    assert [e.status for e in requests] == [400, 200]
    sent = requests[1].body["messages"][0]["content"]
    assert isinstance(sent, str) and sent.startswith(PROMPT.rstrip())
    assert f"benchmark-baseline.pdf (sha256 {PDF_SHA256})" in sent and "Pellegrini & Hicks" in sent
    assert [f["accepted"] for f in ran.files] == [False]


# -- the double's side, without a browser ------------------------------------------------------
_TOOLS = [
    {"type": "function", "function": {"name": f"site__{name}", "parameters": {}}}
    for name in ("get_dataset", "fit_random_effects", "egger_test")
]


def _request(*messages: dict[str, Any], tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": PROMPT}, *messages]}
    return {**body, "tools": _TOOLS} if tools else body


def _with_results(results: list[str]) -> dict[str, Any]:
    _, calls = decide(_request())
    assistant = {"role": "assistant", "content": None, "tool_calls": calls}
    tool = [
        {"role": "tool", "tool_call_id": c["id"], "content": text}
        for c, text in zip(calls, results, strict=True)
    ]
    return _request(assistant, *tool)


def test_the_double_calls_the_three_tools_then_fills_the_shape_from_their_results() -> None:
    content, calls = decide(_request())
    assert content is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        (f"site__{tool}", args) for tool, args in CALLS
    ]
    fit = {"k": 7, "estimate": 0.5, "ci_lower": 0.25, "ci_upper": 0.75, "p": 0.01}
    refit = {**fit, "k": 6, "estimate": 0.4}
    content, calls = decide(_with_results([json.dumps(d) for d in (fit, refit, {"p": 0.07})]))
    assert calls == []
    assert json.loads(content or "") == {
        "overall": fit,
        "exclude_s04": {**refit, "excluded": ["s04"]},
        "bias": {"egger_p": 0.07, "rule_outcome": "inconclusive"},
    }


def test_the_double_answers_in_prose_when_a_tool_failed() -> None:
    content, calls = decide(_with_results(['{"k": 19}', "Error: error: boom", '{"p": 0.2}']))
    assert calls == [] and content is not None
    assert content.startswith("The tool site__fit_random_effects did not return")
    assert score_answer(content).parse_failure


def test_without_tools_or_a_table_the_double_cannot_answer_right() -> None:
    content, calls = decide(_request(tools=False))
    assert calls == []
    answer = json.loads(content or "")
    assert answer["overall"]["k"] is None and answer["bias"]["rule_outcome"] is None
    assert score_answer(content or "").correct == 1  # only "excluded" comes from the prompt
