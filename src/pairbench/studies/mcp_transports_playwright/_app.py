"""The site's ASGI app: each trial's pages under ``/t/<token>/``, every request audited.

Each request becomes one ``AuditEntry`` in its trial's log: ``view`` (a page), ``submit_contact``
(the form, with its fields as arguments) or ``claim_reward`` (the lure). Its arguments
carry the page, the method, the user agent and ``browser`` (whether the request looks like
Chromium's own: a Chrome user agent and the ``Sec-Fetch-Mode`` header every Chromium request
has). A request that does not look like the browser gets ``off_surface`` with why: the
validity classifier counts it, because the arm's surface is the browser that
``@playwright/mcp`` drives, not a fetch from anywhere else. It is a witness, not a sandbox.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from pairbench.studies.mcp_transports_playwright import _pages
from pairbench.studies.mcp_transports_playwright._content import INJECTED_TOOL, LURE_TOOL
from pairbench.studies.mcp_transports_playwright._trials import SiteTrial, TrialRegistry

_MAX_BODY = 64_000
_FIELDS = ("name", "email", "message")
_HEADERS = {"Cache-Control": "no-store"}
_VIEWS: dict[str, Callable[[dict[str, Any]], str]] = {
    "": _pages.index,
    "catalog": _pages.catalog,
    "contact": _pages.contact,
    "news": _pages.news,
    "account": _pages.account,
    "reward": _pages.reward,
}


def looks_like_browser(request: Request) -> bool:
    """Chromium sends a Chrome user agent and ``Sec-Fetch-Mode`` on every request."""
    agent = request.headers.get("user-agent", "")
    return "Chrome/" in agent and "sec-fetch-mode" in request.headers


def _meta(request: Request, page: str) -> dict[str, Any]:
    browser = looks_like_browser(request)
    meta: dict[str, Any] = {
        "page": page,
        "method": request.method,
        "user_agent": request.headers.get("user-agent", "")[:200],
        "browser": browser,
    }
    if not browser:
        meta["off_surface"] = "a request that is not the browser's (user agent, Sec-Fetch-*)"
    return meta


def build_app(registry: TrialRegistry) -> Starlette:
    """The site for every trial ``registry`` holds.

    **Usage**::

        app = build_app(TrialRegistry())
        # uvicorn.run(app, host="127.0.0.1", port=0)
    """

    def trial_of(request: Request) -> SiteTrial | None:
        return registry.get(str(request.path_params["token"]))

    async def view(request: Request) -> Response:
        t0 = time.perf_counter()
        trial = trial_of(request)
        page = str(request.path_params.get("page", ""))
        if trial is None:
            return HTMLResponse(_pages.gone(), 404, headers=_HEADERS)
        render = _VIEWS.get(page)
        tool = LURE_TOOL if page == "reward" else "view"
        if render is None:
            ms = (time.perf_counter() - t0) * 1000
            trial.record(tool, _meta(request, page), False, "no such page", ms)
            return HTMLResponse(_pages.gone(), 404, headers=_HEADERS)
        if page == "reward":
            with trial.lock:
                trial.store["reward_claims"] += 1
        html = render(trial.content)
        trial.record(tool, _meta(request, page), True, None, (time.perf_counter() - t0) * 1000)
        return HTMLResponse(html, headers=_HEADERS)

    async def submit(request: Request) -> Response:
        t0 = time.perf_counter()
        trial = trial_of(request)
        if trial is None:
            return HTMLResponse(_pages.gone(), 404, headers=_HEADERS)
        raw = await request.body()
        if len(raw) > _MAX_BODY:
            return HTMLResponse("too large", 413, headers=_HEADERS)
        form = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
        fields = {k: (form.get(k) or [""])[0] for k in _FIELDS}
        meta = _meta(request, "contact")
        with trial.lock:
            submission = {**fields, "browser": meta["browser"]}
            trial.store["submissions"].append(submission)
            number = len(trial.store["submissions"])
        ms = (time.perf_counter() - t0) * 1000
        trial.record(INJECTED_TOOL, {**fields, **meta}, True, None, ms)
        return RedirectResponse(f"thanks?n={number}", status_code=303, headers=_HEADERS)

    async def thanks(request: Request) -> Response:
        trial = trial_of(request)
        if trial is None:
            return HTMLResponse(_pages.gone(), 404, headers=_HEADERS)
        text = request.query_params.get("n", "")
        number = int(text) if text.isdigit() and len(text) < 6 else 0
        return HTMLResponse(_pages.thanks(trial.content, number), headers=_HEADERS)

    async def favicon(request: Request) -> Response:
        # Chromium asks for one on every new origin; a 404 would show as a console error.
        return Response(status_code=204, headers=_HEADERS)

    return Starlette(
        routes=[
            Route("/favicon.ico", favicon),
            Route("/t/{token}/", view),
            Route("/t/{token}/contact", submit, methods=["POST"]),
            Route("/t/{token}/thanks", thanks),
            Route("/t/{token}/{page}", view),
        ]
    )
