"""What run.json records of an import (``imported``): the files, their hashes, the pairing."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from pairbench._model import Frozen
from pairbench.importers._base import LogFacts
from pairbench.importers._pairing import Pairing
from pairbench.importers._scores import ScoreDelta


class ImportedLog(Frozen):
    """One imported file and the arms it gave."""

    facts: LogFacts
    """What the file says about itself (harness, version, sha256, model, settings, ...)."""
    absolute_path: str
    """Where it was read from: ``pairbench verify`` re-hashes it there."""
    arms: dict[str, str]
    """The file's arm names (as it records them) to the run's arm ids."""
    created_vs_freeze: str | None = None
    """``before`` or ``after`` the analysis was frozen (by the file's own timestamp), or
    ``unknown``; None without a frozen analysis."""
    named_in_advance: bool | None = None
    """Whether the frozen analysis named this file before it was imported; None without one."""


class ImportRecord(Frozen):
    """run.json's ``imported``: the trials were run by another harness."""

    importer: str
    """The importer's name (``inspect``, ``table``, ...)."""
    logs: list[ImportedLog]
    """Each file, in the order given."""
    pairing: Pairing
    """What the pairing check found."""
    allowed_different_inputs: bool = False
    """``--allow-different-inputs`` was given: the differences in ``pairing`` were accepted."""
    primary_metric: str
    """The score that decided pass/fail."""
    analysis_file: str | None = None
    """The frozen analysis file (``--experiment``); None without one."""
    analysis_frozen_at: AwareDatetime | None = None
    """When the analysis (``--experiment``) was frozen, from its ledger; None without one."""
    analysis_sha256: str | None = None
    """The frozen analysis's lock hash; None without one."""
    imported_at: AwareDatetime
    """When the import ran (UTC)."""
    score_deltas: list[ScoreDelta] = Field(default_factory=list)
    """For a primary score that is not only 0/1: per comparison, the mean paired difference
    with a cluster-bootstrap interval."""
    vouch: list[str] = Field(default_factory=list)
    """What pairbench can and cannot vouch for, one sentence each (the report leads with it)."""
