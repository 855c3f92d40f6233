"""An attribution-reliability run's sessions, read from its result files, and the scorer's
cards (the summary's ``attribution`` part).

The sessions' evidence is in each result's ``final_answer`` (``pairbench.attribution.
session/1``), written whatever the session's outcome, so a runtime failure is scored on
what it published. Only a held-out run is scored; a calibration run is never reported as
results (protocol §3), so its part lists its sessions as diagnostics instead. A held-out run
is scored against the manifests its lock hashed (``_manifests``), and its results name the
run, the lock, the sitting and the engine as its sessions ran it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.studies.attribution_reliability._score import RunMeta, score
from pairbench.studies.attribution_reliability._score_visit import DEFAULT_STUFFING_SHARE
from pairbench.studies.attribution_reliability._session import SessionEvidence
from pairbench.studies.attribution_reliability._spend import spend_account
from pairbench.studies.attribution_reliability.engines._identity import EngineIdentity
from pairbench.studies.attribution_reliability.report._manifests import run_manifests
from pairbench.studies.attribution_reliability.report._schema import (
    STATEMENT,
    Attribution,
    CalibrationSession,
)

SCHEMA = "pairbench.attribution.session/1"


def _settings(run: RunRecord, arm: str) -> dict[str, Any]:
    agent = run.agents.get(arm)
    return dict(agent.settings or {}) if agent is not None else {}


def _identity(found: list[tuple[int, SessionEvidence | None, str]]) -> EngineIdentity | None:
    return next((e.engine for _, e, _ in found if e is not None and e.engine), None)


def _engine(run: RunRecord, arm: str) -> str:
    identity = (run.arm_identities() or {}).get(arm) or {}
    engine = (identity.get("settings") or {}).get("engine") or {}
    return str(engine.get("engine") or "unknown") if isinstance(engine, dict) else "unknown"


def _uncontained(run: RunRecord) -> list[str]:
    """Arms whose engine spec says ``contained: false`` (a local engine: http takes none)."""
    lines = []
    for arm, identity in sorted((run.arm_identities() or {}).items()):
        engine = ((identity or {}).get("settings") or {}).get("engine")
        if isinstance(engine, dict) and engine.get("contained") is False:
            lines.append(
                f"Engine {engine.get('engine', 'unknown')} of arm {arm} ran uncontained "
                "(contained: false): it could read the host, the answers included."
            )
    return lines


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
            uncontained=_uncontained(run),
            spend=spend_account(run_dir.path, run), recordings=recordings,
        ).model_dump(mode="json")  # fmt: skip
    cards = {}
    for arm, found in sessions.items():
        settings = _settings(run, arm)
        manifests = run_manifests(run_dir.path, run, settings)
        cards[arm] = score(
            [evidence.record(trial) for trial, evidence, _ in found if evidence is not None],
            manifests.cases,
            manifests.packages,
            engine=_engine(run, arm),
            engine_identity=_identity(found),
            manual_review=notes,
            run=RunMeta(run.run_id, run.lock_sha256, run.sitting, manifests.sources),
            evidence_stuffing_share=float(
                settings.get("evidence_stuffing_share", DEFAULT_STUFFING_SHARE)
            ),
        )
    return Attribution(
        case_set=case_set, statement=STATEMENT, scorecards=cards, calibration=[],
        uncontained=_uncontained(run),
        spend=spend_account(run_dir.path, run), recordings=recordings,
    ).model_dump(mode="json")  # fmt: skip
