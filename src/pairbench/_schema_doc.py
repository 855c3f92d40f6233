"""``SUMMARY_SCHEMA.md`` and ``JOURNAL_SCHEMA.md``, generated from the models so they
cannot drift.

``make docs`` (``python -m pairbench._schema_doc``) rewrites both; a test fails
when a committed file differs from :func:`schema_reference` or :func:`journal_reference`.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import sys
import textwrap
import types
from pathlib import Path
from typing import Literal, Union, get_args, get_origin

from pydantic import BaseModel

from pairbench.report.summary import _schema as _summary_schema
from pairbench.report.summary._schema import SCHEMA_ID, Summary
from pairbench.store import _events

TARGET = Path(_summary_schema.__file__).with_name("SUMMARY_SCHEMA.md")
JOURNAL_TARGET = Path(_events.__file__).with_name("JOURNAL_SCHEMA.md")

HEADER = f"""# `summary.json` — schema `{SCHEMA_ID}`

Generated from the models of `pairbench/report/summary/_schema.py` (and `_schema_pairs.py`,
`_schema_arms.py`, `_schema_hypotheses.py`, `_schema_scores.py`) by `make docs` (`python -m
pairbench._schema_doc`); do not edit by hand.

The machine-readable report of one run, written by `pairbench.write_report`
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


JOURNAL_HEADER = f"""# `journal.jsonl` — schema `{_events.JOURNAL_SCHEMA}`

Generated from the models of `pairbench/store/_events.py` by `make docs`
(`python -m pairbench._schema_doc`); do not edit by hand.

The run's append-only record: one JSON object per line, fsynced before the attempt it
records counts as done. The first line is `run_started`; `event` names each line's model.

Conventions:

- Every line begins with `"prev"`, the SHA-256 (hex) of the line before it, newline
  included; line 1's `prev` is the SHA-256 of `run.json`. The link is not a model field:
  the journal splices it in front of each encoded line, and `pairbench verify` checks it
  from the bytes. Lines written before chaining have none.
- Readers are strict about types (a string is never taken for a number) and ignore keys
  they do not know; a line whose `event` this version does not know is kept unread.
- A torn last line (a crash mid-write) is dropped; any other line that is not an event is
  damage, named by file and line.
- A `TrialRow` is the attempt as the trial table (`trials.npz`) stores it; `verify`
  rebuilds it from the result file the line names and compares.
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


@functools.cache
def _attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field docstrings (a string right after the field) of ``model`` and its bases, for
    models that do not ask pydantic to keep them (reading source costs import time)."""
    out: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                out[node.target.id] = inspect.cleandoc(after.value.value)
    return out


def _pattern_doc(name: str) -> str:
    """The meaning of a key whose name says it: an event's name, a metric's companions."""
    if name == "event":
        return "The event's name: which of these tables the line is."
    base, _, part = name.rpartition("_")
    if part == "prov" and base:
        return f"Provenance of `{base}`: measured, estimated or missing."
    if part == "note" and base:
        return f"Who measured `{base}`, who estimated it, or why it is missing."
    return ""


def _table(model: type[BaseModel], used_in: dict[type[BaseModel], list[str]]) -> str:
    doc = inspect.cleandoc(model.__doc__ or "")
    lines = [f"## {model.__name__}", "", doc, ""]
    if used_in:
        where = (f"{_link(m)} {', '.join(f'`{k}`' for k in keys)}" for m, keys in used_in.items())
        lines += [f"In: {'; '.join(where)}.", ""]
    lines += ["| key | type | meaning |", "|---|---|---|"]
    for name, field in model.model_fields.items():
        meaning = field.description or _attribute_docs(model).get(name) or _pattern_doc(name)
        key = field.alias or name
        lines.append(f"| `{key}` | {_cell(_type(field.annotation))} | {_cell(meaning)} |")
    return "\n".join(lines) + "\n"


def schema_reference() -> str:
    """The text of ``SUMMARY_SCHEMA.md``: the conventions, then one table per model.

    Example::

        schema_reference().startswith("# `summary.json`")  # True
    """
    return "\n".join([HEADER, *(_table(m, u) for m, u in _walk(Summary).items())])


def journal_reference() -> str:
    """The text of ``JOURNAL_SCHEMA.md``: the conventions, then one table per model.

    Example::

        journal_reference().startswith("# `journal.jsonl`")  # True
    """
    found: dict[type[BaseModel], dict[type[BaseModel], list[str]]] = {}
    for event in _events.EVENTS:
        for model, used_in in _walk(event).items():
            found.setdefault(model, {}).update(used_in)
    return "\n".join([JOURNAL_HEADER, *(_table(m, u) for m, u in found.items())])


def model_reference(root: type[BaseModel], title: str, intro: str) -> str:
    """The reference of any root model: a title, an introduction, then one table per model
    it reaches (what each study's ``SCHEMA.md`` is made of).

    Example::

        model_reference(Lengths, "`study.data` of acme-study", "...").startswith("# ")  # True
    """
    head = f"# {title}\n\n{intro.strip()}\n"
    return "\n".join([head, *(_table(m, u) for m, u in _walk(root).items())])


def study_target(model: type[BaseModel]) -> Path:
    """Where a study's ``SCHEMA.md`` lives: beside the module that defines its part's model."""
    return Path(inspect.getfile(sys.modules[model.__module__])).with_name("SCHEMA.md")


def study_reference(name: str, schema: str, model: type[BaseModel]) -> str:
    """The text of a study's ``SCHEMA.md``: ``summary.json``'s ``study.data`` for its runs."""
    intro = f"""Generated from `{model.__module__}.{model.__name__}`
by `make docs` (`python -m pairbench._schema_doc`); do not edit by hand.

The study's own part of a run's `summary.json`: `study.data` when `study.name` is
`{name}` and `study.schema` is `{schema}` (the core's slot is in
`SUMMARY_SCHEMA.md`). The study's report sections are rendered from this object."""
    return model_reference(model, f"`study.data` of {name} — schema `{schema}`", intro)


def study_references() -> dict[Path, str]:
    """Every registered study's ``SCHEMA.md`` that ships inside pairbench, by path."""
    from pairbench.studies import registered_studies

    here = Path(__file__).resolve().parent  # src/pairbench
    out: dict[Path, str] = {}
    for study in registered_studies():
        if study.report is None:
            continue
        target = study_target(study.report.model)
        if target.resolve().is_relative_to(here):  # a third party documents its own
            out[target] = study_reference(study.name, study.report.schema, study.report.model)
    return out


def main(argv: list[str]) -> None:
    """Write the references (``PATH`` for the summary's: a copy elsewhere)."""
    targets = {Path(argv[0]) if argv else TARGET: schema_reference()}
    if not argv:
        targets[JOURNAL_TARGET] = journal_reference()
        targets.update(study_references())
    for target, text in targets.items():
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
