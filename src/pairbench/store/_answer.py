"""The final answer as a result record stores it: whole, or its head and tail around a
marker naming the whole answer's byte count and SHA-256 (``budget.limits.final_answer``).

The size that counts is the answer's size in the record's JSON (a control character takes
six bytes there), so no answer makes a result file much larger than the limit.
"""

from __future__ import annotations

import hashlib
import json

CUT_MARKER = "[pairbench: answer cut]"
"""Opens the marker between the head and the tail of a cut answer."""


def _json_size(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


def _fit(text: str, budget: int, *, tail: bool) -> str:
    """The longest head (or tail) of ``text`` whose JSON form fits in ``budget`` bytes."""
    lo, hi = 0, min(len(text), budget)
    while lo < hi:  # binary search on characters; JSON size grows with length
        mid = (lo + hi + 1) // 2
        piece = text[-mid:] if tail else text[:mid]
        if _json_size(piece) <= budget:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return ""
    return text[-lo:] if tail else text[:lo]


def stored_answer(answer: str, limit: int) -> str:
    """``answer`` if its JSON form fits in ``limit`` bytes, else its head and tail (each
    under half of it) around a marker with the whole answer's UTF-8 byte count and SHA-256.

    **Usage**::

        stored_answer("short", 1024)        # -> "short"
        stored_answer("x" * 5000, 1024)     # -> "xxx…\\n[pairbench: answer cut] 5000 bytes…"
    """
    if len(answer) <= limit // 6 or _json_size(answer) <= limit:
        return answer
    raw = answer.encode("utf-8", errors="surrogatepass")
    marker = (
        f"\n{CUT_MARKER} {len(raw)} bytes, sha256 {hashlib.sha256(raw).hexdigest()}; "
        f"the first and last parts are kept\n"
    )
    half = (limit - _json_size(marker)) // 2
    return _fit(answer, half, tail=False) + marker + _fit(answer, half, tail=True)
