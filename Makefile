# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the traces folder (see the README, "Traces"): $DISPATCHLAB_TRACES, else ../shared/traces
TRACES ?= $(or $(DISPATCHLAB_TRACES),../shared/traces)

.PHONY: demo test test-fast lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dispatchlab demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/lint-imports
	$(BIN)/mypy  # the typed contract: core/, dispatch/, sim/view.py ([tool.mypy])
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/lint-imports  # the import contract, .importlinter
	$(BIN)/mypy  # the typed contract: core/, dispatch/, sim/view.py ([tool.mypy])

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_sim.py $(TRACES)/KTH-SP2-1996-2.1-cln.swf.gz --dispatcher fifo easy conservative

# the loop while editing (under a minute on 2 cores): `make test`'s checks, then its tests
# not marked slow, traces, browser or dask (the markers: pyproject.toml); CI runs `make test`
FAST := not slow and not traces and not browser and not dask
test-fast: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q -m "$(FAST)"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache
