"""View sections of arm pairs: success on the same trials, and with and without replacements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.summary._common import NOT_DECLARED, SCREENING
from pairbench.report.view import _format as f
from pairbench.report.view import _study as vs
from pairbench.report.view._doc import Section, Table

NO_REPLACED = "No replaced attempts: every trial's first attempt is its result."


def _holm_shown(s: Mapping[str, Any]) -> bool:
    # Holm changes nothing with one declared comparison, so its column only appears
    # when several comparisons share the family-wise error rate.
    return sum(bool(p["declared"]) for p in s["pairs"]) > 1


def _screening(s: Mapping[str, Any]) -> bool:
    return bool(s["run"].get("stage") == "screening")


def _test_cells(
    c: Mapping[str, Any], declared: bool, holm: bool, screening: bool = False
) -> list[str]:
    if not declared or screening:
        return [SCREENING if declared else NOT_DECLARED] * (3 if holm else 2)
    cells = [f.p_value(c["mcnemar_exact_p"]), f.p_value(c.get("mcnemar_midp_p"))]
    if holm:
        cells.append(f.p_value(c["mcnemar_holm_p"]))
    return cells


def _test_headers(holm: bool) -> list[str]:
    # The mid-p sits beside the exact p (the exact test is conservative); the exact p is
    # the one Holm adjusts, so the decision rule a reader learned stays the same.
    shown = ["Exact McNemar p", "Mid-p McNemar"]
    return [*shown, "Holm-adjusted p (exact)"] if holm else shown


def success(s: Mapping[str, Any]) -> Section:
    conf, holm, screening = s["confidence"], _holm_shown(s), _screening(s)
    rows, notes = [], []
    for p in s["pairs"]:
        name = f"{p['a']} vs {p['b']}"
        d = p["difference"]
        rows.append(
            [
                name,
                str(p["pairs"]),
                *(str(p[k]) for k in ("both", "a_only", "b_only", "neither")),
                f.prop(p["success_a"], conf),
                f.prop(p["success_b"], conf),
                f.difference_pp(d),
                f.clustered_pp(d["task_clustered"]),
                f.number(p["correlation"], digits=3),
                *_test_cells(p, p["declared"], holm, screening),
            ]
        )
        if p["unmatched_a"] or p["unmatched_b"]:
            notes.append(
                f"{name}: {p['unmatched_a']} scored trials of {p['a']} and "
                f"{p['unmatched_b']} of {p['b']} have no scored partner and are left out."
            )
    if not rows:
        return Section("Arm pairs: success", ["Fewer than two arms: no pairs."])
    headers = [
        "Pair (A vs B)",
        "Pairs",
        "Both passed",
        "Only A",
        "Only B",
        "Neither",
        "Success A",
        "Success B",
        "Difference A − B (Newcombe method 10)",
        "Difference A − B, task-clustered bootstrap",
        "Correlation (phi)",
        *_test_headers(holm),
    ]
    text = [
        "A pair is one (task, trial) where both arms have a scored outcome. The difference's "
        "interval is Newcombe's score interval for paired proportions (method 10); the "
        "correlation is phi between the arms' outcomes on the same trial (0 when an arm "
        "passes or fails every trial).",
        "When tasks have several trials, those trials are not independent: the task-clustered "
        "interval resamples whole tasks (percentile bootstrap, seeded from the run seed; the "
        "seed and repetitions are in summary.json).",
        "A p value is shown only for comparisons declared before the run (exact McNemar, "
        "two-sided, with its mid-p beside it"
        + ("; Holm-adjusted over the declared comparisons" if holm else "")
        + "). Undeclared pairs get counts and intervals, never a p value.",
    ]
    if s["run"].get("stage") is not None:
        # A campaign study's unit is the pair of campaigns: these per-execution intervals
        # and tests would count one campaign's correlated scenarios as independent evidence.
        text.append(
            "Campaign study: the intervals and McNemar p values in this table treat every "
            "(scenario, pair) execution as independent. The unit here is the pair of "
            "campaigns, so they are descriptive; the campaign-level test (and the primary "
            "analysis, where declared) decides."
        )
    elif s["pairs"] and any(p["declared"] for p in s["pairs"]) and not s.get("primary"):
        text.append(
            "No primary analysis is declared (`primary:` in the experiment), so no single "
            "test here was named in advance as the one that decides."
        )
    if screening:
        # The protocol reports screening as one stochastic pair, with no superiority claim.
        text[-1] = (
            "This is a screening run: one campaign pair, a single stochastic replicate, so "
            "no comparison is tested and no p value is shown, declared or not. Counts and "
            "intervals describe the pair; a confirmation run from an approved plan tests."
        )
    # Twelve columns do not fit a page: counts first, then the successes and their
    # difference, then the clustered interval and the tests.
    tables = vs.split_wide(Table(headers, rows), keep=1, at=(6, 9))
    return Section("Arm pairs: success", [*tables, *text, *notes])


def replacements(s: Mapping[str, Any]) -> Section:
    title = "With and without replaced attempts"
    if not s["replaced_attempts"]:
        return Section(title, [NO_REPLACED])
    conf, holm, screening = s["confidence"], _holm_shown(s), _screening(s)
    arms = Table(
        ["Arm", "Success with replacements", "Success without replacements"],
        [
            [a["arm"], f.prop(a["success"], conf), f.prop(a["success_without_replacements"], conf)]
            for a in s["arms"]
        ],
    )
    rows = []
    for p in s["pairs"]:
        w = p["without_replacements"]
        rows.append(
            [
                f"{p['a']} vs {p['b']}",
                f.counts(p),
                *_test_cells(p, p["declared"], holm, screening),
                f.counts(w),
                *_test_cells(w, p["declared"], holm, screening),
            ]
        )
    headers = ["Pair (A vs B)", "With: pairs, both / only A / only B / neither"]
    headers += [f"With: {h}" for h in _test_headers(holm)]
    headers += ["Without: pairs, both / only A / only B / neither"]
    headers += [f"Without: {h}" for h in _test_headers(holm)]
    return Section(
        title,
        [
            f"{s['replaced_attempts']} trial(s) had an infra-failed first attempt that was "
            "replaced by a retry. With replacements: each trial's final result. Without "
            "replacements: each trial's first attempt only, an infra-failed first attempt "
            "counted as a miss.",
            arms,
            Table(headers, rows),
        ],
    )
