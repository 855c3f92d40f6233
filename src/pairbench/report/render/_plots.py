"""The report's plots: inline SVG drawn from summary.json's numbers with matplotlib; the
outcome plots (success, task heatmap), those of measured values (wall time, transport
latency, tokens, per-field accuracy) and the registry that draws a study's own beside them.

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

from pairbench.report.render._plot_svg import COLORS, _drawn, _figure, _fmt, _log_x
from pairbench.report.view._doc import Figure, Omitted, Table
from pairbench.report.view._format import pct

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


def _cells(p: Mapping[str, Any]) -> list[str]:
    """A point's estimate and its interval, as the two cells of the plot's table."""
    return [pct(p["estimate"]), f"{pct(p['low'])} to {pct(p['high'])}"]


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
        [a["arm"], f"{a['success']['k']}/{a['success']['n']}", *_cells(a["success"])] for a in arms
    ]
    alt = "Success per arm with 95% Wilson intervals: " + "; ".join(
        f"{r[0]} {r[1]} ({r[2]})" for r in rows
    )
    if right is not None:
        labels = [f"{p['a']} - {p['b']}" for p in pairs]
        ds = [p["difference"] for p in pairs]
        diff = [{"estimate": d["estimate"], "low": d["ci95"][0], "high": d["ci95"][1]} for d in ds]
        _interval_rows(right, labels, diff, COLORS[1])
        right.axvline(0.0, color="#555555", linewidth=0.8, linestyle="--")
        right.set_xlim(-1.02, 1.02)
        right.set_xlabel("paired difference (A - B), 95% Newcombe interval")
        rows += [
            [lab, f"{p['pairs']} pairs", *_cells(d)]
            for lab, p, d in zip(labels, pairs, diff, strict=True)
        ]
        alt += ". Paired differences (declared pairs): " + "; ".join(
            f"{lab} {pct(d['estimate'])} [{pct(d['low'])}, {pct(d['high'])}]"
            for lab, d in zip(labels, diff, strict=True)
        )
    numbers = Table(["Arm or pair", "k/n or pairs", "Estimate", "95% interval"], rows)
    return _drawn(fig, "success", "Success per arm and paired differences", alt, numbers)


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
    return _drawn(fig, "task-heatmap", "Success by task and arm", alt, numbers)


TOKEN_KINDS = (
    ("uncached_input_tokens", "uncached input"),
    ("cache_creation_input_tokens", "cache creation"),
    ("cache_read_input_tokens", "cache read"),
    ("input_tokens", "input, cache split not reported"),
    ("output_tokens", "output"),
)
"""The kinds a token bar stacks. Input tokens are the first three; where a bar has none of
them, its whole input count stands in their place (never beside them: no double count)."""
_SPLIT = 3


def _box(q: Sequence[float], label: str) -> dict[str, Any]:
    # Whiskers at the 5th and 95th percentiles; min and max drawn as the extreme points.
    return {
        "label": label,
        "whislo": q[1],
        "q1": q[2],
        "med": q[3],
        "q3": q[4],
        "whishi": q[5],
        "fliers": [q[0], q[6]],
    }


def _boxes(ax: Any, boxes: list[dict[str, Any]]) -> None:
    """Horizontal boxes, the first on top."""
    # The fliers are the min and max (see _box), drawn as ticks.
    flier = {"marker": "|", "markersize": 6}
    ax.bxp(boxes[::-1], orientation="horizontal", showfliers=True, flierprops=flier)


def latency_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    spread = s["latency"]
    arms = [a for a in spread["arms"] if a["quantiles"] is not None]
    if not arms:
        return Omitted("latency", "no trial's wall time was measured")
    pairs = [p for p in spread["pairs"] if p["quantiles"] is not None]
    fig = _figure(8.0, 0.8 + 0.36 * max(len(arms), len(pairs), 2))
    left, right = fig.subplots(1, 2) if pairs else (fig.subplots(), None)
    _boxes(left, [_box(a["quantiles"], a["arm"]) for a in arms])
    if all(a["quantiles"][0] > 0 for a in arms):
        _log_x(left)
    left.set_xlabel("wall time, ms (log): box 25-75%, whiskers 5-95%, ticks min, max")
    rows = [
        [a["arm"], str(a["n"]), *(_fmt(q, 4) for q in a["quantiles"]), str(a["censored"])]
        for a in arms
    ]
    if right is not None:
        _boxes(right, [_box(p["quantiles"], f"{p['a']} - {p['b']}") for p in pairs])
        right.axvline(0.0, color="#555555", linewidth=0.8, linestyle="--")
        right.set_xlabel("paired difference A - B (ms)")
        rows += [
            [f"{p['a']} - {p['b']}", str(p["n"]), *(_fmt(q, 4) for q in p["quantiles"]), ""]
            for p in pairs
        ]
    alt = "Wall time per arm (log scale) and paired differences: medians " + "; ".join(
        f"{r[0]} {r[5]} ms (n={r[1]})" for r in rows
    )
    headers = ["Arm or pair", "n", "min", "p5", "p25", "median", "p75", "p95", "max", "censored"]
    return _drawn(fig, "latency", "Wall time", alt, Table(headers, rows))


def _ms(m: Mapping[str, Any]) -> str:
    return _fmt(m["median"], 4)


def transport_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    arms = [t for t in s["transport"] if t["by_tool"] or t["connect_ms"]["median"] is not None]
    if not arms:
        return Omitted("transport", "no arm timed an MCP connection or tool call")
    tools = sorted({b["tool"] for t in arms for b in t["by_tool"]})
    fig = _figure(8.0, 1.0 + 0.22 * max(len(tools) * len(arms), 3))
    left, right = fig.subplots(1, 2, width_ratios=(1, 2.4))
    ys = list(range(len(arms)))[::-1]
    connect = [t["connect_ms"]["median"] for t in arms]
    left.barh(ys, [c or 0.0 for c in connect], color=[COLORS[i % 7] for i in range(len(arms))])
    left.set_yticks(ys, [t["arm"] for t in arms])
    left.set_xlabel("connect, median ms")
    rows = [
        [t["arm"], "connect", _ms(t["connect_ms"]), f"{t['connect_ms']['n_trials']} trials", ""]
        for t in arms
    ]
    height = 0.8 / len(arms)
    positions = list(range(len(tools)))[::-1]
    any_tool = False
    for i, t in enumerate(arms):
        by = {b["tool"]: b for b in t["by_tool"]}
        vals = [by[x]["client_call_ms"]["median"] if x in by else None for x in tools]
        ys_t = [p + 0.4 - height * (i + 0.5) for p in positions]
        drawn = [(y, v) for y, v in zip(ys_t, vals, strict=True) if v is not None and v > 0]
        if drawn:
            any_tool = True
            right.barh(
                [y for y, _ in drawn],
                [v for _, v in drawn],
                height=height * 0.9,
                color=COLORS[i % 7],
                label=t["arm"],
            )
        rows += [
            [t["arm"], x, _ms(b["client_call_ms"]), f"{b['calls']} calls", _ms(b["cold_start_ms"])]
            for x, b in sorted(by.items())
        ]
    right.set_yticks(positions, tools)
    if any_tool:
        _log_x(right)
        right.legend(fontsize=7, frameon=False, loc="lower right")
    right.set_xlabel("per-tool client latency, median ms (log scale)")
    alt = "Connect time and per-tool latency per transport: " + "; ".join(
        f"{r[0]} {r[1]} {r[2]} ms" for r in rows
    )
    headers = ["Arm", "Connect or tool", "Median ms", "Count", "Cold start, median ms"]
    return _drawn(fig, "transport", "Transport latency", alt, Table(headers, rows))


def tokens_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    bars: list[tuple[str, list[float | None], str]] = []
    for arm in s["cost"]:
        for kind in ("measured", "estimated"):
            totals = [arm[name][kind]["total"] for name, _ in TOKEN_KINDS]
            if any(t is not None for t in totals[:_SPLIT]):
                totals[_SPLIT] = None
            if any(t is not None for t in totals):
                bars.append((arm["arm"], totals, kind))
    if not bars:
        return Omitted("tokens", "no token count was measured or estimated")
    fig = _figure(8.0, 0.9 + 0.34 * len(bars))
    ax = fig.subplots()
    ys = list(range(len(bars)))[::-1]
    left = [0.0] * len(bars)
    for k, (_, label) in enumerate(TOKEN_KINDS):
        widths = [b[1][k] or 0.0 for b in bars]
        ax.barh(ys, widths, left=left, color=COLORS[k], label=label, hatch=None)
        left = [a + w for a, w in zip(left, widths, strict=True)]
    # Estimated bars are hatched and labelled: never read as measured.
    for y, b in zip(ys, bars, strict=True):
        if b[2] == "estimated":
            ax.barh([y], [sum(v or 0.0 for v in b[1])], fill=False, hatch="//", edgecolor="#333333")
    ax.set_yticks(ys, [f"{b[0]} ({b[2]})" for b in bars])
    ax.set_xlabel("tokens over the arm's scored trials, by kind")
    ax.legend(fontsize=7, frameon=False, ncols=4, loc="lower right")
    rows = [[b[0], b[2], *(_fmt(v, 6) for v in b[1])] for b in bars]
    alt = (
        "Token use per arm stacked by kind, measured and estimated in separate bars: "
        + "; ".join(
            f"{r[0]} {r[1]}: "
            + ", ".join(f"{lab} {v}" for (_, lab), v in zip(TOKEN_KINDS, r[2:], strict=True))
            for r in rows
        )
    )
    headers = ["Arm", "Provenance", *(lab for _, lab in TOKEN_KINDS)]
    return _drawn(fig, "tokens", "Token use", alt, Table(headers, rows))


def fields_plot(s: Mapping[str, Any]) -> Figure | Omitted:
    fields = s["fields"]
    if not fields:
        return Omitted("fields", "no grader scored fields")
    arms = s["run"]["arms"]
    fig = _figure(8.0, 0.8 + 0.3 * len(fields))
    ax = fig.subplots()
    height = 0.8 / max(len(arms), 1)
    positions = list(range(len(fields)))[::-1]
    for i, arm in enumerate(arms):
        for p, f in zip(positions, fields, strict=True):
            cell = f["arms"][arm]
            if cell["estimate"] is None:
                continue
            y = p + 0.4 - height * (i + 0.5)
            ax.plot([cell["low"], cell["high"]], [y, y], color=COLORS[i % 7], linewidth=1.5)
            ax.plot(
                [cell["estimate"]],
                [y],
                "o",
                color=COLORS[i % 7],
                markersize=4,
                label=arm if p == positions[0] else None,
            )
    ax.set_yticks(positions, [f["field"] for f in fields])
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("accuracy per field (correct / scored), 95% Wilson interval")
    ax.legend(fontsize=7, frameon=False, loc="lower left")
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    rows = [
        [f["field"], *(f"{f['arms'][a]['k']}/{f['arms'][a]['n']}" for a in arms)] for f in fields
    ]
    alt = f"Accuracy of {len(fields)} fields per arm: " + "; ".join(
        f"{r[0]} " + ", ".join(f"{a} {c}" for a, c in zip(arms, r[1:], strict=True)) for r in rows
    )
    return _drawn(fig, "fields", "Accuracy per field", alt, Table(["Field", *arms], rows))


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
