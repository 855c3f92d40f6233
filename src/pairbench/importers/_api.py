"""``import_logs``: the library call behind ``pairbench import``."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pairbench import _registry
from pairbench._collector import paced_collection
from pairbench._errors import ImportRefused
from pairbench.importers._analysis import FrozenAnalysis, arm_for, frozen, record_import
from pairbench.importers._base import Importer
from pairbench.importers._record import ImportedLog, ImportRecord
from pairbench.importers._scores import score_deltas
from pairbench.importers._spool import Spool
from pairbench.importers._write import Source, check, now, plan_arms, safe_id, write_run
from pairbench.store._run_dir import new_run_id


def vouch(record: ImportRecord, fa: FrozenAnalysis | None = None) -> list[str]:
    """What pairbench can and cannot vouch for in an imported run, one sentence each."""
    logs = record.logs
    harnesses = sorted(
        {
            f"{log.facts.harness} {log.facts.harness_version or '(version not recorded)'}"
            for log in logs
        }
    )
    measured = sorted({m for log in logs for m in log.facts.measured})
    absent = [m for m in ("tokens", "time", "cost") if m not in measured]
    out = [
        f"The trials were run by another harness ({', '.join(harnesses)}), not by pairbench: "
        "pairbench read their logs and checks the pairing, but cannot show that the arms got "
        "paired seeds, nor a lock of what ran.",
        f"Measured in the logs: {', '.join(measured) or 'nothing'}; absent: "
        f"{', '.join(absent) or 'nothing'}.",
    ]
    for log in logs:
        f = log.facts
        created = f.created_at.isoformat() if f.created_at else "at an unrecorded time"
        settings = ", ".join(f"{k}={v}" for k, v in sorted(f.generation.items())) or "defaults"
        out.append(
            f"{f.path} (sha256 {f.sha256}): arm {', '.join(log.arms.values())}, model "
            f"{f.model or 'not recorded'}, generation settings {settings}, task {f.task} "
            f"version {f.task_version}, created {created}."
        )
    if fa is not None:
        out.append(
            f"The analysis ({fa.file}, version {fa.analysis.version}, lock sha256 "
            f"{fa.lock_sha256}) was frozen at {fa.frozen_at.isoformat()}, before this import."
        )
        for log in record.logs:
            when = log.created_vs_freeze
            line = (
                f"{log.facts.path} was created {when} the analysis was frozen (by its own "
                "header's timestamp)"
                if when in ("before", "after")
                else f"{log.facts.path} records no creation time"
            )
            if not log.named_in_advance:
                line += "; it was NOT named in advance (matched by its model or arm name)"
            first = fa.first_hashes.get(log.absolute_path)
            if first is not None and first != log.facts.sha256:
                line += (
                    f"; its bytes CHANGED since its first import under this analysis (sha256 "
                    f"{first} then)"
                )
            out.append(line + ".")
    else:
        out.append(
            "No analysis was frozen before these logs existed (no --experiment): the comparison "
            "of every arm with the first was declared at import, so its p value is not "
            "pre-registered."
        )
    p = record.pairing
    if record.allowed_different_inputs and p.differences:
        out.insert(
            0,
            "THE ARMS DID NOT SEE THE SAME INPUTS (--allow-different-inputs): "
            + "; ".join(p.differences)
            + ".",
        )
    if p.unpaired:
        out.append(
            "Excluded as unpaired: "
            + "; ".join(
                f"{u.count} samples only in {u.arm} (e.g. {', '.join(u.examples[:3])})"
                for u in p.unpaired
            )
            + "."
        )
    if p.a_a:
        out.append(
            "Every log records the same model: this is an A/A check of the harness's noise, "
            "and a difference is expected to be absent."
        )
    return out


@paced_collection()  # an import makes an object per sample and keeps many: see _collector
def import_logs(
    importer_name: str,
    files: Sequence[Path],
    runs_dir: Path,
    *,
    options: Mapping[str, Any] | None = None,
    arm_names: Sequence[str] = (),
    allow_different_inputs: bool = False,
    experiment: Path | None = None,
) -> Path:
    """Import ``files`` (another harness's output) as a new run under ``runs_dir``.

    With ``experiment`` (an analysis frozen by ``freeze_analysis``), its arms, metric,
    comparisons and primary test are used, and its ledger records the import.

    **Usage**::

        run = import_logs("inspect", [Path("a.eval"), Path("b.eval")], Path("runs"))
        # then: pairbench report run

    Raises ``ImportRefused`` naming the file and the fix; nothing under ``runs_dir`` is
    touched then.
    """
    importer: Importer[Any] = _registry.load("importers", importer_name)()
    fa = frozen(experiment) if experiment is not None else None
    raw = dict(options or {})
    if fa is not None:
        raw = _fixed_options(importer, importer_name, fa, raw)
    settings = importer.settings(raw)
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise ImportRefused(f"{missing[0]}: no such file. Fix: pass the harness's output file")
    facts = [importer.scan(f, settings) for f in files]
    advance: dict[str, bool] = {}
    if fa is None:
        arms = plan_arms(facts, arm_names)
    else:
        arms = []
        for f, fact in zip(files, facts, strict=True):
            mapping = {}
            for recorded in fact.arms:
                arm, named = arm_for(fa, f, recorded, fact.model)
                mapping[recorded] = arm
                advance[str(f)] = advance.get(str(f), True) and named
            arms.append(mapping)
        ids = [a for m in arms for a in m.values()]
        if len(set(ids)) != len(ids) or len(ids) < 2:
            raise ImportRefused(
                f"the files give arms {', '.join(ids)}: each declared arm once, two at least. "
                f"Fix: one log per arm of {experiment}"
            )
    sources = [Source(f, fa_, a) for f, fa_, a in zip(files, facts, arms, strict=True)]
    # The first pass's records are spooled, so each log is parsed once (see _spool).
    with tempfile.TemporaryDirectory(prefix="pairbench-import-") as folder:
        spool = Spool(Path(folder))
        pairing, common, min_epoch, index = check(
            importer, sources, settings, allow_different_inputs, spool
        )
        logs = [
            ImportedLog(
                facts=s.facts,
                absolute_path=str(s.path.resolve()),
                arms=s.arms,
                created_vs_freeze=_when(s.facts.created_at, fa.frozen_at) if fa else None,
                named_in_advance=advance.get(str(s.path)) if fa else None,
            )
            for s in sources
        ]
        record = ImportRecord(
            importer=importer_name,
            logs=logs,
            pairing=pairing,
            allowed_different_inputs=allow_different_inputs,
            primary_metric=facts[0].primary_metric,
            analysis_file=str(experiment) if experiment else None,
            analysis_frozen_at=fa.frozen_at if fa else None,
            analysis_sha256=fa.lock_sha256 if fa else None,
            imported_at=now(),
        )
        record = record.model_copy(update={"vouch": vouch(record, fa)})
        run_arms = [a for s in sources for a in s.arms.values()]
        if fa is not None:
            order = list(fa.analysis.arms)
            run_arms.sort(key=order.index)
            comparisons = [list(c) for c in fa.analysis.comparisons] or [
                [run_arms[0], b] for b in run_arms[1:]
            ]
            experiment_id, version = fa.analysis.id, fa.analysis.version
            primary = [p.model_dump(mode="json") for p in fa.analysis.primary]
        else:
            comparisons = [[run_arms[0], b] for b in run_arms[1:]]
            task = facts[0].task or importer_name
            experiment_id, version = safe_id(f"import-{task}")[:40].strip("-."), "1"
            primary = []
        model: dict[str, Any] = {
            "id": experiment_id,
            "version": version,
            "arms": run_arms,
            "comparisons": comparisons,
        }
        if primary:
            model["primary"] = primary
        deltas = score_deltas(index, common, comparisons, facts[0].primary_metric)
        record = record.model_copy(update={"score_deltas": deltas})
        if experiment is not None:
            model["file"] = str(experiment)
        run_id = new_run_id(experiment_id)
        run = write_run(
            importer,
            sources,
            spool,
            record,
            common,
            min_epoch,
            runs_dir,
            run_id,
            experiment_id,
            comparisons,
            model,
        )
        if fa is not None and experiment is not None:
            record_import(
                experiment, fa, run_id, {log.absolute_path: log.facts.sha256 for log in logs}
            )
        return run


def _fixed_options(
    importer: Importer[Any], name: str, fa: FrozenAnalysis, raw: dict[str, Any]
) -> dict[str, Any]:
    """The importer's options with what the frozen analysis fixed; a clash is refused."""
    if fa.analysis.importer != name:
        raise ImportRefused(
            f"{fa.file}: registered for the {fa.analysis.importer!r} importer, not {name!r}. "
            f"Fix: pairbench import {fa.analysis.importer} ..."
        )
    fixed: dict[str, Any] = dict(fa.analysis.options)
    if fa.analysis.metric is not None:
        if importer.metric_option is None:
            raise ImportRefused(f"{fa.file}: metric: the {name!r} importer has no metric choice")
        fixed[importer.metric_option] = fa.analysis.metric
    clash = [k for k, v in raw.items() if k in fixed and str(fixed[k]) != str(v)]
    if clash:
        raise ImportRefused(
            f"--option {clash[0]}={raw[clash[0]]} contradicts {fa.file}, which fixed "
            f"{clash[0]}={fixed[clash[0]]} before the data. Fix: leave the option out"
        )
    return {**raw, **fixed}


def _when(created: datetime | None, frozen_at: datetime) -> str:
    if created is None:
        return "unknown"
    return "before" if created < frozen_at else "after"
