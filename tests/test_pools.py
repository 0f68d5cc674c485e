"""The pool interface (activeeval.estimators.report.Pool): PlainPool and RankedPool answer the
same questions — the methods a campaign or session takes, the label book, the result's label
fields, where features are refused, the estimate and the comparison of a sample — and answer
them as the functions they stand for: the estimators on the same draws, and what evaluate and
compare report, bit for bit."""

from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Any

import numpy as np
import pytest

import activeeval as ae
from activeeval import methods
from activeeval.acquisition import _flat_grades, _grade_rows, _GradeBook, _LabelBook
from activeeval.errors import LabelSpaceError, ShapeError
from activeeval.estimators.assisted import assisted_estimate, assisted_paired_test
from activeeval.estimators.inference import estimate, paired_test
from activeeval.estimators.report import (
    ComparisonOutcome,
    PlainPool,
    Pool,
    RankedPool,
    Reporting,
    pool_class,
    pool_for,
)
from activeeval.measures import get_measure
from activeeval.ranking import (
    QueryValue,
    _bind_for_labels,
    ranking_pair_values,
    ranking_union,
    ranking_values,
)
from activeeval.sampling import draw, optimal_distribution

M = 400
N_QUERIES = 150
N_GRADES = 4


def _same(a: Any, b: Any) -> bool:
    """Equal bit for bit: floats (NaN equal to NaN), arrays, and result objects field by field."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if hasattr(a, "__dict__") and type(a).__module__.startswith("activeeval"):
        return type(a) is type(b) and _same(sorted(vars(a).items()), sorted(vars(b).items()))
    return bool(a == b)


# --------------------------------------------------------------------------- the pools
def _plain() -> tuple[list[ae.Categorical], np.ndarray]:
    """Two classifiers on M instances and the true labels."""
    rng = np.random.default_rng(3)
    logit = rng.normal(0, 1.5, M)
    y = (rng.random(M) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    pa = 1 / (1 + np.exp(-(logit + rng.normal(0, 0.7, M))))
    pb = 1 / (1 + np.exp(-(0.6 * logit + rng.normal(0, 0.7, M))))
    return [ae.Categorical(np.c_[1 - p, p]) for p in (pa, pb)], y


def _ranked() -> tuple[list[ae.GradedRelevance], dict[tuple[int, int], int]]:
    """Two rankers of the same queries (the second drops some of the first's items and adds
    its own) and every (query, item id)'s true grade."""
    rng = np.random.default_rng(5)
    lens1 = rng.integers(1, 7, N_QUERIES)
    ids1 = [rng.choice(40, k, replace=False) for k in lens1]
    truth = {(q, int(i)): int(rng.integers(0, N_GRADES)) for q in range(N_QUERIES) for i in ids1[q]}
    ids2 = []
    for q in range(N_QUERIES):
        kept = [int(i) for i in ids1[q] if rng.random() > 0.3]
        new = [40 + int(i) for i in rng.choice(40, int(rng.integers(0, 3)), replace=False)]
        truth |= {(q, i): int(rng.integers(0, N_GRADES)) for i in new}
        ids2.append(rng.permutation(kept + new) if kept + new else ids1[q][:1])
    rels = []
    for ids in (ids1, ids2):
        lens = np.array([len(i) for i in ids])
        proba = rng.dirichlet(np.ones(N_GRADES), int(lens.sum()))
        rels.append(ae.GradedRelevance(proba, np.r_[0, np.cumsum(lens)], items=np.concatenate(ids)))
    return rels, truth


def _grades(pool: RankedPool, truth: dict[tuple[int, int], int], idx: np.ndarray) -> list[Any]:
    """The oracle's answer: each query's grades of its items to grade, in the stored order."""
    keys, offsets = pool.items_to_grade()
    return [
        np.array([truth[(int(q), int(k))] for k in keys[offsets[q] : offsets[q + 1]]]) for q in idx
    ]


def _pool(kind: str, n_models: int, measure: str = "dcg") -> tuple[Pool, Any]:
    """A pool of ``kind`` over ``n_models`` models (uniform test distribution) and an oracle."""
    if kind == "plain":
        preds, y = _plain()
        meas = get_measure("error_rate").bind(preds[0])
        pool = pool_for(preds[:n_models], meas, np.full(M, 1.0 / M))
        return pool, lambda idx: y[idx]
    rels, truth = _ranked()
    rels = rels[:n_models]
    meas = _bind_for_labels(measure, *rels)
    ranked = pool_for(rels, meas, np.full(N_QUERIES, 1.0 / N_QUERIES))
    assert isinstance(ranked, RankedPool)
    return ranked, lambda idx: _grades(ranked, truth, idx)


