"""An analysis registered before the data: the arms, metric and primary test of an import,
frozen (a lock and issue 34's ledger beside it) before the candidate's log exists.

**Usage** (``analysis.yaml``)::

    id: gpt-x-vs-gpt-y
    version: 1.0.0
    importer: inspect
    metric: includes                       # the scorer/column that decides pass/fail
    arms:
      baseline: {logs: ["logs/baseline-*.eval"]}     # named in advance, by path pattern
      candidate: {model: openai/gpt-y}               # or by the model the log records
    primary:
      - arms: [candidate, baseline]
        test: mcnemar-exact
        alpha: 0.05
        sided: greater

``pairbench freeze-analysis analysis.yaml`` writes ``analysis.lock.json`` and appends a
``freeze`` line to ``analysis.ledger.jsonl``; ``pairbench import inspect LOGS --experiment
analysis.yaml`` then refuses an analysis edited since, appends a ``run`` line with each log's
sha256, and the report says per log whether its own header dates it before or after the freeze,
and whether it was named in advance.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from datetime import datetime
from pathlib import Path

from pydantic import Field, ValidationError

from pairbench._errors import ImportRefused
from pairbench._model import Frozen
from pairbench.freeze._ledger import LedgerEntry, open_ledger, read_ledger
from pairbench.spec._canonical import canonical_json
from pairbench.spec._ids import SafeId
from pairbench.spec._primary import PrimaryAnalysis
from pairbench.spec._yaml import load_yaml_with_lines


class AnalysisArm(Frozen):
    """How a log is recognised as this arm's."""

    logs: list[str] = Field(default_factory=list)
    """Path patterns (``fnmatch``, relative to the analysis file's folder): logs named in
    advance."""
    model: str | None = None
    """The model the log records (not named in advance: any log of it matches)."""


class Analysis(Frozen):
    """An import's pre-registered analysis (module docstring)."""

    id: SafeId
    version: str
    description: str | None = None
    importer: str
    """The importer the logs will be read with."""
    metric: str | None = None
    """The score that decides pass/fail (the importer's ``metric_option``)."""
    options: dict[str, str] = Field(default_factory=dict)
    """Other importer options, fixed in advance."""
    arms: dict[SafeId, AnalysisArm]
    """Arms in declared order (the first is compared with each other unless ``comparisons``)."""
    comparisons: list[tuple[str, str]] = Field(default_factory=list)
    primary: list[PrimaryAnalysis] = Field(default_factory=list)


class AnalysisLock(Frozen):
    """``<stem>.lock.json``: the analysis as frozen."""

    schema_id: str = "pairbench.import-analysis-lock/1"
    canonical_hash: str
    analysis: Analysis


def _paths(path: Path) -> tuple[Path, Path]:
    return path.with_suffix(".lock.json"), path.with_suffix(".ledger.jsonl")


def load_analysis(path: Path) -> Analysis:
    """The analysis file, validated; one error naming the file and the field."""
    try:
        data = load_yaml_with_lines(path).data
        return Analysis.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ImportRefused(f"{path}: {where}: {err['msg']}") from None
    except OSError as exc:
        raise ImportRefused(f"{path}: cannot read the analysis file ({exc.strerror})") from None


def _hash(analysis: Analysis) -> str:
    return hashlib.sha256(canonical_json(analysis)).hexdigest()


