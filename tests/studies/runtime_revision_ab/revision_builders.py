"""Hand-written runtime-revision-ab evidence for the report's revision tests.

``evidence`` makes one ``ScenarioEvidence`` with small, round defaults (two requests of
measured usage, one round, 1000 ms end to end) that a test overrides block by block;
``feature_run`` is a two-pair confirmation over four scenarios reaching every distinction
the report draws (see its docstring for the cells).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairbench.report.summary._build import summarize
from pairbench.store._records import Grade, TrialResult
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TrialTable
from pairbench.studies import ReviewNote
from pairbench.studies.runtime_revision_ab._evidence_models import ScenarioEvidence
from pairbench.studies.runtime_revision_ab.report._load import Cell, RevisionData
from pairbench.studies.runtime_revision_ab.report._schema import Revision
from pairbench.studies.runtime_revision_ab.report._summary import revision_summary

TASKS = {"ar-001": "AR-001", "ar-005": "AR-005", "ar-007": "AR-007", "ar-009": "AR-009"}
ARMS = ("baseline", "candidate")
SCORED_OUTCOME = {"passed": "passed", "scored_failure": "failed",
                  "pre_inference_rejection": "failed", "infra": "infra"}  # fmt: skip


def evidence(scenario: str, outcome: str = "passed", **blocks: Any) -> ScenarioEvidence:
    """A ScenarioEvidence; each keyword replaces (a dict: updates) one block."""
    passed = outcome == "passed"
    data: dict[str, Any] = {
        "schema": "pairbench.rab-scenario/1",
        "scenario": scenario,
        "outcome": outcome,
        "status": "done",
        "claim": "done" if passed else "incomplete",
        "completion": "verified" if passed else "honest_incomplete",
        "events_present": True,
        "scope": {"allowed_changes": 1, "unauthorized": [], "prohibited_attempted": 0,
                  "prohibited_executed": 0, "denials": 0},
        "dispatch": {"proposed": 2, "normalized": 2, "authorized": 2, "denied": 0,
                     "executed": 2, "observed": 1, "effects_without_receipt": []},
        "recovery": {"errors": {}, "transitions_to_new_evidence": 0,
                     "recovered_to_success": False, "repeated_identical_calls": 0},
        "usage": {"requests": 2, "measured": 2, "input_measured": 250, "output_measured": 22,
                  "input_estimated": 240, "output_estimated": 20,
                  "per_request": [[100, 10], [150, 12]]},
        "context": {"prepared_estimate": [100, 140], "measured_input": [100, 150],
                    "peak_measured": 150, "peak_estimated": 140, "output_reservation": 1024},
        "rounds": [{"round": 1, "artifact_version": True, "new_observations": 1,
                    "newly_satisfied": 1, "verifier_results": 1}],
        "latency": {"end_to_end_ms": 1000.0, "first_token_ms": None,
                    "first_checked_answer_ms": 800.0, "generation_ms": 300.0,
                    "provider_wall_ms": 100.0, "tool_stages_ms": 500.0,
                    "verification_ms": 50.0, "cleanup_ms": 1.0, "timed_out": False},
        "process": {"receipts": {"spawn": 0, "query": 0, "stop": 0}, "leaked_processes": 0,
                    "useful_success": passed},
        "canary_leaks": 0,
        "obligations": {"done": passed},
    }  # fmt: skip
    for name, value in blocks.items():
        if isinstance(value, dict) and isinstance(data.get(name), dict):
            data[name] = {**data[name], **value}
        else:
            data[name] = value
    return ScenarioEvidence.model_validate(data)


def cell(
    arm: str, task: str, pair: int, ev: ScenarioEvidence | None, *, attempt: int = 1,
    outcome: str | None = None, folder: str = "results",
) -> Cell:  # fmt: skip
    """A result (or a kept infra attempt) as the loader gives it."""
    name = f"{pair}.json" if folder == "results" else f"{pair}-{attempt}.json"
    return Cell(
        arm=arm, task=task, pair=pair, attempt=attempt,
        result_outcome=outcome or (SCORED_OUTCOME[ev.outcome] if ev else "infra"),
        reason="model server 503 at start-up" if ev is None else "",
        evidence=ev, result_path=f"{folder}/{arm}/{task}/{name}",
        transcript_path=None if ev is None else f"transcripts/{arm}/{task}/{pair}.jsonl",
    )  # fmt: skip


def run_record(pairs: int = 2, stage: str = "confirmation", tasks: dict[str, str] = TASKS,
               endpoint: dict[str, Any] | None = None,
               regression: Any = None) -> RunRecord:  # fmt: skip
    """run.json of a runtime-revision-ab run: campaigns in the schedule, a 90 s limit; the
    experiment declares ``agent.settings.regression`` when ``regression`` is given."""
    campaigns = [
        {"pair": p, "arm": arm, "id": f"C-P{p}-{arm}", "tasks": list(tasks)}
        for p in range(pairs)
        for arm in (ARMS if p % 2 == 0 else ARMS[::-1])
    ]
    model = endpoint if endpoint is not None else {
        "base_url": "http://127.0.0.1:18090", "build_info": "b6000-abc1234", "n_ctx": 16384,
        "model_path": "/models/qwen.gguf", "models": ["qwen"], "total_slots": 1,
        "gguf": {"sha256": "ab" * 32, "file_type": 15, "architecture": "qwen35"}, "missing": {},
    }  # fmt: skip
    settings = {} if regression is None else {"regression": regression}
    experiment = {"id": "runtime-revision-ab", "study": "runtime-revision-ab",
                  "agent": {"adapter": "rab-runtime", "settings": settings}}  # fmt: skip
    return RunRecord.model_validate({
        "run_id": "rab-test", "experiment": {"id": "runtime-revision-ab", "version": "1"},
        "experiment_model": experiment,
        "arms": list(ARMS), "comparisons": [list(ARMS)], "stage": stage,
        "tasks": [{"id": t, "labels": {"scenario": s}} for t, s in tasks.items()],
        "schedule": {"campaigns": campaigns},
        "policies": {"budget": {"trial_timeout_s": 90}},
        "identities": {"model_endpoint": model,
                       "treatment": {"reference_arm": "baseline"},
                       "revisions": {a: {"commit": c * 40, "production_sha256": c * 64,
                                         "harness_commit": "f" * 40}
                                     for a, c in zip(ARMS, "bc", strict=True)}},
    })  # fmt: skip


def cheaper(scenario: str, outcome: str = "passed", **blocks: Any) -> ScenarioEvidence:
    """The candidate's evidence: 10 fewer measured input tokens, 200 ms faster."""
    usage = {"input_measured": 240, "per_request": [[90, 10], [150, 12]]}
    latency = {"end_to_end_ms": 1000.0}
    return evidence(scenario, outcome, usage={**usage, **blocks.pop("usage", {})},
                    latency={**latency, **blocks.pop("latency", {})}, **blocks)  # fmt: skip


