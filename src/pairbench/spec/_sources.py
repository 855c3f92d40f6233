"""Problems with an experiment's ``sources`` and the arms that name them, found on the raw
YAML so each names its line: a checkout folder that is not there, a repository that is not
one, an arm naming an unknown source, or a commit the repository does not have.

A ``repo`` source's commits are checked with git (read only, isolated from the user's git
config), so ``pairbench check`` says which arm names a commit that is not in the repository
before anything runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pairbench.spec._yaml import Found, Part, _get

_PIN = "run `pairbench source pin REF --repo {repo}` and write the commit it prints"


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def named_dir(root: Path, where: tuple[Part, ...], rel: Any, fix: str) -> Iterator[Found]:
    """A folder the experiment names: relative (no two machines would agree on an absolute
    one), and there. A source may sit beside the experiment (``../runtime``), so unlike a
    named file it may leave the experiment's folder."""
    if not isinstance(rel, str) or not rel:
        return
    try:
        is_dir = (root / rel).is_dir()
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte, a symlink loop
        reason = _reason(exc)
        yield where, f"'{rel}' cannot be a folder name ({reason})", "give the real path"
        return
    if Path(rel).is_absolute():
        yield where, f"'{rel}' is an absolute path", "give it relative to the experiment file"
    elif not is_dir:
        yield where, f"folder '{rel}' does not exist", fix


def _has_commit(repo: Path, commit: str) -> str | None:
    """``None`` when ``repo`` has ``commit``, else why not (one line)."""
    from pairbench.source import SourceError, isolated_git

    try:
        isolated_git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo, what=str(repo))
    except SourceError as exc:
        text = str(exc)
        if "not a git repository" in text:
            return "is not a git repository"
        return f"has no commit {commit}"
    return None


def _repo_of(sources: Mapping[str, Any], arm: str, wanted: Any) -> tuple[str | None, Found | None]:
    """The ``repo`` source an arm's ``{name, commit}`` runs, or the problem with it."""
    repos = [n for n, s in sources.items() if isinstance(_get(s, ("repo",)), str)]
    name = _get(wanted, ("name",))
    where: tuple[Part, ...] = ("arms", arm, "source")
    if name is None:
        if len(repos) == 1:
            return repos[0], None
        found = "none" if not repos else ", ".join(sorted(repos))
        fix = "add name: <source> beside commit" if repos else "declare one under 'sources'"
        return None, (
            where,
            f"runs a commit, but which 'repo' source? (repo sources: {found})",
            fix,
        )
    if name not in repos:
        kind = "a checkout ('path'), not a 'repo'" if name in sources else "not in 'sources'"
        return None, (
            (*where, "name"),
            f"names source '{name}', which is {kind}",
            "name a 'repo' source",
        )
    return str(name), None


def source_problems(root: Path, data: Mapping[str, Any]) -> Iterator[Found]:
    """Every problem of ``sources`` and of the arms' ``source``, in file order."""
    raw = data.get("sources")
    sources: dict[str, Any] = raw if isinstance(raw, dict) else {}
    usable: dict[str, Path] = {}
    for name, source in sources.items():
        path, repo = _get(source, ("path",)), _get(source, ("repo",))
        yield from named_dir(
            root, ("sources", name, "path"), path, "check out the source there or fix it"
        )
        problems = list(
            named_dir(root, ("sources", name, "repo"), repo, "clone it there or fix it")
        )
        yield from problems
        if isinstance(repo, str) and repo and not problems:
            usable[name] = (root / repo).resolve()
            harness = _get(source, ("harness", "commit"))
            if isinstance(harness, str) and len(harness) == 40:
                why = _has_commit(usable[name], harness)
                if why is not None:
                    where = ("sources", name, "harness", "commit")
                    yield where, f"repository '{repo}' {why}", _PIN.format(repo=repo)
    arms = data.get("arms")
    for a, arm in (arms if isinstance(arms, dict) else {}).items():
        wanted = _get(arm, ("source",))
        if isinstance(wanted, str):
            if wanted not in sources:
                known = ", ".join(sorted(sources)) or "none declared"
                yield (
                    ("arms", a, "source"),
                    f"names source '{wanted}', which is not in 'sources' (known: {known})",
                    "declare it under 'sources' or fix the name",
                )
            elif isinstance(_get(sources[wanted], ("repo",)), str):
                yield (
                    ("arms", a, "source"),
                    f"names the 'repo' source '{wanted}' without a commit",
                    f"write source: {{name: {wanted}, commit: <40 hex>}}; "
                    + _PIN.format(repo=_get(sources[wanted], ("repo",))),
                )
        elif isinstance(wanted, dict):
            runs, problem = _repo_of(sources, a, wanted)
            if problem is not None:
                yield problem
            commit = _get(wanted, ("commit",))
            if runs in usable and isinstance(commit, str) and len(commit) == 40:
                why = _has_commit(usable[runs], commit)
                if why is not None:
                    rel = _get(sources[runs], ("repo",))
                    where = ("arms", a, "source", "commit")
                    yield where, f"repository '{rel}' {why}", _PIN.format(repo=rel)
                else:
                    yield from _unprovable(runs, sources[runs], usable[runs], a, commit)


def _unprovable(name: str, source: Any, repo: Path, arm: str, commit: str) -> Iterator[Found]:
    """``proof: {require: true}`` on a runtime whose production at ``commit`` has no file
    the probe of its kind sees compiled: it could never be proven, so it is refused here,
    before any attempt."""
    from pairbench.spec._revision import PROOF_SOURCES

    if _get(source, ("proof", "require")) is not True:
        return
    kind = _get(source, ("proof", "kind")) or "python"
    endings = PROOF_SOURCES.get(str(kind))
    include, exclude = (
        _get(source, ("production", "include")),
        _get(source, ("production", "exclude")),
    )
    if endings is None or not isinstance(include, list):
        return  # the model's own validation names these
    from pairbench.source import SourceError, production_manifest

    try:
        manifest = production_manifest(repo, commit, include, exclude or [])
    except SourceError:
        return  # the commit's problems are named where it is declared
    if not any(e.path.endswith(endings) for e in manifest.entries):
        yield (
            ("sources", name, "proof", "require"),
            f"arm '{arm}' runs {commit[:12]}, whose production has no {'/'.join(endings)} "
            f"file for the {kind} probe to see: it cannot be proven",
            f"set proof.kind to the runtime's language ({', '.join(PROOF_SOURCES)}), widen "
            "production.include to its code, or drop require (then the proof is reported "
            "'unavailable')",
        )


def proxy_problems(data: Mapping[str, Any]) -> Iterator[Found]:
    """``proxy:`` tells one attempt's model requests from another's by which attempt holds
    the proxy, so it needs attempts one at a time."""
    if not isinstance(data.get("proxy"), dict):
        return
    concurrency = _get(data, ("budget", "concurrency"))
    if concurrency != 1:
        where: tuple[Part, ...] = (
            ("budget", "concurrency") if concurrency is not None else ("proxy",)
        )
        yield (
            where,
            "a run with a 'proxy' runs one attempt at a time (each attempt's model requests are "
            f"the ones made while it holds the proxy), but concurrency is {concurrency or 4}",
            "set budget: {concurrency: 1}",
        )
