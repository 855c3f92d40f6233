"""Generic graders of the final answer: ``contains``, ``regex``, ``json-path`` and ``number``.

Each takes declared arguments (``args_model``, checked by ``pairbench check``). The value
expected is a literal (``expect``) or read from the trial's seeded fixture content
(``expect_path``). A missing answer fails with the reason ``no answer``; every other
failure names what was expected and what was found.

**Usage** (a task in ``experiment.yaml``)::

    grader: {name: number, args: {expect_path: fixture.target.open_count, abs_tol: 0}}
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from pairbench.grading._args import (
    ExpectArgs,
    Scalar,
    answer_of,
    excerpt,
    expected_value,
    quote,
    show,
    with_args,
)
from pairbench.grading._extract import (
    as_number,
    describe,
    find_json,
    format_steps,
    json_equal,
    json_text,
    normalize,
    numbers,
    parse_path,
    plain,
    show_number,
    walk,
    without_list_numbers,
)
from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade

_NO_ANSWER = Grade(outcome="failed", reason="no answer")


class ContainsArgs(ExpectArgs):
    """``contains``: texts the answer must (and must not) contain."""

    expect_required: ClassVar[bool] = False

    expect: Scalar = None
    """Text the answer must contain."""
    all_of: list[Scalar] = Field(default_factory=list)
    """More texts the answer must all contain."""
    none_of: list[Scalar] = Field(default_factory=list)
    """Texts the answer must not contain."""
    case_sensitive: bool = False
    """Compare case as written (by default case is ignored; whitespace runs always are)."""

    @model_validator(mode="after")
    def _something_to_look_for(self) -> Self:
        if not (self.has_expected or self.all_of or self.none_of):
            raise ValueError(
                "there is nothing to look for: use expect, expect_path, all_of or none_of"
            )
        texts = [self.expect] if "expect" in self.model_fields_set else []
        if any(not show(t).strip() for t in [*texts, *self.all_of, *self.none_of]):
            raise ValueError("an empty text is in every answer: use a text with characters")
        return self


def _find(answer: str, text: str, case_sensitive: bool) -> tuple[str, int] | None:
    """Where ``text`` is in ``answer`` (the flattened answer searched, and the index)."""
    for source, needle in ((answer, text), (plain(answer), plain(text))):
        flat = " ".join(source.split())
        at = normalize(flat, case_sensitive).find(normalize(needle, case_sensitive))
        if at >= 0:
            return flat, at
    return None


@with_args(ContainsArgs)
def contains_answer(inp: GradeInput) -> Grade:
    """The final answer contains ``expect`` (or the value at ``expect_path``), every text of
    ``all_of``, and no text of ``none_of``.

    Whitespace runs count as one space and case is ignored unless ``case_sensitive``. A text
    also counts as there when it is there once the markdown marks are off (``**Fix**
    login`` contains ``Fix login``).

    >>> from pairbench.spec import Task
    >>> task = Task(id="t", prompt="p.md", grader={"name": "contains"})
    >>> contains_answer(GradeInput(task, {"expect": "fix login"}, {}, None, "It is **Fix Login**."))
    Grade(outcome='passed', reason="answer contains 'fix login'", details={})
    >>> contains_answer(GradeInput(task, {"none_of": ["sorry"]}, {}, None, "Sorry, no.")).reason
    "expected the answer not to contain 'sorry'; found it in 'Sorry, no.'"
    """
    args = ContainsArgs.parse(inp.args, inp.task.grader.name)
    answer = answer_of(inp)
    if answer is None:
        return _NO_ANSWER
    wanted: list[tuple[str, str]] = []
    if args.has_expected:
        expected = expected_value(args, inp.content)
        if isinstance(expected, Grade):
            return expected
        wanted.append((show(expected.value), expected.label))
    wanted += [(show(text), quote(show(text))) for text in args.all_of]
    missing = [label for text, label in wanted if _find(answer, text, args.case_sensitive) is None]
    if missing:
        every = f"all of {', '.join(label for _, label in wanted)}"
        what, lacks = (
            (missing[0], "") if len(wanted) == 1 else (every, f" (missing {', '.join(missing)})")
        )
        reason = f"expected the answer to contain {what}{lacks}; found {excerpt(answer)}"
        return Grade(outcome="failed", reason=reason)
    for text in args.none_of:
        hit = _find(answer, show(text), args.case_sensitive)
        if hit is not None:
            flat, at = hit
            reason = f"expected the answer not to contain {quote(show(text))}; "
            return Grade(outcome="failed", reason=reason + f"found it in {excerpt(flat, at)}")
    if wanted:
        return Grade(outcome="passed", reason="answer contains " + ", ".join(w[1] for w in wanted))
    return Grade(outcome="passed", reason="answer contains none of the texts of none_of")


_FLAGS = {
    "ignorecase": re.IGNORECASE,
    "multiline": re.MULTILINE,
    "dotall": re.DOTALL,
    "verbose": re.VERBOSE,
    "ascii": re.ASCII,
}


class RegexArgs(ExpectArgs):
    """``regex``: a pattern the answer must match, and optionally what a group captures."""

    expect_required: ClassVar[bool] = False

    flags: list[Literal["ignorecase", "multiline", "dotall", "verbose", "ascii"]] = Field(
        default_factory=list
    )
    """Python ``re`` flags by name, e.g. ``[ignorecase, multiline]``."""
    pattern: str
    """A Python regular expression (quote it in single quotes in YAML: 'issue #(\\d+)')."""
    fullmatch: bool = False
    """The whole answer (leading and trailing whitespace aside) must match, not a part of it."""
    group: int | str | None = None
    """The group of the first match compared with ``expect``: a number (0, the whole match)
    or a name from ``(?P<name>...)``. Default 0 when ``expect`` is set."""
    expect: Scalar = None
    """What the group must be (whitespace-normalized; case ignored under ``ignorecase``)."""

    def compiled(self) -> re.Pattern[str]:
        """The pattern compiled with its flags."""
        return _compile(self.pattern, self.flags)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str, info: ValidationInfo) -> str:
        _compile(pattern, info.data.get("flags", []))
        return pattern

    @field_validator("group")
    @classmethod
    def _in_pattern(cls, group: int | str | None, info: ValidationInfo) -> int | str | None:
        pattern = info.data.get("pattern")
        if group is None or pattern is None:
            return group  # an invalid pattern is reported on its own
        compiled = _compile(pattern, info.data.get("flags", []))
        names = ", ".join(compiled.groupindex) or "none"
        if isinstance(group, int) and not 0 <= group <= compiled.groups:
            raise ValueError(
                f"group {group} is not in the pattern, which has {compiled.groups} group(s): "
                f"use a number from 0 to {compiled.groups} or a group name (names: {names})"
            )
        if isinstance(group, str) and group not in compiled.groupindex:
            raise ValueError(
                f"the pattern has no group named '{group}': use one of its names ({names}) "
                "or a group number"
            )
        return group

    @model_validator(mode="after")
    def _group_needs_expect(self) -> Self:
        if self.group is not None and not self.has_expected:
            raise ValueError(
                f"group {self.group} is set but nothing is compared with it: use expect or "
                "expect_path, or leave group out"
            )
        return self


def _compile(pattern: str, flags: Sequence[str]) -> re.Pattern[str]:
    value = 0
    for name in flags:
        value |= _FLAGS.get(name, 0)
    try:
        return re.compile(pattern, value)
    except re.error as exc:
        raise ValueError(
            f"'{pattern}' is not a valid regular expression ({exc}): use Python's re syntax, "
            "in single quotes in YAML"
        ) from None


@with_args(RegexArgs)
def regex_answer(inp: GradeInput) -> Grade:
    """The final answer matches ``pattern`` (anywhere, or wholly with ``fullmatch``).

    With ``expect`` or ``expect_path``, the first match's ``group`` (default 0, the whole
    match) must equal it, whitespace-normalized and case-folded under ``ignorecase``. The
    pattern is matched against the answer as written, markdown included.

    >>> from pairbench.spec import Task
    >>> task = Task(id="t", prompt="p.md", grader={"name": "regex"})
    >>> args = {"pattern": r"#(\\d+)", "group": 1, "expect": "7"}
    >>> regex_answer(GradeInput(task, args, {}, None, "It is issue #3.")).reason
    "expected group 1 of /#(\\\\d+)/ to be '7'; found '3' in 'It is issue #3.'"
    """
    args = RegexArgs.parse(inp.args, inp.task.grader.name)
    answer = answer_of(inp)
    if answer is None:
        return _NO_ANSWER
    compiled, shown = args.compiled(), _slashed(args.pattern)
    match = compiled.fullmatch(answer.strip()) if args.fullmatch else compiled.search(answer)
    if match is None:
        how = "the whole answer to match" if args.fullmatch else "a match of"
        return Grade(outcome="failed", reason=f"expected {how} {shown}; found {excerpt(answer)}")
    if not args.has_expected:
        return Grade(outcome="passed", reason=f"answer matches {shown}: {quote(match[0])}")
    expected = expected_value(args, inp.content)
    if isinstance(expected, Grade):
        return expected
    group = 0 if args.group is None else args.group
    got = match.group(group)
    what = f"expected group {group} of {shown} to be {expected.label}"
    if got is None:
        reason = f"{what}; it took no part in the match {quote(match[0])}"
        return Grade(outcome="failed", reason=reason)
    case_sensitive = "ignorecase" not in args.flags
    if normalize(got, case_sensitive) == normalize(show(expected.value), case_sensitive):
        return Grade(outcome="passed", reason=f"group {group} of {shown} is {expected.label}")
    where = excerpt(answer, match.start() + (len(answer) - len(answer.lstrip())) * args.fullmatch)
    return Grade(outcome="failed", reason=f"{what}; found {quote(got)} in {where}")


def _slashed(pattern: str) -> str:
    return "/" + (pattern if len(pattern) <= 40 else pattern[:39] + "…") + "/"


class JsonPathArgs(ExpectArgs):
    """``json-path``: the value at a path of the JSON in the answer."""

    path: str
    """Where the value is: keys joined by dots, ``[n]`` for a list item (``items[0].name``;
    ``$`` for the whole JSON)."""
    expect: Any = None
    """The JSON value expected there: text, a number, true/false, null, a list or a mapping."""
    case_sensitive: bool = False
    """Compare text values as written (by default whitespace runs and case are ignored)."""

    @field_validator("path")
    @classmethod
    def _parses(cls, path: str) -> str:
        parse_path(path)
        return path


@with_args(JsonPathArgs)
def json_path_answer(inp: GradeInput) -> Grade:
    """The value at ``path`` in the answer's JSON equals ``expect`` (or ``expect_path``).

    The JSON is the whole answer, else its fenced ```` ```json ```` block, else the first
    object or array in it that parses; an answer with none is a ``parse_failure``. Values
    compare as JSON (``7`` is not ``"7"``; text ignores whitespace runs and case unless
    ``case_sensitive``).

    >>> from pairbench.spec import Task
    >>> task = Task(id="t", prompt="p.md", grader={"name": "json-path"})
    >>> answer = 'Done:\\n```json\\n{"items": [{"name": "Ada"}]}\\n```'
    >>> json_path_answer(GradeInput(task, {"path": "items[0].name", "expect": "ada"}, {}, None,
    ...                             answer)).outcome
    'passed'
    >>> json_path_answer(GradeInput(task, {"path": "items[1].name", "expect": "Bo"}, {}, None,
    ...                             answer)).reason
    'expected "Bo" at items[1].name; its json block has no items[1] (items is a list of 1)'
    """
    args = JsonPathArgs.parse(inp.args, inp.task.grader.name)
    answer = answer_of(inp)
    if answer is None:
        return _NO_ANSWER
    expected = expected_value(args, inp.content)
    if isinstance(expected, Grade):
        return expected
    label = json_text(expected.value) + (f" ({args.expect_path})" if args.expect_path else "")
    found = find_json(answer)
    if isinstance(found, str):
        reason = f"expected {label} at {args.path}; {found}: {excerpt(answer)}"
        return Grade(outcome="parse_failure", reason=reason)
    steps = parse_path(args.path)
    walked = walk(found.value, steps)
    what = f"expected {label} at {format_steps(steps)}"
    if not walked.found:
        missing = format_steps(steps[: len(walked.reached) + 1])
        kind = f"{format_steps(walked.reached)} is {describe(walked.value)}"
        return Grade(outcome="failed", reason=f"{what}; {found.where} has no {missing} ({kind})")
    details = {"found": json_text(walked.value)}
    if json_equal(walked.value, expected.value, args.case_sensitive):
        reason = f"{format_steps(steps)} is {label}"
        return Grade(outcome="passed", reason=reason, details=details)
    got = f"{json_text(walked.value)} ({describe(walked.value)})"
    reason = f"{what}; found {got} in {found.where}"
    return Grade(outcome="failed", reason=reason, details=details)


def _number(value: Any) -> Any:
    if value is None or as_number(value) is None:
        shown = (
            "nothing" if value is None else show(value) if isinstance(value, bool) else repr(value)
        )
        raise ValueError(f"must be a number (got {shown}): use a number such as 1234 or 0.5")
    return value if isinstance(value, int | float) else float(value.replace(",", ""))


class NumberArgs(ExpectArgs):
    """``number``: a number in the answer, within a tolerance of the one expected."""

    expect: Annotated[int | float | None, BeforeValidator(_number)] = None
    """The number expected (or text holding one number, such as "1,234")."""
    pick: Literal["first", "last", "only"] = "first"
    """Which number of the answer is compared: the first, the last, or the only one (an
    answer holding two different numbers fails)."""
    abs_tol: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """The largest difference accepted, in the answer's units (inclusive)."""
    rel_tol: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """The largest difference accepted as a fraction of the expected value (0.01: 1%)."""


@with_args(NumberArgs)
def number_answer(inp: GradeInput) -> Grade:
    """The ``pick`` number of the answer is within tolerance of ``expect`` (or ``expect_path``).

    Numbers are read with their sign, decimals and exponent, and commas between thousands
    (``-1,234.5``); the numbers of a numbered list are not read. Within tolerance means
    ``|found - expected| <= max(abs_tol, rel_tol * |expected|)``, computed exactly (in
    decimal), so the boundary is in. An answer without a number is a ``parse_failure``.

    >>> from pairbench.spec import Task
    >>> task = Task(id="t", prompt="p.md", grader={"name": "number"})
    >>> number_answer(GradeInput(task, {"expect": 1234}, {}, None, "About **1,234** issues")).reason
    'found 1234 (expected 1234)'
    >>> number_answer(GradeInput(task, {"expect": 10, "abs_tol": 0.5}, {}, None, "10.6")).reason
    "expected 10 ± 0.5; found 10.6 in '10.6'"
    """
    args = NumberArgs.parse(inp.args, inp.task.grader.name)
    answer = answer_of(inp)
    if answer is None:
        return _NO_ANSWER
    expected = expected_value(args, inp.content)
    if isinstance(expected, Grade):
        return expected
    want = as_number(expected.value)
    if want is None:
        shown = quote(show(expected.value))
        reason = f"expect_path '{args.expect_path}' is {shown}, which is not a number"
        return Grade(outcome="failed", reason=reason)
    tol = max(Decimal(repr(args.abs_tol)), Decimal(repr(args.rel_tol)) * abs(want))
    source = f" ({args.expect_path})" if args.expect_path else ""
    label = show_number(want) + (f" ± {show_number(tol)}" if tol else "") + source
    text = without_list_numbers(answer)
    found = numbers(text)
    if not found:
        reason = f"expected {label}; no number in the answer: {excerpt(text)}"
        return Grade(outcome="parse_failure", reason=reason)
    distinct = list(dict.fromkeys(n.value for n in found))
    if args.pick == "only" and len(distinct) > 1:
        several = ", ".join(show_number(v) for v in distinct[:5])
        reason = f"expected {label} as the only number; found several ({several}) in "
        return Grade(outcome="failed", reason=reason + excerpt(text))
    picked = found[-1] if args.pick == "last" else found[0]
    details = {"expected": show_number(want), "found": show_number(picked.value)}
    if abs(picked.value - want) <= tol:
        reason = f"found {show_number(picked.value)} (expected {label})"
        return Grade(outcome="passed", reason=reason, details=details)
    reason = f"expected {label}; found {show_number(picked.value)} in {excerpt(text, picked.start)}"
    return Grade(outcome="failed", reason=reason, details=details)
