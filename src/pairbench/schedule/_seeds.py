"""Paired seeds: one seed per (experiment, run seed, task, trial), shared by every arm."""

from __future__ import annotations

import hashlib

MODEL_SEED_BITS = 31


def derive_seed(experiment: str, run_seed: int, task: str, trial: int) -> int:
    """The trial seed: the first 8 bytes (big-endian) of ``sha256(experiment|run_seed|task|trial)``.

    The arm is deliberately not an input, so every arm of a pair sees the same seeded content.

    The derivation is fixed: a frozen run's seeds reproduce on any machine and version.

    >>> derive_seed("mcp-transports", 0, "read-issue-title", 0)
    14805226021092828392
    >>> derive_seed("mcp-transports", 0, "read-issue-title", 1)  # the next trial: unrelated
    6665460289719621310
    """
    text = f"{experiment}|{run_seed}|{task}|{trial}"
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def model_seed(trial_seed: int) -> int:
    """The 31-bit seed sent to a model: the trial seed's low 31 bits.

    Model servers (llama.cpp reads 4294967295 as "random") and JavaScript numbers cannot
    hold 64 bits, so every adapter sends this documented reduction instead.

    >>> model_seed(14805226021092828392)
    1855694056
    >>> model_seed(2**64 - 1) == 2**31 - 1
    True
    """
    return trial_seed & ((1 << MODEL_SEED_BITS) - 1)


def derive_run_seed(run_id: str) -> int:
    """A run seed drawn from the run ID when the user gives none (recorded in run.json)."""
    return int.from_bytes(hashlib.sha256(run_id.encode("utf-8")).digest()[:4], "big")
