"""The heuristic engine's judge mode on hand-built recordings (no browser, no server)."""

from __future__ import annotations

from pairbench.studies.attribution_reliability._heuristic import HeuristicEngine
from pairbench.studies.attribution_reliability.engines._models import (
    EngineReport,
    EngineRequest,
    Persona,
    RecordedSession,
    RecordedStep,
)
from pairbench.studies.attribution_reliability.engines._protocol import AttributionEngine

BASE = "http://127.0.0.1:40000/v/abcdefghijklmnop"
BASKET = "main: heading 'Your basket'; text 'One lemon cake'; button 'Place order'"
THANKS = "main: heading 'Thank you'; text 'Order number 58213 confirmed'"


def _step(
    n: int,
    snapshot: str,
    *,
    path: str = "",
    action: str = "click",
    target: str = "Place order",
    hand: str = "ok",
    status: int | None = 200,
    says: tuple[str, ...] = (),
) -> RecordedStep:
    return RecordedStep.model_validate(
        {
            "step": n,
            "action": action,
            "target": target,
            "hand": hand,
            "url": f"{BASE}{path}",
            "status": status,
            "snapshot": snapshot,
            "t_ms": 100.0 * n,
            "sentences": list(says),
        }
    )


def _judge(*sessions: RecordedSession) -> EngineReport:
    request = EngineRequest(
        mode="judge",
        start_url=BASE,
        personas=[Persona(user=s.user, goal=s.goal) for s in sessions],
        model_seed=3,
        sessions=list(sessions),
    )
    return HeuristicEngine({}).judge(request)


def _session(*steps: RecordedStep, user: str = "u1") -> RecordedSession:
    return RecordedSession(user=user, goal="You want to order a cake.", steps=list(steps))


def _quotes(report: EngineReport) -> dict[str, str]:
    return {q.text: q.status for q in report.quote_pool}


def test_a_submit_claim_without_a_confirmation_is_dropped_and_a_reaction_kept() -> None:
    report = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(
                1,
                BASKET + "; status 'Processing'",
                says=("My order went through, order #58213.", "The page is calm."),
            ),
        )
    )
    assert _quotes(report) == {
        "My order went through, order #58213.": "dropped",
        "The page is calm.": "kept",
    }
    assert report.findings == [] and report.set_aside == []
    assert [(u.user, u.scripted) for u in report.users] == [("u1", True)]


def test_the_same_claim_with_a_recorded_confirmation_is_kept() -> None:
    report = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(1, THANKS, path="/thanks", says=("My order went through, order #58213.",)),
        )
    )
    assert _quotes(report) == {"My order went through, order #58213.": "kept"}


def test_completion_after_a_missed_hand_is_dropped_and_the_miss_set_aside() -> None:
    report = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(1, THANKS, hand="missed", says=("Done, my order is confirmed.",)),
        )
    )
    assert _quotes(report) == {"Done, my order is confirmed.": "dropped"}
    assert [(a.reason, a.users) for a in report.set_aside] == [("our_hand", ["u1"])]
    assert report.findings == []


def test_blame_after_our_safety_refusal_is_set_aside_and_dropped() -> None:
    report = _judge(
        _session(
            _step(0, "form: textbox 'Email address'; button 'Get the guide'", action="goto"),
            _step(
                1,
                "form: textbox 'Email address'",
                action="fill",
                target="Email address",
                says=("The form is broken.",),
            ),
        )
    )
    assert [a.reason for a in report.set_aside] == ["safety"]
    assert report.findings == []
    assert _quotes(report) == {"The form is broken.": "dropped"}


def test_a_gate_is_the_environment_not_the_product() -> None:
    report = _judge(
        _session(_step(0, "Access denied", action="goto", target="", status=403)),
        _session(
            _step(0, "Checking your browser before you continue", action="goto", target=""),
            user="u2",
        ),
    )
    assert report.findings == []
    assert [(a.reason, a.users) for a in report.set_aside] == [
        ("environment", ["u1"]),
        ("environment", ["u2"]),
    ]


def test_a_recorded_server_error_is_published_with_its_quote_kept() -> None:
    report = _judge(
        _session(
            _step(0, "link 'Download invoice'", action="goto", target=""),
            _step(
                1,
                "We are sorry",
                path="/invoice/file",
                target="Download invoice",
                status=500,
                says=("The download failed.",),
            ),
        )
    )
    assert [(f.claim_scope, f.evidence.users) for f in report.findings] == [
        ("product_behavior", ["u1"])
    ]
    assert "Download invoice" in report.findings[0].headline
    assert _quotes(report) == {"The download failed.": "kept"}


