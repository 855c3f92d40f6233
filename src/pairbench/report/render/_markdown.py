"""``render_markdown``: the summary as ``report.md``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.render._plots import build_figures
from pairbench.report.view._build import NO_RUNS, SIMULATED, build_view
from pairbench.report.view._doc import Figure, Table


def _text(value: str) -> str:
    # Agent text is untrusted: markdown viewers render inline HTML, and a stray "|" or
    # newline would break the table. Escape "&" and "<" (no tag or entity can start
    # without them) and table syntax. ">" stays as written, so a censored median reads
    # "> 60000 ms"; `_paragraph` keeps a leading one from opening a blockquote.
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace("|", "\\|")
        .replace("\r", " ")
        .replace("\n", " ")
    )


def _paragraph(value: str) -> str:
    text = _text(value)
    return "\\" + text if text.startswith(">") else text


def _table(t: Table) -> list[str]:
    lines = ["| " + " | ".join(_text(h) for h in t.headers) + " |"]
    lines.append("|" + "---|" * len(t.headers))
    lines += ["| " + " | ".join(_text(c) for c in row) + " |" for row in t.rows]
    return lines


def render_markdown(summary: Mapping[str, Any], *, plots: bool = True) -> str:
    """The report as GitHub-flavoured markdown.

    Example::

        text = render_markdown(build_summary(run, results, infra))
        assert text.startswith("# pairbench report")

    ``plots`` false: a sentence saying how to draw them stands where they would be.
    """
    view = build_view(summary, build_figures(summary) if plots else None)
    lines = [f"# {_text(view.title)}", ""]
    if view.simulated:
        lines += [f"**{SIMULATED}**", ""]
    lines += [f"- **{k}:** {_text(v)}" for k, v in view.meta]
    lines.append("")
    if view.empty:
        lines += [NO_RUNS, ""]
    for section in view.sections:
        lines += [f"## {_text(section.title)}", ""]
        for block in section.blocks:
            if isinstance(block, Figure):
                # Markdown gets the plot's words; the picture is in report.html.
                lines.append(f"*Plot, {_text(block.title)} (in report.html):* {_text(block.alt)}")
            elif isinstance(block, Table):
                lines += _table(block)
            else:
                lines.append(_paragraph(block))
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
