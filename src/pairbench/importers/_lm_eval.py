"""lm-evaluation-harness ``--log_samples`` output: a results JSON and its samples files.

``lm_eval ... --log_samples --output_path OUT`` writes, per model, ``results_<time>.json`` and
beside it one ``samples_<task>_<time>.jsonl`` per task, one line per (document, filter) with
the task's metrics (``acc``, ``exact_match``, ...) and ``doc_hash``/``prompt_hash``/
``target_hash``. The importer is given the results JSON (one arm per file: its model); the
header comes from it, and the samples stream line by line from the files beside it, so the
samples are never held in memory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import JsonValue

from pairbench._errors import ImportRefused
from pairbench.importers._base import (
    Importer,
    ImportSettings,
    LogFacts,
    SampleRecord,
    iter_jsonl,
    sha256_of,
    sha256_text,
)

_HARNESS = "lm-evaluation-harness"
_PREFERRED = ("acc", "exact_match")
_RESULTS = re.compile(r"^results_(?P<stamp>.+)\.json$")


class LmEvalSettings(ImportSettings):
    """``--option`` keys of ``pairbench import lm-eval``."""

    metric: str | None = None
    """The metric that decides pass/fail (default: ``acc``, else ``exact_match``, else the one
    metric every task records)."""
    filter: str | None = None
    """The filter whose scores count (``none``, ``strict-match``, ...); needed only when a task
    records several."""
    tasks: str | None = None
    """Comma-separated tasks to import (default: every task in the results JSON)."""
    pass_at: float = 1.0
    """A document passes when its metric is at least this (1.0 for ``acc``/``exact_match``)."""
    inputs: Literal["doc", "prompt"] = "doc"
    """What must match across arms: the document and target (``doc``: two prompts or chat
    templates are a fair comparison), or also the rendered prompt (``prompt``: its few-shot
    examples, template and chat formatting)."""
    cluster: str | None = None
    """A field of each document that groups documents (``subject``, ...) for clustered intervals."""


def _read_results(path: Path) -> dict[str, Any]:
    if path.name.startswith("samples_") and path.suffix == ".jsonl":
        stamp = path.stem.rpartition("_")[2]
        raise ImportRefused(
            f"{path}: this is a samples file: pass the results_{stamp}.json beside it (its "
            "header: model, tasks, versions, headline numbers; every task's samples file is "
            "found from it)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ImportRefused(
            f"{path}: not a readable lm-eval results JSON (not JSON; the file may be truncated). "
            "Fix: pass the results_<time>.json that lm_eval --output_path wrote, whole"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("configs"), dict):
        raise ImportRefused(
            f"{path}: not an lm-eval results JSON (no 'configs'). Fix: pass the "
            "results_<time>.json that lm_eval --log_samples --output_path wrote"
        )
    return data


def _metrics(results: dict[str, Any], task: str) -> dict[str, set[str]]:
    """The task's metric names, each with the filters it was recorded under."""
    out: dict[str, set[str]] = {}
    for key in results.get("results", {}).get(task, {}):
        metric, sep, filt = str(key).rpartition(",")
        if sep and not metric.endswith("_stderr"):
            out.setdefault(metric, set()).add(filt)
    return out


def samples_file(path: Path, task: str) -> Path:
    """The samples file of ``task`` beside the results JSON ``path``."""
    match = _RESULTS.match(path.name)
    if match:
        found = path.with_name(f"samples_{task}_{match['stamp']}.jsonl")
        if found.is_file():
            return found
    else:  # a renamed results file: the task's one samples file beside it
        candidates = sorted(path.parent.glob(f"samples_{task}_*.jsonl"))
        if len(candidates) == 1:
            return candidates[0]
    raise ImportRefused(
        f"{path}: no samples_{task}_<time>.jsonl beside it (lm-eval writes one per task with "
        "--log_samples). Fix: run lm_eval with --log_samples and keep the samples files in the "
        "folder of their results JSON"
    )


