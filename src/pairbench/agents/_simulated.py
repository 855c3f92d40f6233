"""The simulated agent: seeded pass/fail, latency and tokens with within-pair correlation.

No model, no network: every number is drawn from ``numpy.random.default_rng`` seeded from
the trial seed, so the same run seed reproduces a run exactly, and, because every arm of a
pair gets the same trial seed, the arms of a pair share a latent draw (the positive
within-pair correlation real agents show). Settings::

    success: {baseline: 0.55, candidate: 0.75}      # per arm; or {arm: {task-id: p, "*": p}}
    correlation: 0.6                                # within-pair latent correlation, 0..1
    latency_ms: {baseline: {median: 1200, sigma: 0.4}, candidate: {median: 900, sigma: 0.4}}
    tokens: {baseline: {input: 2000, output: 300, sigma: 0.3,
                        cost_per_1k: {input: 0.003, output: 0.015}}}
    realtime: false                                 # true: sleep the drawn latency
    time_scale: 1.0                                 # realtime sleeps latency * time_scale

**The model** (a Gaussian copula). For trial seed ``s`` two generators are built::

    pair stream: default_rng(sha256(f"{s}|simulated|pair")[:8] big-endian)
    arm stream:  default_rng(sha256(f"{s}|simulated|arm|{arm}")[:8] big-endian)

and each draws four standard normals, always in this order: success, latency, input
tokens, output tokens. For each quantity the latent is ``sqrt(rho) * z_pair + sqrt(1 - rho)
* z_arm``, a standard normal whose correlation between two arms of a pair is ``rho``.

- success: the attempt passes iff ``Phi(latent) < p(arm, task)``; the answer is ``PASS``
  or ``FAIL`` (grade it with ``exact-answer``, ``args: {expect: PASS}``).
- latency (optional per arm): ``median * exp(sigma * latent)`` ms, reported as ``agent_ms``.
  A drawn latency over the trial timeout makes the agent sleep past the timeout, so the
  runner records a real ``timeout``. Otherwise it returns at once unless ``realtime``.
- tokens (optional per arm): ``input * exp(sigma * latent)`` and likewise for output,
  rounded; cost is *estimated* from ``cost_per_1k`` when declared, else missing.

Missing latency or tokens settings leave those metrics missing, never 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from pairbench._model import Frozen
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric, usage_metrics

SOURCE = "simulated agent (seeded)"
PASS, FAIL = "PASS", "FAIL"
_PAST_TIMEOUT_S = 1.0
"""How far past the trial timeout a too-slow draw sleeps (the runner cancels it first)."""

Probability = Annotated[float, Field(ge=0.0, le=1.0)]


class Lognormal(Frozen):
    """A lognormal latency: ``median * exp(sigma * z)``."""

    median: float = Field(gt=0)
    sigma: float = Field(default=0.0, ge=0)


class CostPer1k(Frozen):
    """Declared prices in USD per 1000 tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class TokenModel(Frozen):
    """Lognormal token counts with medians ``input`` and ``output``."""

    input: float = Field(gt=0)
    output: float = Field(gt=0)
    sigma: float = Field(default=0.0, ge=0)
    cost_per_1k: CostPer1k | None = None


class SimulatedSettings(AdapterSettings):
    """The simulated agent's settings, validated (unknown keys are an error)."""

    example = (
        "{success: {baseline: 0.55, candidate: 0.75}, correlation: 0.6, "
        "latency_ms: {baseline: {median: 1200, sigma: 0.4}}}"
    )

    success: dict[str, Probability | dict[str, Probability]]
    """Pass probability per arm, or per arm and task (``"*"`` is the arm's default)."""
    correlation: float = Field(default=0.0, ge=0.0, le=1.0)
    """Within-pair latent correlation rho (0: arms independent; 1: one shared draw)."""
    latency_ms: dict[str, Lognormal] = Field(default_factory=dict)
    tokens: dict[str, TokenModel] = Field(default_factory=dict)
    realtime: bool = False
    time_scale: float = Field(default=1.0, gt=0)

    def probability(self, arm: str, task: str) -> float:
        """The pass probability of ``task`` in ``arm``; ``LookupError`` names the fix."""
        declared = self.success.get(arm)
        if declared is None:
            raise LookupError(
                f"simulated agent: no success probability for arm {arm!r}; "
                f"add it under agent.settings.success (declared: {sorted(self.success)})"
            )
        if isinstance(declared, float):
            return declared
        p = declared.get(task, declared.get("*"))
        if p is None:
            raise LookupError(
                f"simulated agent: no success probability for task {task!r} in arm {arm!r}; "
                f'add agent.settings.success.{arm}.{task} or a default "*"'
            )
        return p


