"""``evaluate(..., groups=g)``: one campaign, q planned for the groups, an estimate and
interval per group and overall (fixed n: no stopping rules)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_groups, check_option
from ..errors import UnknownOptionError
from ..estimators.report import ClasswisePool, PlainPool, _result_fields, refuse_undefined
from ..measures import ClasswiseMeasure, Measure, as_categorical
from ..predictive import Predictive
from ..probability_measures import ProbabilityMeasure
from ..results import (
    ComparisonResult,
    EvaluationResult,
    GroupResult,
    additive,
    expected_labels,
    post_stratified,
)
from ..sampling import GROUP_DESIGNS, grouped_distribution
from .classwise import _Run
from .probability import _Pool as _ProbabilityPool
from .probability import result as probability_result
from .steps import CampaignSettings, Oracle, _comparison_result

#: What ``groups=`` does not take, by argument: the reason.
_REFUSED = {
    "target_width": "has no anytime-valid sequence per group, so no stopping rule",
    "claim": "has no anytime-valid sequence per group, so no stopping rule",
    "step": "has no stopping rule whose looks step= could space",
    "decide": "has no anytime-valid sequence per group, so no stopping rule",
    "sequential": "has no sequential test per group",
    "batch_size": "is not re-planned in batches",
    "features": "uses no pool features",
}


def refuse(what: str = "evaluate", **given: Any) -> None:
    """Refuse, by the argument's name, what a grouped campaign (``what``: evaluate or
    compare) does not take."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise UnknownOptionError(f"{name}: {what} with groups= {_REFUSED[name]}; drop {name}=.")


def _evaluate_groups(
    predictive: Predictive,
    oracle: Oracle,
    meas: Measure,
    s: CampaignSettings,
    q: ArrayLike | None,
    floor: float,
    groups: Any,
    design: str,
) -> GroupResult:
    """:func:`~activeeval.evaluate` with ``groups=``: q from
    :func:`~activeeval.sampling.grouped_distribution` (or the method's), Algorithm 2's
    draws, then each group's estimate with the test distribution restricted to it."""
    if getattr(meas, "vector", False):
        raise UnknownOptionError(
            f"measure: {meas.name} is one number per class; with groups= evaluate one number "
            "per group (macro_f1, f1 with pos_label=, ...)."
        )
    design = check_option(design, GROUP_DESIGNS, "group_design")
    method = check_option(s.method, ("active", "passive"), "method")
    m = predictive.n
    run = _Run.checked(s, m, oracle)
    labels, codes = check_groups(groups, m, run.p)
    refuse_undefined(meas, [predictive], run.p)  # a group's alone may be undefined
    if q is None and method == "active":
        qq = grouped_distribution(predictive, meas, codes, costs=run.lam,
                                  pool_weights=s.pool_weights, floor=floor, mix=s.mix,
                                  design=design)  # fmt: skip
    else:  # the q given, or p
        qq, design = run.planned(q, method, predictive, meas, floor), "given"
    probabilities = isinstance(meas, ProbabilityMeasure)
    cat = as_categorical(predictive, meas.name) if probabilities else None
    kind = ClasswisePool if isinstance(meas, ClasswiseMeasure) else PlainPool
    book = _ProbabilityPool(predictive, m) if probabilities else kind([predictive], meas, run.p)
    acq, draws, y, _ = run.acquire(book, qq, oracle)

    def result(p: NDArray[np.float64]) -> EvaluationResult:
        if cat is not None and isinstance(meas, ProbabilityMeasure):
            return probability_result(meas, cat, run, p, acq.spent, method, draws, y, qq)
        pool = kind([predictive], meas, p)
        rep = pool.reporting(qq, run.level, run.estimator)
        est, interval = pool.estimate(rep, 0, draws, y)
        return EvaluationResult(
            **_result_fields(rep, est, interval), cost=acq.spent, budget=run.budget,
            method=method, indices=draws, q=acq.draw_q, **pool.label_fields(y), pool_q=qq,
        )  # fmt: skip

    shares = np.bincount(codes, weights=run.p, minlength=len(labels)).astype(np.float64)
    seen = np.zeros(m, dtype=bool)
    seen[draws] = True
    per_group = []
    for k in range(len(labels)):
        pk = np.where(codes == k, run.p, 0.0) / shares[k]
        res = result(pk)
        per_group.append(_with_labels(res, int(np.count_nonzero(seen & (codes == k)))))
    overall = result(run.p)
    if additive(meas) and all(math.isfinite(r.estimate) for r in per_group):
        overall = post_stratified(overall, per_group, shares, meas)
    return GroupResult(
        groups=labels, results=tuple(per_group), overall=overall, shares=shares,
        expected_labels=expected_labels(qq, codes, len(labels), int(draws.shape[0])),
        design=design, level=run.level, measure=meas.name, method=method,
        n_labels=int(np.count_nonzero(seen)), n_draws=int(draws.shape[0]), cost=acq.spent,
        budget=run.budget, indices=draws, q=acq.draw_q, labels=y,
    )  # fmt: skip


