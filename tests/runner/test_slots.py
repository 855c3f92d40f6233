"""Attempt slots: a limit on attempts in flight, longest remaining pair first, FIFO among equals."""

from __future__ import annotations

import asyncio

from pairbench.runner._slots import AttemptSlots


def test_a_freed_slot_goes_to_the_pair_with_most_arms_left_then_first_come() -> None:
    order: list[str] = []

    async def main() -> None:
        slots = AttemptSlots(1)
        release = asyncio.Event()

        async def holder() -> None:
            async with slots.hold(1):
                await release.wait()

        async def waiter(name: str, remaining: int) -> None:
            async with slots.hold(remaining):
                order.append(name)
                await asyncio.sleep(0)

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)
        tasks = [
            asyncio.create_task(waiter(name, remaining))
            for name, remaining in [("last-arm-1", 1), ("first-arm-1", 2), ("last-arm-2", 1)]
        ]
        tasks.append(asyncio.create_task(waiter("first-arm-2", 2)))
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, *tasks)

    asyncio.run(main())
    assert order == ["first-arm-1", "first-arm-2", "last-arm-1", "last-arm-2"]


def test_never_more_than_the_limit_in_flight_and_a_cancelled_waiter_takes_no_slot() -> None:
    peak = 0

    async def main() -> None:
        nonlocal peak
        slots = AttemptSlots(2)
        inside = 0

        async def attempt() -> None:
            nonlocal inside, peak
            async with slots.hold(1):
                inside += 1
                peak = max(peak, inside)
                await asyncio.sleep(0.01)
                inside -= 1

        tasks = [asyncio.create_task(attempt()) for _ in range(6)]
        await asyncio.sleep(0)
        tasks[4].cancel()  # waiting for a slot when cancelled
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(results[4], asyncio.CancelledError)
        # Every slot came back: two more attempts can hold one at once.
        async with slots.hold(1), slots.hold(1):
            pass

    asyncio.run(main())
    assert peak == 2
