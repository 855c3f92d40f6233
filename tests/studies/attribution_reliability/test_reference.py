"""The reference engines bound the scorer: oracle perfect, always-blame and never-blame not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairbench.studies.attribution_reliability._manifest import REPEAT_SUBSET
from pairbench.studies.attribution_reliability._reference import (
    AlwaysBlameEngine,
    NeverBlameEngine,
    OracleEngine,
)
from pairbench.studies.attribution_reliability._score import score
from pairbench.studies.attribution_reliability._score_models import Scorecard, SessionRecord
from pairbench.studies.attribution_reliability.engines._models import EngineRequest, Persona
from pairbench.studies.attribution_reliability.engines._protocol import AttributionEngine
from studies.attribution_reliability.ar_score_helpers import manifest, write_manifest


def play(engine: AttributionEngine) -> Scorecard:
    """Every held-out session of the synthetic manifest through ``engine``."""
    cases, packages = manifest()
    records: list[SessionRecord] = []
    for cid, case in cases.items():
        if case.set != "held-out":
            continue
        for trial in (0, 1, 2) if cid in REPEAT_SUBSET else (0,):
            request = _request("scan", case.goal)
            records.append(_record(cid, "e2e", trial, engine.scan(request)))
    for pid, package in packages.items():
        if package.set == "held-out":
            request = _request("judge", package.users[0].goal)
            records.append(_record(pid, "package", 0, engine.judge(request)))
    return score(records, cases, packages, engine=type(engine).__name__)


def _request(mode: str, goal: str) -> EngineRequest:
    return EngineRequest.model_validate(
        {
            "mode": mode,
            "start_url": "http://127.0.0.1:1/v/abc",
            "model_seed": 1,
            "personas": [Persona(user="u1", goal=goal).model_dump()],
        }
    )


def _record(case: str, kind: str, trial: int, report: Any) -> SessionRecord:
    return SessionRecord.model_validate(
        {
            "case": case,
            "kind": kind,
            "trial": trial,
            "status": "ran",
            "report": report.model_dump(by_alias=True),
            "cost_provenance": "not_applicable",
        }
    )


def test_reference_engines_implement_the_protocol(tmp_path: Path) -> None:
    settings = write_manifest(tmp_path)
    for cls in (OracleEngine, AlwaysBlameEngine, NeverBlameEngine):
        assert isinstance(cls(settings), AttributionEngine)


def test_oracle_is_perfect(tmp_path: Path) -> None:
    m = play(OracleEngine(write_manifest(tmp_path))).metrics
    assert (m.recall.k, m.recall.n) == (10, 10)
    assert (m.false_blame.k, m.false_blame.n) == (0, 29)
    assert (m.precision.k, m.precision.n) == (10, 10)
    assert (m.abstention.k, m.abstention.n) == (30, 30)
    assert (m.rejection.k, m.valid_kept.k, m.valid_kept.n) == (20, 20, 20)
    assert (m.false_absence.k, m.repeatability.k) == (0, 10)
    card = play(OracleEngine(write_manifest(tmp_path)))
    assert (card.packages.recall.k, card.packages.false_blame.k) == (4, 0)
    assert card.cost.status == "not_applicable"


def test_always_blame_blames_every_working_product() -> None:
    card = play(AlwaysBlameEngine({}))
    m = card.metrics
    assert (m.false_blame.k, m.false_blame.n) == (29, 29)
    assert (m.recall.k, m.precision.k, m.precision.n) == (0, 0, 40)
    assert (m.abstention.k, m.abstention.n) == (0, 30)
    assert (card.packages.false_blame.k, card.packages.false_blame.n) == (16, 16)


def test_never_blame_leaves_precision_undefined() -> None:
    m = play(NeverBlameEngine({})).metrics
    assert not m.precision.defined and m.precision.text().startswith("undefined")
    assert (m.recall.k, m.false_blame.k, m.rejection.k) == (0, 0, 20)


def test_oracle_sets_aside_a_goal_it_does_not_know(tmp_path: Path) -> None:
    oracle = OracleEngine(write_manifest(tmp_path))
    report = oracle.scan(_request("scan", "You want something else."))
    assert report.findings == [] and len(report.set_aside) == 1
