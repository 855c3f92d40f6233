"""How an experiment runs: its time, concurrency and money limits, its infra policy, and
campaign blocks (``budget:``, ``infra:``, ``order: {block: campaign}``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pairbench._model import Frozen
from pairbench.spec._limits import Limits, Size

MAX_TIMEOUT_S = 86_400.0
"""The longest trial timeout: a day. Longer is a unit slip (milliseconds for seconds)."""
MAX_CONCURRENCY = 10_000
"""Agent attempts in flight at once: each holds processes and files open, so far past this
a run fails on the machine's limits before it gets any faster."""


WORKSPACE_KEPT = 256 << 20
"""``budget.workspace_kept``'s default, in bytes: more than a normal agent writes."""


class CampaignOrder(Frozen):
    """``order: {block: campaign}``: arms run in campaigns, not arm after arm per task.

    A campaign is one arm's complete run of every task of one trial index, in declared
    order (the locked scenario order, identical for every arm); a campaign pair is one
    trial index across the arms. Within a pair one arm's campaign runs whole, then the
    other's. Campaigns run one attempt at a time (``budget.concurrency: 1``), as a
    screening pair (``run --stage screening``) or from an approved plan (``run --plan``).
    """

    block: Literal["campaign"]
    """``campaign``: the only block there is."""


class Budget(Frozen):
    """Time, concurrency and money limits."""

    trial_timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    """Agent attempts in flight at once. The arms of a pair still run one after the other, in
    the pair's planned order; a slot a pair frees between its arms goes to another pair."""
    cost_ceiling_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """Hard ceiling; the run stops (remaining trials ``not_run``) before crossing it."""
    cost_per_trial_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The per-attempt cost estimate the projection uses."""
    prior_spend_usd: float = Field(
        default=0.0, ge=0, allow_inf_nan=False, exclude_if=lambda v: v == 0
    )
    """Spent before this run against the same ceiling (a protocol's calibration, say): the
    run stops before measured spend + this + the next attempt's worst case would pass
    ``cost_ceiling_usd``. Left out of the hash at 0."""
    start_stagger_s: float = Field(
        default=0.0, ge=0, le=600, allow_inf_nan=False, exclude_if=lambda v: v == 0
    )
    """Each worker slot after the first opens this many seconds after the one before (a
    protocol's "two runner processes, started 10 s apart"); the attempts' start times in the
    journal show it. Left out of the hash at 0."""
    limits: Limits = Field(default_factory=Limits, exclude_if=lambda v: v == Limits())
    """What each attempt may use (output, stored answer, memory, processes, file size); an
    arm's ``limits:`` overrides some of them. Left out of the hash at the defaults."""
    workspace_kept: Size = Field(
        default=WORKSPACE_KEPT, ge=0, exclude_if=lambda v: v == WORKSPACE_KEPT
    )
    """Bytes of an attempt's workspace kept in the run folder (default 256 MiB; a unit may
    follow the number, as in the limits). Over it, graders still read every file; then the
    smallest files are kept while they fit and a manifest of every file's name, size and
    SHA-256 replaces the rest. Left out of the hash at its default."""


class InfraPolicy(Frozen):
    """What happens when the harness, not the agent, fails."""

    retries: int = Field(default=1, ge=0, le=1)
    """Retries of an infra-failed trial (kept under ``infra/``); one more failure stops the run."""


MAX_REPLACEMENTS = 10
"""Replacements one campaign may take at most: more means something is broken, not unlucky."""


def _infra_only() -> list[Literal["infra"]]:
    return ["infra"]


class ReplacementPolicy(Frozen):
    """``replacement:``: which failed units a run replaces, declared before it runs.

    A replacement re-runs a unit; what it replaces is kept, and reports show results with
    and without replacements. The unit follows from what failed: a scenario whose attempt
    is ``infra`` is retried at once, in place (``infra.retries``); a campaign the runner
    stopped or was killed in (``order: {block: campaign}``) is kept as ``incomplete``, never
    finished piecemeal, and re-run whole under a new campaign id (``<id>-R1``) by
    ``pairbench resume``. Each counts against ``max_per_campaign``::

        replacement: {eligible: [infra], max_per_campaign: 2}
    """

    eligible: list[Literal["infra"]] = Field(default_factory=_infra_only, min_length=1)
    """Outcomes whose scenario is replaced: ``infra`` only (unscored). A scored outcome is
    never replaced: re-running it until it suits would choose the results."""
    max_per_campaign: int = Field(default=2, ge=0, le=MAX_REPLACEMENTS)
    """Replacements (infra retries and whole re-runs) one campaign may take; the one past
    it stops the run, named."""
