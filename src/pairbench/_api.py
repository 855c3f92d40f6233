"""Top-level operations over a run directory that are not running it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench._errors import RunDirError
from pairbench.store._load_run import load_run

if TYPE_CHECKING:
    from pairbench.report import ReportPaths


def write_report(run_dir: Path) -> ReportPaths:
    """Write ``report.md``, ``report.html`` and ``summary.json`` for a run; return their paths.

    **Usage**::

        paths = write_report(Path("runs/mcp-transports-20261129T150000Z-abc123"))
        print(paths.markdown)
    """
    # The report stack pulls in scipy.stats and jinja2 (~0.7 s): load it when reporting.
    from pairbench.report import build_summary, write_reports

    run = load_run(run_dir)
    info = dict(run.info)
    review = run.run_dir.path / "manual_review.json"
    if review.is_file():
        info["manual_review"] = _read_reviews(review)
    summary = build_summary(info, run.results, [*run.infra, *run.interrupted])
    return write_reports(run.run_dir.path, summary)


def _read_reviews(path: Path) -> list[dict[str, object]]:
    """``manual_review.json``: ``{"reviews": [{arm, task, trial, verdict, note, reviewer}]}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunDirError(
            f"{path}: not valid JSON ({exc}); expected "
            '{"reviews": [{"arm", "task", "trial", "verdict", "note", "reviewer"}]}'
        ) from exc
    reviews = data.get("reviews") if isinstance(data, dict) else None
    if not isinstance(reviews, list):
        raise RunDirError(f'{path}: needs a top-level "reviews" list')
    return [r for r in reviews if isinstance(r, dict)]
