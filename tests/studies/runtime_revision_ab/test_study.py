"""The registered study end to end: ``pairbench init --from runtime-revision-ab`` writes the
repository its experiment pins, and a screening pair of the minirt adapter against the
scripted model shows the protocol's cases in the stored results."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from pairbench import start_run
from pairbench.cli import app
from pairbench.freeze._verify_run import verify_run
from pairbench.source import isolated_git
from pairbench.store import TrialResult
from pairbench.studies.runtime_revision_ab import PINNED, ModelServer, serve_model

pytestmark = pytest.mark.whole_run

TASKS = ("ar-001", "ar-004", "ar-007", "ar-008")
SEED = 2
"""A run seed whose screening pair draws a baseline AR-001 that gives up (checked below)."""


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with serve_model(_port()) as running:
        yield running


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, server: ModelServer) -> Path:
    """The study as ``init`` copies it, cut to four scenarios and pointed at ``server``."""
    folder = tmp_path_factory.mktemp("study") / "rab"
    result = CliRunner().invoke(app, ["init", str(folder), "--from", "runtime-revision-ab"])
    assert result.exit_code == 0, result.output
    assert "--stage screening" in result.output
    yaml = YAML()
    path = folder / "experiment.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in TASKS]
    data["proxy"]["upstream"] = server.base_url.removesuffix("/v1")
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    return path


def _results(run_dir: Path) -> dict[tuple[str, str], TrialResult]:
    found = {}
    for file in (run_dir / "results").rglob("*.json"):
        result = TrialResult.model_validate_json(file.read_text(encoding="utf-8"))
        found[result.arm, result.task] = result
    return found


def _evidence(result: TrialResult) -> dict[str, object]:
    assert result.grade is not None
    evidence = result.grade.details["scenario"]
    assert isinstance(evidence, dict)
    return evidence


@pytest.fixture(scope="module")
def screening(study: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = start_run(study, tmp_path_factory.mktemp("runs"), run_seed=SEED, stage="screening")
    assert run.complete
    return run.run_dir


def test_init_writes_the_repository_the_experiment_pins(study: Path) -> None:
    repo = study.parent / "minirt"
    for step, sha in PINNED.items():
        found = isolated_git(["rev-parse", f"refs/tags/{step}^{{commit}}"], cwd=repo)
        assert found.decode().strip() == sha
    text = study.read_text(encoding="utf-8")
    assert PINNED["baseline"] in text and PINNED["candidate"] in text


def test_screening_shows_the_fix_the_denial_the_lure_and_the_rejection(screening: Path) -> None:
    results = _results(screening)
    assert len(results) == 2 * len(TASKS)
    # AR-001 favours the candidate: its fix decodes the arguments the baseline refuses.
    assert (results["baseline", "ar-001"].outcome, results["candidate", "ar-001"].outcome) == (
        "failed", "passed")  # fmt: skip
    # AR-004: the injected delete is denied once and changes nothing.
    for arm in ("baseline", "candidate"):
        scope = _evidence(results[arm, "ar-004"])["scope"]
        assert isinstance(scope, dict)
        assert (scope["denials"], scope["unauthorized"]) == (1, [])
    # AR-007: the candidate's regression writes config.toml (an executed prohibited op).
    lure = _evidence(results["candidate", "ar-007"])
    assert lure["scope"] == {**lure["scope"], "unauthorized": ["workspace:config.toml (content)"],  # type: ignore[dict-item]
                             "prohibited_executed": 1}  # fmt: skip
    # AR-008: the baseline rejects the file name before any provider request.
    assert _evidence(results["baseline", "ar-008"])["outcome"] == "pre_inference_rejection"
    assert results["candidate", "ar-008"].outcome == "passed"


def test_the_run_verifies_and_leaves_no_process(screening: Path) -> None:
    assert verify_run(screening) == []
    assert psutil.Process().children(recursive=True) == []
    info = json.loads((screening / "run.json").read_text(encoding="utf-8"))
    assert info["stage"] == "screening"
    assert info["identities"]["model_endpoint"]["build_info"].startswith("pairbench-scripted")
    treatment = info["identities"]["treatment"]
    assert "minirt/_args.py" in json.dumps(treatment) and "minirt/_paths.py" in json.dumps(
        treatment)  # fmt: skip


def test_with_the_fix_reverted_ar001_no_longer_favours_the_candidate(
    study: Path, tmp_path: Path
) -> None:
    """A commit on top of the candidate restores the baseline's ``minirt/_args.py``."""
    repo = study.parent / "minirt"
    isolated_git(["checkout", "-q", "--detach", PINNED["candidate"]], cwd=repo)
    isolated_git(["checkout", PINNED["baseline"], "--", "minirt/_args.py"], cwd=repo)
    who = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", *who, "commit", "-qm", "revert the fix"], cwd=repo, check=True)
    reverted = isolated_git(["rev-parse", "HEAD"], cwd=repo).decode().strip()
    isolated_git(["checkout", "-q", "main"], cwd=repo)
    yaml = YAML()
    data = yaml.load(study.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "ar-001"]
    data["arms"]["candidate"]["source"]["commit"] = reverted
    path = study.parent / "reverted.yaml"  # beside the study: its prompt and protocol
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    run = start_run(path, tmp_path / "runs", run_seed=SEED, stage="screening")
    results = _results(run.run_dir)
    assert results["baseline", "ar-001"].outcome == "failed"
    assert results["candidate", "ar-001"].outcome == "failed"
