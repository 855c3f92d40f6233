"""The look shared by the environment, epistemic and their calibration sites: a small
business's brand bar and nav, plain forms, and handlers that always answer the same page.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import (
    WEBDRIVER_PROBE,
    Handler,
    SiteContext,
    esc,
    page,
)

Nav = list[tuple[str, str]]
"""Navigation links: (visible text, path relative to the slug)."""

_CSS = (
    "<style>body{font-family:system-ui,sans-serif;margin:0;color:#222;line-height:1.5}"
    "header{background:var(--c);color:#fff;padding:12px 24px;display:flex;gap:24px;"
    "align-items:center}header a{color:#fff;text-decoration:none}header strong{font-size:1.2em}"
    "main{max-width:760px;margin:24px auto;padding:0 16px}footer{color:#777;padding:24px;"
    "text-align:center;font-size:.9em}label{display:block;margin-top:12px}"
    "input,textarea,select{font:inherit;padding:6px;width:100%;max-width:420px}"
    "button{font:inherit;padding:8px 18px;margin-top:12px;background:var(--c);color:#fff;"
    "border:0;border-radius:4px;cursor:pointer}.card{border:1px solid #ddd;border-radius:6px;"
    "padding:12px 16px;margin:12px 0}</style>"
)


def shell(
    ctx: SiteContext,
    brand: str,
    nav: Nav,
    title: str,
    main: str,
    *,
    colour: str = "#2f5d50",
    probe: bool = False,
    head: str = "",
) -> str:
    """A page of a small business's site: brand bar, nav links (paths relative to the slug)."""
    links = "".join(f'<a href="{esc(ctx.url(path))}">{esc(text)}</a>' for text, path in nav)
    body = (
        f'<header style="--c:{colour}"><strong><a href="{esc(ctx.url())}">{esc(brand)}</a>'
        f"</strong><nav>{links}</nav></header>"
        f'<main style="--c:{colour}">{main}</main>'
        f"<footer>&copy; {esc(brand)}</footer>"
    )
    return page(f"{title} | {brand}", body, head=_CSS + (WEBDRIVER_PROBE if probe else "") + head)


def html(markup: str, status: int = 200, headers: dict[str, str] | None = None) -> Handler:
    """A handler that always answers ``markup``."""

    async def handler(request: Request) -> Response:
        return HTMLResponse(markup, status_code=status, headers=headers)

    return handler


def gated(open_markup: str, blocked: Callable[[], Response]) -> Handler:
    """``open_markup`` for people; ``blocked()`` for a request the server marked automated."""

    async def handler(request: Request) -> Response:
        if request.state.automated:
            return blocked()
        return HTMLResponse(open_markup)

    return handler


def form_page(
    ctx: SiteContext, brand: str, nav: Nav, title: str, intro: str, action: str, fields: str,
    button: str, *, multipart: bool = False,
) -> str:  # fmt: skip
    """A page with one form that posts to ``action`` (``multipart`` when it has a file)."""
    enctype = ' enctype="multipart/form-data"' if multipart else ""
    return shell(
        ctx, brand, nav, title,
        f"<h1>{esc(title)}</h1><p>{intro}</p>"
        f'<form method="post" action="{esc(ctx.url(action))}"{enctype}>{fields}'
        f"<button>{esc(button)}</button></form>",
    )  # fmt: skip


def field(label: str, name: str, kind: str = "text", *, required: bool = True) -> str:
    """A labelled control (``kind`` is an input type, or ``textarea``); ``name`` doubles as
    the id, so it must not carry a case's target term (attributes are not visible text)."""
    req = " required" if required else ""
    if kind == "textarea":
        control = f'<textarea id="{name}" name="{name}" rows="5"{req}></textarea>'
    else:
        control = f'<input id="{name}" name="{name}" type="{kind}"{req}>'
    return f'<label for="{name}">{esc(label)}</label>{control}'


def posted(ctx: SiteContext, brand: str, nav: Nav, needs: tuple[str, ...], ok: str) -> Handler:
    """A form's POST: ``ok`` once every field in ``needs`` is filled (a file counts by name)."""

    async def handler(request: Request) -> Response:
        form = await request.form()
        missing = [n for n in needs if not getattr(form.get(n), "filename", form.get(n))]
        if missing:
            body = "<h1>Almost there</h1><p>Please fill in every field and try again.</p>"
            return HTMLResponse(shell(ctx, brand, nav, "Almost there", body), status_code=400)
        return HTMLResponse(shell(ctx, brand, nav, "Thank you", ok))

    return handler
