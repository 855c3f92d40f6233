"""Stage 2 of a report: the view (``_doc.View``), the summary laid out as sections of
paragraphs, tables of plain text and plots, each section chosen by what the study declares
(``_build.build_view``). The modules here are named for the sections they lay out; the
summary's parts of the same names are computed in ``report.summary``."""
