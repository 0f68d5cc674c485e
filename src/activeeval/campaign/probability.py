"""Campaigns for the measures of probabilities: Brier score, log loss, ECE, ROC AUC and
average precision — one model's evaluation (fixed n: no stopping rules, no comparison)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_option
from ..acquisition import Check, _label_check, _LabelBook
from ..errors import UnknownOptionError
from ..estimators.inference import plausible_members
from ..estimators.probability import _estimate
from ..estimators.tempered import (
    _judged,
    _logit,
    _platt_at,
    _platt_loglik,
    loss_curve,
    rank_curve,
    rank_members,
)
from ..measures import as_categorical
from ..predictive import Categorical, Predictive
from ..probability_measures import ROCAUC, ProbabilityMeasure, _RankMeasure, _ScoringRule
from ..results import EvaluationResult
from ..sampling import _from_moment
from .classwise import _Run
from .reuse import Reused
from .steps import CampaignSettings, Oracle, _bar, warn_capped

#: What a measure of probabilities does not take, by argument: the reason.
_REFUSED = {
    "prediction": "scores the class probabilities, not a decision",
    "target_width": "has no anytime-valid sequence, so no stopping rule",
    "claim": "has no anytime-valid sequence, so no stopping rule",
    "step": "has no stopping rule whose looks step= could space",
    "batch_size": "is not re-planned in batches",
    "features": "uses no pool features",
}

#: The methods ``evaluate`` takes for these measures.
EVALUATE_METHODS = ("active", "active_uniC", "active_lambda", "passive")

#: ROC AUC's default design draws this share of the budget from q* under the model, then the
#: rest from q* under the Platt recalibration of the model its labels fit best, where they
#: reject the model's own probabilities (:func:`recalibrated_distribution`).
FIRST_STAGE = 0.25

#: Two stages only where the first can buy at least this many of the costliest labels (so
#: the second, three times as large, can always buy one).
MIN_FIRST_LABELS = 10

#: The level of the likelihood-ratio test that rejects the model's probabilities after the
#: first stage (χ²₂: the Platt family's two parameters).
RECALIBRATION_LEVEL = 0.95


def refuse(measure: ProbabilityMeasure, **given: Any) -> None:
    """Refuse, by the argument's name, what a measure of probabilities does not take
    (``given``: name → value as passed; None or False is not given)."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise UnknownOptionError(f"{name}: {measure.name} {_REFUSED[name]}; drop {name}=.")


class _Pool:
    """The label book of a pool of instances labeled by class (what ``_Run`` acquires)."""

    def __init__(self, predictive: Predictive, m: int) -> None:
        self.predictive, self.m = predictive, m

    def label_book(self) -> tuple[_LabelBook, Check]:
        return _LabelBook(self.m), _label_check(self.predictive)


def _evaluate_probability(
    predictive: Predictive,
    oracle: Oracle,
    meas: ProbabilityMeasure,
    s: CampaignSettings,
    q: ArrayLike | None,
    floor: float,
    reused: Reused | None = None,
) -> EvaluationResult:
    """:func:`~activeeval.evaluate` for a measure of probabilities: q* from the measure's
    influence function (or the method's q), Algorithm 2's draws, the estimate of
    :mod:`activeeval.estimators.probability`."""
    cat = as_categorical(predictive, meas.name)
    if s.method == "stratified" and q is None:
        raise UnknownOptionError(
            f"method: the stratified baseline estimates a mean loss of a decision, and "
            f"{meas.name} scores the probabilities; use method='active' or 'passive'."
        )
    method = check_option(s.method, EVALUATE_METHODS, "method")
    run = _Run.checked(s, cat.n, oracle)
    qq = run.planned(q, method, cat, meas, floor)
    book = _Pool(cat, cat.n)
    costliest = 1.0 if run.lam is None else float(run.lam.max())
    if (isinstance(meas, ROCAUC) and method == "active" and q is None
            and FIRST_STAGE * run.budget >= MIN_FIRST_LABELS * costliest):  # fmt: skip
        # Two stages: q* under the model, then under the recalibration the labels fit best.
        # One progress bar, one cap and one warning for the two (the second stage's cap is
        # what is left).
        first = replace(run, budget=FIRST_STAGE * run.budget)
        with _bar(run.budget, run.lam, run.settings.progress) as bar:
            acq1, d1, y1, q1 = first.acquire(book, qq, oracle, reused, warn=False, bar=bar)
            spent, draws, y, q_all, capped = acq1.spent, d1, y1, q1, acq1.capped
            if not capped:
                q2 = recalibrated_distribution(meas, cat, run, d1, y1, q1)
                rest = replace(run, budget=run.budget - acq1.spent,
                               max_draws=run.max_draws - int(acq1.draws.shape[0]))  # fmt: skip
                acq, draws, y, q_all = rest.acquire(book, qq if q2 is None else q2, oracle,
                                                    Reused(d1, y1, q1), warn=False, bar=bar,
                                                    carried=(acq1.pending[:1], qq))  # fmt: skip
                spent, capped = spent + acq.spent, acq.capped
        if capped:
            warn_capped(run.max_draws, spent, run.budget, stacklevel=3)  # from evaluate
        return result(meas, cat, run, run.p, spent, method, draws, y, q_all)
    acq, draws, y, q_all = run.acquire(book, qq, oracle, reused)
    return result(meas, cat, run, run.p, acq.spent, method, draws, y, q_all)


