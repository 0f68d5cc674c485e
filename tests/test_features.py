"""Pool features as a second control variate of the model-assisted estimator: the smoother
and the estimate against direct sums written out here, unbiasedness, variance reduction and
coverage by seeded Monte-Carlo, power tuning against uninformative features, and the
errors for features that cannot be used."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.sparse

import activeeval as ae
import activeeval.estimators.assisted as assisted_module
import activeeval.estimators.smoother as smoother_module
from activeeval import Session
from activeeval.errors import NonFiniteError, ShapeError
from activeeval.estimators.assisted import assisted_estimate
from activeeval.session import report as session_report


def _clustered_pool(seed: int = 0, m: int = 1500, clusters: int = 40, models: int = 1):
    """Binary labels that are (nearly) constant within tight clusters of the features, and a
    model that sees each cluster's class through noise of its own per cluster, so that it
    gets whole clusters wrong: its residuals are predictable from the neighbours' labels,
    not from the model. With ``models`` = 2, the pool with two such models, each with noise
    of its own: then which model is right is shared by neighbours."""
    rng = np.random.default_rng(seed)
    centre = 3.0 * rng.normal(size=(clusters, 4))
    c = rng.integers(clusters, size=m)
    x = centre[c] + 0.03 * rng.normal(size=(m, 4))
    theta = rng.beta(0.1, 0.1, size=clusters)  # each cluster's P(y = 1), mostly near 0 or 1
    y = (rng.random(m) < theta[c]).astype(int)
    cats = []
    for _ in range(models):
        belief = 0.5 + 0.4 * (theta - 0.5) + 0.25 * rng.normal(size=clusters)
        p1 = np.clip(belief[c] + 0.02 * rng.normal(size=m), 0.02, 0.98)
        cats.append(ae.Categorical(np.column_stack([1 - p1, p1])))
    return (*cats, y, x)


def _standardize(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=0)) / x.std(axis=0)


def _smoother_by_loops(z, units, resid, h, delta=None, groups=None):
    """s(x) = Σ_{i ≠ x} δ_i K(x, x_i) r_i / (Σ_{i ≠ x} δ_i K(x, x_i) + 1), one pool row at a
    time (δ ≡ 1 unless given), the sums over units in x's group if ``groups`` are given."""
    delta = np.ones(units.shape[0]) if delta is None else delta
    out = np.zeros((z.shape[0], resid.shape[1]))
    for x in range(z.shape[0]):
        num, den = np.zeros(resid.shape[1]), 1.0
        for i, u in enumerate(units):
            if u == x or (groups is not None and groups[u] != groups[x]):
                continue
            k = delta[i] * math.exp(-float(np.sum((z[x] - z[u]) ** 2)) / (2 * h * h))
            num += k * resid[i]
            den += k
        out[x] = num / den
    return out


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("block", [7, 1 << 22])
def test_smoother_equals_the_direct_sums(monkeypatch, block: int, grouped: bool) -> None:
    rng = np.random.default_rng(3)
    z = rng.normal(size=(60, 3))
    z[5] = z[17]  # an exact duplicate of a labeled instance
    units = np.sort(rng.choice(60, 12, replace=False))
    units = np.union1d(units, [17])
    resid = rng.normal(size=(units.shape[0], 2))
    p = rng.dirichlet(np.ones(60))
    groups = rng.integers(3, size=60) if grouped else None
    if grouped:
        groups[5] = groups[17]
    monkeypatch.setattr(smoother_module, "_KERNEL_BLOCK", block)  # blocks of one unit's row
    v = rng.uniform(0.5, 2.0, units.shape[0])
    mean, at, (mean_i, t_i) = smoother_module._smoothed(z, units, resid, p, 0.8, v, groups)
    ref = _smoother_by_loops(z, units, resid, 0.8, groups=groups)
    np.testing.assert_allclose(mean, p @ ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(at, ref[units], rtol=1e-12, atol=1e-15)
    # Deleting unit i, to first order: s₍ᵢ₎ = s − ∂s/∂δ_i, the derivative by central
    # differences of the loop version in unit i's weight δ_i.
    eps = 1e-5
    for i in range(units.shape[0]):
        up, down = np.ones(units.shape[0]), np.ones(units.shape[0])
        up[i], down[i] = 1 + eps, 1 - eps
        ds = (
            _smoother_by_loops(z, units, resid, 0.8, up, groups)
            - _smoother_by_loops(z, units, resid, 0.8, down, groups)
        ) / (2 * eps)
        s_i = ref - ds
        np.testing.assert_allclose(mean_i[i], p @ s_i, rtol=1e-7, atol=1e-10)
        others = np.arange(units.shape[0]) != i
        np.testing.assert_allclose(t_i[i], v[others] @ s_i[units[others]], rtol=1e-7, atol=1e-10)
    # The duplicate takes (almost) the whole of unit 17's residual; unit 17 not its own.
    assert abs(ref[5, 0] - resid[units == 17, 0][0]) < abs(ref[17, 0] - resid[units == 17, 0][0])


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_fixed_power_estimate_is_the_written_out_difference_estimator(measure: str) -> None:
    """With power = 1 both control variates enter at coefficient 1: N̂ = Σ_x p (m_N + s_N) +
    Σ_S v (wℓ − m_N − s_N) / Σ_S v, D̂ likewise, v = p/π (the finite-population form), s the
    leave-one-out smoother over standardized features among instances of the same predicted
    class."""
    cat, y, x = _clustered_pool(1, m=400, clusters=40)
    meas = ae.get_measure(measure, pos_label=1).bind(cat)
    f = cat.point_prediction()
    q = ae.sampling.optimal_distribution(cat, meas)
    idx = ae.sampling.draw(q, 90, random_state=2)
    units = np.unique(idx)
    est = assisted_estimate(
        meas, cat, idx, y[idx], pool_q=q, power=1.0, features=x, bias_correction=False
    )
    m = cat.n
    p = np.full(m, 1 / m)
    pi = ae.sampling.inclusion_probabilities(q, units.shape[0])[units]
    v = p[units] / pi
    w = meas.weight(f[units], y[units])
    wl = w * meas.loss(f[units], y[units])
    mn, md = meas.conditional_expectations(cat, f)
    resid = np.column_stack([wl - mn[units], w - md[units]])
    s = _smoother_by_loops(
        _standardize(x), units, resid, smoother_module.DEFAULT_BANDWIDTH, groups=f
    )
    e_num = wl - mn[units] - s[units, 0]
    e_den = w - md[units] - s[units, 1]
    num = p @ (mn + s[:, 0]) + (v @ e_num) / v.sum()
    den = p @ (md + s[:, 1]) + (v @ e_den) / v.sum()
    assert est.estimate == pytest.approx(num / den, abs=1e-12)
    assert (est.power, est.feature_power) == (1.0, 1.0)
    # Standard error: the jackknife ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎), row i deleted from the
    # sample and from the smoother, s₍ᵢ₎(x) = s(x) − K(x, x_i)(r_i − s(x))/(W(x) + 1) (the
    # derivative in unit i's weight), combined by Hájek's Σ (1 − π)(ε − Â)².
    z = _standardize(x)
    kern = np.exp(-((z[:, None, :] - z[units][None]) ** 2).sum(-1) / (2 * 0.3**2))
    kern[units, np.arange(units.shape[0])] = 0.0
    kern *= f[:, None] == f[units][None]
    scale = kern / (kern.sum(axis=1) + 1.0)[:, None]  # (m, n)
    eps = np.empty(units.shape[0])
    for i in range(units.shape[0]):
        keep = np.arange(units.shape[0]) != i
        g_i = []
        for col, (terms, base) in enumerate(((wl, mn), (w, md))):
            s_i = s[:, col] - scale[:, i] * (resid[i, col] - s[:, col])
            direct = terms[keep] - base[units[keep]] - s_i[units[keep]]
            g_i.append(p @ (base + s_i) + (v[keep] @ direct) / v[keep].sum())
        eps[i] = (1 - v[i] / v.sum()) * (num / den - g_i[0] / g_i[1])
    c = 1 - pi
    se = math.sqrt(c @ (eps - (c @ eps) / c.sum()) ** 2)
    assert est.stderr == pytest.approx(se, rel=1e-9)
    # The smoothed residuals change the estimate: this pool's clusters predict them.
    plain = assisted_estimate(meas, cat, idx, y[idx], pool_q=q, power=1.0, bias_correction=False)
    assert abs(plain.estimate - est.estimate) > 1e-3


def test_constant_features_give_the_estimator_without_features() -> None:
    cat, y, _ = _clustered_pool(2)
    q = ae.sampling.optimal_distribution(cat, "f1", pos_label=1)
    idx = ae.sampling.draw(q, 150, random_state=4)
    plain = assisted_estimate("f1", cat, idx, y[idx], pool_q=q, pos_label=1)
    flat = assisted_estimate(
        "f1", cat, idx, y[idx], pool_q=q, pos_label=1, features=np.ones((cat.n, 2))
    )
    assert flat.estimate == plain.estimate
    assert flat.stderr == plain.stderr
    assert flat.feature_power == 0.0 and plain.feature_power is None


def _campaigns(cat, y, features, method: str, reps: int, budget: int = 100):
    """evaluate() without and with features on the same draws (same seed, same q)."""

    def oracle(i):
        return y[i]

    out = np.empty((reps, 2, 3))
    for r in range(reps):
        for j, feats in enumerate((None, features)):
            res = ae.evaluate(cat, oracle, "error_rate", budget, method, random_state=r,
                              features=feats)  # fmt: skip
            out[r, j] = res.estimate, res.ci[0], res.ci[1]
    return out


@pytest.mark.parametrize("method", ["passive", "active"])
def test_features_unbiased_cover_and_cut_the_error_where_neighbours_share_labels(
    method: str,
) -> None:
    """Seeded Monte-Carlo, 300 campaigns of 100 labels on the clustered pool: with features
    the bias is within 4 MC standard errors of 0, the 95% interval covers within 3 MC
    standard errors of 0.95, and the mean squared error is lower than without features by
    more than 4 standard errors of the paired difference."""
    cat, y, x = _clustered_pool(0)
    truth = float(np.mean(cat.point_prediction() != y))
    reps = 300
    _unbiased_covering_and_better(_campaigns(cat, y, x, method, reps), truth)


def _unbiased_covering_and_better(out: np.ndarray, truth: float) -> None:
    """``out`` (reps, 2, 3): estimate and interval without [:, 0] and with [:, 1] features on
    the same draws. With features: bias within 4 MC standard errors of 0, coverage within 3
    MC standard errors of 0.95, MSE lower by more than 4 standard errors of the paired
    difference and below 0.8 of the MSE without."""
    reps = out.shape[0]
    err = out[:, :, 0] - truth
    assert abs(err[:, 1].mean()) < 4 * err[:, 1].std() / math.sqrt(reps)
    cover = np.mean((out[:, 1, 1] <= truth) & (truth <= out[:, 1, 2]))
    assert abs(cover - 0.95) < 3 * math.sqrt(0.95 * 0.05 / reps)
    gain = err[:, 1] ** 2 - err[:, 0] ** 2
    assert gain.mean() + 4 * gain.std() / math.sqrt(reps) < 0
    assert (err[:, 1] ** 2).mean() < 0.8 * (err[:, 0] ** 2).mean()


def test_uninformative_features_cost_at_most_ten_percent() -> None:
    """Features that are pure noise (independent of everything): power tuning keeps the
    estimator within 10% of the one without features (MAE, same draws, 300 campaigns on a
    well-specified pool)."""
    rng = np.random.default_rng(5)
    m = 1500
    proba = rng.dirichlet([0.4, 0.4], size=m)
    y = (rng.random(m) > proba[:, 0]).astype(int)
    cat = ae.Categorical(proba)
    noise = rng.normal(size=(m, 3))
    truth = float(np.mean(cat.point_prediction() != y))
    out = _campaigns(cat, y, noise, "active", 300)
    mae = np.abs(out[:, :, 0] - truth).mean(axis=0)
    assert mae[1] <= 1.10 * mae[0]


def test_evaluate_and_sessions_report_the_same_estimate_with_features(tmp_path) -> None:
    cat, y, x = _clustered_pool(4)

    def oracle(i):
        return y[i]

    res = ae.evaluate(cat, oracle, "f1", 120, random_state=9, pos_label=1, features=x)
    ref = assisted_estimate(
        "f1", cat, res.indices, res.labels,
        pool_q=ae.sampling.optimal_distribution(cat, "f1", pos_label=1), pos_label=1, features=x,
    )  # fmt: skip
    assert res.estimate == pytest.approx(ref.estimate, rel=1e-12)
    assert res.stderr == pytest.approx(ref.stderr, rel=1e-12)
    assert res.inference.feature_power == pytest.approx(ref.feature_power, abs=1e-12)
    s = Session.create(tmp_path / "s.db", cat.proba, "f1", 120, seed=9, block_size=100_000,
                       pos_label=1)  # fmt: skip
    while ids := s.next_batch(40):
        s.record({i: int(y[i]) for i in ids})
    got = s.estimate(features=x)
    assert (got.estimate, got.stderr, got.ci) == (res.estimate, res.stderr, res.ci)
    np.testing.assert_array_equal(got.indices, res.indices)
    np.testing.assert_array_equal(got.q, res.q)
    np.testing.assert_array_equal(got.labels, res.labels)
    assert (got.n_labels, got.n_draws, got.cost) == (res.n_labels, res.n_draws, res.cost)
    traj = s.trajectory(5, features=x)
    assert traj["estimate"].iloc[-1] == res.estimate
    wide = ae.evaluate(cat, oracle, "f1", 120, random_state=9, pos_label=1, features=x,
                       bandwidth=2.0)  # fmt: skip
    assert s.estimate(features=x, bandwidth=2.0).estimate == wide.estimate != res.estimate
    # Batch-adaptive draws keep each draw's q, in the with-replacement form.
    b = ae.evaluate(cat, oracle, "f1", 120, random_state=9, pos_label=1, features=x,
                    batch_size=40)  # fmt: skip
    ref_b = assisted_estimate("f1", cat, b.indices, b.labels, b.q, pos_label=1, features=x,
                              bias_correction=False)  # fmt: skip
    assert b.estimate == pytest.approx(ref_b.estimate, rel=1e-12)
    assert b.stderr == pytest.approx(ref_b.stderr, rel=1e-12)


def test_features_that_cannot_be_used_are_refused_before_any_label(tmp_path) -> None:
    cat, y, x = _clustered_pool(5, m=200, clusters=20)
    asked = []

    def oracle(i):
        asked.append(i)
        return y[i]

    bad = x.copy()
    bad[7, 2] = np.nan
    with pytest.raises(NonFiniteError, match=r"features: entry \(7, 2\)"):
        ae.evaluate(cat, oracle, "error_rate", 50, features=bad)
    with pytest.raises(ShapeError, match=r"features: need one row .* \(200, d\)"):
        ae.evaluate(cat, oracle, "error_rate", 50, features=x[:-1])
    with pytest.raises(ShapeError, match="features: only the model-assisted estimator"):
        ae.evaluate(cat, oracle, "error_rate", 50, estimator="snis", features=x)
    with pytest.raises(ShapeError, match="features: only the model-assisted estimator"):
        ae.evaluate(cat, oracle, "error_rate", 50, method="stratified", features=x)
    with pytest.raises(ShapeError, match="features: need a dense real array; a sparse"):
        ae.evaluate(cat, oracle, "error_rate", 50, features=scipy.sparse.csr_matrix(x))
    huge = x.copy()
    huge[:2, 1] = 1e308  # finite, but its mean and spread overflow
    with pytest.raises(ShapeError, match="features: column 1 has values too large"):
        ae.evaluate(cat, oracle, "error_rate", 50, features=huge)
    with pytest.raises(ShapeError, match=r"bandwidth: .* positive number"):
        ae.evaluate(cat, oracle, "error_rate", 50, features=x, bandwidth=1e-300)
    assert asked == []
    idx = np.arange(30)
    for h in (0.0, "0.3", math.inf, True):
        with pytest.raises(ShapeError, match=r"bandwidth: .* positive number"):
            assisted_estimate("error_rate", cat, idx, y[idx], features=x, bandwidth=h)
    s = Session.create(tmp_path / "s.db", cat.proba, "error_rate", 20, seed=1)
    with pytest.raises(ShapeError, match="features: only the model-assisted estimator"):
        s.estimate(estimator="snis", features=x)
    with pytest.raises(ShapeError, match=r"features: need one row"):
        s.estimate(features=x[:, :, None])


def test_ranking_pools_refuse_features() -> None:
    rng = np.random.default_rng(0)
    offsets = np.arange(0, 31, 3)  # 10 queries of 3 items
    rel = ae.GradedRelevance(rng.dirichlet(np.ones(3), size=30), offsets)
    with pytest.raises(ShapeError, match="not ranking pools; drop features"):
        ae.evaluate(rel, lambda i: None, "dcg", 5, features=np.zeros((10, 2)))


# ------------------------------------------------------------------------ comparisons


def _written_out(meas, mix, f, y, units, v, pi, z, lam, groups):
    """One model's estimate with the mixture's control variate and the smoothed residuals
    (within ``groups``) both at coefficient ``lam``, and its jackknife ε_i (row i deleted
    from the sample and, to first order, from the smoother), directly from the formulas of
    the module docstring."""
    w = meas.weight(f[units], y[units])
    wl = w * meas.loss(f[units], y[units])
    mn, md = meas.conditional_expectations(mix, f)
    p = np.full(f.shape[0], 1 / f.shape[0])
    resid = np.column_stack([wl - mn[units], w - md[units]])
    s = _smoother_by_loops(z, units, resid, smoother_module.DEFAULT_BANDWIDTH, groups=groups)
    kern = np.exp(-((z[:, None, :] - z[units][None]) ** 2).sum(-1) / (2 * 0.3**2))
    kern[units, np.arange(units.shape[0])] = 0.0
    kern *= groups[:, None] == groups[units][None]
    scale = kern / (kern.sum(axis=1) + 1.0)[:, None]

    def ratio(keep, shift):
        parts = []
        for col, (terms, base) in enumerate(((wl, mn), (w, md))):
            sc = s[:, col] - shift[:, col]
            direct = terms[keep] - lam * base[units[keep]] - lam * sc[units[keep]]
            parts.append(lam * (p @ (base + sc)) + (v[keep] @ direct) / v[keep].sum())
        return parts[0] / parts[1]

    every = np.ones(units.shape[0], dtype=bool)
    g = ratio(every, np.zeros_like(s))
    eps = np.empty(units.shape[0])
    for i in range(units.shape[0]):
        keep = every.copy()
        keep[i] = False
        shift = scale[:, [i]] * (resid[i] - s)
        eps[i] = (1 - v[i] / v.sum()) * (g - ratio(keep, shift))
    return g, eps


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_pair_with_features_at_fixed_power_is_the_written_out_difference(measure: str) -> None:
    """Two models, power = 0.7: the mixture of the models (eq. 5.11) and each model's
    smoothed residuals under it both at coefficient 0.7; Δ̂ = Ĝ₀ − Ĝ₁ and its standard error
    from the difference of the two models' jackknife influences, by Hájek's variance."""
    a, b, y, x = _clustered_pool(6, m=300, clusters=30, models=2)
    mix = ae.Mixture([a, b])
    meas = ae.get_measure(measure, pos_label=1).bind(mix)
    q = ae.sampling.comparison_distribution([a, b], meas)
    idx = ae.sampling.draw(q, 70, random_state=3)
    units = np.unique(idx)
    pi = ae.sampling.inclusion_probabilities(q, units.shape[0])[units]
    v = (1 / a.n) / pi
    z = _standardize(x)
    got = assisted_module.assisted_paired_test(
        meas, [a, b], idx, y[idx], pool_q=q, power=0.7, features=x
    )
    groups = 2 * a.point_prediction() + b.point_prediction()  # both models' predictions
    (g0, e0), (g1, e1) = (
        _written_out(meas, mix, pr.point_prediction(), y, units, v, pi, z, 0.7, groups)
        for pr in (a, b)
    )
    assert got.estimates == pytest.approx((g0, g1), abs=1e-12)
    assert got.difference == pytest.approx(g0 - g1, abs=1e-12)
    d, c = e0 - e1, 1 - pi
    assert got.stderr == pytest.approx(math.sqrt(c @ (d - (c @ d) / c.sum()) ** 2), rel=1e-9)
    assert got.feature_power == 0.7
    # Three models: the same sums under the mixture of all three, one coefficient for all.
    third = ae.Categorical(np.column_stack([1 - a.proba[:, 1] ** 2, a.proba[:, 1] ** 2]))
    mix3 = ae.Mixture([a, b, third])
    mc = assisted_module.assisted_multiple_comparison(
        meas, [a, b, third], idx, y[idx], pool_q=q, power=0.7, features=x
    )
    groups3 = 2 * groups + third.point_prediction()
    want = [
        _written_out(meas, mix3, pr.point_prediction(), y, units, v, pi, z, 0.7, groups3)[0]
        for pr in (a, b, third)
    ]
    np.testing.assert_allclose(mc.estimates, want, rtol=0, atol=1e-12)
    assert mc.feature_power == 0.7


def test_comparisons_report_the_features_coefficient() -> None:
    """``feature_power`` of a pair and of k models: None without features; with constant
    features 0 and the comparison without features, bit for bit; tuned on a pool whose
    clusters predict the residuals, inside (0, 1] and carried by ``compare``'s result."""
    a, b, c, y, x = _clustered_pool(7, m=600, clusters=30, models=3)
    q = ae.sampling.comparison_distribution([a, b], "error_rate")
    idx = ae.sampling.draw(q, 120, random_state=2)
    flat = np.ones((a.n, 2))
    for fn, preds in (
        (assisted_module.assisted_paired_test, [a, b]),
        (assisted_module.assisted_multiple_comparison, [a, b, c]),
    ):
        plain = fn("error_rate", preds, idx, y[idx], pool_q=q)
        same = fn("error_rate", preds, idx, y[idx], pool_q=q, features=flat)
        tuned = fn("error_rate", preds, idx, y[idx], pool_q=q, features=x)
        assert plain.feature_power is None and same.feature_power == 0.0
        np.testing.assert_array_equal(same.estimates, plain.estimates)
        assert 0.0 < tuned.feature_power <= 1.0
    res = ae.compare([a, b], lambda i: y[i], "error_rate", 120, random_state=4, features=x)
    ref = assisted_module.assisted_paired_test(
        "error_rate", [a, b], res.indices, res.labels, pool_q=q, features=x
    )
    assert res.comparison.feature_power == ref.feature_power
    # A census (every instance labeled) is exact and uses no control variate.
    a, b, _, y, x = _clustered_pool(7, m=40, clusters=8, models=3)
    census = ae.compare([a, b], lambda i: y[i], "error_rate", a.n, random_state=4, features=x)
    assert census.n_labels == a.n and census.stderr == 0.0
    assert census.comparison.feature_power == 0.0


def test_pair_with_features_is_unbiased_covers_and_gains_where_neighbours_agree() -> None:
    """Seeded Monte-Carlo, 300 comparisons of 100 labels (comparison q) on the clustered pool,
    with and without features on the same draws: with features Δ̂ has no bias beyond 4 MC
    standard errors, the 95% interval for Δ covers within 3 MC standard errors of 0.95, and
    the mean squared error is lower by more than 4 standard errors of the paired
    difference, and below 0.8 of the MSE without (measured: 0.28)."""
    a, b, y, x = _clustered_pool(0, models=2)
    truth = float(np.mean(a.point_prediction() != y) - np.mean(b.point_prediction() != y))
    reps = 300
    out = np.empty((reps, 2, 3))
    for r in range(reps):
        for j, feats in enumerate((None, x)):
            res = ae.compare([a, b], lambda i: y[i], "error_rate", 100, random_state=r,
                             features=feats)  # fmt: skip
            out[r, j] = res.difference, res.ci[0], res.ci[1]
    _unbiased_covering_and_better(out, truth)


def test_compare_and_comparison_sessions_agree_with_features(tmp_path) -> None:
    a, b, c, y, x = _clustered_pool(7, m=600, clusters=30, models=3)

    def oracle(i):
        return y[i]

    res = ae.compare([a, b], oracle, "f1", 120, random_state=4, pos_label=1, features=x)
    q = ae.sampling.comparison_distribution([a, b], "f1", pos_label=1)
    ref = assisted_module.assisted_paired_test(
        "f1", [a, b], res.indices, res.labels, pool_q=q, pos_label=1, features=x
    )
    assert (res.difference, res.stderr) == (ref.difference, ref.stderr)
    plain = ae.compare([a, b], oracle, "f1", 120, random_state=4, pos_label=1)
    assert plain.difference != res.difference
    s = Session.create(tmp_path / "s.db", [a.proba, b.proba], "f1", 120, seed=4,
                       block_size=100_000, pos_label=1)  # fmt: skip
    while ids := s.next_batch(50):
        s.record({i: int(y[i]) for i in ids})
    got = s.compare(features=x)
    assert (got.difference, got.stderr, got.ci) == (res.difference, res.stderr, res.ci)
    assert isinstance(got, ae.ComparisonResult) and got.stopped is None
    np.testing.assert_array_equal(got.indices, res.indices)
    np.testing.assert_array_equal(got.q, res.q)
    np.testing.assert_array_equal(got.labels, res.labels)
    assert (got.n_labels, got.n_draws, got.cost) == (res.n_labels, res.n_draws, res.cost)
    assert (got.budget, got.method) == (res.budget, res.method)
    assert s.trajectory(4, features=x)["estimate"].iloc[-1] == res.difference
    three = [a, b, c]
    res3 = ae.compare(three, oracle, "error_rate", 150, random_state=5, features=x)
    q3 = ae.sampling.comparison_distribution(three, "error_rate")
    mc = assisted_module.assisted_multiple_comparison(
        "error_rate", three, res3.indices, res3.labels, pool_q=q3, features=x
    )
    np.testing.assert_array_equal(res3.estimates, mc.estimates)


def test_comparisons_refuse_features_they_cannot_use(tmp_path) -> None:
    a, b, y, x = _clustered_pool(8, m=200, clusters=20, models=2)
    asked = []

    def oracle(i):
        asked.append(i)
        return y[i]

    for kw in ({"estimator": "snis"}, {"method": "active_neq"}):
        with pytest.raises(ShapeError, match="features: only the model-assisted estimator"):
            ae.compare([a, b], oracle, "error_rate", 50, features=x, **kw)
    with pytest.raises(ShapeError, match=r"features: need one row .* \(200, d\)"):
        ae.compare([a, b], oracle, "error_rate", 50, features=x[:10])
    with pytest.raises(ShapeError, match=r"bandwidth: .* positive number"):
        ae.compare([a, b], oracle, "error_rate", 50, features=x, bandwidth=-1.0)
    assert asked == []
    s = Session.create(tmp_path / "s.db", [a.proba, b.proba], "error_rate", 20, seed=1)
    with pytest.raises(ShapeError, match="features: only the model-assisted estimator"):
        s.compare(estimator="snis", features=x)
    rng = np.random.default_rng(0)
    offsets = np.arange(0, 31, 3)
    rel = [ae.GradedRelevance(rng.dirichlet(np.ones(3), size=30), offsets) for _ in range(2)]
    with pytest.raises(ShapeError, match="not ranking pools; drop features"):
        ae.compare(rel, lambda i: None, "dcg", 5, features=np.zeros((10, 2)))


def test_smoother_groups_are_the_models_point_predictions() -> None:
    """One classifier: its predicted classes (string labels too); several: the tuple of
    their predicted classes; continuous predictions: which models predict equal values (one
    regressor: no groups)."""
    from activeeval.estimators.assisted import _prediction_groups

    a = ae.Categorical(np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]]), ["n", "y"])
    b = ae.Categorical(np.array([[0.1, 0.9], [0.2, 0.8], [0.6, 0.4], [0.8, 0.2]]), ["n", "y"])
    fa, fb = a.point_prediction(), b.point_prediction()
    ga = _prediction_groups([a], [fa])
    assert (ga[0] == ga[2]) and (ga[1] == ga[3]) and ga[0] != ga[1]
    gab = _prediction_groups([a, b], [fa, fb])  # (n,y) (y,y) (n,n) (y,n): four groups
    assert np.unique(gab).size == 4
    g1 = ae.Gaussian(np.array([1.0, 2.0, 3.0]), np.ones(3))
    g2 = ae.Gaussian(np.array([1.0, 2.5, 3.0]), np.ones(3))
    assert _prediction_groups([g1], [g1.point_prediction()]) is None
    g12 = _prediction_groups([g1, g2], [g1.point_prediction(), g2.point_prediction()])
    assert g12[0] == g12[2] != g12[1]
    same = _prediction_groups([g1, g1], [g1.point_prediction()] * 2)
    assert same is None  # the models agree everywhere: one group
    mixed = ae.Mixture([a, b])  # a mixture of classifiers is a classifier
    collapsed = mixed.collapse()
    np.testing.assert_array_equal(
        _prediction_groups([mixed], [mixed.point_prediction()]),
        _prediction_groups([collapsed], [collapsed.point_prediction()]),
    )
    # The codes are the rank of each row of predicted classes among the distinct rows.
    rng = np.random.default_rng(3)
    three = [ae.Categorical(rng.dirichlet(np.ones(5), size=500)) for _ in range(3)]
    fs = [c.point_prediction() for c in three]
    rows = np.column_stack(fs)
    np.testing.assert_array_equal(
        _prediction_groups(three, fs), np.unique(rows, axis=0, return_inverse=True)[1].ravel()
    )
    # 35 models of 3 classes: place values near 3^34 > 2^53, exact only in integers.
    k = 35
    rows = np.array([[1] + [0] * (k - 1), [0] + [2] * (k - 1), [1] * k, [2] * k, [0] * k])
    many = [ae.Categorical(np.eye(3)[rows[:, j]] * 0.9 + 0.1 / 3) for j in range(k)]
    np.testing.assert_array_equal(
        _prediction_groups(many, [c.point_prediction() for c in many]),
        np.unique(rows, axis=0, return_inverse=True)[1].ravel(),
    )


