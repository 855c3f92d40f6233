"""The example's commit trees as bytes, and the ``git fast-import`` stream that stores them.

A tree is a mapping from ``/``-separated path to file bytes (every file mode ``100644``):
read from the package, never from file modes or line endings on the disk, so the same
package writes the same commits on any machine.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pairbench.source import isolated_git
from pairbench.studies.runtime_revision_ab._layout import (
    AUTHOR,
    BRANCH,
    EPOCH,
    MAIN,
    REPO_DATA,
    STEPS,
)

Tree = dict[str, bytes]
_SKIP = ("__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache")


def read_tree(root: Path) -> Tree:
    """Every file under ``root`` (caches that tools leave beside the sources skipped)."""
    tree: Tree = {}
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if any(p in _SKIP for p in parts) or path.suffix == ".pyc" or not path.is_file():
            continue
        tree["/".join(parts)] = path.read_bytes()
    return tree


def apply_patch(tree: Tree, patch: bytes) -> Tree:
    """``tree`` with a unified diff applied by ``git apply`` in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="minirt-tree-") as scratch:
        root = Path(scratch) / "t"
        root.mkdir()
        for path, data in tree.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        isolated_git(["apply", "--whitespace=nowarn", "-"], cwd=root, stdin=patch,
                     what="the example's patch does not apply")  # fmt: skip
        return read_tree(root)


def step_trees() -> dict[str, Tree]:
    """The tree of every step of ``STEPS``, by name."""
    trees: dict[str, Tree] = {}
    for step in STEPS:
        if step.parent is None:
            trees[step.name] = read_tree(REPO_DATA / "baseline")
        else:
            assert step.patch is not None
            patch = (REPO_DATA / "patches" / step.patch).read_bytes()
            trees[step.name] = apply_patch(trees[step.parent], patch)
    return trees


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def fast_import_stream(trees: dict[str, Tree]) -> bytes:
    """One stream with every step as a commit on the tag of its name, and ``main``.

    ``deleteall`` then every file: each commit's tree is exactly its mapping, whatever the
    parent held.
    """
    marks = {step.name: index + 1 for index, step in enumerate(STEPS)}
    out: list[bytes] = []
    for index, step in enumerate(STEPS):
        stamp = f"{AUTHOR} {EPOCH + index * 3600} +0000".encode()
        out.append(b"commit refs/tags/%s\nmark :%d\n" % (step.name.encode(), marks[step.name]))
        out.append(b"author " + stamp + b"\ncommitter " + stamp + b"\n")
        out.append(_data(step.message.encode("utf-8") + b"\n"))
        if step.parent is not None:
            out.append(b"from :%d\n" % marks[step.parent])
        out.append(b"deleteall\n")
        for path in sorted(trees[step.name], key=lambda p: p.encode("utf-8")):
            out.append(b"M 100644 inline " + path.encode("utf-8") + b"\n")
            out.append(_data(trees[step.name][path]))
        out.append(b"\n")
    out.append(b"reset refs/heads/%s\nfrom :%d\n\n" % (BRANCH.encode(), marks[MAIN]))
    return b"".join(out)
