"""``method="stratified"``, the baseline of Bennett & Carvalho (2010): equal-count strata on
the model's confidence, labels allocated to strata in batches in proportion to N_h·σ̂_h
(Neyman), σ̂_h re-estimated as labels arrive, sampling without replacement within strata."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    pool_distribution,
)
from ..acquisition import (
    _budget_room,
    _label_check,
    _LabelBook,
)
from ..errors import (
    ShapeError,
    UnknownOptionError,
)
from ..estimators.inference import (
    Estimate,
)
from ..measures import Measure
from ..predictive import (
    Categorical,
    Gaussian,
    Mixture,
    Predictive,
)
from ..results import EvaluationResult
from .steps import Oracle, _ask


def confidence_score(predictive: Predictive, measure: Measure) -> NDArray[np.float64]:
    """The stratification variable: p(y = pos | x) for F-measures, the probability of the
    predicted class for other classification measures, the predictive variance for
    regression."""
    if isinstance(predictive, Mixture):
        collapsed = predictive.collapse()
        if collapsed is not None:
            predictive = collapsed
    if isinstance(predictive, Categorical):
        pos = getattr(measure, "pos_label", None)
        if pos is not None:
            return predictive.proba[:, predictive.label_index([pos], "pos_label")[0]]
        return predictive.proba[np.arange(predictive.n), predictive.predicted_index]
    if isinstance(predictive, Gaussian):
        return predictive.var
    return np.asarray(measure.conditional_second_moment(predictive, 0.0), dtype=float)


def _equal_count_strata(score: NDArray[np.float64], n_strata: int) -> NDArray[np.intp]:
    order = np.argsort(score, kind="stable")
    strata = np.empty(score.shape[0], dtype=np.intp)
    strata[order] = (np.arange(score.shape[0]) * n_strata) // score.shape[0]
    return strata


def _largest_remainder(share: NDArray[Any], total: int, cap: NDArray[np.intp]) -> Any:
    """Integer allocation of ``total`` proportional to ``share`` without exceeding ``cap``."""
    alloc = np.zeros(share.shape[0], dtype=np.intp)
    left = total
    active = (cap > 0) & (share > 0)
    while left > 0 and active.any():
        s = np.where(active, share, 0.0)
        raw = left * s / s.sum()
        add = np.minimum(np.floor(raw).astype(np.intp), cap - alloc)
        if add.sum() == 0:
            best = np.flatnonzero(active)[np.argmax((raw - np.floor(raw))[active])]
            add[best] = 1
        alloc += add
        left -= int(add.sum())
        active &= alloc < cap
    return alloc


def _check_strata(n_strata: int, m: int, pool_weights: ArrayLike | None) -> None:
    """``method="stratified"`` estimates the plain pool average: refuse weights it would
    ignore, and a stratum count below one."""
    if isinstance(n_strata, bool) or not isinstance(n_strata, (int, np.integer)) or n_strata < 1:
        raise ShapeError(f"n_strata: must be a whole number of strata ≥ 1, got {n_strata!r}.")
    p = pool_distribution(m, pool_weights)
    if pool_weights is not None and np.ptp(p) > 0:
        raise UnknownOptionError(
            "pool_weights: method='stratified' estimates the unweighted pool average and "
            "cannot use test weights; use method='active' (or 'passive') with pool_weights, "
            "or drop pool_weights."
        )


def _stratified(
    predictive: Predictive,
    oracle: Oracle,
    measure: Measure,
    budget: float,
    costs: NDArray[np.float64] | None,
    level: float,
    rng: np.random.Generator,
    n_strata: int,
    bar: Any,
) -> EvaluationResult:
    m = predictive.n
    f = predictive.point_prediction()
    n_strata = int(max(1, min(n_strata, m, budget // 2 if costs is None else n_strata)))
    strata = _equal_count_strata(confidence_score(predictive, measure), n_strata)
    size = np.bincount(strata, minlength=n_strata)
    book = _LabelBook(m)
    unlabeled = [rng.permutation(np.flatnonzero(strata == h)) for h in range(n_strata)]
    taken = np.zeros(n_strata, dtype=np.intp)
    spent = 0.0
    unit_cost = 1.0 if costs is None else float(costs.mean())
    batch = max(n_strata * 2, int(budget / unit_cost) // 10)
    prior, center = _stratum_prior(predictive, measure, f, strata, n_strata)
    sigma = np.sqrt(prior)
    # First batch: two labels per stratum, so that every stratum mean is estimable.
    alloc = np.minimum(size, 2)
    while True:
        if taken.sum() > 0:
            want = batch if costs is not None else min(batch, int(budget - spent))
            if want <= 0:
                break
            alloc = _largest_remainder(size * sigma, want, size - taken)
        if alloc.sum() == 0:
            break
        picks = np.concatenate(
            [unlabeled[h][taken[h] : taken[h] + alloc[h]] for h in range(n_strata)]
        )
        picks = rng.permutation(picks)
        price = np.ones(picks.shape[0]) if costs is None else costs[picks]
        affordable = np.cumsum(price) <= _budget_room(budget, spent)
        picks = picks[affordable]
        if picks.size == 0:
            break
        _ask(oracle, _label_check(predictive), book, picks)
        spent += float(price[affordable].sum())
        bar.update(picks.size if costs is None else float(price[affordable].sum()))
        taken += np.bincount(strata[picks], minlength=n_strata)
        sigma = _stratum_sd(book, strata, measure, f, prior, center)
        if not affordable.all():
            break
    idx, y = book.acquired()
    est = _stratified_estimate(measure, f[idx], y, strata[idx], size, level, idx.shape[0])
    share = (size / m)[strata[idx]] / np.maximum(taken[strata[idx]], 1)
    return EvaluationResult(
        estimate=est.estimate,
        stderr=est.stderr,
        ci=est.confidence_interval(level) if not math.isnan(est.estimate) else (math.nan,) * 2,
        level=level,
        n_labels=idx.shape[0],
        n_draws=idx.shape[0],
        cost=spent,
        budget=budget,
        method="stratified",
        measure=measure.name,
        indices=idx,
        q=share,
        labels=y,
        inference=est,
    )


#: Pseudo-labels per stratum given to the model's own within-stratum variance when labels
#: update the Neyman allocation. Measured on a simulated pool (n = 200, 10 strata, 400 runs):
#: purely label-driven allocation biases the error-rate estimate by -0.011 (strata whose first
#: labels show no error stop being sampled), 20 pseudo-labels by -0.003 with the lowest MAE.
STRATUM_PRIOR_LABELS = 20.0


def _stratum_prior(
    predictive: Predictive, measure: Measure, f: NDArray[Any], strata: NDArray[np.intp], k: int
) -> tuple[NDArray[np.float64], float]:
    """Within-stratum variance of z = w(ℓ − Ǧ) under the model's predictive distribution."""
    c = measure.intrinsic_value(predictive, f)
    c = 0.5 if math.isnan(c) else c
    second = measure.conditional_second_moment(predictive, c, f)  # E[z² | x]
    wl, w = measure.conditional_expectations(predictive, f)
    first = wl - c * w  # E[z | x]
    cnt = np.maximum(np.bincount(strata, minlength=k), 1)
    mean1 = np.bincount(strata, weights=first, minlength=k) / cnt
    var = np.bincount(strata, weights=second, minlength=k) / cnt - mean1**2
    return np.maximum(var, 1e-12), c


