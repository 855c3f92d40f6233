"""Package exports imported on first use (PEP 562 module ``__getattr__``).

``import pairbench`` (and ``python -m pairbench run``) would otherwise build every stored
record's pydantic model, numpy and the report stack before doing anything: about half a
second on a small machine, most of a run's start-up. A package lists its exports as
``name -> module``; each module is imported when one of its names is first read, and the
value is then kept in the package's namespace (later reads are plain attribute reads).

**Usage** (in a package's ``__init__.py``)::

    __getattr__, __dir__ = lazy_exports(__name__, {"start_run": "pairbench.runner._api"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``exports`` (name -> module).

    A name not exported that is a subpackage or module of ``package`` (``pairbench.report``)
    is imported too, as ``import package.name`` would; anything else is an AttributeError.
    """

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        namespace = vars(sys.modules[package])
        if where is None:
            if name.startswith("__"):
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            try:
                value: Any = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise  # the submodule exists; something it imports does not
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        else:
            value = getattr(importlib.import_module(where), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
