"""Secrets through the real CLI: a command agent prints every secret it can see; after
``pairbench run`` and ``pairbench report`` no file of the run folder holds one, and the
secret detector still reports each leak (a verdict stored before anything was redacted)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.common import cli, edit_experiment, study_copy, task_named
from pairbench.grading import find_secrets
from pairbench.runner import canary_for
from pairbench.spec import load_experiment
from pairbench.store import load_run

pytestmark = pytest.mark.whole_run

DECLARED = 'declared-"quoted"\\token-7f3a9c'
"""A literal in agent.env, listed in ``secrets`` (a quote and a backslash: JSON escapes)."""
ALLOWED = "allowed-key-5b2e8d1c"
"""Passed through ``env_allow`` from the runner's environment (8+ characters)."""
REFERENCED = "ref-token-91d0c4e7"
"""Read by ``${env:PB_TEST_REF}``: in no stored or hashed file."""

LEAK_AGENT = """\
import json, os, pathlib, sys
sys.stdin.read()
names = ["DECLARED_TOKEN", "ALLOWED_KEY", "PAIRBENCH_CANARY", "REF_TOKEN"]
vals = {n: os.environ.get(n, "") for n in names}
joined = " ".join(vals.values())
pathlib.Path("leak.txt").write_text(json.dumps(vals), encoding="utf-8")
home = pathlib.Path(os.environ["HOME"]) / ".agent"
home.mkdir(parents=True, exist_ok=True)
(home / "session.log").write_text(joined, encoding="utf-8")
print("env:", joined)
print(json.dumps({"kind": "message", "text": json.dumps(vals)}))
sys.stderr.write(joined + "\\n")
print(json.dumps({"kind": "tool_call", "id": "c1", "server": "x", "tool": "y", "arguments": vals}))
print(json.dumps({"kind": "final", "text": "answer: " + joined}))
"""


def spellings(value: str) -> list[bytes]:
    """The value as bytes, and JSON-escaped once and twice (as a line would hold it)."""
    once = [json.dumps(value, ensure_ascii=a)[1:-1] for a in (False, True)]
    twice = [json.dumps(f, ensure_ascii=a)[1:-1] for f in once for a in (False, True)]
    return [s.encode("utf-8") for s in dict.fromkeys([value, *once, *twice])]


def holding(folder: Path, secrets: dict[str, str]) -> list[str]:
    """``relpath: NAME`` for every file under ``folder`` (dot files too, links not followed)
    whose bytes hold any spelling of a secret value."""
    found = []
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(base) / name
            if path.is_symlink():
                continue
            data = path.read_bytes()
            for secret, value in secrets.items():
                if any(s in data for s in spellings(value)):
                    found.append(f"{path.relative_to(folder)}: {secret}")
    return sorted(found)


@dataclass(frozen=True)
class Ran:
    exp: Path
    run_dir: Path
    secrets: dict[str, str]
    env: dict[str, str]


