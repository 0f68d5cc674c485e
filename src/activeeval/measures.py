"""Performance measures as generalized risks G = E[w ℓ] / E[w] (thesis eq. 3.27).

A measure says two things: the per-instance loss ℓ(f(x), y) and weight w(x, y, f), and the
conditional expectations of those under a predictive distribution — E[wℓ | x], E[w | x] (for the
intrinsic value, eq. 4.21) and E[w²(ℓ − c)² | x] (for optimal sampling, Thm 4.1). The general
rule computes them by summation over :meth:`Predictive.support`; closed forms (Cor. 4.2–4.4,
eq. 4.17) are fast paths selected automatically and tested equal to it (``fast=False`` forces
the general rule).

F-measures: the thesis writes F_η with η ∈ [0, 1] (eq. 3.26); the usual F_β has
η = 1 / (1 + β²). Precision is η = 1 (β = 0), recall η = 0 (β → ∞).

Multi-class averages (macro and weighted F_β, balanced accuracy) and per-class vectors are
not one ratio but smooth functions of the confusion counts' pool means
(:class:`ClasswiseMeasure`); they give their value and gradient, and the estimators and q*
use their influence function (the section "multi-class functions of several ratios" below).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_finite_array, check_option, pool_distribution
from .errors import (
    DegenerateIntervalWarning,
    LabelSpaceError,
    ShapeError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from .predictive import Categorical, Gaussian, Mixture, Predictive, first_part, label_index

__all__ = [
    "AbsoluteError",
    "Accuracy",
    "BalancedAccuracy",
    "ClasswiseMeasure",
    "CostMatrixLoss",
    "Counts",
    "ErrorRate",
    "FMeasure",
    "LabelMean",
    "LabelProportion",
    "MacroF1",
    "Measure",
    "PerClass",
    "Precision",
    "Recall",
    "SquaredError",
    "WeightedF1",
    "check_fits",
    "get_measure",
]

Moments = tuple[NDArray[np.float64], NDArray[np.float64]]


class Measure:
    """A performance measure as a generalized risk G[f] = E[w ℓ] / E[w] (eq. 3.27).

    The base class of every measure. A subclass defines the per-instance loss
    ℓ(f(x), y) (``loss``) and, for a ratio measure such as an F-measure, the weight
    w(x, y, f) (``weight``; one for regular risks, eq. 3.1). The conditional expectations
    that drive sampling and estimation (``conditional_expectations``,
    ``conditional_second_moment``, ``intrinsic_value``) then follow by summation over the
    predictive distribution's support; the built-in measures add closed forms
    (Cor. 4.2–4.4, eq. 4.17) that are tested equal to that rule (``fast=False`` forces it).

    Attributes
    ----------
    name : str
        Short name shown in results (``"error_rate"``, ``"f1"``, ...).
    greater_is_better : bool
        True for scores such as accuracy or F1, False for losses such as the error rate.
    binary_loss : bool
        True when ℓ ∈ {0, 1}; binomial intervals (Wilson, Clopper–Pearson) then apply.
    categorical : bool
        True when labels are class labels compared by identity (classification measures),
        False for numeric losses (MSE, MAE) and label means.
    regular : bool
        True for regular risks (w ≡ 1, eq. 3.1); False for ratio measures (F-measures).

    See Also
    --------
    get_measure : A measure object from its name.
    ErrorRate : The zero-one loss, the default measure.
    FMeasure : F_β as a ratio measure with a weight.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    A custom measure needs only its loss: here an ordinal grade counts as wrong when it is
    more than one grade off.

    >>> import numpy as np
    >>> import activeeval as ae
    >>> class OffByMoreThanOne(ae.Measure):
    ...     name = "off_by_2"
    ...     binary_loss = True
    ...     def loss(self, prediction, y):
    ...         return (np.abs(np.asarray(prediction) - np.asarray(y)) > 1).astype(float)
    >>> proba = np.array([[0.7, 0.2, 0.1, 0.0], [0.1, 0.3, 0.4, 0.2], [0.0, 0.1, 0.2, 0.7]])
    >>> round(OffByMoreThanOne().intrinsic_value(ae.Categorical(proba)), 3)
    0.1
    """

    name: str = "measure"
    #: True for scores such as accuracy or F1, False for losses such as the error rate.
    greater_is_better: bool = False
    #: True when ℓ ∈ {0, 1}; binomial intervals (Wilson, Clopper–Pearson) then apply.
    binary_loss: bool = False
    #: True when labels are class labels compared by identity (classification measures).
    categorical: bool = True
    #: True for regular risks (w ≡ 1, eq. 3.1); False for ratio measures such as F-measures.
    regular: bool = True

    @property
    def value_range(self) -> tuple[float, float]:
        """Where G can lie: the range of the loss ℓ (G is a weighted mean of losses, w ≥ 0).

        Reported estimates and intervals are clipped to it.
        """
        return (0.0, 1.0) if self.binary_loss else (-math.inf, math.inf)

    @property
    def unit_weights(self) -> tuple[float, float] | None:
        """Relative weights of a 0/1-loss measure's units, or None for a proportion.

        For a 0/1-loss measure that is not a proportion of its units (rows with w > 0): the
        smallest and largest weight of a unit with ℓ = 0 relative to one with ℓ = 1, so
        G = u / (u + c(1 − u)) for the units' share u with ℓ = 1 and some c between them.
        None for proportions (error rate, accuracy, precision, recall).
        """
        return None

    # ----------------------------------------------------------------- per-instance parts
    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The per-instance loss ℓ(f(x), y), elementwise with broadcasting.

        Every measure defines it; the base class raises ``NotImplementedError``.

        Parameters
        ----------
        prediction : array-like
            The model's predictions f(x) (class labels or numbers).
        y : array-like
            Labels, broadcastable against ``prediction`` (e.g. shape ``(m, 1)`` against a
            support of shape ``(m, S)``).

        Returns
        -------
        ndarray of float
            ℓ for each pair, of the broadcast shape.
        """
        raise NotImplementedError

    def weight(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The per-instance weight w(x, y, f), elementwise with broadcasting.

        One for regular risks; ratio measures (F-measures) override it.

        Parameters
        ----------
        prediction : array-like
            The model's predictions f(x).
        y : array-like
            Labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            w ≥ 0 for each pair, of the broadcast shape.
        """
        shape = np.broadcast_shapes(np.shape(prediction), np.shape(y))
        return np.ones(shape)

    def weight_can_be_positive(self, prediction: ArrayLike) -> NDArray[np.bool_]:
        """Whether w(x, y, f) > 0 for some label y, per instance.

        Where it is not, no label can move the estimate and a sampling distribution may put
        zero mass there (e.g. precision on predicted negatives). Regular risks have w ≡ 1,
        so every instance counts.

        Parameters
        ----------
        prediction : array-like of shape (m,)
            The model's predictions f(x).

        Returns
        -------
        ndarray of bool of shape (m,)
            True where some label gives the instance a positive weight.
        """
        return np.ones(np.shape(prediction), dtype=bool)

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> Measure:
        """The measure with its data-dependent parameters resolved.

        Parameters such as the positive label or the label space are read from a predictive
        distribution or, failing that, from observed label ``values``. The base class returns
        the measure unchanged, after checking that a numeric loss (MSE, MAE) is not bound to
        a classifier whose classes are not numbers.

        Parameters
        ----------
        predictive : Predictive, optional
            The model's predictive distribution on the pool.
        values : sequence of array-like, optional
            Observed labels or predictions, used when ``predictive`` does not tell.

        Returns
        -------
        Measure
            This measure or a copy with the parameters filled in.

        Raises
        ------
        LabelSpaceError
            When the measure does not fit the model's label space.
        """
        leaf = first_part(predictive)
        if not self.categorical and isinstance(leaf, Categorical):
            try:
                np.asarray(leaf.labels, dtype=float)
            except (TypeError, ValueError):
                raise LabelSpaceError(
                    f"measure: {self.name} needs numeric labels, but the model's classes are "
                    f"{leaf.labels[:5].tolist()}; use a classification measure (error_rate, "
                    "f1, precision, recall, a cost matrix) or numeric class labels."
                ) from None
        return self

    # ---------------------------------------------------------- conditional expectations
    def conditional_expectations(
        self, predictive: Predictive, prediction: ArrayLike | None = None, *, fast: bool = True
    ) -> Moments:
        """E[w ℓ | x] and E[w | x] under ``predictive`` for every pool instance.

        Parameters
        ----------
        predictive : Predictive
            The distribution p(y | x) over the pool's ``m`` instances.
        prediction : array-like of shape (m,), optional
            The predictions f(x) the measure scores; defaults to the predictive
            distribution's point prediction (the mode, or the mean).
        fast : bool, default True
            Use a closed form where one exists; False forces summation over the support.

        Returns
        -------
        weighted_loss : ndarray of shape (m,)
            E[w ℓ | x] per instance.
        weight : ndarray of shape (m,)
            E[w | x] per instance.
        """
        pred = _prediction(predictive, prediction)
        if fast:
            if isinstance(predictive, Mixture):
                parts = [self.conditional_expectations(p, pred) for p in predictive.parts]
                return (
                    sum(w * a for w, (a, _) in zip(predictive.weights, parts, strict=True)),
                    sum(w * b for w, (_, b) in zip(predictive.weights, parts, strict=True)),
                )
            out = self._fast_expectations(predictive, pred)
            if out is not None:
                return out
        values, probs = predictive.support()
        p2 = _column(pred)
        w = self.weight(p2, values)
        return _sum_over_support(w * self.loss(p2, values), probs), _sum_over_support(w, probs)

    def conditional_second_moment(
        self,
        predictive: Predictive,
        center: float,
        prediction: ArrayLike | None = None,
        *,
        fast: bool = True,
    ) -> NDArray[np.float64]:
        """E_y[w² (ℓ − c)² | x] under ``predictive`` for every pool instance.

        The integrand of the variance-optimal sampling distribution (Thm 4.1, eq. 4.6).

        Parameters
        ----------
        predictive : Predictive
            The distribution p(y | x) over the pool's ``m`` instances.
        center : float
            The centre c, usually the intrinsic value (``intrinsic_value``).
        prediction : array-like of shape (m,), optional
            The predictions f(x) the measure scores; defaults to the point prediction.
        fast : bool, default True
            Use a closed form where one exists; False forces summation over the support.

        Returns
        -------
        ndarray of shape (m,)
            The conditional second moment per instance.
        """
        pred = _prediction(predictive, prediction)
        c = float(center)
        if fast:
            if isinstance(predictive, Mixture):
                return sum(
                    w * self.conditional_second_moment(p, c, pred)
                    for w, p in zip(predictive.weights, predictive.parts, strict=True)
                )
            out = self._fast_second_moment(predictive, pred, c)
            if out is not None:
                return out
        values, probs = predictive.support()
        p2 = _column(pred)
        w = self.weight(p2, values)
        return _sum_over_support(w**2 * (self.loss(p2, values) - c) ** 2, probs)

    def intrinsic_value(
        self,
        predictive: Predictive,
        prediction: ArrayLike | None = None,
        *,
        pool_weights: ArrayLike | None = None,
        fast: bool = True,
    ) -> float:
        """The intrinsic generalized risk Ǧ: the measure the model expects of itself.

        The value of the measure on the pool if p(y | x) were the given predictive
        distribution (eq. 4.21; eq. 4.22 for regular risks).

        Parameters
        ----------
        predictive : Predictive
            The distribution p(y | x) over the pool's ``m`` instances.
        prediction : array-like of shape (m,), optional
            The predictions f(x) the measure scores; defaults to the point prediction.
        pool_weights : array-like of shape (m,), optional
            Non-negative weights of the pool instances (e.g. to reweight a pool to a target
            population); uniform by default.
        fast : bool, default True
            Use a closed form where one exists; False forces summation over the support.

        Returns
        -------
        float
            Ǧ, or NaN (with an ``UndefinedEstimateWarning``) when the expected weight on the
            pool is zero.

        Raises
        ------
        ShapeError
            When ``pool_weights`` does not hold ``m`` non-negative numbers.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
        >>> round(ae.ErrorRate().intrinsic_value(ae.Categorical(proba)), 3)
        0.233
        """
        wl, w = self.conditional_expectations(predictive, prediction, fast=fast)
        if pool_weights is None:
            num, den = float(np.sum(wl)), float(np.sum(w))
        else:
            pw = check_finite_array(pool_weights, "pool_weights", ndim=1)
            if pw.shape[0] != wl.shape[0] or (pw < 0).any():
                raise ShapeError(
                    f"pool_weights: expected {wl.shape[0]} non-negative weights (one per pool "
                    f"instance), got shape {pw.shape} with minimum {pw.min(initial=0.0):g}."
                )
            num, den = float(pw @ wl), float(pw @ w)
        if den <= 0.0:
            warn_undefined_intrinsic(self.name, stacklevel=3)
            return math.nan
        return num / den

    def difference_second_moment(
        self,
        predictive: Predictive,
        predictions: tuple[ArrayLike, ArrayLike],
        centers: tuple[float, float],
        scales: tuple[float, float] = (1.0, 1.0),
        *,
        fast: bool = True,
    ) -> NDArray[np.float64]:
        """E_y[(ψ_a − ψ_b)² | x] for two models' influence functions, per pool instance.

        ψ_j = w_j (ℓ_j − c_j) / s_j is model j's influence on its generalized risk; the
        moment is the integrand of the optimal comparison distribution (Thm 5.1, eq. 5.5),
        where for regular risks ψ_a − ψ_b = δ − Δ. For ratio measures each influence is
        scaled by the model's expected weight s_j.

        Parameters
        ----------
        predictive : Predictive
            The distribution p(y | x) over the pool's ``m`` instances.
        predictions : tuple of two array-like of shape (m,)
            The two models' predictions f_a(x) and f_b(x).
        centers : tuple of two float
            The centres c_a and c_b (the models' intrinsic values).
        scales : tuple of two float, default (1.0, 1.0)
            The scales s_a and s_b (expected weights; 1 for regular risks).
        fast : bool, default True
            Use a closed form where one exists; False forces summation over the support.

        Returns
        -------
        ndarray of shape (m,)
            The conditional second moment of the difference per instance.
        """
        pa, pb = (_prediction(predictive, p) for p in predictions)
        ca, cb = (float(c) for c in centers)
        sa, sb = (float(s) for s in scales)
        if fast:
            if isinstance(predictive, Mixture):
                return sum(
                    w * self.difference_second_moment(p, (pa, pb), (ca, cb), (sa, sb))
                    for w, p in zip(predictive.weights, predictive.parts, strict=True)
                )
            out = self._fast_difference_moment(predictive, pa, pb, ca, cb, sa, sb)
            if out is not None:
                return out
        values, probs = predictive.support()
        a, b = _column(pa), _column(pb)
        psi = (
            self.weight(a, values) * (self.loss(a, values) - ca) / sa
            - self.weight(b, values) * (self.loss(b, values) - cb) / sb
        )
        return _sum_over_support(psi * psi, probs)

    def _fast_difference_moment(
        self,
        predictive: Predictive,
        pa: NDArray[Any],
        pb: NDArray[Any],
        ca: float,
        cb: float,
        sa: float,
        sb: float,
    ) -> NDArray[np.float64] | None:
        return None

    # ----------------------------------------------------------------------- fast paths
    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        return None

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _prediction(predictive: Predictive, prediction: ArrayLike | None) -> NDArray[Any]:
    if prediction is None:
        return predictive.point_prediction()
    pred = np.asarray(prediction)
    if pred.shape != (predictive.n,):
        raise ShapeError(
            f"prediction: expected shape ({predictive.n},) to match the pool, got {pred.shape}."
        )
    return pred


def _column(a: NDArray[Any]) -> NDArray[Any]:
    return a[:, None]


def _sum_over_support(values: NDArray[Any], probs: NDArray[np.float64]) -> NDArray[np.float64]:
    shape = np.broadcast_shapes(np.shape(values), probs.shape)
    return np.sum(np.broadcast_to(values, shape) * probs, axis=1)


def _categorical_probability_of(predictive: Predictive, label: Any) -> NDArray[np.float64] | None:
    """p(y = label | x) for one label for all instances, or per-instance labels."""
    if isinstance(predictive, Categorical):
        return predictive.column_probability(label, "prediction")
    return None


# --------------------------------------------------------------------- regular risks
class ErrorRate(Measure):
    """The error rate: zero-one loss ℓ = 1[f(x) ≠ y].

    The default measure (``measure="error_rate"``). Any number of classes; the label is
    compared with the model's decision f(x), by default the most probable class. Its
    optimal sampling distribution has a closed form (Cor. 4.2), as has the comparison of
    two models (Cor. 5.1).

    See Also
    --------
    Accuracy : One minus the error rate, greater is better.
    CostMatrixLoss : Unequal costs for different mistakes.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(size=500)                       # a binary model's P(class 1)
    >>> y = (rng.uniform(size=500) < p1).astype(int)     # the labels an oracle would give
    >>> res = ae.evaluate(p1, lambda idx: y[idx], ae.ErrorRate(), budget=50, random_state=0)
    >>> print(f"{res.estimate:.2f} from {res.n_labels} labels")
    0.21 from 50 labels

    What the model expects of itself, 1 − mean max-probability:

    >>> proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.3, 0.7]])
    >>> round(ae.ErrorRate().intrinsic_value(ae.Categorical(proba)), 3)
    0.25
    """

    name = "error_rate"
    binary_loss = True

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """Zero-one loss 1[f(x) ≠ y], elementwise with broadcasting.

        Parameters
        ----------
        prediction : array-like
            The model's predicted labels f(x).
        y : array-like
            True labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            1.0 where prediction and label differ, 0.0 where they agree.
        """
        return np.not_equal(prediction, y).astype(float)

    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        pi = _categorical_probability_of(predictive, pred)
        if pi is None:
            return None
        return 1.0 - pi, np.ones_like(pi)

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        pi = _categorical_probability_of(predictive, pred)
        if pi is None:
            return None
        return (1.0 - 2.0 * c) * (1.0 - pi) + c * c  # Cor. 4.2, any number of classes

    def _fast_difference_moment(
        self,
        predictive: Predictive,
        pa: NDArray[Any],
        pb: NDArray[Any],
        ca: float,
        cb: float,
        sa: float,
        sb: float,
    ) -> NDArray[np.float64] | None:
        if not isinstance(predictive, Categorical) or sa != 1.0 or sb != 1.0:
            return None
        # Cor. 5.1 for any number of classes: δ = 1[y = f_b] − 1[y = f_a] where the models
        # disagree (0 where they agree), so E[(δ − Δ)²] = π_a + π_b − 2Δ(π_b − π_a) + Δ² on
        # disagreements and Δ² on agreements, with π_j = p(y = f_j | x).
        d = ca - cb
        pi_a = predictive.column_probability(pa, "predictions")
        pi_b = predictive.column_probability(pb, "predictions")
        disagree = np.not_equal(pa, pb)
        return np.where(disagree, pi_a + pi_b - 2.0 * d * (pi_b - pi_a), 0.0) + d * d


class Accuracy(Measure):
    """The accuracy: ℓ = 1[f(x) = y], greater is better.

    One minus the error rate (``measure="accuracy"``), with the same closed forms.

    See Also
    --------
    ErrorRate : The zero-one loss.
    get_measure : A measure object from its name.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8], [0.3, 0.7]])
    >>> round(ae.Accuracy().intrinsic_value(ae.Categorical(proba)), 3)
    0.75
    >>> ae.Accuracy().loss(np.array([0, 1, 1]), np.array([0, 0, 1])).tolist()
    [1.0, 0.0, 1.0]
    """

    name = "accuracy"
    greater_is_better = True
    binary_loss = True

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The hit indicator 1[f(x) = y], elementwise with broadcasting.

        Parameters
        ----------
        prediction : array-like
            The model's predicted labels f(x).
        y : array-like
            True labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            1.0 where prediction and label agree, 0.0 where they differ.
        """
        return np.equal(prediction, y).astype(float)

    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        pi = _categorical_probability_of(predictive, pred)
        if pi is None:
            return None
        return pi, np.ones_like(pi)

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        pi = _categorical_probability_of(predictive, pred)
        if pi is None:
            return None
        return pi * (1.0 - c) ** 2 + (1.0 - pi) * c * c  # Cor. 4.2 with ℓ → 1 − ℓ


