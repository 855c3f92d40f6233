"""promptfoo ``promptfoo eval --output results.json``: one arm per provider or per prompt.

A results file (format version 3 and later) holds ``results.prompts``, one entry per (prompt,
provider) pair with its own pass counts, and ``results.results``, one entry per (test case,
prompt, provider) with the grading result. Each (prompt, provider) pair is an arm, named by
what varies in the file: the provider's label or id when only providers vary, the prompt's
label when only prompts vary, both otherwise (``--option arm=`` chooses). Samples are paired
on the test case: by default the hash of its ``vars`` (so reordered tests still pair), or the
value of one var (``--option id=VAR``). A test case run several times (``--repeat``) gives
epochs 1, 2, ... in the order the file lists them.

promptfoo writes one JSON document, not lines, so the file is parsed whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

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

_HARNESS = "promptfoo"
_ERROR = 2
"""promptfoo's ``ResultFailureReason.ERROR``: the provider or the grader failed (1 is an
assertion that failed, 0 none)."""


class PromptfooSettings(ImportSettings):
    """``--option`` keys of ``pairbench import promptfoo``."""

    arm: Literal["auto", "provider", "prompt", "both"] = "auto"
    """What names an arm: the provider, the prompt, both, or (``auto``) whatever varies."""
    id: str | None = None
    """A var whose value identifies the test case (default: the hash of all its vars)."""
    metric: str = "pass"
    """What decides pass/fail: ``pass`` (the grading result), ``score``, or a named score."""
    pass_at: float = 1.0
    """With a score as the metric: a test case passes when the score is at least this."""
    cluster: str | None = None
    """A var that groups test cases (a topic, a source) for clustered intervals."""


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ImportRefused(
            f"{path}: not readable as JSON (the file may be truncated). Fix: pass the file "
            "`promptfoo eval --output results.json` wrote, whole"
        ) from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise ImportRefused(
            f"{path}: not a promptfoo results file (no results.results list). Fix: pass the "
            "JSON of `promptfoo eval --output results.json` (not .csv, .yaml or .html)"
        )
    version = results.get("version")
    if not isinstance(version, int) or version < 3:
        raise ImportRefused(
            f"{path}: promptfoo results format version {version!r}; pairbench reads version 3 "
            "and later. Fix: re-run the eval with a current promptfoo, or `promptfoo export "
            "EVAL_ID -o results.json` from one"
        )
    if not isinstance(results.get("prompts"), list) or not results["prompts"]:
        raise ImportRefused(f"{path}: results.prompts is empty. Fix: pass a finished eval")
    out: dict[str, Any] = data
    return out


def _provider_name(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("label") or value.get("id") or "provider")
    return str(value)


def _arm_names(path: Path, prompts: list[dict[str, Any]], how: str) -> list[str]:
    providers = [str(p.get("provider")) for p in prompts]
    labels = [str(p.get("label") or p.get("raw") or p.get("id")) for p in prompts]
    if how == "auto":
        vary_provider, vary_prompt = len(set(providers)) > 1, len(set(labels)) > 1
        how = "both" if vary_provider and vary_prompt else "prompt" if vary_prompt else "provider"
    names = {
        "provider": providers,
        "prompt": labels,
        "both": [f"{pr} / {la}" for pr, la in zip(providers, labels, strict=True)],
    }[how]
    if len(set(names)) != len(names):
        raise ImportRefused(
            f"{path}: --option arm={how} gives two arms one name ({', '.join(names)}). Fix: "
            "--option arm=both, or label the prompts and providers apart in the config"
        )
    return names


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class PromptfooImporter(Importer[PromptfooSettings]):
    """promptfoo ``results.json``: one arm per (prompt, provider) pair in the file."""

    name = "promptfoo"
    description = "promptfoo eval --output results.json, one arm per provider or per prompt"
    metric_option = "metric"
    settings_model = PromptfooSettings

    def scan(self, path: Path, settings: PromptfooSettings) -> LogFacts:
        data = _load(path)
        results: dict[str, Any] = data["results"]
        prompts: list[dict[str, Any]] = results["prompts"]
        arms = _arm_names(path, prompts, settings.arm)
        metadata = data.get("metadata") or {}
        config = data.get("config") or {}
        headline: dict[str, float] = {}
        for arm, prompt in zip(arms, prompts, strict=True):
            m = prompt.get("metrics") or {}
            passes, fails = m.get("testPassCount"), m.get("testFailCount")
            if isinstance(passes, int) and isinstance(fails, int) and passes + fails > 0:
                # promptfoo's own pass rate counts errors in; pairbench's leaves them out.
                headline[f"{arm}:pass_rate"] = passes / (passes + fails)
        rows: list[dict[str, Any]] = results["results"]
        measured: list[Measured] = []
        if any(isinstance(r.get("response", {}).get("tokenUsage"), dict) for r in rows):
            measured.append("tokens")
        if any(_number(r.get("latencyMs")) is not None for r in rows):
            measured.append("time")
        if any(_number(r.get("cost")) is not None for r in rows):
            measured.append("cost")
        created = metadata.get("evaluationCreatedAt") or results.get("timestamp")
        providers = sorted({str(p.get("provider")) for p in prompts})
        return LogFacts(
            harness=_HARNESS,
            harness_version=metadata.get("promptfooVersion"),
            path=str(path),
            sha256=sha256_of(path),
            arms=tuple(arms),
            model=", ".join(providers),
            generation=_generation(config),
            created_at=aware(_timestamp(created)),
            task=str(config.get("description") or "") or None,
            primary_metric=settings.metric,
            measured=tuple(measured),
            headline=headline,
            sample_count=len(rows),
            notes=tuple(
                f"arm {arm}: prompt {p.get('label')!r} ({str(p.get('raw'))[:200]!r}) on "
                f"provider {p.get('provider')}"
                for arm, p in zip(arms, prompts, strict=True)
            ),
        )

    def samples(
        self, path: Path, facts: LogFacts, settings: PromptfooSettings
    ) -> Iterator[SampleRecord]:
        data = _load(path)
        seen: dict[tuple[str, str], int] = {}
        for number, row in enumerate(data["results"]["results"], 1):
            index = row.get("promptIdx")
            if not isinstance(index, int) or not 0 <= index < len(facts.arms):
                raise ImportRefused(
                    f"{path}: results[{number - 1}] names prompt index {index!r}, which "
                    "results.prompts lacks. Fix: pass the results file promptfoo wrote, unedited"
                )
            arm = facts.arms[index]
            record = _record(path, number, row, arm, settings)
            key = (arm, record.sample_id)
            seen[key] = seen.get(key, 0) + 1
            yield record.model_copy(update={"epoch": seen[key]})


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _generation(config: dict[str, Any]) -> dict[str, JsonValue]:
    """Each provider's config as the results file records it (temperature, max tokens, ...)."""
    out: dict[str, JsonValue] = {}
    for provider in config.get("providers") or []:
        if isinstance(provider, dict) and provider.get("config"):
            out[_provider_name(provider)] = provider["config"]
    return out


