"""Measures of probabilities (issue 31, Deliver 3): Brier score, log loss, ECE, ROC AUC and
average precision. Each census equals scikit-learn's function; each influence function equals
a finite difference of the measure along a contaminated pool; the estimators are unbiased or
consistent under unequal sampling (seeded Monte Carlo, tolerances from its standard error),
their standard errors match the spread, and what does not fit is refused."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import sklearn
from scipy import special
from sklearn import metrics
from sklearn.calibration import calibration_curve

import activeeval as ae
from activeeval.errors import LabelSpaceError, ShapeError, UnknownOptionError
from activeeval.estimators import tempered
from activeeval.estimators.probability import probability_estimate
from activeeval.probability_measures import (
    BrierScore,
    ExpectedCalibrationError,
    Ranks,
    at_least,
    at_most,
    below,
)
from activeeval.sampling import draw, optimal_distribution

NAMES = ("brier", "log_loss", "ece", "roc_auc", "average_precision")
SKLEARN = tuple(int(x) for x in sklearn.__version__.split(".")[:2])


def _pool(k: int, m: int = 1500, seed: int = 0, ties: bool = True):
    """Class probabilities (rounded to two digits, so scores tie), labels drawn from them,
    and uneven test weights."""
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.full(k, 0.7), size=m)
    if ties:
        proba = np.round(proba, 2)
        proba[:, -1] = 1.0 - proba[:, :-1].sum(axis=1)
        proba = np.clip(proba, 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in proba])
    w = rng.uniform(0.5, 2.0, size=m)
    return proba, y, w


def _sklearn(name: str, proba, y, w, pos: int) -> float:
    k = proba.shape[1]
    if name == "brier":
        return metrics.brier_score_loss(y, proba if k > 2 else proba[:, 1], sample_weight=w)
    if name == "log_loss":
        return metrics.log_loss(y, proba, sample_weight=w, labels=list(range(k)))
    if name == "roc_auc":
        return metrics.roc_auc_score(y == pos, proba[:, pos], sample_weight=w)
    return metrics.average_precision_score(y == pos, proba[:, pos], sample_weight=w)


# ---------------------------------------------------------------------------- census
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("name", ["brier", "log_loss", "roc_auc", "average_precision"])
def test_census_equals_scikit_learn(name: str, k: int) -> None:
    if name == "brier" and k > 2 and SKLEARN < (1, 7):
        pytest.skip("scikit-learn's multi-class Brier score arrived in 1.7")
    proba, y, w = _pool(k)
    pos = k - 1
    kw = {"pos_label": pos} if k > 2 and name in ("roc_auc", "average_precision") else {}
    meas = ae.get_measure(name, **kw).bind(ae.Categorical(proba))
    assert meas.value(proba, y, w / w.sum()) == pytest.approx(
        _sklearn(name, proba, y, w, pos), abs=1e-9
    )
    # through the estimator: every instance labeled (in any order, some twice) is the census
    order = np.r_[np.random.default_rng(1).permutation(len(y)), [0, 5]]
    est = probability_estimate(meas, proba, order, y[order], pool_weights=w)
    assert est.census and est.stderr == 0.0
    assert est.estimate == pytest.approx(_sklearn(name, proba, y, w, pos), abs=1e-9)
    assert est.ci == (est.estimate, est.estimate)


def test_multiclass_brier_by_hand() -> None:
    # independent of scikit-learn's version: Σ_k (p_k − 1[y = k])², no halving for K > 2
    proba, y, _ = _pool(3, m=200)
    onehot = np.eye(3)[y]
    meas = BrierScore().bind(ae.Categorical(proba))
    by_hand = float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    assert meas.value(proba, y, np.full(200, 1 / 200)) == pytest.approx(by_hand, abs=1e-12)
    assert meas.value_range == (0.0, 2.0)


@pytest.mark.parametrize("k", [2, 3])
def test_ece_census_equals_calibration_curve(k: int) -> None:
    proba, y, _ = _pool(k, m=3000, ties=False)
    m = len(y)
    if k == 2:
        s, z = proba[:, 1], y == 1
    else:
        s, z = proba.max(axis=1), y == proba.argmax(axis=1)
    prob_true, prob_pred = calibration_curve(z, s, n_bins=10, strategy="uniform")
    counts = np.histogram(s, bins=np.linspace(0, 1, 11))[0]
    reference = float(np.sum(counts[counts > 0] / m * np.abs(prob_true - prob_pred)))
    meas = ae.get_measure("ece").bind(ae.Categorical(proba))
    assert meas.value(proba, y, np.full(m, 1 / m)) == pytest.approx(reference, abs=1e-9)


def test_ece_bins_take_an_inner_edge_to_the_lower_bin_as_scikit_learn() -> None:
    # scores exactly on the edge 0.5: calibration_curve puts them in bin [0.4, 0.5]
    proba = np.array([[0.5, 0.5], [0.5, 0.5], [0.45, 0.55], [0.1, 0.9]])
    y = np.array([1, 1, 0, 1])
    prob_true, prob_pred = calibration_curve(y, proba[:, 1], n_bins=10)
    # bins: {0.5, 0.5} -> (4,), {0.55} -> (5,), {0.9} -> (8,): three non-empty
    counts = np.array([2, 1, 1])
    reference = float(np.sum(counts / 4 * np.abs(prob_true - prob_pred)))
    meas = ExpectedCalibrationError().bind(ae.Categorical(proba))
    assert meas.value(proba, y, np.full(4, 0.25)) == pytest.approx(reference, abs=1e-12)


def test_rank_sums_against_loops() -> None:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5, size=40).astype(float)
    w = rng.uniform(size=40)
    at = np.array([-1.0, 0.0, 2.0, 2.5, 4.0, 9.0])
    for a, lo, ge, le in zip(
        at, below(keys, w, at), at_least(keys, w, at), at_most(keys, w, at), strict=True
    ):
        assert lo == pytest.approx(w[keys < a].sum() + 0.5 * w[keys == a].sum())
        assert ge == pytest.approx(w[keys >= a].sum())
        assert le == pytest.approx(w[keys <= a].sum())


# ---------------------------------------------------------------- influence functions
@pytest.mark.parametrize("name", ["brier", "roc_auc", "average_precision"])
def test_influence_equals_the_derivative_along_a_contaminated_pool(name: str) -> None:
    """ψ(x, y_x) = d/dε G((1 − ε)p + ε δ_x) at ε = 0 — the influence function's definition,
    by central differences — for the pool's true labels (beliefs one-hot on them)."""
    proba, y, w = _pool(2, m=400, seed=4)
    p = w / w.sum()
    meas = ae.get_measure(name).bind(ae.Categorical(proba))
    onehot = np.eye(2)[y]
    psi2 = meas.influence_second_moment(onehot, proba, p)
    eps = 1e-6
    for x in np.random.default_rng(5).choice(400, size=25, replace=False):
        d = np.zeros(400)
        d[x] = 1.0
        up = meas.value(proba, y, (1 - eps) * p + eps * d)
        down = meas.value(proba, y, (1 + eps) * p - eps * d)
        fd = (up - down) / (2 * eps)
        assert math.sqrt(psi2[x]) == pytest.approx(abs(fd), rel=1e-4, abs=1e-7)


