"""The "Hypotheses" section of the report: each declared hypothesis, its numbers and verdict.

The verdicts' words are careful on purpose: an interval that is not inside the margin is
"not shown equivalent", never "different"; an interval that includes 0 is "no difference
shown", never "the same"; and a non-significant McNemar test is never read as equivalence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

TITLE = "Hypotheses"
HEADERS = [
    "Hypothesis",
    "Analysis",
    "A − B",
    "Pairs used",
    "A − B (95% CI)",
    "Margin",
    "Verdict",
]
"""Short cells only (no cell wraps at 1,400 px); each hypothesis's sentences follow the
table: its text, the pairs left out, the means, the tests and the verdict in words."""
LEAD = (
    "Declared in the experiment before the run; each is judged on its own at 95% (no "
    "multiplicity adjustment). A pair is one task and trial that both arms scored, on the "
    "tasks the hypothesis counts. A metric counts only pairs whose two values were "
    "measured: estimated, missing and timed-out (censored) values are left out and counted. "
    "Equivalence: the mean of the paired differences A − B with its paired-t 95% CI must lie "
    "wholly inside ±margin (the TOST p value, the larger one-sided p, is shown beside it). "
    "Rate equivalence: Newcombe's 95% CI of the paired difference of rates must lie wholly "
    "inside ±margin; the exact McNemar test is shown, and a non-significant one is never "
    "read as equivalence. Difference: the paired-t 95% CI must exclude 0."
)


def _digits(unit: str) -> int:
    return 4 if unit == "USD" else 1


def _used(h: Mapping[str, Any]) -> str:
    d = h["dropped"]
    parts = [
        f"{d['censored']} with a timed-out member (its value only a bound)" * bool(d["censored"]),
        f"{d['estimated']} with a value only estimated" * bool(d["estimated"]),
        f"{d['missing']} with a value missing" * bool(d["missing"]),
        f"{d['not_tested']} with an arm not tested" * bool(d["not_tested"]),
    ]
    dropped = "; ".join(p for p in parts if p)
    what = "both tested" if h["rate"] is not None else "both measured"
    text = f"{h['n']} of {h['pairs']} pairs ({what})"
    return f"{text}; left out: {dropped}" if dropped else text


def _used_short(h: Mapping[str, Any]) -> str:
    return f"{h['n']} of {h['pairs']}"


def _ends(h: Mapping[str, Any]) -> str:
    """The 95% CI's ends, ``-1.2 to +3.4`` (a rate's in percentage points)."""
    if h["mean"] is not None:
        low, high = h["mean"]["ci95"]
        return f"{f.signed(low, _digits(h['unit']))} to {f.signed(high, _digits(h['unit']))}"
    low, high = h["rate"]["ci95"]
    return f"{f.pp(low)} to {f.pp(high)}"


def _interval(h: Mapping[str, Any], ci: str = "") -> str:
    """The estimate and its interval, nothing else (the means and counts follow the table);
    ``ci`` names the interval (``95% CI ``) in a sentence."""
    if (m := h["mean"]) is not None:
        return f"{f.signed(m['mean_difference'], _digits(h['unit']))} {h['unit']} ({ci}{_ends(h)})"
    if (r := h["rate"]) is not None and r["difference"] is not None:
        return f"{f.pp(r['difference'])} ({ci}{_ends(h)})"
    return f.NA


def _estimate(h: Mapping[str, Any]) -> str:
    """The estimate with its interval, then the means (a rate: the counts that complied)."""
    unit, digits, shown = h["unit"], _digits(h["unit"]), _interval(h, "95% CI ")
    if (m := h["mean"]) is not None:
        rel = m["relative_difference"]
        share = f", {f.signed(100.0 * rel)}% of B" if rel is not None else ""
        means = f"A {f.number(m['mean_a'], unit, digits)}, B {f.number(m['mean_b'], unit, digits)}"
        return f"{shown}; means {means}{share}"
    if (r := h["rate"]) is not None and r["difference"] is not None:
        n = r["n"]
        return (
            f"{shown}; complied: A {r['both'] + r['a_only']}/{n}, B {r['both'] + r['b_only']}/{n}"
        )
    return shown


def _margin(h: Mapping[str, Any]) -> str:
    m = h["margin"]
    if m is None:
        return "none (a difference)"
    if h["rate"] is not None:
        return f"±{100.0 * float(m['declared']):g} pp"
    unit = h["unit"]
    value = f.NA if m["value"] is None else f"±{f.number(m['value'], unit, _digits(unit))}"
    return f"{value} ({m['declared']} of B's mean)" if m["relative"] else value


def _tests(h: Mapping[str, Any]) -> str:
    if (m := h["mean"]) is not None:
        paired = f"paired t {f.p_value(m['p_value'])}"
        if m["tost_p"] is None:
            return paired
        return f"TOST {f.p_value(m['tost_p'])} (larger one-sided p); {paired}"
    if (r := h["rate"]) is not None:
        counts = f"{r['both']} both, {r['a_only']} A only, {r['b_only']} B only"
        return (
            f"exact McNemar {f.p_value(r['mcnemar_exact_p'])}; complied: {counts}, "
            f"{r['neither']} neither"
        )
    return f.NA


def _direction(low: float, high: float) -> str:
    return "A is higher than B" if low > 0 else "A is lower than B"


def verdict_text(h: Mapping[str, Any]) -> str:
    """The verdict as a sentence, in words that claim no more than the interval shows."""
    verdict = h["verdict"]
    if verdict == "not computed":
        return f"Not computed: {h['reason']}."
    low, high = (h["mean"] or h["rate"])["ci95"]
    shown = _ends(h)
    if verdict == "differs":
        return f"Differs: the 95% CI ({shown}) excludes 0; {_direction(low, high)}."
    if verdict == "no difference shown":
        return (
            f"No difference shown: the 95% CI ({shown}) includes 0. This is not evidence "
            "that the arms are the same (that needs an equivalence margin)."
        )
    margin = _margin(h)
    if verdict == "equivalent":
        return f"Equivalent within {margin}: the whole 95% CI ({shown}) lies inside the margin."
    text = f"Not shown equivalent: the 95% CI ({shown}) is not wholly inside {margin}"
    m = h["margin"]["value"]
    if m is not None and (low >= m or high <= -m):
        text += f"; it lies wholly outside it ({_direction(low, high)} by more than the margin)"
    elif low > 0 or high < 0:
        text += f"; it excludes 0 ({_direction(low, high)})"
    rate = h["rate"]
    if rate is not None and rate["mcnemar_exact_p"] >= 0.05:
        text += (
            f". McNemar {f.p_value(rate['mcnemar_exact_p'])} finds no difference, which is "
            "not evidence of equivalence"
        )
    return text + "."


_DIVERGED = {
    "violated": "every request and reply identical, yet the values differ",
    "body": "request {k}'s body differed (the inputs diverged, e.g. a tool result)",
    "reply": "request {k} had the same body and got a different reply",
    "count": "one arm made more requests (request {k} only in one)",
}
_SHOWN = 10
"""Divergent pairs named in the text; the rest are counted (summary.json lists them all)."""


def invariance_text(h: Mapping[str, Any]) -> str | None:
    """The exact per-pair check beside a token hypothesis, as sentences; ``None`` without one.

    With the same seed, byte-identical request bodies (so identical tool results) and
    identical replies, a pair's two token counts must be equal: this names every pair where
    they were not, and the first request at which a pair's two arms diverged.
    """
    inv = h.get("invariance")
    if inv is None:
        return None
    head = f"{h['id']}, exact per-pair check of {h['metric']}:"
    if not inv["checked"]:
        return (
            f"{head} not checked: no pair has both arms' request digests (the agent did not "
            f"record its requests); {inv['equal_values']} of {inv['pairs']} pairs have equal "
            "values."
        )
    tested = inv["identical"] + inv["violated"]
    text = (
        f"{head} {tested} of {inv['checked']} checked pairs sent identical request bodies and "
        f"got identical replies"
    )
    if inv["holds"] is True:
        text += f", and their values are equal in all {tested}: invariance holds"
    elif inv["holds"] is False:
        text += f"; in {inv['violated']} of them the values differ: invariance is violated"
    else:
        text += ", so none tests invariance"
    text += f". Equal values overall: {inv['equal_values']} of {inv['pairs']} pairs"
    if inv["not_recorded"]:
        text += f"; {inv['not_recorded']} not checked (no request digests)"
    named = []
    for d in inv["divergences"][:_SHOWN]:
        why = _DIVERGED[d["status"]].format(k=d["request"])
        values = f"A {f.number(d['value_a'], digits=0)}, B {f.number(d['value_b'], digits=0)}"
        named.append(f"{d['task']} trial {d['trial']}: {why} ({values})")
    if named:
        text += ". Diverged: " + "; ".join(named)
    more = len(inv["divergences"]) - _SHOWN
    if more > 0:
        text += f"; and {more} more (summary.json lists them)"
    return text + "."


def hypotheses(s: Mapping[str, Any]) -> list[Section]:
    """The section, or none when the experiment declares no hypothesis."""
    declared = s["hypotheses"]
    if not declared:
        return []
    rows = [
        [h["id"], f"{h['kind']} of {h['metric']}", f"{h['a']} − {h['b']}", _used_short(h),
         _interval(h), _margin(h), h["verdict"]]
        for h in declared
    ]  # fmt: skip
    blocks: list[Block] = [LEAD, Table(HEADERS, rows)]
    for h in declared:
        blocks.append(
            f"{h['id']}: {h['text']} Tasks: {h['where']}. Pairs: {_used(h)}. "
            f"Estimate: {_estimate(h)}. Tests: {_tests(h)}. {verdict_text(h)}"
        )
        exact = invariance_text(h)
        if exact is not None:
            blocks.append(exact)
        if h["reported_apart"]:
            blocks.append(
                f"{h['id']} counts {', '.join(h['tasks']) or 'no task'} ({h['where']}). Tasks "
                "with the same label and another value are reported apart (see Security), not "
                f"in this hypothesis: {', '.join(h['reported_apart'])}."
            )
    return [Section(TITLE, blocks)]
