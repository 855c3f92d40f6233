"""A study's own identity in the lock: its name, version and the hash of its package's tree.

pairbench's harness hash leaves the study folders out (``_hashing.HARNESS_SCOPE``), so each
lock pins the one study its experiment names: a change to one study's site or scorer
re-freezes that study's lock and no other's.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pairbench import _registry
from pairbench._model import Frozen
from pairbench.freeze._hashing import tree_sha256
from pairbench.studies import load_study


class LockedStudy(Frozen):
    """The study an experiment names (``study:``), as it was frozen."""

    name: str
    version: str
    """``Study.version``: the plugin's own version."""
    package: str
    """The Python package that registers it, whose folder is hashed."""
    sha256: str
    """``tree_sha256`` of that folder, recursively (``__pycache__`` and ``*.pyc`` left out)."""

    def describe(self) -> str:
        return f"{self.version} {self.sha256}"


def study_source(name: str) -> tuple[str, Path]:
    """(package, path) of the code that registers study ``name``: the folder of the package
    its entry point's module is in, or that module's file when it is a top-level module (a
    folder of site-packages is not the study's)."""
    module = importlib.import_module(_registry.module_of("studies", name))
    source = Path(module.__file__ or "").resolve()
    if hasattr(module, "__path__"):
        return module.__name__, source.parent
    package = module.__name__.rpartition(".")[0]
    return (package, source.parent) if package else (module.__name__, source)


def study_identity(name: str) -> LockedStudy:
    """The lock's record of study ``name`` as it is installed now."""
    study = load_study(name)
    package, path = study_source(name)
    if path.is_dir():
        digest = tree_sha256(path)
    else:  # a top-level module: its file alone
        digest = tree_sha256(path.parent, recursive=False, prune=lambda rel: rel != (path.name,))
    return LockedStudy(name=name, version=study.version, package=package, sha256=digest)