def test_log_loss_draws_from_the_pool_distribution() -> None:
    proba, _, w = _pool(3, m=300)
    q = optimal_distribution(proba, "log_loss", pool_weights=w)
    np.testing.assert_allclose(q, w / w.sum(), rtol=1e-12)
    costs = np.random.default_rng(0).uniform(1, 4, size=300)
    q = optimal_distribution(proba, "log_loss", pool_weights=w, costs=costs, mix=0.0)
    np.testing.assert_allclose(q, (w / np.sqrt(costs)) / (w / np.sqrt(costs)).sum(), rtol=1e-12)


def test_rank_measures_ignore_the_floor() -> None:
    proba, _, _ = _pool(2, m=300)
    for name in ("roc_auc", "average_precision"):
        a = optimal_distribution(proba, name, floor=0.0)
        b = optimal_distribution(proba, name, floor=0.2)
        np.testing.assert_array_equal(a, b)
    a = optimal_distribution(proba, "brier", floor=0.0)
    b = optimal_distribution(proba, "brier", floor=0.2)
    assert not np.allclose(a, b)


# -------------------------------------------------------------- sample estimators
def test_sample_estimates_are_scikit_learns_with_the_weights() -> None:
    proba, y, _ = _pool(2, m=2000, seed=6)
    q = optimal_distribution(proba, "roc_auc")
    idx = draw(q, 300, random_state=0)
    v = (1 / 2000) / q[idx]
    for name, fn in (
        ("roc_auc", metrics.roc_auc_score),
        ("average_precision", metrics.average_precision_score),
    ):
        est = probability_estimate(name, proba, idx, y[idx], q[idx])
        assert est.estimate == pytest.approx(fn(y[idx] == 1, proba[idx, 1], sample_weight=v))


@pytest.mark.parametrize(
    ("name", "score", "seed", "n", "draw_seed"),
    [
        ("roc_auc", metrics.roc_auc_score, 7, 60, 2),
        ("average_precision", metrics.average_precision_score, 14, 70, 3),
    ],
)
def test_rank_measure_jackknife_equals_leave_one_out_by_scikit_learn(
    name, score, seed: int, n: int, draw_seed: int
) -> None:  # type: ignore[no-untyped-def]
    proba, y, _ = _pool(2, m=2000, seed=seed)
    q = optimal_distribution(proba, name)
    idx = draw(q, n, random_state=draw_seed)
    v = (1 / 2000) / q[idx]
    est = probability_estimate(name, proba, idx, y[idx], q[idx])
    loo = np.array([
        score(np.delete(y[idx], i) == 1, np.delete(proba[idx, 1], i),
              sample_weight=np.delete(v, i))
        for i in range(n)
    ])  # fmt: skip
    jack = math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
    assert est.stderr == pytest.approx(jack, rel=1e-9)


def _monte_carlo(name: str, k: int, estimator: str, n: int = 400, reps: int = 400, **kw):
    proba, y, w = _pool(k, m=2500, seed=8, ties=False)
    p = w / w.sum()
    meas = ae.get_measure(name, **kw).bind(ae.Categorical(proba))
    truth = meas.value(proba, y, p)
    q = optimal_distribution(proba, meas, pool_weights=w)
    assert q.max() / q.min() > 3  # the draws are far from the test distribution
    rng = np.random.default_rng(9)
    est, se, cover = [], [], []
    for _ in range(reps):
        idx = rng.choice(len(y), size=n, p=q)
        e = probability_estimate(meas, proba, idx, y[idx], q[idx], pool_weights=w,
                                 estimator=estimator)  # fmt: skip
        lo, hi = e.ci
        est.append(e.estimate), se.append(e.stderr), cover.append(lo <= truth <= hi)
    return truth, np.array(est), np.array(se), np.array(cover)


@pytest.mark.parametrize(
    ("name", "k", "estimator"),
    [("brier", 2, "snis"), ("brier", 3, "assisted"), ("log_loss", 3, "snis"),
     ("log_loss", 2, "assisted"), ("roc_auc", 2, "assisted"),
     ("average_precision", 2, "assisted"), ("ece", 2, "assisted"), ("ece", 3, "assisted")],
)  # fmt: skip
def test_estimates_center_on_the_truth_and_their_errors_match_the_spread(
    name: str, k: int, estimator: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        truth, est, se, cover = _monte_carlo(name, k, estimator)
    reps = est.shape[0]
    mc_se = est.std(ddof=1) / math.sqrt(reps)
    if name != "ece":  # the ECE's |·| is biased upward by design of the plug-in
        assert abs(est.mean() - truth) < 3 * mc_se + 1e-12, (est.mean(), truth, mc_se)
        # mean reported variance against the spread's: the tolerance is 3 MC standard errors
        # of the sample variance (its fourth moment from the same runs)
        dev2 = (est - est.mean()) ** 2
        tol = 3 * math.sqrt(np.var(dev2, ddof=1) / reps + np.var(se**2, ddof=1) / reps)
        assert abs(np.mean(se**2) - dev2.mean()) < tol, (np.mean(se**2), dev2.mean(), tol)
    # coverage at least nominal up to 3 MC standard errors
    assert cover.mean() >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), cover.mean()


def test_ece_interval_is_conservative_even_for_a_calibrated_model() -> None:
    # a calibrated model: every gap is near 0, where a delta-method interval for |gap| fails
    rng = np.random.default_rng(10)
    p1 = rng.uniform(size=4000)
    proba = np.c_[1 - p1, p1]
    y = (rng.uniform(size=4000) < p1).astype(int)
    meas = ae.get_measure("ece").bind(ae.Categorical(proba))
    truth = meas.value(proba, y, np.full(4000, 1 / 4000))
    hits = 0
    for r in range(200):
        res = ae.evaluate(proba, lambda i: y[i], "ece", budget=300, random_state=r)
        lo, hi = res.ci
        hits += lo <= truth <= hi
    assert hits / 200 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)


# ------------------------------------------------------------------------ campaigns
def test_evaluate_each_measure_and_a_census_when_the_budget_covers_the_pool() -> None:
    proba, y, _ = _pool(2, m=300, seed=11)
    for name in NAMES:
        res = ae.evaluate(proba, lambda i: y[i], name, budget=80, random_state=0)
        assert res.n_labels == 80 and res.measure == name
        assert res.ci[0] <= res.estimate <= res.ci[1]
        full = ae.evaluate(proba, lambda i: y[i], name, budget=300, random_state=0)
        meas = ae.get_measure(name).bind(ae.Categorical(proba))
        assert full.estimate == pytest.approx(meas.value(proba, y, np.full(300, 1 / 300)))
        assert full.ci == (full.estimate, full.estimate)


def test_one_class_measures_name_their_class_beyond_two() -> None:
    proba, y, _ = _pool(3, m=300, seed=12)
    with pytest.raises(LabelSpaceError, match="pos_label"):
        ae.evaluate(proba, lambda i: y[i], "roc_auc", budget=30)
    res = ae.evaluate(proba, lambda i: y[i], "roc_auc", budget=300, pos_label=1,
                      method="passive", random_state=0)  # fmt: skip
    assert res.estimate == pytest.approx(metrics.roc_auc_score(y == 1, proba[:, 1]))
    with pytest.raises(LabelSpaceError, match="pos_label"):
        ae.evaluate(proba, lambda i: y[i], "average_precision", budget=30, pos_label=7)


