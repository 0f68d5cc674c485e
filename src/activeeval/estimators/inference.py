"""Estimates, intervals and tests from labeled draws with known sampling probabilities.

One rule carries everything here. From draws x_i ~ q with importance weights v_i = p(x_i)/q(x_i)
the self-normalized importance-sampling estimate of a generalized risk is

    Ĝ = Σ v_i w_i ℓ_i / Σ v_i w_i                                         (eq. 3.31)

and its linearization Ĝ − G ≈ Σ_i u_i with the per-draw influence

    u_i = v_i w_i (ℓ_i − Ĝ) / Σ_j v_j w_j                                 (Lemma 3.4)

so the sandwich variance is Σ u_i² (= S²_{n,q} / n after Lemma 3.4; eq. 3.14 for w = 1). A
difference of two generalized risks on the same draws has influence u₁ − u₂ (eq. 3.21–3.22 for
regular risks; the same linearization covers F-measures), and k models give a k-column
influence matrix whose pairwise differences feed Holm, Bonferroni and Tukey (Sec. 3.2.3).

The intervals built on it (Wald, t, logit, Wilson and the other binomial ones, one-sided bounds,
the default's tempered interval) are derived on the *Intervals* page of the documentation
(``docs/how-it-works/intervals.md``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .._validation import check_finite_array, check_level, check_option, real_number
from ..errors import (
    DegenerateIntervalWarning,
    EmptyPoolError,
    InvalidLevelError,
    InvalidSamplingDistributionError,
    ShapeError,
    UndefinedEstimateWarning,
)
from ..measures import Measure, get_measure
from ..methods import ALTERNATIVES, INTERVAL_METHODS, PROPORTION_METHODS
from ..predictive import Categorical, Mixture, Predictive, as_predictive, check_labels

__all__ = [
    "Comparison",
    "Estimate",
    "MultipleComparison",
    "ScoreCurve",
    "estimate",
    "importance_weights",
    "logit_interval",
    "multiple_comparison",
    "paired_test",
    "proportion_confint",
]

ADJUSTMENTS = ("holm", "bonferroni", "tukey", "none")


# ------------------------------------------------------------------ passive proportions
def proportion_confint(
    count: ArrayLike, nobs: ArrayLike, level: float = 0.95, method: str = "wilson"
) -> tuple[Any, Any]:
    """Two-sided confidence interval for a binomial proportion ``count / nobs``.

    The intervals are clipped to [0, 1], as statsmodels' ``proportion_confint`` clips its
    normal-approximation ones. See the *Intervals* page of the documentation
    (``docs/how-it-works/intervals.md``).

    Parameters
    ----------
    count, nobs : array-like
        Successes and trials (non-integer values are accepted, as effective counts);
        0 ≤ count ≤ nobs, nobs > 0.
    level : float
        Confidence level 1 − α.
    method : {"wilson", "wald", "t", "clopper-pearson", "agresti-coull"}
        ``wald``: p̂ ± z √(p̂(1−p̂)/n) (Lemma 3.3); ``t``: the one-sample t interval on 0/1 data,
        p̂ ± t_{n−1} √(p̂(1−p̂)/(n−1)); ``wilson``: eq. 3.19–3.20 (Wilson, 1927);
        ``clopper-pearson``: exact inversion of the binomial (Clopper & Pearson, 1934);
        ``agresti-coull``: Wald on (count + z²/2)/(n + z²) (Agresti & Coull, 1998).

    Returns
    -------
    low, high : float or ndarray
        The interval's ends; floats for scalar inputs, arrays (elementwise) otherwise.

    Raises
    ------
    ShapeError
        When a count is negative or above its nobs, or nobs ≤ 0.

    See Also
    --------
    activeeval.estimators.inference.logit_interval : Logit-scale interval for weighted estimates.
    activeeval.estimators.inference.Estimate : Its ``confidence_interval`` applies these to the
        effective count of an importance-weighted sample.

    References
    ----------
    Brown, Cai & DasGupta (2001), Interval estimation for a binomial proportion. Statistical
    Science 16(2). Thesis Sec. 3.1.2.

    Examples
    --------
    Three errors in 50 uniformly drawn labels:

    >>> from activeeval.estimators.inference import proportion_confint
    >>> low, high = proportion_confint(3, 50)
    >>> print(f"({low:.3f}, {high:.3f})")
    (0.021, 0.162)
    >>> low, high = proportion_confint(3, 50, method="clopper-pearson")
    >>> print(f"({low:.3f}, {high:.3f})")
    (0.013, 0.165)
    """
    lv = check_level(level)
    method = check_option(method, PROPORTION_METHODS, "method")
    x = np.asarray(count, dtype=float)
    n = np.asarray(nobs, dtype=float)
    if np.any(n <= 0) or np.any(x < 0) or np.any(x > n):
        raise ShapeError("count, nobs: need 0 ≤ count ≤ nobs and nobs > 0.")
    alpha = 1.0 - lv
    z = _z_upper(alpha / 2)
    p = x / n
    if method == "wald":
        half = z * np.sqrt(p * (1 - p) / n)
        low, high = p - half, p + half
    elif method == "t":
        with np.errstate(divide="ignore", invalid="ignore"):
            half = _t_upper(alpha / 2, n - 1) * np.sqrt(p * (1 - p) / (n - 1))
        low, high = p - half, p + half
    elif method == "wilson":
        z2 = z * z
        center = (p + z2 / (2 * n)) / (1 + z2 / n)  # eq. 3.19
        half = z * np.sqrt(p * (1 - p) + z2 / (4 * n)) / (np.sqrt(n) + z2 / np.sqrt(n))  # 3.20
        low, high = center - half, center + half
    elif method == "clopper-pearson":
        from scipy import stats  # the beta quantiles only here (scipy.stats is slow to import)

        with np.errstate(invalid="ignore"):
            low = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
            high = np.where(x < n, stats.beta.isf(alpha / 2, x + 1, n - x), 1.0)
    else:  # agresti-coull
        n_c = n + z * z
        p_c = (x + z * z / 2) / n_c
        half = z * np.sqrt(p_c * (1 - p_c) / n_c)
        low, high = p_c - half, p_c + half
    # A proportion lies in [0, 1]: intersecting with the parameter space keeps the coverage and
    # matches statsmodels' proportion_confint (which clips normal, agresti_coull and wilson).
    low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    if np.ndim(low) == 0:
        return float(low), float(high)
    return low, high


# --------------------------------------------------------------- the importance-weighting rule
def importance_weights(
    q: ArrayLike | None, p: ArrayLike | None = None, n: int | None = None
) -> Any:
    """Importance weights v = p(x_i) / q(x_i) of drawn instances.

    Parameters
    ----------
    q : array-like of shape (n,), optional
        Sampling probability of each draw (``q[idx]``); None means the draws are uniform
        (q = p). Every entry must be in (0, 1]: an instance that was drawn had positive mass.
    p : array-like of shape (n,), optional
        Pool probability (or any positive pool weight; only ratios matter) of each draw;
        None means p(x) is uniform over the pool.
    n : int, optional
        Number of draws, needed when both are None.

    Returns
    -------
    v : ndarray of shape (n,)
        p / q; 1 / q when ``p`` is None (uniform pool, up to the constant 1/m, which cancels
        in every self-normalized estimate); ``p`` scaled to mean 1 when ``q`` is None; ones
        when both are None.

    Raises
    ------
    InvalidSamplingDistributionError
        When an entry of ``q`` lies outside (0, 1].
    ShapeError
        When both are None and ``n`` is not given, ``p`` is negative, or the lengths differ.

    See Also
    --------
    activeeval.estimators.inference.estimate : The self-normalized estimate built on these weights.
    activeeval.sampling.draw : Draws whose ``q[idx]`` is passed here.

    Examples
    --------
    >>> from activeeval.estimators.inference import importance_weights
    >>> importance_weights([0.5, 0.25, 0.25]).tolist()
    [2.0, 4.0, 4.0]
    >>> importance_weights([0.5, 0.25, 0.25], p=[0.25, 0.25, 0.5]).tolist()
    [0.5, 1.0, 2.0]
    """
    if q is None and p is None:
        if n is None:
            raise ShapeError("q: pass the sampling probabilities of the draws or their number.")
        return np.ones(n)
    if q is not None:
        qq = check_finite_array(q, "q", ndim=1)
        if (qq <= 0).any() or (qq > 1).any():
            bad = int(np.flatnonzero((qq <= 0) | (qq > 1))[0])
            raise InvalidSamplingDistributionError(
                f"q: draw {bad} has sampling probability {qq[bad]:g}; every drawn instance must "
                "have probability in (0, 1]. Pass q[idx] from the distribution the draws "
                "came from."
            )
    if p is not None:
        pp = check_finite_array(p, "p", ndim=1)
        if (pp < 0).any():
            raise ShapeError("p: pool weights must be non-negative.")
        if q is None:
            return pp / pp.mean() if pp.sum() > 0 else pp
        if pp.shape != qq.shape:
            raise ShapeError(f"p: has {pp.shape[0]} entries but q has {qq.shape[0]}.")
        return pp / qq
    return 1.0 / qq


def _z_upper(alpha: Any) -> Any:
    """The standard normal's upper α quantile, ``scipy.stats.norm.isf(alpha)`` bit for bit
    (its −ndtri(α)), without importing scipy.stats (half a second, on every command line)."""
    return -special.ndtri(alpha)


def _t_upper(alpha: Any, df: Any) -> Any:
    """Student's t upper α quantile on ``df`` degrees of freedom, ``scipy.stats.t.isf(alpha,
    df)`` bit for bit (its −stdtrit(df, α)); NaN where df ≤ 0, as scipy.stats gives."""
    d = np.asarray(df, dtype=float)
    ok = d > 0
    out = -special.stdtrit(np.where(ok, d, 1.0), alpha)
    return np.where(ok, out, np.nan) if d.ndim else (out if ok else math.nan)


def _influence(v: NDArray[Any], w: NDArray[Any], loss: NDArray[Any]) -> tuple[float, NDArray[Any]]:
    """Ĝ (eq. 3.31) and the per-draw influence u with Var[Ĝ] ≈ Σ u² (Lemma 3.4)."""
    vw = v * w
    total = vw.sum()
    if not total > 0:
        return math.nan, np.full(v.shape, math.nan)
    g = float(vw @ loss / total)
    return g, vw * (loss - g) / total


def _kish_effective_n(v: NDArray[Any], w: NDArray[Any]) -> float:
    vw = v * w
    denom = float(vw @ vw)
    return float(vw.sum() ** 2 / denom) if denom > 0 else 0.0


@dataclass(frozen=True)
class _Sample:
    """Canonical arrays of a labeled sample, validated once at the public boundary."""

    measure: Measure
    predictions: list[NDArray[Any]]
    labels: NDArray[Any]
    v: NDArray[np.float64]
    n_labels: int


def _point_predictions(
    measure: Measure, pred: Any, labels: NDArray[Any], name: str
) -> tuple[Measure, NDArray[Any]]:
    if isinstance(pred, Predictive) or np.ndim(pred) == 2:
        predictive = as_predictive(pred, name)
        if predictive.n != labels.shape[0]:
            raise ShapeError(
                f"{name}: covers {predictive.n} instances but {labels.shape[0]} labels were given."
            )
        measure = measure.bind(predictive)
        if isinstance(predictive, Categorical | Mixture):
            check_labels(predictive, labels)
        return measure, predictive.point_prediction()
    arr = np.asarray(pred)
    if arr.ndim != 1 or arr.shape[0] != labels.shape[0]:
        raise ShapeError(
            f"{name}: expected {labels.shape[0]} point predictions (one per label) or a "
            f"Predictive; got shape {arr.shape}."
        )
    if not measure.categorical:
        arr = check_finite_array(arr, name, ndim=1)
    return measure, arr


def _sample(
    measure: Measure | str,
    predictions: Sequence[Any],
    labels: ArrayLike,
    q: ArrayLike | None,
    p: ArrayLike | None,
    indices: ArrayLike | None,
) -> _Sample:
    meas = get_measure(measure)
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ShapeError(f"labels: expected a 1-d array of labels, got shape {y.shape}.")
    if y.shape[0] == 0:
        raise EmptyPoolError("labels: the sample is empty; label at least one draw.")
    if not meas.categorical:
        y = check_finite_array(y, "labels", ndim=1)
    preds = []
    for j, pr in enumerate(predictions):
        name = "predictions" if len(predictions) == 1 else f"predictions[{j}]"
        meas, arr = _point_predictions(meas, pr, y, name)
        preds.append(arr)
    meas = meas.bind(None, values=[*preds, y])
    v = importance_weights(q, p, n=y.shape[0])
    if v.shape[0] != y.shape[0]:
        raise ShapeError(f"q: has {v.shape[0]} entries but {y.shape[0]} labels were given.")
    if indices is None:
        n_labels = y.shape[0]
    else:
        idx = np.asarray(indices)
        if idx.shape != y.shape:
            raise ShapeError(f"indices: expected {y.shape[0]} pool indices, got {idx.shape}.")
        n_labels = int(np.unique(idx).shape[0])
    return _Sample(meas, preds, y, v, n_labels)


def _warn_undefined(name: str, census: bool = False) -> None:
    if census:
        what = (
            f"{name}: undefined on this pool: every instance that could carry weight in it is "
            "labeled, and none does (e.g. recall when no label is positive, precision when "
            "no prediction is); returning NaN."
        )
    else:
        what = (
            f"{name}: the estimate is undefined because no drawn instance has positive weight "
            "yet (e.g. recall before any positive label, precision before any predicted "
            "positive); returning NaN. Label more instances."
        )
    warnings.warn(what, UndefinedEstimateWarning, stacklevel=3)


def _warn_degenerate(what: str, binary: bool = False) -> None:
    """A zero standard error; ``binary``: an estimate of a 0/1 loss, which has intervals that
    do not need one (not a difference, not DCG/ERR/MSE)."""
    fix = (
        "use method='wilson' or method='clopper-pearson', or label more instances"
        if binary
        else "label more instances"
    )
    warnings.warn(
        f"{what}: the standard error is 0, so the Wald interval collapses to a point and "
        f"understates the uncertainty; {fix}.",
        DegenerateIntervalWarning,
        stacklevel=3,
    )


# --------------------------------------------------------------------------- reprs
#: Entries of a sequence a result's repr shows before eliding the rest.
_REPR_ITEMS = 6


def _repr_value(x: Any) -> str:
    """A field as a result's repr shows it: numbers to 4 significant digits, a sequence's
    first :data:`_REPR_ITEMS` entries."""
    if x is None or isinstance(x, bool | np.bool_):
        return repr(None if x is None else bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        return f"{float(x):.4g}"
    if isinstance(x, tuple | list | np.ndarray):
        seq = x.ravel() if isinstance(x, np.ndarray) else x
        shown = [_repr_value(v) for v in seq[:_REPR_ITEMS]]
        if len(seq) > _REPR_ITEMS:
            shown.append(f"... ({len(seq)} in all)")
        return ("({})" if isinstance(x, tuple) else "[{}]").format(", ".join(shown))
    return repr(x)


def _result_repr(obj: Any, *lines: Sequence[str]) -> str:
    """``Name(field=value, ...)`` over the named fields, a group per line (at most five):
    a result prints short however large its pool, as scipy's result objects do; arrays of
    draws, tables and nested results are left out (they stay attributes)."""
    with warnings.catch_warnings():  # a degenerate interval warns when computed, not here
        warnings.simplefilter("ignore")
        body = ",\n    ".join(
            ", ".join(f"{name}={_repr_value(getattr(obj, name))}" for name in line)
            for line in lines
        )
    return f"{type(obj).__name__}({body})"


def _sided(
    interval: Callable[[float], tuple[float, float]], level: float, alternative: str
) -> tuple[float, float]:
    """The interval at ``level`` on the side(s) ``alternative`` asks for. Every interval here
    is built with α/2 in each tail, so a one-sided 1 − α bound is the matching end of the
    two-sided interval at 1 − 2α; the other end is infinite (scipy's convention). Each side
    then covers as that method's end does: Clopper–Pearson at least 1 − α exactly; Wald's
    upper bound of a rare error rate and Wilson's lower bound less (exact enumeration, n =
    100, 95%, error rate R: Wald's upper bound 0.39 at R = 0.005 and 0.095 at R = 0.001;
    Wilson's lower bound 0.91 at R = 0.005, 0.80 at its worst, R ≈ 0.002)."""
    alternative = check_option(alternative, ALTERNATIVES, "alternative")
    if alternative == "two-sided":
        return interval(level)
    if level <= 0.5:
        raise InvalidLevelError(
            f"level: a one-sided bound at level {level:g} lies on the wrong side of the "
            "estimate; give a level above 0.5 (e.g. 0.95)."
        )
    low, high = interval(2.0 * level - 1.0)
    return (-math.inf, high) if alternative == "less" else (low, math.inf)


def _wald_p(z: float, alternative: str) -> float:
    """The Wald test's p-value for the statistic ``z`` (eq. 3.24; one-sided: one tail)."""
    if math.isnan(z):
        return math.nan
    if alternative == "less":
        return float(special.ndtr(z))
    if alternative == "greater":
        return float(special.ndtr(-z))
    return float(min(1.0, 2.0 * special.ndtr(-abs(z))))


def _wald_interval(d: float, se: float, lv: float) -> tuple[float, float]:
    """d ± z·se, the two-sided Wald interval at level ``lv`` (Lemma 3.3)."""
    half = _z_upper((1 - lv) / 2) * se
    return float(d - half), float(d + half)


def _difference_interval(
    d: float, se: float, n: int, lv: float, method: str
) -> tuple[float, float]:
    """Two-sided interval for a difference: ``wald`` (Sec. 3.2.2) or ``t`` (t_{n−1} on n
    draws, Bessel-corrected)."""
    if method == "wald":
        return _wald_interval(d, se, lv)
    if n < 2:
        return -math.inf, math.inf
    half = _t_upper((1 - lv) / 2, n - 1) * se * math.sqrt(n / (n - 1))
    return float(d - half), float(d + half)


def _null(null: Any) -> float:
    """The value of Δ under h₀, a finite number."""
    value = real_number(null)
    if not math.isfinite(value):
        raise ShapeError(f"null: must be a finite number (the difference under h0), got {null!r}.")
    return value


def _shifted_p(d: float, se: float, null: float, alternative: str) -> float:
    """p-value of h₀: Δ = ``null`` from Δ̂ = ``d`` with standard error ``se`` (a zero
    standard error decides by the sign of Δ̂ − null: 0 or 1, ½ on an exact tie)."""
    gap = d - null
    if math.isnan(gap) or math.isnan(se):
        return math.nan
    if se > 0:
        z = gap / se
    else:
        z = 0.0 if gap == 0.0 else math.copysign(math.inf, gap)
        if gap == 0.0 and alternative != "two-sided":
            return 0.5
    return _wald_p(z, alternative)


# ---------------------------------------------------------------------- score curve
def plausible_members(
    loglik: NDArray[np.float64], level: float, parameters: int = 1
) -> NDArray[np.bool_]:
    """The members whose log-likelihood is within χ²_parameters(level)/2 of the best one's
    (the likelihood-ratio set; NaN or −∞ never)."""
    cut = float(special.chdtri(parameters, 1.0 - level)) / 2.0  # scipy.stats.chi2.isf's
    return np.isfinite(loglik) & (loglik >= np.max(loglik) - cut)


def plausible_by_family(
    loglik: NDArray[np.float64], level: float, parameters: NDArray[np.intp]
) -> NDArray[np.bool_]:
    """:func:`plausible_members` within each family (the members sharing a number of free
    parameters, its degrees of freedom), the sets joined."""
    out = np.zeros(loglik.shape[0], dtype=bool)
    for d in np.unique(parameters):
        mine = parameters == d
        out[mine] = plausible_members(loglik[mine], level, int(d))
    return out


@dataclass(frozen=True, eq=False)
class ScoreCurve:
    """The estimator's variance along a one-parameter family of distributions for p(y | x).

    The ``tempered`` interval's ingredient: for each member of the family (the model's
    probabilities tempered, logits × a; built by ``activeeval.estimators.tempered``), the
    measure's value on the pool, the estimator's variance, the pool value's own spread and
    the labels' log-likelihood. Between members the fields are interpolated (``REFINE``
    points per step; the variances through their square roots). See the *Intervals* page of
    the documentation (``docs/how-it-works/intervals.md``).

    Attributes
    ----------
    values : ndarray of shape (k,)
        The measure's expected value G_a on the pool under each member.
    variances : ndarray of shape (k,)
        The estimator's variance V_a given the pool's labels, under each member.
    spreads : ndarray of shape (k,)
        The variance S_a of the pool's own value around ``values`` (the labels of a finite
        pool are one draw).
    loglik : ndarray of shape (k,)
        The log-likelihood under each member of the labels of the instances whose value is
        estimated (test mass p > 0: a group's own labels).
    parameters : ndarray of int, shape (k,), or None
        None (the default): one family of one parameter, the tempering factor, whose members
        are interpolated. Otherwise each member's family, named by its number of free
        parameters: the likelihood-ratio set is each family's own (members within the χ²
        quantile of that many degrees of freedom of the family's best), the sets joined, and
        no member is interpolated.
    REFINE : int
        Interpolated members per step of the family's grid (class constant, 4).

    See Also
    --------
    activeeval.estimators.inference.Estimate : Carries a curve in ``score`` for the
        ``tempered`` interval.

    Examples
    --------
    A family of three members; the labels make the first implausible:

    >>> import numpy as np
    >>> from activeeval.estimators.inference import ScoreCurve
    >>> curve = ScoreCurve(values=np.array([0.05, 0.10, 0.20]),
    ...                    variances=np.array([0.0004, 0.0009, 0.0025]),
    ...                    spreads=np.array([0.0001, 0.0002, 0.0004]),
    ...                    loglik=np.array([-40.0, -31.0, -30.0]))
    >>> curve.plausible(0.95).tolist()
    [False, True, True]
    >>> low, high = curve.join((0.09, 0.15), estimate=0.12, level=0.95)
    >>> print(f"({low:.3f}, {high:.3f})")
    (0.072, 0.218)
    """

    values: NDArray[np.float64]
    variances: NDArray[np.float64]
    spreads: NDArray[np.float64]
    loglik: NDArray[np.float64]
    parameters: NDArray[np.intp] | None = None

    #: Interpolated members per step of the family's grid.
    REFINE: ClassVar[int] = 4

    def fields(self) -> tuple[NDArray[np.float64], ...]:
        """The curve's four arrays, in the constructor's order.

        Returns
        -------
        tuple of ndarray
            ``(values, variances, spreads, loglik)``.
        """
        return self.values, self.variances, self.spreads, self.loglik

    def dense(self) -> ScoreCurve:
        """The members :meth:`bounds` looks at, as a curve that interpolates no further.

        Returns
        -------
        ScoreCurve
            The grid's members and the interpolated ones between them, one family
            (``parameters`` all 1), so that members of another family can join it
            (``activeeval.estimators.tempered.with_platt``).

        Raises
        ------
        AssertionError
            For a curve of several families (``parameters`` given), which is not
            interpolated.
        """
        assert self.parameters is None, "a curve of several families is not interpolated"
        values, variances, spreads, loglik = self._dense()
        ones = np.ones(values.shape[0], dtype=np.intp)
        return ScoreCurve(values, variances, spreads, loglik, parameters=ones)

    def _dense(self) -> tuple[NDArray[np.float64], ...]:
        if self.parameters is not None:  # members of several families: no line between
            loglik = np.where(np.isnan(self.loglik), -np.inf, self.loglik)
            return self.values, self.variances, self.spreads, loglik
        k = self.values.shape[0]
        at = np.linspace(0.0, k - 1.0, self.REFINE * (k - 1) + 1)
        grid = np.arange(k, dtype=float)
        # Standard deviations linearly: they span decades, and a zero stays a point.
        sds = (np.interp(at, grid, np.sqrt(x)) for x in (self.variances, self.spreads))
        variances, spreads = (x * x for x in sds)
        loglik = np.where(np.isnan(self.loglik), -np.inf, self.loglik)
        return np.interp(at, grid, self.values), variances, spreads, np.interp(at, grid, loglik)

    def _plausible(self, loglik: NDArray[np.float64], level: float) -> NDArray[np.bool_]:
        if self.parameters is None:
            return plausible_members(loglik, level)
        return plausible_by_family(loglik, level, self.parameters)

    def plausible(self, level: float) -> NDArray[np.bool_]:
        """The family's members the labels do not reject at ``level``.

        The likelihood-ratio set: members whose log-likelihood is within the χ²₁ quantile / 2
        of the best member's (with ``parameters``, each family's set, its degrees of freedom
        its parameters, joined).

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        ndarray of bool, shape (k,)
            True for the plausible members of the grid (not the interpolated ones).
        """
        return self._plausible(self.loglik, level)

    def bounds(
        self, estimate: ArrayLike, level: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The lowest and highest pool value θ the labels leave plausible, for each estimate.

        θ is kept when for some plausible member a (``plausible``, on the interpolated
        members) both |Ĝ − θ| ≤ z·√V_a (the score test at θ with the variance the member
        gives) and |θ − G_a| ≤ z·√S_a (θ a likely realization of the pool's value under the
        member), z the two-sided normal quantile at ``level``.

        Parameters
        ----------
        estimate : array-like
            Estimates Ĝ; the bounds are computed elementwise.
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        low, high : ndarray
            Of the shape of ``estimate``; NaN where no θ is kept (or no member fits the
            labels).
        """
        values, variances, spreads, loglik = self._dense()
        on = self._plausible(loglik, level)
        g = np.asarray(estimate, dtype=float)[..., None]
        if not on.any():  # no member fits the labels (a NaN likelihood)
            empty = np.full(g.shape[:-1], np.nan)
            return empty, empty.copy()
        z = float(_z_upper((1.0 - level) / 2.0))
        vals, half, band = values[on], z * np.sqrt(variances[on]), z * np.sqrt(spreads[on])
        lo = np.maximum(g - half, vals - band)
        hi = np.minimum(g + half, vals + band)
        ok = lo <= hi
        low = np.where(ok, lo, np.inf).min(axis=-1)
        high = np.where(ok, hi, -np.inf).max(axis=-1)
        empty = ~np.isfinite(low)
        return np.where(empty, np.nan, low), np.where(empty, np.nan, high)

    def join(self, base: tuple[float, float], estimate: float, level: float) -> tuple[float, float]:
        """The interval ``base`` joined with the score set's bounds at ``estimate``.

        Parameters
        ----------
        base : tuple of float
            The design-based interval (logit or Wald).
        estimate : float
            The estimate Ĝ.
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        low, high : float
            The smallest interval containing ``base`` and the score set (``bounds``);
            ``base`` itself where the set is empty or the estimate is NaN.
        """
        if math.isnan(estimate):
            return base
        sl, sh = (float(x) for x in self.bounds(estimate, level))
        return base if math.isnan(sl) else (min(base[0], sl), max(base[1], sh))


def _unit_box_lstsq(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """argmin over x ∈ [0, 1]^k of ‖a x − b‖² for a of full column rank (the ridge rows), so
    the minimizer is unique. For k ≤ 3 it is found without scipy.optimize (0.36 s to import,
    most of a session command's look): the unbounded solution when inside the box (scipy's
    ``lsq_linear`` returns it as is), else the best of the 3^k faces — each coordinate free,
    at 0 or at 1, the free ones solved by least squares with the bound ones moved to the right
    side — that is inside the box. The unique minimizer lies on its own face, where it is that
    face's solution, so the best feasible face solution is it. The solves are the ones BVLS
    ends with (``lstsq`` of the free columns against b − a·(bound values)), so the answer equals
    ``lsq_linear(..., method="bvls")``'s to the bit unless BVLS stepped onto a bound, where it
    leaves that coordinate within rounding of the bound instead of on it (tested)."""
    k = a.shape[1]
    x = np.asarray(np.linalg.lstsq(a, b, rcond=-1)[0], dtype=np.float64)
    if np.all((x >= 0.0) & (x <= 1.0)):
        return x
    if k > 3:
        from scipy import optimize  # here only: scipy.optimize is slow to import

        return np.asarray(optimize.lsq_linear(a, b, bounds=(0.0, 1.0), method="bvls").x)
    best, best_cost = x, math.inf
    for face in itertools.product((0, 1, 2), repeat=k):  # free, at 0, at 1
        state = np.array(face)
        if not state.any():
            continue  # the unbounded solution, outside the box
        cand = (state == 2).astype(float)
        free = np.flatnonzero(state == 0)
        if free.size:
            z: NDArray[np.float64] = np.linalg.lstsq(
                a[:, free], b - a.dot(cand * (state != 0)), rcond=-1
            )[0]
            if not np.all((z >= 0.0) & (z <= 1.0)):
                continue
            cand[free] = z
        r = a.dot(cand) - b
        cost = float(r @ r)
        if cost < best_cost:
            best, best_cost = cand, cost
    return best


def _box_least_squares(
    alpha: NDArray[np.float64], beta: NDArray[np.float64]
) -> NDArray[np.float64]:
    """argmin over λ ∈ [0, 1]^S of Σ (α − β λ)² for α (n, P), β (n, P, S); λ_s = 0 for a
    column that vanishes. Where the minimizer is not unique — collinear sources, e.g. squared
    loss under two Gaussian models, where E_A[ℓ_A − ℓ_B | x] = −E_B[ℓ_A − ℓ_B | x], so only
    λ_A − λ_B is identified — a ridge of 1e-10 of the mean column norm picks the smallest λ
    (the bounded solver alone returned both coefficients positive in 41 of 200 such cases,
    so each model's own estimate carried an arbitrary control-variate weight); elsewhere it
    moves λ by about 1e-10."""
    y = alpha.ravel()
    x = beta.reshape(-1, beta.shape[-1])
    coef = np.zeros(x.shape[1])
    norms = np.einsum("ij,ij->j", x, x)
    live = norms > 0
    if live.sum() == 1:
        j = int(np.flatnonzero(live)[0])
        coef[j] = np.clip(float(y @ x[:, j]) / norms[j], 0.0, 1.0)
    elif live.any():
        k = int(live.sum())
        ridge = np.sqrt(1e-10 * norms[live].mean()) * np.eye(k)
        coef[live] = np.clip(
            _unit_box_lstsq(np.vstack([x[:, live], ridge]), np.r_[y, np.zeros(k)]), 0.0, 1.0
        )
    return coef


# ------------------------------------------------------------------------- Estimate
@dataclass(frozen=True)
class Estimate:
    """A point estimate of a performance measure with its asymptotic standard error.

    Returned by ``estimate`` (and, as ``AssistedEstimate``, by the model-assisted
    estimator); ``confidence_interval`` gives its intervals.

    Attributes
    ----------
    estimate : float
        Ĝ, the self-normalized importance-sampling estimate (eq. 3.31).
    stderr : float
        Sandwich standard error √(S²_{n,q} / n) (Lemma 3.4).
    n_draws : int
        Draws used, repeated draws of one instance included.
    n_labels : int
        Distinct instances labeled.
    effective_n : float
        Kish's effective sample size (Σ v w)² / Σ (v w)²; equals ``n_draws`` for q = p, w = 1.
    binary_loss : bool
        Whether ℓ ∈ {0, 1}, which admits binomial intervals.
    level : float
        Confidence level of ``ci``.
    measure : str
        Name of the measure.
    census : bool
        True when every pool instance that can move the measure was labeled, so the value is
        computed exactly (stderr 0, a point interval, no warning).
    unit_weights : tuple of float or None
        The measure's ``Measure.unit_weights`` (F_β), for the logit interval's fallback at
        Ĝ ∈ {0, 1}.
    score : ScoreCurve or None
        The estimator's variance along the tempered family of the model's probabilities, for
        the ``tempered`` interval; None where it is not computed.
    attainable : Attainable or None
        Near a census of class probabilities, every value the measure can still take given
        the labels; every interval's ends move out to the nearest of them and in to their
        range. None elsewhere.

    See Also
    --------
    activeeval.estimators.inference.estimate : Compute one from labeled draws.
    activeeval.estimators.inference.Comparison : The paired result for two models.
    EvaluationResult : What ``evaluate`` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.inference import estimate
    >>> proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> est = estimate("error_rate", proba, [0, 1, 1, 0, 1])
    >>> print(f"{est.estimate:.2f} ± {est.stderr:.2f}")
    0.20 ± 0.18
    >>> low, high = est.confidence_interval(method="wilson")
    >>> print(f"({low:.3f}, {high:.3f})")
    (0.036, 0.624)
    """

    estimate: float
    stderr: float
    n_draws: int
    n_labels: int
    effective_n: float
    binary_loss: bool
    level: float = 0.95
    measure: str = ""
    census: bool = False
    unit_weights: tuple[float, float] | None = None
    score: ScoreCurve | None = field(default=None, compare=False)
    attainable: Attainable | None = field(default=None, compare=False, repr=False)

    def within_attainable(self) -> float:
        """The estimate, moved into the range of ``attainable`` where it is set (the pool's
        value lies there, so its error never grows).

        Returns
        -------
        float
            The estimate, or the nearest end of the attainable values' range.
        """
        if self.attainable is None or math.isnan(self.estimate):
            return self.estimate
        vals = self.attainable.values
        return float(min(max(self.estimate, vals[0]), vals[-1]))

    def confidence_interval(
        self, level: float | None = None, method: str = "wald", alternative: str = "two-sided"
    ) -> tuple[float, float]:
        """Interval at ``level``, two-sided or one-sided.

        Every method puts α/2 in each tail, so a one-sided bound at 1 − α is the end of its
        two-sided interval at 1 − 2α. The methods are derived on the *Intervals* page of the
        documentation (``docs/how-it-works/intervals.md``).

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); the result's ``level`` by default. A one-sided bound
            needs a level above 0.5.
        method : str
            ``wald`` (default): Ĝ ± z·stderr (Lemma 3.3). ``t``: Ĝ ± t_{n−1}·stderr·√(n/(n−1)),
            the one-sample t interval when q = p. ``logit``: for a measure in [0, 1], the Wald
            interval on the logit scale (``logit_interval``), Clopper–Pearson at Ĝ ∈ {0, 1}.
            ``wilson``, ``clopper-pearson``, ``agresti-coull``: binomial intervals for a 0/1
            loss on the effective count Ĝ·n_eff out of n_eff. ``tempered``: the logit (0/1
            loss) or Wald interval joined with the score interval along the tempered model
            (``score``), the default's; the logit or Wald interval alone where ``score`` is
            None.
        alternative : {"two-sided", "less", "greater"}
            scipy's convention: ``"less"`` gives the one-sided upper bound, the interval
            (−∞, upper]; ``"greater"`` the lower bound, [lower, ∞).

        Returns
        -------
        low, high : float
            The interval's ends (infinite on the open side of a one-sided bound; NaN for an
            undefined estimate; the point (Ĝ, Ĝ) on a census).

        Raises
        ------
        ShapeError
            When a binomial or logit method is asked of a measure with a continuous loss.
        InvalidLevelError
            When a one-sided bound is asked at a level of 0.5 or less.
        """
        lv = check_level(self.level if level is None else level)
        method = check_option(method, INTERVAL_METHODS, "method")
        low, high = _sided(lambda lv: self._two_sided(lv, method), lv, alternative)
        return (low, high) if self.attainable is None else _snapped(low, high, self.attainable)

    def _two_sided(self, lv: float, method: str) -> tuple[float, float]:
        g, se, n = self.estimate, self.stderr, self._rows
        if math.isnan(g):
            return math.nan, math.nan
        if self.census:
            return g, g
        if method == "tempered":
            base = self._two_sided(lv, "logit" if self.binary_loss else "wald")
            return base if self.score is None else self.score.join(base, g, lv)
        if method == "logit":
            if not self.binary_loss:
                raise _binomial_method_error(method, self.measure)
            if se == 0.0 and not (g in (0.0, 1.0) and self.effective_n > 0):
                _warn_degenerate(self.measure or "estimate", binary=True)
            low, high = logit_interval(g, se, lv, self.effective_n, unit_weights=self.unit_weights)
            return float(low), float(high)
        if method in ("wald", "t"):
            if se == 0.0:
                _warn_degenerate(self.measure or "estimate", self.binary_loss)
            return _wald_or_t(g, se, n, lv, method)
        if not self.binary_loss:
            raise _binomial_method_error(method, self.measure)
        n_eff = self.effective_n
        count = min(max(g * n_eff, 0.0), n_eff)
        low, high = proportion_confint(count, n_eff, lv, method)
        return float(low), float(high)

    @property
    def ci(self) -> tuple[float, float]:
        """Wald interval at ``level``."""
        return self.confidence_interval()

    @property
    def _rows(self) -> int:
        """Rows of the variance estimate (the t interval's n): one per draw."""
        return self.n_draws

    #: The fields its repr shows, a group per line (subclasses add lines).
    _REPR_LINES: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("measure", "estimate", "stderr"),
        ("ci", "level"),
        ("n_draws", "n_labels", "effective_n", "census"),
    )

    def __repr__(self) -> str:
        return _result_repr(self, *self._REPR_LINES)


class Attainable(NamedTuple):
    """The values a measure can still take given the labels (near a census): ``values``
    sorted and distinct, each within ``slack`` of the census value the same labels give
    (sums in another order round otherwise in the last bits)."""

    values: NDArray[np.float64]
    slack: float


def _snapped(low: float, high: float, att: Attainable) -> tuple[float, float]:
    """(low, high) with each finite end moved out to the nearest of the values the measure
    can take (the largest at most ``low``, the smallest at least ``high``) and in to their
    range, then out by their ``slack``. The pool's value is one of them, so the interval
    covers whenever it did."""
    if math.isnan(low) or math.isnan(high):
        return low, high
    values = att.values
    last = values.shape[0] - 1
    if math.isfinite(low):
        low = float(values[max(int(np.searchsorted(values, low, side="right")) - 1, 0)])
        low -= att.slack
    if math.isfinite(high):
        high = float(values[min(int(np.searchsorted(values, high, side="left")), last)])
        high += att.slack
    return low, high


def _wald_or_t(g: float, se: float, n: int, lv: float, method: str) -> tuple[float, float]:
    """Ĝ ± z·se (``wald``, Lemma 3.3), or Ĝ ± t_{n−1}·se·√(n/(n−1)) (``t``; unbounded for
    n < 2)."""
    if method == "wald":
        half = _z_upper((1 - lv) / 2) * se
    elif n < 2:
        return -math.inf, math.inf
    else:
        half = _t_upper((1 - lv) / 2, n - 1) * se * math.sqrt(n / (n - 1))
    return float(g - half), float(g + half)


def _binomial_method_error(method: str, measure: str) -> ShapeError:
    return ShapeError(
        f"method: {method!r} is an interval for a measure in [0, 1] and needs a 0/1 loss; "
        f"{measure or 'this'} measure has a continuous loss. Use method='wald' or method='t'."
    )


def logit_interval(
    estimate: ArrayLike,
    stderr: ArrayLike,
    level: float = 0.95,
    effective_n: ArrayLike | None = None,
    *,
    unit_weights: tuple[float, float] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wald interval on the logit scale for estimates of a measure in [0, 1], elementwise.

    logit Ĝ ± z·se/(Ĝ(1 − Ĝ)) (delta method), mapped back with the logistic function: it stays
    inside (0, 1) and is wider away from the nearer bound. Outside (0, 1) the Wald interval
    clipped to [0, 1] is returned. With ``effective_n``, an estimate of exactly 0 or 1 is
    joined with the Clopper–Pearson interval of the count Ĝ·n_eff out of n_eff. The
    derivation and the reasons for these choices are on the *Intervals* page of the
    documentation (``docs/how-it-works/intervals.md``).

    Parameters
    ----------
    estimate : array-like
        Estimates Ĝ in [0, 1].
    stderr : array-like
        Their standard errors, broadcastable against ``estimate``.
    level : float
        Confidence level 1 − α.
    effective_n : array-like, optional
        Effective sample sizes (Kish's n_eff), for the Clopper–Pearson fallback at Ĝ ∈ {0, 1};
        without it such an estimate with se = 0 gets a point.
    unit_weights : tuple of float, optional
        (c_min, c_max) of ``Measure.unit_weights`` for a measure whose units are not equally
        weighted (F_β): the fallback interval is then for the share u of units with ℓ = 1,
        mapped to the measure's scale by u/(u + c(1 − u)), c_min for the upper end and
        c_max for the lower one.

    Returns
    -------
    low, high : ndarray
        The interval's ends, of the broadcast shape of the inputs (0-d arrays for scalars).

    See Also
    --------
    activeeval.estimators.inference.proportion_confint : Binomial intervals for a count.
    activeeval.estimators.inference.Estimate : ``confidence_interval(method="logit")`` uses this.

    Examples
    --------
    >>> from activeeval.estimators.inference import logit_interval
    >>> low, high = logit_interval(0.05, 0.02)
    >>> print(f"({float(low):.3f}, {float(high):.3f})")
    (0.023, 0.107)

    No error among 20 draws: Clopper–Pearson instead of the point [0, 0].

    >>> low, high = logit_interval(0.0, 0.0, effective_n=20)
    >>> print(f"({float(low):.3f}, {float(high):.3f})")
    (0.000, 0.168)
    """
    n_arr = None if effective_n is None else np.asarray(effective_n, dtype=float)
    shape = np.broadcast_shapes(
        np.shape(estimate), np.shape(stderr), () if n_arr is None else n_arr.shape
    )
    g = np.broadcast_to(np.asarray(estimate, dtype=float), shape)
    se = np.broadcast_to(np.asarray(stderr, dtype=float), shape)
    z = float(_z_upper((1 - check_level(level)) / 2))
    inside = (g > 0) & (g < 1)
    gi = np.where(inside, g, 0.5)
    with np.errstate(divide="ignore", over="ignore"):
        logit = np.log(gi) - np.log1p(-gi)
        half = z * se / (gi * (1 - gi))
        low = np.where(inside, special.expit(logit - half), np.clip(g - z * se, 0.0, 1.0))
        high = np.where(inside, special.expit(logit + half), np.clip(g + z * se, 0.0, 1.0))
    if n_arr is not None:
        n = np.broadcast_to(n_arr, shape)
        edge = ((g == 0.0) | (g == 1.0)) & np.isfinite(n) & (n > 0)
        if np.any(edge):
            cp = proportion_confint(g[edge] * n[edge], n[edge], level, "clopper-pearson")
            wl, wh = (np.atleast_1d(x) for x in cp)
            if unit_weights is not None:
                c_min, c_max = unit_weights
                wh = wh / (wh + c_min * (1.0 - wh))
                wl = wl / (wl + c_max * (1.0 - wl))
            low[edge] = np.minimum(low[edge], wl)
            high[edge] = np.maximum(high[edge], wh)
    return low, high


def estimate(
    measure: Measure | str,
    predictions: Any,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    p: ArrayLike | None = None,
    indices: ArrayLike | None = None,
    level: float = 0.95,
) -> Estimate:
    """Estimate a generalized risk from labeled draws with known sampling probabilities.

    The self-normalized importance-sampling estimate Ĝ = Σ v w ℓ / Σ v w (eq. 3.31) with
    its sandwich standard error (Lemma 3.4), for draws from any q whose probabilities are
    known.

    Parameters
    ----------
    measure : Measure or str
        ``ErrorRate()``, ``FMeasure(beta=1)``, ... or a name such as ``"f1"``.
    predictions : Predictive, (n, K) array or (n,) array
        The model's output at the drawn instances: a predictive distribution, class
        probabilities, or point predictions (class labels; regression means).
    labels : array-like of shape (n,)
        True labels of the draws, in draw order (repeats included).
    q : array-like of shape (n,), optional
        Probability with which each draw was sampled (``q[idx]``); None for uniform draws.
    p : array-like of shape (n,), optional
        Pool weight of each draw (test distribution p(x)); None for a uniform pool.
    indices : array-like of shape (n,), optional
        Pool indices of the draws, to count distinct labeled instances.
    level : float
        Confidence level of the result's ``ci``.

    Returns
    -------
    Estimate
        The estimate, its standard error and sample sizes; NaN (with an
        ``UndefinedEstimateWarning``) when no draw has positive weight, e.g. recall before
        the first positive label.

    See Also
    --------
    evaluate : Choose q, draw, label and estimate in one call.
    activeeval.estimators.assisted.assisted_estimate : The model-assisted estimator.
    activeeval.estimators.inference.paired_test : Compare two models on the same draws.

    References
    ----------
    Thesis eq. 3.31 (estimator), Lemma 3.4 and S²_{n,q} after it (standard error).

    Examples
    --------
    A pool of 200 instances, 60 draws from q*:

    >>> import numpy as np
    >>> from activeeval.sampling import optimal_distribution, draw
    >>> from activeeval.estimators.inference import estimate
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> proba = np.column_stack([1 - p1, p1])
    >>> y = (rng.random(200) < p1).astype(int)  # the labels the oracle would give
    >>> q = optimal_distribution(proba, "error_rate")
    >>> idx = draw(q, 60, random_state=0)
    >>> est = estimate("error_rate", proba[idx], y[idx], q=q[idx], indices=idx)
    >>> print(f"{est.estimate:.3f} ± {est.stderr:.3f} from {est.n_labels} labels")
    0.222 ± 0.052 from 54 labels
    """
    s = _sample(measure, [predictions], labels, q, p, indices)
    lv = check_level(level)
    meas, pred = s.measure, s.predictions[0]
    w = meas.weight(pred, s.labels)
    g, u = _influence(s.v, w, meas.loss(pred, s.labels))
    if math.isnan(g):
        _warn_undefined(meas.name)
        se = math.nan
    else:
        se = float(math.sqrt(u @ u))
    return Estimate(
        estimate=g,
        stderr=se,
        n_draws=int(s.labels.shape[0]),
        n_labels=s.n_labels,
        effective_n=_kish_effective_n(s.v, w),
        binary_loss=meas.binary_loss,
        level=lv,
        measure=meas.name,
        unit_weights=meas.unit_weights,
    )


# ----------------------------------------------------------------------- comparisons
#: Differences within this fraction of the larger estimate are floating-point rounding: two
#: equal values summed in different orders (e.g. two models with the same value on a census,
#: whose per-instance terms differ) come out ~1e-16 apart, and with a near-zero standard error
#: that would read as a certain difference (p ≈ 0). Real differences are many orders larger.
TIE_TOLERANCE = 1e-12


def _difference(a: ArrayLike, b: ArrayLike) -> Any:
    """a − b, with differences within rounding (:data:`TIE_TOLERANCE`) set to an exact 0."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a - b
    tie = np.abs(d) <= TIE_TOLERANCE * np.maximum(np.abs(a), np.abs(b))
    out = np.where(tie, 0.0, d)
    return float(out) if out.ndim == 0 else out


def _rounding_zero(se: float, diff: float) -> float:
    """A standard error at the rounding level of the difference (influences that coincide
    up to floating-point error, e.g. 2 labels on which the paired losses agree) is 0."""
    return 0.0 if se <= 1e-12 * abs(diff) else se


def _wald_p_value(diff: float, se: float, what: str) -> float:
    """Two-sided Wald p-value (eq. 3.24); p = 1 for an exact zero difference."""
    if math.isnan(diff) or math.isnan(se):
        return math.nan
    if diff == 0.0:
        return 1.0
    if se == 0.0:
        _warn_degenerate(what)
    return _shifted_p(diff, se, 0.0, "two-sided")


def _better(diff: float, greater_is_better: bool) -> int:
    """Index (0 or 1) of the better model given Δ = G₀ − G₁; ties go to model 0."""
    if math.isnan(diff) or diff == 0.0:
        return 0
    return 0 if (diff > 0) == greater_is_better else 1


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of two models on the same draws: Δ = G[f₀] − G[f₁].

    Returned by ``paired_test`` and ``assisted_paired_test``; ``confidence_interval`` and
    ``test`` give intervals and p-values for other levels, sides and null values.

    Attributes
    ----------
    estimates : tuple of float
        (Ĝ[f₀], Ĝ[f₁]).
    difference : float
        Δ̂ = Ĝ[f₀] − Ĝ[f₁] (eq. 3.21).
    stderr : float
        Standard error of Δ̂ (eq. 3.22, generalized to ratio measures by their influence
        functions).
    p_value : float
        Two-sided Wald p-value of h₀: Δ = 0 (eq. 3.24).
    n_draws : int
        Draws used, repeats included.
    n_labels : int
        Distinct instances labeled.
    greater_is_better : bool
        Whether a larger value of the measure is better (for ``best``).
    level : float
        Confidence level of ``ci``.
    measure : str
        Name of the measure.
    feature_power : float or None
        With the model-assisted estimator given the pool's features: the tuned coefficient
        λ_s ∈ [0, 1] of the smoothed residuals (0 = not used: also when every feature is
        constant, or on a census, whose values are exact). None without features. λ_s > 0
        does not by itself show that the features are informative: the smoother works
        within groups of equal predictions, whose residual means it can pick up too.
    stderrs : tuple of float or None
        Each model's own standard error, from its influences on the same draws (the
        comparison's control variates and weights: valid, though tuned for Δ, not for it).
    census : bool
        Every unit with test mass is labeled: the values are exact.

    See Also
    --------
    activeeval.estimators.inference.paired_test : Compute one from labeled draws.
    activeeval.estimators.inference.MultipleComparison : The result for k models.
    ComparisonResult : What ``compare`` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.inference import paired_test
    >>> y = np.array([0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0])
    >>> a = np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0])
    >>> b = np.array([1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0])
    >>> res = paired_test("error_rate", [a, b], y)
    >>> print(f"{res.difference:.3f} ± {res.stderr:.3f}, best model {res.best}")
    -0.333 ± 0.136, best model 0
    >>> low, high = res.confidence_interval(alternative="less")  # upper bound of Δ
    >>> print(f"Δ ≤ {high:.3f}; p-value of Δ ≥ 0.1: {res.test(0.1, alternative='less'):.3f}")
    Δ ≤ -0.109; p-value of Δ ≥ 0.1: 0.001
    """

    estimates: tuple[float, float]
    difference: float
    stderr: float
    p_value: float
    n_draws: int
    n_labels: int
    greater_is_better: bool
    level: float = 0.95
    measure: str = ""
    feature_power: float | None = None
    #: Each model's own standard error, from its influences on the same draws (the
    #: comparison's control variates and weights: valid, though tuned for Δ, not for it).
    stderrs: tuple[float, float] | None = None
    #: The difference is exact: every unit with test mass is labeled (the values too), or,
    #: for a mean of per-instance losses, every unit on which the two models decide
    #: differently (the agreeing units add nothing to Δ; each model's estimate stays the
    #: estimator's: :func:`~.report.exact_difference`).
    census: bool = False

    @property
    def statistic(self) -> float:
        """Wald statistic Δ̂ / stderr (eq. 3.23)."""
        if self.difference == 0.0:
            return 0.0
        return (
            self.difference / self.stderr
            if self.stderr > 0
            else math.copysign(math.inf, self.difference)
        )

    @property
    def best(self) -> int:
        """Index of the model with the better estimate (0 on an exact tie)."""
        return _better(self.difference, self.greater_is_better)

    def confidence_interval(
        self, level: float | None = None, method: str = "wald", alternative: str = "two-sided"
    ) -> tuple[float, float]:
        """Interval for Δ at ``level``, two-sided or one-sided.

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); the result's ``level`` by default.
        method : {"wald", "t"}
            ``wald``: Δ̂ ± z·stderr (Sec. 3.2.2); ``t``: Δ̂ ± t_{n−1}·stderr·√(n/(n−1))
            (Bessel-corrected; infinite for n < 2).
        alternative : {"two-sided", "less", "greater"}
            As in ``Estimate.confidence_interval``: ``"less"`` is the upper bound of Δ, e.g.
            for a non-inferiority claim Δ ≤ margin; ``"greater"`` the lower bound.

        Returns
        -------
        low, high : float
            The interval's ends (infinite on the open side of a one-sided bound).
        """
        lv = check_level(self.level if level is None else level)
        method = check_option(method, ("wald", "t"), "method")
        return _sided(lambda lv: self._two_sided(lv, method), lv, alternative)

    def test(self, null: float = 0.0, alternative: str = "two-sided") -> float:
        """The Wald p-value of h₀: Δ = ``null`` (eq. 3.23–3.24 shifted by ``null``).

        Parameters
        ----------
        null : float
            The difference under h₀, a finite number.
        alternative : {"two-sided", "less", "greater"}
            h₁: Δ ≠ ``null`` (with ``null=0`` the result is ``p_value``), Δ < ``null``
            or Δ > ``null``.

        Returns
        -------
        float
            The p-value; with a zero standard error 0 or 1 by the sign of Δ̂ − ``null``
            (½ on an exact tie of a one-sided test).
        """
        alternative = check_option(alternative, ALTERNATIVES, "alternative")
        return _shifted_p(self.difference, self.stderr, _null(null), alternative)

    def _two_sided(self, lv: float, method: str) -> tuple[float, float]:
        return _difference_interval(self.difference, self.stderr, self.n_draws, lv, method)

    @property
    def ci(self) -> tuple[float, float]:
        """Wald interval for Δ at ``level``."""
        return self.confidence_interval()

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "difference", "stderr", "p_value"),
            ("ci", "level", "estimates", "best"),
            ("n_draws", "n_labels", "feature_power"),
        )


def _influence_matrix(s: _Sample) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Estimates (k,) and per-draw influences (n, k) of k models on one sample."""
    g = np.empty(len(s.predictions))
    u = np.empty((s.labels.shape[0], len(s.predictions)))
    for j, pred in enumerate(s.predictions):
        w = s.measure.weight(pred, s.labels)
        g[j], u[:, j] = _influence(s.v, w, s.measure.loss(pred, s.labels))
    return g, u


