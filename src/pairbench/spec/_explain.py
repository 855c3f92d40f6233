"""Turning pydantic validation errors into one-line problems with fixes."""

from __future__ import annotations

import difflib
import types
from collections.abc import Mapping
from typing import Any, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from pairbench.spec._models import Experiment, McpServer
from pairbench.spec._yaml import LineMap, Part, Problem, _get, format_path

_SCALARS = frozenset({"str", "int", "float", "bool"})
"""Union branches (as pydantic names them) that take a scalar, not a mapping."""


class _Loc(NamedTuple):
    parts: tuple[Part, ...]
    owner: type[BaseModel] | None
    """The model whose field the last part names (for "did you mean")."""
    branch: str | None
    """The union branch pydantic tried, e.g. ``literal['none']`` or ``Tools``."""
    target: Any
    """The type at the location (the model, for a model validator's error)."""
    union_at: tuple[Part, ...]
    """The path of the union value, when ``branch`` is set."""
    mapping_allowed: bool = False
    """The union has a model branch: a mapping is one of the shapes it takes."""


def _resolve_loc(loc: tuple[Part, ...]) -> _Loc:
    """Where a pydantic error location points, walking the models' annotations."""
    parts: list[Part] = []
    tp: Any = Experiment
    owner: type[BaseModel] | None = None
    branch: str | None = None
    union_at: tuple[Part, ...] = ()
    mapping = False
    for comp in loc:
        args = get_args(tp)
        if get_origin(tp) in (Union, types.UnionType):
            members = [a for a in args if a is not type(None)]
            tags = {getattr(m, "__name__", "") for m in members}
            if isinstance(comp, str) and (comp.startswith("literal[") or comp in tags):
                branch, union_at = comp, tuple(parts)
                mapping = any(isinstance(m, type) and issubclass(m, BaseModel) for m in members)
                tp = next((m for m in members if getattr(m, "__name__", "") == comp), None)
                continue
            tp = members[0] if len(members) == 1 else None
            args = get_args(tp)
        if comp == "[key]":
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            owner, field = tp, tp.model_fields.get(str(comp))
            tp = field.annotation if field is not None else None
        else:
            owner = None
            tp = args[-1] if get_origin(tp) in (dict, list, tuple) and args else None
        parts.append(comp)
    return _Loc(tuple(parts), owner, branch, tp, union_at, mapping)


def _num(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else repr(value)


_TYPE_FIX = {
    "int": "use a whole number",
    "float": "use a number",
    "bool": "use true or false",
    "string": "use text (quote it, e.g. '1.0', if it looks like a number)",
    "dict": "use a mapping (key: value)",
    "model": "use a mapping (key: value)",
    "list": "use a list",
    "tuple": "write it as a pair of arm names, e.g. [arm-a, arm-b]",
    "finite": "use a finite number (not .inf or .nan)",
}
_BOUNDS = {
    "greater_than": ("greater than", "gt"),
    "greater_than_equal": ("at least", "ge"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}


def _explain(err: Mapping[str, Any], at: _Loc) -> tuple[str, str]:
    """(message, fix) for one pydantic error."""
    parts, owner = at.parts, at.owner
    kind, ctx, got = err["type"], err.get("ctx") or {}, err.get("input")
    last = parts[-1] if parts else ""
    got_text = f" (got {_num(got)})" if isinstance(got, int | float | str | None) else ""
    if kind == "extra_forbidden":
        allowed = sorted(owner.model_fields) if owner else []
        close = difflib.get_close_matches(str(last), allowed, n=1)
        if close:
            return f"unknown key '{last}'", f"did you mean '{close[0]}'? Rename the key"
        return (
            f"unknown key '{last}'",
            f"remove it; the keys allowed here are: {', '.join(allowed)}",
        )
    if kind == "missing":
        return f"required key '{last}' is missing", f"add '{last}'"
    if kind in _BOUNDS:
        op, bound = _BOUNDS[kind]
        limit = _num(ctx.get(bound))
        fix = f"set a number {op} {limit}"
        if str(last).endswith("_s") and kind == "greater_than" and limit == "0":
            fix = "set a positive number of seconds"
        return f"must be {op} {limit}{got_text}", fix
    if kind == "literal_error":
        return f"must be {ctx.get('expected')}{got_text}", f"use {ctx.get('expected')}"
    if kind == "value_error":
        text = str(err["msg"]).removeprefix("Value error, ")
        message, _, hint = text.partition(": use ")
        if hint:
            return message, f"use {hint}"
        if at.target is McpServer:
            return text, "give a stdio server 'command' and an http server 'serve' or 'url'"
        return text, "correct the value"
    if kind == "too_short" and parts == ("tasks",):
        return "the experiment has no task", "add a task"
    if kind in ("too_long", "too_short") and parts and parts[0] == "comparisons":
        return f"a comparison names exactly 2 arms{got_text}", _TYPE_FIX["tuple"]
    message = str(err["msg"]).removeprefix("Input ") + got_text
    if kind in ("model_type", "dict_type"):
        message = "must be a mapping (key: value)" + got_text
    return message, _TYPE_FIX.get(kind.split("_")[0], "correct the value")


def _model_problems(
    data: Any, file: str, lines: LineMap
) -> tuple[list[Problem], Experiment | None]:
    try:
        return [], Experiment.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    resolved = [(err, _resolve_loc(tuple(err["loc"]))) for err in errors]
    renamed = {
        (at.parts[:-1], close[0])
        for err, at in resolved
        if err["type"] == "extra_forbidden"
        and at.owner is not None
        and (
            close := difflib.get_close_matches(str(at.parts[-1]), list(at.owner.model_fields), n=1)
        )
    }
    problems: list[Problem] = []
    for err, at in resolved:
        if err["type"] == "missing" and (at.parts[:-1], at.parts[-1]) in renamed:
            continue  # a misspelled required key: the "did you mean" problem says it all
        # A scalar branch of a union that also takes a mapping (source: name | {name,
        # commit}) is judged like a literal one; a union of scalars only is left as it was.
        literal = at.branch is not None and (
            at.branch.startswith("literal[") or (at.branch in _SCALARS and at.mapping_allowed)
        )
        # A union (tools: none | {mcp: ...}, source: name | {name, commit}) reports a
        # failure for each branch; keep only the branch that the value's own shape chose.
        if at.branch is not None and isinstance(_get(data, at.union_at), dict) == literal:
            continue
        message, fix = _explain(err, at)
        if literal:
            # The literal branch's error alone would hide that a mapping is allowed too.
            message = (
                message.replace(" (got", " or a mapping (got", 1)
                if " (got" in message
                else message + " or a mapping"
            )
            fix += " or a mapping"
        ypath = format_path(at.parts)
        problems.append(Problem(file, lines.line(ypath), ypath, message, fix))
    return problems, None
