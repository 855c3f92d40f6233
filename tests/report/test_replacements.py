"""With and without replaced attempts, as defined: first attempts only, infra counted a miss."""

import pytest
from scipy.stats import binomtest

from helpers.report_builders import Render, make_planted, make_planted_run, make_result
from pairbench.report.render._html import render_html
from pairbench.report.render._markdown import render_markdown
from pairbench.report.summary._build import build_summary
from pairbench.store._records import TrialResult


def _replace(results: list[TrialResult], arm: str, task: str, trial: int) -> TrialResult:
    """Make (arm, task, trial) a retried trial: final result attempt 2, infra attempt 1 kept."""
    i = next(i for i, r in enumerate(results) if (r.arm, r.task, r.trial) == (arm, task, trial))
    results[i] = results[i].model_copy(update={"attempt": 2})
    return make_result(
        arm, task, trial, "infra", metrics=False, reason="fixture not ready", attempt=1
    )


Passed = dict[tuple[str, int], bool]
"""Whether each (task, trial) of one arm passed."""


def _counts(a: Passed, b: Passed) -> tuple[int, int, int, int]:
    keys = a.keys() & b.keys()
    both = sum(a[k] and b[k] for k in keys)
    a_only = sum(a[k] and not b[k] for k in keys)
    b_only = sum(b[k] and not a[k] for k in keys)
    return both, a_only, b_only, len(keys) - both - a_only - b_only


def test_replaced_attempt_changes_with_and_without() -> None:
    results = make_planted()
    passed = [
        r for r in results if r.arm == "treatment" and r.outcome == "passed" and r.task == "task-0"
    ]
    target = passed[0]
    kept = [_replace(results, "treatment", target.task, target.trial)]
    s = build_summary(make_planted_run(), results, kept)
    assert s["replaced_attempts"] == 1 and s["kept_attempts"] == 1

    final = {
        arm: {(r.task, r.trial): r.outcome == "passed" for r in results if r.arm == arm}
        for arm in ("control", "treatment")
    }
    first = {arm: dict(v) for arm, v in final.items()}
    first["treatment"][(target.task, target.trial)] = False  # infra first attempt: a miss

    arms = {a["arm"]: a for a in s["arms"]}
    k_with = sum(final["treatment"].values())
    assert (arms["treatment"]["success"]["k"], arms["treatment"]["success"]["n"]) == (k_with, 30)
    without = arms["treatment"]["success_without_replacements"]
    assert (without["k"], without["n"]) == (k_with - 1, 30)
    assert arms["control"]["success_without_replacements"] == arms["control"]["success"]

    p = next(x for x in s["pairs"] if (x["a"], x["b"]) == ("control", "treatment"))
    w = p["without_replacements"]
    for family, outcomes in ((p, final), (w, first)):
        both, a_only, b_only, neither = _counts(outcomes["control"], outcomes["treatment"])
        assert (family["both"], family["a_only"], family["b_only"], family["neither"]) == (
            both, a_only, b_only, neither
        )  # fmt: skip
        expected = binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
        assert family["mcnemar_exact_p"] == pytest.approx(expected, rel=1e-12)
        assert family["mcnemar_holm_p"] == family["mcnemar_exact_p"]
    assert (p["both"], p["b_only"]) != (w["both"], w["b_only"])

    md = render_markdown(s)
    assert "## With and without replaced attempts" in md
    assert "1 trial(s) had an infra-failed first attempt" in md
    assert f"{k_with - 1}/30" in md.split("## With and without replaced attempts")[1]
    assert "Without: Exact McNemar p" in md
    assert "No replaced attempts" not in md


@pytest.mark.parametrize("render", [render_markdown, render_html])
def test_no_replaced_attempts_said_once(render: Render) -> None:
    s = build_summary(make_planted_run(), make_planted(), [])
    assert s["replaced_attempts"] == 0
    text = render(s)
    assert text.count("No replaced attempts") == 1
    assert "Without:" not in text and "Success without replacements" not in text


def test_interrupted_attempt_is_not_a_replacement() -> None:
    results = make_planted()
    r = results[0]
    results[0] = r.model_copy(update={"attempt": 2})
    kept = [make_result(r.arm, r.task, r.trial, "interrupted", metrics=False, attempt=1)]
    s = build_summary(make_planted_run(), results, kept)
    assert s["replaced_attempts"] == 0
    assert all(a["success"] == a["success_without_replacements"] for a in s["arms"])


def test_infra_with_no_retry_left_is_a_miss_without_replacements() -> None:
    results = make_planted()
    i = next(i for i, r in enumerate(results) if r.arm == "other" and r.outcome == "passed")
    r = results[i]
    results[i] = make_result(r.arm, r.task, r.trial, "not_run", metrics=False, attempt=0)
    kept = [make_result(r.arm, r.task, r.trial, "infra", metrics=False, attempt=1)]
    s = build_summary(make_planted_run(), results, kept)
    other = next(a for a in s["arms"] if a["arm"] == "other")
    assert other["success"]["n"] == 29  # not run: not scored
    assert other["success_without_replacements"]["n"] == 30  # the infra attempt: a miss
    assert other["success_without_replacements"]["k"] == other["success"]["k"]
    assert s["replaced_attempts"] == 1
