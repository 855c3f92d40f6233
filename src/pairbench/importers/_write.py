"""Writing an import as a pairbench run folder: run.json, result files, a chained journal.

Everything that can be refused is checked before the folder exists (headers, the pairing pass),
so a refused import leaves the runs folder untouched. The second pass streams the samples again
and writes each paired one as a trial (task = sample, trial = epoch), committing journal lines in
chunks, so a log of any size is written in bounded memory.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pairbench._errors import ImportRefused
from pairbench.importers._base import Importer, ImportSettings, LogFacts, SampleRecord
from pairbench.importers._pairing import KeyIndex, Pairing, header_differences
from pairbench.importers._record import ImportRecord
from pairbench.importers._spool import Spool
from pairbench.schedule._plan import Pair, Schedule, TrialKey
from pairbench.store._events import AttemptFinished, RunEnded, RunStarted
from pairbench.store._records import Grade, Metric, Metrics, TrialResult
from pairbench.store._row import trial_row
from pairbench.store._run_dir import RunDir
from pairbench.store._run_info import ExecutorRef, ExperimentRef, Policies, RunInfo, TaskRef

_CHUNK = 2000
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def safe_id(name: str) -> str:
    """``name`` as a safe path id; a short hash keeps two names that fold together apart."""
    folded = _UNSAFE.sub("-", name.lower()).strip("-.") or "x"
    if folded == name and len(name) <= 64 and ".." not in name:
        return name
    return f"{folded[:55]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class Source:
    """One file with its facts and its arms (file arm name to run arm id)."""

    path: Path
    facts: LogFacts
    arms: dict[str, str]


def plan_arms(facts: Sequence[LogFacts], names: Sequence[str]) -> list[dict[str, str]]:
    """Per file, its arms' run ids: ``names`` in order when given, else the recorded names
    (a name two files share gets each file's stem, so an A/A pair stays two arms)."""
    total = sum(len(f.arms) for f in facts)
    if names and len(names) != total:
        raise ImportRefused(
            f"--arm was given {len(names)} times but the files hold {total} arms. Fix: one --arm"
            " per file (per arm, in order) or none"
        )
    given = iter(names)
    counts: dict[str, int] = {}
    for f in facts:
        for arm in f.arms:
            counts[arm] = counts.get(arm, 0) + 1
    out = []
    for f in facts:
        mapping = {}
        for arm in f.arms:
            if names:
                mapping[arm] = safe_id(next(given))
            elif counts[arm] > 1:
                mapping[arm] = safe_id(f"{arm}-{Path(f.path).stem}")
            else:
                mapping[arm] = safe_id(arm)
        out.append(mapping)
    ids = [a for m in out for a in m.values()]
    if len(set(ids)) != len(ids):
        raise ImportRefused(f"two arms would share one name ({', '.join(ids)}). Fix: --arm NAME")
    if len(ids) < 2:
        only = facts[0].path if facts else "(no file)"
        raise ImportRefused(
            f"{only}: holds one arm only, and a paired comparison needs two. Fix: pass a file "
            "per arm, or name the column that says which arm a row belongs to (--option "
            "arm=COLUMN)"
        )
    return out


def check(
    importer: Importer[Any],
    sources: Sequence[Source],
    settings: ImportSettings,
    allow_different_inputs: bool,
    spool: Spool,
) -> tuple[Pairing, set[tuple[str, str, int]], int, KeyIndex]:
    """The first pass: every key per arm; refuses unpaired or different inputs as asked."""
    arms = [a for s in sources for a in s.arms.values()]
    index = KeyIndex(arms)
    for number, s in enumerate(sources):
        index.add(
            s.facts.path,
            spool.tee(number, importer.samples(s.path, s.facts, settings)),
            s.arms,
            s.facts.primary_metric,
        )
    # An A/A pair: the same model, generation settings and task arguments in every arm. Arms
    # one file tells apart (promptfoo's providers or prompts, a table's arm column) differ by
    # what the file records of them, so they never count as the same model here.
    models = [
        f"{s.facts.model}|{sorted(s.facts.generation.items())}|{s.facts.notes}"
        + (f"|{arm}" if len(s.arms) > 1 else "")
        if s.facts.model
        else None
        for s in sources
        for arm in s.arms
    ]
    pairing, common = index.pairing(models)
    differences = header_differences([s.facts for s in sources]) + pairing.differences
    pairing = pairing.model_copy(update={"differences": differences})
    if not common:
        raise ImportRefused(
            "no sample is in every arm ("
            + "; ".join(
                f"{u.arm}: {u.count} samples, e.g. {', '.join(u.examples[:3])}"
                for u in pairing.unpaired
            )
            + "). Fix: import logs of the same task and samples"
        )
    if differences and not allow_different_inputs:
        raise ImportRefused(
            "the logs are not of the same task and inputs: "
            + "; ".join(differences)
            + ". Fix: import logs of one task version run on the same samples, or pass "
            "--allow-different-inputs (the report then leads with the difference)"
        )
    return pairing, common, index.min_epoch or 0, index


def write_run(
    importer: Importer[Any],
    sources: Sequence[Source],
    spool: Spool,
    record: ImportRecord,
    common: set[tuple[str, str, int]],
    min_epoch: int,
    runs_dir: Path,
    run_id: str,
    experiment_id: str,
    comparisons: list[list[str]],
    experiment_model: dict[str, Any],
) -> Path:
    """The second pass: the run folder, from the samples every arm has."""
    arms = [a for s in sources for a in s.arms.values()]
    tasks: dict[tuple[str, str], str] = {}
    for task, sample, _ in sorted(common):
        tasks.setdefault((task, sample), safe_id(f"{task}-{sample}" if task else sample))
    trials = sorted({(tasks[(t, s)], e - min_epoch) for t, s, e in common})
    pairs = [
        Pair(index=i, task=task, trial=trial, seed=0, model_seed=0, order=list(arms))
        for i, (task, trial) in enumerate(trials)
    ]
    info = RunInfo(
        run_id=run_id,
        experiment=ExperimentRef(
            id=experiment_id,
            version=str(experiment_model.get("version", "1")),
            description=f"trials imported from {importer.name} logs",
        ),
        experiment_file=str(experiment_model.get("file", "")),
        canonical_hash=record.analysis_sha256 or "",
        experiment_model=experiment_model,
        arms=arms,
        comparisons=comparisons,
        tasks=[
            TaskRef(id=tid, labels={"sample_id": sample, **({"task": task} if task else {})})
            for (task, sample), tid in tasks.items()
        ],
        agents={a: {"adapter": f"imported:{importer.name}"} for a in arms},
        agent_simulated=False,
        run_seed=0,
        order_policy="imported (run by another harness; order unknown)",
        concurrency=1,
        schedule=Schedule(
            experiment=experiment_id, run_seed=0, order_policy="imported", pairs=pairs
        ),
        planned_trials=len(pairs) * len(arms),
        policies=Policies(budget={}, infra={}),
        canary_env="",
        identities={"arms": {a: {"imported": True} for a in arms}},
        started_at=record.imported_at.isoformat(),
        executor=ExecutorRef(name="imported"),
        lock_sha256="",
        lock_verified=False,
        imported=record.model_dump(mode="json"),
    )
    with RunDir.create_locked(
        runs_dir, run_id, {"run.json": info.encode()}, command=f"pairbench import {importer.name}"
    ) as run_dir:
        journal = run_dir.journal()
        journal.append(RunStarted(run_id=run_id, planned=info.planned_trials, command="import"))
        lines: list[bytes] = []
        made: set[Path] = set()
        position = {a: i for i, a in enumerate(arms)}
        for number, s in enumerate(sources):
            for record_ in spool.read(number):
                key = (record_.task or "", record_.sample_id, record_.epoch)
                if key not in common:
                    continue
                arm = s.arms[record_.arm]
                tid = tasks[(key[0], key[1])]
                result = _result(
                    run_id, experiment_id, arm, tid, record_, min_epoch, position[arm], s.facts
                )
                trial_key = TrialKey(arm=arm, task=tid, trial=result.trial)
                put = run_dir.stage_result(trial_key, result)
                if put.path.parent not in made:  # one mkdir per folder, not per trial
                    put.path.parent.mkdir(parents=True, exist_ok=True)
                    made.add(put.path.parent)
                with open(put.path, "xb") as fh:
                    fh.write(put.data)
                event = AttemptFinished(
                    key=trial_key.label,
                    attempt=1,
                    outcome=result.outcome,
                    result=str(put.path.relative_to(run_dir.path)),
                    result_sha256=put.sha256,
                    row=trial_row(result, kept=False),
                )
                lines.append(journal.encode(event))
                if len(lines) >= _CHUNK:
                    journal.write_lines(lines)
                    lines = []
        if lines:
            journal.write_lines(lines)
        journal.append(RunEnded(status="complete"))
        journal.close()
        os.sync()  # the result files, in one call rather than one fsync each
        return run_dir.path


def _metric(value: float | None, source: str, scale: float = 1.0) -> Metric:
    if value is None:
        return Metric.missing(f"not recorded in the {source} log")
    return Metric.measured(value * scale, f"{source} log")


def _result(
    run_id: str,
    experiment: str,
    arm: str,
    task: str,
    s: SampleRecord,
    min_epoch: int,
    order: int,
    facts: LogFacts,
) -> TrialResult:
    harness = facts.harness
    primary = s.scores.get(facts.primary_metric)
    details: dict[str, Any] = {"scores": s.scores, "sample_id": s.sample_id, "epoch": s.epoch}
    # Each 0/1 score as a scored field: the report's per-field table shows every scorer's
    # accuracy per arm, not only the primary one's.
    fields = [{"name": n, "correct": v == 1.0} for n, v in s.scores.items() if v in (0.0, 1.0)]
    if fields:
        details["fields"] = fields
    if s.cluster is not None:
        details["cluster"] = s.cluster
    grade = None
    if s.outcome != "infra":
        grade = Grade(
            outcome=s.outcome, reason=f"{facts.primary_metric} = {primary}", details=details
        )
    labels: dict[str, str | int] = {k: v for k, v in s.labels.items()}
    if s.cluster is not None:
        labels["cluster"] = s.cluster
    answer = s.extra.get("answer")
    return TrialResult(
        run_id=run_id,
        experiment=experiment,
        arm=arm,
        task=task,
        trial=s.epoch - min_epoch,
        labels=labels,
        seed=0,
        model_seed=0,
        attempt=1,
        start_order=order,
        outcome=s.outcome,
        reason=s.reason or (grade.reason if grade else ""),
        agent=f"imported:{harness}",
        grade=grade,
        metrics=Metrics(
            wall_ms=Metric.missing("not timed by pairbench: the trial ran in another harness"),
            agent_ms=_metric(s.seconds, harness, 1000.0),
            cold_start_ms=Metric.missing("not recorded by the harness"),
            turns=Metric.missing("not recorded by the harness"),
            input_tokens=_metric(s.input_tokens, harness),
            output_tokens=_metric(s.output_tokens, harness),
            total_tokens=_metric(s.total_tokens, harness),
            cost_usd=_metric(s.cost_usd, harness),
        ),
        final_answer=str(answer) if answer is not None else None,
        models_seen=[facts.model] if facts.model else [],
    )


def now() -> datetime:
    return datetime.now(UTC)
