"""The scripted-user recorder in real headless Chromium: hands, statuses, snapshots, the
anchor rule over what was recorded, and a bundle that carries nothing of the manifest."""

from __future__ import annotations

import asyncio
import base64
import re
import struct

import pytest

from pairbench.fixtures._webmcp import launch_chromium
from pairbench.studies.attribution_reliability._manifest import (
    Package,
    PlannedSentence,
    ScriptedUser,
    ScriptStep,
    load_packages,
)
from pairbench.studies.attribution_reliability._scripted import (
    bundle_json,
    describe_target,
    load_bundle,
    record_package,
    sentence_user,
)
from pairbench.studies.attribution_reliability.engines._models import RecordedSession, RecordedStep
from pairbench.studies.attribution_reliability.site import serve_case

pytestmark = pytest.mark.browser

PACKAGES = load_packages()
FAST = ("K04", "K09", "K14", "K17", "C-K05")
Recorded = dict[str, list[RecordedSession]]


def _record(ids: list[str] | tuple[str, ...]) -> Recorded:
    """Record ``ids`` in one browser, three packages at a time: a recording mostly waits
    (on a page's timers and loads), so three overlap well on two cores."""

    async def go() -> Recorded:
        out: Recorded = {}
        three = asyncio.Semaphore(3)
        async with launch_chromium() as browser:

            async def one(pid: str) -> None:
                async with three:
                    with serve_case(PACKAGES[pid].fixture, seed=5) as site:
                        out[pid] = await record_package(PACKAGES[pid], site, browser=browser)

            await asyncio.gather(*(one(pid) for pid in ids))
        return {pid: out[pid] for pid in ids}

    return asyncio.run(go())


@pytest.fixture(scope="module")
def everything() -> Recorded:
    """Every package, one shared browser (about a minute on a busy machine)."""
    return _record(list(PACKAGES))


@pytest.fixture(scope="module")
def fast(everything: Recorded) -> Recorded:
    """A few packages (the same recordings: each would cost seconds again)."""
    return {pid: everything[pid] for pid in FAST}


def _steps(sessions: list[RecordedSession]) -> list[RecordedStep]:
    return [step for session in sessions for step in session.steps]


def test_a_click_on_empty_space_is_a_miss(fast: Recorded) -> None:
    k04 = fast["K04"][0].steps
    assert [s.hand for s in k04] == ["ok", "ok", "missed"]
    assert k04[2].target == "the point 600,440"
    assert "your order is in" not in k04[2].snapshot.casefold()


@pytest.mark.browser
def test_a_miss_then_a_real_click_recovers(everything: Recorded) -> None:
    k19 = everything["K19"][0].steps
    assert [s.hand for s in k19] == ["ok", "ok", "missed", "ok"]
    assert "your order is in" not in k19[2].snapshot.casefold()
    assert "your order is in" in k19[3].snapshot.casefold()


def test_statuses_follow_the_last_navigation(fast: Recorded) -> None:
    k09 = fast["K09"][0].steps
    assert [s.status for s in k09] == [200, 200, 403]
    assert k09[2].url.endswith("/search?q=Kingsport")
    assert "could not verify your browser" in k09[2].snapshot
    k17 = fast["K17"][0].steps
    assert k17[-1].status == 500 and k17[0].console_errors == []
    assert any("500" in e for e in k17[-1].console_errors)


def test_each_user_has_a_fresh_context_and_their_own_sentences(fast: Recorded) -> None:
    u1, u2 = fast["K14"]
    assert (u1.user, u2.user) == ("u1", "u2")
    assert u2.steps[0].url.endswith("/basket?item=roses")
    said = {s.sid: s.text for s in PACKAGES["K14"].sentences}
    assert u1.steps[3].sentences == [said["u1.s1"]]
    assert u2.steps[1].sentences == [said["u2.s1"]]
    assert [s.sentences for s in u2.steps[:1]] == [[]]


def test_every_step_carries_a_screenshot_a_snapshot_and_a_clock(fast: Recorded) -> None:
    for pid, sessions in fast.items():
        for session in sessions:
            times = [s.t_ms for s in session.steps]
            assert times == sorted(times) and times[0] > 0, pid
            for step in session.steps:
                png = base64.b64decode(step.screenshot or "")
                assert png[:8] == b"\x89PNG\r\n\x1a\n"
                assert struct.unpack(">II", png[16:24]) == (640, 480)
                assert step.snapshot.strip(), (pid, step.step)


def bundle_leaks(text: str, package: Package) -> list[str]:
    """Manifest keys or values in a bundle (its screenshots already removed). Anchors are
    part of what a user said, so they travel inside sentences; their list never does."""
    keys = ("sid", "planted", "anchors", "truth", "kind", "description", "target_terms")
    leaks = [k for k in keys if f'"{k}":' in text]
    values = [package.id, package.kind, *(s.sid for s in package.sentences)]
    leaks += [v for v in values if re.search(rf"(?<![\w.]){re.escape(v)}(?![\w.])", text)]
    leaks += [t for t in ("PRODUCT", "NOT_PRODUCT", "INCONCLUSIVE_EXPECTED") if t in text]
    return leaks + ([package.description] if package.description in text else [])


