import re
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from helpers.report_builders import XSS, MakeResult, Render, RunScenario, make_run
from pairbench.report.render._html import ENV, render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import SCORED_OUTCOMES, Metric

TEMPLATES = Path(__file__).parents[2] / "src" / "pairbench" / "report" / "render" / "templates"


def wilson_text(k: int, n: int) -> str:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return f"{k}/{n} ({100 * k / n:.1f}%, 95% CI {100 * low:.1f}%–{100 * high:.1f}%)"


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_empty_run_says_no_runs_recorded(render: Render) -> None:
    text = render(build_summary(make_run(), [], []))
    assert "No runs recorded." in text
    assert "Outcomes by arm" not in text
    assert "mcp-transports" in text and "run-1" in text


def test_infra_only_run_is_not_empty(make: MakeResult) -> None:
    infra = [make("baseline", "read-title", 0, "infra", metrics=False, reason="port in use")]
    md = render_markdown(build_summary(make_run(), [], infra))
    assert "No runs recorded." not in md
    assert "port in use" in md


def test_agent_text_is_escaped_in_html(scenario: RunScenario) -> None:
    run, results, infra = scenario
    run["experiment"]["description"] = "<b>bold</b> claims"
    html = render_html(build_summary(run, results, infra))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "model API 500 &lt;script&gt;" in html  # the reason
    assert "partial &lt;script&gt;" in html  # the final answer excerpt
    assert "&lt;b&gt;bold&lt;/b&gt;" in html


def test_agent_text_is_escaped_in_markdown(scenario: RunScenario) -> None:
    run, results, infra = scenario
    md = render_markdown(build_summary(run, results, infra))
    assert XSS not in md and "<script" not in md
    # "<" and "&" are escaped: no tag or entity can open; ">" alone is harmless text.
    assert "&lt;script>alert(1)&lt;/script>" in md


def test_pipe_in_agent_text_does_not_break_markdown_table(make: MakeResult) -> None:
    r = make("baseline", "read-title", 0, "agent_error", reason="a | b\nc")
    md = render_markdown(build_summary(make_run(), [r], []))
    row = next(line for line in md.splitlines() if "agent_error | baseline" in line)
    assert "a \\| b c" in row


def test_autoescape_on_and_no_safe_filter() -> None:
    autoescape = ENV.autoescape  # select_autoescape(...): a function of the template name
    assert callable(autoescape) and autoescape("report.html") is True
    for template in TEMPLATES.iterdir():
        assert "|safe" not in template.read_text().replace(" ", "")


def test_html_is_self_contained(scenario: RunScenario) -> None:
    run, results, infra = scenario
    html = render_html(build_summary(run, results, infra))
    assert "<style>" in html
    assert not re.search(r"<(link|script|img|iframe)\b", html)
    assert "http://" not in html and "https://" not in html


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_p_value_only_for_declared_comparison(scenario: RunScenario, render: Render) -> None:
    run, results, infra = scenario
    text = render(build_summary(run, results, infra))
    # One declared comparison, shown in the success table and, since an attempt was
    # replaced, with and without replacements: three exact p values, all the same, each
    # with its mid-p beside it (0/7 discordant: exact 2 * 0.5**7, mid-p half of it).
    assert re.findall(r"p (?:=|&lt;|<) 0\.\d+", text) == ["p = 0.0156", "p = 0.0078"] * 3
    for line in text.splitlines():
        if "baseline vs" in line:  # the undeclared pairs' rows and notes
            assert not re.search(r"p (=|&lt;|<) ?0\.\d", line)
    # Two undeclared pairs: once each in the success table, twice (with, without) in the
    # replacements table; each time for the exact and the mid-p column.
    assert text.count("not declared: no test") == 12


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_success_k_n_and_wilson_numbers(scenario: RunScenario, render: Render) -> None:
    run, results, infra = scenario
    text = render(build_summary(run, results, infra))
    for arm in run["arms"]:
        scored = [r for r in results if r.arm == arm and r.outcome in SCORED_OUTCOMES]
        k = sum(r.outcome == "passed" for r in scored)
        assert wilson_text(k, len(scored)) in text


