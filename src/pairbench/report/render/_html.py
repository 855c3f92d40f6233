"""``render_html``: the summary as a self-contained ``report.html``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from pairbench.report.render._plots import build_figures
from pairbench.report.view._build import NO_RUNS, SIMULATED, build_view
from pairbench.report.view._doc import Figure, Table

TEMPLATE = "report.html"

# Agent output is untrusted everywhere: autoescape is on for .html templates and the
# templates never use |safe. The one unescaped insertion is a plot's SVG (filter
# ``plot_svg``): markup matplotlib wrote from summary numbers, its text XML-escaped by the
# backend and checked for anything executable by ``_plots``.
ENV = Environment(
    loader=PackageLoader("pairbench.report.render", "templates"),
    autoescape=select_autoescape(enabled_extensions=("html",), default=True),
    undefined=StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.tests["table"] = lambda block: isinstance(block, Table)
ENV.tests["figure"] = lambda block: isinstance(block, Figure)
ENV.filters["plot_svg"] = lambda figure: Markup(figure.svg)


def render_html(summary: Mapping[str, Any], *, plots: bool = True) -> str:
    """The report as one HTML page with inline CSS and no external assets.

    Example::

        page = render_html(build_summary(run, results, infra))
        assert "<style>" in page and "http" not in page.split("<body>")[0].lower()

    ``plots`` false: a sentence saying how to draw them stands where they would be (the
    view always draws them).
    """
    view = build_view(summary, build_figures(summary) if plots else None)
    return ENV.get_template(TEMPLATE).render(view=view, no_runs=NO_RUNS, simulated=SIMULATED)
