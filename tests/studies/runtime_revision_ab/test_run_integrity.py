"""A runtime-revision-ab run against its own operator and its own runtime: every proxy log
and ``campaigns.json`` is hashed into the journal as written (an edited byte, or an added
log, fails ``verify`` naming the file), and a runtime that swaps its scenario's acceptance
script for ``exit 0`` mid-run stops the run naming the script, never scored a pass."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.common import cli_here
from pairbench import start_run
from pairbench.store import RunDir
from pairbench.testing.chat_double import ChatScript, start_chat_double
from studies.runtime_revision_ab.test_own_runtime import (
    ESCAPE,
    FILES,
    PYTHON,
    SCENARIO,
    _experiment,
    _runtime_repo,
)

pytestmark = pytest.mark.whole_run


@pytest.fixture(scope="module")
def double() -> Iterator[str]:
    script = ChatScript.model_validate_json((FILES / "script.json").read_text(encoding="utf-8"))
    with start_chat_double(script) as server:
        yield server.url


def _own_scenario(tmp_path: Path, double: str, change: tuple[str, str, str]) -> Path:
    """The team's own scenario sc-1 (its accept.py in ``files:``), run by tinyrt."""
    folder = tmp_path / "exp" / "scenarios" / "sc-1"
    for name, text in SCENARIO.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    repo = tmp_path / "runtime"
    commits = _runtime_repo(repo, FILES, ("tinyrt.py",), change)
    exp = _experiment(tmp_path / "exp", repo, commits, double, PYTHON, events=False,
                      task_ids=("sc-1",), own=", scenarios: scenarios")  # fmt: skip
    text = exp.read_text(encoding="utf-8")
    exp.write_text(text.replace("tasks:\n", "files: [scenarios]\ntasks:\n"), encoding="utf-8")
    return exp


def _change_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def test_an_edited_proxy_log_or_campaigns_json_fails_verify_naming_it(
    tmp_path: Path, double: str
) -> None:
    exp = _own_scenario(tmp_path, double, ESCAPE)
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert [r.outcome for r in run.results] == ["passed", "passed"], [r.reason for r in run.results]
    assert cli_here("report", str(run.run_dir), cwd=tmp_path).returncode == 0
    done = cli_here("verify", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    recorded = {
        rel
        for event in RunDir(run.run_dir).journal_events()
        if event.event == "files_recorded"
        for rel in getattr(event, "files", {})
    }
    logs = ["proxy/exchanges.jsonl", "proxy/interference.jsonl", "campaigns.json"]
    assert set(logs) <= recorded
    for rel in logs:
        copy = tmp_path / rel.replace("/", "_")
        shutil.copytree(run.run_dir, copy)
        _change_one_byte(copy / rel)
        done = cli_here("verify", str(copy), cwd=tmp_path)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"recorded: {rel}: expected" in done.stderr, done.stderr
    # A log added after the run (a second exchange file, say) is named too.
    extra = run.run_dir / "proxy" / "exchanges-2.jsonl"
    extra.write_text("{}\n", encoding="utf-8")
    done = cli_here("verify", str(run.run_dir), cwd=tmp_path)
    assert done.returncode == 1 and "unrecorded: proxy/exchanges-2.jsonl" in done.stderr


def test_a_runtime_that_swaps_its_acceptance_script_mid_run_stops_the_run_naming_it(
    tmp_path: Path, double: str
) -> None:
    accept = tmp_path / "exp" / "scenarios" / "sc-1" / "accept.py"
    # The motivated runtime: the candidate replaces the scenario's acceptance by `exit 0`.
    swap = (
        "tinyrt.py",
        "def main() -> int:\n",
        f"def main() -> int:\n    Path({str(accept)!r}).write_text('raise SystemExit(0)\\n')\n",
    )
    exp = _own_scenario(tmp_path, double, swap)
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert run.status.startswith("stopped"), run.status
    assert accept.read_text(encoding="utf-8") == "raise SystemExit(0)\n"  # it did swap it
    kept = sorted((run.run_dir / "infra" / "candidate").rglob("*.json"))
    assert kept, "the candidate's attempt was not kept as infra"
    reasons = [json.loads(p.read_bytes())["reason"] for p in kept]
    assert all("frozen benchmark changed" in r and "scenarios/sc-1/accept.py" in r for r in reasons)
    assert "during" in reasons[0]
    # No candidate attempt was scored against the swapped acceptance.
    scored = [r for r in run.results if r.arm == "candidate" and r.outcome == "passed"]
    assert scored == []


def test_a_swapped_built_in_acceptance_script_stops_the_run_naming_it(
    tmp_path: Path, double: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study's own scenarios live in pairbench's installation, not in the experiment's
    folder: the study names them to the guard (``Study.guarded``), so a runtime that swaps
    AR-007's acceptance for ``exit 0`` stops the run the same way."""
    from pairbench.studies.runtime_revision_ab import _scenario

    # A copy stands in for the installed scenarios, so the test edits no installed file.
    installed = tmp_path / "installed" / "scenarios"
    shutil.copytree(_scenario.SCENARIOS_DIR, installed, ignore=shutil.ignore_patterns("__py*"))
    monkeypatch.setattr(_scenario, "SCENARIOS_DIR", installed)
    accept = installed / "ar007" / "accept.py"
    swap = (
        "tinyrt.py",
        "def main() -> int:\n",
        f"def main() -> int:\n    Path({str(accept)!r}).write_text('raise SystemExit(0)\\n')\n",
    )
    repo = tmp_path / "runtime"
    commits = _runtime_repo(repo, FILES, ("tinyrt.py",), swap)
    exp = _experiment(tmp_path / "exp", repo, commits, double, PYTHON, events=False,
                      task_ids=("ar-007",))  # fmt: skip
    run = start_run(exp, tmp_path / "runs", run_seed=3, stage="screening")
    assert run.status.startswith("stopped"), run.status
    assert accept.read_text(encoding="utf-8") == "raise SystemExit(0)\n"  # it did swap it
    kept = sorted((run.run_dir / "infra" / "candidate").rglob("*.json"))
    reasons = [json.loads(p.read_bytes())["reason"] for p in kept]
    named = "study runtime-revision-ab: scenarios/ar007/accept.py"
    assert reasons and all("frozen benchmark changed" in r and named in r for r in reasons)
    assert [r for r in run.results if r.arm == "candidate" and r.outcome == "passed"] == []


def test_the_study_names_the_scenarios_each_arm_runs_to_the_guard(tmp_path: Path) -> None:
    from pairbench.spec import load_experiment
    from pairbench.studies import load_study
    from pairbench.studies.runtime_revision_ab import _scenario

    hook = load_study("runtime-revision-ab").guarded
    assert hook is not None
    commits = _runtime_repo(tmp_path / "rt", FILES, ("tinyrt.py",), ESCAPE)
    upstream = "http://127.0.0.1:9"
    exp = _experiment(tmp_path / "exp", tmp_path / "rt", commits, upstream, PYTHON, events=False)
    assert hook(load_experiment(exp)) == {"scenarios": _scenario.SCENARIOS_DIR}
    own = _experiment(tmp_path / "own", tmp_path / "rt", commits, upstream, PYTHON, events=False,
                      task_ids=("sc-1",), own=", scenarios: scenarios")  # fmt: skip
    assert hook(load_experiment(own)) == {"scenarios scenarios": tmp_path / "own" / "scenarios"}
