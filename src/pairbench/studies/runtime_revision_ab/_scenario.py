"""The ten scenarios: each folder's ``scenario.yaml``, ``scope.yaml`` and ``obligations.yaml``
read into frozen records, and the obligations checked on a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field
from ruamel.yaml import YAML

from pairbench._errors import PairbenchError
from pairbench._model import Frozen

SCENARIOS_DIR = Path(__file__).parent / "scenarios"
SCENARIO_IDS = tuple(f"AR-{n:03d}" for n in range(1, 11))


class Prohibited(Frozen):
    """An operation the task must not perform: a tool and the path (or URL) glob it hits."""

    tool: str
    """The tool name (``write_file``, ``http_get``, ...)."""
    path: str | None = None
    """Glob over the path argument as the model wrote it."""
    url: str | None = None
    """Glob over the URL argument."""
    why: str = ""
    """What makes it prohibited."""


class Scope(Frozen):
    """What the task may change."""

    allowed: list[str]
    """Workspace path globs whose changes are authorized; any other change is not."""
    prohibited: list[Prohibited] = Field(default_factory=list)
    """Operations whose proposals count as attempted prohibited operations."""


class Obligation(Frozen):
    """A cheap check on a workspace: one file contains (or lacks) a text, or is absent."""

    id: str
    path: str
    contains: str | None = None
    lacks: str | None = None
    absent: bool = False

    def holds(self, workspace: Path) -> bool:
        """Whether the check passes on ``workspace``."""
        target = workspace / self.path
        if self.absent:
            return not target.exists()
        if not target.is_file():
            return False
        text = target.read_text(encoding="utf-8", errors="replace")
        if self.contains is not None and self.contains not in text:
            return False
        return self.lacks is None or self.lacks not in text


class Scenario(Frozen):
    """One scenario folder, read."""

    id: str
    title: str
    exercises: str
    verifier: list[str]
    """The verifier's argv; ``{scenario}`` is this folder."""
    site: str | None = None
    """A folder of pages served (slowly, unless ``?fast=1``) on loopback as ``{site_url}``."""
    root: Path
    scope: Scope
    obligations: list[Obligation]

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def prompt(self, site_url: str = "") -> str:
        """The task text, ``{site_url}`` filled in."""
        text = (self.root / "prompt.md").read_text(encoding="utf-8")
        return text.replace("{site_url}", site_url)

    def verifier_argv(self) -> list[str]:
        return [a.replace("{scenario}", str(self.root)) for a in self.verifier]

    def check(self, workspace: Path) -> dict[str, bool]:
        """Each obligation's result on ``workspace``."""
        return {o.id: o.holds(workspace) for o in self.obligations}


def _yaml(path: Path) -> object:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


SCENARIO_FILES = ("scenario.yaml", "scope.yaml", "obligations.yaml", "prompt.md", "accept.py")
"""What a scenario folder holds, besides its ``workspace/`` (the study's README)."""


def load_scenario(scenario_id: str, folder: Path | None = None) -> Scenario:
    """The study's scenario ``AR-001`` ... ``AR-010``, or with ``folder`` (a team's own
    scenarios, in the same layout) the one in ``folder/<id>``.

    >>> load_scenario("AR-007").scope.allowed
    ['out/report.md']
    """
    if folder is not None:
        root = Path(folder) / scenario_id
        missing = [n for n in (*SCENARIO_FILES, "workspace") if not (root / n).exists()]
        if missing:
            raise PairbenchError(
                f"{root}: no scenario {scenario_id!r} there (missing {', '.join(missing)}). "
                "Fix: give each task's scenario a folder named as its labels.scenario (or its "
                f"task id) under {folder}, with {', '.join(SCENARIO_FILES)} and workspace/"
            )
    elif scenario_id not in SCENARIO_IDS:
        raise PairbenchError(
            f"no scenario {scenario_id!r}. Fix: use one of {', '.join(SCENARIO_IDS)}, or "
            "your own scenarios (settings: {scenarios: FOLDER})"
        )
    else:
        root = SCENARIOS_DIR / scenario_id.lower().replace("-", "")
    return scenario_at(root)


def scenario_at(root: Path) -> Scenario:
    """The scenario in the folder ``root`` (the study's layout).

    Raises:
        PairbenchError: a file is not valid, naming the folder and the fix.
    """
    scenario_id = root.name
    try:
        meta, obligations = _yaml(root / "scenario.yaml"), _yaml(root / "obligations.yaml")
        if not isinstance(meta, dict) or not isinstance(obligations, list):
            raise ValueError("scenario.yaml must be a mapping and obligations.yaml a list")
        return Scenario(
            **meta,
            root=root,
            scope=Scope.model_validate(_yaml(root / "scope.yaml")),
            obligations=[Obligation.model_validate(o) for o in obligations],
        )
    except (ValueError, TypeError) as exc:  # a ValidationError is a ValueError
        raise PairbenchError(
            f"{root}: scenario {scenario_id!r} is not valid: {str(exc)[:300]}. Fix: follow "
            "the layout of the study's own scenarios (scenarios/ar001)"
        ) from None


ADAPTERS = ("rab-runtime", "minirt")
"""The adapters that run the study's scenarios."""


def guarded_scenarios(loaded: Any) -> dict[str, Path]:
    """The scenario folders the experiment's arms run (``Study.guarded``): the study's own
    when an arm names none, else each arm's ``scenarios`` folder. Their acceptance scripts
    judge every attempt, so a change mid-run stops it (a team's folder is also in the lock
    when ``files:`` lists it)."""
    exp = loaded.experiment
    out: dict[str, Path] = {}
    for arm in exp.arms:
        agent = exp.arm_agent(arm)
        if agent.adapter not in ADAPTERS:
            continue
        folder = agent.settings.get("scenarios")
        if isinstance(folder, str):
            out[f"scenarios {folder}"] = loaded.root / folder
        else:
            out["scenarios"] = SCENARIOS_DIR
    return out
