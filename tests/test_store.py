"""Acceptance tests of activeeval.session: labeling sessions persisted in one SQLite file.

What a user relies on: the ids handed out follow Algorithm 2's stopping rule on an i.i.d.
draw sequence fixed by (q, seed) — whatever the batch sizes, crashes or restarts — and never
exceed the budget; recording is validated up front (bad input leaves the store unchanged),
idempotent, audited on relabels, and crash-safe; the estimate is the thesis's estimator on the
longest fully labeled prefix of the draws and is bit-identical after reopening; stores from a
newer schema or files that are not stores are refused, older schemas are migrated in one
transaction.

Expected values come from independent computations: the draw sequence and the stopping rule
written out as a plain Python loop, :func:`activeeval.estimators.inference.estimate` /
:func:`paired_test` / :func:`multiple_comparison` called on the prefix, and
:func:`activeeval.evaluate` with the same seed (see ``test_session_reproduces_evaluate``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import activeeval as ae
from activeeval import session as session_mod
from activeeval.estimators.assisted import (
    assisted_estimate,
    assisted_multiple_comparison,
    assisted_paired_test,
)
from activeeval.estimators.tempered import score_curve
from activeeval.session import Session
from activeeval.session import handout as handout_mod
from activeeval.session import schema as schema_mod
from activeeval.session import stored as stored_mod

# ----------------------------------------------------------------------------- helpers


def _pool(m: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Binary pool whose labels are drawn from the model's own probabilities: (proba, y)."""
    rng = np.random.default_rng(seed)
    p1 = rng.beta(0.7, 0.7, m)
    y = (rng.random(m) < p1).astype(int)
    return np.c_[1 - p1, p1], y


