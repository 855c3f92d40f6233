"""The Anthropic Messages API double, over real HTTP and with the REAL Claude Code CLI.

The first tests speak to the double with httpx; the ``test_real_claude_*`` ones run the
real ``claude`` binary (``tools/agent-clis``, pinned 2.1.197; skipped loudly when absent,
failed under ``CI=true``) against it, each in a few seconds.

Facts about Claude Code 2.1.197 these tests pin (``claude -p ... --output-format stream-json
--verbose --strict-mcp-config --tools "" --permission-mode dontAsk --setting-sources ""
--no-session-persistence``, ``ANTHROPIC_BASE_URL`` = the double, ``ANTHROPIC_API_KEY`` set):

- **Endpoints.** ``HEAD /`` (a warm-up; a 404 is fine), then ``POST /v1/messages?beta=true``
  (streaming, ``x-api-key``, ``anthropic-version: 2023-06-01``, ``anthropic-beta`` listing
  ``claude-code-20250219`` and others, ``thinking`` enabled, ``max_tokens: 32000``). Nothing
  else reaches the base URL; ``count_tokens`` was never called.
- **Side requests (f).** Without ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` it also asks
  the base URL for a session title (same model, ``tools: []``, ``thinking`` disabled,
  ``output_config.format`` a ``{"title": string}`` JSON schema; none for a prompt as short
  as "Hello?"), with or without ``--no-session-persistence``, and looks up
  ``api.anthropic.com`` (4 DNS queries under strace; DISABLE_TELEMETRY=1 alone left 2,
  DISABLE_ERROR_REPORTING=1 or DISABLE_AUTOUPDATER=1 alone 4; the title request stayed
  with all three). With the variable set: no title request and no DNS query.
- **Usage.** ``result.usage`` is the field-by-field sum of the main turns' usage (each turn
  counted once although its ``assistant`` events repeat ``message_start``'s usage, with
  ``output_tokens: 1``); the title request is left out of it but counted in
  ``result.modelUsage[model]`` (``inputTokens``, ``outputTokens``).
- **(a) A stdio server that takes 4 s to start.** With ``MCP_CONNECTION_NONBLOCKING=0``
  ``init`` waits for it (after >= 4 s) and says ``connected``, and the first request carries
  its tools. Without the variable ``init`` comes after a grace of about 2 s with
  ``status: "pending"``, no ``mcp__`` tool in ``init.tools``, and the first (and only)
  request carries ``tools: []`` (a server ready within ~1 s still made it: ``connected``).
- **(b) A stdio server that never starts,** pinned, ``MCP_TIMEOUT=3000``: ``init`` after
  about 3 s (>= MCP_TIMEOUT; 1000 gave ~1 s) with ``status: "failed"``; the run goes on
  without its tools and ends normally.
- **(c) Nothing listening.** ``system/api_retry`` events ``{"attempt": N, "max_retries": 10,
  "error_status": null, "error": "unknown"}`` straight after ``init`` (the first within
  ~0.05 s), ``retry_delay_ms`` about 500 * 2^(N-1) plus up to 25% jitter (seen: 584, 1054,
  2443, 4292, 9913, 16964), so ~2.5 min in all. Nothing on stdout or stderr says
  "connection refused" until the retries run out: with ``CLAUDE_CODE_MAX_RETRIES=0`` the
  synthetic message and ``result`` say "API Error: Unable to connect to API
  (ConnectionRefused)" (synthetic ``error: "server_error"``, ``api_error_status: null``),
  exit 1.
- **(d) 401** is retried like any error (``api_retry`` ``error_status: 401``,
  ``error: "authentication_failed"``, 10 retries by default); when they run out: an
  ``assistant`` from model ``<synthetic>`` with ``error: "authentication_failed"``, text
  "Invalid API key · Fix external API key" and the last 401's ``request-id`` as
  ``request_id`` (no ``is_api_error_message`` field in this version), then ``result``
  ``subtype: "success"``, ``is_error: true``, ``api_error_status: 401``,
  ``terminal_reason: "completed"`` (not ``api_error``), zero usage, ``modelUsage: {}``;
  exit 1, ~0.2 s after the last 401.
- **(e) 429, 500 and 529** are retried (``error_status`` 429 / 500 / 529, ``error``
  ``rate_limit`` / ``server_error`` / ``overloaded``), then a later success ends the run
  normally; a 429's ``retry-after: 1`` made ``retry_delay_ms`` exactly 1000. A request that
  never answers fails after ``API_TIMEOUT_MS`` as ``error: "unknown"`` and is retried.
- A PDF sent as a ``document`` block (``--input-format stream-json``) reaches the API as a
  base64 ``document`` block in the first user message.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from helpers.common import skip_outside_ci
from pairbench._template import render
from pairbench.studies.mcp_transports import STUDY as TRACKER_STUDY
from pairbench.studies.mcp_transports import TRACKER_FIXTURE
from pairbench.studies.mcp_transports._double import NO_TRACKER
from pairbench.studies.webmcp_vs_pdf import PDF_PATH, PDF_SHA256
from pairbench.studies.webmcp_vs_pdf import STUDY as META_STUDY
from pairbench.testing._chat_double import UNKNOWN
from pairbench.testing.anthropic_double import (
    FRAMING,
    HUNG,
    SIDE_REPLY,
    AnthropicDouble,
    start_anthropic_double,
)
from pairbench.testing.chat_double import decide

pytestmark = pytest.mark.cli

CLAUDE = Path(__file__).resolve().parents[2] / "tools/agent-clis/node_modules/.bin/claude"
CLAUDE_VERSION = "2.1.197"
TITLE_PROMPT = "What is the title of issue #4 in the repository amber-otter? Answer with the title."
TOOLS = [
    {"name": n, "description": "", "input_schema": {"type": "object"}}
    for n in ("mcp__tracker__list_issues", "mcp__tracker__get_issue")
]
SYSTEM = [
    {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.123;"},
    {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral"}},
]
USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _user(text: str, *, cache: bool = True) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


def _post(url: str, body: dict[str, Any], path: str = "/v1/messages", **headers: str) -> Any:
    headers.setdefault("x-api-key", "test-key")
    return httpx.post(f"{url}{path}", json=body, headers=headers, timeout=10)


def _sse(response: httpx.Response) -> list[dict[str, Any]]:
    events = []
    for chunk in response.text.strip().split("\n\n"):
        kind, data = chunk.split("\n")
        event = json.loads(data.removeprefix("data: "))
        assert kind == f"event: {event['type']}"
        events.append(event)
    return events


# -- the double over HTTP ---------------------------------------------------------------------
def test_it_streams_a_tool_call_then_answers_from_the_tool_result() -> None:
    with start_anthropic_double() as double:
        body: dict[str, Any] = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "stream": True,
            "system": SYSTEM,
            "tools": TOOLS,
            "messages": [_user(TITLE_PROMPT)],
        }
        events = _sse(_post(double.url, body))
        kinds = [e["type"] for e in events]
        assert kinds == [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        start = events[2]["content_block"]
        assert start["type"] == "tool_use" and start["name"] == "mcp__tracker__get_issue"
        assert start["id"].startswith("toolu_01") and len(start["id"]) == 30
        pieces = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
        assert pieces[0] == "" and json.loads("".join(pieces)) == {
            "repo": "amber-otter",
            "number": 4,
        }
        assert events[-2]["delta"]["stop_reason"] == "tool_use"
        first = events[-2]["usage"]
        assert events[0]["message"]["usage"] == {**first, "output_tokens": 1}

        # The next turn: the assistant's call and its result, the breakpoint moved to the end.
        title = "Fix timeout in the CLI (#321)"
        call = {
            "type": "tool_use",
            "id": start["id"],
            "name": start["name"],
            "input": {"repo": "amber-otter", "number": 4},
        }
        result = {
            "type": "tool_result",
            "tool_use_id": start["id"],
            "content": [{"type": "text", "text": json.dumps({"title": title})}],
            "cache_control": {"type": "ephemeral"},
        }
        body["messages"] = [
            _user(TITLE_PROMPT, cache=False),
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
        body["stream"] = False
        reply = _post(double.url, body).json()
        assert reply["content"] == [{"type": "text", "text": title}]
        assert reply["stop_reason"] == "end_turn" and reply["type"] == "message"
        second = reply["usage"]
        # The whole first prompt was written on turn 1, so turn 2 reads it and writes the rest.
        assert first["cache_read_input_tokens"] == 0
        assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
        assert second["cache_creation_input_tokens"] > 0
        assert first["input_tokens"] == second["input_tokens"] == FRAMING
        assert double.usages == double.main_usages == [first, second]
        assert [e.main for e in double.exchanges] == [True, True]
        counted = _post(double.url, body, "/v1/messages/count_tokens").json()
        assert counted == {"input_tokens": sum(second[k] for k in USAGE_KEYS[:3])}
        assert double.paths == ["POST /v1/messages"] * 2 + ["POST /v1/messages/count_tokens"]


def test_usage_without_breakpoints_is_all_uncached_and_deterministic() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "tools": TOOLS,
        "messages": [_user(TITLE_PROMPT, cache=False)],
    }
    with start_anthropic_double() as a, start_anthropic_double() as b:
        usages = [_post(a.url, body).json()["usage"] for _ in range(2)] + [
            _post(b.url, body).json()["usage"]
        ]
    assert usages[0] == usages[1] == usages[2]
    assert usages[0]["cache_creation_input_tokens"] == usages[0]["cache_read_input_tokens"] == 0
    bare = {"model": "m", "messages": [_user("Hello?")]}
    with start_anthropic_double() as double:
        reply = _post(double.url, bare).json()
        assert reply["content"][0]["text"] == SIDE_REPLY  # no ``tools`` key: a side request
        with_tools = _post(double.url, {**bare, "tools": []}).json()
        assert with_tools["content"][0]["text"] == UNKNOWN
        offered_none = _post(double.url, {**body, "tools": []}).json()
        assert offered_none["content"][0]["text"] == NO_TRACKER
        assert [e.main for e in double.exchanges] == [False, True, True]


def test_a_title_side_request_gets_json_of_its_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": False,
    }
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "tools": [],
        "thinking": {"type": "disabled"},
        "messages": [_user(TITLE_PROMPT, cache=False)],
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    with start_anthropic_double() as double:
        reply = _post(double.url, body).json()
        assert json.loads(reply["content"][0]["text"]) == {"title": SIDE_REPLY}
        assert [e.main for e in double.exchanges] == [False] and double.main_usages == []


def test_errors_by_request_number_have_the_real_shape() -> None:
    script = {
        "rate_limit_on": [1],
        "server_error_on": [2],
        "overloaded_on": [3],
        "retry_after_s": 2,
    }
    body = {"model": "m", "max_tokens": 10, "messages": [_user("Hi")]}
    with start_anthropic_double(script) as double:
        answers = [_post(double.url, body) for _ in range(4)]
        assert [r.status_code for r in answers] == [429, 500, 529, 200]
        kinds = [r.json()["error"]["type"] for r in answers[:3]]
        assert kinds == ["rate_limit_error", "api_error", "overloaded_error"]
        for r in answers[:3]:
            assert r.json()["type"] == "error" and r.json()["request_id"].startswith("req_01")
            assert r.headers["request-id"] == r.json()["request_id"]
        assert answers[0].headers["retry-after"] == "2" and "retry-after" not in answers[1].headers
        models = httpx.get(f"{double.url}/v1/models", timeout=10)
        assert models.status_code == 404 and models.json()["error"]["type"] == "not_found_error"
        assert [e.status for e in double.exchanges] == [429, 500, 529, 200]
        assert double.paths[-1] == "GET /v1/models" and len(double.usages) == 1


def test_auth_failures_answer_401_to_everything() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [_user("Hi")]}
    with start_anthropic_double({"fail_auth": True}) as double:
        for path in ("/v1/messages", "/v1/messages/count_tokens", "/"):
            r = _post(double.url, body, path)
            assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    with start_anthropic_double({"api_key": "right"}) as double:
        assert _post(double.url, body).status_code == 401
        assert _post(double.url, body, **{"x-api-key": "right"}).status_code == 200
        bearer = {"x-api-key": "", "authorization": "Bearer right"}
        assert _post(double.url, body, **bearer).status_code == 200


def test_a_hung_request_is_released_when_the_double_stops() -> None:
    body = {"model": "m", "max_tokens": 10, "messages": [_user("Hi")]}
    statuses: list[int] = []
    with start_anthropic_double({"hang_on": [1]}) as double:
        worker = threading.Thread(
            target=lambda: statuses.append(_post(double.url, body).status_code)
        )
        worker.start()
        deadline = time.monotonic() + 10
        while not double.exchanges and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [e.status for e in double.exchanges] == [HUNG]
        assert _post(double.url, body).status_code == 200  # the next request is served
        assert statuses == []
    worker.join(timeout=10)
    assert statuses == [500]


def test_a_pdf_document_block_is_read_like_a_chat_file_part() -> None:
    prompt = (META_STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8")
    data = base64.b64encode(PDF_PATH.read_bytes()).decode("ascii")
    document = {
        "type": "document",
        "title": "benchmark-baseline.pdf",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    body = {
        "model": "m",
        "max_tokens": 1000,
        "system": SYSTEM,
        "tools": [],
        "messages": [{"role": "user", "content": [document, {"type": "text", "text": prompt}]}],
    }
    file_part = {
        "type": "file",
        "file": {
            "filename": "benchmark-baseline.pdf",
            "file_data": f"data:application/pdf;base64,{data}",
        },
    }
    chat = {
        "messages": [{"role": "user", "content": [file_part, {"type": "text", "text": prompt}]}]
    }
    expected, _ = decide(chat)
    with start_anthropic_double() as double:
        reply = _post(double.url, body).json()
        assert reply["content"] == [{"type": "text", "text": expected}]
        assert json.loads(reply["content"][0]["text"])["overall"]["k"] == 19
        [doc] = double.documents
        assert (doc.n, doc.where, doc.media_type) == (
            1,
            "messages[0].content[0]",
            "application/pdf",
        )
        assert doc.sha256 == PDF_SHA256 and doc.size == PDF_PATH.stat().st_size


def test_as_a_process_with_port_file_and_log(tmp_path: Path, server_env: dict[str, str]) -> None:
    port_file, log = tmp_path / "port", tmp_path / "log.jsonl"
    argv = [
        sys.executable,
        "-m",
        "pairbench.testing.anthropic_double",
        "--port-file",
        str(port_file),
        "--log",
        str(log),
        "--rate-limit-on",
        "1",
    ]
    proc = subprocess.Popen(argv, env=server_env, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the double did not start"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text(encoding='utf-8')}"
        body = {"model": "m", "max_tokens": 10, "tools": [], "messages": [_user("Hi")]}
        assert [_post(url, body).status_code for _ in range(2)] == [429, 200]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(x["n"], x["status"], x["main"]) for x in lines] == [(1, 429, True), (2, 200, True)]
    assert lines[0]["usage"] is None and lines[1]["usage"]["input_tokens"] > 0


# -- the real Claude Code CLI -----------------------------------------------------------------
class Run(NamedTuple):
    """One real ``claude`` run: its stream-json events with arrival times, and how it ended."""

    events: list[tuple[float, dict[str, Any]]]
    """(seconds since spawn, event), in arrival order."""
    returncode: int | None
    """None when the test stopped it early."""
    stderr: str

    def of(self, kind: str, subtype: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for _, e in self.events
            if e.get("type") == kind and (subtype is None or e.get("subtype") == subtype)
        ]

    def at(self, kind: str, subtype: str | None = None) -> float:
        """When the first such event arrived."""
        return next(
            t
            for t, e in self.events
            if e.get("type") == kind and (subtype is None or e.get("subtype") == subtype)
        )

    @property
    def init(self) -> dict[str, Any]:
        return self.of("system", "init")[0]

    @property
    def result(self) -> dict[str, Any]:
        [result] = self.of("result")
        return result


@pytest.fixture
def claude() -> Path:
    if not os.access(CLAUDE, os.X_OK):
        skip_outside_ci(f"the real Claude Code CLI is not installed at {CLAUDE} (make agent-clis)")
    return CLAUDE


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A short private folder (TMPDIR; Unix socket paths hold 108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="pbc", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# A stdio MCP server in raw JSON-RPC (no SDK import: starts in ~50 ms) with one tool, ``ping``;
# argv[1] seconds of sleep before it reads stdin (a slow or never-ready server).
PING_SERVER = """
import json, sys, time
time.sleep(float(sys.argv[1]))
tool = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object"}}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    result = {"tools/list": {"tools": [tool]},
              "tools/call": {"content": [{"type": "text", "text": "pong"}]},
              "initialize": {"protocolVersion": msg.get("params", {}).get("protocolVersion"),
                             "capabilities": {"tools": {}},
                             "serverInfo": {"name": "ping", "version": "1"}}}.get(msg["method"], {})
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""
Stop = Callable[[dict[str, Any]], bool]