@dataclass(frozen=True, repr=False, eq=False)
class CostMatrixLoss(Measure):
    """The mean cost of mistakes: ℓ(f(x), y) = cost_matrix[index(y), index(f(x))].

    Rows are true labels, columns predicted labels (scikit-learn's ``confusion_matrix``
    orientation), both in the order of ``labels`` (default ``0..K-1``, or the predictive
    distribution's labels when bound to one). A zero-one matrix gives the error rate.

    Parameters
    ----------
    cost_matrix : array-like of shape (K, K)
        Finite costs; ``cost_matrix[i, j]`` is the cost of predicting ``labels[j]`` when the
        true label is ``labels[i]``.
    labels : array-like of shape (K,), optional
        The class of each row and column. Required when the model's classes were read from
        a DataFrame's column names, where the order would be ambiguous.

    Raises
    ------
    ShapeError
        When the matrix is not square or ``labels`` does not match it.

    See Also
    --------
    ErrorRate : Every mistake costs one.
    Categorical : Class probabilities with their labels.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> cm = np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]])   # rows: true, columns: predicted
    >>> proba = np.array([[0.8, 0.2, 0.0], [0.1, 0.6, 0.3], [0.0, 0.3, 0.7]])
    >>> round(ae.CostMatrixLoss(cm).intrinsic_value(ae.Categorical(proba)), 3)
    0.3
    >>> measure = ae.CostMatrixLoss(cm, labels=["cat", "dog", "fox"])
    >>> measure.loss(np.array(["cat", "dog"]), np.array(["fox", "dog"])).tolist()
    [5.0, 0.0]
    """

    cost_matrix: Any
    labels: Any = None
    name: str = field(default="cost_matrix_loss", init=False)

    def __post_init__(self) -> None:
        cm = check_finite_array(self.cost_matrix, "cost_matrix", ndim=2)
        if cm.shape[0] != cm.shape[1]:
            raise ShapeError(f"cost_matrix: must be square, got shape {cm.shape}.")
        object.__setattr__(self, "cost_matrix", cm)
        if self.labels is not None:
            lab = np.asarray(self.labels)
            if lab.shape != (cm.shape[0],):
                raise ShapeError(
                    f"labels: {lab.shape} does not match cost_matrix of shape {cm.shape}."
                )
            object.__setattr__(self, "labels", lab)

    @property
    def _labels(self) -> NDArray[Any]:
        return np.arange(self.cost_matrix.shape[0]) if self.labels is None else self.labels

    @property
    def value_range(self) -> tuple[float, float]:
        """The smallest and largest entry of the cost matrix."""
        return (float(np.min(self.cost_matrix)), float(np.max(self.cost_matrix)))

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> CostMatrixLoss:
        """The measure with ``labels`` taken from a Categorical predictive distribution.

        Parameters
        ----------
        predictive : Predictive, optional
            The model's predictive distribution; its labels name the matrix's rows and
            columns when ``labels`` was not given.
        values : sequence of array-like, optional
            Unused; accepted for the common interface.

        Returns
        -------
        CostMatrixLoss
            This measure, or a copy with ``labels`` set.

        Raises
        ------
        ShapeError
            When the matrix's size differs from the number of classes.
        UnknownOptionError
            When the classes came from a DataFrame's column names and ``labels`` is unset.
        """
        leaf = first_part(predictive)
        k = self.cost_matrix.shape[0]
        if (
            self.labels is None
            and getattr(leaf, "_named", False)
            and not np.array_equal(leaf.labels, np.arange(k))
        ):
            raise UnknownOptionError(
                f"cost_matrix: the classes were read from a DataFrame's column names "
                f"({list(leaf.labels)}, sorted), so the matrix's row and column order is "
                "ambiguous; name it: CostMatrixLoss(cost_matrix, labels=[...])."
            )
        if self.labels is None and isinstance(predictive, Categorical):
            if predictive.labels.shape[0] != self.cost_matrix.shape[0]:
                raise ShapeError(
                    f"cost_matrix: is {self.cost_matrix.shape} but the model has "
                    f"{predictive.labels.shape[0]} classes."
                )
            return replace(self, labels=predictive.labels)
        return self

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The cost of predicting ``prediction`` when the label is ``y``.

        Parameters
        ----------
        prediction : array-like
            Predicted labels, each in ``labels``.
        y : array-like
            True labels, each in ``labels``, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            ``cost_matrix[index(y), index(prediction)]`` for each pair.
        """
        labs = self._labels
        i_true = label_index(labs, y, "labels")
        i_pred = label_index(labs, prediction, "prediction")
        return self.cost_matrix[i_true, i_pred]

    def __repr__(self) -> str:
        return f"CostMatrixLoss(cost_matrix={self.cost_matrix.tolist()})"


class SquaredError(Measure):
    """The mean squared error: ℓ = (f(x) − y)².

    For regressors (``measure="mse"``), whose predictive distribution is a ``Gaussian``;
    the conditional moments have closed forms (eq. 4.17) and so has the comparison of two
    models (Cor. 5.2).

    See Also
    --------
    AbsoluteError : The mean absolute error.
    Gaussian : A regressor's predictive distribution.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> mean = rng.normal(size=300)
    >>> y = mean + rng.normal(scale=0.5, size=300)
    >>> pred = ae.Gaussian(mean, np.full(300, 0.25))     # variance 0.5**2
    >>> res = ae.evaluate(pred, lambda idx: y[idx], ae.SquaredError(), budget=40, random_state=0)
    >>> print(f"{res.estimate:.2f} from {res.n_labels} labels")
    0.28 from 40 labels

    The model expects a squared error equal to its mean variance:

    >>> round(ae.SquaredError().intrinsic_value(ae.Gaussian([1.0, 2.0], [0.25, 1.0])), 3)
    0.625
    """

    name = "mse"
    categorical = False

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, inf)``: a squared error is non-negative."""
        return (0.0, math.inf)

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The squared error (f(x) − y)², elementwise with broadcasting.

        Parameters
        ----------
        prediction : array-like
            Numeric predictions f(x).
        y : array-like
            Numeric labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            The squared differences.
        """
        return (np.asarray(prediction, dtype=float) - np.asarray(y, dtype=float)) ** 2

    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        if not isinstance(predictive, Gaussian):
            return None
        d = predictive.mean - pred.astype(float)
        return d * d + predictive.var, np.ones_like(d)

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        if not isinstance(predictive, Gaussian):
            return None
        d2 = (predictive.mean - pred.astype(float)) ** 2
        s2 = predictive.var
        m2 = d2 + s2
        # Raw moments of a symmetric y | x (eq. 4.17): the Gaussian's kurtosis is 3, a tempered
        # member's the labels' (Gaussian.kurtosis).
        m4 = d2 * d2 + 6.0 * d2 * s2 + predictive.kurtosis * s2 * s2
        return m4 - 2.0 * c * m2 + c * c

    def _fast_difference_moment(
        self,
        predictive: Predictive,
        pa: NDArray[Any],
        pb: NDArray[Any],
        ca: float,
        cb: float,
        sa: float,
        sb: float,
    ) -> NDArray[np.float64] | None:
        if not isinstance(predictive, Gaussian) or sa != 1.0 or sb != 1.0:
            return None
        # Cor. 5.2 (eq. 5.9): δ = f̄² − 2 f̄¹ y with f̄ᵏ = f_aᵏ − f_bᵏ, so
        # E[(δ − Δ)²] = 4 (f̄¹)² E[y²] − 4 f̄¹ (f̄² − Δ) E[y] + (f̄² − Δ)².
        fa, fb = pa.astype(float), pb.astype(float)
        f1, f2 = fa - fb, fa * fa - fb * fb
        ey = predictive.mean
        ey2 = predictive.mean**2 + predictive.var
        r = f2 - (ca - cb)
        return 4.0 * f1 * f1 * ey2 - 4.0 * f1 * r * ey + r * r


class AbsoluteError(Measure):
    """The mean absolute error: ℓ = |f(x) − y|.

    For regressors (``measure="mae"``); under a ``Gaussian`` the conditional moments use the
    folded-normal mean in closed form.

    See Also
    --------
    SquaredError : The mean squared error.
    Gaussian : A regressor's predictive distribution.

    Examples
    --------
    >>> import activeeval as ae
    >>> pred = ae.Gaussian(mean=[1.0, 2.0], var=[0.25, 1.0])
    >>> round(ae.AbsoluteError().intrinsic_value(pred), 3)   # sqrt(2/pi) * mean std
    0.598
    >>> ae.AbsoluteError().loss([1.0, 2.0], [1.5, 0.0]).tolist()
    [0.5, 2.0]
    """

    name = "mae"
    categorical = False

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, inf)``: an absolute error is non-negative."""
        return (0.0, math.inf)

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The absolute error |f(x) − y|, elementwise with broadcasting.

        Parameters
        ----------
        prediction : array-like
            Numeric predictions f(x).
        y : array-like
            Numeric labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            The absolute differences.
        """
        return np.abs(np.asarray(prediction, dtype=float) - np.asarray(y, dtype=float))

    @staticmethod
    def _gaussian_first_absolute_moment(d: NDArray[np.float64], s2: NDArray[np.float64]) -> Any:
        # E|Z| for Z ~ N(d, s2): the folded-normal mean.
        from scipy import special  # here, not at import: scipy.special alone takes 0.15 s

        s = np.sqrt(s2)
        # A tiny (subnormal) s overflows z = d / s to ±inf; exp(-inf) = 0 and erf(±inf) = ±1
        # then give the correct limit |d|, so the overflow is harmless.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = np.where(s > 0, d / np.where(s > 0, s, 1.0), 0.0)
            return np.where(
                s > 0,
                s * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * z * z)
                + d * special.erf(z / math.sqrt(2)),
                np.abs(d),
            )

    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        if not isinstance(predictive, Gaussian):
            return None
        d = predictive.mean - pred.astype(float)
        return self._gaussian_first_absolute_moment(d, predictive.var), np.ones_like(d)

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        if not isinstance(predictive, Gaussian):
            return None
        d = predictive.mean - pred.astype(float)
        m1 = self._gaussian_first_absolute_moment(d, predictive.var)
        m2 = d * d + predictive.var
        return m2 - 2.0 * c * m1 + c * c


def clip_to_range(
    value: float, ci: tuple[float, float], value_range: tuple[float, float]
) -> tuple[float, tuple[float, float]]:
    """A reported estimate and interval clipped to where the measure can lie. The
    model-assisted estimator is unbiased only unclipped, and with a handful of labels it can
    leave the range (an error rate below 0, an F1 above 1); clipping moves it towards every
    possible true value, so its error never grows, and the interval keeps every point of the
    range it covered. An interval wholly outside the range shrinks to the boundary point:
    warned (DegenerateIntervalWarning), as it rests on too few labels. NaN stays NaN."""
    lo, hi = value_range
    if math.isnan(value):
        return value, ci

    def clip(x: float) -> float:
        return float(min(max(x, lo), hi))

    v = clip(value)
    out = (min(clip(ci[0]), v), max(clip(ci[1]), v))  # and around the reported estimate
    if out[0] == out[1] and ci[0] < ci[1]:
        warnings.warn(
            f"the whole interval ({ci[0]:.4g}, {ci[1]:.4g}) lies outside the measure's range "
            f"[{lo:g}, {hi:g}], so the reported one collapses to a point; it rests on too few "
            "labels. Label more instances.",
            DegenerateIntervalWarning,
            stacklevel=4,
        )
    return v, out


# ---------------------------------------------------------------------- F-measures
@dataclass(frozen=True, repr=False)
class FMeasure(Measure):
    """F_β of the class ``pos_label`` as a generalized risk (Cor. 3.1).

    w = η·1[f(x) = pos] + (1 − η)·1[y = pos] and ℓ = 1[f(x) = pos]·1[y = pos] (equal to
    1 − ℓ_0/1 wherever w > 0), with η = 1 / (1 + β²) mapping the thesis's F_η (eq. 3.26) to
    the usual F_β. Several classes are handled one-vs-rest. ``measure="f1"`` selects F_1.

    Parameters
    ----------
    beta : float, default 1.0
        β ≥ 0; ``beta=0`` is precision, ``beta=inf`` recall.
    pos_label : label, optional
        The positive class; defaults to the larger of a binary model's two classes
        (required with more classes).
    average : {"binary", "macro", "weighted", None}, default "binary"
        As scikit-learn's: one class's F_β, or (returning that measure) ``MacroF1(beta)``,
        ``WeightedF1(beta)`` or ``PerClass("f1", beta)``.

    Raises
    ------
    ShapeError
        When ``beta`` is negative or NaN.
    UnknownOptionError
        For ``average="micro"`` (the accuracy) or an unknown ``average``.

    See Also
    --------
    Precision : F_β with β = 0.
    Recall : F_β with β → ∞.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([0.1, 0.4, 0.8, 0.7, 0.55])    # P(class 1); class 1 is positive
    >>> pred = ae.as_predictive(p1)
    >>> round(ae.FMeasure().bind(pred).intrinsic_value(pred), 3)
    0.739
    >>> round(ae.FMeasure(beta=2.0, pos_label=1).intrinsic_value(pred), 3)
    0.777
    """

    beta: float = 1.0
    pos_label: Any = None
    #: ``"binary"``: one class's F_β; the averages are other measures (see ``__new__``).
    average: str = field(default="binary", repr=False, compare=False)
    name: str = field(default="f1", init=False)
    greater_is_better: bool = field(default=True, init=False)
    binary_loss: bool = field(default=True, init=False)
    regular: bool = field(default=False, init=False)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """scikit-learn's ``average=`` (by keyword): ``"macro"``, ``"weighted"`` and None
        (per class) give :class:`MacroF1`, :class:`WeightedF1` and :class:`PerClass`;
        ``"binary"`` (the default) one class's F_β."""
        average = kwargs.get("average", "binary")
        if average == "binary":
            return super().__new__(cls)
        beta = kwargs.get("beta", args[0] if args and cls is FMeasure else 1.0)
        pos_label = kwargs.get("pos_label")
        what = "precision" if cls is Precision else "recall" if cls is Recall else "f1"
        if average == "micro":
            raise UnknownOptionError(
                f"average: micro-averaged {what} over every class of a single-label problem "
                "equals the accuracy; use measure='accuracy'."
            )
        if what != "f1" and average is None:
            return PerClass(what)
        if what == "f1" and average in (None, "macro", "weighted"):
            if pos_label is not None:
                raise UnknownOptionError(
                    f"pos_label: an average over classes has no positive class; drop "
                    f"pos_label={pos_label!r} or use average='binary'."
                )
            if average is None:
                return PerClass("f1", beta)
            return (MacroF1 if average == "macro" else WeightedF1)(beta)
        if what == "f1":
            raise UnknownOptionError(
                f"average: expected 'binary', 'macro', 'weighted', None or 'micro', got "
                f"{average!r}."
            )
        alternative = (
            "MacroF1(beta=0.0) is the macro-averaged precision"
            if what == "precision"
            else "balanced_accuracy is the mean recall over the classes present"
        )
        raise UnknownOptionError(
            f"average: {what} takes 'binary' (one class) or None (every class: "
            f"PerClass({what!r})), not {average!r}; {alternative}."
        )

    def __post_init__(self) -> None:
        if self.average != "binary":
            raise UnknownOptionError(
                f"average: pass average={self.average!r} by keyword (average=...)."
            )
        b = float(self.beta)
        if not (b >= 0.0) or math.isnan(b):
            raise ShapeError(f"beta: must be ≥ 0 (0 = precision, inf = recall), got {self.beta}.")
        if type(self) is FMeasure:
            object.__setattr__(self, "name", "f1" if b == 1.0 else f"f_beta({b:g})")

    @property
    def eta(self) -> float:
        """The thesis's trade-off η = 1 / (1 + β²) (eq. 3.26)."""
        b = float(self.beta)
        return 0.0 if math.isinf(b) else 1.0 / (1.0 + b * b)

    @property
    def unit_weights(self) -> tuple[float, float] | None:
        """The range of the relative weights of F_β's units, or None for precision and recall.

        F_β's units are true positives (w = 1), false positives (w = η) and false negatives
        (w = 1 − η): F_β = u / (u + c(1 − u)) for the share u of true positives, c between
        min(η, 1 − η) and max(η, 1 − η). None for precision and recall (η ∈ {0, 1}), which
        are proportions of their units.
        """
        eta = self.eta
        if not 0.0 < eta < 1.0:
            return None
        return min(eta, 1.0 - eta), max(eta, 1.0 - eta)

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, 1)``: an F-measure is a proportion-like score."""
        return (0.0, 1.0)

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> FMeasure:
        """The measure with ``pos_label`` resolved.

        An unset positive class becomes the larger class of a binary Categorical predictive
        distribution (or of a mixture of them), else 1 when the observed ``values`` are all
        0 or 1; with more than two classes it must be given. A set one is checked against
        the model's label space.

        Parameters
        ----------
        predictive : Predictive, optional
            The model's predictive distribution on the pool.
        values : sequence of array-like, optional
            Observed labels or predictions, used when ``predictive`` does not tell.

        Returns
        -------
        FMeasure
            This measure, or a copy with ``pos_label`` set.

        Raises
        ------
        LabelSpaceError
            When ``pos_label`` is not a class of the model, or cannot be told.
        """
        if self.pos_label is not None:
            if isinstance(predictive, Categorical):
                label_index(predictive.labels, [self.pos_label], "pos_label")
            return self
        if isinstance(predictive, Mixture):  # its classes are its first part's
            predictive = predictive._first_categorical()
        if isinstance(predictive, Categorical) and predictive.labels.shape[0] > 2:
            base = type(self).__name__.lower() if type(self) is not FMeasure else "f1"
            raise LabelSpaceError(
                f"pos_label: {self.name} is one class's {base} (one-vs-rest), and the model has "
                f"{predictive.labels.shape[0]} classes; pass pos_label=... for one class, or "
                f"use measure='per_class_{base}' for every class"
                + (", 'macro_f1' or 'weighted_f1' for an average." if base == "f1" else ".")
            )
        if isinstance(predictive, Categorical):
            # np.max has no loop for string labels; the sorted label space has one.
            # .item(): a Python scalar, so the measure's repr reads the same on every numpy.
            return replace(self, pos_label=predictive.labels[predictive._order[-1]].item())
        seen = (
            np.unique(np.concatenate([np.ravel(np.asarray(v)) for v in values])) if values else None
        )
        if seen is not None and seen.size and set(seen.tolist()) <= {0, 1}:
            return replace(self, pos_label=1)
        raise LabelSpaceError(
            f"pos_label: cannot tell the positive class of {self.name} from point predictions "
            "alone; pass pos_label=... or the model's class probabilities as a Categorical."
        )

    def _parts(
        self, prediction: ArrayLike, y: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self.pos_label is None:
            raise LabelSpaceError(
                f"pos_label: {self.name} needs its positive class; pass pos_label=... or bind "
                "the measure to the model's Categorical predictions."
            )
        a = np.equal(prediction, self.pos_label).astype(float)
        b = np.equal(y, self.pos_label).astype(float)
        return a, b

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The true-positive indicator 1[f(x) = pos]·1[y = pos], elementwise.

        Parameters
        ----------
        prediction : array-like
            The model's predicted labels f(x).
        y : array-like
            True labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            1.0 for a true positive, else 0.0.

        Raises
        ------
        LabelSpaceError
            When ``pos_label`` is unset (call ``bind`` first).
        """
        a, b = self._parts(prediction, y)
        return a * b

    def weight(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The weight w = η·1[f(x) = pos] + (1 − η)·1[y = pos], elementwise.

        Parameters
        ----------
        prediction : array-like
            The model's predicted labels f(x).
        y : array-like
            True labels, broadcastable against ``prediction``.

        Returns
        -------
        ndarray of float
            1 for a true positive, η for a false positive, 1 − η for a false negative and
            0 for a true negative.
        """
        a, b = self._parts(prediction, y)
        eta = self.eta
        return eta * a + (1.0 - eta) * b

    def weight_can_be_positive(self, prediction: ArrayLike) -> NDArray[np.bool_]:
        """Whether some label gives the instance a positive weight.

        Every instance for η < 1 (any may turn out positive); for precision (η = 1) only
        the predicted positives.

        Parameters
        ----------
        prediction : array-like of shape (m,)
            The model's predicted labels f(x).

        Returns
        -------
        ndarray of bool of shape (m,)
            True where the instance can move the estimate.
        """
        if self.eta < 1.0:  # any instance may turn out positive
            return np.ones(np.shape(prediction), dtype=bool)
        return np.asarray(np.equal(prediction, self.pos_label))

    def _positive_probability(
        self, predictive: Predictive, pred: NDArray[Any]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        if not isinstance(predictive, Categorical) or self.pos_label is None:
            return None
        col = predictive.label_index([self.pos_label], "pos_label")[0]
        return predictive.proba[:, col], np.equal(pred, self.pos_label).astype(float)

    def _fast_expectations(self, predictive: Predictive, pred: NDArray[Any]) -> Moments | None:
        got = self._positive_probability(predictive, pred)
        if got is None:
            return None
        pi, a = got
        eta = self.eta
        return a * pi, eta * a + (1.0 - eta) * pi

    def _fast_second_moment(
        self, predictive: Predictive, pred: NDArray[Any], c: float
    ) -> NDArray[np.float64] | None:
        got = self._positive_probability(predictive, pred)
        if got is None:
            return None
        pi, a = got
        eta = self.eta
        # Cor. 4.4 (eq. 4.18–4.20): case f(x) = pos and f(x) ≠ pos.
        predicted_pos = pi * (1.0 - c) ** 2 + eta * eta * (1.0 - pi) * c * c
        predicted_neg = (1.0 - eta) ** 2 * pi * c * c
        return a * predicted_pos + (1.0 - a) * predicted_neg

    def __repr__(self) -> str:
        return f"{type(self).__name__}(beta={self.beta!r}, pos_label={self.pos_label!r})"


@dataclass(frozen=True, repr=False)
class Precision(FMeasure):
    """Precision of the class ``pos_label``: F_η with η = 1 (β = 0).

    The share of true positives among the predicted positives (``measure="precision"``).
    Only predicted positives carry weight, so optimal sampling puts no mass elsewhere.

    Parameters
    ----------
    pos_label : label, optional
        The positive class; defaults to the larger of a binary model's two classes
        (required with more classes).

    See Also
    --------
    Recall : The share of true positives among the actual positives.
    FMeasure : F_β, which trades the two off.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> pred = ae.as_predictive(np.array([0.1, 0.4, 0.8, 0.7, 0.55]))
    >>> round(ae.Precision(pos_label=1).intrinsic_value(pred), 3)   # (0.8 + 0.7 + 0.55) / 3
    0.683
    """

    beta: float = field(default=0.0, init=False)
    name: str = field(default="precision", init=False)

    def __repr__(self) -> str:
        return f"Precision(pos_label={self.pos_label!r})"


@dataclass(frozen=True, repr=False)
class Recall(FMeasure):
    """Recall of the class ``pos_label``: F_η with η = 0 (β → ∞).

    The share of true positives among the actual positives (``measure="recall"``).

    Parameters
    ----------
    pos_label : label, optional
        The positive class; defaults to the larger of a binary model's two classes
        (required with more classes).

    See Also
    --------
    Precision : The share of true positives among the predicted positives.
    FMeasure : F_β, which trades the two off.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> pred = ae.as_predictive(np.array([0.1, 0.4, 0.8, 0.7, 0.55]))
    >>> round(ae.Recall(pos_label=1).intrinsic_value(pred), 3)   # 2.05 / 2.55
    0.804
    """

    beta: float = field(default=math.inf, init=False)
    name: str = field(default="recall", init=False)

    def __repr__(self) -> str:
        return f"Recall(pos_label={self.pos_label!r})"


class LabelMean(Measure):
    """The mean of the label itself, G = E[y] (``measure="mean"``).

    The label is a score to average — an LLM judge's or a human's score, a rating, a win
    rate coded −1/0/+1 — and the predictions are a distribution *for the label*: class
    probabilities over numeric values, a ``Gaussian``, or a 1-d probability of 1. This is the
    setting of prediction-powered inference, here with the optimal q of Thm 4.1 for ℓ = y
    (q ∝ p·sqrt(E[(y − G)² | x])) and the model-assisted estimator, whose control variate is
    the predicted mean E[y | x]. The point prediction f(x) plays no part.

    See Also
    --------
    activeeval.measures.LabelProportion : The share of 0/1 labels equal to 1.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    A judge's predicted distribution over the scores 1, 2 and 3 on four items:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.measures import LabelMean
    >>> proba = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.0, 0.1, 0.9]])
    >>> pred = ae.Categorical(proba, labels=[1, 2, 3])
    >>> round(LabelMean().intrinsic_value(pred), 3)   # the mean predicted score
    2.25
    """

    name = "mean"
    greater_is_better = True
    categorical = False
    #: Fits class probabilities over numeric values and Gaussians alike (``check_fits``).
    any_predictions = True

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The label itself, ℓ = y, broadcast against ``prediction``.

        Parameters
        ----------
        prediction : array-like
            Ignored except for its shape.
        y : array-like
            Numeric labels.

        Returns
        -------
        ndarray of float
            ``y`` as floats, of the broadcast shape.
        """
        shape = np.broadcast_shapes(np.shape(prediction), np.shape(y))
        return np.broadcast_to(np.asarray(y, dtype=float), shape).astype(float)


