"""``write_report``: a run's summary.json, report.md and report.html, each written atomically.

The three stages meet here: ``summary`` (the typed Summary from the trial table), ``view``
(its sections laid out) and ``render`` (markdown, html, plots). Each stage's modules are
imported on use: the statistics stack and jinja2 cost ~0.7 s, and ``import pairbench``
should not pay them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pairbench._atomic import write_atomic
from pairbench._collector import no_cyclic_collection
from pairbench._errors import RunDirError

if TYPE_CHECKING:
    from pairbench.studies import ReviewNote


class ReportPaths(NamedTuple):
    """Where the three report files were written."""

    summary: Path
    markdown: Path
    html: Path


def write_report(
    run_dir: Path, *, bootstrap_reps: int | None = None, rescore: bool = False, plots: bool = True
) -> ReportPaths:
    """Write ``report.md``, ``report.html`` and ``summary.json`` for a run; return their paths.

    Reads the run's trial table (``trials.npz``, rebuilt from the journal when stale), so
    its cost grows with the number of trials, not with a JSON parse per trial.
    ``bootstrap_reps`` sets the resamples of each task-clustered interval (default 10,000).
    Each file is written to a temporary name, fsynced and renamed, so a crash leaves the
    old file or the new one, never half of one; everything is rendered before the first
    file is written. Their hashes then go in the journal (``verify`` checks them).

    When a grader's or the study's code differs from the run's lock, the report would
    re-score the run with today's code: it is refused (``RescoreRefused``, naming each
    change) unless ``rescore``, which writes ``report-rescored.md``, ``.html`` and
    ``summary-rescored.json`` with a banner naming the changes, the original untouched.

    ``plots=False`` leaves the plots out (drawing them costs about a second): the reports
    say so and how to draw them, and the summary records it (``plots_drawn``) so ``verify``
    rebuilds the same bytes. ``pairbench run`` writes its report that way.

    **Usage**::

        paths = write_report(Path("runs/mcp-transports-20261129T150000Z-abc123"))
        print(paths.markdown)
    """
    from pairbench.freeze._code_drift import code_changes
    from pairbench.report._rescore import refusal, rescored_name, rescored_texts
    from pairbench.store._run_dir import RunDir

    run_dir = Path(run_dir)
    changes = code_changes(run_dir)
    if changes and not rescore:
        raise refusal(run_dir, changes)
    # A report is written by one writer at a time, and never while run or resume writes
    # the run (a report of a run in flight would name a journal head already gone stale).
    # Re-entrant: `pairbench run` writes its report under the lock it already holds.
    with RunDir.open(run_dir).writer_lock("pairbench report"):
        texts = report_texts(run_dir, bootstrap_reps, plots=plots)
        if not changes:
            return write_texts(run_dir, texts)
        write_texts(run_dir, rescored_texts(texts, changes))
        names = (rescored_name(n) for n in ("summary.json", "report.md", "report.html"))
        return ReportPaths(*(run_dir / name for name in names))


def report_texts(
    run_dir: Path,
    bootstrap_reps: int | None = None,
    *,
    use_cache: bool = True,
    plots: bool = True,
) -> dict[str, str]:
    """summary.json, report.md and report.html of a run, rendered (nothing written).

    The summary records what it was built from: the journal head, the manual review's
    hash, the bootstrap resamples and whether the plots were drawn, so ``verify`` can
    rebuild the same bytes.
    """
    # What a report builds stays alive until it is rendered: a collection would walk it
    # and find nothing (see _collector). The summary is built in a frame of its own, gone
    # before the plots are drawn: matplotlib leaves cyclic garbage (pyparsing's caught
    # exceptions, whose frames hold their callers' frames), and from _summary's frame it
    # would hold the run's table and schedule until a collection, which then walked them all.
    with no_cyclic_collection():
        summary = _summary(run_dir, bootstrap_reps, use_cache=use_cache, plots=plots)
        return render_texts(summary)


def _summary(
    run_dir: Path, bootstrap_reps: int | None, *, use_cache: bool, plots: bool
) -> dict[str, Any]:
    from pairbench.report.summary._build import summarize
    from pairbench.report.summary._pairs import BOOTSTRAP_REPS
    from pairbench.report.summary._study_part import study_part
    from pairbench.store._load_table import load_table
    from pairbench.studies import StudyRun

    run = load_table(run_dir, use_cache=use_cache)
    review = run.run_dir.path / "manual_review.json"
    reviews: list[dict[str, object]] = []
    reviews_sha256 = None
    notes: dict[str, ReviewNote] = {}
    if review.is_file():
        reviews, notes = _read_reviews(review)
        reviews_sha256 = hashlib.sha256(review.read_bytes()).hexdigest()
    # The study the experiment names adds its own part (nothing is guessed from result files).
    study = study_part(StudyRun(run.run_dir, run.info, run.table, notes))
    reps = BOOTSTRAP_REPS if bootstrap_reps is None else bootstrap_reps
    if reps < 1:
        raise ValueError(f"bootstrap_reps must be at least 1, got {reps}")
    return summarize(
        run.info,
        run.table,
        bootstrap_reps=reps,
        journal_head=run.run_dir.journal_head(),
        reviews=reviews,
        reviews_sha256=reviews_sha256,
        study=study,
        plots_drawn=plots,
    )


def summary_json(summary: Mapping[str, Any]) -> str:
    """Canonical JSON text of a summary; NaN or infinity is an error, never written."""
    return json.dumps(summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_texts(summary: Mapping[str, Any]) -> dict[str, str]:
    """The three report files' texts: byte-deterministic for one summary (``verify``
    rebuilds them and compares bytes). The plots are drawn unless the summary records
    that they were not (``plots_drawn``: false)."""
    from pairbench.report.render._html import render_html
    from pairbench.report.render._markdown import render_markdown

    plots = summary.get("plots_drawn", True) is not False
    texts = {
        "summary.json": summary_json(summary),
        "report.md": render_markdown(summary, plots=plots),
        "report.html": render_html(summary, plots=plots),
    }
    texts.update(_study_files(summary))
    return texts


def _study_files(summary: Mapping[str, Any]) -> dict[str, str]:
    """The files the named study writes beside the report, from its stored part."""
    from pairbench.report.view._build import study_report

    report = study_report(summary)  # the one the view's sections came from
    slot = summary.get("study") or {}
    if report is None or report.files is None or slot["data"] is None:
        return {}
    extra = dict(report.files(slot["data"]))
    clash = sorted(set(extra) & {"summary.json", "report.md", "report.html"})
    if clash or any("/" in name or name.startswith(".") for name in extra):
        raise RunDirError(
            f"study {slot['name']}: its report files {sorted(extra)} must be plain names "
            "other than summary.json, report.md and report.html. Fix: rename them in the "
            "study's StudyReport.files"
        )
    return extra


def write_texts(run_dir: Path, texts: Mapping[str, str]) -> ReportPaths:
    """Write rendered report texts (:func:`render_texts`) into ``run_dir``, each atomically,
    then record their hashes in the journal (one ``files_recorded`` line, ``by: report``)."""
    from pairbench.store._journal import REPORT_WRITER
    from pairbench.store._recorded import record_hashes
    from pairbench.store._run_dir import RunDir

    written: dict[str, str] = {}
    for name, text in texts.items():
        try:
            written[name] = write_atomic(run_dir / name, text.encode("utf-8"))
        except OSError as exc:  # a folder in its place, a read-only run, a full disk
            raise RunDirError(
                f"{run_dir / name}: cannot write the report ({exc.strerror or exc}). Fix: "
                "remove what is in its place, or free space; the run's records are untouched"
            ) from None
    opened = RunDir(run_dir)
    if opened.journal_path.is_file():
        try:
            record_hashes(opened, written, REPORT_WRITER)
        except OSError as exc:
            raise RunDirError(
                f"{opened.journal_path}: cannot record the report's hashes "
                f"({exc.strerror or exc}). Fix: free space, then run `pairbench report` again"
            ) from None
    return ReportPaths(run_dir / "summary.json", run_dir / "report.md", run_dir / "report.html")


def _read_reviews(path: Path) -> tuple[list[dict[str, object]], dict[str, ReviewNote]]:
    """``manual_review.json``: ``{"reviews": [{arm, task, trial, verdict, note, reviewer}],
    "notes": {"AR-005": {"by", "note"}}}``, either key optional when the other is given
    (``notes``: per task or case, which a study's report shows beside its numbers)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(
            f"{path}: not valid JSON ({exc}); expected "
            '{"reviews": [{"arm", "task", "trial", "verdict", "note", "reviewer"}]}'
        ) from exc
    has_notes = isinstance(data, dict) and "notes" in data
    reviews = data.get("reviews", [] if has_notes else None) if isinstance(data, dict) else None
    if not isinstance(reviews, list):
        raise RunDirError(f'{path}: needs a top-level "reviews" list')
    for index, review in enumerate(reviews):
        if not isinstance(review, dict):
            raise RunDirError(f"{path}: reviews[{index}] is not an object. Fix: {_REVIEW}")
        trial = review.get("trial")
        if not isinstance(trial, int) or isinstance(trial, bool):
            raise RunDirError(
                f"{path}: reviews[{index}].trial is {json.dumps(trial)}, not a whole number "
                f"(the trial's index, from 0). Fix: {_REVIEW}"
            )
        for field in ("arm", "task"):
            if not isinstance(review.get(field), str):
                raise RunDirError(
                    f"{path}: reviews[{index}].{field} is {json.dumps(review.get(field))}, "
                    f"not a string. Fix: {_REVIEW}"
                )
    return reviews, review_notes(data, path)


_REVIEW = (
    'each review is {"arm": "<arm>", "task": "<task id>", "trial": 0, "verdict": "...", '
    '"note": "...", "reviewer": "..."}'
)


NOTES_SHAPE = '{"notes": {"AR-005": {"by": "<reviewer>", "note": "<what the traces show>"}}}'


def review_notes(data: object, path: Path) -> dict[str, ReviewNote]:
    """``manual_review.json``'s ``notes``: per task or case, who reviewed it and what they
    found. The file may also hold ``reviews`` (per trial); either key may be absent."""
    from pairbench.studies import ReviewNote

    notes = data.get("notes", {}) if isinstance(data, dict) else {}
    if not isinstance(notes, dict):
        raise RunDirError(f"{path}: notes must be an object. Fix: {NOTES_SHAPE}")
    out = {}
    for key, entry in notes.items():
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("by"), str)
            or not isinstance(entry.get("note"), str)
        ):
            raise RunDirError(
                f"{path}: notes[{json.dumps(key)}] needs a string by and note. Fix: {NOTES_SHAPE}"
            )
        out[str(key)] = ReviewNote(by=entry["by"], note=entry["note"])
    return out
