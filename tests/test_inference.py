"""Acceptance tests of activeeval.estimators.inference: estimates, intervals and tests.

Every expected value is computed independently of the code under test: scikit-learn metrics,
statsmodels / scipy reference implementations, or a brute-force delta-method computation written
out here as in the proof of Lemma 3.4 (thesis Ch. 3). Monte-Carlo checks use seeded generators
and state their Monte-Carlo standard error.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn import metrics
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint as sm_proportion_confint

import activeeval as ae
from activeeval.estimators.inference import holm_adjust

# ----------------------------------------------------------------------------- helpers


def _noisy_copy(rng: np.random.Generator, y: np.ndarray, labels, accuracy: float) -> np.ndarray:
    """Predictions equal to ``y`` with probability ``accuracy``, else a random label."""
    other = rng.choice(np.asarray(labels), size=y.shape[0])
    return np.where(rng.random(y.shape[0]) < accuracy, y, other)


def _eta(beta: float) -> float:
    return 1.0 / (1.0 + beta**2)  # thesis F_η with η = 1 / (1 + β²); β = inf gives η = 0


def _f_parts(pred, y, beta: float, pos) -> tuple[np.ndarray, np.ndarray]:
    """Cor. 3.1 on one-vs-rest labels: w = η·f + (1 − η)·y and ℓ = 1 − ℓ_0/1."""
    f = (np.asarray(pred) == pos).astype(float)
    t = (np.asarray(y) == pos).astype(float)
    eta = _eta(beta)
    return eta * f + (1.0 - eta) * t, 1.0 - (f != t).astype(float)


def _delta_method(v: np.ndarray, w: np.ndarray, loss: np.ndarray) -> tuple[float, float]:
    """Ĝ and Var[Ĝ] by the multivariate delta method on (mean of v·w·ℓ, mean of v·w).

    Proof of Lemma 3.4: g(x, y) = x / y, ∇g = (1/y, −x/y²), Σ = the 2x2 sample covariance of
    (v w ℓ, v w) with 1/n normalization; Var[Ĝ] ≈ ∇gᵀ Σ ∇g / n.
    """
    num, den = v * w * loss, v * w
    n = num.shape[0]
    x, y = num.mean(), den.mean()
    cov = np.cov(np.vstack([num, den]), bias=True)
    grad = np.array([1.0 / y, -x / y**2])
    # a quadratic form of a covariance matrix is ≥ 0; with all-equal losses it is 0 and rounding
    # can leave it a hair below (seed=378, n=5, accuracy: -5.8e-35, and math.sqrt failed)
    return x / y, max(float(grad @ cov @ grad), 0.0) / n


def _delta_method_difference(
    v: np.ndarray, w0: np.ndarray, l0: np.ndarray, w1: np.ndarray, l1: np.ndarray
) -> tuple[float, float]:
    """Δ̂ = Ĝ₀ − Ĝ₁ and its delta-method variance from the 4x4 covariance of the four means."""
    cols = np.vstack([v * w0 * l0, v * w0, v * w1 * l1, v * w1])
    n = cols.shape[1]
    x0, y0, x1, y1 = cols.mean(axis=1)
    cov = np.cov(cols, bias=True)
    grad = np.array([1.0 / y0, -x0 / y0**2, -1.0 / y1, x1 / y1**2])
    return x0 / y0 - x1 / y1, max(float(grad @ cov @ grad), 0.0) / n  # ≥ 0, as above


def _random_q(rng: np.random.Generator, m: int) -> np.ndarray:
    """A non-uniform sampling distribution over a pool of m instances."""
    q = rng.gamma(0.8, size=m) + 0.05
    return q / q.sum()


# ------------------------------------------- 1. uniform draws reproduce scikit-learn metrics

LABEL_SETS = {
    "binary-int": np.array([0, 1]),
    "multiclass-int": np.array([-3, 2, 7, 11]),
    "multiclass-str": np.array(["ant", "bee", "cat", "dog", "emu"]),
}


@pytest.mark.parametrize("labels", LABEL_SETS.values(), ids=LABEL_SETS.keys())
def test_uniform_error_rate_and_accuracy_equal_sklearn_accuracy_score(labels):
    rng = np.random.default_rng(1)
    y = rng.choice(labels, 257)
    pred = _noisy_copy(rng, y, labels, 0.6)
    acc = metrics.accuracy_score(y, pred)
    assert ae.estimators.inference.estimate("accuracy", pred, y).estimate == pytest.approx(
        acc, abs=1e-12
    )
    assert ae.estimators.inference.estimate(ae.Accuracy(), pred, y).estimate == pytest.approx(
        acc, abs=1e-12
    )
    assert ae.estimators.inference.estimate("error_rate", pred, y).estimate == pytest.approx(
        1 - acc, abs=1e-12
    )
    assert ae.estimators.inference.estimate(ae.ErrorRate(), pred, y).estimate == pytest.approx(
        1 - acc, abs=1e-12
    )


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, 3.7])
@pytest.mark.parametrize("pos_label", [0, 1])
def test_uniform_binary_f_beta_equals_sklearn_fbeta_score(beta, pos_label):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 301)
    pred = _noisy_copy(rng, y, [0, 1], 0.5)
    expected = metrics.fbeta_score(y, pred, beta=beta, pos_label=pos_label)
    got = ae.estimators.inference.estimate(
        ae.FMeasure(beta=beta, pos_label=pos_label), pred, y
    ).estimate
    assert got == pytest.approx(expected, abs=1e-12)


def test_uniform_f1_precision_recall_by_name_default_to_positive_class_one():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 199)
    pred = _noisy_copy(rng, y, [0, 1], 0.4)
    assert ae.estimators.inference.estimate("f1", pred, y).estimate == pytest.approx(
        metrics.f1_score(y, pred), abs=1e-12
    )
    assert ae.estimators.inference.estimate("precision", pred, y).estimate == pytest.approx(
        metrics.precision_score(y, pred), abs=1e-12
    )
    assert ae.estimators.inference.estimate("recall", pred, y).estimate == pytest.approx(
        metrics.recall_score(y, pred), abs=1e-12
    )


@pytest.mark.parametrize("labels", LABEL_SETS.values(), ids=LABEL_SETS.keys())
def test_uniform_one_vs_rest_f_measures_equal_sklearn_per_label_scores(labels):
    rng = np.random.default_rng(4)
    y = rng.choice(labels, 400)
    pred = _noisy_copy(rng, y, labels, 0.5)
    for pos in labels:
        for beta in (0.5, 1.0, 2.0):
            expected = metrics.fbeta_score(y, pred, beta=beta, labels=[pos], average=None)[0]
            got = ae.estimators.inference.estimate(
                ae.FMeasure(beta=beta, pos_label=pos), pred, y
            ).estimate
            assert got == pytest.approx(expected, abs=1e-12)
        prec = metrics.precision_score(y, pred, labels=[pos], average=None)[0]
        rec = metrics.recall_score(y, pred, labels=[pos], average=None)[0]
        assert ae.estimators.inference.estimate(
            ae.Precision(pos_label=pos), pred, y
        ).estimate == pytest.approx(prec, abs=1e-12)
        assert ae.estimators.inference.estimate(
            ae.Recall(pos_label=pos), pred, y
        ).estimate == pytest.approx(rec, abs=1e-12)
        # β = 0 is precision and β = inf is recall (eq. 3.26 with η = 1 and η = 0)
        assert ae.estimators.inference.estimate(
            ae.FMeasure(beta=0.0, pos_label=pos), pred, y
        ).estimate == (pytest.approx(prec, abs=1e-12))
        assert ae.estimators.inference.estimate(
            ae.FMeasure(beta=math.inf, pos_label=pos), pred, y
        ).estimate == (pytest.approx(rec, abs=1e-12))


def test_uniform_categorical_with_explicit_string_labels_matches_sklearn():
    rng = np.random.default_rng(5)
    labels = np.array(["spam", "ham", "eggs"])  # deliberately not sorted
    proba = rng.dirichlet([0.7, 0.7, 0.7], size=350)
    pred = labels[np.argmax(proba, axis=1)]
    y = _noisy_copy(rng, pred, labels, 0.7)
    model = ae.Categorical(proba, labels=labels)
    acc = metrics.accuracy_score(y, pred)
    assert ae.estimators.inference.estimate("accuracy", model, y).estimate == pytest.approx(
        acc, abs=1e-12
    )
    assert ae.estimators.inference.estimate("error_rate", model, y).estimate == pytest.approx(
        1 - acc, abs=1e-12
    )
    # the positive class of an F-measure is named: "spam"
    f1_spam = metrics.f1_score(y, pred, labels=["spam"], average=None)[0]
    assert ae.estimators.inference.estimate(
        ae.FMeasure(pos_label="spam"), model, y
    ).estimate == pytest.approx(f1_spam, abs=1e-12)
    for pos in labels:
        expected = metrics.fbeta_score(y, pred, beta=2.0, labels=[pos], average=None)[0]
        got = ae.estimators.inference.estimate(
            ae.FMeasure(beta=2.0, pos_label=pos), model, y
        ).estimate
        assert got == pytest.approx(expected, abs=1e-12)


def test_uniform_regression_estimates_equal_sklearn_mse_and_mae():
    rng = np.random.default_rng(6)
    mean = rng.normal(size=220) * 3
    var = rng.gamma(2.0, size=220)
    y = mean + rng.normal(size=220) * np.sqrt(var) + 0.3
    model = ae.Gaussian(mean, var)
    mse = metrics.mean_squared_error(y, mean)
    mae = metrics.mean_absolute_error(y, mean)
    for pred in (model, mean):
        assert ae.estimators.inference.estimate("mse", pred, y).estimate == pytest.approx(
            mse, rel=1e-12
        )
        assert ae.estimators.inference.estimate(
            ae.SquaredError(), pred, y
        ).estimate == pytest.approx(mse, rel=1e-12)
        assert ae.estimators.inference.estimate("mae", pred, y).estimate == pytest.approx(
            mae, rel=1e-12
        )
        assert ae.estimators.inference.estimate(
            ae.AbsoluteError(), pred, y
        ).estimate == pytest.approx(mae, rel=1e-12)


def test_uniform_estimate_counts_draws_and_distinct_labels():
    y = np.array([0, 1, 1, 0, 1])
    pred = np.array([0, 1, 0, 0, 0])
    est = ae.estimators.inference.estimate("error_rate", pred, y, indices=[4, 2, 2, 9, 4])
    assert est.n_draws == 5
    assert est.n_labels == 3
    assert est.effective_n == pytest.approx(5.0, abs=1e-12)
    assert est.measure == "error_rate"
    assert est.binary_loss is True


# ------------------------------------------------------- 2. sandwich variance (Lemma 3.4)


@settings(max_examples=40)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 300),
    measure=st.sampled_from(["error_rate", "accuracy", "f", "precision", "recall", "mse"]),
    beta=st.sampled_from([0.5, 1.0, 2.0, 0.3, 4.0]),
    with_pool_weights=st.booleans(),
)
# all five draws correct: the quadratic form comes out -5.8e-35, not 0
@example(seed=378, n=5, measure="accuracy", beta=0.5, with_pool_weights=False)
def test_sandwich_variance_equals_brute_force_delta_method(
    seed, n, measure, beta, with_pool_weights
):
    rng = np.random.default_rng(seed)
    m = 400
    q_pool = _random_q(rng, m)
    pool_w = rng.gamma(1.5, size=m) + 0.1 if with_pool_weights else np.ones(m)
    idx = rng.choice(m, size=n, p=q_pool)
    v = pool_w[idx] / q_pool[idx]
    labels = np.array([0, 1, 2])
    y_pool = rng.choice(labels, m)
    pred_pool = _noisy_copy(rng, y_pool, labels, 0.6)
    y, pred = y_pool[idx], pred_pool[idx]
    p_arg = pool_w[idx] if with_pool_weights else None
    if measure == "error_rate":
        meas, w, loss = ae.ErrorRate(), np.ones(n), (pred != y).astype(float)
    elif measure == "accuracy":
        meas, w, loss = ae.Accuracy(), np.ones(n), (pred == y).astype(float)
    elif measure == "mse":
        mean_pool = rng.normal(size=m)
        yr_pool = mean_pool + rng.normal(size=m)
        pred, y = mean_pool[idx], yr_pool[idx]
        meas, w, loss = ae.SquaredError(), np.ones(n), (pred - y) ** 2
    else:
        b = {"f": beta, "precision": 0.0, "recall": math.inf}[measure]
        meas = {
            "f": ae.FMeasure(beta=beta, pos_label=2),
            "precision": ae.Precision(pos_label=2),
            "recall": ae.Recall(pos_label=2),
        }[measure]
        w, loss = _f_parts(pred, y, b, 2)
    if not (v * w).sum() > 0:
        return  # undefined estimate; covered by the degenerate-sample tests
    g, var = _delta_method(v, w, loss)
    est = ae.estimators.inference.estimate(meas, pred, y, q_pool[idx], p=p_arg)
    assert est.estimate == pytest.approx(g, rel=1e-10, abs=1e-12)
    assert est.stderr**2 == pytest.approx(var, rel=1e-9, abs=1e-15)
    z = stats.norm.ppf(0.975)
    with warnings.catch_warnings():
        # all-equal losses on a tiny sample give stderr 0; that warning is tested elsewhere
        warnings.simplefilter("ignore", ae.DegenerateIntervalWarning)
        lo, hi = est.confidence_interval(0.95, "wald")
    assert lo == pytest.approx(g - z * math.sqrt(var), rel=1e-9, abs=1e-12)
    assert hi == pytest.approx(g + z * math.sqrt(var), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sandwich_variance_reduces_to_binomial_variance_when_q_equals_p(seed):
    rng = np.random.default_rng(seed)
    m, n = 500, 123
    y_pool = rng.integers(0, 2, m)
    pred_pool = _noisy_copy(rng, y_pool, [0, 1], 0.5)
    # uniform pool, uniform draws (q = None)
    idx = rng.integers(0, m, n)
    y, pred = y_pool[idx], pred_pool[idx]
    r = np.mean(pred != y)
    est = ae.estimators.inference.estimate("error_rate", pred, y)
    assert est.stderr**2 == pytest.approx(r * (1 - r) / n, rel=1e-12)
    # a non-uniform pool p(x) sampled from itself (q = p): all importance weights equal
    p_pool = _random_q(rng, m)
    idx = rng.choice(m, size=n, p=p_pool)
    y, pred = y_pool[idx], pred_pool[idx]
    r = np.mean(pred != y)
    est = ae.estimators.inference.estimate("error_rate", pred, y, p_pool[idx], p=p_pool[idx])
    assert est.estimate == pytest.approx(r, abs=1e-12)
    assert est.stderr**2 == pytest.approx(r * (1 - r) / n, rel=1e-10)
    assert est.effective_n == pytest.approx(n, rel=1e-12)


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("measure", ["error_rate", "mse"])
def test_t_interval_equals_scipy_one_sample_t_interval_for_uniform_draws(level, measure):
    rng = np.random.default_rng(7)
    n = 57
    if measure == "error_rate":
        y = rng.integers(0, 3, n)
        pred = _noisy_copy(rng, y, [0, 1, 2], 0.5)
        losses = (pred != y).astype(float)
    else:
        pred = rng.normal(size=n)
        y = pred + rng.standard_t(4, size=n)
        losses = (pred - y) ** 2
    expected = stats.ttest_1samp(losses, 0.0).confidence_interval(level)
    got = ae.estimators.inference.estimate(measure, pred, y).confidence_interval(level, method="t")
    assert got == pytest.approx((expected.low, expected.high), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_paired_t_interval_equals_scipy_paired_t_interval_for_uniform_draws(level):
    rng = np.random.default_rng(8)
    n = 80
    y = rng.integers(0, 2, n)
    a = _noisy_copy(rng, y, [0, 1], 0.6)
    b = _noisy_copy(rng, y, [0, 1], 0.3)
    la, lb = (a != y).astype(float), (b != y).astype(float)
    expected = stats.ttest_rel(la, lb).confidence_interval(level)
    got = ae.estimators.inference.paired_test("error_rate", [a, b], y).confidence_interval(
        level, method="t"
    )
    assert got == pytest.approx((expected.low, expected.high), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_paired_difference_stderr_and_p_value_equal_brute_force_delta_method(seed):
    rng = np.random.default_rng(seed)
    m, n = 600, 250
    q_pool = _random_q(rng, m)
    pool_w = rng.gamma(2.0, size=m)
    idx = rng.choice(m, size=n, p=q_pool)
    labels = ["neg", "pos", "zzz"]
    y_pool = rng.choice(labels, m)
    a_pool = _noisy_copy(rng, y_pool, labels, 0.6)
    b_pool = _noisy_copy(rng, y_pool, labels, 0.4)
    y, a, b = y_pool[idx], a_pool[idx], b_pool[idx]
    v = pool_w[idx] / q_pool[idx]
    for beta in (1.0, 2.0):
        wa, la = _f_parts(a, y, beta, "pos")
        wb, lb = _f_parts(b, y, beta, "pos")
        diff, var = _delta_method_difference(v, wa, la, wb, lb)
        meas = ae.FMeasure(beta=beta, pos_label="pos")
        cmp = ae.estimators.inference.paired_test(meas, [a, b], y, q_pool[idx], p=pool_w[idx])
        assert cmp.difference == pytest.approx(diff, rel=1e-10, abs=1e-12)
        assert cmp.stderr**2 == pytest.approx(var, rel=1e-9)
        z = diff / math.sqrt(var)
        assert cmp.statistic == pytest.approx(z, rel=1e-9)
        assert cmp.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-8, abs=1e-14)
        assert cmp.estimates[0] == pytest.approx(_delta_method(v, wa, la)[0], rel=1e-10)
        assert cmp.estimates[1] == pytest.approx(_delta_method(v, wb, lb)[0], rel=1e-10)
    # error rate, same draws; multiple_comparison's pairwise row agrees
    wa, la = np.ones(n), (a != y).astype(float)
    wb, lb = np.ones(n), (b != y).astype(float)
    diff, var = _delta_method_difference(v, wa, la, wb, lb)
    mc = ae.estimators.inference.multiple_comparison(
        "error_rate", [a, b], y, q_pool[idx], p=pool_w[idx]
    )
    row = mc.pairwise.iloc[0]
    assert row["difference"] == pytest.approx(diff, rel=1e-10, abs=1e-12)
    assert row["stderr"] ** 2 == pytest.approx(var, rel=1e-9)
    assert row["p_value"] == pytest.approx(2 * stats.norm.sf(abs(diff) / math.sqrt(var)), rel=1e-8)
    assert mc.stderrs[0] ** 2 == pytest.approx(_delta_method(v, wa, la)[1], rel=1e-9)


def test_binomial_intervals_of_a_weighted_estimate_use_kish_effective_sample_size():
    rng = np.random.default_rng(9)
    m, n = 300, 90
    q_pool = _random_q(rng, m)
    idx = rng.choice(m, size=n, p=q_pool)
    y_pool = rng.integers(0, 2, m)
    pred_pool = _noisy_copy(rng, y_pool, [0, 1], 0.5)
    y, pred = y_pool[idx], pred_pool[idx]
    v = 1.0 / q_pool[idx]
    loss = (pred != y).astype(float)
    n_eff = v.sum() ** 2 / (v @ v)
    g = v @ loss / v.sum()
    est = ae.estimators.inference.estimate("error_rate", pred, y, q_pool[idx])
    assert est.effective_n == pytest.approx(n_eff, rel=1e-12)
    for ours, theirs in [("wilson", "wilson"), ("agresti-coull", "agresti_coull")]:
        expected = sm_proportion_confint(g * n_eff, n_eff, alpha=0.1, method=theirs)
        assert est.confidence_interval(0.9, ours) == pytest.approx(expected, abs=1e-10)


# ---------------------------------------------- 3. passive binomial intervals vs statsmodels

STATSMODELS_METHOD = {
    "wilson": "wilson",
    "clopper-pearson": "beta",
    "agresti-coull": "agresti_coull",
    "wald": "normal",
}
GRID = [
    (count, nobs, level)
    for nobs in (1, 2, 5, 10, 37, 100, 1000)
    for count in sorted({0, 1, nobs // 3, nobs // 2, nobs - 1, nobs})
    for level in (0.8, 0.9, 0.95, 0.99)
]


@pytest.mark.parametrize("method", STATSMODELS_METHOD)
def test_proportion_confint_equals_statsmodels_on_grid_including_boundaries(method):
    # statsmodels clips "normal", "agresti_coull" and "wilson" to [0, 1]; a proportion lies in
    # [0, 1], so clipping never changes coverage and we do the same (see the report).
    for count, nobs, level in GRID:
        expected = sm_proportion_confint(
            count, nobs, alpha=1 - level, method=STATSMODELS_METHOD[method]
        )
        got = ae.estimators.inference.proportion_confint(count, nobs, level=level, method=method)
        assert got == pytest.approx(expected, abs=1e-10), (count, nobs, level)


@pytest.mark.parametrize("method", STATSMODELS_METHOD)
def test_proportion_confint_is_vectorized_like_statsmodels(method):
    count = np.array([0, 3, 17, 40, 40])
    nobs = np.array([40, 40, 40, 40, 41])
    lo, hi = ae.estimators.inference.proportion_confint(count, nobs, 0.95, method)
    slo, shi = sm_proportion_confint(count, nobs, alpha=0.05, method=STATSMODELS_METHOD[method])
    np.testing.assert_allclose(lo, slo, rtol=0, atol=1e-10)
    np.testing.assert_allclose(hi, shi, rtol=0, atol=1e-10)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_exact_and_wilson_intervals_equal_scipy_binomtest(level):
    for nobs in (1, 7, 50, 333):
        for count in sorted({0, 1, nobs // 2, nobs}):
            res = stats.binomtest(count, nobs)
            for ours, theirs in [("clopper-pearson", "exact"), ("wilson", "wilson")]:
                ci = res.proportion_ci(confidence_level=level, method=theirs)
                got = ae.estimators.inference.proportion_confint(count, nobs, level, ours)
                assert got == pytest.approx((ci.low, ci.high), abs=1e-10), (count, nobs, ours)


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_proportion_t_interval_equals_one_sample_t_interval_on_binary_data(level):
    for nobs in (2, 9, 60):
        for count in range(1, nobs):
            data = np.r_[np.ones(count), np.zeros(nobs - count)]
            ci = stats.ttest_1samp(data, 0.0).confidence_interval(level)
            expected = (max(ci.low, 0.0), min(ci.high, 1.0))
            got = ae.estimators.inference.proportion_confint(count, nobs, level, "t")
            assert got == pytest.approx(expected, abs=1e-10), (count, nobs)


def test_estimate_binomial_intervals_equal_statsmodels_for_uniform_draws():
    rng = np.random.default_rng(10)
    y = rng.integers(0, 2, 77)
    pred = _noisy_copy(rng, y, [0, 1], 0.8)
    count = int(np.sum(pred != y))
    est = ae.estimators.inference.estimate("error_rate", pred, y)
    for ours, theirs in STATSMODELS_METHOD.items():
        if ours == "wald":
            continue  # the Estimate's Wald interval is the unclipped sandwich interval
        expected = sm_proportion_confint(count, 77, alpha=0.05, method=theirs)
        assert est.confidence_interval(0.95, ours) == pytest.approx(expected, abs=1e-10)


# --------------------------------------------------------------------- 5. Monte-Carlo checks


def _well_specified_pool(seed: int, m: int = 2000):
    """Binary pool whose true labels are drawn from the model's own probabilities."""
    rng = np.random.default_rng(seed)
    p1 = rng.beta(0.7, 0.7, m)
    y = (rng.random(m) < p1).astype(int)
    pred = (p1 >= 0.5).astype(int)
    return rng, p1, y, pred