def freeze_analysis(path: Path) -> LedgerEntry:
    """Freeze ``path``: its lock beside it and a ``freeze`` line in its ledger (the line's
    ``at`` is when the analysis was registered). Freezing it unchanged again is a no-op."""
    analysis = load_analysis(path)
    lock_file, ledger_file = _paths(path)
    data = AnalysisLock(canonical_hash=_hash(analysis), analysis=analysis)
    body = (json.dumps(data.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()
    lock_sha = hashlib.sha256(body).hexdigest()
    with open_ledger(ledger_file, must_exist=lock_file.is_file()) as ledger:
        freezes = [e for e in ledger.entries if e.kind == "freeze"]
        if freezes and freezes[-1].lock_sha256 == lock_sha and lock_file.is_file():
            return freezes[-1]
        if freezes and analysis.version in {e.protocol_version for e in freezes}:
            raise ImportRefused(
                f"{path}: version {analysis.version} was frozen already with a different "
                "analysis. Fix: give the changed analysis a new version, then freeze it"
            )
        entry = ledger.entry(
            "freeze",
            lock_sha,
            analysis.version,
            canonical_hash=data.canonical_hash,
            previous_lock_sha256=freezes[-1].lock_sha256 if freezes else None,
        )
        lock_file.write_bytes(body)
        ledger.append(entry)
        return entry


class FrozenAnalysis(Frozen):
    """A frozen analysis as an import uses it."""

    analysis: Analysis
    file: str
    lock_sha256: str
    frozen_at: datetime
    first_hashes: dict[str, str]
    """Each log's sha256 at its first import under this analysis (from the ledger)."""


def frozen(path: Path) -> FrozenAnalysis:
    """The analysis at ``path``, refused unless it is frozen and unchanged since."""
    analysis = load_analysis(path)
    lock_file, ledger_file = _paths(path)
    if not lock_file.is_file():
        raise ImportRefused(
            f"{path}: not frozen (no {lock_file.name}). Fix: `pairbench freeze-analysis {path}` "
            "before the logs it analyses exist"
        )
    lock = AnalysisLock.model_validate_json(lock_file.read_bytes())
    if lock.canonical_hash != _hash(analysis):
        raise ImportRefused(
            f"{path}: changed since it was frozen ({lock_file.name}). Fix: restore it, or give "
            "it a new version and freeze it again (a new registration, dated now)"
        )
    lock_sha = hashlib.sha256(lock_file.read_bytes()).hexdigest()
    entries = read_ledger(ledger_file)
    freeze = next((e for e in entries if e.kind == "freeze" and e.lock_sha256 == lock_sha), None)
    if freeze is None:
        raise ImportRefused(f"{ledger_file}: holds no freeze of {lock_file.name}. Fix: freeze it")
    first: dict[str, str] = {}
    for e in entries:
        for log, sha in (e.imported_logs or {}).items():
            first.setdefault(log, sha)
    return FrozenAnalysis(
        analysis=analysis,
        file=str(path),
        lock_sha256=lock_sha,
        frozen_at=datetime.fromisoformat(freeze.at),
        first_hashes=first,
    )


def record_import(path: Path, fa: FrozenAnalysis, run_id: str, logs: dict[str, str]) -> None:
    """Append the import's ``run`` line (each log's sha256) to the analysis's ledger."""
    with open_ledger(_paths(path)[1], must_exist=True) as ledger:
        ledger.append(
            ledger.entry(
                "run", fa.lock_sha256, fa.analysis.version, run_id=run_id, imported_logs=logs
            )
        )


def arm_for(fa: FrozenAnalysis, log: Path, recorded: str, model: str | None) -> tuple[str, bool]:
    """The declared arm a file's recorded arm belongs to, and whether the log was named in
    advance (by a path pattern) rather than matched by its model or arm name."""
    base = Path(fa.file).parent
    rel = (
        str(log.resolve().relative_to(base.resolve()))
        if log.resolve().is_relative_to(base.resolve())
        else str(log)
    )
    by_path = [
        arm
        for arm, spec in fa.analysis.arms.items()
        if any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(str(log), p) for p in spec.logs)
    ]
    if len(by_path) == 1:
        return by_path[0], True
    by_name = [
        arm
        for arm, spec in fa.analysis.arms.items()
        if arm == recorded or (spec.model is not None and spec.model == model)
    ]
    if len(by_name) == 1:
        return by_name[0], False
    raise ImportRefused(
        f"{log}: matches {len(by_path) or len(by_name)} of the analysis's arms "
        f"({', '.join(fa.analysis.arms)}), not one (arm {recorded!r}, model {model!r}). Fix: "
        f"declare which arm it is in {fa.file} (a `logs:` pattern) and freeze a new version"
    )
