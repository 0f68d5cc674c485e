"""The one step from a sample to a reported result, shared by campaigns and sessions.

Given the draws, the pool distribution q they were drawn from and their labels, these functions
give the estimate or comparison that :func:`~activeeval.evaluate` / :func:`~activeeval.compare`
report and a :class:`~activeeval.Session` reports for the same draws, bit for bit: the exact
value once every instance that can move the measure is labeled (a census), else the
model-assisted estimator (:mod:`activeeval.estimators.assisted`) or the thesis's
(:mod:`activeeval.estimators.inference`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ShapeError
from ..measures import Measure, clip_to_range
from ..predictive import Predictive
from ..ranking import GradedRelevance, QueryValue, ranking_expectation, ranking_mixed_pair
from .assisted import (
    _as_assisted_census,
    _estimate_from_terms,
    _paired_from_terms,
    _successive_rows,
    _unused_features,
    _value_pool,
    _value_terms,
    assisted_estimate,
    assisted_multiple_comparison,
    assisted_paired_test,
)
from .inference import (
    Comparison,
    Estimate,
    _difference,
    _warn_undefined,
    estimate,
    multiple_comparison,
    paired_test,
)
from .smoother import DEFAULT_BANDWIDTH, _check_bandwidth, _feature_moments

#: The estimators a campaign or session reports with: the model-assisted one (default) and
#: the thesis's self-normalized eq. 3.31.


def _check_features(features: ArrayLike | None, bandwidth: float, m: int, refused: str) -> None:
    """Features that cannot serve (``refused`` says where, when non-empty) are refused, and
    usable ones validated, so that bad input fails before labels are bought."""
    if refused:
        _no_features(features, refused)
    elif features is not None:
        _feature_moments(features, m)  # the checks, without the standardized copy
        _check_bandwidth(bandwidth)


def _no_features(features: object, where: str) -> None:
    """Pool features (given in any form: an array, or the CLI's file) serve only the
    model-assisted estimator of a classifier or regressor."""
    if features is not None:
        if "ranking" in where:
            fix = "drop features"
        elif "stratified" in where or "active_neq" in where:
            fix = "drop features or use method='active' with estimator='assisted'"
        else:
            fix = "drop features or use estimator='assisted'"
        raise ShapeError(
            f"features: only the model-assisted estimator of a classifier or regressor uses "
            f"pool features, not {where}; {fix}."
        )


def _static_estimate(
    meas: Measure,
    predictive: Predictive,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    q: NDArray[np.float64],
    pw: NDArray[np.float64],
    lv: float,
    estimator: str,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
    *,
    census: Estimate | None,
) -> tuple[Estimate, str]:
    """The estimate from draws i.i.d. from the pool distribution ``q`` (labels ``y`` per
    draw), and the interval method to report with it — what :func:`evaluate` and a session
    (:meth:`~activeeval.Session.estimate`) report: the exact value once every instance that can
    move the measure is labeled; else the model-assisted estimator in its finite-population
    form (logit interval for measures in [0, 1]; with the pool's ``features`` as a second
    control variate) or the thesis's (Wald). ``census`` is :func:`_census`'s result for these
    draws (the caller computes it once: it warns when the measure is undefined)."""
    est = census
    if est is not None and estimator == "assisted":
        est = _as_assisted_census(est, features)
    if est is None and estimator == "assisted":
        est = assisted_estimate(
            meas, predictive, draws, y, pool_weights=pw, level=lv, pool_q=q, features=features,
            bandwidth=bandwidth,
        )  # fmt: skip
    elif est is None:
        est = estimate(
            meas, predictive.take(draws), y, q[draws], p=pw[draws], indices=draws, level=lv
        )
    return est, "logit" if estimator == "assisted" and est.binary_loss else "wald"


def _reported(est: Estimate, lv: float, interval: str, meas: Any) -> tuple[float, Any]:
    """The estimate and its interval as evaluate and a session report them: clipped to the
    measure's range (:func:`~activeeval.measures.clip_to_range`; ``inference`` keeps the
    unclipped estimate)."""
    if math.isnan(est.estimate):
        return est.estimate, (math.nan, math.nan)
    ci = est.confidence_interval(lv, method=interval)
    return clip_to_range(est.estimate, ci, meas.value_range)


def _exact_comparison(
    values: Sequence[float], n_draws: int, n_labels: int, level: float, meas: Measure
) -> Comparison:
    """The comparison when every instance with test mass is labeled: exact values, stderr 0,
    p-value 0 (1 on an exact tie); NaN, warned, where a model's value is undefined."""
    diff = _difference(values[0], values[1])
    if math.isnan(diff):
        _warn_undefined(meas.name, census=True)
    return Comparison(
        estimates=(float(values[0]), float(values[1])),
        difference=diff,
        stderr=math.nan if math.isnan(diff) else 0.0,
        p_value=math.nan if math.isnan(diff) else 1.0 if diff == 0.0 else 0.0,
        n_draws=int(n_draws),
        n_labels=int(n_labels),
        greater_is_better=meas.greater_is_better,
        level=level,
        measure=meas.name,
    )


