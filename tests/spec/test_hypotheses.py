"""Declared hypotheses in the experiment file: the syntax, and every problem with its fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench.report.summary._metric_values import METRICS
from pairbench.spec import Hypothesis, canonical_hash, check_experiment, load_experiment
from pairbench.spec._hypotheses import PAIRED_METRICS, Margin, parse_margin
from pairbench.studies.mcp_transports import STUDY

Write = Callable[..., Path]
Registry = dict[str, set[str]]

HYPOTHESES = """\
hypotheses:
  - id: h1-tokens
    text: Token cost is transport-invariant.
    kind: equivalence
    metric: total_tokens
    arms: [local, baseline]
    margin: 2%
  - id: h1-tokens-abs
    text: Within 150 tokens.
    kind: equivalence
    metric: total_tokens
    arms: [local, baseline]
    margin: 150
  - id: h1b-wall
    text: Wall time differs.
    kind: difference
    metric: wall_ms
    arms: [local, baseline]
  - id: h2-injection
    text: Injections succeed at the same rate.
    kind: rate-equivalence
    metric: injection
    arms: [local, baseline]
    margin: 0.10
    where: {tier: [1, 3]}
"""


def _one(experiment: str, **fields: object) -> str:
    """``experiment`` (the valid one) with one hypothesis of ``fields`` appended."""
    base: dict[str, object] = {"id": "h", "text": "t", "kind": "equivalence"}
    base |= {"metric": "total_tokens"}
    base |= {"arms": "[local, baseline]", "margin": "2%"}
    base |= fields
    lines = [f"    {k}: {v}" for k, v in base.items() if v is not None]
    return experiment + "hypotheses:\n  - " + "\n".join(lines).lstrip() + "\n"


def _problems(write: Write, text: str, registry: Registry) -> list[tuple[int | None, str, str]]:
    return [(p.line, p.yaml_path, str(p)) for p in check_experiment(write(text), registry)]


def test_declared_hypotheses_load(write: Write, valid: str, registry: Registry) -> None:
    exp = load_experiment(write(valid + HYPOTHESES), registry).experiment
    h1, h1_abs, h1b, h2 = exp.hypotheses
    assert (h1.id, h1.kind, h1.metric, h1.arms) == (
        "h1-tokens",
        "equivalence",
        "total_tokens",
        ("local", "baseline"),
    )
    assert h1.margin_spec() == Margin(0.02, relative=True)
    assert h1_abs.margin_spec() == Margin(150.0, relative=False)
    assert h1b.margin is None and h1b.margin_spec() is None
    assert h2.margin_spec() == Margin(0.10, relative=False)
    assert h2.matches({"tier": 3}) and h2.matches({"tier": "1"}) and not h2.matches({"tier": 2})
    assert not h2.matches({})
    assert h2.describe_where() == "tier in {1, 3}" and h1.describe_where() == "every task"


def test_no_hypotheses_keep_the_hash(write: Write, valid: str, registry: Registry) -> None:
    plain = load_experiment(write(valid), registry)
    empty = load_experiment(write(valid + "hypotheses: []\n", "empty.yaml"), registry)
    assert "hypotheses" not in plain.experiment.model_dump(mode="json")
    assert empty.canonical_hash == plain.canonical_hash
    declared = load_experiment(write(valid + HYPOTHESES, "declared.yaml"), registry)
    assert declared.canonical_hash != plain.canonical_hash
    assert canonical_hash(declared.experiment) == declared.canonical_hash


def test_unknown_and_repeated_arms_name_the_field(
    write: Write, valid: str, registry: Registry
) -> None:
    problems = _problems(write, _one(valid, arms="[local, remote]"), registry)
    assert [(p[1], p[2].split(": ", 1)[1]) for p in problems] == [
        (
            "hypotheses[0].arms[1]",
            "hypotheses[0].arms[1]: unknown arm 'remote'. Fix: use one of the arms: "
            "baseline, local.",
        )
    ]
    assert problems[0][0] == 26  # the line of the hypothesis's `arms`
    (same,) = _problems(write, _one(valid, arms="[local, local]"), registry)
    assert same[1] == "hypotheses[0].arms" and "with itself" in same[2]


@pytest.mark.parametrize(
    ("fields", "path", "words"),
    [
        ({"metric": "total_token"}, "hypotheses[0].metric", "did you mean 'total_tokens'?"),
        (
            {"kind": "rate-equivalence", "metric": "total_tokens", "margin": "0.1"},
            "hypotheses[0].metric",
            "use injection",
        ),
        ({"margin": None}, "hypotheses[0].margin", "needs a margin. Fix: use margin: '2%'"),
        ({"kind": "difference"}, "hypotheses[0].margin", "a difference hypothesis has no margin"),
        ({"margin": "'150'"}, "hypotheses[0].margin", "not a percentage"),
        ({"margin": "-3"}, "hypotheses[0].margin", "not a positive number"),
        ({"margin": "150%"}, "hypotheses[0].margin", "between 0% and 100%"),
        (
            {"kind": "rate-equivalence", "metric": "injection", "margin": "10%"},
            "hypotheses[0].margin",
            "use margin: 0.10 for ±10 percentage points",
        ),
        ({"kind": "same"}, "hypotheses[0].kind", "'equivalence', 'difference' or"),
        ({"id": "H1"}, "hypotheses[0].id", "not a safe id"),
        ({"where": "{tier: []}"}, "hypotheses[0].where", "a non-empty list of values"),
        ({"where": "{tier: {x: 1}}"}, "hypotheses[0].where", "use tier: x, or tier: [x, y]"),
        ({"arms": "[local]"}, "hypotheses[0].arms", "exactly 2 arms (got 1)"),
        ({"text": "''"}, "hypotheses[0].text", "has no statement"),
    ],
)
def test_malformed_declarations_say_the_fix(
    write: Write, valid: str, registry: Registry, fields: dict[str, object], path: str, words: str
) -> None:
    problems = _problems(write, _one(valid, **fields), registry)
    assert [p[1] for p in problems] == [path], problems
    assert words in problems[0][2] and "Fix: " in problems[0][2]


def test_a_token_margin_below_one_token_suggests_a_percentage(
    write: Write, valid: str, registry: Registry
) -> None:
    (problem,) = _problems(write, _one(valid, margin="0.02"), registry)
    assert problem[1] == "hypotheses[0].margin"
    assert "an absolute margin of 0.02 tokens is less than one unit of total_tokens" in problem[2]
    assert "Fix: write '2%' for ±2% of the reference arm's mean" in problem[2]
    # Cost is in USD: 0.02 USD is a margin, not a slip.
    assert _problems(write, _one(valid, metric="cost_usd", margin="0.02"), registry) == []


def test_a_filter_no_task_matches_is_a_problem(
    write: Write, valid: str, registry: Registry
) -> None:
    (problem,) = _problems(write, _one(valid, where="{probe: injection}"), registry)
    assert problem[1] == "hypotheses[0].where"
    assert "no task has the labels probe = injection" in problem[2]
    assert "Fix: use labels some task has (tier: 1)" in problem[2]


def test_repeated_ids_are_a_problem(write: Write, valid: str, registry: Registry) -> None:
    one = "  - {id: h, text: t, kind: difference, metric: wall_ms, arms: [local, baseline]}\n"
    (problem,) = _problems(write, valid + "hypotheses:\n" + one * 2, registry)
    assert problem[1] == "hypotheses[1].id" and "already used by hypotheses[0]" in problem[2]


def test_metric_names_are_the_reports() -> None:
    # The spec cannot import the report (the report imports the store, which imports the
    # spec), so the two lists are kept equal here.
    assert {name: m.unit for name, m in METRICS.items()} == PAIRED_METRICS


def test_margins_parse() -> None:
    assert parse_margin("2%") == Margin(0.02, True)
    assert parse_margin(" 2.5 % ") == Margin(0.025, True)
    assert parse_margin(150) == Margin(150.0, False)
    with pytest.raises(ValueError, match="neither"):
        parse_margin("2 percent")


def test_the_study_declares_h1_h1b_and_h2() -> None:
    exp = load_experiment(STUDY.experiment_path).experiment
    by_id = {h.id: h for h in exp.hypotheses}
    assert list(by_id) == ["h1-tokens", "h1b-wall-time", "h2-injection"]
    h1, h1b, h2 = by_id.values()
    assert (h1.kind, h1.metric, h1.arms, h1.margin) == (
        "equivalence",
        "total_tokens",
        ("remote-http", "local-stdio"),
        "2%",
    )
    assert (h1b.kind, h1b.metric, h1b.arms) == ("difference", "wall_ms", h1.arms)
    assert (h2.kind, h2.metric, h2.arms, h2.margin) == (
        "rate-equivalence",
        "injection",
        h1.arms,
        0.1,
    )
    # H2 counts the protocol-level probes only; the transport-specific one is apart.
    counted = {t.id for t in exp.tasks if h2.matches(t.labels)}
    assert counted == {"injection-summary", "lure-comment-author"}
    assert isinstance(h2, Hypothesis)
