"""The Godambe–Joshi limit the model-assisted benchmark reports (reproduce.assisted):
the optimal inclusion probabilities against a numerical optimizer, the limit against the
label-space enumeration of the model's conditional variance and other designs, and against
Monte-Carlo runs of the difference estimator that reaches it (fixed- and random-size designs,
the error rate exactly and F1 to first order), with the labels drawn from the model or
fixed."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize

import activeeval as ae
from activeeval.estimators.assisted import _conditional_variance
from activeeval.measures import ErrorRate, FMeasure, Precision
from reproduce.assisted import (
    draw_labels,
    limit_scatter,
    model_limit,
    optimal_inclusion,
)


@pytest.mark.parametrize("seed", range(12))
def test_optimal_inclusion_minimizes_the_anticipated_variance(seed: int) -> None:
    """π = min(1, kσ) with Σπ = n against SLSQP on Σ(1/π − 1)σ², with caps active and
    instances of σ = 0 (no label needed)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(4, 12))
    sig = rng.lognormal(0.0, 1.0, m) * (rng.random(m) > 0.2)
    pos = sig > 0
    n = int(rng.integers(1, max(pos.sum(), 2)))
    pi = optimal_inclusion(sig, n)
    assert np.all(pi[~pos] == 0)
    if n >= pos.sum():
        assert np.all(pi[pos] == 1)
        return
    assert pi.sum() == pytest.approx(n, rel=1e-12)
    assert np.all((pi[pos] > 0) & (pi[pos] <= 1))

    def obj(x: np.ndarray) -> float:
        return float(np.sum((1 / x - 1) * sig[pos] ** 2))

    with warnings.catch_warnings():
        # The reference optimizer's own notice (SLSQP in scipy < 1.16) that it clipped a step
        # to the bounds; optimal_inclusion does not use scipy.optimize.
        warnings.filterwarnings("ignore", "Values in x were outside bounds", RuntimeWarning)
        ref = optimize.minimize(
            obj,
            np.full(pos.sum(), n / pos.sum()),
            method="SLSQP",
            bounds=[(1e-9, 1.0)] * int(pos.sum()),
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - n}],
            options={"ftol": 1e-14, "maxiter": 1000},
        )
    assert obj(pi[pos]) <= ref.fun * (1 + 1e-7)
    assert obj(pi[pos]) == pytest.approx(ref.fun, rel=1e-5)


def test_optimal_inclusion_covers_every_instance_that_needs_a_label() -> None:
    sig = np.array([0.0, 2.0, 0.0, 1.0])
    assert optimal_inclusion(sig, 2).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert optimal_inclusion(sig, 3).tolist() == [0.0, 1.0, 0.0, 1.0]
    # One cap: σ = (10, 1, 1), n = 2 → π = (1, 1/2, 1/2); ties share alike.
    np.testing.assert_allclose(optimal_inclusion(np.array([10.0, 1.0, 1.0]), 2), [1, 0.5, 0.5])
    np.testing.assert_allclose(optimal_inclusion(np.ones(4), 2), [0.5] * 4)
    # Subnormal σ: k·σ would overflow without scaling.
    tiny = optimal_inclusion(np.array([1e-320, 5e-324, 3e-322]), 1)
    assert tiny.sum() == pytest.approx(1.0) and np.all(tiny <= 1.0)


@pytest.mark.parametrize(
    ("sigma", "n", "match"),
    [([1.0, 2.0], 0, "n: the number of labels"), ([1.0, np.nan], 1, "sigma"),
     ([1.0, -1.0], 1, "sigma")],
)  # fmt: skip
def test_optimal_inclusion_refuses_bad_input(sigma, n, match) -> None:
    with pytest.raises(ValueError, match=match):
        optimal_inclusion(np.array(sigma), n)


