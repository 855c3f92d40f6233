"""``pairbench import lm-eval``: logs made in this session by the real lm-evaluation-harness
0.4.13 (``local-chat-completions`` against two chat doubles, a toy two-task generate-until
suite in ``data/lm_eval``; see ``helpers.harness_logs``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.harness_logs import LmEvalLogs, iter_samples
from pairbench._errors import ImportRefused
from pairbench.cli import app
from pairbench.importers import LmEvalImporter, LmEvalSettings, SampleRecord
from pairbench.importers._api import import_logs

pytestmark = pytest.mark.harness


def _records(results: Path, **options: str) -> list[SampleRecord]:
    importer = LmEvalImporter()
    settings: LmEvalSettings = importer.settings(dict(options))
    return list(importer.samples(results, importer.scan(results, settings), settings))


def _copy(results: Path, dest: Path) -> Path:
    """A log's folder copied out, so a test may damage it; returns its results JSON."""
    shutil.copytree(results.parent, dest)
    return dest / results.name


def test_per_arm_accuracy_equals_lm_evals_own_results(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    run = import_logs("lm-eval", [lm_eval_logs.a, lm_eval_logs.b], tmp_path / "runs")
    reported = CliRunner().invoke(app, ["report", str(run)])
    assert reported.exit_code == 0, reported.output
    summary = json.loads((run / "summary.json").read_text())
    success = {a["arm"]: a["success"] for a in summary["arms"]}
    for arm, log in (("model-a", lm_eval_logs.a), ("model-b", lm_eval_logs.b)):
        own = json.loads(log.read_text())
        records = _records(log)
        passed = 0
        for task in ("arith_add", "arith_mul"):
            mine = [r for r in records if r.task == task]
            assert len(mine) == own["n-samples"][task]["effective"]
            rate = sum(r.scores["exact_match"] for r in mine) / len(mine)
            assert rate == pytest.approx(own["results"][task]["exact_match,none"])
            passed += sum(r.outcome == "passed" for r in mine)
        # The run's per-arm rate is over every document of both tasks.
        assert (success[arm]["k"], success[arm]["n"]) == (passed, 30)
    assert (success["model-a"]["k"], success["model-b"]["k"]) == (20, 23)


def test_each_document_keeps_its_hashes_metrics_and_answer(lm_eval_logs: LmEvalLogs) -> None:
    records = {(r.task, r.sample_id): r for r in _records(lm_eval_logs.a)}
    for line in iter_samples(lm_eval_logs.a):
        assert isinstance(line["doc"], dict)
        task = "arith_add" if str(line["doc"]["id"]).startswith("add") else "arith_mul"
        record = records[(task, str(line["doc_id"]))]
        assert record.input_hash == line["doc_hash"]
        assert record.target_hash == line["target_hash"]
        assert record.scores == {"exact_match": line["exact_match"]}
        assert record.extra["answer"] == line["filtered_resps"][0]  # type: ignore[index]
    facts = LmEvalImporter().scan(lm_eval_logs.a, LmEvalSettings())
    assert facts.model == "local-chat-completions/model-a"
    assert facts.harness_version == "0.4.13"
    assert facts.task == "arith_add,arith_mul"
    assert facts.headline == {"arith_add:exact_match": 0.7, "arith_mul:exact_match": 0.6}
    assert facts.generation["arith_add.generation_kwargs"] == {
        "until": ["\n"],
        "do_sample": False,
        "temperature": 0.0,
        "max_gen_toks": 16,
    }


def test_a_log_of_another_task_is_refused_naming_both(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    with pytest.raises(ImportRefused) as caught:
        import_logs("lm-eval", [lm_eval_logs.a, lm_eval_logs.other_task], runs)
    message = str(caught.value)
    assert "task differs" in message
    assert f"{lm_eval_logs.a}: 'arith_add,arith_mul'" in message
    assert f"{lm_eval_logs.other_task}: 'arith_mul'" in message
    assert not runs.exists()  # nothing written on a refusal
    # The fix the docs give: import the task both logs hold.
    run = import_logs(
        "lm-eval", [lm_eval_logs.a, lm_eval_logs.other_task], runs, options={"tasks": "arith_mul"}
    )
    record = json.loads((run / "run.json").read_text())["imported"]
    assert record["pairing"]["paired"] == 10


def test_a_changed_document_is_refused_by_its_doc_hash(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    files = [lm_eval_logs.a, lm_eval_logs.edited]
    options = {"tasks": "arith_add"}
    with pytest.raises(ImportRefused, match=r"1 samples have a different input .*first: 4@1"):
        import_logs("lm-eval", files, tmp_path / "runs", options=options)
    run = import_logs(
        "lm-eval", files, tmp_path / "runs", options=options, allow_different_inputs=True
    )
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    report = (run / "report.md").read_text()
    assert "THE ARMS DID NOT SEE THE SAME INPUTS" in report


def test_a_task_scored_under_several_filters_needs_one_named(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    files = [lm_eval_logs.filtered_a, lm_eval_logs.filtered_b]
    with pytest.raises(
        ImportRefused,
        match=r"arith_sub records exact_match under several filters \(number, whole\)",
    ):
        import_logs("lm-eval", files, tmp_path / "runs")
    for filt in ("number", "whole"):
        for log in files:
            own = json.loads(log.read_text())["results"]["arith_sub"][f"exact_match,{filt}"]
            records = _records(log, filter=filt)
            assert len(records) == 10
            assert sum(r.scores["exact_match"] for r in records) / 10 == pytest.approx(own)
    # The doubles answer "It is N": only the number filter passes anything.
    assert sum(r.outcome == "passed" for r in _records(files[0], filter="whole")) == 0
    assert sum(r.outcome == "passed" for r in _records(files[0], filter="number")) == 7
    # A task with one filter keeps it beside a task with several.
    both = _records(lm_eval_logs.a, filter="number")
    assert len(both) == 30


def test_verify_names_a_samples_file_edited_after_import(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    log = _copy(lm_eval_logs.b, tmp_path / "b")
    run = import_logs("lm-eval", [lm_eval_logs.a, log], tmp_path / "runs")
    runner = CliRunner()
    assert runner.invoke(app, ["report", str(run)]).exit_code == 0
    clean = runner.invoke(app, ["verify", str(run)])
    assert clean.exit_code == 0, clean.output
    # The operator turns one failed document into a pass in the samples file.
    samples = next(log.parent.glob("samples_arith_mul_*.jsonl"))
    samples.write_text(samples.read_text().replace('"exact_match": 0.0', '"exact_match": 1.0', 1))
    edited = runner.invoke(app, ["verify", str(run)])
    assert edited.exit_code != 0
    assert "imported-log" in edited.output
    assert samples.name in edited.output.replace("\n", "")


def test_two_runs_of_one_model_are_an_a_a_check(lm_eval_logs: LmEvalLogs, tmp_path: Path) -> None:
    run = import_logs("lm-eval", [lm_eval_logs.a, lm_eval_logs.a_again], tmp_path / "runs")
    imported = json.loads((run / "run.json").read_text())["imported"]
    assert imported["pairing"]["a_a"] is True
    assert any("A/A check" in line for line in imported["vouch"])


def test_truncated_samples_files_are_refused_naming_the_file(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    cut = _copy(lm_eval_logs.b, tmp_path / "cut")
    samples = next(cut.parent.glob("samples_arith_add_*.jsonl"))
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:-1]) + lines[-1][:40])  # cut mid-line
    with pytest.raises(ImportRefused, match=rf"{samples}: line 20 is not JSON.*truncated"):
        import_logs("lm-eval", [lm_eval_logs.a, cut], tmp_path / "runs")
    samples.write_text("".join(lines[:-1]))  # cut at a line's end: the count tells
    with pytest.raises(ImportRefused, match=rf"{samples}: 19 documents.*says 20 were evaluated"):
        import_logs("lm-eval", [lm_eval_logs.a, cut], tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_bad_files_and_options_are_refused_with_the_fix(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    samples = next(lm_eval_logs.a.parent.glob("samples_arith_add_*.jsonl"))
    with pytest.raises(ImportRefused, match="this is a samples file: pass the results_"):
        import_logs("lm-eval", [samples, lm_eval_logs.b], tmp_path / "runs")
    lonely = _copy(lm_eval_logs.b, tmp_path / "lonely")
    next(lonely.parent.glob("samples_arith_mul_*.jsonl")).unlink()
    with pytest.raises(ImportRefused, match=r"no samples_arith_mul_<time>.jsonl.*--log_samples"):
        import_logs("lm-eval", [lm_eval_logs.a, lonely], tmp_path / "runs")
    truncated = _copy(lm_eval_logs.b, tmp_path / "truncated")
    truncated.write_text(truncated.read_text()[:300])
    with pytest.raises(ImportRefused, match=rf"{truncated}: not a readable lm-eval results"):
        import_logs("lm-eval", [lm_eval_logs.a, truncated], tmp_path / "runs")
    with pytest.raises(ImportRefused, match="task arith_add records no metric 'acc'"):
        import_logs(
            "lm-eval",
            [lm_eval_logs.a, lm_eval_logs.b],
            tmp_path / "runs",
            options={"metric": "acc"},
        )
    with pytest.raises(ImportRefused, match="has no task arith_sub"):
        import_logs(
            "lm-eval",
            [lm_eval_logs.a, lm_eval_logs.b],
            tmp_path / "runs",
            options={"tasks": "arith_sub"},
        )
    with pytest.raises(ImportRefused, match=r"no field 'topic'.*answer, id, question"):
        import_logs(
            "lm-eval",
            [lm_eval_logs.a, lm_eval_logs.b],
            tmp_path / "runs",
            options={"cluster": "topic"},
        )
    assert not (tmp_path / "runs").exists()


def test_cli_import_then_report_gives_the_paired_report(
    lm_eval_logs: LmEvalLogs, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["import", "lm-eval", str(lm_eval_logs.a), str(lm_eval_logs.b), "--runs-dir", str(runs)],
    )
    assert result.exit_code == 0, result.output
    run = Path(result.stdout.strip().splitlines()[-1])
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    report = (run / "report.md").read_text()
    assert "lm-evaluation-harness 0.4.13" in report
    assert "| model-a vs model-b | 30 | 15 | 5 | 8 | 2 |" in report
    assert "Exact McNemar" in report
    bad = runner.invoke(
        app,
        [
            "import",
            "lm-eval",
            str(lm_eval_logs.a),
            str(lm_eval_logs.other_task),
            "--runs-dir",
            str(runs),
        ],
    )
    assert bad.exit_code != 0
    assert "task differs" in bad.output
    assert "Traceback" not in bad.output
