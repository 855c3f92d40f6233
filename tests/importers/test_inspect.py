"""``pairbench import inspect``: recorded logs of a real Inspect AI 0.3.285 run (``mockllm``).

The logs in ``data/`` were made by ``data/make_inspect_logs.sh`` with the real ``inspect eval``
and committed, so the suite does not repeat four ``inspect eval`` runs (~20 s) whose logs
differ only in ids and times. inspect-ai itself is in the dev install (constraints.txt pins
0.3.285), and the importer runs in this process through ``inspect_ai.log``.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers.common import skip_outside_ci
from pairbench._errors import ImportRefused

DATA = Path(__file__).parent / "data"


def _need_inspect() -> None:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        skip_outside_ci("inspect_ai is not importable (pip install 'pairbench[inspect]')")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A pair of logs copied out (so a test may edit them), imported and reported once."""
    _need_inspect()
    from pairbench.cli import app
    from pairbench.importers._api import import_logs

    root = tmp_path_factory.mktemp("inspect")
    for name in ("inspect_a.eval", "inspect_b.eval"):
        shutil.copy(DATA / name, root / name)
    run = import_logs(
        "inspect",
        [root / "inspect_a.eval", root / "inspect_b.eval"],
        root / "runs",
        arm_names=["a", "b"],
    )
    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    return root, run


def test_per_arm_rates_equal_inspects_own_headline(imported: tuple[Path, Path]) -> None:
    from inspect_ai.log import read_eval_log

    root, run = imported
    arms = {a["arm"]: a["success"] for a in json.loads((run / "summary.json").read_text())["arms"]}
    for arm, name in (("a", "inspect_a.eval"), ("b", "inspect_b.eval")):
        header = read_eval_log(str(root / name), header_only=True)
        assert header.results is not None
        accuracy = header.results.scores[0].metrics["accuracy"].value
        assert arms[arm]["estimate"] == pytest.approx(accuracy)
    # Arm b's sample 20 raised in both epochs: infra, not scored, not a failure.
    assert arms["b"]["n"] == 38


def test_report_leads_with_what_pairbench_cannot_vouch_for(imported: tuple[Path, Path]) -> None:
    _, run = imported
    text = (run / "report.md").read_text()
    first = text.index("## ")
    assert text[first:].startswith("## Imported: trials run by another harness")
    assert "inspect_ai 0.3.285" in text and "cannot show that the arms got paired seeds" in text
    assert "Measured in the logs: time, tokens; absent: cost." in text
    assert "not pre-registered" in text
    # Different task arguments (variant a, b): not an A/A check.
    assert "A/A" not in text


def test_mcnemar_pinned_against_statsmodels(imported: tuple[Path, Path]) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    _, run = imported
    pair = json.loads((run / "summary.json").read_text())["pairs"][0]
    table = [[pair["both"], pair["a_only"]], [pair["b_only"], pair["neither"]]]
    assert (pair["a_only"], pair["b_only"]) == (0, 6)  # every third sample, both epochs
    expected = mcnemar(table, exact=True).pvalue
    assert pair["mcnemar_exact_p"] == pytest.approx(expected)
    # mid-p: the exact p minus the probability of the observed count (Fagerland et al. 2013)
    from scipy.stats import binom

    n, k = pair["a_only"] + pair["b_only"], min(pair["a_only"], pair["b_only"])
    assert pair["mcnemar_midp_p"] == pytest.approx(expected - binom.pmf(k, n, 0.5))