@pytest.mark.parametrize(
    ("kwargs", "head"),
    [({"prediction": np.zeros(300, dtype=int)}, "prediction"), ({"target_width": 0.05},
     "target_width"), ({"claim": "brier <= 0.2"}, "claim"), ({"batch_size": 20}, "batch_size"),
     ({"features": np.zeros((300, 2))}, "features"), ({"method": "stratified"}, "method"),
     ({"pos_label": 1}, "pos_label")],
)  # fmt: skip
def test_what_a_measure_of_probabilities_does_not_take_is_refused_by_name(
    kwargs: dict, head: str
) -> None:
    proba, y, _ = _pool(2, m=300, seed=13)
    asked = []

    def oracle(i):
        asked.append(i)
        return y[i]

    with pytest.raises(UnknownOptionError) as err:
        ae.evaluate(proba, oracle, "brier", budget=30, **kwargs)
    assert str(err.value).startswith(f"{head}:") and not asked


def test_compare_and_bad_options_are_refused() -> None:
    proba, y, _ = _pool(2, m=300, seed=14)
    with pytest.raises(UnknownOptionError, match=r"^measure: compare does not"):
        ae.compare([proba, proba[:, ::-1]], lambda i: y[i], "roc_auc", budget=30)
    with pytest.raises(UnknownOptionError, match=r"^n_bins"):
        ExpectedCalibrationError(n_bins=0)
    with pytest.raises(ShapeError, match=r"^measure: probability_estimate"):
        probability_estimate("f1", proba, [0], [1])
    with pytest.raises(UnknownOptionError, match=r"^measure"):
        ae.evaluate(ae.Gaussian(np.zeros(300), np.ones(300)), lambda i: y[i], "brier", budget=9)


def test_ece_interval_holds_when_the_weights_follow_the_label_within_a_bin() -> None:
    # one bin (p̂ in (0.11, 0.19)), 15 % positives drawn 5 times less often: Kish's size alone
    # overstated the bin's information (coverage 0.80 at 1,000 draws, the review's case)
    rng = np.random.default_rng(20)
    m = 4000
    p1 = rng.uniform(0.11, 0.19, size=m)
    proba = np.c_[1 - p1, p1]
    y = (rng.uniform(size=m) < 0.15).astype(int)
    q = np.where(y == 1, 0.2, 1.0)
    q /= q.sum()
    meas = ae.get_measure("ece").bind(ae.Categorical(proba))
    truth = meas.value(proba, y, np.full(m, 1 / m))
    hits, reps = 0, 300
    for _ in range(reps):
        idx = rng.choice(m, size=1000, p=q)
        lo, hi = probability_estimate(meas, proba, idx, y[idx], q[idx]).ci
        hits += lo <= truth <= hi
    assert hits / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), hits / reps


def test_average_precision_where_the_top_scores_have_no_test_mass() -> None:
    proba, y, w = _pool(2, m=500, seed=21, ties=False)
    top = np.argsort(proba[:, 1])[::-1]
    w[top[:3]] = 0.0  # the three top-scored instances weigh nothing: R(s) = 0 above them
    meas = ae.get_measure("average_precision").bind(ae.Categorical(proba))
    reference = metrics.average_precision_score(y == 1, proba[:, 1], sample_weight=w)
    assert meas.value(proba, y, w / w.sum()) == pytest.approx(reference, abs=1e-9)
    assert np.all(np.isfinite(meas.influence_second_moment(np.eye(2)[y], proba, w / w.sum())))
    idx = top[:300]  # the 300 top-scored, the three among them
    est = probability_estimate(meas, proba, idx, y[idx], np.full(300, 1 / 500), pool_weights=w)
    assert np.isfinite(est.estimate) and np.isfinite(est.stderr)


def test_the_positive_class_of_two_is_the_larger_label_whatever_the_column_order() -> None:
    rng = np.random.default_rng(22)
    p_yes = rng.uniform(size=400)
    y = np.where(rng.uniform(size=400) < p_yes, "yes", "no")
    proba = np.c_[p_yes, 1 - p_yes]  # columns: "yes", then "no"
    cat = ae.Categorical(proba, labels=np.array(["yes", "no"]))
    res = ae.evaluate(cat, lambda i: y[i], "average_precision", budget=400, method="passive",
                      random_state=0)  # fmt: skip
    assert res.estimate == pytest.approx(metrics.average_precision_score(y == "yes", p_yes))
    assert repr(ae.get_measure("roc_auc").bind(cat)) == "ROCAUC(pos_label='yes')"


def test_an_instance_with_two_labels_is_refused() -> None:
    proba, _, _ = _pool(2, m=50)
    with pytest.raises(ShapeError, match=r"^labels: an instance drawn more than once"):
        probability_estimate("brier", proba, [0, 0, 1], [0, 1, 1])


def test_no_draw_with_test_mass_is_undefined_not_an_error() -> None:
    proba, y, _ = _pool(2, m=100)
    w = np.zeros(100)
    w[90:] = 1.0  # a group of ten instances; the draws below miss it
    with pytest.warns(ae.UndefinedEstimateWarning, match="no draw falls where"):
        est = probability_estimate("brier", proba, np.arange(20), y[:20], pool_weights=w,
                                   q=np.full(20, 0.01))  # fmt: skip
    assert math.isnan(est.estimate) and all(math.isnan(x) for x in est.ci)