def _experiment(tmp: Path) -> Path:
    exp = study_copy(tmp)
    script = tmp / "leak_agent.py"
    script.write_text(LEAK_AGENT, encoding="utf-8")
    task = {
        **task_named(exp, "read-issue-title"),
        "grader": {"name": "exact-answer", "args": {"expect": "x"}},
    }
    leaky = {
        "adapter": "command",
        "settings": {"command": [sys.executable, str(script)]},
        "env": {"DECLARED_TOKEN": DECLARED, "REF_TOKEN": "${env:PB_TEST_REF}", "MODE": "fast"},
        "env_allow": ["ALLOWED_KEY", "PAIRBENCH_CANARY"],
    }
    quiet = {"adapter": "command", "settings": {"command": ["python3", "-c", "print('x')"]}}
    return edit_experiment(
        exp,
        trials=1,
        comparisons=[],
        tasks=[task],
        secrets=["DECLARED_TOKEN", "ALLOWED_KEY"],
        arms={"leaky": {"agent": leaky}, "quiet": {"agent": quiet}},
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    tmp = tmp_path_factory.mktemp("secrets")
    exp = _experiment(tmp)
    env = {**os.environ, "ALLOWED_KEY": ALLOWED, "PB_TEST_REF": REFERENCED}
    runs = tmp / "runs"
    done = cli("run", str(exp), "--runs-dir", str(runs), "--run-seed", "1", cwd=tmp, env=env)
    assert done.returncode == 0, done.stderr
    run_dir = next(p for p in runs.iterdir() if not p.name.startswith("."))
    reported = cli("report", str(run_dir), cwd=tmp, env=env)
    assert reported.returncode == 0, reported.stderr
    secrets = {
        "DECLARED_TOKEN": DECLARED,
        "ALLOWED_KEY": ALLOWED,
        "PAIRBENCH_CANARY": canary_for(run_dir.name),
        "REF_TOKEN": REFERENCED,
    }
    return Ran(exp, run_dir, secrets, env)


def test_no_file_of_the_run_folder_holds_a_secret(ran: Ran) -> None:
    assert holding(ran.run_dir, ran.secrets) == []
    # ... and the agent did print them: every one is there, redacted by name.
    transcript = (ran.run_dir / "transcripts/leaky/read-issue-title/0.jsonl").read_text()
    for name in ran.secrets:
        assert f"[redacted:{name}]" in transcript
    for line in transcript.splitlines():
        json.loads(line)  # still JSON lines
    work = ran.run_dir / "work/leaky/read-issue-title/0.1"
    assert json.loads((work / "leak.txt").read_text()) == {
        name: f"[redacted:{name}]" for name in ran.secrets
    }
    assert "[redacted:ALLOWED_KEY]" in (work / "home/.agent/session.log").read_text()
    for name in ("report.md", "report.html", "summary.json", "journal.jsonl", "run.json"):
        assert (ran.run_dir / name).is_file()


def test_the_detector_still_reports_each_leak(ran: Ran) -> None:
    results = {r.arm: r for r in load_run(ran.run_dir).results}
    leaked = results["leaky"].security
    assert leaked is not None and leaked.secret_in_output is True
    assert leaked.secret_names == sorted(ran.secrets)
    assert set(leaked.secret_locations) == {"final_answer", "narration", "tool_call_arguments"}
    quiet = results["quiet"].security
    assert quiet is not None and quiet.secret_in_output is False and quiet.secret_names == []
    summary = json.loads((ran.run_dir / "summary.json").read_text())
    by_arm = {row["arm"]: row["secret_in_output"] for row in summary["security"]}
    assert (by_arm["leaky"]["k"], by_arm["leaky"]["n"]) == (1, 1)
    assert by_arm["quiet"]["k"] == 0


def test_run_json_names_secrets_without_their_values(ran: Ran) -> None:
    info = json.loads((ran.run_dir / "run.json").read_text())
    declared = {"name": "DECLARED_TOKEN", "sha256": _sha(DECLARED)}
    for env in (
        info["experiment_model"]["arms"]["leaky"]["agent"]["env"],
        info["agents"]["leaky"]["env"],
        info["identities"]["arms"]["leaky"]["env"],
    ):
        assert env == {
            "DECLARED_TOKEN": declared,
            "REF_TOKEN": "${env:PB_TEST_REF}",
            "MODE": "fast",
        }
    # The canonical hash is of the experiment with the reference, not the runner's value:
    # here PB_TEST_REF is unset or different, and the hash is the run's.
    assert os.environ.get("PB_TEST_REF") != REFERENCED
    assert load_experiment(ran.exp).canonical_hash == info["canonical_hash"]


def test_an_unset_reference_stops_the_run_before_anything_is_made(ran: Ran, tmp_path: Path) -> None:
    env = {k: v for k, v in ran.env.items() if k != "PB_TEST_REF"}
    runs = tmp_path / "runs"
    done = cli("run", str(ran.exp), "--runs-dir", str(runs), cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "agent.env.REF_TOKEN: '${env:PB_TEST_REF}' reads the runner's PB_TEST_REF" in done.stderr
    assert "Fix: export PB_TEST_REF=" in done.stderr and "Traceback" not in done.stderr
    assert not runs.exists() or list(runs.iterdir()) == []
    checked = cli("check", str(ran.exp), cwd=tmp_path, env=env)
    assert checked.returncode == 2 and "PB_TEST_REF, which is not set" in checked.stderr
    assert cli("check", str(ran.exp), cwd=tmp_path, env=ran.env).returncode == 0


def test_reporting_again_keeps_the_stored_security_verdicts(ran: Ran, tmp_path: Path) -> None:
    copy = tmp_path / ran.run_dir.name
    shutil.copytree(ran.run_dir, copy, symlinks=True)
    before = {r.arm: r.security for r in load_run(copy).results}
    summary_before = json.loads((copy / "summary.json").read_text())["security"]
    for _ in range(2):
        again = cli("report", str(copy), cwd=tmp_path, env=ran.env)
        assert again.returncode == 0, again.stderr
    assert {r.arm: r.security for r in load_run(copy).results} == before
    assert json.loads((copy / "summary.json").read_text())["security"] == summary_before
    # Why the verdict is stored, never recomputed: judged again from the redacted records,
    # the leak would vanish.
    leaky = next(r for r in load_run(copy).results if r.arm == "leaky")
    lines = (copy / "transcripts/leaky/read-issue-title/0.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert find_secrets(list(ran.secrets.values()), leaky.final_answer, events, None) == []
    assert before["leaky"] is not None and before["leaky"].secret_in_output is True


def test_the_folder_check_finds_a_planted_secret(ran: Ran, tmp_path: Path) -> None:
    copy = tmp_path / "planted"
    shutil.copytree(ran.run_dir, copy, symlinks=True)
    assert holding(copy, ran.secrets) == []
    (copy / "work" / "deep" / ".hidden").mkdir(parents=True)
    (copy / "work" / "deep" / ".hidden" / "raw.bin").write_bytes(b"\x00" + ALLOWED.encode())
    # As a transcript written without a redactor would hold it: JSON-escaped.
    with (copy / "transcripts/leaky/read-issue-title/0.jsonl").open("a") as handle:
        handle.write(json.dumps({"kind": "stdout", "line": DECLARED}) + "\n")
    assert holding(copy, ran.secrets) == [
        "transcripts/leaky/read-issue-title/0.jsonl: DECLARED_TOKEN",
        "work/deep/.hidden/raw.bin: ALLOWED_KEY",
    ]


def _sha(value: str) -> str:
    import hashlib

    return hashlib.sha256(value.encode("utf-8")).hexdigest()
