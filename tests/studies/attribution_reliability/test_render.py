"""The results page and Markdown: what they must show, and what they must never run."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from pairbench.studies.attribution_reliability._render import md, render_html, render_markdown
from pairbench.studies.attribution_reliability._render_view import STATEMENT
from pairbench.studies.attribution_reliability._score import score
from pairbench.studies.attribution_reliability._score_models import Scorecard
from studies.attribution_reliability.ar_score_helpers import (
    finding,
    manifest,
    quiet_run,
    record,
    report,
)

EVIL = "<script>alert(1)</script>"
P_VALUE = re.compile(r"p[- ]?values?\b|\bp\s*[=<>≤]", re.IGNORECASE)


def card(engine: str = "heuristic", **notes: str) -> Scorecard:
    changes = {
        ("P01", 0): record("P01", report(finding(headline="Widget P01 dead"))),
        ("T01", 0): record(
            "T01",
            report(finding(headline=EVIL + " a | b", evidence="```")),
            raw_output=EVIL + "\n```",
        ),
    }
    records = [changes.get((r.case, r.trial), r) for r in quiet_run()]
    cases, packages = manifest()
    return score(records, cases, packages, engine=engine, manual_review=notes)


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def test_html_escapes_everything_an_engine_wrote() -> None:
    page = render_html(card())
    assert EVIL not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    parser = _Scripts()
    parser.feed(page)
    assert "script" not in parser.tags


def test_html_leads_with_the_statement_and_primary_metric() -> None:
    page = render_html(card())
    assert page.startswith("<!DOCTYPE html>")
    body = page.split("<body>", 1)[1]
    assert body.index(STATEMENT) < body.index("Product-finding precision (primary): 1/2")
    assert body.index("(primary)") < body.index("False-blame rate")
    assert "reference engine" in body and "1/29" in body


def test_fragment_is_embeddable() -> None:
    part = render_html(card(), fragment=True)
    assert part.lstrip().startswith("<section") and "<html" not in part
    assert STATEMENT in part


def test_engine_label_for_other_engines() -> None:
    assert "reference engine" not in render_html(card("openai"))
    assert "openai" in render_markdown(card("openai"))


def test_engine_identity_is_shown_escaped() -> None:
    cases, packages = manifest()
    c = score(quiet_run(), cases, packages, engine="openai", engine_identity={"commit": "<b>"})
    assert "&lt;b&gt;" in render_html(c) and "commit: &lt;b&gt;" in render_markdown(c)
    assert c.engine_identity == {"commit": "<b>"}


def test_every_miss_and_secondary_metric_is_shown() -> None:
    c = card()
    for text in (render_markdown(c), render_html(c)):
        assert f"Every miss ({len(c.misses)})" in text
        for name in (
            "True-issue recall",
            "Abstention quality",
            "Unsupported-claim rejection",
            "False-absence rate",
            "Repeatability",
            "Pairwise attribution agreement",
        ):
            assert name in text
        assert "P02" in text and "product not found" in text
        assert "undefined" in text  # no user met the target, so conditional recall is 0/0
    assert len(c.misses) >= 11


def test_no_p_value_anywhere() -> None:
    c = card()
    for text in (render_markdown(c), render_html(c), render_html(c, fragment=True)):
        assert not P_VALUE.search(html.unescape(re.sub(r"<[^>]*>", " ", text)))
    assert P_VALUE.search("p = 0.03") and P_VALUE.search("a p-value")


def test_markdown_neutralises_engine_text() -> None:
    text = render_markdown(card())
    # Outside code fences nothing is live; inside one, Markdown shows it verbatim as text.
    outside = re.sub(r"(?ms)^(`{3,})text$.*?^\1$", "", text)
    assert EVIL not in outside and "&lt;script&gt;" in outside
    assert EVIL in text
    assert "a \\| b" in text  # a pipe cannot split a table cell
    fence = next(line for line in text.splitlines() if line.startswith("````"))
    assert fence == "````text"  # longer than the engine's own ``` run
    assert text.index(STATEMENT) < text.index("(primary)") < text.index("## Secondary")


def test_manual_review_is_shown_beside() -> None:
    noted = card(T01="looked at by hand")
    for text in (render_markdown(noted), render_html(noted)):
        assert "looked at by hand" in text
    assert noted.metrics == card().metrics


def test_md_escape() -> None:
    assert md("a\n*b*  <i>") == "a \\*b\\* &lt;i&gt;"
