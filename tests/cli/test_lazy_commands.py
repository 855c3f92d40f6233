"""``pairbench <command>`` imports only its command's module (``COMMAND_MODULES``): every
command must be reachable that way, and the table must name every command there is."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.main import get_command

from helpers.common import checkout_env
from pairbench.cli import COMMAND_MODULES, app

# One interpreter imports pairbench.cli's package only, then forks a child per command that
# runs `pairbench <command> --help` through main(), as the console script does.
PROBE = r"""
import json, os, sys
import pairbench.cli
codes = {}
for name in json.loads(sys.argv[1]):
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        sys.argv = ["pairbench", name, "--help"]
        try:
            pairbench.cli.main()
        except SystemExit as stop:
            os._exit(stop.code if isinstance(stop.code, int) else 0)
        os._exit(0)
    codes[name] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(codes))
"""


def _help_codes(names: list[str]) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(names)],
        env=checkout_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    codes: dict[str, int] = json.loads(done.stdout)
    return codes


def test_the_table_names_every_command() -> None:
    registered = get_command(app).commands  # type: ignore[attr-defined]
    assert sorted(COMMAND_MODULES) == sorted(registered)


def test_every_command_answers_help_with_only_its_own_module_imported() -> None:
    codes = _help_codes(sorted(COMMAND_MODULES))
    assert codes == dict.fromkeys(sorted(COMMAND_MODULES), 0)


def test_a_command_mapped_to_the_wrong_module_is_caught() -> None:
    # The check can fail: with `run` pointing at the check command's module, typer has no
    # `run` command and exits 2.
    probe = PROBE.replace(
        "import pairbench.cli\n",
        "import pairbench.cli\npairbench.cli.COMMAND_MODULES['run'] = '_check'\n",
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(["run"])],
        env=checkout_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert json.loads(done.stdout) == {"run": 2}
