"""A subprocess agent's output stream, read in chunks, counted, and cut into lines.

Nothing is accumulated whole: each chunk is split into lines as it arrives, a line longer
than ``MAX_PIECE`` bytes is handed on in pieces (so one line of a gigabyte costs no more
memory than a page of text), and reading stops once the stream has passed its byte limit.
Bytes that are not UTF-8 (binary output) are decoded with replacement characters for the
text of the events; the byte count and SHA-256 of the raw stream are kept in ``Tally``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_PIECE = 64 * 1024
"""The longest piece of a line handed on at once, in bytes."""
_CHUNK = 64 * 1024


@dataclass
class Tally:
    """What a stream carried: bytes read (up to the limit and one chunk past it), their
    SHA-256, and whether it passed its limit."""

    limit: int
    size: int = 0
    exceeded: bool = False
    _digest: hashlib._Hash = field(default_factory=hashlib.sha256)

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()


def _utf8_cut(data: bytes, at: int) -> int:
    """``at`` moved back (at most 3 bytes) so it does not split a UTF-8 character."""
    cut = at
    while cut > at - 3 and cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut if cut > 0 else at


async def read_stream(
    stream: asyncio.StreamReader, limit: int, on_piece: Callable[[str, bool], None]
) -> Tally:
    """Read ``stream`` to its end or its ``limit``; call ``on_piece(text, ends_line)`` for
    each line (``ends_line`` True) or piece of a long line (False), in order.

    Past ``limit`` bytes it hands on what fits, sets ``exceeded`` and returns at once: the
    caller stops the writer.
    """
    tally = Tally(limit)
    carry = b""
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            break
        room = limit - tally.size
        if len(chunk) > room:
            chunk, tally.exceeded = chunk[: max(room, 0)], True
        tally.size += len(chunk)
        tally._digest.update(chunk)
        carry += chunk
        start = 0
        while True:
            end = carry.find(b"\n", start)
            if end < 0:
                break
            on_piece(carry[start:end].decode("utf-8", errors="replace"), True)
            start = end + 1
        carry = carry[start:]
        while len(carry) > MAX_PIECE:
            cut = _utf8_cut(carry, MAX_PIECE)
            on_piece(carry[:cut].decode("utf-8", errors="replace"), False)
            carry = carry[cut:]
        if tally.exceeded:
            break
    if carry:
        on_piece(carry.decode("utf-8", errors="replace"), True)
    return tally
