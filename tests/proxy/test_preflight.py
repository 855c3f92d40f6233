"""Preflight: healthy, one slot, idle; each failure named."""

from __future__ import annotations

import threading
import time

import httpx

from helpers.proxy import chat_body, post
from pairbench.proxy import preflight
from pairbench.testing.chat_double import start_chat_double


def test_an_idle_one_slot_server_passes() -> None:
    with start_chat_double({"llama_cpp": True}) as double:
        found = preflight(double.url)
    assert found.ok and found.reasons == []
    assert [c.name for c in found.checks] == ["health", "total_slots", "slots_idle"]


def test_two_slots_are_refused() -> None:
    with start_chat_double({"llama_cpp": True, "slots": 2}) as double:
        found = preflight(double.url)
    assert not found.ok
    assert found.reasons == [
        "total_slots: total_slots is 2; a paired campaign needs exactly 1 (-np 1)"
    ]


def test_a_busy_slot_is_refused() -> None:
    with start_chat_double({"llama_cpp": True, "delay_s": 1.0}) as double:
        worker = threading.Thread(target=post, args=(double.url, chat_body()))
        worker.start()
        try:
            deadline = time.monotonic() + 10  # until the double has the request in hand
            while not httpx.get(f"{double.url}/slots").json()[0]["is_processing"]:
                assert time.monotonic() < deadline, "the request never reached the double"
                time.sleep(0.01)
            busy = preflight(double.url)
        finally:
            worker.join(timeout=30)
        idle = preflight(double.url)
    assert not busy.ok and busy.reasons == [
        "slots_idle: slot(s) [0] are processing a request already"
    ]
    assert idle.ok


def test_a_server_without_llama_endpoints_fails_every_check_with_the_reason() -> None:
    with start_chat_double() as double:
        found = preflight(double.url)
    assert not found.ok and len(found.reasons) == 3
    assert all("answered 404" in reason for reason in found.reasons)
