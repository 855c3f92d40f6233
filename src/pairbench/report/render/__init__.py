"""Stage 3 of a report: rendering a view as ``report.md`` (``_markdown``) and a
self-contained ``report.html`` (``_html``, ``templates/``), and drawing its plots as
byte-stable SVG (``_plots``, ``_plot_svg``)."""