def _ping_server(folder: Path, sleep_s: float) -> dict[str, Any]:
    script = folder / "ping_server.py"
    script.write_text(PING_SERVER, encoding="utf-8")
    return {"type": "stdio", "command": sys.executable, "args": [str(script), str(sleep_s)]}


def _tracker_server(fixture_dir: Path) -> dict[str, Any]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {
        "PAIRBENCH_TRIAL_SEED": "7",
        "PAIRBENCH_FIXTURE_DIR": str(fixture_dir),
        "PYTHONPATH": src,
    }
    args = ["-m", "pairbench.studies.mcp_transports.tracker_server"]
    return {"type": "stdio", "command": sys.executable, "args": args, "env": env}


def _run_claude(
    claude: Path,
    folder: Path,
    url: str,
    server: Mapping[str, Any] | None,
    prompt: str = "Hello?",
    *,
    env: Mapping[str, str | None] | None = None,
    stop: Stop | None = None,
    timeout: float = 40,
    name: str = "tracker",
    tools: str = "",
    allowed: str | None = None,
    files: Mapping[str, Path] | None = None,
) -> Run:
    """Run the real CLI the way pairbench does; ``stop``: kill it after the event that
    matches. Its whole process group is killed at the end either way. ``server`` None: no
    MCP server; ``tools`` / ``allowed``: ``--tools`` / ``--allowedTools`` (default
    ``mcp__<name>__*``); ``files``: copied into the working folder (name: source)."""
    for sub in ("home", "config", "cwd", "tmp"):
        (folder / sub).mkdir(parents=True)
    for file_name, source in (files or {}).items():
        shutil.copyfile(source, folder / "cwd" / file_name)
    config = folder / "mcp.json"
    servers = {} if server is None else {name: dict(server)}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder / "home"),
        "CLAUDE_CONFIG_DIR": str(folder / "config"),
        "TMPDIR": str(folder / "tmp"),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "test-key",
        "ENABLE_TOOL_SEARCH": "false",
        "MCP_CONNECTION_NONBLOCKING": "0",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "MCP_TIMEOUT": "30000",
    }
    for key, value in (env or {}).items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    argv = [
        str(claude),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--tools",
        tools,
        "--allowedTools",
        f"mcp__{name}__*" if allowed is None else allowed,
        "--model",
        "claude-sonnet-4-5",
        "--max-turns",
        "10",
        "--permission-mode",
        "dontAsk",
        "--setting-sources",
        "",
        "--no-session-persistence",
    ]
    stderr_path = folder / "stderr.txt"
    lines: queue.Queue[tuple[float, str | None]] = queue.Queue()
    with stderr_path.open("wb") as stderr:
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=folder / "cwd",
            env=base,
            start_new_session=True,
        )

        def read() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                lines.put((time.monotonic() - started, raw.decode("utf-8", "replace")))
            lines.put((time.monotonic() - started, None))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        events: list[tuple[float, dict[str, Any]]] = []
        stopped = False
        try:
            while True:
                left = started + timeout - time.monotonic()
                if left <= 0:
                    pytest.fail(f"claude ran past {timeout} s: {events[-3:]}")
                try:
                    at, line = lines.get(timeout=left)
                except queue.Empty:
                    continue
                if line is None:
                    break
                if line.strip():
                    events.append((at, json.loads(line)))
                    if stop is not None and stop(events[-1][1]):
                        stopped = True
                        break
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # claude and the MCP servers it started
            code = proc.wait(timeout=10)
            reader.join(timeout=10)
            assert proc.stdout is not None
            proc.stdout.close()
    return Run(events, None if stopped else code, stderr_path.read_text(encoding="utf-8"))


