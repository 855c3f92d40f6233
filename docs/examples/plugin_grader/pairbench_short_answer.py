"""A pairbench grader plugin: a short answer that names a value of the seeded content."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from pairbench import Grade, GradeInput


class ShortAnswerArgs(BaseModel):
    """The grader's arguments: `pairbench check` validates each task's `grader.args`."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    expect_path: str
    """A dotted path into the trial's seeded content (e.g. target.issue_title)."""
    max_words: int = 20
    """The most words the answer may have."""


def short_answer(inp: GradeInput) -> Grade:
    """Passes when the answer names the value at `expect_path` in at most `max_words` words."""
    args = ShortAnswerArgs.model_validate(inp.args)
    answer = (inp.final_answer or "").strip()
    if not answer:
        return Grade(outcome="failed", reason="no answer")
    expected = _lookup(inp.content, args.expect_path)
    if expected is None:
        return Grade(outcome="failed", reason=f"{args.expect_path} is not in the content")
    words = len(answer.split())
    details = {"words": words}
    if words > args.max_words:
        reason = f"expected at most {args.max_words} words; found {words}"
        return Grade(outcome="failed", reason=reason, details=details)
    if str(expected).casefold() not in answer.casefold():
        reason = f"expected the answer to name {str(expected)!r}; found {answer[:60]!r}"
        return Grade(outcome="failed", reason=reason, details=details)
    return Grade(outcome="passed", reason=f"names {str(expected)!r}", details=details)


short_answer.args_model = ShortAnswerArgs  # type: ignore[attr-defined]


def _lookup(content: dict[str, Any], path: str) -> Any:
    value: Any = content
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value
