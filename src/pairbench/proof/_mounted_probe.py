"""The mounted-byte probe: runs inside every Python process of a runtime under test.

``pairbench.proof.install_probe`` copies these bytes, unchanged, as ``_pairbench_mounted.py``
into a folder on the runtime's path, with a ``.pth`` line (site-packages) and a
``sitecustomize.py`` shim (``PYTHONPATH``) that call ``start()`` at interpreter start-up.
Pure stdlib, Python 3.8+, no third-party import: it runs in the runtime's own interpreter.
Imported without ``PAIRBENCH_MOUNTED_LOG`` in the environment it does nothing.

**What it records** (one JSON line per file, appended to ``$PAIRBENCH_MOUNTED_LOG``)::

    {"kind": "source", "path": "/abs/minirt/core.py", "sha256": "...", "size": 120,
     "module": "minirt.core", "pid": 4242, ...}

- ``source``: the bytes a ``SourceFileLoader`` handed to ``source_to_code``, i.e. exactly
  what was compiled (not the file re-read later, which could have changed in between);
- ``bytecode``: a ``.pyc`` whose code was used instead of compiling a source (a sourceless
  ``x.pyc``, or a cache hit of a ``SourceFileLoader``; ``source_path`` then names the source
  it claims to be compiled from). Its bytes are those the loader read and unmarshalled;
- ``extension``: an extension module's file, hashed right after it was loaded;
- ``source`` of ``__main__`` too: a script run as ``python script.py`` (the
  ``cpython.run_file`` audit event), hashed just before the interpreter reads it;
- ``opened``: a regular file opened read-only under one of ``$PAIRBENCH_MOUNTED_ROOTS``
  (``os.pathsep``-separated), from the ``open`` audit event, hashed when opened;
- ``start`` (one per process: ``ppid``, ``detail`` = ``sys.executable``) and ``error`` (the
  probe failed somewhere; ``detail`` says where and why; the runtime went on untouched).

Paths are real paths (symlinks resolved). ``early`` marks modules imported before the probe
started (by site and other ``.pth`` files): their files are hashed when the probe starts.

**Why loader hooks rather than audit events.** The ``compile`` audit event sees the source
bytes too, but not which module or loader they were for, and the import of a ``.pyc`` never
compiles: it only unmarshals, which no audit event reports with its bytes. Wrapping
``get_code``/``get_data``/``source_to_code`` of the standard file loaders sees both, with
the module name, and tells a compile from a cache hit. Audit hooks cannot be removed and see
every event of the process, so the one installed here does two things: ``open``, and
``cpython.run_file`` (the main script, which no loader compiles).

**Durability.** Each line is one ``os.write`` to a descriptor opened ``O_APPEND`` for that
line and closed after it, so a SIGKILLed process leaves every line it finished, lines of
concurrent processes do not interleave, and a runtime that closes all its descriptors (or
forks) cannot make the probe write into one of its own files.

**Never breaking the runtime.** The wrapped loader methods run the original exactly once,
with its result and exceptions passed through unchanged; everything the probe adds runs in
``try``, and a failure there becomes an ``error`` line (or nothing, if even that fails).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import stat
import sys
import threading
from collections.abc import Callable
from importlib import machinery
from typing import Any

ENV_LOG = "PAIRBENCH_MOUNTED_LOG"
ENV_ROOTS = "PAIRBENCH_MOUNTED_ROOTS"

_state = threading.local()  # .busy: inside the probe; .frames: loads in progress
_started = False
_log = ""
_roots: tuple[str, ...] = ()
_seen: set[tuple[object, ...]] = set()


class _Frame:
    """What one ``get_code`` call read and compiled, filled by the wrapped methods below."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, bytes]] = []
        self.compiled: tuple[str, bytes] | None = None


def start() -> None:
    """Record this process and hook its loaders, once, if ``PAIRBENCH_MOUNTED_LOG`` is set."""
    global _started, _log
    log = os.environ.get(ENV_LOG, "")
    if _started or not log:
        return
    _started = True
    _log = log
    _guarded("start", _start)


