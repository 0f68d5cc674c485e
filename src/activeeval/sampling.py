"""Instrumental (sampling) distributions over the pool, and drawing from them.

``optimal_distribution`` is the variance-optimal q* of the thesis (Thm 4.1, eq. 4.6; with
labeling costs Thm 4.2, eq. 4.25), computed with the model's predictive distribution in place
of p(y | x) and the intrinsic value (eq. 4.21) in place of the measure's true value; the
closed forms (Cor. 4.2–4.4, eq. 4.23) are fast paths of that one rule.
``comparison_distribution`` is its analogue for the difference of two or more models
(Thm 5.1). Two safeguards protect against an overconfident model, both on by default: a
``floor`` on the intrinsic value of 0/1 losses and a defensive ``mix`` with the pool
distribution (``DEFAULT_FLOOR``, ``DEFAULT_MIX``). ``draw`` samples pool indices from any q;
``inclusion_probabilities`` and ``successive_time`` describe the distinct instances those draws
buy.

The derivation, the safeguards and the measurements behind the defaults are on the *Sampling
distributions (q*)* page of the documentation (``docs/how-it-works/sampling.md``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _chunks
from ._chunks import chunk_ends, chunked_sum, dot, inverse_cdf, row_chunks, weighted_sum
from ._validation import (
    check_costs,
    check_finite_array,
    check_option,
    check_random_state,
    check_safeguards,
)
from ._validation import (
    pool_distribution as _pool_distribution,
)
from .errors import (
    ActiveEvalWarning,
    BudgetError,
    EmptyPoolError,
    InvalidSamplingDistributionError,
    ShapeError,
)
from .measures import (
    ClasswiseMeasure,
    Measure,
    as_categorical,
    decision_index,
    difference_influence_moment,
    floored,
    get_measure,
    influence_second_moment,
    pool_counts,
    pool_counts_of_decisions,
)
from .methods import COMPARISON_METHODS, DEFAULT_FLOOR, DEFAULT_MIX, SAMPLING_METHODS
from .predictive import Mixture, Predictive, as_predictive, first_part
from .probability_measures import ProbabilityMeasure
from .ranking import GradedRelevance, ranking_distribution

__all__ = [
    "COMPARISON_METHODS",
    "DEFAULT_FLOOR",
    "DEFAULT_MIX",
    "comparison_distribution",
    "cost_distribution",
    "draw",
    "grouped_distribution",
    "inclusion_probabilities",
    "optimal_distribution",
    "passive_distribution",
    "successive_time",
]


def passive_distribution(n: int, pool_weights: ArrayLike | None = None) -> NDArray[np.float64]:
    """Passive sampling: q = p, the test distribution over the pool.

    Parameters
    ----------
    n : int
        Number of pool instances m.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool, up to a constant; uniform by default.

    Returns
    -------
    q : ndarray of shape (m,)
        ``pool_weights`` normalized to sum to one, or 1/m everywhere.

    See Also
    --------
    activeeval.sampling.optimal_distribution : The variance-optimal q*.
    activeeval.sampling.draw : Draw pool indices from a distribution.

    Examples
    --------
    >>> from activeeval.sampling import passive_distribution
    >>> passive_distribution(4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> passive_distribution(3, pool_weights=[2, 1, 1]).tolist()
    [0.5, 0.25, 0.25]
    """
    return np.array(_pool_distribution(int(n), pool_weights))  # writable, not a uniform's view


def cost_distribution(
    costs: ArrayLike, pool_weights: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Cost-only heuristic q ∝ p(x) · λ(x)^(-1/2), the ``active_lambda`` baseline (Sec. 4.4.1).

    It ignores the model: cheap instances are drawn more often, by the square root of the
    cost ratio.

    Parameters
    ----------
    costs : array-like of shape (m,)
        Labeling cost λ(x) > 0 of every pool instance.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool, up to a constant; uniform by default.

    Returns
    -------
    q : ndarray of shape (m,)
        Positive, sums to one.

    Raises
    ------
    ShapeError
        When ``costs`` is None.

    See Also
    --------
    activeeval.sampling.optimal_distribution : q* with costs (Thm 4.2), which also uses the model.
    activeeval.sampling.passive_distribution : q = p.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.sampling import cost_distribution
    >>> q = cost_distribution([1.0, 4.0, 1.0, 4.0])
    >>> np.round(q, 3).tolist()
    [0.333, 0.167, 0.333, 0.167]
    """
    c = check_costs(costs, int(np.size(costs)))
    if c is None:
        raise ShapeError("costs: the cost-only heuristic needs costs.")
    q = _pool_distribution(c.shape[0], pool_weights) / np.sqrt(c)
    return q / q.sum()


def _defensive(
    core: NDArray[np.float64],
    p: NDArray[np.float64],
    mask: NDArray[np.bool_],
    mix: float,
    in_place: bool = False,
) -> NDArray[np.float64]:
    """(1 − ε)·core + ε·p restricted to ``mask``; ``core`` already sums to one (and is
    overwritten ``in_place``)."""
    chunks = list(row_chunks(core.shape[0]))
    total = sum(np.where(mask[rows], p[rows], 0.0).sum() for rows in chunks)
    if total <= 0:
        return core
    out = core if in_place else np.empty_like(core)  # a chunk at a time: no pool-size temporary
    for rows in chunks:
        out[rows] = (1.0 - mix) * core[rows] + mix * (np.where(mask[rows], p[rows], 0.0) / total)
    return out


def _from_moment(
    a: NDArray[np.float64],
    p: NDArray[np.float64],
    mask: NDArray[np.bool_],
    lam: NDArray[np.float64] | None,
    mix: float,
    regular: bool,
    uniform: bool,
) -> NDArray[np.float64]:
    """q ∝ p·sqrt(a / λ) on ``mask``, normalized, then the defensive mixture (eq. 4.6 / 4.25).

    ``a`` is a fresh per-instance moment array and is updated in place: that keeps q* within a
    few passes over the pool (benchmarks/run.py). Regular risks (w ≡ 1) skip the mask.
    """
    a = np.maximum(a, 0.0, out=a)
    if not regular:
        a[~mask] = 0.0
    if lam is not None:
        a /= lam
    score = np.sqrt(a, out=a)
    if not uniform:
        score *= p
    total = chunked_sum(score)  # by chunks, as a cluster's partitions add it
    if not total > 0:  # q* is zero everywhere: p on the instances whose weight can be positive
        return _defensive(p, p, mask, 1.0)
    score /= total
    if mix <= 0:
        zeros = int(((score <= 0) & mask).sum())
        if zeros:
            warn_zero_q(zeros, stacklevel=4)
        return score
    if regular and uniform:  # defensive mixture with the uniform pool
        score *= 1.0 - mix
        score += mix / score.shape[0]
        return score
    return _defensive(score, p, mask, mix, in_place=True)


def warn_zero_q(zeros: int, stacklevel: int) -> None:
    """The warning of q* with ``mix=0`` zero on ``zeros`` instances whose weight can be
    positive."""
    warnings.warn(
        f"mix: with mix=0, q is zero on {zeros} instances whose weight can be positive "
        "(the model is certain about them); estimates ignore those instances and are "
        "not consistent for the whole pool. Keep mix > 0 (default 0.1).",
        ActiveEvalWarning,
        stacklevel=stacklevel,
    )


def optimal_distribution(
    predictive: Any,
    measure: Measure | str = "error_rate",
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    prediction: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    pos_label: Any = None,
    fast: bool = True,
) -> NDArray[np.float64]:
    """Variance-optimal instrumental distribution over the pool (Thm 4.1, 4.2).

    q*(x) ∝ p(x) · sqrt(E[w² (ℓ − Ǧ)² | x] / λ(x)) (eq. 4.6, 4.25), with the model's
    predictive distribution for p(y | x) and the intrinsic value Ǧ (eq. 4.21) for the
    measure's value; then the ``floor`` and the defensive ``mix``. See the *Sampling
    distributions (q*)* page of the documentation (``docs/how-it-works/sampling.md``).

    Parameters
    ----------
    predictive : Predictive, (m, K) array, or a list of them
        The model's predictive distribution over the pool (class probabilities, or
        ``Gaussian(mean, var)``); it stands in for p(y | x). A list of two or more models gives
        the distribution for comparing them (``comparison_distribution``, Thm 5.1); graded
        relevances (``GradedRelevance``) give the ranking distribution (eq. 6.10, 6.11).
    measure : Measure or str
        The generalized risk to estimate.
    costs : array-like of shape (m,), optional
        Labeling cost λ(x) > 0 of every pool instance (Thm 4.2, eq. 4.25).
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    prediction : array-like of shape (m,), optional
        The model's predictions f(x) if they are not the mode/mean of ``predictive``.
    floor : float
        Bounds [floor, 1 − floor] on the intrinsic value for 0/1 losses; for a multi-class
        average or per-class measure, the share of each instance's probability spread
        evenly over the classes (the model is never certain); 0 disables.
    mix : float
        Weight ε ∈ [0, 1] of the defensive mixture with p; 0 disables (and warns when q is
        then zero where the measure's weight can be positive).
    pos_label : label, optional
        Positive class for F-measures named by string.
    fast : bool
        Use the measure's closed form where one exists (tested equal to the general rule).

    Returns
    -------
    q : ndarray of shape (m,)
        Non-negative, sums to one; zero only where the measure's weight is zero for every label.

    See Also
    --------
    activeeval.sampling.comparison_distribution : q* for the difference of models (Thm 5.1).
    activeeval.sampling.draw : Draw pool indices from q.
    activeeval.estimators.assisted.assisted_distribution : q for the model-assisted estimator.
    evaluate : Run a whole campaign, q* included.

    References
    ----------
    Thesis Thm 4.1 (eq. 4.6), Thm 4.2 (eq. 4.25), eq. 4.21 (intrinsic value), Cor. 4.2–4.4.

    Examples
    --------
    Uncertain instances get more mass, expensive ones less:

    >>> import numpy as np
    >>> from activeeval.sampling import optimal_distribution
    >>> proba = np.array([[0.99, 0.01], [0.9, 0.1], [0.6, 0.4], [0.45, 0.55]])
    >>> np.round(optimal_distribution(proba, "error_rate"), 3).tolist()
    [0.163, 0.207, 0.308, 0.322]
    >>> q = optimal_distribution(proba, "error_rate", costs=[1.0, 1.0, 1.0, 4.0])
    >>> np.round(q, 3).tolist()
    [0.19, 0.243, 0.364, 0.203]
    """
    if isinstance(predictive, GradedRelevance) or (
        isinstance(predictive, list | tuple)
        and predictive
        and all(isinstance(r, GradedRelevance) for r in predictive)
    ):
        # Ranked lists: eq. 6.10 / 6.11 by the dynamic programs of App. A.1.
        rel = predictive if isinstance(predictive, GradedRelevance) else list(predictive)
        return ranking_distribution(
            rel,
            measure,  # type: ignore[arg-type]
            costs=costs,
            mix=mix,
            pool_weights=pool_weights,
        )
    if isinstance(predictive, list | tuple):
        return comparison_distribution(
            list(predictive),
            measure,
            costs=costs,
            pool_weights=pool_weights,
            mix=mix,
            pos_label=pos_label,
            fast=fast,
        )
    pred_dist: Predictive = as_predictive(predictive)
    meas = get_measure(measure, pos_label=pos_label).bind(pred_dist)
    lam = check_costs(costs, pred_dist.n)
    check_safeguards(mix, floor)
    p = _pool_distribution(pred_dist.n, pool_weights)
    moment = influence_moment(pred_dist, meas, p, prediction, floor, fast)
    if moment is None:
        # Undefined measure under the model (warned by intrinsic_value): fall back to p on S.
        mask = meas.weight_can_be_positive(_decisions(pred_dist, prediction))
        return _defensive(p, p, mask, 1.0) if mask.any() else p
    a, mask, regular = moment
    return _from_moment(a, p, mask, lam, mix, regular, uniform=pool_weights is None)


def _decisions(pred_dist: Predictive, prediction: ArrayLike | None) -> NDArray[Any]:
    return pred_dist.point_prediction() if prediction is None else np.asarray(prediction)


def influence_moment(
    pred_dist: Predictive,
    meas: Measure,
    p: NDArray[np.float64],
    prediction: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    fast: bool = True,
    scaled: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.bool_], bool] | None:
    """E[ψ(x, y)² | x] for every instance: the integrand of q* (eq. 4.6), for the (bound)
    measure's value under the test distribution ``p``.

    ψ is the measure's influence function: ∇g·(c − S) for a multi-class average, the
    influences of :mod:`activeeval.probability_measures`, and w(ℓ − Ǧ) for a generalized
    risk (Ǧ the intrinsic value, eq. 4.21) — divided by E[w] with ``scaled``, so that the
    moments of different test distributions (groups of the pool) compare. Returns the
    moment, the instances whose weight can be positive, and whether the measure is a regular
    risk; None where the measure is undefined under the model.
    """
    if isinstance(meas, ClasswiseMeasure):
        # A function of several ratios: eq. 4.6 with its influence ψ for w(ℓ − G), under the
        # model's probabilities floored: each class keeps floor/K, so no instance is certain.
        # A chunk of the pool at a time: the counts S the model expects (a pass), then ψ.
        parts = class_chunks(pred_dist, meas.name, prediction, p, floor)
        counts = pool_counts(((pr, f, pp) for _, pr, f, pp in parts()), _n_classes(pred_dist))
        m = pred_dist.n
        a = np.empty(m)
        for rows, pr, f, pp in parts():
            a[rows] = influence_second_moment(meas, pr, f, pp, counts)
        return a, np.ones(m, dtype=bool), True
    if isinstance(meas, ProbabilityMeasure):
        # A measure of the probabilities themselves: eq. 4.6 with its influence ψ, y drawn
        # from the model's probabilities floored as for the multi-class averages.
        cat = as_categorical(pred_dist, meas.name)
        beliefs = floored(cat.proba, floor) if meas.uses_floor else cat.proba
        a = meas.influence_second_moment(beliefs, cat.proba, p)
        return a, np.ones(cat.n, dtype=bool), True
    # A chunk of the pool at a time (activeeval._chunks): no temporary the size of the pool.
    decision = None if prediction is None else np.asarray(prediction)
    m = pred_dist.n
    if decision is not None and decision.shape != (m,):
        raise ShapeError(
            f"prediction: expected one decision per pool instance, shape ({m},); got shape "
            f"{decision.shape}."
        )
    mask = np.empty(m, dtype=bool)
    scale = total = 0.0  # E[w] (1 for regular risks) and E[wℓ]
    for rows in row_chunks(m):
        part, f = _rows_of(pred_dist, decision, rows)
        wl, w = meas.conditional_expectations(part, f, fast=fast)
        scale += weighted_sum(p[rows], w)
        total += weighted_sum(p[rows], wl)
        mask[rows] = meas.weight_can_be_positive(f)
    if not scale > 0 or not mask.any():
        f_all = _decisions(pred_dist, prediction)
        meas.intrinsic_value(pred_dist, f_all, pool_weights=p, fast=fast)  # warns: undefined
        return None
    c = total / scale  # eq. 4.21
    if meas.binary_loss and floor > 0:
        c = min(max(c, floor), 1.0 - floor)
    a = np.empty(m)
    for rows in row_chunks(m):
        part, f = _rows_of(pred_dist, decision, rows)
        a[rows] = meas.conditional_second_moment(part, c, f, fast=fast)  # E[w²(ℓ−Ǧ)² | x]
    if scaled and not meas.regular:
        a /= scale**2
    return a, mask, meas.regular


