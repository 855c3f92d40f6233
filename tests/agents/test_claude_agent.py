"""The claude-code agent against the fake ``claude`` executable (real subprocess, real MCP).

Only what the real binary cannot be made to do offline stays here: a ToolSearch turn (the
model must choose to search), a CLI that never answers (the group kill on timeout), and the
fake's own fidelity. Failures the real CLI shows are tested at the end, with the real binary.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.common import real_cli
from pairbench.agents import AgentContext, AgentOutput, InfraFailure, RunSignals, Transcript
from pairbench.agents.claude_code._agent import ClaudeCodeAgent
from pairbench.testing.anthropic_double import start_anthropic_double

pytestmark = pytest.mark.cli

SRC = str(Path(__file__).resolve().parents[2] / "src")
PROMPT = "What is the title of issue #{n} in the repository {repo}? Answer with the title only."


def install(tmp_path: Path, name: str, module: str) -> Path:
    """A ``name`` executable in ``tmp_path/bin`` that runs ``python -m module``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / name
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} -m {module} "$@"\n', encoding="utf-8")
    exe.chmod(0o755)
    return exe


def tracker_config(tmp_path: Path, seed: int = 5) -> dict[str, Any]:
    fixture = tmp_path / "fixture"
    fixture.mkdir(exist_ok=True)
    env = {"PAIRBENCH_TRIAL_SEED": str(seed), "PAIRBENCH_FIXTURE_DIR": str(fixture)}
    args = ["-m", "pairbench.studies.mcp_transports.tracker_server"]
    spec = {"type": "stdio", "command": sys.executable, "args": args}
    return {"mcpServers": {"tracker": spec | {"env": env | {"PYTHONPATH": SRC}}}}


def make_ctx(
    tmp_path: Path,
    mcp: dict[str, Any] | None,
    *,
    scenario: str = "",
    signals: RunSignals | None = None,
) -> AgentContext:
    from pairbench.studies.mcp_transports._content import generate

    target = generate(5)["target"]
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "PYTHONPATH": SRC, "HOME": str(work)}
    return AgentContext(
        run_id="r",
        arm="local-stdio",
        task="read-issue-title",
        trial=1,
        seed=5,
        model_seed=5,
        prompt=PROMPT.format(n=target["issue_number"], repo=target["repo"]),
        content={},
        env=env | ({"FAKE_CLAUDE_SCENARIO": scenario} if scenario else {}),
        workdir=work,
        transcript=Transcript(tmp_path / "transcript.jsonl"),
        settings={},
        timeout_s=60,
        has_tools=mcp is not None,
        mcp_config=mcp,
        signals=signals or RunSignals(),
    )


def run(agent: ClaudeCodeAgent, ctx: AgentContext) -> AgentOutput:
    return asyncio.run(agent.run(ctx))


def kinds(ctx: AgentContext, kind: str) -> list[dict[str, Any]]:
    return ctx.transcript.of_kind(kind)


