"""Helpers of the environment, epistemic and their calibration sites, over the one shell
every case shares (``_skin.Skin``): handlers that always answer the same page, plain forms,
and a gate that answers automated browsers differently.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pairbench.studies.attribution_reliability.site._kit import Handler, SiteContext, esc
from pairbench.studies.attribution_reliability.site._skin import Skin


def shell(ctx: SiteContext, skin: Skin, title: str, main: str) -> str:
    """A page of the business's site in the shared shell."""
    return skin.render(ctx, title, main)


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
    ctx: SiteContext, skin: Skin, title: str, intro: str, action: str, fields: str,
    button: str, *, multipart: bool = False,
) -> str:  # fmt: skip
    """A page with one form that posts to ``action`` (``multipart`` when it has a file)."""
    enctype = ' enctype="multipart/form-data"' if multipart else ""
    return shell(
        ctx, skin, title,
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


def posted(ctx: SiteContext, skin: Skin, needs: tuple[str, ...], ok: str) -> Handler:
    """A form's POST: ``ok`` once every field in ``needs`` is filled (a file counts by name)."""

    async def handler(request: Request) -> Response:
        form = await request.form()
        missing = [n for n in needs if not getattr(form.get(n), "filename", form.get(n))]
        if missing:
            body = "<h1>Almost there</h1><p>Please fill in every field and try again.</p>"
            return HTMLResponse(shell(ctx, skin, "Almost there", body), status_code=400)
        return HTMLResponse(shell(ctx, skin, "Thank you", ok))

    return handler