def _limit_by_enumeration(proba: np.ndarray, meas, n: int) -> float:
    """The same limit with Var_y[w(ℓ − c) | x] by enumerating the labels of each instance
    under the model (not the measure's closed-form moments), c and D̄ the model's."""
    m, k = proba.shape
    f = proba.argmax(axis=1)
    ws = np.stack([meas.weight(f, np.full(m, y)) for y in range(k)], axis=1)
    ls = np.stack([meas.loss(f, np.full(m, y)) for y in range(k)], axis=1)
    c = float(np.sum(proba * ws * ls) / np.sum(proba * ws))
    z = ws * (ls - c)
    var = np.sum(proba * z**2, axis=1) - np.sum(proba * z, axis=1) ** 2
    sigma = np.sqrt(np.maximum(var, 0)) / m / float(np.mean(np.sum(proba * ws, axis=1)))
    pi = optimal_inclusion(sigma, n)
    keep = pi > 0
    return float(np.sqrt(np.sum((1 / pi[keep] - 1) * sigma[keep] ** 2)))


@pytest.mark.parametrize("measure", [ErrorRate(), FMeasure(1.0, pos_label=1), FMeasure(0.5)])
def test_model_limit_matches_the_enumerated_conditional_variance(measure) -> None:
    rng = np.random.default_rng(4)
    m = 300
    p1 = rng.beta(0.4, 1.5, m)
    proba = np.column_stack([1 - p1, p1])
    pred = ae.Categorical(proba)
    meas = measure.bind(pred)
    budgets = np.array([10.0, 40.0, 150.0])
    got, on_labels = model_limit(pred, meas, budgets)
    assert on_labels is None
    want = [_limit_by_enumeration(proba, meas, int(n)) for n in budgets]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert got[0] > got[1] > got[2] > 0
    # No other design does better: uniform π, and π ∝ √σ.
    f = pred.point_prediction()
    var, m_den = _conditional_variance(pred, meas, meas.intrinsic_value(pred, f), f)
    sigma = np.sqrt(var) / m / m_den.mean()
    for j, n in enumerate(budgets):
        for pi in (np.full(m, n / m), np.minimum(1, n * np.sqrt(sigma) / np.sqrt(sigma).sum())):
            assert np.sum((1 / pi - 1) * sigma**2) > got[j] ** 2


def _pool(seed: int, m: int, a: float, b: float):
    rng = np.random.default_rng(seed)
    p1 = rng.beta(a, b, m)
    return rng, p1, ae.Categorical(np.column_stack([1 - p1, p1]))


