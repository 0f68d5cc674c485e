"""The Godambe–Joshi limit the model-assisted benchmark reports (experiments.assisted):
the optimal inclusion probabilities against a numerical optimizer, the limit against the
label-space enumeration of the model's conditional variance, and against a Monte-Carlo of the
difference estimator it is reached by."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

import activeeval as ae
from activeeval.experiments.assisted import model_limit, optimal_inclusion
from activeeval.measures import ErrorRate, FMeasure


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
    # One cap: σ = (10, 1, 1), n = 2 → π = (1, 1/2, 1/2).
    np.testing.assert_allclose(optimal_inclusion(np.array([10.0, 1.0, 1.0]), 2), [1, 0.5, 0.5])


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
    return float(np.sqrt(2 / np.pi * np.sum((1 / pi[keep] - 1) * sigma[keep] ** 2)))


@pytest.mark.parametrize("measure", [ErrorRate(), FMeasure(1.0, pos_label=1), FMeasure(0.5)])
def test_model_limit_matches_the_enumerated_conditional_variance(measure) -> None:
    rng = np.random.default_rng(4)
    m = 300
    p1 = rng.beta(0.4, 1.5, m)
    proba = np.column_stack([1 - p1, p1])
    pred = ae.Categorical(proba)
    meas = measure.bind(pred)
    budgets = np.array([10.0, 40.0, 150.0])
    got = model_limit(pred, meas, budgets)
    want = [_limit_by_enumeration(proba, meas, int(n)) for n in budgets]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert got[0] > got[1] > got[2] > 0


def test_model_limit_is_reached_by_the_difference_estimator() -> None:
    """Error rate, labels drawn from the model, Poisson sampling with the optimal π: the
    difference estimator mean(r) + Σ_s (ℓ − r)/(mπ) has E(error²) = Σ(1/π − 1)σ² exactly;
    its Monte-Carlo mean square error matches the limit's V within 4 MC standard errors."""
    rng = np.random.default_rng(11)
    m, n, reps = 400, 40, 20_000
    p1 = rng.beta(0.5, 3.0, m)
    pred = ae.Categorical(np.column_stack([1 - p1, p1]))
    meas = ErrorRate().bind(pred)
    f = pred.point_prediction()
    r = np.where(f == 1, 1 - p1, p1)  # model's P(error | x)
    sigma = np.sqrt(r * (1 - r)) / m
    pi = optimal_inclusion(sigma, n)
    v_limit = (np.pi / 2) * model_limit(pred, meas, np.array([float(n)]))[0] ** 2
    assert v_limit == pytest.approx(np.sum((1 / pi[pi > 0] - 1) * sigma[pi > 0] ** 2))
    err = (rng.random((reps, m)) < r).astype(float)  # ℓ drawn from the model
    s = rng.random((reps, m)) < pi
    resid = np.where(s, (err - r) / np.where(pi > 0, pi, 1.0), 0.0)
    e = (r.sum() + resid.sum(axis=1) - err.sum(axis=1)) / m
    sq = e**2
    assert abs(sq.mean() - v_limit) <= 4 * sq.std() / np.sqrt(reps)