class LmEvalImporter(Importer[LmEvalSettings]):
    """lm-evaluation-harness results JSON with ``--log_samples``: one arm per file (its model)."""

    name = "lm-eval"
    description = "lm-evaluation-harness results_<time>.json with samples_<task>_*.jsonl beside it"
    metric_option = "metric"
    settings_model = LmEvalSettings

    def scan(self, path: Path, settings: LmEvalSettings) -> LogFacts:
        data = _read_results(path)
        configs: dict[str, Any] = data["configs"]
        tasks, metric, filters = _plan(path, data, settings)
        # The samples files are the log as much as the results JSON: verify re-hashes them.
        files = [samples_file(path, task) for task in tasks]
        companions = {str(f.resolve()): sha256_of(f) for f in files}
        config = data.get("config") or {}
        model_args = config.get("model_args")
        model_name = data.get("model_name") or (
            model_args.get("model") or model_args.get("pretrained")
            if isinstance(model_args, dict)
            else None
        )
        source = data.get("model_source") or config.get("model")
        model = f"{source}/{model_name}" if source and model_name else model_name or source
        results = data.get("results", {})
        effective = {t: (data.get("n-samples", {}).get(t) or {}).get("effective") for t in tasks}
        date = data.get("date")
        return LogFacts(
            harness=_HARNESS,
            harness_version=data.get("lm_eval_version"),
            path=str(path),
            sha256=sha256_of(path),
            arms=(str(model_name or path.parent.name),),
            model=str(model) if model else None,
            generation=_generation(data, tasks),
            created_at=(
                datetime.fromtimestamp(float(date), UTC) if isinstance(date, int | float) else None
            ),
            task=",".join(tasks),
            task_version=",".join(f"{t}={data.get('versions', {}).get(t)}" for t in tasks),
            dataset=",".join(
                f"{t}={configs[t].get('dataset_path')}"
                + (f"/{configs[t]['dataset_name']}" if configs[t].get("dataset_name") else "")
                for t in tasks
            ),
            primary_metric=metric,
            companions=companions,
            measured=(),
            headline={
                f"{t}:{metric}": float(results[t][f"{metric},{filters[t]}"])
                for t in tasks
                if isinstance(results.get(t, {}).get(f"{metric},{filters[t]}"), int | float)
            },
            sample_count=(
                sum(int(v) for v in effective.values() if isinstance(v, int))
                if all(isinstance(v, int) for v in effective.values())
                else None
            ),
            notes=(
                "filters "
                + ", ".join(f"{t}: {f}" for t, f in filters.items())
                + "; documents paired by doc_hash and target_hash"
                + (" and prompt_hash" if settings.inputs == "prompt" else ""),
            ),
        )

    def samples(
        self, path: Path, facts: LogFacts, settings: LmEvalSettings
    ) -> Iterator[SampleRecord]:
        data = _read_results(path)
        tasks, metric, filters = _plan(path, data, settings)
        for task in tasks:
            filt = filters[task]
            file = samples_file(path, task)
            expected = (data.get("n-samples", {}).get(task) or {}).get("effective")
            seen: set[int] = set()
            for number, row in enumerate(iter_jsonl(file), 1):
                if row.get("filter", "none") != filt:
                    continue
                record = _record(file, number, row, task, facts.arms[0], metric, settings)
                seen.add(int(row["doc_id"]))
                yield record
            if isinstance(expected, int) and len(seen) != expected:
                raise ImportRefused(
                    f"{file}: {len(seen)} documents with filter {filt!r}, but {path} says "
                    f"{expected} were evaluated: the samples file is truncated or from another "
                    "run. Fix: pass the results JSON and samples files of one lm_eval run, whole"
                )


class _Plan(NamedTuple):
    tasks: list[str]
    metric: str
    filters: dict[str, str]
    """Per task, the filter whose scores count."""


def _plan(path: Path, data: dict[str, Any], settings: LmEvalSettings) -> _Plan:
    """Which tasks, metric and filter to import: from the settings, else the file's only
    choice; an ambiguous or missing one is refused naming the option that settles it."""
    configs: dict[str, Any] = data["configs"]
    tasks = sorted(configs)
    if settings.tasks:
        wanted = [t.strip() for t in settings.tasks.split(",") if t.strip()]
        missing = [t for t in wanted if t not in configs]
        if missing:
            raise ImportRefused(
                f"{path}: has no task {', '.join(missing)} (it has {', '.join(tasks)}). Fix: "
                "--option tasks= with tasks it holds"
            )
        tasks = sorted(wanted)
    if not tasks:
        raise ImportRefused(f"{path}: records no task. Fix: pass a results JSON of a run")
    per_task = {t: _metrics(data, t) for t in tasks}
    metric = settings.metric or _default_metric(path, per_task)
    for task, metrics in per_task.items():
        if metric not in metrics:
            raise ImportRefused(
                f"{path}: task {task} records no metric {metric!r} (it records "
                f"{', '.join(sorted(metrics)) or 'none'}). Fix: --option metric=NAME, or "
                "--option tasks= without it"
            )
    filters = {t: _filter(path, t, per_task[t][metric], metric, settings) for t in tasks}
    return _Plan(tasks, metric, filters)