def test_sections_and_denominators(scenario: RunScenario) -> None:
    run, results, infra = scenario
    md = render_markdown(build_summary(run, results, infra))
    for title in ("Outcomes by arm", "Arm pairs: success", "Success by task", "Success by tier",
                  "Crossover and order", "Transport", "Security", "Cost",
                  "With and without replaced attempts",
                  "Arm pairs: latency, tokens, cost (all assigned trials)",
                  "Arm pairs: latency, tokens, cost (conditional: pairs both arms passed)",
                  ):  # fmt: skip
        assert f"## {title}" in md
    assert "1 of 36 planned trials not run." in md
    assert "1 of 35 scored trials ended in agent_error." in md
    assert "1 infra attempt(s) kept" in md
    assert "35 ran of 36 planned; 1 not run" in md
    assert "N/A (no trial applies)" in md
    # The reason repeats in every cost cell: stated once, below the table, as note [1].
    assert "not measured [1]" in md
    assert "[1] not measured: scripted agent reports no usage." in md
    assert "not measured (scripted agent reports no usage)" not in md
    assert "n/a" in md  # a start position an arm never held
    assert "SIMULATED" not in md


def test_simulated_label(scenario: RunScenario) -> None:
    _, results, infra = scenario
    s = build_summary(make_run(agent_simulated=True), results, infra)
    assert "SIMULATED run" in render_markdown(s)
    assert "SIMULATED run" in render_html(s)


def test_cost_shows_measured_and_estimated_separately(make: MakeResult) -> None:
    est = Metric(value=50.0, provenance="estimated", estimator="chars/4 v1")
    results = [
        make("baseline", "read-title", 0, tokens=Metric.measured(100.0, "provider usage")),
        make("baseline", "read-title", 1, tokens=est),
    ]
    md = render_markdown(build_summary(make_run(), results, []))
    assert "measured total 100 (n=1) (provider usage)" in md
    assert "estimated total 50 (n=1) (chars/4 v1)" in md
    assert "150" not in md  # never added together


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_transport_per_tool_and_token_shapes_are_shown(
    scenario: RunScenario, render: Render
) -> None:
    run, results, infra = scenario
    s = build_summary(run, results, infra)
    text = render(s)
    assert "Cold start, median" in text and "pooled over tools (per tool below)" in text
    assert "A negative cold start" in text
    for t in s["transport"][1:]:  # the arms that called tools
        (tool,) = t["by_tool"]
        cold, client = tool["cold_start_ms"], tool["client_call_ms"]
        cells = [
            t["arm"],
            "tracker.get",
            str(tool["calls"]),
            f"{client['median']:,.1f} ms (n={client['n_calls']} calls)",
            f"{cold['median']:,.1f} ms (n={cold['n_trials']} trials)",
        ]
        if render is render_markdown:
            assert "| " + " | ".join(cells) + " |" in text
        else:
            assert "</td><td>".join(cells) in re.sub(r">\s+<", "><", text)
    token = s["security"][2]["token_shaped_in_output"]
    assert "Token-shaped in output" in text
    assert wilson_text(token["k"], token["n"]) in text


def test_no_per_tool_table_without_per_tool_records(make: MakeResult) -> None:
    r = make("local-stdio", "read-title", 0)
    assert r.metrics is not None
    older = r.model_copy(
        update={"metrics": r.metrics.model_copy(update={"cold_start_ms_by_tool": {}})}
    )
    md = render_markdown(build_summary(make_run(), [older], []))
    assert "## Transport" in md and "A negative cold start" not in md
    assert "| local-stdio | tracker.get |" not in md


def test_transport_shows_when_only_infra_attempts_failed_to_connect(make: MakeResult) -> None:
    # A server never connected: no scored trial timed anything, but the kept infra
    # attempts' connect failures are the one thing the Transport section has to say.
    scored = make("local-stdio", "read-title", 0, "failed", calls=(), connect=None)
    infra = make("local-stdio", "read-title", 0, "infra", calls=(), connect=None)
    assert infra.metrics is not None
    failed = infra.model_copy(
        update={
            "metrics": infra.metrics.model_copy(
                update={"transport_failures": 1, "transport_failure_kinds": ["connect"]}
            )
        }
    )
    assert "## Transport" not in render_markdown(build_summary(make_run(), [scored], [infra]))
    md = render_markdown(build_summary(make_run(), [scored], [failed]))
    assert "## Transport" in md and "In infra attempts" in md
    assert "| local-stdio |" in md and "1 (in 1 attempts)" in md