# R = 2000 repetitions: the Monte-Carlo standard error of an estimated rate π is
# sqrt(π(1 − π)/R); for π = 0.95 (or 0.05) it is sqrt(0.95·0.05/2000) ≈ 0.0049. A correct
# procedure lands within 3 MC-SE (≈ 0.015) of nominal except with probability ≈ 0.003, so the
# tolerance below is 3 MC-SE; being seeded, each check is deterministic.
REPS = 2000
MC_SE = math.sqrt(0.95 * 0.05 / REPS)


def test_wald_interval_covers_pool_error_rate_at_nominal_rate_well_specified():
    rng, p1, y, pred = _well_specified_pool(20240601)
    m, n = y.shape[0], 300
    pi_pred = np.where(pred == 1, p1, 1 - p1)
    r_int = np.mean(1 - pi_pred)  # intrinsic error rate, eq. 4.22
    q = np.sqrt((1 - 2 * r_int) * (1 - pi_pred) + r_int**2)  # Cor. 4.2: q ≠ p, non-uniform
    q /= q.sum()
    pool_value = np.mean(pred != y)  # with-replacement draws from a fixed pool: the estimand
    idx = rng.choice(m, size=(REPS, n), p=q)
    covered = 0
    for i in idx:
        lo, hi = ae.estimators.inference.estimate(
            ae.ErrorRate(), pred[i], y[i], q[i]
        ).confidence_interval(0.95)
        covered += lo <= pool_value <= hi
    assert abs(covered / REPS - 0.95) <= 3 * MC_SE


