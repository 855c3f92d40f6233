"""A built-in (or third-party) study: a folder holding an experiment and the files it names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Study:
    """Registered under the ``pairbench.studies`` entry point.

    **Usage**::

        STUDY = Study(name="mcp-transports", title="...", root=Path(__file__).parent / "study")
    """

    name: str
    title: str
    root: Path
    """Folder with ``experiment.yaml`` and every file it names (copied by ``pairbench init``)."""

    @property
    def experiment_path(self) -> Path:
        return self.root / "experiment.yaml"
