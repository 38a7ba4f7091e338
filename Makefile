# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the traces folder (see docs/explanation/references.md): $DISPATCHLAB_TRACES, else ../shared/traces
TRACES ?= $(or $(DISPATCHLAB_TRACES),../shared/traces)

.PHONY: demo test test-fast lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,docs]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dispatchlab demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples docs
	$(BIN)/lint-imports
	$(BIN)/mypy  # the typed contract: core/, dispatch/, sim/view.py ([tool.mypy])
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples docs
	$(BIN)/lint-imports  # the import contract, .importlinter
	$(BIN)/mypy  # the typed contract: core/, dispatch/, sim/view.py ([tool.mypy])

# the documentation site (docs/, Sphinx + MyST) into docs/_build/html; warnings are errors;
# no network at build time
docs: $(STAMP)
	$(BIN)/sphinx-build -E -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_sim.py $(TRACES)/KTH-SP2-1996-2.1-cln.swf.gz --dispatcher fifo easy conservative

# the loop while editing (under a minute on 2 cores): `make test`'s checks, then its tests
# not marked slow, traces, browser, dask or docs (the markers: pyproject.toml); CI runs
# `make test`
FAST := not slow and not traces and not browser and not dask and not docs
test-fast: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples docs
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q -m "$(FAST)"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache docs/_build docs/_generated