def _sum(usages: list[dict[str, int]]) -> dict[str, int]:
    return {k: sum(u[k] for u in usages) for k in USAGE_KEYS}


def _only_the_api(double: AnthropicDouble) -> None:
    """Pinned runs hit nothing but the warm-up and the Messages API, and no side request."""
    assert set(double.paths) <= {"HEAD /", "POST /v1/messages"}, double.paths
    assert all(e.main for e in double.exchanges)


def test_real_claude_reads_the_issue_title_through_the_stdio_tracker(
    claude: Path, short_tmp: Path
) -> None:
    content = TRACKER_FIXTURE.content(7)
    template = (TRACKER_STUDY.root / "prompts" / "read_issue_title.md").read_text(encoding="utf-8")
    prompt = str(render(template, {"fixture": content})).strip()
    fixture = short_tmp / "fixture"
    fixture.mkdir()
    with start_anthropic_double() as double:
        run = _run_claude(claude, short_tmp / "run", double.url, _tracker_server(fixture), prompt)
    assert run.init["claude_code_version"] == CLAUDE_VERSION, "re-check this file's facts"
    assert run.init["mcp_servers"] == [{"name": "tracker", "status": "connected"}]
    assert "mcp__tracker__get_issue" in run.init["tools"]
    target = content["target"]
    args = {"repo": target["repo"], "number": target["issue_number"]}
    calls = [
        b for e in run.of("assistant") for b in e["message"]["content"] if b["type"] == "tool_use"
    ]
    assert [(c["name"], c["input"]) for c in calls] == [("mcp__tracker__get_issue", args)]
    audit = [json.loads(x) for x in (fixture / "audit.jsonl").read_text("utf-8").splitlines()]
    assert [(a["tool"], a["arguments"], a["ok"]) for a in audit] == [("get_issue", args, True)]
    result = run.result
    assert result["result"] == target["issue_title"] and run.returncode == 0
    assert (result["is_error"], result["terminal_reason"], result["num_turns"]) == (
        False,
        "completed",
        2,
    )
    # Claude Code sums each main turn once: its ``result.usage`` is the double's total.
    assert len(double.main_usages) == 2
    assert {k: result["usage"][k] for k in USAGE_KEYS} == _sum(double.main_usages)
    first, second = double.main_usages
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"] > 0
    assert [b["type"] for b in double.requests[1]["messages"][-1]["content"]] == ["tool_result"]
    _only_the_api(double)


