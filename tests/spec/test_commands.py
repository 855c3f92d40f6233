"""Server commands ``check`` refuses: not installed here, or fetching code when a run starts;
and what ``path`` and ``{port}`` may be."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench.spec import check_experiment
from pairbench.spec._models import McpServer

Write = Callable[..., Path]
Registry = dict[str, set[str]]


def _with_server(valid: str, server: str) -> str:
    old = "tracker: {transport: stdio, command: [python3, -m, tracker_server]}"
    assert old in valid
    return valid.replace(old, f"tracker: {server}")


def _problems(write: Write, registry: Registry, valid: str, server: str, path: str) -> list[str]:
    exp = write(_with_server(valid, server))
    return [str(p) for p in check_experiment(exp, registry, environ={"PATH": path})]


def test_a_bare_npx_is_refused_as_a_download_at_run_time(
    write: Write, registry: Registry, valid: str, tmp_path: Path
) -> None:
    (tmp_path / "bin").mkdir()
    npx = tmp_path / "bin" / "npx"
    npx.write_text("#!/bin/sh\n", encoding="utf-8")
    npx.chmod(0o755)
    server = "{transport: stdio, command: [npx, '@playwright/mcp@0.0.83']}"
    problems = _problems(write, registry, valid, server, str(tmp_path / "bin"))
    assert len(problems) == 1, problems
    assert (
        "experiment.yaml:" in problems[0]
        and "arms.local.tools.mcp.tracker.command[0]" in (problems[0])
    )
    assert "without --no-install" in problems[0] and "npx --no-install @playwright" in problems[0]
    fixed = "{transport: stdio, command: [npx, --no-install, '@playwright/mcp']}"
    assert _problems(write, registry, valid, fixed, str(tmp_path / "bin")) == []


def test_a_server_binary_not_on_path_names_how_to_install_it(
    write: Write, registry: Registry, valid: str, tmp_path: Path
) -> None:
    server = "{transport: http, serve: [playwright-mcp, --port, '{port}']}"
    (problem,) = _problems(write, registry, valid, server, str(tmp_path))
    assert "arms.local.tools.mcp.tracker.serve[0]" in problem
    assert "'playwright-mcp' is not on the runner's PATH" in problem
    assert "npm install --save-exact" in problem


def test_an_installed_binary_a_relative_script_and_python_pass(
    write: Write, registry: Registry, valid: str, tmp_path: Path
) -> None:
    (tmp_path / "serve.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    for server in (
        "{transport: stdio, command: [sh, -c, 'exit 0']}",
        "{transport: stdio, command: [./serve.sh]}",
        "{transport: stdio, command: [python3, -m, my_server]}",
    ):
        assert _problems(write, registry, valid, server, os.defpath) == [], server
    missing = "{transport: stdio, command: [./no-such.sh]}"
    (problem,) = _problems(write, registry, valid, missing, os.defpath)
    assert "'./no-such.sh' does not exist" in problem


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"serve": ["srv"], "path": "/rpc"}, "'path' is for a 'serve' command with {port}"),
        ({"serve": ["srv", "{port}"], "path": "rpc"}, "must start with '/'"),
        ({"serve": ["srv", "{port}"], "path": "/a?b=1"}, "must start with '/'"),
    ],
)
def test_path_goes_with_a_port_slot(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("?", r"\?")):
        McpServer.model_validate({"transport": "http", **fields})


def test_a_port_slot_may_be_in_argv_or_env_and_path_is_hashed_only_when_set() -> None:
    assert McpServer(transport="http", serve=["s", "--port", "{port}"]).takes_port()
    assert McpServer(transport="http", serve=["s"], env={"PORT": "{port}"}).takes_port()
    assert not McpServer(transport="http", serve=["s"]).takes_port()
    default = McpServer(transport="http", serve=["s", "{port}"])
    assert "path" not in default.model_dump()
    assert (
        McpServer(transport="http", serve=["s", "{port}"], path="/x").model_dump()["path"] == "/x"
    )
