"""What an experiment declares of arms that are git revisions: the repository, its production
paths, the one harness every arm runs, the build, and each arm's pinned commit."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from pairbench._model import Frozen
from pairbench.spec._glob import compile_glob
from pairbench.spec._ids import SafeId

_COMMIT = re.compile(r"[0-9a-f]{40}")


def check_commit(value: str) -> str:
    """``value`` if it is exactly 40 lowercase hex digits, else ``ValueError`` with the fix.

    Branches and tags move, so a pre-registered run accepts only a commit.

    >>> check_commit("0123456789abcdef0123456789abcdef01234567")
    '0123456789abcdef0123456789abcdef01234567'
    >>> check_commit("main")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'main' is not a commit ...: run `pairbench source pin main` and write ...
    """
    if not _COMMIT.fullmatch(value):
        ref = value if value.strip() and not value.startswith("-") else "REF"
        raise ValueError(
            f"{value!r} is not a commit (40 lowercase hex digits): run "
            f"`pairbench source pin {ref}` and write the commit it prints"
        )
    return value


Commit = Annotated[str, AfterValidator(check_commit)]
"""A full 40-hex git commit id (SHA-1 repositories; a branch or tag is refused)."""


def _check_globs(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        compile_glob(pattern)  # raises ValueError naming the pattern
    return patterns


Globs = Annotated[list[str], AfterValidator(_check_globs)]


class Production(Frozen):
    """Which files of a commit's tree are production: their bytes are the treatment.

    Patterns are git's ``:(glob)`` pathspecs, anchored at the repository root: ``*`` and
    ``?`` stop at ``/``, ``**`` spans folders, and a pattern naming a folder takes all of it.
    """

    include: Annotated[Globs, Field(min_length=1)]
    """Paths whose bytes count, e.g. ``["minirt/**", "pyproject.toml"]``."""
    exclude: Globs = Field(default_factory=list)
    """Paths taken back out of ``include``, e.g. ``["minirt/tests/**"]``: a change there
    keeps the production hash."""


class Harness(Frozen):
    """The harness (scenarios, build and probe scripts) every arm runs, from one commit."""

    commit: Commit
    """The commit the harness files are taken from, whatever an arm's commit holds."""
    paths: Annotated[Globs, Field(min_length=1)]
    """Harness paths (same pattern syntax as ``production``); an arm's commit that changes
    one is flagged."""


class BuildSpec(Frozen):
    """How an arm's worktree becomes something to run: a command, a timeout, its outputs."""

    command: Annotated[list[str], Field(min_length=1)]
    """The argv, run in the worktree; ``{venv}`` and ``{worktree}`` are replaced by the arm's
    environment folder and worktree, and a leading ``python3`` by pairbench's interpreter."""
    timeout_s: float = Field(default=300.0, gt=0, allow_inf_nan=False)
    """Seconds before the build's whole process group is killed and the build fails."""
    outputs: list[str] = Field(default_factory=list)
    """Globs of what the build writes, hashed into the build record: ``{venv}/...`` under
    the environment folder, anything else relative to the worktree."""

    @field_validator("outputs")
    @classmethod
    def _outputs(cls, value: list[str]) -> list[str]:
        for pattern in value:
            for root in ("{venv}/", "{worktree}/"):
                pattern = pattern.removeprefix(root)
            compile_glob(pattern)
        return value


PROOF_SOURCES: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "node": (".js", ".cjs", ".mjs"),
}
"""Per ``proof.kind``: the production files the probe sees compiled (coverage's n)."""


class Proof(Frozen):
    """How pairbench proves which bytes of the runtime a trial's processes really loaded.

    ``kind: python``: a probe on the runtime's ``PYTHONPATH`` records, in every Python process
    of the trial, the bytes each loader compiled (a script run as ``python file.py`` too);
    ``kind: node``: a preload (``NODE_OPTIONS=--require``) records every CommonJS and ES
    module file each Node process compiles (``pairbench.proof``). A file that is not the
    arm's production bytes, a declared package loaded from elsewhere or stale bytecode stops
    the run, and an honest trial reports its coverage (files loaded / production files).
    With ``require: true`` a runtime that cannot be proven is refused: at ``check`` when its
    production has no file of the kind, and as an infra stop when an attempt's proof is
    ``unavailable``; without it, ``unavailable`` is reported, not scored as proven.
    """

    kind: Literal["python", "node"] = "python"
    """The runtime's language."""
    packages: list[str] = Field(default_factory=list)
    """The runtime's top-level Python packages, e.g. ``[minirt]`` (required for ``python``):
    one imported from outside the checkout is ``shadowed``."""
    require: bool = False
    """Refuse what cannot be proven instead of reporting it ``unavailable``."""

    @model_validator(mode="after")
    def _packages_for_python(self) -> Proof:
        if self.kind == "python" and not self.packages:
            raise ValueError(
                "kind python needs packages: the runtime's top-level packages, e.g. [minirt]"
            )
        if self.kind == "node" and self.packages:
            raise ValueError("packages are Python's: leave them out for kind node")
        return self

    @property
    def sources(self) -> tuple[str, ...]:
        """The file endings the probe sees compiled."""
        return PROOF_SOURCES[self.kind]