def test_real_claude_waits_for_a_slow_stdio_server_only_with_the_pin(
    claude: Path, short_tmp: Path
) -> None:
    runs: dict[str, tuple[Run, AnthropicDouble]] = {}
    for label, pin in (("pinned", "0"), ("default", None)):
        folder = short_tmp / label
        folder.mkdir()
        with start_anthropic_double() as double:
            server = _ping_server(folder, 4)
            env = {"MCP_CONNECTION_NONBLOCKING": pin}
            runs[label] = _run_claude(claude, folder, double.url, server, env=env), double
    pinned, pinned_double = runs["pinned"]
    assert pinned.init["mcp_servers"] == [{"name": "tracker", "status": "connected"}]
    assert pinned.init["tools"] == ["mcp__tracker__ping"]
    assert pinned.at("system", "init") >= 4.0  # it waited for the server
    assert [t["name"] for t in pinned_double.requests[0]["tools"]] == ["mcp__tracker__ping"]
    default, default_double = runs["default"]
    assert default.init["mcp_servers"] == [{"name": "tracker", "status": "pending"}]
    assert default.init["tools"] == []
    assert default_double.requests[0]["tools"] == []  # the first turn went without them
    assert default.result["is_error"] is False
    for _, double in runs.values():
        _only_the_api(double)


