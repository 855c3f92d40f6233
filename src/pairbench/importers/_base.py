"""The importer plugin contract: how another harness's per-sample output becomes trials.

An importer is registered in the entry-point group ``pairbench.importers`` (built-ins exactly
as third parties) and turns files another harness wrote into two kinds of frozen records:

- one :class:`LogFacts` per file, read from its header only (cheap): which harness and
  version wrote it, the file's sha256, the model and generation settings it records, when it
  was created, the task and task version, which arms it holds, and the harness's own headline
  numbers (so an import can be checked against them);
- a stream of :class:`SampleRecord`, one per (arm, task, sample id, epoch), read lazily so that
  a log of any size is imported in bounded memory.

``pairbench import <name> FILES...`` looks the importer up by name, calls :meth:`Importer.scan`
on every file, checks the pairing across arms (never assumed: same task, task version and
sample inputs, aligned on (task, sample id, epoch)) and writes a pairbench run folder from
:meth:`Importer.samples`.

**Usage** (a third-party importer for a harness writing one JSON object per line)::

    from pathlib import Path
    from typing import Iterator

    from pairbench import importers
    from pairbench.importers import Importer, LogFacts, SampleRecord, ImportSettings


    class MySettings(ImportSettings):
        metric: str = "correct"
        \"\"\"Which field is the outcome.\"\"\"


    class MyHarness(Importer[MySettings]):
        name = "myharness"
        description = "myharness --out results.jsonl"
        settings_model = MySettings

        def scan(self, path: Path, settings: MySettings) -> LogFacts:
            return LogFacts(
                harness="myharness", harness_version=None, path=str(path),
                sha256=importers.sha256_of(path), arms=(path.stem,),
                primary_metric=settings.metric,
            )

        def samples(
            self, path: Path, facts: LogFacts, settings: MySettings
        ) -> Iterator[SampleRecord]:
            for row in importers.iter_jsonl(path):
                yield SampleRecord(
                    arm=facts.arms[0], sample_id=str(row["id"]), epoch=1,
                    outcome="passed" if row[settings.metric] else "failed",
                    scores={settings.metric: float(row[settings.metric])},
                )

registered in the plugin's ``pyproject.toml``::

    [project.entry-points."pairbench.importers"]
    myharness = "my_package:MyHarness"

Settings come from ``--option KEY=VALUE`` flags or ``--mapping file.yaml`` and are validated by
``settings_model`` (a frozen pydantic model), so a misspelt key is one clear error.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import AwareDatetime, Field, JsonValue

from pairbench._errors import ImportRefused
from pairbench._model import Frozen

ImportOutcome = Literal["passed", "failed", "infra"]
"""A sample's outcome as an importer reports it: ``infra`` is an error or a limit the harness
hit (not scored, listed apart), never a failure."""

Measured = Literal["tokens", "time", "cost"]
"""Figures a log may record as the harness measured them."""


class ImportSettings(Frozen):
    """Base of an importer's settings (from ``--option KEY=VALUE`` or ``--mapping FILE``).

    Subclass it with the keys your importer accepts; unknown keys are refused."""


class LogFacts(Frozen):
    """What one file says about itself, read from its header (no samples)."""

    harness: str
    """The harness that ran the trials (``inspect_ai``, ``lm-evaluation-harness``, ...)."""
    harness_version: str | None = None
    """Its version as the file records it; None when the file does not say."""
    path: str
    """The file as given on the command line."""
    sha256: str
    """sha256 of the file's bytes at import."""
    arms: tuple[str, ...]
    """Arms the file holds, in the order their samples appear: one for a log of one model, several
    for a table with an arm column or a results file with several providers."""
    model: str | None = None
    """The model the file records (``provider/name``); None when it records none."""
    generation: dict[str, JsonValue] = Field(default_factory=dict)
    """Generation settings the file records (temperature, max tokens, seed, ...), as recorded."""
    created_at: AwareDatetime | None = None
    """When the harness says it created the file (its own header's timestamp), timezone-aware."""
    task: str | None = None
    """The task (benchmark) name; several tasks in one file leave it None and set it per sample."""
    task_version: str | None = None
    """The task's version as recorded."""
    dataset: str | None = None
    """The dataset's name (and revision) as recorded."""
    primary_metric: str
    """The score that decides pass/fail (a scorer or metric name); other scores are kept too."""
    measured: tuple[Measured, ...] = ()
    """Which figures the file records as measured; everything else is reported as absent."""
    headline: dict[str, float] = Field(default_factory=dict)
    """The harness's own summary numbers (``accuracy`` per scorer, ...) to check the import."""
    status: str | None = None
    """The run's status as recorded (``success``, ``error``, ...), when it records one."""
    sample_count: int | None = None
    """Samples x epochs the header announces, when it does (a progress total, not trusted)."""
    notes: tuple[str, ...] = ()
    """Anything else the report should state about this file."""
    companions: dict[str, str] = Field(default_factory=dict)
    """Other files the samples are read from (lm-eval's samples files beside its results JSON):
    absolute path to sha256 at import. ``pairbench verify`` re-hashes them as it does the log."""


