"""Files a report reads beyond results and transcripts are hashed into the journal as they
are written: a fixture's audit log (what a grader judged the attempt from), edited after
the run, fails ``verify`` naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from helpers.common import cli_here
from pairbench import start_run
from pairbench.freeze import verify_run
from pairbench.studies.mcp_transports import STUDY

pytestmark = pytest.mark.whole_run


def test_an_edited_fixture_audit_log_fails_verify_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "study"
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] == "add-label"]
    data["arms"] = {"local-stdio": data["arms"]["local-stdio"]}
    data["descriptive"] = True
    for key in ("comparisons", "hypotheses", "report"):
        data.pop(key, None)
    data["trials"] = 1
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (root / "experiment.lock.json").unlink()  # a cut-down copy is not the frozen protocol
    run = start_run(path, tmp_path / "runs", run_seed=1)
    assert [r.outcome for r in run.results] == ["passed"], [r.reason for r in run.results]
    assert verify_run(run.run_dir) == []
    (audit,) = sorted((run.run_dir / "fixtures").rglob("audit.jsonl"))
    assert audit.read_text(encoding="utf-8").strip()  # the grader read these calls
    audit.write_text("", encoding="utf-8")  # the operator erases what the agent did
    rel = audit.relative_to(run.run_dir).as_posix()
    done = cli_here("verify", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"recorded: {rel}: expected" in done.stderr, done.stderr
