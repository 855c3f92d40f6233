"""What the registered plugins say of an experiment: an agent's settings against its
adapter's model, a treatment surface the adapter cannot receive, a plugin name nobody
registered, and report names neither the core nor the named study knows."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from pairbench._registry import load
from pairbench.agents._settings import settings_problems
from pairbench.spec._report_spec import CORE_PLOTS, CORE_SECTIONS
from pairbench.spec._yaml import Found, Part, _get


def _adapter_class(registry: Mapping[str, Collection[str]], agent: Any) -> type | None:
    """The adapter class an agent entry names, when it is registered and loads."""
    name = _get(agent, ("adapter",))
    if not isinstance(name, str) or name not in registry.get("agents", ()):
        return None
    try:
        loaded = load("agents", name)
    except Exception:  # a plugin that cannot load is reported when the run starts
        return None
    return loaded if isinstance(loaded, type) else None


def _settings(
    registry: Mapping[str, Collection[str]], where: tuple[Part, ...], agent: Any
) -> Iterator[Found]:
    """The agent's ``settings`` against its adapter's declared settings model."""
    cls = _adapter_class(registry, agent) if isinstance(agent, dict) else None
    if cls is None:
        return
    for path, message, fix in settings_problems(cls, agent.get("settings") or {}):
        adapter = agent.get("adapter")
        yield (*where, "settings", *path), f"{adapter}: {message}", fix


_SURFACES = {
    "mcp": "MCP servers (tools.mcp)",
    "webmcp": "WebMCP pages (tools.webmcp)",
    "attachments": "attachments",
}


def _surfaces(
    registry: Mapping[str, Collection[str]], name: str, arm: Any, agent: Any
) -> Iterator[Found]:
    """An arm whose surface its adapter cannot receive would silently lose the treatment."""
    cls = _adapter_class(registry, agent)
    receives = getattr(cls, "receives", None)
    if cls is None or receives is None:
        return
    narrowed = getattr(cls, "receives_with", None)
    settings = _get(agent, ("settings",))
    if callable(narrowed) and isinstance(settings, dict):
        with contextlib.suppress(Exception):  # bad settings are reported by _settings
            receives = narrowed(settings)
    wanted: dict[str, tuple[Part, ...]] = {}
    tools = _get(arm, ("tools",))
    for kind in ("mcp", "webmcp"):
        if isinstance(tools, dict) and tools.get(kind):
            wanted[kind] = ("arms", name, "tools", kind)
    if _get(arm, ("attachments",)):
        wanted["attachments"] = ("arms", name, "attachments")
    adapter = _get(agent, ("adapter",))
    able = ", ".join(_SURFACES[k] for k in sorted(receives)) or "nothing"
    for kind, where in wanted.items():
        if kind not in receives:
            yield (
                where,
                f"the {adapter} agent cannot receive {_SURFACES[kind]}, so this arm would "
                "run without its treatment",
                f"use an adapter (or settings) that can: this one receives {able}",
            )


def _registered(
    registry: Mapping[str, Collection[str]], group: str, where: tuple[Part, ...], name: Any
) -> Iterator[Found]:
    if not isinstance(name, str) or group not in registry or name in registry[group]:
        return
    known = sorted(registry[group])
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'? The" if close else "the"
    fix = f"{hint} registered {group} are: {', '.join(known) or 'none'} (or install the plugin)"
    yield where, f"unknown {group[:-1].replace('agent', 'agent adapter')} '{name}'", fix


def _study_names(registry: Mapping[str, Collection[str]], study: Any) -> tuple[set[str], set[str]]:
    """The report sections and plots the named study adds (none when it is not registered
    or does not load: ``_registered`` and the run say so)."""
    if not isinstance(study, str) or study not in registry.get("studies", ()):
        return set(), set()
    from pairbench.studies import load_study

    try:
        report = load_study(study).report
    except Exception:  # a broken plugin is reported where it is used (the run, the report)
        return set(), set()
    if report is None:
        return set(), set()
    return set(report.section_names), set(report.plot_names)


def _report_names(registry: Mapping[str, Collection[str]], data: dict[str, Any]) -> Iterator[Found]:
    """``report.sections`` and ``report.plots``: each a core name or one the named study adds."""
    report = data.get("report")
    if not isinstance(report, dict):
        return
    sections, plots = _study_names(registry, data.get("study"))
    study = data.get("study")
    for key, core, own in (("sections", CORE_SECTIONS, sections), ("plots", CORE_PLOTS, plots)):
        listed = report.get(key)
        known = [*core, *sorted(own)]
        for i, name in enumerate(listed if isinstance(listed, list) else []):
            if not isinstance(name, str) or name in known:
                continue
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            whose = f"the core's and study {study}'s" if own else "the core's"
            if isinstance(study, str) and not own:
                whose += f" (study {study} adds none)"
            yield (
                ("report", key, i),
                f"unknown report {key[:-1]} '{name}'",
                f"{hint}{whose} {key} are: {', '.join(known)}",
            )


def adapter_hooks(
    experiment: Any, hook: str
) -> Iterator[tuple[str, dict[str, Any], Callable[..., Any]]]:
    """``(arm, settings, method)`` for each arm whose adapter class defines ``hook`` (a
    study's adapter saying what a run's lock must pin, or refusing a run it cannot hold to
    its protocol). An adapter that does not load is skipped: ``load_experiment`` and the
    run name it."""
    for arm in experiment.arms:
        agent = experiment.arm_agent(arm)
        try:
            cls = load("agents", agent.adapter)
        except Exception:
            continue
        method = getattr(cls, hook, None)
        if callable(method):
            yield arm, dict(agent.settings), method
