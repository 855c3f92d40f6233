"""The path policy: file tools reach only the workspace, never a denied root."""

from __future__ import annotations

import os
from pathlib import Path


class PathDenied(Exception):
    """A path the policy refuses; ``reason`` is a short stable word."""

    def __init__(self, reason: str, path: str) -> None:
        self.reason = reason
        super().__init__(f"path {path!r} denied: {reason}")


class PathPolicy:
    """Resolves model-given paths inside ``workspace``.

    Refused: absolute paths, any ``..`` part, non-ASCII names, and anything that lands
    outside the workspace or inside a denied root once symlinks are followed.
    """

    def __init__(self, workspace: Path, denied: list[Path]) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.denied = [Path(os.path.realpath(d)) for d in denied]

    def resolve(self, raw: str) -> tuple[str, Path]:
        """``(relative path, absolute path)`` of ``raw``, or ``PathDenied``."""
        text = raw.replace("\\", "/")
        if not text or "\0" in text:
            raise PathDenied("empty_or_nul", raw)
        if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            raise PathDenied("absolute_path", raw)
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise PathDenied("parent_escape", raw)
        if not all(p.isascii() for p in parts):
            raise PathDenied("non_ascii", raw)
        relative = "/".join(parts) or "."
        return relative, self._inside(relative, raw)

    def _inside(self, relative: str, raw: str) -> Path:
        target = self.workspace / relative
        real = Path(os.path.realpath(target))
        if real != self.workspace and self.workspace not in real.parents:
            raise PathDenied("outside_workspace", raw)
        for root in self.denied:
            if real == root or root in real.parents:
                raise PathDenied("denied_root", raw)
        return target


def unsupported_names(workspace: Path) -> list[str]:
    """Workspace paths this policy could never address (non-ASCII names), sorted."""
    found: list[str] = []
    for path in sorted(workspace.rglob("*")):
        relative = path.relative_to(workspace).as_posix()
        if not relative.isascii():
            found.append(relative)
    return found
