"""The declared primary analysis in the experiment file: the syntax, and every problem with
its line and fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench.spec import canonical_hash, check_experiment, load_experiment

Write = Callable[..., Path]
Registry = dict[str, set[str]]


def _problems(write: Write, text: str, registry: Registry) -> list[str]:
    return [str(p) for p in check_experiment(write(text), registry)]


def test_a_declaration_loads_with_the_interval_that_agrees(
    write: Write, valid: str, registry: Registry
) -> None:
    text = valid + "primary:\n  - {arms: [local, baseline], test: mcnemar-midp, sided: greater}\n"
    exp = load_experiment(write(text), registry)
    (p,) = exp.experiment.primary
    assert (p.arms, p.shown_interval, p.agrees, p.sided, p.alpha) == (
        ("local", "baseline"), "mid-p", True, "greater", 0.05,
    )  # fmt: skip
    # Declaring one changes the hash; declaring none keeps the old one.
    plain = load_experiment(write(valid, "plain.yaml"), registry)
    assert "primary" not in plain.experiment.model_dump(mode="json")
    assert exp.canonical_hash != plain.canonical_hash
    assert canonical_hash(exp.experiment) == exp.canonical_hash


@pytest.mark.parametrize(
    ("primary", "message"),
    [
        ("{arms: [local, baseline], test: sign-flip, interval: newcombe}",
         "primary[0]: interval 'newcombe' does not go with test 'sign-flip'. Fix: interval: "
         "sign-flip or t"),
        ("{arms: [local, remote], test: mcnemar-exact}",
         "primary[0].arms[1]: unknown arm 'remote'. Fix: use one of the arms: baseline, local."),
        ("{arms: [local, local], test: mcnemar-exact}",
         "primary[0].arms: compares arm 'local' with itself"),
        ("{arms: [local, baseline], test: mcnemar-exact}\n  - {arms: [baseline, local], test: "
         "sign-flip}", "primary[1].arms: baseline vs local already has a primary analysis"),
        ("{arms: [local, baseline], test: mcnemar}", "primary[0].test"),
        ("{arms: [local, baseline], test: sign-flip, alpha: 0.7}", "primary[0].alpha"),
        ("{arms: [local, baseline], test: sign-flip, sided: up}", "primary[0].sided"),
    ],
)  # fmt: skip
def test_a_bad_declaration_names_the_field_and_the_fix(
    write: Write, valid: str, registry: Registry, primary: str, message: str
) -> None:
    problems = _problems(write, valid + f"primary:\n  - {primary}\n", registry)
    assert any(message in p for p in problems), problems