def _dump(path: Path) -> list[str]:
    """Every table's content as SQL (the store's whole state)."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _label_all(s: Session, y: np.ndarray, k: int, to_label: Any = None) -> list[Any]:
    """Run the campaign to the end with batches of k; returns the ids in hand-out order."""
    order: list[Any] = []
    while ids := s.next_batch(k):
        order.extend(i for i in ids if i not in set(order))
        s.record({i: int(y[i if to_label is None else to_label(i)]) for i in ids})
    return order


def _reference_campaign(
    q: np.ndarray,
    seed: int,
    budget: float,
    costs: np.ndarray | None = None,
    block: int = session_mod.DEFAULT_BLOCK_SIZE,
) -> tuple[list[int], int]:
    """Algorithm 2 without an oracle, one draw at a time: the i.i.d. draws are the
    inverse-CDF images of the stream ``default_rng(seed).random``, taken ``block`` at a time;
    a repeat is free; stop at the first new instance the budget cannot pay. Returns (hand-out
    order, draws walked)."""
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    order: list[int] = []
    seen: set[int] = set()
    spent, n = 0.0, 0
    support = int((q > 0).sum())
    stream = np.random.default_rng(seed)
    while True:
        u = stream.random(block)
        for x in np.minimum(np.searchsorted(cdf, u, side="right"), q.shape[0] - 1).tolist():
            if x in seen:
                n += 1
                continue
            price = 1.0 if costs is None else float(costs[x])
            if spent + price > budget + 1e-9 * max(budget, 1.0):
                return order, n
            order.append(x)
            seen.add(x)
            spent += price
            n += 1
            if len(seen) == support:
                return order, n


def _handouts(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT position FROM handouts ORDER BY seq")]
    finally:
        conn.close()


def _draws(path: Path) -> list[tuple[int, int, float]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT seq, position, q FROM draws ORDER BY seq").fetchall()
    finally:
        conn.close()


# ------------------------------------------------------------------------- the plan


def test_create_stores_the_plan_and_q_bit_exactly(tmp_path: Path) -> None:
    proba, _ = _pool()
    s = Session.create(tmp_path / "s.db", proba, "f1", 50, seed=3, level=0.9)
    q = ae.sampling.optimal_distribution(ae.Categorical(proba), ae.FMeasure(pos_label=1))
    assert s.q.tobytes() == q.tobytes()
    p = s.plan
    assert (p.kind, p.measure, p.pos_label, p.beta, p.method) == (
        "evaluation",
        "f1",
        1,
        1.0,
        "active",
    )
    assert (p.budget, p.seed, p.level, p.pool_size, p.label_space) == (50.0, 3, 0.9, 400, (0, 1))
    assert p.schema_version == session_mod.SCHEMA_VERSION == 8
    assert not p.ranking
    s.close()
    conn = sqlite3.connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "8"
    blob = conn.execute("SELECT q FROM plan").fetchone()[0]
    assert np.frombuffer(blob, "<f8").tobytes() == q.tobytes()
    conn.close()
    assert sorted(os.listdir(tmp_path)) == ["s.db"]  # one file once closed


def test_create_refuses_an_existing_path_and_leaves_it_alone(tmp_path: Path) -> None:
    proba, _ = _pool()
    target = tmp_path / "s.db"
    target.write_bytes(b"precious")
    with pytest.raises(ae.errors.StoreError, match="already exists"):
        Session.create(target, proba, "error_rate", 10)
    assert target.read_bytes() == b"precious"


def test_altered_pool_is_detected_by_the_fingerprint(tmp_path: Path) -> None:
    proba, _ = _pool()
    Session.create(tmp_path / "s.db", proba, "error_rate", 10).close()
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("UPDATE pool SET id = 9999 WHERE position = 0")
    conn.commit()
    conn.close()
    # Opening reads no whole-pool column; the first command that reads the pool checks it
    # (the default estimate reads the pool summary and the labeled rows instead: not this).
    features = np.random.default_rng(0).random((len(proba), 2))
    for read in (
        lambda s: s.estimate(features=features),
        lambda s: s.ids,
        lambda s: s.predictives,
        lambda s: s.q,
    ):
        s = Session.open(tmp_path / "s.db")
        with pytest.raises(ae.errors.StoreError, match="fingerprint"):
            read(s)
        s.close()


# ---------------------------------------------------------------------- hand-outs


def test_draw_sequence_is_inverse_cdf_of_the_default_rng_seed_stream(tmp_path: Path) -> None:
    proba, _ = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 300, seed=11, block_size=64)
    s.next_batch(300)
    draws = _draws(tmp_path / "s.db")
    n_blocks = len(draws) // 64
    assert len(draws) == 64 * n_blocks and n_blocks > 2
    cdf = np.cumsum(s.q) / s.q.sum()
    u = np.random.default_rng(11).random(64 * n_blocks)  # one stream, as evaluate draws
    expect = np.searchsorted(cdf, u, side="right")
    assert [d[1] for d in draws] == expect.tolist()
    assert [d[2] for d in draws] == s.q[expect].tolist()  # each draw's q, stored exactly


@pytest.mark.parametrize("with_costs", [False, True])
def test_handouts_follow_the_stopping_rule_of_algorithm_2(tmp_path: Path, with_costs: bool) -> None:
    proba, y = _pool(300, seed=1)
    costs = np.random.default_rng(2).uniform(0.2, 3.0, 300) if with_costs else None
    budget = 80.0 if with_costs else 60
    s = Session.create(tmp_path / "s.db", proba, "error_rate", budget, costs=costs, seed=4)
    order = _label_all(s, y, 7)
    expect, n_draws = _reference_campaign(s.q, 4, budget, costs)
    assert order == expect
    prog = s.progress()
    assert prog.n_draws == n_draws
    assert prog.cost_spent == pytest.approx(sum(1.0 if costs is None else costs[i] for i in expect))
    assert prog.cost_spent <= budget
    assert prog.complete and prog.stop_reason == "budget"


def test_campaign_ends_when_every_instance_q_can_draw_is_handed_out(tmp_path: Path) -> None:
    proba, y = _pool(12, seed=3)
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 50, seed=0)
    order = _label_all(s, y, 5)
    expect, n_draws = _reference_campaign(s.q, 0, 50)
    assert order == expect and sorted(order) == list(range(12))
    prog = s.progress()
    assert prog.stop_reason == "pool" and prog.n_draws == n_draws
    assert s.next_batch(5) == []


@settings(max_examples=20)
@given(ks=st.lists(st.integers(1, 15), min_size=1, max_size=6))
def test_handout_order_does_not_depend_on_batch_sizes(tmp_path_factory, ks: list[int]) -> None:
    proba, y = _pool(80, seed=5)
    path = tmp_path_factory.mktemp("h") / "s.db"
    s = Session.create(path, proba, "f1", 40, seed=9, block_size=16)
    order: list[int] = []
    i = 0
    while ids := s.next_batch(ks[i % len(ks)]):
        order.extend(ids)
        s.record({j: int(y[j]) for j in ids})
        i += 1
    s.close()
    assert order == _reference_campaign(Session.open(path).q, 9, 40, block=16)[0]


def test_next_batch_is_idempotent_until_labels_are_recorded(tmp_path: Path) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 100, seed=2)
    first = s.next_batch(10)
    assert s.next_batch(10) == first
    assert s.next_batch(4) == first[:4]
    more = s.next_batch(25)
    assert more[:10] == first and len(set(more)) == 25
    s.record({i: int(y[i]) for i in more[:15]})
    after = s.next_batch(10)
    assert after == more[15:25]  # the pending ones, in draw order
    assert not set(after) & set(more[:15])  # never an id already labeled


def test_pending_ids_count_against_the_budget(tmp_path: Path) -> None:
    proba, _ = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 30)
    assert len(s.next_batch(50)) == 30
    prog = s.progress()
    assert (prog.n_pending, prog.committed, prog.cost_spent) == (30, 30.0, 0.0)
    assert prog.finished and not prog.complete
    assert len(s.next_batch(100)) == 30  # still only the pending ones


def test_session_reproduces_evaluate_with_the_same_seed(tmp_path: Path) -> None:
    """The session's draws are the stream of ``default_rng(seed)`` in every block, which
    ``evaluate`` draws from; over blocks of 16 draws (the campaign spans many) the session must
    buy the same labels and give the same estimate, interval included, with either estimator
    (the session's own, or overridden per call)."""
    proba, y = _pool(500, seed=7)
    costs = np.random.default_rng(8).uniform(0.5, 2.0, 500)

    def oracle(idx: np.ndarray) -> np.ndarray:
        return y[idx]

    for c, budget, how in ((None, 80, "assisted"), (costs, 90.0, "assisted"), (None, 80, "snis")):
        path = tmp_path / f"s{c is None}{how}.db"
        s = Session.create(path, proba, "f1", budget, costs=c, seed=5, block_size=16, estimator=how)
        assert s.plan.estimator == how
        _label_all(s, y, 13)
        ref = ae.evaluate(proba, oracle, "f1", budget, costs=c, random_state=5, estimator=how)
        got = s.estimate()
        draws = [r[1] for r in _draws(path)][: got.n_draws]
        assert draws == ref.indices.tolist() and got.n_draws > 4 * 16
        np.testing.assert_array_equal(s.q[draws], ref.q)
        assert (got.estimate, got.stderr, got.ci) == (ref.estimate, ref.stderr, ref.ci)
        assert got.interval == ref.interval == ("tempered" if how == "assisted" else "wald")
        assert (got.n_labels, got.n_draws) == (ref.n_labels, ref.n_draws)
        assert s.progress().cost_spent == pytest.approx(ref.cost)
        # The shared result type, every field as evaluate's: the draws, their q, their labels.
        assert isinstance(got, ae.EvaluationResult)
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_array_equal(got.q, ref.q)
        np.testing.assert_array_equal(got.labels, ref.labels)
        assert got.label_offsets is None and ref.label_offsets is None
        assert (got.budget, got.method, got.measure) == (ref.budget, ref.method, ref.measure)
        assert got.cost == ref.cost if c is None else got.cost == pytest.approx(ref.cost)
        assert got.value_range == ref.value_range
        assert got.inference is not None and ref.inference is not None
        assert got.inference.estimate == ref.inference.estimate
        other = "snis" if how == "assisted" else "assisted"
        alt = ae.evaluate(proba, oracle, "f1", budget, costs=c, random_state=5, estimator=other)
        assert s.estimate(estimator=other).ci == alt.ci and alt.estimate != ref.estimate
        s.close()
        with Session.open(path) as again:  # the plan keeps the estimator
            assert again.plan.estimator == how and again.estimate().ci == ref.ci


def test_integer_ids_beyond_int64_are_refused_not_wrapped(tmp_path: Path) -> None:
    """uint64 ids past 2**63 − 1 were cast to int64, wrapping to negative ids; Python ints
    beyond int64 raised an OverflowError. Both are refused naming the id and the fix; ids
    int64 holds (uint32, Python ints, negatives) are kept as they are."""
    proba, _ = _pool(30)
    big = np.arange(30, dtype=np.uint64) + np.uint64(2**63)
    with pytest.raises(ae.errors.ShapeError, match=r"^ids: id 9223372036854775808 is beyond"):
        Session.create(tmp_path / "u.db", proba, "error_rate", 5, ids=big)
    huge = np.array([2**64 + i for i in range(30)], dtype=object)
    with pytest.raises(ae.errors.ShapeError, match="pass the ids as strings"):
        Session.create(tmp_path / "o.db", proba, "error_rate", 5, ids=huge)
    assert not (tmp_path / "u.db").exists() and not (tmp_path / "o.db").exists()
    for ok in (np.arange(30, dtype=np.uint32) + 7, list(range(-15, 15))):
        path = tmp_path / f"ok{len(list(tmp_path.iterdir()))}.db"
        with Session.create(path, proba, "error_rate", 5, ids=ok) as s:
            assert set(s.next_batch(3)) <= {int(i) for i in ok}


def test_a_store_keeps_its_draw_rule_and_refuses_one_it_cannot_continue(tmp_path: Path) -> None:
    """New stores name the stream rule; a rule this release does not know (an altered file)
    is refused on open, naming it, before any draw."""
    proba, _ = _pool()
    path = tmp_path / "s.db"
    Session.create(path, proba, "error_rate", 30, seed=1).close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT draw_rule FROM plan").fetchone()[0] == stored_mod.DRAW_RULE
    conn.execute("UPDATE plan SET draw_rule = 'inverse-cdf(something else)'")
    conn.commit()
    conn.close()
    with pytest.raises(ae.errors.StoreError, match=r"draw rule 'inverse-cdf\(something else\)'"):
        Session.open(path)


def test_a_comparison_and_a_ranked_session_reproduce_compare_and_evaluate_past_block_0(
    tmp_path: Path,
) -> None:
    """A pair (and a ranked pool) draws as ``compare`` (``evaluate``) does, past the first
    block of the default 1,024 draws: the same draws, the same report."""
    proba, y = _pool(3000, seed=3)
    noisy = np.clip(proba[:, 1] + np.random.default_rng(4).normal(0, 0.2, 3000), 0.01, 0.99)
    models = [proba, np.c_[1 - noisy, noisy]]
    s = Session.create(tmp_path / "c.db", models, "error_rate", 1500, seed=6)
    _label_all(s, y, 250)
    got = s.compare()
    ref = ae.compare(models, lambda i: y[i], "error_rate", budget=1500, random_state=6)
    assert got.n_draws == ref.n_draws > 1024
    np.testing.assert_array_equal(got.indices, ref.indices)
    assert (got.difference, got.stderr, got.ci, got.p_value) == (
        ref.difference, ref.stderr, ref.ci, ref.p_value,
    )  # fmt: skip
    rng = np.random.default_rng(5)
    lens = rng.integers(2, 5, 600)
    offsets = np.r_[0, np.cumsum(lens)]
    grades = rng.dirichlet(np.ones(3), offsets[-1])
    rel = ae.GradedRelevance(grades, offsets)
    truth = [rng.integers(0, 3, n) for n in lens]
    r = Session.create(tmp_path / "r.db", rel, "dcg", 590, seed=2, block_size=64)
    while ids := r.next_batch(100):
        rows = [(i, k, int(truth[i][k])) for i in ids for k in range(lens[i])]
        r.record(pd.DataFrame(rows, columns=["id", "item", "grade"]))
    got_r = r.estimate()
    ref_r = ae.evaluate(rel, lambda i: [truth[j] for j in i], "dcg", budget=590, random_state=2)
    assert got_r.n_draws == ref_r.n_draws > 4 * 64
    np.testing.assert_array_equal(got_r.indices, ref_r.indices)
    assert (got_r.estimate, got_r.stderr, got_r.ci) == (ref_r.estimate, ref_r.stderr, ref_r.ci)


# --------------------------------------------------------------------------- labels


def test_identical_relabel_is_a_no_op(tmp_path: Path) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 20)
    ids = s.next_batch(20)
    labels = {i: int(y[i]) for i in ids}
    assert s.record(labels, annotator="ann") == session_mod.RecordSummary(20, 0, 0)
    before = _dump(tmp_path / "s.db")
    assert s.record(labels, annotator="someone else") == session_mod.RecordSummary(0, 20, 0)
    assert _dump(tmp_path / "s.db") == before