def class_chunks(
    pred_dist: Any, name: str, prediction: ArrayLike | None, p: NDArray[np.float64],
    floor: float,
) -> Any:  # fmt: skip
    """A function giving, a chunk of the pool at a time (``pred_dist``: a classifier, or
    anything giving its ``n`` and chunks, ``_chunk(rows)``, as a store's model), the rows,
    the class probabilities
    (floored by ``floor``), the decision's class columns and p there: what the multi-class
    averages' q* reads (the counts S over the pool, then the influences at S)."""
    decision = None if prediction is None else np.asarray(prediction)
    if decision is not None and decision.shape != (pred_dist.n,):
        raise ShapeError(
            f"prediction: expected one decision per pool instance, shape ({pred_dist.n},); "
            f"got shape {decision.shape}."
        )

    def parts() -> Any:
        for rows in row_chunks(pred_dist.n):
            part, f = _rows_of(pred_dist, decision, rows)
            cat = as_categorical(part, name)
            proba = np.ascontiguousarray(floored(cat.proba, floor))  # sums in C order
            yield rows, proba, decision_index(cat, f), p[rows]

    return parts


def _n_classes(pred_dist: Predictive) -> int:
    """The number of classes of a classifier (a mixture's first component's)."""
    return int(np.asarray(first_part(pred_dist).labels).shape[0])


