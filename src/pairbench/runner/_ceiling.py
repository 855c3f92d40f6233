"""The cost ceiling: measured spend plus a worst-case reservation per attempt in flight.

An attempt's cost is known only when it ends, so checking the spend as an attempt starts
lets every attempt already in flight carry the run past the ceiling. Instead each attempt
reserves its worst-case cost before it starts, and starts only when the measured spend plus
every reservation in flight plus its own stays within the ceiling; when it ends, its
reservation becomes its measured cost. The worst case is the declared per-attempt estimate
(``budget.cost_per_trial_usd``), else the largest cost an attempt of the run has reported;
with neither, attempts run one at a time until one reports a cost. A declared worst case is
a promise the agent may break: once an attempt costs more than it reserved (an overshoot),
every later attempt reserves at least that cost, so one broken promise cannot repeat until
the spend passes the ceiling. An attempt that ran but recorded no cost is charged what it
reserved.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from pairbench.store._records import SCORED_OUTCOMES, TrialResult


@dataclass
class Spend:
    """What a run's attempts have cost: the costs their records hold, exactly summed.

    **Usage**::

        spend = Spend()
        spend.add(result)          # any attempt's record: final, infra or interrupted
        spend.usd(estimate=0.05)   # recorded costs + 0.05 per attempt that recorded none
    """

    partials: list[float] = field(default_factory=list)
    """The recorded costs' exact sum as non-overlapping floats (Shewchuk's partials), so the
    total is ``math.fsum`` of every cost, whatever order the attempts finished in."""
    uncosted: int = 0
    """Attempts that ran to an outcome but recorded no cost (charged the declared estimate)."""
    largest: float | None = None
    """The largest cost one attempt recorded (the worst case when no estimate is declared)."""

    def add(self, result: TrialResult, charge: float | None = None) -> None:
        """Count one attempt's record; ``charge``: what a scored attempt that recorded no
        cost is charged (its reservation), else the estimate ``usd`` is given."""
        cost = result.metrics.cost_usd.value if result.metrics is not None else None
        if cost is None:
            # An attempt that ran to a scored outcome spent something nobody measured; an
            # infra, interrupted or not_run record without a cost may have spent nothing.
            if result.outcome not in SCORED_OUTCOMES:
                return
            if charge is None:
                self.uncosted += 1
                return
            cost = charge
        self.largest = cost if self.largest is None else max(self.largest, cost)
        # Hettinger's msum: keeps the exact running sum in a few floats, so the spend the
        # ceiling compares is the same number a math.fsum over the stored records gives.
        x, kept = cost, 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                self.partials[kept] = lo
                kept += 1
            x = hi
        self.partials[kept:] = [x]

    def usd(self, estimate: float | None) -> float:
        """Recorded costs plus ``estimate`` for each attempt that recorded none."""
        return math.fsum([*self.partials, self.uncosted * (estimate or 0.0)])


@dataclass(frozen=True)
class Reservation:
    """One attempt's hold on the budget until it ends."""

    id: int
    usd: float | None
    """The worst case reserved; None: not known yet (the attempt runs alone)."""


class _Worst(NamedTuple):
    usd: float | None
    basis: str
    """Where the worst case comes from (named in the stop message)."""


def _usd(value: float) -> str:
    # A ceiling is usually whole cents; one that is not is shown as precisely as spends are.
    return f"${value:.2f}" if round(value, 2) == value else f"${value:.4f}"


def _fits(spent: float, flying: list[float | None], worst: float, ceiling: float) -> bool:
    return spent + math.fsum([*(u or 0.0 for u in flying), worst]) <= ceiling


class CostCeiling:
    """Lets an attempt start only if the spend and every reservation stay within the ceiling.

    **Usage**::

        ceiling = CostCeiling(0.10, None, spend)
        held = await ceiling.reserve()     # None: the run stops, ceiling.reason says why
        ...                                # run the attempt
        ceiling.settle(held, result)       # or ceiling.release(held) if it was cancelled
    """

    def __init__(
        self,
        ceiling_usd: float | None,
        estimate_usd: float | None,
        spend: Spend,
        prior_usd: float = 0.0,
    ):
        self.ceiling = ceiling_usd
        self.estimate = estimate_usd
        self.spend = spend
        self.prior = prior_usd
        """Spent before this run and counted against the same ceiling (a calibration's)."""
        self.reason: str | None = None
        self.overshoot: float | None = None
        """The largest cost of an attempt that cost more than it reserved (None: none did)."""
        self._held: dict[int, float | None] = {}
        self._ids = itertools.count()
        self._waiters: list[asyncio.Future[None]] = []

    def _worst(self, own: float | None = None) -> _Worst:
        declared = own if own is not None else self.estimate
        if declared is not None and self.overshoot is not None and self.overshoot > declared:
            return _Worst(
                self.overshoot, "the largest cost seen, which passed its declared worst case"
            )
        if own is not None:
            return _Worst(own, "the task's declared cost_per_trial_usd")
        if self.estimate is not None:
            return _Worst(self.estimate, "the declared cost_per_trial_usd")
        if self.spend.largest is not None:
            return _Worst(self.spend.largest, "the largest cost of an attempt so far")
        return _Worst(None, "no attempt has reported a cost yet")

    def _hold(self, usd: float | None) -> Reservation:
        held = Reservation(next(self._ids), usd)
        self._held[held.id] = usd
        return held

    async def reserve(self, own: float | None = None) -> Reservation | None:
        """Wait until the next attempt's worst case (``own``: its task's declared one) fits
        beside those in flight, and reserve it; None once it can never fit (the spend only
        grows), with ``reason`` set."""
        while self.reason is None:
            if self.ceiling is None:
                return self._hold(0.0)
            spent = self.spend.usd(self.estimate) + self.prior
            worst, basis = self._worst(own)
            if spent + (worst or 0.0) > self.ceiling:
                self.reason = (
                    f"budget stop: the spend ${spent:.4f}{self._before()} plus the next "
                    f"attempt's reservation ${worst or 0.0:.4f} ({basis}) "
                    f"would pass the ceiling {_usd(self.ceiling)}"
                )
                break
            if not self._held:
                return self._hold(worst)
            # An attempt of unknown cost runs alone; otherwise wait while the reservations in
            # flight leave no room: each may end costing less than it reserved.
            flying = list(self._held.values())
            if (
                worst is not None
                and None not in flying
                and _fits(spent, flying, worst, self.ceiling)
            ):
                return self._hold(worst)
            await self._changed()
        return None

    def _before(self) -> str:
        return f" (${self.prior:.4f} of it before this run)" if self.prior else ""

    def settle(self, held: Reservation, result: TrialResult) -> None:
        """The attempt ended: its measured cost replaces its reservation (a scored attempt
        that recorded none is charged the reservation)."""
        self._held.pop(held.id, None)
        self.spend.add(result, charge=held.usd)
        cost = result.metrics.cost_usd.value if result.metrics is not None else None
        if cost is not None and held.usd is not None and cost > held.usd:
            self.overshoot = cost if self.overshoot is None else max(self.overshoot, cost)
        self._wake()

    def release(self, held: Reservation) -> None:
        """The attempt ended with no record of its cost (cancelled): drop its reservation."""
        self._held.pop(held.id, None)
        self._wake()

    async def _changed(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _wake(self) -> None:
        # Every waiter looks again, in the order they came (futures resolve in list order).
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
