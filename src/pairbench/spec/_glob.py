"""Path globs with the meaning of git's ``:(glob)`` pathspec magic, compiled to regexes.

Written here rather than taken from ``pathspec`` (not a dependency of pairbench), and kept to
git's own pathspec semantics so ``git ls-files ':(glob)PATTERN'`` is an oracle in the tests:

- matching is on the UTF-8 bytes, as git's is (``?`` is one byte, so not ``é``);
- a pattern is anchored at the repository root (``*.py`` is top-level files only);
- ``*`` matches within one path segment, ``?`` one character, ``[...]`` a class
  (``[!...]`` or ``[^...]`` negated), ``\\x`` a literal ``x``;
- ``**`` as a whole segment spans zero or more folders (``**/x``, ``a/**/x``, ``a/**``);
- a pattern without wildcards that names a folder matches everything under it
  (``minirt`` == ``minirt/**``); one with wildcards matches whole paths only, as in git
  (``minirt/t*`` does not take ``minirt/tests/x.py``: write ``minirt/t*/**`` too).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence


@functools.lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regex of one pattern; ``ValueError`` naming it when it cannot be a path glob.

    >>> bool(compile_glob("minirt/**").fullmatch("minirt/a/b.py"))
    True
    >>> bool(compile_glob("*.toml").fullmatch("sub/pyproject.toml"))
    False
    """
    problem = _problem(pattern)
    if problem:
        raise ValueError(f"path pattern {pattern!r}: {problem}")
    segments = _bytes(pattern).rstrip("/").split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            # A last "**" takes everything below ("a/**"); "**/" elsewhere is 0+ folders.
            out.append(".*" if last else "(?:.*/)?")
            continue
        out.append(_segment(segment) + ("" if last else "/"))
    # git's rule: only a pattern without wildcards also names a folder, and all below it.
    suffix = "" if _has_wildcard(pattern) else "(?:/.*)?"
    return re.compile("".join(out) + suffix, re.DOTALL)


def _has_wildcard(pattern: str) -> bool:
    return re.search(r"(?<!\\)[*?\[]", pattern.replace("\\\\", "")) is not None


def _problem(pattern: str) -> str | None:
    if not pattern.strip("/"):
        return "empty"
    if pattern.startswith("/"):
        return "absolute; write it relative to the repository root"
    if pattern.startswith("!"):
        return "negation is not supported; put the path in exclude"
    if any(part in (".", "..") for part in pattern.split("/")):
        return "'.' and '..' segments are not allowed"
    if pattern.endswith("\\") and not pattern.endswith("\\\\"):
        return "ends in a lone backslash"
    if pattern.endswith("/") and _has_wildcard(pattern):
        return "a pattern with wildcards matches files, never a folder: drop the trailing '/'"
    return None


def _segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1  # "a**b" is "a*b", as in git's wildmatch
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        elif char == "[":
            end, klass = _klass(segment, i)
            if klass is None:
                out.append(re.escape(char))  # an unclosed "[" is a literal, as in git
            else:
                out.append(klass)
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _klass(segment: str, start: int) -> tuple[int, str | None]:
    """The regex class for ``segment[start] == "["`` and the index of its ``]``."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    i += negate
    body: list[str] = []
    while i < len(segment) and (segment[i] != "]" or not body):
        char = segment[i]
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
        elif char == "-" and body and i + 1 < len(segment) and segment[i + 1] != "]":
            body.append("-")  # a range between its neighbours
            i += 1
            continue
        body.append(re.escape(char) if char in "\\^[]-" else char)
        i += 1
    if i >= len(segment):
        return start, None
    return i, f"(?!/)[{'^' if negate else ''}{''.join(body)}]"


class PathFilter:
    """``include`` minus ``exclude``: which repository paths are selected.

    >>> selected = PathFilter(["minirt/**", "pyproject.toml"], ["minirt/tests/**"])
    >>> [p for p in ["minirt/a.py", "minirt/tests/t.py", "pyproject.toml"] if selected(p)]
    ['minirt/a.py', 'pyproject.toml']
    """

    def __init__(self, include: Sequence[str], exclude: Sequence[str] = ()) -> None:
        self._include = [compile_glob(p) for p in include]
        self._exclude = [compile_glob(p) for p in exclude]

    def __call__(self, path: str) -> bool:
        raw = _bytes(path)
        return any(r.fullmatch(raw) for r in self._include) and not any(
            r.fullmatch(raw) for r in self._exclude
        )


def _bytes(text: str) -> str:
    """``text``'s UTF-8 bytes, one character per byte, for byte-wise regexes on str."""
    return text.encode("utf-8", "surrogateescape").decode("latin-1")
