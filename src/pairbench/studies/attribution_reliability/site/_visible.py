"""The words a served response shows a user: what the audit keeps of each page it served.

An HTML body keeps its text outside ``<script>``, ``<style>``, ``<template>`` and
``<noscript>`` (the title included: a browser shows it on the tab); a JSON or plain-text
body (a fetch the page makes) is kept as it is. Anything else (images, fonts) shows no
words. The text is capped: the audit is for evidence, not an archive of the site.

**Usage**::

    visible_text(b"<p>Place <b>order</b></p><script>x()</script>", "text/html")
    # 'Place order'
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

TEXT_CAP = 20_000
"""Characters kept per response."""
_HIDDEN = frozenset({"script", "style", "template", "noscript"})
_SPACE = re.compile(r"\s+")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(body: bytes, content_type: str) -> str:
    """The words ``body`` shows a user, whitespace collapsed (see the module docstring)."""
    kind = content_type.split(";")[0].strip().lower()
    raw = body.decode("utf-8", errors="replace")
    if kind == "text/html":
        parser = _Text()
        parser.feed(raw)
        parser.close()
        raw = " ".join(parser.parts)
    elif not (kind.startswith("text/") or kind.endswith("json")):
        return ""
    return _SPACE.sub(" ", raw).strip()[:TEXT_CAP]