def paired_test(
    measure: Measure | str,
    predictions: Sequence[Any],
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    p: ArrayLike | None = None,
    indices: ArrayLike | None = None,
    level: float = 0.95,
    support_mass: float = 1.0,
) -> Comparison:
    """Paired Wald test of two models evaluated on the same labeled draws.

    The influence of Δ̂ on draw i is u₀ᵢ − u₁ᵢ, so models that agree on every draw give
    Δ̂ = 0 and p = 1.

    Parameters
    ----------
    measure : Measure or str
        The measure compared, e.g. ``"error_rate"`` or ``"f1"``.
    predictions : sequence of two
        Each model's output at the drawn instances, as in ``estimate``.
    labels : array-like of shape (n,)
        True labels of the draws, in draw order (repeats included).
    q : array-like of shape (n,), optional
        Probability with which each draw was sampled; None for uniform draws.
    p : array-like of shape (n,), optional
        Pool weight of each draw; None for a uniform pool.
    indices : array-like of shape (n,), optional
        Pool indices of the draws, to count distinct labeled instances.
    level : float
        Confidence level of the result's ``ci``.
    support_mass : float
        The pool mass P_p(q > 0) when q is zero on part of the pool (see Notes); 1 by
        default.

    Returns
    -------
    Comparison
        Δ̂ = Ĝ[f₀] − Ĝ[f₁], its standard error and the two-sided p-value.

    Raises
    ------
    ShapeError
        When ``predictions`` does not hold exactly two models, ``support_mass`` is outside
        (0, 1], or it is below 1 for a measure that is not a regular risk.

    See Also
    --------
    compare : Choose q, draw, label and compare in one call.
    activeeval.estimators.inference.multiple_comparison : k models at once.
    activeeval.estimators.assisted.assisted_paired_test : The model-assisted comparison.

    Notes
    -----
    For a regular risk whose loss difference δ vanishes where q = 0 (``active_neq`` samples
    only where the models disagree), the self-normalized Δ̂ estimates E[δ | q > 0], and
    multiplying Δ̂ and its standard error by ``support_mass`` gives the whole-pool difference
    (thesis Sec. 5.2.2); the p-value is unchanged.

    References
    ----------
    Thesis eq. 3.21 (Δ̂), eq. 3.22 (its variance), eq. 3.24 (p-value).

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.inference import paired_test
    >>> y = np.array([0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0])
    >>> a = np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0])
    >>> b = np.array([1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0])
    >>> res = paired_test("error_rate", [a, b], y)
    >>> print(f"Δ = {res.difference:.3f}, p = {res.p_value:.3f}")
    Δ = -0.333, p = 0.014
    """
    if len(predictions) != 2:
        raise ShapeError(
            f"predictions: a paired test compares exactly 2 models, got {len(predictions)}; "
            "use multiple_comparison for more."
        )
    s = _sample(measure, predictions, labels, q, p, indices)
    lv = check_level(level)
    if not 0.0 < support_mass <= 1.0:
        raise ShapeError(f"support_mass: must lie in (0, 1], got {support_mass}.")
    if support_mass < 1.0 and not s.measure.regular:
        raise ShapeError("support_mass: rescaling applies to regular risks only.")
    g, u = _influence_matrix(s)
    g = g * support_mass if support_mass < 1.0 else g
    u = u * support_mass if support_mass < 1.0 else u
    diff = _difference(g[0], g[1])
    if math.isnan(diff):
        _warn_undefined(s.measure.name)
        se = math.nan
    else:
        du = u[:, 0] - u[:, 1]
        se = _rounding_zero(float(math.sqrt(du @ du)), diff)  # identical models: du ≡ 0, p = 1
    own = np.sqrt(np.sum(u * u, axis=0))
    return Comparison(
        estimates=(float(g[0]), float(g[1])),
        difference=diff,
        stderr=se,
        p_value=_wald_p_value(diff, se, s.measure.name),
        n_draws=int(s.labels.shape[0]),
        n_labels=s.n_labels,
        greater_is_better=s.measure.greater_is_better,
        level=lv,
        measure=s.measure.name,
        stderrs=(float(own[0]), float(own[1])),
    )


