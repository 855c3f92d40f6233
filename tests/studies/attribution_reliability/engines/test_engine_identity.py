"""engine_identity: adapter, source hash, git commit and dirty flag, pinned values."""

from __future__ import annotations

import json
import subprocess
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from pairbench import _registry
from pairbench._errors import SpecError
from pairbench.studies.attribution_reliability.engines import EngineSpec, engine_identity


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_command_in_a_git_checkout(tmp_path: Path) -> None:
    (tmp_path / "engine.py").write_text("print('{}')\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "engine.py")
    git(tmp_path, "commit", "-qm", "engine")
    # Beside the experiment, so uncontained (a contained one there is refused).
    argv = ["python3", "engine.py"]
    spec = EngineSpec.parse({"engine": "command", "argv": argv, "contained": False})
    clean = engine_identity(spec, tmp_path)
    assert clean.adapter == "command"
    assert clean.commit == git(tmp_path, "rev-parse", "HEAD")
    assert clean.dirty is False
    assert clean.source_path == str((tmp_path / "engine.py").resolve())
    (tmp_path / "engine.py").write_text("print('{ ')\n", encoding="utf-8")  # one byte more
    changed = engine_identity(spec, tmp_path)
    assert changed.dirty is True
    assert changed.source_sha256 != clean.source_sha256


def test_outside_git_there_is_no_commit(tmp_path: Path) -> None:
    (tmp_path / "eng").write_text("#!/bin/sh\n", encoding="utf-8")
    spec = EngineSpec.parse({"engine": "command", "argv": ["./eng"], "contained": False})
    found = engine_identity(spec, tmp_path)
    assert found.commit is None and found.dirty is None
    assert found.source_sha256 is not None and len(found.source_sha256) == 64


def test_a_python_target_in_a_package_hashes_the_package(tmp_path: Path) -> None:
    package = tmp_path / "src" / "my_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "engine.py").write_text("class E: ...\n", encoding="utf-8")
    (package / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    spec = EngineSpec.parse({"engine": "python", "target": "my_pkg.engine:E", "path": ["src"]})
    before = engine_identity(spec, tmp_path)
    assert before.source_path == str(package.resolve())
    assert before.target == "my_pkg.engine:E"
    (package / "helpers.py").write_text("X = 2\n", encoding="utf-8")
    assert engine_identity(spec, tmp_path).source_sha256 != before.source_sha256


def test_a_top_level_module_hashes_its_file(tmp_path: Path) -> None:
    (tmp_path / "solo_engine.py").write_text("class E: ...\n", encoding="utf-8")
    spec = EngineSpec.parse(
        {"engine": "python", "target": "solo_engine:E", "path": ["."], "contained": False}
    )
    assert engine_identity(spec, tmp_path).source_path == str(tmp_path / "solo_engine.py")


def test_python_dash_m_hashes_the_module_and_dash_c_the_interpreter(tmp_path: Path) -> None:
    dash_m = EngineSpec.parse({"engine": "command", "argv": ["python3", "-m", "json.tool"]})
    assert engine_identity(dash_m, tmp_path).source_path == str(Path(json.__file__).parent)
    dash_c = EngineSpec.parse({"engine": "command", "argv": ["python3", "-c", "pass"]})
    source = engine_identity(dash_c, tmp_path).source_path
    assert source is not None and Path(source).name.startswith("python")


def test_what_cannot_be_found_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"nope' does not exist"):
        engine_identity(EngineSpec.parse({"engine": "command", "argv": ["./nope"]}), tmp_path)
    with pytest.raises(SpecError, match=r"engine\.target: module 'no_such_mod_x'"):
        spec = EngineSpec.parse({"engine": "python", "target": "no_such_mod_x:E"})
        engine_identity(spec, tmp_path)


def test_secrets_are_hashed_and_references_kept(tmp_path: Path) -> None:
    spec = EngineSpec.parse(
        {
            "engine": "http",
            "url": "http://127.0.0.1:8900",
            "headers": {"Authorization": "Bearer s3cret", "X-Mode": "fast"},
            "models": {"master": "openai:gpt-5-mini"},
            "efforts": {"master": "medium"},
        }
    )
    found = engine_identity(spec, tmp_path)
    assert found.source_sha256 is None and found.commit is None
    assert found.headers["X-Mode"] == "fast"
    assert found.headers["Authorization"].startswith("sha256:")
    assert "s3cret" not in found.model_dump_json()
    assert found.models == {"master": "openai:gpt-5-mini"} and found.efforts["master"] == "medium"
    command = EngineSpec.parse(
        {
            "engine": "command",
            "argv": ["python3", "-c", "pass"],
            "env": {"API_KEY": "k-123", "OTHER_TOKEN": "${env:TOK}", "MODE": "x"},
        }
    )
    pinned = engine_identity(command, tmp_path).env
    assert pinned["API_KEY"].startswith("sha256:")
    assert pinned["OTHER_TOKEN"] == "${env:TOK}" and pinned["MODE"] == "x"


def test_a_registered_engine_class_is_identified_as_a_python_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "reg_engine.py").write_text(
        "class Reg:\n    def __init__(self, s): ...\n    def scan(self, r): ...\n"
        "    def judge(self, r): ...\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint(name="reg", value="reg_engine:Reg", group="pairbench.engines")
    monkeypatch.setattr(
        _registry, "_entry_points", lambda group: {"reg": point} if group == "engines" else {}
    )
    spec = EngineSpec.parse({"engine": "reg", "settings": {"k": 1}})
    found = engine_identity(spec, tmp_path)
    assert (found.engine, found.adapter, found.target) == ("reg", "python", "reg_engine:Reg")
    assert found.source_path == str(tmp_path / "reg_engine.py")
    other = engine_identity(EngineSpec.parse({"engine": "reg", "settings": {"k": 2}}), tmp_path)
    assert other.settings_sha256 != found.settings_sha256
