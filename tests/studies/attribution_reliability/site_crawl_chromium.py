"""The Chromium half of the label-free crawl: a module-wide browser, fresh pages, and
``crawl_chromium`` (every response the browser receives, its cookies, the rendered DOM, and
target text that no hover or click reveals)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, Page, Request, Response, sync_playwright

from pairbench.fixtures._webmcp import CHROMIUM_ARGS, chromium_executable
from pairbench.studies.attribution_reliability.site import RunningSite
from studies.attribution_reliability.site_crawl import Capture, Crawl, is_text, same_site, words

_MAX_PAGES = 20


@contextmanager
def warm_browser() -> Iterator[Browser]:
    """Headless Debian Chromium for a module's tests, closed at the end.

    Chromium starts its helper processes with the first page: they are started here, so
    the suite's leftover-process guard counts them as the fixture's, not a test's."""
    with sync_playwright() as pw:
        launched = pw.chromium.launch(
            executable_path=chromium_executable(), headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            warm = launched.new_context()
            warm.new_page().goto("data:text/html,<p>ready</p>")
            warm.close()
            yield launched
        finally:
            launched.close()


@contextmanager
def fresh_page(browser: Browser) -> Iterator[Page]:
    """A page in its own context (no cookies shared between tests), closed at the end."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


_SHOWN = (
    "el.checkVisibility({checkVisibilityCSS: true, visibilityProperty: true})"
    " && !el.closest('[aria-hidden=\"true\"]')"
)

_VISIBILITY_JS = """(terms) => {
  const hits = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let i = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.replace(/\\s+/g, ' ');
    const el = n.parentElement;
    if (!el || ['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(el.tagName)) continue;
    const word = (t) => new RegExp('(^|[^A-Za-z0-9])' + t + '($|[^A-Za-z0-9])', 'i');
    if (!terms.some((t) => word(t).test(text))) continue;
    const shown = SHOWN;
    if (!shown) { el.setAttribute('data-pb-probe', String(i)); hits.push(text.trim()); i++; }
  }
  return hits;
}""".replace("SHOWN", _SHOWN)

_SHOWN_JS = f"""(i) => {{ const el = document.querySelector('[data-pb-probe="' + i + '"]');
  return !!el && {_SHOWN}; }}"""

_TRIGGERS_JS = """([mode, i]) => { const out = []; let k = 0;
  const probe = document.querySelector('[data-pb-probe="' + i + '"]');
  const near = new Set();
  for (let a = probe; a; a = a.parentElement) {
    near.add(a);
    for (let s = a.previousElementSibling; s; s = s.previousElementSibling) near.add(s);
  }
  for (const el of document.querySelectorAll('body *')) {
    if (!el.checkVisibility() || ['SCRIPT', 'STYLE'].includes(el.tagName)) continue;
    const href = el.getAttribute('href') || '';
    const clicky = ['BUTTON', 'SUMMARY'].includes(el.tagName) || el.hasAttribute('role')
      || getComputedStyle(el).cursor === 'pointer' || (el.tagName === 'A' && href.startsWith('#'));
    const leaves = (el.tagName === 'A' && !href.startsWith('#')) || el.type === 'submit';
    if (mode === 'hover' ? !near.has(el) : !clicky || leaves) continue;
    el.setAttribute('data-pb-t', String(k)); out.push(k); k++;
  }
  return out.slice(0, 120); }"""

# Hover reveals come from an ancestor or an earlier sibling of the hidden text (CSS
# ``:hover`` menus); click reveals from anything clickable that stays on the page.


def _still_hidden(page: Page, url: str, terms: list[str]) -> list[str]:
    """Target text hidden on ``url`` that no hover and no click on the page reveals."""
    try:
        hidden: list[str] = page.evaluate(_VISIBILITY_JS, terms)
    except Exception:  # a self-reloading page: _snapshot has read what it could
        return []
    left = []
    for i, text in enumerate(hidden):
        if not _revealed(page, url, terms, i):
            left.append(text)
    return left


def _revealed(page: Page, url: str, terms: list[str], i: int) -> bool:
    for mode in ("hover", "click"):
        try:
            page.goto(url, wait_until="load", timeout=15000)
        except Exception:  # a page that never settles reveals nothing more
            return False
        page.evaluate(_VISIBILITY_JS, terms)
        for k in page.evaluate(_TRIGGERS_JS, [mode, i]):
            target = page.locator(f'[data-pb-t="{k}"]')
            try:
                target.hover(timeout=500) if mode == "hover" else target.click(timeout=500)
            except Exception:  # an element covered or detached: try the next one
                continue
            if page.url.split("#")[0] != url.split("#")[0]:
                break
            if page.evaluate(_SHOWN_JS, i):
                return True
    return False


_LINKS_JS = (
    "() => [...document.querySelectorAll('a[href]')].map((a) => a.href)"
    ".concat([...document.querySelectorAll('form')].filter((f) => f.method === 'get')"
    ".map((f) => f.action))"
)


def _snapshot(page: Page) -> tuple[str, str, list[str]] | None:
    """The DOM, ``document.cookie`` and links of the page, read while it holds still.

    A page that reloads itself (an interstitial) can be caught mid-navigation: it is read
    again as soon as its next document has loaded (on a loaded machine a 150 ms reload can
    beat several reads in a row), and given up only if it never holds still."""
    for _ in range(12):
        try:
            return page.content(), str(page.evaluate("document.cookie")), page.evaluate(_LINKS_JS)
        except Exception:  # the execution context went away under a navigation
            try:
                page.wait_for_load_state("domcontentloaded", timeout=2000)
            except Exception:  # still navigating: the next read tries again
                page.wait_for_timeout(100)
    return None


def _settle(page: Page, pending: set[Request]) -> None:
    """Wait until the requests the page's scripts started by ``load`` (a status fetch, an
    order lookup) have answered, so their responses are crawled too; at most 2 s."""
    for _ in range(40):
        page.wait_for_timeout(50)
        if not pending:
            return


_PERSON_UA = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)


def crawl_chromium(
    site: RunningSite, browser: Browser, target_terms: list[str], *, as_person: bool = False
) -> Crawl:
    """The site as a browser sees it: every response, cookies and the rendered DOM of each
    page reached by links and GET forms from the start page.

    ``as_person``: a desktop user agent and ``navigator.webdriver`` false, so an automation
    gate lets it through (its own tests prove the gate; here only the pages matter)."""
    out = Crawl()
    context = browser.new_context(user_agent=_PERSON_UA) if as_person else browser.new_context()
    if as_person:
        context.add_init_script("Object.defineProperty(navigator, 'webdriver', {get: () => false})")
    try:
        page = context.new_page()
        responses: list[Response] = []
        page.on("response", lambda r: responses.append(r))
        pending: set[Request] = set()
        page.on("request", lambda r: pending.add(r))
        page.on("requestfinished", lambda r: pending.discard(r))
        page.on("requestfailed", lambda r: pending.discard(r))
        terms = [words(t) for t in target_terms]
        queue, visited = [site.start_url], set[str]()
        while queue and len(visited) < _MAX_PAGES:
            url = queue.pop(0)
            if url in visited or not same_site(url, site):
                continue
            visited.add(url)
            try:
                page.goto(url, wait_until="load", timeout=15000)
                _settle(page, pending)
            except Exception:  # a page that never settles is still checked as far as it got
                pass
            out.captures += [_capture(r) for r in responses]
            responses.clear()
            snapshot = _snapshot(page)
            if snapshot is None:
                continue
            dom, cookie, links = snapshot
            out.doms[page.url] = dom
            out.cookies.append(cookie)
            queue += [link.split("#")[0] for link in links]
            out.hidden_targets += _still_hidden(page, page.url, terms) if terms else []
        out.cookies += [f"{c['name']}={c['value']}" for c in context.cookies()]
        out.captures += [_capture(r) for r in responses]
    finally:
        context.close()
    return out


def _capture(response: Response) -> Capture:
    headers = response.headers_array()
    body = ""
    ctype = response.headers.get("content-type", "")
    if is_text(ctype) and not 300 <= response.status < 400:
        try:
            body = response.text()
        except Exception:  # a body the browser no longer holds (navigated away)
            body = ""
    return Capture(
        "chromium",
        response.request.method,
        response.url,
        response.status,
        [(h["name"], h["value"]) for h in headers],
        body,
    )


__all__ = ["crawl_chromium", "fresh_page", "warm_browser"]
