"""The ``openai`` engine's hands: browser tools over real headless Chromium (Playwright, sync).

One browser per request, one fresh context per user. ``snapshot`` is Playwright's AI
accessibility snapshot, whose ``[ref=eN]`` marks are the refs ``click``, ``type`` and
``hover`` take (``aria-ref=eN`` locators). The safety rules hold here, whatever the model
asks: navigations off the start URL's origin are aborted in the route, and ``type`` refuses
file, email, message, payment and sign-in fields.

**Usage**::

    with Browser(action_timeout_s=5) as browser, browser.user(start_url) as hands:
        outcome = hands.call("goto", {"url": start_url})
        outcome.text            # what the model reads
        outcome.observation     # Step(target, reached_element, outcome_text, page_url)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable

if TYPE_CHECKING:
    from playwright.sync_api import Browser as PwBrowser
    from playwright.sync_api import BrowserContext, Page, Playwright, Route

_SNAPSHOT_CHARS = 12_000
_OUTCOME_CHARS = 600
_SETTLE_MS = 400
_REF_LINE = re.compile(
    r'^\s*- (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?.*\[ref=(?P<ref>e\d+)\]', re.M
)
_MARKS = re.compile(r"\s*\[(?:ref=e\d+|cursor=\w+|active)\]")
_SENSITIVE = re.compile(
    r"e-?mail|message|comment|card|cvc|cvv|iban|payment|password|passcode|sign[ -]?in|"
    r"log[ -]?in|username|upload",
    re.I,
)
_SENSITIVE_TYPES = {"file", "email", "password"}
_FIELD_FACTS = """el => [el.tagName.toLowerCase(), (el.getAttribute('type') || '').toLowerCase(),
 [el.getAttribute('autocomplete'), el.getAttribute('name'), el.id, el.getAttribute('placeholder'),
  el.getAttribute('aria-label'), ...Array.from(el.labels || [], l => l.textContent)]
  .filter(Boolean).join(' ')]"""


class Step(NamedTuple):
    """What one action met (an ``Observation`` without user and step)."""

    target: str
    reached_element: str
    outcome_text: str
    page_url: str


@dataclass(frozen=True)
class ToolOutcome:
    text: str
    """The tool's result as the model reads it."""
    observation: Step | None = None
    """Set for actions (every tool but ``snapshot``)."""
    snapshot: str | None = None
    """The accessibility snapshot the model was shown, if any."""


def _plain(snapshot: str) -> list[str]:
    lines = (_MARKS.sub("", line).strip().removeprefix("- ") for line in snapshot.splitlines())
    return [line for line in lines if line]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class BrowserUnavailable(Exception):
    """Chromium (or Playwright's driver) did not start: the machine's failure, not the
    engine's judgment; the message starts with ``chromium:``."""


class Browser:
    """Headless Debian Chromium for one request; closed (with Playwright's driver) on exit."""

    def __init__(self, action_timeout_s: float = 5.0) -> None:
        self.action_timeout_ms = action_timeout_s * 1000
        self._pw: Playwright | None = None
        self._browser: PwBrowser | None = None

    def __enter__(self) -> Browser:
        from playwright.sync_api import sync_playwright

        try:
            self._pw = sync_playwright().start()
        except Exception as exc:
            raise BrowserUnavailable(f"chromium: Playwright did not start: {exc}") from exc
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
            )
        except BaseException as exc:
            self._pw.stop()
            if isinstance(exc, Exception):
                raise BrowserUnavailable(f"chromium: the browser did not start: {exc}") from exc
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        finally:
            if self._pw is not None:
                self._pw.stop()
            self._browser = self._pw = None

    @contextmanager
    def user(self, start_url: str) -> Iterator[Hands]:
        """A fresh context (no cookies, no history) for one user."""
        assert self._browser is not None, "use Browser as a context manager"
        context = self._browser.new_context(accept_downloads=False)
        try:
            yield Hands(context, start_url, self.action_timeout_ms)
        finally:
            context.close()


