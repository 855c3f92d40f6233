"""Stage 1 of a report: the typed ``Summary`` (``_schema.Summary``) built from a run's trial
table (``_build.summarize``), every statistic from ``pairbench.analysis``. The modules here
are named for the part of the summary they compute; ``SUMMARY_SCHEMA.md`` is generated
from the models."""
