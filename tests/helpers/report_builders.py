"""Builders of realistic synthetic runs for the report tests (imported by name, not a conftest)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from pairbench.store._records import (
    Grade,
    Metric,
    Metrics,
    ModelRequest,
    Security,
    ToolCallTiming,
    TrialResult,
    Usage,
    Validity,
)

ARMS = ["baseline", "local-stdio", "remote-http"]
TASKS = [("read-title", 1), ("list-labels", 1), ("close-issue", 2)]
TRIALS = 4
XSS = "<script>alert(1)</script>"

RunScenario = tuple[dict[str, Any], list[TrialResult], list[TrialResult]]
"""What the ``scenario`` fixture gives: (run.json, results, infra attempts)."""
MakeResult = Callable[..., TrialResult]
"""What the ``make`` fixture gives: ``make_result``."""
Render = Callable[[Mapping[str, Any]], str]
"""``render_markdown`` or ``render_html``, for tests parametrized over both."""


def metrics_of(r: TrialResult) -> Metrics:
    """``r.metrics``, which every builder sets unless asked for ``metrics=False``."""
    assert r.metrics is not None, f"{r.arm}/{r.task}/{r.trial} has no metrics"
    return r.metrics


def value_of(m: Metric) -> float:
    """The number of a metric that must have one (a missing one fails the test)."""
    assert m.value is not None, f"missing: {m.reason}"
    return m.value


def wall_ms(r: TrialResult) -> float:
    """The trial's recorded wall time."""
    return value_of(metrics_of(r).wall_ms)


def make_result(
    arm: str,
    task: str,
    trial: int,
    outcome: str = "passed",
    *,
    wall: float | None = 1000.0,
    calls: tuple[float, ...] = (100.0, 120.0),
    server: tuple[float, ...] = (),
    connect: float | None = 40.0,
    start_order: int = 0,
    valid: bool | None = True,
    injection: bool | None = None,
    secret: bool = False,
    token: bool | None = None,
    tokens: Metric | None = None,
    cost: Metric | None = None,
    reason: str = "",
    final_answer: str | None = None,
    attempt: int = 1,
    tier: int | None = None,
    metrics: bool = True,
    run_id: str = "run-1",
    agent_ms: Metric | None = None,
    usage: Usage | None = None,
    turns: Metric | None = None,
    models: tuple[str, ...] = (),
) -> TrialResult:
    """One trial record, with sensible defaults for everything a test does not care about.

    ``usage`` (from ``usage_metrics``) sets all six token metrics, overriding ``tokens``.
    Every call is of ``tracker.get``; ``token`` is the token-shape verdict (None: a record
    from before that detector).
    """
    missing = Metric.missing("scripted agent reports no usage")
    cold = Metric.measured(5.0, "clock") if len(calls) > 1 else missing
    m = None
    if metrics:
        m = Metrics(
            wall_ms=Metric.measured(wall, "pairbench client clock")
            if wall is not None
            else Metric.missing("not timed"),
            connect_ms={} if connect is None else {"tracker": Metric.measured(connect, "clock")},
            tool_calls=[
                ToolCallTiming(
                    server="tracker",
                    tool="get",
                    client_ms=c,
                    server_ms=server[i] if i < len(server) else None,
                )
                for i, c in enumerate(calls)
            ],
            cold_start_ms=cold,
            cold_start_ms_by_tool={"tracker.get": cold} if calls else {},
            turns=turns or Metric.measured(3, "agent"),
            input_tokens=tokens or missing,
            output_tokens=tokens or missing,
            cost_usd=cost or missing,
            agent_ms=agent_ms or Metric.missing("the agent did not report its duration"),
        )
        if usage is not None:
            m = m.model_copy(update=usage._asdict())
    graded = outcome in ("passed", "failed", "parse_failure")
    return TrialResult(
        run_id=run_id,
        experiment="mcp-transports",
        arm=arm,
        task=task,
        trial=trial,
        labels={} if tier is None else {"tier": tier},
        seed=1000 + trial,
        model_seed=7,
        attempt=attempt,
        start_order=start_order,
        outcome=outcome,
        reason=reason,
        agent="scripted",
        grade=Grade(outcome=outcome, reason=reason) if graded else None,
        metrics=m,
        validity=None if valid is None else Validity(valid=valid),
        security=Security(
            prompt_injection_compliance=injection,
            secret_in_output=secret,
            token_shaped_in_output=token,
        ),
        final_answer=final_answer,
        models_seen=list(models),
    )


def digest(label: str) -> str:
    """A SHA-256 hex digest standing for a request body or reply named ``label``."""
    return hashlib.sha256(label.encode()).hexdigest()


def with_requests(
    result: TrialResult, bodies: list[str], replies: list[str], **fields: Any
) -> TrialResult:
    """``result`` with one model request per body (digests of the labels given), each with
    ``fields`` (tokens, timings) and ``ok`` true."""
    assert result.metrics is not None
    requests = [
        ModelRequest(turn=i + 1, body_sha256=digest(b), reply_sha256=digest(r), **fields)
        for i, (b, r) in enumerate(zip(bodies, replies, strict=True))
    ]
    metrics = result.metrics.model_copy(update={"model_requests": requests})
    return result.model_copy(update={"metrics": metrics})


