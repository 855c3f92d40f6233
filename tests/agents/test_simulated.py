"""The simulated agent: seeded draws, the copula's correlation, settings errors, its output."""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pairbench import _registry
from pairbench._errors import SpecError
from pairbench.agents import AgentContext, InfraFailure, SimulatedAgent, Transcript
from pairbench.agents._simulated import (
    SOURCE,
    SimulatedSettings,
    expected_discordance,
    simulate_trial,
)

pytestmark = pytest.mark.whole_run

SEEDS = [int(s) for s in np.random.default_rng(20240601).integers(0, 2**63, size=20_000)]


def _ctx(arm: str, seed: int, *, task: str = "t1", timeout_s: float = 60.0) -> AgentContext:
    return AgentContext(
        run_id="r",
        arm=arm,
        task=task,
        trial=0,
        seed=seed,
        model_seed=seed & 0x7FFFFFFF,
        prompt="p",
        content={},
        env={},
        workdir=Path("."),
        transcript=Transcript(None),
        settings={},
        timeout_s=timeout_s,
        has_tools=False,
    )


def _settings(rho: float, **extra: Any) -> SimulatedSettings:
    return SimulatedSettings.parse({"success": {"a": 0.55, "b": 0.75}, "correlation": rho, **extra})


def _phi(rho: float) -> float:
    s = _settings(rho)
    seeds = SEEDS[:8000]
    a = np.array([simulate_trial(s, "a", "t", seed).passed for seed in seeds], dtype=float)
    b = np.array([simulate_trial(s, "b", "t", seed).passed for seed in seeds], dtype=float)
    return float(np.corrcoef(a, b)[0, 1])


def test_it_is_registered_and_labelled_simulated() -> None:
    assert _registry.load("agents", "simulated") is SimulatedAgent
    assert SimulatedAgent.simulated is True


def test_the_same_seed_gives_the_same_draws_and_arms_differ_only_in_their_own_stream() -> None:
    s = _settings(0.6, latency_ms={"a": {"median": 1000, "sigma": 0.4}})
    assert simulate_trial(s, "a", "t", 7) == simulate_trial(s, "a", "t", 7)
    assert simulate_trial(s, "a", "t", 7) != simulate_trial(s, "a", "t", 8)
    # rho = 1: both arms read the one shared draw, so equal p means equal outcomes.
    same = SimulatedSettings.parse({"success": {"a": 0.5, "b": 0.5}, "correlation": 1.0})
    assert all(
        simulate_trial(same, "a", "t", seed).passed == simulate_trial(same, "b", "t", seed).passed
        for seed in SEEDS[:500]
    )


def test_realised_pass_rates_match_the_declared_probabilities() -> None:
    s = _settings(0.6)
    for arm, p in (("a", 0.55), ("b", 0.75)):
        rate = np.mean([simulate_trial(s, arm, "t", seed).passed for seed in SEEDS])
        # four standard errors: a seeded check that fails only if the model is wrong
        assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / len(SEEDS)), (arm, rate)


def test_the_phi_correlation_between_arms_is_positive_and_grows_with_rho() -> None:
    phis = [_phi(rho) for rho in (0.0, 0.3, 0.6, 0.9)]
    assert abs(phis[0]) < 0.04, phis  # about 3.5 standard errors at n = 8000
    assert all(later > earlier + 0.05 for earlier, later in itertools.pairwise(phis))
    assert phis[-1] > 0.4, phis


def test_per_task_probabilities_and_the_star_default() -> None:
    s = SimulatedSettings.parse({"success": {"a": {"hard": 0.0, "*": 1.0}}})
    assert simulate_trial(s, "a", "hard", 1).passed is False
    assert simulate_trial(s, "a", "easy", 1).passed is True
    with pytest.raises(LookupError, match="arm 'b'"):
        simulate_trial(s, "b", "easy", 1)
    with pytest.raises(LookupError, match='"\\*"'):
        simulate_trial(SimulatedSettings.parse({"success": {"a": {"x": 0.5}}}), "a", "y", 1)


