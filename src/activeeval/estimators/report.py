"""The one step from a sample to a reported result, shared by campaigns and sessions.

Given the draws, the pool distribution q they were drawn from and their labels, these functions
give the estimate or comparison that :func:`~activeeval.evaluate` / :func:`~activeeval.compare`
report and a :class:`~activeeval.Session` reports for the same draws, bit for bit: the exact
value once every instance that can move the measure is labeled (a census), else the
model-assisted estimator (:mod:`activeeval.estimators.assisted`) or the thesis's
(:mod:`activeeval.estimators.inference`). :class:`Reporting` says how (measure, q, test
distribution, level, estimator, features); :class:`ComparisonOutcome` is a comparison's result.

The pool interface, :class:`Pool`, keeps the difference between a pool of instances
(:class:`PlainPool`) and one of ranked queries (:class:`RankedPool`) in one place: the
methods each takes, its label book and the result's label fields, where features are
refused, its estimate and comparison (a ranked pool's on per-query values, with its
control-variate moments cached). :func:`pool_for` picks the class.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .._chunks import row_chunks, uniform
from ..acquisition import Check, _flat_grades, _GradeBook, _label_check, _LabelBook
from ..errors import DegenerateIntervalWarning, ShapeError, UnknownOptionError
from ..measures import (
    ClasswiseMeasure,
    Measure,
    as_categorical,
    clip_to_range,
    decision_index,
)
from ..methods import (
    COMPARISON_METHODS,
    EVALUATE_METHODS,
    RANKING_METHODS,
    SAMPLING_METHODS,
    SESSION_COMPARISON_METHODS,
)
from ..predictive import Categorical, Gaussian, Predictive
from ..ranking import (
    GradedRelevance,
    QueryValue,
    _absolute_mean_var,
    ranking_expectation,
    ranking_mixed_pair,
    ranking_pair_values,
    ranking_union,
    ranking_values,
)
from ..sampling import remembering_times
from .anytime import DrawTerms
from .assisted import (
    _as_assisted_census,
    _estimate_from_terms,
    _Expected,
    _model_terms,
    _paired_from_terms,
    _Pool,
    _successive_rows,
    _unused_features,
    _value_pool,
    _value_terms,
    assisted_estimate,
    assisted_multiple_comparison,
    assisted_paired_test,
)
from .classwise import ClassDraws, PoolCounts
from .classwise import _estimate as _classwise_estimate
from .classwise import _paired as _classwise_paired
from .classwise import on_pool as _on_pool
from .inference import (
    Attainable,
    Comparison,
    Estimate,
    ScoreCurve,
    _difference,
    _multiple_from_influence,
    _warn_undefined,
    estimate,
    multiple_comparison,
    paired_test,
)
from .smoother import DEFAULT_BANDWIDTH, _check_bandwidth, _feature_moments
from .summary import (
    AtRows,
    PairSummary,
    PoolSummary,
    summary_estimate,
    summary_multiple_comparison,
    summary_paired_test,
)
from .tempered import (
    GRID,
    Rows,
    _Tempering,
    pointwise_log_likelihood,
    score_curve,
    subsample,
    tempered,
)
from .tempered import curve as tempered_curve

#: The index of a = 1 (the model itself) in the tempered family's grid.
_ONE = int(np.argmin(np.abs(GRID - 1.0)))


@dataclass(frozen=True, eq=False)
class Reporting:
    """How a sample is turned into a result: the (bound) measure, the pool distribution ``q``
    the draws come from, the test distribution over the pool (``pool_weights``, normalized),
    the confidence level, the estimator (one of :data:`~activeeval.methods.ESTIMATORS`), and
    for the model-assisted estimator the pool's ``features`` and the smoother's
    ``bandwidth``. ``support_mass`` < 1 (``active_neq``: q lives on the models'
    disagreements) identifies a comparison's difference only, not each model's value."""

    measure: Any
    q: NDArray[np.float64]
    pool_weights: NDArray[np.float64]
    level: float
    estimator: str
    features: ArrayLike | None = None
    bandwidth: float = DEFAULT_BANDWIDTH
    support_mass: float = 1.0
    #: Whether the model-assisted estimate carries its tempered-model score curve (the
    #: reported interval); off for a session's trajectory, whose band is the design-based one.
    score: bool = True


class ComparisonOutcome(NamedTuple):
    """A comparison's sample as reported: Δ (the best model against the runner-up for k > 2,
    with its Holm-adjusted p-value), its standard error and p-value, the best model, every
    model's estimate, and the full comparison object (:class:`~.inference.Comparison` or
    :class:`~.inference.MultipleComparison`); with the model-assisted estimator, a function
    giving each model's tempered-model score curve on the comparison's draws, computed once
    when first asked (:func:`_model_scores`)."""

    difference: float
    stderr: float
    p_value: float
    best: int
    estimates: NDArray[np.float64]
    comparison: Any
    scores: Callable[[], tuple[ScoreCurve | None, ...]] | None = None


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
    rep: Reporting,
    predictive: Predictive,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    *,
    census: Estimate | None,
) -> tuple[Estimate, str]:
    """The estimate from draws i.i.d. from the pool distribution ``rep.q`` (labels ``y`` per
    draw), and the interval method to report with it — what :func:`evaluate` and a session
    (:meth:`~activeeval.Session.estimate`) report: the exact value once every instance that can
    move the measure is labeled; else the model-assisted estimator in its finite-population
    form (with the pool's ``features`` as a second control variate) and the tempered interval
    (the logit or Wald interval joined with the tempered-model score interval, :func:`_score`),
    or the thesis's (Wald). ``census`` is :func:`_census`'s result for these
    draws (the caller computes it once: it warns when the measure is undefined)."""
    meas, q, pw, lv = rep.measure, rep.q, rep.pool_weights, rep.level
    assisted = rep.estimator == "assisted"
    est = census
    if est is not None and assisted:
        est = _as_assisted_census(est, rep.features)
    if est is None and assisted:
        with remembering_times():  # the estimator and its curve share the time t of q
            est = assisted_estimate(
                meas, predictive, draws, y, pool_weights=pw, level=lv, pool_q=q,
                features=rep.features, bandwidth=rep.bandwidth,
            )  # fmt: skip
            curve = _score(rep, predictive, draws, y, est) if rep.score else None
        if curve is not None:
            est = replace(est, score=curve, attainable=_attainable(meas, predictive, pw, draws, y))
            return est, "tempered"
    if est is None:
        est = estimate(
            meas, predictive.take(draws), y, q[draws], p=pw[draws], indices=draws, level=lv
        )
    if rep.score and not est.census:  # the reported estimate (not a look's or a band's)
        est = replace(est, attainable=_attainable(meas, predictive, pw, draws, y))
    return est, "logit" if assisted and est.binary_loss else "wald"


def _score(
    rep: Reporting, predictive: Predictive, draws: NDArray[np.intp], y: NDArray[Any],
    est: Estimate,
) -> ScoreCurve | None:  # fmt: skip
    """The tempered-model score curve of a static campaign's draws (the default's interval;
    :mod:`activeeval.estimators.tempered`). The curve's variances are those of the estimator
    with the model as its control variate; where the pool's features add the smoothed
    residuals as a second one, they are scaled by the share of variance the smoother leaves
    on these draws, (se with features / se without)² capped at 1 — else the score interval
    would undo the smoother's gain (coverage 0.99 where the design-based one is 0.95)."""
    curve = _ModelScores(rep, [predictive], *_labeled_units(draws, y))()[0]
    if curve is None or rep.features is None or not getattr(est, "feature_power", 0.0):
        return curve
    plain = assisted_estimate(
        rep.measure, predictive, draws, y, pool_weights=rep.pool_weights, level=rep.level,
        pool_q=rep.q,
    )  # fmt: skip
    share = min((est.stderr / plain.stderr) ** 2, 1.0) if plain.stderr > 0 else 1.0
    return replace(curve, variances=curve.variances * share)


def summary_static_estimate(
    meas: Measure,
    pred: Any,
    s: PoolSummary,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    draw_q: NDArray[np.float64],
    level: float,
    score: bool = True,
    estimator: str = "assisted",
) -> tuple[Estimate, str]:
    """:meth:`PlainPool.estimate` of a static q (no features, a session's uniform test
    distribution) by ``estimator`` from the model's pool summary ``s``
    (:mod:`~activeeval.estimators.summary`) and the labeled rows — ``pred`` gives the model at
    the drawn rows (``take``), ``draw_q`` each draw's q — bit for bit what the pool's arrays
    give (tested), without reading them. The thesis's estimator (``"snis"``, eq. 3.31)
    reads of the pool only whether the labels are a census."""
    units, first = np.unique(draws, return_index=True)
    f = pred.take(units).point_prediction()
    p = uniform(s.size)  # a session's test distribution (rep.pool_weights)
    if int(np.count_nonzero(meas.weight_can_be_positive(f) & (p[units] > 0))) == s.n_domain:
        est: Estimate = _census_of(meas, f, y[first], p[units], int(draws.shape[0]), level)
        if estimator != "assisted":
            return est, "wald"
        est = _as_assisted_census(est)
        return est, "logit" if est.binary_loss else "wald"
    if estimator != "assisted":  # as _static_estimate
        return estimate(meas, pred.take(draws), y, draw_q, p=p[draws], indices=draws,
                        level=level), "wald"  # fmt: skip
    n = int(units.shape[0])
    t = s.time.time(n)  # once: the estimate and its tempered curve share it
    est = summary_estimate(meas, pred, s, draws, y, draw_q, level, t)
    if score and s.curve_family and s.time.n_support > n:
        rows = Rows(s.sample, None, s.sample_q, s.sample_p, s.size, t)
        curve = tempered_curve(rows, meas, pred.take(units), y[first])
        if curve is not None:
            return replace(est, score=curve), "tempered"
    return est, "logit" if est.binary_loss else "wald"


