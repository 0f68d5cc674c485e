"""Stores written by an earlier release open, report what that release reported, and continue.

``tests/fixtures/stores/`` holds stores written at commit 44b2496 (schema version 2) and, in
``expected.json``, the estimates that release reported from them and the ids it would hand
out next (``make_stores.py`` there wrote both). Each test works on a copy, so the fixture stays
as that release left it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from activeeval.store import Session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stores"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


@pytest.fixture(params=sorted(EXPECTED))
def old_store(request, tmp_path: Path) -> tuple[Path, dict]:
    copy = tmp_path / request.param
    shutil.copy(FIXTURES / request.param, copy)
    return copy, EXPECTED[request.param]


def test_an_earlier_release_s_store_reports_the_same_estimates_bit_for_bit(old_store) -> None:
    path, want = old_store
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
        assert got == {k: want[k] for k in got}
    else:
        e, snis = s.estimate(), s.estimate(estimator="snis")
        assert (e.estimate, e.stderr, list(e.ci)) == (want["estimate"], want["stderr"], want["ci"])
        assert (snis.estimate, snis.stderr, list(snis.ci)) == (
            want["snis"]["estimate"],
            want["snis"]["stderr"],
            want["snis"]["ci"],
        )
    s.close()


def test_an_earlier_release_s_store_continues_with_the_same_draws(old_store) -> None:
    path, want = old_store
    s = Session.open(path)
    assert s.next_batch(len(want["next"])) == want["next"]
    s.close()
    assert Session.open(path).next_batch(len(want["next"])) == want["next"]  # idempotent