def test_conflicting_relabel_is_refused_naming_the_id_and_audited(tmp_path: Path) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 20)
    ids = s.next_batch(20)
    s.record({i: int(y[i]) for i in ids}, annotator="ann")
    flipped = {ids[3]: 1 - int(y[ids[3]]), ids[4]: int(y[ids[4]])}
    with pytest.raises(ae.errors.LabelConflictError, match=rf"id {ids[3]} is already labeled"):
        s.record(flipped, annotator="bob")
    frame = s.labels_frame().set_index("id")
    assert frame.loc[ids[3], "label"] == y[ids[3]] and frame.loc[ids[3], "annotator"] == "ann"
    audit = s.audit_frame()
    assert audit[["action", "id", "old_label", "new_label", "annotator"]].values.tolist() == [
        ["refused", ids[3], int(y[ids[3]]), 1 - int(y[ids[3]]), "bob"]
    ]
    assert s.record(flipped, annotator="bob", overwrite=True) == session_mod.RecordSummary(0, 1, 1)
    frame = s.labels_frame().set_index("id")
    assert frame.loc[ids[3], "label"] == 1 - y[ids[3]] and frame.loc[ids[3], "annotator"] == "bob"
    assert s.audit_frame()["action"].tolist() == ["refused", "overwrite"]


