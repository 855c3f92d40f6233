"""Group commit: attempts that finish together share fsyncs, in a power-cut-safe order.

An attempt's journal line must not name a file a power cut could still take away, and
fsync is the harness's dearest call per trial. The executor hands each journal event,
with the files it names, to :class:`GroupCommitter`; one writer thread commits whatever
is pending as one batch, in this order:

1. each new file (a result) is written to a temporary name and fsynced, then linked into
   place (never over an existing result); each file to move (a transcript) is fsynced
   through the handle that wrote it, then renamed into place. The entries' files are
   written by a few threads at once: the file system commits concurrent fsyncs together
   (one journal commit for many files on ext4), so a wave of 200 finishing attempts costs
   a few disk round trips, not 400 in a row;
2. every directory that gained or lost a name is fsynced once for the whole batch (the
   first time a directory is seen, also its parents up to the run directory, so a new
   folder survives a power cut too);
3. the batch's journal lines are written with one ``write`` and made durable with one
   fsync;
4. only then are the waiting attempts resumed (an attempt is not done before its line is
   durable).

The journal stays append-only JSONL: a crash leaves whole lines and at most one torn last
line, which readers drop. All of this runs off the event loop, so agents keep running while
a batch commits.

**Usage**::

    committer = GroupCommitter(journal, run_dir.path)
    await committer.commit(CommitEntry(AttemptStarted(key="a/t/0", attempt=1)))
    durable = committer.submit(CommitEntry(finished, (PutFile(result_path, data),)))
    await durable                 # the files and the line are on disk
    committer.queue(CommitEntry(interrupted, (PutFile(result_path, data),)))  # no waiter
    await committer.aclose()      # commits whatever is still pending (Ctrl-C included)
    committer.unstored            # the first error of a queued entry, or None
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel

from pairbench._atomic import fsync_dir
from pairbench.store._journal import Journal

_TMP_NAMES = itertools.count()
"""Numbers the temporary names of the files batches write. This process's id and a number
are unique among the run's writes (it has one writer), and O_EXCL skips a name an earlier
crash left; a random name would cost an ``os.urandom`` syscall per file."""

FILE_THREADS = 8
"""Files written and fsynced at once in a batch (more gains little on one disk: measured
200 fsyncs in 0.20 s with one thread, 0.04 s with 8, 0.05 s with 32)."""


@dataclass(frozen=True)
class PutFile:
    """New bytes for ``path``: written to a temporary name, fsynced, linked into place."""

    path: Path
    data: bytes
    overwrite: bool = False
    """False (a trial's result): an existing file is an error and is left as it is."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class MoveFile:
    """A file the harness streamed (a transcript): fsynced, then renamed to ``target``."""

    source: Path
    target: Path
    handle: BinaryIO | None = None
    """The open file that wrote ``source``, fsynced through and closed; None: opened by path."""


@dataclass(frozen=True)
class CommitEntry:
    """One journal event and the files it names; the files are durable before the line."""

    event: BaseModel
    """The line, as a model of ``_events.py``."""
    files: tuple[PutFile | MoveFile, ...] = ()


@dataclass
class _Waiting:
    entry: CommitEntry
    line: bytes
    future: asyncio.Future[None]
    error: BaseException | None = field(default=None)


class GroupCommitter:
    """Commits journal events and their files in batches, off the event loop (see above).

    An entry without files may be written ahead of pending entries that have files, even in
    the middle of a batch (so an attempt's start is not held up by another attempt's
    result files). Submit an entry only
    once whatever it depends on is durable, as the executor does: a trial's next attempt
    starts after its previous attempt's line is durable.
    """

    def __init__(self, journal: Journal, root: Path) -> None:
        self._journal = journal
        self._root = root
        self._lock = threading.Lock()  # guards _pending: the writer takes late joiners
        self._pending: list[_Waiting] = []
        self._drainer: asyncio.Task[None] | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pairbench-commit")
        # Writes and fsyncs a batch's files side by side (see the module's step 1).
        self._files = ThreadPoolExecutor(max_workers=FILE_THREADS, thread_name_prefix="pb-fsync")
        self._known_dirs: set[Path] = set()  # exist, and their own entry is durable
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queued: list[asyncio.Future[None]] = []
        self.batches = 0
        """Journal fsyncs so far (one per batch)."""

    # -- the event loop's side ---------------------------------------------------------------
    def submit(self, entry: CommitEntry) -> asyncio.Future[None]:
        """Queue ``entry``; the future resolves once its files and line are durable.

        The caller awaits the future (its failure is the caller's error); an entry no one
        will wait for goes through :meth:`queue`, or a failed future would be an exception
        nobody retrieves.
        """
        loop = self._loop = asyncio.get_running_loop()
        # Stamped now: "at" is when the event happened, not when its batch was written.
        waiting = _Waiting(entry, Journal.encode(entry.event), loop.create_future())
        with self._lock:
            self._pending.append(waiting)
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())
        return waiting.future

    async def commit(self, entry: CommitEntry) -> None:
        """Queue ``entry`` and wait until it is durable."""
        await self.submit(entry)

    def queue(self, entry: CommitEntry) -> None:
        """Queue ``entry`` with no one to wait for it (a task being cancelled queues its
        attempt's ``interrupted`` record): :meth:`aclose` commits it, and its failure is
        :attr:`unstored`, not an exception nobody retrieves."""
        self._queued.append(self.submit(entry))

    @property
    def unstored(self) -> BaseException | None:
        """The first error that kept a :meth:`queue`d entry from the disk (after
        :meth:`aclose`), or None: every queued entry is durable."""
        for future in self._queued:
            if future.done() and not future.cancelled() and future.exception() is not None:
                return future.exception()
        return None

    async def aclose(self) -> None:
        """Commit everything still pending, then stop the writer thread."""
        while self._drainer is not None and not self._drainer.done():
            # Shielded: a second Ctrl-C must not abandon records that are being written.
            await asyncio.shield(self._drainer)
        self._pool.shutdown(wait=True)
        self._files.shutdown(wait=True)
        # Every queued entry's outcome is looked at here, so a failed one is reported once
        # (by whoever reads `unstored`), never as asyncio's "never retrieved" warning.
        for future in self._queued:
            if future.done() and not future.cancelled():
                future.exception()

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
            if not batch:
                return
            committed = await loop.run_in_executor(self._pool, self._write_batch, batch)
            for waiting in committed:
                _settle(waiting)

    # -- the writer thread's side --------------------------------------------------------------
    def _write_batch(self, batch: list[_Waiting]) -> list[_Waiting]:
        late: list[_Waiting] = []
        try:
            self._commit(batch, late)
        except Exception as exc:
            # Unexpected (a bug, not a disk error): fail the waiters rather than leave
            # their attempts waiting forever.
            for waiting in [*batch, *late]:
                waiting.error = waiting.error or exc
        return [*batch, *late]

    def _commit(self, batch: list[_Waiting], late: list[_Waiting]) -> None:
        dirs: dict[Path, None] = {}  # an ordered set: fsynced once each, after every link
        fresh: list[Path] = []  # folders first seen in this batch
        placing: list[tuple[_Waiting, Future[None]]] = []
        for waiting in batch:
            try:
                # Folders are made here, one thread: the bookkeeping of known folders is
                # not shared with the file threads.
                for file in waiting.entry.files:
                    self._folders(file, dirs, fresh)
            except Exception as exc:
                # This entry's line is not written; the others in the batch go on.
                waiting.error = exc
                continue
            placing.append((waiting, self._files.submit(_write_files, waiting.entry.files)))
        for waiting, placed in placing:
            self._early_starts()
            try:
                placed.result()
            except Exception as exc:
                waiting.error = exc
        ok = [w for w in batch if w.error is None]
        try:
            # Side by side too; every one is done before a line names what they hold.
            for _ in self._files.map(fsync_dir, dirs):
                pass
        except OSError as exc:
            for waiting in ok:
                waiting.error = exc
            return
        self._known_dirs.update(fresh)
        late.extend(self._late_joiners())
        lines = [*ok, *late]
        if lines:  # when every entry failed: nothing to write, no fsync to pay
            self._write_lines(lines)

    def _write_lines(self, lines: list[_Waiting]) -> None:
        """The lines with one write and one fsync; on a disk error, each line's waiter fails."""
        try:
            self._journal.write_lines([w.line for w in lines])
            self.batches += 1
        except OSError as exc:
            for waiting in lines:
                waiting.error = exc

    def _early_starts(self) -> None:
        """Lines without files (attempt starts) queued while this batch writes its files
        are made durable between its entries: an agent waits for its start line, and must
        not wait for hundreds of other attempts' result files (a wave of finishing
        attempts at high concurrency). Such a line names no file, so it may go first."""
        if self._loop is None:  # nothing was submitted yet
            return
        early = self._late_joiners()
        if early:
            self._write_lines(early)
            # One hand-over for all of them: each call_soon_threadsafe writes a byte to
            # wake the event loop, a syscall apiece (a wave of hundreds of starts).
            self._loop.call_soon_threadsafe(_settle_all, early)

    def _late_joiners(self) -> list[_Waiting]:
        """Entries without files queued while this batch's files were written: their lines
        ride on this batch's journal fsync instead of waiting for the next batch."""
        with self._lock:
            late = [w for w in self._pending if not w.entry.files]
            if late:
                self._pending = [w for w in self._pending if w.entry.files]
        return late

    def _folders(self, file: PutFile | MoveFile, dirs: dict[Path, None], fresh: list[Path]) -> None:
        """Make (once) the folder ``file`` lands in; note every directory to fsync."""
        if isinstance(file, PutFile):
            self._directory(file.path.parent, dirs, fresh)
            return
        self._directory(file.target.parent, dirs, fresh)
        dirs[file.source.parent] = None  # it loses a name

    def _directory(self, path: Path, dirs: dict[Path, None], fresh: list[Path]) -> None:
        dirs[path] = None
        if path in self._known_dirs:
            return  # no mkdir on the hot path: made (and made durable) once per run
        path.mkdir(parents=True, exist_ok=True)
        # A folder's own name lives in its parent: fsync the chain up to the run directory
        # once, or a power cut could lose a new folder with the files in it.
        for directory in (path, *path.parents):
            if directory in self._known_dirs:
                break
            dirs[directory] = None
            fresh.append(directory)
            if directory == self._root:
                break

    @staticmethod
    def _put(file: PutFile) -> None:
        folder, _, name = os.fspath(file.path).rpartition("/")
        while True:
            tmp = f"{folder}/.{name}.{os.getpid()}-{next(_TMP_NAMES)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:  # a leftover of an earlier crash: take the next number
                continue
        try:
            try:
                view = memoryview(file.data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            if file.overwrite:
                os.replace(tmp, file.path)
            else:
                # link() fails if the target exists, so a stored result is never replaced.
                os.link(tmp, file.path)
                os.unlink(tmp)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _write_files(files: tuple[PutFile | MoveFile, ...]) -> None:
    """One entry's files, in a file thread: each durable under its final name."""
    for file in files:
        if isinstance(file, PutFile):
            GroupCommitter._put(file)
        else:
            _move(file)


def _move(file: MoveFile) -> None:
    if file.handle is not None:
        try:
            file.handle.flush()
            os.fsync(file.handle.fileno())
        finally:
            file.handle.close()
    else:
        fd = os.open(file.source, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.replace(file.source, file.target)


def _settle_all(waiting: list[_Waiting]) -> None:
    """:func:`_settle` each, in order (one event loop callback)."""
    for one in waiting:
        _settle(one)


def _settle(waiting: _Waiting) -> None:
    """Resolve a waiter on the event loop: done, or failed with its error."""
    if waiting.future.done():  # its attempt was cancelled while it waited
        return
    if waiting.error is None:
        waiting.future.set_result(None)
    else:
        waiting.future.set_exception(waiting.error)
