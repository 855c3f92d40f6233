"""The built-in demos give the numbers they gave before the studies became plugins.

Issue 31 moved every study's report code, commands and double replies out of the core with
"no behaviour changes". The numbers these demos' seeds decide (outcomes, k/n, paired counts,
exact p values, the study's verdicts) were recorded at 2689c37, before the move, in
``tests/data/demo_numbers/`` (``helpers.demo_numbers.numbers``; timings, ids and paths are
left out, being no seed's to decide). The other two demos (attribution-reliability,
runtime-revision-ab) were compared the same way once, with ``python
tests/helpers/demo_numbers.py compare``: they take minutes, and their study tests pin their
numbers already.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.demo_numbers import numbers
from pairbench.cli import app

pytestmark = pytest.mark.whole_run

DATA = Path(__file__).parents[1] / "data" / "demo_numbers"


def _demo(tmp_path: Path, *args: str) -> dict[str, object]:
    recorded = json.loads((DATA / f"{args[-1] if args else 'mcp'}.json").read_text())
    runs = tmp_path / "runs"
    study = ["--study", "webmcp-vs-pdf"] if args else []
    seed = str(recorded["run_seed"])
    done = CliRunner().invoke(app, ["demo", *study, "--runs-dir", str(runs), "--run-seed", seed])
    assert done.exit_code == 0, done.output
    (summary,) = runs.glob("*/summary.json")
    found: dict[str, object] = json.loads(json.dumps(numbers(json.loads(summary.read_text()))))
    assert found == recorded["numbers"]
    return found


def test_the_default_demo_gives_the_numbers_it_gave_before(tmp_path: Path) -> None:
    found = _demo(tmp_path)
    assert found["arms"]  # a run that recorded nothing would compare equal to nothing


@pytest.mark.browser
def test_the_webmcp_demo_gives_the_numbers_it_gave_before(tmp_path: Path) -> None:
    found = _demo(tmp_path, "webmcp")
    assert found["arms"]
