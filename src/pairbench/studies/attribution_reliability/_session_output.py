"""What a session's engine report becomes for the runner: the provider-refusal rule, the
session's cost (with its provenance), and the attempt's output and metrics."""

from __future__ import annotations

from typing import Any

from pairbench.agents._protocol import AgentOutput, InfraFailure
from pairbench.store._records import Metric
from pairbench.studies.attribution_reliability._session import SessionEvidence
from pairbench.studies.attribution_reliability._spend import WORST_CASE_ESTIMATOR
from pairbench.studies.attribution_reliability.engines._models import EngineReport


def provider_refused(report: EngineReport | None, signals: Any) -> None:
    """The protocol's infra rule for a model provider: an engine whose report says its
    provider refused authentication or quota (an error message starting ``auth:`` or
    ``quota:``) before any model call of the run succeeded is infrastructure, not the
    engine's failure. Any usage reported means a call succeeded: later refusals are the
    engine's runtime failures."""
    if report is None:
        return
    if report.usage:
        signals.model_call_succeeded = True
        return
    refused = [e.message for e in report.errors if e.message.startswith(("auth:", "quota:"))]
    if refused and not signals.model_call_succeeded:
        raise InfraFailure(f"the model provider refused before any call succeeded: {refused[0]}")


def declared_models(spec: Any) -> list[str]:
    """The models an engine declares: ``models:`` in its spec, or a registered engine's
    ``settings.model`` (the ``openai`` engine's)."""
    declared = [str(m) for m in spec.models.values()]
    model = spec.settings.get("model") if isinstance(spec.settings, dict) else None
    return declared + ([str(model)] if model else [])


def session_cost(
    report: EngineReport | None, models: list[str], worst_usd: float | None
) -> dict[str, Any]:
    """The session's cost and its provenance.

    An engine that declares a model (``models``) but reported no cost is charged the
    session's declared worst case (``worst_usd``: its task's ``cost_per_trial_usd``), not
    $0: its spend is unknown, and charging nothing would let it run the ceiling past its
    limit unseen. Only an engine that declares no model and reports no usage costs nothing.
    """
    costs = [u.cost_usd for u in report.usage] if report is not None else []
    if report is not None and costs and all(c is not None for c in costs):
        measured = all(u.provenance == "measured" for u in report.usage)
        return {
            "cost_usd": sum(c for c in costs if c is not None),
            "cost_provenance": "measured" if measured else "estimated",
        }
    if models and worst_usd is not None:
        return {"cost_usd": worst_usd, "cost_provenance": "worst_case"}
    if report is not None and not report.usage and not models:
        return {"cost_usd": None, "cost_provenance": "not_applicable"}  # model-free engine
    return {"cost_usd": None, "cost_provenance": "missing"}


def session_output(evidence: SessionEvidence, answer: str) -> AgentOutput:
    """The attempt's output: the session as its answer, the engine's usage and cost as
    metrics (measured, estimated, or charged at the worst case, said which)."""
    report = evidence.report
    usage = report.usage if report is not None else []
    tokens_in = sum(u.input_tokens for u in usage)
    tokens_out = sum(u.output_tokens for u in usage)
    no_model = "the engine reported no model usage"

    def count(value: int) -> Metric:
        return Metric.measured(value, "engine usage") if usage else Metric.missing(no_model)

    estimator = (
        f"{WORST_CASE_ESTIMATOR}: the engine declares a model but reported no cost"
        if evidence.cost_provenance == "worst_case"
        else "engine's own estimate"
    )
    cost = (
        Metric.measured(evidence.cost_usd, "engine usage")
        if evidence.cost_usd is not None and evidence.cost_provenance == "measured"
        else Metric(value=evidence.cost_usd, provenance="estimated", estimator=estimator)
        if evidence.cost_usd is not None
        else Metric.missing(no_model)
    )
    error = (
        None
        if evidence.failure is None
        else f"runtime failure ({evidence.failure.kind}): {evidence.failure.message}"
    )
    return AgentOutput(
        final_answer=answer,
        error=error,
        agent_ms=Metric.measured(evidence.latency_ms, "pairbench monotonic clock"),
        input_tokens=count(tokens_in),
        output_tokens=count(tokens_out),
        total_tokens=count(tokens_in + tokens_out),
        cost_usd=cost,
        models=tuple(u.model for u in usage),
    )
