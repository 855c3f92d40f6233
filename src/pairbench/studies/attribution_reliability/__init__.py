"""The ``attribution-reliability`` study: when an engine blames a product, is it deserved?

Engines (``engines``, registered under ``pairbench.engines``) browse label-free fixture sites
(``site``) as simulated users, or judge recorded evidence packages, and publish findings; the
scorer (version 1.0) measures whether the blame is deserved against ground truth in
``cases.json`` and ``packages.json``.

``pairbench init DIR --from attribution-reliability`` copies ``study/``; ``pairbench demo
--study attribution-reliability`` runs the calibration set with the heuristic reference
engine offline; ``pairbench study attribution-reliability plan`` projects the held-out run's
cost from calibration.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.studies._study import Study
from pairbench.studies.attribution_reliability._agent import AttributionAdapter
from pairbench.studies.attribution_reliability._double import attribution_reply
from pairbench.studies.attribution_reliability._grade import grade_attribution
from pairbench.studies.attribution_reliability.report import REPORT

if TYPE_CHECKING:
    import typer

    from pairbench.store._run_info import PriorSpend
    from pairbench.studies._study import RunStart


def _commands() -> typer.Typer:
    from pairbench.studies.attribution_reliability._cli import commands

    return commands()


def _before_run(start: RunStart) -> PriorSpend | None:
    from pairbench.studies.attribution_reliability._spend import before_run

    return before_run(start)


STUDY = Study(
    name="attribution-reliability",
    title="Is an engine's blame of a product deserved? 40 label-free sites, 20 packages, "
    "seven descriptive metrics",
    root=Path(__file__).parent / "study",
    report=REPORT,
    cli=_commands,
    double=attribution_reply,
    before_run=_before_run,
)

__all__ = ["STUDY", "AttributionAdapter", "grade_attribution"]
