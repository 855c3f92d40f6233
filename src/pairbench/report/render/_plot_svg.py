"""What every plot shares: the Figure record, matplotlib settings for stable SVG bytes,
and number formats (see ``_plots`` for why matplotlib)."""

from __future__ import annotations

import io
import re
import warnings
from typing import Any

from pairbench.report.view._doc import Figure, Table

COLORS = ("#3b6ea5", "#d9822b", "#3f8f4f", "#b8433d", "#7b5ea7", "#8a6d3b", "#4a9fb5")
_RC: Any = {  # Any: matplotlib types rc keys as a Literal of every name
    "svg.hashsalt": "pairbench",  # ids from a fixed salt, not a random one: stable bytes
    "svg.fonttype": "none",  # text as <text>, not glyph paths that depend on font files
    "text.parse_math": False,  # a "$" in an arm or task name is text, not mathtext
    "font.family": "sans-serif",
    "font.size": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.image_inline": True,
}


def _svg(fig: Any, name: str, alt: str) -> str:
    import matplotlib

    # A salt per plot: two figures of one page never share an element id.
    rc: Any = {**_RC, "svg.hashsalt": f"pairbench-{name}", "svg.id": name}
    with matplotlib.rc_context(rc):
        text = _saved(fig)
    text = text[text.index("<svg") :]
    # Inline in HTML the parser knows the SVG and xlink namespaces: the declarations and
    # the RDF metadata block are dropped, so the page names no URL at all (not even a
    # namespace one) and stays self-contained by any check.
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.DOTALL)
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text)
    # Our own markup, but the labels hold user names: the backend escaped them as XML;
    # nothing executable may reach the page even so.
    if re.search(r"<script|\son\w+\s*=|javascript:", text, re.IGNORECASE):
        raise ValueError(f"plot {name}: the SVG holds markup that could run")
    # matplotlib names groups figure_1, axes_1, ... in every SVG: prefixed with the plot's
    # name, so the ids of one page's plots stay unique (and their references follow).
    ids = set(re.findall(r'\sid="([^"]+)"', text)) - {name}
    for old in sorted(ids, key=len, reverse=True):
        new = f"{name}-{old}"
        text = text.replace(f'id="{old}"', f'id="{new}"')
        text = text.replace(f"url(#{old})", f"url(#{new})").replace(
            f'href="#{old}"', f'href="#{new}"'
        )
    label = alt.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return text.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1)


_COLLAPSED = "constrained_layout not applied"
_WIDER = 1.5
_TRIES = 4
_EDGE = 0.05  # inches


def _saved(fig: Any) -> str:
    """The figure as SVG text, wider where its labels leave the axes no room.

    Long names (an imported arm is named for its model and log, ``mockllm-model-a-645e5389``;
    a pair label holds two) can take more width than the figure has: constrained layout
    then gives up with a warning, and the labels run off the canvas. The figure is widened
    until they fit (the same names widen it the same way: stable bytes); one that fits at
    first is saved exactly as before.
    """
    widened = False
    for _ in range(_TRIES):
        buf = io.StringIO()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        collapsed = [w for w in caught if str(w.message).startswith(_COLLAPSED)]
        for other in caught:
            if other not in collapsed:
                warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
        width, height = fig.get_size_inches()
        # Once widened, also until nothing (a centred axis label) runs past the edges: only
        # figures that did not fit pay for measuring it.
        if not collapsed and (not widened or _inside(fig, width)):
            break
        fig.set_size_inches(width * _WIDER, height)
        widened = True
    return buf.getvalue()


def _inside(fig: Any, width: float) -> bool:
    box = fig.get_tightbbox()  # inches; a label flush with an edge measures a hair past it
    return bool(box.x0 >= -_EDGE and box.x1 <= width + _EDGE)


def _drawn(fig: Any, name: str, title: str, alt: str, numbers: Table) -> Figure:
    """The drawn plot as a :class:`Figure`: its SVG beside the words and numbers it shows."""
    return Figure(name, title, _svg(fig, name, alt), alt, numbers)


def _figure(width: float, height: float) -> Any:
    import matplotlib
    from matplotlib.figure import Figure as MplFigure

    with matplotlib.rc_context(_RC):
        return MplFigure(figsize=(width, height), layout="constrained")


def _log_x(ax: Any) -> None:
    """A log x axis labelled in plain numbers (mathtext is off, so no ``10^3`` markup)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    # No exponent for the numbers reports hold (ms, tokens): 12,330 reads, 1.233e+04 does not.
    return f"{value:,.0f}" if abs(value) >= 10 ** (digits - 1) else f"{value:.{digits}g}"
