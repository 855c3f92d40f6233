"""Fixtures for the report tests; the builders live in ``tests/_report_builders.py``."""

from __future__ import annotations

import pytest

from helpers.report_builders import MakeResult, RunScenario, make_result, make_run, make_scenario


@pytest.fixture
def make() -> MakeResult:
    return make_result


@pytest.fixture
def scenario() -> RunScenario:
    results, infra = make_scenario()
    return make_run(), results, infra
