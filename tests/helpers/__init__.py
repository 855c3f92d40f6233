"""Shared test helpers: builders of runs and experiments, the CLI zygote, proxy, proof and
tracker fixtures. A package under tests/ (on the path through pytest's ``pythonpath``), not
collected: test modules import ``helpers.<name>``."""
