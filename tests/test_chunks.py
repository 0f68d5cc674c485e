"""The lean in-memory path: passes over the pool a chunk at a time (``activeeval._chunks``).

A pool of one chunk keeps the arithmetic of one whole-array pass; on a pool of many chunks the
sums are added chunk by chunk, so q*, the estimators and the draws must agree with the one-chunk
computation of the same pool to rounding, and the draws exactly. Here ``_chunks.ROWS`` is made
small so that a pool of a few thousand instances spans many chunks.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

import activeeval as ae
from activeeval import _chunks
from activeeval import sampling as sampling_mod
from activeeval.errors import NonFiniteError, ProbabilityRowsError
from activeeval.estimators import report as report_mod
from activeeval.estimators.assisted import assisted_estimate
from activeeval.measures import get_measure
from activeeval.sampling import Sampler, optimal_distribution, successive_time

M = 5_003  # a pool of 6 chunks of 997 rows and a short one


def _pool(m: int = M, k: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.full(k, 0.7), size=m)
    y = (rng.random(m)[:, None] < proba.cumsum(axis=1)).argmax(axis=1)  # y ~ proba's row
    return proba, y


def _both(monkeypatch: pytest.MonkeyPatch, compute):  # type: ignore[no-untyped-def]
    """``compute()`` with the pool in one chunk, then in chunks of 997 rows."""
    whole = compute()
    monkeypatch.setattr(_chunks, "ROWS", 997)
    chunked = compute()
    monkeypatch.undo()
    return whole, chunked


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision", "recall"])
@pytest.mark.parametrize("weighted", [False, True])
def test_q_star_in_chunks_equals_the_whole_pool_pass(monkeypatch, measure, weighted) -> None:
    proba, _ = _pool()
    weights = np.random.default_rng(1).gamma(2.0, size=M) if weighted else None
    decision = (proba[:, 1] > 0.3).astype(int)  # a tuned threshold, apart from the argmax
    for prediction in (None, decision):
        whole, chunked = _both(
            monkeypatch,
            lambda prediction=prediction: optimal_distribution(
                proba, measure, pool_weights=weights, prediction=prediction
            ),
        )
        np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=0)
        assert np.array_equal(chunked > 0, whole > 0)


def test_q_star_of_a_regressor_in_chunks_equals_the_whole_pool_pass(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    pred = ae.Gaussian(rng.normal(size=M), rng.gamma(2.0, size=M))
    whole, chunked = _both(monkeypatch, lambda: optimal_distribution(pred, "mse"))
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=0)


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
def test_the_estimator_in_chunks_equals_the_whole_pool_pass(monkeypatch, measure) -> None:
    proba, y = _pool()
    q = optimal_distribution(proba, measure)
    idx = ae.sampling.draw(q, 300, random_state=3)
    whole, chunked = _both(
        monkeypatch, lambda: assisted_estimate(measure, proba, idx, y[idx], pool_q=q)
    )
    assert chunked.n_labels == whole.n_labels
    np.testing.assert_allclose(
        [chunked.estimate, chunked.stderr, chunked.power],
        [whole.estimate, whole.stderr, whole.power],
        rtol=1e-10,
    )


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_evaluate_in_chunks_equals_the_whole_pool_pass(monkeypatch, measure) -> None:
    proba, y = _pool()

    def run() -> ae.EvaluationResult:
        return ae.evaluate(proba, lambda i: y[i], measure, budget=150, random_state=4)

    whole, chunked = _both(monkeypatch, run)
    assert np.array_equal(chunked.indices, whole.indices)  # the same draws
    np.testing.assert_allclose(chunked.pool_q, whole.pool_q, rtol=1e-12, atol=0)
    np.testing.assert_allclose(
        [chunked.estimate, chunked.stderr, *chunked.ci],
        [whole.estimate, whole.stderr, *whole.ci],
        rtol=1e-10,
    )


def test_successive_time_in_chunks_and_remembered_for_a_frozen_q(monkeypatch) -> None:
    q = np.random.default_rng(5).gamma(0.4, size=M)
    q[::7] = 0.0
    q /= q.sum()
    whole, chunked = _both(monkeypatch, lambda: successive_time(q, 900))
    assert chunked == pytest.approx(whole, rel=1e-12)
    # Σ (1 − e^(−q t)) = n at the root (an independent check of the value)
    assert float(-np.expm1(-q * whole).sum()) == pytest.approx(900, rel=1e-9)
    # remembered only within remembering_times(), for the same q object and n
    calls = []
    real = sampling_mod._time_to_reach

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(sampling_mod, "_time_to_reach", counted)
    with sampling_mod.remembering_times():
        assert sampling_mod._successive_time(q, 900) == whole
        assert sampling_mod._successive_time(q, 900) == whole  # remembered
        assert sampling_mod._successive_time(q, 901) > whole  # another n: solved afresh
        assert sampling_mod._successive_time(q.copy(), 900) == whole  # another q: afresh
    assert calls == [900.0, 901.0, 900.0]
    assert sampling_mod._successive_time(q, 900) == whole  # outside the block: afresh
    assert len(calls) == 4


@pytest.mark.parametrize("m", [5_000, 70_001])
@pytest.mark.parametrize("where", [0, 4095, 4096, -1])
def test_draws_of_a_point_mass_and_of_a_uniform_view(m: int, where: int) -> None:
    q = np.zeros(m)
    q[where] = 1.0
    assert set(Sampler(q).draw(300, np.random.default_rng(0))[0].tolist()) == {where % m}
    flat = np.broadcast_to(1.0 / m, (m,))  # the uniform pool distribution's view
    u = np.random.default_rng(2).random(400)
    cdf = np.cumsum(np.full(m, 1.0 / m))
    cdf /= cdf[-1]
    got = Sampler(flat).draw(400, np.random.default_rng(2))[0]
    assert np.array_equal(got, np.minimum(np.searchsorted(cdf, u, side="right"), m - 1))


@pytest.mark.parametrize("m", [1, 4095, 4096, 4097, 3 * 4096 + 5, 70_001])
def test_draws_are_the_inverse_cdf_of_the_whole_pool_bit_for_bit(m: int) -> None:
    rng = np.random.default_rng(m)
    q = rng.gamma(0.3, size=m)
    q[rng.random(m) < 0.2] = 0.0
    q[rng.random(m) < 0.01] *= 1e-12
    q[0] = max(q[0], 1e-3)
    q /= q.sum()
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    u = np.random.default_rng(1).random(3000)
    ties = cdf[np.unique(np.r_[0, 4095, 4096, m // 2, m - 1].clip(0, m - 1))]
    u = np.r_[u, ties[ties < 1], 0.0]
    want = np.minimum(np.searchsorted(cdf, u, side="right"), m - 1)
    s = Sampler(q)
    got, got_q = _chunks.inverse_cdf(s.ends, sampling_mod.DRAW_ROWS, m, u, lambda a, b: q[a:b])
    assert np.array_equal(got, want)
    assert got_q.tobytes() == q[want].tobytes()
    assert np.all(q[got] > 0)
    drawn, drawn_q = s.draw(500, np.random.default_rng(7))
    again = np.searchsorted(cdf, np.random.default_rng(7).random(500), side="right")
    assert np.array_equal(drawn, np.minimum(again, m - 1))
    assert np.array_equal(drawn_q, q[drawn])


def test_errors_name_the_row_in_the_whole_pool_not_in_its_chunk(monkeypatch) -> None:
    proba, _ = _pool()
    monkeypatch.setattr(_chunks, "ROWS", 997)
    bad = proba.copy()
    bad[3_500] = [0.7, 0.7]
    with pytest.raises(ProbabilityRowsError, match=r"row 3500 sums to 1\.4"):
        ae.Categorical(bad)
    bad = proba.copy()
    bad[2_100] = [-0.1, 1.1]
    with pytest.raises(ProbabilityRowsError, match="row 2100 has a probability outside"):
        ae.Categorical(bad)
    bad = proba.copy()
    bad[4_000, 1] = np.inf
    with pytest.raises(NonFiniteError, match=r"entry \(4000, 1\) is inf"):
        ae.Categorical(bad)


@pytest.mark.parametrize("k", [4, 130])  # int8 codes, and int16 above 127 classes
def test_a_chunk_is_a_view_with_the_argmax_of_its_rows(k: int) -> None:
    proba = np.random.default_rng(k).dirichlet(np.full(k, 0.5), size=M)
    proba[::5] = 1.0 / k  # ties: the first class, as np.argmax
    labels = [f"c{j}" for j in range(k)]
    for cached_first in (False, True):
        pred = ae.Categorical(proba, labels=labels)
        if cached_first:
            pred.predicted_index  # noqa: B018 — the whole pool's argmax, then chunks of it
        part = pred.take(slice(1000, 2000))
        assert np.shares_memory(part.proba, proba)
        assert np.array_equal(part.predicted_index, np.argmax(proba[1000:2000], axis=1))
        assert np.array_equal(part.point_prediction(), np.array(labels)[proba[1000:2000].argmax(1)])
    decision = np.array(labels)[np.random.default_rng(1).integers(0, k, M)]
    decided = ae.Categorical(proba, labels=labels).with_decision(decision)
    assert np.array_equal(decided.take(slice(10, 2000)).point_prediction(), decision[10:2000])


class _Discrete(ae.Predictive):
    """A user's own predictive distribution whose ``take`` knows only index arrays."""

    def __init__(self, vals: np.ndarray, probs: np.ndarray) -> None:
        self.vals, self.probs = vals, probs

    @property
    def n(self) -> int:
        return int(self.vals.shape[0])

    def support(self) -> tuple[np.ndarray, np.ndarray]:
        return self.vals, self.probs

    def point_prediction(self) -> np.ndarray:
        return (self.vals * self.probs).sum(axis=1)

    def take(self, index):  # type: ignore[no-untyped-def]
        idx = np.asarray(index)
        assert idx.dtype.kind in "iu", "a subclass need only take index arrays"
        return _Discrete(self.vals[idx], self.probs[idx])


