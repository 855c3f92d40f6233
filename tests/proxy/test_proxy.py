"""The recording proxy over real loopback HTTP: it answers as the model does, records the
exact bytes it forwarded, streams as it receives, labels exchanges and keeps failures."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from helpers.proxy import Rig, chat_body, post, rig_for
from pairbench._errors import ProxyError
from pairbench.proxy import RecordingProxy, read_records
from pairbench.testing.chat_double import serve_in_thread, server_for

TOOLS = [{"type": "function", "function": {"name": "tracker__get_issue", "parameters": {}}}]


def test_a_client_through_the_proxy_gets_what_it_gets_directly(rig: Rig) -> None:
    answers = []
    for base in (rig.proxy.url, rig.double.url):  # proxied first, then direct
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="none", max_retries=0)
        reply = client.chat.completions.create(**chat_body(tools=TOOLS, seed=3)).to_dict()
        stream = client.chat.completions.create(
            **chat_body(stream=True, stream_options={"include_usage": True})
        )
        chunks = [c.to_dict() for c in stream]
        text = "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]
        )
        answers.append(
            (reply["choices"], reply["usage"], reply["timings"], text, chunks[-1]["usage"])
        )
    assert answers[0] == answers[1]
    assert answers[0][0][0]["message"]["tool_calls"][0]["function"]["name"] == "tracker__get_issue"
    records = rig.proxy.records()
    assert [r.n for r in records] == [1, 2]  # only the proxied half went through it
    received = rig.double.exchanges[:2]
    assert [r.request_sha256 for r in records] == [e.body_sha256 for e in received]
    assert [r.request_json for r in records] == [e.body for e in received]
    assert records[0].usage == received[0].usage and records[0].timings is not None
    assert records[1].stream is not None and records[1].stream.content == answers[0][3]
    assert records[1].usage == received[1].usage  # from the stream's final chunk
    assert records[0].system_fingerprint == "fp_pairbench_double" and records[0].model == "m"


def test_the_record_holds_the_bytes_both_ways(rig: Rig) -> None:
    raw = b'{"model":"m","messages":[{"role":"user","content":"hi"}],  "seed": 1}'  # odd spacing
    reply = httpx.post(f"{rig.proxy.url}/v1/chat/completions?x=1", content=raw, timeout=30)
    httpx.post(f"{rig.proxy.url}/v1/chat/completions", content=b"not json", timeout=30)
    first, second = rig.proxy.records()
    assert (
        first.request_sha256
        == hashlib.sha256(raw).hexdigest()
        == rig.double.exchanges[0].body_sha256
    )
    assert first.response_sha256 == hashlib.sha256(reply.content).hexdigest()
    assert first.response_json == reply.json() and first.query == "x=1"
    assert first.status == 200 and first.error is None
    assert first.sent_ms <= (first.first_byte_ms or 0) <= first.end_ms
    assert second.request_text == "not json" and second.request_json is None
    assert second.status == 400 and "not valid JSON" in (second.error or "")


def test_a_stream_reaches_the_client_before_it_ends(tmp_path: Path) -> None:
    # The double pauses between chunks, so a proxy that buffered the stream would hand the
    # client its first chunk only after the upstream's last one.
    with rig_for({"chunk_delay_s": 0.05}, tmp_path) as rig:
        body = chat_body(stream=True, stream_options={"include_usage": True})
        arrivals: list[float] = []
        with httpx.stream("POST", f"{rig.proxy.url}/v1/chat/completions", json=body) as reply:
            for chunk in reply.iter_raw():
                if chunk:
                    arrivals.append(time.monotonic() * 1000)
        (record,) = rig.proxy.records()
    assert len(arrivals) > 1
    assert record.first_byte_ms is not None and record.first_byte_ms < record.end_ms
    assert arrivals[0] < record.end_ms  # the client had its first chunk before the end
    assert record.stream is not None and record.stream.done and record.stream.chunks >= 4


class Gated:
    """An upstream whose stream finishes only once the test has received its first chunk,
    and which echoes the headers it receives."""

    def __init__(self) -> None:
        self.url = ""
        self.first_seen = threading.Event()

    def app(self) -> Starlette:
        async def gated(_request: Request) -> Response:
            def event(text: str) -> bytes:
                chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
                return f"data: {json.dumps(chunk)}\n\n".encode()

            async def chunks() -> AsyncIterator[bytes]:
                yield event("first")
                deadline = time.monotonic() + 20
                while not self.first_seen.is_set() and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                yield event(" second" if self.first_seen.is_set() else " TIMED OUT")
                yield b"data: [DONE]\n\n"

            return StreamingResponse(chunks(), media_type="text/event-stream")

        async def echo(request: Request) -> Response:
            return JSONResponse({"headers": dict(request.headers)}, headers={"x-up": "1"})

        return Starlette(routes=[Route("/gated", gated, methods=["POST"]), Route("/echo", echo)])


@pytest.fixture
def gated() -> Iterator[Gated]:
    upstream = Gated()
    with serve_in_thread(server_for, upstream, "gated upstream"):
        yield upstream


def test_the_first_chunk_is_passed_on_while_the_upstream_waits(
    gated: Gated, tmp_path: Path
) -> None:
    with RecordingProxy(gated.url, tmp_path / "x.jsonl") as proxy:
        got: list[bytes] = []
        with httpx.stream("POST", f"{proxy.url}/gated", content=b"{}", timeout=30) as reply:
            for chunk in reply.iter_raw():
                got.append(chunk)
                gated.first_seen.set()  # only now may the upstream finish
        (record,) = proxy.records()
    assert b"second" in b"".join(got) and b"TIMED OUT" not in b"".join(got)
    assert record.stream is not None and record.stream.content == "first second"


def test_labels_come_from_the_proxy_or_a_header_that_is_not_forwarded(
    gated: Gated, tmp_path: Path
) -> None:
    with RecordingProxy(gated.url, tmp_path / "x.jsonl", label="AR-001") as proxy:
        first = httpx.get(f"{proxy.url}/echo")
        proxy.label = "AR-002"
        httpx.get(f"{proxy.url}/echo")
        third = httpx.get(f"{proxy.url}/echo", headers={"X-Pairbench-Label": "AR-009"})
        labels = [r.label for r in proxy.records()]
    assert labels == ["AR-001", "AR-002", "AR-009"]
    assert "x-pairbench-label" not in third.json()["headers"]
    assert first.headers["x-up"] == "1"  # the upstream's headers come back


def test_refusals_are_recorded_and_passed_on_as_the_upstream_answered(tmp_path: Path) -> None:
    with rig_for({"server_error_on": [3], "api_key": "sk-right"}, tmp_path) as rig:
        bad_key = post(rig.proxy.url, chat_body(), authorization="Bearer sk-wrong")
        right = {"authorization": "Bearer sk-right"}
        ok, error = (
            post(rig.proxy.url, chat_body(), **right),
            post(rig.proxy.url, chat_body(), **right),
        )
        records = rig.proxy.records()
    assert (bad_key.status_code, ok.status_code, error.status_code) == (401, 200, 500)
    assert [r.status for r in records] == [401, 200, 500]
    assert records[0].error == "upstream answered 401: Incorrect API key provided."
    assert records[0].response_json == bad_key.json()
    assert records[2].error is not None and "had an error" in records[2].error


def test_an_unreachable_upstream_is_a_recorded_502(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the request: nothing listens
    with RecordingProxy(f"http://127.0.0.1:{port}", tmp_path / "x.jsonl") as proxy:
        reply = post(proxy.url, chat_body(seed=1))
        (record,) = proxy.records()
    assert reply.status_code == 502
    assert reply.json()["error"]["code"] == "upstream_unreachable"
    assert record.status is None and record.response_sha256 is None
    assert record.error is not None and "could not be reached" in record.error
    assert record.request_json == chat_body(seed=1)  # still proof of what was sent


def test_a_torn_last_line_is_dropped_and_the_next_writer_starts_clean(tmp_path: Path) -> None:
    with rig_for({}, tmp_path) as rig:
        post(rig.proxy.url, chat_body())
    with rig.log.open("ab") as handle:
        handle.write(b'{"n": 2, "label": "cut sh')  # a writer killed mid-line
    assert [r.n for r in read_records(rig.log)] == [1]
    with RecordingProxy(rig.double.url, rig.log) as proxy:  # the double is stopped: a 502
        post(proxy.url, chat_body())
    assert [r.status for r in read_records(rig.log)] == [200, None]
    lines = rig.log.read_bytes().splitlines()
    lines.insert(1, b"{}")
    rig.log.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ProxyError, match="line 2 is not an exchange record"):
        read_records(rig.log)


def test_an_upstream_that_is_not_a_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProxyError, match="not an http URL"):
        RecordingProxy("127.0.0.1:8080", tmp_path / "x.jsonl")


def test_stopping_leaves_no_thread(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    with RecordingProxy("http://127.0.0.1:9", tmp_path / "x.jsonl") as proxy:
        assert any(t.name == "pairbench-proxy" for t in threading.enumerate())
        url = proxy.url
    assert set(threading.enumerate()) <= before
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)


def test_every_field_is_stored_as_one_whole_json_line(rig: Rig) -> None:
    post(rig.proxy.url, chat_body(temperature=1.0))
    (line,) = rig.log.read_text(encoding="utf-8").splitlines()
    stored: dict[str, Any] = json.loads(line)
    assert stored["label"] == "AR-001" and stored["request_json"]["temperature"] == 1.0
    assert stored["sent_at"].endswith("+00:00") and stored["timings"]["predicted_n"] > 0


def test_a_client_that_leaves_mid_stream_is_recorded_as_such(tmp_path: Path) -> None:
    with rig_for({"chunk_delay_s": 0.2}, tmp_path) as rig:
        body = chat_body(stream=True)
        with httpx.stream("POST", f"{rig.proxy.url}/v1/chat/completions", json=body) as reply:
            next(reply.iter_raw())  # the first chunk, then the client hangs up
        deadline = time.monotonic() + 10
        while not rig.proxy.records():
            assert time.monotonic() < deadline, "the abandoned exchange was never recorded"
            time.sleep(0.05)
        (record,) = rig.proxy.records()
    assert record.error == "the client disconnected before the response ended"
    assert record.status == 200 and record.stream is not None and not record.stream.done


def test_concurrent_exchanges_each_get_their_own_number_and_body(rig: Rig) -> None:
    bodies = [chat_body(seed=i) for i in range(4)]
    workers = [threading.Thread(target=post, args=(rig.proxy.url, b)) for b in bodies]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)
    records = rig.proxy.records()
    assert [r.n for r in records] == [1, 2, 3, 4]
    assert sorted(r.request_json["seed"] for r in records) == [0, 1, 2, 3]
    assert {r.request_sha256 for r in records} == {e.body_sha256 for e in rig.double.exchanges}


class Silent:
    """An upstream that takes a request and does not answer until released."""

    def __init__(self) -> None:
        self.url = ""
        self.release = threading.Event()

    def app(self) -> Starlette:
        async def silent(_request: Request) -> Response:
            await asyncio.get_running_loop().run_in_executor(None, self.release.wait, 30)
            return JSONResponse({})

        return Starlette(routes=[Route("/v1/chat/completions", silent, methods=["POST"])])


@pytest.mark.whole_run  # the proxy's graceful stop waits 5 s for the exchange first
def test_a_request_the_upstream_never_answered_is_recorded_at_stop(tmp_path: Path) -> None:
    upstream = Silent()
    with serve_in_thread(server_for, upstream, "silent upstream"):
        try:
            proxy = RecordingProxy(upstream.url, tmp_path / "x.jsonl").start()
            with pytest.raises(httpx.TimeoutException):
                httpx.post(f"{proxy.url}/v1/chat/completions", json=chat_body(), timeout=0.5)
            proxy.stop()  # the exchange is still waiting: cancelled, and kept
        finally:
            upstream.release.set()  # before the upstream stops: it need not wait for it
    (record,) = read_records(tmp_path / "x.jsonl")
    assert record.status is None and record.request_json == chat_body()
    assert record.error is not None and record.error.startswith("cancelled before the upstream")
