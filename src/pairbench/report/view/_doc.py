"""The document model both reports draw: sections of paragraphs, tables of plain text and
plots (drawn by the render stage, placed by the view).

Every cell is plain text (agent text included); each renderer escapes it for its format.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias


class Table(NamedTuple):
    """A table: header cells and rows of cells."""

    headers: list[str]
    rows: list[list[str]]


class Figure(NamedTuple):
    """One plot: its SVG markup, a text alternative and the numbers it draws."""

    name: str
    """The plot's name (``spec.CORE_PLOTS``, or a study's own)."""
    title: str
    svg: str
    """An ``<svg>`` element (no XML prolog), byte-deterministic for one summary."""
    alt: str
    """What the plot shows, in words."""
    numbers: Table
    """The numbers drawn, as a table."""


class Omitted(NamedTuple):
    """A declared plot with nothing to draw in this run, and why."""

    name: str
    reason: str


Block: TypeAlias = "str | Table | Figure"
"""A paragraph, a table or a plot (drawn by ``pairbench.report.render._plots``)."""


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
