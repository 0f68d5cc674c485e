"""Stores written by an earlier release open, report what that release reported, and continue.

``tests/fixtures/stores/`` holds stores written at commit 44b2496 (schema version 2) and, in
``expected.json``, the estimates that release reported from them and the ids it would hand
out next; and stores written at commit 871da25 (schema version 4, the last release whose
sessions read the whole pool on every command) with ``expected_v4.json``, and stores written at
commit 9c02bb8 (schema version 5, the last release whose arrays were one blob each and whose
``session init`` read the pool files whole) with ``expected_v5.json``, and stores written at
commit 807d1c9 (schema version 6, the last release whose sessions drew each block of 1,024
draws from uniforms of its own; one store continues past its first block) with
``expected_v6.json``, and stores written at commit 76fb3cf (schema version 8,
pool summaries that serve a stopping rule's looks; one store has a rule) with
``expected_v8.json``, the first to record the BLAS kernel that wrote them (``make_stores.py``
wrote them all, run with that release's ``src`` on the path). Each test works on a copy, so
the fixture stays as that release left it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy

from activeeval.session import Session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stores"
EXPECTED: dict[str, dict] = {}


def _blas() -> str:
    """numpy's BLAS and the kernel it chose for this CPU (OpenBLAS picks one per
    architecture — Haswell, SkylakeX, Zen, … — and each sums a dot product in its own
    order), and the SIMD extensions numpy found: the same string wherever those match,
    whatever other libraries are loaded."""
    from threadpoolctl import threadpool_info

    found = [f"{d.get('internal_api')} {d.get('version')} {d.get('architecture')}"
             for d in threadpool_info()
             if d.get("user_api") == "blas" and "numpy" in str(d.get("filepath", ""))]  # fmt: skip
    simd = np.show_config(mode="dicts")["SIMD Extensions"]["found"]
    return "; ".join(sorted(found)) + f"; SIMD {' '.join(simd)}"


#: Per fixture, whether this run has the numerics that wrote it (the lock's numpy, scipy,
#: pandas, and the same BLAS kernel): bit for bit then; other versions, or the same versions
#: on a CPU whose BLAS kernel differs, may round the last digits differently (numpy 1.26: 1
#: ulp of a stderr; OpenBLAS's Haswell kernel against the one the fixtures were written
#: with: 2e-15 of a difference). The fixtures written before the kernel was recorded are
#: compared to 1e-12 everywhere.
SAME_NUMERICS: dict[str, bool] = {}
for _name in (
    "expected.json",
    "expected_v4.json",
    "expected_v5.json",
    "expected_v6.json",
    "expected_v8.json",
):
    _table = json.loads((FIXTURES / _name).read_text())
    _with = _table.pop("_written_with")
    for _store, _want in _table.items():
        EXPECTED[_store] = _want
        SAME_NUMERICS[_store] = _with == {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "pandas": pd.__version__,
            "blas": _blas(),
        }


def _flat(values: dict | list) -> list[float]:
    items = values.values() if isinstance(values, dict) else values
    return [float(x) for v in items for x in (v if isinstance(v, list) else [v])]


def _same(got: dict | list, want: dict | list, exact: bool) -> bool:
    if exact:
        return got == want
    return _flat(got) == pytest.approx(_flat(want), rel=1e-12, abs=1e-15)


@pytest.fixture(params=sorted(EXPECTED))
def old_store(request, tmp_path: Path) -> tuple[Path, dict]:
    copy = tmp_path / request.param
    shutil.copy(FIXTURES / request.param, copy)
    return copy, EXPECTED[request.param]


def test_an_earlier_release_s_store_reports_the_same_estimates_bit_for_bit(old_store) -> None:
    path, want = old_store
    exact = SAME_NUMERICS[path.name]
    s = Session.open(path)
    p = s.progress()
    assert (p.n_labels, p.n_draws) == (want["n_labels"], want["n_draws"])
    if "difference" in want:
        c = s.compare()
        got = {
            "difference": c.difference,
            "stderr": c.stderr,
            "p_value": c.p_value,
            "ci": list(c.ci),
            "best": int(c.best),
            "estimates": [float(v) for v in c.estimates],
        }
        assert _same(got, {k: want[k] for k in got}, exact)
    else:
        e, snis = s.estimate(), s.estimate(estimator="snis")
        assert _same(
            [e.estimate, e.stderr, *e.ci], [want["estimate"], want["stderr"], *want["ci"]], exact
        )
        snis_want = want["snis"]
        assert _same(
            [snis.estimate, snis.stderr, *snis.ci],
            [snis_want["estimate"], snis_want["stderr"], *snis_want["ci"]],
            exact,
        )
    s.close()


def test_an_earlier_release_s_store_continues_with_the_same_draws(old_store) -> None:
    path, want = old_store
    s = Session.open(path)
    assert s.next_batch(len(want["next"])) == want["next"]
    s.close()
    assert Session.open(path).next_batch(len(want["next"])) == want["next"]  # idempotent
