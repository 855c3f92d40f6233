"""YAML with line numbers: parsing, duplicate keys, and the Problem record."""

from __future__ import annotations

import os
import re
import stat
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scanner import RoundTripScanner

from pairbench._errors import SpecError
from pairbench._registry import Group

Part = str | int
Found = tuple[tuple[Part, ...], str, str]  # (path, message, fix) of a problem
_GROUPS: tuple[Group, ...] = ("agents", "graders", "fixtures", "studies")

MAX_BYTES = 1024 * 1024
"""The largest experiment file read. A hand-written protocol is a few KiB (prompts live in
files of their own), and ruamel's round-trip parser takes seconds per MiB."""
MAX_NODES = 50_000
"""The most YAML values (nodes) a document may expand to, each alias counted as the values
it repeats: 9 aliases nested 9 deep (a "billion laughs") would expand to 10^9 and exhaust
memory. 50,000 is about 1,500 tasks; as ruamel's parser takes 0.05-0.15 ms a value, it
also keeps a refusal of a dense document to a few seconds."""
MAX_DEPTH = 64
"""The deepest nesting allowed (an experiment is about 8 levels deep); the parser and the
validators recurse, so a deeper document would exhaust the stack."""


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
            # A key merged in (<<: *defaults) has no line here: use the mapping's own.
            where = (node.lc.data or {}).get(key)
            lines.setdefault(format_path(child), (where[0] if where else node.lc.line) + 1)
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


class _Refused(Exception):
    """A document past a limit: where (1-based line) and the problem's message and fix."""

    def __init__(self, line: int | None, message: str, fix: str) -> None:
        super().__init__(message)
        self.line, self.message, self.fix = line, message, fix


class _BoundedComposer(Composer):
    """ruamel's composer, counting every node the document expands to (aliases included).

    An alias costs the size of the node it repeats, so a billion-laughs document is refused
    at the alias that crosses ``MAX_NODES``, having composed a few dozen nodes; an alias to
    a collection that contains it (``&a [*a]``) is refused, since it has no finite size.
    """

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader=loader)
        self._sizes: dict[int, int] = {}
        """Expanded size of every finished node, by ``id`` (the tree keeps them alive)."""
        self._expanded = 0
        """Nodes composed so far, each alias counted as the size of what it repeats."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        before = self._expanded
        event = self.parser.peek_event()
        alias = isinstance(event, AliasEvent)
        node = super().compose_node(parent, index)
        unfinished = id(node) not in self._sizes  # only an ancestor is still being composed
        if alias and isinstance(node, MappingNode | SequenceNode) and unfinished:
            raise _Refused(
                event.start_mark.line + 1,
                f"the alias *{event.anchor} refers to a collection that contains it",
                "write the value out instead of referring to its own anchor",
            )
        if alias:
            self._expanded += self._sizes.get(id(node), 1)
        else:
            self._expanded += 1
            self._sizes[id(node)] = self._expanded - before
        if self._expanded > MAX_NODES:
            what = f"the alias *{event.anchor}" if alias else "the document"
            raise _Refused(
                event.start_mark.line + 1,
                f"{what} expands past {MAX_NODES:,} YAML values",
                "write a smaller experiment; anchors and aliases (&x, *x, <<: *x) may repeat "
                "a value only while the whole stays under the limit",
            )
        return node


class _BoundedScanner(RoundTripScanner):
    """ruamel's scanner, refusing flow collections (``[``, ``{``) nested past ``MAX_DEPTH``.

    The composer's depth limit comes too late for them: a key may start at any ``[``, so
    the scanner reads ahead to the matching bracket, and 100,000 of them take it minutes.
    """

    def fetch_flow_collection_start(self, TokenClass: Any, to_push: Any) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise _Refused(
                self.reader.get_mark().line + 1,
                f"values are nested more than {MAX_DEPTH} levels deep",
                "flatten the structure: an experiment is a few levels deep",
            )
        super().fetch_flow_collection_start(TokenClass, to_push)


def _reader(exc: ReaderError, text: str) -> int | None:
    """The 1-based line of a character the YAML reader refuses."""
    position = exc.position if isinstance(exc.position, int) else None
    return None if position is None else text.count("\n", 0, position) + 1


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


def _read(path: str | os.PathLike[str]) -> str:
    """The file's text, refusing one past ``MAX_BYTES`` before reading it all."""
    if stat.S_ISFIFO(os.stat(path).st_mode):  # opening a pipe would wait for a writer
        raise _Refused(None, "it is a pipe, not a file", "give the path of the experiment file")
    with Path(path).open("rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise _Refused(
            None,
            f"the file is larger than {MAX_BYTES // 1024 // 1024} MiB",
            "keep prompts, plans and data in files of their own, named from the experiment",
        )
    return data.decode("utf-8")