def test_real_claude_gives_up_on_a_server_that_never_starts_at_mcp_timeout(
    claude: Path, short_tmp: Path
) -> None:
    with start_anthropic_double() as double:
        server = _ping_server(short_tmp, 10**6)
        run = _run_claude(
            claude, short_tmp / "run", double.url, server, env={"MCP_TIMEOUT": "3000"}
        )
    assert run.init["mcp_servers"] == [{"name": "tracker", "status": "failed"}]
    assert run.init["tools"] == [] and double.requests[0]["tools"] == []
    assert 3.0 <= run.at("system", "init") < 25
    assert run.result["is_error"] is False and run.returncode == 0
    _only_the_api(double)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: connecting to it is refused


def test_real_claude_retries_an_unreachable_api_without_saying_connection_refused(
    claude: Path, short_tmp: Path
) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    server = _ping_server(short_tmp, 0)

    def first_retry(event: dict[str, Any]) -> bool:
        return event.get("subtype") == "api_retry"

    run = _run_claude(claude, short_tmp / "default", url, server, stop=first_retry)
    [retry] = run.of("system", "api_retry")
    assert {k: retry[k] for k in ("attempt", "max_retries", "error_status", "error")} == {
        "attempt": 1,
        "max_retries": 10,
        "error_status": None,
        "error": "unknown",
    }
    assert 500 <= retry["retry_delay_ms"] <= 625  # 500 ms and up to 25% jitter
    assert [e["type"] for _, e in run.events] == ["system", "system"]  # init, then the retry
    said = json.dumps([e for _, e in run.events]) + run.stderr
    assert "refused" not in said.lower()
    # Only when the retries run out does it name the cause.
    out = _run_claude(
        claude, short_tmp / "no-retries", url, server, env={"CLAUDE_CODE_MAX_RETRIES": "0"}
    )
    text = "API Error: Unable to connect to API (ConnectionRefused)"
    [synthetic] = out.of("assistant")
    assert synthetic["message"]["model"] == "<synthetic>" and synthetic["error"] == "server_error"
    assert synthetic["message"]["content"] == [{"type": "text", "text": text}]
    assert (out.result["result"], out.result["is_error"], out.result["api_error_status"]) == (
        text,
        True,
        None,
    )
    assert out.returncode == 1 and out.of("system", "api_retry") == []


