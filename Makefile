# Every target creates or reuses .venv and installs what it needs; a fresh clone needs only
# Python 3.11 and make.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP_BASE := $(VENV)/.installed-base
STAMP_TEST := $(VENV)/.installed-test
STAMP_LINT := $(VENV)/.installed-lint
STAMP_BENCH := $(VENV)/.installed-bench

.PHONY: demo test bench reproduce lint clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=python3 ...'"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_BASE): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(STAMP_TEST): $(STAMP_BASE)
	$(BIN)/python -m pip install --quiet -e ".[test]"
	@touch $@

# Peers run side by side in benchmarks only. oasis 0.1.3 declares the obsolete `sklearn` and
# `tables` packages, so it is installed without its declared dependencies (benchmarks/peers.py
# shims what it needs); `pip check` therefore reports it, by design.
$(STAMP_BENCH): $(STAMP_TEST)
	$(BIN)/python -m pip install --quiet ppi-python==0.2.3
	$(BIN)/python -m pip install --quiet --no-deps oasis==0.1.3
	@touch $@

$(STAMP_LINT): $(STAMP_BASE)
	$(BIN)/python -m pip install --quiet -e ".[lint]"
	@touch $@

demo: $(STAMP_BASE)
	$(BIN)/activeeval demo

test: $(STAMP_TEST)
	$(BIN)/python -m pytest -q

bench: $(STAMP_BENCH)
	$(BIN)/python -m pytest -q benchmarks/test_peers_smoke.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/ranking_bench.py

reproduce: $(STAMP_BENCH)
	$(BIN)/python -m activeeval.experiments.reproduce --out docs/results

lint: $(STAMP_LINT)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