def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values (Holm, 1979)."""
    pv = np.asarray(p_values, dtype=float)
    k = pv.shape[0]
    order = np.argsort(pv, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (k - np.arange(k)) * pv[order]))
    out = np.empty(k)
    out[order] = stepped
    return out


@dataclass(frozen=True, eq=False)
class _Tukey:
    """What Tukey's studentized range (``scipy.stats.studentized_range``, n − 1 degrees of
    freedom) reads for a :class:`MultipleComparison`: each pair's statistic ``q`` (``ties``:
    a zero difference, p = 1) and the range statistic, whose p-value is ``range_p`` where it
    is known without the distribution; ``known``: each pair's p-value where it is known so
    (a census: the exact values differ, 0, or tie, 1)."""

    q: NDArray[np.float64]
    ties: NDArray[np.bool_]
    k: int
    df: int
    range_stat: float
    range_p_known: float | None
    known: NDArray[np.float64] | None = None

    def pairs(self) -> NDArray[np.float64]:
        if self.known is not None:
            return self.known
        from scipy import stats  # here only: scipy.stats is slow to import

        p = np.where(
            np.isnan(self.q),
            np.nan,
            stats.studentized_range.sf(np.nan_to_num(self.q, posinf=1e6), self.k, self.df),
        )
        return np.where(self.ties, 1.0, p)

    def range_p(self) -> float:
        if self.range_p_known is not None:
            return self.range_p_known
        from scipy import stats  # here only: scipy.stats is slow to import

        return float(stats.studentized_range.sf(self.range_stat, self.k, self.df))


@dataclass(frozen=True, eq=False)
class MultipleComparison:
    """All pairwise comparisons of k models on the same draws (thesis Sec. 3.2.3).

    Returned by ``multiple_comparison`` and ``assisted_multiple_comparison``.

    Attributes
    ----------
    estimates, stderrs : ndarray of shape (k,)
        Each model's estimate and standard error.
    pairwise : pandas.DataFrame
        One row per pair (a < b): ``difference`` = Ĝ_a − Ĝ_b, ``stderr``, ``statistic``,
        unadjusted Wald ``p_value`` and the adjusted ``p_holm``, ``p_bonferroni``,
        ``p_tukey`` (studentized range with n − 1 degrees of freedom).
    range_statistic, range_p_value : float
        Tukey's range test of h₀: all k measures equal — √2·(max Ĝ − min Ĝ)/(S_k·√(n/(n−1)))
        with S_k² the mean squared pairwise standard error (Bessel-corrected, as the ``t``
        intervals). The studentized range (``p_tukey``, ``range_p_value``) is computed when
        first read: it needs ``scipy.stats``, slow to import, which a session's status or a
        stopping rule's look does not.
    n_draws : int
        Draws used, repeats included.
    n_labels : int
        Distinct instances labeled.
    greater_is_better : bool
        Whether a larger value of the measure is better (for ``ranking`` and ``best``).
    measure : str
        Name of the measure.
    feature_power : float or None
        As for ``Comparison``: λ_s of the pool features' smoothed residuals, tuned for
        all pairwise differences at once; None without features.
    census : bool
        Every instance with test mass is labeled: the estimates are the models' exact
        values, every standard error 0, and each pair's p-value 0 (1 on an exact tie).

    See Also
    --------
    activeeval.estimators.inference.multiple_comparison : Compute one from labeled draws.
    activeeval.estimators.inference.Comparison : The result for two models.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.inference import multiple_comparison
    >>> y = np.array([0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0])
    >>> models = [np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0]),
    ...           np.array([1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0]),
    ...           np.array([1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1])]
    >>> res = multiple_comparison("error_rate", models, y)
    >>> res.ranking.tolist()
    [0, 1, 2]
    >>> holm, tukey = res.adjusted_p_value(0, 1), res.adjusted_p_value(0, 1, "tukey")
    >>> print(f"Holm {holm:.3f}, Tukey {tukey:.3f}")
    Holm 0.029, Tukey 0.091
    """

    estimates: NDArray[np.float64]
    stderrs: NDArray[np.float64]
    #: The pairwise table but ``p_tukey``, and what the studentized range reads.
    _table: pd.DataFrame
    range_statistic: float
    _tukey: _Tukey
    n_draws: int
    n_labels: int
    greater_is_better: bool
    measure: str = ""
    feature_power: float | None = None
    census: bool = False

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle; one pickled before the studentized range waited until read holds the
        whole table (``pairwise``) and ``range_p_value``: kept as the computed values."""
        if "pairwise" in state:
            state = dict(state)
            table = state.pop("pairwise")
            state.update(_with_tukey=table, _table=table.drop(columns="p_tukey"), _tukey=None,
                         _range_p=state.pop("range_p_value"))  # fmt: skip
        self.__dict__.update(state)

    @property
    def pairwise(self) -> pd.DataFrame:
        """The pairwise table (Attributes), ``p_tukey`` computed on the first read."""
        done = self.__dict__.get("_with_tukey")
        if done is None:
            done = self._table.assign(p_tukey=self._tukey.pairs())
            object.__setattr__(self, "_with_tukey", done)
        return done

    @property
    def range_p_value(self) -> float:
        """Tukey's range test's p-value (Attributes), computed on the first read."""
        done = self.__dict__.get("_range_p")
        if done is None:
            done = self._tukey.range_p()
            object.__setattr__(self, "_range_p", done)
        return float(done)

    @property
    def k(self) -> int:
        """Number of models compared."""
        return int(self.estimates.shape[0])

    @property
    def ranking(self) -> NDArray[np.intp]:
        """Model indices from best to worst estimate."""
        key = -self.estimates if self.greater_is_better else self.estimates
        return np.argsort(key, kind="stable")

    @property
    def best(self) -> int:
        """Index of the model with the best estimate."""
        return int(self.ranking[0])

    def adjusted_p_value(self, a: int, b: int, method: str = "holm") -> float:
        """Adjusted p-value of the pair (a, b).

        Parameters
        ----------
        a, b : int
            Indices of the two models, in either order.
        method : {"holm", "bonferroni", "tukey", "none"}
            The adjustment; ``none`` gives the unadjusted Wald p-value.

        Returns
        -------
        float
            The pair's p-value from ``pairwise``.

        Raises
        ------
        ShapeError
            When (a, b) is not a pair of distinct models among the k.
        """
        method = check_option(method, ADJUSTMENTS, "method")
        col = "p_value" if method == "none" else f"p_{method}"
        lo, hi = min(a, b), max(a, b)
        table = self.pairwise if method == "tukey" else self._table
        row = table[(table["a"] == lo) & (table["b"] == hi)]
        if row.empty:
            raise ShapeError(f"a, b: no pair ({a}, {b}) among {self.k} models.")
        return float(row[col].iloc[0])

    def best_is_significant(self, alpha: float = 0.05, method: str = "holm") -> bool:
        """Whether the best model beats every other one at family-wise level ``alpha``.

        Parameters
        ----------
        alpha : float
            Family-wise significance level in (0, 1).
        method : {"holm", "bonferroni", "tukey", "none"}
            The adjustment of the pairwise p-values (``adjusted_p_value``).

        Returns
        -------
        bool
            True when every pair (best, j) has an adjusted p-value below ``alpha``.
        """
        alpha = check_level(alpha, "alpha")
        best = self.best
        return all(
            self.adjusted_p_value(best, j, method) < alpha for j in range(self.k) if j != best
        )

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "k", "best", "n_draws", "n_labels"),
            ("estimates",),
            ("stderrs",),
            ("range_statistic", "range_p_value", "feature_power"),
        )


