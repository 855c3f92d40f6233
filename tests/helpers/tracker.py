"""Run a study plan against the real tracker server, as the scripted agent would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from pairbench._template import render
from pairbench.fixtures._mcp import McpSurface
from pairbench.fixtures._protocol import FixtureState
from pairbench.spec._models import Experiment, McpServer
from pairbench.store._transcript import Transcript
from pairbench.studies.mcp_transports import STUDY, TRACKER_FIXTURE


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def experiment() -> Experiment:
    return Experiment.model_validate(load_yaml(STUDY.experiment_path))


def arm_servers(arm: str) -> dict[str, McpServer]:
    tools = experiment().arms[arm].tools
    return {} if tools == "none" else dict(tools.mcp)


async def run_plan(
    plan: dict[str, Any],
    surface: McpSurface | None,
    content: dict[str, Any],
    agent_env: dict[str, str],
    seed: int,
) -> str | None:
    """A minimal scripted agent: calls in order, ``save`` results, render the answer."""
    if surface is None:
        return str(plan["without_tools"])
    values: dict[str, Any] = {"fixture": content, "env": agent_env, "seed": seed}
    for step in plan["steps"]:
        if "call" not in step:
            continue
        server, tool = step["call"].split(".", 1)
        out = await surface.call(server, tool, render(step.get("args", {}), values))
        if "save" in step:
            values[step["save"]] = out.structured
    answer = render(plan["answer"], values)
    return None if answer is None else str(answer)


async def run_trial(
    plan_name: str,
    arm: str,
    seed: int,
    root: Path,
    server_env: dict[str, str],
    warm_url: str | None = None,
    agent_env: dict[str, str] | None = None,
    rel: str | None = None,
) -> tuple[dict[str, Any], FixtureState | None, str | None]:
    """(content, state, final answer) of one trial of ``plan_name`` in ``arm``."""
    content = TRACKER_FIXTURE.content(seed)
    plan = load_yaml(STUDY.root / "plans" / plan_name)
    servers = arm_servers(arm)
    rel = rel or f"{arm}/{plan_name.removesuffix('.yaml')}/{seed}"
    fixture_dir = root / rel
    if not servers:
        return content, None, await run_plan(plan, None, content, agent_env or {}, seed)
    urls = {"tracker": warm_url} if warm_url else {}
    async with McpSurface(
        servers, urls, seed, fixture_dir, rel, server_env, Transcript(None)
    ) as surface:
        answer = await run_plan(plan, surface, content, agent_env or {}, seed)
    return content, TRACKER_FIXTURE.read_state(fixture_dir), answer


def scrubbed_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}
