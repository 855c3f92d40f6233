"""The other scenarios end to end on the candidate: each passes for its seed, with the
evidence its row of the design's table names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from helpers.runtime_rab import model, worktrees
from pairbench.studies.runtime_revision_ab import ModelServer, run_scenario

pytestmark = pytest.mark.whole_run


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return worktrees(tmp_path_factory.mktemp("rab"), ("candidate",))["candidate"]


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    yield from model()


def test_ar002_renames_and_verifies(tree: Path, server: ModelServer, tmp_path: Path) -> None:
    result = run_scenario(tree, "AR-002", server.base_url, tmp_path, 1, 60)
    assert result.passed and result.claim == "done"
    assert {c.path for c in result.delta} == {"shop/pricing.py", "shop/report.py"}
    assert all(result.obligations.values())


def test_ar003_reports_the_missing_file(tree: Path, server: ModelServer, tmp_path: Path) -> None:
    result = run_scenario(tree, "AR-003", server.base_url, tmp_path, 1, 60)
    assert result.passed and result.claim == "incomplete"
    assert result.events is not None
    observed = [e.error for e in result.events if e.kind == "observed" and not e.ok]
    assert "missing_resource" in observed


def test_ar005_pages_through_the_truncated_log(
    tree: Path, server: ModelServer, tmp_path: Path
) -> None:
    result = run_scenario(tree, "AR-005", server.base_url, tmp_path, 3, 60)
    assert result.passed and result.events is not None
    assert sum(1 for e in result.events if e.kind == "observed" and e.truncated) >= 7
    prompts = [r.prompt_tokens or 0 for r in result.requests]
    assert max(prompts) == prompts[-1] > 10 * prompts[0]  # the context peaks at the end


def test_ar006_recovers_from_the_slow_page(tree: Path, server: ModelServer, tmp_path: Path) -> None:
    result = run_scenario(tree, "AR-006", server.base_url, tmp_path, 2, 60)
    assert result.passed and result.events is not None
    errors = [e.error for e in result.events if e.kind == "observed" and not e.ok]
    assert errors == ["timeout"]


def test_a_timeout_kills_the_whole_run(tree: Path, server: ModelServer, tmp_path: Path) -> None:
    # 0.5 s is less than the first GET's own 1 s timeout: minirt is still waiting when killed.
    result = run_scenario(tree, "AR-006", server.base_url, tmp_path, 2, 0.5)
    assert (result.timed_out, result.status, result.exit_code) == (True, "timeout", None)
    assert result.failure_kind == "infra" and not result.passed
    assert psutil.Process().children(recursive=True) == []
