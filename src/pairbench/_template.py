"""``${dotted.path}`` templates, filled from the trial's seeded values.

Prompts, plans and agent settings use the same syntax::

    render("Title of issue #${fixture.target.number}?", {"fixture": {"target": {"number": 7}}})
    # -> "Title of issue #7?"
    render("${fixture.target.number}", ...)   # a lone placeholder keeps its type -> 7

A path walks dict keys and list indexes (``${issue.labels.0}``). A missing path renders as
the empty string inside text and as ``None`` when alone, so a scrubbed variable stays absent.
"""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.\-]+)\}")
_MISSING = object()


def lookup(path: str, values: dict[str, Any]) -> Any:
    """The value at dotted ``path`` in ``values``, or ``None`` when any step is missing.

    >>> lookup("issue.labels.0", {"issue": {"labels": ["bug"]}})
    'bug'
    >>> lookup("issue.labels.5", {"issue": {"labels": ["bug"]}}) is None
    True
    """
    found = _walk(path, values)
    return None if found is _MISSING else found


def _walk(path: str, values: Any) -> Any:
    current: Any = values
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def render(template: Any, values: dict[str, Any]) -> Any:
    """Fill every ``${path}`` in ``template`` (strings, and recursively lists and dicts).

    >>> values = {"issue": {"number": 7, "labels": ["bug", "ui"]}}
    >>> render("Title of issue #${issue.number}?", values)
    'Title of issue #7?'
    >>> render("${issue.number}", values)  # a lone placeholder keeps its type
    7
    >>> render({"args": ["${issue.labels.1}", "[${issue.missing}]"], "n": 3}, values)
    {'args': ['ui', '[]'], 'n': 3}
    >>> render("${issue.missing}", values) is None  # alone, a missing path stays absent
    True
    """
    if isinstance(template, dict):
        return {key: render(item, values) for key, item in template.items()}
    if isinstance(template, list):
        return [render(item, values) for item in template]
    if not isinstance(template, str):
        return template
    whole = _PLACEHOLDER.fullmatch(template)
    if whole:
        return lookup(whole.group(1), values)

    def _one(match: re.Match[str]) -> str:
        found = _walk(match.group(1), values)
        return "" if found is _MISSING or found is None else str(found)

    return _PLACEHOLDER.sub(_one, template)