def test_with_replacement_form_holds_the_smoother_fixed() -> None:
    """Draws as rows (v = p/q per draw, e.g. a batch-adaptive campaign): the jackknife deletes
    row i from the sample only, with s held fixed, whether or not some draw repeats (written
    out at power 1: ε_i = (Ĝ − Ĝ₍ᵢ₎)(1 − v_i/Σv), centred, SE = sqrt(Σ ε²))."""
    cat, y, x = _clustered_pool(3, m=300, clusters=30)
    meas = ae.get_measure("error_rate").bind(cat)
    f = cat.point_prediction()
    q = ae.sampling.optimal_distribution(cat, meas)
    z = _standardize(x)
    mn, _ = meas.conditional_expectations(cat, f)
    for draws, seed in ((25, 3), (400, 1)):  # distinct draws, and draws with repeats
        idx = ae.sampling.draw(q, draws, random_state=seed)
        got = assisted_estimate(meas, cat, idx, y[idx], q[idx], power=1.0, features=x)
        units = np.unique(idx)
        r = (f[units] != y[units]) - mn[units]
        s = _smoother_by_loops(z, units, r[:, None], 0.3, groups=f)[:, 0]
        v = (1 / cat.n) / q[idx]
        e = (f[idx] != y[idx]) - mn[idx] - s[idx]
        g = mn.mean() + s.mean() + (v @ e) / v.sum()
        g_i = mn.mean() + s.mean() + (v @ e - v * e) / (v.sum() - v)
        eps = (g - g_i) * (1 - v / v.sum())
        eps -= eps.mean()
        assert got.estimate == pytest.approx(g, abs=1e-12)
        assert got.stderr == pytest.approx(math.sqrt(eps @ eps), rel=1e-9)
        assert (units.size == idx.size) == (draws == 25)