def test_wald_interval_covers_pool_f1_at_nominal_rate_well_specified():
    rng, p1, y, pred = _well_specified_pool(20240601)
    m, n = y.shape[0], 300
    tp = np.sum((pred == 1) & (y == 1))
    pool_value = 2 * tp / (2 * tp + np.sum(pred != y))  # F1 of the pool with its true labels
    eta = 0.5
    f_int = np.sum(pred * p1) / np.sum(eta * pred + (1 - eta) * p1)  # eq. 4.21
    a2 = np.where(
        pred == 1,
        p1 * (1 - f_int) ** 2 + eta**2 * (1 - p1) * f_int**2,
        (1 - eta) ** 2 * p1 * f_int**2,
    )  # Cor. 4.4
    q = np.sqrt(a2) / np.sqrt(a2).sum()
    q = 0.8 * q + 0.2 / m  # defensive mixture keeps the weights bounded (Lemma 3.4, cond. 5)
    idx = rng.choice(m, size=(REPS, n), p=q)
    covered = 0
    f1 = ae.FMeasure(pos_label=1)
    for i in idx:
        lo, hi = ae.estimators.inference.estimate(f1, pred[i], y[i], q[i]).confidence_interval(0.95)
        covered += lo <= pool_value <= hi
    assert abs(covered / REPS - 0.95) <= 3 * MC_SE


