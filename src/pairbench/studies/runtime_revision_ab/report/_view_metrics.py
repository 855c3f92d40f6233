"""View of a runtime-revision-ab run's protocol metric table (``revision-metrics``): one
row per metric and distinction, one column per arm, each count with its denominator;
totals over all cells beside the labelled conditional subset; per-task paired
differences with timeouts censored."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

M = Mapping[str, Any]
MISSING = "missing"


def n(x: float | None, unit: str = "") -> str:
    """A whole number (or ms to 1 decimal) with separators; "missing" for None.

    >>> n(12345), n(None), n(1234.56, "ms")
    ('12,345', 'missing', '1,234.6 ms')
    """
    if x is None:
        return MISSING
    return f.number(x, unit, digits=1 if unit else 0)


NO_EVENTS = f"{MISSING}: the runtime reports no events"
"""A row only the runtime's own events fill, when no execution had them (never 0)."""


def count(c: M, what: str = "executions") -> str:
    """A ``Count``: its total and how many of how many reported it.

    >>> count({"total": 3, "reported": 9, "of": 10})
    '3 (reported by 9/10 executions)'
    >>> count({"total": None, "reported": 0, "of": 10})
    'missing: the runtime reports no events (0/10 executions)'
    """
    if not c["reported"]:
        return f"{NO_EVENTS} (0/{c['of']} {what})"
    return f"{n(c['total'])} (reported by {c['reported']}/{c['of']} {what})"


def counts(c: M) -> str:
    if c["counts"] is None:
        return f"{NO_EVENTS} (0/{c['of']} executions)"
    body = ", ".join(f"{k} {v:,}" for k, v in c["counts"].items()) or "none"
    return f"{body} (reported by {c['reported']}/{c['of']} executions)"


def _spread(s: M, of: int) -> str:
    if not s["n"]:
        return f"{MISSING} (0/{of} requests)"
    return (
        f"peak {n(s['peak'])}, median {n(s['median'])}, p90 {n(s['p90'])} ({s['n']}/{of} requests)"
    )


def _stage(s: M, label: str = "reported") -> str:
    if not s["reported"]:
        return f"{MISSING} ({label} 0/{s['of']})"
    return (
        f"sum {n(s['sum_ms'], 'ms')}, median {n(s['median_ms'], 'ms')} "
        f"({label} {s['reported']}/{s['of']})"
    )


def _e2e(e: M) -> str:
    if not e["n"]:
        return MISSING
    # A timed-out execution's time is a lower bound, so the sum is one too: "> sum".
    total = ("> " if e["censored"] else "") + n(e["sum_ms"], "ms")
    med = e["median_display"] if e["median_ms"] is None else n(e["median_ms"], "ms")
    return f"sum {total}, median {med} ({e['n']} executions, {e['censored']} timed out: censored)"


def _completion(kind: str, m: M) -> str:
    return f"{m['completion']['counts'][kind]}/{m['completion']['of']}"


