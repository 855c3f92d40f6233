"""Pairing is checked, never assumed: which samples every arm has, and whether they match.

A first streaming pass over every file keeps, per arm, only each sample key (task, sample id,
epoch) with its input and target hashes, never a sample's body: memory grows with the number
of samples, not with the size of the logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import Field

from pairbench._errors import ImportRefused
from pairbench._model import Frozen
from pairbench.importers._base import LogFacts, SampleRecord

Key = tuple[str, str, int]
"""(task, sample id, epoch); task is ``""`` when the file names one task for all samples."""


class Unpaired(Frozen):
    """Samples one arm has and another lacks: listed, excluded, counted."""

    arm: str
    """The arm that has them."""
    count: int
    """How many (sample, epoch) keys."""
    examples: list[str] = Field(default_factory=list)
    """Up to ten, as ``sample@epoch``."""


class Pairing(Frozen):
    """What the first pass found: the keys every arm has, and what was excluded or differs."""

    paired: int
    """(sample, epoch) keys present in every arm."""
    unpaired: list[Unpaired] = Field(default_factory=list)
    """Per arm, keys only it (or not every arm) has: excluded from the analysis."""
    differences: list[str] = Field(default_factory=list)
    """Differences in task, task version or sample inputs between arms (refused unless
    ``--allow-different-inputs``)."""
    a_a: bool = False
    """Every arm records the same model: an A/A check of the harness and its noise."""


def header_differences(facts: Sequence[LogFacts]) -> list[str]:
    """Task, task version and dataset differences between the files' headers."""
    out = []
    for field in ("task", "task_version", "dataset"):
        values = {f.path: getattr(f, field) for f in facts}
        if len(set(values.values())) > 1:
            listed = "; ".join(f"{p}: {v!r}" for p, v in values.items())
            out.append(f"{field.replace('_', ' ')} differs ({listed})")
    return out


class KeyIndex:
    """Per arm, each key's (input hash, target hash): the first pass's whole memory."""

    def __init__(self, arms: Sequence[str]) -> None:
        self.arms = list(arms)
        self.keys: dict[str, dict[Key, tuple[str | None, str | None]]] = {a: {} for a in arms}
        self.min_epoch: int | None = None
        self.scores: dict[str, dict[Key, float]] = {a: {} for a in arms}
        """Per arm, each scored key's primary score: for score deltas (a float per key)."""

    def add(
        self,
        source: str,
        records: Iterable[SampleRecord],
        arm_of: dict[str, str],
        primary: str | None = None,
    ) -> None:
        for record in records:
            arm = arm_of[record.arm]
            key: Key = (record.task or "", record.sample_id, record.epoch)
            seen = self.keys[arm]
            if key in seen:
                raise ImportRefused(
                    f"{source}: sample {record.sample_id!r} epoch {record.epoch} appears twice "
                    f"for arm {arm!r}. Fix: map the epoch/repeat column (--option epoch=COLUMN)"
                    " or pass each arm's samples once"
                )
            seen[key] = (record.input_hash, record.target_hash)
            score = record.scores.get(primary) if primary is not None else None
            if record.outcome != "infra" and score is not None:
                self.scores[arm][key] = score
            if self.min_epoch is None or record.epoch < self.min_epoch:
                self.min_epoch = record.epoch

    def pairing(self, models: Sequence[str | None]) -> tuple[Pairing, set[Key]]:
        """The pairing facts, and the keys every arm has."""
        sets = [set(self.keys[a]) for a in self.arms]
        common = set.intersection(*sets) if sets else set()
        unpaired = []
        for arm, keys in zip(self.arms, sets, strict=True):
            alone = sorted(keys - common)
            if alone:
                unpaired.append(
                    Unpaired(
                        arm=arm,
                        count=len(alone),
                        examples=[f"{(t + '/') if t else ''}{s}@{e}" for t, s, e in alone[:10]],
                    )
                )
        differences: list[str] = []
        first = self.arms[0]
        for arm in self.arms[1:]:
            for what, index in (("input", 0), ("target", 1)):
                differ = [
                    k
                    for k in sorted(common)
                    if self.keys[first][k][index] is not None
                    and self.keys[arm][k][index] is not None
                    and self.keys[first][k][index] != self.keys[arm][k][index]
                ]
                if differ:
                    shown = ", ".join(f"{s}@{e}" for _, s, e in differ[:5])
                    differences.append(
                        f"{len(differ)} samples have a different {what} in arm {arm!r} than in "
                        f"{first!r} (first: {shown})"
                    )
        same_model = len(set(models)) == 1 and models[0] is not None and len(models) > 1
        return (
            Pairing(paired=len(common), unpaired=unpaired, differences=differences, a_a=same_model),
            common,
        )
