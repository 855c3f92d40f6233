"""Reading ``experiment.yaml``: every problem in one pass, each with its line and its fix."""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any, NamedTuple

from pairbench._errors import SpecError
from pairbench._registry import names
from pairbench.spec._campaign import campaign_problems
from pairbench.spec._canonical import canonical_hash
from pairbench.spec._commands import command_problems
from pairbench.spec._explain import _model_problems
from pairbench.spec._grader_args import grader_args_problems
from pairbench.spec._hypotheses import hypothesis_problems
from pairbench.spec._models import Experiment
from pairbench.spec._plugin_checks import _registered, _report_names, _settings, _surfaces
from pairbench.spec._primary import primary_problems
from pairbench.spec._secrets import secret_problems
from pairbench.spec._sources import proxy_problems, source_problems
from pairbench.spec._task import MAX_PLANNED_TRIALS, MAX_TRIALS
from pairbench.spec._yaml import (
    _GROUPS,
    Found,
    LineMap,
    Part,
    Problem,
    YamlWithLines,
    _get,
    _parse,
    format_path,
    load_yaml_with_lines,
)

__all__ = [
    "LineMap",
    "LoadedExperiment",
    "Problem",
    "YamlWithLines",
    "check_experiment",
    "format_path",
    "load_experiment",
    "load_yaml_with_lines",
]


def _semantic(
    data: dict[str, Any], root: Path, registry: Mapping[str, Collection[str]]
) -> Iterator[Found]:
    """What the models alone cannot check, on the raw data (so it runs even when they fail)."""
    arms = data.get("arms") if isinstance(data.get("arms"), dict) else None
    if arms is not None and len(arms) < (1 if data.get("descriptive") is True else 2):
        yield (
            ("arms",),
            f"needs at least 2 arms (found {len(arms)})",
            "add an arm to compare with (or declare `descriptive: true` for a one-arm benchmark"
            " that reports its own metrics and no comparison)",
        )
    yield from _comparisons(data.get("comparisons"), arms)
    yield from _planned(data, arms)
    yield from campaign_problems(data)
    yield from hypothesis_problems(data)
    yield from primary_problems(data)
    agents: list[tuple[tuple[Part, ...], Any]] = [(("agent",), data.get("agent"))]
    agents += [(("arms", a, "agent"), _get(arm, ("agent",))) for a, arm in (arms or {}).items()]
    for where, agent in agents:
        yield from _registered(registry, "agents", (*where, "adapter"), _get(agent, ("adapter",)))
        yield from _settings(registry, where, agent)
    for a, arm in (arms or {}).items():
        own = _get(arm, ("agent",))
        yield from _surfaces(registry, a, arm, own if own is not None else data.get("agent"))
    yield from _registered(registry, "studies", ("study",), data.get("study"))
    yield from _report_names(registry, data)
    yield from _named_file(root, ("protocol",), data.get("protocol"))
    files = data.get("files")
    for i, rel in enumerate(files if isinstance(files, list) else []):
        yield from _named_file(root, ("files", i), rel, folder_ok=True)
    yield from source_problems(root, data)
    yield from proxy_problems(data)
    for a, arm in (arms or {}).items():
        yield from _attachments(root, a, _get(arm, ("attachments",)), files)
    first_at: dict[Any, int] = {}
    tasks = data.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        if not isinstance(task, dict):
            continue
        task_id = task.get("id")
        if isinstance(task_id, str) and task_id in first_at:
            message = f"task id '{task_id}' is already used by tasks[{first_at[task_id]}]"
            yield ("tasks", i, "id"), message, "give every task its own id"
        if isinstance(task_id, str):  # any other id is the model's to report
            first_at.setdefault(task_id, i)
        name = _get(task, ("grader", "name"))
        yield from _registered(registry, "graders", ("tasks", i, "grader", "name"), name)
        yield from grader_args_problems(registry, ("tasks", i, "grader"), task.get("grader"))
        yield from _registered(registry, "fixtures", ("tasks", i, "fixture"), task.get("fixture"))
        for key in ("prompt", "plan"):
            yield from _named_file(root, ("tasks", i, key), task.get(key))


