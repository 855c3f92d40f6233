"""Identities recorded per run: sources, interpreter, packages, and each arm's agent."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pairbench.freeze._hashing import python_version, sha256_path
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


def arm_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """Each arm's agent, model, effective settings, tool discovery mode and pinned env."""
    exp = loaded.experiment
    out: dict[str, Any] = {}
    for name, arm in exp.arms.items():
        agent = exp.arm_agent(name)
        settings = dict(agent.settings)
        out[name] = {
            "agent": agent.adapter,
            "model": settings.get("model"),
            "settings": settings,
            "tools": arm.tools if arm.tools == "none" else arm.tools.model_dump(mode="json"),
            "tool_discovery": agent.env.get(
                "ENABLE_TOOL_SEARCH", settings.get("tool_search", "unpinned")
            ),
            "env": dict(agent.env),
            "source": arm.source,
        }
    return out


def run_identities(loaded: LoadedExperiment) -> dict[str, Any]:
    """Everything ``compare`` checks: all must agree between runs except the treatment."""
    from pairbench.freeze._hashing import harness_sha256

    exp = loaded.experiment
    return {
        "python": python_version(),
        "packages": package_versions(),
        "harness_sha256": harness_sha256(),
        "sources": {
            name: source_identity((loaded.root / src.path).resolve(), src.production_paths)
            for name, src in exp.sources.items()
        },
        "arms": arm_identities(loaded),
    }
