"""``minirt-acceptance``: the study's grader. The scenario's own ``accept.py`` already judged
a copy of the final workspace (ground truth, not the runtime's claim); this reads that verdict
from the adapter's evidence and keeps the whole evidence in ``grade.details["scenario"]``."""

from __future__ import annotations

import json

from pydantic import ValidationError

from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade
from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence

_WHY = {
    "scored_failure": "acceptance failed",
    "pre_inference_rejection": "the runtime rejected the task before any provider request "
    "(a pre-inference rejection: scored as a failure, counted apart)",
    "infra": "infrastructure (unscored)",
}


def grade_minirt(inp: GradeInput) -> Grade:
    """Passed when the scenario's acceptance passed; the evidence goes in the details."""
    try:
        data = json.loads(inp.final_answer or "")
        evidence = ScenarioEvidence.model_validate(data)
    except (ValueError, ValidationError) as exc:
        return Grade(
            outcome="parse_failure",
            reason=f"the answer is not the minirt adapter's scenario evidence: {exc}"[:400],
        )
    details = {"scenario": data}
    claim = f"completion {evidence.completion}"
    if evidence.outcome == "passed":
        return Grade(outcome="passed", reason=f"acceptance passed; {claim}", details=details)
    return Grade(outcome="failed", reason=f"{_WHY[evidence.outcome]}; {claim}", details=details)
