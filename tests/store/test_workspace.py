"""A workspace kept in the run folder: capped with a manifest, and hostile ones stored whole.

One real run (module-scoped) of a ``command`` agent that leaves the worst a workspace can
hold: a file over ``budget.workspace_kept``, a symlink loop, a symlink to ``/``, names
with a newline and invalid UTF-8, 1,000 nested folders. The run completes, every record
and the manifest verify, and the transcript, report, viewer and export all handle it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from pairbench import start_run, write_report
from pairbench.freeze import verify_run
from pairbench.store import Journal
from pairbench.store._events import AttemptFinished
from pairbench.store._export import export_bytes
from pairbench.store._load_run import load_run
from pairbench.store._walk import remove_tree
from pairbench.store._workspace import WorkspaceManifest, cap_workspace
from pairbench.view import create_app

CAP = 1 << 20
BIG = 3 << 20

_AGENT = r"""
import os
os.makedirs("out", exist_ok=True)
with open("out/report.txt", "w") as f:
    f.write("kept\n")
with open("big.bin", "wb") as f:  # over the 1 MiB cap
    f.write(b"z" * (3 << 20))
os.symlink("loop", "loop")
os.symlink("/", "root")
open("two\nlines.txt", "w").close()
open(b"bad-\xff.txt", "w").close()
os.mkdir("deep")
os.chdir("deep")
for _ in range(1000):
    os.mkdir("d")
    os.chdir("d")
open("end.txt", "w").close()
print("ok")
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("hostile")
    (root / "agent.py").write_text(_AGENT, encoding="utf-8")
    (root / "p.md").write_text("Answer.\n", encoding="utf-8")
    agent = {
        "adapter": "command",
        "settings": {"command": [sys.executable, str(root / "agent.py")]},
    }
    (root / "experiment.yaml").write_text(
        "id: hostile\nversion: '1'\ntrials: 1\n"
        f"budget: {{trial_timeout_s: 60, concurrency: 2, workspace_kept: {CAP}}}\n"
        f"agent: {json.dumps(agent)}\narms: {{a: {{}}, b: {{}}}}\n"
        "tasks:\n  - {id: t, prompt: p.md, grader: {name: exact-answer, args: {expect: ok}}}\n",
        encoding="utf-8",
    )
    done = start_run(root / "experiment.yaml", root / "runs", run_seed=1)
    assert done.status == "complete"
    yield done.run_dir
    remove_tree(done.run_dir / "work")  # pytest's own clean-up recurses per folder level


def test_an_oversized_workspace_keeps_a_manifest_instead_of_its_bytes(run: Path) -> None:
    results = load_run(run).results
    assert [r.outcome for r in results] == ["passed", "passed"], [r.reason for r in results]
    for r in results:
        kept = r.workspace
        assert kept is not None and kept.dropped_files == 1 and kept.dropped_bytes == BIG
        assert kept.cap_bytes == CAP and "budget.workspace_kept" in kept.summary()
        manifest = WorkspaceManifest.model_validate_json((run / kept.manifest).read_bytes())
        entries = {e.name: e for e in manifest.entries}
        assert not entries["big.bin"].kept and entries["big.bin"].size == BIG
        assert entries["big.bin"].sha256 == __import__("hashlib").sha256(b"z" * BIG).hexdigest()
        assert entries["out/report.txt"].kept and entries["root"].kind == "symlink"
        assert entries["two\\nlines.txt"].name_hex == b"two\nlines.txt".hex()
        assert entries["bad-\\xff.txt"].name_hex == b"bad-\xff.txt".hex()
        assert "deep/" + "d/" * 1000 + "end.txt" in entries
        work = run / kept.manifest.removesuffix(".manifest.json")
        assert not (work / "big.bin").exists() and (work / "out" / "report.txt").is_file()
        assert (work / "root").is_symlink()  # stored as a link: / itself never copied
    # The manifest is hashed on the attempt's journal line, and verify checks it.
    lines = [e for e in Journal.read(run / "journal.jsonl") if isinstance(e, AttemptFinished)]
    assert all(any(f.endswith(".manifest.json") for f in e.files) for e in lines)
    assert verify_run(run) == []
    sizes = sum(p.lstat().st_size for p in [run / "results", run / "work"])
    assert sizes < BIG


def test_a_changed_manifest_fails_verify(run: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run, copy, symlinks=True, ignore=shutil.ignore_patterns("work"))
    (copy / "work").mkdir()
    for result in load_run(run).results:
        assert result.workspace is not None
        manifest = run / result.workspace.manifest
        target = copy / result.workspace.manifest
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(manifest.read_bytes().replace(b'"kept": false', b'"kept": true'))
    assert {m.kind for m in verify_run(copy)} == {"recorded"}


def test_report_viewer_and_export_handle_the_hostile_workspace(run: Path) -> None:
    write_report(run)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "2 attempt(s) left a workspace over budget.workspace_kept: 2 file(s)" in report
    for fmt in ("csv", "jsonl"):
        assert export_bytes(run, fmt)
    app = create_app(run.parent, port=8765)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        listing = client.get(f"/runs/{run.name}/trials")
        page = client.get(f"/runs/{run.name}/trials/a/t/0")
    assert listing.status_code == 200 and page.status_code == 200
    assert "not kept" in page.text and "budget.workspace_kept" in page.text


def test_under_the_cap_nothing_is_touched(tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "f").write_bytes(b"x" * 10)
    manifest = tmp_path / "w.manifest.json"
    assert cap_workspace(work, manifest, tmp_path, cap=10) is None
    assert not manifest.exists() and (work / "sub" / "f").is_file()


def test_the_smallest_files_are_kept_while_they_fit(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name, size in (("a", 4), ("b", 4), ("c", 5), ("d", 1)):
        (work / name).write_bytes(b"x" * size)
    os.symlink("/etc/passwd", work / "link")
    kept = cap_workspace(work, tmp_path / "w.manifest.json", tmp_path, cap=10)
    assert kept is not None and (kept.dropped_files, kept.dropped_bytes) == (1, 5)
    assert sorted(p.name for p in work.iterdir()) == ["a", "b", "d", "link"]
    assert kept.manifest == "w.manifest.json"
