"""An attempt's grading: grader, metrics, validity and the security detectors on what the
agent produced, then its record (the last step of ``_attempt.run_attempt``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pairbench.fixtures._protocol import FixtureState
from pairbench.grading._metrics import compute_metrics
from pairbench.grading._protocol import GradeInput
from pairbench.grading._security import assess_security
from pairbench.grading._validity import classify_validity
from pairbench.store._answer import stored_answer
from pairbench.store._records import Grade, Outcome

if TYPE_CHECKING:  # only their shapes: _attempt imports this module
    from pairbench.runner._attempt import AttemptRecord, _Prepared, _Ran


def grade_attempt(prep: _Prepared, ran: _Ran) -> AttemptRecord:
    """Grader, metrics, validity and the security detectors, on what the agent produced
    (before redaction), then the record."""
    at = prep.at
    exp = at.rc.loaded.experiment
    task = exp.task(at.key.task)
    output = ran.output
    state: FixtureState | None = prep.fixture.read_state(prep.fixture_dir) if prep.fixture else None
    events = at.transcript.events
    grade: Grade | None = None
    final = output.final_answer if output else None
    outcome: Outcome = ran.outcome or "agent_error"
    reason = ran.reason
    if output is not None:
        if output.error:
            outcome, reason = "agent_error", output.error
        else:
            grader = at.rc.grader(task.grader.name)
            grade = grader(
                GradeInput(
                    task=task,
                    args=dict(task.grader.args),
                    content=prep.content,
                    state=state,
                    final_answer=final,
                    events=events,
                    arm=at.key.arm,
                )
            )
            outcome, reason = grade.outcome, grade.reason
    probe = _probe_label(task.labels)
    return at.record(
        outcome,
        reason,
        simulated=bool(output and output.simulated),
        grade=grade,
        metrics=compute_metrics(ran.wall_ms, events, state, output),
        validity=classify_validity(exp.arms[at.key.arm], events, state),
        security=assess_security(prep.probes, probe, at.rc.secrets(), final, events, state),
        # Graders judged the whole answer; the record keeps at most the declared bytes.
        final_answer=None if final is None else stored_answer(final, prep.ctx.limits.final_answer),
        seeding=output.seeding if output else None,
        models_seen=list(dict.fromkeys(output.models)) if output else [],
    )


def _probe_label(labels: dict[str, str | int]) -> str | None:
    value = labels.get("probe")
    return None if value is None else str(value)
