"""Instrumental (sampling) distributions over the pool, and drawing from them.

``optimal_distribution`` implements the variance-optimal rule

    q*(x) ∝ p(x) · sqrt( E_y[w² (ℓ − Ǧ)² | x] / λ(x) )         (Thm 4.1, eq. 4.6; Thm 4.2, eq. 4.25)

with the model's predictive distribution standing in for p(y|x) and the intrinsic value Ǧ
(eq. 4.21) for G. The conditional moment comes from the measure (closed forms Cor. 4.2–4.4 and
eq. 4.17/4.23 as fast paths of the general rule).

Safeguards (Sec. 4.2.2, 4.4.2). q* trusts the model; an over-confident or badly calibrated
model gives near-zero mass to instances that are in fact informative, and importance weights
then explode. Two guards, both on by default:

* ``floor``: for 0/1 losses the intrinsic value is clipped into [floor, 1 − floor] (the thesis
  notes Ř acts as a smoothing parameter and suggests bounding it); for regular 0/1 risks every
  instance then keeps a moment of at least floor², even one the model is certain about. For
  F-measures the moment of a predicted negative with p(pos | x) = 0 is still zero — flooring it
  too was measured to cost a third of the label efficiency on the skewed tasks (Default F1
  7.2 → 4.7) — so there the defensive mixture is what keeps q positive; ``mix=0`` warns when
  it leaves such instances at zero.
* ``mix``: the defensive mixture q = (1 − ε)·q* + ε·p|_S, where S is the set of instances whose
  weight w can be non-zero for some label (everything, except predicted negatives for
  precision). It bounds every importance weight by 1/ε relative to passive sampling, so the
  estimator's variance is at most 1/ε times passive's (Hesterberg, 1995).

Defaults, from a grid over floor ∈ {0, 0.05} × mix ∈ {0, 0.05, 0.1} on the real tasks (email
shift, ISLR Default and Caravan; logistic regression and naive Bayes; error rate and F1;
300 repetitions, budgets 50–800; see ``docs/results/active_estimation.md``): without the floor,
naive Bayes makes active estimation lose to passive by up to 1.6× MAE at small budgets
(Caravan F1 1.60, email error rate 1.37); floor = 0.05 caps the worst case at ≈1.1×, and
mix = 0.1 bounds every importance weight by 10× passive's at a cost of at most ~10% MAE on
well-calibrated models.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
from .measures import Measure, get_measure
from .methods import COMPARISON_METHODS, DEFAULT_FLOOR, DEFAULT_MIX, SAMPLING_METHODS
from .predictive import Mixture, Predictive, as_predictive
from .ranking import GradedRelevance, ranking_distribution

__all__ = [
    "COMPARISON_METHODS",
    "DEFAULT_FLOOR",
    "DEFAULT_MIX",
    "comparison_distribution",
    "cost_distribution",
    "draw",
    "inclusion_probabilities",
    "optimal_distribution",
    "passive_distribution",
    "successive_time",
]


def passive_distribution(n: int, pool_weights: ArrayLike | None = None) -> NDArray[np.float64]:
    """Passive sampling: q = p (uniform over the pool unless ``pool_weights`` are given)."""
    return _pool_distribution(int(n), pool_weights)


def cost_distribution(
    costs: ArrayLike, pool_weights: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Cost-only heuristic q ∝ p(x) · λ(x)^(-1/2) (``active_lambda``, Sec. 4.4.1)."""
    c = check_costs(costs, int(np.size(costs)))
    if c is None:
        raise ShapeError("costs: the cost-only heuristic needs costs.")
    q = _pool_distribution(c.shape[0], pool_weights) / np.sqrt(c)
    return q / q.sum()


