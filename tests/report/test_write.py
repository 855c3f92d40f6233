import gc
import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.export_runs import simulated_run
from helpers.report_builders import make_run, make_scenario
from pairbench.report import ReportPaths
from pairbench.report._write import render_texts, write_texts
from pairbench.report.summary._build import build_summary


def test_a_summary_is_written_as_three_files(tmp_path: Path) -> None:
    results, infra = make_scenario()
    summary = build_summary(make_run(), results, infra)
    paths = write_texts(tmp_path, render_texts(summary))
    assert paths == ReportPaths(
        tmp_path / "summary.json", tmp_path / "report.md", tmp_path / "report.html"
    )
    loaded = json.loads(paths.summary.read_text(encoding="utf-8"))
    assert loaded == summary and loaded["schema_id"] == "pairbench.summary/3"
    assert paths.markdown.read_text(encoding="utf-8").startswith("# pairbench report")
    assert "<!DOCTYPE html>" in paths.html.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "report.html", "report.md", "summary.json",
    ]  # fmt: skip


def test_rewrite_replaces_files(tmp_path: Path) -> None:
    write_texts(tmp_path, render_texts(build_summary(make_run(), [], [])))
    results, infra = make_scenario()
    write_texts(tmp_path, render_texts(build_summary(make_run(), results, infra)))
    assert json.loads((tmp_path / "summary.json").read_text())["trials"] == 35
    assert "No runs recorded." not in (tmp_path / "report.md").read_text()


def test_a_report_without_plots_says_how_to_draw_them() -> None:
    # `pairbench run`'s report: no figure, a meta line naming the command that draws them,
    # recorded in the summary so verify rebuilds it the same way.
    results, infra = make_scenario()
    drawn = render_texts(build_summary(make_run(), results, infra))
    summary = {**json.loads(drawn["summary.json"]), "plots_drawn": False}
    left_out = render_texts(summary)
    assert '<figure class="plot"' in drawn["report.html"] and "*Plot, " in drawn["report.md"]
    assert '<figure class="plot"' not in left_out["report.html"]
    assert "*Plot, " not in left_out["report.md"]
    line = "**Plots:** not drawn in this report"
    assert line in left_out["report.md"] and line not in drawn["report.md"]
    assert "`pairbench report` on this run's folder" in left_out["report.md"]
    assert "Plots" in left_out["report.html"]
    assert "pairbench report` on this run&#39;s folder" in left_out["report.html"]
    assert render_texts(summary) == left_out  # the same bytes again, for verify


def test_public_names_are_deliberate() -> None:
    # One public operation, write_report, and the blocks a study's own sections are made of
    # (Section, Table, Figure, Omitted); the three stages (summary, view, render) are
    # private folders. pairbench.report (the attribute) is the top-level write_report's
    # package, reached through importlib.
    package = importlib.import_module("pairbench.report")
    assert sorted(package.__all__) == [
        "Figure",
        "Omitted",
        "ReportPaths",
        "SCHEMA_ID",
        "Section",
        "Table",
        "write_report",
    ]
    for name in package.__all__:
        if name != "SCHEMA_ID":
            assert getattr(package, name).__doc__
    top = importlib.import_module("pairbench")
    assert top.write_report is package.write_report
    for stage in ("summary", "view", "render"):
        assert importlib.import_module(f"pairbench.report.{stage}").__doc__


@pytest.fixture(scope="module")
def unreported_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated_run(tmp_path_factory.mktemp("run"), report=False)


def test_a_report_is_summarized_and_rendered_with_the_collector_paused(
    unreported_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Everything a report builds lives until it is rendered; a collection would walk a
    # million records' worth of objects and find nothing (see pairbench._collector).
    import pairbench.report._write as write
    import pairbench.report.summary._build as build

    seen: dict[str, bool] = {}

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[name] = gc.isenabled()
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(build, "summarize", spy("summarize", build.summarize))
    monkeypatch.setattr(write, "render_texts", spy("render", write.render_texts))
    assert gc.isenabled()
    write.report_texts(unreported_run, 50)
    assert seen == {"summarize": False, "render": False}
    assert gc.isenabled()


def test_drawing_the_plots_does_not_keep_the_runs_table_alive(unreported_run: Path) -> None:
    # In a fresh process, matplotlib's first figures leave cyclic garbage (pyparsing's
    # caught exceptions) whose frames hold their callers' frames. Built in the frame that
    # draws them, the run's table (a million rows' worth of objects in a large run) stayed
    # alive until the next collection, which then walked it all (0.5 s on a million
    # records). With the collector off in the host, nothing is collected: whatever is still
    # alive after report_texts is held, not waiting.
    code = (
        "import gc, json, sys\n"
        "from pathlib import Path\n"
        "gc.disable()\n"
        "from pairbench.report._write import report_texts\n"
        "from pairbench.store._load_table import RunTable\n"
        "from pairbench.store._run_record import RunRecord\n"
        "texts = report_texts(Path(sys.argv[1]), 50)\n"
        "assert '<svg' in texts['report.html']\n"
        "kinds = (RunTable, RunRecord)\n"
        "print(json.dumps([type(o).__name__ for o in gc.get_objects() if isinstance(o, kinds)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(unreported_run)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