def _equal_error_twin(rng, pred, y, k):
    """A second binary model with exactly the pool error rate of ``pred``: flip k of its
    correct and k of its wrong predictions."""
    right, wrong = np.flatnonzero(pred == y), np.flatnonzero(pred != y)
    flip = np.concatenate(
        [rng.choice(right, k, replace=False), rng.choice(wrong, k, replace=False)]
    )
    out = pred.copy()
    out[flip] = 1 - out[flip]
    return out


def test_paired_wald_test_has_nominal_size_under_exact_null():
    rng, p1, y, pred_a = _well_specified_pool(7)
    m, n = y.shape[0], 300
    pred_b = _equal_error_twin(rng, pred_a, y, 200)
    assert np.sum(pred_a != y) == np.sum(pred_b != y)  # Δ = 0 exactly on the pool
    pi = np.where(pred_a == 1, p1, 1 - p1)
    q = np.sqrt(1 - pi + 0.05)
    q /= q.sum()
    idx = rng.choice(m, size=(REPS, n), p=q)
    rejections = 0
    for i in idx:
        rejections += (
            ae.estimators.inference.paired_test(
                "error_rate", [pred_a[i], pred_b[i]], y[i], q[i]
            ).p_value
            < 0.05
        )
    # MC-SE of the rejection rate at α = 0.05 is the same ≈ 0.0049; tolerance 3 MC-SE.
    assert abs(rejections / REPS - 0.05) <= 3 * MC_SE