# ------------------------------------------------- the tempered interval of ROC AUC and AP
def _overconfident(m: int, sharpness: float, seed: int = 1):
    """True probabilities from logits ~ N(−3, 1.5²), labels drawn from them, and a model whose
    logits are ``sharpness`` times the truth's (overconfident above 1)."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(-3.0, 1.5, size=m)
    y = (rng.uniform(size=m) < 1 / (1 + np.exp(-logit))).astype(int)
    r = 1 / (1 + np.exp(-sharpness * logit))
    return np.column_stack([1 - r, r]), y


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_influence_moments_under_beliefs_equal_derivatives_on_the_doubled_pool(name: str) -> None:
    """The measure under beliefs r is the measure of the pool doubled — each instance once
    with label 1 and mass p·r, once with label 0 and mass p·(1 − r) — and ψ(x, y) the
    derivative along that pool's copy (x, y): G, E[ψ | x] and E[ψ² | x] by central
    differences of scikit-learn's weighted metric there, ties included."""
    proba, _, w = _pool(2, m=300, seed=11)
    p = w / w.sum()
    r = np.clip(proba[:, 1] + np.random.default_rng(12).normal(0, 0.1, 300), 0.01, 0.99)
    meas = ae.get_measure(name).bind(ae.Categorical(proba))
    g, mean, second, var = meas._moments(r, p, Ranks(meas.scores(proba)))
    np.testing.assert_allclose(var, second - mean**2, rtol=1e-9, atol=1e-15)
    fn = metrics.roc_auc_score if name == "roc_auc" else metrics.average_precision_score
    scores = np.concatenate([proba[:, 1], proba[:, 1]])
    labels = np.concatenate([np.ones(300), np.zeros(300)])
    mass = np.concatenate([p * r, p * (1 - r)])
    assert g == pytest.approx(fn(labels, scores, sample_weight=mass), rel=1e-12)
    eps = 1e-6
    for x in np.random.default_rng(13).choice(300, size=15, replace=False):
        psi = []
        for copy in (x, 300 + x):  # (x, 1), then (x, 0)
            d = np.zeros(600)
            d[copy] = 1.0
            up = fn(labels, scores, sample_weight=(1 - eps) * mass + eps * d)
            down = fn(labels, scores, sample_weight=(1 + eps) * mass - eps * d)
            psi.append((up - down) / (2 * eps))
        assert mean[x] == pytest.approx(r[x] * psi[0] + (1 - r[x]) * psi[1], rel=1e-5, abs=1e-8)
        assert second[x] == pytest.approx(r[x] * psi[0] ** 2 + (1 - r[x]) * psi[1] ** 2,
                                          rel=1e-5, abs=1e-10)  # fmt: skip


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_rank_curve_variances_match_monte_carlo_at_the_models_own_member(name: str) -> None:
    """At a = 1, b = 0 (labels drawn from the model itself): V is the variance of the weighted
    sample's measure (scikit-learn's, with weights p/q) around the pool's own value, S the
    variance of the pool's value and G its mean, over pools relabeled and redrawn —
    within 3 Monte-Carlo standard errors of each variance (from the runs' fourth moments)."""
    m, n, reps = 3000, 600, 1000
    rng = np.random.default_rng(0)
    r = 1 / (1 + np.exp(-rng.normal(-2.0, 1.5, size=m)))
    proba = np.column_stack([1 - r, r])
    cat = ae.Categorical(proba)
    meas = ae.get_measure(name).bind(cat)
    p = np.full(m, 1 / m)
    q = 0.5 * optimal_distribution(cat, name) + 0.5 / m
    fn = metrics.roc_auc_score if name == "roc_auc" else metrics.average_precision_score
    slopes, shifts, _ = tempered.rank_members()
    one = int(np.argmin(np.abs(slopes - 1.0) + np.abs(shifts)))
    assert (slopes[one], shifts[one]) == (pytest.approx(1.0), 0.0)
    errors, pools, curve = [], [], None
    for _ in range(reps):
        y = (rng.uniform(size=m) < r).astype(int)
        d = rng.choice(m, size=n, p=q)
        errors.append(fn(y[d], proba[d, 1], sample_weight=p[d] / q[d]) - meas.value(proba, y, p))
        pools.append(meas.value(proba, y, p))
        if curve is None:
            curve = tempered.rank_curve(meas, cat, q, p, d, y[d], cut_level=1.0)
    assert curve is not None and curve.values.shape == slopes.shape
    pools_sd = np.std(pools, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(pools) - curve.values[one]) < 3 * pools_sd, (np.mean(pools), pools_sd)
    for predicted, dev2 in (
        (curve.variances[one], (np.array(errors) - np.mean(errors)) ** 2),
        (curve.spreads[one], (np.array(pools) - np.mean(pools)) ** 2),
    ):
        tol = 3 * dev2.std(ddof=1) / math.sqrt(reps)
        assert abs(dev2.mean() - predicted) < tol, (dev2.mean(), predicted, tol)


def test_rank_curve_likelihood_is_the_labeled_instances_own() -> None:
    """The members σ(a·logit r + b) are judged by the Bernoulli log-likelihood of positive or
    not, summed over the distinct labeled instances with test mass, each once however often
    drawn; with a cut, only the members inside the χ²₂ likelihood-ratio set are kept."""
    proba, y = _overconfident(2000, 3.0)
    cat = ae.Categorical(proba)
    meas = ae.get_measure("roc_auc").bind(cat)
    p = np.zeros(2000)
    p[:1500] = 1 / 1500  # a group: the last 500 instances carry no test mass
    q = np.full(2000, 1 / 2000)
    d = np.random.default_rng(4).choice(2000, size=400, p=q)
    curve = tempered.rank_curve(meas, cat, q, p, d, y[d], cut_level=1.0)
    assert curve is not None
    assert curve.parameters is not None and list(np.unique(curve.parameters)) == [1, 2]
    units = np.unique(d)
    units = units[units < 1500]
    slopes, shifts, families = tempered.rank_members()
    logit = np.log(proba[units, 1] / proba[units, 0])
    for j in (0, 100, 350, 696, 697, 717, 737):  # Platt members, then tempered ones
        t = slopes[j] * logit + shifts[j]
        want = np.where(y[units] == 1, special.log_expit(t), special.log_expit(-t)).sum()
        assert curve.loglik[j] == pytest.approx(want, rel=1e-10)
    assert np.all(families[697:] == 1) and np.all(shifts[697:] == 0.0)
    np.testing.assert_allclose(slopes[697:], tempered.GRID)
    # With the cut: each family's members within its χ² quantile at 0.999 of its best.
    cut = tempered.rank_curve(meas, cat, q, p, d, y[d])
    assert cut is not None
    two, one = families == 2, families == 1
    np.testing.assert_array_equal(shifts[one], 0.0)
    np.testing.assert_array_equal(curve.loglik[one], curve.loglik[two][shifts[two] == 0.0])
    inside = np.where(
        two,
        curve.loglik >= curve.loglik[two].max() - 0.5 * 13.815510557964274,  # χ²₂(0.999)
        curve.loglik >= curve.loglik[one].max() - 0.5 * 10.827566170662733,  # χ²₁(0.999)
    )
    np.testing.assert_array_equal(cut.loglik, curve.loglik[inside])
    np.testing.assert_array_equal(cut.values, curve.values[inside])
    np.testing.assert_array_equal(cut.parameters, families[inside])


def test_rank_curve_of_one_class_against_the_rest_judges_that_class_only() -> None:
    """With three classes and ``pos_label``, the members are judged by positive or not:
    relabeling the draws among the other classes leaves the curve as it was."""
    proba, y, _ = _pool(3, m=1500, seed=15, ties=False)
    cat = ae.Categorical(proba)
    meas = ae.get_measure("roc_auc", pos_label=2).bind(cat)
    p, q = np.full(1500, 1 / 1500), np.full(1500, 1 / 1500)
    d = np.random.default_rng(16).choice(1500, size=300)
    swapped = np.where(y == 0, 1, np.where(y == 1, 0, 2))
    a = tempered.rank_curve(meas, cat, q, p, d, y[d], cut_level=1.0)
    b = tempered.rank_curve(meas, cat, q, p, d, swapped[d], cut_level=1.0)
    assert a is not None and b is not None
    np.testing.assert_array_equal(a.loglik, b.loglik)
    units = np.unique(d)
    t = np.log(proba[units, 2] / (1 - proba[units, 2]))  # a = 1, b = 0: the model itself
    slopes, shifts, _ = tempered.rank_members()
    one = int(np.argmin(np.abs(slopes - 1.0) + np.abs(shifts)))
    want = np.where(y[units] == 2, special.log_expit(t), special.log_expit(-t)).sum()
    assert a.loglik[one] == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_expected_value_is_the_ratio_of_expected_sums_by_enumeration(name: str) -> None:
    """Over all 2^9 labelings of a pool of nine (tied scores, uneven masses), each label
    positive with probability r: E[numerator] / E[denominator] of the measure, both by
    loops over the instances — AP's Σ p y TP/R over π₁, ROC AUC's pairs over π₁π₀."""
    rng = np.random.default_rng(17)
    s = np.round(rng.uniform(size=9), 1)
    r = rng.uniform(0.05, 0.95, size=9)
    p = rng.uniform(0.5, 2.0, size=9)
    p /= p.sum()
    proba = np.column_stack([1 - s, s])
    meas = ae.get_measure(name).bind(ae.Categorical(proba))
    num = den = 0.0
    for bits in range(2**9):
        y = np.array([(bits >> i) & 1 for i in range(9)])
        prob = float(np.prod(np.where(y == 1, r, 1 - r)))
        if name == "roc_auc":
            pairs = sum(
                p[i] * p[j] * (1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0)
                for i in range(9)
                for j in range(9)
                if y[i] == 1 and y[j] == 0
            )
            num += prob * pairs
            den += prob * float(p @ y) * float(p @ (1 - y))
        else:
            terms = sum(
                p[i]
                * sum(p[j] for j in range(9) if y[j] and s[j] >= s[i])
                / sum(p[j] for j in range(9) if s[j] >= s[i])
                for i in range(9)
                if y[i]
            )
            num += prob * terms
            den += prob * float(p @ y)
    got = meas._expected_value(r, p, Ranks(meas.scores(proba)))
    assert got == pytest.approx(num / den, rel=1e-12)
    # A row standing for three instances (``own``: one instance's mass) is the pool with
    # every instance three times, scores tied: the self-pairs are one instance's.
    three = np.repeat(np.arange(9), 3)
    meas3 = ae.get_measure(name).bind(ae.Categorical(proba[three]))
    whole = meas3._expected_value(r[three], p[three] / 3, Ranks(meas3.scores(proba[three])))
    rows = meas._expected_value(r, p, Ranks(meas.scores(proba)), own=p / 3)
    assert rows == pytest.approx(whole, rel=1e-12)
    assert abs(rows - got) > 1e-3  # the self-pairs matter here


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_an_overconfident_models_default_interval_covers_where_the_logit_one_does_not(
    name: str,
) -> None:
    """A model with logits five times the truth's, draws from its q* in one stage (ROC AUC's
    default re-plans after a first stage, which here makes the logit interval honest too):
    the default (tempered) interval covers the pool's value at least at 0.95 − 3 MC s.e.
    over 150 seeded campaigns, the logit interval alone (the estimate's own standard error)
    below that."""
    proba, y = _overconfident(3000, 5.0)
    cat = ae.Categorical(proba)
    truth = ae.get_measure(name).bind(cat).value(proba, y, np.full(3000, 1 / 3000))
    q = optimal_distribution(cat, name)
    reps, hits, logit_hits = 150, [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ae.UndefinedEstimateWarning)
        for seed in range(reps):
            res = ae.evaluate(cat, lambda i: y[i], name, budget=300, q=q, random_state=seed)
            assert res.interval == "tempered"
            lo, hi = res.ci
            lo2, hi2 = res.confidence_interval(method="logit")
            hits.append(lo <= truth <= hi)
            logit_hits.append(lo2 <= truth <= hi2)
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert np.mean(hits) >= floor > np.mean(logit_hits), (np.mean(hits), np.mean(logit_hits))