def _rows_of(
    pred_dist: Predictive, decision: NDArray[Any] | None, rows: slice
) -> tuple[Predictive, NDArray[Any]]:
    """A chunk of the pool: its predictive distribution (views of the rows) and decisions."""
    part = pred_dist._chunk(rows)
    return part, (part.point_prediction() if decision is None else decision[rows])


#: How ``groups=`` plans q: ``"minimax"`` minimizes the largest group's variance,
#: ``"sum"`` the sum of the groups' variances.
GROUP_DESIGNS = ("minimax", "sum")


def grouped_distribution(
    predictive: Any,
    measure: Measure | str,
    codes: NDArray[np.intp],
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    prediction: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    design: str = "minimax",
    pos_label: Any = None,
    fast: bool = True,
) -> NDArray[np.float64]:
    """q for estimating the measure within every group of the pool (slices).

    Group k's value is the measure under the test distribution restricted to it,
    p_k = p·1_k / P_k (P_k the group's test mass), and its estimator's variance is
    (1/n) Σ_(x in k) p_k(x)² E[ψ_k(x, y)² | x] / q(x) (eq. 4.5 with the group's influence
    ψ_k). Within a group the optimal shape is eq. 4.6's, q ∝ p_k·sqrt(E[ψ_k² | x] / λ); with
    A_k = Σ_(x in k) p_k·sqrt(E[ψ_k² | x] / λ), B_k = Σ_(x in k) p_k·sqrt(E[ψ_k² | x]·λ) and
    π_k the share of q on group k, the group's variance is A_k B_k / (n π_k), and n draws
    cost n Σ_k π_k B_k / A_k. ``"minimax"`` equalizes the variances, π_k ∝ A_k B_k, which
    minimizes the largest for the budget; ``"sum"`` minimizes their sum, π_k ∝ A_k
    (Cauchy–Schwarz). Without costs B_k = A_k. The defensive mixture is with the groups'
    test distributions in equal shares, Σ_k p_k / G, so a group the model thinks certain
    still gets a share ε/G of the draws.

    For two models the same holds for the difference Δ_k of their values within each group,
    with the influence of the difference under the models' mixture (Thm 5.1, eq. 5.11).

    Parameters
    ----------
    predictive : Predictive or (m, K) array, or a list of two
        The model's predictive distribution over the pool; two models for a comparison.
    measure : Measure or str
        The measure estimated within each group.
    codes : ndarray of int of shape (m,)
        Each instance's group, 0 … G − 1 (every group with test mass).
    costs : array-like of shape (m,), optional
        Labeling cost λ(x) > 0 of every pool instance.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool, up to a constant; uniform by default.
    prediction : array-like of shape (m,), optional
        The model's decisions f(x), if not its most probable class or mean.
    floor, mix : float
        The safeguards of :func:`optimal_distribution`.
    design : {"minimax", "sum"}, default "minimax"
        Minimize the largest group variance, or their sum.
    pos_label : label, optional
        Positive class for measures named by string.
    fast : bool
        Use the measure's closed forms.

    Returns
    -------
    q : ndarray of shape (m,)
        Non-negative, sums to one.

    See Also
    --------
    activeeval.sampling.optimal_distribution : q* for the whole pool.
    evaluate : ``groups=`` runs a campaign with this q.

    Examples
    --------
    A small group gets as many draws as it needs for its own estimate:

    >>> import numpy as np
    >>> from activeeval.sampling import grouped_distribution
    >>> proba = np.array([[0.9, 0.1]] * 8 + [[0.6, 0.4]] * 2)
    >>> codes = np.array([0] * 8 + [1] * 2)
    >>> q = grouped_distribution(proba, "error_rate", codes, mix=0.0)
    >>> round(float(q[codes == 1].sum()), 3)  # 2 of 10 instances, 0.73 of the draws
    0.727
    """
    design = check_option(design, GROUP_DESIGNS, "design")
    check_safeguards(mix, floor)
    pair = isinstance(predictive, list | tuple)
    models = [as_predictive(p) for p in predictive] if pair else [as_predictive(predictive)]
    if len(models) > 2:
        raise ShapeError(f"predictions: groups= compares two models, got {len(models)}.")
    pred_dist: Predictive = models[0] if len(models) == 1 else Mixture(models)
    meas = get_measure(measure, pos_label=pos_label).bind(pred_dist)
    m = pred_dist.n
    lam = check_costs(costs, m)
    p = _pool_distribution(m, pool_weights)
    codes = np.asarray(codes, dtype=np.intp)
    f = None if prediction is None else np.asarray(prediction)
    shape = np.zeros(m)  # within each group, its optimal shape, summing to one
    spread = np.zeros(int(codes.max()) + 1)  # A_k
    paid = np.zeros(spread.shape[0])  # B_k
    defence = np.zeros(m)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(spread.shape[0] + 1))
    for k in range(spread.shape[0]):  # one pass over each group's members
        idx = order[bounds[k] : bounds[k + 1]]
        pk = p[idx] / p[idx].sum()
        sub = None if f is None else f[idx]
        if len(models) == 2:  # the difference's influence under the mixture (eq. 5.11)
            parts = [pr.take(idx) for pr in models]
            fs = [pr.point_prediction() for pr in parts]
            a = _pair_moment(meas, Mixture(parts), parts, pk, 0, 1, fast)
            mask = np.zeros(idx.shape[0], dtype=bool)
            for fj in fs:
                mask |= meas.weight_can_be_positive(fj)
            moment: tuple[Any, ...] | None = (a, mask, meas.regular)
        else:
            moment = influence_moment(pred_dist.take(idx), meas, pk, sub, floor, fast, scaled=True)
        if moment is None:
            a, mask = np.zeros(idx.shape[0]), np.ones(idx.shape[0], dtype=bool)
        else:
            a, mask = np.maximum(moment[0], 0.0), moment[1]
        root = np.where(mask, pk * np.sqrt(a), 0.0)
        score = root if lam is None else root / np.sqrt(lam[idx])
        spread[k] = score.sum()
        paid[k] = spread[k] if lam is None else float(root @ np.sqrt(lam[idx]))
        base = np.where(mask, pk, 0.0)
        defence[idx] = base / base.sum() if base.sum() > 0 else pk
        shape[idx] = score / spread[k] if spread[k] > 0 else defence[idx]
    share = spread * paid if design == "minimax" else spread.copy()
    share = share / share.sum() if share.sum() > 0 else np.full(share.shape, 1 / share.size)
    q = shape * share[codes]
    if mix > 0:
        q = (1.0 - mix) * q + mix * defence / spread.shape[0]
    return q / q.sum()


