"""Turn summary values into the short strings both reports show."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NA = "n/a"


def pct(x: float | None) -> str:
    return NA if x is None else f"{100.0 * x:.1f}%"


def prop(p: Mapping[str, Any], confidence: float = 0.95) -> str:
    """``k/n (estimate, CI)``; ``n/a`` when n is 0.

    >>> prop({"k": 7, "n": 10, "estimate": 0.7, "low": 0.397, "high": 0.892})
    '7/10 (70.0%, 95% CI 39.7%–89.2%)'
    >>> prop({"k": 0, "n": 0})
    'n/a'
    """
    if not p["n"]:
        return NA
    return (
        f"{p['k']}/{p['n']} ({pct(p['estimate'])}, {confidence:.0%} CI "
        f"{pct(p['low'])}–{pct(p['high'])})"
    )


def number(x: float | None, unit: str = "", digits: int = 1) -> str:
    """``x`` with thousands separators and ``digits`` decimals; ``n/a`` when missing.

    >>> number(1234.56, "ms"), number(0.01234, "ms"), number(3.0, digits=0), number(None)
    ('1,234.6 ms', '0.0123 ms', '3', 'n/a')
    """
    if x is None:
        return NA
    # Sub-unit values (a server-side tool call takes microseconds) keep 3 significant
    # digits, so they never print as a misleading 0.0.
    text = f"{x:.3g}" if 0 < abs(x) < 1 else f"{x:,.{digits}f}"
    return f"{text} {unit}" if unit else text


def signed(x: float, digits: int = 1) -> str:
    """``x`` with its sign always shown.

    >>> signed(12.345), signed(-0.0042), signed(0)
    ('+12.3', '-0.0042', '+0.0')
    """
    # As in `number`: a sub-unit value keeps 3 significant digits instead of "+0.0".
    return f"{x:+.3g}" if 0 < abs(x) < 1 else f"{x:+,.{digits}f}"


def p_value(p: float | None) -> str:
    """A p value to 4 decimals, floored at ``p < 0.0001``; ``n/a`` when there is no test.

    >>> p_value(0.04321), p_value(0.00001), p_value(None)
    ('p = 0.0432', 'p < 0.0001', 'n/a')
    """
    if p is None:
        return NA
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


def pp(x: float) -> str:
    """A difference of proportions in signed percentage points: ``pp(0.057)`` is ``+5.7 pp``."""
    return f"{signed(100.0 * x)} pp"


def difference_pp(d: Mapping[str, Any]) -> str:
    """A difference of proportions in percentage points, with its interval when there is one.

    >>> difference_pp({"estimate": 0.2, "ci95": [0.057, 0.34]})
    '+20.0 pp (95% CI +5.7 pp to +34.0 pp)'
    >>> difference_pp({"estimate": 0.2, "ci95": None}), difference_pp({"estimate": None})
    ('+20.0 pp', 'n/a')
    """
    if d["estimate"] is None:
        return NA
    if d["ci95"] is None:
        return pp(d["estimate"])
    low, high = d["ci95"]
    return f"{pp(d['estimate'])} (95% CI {pp(low)} to {pp(high)})"


def clustered_pp(c: Mapping[str, Any] | None) -> str:
    """The task-clustered interval, or why there is none."""
    if c is None:
        return "n/a: one trial per task"
    if c["ci95"] is None:
        return f"n/a: {c['method'].removeprefix('not computed: ')}"
    low, high = c["ci95"]
    return f"95% CI {pp(low)} to {pp(high)} ({c['tasks']} tasks, {c['reps']:,} reps)"


def counts(c: Mapping[str, Any]) -> str:
    """``12: 5 / 4 / 1 / 2`` (pairs: both / only A / only B / neither)."""
    return f"{c['pairs']}: {c['both']} / {c['a_only']} / {c['b_only']} / {c['neither']}"


def bound(x: float) -> str:
    """A censoring limit as written: ``60000``, not ``60,000.0``.

    >>> bound(60000.0), bound(2.5)
    ('60000', '2.5')
    """
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def censored_median(m: Mapping[str, Any], unit: str, digits: int = 1) -> str:
    """``1,234.5 ms``; ``> 60000 ms`` when censoring reaches the median; ``n/a`` with none."""
    if m["censored"]:
        sign = ">" if m["relation"] == ">" else "≥"
        return f"{sign} {bound(m['bound'])} {unit}"
    return number(m["estimate"], unit, digits)


def median_difference(d: Mapping[str, Any], unit: str, digits: int = 1) -> str:
    """``-264.5 ms (95% CI -421.4 to -222.6)``; an unbounded end reads "unbounded".

    >>> median_difference({"estimate": -264.5, "ci95": [-421.4, None], "censored": True}, "ms")
    '-264.5 ms (95% CI -421.4 to unbounded)'
    >>> median_difference({"estimate": 12.0, "ci95": None, "censored": False}, "ms")
    '+12.0 ms (no interval: too few pairs)'
    """
    if d["estimate"] is None:
        return NA
    head = f"{signed(d['estimate'], digits)} {unit}"
    low, high = d["ci95"] or (None, None)
    if low is None and high is None:
        # Order statistics give no 95% interval below 6 pairs; censoring can unbound both ends.
        return f"{head} ({'95% CI unbounded' if d['censored'] else 'no interval: too few pairs'})"
    lo = "unbounded" if low is None else signed(low, digits)
    hi = "unbounded" if high is None else signed(high, digits)
    return f"{head} (95% CI {lo} to {hi})"


def median_n(m: Mapping[str, Any]) -> str:
    """A median duration over trials or calls: ``123.4 ms (n=10 trials)``, or ``n/a``."""
    if m["median"] is None:
        return NA
    count = "trials" if "n_trials" in m else "calls"
    return f"{number(m['median'], 'ms')} (n={m.get(f'n_{count}', 0)} {count})"


def cost_metric(c: Mapping[str, Any], digits: int) -> str:
    """Measured and estimated shown apart, never summed; "not measured" with the reason."""
    miss = c["missing"]
    if not c["measured"]["n"] and not c["estimated"]["n"]:
        return f"not measured ({'; '.join(miss['reasons']) or 'no trials'})"
    parts = [
        f"{kind} total {number(c[kind]['total'], digits=digits)} (n={c[kind]['n']}) "
        f"({', '.join(c[kind][how])})"
        for kind, how in (("measured", "sources"), ("estimated", "estimators"))
        if c[kind]["n"]
    ]
    if miss["n"]:
        parts.append(f"missing in {miss['n']} ({'; '.join(miss['reasons'])})")
    return "; ".join(parts)


def median_by_provenance(c: Mapping[str, Any], digits: int) -> str:
    """A per-arm median, measured and estimated apart: ``1,234 (n=10)``,
    ``estimated 50 (n=2)``, ``not measured (reason)``; never a pooled median."""
    meas, est, miss = c["measured"], c["estimated"], c["missing"]
    if not meas["n"] and not est["n"]:
        return f"not measured ({'; '.join(miss['reasons']) or 'no trials'})"
    parts = []
    if meas["n"]:
        parts.append(f"{number(meas['median'], digits=digits)} (n={meas['n']})")
    if est["n"]:
        parts.append(f"estimated {number(est['median'], digits=digits)} (n={est['n']})")
    if miss["n"]:
        parts.append(f"missing in {miss['n']}")
    return "; ".join(parts)
