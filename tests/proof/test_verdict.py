"""The verdict on hand-written records: precedence, mounted_hash, coverage, map; and the log
reader's handling of torn and corrupt lines."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pairbench.proof import (
    MountedFile,
    MountMismatch,
    ProofError,
    read_mounted,
    require_mounted,
    verdict,
)
from pairbench.source import Manifest, ManifestEntry

ROOT = "/w/arm"
A, B, C = "a" * 64, "b" * 64, "c" * 64


def _manifest() -> Manifest:
    entries = [
        ManifestEntry(path="minirt/__init__.py", mode="100644", sha256=A),
        ManifestEntry(path="minirt/core.py", mode="100644", sha256=B),
        ManifestEntry(path="minirt/link.py", mode="120000", sha256=C),  # a symlink: not counted
        ManifestEntry(path="minirt/prompt.txt", mode="100644", sha256=C),
    ]
    return Manifest(commit="0" * 40, include=["minirt/**"], exclude=[], entries=entries, sha256=A)


def _load(path: str, sha: str, module: str | None = None, kind: str = "source") -> MountedFile:
    return MountedFile.model_validate(
        {"pid": 7, "kind": kind, "path": path, "sha256": sha, "size": 1, "module": module}
    )


START = MountedFile(pid=7, kind="start", ppid=1, detail="/usr/bin/python3")
INIT = _load(f"{ROOT}/minirt/__init__.py", A, "minirt")
CORE = _load(f"{ROOT}/minirt/core.py", B, "minirt.core")


def test_honest_loads_are_ok_and_mounted_hash_follows_its_definition() -> None:
    result = verdict([START, INIT, CORE, INIT], _manifest(), ROOT, ["minirt"])
    assert (result.status, result.coverage, result.processes) == ("ok", "2/2", 1)
    pairs = [["minirt/__init__.py", A], ["minirt/core.py", B]]
    expected = hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()
    assert result.mounted_hash == expected
    # Order and repetition of records do not change it.
    assert verdict([CORE, INIT, START], _manifest(), ROOT, ["minirt"]) == result


def test_shadowed_outranks_mismatch_which_outranks_unavailable() -> None:
    shadow = _load("/elsewhere/minirt/util.py", A, "minirt.util")
    edited = _load(f"{ROOT}/minirt/core.py", C, "minirt.core")
    error = MountedFile(pid=7, kind="error", detail="get_code: OSError: x")
    manifest = _manifest()
    assert verdict([START, INIT, shadow, edited, error], manifest, ROOT, ["minirt"]).status == (
        "shadowed"
    )
    assert verdict([START, INIT, edited, error], manifest, ROOT, ["minirt"]).status == "mismatch"
    assert verdict([START, INIT, error], manifest, ROOT, ["minirt"]).status == "unavailable"
    assert verdict([], manifest, ROOT, ["minirt"]).summary.startswith("no probe record")
    # A module of an undeclared package outside the root is none of the proof's business.
    other = _load("/usr/lib/python3/json/__init__.py", C, "json")
    assert verdict([START, INIT, other], manifest, ROOT, ["minirt"]).status == "ok"


def test_an_opened_production_file_is_checked_but_not_hashed() -> None:
    opened_ok = _load(f"{ROOT}/minirt/prompt.txt", C, kind="opened")
    opened_bad = _load(f"{ROOT}/minirt/prompt.txt", A, kind="opened")
    ok = verdict([START, INIT, opened_ok], _manifest(), ROOT, ["minirt"])
    assert ok.status == "ok"
    assert ok.mounted_hash == verdict([START, INIT], _manifest(), ROOT, ["minirt"]).mounted_hash
    bad = verdict([START, INIT, opened_bad], _manifest(), ROOT, ["minirt"])
    assert [(p.reason, p.path) for p in bad.problems] == [("content", "minirt/prompt.txt")]


def test_map_translates_the_longest_matching_prefix() -> None:
    installed = _load("/venv/site-packages/minirt/core.py", B, "minirt.core")
    mapping = {"/venv": "wrong", "/venv/site-packages/minirt": "minirt"}
    result = verdict([START, installed], _manifest(), ROOT, ["minirt"], map=mapping)
    assert (result.status, result.files) == ("ok", ["minirt/core.py"])
    container = _load("/app/minirt/core.py", B, "minirt.core")
    result = verdict([START, container], _manifest(), ROOT, ["minirt"], map={"/app/": ""})
    assert (result.status, result.files) == ("ok", ["minirt/core.py"])


def test_require_mounted_names_every_file_and_lets_unavailable_pass() -> None:
    shadow = _load("/elsewhere/minirt/__init__.py", A, "minirt")
    edited = _load(f"{ROOT}/minirt/core.py", C, "minirt.core")
    result = verdict([START, shadow, edited], _manifest(), ROOT, ["minirt"])
    with pytest.raises(MountMismatch) as caught:
        require_mounted(result)
    message = str(caught.value)
    assert "minirt shadowed: loaded from /elsewhere/minirt/__init__.py" in message
    assert f"minirt/core.py: sha256 {C}, manifest {B}" in message
    assert len(caught.value.problems) == 2
    require_mounted(verdict([], _manifest(), ROOT, ["minirt"]))  # unavailable: no raise


def test_read_mounted_drops_a_torn_last_line_and_refuses_a_corrupt_one(tmp_path: Path) -> None:
    log = tmp_path / "mounted.jsonl"
    assert read_mounted(log) == []
    lines = [json.dumps(r.model_dump(exclude_defaults=True)) for r in (START, INIT)]
    log.write_text("\n".join(lines) + "\n" + lines[1][:20])
    assert read_mounted(log) == [START, INIT]
    log.write_text(lines[0] + "\nnot json\n" + lines[1] + "\n")
    with pytest.raises(ProofError, match=r"mounted.jsonl: line 2 is not a probe record"):
        read_mounted(log)
