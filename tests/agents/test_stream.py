"""Reading an agent's stream: lines, pieces of long lines, invalid UTF-8, the byte limit."""

from __future__ import annotations

import asyncio
import hashlib

from pairbench.agents._stream import MAX_PIECE, Tally, read_stream


def _read(data: bytes, limit: int) -> tuple[list[tuple[str, bool]], Tally]:
    async def go() -> tuple[list[tuple[str, bool]], Tally]:
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        pieces: list[tuple[str, bool]] = []
        tally = await read_stream(stream, limit, lambda t, e: pieces.append((t, e)))
        return pieces, tally

    return asyncio.run(go())


def test_lines_and_a_last_line_without_newline() -> None:
    pieces, tally = _read(b"one\ntwo\nthree", 1 << 20)
    assert pieces == [("one", True), ("two", True), ("three", True)]
    assert tally.size == 13 and not tally.exceeded
    assert tally.sha256 == hashlib.sha256(b"one\ntwo\nthree").hexdigest()


def test_a_long_line_comes_in_pieces_never_splitting_a_character() -> None:
    line = ("é" * MAX_PIECE).encode()  # two bytes each: pieces end mid-line
    pieces, _ = _read(line + b"\n", 1 << 22)
    assert all("\ufffd" not in text for text, _ in pieces)
    assert "".join(text for text, _ in pieces) == "é" * MAX_PIECE
    assert [ends for _, ends in pieces][-1] is True and pieces[0][1] is False


def test_invalid_utf8_is_replaced_and_the_limit_stops_reading() -> None:
    pieces, tally = _read(b"\xff\xfeok\n" + b"x" * 10_000, 5000)
    assert pieces[0] == ("\ufffd\ufffdok", True)
    assert tally.exceeded and tally.size == 5000
    assert sum(len(t) for t, _ in pieces) == 4 + 5000 - 5