class LabelProportion(LabelMean):
    """The share of labels equal to 1 among 0/1 labels (``measure="proportion"``).

    ``LabelMean`` with the intervals of a proportion (logit, Clopper–Pearson at 0 or 1).
    The predictions are probabilities over the classes 0 and 1, or a 1-d probability of 1.

    See Also
    --------
    activeeval.measures.LabelMean : The mean of numeric labels.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(size=400)                     # a judge's P(label = 1)
    >>> y = (rng.uniform(size=400) < p1).astype(int)
    >>> res = ae.evaluate(p1, lambda idx: y[idx], "proportion", budget=40, random_state=0)
    >>> print(f"{res.measure}: {res.estimate:.2f} from {res.n_labels} labels")
    proportion: 0.53 from 40 labels
    """

    name = "proportion"
    binary_loss = True

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> Measure:
        """The measure, after checking the predictions are over the labels 0 and 1.

        Parameters
        ----------
        predictive : Predictive, optional
            The predictive distribution for the label.
        values : sequence of array-like, optional
            Observed labels; passed on to ``LabelMean.bind``.

        Returns
        -------
        Measure
            This measure.

        Raises
        ------
        LabelSpaceError
            When the predictions are a ``Gaussian`` or class probabilities over other values.
        """
        leaf = first_part(predictive)
        if isinstance(leaf, Gaussian) or (
            isinstance(leaf, Categorical) and not set(leaf.labels.tolist()) <= {0, 1}
        ):
            raise LabelSpaceError(
                "measure: proportion is the share of labels equal to 1 among 0/1 labels; the "
                "predictions must be probabilities over the classes 0 and 1 (or a 1-d "
                "probability of 1). For other values use measure='mean'."
            )
        return super().bind(predictive, values)


