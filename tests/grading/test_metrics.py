"""Per-attempt metrics: the agent's usage split and turns pass through as reported."""

from pairbench.agents import AgentOutput
from pairbench.grading._metrics import compute_metrics
from pairbench.store import Metric, usage_metrics

USAGE_NAMES = (
    "input_tokens",
    "uncached_input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "total_tokens",
)


def test_usage_split_and_turns_are_kept_with_their_provenance() -> None:
    usage = usage_metrics(
        source="provider usage",
        total_input=1000,
        cache_read=600,
        cache_creation=Metric.missing("the provider does not report cache writes"),
        output=80,
    )
    output = AgentOutput(
        final_answer="42", turns=Metric.measured(4, "agent turns"), **usage._asdict()
    )
    m = compute_metrics(12.5, [], None, output)
    for name in USAGE_NAMES:
        assert getattr(m, name) == getattr(usage, name), name
    assert m.uncached_input_tokens.value == 400.0 and m.total_tokens.value == 1080.0
    assert m.cache_creation_input_tokens.reason == "the provider does not report cache writes"
    assert m.turns == Metric.measured(4, "agent turns")


def test_without_usage_or_without_an_agent_run_everything_is_missing() -> None:
    reported_nothing = compute_metrics(1.0, [], None, AgentOutput(final_answer="x"))
    never_ran = compute_metrics(1.0, [], None, None)
    for name in (*USAGE_NAMES, "turns"):
        for m, reason in (
            (reported_nothing, None),
            (never_ran, "the agent did not run"),
        ):
            metric = getattr(m, name)
            assert metric.provenance == "missing" and metric.value is None, name
            if reason:
                assert metric.reason == reason
    assert reported_nothing.total_tokens.reason == "no model usage reported"
