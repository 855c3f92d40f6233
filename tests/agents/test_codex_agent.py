"""The codex agent against the fake ``codex`` executable (real subprocess, real MCP)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pairbench.agents import AgentContext, InfraFailure, RunSignals, Transcript
from pairbench.agents.codex._agent import CodexAgent, mcp_overrides

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _config(tmp_path: Path) -> dict[str, Any]:
    fixture = tmp_path / "fixture"
    fixture.mkdir(exist_ok=True)
    env = {"PAIRBENCH_TRIAL_SEED": "5", "PAIRBENCH_FIXTURE_DIR": str(fixture), "PYTHONPATH": SRC}
    args = ["-m", "pairbench.studies.mcp_transports.tracker_server"]
    return {"mcpServers": {"tracker": {"command": sys.executable, "args": args, "env": env}}}


def _ctx(tmp_path: Path, scenario: str, signals: RunSignals) -> AgentContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC, "FAKE_CODEX_SCENARIO": scenario}
    return AgentContext(
        run_id="r",
        arm="a",
        task="t",
        trial=1,
        seed=1,
        model_seed=1,
        prompt="Say hello.",
        content={},
        env=env,
        workdir=work,
        transcript=Transcript(None),
        settings={},
        timeout_s=60,
        has_tools=False,
        signals=signals,
    )


def _exe(tmp_path: Path) -> str:
    exe = tmp_path / "codex"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m pairbench.testing.fake_codex "$@"\n')
    exe.chmod(0o755)
    return str(exe)


def test_a_401_turn_failure_is_infra_first_then_agent_error(tmp_path: Path) -> None:
    agent = CodexAgent({"model": "gpt-5.5", "executable": _exe(tmp_path)})
    with pytest.raises(InfraFailure, match="rejected authentication"):
        asyncio.run(agent.run(_ctx(tmp_path, "auth_failure", RunSignals())))
    signals = RunSignals()
    signals.model_call_succeeded = True
    out = asyncio.run(agent.run(_ctx(tmp_path, "auth_failure", signals)))
    assert out.error is not None and "401" in out.error


def test_reconnecting_then_an_answer_succeeds(tmp_path: Path) -> None:
    agent = CodexAgent({"model": "gpt-5.5", "executable": _exe(tmp_path)})
    ctx = _ctx(tmp_path, "reconnecting", RunSignals())
    out = asyncio.run(agent.run(ctx))
    assert out.error is None and out.final_answer
    assert out.seeding is not None and out.seeding.reason == "codex takes no seed"
    assert out.input_tokens.provenance == "measured" and ctx.signals.model_call_succeeded
    texts = [m["text"] for m in ctx.transcript.of_kind("message")]
    assert any(t.startswith("Reconnecting...") for t in texts)


def test_without_approve_mode_the_fake_rejects_mcp_calls_as_codex_does(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pairs = [a for a in mcp_overrides(config) if "default_tools_approval_mode" not in a]
    argv = [sys.executable, "-m", "pairbench.testing.fake_codex", "exec", "--json"]
    argv += [*[x for a in pairs if a != "-c" for x in ("-c", a)], "--"]
    argv.append("What is the title of issue #1 in the repository opal-otter? Answer.")
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, timeout=120
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [e["item"] for e in events if e["type"] == "item.completed" and e["item"].get("error")]
    assert failed and "requires approval" in failed[0]["error"]["message"]
    assert not (tmp_path / "fixture" / "audit.jsonl").exists()  # nothing reached the server
