"""The experiment models: what an ``experiment.yaml`` means once loaded."""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from pairbench._model import Frozen
from pairbench.spec._hypotheses import Hypothesis
from pairbench.spec._ids import EnvName, SafeId
from pairbench.spec._limits import LimitOverrides, Limits
from pairbench.spec._policies import (
    Budget,
    CampaignOrder,
    InfraPolicy,
    ReplacementPolicy,
)
from pairbench.spec._primary import PrimaryAnalysis
from pairbench.spec._proxy import ModelProxy
from pairbench.spec._report_spec import ReportSpec
from pairbench.spec._revision import ArmSource, Source
from pairbench.spec._server_identity import ServerPin
from pairbench.spec._task import MAX_TRIALS, Task

MIN_SECRET_CHARS = 8
"""The shortest secret value: a shorter one also matches ordinary text (ids, words,
numbers), and redacting it there would corrupt the stored records while hiding little."""

_ENV_REF = re.compile(r"^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")


def env_ref(value: str) -> str | None:
    """The runner variable an ``agent.env`` value reads (``${env:NAME}``), or None.

    Only a whole value is a reference: its value is read from the runner's environment when
    an attempt starts, so it is in no stored or hashed file (and the variable is secret).

    >>> env_ref("${env:API_TOKEN}"), env_ref("Bearer ${env:API_TOKEN}")
    ('API_TOKEN', None)
    """
    found = _ENV_REF.match(value)
    return found.group(1) if found else None


DEFAULT_MCP_PATH = "/mcp"
"""Where streamable HTTP servers serve MCP unless told otherwise (the SDKs' default)."""
PORT_SLOT = "{port}"
"""In a ``serve`` argument: the free loopback port pairbench picked for this start."""


class McpServer(Frozen):
    """One MCP server on an arm's tool surface."""

    transport: Literal["stdio", "http"]
    """``stdio``: spawned per trial; ``http``: streamable HTTP."""
    command: list[str] | None = None
    """stdio only: the server command; ``python3``/``python`` as argv[0] means this interpreter."""
    serve: list[str] | None = None
    """http only: the command that serves it. Either an argument holds ``{port}``, which
    pairbench fills with a free 127.0.0.1 port (the endpoint is then ``http://127.0.0.1:
    {port}{path}``), or the command binds a port itself and writes its URL to the file named by
    ``PAIRBENCH_URL_FILE``. ``{port}`` may also be in an ``env`` value (``PORT: "{port}"``)."""
    path: str = Field(default=DEFAULT_MCP_PATH, exclude_if=lambda v: v == DEFAULT_MCP_PATH)
    """http only, with ``{port}`` in ``serve``: the endpoint's path on that port."""
    url: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """http only, instead of ``serve``: an endpoint pairbench does not start (a vendor's
    hosted server, or one already running), e.g. ``https://mcp.example.com/mcp``."""
    headers: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """http only: headers sent with every request. A value is literal, or ``${env:NAME}``:
    read from the runner's environment when the run starts, secret (never stored, redacted
    wherever it appears)."""
    bearer: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """http only: ``${env:NAME}``, sent as ``Authorization: Bearer <value>`` (secret)."""
    warm: bool = True
    """http only: start once per run (True) or per trial (False)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment the server process gets on top of the scrubbed base."""
    handshake: Literal["initialize", "auto"] = Field(
        default="initialize", exclude_if=lambda v: v == "initialize"
    )
    """``initialize`` (the handshake of every revision before 2026-07-28), or ``auto``:
    ``server/discover`` first (2026-07-28, stateless), ``initialize`` if the server lacks it."""
    pin: ServerPin | None = Field(default=None, exclude_if=lambda v: v is None)
    """The identity the server must have (``name``, ``version``, ``protocol_version``,
    ``tools_sha256``): a run whose server differs stops before its first attempt, and a
    trial that meets a different one is infra."""

    @model_validator(mode="after")
    def _shape(self) -> McpServer:
        http = self.transport == "http"
        if self.transport == "stdio" and not self.command:
            raise ValueError("a stdio server needs 'command' (the argv that starts it)")
        if http and not self.serve and not self.url:
            raise ValueError(
                "an http server needs 'serve' (the argv that serves it) or 'url' (an endpoint "
                "that is already there): use serve: [...] for a server pairbench starts, or "
                "url: https://... for one that runs elsewhere"
            )
        if http and self.serve and self.url:
            raise ValueError(
                "an http server has 'serve' and 'url', not both: use 'serve' for a server "
                "pairbench starts, 'url' for one that is already there"
            )
        if not http and (self.serve or self.url or self.headers or self.bearer):
            raise ValueError(
                "'serve', 'url', 'headers' and 'bearer' are for http servers: use "
                "transport: http, or remove them (a stdio server has 'command' and 'env')"
            )
        if http and self.command:
            raise ValueError("'command' is for stdio servers; an http server uses 'serve'")
        if self.path != DEFAULT_MCP_PATH and not self.takes_port():
            raise ValueError(
                "'path' is for a 'serve' command with {port} in it (pairbench then makes the URL): "
                "put {port} where the command takes its port, or remove 'path' (a server that "
                "writes PAIRBENCH_URL_FILE, or a 'url', names the whole URL)"
            )
        if not self.path.startswith("/") or "//" in self.path or any(c in self.path for c in "?# "):
            raise ValueError(f"path {self.path!r} must start with '/' (e.g. '/mcp'), no query")
        if self.url is not None and not re.match(r"^https?://[^/\s]+", self.url):
            raise ValueError(
                f"url {self.url!r} is not an http:// or https:// URL: use the endpoint's "
                "whole URL, e.g. https://mcp.example.com/mcp"
            )
        if self.bearer is not None and env_ref(self.bearer) is None:
            raise ValueError(
                "'bearer' must be ${env:NAME} (a token written in the experiment would be "
                "stored with it): use bearer: ${env:NAME} and export NAME before running"
            )
        for header, value in self.headers.items():
            if env_ref(value) is None and "${env:" in value:
                raise ValueError(
                    f"header {header!r} reads a variable in part of its value, and only a "
                    f"whole value can be ${{env:NAME}}: use {header}: ${{env:NAME}}, with the "
                    "whole value (e.g. 'Bearer ...') in the runner's variable"
                )
        return self

    def takes_port(self) -> bool:
        """Does ``serve`` take its port from pairbench (``{port}`` in an argument or an
        ``env`` value, e.g. ``PORT: "{port}"``)?"""
        slots = [*(self.serve or []), *self.env.values()] if self.serve else []
        return any(PORT_SLOT in a for a in slots)

    def secret_refs(self) -> dict[str, str]:
        """Header -> the runner variable its value reads (``bearer`` as Authorization)."""
        refs = {h: ref for h, v in self.headers.items() if (ref := env_ref(v)) is not None}
        if self.bearer is not None and (ref := env_ref(self.bearer)) is not None:
            refs["Authorization"] = ref
        return refs


