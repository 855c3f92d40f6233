"""The ``webmcp-vs-pdf`` study: statistics engine, reference answers, scorer, frozen PDF,
the WebMCP page and its site, the people's page and the offline scripted agent.

**Usage**::

    from pairbench.studies.webmcp_vs_pdf import STUDY, reference_answer, score_answer
    reference_answer()["overall"]["estimate"]   # REML pooled estimate, all 19 records
    score_answer(raw_answer_text).label          # '13/13', '9/13' or 'parse failure'
    STUDY.experiment_path                        # .../study/experiment.yaml
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pairbench.studies._study import ScoredAnswer, Study
from pairbench.studies.webmcp_vs_pdf._agent import WebMcpVsPdfScriptedAgent
from pairbench.studies.webmcp_vs_pdf._dataset import (
    BASELINE_VERSION,
    DATASET_PATH,
    METHODS_PATH,
    PDF_PATH,
    PDF_SHA256,
    PDF_WRITER_VERSION,
    STUDY_ROOT,
    Record,
    load_dataset,
)
from pairbench.studies.webmcp_vs_pdf._double import meta_reply
from pairbench.studies.webmcp_vs_pdf._engine import (
    EggerTest,
    EggerVariant,
    RandomEffectsFit,
    egger_test,
    fit_random_effects,
)
from pairbench.studies.webmcp_vs_pdf._reference import (
    EXCLUDED_RECORD,
    RuleOutcome,
    fit_dataset,
    reference_answer,
    rule_outcome,
)
from pairbench.studies.webmcp_vs_pdf._scorer import (
    EGGER_TOLERANCE,
    META_TOLERANCE,
    TOTAL_FIELDS,
    FieldScore,
    Score,
    grade_webmcp_answer,
    parse_answer,
    score_answer,
)

if TYPE_CHECKING:
    import typer


def _commands() -> typer.Typer:
    from pairbench.studies.webmcp_vs_pdf._cli import commands

    return commands()


def _score(raw: str) -> ScoredAnswer:
    from pairbench.studies.webmcp_vs_pdf._cli import score

    return score(raw)


STUDY = Study(
    name="webmcp-vs-pdf",
    title="Frozen PDF vs a WebMCP page in headless Chromium: one analysis prompt, 13 fields",
    root=STUDY_ROOT,
    cli=_commands,
    score=_score,
    double=meta_reply,
)


def build_pdf(path: Path | str) -> str:
    """Write the frozen PDF to ``path`` and return its SHA-256 (equal to ``PDF_SHA256``).

    Imports ``_pdf`` (and reportlab) only when called, so that
    ``python -m pairbench.studies.webmcp_vs_pdf._pdf OUT`` runs that module exactly once.
    """
    from pairbench.studies.webmcp_vs_pdf._pdf import build_pdf as build

    return build(path)


def build_page() -> str:
    """The frozen agent-facing page's text (``study/page/index.html`` holds these bytes).

    Imports ``_page`` only when called (it runs as ``python -m ..._page OUT``).
    """
    from pairbench.studies.webmcp_vs_pdf._page import build_page as build

    return build()


__all__ = [
    "BASELINE_VERSION",
    "DATASET_PATH",
    "EGGER_TOLERANCE",
    "EXCLUDED_RECORD",
    "META_TOLERANCE",
    "METHODS_PATH",
    "PDF_PATH",
    "PDF_SHA256",
    "PDF_WRITER_VERSION",
    "STUDY",
    "STUDY_ROOT",
    "TOTAL_FIELDS",
    "EggerTest",
    "EggerVariant",
    "FieldScore",
    "RandomEffectsFit",
    "Record",
    "RuleOutcome",
    "Score",
    "WebMcpVsPdfScriptedAgent",
    "build_page",
    "build_pdf",
    "egger_test",
    "fit_dataset",
    "fit_random_effects",
    "grade_webmcp_answer",
    "load_dataset",
    "parse_answer",
    "reference_answer",
    "rule_outcome",
    "score_answer",
]
