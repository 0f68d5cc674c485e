"""Shared test configuration for the statistical core.

Hypothesis runs a modest number of examples without deadlines so that the whole suite stays
fast and deterministic on slow machines; individual tests may lower ``max_examples`` further.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "activeeval",
    max_examples=50,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("activeeval")
