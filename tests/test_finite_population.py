"""The finite-population form of the model-assisted estimator (assisted module, "Finite
pools"): inclusion probabilities of the first n distinct draws, exact unbiasedness and the
exact expectation of the variance estimate under simple random sampling by enumerating every
sample, consistency, coverage and the gain over the with-replacement form under skewed q by
seeded Monte-Carlo, and the campaign's use of it."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import brentq

import activeeval as ae
from activeeval.estimators.assisted import (
    assisted_estimate,
    assisted_multiple_comparison,
    assisted_paired_test,
)


def _pool(seed: int = 0, m: int = 600):
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.full(2, 0.4), size=m)
    y = (rng.random(m) > proba[:, 0]).astype(int)  # y ~ proba (well specified)
    return ae.Categorical(proba), y


def _first_distinct(q: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draws i.i.d. from q up to (and including) the n-th distinct instance."""
    out: list[np.ndarray] = []
    seen: set[int] = set()
    while True:
        block = ae.sampling.draw(q, 4 * n, random_state=rng)
        for k, i in enumerate(block):
            seen.add(int(i))
            if len(seen) == n:
                out.append(block[: k + 1])
                return np.concatenate(out)
        out.append(block)


# ------------------------------------------------------------ inclusion probabilities
def test_inclusion_probabilities_solve_the_expected_distinct_count() -> None:
    rng = np.random.default_rng(1)
    q = rng.gamma(0.3, size=2000)
    q[:50] = 0.0
    q /= q.sum()
    for n in (1, 10, 300, 1500, 1949):
        t = ae.sampling.successive_time(q, n)
        # independent root of Σ (1 − e^{−q t}) = n
        ref = brentq(lambda s, n=n: np.sum(-np.expm1(-q * s)) - n, 1e-9, 1e16, rtol=1e-15)
        assert t == pytest.approx(ref, rel=1e-9)
        pi = ae.sampling.inclusion_probabilities(q, n)
        assert pi.sum() == pytest.approx(n, rel=1e-10)
        assert (pi[:50] == 0).all() and (pi[50:] > 0).all() and (pi <= 1).all()
    assert math.isinf(ae.sampling.successive_time(q, 1950))
    np.testing.assert_array_equal(
        ae.sampling.inclusion_probabilities(q, 1950), (q > 0).astype(float)
    )
    assert ae.sampling.successive_time(q, 0) == 0.0


def test_inclusion_probabilities_are_exact_for_uniform_q() -> None:
    q = np.full(37, 1 / 37)
    for n in (1, 5, 36):
        np.testing.assert_allclose(ae.sampling.inclusion_probabilities(q, n), n / 37, rtol=1e-12)


def test_inclusion_probabilities_match_simulated_first_distinct_draws() -> None:
    # Rosén's approximation against the frequency of inclusion among the first n distinct
    # draws (4,000 seeded samples). Instances are grouped by q in 10 bins to average the
    # per-instance Monte-Carlo noise; within each bin the mean frequency must lie within
    # 4 MC-SE of the mean π, plus 2% of π for the approximation (relative error O(1/n)).
    rng = np.random.default_rng(2)
    m, n, reps = 400, 120, 4000
    q = rng.gamma(0.7, size=m)
    q /= q.sum()
    hits = np.zeros(m)
    for _ in range(reps):
        hits[np.unique(_first_distinct(q, n, rng))] += 1
    freq = hits / reps
    pi = ae.sampling.inclusion_probabilities(q, n)
    bins = np.array_split(np.argsort(q), 10)
    for b in bins:
        mc_se = math.sqrt(np.sum(freq[b] * (1 - freq[b])) / reps) / b.size
        assert abs(freq[b].mean() - pi[b].mean()) < 4 * mc_se + 0.02 * pi[b].mean()


def test_inclusion_probabilities_reject_bad_input() -> None:
    with pytest.raises(ae.errors.InvalidSamplingDistributionError, match="sums to"):
        ae.sampling.inclusion_probabilities(np.full(4, 0.3), 2)
    with pytest.raises(ae.errors.BudgetError, match="negative"):
        ae.sampling.successive_time(np.full(4, 0.25), -1)


