"""Declaring secrets: ``secrets:`` names, ``${env:NAME}`` values, and their problems."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench._errors import SpecError
from pairbench.spec import Problem, check_experiment, load_experiment
from pairbench.spec._secrets import require_secrets

Write = Callable[..., Path]
Registry = dict[str, set[str]]

SECRETS = """\
id: demo
version: 1.0.0
agent:
  adapter: command
  settings: {command: [my-agent]}
  env:
    LITERAL_TOKEN: literal-token-0123
    REF_TOKEN: ${env:PB_REF_TOKEN}
    MODE: fast
  env_allow: [ALLOWED_KEY]
secrets: [LITERAL_TOKEN, ALLOWED_KEY]
arms:
  baseline: {tools: none}
  local: {tools: none}
tasks:
  - id: read-title
    prompt: prompts/read.md
    grader: {name: tracker-answer}
"""
ENV = {"PB_REF_TOKEN": "ref-token-0123456", "ALLOWED_KEY": "allowed-key-0123"}


def where(problems: list[Problem]) -> list[tuple[int | None, str]]:
    return [(p.line, p.yaml_path) for p in problems]


def test_declared_secrets_load_and_are_named(write: Write, registry: Registry) -> None:
    path = write(SECRETS)
    assert check_experiment(path, registry, environ=ENV) == []
    exp = load_experiment(path, registry).experiment
    assert exp.secrets == ["LITERAL_TOKEN", "ALLOWED_KEY"]
    # A ${env:NAME} value makes its variable secret without being listed.
    assert exp.secret_names() == {"LITERAL_TOKEN", "ALLOWED_KEY", "REF_TOKEN"}
    assert exp.agent.env_refs() == {"REF_TOKEN": "PB_REF_TOKEN"}


def test_a_secret_no_arm_sets_is_an_error_with_its_line(write: Write, registry: Registry) -> None:
    path = write(SECRETS.replace("[LITERAL_TOKEN, ALLOWED_KEY]", "[LITERAL_TOKEN, TYPO_KEY]"))
    problems = check_experiment(path, registry, environ=ENV)
    assert where(problems) == [(11, "secrets[1]")]
    text = str(problems[0])
    assert text.startswith(f"{path}:11: secrets[1]: secret 'TYPO_KEY' is not a variable")
    assert "Fix: set it in an agent's 'env'" in text
    with pytest.raises(SpecError):
        load_experiment(path, registry)  # a structural problem: no run, no freeze


def test_an_arm_own_agent_counts_as_declaring(write: Write, registry: Registry) -> None:
    text = SECRETS.replace(
        "  local: {tools: none}",
        "  local:\n    agent: {adapter: command, settings: {command: [x]}, env_allow: [ARM_KEY]}",
    ).replace("[LITERAL_TOKEN, ALLOWED_KEY]", "[LITERAL_TOKEN, ARM_KEY]")
    assert check_experiment(write(text), registry, environ=ENV) == []


def test_a_bad_name_a_partial_reference_and_a_short_secret(
    write: Write, registry: Registry
) -> None:
    text = (
        SECRETS.replace("literal-token-0123", "short")
        .replace("MODE: fast", "MODE: Bearer ${env:PB_REF_TOKEN}")
        .replace("[LITERAL_TOKEN, ALLOWED_KEY]", "[LITERAL_TOKEN, 9lives]")
    )
    problems = check_experiment(write(text), registry, environ=ENV)
    assert where(problems) == [
        (7, "agent.env.LITERAL_TOKEN"),
        (9, "agent.env.MODE"),
        (11, "secrets[1]"),
        (11, "secrets[1]"),
    ]
    messages = [p.message for p in problems]
    assert "shorter than 8 characters" in messages[0]
    assert "only a whole value can be '${env:NAME}'" in messages[1]
    assert any("not an environment variable name" in m for m in messages[2:])


def test_an_unset_reference_is_a_check_problem_but_not_a_load_one(
    write: Write, registry: Registry
) -> None:
    path = write(SECRETS)
    problems = check_experiment(path, registry, environ={"ALLOWED_KEY": "allowed-key-0123"})
    assert where(problems) == [(8, "agent.env.REF_TOKEN")]
    assert str(problems[0]) == (
        f"{path}:8: agent.env.REF_TOKEN: '${{env:PB_REF_TOKEN}}' reads the runner's "
        "PB_REF_TOKEN, which is not set. Fix: export PB_REF_TOKEN=... before running (its "
        "value is read when the run starts and is never stored), or write the value in "
        "the experiment."
    )
    loaded = load_experiment(path, registry)  # freeze, plan and verify need no secret set
    with pytest.raises(SpecError) as raised:
        require_secrets(loaded.experiment, str(loaded.path), {})
    assert raised.value.problems[0].startswith(f"{loaded.path}:8: agent.env.REF_TOKEN:")
    require_secrets(loaded.experiment, str(loaded.path), ENV)  # set: the run may start


def test_a_short_value_in_the_runner_environment_is_refused(
    write: Write, registry: Registry
) -> None:
    problems = check_experiment(
        write(SECRETS), registry, environ={"PB_REF_TOKEN": "short", "ALLOWED_KEY": "tiny"}
    )
    assert where(problems) == [(8, "agent.env.REF_TOKEN"), (10, "agent.env_allow[0]")]


def test_the_hash_does_not_depend_on_a_referenced_value(
    write: Write, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(SECRETS)
    monkeypatch.setenv("PB_REF_TOKEN", "first-value-0123")
    first = load_experiment(path, registry).canonical_hash
    monkeypatch.setenv("PB_REF_TOKEN", "second-value-0123")
    assert load_experiment(path, registry).canonical_hash == first
    # A literal secret is part of the protocol: changing it changes the hash.
    changed = write(SECRETS.replace("literal-token-0123", "literal-token-4567"), "other.yaml")
    assert load_experiment(changed, registry).canonical_hash != first


def test_no_secrets_leaves_the_canonical_form_as_before(
    write: Write, valid: str, registry: Registry
) -> None:
    loaded = load_experiment(write(valid), registry)
    assert "secrets" not in loaded.experiment.model_dump(mode="json")
