"""``import_logs``: the library call behind ``pairbench import``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pairbench import _registry
from pairbench._errors import ImportRefused
from pairbench.importers._base import Importer
from pairbench.importers._record import ImportedLog, ImportRecord
from pairbench.importers._write import Source, check, now, plan_arms, safe_id, write_run


def vouch(record: ImportRecord) -> list[str]:
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
    if record.analysis_frozen_at is None:
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


def import_logs(
    importer_name: str,
    files: Sequence[Path],
    runs_dir: Path,
    *,
    options: Mapping[str, Any] | None = None,
    arm_names: Sequence[str] = (),
    allow_different_inputs: bool = False,
) -> Path:
    """Import ``files`` (another harness's output) as a new run under ``runs_dir``.

    **Usage**::

        run = import_logs("inspect", [Path("a.eval"), Path("b.eval")], Path("runs"))
        # then: pairbench report run

    Raises ``ImportRefused`` naming the file and the fix; nothing under ``runs_dir`` is
    touched then.
    """
    importer: Importer[Any] = _registry.load("importers", importer_name)()
    settings = importer.settings(dict(options or {}))
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise ImportRefused(f"{missing[0]}: no such file. Fix: pass the harness's output file")
    facts = [importer.scan(f, settings) for f in files]
    arms = plan_arms(facts, arm_names)
    sources = [Source(f, fa, a) for f, fa, a in zip(files, facts, arms, strict=True)]
    pairing, common, min_epoch = check(importer, sources, settings, allow_different_inputs)
    record = ImportRecord(
        importer=importer_name,
        logs=[
            ImportedLog(facts=s.facts, absolute_path=str(s.path.resolve()), arms=s.arms)
            for s in sources
        ],
        pairing=pairing,
        allowed_different_inputs=allow_different_inputs,
        primary_metric=facts[0].primary_metric,
        imported_at=now(),
    )
    record = record.model_copy(update={"vouch": vouch(record)})
    task = facts[0].task or importer_name
    run_arms = [a for s in sources for a in s.arms.values()]
    comparisons = [[run_arms[0], b] for b in run_arms[1:]]
    experiment_id = safe_id(f"import-{task}")[:40].strip("-.")
    model = {"id": experiment_id, "version": "1", "arms": run_arms, "comparisons": comparisons}
    return write_run(
        importer,
        sources,
        settings,
        record,
        common,
        min_epoch,
        runs_dir,
        experiment_id,
        comparisons,
        model,
    )