# ------------------------------------------------ exact results under simple random sampling
@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_uniform_q_is_simple_random_sampling_unbiased_with_exact_variance(lam: float) -> None:
    # With uniform q the distinct draws are a simple random sample. Over all C(9, 4) samples:
    # Ĝ = λ μ + mean_S(ℓ − λ m) averages to G exactly, and the variance estimate averages to
    # (n − 1)/n · (1 − n/N) S²/n, the textbook variance of the SRS mean times the plug-in
    # factor (Lemma 3.4's convention).
    cat, y = _pool(3, m=9)
    f = cat.point_prediction()
    ell = (f != y).astype(float)
    mexp = 1.0 - cat.proba.max(axis=1)  # E_model[ℓ | x] of the error rate
    q = np.full(9, 1 / 9)
    n, big_n = 4, 9
    est, var = [], []
    for s in itertools.combinations(range(9), n):
        idx = np.array(s)
        a = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q, power=lam)
        est.append(a.estimate)
        var.append(a.stderr**2)
    z = ell - lam * mexp
    s2 = z.var(ddof=1)
    assert np.mean(est) == pytest.approx(ell.mean(), abs=1e-13)
    assert np.var(est) == pytest.approx((1 - n / big_n) * s2 / n, rel=1e-12)
    assert np.mean(var) == pytest.approx((n - 1) / n * (1 - n / big_n) * s2 / n, rel=1e-12)


def test_bias_correction_under_simple_random_sampling_is_the_textbook_ratio_bias() -> None:
    # Uniform q, λ = 0: the distinct draws are a simple random sample and Ĝ = ȳ/x̄ with
    # x = w, y = wℓ. Its textbook bias (Cochran, 1977, Sec. 6.8) is
    # (1 − n/N)/(n x̄²)·(R S_x² − S_xy); the estimator subtracts the plug-in version (divisor
    # n, Lemma 3.4's convention).
    cat, y = _pool(8, m=500)
    meas = ae.FMeasure(pos_label=1)
    f = cat.point_prediction()
    q = np.full(500, 1 / 500)
    idx = np.random.default_rng(3).choice(500, 60, replace=False)
    plain = assisted_estimate(meas, cat, idx, y[idx], pool_q=q, power=0.0, bias_correction=False)
    corr = assisted_estimate(meas, cat, idx, y[idx], pool_q=q, power=0.0)
    bm = meas.bind(cat)
    x = bm.weight(f[idx], y[idx])
    yy = x * bm.loss(f[idx], y[idx])
    r = yy.mean() / x.mean()
    assert plain.estimate == pytest.approx(r, abs=1e-13)
    n = idx.size
    s_xx = np.mean((x - x.mean()) ** 2)
    s_xy = np.mean((x - x.mean()) * (yy - yy.mean()))
    bias = (1 - n / 500) / (n * x.mean() ** 2) * (r * s_xx - s_xy)
    assert abs(bias) > 1e-4
    assert corr.estimate == pytest.approx(r - bias, abs=1e-13)


