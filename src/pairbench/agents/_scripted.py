"""The scripted agent: a fixed plan per task. A real, registered adapter (fakes are product).

A plan (YAML, named by the task's ``plan``)::

    steps:
      - say: "Looking up issue ${fixture.target.issue_number}."
      - call: tracker.get_issue
        args: {repo: "${fixture.target.repo}", number: "${fixture.target.issue_number}"}
        save: issue
    answer: "${issue.title}"
    without_tools: "I cannot reach the issue tracker from here."

Templates see ``fixture`` (seeded content), ``env`` (the agent's scrubbed environment),
``seed`` and every ``save`` name. It uses whatever tool surface its arm gives it: a call to a
server the arm lacks is skipped, and an arm with no tools gets ``without_tools``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import Field

from pairbench._template import render
from pairbench.agents._protocol import AgentContext, AgentOutput, ToolSession
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric, usage_metrics

_NO_MODEL = "the scripted agent has no model, so nothing was measured"


def _saved_value(outcome: Any) -> Any:
    if getattr(outcome, "is_error", False):
        return {"error": getattr(outcome, "text", "")}
    structured = getattr(outcome, "structured", None)
    if structured is not None:
        # The SDK wraps non-object returns as {"result": value}; unwrap so plans stay simple.
        if isinstance(structured, dict) and set(structured) == {"result"}:
            return structured["result"]
        return structured
    text = getattr(outcome, "text", "")
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return {"text": text}


class ScriptedSettings(AdapterSettings):
    """The ``scripted`` adapter's settings."""

    example = "{step_delay_s: 0.5}"

    step_delay_s: float = Field(default=0.0, ge=0, le=3600)
    """Pause between the plan's steps, in seconds."""


class ScriptedAgent:
    """Runs the task's plan. Settings: ``step_delay_s`` (pause between steps, default 0)."""

    uses_workdir = False
    """In-process: no private work folder, HOME or TMPDIR needed (see ``Agent``)."""
    Settings = ScriptedSettings

    @classmethod
    def describe(cls, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
        """What run.json records of an arm: no model, so no tool discovery to pin."""
        return {"tool_discovery": "not applicable (no model)"}

    receives = frozenset({"mcp", "webmcp"})
    """A plan calls tools; it reads no attachment (``check`` refuses an arm that has one)."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = ScriptedSettings.parse(settings)

    async def run(self, ctx: AgentContext) -> AgentOutput:
        plan = ctx.plan
        if plan is None:
            return AgentOutput(
                final_answer=None,
                error=f"task {ctx.task!r} has no plan; the scripted agent needs one (task.plan)",
            )
        values: dict[str, Any] = {"fixture": ctx.content, "env": ctx.env, "seed": ctx.seed}
        ctx.transcript.emit("agent_start", agent="scripted", arm=ctx.arm)
        calls = 0
        if not ctx.has_tools or ctx.open_tools is None:
            answer = render(plan.get("without_tools", ""), values)
            ctx.transcript.emit("message", text="No tools are available in this arm.")
        else:
            async with ctx.open_tools() as tools:
                calls = await self._steps(plan.get("steps", []), tools, values, ctx)
            answer = render(plan.get("answer", ""), values)
        text = "" if answer is None else str(answer)
        ctx.transcript.emit("final", text=text)
        return AgentOutput(
            final_answer=text,
            turns=Metric.measured(calls + 1, "scripted plan steps"),
            **usage_metrics(source="scripted agent", missing=_NO_MODEL)._asdict(),
            cost_usd=Metric.missing(_NO_MODEL),
        )

    async def _steps(
        self,
        steps: list[dict[str, Any]],
        tools: ToolSession,
        values: dict[str, Any],
        ctx: AgentContext,
    ) -> int:
        delay = self.settings.step_delay_s
        calls = 0
        for step in steps:
            if delay:
                await asyncio.sleep(delay)
            if "say" in step:
                ctx.transcript.emit("message", text=str(render(step["say"], values)))
            if "call" in step:
                server, _, tool = str(step["call"]).partition(".")
                if server not in tools.tools:
                    ctx.transcript.emit(
                        "message", text=f"Skipping {step['call']}: not on this arm's surface."
                    )
                    continue
                args = render(step.get("args", {}), values)
                outcome = await tools.call(server, tool, args)
                calls += 1
                if "save" in step:
                    values[str(step["save"])] = _saved_value(outcome)
        return calls
