"""What a built-in study can do, an outsider's can: a third-party study (its own package,
``tests/studies/third_party/acme_study``, installed through a ``pairbench.studies`` entry
point as pip would: a package and its ``.dist-info`` on the path) adds a report section, a
plot, extra report files, a ``pairbench study`` command, a scorer and its agent's reply for
the test doubles, and runs end to end through ``init --from``, ``check``, ``run``, ``report``
and ``verify``."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from ruamel.yaml import YAML
from typer.testing import CliRunner

from pairbench import _registry
from pairbench.cli import app
from pairbench.testing._fake_cli import NO_TOOLS
from pairbench.testing.chat_double import start_chat_double

SOURCE = Path(__file__).parent / "third_party" / "acme_study"
PROMPT = "Say the ACME-GREETING to the team."
runner = CliRunner()


def _install(site: Path) -> None:
    """The package and its distribution metadata, as ``pip install`` leaves them."""
    shutil.copytree(SOURCE, site / "acme_study", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "acme_study-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-study\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[pairbench.studies]\nacme-study = acme_study:STUDY\n\n"
        "[pairbench.cli_scripts]\nacme-study = acme_study:cli_script\n"
    )


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    _registry.refresh()
    yield importlib.import_module("acme_study")
    sys.modules.pop("acme_study", None)
    monkeypatch.undo()
    _registry.refresh()


def _ok(args: list[str]) -> str:
    done = runner.invoke(app, args)
    assert done.exit_code == 0, (args, done.output)
    return done.output


def _init(tmp_path: Path, url: str) -> Path:
    folder = tmp_path / "exp"
    _ok(["init", str(folder), "--from", "acme-study"])
    path = folder / "experiment.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("http://127.0.0.1:9/v1", f"{url}/v1"), encoding="utf-8")
    return path


def _run(experiment: Path, runs: Path) -> Path:
    _ok(["run", str(experiment), "--runs-dir", str(runs), "--run-seed", "1"])
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").is_file()]
    return run_dir


def test_a_third_party_study_does_what_a_builtin_does(acme: ModuleType, tmp_path: Path) -> None:
    assert "acme-study" in _ok(["studies"])
    with start_chat_double() as double:
        experiment = _init(tmp_path, double.url)
        # init names the study in the copy (the study's own file does not).
        assert YAML(typ="safe").load(experiment.read_text(encoding="utf-8"))["study"] == (
            "acme-study"
        )
        _ok(["check", str(experiment)])
        run_dir = _run(experiment, tmp_path / "runs")
        # The double answered from the study's brain: the greeting the grader looks for.
        assert any(e.body.get("messages") for e in double.exchanges)
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert [a["success"]["k"] for a in summary["arms"]] == [2, 2]
    slot = summary["study"]
    assert (slot["name"], slot["version"], slot["schema"], slot["missing"]) == (
        "acme-study",
        "0.1.0",
        "acme.lengths/1",
        None,
    )
    assert slot["data"]["lengths"] == {"plain": [15, 15], "polite": [15, 15]}
    # `pairbench run` leaves the plots out, saying how to draw them (and verifies so);
    # `pairbench report` draws them, the study's among them.
    ran = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "**Plots:** not drawn" in ran and "*Plot, " not in ran
    assert "Acme: characters per arm" not in (run_dir / "report.html").read_text("utf-8")
    _ok(["verify", str(run_dir)])
    _ok(["report", str(run_dir), "--bootstrap-reps", "200"])
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Acme answer lengths" in page and "Acme: characters per arm" in page
    assert page.index("Acme answer lengths") < page.index("Outcomes by arm")  # declared order
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Acme answer lengths" in markdown
    assert "*Plot, Acme: characters per arm (in report.html):*" in markdown
    assert json.loads((run_dir / "acme.json").read_text()) == slot["data"]["lengths"]
    _ok(["verify", str(run_dir)])
    # A number edited in the study's own file does not verify.
    (run_dir / "acme.json").write_text('{"plain": [99]}\n')
    done = runner.invoke(app, ["verify", str(run_dir)])
    assert done.exit_code == 1 and "acme.json" in done.output
    assert "acme: hello team" in _ok(["study", "acme-study", "hello", "--name", "team"])
    assert "pairbench study acme-study hello" in _ok(["study", "acme-study", "hello", "--help"])
    answer = tmp_path / "answer.txt"
    answer.write_text("well: acme says hello")
    assert "1/1: the greeting" in _ok(["score", "--study", "acme-study", str(answer)])


@pytest.mark.parametrize(
    ("cli", "args"),
    [
        ("fake_claude", ["-p", PROMPT, "--output-format", "stream-json", "--verbose"]),
        ("fake_codex", ["exec", "--json", "--", PROMPT]),
    ],
)
def test_the_fake_clis_follow_a_third_party_script(
    acme: ModuleType, tmp_path: Path, cli: str, args: list[str]
) -> None:
    # The fake CLIs run as their own processes, like the real ones: they find the script
    # through the entry point of the package on their path, as they find the built-ins'.
    site = str(Path(str(acme.__file__)).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, *sys.path])}
    argv = [sys.executable, "-m", f"pairbench.testing.{cli}", *args]
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    if cli == "fake_claude":
        assert events[-1]["result"] == acme.REPLY
    else:
        said = [
            e["item"]["text"] for e in events if e.get("item", {}).get("type") == "agent_message"
        ]
        assert said == [acme.REPLY]
    # The same CLIs without the package answer as to any prompt they have no script for.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p != site)
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
        stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert acme.REPLY not in done.stdout and NO_TOOLS in done.stdout


def test_a_section_name_the_study_does_not_add_fails_check(
    acme: ModuleType, tmp_path: Path
) -> None:
    experiment = _init(tmp_path, "http://127.0.0.1:9")
    text = experiment.read_text(encoding="utf-8")
    experiment.write_text(text.replace("[acme-lengths,", "[acme-length,"), encoding="utf-8")
    done = runner.invoke(app, ["check", str(experiment)])
    assert done.exit_code != 0
    assert "unknown report section 'acme-length'" in done.output
    assert "did you mean 'acme-lengths'" in done.output


def test_a_plot_whose_svg_could_run_is_kept_off_the_page(
    acme: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pairbench import StudyPlot
    from pairbench.report import Figure, Table

    def hostile(_: object) -> Figure:
        svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'
        return Figure("acme-bars", "hostile", svg, "hostile", Table([], []))

    report = dataclasses.replace(
        acme.STUDY.report, plots=(StudyPlot("acme-bars", "acme-lengths", hostile),)
    )
    monkeypatch.setattr(acme, "STUDY", dataclasses.replace(acme.STUDY, report=report))
    with start_chat_double() as double:
        run_dir = _run(_init(tmp_path, double.url), tmp_path / "runs")
    _ok(["report", str(run_dir), "--bootstrap-reps", "200"])  # `run` draws no plot
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "alert(1)" not in page
    assert "Plot &#39;acme-bars&#39; not drawn: its SVG holds markup" in page or (
        "Plot 'acme-bars' not drawn: its SVG holds markup" in page
    )


def test_a_run_whose_study_is_gone_says_what_is_missing(
    acme: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with start_chat_double() as double:
        run_dir = _run(_init(tmp_path, double.url), tmp_path / "runs")
    # The package is uninstalled: the report is rebuilt without it.
    sys.modules.pop("acme_study", None)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not p.endswith("site")])
    importlib.invalidate_caches()
    _registry.refresh()
    _ok(["report", str(run_dir)])
    markdown = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Study acme-study: not shown" in markdown
    assert "not installed here" in markdown and "(acme-lengths) are missing" in markdown
    assert json.loads((run_dir / "summary.json").read_text())["study"]["data"] is None