@dataclass(frozen=True)
class SimulatedTrial:
    """One attempt's draws (``None``: not declared for the arm, so not reported)."""

    arm: str
    task: str
    seed: int
    p_success: float
    u_success: float
    """``Phi(latent)``: uniform on [0, 1]; the attempt passes iff it is below ``p_success``."""
    passed: bool
    latency_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


def _normals(seed: int, stream: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    digest = hashlib.sha256(f"{seed}|simulated|{stream}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big")).standard_normal(4)


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def simulate_trial(
    settings: SimulatedSettings | Mapping[str, Any], arm: str, task: str, seed: int
) -> SimulatedTrial:
    """The simulated agent's draws for one attempt (pure: ``run`` uses exactly this).

    **Usage**::

        s = SimulatedSettings.parse({"success": {"a": 0.5, "b": 0.8}, "correlation": 0.7})
        simulate_trial(s, "a", "t1", seed=42).passed
    """
    cfg = settings if isinstance(settings, SimulatedSettings) else SimulatedSettings.parse(settings)
    p = cfg.probability(arm, task)
    rho = cfg.correlation
    latent = math.sqrt(rho) * _normals(seed, "pair") + math.sqrt(1.0 - rho) * _normals(
        seed, f"arm|{arm}"
    )
    u = _phi(float(latent[0]))
    latency = cfg.latency_ms.get(arm)
    latency_ms = None
    if latency is not None:
        latency_ms = latency.median * math.exp(latency.sigma * float(latent[1]))
    tokens = cfg.tokens.get(arm)
    n_in = n_out = None
    cost = None
    if tokens is not None:
        n_in = round(tokens.input * math.exp(tokens.sigma * float(latent[2])))
        n_out = round(tokens.output * math.exp(tokens.sigma * float(latent[3])))
        if tokens.cost_per_1k is not None:
            price = tokens.cost_per_1k
            cost = (n_in * price.input + n_out * price.output) / 1000.0
    return SimulatedTrial(arm, task, seed, p, u, u < p, latency_ms, n_in, n_out, cost)


