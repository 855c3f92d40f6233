"""``revision``: the runtime-revision-ab report, from each scenario execution's evidence.

A campaign is one revision's complete run of the scenarios; the pair of campaigns (the
trial index) is the replicate. This builds, per arm and with every denominator: task
success per campaign, the scenario × pair grid, the campaign-level test (none in
screening), the protocol's metric table, totals beside the conditional subset, release
gates per candidate campaign (a demonstrated regression as the experiment declares it) with
the release verdict, the audit list, and which model served the run.

**Usage**::

    section = revision_summary(run_info, load_revision(RunDir.open(run_dir)))
    section["campaign_test"]["sign_flip_p"]   # 0.03125
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.analysis import (
    campaign_t_interval,
    mcnemar_midp,
    scenario_grid,
    sign_flip_interval,
    sign_flip_test,
)
from pairbench.analysis._campaign import MAX_EXACT_PAIRS
from pairbench.report.summary._common import CONFIDENCE, timeout_ms
from pairbench.store._run_record import RunRecord
from pairbench.studies.runtime_revision_ab._regression import declared_rule, is_declared
from pairbench.studies.runtime_revision_ab.report._gates import (
    SCORED,
    audit,
    gates,
    outcome_of,
    regressions,
)
from pairbench.studies.runtime_revision_ab.report._load import EVIDENCE_SCHEMA, Cell, RevisionData
from pairbench.studies.runtime_revision_ab.report._metrics import arm_metrics
from pairbench.studies.runtime_revision_ab.report._release import (
    regression_declared,
    release,
    review_gate,
)
from pairbench.studies.runtime_revision_ab.report._totals import (
    CONDITIONAL,
    paired_differences,
    totals,
)

OUTCOMES = ("passed", "scored_failure", "pre_inference_rejection", "infra", "missing")
SCREENING = "one stochastic screening pair, no superiority claim"
CELLS = "treats cells as independent"


def _arms(run: RunRecord, data: RevisionData) -> tuple[str, str]:
    """(baseline, candidate): the treatment's reference arm first, else the declared order."""
    treatment = _identities(run).get("treatment") or {}
    arms = list(run.arms) or sorted({c.arm for c in data.cells})
    reference = treatment.get("reference_arm") if isinstance(treatment, dict) else None
    if run.comparisons and len(run.comparisons[0]) == 2:
        arms = list(run.comparisons[0])
    if reference in arms:
        arms = [reference, *[a for a in arms if a != reference]]
    if len(arms) != 2:
        raise ValueError(f"a revision comparison has two arms, this run has {arms}")
    return arms[0], arms[1]


def _identities(run: RunRecord) -> dict[str, Any]:
    return run.identities.model_dump() if run.identities is not None else {}


def _campaigns(run: RunRecord, data: RevisionData) -> list[dict[str, Any]]:
    """Every campaign (pair, arm, id, position in its pair) from the schedule, else records."""
    schedule = run.schedule if isinstance(run.schedule, dict) else {}
    out: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()
    for c in schedule.get("campaigns") or []:
        pair, arm = int(c["pair"]), str(c["arm"])
        position = sum(x["pair"] == pair for x in out)
        out.append({"pair": pair, "arm": arm, "campaign": c.get("id"), "position": position})
        seen.add((pair, arm))
    for cell in data.cells:
        if (cell.pair, cell.arm) not in seen:
            seen.add((cell.pair, cell.arm))
            out.append({"pair": cell.pair, "arm": cell.arm, "campaign": None, "position": None})
    return sorted(out, key=lambda c: (c["pair"], c["position"] is None, c["position"] or 0))


def _success(
    campaign: Mapping[str, Any],
    tasks: Sequence[str],
    by_cell: Mapping[Any, Cell],
    infra: Sequence[Cell],
) -> dict[str, Any]:
    arm, pair = campaign["arm"], campaign["pair"]
    found = [outcome_of(by_cell.get((arm, t, pair))) for t in tasks]
    kept = [c for c in infra if c.arm == arm and c.pair == pair]
    return {
        **campaign,
        "tasks": len(tasks),
        **{o: found.count(o) for o in OUTCOMES},
        "infra_attempts": len(kept),
    }


