"""Sessions that cost O(labels): hand-outs, intake and progress read no whole-pool column.

The draw index (``activeeval.session.lookup``) must give exactly the draws of the inverse CDF
over the whole pool, and the commands an annotator's loop runs must never read the pool.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import activeeval as ae
from activeeval import _chunks
from activeeval.session import Session
from activeeval.session import lookup as lookup_mod
from activeeval.session import stored as stored_mod


def _q(m: int, seed: int) -> np.ndarray:
    """A sampling distribution with zeros, tiny and large masses."""
    rng = np.random.default_rng(seed)
    q = rng.gamma(0.3, size=m)
    q[rng.random(m) < 0.2] = 0.0
    q[rng.random(m) < 0.01] *= 1e-12
    return q / q.sum()


@pytest.mark.parametrize("m", [1, 7, 4095, 4096, 4097, 3 * 4096 + 5])
def test_chunk_ends_are_the_cumulative_sums_bit_for_bit(m: int, monkeypatch) -> None:
    q = _q(m, m)
    q[0] = max(q[0], 1e-3)  # some mass even for m = 1
    monkeypatch.setattr(_chunks, "ROWS", 2 * 4096)  # carries across builds
    ends = lookup_mod.chunk_ends(q)
    full = np.cumsum(q)
    last = np.r_[np.arange(4095, m, 4096), m - 1]
    last = np.unique(last)
    assert ends.tobytes() == full[last].tobytes()


def test_draws_from_the_index_are_the_inverse_cdf_draws(tmp_path: Path) -> None:
    m = 3 * 4096 + 17
    q = _q(m, 1)
    conn = sqlite3.connect(tmp_path / "q.db")
    conn.execute("CREATE TABLE plan (singleton INTEGER PRIMARY KEY, q BLOB)")
    conn.execute(
        "CREATE TABLE draw_index (phase INTEGER PRIMARY KEY, chunk INTEGER, n_support INTEGER, "
        "ends BLOB)"
    )
    conn.execute("INSERT INTO plan VALUES (1, ?)", (q.astype("<f8").tobytes(),))
    lookup_mod.write_draw_index(conn, 0, q)
    index = lookup_mod.read_draw_index(conn, 0, m)
    assert index.n_support == int(np.count_nonzero(q > 0))
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    for block in range(3):
        want = stored_mod._draw_block(cdf, 5, block, 2000)
        got, got_q = index.draw(conn, stored_mod._uniforms(5, block, 2000))
        assert np.array_equal(got, want)
        assert got_q.tobytes() == q[want].tobytes()
    # ties: uniforms equal to the CDF itself, at chunk ends and inside chunks
    u = np.r_[0.0, cdf[[4095, 4096, 8191, 100, 5000]], np.nextafter(cdf[4095], 0)]
    u = u[u < 1]
    got, _ = index.draw(conn, u)
    want = np.minimum(np.searchsorted(cdf, u, side="right"), m - 1)
    assert np.array_equal(got, want)
    assert np.all(q[got] > 0)
    pos = np.array([0, m - 1, 4096, 4095, 17, 17])
    assert index.q_at(conn, pos).tobytes() == q[pos].tobytes()
    conn.close()


def _pool(m: int = 500, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(0.02, 0.98, m)
    y = (rng.random(m) < p1).astype(int)
    p2 = np.clip(p1 + rng.normal(0, 0.2, m), 0.01, 0.99)
    return np.c_[1 - p1, p1], np.c_[1 - p2, p2], y


@pytest.mark.parametrize("kind", ["plain", "costs-and-string-ids", "two-phases"])
def test_an_annotators_loop_never_reads_the_pool(tmp_path: Path, monkeypatch, kind: str) -> None:
    pa, pb, y = _pool()
    m = pa.shape[0]
    ids = [f"x{i}" for i in range(m)] if kind == "costs-and-string-ids" else list(range(m))
    costs = 1.0 + np.arange(m) % 3 if kind == "costs-and-string-ids" else None
    truth = dict(zip(ids, y.tolist(), strict=True))
    path = tmp_path / "s.db"
    s = Session.create(path, pa, "f1", 60, seed=2, ids=ids, costs=costs, pos_label=1)
    if kind == "two-phases":
        s.record({i: truth[i] for i in s.next_batch(20)})
        s.add_model(pb, name="b")
        s.extend(90)
    s.close()
    reference = tmp_path / "reference.db"
    reference.write_bytes(path.read_bytes())

    def refuse(*args, **kwargs):
        raise AssertionError("read the whole pool")

    monkeypatch.setattr(stored_mod, "_load_pool", refuse)
    s = Session.open(path)
    got_ids = []
    while batch := s.next_batch(7, annotator="ann"):
        got_ids += batch
        s.record(pd.DataFrame({"id": batch, "label": [truth[i] for i in batch]}))
        s.record({batch[0]: truth[batch[0]]})  # unchanged: no-op
    progress = s.progress()
    frame = s.labels_frame()
    audit = s.audit_frame()
    with pytest.raises(ae.errors.UnknownIdError, match="not in this session's pool"):
        s.record({"nope" if ids[0] == "x0" else 10**9: 1})
    s.close()
    monkeypatch.undo()

    # the same loop with the pool read: the same ids, progress and labels table
    r = Session.open(reference)
    _ = r.ids  # reads the pool
    want_ids = []
    while batch := r.next_batch(7, annotator="ann"):
        want_ids += batch
        r.record(pd.DataFrame({"id": batch, "label": [truth[i] for i in batch]}))
    assert got_ids == want_ids
    assert progress == r.progress()
    # and from the whole pool, as the release before computed it
    price = np.ones(m) if costs is None else costs
    db = sqlite3.connect(reference)
    labeled = np.array([p for (p,) in db.execute("SELECT position FROM labels")])
    draws = [p for (p,) in db.execute("SELECT position FROM draws ORDER BY seq")]
    db.close()
    assert progress.cost_spent == float(price[np.sort(labeled)].sum())
    left = np.ones(m, dtype=bool)
    left[labeled] = False
    left &= r.q > 0
    room = r.plan.budget - progress.committed + 1e-9 * r.plan.budget
    assert progress.finished and progress.stop_reason in ("budget", "pool")
    assert (progress.stop_reason == "pool") == (not left.any())
    assert not left.any() or price[left].min() > room
    want = r.labels_frame()
    pd.testing.assert_frame_equal(frame.drop(columns="timestamp"), want.drop(columns="timestamp"))
    assert audit.empty
    # times drawn, from the whole draw sequence
    cursor = r.progress().n_draws
    counts = np.bincount(np.asarray(draws[:cursor]), minlength=m)
    pos = pd.Index(r.ids).get_indexer(want["id"])
    assert want["times_drawn"].tolist() == counts[pos].tolist()
    assert s.plan.n_models == (2 if kind == "two-phases" else 1)
    r.close()


def test_a_model_added_by_another_process_takes_effect_in_an_open_session(tmp_path) -> None:
    # Session A is open when B adds a model (nothing drawn yet: the plan's q is replaced):
    # A's next hand-out draws from the new q, as a session opened after B's change does.
    import shutil

    pa, pb, _ = _pool(m=10000)
    path, ref = tmp_path / "s.db", tmp_path / "ref.db"
    Session.create(path, pa, "f1", 200, seed=1, pos_label=1).close()
    shutil.copy(path, ref)
    a = Session.open(path)
    with Session.open(path) as b:
        b.add_model(pb, name="b")
    got = a.next_batch(20)
    with pytest.raises(ae.errors.StoreError, match="added by another process"):
        a.estimate()  # its plan is one model's: open the store again
    a.close()
    with Session.open(ref) as r:
        r.add_model(pb, name="b")
        assert got == r.next_batch(20)


def test_the_walk_sums_costs_in_hand_out_order_as_progress_does(tmp_path) -> None:
    # An exact budget tie: the room left is the budget minus the hand-outs' costs summed in
    # hand-out order (numpy's pairwise sum; another order differs in the last bits). The
    # release before the draw index handed out nothing more here.
    rng = np.random.default_rng(11)
    p = rng.uniform(0.05, 0.95, 400)
    costs = rng.uniform(0.1, 10, 400)
    with Session.create(tmp_path / "s.db", np.c_[1 - p, p], "error_rate",
                        budget=122.45405014652628, costs=costs, seed=11,
                        method="passive") as s:  # fmt: skip
        s.record(dict.fromkeys(s.next_batch(25), 0))
        assert s.next_batch(1) == []
        assert s.progress().stop_reason == "budget"


def test_a_draw_index_altered_outside_activeeval_is_refused(tmp_path) -> None:
    pa, _, _ = _pool(m=20000)
    path = tmp_path / "s.db"
    Session.create(path, pa, "error_rate", 300, seed=0).close()
    conn = sqlite3.connect(path)
    ends = np.frombuffer(conn.execute("SELECT ends FROM draw_index").fetchone()[0], "<f8").copy()
    ends[1:4] += 1e-3  # chunks 1-3 look heavier than their q
    conn.execute("UPDATE draw_index SET ends = ?", (ends.astype("<f8").tobytes(),))
    conn.commit()
    conn.close()
    with Session.open(path) as s:
        with pytest.raises(ae.errors.StoreError, match="draw index does not match q"):
            s.next_batch(300)


def test_progress_sees_a_budget_another_process_raised(tmp_path) -> None:
    pa, _, _ = _pool()
    path = tmp_path / "s.db"
    Session.create(path, pa, "error_rate", 20, seed=0).close()
    a = Session.open(path)
    with Session.open(path) as b:
        b.extend(40)
    ids = a.next_batch(100)
    p = a.progress()
    assert len(ids) == 40 and p.budget == 40.0 and p.committed == 40.0
    a.close()
