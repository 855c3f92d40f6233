"""An attempt's folders: made in threads, ahead of its slot when possible, TMPDIR kept short."""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pairbench.runner._context import RunContext
from pairbench.schedule._plan import TrialKey

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


def premake_folders(rc: RunContext, key: TrialKey, attempt: int) -> None:
    """Make an attempt's folders ahead of its slot (``run_attempt`` makes any missing).

    The executor calls this, in the folder threads, while the attempt waits for a slot or
    for its pair's earlier arm: a wave of attempts starting together then finds its work,
    HOME and TMPDIR folders made, instead of waiting on the disk for them.
    """
    work = rc.run_dir.path / "work" / rc.run_dir.fixture_rel(key, attempt)
    folders = [rc.run_dir.transcript_path(key).parent]
    if rc.uses_workdir(key.arm):
        folders += [work / "home"]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)


def short_tmp() -> Path:
    """A new private temp folder with a short path, for one attempt's agent and servers.

    Unix socket paths hold 108 bytes: Chromium (and any server binding a socket in
    ``TMPDIR``) fails under a deep run folder, so TMPDIR is never inside the run folder.
    """
    base = tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix="pb-", dir=base if len(base) <= 24 else "/tmp"))
