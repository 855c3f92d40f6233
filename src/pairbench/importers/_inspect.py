"""Inspect AI logs (``.eval`` and ``.json``), read through Inspect's own log API.

The header comes from ``read_eval_log(header_only=True)`` and the samples from
``read_eval_log_sample_summaries``: each sample's id, epoch, input, target, scores, metadata,
model usage, times, error and limit, without its event stream. That is everything an import
needs, read in one pass over the log's summaries (1.5 s for 20,000 samples), where
``read_eval_log_samples`` parses every sample whole (about 50 ms each in Inspect 0.3.285 on a
``.eval`` log: 17 minutes for 20,000). ``--option full_samples=true`` streams the whole samples
instead (Inspect thins long inputs and metadata in summaries; both arms are thinned alike, so
the input hashes still compare, but a difference past the thinning is seen only in full).
The zip format is never parsed by hand. ``inspect_ai`` is imported here only, on use
(``pip install pairbench[inspect]``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from pairbench._errors import ImportRefused
from pairbench.importers._base import (
    Importer,
    ImportSettings,
    LogFacts,
    Measured,
    SampleRecord,
    aware,
    sha256_of,
    sha256_text,
)

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample, EvalSampleSummary

_INSTALL = "install Inspect's log reader: pip install 'pairbench[inspect]'"


class InspectSettings(ImportSettings):
    """``--option`` keys of ``pairbench import inspect``."""

    scorer: str | None = None
    """Which scorer decides pass/fail (default: the log's headline scorer, else its first)."""
    pass_at: float = 1.0
    """A sample passes when that scorer's value, as a number (C=1, P=0.5, I=0), is at least this."""
    full_samples: bool = False
    """Stream whole samples (``read_eval_log_samples``) rather than their summaries."""


def _inspect_log() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise ImportRefused(f"`pairbench import inspect` needs inspect_ai: {_INSTALL}") from None
    return log


def _float(value: Any) -> float | None:
    from inspect_ai.scorer import value_to_float

    try:
        number = value_to_float()(value)
    except (TypeError, ValueError):
        return None
    return float(number)


class InspectImporter(Importer[InspectSettings]):
    """Inspect AI ``.eval`` / ``.json`` logs: one arm per log (its model, or ``--arm``)."""

    name = "inspect"
    description = "Inspect AI logs (.eval or .json), one arm per log"
    metric_option = "scorer"
    settings_model = InspectSettings

    def scan(self, path: Path, settings: InspectSettings) -> LogFacts:
        log = _inspect_log()
        try:
            header = log.read_eval_log(str(path), header_only=True)
        except Exception as exc:  # Inspect raises zip, JSON and validation errors alike
            raise ImportRefused(
                f"{path}: not a readable Inspect AI log ({type(exc).__name__}: {exc}). Fix: "
                "pass the .eval or .json file Inspect wrote, whole (a copy cut short cannot be "
                "read)"
            ) from None
        spec = header.eval
        scores = header.results.scores if header.results else []
        headline: dict[str, float] = {}
        for score in scores:
            for metric in score.metrics.values():
                headline[f"{score.name}/{metric.name}"] = float(metric.value)
        names = [s.name for s in scores]
        chosen = settings.scorer or (names[0] if names else "score")
        if settings.scorer and names and settings.scorer not in names:
            raise ImportRefused(
                f"{path}: no scorer named {settings.scorer!r} (the log has: {', '.join(names)})."
                " Fix: --option scorer=NAME with one of those"
            )
        generation: dict[str, JsonValue] = {
            k: v
            for k, v in spec.model_generate_config.model_dump(mode="json").items()
            if v is not None
        }
        dataset = spec.dataset
        config = spec.config
        epochs = config.epochs or 1
        measured: list[Measured] = ["tokens", "time"]
        return LogFacts(
            harness="inspect_ai",
            harness_version=spec.packages.get("inspect_ai"),
            path=str(path),
            sha256=sha256_of(path),
            arms=(spec.model,),
            model=spec.model,
            generation=generation,
            created_at=aware(_parse_time(spec.created)),
            task=spec.task,
            task_version=str(spec.task_version),
            dataset=dataset.name or (str(dataset.location) if dataset.location else None),
            primary_metric=chosen,
            measured=tuple(measured),
            headline=headline,
            status=header.status,
            sample_count=(dataset.samples or 0) * epochs or None,
            notes=tuple(f"task argument {k}={v!r}" for k, v in sorted(spec.task_args.items())),
        )

    def samples(
        self, path: Path, facts: LogFacts, settings: InspectSettings
    ) -> Iterator[SampleRecord]:
        log = _inspect_log()
        arm = facts.arms[0]
        try:
            if settings.full_samples:
                samples = log.read_eval_log_samples(str(path), all_samples_required=False)
            else:
                samples = log.read_eval_log_sample_summaries(str(path))
            for sample in samples:
                yield _record(sample, arm, facts.primary_metric, settings.pass_at)
        except ImportRefused:
            raise
        except Exception as exc:
            raise ImportRefused(
                f"{path}: its samples cannot be read ({type(exc).__name__}: {exc}). Fix: "
                "pass the whole log Inspect wrote (this one is truncated or damaged)"
            ) from None


def _parse_time(text: str) -> Any:
    from datetime import datetime

    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _record(
    sample: EvalSample | EvalSampleSummary, arm: str, primary: str, pass_at: float
) -> SampleRecord:
    scores: dict[str, float] = {}
    for name, score in (sample.scores or {}).items():
        number = _float(score.value)
        if number is not None:
            scores[name] = number
    tokens_in = tokens_out = total = None
    if sample.model_usage:
        usages = list(sample.model_usage.values())
        tokens_in = sum(u.input_tokens for u in usages)
        tokens_out = sum(u.output_tokens for u in usages)
        total = sum(u.total_tokens for u in usages)
    reason = None
    # A summary holds the error's message and the limit's type as text; a whole sample
    # holds the records (EvalError, EvalSampleLimit).
    if sample.error is not None:
        reason = f"error: {getattr(sample.error, 'message', sample.error)}"
    elif sample.limit is not None:
        limit = sample.limit
        what = limit if isinstance(limit, str) else f"{limit.type} ({limit.limit})"
        reason = f"{what} limit reached"
    elif primary not in scores:
        reason = f"no {primary!r} score recorded"
    if reason is not None:
        outcome = "infra"
    else:
        outcome = "passed" if scores[primary] >= pass_at else "failed"
    primary_score = (sample.scores or {}).get(primary)
    extra: dict[str, JsonValue] = {}
    if primary_score is not None and primary_score.answer is not None:
        extra["answer"] = primary_score.answer
    return SampleRecord(
        arm=arm,
        sample_id=str(sample.id),
        epoch=sample.epoch,
        outcome=outcome,
        scores=scores,
        reason=reason,
        labels={str(k): str(v) for k, v in (sample.metadata or {}).items()},
        input_hash=sha256_text(
            sample.input if isinstance(sample.input, str) else _messages(sample.input)
        ),
        target_hash=sha256_text(sample.target),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        total_tokens=total,
        seconds=sample.working_time if sample.working_time is not None else sample.total_time,
        extra=extra,
    )


def _messages(messages: Any) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude={"id"}) for m in messages]