def test_latency_is_lognormal_around_the_declared_median() -> None:
    s = _settings(0.5, latency_ms={"a": {"median": 1200, "sigma": 0.4}})
    drawn = [simulate_trial(s, "a", "t", seed).latency_ms for seed in SEEDS[:5000]]
    assert all(v is not None for v in drawn)
    assert float(np.median(np.array(drawn, dtype=float))) == pytest.approx(1200, rel=0.03)
    assert simulate_trial(s, "b", "t", 1).latency_ms is None  # not declared for b


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"success": {"a": 0.5}, "correlation": 1.5}, "agent.settings.correlation"),
        ({"success": {"a": 1.2}}, "agent.settings.success.a"),
        ({"success": {"a": 0.5}, "corelation": 0.5}, "agent.settings.corelation"),
        ({"correlation": 0.5}, "agent.settings.success"),
        ({"success": {"a": 0.5}, "latency_ms": {"a": {"median": -1}}}, "latency_ms.a.median"),
    ],
)
def test_a_bad_setting_fails_construction_naming_the_setting_and_the_fix(
    settings: dict[str, Any], named: str
) -> None:
    with pytest.raises(SpecError) as raised:
        SimulatedAgent(settings)
    text = str(raised.value)
    # A bad value's fix shows valid settings; an unknown key's names the allowed keys.
    assert named in text
    assert "fix it in experiment.yaml (e.g. settings: {success:" in text or (
        "unknown setting" in text and "allowed keys: correlation, latency_ms" in text
    )


def test_run_answers_as_drawn_with_measured_metrics_and_a_transcript() -> None:
    settings = {
        "success": {"a": 0.55, "b": 0.75},
        "correlation": 0.6,
        "latency_ms": {"a": {"median": 1200, "sigma": 0.4}},
        "tokens": {
            "a": {"input": 2000, "output": 300, "sigma": 0.3},
            "b": {"input": 2000, "output": 300, "cost_per_1k": {"input": 1.0, "output": 2.0}},
        },
    }
    agent = SimulatedAgent(settings)
    for arm, seed in (("a", 11), ("a", 12), ("b", 13)):
        ctx = _ctx(arm, seed)
        out = asyncio.run(agent.run(ctx))
        drawn = simulate_trial(agent.settings, arm, "t1", seed)
        assert out.simulated is True and out.error is None
        assert out.final_answer == ("PASS" if drawn.passed else "FAIL")
        assert [e["kind"] for e in ctx.transcript.events] == [
            "agent_start",
            "message",
            "usage",
            "final",
        ]
        assert out.input_tokens.provenance == "measured" and out.input_tokens.source == SOURCE
        assert out.input_tokens.value == drawn.input_tokens
    a = asyncio.run(agent.run(_ctx("a", 11)))
    assert a.agent_ms.provenance == "measured" and a.agent_ms.source == SOURCE
    assert a.cost_usd.provenance == "missing"  # no price declared: never 0
    b = asyncio.run(agent.run(_ctx("b", 13)))
    assert b.agent_ms.provenance == "missing"  # no latency declared for b
    drawn_b = simulate_trial(agent.settings, "b", "t1", 13)
    assert b.cost_usd.provenance == "estimated"
    assert drawn_b.input_tokens is not None and drawn_b.output_tokens is not None
    expected = (drawn_b.input_tokens * 1.0 + drawn_b.output_tokens * 2.0) / 1000
    assert b.cost_usd.value == pytest.approx(expected)


def test_an_arm_the_settings_do_not_cover_is_an_infra_failure() -> None:
    with pytest.raises(InfraFailure, match="no success probability for arm 'c'"):
        asyncio.run(SimulatedAgent({"success": {"a": 0.5}}).run(_ctx("c", 1)))


def test_a_drawn_latency_over_the_timeout_sleeps_past_it() -> None:
    agent = SimulatedAgent({"success": {"a": 1.0}, "latency_ms": {"a": {"median": 5000}}})

    async def bounded() -> None:
        async with asyncio.timeout(0.2):
            await agent.run(_ctx("a", 1, timeout_s=0.1))

    with pytest.raises(TimeoutError):
        asyncio.run(bounded())


def test_realtime_sleeps_the_scaled_latency_and_otherwise_returns_at_once() -> None:
    base: dict[str, Any] = {"success": {"a": 1.0}, "latency_ms": {"a": {"median": 400}}}
    started = time.perf_counter()
    asyncio.run(SimulatedAgent(base).run(_ctx("a", 1)))
    assert time.perf_counter() - started < 0.1
    started = time.perf_counter()
    asyncio.run(SimulatedAgent({**base, "realtime": True, "time_scale": 0.5}).run(_ctx("a", 1)))
    assert 0.19 < time.perf_counter() - started < 1.0


def test_expected_discordance_is_seeded_and_follows_the_planted_effect() -> None:
    s = _settings(0.7)
    first = expected_discordance(s, "a", "b", [("t", 5)], draws=2000)
    assert first == expected_discordance(s, "a", "b", [("t", 5)], draws=2000)
    assert first.b_only > first.a_only > 0
    # Independent arms: P(discordant) = p_a (1 - p_b) + p_b (1 - p_a) = 0.475
    independent = expected_discordance(_settings(0.0), "a", "b", [("t", 1)], draws=4000)
    assert independent.discordant == pytest.approx(0.475, abs=0.03)
    assert first.discordant < independent.discordant  # correlation removes discordance