def test_measures_of_probabilities_are_found_by_name_after_a_plain_import() -> None:
    """``ae.get_measure`` finds them in a fresh interpreter; the measures module's own
    function, before their module is imported, says where they are instead of listing the
    other names."""
    code = (
        "import activeeval.measures as m\n"
        "try:\n    m.get_measure('roc_auc')\nexcept m.UnknownOptionError as e:\n"
        "    print(str(e).split(';')[0])\n"
        "import activeeval as ae; print(ae.get_measure('average_precision').name)\n"
        "print(ae.get_measure is m.get_measure)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout.splitlines() == [
        "measure: 'roc_auc' is a measure of probabilities, registered when "
        "activeeval.probability_measures is imported",
        "average_precision",
        "True",
    ]


def test_rank_curve_on_a_subsample_of_a_large_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``MAX_POOL`` the sums run over a fixed uniform subsample of k, weighted m/k:
    V and S are those sums (S with the subsample's own sampling variance of G,
    (1 − k/m)/k times the mean square of m·p·E[ψ | x] over it), and each member's value is
    within 3 such standard deviations of the whole pool's — for average precision plus the
    self-terms the coarser ranks drop (Σ p²r(1 − r)/(R π₁) is a harmonic sum over the
    ranks, ln m over the pool, ln k over the subsample: at most ln(m/k)·max r(1 − r)/(m π₁))."""
    m, k = 6000, 2000
    proba, y = _overconfident(m, 2.0)
    cat = ae.Categorical(proba)
    p, q = np.full(m, 1 / m), np.random.default_rng(6).uniform(0.5, 1.5, size=m)
    q /= q.sum()
    d = np.random.default_rng(5).choice(m, size=300, p=q)
    slopes, shifts, _ = tempered.rank_members()
    logit = np.log(proba[:, 1] / proba[:, 0])
    for name in ("roc_auc", "average_precision"):
        meas = ae.get_measure(name).bind(cat)
        full = tempered.rank_curve(meas, cat, q, p, d, y[d], cut_level=1.0)
        monkeypatch.setattr(tempered, "MAX_POOL", k)
        part = tempered.rank_curve(meas, cat, q, p, d, y[d], cut_level=1.0)
        keep = tempered.subsample(m)
        monkeypatch.undo()
        assert full is not None and part is not None and keep.shape == (k,)
        assert full.values.shape == part.values.shape == slopes.shape
        np.testing.assert_array_equal(part.loglik, full.loglik)
        ranks, ranks_k = Ranks(meas.scores(proba)), Ranks(meas.scores(proba[keep]))
        for j in range(0, slopes.shape[0], 37):
            member = 1 / (1 + np.exp(-(slopes[j] * logit + shifts[j])))
            _, mu, _, _ = meas._moments(member, p, ranks)
            g = meas._expected_value(member, p, ranks)
            assert full.values[j] == pytest.approx(g, rel=1e-12)
            sd = math.sqrt((1 - k / m) / k * np.mean((m * p * mu) ** 2))
            drop = 0.0
            if name == "average_precision":
                drop = math.log(m / k) * np.max(member * (1 - member)) / (m * (p @ member))
            assert abs(part.values[j] - g) <= 3 * sd + drop, (j, part.values[j], g, sd, drop)
            pk = p[keep] * m / k
            _, mu_k, second_k, var_k = meas._moments(member[keep], pk, ranks_k)
            v = float((pk * p[keep] / q[keep]) @ second_k) / 300
            s = float((pk * p[keep]) @ var_k) + (1 - k / m) / k * np.mean((m * p[keep] * mu_k) ** 2)
            assert part.variances[j] == pytest.approx(v, rel=1e-9)
            assert part.spreads[j] == pytest.approx(s, rel=1e-9)


def test_score_curve_of_several_families_judges_each_by_its_own_best() -> None:
    """With ``parameters``, each family's plausible members are those within its χ² quantile
    (its parameters the degrees of freedom) of its own best; members are not interpolated."""
    from activeeval.estimators.inference import ScoreCurve

    curve = ScoreCurve(
        values=np.array([0.10, 0.20, 0.30, 0.40, 0.50]),
        variances=np.full(5, 1e-4),
        spreads=np.full(5, 1e-4),
        loglik=np.array([-10.0, -12.5, -13.5, -20.0, -21.5]),
        parameters=np.array([2, 2, 2, 1, 1]),
    )
    # χ²₂(0.95)/2 = 2.996 below −10; χ²₁(0.95)/2 = 1.921 below −20
    assert curve.plausible(0.95).tolist() == [True, True, False, True, True]
    low, high = curve.bounds(0.25, 0.95)
    # only the plausible members' values ± z·0.01 around the estimate 0.25 count: none
    # reaches 0.25 ± 0.0196 except through the Platt member at 0.20 (its band ends 0.2196)
    assert math.isnan(low) and math.isnan(high)
    low, high = curve.bounds(0.21, 0.95)
    assert (low, high) == (pytest.approx(0.21 - 1.959964 * 0.01), pytest.approx(0.2196, abs=1e-4))


def _member_proba(proba, slope: float, shift: float):
    """A member of ``loss_curve``'s families by its definition: for two classes the Platt
    recalibration σ(a·logit r + b) of the second class, for more the top-label one
    p^a·e^{b·1[k = top]} normalized (both with probabilities capped at 1e-12)."""
    logp = np.log(np.clip(proba, tempered.RANK_CLIP, 1.0))
    if proba.shape[1] == 2:
        t = slope * (logp[:, 1] - np.log(np.clip(proba[:, 0], tempered.RANK_CLIP, 1.0))) + shift
        return np.column_stack([special.expit(-t), special.expit(t)])
    z = slope * logp
    z[np.arange(proba.shape[0]), proba.argmax(axis=1)] += shift
    return special.softmax(z, axis=1)


@pytest.mark.parametrize(
    ("name", "k", "estimator"),
    [("brier", 2, "assisted"), ("log_loss", 2, "assisted"), ("log_loss", 2, "snis"),
     ("brier", 4, "assisted"), ("log_loss", 4, "snis")],
)  # fmt: skip
def test_loss_curve_matches_monte_carlo_at_a_member_that_is_not_the_model(
    name: str, k: int, estimator: str
) -> None:
    """Labels drawn from a member other than the model (slope ≈ 1.82, shift −1 for two
    classes; slope ≈ 0.54, shift +1 for four): G is the mean of the pool's value, S its
    variance, V the mean square of the estimate (scikit-learn's metric on the draws with
    weights p/q, or the model-assisted one of ``probability_estimate``) around the pool's
    value, over pools relabeled and redrawn, each within 3 Monte-Carlo standard errors."""
    m, n, reps = 2000, 300, 1000
    rng = np.random.default_rng(20 + k)
    logits = rng.normal(0.0, 2.0, size=(m, k))
    logits[:, -1] -= 2.0  # a rarer last class
    proba = special.softmax(logits, axis=1)
    cat = ae.Categorical(proba)
    meas = ae.get_measure(name).bind(cat)
    p = rng.uniform(0.5, 2.0, size=m)
    p /= p.sum()
    q = 0.5 * optimal_distribution(cat, "brier") + 0.5 * p
    slopes, shifts, _ = tempered.rank_members()
    j = 24 * 17 + 6 if k == 2 else 14 * 17 + 10
    truth = _member_proba(proba, slopes[j], shifts[j])
    cum = truth.cumsum(axis=1)
    errors, pools, curve = [], [], None
    for _ in range(reps):
        y = (rng.uniform(size=m)[:, None] > cum[:, :-1]).sum(axis=1)
        d = rng.choice(m, size=n, p=q)
        pool = meas.value(proba, y, p)
        if estimator == "snis":
            est = _sklearn(name, proba[d], y[d], p[d] / q[d], 1)
        else:
            est = probability_estimate(name, cat, d, y[d], q[d], pool_weights=p).estimate
        errors.append(est - pool)
        pools.append(pool)
        if curve is None:
            curve = tempered.loss_curve(meas, cat, q, p, d, y[d], estimator == "assisted",
                                        cut_level=1.0)  # fmt: skip
    assert curve is not None and curve.values.shape == slopes.shape
    pools_se = np.std(pools, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(pools) - curve.values[j]) < 3 * pools_se, (np.mean(pools), pools_se)
    mu = np.einsum("ik,ik->i", truth, meas.loss_matrix(proba))
    assert curve.values[j] == pytest.approx(float(p @ mu), rel=1e-12)
    for predicted, dev2 in (
        (curve.variances[j], np.array(errors) ** 2),
        (curve.spreads[j], (np.array(pools) - np.mean(pools)) ** 2),
    ):
        tol = 3 * dev2.std(ddof=1) / math.sqrt(reps)
        assert abs(dev2.mean() - predicted) < tol, (dev2.mean(), predicted, tol)


def test_loss_curve_likelihood_by_hand_and_the_cut() -> None:
    """Four classes: each member's log-likelihood is Σ log p_member(y | x) over the distinct
    labeled instances with test mass (the top-label family by its definition); two classes:
    the Platt family's, as the rank measures'. The cut keeps each family's members within
    its χ² quantile at 0.999."""
    for k in (4, 2):
        proba, y, _ = _pool(k, m=1200, seed=30 + k, ties=False)
        cat = ae.Categorical(proba)
        meas = ae.get_measure("log_loss").bind(cat)
        p = np.zeros(1200)
        p[:900] = 1 / 900  # a group: the last 300 instances carry no test mass
        q = np.full(1200, 1 / 1200)
        d = np.random.default_rng(k).choice(1200, size=250)
        curve = tempered.loss_curve(meas, cat, q, p, d, y[d], True, cut_level=1.0)
        assert curve is not None
        units = np.unique(d)
        units = units[units < 900]
        slopes, shifts, families = tempered.rank_members()
        for j in (0, 100, 350, 696, 697, 717, 737):
            member = _member_proba(proba[units], slopes[j], shifts[j])
            want = np.log(member[np.arange(units.shape[0]), y[units]]).sum()
            assert curve.loglik[j] == pytest.approx(want, rel=1e-10), (k, j)
        cut = tempered.loss_curve(meas, cat, q, p, d, y[d], True)
        assert cut is not None
        inside = np.where(
            families == 2,
            curve.loglik >= curve.loglik[families == 2].max() - 0.5 * 13.815510557964274,
            curve.loglik >= curve.loglik[families == 1].max() - 0.5 * 10.827566170662733,
        )
        np.testing.assert_array_equal(cut.values, curve.values[inside])
        np.testing.assert_array_equal(cut.variances, curve.variances[inside])


@pytest.mark.parametrize("name", ["brier", "log_loss"])
def test_an_overconfident_models_scoring_rule_interval_covers_where_wald_does_not(
    name: str,
) -> None:
    """A model with logits three times the truth's, 50 labels: the default (tempered)
    interval covers the pool's value at least at 0.95 − 3 MC s.e. over 200 seeded
    campaigns, the Wald interval alone below that; the Wald interval is the one the default
    joins (``base``)."""
    proba, y = _overconfident(3000, 3.0)
    cat = ae.Categorical(proba)
    truth = ae.get_measure(name).bind(cat).value(proba, y, np.full(3000, 1 / 3000))
    reps, hits, wald_hits = 200, [], []
    for seed in range(reps):
        res = ae.evaluate(cat, lambda i: y[i], name, budget=50, random_state=seed)
        assert res.interval == "tempered" and res.inference.base == "wald"
        lo, hi = res.ci
        lo2, hi2 = res.confidence_interval(method="wald")
        assert lo <= lo2 and hi2 <= hi
        hits.append(lo <= truth <= hi)
        wald_hits.append(lo2 <= truth <= hi2)
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert np.mean(hits) >= floor > np.mean(wald_hits), (np.mean(hits), np.mean(wald_hits))


def _loss_members_by_hand(meas, proba, q, p, n: int, assisted: bool, rows=None):
    """G, V and S of every ``loss_curve`` member by the formulas of the Intervals page,
    computed apart from the library: each member's label distribution by its definition,
    λ by weighted least squares (``lstsq`` on rows scaled by √(p²/q)) clipped to [0, 1];
    ``rows`` a subsample whose sums are scaled up to the pool."""
    m = p.shape[0]
    rows = np.arange(m) if rows is None else rows
    scale = m / rows.shape[0]
    pr, qr, proba_r = p[rows] * scale, q[rows], proba[rows]
    loss = meas.loss_matrix(proba_r)
    e = (proba_r * loss).sum(axis=1)
    e_bar = float(pr @ e)
    w = pr * p[rows] / qr
    slopes, shifts, _ = tempered.rank_members()
    out = []
    for a, b in zip(slopes, shifts, strict=True):
        member = _member_proba(proba_r, a, b)
        mu = (member * loss).sum(axis=1)
        var = (member * loss**2).sum(axis=1) - mu**2
        g = float(pr @ mu)
        lam = 0.0
        if assisted:
            root = np.sqrt(w)
            fit = np.linalg.lstsq((root * (e - e_bar))[:, None], root * (mu - g), rcond=None)
            lam = float(np.clip(fit[0][0], 0.0, 1.0))
        v = float(w @ (var + (mu - g - lam * (e - e_bar)) ** 2)) / n
        s = float((pr * p[rows]) @ var)
        out.append((g, v, s))
    return np.array(out)


@pytest.mark.parametrize(("k", "assisted"), [(2, True), (2, False), (4, True)])
def test_loss_curve_values_and_variances_equal_the_formulas(k: int, assisted: bool) -> None:
    """Every member's G, V and S equal the Intervals page's formulas computed apart (λ by
    least squares), to 1e-9 — for the Brier score and the log loss, uneven p and q."""
    proba, y, w = _pool(k, m=800, seed=40 + k, ties=False)
    p = w / w.sum()
    q = np.random.default_rng(41).uniform(0.2, 3.0, size=800) * p
    q /= q.sum()
    d = np.random.default_rng(42).choice(800, size=120, p=q)
    cat = ae.Categorical(proba)
    for name in ("brier", "log_loss"):
        meas = ae.get_measure(name).bind(cat)
        curve = tempered.loss_curve(meas, cat, q, p, d, y[d], assisted, cut_level=1.0)
        assert curve is not None
        want = _loss_members_by_hand(meas, proba, q, p, 120, assisted)
        np.testing.assert_allclose(curve.values, want[:, 0], rtol=1e-9)
        np.testing.assert_allclose(curve.variances, want[:, 1], rtol=1e-9)
        np.testing.assert_allclose(curve.spreads, want[:, 2], rtol=1e-9)


def test_loss_curve_on_a_subsample_of_a_large_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``MAX_POOL`` the sums run over the fixed subsample, weighted m/k: V is the
    formula there, S too plus the subsample's sampling variance of G, (1 − k/m)/k times the
    mean square of m·p·μ − G; each member's G is within 3 of those standard deviations of
    the whole pool's, and the likelihoods (the labels') are unchanged."""
    m, k = 6000, 1500
    proba, y = _overconfident(m, 2.0)
    cat = ae.Categorical(proba)
    p = np.full(m, 1 / m)
    q = np.random.default_rng(7).uniform(0.5, 1.5, size=m)
    q /= q.sum()
    d = np.random.default_rng(8).choice(m, size=300, p=q)
    meas = ae.get_measure("log_loss").bind(cat)
    full = tempered.loss_curve(meas, cat, q, p, d, y[d], True, cut_level=1.0)
    monkeypatch.setattr(tempered, "MAX_POOL", k)
    part = tempered.loss_curve(meas, cat, q, p, d, y[d], True, cut_level=1.0)
    keep = tempered.subsample(m)
    monkeypatch.undo()
    assert full is not None and part is not None and keep.shape == (k,)
    np.testing.assert_array_equal(part.loglik, full.loglik)
    want = _loss_members_by_hand(meas, proba, q, p, 300, True, rows=keep)
    np.testing.assert_allclose(part.values, want[:, 0], rtol=1e-9)
    np.testing.assert_allclose(part.variances, want[:, 1], rtol=1e-9)
    slopes, shifts, _ = tempered.rank_members()
    loss = meas.loss_matrix(proba[keep])
    for j in range(0, slopes.shape[0], 23):
        mu = (_member_proba(proba[keep], slopes[j], shifts[j]) * loss).sum(axis=1)
        extra = (1 - k / m) / k * np.mean((m * p[keep] * mu - want[j, 0]) ** 2)
        assert part.spreads[j] == pytest.approx(want[j, 2] + extra, rel=1e-9)
        assert abs(part.values[j] - full.values[j]) <= 3 * math.sqrt(extra), j


