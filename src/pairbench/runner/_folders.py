"""An attempt's folders: made in threads, ahead of its slot when possible, TMPDIR kept short."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pairbench.runner._context import RunContext
from pairbench.schedule._plan import TrialKey
from pairbench.store._walk import remove_tree

_POOLS: dict[str, ThreadPoolExecutor] = {}


def folder_pool(kind: str = "attempt") -> ThreadPoolExecutor:
    """Threads for folder and file creation (metadata writes wait on the disk, not the
    CPU: more of them than cores keeps a wave of starting attempts moving). ``attempt``
    serves attempts about to run; ``ahead`` makes folders ahead of time, apart, so those
    never queue behind it."""
    if kind not in _POOLS:
        workers = 16 if kind == "attempt" else 4
        _POOLS[kind] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"pb-{kind}")
    return _POOLS[kind]


class AheadFolders:
    """Makes attempts' folders ahead of their slots (``run_attempt`` makes any missing).

    The executor calls :meth:`premake`, in the folder threads, while the attempt waits for a
    slot or for its pair's earlier arm: a wave of attempts starting together then finds its
    work, HOME and TMPDIR folders made, instead of waiting on the disk for them.

    A task's transcript folder is shared by all its attempts of an arm: once made here, it
    is not made again, and an attempt of an in-process adapter (no work folder) whose
    transcript folder is made has nothing to make ahead (:meth:`needed`), so it costs no
    thread hop. Should the folder vanish, the attempt's transcript makes it again.
    """

    def __init__(self, rc: RunContext) -> None:
        self._rc = rc
        self._made: set[tuple[str, str]] = set()
        """(arm, task) whose transcript folder this invocation made (a set's add and ``in``
        are atomic: the folder threads add, the event loop asks)."""

    def needed(self, key: TrialKey) -> bool:
        """Whether the attempt has folders to make ahead."""
        return (key.arm, key.task) not in self._made or self._rc.uses_workdir(key.arm)

    def premake(self, key: TrialKey, attempt: int) -> None:
        """Make the attempt's folders (in a folder thread)."""
        rc = self._rc
        if (key.arm, key.task) not in self._made:
            rc.run_dir.transcript_path(key).parent.mkdir(parents=True, exist_ok=True)
            self._made.add((key.arm, key.task))
        if rc.uses_workdir(key.arm):
            rel = rc.run_dir.fixture_rel(key, attempt)
            (rc.run_dir.work_folder(rel) / "home").mkdir(parents=True, exist_ok=True)


def short_tmp(run: Path) -> Path:
    """A new private temp folder with a short path, for one attempt's agent and servers.

    Unix socket paths hold 108 bytes: Chromium (and any server binding a socket in
    ``TMPDIR``) fails under a deep run folder, so TMPDIR is never inside the run folder.
    Its name carries a tag of the run folder ``run``: a run killed outright (SIGKILL, a
    lost machine) cannot remove its attempts' folders, and its resume finds them by that
    tag (see ``sweep_short_tmps``), so nothing an agent wrote stays in /tmp for good.
    """
    return Path(tempfile.mkdtemp(prefix=_prefix(run), dir=_short_base()))


def sweep_short_tmps(run: Path) -> None:
    """Remove the short temp folders a killed process of the run in ``run`` left behind
    (the caller holds the run's writer lock: no live attempt of it uses one)."""
    for folder in _short_base().glob(_prefix(run) + "*"):
        remove_tree(folder)


def _short_base() -> Path:
    base = tempfile.gettempdir()
    return Path(base if len(base) <= 24 else "/tmp")


@functools.lru_cache(maxsize=16)
def _prefix(run: Path) -> str:
    # Once per run folder, not per attempt (resolving a path is an lstat per part).
    # 8 hex digits of the run folder's real path: short (the socket limit above); two
    # run folders share a tag with odds of 1 in 4 billion.
    tag = hashlib.sha256(os.fsencode(run.resolve())).hexdigest()[:8]
    return f"pb-{tag}-"