def _defensive(
    core: NDArray[np.float64], p: NDArray[np.float64], mask: NDArray[np.bool_], mix: float
) -> NDArray[np.float64]:
    """(1 − ε)·core + ε·p restricted to ``mask``; ``core`` already sums to one."""
    base = np.where(mask, p, 0.0)
    total = base.sum()
    if total <= 0:
        return core
    return (1.0 - mix) * core + mix * (base / total)


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
    a = np.maximum(a, 0.0)
    if not regular:
        a[~mask] = 0.0
    if lam is not None:
        a /= lam
    score = np.sqrt(a, out=a)
    if not uniform:
        score *= p
    total = score.sum()
    if not total > 0:
        return np.where(mask, p, 0.0) / p[mask].sum()
    score /= total
    if mix <= 0:
        zeros = int(((score <= 0) & mask).sum())
        if zeros:
            warnings.warn(
                f"mix: with mix=0, q is zero on {zeros} instances whose weight can be positive "
                "(the model is certain about them); estimates ignore those instances and are "
                "not consistent for the whole pool. Keep mix > 0 (default 0.1).",
                ActiveEvalWarning,
                stacklevel=3,
            )
        return score
    if regular and uniform:  # defensive mixture with the uniform pool
        score *= 1.0 - mix
        score += mix / score.shape[0]
        return score
    return _defensive(score, p, mask, mix)


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

    Parameters
    ----------
    predictive : Predictive, (m, K) array, or a list of them
        The model's predictive distribution over the pool (class probabilities, or
        ``Gaussian(mean, var)``); it stands in for p(y | x). A list of two or more models gives
        the distribution for comparing them (:func:`comparison_distribution`, Thm 5.1).
    measure : Measure or str
        The generalized risk to estimate.
    costs : array-like of shape (m,), optional
        Labeling cost λ(x) > 0 of every pool instance (Thm 4.2, eq. 4.25).
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    prediction : array-like of shape (m,), optional
        The model's predictions f(x) if they are not the mode/mean of ``predictive``.
    floor : float
        Bounds [floor, 1 − floor] on the intrinsic value for 0/1 losses; 0 disables.
    mix : float
        Weight ε ∈ [0, 1] of the defensive mixture with p; 0 disables.
    pos_label : label, optional
        Positive class for F-measures named by string.
    fast : bool
        Use the measure's closed form where one exists (tested equal to the general rule).

    Returns
    -------
    q : ndarray of shape (m,)
        Non-negative, sums to one; zero only where the measure's weight is zero for every label.

    References
    ----------
    Thesis Thm 4.1 (eq. 4.6), Thm 4.2 (eq. 4.25), eq. 4.21 (intrinsic value), Cor. 4.2–4.4.
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
    f = pred_dist.point_prediction() if prediction is None else np.asarray(prediction)
    c = meas.intrinsic_value(pred_dist, f, pool_weights=p, fast=fast)  # eq. 4.21
    mask = meas.weight_can_be_positive(f)
    if np.isnan(c) or not mask.any():
        # Undefined measure under the model (warned by intrinsic_value): fall back to p on S.
        return _defensive(p, p, mask, 1.0) if mask.any() else p
    if meas.binary_loss and floor > 0:
        c = min(max(c, floor), 1.0 - floor)
    a = meas.conditional_second_moment(pred_dist, c, f, fast=fast)  # E[w²(ℓ−Ǧ)² | x]
    return _from_moment(a, p, mask, lam, mix, meas.regular, uniform=pool_weights is None)


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


def draw(q: ArrayLike, n: int, random_state: Any = None) -> NDArray[np.intp]:
    """Draw ``n`` pool indices i.i.d. from ``q``, with replacement (Algorithm 2, line 3)."""
    qq = check_distribution(q)
    if int(n) < 0:
        raise BudgetError(f"n: cannot draw a negative number of instances ({n}).")
    rng = check_random_state(random_state)
    cdf = np.cumsum(qq)
    cdf /= cdf[-1]
    idx = np.searchsorted(cdf, rng.random(int(n)), side="right")
    return np.minimum(idx, qq.shape[0] - 1).astype(np.intp)


def successive_time(q: ArrayLike, n: int) -> float:
    """The t with Σ_i (1 − exp(−q_i t)) = n: the "time" at which i.i.d. draws from q have
    reached n distinct instances, in expectation (see :func:`inclusion_probabilities`).

    inf when n is at least the number of instances with q > 0; 0 for n = 0. The left side is
    concave and increasing in t and is at most n at t = n (1 − e^(−x) ≤ x), so Newton's method
    from t = n increases monotonically to the root.
    """
    qq = check_distribution(q)
    if int(n) != n:
        raise BudgetError(f"n: the number of distinct instances must be an integer, got {n}.")
    if n < 0:
        raise BudgetError(f"n: the number of distinct instances cannot be negative ({n}).")
    return _successive_time(qq, int(n))


def _successive_time(q: NDArray[np.float64], n: int) -> float:
    """:func:`successive_time` for a validated q and integer n ≥ 0."""
    qp = q[q > 0]
    if n >= qp.shape[0]:
        return math.inf
    return _time_to_reach(qp, float(n))


def _time_to_reach(
    qp: NDArray[np.float64], total: float, price: NDArray[np.float64] | None = None
) -> float:
    """The t with Σ_i c_i (1 − exp(−q_i t)) = ``total`` over positive ``qp`` (c = ``price``,
    ones by default: distinct instances; costs: the expected cost of the first distinct
    draws, :mod:`activeeval.planner`), for 0 ≤ total < Σ c. Newton's method from a point
    left of the root (1 − e^(−x) ≤ x), where the concave increasing left side makes it
    increase monotonically to the root."""
    if total <= 0:
        return 0.0
    t = total if price is None else total / float(price @ qp)
    for _ in range(1000):
        em = np.expm1(-qp * t)  # e^(−q t) − 1, accurate where q t is small
        if price is None:
            gap = total + float(em.sum())  # total − Σ (1 − e^(−q t)) ≥ 0 left of the root
            slope = float(qp @ (1.0 + em))
        else:
            gap = total + float(price @ em)
            slope = float((price * qp) @ (1.0 + em))
        if gap <= 1e-12 * total or slope <= 0.0:
            break
        step = gap / slope
        t += step
        if step <= 1e-15 * t:
            break
    return t


