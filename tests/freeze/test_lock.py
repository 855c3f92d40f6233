"""The lock: reproducible bytes, every named file and code package, verified and refused."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.common import cli, study_copy
from pairbench import _registry, start_run
from pairbench._errors import RunRefused
from pairbench.freeze import build_lock, verify_experiment, write_lock
from pairbench.spec import load_experiment
from pairbench.studies.mcp_transports import STUDY

GRADER = "from pairbench import Grade\n\ndef grade(inp):\n    return Grade(outcome='passed')\n"


def _install_grader_plugin(tmp_path: Path) -> Path:
    """A third-party grader package on sys.path with its entry point (a real dist-info)."""
    site = tmp_path / "site"
    (site / "pb_grader_plugin").mkdir(parents=True)
    (site / "pb_grader_plugin" / "__init__.py").write_text(GRADER, encoding="utf-8")
    info = site / "pb_grader_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pb-grader-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[pairbench.graders]\nlocal-pass = pb_grader_plugin:grade\n"
    )
    return site


@pytest.fixture
def experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    site = _install_grader_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    # Each test installs the plugin afresh in its own folder: forget any earlier import.
    monkeypatch.delitem(sys.modules, "pb_grader_plugin", raising=False)
    _registry.refresh()
    root = tmp_path / "exp"
    (root / "prompts").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "protocol.md").write_text("# Protocol\nFrozen before the run.\n", encoding="utf-8")
    (root / "prompts" / "q.md").write_text("Answer ok.\n", encoding="utf-8")
    (root / "data" / "cases.csv").write_text("id,answer\n1,ok\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(
        """id: locked
version: "1"
protocol: protocol.md
files: [data/cases.csv]
trials: 1
agent: {adapter: command, settings: {command: [python3, -c, "print('ok')"], stdin: none}}
arms: {a: {}, b: {}}
tasks:
  - {id: cal, prompt: prompts/q.md, grader: {name: local-pass}}
  - {id: held, prompt: prompts/q.md, grader: {name: local-pass}, case_set: held-out}
