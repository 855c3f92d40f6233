"""The python adapter: an engine class in a worker subprocess, whose every failure is the
engine's runtime failure."""

from __future__ import annotations

import asyncio
import os
import textwrap

import pytest

from pairbench.studies.attribution_reliability.engines import (
    EngineOutcome,
    EngineRequest,
    EngineSpec,
    Persona,
    run_engine,
)
from pairbench.studies.attribution_reliability.engines._resolve import build, classify

pytestmark = pytest.mark.whole_run

ENGINES = """
import os, time
from pairbench.studies.attribution_reliability.engines import EngineReport, Finding, SetAside


class Good:
    def __init__(self, settings):
        self.settings = settings

    def scan(self, request):
        print("chatty engine output on stdout")
        return EngineReport(
            status="completed",
            findings=[Finding(id="f1", headline=self.settings["say"], claim_scope="usability")],
            set_aside=[SetAside(summary=" ".join(sorted(os.environ)), reason="environment")],
        )

    def judge(self, request):
        return EngineReport(status="completed", set_aside=[
            SetAside(summary=str(len(request.sessions or [])), reason="insufficient_evidence")])


class Raises(Good):
    def scan(self, request):
        raise RuntimeError("the model said no")


class Exits(Good):
    def scan(self, request):
        os._exit(9)


class NotAReport(Good):
    def scan(self, request):
        return ["finding one"]


class BadDict(Good):
    def scan(self, request):
        return {"status": "completed", "findings": "none"}


class Hangs(Good):
    def scan(self, request):
        time.sleep(60)
"""


def request(mode: str = "scan") -> EngineRequest:
    return EngineRequest(
        mode="judge" if mode == "judge" else "scan",
        start_url="http://127.0.0.1:9/v/abc",
        personas=[Persona(user="u1", goal="You want to book a table.")],
        model_seed=7,
        sessions=[] if mode == "judge" else None,
    )


CASES: dict[str, tuple[str, str, dict[str, object]]] = {
    "good": ("Good", "scan", {"env": {"DECLARED": "1"}}),
    "judge": ("Good", "judge", {}),
    "raises": ("Raises", "scan", {}),
    "exits": ("Exits", "scan", {}),
    "not_a_report": ("NotAReport", "scan", {}),
    "bad_dict": ("BadDict", "scan", {}),
    "missing": ("Missing", "scan", {}),
    "hangs": ("Hangs", "scan", {"timeout_s": 2}),
}
"""Name -> (engine class, mode, spec fields). Run all at once: each worker imports
pairbench (about a second), and in parallel the module takes as long as one of them."""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EngineOutcome]:
    root = tmp_path_factory.mktemp("python_engines")
    (root / "my_engines.py").write_text(textwrap.dedent(ENGINES), encoding="utf-8")
    env = {**os.environ, "PAIRBENCH_TEST_LEAK": "leaked"}

    async def one(name: str) -> EngineOutcome:
        cls, mode, extra = CASES[name]
        spec = EngineSpec.parse(
            {
                "engine": "python",
                "target": f"my_engines:{cls}",
                "path": [str(root)],
                "settings": {"say": "the basket empties"},
                **extra,
            }
        )
        return await run_engine(spec, request(mode), env=env, workdir=root / name)

    async def every() -> list[EngineOutcome]:
        return list(await asyncio.gather(*(one(name) for name in CASES)))

    return dict(zip(CASES, asyncio.run(every()), strict=True))


def test_a_good_engine_reports_despite_printing(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["good"]
    assert outcome.failure is None, outcome.message
    assert outcome.report is not None
    assert outcome.report.findings[0].headline == "the basket empties"
    names = outcome.report.set_aside[0].summary.split()
    assert "DECLARED" in names and "PAIRBENCH_TEST_LEAK" not in names
    assert "chatty engine output" in outcome.stderr_tail


def test_judge_mode_calls_judge(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["judge"]
    assert outcome.report is not None
    assert outcome.report.set_aside[0].reason == "insufficient_evidence"


def test_an_exception_is_a_crash_naming_it(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["raises"]
    assert outcome.failure == "crash"
    assert outcome.message == "my_engines:Raises.scan raised RuntimeError: the model said no"
    assert "Traceback" in outcome.stderr_tail


def test_os_exit_is_a_crash(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["exits"]
    assert outcome.failure == "crash"
    assert "exit code 9" in outcome.message


def test_a_non_report_return_is_an_invalid_report(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["not_a_report"]
    assert outcome.failure == "invalid_report"
    assert "returned list, not an EngineReport" in outcome.message


def test_a_dict_that_does_not_validate_is_an_invalid_report(
    outcomes: dict[str, EngineOutcome],
) -> None:
    outcome = outcomes["bad_dict"]
    assert outcome.failure == "invalid_report"
    assert "findings" in outcome.message


def test_a_target_that_does_not_import_is_a_crash(outcomes: dict[str, EngineOutcome]) -> None:
    outcome = outcomes["missing"]
    assert outcome.failure == "crash"
    assert "could not build my_engines:Missing" in outcome.message


def test_a_hang_is_a_timeout(outcomes: dict[str, EngineOutcome]) -> None:
    assert outcomes["hangs"].failure == "timeout"


class Registered:
    """An AttributionEngine class registered by name runs through the python worker."""

    def __init__(self, settings: dict[str, object]) -> None:
        self.settings = settings

    def scan(self, request: EngineRequest) -> None:
        raise NotImplementedError

    def judge(self, request: EngineRequest) -> None:
        raise NotImplementedError


def test_a_registered_engine_class_is_wrapped_in_the_python_adapter() -> None:
    found = classify(Registered, target="pkg.mod:Registered")
    assert found.adapter.adapter == "python"
    assert found.target == "pkg.mod:Registered"
    assert classify(Registered).target == f"{__name__}:Registered"


def test_an_adapter_class_is_used_as_it_is() -> None:
    from pairbench.studies.attribution_reliability.engines import HttpEngine

    assert classify(HttpEngine).adapter is HttpEngine
    spec = EngineSpec.parse({"engine": "http", "url": "http://127.0.0.1:1"})
    assert isinstance(build(spec), HttpEngine)
