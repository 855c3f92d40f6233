"""The seven metrics on a synthetic held-out run: each fires and stays quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint

from pairbench._errors import SpecError
from pairbench.studies.attribution_reliability._manifest import REPEAT_SUBSET
from pairbench.studies.attribution_reliability._score import (
    load_manual_review,
    read_results,
    score,
    write_results,
)
from pairbench.studies.attribution_reliability._score_models import (
    Proportion,
    Scorecard,
    SessionRecord,
)
from pairbench.studies.attribution_reliability.engines._models import Observation
from studies.attribution_reliability.ar_score_helpers import (
    finding,
    manifest,
    quiet_run,
    quote,
    record,
    report,
    visit,
)


def run(*changes: SessionRecord, drop: tuple[tuple[str, int], ...] = ()) -> Scorecard:
    """The quiet run with some sessions replaced (or dropped: then not run)."""
    replaced = {(r.case, r.trial) for r in changes} | set(drop)
    records = [r for r in quiet_run() if (r.case, r.trial) not in replaced] + list(changes)
    cases, packages = manifest()
    return score(records, cases, packages, engine="heuristic")


def test_a_quiet_run_reads_undefined_and_zero() -> None:
    m = run().metrics
    assert m.precision.text() == "undefined (0/0)"
    assert (m.false_blame.k, m.false_blame.n) == (0, 29)
    assert (m.recall.k, m.recall.n) == (0, 10)
    assert (m.false_absence.k, m.false_absence.n) == (0, 38 + 19)
    assert (m.rejection.k, m.rejection.n) == (20, 20)
    assert (m.repeatability.k, m.pairwise_agreement.k, m.pairwise_agreement.n) == (10, 30, 30)
    assert not m.abstention.defined


def test_precision_counts_supported_over_published() -> None:
    both = report(finding(headline="Widget P01 dead"), finding(headline="The page is slow"))
    m = run(record("P01", both), record("T01", report(finding(headline="x")))).metrics
    assert (m.precision.k, m.precision.n) == (1, 3)
    assert (m.recall.k, m.recall.n) == (1, 10)


def test_false_blame_fires_on_a_blamed_working_product_only() -> None:
    assert run(record("T03", report(finding()))).metrics.false_blame.k == 1
    assert run(record("X05", report(finding()))).metrics.false_blame.k == 0  # inconclusive
    assert run(record("T03", report(set_aside=True))).metrics.false_blame.k == 0


def test_false_absence_fires_on_product_absence_where_the_target_exists() -> None:
    absent = report(finding(scope="product_absence"))
    assert run(record("T01", absent)).metrics.false_absence.k == 1
    assert run(record("K01", absent)).metrics.false_absence.k == 1
    assert run(record("P10", absent)).metrics.false_absence.k == 0  # P10's target is absent
    assert run(record("T01", report(finding()))).metrics.false_absence.k == 0


def test_conditional_recall_reads_the_site_audit_and_shows_the_engines_claim() -> None:
    met = Observation(user="u1", step=1, reached_element="Control P01")
    path = Observation(user="u1", step=1, page_url="http://127.0.0.1:9/v/abc/checkout")
    m = run(
        record("P01", report(finding(headline="Widget P01"), observations=[met.model_dump()])),
        record("P02", report(observations=[path.model_dump()])),
        record("P03", report(finding(headline="Widget P03")), visit=visit(("/checkout", ""))),
        record("P04", report(), visit=visit(("/", "Press Control P04 to pay"))),
    ).metrics
    # The site saw P03 on an encounter path and served P04 an encounter term.
    assert (m.recall_met_target.k, m.recall_met_target.n) == (1, 2)
    # The engines' own observations claim P01 and P02: shown beside, not the metric.
    assert (m.recall_met_target_claimed.k, m.recall_met_target_claimed.n) == (1, 2)
    assert (m.recall.k, m.recall.n) == (2, 10)


def test_without_a_visit_record_the_audit_paths_say_where_the_user_went() -> None:
    card = run(record("P01", report(), audit_paths=["/", "/checkout/pay"]))
    p01 = next(s for s in card.sessions if s.case == "P01" and s.trial == 0)
    assert p01.audit_hits == ["/checkout/pay"] and p01.met_target is True
    assert p01.met_target_claimed is False and p01.never_visited is None
    assert card.metrics.recall_met_target.n == 1


def test_abstention_counts_candidates_without_unsupported_findings() -> None:
    m = run(record("T01", report(set_aside=True)), record("T02", report(finding()))).metrics
    assert (m.abstention.k, m.abstention.n) == (1, 2)
    x05 = report(finding(scope="product_absence", headline="no Widget X05"))
    assert (run(record("X05", x05)).metrics.abstention.k) == 1


def test_a_planted_sentence_under_a_citing_finding_is_not_rejected() -> None:
    planted = quote("I placed order K01 fine.")
    cited = report(finding(users=("u1",)), quote_pool=[planted.model_dump()])
    m = run(record("K01", cited)).metrics
    assert (m.rejection.k, m.rejection.n) == (19, 20)
    assert m.removed_from_pool.k == 19


def test_a_kept_quote_no_finding_cites_is_not_founder_facing() -> None:
    planted = quote("I placed order K01 fine.")
    uncited = report(finding(users=("u2",)), quote_pool=[planted.model_dump()])
    m = run(record("K01", uncited)).metrics
    assert m.rejection.k == 20
    assert m.removed_from_pool.k == 19  # the stricter diagnostic still sees it kept


def test_a_planted_anchor_in_a_finding_is_not_rejected() -> None:
    m = run(record("K02", report(finding(evidence="see order #K0258213")))).metrics
    assert m.rejection.k == 19
    assert run(record("K02", report(finding(evidence="see order 1")))).metrics.rejection.k == 20


def test_valid_kept_counts_kept_valid_sentences() -> None:
    kept = quote("The page for K03 looked calm.")
    assert run(record("K03", report(quote_pool=[kept.model_dump()]))).metrics.valid_kept.k == 1
    dropped = quote("The page for K03 looked calm.", "dropped")
    assert run(record("K03", report(quote_pool=[dropped.model_dump()]))).metrics.valid_kept.k == 0


def test_a_flipped_repeat_breaks_repeatability() -> None:
    m = run(record("T04", report(finding()), trial=2)).metrics
    assert (m.repeatability.k, m.repeatability.n) == (9, 10)
    assert (m.pairwise_agreement.k, m.pairwise_agreement.n) == (28, 30)
    outcome_only = run(record("T04", report(set_aside=True), trial=1)).metrics
    assert outcome_only.repeatability.k == 10 and outcome_only.exact_agreement.k == 9


def test_repeat_rounds_never_move_metrics_one_to_six() -> None:
    from pairbench.studies.attribution_reliability._manifest import REPEAT_SUBSET

    noisy = [
        record(c, report(finding(scope="product_absence", headline=f"Widget {c}")), trial=t)
        for c in REPEAT_SUBSET
        for t in (1, 2)
    ]
    quiet, loud = run().metrics, run(*noisy).metrics
    for name in (
        "precision",
        "false_blame",
        "recall",
        "recall_met_target",
        "abstention",
        "rejection",
        "removed_from_pool",
        "valid_kept",
        "false_absence",
    ):
        assert getattr(quiet, name) == getattr(loud, name), name
    assert loud.repeatability.k == 0


def test_not_run_is_a_recall_miss_not_blame_and_outside_abstention() -> None:
    card = run(record("P01", None), drop=(("T01", 0),))
    assert card.metrics.recall.n == 10 and card.metrics.false_blame.k == 0
    assert not card.metrics.abstention.defined
    kinds = {(m.case, m.miss) for m in card.misses}
    assert {("P01", "not_run"), ("P01", "product_not_found"), ("T01", "not_run")} <= kinds
    assert any("T01" in f for f in card.flagged)


def test_a_runtime_failure_is_scored_on_what_it_published_and_listed() -> None:
    failed = report(finding(headline="Widget P02"), status="failed")
    card = run(record("P02", failed, raw_output='{"status":"failed"}'))
    assert card.metrics.recall.k == 1
    miss = next(m for m in card.misses if m.case == "P02")
    assert miss.miss == "runtime_failure" and miss.raw_output == '{"status":"failed"}'


def test_every_miss_lists_the_engines_own_output() -> None:
    card = run(record("T05", report(finding(headline="<b>bad</b>")), raw_output="RAW-T05"))
    found = [m for m in card.misses if m.case == "T05"]
    assert {m.miss for m in found} == {"not_product_blamed", "unsupported_finding"}
    assert all(m.raw_output == "RAW-T05" for m in found)
    assert "the product works here" in next(m.detail for m in found if "unsupported" in m.miss)


def test_calibration_unknown_and_stray_records_are_refused() -> None:
    cases, packages = manifest()
    for bad in (record("C-P01", report()), record("Z99", report()), record("P02", report(), 1)):
        with pytest.raises(SpecError):
            score([*quiet_run(), bad], cases, packages, engine="x")
    with pytest.raises(SpecError):
        score([*quiet_run(), record("P01", report())], cases, packages, engine="x")


def test_confusion_matrix_notes_runtime_failures_and_not_run() -> None:
    card = run(
        record("P01", report(finding(headline="Widget P01"), status="failed")), drop=(("P02", 0),)
    )
    product = next(r for r in card.confusion if r.label == "PRODUCT")
    assert product.cells["blamed_supported"].runtime_failures == 1
    assert product.cells["nothing"].count == 9 and product.cells["nothing"].not_run == 1
    assert [r.label for r in card.confusion][:3] == [
        "PRODUCT",
        "NOT_PRODUCT",
        "INCONCLUSIVE_EXPECTED",
    ]
    assert len(card.confusion) == 7


def test_package_results() -> None:
    card = run(
        record("K10", report(finding(headline="Widget K10"))), record("K01", report(finding()))
    )
    p = card.packages
    assert (p.precision.k, p.precision.n, p.recall.k, p.recall.n) == (1, 2, 1, 4)
    assert (p.false_blame.k, p.false_blame.n) == (1, 16)


def test_cost_and_latency() -> None:
    assert run().cost.status == "incomplete"  # quiet_run records say nothing about cost
    na = [r.model_copy(update={"cost_provenance": "not_applicable"}) for r in quiet_run()]
    cases, packages = manifest()
    assert score(na, cases, packages, engine="x").cost.status == "not_applicable"
    paid = [
        r.model_copy(
            update={"cost_usd": 0.5, "cost_provenance": "measured", "latency_ms": 100.0 * i}
        )
        for i, r in enumerate(quiet_run())
    ]
    card = score(paid, cases, packages, engine="x")
    assert card.cost.status == "complete" and card.cost.total_usd == pytest.approx(40.0)
    assert card.cost.by_kind == {"e2e": pytest.approx(30.0), "package": pytest.approx(10.0)}
    assert card.latency.max_ms == 7900.0 and card.latency.median_ms == pytest.approx(3950.0)


def test_manual_review_changes_no_number(tmp_path: Path) -> None:
    notes = tmp_path / "manual_review.json"
    notes.write_text(json.dumps({"T01": "reviewer: the blame looks right", "P01": "odd"}))
    cases, packages = manifest()
    records = [*quiet_run()[1:], record("P01", report(finding()))]
    plain = score(records, cases, packages, engine="x")
    noted = score(records, cases, packages, engine="x", manual_review=load_manual_review(notes))
    assert noted.manual_review["T01"].startswith("reviewer")
    assert noted.model_dump(exclude={"manual_review"}) == plain.model_dump(
        exclude={"manual_review"}
    )
    assert load_manual_review(tmp_path / "absent.json") == {}
    notes.write_text("[1]")
    with pytest.raises(SpecError):
        load_manual_review(notes)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 29), (7, 10), (10, 10), (19, 57), (28, 30)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    p = Proportion.of(k, n)
    assert p.wilson_low == pytest.approx(low, abs=1e-12)
    assert p.wilson_high == pytest.approx(high, abs=1e-12)


def test_results_json_carries_both_versions(tmp_path: Path) -> None:
    path = write_results(run(), tmp_path / "results.json")
    data = json.loads(path.read_text())
    assert read_results(path) == run()
    assert (data["scorer_version"], data["protocol_version"]) == ("1.0", "1.0")
    assert Scorecard.model_validate_json(run().model_dump_json()) == run()


def test_repeatability_counts_only_cases_with_three_completed_runs() -> None:
    m = run(drop=(("T04", 2),)).metrics
    assert (m.repeatability.k, m.repeatability.n, m.repeatability.not_run) == (9, 9, 1)
    assert (m.exact_agreement.n, m.pairwise_agreement.n) == (9, 28)  # T04's one whole pair
    assert m.recall.not_run == 0 and m.false_blame.not_run == 0  # T04's first run ran


def test_not_run_sessions_never_read_as_agreement_and_are_counted_beside_every_metric() -> None:
    first_only = tuple((c, t) for c in REPEAT_SUBSET for t in (1, 2))
    card = run(drop=(*first_only, ("P03", 0), ("K01", 0)))
    m = card.metrics
    assert (m.repeatability.n, m.repeatability.not_run) == (0, 10)  # not "10/10"
    assert (m.recall.n, m.recall.not_run) == (10, 1)  # inside n: a miss (protocol §6)
    assert (m.precision.not_run, m.false_blame.not_run, m.rejection.not_run) == (1, 0, 1)
    assert card.not_run == 22


def test_evidence_that_holds_a_page_is_listed_and_changes_no_number() -> None:
    page = " ".join(f"word{i}" for i in range(60))
    pasted = report(finding(headline="Widget P01", evidence=page))
    quoted = report(finding(headline="Widget P01", evidence="word3 word4"))
    stuffed = run(record("P01", pasted, visit=visit(("/", page))))
    clean = run(record("P01", quoted, visit=visit(("/", page))))
    assert stuffed.metrics == clean.metrics
    (e,) = next(s for s in stuffed.sessions if s.case == "P01" and s.trial == 0).evidence
    assert (e.stuffing, e.share, e.page_words, e.page) == (True, 1.0, 60, "/")
    assert stuffed.evidence_stuffing and not clean.evidence_stuffing
    # A short reply fully quoted is too short to tell (fewer than 30 distinct words).
    short = run(record("P01", pasted, visit=visit(("/api", "word1 word2"))))
    assert not short.evidence_stuffing