def multiple_comparison(
    measure: Measure | str,
    predictions: Sequence[Any],
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    p: ArrayLike | None = None,
    indices: ArrayLike | None = None,
) -> MultipleComparison:
    """Compare k ≥ 2 models on the same labeled draws (thesis Sec. 3.2.3).

    Pairwise Wald tests with Holm and Bonferroni adjustment, and the Tukey range test, from
    the k-column influence matrix of the models' estimates on the same draws.

    Parameters
    ----------
    measure : Measure or str
        The measure compared.
    predictions : sequence of k ≥ 2
        Each model's output at the drawn instances, as in ``estimate``.
    labels : array-like of shape (n,)
        True labels of the draws, in draw order (repeats included).
    q : array-like of shape (n,), optional
        Probability with which each draw was sampled; None for uniform draws.
    p : array-like of shape (n,), optional
        Pool weight of each draw; None for a uniform pool.
    indices : array-like of shape (n,), optional
        Pool indices of the draws, to count distinct labeled instances.

    Returns
    -------
    MultipleComparison
        Estimates, the pairwise table with adjusted p-values, and the range test.

    Raises
    ------
    ShapeError
        When fewer than two models are given.

    See Also
    --------
    activeeval.estimators.inference.paired_test : Two models.
    activeeval.estimators.assisted.assisted_multiple_comparison : The model-assisted version.
    compare : Choose q, draw, label and compare in one call.

    References
    ----------
    Holm (1979), A simple sequentially rejective multiple test procedure. Tukey (1953);
    ``scipy.stats.studentized_range``.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.inference import multiple_comparison
    >>> y = np.array([0, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0])
    >>> models = [np.array([0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0]),
    ...           np.array([1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0]),
    ...           np.array([1, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1])]
    >>> res = multiple_comparison("error_rate", models, y)
    >>> np.round(res.estimates, 3).tolist()
    [0.083, 0.417, 0.667]
    >>> res.best, res.best_is_significant(0.05), res.best_is_significant(0.05, method="tukey")
    (0, True, False)
    """
    k = len(predictions)
    if k < 2:
        raise ShapeError(f"predictions: need at least 2 models to compare, got {k}.")
    s = _sample(measure, predictions, labels, q, p, indices)
    g, u = _influence_matrix(s)
    return _multiple_from_influence(g, u, s.n_labels, s.measure)


