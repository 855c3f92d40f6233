"""The ledger beside the lock, played by a motivated operator: a held-out set that sits once
per protocol version whatever the runs folder, re-freezes after a sitting, edited, truncated
and deleted ledgers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench._errors import RunRefused
from pairbench.freeze._hashing import LEDGER_NAME
from pairbench.freeze._ledger import read_ledger
from pairbench.runner._gate import Gate
from pairbench.runner._register import register_run
from pairbench.spec import load_experiment


def _experiment(root: Path) -> Path:
    """Two tasks, one held out, the simulated agent (instant, seeded)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "q.md").write_text("Answer.\n", encoding="utf-8")
    agent = {"adapter": "simulated", "settings": {"success": {"a": 0.5, "b": 0.7}}}
    (root / "experiment.yaml").write_text(
        "id: ledgered\nversion: '1.0.0'\ntrials: 1\n"
        f"agent: {json.dumps(agent)}\narms: {{a: {{}}, b: {{}}}}\ntasks:\n"
        "  - {id: cal, prompt: q.md, grader: {name: exact-answer, args: {expect: PASS}}}\n"
        "  - {id: held, prompt: q.md, grader: {name: exact-answer, args: {expect: PASS}}, "
        "case_set: held-out}\n",
        encoding="utf-8",
    )
    return root / "experiment.yaml"


def _freeze(root: Path, *more: str) -> None:
    done = cli_here("freeze", "experiment.yaml", "--no-servers", *more, cwd=root)
    assert done.returncode == 0, done.stderr


def _held_out(root: Path, runs: str, *more: str) -> tuple[int, str]:
    done = cli_here(
        "run", "experiment.yaml", "--case-set", "held-out", "--runs-dir", runs, *more, cwd=root
    )
    return done.returncode, done.stderr


def _kinds(root: Path) -> list[str]:
    return [e.kind for e in read_ledger(root / LEDGER_NAME)]


def test_a_held_out_set_sits_once_whatever_the_runs_folder(tmp_path: Path) -> None:
    _experiment(tmp_path)
    _freeze(tmp_path)
    assert _held_out(tmp_path, "runs-a")[0] == 0
    code, err = _held_out(tmp_path, "runs-b")  # another folder: no fresh "sitting 1"
    assert code == 3
    assert "already sat under protocol version 1.0.0" in err
    assert "runs-a" in err and "--new-sitting" in err
    assert not (tmp_path / "runs-b").exists()
    assert _kinds(tmp_path) == ["freeze", "run"]

    code, err = _held_out(tmp_path, "runs-b", "--new-sitting")
    assert code == 0, err
    [second] = (tmp_path / "runs-b").iterdir()
    info = json.loads((second / "run.json").read_text(encoding="utf-8"))
    assert info["sitting"] == 2 and info["ledger"]["new_sitting"] is True
    report = (second / "report.md").read_text(encoding="utf-8")
    assert "held-out (sitting 2, a new sitting asked for with --new-sitting)" in report
    assert "protocol version 1.0.0" in report


def test_re_freezing_after_a_sitting_needs_a_new_version(tmp_path: Path) -> None:
    _experiment(tmp_path)
    _freeze(tmp_path)
    _freeze(tmp_path)  # the same lock again before any sitting: nothing to record
    assert _kinds(tmp_path) == ["freeze"]
    assert _held_out(tmp_path, "runs")[0] == 0
    (tmp_path / "q.md").write_text("Answer, tuned on the held-out results.\n")
    refused = cli_here("freeze", "experiment.yaml", "--no-servers", cwd=tmp_path)
    assert refused.returncode == 3
    assert "already sat under protocol version 1.0.0" in refused.stderr
    assert "--new-version X.Y.Z" in refused.stderr
    assert _kinds(tmp_path) == ["freeze", "run"]

    reused = cli_here("freeze", "experiment.yaml", "--no-servers", "--new-version", "1.0.0",
                      cwd=tmp_path)  # fmt: skip
    assert reused.returncode == 3 and "already frozen" in reused.stderr
    _freeze(tmp_path, "--new-version", "1.0.1")
    lock = json.loads((tmp_path / "experiment.lock.json").read_text(encoding="utf-8"))
    assert lock["protocol_version"] == "1.0.1" and lock["ledger"] == LEDGER_NAME
    code, err = _held_out(tmp_path, "other-runs")  # the new version sits once
    assert code == 0, err
    [run] = (tmp_path / "other-runs").iterdir()
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "protocol version 1.0.1" in report and "held-out (sitting 1)" in report


