"""The double's mcp-transports-playwright replies: tier 1 read from what the browser returned.

The two tier-1 prompts (a page's title; one cell of the catalog table) are answered the way a
model with ``@playwright/mcp`` answers them: it calls ``browser_navigate`` with the URL in the
prompt; for the title it reads ``- Page Title:`` from that call's result; for a cell it calls
``browser_snapshot`` (``@playwright/mcp`` 0.0.83 writes a navigation's snapshot to a file and
returns only its link) and reads the accessibility tree: the ``columnheader`` names give the
column, the ``row`` whose cells hold the SKU gives the row. Nothing is read from the prompt but
the URL, the SKU and the column's name, so a browser that shows another page (another trial's,
a stale one) gives a wrong answer, and no browser tool gives "I cannot open a web browser".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pairbench.testing._messages import calls_and_results as _calls_and_results
from pairbench.testing._messages import messages as _messages
from pairbench.testing._messages import prompt as _prompt
from pairbench.testing._messages import tool_names as _tool_names

NO_BROWSER = "I cannot open a web browser from here."
_TITLE = re.compile(r"Open (?P<url>\S+) in the browser\. What is the title of that page\?")
_CELL = re.compile(
    r"Open (?P<url>\S+) in the browser\. In the catalog table, what is the (?P<label>.+?) of "
    r"the product with SKU (?P<sku>\S+?)\?"
)
_PAGE_TITLE = re.compile(r"^- Page Title: (?P<title>.*)$", re.M)
_HEADER = re.compile(r'^\s*- columnheader "(?P<name>(?:[^"\\]|\\.)*)"', re.M)
_ROW = re.compile(r"^(?P<indent>\s*)- row\b.*$", re.M)
_CELL_LINE = re.compile(r'^\s*- cell "(?P<text>(?:[^"\\]|\\.)*)"', re.M)


def _call(name: str, args: dict[str, Any], n: int) -> list[dict[str, Any]]:
    call = {"name": name, "arguments": json.dumps(args)}
    return [{"id": f"call_{n}", "type": "function", "function": call}]


def _unquote(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\")


def _cell(snapshot: str, label: str, sku: str) -> str | None:
    """The cell in ``label``'s column of the row whose cells include ``sku``."""
    headers = [_unquote(m["name"]) for m in _HEADER.finditer(snapshot)]
    if label not in headers:
        return None
    column = headers.index(label)
    starts = [m.end() for m in _ROW.finditer(snapshot)]
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(snapshot)
        cells = [_unquote(m["text"]) for m in _CELL_LINE.finditer(snapshot[start:end])]
        if sku in cells and column < len(cells):
            return cells[column]
    return None


def browse(
    prompt: str, messages: Sequence[Mapping[str, Any]], offered: list[str]
) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The reply to a tier-1 browser prompt, or None when ``prompt`` is not one."""
    title, cell = _TITLE.search(prompt), _CELL.search(prompt)
    match = title or cell
    if match is None:
        return None
    tools = {n.split("__")[-1]: n for n in offered}
    navigate, snapshot = tools.get("browser_navigate"), tools.get("browser_snapshot")
    if navigate is None or (cell is not None and snapshot is None):
        return NO_BROWSER, []
    done = _calls_and_results(messages)
    navigated = [r for name, _, r in done if name == navigate and r is not None]
    if not navigated:
        return None, _call(navigate, {"url": match["url"]}, len(messages))
    if title is not None:
        found = _PAGE_TITLE.search(navigated[-1])
        return (found["title"].strip() if found else "The page has no title."), []
    snapshots = [r for name, _, r in done if name == snapshot and r is not None]
    if not snapshots and snapshot is not None:
        return None, _call(snapshot, {}, len(messages))
    value = _cell(snapshots[-1], match["label"], match["sku"]) if snapshots else None
    return (value if value is not None else f"No {match['label']} for {match['sku']}."), []


def browser_reply(body: Mapping[str, Any]) -> tuple[str | None, list[dict[str, Any]]] | None:
    """``Study.double``: the browser agent's reply, or ``None`` for another study's request."""
    return browse(_prompt(body), _messages(body), _tool_names(body))