BAD_RECORDS = [
    # (name, labels builder from (handed-out ids, y), error type, message fragment)
    (
        "id-not-in-pool",
        lambda ids, y: {ids[0]: 0, 10_000: 1},
        ae.errors.UnknownIdError,
        r"row 1, column 'id': id 10000 is not in this session's pool",
    ),
    (
        "label-outside-space",
        lambda ids, y: {ids[0]: 0, ids[1]: 2},
        ae.errors.LabelSpaceError,
        r"row 1, column 'label': 2 is not in the label space \[0, 1\]",
    ),
    (
        "label-not-integer",
        lambda ids, y: {ids[0]: 0.5},
        ae.errors.LabelSpaceError,
        r"row 0, column 'label': 0.5 is not in the label space",
    ),
    (
        "label-empty",
        lambda ids, y: {ids[0]: ""},
        ae.errors.LabelSpaceError,
        r"row 0, column 'label': the label is empty",
    ),
    (
        "not-handed-out",
        lambda ids, y: {ids[0]: 0, 399 if 399 not in ids else 398: 1},
        ae.errors.UnknownIdError,
        "never handed out",
    ),
    (
        "same-id-two-labels",
        lambda ids, y: pd.DataFrame({"id": [ids[0], ids[1], ids[0]], "label": [0, 1, 1]}),
        ae.errors.DuplicateIdError,
        "rows 0 and 2",
    ),
    (
        "other-session",
        lambda ids, y: pd.DataFrame({"id": [ids[0]], "label": [0], "session_id": ["f" * 32]}),
        ae.errors.SessionMismatchError,
        "another session",
    ),
    (
        "no-label-column",
        lambda ids, y: pd.DataFrame({"id": [ids[0]], "y": [0]}),
        ae.errors.ShapeError,
        "no column 'label'",
    ),
]


@pytest.mark.parametrize(
    ("make", "exc", "fragment"), [c[1:] for c in BAD_RECORDS], ids=[c[0] for c in BAD_RECORDS]
)
def test_bad_labels_are_refused_and_leave_the_store_unchanged(
    tmp_path: Path, make: Any, exc: type[Exception], fragment: str
) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 20)
    ids = s.next_batch(10)
    s.record({i: int(y[i]) for i in ids[5:]})
    before = _dump(tmp_path / "s.db")
    with pytest.raises(exc, match=fragment):
        s.record(make(ids, y))
    assert _dump(tmp_path / "s.db") == before


def test_labels_of_the_own_session_id_are_accepted(tmp_path: Path) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 5)
    ids = s.next_batch(5)
    frame = pd.DataFrame({"id": ids, "label": y[ids], "session_id": s.session_id})
    assert s.record(frame).n_new == 5


def test_string_ids_and_string_labels(tmp_path: Path) -> None:
    proba, y = _pool(60)
    names = np.array(["ham", "spam"])
    ids = [f"mail-{i:03d}" for i in range(60)]
    s = Session.create(
        tmp_path / "s.db",
        ae.Categorical(proba, labels=names),
        "recall",
        25,
        ids=ids,
        pos_label="spam",
    )
    assert s.plan.pos_label == "spam" and s.plan.label_space == ("ham", "spam")
    while batch := s.next_batch(10):
        s.record({i: names[y[int(i[5:])]] for i in batch})
    got = s.estimate()
    draws = np.array([r[1] for r in _draws(tmp_path / "s.db")][: got.n_draws])
    _check_both(s, ae.Recall(pos_label="spam"), ae.Categorical(proba, labels=names), draws,
                names[y[draws]])  # fmt: skip


