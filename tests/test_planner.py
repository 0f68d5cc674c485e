"""The budget planner (issue 28): its variance against enumeration, textbook formulas and
Monte-Carlo campaigns; its inversions; re-planning; the CLI."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.power import NormalIndPower

import activeeval as ae
from activeeval.cli import main
from activeeval.errors import BudgetError, ShapeError, UnknownOptionError
from activeeval.measures import ErrorRate, FMeasure, SquaredError
from activeeval.planner import _power, plan_for_q
from activeeval.predictive import Categorical, Gaussian
from activeeval.ranking import GradedRelevance


def _pool(m: int, seed: int) -> np.ndarray:
    s = np.random.default_rng(seed).beta(0.6, 2.0, m)
    return np.c_[1 - s, s]


# ------------------------------------------------------------------ the variance formula
@pytest.mark.parametrize("estimator", ["snis", "assisted"])
@pytest.mark.parametrize("measure", [ErrorRate(), FMeasure(1.0, pos_label=1)])
def test_small_budget_variance_is_the_asymptotic_variance_by_enumeration(
    estimator: str, measure: object
) -> None:
    """n·V(n) → Σ_x Σ_y q(x) p(y|x) [v(x)(w(ℓ − G) − λ(m_N − G m_D))/D]² as n/m → 0, with
    v = p/q, G and D the model's own and λ = 0 (thesis estimator, eq. 4.6's objective) or 1
    (model-assisted), every term enumerated over the pool and the labels."""
    rng = np.random.default_rng(4)
    m = 6
    proba = rng.dirichlet([1.0, 1.0], m)
    q = rng.dirichlet(np.ones(m))
    pred = Categorical(proba)
    meas = measure.bind(pred)  # type: ignore[attr-defined]
    f = pred.point_prediction()
    p = np.full(m, 1.0 / m)
    labels = pred.labels
    # the model's N, D and G by enumeration
    n_sum = d_sum = 0.0
    m_n, m_d = np.zeros(m), np.zeros(m)
    for x, k in itertools.product(range(m), range(2)):
        w = float(meas.weight(f[x], labels[k]))
        loss = float(meas.loss(f[x], labels[k]))
        m_n[x] += proba[x, k] * w * loss
        m_d[x] += proba[x, k] * w
    n_sum, d_sum = float(p @ m_n), float(p @ m_d)
    g = n_sum / d_sum
    lam = 0.0 if estimator == "snis" else 1.0
    expected = 0.0
    for x, k in itertools.product(range(m), range(2)):
        w = float(meas.weight(f[x], labels[k]))
        z = w * (float(meas.loss(f[x], labels[k])) - g) - lam * (m_n[x] - g * m_d[x])
        expected += q[x] * proba[x, k] * (p[x] / q[x] * z / d_sum) ** 2
    pl = plan_for_q(pred, meas, q, [1.0], method="active", estimator=estimator)
    c = pl._curves["active"]
    t = 1e-7  # n = Σ(1 − e^(−q t)) ≈ t
    assert c.variance(t) * c.spent(t)[0] == pytest.approx(expected, rel=1e-5)


def test_passive_variance_is_the_simple_random_sample_formula() -> None:
    """Uniform q: π = n/m exactly. The model-assisted estimate of an error rate (λ = 1,
    distinct instances) has V(n) = (1/n − 1/m)·mean_x Var[ℓ | x], a simple random sample's
    variance with the finite-population correction; the thesis estimator (every draw a term)
    has V = S²/t over the t = −m·log(1 − n/m) expected draws that buy n distinct labels,
    S² = mean_x E[(ℓ − G)² | x]."""
    m = 500
    proba = _pool(m, 1)
    err = 1.0 - proba.max(axis=1)  # the model's P(ℓ = 1 | x)
    g = err.mean()
    for n in (10, 100, 400):
        a = ae.plan(proba, "error_rate", [n], method="passive")
        assert a.stderr(n, "passive") ** 2 == pytest.approx(
            (1 / n - 1 / m) * np.mean(err * (1 - err)), rel=1e-9
        )
        s = ae.plan(proba, "error_rate", [n], method="passive", estimator="snis")
        s2 = np.mean(err * (1 - g) ** 2 + (1 - err) * g**2)
        t = -m * math.log1p(-n / m)
        assert s.stderr(n, "passive") ** 2 == pytest.approx(s2 / t, rel=1e-9)


def test_a_census_has_no_variance_and_costs_buy_the_expected_labels() -> None:
    proba = _pool(40, 2)
    costs = np.random.default_rng(0).uniform(1.0, 3.0, 40)
    pl = ae.plan(proba, "error_rate", [10.0], costs=costs)
    assert pl.stderr(float(costs.sum())) == 0.0
    c = pl._curves["active"]
    t = c.time_for(30.0, True)
    pi = -np.expm1(-c.q * t)
    assert float(costs @ pi) == pytest.approx(30.0, rel=1e-9)
    assert pl.labels(30.0) == pytest.approx(pi.sum(), rel=1e-12)


# ------------------------------------------------------------------ against campaigns
def _campaign_spread(pred_proba, measure, n, reps, method="active", estimator="assisted"):
    """Ĝ − G(pool) over campaigns on pools whose labels are drawn afresh from the model."""
    rng = np.random.default_rng(11)
    s = pred_proba[:, 1]
    f = (s > 0.5).astype(int)
    dev = []
    for r in range(reps):
        y = (rng.random(s.size) < s).astype(int)
        res = ae.evaluate(pred_proba, lambda i, y=y: y[i], measure, budget=n, method=method,
                          estimator=estimator, random_state=r)  # fmt: skip
        if measure == "error_rate":
            truth = np.mean(f != y)
        else:
            truth = 2 * np.sum((f == 1) & (y == 1)) / (np.sum(f == 1) + np.sum(y == 1))
        dev.append(res.inference.estimate - truth)
    return np.asarray(dev)


def _within_chi2(sample_var: float, predicted: float, reps: int) -> None:
    """predicted variance inside the 99.9% chi-square interval of the sample variance."""
    lo = sample_var * (reps - 1) / stats.chi2.ppf(0.9995, reps - 1)
    hi = sample_var * (reps - 1) / stats.chi2.ppf(0.0005, reps - 1)
    assert lo <= predicted <= hi, (lo, predicted, hi)


@pytest.mark.parametrize(
    ("measure", "method", "estimator"),
    [
        ("error_rate", "active", "assisted"),
        ("f1", "active", "assisted"),
        ("error_rate", "passive", "assisted"),
        ("f1", "active", "snis"),
        ("error_rate", "passive", "snis"),
    ],
)
def test_predicted_variance_matches_campaigns_on_a_well_specified_pool(
    measure: str, method: str, estimator: str
) -> None:
    """n = 200 of 3,000; the thesis estimator on half the pool, where its with-replacement
    form (every draw a term) and a finite-population one differ by 1 − n/m."""
    proba = _pool(3000, 2)
    reps, n = 300, (1500 if estimator == "snis" and method == "passive" else 200)
    pl = ae.plan(proba, measure, [n], method=method, estimator=estimator)
    dev = _campaign_spread(proba, measure, n, reps, method, estimator)
    _within_chi2(float(np.var(dev, ddof=1)), pl.stderr(n, method) ** 2, reps)


def test_predicted_variance_of_a_difference_matches_campaigns() -> None:
    """A pair whose labels come from the mixture of the two models (the planner's model)."""
    rng = np.random.default_rng(2)
    s = rng.beta(0.6, 2.0, 3000)
    sb = np.clip(s + rng.normal(0, 0.15, s.size), 0.01, 0.99)
    a, b = np.c_[1 - s, s], np.c_[1 - sb, sb]
    mix = 0.5 * (s + sb)
    pl = ae.plan([a, b], "error_rate", [200])
    reps = 300
    for method in ("active", "passive"):
        dev = []
        for r in range(reps):
            y = (rng.random(s.size) < mix).astype(int)
            res = ae.compare([a, b], lambda i, y=y: y[i], "error_rate", budget=200,
                             method=method, random_state=r)  # fmt: skip
            truth = np.mean((s > 0.5) != y) - np.mean((sb > 0.5) != y)
            dev.append(res.difference - truth)
        _within_chi2(float(np.var(dev, ddof=1)), pl.stderr(200, method) ** 2, reps)


def test_gaussian_regressor_variance_matches_campaigns() -> None:
    rng = np.random.default_rng(5)
    mean = rng.normal(0, 1, 2000)
    var = rng.uniform(0.2, 2.0, 2000)
    pred = Gaussian(mean, var)
    pl = ae.plan(pred, "mse", [150])
    dev = []
    for r in range(300):
        y = mean + np.sqrt(var) * rng.standard_normal(mean.size)
        res = ae.evaluate(pred, lambda i, y=y: y[i], "mse", budget=150, random_state=r)
        dev.append(res.inference.estimate - np.mean((y - mean) ** 2))
    _within_chi2(float(np.var(dev, ddof=1)), pl.stderr(150) ** 2, 300)


# ------------------------------------------------------------------ inversions
def test_budget_for_a_target_width_is_the_smallest_that_reaches_it() -> None:
    proba = _pool(4000, 3)
    pl = ae.plan(proba, "f1", target_width=0.08)
    for which in ("active", "passive"):
        n = pl.needed[which]
        assert n == int(n)
        assert pl.width(n, which) <= 0.08 < pl.width(n - 1, which)
    assert pl.saving == pytest.approx(pl.needed["passive"] / pl.needed["active"])
    assert pl.saving > 1.0


def test_budget_for_power_is_the_smallest_that_reaches_it() -> None:
    rng = np.random.default_rng(2)
    s = rng.beta(0.6, 2.0, 3000)
    sb = np.clip(s + rng.normal(0, 0.15, s.size), 0.01, 0.99)
    pl = ae.plan([np.c_[1 - s, s], np.c_[1 - sb, sb]], "error_rate", effect=0.02, power=0.9)
    for which in ("active", "passive"):
        n = pl.needed[which]
        assert pl.power_at(n, which) >= 0.9 > pl.power_at(n - 1, which)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_power_is_statsmodels_normal_power(alternative: str) -> None:
    sm = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}[alternative]
    for shift, se in ((0.02, 0.01), (-0.015, 0.01), (0.001, 0.02)):
        want = NormalIndPower().power(shift / se, nobs1=1, alpha=0.05, ratio=0,
                                      alternative=sm)  # fmt: skip
        assert _power(shift, se, 0.95, alternative) == pytest.approx(want, rel=1e-10)


