"""The http adapter against a real loopback server: sync answers, polled jobs, refusals."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pairbench._errors import SpecError
from pairbench.agents import InfraFailure, RunSignals
from pairbench.studies.attribution_reliability.engines import (
    EngineOutcome,
    EngineRequest,
    EngineSignals,
    EngineSpec,
    Persona,
    run_engine,
)

pytestmark = pytest.mark.whole_run

REPORT = json.dumps({"status": "completed", "findings": [{"id": "f1", "claim_scope": "usability"}]})

Answer = tuple[int, dict[str, str], str]


@dataclass
class Script:
    """What the server answers, one entry per request (the last one repeats)."""

    answers: list[Answer] = field(default_factory=list)
    seen: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(method, path, body, authorization) of every request."""


class Handler(BaseHTTPRequestHandler):
    script: Script

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        auth = self.headers.get("authorization") or ""
        self.script.seen.append((self.command, self.path, body, auth))
        answers = self.script.answers
        status, headers, text = answers.pop(0) if len(answers) > 1 else answers[0]
        data = text.encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    handler = type("ScriptedHandler", (Handler,), {"script": script})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", script
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def request() -> EngineRequest:
    return EngineRequest(
        mode="scan",
        start_url="http://127.0.0.1:9/v/abc",
        personas=[Persona(user="u1", goal="You want to book a table.")],
        model_seed=7,
    )


def call(
    url: str, tmp_path: Path, signals: RunSignals | None = None, timeout_s: float = 10
) -> EngineOutcome:
    spec = EngineSpec.parse(
        {"engine": "http", "url": url + "/", "headers": {"Authorization": "${env:ENG_TOKEN}"}}
    )
    env = {"ENG_TOKEN": "Bearer t0k"}
    return asyncio.run(
        run_engine(spec, request(), env=env, workdir=tmp_path, signals=signals, timeout_s=timeout_s)
    )


def test_200_carries_the_report(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.answers = [(200, {}, REPORT)]
    outcome = call(url, tmp_path)
    assert outcome.failure is None, outcome.message
    assert outcome.report is not None and outcome.report.findings[0].id == "f1"
    method, path, body, auth = script.seen[0]
    assert (method, path, auth) == ("POST", "/scan", "Bearer t0k")
    assert json.loads(body) == request().wire()


def test_202_is_polled_until_200(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.answers = [
        (202, {"Location": "/jobs/7"}, ""),
        (202, {"Location": "/jobs/7"}, ""),
        (200, {}, REPORT),
    ]
    outcome = call(url, tmp_path)
    assert outcome.failure is None, outcome.message
    assert [(m, p) for m, p, _, _ in script.seen] == [
        ("POST", "/scan"),
        ("GET", "/jobs/7"),
        ("GET", "/jobs/7"),
    ]


def test_a_job_that_never_ends_is_a_timeout(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.answers = [(202, {"Location": "/jobs/1"}, "")]
    outcome = call(url, tmp_path, timeout_s=1)
    assert outcome.failure == "timeout"


def test_text_is_non_json(server: tuple[str, Script], tmp_path: Path) -> None:
    url, script = server
    script.answers = [(200, {}, "<html>ok</html>")]
    assert call(url, tmp_path).failure == "non_json"


def test_refused_before_the_first_success_is_infrastructure(
    server: tuple[str, Script], tmp_path: Path
) -> None:
    url, script = server
    script.answers = [(401, {}, "bad key")]
    with pytest.raises(InfraFailure, match="HTTP 401"):
        call(url, tmp_path)
    with pytest.raises(InfraFailure, match="ConnectError"):
        call(f"http://127.0.0.1:{_closed_port()}", tmp_path)


@pytest.mark.parametrize("signals", [EngineSignals(), RunSignals()], ids=["engine", "run"])
def test_refused_after_a_success_is_a_runtime_failure(
    server: tuple[str, Script], tmp_path: Path, signals: RunSignals
) -> None:
    url, script = server
    script.answers = [(200, {}, REPORT), (503, {}, "overloaded")]
    assert call(url, tmp_path, signals).failure is None
    outcome = call(url, tmp_path, signals)
    assert outcome.failure == "refused"
    assert "HTTP 503" in outcome.message
    assert outcome.raw_stdout == "overloaded"
    # Another engine's success does not count for this one.
    with pytest.raises(InfraFailure):
        call(f"http://127.0.0.1:{_closed_port()}", tmp_path, signals)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_reference_inside_a_header_value_is_resolved(
    server: tuple[str, Script], tmp_path: Path
) -> None:
    # `Bearer ${env:X}` used to be sent literally: only a whole value was a reference.
    url, script = server
    script.answers = [(200, {}, REPORT)]
    spec = EngineSpec.parse(
        {"engine": "http", "url": url, "headers": {"Authorization": "Bearer ${env:ENG_KEY}"}}
    )
    outcome = asyncio.run(
        run_engine(spec, request(), env={"ENG_KEY": "k3y"}, workdir=tmp_path, timeout_s=10)
    )
    assert outcome.failure is None, outcome.message
    assert script.seen[0][3] == "Bearer k3y"


def test_an_unset_variable_in_a_header_is_refused_before_any_request(
    server: tuple[str, Script], tmp_path: Path
) -> None:
    url, script = server
    script.answers = [(200, {}, REPORT)]
    spec = EngineSpec.parse(
        {"engine": "http", "url": url, "headers": {"Authorization": "Bearer ${env:ENG_KEY}"}}
    )
    with pytest.raises(SpecError) as caught:
        asyncio.run(run_engine(spec, request(), env={}, workdir=tmp_path, timeout_s=10))
    assert caught.value.problems == [
        "engine.headers.Authorization: 'Bearer ${env:ENG_KEY}' reads the runner's ENG_KEY, "
        "which is not set. Fix: export ENG_KEY=... before running."
    ]
    assert script.seen == []
