"""Server commands that could not start here, or would fetch code when a run starts.

A run must start the same server every trial: nothing may be downloaded while it runs
(``npx`` installs a missing package from the registry, and the version it gets is whatever
is newest that day). So ``check`` refuses a bare ``npx`` and names a command that is not
installed, with how to install it, before any run is made.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pairbench.spec._yaml import Found, Part

_PYTHONS = {"python", "python3"}
_NO_INSTALL = {"--no-install", "--no"}


def _server_commands(data: dict[str, Any]) -> Iterator[tuple[tuple[Part, ...], list[Any]]]:
    raw = data.get("arms")
    arms: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for arm_name, arm in arms.items():
        tools = arm.get("tools") if isinstance(arm, dict) else None
        mcp = tools.get("mcp") if isinstance(tools, dict) else None
        for name, server in mcp.items() if isinstance(mcp, dict) else []:
            for key in ("command", "serve"):
                argv = server.get(key) if isinstance(server, dict) else None
                if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
                    yield ("arms", arm_name, "tools", "mcp", name, key), argv


def _install_hint(program: str) -> str:
    if program.startswith(("mcp-server-", "playwright-mcp")) or program.endswith("-mcp"):
        return (
            f"install the package that provides '{program}' (e.g. npm install --save-exact "
            "<package>@<version> in a project folder, then put its node_modules/.bin on PATH), "
            "or give its full path"
        )
    return f"install '{program}' or give its full path (the run's PATH is the runner's)"


def command_problems(
    data: dict[str, Any], root: Path, environ: Mapping[str, str] | None
) -> Iterator[Found]:
    """A server command that is not installed, or that may fetch code at run time.

    ``environ`` is the runner's environment (its ``PATH`` is what servers get); None skips
    the installed-or-not check (``load`` and ``freeze`` run anywhere).
    """
    for where, argv in _server_commands(data):
        program = argv[0]
        if Path(program).name == "npx" and not _NO_INSTALL.intersection(argv[1:]):
            yield (
                (*where, 0),
                "runs 'npx' without --no-install: a package that is missing would be "
                "downloaded when the run starts, in whatever version is newest then",
                f"install the server first and use npx --no-install {' '.join(argv[1:2])} ..., "
                "or name its installed binary",
            )
        if environ is None or program in _PYTHONS or "{port}" in program:
            continue
        if "/" in program:
            found = Path(program) if os.path.isabs(program) else root / program
            if not found.exists():
                yield (*where, 0), f"'{program}' does not exist", _install_hint(Path(program).name)
        elif shutil.which(program, path=environ.get("PATH", os.defpath)) is None:
            yield (*where, 0), f"'{program}' is not on the runner's PATH", _install_hint(program)
