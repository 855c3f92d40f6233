"""docs/cli.md is generated from --help and must match it (run `make docs` to refresh)."""

from pathlib import Path

from pairbench.cli._docs import cli_reference, command_names

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_every_command_is_documented_and_the_reference_is_current() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in command_names():
        assert f"## `pairbench {name}`" in text, f"{name} missing: run `make docs`"
    assert text == cli_reference(), "docs/cli.md is stale: run `make docs`"


def test_every_command_has_an_example() -> None:
    for name in command_names():
        assert f"## `pairbench {name}`" in cli_reference()
    assert cli_reference().count("Example:") == len(command_names())
