"""The command adapter with real engine processes: every ending is an outcome."""

from __future__ import annotations

import asyncio
import os
import secrets
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from pairbench._errors import SpecError
from pairbench.agents import InfraFailure
from pairbench.studies.attribution_reliability.engines import (
    EngineOutcome,
    EngineRequest,
    EngineSpec,
    Persona,
    run_engine,
)

pytestmark = pytest.mark.whole_run

GOOD = """
import json, os, sys
request = json.load(sys.stdin)
print(json.dumps({
    "schema": "pairbench.attribution.report/1", "status": "completed",
    "findings": [{"id": "f1", "headline": request["personas"][0]["goal"],
                  "claim_scope": "product_behavior"}],
    "set_aside": [{"summary": " ".join(sorted(os.environ)), "reason": "out_of_scope"}],
    "quote_pool": [{"user": "u1", "text": os.environ.get("HOME", ""), "status": "kept"}],
}))
"""


def request() -> EngineRequest:
    return EngineRequest(
        mode="scan",
        start_url="http://127.0.0.1:9/v/abc",
        personas=[Persona(user="u1", goal="You want to order a cake.")],
        model_seed=7,
    )


def run(tmp_path: Path, script: str, **spec: object) -> EngineOutcome:
    program = tmp_path / "engine.py"
    program.write_text(textwrap.dedent(script), encoding="utf-8")
    parsed = EngineSpec.parse({"engine": "command", "argv": ["python", str(program)], **spec})
    env = {**os.environ, "PAIRBENCH_TEST_LEAK": "leaked"}
    return asyncio.run(run_engine(parsed, request(), env=env, workdir=tmp_path / "work"))


@pytest.mark.parametrize("contained", [True, False])
def test_a_good_engine_reports_and_gets_only_the_scrubbed_env(
    tmp_path: Path, contained: bool
) -> None:
    outcome = run(tmp_path, GOOD, env={"DECLARED": "yes"}, contained=contained)
    assert outcome.failure is None, outcome.message
    assert outcome.report is not None
    assert outcome.report.findings[0].headline == "You want to order a cake."
    names = outcome.report.set_aside[0].summary.split()
    assert "PAIRBENCH_TEST_LEAK" not in names
    assert "DECLARED" in names
    # Contained, HOME is the sandbox's empty tmpfs; on the host, a folder of the call's own.
    home = "/home/engine" if contained else str(tmp_path / "work" / "home")
    assert outcome.report.quote_pool[0].text == home
    assert outcome.duration_ms > 0


def test_a_non_zero_exit_is_a_crash_with_the_stderr_tail(tmp_path: Path) -> None:
    outcome = run(tmp_path, "import sys\nprint('model quota gone', file=sys.stderr)\nsys.exit(3)")
    assert outcome.failure == "crash"
    assert "exit code 3" in outcome.message
    assert "model quota gone" in outcome.message
    assert outcome.stderr_tail == "model quota gone"
    assert outcome.report is None


def test_text_on_stdout_is_non_json(tmp_path: Path) -> None:
    outcome = run(tmp_path, "print('all good, 3 findings')")
    assert outcome.failure == "non_json"
    assert "not JSON" in outcome.message
    assert outcome.raw_stdout.startswith("all good")


def test_nothing_on_stdout_is_non_json(tmp_path: Path) -> None:
    outcome = run(tmp_path, "pass")
    assert outcome.failure == "non_json"
    assert "answered nothing" in outcome.message


def test_an_extra_field_is_an_invalid_report(tmp_path: Path) -> None:
    outcome = run(tmp_path, 'print(\'{"status": "completed", "verdict": "fine"}\')')
    assert outcome.failure == "invalid_report"
    assert "verdict" in outcome.message
    assert outcome.report is None


def test_another_schema_is_an_invalid_report(tmp_path: Path) -> None:
    outcome = run(tmp_path, 'print(\'{"schema": "other/2", "status": "completed"}\')')
    assert outcome.failure == "invalid_report"
    assert "schema" in outcome.message


