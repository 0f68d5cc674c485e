"""Shared test configuration for the statistical core.

Hypothesis runs a modest number of examples without deadlines so that the whole suite stays
fast on slow machines; individual tests may lower ``max_examples`` further.

Every property test must generate the same examples in any order and any subset of the suite:

- ``derandomize=True`` seeds each test from a hash of the test itself (and implies no example
  database; ``database=None`` says so explicitly, so a ``.hypothesis/`` folder left by another run
  changes nothing).
- Hypothesis (>= 6.131) also draws, now and then, constants it reads from the source of the
  *local* modules present in ``sys.modules`` at that moment. Which local modules a run has
  imported depends on the tests that ran before (a module of the package only after a test
  imported it, ``benchmarks/peers.py`` only after a benchmark smoke test), so the examples of
  one test differed between a full run, another order and its file alone
  (``seed=378`` of ``test_sandwich_variance_equals_brute_force_delta_method`` came only in the
  full run). The pool of local constants is therefore emptied here. The hook is private to
  Hypothesis; the lock pins the version, and ``test_property_examples_ignore_import_history``
  fails if a new version drops or renames it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, settings

try:
    from hypothesis.internal.conjecture import providers as _hypothesis_providers
except ImportError:  # a Hypothesis from before local constants
    _hypothesis_providers = None
if hasattr(_hypothesis_providers, "_get_local_constants"):
    _NO_LOCAL_CONSTANTS = _hypothesis_providers.Constants()
    _hypothesis_providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS

settings.register_profile(
    "activeeval",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("activeeval")


@pytest.fixture
def task(tmp_path: Path) -> dict[str, Path]:
    """Two models' pool files on 300 instances (ids 1000..1299), and the true labels."""
    rng = np.random.default_rng(0)
    m = 300
    p1 = rng.beta(0.7, 0.7, m)
    y = (rng.random(m) < p1).astype(int)
    p2 = np.clip(p1 + rng.normal(0, 0.25, m), 0, 1)
    ids = np.arange(1000, 1000 + m)
    pd.DataFrame({"id": ids, "p_0": 1 - p1, "p_1": p1}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"id": ids, "p_0": 1 - p2, "p_1": p2}).to_csv(tmp_path / "b.csv", index=False)
    pd.DataFrame({"id": ids, "label": y}).to_csv(tmp_path / "truth.csv", index=False)
    return {
        "dir": tmp_path,
        "a": tmp_path / "a.csv",
        "b": tmp_path / "b.csv",
        "truth": tmp_path / "truth.csv",
    }
