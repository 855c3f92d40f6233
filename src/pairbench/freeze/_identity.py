"""Identities recorded per run: sources, interpreter, packages, and each arm's agent."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pairbench.freeze._hashing import python_version, sha256_path
from pairbench.freeze._revisions import revision_identities
from pairbench.spec._load import LoadedExperiment

PACKAGES = ("pairbench", "mcp", "pydantic", "numpy", "scipy", "httpx", "openai", "anyio")


def _git(path: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(path), *args], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source_identity(root: Path, production_paths: list[str]) -> dict[str, Any]:
    """Git commit, dirty flag, and the byte hash of the declared production paths."""
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain")
    import hashlib

    digest = hashlib.sha256()
    for rel in sorted(production_paths):
        base = root / rel
        files = sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else [base]
        for path in files:
            if ".git" in path.relative_to(root).parts or not path.is_file():
                continue
            digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_path(path)}\n".encode())
    return {
        "commit": commit,
        "dirty": None if status is None else bool(status),
        "production_paths": sorted(production_paths),
        "production_sha256": digest.hexdigest() if production_paths else None,
    }


def package_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def _adapter_identity(
    adapter: str, settings: dict[str, Any], env: dict[str, str]
) -> dict[str, Any]:
    """What the adapter itself says of an arm (tool discovery, pinned env, its CLI's version)."""
    from pairbench import _registry

    try:
        cls = _registry.load("agents", adapter)
    except Exception:
        return {}
    describe = getattr(cls, "describe", None)
    found: dict[str, Any] = dict(describe(settings, env)) if callable(describe) else {}
    version_args = getattr(cls, "version_args", None)
    if version_args:
        found["agent_version"] = _cli_version(str(settings.get("executable") or ""), env, cls)
    return found


def _cli_version(executable: str, env: dict[str, str], cls: Any) -> str | None:
    """``<cli> --version`` as the arm would run it (its PATH), or None when it cannot run."""
    import os
    import shutil

    name = executable or {"ClaudeCodeAgent": "claude", "CodexAgent": "codex"}.get(cls.__name__, "")
    path = env.get("PATH", os.environ.get("PATH", ""))
    exe = name if os.sep in name else shutil.which(name, path=path)
    if not exe:
        return None
    try:
        done = subprocess.run(
            [exe, *cls.version_args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"PATH": path, "HOME": os.environ.get("HOME", "/")},
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def arm_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """Each arm's agent, model, effective settings, tool discovery mode and pinned env.

    ``tool_discovery`` is what the adapter pins (Claude Code's ``ENABLE_TOOL_SEARCH``), or
    says does not apply; ``agent_version`` is a CLI adapter's ``--version`` output.
    """
    exp = loaded.experiment
    out: dict[str, Any] = {}
    versions: dict[tuple[str, str, str], Any] = {}
    for name, arm in exp.arms.items():
        agent = exp.arm_agent(name)
        settings = dict(agent.settings)
        env = dict(agent.env)
        key = (agent.adapter, repr(sorted(settings.items())), repr(sorted(env.items())))
        if key not in versions:
            versions[key] = _adapter_identity(agent.adapter, settings, env)
        described = versions[key]
        out[name] = {
            "agent": agent.adapter,
            "model": settings.get("model"),
            "settings": settings,
            "tools": arm.tools if arm.tools == "none" else arm.tools.model_dump(mode="json"),
            "tool_discovery": described.get(
                "tool_discovery",
                env.get("ENABLE_TOOL_SEARCH", settings.get("tool_search", "unpinned")),
            ),
            "env": env,
            "source": arm.source
            if arm.source is None or isinstance(arm.source, str)
            else arm.source.model_dump(mode="json"),
        }
        for extra in ("pinned_env", "agent_version", "tool_calling", "constrained_prompt_sha256"):
            if extra in described:
                out[name][extra] = described[extra]
    return out


def run_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """Everything ``compare`` checks: all must agree between runs except the treatment.

    The harness hash leaves the studies out (``harness_scope``); the study the experiment
    names is its own identity, ``study``.
    """
    from pairbench.freeze._hashing import HARNESS_SCOPE, harness_sha256
    from pairbench.freeze._study import study_identity

    exp = loaded.experiment
    study = {"study": study_identity(exp.study).model_dump()} if exp.study else {}
    return {
        "python": python_version(),
        "packages": package_versions(),
        "harness_sha256": harness_sha256(),
        "harness_scope": HARNESS_SCOPE,
        **study,
        "sources": {
            name: source_identity((loaded.root / src.path).resolve(), src.production_paths)
            for name, src in exp.sources.items()
            if src.path is not None
        },
        "arms": arm_identities(loaded),
        **revision_identities(loaded),
    }