def _with_labels(res: EvaluationResult, n_labels: int) -> EvaluationResult:
    """The group's result with its own count of labeled instances."""
    return replace(res, n_labels=n_labels)


def _compare_groups(
    preds: list[Predictive],
    oracle: Oracle,
    meas: Measure,
    s: CampaignSettings,
    groups: Any,
    design: str,
) -> GroupResult:
    """:func:`~activeeval.compare` of two models with ``groups=``: q for the groups'
    differences (:func:`~activeeval.sampling.grouped_distribution` with both models),
    Algorithm 3's draws, each group's comparison with the test distribution restricted to it,
    and the pool's."""
    if len(preds) != 2:
        raise UnknownOptionError(
            f"groups: compare with groups= compares two models, got {len(preds)}; compare "
            "them in pairs."
        )
    design = check_option(design, GROUP_DESIGNS, "group_design")
    method = check_option(s.method, ("active", "passive"), "method")
    m = preds[0].n
    run = _Run.checked(s, m, oracle)
    labels, codes = check_groups(groups, m, run.p)
    refuse_undefined(meas, preds, run.p)
    if method == "passive":
        qq, design = run.p, "given"
    else:
        qq = grouped_distribution(
            preds, meas, codes, costs=run.lam, pool_weights=s.pool_weights, mix=s.mix,
            design=design,
        )  # fmt: skip
    kind = ClasswisePool if isinstance(meas, ClasswiseMeasure) else PlainPool
    acq, draws, y, _ = run.acquire(kind(preds, meas, run.p), qq, oracle)
    seen = np.zeros(m, dtype=bool)
    seen[draws] = True
    sample = {"budget": run.budget, "method": method, "indices": draws, "q": qq[draws],
              "pool_q": qq}  # fmt: skip

    def result(p: NDArray[np.float64], n_labels: int) -> ComparisonResult:
        pool = kind(preds, meas, p)
        rep = pool.reporting(qq, run.level, run.estimator)
        c = pool.compare(rep, draws, y, census=True)
        res = _comparison_result(rep, c, acq, {**sample, **pool.label_fields(y)}, None)
        return replace(res, n_labels=n_labels)

    shares = np.bincount(codes, weights=run.p, minlength=len(labels)).astype(np.float64)
    per_group = [
        result(np.where(codes == k, run.p, 0.0) / shares[k],
               int(np.count_nonzero(seen & (codes == k))))
        for k in range(len(labels))
    ]  # fmt: skip
    return GroupResult(
        groups=labels, results=tuple(per_group), overall=result(run.p, int(seen.sum())),
        shares=shares, expected_labels=expected_labels(qq, codes, len(labels), int(draws.shape[0])),
        design=design, level=run.level, measure=meas.name, method=method,
        n_labels=int(seen.sum()), n_draws=int(draws.shape[0]), cost=acq.spent,
        budget=run.budget, indices=draws, q=qq[draws], labels=y,
    )  # fmt: skip