def _platt_fit_by_hand(proba, units, y, statistic: bool = False):
    """The Platt grid member with the largest log-likelihood of the labels of ``units``, and
    whether the labels reject the model (a = 1, b = 0) by the χ²₂ likelihood-ratio test at
    0.95 (with ``statistic``: the log-likelihood ratio itself) — by loops over the grid."""
    slopes, shifts, families = tempered.rank_members()
    logit = np.log(proba[units, 1] / proba[units, 0])
    best, best_ll = None, -np.inf
    for a, b, fam in zip(slopes, shifts, families, strict=True):
        if fam != 2:
            continue
        t = a * logit + b
        ll = np.where(y[units] == 1, special.log_expit(t), special.log_expit(-t)).sum()
        if ll > best_ll:
            best, best_ll = (a, b), ll
    own = np.where(y[units] == 1, special.log_expit(logit), special.log_expit(-logit)).sum()
    if statistic:
        return best, best_ll - own
    return best, best_ll - own > 5.991464547107979 / 2  # χ²₂(0.95) / 2


def _with_carried(first, q, budget: float, seed: int, y):  # type: ignore[no-untyped-def]
    """``first`` (a first stage of ``budget`` labels drawn from ``q`` by a generator seeded
    ``seed``, in one chunk of draws) with the draw that ended it appended — the first draw of
    its chunk it did not keep, which the second stage buys first — and that draw's cost (1: a
    new instance). The written second stage's budget is then one label less than the real
    one's, so its chunk of draws is two shorter: the two agree draw for draw while the
    second stage fits one chunk (uniforms are drawn in order, a prefix of the longer)."""
    from activeeval.sampling import Sampler

    size = int(max(2 * budget, 64))  # _Acquisition's chunk without costs
    chunk, _ = Sampler(q).draw(size, np.random.default_rng(seed))
    k = first.indices.shape[0]
    np.testing.assert_array_equal(chunk[:k], first.indices)  # one chunk: the case it is
    c = int(chunk[k])
    assert c not in set(first.indices.tolist())  # the walk stops at a new instance only
    return replace(first, indices=np.append(first.indices, c),
                   labels=np.append(first.labels, y[c])), 1.0  # fmt: skip