def test_census_is_exact_with_zero_stderr() -> None:
    cat, y = _pool(4, m=50)
    q = ae.sampling.optimal_distribution(cat, "error_rate")
    idx = _first_distinct(q, 50, np.random.default_rng(0))
    a = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q)
    assert a.estimate == pytest.approx(np.mean(cat.point_prediction() != y), abs=1e-12)
    assert a.stderr == 0.0
    assert a.n_labels == 50 and a.n_draws == idx.size
    assert a.census
    # The exact value uses no control variate: both coefficients 0, as evaluate's census.
    assert a.power == 0.0 and a.feature_power is None
    x = np.random.default_rng(1).normal(size=(50, 2))
    with_x = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q, features=x)
    assert with_x.census and with_x.power == 0.0 and with_x.feature_power == 0.0
    assert with_x.estimate == pytest.approx(a.estimate, abs=1e-12) and with_x.stderr == 0.0
    fixed = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q, power=0.5)
    assert fixed.census and fixed.power == 0.0  # a given λ is not used either
    assert fixed.estimate == pytest.approx(a.estimate, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a census is not a degenerate interval
        assert a.ci == (a.estimate, a.estimate)
    # One instance short of the census is an estimate, not a census.
    short = idx[:-1]  # the last draw is the 50th distinct instance
    assert not assisted_estimate("error_rate", cat, short, y[short], pool_q=q).census


# --------------------------------------------------------- skewed q: Monte-Carlo checks
def _campaigns(measure, n: int, reps: int, seed: int):
    cat, y = _pool(seed)
    m = ae.get_measure(measure, pos_label=1).bind(cat)
    f = cat.point_prediction()
    w = m.weight(f, y)
    truth = float(w @ m.loss(f, y) / w.sum())
    q = ae.sampling.optimal_distribution(cat, m)
    rng = np.random.default_rng(seed)
    fin, wr, cover = np.empty(reps), np.empty(reps), np.empty(reps, bool)
    for r in range(reps):
        idx = _first_distinct(q, n, rng)[:-1]  # stop before the draw that would buy n + 1
        a = assisted_estimate(m, cat, idx, y[idx], pool_q=q)
        fin[r] = a.estimate
        lo, hi = a.ci
        cover[r] = lo <= truth <= hi
        wr[r] = assisted_estimate(m, cat, idx, y[idx], q[idx]).estimate
    return truth, fin, wr, cover


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_finite_form_is_consistent_covers_and_beats_the_with_replacement_form(measure) -> None:
    # 300 labels of a 600-instance pool under the thesis's q*, 600 seeded campaigns.
    # Bias: within 4 MC-SE. Coverage of the 95% interval: within 3 MC-SE
    # (sqrt(.95·.05/600) ≈ 0.0089) of 0.95. At n/m = 1/2 the finite-population factor is
    # large: the MSE must be below the with-replacement form's on the same draws by more
    # than 4 MC-SE of the paired MSE difference.
    reps = 600
    truth, fin, wr, cover = _campaigns(measure, 301, reps, seed=5)
    assert abs(fin.mean() - truth) < 4 * fin.std() / math.sqrt(reps)
    assert abs(cover.mean() - 0.95) < 3 * math.sqrt(0.95 * 0.05 / reps)
    d = (wr - truth) ** 2 - (fin - truth) ** 2
    assert d.mean() > 4 * d.std() / math.sqrt(reps)


def test_calibrated_model_beats_snis_and_noise_model_stays_close_in_the_finite_form() -> None:
    # The acceptance pair of the issue, for the default (finite) form: uniform draws, 200
    # distinct labels of 600. A well-specified model lowers the MSE below the SNIS estimator
    # on the same labels; a model whose probabilities are pure noise stays within 10%.
    cat, y = _pool(11)
    rng = np.random.default_rng(11)
    f = cat.point_prediction()
    top = 0.5 + 0.5 * rng.uniform(0.01, 1.0, cat.n)  # random confidence, same argmax
    noise = np.empty((cat.n, 2))
    noise[np.arange(cat.n), f] = top
    noise[np.arange(cat.n), 1 - f] = 1.0 - top
    noisy = ae.Categorical(noise)
    q = np.full(cat.n, 1.0 / cat.n)
    reps = 600
    s, good, bad = np.empty(reps), np.empty(reps), np.empty(reps)
    for r in range(reps):
        idx = _first_distinct(q, 201, rng)[:-1]
        s[r] = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q, power=0.0).estimate
        good[r] = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q).estimate
        bad[r] = assisted_estimate("error_rate", noisy, idx, y[idx], pool_q=q).estimate
    truth = np.mean(f != y)
    mse_s, mse_g, mse_b = (np.mean((x - truth) ** 2) for x in (s, good, bad))
    assert mse_g < 0.8 * mse_s
    assert mse_b < 1.1 * mse_s


# ------------------------------------------------------------------- comparisons, errors
def test_two_model_multiple_comparison_equals_the_paired_test_in_the_finite_form() -> None:
    cat, y = _pool(17)
    rng = np.random.default_rng(17)
    raw = np.clip(cat.proba + rng.normal(0, 0.2, cat.proba.shape), 0.01, 1)
    other = ae.Categorical(raw / raw.sum(axis=1, keepdims=True))
    q = ae.sampling.comparison_distribution([cat, other], "f1")
    idx = _first_distinct(q, 250, rng)
    pair = assisted_paired_test("f1", [cat, other], idx, y[idx], pool_q=q)
    mc = assisted_multiple_comparison("f1", [cat, other], idx, y[idx], pool_q=q)
    assert mc.estimates == pytest.approx(pair.estimates, rel=1e-12)
    assert float(mc.pairwise["stderr"][0]) == pytest.approx(pair.stderr, rel=1e-10)
    assert pair.n_labels == mc.n_labels == 250 and pair.n_draws == mc.n_draws == idx.size


