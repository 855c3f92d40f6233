"""Attempt slots: how many agent attempts run at once, and which waiting attempt goes next."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class AttemptSlots:
    """At most ``limit`` attempts in flight; a freed slot goes to the waiting attempt whose
    pair has the most arms still to run, first come first served among equals.

    The arms of a pair run one after the other, so a pair is a chain of attempts. Serving
    the longest remaining chain first (Hu's rule for chains of equal tasks) starts new
    pairs' first arms before other pairs' last arms, which keeps every slot busy to the end:
    1,000 attempts of 1 s in 500 pairs at 200 slots take ~5 s, where plain first come first
    served with the same pairs open leaves half the slots idle in a last 2 s wave.

    **Usage**::

        slots = AttemptSlots(4)
        async with slots.hold(remaining=2):   # this pair's first of two arms
            await run_the_attempt()
    """

    def __init__(self, limit: int) -> None:
        self._free = limit
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @asynccontextmanager
    async def hold(self, remaining: int) -> AsyncIterator[None]:
        """Hold one slot for the block; ``remaining``: arms of the pair left, this one included."""
        await self._acquire(remaining)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, remaining: int) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (-remaining, next(self._order), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # handed a slot in the same instant it was cancelled: pass it on
            raise

    def add(self) -> None:
        """One more slot (a staggered worker opening): the next waiter, if any, takes it."""
        self._release()

    def _release(self) -> None:
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # a waiter that was cancelled meanwhile is skipped
                future.set_result(None)
                return
        self._free += 1
