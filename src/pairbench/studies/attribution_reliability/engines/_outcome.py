"""What one engine call came to: a report, a runtime failure of a named kind, or both.

Every way an engine can fail ends here as an ``EngineOutcome``; the one exception is an
``http`` engine refusing before its first success in the run, which is infrastructure
(``pairbench.agents.InfraFailure``), not the engine's result.
"""

from __future__ import annotations

import json
import time
from typing import Literal

from pydantic import Field, ValidationError

from pairbench._model import Frozen
from pairbench.agents._protocol import RunSignals
from pairbench.studies.attribution_reliability.engines._models import EngineReport

FailureKind = Literal["crash", "non_json", "invalid_report", "timeout", "engine_error", "refused"]

RAW_STDOUT_CAP = 64 * 1024
"""Bytes of an engine's stdout kept in an outcome (the report itself is kept whole)."""
STDERR_TAIL_LINES = 40


class EngineOutcome(Frozen):
    """One engine call's result. ``failure`` set means a runtime failure: scored on
    ``report`` (what the engine published, often nothing), listed, never re-run.

    **Usage**::

        outcome = await run_engine(spec, request, env=os.environ, workdir=folder)
        if outcome.failure is not None:
            print(outcome.failure, outcome.message)
        findings = outcome.report.findings if outcome.report else []
    """

    report: EngineReport | None = None
    """The validated report; present with ``failure="engine_error"`` too."""
    failure: FailureKind | None = None
    """``crash`` (non-zero exit, an exception in a python engine), ``non_json``,
    ``invalid_report``, ``timeout``, ``engine_error`` (the report says failed, cancelled or
    lists errors) or ``refused`` (an http engine refused after its first success)."""
    message: str = ""
    """What went wrong, in one line a person can act on (empty on success)."""
    stderr_tail: str = ""
    """The last lines the engine wrote on stderr (subprocess adapters)."""
    raw_stdout: str = ""
    """The start of what it printed or answered when that was not a valid report (capped)."""
    duration_ms: float = Field(ge=0, allow_inf_nan=False)


class EngineSignals(RunSignals):
    """``RunSignals`` plus which engines have answered once in this run.

    An ``http`` engine refusing (connection refused, 401/403/429, 5xx) before its first
    success is infrastructure; afterwards it is the engine's runtime failure. Share one
    instance across a run's calls.

    **Usage**::

        signals = EngineSignals()
        await run_engine(spec, request, env=env, workdir=w, signals=signals)
    """

    def __init__(self) -> None:
        super().__init__()
        self.engines_answered: set[str] = set()


def answered(signals: RunSignals) -> set[str]:
    """The engines that have answered in this run, kept on ``signals`` (a plain
    ``RunSignals``, such as an attempt's ``AgentContext.signals``, gets the set on first use).
    """
    found: set[str] | None = getattr(signals, "engines_answered", None)
    if found is None:
        found = set()
        signals.engines_answered = found  # type: ignore[attr-defined]
    return found


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.monotonic()`` reading)."""
    return round((time.monotonic() - started) * 1000.0, 3)


def tail(text: str, lines: int = STDERR_TAIL_LINES) -> str:
    """The last ``lines`` lines of ``text``."""
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


def outcome_of(raw: str, *, duration_ms: float, stderr: str = "", who: str) -> EngineOutcome:
    """Read ``raw`` (what ``who`` answered) as a report, naming what is wrong when it is not.

    >>> outcome_of('{"status": "completed"}', duration_ms=1.0, who="engine").failure is None
    True
    >>> outcome_of("hello", duration_ms=1.0, who="engine").failure
    'non_json'
    """
    kept = raw[:RAW_STDOUT_CAP]
    err_tail = tail(stderr)
    if not raw.strip():
        return EngineOutcome(
            failure="non_json",
            message=f"{who} answered nothing (an EngineReport JSON object was expected)",
            stderr_tail=err_tail,
            duration_ms=duration_ms,
        )
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return EngineOutcome(
            failure="non_json",
            message=f"{who} answered text that is not JSON ({exc}): {_short(raw)!r}",
            stderr_tail=err_tail,
            raw_stdout=kept,
            duration_ms=duration_ms,
        )
    try:
        report = EngineReport.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(report)'}: {e['msg']}" for e in exc.errors()[:5]
        )
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        return EngineOutcome(
            failure="invalid_report",
            message=f"{who} answered JSON that is not a valid EngineReport: {problems}{more}",
            stderr_tail=err_tail,
            raw_stdout=kept,
            duration_ms=duration_ms,
        )
    if report.runtime_failure:
        errors = "; ".join(f"{e.kind}: {e.message}" for e in report.errors[:5])
        return EngineOutcome(
            report=report,
            failure="engine_error",
            message=f"{who} reported status {report.status}"
            + (f" with errors: {errors}" if errors else ""),
            stderr_tail=err_tail,
            duration_ms=duration_ms,
        )
    return EngineOutcome(report=report, stderr_tail=err_tail, duration_ms=duration_ms)


def _short(text: str, limit: int = 120) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."
