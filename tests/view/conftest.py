"""The view's tests share one RUNS_DIR (built once: two real runs and two written ones)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from helpers.view_runs import PORT, ViewRuns, build_view_runs
from pairbench.view import create_app


@pytest.fixture(scope="session")
def view_runs(tmp_path_factory: pytest.TempPathFactory) -> ViewRuns:
    return build_view_runs(tmp_path_factory.mktemp("view"))


@pytest.fixture
def client(view_runs: ViewRuns) -> Iterator[TestClient]:
    app = create_app(view_runs.runs, port=PORT)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}") as test_client:
        yield test_client
