"""`verify RUN_DIR` catches every edit to what a report counts, naming the file and line."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from helpers.common import cli_here, relink_journal
from pairbench import start_run, write_report
from pairbench._errors import RunDirError
from pairbench.freeze import PARTIAL, check_run_integrity, verify_run
from pairbench.store import Journal
from pairbench.store._events import AttemptFinished

pytestmark = pytest.mark.whole_run

AGENT = "import sys; sys.stdin.read(); print('ok')"


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with passes (task t) and failures (task u), and its reports."""
    root = tmp_path_factory.mktemp("tamper")
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(
        f"""id: tamper
version: "1"
trials: 2
agent: {{adapter: command, settings: {{command: [python3, -c, "{AGENT}"]}}}}
arms: {{a: {{}}, b: {{}}}}
tasks:
  - {{id: t, prompt: p.md, grader: {{name: exact-answer, args: {{expect: ok}}}}}}
  - {{id: u, prompt: p.md, grader: {{name: exact-answer, args: {{expect: other}}}}}}
""",
        encoding="utf-8",
    )
    run_dir = start_run(root / "experiment.yaml", root / "runs", run_seed=1).run_dir
    write_report(run_dir, bootstrap_reps=200)
    assert verify_run(run_dir) == []
    return run_dir


@pytest.fixture
def run_dir(reported: Path, tmp_path: Path) -> Path:
    """A fresh copy of the reported run for each test to damage."""
    import shutil

    copy = tmp_path / reported.name
    shutil.copytree(reported, copy, symlinks=True)
    return copy


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _first_failed_line(run_dir: Path) -> int:
    for number, event in enumerate(Journal.read(run_dir / "journal.jsonl"), start=1):
        if isinstance(event, AttemptFinished) and event.outcome == "failed":
            return number
    raise AssertionError("the run has no failed trial")


def _flip_outcome(run_dir: Path) -> int:
    """failed -> passed in one journal line's outcome and its row, as a hand edit would."""
    number = _first_failed_line(run_dir)
    lines = _lines(run_dir / "journal.jsonl")
    lines[number - 1] = lines[number - 1].replace(b'"failed"', b'"passed"')
    (run_dir / "journal.jsonl").write_bytes(b"".join(lines))
    return number


def test_a_flipped_outcome_names_the_line_after_it(run_dir: Path) -> None:
    number = _flip_outcome(run_dir)
    found = {(m.kind, m.path) for m in verify_run(run_dir)}
    assert ("journal", f"journal.jsonl:{number + 1}") in found


def test_a_flipped_outcome_with_the_chain_relinked_and_the_table_deleted(run_dir: Path) -> None:
    # The forger re-links the whole chain: the row no longer matches its result file.
    number = _flip_outcome(run_dir)
    relink_journal(run_dir)
    (run_dir / "trials.npz").unlink()
    found = {(m.kind, m.path) for m in verify_run(run_dir)}
    assert ("row", f"journal.jsonl:{number}") in found
    # And run.json still verifies: the chain was re-linked from its real hash.
    assert not any(m.kind == "run.json" for m in verify_run(run_dir))


def _resave_table_all_passed(run_dir: Path) -> None:
    path = run_dir / "trials.npz"
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    outcomes = meta["categories"]["outcome"]
    if "passed" not in outcomes:
        outcomes.append("passed")
    arrays["col.outcome"] = np.full_like(arrays["col.outcome"], outcomes.index("passed"))
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def test_a_resaved_table_with_every_outcome_passed(run_dir: Path) -> None:
    _resave_table_all_passed(run_dir)
    found = [(m.kind, m.path) for m in verify_run(run_dir)]
    assert found == [("table", "trials.npz")]


def test_a_report_rebuilt_from_a_forged_table_is_caught(run_dir: Path) -> None:
    _resave_table_all_passed(run_dir)
    write_report(run_dir, bootstrap_reps=200)  # the cache is trusted: the report shows it
    found = {(m.kind, m.path) for m in verify_run(run_dir)}
    assert ("table", "trials.npz") in found


