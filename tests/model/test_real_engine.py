"""The attribution study's ``openai`` engine against the real llama-server and Gemma 3 270M:
the engine's tool-loop and report requests (tools, a json_schema response format, a seed,
a token cap) are accepted by a real OpenAI-compatible server, usage is measured, and what a
270M model writes ends as a valid report, never a crash. Run the way the study runs it:
the registered engine in its worker subprocess, through ``run_engine``, on a real case site.

What the model concludes is not tested (a 270M model's judgment is noise); what the double
cannot show is: llama.cpp's own handling of these requests (when it was first run here the
engine sent no ``max_tokens`` and each call wrote until the model's context was full, 365 s
for one session, ending in timeouts; ``max_output_tokens`` came from that)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.common import skip_outside_ci
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.model import LlamaServer, ServeConfig
from pairbench.model._build import cached_build
from pairbench.model._weights import installed_model
from pairbench.studies.attribution_reliability._manifest import load_cases
from pairbench.studies.attribution_reliability.engines import (
    Budget,
    EngineRequest,
    EngineSpec,
    Persona,
    run_engine,
)
from pairbench.studies.attribution_reliability.site import serve_case

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    if cached_build() is None or installed_model() is None:
        skip_outside_ci("the local model is not installed: run `pairbench model install`")
    problem = chromium_problem()
    if problem is not None:
        skip_outside_ci(f"the openai engine browses in Chromium: {problem}")
    with LlamaServer.start() as running:
        yield running


def test_the_openai_engine_runs_a_session_against_the_real_server(server: LlamaServer) -> None:
    case = load_cases()["C-P01"]
    settings = {
        "base_url": f"{server.url}/v1",
        "model": ServeConfig().alias,
        "api_key_env": "LOCAL_MODEL_KEY",
        "temperature": 0,
        "max_output_tokens": 96,
        "max_turns": 3,
        "max_retries": 0,
        "timeout_s": 120,
    }
    spec = EngineSpec.parse(
        {"engine": "openai", "settings": settings, "env": {"LOCAL_MODEL_KEY": "local"}}
    )
    with serve_case(case.fixture, seed=11) as site:
        request = EngineRequest(
            mode="scan", start_url=site.start_url, personas=[Persona(user="u1", goal=case.goal)],
            budget=Budget(actions_per_user=2, seconds_per_user=120), model_seed=11,
        )  # fmt: skip
        # A short folder, as the study's adapter gives it: Chromium's socket path under a
        # deep pytest folder passes the 107-byte limit and the browser aborts at start.
        with tempfile.TemporaryDirectory(prefix="pb-engine-") as short:
            outcome = asyncio.run(
                run_engine(spec, request, env=dict(os.environ), workdir=Path(short), timeout_s=400)
            )
    assert outcome.failure in (None, "engine_error"), (outcome.failure, outcome.message)
    report = outcome.report
    assert report is not None, outcome.message
    # Every request was answered: no refusal, no timeout, no transport error. A report
    # the model could not finish within the cap is the engine's parse error, listed.
    assert {e.kind for e in report.errors} <= {"parse"}, report.errors
    (usage,) = report.usage
    assert usage.model == ServeConfig().alias and usage.provenance == "measured"
    assert usage.input_tokens > 500 and usage.output_tokens > 0  # the page reached the model
    assert usage.cost_usd is None  # no prices declared: no cost is made up
    assert [u.user for u in report.users] == ["u1"]
