"""View sections of a runtime-revision-ab run: task success, the scenario grid and the
campaign test (``revision``), release gates (``revision-gates``) and the audit list
(``revision-audit``). The metric table is in ``_revision_metrics``. Every count shows its
denominator; missing is "missing", never 0."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pairbench.report.view import _format as f
from pairbench.report.view._doc import Block, Section, Table

CODES = {
    "passed": "P",
    "scored_failure": "F",
    "pre_inference_rejection": "R",
    "infra": "I",
    "missing": "–",
}
LEGEND = (
    "Outcome codes: P passed, F scored failure, R pre-inference rejection (scored, zero "
    "provider requests), I infrastructure (unscored), – missing (no record or no evidence)."
)


def _int(x: int | None) -> str:
    return "missing" if x is None else f"{x:,}"


def _model(m: Mapping[str, Any] | None, base: str, cand: str) -> list[Block]:
    if m is None:
        return ["Model served: not recorded (run.json has no identities.model_endpoint)."]
    gguf = m["gguf_sha256"] or f"missing ({m['missing'].get('gguf', 'not recorded')})"
    rows = [
        ["Server build", m["build_info"] or "missing"],
        ["Model", m["model_path"] or "missing"],
        ["GGUF sha256", gguf],
        ["Models listed", ", ".join(m["models"]) or "none"],
        ["Context per slot (n_ctx)", _int(m["n_ctx"])],
        ["Slots", _int(m["slots"])],
        ["Upstream", m["base_url"] or "missing"],
    ]
    for arm in (base, cand):
        r = m["revisions"].get(arm)
        if r:
            rows.append([f"{arm} revision", f"{r['commit']} (production {r['production_sha256']})"])
    return [
        "Which model served the run (run.json identities.model_endpoint):",
        Table(["Identity", "Value"], rows),
    ]


def _success(r: Mapping[str, Any]) -> list[Block]:
    rows = [
        [
            str(c["pair"]),
            c["arm"],
            c["campaign"] or "not recorded",
            "n/a" if c["position"] is None else str(c["position"]),
            f"{c['passed']}/{c['tasks']}",
            f"{c['scored_failure']}/{c['tasks']}",
            f"{c['pre_inference_rejection']}/{c['tasks']}",
            f"{c['infra']}/{c['tasks']}",
            f"{c['missing']}/{c['tasks']}",
            str(c["infra_attempts"]),
        ]
        for c in r["campaigns"]
    ]
    head = [
        "Pair",
        "Arm",
        "Campaign",
        "Position",
        "Passed",
        "Scored failures",
        "Pre-inference rejections",
        "Infra (unscored)",
        "Missing",
        "Infra attempts kept",
    ]
    return [
        "Task success per campaign: passes of all scenarios; scored failures and "
        "pre-inference rejections are scored, infrastructure outcomes are not.",
        Table(head, rows),
    ]


def _grid(r: Mapping[str, Any]) -> list[Block]:
    base, cand, pairs = r["baseline"], r["candidate"], r["pairs"]
    head = [
        "Scenario",
        *(f"P{p} {base[0]}/{cand[0]}" for p in pairs),
        f"{base} k/N",
        f"{cand} k/N",
        f"Only {base}",
        f"Only {cand}",
    ]
    rows = [
        [
            g["scenario"],
            *(f"{CODES[b]}/{CODES[c]}" for b, c in zip(g["baseline"], g["candidate"], strict=True)),
            f"{g['baseline_passed']}/{g['pairs']}",
            f"{g['candidate_passed']}/{g['pairs']}",
            str(g["baseline_only"]),
            str(g["candidate_only"]),
        ]
        for g in r["grid"]
    ]
    return [
        f"Scenario × pair grid ({base}/{cand} in each cell). k/N: passes over the N pairs; "
        "the discordant counts are over pairs both arms scored.",
        Table(head, rows),
        LEGEND,
    ]


def _end(x: float | None) -> str:
    return "unbounded" if x is None else f"{x:+.3f}"


def _test(r: Mapping[str, Any]) -> list[Block]:
    t = r["campaign_test"]
    diffs = Table(
        [
            "Pair",
            "Scenarios both scored",
            f"{r['baseline']} passed",
            f"{r['candidate']} passed",
            "D_i",
        ],
        [
            [
                str(d["pair"]),
                str(d["scored_scenarios"]),
                str(d["baseline_passed"]),
                str(d["candidate_passed"]),
                f"{d['d']:+d}",
            ]
            for d in t["differences"]
        ],
    )
    out: list[Block] = [
        f"Campaign level (the pair is the replicate): D_i = {r['candidate']} − {r['baseline']} "
        "passes in pair i.",
        diffs,
    ]
    if t["statement"]:
        return [*out, f"{t['statement'].capitalize()}: no p value is computed."]
    # The primary analysis first: the exact sign-flip test and the interval that inverts
    # it (they cannot disagree); the t interval beside them, named as what it is.
    if t["sign_flip_p"] is not None:
        out.append(
            f"**Primary analysis:** exact two-sided sign-flip test over 2^{t['pairs']} = "
            f"{t['assignments']} assignments: {f.p_value(t['sign_flip_p'])} "
            f"({t['sign_flip_extreme']} as extreme); smallest attainable p with {t['pairs']} "
            f"pairs: {t['smallest_attainable_p']:.6g}."
        )
    inv = t.get("sign_flip_interval")
    if inv is not None:
        ends = (
            "unbounded (too few pairs for any shift to be rejected)"
            if inv["low"] is None and inv["high"] is None
            else f"{_end(inv['low'])} to {_end(inv['high'])}"
        )
        out.append(
            f"Mean D = {t['mean']:+.3f} over {t['pairs']} pairs; primary {inv['confidence']:.0%} "
            f"interval (inverting the sign-flip test): {ends}."
        )
    if t["t_interval"] is not None:
        ti = t["t_interval"]
        out.append(
            f"Beside it, the one-sample t interval (assumes roughly normal D_i; not the "
            f"decision): {ti['confidence']:.0%} {ti['low']:+.3f} to {ti['high']:+.3f} "
            f"(df {ti['df']}, sd {ti['sd']:.3f})."
        )
    elif inv is None:
        out.append(f"Mean D = {t['mean']:+.3f} over {t['pairs']} pair(s); no t interval (N < 2).")
    out.append(
        "Beside it, exact McNemar over discordant (scenario, pair) cells "
        f"({t['mcnemar_assumption']}): "
        f"only {r['baseline']} {t['baseline_only']}, only {r['candidate']} {t['candidate_only']}, "
        f"exact {f.p_value(t['mcnemar_p'])}, mid-{f.p_value(t.get('mcnemar_midp_p'))}. "
        "Sign test over scenarios' net direction: "
        f"{t['favours_candidate']} favour {r['candidate']}, {t['favours_baseline']} favour "
        f"{r['baseline']}, {f.p_value(t['sign_test_p'])}."
    )
    return out


def revision(s: Mapping[str, Any]) -> Section | None:
    """Task success per campaign, the grid, the campaign test and the model served."""
    r = (s.get("study") or {}).get("data")
    if r is None:
        return None
    blocks = [
        *_model(r["model"], r["baseline"], r["candidate"]),
        *_success(r),
        *_grid(r),
        *_test(r),
    ]
    return Section("Runtime revision: task success and campaign test", blocks)


def _declared(r: Mapping[str, Any]) -> str:
    """The regression rule the gate applied, in words and as written."""
    d = r["regression_rule"]
    written = f"{{min_pairs: {d['min_pairs']}, allow_reverse: {str(d['allow_reverse']).lower()}}}"
    where = (
        f"agent.settings.regression: {written}"
        if d["declared"]
        else f"{written}: the protocol's default; the experiment declares no "
        "agent.settings.regression"
    )
    text = f"Demonstrated regression, as declared: {d['statement']} ({where})."
    if not d["demonstrable"]:
        n = len(r["pairs"])
        text += (
            f" This run has {n} pair{'' if n == 1 else 's'}: no regression can be demonstrated "
            "in it; every changed outcome is in the audit list."
        )
    return text


def gates(s: Mapping[str, Any]) -> Section | None:
    """The release gate, then each gate per candidate campaign, regardless of any aggregate."""
    r = (s.get("study") or {}).get("data")
    if r is None:
        return None
    rows = []
    for g in r["gates"]:
        failing = "; ".join(
            f"pair {c['pair']} ({c['campaign'] or 'campaign not recorded'}): "
            + ", ".join(c["failing"])
            + (f" [{'; '.join(c['effects'])}]" if c.get("effects") else "")
            for c in g["campaigns"]
            if c["failing"]
        )
        if g.get("blocked"):
            failing = "review note missing for " + ", ".join(g["blocked"])
        missing = "; ".join(
            f"pair {c['pair']}: " + ", ".join(c["missing"]) for c in g["campaigns"] if c["missing"]
        )
        reviewed = "; ".join(
            f"pair {c['pair']}: " + ", ".join(c["reviewed"])
            for c in g["campaigns"]
            if c["reviewed"]
        )
        rows.append(
            [
                g["title"],
                g["status"].upper(),
                failing or "none",
                missing or "none",
                reviewed or "none",
            ]
        )
    lead = (
        f"Per {r['candidate']} campaign, regardless of aggregates or intervals. A scenario "
        "without evidence cannot pass a gate (missing). A review note (manual_review.json) "
        "accounts for a demonstrated regression, never changing a number; a required note "
        "that is missing blocks the release."
    )
    head = [
        "Gate",
        "Status",
        "Failing (campaign: scenarios)",
        "Missing evidence",
        "Reviewed regressions",
    ]
    blocks: list[Block] = [lead, Table(head, rows)]
    if "release" in r:  # a summary written before the release gate has neither block
        blocks[:0] = [f"Release gate: {r['release']['statement']}.", _declared(r)]
    return Section("Runtime revision: release gates", blocks)


def _trace(t: Mapping[str, Any] | None) -> str:
    if t is None:
        return "no record"
    return f"{t['result']}; {t['transcript'] or 'no transcript'}"


def audit(s: Mapping[str, Any]) -> Section | None:
    """Changed outcomes and apparent efficiency gains with their traces; review notes."""
    r = (s.get("study") or {}).get("data")
    if r is None:
        return None
    a = r["audit"]
    rows = []
    for c in a["cells"]:
        what = []
        if c["changed_outcome"]:
            what.append(f"changed outcome {c['baseline_outcome']} → {c['candidate_outcome']}")
        if c["fewer_tokens"] is not None:
            what.append(f"fewer measured tokens ({c['fewer_tokens']:+,})")
        if c["lower_latency_ms"] is not None:
            what.append(f"lower end-to-end time ({f.signed(c['lower_latency_ms'])} ms)")
        gain = c["fewer_tokens"] is not None or c["lower_latency_ms"] is not None
        if gain and c["candidate_outcome"] != "passed":
            # Fewer tokens from an early rejection or omitted work is not an efficiency gain.
            what.append(f"{r['candidate']} did not pass: not an efficiency gain")
        rows.append(
            [
                c["scenario"],
                str(c["pair"]),
                "; ".join(what),
                _trace(c["baseline_trace"]),
                _trace(c["candidate_trace"]),
            ]
        )
    blocks: list[Block] = [
        "Every changed outcome and every apparent efficiency gain, to inspect against its "
        "traces (paths relative to the run folder: result; transcript).",
        Table(
            ["Scenario", "Pair", "What", f"{r['baseline']} traces", f"{r['candidate']} traces"],
            rows,
        )
        if rows
        else "No changed outcome and no apparent efficiency gain.",
    ]
    reviews = [
        [
            v["scenario"],
            ", ".join(v["why"]),
            "required" if v["required"] else "optional",
            v["by"] or "missing",
            v["note"] or "missing",
        ]
        for v in a["reviews"]
    ]
    blocks.append(
        "Review notes (manual_review.json "
        '{"notes": {"AR-005": {"by": ..., "note": ...}}}); a note never changes a number:'
    )
    blocks.append(Table(["Scenario", "Why", "Note", "By", "Note text"], reviews))
    return Section("Runtime revision: audit list", blocks)
