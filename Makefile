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
STAMP_DOCS := $(VENV)/.installed-docs
STAMP_DASK := $(VENV)/.installed-dask
# pytest-randomly shuffles the order; a fixed seed keeps `make test` the same run every time.
# `make test TEST_SEED=random` (or any number) runs another order.
TEST_SEED ?= 20261124
PYTEST_ORDER := $(if $(filter random,$(TEST_SEED)),,--randomly-seed=$(TEST_SEED))

.PHONY: demo test test-latest test-min lock bench reproduce glide-env lint docs docs-check integration clean

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

$(STAMP_DOCS): $(STAMP_TEST)
	$(PIP) install --quiet -c $(LOCK) -e ".[test,docs]"
	@touch $@

$(STAMP_DASK): $(STAMP_TEST)
	$(PIP) install --quiet -c $(LOCK) -e ".[test,dask]"
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
	.venv-lock/bin/python -m pip install --quiet -e ".[test,lint,bench,docs,dask]"
	.venv-lock/bin/python -m pip install --quiet --no-deps $(PEERS_NO_DEPS)
	mkdir -p requirements
	{ echo "# pip constraints: every package of every extra and peer, pinned. Made by 'make lock'"; \
	  echo "# with $$(.venv-lock/bin/python --version) on $$(uname -sm); do not edit by hand."; \
	  .venv-lock/bin/python -m pip freeze --all --exclude-editable | grep -vE '^(setuptools|wheel)=='; } > $(LOCK)
	rm -rf .venv-lock
	@echo "wrote $(LOCK); run 'make clean test' to install from it"

bench: $(STAMP_BENCH) $(STAMP_DASK)
	$(BIN)/python -m pytest -q -p no:randomly benchmarks/test_peers_smoke.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/ranking_bench.py
	$(BIN)/python benchmarks/scale.py --sizes 1e6 1e7 1e8 --evaluate 1e6 1e7 1e8 --compare 1e7 5e7
	$(BIN)/python benchmarks/dask_scale.py --sizes 1e7 1e8 1e9

# GLIDE (glide-py) needs Python >= 3.12, so the robustness benchmark runs it in its own
# environment, .venv-glide, pinned by requirements/glide-lock.txt (network at install time
# only). Without it the benchmark's GLIDE columns say "not run (make glide-env)".
# A pyenv-installed 3.12 if there is one (pyenv's python3.12 shim needs PYENV_VERSION), else python3.12.
PYTHON_GLIDE ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) python3.12)
GLIDE_VENV := .venv-glide
GLIDE_LOCK := requirements/glide-lock.txt
STAMP_GLIDE := $(GLIDE_VENV)/.installed

$(STAMP_GLIDE): $(GLIDE_LOCK)
	@$(PYTHON_GLIDE) -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 || { echo "make: $(PYTHON_GLIDE) is not a Python >= 3.12; install Python 3.12 or run 'make glide-env PYTHON_GLIDE=/path/to/python3.12'"; exit 2; }
	$(PYTHON_GLIDE) -m venv $(GLIDE_VENV)
	$(GLIDE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(GLIDE_LOCK)
	@touch $@

glide-env: $(STAMP_GLIDE)

# GLIDE is optional for the reproduction: without Python 3.12 the rest still runs.
reproduce: $(STAMP_BENCH)
	@$(MAKE) --no-print-directory glide-env || echo "note: GLIDE not installed; the robustness report will say so"
	$(BIN)/python -m reproduce --out docs/results

# Label Studio (a Django application, ~1 GB) in its own environment, pinned by its own lock;
# tests/integration starts its server on a loopback port, runs the round trip through its REST
# API and stops it. Network at install time only.
LS_VENV := .venv-labelstudio
LS_LOCK := requirements/label-studio-lock.txt
STAMP_LS := $(LS_VENV)/.installed

$(STAMP_LS): $(LS_LOCK)
	$(check_python)
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(LS_LOCK)
	@touch $@

# `make integration`: the Label Studio round trip, and Dask pools on a distributed.LocalCluster
# (scheduler and two worker processes on localhost, the `dask` extra in .venv).
integration: $(STAMP_DASK) $(STAMP_LS)
	LABEL_STUDIO=$(CURDIR)/$(LS_VENV)/bin/label-studio $(BIN)/python -m pytest -q -p no:randomly -m integration tests/integration

# The documentation site, built into site/ (git-ignored) with warnings as errors (mkdocs.yml
# sets strict): a broken link, an unresolved reference, a docstring griffe cannot parse or a
# failing executed example stops it. Examples run with the venv's commands on PATH. (Not
# --quiet: mkdocs 1.6 then stops counting warnings, and strict mode never trips.)
docs: $(STAMP_DOCS)
	rm -rf site
	PATH="$(CURDIR)/$(BIN):$$PATH" NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build

# The built site opened in headless Chromium (Debian's package, installed here when missing:
# CI runs as root), its home page and one API page checked; screenshots in site/_screenshots/.
CHROMIUM ?= $(firstword $(shell command -v chromium chromium-browser 2>/dev/null) /usr/bin/chromium)
docs-check: docs
	@command -v $(CHROMIUM) >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -q -p no:randomly -m site tests/test_site.py

lint: $(STAMP_LINT)
	$(BIN)/ruff check src tests benchmarks reproduce
	$(BIN)/ruff format --check src tests benchmarks reproduce
	$(BIN)/mypy

clean:
	rm -rf site $(VENV) $(GLIDE_VENV) $(LS_VENV) .venv-latest .venv-min .venv-lock build dist *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
