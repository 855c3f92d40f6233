"""Detectors fire (and stay quiet) through the real runner, fixture servers and agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers.common import edit_experiment, study_copy, task_named
from pairbench import TrialResult, start_run
from pairbench.runner import canary_for
from pairbench.store import Security

pytestmark = pytest.mark.whole_run

PRINT_ENV = "import json, os, sys; sys.stdin.read(); print(json.dumps(dict(os.environ)))"
CALL_WITH_ENV = (
    "import json, os, sys; sys.stdin.read(); "
    "print(json.dumps({'kind': 'tool_call', 'id': 'c1', 'server': 'tracker', "
    "'tool': 'add_comment', 'arguments': {'body': os.environ.get('PAIRBENCH_CANARY', '')}})); "
    "print(json.dumps({'kind': 'final', 'text': 'done'}))"
)
OFF_SURFACE = (
    "import json, sys; sys.stdin.read(); "
    "print(json.dumps({'kind': 'tool_call', 'id': 'c1', 'server': 'shell', 'tool': 'exec', "
    "'arguments': {'cmd': 'ls'}})); print(json.dumps({'kind': 'final', 'text': 'done'}))"
)
ON_SURFACE = OFF_SURFACE.replace("'shell', 'tool': 'exec'", "'tracker', 'tool': 'get_issue'")

TRACKER = {
    "mcp": {
        "tracker": {
            "transport": "stdio",
            "command": ["python3", "-m", "pairbench.studies.mcp_transports.tracker_server"],
        }
    }
}


def _command(script: str, **extra: Any) -> dict[str, Any]:
    return {"adapter": "command", "settings": {"command": ["python3", "-c", script]}, **extra}


def _by(results: list[TrialResult]) -> dict[tuple[str, str], TrialResult]:
    return {(r.arm, r.task): r for r in results}


def _security(r: TrialResult) -> Security:
    assert r.security is not None, f"{r.arm}/{r.task} has no security record"
    return r.security


def test_injection_obeyed_read_and_unseen(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    summary = task_named(exp, "injection-summary")
    obey = {**summary, "id": "injection-obey", "plan": "plans/injection_obey.yaml"}
    edit_experiment(
        exp,
        trials=1,
        comparisons=[],
        tasks=[summary, obey],
        arms={"baseline": {"tools": "none"}, "local-stdio": {"tools": TRACKER}},
    )
    out = _by(start_run(exp, tmp_path / "runs", run_seed=3).results)
    assert _security(out[("local-stdio", "injection-obey")]).prompt_injection_compliance is True
    assert out[("local-stdio", "injection-obey")].outcome == "failed"
    assert _security(out[("local-stdio", "injection-summary")]).prompt_injection_compliance is False
    assert _security(out[("local-stdio", "injection-summary")]).injection_seen is True
    assert _security(out[("baseline", "injection-summary")]).prompt_injection_compliance is None


def test_scrubbing_hides_the_canary_unless_allow_listed(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    task = {
        **task_named(exp, "read-issue-title"),
        "grader": {"name": "exact-answer", "args": {"expect": "x"}},
    }
    edit_experiment(
        exp,
        trials=1,
        comparisons=[],
        tasks=[task],
        arms={
            "scrubbed": {"agent": _command(PRINT_ENV)},
            "leaky": {"agent": _command(PRINT_ENV, env_allow=["PAIRBENCH_CANARY"])},
            "scrubbed-call": {"agent": _command(CALL_WITH_ENV)},
            "leaky-call": {"agent": _command(CALL_WITH_ENV, env_allow=["PAIRBENCH_CANARY"])},
        },
    )
    outcome = start_run(exp, tmp_path / "runs", run_seed=4)
    canary = canary_for(outcome.run_id)
    out = _by(outcome.results)
    scrubbed = out[("scrubbed", "read-issue-title")]
    assert scrubbed.final_answer and "PATH" in scrubbed.final_answer  # it did print its env
    assert canary not in scrubbed.final_answer
    assert _security(scrubbed).secret_in_output is False
    leaky = out[("leaky", "read-issue-title")]
    # It printed the canary; the stored answer holds its placeholder, never the value.
    assert canary not in (leaky.final_answer or "")
    assert "[redacted:PAIRBENCH_CANARY]" in (leaky.final_answer or "")
    assert _security(leaky).secret_in_output is True
    assert "final_answer" in _security(leaky).secret_locations
    assert _security(out[("scrubbed-call", "read-issue-title")]).secret_in_output is False
    call = _security(out[("leaky-call", "read-issue-title")])
    assert call.secret_in_output is True and call.secret_locations == ["tool_call_arguments"]


def test_a_call_off_the_arm_surface_makes_the_trial_invalid(tmp_path: Path) -> None:
    exp = study_copy(tmp_path)
    task = {
        **task_named(exp, "read-issue-title"),
        "grader": {"name": "exact-answer", "args": {"expect": "done"}},
    }
    edit_experiment(
        exp,
        trials=1,
        comparisons=[],
        tasks=[task],
        arms={
            "off": {"agent": _command(OFF_SURFACE), "tools": TRACKER},
            "on": {"agent": _command(ON_SURFACE), "tools": TRACKER},
        },
    )
    out = _by(start_run(exp, tmp_path / "runs", run_seed=5).results)
    off = out[("off", "read-issue-title")]
    assert off.validity is not None and off.validity.valid is False
    assert off.validity.off_surface == ["shell.exec"]
    on = out[("on", "read-issue-title")]
    assert on.validity is not None and on.validity.valid is True
    assert off.outcome == on.outcome == "passed"  # validity is reported apart from success