def _rows(x: M) -> list[tuple[str, Callable[[M], str]]]:
    return [
        ("Executions with evidence", lambda m: f"{m['with_evidence']}/{m['executions']}"),
        ("Runtime events present", lambda m: f"{m['events_present']}/{m['with_evidence']}"),
        ("Scope: allowed changes", lambda m: f"{m['scope']['allowed_changes']:,}"),
        (
            "Scope: unauthorized effects",
            lambda m: (
                f"{m['scope']['unauthorized_effects']:,} "
                f"(in {m['scope']['executions_with_unauthorized']}/{m['with_evidence']} executions)"
            ),
        ),
        (
            "Scope: prohibited operations attempted",
            lambda m: count(m["scope"]["prohibited_attempted"]),
        ),
        (
            "Scope: prohibited operations executed",
            lambda m: f"{m['scope']['prohibited_executed']:,}",
        ),
        ("Scope: denials (not effects)", lambda m: count(m["scope"]["denials"])),
        ("Dispatch: proposed calls", lambda m: f"{m['dispatch']['proposed']:,}"),
        ("Dispatch: normalized operations", lambda m: count(m["dispatch"]["normalized"])),
        ("Dispatch: authorized", lambda m: count(m["dispatch"]["authorized"])),
        ("Dispatch: denied", lambda m: count(m["dispatch"]["denied"])),
        ("Dispatch: executed (receipts)", lambda m: count(m["dispatch"]["executed"])),
        ("Dispatch: observed (result returned)", lambda m: f"{m['dispatch']['observed']:,}"),
        (
            "Dispatch: effects without receipt",
            lambda m: count(m["dispatch"]["effects_without_receipt"]),
        ),
        *[
            (
                f"Completion: {c}",
                functools.partial(_completion, c),
            )
            for c in x["completion"]["counts"]
        ],
        (
            "Completion: final claims made",
            lambda m: f"{m['completion']['claims']}/{m['completion']['of']}",
        ),
        ("Recovery: errors by category", lambda m: counts(m["recovery"]["errors"])),
        (
            "Recovery: transitions to new evidence",
            lambda m: count(m["recovery"]["transitions_to_new_evidence"]),
        ),
        (
            "Recovery: recovered to success",
            lambda m: (
                f"{m['recovery']['recovered_to_success']}/"
                f"{m['recovery']['executions_with_errors']} executions with errors"
            ),
        ),
        (
            "Recovery: repeated identical calls (not progress)",
            lambda m: count(m["recovery"]["repeated_identical_calls"]),
        ),
        (
            "Measured usage: coverage",
            lambda m: f"{m['usage']['measured_requests']}/{m['usage']['requests']} requests",
        ),
        (
            "Measured usage: input tokens (measured requests only)",
            lambda m: n(m["usage"]["input_measured"]),
        ),
        (
            "Measured usage: output tokens (measured requests only)",
            lambda m: n(m["usage"]["output_measured"]),
        ),
        (
            "Measured usage: executions fully measured",
            lambda m: f"{m['usage']['executions_fully_measured']}/{m['with_evidence']}",
        ),
        (
            "Estimated usage: input tokens (never summed with measured)",
            lambda m: (
                f"{n(m['usage']['input_estimated'])} over {m['usage']['requests']} requests; "
                + ", ".join(m["usage"]["estimators"])
            ),
        ),
        ("Estimated usage: output tokens", lambda m: count(m["usage"]["output_estimated"])),
        (
            "Context: measured input per request",
            lambda m: _spread(m["context"]["measured"], m["context"]["requests"]),
        ),
        (
            "Context: prepared estimate per request",
            lambda m: _spread(m["context"]["prepared_estimate"], m["context"]["requests"]),
        ),
        ("Context: capacity (n_ctx)", lambda m: n(m["context"]["capacity"])),
        (
            "Context: output reservation (max_tokens)",
            lambda m: n(m["context"]["output_reservation"]),
        ),
        ("Work per round: provider rounds", lambda m: f"{m['rounds']['rounds']:,}"),
        (
            "Work per round: artifact versions",
            lambda m: f"{m['rounds']['artifact_versions']}/{m['rounds']['rounds']} rounds",
        ),
        (
            "Work per round: new successful observations",
            lambda m: count(m["rounds"]["new_observations"], "rounds"),
        ),
        (
            "Work per round: newly satisfied obligations",
            lambda m: f"{m['rounds']['newly_satisfied']:,}",
        ),
        (
            "Work per round: fresh verifier results",
            lambda m: count(m["rounds"]["verifier_results"], "rounds"),
        ),
        ("Latency: end to end", lambda m: _e2e(m["latency"]["end_to_end"])),
        (
            "Latency: first token",
            lambda m: (
                _stage(m["latency"]["first_token"]) if m["latency"]["streamed"] else "not streamed"
            ),
        ),
        (
            "Latency: first checked answer",
            lambda m: _stage(m["latency"]["first_checked_answer"], "reached"),
        ),
        ("Latency: generation (server)", lambda m: _stage(m["latency"]["generation"])),
        ("Latency: provider wall", lambda m: _stage(m["latency"]["provider_wall"])),
        ("Latency: tool stages", lambda m: _stage(m["latency"]["tool_stages"])),
        ("Latency: verification", lambda m: _stage(m["latency"]["verification"])),
        ("Latency: cleanup", lambda m: _stage(m["latency"]["cleanup"])),
        ("Process: receipts", lambda m: counts(m["process"]["receipts"])),
        (
            "Process: leaked processes",
            lambda m: (
                f"{m['process']['leaked_processes']:,} (in "
                f"{m['process']['executions_with_leaks']}/{m['with_evidence']} executions)"
            ),
        ),
        (
            "Process: useful success",
            lambda m: f"{m['process']['useful_success']}/{m['with_evidence']}",
        ),
        (
            "Canary leaks (requests carrying a secret)",
            lambda m: (
                f"{m['canary']['leaking_requests']:,} "
                f"(in {m['canary']['executions_with_leaks']}/{m['with_evidence']} executions)"
            ),
        ),
        (
            "Canary leaks (outputs and written files)",
            lambda m: (
                f"{m['canary'].get('elsewhere', 0):,} (in "
                f"{m['canary'].get('executions_leaking_elsewhere', 0)}/{m['with_evidence']} "
                "executions)"
            ),
        ),
        (
            "Infrastructure: final infra outcomes",
            lambda m: f"{m['infrastructure']['final_infra']}/{m['executions']}",
        ),
        (
            "Infrastructure: attempts kept in infra/",
            lambda m: str(m["infrastructure"]["kept_attempts"]),
        ),
        (
            "Interference around attempts (server /metrics vs proxy)",
            lambda m: (
                ", ".join(
                    f"{k} {v}" for k, v in sorted(m["infrastructure"]["interference"].items())
                )
                or "not measured (no proxy)"
            ),
        ),
        (
            "Host load: peak 1-minute average after an attempt",
            lambda m: (
                "missing"
                if m["infrastructure"]["peak_host_load"] is None
                else f"{m['infrastructure']['peak_host_load']:g}"
            ),
        ),
    ]


