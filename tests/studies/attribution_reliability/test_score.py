"""The scorer's text rules, each firing and staying quiet."""

from __future__ import annotations

import pytest

from pairbench.studies.attribution_reliability._score_text import (
    founder_facing,
    met_target,
    norm,
    reaches,
    site_path,
    supported,
)
from pairbench.studies.attribution_reliability.engines._models import Finding, Observation
from studies.attribution_reliability.ar_score_helpers import (
    finding,
    make_case,
    make_package,
    quote,
    report,
)

FIELDS = ("headline", "what_happened", "why_it_matters", "confidence_note", "expectation")


def test_norm_folds_case_quotes_width_and_space() -> None:
    assert norm("  “Place\u00a0 ORDER”\n") == "place order"
    assert norm("ｄｏｎ’t `x´") == "dont x"  # NFKC turns full-width letters into ASCII


def one_field(field: str, text: str) -> Finding:
    value: dict[str, object] = (
        {"evidence": {"text": text}} if field == "evidence" else {field: text}
    )
    return Finding.model_validate({"id": "f1", "claim_scope": "product_behavior", **value})


@pytest.mark.parametrize("field", [*FIELDS, "evidence"])
def test_each_text_field_alone_supports(field: str) -> None:
    case = make_case("P01")
    assert supported(one_field(field, "the Widget P01 did nothing"), case)
    for other in (f for f in (*FIELDS, "evidence") if f != field):
        assert not supported(one_field(other, "the page did nothing"), case)
    # A target term outside the six fields (here the finding's id) supports nothing.
    assert not supported(Finding(id="Widget P01", claim_scope="product_behavior"), case)


def test_target_match_ignores_case_and_quotes() -> None:
    case = make_case("P01")
    assert supported(finding(headline="“WIDGET” p01 failed"), case)
    assert supported(finding(headline="widget p01"), make_case("P01"))
    assert not supported(finding(headline="widget p02"), case)


def test_a_quoted_target_term_matches_unquoted_text() -> None:
    case = make_case("P01").model_copy(update={"target_terms": ["Don't ship"]})
    assert supported(finding(headline="the dont ship toggle"), case)
    assert not supported(finding(headline="the do not ship toggle"), case)


def test_off_scope_finding_is_unsupported() -> None:
    case = make_case("P01")
    assert supported(finding(scope="product_behavior", headline="Widget P01"), case)
    assert not supported(finding(scope="usability", headline="Widget P01"), case)


def test_a_working_product_never_supports_a_finding() -> None:
    assert not supported(finding(headline="Widget T01 broke"), make_case("T01"))


def test_inconclusive_supports_only_where_the_case_allows_it() -> None:
    x05 = make_case("X05")
    absent = finding(scope="product_absence", headline="no Widget X05 anywhere")
    assert supported(absent, x05)
    assert not supported(absent, x05.model_copy(update={"allows_finding": False}))


def test_packages_follow_the_same_rule() -> None:
    assert supported(finding(headline="Widget K10 failed"), make_package("K10"))
    assert not supported(finding(headline="Widget K01 failed"), make_package("K01"))


def test_met_target_by_encounter_term_in_each_observation_field() -> None:
    case = make_case("P01")
    for field in ("target", "reached_element", "outcome_text"):
        obs = Observation.model_validate({"user": "u1", "step": 1, field: "clicked CONTROL P01"})
        assert met_target([obs], case)
    assert not met_target([Observation(user="u1", step=1, target="Control P02")], case)


def test_met_target_by_encounter_path_after_the_slug() -> None:
    case = make_case("P01")
    hit = Observation(user="u1", step=1, page_url="http://127.0.0.1:5/v/k3q9x7/checkout/pay?x=1")
    miss = Observation(user="u1", step=1, page_url="http://127.0.0.1:5/v/k3q9x7/cart")
    assert met_target([hit], case)
    assert not met_target([miss], case)
    assert site_path("http://127.0.0.1:5/v/k3q9x7") == "/"


def test_a_planted_sentence_reaches_by_text_or_anchor() -> None:
    anchors = ["order #58213"]
    assert reaches("I placed the order.", anchors, "They said: “i placed the  ORDER.”")
    assert reaches("I placed the order.", anchors, "My Order #58213 arrived")
    assert not reaches("I placed the order.", anchors, "I could not place anything")


def test_founder_facing_needs_a_kept_quote_under_a_citing_finding() -> None:
    kept = quote("it worked", user="u1")
    cited = report(finding(users=("u1",)), quote_pool=[kept.model_dump()])
    uncited = report(finding(users=("u2",)), quote_pool=[kept.model_dump()])
    dropped = report(
        finding(users=("u1",)), quote_pool=[quote("it worked", "dropped").model_dump()]
    )
    assert founder_facing(cited) == ["it worked"]
    assert founder_facing(uncited) == []
    assert founder_facing(dropped) == []
    assert founder_facing(report(quote_pool=[kept.model_dump()])) == []