def test_width_is_the_interval_the_estimator_reports() -> None:
    """At the predicted standard error, the width of evaluate's interval: logit for the
    model-assisted estimate of a measure in [0, 1], Wald for the thesis estimator."""
    proba = _pool(2000, 6)
    pl = ae.plan(proba, "error_rate", [200])
    se, g = pl.stderr(200), pl.value
    lo, hi = ae.estimators.inference.logit_interval(g, se, 0.95)
    assert pl.width(200) == pytest.approx(float(hi - lo), rel=1e-12)
    sn = ae.plan(proba, "error_rate", [200], estimator="snis")
    assert sn.width(200) == pytest.approx(2 * stats.norm.isf(0.025) * sn.stderr(200))


# ------------------------------------------------------------------ re-planning
def test_replanning_matches_the_result_at_the_labels_so_far() -> None:
    proba = _pool(3000, 7)
    y = (np.random.default_rng(1).random(3000) < proba[:, 1]).astype(int)
    pl = ae.plan(proba, "error_rate", [100, 400], target_width=0.04)
    res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=60, random_state=3)
    again = pl.replan(res)
    assert again.labels_so_far == res.n_labels
    assert again.stderr(res.n_labels) == pytest.approx(res.stderr, rel=1e-9)
    assert again.value == res.estimate
    assert again.stderr(400) < again.stderr(100) < res.stderr
    # passive's line is still the model's
    assert again.stderr(400, "passive") == pl.stderr(400, "passive")
    assert "re-planned from 60 labels" in str(again) and "more)" in str(again)


