"""The frozen PDF of the study: the dataset table and the methods text, byte-stable.

Written with reportlab (pinned: :data:`PDF_WRITER_VERSION`) in invariant mode: fixed
creation and modification dates (the baseline date, through ``SOURCE_DATE_EPOCH``), a
/ID derived from the content only, the core-14 fonts Helvetica and Courier (never
embedded, so no subset tags), and uncompressed page streams. Rebuild with::

    python -m pairbench.studies.webmcp_vs_pdf._pdf OUT.pdf
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

from pairbench.studies.webmcp_vs_pdf._dataset import (
    BASELINE_EPOCH,
    BASELINE_VERSION,
    METHODS_PATH,
    Record,
    load_dataset,
)

TITLE = "Teacher expectancy meta-analysis: frozen evidence artifact"

_TABLE_COLUMNS = ("record", "author", "year", "weeks", "setting", "tester", "n1i", "n2i")
_TABLE_HEADER = (*_TABLE_COLUMNS, "yi", "vi")


@contextlib.contextmanager
def _source_date(epoch: int) -> Iterator[None]:
    # reportlab's invariant mode takes its timestamp from SOURCE_DATE_EPOCH when set, so
    # pin it for the build (an inherited value would change the dates) and restore it.
    saved = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["SOURCE_DATE_EPOCH"]
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved


def _inline(text: str) -> str:
    """Markdown-ish inline text to reportlab paragraph markup (escaped; `code` in Courier)."""
    parts = re.split(r"`([^`]*)`", text)
    return "".join(
        f'<font face="Courier">{escape(part)}</font>' if i % 2 else escape(part)
        for i, part in enumerate(parts)
    )


def _methods_flowables(markdown: str, styles: Any) -> list[Any]:
    from reportlab.platypus import Paragraph  # type: ignore[import-untyped, unused-ignore]

    blocks: list[tuple[str, str]] = []  # (kind, text); kind is h1, h2, li or p
    for line in markdown.splitlines():
        stripped = line.strip()
        if not stripped:
            blocks.append(("", ""))
        elif stripped.startswith("## "):
            blocks.append(("h2", stripped[3:]))
        elif stripped.startswith("# "):
            blocks.append(("h1", stripped[2:]))
        elif stripped.startswith("- "):
            blocks.append(("li", stripped[2:]))
        elif blocks and blocks[-1][0] in ("p", "li"):
            blocks[-1] = (blocks[-1][0], f"{blocks[-1][1]} {stripped}")
        else:
            blocks.append(("p", stripped))
    style = {"h1": "Heading1", "h2": "Heading2", "li": "Bullet", "p": "BodyText"}
    out: list[Any] = []
    for kind, text in blocks:
        if kind == "li":
            out.append(Paragraph(_inline(text), styles["Bullet"], bulletText="-"))
        elif kind:
            out.append(Paragraph(_inline(text), styles[style[kind]]))
    return out


def _table(records: tuple[Record, ...]) -> Any:
    from reportlab.lib import colors  # type: ignore[import-untyped, unused-ignore]
    from reportlab.platypus import Table, TableStyle  # type: ignore[import-untyped, unused-ignore]

    rows: list[list[str]] = [list(_TABLE_HEADER)]
    for r in records:
        rows.append([str(getattr(r, c)) for c in _TABLE_COLUMNS] + [r.yi_text, r.vi_text])
    table = Table(rows, repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), "Helvetica"),
                ("FONTNAME", (0, 0), (-1, 0), "Helvetica-Bold"),
                ("FONTSIZE", (0, 0), (-1, -1), 8),
                ("ALIGN", (2, 1), (-1, -1), "RIGHT"),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.5, colors.black),
            ]
        )
    )
    return table


def build_pdf(path: Path | str, *, records: tuple[Record, ...] | None = None) -> str:
    """Write the frozen PDF to ``path`` and return its SHA-256 (hex).

    **Usage**::

        build_pdf(tmp_path / "b.pdf") == PDF_SHA256   # True with the pinned writer
    """
    from reportlab.lib.pagesizes import A4  # type: ignore[import-untyped, unused-ignore]
    from reportlab.lib.styles import getSampleStyleSheet  # type: ignore[import-untyped, unused-ignore]
    from reportlab.lib.units import mm  # type: ignore[import-untyped, unused-ignore]
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer  # type: ignore[import-untyped, unused-ignore]

    rows = load_dataset() if records is None else records
    styles = getSampleStyleSheet()
    story: list[Any] = [
        Paragraph(escape(TITLE), styles["Title"]),
        Paragraph(
            escape(
                f"Baseline version {BASELINE_VERSION}. Dataset: metadat::dat.raudenbush1985, "
                f"{len(rows)} effect-size records (yi: standardized mean difference; "
                "vi: sampling variance)."
            ),
            styles["BodyText"],
        ),
        Spacer(1, 4 * mm),
        _table(rows),
        Spacer(1, 4 * mm),
        *_methods_flowables(METHODS_PATH.read_text(encoding="utf-8"), styles),
    ]
    out = Path(path)
    with _source_date(BASELINE_EPOCH), out.open("wb") as handle:
        doc = SimpleDocTemplate(
            handle,
            pagesize=A4,
            leftMargin=18 * mm,
            rightMargin=18 * mm,
            topMargin=18 * mm,
            bottomMargin=18 * mm,
            title=TITLE,
            author="pairbench webmcp-vs-pdf study",
            subject=f"baseline {BASELINE_VERSION}",
            creator="pairbench",
            invariant=1,
            pageCompression=0,
        )
        doc.build(story)
    return hashlib.sha256(out.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pairbench.studies.webmcp_vs_pdf._pdf OUT.pdf", file=sys.stderr)
        return 2
    print(build_pdf(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