def test_new_error_text_is_published_and_old_error_text_is_not() -> None:
    fresh = _judge(
        _session(
            _step(0, "button 'Apply discount'", action="goto", target=""),
            _step(
                1, "button 'Apply discount'; text 'Something went wrong.'", target="Apply discount"
            ),
        )
    )
    assert ["Apply discount" in f.headline for f in fresh.findings] == [True]
    standing = _judge(
        _session(
            _step(0, "text 'Payment failed last time'", action="goto", target=""),
            _step(1, "text 'Payment failed last time'", action="hover", target="Apply discount"),
        )
    )
    assert standing.findings == []


def test_absence_needs_three_pages() -> None:
    claim = "There is no phone number anywhere."
    short = _judge(_session(_step(0, "Home", action="goto", target="", says=(claim,))))
    assert _quotes(short) == {claim: "dropped"}
    long = _judge(
        _session(
            _step(0, "Home", action="goto", target=""),
            _step(1, "About", path="/about", target="About"),
            _step(2, "Contact", path="/contact", target="Contact", says=(claim,)),
        )
    )
    assert _quotes(long) == {claim: "kept"}


def test_stale_narration_finds_no_support() -> None:
    report = _judge(
        _session(
            _step(0, "Basket: 2 items", action="goto", target=""),
            _step(1, "Basket: 3 items", target="Add"),
            _step(
                2,
                "Checkout",
                path="/checkout",
                target="Checkout",
                says=("The basket has 2 items.", "The basket has 3 items."),
            ),
        )
    )
    assert _quotes(report) == {
        "The basket has 2 items.": "dropped",
        "The basket has 3 items.": "kept",
    }


def test_one_cause_met_by_two_users_is_one_finding_and_judging_is_deterministic() -> None:
    def one(user: str) -> RecordedSession:
        return _session(
            _step(0, "link 'Download invoice'", action="goto", target=""),
            _step(1, "We are sorry", target="Download invoice", status=502),
            user=user,
        )

    report = _judge(one("u1"), one("u2"))
    assert [f.evidence.users for f in report.findings] == [["u1", "u2"]]
    assert _judge(one("u1"), one("u2")).wire() == report.wire()
    assert report.usage == []


def test_a_click_that_changes_nothing_is_published_and_supports_nothing_happened() -> None:
    claim = "Nothing happened when I clicked Place order."
    dead = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(1, BASKET, says=(claim,)),
        )
    )
    assert _quotes(dead) == {claim: "kept"}
    assert ["Place order" in f.headline for f in dead.findings] == [True]
    moved = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(1, THANKS, path="/thanks", says=(claim,)),
        )
    )
    assert _quotes(moved) == {claim: "dropped"}
    assert moved.findings == []


def test_a_result_that_comes_after_a_wait_clears_the_click() -> None:
    report = _judge(
        _session(
            _step(0, BASKET, action="goto", target=""),
            _step(1, BASKET),
            _step(2, BASKET + "; text 'Order 58213 confirmed'", action="wait", target=""),
        )
    )
    assert report.findings == []


def test_a_refusal_recorded_as_a_miss_is_still_safety() -> None:
    report = _judge(_session(_step(0, "form", action="refuse", target="Upload CV", hand="missed")))
    assert [a.reason for a in report.set_aside] == ["safety"]


def test_the_engine_meets_the_protocol() -> None:
    assert isinstance(HeuristicEngine({}), AttributionEngine)
    assert HeuristicEngine({"no_effect_wait_s": 2}).settings.no_effect_wait_s == 2


def test_a_status_carried_over_from_one_navigation_is_published_once() -> None:
    report = _judge(
        _session(
            _step(0, "link 'Download invoice'", action="goto", target=""),
            _step(1, "We are sorry", target='link "Download invoice"', status=500),
            _step(2, "We are sorry", action="hover", target='button "Help"', status=500),
            _step(3, "We are sorry", action="scroll", target="", status=500),
        )
    )
    assert [f.headline for f in report.findings] == [
        "'link \"Download invoice\"' fails with a server error"
    ]


def test_a_hover_over_an_upload_field_is_where_our_safety_rule_refuses() -> None:
    report = _judge(
        _session(
            _step(0, "Apply", action="goto", target=""),
            _step(1, "Apply", action="hover", target='button "Upload your CV"'),
            _step(2, "Apply", action="hover", target='button "Read more"'),
        )
    )
    assert [(a.reason, a.summary) for a in report.set_aside] == [
        ("safety", "Our safety rule refused 'button \"Upload your CV\"' (step 1).")
    ]
