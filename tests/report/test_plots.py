"""The report's plots: drawn from summary.json's numbers, declared by the study, stable bytes."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from helpers.report_builders import RunScenario, make_planted, make_planted_run
from helpers.report_checks import figures_in
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.render._plots import _draw_all, build_figures, success_plot
from pairbench.report.summary._build import build_summary, summarize
from pairbench.report.view._doc import Figure, Omitted
from pairbench.store import TrialTable
from pairbench.store._records import Grade


def _summary(*, fields: bool = True, **model: Any) -> dict[str, Any]:
    results = make_planted()
    scored = [{"path": "overall.estimate", "correct": True}, {"path": "tau2", "correct": False}]
    grade = Grade(outcome="failed", reason="wrong: tau2", details={"fields": scored})
    if fields:
        update = {"grade": grade, "outcome": "failed", "reason": "wrong: tau2"}
        results[0] = results[0].model_copy(update=update)
    run = make_planted_run(experiment_model=model)
    return summarize(run, TrialTable.from_results(results, []))


def test_undeclared_plots_are_every_plot_with_data(scenario: RunScenario) -> None:
    figures = build_figures(build_summary(*scenario))
    drawn = [name for name, f in figures.items() if isinstance(f, Figure)]
    # The scenario measures wall time and tool calls; no tokens, and no grader scores fields.
    assert drawn == ["success", "task-heatmap", "latency", "transport"]
    assert not any(isinstance(f, Omitted) for f in figures.values())


def test_declared_plots_only_and_a_sentence_for_one_with_no_data() -> None:
    s = _summary(report={"plots": ["success", "fields"]})
    html, md = render_html(s), render_markdown(s)
    assert figures_in(html) == ["success", "fields"]
    s = _summary(fields=False, report={"plots": ["success", "fields"]})
    assert figures_in(render_html(s)) == ["success"]
    assert "Plot 'fields' not drawn: no grader scored fields." in render_markdown(s)
    assert "*Plot, Accuracy per field (in report.html):*" in md


def test_the_svg_is_byte_deterministic_and_names_no_url() -> None:
    s = _summary()
    first, second = _draw_all(s), _draw_all(copy.deepcopy(s))
    for name, fig in first.items():
        assert isinstance(fig, Figure)
        other = second[name]
        assert isinstance(other, Figure)
        assert fig.svg == other.svg, name
        assert fig.svg.startswith("<svg ") and "http" not in fig.svg
        assert not re.search(r"\d{4}-\d{2}-\d{2}T", fig.svg)  # no date
    ids = [re.findall(r'id="([^"]+)"', f.svg) for f in first.values() if isinstance(f, Figure)]
    flat = [i for group in ids for i in group]
    assert len(flat) == len(set(flat)), "two plots of one page share an element id"


def test_a_changed_number_changes_the_plot() -> None:
    s = _summary()
    before = success_plot(s)
    changed = copy.deepcopy(s)
    arm = changed["arms"][0]["success"]
    arm["k"], arm["estimate"], arm["low"], arm["high"] = 1, 1 / 30, 0.006, 0.167
    after = success_plot(changed)
    assert isinstance(before, Figure) and isinstance(after, Figure)
    assert before.svg != after.svg
    assert ["control", "1/30", "3.3%", "0.6% to 16.7%"] in after.numbers.rows
    assert render_html(s) != render_html(changed)


def test_field_accuracy_and_failure_reasons_are_counted() -> None:
    s = _summary()
    by_field = {f["field"]: f["arms"] for f in s["fields"]}
    assert by_field["tau2"]["control"] == {**by_field["tau2"]["control"], "k": 0, "n": 1}
    assert by_field["overall.estimate"]["control"]["k"] == 1
    failed = [g for g in s["failures"] if g["reason"] == "wrong: tau2"]
    assert failed and failed[0]["arms"] == {"control": 1}
    assert failed[0]["examples"] == [{"arm": "control", "task": "task-0", "trial": 0}]
    scored_not_passed = sum(
        a["outcomes"][o]
        for a in s["arms"]
        for o in ("failed", "parse_failure", "agent_error", "timeout")
    )
    assert sum(g["trials"] for g in s["failures"]) == scored_not_passed


def test_declared_sections_and_limits() -> None:
    s = _summary(
        limits=["One dataset cannot establish generality.", "<b>not markup</b>"],
        report={"sections": ["outcomes", "fields", "failures"]},
    )
    html, md = render_html(s), render_markdown(s)
    titles = re.findall(r"<h2>([^<]+)</h2>", html)
    # The plots whose own section is not shown (the task heatmap's, say) gather at the end.
    assert titles == [
        "Limits of this protocol", "Outcomes by arm", "Accuracy per field", "Why trials failed",
        "Plots",
    ]  # fmt: skip
    assert "- One dataset cannot establish generality." in md
    assert "&lt;b&gt;not markup&lt;/b&gt;" in html and "<b>not markup" not in html


def test_agent_text_in_a_field_name_is_escaped_in_the_svg() -> None:
    results = make_planted()
    hostile = "</text><script>alert(1)</script><text>"
    grade = Grade(outcome="failed", details={"fields": [{"path": hostile, "correct": False}]})
    results[0] = results[0].model_copy(update={"grade": grade})
    s = summarize(make_planted_run(), TrialTable.from_results(results, []))
    figures = build_figures(s)
    fig = figures["fields"]
    assert isinstance(fig, Figure)
    assert "<script" not in fig.svg and "&lt;script&gt;" in fig.svg
    assert "<script" not in render_html(s)


@pytest.mark.parametrize(
    "name", ["success", "task-heatmap", "latency", "transport", "tokens", "fields"]
)
def test_every_plot_has_words_and_numbers(scenario: RunScenario, name: str) -> None:
    # The planted run measures tokens and scores fields; the scenario times MCP calls.
    s = build_summary(*scenario) if name == "transport" else _summary()
    fig = build_figures(s)[name]
    assert isinstance(fig, Figure)
    assert fig.alt and fig.numbers.rows
    assert f'aria-label="{fig.alt[:20]}' in fig.svg


def _width_pt(svg: str) -> float:
    found = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    assert found is not None
    return float(found.group(1))


@pytest.mark.filterwarnings("error")  # constrained layout's "not applied" warning fails it
def test_names_too_long_for_the_figure_widen_it_instead_of_running_off_it() -> None:
    # An imported arm is named for its model and log; a pair label holds two such names.
    # At the default 8 inches they left the axes no room: matplotlib warned on the user's
    # terminal and drew the labels past the canvas.
    s = _summary()
    default = success_plot(s)
    long = copy.deepcopy(s)
    names = {a["arm"]: f"mockllm-model-inspect_{a['arm']}-645e5389" for a in s["arms"]}
    for arm in long["arms"]:
        arm["arm"] = names[arm["arm"]]
    for pair in long["pairs"]:
        pair["a"], pair["b"] = names[pair["a"]], names[pair["b"]]
    wide, again = success_plot(long), success_plot(copy.deepcopy(long))
    assert isinstance(default, Figure) and isinstance(wide, Figure) and isinstance(again, Figure)
    assert _width_pt(default.svg) == 576.0  # a figure that fits is saved as it always was
    assert _width_pt(wide.svg) > 576.0 and wide.svg == again.svg
    assert all(name in wide.svg for name in names.values())
