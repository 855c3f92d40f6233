"""What every attempt of one run shares: the loaded experiment, plugins, warm servers."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from pairbench import _registry
from pairbench._clock import now_iso
from pairbench.agents._protocol import RunSignals
from pairbench.fixtures._protocol import Fixture
from pairbench.grading._protocol import Grader
from pairbench.runner._bench_guard import BenchGuard
from pairbench.runner._revisions import Revision
from pairbench.schedule._plan import Pair, TrialKey
from pairbench.spec._load import LoadedExperiment
from pairbench.spec._models import MIN_SECRET_CHARS, AgentSpec, Experiment, env_ref
from pairbench.store._records import Outcome, TrialResult
from pairbench.store._redact import Redactor, stored_env
from pairbench.store._run_dir import RunDir
from pairbench.store._workspace import WorkspaceKept, cap_workspace

CANARY_ENV = "PAIRBENCH_CANARY"
"""The harness's own canary secret: it must never reach an agent's environment or output."""


def canary_for(run_id: str) -> str:
    """The run's canary value: token-shaped, unique per run, derived from the run ID."""
    return "pbk_" + hashlib.sha256(f"{run_id}|canary".encode()).hexdigest()[:32]


def run_secrets(
    experiment: Experiment, canaries: list[str], environ: Mapping[str, str]
) -> dict[str, str]:
    """Name -> value of every secret of a run: no stored file may hold one of the values.

    The harness canary (``PAIRBENCH_CANARY``); each declared secret's value (``secrets``,
    and every ``${env:NAME}`` value, read from ``environ`` as the agent will get it); and
    each ``env_allow`` variable whose value in ``environ`` has at least
    ``MIN_SECRET_CHARS`` characters (a shorter one is ordinary text, not a key). Values
    are gathered over every arm; a name two arms give different values is kept as
    ``NAME@arm`` for the second.
    """
    found = {CANARY_ENV if i == 0 else f"{CANARY_ENV}_{i}": c for i, c in enumerate(canaries)}
    names = experiment.secret_names()

    def add(name: str, value: str | None, arm: str) -> None:
        if not value or value in found.values():
            return
        found[name if name not in found else f"{name}@{arm}"] = value

    for arm in experiment.arms:
        agent = experiment.arm_agent(arm)
        for key, value in agent.env.items():
            ref = env_ref(value)
            if ref is not None:
                add(key, environ.get(ref), arm)
            elif key in names:
                add(key, value, arm)
        tools = experiment.arms[arm].tools
        for server in tools.mcp.values() if tools != "none" else []:
            for ref in server.secret_refs().values():
                add(ref, environ.get(ref), arm)  # the value a header sends the server
        for name in agent.env_allow:
            allowed = environ.get(name)
            if allowed is not None and (name in names or len(allowed) >= MIN_SECRET_CHARS):
                add(name, allowed, arm)
    return found


def stored_agent(agent: AgentSpec, names: frozenset[str]) -> dict[str, Any]:
    """An agent spec as run.json stores it: each secret's literal ``env`` value is its name
    and SHA-256 (``store._redact.stored_secret``); a ``${env:NAME}`` reference stays."""
    dump = agent.model_dump(mode="json")
    dump["env"] = stored_env(dump["env"], names)
    return dump


def stored_experiment(experiment: Experiment) -> dict[str, Any]:
    """The experiment model as run.json stores it (its agents as :func:`stored_agent`).

    Not the canonical form: the canonical hash is of the model itself (and so of a literal
    secret), while this is what is written where anyone can read it.
    """
    names = experiment.secret_names()
    dump = experiment.model_dump(mode="json")
    dump["agent"] = stored_agent(experiment.agent, names)
    for name, arm in experiment.arms.items():
        if arm.agent is not None:
            dump["arms"][name]["agent"] = stored_agent(arm.agent, names)
    return dump


def stored_identities(identities: dict[str, Any], experiment: Experiment) -> dict[str, Any]:
    """``run_identities`` as run.json stores them: in each arm's ``env`` and ``pinned_env``
    a secret's literal value is its name and SHA-256 (other pinned values stay in clear)."""
    names = experiment.secret_names()
    arms = dict(identities.get("arms") or {})
    for arm, ident in arms.items():
        if isinstance(ident, dict):
            ident = dict(ident)
            for key in ("env", "pinned_env"):
                if isinstance(ident.get(key), dict):
                    ident[key] = stored_env(ident[key], names)
            arms[arm] = ident
    return {**identities, "arms": arms}