def make_run(**overrides: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "run_id": "run-1",
        "experiment": {"id": "mcp-transports", "version": "1.0.0", "description": "transports"},
        "arms": list(ARMS),
        "comparisons": [["local-stdio", "remote-http"]],
        "tasks": [{"id": t, "labels": {"tier": tier}} for t, tier in TASKS],
        "schedule": [
            {"arm": a, "task": t, "trial": i} for t, _ in TASKS for i in range(TRIALS) for a in ARMS
        ],
        "agent_simulated": False,
        "started_at": "2026-11-29T10:00:00+00:00",
        "ended_at": "2026-11-29T10:05:00+00:00",
        "status": "complete",
    }
    run.update(overrides)
    return run


def make_scenario(seed: int = 20261129) -> tuple[list[TrialResult], list[TrialResult]]:
    """36 planned trials across 3 arms; a few odd ones (not_run, agent_error, timeout, ...)."""
    rng = np.random.default_rng(seed)
    p_pass = {"baseline": 0.3, "local-stdio": 0.8, "remote-http": 0.6}
    base_wall = {"baseline": 800.0, "local-stdio": 1000.0, "remote-http": 1300.0}
    results: list[TrialResult] = []
    for task, tier in TASKS:
        for trial in range(TRIALS):
            for pos, arm in enumerate(ARMS if trial % 2 == 0 else ARMS[::-1]):
                outcome = "passed" if rng.random() < p_pass[arm] else "failed"
                calls = () if arm == "baseline" else tuple(rng.uniform(50, 150, size=3).round(1))
                results.append(
                    make_result(
                        arm,
                        task,
                        trial,
                        outcome,
                        wall=float(base_wall[arm] + rng.normal(0, 50)),
                        calls=calls,
                        server=tuple(c / 2 for c in calls),
                        connect=None if arm == "baseline" else float(rng.uniform(20, 80)),
                        start_order=pos,
                        tier=tier,
                        injection=None if arm == "baseline" else bool(rng.random() < 0.2),
                        token=arm == "remote-http" and trial == 1,
                    )
                )
    odd = {
        ("baseline", "close-issue", 3): make_result(
            "baseline",
            "close-issue",
            3,
            "not_run",
            metrics=False,
            reason="budget stop",
            tier=2,
            valid=None,
        ),
        ("local-stdio", "close-issue", 2): make_result(
            "local-stdio",
            "close-issue",
            2,
            "agent_error",
            reason=f"model API 500 {XSS}",
            final_answer=f"partial {XSS}",
            tier=2,
        ),
        ("remote-http", "read-title", 1): make_result(
            "remote-http",
            "read-title",
            1,
            "timeout",
            wall=120000.0,
            tier=1,
        ),
        ("remote-http", "list-labels", 0): make_result(
            "remote-http",
            "list-labels",
            0,
            "failed",
            valid=False,
            tier=1,
        ),
    }
    results = [odd.get((r.arm, r.task, r.trial), r) for r in results]
    infra = [
        make_result(
            "remote-http",
            "list-labels",
            2,
            "infra",
            metrics=False,
            reason="fixture not ready after 10s",
            tier=1,
        )
    ]
    return results, infra


PLANTED_ARMS = ["control", "treatment", "other"]
PLANTED_P = {"control": 0.35, "treatment": 0.8, "other": 0.5}


def make_planted(
    *, tasks: int = 5, trials: int = 6, seed: int = 11, timeout_arm: str | None = None
) -> list[TrialResult]:
    """A planted effect: treatment passes far more often than control, on the same trials.

    A latent draw shared by the arms of a pair gives positive within-pair correlation.
    Wall time, agent_ms and tokens are measured; ``timeout_arm`` times out on every trial
    it fails (its durations are then censored at the trial timeout).
    """
    rng = np.random.default_rng(seed)
    base = {"control": 1500.0, "treatment": 1000.0, "other": 1200.0}
    out: list[TrialResult] = []
    for t in range(tasks):
        for i in range(trials):
            shared = rng.random()
            for pos, arm in enumerate(PLANTED_ARMS):
                latent = 0.7 * shared + 0.3 * rng.random()
                passed = latent < PLANTED_P[arm]
                outcome = "passed" if passed else "failed"
                wall = float(base[arm] * np.exp(rng.normal(0, 0.3)))
                if arm == timeout_arm and not passed:
                    outcome, wall = "timeout", 60000.0
                tokens = Metric.measured(float(rng.integers(500, 3000)), "provider usage")
                out.append(
                    make_result(
                        arm,
                        f"task-{t}",
                        i,
                        outcome,
                        wall=wall,
                        calls=tuple(rng.uniform(50, 150, size=2).round(1)),
                        start_order=pos,
                        tokens=tokens,
                        agent_ms=Metric.measured(wall * 0.9, "agent"),
                    )
                )
    return out


def make_planted_run(**overrides: Any) -> dict[str, Any]:
    """run.json for `make_planted`: one declared comparison, a 60 s trial timeout."""
    run = make_run(
        arms=list(PLANTED_ARMS),
        comparisons=[["control", "treatment"]],
        tasks=[{"id": f"task-{t}", "labels": {}} for t in range(5)],
        schedule=[],
        planned_trials=90,
        run_seed=424242,
        policies={"budget": {"trial_timeout_s": 60}},
    )
    run.update(overrides)
    return run
