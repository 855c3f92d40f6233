"""One heuristic user on one site: choose a control, act, read what happened, repeat.

Choice order at every step (first that applies): a visible control sharing the most goal
words (content before navigation, then DOM order); a hidden one, revealed by hovering its
nearest visible ancestor or opening its ``details``; a form that is there (its fields
filled); a search box (typed with the goal's words); collapsed sections, opened; a scroll
to the bottom; an unvisited same-site link in the content, a link a hover menu hides, one
in the navigation. Links to other sites are followed only when they name the goal (and
then set aside as ``out_of_scope``). A user stops at a confirmation or an answer, a
published finding, a set-aside stop, no choice left, or the budget.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pairbench.studies.attribution_reliability._heuristic_act import (
    Act,
    Press,
    form_fields,
    is_field,
    is_search_box,
    is_submit,
    is_web,
)
from pairbench.studies.attribution_reliability._heuristic_outcome import (
    Aside,
    Blame,
    HeuristicSettings,
    UserResult,
    quoted,
)
from pairbench.studies.attribution_reliability._heuristic_rules import (
    REASONABLE_PAGES,
    SAFETY_CONTROL_PATTERN,
    goal_words,
    is_info_goal,
    is_search,
    match_score,
    safety_kind,
    words,
)
from pairbench.studies.attribution_reliability.engines._models import (
    Budget,
    ClaimScope,
    Observation,
    Persona,
    SetAsideReason,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page


class UserVisit:
    """Browse as one persona in its own browser context's page."""

    def __init__(
        self,
        page: Page,
        persona: Persona,
        start_url: str,
        budget: Budget,
        settings: HeuristicSettings,
    ) -> None:
        self.page, self.persona, self.start_url = page, persona, start_url
        self.budget, self.settings = budget, settings
        self.goal = goal_words(persona.goal)
        self.goal_order = list(dict.fromkeys(w for w in words(persona.goal) if w in self.goal))
        self.info = is_info_goal(persona.goal)
        self.host = urlsplit(start_url).netloc
        self.result = UserResult(user=persona.user)
        self.act = Act(page, self.host, settings)
        self.used: set[tuple[str, str, str, str]] = set()
        self.done: set[tuple[str, str]] = set()
        self.visited: list[str] = []
        self.promise = ""
        self.steps = 0
        self.stopped = False
        self.met = ""

    # --- the loop -------------------------------------------------------------------

    def run(self) -> UserResult:
        deadline = time.monotonic() + self.budget.seconds_per_user
        press = self.act.goto(self.start_url)
        self._observe("start page", "", press)
        # The start page's standing text (an FAQ saying "if a payment failed") is no outcome.
        self._judge(replace(press, error_text="", alert_error=""), "the start page", submit=False)
        while not self.stopped and self.steps < self.budget.actions_per_user:
            if time.monotonic() > deadline:
                self._aside("insufficient_evidence", "time", "Ran out of time for this visit.")
                break
            if self.info and self._answer():
                break
            if not self._step():
                break
        self._finish()
        return self.result

    def _step(self) -> bool:
        controls = self.act.controls()
        path = self._path()
        fresh = [c for c in controls if not c["disabled"] and self._key(c) not in self.used]
        fresh = [c for c in fresh if not self._seen_link(c) and is_web(c)]
        goal_hits = sorted(
            (c for c in fresh if not is_field(c) and match_score(self.goal, c["name"]) > 0),
            # Content before navigation at equal score, then DOM order.
            key=lambda c: (-match_score(self.goal, c["name"]), c["chrome"], c["ref"]),
        )
        shown = [c for c in goal_hits if c["visible"]]
        if shown:
            return self._press(shown[0], controls)
        hidden = [c for c in goal_hits if c["reveal"] and (path, f"r{c['ref']}") not in self.done]
        if hidden:
            return self._reveal(hidden[0], path)
        forms = [c for c in fresh if c["visible"] and is_submit(c) and form_fields(c, controls)]
        if forms:
            return self._press(forms[0], controls, goal=False)
        search = [c for c in fresh if c["visible"] and is_search_box(c)]
        if search:
            return self._search(search[0])
        if self._expand(path) or self._scroll(path):
            return True
        # Read the page's own content before its navigation, and open menus on the way.
        site = [
            c
            for c in fresh
            if c["href"]
            and urlsplit(c["href"]).netloc == self.host
            and not SAFETY_CONTROL_PATTERN.search(c["name"])
        ]
        content = [c for c in site if c["visible"] and not c["chrome"]]
        if content:
            return self._press(content[0], controls)
        tucked = [c for c in site if c["reveal"] and (path, f"r{c['ref']}") not in self.done]
        if tucked:
            return self._reveal(tucked[0], path)
        chrome = [c for c in site if c["visible"]]
        if chrome:
            return self._press(chrome[0], controls)
        return False

    def _expand(self, path: str) -> bool:
        if (path, "expand") in self.done:
            return False
        self.done.add((path, "expand"))
        if not self.act.collapsed():
            return False
        self.steps += 1
        self._observe("collapsed sections", "every collapsed section", self.act.expand())
        return True

    def _scroll(self, path: str) -> bool:
        if (path, "scroll") in self.done:
            return False
        self.done.add((path, "scroll"))
        if not self.act.tall():
            return False
        self.steps += 1
        self._observe("scroll", "page bottom", self.act.scroll())
        return True

    # --- actions --------------------------------------------------------------------

    def _press(
        self, ctrl: dict[str, Any], controls: list[dict[str, Any]], *, goal: bool = True
    ) -> bool:
        """Click ``ctrl`` (filling its form first); ``goal`` is false for a form tried only
        because it is there, whose safety refusal then does not end the visit."""
        self.used.add(self._key(ctrl))
        self.steps += 1
        name = ctrl["name"] or ctrl["tag"]
        href_host = urlsplit(ctrl["href"]).netloc if ctrl["href"] else self.host
        if href_host and href_host != self.host:
            self._observe(name, f"link '{name}'", None, f"leads to {href_host}")
            self._aside(
                "out_of_scope",
                f"host:{href_host}",
                f"'{name}' leads to another site ({href_host}).",
            )
            return False
        if SAFETY_CONTROL_PATTERN.search(name):
            self._observe(name, f"control '{name}'", None, "refused")
            self._aside("safety", f"control:{name}", f"Refused to use '{name}' (we never sign in).")
            return False
        submit = is_submit(ctrl)
        filled: dict[int, tuple[str, str]] = {}
        if submit:
            fields = form_fields(ctrl, controls)
            for field in fields:
                kind = safety_kind(
                    field["name"], field["type"], field["autocomplete"], field["tag"]
                )
                if kind is not None:
                    self._observe(name, f"field '{field['name']}'", None, "refused")
                    self._aside(
                        "safety",
                        f"field:{kind}",
                        f"Refused to fill the {kind} field '{field['name']}' (never filled).",
                        stop=goal,
                    )
                    return False
            query = " ".join(self.goal_order[:3])
            filled = self.act.fill(fields, self.persona.goal, query, searching=is_search(name))
        link = bool(ctrl["href"])
        if link and match_score(self.goal, name) > 0:
            self.promise = name
        press = self.act.press(ctrl["ref"], filled if submit else None)
        self._observe(name, f"{ctrl['role'] or ctrl['tag']} '{name}'", press)
        self._judge(press, name, submit=submit, filled=filled)
        return True

    def _reveal(self, ctrl: dict[str, Any], path: str) -> bool:
        self.done.add((path, f"r{ctrl['ref']}"))
        self.steps += 1
        how = ctrl["reveal"]["how"]
        press = self.act.reveal(ctrl["reveal"]["ref"], how)
        self._observe(ctrl["name"], f"{how} to show '{ctrl['name']}'", press)
        return True

    def _search(self, ctrl: dict[str, Any]) -> bool:
        self.used.add(self._key(ctrl))
        self.steps += 1
        text = " ".join(self.goal_order[:3])
        press = self.act.search(ctrl["ref"], text)
        self._observe(ctrl["name"] or "search", f"search field '{ctrl['name']}'", press)
        self._judge(press, ctrl["name"] or "Search", submit=False)
        return True

    # --- reading outcomes -----------------------------------------------------------

    def _judge(
        self,
        press: Press,
        name: str,
        *,
        submit: bool,
        filled: dict[int, tuple[str, str]] | None = None,
    ) -> None:
        if press.path and press.path not in self.visited and press.host == self.host:
            self.visited.append(press.path)
        # Never the goal's words: a finding is scored on its own text, not on the persona's.
        why = "It stops a visitor from finishing what they came to do."
        if press.host and press.host != self.host:
            self._aside(
                "out_of_scope",
                f"host:{press.host}",
                f"'{name}' leads to another site ({press.host}).",
            )
        elif press.env:
            self._aside(
                "environment",
                f"env:{press.env}",
                f"{press.env} after '{name}': the site turned away our automated browser"
                " or kept it waiting.",
            )
        elif press.server_error:
            self._blame(
                f"5xx:{name}",
                f"'{name}' fails with a server error",
                f"After '{name}', the site answered {press.server_error}.",
                why,
            )
        elif press.missed:
            self._aside(
                "our_hand", f"hand:{name}", f"Our hand could not reach '{name}'.", stop=False
            )
            return
        elif press.invalid_ours:
            label, value = press.invalid_ours
            self._blame(
                f"reject:{name}",
                f"'{name}' rejects a valid {label}",
                f"I entered '{value}' in '{label}' and clicked '{name}'; the form refused it.",
                why,
            )
        elif press.invalid_other:
            self._aside(
                "our_hand",
                f"fields:{name}",
                f"We could not complete the field '{press.invalid_other}' before '{name}'.",
            )
        elif error := (press.error_text if submit else "") or press.alert_error:
            self._blame(
                f"error:{name}",
                f"'{name}' shows an error",
                f"After '{name}', the page said: \"{quoted(error)}\".",
                why,
            )
        elif submit and not press.effect:
            wait = f"{self.settings.no_effect_wait_s:g}"
            self._blame(
                f"dead:{name}",
                f"'{name}' does nothing when clicked",
                f"I clicked '{name}'. No request was sent and the page did not change"
                f" within {wait} s.",
                why,
            )
        elif submit and press.success_text and not self.info:
            self.met = f"It worked after '{name}': \"{quoted(press.success_text)}\"."
            self.stopped = True

    def _answer(self) -> bool:
        for block in self.act.blocks():
            score = match_score(self.goal, block)
            figure = score > 0 and any(ch.isdigit() for ch in block)
            if figure or (score >= 2 and len(block.split()) >= 6):
                self.met = f'I found it: "{quoted(block)}".'
                return True
        return False

    def _finish(self) -> None:
        r = self.result
        if r.blames:
            r.takeaway = f"{r.blames[0].headline}."
        elif self.met:
            r.takeaway = self.met
        elif r.asides:
            r.takeaway = r.asides[0].summary
        elif self.info and self.promise and len(self.visited) >= REASONABLE_PAGES:
            searched = ", ".join(self.visited)
            self._blame(
                f"absent:{self.promise}",
                f"'{self.promise}' does not give what it promises",
                f"I followed '{self.promise}' and read {len(self.visited)} pages ({searched}); "
                "none showed what I was looking for.",
                "A visitor cannot learn what they came to find out.",
                scope="product_absence",
            )
            r.takeaway = f"{r.blames[0].headline}."
        else:
            self._aside(
                "insufficient_evidence",
                "not-found",
                f"Did not find what the goal asked for after {self.steps} actions on "
                f"{len(self.visited)} pages.",
            )
            r.takeaway = r.asides[-1].summary

    # --- records --------------------------------------------------------------------

    def _blame(
        self,
        key: str,
        headline: str,
        what: str,
        why: str,
        *,
        scope: ClaimScope = "product_behavior",
    ) -> None:
        evidence = f"{self.persona.user}, step {self.steps}: {what}"
        self.result.blames.append(
            Blame(
                key=key,
                scope=scope,
                headline=headline,
                what_happened=what,
                why_it_matters=why,
                evidence=evidence,
            )
        )
        self.stopped = True

    def _aside(self, reason: SetAsideReason, key: str, summary: str, *, stop: bool = True) -> None:
        # Our own hand's trouble is no reason to end the visit; every other reason is.
        self.result.asides.append(Aside(key=key, reason=reason, summary=summary))
        self.stopped = self.stopped or stop

    def _observe(self, target: str, reached: str, press: Press | None, outcome: str = "") -> None:
        self.result.observations.append(
            Observation(
                user=self.persona.user,
                step=self.steps,
                target=quoted(target, 120),
                reached_element=quoted(reached, 120),
                outcome_text=quoted(outcome or (press.summary if press else ""), 200),
                page_url=press.url if press else self.page.url,
            )
        )

    def _seen_link(self, ctrl: dict[str, Any]) -> bool:
        # A link back to a page already read would only spend the budget again.
        href = urlsplit(ctrl["href"]) if ctrl["href"] else None
        return bool(href and href.netloc == self.host and href.path in self.visited)

    def _path(self) -> str:
        return urlsplit(self.page.url).path

    def _key(self, ctrl: dict[str, Any]) -> tuple[str, str, str, str]:
        return (self._path(), ctrl["tag"], ctrl["name"], ctrl["href"])
