"""How the cyclic garbage collector runs while pairbench builds many objects at once.

Python walks the young container objects every 700 new ones, and the older generations as
survivors pile up. Work that makes millions of objects that stay alive (a run's attempts
in flight, a parsed schedule, an imported log) pays for walks that find nothing. Two
policies, each restoring the collector as it found it:

- :func:`paced_collection` for long work that also makes garbage (a run, an import): what
  exists before is frozen out of sight, and a young collection waits for 50,000 objects.
- :func:`no_cyclic_collection` for bounded batch work whose objects all live until it ends
  (parsing JSON, building a report).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_COLLECTION_EVERY = 50_000
"""Under :func:`paced_collection`, the young collection waits for this many new container
objects (Python's default: 700)."""


@contextlib.contextmanager
def paced_collection() -> Iterator[None]:
    """The collector paced for long work, as it was before afterwards (a process that runs
    several runs, a test session, collects as usual).

    What exists before (modules, models, the plan) lives as long as the work: frozen out of
    the collector's sight, no collection walks it again. And a run's attempts in flight
    hold thousands of objects for seconds each (their coroutines, contexts, transcripts),
    freed by reference counting: with a young collection every 700 new objects they were
    walked again and again and promoted into full collections of everything alive, ~1 s of
    CPU in 4,000 attempts at concurrency 1,000 (a 100-200 ms stall of the event loop each
    time), finding nothing to collect. Every ``YOUNG_COLLECTION_EVERY`` objects, most are
    gone before a collection sees them, and cyclic garbage still waits at most that many.
    """
    thresholds = gc.get_threshold()
    # A host that froze objects itself (a pre-forking server, say) keeps them frozen:
    # unfreeze cannot tell its objects from ours, so we freeze only where nothing was.
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if ours:
            gc.unfreeze()


@contextlib.contextmanager
def no_cyclic_collection() -> Iterator[None]:
    """No cyclic collection during a bounded piece of batch work.

    For work whose container objects all stay alive until it ends (run.json's schedule, a
    dict per planned pair; a report's table and summary): parsing a 500,000-pair schedule
    took 1.15 s with the collector and 0.50 s without it. Reference counting still frees
    everything acyclic at once; cycles made meanwhile wait for the first collection after
    the block, which walks what the block made and still holds, once.

    The collector is turned back on at the end only if it was on at the start, so a host
    that disabled it keeps it off, and nested blocks end with the outermost one.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
