"""Is the model server fit for a paired campaign? Healthy, one slot, and that slot idle.

It only reports: refusing to run (and saying so) is the caller's decision.
"""

from __future__ import annotations

from pydantic import Field

from pairbench._clock import now_iso
from pairbench._model import Frozen
from pairbench.proxy._upstream import fetch


class PreflightCheck(Frozen):
    """One condition and what was found."""

    name: str
    ok: bool
    detail: str


class Preflight(Frozen):
    """``preflight``'s result: ``ok`` only when every check passed."""

    base_url: str
    taken_at: str
    ok: bool
    checks: list[PreflightCheck]
    reasons: list[str] = Field(default_factory=list)
    """The failed checks' details, for a refusal message."""


def preflight(base_url: str) -> Preflight:
    """Check ``/health`` is ok, ``/props`` ``total_slots == 1`` and every ``/slots`` entry idle.

    **Usage**::

        found = preflight("http://127.0.0.1:8080")
        if not found.ok:
            raise RunRefused("; ".join(found.reasons))
    """
    checks: list[PreflightCheck] = []
    health = fetch(base_url, "/health")
    status = health.data.get("status") if isinstance(health.data, dict) else None
    checks.append(PreflightCheck(
        name="health", ok=status == "ok",
        detail=f"/health status {status!r}" if health.missing is None else health.missing,
    ))  # fmt: skip
    props = fetch(base_url, "/props")
    slots_total = props.data.get("total_slots") if isinstance(props.data, dict) else None
    if props.missing is not None:
        detail = props.missing
    elif slots_total == 1:
        detail = "total_slots is 1"
    else:
        detail = f"total_slots is {slots_total!r}; a paired campaign needs exactly 1 (-np 1)"
    checks.append(PreflightCheck(name="total_slots", ok=slots_total == 1, detail=detail))
    slots = fetch(base_url, "/slots")
    if not isinstance(slots.data, list):
        idle_ok, detail = False, slots.missing or "/slots answered with something not a list"
    else:
        busy = [
            s.get("id") for s in slots.data if not isinstance(s, dict) or s.get("is_processing")
        ]
        idle_ok = not busy and bool(slots.data)
        detail = (
            f"slot(s) {busy} are processing a request already" if busy
            else f"all {len(slots.data)} slot(s) idle" if slots.data else "/slots lists no slot"
        )  # fmt: skip
    checks.append(PreflightCheck(name="slots_idle", ok=idle_ok, detail=detail))
    reasons = [f"{c.name}: {c.detail}" for c in checks if not c.ok]
    return Preflight(base_url=base_url, taken_at=now_iso(), ok=not reasons, checks=checks,
                     reasons=reasons)  # fmt: skip