# ------------------------------------------------ multi-class functions of several ratios
# Multi-class measures that are functions of several ratios: macro and weighted F_β,
# balanced accuracy, and per-class precision, recall and F_β.
#
# A K-class model's decision f(x) and the label y give three vectors of pool means (the
# confusion counts, with the test distribution p(x) over the pool)::
#
#     TP_k = Σ_x p(x) 1[f(x) = k] 1[y = k]      true positives of class k
#     PP_k = Σ_x p(x) 1[f(x) = k]               predicted positives (known from f alone)
#     T_k  = Σ_x p(x) 1[y = k]                  true members (the support)
#
# and every measure here is a smooth function G = g(TP, PP, T) of them:
#
# - F_β of class k: F_k = (1 + β²) TP_k / (β² T_k + PP_k), 0 where the denominator is 0;
# - ``macro_f1``: the mean of F_k over the model's K classes;
# - ``weighted_f1``: Σ_k T_k F_k / Σ_k T_k;
# - ``balanced_accuracy``: the mean recall TP_k / T_k over the classes with T_k > 0;
# - ``per_class_precision`` / ``per_class_recall`` / ``per_class_f1``: the vector of
#   TP_k / PP_k, TP_k / T_k or F_k (NaN where the denominator is 0).
#
# On a census these equal scikit-learn's ``f1_score(y, f, labels=classes, average="macro" |
# "weighted" | None, zero_division=0)``, ``balanced_accuracy_score`` and
# ``precision_score`` / ``recall_score(..., average=None)``.
#
# The thesis's rule for a generalized risk (Thm 4.1) extends to any smooth function of
# ratio estimates through its influence function: the estimator Ĝ = g(Ŝ) of the pool means
# Ŝ behaves as G + ∇g · (Ŝ − S), so its variance under draws from q is that of the
# importance-weighted mean of the linearized term ψ(x, y) = ∇g · (c(x, y) − S), where
# c(x, y) are the instance's confusion indicators. The optimal q is then
# q*(x) ∝ p(x) · sqrt(E[ψ(x, y)² | x]) (eq. 4.6 with ψ in place of w(ℓ − G)), computed with
# the model's p(y | x) (floored: ``floor`` / K on every class, sampling.optimal_distribution)
# and its own expected counts (the intrinsic value, eq. 4.21); a
# per-class vector takes the sum of its K variances. The *Multi-class measures* section of
# ``docs/how-it-works/sampling.md`` writes the derivation out.