def test_replanning_an_overconfident_model_widens_the_plan() -> None:
    """The model claims 0.1% errors on most of the pool; the truth has 5%. Re-planning from
    labels that show it predicts a wider interval at the budget than the model did."""
    rng = np.random.default_rng(8)
    m = 4000
    s = np.where(rng.random(m) < 0.9, 0.001, rng.uniform(0.3, 0.7, m))
    truth = np.where(s == 0.001, 0.05, s)
    y = (rng.random(m) < truth).astype(int)
    proba = np.c_[1 - s, s]
    pl = ae.plan(proba, "error_rate", [400])
    res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=100, random_state=0)
    assert pl.replan(res).width(400) > 1.5 * pl.width(400)


def test_replanning_keeps_the_model_when_the_labels_show_no_variance() -> None:
    proba = _pool(2000, 3)
    proba[:, 1] = np.minimum(proba[:, 1], 0.02)
    proba[:, 0] = 1.0 - proba[:, 1]
    y = np.zeros(2000, dtype=int)  # no error anywhere
    pl = ae.plan(proba, "error_rate", [100, 400], target_width=0.02)
    res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=50, random_state=0)
    assert res.stderr == 0.0
    with pytest.warns(ae.ActiveEvalWarning, match="standard error is 0"):
        again = pl.replan(res)
    assert again.stderr(400) == pl.stderr(400) > 0
    assert again.needed["active"] == pl.needed["active"] >= 1


def test_a_power_no_budget_reaches_is_none() -> None:
    a = _pool(800, 4)
    b = a[::-1].copy()
    pl = ae.plan([a, b], "error_rate", [100], effect=0.0)
    assert pl.needed == {"active": None, "passive": None} and pl.saving is None
    assert "not reachable" in str(pl)


