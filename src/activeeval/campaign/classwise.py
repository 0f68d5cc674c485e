"""Campaigns for multi-class measures that are functions of several ratios: macro and
weighted F_β, balanced accuracy, per-class precision / recall / F_β — one model's
evaluation, or two models' comparison by an average (fixed n: no stopping rules)."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_option,
    check_random_state,
    pool_distribution,
)
from ..acquisition import Check, _LabelBook
from ..errors import ShapeError, UnknownOptionError
from ..estimators.classwise import PerClassEstimate
from ..estimators.report import ClasswisePool, _result_fields
from ..measures import ClasswiseMeasure, as_categorical
from ..methods import ESTIMATORS
from ..predictive import Predictive
from ..results import ComparisonResult, EvaluationResult, PerClassResult
from ..sampling import (
    check_distribution,
    check_support,
    comparison_distribution,
    sampling_distribution,
)
from .reuse import Reused
from .steps import (
    CampaignSettings,
    Oracle,
    _Acquisition,
    _bar,
    _comparison_result,
    _fixed_setup,
)


def _evaluate_classwise(
    predictive: Predictive,
    oracle: Oracle,
    meas: ClasswiseMeasure,
    s: CampaignSettings,
    q: ArrayLike | None,
    floor: float,
    reused: Reused | None = None,
) -> EvaluationResult | PerClassResult:
    """:func:`~activeeval.evaluate` for a :class:`~activeeval.measures.ClasswiseMeasure`:
    q* from the measure's influence function (or the method's q), Algorithm 2's draws, the
    plug-in estimate with the jackknife's standard error (estimators.classwise)."""
    cat = as_categorical(predictive, meas.name)
    if s.method == "stratified" and q is None:
        raise UnknownOptionError(
            f"method: the stratified baseline estimates a mean loss, and {meas.name} is a "
            "function of several ratios; use method='active' or 'passive'."
        )
    method = check_option(s.method, ClasswisePool.evaluate_methods, "method")
    run = _Run.checked(s, cat.n, oracle)
    qq = run.planned(q, method, cat, meas, floor, predictive.point_prediction())
    pool = ClasswisePool([predictive], meas, run.p)
    acq, draws, y, q_all = run.acquire(pool, qq, oracle, reused)
    rep = pool.reporting(q_all, run.level, run.estimator)
    est, interval = pool.estimate(rep, 0, draws, y, q_all[draws])
    lv, b = run.level, run.budget
    sample = {
        "cost": acq.spent, "budget": b, "method": method, "indices": draws, "q": q_all[draws],
        **pool.label_fields(y), "pool_q": q_all,
    }  # fmt: skip
    if isinstance(est, PerClassEstimate):
        ci = est.confidence_interval()
        return PerClassResult(
            classes=est.classes, estimates=np.clip(est.estimates, 0.0, 1.0),
            stderrs=est.stderrs, ci=np.where(np.isnan(ci), np.nan, np.clip(ci, 0.0, 1.0)),
            level=lv, n_labels=est.n_labels, n_draws=est.n_draws, measure=meas.name,
            inference=est, interval=interval, cost=acq.spent, budget=b, method=method,
            indices=draws, q=q_all[draws], labels=y,
        )  # fmt: skip
    return EvaluationResult(**_result_fields(rep, est, interval), **sample)


def _compare_classwise(
    preds: list[Predictive],
    oracle: Oracle,
    meas: ClasswiseMeasure,
    s: CampaignSettings,
    reused: Reused | None = None,
) -> ComparisonResult:
    """:func:`~activeeval.compare` of two models by a multi-class average: q* of the
    difference (Thm 5.1 with the measure's influence functions, under the models' mixture),
    Algorithm 3's draws, each model's plug-in estimate and the jackknife over the paired
    leave-one-out differences (estimators.classwise)."""
    if meas.vector:
        raise UnknownOptionError(
            f"measure: compare tests one number per model, and {meas.name} is one per class; "
            "compare by macro_f1, weighted_f1 or balanced_accuracy, or evaluate each model's "
            "per-class values."
        )
    ClasswisePool.check_pair(meas, len(preds))
    cats = [as_categorical(pr, meas.name) for pr in preds]
    if not np.array_equal(cats[0].labels, cats[1].labels):
        raise ShapeError(
            f"predictions[1]: its classes {cats[1].labels.tolist()} differ from "
            f"predictions[0]'s {cats[0].labels.tolist()}; pass both with the same classes "
            "in the same order."
        )
    if s.method == "active_neq":
        raise UnknownOptionError(
            "method: 'active_neq' rescales a difference of regular risks by the disagreement "
            f"mass; {meas.name} is a function of several ratios. Use 'active' instead."
        )
    method = check_option(s.method, ClasswisePool.compare_methods, "method")
    run = _Run.checked(s, cats[0].n, oracle)
    qq = comparison_distribution(
        preds, meas, method=method, costs=run.lam, pool_weights=s.pool_weights, mix=s.mix
    )
    pool = ClasswisePool(preds, meas, run.p)
    acq, draws, y, q_all = run.acquire(pool, qq, oracle, reused)
    rep = pool.reporting(q_all, run.level, run.estimator)
    c = pool.compare(rep, draws, y)
    sample = {"budget": run.budget, "method": method, "indices": draws, "q": q_all[draws],
              "pool_q": q_all}  # fmt: skip
    return _comparison_result(rep, c, acq, {**sample, **pool.label_fields(y)}, None)


