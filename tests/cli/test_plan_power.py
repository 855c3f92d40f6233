"""`pairbench plan --power` through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.common import cli_here, edit_experiment
from pairbench.analysis._power import mcnemar_power, mcnemar_sample_size

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "simulated"


def _example(tmp_path: Path) -> Path:
    shutil.copytree(EXAMPLE, tmp_path / "simulated")
    return tmp_path / "simulated" / "experiment.yaml"


def test_power_json_has_the_table_and_the_simulated_agents_implied_effect(tmp_path: Path) -> None:
    exp = _example(tmp_path)
    done = cli_here("plan", str(exp), "--power", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    power = json.loads(done.stdout)["power"]
    assert power["alpha"] == 0.05 and power["target_power"] == 0.8
    assert power["schedule_pairs"] == 15  # 3 tasks x 5 trials
    cells = {(row["discordant_share"], row["ratio"]): row for row in power["table"]}
    assert sorted(cells) == [(d, r) for d in (0.1, 0.2, 0.3) for r in (2.0, 3.0, 4.0)]
    assert cells[(0.2, 2.0)]["pairs_needed"] == mcnemar_sample_size(0.2, 2.0) == 351
    assert cells[(0.3, 4.0)]["power_at_schedule"] == round(mcnemar_power(15, 0.3, 4.0), 4)
    (comparison,) = power["comparisons"]
    assert comparison["arms"] == ["baseline", "candidate"] and comparison["pairs"] == 15
    sim = comparison["simulated"]
    # The example plants candidate > baseline with correlation 0.6: most discordant
    # pairs favour the candidate, and fewer pairs are discordant than if independent.
    assert sim["b_only_share"] > sim["a_only_share"] > 0
    assert 0.2 < sim["discordant_share"] < 0.45 and sim["ratio"] > 2
    assert sim["pairs_needed"] == mcnemar_sample_size(sim["discordant_share"], sim["ratio"])
    assert 0 < sim["power_at_schedule"] < 0.8
    # Seeded Monte Carlo: the same plan twice gives the same numbers.
    again = cli_here("plan", str(exp), "--power", "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["power"] == power


def test_without_power_the_json_has_no_power_key(tmp_path: Path) -> None:
    done = cli_here("plan", str(_example(tmp_path)), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "power" not in json.loads(done.stdout)


def test_power_text_names_the_comparison_and_the_table(tmp_path: Path) -> None:
    done = cli_here("plan", str(_example(tmp_path)), "--power", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "baseline vs candidate: 15 pairs in this schedule." in done.stdout
    assert "simulated agent implies: discordant share" in done.stdout
    assert "Pairs needed" in done.stdout and "351 (0.00)" in done.stdout


def test_a_non_simulated_agent_gets_the_table_but_no_implied_effect(tmp_path: Path) -> None:
    exp = edit_experiment(
        _example(tmp_path), agent={"adapter": "command", "settings": {"command": ["true"]}}
    )
    done = cli_here("plan", str(exp), "--power", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    power = json.loads(done.stdout)["power"]
    assert power["comparisons"][0]["simulated"] is None and len(power["table"]) == 9


def test_a_bad_simulated_setting_is_one_clear_error(tmp_path: Path) -> None:
    exp = edit_experiment(
        _example(tmp_path),
        agent={"adapter": "simulated", "settings": {"success": {"baseline": 0.5}}},
    )
    done = cli_here("plan", str(exp), "--power", cwd=tmp_path)
    assert done.returncode == 2
    assert "no success probability for arm 'candidate'" in done.stderr
    assert "Traceback" not in done.stderr
