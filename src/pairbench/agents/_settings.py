"""Adapter settings: each adapter declares a frozen model, checked by ``pairbench check``.

**Usage**::

    class MySettings(AdapterSettings):
        model: str
        max_turns: int = 20

    class MyAgent:
        Settings = MySettings
        def __init__(self, settings): self.settings = MySettings.parse(settings)

``settings_problems(MyAgent, raw)`` lists what is wrong with ``raw`` as (path inside
``settings``, message, fix), which ``pairbench check`` reports with the file's line numbers;
``parse`` raises the same problems as a ``SpecError``. No adapter checks its settings any
other way.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ValidationError

from pairbench._errors import SpecError
from pairbench._model import Frozen

Found = tuple[tuple[str | int, ...], str, str]


class AdapterSettings(Frozen):
    """Base of every adapter's settings model: frozen, unknown keys refused."""

    example: ClassVar[str] = ""
    """Valid settings, shown in the fix of a bad value (e.g. ``{model: sonnet}``)."""

    @classmethod
    def parse(cls, settings: Mapping[str, Any] | None) -> Self:
        """Validate ``agent.settings``; a bad value raises ``SpecError`` naming it and the fix."""
        try:
            return cls.model_validate(dict(settings or {}))
        except ValidationError as exc:
            problems = [
                f"agent.settings.{'.'.join(map(str, where)) or '(all)'}: {message}. Fix: {fix}"
                for where, message, fix in explain(cls, exc)
            ]
            raise SpecError(problems) from None


def explain(model: type[BaseModel], exc: ValidationError) -> list[Found]:
    """Each validation error as (path inside settings, message, fix), allowed keys named."""
    allowed = sorted(model.model_fields)
    example = str(getattr(model, "example", "") or "")
    where_fix = (
        f"fix it in experiment.yaml (e.g. settings: {example})"
        if example
        else ("fix it in experiment.yaml")
    )
    out: list[Found] = []
    for err in exc.errors():
        where = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            key = str(where[-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            fix = f"{hint}allowed keys: {', '.join(allowed)}"
            out.append((where, f"unknown setting '{key}'", fix))
        elif err["type"] == "missing":
            field = model.model_fields.get(str(where[0])) if where else None
            about = f" ({field.description})" if field is not None and field.description else ""
            out.append((where, "is required", f"set it{about}; {where_fix}"))
        else:
            out.append((where, str(err["msg"]), where_fix))
    return out


def settings_model(adapter: type) -> type[BaseModel] | None:
    """The adapter class's declared settings model (``Settings``), if it has one."""
    model = getattr(adapter, "Settings", None)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def settings_problems(adapter: type, settings: Any) -> list[Found]:
    """What is wrong with ``settings`` for ``adapter`` (empty: fine, or no model declared)."""
    model = settings_model(adapter)
    if model is None:
        return []
    if not isinstance(settings, Mapping):
        return [((), "must be a mapping", "write settings as 'key: value' lines")]
    try:
        model.model_validate(dict(settings))
    except ValidationError as exc:
        return explain(model, exc)
    return []
