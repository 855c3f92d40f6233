"""What both renderings show, in order, as plain rows of text (one source for both)."""

from __future__ import annotations

from typing import NamedTuple

from pairbench.studies.attribution_reliability._score_models import (
    CONFUSION_COLUMNS,
    ConfusionCell,
    Proportion,
    Scorecard,
)

STATEMENT = (
    "These controlled cases measure attribution reliability, not prediction of real-human behavior."
)
COLUMN_NAMES = {
    "blamed_supported": "blamed, supported",
    "blamed_unsupported_only": "blamed, unsupported only",
    "set_aside": "set aside",
    "nothing": "nothing reported",
}


class MetricRow(NamedTuple):
    name: str
    value: str
    """``k/n`` or ``undefined (0/0)``."""
    estimate: str
    interval: str
    note: str


class MissGroup(NamedTuple):
    """Every miss of one session, under one copy of the engine's output."""

    heading: str
    items: list[str]
    raw_output: str
    note: str


def miss_groups(card: Scorecard) -> list[MissGroup]:
    groups: dict[tuple[str, str, int], MissGroup] = {}
    for m in card.misses:
        key = (m.case, m.kind, m.trial)
        if key not in groups:
            heading = f"{m.case} ({m.kind}, trial {m.trial})"
            note = card.manual_review.get(m.case, "")
            groups[key] = MissGroup(heading, [], m.raw_output or "(no output)", note)
        groups[key].items.append(f"{m.miss.replace('_', ' ')}: {m.detail}")
    return list(groups.values())


class Table(NamedTuple):
    title: str
    header: list[str]
    rows: list[list[str]]


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def metric_row(name: str, p: Proportion, note: str = "") -> MetricRow:
    if not p.defined:
        return MetricRow(name, f"{p.k}/{p.n}", "undefined", "—", note)
    return MetricRow(
        name,
        f"{p.k}/{p.n}",
        _pct(p.estimate),
        f"{_pct(p.wilson_low)} – {_pct(p.wilson_high)}",
        note,
    )


def primary(card: Scorecard) -> MetricRow:
    return metric_row("Product-finding precision (primary)", card.metrics.precision)


def secondary(card: Scorecard) -> list[MetricRow]:
    m = card.metrics
    return [
        metric_row("False-blame rate", m.false_blame, "lower is better"),
        metric_row("True-issue recall", m.recall),
        metric_row("Recall where the user met the target", m.recall_met_target, "beside 3"),
        metric_row("Abstention quality", m.abstention),
        metric_row("Unsupported-claim rejection", m.rejection),
        metric_row("Removed from the quote pool", m.removed_from_pool, "beside 5"),
        metric_row("Valid sentences kept", m.valid_kept, "beside 5"),
        metric_row("False-absence rate", m.false_absence, "lower is better"),
        metric_row("Repeatability (attribution)", m.repeatability),
        metric_row("Exact-outcome agreement", m.exact_agreement, "beside 7"),
        metric_row("Pairwise attribution agreement", m.pairwise_agreement, "beside 7"),
        metric_row("Package precision", card.packages.precision, "packages"),
        metric_row("Package recall", card.packages.recall, "packages"),
        metric_row("Package false blame", card.packages.false_blame, "packages"),
    ]


def tables(card: Scorecard) -> list[Table]:
    def cell(c: ConfusionCell) -> str:
        count, rt, nr = c.count, c.runtime_failures, c.not_run
        notes = [f"{rt} runtime failure(s)"] * bool(rt) + [f"{nr} not run"] * bool(nr)
        return f"{count}" + (f" ({', '.join(notes)})" if notes else "")

    confusion = Table(
        "Confusion matrix (end-to-end first runs)",
        ["truth / class", *(COLUMN_NAMES[c] for c in CONFUSION_COLUMNS)],
        [[r.label, *(cell(r.cells[c]) for c in CONFUSION_COLUMNS)] for r in card.confusion],
    )
    per_class = Table(
        "Per class",
        ["class", "cases", "blamed", "≥1 supported", "precision", "runtime failures", "not run"],
        [
            [
                c.case_class,
                str(c.cases),
                f"{c.blamed.k}/{c.blamed.n}",
                f"{c.supported_cases.k}/{c.supported_cases.n}",
                f"{c.precision.k}/{c.precision.n}",
                str(c.runtime_failures),
                str(c.not_run),
            ]
            for c in card.per_class
        ],
    )
    product = [
        s for s in card.sessions if s.trial == 0 and s.truth == "PRODUCT" and s.kind == "e2e"
    ]
    recall = Table(
        "Recall by product-failure case (audit-log hits shown, not scored)",
        ["case", "supported finding", "met the target", "audit-log hits", "manual review"],
        [
            [
                s.case,
                "yes" if s.supported else "no",
                "yes" if s.met_target else "no",
                ", ".join(s.audit_hits) or "—",
                card.manual_review.get(s.case, ""),
            ]
            for s in product
        ],
    )
    return [confusion, per_class, recall]


def cost_lines(card: Scorecard) -> list[str]:
    cost, lat = card.cost, card.latency
    if cost.status == "not_applicable":
        spend = "Cost: not applicable (no session used a priced model)."
    else:
        kinds = ", ".join(f"{k} ${v:.4f}" for k, v in sorted(cost.by_kind.items()))
        bound = " (incomplete: some sessions have no cost; a lower bound)" * (
            cost.status == "incomplete"
        )
        spend = f"Cost: ${cost.total_usd or 0:.4f}{bound}; by kind: {kinds or '—'}."
    prov = ", ".join(f"{k} {v}" for k, v in sorted(cost.provenance.items())) or "—"
    if lat.sessions:
        latency = (
            f"Latency over {lat.sessions} sessions: median {lat.median_ms or 0:.0f} ms, "
            f"max {lat.max_ms or 0:.0f} ms."
        )
    else:
        latency = "Latency: no session recorded one."
    return [spend, f"Cost provenance (sessions): {prov}.", latency]