def test_roc_auc_default_draws_in_two_stages_as_written() -> None:
    """ROC AUC's default is, draw for draw, a quarter of the budget from the model's q*, then
    the rest from q* under the Platt member the first labels fit best (they reject this
    overconfident model), reusing the first stage's labels — the same campaign written with
    ``q=`` and ``reuse=`` and one random generator, the draw that ended the first stage
    bought first in the second (``_with_carried``): the same draws, estimate, mixture q and
    cost. The member's q* is the q* of its own probabilities (a monotone map of the model's:
    the same ranks)."""
    proba, y = _overconfident(3000, 3.0)
    cat = ae.Categorical(proba)
    res = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=400,
                      random_state=np.random.default_rng(11))  # fmt: skip
    gen = np.random.default_rng(11)
    first = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=100,
                        q=optimal_distribution(cat, "roc_auc"), random_state=gen)  # fmt: skip
    (a, b), rejected = _platt_fit_by_hand(proba, np.unique(first.indices), y)
    assert rejected and a < 1.0
    member = special.expit(a * np.log(proba[:, 1] / proba[:, 0]) + b)
    q2 = optimal_distribution(ae.Categorical(np.column_stack([1 - member, member])), "roc_auc")
    carried, cost = _with_carried(first, optimal_distribution(cat, "roc_auc"), 100, 11, y)
    rest = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=400 - first.cost - cost, q=q2,
                       reuse=carried, random_state=gen)  # fmt: skip
    np.testing.assert_array_equal(res.indices, rest.indices)
    np.testing.assert_allclose(res.pool_q, rest.pool_q, rtol=1e-12)
    assert res.estimate == pytest.approx(rest.estimate, rel=1e-12)
    assert res.cost == first.cost + cost + rest.cost == 400


