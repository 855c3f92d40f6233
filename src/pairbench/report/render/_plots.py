"""The report's plots: inline SVG drawn from summary.json's numbers with matplotlib.

Why matplotlib: its SVG backend is mature, needs no browser or JavaScript to render (the
report stays one self-contained file that opens offline), and with a fixed hash salt, no
date and text kept as text it writes the same bytes for the same numbers, which ``verify``
needs (it rebuilds reports and compares bytes). Vega-Lite would need a JavaScript runtime
to render offline; hand-written SVG would reinvent axes, scales and layout.

Each plot is a :class:`Figure`: the SVG, a text alternative, and the numbers it draws as a
table, so a reader (or a screen reader) gets the same facts without the picture. Figures
use ``matplotlib.figure.Figure`` directly, never pyplot: no global state, no GUI backend,
safe in threads.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pairbench.report.render._plot_svg import COLORS, _figure, _pct, _svg
from pairbench.report.render._plots_measured import (
    fields_plot,
    latency_plot,
    tokens_plot,
    transport_plot,
)
from pairbench.report.view._doc import Figure, Omitted, Table

PLOTS = ("success", "task-heatmap", "latency", "transport", "tokens", "fields")
"""Every plot a study may declare (``report.plots``), in the order reports show them."""
Draw = Callable[[Mapping[str, Any]], Figure | Omitted]
"""A plot's builder: the figure it draws from a summary, or why it has nothing to draw."""
MAX_HEATMAP_TASKS = 80
"""Tasks drawn in the heatmap; a longer task list is cut there, and the figure says so."""


def _interval_rows(
    ax: Any, labels: Sequence[str], points: Sequence[Mapping[str, Any]], color: str
) -> None:
    """A point per row with its interval as a horizontal line, first row on top."""
    ys = list(range(len(labels)))[::-1]
    for y, p in zip(ys, points, strict=True):
        if p["estimate"] is None:
            continue
        ax.plot([p["low"], p["high"]], [y, y], color=color, linewidth=2, solid_capstyle="butt")
        ax.plot([p["estimate"]], [y], "o", color=color, markersize=5)
    ax.set_yticks(ys, labels)
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)


def success_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    arms = [a for a in s["arms"] if a["success"]["n"]]
    if not arms:
        return Omitted("success", "no arm has a scored trial")
    pairs = [p for p in s["pairs"] if p["declared"] and p["difference"]["ci95"] is not None]
    fig = _figure(8.0, 0.6 + 0.32 * max(len(arms), len(pairs), 2))
    left, right = fig.subplots(1, 2, squeeze=True) if pairs else (fig.subplots(), None)
    _interval_rows(left, [a["arm"] for a in arms], [a["success"] for a in arms], COLORS[0])
    left.set_xlim(-0.02, 1.02)
    left.set_xlabel("success (passed / scored), 95% Wilson interval")
    rows = [
        [
            a["arm"],
            f"{a['success']['k']}/{a['success']['n']}",
            _pct(a["success"]["estimate"]),
            f"{_pct(a['success']['low'])} to {_pct(a['success']['high'])}",
        ]
        for a in arms
    ]
    alt = "Success per arm with 95% Wilson intervals: " + "; ".join(
        f"{r[0]} {r[1]} ({r[2]})" for r in rows
    )
    if right is not None:
        labels = [f"{p['a']} - {p['b']}" for p in pairs]
        diff = [
            {
                "estimate": p["difference"]["estimate"],
                "low": p["difference"]["ci95"][0],
                "high": p["difference"]["ci95"][1],
            }
            for p in pairs
        ]
        _interval_rows(right, labels, diff, COLORS[1])
        right.axvline(0.0, color="#555555", linewidth=0.8, linestyle="--")
        right.set_xlim(-1.02, 1.02)
        right.set_xlabel("paired difference (A - B), 95% Newcombe interval")
        for p, d in zip(pairs, diff, strict=True):
            rows.append(
                [
                    f"{p['a']} - {p['b']}",
                    f"{p['pairs']} pairs",
                    _pct(d["estimate"]),
                    f"{_pct(d['low'])} to {_pct(d['high'])}",
                ]
            )
        alt += ". Paired differences (declared pairs): " + "; ".join(
            f"{lab} {_pct(d['estimate'])} [{_pct(d['low'])}, {_pct(d['high'])}]"
            for lab, d in zip(labels, diff, strict=True)
        )
    numbers = Table(["Arm or pair", "k/n or pairs", "Estimate", "95% interval"], rows)
    return Figure(
        "success", "Success per arm and paired differences", _svg(fig, "success", alt), alt, numbers
    )