def test_real_claude_on_401_retries_then_reports_authentication_failed(
    claude: Path, short_tmp: Path
) -> None:
    with start_anthropic_double({"api_key": "another-key"}) as double:
        run = _run_claude(
            claude,
            short_tmp / "run",
            double.url,
            _ping_server(short_tmp, 0),
            env={"CLAUDE_CODE_MAX_RETRIES": "1"},
        )
    [retry] = run.of("system", "api_retry")
    assert (retry["error_status"], retry["error"], retry["max_retries"]) == (
        401,
        "authentication_failed",
        1,
    )
    [synthetic] = run.of("assistant")
    message = synthetic["message"]
    assert (message["model"], synthetic["error"]) == ("<synthetic>", "authentication_failed")
    text = "Invalid API key · Fix external API key"
    assert message["content"] == [{"type": "text", "text": text}]
    assert "is_api_error_message" not in synthetic
    assert synthetic["request_id"].startswith("req_01")
    result = run.result
    assert (result["subtype"], result["is_error"], result["api_error_status"]) == (
        "success",
        True,
        401,
    )
    assert (result["result"], result["terminal_reason"], result["modelUsage"]) == (
        text,
        "completed",
        {},
    )
    assert all(result["usage"][k] == 0 for k in USAGE_KEYS)
    assert run.returncode == 1
    assert [e.status for e in double.exchanges] == [401, 401]