@dataclass
class Hands:
    """One user's page and the tools that act on it."""

    context: BrowserContext
    start_url: str
    timeout_ms: float
    page: Page = field(init=False)
    refs: dict[str, str] = field(default_factory=dict)
    """ref -> ``role "name"`` from the snapshots seen so far."""
    last_snapshot: str = ""
    status: int | None = None
    """The last main-document response's status."""
    blocked: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.origin = _origin(self.start_url)
        self.context.route("**/*", self._guard)
        self.page = self.context.new_page()
        self.page.set_default_timeout(self.timeout_ms)
        self.page.on("dialog", lambda dialog: dialog.dismiss())
        self.page.on("response", self._response)

    def _guard(self, route: Route) -> None:
        request = route.request
        if request.is_navigation_request() and _origin(request.url) != self.origin:
            self.blocked.append(request.url)
            # a 204 answer cancels the navigation and leaves the page where it was (an abort
            # would show Chromium's error page instead); the other origin is never contacted
            route.fulfill(status=204)
        else:
            route.continue_()

    def _response(self, response: Any) -> None:
        if response.request.is_navigation_request() and response.frame == self.page.main_frame:
            self.status = response.status

    def call(self, name: str, args: dict[str, Any]) -> ToolOutcome:
        """Run one tool; a browser error is an outcome the model reads, never an exception."""
        from playwright.sync_api import Error as PlaywrightError

        handler = getattr(self, f"_tool_{name}", None)
        if handler is None:
            return ToolOutcome(f"There is no tool named {name!r}.")
        try:
            outcome: ToolOutcome = handler(**args)
            return outcome
        except TypeError as exc:
            return ToolOutcome(f"Bad arguments for {name}: {exc}")
        except PlaywrightError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            target = self._target(name, args)
            return ToolOutcome(
                f"{name} failed: {first}", Step(target, "", first[:_OUTCOME_CHARS], self.page.url)
            )

    def _target(self, name: str, args: dict[str, Any]) -> str:
        if "ref" in args:
            return self.refs.get(str(args["ref"]), str(args["ref"]))
        if name == "goto":
            return str(args.get("url", ""))
        return f"{name} {args.get('dy', '')}".strip()

    def take_snapshot(self) -> str:
        snapshot = self.page.aria_snapshot(mode="ai")
        for m in _REF_LINE.finditer(snapshot):
            name = m["name"]
            self.refs[m["ref"]] = f'{m["role"]} "{name}"' if name is not None else m["role"]
        return snapshot

    def _after(self, target: str, reached: str, verb: str) -> ToolOutcome:
        """Let the page settle, then say what changed (lines the last snapshot lacked)."""
        self.page.wait_for_timeout(_SETTLE_MS)
        before = set(_plain(self.last_snapshot))
        now = self.take_snapshot()
        self.last_snapshot = now
        new = [line for line in _plain(now) if line not in before]
        changed = " | ".join(new)[:_OUTCOME_CHARS]
        status = f" (status {self.status})" if self.status and self.status >= 400 else ""
        notes = [f"Blocked, another origin: {url}" for url in self.blocked[-1:]]
        for extra in [p for p in self.context.pages if p is not self.page]:
            # the model drives one page; a new tab is named so it can goto it here
            notes.append(f"A new tab opened at {extra.url} and was closed")
            extra.close()
        self.blocked.clear()
        text = (
            f"{verb}. Page: {self.page.url}{status}.\n"
            + (f"New on the page: {changed}" if changed else "Nothing new appeared on the page.")
            + "".join(f"\n{note}." for note in notes)
        )
        outcome = "; ".join([changed or "no visible change", *notes]) + status
        return ToolOutcome(text, Step(target, reached, outcome, self.page.url))

    def _tool_goto(self, url: str) -> ToolOutcome:
        absolute = urljoin(self.page.url if self.page.url != "about:blank" else self.start_url, url)
        if _origin(absolute) != self.origin:
            refusal = f"Refused: {absolute} is not on {self.origin} (stay on the start origin)."
            return ToolOutcome(refusal, Step(absolute, "", refusal, self.page.url))
        self.page.goto(absolute, wait_until="domcontentloaded")
        return self._after(absolute, self.page.url, f"Opened {absolute}")

    def _tool_snapshot(self) -> ToolOutcome:
        self.last_snapshot = self.take_snapshot()
        status = f"HTTP status: {self.status}\n" if self.status and self.status >= 400 else ""
        head = f"Page: {self.page.url}\nTitle: {self.page.title()}\n{status}"
        return ToolOutcome(head + self.last_snapshot[:_SNAPSHOT_CHARS], None, self.last_snapshot)

    def _locate(self, ref: str) -> Any:
        if ref not in self.refs:
            return None
        return self.page.locator(f"aria-ref={ref}")

    def _unknown(self, ref: str) -> ToolOutcome:
        text = f"No element with ref {ref!r}: take a snapshot and use one of its refs."
        return ToolOutcome(text, Step(ref, "", text, self.page.url))

    def _refusal(self, ref: str) -> str | None:
        tag, kind, words = self.page.locator(f"aria-ref={ref}").evaluate(_FIELD_FACTS)
        name = self.refs.get(ref, "")
        if kind in _SENSITIVE_TYPES or _SENSITIVE.search(f"{words} {name}") or tag == "textarea":
            return f"Refused by the safety rules: {name or ref} is a field this user may not fill."
        return None

    def _tool_click(self, ref: str) -> ToolOutcome:
        target = self._locate(ref)
        if target is None:
            return self._unknown(ref)
        name = self.refs[ref]
        if target.evaluate("el => el.type === 'file'"):
            refusal = f"Refused by the safety rules: {name} opens a file upload."
            return ToolOutcome(refusal, Step(name, "", refusal, self.page.url))
        target.click()
        return self._after(name, name, f"Clicked {name}")

    def _tool_type(self, ref: str, text: str) -> ToolOutcome:
        target = self._locate(ref)
        if target is None:
            return self._unknown(ref)
        name = self.refs[ref]
        refusal = self._refusal(ref)
        if refusal is not None:
            return ToolOutcome(refusal, Step(name, "", refusal, self.page.url))
        target.fill(text)
        return self._after(name, name, f"Typed into {name}")

    def _tool_hover(self, ref: str) -> ToolOutcome:
        target = self._locate(ref)
        if target is None:
            return self._unknown(ref)
        target.hover()
        return self._after(self.refs[ref], self.refs[ref], f"Hovered over {self.refs[ref]}")

    def _tool_scroll(self, dy: int) -> ToolOutcome:
        self.page.mouse.wheel(0, int(dy))
        return self._after(f"scroll {dy}", "", f"Scrolled by {dy} pixels")

    def _tool_back(self) -> ToolOutcome:
        self.page.go_back(wait_until="domcontentloaded")
        return self._after("back", self.page.url, "Went back")
