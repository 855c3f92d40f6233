"""The study's report part: the seven metrics per engine (held-out) or the calibration
sessions, and ``results.json`` beside the report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pairbench.studies import StudyReport, StudyRun, StudySection
from pairbench.studies.attribution_reliability.report import _view as vattr
from pairbench.studies.attribution_reliability.report._load import load_attribution
from pairbench.studies.attribution_reliability.report._schema import Attribution


def build(run: StudyRun) -> Attribution:
    notes = {case: f"{n.note} ({n.by})" for case, n in run.notes.items()}
    return Attribution.model_validate(load_attribution(run.run_dir, run.info, notes))


def files(data: Mapping[str, Any]) -> dict[str, str]:
    """The protocol publishes every number from results.json: the scorecards, as scored."""
    cards = data.get("scorecards")
    if not cards:
        return {}
    return {"results.json": json.dumps(cards, indent=2, ensure_ascii=False, allow_nan=False) + "\n"}


REPORT = StudyReport(
    schema="pairbench.attribution-report/1",
    model=Attribution,
    build=build,
    sections=(StudySection("attribution", vattr.attribution),),
    files=files,
)
