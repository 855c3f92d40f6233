"""``results.md`` and ``results.html`` from a ``Scorecard``.

Everything an engine wrote (headlines, raw output, failure messages) is untrusted: HTML
goes through jinja2 with autoescape and no ``|safe``; Markdown escapes HTML and table
syntax and fences raw output. Neither shows a p value: the protocol's analysis is
descriptive.
"""

from __future__ import annotations

import re
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from pairbench.studies.attribution_reliability._render_view import (
    STATEMENT,
    MetricRow,
    cost_lines,
    miss_groups,
    primary,
    secondary,
    tables,
)
from pairbench.studies.attribution_reliability._score_models import Scorecard

_ENV = Environment(
    loader=PackageLoader("pairbench.studies.attribution_reliability", "templates"),
    autoescape=select_autoescape(enabled_extensions=("html",), default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_MD_SPECIAL = re.compile(r"[\\`*_|<>&\[\]]")
_MD_ESCAPES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _view(card: Scorecard) -> dict[str, Any]:
    return {
        "card": card,
        "title": f"attribution-reliability — {card.engine_label}",
        "statement": STATEMENT,
        "primary": primary(card),
        "secondary": secondary(card),
        "tables": tables(card),
        "cost": cost_lines(card),
        "misses": miss_groups(card),
    }


def render_html(card: Scorecard, *, fragment: bool = False) -> str:
    """The results as a full HTML page, or as a fragment to embed in another page.

    **Usage**::

        page = render_html(card)
        part = render_html(card, fragment=True)   # no <html>, one <section>
    """
    name = "results_fragment.html" if fragment else "results.html"
    return _ENV.get_template(name).render(**_view(card))


def md(text: str) -> str:
    """Untrusted text for a Markdown line or table cell (one line, nothing live)."""
    flat = " ".join(text.split())
    return _MD_SPECIAL.sub(lambda m: _MD_ESCAPES.get(m.group(), "\\" + m.group()), flat)


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    bar = "`" * max(3, longest + 1)
    return f"{bar}text\n{text}\n{bar}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(md(h) for h in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(md(c) or " " for c in row) + " |" for row in rows]


def _metric_table(rows: list[MetricRow]) -> list[str]:
    return _table(
        ["metric", "k/n", "estimate", "95% Wilson interval", "note"],
        [list(r) for r in rows],
    )


def render_markdown(card: Scorecard) -> str:
    """The results as Markdown: the primary metric first, every miss last.

    **Usage**::

        Path("results.md").write_text(render_markdown(card))
    """
    view = _view(card)
    p: MetricRow = view["primary"]
    out = [
        f"# {md(view['title'])}",
        "",
        f"> **{STATEMENT}**",
        "",
        f"**{p.name}: {p.value}** — {p.estimate}"
        + (f" (95% Wilson interval {p.interval})" if p.interval != "—" else ""),
        "",
        f"Engine: {md(card.engine_label)}. Scorer {card.scorer_version}, protocol "
        f"{card.protocol_version}. Machine scoring only; descriptive, no significance tests.",
        "",
        *(f"- {md(k)}: {md(v)}" for k, v in sorted(card.engine_identity.items())),
        *([""] if card.engine_identity else []),
        "## Secondary metrics",
        "",
        *_metric_table(view["secondary"]),
    ]
    for t in view["tables"]:
        out += ["", f"## {md(t.title)}", "", *_table(t.header, t.rows)]
    out += ["", "## Cost and latency", "", *(f"- {md(line)}" for line in view["cost"])]
    if card.flagged:
        out += ["", "## Flagged", "", *(f"- {md(f)}" for f in card.flagged)]
    if card.manual_review:
        out += ["", "## Manual review (shown beside; changes no number)", ""]
        out += [f"- **{md(k)}**: {md(v)}" for k, v in sorted(card.manual_review.items())]
    out += ["", f"## Every miss ({len(card.misses)})", ""]
    if not card.misses:
        out.append("None.")
    for g in view["misses"]:
        out += [f"### {md(g.heading)}", "", *(f"- {md(item)}" for item in g.items)]
        out += [f"- Manual review: {md(g.note)}"] if g.note else []
        out += ["", _fence(g.raw_output), ""]
    return "\n".join(out).rstrip() + "\n"
