"""``attribution``: the study's per-session grader (scorer version 1.0's rules, one session).

The study's result is the scorer's seven metrics over the whole held-out run (the report's
``attribution`` section), not a pass rate; the per-trial outcome maps onto them so a run's
ordinary views still read right: ``passed`` when the session's attribution was right (a
PRODUCT case with a supported finding; any other case with no unsupported finding),
``failed`` when it was not. The session's score goes in ``grade.details["score"]`` and its
evidence in ``grade.details["session"]``.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade
from pairbench.studies.attribution_reliability._manifest import (
    CASES_FILE,
    PACKAGES_FILE,
    Case,
    Package,
    load_cases,
    load_packages,
)
from pairbench.studies.attribution_reliability._score import score_session
from pairbench.studies.attribution_reliability._session import SessionEvidence


def grade_attribution(inp: GradeInput) -> Grade:
    """Passed when the session's attribution was right (see the module's docstring)."""
    try:
        data = json.loads(inp.final_answer or "")
        evidence = SessionEvidence.model_validate(data)
    except (ValueError, ValidationError) as exc:
        return Grade(
            outcome="parse_failure",
            reason=f"the answer is not the attribution adapter's session evidence: {exc}"[:400],
        )
    cases, packages = _manifests(evidence)
    item = cases.get(evidence.case) if evidence.kind == "e2e" else packages.get(evidence.case)
    if item is None:
        return Grade(outcome="parse_failure", reason=f"no manifest entry {evidence.case!r}")
    # The trial number changes nothing in one session's score (only which metrics use it).
    scored = score_session(evidence.record(0), item)
    details = {"session": data, "score": scored.model_dump(mode="json")}
    unsupported = scored.published - scored.supported
    if item.truth == "PRODUCT":
        right = scored.supported > 0
        why = f"{scored.supported} supported finding(s) of {scored.published} published"
    else:
        right = unsupported == 0
        why = f"{unsupported} unsupported finding(s) of {scored.published} published"
    return Grade(
        outcome="passed" if right else "failed",
        reason=f"{item.truth}: {why}; outcome {scored.outcome}",
        details=details,
    )


def _manifests(evidence: SessionEvidence) -> tuple[dict[str, Case], dict[str, Package]]:
    """The manifests the session ran from (the experiment's copies, say), so a truth the
    experiment changed grades its trials as the report scores them; the study's copies for
    evidence that names none, or names files no longer there."""
    paths = [Path(p) for p in evidence.manifests]
    cases = paths[0] if len(paths) == 2 and paths[0].is_file() else CASES_FILE
    packages = paths[1] if len(paths) == 2 and paths[1].is_file() else PACKAGES_FILE
    return load_cases(cases), load_packages(packages)
