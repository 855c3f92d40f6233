# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
CONSTRAINTS := constraints.txt

.PHONY: demo test check lint types install dev docs clean-venv

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade "pip>=24"

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
dev: $(VENV)/.dev-installed

demo: install
	$(VENV)/bin/pairbench demo

lint: dev
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests

types: dev
	$(VENV)/bin/mypy src

check: lint types

test: check
	$(PY) -m pytest -q

docs: install
	$(PY) -m pairbench.cli._docs

clean-venv:
	rm -rf $(VENV)
