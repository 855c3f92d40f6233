"""The codex agent: failures with the REAL ``codex`` binary against the Responses double,
and the fake ``codex`` only for its fidelity to the real one (it rejects MCP calls without
the approval mode, as codex does)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.common import real_cli
from pairbench.agents import AgentContext, InfraFailure, RunSignals, Transcript
from pairbench.agents.codex._agent import CodexAgent, mcp_overrides
from pairbench.testing.responses_double import start_responses_double

pytestmark = pytest.mark.cli

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


def _real(url: str, **config: Any) -> CodexAgent:
    provider = {
        "model_provider": "local",
        "model_providers.local.name": "local",
        "model_providers.local.base_url": f"{url}/v1",
        "model_providers.local.env_key": "OPENAI_API_KEY",
        "model_providers.local.wire_api": "responses",
    }
    settings = {"model": "test-model", "executable": str(real_cli("codex"))}
    return CodexAgent(settings | {"config": provider | config})


def _real_ctx(tmp_path: Path, signals: RunSignals) -> AgentContext:
    ctx = _ctx(tmp_path, "", signals)
    ctx.env.update({"OPENAI_API_KEY": "test-key", "HOME": str(tmp_path / "work")})
    return ctx


def test_a_401_is_infra_at_the_first_reconnect_then_agent_error_after_a_success(
    tmp_path: Path,
) -> None:
    with start_responses_double({"fail_auth": True}) as double:
        agent = _real(double.url, **{"model_providers.local.stream_max_retries": 1})
        ctx = _real_ctx(tmp_path, RunSignals())
        with pytest.raises(InfraFailure, match="is unreachable: codex said 'Reconnecting"):
            asyncio.run(agent.run(ctx))
        assert ctx.transcript.of_kind("agent_stopped")
        signals = RunSignals()
        signals.model_call_succeeded = True  # an earlier attempt of the run reached the model
        out = asyncio.run(agent.run(_real_ctx(tmp_path, signals)))
    assert out.error is not None and "401" in out.error


def test_a_reconnect_that_heals_is_left_to_codex_and_succeeds(tmp_path: Path) -> None:
    with start_responses_double({"stall_on": [1]}) as double:
        agent = _real(double.url, **{"model_providers.local.stream_idle_timeout_ms": 500})
        ctx = _real_ctx(tmp_path, RunSignals())
        out = asyncio.run(agent.run(ctx))
    assert out.error is None and out.final_answer
    assert out.seeding is not None and out.seeding.reason == "codex takes no seed"
    assert out.input_tokens.provenance == "measured" and ctx.signals.model_call_succeeded
    texts = [m["text"] for m in ctx.transcript.of_kind("message")]
    assert any(t.startswith("Reconnecting...") for t in texts)
    assert not ctx.transcript.of_kind("agent_stopped")


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