def _sample(pool: Pool, oracle: Any, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, Any]:
    """Draws i.i.d. from a uniform q, labeled through the pool's label book: (q, draws, labels)."""
    m = pool.pool_weights.shape[0]
    q = np.full(m, 1.0 / m)
    draws = draw(q, n, np.random.default_rng(seed))
    book, check = pool.label_book()
    units = np.unique(draws)
    book.add(units, check(oracle(units), units))
    return q, draws, book.lookup(draws)


KINDS = [("plain", 1), ("plain", 2), ("ranked", 1), ("ranked", 2)]


# ------------------------------------------------------------------------ the contract
def test_both_pools_have_the_same_interface() -> None:
    def public(cls: type) -> dict[str, Any]:
        return {
            name: inspect.signature(getattr(cls, name))
            for name in dir(Pool)
            if not name.startswith("_") and callable(getattr(cls, name))
        }

    assert public(PlainPool) == public(RankedPool) == public(Pool)
    with pytest.raises(TypeError, match="abstract"):
        Pool([], None, np.ones(1))  # type: ignore[abstract]
    for cls in (PlainPool, RankedPool):
        for name in ("unit", "evaluate_methods", "compare_methods", "refuses_features"):
            assert name in vars(cls), (cls, name)


def test_each_pool_kind_names_its_methods_from_the_registry() -> None:
    assert PlainPool.evaluate_methods == methods.EVALUATE_METHODS
    assert PlainPool.compare_methods == methods.COMPARISON_METHODS
    assert PlainPool.session_methods(1) == methods.SAMPLING_METHODS
    assert PlainPool.session_methods(3) == methods.SESSION_COMPARISON_METHODS
    for get in (
        lambda c: c.evaluate_methods,
        lambda c: c.compare_methods,
        lambda c: c.session_methods(1),
        lambda c: c.session_methods(2),
    ):
        assert get(RankedPool) == methods.RANKING_METHODS
    assert (PlainPool.unit, RankedPool.unit) == ("instances", "queries")


def test_pool_for_picks_the_class_by_the_models() -> None:
    preds, _ = _plain()
    rels, _ = _ranked()
    assert pool_class(preds) is PlainPool and pool_class(rels) is RankedPool
    assert pool_class([preds[0], rels[0]]) is RankedPool  # a session then names the mismatch
    pool = pool_for(rels, "dcg", np.full(N_QUERIES, 1 / N_QUERIES))
    assert isinstance(pool, RankedPool) and pool.models == rels


def test_only_a_ranked_pool_refuses_features_whatever_the_estimator() -> None:
    x = np.zeros((N_QUERIES, 2))
    with pytest.raises(ShapeError, match="not ranking pools; drop features"):
        RankedPool.check_features(x, 1.0, N_QUERIES)
    RankedPool.check_features(None, 1.0, N_QUERIES)
    PlainPool.check_features(x, 1.0, N_QUERIES)  # usable: validated, accepted
    with pytest.raises(ShapeError, match="not estimator='snis'"):
        PlainPool.check_features(x, 1.0, N_QUERIES, "estimator='snis'")
    with pytest.raises(ShapeError, match="features"):
        PlainPool.check_features(x, 1.0, N_QUERIES + 1)  # a row per instance


def test_reporting_carries_the_pools_measure_and_test_distribution() -> None:
    pool, _ = _pool("ranked", 2)
    q = np.full(N_QUERIES, 1 / N_QUERIES)
    rep = pool.reporting(q, 0.9, "snis")
    assert isinstance(rep, Reporting)
    assert rep.measure is pool.measure and rep.pool_weights is pool.pool_weights and rep.q is q
    assert (rep.level, rep.estimator, rep.features, rep.support_mass) == (0.9, "snis", None, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.level = 0.5  # type: ignore[misc]


# --------------------------------------------------------------------------- labels
@pytest.mark.parametrize(("kind", "n_models"), KINDS)
def test_label_fields_round_trip_the_per_draw_labels(kind: str, n_models: int) -> None:
    pool, oracle = _pool(kind, n_models)
    _, draws, labels = _sample(pool, oracle, 60, seed=1)
    fields = pool.label_fields(labels)
    assert set(fields) == {"labels", "label_offsets"}
    if kind == "plain":
        assert fields["labels"] is labels and fields["label_offsets"] is None
        return
    flat, offsets = fields["labels"], fields["label_offsets"]
    assert flat.dtype == np.int64 and offsets.dtype == np.int64
    assert offsets.shape == (draws.shape[0] + 1,) and offsets[0] == 0 and offsets[-1] == flat.size
    back = _grade_rows(flat, offsets)
    assert len(back) == len(labels)
    for got, want, q in zip(back, labels, draws, strict=True):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, oracle(np.array([q]))[0])


