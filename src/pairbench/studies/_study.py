"""A built-in (or third-party) study: a folder holding an experiment and the files it names."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pairbench._errors import PairbenchError


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
    commands: tuple[tuple[str, str], ...] = ()
    """Programs the study's servers run that pairbench does not ship, each with how to
    install it: ``(name, install hint)``. ``pairbench demo`` looks for them first."""
    prepare: Callable[[Path], str] | None = None
    """Run by ``pairbench init`` (and the demo) on the copied folder, to make what the
    experiment needs beside it (a git repository, say); returns a line saying what it made."""
    bin_dirs: tuple[Path, ...] = ()
    """Folders the study's set-up installs its programs into (a checkout's pinned npm
    folder, say): put before ``PATH`` when a program is not on it."""

    def find_commands(self) -> dict[str, str]:
        """``PATH`` with what the study needs on it: unchanged when every program is already
        there; else with the first ``bin_dirs`` folder that has it in front.

        Raises ``PairbenchError`` naming the program and its install command when no folder
        has it, before any run starts (a missing server is not a trial's failure).
        """
        path = os.environ.get("PATH", os.defpath)
        for name, hint in self.commands:
            if shutil.which(name, path=path):
                continue
            found = next((d for d in self.bin_dirs if (d / name).is_file()), None)
            if found is None:
                raise PairbenchError(
                    f"study {self.name}: the program {name!r} is not installed (not on PATH). "
                    f"Fix: {hint}"
                )
            path = f"{found}{os.pathsep}{path}"
        return {"PATH": path}

    @property
    def experiment_path(self) -> Path:
        return self.root / "experiment.yaml"