def check_distribution(q: ArrayLike, name: str = "q", n: int | None = None) -> NDArray[Any]:
    """Validate a sampling distribution over the pool: finite, non-negative, sums to one."""
    qq = check_finite_array(q, name, ndim=1)
    if qq.shape[0] == 0:
        raise EmptyPoolError(f"{name}: the pool is empty; pass at least one instance.")
    if n is not None and qq.shape[0] != n:
        raise ShapeError(f"{name}: has {qq.shape[0]} entries but the pool has {n}.")
    if (qq < 0).any():
        bad = int(np.flatnonzero(qq < 0)[0])
        raise InvalidSamplingDistributionError(
            f"{name}: entry {bad} is {qq[bad]:g}; probabilities must be non-negative."
        )
    total = qq.sum()
    if abs(total - 1.0) > 1e-8:
        raise InvalidSamplingDistributionError(
            f"{name}: sums to {total:.10g}; a sampling distribution must sum to 1 (±1e-8). "
            "Normalize it, e.g. q / q.sum()."
        )
    return qq


def check_support(q: NDArray[Any], required: NDArray[np.bool_], name: str = "q") -> None:
    """q must be positive wherever the pool has mass that can move the estimate (Def. 3.2)."""
    missing = required & (q <= 0)
    if missing.any():
        bad = int(np.flatnonzero(missing)[0])
        raise InvalidSamplingDistributionError(
            f"{name}: is zero at pool instance {bad} (and {int(missing.sum()) - 1} others) where "
            "the pool has mass and the measure's weight can be non-zero; the estimate would be "
            "inconsistent (Def. 3.2). Mix q with the pool distribution, e.g. "
            "0.9 * q + 0.1 / len(q)."
        )


#: Rows per chunk of :class:`Sampler`'s inverse CDF: a draw sums at most this many of q.
DRAW_ROWS = 1 << 12


def draw(q: ArrayLike, n: int, random_state: Any = None) -> NDArray[np.intp]:
    """Draw ``n`` pool indices i.i.d. from ``q``, with replacement (Algorithm 2, line 3).

    Parameters
    ----------
    q : array-like of shape (m,)
        A sampling distribution over the pool: finite, non-negative, summing to one (±1e-8).
    n : int
        Number of draws, n ≥ 0.
    random_state : None, int or numpy.random.Generator
        Seed or generator of the draws.

    Returns
    -------
    indices : ndarray of shape (n,)
        Pool indices, in draw order; repeats are possible.

    Raises
    ------
    InvalidSamplingDistributionError
        When ``q`` has a negative entry or does not sum to one.
    BudgetError
        When ``n`` is negative.

    See Also
    --------
    activeeval.sampling.optimal_distribution : The variance-optimal q*.
    activeeval.sampling.inclusion_probabilities : Which distinct instances n draws reach.

    Examples
    --------
    >>> from activeeval.sampling import draw
    >>> draw([0.1, 0.2, 0.3, 0.4], 6, random_state=0).tolist()
    [3, 1, 0, 0, 3, 3]
    """
    qq = check_distribution(q)
    if int(n) < 0:
        raise BudgetError(f"n: cannot draw a negative number of instances ({n}).")
    return Sampler(qq).draw(int(n), check_random_state(random_state))[0]


