"""Arms that are git revisions, made ready before the first attempt and checked around each.

For every arm naming a commit of a ``repo`` source: the commit is checked out from a private
bare clone (``$PAIRBENCH_CACHE/sources``; the user's repository is only read) into the run's
``work/_sources/<arm>/tree``, verified byte for byte, given the pinned harness's files, built
(if the source declares a build) into ``work/_sources/<arm>/env``, and frozen read-only. Its
production manifest and build record are stored in ``sources/<arm>/`` of the run.

The agent finds its revision in ``PAIRBENCH_SOURCE`` (the frozen tree),
``PAIRBENCH_SOURCE_ENV`` (the build's folder) and ``PAIRBENCH_SOURCE_COMMIT``. Before and after
every attempt of the arm the tree is re-hashed against its manifest: drift (an edited, added,
removed or re-moded production file) makes the attempt infra, naming the paths; the retry
meets the same drift, so the run stops, as a second infra failure does.

With ``proof: {kind: python, packages: [...]}`` the mounted-byte probe (``pairbench.proof``)
is on the runtime's ``PYTHONPATH`` (before the checkout, which follows it) in every attempt,
with its own log and an empty bytecode prefix; afterwards the verdict is a ``mounted_proof``
transcript event (status, coverage, mounted hash, problems). ``shadowed`` or ``mismatch``
(a copy of the runtime from elsewhere, other bytes, stale bytecode) makes the attempt infra
like drift, so the run stops; ``unavailable`` (no probed process) is recorded, not hidden.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pairbench._atomic import write_atomic
from pairbench.freeze._revisions import revision_arms
from pairbench.spec._load import LoadedExperiment
from pairbench.store._run_dir import RunDir

if TYPE_CHECKING:  # pairbench.source loads only for runs that have revision arms
    from pairbench.proof import MountVerdict, ProbeInstall
    from pairbench.schedule._plan import TrialKey
    from pairbench.source import Worktree
    from pairbench.spec._revision import Proof
    from pairbench.store._records import MountedProof
    from pairbench.store._transcript import Transcript


@dataclass(frozen=True)
class Revision:
    """One arm's revision, ready to run."""

    arm: str
    commit: str
    tree: Path
    """The frozen worktree."""
    env_dir: Path
    """The build's environment folder (empty when the source declares no build)."""
    worktree: Worktree
    """The checkout (its manifest, its cache), for re-hashing and removal."""
    probe: ProbeInstall | None = None
    """The mounted-byte probe (``proof:``), installed once for the arm."""
    proof_spec: Proof | None = None
    """What ``proof:`` declares (its kind's file endings, ``require``)."""
    harness_files: tuple[str, ...] = ()
    """The pinned harness's files written into the tree (re-hashed around every attempt:
    ``_bench_guard``)."""

    def env(self, folder: Path) -> dict[str, str]:
        """What the arm's agent gets in its environment for an attempt whose own files (the
        probe's log, the empty bytecode prefix) go in ``folder``."""
        out = {
            "PAIRBENCH_SOURCE": str(self.tree),
            "PAIRBENCH_SOURCE_ENV": str(self.env_dir),
            "PAIRBENCH_SOURCE_COMMIT": self.commit,
        }
        if self.probe is not None:
            from pairbench.proof import probe_env

            probe = self.probe.model_copy(update={"log_path": str(folder / "mounted.jsonl")})
            pythonpath = [self.tree] if probe.kind == "python" else []
            out |= probe_env(probe, folder / "pycache", pythonpath=pythonpath)
        return out

    def proof(self, folder: Path) -> MountVerdict | None:
        """The mounted-byte verdict of the attempt whose files are in ``folder``."""
        if self.probe is None:
            return None
        from pairbench.proof import read_mounted, verdict

        mounted = read_mounted(folder / "mounted.jsonl")
        sources = self.proof_spec.sources if self.proof_spec is not None else (".py",)
        return verdict(
            mounted, self.worktree.manifest, self.tree, self.probe.packages, sources=sources
        )

    def drift(self) -> list[str]:
        """The production paths that differ from the manifest now (``[]``: none)."""
        from pairbench.source import rehash

        return [str(d) for d in rehash(self.tree, self.worktree.manifest)]


def revision_folder(run_dir: RunDir, key: TrialKey, attempt: int) -> Path:
    """An attempt's own folder for its revision's probe log and bytecode prefix."""
    name = f"{key.task}.{key.trial}.{attempt}"
    return run_dir.path / "work" / "_sources" / key.arm / "attempts" / name


def revision_broken(
    revision: Revision, folder: Path, transcript: Transcript
) -> tuple[str | None, MountedProof | None]:
    """Why what ran was not the arm's frozen revision (drift, or the mounted-byte proof), or
    None; and the proof's verdict for the record. The verdict goes in the transcript too."""
    from pairbench.store._records import MountedProof

    drift = revision.drift()
    if drift:
        return drift_reason(revision, "during", drift), None
    proof = revision.proof(folder)
    if proof is None:
        return None, None
    kept = MountedProof(
        status=proof.status, coverage=proof.coverage, summary=proof.summary,
        mounted_hash=proof.mounted_hash,
    )  # fmt: skip
    return _proof_broken(revision, proof, transcript), kept


