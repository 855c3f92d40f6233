"""Turn summary values into the short strings both reports show."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NA = "n/a"


def pct(x: float) -> str:
    return f"{100.0 * x:.1f}%"


def prop(p: Mapping[str, Any], confidence: float = 0.95) -> str:
    """``7/10 (70.0%, 95% CI 39.7–89.2%)``; ``n/a`` when n is 0."""
    if not p["n"]:
        return NA
    return (
        f"{p['k']}/{p['n']} ({pct(p['estimate'])}, {confidence:.0%} CI "
        f"{pct(p['low'])}–{pct(p['high'])})"
    )


def number(x: float | None, unit: str = "", digits: int = 1) -> str:
    if x is None:
        return NA
    # Sub-unit values (a server-side tool call takes microseconds) keep 3 significant
    # digits, so they never print as a misleading 0.0.
    text = f"{x:.3g}" if 0 < abs(x) < 1 else f"{x:,.{digits}f}"
    return f"{text} {unit}" if unit else text


def signed(x: float, digits: int = 1) -> str:
    return f"{x:+,.{digits}f}"


def p_value(p: float | None) -> str:
    if p is None:
        return NA
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


def median_diff(d: Mapping[str, Any], unit: str = "ms") -> str:
    """``+12.0 ms (95% CI -3.0 to +20.0; 15 pairs)`` with censoring and missing counts."""
    extras = []
    if d["n_censored"]:
        extras.append(f"{d['n_censored']} censored excluded")
    if d["n_missing"]:
        extras.append(f"{d['n_missing']} missing")
    tail = "".join(f"; {e}" for e in extras)
    if d["estimate"] is None:
        return f"{NA} (0 usable pairs{tail})"
    head = f"{signed(d['estimate'])} {unit}"
    if d["low"] is None:
        return f"{head} (no interval: too few pairs; {d['n_used']} pairs{tail})"
    return (
        f"{head} ({d['confidence']:.0%} CI {signed(d['low'])} to {signed(d['high'])}; "
        f"{d['n_used']} pairs{tail})"
    )


def median_n(m: Mapping[str, Any], unit: str, count: str) -> str:
    """``123.4 ms (n=10 trials)`` or ``n/a``."""
    n = m.get("n_trials", m.get("n_calls", 0))
    if m["median"] is None:
        return NA
    return f"{number(m['median'], unit)} (n={n} {count})"


def cost_metric(c: Mapping[str, Any], digits: int) -> str:
    """Measured and estimated shown apart, never summed; "not measured" with the reason."""
    meas, est, miss = c["measured"], c["estimated"], c["missing"]
    if not meas["n"] and not est["n"]:
        reasons = "; ".join(miss["reasons"]) or "no trials"
        return f"not measured ({reasons})"
    parts = []
    if meas["n"]:
        parts.append(
            f"measured: total {number(meas['total'], digits=digits)} over {meas['n']} trials "
            f"({', '.join(meas['sources'])})"
        )
    if est["n"]:
        parts.append(
            f"estimated: total {number(est['total'], digits=digits)} over {est['n']} trials "
            f"({', '.join(est['estimators'])})"
        )
    if miss["n"]:
        parts.append(f"missing in {miss['n']} trials ({'; '.join(miss['reasons'])})")
    return "; ".join(parts)
