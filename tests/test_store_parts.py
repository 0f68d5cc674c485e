"""Arrays stored in parts (schema version 6, ``activeeval.session.blobs``).

A store keeps an array above 1 MiB in parts of 4,096 rows. Here parts are made tiny, so that
a small pool's arrays are cut into many parts, and a session stored that way must behave bit
for bit as one stored whole; a store whose parts were altered is refused.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from activeeval.errors import StoreError
from activeeval.session import Session
from activeeval.session import blobs as blobs_mod


def _pool(m: int = 500, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(0.05, 0.95, m)
    p2 = np.clip(p1 + rng.normal(0, 0.2, m), 0.02, 0.98)
    y = (rng.random(m) < p1).astype(int)
    return np.c_[1 - p1, p1], np.c_[1 - p2, p2], y


def _run(path: Path, *, third: bool = True) -> tuple[object, ...]:
    """A comparison session's life: create with a decision, label, add a model, label more;
    what it reports, hands out and stores."""
    a, b, y = _pool()
    decision = (a[:, 1] > 0.3).astype(int)
    s = Session.create(path, [a, b], "f1", 120, seed=4, prediction=[decision, None],
                       ids=np.arange(500) * 3 + 7)  # fmt: skip
    ids = s.next_batch(40)
    s.record({i: int(y[(i - 7) // 3]) for i in ids})
    if third:
        s.add_model(np.c_[1 - a[:, 1] ** 2, a[:, 1] ** 2], name="c")
    ids2 = s.next_batch(30)
    s.record({i: int(y[(i - 7) // 3]) for i in ids2})
    c = s.compare()
    e = s.estimate(model=0)
    out = (ids, ids2, c.difference, c.stderr, c.ci, e.estimate, e.stderr, e.ci,
           s.plan.fingerprint)  # fmt: skip
    s.close()
    return out


@pytest.fixture
def tiny_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blobs_mod, "PART_BYTES", 1000)
    monkeypatch.setattr(blobs_mod, "PART_ROWS", 7)


def test_a_session_in_parts_reports_bit_for_bit_as_one_stored_whole(tmp_path, monkeypatch):
    whole = _run(tmp_path / "whole.db")
    monkeypatch.setattr(blobs_mod, "PART_BYTES", 1000)
    monkeypatch.setattr(blobs_mod, "PART_ROWS", 7)
    parted = _run(tmp_path / "parts.db")
    assert repr(parted) == repr(whole)
    conn = sqlite3.connect(tmp_path / "parts.db")
    # every pool-sized array left its column for the parts: q of both phases, three models'
    # predictions, the one decision, and the row checks of the two models of the pair summary
    assert conn.execute("SELECT length(q) FROM plan").fetchone() == (0,)
    assert conn.execute("SELECT SUM(length(predictions)) FROM models").fetchone() == (0,)
    owners = dict(conn.execute("SELECT owner, COUNT(*) FROM parts GROUP BY owner").fetchall())
    assert set(owners) == {"plan.q:1", "phases.q:1", "models.predictions:0",
                           "models.predictions:1", "models.predictions:2",
                           "models.decision:0", "models.checks:0",
                           "models.checks:1"}  # fmt: skip
    assert owners["plan.q:1"] == owners["models.predictions:0"] == -(-500 // 7)  # of 7 rows
    conn.close()


def test_rows_read_across_parts_are_the_array_s(tmp_path: Path, tiny_parts: None) -> None:
    conn = sqlite3.connect(tmp_path / "a.db")
    conn.execute("CREATE TABLE models (model INTEGER PRIMARY KEY, predictions BLOB)")
    conn.execute("CREATE TABLE parts (owner TEXT, part INTEGER, data BLOB, UNIQUE (owner, part))")
    conn.execute("INSERT INTO models VALUES (3, x'')")
    arr = np.random.default_rng(1).random((1001, 3))
    where = blobs_mod.StoredArray("models.predictions", 3, arr.shape)
    with blobs_mod.ArrayWriter(conn, where) as w:  # in an order of its own
        for start in (500, 0, 333, 900):
            stop = {500: 900, 0: 333, 333: 500, 900: 1001}[start]
            w.write(start, arr[start:stop])
    assert where.read(conn).tobytes() == arr.tobytes()
    assert where.stored_bytes(conn) == arr.nbytes
    with blobs_mod.RowReader(conn, where) as r:
        for start, stop in [(0, 1), (40, 43), (41, 1001), (1000, 1001), (0, 1001)]:
            assert r.rows(start, stop).tobytes() == arr[start:stop].tobytes()
    # written again smaller: the old parts go
    blobs_mod.write_array(conn, blobs_mod.StoredArray("models.predictions", 3, (3, 3)), arr[:3])
    assert conn.execute("SELECT COUNT(*) FROM parts").fetchone() == (0,)
    assert blobs_mod.StoredArray("models.predictions", 3, (3, 3)).read(conn).tobytes() == (
        arr[:3].tobytes()
    )
    conn.close()


def test_a_missing_part_is_refused_as_an_altered_store(tmp_path: Path, tiny_parts) -> None:
    a, _, _ = _pool()
    path = tmp_path / "s.db"
    s = Session.create(path, a, "error_rate", 50)
    s.close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM parts WHERE owner = 'models.predictions:0' AND part = 2")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="altered outside activeeval"):
        Session.open(path)


def _labeled_then_altered(path: Path, alter: str) -> Path:
    """A session with 60 labels, its file then altered by the SQL ``alter``."""
    a, _, y = _pool()
    s = Session.create(path, a, "error_rate", 200, seed=1)
    s.record({i: int(y[i]) for i in s.next_batch(60)})
    s.close()
    conn = sqlite3.connect(path)
    conn.execute(alter)
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    "alter",
    [
        "UPDATE parts SET data = substr(data, 1, 8) WHERE owner = 'plan.q:1' AND part = 3",
        "UPDATE parts SET data = substr(data, 1, 24) WHERE owner = 'plan.q:1' AND part = 0",
        "UPDATE parts SET data = data || data WHERE owner = 'plan.q:1' AND part = 0",
        "DELETE FROM parts WHERE owner = 'plan.q:1' AND part = 5",
    ],
)
def test_altered_parts_of_q_are_refused_where_rows_are_read(alter: str, tmp_path, tiny_parts):
    path = _labeled_then_altered(tmp_path / "s.db", alter)
    with Session.open(path) as s, pytest.raises(StoreError, match="altered outside activeeval"):
        s.progress()  # reads q at the handed-out rows, a few parts of it
        s.next_batch(60)  # new draws read the parts of their chunks
        s.q  # noqa: B018  reads q whole (the default estimate reads its pool summary instead)


def test_an_altered_q_blob_is_refused_where_rows_are_read(tmp_path: Path) -> None:
    path = _labeled_then_altered(tmp_path / "s.db", "UPDATE plan SET q = substr(q, 1, 800)")
    with Session.open(path) as s, pytest.raises(StoreError, match="altered outside activeeval"):
        s.next_batch(60)  # new draws read q (progress reads none where q > 0 everywhere)
