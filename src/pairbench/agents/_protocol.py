"""The agent adapter protocol: what the runner gives an agent, and what it gets back."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pairbench.spec._limits import Limits
from pairbench.store._records import Metric, Seeding
from pairbench.store._transcript import Transcript


class ToolSession(Protocol):
    """A connected tool surface (``McpSurface``, ``WebMcpSurface`` and ``ToolSurface`` do)."""

    tools: dict[str, list[Any]]

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any: ...


class RunSignals:
    """Facts one run's attempts share. Adapters read and set them; nothing else does.

    ``model_call_succeeded`` turns an authentication or quota rejection from ``infra`` (the
    provider is not set up: retry once, then stop the run) into an ``agent_error`` (a
    provider hiccup in the middle of a run that worked).
    """

    def __init__(self) -> None:
        self.model_call_succeeded = False


@dataclass(frozen=True)
class AgentContext:
    """Everything one attempt gives its agent."""

    run_id: str
    arm: str
    task: str
    trial: int
    seed: int
    model_seed: int
    """The documented 31-bit seed to send to a model (see ``schedule.model_seed``)."""
    prompt: str
    """The task prompt, filled from the trial's seeded fixture content."""
    content: dict[str, Any]
    env: dict[str, str]
    """The scrubbed environment: an allow-list plus what the arm declares. Never os.environ."""
    workdir: Path
    """The attempt's private folder (with ``HOME`` and ``TMPDIR`` inside); not created for
    an adapter class that sets ``uses_workdir = False``."""
    transcript: Transcript
    settings: dict[str, Any]
    timeout_s: float
    has_tools: bool
    open_tools: Callable[[], AbstractAsyncContextManager[ToolSession]] | None = None
    """In-process agents connect the arm's MCP servers through this (in their own task)."""
    mcp_config: dict[str, Any] | None = None
    """Subprocess agents get the same servers as a Claude-Code-style ``mcpServers`` config."""
    plan: dict[str, Any] | None = None
    """The task's scripted plan, when it has one."""
    signals: RunSignals = field(default_factory=RunSignals)
    """Shared by every attempt of the run (see ``RunSignals``)."""
    extra: dict[str, Any] = field(default_factory=dict)
    attachments: list[Path] = field(default_factory=list)
    """The arm's ``attachments`` (e.g. a PDF), resolved: files handed to the agent as input."""
    attempt: int = 1
    """Which attempt of the trial this is (1, or 2 for an infra retry)."""
    shared_dir: Path | None = None
    """The trial's folder that every arm's attempts share (``RunDir.trial_shared``), for what
    is made once per trial and judged by every arm; not created until an adapter writes."""
    experiment_root: Path | None = None
    """The experiment file's folder: a path an adapter's settings name is relative to it
    (and locked when listed in ``files:``)."""
    worst_cost_usd: float | None = None
    """The attempt's declared worst-case cost (the task's ``cost_per_trial_usd``, else
    ``budget.cost_per_trial_usd``): what an adapter charges when its agent uses a model but
    reported no cost, rather than $0."""
    limits: Limits = field(default_factory=Limits)
    """The attempt's declared limits (``Experiment.arm_limits``): a subprocess adapter
    enforces them (``pairbench._confine``) and raises ``LimitReached`` when one is reached."""


@dataclass(frozen=True)
class AgentOutput:
    """What an agent returns. ``error`` set means ``agent_error`` (not re-run)."""

    final_answer: str | None
    error: str | None = None
    turns: Metric = field(default_factory=lambda: Metric.missing("the agent did not report turns"))
    agent_ms: Metric = field(
        default_factory=lambda: Metric.missing("the agent did not report its duration")
    )
    input_tokens: Metric = field(default_factory=lambda: Metric.missing("no model usage reported"))
    """Every input token the model read, cache traffic included: ``uncached_input_tokens +
    cache_creation_input_tokens + cache_read_input_tokens`` (build all six usage metrics
    with ``pairbench.store.usage_metrics``)."""
    output_tokens: Metric = field(default_factory=lambda: Metric.missing("no model usage reported"))
    uncached_input_tokens: Metric = field(
        default_factory=lambda: Metric.missing("no model usage reported")
    )
    """Input tokens neither written to nor read from a prompt cache (when the provider does
    not report cache writes: every input token not read from the cache)."""
    cache_creation_input_tokens: Metric = field(
        default_factory=lambda: Metric.missing("no model usage reported")
    )
    """Input tokens written to a prompt cache."""
    cache_read_input_tokens: Metric = field(
        default_factory=lambda: Metric.missing("no model usage reported")
    )
    """Input tokens read from a prompt cache."""
    total_tokens: Metric = field(default_factory=lambda: Metric.missing("no model usage reported"))
    """``input_tokens + output_tokens``."""
    cost_usd: Metric = field(default_factory=lambda: Metric.missing("no model usage reported"))
    simulated: bool = False
    seeding: Seeding | None = None
    """Seed evidence from the request bodies actually sent (None: the adapter has no model)."""
    models: tuple[str, ...] = ()
    """The model id each model request reported, in request order (repeats allowed); the
    result keeps the distinct ones as ``TrialResult.models_seen``."""


@runtime_checkable
class Agent(Protocol):
    """An agent adapter. Registered under ``pairbench.agents`` as a class taking ``settings``.

    An adapter class may set ``uses_workdir = False`` when it runs in-process and never
    touches ``ctx.workdir`` or the ``HOME``/``TMPDIR`` of ``ctx.env`` (they are the folders
    a subprocess agent needs): its attempts then skip creating three folders each, which
    is most of the harness's own disk work per attempt. Left out, it means True.
    """

    async def run(self, ctx: AgentContext) -> AgentOutput: ...


class InfraFailure(Exception):
    """Raised by an adapter when the harness, not the agent, failed (counted as ``infra``)."""