#: The per-class metrics a :class:`PerClass` measure reports.
PER_CLASS_METRICS = ("f1", "precision", "recall")


@dataclass(frozen=True)
class Counts:
    """The pool means of the confusion counts, one entry per class (the section "multi-class
    functions of several ratios" of this module).

    Attributes
    ----------
    tp : ndarray
        True positives Σ p(x) 1[f(x) = k] 1[y = k].
    pp : ndarray
        Predicted positives Σ p(x) 1[f(x) = k].
    t : ndarray
        True members (the support) Σ p(x) 1[y = k].

    See Also
    --------
    ClasswiseMeasure.value_and_grad : A measure's value and gradient at counts.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.measures import Counts
    >>> c = Counts(tp=np.array([0.4, 0.3]), pp=np.array([0.5, 0.5]), t=np.array([0.6, 0.4]))
    >>> float(c.t.sum())
    1.0
    """

    tp: NDArray[Any]
    pp: NDArray[Any]
    t: NDArray[Any]


Gradient = tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


def _safe_div(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """num / den, 0 where den is 0 (and num, a count below it, is 0 too)."""
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _f_beta(c: Counts, beta2: float) -> tuple[NDArray[np.float64], ...]:
    """F_k, its denominator D_k and its partial derivatives (∂/∂TP, ∂/∂PP, ∂/∂T) per class."""
    d = beta2 * c.t + c.pp
    f = _safe_div((1.0 + beta2) * c.tp, d)
    ratio = _safe_div(f, d)
    return f, d, _safe_div(np.full_like(d, 1.0 + beta2), d), -ratio, -beta2 * ratio


def _check_beta(beta: float) -> float:
    b = float(beta)
    if not (b >= 0.0) or math.isinf(b):
        raise ShapeError(f"beta: must be a finite number ≥ 0, got {beta}.")
    return b


def _name_f_beta(meas: Any, stem: str) -> None:
    """An average of F_β checks its β and is named ``{stem}_f1`` or ``{stem}_f_beta(β)``."""
    b = _check_beta(meas.beta)
    object.__setattr__(meas, "name", f"{stem}_f1" if b == 1.0 else f"{stem}_f_beta({b:g})")


class ClasswiseMeasure(Measure):
    """A multi-class measure G = g(TP, PP, T) of the confusion counts' pool means.

    The base class of :class:`MacroF1`, :class:`WeightedF1`, :class:`BalancedAccuracy` and
    :class:`PerClass`. Unlike a generalized risk (eq. 3.27), such a measure is not one
    ratio of a per-instance loss and weight, so it has no ``loss`` or ``weight``; it gives
    its value and gradient at counts (``value_and_grad``), which the estimators
    linearize (the influence-function rule; module docstring). It needs a classifier's
    class probabilities, whose classes (``classes``, set by ``bind``) it averages over.

    Attributes
    ----------
    classes : tuple or None
        The model's classes in column order, once bound.
    vector : bool
        True when the value is one number per class (:class:`PerClass`).

    See Also
    --------
    evaluate : Estimates these with ``measure="macro_f1"`` and the other names.
    activeeval.estimators.classwise.classwise_estimate : The estimators.

    Examples
    --------
    The value and gradient at given counts (two classes, as pool means):

    >>> import numpy as np
    >>> from activeeval.measures import Counts
    >>> import activeeval as ae
    >>> c = Counts(tp=np.array([0.4, 0.3]), pp=np.array([0.5, 0.5]), t=np.array([0.6, 0.4]))
    >>> value, (d_tp, d_pp, d_t) = ae.BalancedAccuracy().value_and_grad(c)
    >>> round(float(value), 4)  # (0.4 / 0.6 + 0.3 / 0.4) / 2
    0.7083
    """

    categorical = True
    regular = False
    binary_loss = False
    greater_is_better = True
    #: True when the value is one number per class.
    vector: bool = False

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, 1)``: every measure here is a mean of proportions."""
        return (0.0, 1.0)

    @property
    def n_classes(self) -> int:
        """K, the number of the model's classes (the measure must be bound)."""
        return len(self._classes())

    def _classes(self) -> tuple[Any, ...]:
        classes = getattr(self, "classes", None)
        if classes is None:
            raise LabelSpaceError(
                f"measure: {self.name} averages over the model's classes; bind it to the "
                "model's Categorical predictions first (measure.bind(predictive))."
            )
        return tuple(classes)

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> ClasswiseMeasure:
        """The measure with the model's classes set.

        Parameters
        ----------
        predictive : Predictive
            The model's class probabilities (a Categorical, or a mixture of them).
        values : Any, optional
            Ignored: the classes are the model's, not the labels seen.

        Returns
        -------
        ClasswiseMeasure
            A copy with ``classes`` set.

        Raises
        ------
        UnknownOptionError
            When the predictions are not class probabilities.
        """
        # the classes from one row: a mixture is not collapsed over the pool (nor a store
        # being built read whole) for its labels
        row = predictive._chunk(slice(0, 1)) if isinstance(predictive, Predictive) else predictive
        cat = as_categorical(row, self.name)
        return _with_classes(self, tuple(cat.labels.tolist()))

    def value_and_grad(self, c: Counts) -> tuple[Any, Gradient]:
        """G at the counts ``c`` and its partial derivatives (∂G/∂TP, ∂G/∂PP, ∂G/∂T).

        Parameters
        ----------
        c : Counts
            Pool means of the confusion counts, one entry per class (the last axis; leading
            axes are batches, e.g. the jackknife's leave-one-out counts).

        Returns
        -------
        value : ndarray of shape (...) or, for a per-class measure, (..., K)
            G(c).
        gradient : tuple of three ndarrays of shape (K,)
            The derivatives with respect to TP_k, PP_k and T_k. For a per-class measure
            class k's value depends on class k's counts only, so entry k is the derivative
            of G_k (the Jacobian's diagonal).
        """
        raise NotImplementedError

    def intrinsic_value(
        self,
        predictive: Predictive,
        prediction: ArrayLike | None = None,
        *,
        pool_weights: ArrayLike | None = None,
        fast: bool = True,
    ) -> Any:
        """Ǧ: the measure's value if p(y | x) were the model's (eq. 4.21).

        Parameters
        ----------
        predictive : Predictive
            The model's class probabilities over the pool's ``m`` instances.
        prediction : array-like of shape (m,), optional
            The decision f(x) the measure scores; the model's most probable class by default.
        pool_weights : array-like of shape (m,), optional
            Non-negative weights of the pool instances; uniform by default.
        fast : bool, default True
            Unused (there is one rule), kept for the signature of :class:`Measure`.

        Returns
        -------
        float, or ndarray of shape (K,) for a per-class measure
            Ǧ at the model's expected confusion counts.
        """
        cat = as_categorical(predictive, self.name)
        meas = self if getattr(self, "classes", None) is not None else self.bind(cat)
        p = pool_distribution(cat.n, pool_weights)
        value = intrinsic(meas, cat.proba, decision_index(cat, prediction), p)
        return value if self.vector else float(value)

    def weight_can_be_positive(self, prediction: ArrayLike) -> NDArray[np.bool_]:
        """Every instance can move the measure (its label enters T).

        Parameters
        ----------
        prediction : array-like of shape (m,)
            The decisions f(x).

        Returns
        -------
        ndarray of bool, shape (m,)
            All True.
        """
        return np.ones(np.shape(prediction)[0], dtype=bool)

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """Not defined: the measure is a function of several ratios, not a mean loss.

        Parameters
        ----------
        prediction, y : array-like
            Predictions and labels (not used).

        Returns
        -------
        ndarray
            Never: the call is refused.

        Raises
        ------
        UnknownOptionError
            Always, naming what estimates the measure.
        """
        raise UnknownOptionError(
            f"measure: {self.name} is a function of several ratios (the confusion counts), "
            "not a mean of per-instance losses; estimate it with evaluate() or "
            "activeeval.estimators.classwise.classwise_estimate."
        )

    weight = loss

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _with_classes(meas: ClasswiseMeasure, classes: tuple[Any, ...]) -> ClasswiseMeasure:
    return replace(meas, classes=classes)  # type: ignore[type-var]


