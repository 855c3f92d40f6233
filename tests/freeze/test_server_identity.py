"""A server's identity: recorded by every trial and by the lock, pinned in the experiment,
and named by ``verify`` and ``compare`` when the server changes between runs while no byte
of the experiment does; both protocol eras' handshakes identify it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from pairbench._errors import RunRefused
from pairbench.fixtures._mcp import McpSurface
from pairbench.freeze import verify_run, write_lock
from pairbench.freeze._compare import compare_runs
from pairbench.freeze._lock import read_lock
from pairbench.runner import start_run
from pairbench.spec import load_experiment
from pairbench.spec._models import McpServer
from pairbench.spec._server_identity import ServerIdentity, ServerPin, tools_sha256
from pairbench.store import load_run
from pairbench.store._transcript import Transcript

pytestmark = pytest.mark.whole_run

SERVER = str(Path(__file__).with_name("versioned_server.py"))
TRACKER = "pairbench.studies.mcp_transports.tracker_server"


def _experiment(tmp: Path, pin: dict[str, str] | None = None) -> Path:
    state = tmp / "server-state.json"  # outside what the experiment names: not locked
    state.write_text(json.dumps({"version": "1.0", "extra": False}), encoding="utf-8")
    (tmp / "p.md").write_text("Ping.\n", encoding="utf-8")
    (tmp / "plan.yaml").write_text(
        "steps:\n  - call: v.ping\n    save: r\nanswer: '${r}'\nwithout_tools: none\n",
        encoding="utf-8",
    )
    server: dict[str, object] = {
        "transport": "stdio",
        "command": ["python3", SERVER],
        "env": {"SERVER_STATE": str(state)},
    }
    if pin:
        server["pin"] = pin
    exp = {
        "id": "versioned",
        "version": "1",
        "trials": 2,
        "budget": {"trial_timeout_s": 60, "concurrency": 2},
        "agent": {"adapter": "scripted"},
        "arms": {"tool": {"tools": {"mcp": {"v": server}}}, "baseline": {"tools": "none"}},
        "comparisons": [["tool", "baseline"]],
        "tasks": [
            {
                "id": "ping",
                "prompt": "p.md",
                "plan": "plan.yaml",
                "grader": {"name": "exact-answer", "args": {"expect": "pong"}},
            }
        ],
    }
    path = tmp / "experiment.yaml"
    path.write_text(json.dumps(exp), encoding="utf-8")
    return path


def _upgrade(tmp: Path) -> None:
    state = tmp / "server-state.json"
    state.write_text(json.dumps({"version": "1.1", "extra": True}), encoding="utf-8")


def test_an_upgraded_server_is_named_by_verify_against_the_lock_and_by_compare(
    tmp_path: Path,
) -> None:
    exp = _experiment(tmp_path)
    _, _, lock = write_lock(load_experiment(exp))
    (locked,) = lock.servers
    assert (locked.arm, locked.server) == ("tool", "v")
    assert locked.identity.name == "versioned-fixture" and locked.identity.version == "1.0"
    assert locked.identity.tools == ["ping"] and len(locked.identity.tools_sha256) == 64
    assert read_lock(tmp_path / "experiment.lock.json").servers == lock.servers

    before = start_run(exp, tmp_path / "runs", run_seed=4).run_dir
    assert verify_run(before) == []
    (first, *_) = [r for r in load_run(before).results if r.arm == "tool"]
    assert first.servers["v"] == locked.identity  # each trial records what it met

    _upgrade(tmp_path)  # the same experiment bytes, another server
    after = start_run(exp, tmp_path / "runs", run_seed=4).run_dir
    found = [m for m in verify_run(after) if m.kind == "server"]
    assert found, verify_run(after)
    assert found[0].path == "arms.tool.tools.mcp.v"
    assert "version 1.0 -> 1.1" in str(found[0].found) and "+pong" in str(found[0].found)

    comparison = compare_runs(before, after)
    assert not comparison.valid
    (diff,) = [d for d in comparison.mismatches if d.path == "servers.tool.v"]
    assert "versioned-fixture 1.0" in str(diff.a) and "versioned-fixture 1.1" in str(diff.b)
    assert "ping, pong" in str(diff.b)
    # A comparison whose treatment is the tools may change the server.
    assert compare_runs(before, after, treatment="tools").valid


def test_a_pinned_server_that_changed_stops_the_run_before_its_first_attempt(
    tmp_path: Path,
) -> None:
    exp = _experiment(tmp_path, pin={"name": "versioned-fixture", "version": "1.0"})
    assert verify_run(start_run(exp, tmp_path / "runs", run_seed=1).run_dir) == []
    _upgrade(tmp_path)
    with pytest.raises(RunRefused, match=r"arms.tool.tools.mcp.v: version: pinned 1.0, found 1.1"):
        start_run(exp, tmp_path / "again", run_seed=1)
    runs = list((tmp_path / "again").glob("*/results/**/*.json"))
    assert runs == []  # no attempt ran


def test_a_pin_is_checked_by_every_connection_too() -> None:
    identity = ServerIdentity(name="s", version="2", tools_sha256="0" * 64)
    assert ServerPin(version="1").mismatches(identity) == ["version: pinned 1, found 2"]
    assert ServerPin(name="s").mismatches(identity) == []


def test_the_tool_list_hash_ignores_order_and_sees_a_description_change() -> None:
    a = tools_sha256([("a", "x", {"type": "object"}), ("b", "y", {})])
    assert a == tools_sha256([("b", "y", {}), ("a", "x", {"type": "object"})])
    assert a != tools_sha256([("a", "x!", {"type": "object"}), ("b", "y", {})])


@pytest.mark.parametrize(
    ("handshake", "era"), [("initialize", "2025-11-25"), ("auto", "2026-07-28")]
)
def test_both_protocol_eras_identify_the_server(tmp_path: Path, handshake: str, era: str) -> None:
    spec = McpServer.model_validate(
        {"transport": "stdio", "command": [sys.executable, "-m", TRACKER], "handshake": handshake}
    )

    async def connect() -> ServerIdentity:
        tr = Transcript(tmp_path / "t.jsonl")
        (tmp_path / "f").mkdir(exist_ok=True)
        async with McpSurface({"t": spec}, {}, 3, tmp_path / "f", "f", {}, tr) as surface:
            identity = surface.identities["t"]
        tr.close()
        return identity

    identity = anyio.run(connect)
    assert identity.protocol_version == era
    assert identity.name and identity.tools and identity.package == "pairbench 0.1.0"