""",
        encoding="utf-8",
    )
    yield root / "experiment.yaml"
    _registry.refresh()


@pytest.mark.whole_run  # it starts the study's servers four times (their identity is locked)
def test_freezing_twice_on_two_checkouts_gives_the_same_bytes(tmp_path: Path) -> None:
    one = study_copy(tmp_path / "one")
    two = study_copy(tmp_path / "two")
    (one.parent / "experiment.lock.json").unlink()
    (two.parent / "experiment.lock.json").unlink()
    lock_one, hashes_one, _ = write_lock(load_experiment(one))
    lock_two, hashes_two, _ = write_lock(load_experiment(two))
    assert lock_one.read_bytes() == lock_two.read_bytes()
    assert hashes_one.read_bytes() == hashes_two.read_bytes()
    text = lock_one.read_text(encoding="utf-8")
    assert str(tmp_path) not in text and "/root" not in text  # no absolute path, no machine


def test_the_builtin_study_ships_a_lock_that_matches_its_files() -> None:
    mismatches = verify_experiment(STUDY.experiment_path)
    # A change of pairbench elsewhere (the harness) alone must not fail this test.
    assert [m for m in mismatches if m.kind != "harness"] == [], mismatches


@pytest.mark.parametrize(
    ("rel", "kind"),
    [("protocol.md", "file"), ("prompts/q.md", "file"), ("data/cases.csv", "file")],
)
def test_one_changed_byte_fails_verify_and_names_the_file(
    experiment: Path, rel: str, kind: str
) -> None:
    write_lock(load_experiment(experiment))
    assert verify_experiment(experiment) == []
    target = experiment.parent / rel
    data = bytearray(target.read_bytes())
    data[0] ^= 0x01
    target.write_bytes(bytes(data))
    mismatches = verify_experiment(experiment)
    assert [(m.kind, m.path) for m in mismatches] == [(kind, rel)]
    with pytest.raises(RunRefused, match=rel):
        start_run(experiment, experiment.parent / "runs", case_set="held-out")


def test_a_changed_grader_fails_verify_and_held_out_refuses(experiment: Path) -> None:
    write_lock(load_experiment(experiment))
    grader = experiment.parents[1] / "site" / "pb_grader_plugin" / "__init__.py"
    grader.write_text(GRADER.replace("passed", "failed"), encoding="utf-8")
    mismatches = verify_experiment(experiment)
    assert [m.kind for m in mismatches] == ["code"]
    assert "graders:local-pass" in mismatches[0].path
    with pytest.raises(RunRefused, match="graders:local-pass"):
        start_run(experiment, experiment.parent / "runs", case_set="held-out")


def test_held_out_runs_once_per_lock_and_never_by_default(experiment: Path) -> None:
    runs = experiment.parent / "runs"
    with pytest.raises(RunRefused, match=r"has no experiment\.lock\.json; freeze it first"):
        start_run(experiment, runs, case_set="held-out")
    write_lock(load_experiment(experiment))
    calibration = start_run(experiment, runs, run_seed=1)
    assert {r.task for r in calibration.results} == {"cal"}  # held-out never by default
    held = start_run(experiment, runs, run_seed=1, case_set="held-out")
    assert {r.task for r in held.results} == {"held"}
    info = json.loads((held.run_dir / "run.json").read_text())
    assert info["case_set"] == "held-out" and info["lock_verified"] is True
    assert info["sitting"] == 1
    with pytest.raises(RunRefused, match="once per lock"):
        start_run(experiment, runs, run_seed=1, case_set="held-out")
    again = start_run(experiment, runs, run_seed=1, case_set="held-out", new_sitting=True)
    assert again.run_id != held.run_id
    assert json.loads((again.run_dir / "run.json").read_text())["sitting"] == 2


def test_a_changed_harness_is_named_and_refused_unless_accepted(experiment: Path) -> None:
    lock_file, _, lock = write_lock(load_experiment(experiment))
    stale = json.loads(lock_file.read_text())
    stale["harness"]["version"] = "0.0.1"
    lock_file.write_text(json.dumps(stale, indent=2, sort_keys=True) + "\n")
    mismatches = verify_experiment(experiment)
    assert [m.kind for m in mismatches] == ["harness"]
    assert "harness changed" in str(mismatches[0])
    runs = experiment.parent / "runs"
    with pytest.raises(RunRefused, match="accept-harness-change"):
        start_run(experiment, runs, case_set="held-out")
    accepted = start_run(experiment, runs, case_set="held-out", accept_harness_change=True)
    info = json.loads((accepted.run_dir / "run.json").read_text())
    assert info["accepted_harness_change"]["expected"].startswith("0.0.1")
    assert lock.harness.version in info["accepted_harness_change"]["found"]


def test_verify_cli_exits_non_zero_and_lists_differences(experiment: Path) -> None:
    env = {"PYTHONPATH": str(experiment.parents[1] / "site"), "PATH": "/usr/bin:/bin"}
    frozen = cli("freeze", "experiment.yaml", cwd=experiment.parent, env=env)
    assert frozen.returncode == 0, frozen.stderr
    assert cli("verify", "experiment.yaml", cwd=experiment.parent, env=env).returncode == 0
    (experiment.parent / "protocol.md").write_text("# Protocol\nEdited after results.\n")
    failed = cli("verify", "experiment.yaml", cwd=experiment.parent, env=env)
    assert failed.returncode == 1
    assert "file: protocol.md: expected" in failed.stderr


def test_lock_has_no_timestamp_and_names_every_file(experiment: Path) -> None:
    lock = build_lock(load_experiment(experiment))
    assert [f.path for f in lock.files] == ["data/cases.csv", "prompts/q.md", "protocol.md"]
    assert {c.name for c in lock.code} == {"graders:local-pass"}
    assert "at" not in lock.model_dump() and "created" not in lock.to_bytes().decode()


def test_init_copies_the_lock_and_it_still_verifies(tmp_path: Path) -> None:
    target = tmp_path / "copy"
    shutil.copytree(STUDY.root, target, ignore=shutil.ignore_patterns("__pycache__"))
    mismatches = verify_experiment(target / "experiment.yaml")
    assert [m for m in mismatches if m.kind != "harness"] == []
