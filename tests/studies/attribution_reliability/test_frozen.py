"""One changed byte in the scorer or in the runner fails ``verify`` and refuses the held-out
run: proven on a copy of pairbench's own source, through the CLI a user would run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import pairbench
from pairbench.studies.attribution_reliability import STUDY
from pairbench.studies.attribution_reliability._reference import OracleEngine

pytestmark = pytest.mark.browser

ORACLE = {"engine": "python", "target": f"{OracleEngine.__module__}:OracleEngine"}


def _experiment(root: Path) -> Path:
    shutil.copytree(STUDY.root, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "experiment.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tasks"] = [t for t in data["tasks"] if t["id"] in ("p02", "c-p01")]
    data["agent"]["settings"] = {"engine": ORACLE}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_one_changed_byte_in_the_scorer_or_the_runner_fails_verify_and_refuses_the_run(
    tmp_path: Path,
) -> None:
    # pairbench runs from a copy of its source (first on PYTHONPATH), so a byte can change.
    source = tmp_path / "src" / "pairbench"
    shutil.copytree(
        Path(pairbench.__file__).parent, source, ignore=shutil.ignore_patterns("__pycache__")
    )
    exp = _experiment(tmp_path / "study")
    runs = tmp_path / "runs"
    env = {"PYTHONPATH": str(source.parent), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pairbench", *args], env={**env, "COLUMNS": "200"},
            cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip

    def held_out(*extra: str) -> subprocess.CompletedProcess[str]:
        # No --run-seed: a run that were let through would start for real.
        return cli("run", str(exp), "--case-set", "held-out", "--runs-dir", str(runs), *extra)

    frozen = cli("freeze", "--no-servers", str(exp))
    assert frozen.returncode == 0, frozen.stderr
    assert cli("verify", str(exp)).returncode == 0
    study = "study changed (its version or source): attribution-reliability"
    for changed, kinds in (
        ("studies/attribution_reliability/_score_metrics.py", (study,)),
        ("runner/_run.py", ("harness changed",)),
    ):
        path = source / changed
        original = path.read_bytes()
        assert original.endswith(b"\n")
        path.write_bytes(original[:-1] + b" ")  # one byte: the last newline, now a space
        try:
            verify = cli("verify", str(exp))
            said = verify.stdout + verify.stderr
            assert verify.returncode == 1, said
            # The study is hashed on its own: its scorer is no change of pairbench's harness.
            assert all(kind in said for kind in kinds), said
            assert ("harness changed" in said) == (kinds != (study,)), said
            refused = held_out()
            told = refused.stdout + refused.stderr
            assert refused.returncode != 0 and "refusing a held-out run" in told, told
            # A changed scorer is named as the study's; a changed runner as pairbench itself,
            # which only an explicit, recorded --accept-harness-change would run.
            assert all(kind in told for kind in kinds), told
            if kinds == (study,):
                # Accepting a changed pairbench does not accept a changed scorer: the study's
                # code is pinned on its own.
                still = held_out("--accept-harness-change")
                assert still.returncode != 0, still.stdout
                assert study in still.stdout + still.stderr
            else:
                assert "accept-harness-change" in told, told
            assert not runs.exists() or not any(runs.iterdir())  # nothing ran
        finally:
            path.write_bytes(original)
    # The byte restored, the lock holds again.
    assert cli("verify", str(exp)).returncode == 0
