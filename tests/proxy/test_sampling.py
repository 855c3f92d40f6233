"""Effective sampling and seed evidence, read from the bodies the proxy actually forwarded."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from helpers.proxy import Rig, chat_body, post, rig_for
from pairbench.proxy import effective_sampling, model_identity, seed_evidence
from pairbench.proxy._sampling import UNPROVEN


def test_each_parameter_is_sent_mixed_or_the_server_default(rig: Rig) -> None:
    post(rig.proxy.url, chat_body(temperature=1.0, top_p=0.9, seed=7, mirostat=0))
    post(rig.proxy.url, chat_body(temperature=1, top_p=0.5, seed=7, max_tokens=8, mirostat=0))
    defaults = model_identity(rig.double.url, hash_gguf=False).sampling_defaults
    found = effective_sampling(rig.proxy.records(), defaults=defaults)
    assert found.requests == [1, 2] and found.ok
    temperature = found.parameter("temperature")
    assert (temperature.status, temperature.value) == ("sent", 1.0)  # 1 and 1.0 are one value
    assert found.parameter("seed").status == "sent"
    top_p = found.parameter("top_p")
    assert top_p.status == "mixed"
    assert [(v.n, v.value) for v in top_p.values] == [(1, 0.9), (2, 0.5)]
    max_tokens = found.parameter("max_tokens")
    assert max_tokens.status == "mixed" and "absent from request(s) 1" in max_tokens.detail
    top_k = found.parameter("top_k")
    assert (top_k.status, top_k.server_default) == ("server_default", 40)
    assert UNPROVEN in top_k.detail
    assert found.parameter("mirostat").status == "sent"  # another sampling key, reported
    assert {p.name for p in found.parameters}.isdisjoint({"model", "messages"})


def test_an_omitted_temperature_is_the_server_default_and_fails_the_requirement(
    rig: Rig,
) -> None:
    post(rig.proxy.url, chat_body(seed=1))
    post(rig.proxy.url, chat_body(seed=1))
    defaults = model_identity(rig.double.url, hash_gguf=False).sampling_defaults
    found = effective_sampling(rig.proxy.records(), {"temperature": 1.0}, defaults=defaults)
    temperature = found.parameter("temperature")
    assert temperature.status == "server_default"
    assert temperature.server_default == pytest.approx(0.8)  # llama.cpp's, from /props
    assert not found.ok
    (violation,) = found.violations
    assert violation.name == "temperature" and violation.requests == [1, 2]
    assert "sent in no request" in violation.detail


def test_a_requirement_names_the_request_that_broke_it(rig: Rig) -> None:
    for value in (1.0, 1.0, 0.7):
        post(rig.proxy.url, chat_body(temperature=value))
    records = rig.proxy.records()
    found = effective_sampling(records, {"temperature": 1.0})
    assert found.parameter("temperature").status == "mixed"
    assert [v.requests for v in found.violations] == [[3]]
    assert effective_sampling(records, {"temperature": True}).violations  # True is not 1


def test_labels_select_one_scenario(rig: Rig) -> None:
    post(rig.proxy.url, chat_body(temperature=1.0))
    post(rig.proxy.url, chat_body(), **{"X-Pairbench-Label": "AR-002"})
    records = rig.proxy.records()
    first = effective_sampling([r for r in records if r.label == "AR-001"], {"temperature": 1.0})
    second = effective_sampling([r for r in records if r.label == "AR-002"], {"temperature": 1.0})
    assert first.ok and not second.ok


def test_no_request_at_all_is_a_violation_not_a_pass() -> None:
    found = effective_sampling([], {"temperature": 1.0})
    assert not found.ok and found.violations[0].detail == "no model request was recorded"
    assert seed_evidence([], 5).status == "unseeded"


def test_a_seed_dropped_on_one_retry_makes_the_trial_unseeded(tmp_path: Path) -> None:
    with rig_for({"rate_limit_on": [2]}, tmp_path) as rig:
        assert post(rig.proxy.url, chat_body(seed=5)).status_code == 200
        assert post(rig.proxy.url, chat_body(seed=5)).status_code == 429
        assert post(rig.proxy.url, chat_body()).status_code == 200  # the retry lost its seed
        records = rig.proxy.records()
    proof = seed_evidence(records, model_seed=5)
    assert proof.status == "unseeded" and proof.requests == [1, 2, 3]
    assert [(v.n, v.present) for v in proof.lacking] == [(3, False)]
    assert "#3 (no seed)" in proof.reason
    seeding = proof.seeding()
    assert (seeding.status, seeding.requests, seeding.requests_with_seed) == ("unseeded", 3, 2)


def test_retries_that_keep_the_seed_are_seeded_and_counted(tmp_path: Path) -> None:
    with rig_for({"rate_limit_on": [1]}, tmp_path) as rig:
        client = openai.OpenAI(base_url=f"{rig.proxy.url}/v1", api_key="none", max_retries=1)
        client.chat.completions.create(**chat_body(seed=5))  # 429, then the SDK's retry
        records = rig.proxy.records()
    assert [r.status for r in records] == [429, 200]
    proof = seed_evidence(records, model_seed=5)
    assert proof.status == "seeded" and proof.requests == [1, 2]
    assert seed_evidence(records, model_seed=6).status == "unseeded"


def test_a_seed_of_the_wrong_type_does_not_count(rig: Rig) -> None:
    post(rig.proxy.url, chat_body(seed=5.0))
    proof = seed_evidence(rig.proxy.records(), model_seed=5)
    assert proof.status == "unseeded" and proof.lacking[0].value == 5.0
