"""Engines by name: the built-in adapters and whatever is registered under
``pairbench.engines`` (an adapter class, or an ``AttributionEngine`` class that the ``python``
adapter then runs in its worker). The entry points are read through ``pairbench._registry``
(one cache, one ``refresh``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pairbench import _registry
from pairbench._errors import RegistryError
from pairbench.studies.attribution_reliability.engines._adapter import EngineAdapter
from pairbench.studies.attribution_reliability.engines._command import CommandEngine
from pairbench.studies.attribution_reliability.engines._http import HttpEngine
from pairbench.studies.attribution_reliability.engines._python import PythonEngine
from pairbench.studies.attribution_reliability.engines._spec import EngineSpec

BUILTIN: dict[str, type[EngineAdapter]] = {
    "command": CommandEngine,
    "python": PythonEngine,
    "http": HttpEngine,
}
"""Also registered in pyproject.toml; kept here so that an install whose metadata predates
the ``pairbench.engines`` group (an editable checkout not reinstalled) still has them."""


class Resolved(NamedTuple):
    """What runs a spec: the adapter class and, for a registered engine class, its target."""

    adapter: type[EngineAdapter]
    target: str | None


def engine_names() -> list[str]:
    """Every engine name an arm may use, sorted."""
    return sorted(set(BUILTIN) | set(_registry.names("engines")))


def resolve(name: str) -> Resolved:
    """The adapter that runs engine ``name``; ``RegistryError`` lists the known names."""
    if name in BUILTIN:
        return Resolved(BUILTIN[name], None)
    # Checked here rather than by the registry: the known names include the built-ins.
    if name not in _registry.names("engines"):
        raise RegistryError(
            f"no engine named {name!r} is registered (known: {', '.join(engine_names())}); "
            "install the package that provides it or fix the name"
        )
    obj = _registry.load("engines", name)
    return classify(obj, target=_registry.target("engines", name), name=name)


def classify(obj: Any, *, target: str | None = None, name: str = "") -> Resolved:
    """An adapter class as itself; an ``AttributionEngine`` class as the ``python`` adapter
    with ``target`` (default: the class's own ``module:qualname``)."""
    engine_class = callable(getattr(obj, "scan", None)) and callable(getattr(obj, "judge", None))
    if isinstance(obj, type) and engine_class:
        return Resolved(PythonEngine, target or f"{obj.__module__}:{obj.__qualname__}")
    if isinstance(obj, type) and callable(getattr(obj, "run", None)):
        return Resolved(obj, None)
    raise RegistryError(
        f"the engine {name or obj!r} is registered as {obj!r}, which is neither an engine "
        "adapter class (run) nor an AttributionEngine class (scan, judge); fix its entry point"
    )


def build(spec: EngineSpec, *, hide: Sequence[Path] = ()) -> EngineAdapter:
    """The adapter instance for ``spec`` (a registered engine class becomes a worker);
    ``hide``: folders the local (contained) adapters keep out of their sandbox."""
    found = resolve(spec.engine)
    if found.target is not None:
        spec = spec.model_copy(update={"target": found.target})
    if found.adapter is CommandEngine or found.adapter is PythonEngine:
        return found.adapter(spec, hide=hide)
    return found.adapter(spec)
