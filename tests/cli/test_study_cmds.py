"""``pairbench study webmcp-vs-pdf reference|serve`` and ``pairbench score --study``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import typer
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from helpers.common import cli_here
from pairbench import _registry
from pairbench.cli import app
from pairbench.studies.webmcp_vs_pdf import reference_answer, score_answer
from pairbench.studies.webmcp_vs_pdf._page import NO_RUNS

runner = CliRunner()


def test_reference_json_is_the_reference_answer() -> None:
    done = runner.invoke(app, ["study", "webmcp-vs-pdf", "reference", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) == reference_answer()
    table = runner.invoke(
        app, ["study", "webmcp-vs-pdf", "reference"], env={"COLUMNS": "120", "TERM": "xterm"}
    )
    assert table.exit_code == 0 and "exclude_s04.excluded" in table.output
    assert "inconclusive" in table.output


def test_score_prints_the_13_fields_and_exits_0(tmp_path: Path) -> None:
    answer = reference_answer()
    answer["overall"]["estimate"] = 0.2
    answer["bias"]["rule_outcome"] = "[bold]passed[/bold]"  # never read as markup
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer), encoding="utf-8")
    done = runner.invoke(
        app,
        ["score", "--study", "webmcp-vs-pdf", str(path)],
        env={"COLUMNS": "160", "TERM": "xterm"},
    )
    assert done.exit_code == 0, done.output
    want = score_answer(path.read_text(encoding="utf-8"))
    assert want.label == "11/13" and f"{want.label}: {want.reason}" in done.output
    for field in want.fields:
        assert field.path in done.output
    assert "[bold]passed[/bold]" in done.output


def test_score_of_invalid_json_is_a_parse_failure_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "answer.txt"
    path.write_text("Sure! {not json}", encoding="utf-8")
    done = runner.invoke(app, ["score", "--study", "webmcp-vs-pdf", str(path)])
    assert done.exit_code == 1 and done.output.startswith("parse failure")
    stdin = runner.invoke(app, ["score", "--study", "webmcp-vs-pdf", "-"], input="[1]")
    assert stdin.exit_code == 1 and "parse failure" in stdin.output


def test_score_names_the_studies_it_knows(tmp_path: Path) -> None:
    done = runner.invoke(app, ["score", "--study", "nope", str(tmp_path / "x")])
    assert done.exit_code != 0 and "webmcp-vs-pdf" in done.output
    missing = runner.invoke(app, ["score", "--study", "webmcp-vs-pdf", str(tmp_path / "x")])
    assert missing.exit_code != 0 and "cannot read" in missing.output


def test_every_study_subcommand_has_an_example() -> None:
    listed = runner.invoke(app, ["study", "--help"], env={"COLUMNS": "200"}).output
    studies = _registry.names("studies")
    assert studies and all(name in listed for name in studies)
    webmcp = runner.invoke(app, ["study", "webmcp-vs-pdf", "--help"]).output
    assert "reference" in webmcp and "serve" in webmcp
    root = get_command(app)
    assert isinstance(root, TyperGroup)
    group = root.commands["study"]
    assert isinstance(group, TyperGroup)
    with_commands = 0
    for name in studies:
        sub = group.get_command(typer.Context(group), name)
        assert isinstance(sub, TyperGroup), name
        commands = [c for c, cmd in sub.commands.items() if not cmd.hidden]
        with_commands += bool(commands)
        for command in commands:
            done = runner.invoke(app, ["study", name, command, "--help"])
            assert done.exit_code == 0 and "Example:" in done.output, (name, command)
    assert with_commands >= 3  # webmcp-vs-pdf, runtime-revision-ab, attribution-reliability
    assert "Example:" in runner.invoke(app, ["score", "--help"]).output
    assert "--study" in runner.invoke(app, ["demo", "--help"]).output


def test_a_study_with_one_command_is_still_a_group() -> None:
    # typer makes a lone command the group itself; `pairbench study NAME CMD` must still work.
    done = runner.invoke(app, ["study", "runtime-revision-ab", "serve-model", "--help"])
    assert done.exit_code == 0 and "--port" in done.output


def test_an_unknown_study_or_one_without_commands_exits_non_zero() -> None:
    assert runner.invoke(app, ["study", "no-such-study"]).exit_code == 2
    done = runner.invoke(app, ["study", "mcp-transports", "--help"])
    assert done.exit_code == 0 and "adds no commands" in done.output


def test_serve_prints_the_url_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    argv = ["study", "webmcp-vs-pdf", "serve", "--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench", *argv, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/people"), url
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and NO_RUNS in page.text
        assert page.headers["origin-agent-cluster"] == "?1"
        score = httpx.post(url.replace("/people", "/api/score"), json={"answer": "x"}).json()
        assert score["label"] == "parse failure"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("serve did not stop on SIGINT")
    assert code == 0, proc.stderr.read() if proc.stderr else ""


def test_score_as_a_real_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text(json.dumps(reference_answer()), encoding="utf-8")
    done = cli_here("score", "--study", "webmcp-vs-pdf", str(path), cwd=tmp_path)
    assert done.returncode == 0 and "13/13" in done.stdout


def test_serve_model_prints_its_url_and_answers_until_stopped(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "pairbench", "study", "runtime-revision-ab", "serve-model",
            "--port", str(port)]  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            assert url == f"http://127.0.0.1:{port}/v1"
            props = httpx.get(f"http://127.0.0.1:{port}/props", timeout=10).json()
            assert props["total_slots"] == 1
        finally:
            server.terminate()
