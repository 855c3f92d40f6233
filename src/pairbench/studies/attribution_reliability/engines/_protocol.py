"""What an in-process (``python``) engine implements; the ``python`` adapter runs it in a
worker subprocess, so its exceptions are the engine's runtime failures, never the runner's.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pairbench.studies.attribution_reliability.engines._models import EngineReport, EngineRequest


@runtime_checkable
class AttributionEngine(Protocol):
    """``module:Class``; the class is built with the arm's engine settings (a dict)."""

    def __init__(self, settings: dict[str, Any]) -> None: ...

    def scan(self, request: EngineRequest) -> EngineReport:
        """Browse ``request.start_url`` as each persona and report (``mode == "scan"``)."""
        ...

    def judge(self, request: EngineRequest) -> EngineReport:
        """Judge the recorded ``request.sessions`` (``mode == "judge"``); the site at
        ``start_url`` stays live, so a follow-up user may browse it."""
        ...
