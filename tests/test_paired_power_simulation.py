"""Acceptance: with positive within-pair correlation, the paired test finds a planted effect
more often than an unpaired test of the same data; and a simulated run end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ruamel.yaml import YAML
from scipy.stats import fisher_exact

from helpers.common import edit_experiment
from pairbench import start_run
from pairbench.agents._simulated import SOURCE, SimulatedSettings, simulate_trial
from pairbench.analysis import mcnemar_exact

pytestmark = pytest.mark.whole_run

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "simulated"
EXPERIMENTS, PAIRS, ALPHA = 400, 40, 0.05


def test_paired_analysis_detects_a_planted_effect_more_often_than_unpaired() -> None:
    settings = SimulatedSettings.parse({"success": {"a": 0.55, "b": 0.75}, "correlation": 0.7})
    seeds = np.random.default_rng(20240917).integers(0, 2**63, size=(EXPERIMENTS, PAIRS))
    paired_hits = unpaired_hits = 0
    for row in seeds:
        a = [simulate_trial(settings, "a", "task", int(s)).passed for s in row]
        b = [simulate_trial(settings, "b", "task", int(s)).passed for s in row]
        a_only = sum(x and not y for x, y in zip(a, b, strict=True))
        b_only = sum(y and not x for x, y in zip(a, b, strict=True))
        paired_hits += mcnemar_exact(a_only, b_only) < ALPHA
        # Unpaired: the same outcomes as two independent samples of 40.
        table = [[sum(a), PAIRS - sum(a)], [sum(b), PAIRS - sum(b)]]
        unpaired_hits += fisher_exact(table).pvalue < ALPHA
    paired, unpaired = paired_hits / EXPERIMENTS, unpaired_hits / EXPERIMENTS
    assert paired > unpaired, f"paired rejects {paired:.3f}, unpaired {unpaired:.3f}"
    assert paired - unpaired > 0.1, f"paired rejects {paired:.3f}, unpaired {unpaired:.3f}"


def _copy_example(tmp_path: Path) -> Path:
    target = tmp_path / "simulated"
    shutil.copytree(EXAMPLE, target)
    return target / "experiment.yaml"


def _settings(exp: Path) -> SimulatedSettings:
    data: dict[str, Any] = YAML(typ="safe").load(exp.read_text(encoding="utf-8"))
    return SimulatedSettings.parse(data["agent"]["settings"])


def _fingerprint(results: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            r.arm,
            r.task,
            r.trial,
            r.seed,
            r.outcome,
            r.final_answer,
            r.metrics.agent_ms.value,
            r.metrics.input_tokens.value,
            r.metrics.output_tokens.value,
            r.metrics.cost_usd.value,
        )
        for r in results
    )


def test_the_example_runs_end_to_end_as_drawn_and_reproducibly(tmp_path: Path) -> None:
    exp = _copy_example(tmp_path)
    settings = _settings(exp)
    first = start_run(exp, tmp_path / "runs", run_seed=5)
    assert first.status == "complete"
    assert len(first.results) == 2 * 3 * 5
    for r in first.results:
        drawn = simulate_trial(settings, r.arm, r.task, r.seed)
        assert r.outcome == ("passed" if drawn.passed else "failed"), r
        assert r.simulated is True and r.metrics is not None
        assert r.metrics.agent_ms.provenance == "measured"
        assert r.metrics.agent_ms.source == SOURCE
        assert r.metrics.agent_ms.value == round(drawn.latency_ms or 0, 3)
        for metric in (r.metrics.input_tokens, r.metrics.output_tokens):
            assert metric.provenance == "measured" and metric.source == SOURCE
    assert {r.outcome for r in first.results} == {"passed", "failed"}
    info = json.loads((first.run_dir / "run.json").read_text(encoding="utf-8"))
    assert info["agent_simulated"] is True
    again = start_run(exp, tmp_path / "runs", run_seed=5)
    assert again.run_id != first.run_id
    assert _fingerprint(again.results) == _fingerprint(first.results)


def test_a_drawn_latency_over_the_timeout_is_a_timeout(tmp_path: Path) -> None:
    exp = edit_experiment(
        _copy_example(tmp_path), trials=1, budget={"trial_timeout_s": 1, "concurrency": 3}
    )
    settings = _settings(exp)
    outcome = start_run(exp, tmp_path / "runs", run_seed=2)
    expected = {}
    for r in outcome.results:
        drawn = simulate_trial(settings, r.arm, r.task, r.seed)
        assert drawn.latency_ms is not None
        if drawn.latency_ms > 1000:
            expected[(r.arm, r.task)] = "timeout"
        else:
            expected[(r.arm, r.task)] = "passed" if drawn.passed else "failed"
    assert {(r.arm, r.task): r.outcome for r in outcome.results} == expected
    assert "timeout" in expected.values() and set(expected.values()) - {"timeout"}
    timed_out = [r for r in outcome.results if r.outcome == "timeout"]
    assert all("1 s trial timeout" in r.reason for r in timed_out)
