"""The study's report part: the runtime-revision protocol's sections, from the run's evidence."""

from __future__ import annotations

from pairbench.studies import StudyDataMissing, StudyReport, StudyRun, StudySection
from pairbench.studies.runtime_revision_ab.report import _view as vrev
from pairbench.studies.runtime_revision_ab.report import _view_metrics as vrm
from pairbench.studies.runtime_revision_ab.report._load import EVIDENCE_SCHEMA, load_revision
from pairbench.studies.runtime_revision_ab.report._schema import Revision
from pairbench.studies.runtime_revision_ab.report._summary import revision_summary


def build(run: StudyRun) -> Revision | None:
    """The ``revision`` part (``Revision``); ``None`` when no scenario execution was recorded.

    Raises:
        StudyDataMissing: records exist but none carries the scenario evidence the sections
            read (the runtime did not run through the study's adapter).
    """
    data = load_revision(run.run_dir, run.notes)
    if not data.cells:
        return None
    if all(c.evidence is None for c in [*data.cells, *data.infra]):
        raise StudyDataMissing(
            f"none of its {len(data.cells)} results carries the scenario evidence "
            f"({EVIDENCE_SCHEMA}) its sections read: the protocol's metrics, gates and grid "
            "come from running the runtime through the study's adapter. Fix: agent: "
            "{adapter: rab-runtime, settings: {command: [...]}} and grader minirt-acceptance "
            '(the study\'s README, "Bring your own runtime"); `pairbench check` lists what '
            "each row needs"
        )
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