def inclusion_probabilities(q: ArrayLike, n: int) -> NDArray[np.float64]:
    """Probability that each pool instance is among the first ``n`` *distinct* instances of
    an i.i.d. sequence of draws from ``q`` — the sample a label budget of n buys when repeats
    of labeled instances are free (Algorithm 2).

    The distinct instances in order of first appearance are a successive sample (sampling
    without replacement proportional to q among those not yet drawn). Embedding the draws in
    a Poisson process of rate one, instance i first appears at an Exp(q_i) time,
    independently across instances, so the sample is the order sample of the n smallest
    E_i/q_i (Rosén, 1972; 1997), and

        π_i ≈ 1 − exp(−q_i t),   Σ_i π_i = n     (:func:`successive_time`),

    Rosén's approximation, asymptotically exact as n and m − n grow (it replaces the random
    n-th arrival time by its deterministic equivalent t). It is exact for uniform q (π_i =
    n/m: the sample is then a simple random sample) and when n reaches the support (π = 1 on
    q > 0). On small pools the π of rarely drawn instances can be off by a visible fraction
    (measured up to ~20% on π ≈ 0.03, m = 300); the estimators built on it stayed within
    Monte-Carlo error of unbiased (tests/test_finite_population.py). Returns an (m,) array;
    0 where q = 0.
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
    if method == "passive":
        return passive_distribution(predictive.n, pool_weights)
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
def _pair_moment(
    meas: Measure,
    mixture: Predictive,
    preds: list[NDArray[Any]],
    p: NDArray[np.float64],
    i: int,
    j: int,
    fast: bool,
) -> NDArray[np.float64]:
    """E[(ψ_i − ψ_j)² | x] under ``mixture`` with intrinsic centers (eq. 5.12)."""
    centers, scales = [], []
    for f in (preds[i], preds[j]):
        wl, w = meas.conditional_expectations(mixture, f, fast=fast)
        s = float(p @ w)
        centers.append(float(p @ wl) / s if s > 0 else 0.0)
        scales.append(1.0 if meas.regular else max(s, 1e-300))
    return meas.difference_second_moment(
        mixture, (preds[i], preds[j]), (centers[0], centers[1]), (scales[0], scales[1]), fast=fast
    )


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

    ``active``: q*(x) ∝ p(x)·sqrt(E[(ψ₁ − ψ₂)² | x] / λ(x)) under the mixture of the models'
    predictive distributions (eq. 5.11) with intrinsic centers (eq. 5.12) — Thm 5.1 for
    regular risks, and for any generalized risk (F-measures included) through the influence
    functions ψ_j = w_j(ℓ_j − Ǧ_j)/E[w_j] of the two ratio estimates. Cor. 5.1 (zero-one loss,
    any number of classes) and Cor. 5.2 (squared loss) are its fast paths. For k > 2 models, the
    average of the pairwise distributions (eq. 5.16) under the k-component mixture.

    Where the models agree, Cor. 5.1 gives mass ∝ |Δ̌|, which is zero when the intrinsic
    difference Δ̌ = 0 (e.g. two symmetric models, or squared loss, eq. 5.14). The defensive
    mixture ``mix`` (default ε = 0.1) keeps ε·p(x) on every instance, so the estimates stay
    consistent for the whole pool.

    Variants that need no predictive distribution (Sec. 5.2.2): ``active_0`` q ∝ (f₁ − f₂)²
    (for classifiers 1[f₁ ≠ f₂]); ``active_inf`` q ∝ |f₁ − f₂|; both mixed with p like q*.
    ``active_neq``: uniform on disagreements and zero elsewhere — the estimator must then be
    rescaled by the disagreement mass (:func:`activeeval.compare` does); ``active_risk``: the
    average of the single-model optimal distributions; ``passive``: q = p; ``active_uniC``:
    q* ignoring costs; ``active_lambda``: q ∝ p·λ^(-1/2).
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
    preds = [pr.point_prediction() for pr in preds_in]
    mask = np.zeros(m, dtype=bool)
    for f in preds:
        mask |= meas.weight_can_be_positive(f)
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
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if method in ("active_0", "active_inf", "active_neq"):
        if k != 2:
            raise ShapeError(f"method: {method!r} compares exactly two models, got {k}.")
        fa, fb = preds
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
    q = np.zeros(m)
    for i, j in pairs:
        a = np.maximum(_pair_moment(meas, mixture, preds, p, i, j, fast), 0.0)
        score = p * np.sqrt(a if lam is None or method == "active_uniC" else a / lam)
        total = score.sum()
        q += score / total if total > 0 else p
    q /= len(pairs)  # eq. 5.16
    return _defensive(q, p, mask, mix) if mix > 0 else q
