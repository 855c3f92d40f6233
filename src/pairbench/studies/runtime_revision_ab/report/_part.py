"""The study's report part: the runtime-revision protocol's sections, from the run's evidence."""

from __future__ import annotations

from pairbench.studies import StudyReport, StudyRun, StudySection
from pairbench.studies.runtime_revision_ab.report import _view as vrev
from pairbench.studies.runtime_revision_ab.report import _view_metrics as vrm
from pairbench.studies.runtime_revision_ab.report._load import load_revision
from pairbench.studies.runtime_revision_ab.report._schema import Revision
from pairbench.studies.runtime_revision_ab.report._summary import revision_summary


def build(run: StudyRun) -> Revision | None:
    """The ``revision`` part (``Revision``); ``None`` when no scenario execution was recorded."""
    data = load_revision(run.run_dir, run.notes)
    if not data.cells:
        return None
    return Revision.model_validate(revision_summary(run.info, data))


REPORT = StudyReport(
    schema="pairbench.rab-report/1",
    model=Revision,
    build=build,
    sections=(
        StudySection("revision", vrev.revision),
        StudySection("revision-metrics", vrm.metrics),
        StudySection("revision-gates", vrev.gates),
        StudySection("revision-audit", vrev.audit),
    ),
)
