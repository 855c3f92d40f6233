"""The plots of measured values: wall time, transport latency, tokens, and per-field accuracy
(the outcome plots and the registry are in ``_plots``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.report.render._plot_svg import COLORS, _figure, _fmt, _log_x, _svg
from pairbench.report.view._doc import Figure, Omitted, Table

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
    return Figure("latency", "Wall time", _svg(fig, "latency", alt), alt, Table(headers, rows))


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
        [
            t["arm"],
            "connect",
            _fmt(t["connect_ms"]["median"], 4),
            str(t["connect_ms"]["n_trials"]) + " trials",
            "",
        ]
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
        for x in tools:
            if x in by:
                b = by[x]
                rows.append(
                    [
                        t["arm"],
                        x,
                        _fmt(b["client_call_ms"]["median"], 4),
                        f"{b['calls']} calls",
                        _fmt(b["cold_start_ms"]["median"], 4),
                    ]
                )
    right.set_yticks(positions, tools)
    if any_tool:
        _log_x(right)
        right.legend(fontsize=7, frameon=False, loc="lower right")
    right.set_xlabel("per-tool client latency, median ms (log scale)")
    alt = "Connect time and per-tool latency per transport: " + "; ".join(
        f"{r[0]} {r[1]} {r[2]} ms" for r in rows
    )
    headers = ["Arm", "Connect or tool", "Median ms", "Count", "Cold start, median ms"]
    return Figure(
        "transport", "Transport latency", _svg(fig, "transport", alt), alt, Table(headers, rows)
    )


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
    return Figure("tokens", "Token use", _svg(fig, "tokens", alt), alt, Table(headers, rows))


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
    return Figure(
        "fields", "Accuracy per field", _svg(fig, "fields", alt), alt, Table(["Field", *arms], rows)
    )