class LabelBooks(Protocol):
    """What keeps a campaign's labels: a pool interface, or the label book of a pool of
    instances labeled by class (:mod:`.probability`)."""

    def label_book(self) -> tuple[_LabelBook, Check]: ...


@dataclass(frozen=True)
class _Run:
    """A fixed-n campaign's checked settings (estimator, costs λ, level, budget, seed, draw
    cap, test distribution p) and its acquisition, shared by evaluate and compare."""

    settings: CampaignSettings
    estimator: str
    lam: NDArray[np.float64] | None
    level: float
    budget: float
    rng: np.random.Generator
    max_draws: int
    p: NDArray[np.float64]

    @classmethod
    def checked(cls, s: CampaignSettings, m: int, oracle: Oracle) -> _Run:
        estimator = check_option(s.estimator, ESTIMATORS, "estimator")
        lam, b, level, max_draws = _fixed_setup(
            m, s.costs, None, s.budget, s.level, oracle, s.max_draws
        )
        rng = check_random_state(s.random_state)
        return cls(
            s, estimator, lam, level, b, rng, max_draws, pool_distribution(m, s.pool_weights)
        )

    def planned(
        self,
        q: ArrayLike | None,
        method: str,
        cat: Predictive,
        meas: Any,
        floor: float,
        prediction: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """The q to draw from: the one given (checked to cover the test distribution), or
        the method's for the measure (``prediction``: the decisions it scores)."""
        if q is not None:
            qq = check_distribution(q, "q", cat.n)
            check_support(qq, self.p > 0)
            return qq
        s = self.settings
        return sampling_distribution(
            method, cat, meas, costs=self.lam, pool_weights=s.pool_weights, floor=floor,
            mix=s.mix, prediction=prediction,
        )  # fmt: skip

    def acquire(
        self,
        pool: LabelBooks,
        q: NDArray[np.float64],
        oracle: Oracle,
        reused: Reused | None = None,
        warn: bool = True,
        bar: Any = None,
        carried: tuple[NDArray[np.intp], NDArray[np.float64]] | None = None,
    ) -> tuple[_Acquisition, NDArray[np.intp], NDArray[Any], NDArray[np.float64]]:
        """Algorithm 2's draws from ``q`` until the budget is spent: the acquisition, the
        draws, their labels and the q over the pool they are weighted by — with ``reused``,
        the earlier draws first and the balance heuristic's mixture (:mod:`.reuse`).
        ``warn=False``: no warning if the draw cap ends it; ``bar``: a progress bar to advance
        instead of one of its own (a stage of a campaign that shows one bar and warns once,
        with its totals). ``carried``: the draw that ended an earlier stage (the first one its
        budget could not pay, :attr:`_Acquisition.pending`) and the q over the pool it came
        from — bought first, and a proposal of its own in the mixture (the earlier stage's
        draws then run to a stopping time; dropping that draw turns away the expensive
        draws, a bias with costs)."""
        book, check = pool.label_book()
        if reused is not None:
            reused.prefill(book, check)
        given = nullcontext(bar) if bar is not None else None
        with given or _bar(self.budget, self.lam, self.settings.progress) as shown:
            acq = _Acquisition(q, oracle, check, self.lam, self.rng, self.max_draws, shown,
                               book=book)  # fmt: skip
            if carried is not None:
                acq.pending, acq.pending_q = carried[0], carried[1][carried[0]]
            acq.run(self.budget)
        if warn:
            acq.warn_if_capped(self.budget, stacklevel=5)  # from evaluate or compare
        acq.require_labels(self.settings.budget, reused is not None)
        if reused is None:
            return acq, acq.draws, book.lookup(acq.draws), q
        first = None if carried is None else (min(carried[0].shape[0], acq.n_kept), carried[1])
        draws, mixture = reused.combined(acq.draws, q, first)
        return acq, draws, book.lookup(draws), mixture
