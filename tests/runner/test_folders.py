"""Folders made ahead of an attempt's slot: made once where attempts share them, no hop when
there is nothing to make."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pairbench.runner._context import RunContext
from pairbench.runner._folders import AheadFolders
from pairbench.schedule._plan import TrialKey
from pairbench.spec._load import load_experiment
from pairbench.store._run_dir import RunDir


def _context(tmp_path: Path, adapter: str) -> RunContext:
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    settings = {"command": ["true"]} if adapter == "command" else {}
    agent = {"adapter": adapter, "settings": settings}
    (tmp_path / "experiment.yaml").write_text(
        f"id: ahead\nversion: '1'\ntrials: 2\nagent: {json.dumps(agent)}\n"
        "arms: {a: {}, b: {}}\ntasks:\n"
        "  - {id: t0, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    loaded = load_experiment(tmp_path / "experiment.yaml")
    run_dir = RunDir(tmp_path / "runs" / "r")
    return RunContext(loaded=loaded, run_dir=run_dir, run_id="r", canaries=[])


def test_an_in_process_attempt_has_nothing_to_make_once_its_transcript_folder_is_made(
    tmp_path: Path,
) -> None:
    rc = _context(tmp_path, "scripted")
    ahead = AheadFolders(rc)
    first, second = TrialKey(arm="a", task="t0", trial=0), TrialKey(arm="a", task="t0", trial=1)
    assert ahead.needed(first)
    ahead.premake(first, 1)
    assert rc.run_dir.transcript_path(first).parent.is_dir()
    # The arm's and task's folder is made: the next attempts there need no thread hop...
    assert not ahead.needed(first) and not ahead.needed(second)
    # ...another arm's folder is not made yet, and no work folder is made for in-process agents.
    assert ahead.needed(TrialKey(arm="b", task="t0", trial=0))
    assert not (rc.run_dir.path / "work").exists()


def test_a_vanished_transcript_folder_is_made_again_by_the_attempt(tmp_path: Path) -> None:
    from pairbench.store._transcript import Transcript

    rc = _context(tmp_path, "scripted")
    ahead = AheadFolders(rc)
    key = TrialKey(arm="a", task="t0", trial=0)
    ahead.premake(key, 1)
    shutil.rmtree(rc.run_dir.transcript_path(key).parent)
    assert not ahead.needed(key)  # it believes the folder made...
    transcript = Transcript(rc.run_dir.working_transcript(key, 1))  # ...the transcript makes it
    transcript.emit("final", text="ok")
    transcript.close()
    assert rc.run_dir.working_transcript(key, 1).is_file()


def test_an_attempt_with_a_work_folder_always_has_its_home_made_ahead(tmp_path: Path) -> None:
    rc = _context(tmp_path, "command")  # a subprocess agent: a work folder per attempt
    ahead = AheadFolders(rc)
    key = TrialKey(arm="a", task="t0", trial=0)
    ahead.premake(key, 1)
    assert ahead.needed(key)  # a new work folder per attempt
    ahead.premake(key, 2)
    for attempt in (1, 2):
        rel = rc.run_dir.fixture_rel(key, attempt)
        assert (rc.run_dir.path / "work" / rel / "home").is_dir()