def _record(
    path: Path, number: int, row: dict[str, Any], arm: str, settings: PromptfooSettings
) -> SampleRecord:
    test = row.get("testCase") if isinstance(row.get("testCase"), dict) else {}
    assert isinstance(test, dict)
    variables = row.get("vars") if isinstance(row.get("vars"), dict) else test.get("vars")
    if not isinstance(variables, dict):
        raise ImportRefused(
            f"{path}: results[{number - 1}] has no vars. Fix: pass the results file promptfoo "
            "wrote, unedited"
        )
    vars_hash = sha256_text(variables)
    if settings.id is not None:
        if settings.id not in variables:
            raise ImportRefused(
                f"{path}: results[{number - 1}] has no var {settings.id!r} (it has "
                f"{', '.join(sorted(variables))}). Fix: --option id=VAR naming a var every test "
                "case sets"
            )
        sample_id = str(variables[settings.id])
    else:
        sample_id = vars_hash[:16]
    grading = row.get("gradingResult") if isinstance(row.get("gradingResult"), dict) else None
    response = row.get("response") if isinstance(row.get("response"), dict) else {}
    assert isinstance(response, dict)
    usage = response.get("tokenUsage") if isinstance(response.get("tokenUsage"), dict) else {}
    assert isinstance(usage, dict)
    latency = _number(row.get("latencyMs"))
    common: dict[str, Any] = {
        "arm": arm,
        "sample_id": sample_id,
        "input_hash": vars_hash,
        "target_hash": sha256_text(test.get("assert") or []),
        "cluster": str(variables[settings.cluster]) if settings.cluster in variables else None,
        "labels": {"description": str(test["description"])} if test.get("description") else {},
        "input_tokens": usage.get("prompt") if isinstance(usage.get("prompt"), int) else None,
        "output_tokens": (
            usage.get("completion") if isinstance(usage.get("completion"), int) else None
        ),
        "total_tokens": usage.get("total") if isinstance(usage.get("total"), int) else None,
        "seconds": latency / 1000 if latency is not None else None,
        "cost_usd": _number(row.get("cost")),
        "extra": {"answer": str(response.get("output"))[:2000]}
        if response.get("output") is not None
        else {},
    }
    if settings.cluster is not None and settings.cluster not in variables:
        raise ImportRefused(
            f"{path}: results[{number - 1}] has no var {settings.cluster!r}. Fix: --option "
            "cluster=VAR naming a var every test case sets"
        )
    if row.get("failureReason") == _ERROR or grading is None:
        return SampleRecord(
            outcome="infra",
            reason=str(row.get("error") or "promptfoo recorded an error and no grading result"),
            **common,
        )
    passed = bool(grading.get("pass", row.get("success")))
    scores: dict[str, float] = {"pass": 1.0 if passed else 0.0}
    score = _number(grading.get("score", row.get("score")))
    if score is not None:
        scores["score"] = score
    named = grading.get("namedScores") or row.get("namedScores") or {}
    scores.update({str(k): float(v) for k, v in named.items() if _number(v) is not None})
    if settings.metric not in scores:
        raise ImportRefused(
            f"{path}: results[{number - 1}] has no score {settings.metric!r} (it has "
            f"{', '.join(sorted(scores))}). Fix: --option metric=pass, score or a named score"
        )
    if settings.metric != "pass":
        passed = scores[settings.metric] >= settings.pass_at
    return SampleRecord(outcome="passed" if passed else "failed", scores=scores, **common)
