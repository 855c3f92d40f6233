"""Which engine, exactly: what a run records and the held-out lock freezes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.machinery import PathFinder
from pathlib import Path
from typing import NamedTuple

from pydantic import Field

from pairbench._errors import SpecError
from pairbench._model import Frozen
from pairbench.spec._models import env_ref
from pairbench.studies.attribution_reliability.engines._contain import (
    pairbench_module,
    program_folders,
)
from pairbench.studies.attribution_reliability.engines._python import SRC_ROOT
from pairbench.studies.attribution_reliability.engines._resolve import resolve
from pairbench.studies.attribution_reliability.engines._spec import (
    EngineSpec,
    is_python,
    python_script_index,
)

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|COOKIE|SESSION", re.IGNORECASE)
_SKIP = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


class EngineIdentity(Frozen):
    """The engine an arm ran, pinned: two runs with equal identities ran the same code
    with the same declared models and pinned variables.

    **Usage**::

        identity = engine_identity(spec, experiment_dir)
        run_json["engine"] = identity.model_dump(mode="json")
    """

    engine: str
    """The spec's engine name (``command``, ``python``, ``http`` or a registered one)."""
    adapter: str
    """The adapter that runs it (a registered engine class runs through ``python``)."""
    argv: list[str] | None = None
    url: str | None = None
    target: str | None = None
    source_path: str | None = None
    """What ``source_sha256`` covers: the command's program file (the script, for
    ``python script.py``) or the target module's file (its package folder when it is in
    one); None for http."""
    source_sha256: str | None = None
    commit: str | None = None
    """The git commit of the checkout holding ``source_path``; None outside git."""
    dirty: bool | None = None
    """Whether ``source_path`` differs from that commit (uncommitted or untracked files)."""
    models: dict[str, str] = Field(default_factory=dict)
    efforts: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    """Pinned variables; a secret-looking name's value as ``sha256:<hex>``; an
    ``${env:NAME}`` reference as written (its value is never recorded)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """http headers, recorded like ``env``."""
    settings_sha256: str
    """SHA-256 of the settings as canonical JSON."""
    contained: bool | None = None
    """Whether the engine's process runs in the sandbox (the spec's ``contained``); None
    when nothing of it runs here outside pairbench's own code (http, ``heuristic``,
    ``openai``)."""


def engine_identity(spec: EngineSpec, base_dir: Path) -> EngineIdentity:
    """The identity of ``spec`` (relative paths read against ``base_dir``).

    Raises ``SpecError`` when the program or target cannot be found, so a run refuses
    before its first attempt.

    **Usage**::

        engine_identity(EngineSpec.parse({"engine": "command", "argv": ["./eng"]}), here)
    """
    spec = spec.resolve(base_dir)
    adapter, target = spec.engine, spec.target
    if spec.engine not in ("command", "python", "http"):
        found = resolve(spec.engine)
        adapter = found.adapter.adapter
        target = found.target
    source: Path | None = None
    if spec.argv:
        source = _program_source(spec.argv, spec.path)
    elif target:
        source = _module_source(target.partition(":")[0], spec.path)
    local = adapter in ("command", "python") and not pairbench_module(target)
    if local and spec.contained:
        _own_folder(spec, base_dir)
    commit, dirty = _git(source) if source is not None else _GitState(None, None)
    settings = json.dumps(spec.settings, sort_keys=True, separators=(",", ":"), default=str)
    return EngineIdentity(
        engine=spec.engine,
        adapter=adapter,
        argv=spec.argv,
        url=spec.url,
        target=target,
        source_path=str(source) if source is not None else None,
        source_sha256=hash_path(source) if source is not None else None,
        commit=commit,
        dirty=dirty,
        models=dict(spec.models),
        efforts=dict(spec.efforts),
        env=_pinned(spec.env),
        headers=_pinned(spec.headers),
        settings_sha256=hashlib.sha256(settings.encode("utf-8")).hexdigest(),
        contained=spec.contained if local else None,
    )


def _own_folder(spec: EngineSpec, base_dir: Path) -> None:
    """A contained engine sees its own folder: refuse one that is the experiment's (its
    manifests and lock would be in view; a folder above it is fine, the experiment is
    hidden inside it)."""
    shown = program_folders(spec.argv) if spec.argv else [Path(p) for p in spec.path]
    here = base_dir.resolve()
    if any(folder.resolve() == here for folder in shown):
        field = "argv" if spec.argv else "path"
        raise SpecError(
            [
                f"engine.{field}: the engine lives in the experiment's folder ({here}), which "
                "a contained engine would see (its manifests and lock). Fix: move the engine "
                "into a folder of its own (engine/), or set contained: false"
            ]
        )


def hash_path(path: Path) -> str:
    """SHA-256 of a file's bytes, or of a folder's files (relative names and contents, in
    name order; caches and ``.git`` left out)."""
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            file = Path(root, name)
            rel = file.relative_to(path).as_posix()
            digest.update(f"{rel}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n".encode())
    return digest.hexdigest()


def _program_source(argv: list[str], path: list[str]) -> Path:
    script = python_script_index(argv)
    if script is not None:
        return _existing(Path(argv[script]))
    rest = argv[1:]
    if is_python(argv[0]) and "-m" in rest and rest.index("-m") + 1 < len(rest):
        return _module_source(rest[rest.index("-m") + 1], path)
    # Otherwise the program file itself (for ``python -c``: the interpreter).
    program = argv[0]
    if "/" in program:
        return _existing(Path(program))
    found = shutil.which(program)
    if found is None:
        raise SpecError(
            [f"engine.argv: {program!r} is not on PATH. Fix: give its path (./{program})"]
        )
    return Path(found).resolve()


def _existing(file: Path) -> Path:
    if not file.exists():
        raise SpecError(
            [
                f"engine.argv: {str(file)!r} does not exist. Fix: correct the path (it is "
                "read relative to the experiment's folder)"
            ]
        )
    return file.resolve()


def _module_source(module: str, path: list[str]) -> Path:
    parts = module.split(".")
    found = PathFinder.find_spec(parts[0], [*path, SRC_ROOT, *sys.path])
    if found is None or (found.origin is None and not found.submodule_search_locations):
        raise SpecError(
            [
                f"engine.target: module {parts[0]!r} is not importable. Fix: add its folder to "
                "engine.path, or install it"
            ]
        )
    if found.submodule_search_locations:
        here = Path(next(iter(found.submodule_search_locations)))
    else:
        return Path(str(found.origin)).resolve()
    # Walk down without importing anything: the engine's code runs only in its worker.
    for part in parts[1:]:
        if (here / part).is_dir():
            here = here / part
        elif (here / f"{part}.py").is_file():
            return here.resolve()  # a module in a package: its package folder
        else:
            raise SpecError(
                [
                    f"engine.target: {module!r} has no module {part!r} under {here}. "
                    "Fix: correct the target"
                ]
            )
    return here.resolve()


class _GitState(NamedTuple):
    commit: str | None
    dirty: bool | None


def _git(source: Path) -> _GitState:
    folder = source if source.is_dir() else source.parent
    git = shutil.which("git")
    if git is None:
        return _GitState(None, None)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/"),
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
    }
    head = subprocess.run(
        [git, "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, env=env
    )
    if head.returncode != 0:
        return _GitState(None, None)
    status = subprocess.run(
        [git, "-C", str(folder), "status", "--porcelain", "--", str(source)],
        capture_output=True,
        text=True,
        env=env,
    )
    return _GitState(head.stdout.strip(), bool(status.stdout.strip()) or status.returncode != 0)


def _pinned(values: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in sorted(values.items()):
        if env_ref(value) is None and _SECRET.search(name):
            value = "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()
        out[name] = value
    return out
