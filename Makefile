# Every target creates or reuses its virtual environment and installs what it needs; a fresh
# clone needs only Python 3.11 and make.
#
# Installs come from the committed lock (requirements/lock.txt, pip constraints pinning every
# package of every extra), so a fresh machine gets the versions CI tested. `make lock` refreshes
# it from the newest versions pyproject.toml allows; `make test-latest` runs the suite on those
# newest versions without touching the lock, and `make test-min` on pyproject's minimum versions.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
LOCK := requirements/lock.txt
PIP := $(BIN)/python -m pip --disable-pip-version-check
STAMP_BASE := $(VENV)/.installed-base
STAMP_TEST := $(VENV)/.installed-test
STAMP_LINT := $(VENV)/.installed-lint
STAMP_BENCH := $(VENV)/.installed-bench
# pytest-randomly shuffles the order; a fixed seed keeps `make test` the same run every time.
# `make test TEST_SEED=random` (or any number) runs another order.
TEST_SEED ?= 20261124
PYTEST_ORDER := $(if $(filter random,$(TEST_SEED)),,--randomly-seed=$(TEST_SEED))

.PHONY: demo test test-latest test-min lock bench reproduce lint clean

# The interpreter check runs first in every recipe that makes a virtual environment.
define check_python
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=python3 ...'"; exit 2; }
endef

$(BIN)/python:
	$(check_python)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet -c $(LOCK) --upgrade pip

$(STAMP_BASE): $(BIN)/python pyproject.toml $(LOCK)
	$(PIP) install --quiet -c $(LOCK) -e .
	@touch $@

$(STAMP_TEST): $(STAMP_BASE)
	$(PIP) install --quiet -c $(LOCK) -e ".[test]"
	@touch $@

# Peers run side by side in benchmarks only: ppi-python from the `bench` extra; oasis 0.1.3
# declares the obsolete `sklearn` and `tables` packages, so it is installed without its declared
# dependencies (benchmarks/peers.py shims what it needs); `pip check` therefore reports it, by
# design.
PEERS_NO_DEPS := oasis==0.1.3

$(STAMP_BENCH): $(STAMP_TEST)
	$(PIP) install --quiet -c $(LOCK) -e ".[test,bench]"
	$(PIP) install --quiet -c $(LOCK) --no-deps $(PEERS_NO_DEPS)
	@touch $@

$(STAMP_LINT): $(STAMP_BASE)
	$(PIP) install --quiet -c $(LOCK) -e ".[lint]"
	@touch $@

demo: $(STAMP_BASE)
	$(BIN)/activeeval demo

test: $(STAMP_TEST)
	$(BIN)/python -m pytest -q $(PYTEST_ORDER)

# The newest versions pyproject.toml allows, in a throw-away environment: drift shows here
# before users see it. Prints the versions it tested.
test-latest:
	$(check_python)
	rm -rf .venv-latest
	$(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	.venv-latest/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e ".[test]"
	.venv-latest/bin/python -m pip freeze --exclude-editable | grep -iE '^(numpy|scipy|pandas|scikit-learn|matplotlib|pyarrow|click|hypothesis|pytest|statsmodels)=='
	.venv-latest/bin/python -m pytest -q $(PYTEST_ORDER)

# pyproject.toml's minimum versions of the direct dependencies (every `>=` read as `==`; what
# they depend on resolves as pip chooses): the minimums are claims, and this checks them.
test-min:
	$(check_python)
	rm -rf .venv-min
	$(PYTHON) -m venv .venv-min
	.venv-min/bin/python -m pip install --quiet --upgrade pip
	$(PYTHON) -c 'import re, tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(re.sub(r">=", "==", r) for r in p["dependencies"] + p["optional-dependencies"]["test"]))' > .venv-min/minimum.txt
	.venv-min/bin/python -m pip install --quiet -c .venv-min/minimum.txt -e ".[test]"
	.venv-min/bin/python -m pip freeze --exclude-editable | grep -iE '^(numpy|scipy|pandas|scikit-learn|matplotlib|pyarrow|click|hypothesis|pytest|statsmodels)=='
	.venv-min/bin/python -m pytest -q $(PYTEST_ORDER)

# Re-resolve every extra and the benchmarks' peers at their newest allowed versions and pin
# them all in requirements/lock.txt. Review the diff, run `make test`, commit the lock.
lock:
	$(check_python)
	rm -rf .venv-lock
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet -e ".[test,lint,bench]"
	.venv-lock/bin/python -m pip install --quiet --no-deps $(PEERS_NO_DEPS)
	mkdir -p requirements
	{ echo "# pip constraints: every package of every extra and peer, pinned. Made by 'make lock'"; \
	  echo "# with $$(.venv-lock/bin/python --version) on $$(uname -sm); do not edit by hand."; \
	  .venv-lock/bin/python -m pip freeze --all --exclude-editable | grep -vE '^(setuptools|wheel)=='; } > $(LOCK)
	rm -rf .venv-lock
	@echo "wrote $(LOCK); run 'make clean test' to install from it"

bench: $(STAMP_BENCH)
	$(BIN)/python -m pytest -q -p no:randomly benchmarks/test_peers_smoke.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/ranking_bench.py

reproduce: $(STAMP_BENCH)
	$(BIN)/python -m reproduce --out docs/results

lint: $(STAMP_LINT)
	$(BIN)/ruff check src tests benchmarks reproduce
	$(BIN)/ruff format --check src tests benchmarks reproduce
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .venv-latest .venv-min .venv-lock build dist *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
