"""budget.limits and an arm's limits: sizes with units, bounds, and a clear error."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pairbench.spec._limits import LimitOverrides, Limits, format_size, parse_size


def test_sizes_take_units_and_plain_bytes() -> None:
    assert parse_size("16 MiB") == 16 << 20
    assert parse_size("2GB") == 2_000_000_000
    assert Limits(file_size="512 MiB").file_size == 512 << 20
    assert format_size(512 << 20) == "512 MiB"


def test_an_arm_overrides_only_what_it_names() -> None:
    merged = Limits().merged(LimitOverrides(memory="64 MiB"))
    assert merged.memory == 64 << 20
    assert merged.output_per_stream == Limits().output_per_stream


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("output_per_stream", "16 parsecs", "is not a size"),
        ("memory", 1024, "greater than or equal"),
        ("processes", 0, "greater than or equal"),
    ],
)
def test_a_bad_limit_names_its_field(field: str, value: object, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Limits.model_validate({field: value})
    assert field in str(caught.value) and words in str(caught.value)


def test_workspace_kept_takes_a_unit_and_stays_out_of_the_hash_at_its_default() -> None:
    from pairbench.spec._policies import WORKSPACE_KEPT, Budget

    assert Budget.model_validate({"workspace_kept": "64 MiB"}).workspace_kept == 64 << 20
    assert Budget.model_validate({"workspace_kept": 1024}).workspace_kept == 1024
    assert "workspace_kept" not in Budget(workspace_kept=WORKSPACE_KEPT).model_dump()
    with pytest.raises(ValidationError) as caught:
        Budget.model_validate({"workspace_kept": "lots"})
    assert "workspace_kept" in str(caught.value) and "is not a size" in str(caught.value)
