"""Estimators of multi-class measures that are functions of several ratios.

A :class:`~activeeval.measures.ClasswiseMeasure` G = g(TP, PP, T) is estimated by plugging
estimated confusion counts into g; its standard error is the jackknife's over the draws
(default) or the delta method's sandwich variance (Lemma 3.4) of the linearized per-draw
term ∇g · c_i.

With draws i from q and v_i = p(x_i) / q(x_i), the thesis's self-normalized estimator
(``estimator="snis"``, eq. 3.31 applied to each count) is Ŝ = Σ v_i c_i / Σ v_i. The
model-assisted one (``"assisted"``) adds two control variates with known pool means: the
model's expected TP and T (m_i = E_model[c | x_i], pool mean M) and the predicted positives
PP themselves (they depend on f alone, so their pool mean is known):
TP̂, T̂ = Σ v c / Σ v + λ (M − Σ v m / Σ v) and P̂P = Σ v c_PP / Σ v + λ_PP (PP − Σ v c_PP / Σ v),
with (λ, λ_PP) ∈ [0, 1]² the least-squares coefficients of the linearized terms
(λ = λ_PP = 0 is the thesis's estimator; λ_PP = 1 takes PP exactly, which loses the ratio
estimator's cancellation when TP and PP move together, as for precision). A per-class
measure tunes its pair per class.

For the per-draw linearized terms split as a_i (TP, T), d_i (PP) and b_i = ∇g · m_i, centred
by their self-normalized means, the linearized variance is
Σ v_i² (a_i + (1 − λ_PP) d_i − λ b_i)² / (Σ v_i)².
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._chunks import row_chunks
from .._validation import check_level, check_option, pool_distribution
from ..errors import ShapeError
from ..measures import (
    BalancedAccuracy,
    ClasswiseMeasure,
    Counts,
    as_categorical,
    decision_index,
    get_measure,
    pool_counts,
)
from ..methods import ESTIMATORS, VARIANCE_METHODS
from ..predictive import Categorical, as_predictive
from .inference import (
    Comparison,
    Estimate,
    _box_least_squares,
    _difference,
    _result_repr,
    _rounding_zero,
    _sided,
    _wald_or_t,
    _wald_p_value,
    _warn_degenerate,
    logit_interval,
    proportion_confint,
)

__all__ = ["ClasswiseEstimate", "PerClassEstimate", "classwise_estimate"]


@dataclass(frozen=True)
class ClasswiseEstimate(Estimate):
    """An estimate of a multi-class average (macro or weighted F_β, balanced accuracy).

    An :class:`~activeeval.estimators.inference.Estimate` whose standard error is the
    jackknife's (or the delta method's); intervals ``logit`` (the default: the Wald interval on
    the logit scale, inside (0, 1)), ``wald`` and ``t``; the binomial intervals need a 0/1
    loss and are refused.

    Attributes
    ----------
    coef : float
        The model-assisted estimator's control-variate coefficient λ (0 for ``snis``).

    See Also
    --------
    classwise_estimate : Computes one from labeled draws.
    PerClassEstimate : The per-class vector.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.classwise import classwise_estimate
    >>> rng = np.random.default_rng(0)
    >>> proba = rng.dirichlet([1.0, 1.0, 1.0], size=300)
    >>> y = np.array([rng.choice(3, p=row) for row in proba])
    >>> draws = rng.integers(0, 300, size=120)
    >>> est = classwise_estimate("macro_f1", proba, draws, y[draws])
    >>> low, high = est.confidence_interval()
    >>> bool(low < est.estimate < high)
    True
    """

    coef: float = 0.0

    def confidence_interval(
        self, level: float | None = None, method: str = "logit", alternative: str = "two-sided"
    ) -> tuple[float, float]:
        """Interval at ``level``, two-sided or one-sided.

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); the estimate's ``level`` by default.
        method : {"logit", "wald", "t"}, default "logit"
            The Wald interval on the logit scale, joined with Wilson's where the estimate
            rests on few effective successes or failures (the default, what ``evaluate``
            reports); Ĝ ± z·stderr; or that with t_{n−1} quantiles.
        alternative : {"two-sided", "less", "greater"}
            scipy's convention, as for :meth:`Estimate.confidence_interval`.

        Returns
        -------
        low, high : float
            The interval's ends.
        """
        return super().confidence_interval(level, method, alternative)

    @property
    def ci(self) -> tuple[float, float]:
        """Logit interval at ``level``."""
        return self.confidence_interval()

    def _two_sided(self, lv: float, method: str) -> tuple[float, float]:
        if method in ("logit", "tempered"):  # no tempered family here: the logit interval
            return _logit(self.estimate, self.stderr, lv, self.census, self.measure,
                          self.effective_n)  # fmt: skip
        return super()._two_sided(lv, method)


@dataclass(frozen=True)
class PerClassEstimate:
    """Per-class estimates of precision, recall or F_β, each with its standard error.

    Attributes
    ----------
    classes : tuple
        The model's classes, in the order of the arrays.
    estimates : ndarray of shape (K,)
        Each class's estimate (NaN where undefined: precision of a class never predicted,
        recall of a class the labels have not shown).
    stderrs : ndarray of shape (K,)
        Each one's standard error (delta method; 0 on a census).
    n_draws, n_labels : int
        Draws used and distinct instances labeled.
    effective_n : float
        Kish's effective sample size of the importance weights.
    level : float
        Confidence level of ``ci``.
    measure : str
        The measure's name.
    census : bool
        True when every pool instance was labeled (exact values, point intervals).
    coef : ndarray of shape (K,)
        Each class's control-variate coefficient λ (0 for ``snis``).
    unit_n : ndarray of shape (K,)
        Kish's effective size of the draws that can move each class's value (its members
        for recall, its predictions for precision, either for F_β).

    See Also
    --------
    classwise_estimate : Computes one from labeled draws.
    activeeval.PerClassResult : What ``evaluate`` returns for a per-class measure.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.classwise import classwise_estimate
    >>> proba = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    >>> est = classwise_estimate("per_class_recall", proba, [0, 1, 2, 3], [0, 1, 1, 0])
    >>> est.estimates.tolist(), est.census
    ([1.0, 0.5, nan], True)
    """

    classes: tuple[Any, ...]
    estimates: NDArray[np.float64]
    stderrs: NDArray[np.float64]
    n_draws: int
    n_labels: int
    effective_n: float
    level: float = 0.95
    measure: str = ""
    census: bool = False
    coef: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    unit_n: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    def confidence_interval(
        self,
        level: float | None = None,
        method: str = "logit",
        alternative: str = "two-sided",
        adjust: str | None = None,
    ) -> NDArray[np.float64]:
        """Each class's interval at ``level``, two-sided or one-sided.

        Parameters
        ----------
        level : float, optional
            Confidence level in (0, 1); the result's ``level`` by default.
        method : {"logit", "wald", "t"}, default "logit"
            The Wald interval on the logit scale (inside (0, 1)); Ĝ_k ± z·stderr_k; or that
            with t_{n−1} quantiles.
        alternative : {"two-sided", "less", "greater"}
            scipy's convention, as for :meth:`Estimate.confidence_interval`.
        adjust : {None, "bonferroni"}
            None: marginal intervals (each covers its class at ``level``);
            ``"bonferroni"``: simultaneous ones (all K cover together at ``level`` or more),
            each at 1 − (1 − level) / K.

        Returns
        -------
        ndarray of shape (K, 2)
            Low and high ends per class (NaN for an undefined estimate).
        """
        lv = check_level(self.level if level is None else level)
        method = check_option(method, ("logit", "wald", "t"), "method")
        if adjust is not None and check_option(adjust, ("bonferroni",), "adjust"):
            lv = 1.0 - (1.0 - lv) / max(len(self.classes), 1)
        out = np.empty((len(self.classes), 2))
        for k, (g, se, ne) in enumerate(
            zip(self.estimates, self.stderrs, self.unit_n, strict=True)
        ):
            out[k] = _sided(partial(self._at, float(g), float(se), method, float(ne)), lv,
                            alternative)  # fmt: skip
        return out

    def _at(self, g: float, se: float, method: str, n_eff: float, lv: float) -> tuple[float, float]:
        return self._two_sided(g, se, lv, method, n_eff)

    def _two_sided(
        self, g: float, se: float, lv: float, method: str, n_eff: float
    ) -> tuple[float, float]:
        if method == "logit":
            return _logit(g, se, lv, self.census, self.measure, n_eff)
        if math.isnan(g):
            return math.nan, math.nan
        if self.census:
            return g, g
        if se == 0.0:
            _warn_degenerate(self.measure or "estimate")
        return _wald_or_t(g, se, self.n_draws, lv, method)

    @property
    def ci(self) -> NDArray[np.float64]:
        """Logit intervals at ``level``, shape (K, 2)."""
        return self.confidence_interval()

    _REPR_LINES: ClassVar[tuple[tuple[str, ...], ...]] = (
        ("measure", "classes"),
        ("estimates", "stderrs", "level"),
        ("n_draws", "n_labels", "effective_n", "census"),
    )

    def __repr__(self) -> str:
        return _result_repr(self, *self._REPR_LINES)


#: Below this many effective successes or failures (min(Ĝ, 1 − Ĝ)·n_eff, the normal
#: approximation's rule of thumb) the interval is joined with Wilson's at n_eff.
FEW = 5.0


def _logit(
    g: float, se: float, lv: float, census: bool, name: str, n_eff: float
) -> tuple[float, float]:
    """The Wald interval on the logit scale (``logit_interval``); a point on a census.

    Where Ĝ rests on few effective successes or failures (fewer than :data:`FEW`) the
    plug-in standard error is unreliable — a class whose 18 labeled members are all
    recalled has se = 0 — so the interval is joined with the Wilson interval of the
    effective count Ĝ·n_eff out of n_eff, n_eff the Kish size of the draws that can move
    the estimate (the class's members for recall, its predictions for precision, both
    for F_β). Without any such draw the sample says nothing: (0, 1)."""
    if math.isnan(g):
        return math.nan, math.nan
    if census:
        return g, g
    if not n_eff > 0:
        return 0.0, 1.0
    gc = min(max(g, 0.0), 1.0)
    if not math.isfinite(se):  # e.g. the jackknife left a class without its only draw
        low, high = (float(x) for x in proportion_confint(gc * n_eff, n_eff, lv, "wilson"))
        return low, high
    low, high = (float(x) for x in logit_interval(g, se, lv))
    if min(gc, 1.0 - gc) * n_eff < FEW:
        wl, wh = proportion_confint(gc * n_eff, n_eff, lv, "wilson")
        low, high = min(low, float(wl)), max(high, float(wh))
    elif se == 0.0:
        _warn_degenerate(name or "estimate")
    return low, high


def classwise_estimate(
    measure: ClasswiseMeasure | str,
    predictive: Any,
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None = None,
    *,
    pool_weights: ArrayLike | None = None,
    prediction: ArrayLike | None = None,
    estimator: str = "assisted",
    level: float = 0.95,
    variance: str = "jackknife",
) -> ClasswiseEstimate | PerClassEstimate:
    """Estimate a multi-class measure from labeled draws.

    Parameters
    ----------
    measure : ClasswiseMeasure or str
        ``"macro_f1"``, ``"weighted_f1"``, ``"balanced_accuracy"``, ``"per_class_f1"``,
        ``"per_class_precision"``, ``"per_class_recall"`` or such a measure object.
    predictive : (m, K) array or Categorical
        The model's class probabilities over the whole pool (they give the decision f(x)
        and, for the model-assisted estimator, the control variate).
    indices : array-like of int, shape (n,)
        The pool index of each draw, repeats included.
    labels : array-like of shape (n,)
        Each draw's label.
    q : array-like of shape (n,), optional
        The probability with which each draw was drawn; the pool distribution by default
        (uniform draws with replacement).
    pool_weights : array-like of shape (m,), optional
        The test distribution over the pool (up to a constant); uniform by default.
    prediction : array-like of shape (m,), optional
        The decision f(x) the measure scores, when it is not the most probable class.
    estimator : {"assisted", "snis"}, default "assisted"
        The model-assisted estimator or the thesis's self-normalized one (module docstring).
    level : float, default 0.95
        Confidence level of the intervals.
    variance : {"jackknife", "linearized"}, default "jackknife"
        The leave-one-draw-out jackknife (the coefficients kept), or the delta method's sandwich
        variance. The jackknife is the default: with a few labels of a rare class the
        linearization understates the variance of its ratios (docs/results/classwise.md).

    Returns
    -------
    ClasswiseEstimate or PerClassEstimate
        One number for an average, one per class for a ``PerClass`` measure; exact (a
        census) once every pool instance with test mass is labeled.

    Raises
    ------
    ShapeError
        When ``indices``, ``labels`` and ``q`` differ in length, or a draw's q is not
        positive.
    LabelSpaceError
        When a label is not one of the model's classes.

    See Also
    --------
    evaluate : A whole campaign: q*, the draws and this estimate.
    activeeval.estimators.inference.estimate : The estimator of a single ratio.

    Examples
    --------
    Every instance labeled once is a census, equal to scikit-learn's metric:

    >>> import numpy as np
    >>> from activeeval.estimators.classwise import classwise_estimate
    >>> proba = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    >>> est = classwise_estimate("macro_f1", proba, [0, 1, 2, 3], [0, 1, 1, 0])
    >>> round(est.estimate, 4)  # f1_score([0, 1, 1, 0], [0, 1, 2, 0], average="macro")
    0.5556
    """
    meas = get_measure(measure)
    if not isinstance(meas, ClasswiseMeasure):
        raise ShapeError(
            f"measure: classwise_estimate estimates the multi-class averages and per-class "
            f"measures, not {meas.name}; use activeeval.estimators.inference.estimate."
        )
    cat = as_categorical(as_predictive(predictive), meas.name)
    if getattr(meas, "classes", None) is None:
        meas = meas.bind(cat)
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    lv = check_level(level)
    p = pool_distribution(cat.n, pool_weights)
    f = decision_index(cat, prediction)
    idx, y, qd = checked_draws(cat, indices, labels, q, p)
    jackknife = check_option(variance, VARIANCE_METHODS, "variance") == "jackknife"
    at = ClassDraws(cat.proba[idx], f[idx], p[idx])
    return _estimate(meas, on_pool(cat.proba, f, p), at, idx, y, qd, estimator == "assisted",
                     lv, jackknife)  # fmt: skip


class PoolCounts(NamedTuple):
    """What the estimators of class labels read from the whole pool for one model: the
    counts it expects of itself under the test distribution (:func:`pool_counts`), and the
    number of instances with test mass (labeling all of them is a census). A session stores
    them at ``init`` and estimates from them and the labeled rows."""

    counts: Counts
    n_mass: int


class ClassDraws(NamedTuple):
    """A model at the draws: its class probabilities (n, K), its decision's class column, and
    the test distribution p there."""

    proba: NDArray[np.float64]
    f: NDArray[np.intp]
    p: NDArray[np.float64]


def pool_counts_of(
    chunks: Iterable[tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.float64]]], k: int
) -> PoolCounts:
    """:class:`PoolCounts` of a model over the pool given a chunk of rows at a time (as
    :func:`pool_counts`)."""
    n_mass = 0

    def counted() -> Any:
        nonlocal n_mass
        for proba, f, p in chunks:
            n_mass += int(np.count_nonzero(p))
            yield proba, f, p

    counts = pool_counts(counted(), k)
    return PoolCounts(counts, n_mass)


def on_pool(proba: NDArray[np.float64], f: NDArray[np.intp], p: NDArray[np.float64]) -> PoolCounts:
    """:class:`PoolCounts` of a model over the pool in memory (``p`` summing to one)."""
    chunks = ((proba[rows], f[rows], p[rows]) for rows in row_chunks(f.shape[0]))
    return pool_counts_of(chunks, proba.shape[1])


def checked_draws(
    cat: Categorical,
    indices: ArrayLike,
    labels: ArrayLike,
    q: ArrayLike | None,
    p: NDArray[np.float64],
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
    """A sample of draws as the estimators of class labels take it: pool indices, each
    draw's label as a column index, each draw's q (``p`` at the draws by default), refused
    where they differ in length, are empty, have a q that is not positive, or give one
    instance two labels."""
    idx = np.asarray(indices, dtype=np.intp).ravel()
    y = cat.label_index(np.asarray(labels).ravel(), "labels")
    qd = p[idx] if q is None else np.asarray(q, dtype=float).ravel()
    if not (idx.shape == y.shape == qd.shape):
        raise ShapeError(
            f"indices, labels, q: one entry per draw each, got {idx.shape[0]}, {y.shape[0]} "
            f"and {qd.shape[0]}."
        )
    if idx.size == 0:
        raise ShapeError("indices: no draws; label at least one instance.")
    if not np.all(qd > 0):
        raise ShapeError("q: every draw's sampling probability must be positive.")
    _, first, inverse = np.unique(idx, return_index=True, return_inverse=True)
    if np.any(y != y[first][inverse]):
        raise ShapeError(
            "labels: an instance drawn more than once has different labels; give each pool "
            "instance one label."
        )
    return idx, y, qd


class _Fit(NamedTuple):
    """One model's estimate on the draws: its value, the jackknife's leave-one-out values
    (n, 1 or K; None on a census), the variance, λ, and the units' Kish sizes."""

    value: Any
    loo: NDArray[np.float64] | None
    var: NDArray[np.float64]
    coef: NDArray[np.float64]
    unit_n: NDArray[np.float64] | None
    census: bool