def test_regression_session_with_gaussian_predictions(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    mean, var = rng.normal(size=200), rng.uniform(0.1, 2.0, 200)
    y = mean + rng.normal(size=200) * np.sqrt(var)
    s = Session.create(tmp_path / "s.db", ae.Gaussian(mean, var), "mse", 40, seed=1)
    assert s.plan.label_space is None
    while batch := s.next_batch(15):
        s.record({i: float(y[i]) for i in batch})
    got = s.estimate()
    draws = np.array([r[1] for r in _draws(tmp_path / "s.db")][: got.n_draws])
    _check_both(s, "mse", ae.Gaussian(mean, var), draws, y[draws])
    assert got.n_labels == 40
    with pytest.raises(ae.errors.LabelSpaceError, match="finite"):
        s.record({s.labels_frame()["id"].iloc[0]: math.inf})


# ----------------------------------------------------------------------- estimation


def test_estimate_uses_the_longest_fully_labeled_prefix_of_the_draws(tmp_path: Path) -> None:
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 40, seed=6)
    ids = s.next_batch(40)
    hole = ids[17]
    s.record({i: int(y[i]) for i in ids if i != hole})
    draws = np.array([r[1] for r in _draws(tmp_path / "s.db")][: s.progress().n_draws])
    n = int(np.flatnonzero(draws == hole)[0])  # the prefix ends before the hole's first draw
    idx = draws[:n]
    got = s.estimate()
    assert (got.n_draws, got.n_labels) == (n, 17)
    _check_both(s, "error_rate", ae.Categorical(proba), idx, y[idx])
    assert s.progress().n_estimation_draws == n


def _check_both(s: Session, measure: Any, pred: Any, draws: Any, labels: Any) -> None:
    """The session's estimate and interval with either estimator equal the library's on its
    labeled prefix ``draws``: the model-assisted estimator's finite-population form with the
    session's q (the tempered interval: logit for [0, 1] measures or Wald, joined with the
    score interval of the tempered model on the same labeled units), and eq. 3.31 (Wald). Up
    to rounding: the session normalizes p = 1/m as evaluate does (tested bit-identical to
    evaluate above)."""
    ref = assisted_estimate(measure, pred, draws, labels, pool_q=s.q)
    meas = ae.get_measure(measure).bind(pred)
    units, first = np.unique(draws, return_index=True)
    curve = score_curve(pred, meas, pred.point_prediction(), s.q, np.full(pred.n, 1 / pred.n),
                        units, np.asarray(labels)[first])  # fmt: skip
    assert curve is not None
    ref = dataclasses.replace(ref, score=curve)
    got = s.estimate(estimator="assisted")
    want = (ref.estimate, ref.stderr, *ref.confidence_interval(0.95, "tempered"))
    assert (got.estimate, got.stderr, *got.ci) == pytest.approx(want, rel=1e-12)
    assert got.interval == "tempered"
    ref = ae.estimators.inference.estimate(
        measure, pred.take(draws), labels, s.q[draws], indices=draws
    )
    got = s.estimate(estimator="snis")
    want = (ref.estimate, ref.stderr, *ref.confidence_interval(0.95))
    assert (got.estimate, got.stderr, *got.ci) == pytest.approx(want, rel=1e-12)
    assert got.interval == "wald"


def test_estimate_before_any_label_is_nan(tmp_path: Path) -> None:
    proba, _ = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 10)
    s.next_batch(3)
    e = s.estimate()
    assert math.isnan(e.estimate) and e.n_labels == 0 and e.inference is None
    assert isinstance(e, ae.EvaluationResult) and math.isnan(e.stderr)
    assert all(math.isnan(v) for v in (*e.ci, *e.confidence_interval()))
    assert (e.n_draws, e.cost, e.budget, e.method) == (0, 0.0, 10.0, "active")
    assert e.indices.size == e.q.size == e.labels.size == 0 and e.label_offsets is None


def test_reopened_session_continues_and_estimates_bit_identically(tmp_path: Path) -> None:
    proba, y = _pool()
    path = tmp_path / "s.db"
    s = Session.create(path, proba, "f1", 60, seed=8)
    first = s.next_batch(25)
    s.record({i: int(y[i]) for i in first[:20]})
    e1 = s.estimate()
    s.close()
    s = Session.open(path)
    e2 = s.estimate()
    assert (e1.estimate, e1.stderr, e1.ci) == (e2.estimate, e2.stderr, e2.ci)
    assert s.next_batch(5) == first[20:25]


