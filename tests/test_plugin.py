"""A third-party agent registers through the entry point exactly as the built-ins do."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.whole_run

PLUGIN = '''
from pairbench import AgentOutput, Metric


class EchoSeedAgent:
    """Answers with the trial seed it was given, so the test can check the wiring."""

    def __init__(self, settings):
        self.prefix = settings.get("prefix", "")

    async def run(self, ctx):
        ctx.transcript.emit("message", text="plugin agent here")
        answer = f"{self.prefix}{ctx.seed}"
        ctx.transcript.emit("final", text=answer)
        return AgentOutput(final_answer=answer, turns=Metric.measured(1, "plugin"))
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _build_wheel(out: Path) -> Path:
    """A real wheel of a tiny plugin package (built by hand: no build backend needed)."""
    files = {
        "pb_echo_plugin/__init__.py": PLUGIN.encode(),
        "pb_echo_plugin-0.1.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: pb-echo-plugin\nVersion: 0.1\n"
        ),
        "pb_echo_plugin-0.1.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        "pb_echo_plugin-0.1.dist-info/entry_points.txt": (
            b"[pairbench.agents]\necho-seed = pb_echo_plugin:EchoSeedAgent\n"
        ),
    }
    record_name = "pb_echo_plugin-0.1.dist-info/RECORD"
    record = "\n".join([*(_record_line(n, d) for n, d in files.items()), f"{record_name},,"])
    wheel = out / "pb_echo_plugin-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(record_name, record + "\n")
    return wheel


def test_an_installed_plugin_agent_runs(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (tmp_path / "p.md").write_text("Say your seed.", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(
        """id: plugin-check
version: "1"
trials: 2
agent: {adapter: echo-seed, settings: {prefix: "seed="}}
arms: {a: {}, b: {}}
tasks:
  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: never}}}
""",
        encoding="utf-8",
    )
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-m", "pairbench", "run", "experiment.yaml", "--run-seed", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    # exact-answer fails every trial on purpose: the run completes, the answers are checked.
    assert run.returncode == 0, run.stderr
    results = sorted((tmp_path / "runs").rglob("results/*/*/*.json"))
    assert len(results) == 4
    for path in results:
        record = json.loads(path.read_text())
        assert record["agent"] == "echo-seed"
        assert record["final_answer"] == f"seed={record['seed']}"

    listed = subprocess.run(
        [sys.executable, "-m", "pairbench", "check", "experiment.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
