"""The double's browser agent answers from what the browser returned, and only from that."""

from __future__ import annotations

import json
from typing import Any

from pairbench.studies.mcp_transports_playwright._double import NO_BROWSER, browse

URL = "http://127.0.0.1:9/t/abc/"
TITLE = f"Open {URL} in the browser. What is the title of that page? Answer with the title only."
CELL = (
    f"Open {URL}catalog in the browser. In the catalog table, what is the Price (EUR) of the "
    "product with SKU HJ-322? Answer with the value only."
)
OFFERED = ["mcp__playwright__browser_navigate", "mcp__playwright__browser_snapshot"]
# As @playwright/mcp 0.0.83 answers (recorded against the study's site, trimmed).
NAVIGATED = (
    f"### Page\n- Page URL: {URL}\n- Page Title: Frozen Pebble Mercantile | home f1e5\n"
    "### Snapshot\n- [Snapshot](.playwright-mcp/page-2026-12-02T19-00-58-429Z.yml)"
)
SNAPSHOT = """### Snapshot
```yaml
- table [ref=f1e10]:
  - rowgroup [ref=f1e11]:
    - row [ref=f1e12]:
      - columnheader "SKU" [ref=f1e13]
      - columnheader "Product" [ref=f1e14]
      - columnheader "Price (EUR)" [ref=f1e15]
  - rowgroup [ref=f1e18]:
    - row [ref=f1e19]:
      - cell "AV-372" [ref=f1e20]
      - cell "brass trowel" [ref=f1e21]
      - cell "30.00" [ref=f1e22]
    - row [ref=f1e61]:
      - cell "HJ-322" [ref=f1e62]
      - cell "copper compass" [ref=f1e63]
      - cell "4.14" [ref=f1e64]
```"""


def _after(*calls: tuple[str, str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "x"}]
    for i, (name, result) in enumerate(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": result})
    return messages


def test_it_navigates_first_then_reads_the_title_from_the_result() -> None:
    reply = browse(TITLE, _after(), OFFERED)
    assert reply is not None and reply[0] is None
    (call,) = reply[1]
    assert call["function"]["name"] == OFFERED[0]
    assert json.loads(call["function"]["arguments"]) == {"url": URL}
    answered = browse(TITLE, _after((OFFERED[0], NAVIGATED)), OFFERED)
    assert answered == ("Frozen Pebble Mercantile | home f1e5", [])


def test_a_cell_comes_from_the_snapshot_row_and_column() -> None:
    after_nav = browse(CELL, _after((OFFERED[0], NAVIGATED)), OFFERED)
    assert after_nav is not None and after_nav[1][0]["function"]["name"] == OFFERED[1]
    done = _after((OFFERED[0], NAVIGATED), (OFFERED[1], SNAPSHOT))
    assert browse(CELL, done, OFFERED) == ("4.14", [])
    # Another page's table (a stale or another trial's) does not hold the answer.
    other = SNAPSHOT.replace("HJ-322", "ZZ-000")
    wrong = browse(CELL, _after((OFFERED[0], NAVIGATED), (OFFERED[1], other)), OFFERED)
    assert wrong is not None and wrong[0] != "4.14"


def test_without_a_browser_tool_it_cannot_answer_and_other_prompts_are_not_its() -> None:
    assert browse(TITLE, _after(), []) == (NO_BROWSER, [])
    assert browse(CELL, _after(), OFFERED[:1]) == (NO_BROWSER, [])
    assert browse("What is the title of issue #3 in the repository a/b?", _after(), OFFERED) is None