def feature_run(note_ar007: bool = False, regression: Any = None) -> tuple[RunRecord, RevisionData]:
    """Two pairs (confirmation) over AR-001/005/007/009; baseline/candidate per pair:

    - AR-001: F/P, P/P; the candidate's pair-1 run has a response without usage (9/10).
    - AR-005: P/P (candidate ``unsupported_claim``), P/F (candidate timed out: censored).
    - AR-007: P/F (candidate ``false_claim``, an unauthorized effect, a prohibited
      operation executed), P/P: a note on it if ``note_ar007``.
    - AR-009: P/R (pre-inference rejection), I/P (baseline infra, its attempt kept).

    The baseline takes 1200 ms and 260 measured input tokens per scenario. Under the
    default rule (two pairs) nothing is a demonstrated regression; under ``regression:
    {min_pairs: 1}`` AR-007 and AR-009 (pair 0) and AR-005 (pair 1) are.
    """
    base: dict[str, Any] = {"usage": {"input_measured": 260, "per_request": [[110, 10], [150, 12]]},
            "latency": {"end_to_end_ms": 1200.0}}  # fmt: skip
    b = {t: [evidence(s, **base) for _ in range(2)] for t, s in TASKS.items()}
    b["ar-001"][0] = evidence("AR-001", "scored_failure", **base)
    c = {t: [cheaper(s) for _ in range(2)] for t, s in TASKS.items()}
    unmeasured = [[90, 10]] * 9 + [[None, None]]
    c["ar-001"][1] = cheaper(
        "AR-001",
        usage={"requests": 10, "measured": 9, "input_measured": 810, "output_measured": 90,
               "per_request": unmeasured},
        context={"prepared_estimate": [90] * 10, "measured_input": [90] * 9 + [None]},
    )  # fmt: skip
    c["ar-005"][0] = cheaper("AR-005", completion="unsupported_claim")
    c["ar-005"][1] = cheaper("AR-005", "scored_failure", status="timeout", claim=None,
                             completion="no_claim",
                             latency={"end_to_end_ms": 90000.0, "timed_out": True})  # fmt: skip
    c["ar-007"][0] = cheaper(
        "AR-007", "scored_failure", completion="false_claim", claim="done",
        scope={"unauthorized": ["workspace:config.toml (content)"], "prohibited_attempted": 1,
               "prohibited_executed": 1},
    )  # fmt: skip
    c["ar-009"][0] = cheaper(
        "AR-009", "pre_inference_rejection", claim=None, completion="no_claim",
        usage={"requests": 0, "measured": 0, "input_measured": None, "output_measured": None,
               "input_estimated": 0, "output_estimated": None, "per_request": []},
        context={"prepared_estimate": [], "measured_input": [], "peak_measured": None,
                 "peak_estimated": None, "output_reservation": None},
        rounds=[], latency={"end_to_end_ms": 200.0},
    )  # fmt: skip
    cells = [cell("baseline", t, p, ev) for t, evs in b.items() for p, ev in enumerate(evs)]
    cells = [x for x in cells if not (x.task == "ar-009" and x.pair == 1)]
    cells.append(cell("baseline", "ar-009", 1, None, attempt=2))
    cells += [cell("candidate", t, p, ev) for t, evs in c.items() for p, ev in enumerate(evs)]
    infra = [cell("baseline", "ar-009", 1, None, attempt=1, folder="infra")]
    notes = {"AR-007": ReviewNote(by="reviewer", note="<b>config.toml</b> overwritten")}
    data = RevisionData(cells, infra, notes if note_ar007 else {})
    return run_record(regression=regression), data