class RevisionSource(Frozen):
    """A repository whose commits are the arms (``source:`` in experiment.yaml).

    **Usage**::

        RevisionSource(
            repo="../minirt",
            production={"include": ["minirt/**"], "exclude": ["minirt/tests/**"]},
            harness={"commit": "ab" * 20, "paths": ["harness/**"]},
            build={"command": ["python3", "harness/build.py", "{venv}"], "timeout_s": 300},
        )
    """

    repo: str
    """The repository (relative to the experiment file); read, never written or checked out."""
    production: Production
    """Which paths of each arm's tree are production."""
    harness: Harness
    """The harness commit and paths, the same for every arm."""
    build: BuildSpec
    """The build run in each arm's worktree before it is frozen."""


class ArmRevision(Frozen):
    """One arm's revision (``arms.<name>.source`` in experiment.yaml)."""

    commit: Commit
    """The arm's commit, 40 lowercase hex (``pairbench source pin REF`` prints it)."""


class Source(Frozen):
    """A source tree an arm runs (an agent runtime); its identity goes in run.json.

    Either a checkout (``path``: its git commit, dirty flag and the bytes of
    ``production_paths`` on disk are recorded) or a repository whose commits are the arms
    (``repo``: each arm names a commit, ``arms.<arm>.source: {name, commit}``; the production
    hash comes from the commit's git tree, ``pbprod/1``)::

        sources:
          runtime:
            repo: ../minirt
            production: {include: ["minirt/**", pyproject.toml], exclude: ["minirt/tests/**"]}
            harness: {commit: <40 hex>, paths: ["harness/**"]}
            build: {command: [python3, harness/build.py, "{venv}"], timeout_s: 300}
    """

    path: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """Folder of the checkout, relative to the experiment file."""
    production_paths: list[str] = Field(default_factory=list)
    """Paths inside a checkout whose bytes are hashed into the identity (empty: git state
    only)."""
    repo: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The repository whose commits the arms name, relative to the experiment file; it is
    only read (never checked out or written)."""
    production: Production | None = Field(default=None, exclude_if=lambda v: v is None)
    """``repo``: which paths of each arm's tree are production (the treatment)."""
    harness: Harness | None = Field(default=None, exclude_if=lambda v: v is None)
    """``repo``: the harness commit and paths, one for every arm; an arm's commit that
    changes a harness path is flagged in run.json."""
    build: BuildSpec | None = Field(default=None, exclude_if=lambda v: v is None)
    """``repo``: how each arm's checkout is built before it runs."""
    proof: Proof | None = Field(default=None, exclude_if=lambda v: v is None)
    """``repo``: prove from inside each trial which of the runtime's files were loaded, and
    that they are the arm's production bytes (``{kind: python, packages: [minirt]}``)."""

    @model_validator(mode="after")
    def _one_kind(self) -> Source:
        if (self.path is None) == (self.repo is None):
            raise ValueError(
                "a source is a checkout ('path') or a repository of commits ('repo'): give "
                "exactly one"
            )
        if self.path is not None and (self.production or self.harness or self.build or self.proof):
            raise ValueError(
                "'production', 'harness', 'build' and 'proof' are for a 'repo' source: a 'path' "
                "checkout lists 'production_paths'"
            )
        if self.repo is not None and self.production_paths:
            raise ValueError("a 'repo' source names its production files in 'production'")
        if self.repo is not None and (self.production is None or self.harness is None):
            missing = "production" if self.production is None else "harness"
            raise ValueError(
                f"a 'repo' source needs '{missing}': which paths are production "
                "(production: {include: [...]}) and which commit's harness every arm runs "
                "(harness: {commit: <40 hex>, paths: [...]})"
            )
        return self


class ArmSource(Frozen):
    """An arm that runs one commit of a ``repo`` source: ``source: {name: runtime, commit:
    <40 hex>}`` (``name`` may be left out when the experiment has one ``repo`` source)."""

    name: SafeId | None = Field(default=None, exclude_if=lambda v: v is None)
    """The ``sources`` entry (a ``repo`` source)."""
    commit: Commit
    """The arm's commit, 40 lowercase hex: ``pairbench source pin REF`` prints it."""
