"""What changed since a run started: a resume is refused naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pairbench._errors import ResumeRefused
from pairbench.runner._context import stored_experiment
from pairbench.runner._model_proxy import require_preflight
from pairbench.runner._protected import check_protected_unchanged
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_record import RunRecord


def changed_fields(before: Any, after: Any, path: str = "", limit: int = 5) -> list[str]:
    """``field: X then, Y now`` for each field that differs (at most ``limit``), dotted paths.

    >>> changed_fields({"arms": {"b": {"commit": "1a"}}}, {"arms": {"b": {"commit": "2b"}}})
    ["arms.b.commit: '1a' then, '2b' now"]
    """
    out: list[str] = []
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(k for k in after if k not in before)]:
            where = f"{path}.{key}" if path else str(key)
            out += changed_fields(before.get(key), after.get(key), where, limit - len(out))
            if len(out) >= limit:
                break
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            out += changed_fields(b, a, f"{path}[{i}]", limit - len(out))
            if len(out) >= limit:
                break
    elif before != after:
        out.append(f"{path or 'the experiment'}: {before!r} then, {after!r} now")
    return out[:limit]


def check_resumable(
    info: RunRecord, loaded: LoadedExperiment, exp_file: Path, run_dir: Path
) -> None:
    """Refuse a resume when anything the run stands on changed since it started: the
    experiment (naming the fields, e.g. an arm's commit), a protected folder's bytes; or
    when the proxied model server fails its preflight. Nothing is touched before.

    Raises:
        ResumeRefused: the experiment or a protected folder changed.
        RunRefused: the model server failed its preflight.
    """
    if loaded.canonical_hash != info.canonical_hash:
        changed = changed_fields(info.experiment_model, stored_experiment(loaded.experiment))
        what = "; ".join(changed) if changed else "a file it names"
        raise ResumeRefused(
            f"refusing to resume {run_dir.name}: {exp_file} changed since the run started "
            f"({what}; canonical hash {info.canonical_hash} then, {loaded.canonical_hash} now). "
            "Restore the original experiment, or start a new run."
        )
    ident = info.identities.model_dump() if info.identities is not None else {}
    was = ident.get("protected")
    recorded = was if isinstance(was, dict) else {}
    check_protected_unchanged(recorded, loaded.experiment.protected, exp_file, run_dir)
    require_preflight(loaded.experiment.proxy)