def recalibrated_distribution(
    meas: _RankMeasure,
    cat: Categorical,
    run: _Run,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    qq: NDArray[np.float64],
) -> NDArray[np.float64] | None:
    """q* (eq. 4.6 with the measure's influence, the run's costs and defensive mix) under the
    Platt recalibration σ(a·logit r + b) of the model's positive-class probability r that the
    labels of ``draws`` fit best (the grid of :func:`~activeeval.estimators.tempered.rank_members`),
    where the labels reject the model itself: its log-likelihood below the best member's by
    more than χ²₂(:data:`RECALIBRATION_LEVEL`)/2. None where they do not, or no labeled
    instance has test mass, or those hold one class only (the fit has no maximum), or the
    draws labeled every instance ``qq`` (the first stage's q) can draw: the model's q*
    stands. The scores ranked stay the model's (docs/how-it-works/sampling.md, "Two
    stages")."""
    judged = _judged(qq, run.p, draws, labels)
    if judged is None:
        return None
    _, rows, rows_labels = judged
    pos = meas._pos()
    z = (cat.label_index(rows_labels) == pos).astype(np.float64)
    if z.all() or not z.any():  # one class only: the Platt fit has no maximum
        return None
    logit = _logit(cat.proba[rows, pos])
    platt = rank_members()[2] == 2
    loglik = _platt_loglik(logit, z)[platt]
    own = float(-np.logaddexp(0.0, -(2.0 * z - 1.0) * logit).sum())  # a = 1, b = 0
    if plausible_members(np.append(loglik, own), RECALIBRATION_LEVEL, 2)[-1]:
        return None
    best = int(np.flatnonzero(platt)[np.argmax(loglik)])  # its index among all members
    beliefs = np.zeros_like(cat.proba)
    beliefs[:, pos] = _platt_at(_logit(cat.proba[:, pos]), best)
    moment = meas.influence_second_moment(beliefs, cat.proba, run.p)
    s = run.settings
    return _from_moment(moment, run.p, np.ones(cat.n, dtype=bool), run.lam, s.mix, True,
                        uniform=s.pool_weights is None)  # fmt: skip


def result(
    meas: ProbabilityMeasure,
    cat: Categorical,
    run: _Run,
    p: NDArray[np.float64],
    spent: float,
    method: str,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    pool_q: NDArray[np.float64],
) -> EvaluationResult:
    """The campaign's result for the test distribution ``p`` (the pool's, or a group's):
    the estimate of :mod:`activeeval.estimators.probability`, clipped to the range;
    ``spent`` the labels' cost; ``pool_q`` the q every draw came from (weights p/q)."""
    codes = cat.label_index(y, "labels")
    assisted = run.estimator == "assisted"
    est = _estimate(meas, cat.proba, p, draws, codes, pool_q[draws], assisted, run.level)
    if not est.census and math.isfinite(est.estimate):
        # The logit or Wald interval joined with the score set along recalibrations of the
        # model (as the F-measures' tempered interval): docs/how-it-works/intervals.md.
        curve = None
        if isinstance(meas, _RankMeasure):
            curve = rank_curve(meas, cat, pool_q, p, draws, y)
        elif isinstance(meas, _ScoringRule):
            curve = loss_curve(meas, cat, pool_q, p, draws, y, assisted)
        if curve is not None:
            est = replace(est, score=curve, kind="tempered", base=est.kind)
    lo, hi = est.ci
    low_end, high_end = meas.value_range
    value = float(np.clip(est.estimate, low_end, high_end))
    return EvaluationResult(
        estimate=value, stderr=est.stderr, ci=(max(lo, low_end), min(hi, high_end)),
        level=run.level, n_labels=est.n_labels, n_draws=est.n_draws, cost=spent,
        budget=run.budget, method=method, measure=meas.name, indices=draws, q=pool_q[draws],
        labels=y, inference=est, interval=est.kind, value_range=meas.value_range,
        pool_q=pool_q,
    )  # fmt: skip
