"""The heuristic reference engine in real headless Chromium, on small sites of its own.

One server and one engine browser serve the whole module; each scenario is a sub-path of
the same site, so a scan starts at ``<start_url>/<scenario>``. Most scans use a short
no-effect wait; one uses the real default (8 s) against a result that appears after 6 s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from helpers.common import skip_outside_ci
from pairbench.fixtures._webmcp import chromium_problem
from pairbench.studies.attribution_reliability._heuristic import HeuristicEngine
from pairbench.studies.attribution_reliability._heuristic_browse import UserVisit
from pairbench.studies.attribution_reliability._heuristic_outcome import UserResult
from pairbench.studies.attribution_reliability._heuristic_rules import RULES_SHA256
from pairbench.studies.attribution_reliability.engines._models import (
    Budget,
    EngineReport,
    EngineRequest,
    Persona,
)
from pairbench.studies.attribution_reliability.site import (
    RunningSite,
    serve_site,
)
from studies.attribution_reliability.heuristic_site import build

pytestmark = pytest.mark.browser

FAST = {"no_effect_wait_s": 2.0}


@pytest.fixture(scope="module")
def site() -> Iterator[RunningSite]:
    problem = chromium_problem()
    if problem:
        skip_outside_ci(problem)
    with serve_site(build, seed=11) as running:
        yield running


_ENGINE_PROCESSES: set[int] = set()


@pytest.fixture(scope="module")
def engine() -> Iterator[HeuristicEngine]:
    before = {p.pid for p in psutil.Process().children()}
    with HeuristicEngine(FAST) as fast:
        _ENGINE_PROCESSES.update(p.pid for p in psutil.Process().children() if p.pid not in before)
        yield fast
    _ENGINE_PROCESSES.clear()
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    psutil.wait_procs(left, timeout=5)
    assert not [p for p in left if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@pytest.fixture(autouse=True)
def no_child_left_behind() -> Iterator[None]:
    """The suite's guard, except that the module engine's Chromium may start and keep
    renderer processes (it keeps a spare one ready): the fixture above stops them all."""

    def mine() -> set[int]:
        out = set()
        for child in psutil.Process().children(recursive=True):
            try:
                chain = {child.pid} | {p.pid for p in child.parents()}
                if chain & _ENGINE_PROCESSES or child.status() == psutil.STATUS_ZOMBIE:
                    continue
            except psutil.NoSuchProcess:
                continue
            out.add(child.pid)
        return out

    before = mine()
    yield
    deadline = time.monotonic() + 5.0
    while (left := mine() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"the test left child processes running: {sorted(left)}"


def _scan(engine: HeuristicEngine, site: RunningSite, path: str, goal: str) -> EngineReport:
    request = EngineRequest(
        mode="scan",
        start_url=f"{site.start_url}{path}",
        personas=[Persona(user="u1", goal=goal)],
        budget=Budget(actions_per_user=10, seconds_per_user=60),
        model_seed=1,
    )
    return engine.scan(request)


def test_a_dead_button_is_published_once_for_both_users_who_met_it(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    goal = "You want to order a birthday cake for Saturday."
    request = EngineRequest(
        mode="scan",
        start_url=f"{site.start_url}/dead",
        personas=[Persona(user="u1", goal=goal), Persona(user="u2", goal=goal)],
        budget=Budget(actions_per_user=3, seconds_per_user=60),
        model_seed=1,
    )
    report = engine.scan(request)
    assert [f.claim_scope for f in report.findings] == ["product_behavior"]
    finding = report.findings[0]
    assert "Place order" in finding.headline and "Place order" in finding.what_happened
    assert finding.evidence.users == ["u1", "u2"]
    assert report.usage == [] and report.status == "completed"
    assert [(q.user, q.status) for q in report.quote_pool] == [("u1", "kept"), ("u2", "kept")]
    assert [u.user for u in report.users] == ["u1", "u2"]
    assert any(o.target == "Place order" and o.user == "u2" for o in report.observations)


def test_a_working_button_is_not_blamed(engine: HeuristicEngine, site: RunningSite) -> None:
    report = _scan(engine, site, "/ok", "You want to order a birthday cake for Saturday.")
    assert report.findings == [] and report.set_aside == []
    assert "confirmed" in report.quote_pool[0].text


def test_a_click_slower_than_the_no_effect_window_is_not_blamed(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    # The click returns only after the page's 2.5 s handler, past the 2 s window: the window
    # opens once the click is done, so the request it then sends is seen.
    started = time.monotonic()
    report = _scan(engine, site, "/busy", "You want to order a birthday cake for Saturday.")
    assert time.monotonic() - started > 2.5
    assert report.findings == [] and report.set_aside == []
    assert "confirmed" in report.quote_pool[0].text


def test_a_server_error_behind_a_link_is_published(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/invoice", "You want a copy of your invoice from last month.")
    assert len(report.findings) == 1
    assert "Download invoice" in report.findings[0].headline
    assert "500" in report.findings[0].what_happened


def test_error_text_after_a_click_is_published(engine: HeuristicEngine, site: RunningSite) -> None:
    report = _scan(engine, site, "/code", "You want to use your discount on the cake.")
    assert ["Apply discount" in f.headline for f in report.findings] == [True]
    assert "went wrong" in report.findings[0].what_happened


def test_failure_words_in_prose_behind_a_link_blame_nothing(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/faq", "You want to read the refund policy.")
    assert report.findings == []
    assert any(o.page_url.endswith("/faq/refunds") for o in report.observations)


def test_an_error_heading_after_a_link_is_published(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/track", "You want to track your parcel.")
    assert ["Track my parcel" in f.headline for f in report.findings] == [True]
    assert "went wrong" in report.findings[0].what_happened


def test_a_form_our_hand_cannot_complete_is_set_aside_not_blamed(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/size", "You want to add a cake to your basket.")
    assert report.findings == []
    assert [a.reason for a in report.set_aside] == ["our_hand"]
    assert "Size" in report.set_aside[0].summary


def test_a_form_the_goal_does_not_name_is_tried_with_the_goal_postcode(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(
        engine, site, "/area", "You want to know whether the grocer delivers to SE15 4QF."
    )
    assert report.findings == [] and report.set_aside == []
    assert any(hit.path.endswith("/area/lookup?pc=SE15%204QF") for hit in site.audit)
    assert "SE15 4QF" in report.quote_pool[0].text


def test_a_valid_phone_number_refused_is_published(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/phone", "You want the shop to call you back about a cake.")
    assert len(report.findings) == 1
    assert "Request a call back" in report.findings[0].headline
    assert "020 7946 0000" in report.findings[0].what_happened


def test_a_gate_for_automated_browsers_is_set_aside(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/gate", "You want to see the prices.")
    assert report.findings == []
    assert [a.reason for a in report.set_aside] == ["environment"]
    assert "403" in report.set_aside[0].summary


def test_an_email_field_is_refused_never_filled(engine: HeuristicEngine, site: RunningSite) -> None:
    report = _scan(engine, site, "/email", "You want to get the gardening guide.")
    assert report.findings == []
    assert [a.reason for a in report.set_aside] == ["safety"]
    assert not any(hit.path.endswith("/email/done") for hit in site.audit)


def test_another_origin_is_out_of_scope(engine: HeuristicEngine, site: RunningSite) -> None:
    report = _scan(engine, site, "/away", "You want to book a table for lunch.")
    assert report.findings == []
    assert [a.reason for a in report.set_aside] == ["out_of_scope"]
    assert not any(hit.origin == "other" for hit in site.audit)


def test_a_hover_menu_is_opened_and_the_answer_found_the_same_way_twice(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    goal = "You want to check when your billing date is."
    report = _scan(engine, site, "/menu", goal)
    assert _scan(engine, site, "/menu", goal).wire() == report.wire()
    assert report.findings == [] and report.set_aside == []
    assert any(o.reached_element.startswith("hover") for o in report.observations)
    assert report.observations[-1].page_url.endswith("/menu/billing")
    assert "3rd" in report.quote_pool[0].text


def test_a_promise_without_its_content_is_an_absence_after_three_pages(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/promise", "You want to know how long delivery takes.")
    assert [f.claim_scope for f in report.findings] == ["product_absence"]
    assert "Delivery times" in report.findings[0].headline
    assert len({o.page_url for o in report.observations}) >= 3


def test_a_short_search_is_set_aside_not_an_absence(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    request = EngineRequest(
        mode="scan",
        start_url=f"{site.start_url}/promise",
        personas=[Persona(user="u1", goal="You want to know how long delivery takes.")],
        budget=Budget(actions_per_user=1, seconds_per_user=60),
        model_seed=1,
    )
    report = engine.scan(request)
    assert report.findings == []
    assert [a.reason for a in report.set_aside] == ["insufficient_evidence"]


def test_a_delayed_result_is_not_blamed_with_the_default_wait(site: RunningSite) -> None:
    request = EngineRequest(
        mode="scan",
        start_url=f"{site.start_url}/slow",
        personas=[Persona(user="u1", goal="You want to see your delivery options.")],
        model_seed=1,
    )
    engine = HeuristicEngine({})
    assert engine.settings.no_effect_wait_s == 8.0
    started = time.monotonic()
    # Playwright's sync API allows one instance per thread; the module's engine holds this
    # thread's, so the default-settings engine runs in a thread of its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        report = pool.submit(engine.scan, request).result(timeout=60)
    assert report.findings == [], report.findings
    assert any("3 days" in o.outcome_text for o in report.observations)
    assert time.monotonic() - started < 30


def test_the_same_delay_is_blamed_with_a_wait_shorter_than_it(
    engine: HeuristicEngine, site: RunningSite
) -> None:
    report = _scan(engine, site, "/slow", "You want to see your delivery options.")
    assert ["Show delivery options" in f.headline for f in report.findings] == [True]


def test_the_rules_are_hashed() -> None:
    assert len(RULES_SHA256) == 64 and HeuristicEngine.rules_sha256 == RULES_SHA256


def test_a_visit_that_fails_is_reported_and_the_others_still_browse(
    engine: HeuristicEngine, site: RunningSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = UserVisit.run

    def run(self: UserVisit) -> UserResult:
        if self.persona.user == "u1":
            raise RuntimeError("the page went away")
        return real(self)

    monkeypatch.setattr(UserVisit, "run", run)
    goal = "You want to order a birthday cake for Saturday."
    report = engine.scan(
        EngineRequest(
            mode="scan",
            start_url=f"{site.start_url}/ok",
            personas=[Persona(user="u1", goal=goal), Persona(user="u2", goal=goal)],
            model_seed=1,
        )
    )
    assert report.status == "failed" and report.runtime_failure
    assert [(e.kind, e.message) for e in report.errors] == [("internal", "u1: the page went away")]
    assert [q.user for q in report.quote_pool] == ["u2"]