def test_roc_auc_keeps_the_models_q_where_the_labels_do_not_reject_it() -> None:
    """Labels drawn from the model itself: the first stage's labels do not reject it, so the
    second stage draws from the same q* — the campaign written as a quarter of the budget from
    q* and the rest from q* reusing it (and the draw that ended it), one generator, draw for
    draw (budgets 400 and 40, the
    least with two stages); at 39 labels one stage, the campaign of q* alone."""
    rng = np.random.default_rng(12)
    r = special.expit(rng.normal(-2.0, 1.5, size=3000))
    y = (rng.uniform(size=3000) < r).astype(int)
    cat = ae.Categorical(np.column_stack([1 - r, r]))
    q = optimal_distribution(cat, "roc_auc")
    for budget in (400, 40):
        res = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=budget,
                          random_state=np.random.default_rng(3))  # fmt: skip
        gen = np.random.default_rng(3)
        first = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=budget // 4, q=q,
                            random_state=gen)  # fmt: skip
        assert not _platt_fit_by_hand(cat.proba, np.unique(first.indices), y)[1]
        carried, cost = _with_carried(first, q, budget // 4, 3, y)
        rest = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=budget - first.cost - cost,
                           q=q, reuse=carried, random_state=gen)  # fmt: skip
        np.testing.assert_array_equal(res.indices, rest.indices)
        assert res.estimate == pytest.approx(rest.estimate, rel=1e-12)  # q̄ summed otherwise
    small = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=39, random_state=3)
    same = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=39, q=q, random_state=3)
    np.testing.assert_array_equal(small.indices, same.indices)
    assert small.estimate == same.estimate


def _settings():
    """A campaign's default settings (budget 100), as ``evaluate`` passes them."""
    from activeeval.campaign.steps import CampaignSettings
    from activeeval.methods import DEFAULT_MIX

    return CampaignSettings(budget=100, method="active", costs=None, level=0.95,
                            random_state=0, pool_weights=None, mix=DEFAULT_MIX,
                            estimator="assisted", max_draws=None, progress=False)  # fmt: skip


def test_the_recalibration_test_is_chi2_with_two_degrees_at_its_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The re-plan happens exactly when 2·(best Platt log-likelihood − the model's) exceeds
    the χ²₂ quantile at ``RECALIBRATION_LEVEL``: levels just below and above the statistic's
    own χ²₂ probability flip the decision; first labels of one class never re-plan."""
    from activeeval.campaign import probability as campaign

    proba, y = _overconfident(2000, 1.6, seed=5)
    cat = ae.Categorical(proba)
    meas = ae.get_measure("roc_auc").bind(cat)
    run = campaign._Run.checked(_settings(), 2000, lambda i: y[i])
    q = optimal_distribution(cat, "roc_auc")
    d = np.random.default_rng(6).choice(2000, size=60, p=q)
    _, stat = _platt_fit_by_hand(proba, np.unique(d), y, statistic=True)
    at = float(special.chdtr(2, 2 * stat))  # the statistic's χ²₂ probability
    assert 0.2 < at < 0.999, at  # an informative case: neither level is extreme
    for level, replans in ((at - 0.01, True), (at + 0.01, False)):
        monkeypatch.setattr(campaign, "RECALIBRATION_LEVEL", level)
        got = campaign.recalibrated_distribution(meas, cat, run, d, y[d], q)
        assert (got is not None) == replans, (level, at)
    monkeypatch.setattr(campaign, "RECALIBRATION_LEVEL", 1e-6)  # would re-plan on anything
    negatives = d[y[d] == 0]
    assert campaign.recalibrated_distribution(meas, cat, run, negatives, y[negatives], q) is None


def test_a_two_stage_campaign_keeps_one_draw_cap_and_warns_once() -> None:
    """``max_draws`` caps both stages together, and one warning gives the campaign's cap,
    spending and budget (a cap reached in the first stage ends the campaign)."""
    proba, y = _overconfident(600, 4.0)
    cat = ae.Categorical(proba)
    for cap in (30, 60):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=200, max_draws=cap,
                              random_state=0)  # fmt: skip
        assert res.n_draws == cap
        assert [str(w.message).split(" (")[0] for w in caught] == [
            f"max_draws: the campaign reached its cap of {cap} draws with {res.cost:g} of the "
            "budget 200 spent"
        ]
        assert caught[0].filename == __file__


def test_a_two_stage_campaign_shows_one_progress_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """One progress bar for the two stages, of the whole budget, advanced by every label
    bought (a bar per stage restarted at the second); one stage (39 labels) opens one too."""
    from activeeval.campaign import steps

    bars: list[Any] = []

    class Bar:
        def __init__(self, total: float, **_: Any) -> None:
            self.total, self.n = total, 0.0
            bars.append(self)

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: Any) -> None:
            return None

        def update(self, k: float) -> None:
            self.n += k

    monkeypatch.setattr(steps, "tqdm", Bar)
    proba, y = _overconfident(3000, 3.0)
    for budget in (400, 39):
        bars.clear()
        res = ae.evaluate(ae.Categorical(proba), lambda i: y[i], "roc_auc", budget=budget,
                          random_state=0)  # fmt: skip
        assert [(b.total, b.n) for b in bars] == [(budget, res.n_labels)]


def test_roc_auc_second_stage_buys_the_draw_that_ended_the_first() -> None:
    """With costs the first stage ends at the first draw its budget cannot pay; that draw is
    the second stage's first, not dropped (its weight in the mixture: the draw-for-draw
    tests above, with ``_with_carried``) — dropping it
    turns away the expensive draws at the stage boundary. Its cost exceeds what the first
    stage had left, so the case is the one the rule is for."""
    from activeeval.sampling import Sampler

    rng = np.random.default_rng(21)
    r = special.expit(rng.normal(-2.0, 1.5, size=2000))
    y = (rng.uniform(size=2000) < r).astype(int)
    costs = rng.choice([1.0, 5.0], size=2000)
    cat = ae.Categorical(np.column_stack([1 - r, r]))
    q = optimal_distribution(cat, "roc_auc", costs=costs)
    res = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=600, costs=costs, random_state=4)
    first = ae.evaluate(cat, lambda i: y[i], "roc_auc", budget=150, costs=costs, q=q,
                        random_state=4)  # fmt: skip
    k = first.indices.shape[0]
    chunk, _ = Sampler(q).draw(4096, np.random.default_rng(4))  # _Acquisition's with costs
    np.testing.assert_array_equal(res.indices[:k], first.indices)
    assert res.indices[k] == chunk[k]
    assert costs[chunk[k]] > 150 - first.cost  # the draw the first stage could not pay
    assert res.cost <= 600