def test_pool_q_errors_name_the_argument() -> None:
    cat, y = _pool(19, m=40)
    q = np.full(40, 1 / 40)
    idx = np.arange(10)
    with pytest.raises(ae.errors.ShapeError, match="pool_q"):
        assisted_estimate("error_rate", cat, idx, y[idx], q[idx], pool_q=q)
    with pytest.raises(ae.errors.ShapeError, match="pool_q"):
        assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q[:-1])
    bad = q.copy()
    bad[3], bad[20] = 0.0, 2 / 40
    with pytest.raises(ae.errors.InvalidSamplingDistributionError, match="instance 3"):
        assisted_paired_test("error_rate", [cat, cat], idx, y[idx], pool_q=bad)


# ---------------------------------------------------------------------------- campaign
def test_evaluate_uses_the_finite_form_and_batch_adaptive_keeps_the_draw_weights() -> None:
    cat, y = _pool(23)
    oracle = lambda i: y[i]  # noqa: E731
    q = ae.sampling.optimal_distribution(cat, "f1", pos_label=1)
    res = ae.evaluate(cat, oracle, "f1", budget=150, pos_label=1, random_state=1)
    direct = assisted_estimate("f1", cat, res.indices, res.labels, pool_q=q, pos_label=1)
    assert res.estimate == pytest.approx(direct.estimate, rel=1e-12)
    assert res.stderr == pytest.approx(direct.stderr, rel=1e-12)
    # q changes between batches: every draw weighted by the q it was drawn from, and no
    # ratio-bias correction (it assumes one q)
    ad = ae.evaluate(cat, oracle, "f1", budget=150, pos_label=1, random_state=1, batch_size=50)
    direct = assisted_estimate(
        "f1", cat, ad.indices, ad.labels, ad.q, pos_label=1, bias_correction=False
    )
    assert ad.estimate == pytest.approx(direct.estimate, rel=1e-12)
    assert ad.stderr == pytest.approx(direct.stderr, rel=1e-12)


# ------------------------------------------------------------------ the logit interval
def test_logit_interval_is_the_delta_method_on_the_logit_scale() -> None:
    from scipy.special import expit, logit
    from scipy.stats import norm

    g = np.array([0.03, 0.5, 0.9, 0.0, 1.0])
    se = np.array([0.01, 0.05, 0.02, 0.01, 0.02])
    lo, hi = ae.estimators.inference.logit_interval(g, se, 0.9)
    z = norm.ppf(0.95)
    for i in range(3):  # logit(end) = logit(Ĝ) ± z·se/(Ĝ(1 − Ĝ))
        assert logit(lo[i]) == pytest.approx(logit(g[i]) - z * se[i] / (g[i] * (1 - g[i])))
        assert hi[i] == pytest.approx(expit(logit(g[i]) + z * se[i] / (g[i] * (1 - g[i]))))
        assert 0 < lo[i] < g[i] < hi[i] < 1
    assert hi[0] - g[0] > g[0] - lo[0]  # longer towards the far bound
    assert (lo[3], hi[3]) == pytest.approx((0.0, z * 0.01))  # boundary: clipped Wald
    assert (lo[4], hi[4]) == pytest.approx((1 - z * 0.02, 1.0))
    est = assisted_estimate("error_rate", *_pool(1)[:1], np.arange(5), np.zeros(5, int))
    with pytest.raises(ae.errors.ShapeError, match="logit"):
        ae.estimators.inference.Estimate(
            0.1, 0.01, 10, 10, 10.0, False, measure="mse"
        ).confidence_interval(method="logit")
    assert est.confidence_interval(method="logit") == pytest.approx(
        tuple(
            float(x)
            for x in ae.estimators.inference.logit_interval(
                est.estimate, est.stderr, 0.95, est.effective_n
            )
        )
    )


