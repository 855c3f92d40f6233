"""``rab-runtime`` (and ``minirt``, the same adapter with minirt's command): the agent adapter
of the runtime-revision-ab study.

It runs the arm's own revision of a runtime (``PAIRBENCH_SOURCE``, the frozen worktree the
runner checked out) with ``settings.command`` (the bundled minirt's when not given) on a
fresh copy of the task's scenario, against the model endpoint in ``settings.base_url_env``
(the run's recording proxy), and answers with the scenario's evidence (``ScenarioEvidence``
as JSON) for the ``minirt-acceptance`` grader.

A scenario whose runtime timed out, crashed or met a provider error is infrastructure: the
adapter raises ``InfraFailure``, so the attempt is kept under ``infra/`` and replaced.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, field_validator

from pairbench._errors import PairbenchError
from pairbench.agents._protocol import AgentContext, AgentOutput, InfraFailure
from pairbench.agents._settings import AdapterSettings
from pairbench.store._records import Metric
from pairbench.studies.runtime_revision_ab._evidence import evidence_json, scenario_evidence
from pairbench.studies.runtime_revision_ab._regression import RegressionRule, parse_rule
from pairbench.studies.runtime_revision_ab._run import MINIRT, RuntimeCommand, run_scenario

_PASSED = ("PYTHONPATH", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE", "NODE_OPTIONS")
"""Variables of the attempt's env the runtime gets (the mounted-byte probe's among them)."""
_MARGIN_S = 15.0
"""Of the trial's timeout, kept for acceptance and clean-up after the runtime's own limit."""


class MinirtSettings(AdapterSettings):
    """``agent: {adapter: rab-runtime, settings: {command: [...], ...}}``."""

    example: ClassVar[str] = '{command: [python3, "{source}/runtime.py"]}'
    command: list[str] | None = None
    """The runtime's argv (placeholders: see ``RuntimeCommand``); None: the bundled minirt."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables the runtime gets besides the ``PAIRBENCH_*`` ones (placeholders filled)."""
    base_url_env: str = "MINIRT_BASE_URL"
    """The variable holding the model's base URL (the run's ``proxy.env``)."""
    scenarios: str | None = None
    """A folder of your own scenarios (relative to the experiment file; list it in
    ``files:`` so the lock covers it), one sub-folder per task's ``labels.scenario`` in the
    study's layout; None: the study's AR-001..AR-010."""
    events: bool = True
    """Ask the runtime for its dispatch events; False leaves them missing (the filesystem,
    proxy and acceptance evidence stays)."""
    model: str = "minirt-scripted"
    """The model name the runtime sends."""
    regression: RegressionRule = Field(default_factory=RegressionRule)
    """What a demonstrated regression is (``{min_pairs: 2, allow_reverse: false}``, the
    protocol's, when not given): read by the report's release gates, not by the runtime."""

    @field_validator("regression", mode="before")
    @classmethod
    def _regression(cls, value: Any) -> RegressionRule:
        # Named field by field here: the generic settings errors name only the top level.
        return parse_rule(value)


class MinirtAgent:
    """Registered as ``rab-runtime`` and ``minirt``: one scenario of the runtime-revision-ab
    study per attempt."""

    receives: frozenset[str] = frozenset()
    Settings = MinirtSettings

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = MinirtSettings.parse(settings)
        given = self.settings
        self.command = (
            MINIRT.model_copy(update={"env": {**MINIRT.env, **given.env}})
            if given.command is None
            else RuntimeCommand(argv=given.command, env=given.env)
        )

    async def run(self, ctx: AgentContext) -> AgentOutput:
        tree = ctx.env.get("PAIRBENCH_SOURCE")
        base_url = ctx.env.get(self.settings.base_url_env)
        if not tree:
            why = "the minirt adapter runs arms that are source revisions (source: {commit})"
            return AgentOutput(None, error=f"no PAIRBENCH_SOURCE: {why}")
        if not base_url:
            why = "declare proxy: {env: ...} in the experiment"
            return AgentOutput(None, error=f"no {self.settings.base_url_env} in the env: {why}")
        folder = None
        if self.settings.scenarios is not None:
            folder = (ctx.experiment_root or Path.cwd()) / self.settings.scenarios
        # The study's scenarios are AR-00N (task ar-00n); a team's own are named as the task.
        named = ctx.task if folder is not None else ctx.task.upper()
        scenario = str(ctx.content.get("scenario") or named)
        ctx.transcript.emit(
            "agent_start", agent="rab-runtime", arm=ctx.arm, scenario=scenario,
            command=self.command.argv,
        )  # fmt: skip
        extra = {k: v for k, v in ctx.env.items() if k in _PASSED or k.startswith("PAIRBENCH_M")}
        try:
            result = await asyncio.to_thread(
                run_scenario, Path(tree), scenario, base_url, ctx.workdir / "scenario",
                ctx.model_seed, max(5.0, ctx.timeout_s - _MARGIN_S), events=self.settings.events,
                model=self.settings.model, extra_env=extra, command=self.command,
                scenarios=folder,
            )  # fmt: skip
        except PairbenchError as exc:  # a scenario that cannot be read: the experiment's fault
            return AgentOutput(None, error=str(exc))
        evidence = scenario_evidence(result)
        stored = evidence_json(evidence)
        ctx.transcript.emit("scenario_evidence", evidence=stored)
        if evidence.outcome == "infra":
            raise InfraFailure(
                f"{scenario}: the runtime ended {result.status!r} "
                f"(exit {result.exit_code}) after {result.provider_requests} provider request(s)"
            )
        usage = evidence.usage
        whole = usage.requests > 0 and usage.measured == usage.requests
        partial = (
            f"{usage.measured} of {usage.requests} responses reported usage; the measured part "
            "is in the scenario evidence"
        )
        ins = usage.input_measured if whole else None
        outs = usage.output_measured if whole else None
        return AgentOutput(
            final_answer=json.dumps(stored, sort_keys=True),
            turns=Metric.measured(usage.requests, "provider requests through the proxy"),
            agent_ms=Metric.measured(evidence.latency.end_to_end_ms, "pairbench monotonic clock"),
            input_tokens=_tokens(ins, partial, usage.requests),
            output_tokens=_tokens(outs, partial, usage.requests),
            total_tokens=_tokens(
                None if ins is None or outs is None else ins + outs, partial, usage.requests
            ),
            models=tuple(self.settings.model for _ in range(usage.requests)),
        )


def _tokens(value: int | None, partial: str, requests: int) -> Metric:
    if value is not None:
        return Metric.measured(value, "provider usage (proxy)")
    if requests == 0:
        return Metric.missing("no provider request was made")
    return Metric.missing(partial)
