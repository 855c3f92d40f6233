"""``pairbench import promptfoo``: results files made in this session by the real promptfoo
0.121.20 with its ``echo`` provider over 20 test cases (``data/promptfoo``; see
``helpers.harness_logs``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.harness_logs import PromptfooLogs
from pairbench._errors import ImportRefused
from pairbench.cli import app
from pairbench.importers import PromptfooImporter, PromptfooSettings, SampleRecord
from pairbench.importers._api import import_logs

pytestmark = pytest.mark.harness


def _records(path: Path, **options: str) -> list[SampleRecord]:
    importer = PromptfooImporter()
    settings: PromptfooSettings = importer.settings(dict(options))
    return list(importer.samples(path, importer.scan(path, settings), settings))


def _success(run: Path) -> dict[str, Any]:
    reported = CliRunner().invoke(app, ["report", str(run)])
    assert reported.exit_code == 0, reported.output
    summary = json.loads((run / "summary.json").read_text())
    return {a["arm"]: a["success"] for a in summary["arms"]}


@pytest.mark.parametrize(
    ("log", "arms"),
    [("prompts", ("guess", "alt")), ("providers", ("echo-whole", "echo-two-chars"))],
)
def test_per_arm_pass_rate_equals_promptfoos_own_stats(
    promptfoo_logs: PromptfooLogs, tmp_path: Path, log: str, arms: tuple[str, str]
) -> None:
    path: Path = getattr(promptfoo_logs, log)
    run = import_logs("promptfoo", [path], tmp_path / "runs")
    success = _success(run)
    own = json.loads(path.read_text())["results"]
    assert tuple(success) == arms
    for arm, prompt in zip(arms, own["prompts"], strict=True):
        m = prompt["metrics"]
        assert (success[arm]["k"], success[arm]["n"]) == (
            m["testPassCount"],
            m["testPassCount"] + m["testFailCount"],
        )
    assert sum(s["k"] for s in success.values()) == own["stats"]["successes"]
    # The headline the importer reads from the file (what the report can quote) agrees.
    facts = PromptfooImporter().scan(path, PromptfooSettings())
    assert facts.headline == {f"{a}:pass_rate": success[a]["k"] / success[a]["n"] for a in arms}
    imported = json.loads((run / "run.json").read_text())["imported"]
    assert imported["pairing"]["paired"] == 20
    # Two providers or two prompts of one file are a comparison, not an A/A check.
    assert imported["pairing"]["a_a"] is False


def test_test_cases_pair_on_their_vars_and_keep_measured_figures(
    promptfoo_logs: PromptfooLogs,
) -> None:
    records = _records(promptfoo_logs.prompts)
    rows = json.loads(promptfoo_logs.prompts.read_text())["results"]["results"]
    by_arm: dict[str, set[str]] = {}
    for record, row in zip(records, rows, strict=True):
        by_arm.setdefault(record.arm, set()).add(record.sample_id)
        assert record.outcome == ("passed" if row["success"] else "failed")
        assert record.scores == {"pass": float(row["success"]), "score": row["score"]}
        assert record.seconds == pytest.approx(row["latencyMs"] / 1000)
        assert record.total_tokens == row["response"]["tokenUsage"]["total"]
        assert record.labels == {"description": row["testCase"]["description"]}
    assert by_arm["guess"] == by_arm["alt"]
    assert len(by_arm["guess"]) == 20
    facts = PromptfooImporter().scan(promptfoo_logs.prompts, PromptfooSettings())
    assert facts.harness_version == "0.121.20"
    assert facts.measured == ("tokens", "time", "cost")
    assert facts.created_at is not None
    # --option id=VAR: a var names the test case.
    named = _records(promptfoo_logs.prompts, id="question")
    assert {r.sample_id for r in named} == {f"What is {i} + {i + 3}?" for i in range(1, 21)}
    both = PromptfooImporter().scan(promptfoo_logs.providers, PromptfooSettings(arm="both"))
    assert both.arms == ("echo-whole / alt", "echo-two-chars / alt")


def test_repeats_are_epochs_with_a_clustered_interval(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    records = _records(promptfoo_logs.repeated)
    assert sorted({r.epoch for r in records}) == [1, 2]
    run = import_logs("promptfoo", [promptfoo_logs.repeated], tmp_path / "runs")
    success = _success(run)
    assert (success["guess"]["k"], success["guess"]["n"]) == (28, 40)
    report = (run / "report.md").read_text()
    assert "| guess vs alt | 40 |" in report
    assert "n/a: one trial per task" not in report  # two epochs: the task-clustered interval


def test_provider_errors_are_infra_not_failures(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    records = [r for r in _records(promptfoo_logs.errors) if r.arm == "script"]
    infra = [r for r in records if r.outcome == "infra"]
    own = json.loads(promptfoo_logs.errors.read_text())["results"]["prompts"][1]["metrics"]
    assert len(infra) == own["testErrorCount"] == 5
    assert all("no answer to give" in (r.reason or "") for r in infra)
    run = import_logs("promptfoo", [promptfoo_logs.errors], tmp_path / "runs")
    success = _success(run)
    assert (success["script"]["k"], success["script"]["n"]) == (own["testPassCount"], 15)
    report = (run / "report.md").read_text()
    assert "| echo vs script | 15 | 15 | 0 | 0 | 0 |" in report


def test_another_config_is_refused_naming_both_files(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    with pytest.raises(ImportRefused) as caught:
        import_logs(
            "promptfoo", [promptfoo_logs.prompts, promptfoo_logs.providers], tmp_path / "runs"
        )
    message = str(caught.value)
    assert "task differs" in message
    assert f"{promptfoo_logs.prompts}: 'arith by prompt'" in message
    assert f"{promptfoo_logs.providers}: 'arith by provider'" in message
    assert not (tmp_path / "runs").exists()


def test_changed_test_cases_are_listed_or_refused(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    data = json.loads(promptfoo_logs.prompts.read_text())
    for row in data["results"]["results"]:
        if row["promptIdx"] == 1 and row["vars"]["question"] == "What is 2 + 5?":
            row["vars"]["answer"] = "8"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    # By the vars hash, the edited test case is another test case: listed, excluded.
    run = import_logs("promptfoo", [edited], tmp_path / "runs")
    unpaired = json.loads((run / "run.json").read_text())["imported"]["pairing"]["unpaired"]
    assert [(u["arm"], u["count"]) for u in unpaired] == [("guess", 1), ("alt", 1)]
    # Named by a var, it is the same test case with another input: refused, then allowed.
    with pytest.raises(ImportRefused, match=r"1 samples have a different input in arm 'alt'"):
        import_logs("promptfoo", [edited], tmp_path / "runs2", options={"id": "question"})
    assert not (tmp_path / "runs2").exists()


def test_bad_files_and_options_are_refused_with_the_fix(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    truncated = tmp_path / "truncated.json"
    truncated.write_text(promptfoo_logs.prompts.read_text()[:5000])
    with pytest.raises(ImportRefused, match=rf"{truncated}: not readable as JSON.*truncated"):
        import_logs("promptfoo", [truncated], tmp_path / "runs")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"results": {"table": []}}))
    with pytest.raises(ImportRefused, match=r"not a promptfoo results file.*--output results"):
        import_logs("promptfoo", [other], tmp_path / "runs")
    with pytest.raises(ImportRefused, match=r"no var 'topic'.*--option id=VAR"):
        import_logs(
            "promptfoo", [promptfoo_logs.prompts], tmp_path / "runs", options={"id": "topic"}
        )
    with pytest.raises(ImportRefused, match="no score 'accuracy'"):
        import_logs(
            "promptfoo", [promptfoo_logs.prompts], tmp_path / "runs", options={"metric": "accuracy"}
        )
    with pytest.raises(ImportRefused, match="arm=provider gives two arms one name"):
        import_logs(
            "promptfoo", [promptfoo_logs.prompts], tmp_path / "runs", options={"arm": "provider"}
        )
    assert not (tmp_path / "runs").exists()


def test_cli_import_then_report_gives_the_paired_report(
    promptfoo_logs: PromptfooLogs, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runner = CliRunner()
    result = runner.invoke(
        app, ["import", "promptfoo", str(promptfoo_logs.providers), "--runs-dir", str(runs)]
    )
    assert result.exit_code == 0, result.output
    run = Path(result.stdout.strip().splitlines()[-1])
    result = runner.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    report = (run / "report.md").read_text()
    assert "promptfoo 0.121.20" in report
    # echo-two-chars fails exactly the one-digit answers echo-whole passes (5, 7, 9).
    assert "| echo-whole vs echo-two-chars | 20 | 12 | 3 | 0 | 5 |" in report
    assert "Measured in the logs: cost, time, tokens" in report