def test_logit_interval_falls_back_to_clopper_pearson_at_an_estimate_of_0_or_1() -> None:
    # At Ĝ ∈ {0, 1} the logit does not exist; with effective_n the interval is the
    # Clopper–Pearson one for the count Ĝ·n_eff out of n_eff joined with the clipped Wald one,
    # checked against scipy's binomtest (integer n) and the closed form 1 − (α/2)^(1/n);
    # its ends are exactly 0 or 1 (it contains the estimate). Elsewhere nothing changes:
    # Ĝ inside (0, 1) (se = 0 or not), and Ĝ outside [0, 1] (the clipped Wald interval).
    from scipy.stats import binomtest

    g = np.array([0.0, 1.0, 0.0, 0.25, 0.03, -0.79, 1.2])
    se = np.array([0.0, 0.0, 0.3, 0.0, 0.01, 4.0, 0.05])
    n = np.array([20.0, 15.0, 8.0, 8.0, 50.0, 20.0, 20.0])
    lo, hi = ae.estimators.inference.logit_interval(g, se, 0.9, effective_n=n)
    plain = ae.estimators.inference.logit_interval(g, se, 0.9)
    for i, k in ((0, 0), (1, 15)):
        ref = binomtest(k, int(n[i])).proportion_ci(0.9, method="exact")
        assert (lo[i], hi[i]) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert (lo[0], hi[0]) == (0.0, pytest.approx(1 - 0.05 ** (1 / 20)))
    assert hi[1] == 1.0 and lo[1] == pytest.approx(0.05 ** (1 / 15))
    assert (lo[2], hi[2]) == (0.0, max(plain[1][2], 1 - 0.05 ** (1 / 8)))  # joined with Wald
    for i in (3, 4, 5, 6):
        assert (lo[i], hi[i]) == (plain[0][i], plain[1][i])
    assert (lo[5], hi[5]) == (0.0, 1.0)  # a wild estimate keeps its wide interval
    # Broadcasting: scalars against arrays, and an unusable n (inf, 0, NaN) changes nothing.
    b_lo, b_hi = ae.estimators.inference.logit_interval(0.0, [0.0, 0.1], 0.95, 10)
    assert b_lo.shape == (2,) and b_hi[0] == pytest.approx(1 - 0.025 ** (1 / 10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bad in (np.inf, 0.0, np.nan):
            assert ae.estimators.inference.logit_interval(0.0, 0.0, 0.95, bad) == (0.0, 0.0)
    # F-measures: the interval is on the share u of true positives among the units (w > 0)
    # and mapped to F_β = u / (u + c(1 − u)); F1 (c = 1/2): 2u/(1 + u).
    f_lo, f_hi = ae.estimators.inference.logit_interval(
        [0.0, 1.0], 0.0, 0.9, 12, unit_weights=(0.5, 0.5)
    )
    u_hi = 1 - 0.05 ** (1 / 12)
    assert f_hi[0] == pytest.approx(2 * u_hi / (1 + u_hi))
    u_lo = 0.05 ** (1 / 12)
    assert f_lo[1] == pytest.approx(2 * u_lo / (1 + u_lo))
    # An F1 of 0 among uniform draws (no true positive), through Estimate: no warning.
    y = np.array([1, 1, 0, 0, 1, 0, 0, 0])
    pred = np.array([0, 0, 1, 0, 0, 1, 0, 0])  # 3 false negatives, 2 false positives
    est = ae.estimators.inference.estimate(ae.FMeasure(pos_label=1), pred, y)
    assert est.estimate == 0.0 and est.stderr == 0.0 and est.unit_weights == (0.5, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = est.confidence_interval(0.9, "logit")
    u = 1 - 0.05 ** (1 / est.effective_n)
    assert ci == (0.0, pytest.approx(2 * u / (1 + u)))
    # An estimate inside (0, 1) with se = 0 keeps the degenerate-interval warning.
    inside = ae.estimators.inference.Estimate(0.25, 0.0, 8, 8, 8.0, True, measure="error_rate")
    with pytest.warns(ae.DegenerateIntervalWarning):
        assert inside.confidence_interval(method="logit") == pytest.approx((0.25, 0.25))


def test_evaluate_covers_at_small_budgets_where_no_error_is_seen() -> None:
    # A well-specified pool with a 3.5% error rate; 300 seeded campaigns of 20 labels. Many
    # see no error (Ĝ = 0, se = 0): the logit interval alone is then the point [0, 0], and
    # covered 0.74 of all campaigns (measured); with the Clopper–Pearson fallback the
    # coverage is within 3 MC-SE (sqrt(.95·.05/300) ≈ 0.0126) of 0.95 — checked on both
    # sides, so that an interval that is simply wider fails too.
    rng = np.random.default_rng(0)
    m = 5000
    p1 = rng.beta(0.3, 8, m)
    y = (rng.random(m) < p1).astype(int)
    cat = ae.Categorical(np.c_[1 - p1, p1])
    truth = float(np.mean((p1 > 0.5) != y))
    reps = 300
    cover = np.empty(reps, bool)
    point = np.empty(reps, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ae.DegenerateIntervalWarning)
        for r in range(reps):
            res = ae.evaluate(cat, lambda i: y[i], "error_rate", budget=20, random_state=r)
            point[r] = res.stderr == 0.0
            cover[r] = res.ci[0] <= truth <= res.ci[1]
            assert res.ci[1] > res.ci[0]
    assert point.mean() > 0.1  # the fallback is exercised
    assert abs(cover.mean() - 0.95) < 3 * math.sqrt(0.95 * 0.05 / reps)


def test_evaluate_reports_the_tempered_interval_and_it_covers_rare_error_rates() -> None:
    # A well-specified pool with a 3% error rate; 400 seeded campaigns of 200 labels under
    # the default. The reported ci holds the logit interval of (estimate, stderr) (joined
    # with the tempered-model score interval); its coverage is within 3 MC-SE
    # (sqrt(.95·.05/400) ≈ 0.011) of 0.95 — the model is right, so the join adds little.
    rng = np.random.default_rng(31)
    m = 4000
    conf = 1 - rng.beta(0.3, 9.0, size=m)  # P(prediction correct); mean error ≈ 3%
    proba = np.column_stack([conf, 1 - conf])
    y = (rng.random(m) > conf).astype(int)  # the model predicts class 0 everywhere
    cat = ae.Categorical(proba)
    truth = float(np.mean(y != 0))
    reps = 400
    cover = np.empty(reps, bool)
    for r in range(reps):
        res = ae.evaluate(cat, lambda i: y[i], "error_rate", budget=200, random_state=r)
        lo, hi = ae.estimators.inference.logit_interval(
            res.estimate, res.stderr, 0.95, res.inference.effective_n
        )
        assert res.ci[0] <= lo + 1e-15 and hi - 1e-15 <= res.ci[1]
        assert res.ci == res.inference.confidence_interval(method="tempered")
        cover[r] = res.ci[0] <= truth <= res.ci[1]
    assert abs(cover.mean() - 0.95) < 3 * math.sqrt(0.95 * 0.05 / reps)
    snis = ae.evaluate(cat, lambda i: y[i], "error_rate", budget=200, estimator="snis")
    assert snis.ci == pytest.approx(snis.inference.confidence_interval(method="wald"))


def test_tuned_power_minimizes_the_finite_population_variance() -> None:
    # Error rate (w = 1, D = 1): z − z̄ = (ℓ − λm) − mean_v(ℓ − λm) does not involve Ĝ, so the
    # tuned λ must be the exact minimizer over [0, 1] of V(λ) = Σ c (u − Â)²,
    # u = v (z − z̄)/Σv, c = 1 − π, computed here independently (π from brentq) and minimized
    # numerically. Skewed q*, so π and c differ across the labeled instances.
    from scipy.optimize import minimize_scalar

    true, y = _pool(41)
    rng = np.random.default_rng(41)
    # half informative: the optimum lies inside (0, 1), not at the clip
    noisy = 0.5 * true.proba + 0.5 * rng.dirichlet([1.0, 1.0], size=true.n)
    cat = ae.Categorical(noisy)
    q = ae.sampling.optimal_distribution(cat, "error_rate")
    idx = _first_distinct(q, 250, rng)
    a = assisted_estimate("error_rate", cat, idx, y[idx], pool_q=q)
    units = np.unique(idx)
    n = units.size
    t = brentq(lambda s: np.sum(-np.expm1(-q * s)) - n, 1e-9, 1e12, xtol=1e-14, rtol=1e-15)
    pi = -np.expm1(-q[units] * t)
    v, c = (1 / cat.n) / pi, 1 - pi
    ell = (cat.point_prediction()[units] != y[units]).astype(float)
    mexp = 1.0 - cat.proba.max(axis=1)[units]

    def var(lam: float) -> float:
        z = ell - lam * mexp
        u = v * (z - (v @ z) / v.sum()) / v.sum()
        d = u - (c @ u) / c.sum()
        return float(c @ (d * d))

    best = minimize_scalar(var, bounds=(0, 1), method="bounded", options={"xatol": 1e-10})
    assert np.ptp(c) > 0.1
    assert 0.05 < best.x < 0.95 and a.power == pytest.approx(best.x, abs=1e-6)
    assert a.stderr == pytest.approx(math.sqrt(var(a.power)), rel=1e-9)
    # the t interval counts one row per distinct instance in the finite form
    from scipy.stats import t as student

    lo, hi = a.confidence_interval(method="t")
    half = student.isf(0.025, n - 1) * a.stderr * math.sqrt(n / (n - 1))
    assert (lo, hi) == pytest.approx((a.estimate - half, a.estimate + half))
    assert a.n_draws > n
    with pytest.raises(ae.errors.BudgetError, match="integer"):
        ae.sampling.successive_time(q, 2.5)
