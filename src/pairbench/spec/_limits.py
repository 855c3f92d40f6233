"""Per-attempt limits (``budget: {limits: ...}``, overridable per arm as ``limits:``).

A limit an agent reaches is its attempt's outcome (``output_limit``, ``memory_limit``,
``disk_limit``, ``process_limit``), never a crash of the run. The defaults are far past what
a normal agent uses; they are there so that one misbehaving attempt cannot take the runner's
memory or the machine's disk::

    budget:
      limits: {output_per_stream: 16 MiB, final_answer: 1 MiB, memory: 8 GiB,
               processes: 1024, file_size: 512 MiB}
    arms:
      heavy: {limits: {memory: 16 GiB}}     # this arm only; the rest as the budget says

Sizes are bytes: a whole number, or a number with a unit (``KiB``, ``MiB``, ``GiB``, and the
decimal ``KB``, ``MB``, ``GB``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from pairbench._model import Frozen

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

_UNITS = {
    "": 1, "b": 1, "kib": KIB, "mib": MIB, "gib": GIB, "tib": 1024 * GIB,
    "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
}  # fmt: skip
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(value: Any) -> Any:
    """``"16 MiB"`` -> 16777216; a number passes through; anything else is left for
    pydantic to reject (with the field's name).

    >>> parse_size("1.5 KiB"), parse_size(4096), parse_size("2GB")
    (1536, 4096, 2000000000)
    """
    if not isinstance(value, str):
        return value
    match = _SIZE.match(value)
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(
            f"{value!r} is not a size: write bytes (16777216) or a number and a unit "
            f"(16 MiB; units: KiB, MiB, GiB, KB, MB, GB)"
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


Size = Annotated[int, BeforeValidator(parse_size)]


def format_size(n: int) -> str:
    """The largest binary unit that divides ``n`` exactly (``16 MiB``), else bytes.

    >>> format_size(16 * 1024 * 1024), format_size(1000)
    ('16 MiB', '1000 bytes')
    """
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


class Limits(Frozen):
    """What one attempt may use. Each is enforced by the operating system or while the
    runner streams the agent's output, and reaching it ends the attempt as its outcome."""

    output_per_stream: Size = Field(default=16 * MIB, ge=4 * KIB, le=64 * GIB)
    """Bytes the agent may write to stdout, and to stderr, each: past it the attempt is
    stopped as ``output_limit``. Counted while the output is streamed to the transcript."""
    final_answer: Size = Field(default=MIB, ge=4 * KIB, le=64 * GIB)
    """Bytes of the final answer stored in the result: a longer answer is stored as its
    head and tail around a marker with its byte count and SHA-256 (graders see it whole)."""
    memory: Size = Field(default=8 * GIB, ge=16 * MIB, le=16 * 1024 * GIB)
    """Memory of the agent and every process it starts (a cgroup's ``memory.max``; without
    a writable cgroup, each process's ``RLIMIT_DATA``): past it, ``memory_limit``."""
    processes: int = Field(default=1024, ge=8, le=4_194_304)
    """Processes and threads the agent may have at once (a cgroup's ``pids.max``; without
    one, ``RLIMIT_NPROC``, which Linux ignores for root): past it, ``process_limit``."""
    file_size: Size = Field(default=512 * MIB, ge=4 * KIB, le=16 * 1024 * GIB)
    """The largest file the agent may write (``RLIMIT_FSIZE``): past it, ``disk_limit``."""

    def merged(self, overrides: LimitOverrides | None) -> Limits:
        """These limits with an arm's overrides applied."""
        if overrides is None:
            return self
        return self.model_copy(update=overrides.model_dump(exclude_none=True))

    def lines(self) -> list[str]:
        """One ``name: value`` per limit, for ``check``."""
        return [
            f"output per stream {format_size(self.output_per_stream)}",
            f"final answer stored {format_size(self.final_answer)}",
            f"memory {format_size(self.memory)}",
            f"processes {self.processes}",
            f"file size {format_size(self.file_size)}",
        ]


class LimitOverrides(Frozen):
    """An arm's ``limits:``: the budget's limits it changes (the same names and bounds)."""

    output_per_stream: Size | None = Field(default=None, ge=4 * KIB, le=64 * GIB)
    final_answer: Size | None = Field(default=None, ge=4 * KIB, le=64 * GIB)
    memory: Size | None = Field(default=None, ge=16 * MIB, le=16 * 1024 * GIB)
    processes: int | None = Field(default=None, ge=8, le=4_194_304)
    file_size: Size | None = Field(default=None, ge=4 * KIB, le=16 * 1024 * GIB)
