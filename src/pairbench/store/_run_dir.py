"""``runs/<run-id>/``: where a run keeps its plan, journal, results and transcripts."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pairbench._errors import RunDirError
from pairbench.schedule._plan import TrialKey
from pairbench.store._atomic import write_atomic
from pairbench.store._commit import PutFile
from pairbench.store._journal import Journal
from pairbench.store._records import TrialResult


def new_run_id(experiment: str) -> str:
    """A fresh run ID: experiment, UTC time and 6 random hex digits (never reused)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{experiment}-{stamp}-{secrets.token_hex(3)}"


def _dump(model: TrialResult) -> bytes:
    return (model.model_dump_json(indent=2) + "\n").encode("utf-8")


class RunDir:
    """One run directory. Results are written once and never overwritten."""

    def __init__(self, path: Path) -> None:
        # Absolute: agents run in folders of their own, where a relative path means another
        # place (a CLI handed runs/<id>/work/.../mcp.json would look for it inside its cwd).
        self.path = path.absolute()

    @classmethod
    def create(cls, runs_dir: Path, run_id: str) -> RunDir:
        path = runs_dir / run_id
        if path.exists():
            raise RunDirError(f"{path} already exists; a run is never overwritten")
        path.mkdir(parents=True)
        return cls(path)

    @classmethod
    def open(cls, path: Path) -> RunDir:
        if not (path / "run.json").is_file():
            raise RunDirError(
                f"{path} is not a pairbench run directory (no run.json); "
                "pass the folder that `pairbench run` printed"
            )
        return cls(path)

    # -- paths ---------------------------------------------------------------------------
    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def journal_path(self) -> Path:
        return self.path / "journal.jsonl"

    def result_path(self, key: TrialKey) -> Path:
        return self.path / "results" / key.arm / key.task / f"{key.trial}.json"

    def transcript_path(self, key: TrialKey) -> Path:
        return self.path / "transcripts" / key.arm / key.task / f"{key.trial}.jsonl"

    def working_transcript(self, key: TrialKey, attempt: int) -> Path:
        """Where an attempt's transcript streams before the attempt's fate is known."""
        return self.path / "transcripts" / key.arm / key.task / f"{key.trial}.{attempt}.partial"

    def kept_path(self, kind: str, key: TrialKey, attempt: int, suffix: str) -> Path:
        """``infra/`` or ``interrupted/``: attempts that are kept but are not the trial's result."""
        return self.path / kind / key.arm / key.task / f"{key.trial}.{attempt}{suffix}"

    def fixture_rel(self, key: TrialKey, attempt: int) -> str:
        """The attempt's fixture folder, relative to ``fixtures_root``."""
        return f"{key.arm}/{key.task}/{key.trial}.{attempt}"

    @property
    def fixtures_root(self) -> Path:
        return self.path / "fixtures"

    # -- run.json ------------------------------------------------------------------------
    def write_run_json(self, data: dict[str, Any]) -> None:
        payload = json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"
        write_atomic(self.run_json, payload.encode("utf-8"))

    def read_run_json(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.run_json.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RunDirError(f"{self.run_json}: cannot read run.json ({exc})") from exc
        return data

    # -- results -------------------------------------------------------------------------
    def write_result(self, key: TrialKey, result: TrialResult) -> str:
        """Write the trial's one final result; refuses to overwrite. Returns its SHA-256."""
        return write_atomic(self.result_path(key), _dump(result), overwrite=False)

    def write_kept(self, kind: str, key: TrialKey, result: TrialResult) -> str:
        return write_atomic(self.kept_path(kind, key, result.attempt, ".json"), _dump(result))

    def stage_result(self, key: TrialKey, result: TrialResult) -> PutFile:
        """:meth:`write_result` as a file for the group committer (``_commit.py``) to write."""
        return PutFile(self.result_path(key), _dump(result), overwrite=False)

    def stage_kept(self, kind: str, key: TrialKey, result: TrialResult) -> PutFile:
        """:meth:`write_kept` as a file for the group committer to write."""
        return PutFile(self.kept_path(kind, key, result.attempt, ".json"), _dump(result), True)

    def has_result(self, key: TrialKey) -> bool:
        return self.result_path(key).is_file()

    def _load_all(self, folder: str) -> list[TrialResult]:
        root = self.path / folder
        if not root.is_dir():
            return []
        out = []
        for file in sorted(root.rglob("*.json")):
            try:
                out.append(TrialResult.model_validate_json(file.read_bytes()))
            except ValueError as exc:
                raise RunDirError(f"{file}: not a valid pairbench result ({exc})") from exc
        return out

    def results(self) -> list[TrialResult]:
        return self._load_all("results")

    def infra_attempts(self) -> list[TrialResult]:
        return self._load_all("infra")

    def interrupted_attempts(self) -> list[TrialResult]:
        return self._load_all("interrupted")

    def journal(self) -> Journal:
        return Journal(self.journal_path)

    def journal_events(self) -> list[dict[str, Any]]:
        return Journal.read(self.journal_path)
