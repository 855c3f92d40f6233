"""A generic grader: the final answer equals an expected value, literal or from the content."""

from __future__ import annotations

from pairbench.grading._args import (
    ExpectArgs,
    Scalar,
    answer_of,
    excerpt,
    expected_value,
    show,
    with_args,
)
from pairbench.grading._extract import normalize
from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade


class ExactArgs(ExpectArgs):
    """``exact-answer``: the answer expected; give exactly one of the two."""

    expect: Scalar = None
    """The answer expected, as a literal."""


@with_args(ExactArgs)
def exact_answer(inp: GradeInput) -> Grade:
    """The whole final answer equals ``expect`` (a literal) or the value at ``expect_path``
    (a dotted path into the seeded content), whitespace runs and case aside.

    >>> from pairbench.spec import Task
    >>> task = Task(id="t", prompt="p.md", grader={"name": "exact-answer"})
    >>> exact_answer(GradeInput(task, {"expect": "42"}, {}, None, " 42 "))
    Grade(outcome='passed', reason='answer matches', details={})
    >>> exact_answer(GradeInput(task, {"expect_path": "fixture.n"}, {"n": 7}, None, "8")).reason
    "expected '7' (fixture.n); found '8'"
    """
    args = ExactArgs.parse(inp.args, inp.task.grader.name)
    answer = answer_of(inp)
    if answer is None:
        return Grade(outcome="failed", reason="no answer")
    expected = expected_value(args, inp.content)
    if isinstance(expected, Grade):
        return expected
    if normalize(answer) == normalize(show(expected.value)):
        return Grade(outcome="passed", reason="answer matches")
    reason = f"expected {expected.label}; found {excerpt(answer)}"
    return Grade(outcome="failed", reason=reason)
