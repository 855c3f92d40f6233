"""An attribution-reliability run's sessions, read from its result files, and the scorer's
cards (the summary's ``attribution`` part).

The sessions' evidence is in each result's ``final_answer`` (``pairbench.attribution.
session/1``), written whatever the session's outcome, so a runtime failure is scored on
what it published. Only a held-out run is scored; a calibration run is never reported as
results (protocol §3), so its part lists its sessions as diagnostics instead.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.studies.attribution_reliability._manifest import load_cases, load_packages
from pairbench.studies.attribution_reliability._score import score
from pairbench.studies.attribution_reliability._session import SessionEvidence
from pairbench.studies.attribution_reliability._spend import spend_account
from pairbench.studies.attribution_reliability.report._schema import (
    STATEMENT,
    Attribution,
    CalibrationSession,
)

SCHEMA = "pairbench.attribution.session/1"


def _engine(run: RunRecord, arm: str) -> str:
    identity = (run.arm_identities() or {}).get(arm) or {}
    engine = (identity.get("settings") or {}).get("engine") or {}
    return str(engine.get("engine") or "unknown") if isinstance(engine, dict) else "unknown"


def load_attribution(
    run_dir: RunDir, run: RunRecord, notes: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The summary's ``attribution`` part: a scorecard per arm (held-out), or the
    calibration sessions as diagnostics."""
    sessions: dict[str, list[tuple[int, SessionEvidence | None, str]]] = {}
    root = run_dir.path / "results"
    for path in sorted(root.rglob("*.json")) if root.is_dir() else []:
        data = json.loads(path.read_bytes())
        arm, trial, outcome = str(data["arm"]), int(data["trial"]), str(data["outcome"])
        answer = data.get("final_answer")
        evidence = None
        if answer is not None and outcome != "not_run":
            # A graded parse_failure has no session evidence: it is scored as nothing.
            with contextlib.suppress(ValueError):
                evidence = SessionEvidence.model_validate(json.loads(answer))
        sessions.setdefault(arm, []).append((trial, evidence, str(data["task"])))
    case_set = run.case_set or "calibration"
    recordings = {
        f"{evidence.case}#{trial}": evidence.recording_sha256
        for found in sessions.values()
        for trial, evidence, _ in found
        if evidence is not None and evidence.recording_sha256
    }
    if case_set != "held-out":
        rows = [
            CalibrationSession.of(arm, task, trial, evidence)
            for arm, found in sessions.items()
            for trial, evidence, task in found
        ]
        return Attribution(
            case_set=case_set, statement=STATEMENT, scorecards={}, calibration=rows,
            spend=spend_account(run_dir.path, run), recordings=recordings,
        ).model_dump(mode="json")  # fmt: skip
    cases, packages = load_cases(), load_packages()
    cards = {
        arm: score(
            [evidence.record(trial) for trial, evidence, _ in found if evidence is not None],
            cases,
            packages,
            engine=_engine(run, arm),
            manual_review=notes,
        )
        for arm, found in sessions.items()
    }
    return Attribution(
        case_set=case_set, statement=STATEMENT, scorecards=cards, calibration=[],
        spend=spend_account(run_dir.path, run), recordings=recordings,
    ).model_dump(mode="json")  # fmt: skip
