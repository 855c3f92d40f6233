"""Shared builders for end-to-end tests (imported by test modules via conftest's sys.path)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from ruamel.yaml import YAML

from pairbench.store import TrialResult
from pairbench.studies.mcp_transports import STUDY

E = TypeVar("E", bound=BaseModel)


def study_copy(tmp_path: Path) -> Path:
    """A private copy of the mcp-transports study folder; returns its experiment.yaml."""
    target = tmp_path / "study"
    shutil.copytree(STUDY.root, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target / "experiment.yaml"


def edit_experiment(path: Path, **changes: Any) -> Path:
    """Rewrite top-level keys of an experiment file (keeping the files it names).

    The copy's lock, hash list and ledger are removed: a rewritten experiment is not the
    frozen protocol, and a run under a lock it no longer matches is refused."""
    for frozen in ("experiment.lock.json", "protocol_hash.txt", "experiment.ledger.jsonl"):
        (path.parent / frozen).unlink(missing_ok=True)
    yaml = YAML(typ="safe")
    data = yaml.load(path.read_text(encoding="utf-8"))
    data.update(changes)
    if "hypotheses" not in changes and data.get("hypotheses"):
        # A study's hypotheses name its arms and task labels: a test that changes those
        # keeps the ones that still apply (check refuses the others, as it should).
        data["hypotheses"] = [h for h in data["hypotheses"] if _applies(h, data)]
        if not data["hypotheses"]:
            del data["hypotheses"]
    with path.open("w", encoding="utf-8") as handle:
        YAML().dump(data, handle)
    return path


def _applies(hypothesis: dict[str, Any], data: dict[str, Any]) -> bool:
    if not set(hypothesis.get("arms") or []) <= set(data.get("arms") or {}):
        return False
    where = hypothesis.get("where") or {}
    wanted = {k: {str(x) for x in (v if isinstance(v, list) else [v])} for k, v in where.items()}
    return not wanted or any(
        all(str((t.get("labels") or {}).get(k)) in vs for k, vs in wanted.items())
        for t in data.get("tasks") or []
    )


def task_named(path: Path, task_id: str) -> dict[str, Any]:
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    for task in data["tasks"]:
        if task["id"] == task_id:
            return dict(task)
    raise KeyError(task_id)


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m pairbench ARGS`` as a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "pairbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )


def cli_here(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pairbench ARGS`` in this process (typer's runner) in ``cwd``, answered as
    :func:`cli` answers: for tests with no process boundary under test (a few ms instead of
    the ~0.7 s of a new interpreter)."""
    import contextlib

    from typer.testing import CliRunner

    from pairbench.cli import app

    with contextlib.chdir(cwd):
        done = CliRunner().invoke(app, list(args), prog_name="pairbench")
    return subprocess.CompletedProcess(
        ["pairbench", *args], done.exit_code, done.stdout, done.stderr
    )


def checkout_env() -> dict[str, str]:
    """A scrubbed environment that still lets a child import pairbench from the checkout
    (conftest's ``server_env`` fixture; this for module-scoped fixtures, which cannot use it)."""
    import os

    src = Path(__file__).resolve().parents[2] / "src"
    return {"PYTHONPATH": str(src), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def skip_outside_ci(reason: str) -> None:
    """Skip loudly on a developer's machine; under CI=true a missing prerequisite fails."""
    import os

    import pytest

    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this must run, not skip)")
    pytest.skip(f"SKIPPING (not CI): {reason}")


REPO = Path(__file__).resolve().parents[2]
CLI_BIN = REPO / "tools" / "agent-clis" / "node_modules" / ".bin"
"""Where ``make agent-clis`` installs the real Claude Code and Codex (pinned by npm's lock)."""


def real_cli(name: str) -> Path:
    """The real ``claude`` or ``codex`` binary ``make test`` installed (skip loudly if not)."""
    import os

    found = Path(os.environ.get("PAIRBENCH_CLI_BIN", CLI_BIN)) / name
    if not os.access(found, os.X_OK):
        skip_outside_ci(f"the real {name} CLI is not installed at {found}: run `make agent-clis`")
    return found


def relink_journal(run_dir: Path) -> None:
    """Re-link a journal a test edited as if the runner had written it that way (a crash
    loses only a tail; tests that drop a middle line simulate one with this)."""
    import hashlib

    from pairbench.store._journal import chain

    path = run_dir / "journal.jsonl"
    genesis = hashlib.sha256((run_dir / "run.json").read_bytes()).hexdigest()
    bodies = []
    for raw in path.read_bytes().splitlines(keepends=True):
        event = json.loads(raw)
        event.pop("prev", None)
        bodies.append((json.dumps(event, sort_keys=True) + "\n").encode("utf-8"))
    path.write_bytes(chain(genesis, bodies)[0])


def events_of(events: Iterable[object], kind: type[E]) -> list[E]:
    """The journal events of one kind (a model of ``pairbench.store._events``), in order."""
    return [event for event in events if isinstance(event, kind)]


def bare_result(**fields: Any) -> TrialResult:
    """One attempt's record with only what a record must have (arm ``a``, task ``t``,
    trial 0, a failed scripted attempt); ``fields`` override or add the rest."""
    base: dict[str, Any] = {
        "run_id": "r",
        "experiment": "e",
        "arm": "a",
        "task": "t",
        "trial": 0,
        "seed": 1,
        "model_seed": 2,
        "attempt": 1,
        "start_order": 0,
        "outcome": "failed",
        "agent": "scripted",
    }
    return TrialResult(**{**base, **fields})