def _fit(
    meas: ClasswiseMeasure,
    pool: PoolCounts,
    at: ClassDraws,
    idx: NDArray[np.intp],
    y: NDArray[np.intp],
    qd: NDArray[np.float64],
    assisted: bool,
    jackknife: bool = True,
) -> _Fit:
    """The estimate on trusted arrays: the pool's counts ``pool``, the model at the draws
    ``at``, the draws' class columns ``y``; ``jackknife``: the leave-one-draw-out variance,
    else the linearized (delta) one."""
    k = at.proba.shape[1]
    _, first = np.unique(idx, return_index=True)
    seen = np.bincount(y, minlength=k) > 0
    fd = at.f
    if pool.n_mass == np.count_nonzero(at.p[first]):  # every unit with mass labeled
        pu, fu, yu = at.p[first], fd[first], y[first]
        counts = Counts(
            tp=np.bincount(fu[fu == yu], weights=pu[fu == yu], minlength=k),
            pp=pool.counts.pp,
            t=np.bincount(yu, weights=pu, minlength=k),
        )
        value, _ = meas.value_and_grad(counts)
        zero = np.zeros(np.shape(value) or (1,))
        return _Fit(value, None, zero, zero, None, census=True)
    v = at.p / qd
    total = float(v.sum())
    hit = fd == y
    snis = Counts(
        tp=np.bincount(y[hit], weights=v[hit], minlength=k) / total,
        pp=np.bincount(fd, weights=v, minlength=k) / total,
        t=np.bincount(y, weights=v, minlength=k) / total,
    )
    width = k if meas.vector else 1
    if not assisted:
        counts, coef, coef_pp = _clipped(snis, seen, meas), np.zeros(width), np.zeros(width)
        a, d, _b = _terms(meas, counts, fd, y, None, v, total)
        var = (v[:, None] ** 2 * (a + d) ** 2).sum(axis=0) / total**2
        model = pd = None
    else:
        model = pool.counts
        pd = at.proba
        mbar_tp = np.bincount(fd, weights=v * pd[np.arange(idx.size), fd], minlength=k) / total
        mbar_t = v @ pd / total
        # The coefficients are tuned at the thesis's counts (λ = 0), then fixed.
        a, d, b = _terms(meas, _clipped(snis, seen, meas), fd, y, pd, v, total)
        coef, coef_pp = _coefs(a + d, b, d, v)

        def corrected() -> Counts:
            lam, lam_pp = _per_class(coef, k), _per_class(coef_pp, k)
            return Counts(
                tp=snis.tp + lam * (model.tp - mbar_tp),
                pp=snis.pp + lam_pp * (model.pp - snis.pp),
                t=snis.t + lam * (model.t - mbar_t),
            )

        raw = corrected()
        # A correction that takes more than half of a class's observed support (or its
        # predicted positives) away, or makes its true positives negative, rests on too few
        # of its draws (an independent review: balanced accuracy −2.0 at 25 draws); that
        # class (an average: every class) keeps the thesis's counts.
        bad = (raw.tp < 0) | (raw.t < 0.5 * snis.t) | (raw.pp < 0.5 * snis.pp)
        if bad.any():
            off = bad if meas.vector else np.ones(width, dtype=bool)
            coef, coef_pp = np.where(off, 0.0, coef), np.where(off, 0.0, coef_pp)
            raw = corrected()
        counts = _clipped(raw, seen, meas)
        a, d, b = _terms(meas, counts, fd, y, pd, v, total)
        z = a + (1.0 - coef_pp) * d - coef * b
        var = (v[:, None] ** 2 * z**2).sum(axis=0) / total**2
    value, _ = meas.value_and_grad(counts)
    unit_n = _unit_n(meas, fd, y, v, k) if meas.vector else None
    loo = None
    if jackknife:
        loo = _leave_one_out(meas, fd, y, v, _per_class(coef, k), _per_class(coef_pp, k), model, pd)
        var = _spread(loo)
    return _Fit(value, loo, var, coef, unit_n, census=False)


