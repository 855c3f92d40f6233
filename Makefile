# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
CONSTRAINTS := constraints.txt

.PHONY: demo test check lint types install dev docs locks system-deps clean-venv

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

# System packages the cross-check tests need (R for statistics references). Installed
# when missing and root; otherwise those tests skip loudly (and fail under CI=true).
system-deps:
	@if ! Rscript -e 'library(metafor)' >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing r-base-core and r-cran-metafor (R cross-checks)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      r-base-core r-cran-metafor >/dev/null; \
	  else \
	    echo "warning: R or metafor is missing and this is not root: R cross-checks will skip"; \
	  fi; \
	fi

test: check system-deps
	$(PY) -m pytest -q

# Re-freeze the built-in studies' locks (after changing a study or pairbench itself).
locks: install
	for f in src/pairbench/studies/*/study/experiment.yaml; do $(VENV)/bin/pairbench freeze $$f; done

docs: install
	$(PY) -m pairbench.cli._docs

clean-venv:
	rm -rf $(VENV)
