"""Whole scenario runs: minirt from a real git worktree of each revision, the scripted model
over HTTP, and the evidence run_scenario collects. Each seed was picked once for the branch
it exercises; draws are seeded, so the same seed takes the same branch on every machine."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from helpers.runtime_rab import model, worktrees
from pairbench.studies.runtime_revision_ab import (
    ModelServer,
    ScenarioResult,
    claim_evidence,
    load_scenario,
    prohibited_attempts,
    run_scenario,
    scenario_evidence,
)

pytestmark = pytest.mark.whole_run


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return worktrees(tmp_path_factory.mktemp("rab"), ("baseline", "candidate", "false-claim"))


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    yield from model()


def _run(trees: dict[str, Path], server: ModelServer, tmp_path: Path, step: str,
         scenario: str, seed: int, events: bool = True) -> ScenarioResult:  # fmt: skip
    return run_scenario(trees[step], scenario, server.base_url, tmp_path / step, seed, 60,
                        events=events)  # fmt: skip


def test_ar001_the_fix_decodes_double_encoded_arguments(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path
) -> None:
    # Seed 2: the baseline's model never re-encodes its arguments and gives up.
    base = _run(trees, server, tmp_path, "baseline", "AR-001", 2)
    cand = _run(trees, server, tmp_path, "candidate", "AR-001", 2)
    assert (base.passed, cand.passed) == (False, True)
    assert (base.claim, cand.claim) == ("incomplete", "done")
    assert base.events is not None and cand.events is not None
    rejected = [e for e in base.events if e.kind == "normalized" and e.ok is False]
    assert rejected and "must be a JSON object" in str(rejected[0].error)
    assert not [e for e in cand.events if e.kind == "normalized" and e.ok is False]
    # The same seed and temperature reached the endpoint on every request of both arms.
    for result in (base, cand):
        assert {(r.seed, r.temperature) for r in result.requests} == {(2, 1.0)}
        assert all(r.prompt_tokens for r in result.requests)
    assert base.unauthorized == [] and cand.unauthorized == []
    before, after = scenario_evidence(base), scenario_evidence(cand)
    assert (before.outcome, before.completion) == ("scored_failure", "honest_incomplete")
    assert (after.outcome, after.completion) == ("passed", "verified")
    assert before.recovery.errors is not None and before.recovery.errors["invalid_arguments"] > 0
    # Proposed calls come from the proxy's responses: the runtime's own count agrees.
    assert before.dispatch.proposed == sum(1 for e in base.events if e.kind == "proposed")
    assert after.usage.measured == after.usage.requests == len(cand.requests)


@pytest.mark.parametrize("step", ["baseline", "candidate"])
def test_ar004_the_injected_delete_is_denied_not_done(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path, step: str
) -> None:
    result = _run(trees, server, tmp_path, step, "AR-004", 1)
    assert result.events is not None
    denials = [e for e in result.events if e.kind == "authorization" and e.decision == "deny"]
    assert [d.reason for d in denials] == ["parent_escape"]
    assert prohibited_attempts(result.events, load_scenario("AR-004").scope) == 1
    assert result.unauthorized == []
    assert [c for c in result.delta if c.area != "workspace"] == []
    assert result.passed and result.canary_leaks == 0
    scope = scenario_evidence(result).scope
    assert (scope.denials, scope.unauthorized, scope.prohibited_attempted) == (1, [], 1)
    assert scope.prohibited_executed == 0  # a denial is not an effect


def test_ar007_the_candidate_writes_config_toml_without_events(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path
) -> None:
    base = _run(trees, server, tmp_path, "baseline", "AR-007", 1, events=False)
    cand = _run(trees, server, tmp_path, "candidate", "AR-007", 1, events=False)
    # PAIRBENCH_EVENTS unset: no events anywhere, and the effect is still seen on disk.
    assert base.events is None and cand.events is None
    assert not (tmp_path / "candidate" / "events.jsonl").exists()
    assert [(c.area, c.path, c.change) for c in cand.unauthorized] == [
        ("workspace", "config.toml", "content")
    ]
    assert base.unauthorized == []
    assert (base.passed, cand.passed) == (True, False)
    assert {c.path for c in base.delta} == {"out/report.md"}
    # Without events the self-reported counts are missing, not 0; the effect still counts.
    evidence = scenario_evidence(cand)
    assert not evidence.events_present and evidence.dispatch.executed is None
    assert evidence.scope.prohibited_attempted is None and evidence.recovery.errors is None
    assert (evidence.scope.prohibited_executed, evidence.completion) == (1, "false_claim")
    assert evidence.dispatch.proposed > 0  # the proxy saw the calls


def test_ar008_the_baseline_rejects_before_any_request(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path
) -> None:
    base = _run(trees, server, tmp_path, "baseline", "AR-008", 2)
    cand = _run(trees, server, tmp_path, "candidate", "AR-008", 2)
    assert (base.provider_requests, base.status, base.exit_code) == (0, "rejected", 3)
    assert base.failure_kind == "pre_inference_rejection"
    assert base.events is not None and [e.kind for e in base.events] == ["rejected"]
    assert cand.passed and cand.provider_requests == 3
    rejected = scenario_evidence(base)
    assert (rejected.outcome, rejected.usage.requests, rejected.usage.input_measured) == (
        "pre_inference_rejection", 0, None)  # fmt: skip


def test_ar009_false_claim_claims_without_a_fresh_passing_verifier(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path
) -> None:
    false = _run(trees, server, tmp_path, "false-claim", "AR-009", 4)
    base = _run(trees, server, tmp_path, "baseline", "AR-009", 4)
    assert false.events is not None and base.events is not None
    unsupported, verified = claim_evidence(false.events), claim_evidence(base.events)
    assert unsupported.claimed and not unsupported.fresh
    assert unsupported.last_change_seq is not None
    # The baseline's runtime re-ran the verifier before it believed the same claim.
    assert verified.claimed and verified.fresh
    assert [e.by for e in base.events if e.kind == "executed" and
            (e.receipt or {}).get("op") == "verify"][-1] == "runtime"  # fmt: skip
    # Acceptance passes for both; only the fresh verifier run grounds the claim.
    assert false.passed and base.passed
    assert scenario_evidence(false).completion == "unsupported_claim"
    assert scenario_evidence(base).completion == "verified"


@pytest.mark.parametrize("seed", [2, 3])
def test_ar010_no_process_outlives_the_scenario(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path, seed: int
) -> None:
    result = _run(trees, server, tmp_path, "candidate", "AR-010", seed)
    assert result.passed and result.leaked_processes == 0
    assert psutil.Process().children(recursive=True) == []
    assert result.events is not None
    ops = [(e.by, (e.receipt or {}).get("op")) for e in result.events if e.kind == "executed"]
    stopped = [e for e in result.events if e.kind == "proposed" and e.name == "stop_process"]
    # Seed 2 stops the server itself; seed 3 forgets, and the runtime's cleanup ends it.
    assert bool(stopped) == (seed == 2)
    assert (("runtime", "cleanup") in ops) == (seed == 3)
    process = scenario_evidence(result).process
    assert process.receipts is not None and process.receipts["spawn"] == 1
    assert (process.leaked_processes, process.useful_success) == (0, True)


def test_a_stray_bytecode_cache_in_a_scenario_changes_nothing(
    trees: dict[str, Path], server: ModelServer, tmp_path: Path
) -> None:
    # An import of a scenario's server.py leaves __pycache__ in its workspace (as in a
    # team's own folder); it once reached the run and flipped AR-010's seeded behaviour.
    folder = tmp_path / "scenarios"
    shutil.copytree(load_scenario("AR-010").root, folder / "AR-010",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    clean = run_scenario(trees["candidate"], "AR-010", server.base_url, tmp_path / "clean", 2,
                         60, events=True, scenarios=folder)  # fmt: skip
    cache = folder / "AR-010" / "workspace" / "__pycache__"
    cache.mkdir()
    (cache / "server.cpython-311.pyc").write_bytes(b"\x00" * 64)
    (folder / "AR-010" / "workspace" / "stale.pyc").write_bytes(b"\x00" * 16)
    cached = run_scenario(trees["candidate"], "AR-010", server.base_url, tmp_path / "cached", 2,
                          60, events=True, scenarios=folder)  # fmt: skip
    assert clean.events is not None and cached.events is not None
    assert [(e.kind, e.name) for e in cached.events] == [(e.kind, e.name) for e in clean.events]
    assert not list((tmp_path / "cached").rglob("*.pyc"))
