"""``report:`` in the experiment: which sections and plots its report shows."""

from __future__ import annotations

from pydantic import field_validator

from pairbench._model import Frozen

CORE_SECTIONS = (
    "primary",
    "arms",
    "outcomes",
    "hypotheses",
    "paired-success",
    "metrics",
    "conditional-metrics",
    "replacements",
    "tasks",
    "tiers",
    "crossover",
    "transport",
    "model-requests",
    "security",
    "cost",
    "usage",
    "seeding",
    "fields",
    "failures",
    "attention",
)
"""The core's report sections, by the names ``report.sections`` lists them, in report order.
The study an experiment names adds its own (``Study.report.sections``), shown after
``arms``; ``check`` validates the names against both."""

CORE_PLOTS = ("success", "task-heatmap", "latency", "transport", "tokens", "fields")
"""The core's plots, by the names ``report.plots`` lists them; a study may add its own."""


class ReportSpec(Frozen):
    """Which sections and plots a study's report shows (``report:`` in the experiment).

    Left out, a report shows every section that has something to say (transport only
    where an arm has MCP servers, model requests only where an agent reported them, security
    only where a trial was checked, fields only where a grader scored fields) and the
    success plots. Declared, the report shows exactly the
    listed sections and plots, in its own order; a plot with no data to draw is left out
    with a sentence saying why.
    """

    sections: list[str] | None = None
    """Section names: the core's (``CORE_SECTIONS``) and the named study's."""
    plots: list[str] | None = None
    """Plot names: the core's (``CORE_PLOTS``) and the named study's."""

    @field_validator("sections", "plots")
    @classmethod
    def _unique(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            dupes = sorted({v for v in value if value.count(v) > 1})
            raise ValueError(f"{', '.join(dupes)} listed twice: list each once")
        return value