def test_compare_two_models_is_the_paired_test_on_the_prefix(tmp_path: Path) -> None:
    proba, y = _pool(500, seed=2)
    other = np.clip(proba[:, 1] + np.random.default_rng(3).normal(0, 0.25, 500), 0, 1)
    models = [proba, np.c_[1 - other, other]]
    s = Session.create(tmp_path / "s.db", models, "error_rate", 120, seed=1)
    q = ae.sampling.comparison_distribution([ae.Categorical(p) for p in models], "error_rate")
    assert s.q.tobytes() == q.tobytes()
    _label_all(s, y, 30)
    got = s.compare(estimator="snis")
    idx = np.array([r[1] for r in _draws(tmp_path / "s.db")][: got.n_draws])
    ref = ae.estimators.inference.paired_test(
        "error_rate", [models[0][idx], models[1][idx]], y[idx], q[idx], indices=idx
    )
    want = (ref.difference, ref.stderr, ref.p_value, *ref.ci, *ref.estimates)
    assert (got.difference, got.stderr, got.p_value, *got.ci, *got.estimates) == pytest.approx(
        want, rel=1e-12
    )
    assert got.best == ref.best and got.n_labels == 120
    for j in (0, 1):
        assert s.estimate(model=j, estimator="snis").estimate == pytest.approx(
            ref.estimates[j], rel=1e-12
        )
    # The session's own estimator, the default: the model-assisted paired test.
    got = s.compare()
    preds = [ae.Categorical(p) for p in models]
    ref = assisted_paired_test("error_rate", preds, idx, y[idx], pool_q=q)
    want = (ref.difference, ref.stderr, ref.p_value, *ref.ci, *ref.estimates)
    assert (got.difference, got.stderr, got.p_value, *got.ci, *got.estimates) == pytest.approx(
        want, rel=1e-12
    )
    assert got.best == ref.best


def test_compare_k_models_reports_best_against_runner_up_holm(tmp_path: Path) -> None:
    proba, y = _pool(500, seed=2)
    rng = np.random.default_rng(4)
    models = [proba] + [
        np.c_[1 - (p := np.clip(proba[:, 1] + rng.normal(0, sd, 500), 0, 1)), p]
        for sd in (0.2, 0.4)
    ]
    s = Session.create(tmp_path / "s.db", models, "accuracy", 150, seed=2)
    _label_all(s, y, 50)
    got = s.compare(estimator="snis")
    idx = np.array([r[1] for r in _draws(tmp_path / "s.db")][: got.n_draws])
    mc = ae.estimators.inference.multiple_comparison(
        "accuracy", [m[idx] for m in models], y[idx], s.q[idx], indices=idx
    )
    best, runner = mc.ranking[0], mc.ranking[1]
    assert got.best == best
    np.testing.assert_allclose(got.estimates, mc.estimates, rtol=1e-12)
    assert got.difference == pytest.approx(mc.estimates[best] - mc.estimates[runner], abs=1e-15)
    assert got.p_value == pytest.approx(mc.adjusted_p_value(best, runner, "holm"), rel=1e-12)
    got = s.compare()  # the default: the model-assisted multiple comparison
    preds = [ae.Categorical(m) for m in models]
    mc = assisted_multiple_comparison("accuracy", preds, idx, y[idx], pool_q=s.q)
    best, runner = mc.ranking[0], mc.ranking[1]
    assert got.best == best
    np.testing.assert_allclose(got.estimates, mc.estimates, rtol=1e-12)
    assert got.difference == pytest.approx(mc.estimates[best] - mc.estimates[runner], abs=1e-15)
    assert got.p_value == pytest.approx(mc.adjusted_p_value(best, runner, "holm"), rel=1e-12)


# ---------------------------------------------------------------------- bad creation

BAD_CREATES = [
    (
        "proba-nan",
        lambda p: {"pools": np.where(np.arange(2) == 1, np.nan, p)},
        ae.errors.NonFiniteError,
        "finite",
    ),
    (
        "proba-not-summing",
        lambda p: {"pools": p * 0.9},
        ae.errors.ProbabilityRowsError,
        "sums to 0.9",
    ),
    (
        "cost-negative",
        lambda p: {"costs": np.r_[-1.0, np.ones(len(p) - 1)]},
        ae.errors.InvalidCostsError,
        "entry 0 is -1",
    ),
    (
        "cost-zero",
        lambda p: {"costs": np.r_[np.ones(len(p) - 1), 0.0]},
        ae.errors.InvalidCostsError,
        "strictly positive",
    ),
    (
        "cost-inf",
        lambda p: {"costs": np.r_[np.inf, np.ones(len(p) - 1)]},
        ae.errors.NonFiniteError,
        "costs",
    ),
    ("empty-pool", lambda p: {"pools": p[:0]}, ae.errors.EmptyPoolError, "empty"),
    ("budget-below-one-label", lambda p: {"budget": 0.5}, ae.errors.BudgetError, "buys no label"),
    (
        "budget-below-cheapest-cost",
        lambda p: {"budget": 0.1, "costs": np.full(len(p), 0.5)},
        ae.errors.BudgetError,
        "cheapest instance costs 0.5",
    ),
    (
        "duplicate-ids",
        lambda p: {"ids": [7, *range(1, len(p) - 1), 7]},
        ae.errors.DuplicateIdError,
        "id 7 appears at positions 0 and",
    ),
    (
        "different-pool-sizes",
        lambda p: {"pools": [p, p[:-1]]},
        ae.errors.ShapeError,
        "pools\\[1\\]",
    ),
    ("one-element-list", lambda p: {"pools": [p]}, ae.errors.ShapeError, "at least two"),
    ("unknown-method", lambda p: {"method": "stratified"}, ae.errors.UnknownOptionError, "method"),
    ("unknown-measure", lambda p: {"measure": "auc"}, ae.errors.UnknownOptionError, "measure"),
    ("pos-label-outside", lambda p: {"pos_label": 3}, ae.errors.LabelSpaceError, "pos_label"),
    (
        "pos-label-error-rate",
        lambda p: {"measure": "error_rate", "pos_label": 1},
        ae.errors.UnknownOptionError,
        "pos_label",
    ),
    ("negative-seed", lambda p: {"seed": -1}, ae.errors.ShapeError, "seed"),
    (
        "regressor-measure-on-classifier",
        lambda p: {"measure": "mse"},
        ae.errors.UnknownOptionError,
        "mse scores numeric predictions",
    ),
]


