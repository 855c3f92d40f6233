"""The CLI's shell: --version, and messages printed as written (no rich markup)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pairbench import __version__
from pairbench.cli import app
from pairbench.cli._app import err, out
from pairbench.studies import Study

runner = CliRunner()


def test_version() -> None:
    done = runner.invoke(app, ["--version"])
    assert done.exit_code == 0
    assert done.stdout.strip() == f"pairbench {__version__}"


def test_a_fix_with_brackets_survives_the_console() -> None:
    # rich markup would print this fix as pip install 'pairbench' (eating "[browser]").
    fix = "Fix: pip install 'pairbench[browser]' and see [bold]docs[/bold]"
    for console in (out, err):
        with console.capture() as captured:
            console.print(fix)
        assert captured.get().strip() == fix


def test_a_missing_study_program_is_one_error_naming_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    study = Study("s", "t", tmp_path, commands=(("srv-x", "npm install srv-x"),))
    with pytest.raises(Exception, match=r"the program 'srv-x' is not installed.*npm install srv-x"):
        study.find_commands()
    shelf = tmp_path / "bin"
    shelf.mkdir()
    (shelf / "srv-x").write_text("#!/bin/sh\n")
    (shelf / "srv-x").chmod(0o755)
    found = Study("s", "t", tmp_path, commands=(("srv-x", "hint"),), bin_dirs=(shelf,))
    assert found.find_commands()["PATH"].split(os.pathsep)[0] == str(shelf)
