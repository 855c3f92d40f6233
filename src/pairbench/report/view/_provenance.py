"""View parts of what the run proves about itself: the header's provenance rows (stage,
case set, plan, lock, model server, accepted changes), the section an imported run's report
leads with (what pairbench can and cannot vouch for), who ran each arm, seeding and mounted
proofs, and the manual review (the summary's parts of the same names are in
``summary._provenance``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

SCREENING_STAGE = "screening (no p value)"
SCREENING_WHY = (
    "one campaign pair, a single stochastic replicate, so no test is run and no p value or "
    "hypothesis verdict is given; a confirmation run from an approved plan tests"
)


def provenance_meta(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Header rows: the stage, case set and sitting, the lock, and any accepted harness
    change."""
    rows: list[tuple[str, str]] = []
    if run.get("stage") == "screening":
        rows.append(("Stage", f"{SCREENING_STAGE}: {SCREENING_WHY}"))
    elif run.get("stage"):
        rows.append(("Stage", str(run["stage"])))
    if run.get("case_set"):
        sitting = f" (sitting {run['sitting']})" if run.get("sitting") else ""
        ledger = run.get("ledger") or {}
        if run.get("sitting") and ledger.get("new_sitting"):
            sitting = f" (sitting {run['sitting']}, a new sitting asked for with --new-sitting)"
        rows.append(("Case set", f"{run['case_set']}{sitting}"))
    rows += plan_rows(run)
    if run.get("lock_sha256"):
        state = (
            "verified against experiment.lock.json"
            if run.get("lock_verified")
            else ("not verified (no lock, or the experiment differs from it)")
        )
        rows.append(("Lock", f"{str(run['lock_sha256'])[:16]}… {state}"))
    if run.get("journal_head"):
        # What this report counted: `pairbench verify` rebuilds it from the journal up to
        # this head and compares bytes.
        rows.append(("Journal head", f"{run['journal_head']}"))
    server = run.get("model_server")
    if server:
        rows.append(
            (
                "Model",
                f"{server['model']} ({server['model_package']}, GGUF sha256 "
                f"{server['model_sha256']}) on llama-server from {server['llama_cpp']}, binary "
                f"sha256 {server['binary_sha256']} (build_info {server['build_info']})",
            )
        )
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


def accepted_changes_row(run: Mapping[str, Any]) -> tuple[str, str] | None:
    """The header's first row when the run accepted changes since freeze (``--accept-change``)."""
    changes = run.get("accepted_changes") or []
    if not changes:
        return None
    listed = "; ".join(
        f"{c.get('name')} ({c.get('kind')}: frozen {c.get('expected') or '-'}, ran "
        f"{c.get('found') or '-'})"
        for c in changes
    )
    return ("CHANGED SINCE FREEZE", f"{listed} (--accept-change): not the pre-registered protocol")


def plan_rows(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A confirmation's plan, its approval, its screening, and every approval of plans from
    the same screening (a re-made approval is shown beside the first)."""
    plan = run.get("plan")
    if not plan:
        return []
    rows = [
        (
            "Plan",
            f"{plan.get('file')} (sha256 {str(plan.get('sha256'))[:16]}…), approved by "
            f"{plan.get('approved_by')} at {plan.get('approved_at')}, from screening run "
            f"{plan.get('screening_run')}",
        )
    ]
    approvals = plan.get("approvals") or []
    if len(approvals) > 1:
        listed = "; ".join(
            f"{a.get('plan_file')} (sha256 {str(a.get('plan_sha256'))[:16]}…) by {a.get('by')} "
            f"at {a.get('approved_at')}"
            + (" — this run's" if a.get("plan_sha256") == plan.get("sha256") else "")
            for a in approvals
        )
        rows.append((f"Approvals from this screening ({len(approvals)})", listed))
    return rows


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


def arms(s: Mapping[str, Any]) -> Section | None:
    """Who ran each arm: agent, model, tool-discovery mode, agent version, models seen."""
    idents = s["run"].get("arm_identities")
    if not idents:
        return None
    versions = any(x["agent_version"] is not None for x in idents)
    headers = ["Arm", "Agent", "Model", "Tool discovery"]
    headers += ["Agent version"] if versions else []
    headers.append("Models seen")
    rows = []
    for x in idents:
        row = [x["arm"], *(x[k] or "not recorded" for k in ("agent", "model", "tool_discovery"))]
        row += [x["agent_version"] or "not recorded"] if versions else []
        row.append(", ".join(x["models_seen"]) or "none reported")
        rows.append(row)
    return Section(
        "Arms",
        [
            Table(headers, rows),
            "Tool discovery is how the arm's agent is offered its tools, as run.json records it "
            '(for Claude Code, ENABLE_TOOL_SEARCH: "false" offers every tool directly rather '
            "than through a tool search). Models seen are the model ids the agent's requests "
            "reported.",
        ],
    )


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
    body: list[Any] = [
        Table(["Arm", "Seeded", "Unseeded", "No model", "Why unseeded"], rows),
        "A trial is seeded only when every model request body actually sent carried the "
        "model seed; an agent whose CLI takes no seed is unseeded.",
    ]
    proofs = s.get("mounted_proof") or []
    if proofs:
        body += [
            "Mounted-byte proof (every recorded attempt of a revision arm with `proof:`): "
            "whether the bytes its processes loaded were the arm's production bytes. "
            "Unavailable is reported, never counted as proven.",
            Table(
                ["Arm", "Proven", "Unavailable", "Mismatch", "Shadowed", "No proof", "Coverage"],
                [
                    [
                        x["arm"], str(x["ok"]), str(x["unavailable"]), str(x["mismatch"]),
                        str(x["shadowed"]), str(x["not_proven"]),
                        "; ".join(f"{c} ({n})" for c, n in x["coverage"].items()) or f.NA,
                    ]
                    for x in proofs
                ],
            ),
        ]  # fmt: skip
    return Section("Seeding", body)


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