@pytest.mark.parametrize(
    ("change", "exc", "fragment"), [c[1:] for c in BAD_CREATES], ids=[c[0] for c in BAD_CREATES]
)
def test_bad_plans_are_refused_and_create_no_file(
    tmp_path: Path, change: Any, exc: type[Exception], fragment: str
) -> None:
    proba, _ = _pool(20)
    kwargs: dict[str, Any] = {"pools": proba, "measure": "f1", "budget": 5}
    kwargs.update(change(proba))
    with pytest.raises(exc, match=fragment):
        Session.create(tmp_path / "s.db", **kwargs)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- schema and files


def test_store_from_a_newer_schema_is_refused_unchanged(tmp_path: Path) -> None:
    proba, _ = _pool()
    path = tmp_path / "s.db"
    Session.create(path, proba, "error_rate", 10).close()
    conn = sqlite3.connect(path)
    newer = schema_mod.SCHEMA_VERSION + 1
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(newer),))
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(
        ae.errors.SchemaVersionError,
        match=rf"schema version {newer}, newer than the version {newer - 1}",
    ):
        Session.open(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [b"id,label\n1,0\n", b"", b"\x00" * 4096],
    ids=["csv-text", "empty-file", "zeros"],
)
def test_a_file_that_is_not_a_store_is_refused_unchanged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(content)
    with pytest.raises(ae.errors.NotAStoreError, match="not an activeeval session store"):
        Session.open(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.csv"]


def test_another_sqlite_database_is_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ae.errors.NotAStoreError):
        Session.open(path)
    with pytest.raises(ae.errors.NotAStoreError, match="no such session store"):
        Session.open(tmp_path / "missing.db")


def test_migrations_run_in_one_transaction_on_open(tmp_path: Path, monkeypatch) -> None:
    proba, y = _pool()
    path = tmp_path / "s.db"
    s = Session.create(path, proba, "error_rate", 10)
    s.record({i: int(y[i]) for i in s.next_batch(10)})
    s.close()

    def add_notes(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE labels ADD COLUMN note TEXT")

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE labels ADD COLUMN half_done TEXT")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(schema_mod, "SCHEMA_VERSION", 10)
    migrations = {**schema_mod.MIGRATIONS, 8: add_notes, 9: broken}
    monkeypatch.setattr(schema_mod, "MIGRATIONS", migrations)
    before = _dump(path)
    with pytest.raises(RuntimeError, match="migration bug"):
        Session.open(path)
    assert _dump(path) == before  # neither step kept

    monkeypatch.setattr(schema_mod, "SCHEMA_VERSION", 9)
    s = Session.open(path)
    assert s.plan.schema_version == 9
    assert s.estimate().n_labels == 10
    s.close()
    conn = sqlite3.connect(path)
    assert "note" in [r[1] for r in conn.execute("PRAGMA table_info(labels)")]
    conn.close()


# ------------------------------------------------------------------ crash safety


def test_a_failed_next_batch_rolls_back_completely(tmp_path: Path, monkeypatch) -> None:
    proba, _ = _pool()
    a = Session.create(tmp_path / "a.db", proba, "error_rate", 50, seed=3)
    b = Session.create(tmp_path / "b.db", proba, "error_rate", 50, seed=3)
    a.next_batch(5)
    b.next_batch(5)
    before = _dump(tmp_path / "a.db")

    def crash() -> str:
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:
        mp.setattr(handout_mod, "_now", crash)  # after the new draws are inserted
        with pytest.raises(KeyboardInterrupt):
            a.next_batch(40)
    assert _dump(tmp_path / "a.db") == before
    assert a.next_batch(40) == b.next_batch(40)


def test_locked_store_is_retried_with_backoff(tmp_path: Path, monkeypatch) -> None:
    proba, y = _pool()
    path = tmp_path / "s.db"
    s = Session.create(path, proba, "error_rate", 10)
    ids = s.next_batch(10)
    s.close()
    monkeypatch.setattr(schema_mod, "BUSY_TIMEOUT", 0.01)  # SQLite gives up at once
    monkeypatch.setattr(schema_mod, "RETRY_DEADLINE", 10.0)
    s = Session.open(path)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock for 0.5 s
    release = threading.Timer(0.5, lambda: holder.execute("ROLLBACK"))
    release.start()
    t0 = time.monotonic()
    s.record({i: int(y[i]) for i in ids})
    assert time.monotonic() - t0 >= 0.4
    release.join()
    holder.close()
    assert s.progress().n_labels == 10


_CAMPAIGN = textwrap.dedent(
    """
    import sys
    import numpy as np
    from activeeval.session import Session

    s = Session.open(sys.argv[1])
    y = np.load(sys.argv[2])
    k = int(sys.argv[3])
    while ids := s.next_batch(k):
        s.record({i: int(y[i]) for i in ids})
    """
)


def test_session_resumed_after_a_kill_hands_out_what_an_uninterrupted_one_does(
    tmp_path: Path,
) -> None:
    proba, y = _pool(20_000, seed=9)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "campaign.py").write_text(_CAMPAIGN)
    crashed, clean = tmp_path / "crashed.db", tmp_path / "clean.db"
    for path in (crashed, clean):
        Session.create(path, proba, "error_rate", 3000, seed=5).close()
    child = subprocess.Popen(
        [sys.executable, str(tmp_path / "campaign.py"), str(crashed), str(tmp_path / "y.npy"), "37"]
    )
    try:
        watch = sqlite3.connect(crashed)
        deadline = time.monotonic() + 30
        while watch.execute("SELECT COUNT(*) FROM labels").fetchone()[0] < 400:
            assert child.poll() is None, "the campaign ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        watch.close()
        assert child.poll() is None
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL

    s = Session.open(crashed)
    n_labeled = s.progress().n_labels
    assert 400 <= n_labeled < 3000
    resumed_first = s.next_batch(37)
    reference = Session.open(clean)
    order = _label_all(reference, y, 50)
    assert resumed_first == order[n_labeled : n_labeled + 37]
    s.record({i: int(y[i]) for i in resumed_first})
    _label_all(s, y, 37)
    assert _handouts(crashed) == order
    assert _draws(crashed) == _draws(clean)
    a, b = s.estimate(), reference.estimate()
    assert (a.estimate, a.stderr, a.n_draws) == (b.estimate, b.stderr, b.n_draws)