def _without_screenshots(sessions: list[RecordedSession]) -> str:
    bare = [
        s.model_copy(update={"steps": [t.model_copy(update={"screenshot": None}) for t in s.steps]})
        for s in sessions
    ]
    return bundle_json(bare)


def test_the_bundle_carries_text_only(fast: Recorded) -> None:
    for pid, sessions in fast.items():
        text = bundle_json(sessions)
        assert load_bundle(text) == sessions
        assert bundle_leaks(_without_screenshots(sessions), PACKAGES[pid]) == [], pid


def test_the_leak_check_fires() -> None:
    package = PACKAGES["K04"]
    step = RecordedStep(step=0, action="goto", hand="ok", url="/", t_ms=1.0)
    said = RecordedSession(
        user="u1", goal="g", steps=[step.model_copy(update={"sentences": ["K04"]})]
    )
    assert bundle_leaks(bundle_json([said]), package) == ["K04"]
    quiet = RecordedSession(user="u1", goal="g", steps=[step])
    assert bundle_leaks(bundle_json([quiet]), package) == []
    assert bundle_leaks('{"anchors": ["CR-2291"], "x": "s2"}', package) == ["anchors", "s2"]


@pytest.mark.browser
def test_record_package_launches_its_own_browser() -> None:
    package = PACKAGES["K06"]

    async def go() -> list[RecordedSession]:
        with serve_case(package.fixture, seed=9) as site:
            return await record_package(package, site)

    (session,) = asyncio.run(go())
    assert [(s.status, s.hand) for s in session.steps] == [(404, "ok")]


def test_css_targets_are_named_by_role_and_label(fast: Recorded) -> None:
    (session,) = fast["C-K05"]
    assert [s.target for s in session.steps] == ["/jobs", 'textbox "Email"']
    assert "#em" not in bundle_json(fast["C-K05"])


@pytest.mark.browser
def test_css_targets_read_off_the_page(everything: Recorded) -> None:
    assert everything["K02"][0].steps[2].target == 'button "Save"'
    assert everything["K05"][0].steps[2].target == 'file chooser "Upload your CV"'


def test_targets_read_as_a_user_names_them() -> None:
    assert describe_target(ScriptStep(do="click", on="role=button[name=Place order]")) == (
        'button "Place order"'
    )
    assert describe_target(ScriptStep(do="click", on="xy=12,34")) == "the point 12,34"
    assert describe_target(ScriptStep(do="hover", on="css=#cv")) == "#cv"
    assert describe_target(ScriptStep(do="goto", value="/areas")) == "/areas"
    assert describe_target(ScriptStep(do="goto")) == "/"


def test_a_sentence_belongs_to_the_user_its_sid_names() -> None:
    users = [ScriptedUser(user=u, goal="g", steps=[]) for u in ("u1", "u2")]
    assert sentence_user(PlannedSentence(sid="u2.s1", text="t", after_step=0), users) == "u2"
    assert sentence_user(PlannedSentence(sid="s1", text="t", after_step=0), users) == "u1"
    assert sentence_user(PlannedSentence(sid="u9.s1", text="t", after_step=0), users) == "u1"


# --- the full sweep ----------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("pid", list(PACKAGES))
def test_every_package_records_as_planned(everything: Recorded, pid: str) -> None:
    package, sessions = PACKAGES[pid], everything[pid]
    assert [s.user for s in sessions] == [u.user for u in package.users]
    for user, session in zip(package.users, sessions, strict=True):
        planned_misses = ["missed" if s.on.startswith("xy=") else "ok" for s in user.steps]
        assert [s.hand for s in session.steps] == planned_misses
        assert all(s.snapshot and s.screenshot for s in session.steps)
    said = [text for s in _steps(sessions) for text in s.sentences]
    assert sorted(said) == sorted(s.text for s in package.sentences)
    assert bundle_leaks(_without_screenshots(sessions), package) == []


@pytest.mark.browser
@pytest.mark.parametrize("pid", list(PACKAGES))
def test_anchor_rule_holds_in_recorded_snapshots(everything: Recorded, pid: str) -> None:
    package = PACKAGES[pid]
    own = [s.snapshot.casefold() for s in _steps(everything[pid])]
    same_site = [
        s.snapshot.casefold()
        for other, sessions in everything.items()
        if PACKAGES[other].fixture == package.fixture
        for s in _steps(sessions)
    ]
    for sentence in package.sentences:
        for anchor in sentence.anchors:
            if sentence.planted == "unsupported":
                assert not any(anchor.casefold() in t for t in same_site), (sentence.sid, anchor)
            elif sentence.planted == "valid":
                assert any(anchor.casefold() in t for t in own), (sentence.sid, anchor)