def _per_class(coef: NDArray[np.float64], k: int) -> NDArray[np.float64]:
    """A coefficient per class: a per-class measure's own, an average's one for all."""
    return coef if coef.shape[0] == k else np.full(k, coef[0])


def _estimate(
    meas: ClasswiseMeasure,
    pool: PoolCounts,
    at: ClassDraws,
    idx: NDArray[np.intp],
    y: NDArray[np.intp],
    qd: NDArray[np.float64],
    assisted: bool,
    level: float,
    jackknife: bool = True,
) -> ClasswiseEstimate | PerClassEstimate:
    """:func:`classwise_estimate` on trusted arrays (see :func:`_fit`)."""
    fit = _fit(meas, pool, at, idx, y, qd, assisted, jackknife)
    n_labels, n_draws = int(np.unique(idx).size), int(idx.size)
    if fit.census:
        return _result(meas, fit.value, 0.0 * np.asarray(fit.value), n_draws, n_labels,
                       float(n_labels), level, census=True, coef=fit.coef)  # fmt: skip
    v = at.p / qd
    se = np.sqrt(fit.var) if meas.vector else float(np.sqrt(np.ravel(fit.var)[0]))
    n_eff = float(v.sum()) ** 2 / float((v * v).sum())
    return _result(meas, fit.value, se, n_draws, n_labels, n_eff, level, census=False,
                   coef=fit.coef, unit_n=fit.unit_n)  # fmt: skip


