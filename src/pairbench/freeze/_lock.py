"""The lock: the canonical hash of the experiment and the bytes of everything it names."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field, ValidationError

from pairbench import _registry
from pairbench._atomic import write_atomic
from pairbench._errors import SpecError
from pairbench._model import Frozen
from pairbench._version import __version__
from pairbench.freeze._hashing import (
    HARNESS_SCOPE,
    HASH_LIST_NAME,
    LOCK_NAME,
    code_identity,
    folder_sha256,
    harness_sha256,
    known_scope,
    scope_covers_studies,
    sha256_path,
)
from pairbench.freeze._servers import LockedServer, identify_servers
from pairbench.freeze._study import LockedStudy, study_identity
from pairbench.spec._load import LoadedExperiment, Problem
from pairbench.spec._plugin_checks import adapter_hooks


class LockedFile(Frozen):
    """One named file, by its path relative to the experiment file."""

    path: str
    role: str
    """protocol, prompt, plan, file (a dataset or manifest) or folder (every file under it,
    ``folder_sha256``)."""
    sha256: str


class LockedCode(Frozen):
    """The code behind a registered grader or fixture (its module folder's hash)."""

    name: str
    """``graders:<name>`` or ``fixtures:<name>``."""
    package: str
    sha256: str


class Harness(Frozen):
    version: str
    source_sha256: str
    scope: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """What ``source_sha256`` covers (``_hashing.HARNESS_SCOPE``); absent from a lock frozen
    before scopes, whose hash covered the whole package, studies included."""


class Lock(Frozen):
    """``experiment.lock.json``: no absolute path, no machine identity, no timestamp."""

    schema_id: str = "pairbench.lock/1"
    experiment: dict[str, str]
    canonical_hash: str
    files: list[LockedFile] = Field(default_factory=list)
    code: list[LockedCode] = Field(default_factory=list)
    harness: Harness
    study: LockedStudy | None = Field(default=None, exclude_if=lambda v: v is None)
    """The study the experiment names, hashed on its own (the harness's scope leaves the
    study folders out); absent without ``study:``, and from a lock frozen before scopes."""
    servers: list[LockedServer] = Field(default_factory=list, exclude_if=lambda v: not v)
    """Each arm's MCP servers as ``freeze`` identified them (``verify`` checks a run's
    servers against these); absent from a lock of an experiment without servers."""
    protocol_version: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The protocol's version: the experiment's ``version`` until ``freeze --new-version``
    sets another (needed to re-freeze after a held-out sitting); absent from a lock frozen
    before ledgers (then the experiment's ``version``)."""
    ledger: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The ledger's file name beside the lock (``experiment.ledger.jsonl``): a lock that names
    one and has none beside it is refused (the ledger was deleted). Absent from a lock frozen
    before ledgers, which gets one at first use."""

    def version(self) -> str:
        """The protocol version: ``protocol_version``, else the experiment's ``version``."""
        return self.protocol_version or self.experiment.get("version", "")

    def to_bytes(self) -> bytes:
        """The lock's canonical file bytes (sorted keys, 2-space indent, final newline)."""
        return (json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()

    def hash_list(self) -> str:
        """``protocol_hash.txt``: one ``sha256  path`` line per file, like ``sha256sum``."""
        lines = [f"{f.sha256}  {f.path}" for f in self.files]
        lines += [f"{c.sha256}  python:{c.package} ({c.name})" for c in self.code]
        lines.append(f"{self.canonical_hash}  experiment model (canonical JSON)")
        if self.study is not None:
            s = self.study
            lines.append(f"{s.sha256}  study {s.name} {s.version} source (python:{s.package})")
        scope = f" ({self.harness.scope})" if self.harness.scope else ""
        lines.append(
            f"{self.harness.source_sha256}  pairbench {self.harness.version} source{scope}"
        )
        return "\n".join(lines) + "\n"


def named_files(loaded: LoadedExperiment) -> list[tuple[str, str]]:
    """(relative path, role) of every file the experiment names, deduplicated, sorted."""
    exp = loaded.experiment
    seen: dict[str, str] = {}
    if exp.protocol:
        seen[exp.protocol] = "protocol"
    for task in exp.tasks:
        seen.setdefault(task.prompt, "prompt")
        if task.plan:
            seen.setdefault(task.plan, "plan")
    for rel in exp.files:
        seen.setdefault(rel, "file")
    return sorted(seen.items())


def _locked(path: Path, rel: str, role: str) -> LockedFile:
    """A named file, or a folder named in ``files:`` (role ``folder``, ``folder_sha256``)."""
    if path.is_dir():
        return LockedFile(path=Path(rel).as_posix(), role="folder", sha256=folder_sha256(path))
    return LockedFile(path=Path(rel).as_posix(), role=role, sha256=sha256_path(path))


def build_lock(loaded: LoadedExperiment, *, scope: str | None = HARNESS_SCOPE) -> Lock:
    """Compute the lock of an experiment as it is now on disk.

    ``scope``: what the harness hash covers; ``None`` is a lock from before scopes (the
    whole package, and so no study of its own). ``verify`` passes the frozen lock's.
    """
    exp = loaded.experiment
    files = [_locked(loaded.resolve(rel), rel, role) for rel, role in named_files(loaded)]
    code: dict[str, LockedCode] = {}
    for group, names in (
        ("graders", {t.grader.name for t in exp.tasks}),
        ("fixtures", {t.fixture for t in exp.tasks if t.fixture}),
    ):
        for name in sorted(names):
            package, digest = code_identity(_registry.load(group, name))  # type: ignore[arg-type]
            code[f"{group}:{name}"] = LockedCode(
                name=f"{group}:{name}", package=package, sha256=digest
            )
    code.update(_adapter_code(loaded))
    study = exp.study if exp.study and not scope_covers_studies(scope) else None
    return Lock(
        experiment={"id": exp.id, "version": exp.version},
        canonical_hash=loaded.canonical_hash,
        files=files,
        code=list(code.values()),
        harness=Harness(version=__version__, source_sha256=harness_sha256(scope), scope=scope),
        study=study_identity(study) if study else None,
    )


def rebuild_lock(loaded: LoadedExperiment, frozen: Lock) -> Lock:
    """The lock of the experiment now, computed as ``frozen`` was (its harness scope); a
    scope this pairbench does not know is computed as today's, and differs as a harness."""
    scope = frozen.harness.scope
    return build_lock(loaded, scope=scope if known_scope(scope) else HARNESS_SCOPE)


def _adapter_code(loaded: LoadedExperiment) -> dict[str, LockedCode]:
    """What an arm's adapter says its results depend on beyond pairbench's own source and
    the study's: an adapter class may define ``lock_code(settings, root, arm) -> [(name,
    package, sha256)]`` (the attribution study's engine identity, say)."""
    found: dict[str, LockedCode] = {}
    for arm, settings, hook in adapter_hooks(loaded.experiment, "lock_code"):
        for name, package, digest in hook(settings, loaded.root, arm):
            found[name] = LockedCode(name=name, package=package, sha256=digest)
    return found


def lock_path(loaded: LoadedExperiment) -> Path:
    return loaded.root / LOCK_NAME


def read_lock(path: Path) -> Lock:
    """The lock in ``path``; raises ``SpecError`` naming it if it is not a readable lock."""
    try:
        return Lock.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in err["loc"])
        what = str(err["msg"]).removeprefix("Input ")
        reason = f"{where}: {what}" if where else what
    except OSError as exc:
        reason = exc.strerror or str(exc)
    fix = (
        "write it again with `pairbench freeze` on the experiment, and review the change "
        "(git diff) before committing it"
    )
    raise SpecError([str(Problem(str(path), None, "", f"not a pairbench lock ({reason})", fix))])


def write_lock(
    loaded: LoadedExperiment, *, servers: bool = True, new_version: str | None = None
) -> tuple[Path, Path, Lock]:
    """Write ``experiment.lock.json`` and ``protocol_hash.txt`` beside the experiment, and
    append the freeze to the ledger beside them (``_ledger``).

    ``servers``: start and identify the experiment's MCP servers into the lock (see
    ``_servers``); ``build_lock`` alone never does. ``new_version``: the protocol's new
    version (``freeze --new-version``), required to change a lock after a held-out sitting
    under its version; a version the ledger already holds is refused.

    Raises:
        LedgerError: the ledger does not chain, is missing under a lock that names it
            (without ``new_version``), or a sitting forbids the re-freeze.
    """
    from pairbench.freeze._refreeze import freeze_into_ledger

    lock = build_lock(loaded)
    if servers:
        lock = lock.model_copy(update={"servers": identify_servers(loaded).servers})
    target = lock_path(loaded)
    lock = freeze_into_ledger(loaded, target, lock, new_version)
    hash_list = loaded.root / HASH_LIST_NAME
    write_atomic(hash_list, lock.hash_list().encode())
    return target, hash_list, lock
