"""BenchGuard: an edited, removed or added file of the frozen benchmark is named; an
untouched one is not re-read (its (size, mtime_ns, inode) are unchanged)."""

from __future__ import annotations

import os
from pathlib import Path

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
