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
from ..estimators.probability import _estimate
from ..estimators.tempered import loss_curve, rank_curve
from ..measures import as_categorical
from ..predictive import Categorical, Predictive
from ..probability_measures import ProbabilityMeasure, _RankMeasure, _ScoringRule
from ..results import EvaluationResult
from .classwise import _Run
from .reuse import Reused
from .steps import CampaignSettings, Oracle, _Acquisition

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
    acq, draws, y, q_all = run.acquire(book, qq, oracle, reused)
    return result(meas, cat, run, run.p, acq, method, draws, y, q_all)


def result(
    meas: ProbabilityMeasure,
    cat: Categorical,
    run: _Run,
    p: NDArray[np.float64],
    acq: _Acquisition,
    method: str,
    draws: NDArray[np.intp],
    y: NDArray[Any],
    pool_q: NDArray[np.float64],
) -> EvaluationResult:
    """The campaign's result for the test distribution ``p`` (the pool's, or a group's):
    the estimate of :mod:`activeeval.estimators.probability`, clipped to the range;
    ``pool_q`` the q every draw came from."""
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
        level=run.level, n_labels=est.n_labels, n_draws=est.n_draws, cost=acq.spent,
        budget=run.budget, method=method, measure=meas.name, indices=draws, q=pool_q[draws],
        labels=y, inference=est, interval=est.kind, value_range=meas.value_range,
        pool_q=pool_q,
    )  # fmt: skip