def _grid(
    tasks: Sequence[str],
    labels: Mapping[str, str],
    base: str,
    cand: str,
    by_cell: Mapping[Any, Cell],
    pairs: Sequence[int],
) -> tuple[list[dict[str, Any]], Any]:
    codes = {
        a: [[outcome_of(by_cell.get((a, t, p))) for p in pairs] for t in tasks]
        for a in (base, cand)
    }

    def passed(rows: list[list[str]]) -> list[list[bool | None]]:
        return [[None if o not in SCORED else o == "passed" for o in row] for row in rows]

    grid = scenario_grid(passed(codes[base]), passed(codes[cand]), [labels[t] for t in tasks])
    rows = [
        {
            "task": t,
            "scenario": labels[t],
            "baseline": codes[base][i],
            "candidate": codes[cand][i],
            "pairs": len(pairs),
            "baseline_passed": r.baseline_passed,
            "baseline_scored": r.baseline_scored,
            "candidate_passed": r.candidate_passed,
            "candidate_scored": r.candidate_scored,
            "both": r.both,
            "baseline_only": r.baseline_only,
            "candidate_only": r.candidate_only,
            "neither": r.neither,
            "unscored": r.unscored,
        }
        for i, (t, r) in enumerate(zip(tasks, grid.rows, strict=True))
    ]
    return rows, grid


def _campaign_test(
    run: RunRecord, grid: Any, rows: list[dict[str, Any]], pairs: Sequence[int]
) -> dict[str, Any]:
    """D_i per pair with its passes (over scenarios both arms scored), the t interval, the
    exact sign flip over 2^N and, beside them, McNemar over cells."""
    d = list(grid.pair_differences)
    per_pair = []
    for i, p in enumerate(pairs):
        b = sum(r["baseline"][i] == "passed" and r["candidate"][i] in SCORED for r in rows)
        c = sum(r["candidate"][i] == "passed" and r["baseline"][i] in SCORED for r in rows)
        scored = sum(r["baseline"][i] in SCORED and r["candidate"][i] in SCORED for r in rows)
        per_pair.append(
            {
                "pair": p,
                "scored_scenarios": scored,
                "baseline_passed": b,
                "candidate_passed": c,
                "d": d[i],
            }
        )
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "differences": per_pair,
        "mean": sum(d) / len(d) if d else None,
        "t_interval": None,
        "sign_flip_interval": None,
        "sign_flip_p": None,
        "sign_flip_extreme": None,
        "assignments": None,
        "smallest_attainable_p": None,
        "mcnemar_p": None,
        "mcnemar_midp_p": None,
        "mcnemar_assumption": CELLS,
        "baseline_only": grid.baseline_only,
        "candidate_only": grid.candidate_only,
        "sign_test_p": None,
        "favours_candidate": grid.favours_candidate,
        "favours_baseline": grid.favours_baseline,
        "statement": None,
    }
    if run.stage == "screening":
        out["statement"] = SCREENING
        return out
    if not d:
        out["statement"] = "no complete pair: nothing to test"
        return out
    if len(d) >= 2:
        t = campaign_t_interval(d, CONFIDENCE)
        out["t_interval"] = {
            "low": t.low,
            "high": t.high,
            "df": t.df,
            "sd": t.sd,
            "se": t.se,
            "confidence": CONFIDENCE,
        }
    if len(d) <= MAX_EXACT_PAIRS:
        s = sign_flip_test(d)
        out.update(
            sign_flip_p=s.p_value,
            sign_flip_extreme=s.extreme,
            assignments=s.assignments,
            smallest_attainable_p=s.smallest_attainable_p,
        )
        inverted = sign_flip_interval(d, CONFIDENCE)
        out["sign_flip_interval"] = {
            "low": inverted.low if math.isfinite(inverted.low) else None,
            "high": inverted.high if math.isfinite(inverted.high) else None,
            "confidence": CONFIDENCE,
        }
    out["mcnemar_p"] = grid.mcnemar_p
    out["mcnemar_midp_p"] = mcnemar_midp(grid.baseline_only, grid.candidate_only)
    out["sign_test_p"] = grid.sign_test_p
    return out


