"""A run in the foreground: SIGINT and SIGTERM stop it cleanly (in-flight attempts kept as
``interrupted``, every pending record committed), and the run's canary is set for its
duration."""

from __future__ import annotations

import asyncio
import os
import signal

from pairbench.runner._context import CANARY_ENV
from pairbench.runner._run import Executor


async def run_with_signals(executor: Executor, concurrency: int) -> str:
    """Run until done; SIGINT/SIGTERM cancel in-flight attempts (kept as ``interrupted``)."""
    loop = asyncio.get_running_loop()
    main = asyncio.ensure_future(executor.execute(concurrency))
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, main.cancel)
    previous = os.environ.get(CANARY_ENV)
    os.environ[CANARY_ENV] = executor.rc.canaries[0]
    try:
        await main
        status = "complete"
    except asyncio.CancelledError:
        status = "interrupted"
    finally:
        # The attempts cancelled in flight queued their `interrupted` records: commit them
        # (and anything else pending) before the journal closes and the process exits.
        await executor.commits.aclose()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if previous is None:
            os.environ.pop(CANARY_ENV, None)
        else:
            os.environ[CANARY_ENV] = previous
        executor.journal.close()
    unstored = executor.commits.unstored
    if unstored is not None:
        # An interrupted attempt's record did not reach the disk: the run stops on that
        # store error (one message, naming the resume), not as a clean interruption.
        raise unstored
    if status == "complete" and executor.state.stop_reason is not None:
        status = f"stopped: {executor.state.stop_reason}"
    elif status == "complete" and executor.state.budget_reason is not None:
        status = f"stopped: {executor.state.budget_reason}"
    return status