def _census(
    meas: Measure,
    predictive: Predictive,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    pw: NDArray[np.float64],
    level: float,
) -> Estimate | None:
    """The exact value when every pool instance that can move the measure (p > 0 and a weight
    that can be positive) is among the labeled ``draws`` — e.g. precision once all predicted
    positives are — with standard error 0; None otherwise."""
    f = predictive.point_prediction()
    needed = meas.weight_can_be_positive(f) & (pw > 0)
    idx, first = np.unique(draws, return_index=True)
    if not _covers(idx, needed):
        return None
    value = _exact_value(meas, f[idx], y[first], pw[idx])
    if math.isnan(value):
        _warn_undefined(meas.name, census=True)
    return Estimate(
        value,
        math.nan if math.isnan(value) else 0.0,
        int(draws.shape[0]),
        int(idx.shape[0]),
        float(idx.shape[0]),
        meas.binary_loss,
        level,
        meas.name,
        census=True,
    )


def _exact_value(meas: Measure, f: NDArray[Any], y: NDArray[Any], p: NDArray[np.float64]) -> float:
    """G = Σ p w ℓ / Σ p w over labeled instances that include all of G's support (a census)."""
    w = meas.weight(f, y) * p
    total = float(w.sum())
    return float(w @ meas.loss(f, y)) / total if total > 0 else math.nan


def _covers(units: NDArray[np.intp], needed: NDArray[np.bool_]) -> bool:
    """Whether the distinct pool indices ``units`` include every instance in ``needed``."""
    return int(np.count_nonzero(needed[units])) == int(np.count_nonzero(needed))


