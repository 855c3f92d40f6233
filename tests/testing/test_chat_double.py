"""The Chat Completions double over real HTTP on loopback (httpx), in a thread and as a process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pairbench.proxy._preflight import preflight
from pairbench.studies.mcp_transports._double import NO_TRACKER
from pairbench.testing._chat_double import UNKNOWN
from pairbench.testing.chat_double import ChatScript, count_tokens, start_chat_double

TITLE_PROMPT = "What is the title of issue #4 in the repository amber-otter? Answer with the title."
TOOLS = [
    {"type": "function", "function": {"name": n, "description": "", "parameters": {}}}
    for n in ("tracker__list_issues", "tracker__get_issue", "tracker__read_file")
]


def _post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=10)


def _body(*messages: dict[str, Any], tools: bool = True, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "m", "messages": list(messages), **extra}
    if tools:
        out["tools"] = TOOLS
    return out


USER = {"role": "user", "content": TITLE_PROMPT}


def _tool_turn(reply: dict[str, Any], result: dict[str, Any]) -> list[dict[str, Any]]:
    message = reply["choices"][0]["message"]
    call_id = message["tool_calls"][0]["id"]
    return [message, {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}]


def test_it_calls_the_offered_tool_and_answers_from_the_result() -> None:
    with start_chat_double() as double:
        first = _post(double.url, _body(USER)).json()
        choice = first["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        call = choice["message"]["tool_calls"][0]
        assert call["function"]["name"] == "tracker__get_issue"
        assert json.loads(call["function"]["arguments"]) == {"repo": "amber-otter", "number": 4}
        title = "Fix timeout in the CLI (#321)"
        second = _post(double.url, _body(USER, *_tool_turn(first, {"title": title}))).json()
        assert second["choices"][0]["message"]["content"] == title
        assert second["choices"][0]["finish_reason"] == "stop"
        assert {first["id"], second["id"]} == {"chatcmpl-double-1", "chatcmpl-double-2"}
        assert first["system_fingerprint"] == "fp_pairbench_double" and first["model"] == "m"
        # Usage: deterministic counts; the second turn's prefix was already sent (cached).
        u1, u2 = first["usage"], second["usage"]
        assert u1["prompt_tokens_details"]["cached_tokens"] == 0
        assert 0 < u2["prompt_tokens_details"]["cached_tokens"] < u2["prompt_tokens"]
        assert u1["total_tokens"] == u1["prompt_tokens"] + u1["completion_tokens"]
        assert u1["prompt_tokens"] == count_tokens(USER) + count_tokens(TOOLS) + 3
        assert double.usages == [u1, u2]
        assert [r["messages"][-1]["role"] for r in double.requests] == ["user", "tool"]


def test_without_the_tool_it_cannot_answer_and_errors_in_results_are_not_answers() -> None:
    with start_chat_double() as double:
        bare = _post(double.url, _body(USER, tools=False)).json()
        assert bare["choices"][0]["message"]["content"] == NO_TRACKER
        first = _post(double.url, _body(USER)).json()
        turn = _tool_turn(first, {})
        turn[1]["content"] = "Error: issue #4 not found"
        failed = _post(double.url, _body(USER, *turn)).json()
        assert failed["choices"][0]["message"]["content"].startswith(
            "The tracker returned an error"
        )
        other = _post(double.url, _body({"role": "user", "content": "Hello?"})).json()
        assert "do not know" in other["choices"][0]["message"]["content"]


def test_tier_one_and_two_prompts_map_to_their_tools() -> None:
    prompts = {
        'How many open issues labeled "bug" does the repository keen-otter have? Answer with a '
        "number.": ("list_issues", {"repo": "keen-otter", "label": "bug", "state": "open"}),
        "What is the text of line 3 of the file src/app.py in the repository keen-otter? Lines "
        "are numbered from 1.": (
            "read_file",
            {"repo": "keen-otter", "path": "src/app.py", "line": 3},
        ),
        "Open a new issue in the repository keen-otter.\n\nTitle: Crash (ab12)\nBody: Steps.\n\n"
        "Use the title exactly as given.": (
            "create_issue",
            {"repo": "keen-otter", "title": "Crash (ab12)", "body": "Steps."},
        ),
    }
    tools = [
        {"type": "function", "function": {"name": f"tracker__{t}", "parameters": {}}}
        for t in ("list_issues", "read_file", "create_issue")
    ]
    with start_chat_double() as double:
        for prompt, (tool, args) in prompts.items():
            body = {"model": "m", "messages": [{"role": "user", "content": prompt}], "tools": tools}
            call = _post(double.url, body).json()["choices"][0]["message"]["tool_calls"][0]
            assert call["function"]["name"] == f"tracker__{tool}"
            assert json.loads(call["function"]["arguments"]) == args


def _sse(response: httpx.Response) -> list[dict[str, Any]]:
    lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_streaming_with_and_without_include_usage() -> None:
    with start_chat_double({"timings": True}) as double:
        opts = {"include_usage": True}
        chunks = _sse(_post(double.url, _body(USER, stream=True, stream_options=opts)))
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == double.usages[0]
        assert chunks[-1]["timings"]["prompt_n"] == chunks[-1]["usage"]["prompt_tokens"]
        args = "".join(
            tc["function"].get("arguments", "")
            for c in chunks
            for ch in c["choices"]
            for tc in ch["delta"].get("tool_calls", [])
        )
        assert json.loads(args) == {"repo": "amber-otter", "number": 4}
        assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
        plain = _sse(_post(double.url, _body(USER, stream=True)))
        assert all("usage" not in c for c in plain)
        assert len(double.usages) == 1 and len(double.requests) == 2


def test_error_injection_by_request_number() -> None:
    script = {"rate_limit_on": [2], "server_error_on": [3], "quota_on": [4], "omit_usage_on": [5]}
    with start_chat_double(script) as double:
        statuses = [_post(double.url, _body(USER)) for _ in range(6)]
        assert [r.status_code for r in statuses] == [200, 429, 500, 429, 200, 200]
        assert statuses[1].json()["error"]["code"] == "rate_limit_exceeded"
        assert statuses[3].json()["error"]["code"] == "insufficient_quota"
        assert statuses[2].json()["error"]["type"] == "server_error"
        assert "usage" not in statuses[4].json()
        assert [e.status for e in double.exchanges] == [200, 429, 500, 429, 200, 200]
        assert len(double.usages) == 2
        models = httpx.get(f"{double.url}/v1/models", timeout=10).json()
        assert models["object"] == "list" and models["data"][0]["object"] == "model"


def test_authentication() -> None:
    with start_chat_double({"fail_auth": True}) as double:
        refused = _post(double.url, _body(USER), Authorization="Bearer anything")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "invalid_api_key"
    with start_chat_double({"api_key": "sk-test"}) as double:
        assert _post(double.url, _body(USER), Authorization="Bearer wrong").status_code == 401
        assert _post(double.url, _body(USER), Authorization="Bearer sk-test").status_code == 200


@contextlib.contextmanager
def _double_process(tmp_path: Path, *args: str) -> Iterator[str]:
    """``python -m pairbench.testing.chat_double ARGS`` as its own process; yields its URL."""
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench.testing.chat_double", "--port-file", str(port_file),
         *args],
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None, "the double exited"
            assert time.monotonic() < deadline, "no port file"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - only if SIGTERM is ignored
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail("the double ignored SIGTERM")


def test_runs_as_its_own_process(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with _double_process(tmp_path, "--log", str(log), "--rate-limit-on", "2") as url:
        assert _post(url, _body(USER)).status_code == 200
        assert _post(url, _body(USER)).status_code == 429
        lines = [json.loads(line) for line in log.read_text().splitlines()]
        assert [(x["n"], x["status"]) for x in lines] == [(1, 200), (2, 429)]
        assert lines[0]["usage"]["prompt_tokens"] > 0 and lines[1]["usage"] is None


def test_a_scripted_double_passes_the_proxys_preflight_and_follows_the_scenario(
    tmp_path: Path,
) -> None:
    # A user builds a campaign offline: the double, started as the README says, answers what
    # the recording proxy asks of a llama.cpp upstream, and replies from the user's script.
    script = tmp_path / "script.json"
    step = {"match": "SC-7", "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]}
    done = {"match": "SC-7", "after_tool_results": 1, "content": "SC-7 done: a is read"}
    script.write_text(json.dumps({"timings": True, "replies": [step, done]}))
    with _double_process(tmp_path, "--script", str(script), "--llama-cpp") as url:
        found = preflight(url)
        assert found.ok, found.reasons
        tools = [{"type": "function", "function": {"name": "ws__read_file", "parameters": {}}}]
        first = {"model": "m", "messages": [{"role": "user", "content": "SC-7: read a"}],
                 "tools": tools}  # fmt: skip
        reply = _post(url, first).json()["choices"][0]["message"]
        (call,) = reply["tool_calls"]
        assert call["function"] == {"name": "ws__read_file", "arguments": '{"path": "a"}'}
        second = {**first, "messages": [
            *first["messages"], {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "contents of a"}]}  # fmt: skip
        answered = _post(url, second).json()
        assert answered["choices"][0]["message"]["content"] == "SC-7 done: a is read"
        assert answered["usage"]["prompt_tokens"] > 0 and "timings" in answered
        # A prompt the script does not know is left to the studies, then "I do not know".
        other = _post(url, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert other.json()["choices"][0]["message"]["content"] == UNKNOWN


def test_a_script_step_needs_one_reply_and_a_valid_pattern() -> None:
    with pytest.raises(ValueError, match="give content or tool_calls"):
        ChatScript.model_validate({"replies": [{"match": "x"}]})
    with pytest.raises(ValueError, match="is not a regular expression"):
        ChatScript.model_validate({"replies": [{"match": "(", "content": "y"}]})