@pytest.mark.parametrize(("field", "value"), [("run_seed", 2), ("canonical_hash", "0" * 64)])
def test_an_edited_run_json_breaks_line_one(run_dir: Path, field: str, value: object) -> None:
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    info[field] = value
    (run_dir / "run.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    found = [(m.kind, m.path) for m in verify_run(run_dir)]
    assert ("run.json", "journal.jsonl:1") in found


def test_a_status_written_into_run_json_breaks_line_one(run_dir: Path) -> None:
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    info["status"] = "complete"
    (run_dir / "run.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    assert ("run.json", "journal.jsonl:1") in {(m.kind, m.path) for m in verify_run(run_dir)}


def test_a_deleted_journal_line_is_named(run_dir: Path) -> None:
    lines = _lines(run_dir / "journal.jsonl")
    del lines[3]
    (run_dir / "journal.jsonl").write_bytes(b"".join(lines))
    found = {(m.kind, m.path) for m in verify_run(run_dir)}
    assert ("journal", "journal.jsonl:4") in found


def _report_files(run_dir: Path) -> list[str]:
    skip = {".lock"}
    return sorted(
        p.relative_to(run_dir).as_posix()
        for p in run_dir.rglob("*")
        if p.is_file() and p.name not in skip and p.relative_to(run_dir).parts[0] != "work"
    )


def _change_one_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    if path.suffix == ".npz":
        # Inside an array's data, past the zip headers: a silent change to a number.
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("col.outcome.npy")
        start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 128
        data[start] ^= 0x01
    else:
        digits = [m.start() for m in re.finditer(rb"[0-9]", bytes(data))]
        at = digits[len(digits) // 2]
        data[at] = ord("1") if data[at] != ord("1") else ord("2")
    path.write_bytes(bytes(data))


def _verify_names(run_dir: Path, rel: str) -> bool:
    """Whether verifying ``run_dir`` fails naming ``rel`` (or a journal line)."""
    try:
        said = " ".join(str(m) for m in verify_run(run_dir))
    except RunDirError as exc:  # a file that no longer parses: one clear error naming it
        said = str(exc)
    return rel.split("/")[-1] in said or "journal.jsonl:" in said


def test_one_byte_changed_in_any_file_a_report_depends_on(reported: Path, tmp_path: Path) -> None:
    import shutil

    files = _report_files(reported)
    assert {"run.json", "journal.jsonl", "lock.json", "trials.npz", "summary.json"} <= set(files)
    assert any(f.startswith("results/") for f in files)
    assert any(f.startswith("transcripts/") for f in files)
    missed = []
    for rel in files:
        copy = tmp_path / rel.replace("/", "_")
        shutil.copytree(reported, copy, symlinks=True)
        _change_one_byte(copy / rel)
        if not _verify_names(copy, rel):
            missed.append(rel)
        if rel in {"run.json", "journal.jsonl", "trials.npz", "report.md"}:
            # The command itself, for a few: exit 1, the file named, no traceback.
            done = cli_here("verify", str(copy), cwd=tmp_path)
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
            assert rel in done.stderr or "journal.jsonl:" in done.stderr, done.stderr
    assert missed == []


def test_a_run_from_before_the_chain_gets_a_partial_verification(run_dir: Path) -> None:
    # Strip the links and the file records, as a journal written by an earlier pairbench
    # has none.
    lines = []
    for raw in _lines(run_dir / "journal.jsonl"):
        event = json.loads(raw)
        if event["event"] == "files_recorded":
            continue
        event.pop("prev")
        lines.append((json.dumps(event, sort_keys=True) + "\n").encode("utf-8"))
    (run_dir / "journal.jsonl").write_bytes(b"".join(lines))
    (run_dir / "trials.npz").unlink()
    for name in ("summary.json", "report.md", "report.html"):
        (run_dir / name).unlink()
    check = check_run_integrity(run_dir)
    assert check.partial == PARTIAL and check.mismatches == []
    done = cli_here("verify", str(run_dir), cwd=run_dir)
    assert done.returncode == 0, done.stderr
    assert "partial verification: written before journal chaining" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_reports_are_byte_deterministic(run_dir: Path) -> None:
    before = {n: (run_dir / n).read_bytes() for n in ("summary.json", "report.md", "report.html")}
    write_report(run_dir, bootstrap_reps=200)
    after = {n: (run_dir / n).read_bytes() for n in before}
    assert before == after
    assert json.loads(before["summary.json"])["run"]["journal_head"] is not None
