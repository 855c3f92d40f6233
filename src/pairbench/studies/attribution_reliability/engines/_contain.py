"""The sandbox a local engine runs in: bubblewrap (``bwrap``, Debian's ``bubblewrap``).

A ``command`` or ``python`` engine is the system under test, and the answers to its cases
are on the same machine: the run folder, the experiment's manifests and lock, pairbench's
installed study data, the runner's ``/proc``. In the sandbox it sees none of them:

- the system read-only (``/usr``, ``/etc``, ``/opt``, ``/sys``; the interpreter and its
  site-packages for a Python engine), with any ``pairbench`` package in them hidden;
- its own program folder read-only (``argv[0]``'s, or the script's for ``python
  script.py``), or the ``path:`` folders of a python engine, with the experiment and runs
  folders hidden when they lie inside one;
- a new PID namespace with its own ``/proc`` (no other process, no ``/proc/$PPID/fd`` back
  to the runner), its own IPC and host name, a new terminal session;
- a fresh, empty tmpfs as ``HOME`` (``/home/engine``, also its working folder) and as
  ``/tmp`` (``TMPDIR``);
- the host's network: the sites bind 127.0.0.1 and the model endpoints are wherever the
  arm says, so the network namespace is shared (a sandbox cannot tell a site's port from
  any other local port; the sites serve nothing of the manifests).

The environment is the scrubbed one the adapters build (``HOME`` and ``TMPDIR`` pointed
into the sandbox): bwrap is started with it and passes it on, rather than ``--clearenv``
with ``--setenv NAME VALUE``, which would put declared secrets into bwrap's command line,
readable by every user in ``/proc/<pid>/cmdline``.

``probe`` checks once per process (per program) that bwrap runs and can make namespaces;
``PAIRBENCH_BWRAP`` names another program (a missing one makes containment unavailable).
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pairbench

if TYPE_CHECKING:
    from pairbench.studies.attribution_reliability.engines._spec import EngineSpec

ENV_BWRAP = "PAIRBENCH_BWRAP"
"""The bubblewrap program to run (default ``bwrap`` on ``PATH``)."""
HOME = "/home/engine"
"""The engine's ``HOME`` and working folder in the sandbox (an empty tmpfs)."""
API_MOUNT = "/pairbench-api"
"""Where a python engine finds pairbench's engine API in the sandbox (``PYTHONPATH``)."""
FIX = (
    "install bubblewrap (apt-get install bubblewrap, or `make system-deps`), or set "
    "`contained: false` in the arm's engine to run it uncontained (the report says so)"
)
_SYSTEM = ("usr", "etc", "opt", "sys")
_TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_PROBE_TIMEOUT_S = 30.0


class Probe(NamedTuple):
    """Whether containment works here: ``ok``, the program, and why not."""

    ok: bool
    program: str
    reason: str


def bwrap_program() -> str:
    """``$PAIRBENCH_BWRAP``, else ``bwrap``."""
    return os.environ.get(ENV_BWRAP) or "bwrap"


def probe(program: str | None = None) -> Probe:
    """Whether ``program`` (default ``bwrap_program()``) can build the engines' sandbox:
    tried once per program and process (a real ``true`` in the same namespaces).

    **Usage**::

        found = probe()
        if not found.ok:
            print(found.reason)
    """
    return _probe(program or bwrap_program())