def test_real_claude_retries_429_500_and_529_then_succeeds(claude: Path, short_tmp: Path) -> None:
    script = {
        "rate_limit_on": [1],
        "server_error_on": [2],
        "overloaded_on": [3],
        "retry_after_s": 1,
    }
    with start_anthropic_double(script) as double:
        run = _run_claude(claude, short_tmp / "run", double.url, _ping_server(short_tmp, 0))
    retries = run.of("system", "api_retry")
    assert [(r["attempt"], r["error_status"], r["error"]) for r in retries] == [
        (1, 429, "rate_limit"),
        (2, 500, "server_error"),
        (3, 529, "overloaded"),
    ]
    assert retries[0]["retry_delay_ms"] == 1000  # the 429's retry-after: 1
    assert [e.status for e in double.exchanges] == [429, 500, 529, 200]
    result = run.result
    assert (result["is_error"], result["terminal_reason"], result["result"]) == (
        False,
        "completed",
        UNKNOWN,
    )
    assert {k: result["usage"][k] for k in USAGE_KEYS} == _sum(double.main_usages)
    _only_the_api(double)


def test_real_claude_without_the_nonessential_pin_asks_for_a_title_on_the_side(
    claude: Path, short_tmp: Path
) -> None:
    with start_anthropic_double() as double:
        run = _run_claude(
            claude,
            short_tmp / "run",
            double.url,
            _ping_server(short_tmp, 0),
            TITLE_PROMPT,  # (a prompt as short as "Hello?" gets no title request)
            env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": None},
        )
    assert set(double.paths) == {"HEAD /", "POST /v1/messages"}
    side = [e for e in double.exchanges if not e.main]
    main = [e for e in double.exchanges if e.main]
    assert len(side) == 1 and len(main) == 1
    title = side[0].body
    assert title["model"] == "claude-sonnet-4-5" and title["tools"] == []
    assert title["thinking"] == {"type": "disabled"}
    assert title["output_config"]["format"]["type"] == "json_schema"
    assert any("sentence-case title" in b["text"] for b in title["system"])
    result = run.result
    assert result["is_error"] is False
    # result.usage sums the main turns only; modelUsage counts the title request too when
    # it finished before the result was written (it runs beside the main turn: seen both).
    assert {k: result["usage"][k] for k in USAGE_KEYS} == _sum(double.main_usages)
    everything, main_only = _sum(double.usages), _sum(double.main_usages)
    model_usage = result["modelUsage"]["claude-sonnet-4-5"]
    assert (model_usage["inputTokens"], model_usage["outputTokens"]) in (
        (everything["input_tokens"], everything["output_tokens"]),
        (main_only["input_tokens"], main_only["output_tokens"]),
    )