class SimulatedAgent:
    """Draws pass/fail, latency and tokens from the trial seed (see the module docstring)."""

    uses_workdir = False
    """In-process: no private work folder, HOME or TMPDIR needed (see ``Agent``)."""
    Settings = SimulatedSettings

    @classmethod
    def describe(cls, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
        """What run.json records of an arm: no model, so no tool discovery to pin."""
        return {"tool_discovery": "not applicable (no model)"}

    simulated = True
    """Runs with this adapter are labelled simulated (``run.json``'s ``agent_simulated``)."""

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings = SimulatedSettings.parse(settings or {})

    async def run(self, ctx: AgentContext) -> AgentOutput:
        ctx.transcript.emit("agent_start", agent="simulated", arm=ctx.arm)
        try:
            trial = simulate_trial(self.settings, ctx.arm, ctx.task, ctx.seed)
        except LookupError as exc:
            # A setting that does not cover this arm or task is the harness's configuration,
            # not the agent's failure: infra, so the run stops and says why.
            raise InfraFailure(str(exc)) from exc
        ctx.transcript.emit(
            "message",
            text=f"Simulated draw: u={trial.u_success:.4f} against p={trial.p_success:g}.",
        )
        if trial.latency_ms is not None:
            if trial.latency_ms / 1000.0 > ctx.timeout_s:
                ctx.transcript.emit(
                    "message",
                    text=f"Drawn latency {trial.latency_ms:.0f} ms exceeds the "
                    f"{ctx.timeout_s:g} s timeout; sleeping past it.",
                )
                await asyncio.sleep(ctx.timeout_s + _PAST_TIMEOUT_S)
                # Only reached when the caller enforces no timeout (the runner always does).
                return AgentOutput(
                    final_answer=None,
                    error=f"drawn latency {trial.latency_ms:.0f} ms exceeds the timeout",
                    simulated=True,
                )
            if self.settings.realtime:
                await asyncio.sleep(trial.latency_ms / 1000.0 * self.settings.time_scale)
        return self._output(trial, ctx)

    def _output(self, trial: SimulatedTrial, ctx: AgentContext) -> AgentOutput:
        undeclared = f"the simulated agent declares no tokens for arm {trial.arm!r}"
        n_in = n_out = cost = Metric.missing(undeclared)
        if trial.input_tokens is not None and trial.output_tokens is not None:
            n_in = Metric.measured(trial.input_tokens, SOURCE)
            n_out = Metric.measured(trial.output_tokens, SOURCE)
            ctx.transcript.emit(
                "usage",
                input_tokens=trial.input_tokens,
                output_tokens=trial.output_tokens,
                source=SOURCE,
                provenance="measured",
            )
            cost = Metric.missing(f"no tokens.{trial.arm}.cost_per_1k declared")
        if trial.cost_usd is not None:
            cost = Metric(
                value=round(trial.cost_usd, 9),
                provenance="estimated",
                estimator=f"simulated tokens x declared tokens.{trial.arm}.cost_per_1k "
                "(covers all tokens)",
            )
        agent_ms = Metric.missing(f"the simulated agent declares no latency_ms for {trial.arm!r}")
        if trial.latency_ms is not None:
            agent_ms = Metric.measured(round(trial.latency_ms, 3), SOURCE)
        answer = PASS if trial.passed else FAIL
        ctx.transcript.emit("final", text=answer)
        return AgentOutput(
            final_answer=answer,
            turns=Metric.measured(1, SOURCE),
            agent_ms=agent_ms,
            **usage_metrics(
                source=SOURCE, total_input=n_in, output=n_out, missing="no cache split simulated"
            )._asdict(),
            cost_usd=cost,
            simulated=True,
        )


DISCORDANCE_DRAWS = 4000
"""Pairs the plan's Monte Carlo simulates (standard error of a share <= 0.008)."""


@dataclass(frozen=True)
class Discordance:
    """Expected shares of pairs only arm A or only arm B passes, under the simulated model."""

    a_only: float
    b_only: float
    draws: int

    @property
    def discordant(self) -> float:
        return self.a_only + self.b_only

    @property
    def ratio(self) -> float | None:
        """Larger discordant share over the smaller (>= 1); ``None`` when the smaller is 0."""
        low, high = sorted((self.a_only, self.b_only))
        return None if low == 0 else high / low


def expected_discordance(
    settings: SimulatedSettings | Mapping[str, Any],
    arm_a: str,
    arm_b: str,
    tasks: list[tuple[str, int]],
    draws: int = DISCORDANCE_DRAWS,
) -> Discordance:
    """Monte Carlo of ``draws`` pairs with the agent's own draw function (`simulate_trial`).

    ``tasks`` is ``[(task_id, trials), ...]``; pair ``i`` takes the ``i``-th entry of the
    tasks repeated by their trial counts (cycled), so tasks weigh as the schedule weighs
    them, and seed ``sha256(f"pairbench|simulated|discordance|{i}")[:8]`` (big-endian): the
    same inputs always give the same shares.
    """
    cfg = settings if isinstance(settings, SimulatedSettings) else SimulatedSettings.parse(settings)
    weighted = [task for task, trials in tasks for _ in range(trials)]
    if not weighted:
        raise ValueError("expected_discordance needs at least one task with a trial")
    a_only = b_only = 0
    for i in range(draws):
        digest = hashlib.sha256(f"pairbench|simulated|discordance|{i}".encode()).digest()
        seed = int.from_bytes(digest[:8], "big")
        task = weighted[i % len(weighted)]
        a = simulate_trial(cfg, arm_a, task, seed).passed
        b = simulate_trial(cfg, arm_b, task, seed).passed
        a_only += a and not b
        b_only += b and not a
    return Discordance(a_only=a_only / draws, b_only=b_only / draws, draws=draws)
