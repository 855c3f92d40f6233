"""``${env:NAME}`` values in an engine block, read from the runner's environment at the
moment a call starts (never stored: run.json and the lock keep the reference).

Two rules, written down in ``docs/engines.md``:

- ``env`` values (command, python, registered engines) are references only as a whole
  value: ``TOKEN: ${env:ENGINE_TOKEN}``.
- ``headers`` values (http engines) may hold references anywhere:
  ``Authorization: Bearer ${env:ENGINE_TOKEN}``. ``$${`` writes a literal ``${``. Any other
  ``${`` is malformed and refused when the spec is checked, before a run starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pairbench._errors import SpecError
from pairbench.spec._models import env_ref

_TEMPLATE = re.compile(r"\$\$\{|\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\$\{")
"""An escaped ``$${``, a reference, or (the last branch) a ``${`` that is neither."""
_FIX_SYNTAX = "write ${env:NAME} (NAME: letters, digits, _), or $${ for a literal ${"


def resolve_refs(
    values: Mapping[str, str], source: Mapping[str, str], field: str
) -> dict[str, str]:
    """``values`` with each whole ``${env:NAME}`` replaced by ``source[NAME]``.

    Raises ``SpecError`` naming ``engine.<field>.<key>`` and the fix when ``NAME`` is unset.

    >>> resolve_refs({"A": "${env:T}", "B": "x"}, {"T": "t0k"}, "env")
    {'A': 't0k', 'B': 'x'}
    """
    out: dict[str, str] = {}
    for key, value in values.items():
        name = env_ref(value)
        if name is not None and name not in source:
            raise SpecError(
                [
                    f"engine.{field}.{key}: '{value}' reads the runner's {name}, which is not "
                    f"set. Fix: export {name}=... before running."
                ]
            )
        out[key] = value if name is None else source[name]
    return out


def template_problems(values: Mapping[str, str], field: str) -> list[str]:
    """Every malformed ``${`` in ``values`` (references anywhere in a value), one line each.

    >>> template_problems({"Authorization": "Bearer ${env:TOKEN}"}, "headers")
    []
    >>> template_problems({"X": "${ENV:TOKEN}"}, "headers")  # doctest: +ELLIPSIS
    ["engine.headers.X: '${ENV:TOKEN}' has a malformed reference at character 1. Fix: ..."]
    """
    problems: list[str] = []
    for key, value in values.items():
        for found in _TEMPLATE.finditer(value):
            if found.group(0) == "${":
                problems.append(
                    f"engine.{field}.{key}: {value!r} has a malformed reference at character "
                    f"{found.start() + 1}. Fix: {_FIX_SYNTAX}"
                )
                break
    return problems


def template_names(value: str) -> list[str]:
    """The variables a header value reads, in order.

    >>> template_names("Bearer ${env:A}; ${env:B} $${env:C}")
    ['A', 'B']
    """
    return [m.group(1) for m in _TEMPLATE.finditer(value) if m.group(1)]


def resolve_templates(
    values: Mapping[str, str], source: Mapping[str, str], field: str
) -> dict[str, str]:
    """``values`` with every ``${env:NAME}`` inside them replaced by ``source[NAME]``.

    Raises ``SpecError`` listing every malformed reference and every unset variable, each
    naming ``engine.<field>.<key>`` and the fix.

    >>> resolve_templates({"Authorization": "Bearer ${env:T}", "X": "a$${b"}, {"T": "t0k"},
    ...                   "headers")
    {'Authorization': 'Bearer t0k', 'X': 'a${b'}
    """
    problems = template_problems(values, field)
    for key, value in values.items():
        for name in dict.fromkeys(template_names(value)):
            if name not in source:
                problems.append(
                    f"engine.{field}.{key}: {value!r} reads the runner's {name}, which is not "
                    f"set. Fix: export {name}=... before running."
                )
    if problems:
        raise SpecError(problems)

    def one(found: re.Match[str]) -> str:
        return "${" if found.group(1) is None else source[found.group(1)]

    return {key: _TEMPLATE.sub(one, value) for key, value in values.items()}