@dataclass
class RunContext:
    """Shared, read-mostly state of one run (one per ``run``/``resume`` invocation)."""

    loaded: LoadedExperiment
    run_dir: RunDir
    run_id: str
    canaries: list[str]
    warm_urls: dict[str, dict[str, str]] = field(default_factory=dict)
    signals: RunSignals = field(default_factory=RunSignals)
    """arm -> server -> URL of its warm streamable-HTTP server."""
    _graders: dict[str, Grader] = field(default_factory=dict)
    _fixtures: dict[str, Fixture] = field(default_factory=dict)
    _texts: dict[str, str] = field(default_factory=dict)
    _plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    _uses_workdir: dict[str, bool] = field(default_factory=dict)
    _secrets: dict[str, str] | None = None
    _redactor: Redactor | None = None
    placement: tuple[str, str | None] | None = None
    """On Ray: (the node an attempt runs on, the node whose warm servers it uses)."""
    revisions: dict[str, Revision] = field(default_factory=dict)
    """arm -> its git revision, checked out, built and frozen (``_revisions``)."""
    guard: BenchGuard | None = None
    """The frozen benchmark's files, re-hashed around every attempt (``_bench_guard``)."""
    proxy: Any = None
    """The run's recording proxy in front of ``proxy.upstream`` (``_model_proxy``), if any."""
    sampling_defaults: dict[str, Any] | None = None
    """The proxied server's default sampling (``/props``), shown for parameters never sent."""

    def secrets(self) -> dict[str, str]:
        """The run's secrets by name (see :func:`run_secrets`), read from this process's
        environment once: the one a local attempt's agent, or a Ray worker's, inherits."""
        if self._secrets is None:
            self._secrets = run_secrets(self.loaded.experiment, self.canaries, os.environ)
        return self._secrets

    def redactor(self) -> Redactor:
        """What keeps the run's secret values out of every file it stores."""
        if self._redactor is None:
            self._redactor = Redactor(self.secrets())
        return self._redactor

    def new_result(
        self, key: TrialKey, pair: Pair, attempt: int, outcome: Outcome, reason: str, **fields: Any
    ) -> TrialResult:
        """The one constructor of an attempt's record: who, what and when from the plan,
        ``fields`` (grade, metrics, times, ...) from the attempt. Ends now unless given."""
        exp = self.loaded.experiment
        fields.setdefault("ended_at", now_iso())
        return TrialResult(
            run_id=self.run_id,
            experiment=exp.id,
            arm=key.arm,
            task=key.task,
            trial=key.trial,
            labels=dict(exp.task(key.task).labels),
            seed=pair.seed,
            model_seed=pair.model_seed,
            attempt=attempt,
            start_order=pair.order.index(key.arm),
            outcome=outcome,
            reason=reason,
            agent=exp.arm_agent(key.arm).adapter,
            **fields,
        )

    def keep_attempt_files(self, key: TrialKey, attempt: int) -> WorkspaceKept | None:
        """What an attempt left in its work and fixture folders, as the run folder keeps
        it: the workspace capped at ``budget.workspace_kept`` (its manifest beside it; None
        when all of it fits), then every kept file its agent, servers and fixture wrote
        redacted."""
        rel = self.run_dir.fixture_rel(key, attempt)
        work = self.run_dir.work_folder(rel)
        cap = self.loaded.experiment.budget.workspace_kept
        manifest = self.run_dir.workspace_manifest(key, attempt)
        kept = cap_workspace(work, manifest, self.run_dir.path, cap, self.redactor())
        for folder in (work, self.run_dir.fixture_folder(rel)):
            self.redactor().redact_tree(folder)
        return kept

    def grader(self, name: str) -> Grader:
        if name not in self._graders:
            self._graders[name] = _registry.load("graders", name)
        return self._graders[name]

    def fixture(self, name: str) -> Fixture:
        if name not in self._fixtures:
            self._fixtures[name] = _registry.load("fixtures", name)
        return self._fixtures[name]

    def text(self, rel: str) -> str:
        if rel not in self._texts:
            self._texts[rel] = self.loaded.resolve(rel).read_text(encoding="utf-8")
        return self._texts[rel]

    def plan(self, rel: str) -> dict[str, Any]:
        if rel not in self._plans:
            data = YAML(typ="safe").load(self.text(rel)) or {}
            self._plans[rel] = dict(data)
        return self._plans[rel]

    def workdir(self, rel: str, *, create: bool = True) -> Path:
        path = self.run_dir.work_folder(rel)
        if create:
            path.mkdir(parents=True, exist_ok=True)
        return path

    def uses_workdir(self, arm: str) -> bool:
        """Does the arm's adapter need its attempts' work folder, HOME and TMPDIR made?

        True unless its class says ``uses_workdir = False`` (in-process adapters). An
        adapter that cannot load gets True: its attempts fail as ``infra`` with the reason.
        """
        adapter = self.loaded.experiment.arm_agent(arm).adapter
        if adapter not in self._uses_workdir:
            try:
                cls = _registry.load("agents", adapter)
            except Exception:
                self._uses_workdir[adapter] = True
            else:
                self._uses_workdir[adapter] = bool(getattr(cls, "uses_workdir", True))
        return self._uses_workdir[adapter]