def test_real_claude_passes_a_pdf_document_block_through(claude: Path, short_tmp: Path) -> None:
    prompt = (META_STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8")
    data = base64.b64encode(PDF_PATH.read_bytes()).decode("ascii")
    document = {
        "type": "document",
        "title": "benchmark-baseline.pdf",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    message = {
        "type": "user",
        "message": {"role": "user", "content": [document, {"type": "text", "text": prompt}]},
    }
    for sub in ("home", "config", "cwd", "tmp"):
        (short_tmp / sub).mkdir()
    with start_anthropic_double() as double:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(short_tmp / "home"),
            "CLAUDE_CONFIG_DIR": str(short_tmp / "config"),
            "TMPDIR": str(short_tmp / "tmp"),
            "ANTHROPIC_BASE_URL": double.url,
            "ANTHROPIC_API_KEY": "test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        argv = [
            str(claude),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--tools",
            "",
            "--model",
            "claude-sonnet-4-5",
            "--max-turns",
            "3",
            "--setting-sources",
            "",
            "--no-session-persistence",
        ]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=short_tmp / "cwd",
            env=env,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate((json.dumps(message) + "\n").encode(), timeout=40)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    result = [json.loads(x) for x in out.decode().splitlines() if x.strip()][-1]
    [doc] = double.documents
    assert (doc.media_type, doc.sha256) == ("application/pdf", PDF_SHA256)
    assert json.loads(result["result"])["overall"]["k"] == 19


# -- Claude Code's built-in Read of the webmcp-vs-pdf PDF ----------------------------------
# Claude Code 2.1.197, ``--tools Read --allowedTools Read --permission-mode dontAsk``: Read
# of a file in the working folder is allowed (no permission denial); its system prompt says
# " - Primary working directory: <abs cwd>"; a PDF read comes back as a ``tool_result`` whose
# content is the string "PDF file read: <abs path> (16.6KB)", followed IN THE SAME user
# message by a top-level base64 ``document`` block (no title) holding the whole PDF.
PDF_NOTE = "\n\nThe supplied file(s) are in your working folder: ./benchmark-baseline.pdf"
READ_TOOL = {"name": "Read", "description": "Read a file.", "input_schema": {"type": "object"}}


@pytest.fixture
def read_wired() -> None:
    """The Read step is the webmcp-vs-pdf study's reply (``Study.double``), which the
    Anthropic double reaches through the chat double's ``decide``: nothing to wire."""


def test_the_meta_prompt_with_read_reads_the_pdf_then_answers_from_a_nested_document(
    read_wired: None,
) -> None:
    prompt = (META_STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8") + PDF_NOTE
    system = [
        *SYSTEM,
        {"type": "text", "text": "# Environment\n - Primary working directory: /w/cwd\n"},
    ]
    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 1000,
        "system": system,
        "tools": [READ_TOOL],
        "messages": [_user(prompt)],
    }
    data = base64.b64encode(PDF_PATH.read_bytes()).decode("ascii")
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": data},
    }
    with start_anthropic_double() as double:
        [call] = _post(double.url, body).json()["content"]
        assert (call["type"], call["name"]) == ("tool_use", "Read")
        assert call["input"] == {"file_path": "/w/cwd/benchmark-baseline.pdf"}
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": [document]}
        body["messages"] += [
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
        [answer] = _post(double.url, body).json()["content"]
        assert json.loads(answer["text"])["overall"]["k"] == 19
        [doc] = double.documents
        assert (doc.n, doc.where, doc.sha256) == (2, "messages[2].content[1]", PDF_SHA256)


def test_real_claude_reads_the_pdf_with_read_and_answers_the_meta_prompt(
    claude: Path, short_tmp: Path, read_wired: None
) -> None:
    prompt = (META_STUDY.root / "prompts" / "common.md").read_text(encoding="utf-8") + PDF_NOTE
    with start_anthropic_double() as double:
        run = _run_claude(
            claude,
            short_tmp / "run",
            double.url,
            None,
            prompt,
            tools="Read",
            allowed="Read",
            files={"benchmark-baseline.pdf": PDF_PATH},
        )
    assert run.returncode == 0, run.stderr
    cwd = short_tmp / "run" / "cwd"
    [call] = [
        b
        for e in run.of("assistant")
        for b in e["message"]["content"]
        if b.get("type") == "tool_use"
    ]
    assert (call["name"], call["input"]) == (
        "Read",
        {"file_path": str(cwd / "benchmark-baseline.pdf")},
    )
    assert run.result["permission_denials"] == []
    assert PDF_SHA256 in [d.sha256 for d in double.documents]
    answer = json.loads(run.result["result"])
    assert (answer["overall"]["k"], answer["exclude_s04"]["k"]) == (19, 18)
    _only_the_api(double)
