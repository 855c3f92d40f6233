"""The 13-field scorer for answers to the common prompt, and the pairbench grader over it.

Rules (fixed in ``study/protocol.md`` before any run):

- **Text around the JSON.** Surrounding whitespace is ignored. If the whole answer is one
  Markdown code fence (an opening line of three backticks, optionally followed by ``json``
  in any case, and a closing line of three backticks), that one fence is stripped. Nothing
  else is removed: prose before or after the object, two fences, or a fence inside a
  fence leave text that is not one JSON value, which is a **parse failure**.
- **Parse failure** (``parse_failure=True``, no field scores, never a zero score): the text
  is not valid JSON, the top-level value is not an object, or an object repeats a key.
- **NaN and Infinity.** The tokens ``NaN``, ``Infinity`` and ``-Infinity`` are read (they
  are not a parse failure), but a non-finite number never equals anything: that field
  is wrong, and the other fields still count.
- **Fields.** ``k`` must be a JSON number (not a boolean or a string) exactly equal to
  the reference count; ``excluded`` must be exactly ``["s04"]``; ``rule_outcome`` must be
  exactly one of the reference strings (case-sensitive, no trimming). Meta-analysis numbers
  (estimate, ci_lower, ci_upper, p) are right within an absolute 0.0005, ``egger_p``
  within 0.000005, inclusive; a string such as ``"0.08"`` is wrong. A missing section or
  field is wrong; extra keys are ignored.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from pairbench.grading._protocol import GradeInput
from pairbench.store._records import Grade
from pairbench.studies.webmcp_vs_pdf._reference import reference_answer

META_TOLERANCE = 0.0005
EGGER_TOLERANCE = 0.000005
TOTAL_FIELDS = 13

_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n(.*?)\r?\n[ \t]*```\Z", re.DOTALL | re.IGNORECASE)
_NUMERIC = ("estimate", "ci_lower", "ci_upper", "p")
# (section, field, rule); rule is "exact" or the absolute tolerance.
_FIELDS: tuple[tuple[str, str, str | float], ...] = (
    ("overall", "k", "exact"),
    *(("overall", name, META_TOLERANCE) for name in _NUMERIC),
    ("exclude_s04", "k", "exact"),
    *(("exclude_s04", name, META_TOLERANCE) for name in _NUMERIC),
    ("exclude_s04", "excluded", "exact"),
    ("bias", "egger_p", EGGER_TOLERANCE),
    ("bias", "rule_outcome", "exact"),
)
assert len(_FIELDS) == TOTAL_FIELDS


class _DuplicateKey(ValueError):
    pass


@dataclass(frozen=True)
class FieldScore:
    """One of the 13 fields: what was expected, what the answer held, and the verdict."""

    path: str
    """``section.field``, e.g. ``overall.estimate``."""
    expected: Any
    got: Any
    """The answer's value (JSON-safe: non-finite numbers as strings); None when missing."""
    present: bool
    correct: bool
    rule: str
    """``exact`` or ``abs<=TOL``."""


@dataclass(frozen=True)
class Score:
    """A scored answer. On a parse failure ``fields`` is empty: it is not a zero score."""

    fields: list[FieldScore]
    correct: int
    total: int
    parse_failure: bool
    reason: str

    @property
    def label(self) -> str:
        """``13/13``, ``11/13`` or ``parse failure``."""
        return "parse failure" if self.parse_failure else f"{self.correct}/{self.total}"


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"duplicate key {key!r}")
        out[key] = value
    return out


def parse_answer(raw: str) -> dict[str, Any] | str:
    """The answer's JSON object, or a string saying why it is a parse failure."""
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = json.loads(text, object_pairs_hook=_reject_duplicates)
    except _DuplicateKey as exc:
        return f"invalid JSON: {exc}"
    except (ValueError, RecursionError) as exc:
        return f"invalid JSON: {str(exc)[:120]}"
    if not isinstance(value, dict):
        return f"the answer is a JSON {type(value).__name__}, not an object"
    return value


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    encoded = json.dumps(value, allow_nan=True, default=str)
    if len(encoded) > 200 or "NaN" in encoded or "Infinity" in encoded:
        return encoded[:200]
    return value


def _finite_number(value: Any) -> float | None:
    """The value as a float if it is a finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer literal beyond float range
        return None
    return number if math.isfinite(number) else None


def _field(
    answer: dict[str, Any], reference: dict[str, Any], spec: tuple[str, str, str | float]
) -> FieldScore:
    section, name, rule = spec
    expected = reference[section][name]
    block = answer.get(section)
    present = isinstance(block, dict) and name in block
    got = block[name] if present and isinstance(block, dict) else None
    if not present:
        correct = False
    elif rule == "exact":
        if name == "k":
            number = _finite_number(got)
            correct = number is not None and number == expected
        else:
            correct = type(got) is type(expected) and got == expected
    else:
        tolerance = float(rule)
        number = _finite_number(got)
        correct = number is not None and abs(number - float(expected)) <= tolerance
    return FieldScore(
        path=f"{section}.{name}",
        expected=expected,
        got=_json_safe(got),
        present=present,
        correct=bool(correct),
        rule="exact" if isinstance(rule, str) else f"abs<={rule:.6f}".rstrip("0"),
    )


@cache
def _cached_reference() -> dict[str, Any]:
    return reference_answer()


def _default_reference() -> dict[str, Any]:
    # A copy: field scores carry the expected values out to callers, who may mutate them.
    return copy.deepcopy(_cached_reference())


def score_answer(raw: str, reference: dict[str, Any] | None = None) -> Score:
    """Score a raw answer against the reference (default: :func:`reference_answer`).

    **Usage**::

        score_answer('{"overall": {"k": 19, ...}, ...}').label   # '13/13'
        score_answer("not json").parse_failure                   # True
    """
    ref = _default_reference() if reference is None else reference
    parsed = parse_answer(raw)
    if isinstance(parsed, str):
        return Score(fields=[], correct=0, total=TOTAL_FIELDS, parse_failure=True, reason=parsed)
    fields = [_field(parsed, ref, spec) for spec in _FIELDS]
    correct = sum(f.correct for f in fields)
    wrong = [f.path for f in fields if not f.correct]
    reason = "all fields correct" if not wrong else "wrong: " + ", ".join(wrong)
    return Score(
        fields=fields, correct=correct, total=TOTAL_FIELDS, parse_failure=False, reason=reason
    )


def grade_webmcp_answer(inp: GradeInput) -> Grade:
    """Grader: passed iff 13/13; ``parse_failure`` when the answer is not one JSON object.

    A trial with no final answer at all is ``failed`` (reason ``no answer``): there was no
    text to parse. ``details`` carries ``correct``, ``total`` and the field scores.

    **Usage**::

        grade_webmcp_answer(GradeInput(task, {}, {}, None, answer_text)).outcome
    """
    if inp.final_answer is None or not inp.final_answer.strip():
        return Grade(outcome="failed", reason="no answer", details={"correct": 0, "total": 13})
    score = score_answer(inp.final_answer)
    details: dict[str, Any] = {
        "correct": score.correct,
        "total": score.total,
        "fields": [asdict(f) for f in score.fields],
    }
    if score.parse_failure:
        return Grade(outcome="parse_failure", reason=score.reason, details=details)
    outcome = "passed" if score.correct == score.total else "failed"
    return Grade(outcome=outcome, reason=f"{score.label}: {score.reason}", details=details)