def _loader() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Scanner = _BoundedScanner
    yaml.Composer = _BoundedComposer
    yaml.max_depth = MAX_DEPTH
    # Duplicates load (the first wins) so that every other problem is still reported in
    # the same pass; _duplicates reports them all (ruamel's error names only the first).
    yaml.allow_duplicate_keys = True
    return yaml


def _bad_scalar_line(root: Node) -> int | None:
    """The line of the first scalar that its tag's constructor refuses (``!!int abc``):
    ruamel raises a plain ValueError for it, without a position."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue  # an alias: the same node again
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            try:
                _loader().constructor.construct_object(node, deep=True)
            except (ValueError, KeyError, TypeError):
                return int(node.start_mark.line) + 1
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
    return None


def _parse(path: str | os.PathLike[str]) -> _Parsed:
    file = os.fspath(path)
    try:
        text = _read(path)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fix = "give the path of a readable UTF-8 experiment file"
        return _Parsed(
            None, LineMap({}), [Problem(file, None, "", f"cannot read it: {reason}", fix)]
        )
    except _Refused as exc:
        return _Parsed(None, LineMap({}), [Problem(file, exc.line, "", exc.message, exc.fix)])
    problems: list[Problem] = []
    yaml = _loader()
    try:
        # Composed once, by the bounded scanner and composer (which refuse an oversized
        # document before anything is built from it), then constructed from the nodes.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a reused anchor is legal YAML; say nothing
            node = yaml.compose(text)
        if node is None:
            return _Parsed(None, LineMap({}), [])
        for ypath, line, first in _duplicates(node, (), set()):
            fix = f"keep one of them: only the first (line {first}) would be used"
            problems.append(Problem(file, line, ypath, "duplicate key", fix))
        raw = yaml.constructor.construct_document(node)
    except _Refused as exc:
        return _Parsed(None, LineMap({}), [Problem(file, exc.line, "", exc.message, exc.fix)])
    except MaxDepthExceededError as exc:
        at = exc.problem_mark.line + 1 if exc.problem_mark is not None else None
        message = f"values are nested more than {MAX_DEPTH} levels deep"
        fix = "flatten the structure: an experiment is a few levels deep"
        return _Parsed(None, LineMap({}), [Problem(file, at, "", message, fix)])
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = mark.line + 1 if mark is not None else None
        message = f"invalid YAML: {exc.problem or exc.context or 'cannot parse'}"
        fix = "check the indentation, quotes and brackets on this line and the one before"
        if "'\\t'" in message:  # ruamel spells a tab as the two characters \t
            fix = "indent with spaces, not tabs"
        return _Parsed(None, LineMap({}), [*problems, Problem(file, at, "", message, fix)])
    except ReaderError as exc:
        message = f"invalid YAML: {exc.reason}"
        if isinstance(exc.character, int):
            message = f"invalid YAML: character #x{exc.character:04x} is not allowed"
        fix = "remove the control character; an experiment file is plain text"
        return _Parsed(None, LineMap({}), [Problem(file, _reader(exc, text), "", message, fix)])
    except YAMLError as exc:  # any other refusal of ruamel's, without a position
        said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        fix = "check that the file is a single YAML document"
        problem = Problem(file, None, "", f"invalid YAML: {said}", fix)
        return _Parsed(None, LineMap({}), [*problems, problem])
    except (ValueError, KeyError, TypeError) as exc:
        # ruamel's constructors convert an explicitly tagged scalar with int(), float() or
        # a table lookup, so ``!!int abc`` or ``!!bool maybe`` escapes as a plain error.
        message = f"invalid YAML: a tagged value cannot be read as its tag says ({exc})"
        fix = "remove the tag (!!int, !!float, !!bool, ...) or correct the value"
        at = _bad_scalar_line(node)
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
