"""The heuristic engine's ``judge`` mode: recorded sessions, judged from their records only.

Per step: a refused step (action ``refuse``; a fill, hover, press or upload on an email,
message, upload, payment or sign-in field; a click on a sign-in control) is set aside
(``safety``); a ``missed`` hand is set aside (``our_hand``); 403/429 or a bot-wall snapshot
is ``environment``; a 5xx, or error text the previous snapshot did not show (never on the
first page), is published (``product_behavior``); so is the first click that left the page
exactly as it was for the rest of the recording on that page. A recorded status is the last
navigation's, so it counts only at the step whose URL or status changed.

Per sentence (its evidence is the snapshot, URL and status of the step it follows and the
step before, so stale narration about older pages finds no support): every number (with
a counted plural after it) and every quoted phrase must appear in that evidence; a success
claim needs a success text there and a hand that did not miss; a failure claim needs a 5xx
or error text there ("nothing happened" may instead rest on a click that left the page as
it was); an absence claim needs at least three distinct pages answered 200 so far. A
sentence that fails is ``dropped``; others (reactions included) are ``kept``.

>>> _specific_tokens('Order #58213 went through: "Saturday lunch" with 2 items.')
['saturday lunch', '58213', '2 items']
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pairbench.studies.attribution_reliability._heuristic_outcome import (
    Aside,
    Blame,
    UserResult,
    merge,
    quoted,
)
from pairbench.studies.attribution_reliability._heuristic_rules import (
    ENVIRONMENT_STATUSES,
    ERROR_PATTERN,
    INTERSTITIAL_PATTERN,
    REASONABLE_PAGES,
    SAFETY_CONTROL_PATTERN,
    STOP_WORDS,
    SUCCESS_PATTERN,
    norm,
    safety_kind,
)
from pairbench.studies.attribution_reliability.engines._models import (
    EngineReport,
    Quote,
    RecordedSession,
    RecordedStep,
)

SUCCESS_CLAIM = re.compile(
    r"\b(went through|(is|was|been|got) (placed|booked|confirmed|sent|saved|created|submitted)"
    r"|worked|successful(ly)?|all done|it'?s done|confirmed|i got a confirmation|added)\b",
    re.IGNORECASE,
)
FAILURE_CLAIM = re.compile(
    r"\b(did ?n[o']t work|does ?n[o']t work|not working|broken|error|crash(ed|es)?"
    r"|failed|fails|faulty|stuck|won'?t (let|work|load))\b",
    re.IGNORECASE,
)
NO_EFFECT_CLAIM = re.compile(
    r"\b(nothing happen(s|ed)|does nothing|did nothing|did ?n[o']t do anything|still loading"
    r"|still spinning|never (answers|loads|finishes)|gives me nothing|nothing (appears|shows))\b",
    re.IGNORECASE,
)
"""A claim that an action had no effect: only a page left exactly as it was supports it."""
ABSENCE_CLAIM = re.compile(
    r"\b(there'?s no|there is no|there are no|can'?t find|could ?n[o']t find|nowhere"
    r"|does ?n[o']t (have|show|list|exist)|is ?n[o']t (there|listed)|missing|no mention"
    r"|no longer exists?)\b",
    re.IGNORECASE,
)
_REFUSE_ACTIONS = ("refuse", "refused", "refusal")
_EFFECT_ACTIONS = ("click", "press", "wait")
_FIELD_ACTIONS = ("fill", "type", "upload", "set_input_files", "select", "press", "hover")
"""A scripted hand never fills a safety field; acting on one is where our rule refuses."""


def judge_sessions(sessions: list[RecordedSession]) -> EngineReport:
    """One report over every recorded session (users are marked ``scripted``)."""
    return merge([_judge(session) for session in sessions])


def _judge(session: RecordedSession) -> UserResult:
    result = UserResult(user=session.user, scripted=True)
    pages_ok: list[str] = []
    for i, step in enumerate(session.steps):
        prev = session.steps[i - 1] if i else None
        path = urlsplit(step.url).path
        if step.status == 200 and path not in pages_ok:
            pages_ok.append(path)
        _step_outcome(result, step, prev)
        evidence = _evidence(step, prev)
        for sentence in step.sentences:
            keep = _supported(sentence, step, evidence, len(pages_ok), _unchanged(step, prev))
            result.quotes.append(
                Quote(user=session.user, text=sentence, status="kept" if keep else "dropped")
            )
    _dead_click(result, session.steps)
    return result


def _dead_click(result: UserResult, steps: list[RecordedStep]) -> None:
    """Publish the first click that left the page exactly as it was for the rest of the
    recording on that page (a result that came later, after a wait, clears it)."""
    for i, step in enumerate(steps):
        if step.action != "click" or not _unchanged(step, steps[i - 1] if i else None):
            continue
        later = [s for s in steps[i + 1 :] if s.url == step.url]
        if any(s.snapshot != step.snapshot for s in later):
            continue
        result.blames.append(
            Blame(
                key=f"dead:{step.target}",
                scope="product_behavior",
                headline=f"'{step.target}' does nothing when clicked",
                what_happened=f"The hand clicked '{step.target}' (step {step.step}); the page "
                "stayed exactly as it was for the rest of the recording.",
                why_it_matters="The recorded user could not continue past this step.",
                evidence=f"{result.user}, step {step.step}: unchanged page after the click",
            )
        )
        return


def _step_outcome(result: UserResult, step: RecordedStep, prev: RecordedStep | None) -> None:
    target = step.target or urlsplit(step.url).path or step.action
    where = f"step {step.step}"
    # A refusal first: a refused step may also be recorded as a hand that did not act.
    if _refused(step):
        result.asides.append(
            Aside(f"safety:{target}", "safety", f"Our safety rule refused '{target}' ({where}).")
        )
        return
    if step.hand == "missed":
        result.asides.append(
            Aside(f"hand:{target}", "our_hand", f"Our hand missed '{target}' ({where}).")
        )
        return
    # A recorded status is the last navigation's: it speaks for the step that navigated.
    status = step.status if _navigated(step, prev) else None
    wall = INTERSTITIAL_PATTERN.search(step.snapshot[:2000])
    if status in ENVIRONMENT_STATUSES or wall:
        seen = f"HTTP {status}" if status in ENVIRONMENT_STATUSES else "a bot wall"
        result.asides.append(
            Aside(f"env:{seen}", "environment", f"The site answered {seen} at {where}.")
        )
        return
    why = "The recorded user could not continue past this step."
    if status is not None and status >= 500:
        result.blames.append(
            Blame(
                key=f"5xx:{target}",
                scope="product_behavior",
                headline=f"'{target}' fails with a server error",
                what_happened=f"After '{target}' ({where}) the site answered {status}.",
                why_it_matters=why,
                evidence=f"{result.user}, {where}: HTTP {status} at {urlsplit(step.url).path}",
            )
        )
        return
    error = ERROR_PATTERN.search(step.snapshot)
    # The first page's standing text (an FAQ saying "if a payment failed") blames nothing.
    if error and prev is not None and not ERROR_PATTERN.search(prev.snapshot):
        text = quoted(step.snapshot[max(0, error.start() - 40) : error.end() + 60])
        result.blames.append(
            Blame(
                key=f"error:{target}",
                scope="product_behavior",
                headline=f"'{target}' shows an error",
                what_happened=f"After '{target}' ({where}) the page said: \"{text}\".",
                why_it_matters=why,
                evidence=f"{result.user}, {where}: error text in the page",
            )
        )


def _navigated(step: RecordedStep, prev: RecordedStep | None) -> bool:
    return prev is None or step.url != prev.url or step.status != prev.status


def _refused(step: RecordedStep) -> bool:
    action = step.action.lower()
    if action in _REFUSE_ACTIONS:
        return True
    if action in _FIELD_ACTIONS and safety_kind(step.target, "", "", "") is not None:
        return True
    return action == "click" and bool(SAFETY_CONTROL_PATTERN.search(step.target))


def _evidence(step: RecordedStep, prev: RecordedStep | None) -> str:
    parts = []
    for s in (prev, step):
        if s is not None:
            parts += [s.snapshot, s.url, f"status {s.status}" if s.status is not None else ""]
    return norm(" ".join(parts))


def _specific_tokens(sentence: str) -> list[str]:
    """The checkable parts of a sentence, normalized: quoted phrases, and numbers (with the
    word after them when it reads as a counted plural, so "2 items" is not met by "£2")."""
    found: list[str] = []
    for match in re.finditer(
        r"[\"\u201c\u2018']([^\"\u201d\u2019']{2,60})[\"\u201d\u2019']", sentence
    ):
        found.append(norm(match.group(1)))
    text = re.sub(
        r"[\"\u201c\u2018\u201d\u2019']([^\"\u201d\u2019']{2,60})[\"\u201d\u2019']", " ", sentence
    )
    for match in re.finditer(r"(\d[\d,.:]*)(?:\s+([A-Za-z]+))?", text):
        number = match.group(1).rstrip(".,:")
        word = (match.group(2) or "").lower()
        plural = word.endswith("s") and len(word) > 2 and word not in STOP_WORDS
        found.append(f"{number} {word}" if plural else number)
    return found


def _present(token: str, evidence: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", evidence) is not None


def _unchanged(step: RecordedStep, prev: RecordedStep | None) -> bool:
    """A click the hand made that left the page exactly as it was (supports "nothing
    happened"; never published alone, since a result may come after the recording moved
    on)."""
    return (
        prev is not None
        and step.action in _EFFECT_ACTIONS
        and step.hand == "ok"
        and step.url == prev.url
        and step.snapshot == prev.snapshot
    )


def _supported(
    sentence: str, step: RecordedStep, evidence: str, pages_ok: int, unchanged: bool
) -> bool:
    if any(not _present(token, evidence) for token in _specific_tokens(sentence)):
        return False
    if SUCCESS_CLAIM.search(sentence) and (
        step.hand == "missed" or not SUCCESS_PATTERN.search(evidence)
    ):
        return False
    if NO_EFFECT_CLAIM.search(sentence) and not unchanged:
        return False
    if FAILURE_CLAIM.search(sentence) and not (
        ERROR_PATTERN.search(evidence) or (step.status is not None and step.status >= 500)
    ):
        return False
    return not (ABSENCE_CLAIM.search(sentence) and pages_ok < REASONABLE_PAGES)
