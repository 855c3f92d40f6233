"""Fixtures for the report tests; the builders live in ``_report_builders``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for _report_builders

from _report_builders import make_result, make_run, make_scenario

from pairbench.store._records import TrialResult


@pytest.fixture
def make() -> Callable[..., TrialResult]:
    return make_result


@pytest.fixture
def scenario() -> tuple[dict[str, Any], list[TrialResult], list[TrialResult]]:
    results, infra = make_scenario()
    return make_run(), results, infra
