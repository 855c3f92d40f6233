"""The heuristic engine's fixed rules: word lists, patterns, fixed inputs and their hash.

Every rule the reference engine applies lives here as data, so ``RULES_SHA256`` names the
exact rule set a run used (it goes into the engine identity). Rules were written against
the design's calibration mechanisms and are never tuned on held-out results.

>>> sorted(goal_words("You want to order a birthday cake for Saturday."))
['birthday', 'cake', 'order', 'saturday']
>>> match_score({"order", "cake"}, "Place order")
1
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

_STOP = """a an and are as at be but by can do does for from get have how i if in into is it its
    me my of on or our out so some that the their them then there these they this to up us
    want wants was we what when where which who will with would you your yours need needs
    like just also about any all find know see check look make sure please today now"""
STOP_WORDS = frozenset(_STOP.split())
"""Words that never make a control relevant to a goal."""

INFO_CUES = ("find out", "know", "check", "look up", "how ", "when ", "what ", "where ")
"""A goal with one of these asks for information (met by an answer on a page); any other
goal asks for an action (met by a confirmation)."""

ERROR_PATTERN = re.compile(
    r"\b(error|went wrong|failed|invalid|not valid|isn'?t valid|could ?n[o']t|unable to"
    r"|please enter a valid|problem with your)\b",
    re.IGNORECASE,
)
"""Text that reports a failure when it appears after an action."""

SUCCESS_PATTERN = re.compile(
    r"\b(thank you|thanks|confirmed|confirmation|success(ful(ly)?)?|saved|sent|booked"
    r"|reserved|placed|added to|order number|reference number|received|downloaded)\b",
    re.IGNORECASE,
)
"""Text that reports success when it appears after an action."""

INTERSTITIAL_PATTERN = re.compile(
    r"(checking your browser|verify(ing)? (that )?you are (a )?human|just a moment"
    r"|are you a robot|unusual traffic|access denied|too many requests)",
    re.IGNORECASE,
)
"""Bot walls and rate limits: the environment, not the product."""

ENVIRONMENT_STATUSES = frozenset({403, 429})

SAFETY_FIELD_WORDS = {
    "upload": ("upload", "attach", "cv", "resume", "file"),
    "email": ("email", "e-mail"),
    "message": ("message", "comment", "enquiry", "inquiry", "question"),
    "payment": ("card", "cvc", "cvv", "expiry", "iban", "payment"),
    "sign-in": ("password", "sign in", "log in", "login", "username"),
}
"""A field whose label or name holds one of these is never filled (we refuse)."""

SAFETY_CONTROL_PATTERN = re.compile(r"\b(sign ?in|log ?in|sign ?up|subscribe)\b", re.IGNORECASE)
"""A control that signs in or subscribes is refused, whatever the goal."""

FIXED_VALUES = (
    (("phone", "tel", "mobile"), "020 7946 0000"),
    (("post code", "postcode", "zip"), "SW1A 1AA"),
    (("quantity", "qty", "how many", "guests", "people", "number"), "2"),
    (("date", "day"), "2027-06-12"),
    (("time",), "12:30"),
    (("name",), "Alex Morgan"),
)
"""Valid values by what a field's label says (first match wins)."""

POSTCODE_PATTERN = re.compile(r"\b[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}\b")
"""A UK postcode the goal names is typed into a postcode field instead of the fixed one."""

SEARCH_CUES = ("search", "find", "look", "keyword")
"""A field labelled so, or submitted by a control named so, is typed with the goal's words."""

TYPE_VALUES = {"tel": "020 7946 0000", "number": "2", "date": "2027-06-12", "time": "12:30"}
DEFAULT_TEXT = "Alex Morgan"

REASONABLE_PAGES = 3
"""A ``product_absence`` finding needs at least this many distinct pages visited."""

ANSWER_RULE = "one goal word and a digit, or two goal words in six words or more"
"""An information goal's answer: a visible text block outside navigation and controls."""


def norm(text: str) -> str:
    """NFKC, casefold, quotes deleted, whitespace collapsed (the study's tracking rule)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[\"'`\u2018\u2019\u201c\u201d]", "", text)
    return " ".join(text.split())


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Lower-case word stems of ``text`` (letters and digits), in order."""
    return [_stem(w) for w in re.findall(r"[a-z0-9]+", norm(text))]


def goal_words(goal: str) -> set[str]:
    """The goal's content words: stems of three letters or more, minus ``STOP_WORDS``."""
    return {w for w in words(goal) if len(w) >= 3 and w not in STOP_WORDS}


def _same(a: str, b: str) -> bool:
    # A shared prefix of four letters ("bill" / "billing") counts as the same word.
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def match_score(goal: set[str], name: str) -> int:
    """How many of the goal's words a control's accessible name shares."""
    names = [w for w in words(name) if len(w) >= 3 and w not in STOP_WORDS]
    return sum(1 for g in sorted(goal) if any(_same(g, n) for n in names))


def is_search(label: str) -> bool:
    """A search box or search button, by its name."""
    text = f" {norm(label)} "
    return any(re.search(rf"\b{c}", text) for c in SEARCH_CUES)


def is_info_goal(goal: str) -> bool:
    text = f" {norm(goal)} "
    return any(cue in text for cue in INFO_CUES) or "?" in goal


def safety_kind(label: str, input_type: str, autocomplete: str, tag: str) -> str | None:
    """Why a field must not be filled (``upload``, ``email``, ...), or ``None``."""
    if input_type == "file":
        return "upload"
    if input_type == "email":
        return "email"
    if input_type == "password":
        return "sign-in"
    if autocomplete.startswith("cc-"):
        return "payment"
    if tag == "textarea":
        return "message"
    text = f" {norm(label)} "
    for kind, cues in SAFETY_FIELD_WORDS.items():
        if any(re.search(rf"\b{re.escape(c)}\b", text) for c in cues):
            return kind
    return None


def fixed_value(label: str, input_type: str, goal: str = "") -> str:
    """The fixed valid value the engine types into a field (a postcode from the goal).

    >>> fixed_value("Postcode", "text", "Do you deliver to SE15 4QF?")
    'SE15 4QF'
    """
    if input_type in TYPE_VALUES:
        return TYPE_VALUES[input_type]
    text = norm(label)
    postcode = POSTCODE_PATTERN.search(goal)
    if postcode and any(c in text for c in ("post code", "postcode", "zip")):
        return postcode.group(0)
    for cues, value in FIXED_VALUES:
        if any(re.search(rf"\b{re.escape(c)}", text) for c in cues):
            return value
    return DEFAULT_TEXT


def rules_digest() -> str:
    """SHA-256 over every rule above: the engine identity pins it."""
    data = {
        "stop": sorted(STOP_WORDS),
        "info": INFO_CUES,
        "patterns": [
            p.pattern
            for p in (ERROR_PATTERN, SUCCESS_PATTERN, INTERSTITIAL_PATTERN, SAFETY_CONTROL_PATTERN)
        ],
        "env": sorted(ENVIRONMENT_STATUSES),
        "safety": SAFETY_FIELD_WORDS,
        "values": [[*c, v] for c, v in FIXED_VALUES],
        "types": TYPE_VALUES,
        "default": DEFAULT_TEXT,
        "pages": REASONABLE_PAGES,
        "answer": ANSWER_RULE,
        "postcode": POSTCODE_PATTERN.pattern,
        "search": SEARCH_CUES,
    }
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


RULES_SHA256 = rules_digest()