def test_grade_rows_and_flat_grades_are_inverse_also_for_equal_lengths_and_none() -> None:
    flat = np.arange(6, dtype=np.int64)
    for offsets in (np.array([0, 3, 6]), np.array([0, 2, 2, 6]), np.array([0])):
        rows = _grade_rows(flat[: offsets[-1]], offsets)
        assert rows.dtype == object and rows.shape == (offsets.shape[0] - 1,)
        f, o = _flat_grades(rows)
        np.testing.assert_array_equal(f, flat[: offsets[-1]])
        np.testing.assert_array_equal(o, offsets)
        assert f.dtype == np.int64


def test_a_ranked_label_book_checks_and_keeps_each_querys_grades() -> None:
    pool, oracle = _pool("ranked", 2)
    book, check = pool.label_book()
    assert isinstance(book, _GradeBook) and check == book.accept
    idx = np.array([4, 0, 9])
    lens = np.diff(pool.items_to_grade()[1])[idx]
    answer = oracle(idx)
    flat = np.concatenate(answer)
    for given in (answer, flat, flat.astype(float)):  # per query, or concatenated
        rows = check(given, idx)
        assert [r.shape[0] for r in rows] == lens.tolist()
        for r, a in zip(rows, answer, strict=True):
            np.testing.assert_array_equal(r, a)
    book.add(idx, check(answer, idx))
    got = book.lookup(np.array([9, 4, 9]))
    np.testing.assert_array_equal(got[0], answer[2])
    np.testing.assert_array_equal(got[2], answer[2])
    with pytest.raises(LabelSpaceError, match="grades must be integers"):
        check(np.full(flat.shape, N_GRADES), idx)
    with pytest.raises(ShapeError, match="returned shape"):
        check(flat[:-1], idx)
    plain, _ = _pool("plain", 1)
    book, check = plain.label_book()
    assert type(book) is _LabelBook and book.known.shape == (M,)


# ------------------------------------------------------------------------ estimates
@pytest.mark.parametrize("estimator", ["assisted", "snis"])
def test_a_plain_pools_estimate_is_the_estimators_on_the_same_draws(estimator: str) -> None:
    pool, oracle = _pool("plain", 2)
    meas, pw = pool.measure, pool.pool_weights
    q = optimal_distribution(pool.models[1], meas)
    draws = draw(q, 80, np.random.default_rng(2))
    y = oracle(draws)
    rep = pool.reporting(q, 0.9, estimator)
    for model in (0, 1):
        got, interval = pool.estimate(rep, model, draws, y)
        pred = pool.models[model]
        if estimator == "assisted":
            want = assisted_estimate(meas, pred, draws, y, pool_weights=pw, level=0.9, pool_q=q)
            assert interval == "tempered" and got.score is not None
            got = dataclasses.replace(got, score=None)  # its curve: tests/test_tempered.py
        else:
            want = estimate(
                meas, pred.take(draws), y, q[draws], p=pw[draws], indices=draws, level=0.9
            )
            assert interval == "wald"
        assert _same(got, want)


@pytest.mark.parametrize("measure", ["dcg", "err"])
@pytest.mark.parametrize("n_models", [1, 2])
def test_a_ranked_pools_snis_estimate_is_eq_6_9_on_the_ranking_values(
    measure: str, n_models: int
) -> None:
    """The former ``_ranking_estimate`` with the thesis's estimator: the self-normalized
    estimate of each draw's value ℓ(r(x), y) (ranking_values; a pair: ranking_pair_values)."""
    pool, oracle = _pool("ranked", n_models, measure)
    q, draws, labels = _sample(pool, oracle, 70, seed=4)
    flat, offsets = _flat_grades(labels)
    meas, pw = pool.measure, pool.pool_weights
    if n_models == 1:
        values = [ranking_values(meas, flat, offsets)]
    else:
        values = list(ranking_pair_values(*pool.models, meas, draws, flat))
    rep = pool.reporting(q, 0.95, "snis")
    zeros = np.zeros(draws.shape[0])
    for model in range(n_models):
        got, interval = pool.estimate(rep, model, draws, labels)
        want = estimate(
            QueryValue(meas), values[model], zeros, q[draws], p=pw[draws], indices=draws
        )
        assert interval == "wald" and _same(got, want)


