"""Paired deltas of a non-binary score (a 0-1 grade, a BLEU, a judge's 1-10) between arms.

Pass/fail gets the usual paired 2x2, Newcombe and McNemar; a score that takes other values
also gets the mean paired difference with a task-clustered bootstrap interval (seeded), since
an epoch's repeat of one sample is not independent of the others.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from pairbench._model import Frozen
from pairbench.analysis import cluster_bootstrap_paired
from pairbench.importers._pairing import Key, KeyIndex

SEED = 20261206
"""The bootstrap's seed (documented, fixed: the interval is the same on every import)."""
REPS = 2000


class ScoreDelta(Frozen):
    """Mean paired difference ``a - b`` of the primary score over the keys both arms scored."""

    a: str
    b: str
    metric: str
    pairs: int = Field(ge=0)
    """Keys (sample, epoch) both arms scored."""
    mean_a: float
    mean_b: float
    estimate: float
    low: float
    high: float
    method: str = (
        "mean paired difference; 95% percentile interval from a cluster bootstrap over samples "
        f"(their epochs resampled together), {REPS} resamples, seed {SEED}"
    )


def score_deltas(
    index: KeyIndex, common: set[Key], comparisons: Sequence[Sequence[str]], metric: str
) -> list[ScoreDelta]:
    """One delta per comparison when the primary score is not only 0 and 1; else none."""
    values = {v for arm in index.scores.values() for v in arm.values()}
    if values <= {0.0, 1.0}:
        return []
    out = []
    for a, b in comparisons:
        keys = sorted(k for k in common if k in index.scores[a] and k in index.scores[b])
        if len(keys) < 2:
            continue
        xa = [index.scores[a][k] for k in keys]
        xb = [index.scores[b][k] for k in keys]
        clusters = [f"{task}/{sample}" for task, sample, _ in keys]
        r = cluster_bootstrap_paired(xa, xb, clusters, "mean", REPS, seed=SEED)
        out.append(
            ScoreDelta(
                a=a,
                b=b,
                metric=metric,
                pairs=len(keys),
                mean_a=sum(xa) / len(xa),
                mean_b=sum(xb) / len(xb),
                estimate=r.estimate,
                low=r.low,
                high=r.high,
            )
        )
    return out