def summary_near_census(meas: Measure, pred: Any, s: PoolSummary, units: NDArray[np.intp]) -> bool:
    """Whether a session's distinct labeled instances ``units`` (``pred`` gives the model at
    them, ``take``) leave out a few of the instances that can move the measure — at most
    :func:`near_census_limit` of class probabilities' — where :func:`_static_estimate` moves
    the interval to the values the measure can still take: the pool summary knows how many
    are left out, not which, so the estimate is the pool's (a session's test distribution is
    uniform: every instance has test mass)."""
    rows = pred.take(units)
    if type(rows) is not Categorical:
        return False
    needed = int(np.count_nonzero(meas.weight_can_be_positive(rows.point_prediction())))
    return 0 < s.n_domain - needed <= near_census_limit(rows.proba.shape[1])


def _adaptive_estimate(
    rep: Reporting,
    predictive: Predictive,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    draw_q: NDArray[np.float64],
) -> tuple[Estimate, str]:
    """Batch-adaptive sampling's estimate: q changed between batches, so every draw is
    weighted by the q it was drawn from (``draw_q``), in the with-replacement form. Without
    the ratio-bias correction, which assumes draws from one q: on email F1 at 200 labels in
    batches of 50 it turned a bias of +0.0015 into −0.0081 and raised the MAE by 0.0048 ±
    0.0010 (150 paired campaigns)."""
    meas, pw, lv = rep.measure, rep.pool_weights, rep.level
    est: Estimate
    if rep.estimator == "assisted":
        est = assisted_estimate(
            meas, predictive, draws, y, draw_q, pool_weights=pw, level=lv,
            bias_correction=False, features=rep.features, bandwidth=rep.bandwidth,
        )  # fmt: skip
    else:
        est = estimate(
            meas, predictive.take(draws), y, draw_q, p=pw[draws], indices=draws, level=lv
        )
    return est, "logit" if rep.estimator == "assisted" and est.binary_loss else "wald"


def _result_fields(rep: Reporting, est: Estimate, interval: str) -> dict[str, Any]:
    """An :class:`~activeeval.EvaluationResult`'s fields from the estimate (those describing
    the sample — cost, budget, method, draws, their q and labels — are the caller's)."""
    return _fields(rep.measure, rep.level, est, interval)


def _fields(meas: Any, level: float, est: Estimate, interval: str) -> dict[str, Any]:
    """:func:`_result_fields` of the measure ``meas`` at ``level``."""
    if math.isnan(est.estimate):
        value, ci = est.estimate, (math.nan, math.nan)
    else:
        ci = est.confidence_interval(level, method=interval)
        value, ci = clip_to_range(est.within_attainable(), ci, meas.value_range)
    return {
        "estimate": value,
        "stderr": est.stderr,
        "ci": ci,
        "level": level,
        "n_labels": est.n_labels,
        "n_draws": est.n_draws,
        "measure": est.measure,
        "inference": est,
        "interval": interval,
        "value_range": meas.value_range,
    }


