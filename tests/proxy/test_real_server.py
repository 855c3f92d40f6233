"""The recording proxy in front of the real llama-server and Gemma 3 270M: identity, effective
sampling, seeds, /metrics against the proxy's totals, preflight. CPU only and slow, so one
server for the module and tiny requests (a few tokens each)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.common import skip_outside_ci
from pairbench.model import LlamaServer
from pairbench.model._build import cached_build
from pairbench.model._weights import installed_model
from pairbench.proxy import (
    RecordingProxy,
    effective_sampling,
    interference,
    model_identity,
    preflight,
    read_metrics,
    seed_evidence,
)

pytestmark = pytest.mark.model
PROMPT = [{"role": "user", "content": "Say hi."}]


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    with LlamaServer.start() as running:
        yield running


def _ask(base: str, **body: Any) -> dict[str, Any]:
    request = {"messages": PROMPT, "max_tokens": 4, **body}
    reply = httpx.post(f"{base}/v1/chat/completions", json=request, timeout=120.0)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def test_the_identity_names_the_build_the_slots_and_the_gguf(server: LlamaServer) -> None:
    found = model_identity(server.url)
    model = installed_model()
    assert model is not None
    assert found.health == "ok" and found.build_info == "b0-unknown"  # an sdist build
    assert (found.total_slots, found.n_ctx, found.slots) == (1, 4096, 1)
    assert found.models == ["gemma-3-270m-q4_k_m"] and found.model_path == model.path
    assert found.chat_template_caps is not None and found.chat_template_sha256 is not None
    assert found.gguf is not None and found.gguf.sha256 == model.sha256
    assert found.gguf.architecture == "gemma3" and found.gguf.context_length == 32768
    assert found.gguf.file_type == 15  # Q4_K_M
    assert found.missing == {}


def test_sampling_and_seeds_are_read_from_what_was_sent(
    server: LlamaServer, tmp_path: Path
) -> None:
    defaults = model_identity(server.url, hash_gguf=False).sampling_defaults
    with RecordingProxy(server.url, tmp_path / "x.jsonl", label="omitted") as proxy:
        _ask(proxy.url, seed=11)
        proxy.label = "sent"
        direct = _ask(server.url, seed=11, temperature=1.0)
        proxied = _ask(proxy.url, seed=11, temperature=1.0)
        records = proxy.records()
    omitted = effective_sampling([r for r in records if r.label == "omitted"], defaults=defaults)
    temperature = omitted.parameter("temperature")
    assert temperature.status == "server_default"
    assert temperature.server_default == pytest.approx(0.8)
    sent = effective_sampling([r for r in records if r.label == "sent"], {"temperature": 1.0})
    assert sent.ok and sent.parameter("temperature").status == "sent"
    assert seed_evidence(records, 11).status == "seeded"
    # seeded, one slot, no prompt cache: the proxy does not change what the model says
    assert proxied["choices"][0]["message"] == direct["choices"][0]["message"]
    (slot,) = server.slots()
    assert slot["params"]["seed"] == 11  # the server applied the seed the proxy recorded


def test_metrics_match_the_proxy_and_a_direct_call_is_interference(
    server: LlamaServer, tmp_path: Path
) -> None:
    with RecordingProxy(server.url, tmp_path / "x.jsonl") as proxy:
        before = read_metrics(server.url)
        _ask(proxy.url, seed=1)
        stream = {"messages": PROMPT, "max_tokens": 4, "seed": 4, "stream": True}
        with httpx.stream(
            "POST", f"{proxy.url}/v1/chat/completions", json=stream, timeout=120.0
        ) as reply:
            reply.read()
        middle = read_metrics(server.url)
        clean = interference(before, middle, proxy.records())
        _ask(proxy.url, seed=2)
        _ask(server.url, seed=3)  # another client, straight to the server
        dirty = interference(middle, read_metrics(server.url), proxy.records())
    assert clean.status == "clean", clean.reason
    assert clean.requests == [1, 2]
    for check in clean.checks[1:]:  # prompt, cached and predicted tokens: equal
        assert check.server == check.proxy, check
    assert {c.name: c.proxy for c in clean.checks}["prompt_tokens"] == sum(
        (r.timings or {}).get("prompt_n", 0) for r in proxy.records()[:2]
    )
    assert dirty.status == "interference", dirty.reason
    assert dirty.requests == [3]
    prompt = {c.name: c for c in dirty.checks}["prompt_tokens"]
    assert prompt.server is not None and prompt.proxy is not None
    assert prompt.server > prompt.proxy > 0  # the direct call's prompt, unaccounted for


def test_preflight_passes_on_the_idle_server(server: LlamaServer) -> None:
    found = preflight(server.url)
    assert found.ok, found.reasons