@pytest.mark.parametrize(("kind", "n_models"), KINDS)
def test_a_census_is_the_exact_value_with_stderr_0(kind: str, n_models: int) -> None:
    pool, oracle = _pool(kind, n_models)
    m = pool.pool_weights.shape[0]
    draws = np.r_[np.arange(m), np.arange(0, m, 3)]  # every unit, some twice
    book, check = pool.label_book()
    book.add(np.arange(m), check(oracle(np.arange(m)), np.arange(m)))
    labels = book.lookup(draws)
    rep = pool.reporting(np.full(m, 1.0 / m), 0.95, "assisted")
    for model in range(n_models):
        est, _ = pool.estimate(rep, model, draws, labels)
        assert est.census and est.stderr == 0.0 and est.n_labels == m
        assert est.estimate == pytest.approx(
            pool.estimate(pool.reporting(rep.q, 0.95, "snis"), model, draws, labels)[0].estimate
        )
    if n_models == 2:
        c = pool.compare(rep, draws, labels, census=True)
        assert c.stderr == 0.0 and c.difference == pytest.approx(c.estimates[0] - c.estimates[1])


def test_ranked_moments_are_computed_once_per_pool() -> None:
    pool, _ = _pool("ranked", 2)
    assert isinstance(pool, RankedPool)
    first, second = pool.moments(), pool.moments()
    assert len(first) == 2 and all(a is b for a, b in zip(first, second, strict=True))
    first.clear()  # a caller's list: the cache is not touched
    assert len(pool.moments()) == 2


# ------------------------------------------------------------------------ comparisons
@pytest.mark.parametrize("estimator", ["assisted", "snis"])
def test_a_plain_pools_comparison_is_the_paired_test_on_the_same_draws(estimator: str) -> None:
    pool, oracle = _pool("plain", 2)
    meas, pw = pool.measure, pool.pool_weights
    q = np.full(M, 1.0 / M)
    draws = draw(q, 90, np.random.default_rng(6))
    y = oracle(draws)
    got = pool.compare(pool.reporting(q, 0.95, estimator), draws, y)
    assert isinstance(got, ComparisonOutcome)
    if estimator == "assisted":
        want = assisted_paired_test(meas, pool.models, draws, y, pool_weights=pw, pool_q=q)
    else:
        at = [p.take(draws) for p in pool.models]
        want = paired_test(meas, at, y, q[draws], p=pw[draws], indices=draws)
    assert _same(got.comparison, want)
    assert (got.difference, got.stderr, got.p_value, got.best) == (
        want.difference,
        want.stderr,
        want.p_value,
        want.best,
    )
    assert _same(got.estimates, np.array(want.estimates))


def test_a_ranked_pools_snis_comparison_is_the_paired_test_on_the_pair_values() -> None:
    pool, oracle = _pool("ranked", 2)
    q, draws, labels = _sample(pool, oracle, 80, seed=7)
    flat, _ = _flat_grades(labels)
    values = list(ranking_pair_values(*pool.models, pool.measure, draws, flat))
    pw = pool.pool_weights
    got = pool.compare(pool.reporting(q, 0.95, "snis"), draws, labels)
    want = paired_test(
        QueryValue(pool.measure), values, np.zeros(draws.shape[0]), q[draws], p=pw[draws],
        indices=draws,
    )  # fmt: skip
    assert _same(got.comparison, want) and _same(got.estimates, np.array(want.estimates))
    items, offsets = ranking_union(*pool.models, draws)
    assert flat.shape[0] == items.shape[0] == offsets[-1]


# ----------------------------------------------------------- the pools behind evaluate/compare
@pytest.mark.parametrize("estimator", ["assisted", "snis"])
def test_the_pools_report_what_evaluate_and_compare_report(estimator: str) -> None:
    """Asked about evaluate's and compare's own draws, each pool gives their results' inference
    and comparison objects bit for bit."""
    preds, y = _plain()
    res = ae.evaluate(preds[0], lambda i: y[i], "f1", 70, random_state=1, estimator=estimator)
    meas = get_measure("f1").bind(preds[0])
    pool = pool_for(preds[:1], meas, np.full(M, 1.0 / M))
    q = optimal_distribution(preds[0], meas)
    est, interval = pool.estimate(pool.reporting(q, 0.95, estimator), 0, res.indices, res.labels)
    assert _same(est, res.inference) and interval == res.interval

    rels, truth = _ranked()
    ranked, _ = _pool("ranked", 2)
    assert isinstance(ranked, RankedPool)

    def oracle(idx: np.ndarray) -> list[Any]:
        return _grades(ranked, truth, idx)

    cmp = ae.compare(rels, oracle, "dcg", 40, random_state=2, estimator=estimator)
    labels = _grade_rows(cmp.labels, cmp.label_offsets)
    q = ae.ranking.ranking_distribution(rels, ranked.measure)
    got = ranked.compare(ranked.reporting(q, 0.95, estimator), cmp.indices, labels, census=True)
    assert _same(got.comparison, cmp.comparison)
    assert _same(ranked.label_fields(labels)["labels"], cmp.labels)