def _start() -> None:
    global _roots
    roots = os.environ.get(ENV_ROOTS, "").split(os.pathsep)
    _roots = tuple(os.path.realpath(r) for r in roots if r)
    _write({"kind": "start", "ppid": os.getppid(), "detail": sys.executable})
    for name, module in list(sys.modules.items()):
        try:
            _early(name, module)
        except Exception as exc:  # one odd module must not hide the others
            _error("early " + name, exc)
    _hook_file_loader(machinery.SourceFileLoader)
    _hook_file_loader(machinery.SourcelessFileLoader)
    _wrap(machinery.SourceFileLoader, "source_to_code", _source_to_code)
    _wrap(machinery.ExtensionFileLoader, "create_module", _create_module)
    if _roots:
        sys.addaudithook(_audit)  # last: it cannot be removed again


def _early(name: str, module: object) -> None:
    """Record a module imported before the probe started, from its file as it is now."""
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None)
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not os.path.isfile(origin):
        return  # built-in, frozen, namespace package
    if isinstance(loader, machinery.SourceFileLoader):
        kind = "source"
    elif isinstance(loader, machinery.SourcelessFileLoader):
        kind = "bytecode"
    elif isinstance(loader, machinery.ExtensionFileLoader):
        kind = "extension"
    else:
        return
    _record(kind, origin, _read(origin), name, early=True)


def _wrap(cls: type, name: str, make: Callable[[Any], Any]) -> None:
    # Set on the public classes the path finders instantiate: their instances and
    # subclasses see the wrapper; ``setattr`` because the probe has no other way in.
    setattr(cls, name, make(getattr(cls, name)))


def _hook_file_loader(cls: type) -> None:
    _wrap(cls, "get_code", _get_code)
    _wrap(cls, "get_data", _get_data)


def _get_code(original: Any) -> Any:
    def get_code(self: Any, fullname: str) -> Any:
        frames = _frames()
        frame = _Frame()
        frames.append(frame)
        try:
            code = original(self, fullname)
        finally:
            frames.pop()
        if code is not None:
            _guarded("get_code", _loaded, self, fullname, frame)
        return code

    return get_code


def _get_data(original: Any) -> Any:
    def get_data(self: Any, path: str) -> Any:
        data = original(self, path)
        frames = getattr(_state, "frames", None)
        if frames and isinstance(data, bytes):
            frames[-1].reads.append((path, data))
        return data

    return get_data


def _source_to_code(original: Any) -> Any:
    def source_to_code(self: Any, data: Any, path: Any, *args: Any, **kwargs: Any) -> Any:
        frames = getattr(_state, "frames", None)
        if frames and isinstance(data, bytes) and isinstance(path, str):
            frames[-1].compiled = (path, data)
        return original(self, data, path, *args, **kwargs)

    return source_to_code


def _create_module(original: Any) -> Any:
    def create_module(self: Any, spec: Any) -> Any:
        module = original(self, spec)
        _guarded("create_module", _extension, self, spec)
        return module

    return create_module


def _frames() -> list[_Frame]:
    frames: list[_Frame] | None = getattr(_state, "frames", None)
    if frames is None:
        frames = _state.frames = []
    return frames


def _loaded(loader: Any, fullname: str, frame: _Frame) -> None:
    """Record what one ``get_code`` turned into code: compiled source, or read bytecode."""
    if frame.compiled is not None:
        path, data = frame.compiled
        _record("source", path, data, fullname)
        return
    source = getattr(loader, "path", None) if hasattr(loader, "source_to_code") else None
    # A checked hash-based .pyc makes the loader read the source too: the code still
    # comes from the .pyc, which is the read that is not the source.
    reads = [(p, d) for p, d in frame.reads if p != source]
    if reads:
        path, data = reads[-1]
        _record("bytecode", path, data, fullname, source_path=source)