def test_holm_family_wise_error_at_most_alpha_under_exact_null_for_three_models():
    # multiple_comparison evaluates Tukey's studentized range by numerical integration
    # (~0.1 s per call), too slow for 2000 repetitions; its pairwise Wald p-values are the
    # paired_test p-values and its Holm column is holm_adjust of them (both tested below), so
    # the family-wise error of the Holm procedure is simulated from those parts.
    rng, p1, y, pred_a = _well_specified_pool(11)
    m, n = y.shape[0], 300
    models = [
        pred_a,
        _equal_error_twin(rng, pred_a, y, 200),
        _equal_error_twin(rng, pred_a, y, 150),
    ]
    assert len({int(np.sum(f != y)) for f in models}) == 1
    pi = np.where(pred_a == 1, p1, 1 - p1)
    q = np.sqrt(1 - pi + 0.05)
    q /= q.sum()
    idx = rng.choice(m, size=(REPS, n), p=q)
    pairs = [(0, 1), (0, 2), (1, 2)]
    any_rejection = 0
    for i in idx:
        pv = [
            ae.estimators.inference.paired_test(
                "error_rate", [models[a][i], models[b][i]], y[i], q[i]
            ).p_value
            for a, b in pairs
        ]
        any_rejection += bool((holm_adjust(pv) < 0.05).any())
    assert any_rejection / REPS <= 0.05 + 3 * MC_SE


