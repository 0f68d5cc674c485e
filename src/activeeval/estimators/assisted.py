"""Model-assisted (difference) estimation of generalized risks — beyond the thesis.

The thesis's estimator (eq. 3.31) uses the model only to choose q. Here the model's
conditional expectations m_N(x) = E_model[w ℓ | x], m_D(x) = E_model[w | x], whose pool means
are known without labels, are also a control variate:

    N̂ = λ μ_N + Σ_i v_i (w_i ℓ_i − λ m_N(x_i)) / Σ_i v_i
    D̂ = λ μ_D + Σ_i v_i (w_i − λ m_D(x_i)) / Σ_i v_i           Ĝ = N̂ / D̂,

with λ ∈ [0, 1] tuned on the sample (λ = 0 is the thesis's SNIS estimator, λ = 1 the
difference estimator of survey sampling). Its standard error is a jackknife for unequal
probabilities, ratio measures get a bias correction, comparisons use each model's own
predictive distribution as a control variate, pool features add a smoothed-residual control
variate, and with a static q the distinct labeled instances are treated as a sample without
replacement.

The derivation of each part (the sections "Domain", "Variance", "Standard error", "Ratio
bias", "Comparisons", "Pool features", "Optimal sampling", "Finite pools") and every figure
measured while building it are on the *Model-assisted estimator* page of the documentation
(``docs/how-it-works/model-assisted.md``); the helpers below cite its sections as "the
model-assisted page".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._chunks import row_chunks, weighted_sum
from .._validation import (
    check_costs,
    check_level,
    check_option,
    check_safeguards,
)
from ..errors import (
    ActiveEvalWarning,
    InvalidSamplingDistributionError,
    ShapeError,
    UndefinedEstimateWarning,
)
from ..measures import Measure, get_measure
from ..methods import VARIANCE_METHODS
from ..predictive import Categorical, Mixture, Predictive, as_predictive, check_labels
from ..sampling import (
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    _defensive,
    _from_moment,
    _pool_distribution,
    _successive_time,
    check_distribution,
)
from .inference import (
    Comparison,
    Estimate,
    MultipleComparison,
    _box_least_squares,
    _difference,
    _multiple_from_influence,
    _rounding_zero,
    _wald_p_value,
    _warn_undefined,
    importance_weights,
)
from .smoother import (
    _BATCH,
    DEFAULT_BANDWIDTH,
    _check_bandwidth,
    _smoothed,
    _standardized,
)

__all__ = [
    "AssistedEstimate",
    "assisted_distribution",
    "assisted_estimate",
    "assisted_multiple_comparison",
    "assisted_paired_test",
]


@dataclass(frozen=True)
class _Pool:
    """The model's conditional expectations m_N, m_D over the pool (indexable by pool rows:
    arrays, or :class:`_Expected`) and their p-weighted means μ_N, μ_D."""

    m_num: Any
    m_den: Any
    mu_num: float
    mu_den: float


class _Expected:
    """E[w ℓ | x] (``which`` 0) or E[w | x] (1) of the measure under ``model`` with the
    decisions of ``decider``, computed at the pool rows asked for (``self[rows]``), so that no
    array the size of the pool is kept (equal to indexing the whole pool's: the expectations
    are per instance)."""

    def __init__(self, measure: Measure, model: Predictive, decider: Predictive, which: int):
        self.measure, self.model, self.decider, self.which = measure, model, decider, which

    def __getitem__(self, rows: Any) -> NDArray[np.float64]:
        f = self.decider.take(rows).point_prediction()
        return self.measure.conditional_expectations(self.model.take(rows), f)[self.which]


class _Decisions:
    """A model's decisions f(x) (its point prediction) at the pool rows asked for
    (``self[rows]``), without the array over the whole pool."""

    def __init__(self, model: Predictive) -> None:
        self.model = model

    def __getitem__(self, rows: Any) -> NDArray[Any]:
        return self.model.take(rows).point_prediction()


def _pool_moments(
    measure: Measure, predictive: Predictive, decider: Predictive, p: NDArray[np.float64]
) -> _Pool:
    """The control variate's pool moments: ``predictive``'s expectations of the measure with
    ``decider``'s decisions f(x) (its point prediction), their means under ``p`` summed a
    chunk of the pool at a time."""
    ((mu_num, mu_den),) = _pool_means(measure, predictive, decider, [p])
    return _Pool(
        _Expected(measure, predictive, decider, 0),
        _Expected(measure, predictive, decider, 1),
        mu_num,
        mu_den,
    )


def _pool_means(
    measure: Measure, predictive: Any, decider: Any, ps: Sequence[Any]
) -> list[tuple[float, float]]:
    """(μ_N, μ_D) of :func:`_pool_moments` under each test distribution of ``ps`` (arrays, or
    anything indexed by a chunk's rows), in one pass over the pool's chunks."""
    sums = [[0.0, 0.0] for _ in ps]
    for rows in row_chunks(predictive.n):
        m_num, m_den = measure.conditional_expectations(
            predictive._chunk(rows), decider._chunk(rows).point_prediction()
        )
        add_means(sums, ps, rows, m_num, m_den)
    return [(a, b) for a, b in sums]


def add_means(
    sums: list[list[float]], ps: Sequence[Any], rows: slice, m_num: NDArray[np.float64],
    m_den: NDArray[np.float64],
) -> None:  # fmt: skip
    """Add a chunk's Σ p·m_N and Σ p·m_D under each test distribution of ``ps`` to ``sums``
    (one [N, D] per distribution): how every pool mean of the control variates is summed,
    chunk after chunk from 0.0."""
    for acc, p in zip(sums, ps, strict=True):
        acc[0] += weighted_sum(p[rows], m_num)
        acc[1] += weighted_sum(p[rows], m_den)


@dataclass(frozen=True, repr=False)
class AssistedEstimate(Estimate):
    """An ``Estimate`` from the model-assisted estimator.

    Adds the control-variate coefficient that was used (0 = the thesis's SNIS estimator),
    whether it is the finite-population form and, with pool features, the coefficient of the
    smoothed residuals. A census (every instance with test mass labeled, or, in ``evaluate``
    and a session, every instance that can move the measure) reports the exact value with
    both coefficients 0: no control variate is used.

    Attributes
    ----------
    estimate, stderr, n_draws, n_labels, effective_n : float or int
        As in ``Estimate``; ``stderr`` is the jackknife's by default.
    binary_loss, level, measure, census, unit_weights, score
        As in ``Estimate``.
    power : float
        The control-variate coefficient λ ∈ [0, 1] (tuned on the sample unless fixed).
    finite : bool
        True for the finite-population form (``pool_q``): one row per distinct labeled
        instance, weights p/π and the finite-population factor 1 − π in the variance.
    feature_power : float or None
        The coefficient λ_s ∈ [0, 1] of the smoothed residuals with pool features; None
        without features.

    See Also
    --------
    activeeval.estimators.assisted.assisted_estimate : Compute one.
    activeeval.estimators.inference.Estimate : The base result and its ``confidence_interval``.

    Notes
    -----
    See the *Model-assisted estimator* page of the documentation
    (``docs/how-it-works/model-assisted.md``), sections "Pool features" and "Finite pools".

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.sampling import optimal_distribution, draw
    >>> from activeeval.estimators.assisted import assisted_estimate
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> proba = np.column_stack([1 - p1, p1])
    >>> y = (rng.random(200) < p1).astype(int)
    >>> q = optimal_distribution(proba, "error_rate")
    >>> idx = draw(q, 60, random_state=0)
    >>> print(assisted_estimate("error_rate", proba, idx, y[idx], pool_q=q))
    AssistedEstimate(measure='error_rate', estimate=0.2305, stderr=0.04375,
        ci=(0.1447, 0.3162), level=0.95,
        n_draws=60, n_labels=54, effective_n=52.97, census=False,
        power=1, finite=True, feature_power=None)
    """

    power: float = 1.0
    finite: bool = False
    feature_power: float | None = None

    @property
    def _rows(self) -> int:
        return self.n_labels if self.finite else self.n_draws

    _REPR_LINES: ClassVar[tuple[tuple[str, ...], ...]] = (
        *Estimate._REPR_LINES,
        ("power", "finite", "feature_power"),
    )


def _assisted_parts(
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    coef: float,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Ĝ for a given λ, and per-draw a = w(ℓ − Ĝ), b = m_N − Ĝ m_D and the denominator D̂;
    all NaN when no row has test mass (Σ v = 0: nothing to estimate from)."""
    sv = v.sum()
    if not sv > 0:
        return math.nan, np.full(v.shape, math.nan), np.full(v.shape, math.nan), np.asarray(0.0)
    num = coef * pool.mu_num + float(v @ (wl - coef * mn)) / sv
    den = coef * pool.mu_den + float(v @ (w - coef * md)) / sv
    g = num / den if den > 0 else math.nan
    return g, wl - g * w, mn - g * md, np.asarray(den)


def _influence(v: NDArray[np.float64], z: NDArray[np.float64], den: float) -> NDArray[np.float64]:
    """u_i = v_i (z_i − z̄) / (D̂ Σ v) — the linearized influence of Ĝ (model-assisted page)."""
    sv = v.sum()
    zbar = float(v @ z) / sv
    return v * (z - zbar) / (den * sv)


def _denominator_terms(
    w: NDArray[np.float64], md: NDArray[np.float64], coef: float
) -> NDArray[np.float64] | None:
    """The rows' terms w − λ m_D of D̂, or None when they are all equal: then D̂ is a constant
    and Ĝ linear in one weighted mean (means of losses, rankings), with no ratio bias and
    no curvature for the jackknife to add; also None without rows."""
    rd = w - coef * md
    return rd if rd.size and np.any(rd != rd[0]) else None


def _jackknife_influence(
    v: NDArray[np.float64],
    terms: tuple[Any, ...],
    coef: float,
    linear: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
) -> NDArray[np.float64] | None:
    """Per-row influences of Ĝ for its standard error (model-assisted page, "Standard error").

    Means of losses (w − λ m_D constant over the rows): Ĝ is linear in the weighted mean, and
    ``linear`` (:func:`_influence`) is returned. Ratio measures: Berger & Skinner's (2005)
    jackknife influences ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎), Ĝ₍ᵢ₎ the estimate without row i at the
    same λ and weights, centred for draws with replacement (a design with ``fpc`` centres
    itself). For a linear statistic ε_i equals the linearized influence exactly; for N̂/D̂ it
    keeps the curvature the linearization drops. None when the jackknife does not apply:
    Ĝ undefined, or deleting some row would leave D̂₍ᵢ₎ ≤ D̂/2 (that row carries half the
    denominator, e.g. the only labeled positive of an F1, and Ĝ₍ᵢ₎ is not a small
    perturbation: ε can then be arbitrarily large); the caller uses ``linear`` instead."""
    wl, w, mn, md, pool = terms
    rd = _denominator_terms(w, md, coef)
    if rd is None:
        return linear
    sv = v.sum()
    xn = v * (wl - coef * mn)
    xd = v * rd
    rest = sv - v
    den = coef * pool.mu_den + float(xd.sum()) / sv if sv > 0 else math.nan
    if not den > 0:
        return None
    num = coef * pool.mu_num + float(xn.sum()) / sv
    with np.errstate(divide="ignore", invalid="ignore"):
        den_i = coef * pool.mu_den + (xd.sum() - xd) / rest
        g_i = (coef * pool.mu_num + (xn.sum() - xn) / rest) / den_i
        eps = (num / den - g_i) * rest / sv
    if not np.all((den_i > 0.5 * den) & np.isfinite(eps)):
        return None
    return eps - eps.mean() if fpc is None else eps


def _tuned_power(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    fpc: NDArray[np.float64] | None = None,
) -> float:
    """λ* = Σ α β / Σ β², α = v(a − ā), β = v(b − b̄) (λ* = Σ v²(a − ā)(b − b̄) / Σ v²(b − b̄)²
    for draws with replacement), clipped to [0, 1]: the λ that minimizes the sandwich variance
    of Σ v(z − z̄), z = a − λ b, with Ĝ and D̂ held fixed. For a without-replacement sample
    (``fpc`` = 1 − π per row) α and β go through the same finite-population transform as the
    influences (:func:`_design_influence`). ``a`` and ``b`` are (n,) or (n, P): with P columns
    (pairwise differences of models) each column is centred on its own v-weighted mean and the
    sums run over all columns."""
    return float(_tuned_powers(v, a, [b], fpc)[0])


def _tuned_powers(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    bs: Sequence[NDArray[np.float64]],
    fpc: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """:func:`_tuned_power` for several control variates z = a − Σ_s λ_s b_s: the λ ∈ [0, 1]^S
    minimizing Σ (α − Σ_s λ_s β_s)² — a least-squares regression of α on the β_s with box
    constraints (bounded-variable least squares; for one control variate the clipped ratio).
    A control variate whose β vanishes (e.g. equal for every model of a difference) gets
    λ = 0."""
    return _box_least_squares(*_power_regression(v, a, bs, fpc))


def _power_regression(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    bs: Sequence[NDArray[np.float64]],
    fpc: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The rows of :func:`_tuned_powers`' regression: α (n, P) and β (n, P, S), each column
    centred on its v-weighted mean and through the design's transform; ``a`` and the ``bs``
    are (n,) or (n, P)."""
    n = v.shape[0]
    sv = v.sum()
    vv = v if a.ndim == 1 else v[:, None]

    def centred(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return _design_influence(vv * (x - (v @ x) / sv), fpc).reshape(n, -1)

    return centred(a), np.stack([centred(b) for b in bs], axis=-1)


def _refit_jackknife(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[Any]],
    coef: NDArray[np.float64],
    rows: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    fpc: NDArray[np.float64] | None,
    dropped: Sequence[Any] | None = None,
) -> NDArray[np.float64] | None:
    """Jackknife influences (n, k) of every model's estimate with the coefficients re-tuned
    without the deleted row (model-assisted page, "Comparisons"): ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎)
    as in :func:`_jackknife_influence`, but Ĝ₍ᵢ₎ at λ₍ᵢ₎, the regression of the final round
    (``rows`` = α, β of :func:`_power_regression`) refitted without row i's terms — one
    step: the coefficients at a bound stay there, the others are re-solved and clipped to
    [0, 1]. Fitting λ on the sample whose standard error it then minimizes makes that
    standard error too small exactly where λ overfits; deleting a row with its influence
    on λ puts that variability back. ``rows`` None (a given ``power``): λ stays. A source
    whose control variate depends on the labels (the smoothed residuals, model-assisted page
    "Pool features") has per source and model in ``dropped`` the arrays of
    :func:`_smoother_source` for deleting row i from it too. None where the plain jackknife
    does not apply (a row carrying half a denominator)."""
    n, s_count = v.shape[0], coef.shape[0]
    coef_i = np.tile(coef, (n, 1))
    free = np.flatnonzero((coef > 0.0) & (coef < 1.0))
    if rows is not None and free.size:
        alpha, beta = rows
        fixed = np.setdiff1d(np.arange(s_count), free)
        own = np.einsum("ips,ipt->ist", beta, beta)  # row i's share of the Gram matrix
        gram = own.sum(axis=0)[None] - own
        cross = np.einsum("ips,ip->s", beta, alpha)[None] - np.einsum("ips,ip->is", beta, alpha)
        rhs = cross[:, free] - gram[:, free][:, :, fixed] @ coef[fixed]
        step = np.einsum("ist,it->is", np.linalg.pinv(gram[:, free][:, :, free]), rhs)
        coef_i[:, free] = np.clip(step, 0.0, 1.0)
    drops = [None] * s_count if dropped is None else list(dropped)
    sv = v.sum()
    rest = sv - v
    if not np.all(rest > 0):
        return None
    eps = np.empty((n, len(by_source[0])))
    for j, (wl, w, _mn, _md, _pool) in enumerate(by_source[0]):
        mn = np.stack([src[j][2] for src in by_source], axis=1)
        md = np.stack([src[j][3] for src in by_source], axis=1)
        mu_n = np.array([src[j][4].mu_num for src in by_source])
        mu_d = np.array([src[j][4].mu_den for src in by_source])
        tn, td = v @ mn, v @ md
        num = coef @ mu_n + (v @ wl - coef @ tn) / sv
        den = coef @ mu_d + (v @ w - coef @ td) / sv
        # Without row i: the pool means and Σ_{j≠i} v_j m_j of every source, (n, S).
        mu_ni, mu_di = np.tile(mu_n, (n, 1)), np.tile(mu_d, (n, 1))
        tn_i, td_i = tn[None] - v[:, None] * mn, td[None] - v[:, None] * md
        for src, drop in enumerate(drops):
            if drop is not None:
                mu_ni[:, src], mu_di[:, src], tn_i[:, src], td_i[:, src] = drop[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            num_i = np.sum(coef_i * mu_ni, 1) + (v @ wl - v * wl - np.sum(coef_i * tn_i, 1)) / rest
            den_i = np.sum(coef_i * mu_di, 1) + (v @ w - v * w - np.sum(coef_i * td_i, 1)) / rest
            eps[:, j] = (num / den - num_i / den_i) * rest / sv
        if not (den > 0 and np.all(den_i > 0.5 * den) and np.all(np.isfinite(eps[:, j]))):
            return None
    return eps - eps.mean(axis=0) if fpc is None else eps


def _ratio_bias(
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    coef: float,
    g: float,
    den: float,
    fpc: NDArray[np.float64] | None,
) -> float:
    """Estimated second-order bias of Ĝ (model-assisted page, "Ratio bias"). Ĝ = X/Y exactly,
    with X = Σ v (λμ_N + w ℓ − λ m_N) and Y = Σ v (λμ_D + w − λ m_D) (multiply N̂ and D̂ by
    Σ v), a ratio of two linear estimators; its bias is (G·Var(Y) − Cov(X, Y)) / E[Y]²,
    estimated with Var and Cov from the design influences of X and Y (as the standard error)
    and returned as (Ĝ·V̂ − Ĉ)/Y² in the scale of Σ v = 1. Zero when w and m_D are constant
    over the rows (means of losses, rankings): there only the self-normalization's own O(1/n)
    term remains, measured negligible (model-assisted page)."""
    rd = _denominator_terms(w, md, coef)
    if rd is None:
        return 0.0
    sv = v.sum()
    ty = v * (coef * pool.mu_den + rd) / sv
    tx = v * (coef * pool.mu_num + wl - coef * mn) / sv
    if fpc is None:  # i.i.d. draws: centre on the mean (a design with fpc centres itself)
        ty, tx = ty - ty.mean(), tx - tx.mean()
    uy = _design_influence(ty, fpc)
    ux = _design_influence(tx, fpc)
    return float((g * (uy @ uy) - ux @ uy) / den**2)


def _debiased(
    g: float,
    v: NDArray[np.float64],
    terms: tuple[Any, ...],
    coef: float,
    den: float,
    fpc: NDArray[np.float64] | None,
    binary_loss: bool,
) -> float:
    """Ĝ minus its estimated ratio bias (:func:`_ratio_bias`). For a 0/1 loss the correction
    does not carry Ĝ out of [0, 1] (G is a w-weighted mean of losses, so it cannot leave
    their range); an estimate already outside (the difference estimator's residual term can
    do that) is left where it is, not clipped, so that it stays unbiased."""
    if math.isnan(g):
        return g
    wl, w, mn, md, pool = terms
    out = g - _ratio_bias(v, wl, w, mn, md, pool, coef, g, den, fpc)
    return min(max(out, min(g, 0.0)), max(g, 1.0)) if binary_loss else out


def _design_influence(
    u: NDArray[np.float64], fpc: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Influences ũ with Σ ũ² (and Σ ũ_j ũ_k) the variance (covariance) estimate of the design.

    With replacement (``fpc`` None) the sandwich Σ u² of Lemma 3.4: ũ = u. For the distinct
    instances of a successive sample (one row each, u_i = y_i/π_i with y_i the instance's
    linearized term), Hájek's variance approximation for high-entropy fixed-size designs
    (Hájek, 1964; Deville & Tillé, 2005, eq. 8 without their n/(n − 1), matching Lemma 3.4's
    plug-in convention): V̂ = Σ c_i (u_i − Â)², c_i = 1 − π_i, Â = Σ c u / Σ c. Instances
    labeled with certainty (π = 1) contribute nothing; with all π = 1 (a census) V̂ = 0.
    For a simple random sample (π = n/m) it is the textbook (1 − n/m)·Σ(u − ū)².
    """
    if fpc is None:
        return u
    sc = float(fpc.sum())
    if not sc > 0:
        return np.zeros_like(u)
    centred = u - (fpc @ u) / sc
    root = np.sqrt(fpc)
    return (root if u.ndim == 1 else root[:, None]) * centred


def _successive_rows(
    draws: NDArray[np.intp], q: NDArray[np.float64], p: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """The rows of the finite-population estimator for draws i.i.d. from the pool
    distribution ``q`` (model-assisted page, "Finite pools"): the position in ``draws`` of each
    distinct instance's first draw, its weight v = p/π and c = 1 − π, with π the successive
    sample's inclusion probabilities (:func:`~activeeval.sampling.inclusion_probabilities`)."""
    units, first = np.unique(draws, return_index=True)
    t = _successive_time(q, units.shape[0])  # q validated by the caller
    return _rows_at_time(first, q[units], p[units], t)


def _rows_at_time(
    first: NDArray[np.intp], q_units: NDArray[np.float64], p_units: NDArray[np.float64], t: float
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_successive_rows` from the distinct instances' first draws, their q and p, and
    the time t of q at their number (a session's pool summary gives t without q)."""
    pi = np.ones(first.shape[0]) if math.isinf(t) else -np.expm1(-q_units * t)
    return first, p_units / pi, 1.0 - pi


def _smoother_source(
    z: NDArray[np.float64],
    parts: Sequence[_Terms],
    rows: NDArray[np.intp],
    p: NDArray[np.float64],
    bandwidth: float,
    v: NDArray[np.float64] | None = None,
    groups: NDArray[np.intp] | None = None,
) -> tuple[list[_Terms], list[Any] | None]:
    """The control-variate source of the smoothed residuals (model-assisted page, "Pool
    features"): for each model's terms (w·ℓ, w, m_N, m_D, pool) at the pool instances
    ``rows``, the smoother of its residuals w·ℓ − m_N and w − m_D at the rows, within the
    ``groups`` of :func:`_prediction_groups`, with pool means
    under ``p`` (the test distribution on the domain). Repeated rows of one instance (draws
    with replacement) are one labeled unit. With the rows' weights ``v`` (the
    finite-population form only: distinct rows), also per model the jackknife's arrays for
    deleting row i from the sample and the smoother (:func:`_smoothed`): the pool means of
    s₍ᵢ₎ for m_N and m_D and Σ_{j ≠ i} v_j s₍ᵢ₎ at the rows, each (n,); else None (s held
    fixed)."""
    units, first, inv = np.unique(rows, return_index=True, return_inverse=True)
    resid = np.column_stack(
        [c for wl, w, mn, md, _ in parts for c in ((wl - mn)[first], (w - md)[first])]
    )
    vu = None if v is None else v[first]
    batch = _BATCH.get()
    hit = None if batch is None else batch.smooth(z, units, resid, p, bandwidth, vu, groups)
    mean, at, dropped = hit or _smoothed(z, units, resid, p, bandwidth, vu, groups)
    empty = np.empty(0)
    terms: list[_Terms] = [
        (
            wl,
            w,
            at[inv, 2 * j],
            at[inv, 2 * j + 1],
            _Pool(empty, empty, float(mean[2 * j]), float(mean[2 * j + 1])),
        )
        for j, (wl, w, *_rest) in enumerate(parts)
    ]
    if dropped is None:
        return terms, None
    mu_i, t_i = dropped[0][inv], dropped[1][inv]
    return terms, [
        (mu_i[:, 2 * j], mu_i[:, 2 * j + 1], t_i[:, 2 * j], t_i[:, 2 * j + 1])
        for j in range(len(parts))
    ]


def _with_smoother(
    z: NDArray[np.float64] | None,
    by_source: Sequence[Sequence[_Terms]],
    reference: Sequence[_Terms],
    rows: NDArray[np.intp],
    p: NDArray[np.float64],
    bandwidth: float,
    v: NDArray[np.float64],
    groups: NDArray[np.intp] | None,
    fpc: NDArray[np.float64] | None,
) -> tuple[list[Sequence[_Terms]], list[Any] | None]:
    """The control-variate sources with the smoothed residuals of ``reference`` (the terms of
    one model of p(y | x), per compared model) appended as the last source, and the
    jackknife's deletion arrays per source (None for the model sources; model-assisted page,
    "Pool features"; for the smoother too with draws as rows, ``fpc`` None: s held fixed);
    the sources unchanged and None without usable features (none given, or every column
    constant)."""
    if z is None or z.shape[1] == 0:
        return list(by_source), None
    vu = None if fpc is None else v
    smooth, dropped = _smoother_source(z, reference, rows, p, bandwidth, vu, groups)
    return [*by_source, smooth], [None] * len(by_source) + [dropped]


def _collapses(pr: Predictive) -> bool:
    """Whether ``pr`` is a mixture of classifiers (a Categorical in disguise)."""
    return isinstance(pr, Mixture) and pr.collapse() is not None


def _prediction_groups(
    preds: Sequence[Predictive], predictions: Sequence[NDArray[Any]]
) -> NDArray[np.intp] | None:
    """The smoother's groups (model-assisted page, "Pool features"): a labeled instance smooths
    only instances with the same point predictions — for classifiers the tuple of the
    models' predicted classes, for continuous predictions which models predict equal values
    (for one model, one group: None). A residual that is zero whatever the label (a
    difference where the models agree; an F-measure's w·ℓ − m_N on predicted negatives) then
    stays zero, and a neighbour across a decision boundary, whose loss is the opposite
    event, does not count. A mixture of classifiers counts as a classifier."""
    if all(isinstance(pr, Categorical) or _collapses(pr) for pr in preds):
        keys = np.column_stack([np.unique(f, return_inverse=True)[1] for f in predictions])
    else:
        k = len(predictions)
        keys = np.column_stack(
            [predictions[a] == predictions[b] for a in range(k) for b in range(a + 1, k)]
            or [np.zeros(predictions[0].shape[0], dtype=bool)]
        ).astype(np.intp)
    # One code per distinct row of keys. Rows of small codes are numbers in a mixed radix
    # (a 1-D unique; the row-wise unique, axis=0, sorts rows and is far slower on big pools).
    radix = [int(r) + 1 for r in keys.max(axis=0, initial=0)]
    if math.prod(radix) < 2**62:  # exact in int64
        place = np.cumprod([1, *radix[:0:-1]], dtype=np.int64)[::-1]
        codes = np.unique(keys.astype(np.int64) @ place, return_inverse=True)[1].reshape(-1)
    else:
        codes = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    return codes if codes.max(initial=0) > 0 else None


def _check_power(power: float) -> float:
    if not 0.0 <= float(power) <= 1.0:
        raise ShapeError(f"power: the control-variate coefficient must lie in [0, 1], got {power}.")
    return float(power)


def _check_variance(variance: str) -> bool:
    """True for the jackknife standard error (model-assisted page, "Standard error")."""
    return check_option(variance, VARIANCE_METHODS, "variance") == "jackknife"


def _check_draws(indices: ArrayLike, labels: ArrayLike, pred: Predictive) -> tuple[Any, Any]:
    """Pool indices of the draws (integers in [0, m)) and their labels, equal length, n ≥ 1,
    the labels in the model's label space (finite numbers for a regression model)."""
    idx = np.asarray(indices)
    y = np.asarray(labels)
    m = pred.n
    if idx.ndim != 1 or y.shape != idx.shape or idx.size == 0:
        raise ShapeError("indices, labels: need two non-empty 1-d arrays of equal length.")
    if not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= m:
        raise ShapeError(f"indices: must be integer pool indices in [0, {m}).")
    return idx, check_labels(pred, y)


def assisted_estimate(
    measure: Measure | str,
    predictive: Any,
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    power: float | None = None,
    level: float = 0.95,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = True,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> AssistedEstimate:
    """Model-assisted estimate of a generalized risk from labeled draws.

    The difference estimator Ĝ = N̂ / D̂ with the model's conditional expectations as a
    control variate (coefficient tuned on the sample), a jackknife standard error and, for
    ratio measures, a bias correction. See the *Model-assisted estimator* page of the
    documentation (``docs/how-it-works/model-assisted.md``).

    Parameters
    ----------
    measure : Measure or str
        The generalized risk, e.g. ``"error_rate"``, ``"f1"`` or ``FMeasure(beta=2)``.
    predictive : Predictive or (m, K) array
        The model's predictive distribution over the WHOLE pool (the control variate needs
        every instance).
    indices : array-like of shape (n,)
        Pool indices of the draws, in draw order (repeats included).
    labels : array-like of shape (n,)
        True label of each draw.
    q : array-like of shape (n,), optional
        Sampling probability of each draw; None for uniform draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool; uniform by default.
    power : float, optional
        Control-variate coefficient λ ∈ [0, 1]; None tunes it on the sample (power tuning).
    level : float
        Confidence level of the result's ``ci``.
    pos_label : label, optional
        Positive class for F-measures named by string.
    pool_q : array-like of shape (m,), optional
        The whole-pool distribution the draws came from, instead of ``q``. The distinct
        labeled instances are then treated as the finite-population sample they are
        (section "Finite pools"): each counted once with weight p/π, and the variance
        carries the finite-population factor 1 − π. Recommended whenever q is static; it is
        what ``evaluate`` uses.
    bias_correction : bool, default True
        Subtract the ratio estimator's estimated second-order bias (section "Ratio bias").
        It changes only ratio measures (F-measures, precision, recall). False gives the
        plain difference estimator.
    variance : {"jackknife", "linearized"}
        Standard error from Berger & Skinner's jackknife influences (default) or from the
        linearized ones (Lemma 3.4's sandwich; section "Standard error"). The two are
        identical for means of losses without ``features``; with them the linearized one
        holds the smoother fixed and is too small (a review measured coverage 0.88–0.89
        against the jackknife's 0.92 on a simulated pair of 100–200 labels).
    features : array-like of shape (m, d), optional
        The pool's features, numeric. The labeled residuals, kernel-smoothed over them, are a
        second control variate with its own tuned coefficient (section "Pool features"); it
        helps where near neighbours share labels the model gets wrong.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth in standardized feature units.

    Returns
    -------
    AssistedEstimate
        The estimate with its standard error, the coefficients used and whether it is the
        finite-population form.

    Raises
    ------
    ShapeError
        When indices and labels differ in length, an index lies outside the pool, both
        ``q`` and ``pool_q`` are given, or ``power`` lies outside [0, 1].
    InvalidSamplingDistributionError
        When ``pool_q`` is zero at a drawn instance.

    See Also
    --------
    evaluate : Choose q, draw, label and estimate in one call (uses this estimator).
    activeeval.estimators.inference.estimate : The thesis's estimator (eq. 3.31).
    activeeval.estimators.assisted.assisted_distribution : The q this estimator prefers.

    Examples
    --------
    A pool of 200 instances, 60 draws from q*:

    >>> import numpy as np
    >>> from activeeval.sampling import optimal_distribution, draw
    >>> from activeeval.estimators.assisted import assisted_estimate
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> proba = np.column_stack([1 - p1, p1])
    >>> y = (rng.random(200) < p1).astype(int)  # the labels the oracle would give
    >>> q = optimal_distribution(proba, "error_rate")
    >>> idx = draw(q, 60, random_state=0)
    >>> est = assisted_estimate("error_rate", proba, idx, y[idx], pool_q=q)
    >>> print(f"{est.estimate:.3f} ± {est.stderr:.3f} from {est.n_labels} labels")
    0.230 ± 0.044 from 54 labels
    """
    pred = as_predictive(predictive)
    meas = get_measure(measure, pos_label=pos_label).bind(pred)
    lv = check_level(level)
    idx, y = _check_draws(indices, labels, pred)
    p = _pool_distribution(pred.n, pool_weights)
    rows = _rows(idx, q, pool_q, p)
    dom, p_dom = _domain(meas, [pred], p, pool_q)
    pos, v, fpc = _in_domain(dom, idx, rows)
    ir = idx[pos]
    pool = _pool_moments(meas, pred, pred, p_dom)
    jk = _check_variance(variance)
    z = None if features is None else _standardized(features, pred.n)
    h = _check_bandwidth(bandwidth)
    if z is None or z.shape[1] == 0:  # no features, or only constant ones: nothing to smooth
        a = _on_rows(meas, pred, idx, y, pos, v, fpc, pool, power, lv, bias_correction, jk)
        if z is not None:
            a = replace(a, feature_power=0.0)
    else:
        yr = y[pos]
        f_rows = pred.take(ir).point_prediction()
        w = meas.weight(f_rows, yr)
        base = [(w * meas.loss(f_rows, yr), w, pool.m_num[ir], pool.m_den[ir], pool)]
        groups = _prediction_groups([pred], [pred.point_prediction()])
        by_source, dropped = _with_smoother(z, [base], base, ir, p_dom, h, v, groups, fpc)
        a = _estimate_from_sources(
            v, by_source, power, idx, lv, meas, fpc, bias_correction, jk, dropped
        )
    if fpc is not None and not np.any(fpc > 0) and np.isin(np.flatnonzero(p_dom > 0), ir).all():
        # Every instance with test mass labeled: v = p, so Ĝ is the exact pool value (the
        # control variate cancels) with stderr 0 — a point interval, as evaluate's census.
        a = _as_assisted_census(a, features)
    return a


def _on_rows(
    meas: Measure,
    pred: Any,
    idx: NDArray[np.intp],
    y: NDArray[Any],
    pos: NDArray[np.intp],
    v: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
    pool: _Pool,
    power: float | None,
    level: float,
    bias_correction: bool = True,
    jackknife: bool = True,
) -> AssistedEstimate:
    """The estimate without features from its rows (positions ``pos`` in the draws ``idx``,
    their weights v and 1 − π) and the control variate's pool moments: what
    :func:`assisted_estimate` and a session's estimate from its pool summary
    (:mod:`~activeeval.estimators.summary`) share. ``pred`` need only give the rows asked
    for (``take``)."""
    ir, yr = idx[pos], y[pos]
    f_rows = pred.take(ir).point_prediction()
    w = meas.weight(f_rows, yr)
    wl = w * meas.loss(f_rows, yr)
    terms = (wl, w, pool.m_num[ir], pool.m_den[ir], pool)
    return _estimate_from_terms(v, terms, power, idx, level, meas, fpc, bias_correction, jackknife)


def _as_assisted_census(est: Estimate, features: ArrayLike | None = None) -> AssistedEstimate:
    """A census under the model-assisted estimator, as that estimator reports it (from
    :func:`assisted_estimate` or a campaign's exact value): the exact value needs no control
    variate, so both coefficients are 0 (feature_power None without features)."""
    base = {k: v for k, v in vars(est).items() if k not in ("power", "finite", "feature_power")}
    fp = None if features is None else 0.0
    return AssistedEstimate(**{**base, "census": True}, power=0.0, finite=True, feature_power=fp)


def _rows(
    idx: NDArray[np.intp], q: ArrayLike | None, pool_q: ArrayLike | None, p: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None]:
    """Positions in the draws of the estimator's rows, their weights v, and 1 − π (None for
    draws with replacement: every draw is a row with v = p/q)."""
    m = p.shape[0]
    if pool_q is None:
        v = importance_weights(q, p[idx] * m, n=idx.shape[0])
        return np.arange(idx.shape[0]), v, None
    if q is not None:
        raise ShapeError(
            "q, pool_q: pass either the per-draw probabilities q or the pool distribution "
            "pool_q, not both."
        )
    qq = check_distribution(pool_q, "pool_q", m)
    if (qq[idx] <= 0).any():
        bad = int(idx[np.flatnonzero(qq[idx] <= 0)[0]])
        raise InvalidSamplingDistributionError(
            f"pool_q: is zero at pool instance {bad}, which was drawn; pass the distribution "
            "the draws came from."
        )
    return _successive_rows(idx, qq, p)


def _domain(
    meas: Measure,
    deciders: Sequence[Predictive],
    p: NDArray[np.float64],
    pool_q: ArrayLike | None = None,
    stacklevel: int = 3,
) -> tuple[NDArray[np.bool_] | None, NDArray[np.float64]]:
    """The domain D where some model's weight w can be positive — the models' decisions f(x)
    are ``deciders``' point predictions, taken a chunk of the pool at a time (model-assisted page,
    "Domain") — None when it is the whole pool — and the test distribution renormalized on D
    for the pool moments. Every term (wℓ, w, m_N, m_D) vanishes off D, so G is the same
    ratio on D; but the self-normalized means over the rows estimate means *given the support
    of q*, so the control variate's pool means must be taken over the same region — over the
    whole pool they were off by the factor P(D) wherever q vanishes off D (precision: q* is
    zero on predicted negatives). A ``pool_q`` that vanishes somewhere in D where p > 0
    leaves those instances out of every estimate, which is then not consistent: warned about
    (as ``mix=0`` is), not refused. The rows are restricted by :func:`_in_domain`."""
    m = p.shape[0]
    dom = np.zeros(m, dtype=bool)
    for rows in row_chunks(m):
        for pr in deciders:
            dom[rows] |= meas.weight_can_be_positive(pr._chunk(rows).point_prediction())
    if pool_q is not None:
        qq = np.asarray(pool_q, dtype=float)
        missing = sum(
            int(np.count_nonzero(dom[rows] & (p[rows] > 0) & (qq[rows] <= 0)))
            for rows in row_chunks(m)
        )
        if missing:
            _warn_missing(missing, stacklevel + 1)
    if dom.all():
        return None, p
    mass = sum(weighted_sum(p[rows], dom[rows]) for rows in row_chunks(m))
    if not mass > 0:
        return dom, p
    p_dom = np.empty(m)
    for rows in row_chunks(m):
        p_dom[rows] = np.where(dom[rows], p[rows], 0.0) / mass
    return dom, p_dom


def _warn_missing(missing: int, stacklevel: int) -> None:
    """The warning of :func:`_domain` for a q that cannot draw ``missing`` instances of D
    (``stacklevel`` counted from this function)."""
    warnings.warn(
        f"pool_q: is zero on {missing} instances with test mass whose weight can be "
        "positive; estimates ignore them and are not consistent for the whole pool. "
        "Mix q with the pool distribution.",
        ActiveEvalWarning,
        stacklevel=stacklevel,
    )


def _in_domain(
    dom: NDArray[np.bool_] | None,
    idx: NDArray[np.intp],
    rows: tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None],
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64] | None]:
    """The rows (positions in ``idx``, v, 1 − π) drawn in the domain :func:`_domain` found;
    rows outside it have all terms 0 and are dropped."""
    if dom is None:
        return rows
    pos, v, fpc = rows
    keep = dom[idx[pos]]
    return pos[keep], v[keep], None if fpc is None else fpc[keep]


def _estimate_from_terms(
    v: NDArray[np.float64],
    terms: _Terms,
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None = None,
    bias_correction: bool = True,
    jackknife: bool = True,
) -> AssistedEstimate:
    """The model-assisted estimate from importance weights v and per-row ``terms`` (w·ℓ, w,
    the control variates m_N, m_D and their pool moments; any per-row value with a known pool
    expectation, e.g. a ranking's per-query ℓ with w ≡ 1). Rows are the draws (``fpc``
    None), or the distinct labeled instances of a successive sample with ``fpc`` = 1 − π
    (:func:`_successive_rows`); ``idx`` are all draws, for the counts."""
    wl, w, mn, md, pool = terms
    coef = _choose_power(power, v, wl, w, mn, md, pool, fpc)
    g, a, b, den = _assisted_parts(v, wl, w, mn, md, pool, coef)
    if bias_correction:
        g = _debiased(g, v, (wl, w, mn, md, pool), coef, float(den), fpc, meas.binary_loss)
    se = math.nan
    if not _undefined(g, meas):
        u = _influence(v, a - coef * b, float(den))
        if jackknife:
            jk = _jackknife_influence(v, (wl, w, mn, md, pool), coef, u, fpc)
            u = u if jk is None else jk
        u = _design_influence(u, fpc)
        se = float(math.sqrt(u @ u))
    return _single_result(g, se, v, w, idx, level, meas, coef, fpc)


def _undefined(g: float, meas: Measure) -> bool:
    """Whether Ĝ is NaN, with the warning that says why."""
    if math.isnan(g):
        warnings.warn(
            f"{meas.name}: the model-assisted estimate is undefined (no labeled instance has "
            "test mass p > 0, or D̂ ≤ 0, e.g. precision before any predicted positive); "
            "returning NaN. Label more instances.",
            UndefinedEstimateWarning,
            stacklevel=4,
        )
        return True
    return False


def _single_result(
    g: float,
    se: float,
    v: NDArray[np.float64],
    w: NDArray[np.float64],
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    coef: float,
    fpc: NDArray[np.float64] | None,
    feature_power: float | None = None,
) -> AssistedEstimate:
    vw = v * w
    n_eff = float(vw.sum() ** 2 / (vw @ vw)) if (vw @ vw) > 0 else 0.0
    return AssistedEstimate(
        estimate=g,
        stderr=se,
        n_draws=int(idx.shape[0]),
        n_labels=int(np.unique(idx).size),
        effective_n=n_eff,
        binary_loss=meas.binary_loss,
        level=level,
        measure=meas.name,
        unit_weights=meas.unit_weights,
        power=coef,
        finite=fpc is not None,
        feature_power=feature_power,
    )


def _estimate_from_sources(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None,
    bias_correction: bool,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> AssistedEstimate:
    """One model's estimate with its own control variate and the smoothed residuals as two
    sources (model-assisted page, "Pool features"): (λ, λ_s) by the box-constrained regression
    of the model's a on both b's, the estimate at Σ_s λ_s m^s, and the jackknife that
    re-tunes both without the deleted row (the comparison machinery with one model)."""
    coef, g, u = _fit_sources(
        v, by_source, power, None, fpc, meas, bias_correction, jackknife, dropped
    )
    se = math.nan
    if not _undefined(float(g[0]), meas):
        u = _design_influence(u[:, 0], fpc)
        se = float(math.sqrt(u @ u))
    w = by_source[0][0][1]
    coef_m, coef_s = float(coef[0]), float(coef[1])
    return _single_result(float(g[0]), se, v, w, idx, level, meas, coef_m, fpc, coef_s)


def _choose_power(
    power: float | None,
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    mn: NDArray[np.float64],
    md: NDArray[np.float64],
    pool: _Pool,
    fpc: NDArray[np.float64] | None = None,
) -> float:
    if power is not None:
        return _check_power(power)
    # Two rounds: λ from the SNIS estimate's residuals, then from the tuned estimate's.
    coef = 0.0
    for _ in range(2):
        g, a, b, _den = _assisted_parts(v, wl, w, mn, md, pool, coef)
        if math.isnan(g):
            return 0.0
        coef = _tuned_power(v, a, b, fpc)
    return coef


def assisted_paired_test(
    measure: Measure | str,
    predictives: Sequence[Any],
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    mixture: Predictive | None = None,
    power: float | None = None,
    level: float = 0.95,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = False,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> Comparison:
    """Paired comparison of two models with model-assisted estimates.

    Both models' control variates come from the same distributions of p(y | x), with
    coefficients tuned for the *difference* so that Var[Δ̂] is minimized: each model's own
    predictive distribution, with λ ∈ [0, 1]² fitted by box-constrained least squares, once
    the sample has ``MIN_DISAGREEMENTS`` (30) instances on which the models' predictions
    differ; before that, or with a fixed ``power``, the mixture of the two models (eq. 5.11)
    with one λ. See the *Model-assisted estimator* page, section "Comparisons"
    (``docs/how-it-works/model-assisted.md``).

    Parameters
    ----------
    measure : Measure or str
        The measure compared.
    predictives : sequence of two Predictive or (m, K) arrays
        The two models' predictive distributions over the WHOLE pool.
    indices : array-like of shape (n,)
        Pool indices of the draws, in draw order (repeats included).
    labels : array-like of shape (n,)
        True label of each draw.
    q : array-like of shape (n,), optional
        Sampling probability of each draw; None for uniform draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool; uniform by default.
    mixture : Predictive, optional
        A distribution for p(y | x) to use as the one control-variate source (λ* regresses
        a₀ − a₁ on b₀ − b₁) instead of the models' own distributions.
    power : float, optional
        A fixed coefficient λ ∈ [0, 1] for the mixture; None tunes the coefficients.
    level : float
        Confidence level of the result's ``ci``.
    pos_label : label, optional
        Positive class for F-measures named by string.
    pool_q : array-like of shape (m,), optional
        As in ``assisted_estimate``: the whole-pool q, for the finite-population form.
    bias_correction : bool, default False
        Subtract each model's estimated ratio bias (``assisted_estimate``). Off because for
        comparisons it lowered the coverage of the interval for Δ (section "Ratio bias").
    variance : {"jackknife", "linearized"}
        As in ``assisted_estimate``.
    features : array-like of shape (m, d), optional
        The pool's features: each model's labeled residuals under the mixture, smoothed over
        the pool, are one more source with its own coefficient (section "Pool features").
    bandwidth : float
        The smoother's Gaussian kernel bandwidth in standardized feature units.

    Returns
    -------
    Comparison
        Δ̂ = Ĝ[f₀] − Ĝ[f₁], its standard error, the Wald p-value and each model's estimate;
        ``feature_power`` is set with ``features``.

    Raises
    ------
    ShapeError
        When ``predictives`` does not hold exactly two models, or the draws do not fit the pool.

    See Also
    --------
    compare : Choose q, draw, label and compare in one call (uses this estimator).
    activeeval.estimators.inference.paired_test : The thesis's paired test (eq. 3.21–3.24).
    activeeval.estimators.assisted.assisted_multiple_comparison : k models.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.sampling import comparison_distribution, draw
    >>> from activeeval.estimators.assisted import assisted_paired_test
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> y = (rng.random(200) < p1).astype(int)
    >>> p2 = np.clip(p1 + rng.normal(0, 0.25, 200), 0.01, 0.99)
    >>> models = [np.column_stack([1 - p, p]) for p in (p1, p2)]
    >>> q = comparison_distribution(models, "error_rate")
    >>> idx = draw(q, 60, random_state=2)
    >>> res = assisted_paired_test("error_rate", models, idx, y[idx], pool_q=q)
    >>> print(f"Δ = {res.difference:.3f} ± {res.stderr:.3f}, best model {res.best}")
    Δ = -0.094 ± 0.016, best model 0
    """
    preds = [as_predictive(pr, f"predictives[{k}]") for k, pr in enumerate(predictives)]
    if len(preds) != 2:
        raise ShapeError(f"predictives: a paired test compares exactly 2 models, got {len(preds)}.")
    mix = Mixture(preds) if mixture is None else mixture
    meas = get_measure(measure, pos_label=pos_label).bind(mix)
    lv = check_level(level)
    idx, y = _check_draws(indices, labels, mix)
    p = _pool_distribution(mix.n, pool_weights)
    jk = _check_variance(variance)
    v, fpc, by_source, dropped = _comparison_rows(
        meas, preds, mix, idx, y, q, pool_q, p, power, features, bandwidth, mixture is not None
    )
    c = _paired_from_terms(v, by_source, power, idx, lv, meas, fpc, bias_correction, jk, dropped)
    return _unused_features(c, features)


def _unused_features(result: Any, features: ArrayLike | None) -> Any:
    """``feature_power`` = 0 where features were given but not used: none varies (nothing
    smoothed), or a census (exact values)."""
    if features is not None and result.feature_power is None:
        return replace(result, feature_power=0.0)
    return result


_Terms = tuple[Any, Any, Any, Any, _Pool]


def _value_pool(expectation: NDArray[np.float64], p: NDArray[np.float64]) -> _Pool:
    """Pool moments of a per-instance value ℓ(x) whose model expectation m(x) is known, with
    w ≡ 1 (a regular risk, e.g. a ranking's per-query DCG/ERR, eq. 6.4)."""
    return _Pool(expectation, np.ones_like(expectation), float(p @ expectation), 1.0)


def _value_terms(values: NDArray[np.float64], pool: _Pool, idx: NDArray[Any]) -> _Terms:
    """The estimator's per-draw terms (w·ℓ, w, m_N, m_D, pool) of such values at draws idx."""
    ones = np.ones(idx.shape[0])
    return values, ones, pool.m_num[idx], ones, pool


def _terms_at(
    v: NDArray[np.float64],
    parts: Sequence[_Terms],
    coef: float,
    debias: tuple[NDArray[np.float64] | None, bool] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """At coefficient λ: every model's estimate (k,), and per draw a/D̂ and b/D̂ (n, k).
    With ``debias`` = (fpc, binary_loss) the estimates are bias-corrected
    (:func:`_debiased`); a and b stay linearized at the plain ratio."""
    k = len(parts)
    g = np.empty(k)
    a = np.empty((v.shape[0], k))
    b = np.empty((v.shape[0], k))
    for j, (wl, w, mn, md, pool) in enumerate(parts):
        g[j], aj, bj, den = _assisted_parts(v, wl, w, mn, md, pool, coef)
        # Ĝ undefined: a, b are NaN already, and NaN/0 warns in some numpy versions.
        d = 1.0 if math.isnan(g[j]) else float(den)
        a[:, j], b[:, j] = aj / d, bj / d
        if debias is not None:
            g[j] = _debiased(float(g[j]), v, (wl, w, mn, md, pool), coef, float(den), *debias)
    return g, a, b


def _model_influences(
    v: NDArray[np.float64],
    parts: Sequence[_Terms],
    coef: float,
    z: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
    jackknife: bool = True,
) -> NDArray[np.float64]:
    """Each model's per-row influences (n, k) from z = (a − λb)/D̂ of :func:`_terms_at`:
    linearized, or jackknife (:func:`_jackknife_influence`); a difference's influences are
    the difference of the columns, exactly (Δ̂₍ᵢ₎ = Ĝ₀₍ᵢ₎ − Ĝ₁₍ᵢ₎). If the jackknife does
    not apply to one model, all get the linearized influences."""
    u = np.column_stack([_influence(v, z[:, j], 1.0) for j in range(z.shape[1])])
    if not jackknife:
        return u
    jk = [_jackknife_influence(v, part, coef, u[:, j], fpc) for j, part in enumerate(parts)]
    cols = [e for e in jk if e is not None]
    if len(cols) < len(jk):  # linearized for every model, so differences stay paired
        return u
    return np.column_stack(cols)


def _combined(by_source: Sequence[Sequence[_Terms]], coef: NDArray[np.float64]) -> list[_Terms]:
    """Every model's terms with the control variate Σ_s λ_s m^s: each source s (a predictive
    distribution of p(y | x)) gives the models' m_N, m_D and their pool means, weighted by
    λ_s; estimates from these terms use coefficient 1. Only the pool *means* enter an
    estimate once the rows are sliced, so the combined pool arrays are left empty."""
    out: list[_Terms] = []
    for j, (wl, w, _mn, _md, _pool) in enumerate(by_source[0]):
        terms = [src[j] for src in by_source]
        mn = sum(float(c) * t[2] for c, t in zip(coef, terms, strict=True))
        md = sum(float(c) * t[3] for c, t in zip(coef, terms, strict=True))
        mu_n = sum(float(c) * t[4].mu_num for c, t in zip(coef, terms, strict=True))
        mu_d = sum(float(c) * t[4].mu_den for c, t in zip(coef, terms, strict=True))
        empty = np.empty(0)
        out.append((wl, w, mn, md, _Pool(empty, empty, float(mu_n), float(mu_d))))
    return out


#: Labeled instances on which the models' predictions differ that a comparison needs before
#: each model's own predictive distribution serves as a control variate (model-assisted page,
#: "Comparisons"); with fewer, the mixture of the models is the one control variate.
MIN_DISAGREEMENTS = 30


def _sources(
    preds: Sequence[Predictive],
    mix: Predictive,
    predictions: Sequence[Any],
    rows: NDArray[Any],
    power: float | None,
) -> Sequence[Predictive]:
    """The control-variate sources of a comparison (model-assisted page, "Comparisons"): every
    model's own predictive distribution when λ is tuned and at least
    :data:`MIN_DISAGREEMENTS` labeled rows have predictions that differ between some pair of
    models; otherwise the mixture alone (eq. 5.11), as with a fixed ``power``."""
    if power is not None or _disagreements(predictions, rows) < MIN_DISAGREEMENTS:
        return [mix]
    return preds


def _disagreements(predictions: Sequence[Any], rows: NDArray[Any]) -> int:
    """How many distinct pool instances among ``rows`` get different predictions from some
    pair of models (``predictions``: each model's, arrays or :class:`_Decisions`)."""
    units = np.unique(rows)
    first = predictions[0][units]
    differ = np.zeros(units.shape[0], dtype=bool)
    for f in predictions[1:]:
        differ |= f[units] != first
    return int(differ.sum())


def _source_powers(
    power: float | None,
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    pairs: tuple[NDArray[np.intp], NDArray[np.intp]] | None,
    fpc: NDArray[np.float64] | None = None,
    smoothers: int = 0,
) -> tuple[NDArray[np.float64], tuple[NDArray[np.float64], NDArray[np.float64]] | None]:
    """The coefficients λ_s of a comparison's control variates (model-assisted page,
    "Comparisons"): with a given ``power``, λ_s = power/S for each of the S sources (for the
    models' own distributions, the equal mixture of eq. 5.11 at coefficient ``power``);
    otherwise two rounds (from λ = 0) of the box-constrained regression
    :func:`_tuned_powers` of the pairwise differences Δa on the sources' Δb^s, pooled over
    the model pairs ``pairs`` (None for one model: its own a on its b^s), with Ĝ and D̂ of the
    previous round; and the final round's regression rows (None for a given ``power``) for
    :func:`_refit_jackknife`. The last ``smoothers`` sources are smoothed residuals (module
    docstring, "Pool features"), which a given ``power`` weights by ``power`` each."""
    k = len(by_source)
    if power is not None:
        c, models = _check_power(power), k - smoothers
        return np.r_[np.full(models, c / models), np.full(smoothers, c)], None
    coef = np.zeros(k)
    rows = None
    for _ in range(2):
        g, a, den = [], [], []
        for t in _combined(by_source, coef):
            gj, aj, _, dj = _assisted_parts(v, *t, 1.0)
            if math.isnan(gj):  # before dividing by D̂: NaN/0 warns in some numpy versions
                return np.zeros(k), None
            g.append(gj)
            den.append(float(dj))
            a.append(aj / float(dj))
        da = np.column_stack(a)
        db = [
            np.column_stack([(t[2] - g[j] * t[3]) / den[j] for j, t in enumerate(src)])
            for src in by_source
        ]
        if pairs is not None:
            ia, ib = pairs
            da, db = da[:, ia] - da[:, ib], [b[:, ia] - b[:, ib] for b in db]
        rows = _power_regression(v, da, db, fpc)
        coef = _box_least_squares(*rows)
    return coef, rows


def _fit_sources(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    pairs: tuple[NDArray[np.intp], NDArray[np.intp]] | None,
    fpc: NDArray[np.float64] | None,
    meas: Measure,
    bias_correction: bool,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The coefficients λ_s of the control-variate sources (:func:`_source_powers`; the last
    source the smoothed residuals when ``dropped`` is given), every model's estimate at
    Σ_s λ_s m^s (k,) and its per-row influences (n, k) before the design's transform
    (:func:`_comparison_influences`; NaN where some estimate is undefined) — one model, a
    pair, or k models."""
    smoothers = 0 if dropped is None else 1
    coef, reg = _source_powers(power, v, by_source, pairs, fpc, smoothers)
    parts = _combined(by_source, coef)
    g, a, b = _terms_at(v, parts, 1.0, (fpc, meas.binary_loss) if bias_correction else None)
    if np.isnan(g).any():  # some Ĝ undefined (e.g. no labeled row in the domain): no SE
        return coef, g, np.full(a.shape, math.nan)
    u = _comparison_influences(v, by_source, coef, reg, parts, a - b, fpc, jackknife, dropped)
    return coef, g, u


def _comparison_influences(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    coef: NDArray[np.float64],
    rows: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
    parts: Sequence[_Terms],
    z: NDArray[np.float64],
    fpc: NDArray[np.float64] | None,
    jackknife: bool,
    dropped: Sequence[Any] | None = None,
) -> NDArray[np.float64]:
    """Every model's influences (n, k) for a comparison: :func:`_model_influences`, or —
    with several control-variate sources tuned on the sample, or a source that depends on
    the labels (``dropped``, :func:`_refit_jackknife`) — the jackknife that re-tunes them
    and deletes each row from that source too, where it applies."""
    if jackknife and (rows is not None or dropped is not None) and len(by_source) > 1:
        eps = _refit_jackknife(v, by_source, coef, rows, fpc, dropped)
        if eps is not None:
            return eps
    return _model_influences(v, parts, 1.0, z, fpc, jackknife)


def _comparison_rows(
    meas: Measure,
    preds: Sequence[Predictive],
    mix: Predictive,
    idx: NDArray[np.intp],
    y: NDArray[Any],
    q: ArrayLike | None,
    pool_q: ArrayLike | None,
    p: NDArray[np.float64],
    power: float | None,
    features: ArrayLike | None,
    bandwidth: float,
    mixture_given: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None, list[Sequence[_Terms]], Any]:
    """A comparison's rows in the domain — their weights v and 1 − π (None with
    replacement) — and every compared model's terms under each control-variate source
    (:func:`_sources`, or the given ``mix`` alone; :func:`_model_terms`); with pool
    ``features`` the smoothed residuals under the mixture ``mix`` as the last source and the
    jackknife's deletion arrays (:func:`_with_smoother`): the models' difference of
    residuals is smoothed, whichever sources the labels then weight."""
    z = None if features is None else _standardized(features, mix.n)
    h = _check_bandwidth(bandwidth)
    fs = [_Decisions(pr) for pr in preds]  # found where asked: no pool-size array
    rows_all = _rows(idx, q, pool_q, p)  # validates pool_q before _domain warns about it
    dom, p_dom = _domain(meas, preds, p, pool_q, stacklevel=4)  # the caller's caller
    pos, v, fpc = _in_domain(dom, idx, rows_all)
    rows, yr = idx[pos], y[pos]
    sources = [mix] if mixture_given else _sources(preds, mix, fs, rows, power)
    by_source: list[Sequence[_Terms]] = [
        _model_terms(meas, preds, src, rows, yr, p_dom) for src in sources
    ]
    if z is None or z.shape[1] == 0:  # nothing to smooth: skip the mixture's terms
        return v, fpc, by_source, None
    ref = by_source[0] if sources[0] is mix else _model_terms(meas, preds, mix, rows, yr, p_dom)
    groups = _prediction_groups(preds, [pr.point_prediction() for pr in preds])
    return v, fpc, *_with_smoother(z, by_source, ref, rows, p_dom, h, v, groups, fpc)


def _model_terms(
    meas: Measure,
    preds: Sequence[Predictive],
    mix: Predictive,
    idx: NDArray[Any],
    y: NDArray[Any],
    p: NDArray[np.float64] | None,
    pools: Sequence[_Pool] | None = None,
) -> list[_Terms]:
    """Per model: w·ℓ and w at the draws, the control variates m_N, m_D of ``mix`` (the
    common model of p(y | x)) at the draws, and their pool moments (summed over the pool under
    ``p``, or given: ``pools``, one per model, from a pool summary)."""
    parts: list[_Terms] = []
    for k, pr in enumerate(preds):
        f = pr.take(idx).point_prediction()
        if pools is None:
            assert p is not None
            pool = _pool_moments(meas, mix, pr, p)
        else:
            pool = pools[k]
        w = meas.weight(f, y)
        parts.append((w * meas.loss(f, y), w, pool.m_num[idx], pool.m_den[idx], pool))
    return parts


def _paired_from_terms(
    v: NDArray[np.float64],
    by_source: Sequence[Sequence[_Terms]],
    power: float | None,
    idx: NDArray[Any],
    level: float,
    meas: Measure,
    fpc: NDArray[np.float64] | None = None,
    bias_correction: bool = False,
    jackknife: bool = True,
    dropped: Sequence[Any] | None = None,
) -> Comparison:
    """Paired model-assisted comparison from each model's per-row terms
    (w·ℓ, w, m_N, m_D, pool moments; rows as in :func:`_estimate_from_terms`) under each
    control-variate source, the coefficients tuned for the difference
    (:func:`_source_powers`); the last source the smoothed residuals when ``dropped`` is
    given (:func:`_with_smoother`)."""
    pairs = (np.array([0]), np.array([1]))
    coef, g, u = _fit_sources(
        v, by_source, power, pairs, fpc, meas, bias_correction, jackknife, dropped
    )
    diff = _difference(g[0], g[1])
    own = np.sqrt(np.sum(_design_influence(u, fpc) ** 2, axis=0))  # each model's own
    u = _design_influence(u[:, 0] - u[:, 1], fpc)
    se = _rounding_zero(float(math.sqrt(u @ u)), diff)
    if math.isnan(diff):
        _warn_undefined(meas.name)
        pv = se = math.nan
    elif se == 0.0 and diff != 0.0 and fpc is not None and not fpc.any():
        pv = 0.0  # every labeled unit has π = 1: the difference is known exactly
    else:  # a zero stderr otherwise (e.g. 3 labels, all alike) is degenerate: warned
        pv = _wald_p_value(diff, se, meas.name)
    return Comparison(
        estimates=(float(g[0]), float(g[1])),
        difference=diff,
        stderr=se,
        p_value=pv,
        n_draws=int(idx.shape[0]),
        n_labels=int(np.unique(idx).size),
        greater_is_better=meas.greater_is_better,
        level=level,
        measure=meas.name,
        feature_power=None if dropped is None else float(coef[-1]),
        stderrs=(float(own[0]), float(own[1])),
    )


def assisted_multiple_comparison(
    measure: Measure | str,
    predictives: Sequence[Any],
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    power: float | None = None,
    pos_label: Any = None,
    pool_q: ArrayLike | None = None,
    bias_correction: bool = False,
    variance: str = "jackknife",
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
) -> MultipleComparison:
    """All pairwise comparisons of k ≥ 2 models with model-assisted estimates.

    Thesis Sec. 3.2.3 (Holm, Bonferroni, Tukey) with the estimator of
    ``assisted_estimate``. The control variates come from the same sources as for
    ``assisted_paired_test``: the k models' own predictive distributions once
    ``MIN_DISAGREEMENTS`` labeled instances get different predictions from some pair of
    models, else (or with a fixed ``power``) the mixture of the k models (eq. 5.11). One
    coefficient vector λ serves all models, so that every pairwise difference is a
    difference of the same estimates.

    Parameters
    ----------
    measure : Measure or str
        The measure compared.
    predictives : sequence of k ≥ 2 Predictive or (m, K) arrays
        The models' predictive distributions over the WHOLE pool.
    indices : array-like of shape (n,)
        Pool indices of the draws, in draw order (repeats included).
    labels : array-like of shape (n,)
        True label of each draw.
    q : array-like of shape (n,), optional
        Sampling probability of each draw; None for uniform draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool; uniform by default.
    power : float, optional
        A fixed coefficient λ ∈ [0, 1] for the mixture; None tunes the coefficients.
    pos_label : label, optional
        Positive class for F-measures named by string.
    pool_q : array-like of shape (m,), optional
        As in ``assisted_estimate``: the whole-pool q, for the finite-population form.
    bias_correction : bool, default False
        As in ``assisted_paired_test``.
    variance : {"jackknife", "linearized"}
        As in ``assisted_estimate``.
    features : array-like of shape (m, d), optional
        The pool's features, as in ``assisted_paired_test``.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth in standardized feature units.

    Returns
    -------
    MultipleComparison
        The k estimates, the pairwise table with adjusted p-values and the range test.

    Raises
    ------
    ShapeError
        When fewer than two models are given, or the draws do not fit the pool.

    See Also
    --------
    compare : Compare k models in one call (uses this estimator).
    activeeval.estimators.inference.multiple_comparison : The thesis's estimator.
    activeeval.estimators.assisted.assisted_paired_test : Two models.

    Notes
    -----
    λ minimizes the summed sandwich variance of all k(k−1)/2 differences with Ĝ_j and D̂_j
    held at the previous round's values (the paired test's regression pooled over the
    pairs; for one source Σ_pairs Σ_i v_i²(Δa − Δā)(Δb − Δb̄) / Σ_pairs Σ_i v_i²(Δb − Δb̄)²,
    clipped to [0, 1]; two rounds, from λ = 0). Since D̂ moves with λ, this is not the
    exact minimizer of the plug-in variance; on F1 the tuned λ still lowered the true
    (Monte-Carlo) variance of the differences below both λ = 0 and λ = 1 in an independent
    check. Model j's influence is u_j = v (z_j − z̄_j) / (D̂_j Σ v),
    z_j = a_j − Σ_s λ_s b^s_j, and the table is built from them exactly as for the thesis's
    estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.sampling import comparison_distribution, draw
    >>> from activeeval.estimators.assisted import assisted_multiple_comparison
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> y = (rng.random(200) < p1).astype(int)
    >>> ps = [p1] + [np.clip(p1 + rng.normal(0, s, 200), 0.01, 0.99) for s in (0.25, 0.4)]
    >>> models = [np.column_stack([1 - p, p]) for p in ps]
    >>> q = comparison_distribution(models, "error_rate")
    >>> idx = draw(q, 60, random_state=2)
    >>> res = assisted_multiple_comparison("error_rate", models, idx, y[idx], pool_q=q)
    >>> np.round(res.estimates, 3).tolist(), res.best
    ([0.334, 0.403, 0.519], 0)
    """
    preds = [as_predictive(pr, f"predictives[{k}]") for k, pr in enumerate(predictives)]
    k = len(preds)
    if k < 2:
        raise ShapeError(f"predictives: need at least 2 models to compare, got {k}.")
    mix = Mixture(preds)
    meas = get_measure(measure, pos_label=pos_label).bind(mix)
    idx, y = _check_draws(indices, labels, mix)
    p = _pool_distribution(mix.n, pool_weights)
    jk = _check_variance(variance)
    v, fpc, by_source, dropped = _comparison_rows(
        meas, preds, mix, idx, y, q, pool_q, p, power, features, bandwidth
    )
    pairs = np.triu_indices(k, 1)
    coef, g, u = _fit_sources(v, by_source, power, pairs, fpc, meas, bias_correction, jk, dropped)
    u = _design_influence(u, fpc)
    res = _multiple_from_influence(g, u, int(np.unique(idx).size), meas, n_draws=idx.shape[0])
    if dropped is not None:
        res = replace(res, feature_power=float(coef[-1]))
    return _unused_features(res, features)


def _conditional_variance(
    pred: Predictive, meas: Measure, c: float, f: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Var_y[w(ℓ − c) | x] under the predictive distribution (the variance next to Thm 4.1:
    E[w²(ℓ − c)² | x] − (m_N − c·m_D)²), and m_D = E[w | x]."""
    second = meas.conditional_second_moment(pred, c, f)
    m_num, m_den = meas.conditional_expectations(pred, f)
    return np.maximum(second - (m_num - c * m_den) ** 2, 0.0), m_den


def assisted_distribution(
    predictive: Any,
    measure: Measure | str = "error_rate",
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    pos_label: Any = None,
) -> NDArray[np.float64]:
    """Variance-optimal q for the model-assisted estimator (the analogue of Thm 4.1).

    q ∝ p·sqrt(Var_y[w(ℓ − Ǧ) | x] / λ(x)): a conditional *variance* where q* has a second
    moment, with the floor and defensive mixture of ``optimal_distribution``. The variance is
    zero where the model is certain; the floor keeps at least floor·(1 − floor) of Bernoulli
    variance on every instance of a 0/1 loss, i.e. the model is never trusted beyond
    certainty 1 − floor. It is not ``evaluate``'s default: measured, q* does as well or
    better (section "Optimal sampling" of ``docs/how-it-works/model-assisted.md``).

    Parameters
    ----------
    predictive : Predictive or (m, K) array
        The model's predictive distribution over the pool.
    measure : Measure or str
        The generalized risk to estimate.
    costs : array-like of shape (m,), optional
        Labeling cost λ(x) > 0 of every pool instance.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool, up to a constant; uniform by default.
    floor : float
        Certainty bound for 0/1 losses (see above); 0 disables.
    mix : float
        Weight ε ∈ [0, 1] of the defensive mixture with p; 0 disables.
    pos_label : label, optional
        Positive class for F-measures named by string.

    Returns
    -------
    q : ndarray of shape (m,)
        Non-negative, sums to one.

    See Also
    --------
    activeeval.sampling.optimal_distribution : q* (Thm 4.1, 4.2), the default.
    activeeval.estimators.assisted.assisted_estimate : The estimator this q is optimal for.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.assisted import assisted_distribution
    >>> proba = np.array([[0.99, 0.01], [0.9, 0.1], [0.6, 0.4], [0.45, 0.55]])
    >>> np.round(assisted_distribution(proba, "error_rate"), 3).tolist()
    [0.155, 0.204, 0.318, 0.322]
    """
    pred = as_predictive(predictive)
    meas = get_measure(measure, pos_label=pos_label).bind(pred)
    lam = check_costs(costs, pred.n)
    check_safeguards(mix, floor)
    p = _pool_distribution(pred.n, pool_weights)
    f = pred.point_prediction()
    c = meas.intrinsic_value(pred, f, pool_weights=p)
    mask = meas.weight_can_be_positive(f)
    if math.isnan(c) or not mask.any():
        return _defensive(p, p, mask, 1.0) if mask.any() else p
    var, m_den = _conditional_variance(pred, meas, c, f)
    if meas.binary_loss and floor > 0:
        var = np.maximum(var, floor * (1 - floor) * m_den**2)
    return _from_moment(var, p, mask, lam, mix, meas.regular, uniform=pool_weights is None)
