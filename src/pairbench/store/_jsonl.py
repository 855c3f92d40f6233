"""Reading an append-only JSONL log that other processes write: each line one model.

A writer appends whole lines, so a crash (a SIGKILLed probe, a proxy stopped mid-write)
leaves at most one torn last line, without its newline: it is dropped, never half-read. Any
other line that is not a record means the file was edited or is not that log: refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def read_jsonl(path: Path, model: type[M], refuse: Callable[[int, str], Exception]) -> list[M]:
    """Every whole line of ``path`` validated as ``model``, in file order; ``[]`` when the
    file does not exist. A line that does not validate raises ``refuse(line_number,
    why)`` (``why``: the first line of the parser's message).

    **Usage**::

        records = read_jsonl(log, ExchangeRecord, lambda n, why: ProxyError(f"line {n}: {why}"))
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a line never written whole (dropped)
    out: list[M] = []
    for number, line in enumerate(lines, 1):
        try:
            out.append(model.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            raise refuse(number, str(exc).splitlines()[0]) from None
    return out