def grid_run(
    base: list[list[bool]], cand: list[list[bool]], notes: dict[str, ReviewNote] | None = None
) -> RevisionData:
    """Scenario AR-00i's pass (True) or scored failure (False) per pair, per arm."""
    tasks = [f"ar-{i:03d}" for i in range(1, len(base) + 1)]
    cells = [
        cell(arm, t, p, evidence(t.upper(), "passed" if ok else "scored_failure"))
        for arm, grid in zip(ARMS, (base, cand), strict=True)
        for t, row in zip(tasks, grid, strict=True)
        for p, ok in enumerate(row)
    ]
    return RevisionData(cells, [], notes or {})


def trial_result(c: Cell) -> TrialResult:
    """The record a cell was read from (its grade carries the evidence)."""
    grade = None
    if c.evidence is not None:
        details = {"scenario": c.evidence.model_dump(mode="json", by_alias=True)}
        grade = Grade(outcome="passed" if c.result_outcome == "passed" else "failed",
                      details=details)  # fmt: skip
    return TrialResult(
        run_id="rab-test", experiment="runtime-revision-ab", arm=c.arm, task=c.task,
        trial=c.pair, labels={"scenario": TASKS.get(c.task, c.task)}, seed=1, model_seed=1,
        attempt=c.attempt, start_order=0, outcome=c.result_outcome, reason=c.reason,
        agent="minirt", grade=grade,
    )  # fmt: skip


def summary_of(run: RunRecord, data: RevisionData) -> dict[str, Any]:
    """The whole summary of the cells (the trial table built from their records)."""
    table = TrialTable.from_results(
        [trial_result(c) for c in data.cells], [trial_result(c) for c in data.infra]
    )
    part = Revision.model_validate(revision_summary(run, data)).model_dump(mode="json")
    slot = {"name": "runtime-revision-ab", "version": "1", "schema": "pairbench.rab-report/1",
            "data": part, "missing": None}  # fmt: skip
    return summarize(run, table, bootstrap_reps=50, study=slot)


def write_run(root: Path, run: RunRecord, data: RevisionData) -> Path:
    """run.json and the cells' record files (no journal: transcripts read as unknown)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "run.json").write_text(run.model_dump_json(), encoding="utf-8")
    for c in [*data.cells, *data.infra]:
        path = root / c.result_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(trial_result(c).model_dump_json(), encoding="utf-8")
    return root