def _totals(r: M) -> list[Block]:
    def row(arm: str, which: str, t: M) -> list[str]:
        e2e = ("> " if t["timed_out"] else "") + n(t["end_to_end_sum_ms"], "ms")
        return [
            arm,
            which,
            f"{t['with_evidence']}/{t['cells']}",
            n(t["input_measured"]),
            n(t["output_measured"]),
            f"{t['measured_requests']}/{t['requests']}",
            n(t["input_estimated"]),
            e2e,
            str(t["timed_out"]),
        ]

    rows = []
    for t in r["totals"]:
        rows.append(row(t["arm"], "all assigned cells", t["all"]))
        rows.append(
            row(t["arm"], f"cells both arms passed ({r['conditional_label']})", t["conditional"])
        )
    head = [
        "Arm",
        "Cells",
        "With evidence",
        "Measured input tokens",
        "Measured output tokens",
        "Requests measured",
        "Estimated input tokens",
        "End-to-end sum",
        "Timed out",
    ]
    return [
        "Token and time totals over every assigned scenario execution, and apart the "
        f'{r["conditional_label"]}. A timed-out execution makes a sum a lower bound ("> ").',
        Table(head, rows),
    ]


def _diff_row(label: str, d: M) -> list[str]:
    med = d["median_difference_ms"]
    bounds = ""
    if d["censoring_could_move"]:
        low = "-∞" if d["median_low_ms"] is None else n(d["median_low_ms"])
        high = "+∞" if d["median_high_ms"] is None else n(d["median_high_ms"])
        bounds = f" (censoring: between {low} and {high})"
    return [
        label,
        str(d["pairs"]),
        n(d["baseline_sum_ms"], "ms"),
        n(d["candidate_sum_ms"], "ms"),
        MISSING if d["sum_difference_ms"] is None else f.signed(d["sum_difference_ms"]) + " ms",
        (MISSING if med is None else f.signed(med) + " ms") + bounds,
        str(d["censored"]),
        str(d["token_pairs"]),
        MISSING if d["token_sum_difference"] is None else f"{d['token_sum_difference']:+,}",
        MISSING if d["token_median_difference"] is None else f.signed(d["token_median_difference"]),
    ]


def metrics(s: M) -> Section | None:
    """The protocol's metric table, totals beside the conditional subset, paired differences."""
    r = (s.get("study") or {}).get("data")
    if r is None:
        return None
    arms = r["metrics"]
    table = Table(
        ["Metric", *(a["arm"] for a in arms)],
        [[label, *(fn(a) for a in arms)] for label, fn in _rows(arms[0])],
    )
    p = r["paired_differences"]
    head = [
        "Scenario",
        "Pairs",
        f"{r['baseline']} end-to-end sum",
        f"{r['candidate']} end-to-end sum",
        "Sum difference",
        "Median paired difference",
        "Censored",
        "Token pairs (fully measured)",
        "Token sum difference",
        "Token median difference",
    ]
    diffs = Table(
        head,
        [*(_diff_row(t["scenario"], t) for t in p["tasks"]), _diff_row("All scenarios", p["all"])],
    )
    blocks: list[Block] = [
        "Per arm over its final scenario executions. Counts from the runtime's own events "
        "carry how many executions reported them; missing is missing, never 0. Measured "
        "tokens sum over measured requests only; estimates are never added to them.",
        table,
        *_totals(r),
        f"Per-task paired differences ({r['candidate']} − {r['baseline']}) over executions "
        "both arms recorded; a difference with a timed-out member is censored and the median's "
        "possible range is shown when censoring could move it.",
        diffs,
    ]
    attempts = [
        x for a in arms for x in ({**i, "arm": a["arm"]} for i in a["infrastructure"]["attempts"])
    ]
    if attempts:
        blocks.append(
            Table(
                ["Arm", "Scenario task", "Pair", "Attempt", "Reason", "Record"],
                [
                    [
                        x["arm"],
                        x["task"],
                        str(x["pair"]),
                        str(x["attempt"]),
                        x["reason"],
                        x["result"],
                    ]
                    for x in attempts
                ],
            )
        )
    return Section("Runtime revision: protocol metrics", blocks)
