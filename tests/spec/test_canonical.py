"""The canonical JSON and hash that identify an experiment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench._errors import SpecError
from pairbench.spec import canonical_hash, canonical_json, load_experiment

Write = Callable[..., Path]
Registry = dict[str, set[str]]


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": [1.0, "é", None]}) == '{"a":[1.0,"é",null],"b":1}'.encode()
    assert canonical_json({"x": 0.1}) == b'{"x":0.1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_hash_is_stable_across_loads(write: Write, valid: str, registry: Registry) -> None:
    path = write(valid)
    first = load_experiment(path, registry)
    second = load_experiment(path, registry)
    assert first.canonical_hash == second.canonical_hash
    assert first.canonical_hash == canonical_hash(first.experiment)


def test_hash_changes_with_one_value(write: Write, valid: str, registry: Registry) -> None:
    before = load_experiment(write(valid), registry).canonical_hash
    after = load_experiment(write(valid.replace("trials: 2", "trials: 3")), registry)
    assert after.canonical_hash != before


def test_key_order_and_spelt_out_defaults_do_not_change_the_hash(
    write: Write, valid: str, registry: Registry
) -> None:
    before = load_experiment(write(valid), registry).canonical_hash
    reordered = valid.replace("id: demo\nversion: 1.0.0\n", "version: 1.0.0\nid: demo\n").replace(
        "{trial_timeout_s: 60, concurrency: 2}", "{concurrency: 2, trial_timeout_s: 60.0}"
    )
    assert load_experiment(write(reordered), registry).canonical_hash == before
    explicit = valid.replace("trials: 2\n", "trials: 2\norder: alternate\n")
    assert load_experiment(write(explicit), registry).canonical_hash == before


def test_hash_does_not_depend_on_the_folder(
    write: Write, valid: str, registry: Registry, tmp_path: Path
) -> None:
    here = load_experiment(write(valid), registry).canonical_hash
    other = tmp_path / "elsewhere"
    other.mkdir()
    for rel in ("protocol.md", "prompts/read.md", "plans/read.yaml"):
        (other / rel).parent.mkdir(parents=True, exist_ok=True)
        (other / rel).write_text("y\n", encoding="utf-8")
    (other / "experiment.yaml").write_text(valid, encoding="utf-8")
    assert load_experiment(other / "experiment.yaml", registry).canonical_hash == here


def test_non_finite_number_is_a_spec_problem(write: Write, valid: str, registry: Registry) -> None:
    with pytest.raises(SpecError, match="finite"):
        load_experiment(
            write(valid.replace("trial_timeout_s: 60", "trial_timeout_s: .inf")), registry
        )
