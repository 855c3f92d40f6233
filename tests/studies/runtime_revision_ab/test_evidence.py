"""``scenario_evidence`` on hand-made results: coverage k/n, missing is missing, censoring,
completion classes and useful work per round."""

from __future__ import annotations

from pairbench.studies.runtime_revision_ab import ProviderRequest, ScenarioResult
from pairbench.studies.runtime_revision_ab._evidence import completion, scenario_evidence
from pairbench.studies.runtime_revision_ab._result import RoundState, Timing


def _request(n: int, usage: bool = True) -> ProviderRequest:
    return ProviderRequest(
        sha256=f"{n:064x}", seed=1, temperature=1.0, status=200,
        prompt_tokens=100 * n if usage else None, completion_tokens=10 if usage else None,
        n=n, prompt_chars=400 * n, max_tokens=1024, sent_ms=1000.0 + 100 * n,
        end_ms=1050.0 + 100 * n, reply_chars=40, generation_ms=20.0,
    )  # fmt: skip


def _result(requests: list[ProviderRequest], **changes: object) -> ScenarioResult:
    base: dict[str, object] = dict(
        scenario="AR-002", seed=1, status="done", exit_code=0, timed_out=False, passed=True,
        claim="done", failure_kind=None, events=None, delta=[], unauthorized=[],
        provider_requests=len(requests), requests=requests, obligations={"a": True, "b": True},
        leaked_processes=0, canary_leaks=0, duration_s=2.0,
        rounds=[RoundState(n=1, at_ms=1100.0, workspace_sha256="x", obligations_met=[]),
                RoundState(n=2, at_ms=1200.0, workspace_sha256="y", obligations_met=["a"]),
                RoundState(n=0, at_ms=1900.0, workspace_sha256="z",
                           obligations_met=["a", "b"])],
        timing=Timing(started_ms=1000.0, exited_ms=2000.0, acceptance_ms=30.0, cleanup_ms=2.0),
    )  # fmt: skip
    return ScenarioResult.model_validate({**base, **changes})


def test_a_response_without_usage_gives_coverage_nine_of_ten_not_zero() -> None:
    requests = [_request(n, usage=n != 7) for n in range(1, 11)]
    usage = scenario_evidence(_result(requests)).usage
    assert (usage.measured, usage.requests) == (9, 10)
    assert usage.input_measured == sum(100 * n for n in range(1, 11) if n != 7)
    # Estimated tokens cover every request and stay apart from the measured sum.
    assert usage.input_estimated == sum(400 * n // 4 for n in range(1, 11))
    assert usage.per_request[6] == (None, None)
    context = scenario_evidence(_result(requests)).context
    assert context.measured_input[6] is None and context.peak_measured == 1000


def test_no_requests_is_missing_usage_not_zero() -> None:
    usage = scenario_evidence(_result([], passed=False, claim=None, status="rejected",
                                      failure_kind="pre_inference_rejection")).usage  # fmt: skip
    assert (usage.requests, usage.measured, usage.input_measured) == (0, 0, None)


def test_without_events_self_reported_counts_are_missing() -> None:
    evidence = scenario_evidence(_result([_request(1), _request(2)]))
    assert evidence.events_present is False
    assert evidence.dispatch.executed is None and evidence.recovery.errors is None
    assert evidence.scope.denials is None and evidence.process.receipts is None
    # No events, so no fresh verifier evidence: a passing done claim is unsupported.
    assert evidence.completion == "unsupported_claim"


def test_rounds_count_new_artifacts_and_newly_satisfied_obligations() -> None:
    evidence = scenario_evidence(_result([_request(1), _request(2)]))
    assert [(r.round, r.artifact_version, r.newly_satisfied) for r in evidence.rounds] == [
        (1, True, 1), (2, True, 1)]  # fmt: skip
    # The first boundary at which every obligation held, from the start.
    assert evidence.latency.first_checked_answer_ms == 900.0
    assert evidence.latency.provider_wall_ms == 100.0
    assert evidence.latency.tool_stages_ms == 900.0


def test_a_timeout_is_censored_and_infra() -> None:
    result = _result([_request(1)], status="timeout", timed_out=True, exit_code=None,
                     passed=False, claim=None, failure_kind="infra")  # fmt: skip
    evidence = scenario_evidence(result)
    assert evidence.outcome == "infra" and evidence.latency.timed_out
    assert evidence.completion == "no_claim"


def test_completion_classes() -> None:
    assert completion(_result([], claim="incomplete", passed=False)) == "honest_incomplete"
    assert completion(_result([], claim="done", passed=False)) == "false_claim"
    assert completion(_result([], claim=None, passed=True)) == "no_claim"
