"""Real logs of other harnesses, made once per session (see helpers.harness_logs)."""

from __future__ import annotations

import pytest

from helpers.harness_logs import (
    LmEvalLogs,
    PromptfooLogs,
    make_lm_eval_logs,
    make_promptfoo_logs,
)


@pytest.fixture(scope="session")
def lm_eval_logs(tmp_path_factory: pytest.TempPathFactory) -> LmEvalLogs:
    """Seven real lm-eval 0.4.13 runs against chat doubles (~4 s of CPU, one process)."""
    return make_lm_eval_logs(tmp_path_factory.mktemp("lm-eval"))


@pytest.fixture(scope="session")
def promptfoo_logs(tmp_path_factory: pytest.TempPathFactory) -> PromptfooLogs:
    """Three real promptfoo 0.121.20 evals with its echo provider (~3 s of CPU each)."""
    return make_promptfoo_logs(tmp_path_factory.mktemp("promptfoo"))
