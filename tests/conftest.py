"""Shared test configuration for the statistical core.

Hypothesis runs a modest number of examples without deadlines so that the whole suite stays
fast on slow machines; individual tests may lower ``max_examples`` further.

Every property test must generate the same examples in any order and any subset of the suite:

- ``derandomize=True`` seeds each test from a hash of the test itself (and implies no example
  database; ``database=None`` says so explicitly, so a ``.hypothesis/`` folder left by another run
  changes nothing).
- Hypothesis also mixes in constants it reads from the *local* modules present in
  ``sys.modules`` when a test draws (the "local constants" of hypothesis >= 6.131). Which
  ``activeeval`` submodules a run has imported depends on the tests that ran before, so the
  examples of one test used to differ between a full run and its file alone (``seed=378`` of
  ``test_sandwich_variance_equals_brute_force_delta_method`` only in the full run). Importing
  every submodule of the package here, before any test is collected, fixes that pool.
"""

from __future__ import annotations

import importlib
import pkgutil

from hypothesis import HealthCheck, settings

import activeeval


def _import_every_submodule() -> None:
    for module in pkgutil.walk_packages(activeeval.__path__, prefix="activeeval."):
        if module.name.endswith("__main__"):
            continue  # running it would start the command line
        importlib.import_module(module.name)


_import_every_submodule()

settings.register_profile(
    "activeeval",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("activeeval")
