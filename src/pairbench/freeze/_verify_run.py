"""Verifying a run: everything a report counts, against the journal's hash chain.

What is checked, in the order a report depends on it:

- the journal's chain (``_journal.py``): line 1 links to run.json's SHA-256, each line to
  the one before, so an edited run.json or journal line is named by its line number;
- every result and transcript a journal line names has the SHA-256 the line records, every
  row (what reports count) is the row of its result file, and no file is unjournaled;
- every other file a report reads (the proxy's logs, ``campaigns.json``, ``shared/``
  evidence, fixture audit logs, the report's own files) has the SHA-256 of the last journal
  line that records it (``store._recorded``);
- ``trials.npz`` was built from the journal as it is (its head) and holds the journal's rows;
- ``summary.json``, ``report.md`` and ``report.html`` were built from the journal as it
  is, and rebuilding them from the journal gives the same bytes;
- the run's ``lock.json`` and, when the experiment is still there, what changed since.

A run written before the chain gets a partial verification (every check but the chain's),
said in :attr:`RunCheck.partial`, never a traceback.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pairbench._errors import RunDirError, SpecError
from pairbench.freeze._hashing import sha256_path
from pairbench.freeze._lock import Lock, read_lock, rebuild_lock
from pairbench.freeze._verify import Mismatch, diff_locks
from pairbench.spec._load import load_experiment
from pairbench.store._events import AttemptFinished, JournalEvent, TrialRow
from pairbench.store._journal import Journal, check_chain
from pairbench.store._load_run import load_run, read_run_info
from pairbench.store._recorded import recorded_files, stored_paths
from pairbench.store._records import TrialResult
from pairbench.store._replaced import REPLACED, as_kept, superseded
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord
from pairbench.store._table import TrialTable

PARTIAL = "partial verification: written before journal chaining"
_REPORTS = ("summary.json", "report.md", "report.html")


@dataclass(frozen=True)
class RunCheck:
    """What :func:`check_run_integrity` found."""

    mismatches: list[Mismatch] = field(default_factory=list)
    partial: str | None = None
    """Set when part of the run could not be checked (a journal from before the chain)."""


def _inside(run_dir: Path, rel: str) -> Path | None:
    path = run_dir / rel
    try:
        ok = path.resolve().is_relative_to(run_dir.resolve()) and not Path(rel).is_absolute()
    except (OSError, ValueError):  # a name too long, a NUL byte, a symlink loop
        ok = False
    return path if ok else None


def _check_file(run_dir: Path, kind: str, rel: object, expected: object) -> Mismatch | None:
    if not isinstance(rel, str):
        return None
    path = _inside(run_dir, rel)
    if path is None:  # the journal names files inside the run; hashing /etc/passwd proves nothing
        return Mismatch(kind, rel, str(expected), "not a file inside the run directory")
    if not path.is_file():
        return Mismatch(kind, rel, str(expected), None)
    try:
        found = sha256_path(path)
    except OSError as exc:
        return Mismatch(kind, rel, str(expected), f"unreadable ({exc.strerror or exc})")
    return None if found == expected else Mismatch(kind, rel, str(expected), found)


def _check_row(run_dir: Path, line: int, event: AttemptFinished) -> Mismatch | None:
    """The journal line's row and outcome are those of the result file it names (whose
    hash was checked): a row is what reports count, so an edited one is a changed count."""
    rel, row = event.result, event.row
    path = _inside(run_dir, rel) if rel is not None else None
    if path is None or not path.is_file():
        return None  # named by the file check already
    try:
        result = TrialResult.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return Mismatch("result", str(rel), "a pairbench result", "not one")
    where = f"journal.jsonl:{line}"
    if event.outcome != result.outcome:
        return Mismatch("row", where, f"outcome {result.outcome} ({rel})", event.outcome)
    if row is None:
        return None  # a line from before rows were journaled
    kept = not str(rel).startswith("results/")
    expected = trial_row(result, kept=kept)
    if "fields" not in row.model_fields_set:
        # A line from before per-field verdicts were journaled: its row has none to compare.
        expected = expected.model_copy(update={"fields": None})
    if expected != row:
        diff = sorted(k for k in TrialRow.model_fields if getattr(expected, k) != getattr(row, k))
        return Mismatch("row", where, f"the row of {rel}", f"a row differing in {diff}")
    return None


def _check_journal(opened: RunDir, out: list[Mismatch]) -> tuple[list[TrialRow], bool]:
    """The chain, then each finished attempt's files and row; returns the rows and whether
    the journal is chained."""
    run_dir = opened.path
    chain = check_chain(opened.journal_path, opened.genesis())
    for line, problem in chain.problems:
        kind = "run.json" if line == 1 and "run.json" in problem else "journal"
        out.append(Mismatch(kind, f"journal.jsonl:{line}", "an unbroken hash chain", problem))
    rows: list[TrialRow] = []
    journaled: set[str] = set()
    line = 0
    events = Journal.read(opened.journal_path)
    moved = superseded(events)  # records an incomplete campaign's replacement superseded
    for line, event in enumerate(events, start=1):
        if not isinstance(event, AttemptFinished):
            continue
        event = as_kept(event, moved)
        result_ok = True
        for kind, rel, digest in (
            ("result", event.result, event.result_sha256),
            ("transcript", event.transcript, event.transcript_sha256),
        ):
            if rel is not None:
                journaled.add(rel)
            found = _check_file(run_dir, kind, rel, digest)
            if found:
                out.append(found)
                result_ok = result_ok and kind != "result"
        if event.result is not None and result_ok:
            bad = _check_row(run_dir, line, event)
            if bad:
                out.append(bad)
            if event.row is not None:
                rows.append(event.row)
    for folder in ("results", "infra", "interrupted", REPLACED, "transcripts"):
        root = run_dir / folder
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            rel = path.relative_to(run_dir).as_posix()
            if path.is_file() and not path.name.endswith(".partial") and rel not in journaled:
                out.append(Mismatch("unjournaled", rel, "a journal entry", None))
    _check_recorded(run_dir, events, out)
    return rows, chain.chained


def _check_recorded(run_dir: Path, events: list[JournalEvent], out: list[Mismatch]) -> None:
    """Every file a report reads beyond results and transcripts (the proxy's logs,
    campaigns.json, shared/ evidence, fixture audit logs, the report's own files) against
    the last journal line that records it; a proxy log, campaigns.json or shared/ file that
    no line records is named too (in a run that records files at all: an older run's are
    not, and are left to the checks it had)."""
    recorded = recorded_files(events)
    for rel, (line, digest) in sorted(recorded.items()):
        found = _check_file(run_dir, "recorded", rel, digest)
        if found:
            out.append(Mismatch(found.kind, rel, f"{digest} (journal.jsonl:{line})", found.found))
    if not recorded:
        return
    for rel in sorted(stored_paths(run_dir, ("proxy", "shared", "campaigns.json"))):
        if rel not in recorded:
            out.append(Mismatch("unrecorded", rel, "a journal entry", None))


def _same_table(a: TrialTable, b: TrialTable) -> bool:
    if dict(a.categories) != dict(b.categories) or set(a.columns) != set(b.columns):
        return False
    pairs = [(a.columns[k], b.columns[k]) for k in a.columns]
    pairs += [(a.calls[k], b.calls[k]) for k in a.calls]
    return all(
        x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f") for x, y in pairs
    )


def _check_table(opened: RunDir, rows: list[TrialRow], head: str) -> Mismatch | None:
    path = opened.path / "trials.npz"
    if not path.is_file():
        return None  # a cache: reports rebuild it from the journal
    try:
        with np.load(path, allow_pickle=False) as data:
            table, meta = TrialTable.from_npz(data)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        return Mismatch("table", "trials.npz", "a trial table", f"unreadable ({exc})")
    if meta.get("journal_head") != head:
        return Mismatch(
            "table", "trials.npz", f"built from journal head {head}", meta.get("journal_head")
        )
    try:
        rebuilt = TrialTable.from_rows(rows)
    except ValueError:
        return None  # a journal row the table cannot take: named by the row check
    if not _same_table(table, rebuilt):
        return Mismatch("table", "trials.npz", "the journal's rows", "other rows")
    return None


def _check_reports(opened: RunDir, head: str, out: list[Mismatch]) -> None:
    """Each report file was built from this journal, and rebuilding it gives its bytes."""
    present = [name for name in _REPORTS if (opened.path / name).is_file()]
    if not present:
        return
    stored = opened.path / "summary.json"
    try:
        summary = json.loads(stored.read_bytes())
    except (OSError, ValueError):
        summary = None
    if not isinstance(summary, dict):
        out.append(Mismatch("report", "summary.json", "a pairbench summary", "not one"))
        return
    run = summary.get("run") if isinstance(summary.get("run"), dict) else {}
    built_from = run.get("journal_head") if isinstance(run, dict) else None
    if built_from is None:
        return  # a report from before reports recorded their head: nothing to compare
    if built_from != head:
        out.append(
            Mismatch(
                "report",
                "summary.json",
                f"built from journal head {head} (re-run `pairbench report`)",
                built_from,
            )
        )
        return
    from pairbench.report._write import report_texts  # the statistics stack: only when there is one

    reps = summary.get("bootstrap_reps")
    texts = report_texts(
        opened.path,
        reps if isinstance(reps, int) and reps > 0 else None,
        use_cache=False,
        plots=summary.get("plots_drawn", True) is not False,  # as `pairbench run` wrote it
    )
    # The study's own files beside the report (results.json, say) are checked like the
    # report's: a hand-edited number there must not verify.
    for name in [*present, *sorted(set(texts) - set(_REPORTS))]:
        path = opened.path / name
        if not path.is_file():
            out.append(Mismatch("report", name, "the file a rebuild from the journal gives", None))
        elif path.read_bytes() != texts[name].encode("utf-8"):
            out.append(
                Mismatch("report", name, "the bytes a rebuild from the journal gives", "others")
            )


def _check_lock(run_dir: Path, info: RunRecord, out: list[Mismatch]) -> None:
    stored = run_dir / "lock.json"
    expected = info.lock_sha256
    if not expected:
        return
    if not stored.is_file():
        out.append(Mismatch("lock", "lock.json", expected, None))
        return
    if sha256_path(stored) != expected:
        out.append(Mismatch("lock", "lock.json", expected, sha256_path(stored)))
        return
    exp_file = Path(info.experiment_file or "")
    try:
        frozen = read_lock(stored)
    except SpecError:  # its bytes match run.json's hash: run.json was edited too
        out.append(Mismatch("lock", "lock.json", "a pairbench lock", "not one"))
        return
    _check_servers(run_dir, frozen, out)
    if exp_file.is_file():
        now = rebuild_lock(load_experiment(exp_file), frozen)
        out += [
            Mismatch(m.kind, f"{m.path} (experiment changed since the run)", m.expected, m.found)
            for m in diff_locks(frozen, now)
            if m.kind != "harness"
        ]


def _check_servers(run_dir: Path, frozen: Lock, out: list[Mismatch]) -> None:
    """Each server a trial identified against the one the lock names (same arm, name)."""
    if not frozen.servers:
        return
    locked = {(s.arm, s.server): s.identity for s in frozen.servers}
    seen: dict[tuple[str, str], set[str]] = {}
    for result in load_run(run_dir).results:
        for name, identity in result.servers.items():
            want = locked.get((result.arm, name))
            if want is None or identity == want:
                continue
            what = "; ".join(want.differences(identity)) or "a different server"
            seen.setdefault((result.arm, name), set()).add(what)
    for (arm, name), changes in sorted(seen.items()):
        for change in sorted(changes):
            out.append(
                Mismatch(
                    "server", f"arms.{arm}.tools.mcp.{name}", "the server the lock names", change
                )
            )


def check_run_integrity(run_dir: Path) -> RunCheck:
    """Check everything a report of the run counts (see the module docstring).

    Raises ``RunDirError`` when ``run.json`` or the journal cannot be read at all.

    **Usage**::

        check = check_run_integrity(Path("runs/<run-id>"))
        check.mismatches, check.partial
    """
    opened = RunDir.open(run_dir)
    info = read_run_info(opened)
    out: list[Mismatch] = []
    rows, chained = _check_journal(opened, out)
    head = opened.journal_head()
    table = _check_table(opened, rows, head)
    if table:
        out.append(table)
    if not out:  # a rebuild from a journal that does not verify would prove nothing
        try:
            _check_reports(opened, head, out)
        except RunDirError as exc:
            out.append(Mismatch("report", "summary.json", "a report rebuilt", str(exc)))
    _check_lock(opened.path, info, out)
    _check_imported(info, out)
    return RunCheck(out, None if chained else PARTIAL)


def _check_imported(info: RunRecord, out: list[Mismatch]) -> None:
    """An imported run's logs (outside the run folder) still have the bytes imported: a
    log edited after import is named (run.json, which records each hash, is chained)."""
    for log in (info.imported or {}).get("logs") or []:
        facts = log.get("facts") or {}
        where = Path(str(log.get("absolute_path") or facts.get("path") or ""))
        expected = facts.get("sha256")
        found = sha256_path(where) if where.is_file() else None
        if found != expected:
            out.append(Mismatch("imported-log", str(where), expected, found))
        for companion, hashed in (facts.get("companions") or {}).items():
            path = Path(companion)
            now = sha256_path(path) if path.is_file() else None
            if now != hashed:
                out.append(Mismatch("imported-log", companion, hashed, now))


def verify_run(run_dir: Path) -> list[Mismatch]:
    """Every mismatch :func:`check_run_integrity` finds (empty: the run verifies)."""
    return check_run_integrity(run_dir).mismatches