def _systematic(pi: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Systematic πps sampling (fixed size Σπ), one row per random start u."""
    cum = np.concatenate([[0.0], np.cumsum(pi)])
    return (np.floor(cum[1:] - u) - np.floor(cum[:-1] - u)) > 0


@pytest.mark.parametrize("design", ["poisson", "systematic"])
def test_model_limit_is_reached_by_the_difference_estimator(design: str) -> None:
    """Error rate, labels drawn from the model, the optimal π under Poisson (random size) or
    systematic (fixed size) sampling: the difference estimator mean(r) + Σ_s (ℓ − r)/(mπ) has
    anticipated MSE Σ(1/π − 1)σ² exactly (σ² = r(1 − r)/m², r the model's error
    probability); its Monte-Carlo mean square error matches the limit² within 4 MC
    standard errors."""
    rng, p1, pred = _pool(11, 400, 0.5, 3.0)
    m, n, reps = 400, 40, 20_000
    f = pred.point_prediction()
    r = np.where(f == 1, 1 - p1, p1)  # the model's P(error | x)
    sigma = np.sqrt(r * (1 - r)) / m
    pi = optimal_inclusion(sigma, n)
    v_limit = model_limit(pred, ErrorRate().bind(pred), np.array([float(n)]))[0][0] ** 2
    assert v_limit == pytest.approx(np.sum((1 / pi[pi > 0] - 1) * sigma[pi > 0] ** 2))
    err = (rng.random((reps, m)) < r).astype(float)  # ℓ drawn from the model
    if design == "poisson":
        s = rng.random((reps, m)) < pi
    else:
        s = _systematic(pi, rng.random((reps, 1)))
        assert np.all(s.sum(axis=1) == n)
    resid = np.where(s, (err - r) / np.where(pi > 0, pi, 1.0), 0.0)
    sq = ((r.sum() + resid.sum(axis=1) - err.sum(axis=1)) / m) ** 2
    assert abs(sq.mean() - v_limit) <= 4 * sq.std() / np.sqrt(reps)


def test_model_limit_for_f1_to_first_order() -> None:
    """F1 (a ratio), labels drawn from the model, systematic sampling of a fixed n = 500 of
    m = 5000 with the optimal π, the ratio of the two difference estimators N̂/D̂ against the
    pool's realized F1: MSE = limit² within 4 MC standard errors (the second-order term is
    below the Monte-Carlo error at this n: 1.4% against an MC s.e. of 2.3%)."""
    rng, p1, pred = _pool(5, 5000, 0.6, 1.2)
    n, reps = 500, 4000
    meas = FMeasure(1.0, pos_label=1).bind(pred)
    f = pred.point_prediction()
    c = meas.intrinsic_value(pred, f)
    var, m_den = _conditional_variance(pred, meas, c, f)
    pi = optimal_inclusion(np.sqrt(var) / m_den.sum(), n)
    m_num = meas.conditional_expectations(pred, f)[0]
    v_limit = model_limit(pred, meas, np.array([float(n)]))[0][0] ** 2
    inv = np.where(pi > 0, 1 / np.where(pi > 0, pi, 1), 0.0)
    errs = []
    for _ in range(reps // 500):
        y = (rng.random((500, pred.n)) < p1).astype(int)
        s = _systematic(pi, rng.random((500, 1)))
        w, wl = meas.weight(f, y), meas.weight(f, y) * meas.loss(f, y)
        num = m_num.sum() + (s * inv * (wl - m_num)).sum(axis=1)
        den = m_den.sum() + (s * inv * (w - m_den)).sum(axis=1)
        errs.append(num / den - wl.sum(axis=1) / w.sum(axis=1))
    sq = np.concatenate(errs) ** 2
    assert abs(sq.mean() - v_limit) <= 4 * sq.std() / np.sqrt(reps)


def test_model_limit_on_the_pools_labels() -> None:
    """V_y, the limit's design and estimator on fixed labels: for the error rate under Poisson
    sampling the difference estimator's MSE over designs is exactly Σ(1/π − 1)e², checked by
    Monte-Carlo; infinite where the model is certain (π = 0) and wrong; NaN where the model's
    own value is undefined."""
    rng, p1, pred = _pool(2, 300, 0.5, 2.0)
    m, n, reps = 300, 30, 40_000
    meas = ErrorRate().bind(pred)
    f = pred.point_prediction()
    r = np.where(f == 1, 1 - p1, p1)
    y = (rng.random(m) < p1).astype(int)
    err = (f != y).astype(float)
    limit, on = model_limit(pred, meas, np.array([float(n)]), y)
    pi = optimal_inclusion(np.sqrt(r * (1 - r)) / m, n)
    s = rng.random((reps, m)) < pi
    sq = ((r.sum() + (s * (err - r) / pi).sum(axis=1) - err.sum()) / m) ** 2
    assert on is not None and abs(sq.mean() - on[0] ** 2) <= 4 * sq.std() / np.sqrt(reps)
    assert on[0] != limit[0]
    # A certain model (p = 0 or 1) that is wrong on one instance.
    proba = np.column_stack([1 - p1, p1])
    proba[0] = [1.0, 0.0]
    y[0] = 1
    sure = ae.Categorical(proba)
    assert model_limit(sure, ErrorRate().bind(sure), np.array([10.0]), y)[1] == [math.inf]
    # Precision of a model that never predicts the positive class: undefined.
    never = ae.Categorical(np.column_stack([np.full(m, 0.9), np.full(m, 0.1)]))
    with pytest.warns(ae.UndefinedEstimateWarning, match="intrinsic value is undefined"):
        lim, on = model_limit(never, Precision(pos_label=1).bind(never), np.array([10.0]), y)
    assert math.isnan(lim[0]) and on is not None and math.isnan(on[0])


def test_model_limit_for_f1_on_the_pools_labels() -> None:
    """V_y for a ratio: fixed labels from a distorted model (so the pool's F1 is far from the
    model's, 0.58 against 0.67), Poisson sampling of n = 500 of 5000 with the optimal π, the
    ratio N̂/D̂ of the two difference estimators against the pool's F1: MSE = V_y within 4 MC
    standard errors (1.9% of V_y; V_y at the model's F1 instead of the pool's is 23% off)."""
    rng, p1, pred = _pool(5, 5000, 0.6, 1.2)
    n, reps = 500, 8000
    meas = FMeasure(1.0, pos_label=1).bind(pred)
    f = pred.point_prediction()
    var, m_den = _conditional_variance(pred, meas, meas.intrinsic_value(pred, f), f)
    pi = optimal_inclusion(np.sqrt(var) / m_den.sum(), n)
    m_num = meas.conditional_expectations(pred, f)[0]
    y = (rng.random(pred.n) < p1**0.4).astype(int)
    on = model_limit(pred, meas, np.array([float(n)]), y)[1]
    assert on is not None
    w = meas.weight(f, y)
    wl = w * meas.loss(f, y)
    inv = np.where(pi > 0, 1 / np.where(pi > 0, pi, 1), 0.0)
    errs = []
    for _ in range(reps // 1000):
        s = rng.random((1000, pred.n)) < pi
        num = m_num.sum() + (s * inv * (wl - m_num)).sum(axis=1)
        den = m_den.sum() + (s * inv * (w - m_den)).sum(axis=1)
        errs.append(num / den - wl.sum() / w.sum())
    sq = np.concatenate(errs) ** 2
    assert abs(sq.mean() - on[0] ** 2) <= 4 * sq.std() / np.sqrt(reps)


def test_model_limit_where_the_pools_value_is_undefined() -> None:
    """F1 with no positive predicted or labeled: the limit is 0 (nothing to estimate), the
    labels' RMSE NaN, without warnings."""
    pred = ae.Categorical(np.column_stack([np.full(50, 0.9), np.full(50, 0.1)]))
    meas = FMeasure(1.0, pos_label=1).bind(pred)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lim, on = model_limit(pred, meas, np.array([5.0]), np.zeros(50, dtype=int))
    assert on is not None and math.isnan(on[0]) and lim[0] == 0.0


def test_draw_labels_follows_the_model() -> None:
    """Class frequencies of a 3-class model with string labels in unsorted columns, and a
    Gaussian's mean and variance, within 4 Monte-Carlo standard errors."""
    rng = np.random.default_rng(0)
    proba = np.array([[0.2, 0.5, 0.3], [0.0, 1.0, 0.0], [0.6, 0.0, 0.4]])
    pred = ae.Categorical(np.repeat(proba, 4000, axis=0), labels=["c", "a", "b"])
    y = draw_labels(pred, rng).reshape(3, 4000)
    for i in range(3):
        for k, lab in enumerate(["c", "a", "b"]):
            freq = np.mean(y[i] == lab)
            pk = proba[i, k]
            assert abs(freq - pk) <= 4 * np.sqrt(pk * (1 - pk) / 4000) + 1e-12
    g = ae.Gaussian(np.full(20_000, 2.0), np.full(20_000, 9.0))
    v = draw_labels(g, rng)
    assert abs(v.mean() - 2.0) <= 4 * 3.0 / np.sqrt(20_000)
    assert abs(v.var() - 9.0) <= 4 * 9.0 * np.sqrt(2 / 20_000)
    with pytest.raises(TypeError, match="cannot draw labels"):
        draw_labels(ae.Mixture([pred, pred]), rng)


def test_limit_scatter_quantiles_and_a_zero_limit() -> None:
    """The quantiles are those of √(V_y/V) over the same label vectors computed directly; a
    budget that labels every uncertain instance has limit 0 and no scatter."""
    _, _, pred = _pool(3, 300, 0.5, 2.0)
    meas = ErrorRate().bind(pred)
    b = np.array([20.0, 400.0])
    lo, hi = limit_scatter(pred, meas, b, reps=30, seed=7)
    rng = np.random.default_rng(7)
    lim = model_limit(pred, meas, b)[0]
    ratios = [model_limit(pred, meas, b, draw_labels(pred, rng))[1][0] / lim[0] for _ in range(30)]
    assert lo[0] == pytest.approx(np.percentile(ratios, 10), rel=1e-12)
    assert hi[0] == pytest.approx(np.percentile(ratios, 90), rel=1e-12)
    assert lim[1] == 0.0 and math.isnan(lo[1]) and math.isnan(hi[1])


def test_limit_scatter_brackets_one_for_a_right_model() -> None:
    _, _, pred = _pool(3, 2000, 0.5, 2.0)
    lo, hi = limit_scatter(pred, ErrorRate().bind(pred), np.array([50.0, 200.0]), reps=60)
    assert all(a < 1.0 < b for a, b in zip(lo, hi, strict=True))
    again = limit_scatter(pred, ErrorRate().bind(pred), np.array([50.0, 200.0]), reps=60)
    assert (lo, hi) == again


def test_limit_table_withholds_the_limit_where_the_labels_contradict_the_model() -> None:
    from reproduce import assisted

    def row(rmse: float, on: float) -> dict:
        lim = {"mae": [np.sqrt(2 / np.pi) * rmse], "rmse": [rmse], "rmse_labels": [on],
               "labels_scatter": [[0.9], [1.1]]}  # fmt: skip
        return {"task": "t", "model": "m", "measure": "error_rate", "budgets": [100.0],
                "methods": {assisted.LIMIT: lim, assisted.DEFAULT: {"rmse": [0.02]},
                            "peer x": {"mae": [0.02]}}}  # fmt: skip

    rows = [row(0.01, 0.011), row(0.01, math.inf), row(0.0, 0.0), row(0.01, 0.003),
            row(0.01, 0.015)]  # fmt: skip
    rows[2]["methods"][assisted.LIMIT]["labels_scatter"] = [[math.nan], [math.nan]]
    ppi = row(0.01, 0.011)  # a PPI++ peer records its RMSE: the limit is set against that
    ppi["methods"]["peer x"]["rmse"] = [0.025]
    body = [x for x in assisted._limit_table([*rows, ppi], {}) if x.startswith("| t / m")]
    assert body[0] == "| t / m / error_rate | 100 | 0.0100 | 2.00 | 1.10 | 0.90–1.10 | 0.40 |"
    assert body[1].endswith("| – | ∞ | 0.90–1.10 | – |")  # a certain model that is wrong
    assert body[2] == "| t / m / error_rate | 100 | 0.0000 | – | – | – | – |"
    assert body[3].endswith("| – | 0.30 | 0.90–1.10 | – |")  # contradicted: below ÷2
    assert body[4].endswith("| 2.00 | 1.50* | 0.90–1.10 | 0.40 |")  # outside the range
    assert body[5].endswith("| 0.40 |") and "| 2.00 | 1.10 |" in body[5]
    ppi["methods"]["peer x"]["rmse"] = [0.02]
    assert assisted._limit_table([ppi], {})[-2].endswith("| 0.50 |")