class Sampler:
    """Draws i.i.d. from one sampling distribution q (validated by the caller), by the inverse
    CDF ``searchsorted(cumsum(q) / Σq, u, side="right")`` of uniforms u — a chunk of
    :data:`DRAW_ROWS` rows at a time: built once with the running sums at the chunks' ends
    (one pass), each draw then sums only its own chunk, continued from the previous chunk's end
    (bit for bit the whole cumulative sum; :func:`activeeval._chunks.inverse_cdf`). Memory is
    O(m / DRAW_ROWS), not a second copy of q."""

    def __init__(self, q: NDArray[np.float64]) -> None:
        self.q = q
        self.ends = chunk_ends(q, DRAW_ROWS)

    def draw(
        self, n: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """``n`` pool indices and q at each."""
        q = self.q
        return inverse_cdf(self.ends, DRAW_ROWS, q.shape[0], rng.random(n), lambda a, b: q[a:b])


def successive_time(q: ArrayLike, n: int) -> float:
    """The "time" t at which i.i.d. draws from ``q`` reach ``n`` distinct instances, in
    expectation: the root of Σ_i (1 − exp(−q_i t)) = n.

    It gives the inclusion probabilities π_i = 1 − exp(−q_i t) of ``inclusion_probabilities``.
    The left side is concave and increasing in t and at most n at t = n (1 − e^(−x) ≤ x), so
    Newton's method from t = n increases monotonically to the root.

    Parameters
    ----------
    q : array-like of shape (m,)
        A sampling distribution over the pool.
    n : int
        Number of distinct instances, n ≥ 0.

    Returns
    -------
    t : float
        0 for n = 0; ``inf`` when n is at least the number of instances with q > 0.

    Raises
    ------
    BudgetError
        When ``n`` is negative or not an integer.

    See Also
    --------
    activeeval.sampling.inclusion_probabilities : π_i = 1 − exp(−q_i t).

    Examples
    --------
    >>> from activeeval.sampling import successive_time
    >>> round(successive_time([0.25, 0.25, 0.25, 0.25], 2), 4)
    2.7726
    >>> successive_time([0.25, 0.25, 0.25, 0.25], 4)
    inf
    """
    qq = check_distribution(q)
    if int(n) != n:
        raise BudgetError(f"n: the number of distinct instances must be an integer, got {n}.")
    if n < 0:
        raise BudgetError(f"n: the number of distinct instances cannot be negative ({n}).")
    return _successive_time(qq, int(n))


#: While :func:`remembering_times` is active: the t found for each (q, n) and q's summary
#: (n = −1), q held alive.
_TIMES: ContextVar[dict[tuple[int, int], tuple[Any, Any]] | None] = ContextVar(
    "activeeval_times", default=None
)


@contextmanager
def remembering_times() -> Iterator[None]:
    """Within the block, :func:`_successive_time` solves for each q and n once: an estimate
    and its tempered interval ask for the same t of the same q (the block's caller does not
    change q meanwhile)."""
    token = _TIMES.set({})
    try:
        yield
    finally:
        _TIMES.reset(token)


def _successive_time(q: NDArray[np.float64], n: int) -> float:
    """``successive_time`` for a validated q and integer n ≥ 0: from q's
    :class:`TimeSummary`, so that a session, which keeps the summary instead of q, finds
    the same t bit for bit. Within :func:`remembering_times` the summary and each t are
    made once per q."""
    memo = _TIMES.get()
    hit = None if memo is None else memo.get((id(q), n))
    if hit is not None and hit[0] is q:
        return float(hit[1])
    made = None if memo is None else memo.get((id(q), -1))
    summary = made[1] if made is not None and made[0] is q else TimeSummary.of(q)
    t = summary.time(n, q)
    if memo is not None:
        memo[(id(q), -1)] = (q, summary)
        memo[(id(q), n)] = (q, t)
    return t


#: A :class:`TimeSummary` keeps this many of the largest q exactly (pools above one chunk).
TOP_Q = 1 << 16
#: Power sums S_1 … S_TERMS of the other q (the series of :meth:`TimeSummary.time`).
TERMS = 20


@dataclass(frozen=True, eq=False)
class TimeSummary:
    """What :func:`successive_time` needs of q, in O(:data:`TOP_Q`) numbers, so that a
    session finds t(n) without reading q (``docs/design/lean-status.md``).

    A pool of at most one chunk (:data:`~activeeval._chunks.ROWS`) keeps its positive q
    (``top``) and Newton's iteration runs on them, as it always did. A larger one keeps its
    :data:`TOP_Q` largest q exactly (``top``; every other q is at most ``tau``) and the power
    sums S_k = Σ q^k of the others (``sums``), so that for τ·t ≤ 1

        Σ_i (1 − e^(−q_i t)) = Σ_top (1 − e^(−q t)) + Σ_k (−1)^(k+1) t^k S_k / k!,

    the series' remainder below t·S_1·(τ t)^20 / 21! — with the series' sum at least
    (1 − 1/e)·t·S_1, at most 3·10⁻²⁰ of it; its terms cancel by at most a factor e (less
    than two bits): the same root to rounding. The largest q keep τ small: Σ q = 1 makes
    τ ≤ 1/TOP_Q, so the series holds at least to t = TOP_Q, past about 0.63·TOP_Q distinct
    labels (every top instance then has π ≥ 1 − 1/e). Beyond (:meth:`covers`), :meth:`time`
    solves over q itself; a session then estimates from its pool.
    """

    size: int
    n_support: int
    top: NDArray[np.float64]
    tau: float
    sums: NDArray[np.float64]

    @classmethod
    def of(cls, q: NDArray[np.float64]) -> TimeSummary:
        """The summary of a validated q: two passes over it, a chunk at a time (the pieces a
        cluster runs on its partitions: :meth:`top_part`, :meth:`merge_tops`,
        :meth:`sums_part`, :meth:`assemble`)."""
        m = q.shape[0]
        if m <= _chunks.ROWS:
            n_support = int(np.count_nonzero(q > 0))
            top = np.asarray(q, dtype=np.float64) if n_support == m else q[q > 0]
            return cls(m, n_support, top, 0.0, np.zeros(0))
        n_support, best = 0, np.empty(0)
        for rows in row_chunks(m):
            count, part = cls.top_part(q[rows])
            n_support += count
            best = cls.merge_tops(best, part)
        if n_support <= TOP_Q:
            tops = [q[rows][q[rows] > 0] for rows in row_chunks(m)]
            return cls.assemble(m, n_support, 0.0, tops, [])
        tau = float(best.min())  # the (TOP_Q + 1)-th largest: it and all below go to the sums
        parts = [cls.sums_part(q[rows], tau) for rows in row_chunks(m)]
        return cls.assemble(m, n_support, tau, [t for t, _ in parts], [s for _, s in parts])

    @staticmethod
    def top_part(qc: NDArray[np.float64]) -> tuple[int, NDArray[np.float64]]:
        """A chunk's number of positive q and its :data:`TOP_Q` + 1 largest q."""
        k = qc.shape[0] - TOP_Q - 1
        return int(np.count_nonzero(qc > 0)), (np.partition(qc, k)[k:] if k > 0 else qc)

    @staticmethod
    def merge_tops(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        """The :data:`TOP_Q` + 1 largest of two chunks' (in any order: a multiset's)."""
        both = np.concatenate([a, b])
        k = both.shape[0] - TOP_Q - 1
        return np.partition(both, k)[k:] if k > 0 else both

    @staticmethod
    def sums_part(
        qc: NDArray[np.float64], tau: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """A chunk's q above τ, and the power sums S_1 … S_TERMS of the others."""
        above = qc > tau
        x = np.where(above, 0.0, qc)  # the rest (a zero adds nothing to any power sum)
        power = x.copy()
        sums = np.zeros(TERMS)
        for k in range(TERMS):
            sums[k] = float(power.sum())
            power *= x
        return qc[above], sums

    @classmethod
    def assemble(
        cls,
        m: int,
        n_support: int,
        tau: float,
        tops: list[NDArray[np.float64]],
        sums: list[NDArray[np.float64]],
    ) -> TimeSummary:
        """The summary of a pool above one chunk from its chunks' parts, in row order (each
        chunk's power sums added in that order, as one pass adds them)."""
        total = np.zeros(TERMS if sums else 0)
        for part in sums:
            total += part
        top = np.concatenate(tops) if tops else np.zeros(0)
        return cls(m, n_support, top, tau, total)

    def time(self, n: int, q: NDArray[np.float64] | None = None) -> float:
        """t(n) (:func:`successive_time`); where the series does not reach n, Newton's
        iteration over ``q`` itself (needed then: a :class:`ValueError` without it)."""
        if n >= self.n_support:
            return math.inf
        if self.tau == 0.0:
            if self.size <= _chunks.ROWS:  # the positive q, as one chunk of the whole pool
                return _time_to_reach(self.top, float(n), positive=self.n_support < self.size)
            return _time_to_reach(self.top, float(n))
        if n <= 0:
            return 0.0
        if not self.covers(n):  # n lies beyond the series' range
            if q is None:
                raise ValueError("TimeSummary.time: n lies beyond the series; pass q.")
            return _time_to_reach(q, float(n), positive=self.n_support < self.size)
        t = float(n)  # left of the root, as in _time_to_reach
        for _ in range(1000):
            gap, slope = self._gap(t, float(n))
            if gap <= 1e-12 * n or slope <= 0.0:
                break
            step = gap / slope
            t = min(t + step, 1.0 / self.tau)
            if step <= 1e-15 * t:
                break
        return t

    def covers(self, n: int) -> bool:
        """Whether :meth:`time` finds t(n) without q: from the kept q alone, or the series
        reaches n within τ·t ≤ 1 (a sum that overflows there, with τ tiny, does not)."""
        if n >= self.n_support or n <= 0 or self.tau == 0.0:
            return True
        return bool(self._gap(1.0 / self.tau, float(n))[0] <= 0.0)

    def _gap(self, t: float, n: float) -> tuple[float, float]:
        """n − Σ (1 − e^(−q t)) and its slope Σ q e^(−q t), the series for q ≤ τ."""
        em = np.expm1(-self.top * t)
        gap = n + float(em.sum())
        slope = dot(self.top, 1.0 + em)
        term = 1.0
        with np.errstate(over="ignore", invalid="ignore"):  # inf·0 at a huge t: NaN, beyond
            for k in range(1, self.sums.shape[0] + 1):  # term = t^(k−1)/(k−1)!
                sign = 1.0 if k % 2 else -1.0
                slope += sign * term * float(self.sums[k - 1])
                term *= t / k
                gap -= sign * term * float(self.sums[k - 1])
        return gap, slope


def _time_to_reach(
    q: NDArray[np.float64],
    total: float,
    price: NDArray[np.float64] | None = None,
    positive: bool = False,
) -> float:
    """The t with Σ_i c_i (1 − exp(−q_i t)) = ``total`` (c = ``price``, ones by default:
    distinct instances; costs: the expected cost of the first distinct draws,
    ``activeeval.planner``), for 0 ≤ total < Σ c, over q's positive entries (``positive``:
    q may hold zeros, which are skipped; else every entry is positive). Newton's method from
    a point left of the root (1 − e^(−x) ≤ x), where the concave increasing left side makes
    it increase monotonically to the root. Sums run a chunk of the pool at a time."""
    if total <= 0:
        return 0.0

    def parts() -> Any:  # each chunk's q (positive entries) and their prices
        for rows in row_chunks(q.shape[0]):
            qc = q[rows]
            cc = None if price is None else price[rows]
            if positive:
                on = qc > 0
                qc, cc = qc[on], (None if cc is None else cc[on])
            yield qc, cc

    t = total if price is None else total / sum(dot(cc, qc) for qc, cc in parts())

    def sums(t: float) -> tuple[float, float]:  # total − Σ c (1 − e^(−q t)) and its slope
        gap, slope = total, 0.0
        for qc, cc in parts():
            em = np.expm1(-qc * t)  # e^(−q t) − 1, accurate where q t is small
            if cc is None:
                gap += float(em.sum())  # total − Σ (1 − e^(−q t)) ≥ 0 left of the root
                slope += dot(qc, 1.0 + em)
            else:
                gap += dot(cc, em)
                slope += dot(cc * qc, 1.0 + em)
        return gap, slope

    return newton_time(total, t, sums)


def newton_time(total: float, t: float, sums: Any) -> float:
    """Newton's iteration of :func:`_time_to_reach` from ``t``, left of the root: ``sums(t)``
    gives the gap total − Σ c (1 − e^(−q t)) and its slope (a pass over the pool, here or on
    a cluster's partitions)."""
    for _ in range(1000):
        gap, slope = sums(t)
        if gap <= 1e-12 * total or slope <= 0.0:
            break
        step = gap / slope
        t += step
        if step <= 1e-15 * t:
            break
    return t


def inclusion_probabilities(q: ArrayLike, n: int) -> NDArray[np.float64]:
    """Probability that each pool instance is among the first ``n`` *distinct* instances of
    an i.i.d. sequence of draws from ``q``.

    That is the sample a label budget of n buys when repeats of labeled instances are free
    (Algorithm 2). Rosén's approximation π_i ≈ 1 − exp(−q_i t) with Σ_i π_i = n
    (``successive_time``): exact for uniform q (π_i = n/m, a simple random sample) and when
    n reaches the support; on small pools the π of rarely drawn instances can be off by a
    visible fraction. The derivation and its accuracy are on the *Sampling distributions (q*)*
    page (``docs/how-it-works/sampling.md``).

    Parameters
    ----------
    q : array-like of shape (m,)
        A sampling distribution over the pool.
    n : int
        Number of distinct instances, n ≥ 0.

    Returns
    -------
    pi : ndarray of shape (m,)
        Inclusion probabilities, summing to n (to 1 on q > 0 when n reaches the support);
        0 where q = 0.

    See Also
    --------
    activeeval.sampling.successive_time : The t of the approximation.
    activeeval.estimators.assisted.assisted_estimate : Uses π with ``pool_q`` (finite pools).

    References
    ----------
    Rosén (1972), Asymptotic theory for successive sampling; Rosén (1997), On sampling with
    probability proportional to size.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.sampling import inclusion_probabilities
    >>> np.round(inclusion_probabilities([0.1, 0.2, 0.3, 0.4], 2), 3).tolist()
    [0.259, 0.451, 0.593, 0.698]
    >>> inclusion_probabilities([0.25, 0.25, 0.25, 0.25], 2).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    qq = check_distribution(q)
    t = successive_time(qq, n)  # validates n
    if math.isinf(t):
        return (qq > 0).astype(float)
    return -np.expm1(-qq * t)


def sampling_distribution(
    method: str,
    predictive: Predictive,
    measure: Measure,
    *,
    costs: NDArray[np.float64] | None,
    pool_weights: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    prediction: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """q for a named static method: ``active`` (q*, cost-sensitive when costs are given),
    ``active_uniC`` (q* ignoring costs), ``active_lambda`` (costs only), ``passive``.
    ``prediction``: the evaluated model's f(x) when ``predictive`` is another distribution
    (batch-adaptive sampling's recalibrated one, whose own mode may differ)."""
    method = check_option(method, SAMPLING_METHODS, "method")
    check_safeguards(mix, floor)
    if method == "passive":  # q = p (uniform: a view, no memory per instance)
        return _pool_distribution(predictive.n, pool_weights)
    if method == "active_lambda":
        if costs is None:
            raise ShapeError("costs: method='active_lambda' samples by cost and needs costs.")
        return cost_distribution(costs, pool_weights)
    return optimal_distribution(
        predictive,
        measure,
        costs=costs if method == "active" else None,
        pool_weights=pool_weights,
        prediction=prediction,
        floor=floor,
        mix=mix,
    )


# ------------------------------------------------------------------------- comparisons
def _pair_moments(
    meas: Measure,
    mixture: Predictive,
    models: Sequence[Predictive],
    p: NDArray[np.float64],
    pairs: Sequence[tuple[int, int]],
    fast: bool,
) -> Callable[[slice, int], Iterator[NDArray[np.float64]]]:
    """E[(ψ_i − ψ_j)² | x] of each pair (i, j) of ``pairs`` under ``mixture`` (eq. 5.12),
    the models' decisions f(x) being ``models``' point predictions: a function of a chunk's
    rows and the first pair wanted, yielding the pairs' moments there one at a time (a
    chunk's temporaries do not grow with the number of pairs), after one pass over the pool
    that fixes what every pair's moment needs (each model's intrinsic center, eq. 5.12, or
    its expected counts, eq. 4.21, under the mixture; a model's are the same in every pair
    it is in)."""
    m = mixture.n
    used = sorted({k for pair in pairs for k in pair})
    if isinstance(meas, ClasswiseMeasure):  # a function of several ratios: its influences
        k_cls = _n_classes(mixture)

        def decided(rows: slice) -> tuple[NDArray[np.float64], dict[int, NDArray[np.intp]]]:
            cat = as_categorical(mixture._chunk(rows), meas.name)
            fs = {k: decision_index(cat, models[k]._chunk(rows).point_prediction()) for k in used}
            return np.ascontiguousarray(cat.proba), fs  # sums in C order

        def chunks() -> Any:
            for rows in row_chunks(m):
                proba, fs = decided(rows)
                yield proba, tuple(fs[k] for k in used), p[rows]

        counts = dict(zip(used, pool_counts_of_decisions(chunks(), k_cls), strict=True))

        def class_at(rows: slice, first: int = 0) -> Iterator[NDArray[np.float64]]:
            proba, fs = decided(rows)
            for i, j in pairs[first:]:
                yield difference_influence_moment(
                    meas, proba, (fs[i], fs[j]), p[rows], (counts[i], counts[j])
                )

        return class_at
    sums = {k: np.zeros(2) for k in used}  # per model: E[w], E[wℓ] under the mixture
    for rows in row_chunks(m):
        part = mixture._chunk(rows)
        for k in used:
            wl, w = meas.conditional_expectations(
                part, models[k]._chunk(rows).point_prediction(), fast=fast
            )
            sums[k] += (weighted_sum(p[rows], w), weighted_sum(p[rows], wl))
    centers = {k: float(wl) / s if s > 0 else 0.0 for k, (s, wl) in sums.items()}
    scales = {k: 1.0 if meas.regular else max(float(s), 1e-300) for k, (s, _) in sums.items()}

    def at(rows: slice, first: int = 0) -> Iterator[NDArray[np.float64]]:
        part = mixture._chunk(rows)
        f = {k: models[k]._chunk(rows).point_prediction() for k in used}
        for i, j in pairs[first:]:
            yield meas.difference_second_moment(
                part, (f[i], f[j]), (centers[i], centers[j]), (scales[i], scales[j]), fast=fast
            )

    return at


def _pair_moment(
    meas: Measure,
    mixture: Predictive,
    models: Sequence[Predictive],
    p: NDArray[np.float64],
    i: int,
    j: int,
    fast: bool,
) -> NDArray[np.float64]:
    """E[(ψ_i − ψ_j)² | x] of one pair over the pool (:func:`_pair_moments`)."""
    at = _pair_moments(meas, mixture, models, p, [(i, j)], fast)
    out = np.empty(mixture.n)
    for rows in row_chunks(mixture.n):
        out[rows] = next(at(rows, 0))
    return out


def comparison_distribution(
    predictives: list[Any],
    measure: Measure | str = "error_rate",
    *,
    method: str = "active",
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    mixture: Predictive | None = None,
    mix: float = DEFAULT_MIX,
    pos_label: Any = None,
    fast: bool = True,
) -> NDArray[np.float64]:
    """Sampling distribution for comparing two or more models (thesis Ch. 5).

    ``active`` is q*(x) ∝ p(x)·sqrt(E[(ψ₁ − ψ₂)² | x] / λ(x)), the variance-optimal q for the
    difference (Thm 5.1) under the mixture of the models' predictive distributions (eq. 5.11)
    with intrinsic centers (eq. 5.12); for k > 2 models the average of the pairwise
    distributions (eq. 5.16). The defensive ``mix`` keeps ε·p(x) on every instance. The
    variants and the derivation are on the *Sampling distributions (q*)* page
    (``docs/how-it-works/sampling.md``).

    Parameters
    ----------
    predictives : list of Predictive or (m, K) arrays
        Two or more models' predictive distributions over the same pool.
    measure : Measure or str
        The generalized risk whose difference is compared.
    method : str
        One of ``COMPARISON_METHODS``: ``active`` (q*, default), ``passive`` (q = p),
        ``active_0`` (q ∝ (f₁ − f₂)², for classifiers 1[f₁ ≠ f₂]), ``active_inf``
        (q ∝ |f₁ − f₂|), ``active_neq`` (uniform on the disagreements, zero elsewhere, no
        mixture), ``active_risk`` (the average of the single-model q*), ``active_uniC``
        (q* ignoring costs), ``active_lambda`` (q ∝ p·λ^(-1/2)). ``active_0``,
        ``active_inf`` and ``active_neq`` compare exactly two models.
    costs : array-like of shape (m,), optional
        Labeling cost λ(x) > 0 of every pool instance.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool, up to a constant; uniform by default.
    mixture : Predictive, optional
        The distribution standing in for p(y | x); the equal-weight mixture of
        ``predictives`` by default.
    mix : float
        Weight ε ∈ [0, 1] of the defensive mixture with p; 0 disables.
    pos_label : label, optional
        Positive class for F-measures named by string.
    fast : bool
        Use the measure's closed form where one exists (Cor. 5.1, 5.2).

    Returns
    -------
    q : ndarray of shape (m,)
        Non-negative, sums to one.

    See Also
    --------
    activeeval.sampling.optimal_distribution : q* for one model.
    compare : Run a whole comparison campaign.
    activeeval.estimators.inference.paired_test : Test the difference on the labeled draws.

    Notes
    -----
    ``active_neq`` samples only where the models disagree, so the estimate is of the
    difference given disagreement; it must be rescaled by the disagreement mass
    (``compare`` does; ``paired_test(..., support_mass=)``).

    Examples
    --------
    The models disagree on instances 1 and 3, which get most of the mass:

    >>> import numpy as np
    >>> from activeeval.sampling import comparison_distribution
    >>> a = np.array([[0.99, 0.01], [0.9, 0.1], [0.6, 0.4], [0.45, 0.55]])
    >>> b = np.array([[0.99, 0.01], [0.4, 0.6], [0.6, 0.4], [0.55, 0.45]])
    >>> np.round(comparison_distribution([a, b], "error_rate"), 3).tolist()
    [0.057, 0.439, 0.057, 0.448]
    >>> q = comparison_distribution([a, b], "error_rate", method="active_0")
    >>> np.round(q, 3).tolist()
    [0.025, 0.475, 0.025, 0.475]
    """
    method = check_option(method, COMPARISON_METHODS, "method")
    preds_in = [as_predictive(pr, f"predictions[{k}]") for k, pr in enumerate(predictives)]
    k = len(preds_in)
    if k < 2:
        raise ShapeError(f"predictions: need at least two models to compare, got {k}.")
    m = preds_in[0].n
    for idx, pr in enumerate(preds_in):
        if pr.n != m:
            raise ShapeError(
                f"predictions[{idx}]: covers {pr.n} instances, predictions[0] covers {m}; "
                "all models must be evaluated on the same pool."
            )
    check_safeguards(mix)
    mixture = Mixture(preds_in) if mixture is None else mixture
    meas = get_measure(measure, pos_label=pos_label).bind(mixture)
    lam = check_costs(costs, m)
    p = _pool_distribution(m, pool_weights)
    mask = np.zeros(m, dtype=bool)
    for rows in row_chunks(m):
        for pr in preds_in:
            mask[rows] |= meas.weight_can_be_positive(pr._chunk(rows).point_prediction())
    if method == "passive":
        return p
    if method == "active_lambda":
        if lam is None:
            raise ShapeError("costs: method='active_lambda' samples by cost and needs costs.")
        return cost_distribution(lam, pool_weights)
    if method == "active_risk":
        q = np.zeros(m)
        for pr in preds_in:
            q += optimal_distribution(pr, meas, costs=lam, pool_weights=p, mix=0.0, fast=fast)
        return _defensive(q / q.sum(), p, mask, mix)
    pairs = model_pairs(k)
    if method in ("active_0", "active_inf", "active_neq"):
        if k != 2:
            raise ShapeError(f"method: {method!r} compares exactly two models, got {k}.")
        fa, fb = (pr.point_prediction() for pr in preds_in)
        if meas.categorical:
            gap = np.not_equal(fa, fb).astype(float)
        else:
            diff = fa.astype(float) - fb.astype(float)
            gap = diff * diff if method == "active_0" else np.abs(diff)
        if method == "active_neq":
            gap = np.not_equal(fa, fb).astype(float)
        score = p * gap
        if score.sum() <= 0:  # identical predictions: nothing to compare, sample passively
            return p
        core = score / score.sum()
        return core if method == "active_neq" else _defensive(core, p, mask, mix)
    at = _pair_moments(meas, mixture, preds_in, p, pairs, fast)

    def scored(a: NDArray[np.float64], rows: slice) -> NDArray[np.float64]:
        """p·sqrt(a / λ) in place on the moment a of the pool's ``rows``."""
        np.maximum(a, 0.0, out=a)
        if lam is not None and method != "active_uniC":
            a /= lam[rows]
        np.sqrt(a, out=a)
        a *= p[rows]
        return a

    # One array of the pool's size: the first pair's score is kept in it and each pair's
    # normalizer summed (a pass); the other pairs' scores are made again, a chunk at a
    # time, and added normalized (a second pass).
    total_q = np.empty(m)
    totals = [0.0] * len(pairs)
    for rows in row_chunks(m):
        for n, a in enumerate(at(rows, 0)):
            a = scored(a, rows)
            totals[n] += a.sum()
            if n == 0:
                total_q[rows] = a
    for rows in row_chunks(m):
        rest = (scored(a, rows) for a in at(rows, 1)) if len(pairs) > 1 else iter(())
        pairs_averaged(total_q[rows], rest, totals, p[rows])
    return _defensive(total_q, p, mask, mix, in_place=True) if mix > 0 else total_q


def model_pairs(k: int) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, of k models in the order eq. 5.16's average adds them (and
    ``np.triu_indices(k, 1)`` lists them)."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def pairs_averaged(
    first: NDArray[np.float64],
    rest: Iterator[NDArray[np.float64]],
    totals: Sequence[float],
    p: NDArray[np.float64],
) -> NDArray[np.float64]:
    """q of k ≥ 2 models on a chunk (eq. 5.16), in place on ``first``: each pair's score
    p·sqrt(a / λ) — the first pair's ``first``, the others' ``rest`` in pair order — over
    its sum over the pool ``totals`` (p where that is 0: nothing to aim at), added in pair
    order and divided by the number of pairs. The NumPy and the Dask paths' one arithmetic."""
    if not totals[0] > 0:
        first[:] = p
    else:
        first /= totals[0]
    for a, total in zip(rest, totals[1:], strict=True):
        first += a / total if total > 0 else p
    first /= len(totals)
    return first
