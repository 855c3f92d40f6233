"""What every attempt of one run shares: the loaded experiment, plugins, warm servers."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from pairbench import _registry
from pairbench.agents._protocol import RunSignals
from pairbench.fixtures._protocol import Fixture
from pairbench.grading._protocol import Grader
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_dir import RunDir

CANARY_ENV = "PAIRBENCH_CANARY"
"""The harness's own canary secret: it must never reach an agent's environment or output."""


def canary_for(run_id: str) -> str:
    """The run's canary value: token-shaped, unique per run, derived from the run ID."""
    return "pbk_" + hashlib.sha256(f"{run_id}|canary".encode()).hexdigest()[:32]


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
        path = self.run_dir.path / "work" / rel
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
