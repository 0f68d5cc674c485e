"""The tempered-model score interval: honest intervals when the model's probabilities are wrong.

The default's standard error is estimated from the labels, so an overconfident model's
campaign that misses its unexpected errors reports a low estimate with a small standard error.
The score interval instead takes the estimator's variance from the pool, under a one-parameter
family standing in for the true p(y | x): the model's logits times a, p_a(y | x) ∝ p(y | x)^a,
for each a on :data:`GRID`. For each member it computes the value G_a (eq. 4.21 under p_a), the
finite-population variance V_a at the campaign's distinct labels, the spread S_a of the pool's
own value and the labels' log-likelihood (a :class:`~.inference.ScoreCurve`). The reported
interval joins the design-based one (logit or Wald) with every θ that some plausible member
does not reject (|Ĝ − θ| ≤ z·√V_a and |θ − G_a| ≤ z·√S_a). Not computed for the thesis
estimator, batch-adaptive campaigns, comparisons, mixtures, ranked pools and a census; pools
above :data:`MAX_POOL` are summarized on a fixed subsample.

The derivation, the formulas for V_a and S_a and the measured coverage and width are in the
section "The default: the tempered interval" of the *Intervals* page of the documentation
(``docs/how-it-works/intervals.md``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..measures import Measure
from ..predictive import Categorical, Gaussian, Predictive
from ..sampling import _successive_time
from .inference import ScoreCurve

__all__ = [
    "GRID",
    "MAX_POOL",
    "as_curve",
    "curve_defined",
    "curve_on",
    "pointwise_log_likelihood",
    "score_curve",
    "subsample",
    "tempered",
    "variance_curve",
]

#: The tempering factors a (logits × a): from nearly uniform to 20 times sharper.
GRID: NDArray[np.float64] = np.geomspace(0.05, 20.0, 41)

#: Pools larger than this are summarized on a fixed uniform subsample of this size.
MAX_POOL = 50_000


def tempered(pred: Predictive, a: float) -> Predictive | None:
    """The predictive distribution with its logits times ``a`` (a Categorical: p^a
    renormalized per instance) or its variance divided by ``a`` (a Gaussian); the decision f(x)
    is not part of it (the caller passes the model's). None for other distributions."""
    if isinstance(pred, Categorical):
        member = _Tempering(pred).at(a)
        del member.__dict__["_label_memo"]  # the memo serves one tempering's loop, not a caller
        return member
    if isinstance(pred, Gaussian):
        return Gaussian(pred.mean, pred.var / a)
    return None


class _Tempering:
    """A Categorical's log-probabilities shifted once by their row maximum, so each member
    p^a is one exp and one row sum (a > 0 keeps the maximum's place), and built like
    :meth:`Categorical.take` without re-validating rows that sum to one by construction."""

    def __init__(self, pred: Categorical) -> None:
        self.pred = pred
        logp = np.log(np.clip(pred.proba, 1e-300, 1.0))
        self.shifted = logp - logp.max(axis=1, keepdims=True)
        #: The last labels looked up by a member and their columns, shared by the members
        #: (each is asked the same decisions' columns: one lookup, not one per member). Kept
        #: by identity: the members serve a loop over the grid with one decisions array,
        #: never changed in place there (:func:`tempered` gives a member without it).
        self.memo: list[Any] = [None, None]

    def at(self, a: float) -> Categorical:
        out = np.exp(self.shifted * a)
        if out.shape[1] == 2:  # the row sums numpy's reduction gives, 30 times faster
            out /= (out[:, 0] + out[:, 1])[:, None]
        else:
            out /= out.sum(axis=1, keepdims=True)
        member = object.__new__(Categorical)
        member.proba = out
        member.labels, member._order, member._sorted = (
            self.pred.labels, self.pred._order, self.pred._sorted
        )  # fmt: skip
        member.__dict__["_label_memo"] = self.memo
        return member


def pointwise_log_likelihood(pred: Predictive, y: NDArray[Any]) -> NDArray[np.float64]:
    """log p_a(y_i | x_i), shape (instances, len(:data:`GRID`)), for the instances of
    ``pred`` with labels ``y``: a·log p(y | x) − log Σ_k p(k | x)^a for a Categorical, the
    normal log-density with variance var/a for a Gaussian."""
    if isinstance(pred, Categorical):
        logp = np.log(np.clip(pred.proba, 1e-300, 1.0))
        own = logp[np.arange(logp.shape[0]), pred.label_index(y)]
        scaled = logp[:, None, :] * GRID[None, :, None]
        top = scaled.max(axis=2)
        norm = top + np.log(np.exp(scaled - top[..., None]).sum(axis=2))
        return np.asarray(own[:, None] * GRID[None, :] - norm, dtype=float)
    assert isinstance(pred, Gaussian)
    r2 = (np.asarray(y, dtype=float) - pred.mean) ** 2 / pred.var
    return np.asarray(
        0.5 * np.log(GRID[None, :] / (2 * np.pi * pred.var[:, None]))
        - 0.5 * GRID[None, :] * r2[:, None],
        dtype=float,
    )


def score_curve(
    pred: Predictive,
    meas: Measure,
    f: NDArray[Any] | None,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    units: NDArray[np.intp],
    labels: NDArray[Any],
) -> ScoreCurve | None:
    """(G_a, V_a) over :data:`GRID` for a static campaign that labeled the distinct pool
    instances ``units`` (with ``labels``) by draws from ``q``, the model's decisions being ``f``
    (None: ``pred``'s point prediction, taken only where the curve looks), and the labels'
    log-likelihood under each member — of the labeled instances with p > 0 only, so that a
    group's members are judged by the group's labels (docs/how-it-works/intervals.md); None
    where the family is not defined (same page), a Gaussian has a zero variance, or the
    campaign labeled every instance q can draw."""
    n_labels = int(units.shape[0])
    if not curve_defined(pred, n_labels):
        return None
    if int((q > 0).sum()) <= n_labels:
        return None
    values, variances, spreads = variance_curve(pred, meas, f, q, p, n_labels)
    # The members are judged by the labels of the instances whose value is estimated (p > 0):
    # a group's by the group's own, as the model may err there otherwise than overall.
    inside = p[units] > 0
    loglik = pointwise_log_likelihood(pred.take(units[inside]), labels[inside]).sum(axis=0)
    return as_curve(values, variances, spreads, loglik)


def curve_defined(pred: Predictive, n_labels: int) -> bool:
    """Whether the tempered family is defined for ``pred`` (a Categorical, or a Gaussian
    whose variances are all positive) and there is a label to score."""
    if type(pred) not in (Categorical, Gaussian) or n_labels < 1:
        return False
    return not (isinstance(pred, Gaussian) and not (pred.var > 0).all())


def as_curve(
    values: NDArray[np.float64],
    variances: NDArray[np.float64],
    spreads: NDArray[np.float64],
    loglik: NDArray[np.float64],
) -> ScoreCurve | None:
    """The curve over the members where value, variance and likelihood are all defined;
    None when fewer than two are."""
    ok = np.isfinite(values) & np.isfinite(variances) & np.isfinite(loglik)
    if ok.sum() < 2:
        return None
    return ScoreCurve(values[ok], variances[ok], spreads[ok], loglik[ok])


def variance_curve(
    pred: Predictive,
    meas: Measure,
    f: NDArray[Any] | None,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    n_labels: int,
    grid: NDArray[np.float64] = GRID,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(G_a, V_a, S_a) for each a of ``grid`` (NaN where the measure is undefined under p_a)
    at ``n_labels`` distinct labels drawn from ``q``, fewer than the instances q can draw
    (docs/how-it-works/intervals.md)."""
    t = _successive_time(q, n_labels)  # q is the campaign's, validated
    m = q.shape[0]
    keep = subsample(m)
    pred_k = pred if keep.shape[0] == m else pred.take(keep)
    fk = None if f is None else f[keep]
    return curve_on(pred_k, meas, fk, q[keep], p[keep], m, t, grid)


def subsample(m: int) -> NDArray[np.intp]:
    """The pool rows :func:`variance_curve` sums over: all of them, or above
    :data:`MAX_POOL` a fixed uniform subsample of that many (the same for every call)."""
    if m > MAX_POOL:  # a fixed subsample; sums scale by m/MAX_POOL, the same for every a
        return np.sort(np.random.default_rng(0).choice(m, MAX_POOL, replace=False))
    return np.arange(m)


def curve_on(
    pred_k: Predictive,
    meas: Measure,
    fk: NDArray[Any] | None,
    qk: NDArray[np.float64],
    pk: NDArray[np.float64],
    m: int,
    t: float,
    grid: NDArray[np.float64] = GRID,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`variance_curve` on the rows of :func:`subsample` (the model ``pred_k``, its
    decisions ``fk`` (None: its point prediction), q and p there) of a pool of ``m``, at the
    time ``t`` of the campaign's distinct labels."""
    fk = pred_k.point_prediction() if fk is None else fk
    with np.errstate(over="ignore", divide="ignore"):
        c = np.where(qk > 0, np.exp(-qk * t) / -np.expm1(-qk * t), 0.0)  # (1 − π)/π
    k = qk.shape[0]
    scale = m / k
    dom = meas.weight_can_be_positive(fk)  # the estimator's domain (its Hájek sums)
    cp2 = np.where(dom, c * pk * pk * scale, 0.0)
    pd = np.where(dom, pk, 0.0)
    model_n, model_d = meas.conditional_expectations(pred_k, fk)
    values = np.full(grid.shape[0], math.nan)
    variances = np.full(grid.shape[0], math.nan)
    spreads = np.full(grid.shape[0], math.nan)
    p2 = pk * pk * scale
    tempering = _Tempering(pred_k) if isinstance(pred_k, Categorical) else None
    for j, a in enumerate(grid):
        pa = tempering.at(float(a)) if tempering is not None else tempered(pred_k, float(a))
        assert pa is not None
        m_n, m_d = meas.conditional_expectations(pa, fk)
        d = scale * float(pk @ m_d)
        if not d * d > 0:  # undefined under p_a (or so nearly that d² underflows): NaN
            continue
        g = scale * float(pk @ m_n) / d  # eq. 4.21 under p_a
        # Var_a[w(ℓ − G_a) | x] (as assisted._conditional_variance, reusing m_n, m_d)
        second = meas.conditional_second_moment(pa, g, fk)
        s = np.maximum(second - (m_n - g * m_d) ** 2, 0.0) / (d * d)
        mu = (m_n - g * m_d) / d
        b = (model_n - g * model_d) / d
        b -= float(pd @ b) / float(pd.sum())  # the Hájek form centres it (0 only at a = 1)
        bb = float(cp2 @ (b * b))
        lam = min(max(float(cp2 @ (mu * b)) / bb, 0.0), 1.0) if bb > 0 else 0.0
        values[j] = g
        variances[j] = float(cp2 @ (s + (mu - lam * b) ** 2))
        spreads[j] = float(p2 @ s)
        if k < m:  # G_a itself is a subsample's estimate: its sampling variance joins S_a
            spreads[j] += (1.0 - k / m) / k * float(np.mean((m * pk * mu) ** 2))
    return values, variances, spreads