def test_recalibration_is_the_penalized_likelihood_optimum() -> None:
    """Platt scaling of the logits with the Gaussian prior, slope capped at 1: against
    scipy's bounded optimizer on the same objective."""
    from scipy.optimize import minimize

    from activeeval.planner import _PRIOR_SD, _recalibrated

    rng = np.random.default_rng(6)
    for trial in range(4):
        s = rng.uniform(0.05, 0.95, 400)
        # trials 0–1: an underconfident model (the cap binds); 2–3: overconfident
        truth = 1 / (1 + np.exp(-(3.0 if trial < 2 else 0.4) * np.log(s / (1 - s)) - 0.3))
        y = (rng.random(400) < truth).astype(int)
        units = rng.choice(400, 100, replace=False)
        w = rng.uniform(0.5, 2.0, 100)
        got = _recalibrated(Categorical(np.c_[1 - s, s]), units, y[units], w).proba[:, 1]
        x = np.log(s / (1 - s))[units]
        ww = w * 100 / w.sum()

        def f(th: np.ndarray, x=x, ww=ww, yy=y[units]) -> float:
            z = th[0] * x + th[1]
            nll = np.sum(ww * (np.logaddexp(0, z) - yy * z))
            return float(nll + ((th[0] - 1) ** 2 + th[1] ** 2) / (2 * _PRIOR_SD**2))

        best = minimize(f, [1.0, 0.0], bounds=[(None, 1.0), (None, None)], method="L-BFGS-B",
                        options={"ftol": 1e-14, "gtol": 1e-10})  # fmt: skip
        want = 1 / (1 + np.exp(-(best.x[0] * np.log(s / (1 - s)) + best.x[1])))
        np.testing.assert_allclose(got, want, atol=2e-5)


def test_replanning_refuses_a_result_it_cannot_use() -> None:
    proba = _pool(500, 9)
    y = (np.random.default_rng(2).random(500) < proba[:, 1]).astype(int)
    pl = ae.plan(proba, "error_rate", [100])
    f1 = ae.evaluate(proba, lambda i: y[i], "f1", budget=40, random_state=0)
    with pytest.raises(UnknownOptionError, match=r"^result: estimates f1, this plan error_rate"):
        pl.replan(f1)
    cmp = ae.compare([proba, proba[::-1]], lambda i: y[i], "error_rate", budget=40)
    with pytest.raises(UnknownOptionError, match=r"^result: a ComparisonResult cannot"):
        pl.replan(cmp)
    passive = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=40, method="passive")
    with pytest.raises(ShapeError, match=r"^result: its draws do not come from this plan's"):
        pl.replan(passive)


# ------------------------------------------------------------------ refusals and warnings
def test_plan_refuses_what_it_does_not_plan() -> None:
    proba = _pool(100, 1)
    rel = GradedRelevance(np.full((12, 2), 0.5), np.arange(0, 13, 3))
    with pytest.raises(ShapeError, match="only be planned with another ranker's"):
        ae.plan([rel, proba], "dcg")
    with pytest.raises(ShapeError, match="one model or a pair, got 3"):
        ae.plan([proba, proba, proba], "error_rate")
    with pytest.raises(ShapeError, match=r"^power: must lie strictly between 0 and 1"):
        ae.plan(proba, "error_rate", power=1.0)
    with pytest.raises(ShapeError, match=r"^target_width: must be a finite positive"):
        ae.plan(proba, "error_rate", target_width=-0.1)
    with pytest.raises(BudgetError, match=r"^budgets: must be finite positive"):
        ae.plan(proba, "error_rate", [0, 100])
    with pytest.raises(UnknownOptionError, match=r"^alternative"):
        ae.plan(proba, "error_rate", alternative="smaller")
    with pytest.raises(UnknownOptionError, match=r"^target_width: give target_width="):
        ae.plan(proba, "error_rate").budget_for()
    for measure in ("ece", "roc_auc", "average_precision"):
        with pytest.raises(UnknownOptionError, match=rf"^measure: .* the interval of {measure}, a"):
            ae.plan(proba, measure)
    for measure in ("brier", "log_loss", "ece", "roc_auc", "average_precision"):
        with pytest.raises(UnknownOptionError, match=rf"^measure: .* a comparison of {measure}, a"):
            ae.plan([proba, proba[::-1]], measure)


@pytest.mark.parametrize("estimator", ["assisted", "snis"])
@pytest.mark.parametrize("measure", ["brier", "log_loss"])
def test_a_scoring_rules_variance_is_the_asymptotic_variance_by_enumeration(
    estimator: str, measure: str
) -> None:
    """A mean of losses of the probabilities (w ≡ 1, D = 1; with-replacement draws): the
    plan's t·V(t) is Σ_x Σ_y q(x) p(y|x) [v(x)(ℓ(x, y) − λ e(x) − (1 − λ) G)]² with e the
    model's expected loss, G its pool mean, λ = 1 (model-assisted) or 0 (thesis), every
    term enumerated; the losses scikit-learn's (brier_score_loss, log_loss per instance)."""
    from sklearn.metrics import brier_score_loss, log_loss

    rng = np.random.default_rng(6)
    m, k = 5, 3 if measure == "log_loss" else 2
    proba = rng.dirichlet(np.ones(k), m)
    q = rng.dirichlet(np.ones(m))
    p = np.full(m, 1.0 / m)

    def loss(x: int, y: int) -> float:
        if measure == "brier":
            return float(brier_score_loss([y], [proba[x, 1]], pos_label=1))
        return float(log_loss([y], proba[x : x + 1], labels=list(range(k))))

    e = np.array([sum(proba[x, c] * loss(x, c) for c in range(k)) for x in range(m)])
    g = float(p @ e)
    lam = 1.0 if estimator == "assisted" else 0.0
    expected = sum(
        q[x] * proba[x, c] * (p[x] / q[x] * (loss(x, c) - lam * e[x] - (1 - lam) * g)) ** 2
        for x, c in itertools.product(range(m), range(k))
    )
    pl = plan_for_q(proba, ae.get_measure(measure).bind(Categorical(proba)), q, [1.0],
                    method="active", estimator=estimator)  # fmt: skip
    assert pl.value == pytest.approx(g, rel=1e-12)
    c = pl._curves["active"]
    assert not c.finite  # the estimator's draws, with replacement
    t = 3.0
    assert c.variance(t) * t == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("estimator", ["assisted", "snis"])
