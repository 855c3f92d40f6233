"""The command-line interface: thin typer commands over the public API.

``pairbench <command>`` imports only the module that defines ``<command>``: importing every
command module costs about as much as the rest of a run's start-up (the plan, check and study
commands pull in the screening, the spec checks and the study registry), and a run needs none
of them. ``app`` (tests, docs, ``--help`` and an unknown command) has every command.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pairbench.cli._app import app

COMMAND_MODULES: dict[str, str] = {
    "approve": "_approve",
    "check": "_check",
    "export": "_export",
    "freeze": "_freeze",
    "verify": "_freeze",
    "compare": "_freeze",
    "import": "_import",
    "freeze-analysis": "_import",
    "model": "_model",
    "plan": "_plan",
    "run": "_run",
    "resume": "_run",
    "report": "_report",
    "source": "_source",
    "studies": "_studies",
    "init": "_studies",
    "demo": "_studies",
    "score": "_study_cmds",
    "study": "_study_cmds",
    "view": "_view",
}
"""Each command (or command group) and the module that registers it on ``app``, in the
order ``--help`` lists them (the modules' import order); a test checks this against the
commands the modules register."""

_MODULES = tuple(dict.fromkeys(COMMAND_MODULES.values()))


def _register(modules: tuple[str, ...]) -> Any:
    for module in modules:
        importlib.import_module(f"pairbench.cli.{module}")
    return importlib.import_module("pairbench.cli._app").app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _register(_MODULES)
    raise AttributeError(f"module 'pairbench.cli' has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``pairbench`` console script."""
    module = COMMAND_MODULES.get(sys.argv[1]) if len(sys.argv) > 1 else None
    # A bare `pairbench`, `--help`, `--version` or an unknown command gets every command
    # (the list, or typer's "No such command" with its suggestions).
    _register((module,) if module else _MODULES)()


__all__ = ["COMMAND_MODULES", "app", "main"]
