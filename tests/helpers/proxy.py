"""Helpers for tests/proxy: a chat double with a recording proxy in front of it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from pairbench.proxy import RecordingProxy
from pairbench.testing.chat_double import ChatDouble, start_chat_double

PROMPT = "What is the title of issue #4 in the repository amber-otter? Answer with the title."


def chat_body(**extra: Any) -> dict[str, Any]:
    """A tracker request the double answers with a tool call (or prose without tools)."""
    return {"model": "m", "messages": [{"role": "user", "content": PROMPT}], **extra}


def post(base: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{base}/v1/chat/completions", json=body, headers=headers, timeout=30)


@dataclass
class Rig:
    """A double (``double.url``: direct) and a proxy in front of it (``proxy.url``)."""

    double: ChatDouble
    proxy: RecordingProxy
    log: Path


@contextmanager
def rig_for(script: dict[str, Any], tmp_path: Path) -> Iterator[Rig]:
    with (
        start_chat_double(script) as double,
        RecordingProxy(double.url, tmp_path / "exchanges.jsonl", label="AR-001") as proxy,
    ):
        yield Rig(double, proxy, tmp_path / "exchanges.jsonl")