def _planned(data: dict[str, Any], arms: dict[str, Any] | None) -> Iterator[Found]:
    """A plan past ``MAX_PLANNED_TRIALS``, counted once every count in it is valid."""

    def count(value: Any) -> int | None:
        valid = isinstance(value, int) and not isinstance(value, bool)
        return value if valid and 1 <= value <= MAX_TRIALS else None

    tasks = data.get("tasks")
    default = count(data.get("trials", 1))
    if arms is None or not isinstance(tasks, list) or default is None:
        return  # the models report what is malformed
    each = [count(t.get("trials") or default) if isinstance(t, dict) else None for t in tasks]
    if None in each:
        return
    total = len(arms) * sum(n for n in each if n is not None)
    if total > MAX_PLANNED_TRIALS:
        yield (
            ("trials",),
            f"plans {total:,} trials ({len(arms)} arms x {total // len(arms):,} task trials), "
            f"more than the {MAX_PLANNED_TRIALS:,} a run may have",
            "lower 'trials' (or a task's 'trials'), or split the experiment into several",
        )


def _attachments(root: Path, arm: str, attachments: Any, files: Any) -> Iterator[Found]:
    locked = {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()
    for i, rel in enumerate(attachments if isinstance(attachments, list) else []):
        where: tuple[Part, ...] = ("arms", arm, "attachments", i)
        problems = list(_named_file(root, where, rel))
        yield from problems
        if not problems and isinstance(rel, str) and rel and rel not in locked:
            message = f"attachment '{rel}' is not listed in 'files', so its bytes are not locked"
            yield where, message, f"add '{rel}' to the experiment's 'files'"


def _comparisons(comparisons: Any, arms: dict[str, Any] | None) -> Iterator[Found]:
    seen: set[frozenset[str]] = set()
    known = ", ".join(sorted(str(a) for a in arms or {})) or "none defined"
    for i, pair in enumerate(comparisons if isinstance(comparisons, list) else []):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(a, str) for a in pair)
        ):
            continue  # the model reports the shape
        for j, arm in enumerate(pair):
            if arms is not None and arm not in arms:
                yield ("comparisons", i, j), f"unknown arm '{arm}'", f"use one of the arms: {known}"
        if pair[0] == pair[1]:
            yield (
                ("comparisons", i),
                f"compares arm '{pair[0]}' with itself",
                "compare two different arms",
            )
        elif frozenset(pair) in seen:
            yield ("comparisons", i), "this pair is listed twice", "list each pair once"
        seen.add(frozenset(pair))


def _named_file(
    root: Path, where: tuple[Part, ...], rel: Any, *, folder_ok: bool = False
) -> Iterator[Found]:
    """``folder_ok``: a folder is named too (``files:``: every file under it is locked)."""
    if not isinstance(rel, str) or not rel:
        return
    fix = "name a file inside the experiment's folder, relative to it (e.g. prompts/x.md)"
    try:
        target = (root / rel).resolve()
        is_file = target.is_file() or (folder_ok and target.is_dir())
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a symlink loop
        yield where, f"'{rel}' cannot be a file name ({_reason(exc)})", fix
        return
    if Path(rel).is_absolute() or rel.startswith(("/", "\\")) or PureWindowsPath(rel).drive:
        yield where, f"'{rel}' is an absolute path", fix
    elif not target.is_relative_to(root):
        yield where, f"'{rel}' points outside the experiment's folder", fix
    elif not is_file:
        fix = "create it, or correct the path (relative to the experiment file's folder)"
        yield where, f"file '{rel}' does not exist", fix


def _non_finite(value: Any, where: tuple[Part, ...]) -> Iterator[tuple[Part, ...]]:
    """The path of every ``.nan`` or ``.inf``: the canonical JSON cannot hold them."""
    if isinstance(value, float) and not math.isfinite(value):
        yield where
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, (*where, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, (*where, index))


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


class _Checked(NamedTuple):
    problems: list[Problem]
    experiment: Experiment | None


