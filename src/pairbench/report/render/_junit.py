"""The JUnit XML of a run's declared decisions, for CI gates: one testcase per hypothesis.

A declared hypothesis (``hypotheses:`` in experiment.yaml) is the one thing a run judges
against a rule written down before it: ``equivalent`` inside a margin, or ``differs``
from 0. Declared ``comparisons`` get a p value but no rule, so they are no testcase.
The verdicts and their numbers are read from ``summary.json`` as ``pairbench report``
wrote it; nothing is recomputed. A hypothesis judged ``equivalent`` or ``differs`` passes;
``not shown equivalent`` or ``no difference shown`` is a ``<failure>``; ``not computed``
(too few usable pairs) is an ``<error>``, so a gate never passes on a decision it could
not make.

**Usage**::

    Path("decisions.xml").write_bytes(junit_xml(Path("runs/mcp-transports-...")))
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from pairbench._errors import ExportError
from pairbench.store._load_run import read_run_info
from pairbench.store._records import first_error
from pairbench.store._run_dir import RunDir

if TYPE_CHECKING:
    from pairbench.report.summary._schema import Summary
    from pairbench.report.summary._schema_hypotheses import HypothesisResult

PASSED = frozenset({"equivalent", "differs"})
"""Verdicts that meet the hypothesis's decision rule."""
NOT_COMPUTED = "not computed"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold, even escaped."""


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _g(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.6g}"


def _ci(ci: list[float] | None) -> str:
    return "n/a" if not ci else f"[{_g(ci[0])}, {_g(ci[1])}]"


def _left_out(h: HypothesisResult) -> str:
    drops = [(k, v) for k, v in h.dropped.model_dump().items() if v]
    if not drops:
        return ""
    return " (left out: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in drops) + ")"


def decision_message(h: HypothesisResult) -> str:
    """The verdict with its numbers: estimate, 95% interval, margin or 0, p, pairs used."""
    used = f"{h.n} of {h.pairs} pairs used{_left_out(h)}"
    if h.verdict == NOT_COMPUTED or (h.mean is None and h.rate is None):
        return f"{h.verdict}: {h.reason or 'no analysis recorded'}; {used}"
    passed = h.verdict in PASSED
    where = "inside" if passed else "not inside"
    unit = f" {h.unit}" if h.unit and h.unit != "proportion" else ""
    margin = ""
    if h.margin is not None:
        declared = h.margin.declared
        shown = f" ({declared} of {h.b}'s mean)" if h.margin.relative else ""
        margin = f"±{_g(h.margin.value)}{unit}{shown}"
    if h.rate is not None:
        r = h.rate
        return (
            f"{h.verdict}: {h.metric} rate {h.a} {_g(r.rate_a)} − {h.b} {_g(r.rate_b)} = "
            f"{_g(r.difference)}, 95% CI {_ci(r.ci95)} {where} {margin}; exact McNemar "
            f"p = {_g(r.mcnemar_exact_p)}; {used}"
        )
    assert h.mean is not None
    m = h.mean
    head = (
        f"{h.verdict}: mean difference {h.a} − {h.b} of {h.metric} = "
        f"{_g(m.mean_difference)}{unit}, 95% CI {_ci(m.ci95)}"
    )
    if h.kind == "difference":
        return (
            f"{head} {'excludes' if passed else 'includes'} 0; paired t p = {_g(m.p_value)}; {used}"
        )
    return f"{head} {where} {margin}; TOST p = {_g(m.tost_p)}; {used}"


def read_summary(run: Path) -> Summary:
    """``summary.json`` of a run, checked to be a summary of the journal as it is now.

    Raises ``ExportError`` when it is absent, not a summary, or built before the journal's
    last line (a gate must not read stale verdicts).
    """
    run_dir = RunDir.open(run)
    path = run_dir.path / "summary.json"
    fix = f"Fix: run `pairbench report {run_dir.path}`"
    if not path.is_file():
        raise ExportError(f"{path}: no summary.json, which holds the verdicts. {fix} first")
    from pairbench.report.summary._schema import SCHEMA_ID, Summary  # the report's model: on use

    try:
        summary = Summary.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise ExportError(
            f"{path}: not a {SCHEMA_ID} summary ({first_error(exc)}). {fix} to rebuild it"
        ) from None
    except OSError as exc:
        raise ExportError(f"{path}: cannot read it ({exc.strerror or exc}). {fix}") from None
    head = run_dir.journal_head()
    built = summary.run.journal_head
    if built is not None and built != head:
        raise ExportError(
            f"{path}: built from journal head {built}, but the journal is now at {head}, so "
            f"its verdicts are stale. {fix} to judge the run as it is"
        )
    return summary


def no_decision_rule(run: Path) -> str:
    """Why there is nothing to gate on, and how to declare a decision rule."""
    return (
        f"{run}: no declared comparison has a decision rule, so there is nothing to gate on: "
        "the experiment declares no hypotheses (its `comparisons` get a p value, never a "
        "pass or fail). Fix: declare one under `hypotheses:` in experiment.yaml (kind "
        "equivalence with a margin, difference, or rate-equivalence; docs/experiment.md, "
        "Hypotheses) and start a new run: a run judges the hypotheses it recorded at its "
        "start, so a rule added later is not pre-registered"
    )


def junit_xml(run: Path) -> bytes:
    """The run's declared hypotheses as JUnit XML (``testsuites/testsuite/testcase``).

    Raises ``ExportError`` when the run declares no hypothesis (see :func:`no_decision_rule`)
    or its summary cannot be read (see :func:`read_summary`).

    **Usage**::

        xml = junit_xml(run_path)   # b"<?xml version='1.0' encoding='utf-8'?>\\n<testsuites ..."
    """
    # Refused from run.json first: with no rule declared, no report would give one.
    declared = (read_run_info(RunDir.open(run)).experiment_model or {}).get("hypotheses")
    if not declared:
        raise ExportError(no_decision_rule(run))
    summary = read_summary(run)
    if not summary.hypotheses:
        raise ExportError(no_decision_rule(run))
    info = summary.run
    experiment = info.experiment.id or "experiment"
    verdicts: list[str] = [h.verdict for h in summary.hypotheses]
    errors = verdicts.count(NOT_COMPUTED)
    failures = sum(v not in PASSED and v != NOT_COMPUTED for v in verdicts)
    counts = {
        "tests": str(len(verdicts)),
        "failures": str(failures),
        "errors": str(errors),
        "skipped": "0",
    }
    suites = ET.Element("testsuites", {"name": "pairbench", **counts})
    suite = ET.SubElement(suites, "testsuite", {"name": f"{experiment} hypotheses", **counts})
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", info.run_id),
        ("experiment", info.experiment.id),
        ("experiment_version", info.experiment.version),
        ("status", info.status),
        ("simulated", "true" if info.simulated else "false"),
        ("journal_head", info.journal_head),
        ("summary_schema", summary.schema_id),
    ):
        if value is not None:
            ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for h in summary.hypotheses:
        case = ET.SubElement(suite, "testcase", {"classname": experiment, "name": _clean(h.id)})
        message = _clean(decision_message(h))
        if h.verdict == NOT_COMPUTED:
            ET.SubElement(case, "error", {"message": message, "type": h.verdict}).text = message
        elif h.verdict not in PASSED:
            ET.SubElement(case, "failure", {"message": message, "type": h.verdict}).text = message
        described = (
            f"{h.id}: {h.text}\n{h.kind} of {h.metric} ({h.unit}), A = {h.a}, B = {h.b} "
            f"(reference), tasks: {h.where}\n{decision_message(h)}"
        )
        ET.SubElement(case, "system-out").text = _clean(described)
    ET.indent(suites)
    data: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
