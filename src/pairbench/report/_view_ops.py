"""View sections about how the run went: transport, security, cost, trials needing attention."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report import _format as f
from pairbench.report._doc import Section, Table


def transport(s: Mapping[str, Any]) -> Section:
    rows = [
        [
            t["arm"],
            f.median_n(t["connect_ms"], "ms", "trials"),
            f.median_n(t["client_call_ms"], "ms", "calls"),
            f.median_n(t["server_call_ms"], "ms", "calls"),
            f.median_n(t["cold_start_ms"], "ms", "trials"),
            f"{t['transport_failures']} (in {t['trials_with_transport_failures']} trials)",
        ]
        for t in s["transport"]
    ]
    return Section(
        "Transport",
        [
            Table(
                [
                    "Arm",
                    "Connect (sum over servers), median",
                    "Client per-call latency, median",
                    "Server per-call latency, median",
                    "Cold start, median",
                    "Transport failures",
                ],
                rows,
            ),
            "Only measured values enter these medians; connect time counts trials whose every "
            "server connect was measured.",
        ],
    )


def security(s: Mapping[str, Any]) -> Section:
    conf = s["confidence"]
    rows = [
        [
            x["arm"],
            f.prop(x["prompt_injection_compliance"], conf)
            if x["injection_applicable"]
            else "N/A (no trial applies)",
            f.prop(x["secret_in_output"], conf),
        ]
        for x in s["security"]
    ]
    return Section(
        "Security", [Table(["Arm", "Prompt-injection compliance", "Secret in output"], rows)]
    )


def cost(s: Mapping[str, Any]) -> Section:
    rows = [
        [
            c["arm"],
            f.cost_metric(c["input_tokens"], 0),
            f.cost_metric(c["output_tokens"], 0),
            f.cost_metric(c["cost_usd"], 4),
        ]
        for c in s["cost"]
    ]
    return Section(
        "Cost",
        [
            Table(["Arm", "Input tokens", "Output tokens", "Cost (USD)"], rows),
            "Measured and estimated values are shown apart and never added.",
        ],
    )


def attention(s: Mapping[str, Any]) -> Section:
    a = s["attention"]
    planned = a["planned_trials"] or a["recorded_trials"]
    blocks: list[str | Table] = [
        f"{len(a['not_run'])} of {planned} planned trials not run.",
        f"{len(a['agent_error'])} of {a['scored_trials']} scored trials ended in agent_error.",
        f"{a['infra_attempts']} infra attempt(s) kept (harness or fixture failed; retried once).",
        f"{a['interrupted_attempts']} interrupted attempt(s) kept (re-run on resume).",
    ]
    entries = [e for k in ("not_run", "infra", "interrupted", "agent_error") for e in a[k]]
    if entries:
        blocks.append(
            Table(
                ["Outcome", "Arm", "Task", "Trial", "Attempt", "Reason", "Final answer (excerpt)"],
                [
                    [
                        e["outcome"],
                        e["arm"],
                        e["task"],
                        str(e["trial"]),
                        str(e["attempt"]),
                        e["reason"] or "(none given)",
                        f.NA if e["final_answer"] is None else e["final_answer"],
                    ]
                    for e in entries
                ],
            )
        )
    return Section("Trials not run, infra, interrupted, agent errors", blocks)


def provenance_meta(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Header rows: case set and campaign, the lock, and any accepted harness change."""
    rows: list[tuple[str, str]] = []
    if run.get("case_set"):
        campaign = f" (campaign {run['campaign']})" if run.get("campaign") else ""
        rows.append(("Case set", f"{run['case_set']}{campaign}"))
    if run.get("lock_sha256"):
        state = (
            "verified against experiment.lock.json"
            if run.get("lock_verified")
            else ("not verified (no lock, or the experiment differs from it)")
        )
        rows.append(("Lock", f"{str(run['lock_sha256'])[:16]}… {state}"))
    change = run.get("accepted_harness_change")
    if change:
        rows.append(
            (
                "HARNESS CHANGE ACCEPTED",
                f"pairbench differs from the lock: frozen {change.get('expected')}, "
                f"ran {change.get('found')} (--accept-harness-change)",
            )
        )
    return rows


def seeding(s: Mapping[str, Any]) -> Section:
    rows = [
        [
            x["arm"],
            str(x["seeded"]),
            str(x["unseeded"]),
            str(x["not_applicable"]),
            "; ".join(f"{reason} ({n})" for reason, n in x["reasons"].items()) or f.NA,
        ]
        for x in s["seeding"]
    ]
    return Section(
        "Seeding",
        [
            Table(["Arm", "Seeded", "Unseeded", "No model", "Why unseeded"], rows),
            "A trial is seeded only when every model request body actually sent carried the "
            "model seed; an agent whose CLI takes no seed is unseeded.",
        ],
    )


def manual_review(s: Mapping[str, Any]) -> Section:
    rows = [
        [
            x["arm"],
            x["task"],
            str(x["trial"]),
            str(x["machine_outcome"] or f.NA),
            x["verdict"],
            x["note"],
            x["reviewer"],
        ]
        for x in s["manual_review"]
    ]
    return Section(
        "Manual review",
        [
            "Shown beside the machine score; a review never changes it.",
            Table(
                ["Arm", "Task", "Trial", "Machine outcome", "Review verdict", "Note", "Reviewer"],
                rows,
            ),
        ],
    )