def _stratum_sd(
    book: _LabelBook,
    strata: NDArray[np.intp],
    measure: Measure,
    f: NDArray[Any],
    prior: NDArray[np.float64],
    center: float,
) -> NDArray[np.float64]:
    """Per-stratum s.d. of z = w(ℓ − Ǧ): the labels' within-stratum sum of squares pooled with
    ``STRATUM_PRIOR_LABELS`` pseudo-labels at the model's variance ``prior``."""
    idx, y = book.acquired()
    z = measure.weight(f[idx], y) * (measure.loss(f[idx], y) - center)
    h = strata[idx]
    k = prior.shape[0]
    cnt = np.bincount(h, minlength=k).astype(float)
    s1 = np.bincount(h, weights=z, minlength=k)
    s2 = np.bincount(h, weights=z * z, minlength=k)
    # Σz² − (Σz)²/n cancels to a tiny negative number when a stratum's z are all equal.
    within = np.maximum(s2 - s1 * s1 / np.maximum(cnt, 1.0), 0.0)
    k0 = STRATUM_PRIOR_LABELS
    return np.sqrt((within + k0 * prior) / (cnt + k0))


def _stratified_estimate(
    measure: Measure,
    pred: NDArray[Any],
    y: NDArray[Any],
    h: NDArray[np.intp],
    size: NDArray[np.intp],
    level: float,
    n: int,
) -> Estimate:
    """Stratified ratio estimator Σ_h W_h m̄_h(wℓ) / Σ_h W_h m̄_h(w) with its linearized
    variance Σ_h W_h² (1 − n_h/N_h) s_h²(z) / n_h (finite-population correction)."""
    n_strata = size.shape[0]
    weights = size / size.sum()
    w = measure.weight(pred, y)
    wl = w * measure.loss(pred, y)
    cnt = np.bincount(h, minlength=n_strata).astype(float)
    seen = cnt > 0
    mean_wl = np.bincount(h, weights=wl, minlength=n_strata)[seen] / cnt[seen]
    mean_w = np.bincount(h, weights=w, minlength=n_strata)[seen] / cnt[seen]
    den = float(weights[seen] @ mean_w)
    if not den > 0:
        return Estimate(math.nan, math.nan, n, n, 0.0, measure.binary_loss, level, measure.name)
    g = float(weights[seen] @ mean_wl) / den
    z = (wl - g * w) / den
    zs1 = np.bincount(h, weights=z, minlength=n_strata)
    zs2 = np.bincount(h, weights=z * z, minlength=n_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        # A sample variance, ≥ 0; Σz² − (Σz)²/n can round below 0 when z is constant.
        s2 = np.where(
            cnt > 1, np.maximum(zs2 - zs1 * zs1 / np.maximum(cnt, 1), 0.0) / (cnt - 1), 0.0
        )
        fpc = 1.0 - cnt / np.maximum(size, 1)
        var = float(np.sum(np.where(seen, weights**2 * fpc * s2 / np.maximum(cnt, 1), 0.0)))
    # Effective n for binomial intervals: the n that gives the same variance under q = p.
    n_eff = g * (1 - g) / var if 0 < var and 0 < g < 1 else float(n)
    return Estimate(
        estimate=g,
        stderr=math.sqrt(max(var, 0.0)),
        n_draws=n,
        n_labels=n,
        effective_n=float(n_eff),
        binary_loss=measure.binary_loss,
        level=level,
        measure=measure.name,
    )
