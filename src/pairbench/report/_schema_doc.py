"""``SUMMARY_SCHEMA.md``, generated from the summary's models so it cannot drift.

``make docs`` (``python -m pairbench.report._schema_doc [PATH]``) rewrites it; a test
fails when the committed file differs from :func:`schema_reference`.
"""

from __future__ import annotations

import inspect
import sys
import types
from pathlib import Path
from typing import Literal, Union, get_args, get_origin

from pydantic import BaseModel

from pairbench.report._schema import SCHEMA_ID, Summary

TARGET = Path(__file__).with_name("SUMMARY_SCHEMA.md")

HEADER = f"""# `summary.json` — schema `{SCHEMA_ID}`

Generated from the models of `pairbench/report/_schema.py` (and `_schema_pairs.py`,
`_schema_arms.py`) by `make docs` (`python -m pairbench.report._schema_doc`); do not edit
by hand.

The machine-readable report of one run, written by `pairbench.report.write_reports`
next to `report.md` and `report.html`. Both human reports are rendered from this
object alone. Any change that removes or re-types a key bumps the schema id.

Conventions:

- A **proportion** is `{{"k", "n", "estimate", "low", "high"}}`: `k` of `n` with a Wilson
  score interval at `confidence`. When `n == 0`, `estimate`, `low` and `high` are
  `null` (reports show "n/a"); never NaN.
- An **interval** `ci95` is `[low, high]` at `confidence` (0.95), or `null` when it cannot
  be computed (the accompanying `method` says why). An end of a censored interval may be
  `null`: unbounded on that side.
- Missing values are `null`, never 0. Measured and estimated values are never summed.
- Arms are in declared order; tasks in declared order.
- All per-arm statistics are over scored trials (outcomes passed, failed, parse_failure,
  agent_error, timeout) unless stated. Agent text (`reason`, `final_answer`) is stored as
  given; renderers escape it.
- Keys are in the order of the tables below. A `dict[str, X]` is an object keyed by data
  (an arm, an outcome, a reason), not by name; `json` is any JSON value.
"""


def _models(annotation: object) -> list[type[BaseModel]]:
    """The models an annotation refers to, in the order they appear."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models(arg)]


def _walk(root: type[BaseModel]) -> dict[type[BaseModel], dict[type[BaseModel], list[str]]]:
    """Every model reachable from ``root``, depth first in field order (a table follows the
    table that first uses it), with the keys of each model that hold it."""
    found: dict[type[BaseModel], dict[type[BaseModel], list[str]]] = {root: {}}

    def visit(model: type[BaseModel]) -> None:
        for name, field in model.model_fields.items():
            for inner in _models(field.annotation):
                first = inner not in found
                found.setdefault(inner, {}).setdefault(model, []).append(name)
                if first:
                    visit(inner)

    visit(root)
    return found


def _link(model: type[BaseModel]) -> str:
    return f"[{model.__name__}](#{model.__name__.lower()})"


def _type(annotation: object) -> str:
    """An annotation as readers of the JSON see it: ``float | null``, ``list[Arm]``."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _link(annotation)
    if origin is Literal:
        return " | ".join(f'`"{a}"`' if isinstance(a, str) else str(a).lower() for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_type(a) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_type(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    # pydantic's JsonValue is a type alias, not a class.
    return "json" if getattr(annotation, "__name__", "") == "JsonValue" else str(annotation)


def _cell(text: str) -> str:
    # A pipe ends a table cell in GitHub Markdown, even inside backticks.
    return " ".join(text.split()).replace("|", "\\|")


def _table(model: type[BaseModel], used_in: dict[type[BaseModel], list[str]]) -> str:
    doc = inspect.cleandoc(model.__doc__ or "")
    lines = [f"## {model.__name__}", "", doc, ""]
    if used_in:
        where = (f"{_link(m)} {', '.join(f'`{k}`' for k in keys)}" for m, keys in used_in.items())
        lines += [f"In: {'; '.join(where)}.", ""]
    lines += ["| key | type | meaning |", "|---|---|---|"]
    for name, field in model.model_fields.items():
        meaning = field.description or ""
        lines.append(f"| `{name}` | {_cell(_type(field.annotation))} | {_cell(meaning)} |")
    return "\n".join(lines) + "\n"


def schema_reference() -> str:
    """The text of ``SUMMARY_SCHEMA.md``: the conventions, then one table per model.

    Example::

        schema_reference().startswith("# `summary.json`")  # True
    """
    return "\n".join([HEADER, *(_table(m, u) for m, u in _walk(Summary).items())])


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else TARGET
    target.write_text(schema_reference(), encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