@pytest.mark.parametrize("measure", ["brier", "log_loss"])
def test_a_scoring_rules_planned_variance_matches_campaigns(measure: str, estimator: str) -> None:
    """A well-specified pool of three classes under unequal pool weights (labels redrawn from
    the model for every campaign, so the target is the design variance expected over labels,
    as the plan's): 2,000 campaigns of draws from the plan's q up to the 150th distinct
    instance, estimated as evaluate estimates them; the error's variance about the pool's
    own value is the plan's within 3 Monte-Carlo standard errors."""
    from activeeval.estimators.probability import probability_estimate

    rng = np.random.default_rng(8)
    m, n, reps = 1500, 150, 2000
    proba = rng.dirichlet([0.6, 0.6, 3.0], m)
    w = rng.uniform(0.5, 2.0, m)
    pl = ae.plan(proba, measure, [n], pool_weights=w, estimator=estimator)
    q = pl._curves["active"].q
    meas = ae.get_measure(measure)
    loss = meas.loss_matrix(proba)
    cum = np.cumsum(proba, axis=1)
    err = np.empty(reps)
    for r in range(reps):
        y = (rng.random(m)[:, None] > cum).sum(axis=1)  # y ~ the model
        idx = ae.sampling.draw(q, 4 * n, random_state=rng)
        _, first = np.unique(idx, return_index=True)
        idx = idx[: np.sort(first)[n - 1] + 1]  # up to the n-th distinct instance
        est = probability_estimate(meas, proba, idx, y[idx], q[idx], pool_weights=w,
                                   estimator=estimator)  # fmt: skip
        err[r] = est.estimate - float(w @ loss[np.arange(m), y] / w.sum())
    var = float(err @ err / reps)
    se_rel = math.sqrt((np.mean(err**4) / var**2 - 1) / reps)
    assert abs(pl.stderr(n) ** 2 / var - 1) < 3 * se_rel, (pl.stderr(n) ** 2 / var, se_rel)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"power": "high"}, ShapeError, r"^power: must lie strictly between 0 and 1, got 'high'"),
        ({"target_width": "wide"}, ShapeError, r"^target_width: must be a finite positive"),
        ({"effect": "x"}, ShapeError, r"^effect: must be a finite number, got 'x'"),
        ({"effect": math.inf}, ShapeError, r"^effect: must be a finite number"),
        ({"null": "zero"}, ShapeError, r"^null: must be a finite number, got 'zero'"),
    ],
)
def test_plan_refuses_arguments_that_are_not_numbers_by_name(kwargs, err, match) -> None:  # type: ignore[no-untyped-def]
    pair = [_pool(100, 1), _pool(100, 2)]
    with pytest.raises(err, match=match):
        ae.plan(pair, "error_rate", **kwargs)


def test_plan_methods_refuse_arguments_that_are_not_numbers_by_name() -> None:
    pl = ae.plan(_pool(100, 1), "error_rate")
    with pytest.raises(BudgetError, match=r"^budget: must be a finite non-negative number"):
        pl.width("abc")
    with pytest.raises(ShapeError, match=r"^effect: must be a finite number"):
        pl.budget_for(effect="x")


def test_a_model_certain_of_everything_is_warned_about() -> None:
    proba = np.tile([1.0, 0.0], (50, 1))
    with pytest.warns(ae.ActiveEvalWarning, match="zero-width interval"):
        ae.plan(proba, "error_rate", [10], floor=0.0)


def test_the_plot_draws_one_line_per_method() -> None:
    import matplotlib

    matplotlib.use("Agg")
    ax = ae.plan(_pool(800, 2), "error_rate", target_width=0.05).plot()
    assert [ln.get_label() for ln in ax.get_lines()] == ["active", "passive", "target width"]


