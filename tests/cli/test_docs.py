"""docs/cli.md is generated from --help and must match it (run `make docs` to refresh)."""

from pathlib import Path

import pytest

from pairbench.cli._docs import cli_reference, command_names

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


@pytest.fixture(scope="module")
def reference() -> str:
    """The reference ``--help`` renders (every command's help: a fraction of a second per
    call), rendered once for the module; each test reads it and changes nothing."""
    return cli_reference()


def test_every_command_is_documented_and_the_reference_is_current(reference: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in command_names():
        assert f"## `pairbench {name}`" in text, f"{name} missing: run `make docs`"
    assert text == reference, "docs/cli.md is stale: run `make docs`"


def test_every_command_has_an_example(reference: str) -> None:
    for name in command_names():
        assert f"## `pairbench {name}`" in reference
    assert reference.count("Example:") == len(command_names())
