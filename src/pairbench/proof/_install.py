"""Install the mounted-byte probe into a folder on the runtime's path, and the env it needs.

The probe is three files with fixed bytes (``PROBE_FILES``); their identity ``PROBE_SHA256``
belongs to the harness hash:

- ``_pairbench_mounted.py``: the probe (``pairbench/proof/_mounted_probe.py``, copied);
- ``00-pairbench-mounted.pth``: starts it when the folder is a site-packages (an arm venv's);
  ``00-`` sorts it before other ``.pth`` files, so it sees their imports;
- ``sitecustomize.py``: starts it when the folder is on ``PYTHONPATH``, where site reads no
  ``.pth`` file, then runs the ``sitecustomize`` it hides, if any.

``PROBE_SHA256`` (``pbprobe/1``) is the SHA-256 of the lines ``NAME\\0SHA256(BYTES)\\n`` of the
three files, sorted by name: equal values mean byte-equal probes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from pairbench._model import Frozen
from pairbench.proof import _mounted_probe
from pairbench.proof._errors import ProofError

PROBE_MODULE = "_pairbench_mounted"
_PTH = b"import _pairbench_mounted; _pairbench_mounted.start()\n"
_SHIM = b'''"""pairbench's mounted-byte probe, started from PYTHONPATH, where site reads no .pth
file; the sitecustomize this file hides then runs as it would have."""
import _pairbench_mounted

_pairbench_mounted.start()
_pairbench_mounted.chain_sitecustomize(__file__)
'''


def _probe_files() -> dict[str, bytes]:
    return {
        f"{PROBE_MODULE}.py": Path(_mounted_probe.__file__).read_bytes(),
        "00-pairbench-mounted.pth": _PTH,
        "sitecustomize.py": _SHIM,
    }


def probe_sha256(files: Mapping[str, bytes]) -> str:
    """The ``pbprobe/1`` identity of probe files (name -> bytes).

    >>> probe_sha256({"a.py": b""}) == probe_sha256({"a.py": b""})
    True
    """
    lines = [f"{name}\0{hashlib.sha256(data).hexdigest()}\n" for name, data in files.items()]
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8")).hexdigest()


PROBE_FILES: Mapping[str, bytes] = MappingProxyType(_probe_files())
"""The probe's files, name -> bytes, exactly as ``install_probe`` writes them."""
PROBE_SHA256: str = probe_sha256(PROBE_FILES)
"""The probe's identity (``pbprobe/1``): part of the harness hash."""

_HERE = Path(__file__).parent
NODE_PRELOAD = "_node_probe.cjs"
NODE_PROBE_FILES: Mapping[str, bytes] = MappingProxyType(
    {name: (_HERE / name).read_bytes() for name in (NODE_PRELOAD, "_node_probe_esm.mjs")}
)
"""The Node probe's files (``kind: node``): the preload and the ES module hook it registers."""
NODE_PROBE_SHA256: str = probe_sha256(NODE_PROBE_FILES)
"""The Node probe's identity (``pbprobe/1`` over its files)."""


class ProbeInstall(Frozen):
    """Where a probe was installed and what it is to watch; ``probe_env`` turns it into env.

    **Usage**::

        probe = install_probe(trial / "probe", worktree, ["minirt"], trial / "mounted.jsonl")
        env = {**env, **probe_env(probe, trial / "pycache")}
    """

    target_dir: str
    """The folder holding the probe files (absolute)."""
    probe_sha256: str
    """``PROBE_SHA256`` of the files written there."""
    runtime_root: str
    """The runtime's worktree (absolute): files opened under it are recorded too."""
    packages: list[str]
    """The runtime's top-level packages: loading one from elsewhere is ``shadowed``."""
    log_path: str
    """The ``mounted.jsonl`` every probed process appends to (absolute)."""
    kind: str = "python"
    """``python`` or ``node``: which probe, so which env starts it."""