# ------------------------------------------------------------------ CLI
def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def pool_files(tmp_path: Path) -> dict[str, Path]:
    m = 1500
    proba = _pool(m, 3)
    sb = np.clip(proba[:, 1] + np.random.default_rng(1).normal(0, 0.15, m), 0.01, 0.99)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    ids = np.arange(m)
    np.savetxt(a, np.c_[ids, proba], delimiter=",", header="id,p_0,p_1", comments="",
               fmt=["%d", "%.17g", "%.17g"])  # fmt: skip
    np.savetxt(b, np.c_[ids, 1 - sb, sb], delimiter=",", header="id,p_0,p_1", comments="",
               fmt=["%d", "%.17g", "%.17g"])  # fmt: skip
    y = (np.random.default_rng(4).random(m) < proba[:, 1]).astype(int)
    truth = tmp_path / "truth.csv"
    np.savetxt(truth, np.c_[ids, y], delimiter=",", header="id,label", comments="", fmt="%d")
    return {"a": a, "b": b, "truth": truth, "dir": tmp_path, "proba": proba}  # type: ignore[dict-item]


def test_cli_plan_prints_the_table_and_the_budget(pool_files) -> None:
    code, out, err = _run("plan", "--pool", pool_files["a"], "--measure", "f1", "--pos-label",
                          "1", "--target-width", "0.1", "--budgets", "100,200")  # fmt: skip
    assert code == 0, err
    want = ae.plan(pool_files["proba"], "f1", [100, 200], target_width=0.1, pos_label=1)
    assert out.startswith("plan: evaluation of f1 (positive class 1), method active, estimator")
    assert f"active: {want.needed['active']:g} labels" in out
    assert f"passive: {want.needed['passive']:g} labels" in out
    code, out, _ = _run("plan", "--pool", pool_files["a"], "--pool", pool_files["b"],
                        "--measure", "error_rate", "--effect", "0.02", "--json")  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "comparison" and doc["needed"]["active"] > 0
    assert {"budget", "stderr_active", "power_passive"} <= set(doc["rows"][0])


def test_cli_plan_takes_the_decision_column_session_init_scores(pool_files) -> None:
    """--prediction-column plans for the decision f(x) (a threshold's class), as session init
    --prediction-column scores it, not for the most probable class."""
    proba = pool_files["proba"]
    f = (proba[:, 1] > 0.3).astype(int)
    frame = pd.read_csv(pool_files["a"]).assign(at_0_3=f)
    decided = pool_files["dir"] / "decided.csv"
    frame.to_csv(decided, index=False)
    code, out, err = _run("plan", "--pool", decided, "--measure", "f1", "--target-width",
                          "0.1", "--prediction-column", "at_0_3", "--json")  # fmt: skip
    assert code == 0, err
    want = ae.plan(proba, "f1", target_width=0.1, prediction=f)
    assert json.loads(out)["needed"] == want.to_dict()["needed"]
    assert want.needed != ae.plan(proba, "f1", target_width=0.1).needed  # the decision counts


def test_cli_plan_writes_a_plot_and_refuses_bad_input(pool_files) -> None:
    png = pool_files["dir"] / "plan.png"
    code, _out, _ = _run("plan", "--pool", pool_files["a"], "--measure", "error_rate",
                        "--plot", png)  # fmt: skip
    assert code == 0 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, _, err = _run("plan", "--pool", pool_files["a"], "--measure", "error_rate",
                        "--budgets", "100,lots")  # fmt: skip
    assert code == 2 and err.startswith("error: --budgets: expected comma-separated numbers")
    code, _, err = _run("plan", "--pool", pool_files["a"], "--measure", "error_rate",
                        "--plot", pool_files["dir"] / "x.pdf")  # fmt: skip
    assert code == 2 and "must end in .png" in err
    code, _, err = _run("plan", "--pool", pool_files["a"], "--measure", "error_rate",
                        "--beta", "2")  # fmt: skip
    assert code == 2 and "only the F-measure" in err
    for flag, value in (("--alternative", "smaller"), ("--level", "2"), ("--power", "1"),
                        ("--target-width", "-1")):  # fmt: skip
        code, _, err = _run("plan", "--pool", pool_files["a"], "--measure", "error_rate",
                            flag, value)  # fmt: skip
        assert code == 2 and err.startswith(f"error: {flag}: "), err


def test_session_status_replans_from_the_labels_so_far(pool_files) -> None:
    store = pool_files["dir"] / "s.db"
    assert _run("session", "init", store, "--pool", pool_files["a"], "--measure",
                "error_rate", "--budget", "300")[0] == 0  # fmt: skip
    batch = pool_files["dir"] / "batch.csv"
    assert _run("session", "next", store, "--k", "60", "--out", batch)[0] == 0
    truth = dict(np.loadtxt(pool_files["truth"], delimiter=",", skiprows=1, dtype=int))
    ids = [int(r.split(",")[0]) for r in batch.read_text().splitlines()[1:]]
    labels = pool_files["dir"] / "l.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{truth[i]}\n" for i in ids))
    assert _run("session", "record", store, labels)[0] == 0
    code, out, err = _run("session", "status", store, "--target-width", "0.05")
    assert code == 0, err
    with ae.Session.open(store) as s:
        res = s.estimate()
        pl = plan_for_q(s.predictives[0], s.measure, s.q, [300], method="active",
                        target_width=0.05).replan(res)  # fmt: skip
    assert f"re-planned from {res.n_labels} labels" in out
    more = pl.needed["active"] - res.n_labels
    assert f"{pl.needed['active']:.0f} labels in all, {more:.0f} more" in out
    code, out, _ = _run("session", "status", store, "--json", "--target-width", "0.05")
    doc = json.loads(out)["plan"]
    assert doc["width_at_budget"] == pytest.approx(pl.width(300))
    assert doc["budget_needed"] == pl.needed["active"]
    assert "plan" not in json.loads(_run("session", "status", store, "--json")[1])