def _paired(
    meas: ClasswiseMeasure,
    pools: tuple[PoolCounts, PoolCounts],
    ats: tuple[ClassDraws, ClassDraws],
    idx: NDArray[np.intp],
    y: NDArray[np.intp],
    qd: NDArray[np.float64],
    assisted: bool,
    level: float,
) -> Comparison:
    """Two models on the same draws: Δ = G[f₀] − G[f₁], each model's estimate as
    :func:`_fit` (its own probabilities its control variate), the standard error of Δ the
    jackknife's over the paired leave-one-out differences (the draws are shared, so their
    dependence is kept), the Wald p-value (eq. 3.23–3.24)."""
    fits = [_fit(meas, pl, at, idx, y, qd, assisted) for pl, at in zip(pools, ats, strict=True)]
    ga, gb = (float(np.ravel(ft.value)[0]) for ft in fits)
    diff = _difference(ga, gb)
    n_labels, n_draws = int(np.unique(idx).size), int(idx.size)
    common: dict[str, Any] = {
        "n_draws": n_draws,
        "n_labels": n_labels,
        "greater_is_better": True,
        "level": level,
        "measure": meas.name,
    }
    if fits[0].census:
        return Comparison(
            estimates=(ga, gb), difference=diff, stderr=0.0,
            p_value=1.0 if diff == 0.0 else 0.0, stderrs=(0.0, 0.0), census=True, **common,
        )  # fmt: skip
    assert fits[0].loo is not None and fits[1].loo is not None
    se = float(np.sqrt(_spread(fits[0].loo - fits[1].loo)[0]))
    se = _rounding_zero(se, diff)
    stderrs = tuple(float(np.sqrt(ft.var[0])) for ft in fits)
    return Comparison(
        estimates=(ga, gb), difference=diff, stderr=se,
        p_value=_wald_p_value(diff, se, f"{meas.name} difference"),
        stderrs=stderrs, **common,  # type: ignore[arg-type]
    )  # fmt: skip


