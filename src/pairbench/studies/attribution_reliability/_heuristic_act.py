"""The heuristic engine's hand and eyes: act on one control and read what followed.

An action's effect is any request, navigation, dialog or DOM mutation (the engine's own
``data-pb`` marks excepted). Once something happened, the hand waits for pending requests
(up to ``slow_wait_s``) and a short quiet time, then reads the responses, the text the
mutations added, and the browser's own field validation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pairbench.studies.attribution_reliability import _heuristic_js as js
from pairbench.studies.attribution_reliability._heuristic_outcome import HeuristicSettings
from pairbench.studies.attribution_reliability._heuristic_rules import (
    ENVIRONMENT_STATUSES,
    ERROR_PATTERN,
    INTERSTITIAL_PATTERN,
    SUCCESS_PATTERN,
    fixed_value,
    is_search,
)

if TYPE_CHECKING:
    from playwright.sync_api import Dialog, Page, Request, Response

_POLL_MS = 100
_REVEAL_WAIT_S = 0.5
"""A hover, scroll or opened section shows what it shows at once (CSS, no request)."""


_FIELD_TAGS = ("input", "select", "textarea")
_PRESS_TYPES = ("submit", "button", "image", "reset")


def is_field(ctrl: dict[str, Any]) -> bool:
    return bool(ctrl["tag"] in _FIELD_TAGS and ctrl["type"] not in _PRESS_TYPES)


def is_web(ctrl: dict[str, Any]) -> bool:
    # mailto:, tel: and javascript: links lead nowhere a visitor could read.
    return not ctrl["href"] or urlsplit(ctrl["href"]).scheme in ("http", "https")


def is_submit(ctrl: dict[str, Any]) -> bool:
    if ctrl["role"] == "button":
        return True
    return not ctrl["href"] and ctrl["tag"] in ("button", "input") and not is_field(ctrl)


def form_fields(ctrl: dict[str, Any], controls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The visible fields a submit sends: its form's, or every field outside any form."""
    return [c for c in controls if is_field(c) and c["visible"] and c["form"] == ctrl["form"]]


def is_search_box(ctrl: dict[str, Any]) -> bool:
    return is_field(ctrl) and (ctrl["type"] == "search" or is_search(ctrl["name"]))


@dataclass(frozen=True)
class Press:
    """What one action led to."""

    url: str
    path: str
    host: str
    effect: bool = True
    missed: bool = False
    env: str = ""
    server_error: str = ""
    invalid_ours: tuple[str, str] | None = None
    invalid_other: str = ""
    error_text: str = ""
    """Error text anywhere in what the action added (read after a submit)."""
    alert_error: str = ""
    """Error text in an alert, live region, top heading or title (read after any action:
    prose a link or a section reveals, "if your payment failed...", blames nothing)."""
    success_text: str = ""
    summary: str = ""


