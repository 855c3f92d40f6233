"""The document model both reports draw: sections of paragraphs and tables of plain text.

Every cell is plain text (agent text included); each renderer escapes it for its format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypeAlias

if TYPE_CHECKING:
    from pairbench.report._plot_svg import Figure


class Table(NamedTuple):
    """A table: header cells and rows of cells."""

    headers: list[str]
    rows: list[list[str]]


Block: TypeAlias = "str | Table | Figure"
"""A paragraph, a table or a plot (``pairbench.report._plots.Figure``)."""


class Section(NamedTuple):
    """A titled section."""

    title: str
    blocks: list[Block]
    """Paragraphs (str), tables and plots, in order."""


class View(NamedTuple):
    """A whole report: title, run metadata, and sections (none when nothing was recorded)."""

    title: str
    meta: list[tuple[str, str]]
    simulated: bool
    empty: bool
    sections: list[Section]