def as_categorical(predictive: Any, name: str) -> Categorical:
    """The class probabilities a multi-class measure needs (a mixture collapsed), or a
    refusal naming the measure and what fits."""
    pred = predictive.collapse() if isinstance(predictive, Mixture) else predictive
    if not isinstance(pred, Categorical):
        kind = type(first_part(predictive)).__name__
        raise UnknownOptionError(
            f"measure: {name} averages over a classifier's classes and needs its class "
            f"probabilities (an (m, K) array or a Categorical), not a {kind}; for a "
            "regressor use mse or mae."
        )
    return pred


def floored(proba: NDArray[np.float64], floor: float) -> NDArray[np.float64]:
    """(1 − floor)·p + floor/K: class probabilities with a share ``floor`` of each instance's
    mass spread evenly over the K classes (q*'s safeguard: no instance is certain)."""
    return proba if floor <= 0 else (1.0 - floor) * proba + floor / proba.shape[1]


@dataclass(frozen=True, repr=False)
class MacroF1(ClasswiseMeasure):
    """The macro-averaged F_β: the mean of the per-class F_β over the model's K classes.

    F_k = (1 + β²) TP_k / (β² T_k + PP_k), 0 for a class neither predicted nor present,
    as scikit-learn's ``f1_score(y, f, labels=classes, average="macro",
    zero_division=0)`` (``fbeta_score`` for β ≠ 1).

    Parameters
    ----------
    beta : float, default 1.0
        β ≥ 0 (0 averages the precisions).
    classes : tuple, optional
        The model's classes in column order; ``bind`` sets them from the predictions.

    See Also
    --------
    WeightedF1 : The support-weighted average.
    PerClass : Every class's F_β with its own interval.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2]])
    >>> meas = ae.MacroF1().bind(ae.Categorical(proba))
    >>> round(meas.intrinsic_value(ae.Categorical(proba)), 4)
    0.5364
    """

    beta: float = 1.0
    classes: tuple[Any, ...] | None = field(default=None, compare=False)
    name: str = field(default="macro_f1", init=False)

    def __post_init__(self) -> None:
        _name_f_beta(self, "macro")

    def value_and_grad(self, c: Counts) -> tuple[Any, Gradient]:
        k = c.tp.shape[-1]
        f, _d, dtp, dpp, dt = _f_beta(c, float(self.beta) ** 2)
        return f.mean(axis=-1), (dtp / k, dpp / k, dt / k)

    def __repr__(self) -> str:
        return f"MacroF1(beta={float(self.beta)!r})"