def test_an_edited_ledger_line_is_refused_with_the_fix(tmp_path: Path) -> None:
    _experiment(tmp_path)
    _freeze(tmp_path)
    assert _held_out(tmp_path, "runs")[0] == 0
    path = tmp_path / LEDGER_NAME
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    # The operator erases the sitting: its case set becomes calibration. The last line is
    # chained by no later one; the run folder the ledger names anchors it.
    lines[1] = lines[1].replace(b'"case_set":"held-out"', b'"case_set":"calibration"')
    path.write_bytes(b"".join(lines))
    code, err = _held_out(tmp_path, "runs2")
    assert code == 3
    assert "has no line 2 as run" in err and "lost or changed lines" in err
    assert "restore experiment.ledger.jsonl from version control" in err
    assert not (tmp_path / "runs2").exists()

    path.write_bytes(whole)
    assert cli_here("run", "experiment.yaml", cwd=tmp_path).returncode == 0  # line 3
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"case_set":"held-out"', b'"case_set":"calibration"')
    path.write_bytes(b"".join(lines))  # a middle line: the next one no longer chains
    code, err = _held_out(tmp_path, "runs2")
    assert code == 3
    assert f"{LEDGER_NAME}: line 3 does not follow the line before it" in err
    assert "no longer chains" in err and not (tmp_path / "runs2").exists()


def test_a_truncated_or_deleted_ledger_is_refused(tmp_path: Path) -> None:
    _experiment(tmp_path)
    _freeze(tmp_path)
    assert _held_out(tmp_path, "runs")[0] == 0
    path = tmp_path / LEDGER_NAME
    whole = path.read_bytes()
    path.write_bytes(whole.splitlines(keepends=True)[0])  # the sitting's line dropped
    code, err = _held_out(tmp_path, "runs")
    assert code == 3
    assert "has no line 2 as run" in err and "lost or changed lines" in err
    path.write_bytes(whole[:-5])  # a torn last line
    assert "is torn" in _held_out(tmp_path, "runs2")[1]

    path.unlink()  # the lock names its ledger: a deleted one is not a fresh start
    code, err = _held_out(tmp_path, "runs2")
    assert code == 3 and "is missing, but the lock beside it was frozen with a ledger" in err
    calibration = cli_here("run", "experiment.yaml", "--runs-dir", "runs2", cwd=tmp_path)
    assert calibration.returncode == 3 and "is missing" in calibration.stderr
    refreeze = cli_here("freeze", "experiment.yaml", "--no-servers", cwd=tmp_path)
    assert refreeze.returncode == 3 and "is missing" in refreeze.stderr
    assert not path.exists() and not (tmp_path / "runs2").exists()


def test_a_built_in_study_in_place_keeps_no_ledger_and_sits_no_held_out_set(
    tmp_path: Path,
) -> None:
    # Built-in studies run in place (pairbench demo) or frozen in place (make locks) write
    # nothing inside the package; a held-out sitting there could not be counted: refused.
    from pairbench.freeze._ledger import shipped
    from pairbench.studies.attribution_reliability import STUDY

    assert shipped(STUDY.root) and not shipped(tmp_path)
    loaded = load_experiment(STUDY.root / "experiment.yaml")
    gate = Gate(
        case_set="held-out", lock=None, lock_verified=True,  # type: ignore[arg-type]
        accepted_harness_change=None, sitting=0,
    )  # fmt: skip
    with pytest.raises(RunRefused, match="built-in study inside pairbench, which keeps no ledger"):
        register_run(None, loaded, gate, run_id="x", runs_dir=tmp_path, stage=None, plan=None,
                     new_sitting=False, build=lambda g: pytest.fail("built"))  # fmt: skip
    assert not (STUDY.root / "experiment.ledger.jsonl").exists()
