"""The section an imported run's report leads with: what pairbench can and cannot vouch for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view._doc import Block, Section, Table


def imported_section(run: Mapping[str, Any]) -> Section | None:
    """None for a run pairbench ran; else the import's statements and its logs' table."""
    imported = run.get("imported")
    if not imported:
        return None
    blocks: list[Block] = [str(line) for line in imported.get("vouch") or []]
    rows = []
    for log in imported.get("logs") or []:
        facts = log.get("facts") or {}
        rows.append(
            [
                ", ".join((log.get("arms") or {}).values()),
                str(facts.get("path")),
                str(facts.get("sha256")),
                f"{facts.get('harness')} {facts.get('harness_version') or ''}".strip(),
                str(facts.get("model") or "not recorded"),
                str(facts.get("created_at") or "not recorded"),
                str(log.get("created_vs_freeze") or "no frozen analysis"),
            ]
        )
    blocks.append(
        Table(
            [
                "Arm",
                "Log",
                "sha256",
                "Harness",
                "Model",
                "Created (log's own header)",
                "Created vs the analysis's freeze",
            ],
            rows,
        )
    )
    pairing = imported.get("pairing") or {}
    blocks.append(
        f"Paired on (sample id, epoch): {pairing.get('paired')} keys in every arm; primary "
        f"metric {imported.get('primary_metric')!s}."
    )
    deltas = imported.get("score_deltas") or []
    if deltas:
        blocks.append(
            Table(
                ["Pair (A vs B)", "Score", "Pairs", "Mean A", "Mean B", "A − B (95% CI)"],
                [
                    [
                        f"{d['a']} vs {d['b']}",
                        str(d["metric"]),
                        str(d["pairs"]),
                        f"{d['mean_a']:.4g}",
                        f"{d['mean_b']:.4g}",
                        f"{d['estimate']:+.4g} ({d['low']:+.4g} to {d['high']:+.4g})",
                    ]
                    for d in deltas
                ],
            )
        )
        blocks.append(f"Score deltas: {deltas[0]['method']}.")
    return Section("Imported: trials run by another harness", blocks)
