"""The CLI agents (Claude Code, Codex) run under the attempt's limits as a ``command`` agent
does: a CLI that floods its stdout or writes a file past the size limit is stopped, and the
limit it reached is raised as the attempt's outcome, its whole process group gone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from pairbench._confine import LimitReached
from pairbench.agents import AgentContext, RunSignals, Transcript
from pairbench.agents.claude_code._agent import ClaudeCodeAgent
from pairbench.agents.codex._agent import CodexAgent
from pairbench.spec._limits import Limits

# A hostile CLI: what it does is the first argument pairbench never gives it, so the script
# reads it from the environment the test sets.
HOSTILE = """#!/bin/sh
echo $$ > "$PIDFILE"
case "$MISBEHAVE" in
  flood) head -c 3145728 /dev/zero | tr '\\0' 'x' ;;
  write) head -c 2097152 /dev/zero > big.bin ;;
esac
"""


def ctx_for(tmp_path: Path, misbehave: str, limits: Limits) -> AgentContext:
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    for name in ("claude", "codex"):
        exe = bin_dir / name
        exe.write_text(HOSTILE, encoding="utf-8")
        exe.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(work),
        "MISBEHAVE": misbehave,
        "PIDFILE": str(tmp_path / "pid"),
    }
    return AgentContext(
        run_id="r", arm="a", task="t", trial=1, seed=1, model_seed=1, prompt="hello",
        content={}, env=env, workdir=work, transcript=Transcript(tmp_path / "t.jsonl"),
        settings={}, timeout_s=60, has_tools=False, mcp_config=None, signals=RunSignals(),
        limits=limits,
    )  # fmt: skip


AGENTS: dict[str, Callable[[], ClaudeCodeAgent | CodexAgent]] = {
    "claude-code": lambda: ClaudeCodeAgent({"model": "sonnet"}),
    "codex": lambda: CodexAgent({"model": "gpt-5"}),
}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_cli_that_floods_stdout_reaches_the_output_limit(tmp_path: Path, agent: str) -> None:
    ctx = ctx_for(tmp_path, "flood", Limits(output_per_stream=1024 * 1024))
    with pytest.raises(LimitReached) as caught:
        asyncio.run(AGENTS[agent]().run(ctx))
    assert caught.value.kind == "output_limit" and "stdout" in str(caught.value)
    assert not psutil.pid_exists(int((tmp_path / "pid").read_text()))


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_cli_that_writes_past_the_file_size_limit_reaches_the_disk_limit(
    tmp_path: Path, agent: str
) -> None:
    ctx = ctx_for(tmp_path, "write", Limits(file_size=1024 * 1024))
    with pytest.raises(LimitReached) as caught:
        asyncio.run(AGENTS[agent]().run(ctx))
    assert caught.value.kind == "disk_limit"
    assert (ctx.workdir / "big.bin").stat().st_size <= 1024 * 1024
