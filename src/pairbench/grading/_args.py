"""Grader arguments: each grader declares a model, which ``pairbench check`` enforces.

**Usage**::

    class FieldArgs(GraderArgs):
        field: str
        \"\"\"The issue field to compare.\"\"\"

    @with_args(FieldArgs)
    def my_grader(inp: GradeInput) -> Grade:
        args = FieldArgs.parse(inp.args)
        ...

``with_args`` only sets ``my_grader.args_model = FieldArgs`` (the function itself is
returned, so its code identity in a lock stays the plugin's own). ``check`` validates each
task's ``grader.args`` against that model; ``parse`` raises the same problems as a
``SpecError`` when a grader is called with arguments that were never checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, NamedTuple, Protocol, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator

from pairbench._errors import SpecError
from pairbench._template import lookup
from pairbench.grading._protocol import GradeInput, Grader
from pairbench.spec._grader_args import args_problems
from pairbench.spec._yaml import format_path
from pairbench.store._records import Grade


class GraderArgs(BaseModel):
    """Base of a grader's arguments: frozen, unknown keys refused; ``check`` quotes a
    field's docstring in its fixes (read from the source then: pydantic's
    ``use_attribute_docstrings`` read it at import, ~15 ms a class, on every run's start)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def parse(cls, args: Mapping[str, Any] | None, grader: str = "") -> Self:
        """Validate ``grader.args``; a bad value raises ``SpecError`` naming it and the fix.

        >>> class Args(GraderArgs):
        ...     field: str
        >>> Args.parse({"feild": "title"}, "my-grader")
        Traceback (most recent call last):
        ...
        pairbench._errors.SpecError: grader.args.feild: unknown argument 'feild' of grader \
'my-grader'. Fix: did you mean 'field'? The arguments my-grader takes: field
        """
        try:
            return cls.model_validate(dict(args or {}))
        except ValidationError:
            name = grader or cls.__name__
            problems = [
                f"{format_path(('grader', 'args', *where))}: {message}. Fix: {fix}"
                for where, message, fix in args_problems(name, cls, dict(args or {}))
            ]
            raise SpecError(problems) from None


class ArgsGrader(Protocol):
    """A grader with a declared ``args_model``."""

    args_model: type[BaseModel]

    def __call__(self, inp: GradeInput, /) -> Grade: ...


def with_args(model: type[BaseModel]) -> Callable[[Grader], ArgsGrader]:
    """Declare ``model`` as the arguments of the decorated grader (``grader.args_model``)."""

    def declare(grader: Grader) -> ArgsGrader:
        grader.args_model = model  # type: ignore[attr-defined]
        return grader  # type: ignore[return-value]  # it now has the attribute

    return declare


def _scalar(value: Any) -> Any:
    if isinstance(value, str | int | float):
        return value
    kind = "nothing" if value is None else f"a {type(value).__name__}"
    raise ValueError(f"must be text, a number or true/false (got {kind}): use one value")


Scalar = Annotated[str | int | float | bool | None, BeforeValidator(_scalar)]
"""One YAML scalar: text, a number or a boolean (never null, a list or a mapping)."""

_PATH = re.compile(r"[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*")


class ExpectArgs(GraderArgs):
    """Arguments naming one expected value: ``expect`` (a literal) or ``expect_path``.

    A subclass declares ``expect`` with its own type; ``expect_required = False`` makes
    both optional (at most one may still be given).
    """

    expect_required: ClassVar[bool] = True

    expect_path: str | None = None
    """A dotted path into the trial's seeded fixture content, as in prompts
    (``fixture.target.title``, or ``target.title``; list items by index: ``items.0``)."""

    @model_validator(mode="after")
    def _one_expected(self) -> Self:
        given = "expect" in self.model_fields_set
        path = self.expect_path
        if path is not None and not _PATH.fullmatch(path):
            raise ValueError(
                f"expect_path '{path}' is not a dotted path: use keys and list indexes "
                "joined by dots, e.g. fixture.target.title"
            )
        if given and path is not None:
            raise ValueError(
                "both 'expect' and 'expect_path' are set: use only one (expect for a "
                "literal, expect_path for a value of the fixture content)"
            )
        if self.expect_required and not given and path is None:
            raise ValueError(
                "neither 'expect' nor 'expect_path' is set: use expect (a literal) or "
                "expect_path (a dotted path into the fixture content)"
            )
        return self

    @property
    def has_expected(self) -> bool:
        """Whether ``expect`` or ``expect_path`` was given."""
        return "expect" in self.model_fields_set or self.expect_path is not None


class Expected(NamedTuple):
    """An expected value and how a reason names it."""

    value: Any
    label: str
    """``'Fix login'``, or ``'Fix login' (fixture.target.title)`` when read from content."""


def expected_value(args: ExpectArgs, content: dict[str, Any]) -> Expected | Grade:
    """The expected value of ``args``, or a failed ``Grade`` saying why there is none.

    >>> class Args(ExpectArgs):
    ...     expect: Scalar = None
    >>> expected_value(Args(expect_path="fixture.n"), {"n": 7})
    Expected(value=7, label="'7' (fixture.n)")
    >>> expected_value(Args(expect_path="m"), {"n": 7}).reason
    "expect_path 'm' names nothing in the fixture content (its keys: n)"
    """
    path = args.expect_path
    if path is None:
        value = getattr(args, "expect", None)
        return Expected(value, quote(show(value)))
    found = content_value(path, content)
    if found is None:
        keys = ", ".join(sorted(map(str, content))) or "none: the task has no fixture"
        reason = f"expect_path '{path}' names nothing in the fixture content (its keys: {keys})"
        return Grade(outcome="failed", reason=reason)
    return Expected(found, f"{quote(show(found))} ({path})")


def answer_of(inp: GradeInput) -> str | None:
    """The final answer, or None when there is none or it is blank (a grader's "no answer")."""
    answer = inp.final_answer
    return answer if answer is not None and answer.strip() else None


def content_value(path: str, content: dict[str, Any]) -> Any:
    """The value at ``path`` in the seeded content; ``fixture.`` first, as in prompts."""
    if path == "fixture" or path.startswith("fixture."):
        return lookup(path, {"fixture": content})
    return lookup(path, content)


def show(value: Any) -> str:
    """A value as text: text as is, ``true``/``false`` as YAML writes them, else ``str``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def quote(text: str, limit: int = 60) -> str:
    """``text`` quoted for a reason, whitespace collapsed, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def excerpt(text: str, at: int = 0, limit: int = 60) -> str:
    """A quoted window of ``text`` around index ``at`` (a short answer: all of it).

    >>> excerpt("The title is 'Fix login'.")
    '"The title is \\'Fix login\\'."'
    >>> excerpt("x" * 50 + " found 42 here " + "y" * 50, at=56, limit=20)
    "'…found 42 here yyyyy…'"
    """
    start = max(0, min(at - limit // 3, len(text) - limit))
    window = text[start : start + limit]
    flat = " ".join(window.split())
    if start > 0:
        flat = "…" + flat
    if start + limit < len(text):
        flat += "…"
    return repr(flat)
