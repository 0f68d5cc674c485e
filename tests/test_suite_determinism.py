"""The suite's property tests draw the same examples whatever ran before them.

Hypothesis mixes constants read from the local modules in ``sys.modules`` into its draws, so a
test's examples used to depend on which modules earlier tests had imported (conftest.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st


def test_property_examples_ignore_import_history(tmp_path: Path, monkeypatch) -> None:
    seen: list[int] = []

    @settings(max_examples=300, derandomize=True, database=None)
    @given(st.integers(0, 10**9))
    def record(x: int) -> None:
        seen.append(x)

    record()
    before, seen[:] = list(seen), []
    # A local module full of distinctive constants, as a project module that a test imports
    # late would be (e.g. benchmarks/peers.py through a benchmark smoke test); 200 of them, as
    # Hypothesis skips a module with more than 1,024.
    constants = ", ".join(str(987_654_321 - 7 * i) for i in range(200))
    (tmp_path / "late_local_module.py").write_text(f"CONSTANTS = [{constants}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "late_local_module", raising=False)
    import late_local_module  # noqa: F401

    try:
        record()
    finally:
        del sys.modules["late_local_module"]
    assert seen == before
