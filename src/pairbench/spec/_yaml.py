"""YAML with line numbers: parsing, duplicate keys, and the Problem record."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

from pairbench._errors import SpecError
from pairbench._registry import Group

Part = str | int
Found = tuple[tuple[Part, ...], str, str]  # (path, message, fix) of a problem
_GROUPS: tuple[Group, ...] = ("agents", "graders", "fixtures")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an experiment file, where it is, and how to fix it.

    **Usage**:

        str(problem)  # 'experiment.yaml:12: budget.trial_timeout_s: must be greater than 0
                      #  (got -5). Fix: set a positive number of seconds.'
    """

    file: str
    line: int | None
    yaml_path: str
    message: str
    fix: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f"{self.yaml_path}: {self.message}" if self.yaml_path else self.message
        return f"{where}: {_sentence(what)} Fix: {_sentence(self.fix)}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "?", "!")) else text + "."


def format_path(parts: tuple[Part, ...] | list[Part]) -> str:
    """``("tasks", 3, "grader", "name")`` -> ``"tasks[3].grader.name"``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True)
class LineMap:
    """1-based line of every YAML path (of its key, or of its item in a list)."""

    lines: Mapping[str, int]

    def line(self, path: str) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        while path not in self.lines:
            if not path:
                return None
            shorter = re.sub(r"(\[\d+\]|\.?[^.\[]*)$", "", path, count=1)  # drop the last part
            # A path the pattern cannot shorten (one ending in "[") would loop forever.
            path = shorter if len(shorter) < len(path) else path[:-1]
        return self.lines[path]


class YamlWithLines(NamedTuple):
    data: Any
    lines: LineMap


class _Parsed(NamedTuple):
    data: Any
    lines: LineMap
    problems: list[Problem]


def _plain(node: Any, parts: tuple[Part, ...], lines: dict[str, int]) -> Any:
    """Plain dicts/lists/scalars from ruamel's round-trip types, recording each path's line."""
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            child = (*parts, str(key))
            lines.setdefault(format_path(child), node.lc.key(key)[0] + 1)
            out[_plain(key, (), {})] = _plain(value, child, lines)
        return out
    if isinstance(node, CommentedSeq):
        for index in range(len(node)):
            lines.setdefault(format_path((*parts, index)), node.lc.item(index)[0] + 1)
        return [_plain(item, (*parts, i), lines) for i, item in enumerate(node)]
    if isinstance(node, TaggedScalar):
        return str(node.value)
    if isinstance(node, bool) or node is None:
        return node
    for kind in (int, float, str):  # ScalarInt, ScalarFloat, ScalarString -> the plain type
        if isinstance(node, kind):
            return kind(node)
    return node


def _duplicates(
    node: Node, parts: tuple[Part, ...], seen: set[int]
) -> Iterator[tuple[str, int, int]]:
    """(path, line, first line) of every repeated key, found on the composed node tree."""
    if id(node) in seen:  # an alias repeats a node; walk it once
        return
    seen.add(id(node))
    if isinstance(node, MappingNode):
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            key, line = str(key_node.value), key_node.start_mark.line + 1
            if key in first:
                yield format_path((*parts, key)), line, first[key]
            first.setdefault(key, line)
            yield from _duplicates(value_node, (*parts, key), seen)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicates(item, (*parts, index), seen)


def _parse(path: str | os.PathLike[str]) -> _Parsed:
    file = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fix = "give the path of a readable UTF-8 experiment file"
        return _Parsed(
            None, LineMap({}), [Problem(file, None, "", f"cannot read it: {reason}", fix)]
        )
    problems: list[Problem] = []
    try:
        # Duplicate keys: ruamel's DuplicateKeyError names only the first one, so find
        # them all on the node tree, then load with duplicates allowed (the first wins)
        # so that every other problem is still reported in this same pass.
        for ypath, line, first in _duplicates(YAML(typ="rt").compose(text), (), set()):
            fix = f"keep one of them: only the first (line {first}) would be used"
            problems.append(Problem(file, line, ypath, "duplicate key", fix))
        loader = YAML(typ="rt")
        loader.allow_duplicate_keys = True
        raw = loader.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = mark.line + 1 if mark is not None else None
        message = f"invalid YAML: {exc.problem or exc.context or 'cannot parse'}"
        fix = "check the indentation, quotes and brackets on this line and the one before"
        if "'\\t'" in message:  # ruamel spells a tab as the two characters \t
            fix = "indent with spaces, not tabs"
        return _Parsed(None, LineMap({}), [*problems, Problem(file, at, "", message, fix)])
    lines: dict[str, int] = {"": raw.lc.line + 1} if isinstance(raw, CommentedMap) else {}
    return _Parsed(_plain(raw, (), lines), LineMap(lines), problems)


def load_yaml_with_lines(path: str | os.PathLike[str]) -> YamlWithLines:
    """Parse a YAML file to plain data, with the line of every YAML path.

    **Usage**:

        data, lines = load_yaml_with_lines("experiment.yaml")
        lines.line("tasks[3].grader.name")  # 41

    Raises ``SpecError`` for an unreadable file, a YAML syntax error or a duplicate key.
    """
    parsed = _parse(path)
    if parsed.problems:
        raise SpecError([str(p) for p in parsed.problems])
    return YamlWithLines(parsed.data, parsed.lines)


def _get(data: Any, parts: tuple[Part, ...]) -> Any:
    for part in parts:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data
