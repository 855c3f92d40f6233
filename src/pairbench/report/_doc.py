"""The document model both reports draw: sections of paragraphs and tables of plain text.

Every cell is plain text (agent text included); each renderer escapes it for its format.
"""

from __future__ import annotations

from typing import NamedTuple


class Table(NamedTuple):
    """A table: header cells and rows of cells."""

    headers: list[str]
    rows: list[list[str]]


class Section(NamedTuple):
    """A titled section."""

    title: str
    blocks: list[str | Table]
    """Paragraphs (str) and tables, in order."""


class View(NamedTuple):
    """A whole report: title, run metadata, and sections (none when nothing was recorded)."""

    title: str
    meta: list[tuple[str, str]]
    simulated: bool
    empty: bool
    sections: list[Section]
