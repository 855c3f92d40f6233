"""Problems of an experiment whose arms run in campaigns (``order: {block: campaign}``).

Found on the raw YAML, so each names its line. A campaign is one arm's complete ordered
run of every task of one trial index; a campaign pair is one trial index across the two
arms. Campaigns share one model slot in the protocol they come from, so they run one
attempt at a time, and the stage (screening: one pair; confirmation: the approved plan's
N) decides how many pairs run, not ``trials``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pairbench.spec._yaml import Found, _get

CONCURRENCY_FIX = "campaigns run one at a time: set budget.concurrency: 1"
DEFAULT_CONCURRENCY = 4
"""``Budget.concurrency``'s default, which a campaign experiment must override."""


def is_campaign(order: Any) -> bool:
    """Whether a raw ``order`` value asks for campaign blocks.

    >>> is_campaign({"block": "campaign"}), is_campaign("alternate")
    (True, False)
    """
    return isinstance(order, dict) and order.get("block") == "campaign"


def campaign_problems(data: dict[str, Any]) -> Iterator[Found]:
    """What a campaign experiment may not declare: concurrency above 1, other than two
    arms, or a trial count (the stage sets the pairs).

    **Usage**::

        for path, message, fix in campaign_problems(raw_yaml):
            ...  # (('budget', 'concurrency'), 'is 4, but campaigns ...', CONCURRENCY_FIX)
    """
    if not is_campaign(data.get("order")):
        return
    concurrency = _get(data, ("budget", "concurrency"))
    if concurrency is None:
        concurrency = DEFAULT_CONCURRENCY
    if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency != 1:
        yield (
            ("budget", "concurrency"),
            f"is {concurrency}, but with order {{block: campaign}} attempts run one at a "
            "time, in the recorded order",
            CONCURRENCY_FIX,
        )
    arms = data.get("arms")
    if isinstance(arms, dict) and len(arms) >= 2 and len(arms) != 2:
        yield (
            ("arms",),
            f"campaigns compare two arms' campaigns, found {len(arms)} arms",
            "declare exactly two arms (e.g. baseline and candidate)",
        )
    trials = data.get("trials")
    if trials is not None and trials != 1:
        yield (
            ("trials",),
            "with order {block: campaign} the stage sets the campaign pairs (screening: 1; "
            "confirmation: the approved plan's N), not 'trials'",
            "remove 'trials' (or set trials: 1)",
        )
    tasks = data.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        if isinstance(task, dict) and task.get("trials") is not None:
            yield (
                ("tasks", i, "trials"),
                "a campaign runs every task once, so a task has no trial count of its own",
                "remove the task's 'trials'",
            )
