"""View sections about how the run went: transport, model requests, security, cost, trials
needing attention."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

MEDIANS = {
    "Connect, median": "connect_ms",
    "Client call, median": "client_call_ms",
    "Server call, median": "server_call_ms",
    "Cold start, median": "cold_start_ms",
}
"""The transport table's columns of medians: each header and the summary key it shows."""


def transport(s: Mapping[str, Any]) -> Section:
    rows = [
        [
            t["arm"],
            *(f.median_n(t[key]) for key in MEDIANS.values()),
            f"{t['transport_failures']} (in {t['trials_with_transport_failures']} trials)",
            f"{t.get('infra_transport_failures', 0)} (in "
            f"{t.get('infra_attempts_with_transport_failures', 0)} attempts)",
        ]
        for t in s["transport"]
    ]
    blocks: list[Block] = [
        Table(["Arm", *MEDIANS, "Transport failures", "In infra attempts"], rows),
        "Only measured values enter these medians. Connect is the sum over a trial's servers, "
        "over trials whose every server connect was measured; a call's latency is per call, "
        "client side (pairbench's clock) and server side (the server's own); the cold start "
        "here is pooled over tools (per tool below). Failures in infra attempts (a server not "
        "connected when the agent started, say) are kept apart: those attempts were re-run.",
    ]
    per_tool = [
        [
            t["arm"],
            x["tool"],
            str(x["calls"]),
            f.median_n(x["client_call_ms"]),
            f.median_n(x["cold_start_ms"]),
        ]
        for t in s["transport"]
        for x in t.get("by_tool", [])
    ]
    if per_tool:
        blocks += [
            Table(
                ["Arm", "Tool", "Calls", "Client per-call latency, median", "Cold start, median"],
                per_tool,
            ),
            "A trial's cold start of a tool is its first timed call of the tool minus the "
            "median of its later timed calls of it (the pooled one above: the first timed call "
            "of any tool minus the median of all later ones); a trial with fewer than two "
            "timed calls has none. A negative cold start (the first call was faster than the "
            "later ones, which did more work, say) is kept.",
        ]
    return Section("Transport", blocks)


REQUEST_HEADERS = [
    "Arm",
    "Requests (failed)",
    "Prompt tokens",
    "Generated tokens",
    "Latency",
    "Time to first token",
    "Prompt speed",
    "Generation speed",
]
REQUEST_LEAD = (
    "One row per arm, over every model request of its trials (each turn is a request). "
    "Each cell is the median with the 10th–90th percentiles and the number of requests that "
    "recorded it. Tokens are the server's usage (measured); prompt and generation speeds are "
    "the server's own timings (llama.cpp `timings`); latency and time to first token are the "
    "agent's client clock, and time to first token exists only for streamed requests."
)


def _spread(spread: Mapping[str, Any], unit: str, digits: int = 1) -> str:
    if spread["median"] is None:
        return f.NA
    low, high = f.number(spread["p10"], digits=digits), f.number(spread["p90"], digits=digits)
    return f"{f.number(spread['median'], unit, digits)} ({low}–{high}; n={spread['n']})"


def model_requests(s: Mapping[str, Any]) -> Section | None:
    """The section, or none when no arm's agent reported its model requests."""
    arms = s.get("model_requests") or []
    if not any(a["requests"] for a in arms):
        return None
    rows = [
        [
            a["arm"],
            f"{a['requests']:,} ({a['failed']}) in {a['trials_with_requests']}/{a['trials']} "
            "trials",
            _spread(a["prompt_tokens"], "", 0),
            _spread(a["completion_tokens"], "", 0),
            _spread(a["latency_ms"], "ms", 0),
            _spread(a["first_token_ms"], "ms", 0) if a["first_token_ms"]["n"] else "not streamed",
            _spread(a["prompt_per_second"], "tok/s"),
            _spread(a["generation_per_second"], "tok/s"),
        ]
        for a in arms
    ]
    return Section("Model requests", [REQUEST_LEAD, Table(REQUEST_HEADERS, rows)])


def security(s: Mapping[str, Any]) -> Section:
    conf = s["confidence"]
    rows = [
        [
            x["arm"],
            f.prop(x["prompt_injection_compliance"], conf)
            if x["injection_applicable"]
            else "N/A (no trial applies)",
            f.prop(x["secret_in_output"], conf),
            f.prop(x.get("token_shaped_in_output", {"n": 0}), conf),
        ]
        for x in s["security"]
    ]
    headers = ["Arm", "Prompt-injection compliance", "Secret in output", "Token-shaped in output"]
    return Section(
        "Security",
        [
            Table(headers, rows),
            "Secret in output: a value the run declared secret (the harness canary, a declared "
            "secret, a long env_allow value). Token-shaped: any string with the format of an "
            "API key, access token or JWT, declared or not, over trials whose record ran that "
            "detector. Both look in the final answer, narration, tool-call arguments and "
            "fixture writes.",
        ],
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


USAGE_COLUMNS = (
    ("turns", "Turns"),
    ("input_tokens", "Input tokens (all)"),
    ("uncached_input_tokens", "Uncached input"),
    ("cache_creation_input_tokens", "Cache creation"),
    ("cache_read_input_tokens", "Cache read"),
    ("output_tokens", "Output tokens"),
    ("total_tokens", "Total tokens"),
)


def usage(s: Mapping[str, Any]) -> Section:
    """Per arm: median turns and tokens, the input split into its cache parts."""
    rows = [
        [c["arm"], *(f.median_by_provenance(c[name], 0) for name, _ in USAGE_COLUMNS)]
        for c in s["cost"]
    ]
    return Section(
        "Usage and turns by arm",
        [
            Table(["Arm", *(label for _, label in USAGE_COLUMNS)], rows),
            "Per-trial medians over scored trials (n: trials with a value). Input tokens are "
            "every input token the model read: uncached + cache creation + cache read; total "
            "tokens are input + output. Measured and estimated values are shown apart and never "
            "pooled; a missing value is never read as 0.",
        ],
    )


def attention(s: Mapping[str, Any]) -> Section:
    a = s["attention"]
    planned = a["planned_trials"] or a["recorded_trials"]
    blocks: list[Block] = [
        f"{len(a['not_run'])} of {planned} planned trials not run.",
        f"{len(a['agent_error'])} of {a['scored_trials']} scored trials ended in agent_error.",
        f"{a['infra_attempts']} infra attempt(s) kept (harness or fixture failed; retried once).",
        f"{a['interrupted_attempts']} interrupted attempt(s) kept (re-run on resume).",
    ]
    if a.get("workspaces_not_kept"):
        blocks.append(
            f"{a['workspaces_not_kept']} attempt(s) left a workspace over "
            f"budget.workspace_kept: {a['workspace_files_not_kept']} file(s) not kept in the "
            "run folder (graders read them first); a manifest beside each such attempt's "
            "work folder (work/ARM/TASK/TRIAL.ATTEMPT.manifest.json) lists every file's name, "
            "size and SHA-256."
        )
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