@dataclass(frozen=True, repr=False)
class WeightedF1(ClasswiseMeasure):
    """The support-weighted F_β: Σ_k T_k F_k / Σ_k T_k.

    As scikit-learn's ``f1_score(y, f, labels=classes, average="weighted",
    zero_division=0)``; 0 where no class has support.

    Parameters
    ----------
    beta : float, default 1.0
        β ≥ 0.
    classes : tuple, optional
        The model's classes in column order; ``bind`` sets them from the predictions.

    See Also
    --------
    MacroF1 : The unweighted mean over classes.

    Examples
    --------
    >>> import activeeval as ae
    >>> ae.get_measure("weighted_f1")
    WeightedF1(beta=1.0)
    """

    beta: float = 1.0
    classes: tuple[Any, ...] | None = field(default=None, compare=False)
    name: str = field(default="weighted_f1", init=False)

    def __post_init__(self) -> None:
        _name_f_beta(self, "weighted")

    def value_and_grad(self, c: Counts) -> tuple[Any, Gradient]:
        f, _d, dtp, dpp, dt = _f_beta(c, float(self.beta) ** 2)
        total = c.t.sum(axis=-1, keepdims=True)
        g = _safe_div((c.t * f).sum(axis=-1, keepdims=True), total)
        # ∂/∂T_k of Σ T F / Σ T: (F_k + T_k ∂F_k/∂T_k − G) / Σ T.
        grad = (_safe_div(c.t * dtp, total), _safe_div(c.t * dpp, total),
                _safe_div(f + c.t * dt - g, total))  # fmt: skip
        return g[..., 0], grad

    def __repr__(self) -> str:
        return f"WeightedF1(beta={float(self.beta)!r})"


@dataclass(frozen=True, repr=False)
class BalancedAccuracy(ClasswiseMeasure):
    """Balanced accuracy: the mean recall TP_k / T_k over the classes present (T_k > 0).

    As scikit-learn's ``balanced_accuracy_score``. An estimate averages over the classes
    the labels so far contain (on a census, every class present in the pool).

    Parameters
    ----------
    classes : tuple, optional
        The model's classes in column order; ``bind`` sets them from the predictions.

    See Also
    --------
    PerClass : Each class's recall with its own interval.

    Examples
    --------
    >>> import numpy as np
    >>> from activeeval.estimators.classwise import classwise_estimate
    >>> proba = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.4, 0.6]])
    >>> est = classwise_estimate("balanced_accuracy", proba, [0, 1, 2, 3], [0, 1, 1, 1])
    >>> round(est.estimate, 4)  # balanced_accuracy_score([0, 1, 1, 1], [0, 1, 0, 1])
    0.8333
    """

    classes: tuple[Any, ...] | None = field(default=None, compare=False)
    name: str = field(default="balanced_accuracy", init=False)

    def value_and_grad(self, c: Counts) -> tuple[Any, Gradient]:
        present = c.t > 0
        n = present.sum(axis=-1, keepdims=True)
        recall = _safe_div(c.tp, c.t)
        with np.errstate(invalid="ignore", divide="ignore"):
            g = np.where(n[..., 0] > 0, (recall * present).sum(axis=-1) / n[..., 0], math.nan)
            dtp = _safe_div(np.ones_like(c.t), c.t) / n
            dt = -_safe_div(recall, c.t) / n
        return g, (dtp, np.zeros_like(c.t), dt)


@dataclass(frozen=True, repr=False)
class PerClass(ClasswiseMeasure):
    """Every class's precision, recall or F_β, each with its own interval.

    A vector measure: ``evaluate`` returns a
    :class:`~activeeval.results.PerClassResult` with one estimate and interval per class
    (marginal intervals; ``adjust="bonferroni"`` makes them simultaneous). Its q minimizes
    the sum of the K variances. Precision is NaN for a class the model never predicts,
    recall for a class the labels have not shown.

    Parameters
    ----------
    metric : {"f1", "precision", "recall"}, default "f1"
        The per-class metric.
    beta : float, default 1.0
        β of F_β (``metric="f1"`` only).
    classes : tuple, optional
        The model's classes in column order; ``bind`` sets them from the predictions.

    See Also
    --------
    MacroF1 : The mean of the per-class F_β as one number.

    Examples
    --------
    >>> import activeeval as ae
    >>> ae.PerClass("recall")
    PerClass(metric='recall')
    """

    metric: str = "f1"
    beta: float = 1.0
    classes: tuple[Any, ...] | None = field(default=None, compare=False)
    name: str = field(default="per_class_f1", init=False)
    vector: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        metric = check_option(self.metric, PER_CLASS_METRICS, "metric")
        b = _check_beta(self.beta)
        if metric != "f1" and b != 1.0:
            raise ShapeError(f"beta: only metric='f1' takes a beta; drop beta={self.beta}.")
        name = f"per_class_{metric}" if b == 1.0 else f"per_class_f_beta({b:g})"
        object.__setattr__(self, "name", name)

    def value_and_grad(self, c: Counts) -> tuple[Any, Gradient]:
        z = np.zeros_like(c.t)
        if self.metric == "f1":
            f, _d, dtp, dpp, dt = _f_beta(c, float(self.beta) ** 2)
            return f, (dtp, dpp, dt)
        den = c.pp if self.metric == "precision" else c.t
        value = np.where(den > 0, _safe_div(c.tp, den), math.nan)
        dden = -_safe_div(np.nan_to_num(value), den)
        dtp = _safe_div(np.ones_like(den), den)
        return value, (dtp, dden, z) if self.metric == "precision" else (dtp, z, dden)

    def __repr__(self) -> str:
        if self.metric == "f1" and float(self.beta) != 1.0:
            return f"PerClass(metric='f1', beta={float(self.beta)!r})"
        return f"PerClass(metric={self.metric!r})"


# ----------------------------------------------------------------------------- the math
def decision_index(cat: Categorical, prediction: ArrayLike | None = None) -> NDArray[np.intp]:
    """The column of each instance's decision f(x): ``prediction``, else the model's own."""
    pred = cat.point_prediction() if prediction is None else np.asarray(prediction)
    return cat.label_index(pred, "prediction")


def model_counts(proba: NDArray[np.float64], f: NDArray[np.intp], p: NDArray[np.float64]) -> Counts:
    """The counts the model expects of itself (eq. 4.21): E_p(y|x)[TP], PP (exact) and
    E[T], with the test distribution ``p`` (summing to one) over the pool."""
    k = proba.shape[1]
    pp = np.bincount(f, weights=p, minlength=k)
    tp = np.bincount(f, weights=p * proba[np.arange(f.shape[0]), f], minlength=k)
    return Counts(tp=tp, pp=pp, t=p @ proba)


def pool_counts(chunks: Any, k: int) -> Counts:
    """The counts of :func:`model_counts` (eq. 4.21: E[TP], PP, E[T] per class) over the
    pool given a chunk of rows at a time (class probabilities, decision columns, p), the
    chunks' counts added in row order from zero, so that a pool in memory and one read a
    chunk at a time (a session's store, a streamed pool file) give the same floats
    (:func:`pool_counts_of_decisions`)."""
    return pool_counts_of_decisions(((pr, (f,), p) for pr, f, p in chunks), k)[0]


def pool_counts_of_decisions(chunks: Any, k: int) -> list[Counts]:
    """:func:`pool_counts` for several decisions at once (chunks of class probabilities,
    a tuple of decision columns, p): one pass. E[T] is summed by numpy, not as
    model_counts' BLAS product, whose rounding depends on its number of threads (a store
    made on one machine and read on another would not be the pool's to the bit), over rows
    in C order whatever the input's (numpy's sum follows the memory layout)."""
    out: list[list[NDArray[np.float64]]] = []
    for proba, fs, p in chunks:
        proba = np.ascontiguousarray(proba)
        if not out:
            out = [[np.zeros(k), np.zeros(k), np.zeros(k)] for _ in fs]
        rows = np.arange(proba.shape[0])
        t = (p[:, None] * proba).sum(axis=0)
        for acc, f in zip(out, fs, strict=True):
            acc[0] += np.bincount(f, weights=p * proba[rows, f], minlength=k)
            acc[1] += np.bincount(f, weights=p, minlength=k)
            acc[2] += t
    return [Counts(tp=tp, pp=pp, t=t) for tp, pp, t in out]


