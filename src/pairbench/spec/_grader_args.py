"""A task's ``grader.args`` against the grader's declared ``args_model``.

A grader may carry an ``args_model`` attribute: a pydantic model of the arguments it takes
(``pairbench.grading.GraderArgs`` is a convenient base). ``pairbench check``, and every
load, validates each task's ``grader.args`` against it, so a misspelled key is one problem
with its line and its fix, found before a run, rather than a run whose every trial fails.

**Usage**::

    args_problems("exact-answer", ExactArgs, {"expect_pth": "x"})
    # [(('expect_pth',), "unknown argument 'expect_pth' of grader 'exact-answer'",
    #   "did you mean 'expect_path'? The arguments exact-answer takes: expect, expect_path")]

A model's own validator reports a problem by raising ``ValueError("what is wrong: use the
fix")``: the text after ``: use`` becomes the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from pairbench._errors import RegistryError
from pairbench._registry import load
from pairbench.spec._yaml import Found, Part, _get

_TYPE_FIX = {
    "int": "use a whole number",
    "float": "use a number",
    "bool": "use true or false",
    "string": "use text (quote it, e.g. '42', if it looks like a number)",
    "dict": "use a mapping (key: value)",
    "model": "use a mapping (key: value)",
    "list": "use a list, e.g. [a, b]",
    "finite": "use a finite number (not .inf or .nan)",
}


def args_model(grader: Any) -> type[BaseModel] | None:
    """The grader's declared ``args_model``, if it has one that is a pydantic model."""
    model = getattr(grader, "args_model", None)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def args_problems(name: str, model: type[BaseModel], args: Any) -> list[Found]:
    """What is wrong with ``args`` for grader ``name``, as (path inside args, message, fix).

    Empty when ``args`` is valid. One problem per argument: the first pydantic reports.
    """
    if not isinstance(args, Mapping):
        return [((), "must be a mapping", "write the grader's args as 'key: value' pairs")]
    try:
        model.model_validate(dict(args))
    except ValidationError as exc:
        return _explain(name, model, args, exc)
    except Exception as exc:  # a plugin's validator that raises what pydantic does not catch
        message = f"grader '{name}' could not check its args ({type(exc).__name__}: {exc})"
        return [((), message, "fix the args, or report the error to the grader's authors")]
    return []


def grader_args_problems(
    registry: Mapping[str, Collection[str]], where: tuple[Part, ...], grader: Any
) -> Iterator[Found]:
    """The problems of one task's ``grader`` entry (at ``where``) with its ``args``.

    Only a grader that ``registry`` names and the installed entry points can load is checked:
    an unknown name is the name check's to report, and a name only the caller's registry
    knows has no model to check against. A registered grader that fails to import is a
    problem naming it (``check`` never crashes on a broken plugin).
    """
    name = _get(grader, ("name",))
    if not isinstance(grader, dict) or not isinstance(name, str):
        return  # the models report a malformed grader entry
    if name not in registry.get("graders", ()):
        return
    try:
        loaded = load("graders", name)
    except RegistryError:
        return
    except Exception as exc:
        yield (
            (*where, "name"),
            f"grader '{name}' is registered but cannot be imported ({type(exc).__name__}: {exc})",
            "reinstall or fix the package that provides it, or use another grader",
        )
        return
    model = args_model(loaded)
    args = grader.get("args", {})
    if model is None or not isinstance(args, Mapping):
        return  # no declared model; a non-mapping ``args`` is the task model's to report
    for path, message, fix in args_problems(name, model, args):
        yield (*where, "args", *path), message, fix


def _explain(
    name: str, model: type[BaseModel], args: Mapping[str, Any], exc: ValidationError
) -> list[Found]:
    allowed = sorted(model.model_fields)
    takes = f"arguments {name} takes: {', '.join(allowed) or 'none'}"
    errors = exc.errors(include_url=False)
    meant = {  # a misspelled required key is missing too: its "did you mean" says it all
        close[0]
        for err in errors
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1
        for close in [difflib.get_close_matches(str(err["loc"][0]), allowed, n=1)]
        if close
    }
    out: dict[tuple[Part, ...], Found] = {}
    for err in errors:
        kind, loc = err["type"], tuple(err["loc"])
        path = _within(args, loc, keep_last=kind in ("missing", "extra_forbidden"))
        if path in out or (kind == "missing" and len(loc) == 1 and loc[0] in meant):
            continue  # one problem per argument (a union reports each of its branches)
        key = str(path[0]) if path else ""
        about = f" ({key}: {_plain(doc)})" if (doc := field_doc(model, key)) else ""
        got = err.get("input")
        got_text = f" (got {got!r})" if isinstance(got, int | float | str) and path else ""
        if kind == "extra_forbidden" and len(path) == 1:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'? The" if close else "remove it; the"
            message, fix = f"unknown argument '{key}' of grader '{name}'", f"{hint} {takes}"
        elif kind == "missing" and len(path) == 1:
            message, fix = f"grader '{name}' needs the argument '{key}'", f"add '{key}'{about}"
        elif kind in ("value_error", "assertion_error"):
            text = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
            message, _, hint = text.partition(": use ")
            fix = f"use {hint}" if hint else f"correct the value{about}"
        elif kind == "literal_error":
            expected = (err.get("ctx") or {}).get("expected")
            message, fix = f"must be {expected}{got_text}", f"use {expected}"
        else:
            message = str(err["msg"]).removeprefix("Input ") + got_text
            fix = _TYPE_FIX.get(kind.split("_")[0], "correct the value") + about
        out[path] = (path, message, fix)
    return list(out.values())


def field_doc(model: type[BaseModel], key: str) -> str | None:
    """The field's description, else its docstring in the source (read only for a problem)."""
    from pairbench._schema_doc import _attribute_docs

    field = model.model_fields.get(key)
    if field is None:
        return None
    return field.description or _attribute_docs(model).get(key)


def _plain(description: str) -> str:
    """A field docstring as a fix quotes it: one line, no RST quotes, no final period."""
    return " ".join(description.replace("``", "'").split()).rstrip(".")


def _within(args: Any, loc: tuple[Part, ...], keep_last: bool) -> tuple[Part, ...]:
    """The longest start of ``loc`` that names a value in ``args``.

    pydantic's locations also hold the union branch it tried (``expect.str``), which is no
    place in the file; a missing or unknown key keeps its own name (the last part).
    """
    current, kept = args, 0
    for part in loc:
        in_mapping = isinstance(current, Mapping) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if not (in_mapping or in_list):
            break
        current, kept = current[part], kept + 1
    if keep_last and kept == len(loc) - 1:
        kept += 1
    return loc[:kept]
