"""Walking and removing what a subject wrote: links never followed, any depth, any name."""

from __future__ import annotations

import os
from pathlib import Path

from pairbench.store._walk import display_name, remove_tree, walk_tree


def _nest(root: Path, depth: int) -> Path:
    path = root
    for _ in range(depth):  # one mkdir at a time: os.makedirs itself recurses per level
        path = path / "d"
        path.mkdir()
    return path


def test_links_are_entries_never_followed(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "loop").symlink_to("loop")  # a link to itself
    (work / "a").symlink_to("b")
    (work / "b").symlink_to("a")
    (work / "root").symlink_to("/")
    (work / "f.txt").write_bytes(b"12345")
    found = {e.rel: (e.kind, e.size) for e in walk_tree(work)}
    assert found == {
        "a": ("symlink", 0),
        "b": ("symlink", 0),
        "f.txt": ("file", 5),
        "loop": ("symlink", 0),
        "root": ("symlink", 0),
    }
    assert list(walk_tree(work / "root")) == []  # a link given as the folder: not walked
    remove_tree(work)
    assert not work.exists() and Path("/").is_dir()


def test_a_thousand_nested_folders_are_walked_and_removed(tmp_path: Path) -> None:
    (tmp_path / "w").mkdir()
    deepest = _nest(tmp_path / "w", 1000)
    (deepest / "end.txt").write_bytes(b"x")
    [entry] = list(walk_tree(tmp_path / "w"))
    assert entry.rel == "d/" * 1000 + "end.txt" and entry.kind == "file"
    deepest.chmod(0o500)  # locked by the agent: the harness's user opens it again
    remove_tree(tmp_path / "w")
    assert not (tmp_path / "w").exists()


def test_odd_names_are_walked_and_shown_escaped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    odd = os.fsdecode(b"bad-\xff-name")
    (work / odd).write_bytes(b"")
    (work / "two\nlines").write_bytes(b"")
    rels = sorted(e.rel for e in walk_tree(work))
    assert rels == sorted([odd, "two\nlines"])
    assert display_name(odd) == "bad-\\xff-name"
    assert display_name("two\nlines") == "two\\nlines"
    assert display_name("plain name.txt") == "plain name.txt"