def test_a_predictive_subclass_that_takes_index_arrays_only_still_works(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    vals = rng.normal(size=(M, 3))
    probs = rng.dirichlet([1, 1, 1], size=M)
    y = vals[np.arange(M), (rng.random(M)[:, None] < probs.cumsum(axis=1)).argmax(axis=1)]
    pred = _Discrete(vals, probs)
    whole, chunked = _both(
        monkeypatch,
        lambda: ae.evaluate(pred, lambda i: y[i], "mse", budget=60, random_state=0),
    )
    assert np.array_equal(chunked.indices, whole.indices)
    assert chunked.estimate == pytest.approx(whole.estimate, rel=1e-10)


def test_a_decision_of_the_wrong_length_is_refused_naming_it() -> None:
    proba, _ = _pool()
    with pytest.raises(ae.errors.ShapeError, match=r"prediction: .*\(5003,\); got shape \(5008,\)"):
        optimal_distribution(proba, "f1", prediction=np.zeros(M + 5, dtype=int))


@pytest.mark.parametrize("k", range(1, 21))
def test_row_sums_are_numpys_bit_for_bit(k: int) -> None:
    from activeeval._validation import _row_sums

    a = np.random.default_rng(k).dirichlet(np.full(k, 0.3), size=2000)
    assert _row_sums(a).tobytes() == a.sum(axis=1).tobytes()


def test_a_census_spread_over_many_chunks_is_found(monkeypatch) -> None:
    """Precision needs only the predicted positives: once every one of them is labeled (they
    lie in several chunks), the estimate is their exact precision; one left out, it is not."""
    proba, y = _pool()
    proba = proba.copy()
    proba[:, 1] = np.where(np.arange(M) % 500 == 7, 0.9, 0.1)  # 11 positives, one per ~500
    proba[:, 0] = 1.0 - proba[:, 1]
    positives = np.flatnonzero(proba[:, 1] > 0.5)
    monkeypatch.setattr(_chunks, "ROWS", 997)
    rep = report_mod.Reporting(
        get_measure("precision").bind(ae.as_predictive(proba)),
        np.full(M, 1.0 / M), np.full(M, 1.0 / M), 0.95, "assisted",
    )  # fmt: skip
    pred = ae.as_predictive(proba)
    exact = report_mod._census(rep, pred, positives, y[positives])
    assert exact is not None and exact.estimate == pytest.approx(float(y[positives].mean()))
    assert report_mod._census(rep, pred, positives[:-1], y[positives[:-1]]) is None
    assert report_mod._census(rep, pred, positives[1:], y[positives[1:]]) is None


def test_the_uniform_pool_of_many_chunks_is_a_view(monkeypatch) -> None:
    monkeypatch.setattr(_chunks, "ROWS", 997)
    p = _chunks.uniform(M)
    assert p.strides == (0,) and p[17] == 1.0 / M and not p.flags.writeable
    assert ae.sampling.passive_distribution(M).flags.writeable  # the public one: an array
    assert _chunks.uniform(996).flags.writeable


def _traced_peak(run: Callable[[], object]) -> int:
    """The peak of the memory traced while ``run()`` runs, in bytes."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_evaluate_works_within_a_small_multiple_of_its_input() -> None:
    """Working memory, not time: q (8 bytes per instance), a domain mask, the decisions' codes,
    the label book and the support (1 byte each) and a few chunks — about 12 bytes per
    instance against the input's 16 (two float64 columns) — plus the temporaries of a chunk
    (2 MiB per float64 column of 262,144 rows; 32 MiB allows 16 of them). Before the chunked
    passes the call held about 5 copies of its input (80 bytes per instance)."""
    m = 4_000_000
    rng = np.random.default_rng(0)
    proba = np.empty((m, 2))
    proba[:, 1] = rng.random(m)
    proba[:, 0] = 1.0 - proba[:, 1]
    y = (rng.random(m) < proba[:, 1]).astype(np.int8)
    ae.evaluate(proba[:1000], lambda i: y[i], "f1", budget=50, random_state=0)  # imports
    peak = _traced_peak(
        lambda: ae.evaluate(proba, lambda i: y[i], "f1", budget=500, random_state=0)
    )
    assert peak <= 12 * m + 32 * 2**20, f"{peak / m:.1f} bytes per instance"


def _pair(m: int = M) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    proba, y = _pool(m)
    rng = np.random.default_rng(9)
    p1 = np.clip(proba[:, 1] + rng.normal(0, 0.15, m), 0.0, 1.0)
    third = np.clip(proba[:, 1] + rng.normal(0, 0.3, m), 0.0, 1.0)
    return proba, np.c_[1 - p1, p1], np.c_[1 - third, third], y


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
@pytest.mark.parametrize("method", ["active", "active_uniC"])
def test_comparison_q_in_chunks_equals_the_whole_pool_pass(monkeypatch, measure, method) -> None:
    a, b, c, _ = _pair()
    costs = np.random.default_rng(3).uniform(0.5, 2.0, M)
    for models in ([a, b], [a, b, c]):  # one pair, and three pairs (eq. 5.16)
        whole, chunked = _both(
            monkeypatch,
            lambda models=models: ae.sampling.comparison_distribution(
                models, measure, method=method, costs=costs
            ),
        )
        np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=0)


def test_compare_in_chunks_equals_the_whole_pool_pass(monkeypatch) -> None:
    a, b, _, y = _pair()

    def run() -> ae.ComparisonResult:
        return ae.compare([a, b], lambda i: y[i], "f1", budget=200, random_state=5)

    whole, chunked = _both(monkeypatch, run)
    assert np.array_equal(chunked.indices, whole.indices)
    np.testing.assert_allclose(
        [chunked.difference, chunked.stderr, chunked.p_value],
        [whole.difference, whole.stderr, whole.p_value],
        rtol=1e-10,
    )


def test_compare_works_within_a_small_multiple_of_one_input() -> None:
    """Working memory of a two-model comparison: q (8 bytes per instance), the domain, both
    models' argmax codes, the label book and the support (1 byte each) — about 13 bytes per
    instance against 16 per model's input — plus a few chunks' temporaries (32 MiB). Before,
    q for the comparison alone took 7 times one model's input."""
    m = 4_000_000
    rng = np.random.default_rng(0)
    a = np.empty((m, 2))
    a[:, 1] = rng.random(m)
    a[:, 0] = 1.0 - a[:, 1]
    b = np.empty((m, 2))
    b[:, 1] = np.clip(a[:, 1] + rng.normal(0, 0.1, m), 0.0, 1.0)
    b[:, 0] = 1.0 - b[:, 1]
    y = (rng.random(m) < a[:, 1]).astype(np.int8)
    ae.compare([a[:1000], b[:1000]], lambda i: y[i], "error_rate", budget=50, random_state=0)
    peak = _traced_peak(
        lambda: ae.compare([a, b], lambda i: y[i], "error_rate", budget=500, random_state=0)
    )
    assert peak <= 13 * m + 32 * 2**20, f"{peak / m:.1f} bytes per instance"


def test_three_models_compare_within_one_array_of_the_pool() -> None:
    """q of k > 2 models is the average of every pair's q* (eq. 5.16) built in one array:
    the first pair's score kept in it, the others made again a chunk at a time and added
    (about 12 bytes per instance: q, the domain and the three models' codes, plus a few
    chunks' temporaries). Before, q held a finished pair, the pair being made and the
    previous pair's score at once (34 bytes per instance; 2.77 GB at 10^8 in a session's
    init)."""
    m = 4_000_000
    rng = np.random.default_rng(0)
    models = []
    for noise in (0.0, 0.1, 0.2):
        pr = np.empty((m, 2))
        pr[:, 1] = (
            rng.random(m)
            if not models
            else np.clip(models[0][:, 1] + rng.normal(0, noise, m), 0.0, 1.0)
        )
        pr[:, 0] = 1.0 - pr[:, 1]
        models.append(pr)
    y = (rng.random(m) < models[0][:, 1]).astype(np.int8)
    ae.compare([pr[:1000] for pr in models], lambda i: y[i], "error_rate", budget=50,
               random_state=0)  # fmt: skip
    peak = _traced_peak(
        lambda: ae.compare(models, lambda i: y[i], "error_rate", budget=500, random_state=0)
    )
    assert peak <= 13 * m + 32 * 2**20, f"{peak / m:.1f} bytes per instance"


def test_a_session_above_one_chunk_reports_what_evaluate_reports(monkeypatch, tmp_path) -> None:
    """Bit for bit, as on pools of one chunk (``tests/test_inputs.py``): a session holds its
    stored pool the way ``evaluate`` holds its own (the uniform test distribution as a view)
    and sums it in the same chunks."""
    proba, y = _pool()
    monkeypatch.setattr(_chunks, "ROWS", 997)
    for measure in ("f1", "error_rate"):
        want = ae.evaluate(proba, lambda i: y[i], measure, budget=150, random_state=4)
        with ae.Session.create(tmp_path / f"{measure}.db", proba, measure, 150, seed=4) as s:
            while ids := s.next_batch(40):
                s.record({i: int(y[i]) for i in ids})
            got = s.estimate()
        assert (got.estimate, got.ci, got.n_labels) == (want.estimate, want.ci, want.n_labels)


# ------------------------------------------- sums that do not depend on where they run
def test_a_dot_product_over_the_pool_does_not_depend_on_blas_threads() -> None:
    """BLAS splits a long dot product among its threads and its rounding follows their
    number; ``dot`` sums blocks of DOT_ROWS (one thread each), so one thread and every core
    give the same bits — as a Dask worker (one BLAS thread) and the client must."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(0)
    a, b = rng.random(_chunks.ROWS), rng.random(_chunks.ROWS)
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        one = _chunks.dot(a, b)
        short = float(a[: _chunks.DOT_ROWS] @ b[: _chunks.DOT_ROWS])
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        two = _chunks.dot(a, b)
        assert _chunks.dot(a[: _chunks.DOT_ROWS], b[: _chunks.DOT_ROWS]) == short  # a @ b
    assert one == two
    assert one == pytest.approx(math.fsum(a * b), rel=1e-14)
    blocks = [float(a[s : s + _chunks.DOT_ROWS] @ b[s : s + _chunks.DOT_ROWS])
              for s in range(0, a.shape[0], _chunks.DOT_ROWS)]  # fmt: skip
    total = 0.0
    for x in blocks:  # added in order, from 0.0
        total += x
    assert one == total


def test_a_chunked_sum_is_one_chunks_sum_and_the_chunks_in_order(monkeypatch) -> None:
    x = np.random.default_rng(1).random(M)
    assert _chunks.chunked_sum(x) == float(x.sum())  # one chunk
    monkeypatch.setattr(_chunks, "ROWS", 997)
    want = 0.0
    for s in range(0, M, 997):
        want += float(x[s : s + 997].sum())
    assert _chunks.chunked_sum(x) == want


def test_the_time_summarys_parts_merge_in_any_order_to_the_largest_q() -> None:
    """``top_part`` and ``merge_tops`` keep the TOP_Q + 1 largest q whatever the chunks and
    the order of merging: their least is the (TOP_Q + 1)-th largest of the pool, found here by
    sorting it."""
    from activeeval.sampling import TOP_Q, TimeSummary

    rng = np.random.default_rng(2)
    q = rng.pareto(1.5, 3 * TOP_Q + 17)
    q[rng.random(q.shape[0]) < 0.2] = 0.0
    q /= q.sum()
    parts = [TimeSummary.top_part(q[s : s + 50_000])[1] for s in range(0, q.shape[0], 50_000)]
    forward, backward = np.empty(0), np.empty(0)
    for p in parts:
        forward = TimeSummary.merge_tops(forward, p)
    for p in parts[::-1]:
        backward = TimeSummary.merge_tops(p, backward)
    want = np.sort(q)[-(TOP_Q + 1)]
    assert forward.min() == backward.min() == want
    assert sum(TimeSummary.top_part(q[s : s + 50_000])[0]
               for s in range(0, q.shape[0], 50_000)) == int(np.count_nonzero(q))  # fmt: skip


def test_chunked_dot_adds_the_chunks_dot_products_in_order() -> None:
    """Σ q·λ as a cluster's blocks add it (the horizon with costs): each chunk's dot product
    (itself in blocks of DOT_ROWS), added in order from 0 — and Σ a·b to rounding (fsum)."""
    rng = np.random.default_rng(11)
    m = 2 * _chunks.ROWS + 12_345
    a, b = rng.random(m), rng.uniform(1, 5, m)
    want = 0.0
    for start in range(0, m, _chunks.ROWS):
        part = 0.0
        for s in range(start, min(start + _chunks.ROWS, m), _chunks.DOT_ROWS):
            stop = min(s + _chunks.DOT_ROWS, start + _chunks.ROWS, m)
            part += float(a[s:stop] @ b[s:stop])
        want += part
    assert _chunks.chunked_dot(a, b) == want
    assert _chunks.chunked_dot(a, b) == pytest.approx(math.fsum(a * b), rel=1e-12)
