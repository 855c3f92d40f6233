"""Run an engine once, however it is plugged in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pairbench.agents._protocol import InfraFailure, RunSignals
from pairbench.studies.attribution_reliability.engines._models import EngineRequest
from pairbench.studies.attribution_reliability.engines._outcome import EngineOutcome, EngineSignals
from pairbench.studies.attribution_reliability.engines._resolve import build
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec

TIMEOUT_SLACK_S = 60.0


def default_timeout(request: EngineRequest) -> float:
    """users x ``seconds_per_user`` + 60 s (the protocol's limit for a whole scan).

    >>> from pairbench.studies.attribution_reliability.engines._models import Persona
    >>> default_timeout(EngineRequest(mode="scan", start_url="http://x/", model_seed=1,
    ...     personas=[Persona(user="u1", goal="g"), Persona(user="u2", goal="g")]))
    320.0
    """
    return len(request.personas) * request.budget.seconds_per_user + TIMEOUT_SLACK_S


async def run_engine(
    spec: EngineSpec,
    request: EngineRequest,
    *,
    env: Mapping[str, str],
    workdir: Path,
    timeout_s: float | None = None,
    signals: RunSignals | None = None,
    hide: Sequence[Path] = (),
) -> EngineOutcome:
    """Run ``spec``'s engine on ``request``; every failure of the engine is an outcome.

    ``env`` is the runner's environment, scrubbed here: a process engine gets only the
    allow-list (``pairbench.agents.BASE_ALLOW``) and the spec's ``env``, with ``HOME`` and
    ``TMPDIR`` inside ``workdir``. ``timeout_s`` overrides ``spec.timeout_s``, which
    overrides ``default_timeout``. ``signals`` is shared by a run's calls: an
    ``EngineSignals``, or the run's ``RunSignals``, which gets the record of answered
    engines on first use. Without it, every http refusal counts as before the first
    success. ``hide``: folders a contained engine must not see even inside its own folder
    (the experiment's, the runs').

    Raises ``InfraFailure`` when the harness failed (a program that cannot be started, an
    http engine refusing before its first report) and ``SpecError`` when a ``${env:NAME}``
    the spec reads is unset.

    **Usage**::

        spec = EngineSpec.parse({"engine": "command", "argv": ["./engine"]}).resolve(base)
        outcome = await run_engine(spec, request, env=os.environ, workdir=attempt_dir)
    """
    adapter = build(spec, hide=hide)
    limit = timeout_s if timeout_s is not None else spec.timeout_s
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        return await adapter.run(
            request,
            env=env,
            workdir=workdir,
            timeout_s=limit if limit is not None else default_timeout(request),
            signals=signals if signals is not None else EngineSignals(),
        )
    except OSError as exc:
        # The program is missing or not executable: the arm is not set up, nothing the
        # engine did (engine_identity refuses such a spec before a run starts).
        raise InfraFailure(f"could not start the {spec.engine} engine: {exc}") from exc
