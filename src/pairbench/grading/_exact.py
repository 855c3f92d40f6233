"""A generic grader: the final answer equals an expected value from the fixture content."""

from __future__ import annotations

from pairbench._template import lookup
from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def exact_answer(inp: GradeInput) -> Grade:
    """Args: ``expect`` (a literal) or ``expect_path`` (dotted path into content).

    **Usage**::

        exact_answer(GradeInput(task, {"expect": "42"}, {}, None, " 42 "))
        # Grade(outcome='passed', ...)
    """
    expected = inp.args.get("expect")
    if "expect_path" in inp.args:
        expected = lookup(str(inp.args["expect_path"]), {"fixture": inp.content})
    if not inp.final_answer:
        return Grade(outcome="failed", reason="no answer")
    if expected is not None and _norm(inp.final_answer) == _norm(str(expected)):
        return Grade(outcome="passed", reason="answer matches")
    return Grade(outcome="failed", reason=f"expected {expected!r}")