@pytest.mark.parametrize("block", [13, 1 << 22])
def test_nested_smoother_equals_one_pass_per_sample(monkeypatch, block: int) -> None:
    """The trajectory's one kernel pass for nested samples (units in labeling order, each
    sample its own weights or none) equals the smoother run on each sample alone, in
    blocks of 13 rows or in one, with and without groups and near-duplicate rows."""
    monkeypatch.setattr(smoother_module, "_KERNEL_BLOCK", block)
    rng = np.random.default_rng(11)
    m, d = 400, 3
    z = rng.normal(size=(m, d))
    z[rng.integers(m, size=80)] = z[rng.integers(m, size=80)]  # near-duplicates
    units = rng.choice(m, 60, replace=False)
    resid = rng.normal(size=(60, 4))
    p = rng.dirichlet(np.ones(m))
    sizes = [1, 7, 30, 31, 60]
    vs = [rng.random(n) if n != 30 else None for n in sizes]
    for groups in (None, rng.integers(0, 3, size=m)):
        got = smoother_module._smoothed_nested(z, units, resid, p, 0.7, sizes, vs, groups)
        for n, v, (mean, at, dropped) in zip(sizes, vs, got, strict=True):
            o = np.argsort(units[:n])
            vo = None if v is None else v[o]
            ref = smoother_module._smoothed(z, units[:n][o], resid[:n][o], p, 0.7, vo, groups)
            back = np.argsort(o)
            np.testing.assert_allclose(mean, ref[0], rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(at, ref[1][back], rtol=1e-12, atol=1e-15)
            if v is None:
                assert dropped is None and ref[2] is None
            else:
                for a, b in zip(dropped, ref[2], strict=True):
                    np.testing.assert_allclose(a, b[back], rtol=1e-12, atol=1e-15)


@pytest.mark.filterwarnings("ignore::activeeval.DegenerateIntervalWarning")  # early points
@pytest.mark.filterwarnings("ignore::activeeval.UndefinedEstimateWarning")  # the first point
def test_trajectory_with_features_equals_each_point_alone(tmp_path, monkeypatch) -> None:
    """Session.trajectory(features=) serves its points from one nested kernel pass (the
    per-sample smoother runs for the last point only): every point equals the estimate on
    that prefix computed alone (to rounding), the last one bit for bit — for one model and
    for a pair. Samples that are not nested are computed one by one, bit for bit."""
    calls = {"one": 0, "nested": 0}

    def counting(name: str, key: str) -> Any:
        f = getattr(assisted_module if name == "_smoothed" else smoother_module, name)

        def counted(*args: Any, **kw: Any) -> Any:
            calls[key] += 1
            return f(*args, **kw)

        return counted

    monkeypatch.setattr(assisted_module, "_smoothed", counting("_smoothed", "one"))
    monkeypatch.setattr(smoother_module, "_smoothed_nested", counting("_smoothed_nested", "nested"))
    cat, y, x = _clustered_pool(4)
    s = Session.create(tmp_path / "s.db", cat.proba, "f1", 120, seed=9, pos_label=1)
    while ids := s.next_batch(40):
        s.record({i: int(y[i]) for i in ids})
    traj = s.trajectory(8, features=x)
    assert calls == {"one": 1, "nested": 1}
    idx, dq, lab = session_report._data(s._store, s._stored)
    for row in traj.itertuples():
        n = int(row.n_draws)
        alone = session_report._estimate_on(s._stored, idx[:n], dq[:n], lab[:n], 0, "assisted", x)
        exact = row.Index == traj.index[-1]
        for col, want in (("estimate", alone.estimate), ("stderr", alone.stderr)):
            got = getattr(row, col)
            close = pytest.approx(want, rel=1e-10, abs=1e-14, nan_ok=True)
            assert got == want if exact else got == close
    a, b, _, y3, x3 = _clustered_pool(7, m=600, clusters=30, models=3)
    pair = Session.create(tmp_path / "p.db", [a.proba, b.proba], "error_rate", 120, seed=4)
    while ids := pair.next_batch(50):
        pair.record({i: int(y3[i]) for i in ids})
    calls.update(one=0, nested=0)
    traj = pair.trajectory(6, features=x3)
    assert calls == {"one": 1, "nested": 1}
    idx, dq, lab = session_report._data(pair._store, pair._stored)
    for row in traj.itertuples():
        n = int(row.n_draws)
        alone = session_report._compare_on(pair._stored, idx[:n], dq[:n], lab[:n], "assisted", x3)
        assert row.estimate == pytest.approx(alone.difference, rel=1e-10, abs=1e-14, nan_ok=True)
        assert row.stderr == pytest.approx(alone.stderr, rel=1e-10, abs=1e-14, nan_ok=True)
    # Not nested (three independent samples): nothing is served, each runs alone.
    q = ae.sampling.optimal_distribution(cat, "error_rate")
    draws = [
        ae.sampling.draw(q, n, random_state=r) for r, n in ((1, 40), (2, 60), (3, 80), (4, 90))
    ]

    def run(i):
        return assisted_estimate("error_rate", cat, draws[i], y[draws[i]], pool_q=q, features=x)

    batched = smoother_module._batched_smoother(run, range(4))
    assert [e.estimate for e in batched] == [run(i).estimate for i in range(4)]


def test_batched_smoother_serves_only_the_call_it_recorded(monkeypatch) -> None:
    """Nested samples whose run smooths twice — two models, or other features, on the same
    rows: the second call is computed, not served the first call's result; points in
    several chunks (a small kernel block) are served as well."""
    a, b, _, y, x = _clustered_pool(7, m=600, clusters=30, models=3)
    q = ae.sampling.optimal_distribution(a, "error_rate")
    draws = ae.sampling.draw(q, 200, random_state=1)
    other = x[:, ::-1] * np.arange(1, x.shape[1] + 1)

    def run(n):
        kw = {"pool_q": q}
        return [
            assisted_estimate("error_rate", model, draws[:n], y[draws[:n]], features=f, **kw)
            for model, f in ((a, x), (b, x), (a, other))
        ]

    sizes = [40, 80, 120, 160, 200]
    for block in (1 << 22, 600):
        monkeypatch.setattr(smoother_module, "_KERNEL_BLOCK", block)
        for got, want in zip(
            smoother_module._batched_smoother(run, sizes), [run(n) for n in sizes], strict=True
        ):
            for g, w in zip(got, want, strict=True):
                assert g.estimate == pytest.approx(w.estimate, rel=1e-10, abs=1e-14)
                assert g.stderr == pytest.approx(w.stderr, rel=1e-10, abs=1e-14)
    # Runs that alternate one model (2 residual columns) and a pair (4): computed alone.
    qp = ae.sampling.comparison_distribution([a, b], "error_rate")

    def mixed(n):
        if n % 80:
            return assisted_estimate("error_rate", a, draws[:n], y[draws[:n]], pool_q=q,
                                     features=x).estimate  # fmt: skip
        return assisted_module.assisted_paired_test(
            "error_rate", [a, b], draws[:n], y[draws[:n]], pool_q=qp, features=x
        ).difference

    alone = [mixed(n) for n in sizes]
    assert smoother_module._batched_smoother(mixed, sizes) == pytest.approx(alone, rel=1e-10)
