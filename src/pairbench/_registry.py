"""Plugins by name, through entry points: built-ins register exactly as third parties do."""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Any, Literal, cast

from pairbench._errors import RegistryError

Group = Literal["agents", "graders", "fixtures", "engines", "studies", "importers", "cli_scripts"]


@cache
def _every_entry_point() -> EntryPoints:
    # One scan of the installed distributions for every group: each scan reads every
    # dist-info folder on sys.path (about 5 ms in a dev venv), and a run asks for four groups.
    # Python 3.11 returns a SelectableGroups, whose select() is EntryPoints' (the cast).
    return cast(EntryPoints, entry_points())


@cache
def _entry_points(group: Group) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in _every_entry_point().select(group=f"pairbench.{group}")}


def names(group: Group) -> list[str]:
    """Registered names in ``pairbench.<group>``, sorted."""
    return sorted(_entry_points(group))


def load(group: Group, name: str) -> Any:
    """The object registered as ``name`` in ``pairbench.<group>``.

    Raises ``RegistryError`` naming the known names when ``name`` is not registered.
    """
    return _entry_point(group, name).load()


def target(group: Group, name: str) -> str:
    """The ``module:attr`` that ``name`` is registered as in ``pairbench.<group>``, unloaded
    (what a worker process imports); ``RegistryError`` as ``load``."""
    return _entry_point(group, name).value


def _entry_point(group: Group, name: str) -> EntryPoint:
    found = _entry_points(group).get(name)
    if found is None:
        known = ", ".join(names(group)) or "none"
        raise RegistryError(
            f"no {group[:-1]} named {name!r} is registered (known: {known}); "
            f"install the package that provides it or fix the name"
        )
    return found


def module_of(group: Group, name: str) -> str:
    """The module the entry point ``name`` names (``pkg.mod`` of ``pkg.mod:OBJ``); raises
    ``RegistryError`` as :func:`load` does."""
    return _entry_point(group, name).module


def refresh() -> None:
    """Forget cached entry points (after installing a plugin in the same process)."""
    _every_entry_point.cache_clear()
    _entry_points.cache_clear()
