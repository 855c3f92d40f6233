"""The scenario grid of a campaign study: scenarios × pairs × two arms of outcomes.

Each cell is one scenario in one campaign: passed (True), scored but not passed (False),
or unscored (None, e.g. an infrastructure outcome). The grid's tests are secondary to
the campaign-level ones in ``_campaign``: the exact McNemar over all discordant cells
pools scenarios and pairs as if every cell were independent (valid for the sharp null
only when campaigns are), so it carries that label; the sign test over scenarios' net
direction is a robustness check that gives each scenario one vote.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from pairbench.analysis._mcnemar import mcnemar_exact

CELLS_ASSUMPTION = "treats cells as independent"


class ScenarioRow(NamedTuple):
    """One scenario across every pair: k/N per arm and the discordant counts."""

    scenario: str
    baseline_passed: int
    baseline_scored: int
    """The baseline's rate is ``baseline_passed / baseline_scored`` (unscored cells out)."""
    candidate_passed: int
    candidate_scored: int
    both: int
    """Pairs (both arms scored) that both arms passed."""
    baseline_only: int
    """Pairs only the baseline passed."""
    candidate_only: int
    """Pairs only the candidate passed."""
    neither: int
    unscored: int
    """Pairs left out of the discordance because at least one arm was unscored."""


class ScenarioGrid(NamedTuple):
    """Per-scenario counts, the pooled McNemar over cells and the scenario sign test."""

    rows: tuple[ScenarioRow, ...]
    pairs: int
    baseline_only: int
    """Discordant (scenario, pair) cells the baseline alone passed, over all scenarios."""
    candidate_only: int
    mcnemar_p: float
    """Exact two-sided McNemar over all discordant cells; see ``mcnemar_assumption``."""
    mcnemar_assumption: str
    """Always ``"treats cells as independent"``: print it beside the p value."""
    favours_candidate: int
    """Scenarios whose candidate-only count exceeds their baseline-only count."""
    favours_baseline: int
    tied: int
    """Scenarios with equal discordant counts (zero included): dropped from the sign test."""
    sign_test_p: float
    """Exact two-sided binomial test of ``favours_candidate`` vs ``favours_baseline``."""
    pair_differences: tuple[int, ...]
    """``D_i``: candidate minus baseline passes in pair ``i``, over scenarios both scored."""


def _cells(outcomes: Sequence[Sequence[bool | None]] | Any, arm: str) -> np.ndarray[Any, Any]:
    grid = np.asarray(outcomes, dtype=object)
    if grid.ndim != 2:
        raise ValueError(
            f"{arm} outcomes need one row per scenario and one column per pair "
            f"(2-D), got shape {grid.shape}"
        )
    values = np.full(grid.shape, np.nan)
    for index, cell in np.ndenumerate(grid):
        if cell is None or (isinstance(cell, float) and math.isnan(cell)):
            continue  # unscored: stays NaN
        if cell in (True, False):  # bools, 0/1 and numpy bools alike
            values[index] = float(bool(cell))
        else:
            raise ValueError(
                f"{arm} outcome at scenario {index[0]}, pair {index[1]} is {cell!r}: use True "
                "(passed), False (scored, not passed) or None (unscored)"
            )
    return values


def scenario_grid(
    baseline: Sequence[Sequence[bool | None]] | Any,
    candidate: Sequence[Sequence[bool | None]] | Any,
    scenarios: Sequence[str] | None = None,
) -> ScenarioGrid:
    """Count a campaign study's grid and run its two cell-level tests.

    ``baseline[s][i]`` and ``candidate[s][i]`` are scenario ``s`` in pair ``i``: True
    (passed), False (scored, not passed) or None (unscored). A pair counts toward a
    scenario's discordance, and toward ``D_i``, only where both arms were scored, so both
    arms are always compared on the same cells. ``scenarios`` names the rows (default
    ``"0"``, ``"1"``, ...).

    Example::

        >>> g = scenario_grid(
        ...     [[True, True, False], [False, False, False]],
        ...     [[True, True, True], [True, None, True]],
        ...     scenarios=["AR-001", "AR-002"],
        ... )
        >>> (g.baseline_only, g.candidate_only, g.mcnemar_p, g.mcnemar_assumption)
        (0, 3, 0.25, 'treats cells as independent')
        >>> (g.favours_candidate, g.favours_baseline, g.sign_test_p, g.pair_differences)
        (2, 0, 0.5, (1, 0, 2))
        >>> g.rows[1].candidate_passed, g.rows[1].candidate_scored, g.rows[1].unscored
        (2, 2, 1)

    Raises:
        ValueError: the arms' grids differ in shape, are not 2-D, hold a value other
            than True/False/None, or ``scenarios`` does not name every row.
    """
    base, cand = _cells(baseline, "baseline"), _cells(candidate, "candidate")
    if base.shape != cand.shape:
        raise ValueError(
            f"both arms need the same scenarios × pairs grid: baseline {base.shape}, "
            f"candidate {cand.shape}"
        )
    n_scenarios, n_pairs = base.shape
    names = [str(s) for s in range(n_scenarios)] if scenarios is None else list(scenarios)
    if len(names) != n_scenarios:
        raise ValueError(f"{len(names)} scenario names for {n_scenarios} grid rows")
    scored = ~np.isnan(base) & ~np.isnan(cand)
    # NaN compares False, so the masks below already exclude unscored cells; `scored`
    # makes that explicit where a False would otherwise count as "not passed".
    b_pass, c_pass = (base == 1.0) & scored, (cand == 1.0) & scored
    rows = tuple(
        ScenarioRow(
            scenario=names[s],
            baseline_passed=int(np.count_nonzero(base[s] == 1.0)),
            baseline_scored=int(np.count_nonzero(~np.isnan(base[s]))),
            candidate_passed=int(np.count_nonzero(cand[s] == 1.0)),
            candidate_scored=int(np.count_nonzero(~np.isnan(cand[s]))),
            both=int(np.count_nonzero(b_pass[s] & c_pass[s])),
            baseline_only=int(np.count_nonzero(b_pass[s] & ~c_pass[s])),
            candidate_only=int(np.count_nonzero(~b_pass[s] & c_pass[s])),
            neither=int(np.count_nonzero(scored[s] & ~b_pass[s] & ~c_pass[s])),
            unscored=int(np.count_nonzero(~scored[s])),
        )
        for s in range(n_scenarios)
    )
    baseline_only = sum(row.baseline_only for row in rows)
    candidate_only = sum(row.candidate_only for row in rows)
    favours_candidate = sum(row.candidate_only > row.baseline_only for row in rows)
    favours_baseline = sum(row.baseline_only > row.candidate_only for row in rows)
    differences = c_pass.sum(axis=0).astype(int) - b_pass.sum(axis=0).astype(int)
    return ScenarioGrid(
        rows=rows,
        pairs=n_pairs,
        baseline_only=baseline_only,
        candidate_only=candidate_only,
        mcnemar_p=mcnemar_exact(baseline_only, candidate_only),
        mcnemar_assumption=CELLS_ASSUMPTION,
        favours_candidate=favours_candidate,
        favours_baseline=favours_baseline,
        tied=n_scenarios - favours_candidate - favours_baseline,
        # The sign test is the same exact binomial at 1/2 as McNemar's, on scenarios'
        # votes instead of cells: one function, one set of reference numbers.
        sign_test_p=mcnemar_exact(favours_baseline, favours_candidate),
        pair_differences=tuple(int(x) for x in differences),
    )
