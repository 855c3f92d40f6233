"""Each lock pins its own study: one changed byte in one study re-freezes that study's lock
and no other's, leaves pairbench's harness hash as it was, and fails verify naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pairbench import start_run
from pairbench._errors import RunRefused
from pairbench.freeze import Lock, _hashing, _study, build_lock, verify_experiment, write_lock
from pairbench.spec import load_experiment
from pairbench.studies import load_study

LOCKED = ("mcp-transports", "mcp-transports-playwright", "webmcp-vs-pdf")
"""The built-in studies that ship a lock."""


def _copy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of pairbench's source that the harness and every study are hashed from."""
    real_root = _hashing.PACKAGE_ROOT
    copy = tmp_path / "pairbench"
    shutil.copytree(real_root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    real_source = _study.study_source

    def copied_source(name: str) -> tuple[str, Path]:
        package, path = real_source(name)
        return package, copy / path.relative_to(real_root)

    monkeypatch.setattr(_hashing, "PACKAGE_ROOT", copy)
    monkeypatch.setattr(_study, "study_source", copied_source)
    return copy


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def _locks() -> dict[str, Lock]:
    return {name: build_lock(load_experiment(load_study(name).experiment_path)) for name in LOCKED}


@pytest.mark.parametrize(
    ("changed", "rel"),
    [
        ("mcp-transports", "studies/mcp_transports/tracker_server.py"),
        ("mcp-transports-playwright", "studies/mcp_transports_playwright/site.py"),
        ("webmcp-vs-pdf", "studies/webmcp_vs_pdf/_scorer.py"),
    ],
)
def test_one_changed_byte_in_a_study_changes_its_lock_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str, rel: str
) -> None:
    copy = _copy_package(tmp_path, monkeypatch)
    before = _locks()
    assert all(lock.study is not None and lock.study.name == n for n, lock in before.items())
    _flip_last_byte(copy / rel)
    after = _locks()
    for name in LOCKED:
        assert after[name].harness == before[name].harness
        if name != changed:
            assert after[name] == before[name], name
    old, new = before[changed].study, after[changed].study
    assert old is not None and new is not None and old.sha256 != new.sha256
    assert after[changed].model_copy(update={"study": old}) == before[changed]


def test_the_study_protocol_stays_in_the_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _copy_package(tmp_path, monkeypatch)
    before = _locks()
    _flip_last_byte(copy / "studies" / "_study.py")  # the hooks the core calls: pairbench's
    after = _locks()
    for name in LOCKED:
        assert after[name].harness != before[name].harness
        assert after[name].study == before[name].study


def test_the_study_is_hashed_deterministically_without_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _copy_package(tmp_path, monkeypatch)
    first = _study.study_identity("webmcp-vs-pdf")
    cache = copy / "studies" / "webmcp_vs_pdf" / "__pycache__"
    cache.mkdir()
    (cache / "_scorer.cpython-312.pyc").write_bytes(b"\x00bytecode")
    (copy / "studies" / "webmcp_vs_pdf" / "stray.pyc").write_bytes(b"\x00bytecode")
    again = _study.study_identity("webmcp-vs-pdf")
    assert again == first
    assert (first.name, first.version, first.package) == (
        "webmcp-vs-pdf",
        load_study("webmcp-vs-pdf").version,
        "pairbench.studies.webmcp_vs_pdf",
    )
    assert first.sha256 == _hashing.tree_sha256(copy / "studies" / "webmcp_vs_pdf")


def _held_out_experiment(root: Path) -> Path:
    """A small experiment of the mcp-transports study with a held-out task (no servers)."""
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "q.md").write_text("Answer ok.\n", encoding="utf-8")
    (root / "experiment.yaml").write_text(
        """id: study-locked
version: "1"
study: mcp-transports
trials: 1
agent: {adapter: command, settings: {command: [python3, -c, "print('ok')"], stdin: none}}
arms: {a: {}, b: {}}
tasks:
  - id: held
    prompt: prompts/q.md
    grader: {name: contains, args: {expect: ok}}
    case_set: held-out
""",
        encoding="utf-8",
    )
    return root / "experiment.yaml"


def test_a_changed_study_fails_verify_naming_it_and_refuses_held_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    experiment = _held_out_experiment(tmp_path / "exp")
    copy = _copy_package(tmp_path, monkeypatch)
    _, _, lock = write_lock(load_experiment(experiment), servers=False)
    assert lock.study is not None and lock.study.name == "mcp-transports"
    assert verify_experiment(experiment) == []
    _flip_last_byte(copy / "studies" / "mcp_transports" / "_graders.py")
    mismatches = verify_experiment(experiment)
    assert [(m.kind, m.path) for m in mismatches] == [("study", "mcp-transports")]
    said = str(mismatches[0])
    assert said.startswith("study changed (its version or source): mcp-transports: expected 1 ")
    runs = tmp_path / "runs"
    for accept in (False, True):  # a changed study is the code under study, never accepted
        with pytest.raises(RunRefused, match=r"study changed .*: mcp-transports"):
            start_run(experiment, runs, case_set="held-out", accept_harness_change=accept)
    assert not runs.exists() or not any(runs.iterdir())


def test_a_lock_frozen_before_scopes_still_verifies_and_still_sees_a_study_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock written before harness scopes (no ``scope``, no ``study``: its harness hash
    covered the whole package) verifies as it was frozen, and a changed study, which that
    hash covered, still fails it, as a harness change."""
    from pairbench.freeze._hashing import LOCK_NAME

    experiment = _held_out_experiment(tmp_path / "exp")
    copy = _copy_package(tmp_path, monkeypatch)
    old = build_lock(load_experiment(experiment), scope=None)
    assert old.harness.scope is None and old.study is None
    assert (
        old.harness.source_sha256 != build_lock(load_experiment(experiment)).harness.source_sha256
    )
    (experiment.parent / LOCK_NAME).write_text(old.model_dump_json(indent=2), encoding="utf-8")
    assert verify_experiment(experiment) == []
    _flip_last_byte(copy / "studies" / "mcp_transports" / "_graders.py")
    assert [m.kind for m in verify_experiment(experiment)] == ["harness"]