def _extension(loader: Any, spec: Any) -> None:
    path = getattr(loader, "path", None) or getattr(spec, "origin", None)
    if isinstance(path, str) and os.path.isfile(path):
        _record("extension", path, _read(path), getattr(spec, "name", None))


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "cpython.run_file":
        _guarded("run_file", _main_script, args)
        return
    if event != "open" or getattr(_state, "busy", False) or getattr(_state, "frames", None):
        return  # not an open, the probe's own, or a loader's (recorded as a load)
    _guarded("open", _opened, args)


def _main_script(args: tuple[Any, ...]) -> None:
    """``python script.py``: the interpreter reads and compiles the script itself, with no
    loader to wrap, so its bytes are recorded as ``__main__``'s source when it is about to
    run them (a single-file runtime is covered)."""
    path = args[0] if args else None
    if isinstance(path, (str, bytes)) and os.path.isfile(path):
        _record("source", os.fsdecode(path), _read(os.fsdecode(path)), "__main__")


def _opened(args: tuple[Any, ...]) -> None:
    path, mode, flags = (*args, None, None, None)[:3]
    if not isinstance(path, (str, bytes)):
        return  # a file descriptor: opened earlier, by path
    if isinstance(flags, int):
        if flags & os.O_ACCMODE != os.O_RDONLY:
            return  # writing is not loading
    elif not isinstance(mode, str) or "r" not in mode or "+" in mode:
        return
    real = os.path.realpath(os.path.abspath(os.fsdecode(path)))
    if not any(real.startswith(root + os.sep) for root in _roots):
        return
    try:
        info = os.stat(real)
    except OSError:
        return  # the runtime's own open fails too: nothing was loaded
    if not stat.S_ISREG(info.st_mode):
        return  # a FIFO or device would block or never end
    key = ("opened", real, info.st_size, info.st_mtime_ns, info.st_ino)
    if key in _seen:
        return
    _seen.add(key)
    _record("opened", real, _read(real), None)


def _record(
    kind: str,
    path: str,
    data: bytes,
    module: str | None,
    source_path: str | None = None,
    early: bool = False,
) -> None:
    real = os.path.realpath(os.fsdecode(path))
    digest = hashlib.sha256(data).hexdigest()
    key = (kind, real, digest, module)
    if key in _seen:
        return  # the same bytes again (a reload, linecache): one line is the evidence
    _seen.add(key)
    record: dict[str, Any] = {
        "kind": kind, "path": real, "sha256": digest, "size": len(data), "module": module,
    }  # fmt: skip
    if source_path is not None:
        record["source_path"] = os.path.realpath(source_path)
    if early:
        record["early"] = True
    _write(record)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _guarded(where: str, fn: Callable[..., None], *args: Any) -> None:
    """Run ``fn`` as the probe: not re-entered by its own opens, its failures swallowed."""
    if getattr(_state, "busy", False):
        return
    _state.busy = True
    try:
        fn(*args)
    except Exception as exc:
        _error(where, exc)
    finally:
        _state.busy = False


def _error(where: str, exc: BaseException) -> None:
    # If even this fails, the log is gone: the verdict finds no records, says unavailable.
    with contextlib.suppress(Exception):
        _write({"kind": "error", "detail": f"{where}: {type(exc).__name__}: {exc}"})


def _write(record: dict[str, Any]) -> None:
    record["pid"] = os.getpid()
    line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode("ascii")
    fd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        while line:  # a regular file takes it whole; the loop is for the odd short write
            line = line[os.write(fd, line) :]
    finally:
        os.close(fd)


def chain_sitecustomize(shim: str) -> None:
    """Run the ``sitecustomize`` that the probe's shim at ``shim`` hides, as site would have.

    Its own exceptions pass through to site, which reports them as it always does.
    """
    here = os.path.realpath(os.path.dirname(shim))
    try:
        rest = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
        spec = machinery.PathFinder.find_spec("sitecustomize", rest)
    except Exception as exc:
        _error("sitecustomize", exc)
        return
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
