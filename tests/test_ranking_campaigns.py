"""Ranking campaigns: ``evaluate`` / ``compare`` on GradedRelevance pools — the oracle contract,
bad input, nothing lost on a failing oracle, budgets and census, coverage of both estimators."""

from __future__ import annotations

import numpy as np
import pytest

import activeeval as ae
from activeeval.campaign import OracleError

Z95 = 1.959963984540054


def _pool(seed: int = 0, m: int = 600, grades: int = 4):
    """A well-specified pool: true grades drawn from the model's own grade distributions."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 10, m)
    off = np.r_[0, np.cumsum(lengths)]
    total = int(off[-1])
    proba = rng.dirichlet(np.full(grades, 0.6), total)
    truth = (proba.cumsum(1) > rng.random(total)[:, None]).argmax(1)
    costs = np.log2(2 + rng.integers(0, 400, total) / 100)
    rel = ae.GradedRelevance(proba, off, items=np.arange(total), costs=costs)
    return rel, truth


def _oracle(rel: ae.GradedRelevance, truth: np.ndarray, calls: list | None = None):
    def oracle(idx):
        if calls is not None:
            calls.append(np.array(idx))
        sub = rel.take(idx)
        return truth[sub.items]  # item ids are flat positions of the unpermuted pool

    return oracle


def test_oracle_is_asked_each_query_once_and_results_hold_its_grades() -> None:
    rel, truth = _pool()
    calls: list = []
    res = ae.evaluate(rel, _oracle(rel, truth, calls), "dcg", budget=40, random_state=1)
    asked = np.concatenate(calls)
    assert np.unique(asked).size == asked.size == res.n_labels
    assert res.cost <= 40 + 1e-9 and res.cost > 40 - ae.ranking_query_costs(rel).max()
    for j, i in enumerate(res.indices):
        got = res.labels[res.label_offsets[j] : res.label_offsets[j + 1]]
        np.testing.assert_array_equal(got, truth[rel.offsets[i] : rel.offsets[i + 1]])


def test_snis_estimate_is_the_self_normalized_mean_of_query_values() -> None:
    rel, truth = _pool(1)
    meas = ae.ERR(k=5).bind(rel)
    values = ae.ranking_values(meas, truth, rel.offsets)
    res = ae.evaluate(rel, _oracle(rel, truth), meas, budget=60, random_state=2, estimator="snis")
    v = 1.0 / res.q  # p uniform
    assert res.estimate == pytest.approx(v @ values[res.indices] / v.sum(), rel=1e-12)


@pytest.mark.parametrize("estimator", ["assisted", "snis"])
@pytest.mark.parametrize("measure", [ae.DCG(), ae.ERR(k=5)])
def test_intervals_cover_the_pool_value_on_a_well_specified_pool(estimator, measure) -> None:
    rel, truth = _pool(2, m=800)
    meas = measure.bind(rel)
    value = ae.ranking_values(meas, truth, rel.offsets).mean()
    q = ae.ranking_distribution(rel, meas)  # computed once; evaluate(q=...) draws from it
    reps = 300
    hit = np.empty(reps, dtype=bool)
    for r in range(reps):
        res = ae.evaluate(rel, _oracle(rel, truth), meas, 200, q=q, random_state=r,
                          estimator=estimator)  # fmt: skip
        hit[r] = abs(res.estimate - value) <= Z95 * res.stderr
    assert abs(hit.mean() - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps)


def test_comparison_labels_the_union_and_the_snis_difference_is_direct() -> None:
    rel, truth = _pool(3)
    rng = np.random.default_rng(3)
    # Ranker 2: the same candidates reordered, a few dropped.
    perm = np.concatenate([rel.offsets[i] + rng.permutation(rel.lengths[i]) for i in range(rel.n)])
    keep = rng.random(perm.size) > 0.2
    q_of = rel.query_of_item[perm][keep]
    off2 = np.r_[0, np.cumsum(np.bincount(q_of, minlength=rel.n))]
    rel2 = ae.GradedRelevance(rel.proba[perm][keep], off2, items=rel.items[perm][keep],
                              costs=rel.item_costs[perm][keep])  # fmt: skip
    calls: list = []

    def oracle(idx):
        calls.append(np.array(idx))
        items, _ = ae.ranking_union(rel, rel2, idx)
        return truth[items]

    meas = ae.DCG(k=5)
    res = ae.compare([rel, rel2], oracle, meas, budget=50, random_state=4, estimator="snis")
    asked = np.concatenate(calls)
    assert np.unique(asked).size == asked.size
    items, off = ae.ranking_union(rel, rel2, res.indices)
    np.testing.assert_array_equal(res.labels, truth[items])
    np.testing.assert_array_equal(res.label_offsets, off)
    v1, v2 = ae.ranking_pair_values(rel, rel2, meas, np.arange(rel.n), truth[
        ae.ranking_union(rel, rel2)[0]])  # fmt: skip
    v = 1.0 / res.q
    want = v @ (v1 - v2)[res.indices] / v.sum()
    assert res.difference == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_census_returns_the_exact_value() -> None:
    rel, truth = _pool(4, m=30)
    meas = ae.DCG(k=3)
    res = ae.evaluate(rel, _oracle(rel, truth), meas, budget=10_000, random_state=0)
    assert res.inference.census and res.stderr == 0.0 and res.n_labels == rel.n
    exact = ae.ranking_values(meas.bind(rel), truth, rel.offsets).mean()
    assert res.estimate == pytest.approx(exact, rel=1e-12)


def test_a_list_per_query_answer_equals_the_flat_answer() -> None:
    rel, truth = _pool(5)

    def per_query(idx):
        return [truth[rel.offsets[i] : rel.offsets[i + 1]] for i in idx]

    a = ae.evaluate(rel, _oracle(rel, truth), "err", budget=30, random_state=6)
    b = ae.evaluate(rel, per_query, "err", budget=30, random_state=6)
    assert a.estimate == b.estimate and a.stderr == b.stderr


def test_pool_weights_enter_the_sampling_distribution_as_p_times_the_root_moment() -> None:
    rel, _ = _pool(6)
    meas = ae.ERR(k=4).bind(rel)
    p = np.random.default_rng(6).uniform(0.2, 3.0, rel.n)
    p /= p.sum()
    q = ae.ranking_distribution(rel, meas, pool_weights=p, mix=0.2)
    center = p @ ae.ranking_expectation(rel, meas)
    lam = ae.ranking_query_costs(rel)
    score = p * np.sqrt(ae.ranking_second_moment(rel, meas, center) / lam)
    np.testing.assert_allclose(q, 0.8 * score / score.sum() + 0.2 * p, rtol=1e-12)
    uniform = ae.ranking_distribution(rel, meas, pool_weights=np.ones(rel.n))
    np.testing.assert_allclose(uniform, ae.ranking_distribution(rel, meas), rtol=1e-12)
    np.testing.assert_allclose(
        ae.ranking_distribution(rel, meas, method="passive", pool_weights=p), p
    )


def test_bad_oracle_answers_keep_every_label_acquired_before() -> None:
    rel, truth = _pool(7)
    # A second ranker (the lists reversed) and a sequential comparison: the oracle is asked
    # once per look, and fails on the third.
    rev = np.concatenate([np.arange(rel.offsets[i + 1] - 1, rel.offsets[i] - 1, -1)
                          for i in range(rel.n)])  # fmt: skip
    rel2 = ae.GradedRelevance(rel.proba[rev], rel.offsets, items=rel.items[rev],
                              costs=rel.item_costs[rev])  # fmt: skip
    state = {"calls": 0}

    def flaky(idx):
        state["calls"] += 1
        if state["calls"] == 3:
            raise RuntimeError("annotator tool crashed")
        return truth[ae.ranking_union(rel, rel2, idx)[0]]

    with pytest.raises(OracleError) as info:
        ae.compare([rel, rel2], flaky, "dcg", budget=60, random_state=0, sequential=True,
                   alpha=1e-12, step=10)  # fmt: skip
    idx, grades = info.value.acquired
    assert state["calls"] == 3 and len(idx) == len(grades) > 0
    for i, g in zip(idx, grades, strict=True):
        np.testing.assert_array_equal(g, truth[ae.ranking_union(rel, rel2, [i])[0]])

    def short(idx):
        return truth[rel.take(idx).items][:-1]

    with pytest.raises(OracleError, match="oracle") as info:
        ae.evaluate(rel, short, "dcg", budget=20, random_state=0)
    assert isinstance(info.value.__cause__, ae.ShapeError)

    def off_scale(idx):
        y = truth[rel.take(idx).items].copy()
        y[0] = rel.n_grades  # one grade above the model's scale
        return y

    with pytest.raises(OracleError) as info:
        ae.evaluate(rel, off_scale, "dcg", budget=20, random_state=0)
    assert isinstance(info.value.__cause__, ae.LabelSpaceError)

    def fractional(idx):
        return truth[rel.take(idx).items] + 0.5

    with pytest.raises(OracleError) as info:
        ae.evaluate(rel, fractional, "dcg", budget=20, random_state=0)
    assert isinstance(info.value.__cause__, ae.LabelSpaceError)


def test_bad_campaign_arguments_are_refused_naming_the_argument() -> None:
    rel, truth = _pool(8)
    oracle = _oracle(rel, truth)
    with pytest.raises(ae.ShapeError, match="batch_size"):
        ae.evaluate(rel, oracle, "dcg", budget=20, batch_size=5)
    with pytest.raises(ae.UnknownOptionError, match="method"):
        ae.evaluate(rel, oracle, "dcg", budget=20, method="stratified")
    with pytest.raises(ae.ShapeError, match="two rankers"):
        ae.compare([rel, rel, rel], oracle, "dcg", budget=20)
    with pytest.raises(ae.BudgetError, match="budget"):
        ae.evaluate(rel, oracle, "dcg", budget=0)
    q = np.full(rel.n, 1.0 / (rel.n - 1))
    q[0] = 0.0
    with pytest.raises(ae.InvalidSamplingDistributionError, match="q"):
        ae.evaluate(rel, oracle, "dcg", budget=20, q=q)
    with pytest.raises(ae.ShapeError, match="oracle"):
        ae.evaluate(rel, "not callable", "dcg", budget=20)


def test_comparisons_that_label_every_query_report_the_exact_difference() -> None:
    rel, truth = _pool(9, m=25)
    rev = np.concatenate([np.arange(rel.offsets[i + 1] - 1, rel.offsets[i] - 1, -1)
                          for i in range(rel.n)])  # fmt: skip
    rel2 = ae.GradedRelevance(rel.proba[rev], rel.offsets, items=rel.items[rev])
    rel1 = ae.GradedRelevance(rel.proba, rel.offsets, items=rel.items)
    meas = ae.DCG(k=2)
    exact = (
        ae.ranking_values(meas, truth, rel.offsets).mean()
        - ae.ranking_values(meas, truth[rev], rel.offsets).mean()
    )
    for est in ("assisted", "snis"):
        res = ae.compare([rel1, rel2], lambda i: truth[ae.ranking_union(rel1, rel2, i)[0]],
                         meas, budget=10_000, random_state=1, estimator=est)  # fmt: skip
        assert res.n_labels == rel.n and res.stderr == 0.0
        assert res.difference == pytest.approx(exact, rel=1e-12, abs=1e-12)
    # The same for class-probability pools.
    rng = np.random.default_rng(9)
    pa = rng.dirichlet([1, 1], 30)
    pb = rng.dirichlet([1, 1], 30)
    y = rng.integers(0, 2, 30)
    res = ae.compare([pa, pb], lambda i: y[i], "f1", budget=10_000, random_state=0)
    want = [  # F1 = 2·TP / (predicted positives + actual positives)
        2 * np.sum((p.argmax(1) == 1) & (y == 1)) / (np.sum(p.argmax(1) == 1) + np.sum(y == 1))
        for p in (pa, pb)
    ]
    assert res.stderr == 0.0
    np.testing.assert_allclose(res.estimates, want, rtol=1e-12)


def test_a_sequential_look_with_zero_stderr_does_not_stop_the_campaign() -> None:
    rel, truth = _pool(10)
    rev = np.concatenate([np.arange(rel.offsets[i + 1] - 1, rel.offsets[i] - 1, -1)
                          for i in range(rel.n)])  # fmt: skip
    rel2 = ae.GradedRelevance(rel.proba[rev], rel.offsets, items=rel.items[rev])
    rel1 = ae.GradedRelevance(rel.proba, rel.offsets, items=rel.items)
    for seed in range(5):
        res = ae.compare([rel1, rel2], lambda i: truth[ae.ranking_union(rel1, rel2, i)[0]],
                         "dcg", budget=40, random_state=seed, sequential=True,
                         step=1)  # fmt: skip
        assert res.n_labels > 1  # one draw has stderr 0 and is no evidence


def test_an_oracle_failing_on_its_first_call_loses_nothing_and_reports_no_labels() -> None:
    rel, _ = _pool(11)

    def broken(idx):
        raise RuntimeError("no annotators today")

    with pytest.raises(OracleError) as info:
        ae.evaluate(rel, broken, "dcg", budget=10, random_state=0)
    idx, grades = info.value.acquired
    assert idx.size == 0 and grades == []
