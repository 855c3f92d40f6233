"""The ``attribution`` section: an attribution-reliability run's machine score (scorer 1.0).

It leads with the protocol's statement and the primary metric, shows every secondary metric
with its numerator, denominator and 95% Wilson interval (no p value anywhere: the analysis
is descriptive), the confusion matrix, per-class and package results, cost and latency,
every miss with the engine's own output, and the manual-review notes beside (which change no
number). Everything an engine wrote is text: the renderers escape every cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view._doc import Block, Section, Table
from pairbench.studies.attribution_reliability.report import _view_visit as vvisit
from pairbench.studies.attribution_reliability.report._spend_view import spend_blocks

_OUTPUT_CAP = 400

_METRICS = (
    ("precision", "1. Product-finding precision (primary)", "supported / published findings"),
    ("false_blame", "2. False-blame rate", "blamed NOT_PRODUCT cases / NOT_PRODUCT cases"),
    ("recall", "3. True-issue recall", "PRODUCT cases with a supported finding / PRODUCT cases"),
    ("recall_met_target", "3. Recall, user met the target", "over cases the site saw meet it"),
    ("recall_met_target_claimed", "3. Recall, by the engine's claim", "beside 3: its own account"),
    ("abstention", "4. Abstention quality", "no unsupported finding / cases with a candidate"),
    ("rejection", "5. Unsupported-claim rejection", "planted unsupported sentences kept out"),
    ("removed_from_pool", "5. Removed from the quote pool", "beside 5 (stricter diagnostic)"),
    ("valid_kept", "5. Planted valid sentences kept", "beside 5"),
    ("false_absence", "6. False-absence rate", "product_absence findings / target exists"),
    ("repeatability", "7. Repeatability", "same blamed flag in all three runs"),
    ("exact_agreement", "7. Exact-outcome agreement", "beside 7"),
    ("pairwise_agreement", "7. Pairwise attribution agreement", "beside 7: run pairs"),
)
_COLUMNS = ("blamed_supported", "blamed_unsupported_only", "set_aside", "nothing")

_OUTCOMES = (
    ("passed", "the session's attribution was right: a PRODUCT case with a supported finding, "
     "any other case or package with no unsupported finding; scored on its findings"),
    ("failed", "it was not; scored on its findings"),
    ("agent_error", "a runtime failure (crash, no JSON, an invalid report, the engine's "
     "timeout): scored on what it published, listed with the misses, never re-run"),
    ("timeout", "the attempt's own limit: scored on what it published, if anything"),
    ("parse_failure", "no readable session evidence: scored as nothing"),
    ("not_run", "never started (a budget stop or a stopped run): scored as nothing: a "
     "recall miss, not blamed, outside abstention's n, flagged"),
    ("infra", "kept under infra/ and re-run once; the re-run is what is scored"),
)  # fmt: skip
"""How each trial outcome maps onto the metrics: they replace a pass rate for this study."""


def _prop(p: Mapping[str, Any]) -> list[str]:
    k, n = p["k"], p["n"]
    if not n or p["wilson_low"] is None:
        return [f"{k}/{n}", "undefined", "undefined"]
    return [
        f"{k}/{n}",
        f"{100 * k / n:.1f}%",
        f"{100 * p['wilson_low']:.1f}% to {100 * p['wilson_high']:.1f}%",
    ]


def _cell(c: Mapping[str, Any]) -> str:
    flags = []
    if c.get("runtime_failures"):
        flags.append(f"{c['runtime_failures']} runtime failure")
    if c.get("not_run"):
        flags.append(f"{c['not_run']} not run")
    return f"{c['count']}" + (f" ({', '.join(flags)})" if flags else "")


def _card(arm: str, card: Mapping[str, Any], many: bool) -> list[Block]:
    m = card["metrics"]
    label = "reference engine" if card["engine"] == "heuristic" else card["engine"]
    blocks: list[Block] = []
    prefix = f"Arm {arm}: " if many else ""
    primary = _prop(m["precision"])
    blocks.append(
        f"{prefix}engine {card['engine']} ({label}); scorer {card['scorer_version']}, "
        f"protocol {card['protocol_version']}. Primary metric, product-finding precision: "
        f"{primary[0]} = {primary[1]} (95% Wilson {primary[2]})."
    )
    blocks.append(
        Table(
            ["Metric", "k/n", "Estimate", "95% Wilson interval", "Denominator", "Not run"],
            [
                [title, *_prop(m[key]), what, str(m[key].get("not_run", 0))]
                for key, title, what in _METRICS
                if key in m
            ],
        )
    )
    blocks.extend(vvisit.identity(card))
    blocks.append("Confusion matrix (held-out end-to-end first runs):")
    blocks.append(
        Table(
            [
                "Truth / class",
                "Blamed, supported",
                "Blamed, unsupported only",
                "Set aside",
                "Nothing",
            ],
            [
                [row["label"], *(_cell(row["cells"][c]) for c in _COLUMNS)]
                for row in card["confusion"]
            ],
        )
    )
    blocks.append(
        Table(
            [
                "Class",
                "Cases",
                "Blamed",
                "With a supported finding",
                "Precision",
                "Runtime",
                "Not run",
            ],
            [
                [
                    r["case_class"],
                    str(r["cases"]),
                    _prop(r["blamed"])[0],
                    _prop(r["supported_cases"])[0],
                    " ".join(_prop(r["precision"])[:2]),
                    str(r["runtime_failures"]),
                    str(r["not_run"]),
                ]
                for r in card["per_class"]
            ],
        )
    )
    pk = card["packages"]
    blocks.append(
        Table(
            ["Packages", "k/n", "Estimate", "95% Wilson interval"],
            [
                ["Precision", *_prop(pk["precision"])],
                ["Recall", *_prop(pk["recall"])],
                ["False blame", *_prop(pk["false_blame"])],
            ],
        )
    )
    blocks.extend(vvisit.visits(card))
    cost, latency = card["cost"], card["latency"]
    spend = (
        "not applicable (the engine declares no model and reported no usage)"
        if cost["status"] == "not_applicable"
        else f"${cost['total_usd']:.4f}"
        + (" (incomplete: a lower bound)" if cost["status"] == "incomplete" else "")
        if cost["total_usd"] is not None
        else "missing"
    )
    med = latency["median_ms"]
    blocks.append(
        f"Cost: {spend}. Latency over {latency['sessions']} sessions: median "
        + (
            f"{med / 1000:.1f} s, max {latency['max_ms'] / 1000:.1f} s."
            if med is not None
            else "-."
        )
    )
    notes = card.get("manual_review") or {}
    misses = card["misses"]
    if misses:
        blocks.append(f"Every miss ({len(misses)}), with the engine's own output:")
        blocks.append(
            Table(
                ["Case", "Kind", "Trial", "Miss", "Detail", "Engine output", "Manual review"],
                [
                    [
                        x["case"],
                        x["kind"],
                        str(x["trial"]),
                        x["miss"],
                        x["detail"],
                        _short(x.get("raw_output") or ""),
                        notes.get(x["case"], ""),
                    ]
                    for x in misses
                ],
            )
        )
    else:
        blocks.append("No miss.")
    for flag in card.get("flagged") or []:
        blocks.append(f"Flagged: {flag}.")
    if notes:
        blocks.append(
            "Manual review (shown beside the machine score; it changes no number): "
            + "; ".join(f"{case}: {note}" for case, note in sorted(notes.items()))
        )
    return blocks


def _short(text: str) -> str:
    return text if len(text) <= _OUTPUT_CAP else text[:_OUTPUT_CAP] + " [...]"


def attribution(s: Mapping[str, Any]) -> Section | None:
    part = (s.get("study") or {}).get("data")
    if part is None:
        return None
    cards = part["scorecards"]
    # Before anything else: a result from an engine that could read the answers; then what
    # the run could not do; then the statement.
    blocks: list[Block] = [f"**{line}**" for line in part.get("uncontained") or []]
    blocks += [
        b
        for arm, card in cards.items()
        for b in vvisit.warnings(card, f"Arm {arm}: " if len(cards) > 1 else "")
    ]
    blocks.append(f"**{part['statement']}**")
    if part["case_set"] != "held-out":
        blocks.append(
            f"A {part['case_set']} run: never reported as results (protocol §3). Its sessions, "
            "as diagnostics of the fixtures, runner and scoring:"
        )
        blocks.append(
            Table(
                ["Arm", "Task", "Trial", "Published", "Set aside", "Runtime failure", "Headlines"],
                [
                    [
                        c["arm"],
                        c["task"],
                        str(c["trial"]),
                        str(c["published"]),
                        str(c["set_aside"]),
                        c["runtime_failure"] or "",
                        _short("; ".join(c["headlines"])),
                    ]
                    for c in part["calibration"]
                ],
            )
        )
        return Section("Attribution reliability", [*blocks, *spend_blocks(part), *_outcomes(s)])
    blocks.append("Descriptive only: no significance test; intervals show small denominators.")
    for arm, card in cards.items():
        blocks.extend(_card(arm, card, len(cards) > 1))
    return Section("Attribution reliability", [*blocks, *spend_blocks(part), *_outcomes(s)])


def _outcomes(s: Mapping[str, Any]) -> list[Block]:
    """The trial outcomes per arm and how each enters the metrics (after them: the report
    leads with the primary metric)."""
    arms = s.get("arms") or []
    if not arms:
        return []
    return [
        "Trial outcomes and how each enters the metrics (no pass rate is reported for this "
        "study: the metrics replace it):",
        Table(
            ["Outcome", *(a["arm"] for a in arms), "In the metrics"],
            [
                [name, *(str(a["outcomes"].get(name, 0)) for a in arms), meaning]
                for name, meaning in _OUTCOMES
            ],
        ),
    ]