@functools.cache
def _probe(program: str) -> Probe:
    exe = shutil.which(program)
    if exe is None:
        return Probe(False, program, f"the sandbox program {program!r} is not installed")
    argv = [exe, "--ro-bind", "/", "/", *_namespaces(), "--proc", "/proc", "--dev", "/dev"]
    try:
        done = subprocess.run(
            [*argv, "--", "true"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(False, exe, f"{exe} could not run ({exc})")
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Probe(False, exe, f"{exe} cannot create the sandbox's namespaces ({said})")
    return Probe(True, exe, "")


def _namespaces() -> list[str]:
    return [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--new-session",
        "--die-with-parent",
    ]


def wants_sandbox(spec: EngineSpec) -> bool:
    """Whether ``spec``'s engine is to run contained: a local engine (``command``,
    ``python`` or a registered class outside pairbench) whose spec keeps ``contained``."""
    from pairbench.studies.attribution_reliability.engines._resolve import resolve

    if not spec.contained:
        return False
    if spec.engine == "command":
        return True
    found = resolve(spec.engine)
    target = found.target or spec.target
    return found.adapter.adapter == "python" and not pairbench_module(target)


def missing_sandbox(spec: EngineSpec, arm: str) -> str | None:
    """Why ``spec``'s engine cannot run contained here (None: it can, or need not): the
    one message a held-out run is refused with, naming the fix.

    **Usage**::

        problem = missing_sandbox(spec, "my-arm")
        if problem is not None:
            raise RunRefused(problem)
    """
    if not wants_sandbox(spec):
        return None
    found = probe()
    if found.ok:
        return None
    return (
        f"arm {arm!r}: the {spec.engine} engine is to run contained, and {found.reason}. Fix: {FIX}"
    )


def sandbox_program(wanted: bool) -> str | None:
    """The bwrap program to run an engine with, or None: not ``wanted`` (``contained:
    false``, or pairbench's own engine), or unavailable here. A held-out run never gets
    that far without it (refused before its first session); a calibration run was warned."""
    if not wanted:
        return None
    found = probe()
    return found.program if found.ok else None


def program_folders(argv: Sequence[str]) -> list[Path]:
    """The folders a command engine's program lives in: ``argv[0]``'s (found on ``PATH``
    when it is a bare name) and, for ``python script.py``, the script's.

    >>> [str(p) for p in program_folders(["/opt/eng/run", "--json"])]
    ['/opt/eng']
    """
    from pairbench.studies.attribution_reliability.engines._spec import python_script_index

    script = python_script_index(list(argv))
    found: list[Path] = []
    for name in [argv[0]] if script is None else [argv[0], argv[script]]:
        where = name if "/" in name else shutil.which(name)
        if where is None:
            continue
        for folder in (Path(where).absolute().parent, Path(where).resolve().parent):
            if folder not in found:
                found.append(folder)
    return found


class Sandboxed(NamedTuple):
    """What to start: bwrap's argv (the engine's after ``--``) and its environment."""

    argv: list[str]
    env: dict[str, str]


def sandboxed(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    program: str,
    show: Sequence[Path],
    hide: Sequence[Path] = (),
    api: Path | None = None,
) -> Sandboxed:
    """``argv`` run by bwrap ``program`` in the engines' sandbox.

    ``show``: the engine's own folders (read-only); ``hide``: folders kept out even when
    they lie inside a shown one (the experiment, the runs); ``api``: a folder mounted at
    ``API_MOUNT`` (``engine_api``'s output). ``env`` gets ``HOME`` and ``TMPDIR`` inside.
    """
    out = [program, *_namespaces()]
    bound: list[Path] = []
    for name in _TOP_LINKS:
        top = Path("/", name)
        if top.is_symlink():
            out += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            out += ["--ro-bind", str(top), str(top)]
            bound.append(top)
    for name in _SYSTEM:
        if Path("/", name).is_dir():
            out += ["--ro-bind", f"/{name}", f"/{name}"]
            bound.append(Path("/", name))
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink() and resolv.exists():  # often into /run (systemd-resolved)
        target = resolv.resolve()
        out += ["--ro-bind", str(target), str(target)]
    out += ["--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"]
    out += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/home", "--dir", HOME]
    for folder in [*_interpreter(), *show]:
        if not _within(folder, bound) and folder.exists():
            out += ["--ro-bind", str(folder), str(folder)]
            bound.append(folder)
    for secret in [*_pairbench_dirs(), *hide]:
        if _within(secret, bound) and secret.exists():
            out += ["--tmpfs", str(secret)]
    if api is not None:
        out += ["--ro-bind", str(api), API_MOUNT]
    out += ["--chdir", HOME, "--"]
    return Sandboxed([*out, *argv], {**env, "HOME": HOME, "TMPDIR": "/tmp"})


def _within(path: Path, folders: Sequence[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _interpreter() -> list[Path]:
    """What this interpreter needs: its prefix (a virtualenv), its base installation and
    its site-packages (a python engine's dependencies: pydantic, an engine's own)."""
    found = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent]
    found += [Path(p) for p in site.getsitepackages()]
    return [p.absolute() for p in found]


def _pairbench_dirs() -> list[Path]:
    """Every ``pairbench`` package folder this interpreter could import (installed, or an
    editable checkout's), so that no study's data is readable through site-packages."""
    found = {Path(p).resolve() for p in pairbench.__path__}
    for root in site.getsitepackages():
        candidate = Path(root, "pairbench")
        if candidate.is_dir():
            found.add(candidate.absolute())
    return sorted(found)


def pairbench_module(target: str | None) -> bool:
    """Whether ``target`` (``module:Class``) is pairbench's own code (the reference and
    ``openai`` engines): pinned by the lock's harness hash and run uncontained, as part of
    the harness (they import the whole of pairbench, Chromium's launcher included).

    >>> pairbench_module("pairbench.studies.attribution_reliability._heuristic:HeuristicEngine")
    True
    >>> pairbench_module("my_engine:Engine")
    False
    """
    return target is not None and target.partition(":")[0].split(".")[0] == "pairbench"


def engine_api(into: Path) -> Path:
    """A ``pairbench`` package holding only the engine API (the request and report
    records, ``AttributionEngine`` and the worker), written under ``into``; returns the
    folder to put on ``PYTHONPATH`` (mounted at ``API_MOUNT``).

    A python engine imports ``pairbench.studies.attribution_reliability.engines`` for
    ``EngineReport`` and friends; in the sandbox that is this copy, so nothing else of
    pairbench (its manifests, its scorer, the runner) is on the engine's path.
    """
    from pairbench import _model
    from pairbench.studies.attribution_reliability import engines
    from pairbench.studies.attribution_reliability.engines import _models, _protocol, _worker

    root = into / "api"
    pkg = root / "pairbench"
    eng = pkg / "studies" / "attribution_reliability" / "engines"
    eng.mkdir(parents=True, exist_ok=True)
    for folder in (pkg, pkg / "studies", pkg / "studies" / "attribution_reliability"):
        (folder / "__init__.py").write_text('"""pairbench\'s engine API only."""\n')
    shutil.copyfile(str(_model.__file__), pkg / "_model.py")
    for module in (_models, _protocol, _worker):
        shutil.copyfile(str(module.__file__), eng / Path(str(module.__file__)).name)
    names = [n for n in engines.__all__ if hasattr(_models, n) or hasattr(_protocol, n)]
    lines = ['"""pairbench\'s engine API in the sandbox: the records and the protocol."""\n']
    for module in (_models, _protocol):
        mine = ", ".join(n for n in names if hasattr(module, n))
        lines.append(f"from {module.__name__} import {mine}\n")
    lines.append(f"__all__ = {sorted(names)!r}\n")
    (eng / "__init__.py").write_text("".join(lines))
    return root