def audit(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "fixture" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_argv_pins_the_surface_and_settings(tmp_path: Path) -> None:
    agent = ClaudeCodeAgent({"model": "sonnet", "disallowed_tools": ["Bash"], "max_turns": 5})
    ctx = make_ctx(tmp_path, tracker_config(tmp_path))
    argv = agent.argv("claude", ctx.prompt, str(tmp_path / "m.json"), ["tracker"])
    assert argv[:3] == ["claude", "-p", ctx.prompt]
    text = " ".join(argv)
    assert "--output-format stream-json --verbose" in text
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    assert argv[argv.index("--tools") + 1] == ""
    assert argv[argv.index("--allowedTools") + 1] == "mcp__tracker__*"
    assert argv[argv.index("--disallowedTools") + 1] == "Bash"
    assert argv[argv.index("--setting-sources") + 1] == ""
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert argv[argv.index("--max-turns") + 1] == "5"


def test_a_run_calls_the_tracker_pins_tool_search_and_isolates_config(tmp_path: Path) -> None:
    install(tmp_path, "claude", "pairbench.testing.fake_claude")
    ctx = make_ctx(tmp_path, tracker_config(tmp_path), scenario="duplicate_usage")
    out = run(ClaudeCodeAgent({"model": "sonnet"}), ctx)
    assert out.error is None
    assert out.final_answer and out.final_answer.startswith("Document login redirect")
    assert [a["tool"] for a in audit(tmp_path)] == ["list_repositories", "get_issue"]
    (start,) = kinds(ctx, "agent_start")
    assert start["tool_search"] == "false" and start["env"]["ENABLE_TOOL_SEARCH"] == "false"
    assert start["env"]["CLAUDE_CONFIG_DIR"].startswith(str(ctx.workdir))
    assert (ctx.workdir / "claude-mcp.json").exists()
    results = kinds(ctx, "tool_result")
    assert len(results) == 2 and all(r["client_ms"] > 0 for r in results)
    assert out.input_tokens.provenance == "measured" and out.cost_usd.provenance == "estimated"
    (usage, _) = kinds(ctx, "usage")
    assert usage["input_tokens"] == out.input_tokens.value
    assert sum(p["output_tokens"] for p in usage["per_message"]) == out.output_tokens.value
    assert out.seeding is not None and out.seeding.status == "unseeded"
    assert ctx.signals.model_call_succeeded
    assert kinds(ctx, "raw") and not kinds(ctx, "warning")


def test_tool_search_on_reaches_the_child_and_stays_on_surface(tmp_path: Path) -> None:
    install(tmp_path, "claude", "pairbench.testing.fake_claude")
    ctx = make_ctx(tmp_path, tracker_config(tmp_path))
    settings = {"model": "sonnet", "tools": "default", "tool_search": True}
    out = run(ClaudeCodeAgent(settings), ctx)
    assert out.error is None and out.turns.value == 4  # ToolSearch + 2 calls + answer
    (search,) = kinds(ctx, "tool_search")
    assert "mcp__tracker__get_issue" in search["query"]
    assert [c["tool"] for c in kinds(ctx, "tool_call")] == ["list_repositories", "get_issue"]


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    install(tmp_path, "claude", "pairbench.testing.fake_claude")
    ctx = make_ctx(tmp_path, tracker_config(tmp_path))

    async def bounded() -> None:
        async with asyncio.timeout(1.0):
            await ClaudeCodeAgent({"model": "sonnet"}).run(ctx)

    with pytest.raises(TimeoutError):
        asyncio.run(bounded())
    # The suite's no_child_left_behind guard fails this test if the fake or its server lives.


def test_the_fake_rejects_flags_like_the_real_cli(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "pairbench.testing.fake_claude", "-p", "hi"]
    no_verbose = subprocess.run(
        [*base, "--output-format", "stream-json"], capture_output=True, text=True, check=False
    )
    assert no_verbose.returncode == 1
    assert no_verbose.stderr.strip() == (
        "Error: When using --print, --output-format=stream-json requires --verbose"
    )
    unknown = subprocess.run([*base, "--bogus"], capture_output=True, text=True, check=False)
    assert unknown.returncode == 2 and "--bogus" in unknown.stderr


# -- the same adapter with the REAL claude binary against the Messages API double --------
def _agent(**settings: Any) -> ClaudeCodeAgent:
    return ClaudeCodeAgent({"model": "claude-sonnet-4-5", "executable": str(real_cli("claude"))}
                           | settings)  # fmt: skip


def _run(agent: ClaudeCodeAgent, tmp_path: Path, url: str, **kw: Any) -> tuple[AgentOutput, Any]:
    ctx = make_ctx(tmp_path, kw.pop("mcp", None), signals=kw.pop("signals", None))
    ctx.env.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"})
    return asyncio.run(agent.run(ctx)), ctx


def test_max_turns_is_an_agent_error(tmp_path: Path) -> None:
    with start_anthropic_double() as double:
        out, _ = _run(_agent(max_turns=1), tmp_path, double.url, mcp=tracker_config(tmp_path))
    assert out.error is not None and out.error.startswith("max turns"), out.error
    assert len(audit(tmp_path)) == 1  # the one turn's tool call ran


def test_an_auth_rejection_is_infra_at_once_then_agent_error_after_a_success(
    tmp_path: Path,
) -> None:
    with start_anthropic_double({"fail_auth": True}) as double:
        ctx_holder: list[Any] = []
        with pytest.raises(InfraFailure, match=r"refused claude-code \(api_retry: HTTP 401"):
            ctx = make_ctx(tmp_path, None)
            ctx.env.update({"ANTHROPIC_BASE_URL": double.url, "ANTHROPIC_API_KEY": "k"})
            ctx_holder.append(ctx)
            asyncio.run(_agent().run(ctx))
        assert kinds(ctx_holder[0], "agent_stopped")  # at its first retry, not after ~2 min
        signals = RunSignals()
        signals.model_call_succeeded = True  # an earlier attempt of the run reached the model
        out, _ = _run(_agent(), tmp_path, double.url, signals=signals)
    assert out.error is not None and "failed mid-run" in out.error


def test_an_unknown_flag_is_infra(tmp_path: Path) -> None:
    with (
        start_anthropic_double() as double,
        pytest.raises(InfraFailure, match="before it started a session"),
    ):
        _run(_agent(extra_args=["--no-such-flag"]), tmp_path, double.url)
