"""Which manifests score a run: the experiment's copies its lock hashed, never silently
another.

The run's ``lock.json`` holds the SHA-256 of the experiment's ``cases.json`` and
``packages.json`` as they were when the run started. The scorer reads the copy with those
bytes: the experiment's own (beside its ``experiment.yaml``), or, when that folder is gone
or was edited since, the study's copy if it has the hashed bytes. No copy with them: the run
is not scored (``StudyDataMissing``, naming the file and the fix), since a truth changed
after the run would otherwise move the score in silence, or be ignored in silence.

The sessions ran from the adapter's copies: the arm's ``cases:`` / ``packages:`` setting,
else the experiment's (the same hashed bytes). What an engine was given and which site it
met (a case's goal and fixture, a package's users and narration) must be the same in the
copy that scores it, or the run scored is not the run that ran; that is refused the same
way.

**Usage**::

    cases, packages, sources = run_manifests(run_dir.path, run, settings)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pairbench._errors import SpecError
from pairbench.store._run_record import RunRecord
from pairbench.studies._study import StudyDataMissing
from pairbench.studies.attribution_reliability._manifest import (
    CASES_FILE,
    PACKAGES_FILE,
    Case,
    Package,
    load_cases,
    load_packages,
)
from pairbench.studies.attribution_reliability._score_models import ManifestSource

_STUDY = {"cases.json": CASES_FILE, "packages.json": PACKAGES_FILE}
_SETTING = {"cases.json": "cases", "packages.json": "packages"}


class RunManifests(NamedTuple):
    cases: dict[str, Case]
    packages: dict[str, Package]
    sources: tuple[ManifestSource, ...]


def _sha(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _locked(run_dir: Path) -> dict[str, str]:
    try:
        lock = json.loads((run_dir / "lock.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = lock.get("files") if isinstance(lock, dict) else None
    return {
        str(f["path"]): str(f["sha256"])
        for f in files or []
        if isinstance(f, dict) and "path" in f and "sha256" in f
    }


def _pick(name: str, run_dir: Path, run: RunRecord) -> ManifestSource:
    experiment = Path(run.experiment_file).parent / name if run.experiment_file else None
    study = _STUDY[name]
    want = _locked(run_dir).get(name)
    candidates = [("experiment", experiment)] if experiment is not None else []
    candidates.append(("study", study))
    for source, path in candidates:
        assert path is not None
        sha = _sha(path)
        if sha is not None and (want is None or sha == want):
            return ManifestSource.model_validate(
                {"name": name, "source": source, "path": str(path), "sha256": sha}
            )
    where = experiment or study
    raise StudyDataMissing(
        f"{where}: SHA-256 {_sha(where) or '(missing)'} is not the {want} the run's "
        f"lock.json hashed, and the study's {study} is not either: the scorer reads only "
        f"the {name} the run was locked with. Fix: restore {where} to the bytes it had "
        "when the run started (git checkout), then run `pairbench report` again"
    )


def _runtime(item: Case | Package) -> Any:
    """What the engine was given and which site it met, from one manifest entry."""
    if isinstance(item, Case):
        return (item.set, item.fixture, item.goal)
    return (
        item.set,
        item.fixture,
        [u.model_dump() for u in item.users],
        [(s.text, s.after_step) for s in item.sentences],
    )


def _same_run(
    name: str, scored: Mapping[str, Case | Package], ran: Mapping[str, Case | Package], path: str
) -> None:
    differ = sorted(
        i
        for i in set(scored) | set(ran)
        if i not in scored or i not in ran or _runtime(scored[i]) != _runtime(ran[i])
    )
    if differ:
        raise StudyDataMissing(
            f"{path}: {', '.join(differ[:8])}{' ...' if len(differ) > 8 else ''} differ from "
            f"the {name} the sessions ran from (ids, goals, sites, scripted users or "
            "narration): the engine met other cases than this file scores. Fix: restore "
            f"{path}, or freeze and run again with the adapter's `{_SETTING[name]}:` "
            "naming it"
        )


def run_manifests(run_dir: Path, run: RunRecord, settings: Mapping[str, Any]) -> RunManifests:
    """The hashed manifests of the run (module docstring); ``settings``: an arm's
    adapter settings (its ``cases`` / ``packages`` say which copies the sessions ran)."""
    picked = {name: _pick(name, run_dir, run) for name in _STUDY}
    try:
        cases = load_cases(Path(picked["cases.json"].path))
        packages = load_packages(Path(picked["packages.json"].path))
        # The adapter read the arm's setting, else the experiment's copy: the hashed bytes.
        ran_cases = load_cases(Path(settings.get("cases") or picked["cases.json"].path))
        ran_packages = load_packages(Path(settings.get("packages") or picked["packages.json"].path))
    except SpecError as exc:
        raise StudyDataMissing(str(exc)) from exc
    _same_run("cases.json", dict(cases), dict(ran_cases), picked["cases.json"].path)
    _same_run("packages.json", dict(packages), dict(ran_packages), picked["packages.json"].path)
    return RunManifests(cases, packages, tuple(picked.values()))