def test_verify_export_and_an_edited_log(imported: tuple[Path, Path], tmp_path: Path) -> None:
    from pairbench.cli import app

    root, run = imported
    runner = CliRunner()
    assert runner.invoke(app, ["verify", str(run)]).exit_code == 0
    out = tmp_path / "t.parquet"
    exported = runner.invoke(app, ["export", str(run), "--format", "parquet", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    import pyarrow.parquet as pq

    assert pq.read_table(out).num_rows == 80
    log = root / "inspect_b.eval"
    saved = log.read_bytes()
    log.write_bytes(saved + b"\0")
    try:
        result = runner.invoke(app, ["verify", str(run)])
        assert result.exit_code != 0
        assert f"imported-log: {log}" in result.output
    finally:
        log.write_bytes(saved)


def test_a_a_pair_says_so(tmp_path: Path) -> None:
    _need_inspect()
    from pairbench.importers._api import import_logs

    run = import_logs("inspect", [DATA / "inspect_a.eval", DATA / "inspect_a2.json"], tmp_path)
    record = json.loads((run / "run.json").read_text())["imported"]
    assert record["pairing"]["a_a"] is True
    assert any("A/A check" in line for line in record["vouch"])


def test_samples_in_one_arm_only_are_listed_and_excluded(tmp_path: Path) -> None:
    _need_inspect()
    from pairbench.importers._api import import_logs

    run = import_logs(
        "inspect",
        [DATA / "inspect_a.eval", DATA / "inspect_short.eval"],
        tmp_path,
        arm_names=["full", "short"],
    )
    pairing = json.loads((run / "run.json").read_text())["imported"]["pairing"]
    assert pairing["paired"] == 30
    assert pairing["unpaired"] == [
        {
            "arm": "full",
            "count": 10,
            "examples": [f"{s}@{e}" for s in (16, 17, 18, 19, 20) for e in (1, 2)],
        }
    ]


def _untouched(runs: Path) -> None:
    assert not runs.exists() or list(runs.iterdir()) == []


def test_a_truncated_log_is_refused(tmp_path: Path) -> None:
    _need_inspect()
    from pairbench.importers._api import import_logs

    cut = tmp_path / "cut.eval"
    data = (DATA / "inspect_b.eval").read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImportRefused, match=r"cut\.eval: .*(truncated|whole)"):
        import_logs("inspect", [DATA / "inspect_a.eval", cut], tmp_path / "runs")
    _untouched(tmp_path / "runs")


def test_a_log_of_another_task_is_refused_unless_allowed(tmp_path: Path) -> None:
    _need_inspect()
    from pairbench.importers._api import import_logs

    other = tmp_path / "other.json"
    log = json.loads((DATA / "inspect_a2.json").read_text())
    log["eval"]["task"] = "another_task"
    other.write_text(json.dumps(log))
    with pytest.raises(ImportRefused, match=r"task differs .*'pairing'.*'another_task'"):
        import_logs("inspect", [DATA / "inspect_a.eval", other], tmp_path / "runs")
    _untouched(tmp_path / "runs")
    run = import_logs(
        "inspect",
        [DATA / "inspect_a.eval", other],
        tmp_path / "runs",
        allow_different_inputs=True,
    )
    vouch = json.loads((run / "run.json").read_text())["imported"]["vouch"]
    assert vouch[0].startswith("THE ARMS DID NOT SEE THE SAME INPUTS")


def test_the_eval_zip_is_read_by_inspect_not_by_hand() -> None:
    # The recorded .eval is Inspect's zip format; the importer never opens it with zipfile.
    assert zipfile.is_zipfile(DATA / "inspect_a.eval")
    source = (Path(__file__).parents[2] / "src/pairbench/importers/_inspect.py").read_text()
    assert "zipfile" not in source and "read_eval_log_samples" in source


def test_compare_and_view_read_the_imported_run(imported: tuple[Path, Path]) -> None:
    from starlette.testclient import TestClient

    from pairbench.cli import app
    from pairbench.view import create_app

    _, run = imported
    same = CliRunner().invoke(app, ["compare", str(run), str(run)])
    assert same.exit_code == 0, same.output
    client = TestClient(create_app(run.parent, port=8765), base_url="http://127.0.0.1:8765")
    page = client.get(f"/runs/{run.name}/report")
    assert page.status_code == 200
    assert "Imported: trials run by another harness" in page.text
    trial = client.get(f"/runs/{run.name}/trials/b/20/0")  # sample 20 errored in arm b
    assert trial.status_code == 200 and "infra" in trial.text


def test_whole_samples_give_the_same_records_as_summaries(tmp_path: Path) -> None:
    _need_inspect()
    from pairbench.importers import InspectImporter, SampleRecord

    importer = InspectImporter()
    quick, full = importer.settings({}), importer.settings({"full_samples": "true"})
    path = DATA / "inspect_b.eval"
    facts = importer.scan(path, quick)

    def key(r: SampleRecord) -> tuple[int, int]:
        return int(r.sample_id), r.epoch

    summaries = sorted(importer.samples(path, facts, quick), key=key)
    whole = sorted(importer.samples(path, facts, full), key=key)
    assert len(summaries) == 40 and summaries == whole
    assert [r.reason for r in summaries if r.outcome == "infra"] == [
        "error: RuntimeError('tool sandbox went away')"
    ] * 2


def test_an_import_runs_with_the_collector_paced_and_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An import keeps an object per sample: at Python's default pace the collector walked
    # them all again and again (~10% of a 4,000-sample import; see pairbench._collector).
    _need_inspect()
    import gc

    import pairbench.importers._api as api
    from pairbench._collector import YOUNG_COLLECTION_EVERY
    from pairbench.importers._write import write_run as real

    seen: list[tuple[int, int]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count()))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "write_run", spy)
    before = gc.get_threshold()
    api.import_logs("inspect", [DATA / "inspect_a.eval", DATA / "inspect_b.eval"], tmp_path)
    ((young, frozen),) = seen
    assert young == YOUNG_COLLECTION_EVERY and frozen > 1000
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
