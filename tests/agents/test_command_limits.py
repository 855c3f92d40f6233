"""Hostile subjects against the command agent's declared limits: real processes, one run.

Each arm misbehaves in its own way; one run holds them all, so each test also shows that
the run went on past the attempt, completed, and wrote its report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.common import skip_outside_ci
from pairbench import start_run, write_report
from pairbench._cgroup import available
from pairbench.cli import app
from pairbench.store._answer import CUT_MARKER

pytestmark = pytest.mark.whole_run

GIB_NO_NEWLINE = (
    "import sys\nb = b'x' * (1 << 20)\nfor _ in range(1024): sys.stdout.buffer.write(b)"
)
BINARY = (
    "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 64 + b'\\xff\\xfe\\xc3\\n\\x00ok')\n"
    "sys.stderr.buffer.write(b'\\xe2\\x82 cut mid-character')"
)
LONG_ANSWER = "import sys\nfor i in range(30000): print(f'line {i} \\x01\\x02 ' + 'y' * 80)"
BIG_FILE = "head -c 2097152 /dev/zero > big; echo still here"
# 2 GiB, as a user's agent would write it: a MiB at a time, and sparse (one byte at 2 GiB,
# which costs no disk and so shows the limit is on the file's size, not the disk's use).
TWO_GIB = "b = b'x' * (1 << 20)\nwith open('big', 'wb') as f:\n    for _ in range(2048): f.write(b)"
TWO_GIB_SPARSE = "with open('big', 'wb') as f:\n    f.seek(2 << 30)\n    f.write(b'x')"
SLEEPERS = "for i in $(seq 2000); do sleep 30 & done; wait"
HOG = "b = []\nwhile True: b.append(b'x' * (16 << 20))"


def _py(script: str, limits: str = "") -> str:
    agent = json.dumps({"adapter": "command", "settings": {"command": ["python3", "-c", script]}})
    return f"{{agent: {agent}{', limits: ' + limits if limits else ''}}}"


def _sh(script: str, limits: str = "") -> str:
    agent = json.dumps({"adapter": "command", "settings": {"command": ["sh", "-c", script]}})
    return f"{{agent: {agent}{', limits: ' + limits if limits else ''}}}"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("limits")
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    arms = {
        "fine": _py("print('ok')"),
        "spew_small": _py(GIB_NO_NEWLINE, "{output_per_stream: 1 MiB}"),
        "spew_default": _py(GIB_NO_NEWLINE),
        "binary": _py(BINARY),
        "long_answer": _py(LONG_ANSWER, "{final_answer: 64 KiB}"),
        "big_file": _sh(BIG_FILE, "{file_size: 1 MiB}"),
        "file_2gib": _py(TWO_GIB, "{file_size: 8 MiB}"),
        "sparse_2gib": _py(TWO_GIB_SPARSE),
        "sleepers": _sh(SLEEPERS),
        "hog": _py(HOG, "{memory: 64 MiB}"),
    }
    body = "\n".join(f"  {name}: {spec}" for name, spec in arms.items())
    exp = root / "experiment.yaml"
    exp.write_text(
        "id: hostile\nversion: '1'\ntrials: 1\n"
        "budget: {trial_timeout_s: 60, concurrency: 2}\n"
        "agent: {adapter: command, settings: {command: [python3, -c, \"print('ok')\"]}}\n"
        f"arms:\n{body}\n"
        "tasks:\n  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    outcome = start_run(exp, root / "runs", run_seed=3)
    write_report(outcome.run_dir)
    results = {r.arm: r for r in outcome.results}
    return {"outcome": outcome, "results": results, "exp": exp}


def _files(run: dict[str, Any], arm: str, pattern: str) -> list[Path]:
    return sorted(Path(run["outcome"].run_dir).rglob(pattern), key=str)


def test_the_run_completes_past_every_hostile_attempt_and_writes_its_report(
    run: dict[str, Any],
) -> None:
    assert run["outcome"].status == "complete"
    assert run["results"]["fine"].outcome == "passed"
    arms = json.loads((Path(run["outcome"].run_dir) / "summary.json").read_text())["arms"]
    counts = {a["arm"]: a["outcomes"] for a in arms}
    assert counts["spew_small"]["output_limit"] == 1
    assert counts["big_file"]["disk_limit"] == 1
    # The report's outcome table: a column per limit some arm reached, and the counts in it
    # (every report also has a fixed note naming all four kinds, so the words alone prove
    # nothing).
    lines = (Path(run["outcome"].run_dir) / "report.md").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("| Arm | passed |"))
    columns = [c.strip() for c in lines[at].strip("|").split("|")]
    rows: dict[str, dict[str, str]] = {}
    for line in lines[at + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(columns, cells, strict=True))
    reached = {kind for c in counts.values() for kind, n in c.items() if n and "limit" in kind}
    assert {"output_limit", "disk_limit", "memory_limit"} <= reached
    assert reached == {c for c in columns if c.endswith("_limit")}
    for arm, outcomes in counts.items():
        for kind in reached:
            assert rows[arm][kind] == str(outcomes[kind]), (arm, kind)
    assert rows["spew_small"]["output_limit"] == rows["hog"]["memory_limit"] == "1"


def _story(run: dict[str, Any], arm: str) -> str:
    """What the attempt's transcript says happened, and when: a failure's first clue (CI
    once saw spew_default hit its 60 s timeout where it takes 0.3 s here)."""
    path = next(p for p in _files(run, arm, "*.jsonl") if f"/{arm}/" in str(p))
    told: list[str] = []
    for event in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        step = f"{event['kind']}@{event['t']:.2f}"
        if not told or told[-1].split("@")[0] != event["kind"]:
            told.append(step)
        else:
            told[-1] = f"{told[-1].split(' ')[0]} ... {step}"
    return " | ".join(told)


def test_a_gib_of_stdout_without_a_newline_stops_at_the_output_limit(run: dict[str, Any]) -> None:
    for arm, limit in (("spew_small", 1 << 20), ("spew_default", 16 << 20)):
        result = run["results"][arm]
        assert result.outcome == "output_limit", f"{result.reason}: {_story(run, arm)}"
        assert "stdout passed the" in result.reason
        transcript = next(
            p for p in _files(run, arm, "*.jsonl") if f"/{arm}/" in str(p) or arm in p.name
        )
        ends = [
            e
            for e in map(json.loads, transcript.read_text(encoding="utf-8").splitlines())
            if e["kind"] == "stream_end" and e["stream"] == "stdout"
        ]
        assert ends and ends[0]["bytes"] == limit
        # The transcript holds the limit's worth, not the gigabyte.
        assert transcript.stat().st_size < limit * 1.2


def test_binary_and_invalid_utf8_output_is_kept_as_replacement_text(run: dict[str, Any]) -> None:
    result = run["results"]["binary"]
    assert result.outcome == "failed"  # graded as an answer: it is just not "ok"
    assert result.final_answer is not None and "\ufffd" in result.final_answer


def test_a_long_answer_is_stored_as_head_and_tail_with_its_size_and_hash(
    run: dict[str, Any],
) -> None:
    result = run["results"]["long_answer"]
    assert result.outcome == "failed"
    assert result.final_answer is not None
    assert CUT_MARKER in result.final_answer and "sha256 " in result.final_answer
    assert result.final_answer.startswith("line 0 ")
    assert result.final_answer.rstrip().endswith("y" * 80)
    for path in _files(run, "long_answer", "*.json"):
        assert path.stat().st_size < 1.1 * (1 << 20), path


def test_a_file_past_the_size_limit_is_a_disk_limit(run: dict[str, Any]) -> None:
    result = run["results"]["big_file"]
    assert result.outcome == "disk_limit", result.reason
    assert "1 MiB file size limit" in result.reason


def test_a_two_gib_file_stops_at_the_file_size_limit_and_is_not_kept(run: dict[str, Any]) -> None:
    for arm, limit in (("file_2gib", "8 MiB"), ("sparse_2gib", "512 MiB")):
        result = run["results"][arm]
        assert result.outcome == "disk_limit", (arm, result.reason)
        assert f"{limit} file size limit" in result.reason
        kept = sum(p.stat().st_size for p in _files(run, arm, "*") if p.is_file() and arm in str(p))
        assert kept < 16 << 20, (arm, kept)


def test_two_thousand_sleeping_processes_reach_the_process_limit(run: dict[str, Any]) -> None:
    if "pids" not in available():
        # CI's machines have one (make test runs as root, where RLIMIT_NPROC is ignored).
        skip_outside_ci("no writable pids cgroup here: RLIMIT_NPROC, which root ignores")
    result = run["results"]["sleepers"]
    assert result.outcome == "process_limit", result.reason
    # Stopped when the limit fired, not at the sleepers' 30 s or the trial timeout.
    assert result.metrics is not None and result.metrics.wall_ms.value is not None
    assert result.metrics.wall_ms.value < 20_000


def test_a_memory_hog_reaches_the_memory_limit(run: dict[str, Any]) -> None:
    result = run["results"]["hog"]
    assert result.outcome == "memory_limit", result.reason


def test_check_prints_the_limits_in_force_per_arm(run: dict[str, Any]) -> None:
    shown = CliRunner().invoke(app, ["check", str(run["exp"])])
    assert shown.exit_code == 0, shown.output
    assert "spew_small: output per stream 1 MiB" in shown.output
    assert "hog: output per stream 16 MiB, final answer stored 1 MiB, memory 64 MiB" in shown.output
    assert "enforced by:" in shown.output and "file size RLIMIT_FSIZE" in shown.output
    assert "workspace kept in the run folder: 256 MiB" in shown.output


LIMITED = {
    "spew_small": "output_limit",
    "big_file": "disk_limit",
    "file_2gib": "disk_limit",
    "hog": "memory_limit",
}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_every_export_carries_each_limit_outcome(
    run: dict[str, Any], fmt: str, tmp_path: Path
) -> None:
    out = tmp_path / f"trials.{fmt}"
    done = CliRunner().invoke(
        app, ["export", str(run["outcome"].run_dir), "--format", fmt, "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    if fmt == "parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(out).to_pylist()
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    else:
        import csv

        with out.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    outcomes = {row["arm"]: row["outcome"] for row in rows}
    for arm, kind in LIMITED.items():
        assert outcomes[arm] == kind, (fmt, arm, outcomes[arm])


def test_the_viewer_counts_and_shows_each_limit_outcome(run: dict[str, Any]) -> None:
    from starlette.testclient import TestClient

    from pairbench.view import create_app

    run_dir = Path(run["outcome"].run_dir)
    client = TestClient(create_app(run_dir.parent, port=8765), base_url="http://127.0.0.1:8765")
    report = client.get(f"/runs/{run_dir.name}/report")
    assert report.status_code == 200
    for kind in set(LIMITED.values()):
        assert kind in report.text, kind
    for arm, kind in LIMITED.items():
        listing = client.get(
            f"/runs/{run_dir.name}/trials.json", params={"arm": arm, "outcome": kind}
        ).json()
        (line,) = listing["trials"]
        assert (line["arm"], line["outcome"]) == (arm, kind)
        page = client.get(line["url"])
        assert page.status_code == 200 and kind in page.text
        assert run["results"][arm].reason.split(" (")[0] in page.text
