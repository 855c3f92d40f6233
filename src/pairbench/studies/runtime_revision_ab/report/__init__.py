"""The runtime-revision-ab study's part of the report: the protocol's evidence per scenario
execution (``_load``), summarised per campaign and arm (``_summary``, ``_metrics``,
``_totals``, ``_gates``), typed by ``_schema`` (documented in ``SCHEMA.md`` beside this
file) and laid out as the ``revision``, ``revision-metrics``, ``revision-gates`` and
``revision-audit`` sections (``_view``, ``_view_metrics``)."""

from pairbench.studies.runtime_revision_ab.report._part import REPORT

__all__ = ["REPORT"]
