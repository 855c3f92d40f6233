"""No process outlives a SIGKILLed runner: not stdio servers, warm servers, nor grandchildren.

Real ``pairbench run`` / ``resume`` subprocesses are SIGKILLed at seeded random moments, 20
times across three kinds of experiment; 2 s after each kill no process may still carry
that invocation's run token. Each run is then resumed to the end and verified, with one
result per planned trial. The token is read from the watchdog's command line (the runner
keeps it in memory only), and carriers are counted here from ``/proc`` without the code
under test, so a watchdog that killed nothing would fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest

from helpers.common import cli, cli_here

# Linux only (/proc); under CI=true (a Linux machine) it never skips, it runs or fails.
pytestmark = [
    pytest.mark.whole_run,
    pytest.mark.skipif(
        not sys.platform.startswith("linux") and os.environ.get("CI") != "true",
        reason="needs Linux /proc",
    ),
]

TOKEN = "PAIRBENCH_RUN_TOKEN"
SEED = 20261212
SETTLE_S = 2.0
"""How long after a kill nothing of the run may be left."""

_FORKING_AGENT = """\
import subprocess, sys, time
sys.stdin.read()
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30"], **quiet)  # outlive their parent
subprocess.Popen(["setsid", "sleep", "30"], **quiet)  # and leave its process group
time.sleep(1.0)  # long enough for a kill to land while the grandchildren live
print("forty-two")
"""


_TINY_SERVER = """\
import json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def answer(message):
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "tiny", "version": "1"}}
    if method == "tools/list":
        return {"tools": [{"name": "answer", "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "forty-two"}], "isError": False}
    return {}

def reply(message):
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = reply(message).encode() if "id" in message else b""
        self.send_response(200 if body else 202)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, *args):
        pass

if sys.argv[1:] == ["--http"]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url_file = os.environ["PAIRBENCH_URL_FILE"]
    with open(url_file + ".tmp", "w") as handle:
        handle.write(f"http://127.0.0.1:{server.server_address[1]}/mcp")
    os.replace(url_file + ".tmp", url_file)
    server.serve_forever()
else:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" in message:
            print(reply(message), flush=True)
"""
"""A stdlib MCP server (stdio, or streamable HTTP with ``--http``): the SDK's import alone
costs over a CPU second, which twenty killed runs cannot afford."""

_PLAN = """\
steps:
  - call: tiny.answer
  - call: tiny.answer
    save: got
answer: "${got.text}"
"""


def _tiny(root: Path, transport: str) -> tuple[Path, int]:
    """Two arms with the tiny server over ``transport``; plans slowed so kills land mid-trial."""
    root.mkdir()
    server = root / "tiny_server.py"
    server.write_text(_TINY_SERVER, encoding="utf-8")
    (root / "plan.yaml").write_text(_PLAN, encoding="utf-8")
    tiny = (
        {"transport": "stdio", "command": ["python3", str(server)]}
        if transport == "stdio"
        else {"transport": "http", "serve": ["python3", str(server), "--http"], "warm": True}
    )
    return _experiment(
        root,
        f"tiny-{transport}",
        agent={"adapter": "scripted", "settings": {"step_delay_s": 0.3}},
        arms={arm: {"tools": {"mcp": {"tiny": tiny}}} for arm in ("a", "b")},
        task={"plan": "plan.yaml"},
        trials=2,
    )


def _forking(root: Path) -> tuple[Path, int]:
    """A command agent whose grandchildren outlive it, one of them in its own session."""
    root.mkdir()
    agent = root / "forking_agent.py"
    agent.write_text(_FORKING_AGENT, encoding="utf-8")
    return _experiment(
        root,
        "forking",
        agent={"adapter": "command", "settings": {"command": ["python3", str(agent)]}},
        arms={"a": {}, "b": {}},
        task={},
        trials=3,
    )


def _experiment(
    root: Path, name: str, *, agent: Any, arms: Any, task: Any, trials: int
) -> tuple[Path, int]:
    """Two tasks answered ``forty-two``; returns the file and how many trials it plans."""
    (root / "prompt.md").write_text("What is the answer?\n", encoding="utf-8")
    grader = {"name": "exact-answer", "args": {"expect": "forty-two"}}
    tasks = [{"id": f"q{i}", "prompt": "prompt.md", "grader": grader, **task} for i in range(2)]
    spec = {
        "id": name,
        "version": "1",
        "trials": trials,
        "budget": {"trial_timeout_s": 30, "concurrency": 2},
        "agent": agent,
        "arms": arms,
        "tasks": tasks,
    }
    exp = root / "experiment.yaml"
    exp.write_text(json.dumps(spec), encoding="utf-8")  # JSON is YAML
    return exp, len(arms) * len(tasks) * trials


def token_carriers(token: str) -> list[int]:
    """Live processes whose environment names ``token``: read here, not by the watchdog."""
    entry = f"{TOKEN}={token}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                if entry not in handle.read().split(b"\0"):
                    continue
            if psutil.Process(int(name)).status() != psutil.STATUS_ZOMBIE:
                found.append(int(name))
        except (psutil.Error, OSError):
            continue
    return found


def _has_session_leader(pids: list[int]) -> bool:
    """Whether the forking agent's ``setsid sleep`` is among ``pids`` yet."""
    for pid in pids:
        try:
            if os.getsid(pid) == pid and psutil.Process(pid).name() == "sleep":
                return True
        except (OSError, psutil.Error):
            continue
    return False


def _watchdog(runner: subprocess.Popen[bytes], timeout_s: float = 30.0) -> psutil.Process | None:
    """The runner's watchdog child (``_supervisor.py TOKEN RUNNER_PID``), once it exists;
    None when the runner ended first (a resume with little left can finish in between)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and runner.poll() is None:
        try:
            with_children = psutil.Process(runner.pid).children()
        except psutil.Error:
            continue  # it just ended: poll() says so next
        for child in with_children:
            try:
                if any(a.endswith("_supervisor.py") for a in child.cmdline()):
                    return child
            except psutil.Error:
                continue
        time.sleep(0.01)
    if runner.poll() is None:
        raise AssertionError(f"runner {runner.pid} started no watchdog in {timeout_s} s")
    return None


@dataclass
class Chain:
    """One kind of experiment, its invocations killed one after the other.

    Each kill hits a ``run`` or a ``resume`` of the current run; a run that finishes before
    its kill is kept, and the next invocation starts a new one. The last run is resumed to
    its end once every kill is done.
    """

    root: Path
    experiment: Path
    planned: int
    kills: int
    rng: np.random.Generator
    run_dirs: list[Path] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    left: list[tuple[str, list[int]]] = field(default_factory=list)
    _open: Path | None = None
    _checks: list[threading.Thread] = field(default_factory=list)
    _log: Path = field(default_factory=Path)
    """The current invocation's output (why it failed, if it ended on its own)."""

    def _start(self) -> subprocess.Popen[bytes]:
        before = set(self._runs())
        args = (
            ["resume", str(self._open)]
            if self._open is not None
            else ["run", str(self.experiment), "--runs-dir", str(self.root / "runs")]
        )
        self._log = self.root / f"invocation-{len(self.tokens)}-{time.monotonic_ns()}.log"
        with self._log.open("wb") as log:
            runner = subprocess.Popen(
                [sys.executable, "-m", "pairbench", *args],
                cwd=self.root,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if self._open is None:
            deadline = time.monotonic() + 30
            while not set(self._runs()) - before and time.monotonic() < deadline:
                time.sleep(0.02)
            (self._open,) = set(self._runs()) - before
            self.run_dirs.append(self._open)
        return runner

    def _runs(self) -> list[Path]:
        runs = self.root / "runs"
        return [p for p in runs.iterdir() if not p.name.startswith(".")] if runs.exists() else []

    def kill_once(
        self,
        before_kill: Callable[[psutil.Process], None] | None = None,
        ready: Callable[[list[int]], bool] = bool,
        wait_s: float | None = None,
    ) -> None:
        """Start the next invocation; SIGKILL it at a random moment once it has children
        (once ``ready`` holds for the run's carriers), or ``wait_s`` after that."""
        runner = self._start()
        watchdog = _watchdog(runner)
        if watchdog is None:  # it ended before it could be killed: it must have succeeded
            log = self._log.read_text(encoding="utf-8", errors="replace")
            assert runner.wait() == 0, log[-2000:]
            self._open = None
            return
        token = watchdog.cmdline()[-2]
        self.tokens.append(token)
        # A resume with nothing left to run starts no child: it is killed (or ends) at once.
        deadline = time.monotonic() + 30
        while not ready(token_carriers(token)) and runner.poll() is None:
            assert time.monotonic() < deadline, "the runner started no child in 30 s"
            time.sleep(0.1)
        time.sleep(float(self.rng.uniform(0.0, 1.5)) if wait_s is None else wait_s)
        if before_kill is not None:
            before_kill(watchdog)
        runner.kill()
        killed_at = time.monotonic()
        if runner.wait() == 0:  # it finished first: that run is done, the next is a new one
            self._open = None
        # The next invocation starts while this one's leftovers are counted.
        check = threading.Thread(target=self._check, args=(token, killed_at))
        check.start()
        self._checks.append(check)

    def _check(self, token: str, killed_at: float) -> None:
        time.sleep(max(0.0, killed_at + SETTLE_S - time.monotonic()))
        self.left.append((token, token_carriers(token)))

    def wait_for_checks(self) -> None:
        for check in self._checks:
            check.join()

    def run(self) -> None:
        # An invocation that ends before a kill can land (a resume with little left can
        # finish before its watchdog is seen) is not a kill: the next starts a new run,
        # until `kills` kills have landed.
        for _ in range(3 * self.kills):
            if len(self.tokens) == self.kills:
                break
            self.kill_once()
        assert len(self.tokens) == self.kills, f"{len(self.tokens)} of {self.kills} kills landed"
        self.wait_for_checks()
        if self._open is not None:
            done = cli("resume", str(self._open), cwd=self.root)
            assert done.returncode == 0, done.stderr + done.stdout


@pytest.fixture
def chains(tmp_path: Path) -> Iterator[list[Chain]]:
    rng = np.random.default_rng(SEED)
    kinds = [
        (_tiny(tmp_path / "stdio", "stdio"), 6),
        (_tiny(tmp_path / "http", "http"), 6),
        (_forking(tmp_path / "forking"), 8),
    ]
    made = [
        Chain(exp.parent, exp, planned, kills, np.random.default_rng(rng.integers(2**32)))
        for (exp, planned), kills in kinds
    ]
    yield made
    for chain in made:  # a failed assertion must not leave the run's processes behind
        for token in chain.tokens:
            for pid in token_carriers(token):
                os.kill(pid, signal.SIGKILL)


def test_twenty_random_kills_leave_no_process_and_lose_no_trial(chains: list[Chain]) -> None:
    assert sum(c.kills for c in chains) == 20
    with ThreadPoolExecutor(len(chains)) as pool:
        for future in [pool.submit(chain.run) for chain in chains]:
            future.result()
    for chain in chains:
        assert len(chain.left) == chain.kills
        assert [pids for _, pids in chain.left if pids] == [], chain.experiment
        for run_dir in chain.run_dirs:
            verified = cli_here("verify", str(run_dir), cwd=chain.root)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            results = [
                json.loads(p.read_text(encoding="utf-8"))
                for p in (run_dir / "results").rglob("*.json")
            ]
            keys = Counter((r["arm"], r["task"], r["trial"]) for r in results)
            assert len(keys) == chain.planned and set(keys.values()) == {1}, run_dir
            assert {r["outcome"] for r in results} == {"passed"}, run_dir


def test_the_check_sees_what_a_dead_watchdog_leaves(chains: list[Chain]) -> None:
    """Without the watchdog a grandchild survives the kill, and the count above sees it."""
    chain = chains[2]  # the forking agent
    # At once: the agent ends 1 s after its fork, and the attempt's own clean-up (which
    # needs no watchdog) then kills the grandchild; a random wait let that win on a loaded CI.
    chain.kill_once(
        before_kill=lambda watchdog: watchdog.kill(), ready=_has_session_leader, wait_s=0.0
    )
    chain.wait_for_checks()
    ((_, pids),) = chain.left
    assert pids, "with no watchdog the setsid grandchild should have survived"