def _check(
    path: str | os.PathLike[str],
    registry: Mapping[str, Collection[str]] | None,
    environ: Mapping[str, str] | None = None,
) -> _Checked:
    file = os.fspath(path)
    data, lines, problems = _parse(path)
    if data is None and not problems:
        problems.append(Problem(file, None, "", "the file is empty", "write the experiment in it"))
    if problems and data is None:
        return _Checked(problems, None)
    if not isinstance(data, dict):
        fix = "start with top-level keys such as 'id:', 'arms:' and 'tasks:'"
        return _Checked(
            [*problems, Problem(file, 1, "", "the top level must be a mapping", fix)], None
        )
    model_problems, experiment = _model_problems(data, file, lines)
    if registry is None:
        registry = {g: frozenset(names(g)) for g in _GROUPS}
    root = Path(path).resolve().parent
    semantic = [
        Problem(file, lines.line(format_path(p)), format_path(p), m, f)
        for p, m, f in (
            *_semantic(data, root, registry),
            *secret_problems(data, environ),
            *command_problems(data, root, environ),
        )
    ]
    everything = [*problems, *model_problems, *semantic]
    if not everything:  # the free-form values (settings, args) must hash, as `run` hashes them
        fix = "use a finite number (not .inf or .nan)"
        everything = [
            Problem(file, lines.line(format_path(p)), format_path(p), "is not a finite number", fix)
            for p in _non_finite(data, ())
        ]
    everything.sort(key=lambda p: p.line or 0)
    return _Checked(everything, experiment if not everything else None)


def check_experiment(
    path: str | os.PathLike[str],
    registry: Mapping[str, Collection[str]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Every problem in an experiment file, found in one pass, sorted by line.

    ``registry`` maps a plugin group (``agents``, ``graders``, ``fixtures``) to its known
    names; ``None`` reads the installed entry points. A group missing from it is not checked.
    ``environ`` (default ``os.environ``) is where a run would read ``${env:NAME}`` values:
    one that is unset is a problem (``load_experiment`` does not check it; a run does).

    **Usage**:

        for problem in check_experiment("experiment.yaml"):
            print(problem)  # experiment.yaml:3: trails: unknown key 'trails'. Fix: ...
    """
    return _check(path, registry, os.environ if environ is None else environ).problems


@dataclass(frozen=True)
class LoadedExperiment:
    """A valid experiment, where it lives, and its canonical hash."""

    experiment: Experiment
    path: Path
    """The experiment file, resolved."""
    root: Path
    """The experiment file's folder: named files are relative to it."""
    canonical_hash: str
    """``canonical_hash(experiment)``: SHA-256 of the canonical JSON."""

    def resolve(self, rel: str) -> Path:
        """The absolute path of a file the experiment names (``prompts/x.md``).

        Raises ``ValueError`` if ``rel`` is absolute or leads outside ``root``.
        """
        target = (self.root / rel).resolve()
        if Path(rel).is_absolute() or not target.is_relative_to(self.root):
            raise ValueError(f"{rel!r} is not a path inside {self.root}")
        return target


def load_experiment(
    path: str | os.PathLike[str], registry: Mapping[str, Collection[str]] | None = None
) -> LoadedExperiment:
    """Load and check an experiment file.

    **Usage**:

        loaded = load_experiment("experiment.yaml")
        loaded.experiment.arms, loaded.canonical_hash, loaded.resolve("prompts/a.md")

    Raises ``SpecError`` listing every problem (one line each) if there is any.
    """
    problems, experiment = _check(path, registry)
    if problems or experiment is None:
        raise SpecError([str(p) for p in problems])
    try:
        digest = canonical_hash(experiment)
    except ValueError:
        fix = "use finite numbers only (no .nan or .inf)"
        problem = Problem(os.fspath(path), None, "", "the experiment cannot be hashed", fix)
        raise SpecError([str(problem)]) from None
    resolved = Path(path).resolve()
    return LoadedExperiment(experiment, resolved, resolved.parent, digest)
