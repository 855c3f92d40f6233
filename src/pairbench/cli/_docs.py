"""The CLI reference (``docs/cli.md``), generated from ``--help`` so it cannot drift.

``make docs`` rewrites it; a test fails when it is stale or a command is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

from typer.main import get_command
from typer.testing import CliRunner

from pairbench.cli import app

HEADER = """# pairbench command reference

Generated from `pairbench COMMAND --help` by `make docs`; do not edit by hand.
"""


def command_names() -> list[str]:
    """Every command the ``pairbench`` CLI offers, in registration order."""
    group = get_command(app)
    return list(getattr(group, "commands", {}))


def cli_reference() -> str:
    """The reference text: one section per command with its full help."""
    runner = CliRunner()
    env = {"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    parts = [HEADER]
    for name in command_names():
        result = runner.invoke(app, [name, "--help"], env=env, prog_name="pairbench")
        text = "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())
        parts.append(f"\n## `pairbench {name}`\n\n```text\n{text}\n```\n")
    return "".join(parts)


def main() -> None:
    target = Path(os.environ.get("PAIRBENCH_DOCS", "docs/cli.md"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(cli_reference(), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