class Act:
    """Playwright operations on one page, with the network watched throughout."""

    def __init__(self, page: Page, host: str, settings: HeuristicSettings) -> None:
        self.page, self.host, self.settings = page, host, settings
        self.requests = 0
        self.inflight: set[int] = set()
        self.responses: list[tuple[str, int]] = []
        self.dialogs: list[str] = []
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_done)
        page.on("requestfailed", self._on_done)
        page.on("response", self._on_response)
        page.on("dialog", self._on_dialog)

    def _on_request(self, request: Request) -> None:
        self.requests += 1
        self.inflight.add(id(request))

    def _on_done(self, request: Request) -> None:
        self.inflight.discard(id(request))

    def _on_response(self, response: Response) -> None:
        self.responses.append((response.url, response.status))

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    # --- reading --------------------------------------------------------------------

    def controls(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._look(js.ENUMERATE, [])
        return found

    def blocks(self) -> list[str]:
        found: list[str] = self._look(js.BLOCKS, [])
        return found

    def collapsed(self) -> list[int]:
        found: list[int] = self._look(js.COLLAPSED, [])
        return found

    def tall(self) -> bool:
        script = "() => document.body.scrollHeight > window.innerHeight + 40"
        return bool(self._look(script, False))

    def _look(self, script: str, default: Any) -> Any:
        # A page that navigates by itself (a bot wall reloading) destroys the document
        # mid-read: read again once it has loaded, else see nothing.
        for _ in range(2):
            try:
                return self.page.evaluate(script)
            except Exception:
                try:
                    self.page.wait_for_load_state("load", timeout=self._timeout())
                except Exception:
                    return default
        return default

    # --- acting ---------------------------------------------------------------------

    def goto(self, url: str) -> Press:
        mark = len(self.responses)
        try:
            self.page.goto(url, wait_until="load", timeout=self.settings.slow_wait_s * 1000)
        except Exception as exc:  # a timeout or refused page is the outcome
            return self._read(mark, effect=True, slow="Timeout" in type(exc).__name__)
        # Scripts may still render the page after ``load``: read it once it is quiet.
        self._quiet(time.monotonic())
        return self._read(mark, effect=True, navigated=True)

    def fill(
        self, fields: list[dict[str, Any]], goal: str, query: str, *, searching: bool
    ) -> dict[int, tuple[str, str]]:
        """Type the fixed valid value into every empty field, or ``query`` into a search box
        (any text box, when the submit is ``searching``); returns ref -> (label, value)."""
        filled: dict[int, tuple[str, str]] = {}
        for field in fields:
            loc = self.page.locator(f'[data-pb="{field["ref"]}"]')
            timeout = self.settings.action_timeout_s * 1000
            try:
                if field["tag"] == "select":
                    # The first option is often a "Choose..." placeholder.
                    if field["options"] > 1:
                        loc.select_option(index=1, timeout=timeout)
                elif field["type"] in ("checkbox", "radio"):
                    if field["required"]:
                        loc.check(timeout=timeout)
                elif not field["value"]:
                    search = field["type"] == "search" or is_search(field["name"])
                    text_box = field["type"] in ("", "text") and field["tag"] == "input"
                    value = (
                        query
                        if search or (searching and text_box)
                        else fixed_value(field["name"], field["type"], goal)
                    )
                    loc.fill(value, timeout=timeout)
                    filled[field["ref"]] = (field["name"] or field["type"], value)
            except Exception:  # an unfillable field shows in validation
                continue
        return filled

    def press(self, ref: int, filled: dict[int, tuple[str, str]] | None) -> Press:
        return self._act(lambda: self._click(f'[data-pb="{ref}"]'), filled)

    def reveal(self, ref: int, how: str) -> Press:
        loc = self.page.locator(f'[data-pb-h="{ref}"]')
        if how == "hover":
            return self._act(
                lambda: loc.hover(force=True, timeout=self._timeout()), None, quiet=True
            )
        return self._act(lambda: self._click(f'[data-pb-h="{ref}"]'), None, quiet=True)

    def search(self, ref: int, text: str) -> Press:
        loc = self.page.locator(f'[data-pb="{ref}"]')

        def go() -> None:
            loc.fill(text, timeout=self._timeout())
            loc.press("Enter", timeout=self._timeout(), no_wait_after=True)

        return self._act(go, None)

    def expand(self) -> Press:
        def go() -> None:
            self.page.evaluate(js.EXPAND)
            for ref in self.collapsed():
                self._click(f'[data-pb="{ref}"]')

        return self._act(go, None, quiet=True)

    def scroll(self) -> Press:
        return self._act(lambda: self.page.evaluate(js.SCROLL), None, quiet=True)

    def _click(self, selector: str) -> None:
        loc = self.page.locator(selector)
        loc.scroll_into_view_if_needed(timeout=self._timeout())
        # force: click where a person would, even when a layer covers the control.
        loc.click(force=True, timeout=self._timeout(), no_wait_after=True)

    def _timeout(self) -> float:
        return self.settings.action_timeout_s * 1000

    def _act(
        self, go: Any, filled: dict[int, tuple[str, str]] | None, *, quiet: bool = False
    ) -> Press:
        """Do ``go`` and read what followed; ``filled`` is given for a submit (the fields
        the hand typed into), ``None`` for anything else."""
        mark, requests, url, dialogs = (
            len(self.responses),
            self.requests,
            self.page.url,
            len(self.dialogs),
        )
        self._look(js.WATCH, None)
        started = time.monotonic()
        try:
            go()
        except Exception:  # the hand could not reach the control
            return Press(
                url=self.page.url,
                path=self._path(),
                host=self.host,
                missed=True,
                summary="could not reach the control",
            )
        wait = _REVEAL_WAIT_S if quiet else self.settings.no_effect_wait_s
        # The no-effect window opens once the action is done, and is looked at least once:
        # on a loaded machine the click itself can take longer than the window, and its
        # request must not be missed because the window closed before the first look.
        acted = time.monotonic()
        while True:
            watch = self._watch()
            effect = (
                self.requests > requests
                or self.page.url != url
                or len(self.dialogs) > dialogs
                or watch is None
                or watch["n"] > 0
            )
            if effect or (filled is not None and self._refused()):
                break
            if time.monotonic() - acted >= wait:
                break
            self.page.wait_for_timeout(_POLL_MS)
        slow = False
        if effect:
            while self.inflight and time.monotonic() - started < self.settings.slow_wait_s:
                self.page.wait_for_timeout(_POLL_MS)
            slow = bool(self.inflight)
            left = max(0.1, self.settings.slow_wait_s - (time.monotonic() - started))
            try:
                self.page.wait_for_load_state("load", timeout=left * 1000)
            except Exception:  # a page that never loads is judged as slow
                slow = True
            self._quiet(started)
        return self._read(mark, effect=effect, slow=slow, filled=filled, dialogs=dialogs)

    def _refused(self) -> bool:
        # The browser's own validation stopped the submit: nothing else will happen.
        try:
            return bool(self.page.evaluate(js.INVALID_FIELDS))
        except Exception:
            return False

    def _quiet(self, started: float) -> None:
        # Read the outcome only once the page has stopped changing for ``settle_ms``, so a
        # slow machine reads the same outcome as a fast one.
        seen = -1
        while time.monotonic() - started < self.settings.slow_wait_s:
            watch = self._watch()
            count = watch["n"] if watch else 0
            if count == seen and not self.inflight:
                return
            seen = count
            self.page.wait_for_timeout(self.settings.settle_ms)

    def _watch(self) -> dict[str, Any] | None:
        try:
            state: dict[str, Any] | None = self.page.evaluate(js.READ_WATCH)
        except Exception:  # the document went away: a navigation
            return None
        return state

    def _read(
        self,
        mark: int,
        *,
        effect: bool,
        slow: bool = False,
        navigated: bool = False,
        filled: dict[int, tuple[str, str]] | None = None,
        dialogs: int | None = None,
    ) -> Press:
        url = self.page.url
        parts = urlsplit(url)
        page_text = self._text()
        watch = None if navigated else self._watch()
        added = " ".join(watch["added"]) if watch else page_text
        if dialogs is not None:
            added = " ".join([added, *self.dialogs[dialogs:]])
        statuses = [(u, s) for u, s in self.responses[mark:] if urlsplit(u).netloc == self.host]
        env = ""
        if slow:
            env = f"No answer within {self.settings.slow_wait_s:g} s"
        elif any(s in ENVIRONMENT_STATUSES for _, s in statuses):
            env = f"HTTP {next(s for _, s in statuses if s in ENVIRONMENT_STATUSES)}"
        elif wall := INTERSTITIAL_PATTERN.search(page_text[:2000]):
            env = f"'{wall.group(0)}' page"
        server = next((f"{s} for {urlsplit(u).path}" for u, s in statuses if s >= 500), "")
        invalid_ours: tuple[str, str] | None = None
        invalid_other = ""
        if filled is not None and not navigated:
            try:
                bad = self.page.evaluate(js.INVALID_FIELDS)
            except Exception:  # navigated away: nothing left to validate
                bad = []
            for field in bad:
                if field["ref"] in filled:
                    invalid_ours = invalid_ours or filled[field["ref"]]
                else:
                    invalid_other = invalid_other or field["name"]
        error = ERROR_PATTERN.search(added)
        alerts = self._evaluate(js.ALERTS, "")
        alert = ERROR_PATTERN.search(alerts)
        success = SUCCESS_PATTERN.search(added)
        summary = added if effect else "no request and no visible change"
        return Press(
            url=url,
            path=parts.path,
            host=parts.netloc,
            effect=effect,
            env=env,
            server_error=server,
            invalid_ours=invalid_ours,
            invalid_other=invalid_other,
            error_text=_around(added, error.start()) if error else "",
            alert_error=_around(alerts, alert.start()) if alert else "",
            success_text=_around(added, success.start()) if success else "",
            summary=summary or ("page changed" if effect else ""),
        )

    def _text(self) -> str:
        return self._evaluate(js.PAGE_TEXT, "")

    def _evaluate(self, script: str, default: str) -> str:
        try:
            text: str = self.page.evaluate(script)
        except Exception:  # a page mid-navigation has no text yet
            return default
        return text

    def _path(self) -> str:
        return urlsplit(self.page.url).path


def _around(text: str, at: int) -> str:
    """The sentence-sized stretch of ``text`` around position ``at``."""
    start = max(text.rfind(". ", 0, at) + 2, at - 60, 0)
    end = text.find(". ", at)
    return text[start : end if end != -1 and end - at < 100 else at + 100].strip()