def test_a_finished_session_s_status_predicts_no_width_at_the_budget(pool_files) -> None:
    """A new user found "at the budget the interval should be about …" on a session whose
    budget was spent: once complete, status re-plans only when asked (--target-width)."""
    store = pool_files["dir"] / "done.db"
    assert _run("session", "init", store, "--pool", pool_files["a"], "--measure",
                "error_rate", "--budget", "40")[0] == 0  # fmt: skip
    truth = dict(np.loadtxt(pool_files["truth"], delimiter=",", skiprows=1, dtype=int))
    batch, labels = pool_files["dir"] / "b.csv", pool_files["dir"] / "l2.csv"
    for _ in range(3):  # the last call finds the budget spent
        assert _run("session", "next", store, "--k", "40", "--out", batch)[0] == 0
        ids = [int(r.split(",")[0]) for r in batch.read_text().splitlines()[1:]]
        if ids:
            labels.write_text("id,label\n" + "".join(f"{i},{truth[i]}\n" for i in ids))
            assert _run("session", "record", store, labels)[0] == 0
    with ae.Session.open(store) as s:
        assert s.progress().complete
    code, out, err = _run("session", "status", store)
    assert code == 0, err
    assert "plan:" not in out
    assert "re-planned from" in _run("session", "status", store, "--target-width", "0.05")[1]


def test_a_measure_is_checked_as_evaluate_checks_it() -> None:
    """A numeric loss refuses a classifier's class probabilities, as evaluate does."""
    words = Categorical(_pool(100, 1), labels=np.array(["ham", "spam"]))
    with pytest.raises(ae.ActiveEvalError, match="mse scores numeric predictions"):
        ae.plan(words, SquaredError())
    assert math.isfinite(ae.plan(Gaussian(np.zeros(300), np.ones(300)), "mse", [50]).stderr(50))


def test_planning_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    from reproduce import planning

    result = planning.run(tmp_path, reps=20, smoke=True, log=lambda s: None)
    md = (tmp_path / "planning.md").read_text()
    assert md.startswith("# Planning a budget") and "## Figures" in md
    data = json.loads((tmp_path / "planning.json").read_text())
    assert data["reps"] == 20 and len(data["settings"]) == 2
    for s in result["settings"]:
        a = s["active"]
        assert len(a["predicted"]) == len(s["budgets"]) == len(a["coverage_upper"])
        assert a["replanned_median_ratio"][0] is None  # the re-plan starts at 50 labels
        assert all(0.0 <= c <= 1.0 for c in a["coverage_lower"] + a["coverage_upper"])
        # The reported interval contains its design-based part, so each side covers as often.
        for side in ("lower", "upper"):
            rep, des = a[f"coverage_{side}"], a[f"design_coverage_{side}"]
            assert all(r >= d for r, d in zip(rep, des, strict=True)), (side, rep, des)
    assert "The design-based part alone" in md
    # The Brier score and log loss: the planner's width beside the campaigns' Wald width.
    prob = data["probability"]
    assert prob["reps"] == 20 and {r["measure"] for r in prob["rows"]} == {"brier", "log_loss"}
    for r in prob["rows"]:
        assert len(r["predicted"]) == len(r["realized"]) == len(r["budgets"])
        assert r["replanned_median_ratio"][0] is None and r["replanned_median_ratio"][-1] > 0
        assert all(0.0 <= c <= 1.0 for c in r["coverage_lower"] + r["coverage_upper"])
    assert "## Measures of probabilities" in md
    # One section again: the same numbers (campaigns seeded by repetition, in two processes
    # here), the other section kept from planning.json.
    again = planning.run(tmp_path, reps=20, smoke=True, log=lambda s: None,
                         sections=("probability",), workers=2)  # fmt: skip
    assert json.dumps(again["probability"]["rows"]) == json.dumps(prob["rows"])
    assert json.dumps(again["settings"]) == json.dumps(data["settings"])
    widths = planning.run(tmp_path, reps=20, smoke=True, log=lambda s: None, sections=("widths",))
    assert json.dumps(widths["probability"]) == json.dumps(again["probability"])


# ------------------------------------------------------------------ ranked pools
def _ranked_pool(seed: int, m: int = 1500):
    rng = np.random.default_rng(seed)
    lens = rng.integers(2, 7, m)
    off = np.r_[0, np.cumsum(lens)]
    n = int(off[-1])
    items = np.concatenate([np.arange(k) for k in lens])
    proba = rng.dirichlet([0.5, 0.5, 0.5], n)
    perm = np.concatenate([off[i] + rng.permutation(lens[i]) for i in range(m)])
    r1 = ae.GradedRelevance(proba, off, items=items)
    r2 = ae.GradedRelevance(proba[perm], off, items=items[perm])
    return rng, r1, r2, perm


