"""``limits:`` and ``report:`` in the experiment file: hashed, and clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pairbench.spec import check_experiment, load_experiment

Write = Callable[..., Path]
Registry = dict[str, set[str]]

DECLARED = """\
limits:
  - One dataset cannot establish generality.
report:
  sections: [outcomes, fields, failures]
  plots: [success, fields]
"""


def test_limits_and_report_load_and_enter_the_hash(
    write: Write, valid: str, registry: Registry
) -> None:
    plain = load_experiment(write(valid), registry)
    declared = load_experiment(write(valid + DECLARED, "declared.yaml"), registry)
    exp = declared.experiment
    assert exp.limits == ["One dataset cannot establish generality."]
    assert exp.report.sections == ["outcomes", "fields", "failures"]
    assert exp.report.plots == ["success", "fields"]
    # Undeclared, neither is in the canonical form: older experiments keep their hash.
    dumped = plain.experiment.model_dump(mode="json")
    assert "limits" not in dumped and "report" not in dumped
    assert declared.canonical_hash != plain.canonical_hash


def test_an_unknown_plot_or_section_names_the_field_and_the_choices(
    write: Write, valid: str, registry: Registry
) -> None:
    text = valid + "report:\n  plots: [success, pie]\n  sections: [outcomes, outcomes]\n"
    problems = [(p.yaml_path, str(p)) for p in check_experiment(write(text), registry)]
    paths = [p for p, _ in problems]
    assert "report.plots[1]" in paths, problems
    plot = next(msg for p, msg in problems if p == "report.plots[1]")
    assert "'pie'" in plot and "task-heatmap" in plot
    twice = next(msg for p, msg in problems if p.startswith("report.sections"))
    assert "outcomes listed twice" in twice
