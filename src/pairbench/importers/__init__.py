"""Importers: trials another harness ran (Inspect AI, lm-evaluation-harness, promptfoo, any
per-sample table) turned into a pairbench run folder. See ``_base`` for the plugin contract."""

from pairbench._errors import ImportRefused
from pairbench.importers._base import (
    Importer,
    ImportOutcome,
    ImportSettings,
    LogFacts,
    Measured,
    SampleRecord,
    aware,
    iter_jsonl,
    sha256_of,
    sha256_text,
)
from pairbench.importers._inspect import InspectImporter, InspectSettings
from pairbench.importers._lm_eval import LmEvalImporter, LmEvalSettings
from pairbench.importers._promptfoo import PromptfooImporter, PromptfooSettings
from pairbench.importers._table import TableImporter, TableSettings

__all__ = [
    "ImportOutcome",
    "ImportRefused",
    "ImportSettings",
    "Importer",
    "InspectImporter",
    "InspectSettings",
    "LmEvalImporter",
    "LmEvalSettings",
    "LogFacts",
    "Measured",
    "PromptfooImporter",
    "PromptfooSettings",
    "SampleRecord",
    "TableImporter",
    "TableSettings",
    "aware",
    "iter_jsonl",
    "sha256_of",
    "sha256_text",
]
