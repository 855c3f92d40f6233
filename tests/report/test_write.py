import importlib
import json
from pathlib import Path

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
