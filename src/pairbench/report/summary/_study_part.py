"""The study's part of a summary: asked of the study the experiment names (``study:``).

Nothing here knows a study: the run's experiment names one, the registry finds it, and its
``report.build`` hook turns the run into its own typed record, stored as JSON in the
summary's generic ``study`` slot. A run whose study is not installed gets a slot that says
so, and the report says which sections are missing and why, instead of leaving them out in
silence.
"""

from __future__ import annotations

from typing import Any

from pairbench._errors import PairbenchError
from pairbench.studies import StudyDataMissing, StudyRun, load_study


def study_name(run: StudyRun) -> str | None:
    """The study the run's experiment names, or ``None`` for a plain experiment."""
    name = (run.info.experiment_model or {}).get("study")
    return name if isinstance(name, str) and name else None


def study_part(run: StudyRun) -> dict[str, Any] | None:
    """``summary.study``: ``{name, version, schema, data, missing}``, or ``None`` when the
    experiment names no study."""
    name = study_name(run)
    if name is None:
        return None
    try:
        study = load_study(name)
    except PairbenchError as exc:
        return _slot(name, missing=f"the study is not installed here ({exc})")
    if study.report is None:
        return _slot(name, version=study.version)
    try:
        part = study.report.build(run)
    except StudyDataMissing as exc:
        return _slot(name, version=study.version, schema=study.report.schema, missing=str(exc))
    data = None if part is None else part.model_dump(mode="json")
    return _slot(name, version=study.version, schema=study.report.schema, data=data)


def _slot(
    name: str,
    *,
    version: str | None = None,
    schema: str | None = None,
    data: dict[str, Any] | None = None,
    missing: str | None = None,
) -> dict[str, Any]:
    return {"name": name, "version": version, "schema": schema, "data": data, "missing": missing}
