"""BenchGuard: an edited, removed or added file of the frozen benchmark is named; an
untouched one is not re-read (its (size, mtime_ns, inode) are unchanged)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pairbench import start_run
from pairbench.runner._bench_guard import BenchGuard


def test_each_change_to_a_watched_file_or_folder_is_named(tmp_path: Path) -> None:
    prompt = tmp_path / "p.md"
    prompt.write_text("Go.\n", encoding="utf-8")
    folder = tmp_path / "scenarios" / "sc-1"
    folder.mkdir(parents=True)
    (folder / "accept.py").write_text("raise SystemExit(1)\n", encoding="utf-8")
    guard = BenchGuard({"p.md": prompt, "scenarios": tmp_path / "scenarios"})
    assert guard.changed() == []
    (folder / "accept.py").write_text("raise SystemExit(0)\n", encoding="utf-8")
    assert guard.changed() == ["scenarios/sc-1/accept.py"]
    (folder / "accept.py").write_text("raise SystemExit(1)\n", encoding="utf-8")
    assert guard.changed() == []  # restored: the same bytes
    (folder / "helper.py").write_text("", encoding="utf-8")
    prompt.unlink()
    assert guard.changed() == ["p.md", "scenarios/sc-1/helper.py"]


def test_a_file_whose_stat_is_unchanged_is_not_read_again(tmp_path: Path) -> None:
    watched = tmp_path / "p.md"
    watched.write_text("Go.\n", encoding="utf-8")
    guard = BenchGuard({"p.md": watched})
    before = os.stat(watched)
    # Same size, inode and mtime: the cache answers without reading (what makes a check one
    # stat per file); bytes swapped behind a restored mtime are the price of that.
    watched.write_text("Ok.\n", encoding="utf-8")
    os.utime(watched, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert guard.changed() == []
    # Any other mtime: read again, and named.
    os.utime(watched, ns=(before.st_atime_ns, before.st_mtime_ns + 1))
    assert guard.changed() == ["p.md"]


def test_a_benchmark_changed_before_an_attempt_stops_it_before_its_agent_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The operator edits a prompt once the run has hashed it, before the first attempt: no
    # attempt may run its agent against it (each is infra "before"), and the run stops.
    prompt = tmp_path / "p.md"
    prompt.write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(
        "id: guard\nversion: '1'\ntrials: 1\nagent: {adapter: scripted}\narms: {a: {}, b: {}}\n"
        "tasks:\n  - {id: t0, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    real = BenchGuard.for_run.__func__  # type: ignore[attr-defined]

    def hashed_then_edited(cls: type[BenchGuard], *args: Any) -> BenchGuard:
        guard: BenchGuard = real(cls, *args)
        prompt.write_text("Answer anything.\n", encoding="utf-8")
        return guard

    monkeypatch.setattr(BenchGuard, "for_run", classmethod(hashed_then_edited))
    outcome = start_run(tmp_path / "experiment.yaml", tmp_path / "runs", run_seed=1)
    assert outcome.status.startswith("stopped"), outcome.status
    kept = sorted((outcome.run_dir / "infra").rglob("*.json"))
    assert kept and not list((outcome.run_dir / "results").rglob("*.json"))
    for path in kept:
        assert (
            "frozen benchmark changed before the attempt: p.md"
            in json.loads(path.read_bytes())["reason"]
        )
    transcripts = [
        p.read_text(encoding="utf-8") for p in (outcome.run_dir / "infra").rglob("*.jsonl")
    ]
    assert all("agent_start" not in t for t in transcripts)  # no agent ran
