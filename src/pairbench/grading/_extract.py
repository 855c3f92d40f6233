"""Finding a value in an agent's free-text answer: plain text, numbers, JSON and paths in it."""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple


def normalize(text: str, case_sensitive: bool = False) -> str:
    """Whitespace runs become one space; case is folded unless ``case_sensitive``.

    >>> normalize("  Fix\\n  Login ")
    'fix login'
    """
    joined = " ".join(text.split())
    return joined if case_sensitive else joined.casefold()


# Markdown an agent wraps around an answer: **bold**, `code`, [text](url), "# " headings.
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
# A mark opens at no word's end and closes at none's start: "2*3*4" keeps its stars.
_PAIRED = re.compile(r"(?<![\w\\])(\*\*|__|~~|`+|\*)(?=\S)(.+?)(?<=\S)\1(?!\w)", re.S)
_LINE_MARK = re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+)", re.M)
_NUMBERED = re.compile(r"^[ \t]{0,3}\d{1,3}[.)][ \t]+", re.M)


def plain(text: str) -> str:
    """``text`` without its markdown marks (emphasis, code spans, links, headings, bullets).

    >>> plain("# Answer\\n- The title is **Fix `login`** ([link](http://x)).")
    'Answer\\nThe title is Fix login (link).'
    >>> plain("2*3*4 is 24")
    '2*3*4 is 24'
    """
    text = _LINE_MARK.sub("", _LINK.sub(r"\1", text))
    while True:  # nested marks (**`x`**) come off one layer at a time
        stripped = _PAIRED.sub(r"\2", text)
        if stripped == text:
            return text
        text = stripped


def without_list_numbers(text: str) -> str:
    """``text`` without the numbers of its numbered list, when it has one (two items or more).

    One line opening with a number is an answer ("42. That is all."), not a list.

    >>> without_list_numbers("1. Open issues: 4\\n2. Closed: 9")
    'Open issues: 4\\nClosed: 9'
    >>> without_list_numbers("42. That is all.")
    '42. That is all.'
    """
    return _NUMBERED.sub("", text) if len(_NUMBERED.findall(text)) >= 2 else text


# A number: an optional sign, digits (with commas between thousands), a decimal part and an
# exponent. The lookbehind keeps the tail of a word or a version out: "issue-7" reads 7 (the
# hyphen is no minus sign), "v2" and "1.2.3"'s "2" read nothing.
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+\u2212](?=\.?\d))?"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<exp>[eE][-+]?\d+)?"
)


class Number(NamedTuple):
    """A number found in text: its exact value and where it was."""

    value: Decimal
    text: str
    start: int


def numbers(text: str) -> list[Number]:
    """Every number in ``text``, in order.

    >>> [str(n.value) for n in numbers("Paid -1,234.50 (was 1,000) on 2024-05-01, v2.")]
    ['-1234.50', '1000', '2024', '5', '1']
    >>> [n.text for n in numbers("−3 and 1e3 and .5")]
    ['−3', '1e3', '.5']
    """
    found = []
    for match in _NUMBER.finditer(text):
        sign = "-" if match["sign"] in ("-", "\u2212") else ""
        digits = match["digits"].replace(",", "")
        found.append(Number(Decimal(sign + digits + (match["exp"] or "")), match[0], match.start()))
    return found


def as_number(value: Any) -> Decimal | None:
    """``value`` as an exact number: an int, a float, or text that is one number.

    >>> as_number(0.1), as_number("1,234"), as_number(True), as_number("12 apples")
    (Decimal('0.1'), Decimal('1234'), None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    if isinstance(value, str):
        found = numbers(value)
        if len(found) == 1 and found[0].text == value.strip():
            return found[0].value
    return None


def show_number(value: Decimal) -> str:
    """``Decimal('1234.50')`` -> ``'1234.5'``, never in exponent form."""
    text = f"{value.normalize():f}"
    return "0" if text in ("-0", "+0") else text


class FoundJson(NamedTuple):
    """A JSON value found in an answer, and where."""

    value: Any
    where: str
    """``the answer``, ``its json block`` or ``the JSON at character N``."""


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)\n[ \t]*```", re.S)
_MAX_STARTS = 200  # where a JSON value may begin; an answer is a few KiB, not a corpus


def _reject(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _decode(text: str) -> Any:
    # NaN and Infinity are Python's extension, not JSON, and cannot be stored in a result.
    return json.loads(text, parse_constant=_reject)


def find_json(text: str) -> FoundJson | str:
    """The JSON in an answer, or (text) why there is none.

    Tried in order: the whole answer; a fenced block labelled ``json`` (then an unlabelled
    one); the first object or array that parses, wherever it starts.

    >>> find_json('Here it is:\\n```json\\n{"a": [1, 2]}\\n```').value
    {'a': [1, 2]}
    >>> find_json('I found {"id": 7} in the store.')
    FoundJson(value={'id': 7}, where='the JSON at character 9')
    >>> find_json("no json {here")
    'no JSON object or array in the answer'
    """
    first_error = ""
    try:
        return FoundJson(_decode(text), "the answer")
    except (ValueError, RecursionError):
        pass
    blocks = sorted(_FENCE.finditer(text), key=lambda m: m[1].lower() != "json")
    for block in blocks:
        if block[1].lower() not in ("json", ""):
            continue
        try:
            return FoundJson(_decode(block[2]), "its json block")
        except (ValueError, RecursionError) as exc:
            first_error = first_error or f"its json block does not parse ({exc})"
    decoder = json.JSONDecoder(parse_constant=_reject)
    starts = [m.start() for m in re.finditer(r"[\[{]", text)][:_MAX_STARTS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        return FoundJson(value, f"the JSON at character {start + 1}")
    return first_error or "no JSON object or array in the answer"


Step = str | int

_KEY = re.compile(r"[A-Za-z0-9_\-]+")
_BRACKET = re.compile(r"\[(?:(?P<index>\d+)|\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)')\]")


def parse_path(path: str) -> tuple[Step, ...]:
    """The steps of a path such as ``items[0].name`` (``$`` alone: the whole value).

    Keys are joined by dots; ``[n]`` is a list index and ``["a key"]`` a key with other
    characters. A leading ``$`` or ``$.`` is allowed, as in JSONPath.

    >>> parse_path("$.items[0].name"), parse_path('meta["content-type"]'), parse_path("$")
    (('items', 0, 'name'), ('meta', 'content-type'), ())
    >>> parse_path("items[x]")
    Traceback (most recent call last):
    ...
    ValueError: path 'items[x]' is not valid at character 6: use keys joined by dots and \
