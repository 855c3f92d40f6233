"""The stored final answer: whole under its limit, else head, tail, byte count and hash."""

from __future__ import annotations

import hashlib
import json

from pairbench.store._answer import CUT_MARKER, stored_answer


def test_an_answer_under_the_limit_is_stored_whole() -> None:
    assert stored_answer("héllo", 4096) == "héllo"


def test_a_long_answer_keeps_head_tail_size_and_sha256() -> None:
    answer = "A" * 10_000 + "é" * 10_000 + "Z" * 10_000
    kept = stored_answer(answer, 4096)
    raw = answer.encode()
    assert kept.startswith("AAAA") and kept.endswith("ZZZZ")
    assert f"{CUT_MARKER} {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}" in kept
    assert len(json.dumps(kept, ensure_ascii=False).encode()) <= 4096 + 2


def test_control_characters_count_at_their_json_size() -> None:
    # Each \x01 takes six bytes in JSON: 1,000 of them do not fit in 4 KiB.
    kept = stored_answer("\x01" * 1000, 4096)
    assert CUT_MARKER in kept
    assert len(json.dumps(kept, ensure_ascii=False).encode()) <= 4096 + 2
