"""``pairbench view``: what a user gets wrong is one clear message and a non-zero exit."""

from __future__ import annotations

import socket
from pathlib import Path

from typer.testing import CliRunner

from pairbench.cli import app

runner = CliRunner()


def test_a_missing_runs_dir_names_it_and_the_fix(tmp_path: Path) -> None:
    missing = tmp_path / "runs"
    done = runner.invoke(app, ["view", str(missing)], env={"COLUMNS": "200", "TERM": "xterm"})
    assert done.exit_code == 1
    assert done.output.strip() == (
        f"error: {missing}: no such folder. Fix: pass the folder your runs are in "
        "(`pairbench view path/to/runs`), or make one with `pairbench demo`"
    )


def test_a_taken_port_says_to_pick_another(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = runner.invoke(app, ["view", str(tmp_path), "--port", str(port)])
    assert done.exit_code == 1
    assert f"127.0.0.1:{port} is in use" in done.output and "--port 0" in done.output


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    done = runner.invoke(app, ["view", str(tmp_path), "--port", "70000"])
    assert done.exit_code == 2