def _default_metric(path: Path, per_task: dict[str, dict[str, set[str]]]) -> str:
    shared = set.intersection(*(set(m) for m in per_task.values()))
    for name in _PREFERRED:
        if name in shared:
            return name
    if len(shared) == 1:
        return shared.pop()
    listed = "; ".join(f"{t}: {', '.join(sorted(m))}" for t, m in per_task.items())
    raise ImportRefused(
        f"{path}: no single metric decides pass/fail ({listed}). Fix: --option metric=NAME "
        "(one every imported task records; --option tasks= to import some tasks only)"
    )


def _filter(path: Path, task: str, found: set[str], metric: str, settings: LmEvalSettings) -> str:
    """The task's filter: its only one, else the one ``--option filter=`` names (a task with
    one filter keeps it, so tasks with and without filters import together)."""
    if len(found) == 1:
        return next(iter(found))
    if settings.filter in found:
        return settings.filter
    asked = f"has no filter {settings.filter!r}" if settings.filter else "records"
    raise ImportRefused(
        f"{path}: task {task} {asked} {metric} under several filters "
        f"({', '.join(sorted(found))}). Fix: --option filter=NAME (the one your analysis counts)"
    )


def _generation(data: dict[str, Any], tasks: list[str]) -> dict[str, JsonValue]:
    """What the results JSON records of how answers were generated, per task and overall."""
    config = data.get("config") or {}
    out: dict[str, JsonValue] = {
        f"{t}.generation_kwargs": data["configs"][t].get("generation_kwargs")
        for t in tasks
        if data["configs"][t].get("generation_kwargs")
    }
    out.update({f"{t}.num_fewshot": data.get("n-shot", {}).get(t) for t in tasks})
    for key in ("gen_kwargs", "random_seed", "numpy_seed", "fewshot_seed", "limit"):
        if config.get(key) not in (None, {}, ""):
            out[key] = config[key]
    for key in ("chat_template_sha", "system_instruction_sha", "fewshot_as_multiturn"):
        if data.get(key) is not None:
            out[key] = data[key]
    return out


def _record(
    file: Path,
    number: int,
    row: dict[str, Any],
    task: str,
    arm: str,
    metric: str,
    settings: LmEvalSettings,
) -> SampleRecord:
    try:
        doc_id = int(row["doc_id"])
        doc_hash, target_hash = str(row["doc_hash"]), str(row["target_hash"])
        prompt_hash = str(row["prompt_hash"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ImportRefused(
            f"{file}: line {number} lacks {exc} (doc_id, doc_hash, prompt_hash, target_hash). "
            "Fix: pass the samples file lm_eval --log_samples wrote (lm-eval >= 0.4.3)"
        ) from None
    scores = {
        m: float(row[m]) for m in row.get("metrics") or [] if isinstance(row.get(m), int | float)
    }
    if metric not in scores:
        raise ImportRefused(
            f"{file}: line {number} (doc {doc_id}) has no number for {metric!r}. Fix: --option "
            "metric=NAME naming a per-document metric"
        )
    raw_doc = row.get("doc")
    doc: dict[str, Any] = raw_doc if isinstance(raw_doc, dict) else {}
    cluster = None
    if settings.cluster is not None:
        if settings.cluster not in doc:
            raise ImportRefused(
                f"{file}: line {number}: the document has no field {settings.cluster!r} "
                f"(it has {', '.join(sorted(doc)) or 'none'}). Fix: --option cluster=FIELD"
            )
        cluster = str(doc[settings.cluster])
    answer = row.get("filtered_resps")
    while isinstance(answer, list) and answer:
        answer = answer[0]
    return SampleRecord(
        arm=arm,
        task=task,
        sample_id=str(doc_id),
        epoch=1,
        outcome="passed" if scores[metric] >= settings.pass_at else "failed",
        scores=scores,
        cluster=cluster,
        input_hash=(doc_hash if settings.inputs == "doc" else sha256_text([doc_hash, prompt_hash])),
        target_hash=target_hash,
        extra={
            "answer": str(answer)[:2000] if answer is not None else None,
            "target": str(row.get("target"))[:2000],
        },
    )