def intrinsic(meas: ClasswiseMeasure, proba: NDArray[np.float64], f: NDArray[np.intp],
              p: NDArray[np.float64]) -> Any:  # fmt: skip
    """Ǧ: the measure's value if p(y | x) were the model's (eq. 4.21)."""
    return meas.value_and_grad(model_counts(proba, f, p))[0]


def _influences(
    meas: ClasswiseMeasure, proba: NDArray[np.float64], f: NDArray[np.intp],
    p: NDArray[np.float64], counts: Counts | None = None,
) -> NDArray[np.float64]:  # fmt: skip
    """ψ(x, j) = ∇G·(c(x, j) − S) for every instance and label, (m, K), at the counts S
    the model ``proba`` expects for the decision ``f`` (a measure of one value); ``counts``:
    S over the whole pool where these rows are a chunk of it."""
    s = model_counts(proba, f, p) if counts is None else counts
    _value, (dtp, dpp, dt) = meas.value_and_grad(s)
    m, k = proba.shape
    center = float(dtp @ s.tp + dpp @ s.pp + dt @ s.t)
    psi = np.broadcast_to(dt, (m, k)) + (dpp[f] - center)[:, None]
    psi = np.array(psi)  # writable
    psi[np.arange(m), f] += dtp[f]
    return psi


def difference_influence_moment(
    meas: ClasswiseMeasure,
    proba: NDArray[np.float64],
    fs: tuple[NDArray[np.intp], NDArray[np.intp]],
    p: NDArray[np.float64],
    counts: tuple[Counts, Counts] | None = None,
) -> NDArray[np.float64]:
    """E[(ψ₀ − ψ₁)² | x] per pool instance under ``proba`` (the models' mixture, eq. 5.11),
    each model's influence at the counts the mixture expects for its decision (eq. 5.12):
    the integrand of the optimal comparison distribution (Thm 5.1, eq. 5.5) for a function
    of several ratios. O(m·K). ``counts``: both counts over the whole pool where these rows
    are a chunk of it."""
    c0, c1 = (None, None) if counts is None else counts
    d = _influences(meas, proba, fs[0], p, c0) - _influences(meas, proba, fs[1], p, c1)
    return np.einsum("ij,ij,ij->i", proba, d, d)


def influence_second_moment(
    meas: ClasswiseMeasure,
    proba: NDArray[np.float64],
    f: NDArray[np.intp],
    p: NDArray[np.float64],
    counts: Counts | None = None,
) -> NDArray[np.float64]:
    """E[Σ_g ψ_g(x, y)² | x] per pool instance under the model, ψ_g = ∇G_g · (c(x, y) − S)
    at the model's own counts S — the integrand of q* (eq. 4.6 with ψ for w(ℓ − G)); the
    sum runs over the K values of a per-class measure, one term otherwise. ``counts``: S
    over the whole pool where these rows are a chunk of it.

    With ∇G = (a, b, d) for (PP, T, TP) and c(x, y = j) the indicators
    1[f = k], 1[j = k], 1[f = j = k]: ψ(x, j) = a_f − ∇G·S + b_j + d_j 1[f = j].
    O(m·K) time and memory."""
    if not meas.vector:
        psi = _influences(meas, proba, f, p, counts)
        return np.einsum("ij,ij,ij->i", proba, psi, psi)
    s = model_counts(proba, f, p) if counts is None else counts
    _value, (dtp, dpp, dt) = meas.value_and_grad(s)
    m, k = proba.shape
    rows = np.arange(m)
    # Per class k: ψ_k(x, j) = u_xk + 1[j = k] e_xk with u_xk = dpp_k 1[f = k] − C_k and
    # e_xk = dt_k + dtp_k 1[f = k]; E[ψ_k² | x] = u² + P_xk (2 u e + e²), summed over k.
    center = dtp * s.tp + dpp * s.pp + dt * s.t
    u = np.broadcast_to(-center, (m, k)).copy()
    u[rows, f] += dpp[f]
    e = np.broadcast_to(dt, (m, k)).copy()
    e[rows, f] += dtp[f]
    return np.sum(u * u + proba * (2.0 * u * e + e * e), axis=1)


_NAMED: dict[str, Any] = {
    "error_rate": ErrorRate,
    "accuracy": Accuracy,
    "mse": SquaredError,
    "mae": AbsoluteError,
    "f1": FMeasure,
    "precision": Precision,
    "recall": Recall,
    "mean": LabelMean,
    "proportion": LabelProportion,
    "macro_f1": MacroF1,
    "weighted_f1": WeightedF1,
    "balanced_accuracy": BalancedAccuracy,
    "per_class_f1": lambda: PerClass("f1"),
    "per_class_precision": lambda: PerClass("precision"),
    "per_class_recall": lambda: PerClass("recall"),
}
#: The measures of probabilities: probability_measures.py (which imports this module) adds
#: them to the registry; ``activeeval.get_measure`` is served from there so they are found.
PROBABILITY_MEASURES = ("brier", "log_loss", "ece", "roc_auc", "average_precision")


def warn_undefined_intrinsic(name: str, stacklevel: int) -> None:
    """The warning of :meth:`Measure.intrinsic_value` where the expected weight on the pool
    is zero."""
    warnings.warn(
        f"{name}: the intrinsic value is undefined because the expected weight on the pool is "
        "zero (e.g. precision of a model that never predicts the positive class); returning "
        "NaN.",
        UndefinedEstimateWarning,
        stacklevel=stacklevel,
    )


def refuse_decision(measure: Measure, given: bool, name: str = "prediction") -> None:
    """Refuse a decision f(x) (``given``) for a measure of the label itself (``"mean"``,
    ``"proportion"``): no f(x) plays a part in it, so it would be ignored without a word."""
    if given and isinstance(measure, LabelMean):
        raise UnknownOptionError(
            f"{name}: {measure.name!r} is the mean of the label itself; no decision f(x) "
            f"plays a part in it. Drop {name}= (the predictions are the label's distribution)."
        )


def check_fits(measure: Measure, predictive: Any) -> None:
    """Refuse a measure that does not fit the kind of predictions.

    A classification measure (0/1 or cost-matrix loss, F-measures) on a regressor's Gaussian,
    or a numeric loss (MSE, MAE) on a classifier's class probabilities, would return a number
    that means nothing (an error rate of 1.0 for every real-valued prediction; squared
    differences of class codes). ``evaluate``, ``compare``, sessions and ``plan`` all check
    this. Label means pass (``"mean"`` fits either kind; ``"proportion"`` checks its
    predictions when bound).

    Parameters
    ----------
    measure : Measure
        The measure to check.
    predictive : Predictive
        The predictions (a mixture is judged by its first part).

    Raises
    ------
    UnknownOptionError
        Naming the measure, the kind of predictions and what fits.

    See Also
    --------
    get_measure : A measure object from its name.
    as_predictive : Predictions from arrays and DataFrames.

    Examples
    --------
    >>> import activeeval as ae
    >>> from activeeval.measures import check_fits
    >>> pred = ae.Gaussian(mean=[0.5, 2.0], var=[1.0, 1.0])
    >>> check_fits(ae.SquaredError(), pred)           # fits: returns None
    >>> check_fits(ae.ErrorRate(), pred)
    Traceback (most recent call last):
    ...
    activeeval.errors.UnknownOptionError: measure: error_rate scores class labels, ...
    """
    leaf = first_part(predictive)
    if getattr(measure, "any_predictions", False):
        return
    if measure.categorical and isinstance(leaf, Gaussian):
        raise UnknownOptionError(
            f"measure: {measure.name} scores class labels, but the predictions are a "
            "regressor's Gaussian(mean, var); use mse or mae, or pass a classifier's class "
            "probabilities."
        )
    if not measure.categorical and isinstance(leaf, Categorical):
        raise UnknownOptionError(
            f"measure: {measure.name} scores numeric predictions, but the predictions are a "
            "classifier's class probabilities; use error_rate, accuracy, f1, precision, recall "
            "or a cost matrix (CostMatrixLoss), or pass a regressor's Gaussian(mean, var)."
        )


def get_measure(measure: Measure | str, *, pos_label: Any = None) -> Measure:
    """A measure object from a measure or one of its names.

    Parameters
    ----------
    measure : Measure or str
        A measure, returned unchanged, or one of the names ``"error_rate"``,
        ``"accuracy"``, ``"mse"``, ``"mae"``, ``"f1"``, ``"precision"``, ``"recall"``,
        ``"mean"`` and ``"proportion"``.
    pos_label : label, optional
        The positive class of ``"f1"``, ``"precision"`` and ``"recall"``; ignored by the
        others. When unset it is resolved later from the model's classes.

    Returns
    -------
    Measure
        The measure object.

    Raises
    ------
    UnknownOptionError
        When the name is not one of the above.

    See Also
    --------
    Measure : The base class, for measures of one's own.
    evaluate : Accepts a measure or its name.

    Examples
    --------
    >>> import activeeval as ae
    >>> ae.get_measure("error_rate")
    ErrorRate()
    >>> ae.get_measure("f1", pos_label="spam")
    FMeasure(beta=1.0, pos_label='spam')
    """
    if isinstance(measure, Measure):
        return measure
    if measure in PROBABILITY_MEASURES and measure not in _NAMED:
        raise UnknownOptionError(
            f"measure: {measure!r} is a measure of probabilities, registered when "
            "activeeval.probability_measures is imported; call activeeval.get_measure (which "
            "imports it) or import that module first."
        )
    key = check_option(measure, tuple(_NAMED), "measure")
    cls = _NAMED[key]
    if isinstance(cls, type) and (
        issubclass(cls, FMeasure) or getattr(cls, "takes_pos_label", False)
    ):
        return cls(pos_label=pos_label)
    meas = cls()
    if pos_label is not None and isinstance(meas, ClasswiseMeasure):
        raise UnknownOptionError(
            f"pos_label: {key} averages over (or reports) every class and has no positive "
            f"class; drop pos_label={pos_label!r}, or use 'f1' with pos_label= for one class."
        )
    return meas
