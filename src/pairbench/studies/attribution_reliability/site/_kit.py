"""What a case's site is made of: routes under ``/v/<slug>``, on one or two origins.

A site builder (registered in ``SITES`` by name) takes the trial's ``SiteContext`` and
returns a ``CaseSite``: handlers keyed by path *relative to* ``/v/<slug>`` ("" is the start
page). Handlers answer with starlette responses; ``page()`` makes an HTML document with the
noindex meta tag (the server adds ``X-Robots-Tag`` to every response, 404s included).

**Rules every builder keeps** (the label-free crawl test enforces them): no manifest value
(class, truth, case id, description, forbidden terms) and none of ``MANIFEST_WORDS`` in any
body, script, style, header, cookie or route; a target term only as the product's own
visible UI text (a control's label or visible copy), never in hidden text, attributes,
scripts or routes. Every page a person reaches is served in the one shell of
``_skin.Skin`` (``test_shell_fingerprint`` enforces it): nothing around a page, neither its
title pattern, head, stylesheet, scripts, brand markup nor headers, may differ by class.
Only a bot wall's own answer to an automated browser (a CDN check, a 403, a 429) is bare:
that page is the mechanism an engine must judge.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import Response

Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class SiteContext:
    """What a builder knows of the trial it serves."""

    slug: str
    """16 base32 characters drawn from the trial seed."""
    base: str
    """``/v/<slug>``: prefix every link with it."""
    other_origin: str
    """``http://localhost:<port>``: the second origin (same server, another port)."""
    seed: int
    """The trial seed, for builders that vary content per trial."""

    def url(self, path: str = "") -> str:
        """A link to ``path`` on this site (relative to the slug)."""
        return f"{self.base}{path}"


@dataclass(frozen=True)
class CaseSite:
    """A case's routes: ``routes`` on the main origin, ``other_routes`` on the second one.

    A key is ``"<path>"`` (GET) or ``"<METHOD> <path>"``, path relative to ``/v/<slug>``.
    """

    routes: dict[str, Handler]
    other_routes: dict[str, Handler] = field(default_factory=dict)
    automation_gate: bool = False
    """Mark requests from automated browsers (``HeadlessChrome`` in the user agent, or the
    ``sid2`` cookie a ``navigator.webdriver`` check sets): handlers read
    ``request.state.automated``."""


SiteBuilder = Callable[[SiteContext], CaseSite]

NOINDEX = "noindex, nofollow"

WEBDRIVER_PROBE = (
    "<script>if (navigator.webdriver) { document.cookie = 'sid2=1; path=/'; }</script>"
)
"""Sets the cookie an automation gate reads (as real bot walls do). It is in the head of every
page of every site, so its presence says nothing; only a gate's server reads the cookie."""


def page(title: str, body: str, *, head: str = "", lang: str = "en") -> str:
    """An HTML document: ``title`` escaped, ``body`` and ``head`` as given (trusted markup)."""
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="robots" content="{NOINDEX}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title>{head}</head><body>{body}</body></html>"
    )


def esc(text: str) -> str:
    return html.escape(text, quote=True)