def _compare_sample(
    meas: Measure,
    preds: list[Predictive],
    y: NDArray[Any],
    draws: NDArray[np.intp],
    q: NDArray[np.float64],
    pw: NDArray[np.float64],
    support_mass: float,
    level: float,
    estimator: str = "snis",
    census: bool = False,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> tuple[float, float, float, int, NDArray[np.float64], Any]:
    """Difference, stderr, p-value, best index, estimates and the full comparison object; with
    ``census``, for two models the exact values with stderr 0 once every instance with test
    mass is among the labeled ``draws`` — what :func:`compare` and a comparison session
    (:meth:`~activeeval.Session.compare`) report at the end. ``features`` serve the
    model-assisted estimator only (validated by the caller)."""
    if census and len(preds) == 2 and support_mass == 1.0:
        units, first = np.unique(draws, return_index=True)
        if _covers(units, pw > 0):
            f_at = [pr.point_prediction()[units] for pr in preds]
            exact = [_exact_value(meas, f, y[first], pw[units]) for f in f_at]
            cmp = _exact_comparison(exact, draws.shape[0], units.shape[0], level, meas)
            cmp = _unused_features(cmp, features)  # exact: no control variate, features unused
            return cmp.difference, cmp.stderr, cmp.p_value, cmp.best, np.array(exact), cmp
    at = [p.take(draws) for p in preds]
    if len(preds) == 2 and estimator == "assisted":
        c = assisted_paired_test(
            meas, preds, draws, y, pool_weights=pw, level=level, pool_q=q, features=features,
            bandwidth=bandwidth,
        )  # fmt: skip
        return c.difference, c.stderr, c.p_value, c.best, np.array(c.estimates), c
    if len(preds) == 2:
        c = paired_test(
            meas,
            at,
            y,
            q[draws],
            p=pw[draws],
            indices=draws,
            level=level,
            support_mass=support_mass,
        )
        est = np.array(c.estimates if support_mass == 1.0 else (np.nan, np.nan))
        return c.difference, c.stderr, c.p_value, c.best, est, c
    if estimator == "assisted":
        mc = assisted_multiple_comparison(
            meas, preds, draws, y, pool_weights=pw, pool_q=q, features=features,
            bandwidth=bandwidth,
        )  # fmt: skip
    else:
        mc = multiple_comparison(meas, at, y, q[draws], p=pw[draws], indices=draws)
    best = mc.best
    runner = int(mc.ranking[1])
    row = mc.pairwise[
        (mc.pairwise["a"] == min(best, runner)) & (mc.pairwise["b"] == max(best, runner))
    ].iloc[0]
    sign = 1.0 if best < runner else -1.0
    return (
        float(sign * row["difference"]),
        float(row["stderr"]),
        float(row["p_holm"]),
        best,
        mc.estimates,
        mc,
    )


def _ranking_pair_pools(rel1: GradedRelevance, rel2: GradedRelevance, meas: Any, pw: Any) -> Any:
    """The two rankers' control-variate pool moments (the mixture of their grade models)."""
    return [_value_pool(ranking_expectation(r, meas), pw) for r in ranking_mixed_pair(rel1, rel2)]


def _ranking_comparison(
    meas: Any,
    draws: NDArray[np.intp],
    values: tuple[NDArray[np.float64], NDArray[np.float64]],
    q: NDArray[np.float64],
    pw: NDArray[np.float64],
    lv: float,
    estimator: str,
    pools: Any,
    census: bool = False,
) -> Comparison:
    """Two rankers' paired test from query draws i.i.d. from ``q`` with per-draw values —
    what :func:`compare` and a ranked comparison session report; with ``census``, the exact
    values once every query with test mass is labeled. ``pools``: the control variate's pool
    moments (:func:`_ranking_pair_pools`) for the model-assisted estimator."""
    qv = QueryValue(meas)
    if census:
        units, first = np.unique(draws, return_index=True)
        if _covers(units, pw > 0):  # both rankers' values are exact
            exact = [float(pw[units] @ val[first]) for val in values]
            return _exact_comparison(exact, draws.shape[0], units.shape[0], lv, qv)
    if estimator == "snis":
        zeros = np.zeros(draws.shape[0])
        return paired_test(qv, list(values), zeros, q[draws], p=pw[draws], indices=draws, level=lv)
    pos, v, fpc = _successive_rows(draws, q, pw)
    parts = [_value_terms(val[pos], pl, draws[pos]) for val, pl in zip(values, pools, strict=True)]
    return _paired_from_terms(v, [parts], None, draws, lv, qv, fpc)


def _ranking_estimate(
    meas: Any,
    rel: GradedRelevance,
    draws: NDArray[np.intp],
    values: NDArray[np.float64],
    q: NDArray[np.float64],
    pw: NDArray[np.float64],
    lv: float,
    estimator: str,
    pool: Any = None,
) -> Estimate:
    """A ranker's estimate from query draws i.i.d. from ``q`` with per-draw values ℓ(r(x), y)
    (eq. 6.9) — what :func:`evaluate` and a ranked session report: the exact value once every
    query with test mass is labeled, else the model-assisted or the thesis's estimator
    (``pool``: the control variate's pool moments, computed if not given)."""
    qv = QueryValue(meas)
    units, first = np.unique(draws, return_index=True)
    if _covers(units, pw > 0):  # every query that counts is labeled: the exact value
        exact = float(pw[units] @ values[first])
        n = units.shape[0]
        est = Estimate(exact, 0.0, draws.shape[0], n, float(n), False, lv, meas.name, census=True)
        return _as_assisted_census(est) if estimator == "assisted" else est
    if estimator == "assisted":
        if pool is None:
            pool = _value_pool(ranking_expectation(rel, meas), pw)
        pos, v, fpc = _successive_rows(draws, q, pw)
        terms = _value_terms(values[pos], pool, draws[pos])
        return _estimate_from_terms(v, *terms, None, draws, lv, qv, fpc)
    return estimate(
        qv, values, np.zeros(draws.shape[0]), q[draws], p=pw[draws], indices=draws, level=lv
    )