def heatmap_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    arms = s["run"]["arms"]
    tasks = [t for t in s["tasks"] if any(t["arms"][a]["n"] for a in arms)]
    if not tasks or not arms:
        return Omitted("task-heatmap", "no task has a scored trial")
    cut = len(tasks) > MAX_HEATMAP_TASKS
    shown = tasks[:MAX_HEATMAP_TASKS]
    import numpy as np

    # A cell with no scored trial (estimate None) becomes NaN: drawn blank.
    grid = np.array([[t["arms"][a]["estimate"] for a in arms] for t in shown], dtype=np.float64)
    fig = _figure(1.8 + 1.1 * len(arms), 0.8 + 0.24 * len(shown))
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
    for i, t in enumerate(shown):
        for j, a in enumerate(arms):
            cell = t["arms"][a]
            text = f"{cell['k']}/{cell['n']}" if cell["n"] else "-"
            ax.text(j, i, text, ha="center", va="center", fontsize=7.5, color="#111111")
    ax.set_xticks(range(len(arms)), arms)
    ax.set_yticks(range(len(shown)), [t["task"] for t in shown])
    ax.tick_params(length=0)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    fig.colorbar(image, ax=ax, shrink=0.6, label="success")
    rows = [[t["task"], *(f"{t['arms'][a]['k']}/{t['arms'][a]['n']}" for a in arms)] for t in shown]
    alt = (
        f"Task by arm success heatmap, {len(shown)} tasks x {len(arms)} arms, "
        "passed/scored in each cell"
    )
    if cut:
        alt += f" (first {MAX_HEATMAP_TASKS} of {len(tasks)} tasks drawn; the task table has all)"
    numbers = Table(["Task", *arms], rows)
    return Figure(
        "task-heatmap", "Success by task and arm", _svg(fig, "task-heatmap", alt), alt, numbers
    )


_BUILDERS: dict[str, Draw] = {
    "success": success_plot,
    "task-heatmap": heatmap_plot,
    "latency": latency_plot,
    "transport": transport_plot,
    "tokens": tokens_plot,
    "fields": fields_plot,
}


def _study_plots(s: Mapping[str, Any]) -> dict[str, Draw]:
    """The named study's plots (``Study.report.plots``), after the core's."""
    from pairbench.report.view._build import study_report

    report = study_report(s)
    return {} if report is None else {p.name: _checked(p.name, p.draw) for p in report.plots}


_UNSAFE_SVG = re.compile(
    r"<script|<foreignobject|<iframe|<!doctype|<!entity|\son\w+\s*=|javascript:"
    r"|(?:xlink:)?href\s*=\s*[\"'](?!#)",
    re.IGNORECASE,
)


def _checked(name: str, draw: Draw) -> Draw:
    """A study's plot, kept off the page when its SVG could run or load anything: the one
    unescaped insertion in report.html is a plot's SVG, and a plugin's is not ours."""

    def drawn(s: Mapping[str, Any]) -> Figure | Omitted:
        made = draw(s)
        if isinstance(made, Figure) and (
            not made.svg.lstrip().startswith("<svg") or _UNSAFE_SVG.search(made.svg)
        ):
            return Omitted(name, "its SVG holds markup that could run or load something")
        return made

    return drawn


def build_figures(s: Mapping[str, Any]) -> dict[str, Figure | Omitted]:
    """The plots the summary's experiment declares (``run.experiment.plots``), by name.

    Undeclared, every plot with data to draw (nothing said of those without). Declared, each
    listed plot, or an :class:`Omitted` saying why it has nothing to draw in this run.
    Drawing costs a few hundred ms and report.md, report.html and ``verify``'s rebuild all
    ask for the same summary's plots: the last few are kept, keyed by the summary's JSON.
    """
    key = json.dumps(s, sort_keys=True, allow_nan=False)
    return _cached(key)


@functools.lru_cache(maxsize=8)
def _cached(key: str) -> dict[str, Figure | Omitted]:
    return _draw_all(json.loads(key))


def _draw_all(s: Mapping[str, Any]) -> dict[str, Figure | Omitted]:
    builders = {**_BUILDERS, **_study_plots(s)}
    declared = s["run"]["experiment"].get("plots")
    names = list(builders) if declared is None else [p for p in builders if p in declared]
    out: dict[str, Figure | Omitted] = {}
    for name in names:
        made = builders[name](s)
        if isinstance(made, Figure) or declared is not None:
            out[name] = made
    return out