def _model(run: RunRecord) -> dict[str, Any] | None:
    """Which model served the run: run.json ``identities.model_endpoint``."""
    ident = _identities(run)
    endpoint = ident.get("model_endpoint")
    revisions = ident.get("revisions") or {}
    if not isinstance(endpoint, dict):
        return None
    found = endpoint.get("gguf")
    gguf: dict[str, Any] = found if isinstance(found, dict) else {}
    return {
        "base_url": endpoint.get("base_url"),
        "build_info": endpoint.get("build_info"),
        "model_path": endpoint.get("model_path"),
        "models": list(endpoint.get("models") or []),
        "n_ctx": endpoint.get("n_ctx"),
        "slots": endpoint.get("total_slots"),
        "gguf_sha256": gguf.get("sha256"),
        "gguf_file_type": gguf.get("file_type"),
        "gguf_architecture": gguf.get("architecture"),
        "missing": {str(k): str(v) for k, v in (endpoint.get("missing") or {}).items()},
        "revisions": {
            str(arm): {
                "commit": r.get("commit"),
                "production_sha256": r.get("production_sha256"),
                "harness_commit": r.get("harness_commit"),
            }
            for arm, r in revisions.items()
            if isinstance(r, dict)
        },
    }


def revision_summary(run: RunRecord, data: RevisionData) -> dict[str, Any]:
    """The ``revision`` part of summary.json (``_schema_revision.Revision``)."""
    base, cand = _arms(run, data)
    tasks = [t.id for t in run.tasks] or sorted({c.task for c in data.cells})
    labels = {t.id: str((t.labels or {}).get("scenario", t.id)) for t in run.tasks}
    for c in data.cells:
        labels.setdefault(c.task, c.task)
    by_cell = {(c.arm, c.task, c.pair): c for c in data.cells}
    campaigns = _campaigns(run, data)
    pairs = sorted({c["pair"] for c in campaigns})
    rows, grid = _grid(tasks, labels, base, cand, by_cell, pairs)
    both_passed = {
        (r["task"], p)
        for r in rows
        for i, p in enumerate(pairs)
        if r["baseline"][i] == r["candidate"][i] == "passed"
    }
    endpoint = _identities(run).get("model_endpoint")
    n_ctx = endpoint.get("n_ctx") if isinstance(endpoint, dict) else None
    limit = timeout_ms(run)
    cand_campaigns = {c["pair"]: c["campaign"] for c in campaigns if c["arm"] == cand}
    rule = declared_rule(run.experiment_model)
    regressed = regressions(tasks, base, cand, by_cell, pairs, rule)
    gate_rows = [
        *gates(tasks, labels, base, cand, by_cell, cand_campaigns, data.notes, regressed),
        review_gate(tasks, labels, data.notes, regressed),
    ]
    return {
        "evidence_schema": EVIDENCE_SCHEMA,
        "stage": run.stage,
        "baseline": base,
        "candidate": cand,
        "scenarios": [{"task": t, "scenario": labels[t]} for t in tasks],
        "pairs": pairs,
        "campaigns": [_success(c, tasks, by_cell, data.infra) for c in campaigns],
        "grid": rows,
        "campaign_test": _campaign_test(run, grid, rows, pairs),
        "metrics": [
            arm_metrics(
                a,
                [c for c in data.cells if c.arm == a],
                [c for c in data.infra if c.arm == a],
                n_ctx,
                limit,
                [w for w in data.windows if str(w["label"]).startswith(f"{a}/")],
            )
            for a in (base, cand)
        ],
        "totals": totals((base, cand), by_cell, both_passed),
        "conditional_label": CONDITIONAL,
        "paired_differences": paired_differences(tasks, labels, base, cand, by_cell, pairs),
        "trial_timeout_ms": limit,
        "regression_rule": regression_declared(
            rule, is_declared(run.experiment_model), pairs, base, cand
        ),
        "gates": gate_rows,
        "release": release(gate_rows),
        "audit": audit(tasks, labels, base, cand, by_cell, pairs, data.notes, regressed),
        "model": _model(run),
    }