class WebMcpPage(Frozen):
    """A web page whose WebMCP tools (``document.modelContext``) are on an arm's surface.

    The agent's browser (headless Chromium) opens ``path`` on the site that ``serve`` runs.
    """

    serve: list[str] = Field(min_length=1)
    """The command that serves the site, once per run. It binds 127.0.0.1 port 0 and writes
    its base URL to the file named by ``PAIRBENCH_URL_FILE``; ``python3`` means this
    interpreter."""
    path: str = "/"
    """The page to open, relative to the site's base URL."""
    env: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """Environment the site process gets on top of the scrubbed base."""

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/") or "//" in value:
            raise ValueError(f"path {value!r} must start with '/' (e.g. '/' or '/page')")
        return value


class Tools(Frozen):
    """An arm's tool surface beyond ``none``."""

    mcp: dict[SafeId, McpServer] = Field(default_factory=dict)
    """MCP servers by name; tool ``t`` of server ``s`` is on the surface as ``s.t``."""
    webmcp: dict[SafeId, WebMcpPage] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """WebMCP pages by name; tool ``t`` that page ``p`` registers is on the surface as ``p.t``.
    (Left out of the canonical form when empty, so older experiments keep their hash.)"""
    other: list[str] = Field(default_factory=list)
    """Other tool names the agent may use (e.g. an agent CLI's built-ins), kept on-surface."""

    # A field validator, not a model validator: a model validator would rename this branch
    # of ``Arm.tools``'s union in error locations (and the YAML line lookup relies on it).
    @field_validator("webmcp")
    @classmethod
    def _unique_names(
        cls, value: dict[str, WebMcpPage], info: ValidationInfo
    ) -> dict[str, WebMcpPage]:
        shared = sorted(set(info.data.get("mcp") or {}) & set(value))
        if shared:
            raise ValueError(
                f"{shared} named both an MCP server and a WebMCP page: give each its own name"
            )
        return value

    def surfaces(self) -> list[str]:
        """The names of every MCP server and WebMCP page (tool ``t`` is ``name.t``)."""
        return [*self.mcp, *self.webmcp]


