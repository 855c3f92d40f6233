"""The scripted-user recorder: an evidence package's fixed steps, acted in real Chromium.

Each user gets a fresh browser context; each step has a hard time limit. After a step the
recorder keeps what the hand did (``ok`` or ``missed``), where the page is, the status of
its last navigation, a small screenshot, the accessibility snapshot, console errors and
the time, then what the user said. Sentences travel as plain text: no sid, no planted
label, no anchor list; of the manifest only the goal and the narration reach the bundle.

A package's sentences belong to the user their sid names (``u2.s1``), else to the first
user; ``after_step`` counts that user's steps from 0. A target is named as a user would
(``button "Place order"``, ``textbox "Email"``, ``the point 600,440``), never by selector.

**Usage**::

    with serve_case(package.fixture, seed=7) as site:
        sessions = await record_package(package, site)
    text = bundle_json(sessions)          # stored; every arm judges these bytes
    assert load_bundle(text) == sessions
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from pairbench.studies.attribution_reliability._manifest import (
    Package,
    PlannedSentence,
    ScriptedUser,
    ScriptStep,
)
from pairbench.studies.attribution_reliability.engines._models import RecordedSession, RecordedStep
from pairbench.studies.attribution_reliability.site._server import RunningSite

if TYPE_CHECKING:
    from playwright.async_api import Browser, Locator, Page

VIEWPORT = {"width": 640, "height": 480}
"""Small on purpose: a bundle carries one PNG per step."""

ACTIONS = ("goto", "click", "fill", "hover", "scroll", "wait", "press")

# What a hand can land on and have an effect; a click anywhere else is a miss.
_INTERACTIVE_JS = """([x, y]) => {
  const el = document.elementFromPoint(x, y);
  return !!(el && el.closest(
    'a[href],button,input,select,textarea,label,summary,[onclick],[role=button],[role=link]'
  ));
}"""

# A css target is named the way its role and visible label read, never by its selector.
_NAME_JS = """el => {
  const roles = {A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox',
                 SUMMARY: 'disclosure'};
  const role = el.getAttribute('role') || roles[el.tagName]
    || (el.tagName === 'INPUT' ? (el.type === 'file' ? 'file chooser' : 'textbox')
        : el.tagName.toLowerCase());
  const label = el.getAttribute('aria-label') || (el.labels && el.labels.length
    ? el.labels[0].textContent : el.textContent) || '';
  const name = label.trim().replace(/\\s+/g, ' ').slice(0, 60);
  return name ? role + ' "' + name + '"' : role;
}"""

_ROLE = re.compile(r"^role=(?P<role>[a-z]+)(?:\[name=(?P<name>.*)\])?$")
_XY = re.compile(r"^xy=(?P<x>\d+),\s*(?P<y>\d+)$")

_SESSIONS = TypeAdapter(list[RecordedSession])


def sentence_user(sentence: PlannedSentence, users: list[ScriptedUser]) -> str:
    """Whose sentence this is: the user its sid starts with (``u2.s1`` is u2's), else the
    first user. (``PlannedSentence`` has no user field; the sid carries it.)"""
    prefix = sentence.sid.split(".", 1)[0]
    names = [u.user for u in users]
    return prefix if "." in sentence.sid and prefix in names else names[0]


def describe_target(step: ScriptStep) -> str:
    """The target as a user would name it: ``button "Place order"``, a path, a point."""
    if step.do == "goto":
        return step.value or "/"
    if found := _ROLE.match(step.on):
        name = found["name"]
        return f'{found["role"]} "{name}"' if name else found["role"]
    if found := _XY.match(step.on):
        return f"the point {found['x']},{found['y']}"
    if step.on.startswith("css="):
        return step.on[4:]
    return step.on or step.value


def _locate(page: Page, on: str) -> Locator:
    if found := _ROLE.match(on):
        name = found["name"]
        if name is None:
            return page.get_by_role(found["role"]).first  # type: ignore[arg-type]
        return page.get_by_role(found["role"], name=name, exact=True).first  # type: ignore[arg-type]
    if on.startswith("css="):
        return page.locator(on[4:]).first
    raise ValueError(f"cannot locate {on!r}: use role=<role>[name=<name>], css=<selector> or xy=")


async def _name(page: Page, step: ScriptStep, timeout_ms: float) -> str:
    """``describe_target``, but a css target read off the page before the hand acts."""
    if not step.on.startswith("css="):
        return describe_target(step)
    try:
        # The step's whole timeout, as the hand gets: a shorter wait named the same element
        # differently on a loaded machine (``#em`` instead of ``textbox "Email"``), so the
        # recording depended on the machine's load.
        return str(await page.locator(step.on[4:]).first.evaluate(_NAME_JS, timeout=timeout_ms))
    except Exception:  # nothing there to name: the hand will miss it too
        return describe_target(step)


async def _act(page: Page, base: str, step: ScriptStep, timeout_ms: float) -> bool:
    """Do one step; ``False`` when the hand missed (empty point, no such element)."""
    if step.do == "goto":
        await page.goto(base + step.value, timeout=timeout_ms)
        return True
    if step.do == "wait":
        await page.wait_for_timeout(min(float(step.value or 1000), timeout_ms))
        return True
    if step.do == "scroll":
        if step.on:
            await _locate(page, step.on).scroll_into_view_if_needed(timeout=timeout_ms)
        else:
            await page.mouse.wheel(0, float(step.value or 400))
        return True
    if step.do == "press" and not step.on:
        await page.keyboard.press(step.value)
        return True
    if found := _XY.match(step.on):
        x, y = float(found["x"]), float(found["y"])
        landed = bool(await page.evaluate(_INTERACTIVE_JS, [x, y]))
        if step.do == "click":
            await page.mouse.click(x, y)
        elif step.do == "hover":
            await page.mouse.move(x, y)
        else:
            return False
        return landed
    target = _locate(page, step.on)
    if step.do == "click":
        await target.click(timeout=timeout_ms)
    elif step.do == "fill":
        await target.fill(step.value, timeout=timeout_ms)
    elif step.do == "hover":
        await target.hover(timeout=timeout_ms)
    elif step.do == "press":
        await target.press(step.value, timeout=timeout_ms)
    else:
        raise ValueError(f"unknown action {step.do!r}: one of {', '.join(ACTIONS)}")
    return True


async def _settle(page: Page, timeout_ms: float) -> None:
    # A click may start a navigation: let the new document load before it is described.
    with contextlib.suppress(Exception):
        await page.wait_for_load_state("load", timeout=timeout_ms)
    await page.wait_for_timeout(120)


async def _record_user(
    browser: Browser,
    package: Package,
    user: ScriptedUser,
    site: RunningSite,
    timeout_s: float,
) -> RecordedSession:
    from playwright.async_api import Error as PlaywrightError

    timeout_ms = timeout_s * 1000
    said: dict[int, list[str]] = {}
    for sentence in package.sentences:
        if sentence_user(sentence, package.users) == user.user:
            said.setdefault(sentence.after_step, []).append(sentence.text)
    context = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    try:
        page = await context.new_page()
        page.set_default_timeout(timeout_ms)
        errors: list[str] = []
        status: dict[str, int | None] = {"last": None}
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))

        def on_response(response: Any) -> None:
            request = response.request
            if request.is_navigation_request() and request.frame == page.main_frame:
                status["last"] = response.status

        page.on("response", on_response)
        t0 = time.monotonic()
        steps: list[RecordedStep] = []
        for i, step in enumerate(user.steps):
            errors.clear()
            target = await _name(page, step, timeout_ms)
            try:
                ok = await _act(page, site.start_url, step, timeout_ms)
            except PlaywrightError:
                ok = False  # the locator found nothing in time, or the page refused
            await _settle(page, timeout_ms)
            steps.append(
                RecordedStep(
                    step=i,
                    action=step.do,
                    target=target,
                    hand="ok" if ok else "missed",
                    url=page.url,
                    status=status["last"],
                    screenshot=await _screenshot(page, timeout_ms),
                    snapshot=await _snapshot(page, timeout_ms),
                    console_errors=list(errors),
                    t_ms=round((time.monotonic() - t0) * 1000, 1),
                    sentences=said.get(i, []),
                )
            )
        return RecordedSession(user=user.user, goal=user.goal, steps=steps)
    finally:
        with contextlib.suppress(Exception):
            await context.close()


async def _screenshot(page: Page, timeout_ms: float) -> str | None:
    import base64

    try:
        png = await page.screenshot(type="png", timeout=timeout_ms)
    except Exception:  # a page mid-navigation has no frame to paint
        return None
    return base64.b64encode(png).decode("ascii")


async def _snapshot(page: Page, timeout_ms: float) -> str:
    try:
        return await page.locator("body").aria_snapshot(timeout=timeout_ms)
    except Exception:
        return ""


@contextlib.asynccontextmanager
async def _browser(given: Browser | None) -> AsyncIterator[Browser]:
    if given is not None:
        yield given
        return
    from pairbench.fixtures._webmcp import launch_chromium

    async with launch_chromium() as browser:
        yield browser


async def record_package(
    package: Package,
    site: RunningSite,
    *,
    browser: Browser | None = None,
    action_timeout_s: float = 3.0,
) -> list[RecordedSession]:
    """Act every user of ``package`` on ``site`` (one fresh context each, in order).

    ``browser`` is reused when given (and left open); otherwise headless Chromium is
    launched for this call and closed after it.
    """
    async with _browser(browser) as live:
        return [
            await _record_user(live, package, user, site, action_timeout_s)
            for user in package.users
        ]


def bundle_json(sessions: list[RecordedSession]) -> str:
    """The stored bundle: the sessions as JSON (what ``EngineRequest.sessions`` carries)."""
    return _SESSIONS.dump_json(sessions).decode("utf-8")


def load_bundle(text: str) -> list[RecordedSession]:
    """Read a bundle ``bundle_json`` wrote."""
    return _SESSIONS.validate_json(text)


__all__ = [
    "ACTIONS",
    "VIEWPORT",
    "bundle_json",
    "describe_target",
    "load_bundle",
    "record_package",
    "sentence_user",
]