[n] for a list index, e.g. items[0].name
    """
    dollar = path.startswith("$")
    body = path[1:] if dollar else path
    if dollar and not body:
        return ()
    steps: list[Step] = []
    pos = 0
    while pos < len(body) or not body:
        match: re.Match[str] | None
        if body.startswith("[", pos):
            match = _BRACKET.match(body, pos)
            if match:
                index, dq, sq = match["index"], match["dq"], match["sq"]
                steps.append(int(index) if index is not None else dq if dq is not None else sq)
        else:
            dotted = dollar or bool(steps)  # a key needs a dot after another step, none first
            match = None
            if body.startswith(".", pos) == dotted:
                match = _KEY.match(body, pos + dotted)
            if match:
                steps.append(match[0])
        if match is None:
            raise ValueError(
                f"path '{path}' is not valid at character {pos + dollar + 1}: use keys joined "
                "by dots and [n] for a list index, e.g. items[0].name"
            )
        pos = match.end()
    return tuple(steps)


def format_steps(steps: tuple[Step, ...]) -> str:
    """``('items', 0, 'name')`` -> ``items[0].name`` (``$`` for no steps)."""
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _KEY.fullmatch(step):
            out += f".{step}" if out else step
        else:
            out += f"[{json.dumps(step)}]"
    return out or "$"


class Walked(NamedTuple):
    """Where a path led: the value, or the first step that was not there."""

    found: bool
    value: Any
    reached: tuple[Step, ...]
    """The steps that were there (all of them when ``found``)."""


def walk(value: Any, steps: tuple[Step, ...]) -> Walked:
    """Follow ``steps`` into a JSON value; a dotted digit (``items.0``) indexes a list too."""
    for i, step in enumerate(steps):
        if isinstance(value, dict) and isinstance(step, str) and step in value:
            value = value[step]
        elif isinstance(value, list) and (index := _index(step)) is not None and index < len(value):
            value = value[index]
        else:
            return Walked(False, value, steps[:i])
    return Walked(True, value, steps)


def _index(step: Step) -> int | None:
    return step if isinstance(step, int) else int(step) if step.isdigit() else None


def describe(value: Any) -> str:
    """What kind of JSON value ``value`` is, for a reason: ``a list of 2``, ``text``."""
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:8])) + (", …" if len(value) > 8 else "")
        return f"an object with keys {keys}" if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, bool) or value is None:
        return "true/false" if value is not None else "null"
    return "text" if isinstance(value, str) else "a number"


def json_equal(found: Any, expected: Any, case_sensitive: bool) -> bool:
    """JSON equality: true is not 1, 1 is 1.0, text is compared as ``normalize`` does."""
    if isinstance(found, bool) or isinstance(expected, bool):
        return found is expected
    if isinstance(found, int | float) and isinstance(expected, int | float):
        return found == expected
    if isinstance(found, str) and isinstance(expected, str):
        return normalize(found, case_sensitive) == normalize(expected, case_sensitive)
    if isinstance(found, list) and isinstance(expected, list):
        return len(found) == len(expected) and all(
            json_equal(f, e, case_sensitive) for f, e in zip(found, expected, strict=True)
        )
    if isinstance(found, dict) and isinstance(expected, dict):
        return found.keys() == expected.keys() and all(
            json_equal(found[k], expected[k], case_sensitive) for k in found
        )
    return found is None and expected is None


def json_text(value: Any) -> str:
    """``value`` as compact JSON for a reason, cut to 60 characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"
