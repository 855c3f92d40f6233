"""What an engine adapter is: how pairbench runs one kind of engine (a process, a worker, a
web service). Registered under ``pairbench.engines`` like the built-ins."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from pairbench.agents._protocol import RunSignals
from pairbench.studies.attribution_reliability.engines._models import EngineRequest
from pairbench.studies.attribution_reliability.engines._outcome import EngineOutcome
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec


@runtime_checkable
class EngineAdapter(Protocol):
    """Built with the arm's ``EngineSpec``; ``run`` turns every failure into an outcome.

    **Usage**::

        class MyAdapter:
            adapter = "my-adapter"
            def __init__(self, spec: EngineSpec) -> None: ...
            async def run(self, request, *, env, workdir, timeout_s, signals): ...
    """

    adapter: ClassVar[str]

    def __init__(self, spec: EngineSpec) -> None: ...

    async def run(
        self,
        request: EngineRequest,
        *,
        env: Mapping[str, str],
        workdir: Path,
        timeout_s: float,
        signals: RunSignals,
    ) -> EngineOutcome:
        """``env`` is the runner's environment: an adapter that starts a process scrubs it
        (``pairbench.agents.scrubbed_env``), one that does not only reads ``${env:NAME}``
        references from it. Raises ``InfraFailure`` only when the harness, not the engine,
        failed."""
        ...
