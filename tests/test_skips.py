"""A prerequisite a test needs is never quietly missing in CI: ``skip_outside_ci`` skips
loudly on a developer's machine and fails under CI=true."""

from __future__ import annotations

import pytest

from helpers.common import skip_outside_ci


def test_under_ci_a_missing_prerequisite_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: this must run, not skip"):
        skip_outside_ci("chromium is not installed")


def test_outside_ci_it_skips_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="SKIPPING \\(not CI\\): chromium"):
        skip_outside_ci("chromium is not installed")