class SampleRecord(Frozen):
    """One sample of one arm at one epoch, as the harness recorded it."""

    arm: str
    """Which arm (one of the file's ``LogFacts.arms``)."""
    task: str | None = None
    """The task, when one file holds several (lm-eval runs several at once); else None."""
    sample_id: str
    """The sample's id, stable across arms: the pairing key with ``task`` and ``epoch``."""
    epoch: int = 1
    """Repeat number, from 1."""
    outcome: ImportOutcome
    """``passed``/``failed`` by the primary metric; ``infra`` for an error or a limit."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Every score as a number (per scorer or metric); ``primary_metric`` among them unless the
    sample is ``infra``. Binary scores are 0/1."""
    reason: str | None = None
    """Why an ``infra`` sample was not scored (the harness's error or limit message)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Grouping labels (the sample's metadata, as strings)."""
    cluster: str | None = None
    """A cluster the sample belongs to beyond its repeats (a topic, a source document)."""
    input_hash: str | None = None
    """sha256 of the sample's input as recorded, to prove both arms saw the same input."""
    target_hash: str | None = None
    """sha256 of the sample's target as recorded."""
    input_tokens: int | None = None
    """Input tokens the harness measured; None when it did not."""
    output_tokens: int | None = None
    """Output tokens the harness measured; None when it did not."""
    total_tokens: int | None = None
    """Total tokens the harness measured; None when it did not."""
    seconds: float | None = None
    """Time the sample took as the harness measured it; None when it did not."""
    cost_usd: float | None = None
    """Cost the harness measured; None when it did not."""
    extra: dict[str, JsonValue] = Field(default_factory=dict)
    """Anything else worth keeping from the sample (small): its answer, the scorer's
    explanation; stored in the trial's result record, not hashed for pairing."""


S = TypeVar("S", bound=ImportSettings)


class Importer(ABC, Generic[S]):
    """A way in for trials pairbench did not run. Subclass, set the class attributes, implement
    :meth:`scan` and :meth:`samples`, and register the class in ``pairbench.importers``."""

    name: ClassVar[str]
    """The name ``pairbench import <name>`` takes (the entry point's name)."""
    description: ClassVar[str]
    """One line: what files it reads (shown by ``pairbench import --help``)."""
    settings_model: ClassVar[type[ImportSettings]] = ImportSettings
    """The settings it accepts (``--option KEY=VALUE`` / ``--mapping FILE``)."""
    metric_option: ClassVar[str | None] = None
    """The settings key a frozen analysis's ``metric:`` sets (``scorer``, ``outcome``, ...);
    None: the importer has no choice of metric."""

    def settings(self, raw: dict[str, Any]) -> S:
        """Validate ``raw`` against :attr:`settings_model`; a bad key is one clear error."""
        from pydantic import ValidationError

        try:
            return self.settings_model.model_validate(raw)  # type: ignore[return-value]
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(settings)'}: {e['msg']}"
                for e in exc.errors()
            )
            raise ImportRefused(
                f"importer {self.name!r}: invalid settings ({problems}); accepted keys: "
                f"{', '.join(self.settings_model.model_fields) or 'none'}"
            ) from None

    @abstractmethod
    def scan(self, path: Path, settings: S) -> LogFacts:
        """Read ``path``'s header (not its samples) into :class:`LogFacts`.

        Raise :class:`ImportRefused` naming the file and the fix when it is unreadable or not
        this harness's output."""

    @abstractmethod
    def samples(self, path: Path, facts: LogFacts, settings: S) -> Iterator[SampleRecord]:
        """Stream ``path``'s samples, one record per (arm, task, sample id, epoch).

        Must not read the whole file into memory when the format allows streaming; raise
        :class:`ImportRefused` on a truncated or corrupt file."""


def sha256_of(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_text(value: Any) -> str:
    """sha256 of a value's canonical JSON (sorted keys), for input and target hashes."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """One dict per non-blank line; :class:`ImportRefused` naming the line when one is not a
    JSON object."""
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportRefused(
                    f"{path}: line {number} is not JSON ({exc.msg}); the file may be truncated"
                    " — re-export it from the harness"
                ) from None
            if not isinstance(row, dict):
                raise ImportRefused(f"{path}: line {number} is not a JSON object")
            yield row


def aware(value: datetime | None) -> datetime | None:
    """``value`` with UTC assumed when it has no timezone (a header that omits it)."""
    from datetime import UTC

    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