def _multiple_from_influence(
    g: NDArray[np.float64],
    u: NDArray[np.float64],
    n_labels: int,
    measure: Measure,
    n_draws: int | None = None,
    census: bool = False,
) -> MultipleComparison:
    """The pairwise table and range test from k estimates and their per-row influences
    u (n, k): Var[Ĝ_a − Ĝ_b] = Σ_i (u_ia − u_ib)² (any linearized estimator; rows are draws,
    or distinct instances of a without-replacement sample, then ``n_draws`` counts draws).
    ``census``: ``g`` are the exact values (every instance with test mass labeled) and u is
    zero — each pair's p-value 0, 1 on an exact tie, with no warning of a zero standard
    error (it is exact, not degenerate)."""
    k = int(g.shape[0])
    n = int(u.shape[0])
    if np.isnan(g).any():
        _warn_undefined(measure.name, census=census)
    a_idx, b_idx = np.triu_indices(k, 1)
    diff = _difference(g[a_idx], g[b_idx])
    du = u[:, a_idx] - u[:, b_idx]
    se = np.sqrt(np.einsum("ij,ij->j", du, du))
    if census:  # as _exact_comparison: exact values differ or tie
        pv = np.where(np.isnan(diff), np.nan, np.where(diff == 0.0, 1.0, 0.0))
    else:
        pv = np.array(
            [_wald_p_value(float(d), float(e), measure.name) for d, e in zip(diff, se, strict=True)]
        )
    # Each pair has its own paired standard error with n − 1 degrees of freedom, so the
    # studentized range is referred to n − 1 (conservative next to the pooled (n−1)(k−1)).
    df = max(n - 1, 1)
    # The studentized range is referred to a t-type distribution, so its scale estimate carries
    # Bessel's correction (as the `t` intervals do); with k = 2 and q = p this is exactly the
    # paired t-test: studentized_range(2, n-1).sf(√2|t|) = 2 t_{n-1}.sf(|t|).
    bessel = math.sqrt(n / (n - 1)) if n > 1 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        wald_stat = np.where(diff == 0.0, 0.0, diff / se)
        q_stat = np.where(diff == 0.0, 0.0, math.sqrt(2.0) * np.abs(diff) / (se * bessel))
    table = pd.DataFrame(
        {
            "a": a_idx,
            "b": b_idx,
            "difference": diff,
            "stderr": se,
            "statistic": wald_stat,
            "p_value": pv,
            # an undefined pair counts as p = 1 in the others' step-down, and is NaN itself
            "p_holm": np.where(np.isnan(pv), np.nan, holm_adjust(np.nan_to_num(pv, nan=1.0))),
            "p_bonferroni": np.minimum(1.0, pv * len(pv)),
        }
    )
    s_k = math.sqrt(float(np.mean(se**2))) if se.size else math.nan
    rng = float(np.nanmax(g) - np.nanmin(g)) if not np.isnan(g).all() else math.nan
    range_p: float | None = None  # None: the studentized range's, when first read
    if math.isnan(rng) or rng == 0.0:
        range_stat, range_p = 0.0, 1.0 if rng == 0.0 else math.nan
    elif s_k == 0.0:
        range_stat, range_p = math.inf, 0.0
    else:
        range_stat = math.sqrt(2.0) * rng / (s_k * bessel)
    stderrs = np.sqrt(np.einsum("ij,ij->j", u, u))
    if census:  # exact where defined
        stderrs = np.where(np.isnan(g), np.nan, stderrs)
        table["stderr"] = np.where(np.isnan(diff), np.nan, se)
    return MultipleComparison(
        estimates=g,
        stderrs=stderrs,
        _table=table,
        range_statistic=range_stat,
        _tukey=_Tukey(q_stat, diff == 0.0, k, df, range_stat, range_p, pv if census else None),
        n_draws=n if n_draws is None else n_draws,
        n_labels=n_labels,
        greater_is_better=measure.greater_is_better,
        measure=measure.name,
        census=census,
    )