class AgentSpec(Frozen):
    """Which agent adapter runs, and how."""

    adapter: str
    """A name registered under the ``pairbench.agents`` entry point."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Adapter settings (model, temperature, command, ...), passed as they are."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables set for the agent's process (declared, so they are recorded).
    A value written ``${env:NAME}`` is read from the runner's environment at run time and
    never stored; the variable is then secret (see ``Experiment.secrets``)."""
    env_allow: list[str] = Field(default_factory=list)
    """Names of harness environment variables the agent may inherit, beyond the base allow-list."""

    def env_refs(self) -> dict[str, str]:
        """Variable -> the runner variable its ``${env:NAME}`` value reads."""
        return {k: name for k, v in self.env.items() if (name := env_ref(v)) is not None}


class Resources(Frozen):
    """What one attempt of an arm asks of a Ray node (``--executor ray``; local ignores it)."""

    num_cpus: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    num_gpus: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    memory_mb: int | None = Field(default=None, gt=0)
    """Memory Ray reserves for the attempt (``ray.remote(memory=...)``), in MiB."""
    custom: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=dict, exclude_if=lambda v: not v
    )
    """Custom Ray resources by name (``ray.remote(resources=...)``)."""


class Arm(Frozen):
    """One condition: what differs between arms is the treatment."""

    description: str = ""
    source: str | ArmSource | None = None
    """The ``sources`` entry this arm runs, if any: its name (a checkout), or the commit of
    a ``repo`` source it runs (``{name, commit}``)."""
    agent: AgentSpec | None = None
    """Overrides the experiment's agent for this arm only."""
    tools: Literal["none"] | Tools = "none"
    attachments: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Files (relative to the experiment file) given to the agent, e.g. a PDF. Name them in
    ``files`` too so their bytes are in the lock. Left out of the canonical form when empty."""
    resources: Resources | None = Field(default=None, exclude_if=lambda v: v is None)
    """Per-attempt Ray resources, e.g. ``{num_cpus: 1, memory_mb: 512}`` (``--executor ray``).
    Left out of the canonical form when unset, so older experiments keep their hash."""
    limits: LimitOverrides | None = Field(default=None, exclude_if=lambda v: v is None)
    """This arm's per-attempt limits where they differ from ``budget.limits``. Left out of
    the canonical form when unset."""


class Experiment(Frozen):
    """A frozen protocol: arms, tasks, trials per task and policies."""

    id: SafeId
    version: str
    description: str = ""
    study: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The registered study this experiment runs (``pairbench studies``; ``pairbench init
    --from`` writes it): its report part and sections join the report. ``None`` for a plain
    experiment. Left out of the hash when absent."""
    protocol: str | None = None
    """Path of the protocol document (hashed with every other named file)."""
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS)
    order: Literal["alternate", "randomized"] | CampaignOrder = "alternate"
    pair_order: Literal["task", "round"] = Field(default="task", exclude_if=lambda v: v == "task")
    """The order pairs run in. ``task``: each task's trials together, tasks as declared.
    ``round``: by ``phase``, then trial (every task's first run, then every second run, ...),
    then as declared: a protocol's "first runs in case order, then repeat rounds, then
    packages". Left out of the hash at ``task``."""
    """Each pair's arm order: ``alternate`` (rotated per pair), ``randomized`` (a seeded
    permutation per pair), or ``{block: campaign}`` (``CampaignOrder``)."""
    budget: Budget = Field(default_factory=Budget)
    infra: InfraPolicy = Field(default_factory=InfraPolicy)
    files: list[str] = Field(default_factory=list)
    """Other files the experiment depends on (datasets, manifests): hashed into the lock."""
    sources: dict[SafeId, Source] = Field(default_factory=dict)
    """Source trees the arms run; their git commit, dirty flag and bytes are recorded."""
    treatment: Literal["arm", "source", "agent", "model", "tools"] = "arm"
    """What is meant to differ between arms (and between runs ``compare`` accepts)."""
    descriptive: bool = Field(default=False, exclude_if=lambda v: not v)
    """A benchmark of one arm (or more) that reports its own descriptive metrics and no
    comparison: one arm is then enough. Left out of the hash when false."""
    comparisons: list[tuple[str, str]] = Field(default_factory=list)
    """The arm pairs that get a significance test; other pairs get counts and intervals only."""
    agent: AgentSpec
    arms: dict[SafeId, Arm]
    tasks: list[Task] = Field(min_length=1)
    secrets: list[EnvName] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Agent variables (names in an arm's ``agent.env`` or ``agent.env_allow``) whose values
    are secret: stored as name and SHA-256 in run.json, and replaced by ``[redacted:NAME]``
    in transcripts, results and work files. A ``${env:NAME}`` value is secret without being
    listed. Left out of the canonical form when empty, so older experiments keep their hash."""
    hypotheses: list[Hypothesis] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Declared analyses the report judges (``Hypothesis``); left out of the hash when empty."""
    primary: list[PrimaryAnalysis] = Field(default_factory=list, exclude_if=lambda v: not v)
    """The deciding test and interval per comparison (``PrimaryAnalysis``): the report leads
    with them, labelled primary. Left out of the hash when empty."""
    limits: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """The protocol's stated limits (what this experiment cannot show), one sentence each:
    hashed with the protocol and printed in every report. Left out of the hash when empty."""
    report: ReportSpec = Field(default_factory=ReportSpec, exclude_if=lambda v: v == ReportSpec())
    proxy: ModelProxy | None = Field(default=None, exclude_if=lambda v: v is None)
    """The runtime's model server, fronted by pairbench's recording proxy (``ModelProxy``);
    left out of the hash when absent."""
    replacement: ReplacementPolicy = Field(
        default_factory=ReplacementPolicy, exclude_if=lambda v: v == ReplacementPolicy()
    )
    """What a run replaces, and how often (``ReplacementPolicy``); left out of the hash at
    its default."""
    protected: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Folders of evidence no run may write (a historical campaign's), relative to the
    experiment file: hashed before each run and resume; a runs folder inside one is refused."""
    """The sections and plots the report shows (``ReportSpec``); left out of the hash when
    not declared."""

    @property
    def campaigns(self) -> bool:
        """Whether the arms run in campaigns (``order: {block: campaign}``)."""
        return isinstance(self.order, CampaignOrder)

    @property
    def order_policy(self) -> str:
        """The order's name as run.json records it: ``alternate``, ``randomized`` or
        ``campaign``."""
        return "campaign" if isinstance(self.order, CampaignOrder) else self.order

    def agents(self) -> list[AgentSpec]:
        """Every agent spec the experiment holds: the experiment's, then each arm's own."""
        return [self.agent, *(a.agent for a in self.arms.values() if a.agent is not None)]

    def secret_names(self) -> frozenset[str]:
        """The agent variables whose values are secret: ``secrets`` and every variable
        whose value is a ``${env:NAME}`` reference, in any arm."""
        refs = {name for agent in self.agents() for name in agent.env_refs()}
        return frozenset({*self.secrets, *refs})

    def revision_of(self, arm: str) -> tuple[str, Source, ArmSource] | None:
        """The ``repo`` source's name, the source and the commit ``arm`` runs; None for an arm
        that runs no source or a checkout (``source: name``)."""
        wanted = self.arms[arm].source
        if not isinstance(wanted, ArmSource):
            return None
        repos = [n for n, s in self.sources.items() if s.repo is not None]
        name = wanted.name or (repos[0] if len(repos) == 1 else None)
        if name is None or name not in repos:
            return None  # `load_experiment` names the problem; a hand-made model may have it
        return name, self.sources[name], wanted

    def arm_agent(self, arm: str) -> AgentSpec:
        """The agent that runs in ``arm``."""
        return self.arms[arm].agent or self.agent

    def arm_limits(self, arm: str) -> Limits:
        """The per-attempt limits in force in ``arm``: the budget's, with the arm's own."""
        return self.budget.limits.merged(self.arms[arm].limits)

    def task(self, task_id: str) -> Task:
        """The task with id ``task_id`` (``KeyError`` if none has it)."""
        return self._task_index[task_id]

    @functools.cached_property
    def _task_index(self) -> dict[str, Task]:
        # Looked up several times per attempt: a scan of thousands of tasks would not do.
        return {task.id: task for task in self.tasks}

    def tasks_in(self, case_set: str | None) -> list[Task]:
        """The tasks of one case set (all tasks when ``case_set`` is None)."""
        return [t for t in self.tasks if case_set is None or t.case_set == case_set]

    def trials_for(self, task: Task) -> int:
        """How many trials ``task`` gets."""
        return task.trials if task.trials is not None else self.trials