def install_probe(
    target_dir: Path,
    runtime_root: Path,
    packages: Sequence[str],
    log_path: Path,
    kind: str = "python",
) -> ProbeInstall:
    """Write the probe's files into ``target_dir`` (made if missing); what was installed.

    ``target_dir`` goes on the runtime's ``PYTHONPATH`` (``probe_env`` does it) or is an arm
    venv's site-packages. A file there of the same name and other bytes is refused
    (``ProofError``), so a runtime's own ``sitecustomize.py`` is never overwritten.

    **Usage**::

        probe = install_probe(trial / "probe", Path(tree.path), ["minirt"],
                              trial / "mounted.jsonl")
        probe.probe_sha256 == PROBE_SHA256       # True: the harness identity is what runs
    """
    if not packages and kind == "python":
        raise ProofError("install_probe: no package named. Fix: name the runtime's packages")
    files = NODE_PROBE_FILES if kind == "node" else PROBE_FILES
    target = Path(target_dir).absolute()
    target.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = target / name
        if path.exists() and path.read_bytes() != data:
            raise ProofError(
                f"{path}: exists and is not pairbench's probe. Fix: install the probe into "
                "a folder of its own"
            )
        path.write_bytes(data)
    written = {name: (target / name).read_bytes() for name in files}
    return ProbeInstall(
        target_dir=str(target),
        probe_sha256=probe_sha256(written),
        runtime_root=str(Path(runtime_root).absolute()),
        packages=list(packages),
        log_path=str(Path(log_path).absolute()),
        kind=kind,
    )


def probe_env(
    probe: ProbeInstall,
    pycache_prefix: Path,
    *,
    pythonpath: Sequence[str | Path] = (),
    roots: Sequence[str | Path] = (),
    in_site_packages: bool = False,
) -> dict[str, str]:
    """The environment variables to add to the runtime's env for ``probe`` to run and record.

    A ``node`` probe needs ``NODE_OPTIONS`` (``--require`` its preload) and the log; the
    rest is Python's:

    - ``PYTHONPATH``: the probe folder first (its ``sitecustomize`` must win over any later
      one, which it then runs), then ``pythonpath`` (e.g. the worktree). With
      ``in_site_packages`` (the probe is in the arm venv's site-packages, whose ``.pth``
      starts it) the probe folder is left out: on ``PYTHONPATH`` it would come before the
      standard library;
    - ``PAIRBENCH_MOUNTED_LOG``: the log; ``PAIRBENCH_MOUNTED_ROOTS``: the runtime root and
      ``roots`` (installed copies of it), under which opened files are recorded;
    - ``PYTHONPYCACHEPREFIX``: ``pycache_prefix``, made here and required empty, so no
      ``__pycache__`` beside a source (stale, or unchecked-hash) is ever read;
    - ``PYTHONDONTWRITEBYTECODE=1``: nothing is written there either, so every process
      compiles what it imports and its log holds the source bytes compiled. Otherwise a
      child would run the bytecode its parent cached, which the verdict must call
      ``bytecode`` (it cannot tell a fresh cache from a stale one). Costs a compile of
      each imported module per process.

    **Usage**::

        env = {"PATH": os.environ["PATH"], **probe_env(probe, trial / "pycache",
                                                       pythonpath=[tree.path])}
    """
    watched = [probe.runtime_root, *(str(Path(r).absolute()) for r in roots)]
    if probe.kind == "node":
        # Every Node process of the trial (children inherit NODE_OPTIONS) preloads the probe.
        preload = json.dumps(str(Path(probe.target_dir) / NODE_PRELOAD))
        Path(probe.log_path).parent.mkdir(parents=True, exist_ok=True)  # Node makes no folder
        return {
            "NODE_OPTIONS": f"--require {preload}",
            _mounted_probe.ENV_LOG: probe.log_path,
            _mounted_probe.ENV_ROOTS: os.pathsep.join(watched),
        }
    prefix = Path(pycache_prefix).absolute()
    prefix.mkdir(parents=True, exist_ok=True)
    if any(prefix.iterdir()):
        raise ProofError(
            f"{prefix}: the bytecode cache prefix is not empty, so stale bytecode could run. "
            "Fix: give each trial a new, empty folder"
        )
    path = [] if in_site_packages else [probe.target_dir]
    path += [str(Path(p).absolute()) for p in pythonpath]
    env = {} if not path else {"PYTHONPATH": os.pathsep.join(path)}
    return env | {
        _mounted_probe.ENV_LOG: probe.log_path,
        _mounted_probe.ENV_ROOTS: os.pathsep.join(watched),
        "PYTHONPYCACHEPREFIX": str(prefix),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