# ------------------------------------------------------------- 6. multiple comparisons


def _k_models(seed: int, k: int, n: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    preds = [_noisy_copy(rng, y, [0, 1], acc) for acc in np.linspace(0.2, 0.8, k)]
    return rng, y, preds


def test_multiple_comparison_pairwise_rows_equal_paired_tests():
    rng, y, preds = _k_models(12, 4, 150)
    q = rng.uniform(0.2, 1.0, 150) / 150
    mc = ae.estimators.inference.multiple_comparison("error_rate", preds, y, q)
    assert len(mc.pairwise) == 6
    for _, row in mc.pairwise.iterrows():
        a, b = int(row["a"]), int(row["b"])
        cmp = ae.estimators.inference.paired_test("error_rate", [preds[a], preds[b]], y, q)
        assert row["difference"] == pytest.approx(cmp.difference, abs=1e-14)
        assert row["stderr"] == pytest.approx(cmp.stderr, rel=1e-12)
        assert row["statistic"] == pytest.approx(cmp.statistic, rel=1e-12)
        assert row["p_value"] == pytest.approx(cmp.p_value, rel=1e-12)
    for j, f in enumerate(preds):
        est = ae.estimators.inference.estimate("error_rate", f, y, q)
        assert mc.estimates[j] == pytest.approx(est.estimate, abs=1e-14)
        assert mc.stderrs[j] == pytest.approx(est.stderr, rel=1e-12)


@pytest.mark.parametrize("seed", [13, 14])
def test_holm_and_bonferroni_columns_equal_statsmodels_multipletests(seed):
    _, y, preds = _k_models(seed, 5, 120)
    mc = ae.estimators.inference.multiple_comparison("accuracy", preds, y)
    pv = mc.pairwise["p_value"].to_numpy()
    assert (pv < 0.05).any() and (pv > 0.05).any()  # a non-trivial family
    np.testing.assert_allclose(
        mc.pairwise["p_holm"], multipletests(pv, method="holm")[1], rtol=1e-12, atol=0
    )
    np.testing.assert_allclose(
        mc.pairwise["p_bonferroni"],
        multipletests(pv, method="bonferroni")[1],
        rtol=1e-12,
        atol=0,
    )
    for _, row in mc.pairwise.iterrows():
        a, b = int(row["a"]), int(row["b"])
        assert mc.adjusted_p_value(b, a, "holm") == row["p_holm"]
        assert mc.adjusted_p_value(a, b, "bonferroni") == row["p_bonferroni"]
        assert mc.adjusted_p_value(a, b, "none") == row["p_value"]
        assert mc.adjusted_p_value(a, b, "tukey") == row["p_tukey"]
        # Tukey adjusts for the whole family of k(k−1)/2 pairs: never below the raw p-value
        assert row["p_tukey"] >= row["p_value"] - 1e-12


@settings(max_examples=25)  # multipletests runs gc.collect() on every call (~50 ms)
@given(
    st.lists(
        st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.01, 0.05, 1.0])),
        min_size=1,
        max_size=12,
    )
)
def test_holm_adjust_equals_statsmodels_including_ties(p_values):
    expected = multipletests(np.array(p_values), method="holm")[1]
    np.testing.assert_allclose(holm_adjust(p_values), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed", [15, 16, 17])
def test_tukey_with_two_models_equals_paired_t_test(seed):
    # studentized_range(k=2, df).sf(√2|t|) = 2·t_df.sf(|t|), df = n − 1. scipy evaluates the
    # studentized range by numerical integration with absolute error ~1e-12, hence atol 1e-9.
    _, y, (a, b) = _k_models(seed, 2, 60)
    la, lb = (a != y).astype(float), (b != y).astype(float)
    expected = stats.ttest_rel(la, lb).pvalue
    mc = ae.estimators.inference.multiple_comparison("error_rate", [a, b], y)
    assert mc.pairwise["p_tukey"].iloc[0] == pytest.approx(expected, rel=1e-7, abs=1e-9)
    assert mc.range_p_value == pytest.approx(expected, rel=1e-7, abs=1e-9)
    t = stats.ttest_rel(la, lb).statistic
    assert mc.range_statistic == pytest.approx(math.sqrt(2) * abs(t), rel=1e-12)


def test_the_studentized_range_is_computed_when_first_read():
    """p_tukey and the range test wait until read (scipy.stats is slow to import) and are
    then the studentized range of the statistics, with the Holm table read before them."""
    _, y, preds = _k_models(19, 4, 300)
    mc = ae.estimators.inference.multiple_comparison("error_rate", preds, y)
    assert mc.best_is_significant(0.05) in (True, False)  # Holm: the table without Tukey
    assert "_with_tukey" not in mc.__dict__ and "_range_p" not in mc.__dict__
    table = mc.pairwise
    assert list(table.columns)[-1] == "p_tukey" and mc.pairwise is table  # computed once
    n, k = 300, 4
    q = math.sqrt(2) * table["difference"].abs() / (table["stderr"] * math.sqrt(n / (n - 1)))
    np.testing.assert_array_equal(table["p_tukey"], stats.studentized_range.sf(q, k, n - 1))
    assert mc.range_p_value == stats.studentized_range.sf(mc.range_statistic, k, n - 1)


def test_a_multiple_comparison_pickled_before_the_lazy_range_still_reads() -> None:
    """A MultipleComparison pickled when ``pairwise`` and ``range_p_value`` were fields (its
    state holds them) unpickles to the same table, p-values and repr (a review found it
    broken); one pickled now, before or after Tukey is read, round-trips."""
    import pickle

    from activeeval.estimators.inference import MultipleComparison

    _, y, preds = _k_models(20, 3, 200)
    mc = ae.estimators.inference.multiple_comparison("error_rate", preds, y)
    fresh = pickle.loads(pickle.dumps(mc))
    table, range_p = mc.pairwise, mc.range_p_value
    state = {k: v for k, v in mc.__dict__.items() if not k.startswith("_")}
    old = object.__new__(MultipleComparison)  # what unpickling an old pickle does
    old.__setstate__({**state, "pairwise": table, "range_p_value": range_p})
    after = pickle.loads(pickle.dumps(mc))
    for back in (old, fresh, after):
        pd.testing.assert_frame_equal(back.pairwise, table, check_exact=True)
        assert back.range_p_value == range_p and repr(back) == repr(mc)
        assert back.adjusted_p_value(0, 2, "holm") == mc.adjusted_p_value(0, 2, "holm")
        assert back.best_is_significant(0.05, "tukey") == mc.best_is_significant(0.05, "tukey")


def test_best_and_ranking_respect_greater_is_better():
    _, y, preds = _k_models(18, 4, 400)
    preds = [preds[2], preds[0], preds[3], preds[1]]
    acc = np.array([metrics.accuracy_score(y, f) for f in preds])
    assert len(set(acc)) == 4
    by_acc = ae.estimators.inference.multiple_comparison("accuracy", preds, y)
    by_err = ae.estimators.inference.multiple_comparison("error_rate", preds, y)
    np.testing.assert_array_equal(by_acc.ranking, np.argsort(-acc))
    np.testing.assert_array_equal(by_err.ranking, np.argsort(-acc))
    assert by_acc.best == by_err.best == int(np.argmax(acc))
    cmp_acc = ae.estimators.inference.paired_test("accuracy", [preds[0], preds[2]], y)
    cmp_err = ae.estimators.inference.paired_test("error_rate", [preds[0], preds[2]], y)
    better = 0 if acc[0] > acc[2] else 1
    assert cmp_acc.best == cmp_err.best == better
    assert cmp_acc.difference == pytest.approx(acc[0] - acc[2], abs=1e-12)
    assert cmp_err.difference == pytest.approx(acc[2] - acc[0], abs=1e-12)


def test_best_is_significant_only_when_best_beats_all_others():
    rng = np.random.default_rng(19)
    y = rng.integers(0, 2, 500)
    strong = _noisy_copy(rng, y, [0, 1], 0.9)
    weak = [_noisy_copy(rng, y, [0, 1], 0.1), _noisy_copy(rng, y, [0, 1], 0.15)]
    mc = ae.estimators.inference.multiple_comparison("accuracy", [weak[0], strong, weak[1]], y)
    assert mc.best == 1
    assert mc.best_is_significant(0.05, "holm")
    tie = ae.estimators.inference.multiple_comparison(
        "accuracy", [strong, strong.copy(), weak[0]], y
    )
    assert not tie.best_is_significant(0.05, "bonferroni")


# ------------------------------------------------------------------ 7. degenerate samples


def test_all_zero_losses_give_zero_estimate_and_degenerate_wald_warning():
    y = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    est = ae.estimators.inference.estimate("error_rate", y.copy(), y)
    assert est.estimate == 0.0
    assert est.stderr == 0.0
    with pytest.warns(ae.DegenerateIntervalWarning):
        assert est.confidence_interval(0.95, "wald") == (0.0, 0.0)
    with pytest.warns(ae.DegenerateIntervalWarning):
        est.confidence_interval(0.95, "t")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("wilson", "clopper-pearson"):
            lo, hi = est.confidence_interval(0.95, method)
            assert lo == 0.0
            assert 0.0 < hi < 1.0
        assert est.confidence_interval(0.95, "clopper-pearson")[1] == pytest.approx(
            1 - 0.025 ** (1 / 8), rel=1e-12
        )  # exact upper bound for 0 of 8: 1 − (α/2)^{1/n}


def test_recall_without_drawn_positives_is_nan_with_undefined_warning():
    y = np.array([0, 0, 0, 0])
    pred = np.array([1, 0, 1, 0])
    with pytest.warns(ae.UndefinedEstimateWarning):
        est = ae.estimators.inference.estimate(
            ae.Recall(pos_label=1), pred, y, q=[0.1, 0.2, 0.3, 0.4]
        )
    assert math.isnan(est.estimate)
    assert math.isnan(est.stderr)
    assert all(math.isnan(b) for b in est.confidence_interval(0.95, "wilson"))
    with pytest.warns(ae.UndefinedEstimateWarning):
        cmp = ae.estimators.inference.paired_test(ae.Recall(pos_label=1), [pred, 1 - pred], y)
    assert math.isnan(cmp.difference)
    assert math.isnan(cmp.p_value)
    with pytest.warns(ae.UndefinedEstimateWarning):
        prec = ae.estimators.inference.estimate(
            ae.Precision(pos_label=1), np.zeros(4, dtype=int), y
        )
    assert math.isnan(prec.estimate)


def test_identical_models_have_exactly_zero_difference_and_p_value_one():
    rng = np.random.default_rng(20)
    y = rng.integers(0, 3, 90)
    f = _noisy_copy(rng, y, [0, 1, 2], 0.5)
    q = rng.uniform(0.1, 1.0, 90) / 90
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for measure in ("error_rate", ae.FMeasure(beta=2.0, pos_label=2)):
            cmp = ae.estimators.inference.paired_test(measure, [f, f.copy()], y, q)
            assert cmp.difference == 0.0
            assert cmp.stderr == 0.0
            assert cmp.p_value == 1.0
            assert cmp.statistic == 0.0
            assert cmp.best == 0
            mc = ae.estimators.inference.multiple_comparison(measure, [f, f.copy()], y, q)
            assert mc.pairwise["p_value"].iloc[0] == 1.0
            assert mc.pairwise["p_tukey"].iloc[0] == 1.0
            assert mc.range_p_value == 1.0


def test_the_quantiles_taken_from_scipy_special_are_scipy_stats_bit_for_bit() -> None:
    """The estimators take the normal and t quantiles from scipy.special so that a command
    line does not import scipy.stats (a second); they must be exactly what scipy.stats
    gives — including t's NaN for df ≤ 0 — or results would move in the last bits."""
    from scipy import special, stats

    from activeeval.estimators.inference import _t_upper, _z_upper

    rng = np.random.default_rng(0)
    alphas = np.concatenate(
        [rng.uniform(1e-12, 1.0, 3000), np.geomspace(1e-300, 0.5, 300), [0.05, 0.025, 0.5]]
    )
    for a in alphas:
        assert float(_z_upper(a)) == float(stats.norm.isf(a))
    dfs = rng.integers(1, 2000, alphas.shape[0]).astype(float)
    for a, d in zip(alphas, dfs, strict=True):
        assert float(_t_upper(a, d)) == float(stats.t.isf(a, d))
    vec = _t_upper(0.025, np.array([-1.0, 0.0, 1.0, 7.0]))
    want = stats.t.isf(0.025, np.array([-1.0, 0.0, 1.0, 7.0]))
    np.testing.assert_array_equal(vec, want)  # NaN where df <= 0, as scipy.stats
    assert math.isnan(float(_t_upper(0.025, 0.0)))
    z = np.concatenate([rng.normal(0, 5, 3000), np.linspace(-40, 40, 801)])
    for x in z:
        assert float(special.ndtr(x)) == float(stats.norm.cdf(x))
        assert float(special.ndtr(-x)) == float(stats.norm.sf(x))
    levels = rng.uniform(0.001, 0.99999, 2000)
    for lv in levels:
        assert float(special.gammaincinv(0.5, lv)) == float(stats.chi2.ppf(lv, 1)) / 2
        assert float(special.chdtri(1, 1 - lv)) == float(stats.chi2.isf(1 - lv, 1))