def test_demo_session_campaign_matches_evaluate() -> None:
    from activeeval.demo import session_campaign

    proba, y = _pool(300, seed=1)
    lines: list[str] = []
    out = session_campaign(ae.Categorical(proba), lambda idx: y[idx], budget=40, echo=lines.append)
    ref = ae.evaluate(proba, lambda idx: y[idx], "error_rate", 40, random_state=0)
    assert out["session_error_rate"] == ref.estimate
    assert any(line.strip().startswith("session") for line in lines)


def test_create_refuses_a_ranked_pool_with_an_empty_query(tmp_path) -> None:
    rel = ae.GradedRelevance(np.full((4, 3), 1 / 3), [0, 2, 2, 4])
    with pytest.raises(ae.errors.ShapeError, match="query 1 lists no item"):
        Session.create(tmp_path / "s.db", rel, "dcg", 2)
    assert not (tmp_path / "s.db").exists()


def test_a_store_written_before_the_estimator_choice_keeps_reporting_the_thesis_estimator(
    tmp_path: Path,
) -> None:
    # Stores created before sessions had an estimator hold no 'estimator' key: they reported
    # eq. 3.31, and go on doing so (an estimate does not change under the user's feet).
    proba, y = _pool()
    path = tmp_path / "s.db"
    with Session.create(path, proba, "error_rate", 20, seed=2) as s:
        s.record({i: int(y[i]) for i in s.next_batch(20)})
        snis = s.estimate(estimator="snis")
        assert s.estimate().estimate != snis.estimate
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'estimator'")
    conn.close()
    with Session.open(path) as s:
        assert s.plan.estimator == "snis"
        assert (s.estimate().estimate, s.estimate().ci) == (snis.estimate, snis.ci)
    with pytest.raises(ae.errors.UnknownOptionError, match="estimator"):
        Session.create(tmp_path / "t.db", proba, "error_rate", 20, estimator="ols")


def test_a_version_1_store_is_migrated_on_open_with_its_labels(tmp_path: Path) -> None:
    # A store as version 1 wrote it (no ranking table): opening it adds the table in one
    # transaction, and the campaign continues with the same labels and estimate.
    proba, y = _pool()
    path = tmp_path / "s.db"
    s = Session.create(path, proba, "error_rate", 20, seed=2)
    s.record({i: int(y[i]) for i in s.next_batch(12)})
    before = s.estimate()
    s.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE ranking")
    conn.execute("ALTER TABLE handouts DROP COLUMN holder")
    conn.execute("DROP TABLE agreement")
    conn.execute("ALTER TABLE models DROP COLUMN decision")
    conn.execute("DROP TABLE phases")
    conn.execute("DROP TABLE draw_index")
    conn.execute("DROP INDEX pool_cost")
    conn.execute("DROP TABLE parts")
    conn.execute("DROP TABLE summaries")
    conn.execute("ALTER TABLE models DROP COLUMN checks")
    conn.execute("DROP TABLE labeled_rows")
    conn.execute("DELETE FROM meta WHERE key = 'horizon'")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    s = Session.open(path)
    assert s.plan.schema_version == 8 and not s.plan.ranking
    after = s.estimate()
    assert (after.estimate, after.stderr, after.n_labels) == (
        before.estimate,
        before.stderr,
        before.n_labels,
    )
    s.record({i: int(y[i]) for i in s.next_batch(8)})
    assert s.progress().n_labels == 20
    s.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "8"
    assert "holder" in [r[1] for r in conn.execute("PRAGMA table_info(handouts)")]
    assert [r[1] for r in conn.execute("PRAGMA table_info(ranking)")] == [
        "model",
        "offsets",
        "items",
    ]
    conn.close()


def test_a_read_only_store_error_names_the_files_and_the_fix() -> None:
    """SQLite's bare 'attempt to write a readonly database' (a store, or its -wal/-shm left by
    another user's read, that this user cannot write) becomes a StoreError naming them."""
    import sqlite3

    from activeeval.session.schema import _with_retry

    def fail() -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    with pytest.raises(ae.errors.StoreError, match=r"s\.db-wal and s\.db-shm .* not writable"):
        _with_retry(fail, Path("/tmp/s.db"))