def _proof_broken(revision: Revision, proof: MountVerdict, transcript: Transcript) -> str | None:
    transcript.emit(
        "mounted_proof",
        status=proof.status,
        summary=proof.summary,
        coverage=proof.coverage,
        mounted_hash=proof.mounted_hash,
        manifest_sha256=proof.manifest_sha256,
        problems=[p.model_dump(mode="json") for p in proof.problems],
        processes=proof.processes,
    )
    if proof.status in ("shadowed", "mismatch"):
        return (
            f"mounted-byte proof {proof.status}: arm {revision.arm} did not run its commit "
            f"{revision.commit[:12]}'s bytes: {proof.summary}. Fix: remove the other copy of "
            "the runtime (or its stale bytecode) from what the agent imports; start a new run"
        )
    required = revision.proof_spec is not None and revision.proof_spec.require
    if proof.status == "unavailable" and required:
        kind = revision.probe.kind if revision.probe is not None else "python"
        return (
            f"mounted-byte proof unavailable and required (proof: {{require: true}}): arm "
            f"{revision.arm}'s attempt cannot be shown to have run {revision.commit[:12]}'s "
            f"bytes: {proof.summary}. Fix: start the runtime so the {kind} probe sees it "
            "(its interpreter, not a copy or a binary), or drop require; start a new run"
        )
    return None


def drift_reason(revision: Revision, when: str, drift: list[str]) -> str:
    return (
        f"source drift {when} the attempt: arm {revision.arm}'s checkout of "
        f"{revision.commit[:12]} differs from its production manifest: {', '.join(drift)}. "
        "Fix: nothing may write into the frozen checkout; start a new run"
    )


def _cache_for(repo: Path) -> Path:
    """The private bare clone of ``repo``, one per repository path, outside the run."""
    from pairbench.model._cache import cache_root

    key = hashlib.sha256(str(repo).encode("utf-8")).hexdigest()[:16]
    return cache_root() / "sources" / f"{repo.name}-{key}.git"


def prepare_revisions(loaded: LoadedExperiment, run_dir: RunDir) -> dict[str, Revision]:
    """Check out, verify, build and freeze every revision arm's commit; ``{}`` when no arm
    names a commit. Raises ``SourceError`` (or ``BuildFailed``) naming the arm's problem;
    what was prepared is removed first."""
    from pairbench.source import (
        build,
        freeze_readonly,
        materialize,
        overlay_harness,
        remove_worktree,
    )

    ready: dict[str, Revision] = {}
    try:
        for r in revision_arms(loaded):
            arm = r.arm
            base = run_dir.path / "work" / "_sources" / arm
            if base.exists():  # a resumed run: its earlier checkout is not trusted
                _remove_folder(base)
            tree_dir, env_dir = base / "tree", base / "env"
            tree = materialize(r.repo, r.commit, tree_dir, _cache_for(r.repo), r.production)
            probe = None
            if r.proof is not None:
                from pairbench.proof import install_probe

                probe = install_probe(
                    base / "probe", tree_dir, r.proof.packages, base / "mounted.jsonl",
                    kind=r.proof.kind,
                )  # fmt: skip
            ready[arm] = Revision(arm, r.commit, tree_dir, env_dir, tree, probe, r.proof)
            harness = overlay_harness(tree, r.harness, r.repo)
            ready[arm] = dataclasses.replace(ready[arm], harness_files=tuple(harness))
            env_dir.mkdir(parents=True, exist_ok=True)
            record = None
            if r.build is not None:
                record = build(tree_dir, r.build, env_dir, log=base / "build.log")
            freeze_readonly(tree_dir)
            stored = run_dir.path / "sources" / arm
            stored.mkdir(parents=True, exist_ok=True)
            write_atomic(
                stored / "production-manifest.json",
                tree.manifest.model_dump_json(indent=2).encode("utf-8") + b"\n",
            )
            info: dict[str, object] = {
                "harness_commit": r.harness.commit,
                "harness_files": harness,
            }
            if record is not None:
                info["build"] = record.model_dump(mode="json")
            write_atomic(stored / "prepared.json", _json(info))
    except BaseException:
        for revision in ready.values():
            remove_worktree(revision.worktree)
        raise
    return ready


def release_revisions(revisions: dict[str, Revision]) -> None:
    """Remove the worktrees (write bits restored): the run keeps their manifests."""
    from pairbench.source import remove_worktree

    for revision in revisions.values():
        remove_worktree(revision.worktree)


def _remove_folder(folder: Path) -> None:
    from pairbench.source._drift import restore_writable

    restore_writable(folder)
    shutil.rmtree(folder)


def _json(value: object) -> bytes:
    import json

    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")
