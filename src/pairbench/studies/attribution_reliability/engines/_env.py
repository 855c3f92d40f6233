"""``${env:NAME}`` values in an engine block, read from the runner's environment at the
moment a call starts (never stored: run.json and the lock keep the reference)."""

from __future__ import annotations

from collections.abc import Mapping

from pairbench._errors import SpecError
from pairbench.spec._models import env_ref


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