def _spread(loo: NDArray[np.float64]) -> NDArray[np.float64]:
    """The jackknife variance (n − 1)/n Σ_i (θ_(−i) − mean)² per column (∞ for n < 2)."""
    n = loo.shape[0]
    if n < 2:
        return np.full(loo.shape[1], np.inf)
    return np.asarray((n - 1) / n * np.sum((loo - loo.mean(axis=0)) ** 2, axis=0))


def _clipped(c: Counts, seen: NDArray[np.bool_], meas: ClasswiseMeasure) -> Counts:
    """The supports T kept ≥ 0 (a denominator); balanced accuracy averages over the classes
    the labels have shown (as scikit-learn over those present). TP is not clipped to
    min(PP, T): near a perfect class that would cut only the upward errors (a bias of
    −0.006 on a digits model's macro F1 at 200 labels); the reported value is clipped."""
    t = np.maximum(c.t, 0.0)
    tp = c.tp
    if isinstance(meas, BalancedAccuracy):
        t, tp = np.where(seen, t, 0.0), np.where(seen, tp, 0.0)
    return Counts(tp=tp, pp=c.pp, t=t)


def _terms(
    meas: ClasswiseMeasure,
    counts: Counts,
    fd: NDArray[np.intp],
    y: NDArray[np.intp],
    pd: NDArray[np.float64] | None,
    v: NDArray[np.float64],
    total: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per draw, the linearized terms of ∇g·c_i split as a_i (the label-dependent counts TP
    and T) and d_i (the predicted positives PP, known on the pool), and b_i = ∇g·m_i of the
    model's expected TP and T (zero without the model, ``pd`` None); each centred by its
    self-normalized mean; shape (n, 1), or (n, K) for a per-class measure (column k: ∇g_k)."""
    _value, (dtp, dpp, dt) = meas.value_and_grad(counts)
    n = fd.shape[0]
    rows = np.arange(n)
    hit = (fd == y).astype(float)
    if not meas.vector:
        a = (dtp[y] * hit + dt[y])[:, None]
        d = dpp[fd][:, None]
        b = np.zeros((n, 1)) if pd is None else (dtp[fd] * pd[rows, fd] + pd @ dt)[:, None]
    else:
        k = dtp.shape[0]
        a = np.zeros((n, k))
        a[rows, y] += dt[y] + dtp[y] * hit
        d = np.zeros((n, k))
        d[rows, fd] = dpp[fd]
        b = np.zeros((n, k))
        if pd is not None:
            b = pd * dt[None, :]
            b[rows, fd] += dtp[fd] * pd[rows, fd]
    return tuple(x - (v @ x) / total for x in (a, d, b))  # type: ignore[return-value]


def _unit_n(
    meas: ClasswiseMeasure, fd: NDArray[np.intp], y: NDArray[np.intp], v: NDArray[np.float64],
    k: int,
) -> NDArray[np.float64]:  # fmt: skip
    """Per class, Kish's (Σ v)² / Σ v² over the draws that can move its value."""
    metric = getattr(meas, "metric", "f1")
    units = np.zeros((fd.shape[0], k), dtype=bool)
    rows = np.arange(fd.shape[0])
    if metric != "precision":
        units[rows, y] = True
    if metric != "recall":
        units[rows, fd] = True
    sv = v @ units
    sv2 = (v * v) @ units
    out = np.zeros(k)
    np.divide(sv * sv, sv2, out=out, where=sv2 > 0)
    return out


def _leave_one_out(
    meas: ClasswiseMeasure,
    fd: NDArray[np.intp],
    y: NDArray[np.intp],
    v: NDArray[np.float64],
    lam: NDArray[np.float64],
    lam_pp: NDArray[np.float64],
    model: Counts | None,
    pd: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """Ĝ_(−i): the estimate recomputed without each draw i (the coefficients kept), all n at
    once as (n, K) count arrays; shape (n, 1), or (n, K) for a per-class measure. The classes
    the labels show are those left without draw i (balanced accuracy). With one draw,
    shape (1, ·) of NaN (nothing is left)."""
    n, k = fd.shape[0], lam.shape[0]
    if n < 2:
        return np.full((n, k if meas.vector else 1), np.nan)
    rows = np.arange(n)

    def loo(contrib: NDArray[np.float64]) -> NDArray[np.float64]:
        return (contrib.sum(axis=0)[None, :] - contrib) / rest[:, None]

    rest = v.sum() - v
    c_tp = np.zeros((n, k))
    hit = fd == y
    c_tp[rows[hit], y[hit]] = v[hit]
    c_t = np.zeros((n, k))
    c_t[rows, y] = v
    c_pp = np.zeros((n, k))
    c_pp[rows, fd] = v
    tp, t, pp = loo(c_tp), loo(c_t), loo(c_pp)
    if model is not None and pd is not None:
        c_mtp = np.zeros((n, k))
        c_mtp[rows, fd] = v * pd[rows, fd]
        tp = tp + lam * (model.tp - loo(c_mtp))
        t = t + lam * (model.t - loo(v[:, None] * pd))
        pp = pp + lam_pp * (model.pp - pp)
    left = np.bincount(y, minlength=k)[None, :] - (np.arange(k)[None, :] == y[:, None])
    theta, _ = meas.value_and_grad(_clipped(Counts(tp=tp, pp=pp, t=t), left > 0, meas))
    return np.asarray(theta, dtype=float).reshape(n, -1)


def _coefs(
    u: NDArray[np.float64], b: NDArray[np.float64], d: NDArray[np.float64],
    v: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(λ, λ_PP) per column minimizing Σ v² (u − λ b − λ_PP d)² over [0, 1]²: the control
    variates' coefficients (the model's expected TP and T; the pool's PP), fitted jointly
    within the box (clipping an unconstrained fit is not the box's optimum when the two
    move together, as with a flat model whose expected TP follows PP)."""
    lam, lam_pp = np.zeros(u.shape[1]), np.zeros(u.shape[1])
    for j in range(u.shape[1]):  # one bounded least-squares problem per class (K of them)
        x = np.column_stack([b[:, j], d[:, j]]) * v[:, None]
        lam[j], lam_pp[j] = _box_least_squares((v * u[:, j])[:, None], x[:, None, :])
    return lam, lam_pp


def _result(
    meas: ClasswiseMeasure,
    value: Any,
    se: Any,
    n_draws: int,
    n_labels: int,
    n_eff: float,
    level: float,
    *,
    census: bool,
    coef: Any,
    unit_n: Any = None,
) -> ClasswiseEstimate | PerClassEstimate:
    if meas.vector:
        return PerClassEstimate(
            classes=meas._classes(), estimates=np.asarray(value, dtype=float),
            stderrs=np.where(np.isnan(value), np.nan, se), n_draws=n_draws, n_labels=n_labels,
            effective_n=n_eff, level=level, measure=meas.name, census=census,
            coef=np.broadcast_to(np.asarray(coef, dtype=float), np.shape(value)).copy(),
            unit_n=np.full(np.shape(value), float(n_eff)) if unit_n is None else unit_n,
        )  # fmt: skip
    g = float(value)
    return ClasswiseEstimate(
        estimate=g, stderr=math.nan if math.isnan(g) else float(se), n_draws=n_draws,
        n_labels=n_labels, effective_n=n_eff, binary_loss=False, level=level,
        measure=meas.name, census=census, coef=float(np.ravel(coef)[0]),
    )  # fmt: skip