@pytest.mark.parametrize("method", ["active", "passive"])
def test_predicted_variance_of_a_ranker_matches_campaigns(method: str) -> None:
    """DCG of a ranker whose grades are drawn afresh from its grade model (eq. 6.10's moment
    from App. A.1's dynamic programs)."""
    from activeeval.ranking import ranking_values

    rng, rel, _, _ = _ranked_pool(0)
    off = rel.offsets
    meas = ae.DCG().bind(rel)
    pl = ae.plan(rel, "dcg", [150], method=method)
    dev = []
    for r in range(300):
        y = (rng.random(rel.proba.shape[0])[:, None] > np.cumsum(rel.proba, 1)).sum(1)
        truth = ranking_values(meas, y, off).mean()
        res = ae.evaluate(rel, lambda idx, y=y: [y[off[i] : off[i + 1]] for i in idx], "dcg",
                          budget=150, method=method, random_state=r)  # fmt: skip
        dev.append(res.inference.estimate - truth)
    _within_chi2(float(np.var(dev, ddof=1)), pl.stderr(150, method) ** 2, 300)
    again = pl.replan(res)
    assert again.stderr(res.n_labels) == pytest.approx(res.stderr, rel=1e-9)


def test_predicted_variance_of_two_rankers_matches_campaigns() -> None:
    """Two rankers ordering the same items differently: Δ DCG under the per-item mixture
    (eq. 6.11), grades drawn from the shared model."""
    from activeeval.ranking import ranking_union, ranking_values

    rng, r1, r2, perm = _ranked_pool(1)
    off = r1.offsets
    meas = ae.DCG().bind(r1)
    pl = ae.plan([r1, r2], "dcg", [150])
    dev = []
    for r in range(300):
        y = (rng.random(r1.proba.shape[0])[:, None] > np.cumsum(r1.proba, 1)).sum(1)
        truth = ranking_values(meas, y, off).mean() - ranking_values(meas, y[perm], off).mean()

        def oracle(idx, y=y):
            items, offs = ranking_union(r1, r2, np.asarray(idx))
            flat = y[off[np.repeat(np.asarray(idx), np.diff(offs))] + items]
            return [flat[offs[k] : offs[k + 1]] for k in range(len(idx))]

        res = ae.compare([r1, r2], oracle, "dcg", budget=150, random_state=r)
        dev.append(res.difference - truth)
    _within_chi2(float(np.var(dev, ddof=1)), pl.stderr(150) ** 2, 300)
    again = pl.replan(res)
    assert again.stderr(res.n_labels) == pytest.approx(res.stderr, rel=1e-9)


def test_plan_refuses_identical_models_and_a_measure_that_does_not_fit() -> None:
    proba = _pool(300, 2)
    with pytest.raises(ShapeError, match="predict the same label on every instance"):
        ae.plan([proba, proba.copy()], "error_rate", effect=0.01)
    reg = Gaussian(np.zeros(300), np.ones(300))
    with pytest.raises(UnknownOptionError, match=r"^measure: error_rate scores class labels"):
        ae.plan(reg, "error_rate")


@pytest.mark.parametrize("measure", ["brier", "log_loss"])
def test_replanning_a_scoring_rule_scales_the_standard_error_so_far(measure: str) -> None:
    """Its estimator counts every draw, so the re-plan's curves both fall as 1/t: the
    re-planned standard error at n labels is the result's times √(t_now / t_n), t the
    expected draws at each number of labels. A decision, and a pair (even of models with
    the same decisions), are refused by name."""
    rng = np.random.default_rng(0)
    m = 3000
    p1 = rng.beta(1.0, 8.0, m)
    proba = np.c_[1 - p1, p1]
    y = (rng.random(m) < 1 / (1 + ((1 - p1) / p1) ** 0.5)).astype(int)  # twice too confident
    pl = ae.plan(proba, measure, [400])
    res = ae.evaluate(proba, lambda i: y[i], measure, budget=80, random_state=1)
    c = pl._curves["active"]
    t_now, t_400 = c.time_for(80.0, False), c.time_for(400.0, False)
    want = res.stderr * math.sqrt(t_now / t_400)
    assert pl.replan(res).stderr(400) == pytest.approx(want, rel=1e-9)
    with pytest.raises(UnknownOptionError, match=rf"^prediction: {measure} scores"):
        ae.plan(proba, measure, prediction=np.zeros(m, dtype=int))
    other = np.c_[1 - p1 / 2, p1 / 2]  # the same decisions everywhere, other probabilities
    with pytest.raises(UnknownOptionError, match=rf"a comparison of {measure}, a"):
        ae.plan([proba, other], measure)
