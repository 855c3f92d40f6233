"""What start-up loads (issue 35): ``import pairbench`` and a plain run stay lean, so a
change that pulls the plotting, statistics or MCP stack, or a study, back onto the start
path fails here, not in a bench run weeks later. Each probe is a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.common import checkout_env

HEAVY = ("numpy", "scipy", "matplotlib", "mcp", "httpx", "jinja2", "pydantic", "openai",
         "playwright", "typer", "rich", "yaml", "ruamel")  # fmt: skip
"""What ``import pairbench`` must not load: everything it exports loads on first use."""
NOT_ON_A_PLAIN_RUN = ("scipy", "matplotlib", "mcp", "httpx", "openai", "playwright")
"""What a run of a plain experiment (no study, no tools, a small report) must not load."""

EXPERIMENT = """\
id: plain
version: '1'
trials: 2
budget: {trial_timeout_s: 30, concurrency: 2}
agent: {adapter: simulated, settings: {success: {a: 0.5, b: 0.7}}}
arms: {a: {}, b: {}}
tasks:
  - {id: t1, prompt: p.md, grader: {name: exact-answer, args: {expect: PASS}}}
"""


def _loaded(code: str, cwd: Path) -> list[str]:
    """The modules a fresh interpreter holds after ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=checkout_env(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return modules


def _tops(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules} & set(names))


def _studies(modules: list[str]) -> list[str]:
    """Study packages loaded (the registry itself, ``pairbench.studies._*``, is not one)."""
    parts = [m.split(".") for m in modules if m.startswith("pairbench.studies.")]
    return sorted({p[2] for p in parts if not p[2].startswith("_")})


def test_import_pairbench_loads_none_of_the_heavy_stack(tmp_path: Path) -> None:
    assert _tops(_loaded("import pairbench", tmp_path), HEAVY) == []


def test_a_plain_run_loads_no_plotting_statistics_mcp_or_study(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(EXPERIMENT, encoding="utf-8")
    run = (
        "import runpy, sys\n"
        "sys.argv = ['pairbench', 'run', 'experiment.yaml', '--runs-dir', 'runs',\n"
        "            '--run-seed', '1']\n"
        "try:\n    runpy.run_module('pairbench', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as stop:\n    assert stop.code in (0, None), stop.code\n"
    )
    modules = _loaded(run, tmp_path)
    assert list((tmp_path / "runs").glob("plain-*/report.md")), "the run wrote no report"
    assert _tops(modules, NOT_ON_A_PLAIN_RUN) == []
    assert _studies(modules) == []
    # `pairbench run` imports the run command's module, not every command's.
    commands = sorted(m for m in modules if m.startswith("pairbench.cli._"))
    assert commands == ["pairbench.cli._app", "pairbench.cli._run", "pairbench.cli._table"]


def test_a_report_loads_no_runner(tmp_path: Path) -> None:
    # `pairbench report` has its own command module: writing a report of a finished run
    # starts nothing, so the runner (attempts, agents, fixtures, Ray) stays unloaded.
    from pairbench import start_run

    (tmp_path / "p.md").write_text("Answer.\n", encoding="utf-8")
    (tmp_path / "experiment.yaml").write_text(EXPERIMENT, encoding="utf-8")
    run_dir = start_run(tmp_path / "experiment.yaml", tmp_path / "runs", run_seed=1).run_dir
    assert not (run_dir / "report.md").exists()  # start_run writes none: the probe will
    report = (
        "import runpy, sys\n"
        f"sys.argv = ['pairbench', 'report', {str(run_dir)!r}, '--bootstrap-reps', '50']\n"
        "try:\n    runpy.run_module('pairbench', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as stop:\n    assert stop.code in (0, None), stop.code\n"
    )
    modules = _loaded(report, tmp_path)
    assert (run_dir / "report.md").is_file(), "the probe wrote no report"
    assert [m for m in modules if m.startswith("pairbench.runner")] == []
    commands = sorted(m for m in modules if m.startswith("pairbench.cli._"))
    assert commands == ["pairbench.cli._app", "pairbench.cli._report"]


def test_the_probe_sees_what_is_loaded(tmp_path: Path) -> None:
    # The check can fail: a start path that pulls matplotlib or a study is named.
    code = "import pairbench, matplotlib\nimport pairbench.studies.mcp_transports"
    modules = _loaded(code, tmp_path)
    assert _tops(modules, HEAVY) and "matplotlib" in _tops(modules, NOT_ON_A_PLAIN_RUN)
    assert _studies(modules) == ["mcp_transports"]


def test_the_tracker_server_loads_no_study_or_experiment_machinery(tmp_path: Path) -> None:
    # One tracker process starts per stdio trial, and its start is in the stdio arm's
    # connect time: beyond the MCP SDK it needs only its store, content and constants, not
    # the study registry, the experiment models or the fixture runner the parent packages
    # once imported on their way (about 0.12 s of CPU per trial).
    loaded = _loaded("import pairbench.studies.mcp_transports.tracker_server", tmp_path)
    assert "mcp" in {m.split(".")[0] for m in loaded}  # the probe did import the server
    heavy = {"pairbench.studies._study", "pairbench.spec._models", "pairbench.store._records",
             "pairbench.fixtures._procs", "pairbench.studies.mcp_transports._graders"}  # fmt: skip
    assert sorted(heavy & set(loaded)) == []
