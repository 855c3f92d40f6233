"""``order: {block: campaign}`` in the experiment file, and the hash of the other orders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench.spec import CampaignOrder, check_experiment, load_experiment

Write = Callable[..., Path]
Registry = dict[str, set[str]]

CAMPAIGN = "order: {block: campaign}\n"


def _campaign(valid: str) -> str:
    """The valid experiment as a campaign experiment: no trial count, concurrency 1."""
    return valid.replace("trials: 2\n", CAMPAIGN).replace("concurrency: 2", "concurrency: 1")


def test_alternate_and_randomized_keep_the_hash_they_had_before_campaigns(
    write: Write, valid: str, registry: Registry
) -> None:
    # Computed on main before `order` accepted a mapping (commit d00ed52): the canonical
    # form of every existing experiment, and so its lock, must not change.
    alternate = load_experiment(write(valid), registry).canonical_hash
    randomized = load_experiment(
        write(valid.replace("trials: 2\n", "trials: 2\norder: randomized\n")), registry
    ).canonical_hash
    assert alternate == "881dfe41ceae28b1b8ba058f780ad4149c7c50818c1b983a4a80f6bf84a288ae"
    assert randomized == "b589e7acb910a362d751dea058ad04fc07d912a815a6c858210313a80c574409"


def test_a_campaign_experiment_loads_with_its_order_policy(
    write: Write, valid: str, registry: Registry
) -> None:
    loaded = load_experiment(write(_campaign(valid)), registry)
    exp = loaded.experiment
    assert exp.order == CampaignOrder(block="campaign")
    assert exp.campaigns and exp.order_policy == "campaign"
    assert loaded.canonical_hash != load_experiment(write(valid), registry).canonical_hash


def test_concurrency_above_one_is_a_problem_on_its_line_with_the_fix(
    write: Write, valid: str, registry: Registry
) -> None:
    text = _campaign(valid).replace("concurrency: 1", "concurrency: 2")
    [problem] = check_experiment(write(text), registry)
    assert (problem.line, problem.yaml_path) == (5, "budget.concurrency")
    assert problem.fix == "campaigns run one at a time: set budget.concurrency: 1"
    # Left at its default (4), it is a problem too: the fix is the same line to write.
    default = _campaign(valid).replace(", concurrency: 1", "")
    [problem] = check_experiment(write(default), registry)
    assert problem.yaml_path == "budget.concurrency" and "is 4" in problem.message


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        (CAMPAIGN, CAMPAIGN + "trials: 3\n", "trials"),
        (
            "    plan: plans/read.yaml\n",
            "    plan: plans/read.yaml\n    trials: 2\n",
            "tasks[0].trials",
        ),
        ("  baseline: {tools: none}\n", "  baseline: {tools: none}\n  third: {}\n", "arms"),
    ],
)
def test_what_a_campaign_experiment_may_not_declare(
    write: Write, valid: str, registry: Registry, old: str, new: str, path: str
) -> None:
    problems = check_experiment(write(_campaign(valid).replace(old, new, 1)), registry)
    assert [p.yaml_path for p in problems] == [path]


def test_an_unknown_block_or_order_names_what_is_allowed(
    write: Write, valid: str, registry: Registry
) -> None:
    [block] = check_experiment(write(_campaign(valid).replace("campaign}", "pairs}")), registry)
    assert (block.yaml_path, block.message) == ("order.block", "must be 'campaign' (got 'pairs')")
    [word] = check_experiment(write(valid.replace("trials: 2\n", "order: sequential\n")), registry)
    assert word.yaml_path == "order" and "'alternate' or 'randomized' or a mapping" in word.message