def _before(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Σ_{j < i} x_j for every i (the sums over the draws before each one)."""
    out = np.empty_like(x)
    if x.size:
        out[0] = 0.0
        np.cumsum(x[:-1], out=out[1:])
    return out


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
        stderrs=tuple(0.0 if math.isfinite(v) else math.nan for v in values[:2]),  # type: ignore[arg-type]
        census=True,
    )


def _census(
    rep: Reporting, predictive: Predictive, draws: NDArray[np.intp], y: NDArray[Any]
) -> Estimate | None:
    """The exact value when every pool instance that can move the measure (p > 0 and a weight
    that can be positive) is among the labeled ``draws`` — e.g. precision once all predicted
    positives are — with standard error 0; None otherwise."""
    meas, pw = rep.measure, rep.pool_weights
    idx, first = np.unique(draws, return_index=True)
    if not _labels_every_needed(meas, predictive, pw, idx):
        return None
    f = predictive.take(idx).point_prediction()
    return _census_of(meas, f, y[first], pw[idx], int(draws.shape[0]), rep.level)


def _census_of(
    meas: Measure, f: NDArray[Any], y: NDArray[Any], p: NDArray[np.float64], n_draws: int,
    level: float,
) -> Estimate:  # fmt: skip
    """The census of :func:`_census` from the decisions ``f``, labels ``y`` and test mass
    ``p`` of the distinct labeled instances (one each), after ``n_draws`` draws."""
    value = _exact_value(meas, f, y, p)
    if math.isnan(value):
        _warn_undefined(meas.name, census=True)
    n = int(f.shape[0])
    return Estimate(
        value,
        math.nan if math.isnan(value) else 0.0,
        n_draws,
        n,
        float(n),
        meas.binary_loss,
        level,
        meas.name,
        census=True,
    )


def _exact_value(meas: Measure, f: NDArray[Any], y: NDArray[Any], p: NDArray[np.float64]) -> float:
    """G = Σ p w ℓ / Σ p w over labeled instances that include all of G's support (a census),
    each sum correctly rounded (``math.fsum``): models whose terms are the same up to order
    (two with the same number of errors) get the same value, an exact tie."""
    w = meas.weight(f, y) * p
    total = math.fsum(w.tolist())
    return math.fsum((w * meas.loss(f, y)).tolist()) / total if total > 0 else math.nan


def _labels_every_needed(
    meas: Measure, predictive: Predictive, pw: NDArray[np.float64], units: NDArray[np.intp]
) -> bool:
    """Whether the sorted distinct pool indices ``units`` include every instance with test
    mass whose weight can be positive (:func:`_left_out` finds none)."""
    return _left_out(meas, predictive, pw, units, 0) is not None


def _left_out(
    meas: Measure,
    predictive: Predictive,
    pw: NDArray[np.float64],
    units: NDArray[np.intp],
    most: int,
) -> NDArray[np.intp] | None:
    """The instances with test mass whose weight can be positive that the sorted distinct
    pool indices ``units`` leave out, or None when there are more than ``most`` — a chunk of
    the pool at a time, stopping at the chunk where they pass ``most`` (the first, unless
    nearly everything is labeled)."""
    out, count = [], 0
    for rows in row_chunks(predictive.n):
        f = predictive._chunk(rows).point_prediction()
        needed = meas.weight_can_be_positive(f) & (pw[rows] > 0)
        lo, hi = np.searchsorted(units, [rows.start, rows.stop])
        needed[units[lo:hi] - rows.start] = False
        left = np.flatnonzero(needed)
        count += left.shape[0]
        if count > most:
            return None
        out.append(left + rows.start)
    return np.concatenate(out) if out else np.empty(0, dtype=np.intp)


#: Near a census the interval's ends move out to values the measure can still take
#: (:func:`_attainable`) while the labels of the instances left out have at most this many
#: assignments (twelve instances of two classes, seven of three).
MAX_ASSIGNMENTS = 4096


def near_census_limit(k: int) -> int:
    """The most instances left out whose labels among ``k`` classes :func:`_attainable`
    enumerates (k^n ≤ :data:`MAX_ASSIGNMENTS`)."""
    return int(math.log(MAX_ASSIGNMENTS) / math.log(k)) if k > 1 else 0


def _attainable(
    meas: Measure, predictive: Predictive, pw: NDArray[np.float64], draws: NDArray[np.intp],
    y: NDArray[Any],
) -> Attainable | None:  # fmt: skip
    """Every value the measure can still take given the labels ``y`` of the ``draws`` — the
    census value G = Σ p w ℓ / Σ p w under each assignment of labels to the instances left
    out that can move it (:func:`_left_out`), sorted and distinct — for class probabilities
    near a census (at most :data:`MAX_ASSIGNMENTS` assignments); None otherwise. Their slack:
    64 ε times the sums' absolute scale over the smallest denominator (a value near 0 by
    cancellation, a win rate's, is not within 64 ulps of itself summed otherwise).

    The pool's value is one of them, so an interval whose ends move out to the nearest of
    them and in to their range covers whenever it did, and more: near a census the estimator
    spreads the labeled instances' mean residual over the few left out and its standard error
    sees none of their uncertainty — spam by number, group 'none' (163 instances, naive
    Bayes), reported ±0.0012 with one instance unlabeled whose error moves the value by
    0.0061, and missed in every such campaign (coverage 0.917)."""
    if type(predictive) is not Categorical:
        return None
    units, first = np.unique(draws, return_index=True)
    left = _left_out(meas, predictive, pw, units, near_census_limit(predictive.proba.shape[1]))
    if left is None or left.shape[0] == 0:
        return None
    k = predictive.proba.shape[1]
    f_l = predictive.take(units).point_prediction()
    w_l = meas.weight(f_l, y[first]) * pw[units]
    wl_l = w_l * meas.loss(f_l, y[first])
    num = math.fsum(wl_l.tolist())
    den = math.fsum(w_l.tolist())
    f_u = predictive.take(left).point_prediction()
    u = left.shape[0]
    w_u, wl_u = np.empty((u, k)), np.empty((u, k))  # per instance left out and class
    for c in range(k):
        label = np.repeat(predictive.labels[c : c + 1], u)
        w_u[:, c] = meas.weight(f_u, label) * pw[left]
        wl_u[:, c] = w_u[:, c] * meas.loss(f_u, label)
    pick = np.indices((k,) * u).reshape(u, -1)  # every assignment, one per column
    rows = np.arange(u)[:, None]
    d = den + w_u[rows, pick].sum(axis=0)
    n = num + wl_u[rows, pick].sum(axis=0)
    ok = d > 0
    if not ok.any():
        return None
    values = np.unique(n[ok] / d[ok])
    absolute = float(np.abs(wl_l).sum() + np.abs(wl_u).max(axis=1).sum())
    scale = absolute + float(np.abs(values).max()) * (abs(den) + np.abs(w_u).max(axis=1).sum())
    return Attainable(values, 64 * float(np.finfo(float).eps) * scale / float(d[ok].min()))


def refuse_undefined(
    meas: Measure, predictives: Sequence[Predictive], pw: NDArray[np.float64]
) -> None:
    """Refuse, before any label is bought, a measure that no label can define for any of
    the models: its weight w is zero whatever the label on every instance with test mass —
    the census of no label already covers what the measure needs (precision of models that
    predict the positive class nowhere: 0/0). A campaign would spend its whole budget and
    report NaN. One model of several may be undefined (the others are still reported)."""
    none = np.empty(0, dtype=np.intp)
    if not all(_labels_every_needed(meas, pr, pw, none) for pr in predictives):
        return
    raise undefined_error(meas, len(predictives))


def undefined_error(meas: Measure, n_models: int) -> ShapeError:
    """:func:`refuse_undefined`'s error for ``n_models`` models."""
    pos = getattr(meas, "pos_label", None)
    if pos is None:
        what = ""
    elif n_models == 1:
        what = f" (the model predicts {pos!r} for no instance with test mass)"
    else:
        what = f" (no model predicts {pos!r} for any instance with test mass)"
    return ShapeError(
        f"measure: {meas.name} is undefined whatever the labels{what}: its weight is zero on "
        "every instance, so no label can move it and a campaign would spend its budget on "
        "NaN. Check the predictions and pos_label, or evaluate another measure (e.g. "
        "'recall', 'f1' or 'error_rate')."
    )


def _covers(units: NDArray[np.intp], needed: NDArray[np.bool_]) -> bool:
    """Whether the distinct pool indices ``units`` include every instance in ``needed``."""
    return int(np.count_nonzero(needed[units])) == int(np.count_nonzero(needed))


def _outcome(c: Comparison) -> ComparisonOutcome:
    return ComparisonOutcome(c.difference, c.stderr, c.p_value, c.best, np.array(c.estimates), c)


def _compare_sample(
    rep: Reporting,
    preds: list[Predictive],
    draws: NDArray[np.intp],
    y: NDArray[Any],
    census: bool = False,
    n_differ: int | None = None,
) -> ComparisonOutcome:
    """The comparison of ``preds`` on the sample; with ``census``, for two models the exact
    values with stderr 0 once every instance with test mass is among the labeled ``draws`` —
    what :func:`compare` and a comparison session (:meth:`~activeeval.Session.compare`) report
    at the end — or the exact difference once every one of the ``n_differ`` units they decide
    differently on is (:func:`exact_difference`). ``rep.features`` serve the model-assisted
    estimator only (validated by the caller)."""
    meas, pw, level = rep.measure, rep.pool_weights, rep.level
    support_mass, features = rep.support_mass, rep.features
    if census and support_mass == 1.0:
        units, first = np.unique(draws, return_index=True)
        if _covers(units, pw > 0):
            f_at = [pr.take(units).point_prediction() for pr in preds]
            exact = [_exact_value(meas, f, y[first], pw[units]) for f in f_at]
            return exact_outcome(exact, draws.shape[0], units.shape[0], level, meas, features)
    known = exact_difference(meas, preds, draws, y, pw[draws], n_differ) if census else None
    return with_exact_difference(partial(_sample_outcome, rep, preds, draws, y), known)


def with_exact_difference(
    outcome: Callable[[], ComparisonOutcome], known: tuple[int, float] | None
) -> ComparisonOutcome:
    """The comparison ``outcome()`` — where the pair's difference is ``known`` exactly
    (:func:`exact_difference`), with Δ, standard error 0 and p-value 0 (1 on a tie), marked
    a census of the difference (each model's own estimate stays the estimator's; the
    estimator's degenerate-interval warning, which its standard error 0 would raise, is not
    given)."""
    if known is None:
        return outcome()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        out = outcome()
    delta = known[1]
    c = replace(out.comparison, difference=delta, stderr=0.0,
                p_value=1.0 if delta == 0.0 else 0.0, census=True)  # fmt: skip
    return out._replace(difference=delta, stderr=0.0, p_value=c.p_value, best=c.best,
                        comparison=c)  # fmt: skip


def _sample_outcome(
    rep: Reporting, preds: list[Predictive], draws: NDArray[np.intp], y: NDArray[Any]
) -> ComparisonOutcome:
    """:func:`_compare_sample`'s comparison on the sample (no census)."""
    meas, q, pw, level = rep.measure, rep.q, rep.pool_weights, rep.level
    support_mass, features = rep.support_mass, rep.features
    if rep.estimator != "assisted":
        at = [p.take(draws) for p in preds]
        return _thesis_outcome(meas, at, y, q[draws], pw[draws], draws, level, support_mass)
    if len(preds) == 2:
        c = assisted_paired_test(
            meas, preds, draws, y, pool_weights=pw, level=level, pool_q=q, features=features,
            bandwidth=rep.bandwidth,
        )  # fmt: skip
        return _outcome(c)._replace(scores=_model_scores(rep, preds, draws, y))
    mc = assisted_multiple_comparison(
        meas, preds, draws, y, pool_weights=pw, pool_q=q, features=features,
        bandwidth=rep.bandwidth,
    )  # fmt: skip
    return multiple_outcome(mc, _model_scores(rep, preds, draws, y))


def _thesis_outcome(
    meas: Measure, at: list[Predictive], y: NDArray[Any], draw_q: NDArray[np.float64],
    p: NDArray[np.float64], draws: NDArray[np.intp], level: float, support_mass: float = 1.0,
) -> ComparisonOutcome:  # fmt: skip
    """The comparison by the thesis's estimator (eq. 3.31 per model) of the models at the
    draws ``at``, each draw's q and test mass given: the paired test of two (each model's
    value NaN where q lives on part of the support, ``support_mass`` < 1), the best against
    the runner-up of more."""
    if len(at) == 2:
        c = paired_test(meas, at, y, draw_q, p=p, indices=draws, level=level,
                        support_mass=support_mass)  # fmt: skip
        est = np.array(c.estimates if support_mass == 1.0 else (np.nan, np.nan))
        return ComparisonOutcome(c.difference, c.stderr, c.p_value, c.best, est, c)
    return multiple_outcome(multiple_comparison(meas, at, y, draw_q, p=p, indices=draws))


def exact_outcome(
    exact: Sequence[float], n_draws: int, n_labels: int, level: float, meas: Measure,
    features: Any = None,
) -> ComparisonOutcome:  # fmt: skip
    """The comparison of models whose ``exact`` values are known, every instance with test
    mass labeled (a census): the pair's exact Δ, or for more models the exact multiple
    comparison, every standard error 0 and no warning of a degenerate interval."""
    if len(exact) == 2:
        cmp = _exact_comparison(exact, n_draws, n_labels, level, meas)
        cmp = _unused_features(cmp, features)  # exact: no control variate, features unused
        return ComparisonOutcome(
            cmp.difference, cmp.stderr, cmp.p_value, cmp.best, np.array(exact), cmp
        )
    g = np.array(exact, dtype=np.float64)
    zero = np.zeros((n_labels, g.shape[0]))
    mc = _multiple_from_influence(g, zero, n_labels, meas, n_draws=n_draws, census=True)
    return multiple_outcome(_unused_features(mc, features))


def multiple_outcome(mc: Any, scores: Any = None) -> ComparisonOutcome:
    """A comparison of k > 2 models as ``compare`` reports it: the best model against the
    runner-up (Δ signed as model index order gives it, its Holm-adjusted p-value; read
    without the studentized range, which waits until asked for)."""
    best = mc.best
    runner = int(mc.ranking[1])
    table = mc._table
    row = table[(table["a"] == min(best, runner)) & (table["b"] == max(best, runner))].iloc[0]
    sign = 1.0 if best < runner else -1.0
    return ComparisonOutcome(
        float(sign * row["difference"]),
        float(row["stderr"]),
        float(row["p_holm"]),
        best,
        mc.estimates,
        mc,
        scores,
    )


def _model_scores(
    rep: Reporting, preds: list[Predictive], draws: NDArray[np.intp], y: NDArray[Any]
) -> Callable[[], tuple[ScoreCurve | None, ...]] | None:
    """Each model's tempered-model score curve on a comparison's draws (its own
    predictions, the comparison's q), for :meth:`~activeeval.ComparisonResult.model_intervals`:
    a model's value rests on the few draws where the models agree, whose rare errors its Wald
    interval cannot see (0.79 coverage at 100 labels; with the curve 0.94–0.96, measured
    before a binary model's curve took the Platt members, which only widen it). The curves
    are computed when first asked for (a comparison's Δ does not need them), once. They
    assume each model's own control variate where the comparison may use the pair's mixture
    (measured coverage above). None where the draws do not identify each model's value
    (``active_neq``) or for a session's trajectory."""
    if not rep.score or rep.support_mass != 1.0:
        return None
    return _ModelScores(rep, preds, *_labeled_units(draws, y))


def _labeled_units(
    draws: NDArray[np.intp], y: NDArray[Any]
) -> tuple[NDArray[np.intp], NDArray[Any]]:
    """The distinct labeled instances of the draws and their labels (each once)."""
    units, first = np.unique(draws, return_index=True)
    return units, np.asarray(y)[first]


#: Pool rows, evenly spaced, at which :func:`_predictions_digest` reads the models.
DIGEST_ROWS = 256


def _predictions_digest(measure: Any, models: Sequence[Any], draws: NDArray[np.intp]) -> bytes:
    """A digest of what the models predict at :data:`DIGEST_ROWS` evenly spaced pool rows
    (queries, for rankers) and at the draws — their arrays (class or grade probabilities;
    a Gaussian's mean and variance) and, for predictive distributions, their decisions and
    the measure's conditional expectations: a result computes its anytime terms and
    tempered curves from the caller's arrays when first asked, so an array reused for
    another model after the call (a buffer filled again) must be noticed, not silently read.
    A few hundred rows, no copy of the pool; a change confined to rows it does not read
    (a fraction f of the pool, scattered: caught with probability about 1 − (1 − f)^256) can
    pass."""
    if not models:
        return b""
    m = models[0].n
    if isinstance(models[0], AtRows):  # known at the drawn rows only (a session's copies)
        rows = np.unique(draws)
    else:
        rows = np.unique(
            np.concatenate([np.linspace(0, m - 1, min(m, DIGEST_ROWS)).astype(np.intp), draws])
        )
    h = hashlib.sha256()
    for pr in models:
        part = pr.take(rows)
        for name in ("proba", "mean", "var"):
            arr = getattr(part, name, None)
            if isinstance(arr, np.ndarray):
                h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
        if isinstance(part, Predictive):
            f = np.asarray(part.point_prediction())
            h.update(repr(f.tolist()).encode() if f.dtype == object else f.tobytes())
            if not isinstance(measure, ClasswiseMeasure):  # a mean of per-instance losses
                for arr in measure.conditional_expectations(part, f):
                    h.update(np.ascontiguousarray(arr, dtype=np.float64).tobytes())
    return h.digest()


def _unchanged(measure: Any, models: Sequence[Any], draws: NDArray[np.intp], want: bytes) -> None:
    """Refuse to compute from predictions that changed since the result was made."""
    if want and _predictions_digest(measure, models, draws) != want:
        raise ShapeError(
            "predictions: the arrays given to evaluate/compare changed after the call (an array "
            "reused for another model?); this result computes its anytime interval and "
            "tempered curves from them when first asked. Pass a copy (evaluate(P.copy(), "
            "...)), or ask for them before changing the array."
        )


@dataclass(eq=False)
class _ModelScores:
    """Each model's tempered-model score curve on the labeled ``units`` (a static campaign's
    or a comparison's), computed on the first call and kept (a class rather than a closure,
    so that a result holding it can be pickled); refused if the models' predictions changed
    meanwhile (:func:`_predictions_digest`)."""

    rep: Reporting
    preds: list[Predictive]
    units: NDArray[np.intp]
    labels: NDArray[Any]
    done: tuple[ScoreCurve | None, ...] | None = None
    digest: bytes = b""

    def __post_init__(self) -> None:
        if not self.digest and self.done is None:
            self.digest = _predictions_digest(self.rep.measure, self.preds, self.units)

    def __call__(self) -> tuple[ScoreCurve | None, ...]:
        if self.done is None:
            _unchanged(self.rep.measure, self.preds, self.units, getattr(self, "digest", b""))
            r, units, labels = self.rep, self.units, self.labels
            self.done = tuple(
                score_curve(pr, r.measure, None, r.q, r.pool_weights, units, labels)
                for pr in self.preds
            )
        return self.done


def _ranking_comparison(
    rep: Reporting,
    draws: NDArray[np.intp],
    values: Sequence[NDArray[np.float64]],
    moments: Any,
    census: bool = False,
) -> Comparison:
    """Two rankers' paired test from query draws i.i.d. from ``rep.q`` with per-draw values —
    what :func:`compare` and a ranked comparison session report; with ``census``, the exact
    values once every query with test mass is labeled. ``moments``: the control variate's pool
    moments (:meth:`RankedPool.moments`) for the model-assisted estimator."""
    q, pw, lv = rep.q, rep.pool_weights, rep.level
    qv = QueryValue(rep.measure)
    if census:
        units, first = np.unique(draws, return_index=True)
        if _covers(units, pw > 0):  # both rankers' values are exact
            exact = [float(pw[units] @ val[first]) for val in values]
            return _exact_comparison(exact, draws.shape[0], units.shape[0], lv, qv)
    if rep.estimator == "snis":
        zeros = np.zeros(draws.shape[0])
        return paired_test(qv, list(values), zeros, q[draws], p=pw[draws], indices=draws, level=lv)
    pos, v, fpc = _successive_rows(draws, q, pw)
    parts = [
        _value_terms(val[pos], pl, draws[pos]) for val, pl in zip(values, moments, strict=True)
    ]
    return _paired_from_terms(v, [parts], None, draws, lv, qv, fpc)


def _ranking_estimate(
    rep: Reporting, draws: NDArray[np.intp], values: NDArray[np.float64], moments: Any
) -> Estimate:
    """A ranker's estimate from query draws i.i.d. from ``rep.q`` with per-draw values
    ℓ(r(x), y) (eq. 6.9) — what :func:`evaluate` and a ranked session report: the exact value
    once every query with test mass is labeled, else the model-assisted estimator (``moments``:
    its control variate's pool moments) or the thesis's."""
    meas, q, pw, lv = rep.measure, rep.q, rep.pool_weights, rep.level
    qv = QueryValue(meas)
    units, first = np.unique(draws, return_index=True)
    if _covers(units, pw > 0):  # every query that counts is labeled: the exact value
        exact = float(pw[units] @ values[first])
        n = units.shape[0]
        est = Estimate(exact, 0.0, draws.shape[0], n, float(n), False, lv, meas.name, census=True)
        return _as_assisted_census(est) if rep.estimator == "assisted" else est
    if rep.estimator == "assisted":
        pos, v, fpc = _successive_rows(draws, q, pw)
        terms = _value_terms(values[pos], moments, draws[pos])
        return _estimate_from_terms(v, terms, None, draws, lv, qv, fpc)
    return estimate(
        qv, values, np.zeros(draws.shape[0]), q[draws], p=pw[draws], indices=draws, level=lv
    )


# --------------------------------------------------------------------------- the pools
class Pool(ABC):
    """The one interface campaigns and sessions ask about their pool, so that neither
    branches on its kind: :class:`PlainPool` (instances, models' predictive distributions)
    or :class:`RankedPool` (ranked queries, rankers' grade models). ``labels`` below are
    per-draw labels in the pool's form (one per draw)."""

    #: What a draw picks and the budget counts (without costs).
    unit: ClassVar[str]
    #: The methods :func:`~activeeval.evaluate` and :func:`~activeeval.compare` take.
    evaluate_methods: ClassVar[tuple[str, ...]]
    compare_methods: ClassVar[tuple[str, ...]]
    #: Non-empty where pool features are refused whatever the estimator (the error message
    #: says so: "not {refuses_features}").
    refuses_features: ClassVar[str]

    def __init__(self, models: Sequence[Any], measure: Any, pool_weights: NDArray[Any]) -> None:
        self.models: list[Any] = list(models)
        self.measure = measure
        self.pool_weights = pool_weights
        self._sigma0_for: tuple[Any, NDArray[np.float64]] | None = None  # (key, σ₀), once

    @classmethod
    @abstractmethod
    def session_methods(cls, n_models: int) -> tuple[str, ...]:
        """The methods a :class:`~activeeval.Session` of ``n_models`` models takes."""

    @classmethod
    def check_features(
        cls, features: ArrayLike | None, bandwidth: float, m: int, where: str = ""
    ) -> None:
        """Refuse ``features`` where they cannot serve (this pool kind's refusal, else
        ``where`` when non-empty: e.g. the thesis's estimator); validate usable ones."""
        _check_features(features, bandwidth, m, cls.refuses_features or where)

    def reporting(
        self,
        q: NDArray[np.float64],
        level: float,
        estimator: str,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
        support_mass: float = 1.0,
    ) -> Reporting:
        """How this pool's samples from ``q`` are reported."""
        return Reporting(
            self.measure, q, self.pool_weights, level, estimator, features, bandwidth,
            support_mass,
        )  # fmt: skip

    @abstractmethod
    def label_book(self) -> tuple[_LabelBook, Check]:
        """A campaign's label book and its check of the oracle's answers."""

    @abstractmethod
    def label_fields(self, labels: NDArray[Any]) -> dict[str, Any]:
        """A result's ``labels`` and ``label_offsets`` from the per-draw labels."""

    @abstractmethod
    def estimate(
        self,
        rep: Reporting,
        model: int,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        draw_q: NDArray[np.float64] | None = None,
    ) -> tuple[Estimate, str]:
        """Model ``model``'s estimate on the sample, and the interval method to report it
        with; ``draw_q``: each draw's own q where q changed between batches."""

    @abstractmethod
    def compare(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        *,
        census: bool = False,
        draw_q: NDArray[np.float64] | None = None,
    ) -> ComparisonOutcome:
        """The models' comparison on the sample; with ``census``, the exact values once
        every unit with test mass is labeled (two models). ``draw_q``: each draw's q, for a
        pool that does not keep q over the pool (:class:`SummaryPool`); a pool that does
        weighs by the reporting's q and refuses it (:func:`_one_q`)."""

    @abstractmethod
    def _per_draw(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[Any]:
        """Each model's per-draw terms (w·ℓ, w, m_N, m_D, pool moments)."""

    def sigma0(self, rep: Reporting) -> NDArray[np.float64]:
        """Each model's model-implied per-draw σ of its sequence under each member of the
        tempered family (:data:`~.tempered.GRID`), shape (len(GRID), k); NaN: none (the start
        rule alone guards the first looks)."""
        return np.full((GRID.shape[0], len(self.models)), np.nan)

    def _loglik(self, model: int, units: NDArray[np.intp], labels: NDArray[Any]) -> Any:
        """The labels' log-likelihood under each tempered member, (units, len(GRID)), or
        None where the family is not defined."""
        return None

    def _sigma0_path(
        self,
        model: int,
        sig_grid: NDArray[np.float64],
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        first: NDArray[np.bool_],
        level: float,
    ) -> NDArray[np.float64]:
        """Per draw, the σ₀ a sequence shrinks toward after it: the largest model-implied σ
        over the tempered members the labels so far leave plausible (log-likelihood within
        χ²₁(level)/2 of the best, as :class:`~.inference.ScoreCurve`; the labels of units with
        test mass only, so a group's by its own, as :func:`~.tempered.score_curve`), so that
        an overconfident model does not pull σ̂ down; the model's own σ where the family is
        not defined, NaN where there is none."""
        n = draws.shape[0]
        if not np.any(np.isfinite(sig_grid)):
            return np.full(n, np.nan)
        ll = self._loglik(model, draws[first], labels[first])
        if ll is None:
            return np.full(n, float(sig_grid[_ONE]))
        ll = np.where((self.pool_weights[draws[first]] > 0)[:, None], ll, 0.0)
        cum = np.zeros((n, sig_grid.shape[0]))
        cum[first] = ll
        cum = np.cumsum(cum, axis=0)
        cut = float(special.gammaincinv(0.5, level))  # scipy.stats.chi2.ppf(level, 1) / 2
        plausible = cum >= cum.max(axis=1, keepdims=True) - cut
        return np.asarray(np.max(np.where(plausible, sig_grid[None, :], -np.inf), axis=1))

    def draw_terms(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        horizon: float,
        draw_q: NDArray[np.float64] | None = None,
        window: float | None = None,
    ) -> DrawTerms:
        """The per-draw terms of every model's confidence sequence
        (:mod:`~activeeval.estimators.anytime`, "Finite pools"): v = p/q with each draw's own
        q (``draw_q``; else ``rep.q``), the model's control variate, σ₀ from ``rep.q``; the
        boundary tuned at ``horizon`` draws, with a ``window`` (a target-width rule's)."""
        qd = rep.q[draws] if draw_q is None else draw_q
        pw = rep.pool_weights
        p = pw[draws]
        v = p / qd
        first = np.zeros(draws.shape[0], dtype=bool)
        first[np.unique(draws, return_index=True)[1]] = True
        parts = self._per_draw(draws, labels)
        key = (id(rep.q), rep.estimator)
        if self._sigma0_for is None or self._sigma0_for[0] != key:
            self._sigma0_for = (key, self.sigma0(rep))
        sig_grid = self._sigma0_for[1]
        cols, pos, raw, sig0 = [], [], [], []
        for j, (wl, w, mn, md, pool) in enumerate(parts):
            sig0.append(self._sigma0_path(j, sig_grid[:, j], draws, labels, first, rep.level))
            # The finite-pool martingale terms (docs/how-it-works/anytime.md): what the
            # labeled units hold exactly, plus the importance-weighted new unit.
            cols += [
                _before(p * wl * first) + v * wl * first,
                _before(p * w * first) + v * w * first,
                (pool.mu_num - _before(p * mn * first)) - v * mn * first,
                (pool.mu_den - _before(p * md * first)) - v * md * first,
            ]
            pos.append(first & (np.asarray(w) > 0))
            raw += [wl * first, w * first]
        meas = rep.measure
        n, k = draws.shape[0], len(parts)
        exact = exact_difference(meas, self.models, draws, labels, p, self._n_differ())
        return DrawTerms(
            z=np.column_stack(cols) if n else np.empty((0, 4 * k)),
            tune=rep.estimator == "assisted",
            positive=np.column_stack(pos) if n else np.empty((0, k), bool),
            raw=np.column_stack(raw) if n else np.empty((0, 2 * k)),
            sigma0=np.column_stack(sig0) if n else np.empty((0, k)),
            horizon=float(horizon),
            logit=bool(getattr(meas, "binary_loss", False)),
            value_range=getattr(meas, "value_range", (-math.inf, math.inf)),
            window=window,
            exact=exact,
        )

    def _n_differ(self) -> int | None:
        """How many units with test mass the first two models decide differently on, where
        that fixes their difference (a comparison of two models by a mean of per-instance
        losses, :func:`exact_difference`); None where not (or not known)."""
        return None


def _differ_known(meas: Measure, n_models: int) -> bool:
    """Whether a labeled set holding every unit two models decide differently on fixes their
    difference: a mean of per-instance losses of the decisions (the units where the two
    agree have equal losses, whatever their label)."""
    return n_models == 2 and bool(getattr(meas, "regular", False)) and hasattr(meas, "loss")


def count_differing(preds: Sequence[Any], pool_weights: NDArray[np.float64]) -> int:
    """The units with test mass on which the first two models' decisions differ, counted a
    chunk of rows at a time (no array the size of the pool)."""
    a, b = preds[0], preds[1]
    return sum(
        int(np.count_nonzero(
            (pool_weights[rows] > 0)
            & (a._chunk(rows).point_prediction() != b._chunk(rows).point_prediction())
        ))
        for rows in row_chunks(a.n)
    )  # fmt: skip


def exact_difference(
    meas: Measure, preds: Sequence[Any], draws: NDArray[np.intp], y: NDArray[Any],
    p: NDArray[np.float64], n_differ: int | None,
) -> tuple[int, float] | None:  # fmt: skip
    """(t₀, Δ) where the ``draws`` (their labels ``y``, test mass ``p``) label every one of
    the ``n_differ`` units with test mass on which two models ``preds`` decide differently
    (a pool's, or a summary's count; None: not known): from draw t₀ on, G₀ − G₁ = Σ p (ℓ₀ −
    ℓ₁) over those units exactly, the agreeing units adding nothing; None before, for
    another measure or number of models, or where the draws show more differing units than
    the count (a count that does not fit is not trusted). A census of the difference, not of
    the values. Each model's part is summed exactly (``math.fsum``) and a difference within
    rounding is a tie (:func:`_difference`), so that an exact tie is 0, not a sign that
    decides."""
    if n_differ is None or not _differ_known(meas, len(preds)) or draws.shape[0] == 0:
        return None
    f0, f1 = (pr.take(draws).point_prediction() for pr in preds)
    first = np.zeros(draws.shape[0], dtype=bool)
    first[np.unique(draws, return_index=True)[1]] = True
    new = first & (p > 0) & (np.asarray(f0) != np.asarray(f1))
    count = np.cumsum(new)
    if count[-1] != n_differ:
        return None
    t0 = 1 if n_differ == 0 else int(np.argmax(count == n_differ)) + 1
    at = np.flatnonzero(new)
    parts = [math.fsum(p[at] * meas.loss(np.asarray(f)[at], y[at])) for f in (f0, f1)]
    return t0, float(_difference(parts[0], parts[1]))


def _one_q(draw_q: NDArray[np.float64] | None) -> None:
    """Refuse each draw's own q in a comparison of a pool that weighs by the reporting's q:
    its draws come from one q over the pool."""
    if draw_q is not None:
        raise ShapeError(
            "draw_q: a comparison on the pool is weighted by the reporting's q over the pool; "
            "give draws from that q, without draw_q."
        )


class PlainPool(Pool):
    """A pool of instances, each model a predictive distribution p(y | x) over it
    (:class:`~activeeval.predictive.Categorical`, :class:`~activeeval.predictive.Gaussian`,
    …); a label is one value per instance."""

    unit: ClassVar[str] = "instances"
    evaluate_methods: ClassVar[tuple[str, ...]] = EVALUATE_METHODS
    compare_methods: ClassVar[tuple[str, ...]] = COMPARISON_METHODS
    refuses_features: ClassVar[str] = ""
    #: σ₀ summed over the tempered curve's fixed subsample where the test distribution is
    #: uniform (:meth:`sigma0`); False for a session stored before, which keeps the whole
    #: pool's sums.
    sigma0_subsample: bool = True

    @classmethod
    def session_methods(cls, n_models: int) -> tuple[str, ...]:
        return SAMPLING_METHODS if n_models == 1 else SESSION_COMPARISON_METHODS

    def label_book(self) -> tuple[_LabelBook, Check]:
        return _LabelBook(self.pool_weights.shape[0]), _label_check(self.models[0])

    def label_fields(self, labels: NDArray[Any]) -> dict[str, Any]:
        """The labels as they are, one per draw (no offsets)."""
        return {"labels": labels, "label_offsets": None}

    def estimate(
        self,
        rep: Reporting,
        model: int,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        draw_q: NDArray[np.float64] | None = None,
    ) -> tuple[Estimate, str]:
        """The census, else :func:`_static_estimate` (with ``draw_q``,
        :func:`_adaptive_estimate`)."""
        pred = self.models[model]
        census = _census(rep, pred, draws, labels)  # once: it warns when undefined
        if draw_q is not None and census is None:
            return _adaptive_estimate(rep, pred, draws, labels, draw_q)
        return _static_estimate(rep, pred, draws, labels, census=census)

    def compare(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        *,
        census: bool = False,
        draw_q: NDArray[np.float64] | None = None,
    ) -> ComparisonOutcome:
        """:func:`_compare_sample`: the paired test of two models, the multiple comparison
        of more."""
        _one_q(draw_q)
        n_differ = self._n_differ() if census else None
        return _compare_sample(rep, self.models, draws, labels, census, n_differ)

    def _n_differ(self) -> int | None:
        """Counted over the pool a chunk of rows at a time, once."""
        if not _differ_known(self.measure, len(self.models)):
            return None
        if getattr(self, "_differ", None) is None:
            self._differ = count_differing(self.models, self.pool_weights)
        return int(self._differ)

    def _per_draw(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[Any]:
        """Each model's terms with its own p(y | x) as the control variate's model."""
        meas, pw = self.measure, self.pool_weights
        return [_model_terms(meas, [pr], pr, draws, labels, pw)[0] for pr in self.models]

    def sigma0(self, rep: Reporting) -> NDArray[np.float64]:
        """σ₀² = Σ p²/q · (E[w²(ℓ − G)² | x] − λ(2 − λ)(m_N − G m_D)²) / D² over q > 0, labels
        drawn from each tempered member p_a (:data:`~.tempered.GRID`; G = μ_N/μ_D, D = μ_D
        under p_a), λ = 1 for the model-assisted estimator (its control variate removes the
        conditional mean when the model is right), 0 for the thesis's: the per-draw variance
        of ψ = (X − G Y)/D that q* is planned from (eq. 4.6's integrand). Where the family
        is not defined (a mixture), the model's own σ on every row. With a uniform test
        distribution, summed over the tempered curve's fixed subsample
        (:func:`~.tempered.subsample`: every row up to :data:`~.tempered.MAX_POOL`, beyond a
        uniform subsample scaled by m/k), which a session's pool summary keeps:
        :class:`SummaryPool` gives the same σ₀ without the pool. Otherwise (a group's or a
        given test distribution, whose mass a uniform subsample may miss, or a session
        stored before: :attr:`sigma0_subsample`) over the whole pool."""
        m = self.pool_weights.shape[0]
        keep = subsample(m)
        pw0 = self.pool_weights
        whole = (
            keep.shape[0] == m
            or not self.sigma0_subsample
            or not (pw0.strides == (0,) or bool(np.all(pw0 == pw0[0])))
        )
        q = rep.q if whole else rep.q[keep]
        pw = self.pool_weights if whole else self.pool_weights[keep]
        models = self.models if whole else [pr.take(keep) for pr in self.models]
        return np.column_stack(
            [sigma0_grid(self.measure, pr, pr.point_prediction(), pw, q, rep.estimator, m)
             for pr in models]
        )  # fmt: skip

    def _loglik(self, model: int, units: NDArray[np.intp], labels: NDArray[Any]) -> Any:
        pr = self.models[model]
        if not isinstance(pr, Categorical | Gaussian):  # the family tempered() defines
            return None
        return pointwise_log_likelihood(pr.take(units), labels)


def sigma0_grid(
    meas: Any,
    pr: Predictive,
    f: NDArray[Any],
    pw: NDArray[np.float64],
    q: NDArray[np.float64],
    estimator: str,
    m: int,
) -> NDArray[np.float64]:
    """:meth:`PlainPool.sigma0` of one model, shape (len(GRID),), from its rows on the fixed
    subsample of a pool of ``m`` (``pr``, its decisions ``f``, the test distribution ``pw``
    and q there)."""
    lam = 1.0 if estimator == "assisted" else 0.0
    out = np.full(GRID.shape[0], np.nan)
    at = _Tempering(pr).at if isinstance(pr, Categorical) else partial(tempered, pr)
    for i, a in enumerate(GRID):  # one tempering per model, not one per member
        member = pr if a == 1.0 else at(float(a))
        if member is None:
            out[:] = _sigma0(meas, pr, f, pw, q, lam, m)
            break
        out[i] = _sigma0(meas, member, f, pw, q, lam, m)
    return out


def _sigma0(
    meas: Any,
    pr: Predictive,
    f: NDArray[Any],
    pw: NDArray[np.float64],
    q: NDArray[np.float64],
    lam: float,
    m: int,
) -> float:
    """The per-draw σ of :meth:`PlainPool.sigma0` under ``pr``, from k rows of a pool of
    ``m`` (every sum over the pool is m/k times the rows' sum; exactly the pool's for k = m)."""
    scale = m / q.shape[0]
    on = q > 0
    mn, md = meas.conditional_expectations(pr, f)
    mu_d = scale * float(pw @ md)
    if not mu_d > 0:
        return math.nan
    g = scale * float(pw @ mn) / mu_d
    m2 = meas.conditional_second_moment(pr, g, f) - lam * (2 - lam) * (mn - g * md) ** 2
    total = scale * float(np.sum(pw[on] ** 2 / q[on] * np.maximum(m2[on], 0.0)))
    return math.sqrt(total / mu_d**2)


class SummaryPool(Pool):
    """A pool known through its pool summary — one model's
    (:class:`~.summary.PoolSummary`) or a comparison's of two
    (:class:`~.summary.PairSummary`) — and each model's rows at the drawn units
    (:class:`~.summary.AtRows`): a session's look at its stopping rule and the anytime
    interval of its estimate or comparison without the pool, bit for bit
    :class:`PlainPool`'s on a session's uniform test distribution (tested). Needs a summary
    that keeps the sequences' pool means (``terms_mu``). The draws' q are always given
    (``draw_q``): the pool's q is not kept."""

    unit: ClassVar[str] = "instances"
    evaluate_methods: ClassVar[tuple[str, ...]] = EVALUATE_METHODS
    compare_methods: ClassVar[tuple[str, ...]] = COMPARISON_METHODS
    refuses_features: ClassVar[str] = ""

    def __init__(
        self, at: AtRows | Sequence[AtRows], summary: PoolSummary | PairSummary, measure: Any
    ) -> None:
        ats = [at] if isinstance(at, AtRows) else list(at)
        if summary.terms_mu is None:
            raise ShapeError(
                "summary: stored before it kept the sequences' pool means; read the pool."
            )
        if len(ats) != len(_samples(summary)):
            raise ShapeError(
                f"at: the summary is of {len(_samples(summary))} model(s), got {len(ats)}."
            )
        super().__init__(ats, measure, uniform(summary.size))
        self.summary = summary

    @classmethod
    def session_methods(cls, n_models: int) -> tuple[str, ...]:
        return SAMPLING_METHODS if n_models == 1 else SESSION_COMPARISON_METHODS

    def label_book(self) -> tuple[_LabelBook, Check]:
        raise ShapeError("a pool summary labels nothing: it reports a session's labels.")

    def label_fields(self, labels: NDArray[Any]) -> dict[str, Any]:
        return {"labels": labels, "label_offsets": None}

    def estimate(
        self,
        rep: Reporting,
        model: int,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        draw_q: NDArray[np.float64] | None = None,
    ) -> tuple[Estimate, str]:
        s = self.summary
        if not isinstance(s, PoolSummary):
            raise ShapeError("estimate: a comparison's pair summary reports the comparison.")
        if draw_q is None:
            raise ShapeError("draw_q: a pool summary has no q over the pool; give each draw's.")
        return summary_static_estimate(
            self.measure,
            self.models[0],
            s,
            draws,
            labels,
            draw_q,
            rep.level,
            score=rep.score,
            estimator=rep.estimator,
        )

    def compare(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        *,
        census: bool = False,
        draw_q: NDArray[np.float64] | None = None,
    ) -> ComparisonOutcome:
        """:func:`~.summary.summary_paired_test` of two models, the multiple comparison
        (:func:`~.summary.summary_multiple_comparison`) of more (a look's comparison: no
        census, no tempered curves), as :meth:`PlainPool.compare` gives it without
        ``census``."""
        s = self.summary
        if not isinstance(s, PairSummary):
            raise ShapeError("compare: a one-model pool summary has no comparison.")
        if draw_q is None:
            raise ShapeError("draw_q: a pool summary has no q over the pool; give each draw's.")
        if census:
            raise ShapeError("census: a look at a pair summary compares on the sample.")
        return summary_outcome(
            self.measure, self.models, s, draws, labels, draw_q, rep.level, rep.estimator
        )

    def _n_differ(self) -> int | None:
        """The pair summary's count (None in summaries stored before it was kept, and in a
        one-model summary)."""
        return getattr(self.summary, "n_differ", None)

    def _per_draw(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[Any]:
        """Each model's terms at the draws, as :meth:`PlainPool._per_draw` computes them
        (its own p(y | x) the control variate's model), with the summary's pool means."""
        meas, s = self.measure, self.summary
        assert s.terms_mu is not None  # checked at __init__
        each = [s.terms_mu] if isinstance(s, PoolSummary) else list(s.terms_mu)
        parts = []
        for pred, (mu_n, mu_d) in zip(self.models, each, strict=True):
            pool = _Pool(_Expected(meas, pred, pred, 0), _Expected(meas, pred, pred, 1), mu_n, mu_d)
            parts += _model_terms(meas, [pred], pred, draws, labels, None, [pool])
        return parts

    def sigma0(self, rep: Reporting) -> NDArray[np.float64]:
        """:meth:`PlainPool.sigma0` from the summary's subsample (the rows it sums over): the
        grid the summary holds where it is the estimator's (a store's: its plan's estimator),
        else computed."""
        s = self.summary
        if rep.estimator == s.sigma0_estimator and s.sigma0 is not None:
            return s.sigma0.reshape(GRID.shape[0], -1)
        return summary_sigma0_grids(self.measure, s, rep.estimator)

    def _loglik(self, model: int, units: NDArray[np.intp], labels: NDArray[Any]) -> Any:
        at = self.models[model]
        if not isinstance(at.pred, Categorical | Gaussian):  # the family tempered() defines
            return None
        return pointwise_log_likelihood(at.take(units), labels)


def summary_outcome(
    meas: Any,
    preds: list[Any],
    s: PairSummary,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    draw_q: NDArray[np.float64],
    level: float,
    estimator: str = "assisted",
) -> ComparisonOutcome:
    """The comparison of the models at the drawn rows ``preds`` from their summary, as
    :func:`_compare_sample` gives it on the sample (no census, no tempered curves): the
    paired test of two, the best against the runner-up of more; by the thesis's estimator
    (``"snis"``) from the drawn rows alone."""
    if estimator != "assisted":  # a session's test distribution, uniform
        at = [pr.take(draws) for pr in preds]
        return _thesis_outcome(meas, at, labels, draw_q, uniform(s.size)[draws], draws, level)
    if len(preds) == 2:
        c = summary_paired_test(meas, preds, s, draws, labels, draw_q, level)
        return ComparisonOutcome(
            c.difference, c.stderr, c.p_value, c.best, np.array(c.estimates), c
        )
    return multiple_outcome(summary_multiple_comparison(meas, preds, s, draws, labels, draw_q))


def _samples(s: PoolSummary | PairSummary) -> tuple[Predictive, ...]:
    """Each model on the summary's subsample."""
    return (s.sample,) if isinstance(s, PoolSummary) else s.samples


def summary_sigma0(
    meas: Any, s: PoolSummary | PairSummary, estimator: str, model: int = 0
) -> NDArray[np.float64]:
    """Model ``model``'s σ₀ grid (:meth:`PlainPool.sigma0`) from its pool summary's
    subsample, on a session's uniform test distribution."""
    sample = _samples(s)[model]
    p = np.full(s.sample_q.shape[0], 1.0 / s.size)  # the session's uniform p there
    f = sample.point_prediction()
    return sigma0_grid(meas, sample, f, p, s.sample_q, estimator, s.size)


def summary_sigma0_grids(
    meas: Any, s: PoolSummary | PairSummary, estimator: str
) -> NDArray[np.float64]:
    """Every model's σ₀ grid from the summary (:func:`summary_sigma0`), shape (len(GRID), k):
    :meth:`PlainPool.sigma0`'s."""
    return np.column_stack([summary_sigma0(meas, s, estimator, k) for k in range(len(_samples(s)))])


def with_sigma0(meas: Any, s: PoolSummary | PairSummary, estimator: str = "assisted") -> Any:
    """The summary with its σ₀ grids for ``estimator``, as a store keeps its plan's
    (``sigma0``: one model's (len(GRID),), k models' (len(GRID), k)), so that no look
    computes them again."""
    grids = summary_sigma0_grids(meas, s, estimator)
    sigma0 = grids[:, 0] if isinstance(s, PoolSummary) else grids
    return replace(s, sigma0=sigma0, sigma0_estimator=estimator)


class RankedPool(Pool):
    """A pool of ranked queries (thesis Ch. 6), each model a ranker's
    :class:`~activeeval.ranking.GradedRelevance`: one ranker, or two compared on the union
    of their lists. A label is the grades of a query's items to grade (an int64 array; per-draw
    labels are an object array of them); the estimators work on each draw's value
    ℓ(r(x), y) (eq. 6.9)."""

    unit: ClassVar[str] = "queries"
    evaluate_methods: ClassVar[tuple[str, ...]] = RANKING_METHODS
    compare_methods: ClassVar[tuple[str, ...]] = RANKING_METHODS
    refuses_features: ClassVar[str] = "ranking pools"

    def __init__(self, models: Sequence[Any], measure: Any, pool_weights: NDArray[Any]) -> None:
        super().__init__(models, measure, pool_weights)
        self._moments: list[Any] | None = None

    @classmethod
    def session_methods(cls, n_models: int) -> tuple[str, ...]:
        return RANKING_METHODS

    def items_to_grade(self) -> tuple[NDArray[Any], NDArray[np.int64]]:
        """The items to grade, query after query (one ranker's list — its item ids, else the
        0-based ranks — or both lists' union, :func:`~activeeval.ranking.ranking_union`),
        and each query's offsets into them."""
        if len(self.models) == 1:
            rel = self.models[0]
            return (rel.positions if rel.items is None else rel.items), rel.offsets
        return ranking_union(self.models[0], self.models[1])

    def label_book(self) -> tuple[_LabelBook, Check]:
        rel = self.models[0]
        lengths = rel.lengths if len(self.models) == 1 else np.diff(self.items_to_grade()[1])
        book = _GradeBook(lengths, rel.n_grades)
        return book, book.accept

    def label_fields(self, labels: NDArray[Any]) -> dict[str, Any]:
        """The grades flat, with each draw's offsets (as :func:`~activeeval.evaluate`
        reports them)."""
        flat, offsets = _flat_grades(labels)
        return {"labels": flat, "label_offsets": offsets}

    def moments(self) -> list[Any]:
        """Each ranker's control-variate pool moments (computed once per pool): its own grade
        model's for one ranker, the mixture of both for two (an item both show, eq. 5.11)."""
        if self._moments is None:
            rels, meas, pw = self.models, self.measure, self.pool_weights
            models = ranking_mixed_pair(rels[0], rels[1]) if len(rels) == 2 else rels
            self._moments = [_value_pool(ranking_expectation(r, meas), pw) for r in models]
        return list(self._moments)

    def values(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[NDArray[np.float64]]:
        """Each ranker's per-draw value ℓ(r(x), y) (eq. 6.9) from the grades."""
        flat, offsets = _flat_grades(labels)
        if len(self.models) == 1:
            return [ranking_values(self.measure, flat, offsets)]
        return list(ranking_pair_values(self.models[0], self.models[1], self.measure, draws, flat))

    def estimate(
        self,
        rep: Reporting,
        model: int,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        draw_q: NDArray[np.float64] | None = None,
    ) -> tuple[Estimate, str]:
        """:func:`_ranking_estimate` on ranker ``model``'s values (Wald). Batch-adaptive
        sampling (``draw_q``) is not available for rankings."""
        if draw_q is not None:
            raise ShapeError("batch_size: batch-adaptive sampling is not available for rankings.")
        moments = self.moments()[model] if rep.estimator == "assisted" else None
        return _ranking_estimate(rep, draws, self.values(draws, labels)[model], moments), "wald"

    def compare(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        *,
        census: bool = False,
        draw_q: NDArray[np.float64] | None = None,
    ) -> ComparisonOutcome:
        """:func:`_ranking_comparison`: the two rankers' paired test on their values."""
        _one_q(draw_q)
        moments = self.moments() if rep.estimator == "assisted" else None
        return _outcome(
            _ranking_comparison(rep, draws, self.values(draws, labels), moments, census)
        )

    def _per_draw(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[Any]:
        """Each ranker's per-draw values with its grade model's expectation as control
        variate (App. A.1)."""
        values, moments = self.values(draws, labels), self.moments()
        return [_value_terms(x, mom, draws) for x, mom in zip(values, moments, strict=True)]

    def sigma0(self, rep: Reporting) -> NDArray[np.float64]:
        """Each ranker's per-draw σ₀ were its grade model right: Σ p²/q · (Var[ℓ | x] +
        (1 − λ)²(E[ℓ | x] − G)²) over q > 0 (App. A.1's moments; a query's value has weight
        1), the same on every row (rankers have no tempered family)."""
        lam = 1.0 if rep.estimator == "assisted" else 0.0
        pw, q = self.pool_weights, rep.q
        on = q > 0
        out = np.full((GRID.shape[0], len(self.models)), np.nan)
        for j, rel in enumerate(self.models):
            mean, var = _absolute_mean_var(rel, self.measure.bind(rel))
            g = float(pw @ mean)
            m2 = var + (1 - lam) ** 2 * (mean - g) ** 2
            out[:, j] = math.sqrt(float(np.sum(pw[on] ** 2 / q[on] * m2[on])))
        return out


@dataclass(eq=False)
class LazyTerms:
    """A sample's per-draw terms for the anytime-valid sequences (:meth:`Pool.draw_terms`),
    computed on the first call and kept (a class, so that a result holding it pickles)."""

    pool: Pool
    rep: Reporting
    draws: NDArray[np.intp]
    labels: NDArray[Any]
    horizon: float
    draw_q: NDArray[np.float64] | None = None
    #: One model of several (a comparison's draws reported for one model), or all.
    model: int | None = None
    #: The window of a target-width rule's boundary (:func:`~.anytime.window_boundary`).
    window: float | None = None
    done: DrawTerms | None = None
    #: What the models predicted when the result was made (:func:`_predictions_digest`).
    digest: bytes = b""

    def __post_init__(self) -> None:
        if not self.digest and self.done is None:
            self.digest = _predictions_digest(self.pool.measure, self.pool.models, self.draws)

    def __call__(self) -> DrawTerms:
        if self.done is None:
            want = getattr(self, "digest", b"")
            _unchanged(self.pool.measure, self.pool.models, self.draws, want)
            terms = self.pool.draw_terms(
                self.rep, self.draws, self.labels, self.horizon, self.draw_q, self.window
            )
            self.done = terms if self.model is None else terms.only(self.model)
        return self.done


class ClasswisePool(PlainPool):
    """A pool of instances whose measure is a function of several ratios (macro / weighted
    F_β, balanced accuracy, per-class values; :class:`~activeeval.measures.ClasswiseMeasure`):
    the estimates of :mod:`~activeeval.estimators.classwise` (the logit interval), no
    stratified baseline, no pool features, no anytime-valid sequence."""

    evaluate_methods: ClassVar[tuple[str, ...]] = SAMPLING_METHODS
    compare_methods: ClassVar[tuple[str, ...]] = tuple(
        m for m in COMPARISON_METHODS if m != "active_neq"
    )
    refuses_features: ClassVar[str] = "multi-class averages and per-class measures"

    @classmethod
    def session_methods(cls, n_models: int) -> tuple[str, ...]:
        return (
            SAMPLING_METHODS
            if n_models == 1
            else tuple(m for m in SESSION_COMPARISON_METHODS if m != "active_neq")
        )

    #: Why each argument is refused (:meth:`refuse`).
    _REFUSED: ClassVar[dict[str, str]] = {
        "target_width": "has no anytime-valid sequence, so no stopping rule",
        "claim": "has no anytime-valid sequence, so no stopping rule",
        "decide": "has no anytime-valid sequence, so no stopping rule",
        "step": "has no stopping rule whose looks step= could space",
        "sequential": "has no sequential test",
        "batch_size": "is not re-planned in batches",
        "features": "uses no pool features",
    }

    def __init__(self, models: Sequence[Any], measure: Any, pool_weights: NDArray[Any]) -> None:
        super().__init__(models, measure, pool_weights)
        # each model's class probabilities (a mixture collapsed), decision columns and pool
        # counts, once: a session's trajectory asks for an estimate at every look
        self._arrays_of: dict[int, tuple[Categorical, NDArray[np.intp]]] = {}
        self._counts_of: dict[int, PoolCounts] = {}

    @classmethod
    def refuse(cls, measure: Any, **given: Any) -> None:
        """What a function of several ratios does not take, refused by the argument's name
        (``given``: name → value as passed; None or False is not given)."""
        for name, value in given.items():
            if value is not None and value is not False:
                raise UnknownOptionError(
                    f"{name}: {measure.name} (a function of several ratios) "
                    f"{cls._REFUSED[name]}; drop {name}=, or use a single ratio such as f1 "
                    "with pos_label=."
                )

    @staticmethod
    def check_pair(measure: Any, n_models: int, name: str = "predictions") -> None:
        """A comparison by a function of several ratios takes exactly two models."""
        if n_models != 2:
            raise ShapeError(
                f"{name}: {measure.name} compares exactly two models, got {n_models}; "
                "compare them pairwise."
            )

    def _arrays(self, model: int) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        if model not in self._arrays_of:
            cat = as_categorical(self.models[model], self.measure.name)
            decision = decision_index(cat, self.models[model].point_prediction())
            self._arrays_of[model] = (cat, decision)
        cat, decision = self._arrays_of[model]
        return cat.proba, decision

    def _classes(self, labels: NDArray[Any]) -> NDArray[np.intp]:
        self._arrays(0)
        return self._arrays_of[0][0].label_index(labels, "labels")

    def counts(self, model: int) -> PoolCounts:
        """The model's :class:`~.classwise.PoolCounts` (what a session's summary stores)."""
        if model not in self._counts_of:
            self._counts_of[model] = _on_pool(*self._arrays(model), self.pool_weights)
        return self._counts_of[model]

    def _at(self, model: int, draws: NDArray[np.intp]) -> ClassDraws:
        proba, f = self._arrays(model)
        return ClassDraws(proba[draws], f[draws], self.pool_weights[draws])

    def estimate(
        self,
        rep: Reporting,
        model: int,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        draw_q: NDArray[np.float64] | None = None,
    ) -> tuple[Any, str]:
        """:func:`~.classwise._estimate` of model ``model`` on the draws, reported with the
        logit interval."""
        qd = rep.q[draws] if draw_q is None else draw_q
        est = _classwise_estimate(
            self.measure, self.counts(model), self._at(model, draws), draws,
            self._classes(labels), qd, rep.estimator == "assisted", rep.level,
        )  # fmt: skip
        return est, "logit"

    def compare(
        self,
        rep: Reporting,
        draws: NDArray[np.intp],
        labels: NDArray[Any],
        *,
        census: bool = False,
        draw_q: NDArray[np.float64] | None = None,
    ) -> ComparisonOutcome:
        """:func:`~.classwise._paired`: two models' difference on the shared draws."""
        _one_q(draw_q)
        self.check_pair(self.measure, len(self.models))
        c = _classwise_paired(
            self.measure, (self.counts(0), self.counts(1)),
            (self._at(0, draws), self._at(1, draws)), draws, self._classes(labels),
            rep.q[draws], rep.estimator == "assisted", rep.level,
        )  # fmt: skip
        return ComparisonOutcome(
            c.difference, c.stderr, c.p_value, c.best, np.asarray(c.estimates), c
        )

    def _per_draw(self, draws: NDArray[np.intp], labels: NDArray[Any]) -> list[Any]:
        raise NoSequence(self.measure.name).error()


@dataclass(frozen=True)
class NoSequence:
    """A result's anytime terms where its measure has none (a function of several ratios):
    asked for, the refusal saying so."""

    measure: str

    def error(self) -> ShapeError:
        return ShapeError(
            f"method: {self.measure} (a function of several ratios) has no anytime-valid "
            "sequence; use a fixed-n interval method."
        )

    def __call__(self) -> DrawTerms:
        raise self.error()


def pool_class(models: Sequence[Any], measure: Any = None) -> type[Pool]:
    """The pool kind of these models: ranked if any is a ranker's ``GradedRelevance``; a
    pool of instances scored by a function of several ratios for such a ``measure``."""
    if any(isinstance(m, GradedRelevance) for m in models):
        return RankedPool
    return ClasswisePool if isinstance(measure, ClasswiseMeasure) else PlainPool


def pool_for(models: Sequence[Any], measure: Any, pool_weights: NDArray[Any]) -> Pool:
    """The pool interface over ``models`` (validated, on one pool) with the bound measure
    and the test distribution over the pool."""
    return pool_class(models, measure)(models, measure, pool_weights)