def test_a_failed_report_is_kept_as_an_engine_error(tmp_path: Path) -> None:
    script = """
    import json
    print(json.dumps({"status": "failed", "errors": [{"kind": "model", "message": "429"}],
                      "findings": [{"id": "f1", "claim_scope": "usability"}]}))
    """
    outcome = run(tmp_path, script)
    assert outcome.failure == "engine_error"
    assert outcome.report is not None and len(outcome.report.findings) == 1
    assert "model: 429" in outcome.message


@pytest.mark.parametrize("contained", [True, False])
def test_the_timeout_kills_the_whole_group(tmp_path: Path, contained: bool) -> None:
    # The grandchild is found on the host by its own argument (inside the sandbox its pid
    # is another namespace's, and its files are gone with its tmpfs).
    mark = f"{60 + secrets.randbelow(10**6) / 10**7:.7f}"
    script = f"""
    import subprocess, time
    child = subprocess.Popen(["sleep", "{mark}"])
    time.sleep(60)
    """
    started = time.monotonic()
    outcome = run(tmp_path, script, timeout_s=2, contained=contained)
    assert outcome.failure == "timeout"
    assert "2 s" in outcome.message
    assert time.monotonic() - started < 15
    assert not _running_with(mark)


@pytest.mark.parametrize("contained", [True, False])
def test_a_grandchild_holding_stdout_does_not_hold_the_answer(
    tmp_path: Path, contained: bool
) -> None:
    mark = f"{60 + secrets.randbelow(10**6) / 10**7:.7f}"
    script = f"""
    import subprocess, time
    child = subprocess.Popen(["sleep", "{mark}"])  # inherits stdout, like a leaked browser
    time.sleep(0.5)  # started: it is on the host's process table when the engine answers
    print('{{"status": "completed"}}', flush=True)
    """
    started = time.monotonic()
    outcome = run(tmp_path, script, timeout_s=30, contained=contained)
    assert outcome.failure is None, outcome.message
    assert time.monotonic() - started < 15
    assert not _running_with(mark)


def test_the_default_deadline_is_per_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairbench.studies.attribution_reliability.engines import Budget, _run

    monkeypatch.setattr(_run, "TIMEOUT_SLACK_S", 0.0)
    slow = request().model_copy(update={"budget": Budget(seconds_per_user=1.5)})
    program = tmp_path / "engine.py"
    program.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    spec = EngineSpec.parse({"engine": "command", "argv": ["python", str(program)]})
    outcome = asyncio.run(run_engine(spec, slow, env=os.environ, workdir=tmp_path / "w"))
    assert outcome.failure == "timeout"
    assert "within 1.5 s" in outcome.message


def test_an_unset_reference_names_the_variable(tmp_path: Path) -> None:
    spec = EngineSpec.parse(
        {"engine": "command", "argv": ["python", "-c", "pass"], "env": {"K": "${env:NOPE_X}"}}
    )
    with pytest.raises(SpecError, match=r"engine\.env\.K: .* NOPE_X, which is not set"):
        asyncio.run(run_engine(spec, request(), env={}, workdir=tmp_path))


def test_a_missing_program_is_infrastructure(tmp_path: Path) -> None:
    spec = EngineSpec.parse({"engine": "command", "argv": [str(tmp_path / "nope")]})
    with pytest.raises(InfraFailure, match="could not start"):
        asyncio.run(run_engine(spec, request(), env=os.environ, workdir=tmp_path))


def _running_with(mark: str) -> bool:
    """Whether a live ``sleep <mark>`` is still on the host after 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            if proc.info["cmdline"] == ["sleep", mark]:
                alive.append(proc.info["status"] != psutil.STATUS_ZOMBIE)
        if not any(alive):
            return False
        time.sleep(0.05)
    return True
