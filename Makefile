# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the traces folder (see docs/explanation/references.md): $DISPATCHLAB_TRACES, else ../shared/traces
TRACES ?= $(or $(DISPATCHLAB_TRACES),../shared/traces)

.PHONY: demo test test-fast lint bench docs clean native rust-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `pip install -e .` builds the compiled core too (maturin, release mode): building
# needs a Rust toolchain (cargo); `make native` rebuilds it after editing rust/
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,docs]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dispatchlab demo

test: $(STAMP) rust-check
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

# the Rust workspace (rust/README.md): the core crate's tests, clippy on both crates
# (the binding's build reads the venv's Python), formatting
CARGO := cargo
RUST := --manifest-path rust/Cargo.toml
rust-check: $(STAMP)
	$(CARGO) test $(RUST)
	PYO3_PYTHON=$(abspath $(BIN)/python) $(CARGO) clippy $(RUST) --workspace --all-targets -- -D warnings
	$(CARGO) fmt $(RUST) --all --check

# rebuild the extension dispatchlab._core in place (src/dispatchlab/_core.abi3.so, release
# mode) after editing rust/: what the editable install built, without reinstalling
native: $(STAMP)
	PYO3_PYTHON=$(abspath $(BIN)/python) $(CARGO) build $(RUST) --release -p dispatchlab-py
	# a new file, renamed over the old one: a process that loaded the old one keeps it
	cp rust/target/release/lib_core.so src/dispatchlab/_core.abi3.so.new
	mv -f src/dispatchlab/_core.abi3.so.new src/dispatchlab/_core.abi3.so

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_sim.py $(TRACES)/KTH-SP2-1996-2.1-cln.swf.gz --dispatcher fifo easy conservative

# the loop while editing (under a minute on 2 cores): `make test`'s checks, then its tests
# not marked slow, traces, browser, dask or docs (the markers: pyproject.toml); CI runs
# `make test`
FAST := not slow and not traces and not browser and not dask and not docs
test-fast: $(STAMP) rust-check
	$(BIN)/ruff check src tests benchmarks examples docs
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 -q -m "$(FAST)"

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache docs/_build docs/_generated \
		rust/target src/dispatchlab/_core*.so
