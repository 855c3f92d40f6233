"""The Responses API double: over loopback HTTP (httpx), as a process, and under the REAL
Codex CLI (codex-cli 0.171.0, ``tools/agent-clis``), offline.

Facts observed with codex-cli 0.171.0 against this double (this machine: Debian 12, root in
a container, kernel 6.18; the whole streams are in ``pairbench/testing/recorded/codex_real_*``):

- **Endpoints.** Only ``POST /v1/responses`` (``stream: true``, ``Accept: text/event-stream``,
  ``Authorization: Bearer $OPENAI_API_KEY``, ``originator: codex_exec``); no ``/v1/models``.
  No websocket attempt for a custom provider by default (its ``supports_websockets`` is
  false); with ``model_providers.<p>.supports_websockets=true`` (no feature flag needed)
  it first tries a websocket upgrade on
  ``GET /v1/responses``, logs "failed to connect to Responses WebSocket" on stderr when it
  is refused (426 here) and falls back to HTTP streaming at once, with no JSON event.
- **Every run** prints ``thread.started``, an ``item.completed`` ``error`` item "Model
  metadata for `test-model` not found. Defaulting to fallback metadata; …", then
  ``turn.started``; stderr carries "Reading additional input from stdin..." even with
  stdin at /dev/null. CODEX_HOME under /tmp gave no warning.
- **Request shape.** No ``instructions`` key; ``input`` holds two ``developer``
  messages (the system prompt, the skills list), a ``user`` ``<environment_context>``
  message, then the prompt as the last ``user`` message. Tools: ``exec_command``
  ``{"cmd": str, ...}`` (the shell), ``write_stdin``, ``list_mcp_resources``, …, a
  ``namespace`` ``multi_agent_v1``, ``web_search``; an MCP server ``tracker`` is one
  ``{"type": "namespace", "name": "mcp__tracker", "tools": [{"type": "function",
  "name": "get_issue", ...}]}``. The model calls it with ``{"type": "function_call",
  "name": "get_issue", "namespace": "mcp__tracker", ...}`` (a flat
  ``mcp__tracker__get_issue`` is answered "unsupported call: …" as the tool's output, and
  no event appears in the JSON stream). MCP results come back as ``"Wall time: 0.02
  seconds\\nOutput:\\n<json>"``, shell results as ``"Chunk ID: …\\nWall time: …\\nProcess
  exited with code N\\nOriginal token count: N\\nOutput:\\n<text>"``.
- **MCP startup.** codex does NOT wait for a stdio MCP server unless it is
  ``required``: without ``mcp_servers.<s>.required=true`` the first request carries no
  ``mcp__<s>`` tools ("omitting pending optional MCP server" in its trace log) and the
  answer is "I cannot reach the tracker". With it, ``thread.started`` comes after the
  server is up (~2 s for the Python tracker).
- **Usage** (1): ``turn.completed.usage`` is the per-turn sum over responses of
  ``input_tokens`` → ``input_tokens``, ``input_tokens_details.cached_tokens`` →
  ``cached_input_tokens``, ``input_tokens_details.cache_write_tokens`` →
  ``cache_write_input_tokens`` (0 when absent), ``output_tokens`` → ``output_tokens``
  (reasoning NOT subtracted), ``output_tokens_details.reasoning_tokens`` →
  ``reasoning_output_tokens``; ``total_tokens`` is dropped.
- **(a) Double gone (closed port).** Never "N/5": after the silent request retries
  (``request_max_retries``, default 4, ~3 s) it prints ``error`` "Reconnecting... waiting
  for network (Connection failed: error sending request)" at ~3.2-3.8 s after start, then
  at ~11.5, ~24.7, ~48 s, … and never gives up (killed at 90 s). The same when the
  double stops mid-run. ``-c model_providers.<p>.request_max_retries=0`` brings the first
  event to ~0.1 s after ``turn.started`` (then +5 s, +10 s, …); ``stream_max_retries=0``
  does not end the wait; no key found that does.
- **(b) 401** (``fail_auth``): retried as a stream error, "Reconnecting... 1/5 (unexpected
  status 401 Unauthorized: Incorrect API key provided., url: <base>/responses)" … "5/5"
  at ~0.1, 0.3, 0.75, 1.5, 3.3 s after ``turn.started``, then ``error`` + ``turn.failed``
  with that message at ~6.2 s, exit 1, 6 requests. ``stream_max_retries=N`` makes it N
  reconnects ("k/N").
- **(c) 500 on the first request only**: retried silently (request retry), no event,
  success, 2 requests. 500 on every request: 5 requests per reconnect (1 + 4 request
  retries), "Reconnecting... k/5 (We’re currently experiencing high demand, which may
  cause temporary errors.)"; with ``request_max_retries=0``, ``stream_max_retries=0`` it
  fails at once (``error`` + ``turn.failed``, exit 1, 1 request). **429 is never
  retried**: ``rate_limit_exceeded`` → ``turn.failed`` "exceeded retry limit, last status:
  429 Too Many Requests", ``insufficient_quota`` → "Quota exceeded. Check your plan and
  billing details.", exit 1 after the one request. A request never answered (``hang_on``)
  waits forever, ``stream_idle_timeout_ms`` does not apply before headers; a stream that
  stalls after headers (``stall_on``) ends after ``stream_idle_timeout_ms`` with
  "Reconnecting... 1/N (stream disconnected before completion: idle timeout waiting for
  SSE)" and is retried.
- **(d) Sandbox.** ``-s read-only`` works here as root: each shell command runs under
  ``codex-linux-sandbox … --apply-seccomp-then-exec`` in new user, mount, pid and net
  namespaces (uid_map ``0 0 1``), ``/`` mounted read-only (writes: "Read-only file
  system"), ``Seccomp: 2``, ``NoNewPrivs: 1``, ``socket()`` denied (EPERM). The turn
  metadata header says ``"sandbox":"seccomp"``. ``pdftotext`` (poppler-utils 22.12.0) runs
  inside it and its text reaches the model as the ``exec_command`` output.
- **(e) MCP server that exits 1**: not required → no MCP event at all in the JSON stream,
  no ``mcp__tracker`` namespace in the tools, the turn runs without it (exit 0).
  ``required=true`` → nothing on stdout, stderr "ERROR codex_core::session: Failed to
  create session: required MCP servers failed to initialize: tracker: handshaking with
  MCP server failed: connection closed: initialize response" and "Error: thread/start: …
  (code -32603)", exit 1, no model request.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.common import skip_outside_ci
from pairbench._template import render
from pairbench.studies.mcp_transports import STUDY, TRACKER_FIXTURE
from pairbench.studies.mcp_transports._double import NO_TRACKER
from pairbench.testing.chat_double import count_tokens, decide
from pairbench.testing.responses_double import reply_to, start_responses_double, to_chat

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / "tools" / "agent-clis" / "node_modules" / ".bin" / "codex"
RECORDED = ROOT / "src" / "pairbench" / "testing" / "recorded"
PDF = ROOT / "src" / "pairbench" / "studies" / "webmcp_vs_pdf" / "study" / "benchmark-baseline.pdf"
META_PROMPT = (PDF.parent / "prompts" / "common.md").read_text(encoding="utf-8") + (
    "\nThe evidence artifact is benchmark-baseline.pdf in the working directory."
)
SEED = 7
CONTENT = TRACKER_FIXTURE.content(SEED)
TITLE_PROMPT = str(
    render(
        (STUDY.root / "prompts" / "read_issue_title.md").read_text(encoding="utf-8").strip(),
        {"fixture": CONTENT},
    )
)
TITLE = str(CONTENT["target"]["issue_title"])
ENV_CONTEXT = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
NAMESPACE = {
    "type": "namespace",
    "name": "mcp__tracker",
    "description": "Tools in the mcp__tracker namespace.",
    "tools": [
        {"type": "function", "name": n, "strict": False, "parameters": {"type": "object"}}
        for n in ("get_issue", "list_issues", "read_file")
    ],
}
SHELL = {"type": "function", "name": "exec_command", "parameters": {"type": "object"}}


# -- helpers ----------------------------------------------------------------------------------
def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _body(*items: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    developer = {"type": "message", "role": "developer",
                 "content": [{"type": "input_text", "text": "You are Codex."}]}  # fmt: skip
    return {"model": "test-model", "instructions": "", "stream": True,
            "input": [developer, _user(ENV_CONTEXT), *items],
            "tools": [SHELL, NAMESPACE] if tools is None else tools}  # fmt: skip


def _sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of every SSE block."""
    out = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def _post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/responses", json=body, headers=headers, timeout=10)


def _stream(url: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    response = _post(url, body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return _sse(response.text)


def _completed(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    assert events[-1][0] == "response.completed"
    return dict(events[-1][1]["response"])


def _tool_turn(output: list[dict[str, Any]], result: str) -> list[dict[str, Any]]:
    """The reply's function calls echoed back, each with ``result`` as codex wraps it."""
    echoed = [{k: v for k, v in item.items() if k != "status"} for item in output]
    outputs = [{"type": "function_call_output", "call_id": item["call_id"],
                "output": f"Wall time: 0.0200 seconds\nOutput:\n{result}"}
               for item in output]  # fmt: skip
    return [*echoed, *outputs]


# -- the double over HTTP -------------------------------------------------------------------
def test_it_calls_the_namespaced_tool_and_answers_from_its_result() -> None:
    with start_responses_double() as double:
        first = _stream(double.url, _body(_user(TITLE_PROMPT)))
        names = [name for name, _ in first]
        assert names == ["response.created", "response.in_progress",
                         "response.output_item.added", "response.function_call_arguments.delta",
                         "response.function_call_arguments.delta",
                         "response.function_call_arguments.done", "response.output_item.done",
                         "response.completed"]  # fmt: skip
        assert [data["sequence_number"] for _, data in first] == list(range(len(first)))
        call = first[-2][1]["item"]
        assert (call["type"], call["name"], call["namespace"]) == (
            "function_call", "get_issue", "mcp__tracker")  # fmt: skip
        target = CONTENT["target"]
        expected_args = {"repo": target["repo"], "number": target["issue_number"]}
        assert json.loads(call["arguments"]) == expected_args
        deltas = "".join(d["delta"] for n, d in first if n.endswith("arguments.delta"))
        assert deltas == call["arguments"]
        output = _completed(first)["output"]
        issue = json.dumps({"number": target["issue_number"], "title": TITLE})
        second = _stream(double.url, _body(_user(TITLE_PROMPT), *_tool_turn(output, issue)))
        message = _completed(second)["output"][0]
        assert message["type"] == "message" and message["role"] == "assistant"
        assert message["content"][0] == {"type": "output_text", "text": TITLE,
                                         "annotations": [], "logprobs": []}  # fmt: skip
        text = "".join(d["delta"] for n, d in second if n == "response.output_text.delta")
        assert text == TITLE
        assert double.tool_outputs == [f"Wall time: 0.0200 seconds\nOutput:\n{issue}"]
        assert double.paths == ["POST /v1/responses"] * 2


def test_usage_counts_the_request_and_caches_the_shared_prefix() -> None:
    with start_responses_double({"reasoning_tokens": 4, "cache_writes": True}) as double:
        body = _body(_user(TITLE_PROMPT))
        first = _completed(_stream(double.url, body))
        second_body = _body(_user(TITLE_PROMPT), *_tool_turn(first["output"], '{"title": "x"}'))
        second = _completed(_stream(double.url, second_body))
        u1, u2 = first["usage"], second["usage"]
        size = count_tokens(json.dumps(body["tools"])) + sum(
            count_tokens(json.dumps(i, sort_keys=True)) for i in body["input"]
        )
        assert u1["input_tokens"] == size
        assert u1["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": size}
        # The second request repeats the first one's tools and input: that much is cached.
        assert u2["input_tokens_details"]["cached_tokens"] == size < u2["input_tokens"]
        call = first["output"][0]
        made = count_tokens({"name": call["name"], "arguments": call["arguments"]})
        assert u1["output_tokens"] == made + 4
        assert u1["output_tokens_details"] == {"reasoning_tokens": 4}
        assert u1["total_tokens"] == u1["input_tokens"] + u1["output_tokens"]
        assert double.usages == [u1, u2]
        # Deterministic: the same request gets the same counts (all of it cached now).
        again = _completed(_stream(double.url, body))["usage"]
        assert again["input_tokens"] == u1["input_tokens"]
        assert again["input_tokens_details"]["cached_tokens"] == size


def test_the_task_is_the_prompt_not_the_environment_context() -> None:
    body = _body(_user(TITLE_PROMPT))
    chat = to_chat(body)
    assert chat["messages"] == [{"role": "user", "content": TITLE_PROMPT}]
    assert [t["function"]["name"] for t in chat["tools"]] == [
        "exec_command", "mcp__tracker__get_issue", "mcp__tracker__list_issues",
        "mcp__tracker__read_file"]  # fmt: skip
    # Without the MCP namespace the brain cannot reach the tracker; an unknown prompt is that.
    assert reply_to(_body(_user(TITLE_PROMPT), tools=[SHELL])).text == NO_TRACKER
    assert reply_to(_body(_user("Say hello"))).text == "I do not know how to answer that."


def test_the_meta_prompt_reads_the_pdf_through_the_shell() -> None:
    body = _body(_user(META_PROMPT), tools=[SHELL])
    first = reply_to(body)
    assert first.text is None
    assert [(c.name, c.namespace, json.loads(c.arguments)) for c in first.calls] == [
        ("exec_command", None, {"cmd": "pdftotext benchmark-baseline.pdf -"})
    ]
    from pypdf import PdfReader

    text = "\n".join(p.extract_text() or "" for p in PdfReader(PDF).pages)
    call = {"type": "function_call", "call_id": "c1", "name": "exec_command",
            "arguments": first.calls[0].arguments}  # fmt: skip
    header = "Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 0\n"
    output = {"type": "function_call_output", "call_id": "c1",
              "output": f"{header}Original token count: 9\nOutput:\n{text}"}  # fmt: skip
    answer = reply_to(_body(_user(META_PROMPT), call, output, tools=[SHELL]))
    # The same answer the chat brain gives when it reads the PDF itself.
    expected, _ = decide({"messages": [{"role": "user", "content": META_PROMPT},
                                       {"role": "user", "content": text}]})  # fmt: skip
    assert answer.text == expected
    parsed = json.loads(answer.text or "")
    assert (parsed["overall"]["k"], parsed["exclude_s04"]["k"]) == (19, 18)
    # A failed command yields no table: the shape comes back with nulls, not numbers.
    failed = {**output, "output": f"{header}Output:\nbash: pdftotext: command not found\n"}
    blank = json.loads(reply_to(_body(_user(META_PROMPT), call, failed, tools=[SHELL])).text or "")
    assert blank["overall"]["k"] is None


def test_faults_by_request_number_and_every_path_is_recorded() -> None:
    script = {"rate_limit_on": [1], "quota_on": [2], "server_error_on": [3], "hang_on": [4]}
    with start_responses_double(script) as double:
        body = _body(_user(TITLE_PROMPT))
        got = [_post(double.url, body) for _ in range(3)]
        assert [r.status_code for r in got] == [429, 429, 500]
        assert [r.json()["error"]["code"] for r in got] == [
            "rate_limit_exceeded", "insufficient_quota", None]  # fmt: skip
        assert set(got[2].json()["error"]) == {"message", "type", "param", "code"}
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{double.url}/v1/responses", json=body, timeout=0.5)
        assert _post(double.url, body).status_code == 200
        assert httpx.get(f"{double.url}/v1/models").json()["data"][0]["object"] == "model"
        assert httpx.get(f"{double.url}/v1/nowhere").status_code == 404
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}  # fmt: skip
        refused = httpx.get(f"{double.url}/v1/responses", headers=upgrade)
        assert refused.status_code == 426
        assert refused.json()["error"]["code"] == "websocket_not_supported"
        assert double.paths == [*["POST /v1/responses"] * 5, "GET /v1/models",
                                "GET /v1/nowhere", "WEBSOCKET /v1/responses"]  # fmt: skip
        assert [(e.n, e.status) for e in double.exchanges] == [
            (1, 429), (2, 429), (3, 500), (4, 0), (5, 200)]  # fmt: skip
        assert len(double.usages) == 1


def test_authentication() -> None:
    body = _body(_user(TITLE_PROMPT))
    with start_responses_double({"fail_auth": True}) as double:
        refused = _post(double.url, body, Authorization="Bearer anything")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "invalid_api_key"
        assert httpx.get(f"{double.url}/v1/models").status_code == 401
    with start_responses_double({"api_key": "sk-test"}) as double:
        assert _post(double.url, body, Authorization="Bearer wrong").status_code == 401
        assert _post(double.url, body, Authorization="Bearer sk-test").status_code == 200


def test_runs_as_its_own_process(tmp_path: Path) -> None:
    port_file, log = tmp_path / "port", tmp_path / "log.jsonl"
    argv = ["--port-file", str(port_file), "--log", str(log), "--server-error-on", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench.testing.responses_double", *argv, "--hang-on", "3"],
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None, "the double exited"
            assert time.monotonic() < deadline, "no port file"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        body = _body(_user(TITLE_PROMPT))
        assert _post(url, body).status_code == 200
        assert _post(url, body).status_code == 500
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url}/v1/responses", json=body, timeout=0.3)
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert [(x["n"], x["status"]) for x in lines] == [(1, 200), (2, 500), (3, 0)]
        assert lines[0]["output"][0]["name"] == "get_issue" and lines[1]["usage"] is None
    finally:
        # A hanging request must not keep the process alive past SIGTERM.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if SIGTERM is ignored
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail("the double ignored SIGTERM")


# -- the real Codex CLI ---------------------------------------------------------------------
@dataclass
class CodexRun:
    """What one ``codex exec --json`` printed: (seconds since start, event) per line."""

    events: list[tuple[float, dict[str, Any]]]
    stderr: str
    returncode: int | None
    """None when the test stopped it."""

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for _, e in self.events if e.get("type") == kind]

    def items(self, kind: str) -> list[dict[str, Any]]:
        return [e["item"] for e in self.of("item.completed") if e["item"]["type"] == kind]


@dataclass(frozen=True)
class Folders:
    """The private folders of one test's codex runs."""

    home: Path
    codex_home: Path
    work: Path
    fixture: Path
    tmp: Path


def _codex_args(url: str, folders: Folders, mcp: str | None, config: tuple[str, ...]) -> list[str]:
    args = [str(CODEX), "exec", "--json", "--skip-git-repo-check", "--ephemeral"]
    args += ["--ignore-user-config", "-m", "test-model", "-s", "read-only", "-C", str(folders.work)]
    settings = ["model_provider=local", 'model_providers.local.name="local"',
                f'model_providers.local.base_url="{url}/v1"',
                'model_providers.local.env_key="OPENAI_API_KEY"',
                'model_providers.local.wire_api="responses"']  # fmt: skip
    if mcp is not None:
        env = (f'{{PAIRBENCH_TRIAL_SEED="{SEED}", PAIRBENCH_FIXTURE_DIR="{folders.fixture}", '
               f'PYTHONPATH="{ROOT / "src"}"}}')  # fmt: skip
        server = '["-m","pairbench.studies.mcp_transports.tracker_server"]'
        settings += [f'mcp_servers.tracker.command="{mcp}"', f"mcp_servers.tracker.args={server}",
                     f"mcp_servers.tracker.env={env}",
                     'mcp_servers.tracker.default_tools_approval_mode="approve"']  # fmt: skip
    for setting in [*settings, *config]:
        args += ["-c", setting]
    return args


def run_codex(url: str, prompt: str, folders: Folders, config: tuple[str, ...] = (),
              mcp: str | None = None, until: Callable[[dict[str, Any]], bool] | None = None,
              timeout: float = 20) -> CodexRun:  # fmt: skip
    """Run the real ``codex exec --json`` against ``url`` until it exits (or ``until`` holds
    for an event); its whole process group is killed at the end."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folders.home),
           "CODEX_HOME": str(folders.codex_home), "TMPDIR": str(folders.tmp),
           "OPENAI_API_KEY": "test-key"}  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen([*_codex_args(url, folders, mcp, config), "--", prompt],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True,
                            text=True)  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def pump_err() -> None:
        assert proc.stderr is not None
        errors.extend(proc.stderr)

    readers = [threading.Thread(target=f, daemon=True) for f in (pump, pump_err)]
    for reader in readers:
        reader.start()
    events: list[tuple[float, dict[str, Any]]] = []
    stopped = False
    try:
        deadline = start + timeout
        while (line := lines.get(timeout=max(0.01, deadline - time.monotonic()))) is not None:
            event = json.loads(line)
            events.append((time.monotonic() - start, event))
            if until is not None and until(event):
                stopped = True
                break
    except queue.Empty:
        pytest.fail(f"codex ran past {timeout} s: {[e for _, e in events]}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # codex, the sandbox, MCP servers
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait(timeout=10)
        for reader in readers:
            reader.join(timeout=5)
    return CodexRun(events, "".join(errors), None if stopped else code)


@pytest.fixture
def codex(tmp_path: Path) -> Iterator[Callable[..., CodexRun]]:
    """Run the real codex against a base URL: ``codex(url, prompt, config=(...))``."""
    if not CODEX.exists():
        reason = f"the real Codex CLI is not installed at {CODEX} (npm i in tools/agent-clis)"
        skip_outside_ci(f"{reason}: the real-codex tests did NOT run")
    short_tmp = Path(tempfile.mkdtemp(prefix="cx", dir="/tmp"))
    folders = Folders(tmp_path / "home", tmp_path / "codex-home", tmp_path / "work",
                      tmp_path / "fixture", short_tmp)  # fmt: skip
    for folder in (folders.home, folders.codex_home, folders.work, folders.fixture):
        folder.mkdir()
    try:
        yield functools.partial(run_codex, folders=folders)
    finally:
        shutil.rmtree(short_tmp, ignore_errors=True)


def _turn_usage(run: CodexRun) -> dict[str, int]:
    total: dict[str, int] = {}
    for event in run.of("turn.completed"):
        for key, value in event["usage"].items():
            total[key] = total.get(key, 0) + int(value)
    return total


def _recorded_types(name: str) -> list[str]:
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    return [_shape(json.loads(line)) for line in lines if line.strip()]


def _shape(event: dict[str, Any]) -> str:
    item = event.get("item")
    return f"{event['type']}:{item['type']}" if isinstance(item, dict) else str(event["type"])


def _fault_free_start(run: CodexRun) -> None:
    assert [_shape(e) for _, e in run.events[:3]] == [
        "thread.started", "item.completed:error", "turn.started"]  # fmt: skip
    assert "Model metadata for `test-model` not found" in run.items("error")[0]["message"]


def test_codex_reads_the_issue_title_through_the_tracker(
    codex: Callable[..., CodexRun], tmp_path: Path
) -> None:
    """(1) The MCP tool is called, the answer is its title, and usage adds up exactly."""
    with start_responses_double({"reasoning_tokens": 3, "cache_writes": True}) as double:
        run = codex(double.url, TITLE_PROMPT, mcp=sys.executable,
                    config=("mcp_servers.tracker.required=true",))  # fmt: skip
    assert run.returncode == 0, run.stderr
    _fault_free_start(run)
    assert [_shape(e) for _, e in run.events] == _recorded_types("codex_real_success.jsonl")
    call = run.items("mcp_tool_call")[0]
    target = CONTENT["target"]
    assert (call["server"], call["tool"], call["status"]) == ("tracker", "get_issue", "completed")
    assert call["arguments"] == {"repo": target["repo"], "number": target["issue_number"]}
    assert run.items("agent_message")[-1]["text"] == TITLE
    audit = (tmp_path / "fixture" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["tool"] for line in audit] == ["get_issue"]
    # How codex folds Responses usage into turn.completed (see the module docstring).
    u = double.usages
    assert len(u) == 2 and u[0]["input_tokens_details"]["cached_tokens"] == 0
    assert _turn_usage(run) == {
        "input_tokens": sum(x["input_tokens"] for x in u),
        "cached_input_tokens": sum(x["input_tokens_details"]["cached_tokens"] for x in u),
        "cache_write_input_tokens": sum(x["input_tokens_details"]["cache_write_tokens"] for x in u),
        "output_tokens": sum(x["output_tokens"] for x in u),
        "reasoning_output_tokens": sum(x["output_tokens_details"]["reasoning_tokens"] for x in u),
    }
    # What codex sent: the tracker as a namespace, the prompt as the last user message.
    first = double.requests[0]
    assert first["stream"] is True and first["model"] == "test-model"
    namespaces = [t for t in first["tools"] if t.get("type") == "namespace"]
    tracker = next(t for t in namespaces if t["name"] == "mcp__tracker")
    assert "get_issue" in [t["name"] for t in tracker["tools"]]
    users = [i for i in first["input"] if i.get("role") == "user"]
    assert users[0]["content"][0]["text"].startswith("<environment_context>")
    assert users[-1]["content"][0]["text"] == TITLE_PROMPT
    assert double.paths == ["POST /v1/responses"] * 2
    assert json.loads(double.tool_outputs[0].split("Output:\n", 1)[1])["title"] == TITLE


def test_codex_without_required_does_not_wait_for_the_mcp_server(
    codex: Callable[..., CodexRun],
) -> None:
    """(e) A server that exits 1: no MCP event, no tools; as required: no session at all."""
    with start_responses_double() as double:
        run = codex(double.url, TITLE_PROMPT, mcp="/bin/false")
        assert run.returncode == 0
        assert not run.items("mcp_tool_call")
        assert all("mcp" not in json.dumps(e).lower() for _, e in run.events)
        assert run.items("agent_message")[-1]["text"] == NO_TRACKER
        names = [t.get("name") for t in double.requests[0]["tools"]]
        assert "mcp__tracker" not in names and "list_mcp_resources" in names
        required = codex(double.url, TITLE_PROMPT, mcp="/bin/false",
                         config=("mcp_servers.tracker.required=true",))  # fmt: skip
        assert required.returncode == 1 and required.events == []
        assert "required MCP servers failed to initialize: tracker" in required.stderr
        assert len(double.requests) == 1


def test_codex_waits_for_network_forever_when_the_double_is_gone(
    codex: Callable[..., CodexRun],
) -> None:
    """(a) A closed port: "Reconnecting... waiting for network", never N/5, never a failure."""
    with start_responses_double() as double:
        url = double.url
    run = codex(url, "hi", config=("model_providers.local.request_max_retries=0",),
                until=lambda e: e.get("type") == "error", timeout=10)  # fmt: skip
    assert run.returncode is None  # still waiting when the test stopped it
    _fault_free_start(run)
    error = run.events[-1][1]
    assert error == {
        "type": "error",
        "message": "Reconnecting... waiting for network (Connection failed: error sending request)",
    }
    recorded = _recorded_types("codex_real_network_wait.jsonl")
    assert [_shape(e) for _, e in run.events] == recorded[:4]


def test_codex_on_401_reconnects_then_fails(codex: Callable[..., CodexRun]) -> None:
    """(b) 401 is a stream error: "Reconnecting... k/N", then turn.failed and exit 1."""
    retries = ("model_providers.local.request_max_retries=0",
               "model_providers.local.stream_max_retries=2")  # fmt: skip
    with start_responses_double({"fail_auth": True}) as double:
        run = codex(double.url, "hi", config=retries)
        url = double.url
    assert run.returncode == 1
    why = "unexpected status 401 Unauthorized: Incorrect API key provided., "
    why += f"url: {url}/v1/responses"
    assert [e["message"] for e in run.of("error")] == [
        f"Reconnecting... 1/2 ({why})", f"Reconnecting... 2/2 ({why})", why]  # fmt: skip
    assert run.of("turn.failed") == [{"type": "turn.failed", "error": {"message": why}}]
    assert double.paths == ["POST /v1/responses"] * 3 and not double.usages


def test_codex_retries_a_500_silently_but_never_a_429(codex: Callable[..., CodexRun]) -> None:
    """(c) 500 on the first request: retried, no event. 429: the turn fails at once."""
    with start_responses_double({"server_error_on": [1]}) as double:
        run = codex(double.url, "hi")
        assert run.returncode == 0 and not run.of("error")
        assert [e.status for e in double.exchanges] == [500, 200]
        assert _turn_usage(run)["input_tokens"] == double.usages[0]["input_tokens"]
    cases = {"rate_limit_on": "exceeded retry limit, last status: 429 Too Many Requests",
             "quota_on": "Quota exceeded. Check your plan and billing details."}  # fmt: skip
    for fault, message in cases.items():
        with start_responses_double({fault: [1]}) as double:
            run = codex(double.url, "hi")
            assert run.returncode == 1
            assert [e["message"] for e in run.of("error")] == [message]
            assert run.of("turn.failed")[0]["error"]["message"] == message
            assert [e.status for e in double.exchanges] == [429]


def test_codex_retries_a_stalled_stream_after_the_idle_timeout(
    codex: Callable[..., CodexRun],
) -> None:
    """A stream that stops after its headers ends after ``stream_idle_timeout_ms``."""
    config = ("model_providers.local.stream_idle_timeout_ms=500",
              "model_providers.local.stream_max_retries=1")  # fmt: skip
    with start_responses_double({"stall_on": [1]}) as double:
        run = codex(double.url, "hi", config=config)
    assert run.returncode == 0
    assert [e["message"] for e in run.of("error")] == [
        "Reconnecting... 1/1 (stream disconnected before completion: idle timeout waiting for SSE)"
    ]
    assert len(double.requests) == 2 and len(double.usages) == 1
    assert _turn_usage(run)["input_tokens"] == double.usages[0]["input_tokens"]


def test_codex_falls_back_from_a_refused_websocket(codex: Callable[..., CodexRun]) -> None:
    """Websockets are off for a custom provider unless ``supports_websockets``; refused, it
    falls back to HTTP streaming at once."""
    with start_responses_double() as double:
        assert codex(double.url, "hi").returncode == 0
        assert double.paths == ["POST /v1/responses"]
        run = codex(double.url, "hi", config=("model_providers.local.supports_websockets=true",))
        assert run.returncode == 0 and not run.of("error")
        assert double.paths[1:] == ["WEBSOCKET /v1/responses", "POST /v1/responses"]
        assert "failed to connect to Responses WebSocket" in run.stderr


def test_codex_reads_the_pdf_with_pdftotext_in_the_read_only_sandbox(
    codex: Callable[..., CodexRun], tmp_path: Path
) -> None:
    """(d) The shell tool runs ``pdftotext`` sandboxed; the answer comes from its text."""
    if shutil.which("pdftotext") is None:
        reason = "pdftotext is not installed (apt-get install -y poppler-utils)"
        skip_outside_ci(f"{reason}: the PDF-through-the-shell test did NOT run")
    shutil.copy(PDF, tmp_path / "work" / PDF.name)
    with start_responses_double() as double:
        run = codex(double.url, META_PROMPT)
    assert run.returncode == 0, run.stderr
    command = run.items("command_execution")[0]
    assert command["command"] == "/bin/bash -lc 'pdftotext benchmark-baseline.pdf -'"
    assert (command["exit_code"], command["status"]) == (0, "completed")
    assert "s04" in command["aggregated_output"]
    text = run.items("agent_message")[-1]["text"]
    answer = json.loads(text)
    assert (answer["overall"]["k"], answer["exclude_s04"]["k"]) == (19, 18)
    # Exactly what the chat double's brain answers when it reads the PDF itself (pypdf).
    from pypdf import PdfReader

    pdf = "\n".join(p.extract_text() or "" for p in PdfReader(PDF).pages)
    expected, _ = decide({"messages": [{"role": "user", "content": META_PROMPT},
                                       {"role": "user", "content": pdf}]})  # fmt: skip
    assert text == expected
    assert [_shape(e) for _, e in run.events] == _recorded_types("codex_real_pdf_shell.jsonl")
    assert double.tool_outputs[0].startswith("Chunk ID: ")
    assert "Process exited with code 0\n" in double.tool_outputs[0]
