"""Predictive distributions p(y | x; θ) over a pool of instances.

They stand in for the unknown conditional p(y | x) when sampling distributions are derived
(thesis Sec. 4.2.2). Every distribution offers the same general rule: a per-instance discrete
support with probabilities, :meth:`Predictive.support`, over which any conditional expectation
E_y[g(y) | x] is a weighted sum (:meth:`Predictive.expect`). It is exact for categorical
distributions, exact for polynomials of degree < 2·nodes for Gaussians (Gauss–Hermite
quadrature), and mixtures concatenate the supports of their parts (eq. 5.11). Measures add
closed-form fast paths on top and are tested equal to this rule.
"""

from __future__ import annotations

import re
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._chunks import row_chunks
from ._validation import check_finite_array, check_probability_rows
from .errors import (
    ActiveEvalWarning,
    EmptyPoolError,
    InvalidVarianceError,
    LabelSpaceError,
    ShapeError,
)

__all__ = ["Categorical", "Gaussian", "Mixture", "Predictive", "as_predictive", "calibrate_scores"]

#: Gauss–Hermite nodes used by :meth:`Gaussian.support`; exact for polynomial losses up to
#: degree 2 * 20 - 1 (squared error needs degree 4).
GAUSS_HERMITE_NODES = 20


class Predictive(ABC):
    """A distribution p(y | x; θ) over labels for each of the ``n`` pool instances.

    The abstract base of ``Categorical``, ``Gaussian`` and ``Mixture``. A subclass gives a
    per-instance discrete ``support`` (values and probabilities), the model's
    ``point_prediction`` f(x) and ``take`` (a subset of the instances); any conditional
    expectation E_y[g(y) | x] is then a weighted sum over the support (``expect``), which is
    how measures compute their conditional moments when no closed form applies.

    See Also
    --------
    as_predictive : Predictions from arrays and DataFrames.
    from_estimator : Predictions from a fitted scikit-learn model.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> pred = ae.as_predictive(np.array([0.2, 0.9, 0.6]))   # P(class 1) of three instances
    >>> isinstance(pred, ae.Predictive), pred.n
    (True, 3)
    >>> np.round(pred.expect(lambda y: y == 1), 3).tolist()   # E[1[y = 1] | x]
    [0.2, 0.9, 0.6]
    """

    @property
    @abstractmethod
    def n(self) -> int:
        """Number of pool instances."""

    @abstractmethod
    def support(self) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """Per-instance support points and their probabilities.

        Returns
        -------
        values : ndarray
            The support points, broadcastable to ``(n, S)``.
        probs : ndarray of float
            Their probabilities, broadcastable to ``(n, S)``; each row sums to one.
        """

    @abstractmethod
    def point_prediction(self) -> NDArray[Any]:
        """The model's prediction f(x) for each instance.

        The mode for classifiers, the mean for regressors (thesis Sec. 4.1), unless another
        decision was set (``with_decision``).

        Returns
        -------
        ndarray of shape (n,)
            One prediction per instance.
        """

    @abstractmethod
    def take(self, index: ArrayLike | slice) -> Predictive:
        """The distribution restricted to some of the instances.

        Parameters
        ----------
        index : array-like of int
            Positions of the instances to keep, in the order wanted (repeats allowed). The
            built-in distributions also take a slice, giving views of the rows, not copies
            (a subclass need not).

        Returns
        -------
        Predictive
            A distribution of the same kind over ``len(index)`` instances.
        """

    def _chunk(self, rows: slice) -> Predictive:
        """A chunk of the pool (``rows``, a slice with step 1) for a pass over it: views of
        the rows for the built-in distributions, else ``take`` of their positions (a
        subclass written for index arrays keeps working)."""
        return self.take(np.arange(*rows.indices(self.n)))

    def expect(self, g: Callable[[NDArray[Any]], NDArray[Any]]) -> NDArray[np.float64]:
        """E_y[g(y) | x] for every instance, by summation over the support.

        Exact for categorical distributions; for a ``Gaussian`` exact for polynomials of
        degree below 40 (Gauss–Hermite quadrature with 20 nodes).

        Parameters
        ----------
        g : callable
            Receives the support values as an array broadcastable to ``(n, S)`` and returns
            values broadcastable to ``(n, S)``.

        Returns
        -------
        ndarray of shape (n,)
            The conditional expectation per instance.
        """
        values, probs = self.support()
        out = np.asarray(g(values), dtype=float)
        return np.sum(
            np.broadcast_to(out, np.broadcast_shapes(out.shape, probs.shape)) * probs, axis=1
        )

    def __len__(self) -> int:
        return self.n


class Categorical(Predictive):
    """Class probabilities of a K-class classifier.

    Parameters
    ----------
    proba : array-like of shape (m, K)
        ``proba[i, k]`` is p(y = labels[k] | x_i; θ), e.g. ``predict_proba`` output. Entries lie
        in [0, 1] and rows sum to one within ``PROBABILITY_ROW_TOL`` (1e-6).
    labels : array-like of shape (K,), optional
        The class label of each column, unique. Defaults to ``0, ..., K-1`` (scikit-learn
        orders columns by sorted class labels, so pass ``clf.classes_``).
    name : str, default "proba"
        The argument's name in error messages.

    Raises
    ------
    ProbabilityRowsError
        When an entry lies outside [0, 1] or a row does not sum to one.
    ShapeError
        When ``proba`` is not a non-empty 2-d array or ``labels`` does not have one entry
        per column.
    LabelSpaceError
        When ``labels`` has duplicates.

    See Also
    --------
    as_predictive : Also reads a 1-d probability of class 1 or a DataFrame.
    from_estimator : From a fitted scikit-learn classifier.
    calibrate_scores : From raw scores and a few labels.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])
    >>> pred = ae.Categorical(proba, labels=["cat", "dog", "fox"])
    >>> pred.point_prediction().tolist()
    ['cat', 'fox']
    >>> np.round(pred.column_probability(np.array(["dog", "dog"])), 3).tolist()
    [0.2, 0.3]
    """

    #: Set by :meth:`with_decision`: the decision f(x) is not the argmax.
    _decision: Any = None
    #: True when read from a DataFrame by column name (its classes in sorted order).
    _named: bool = False

    def __init__(
        self, proba: ArrayLike, labels: ArrayLike | None = None, *, name: str = "proba"
    ) -> None:
        self.proba = check_probability_rows(proba, name)
        k = self.proba.shape[1]
        if labels is None:
            lab = np.arange(k)
        else:
            lab = np.asarray(labels)
            if lab.ndim != 1 or lab.shape[0] != k:
                raise ShapeError(
                    f"labels: expected {k} labels (one per column of proba), got shape {lab.shape}."
                )
            if np.unique(lab).shape[0] != k:
                raise LabelSpaceError("labels: class labels must be unique; found duplicates.")
        self.labels = lab
        self._order = np.argsort(lab, kind="stable")
        self._sorted = lab[self._order]

    @property
    def n(self) -> int:
        return int(self.proba.shape[0])

    def support(self) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """The class labels and their probabilities.

        Returns
        -------
        values : ndarray of shape (1, K)
            The labels, shared by every instance.
        probs : ndarray of shape (n, K)
            ``proba``.
        """
        return self.labels[None, :], self.proba

    def point_prediction(self) -> NDArray[Any]:
        """The predicted class f(x): the most probable one, unless ``with_decision`` set another.

        Returns
        -------
        ndarray of shape (n,)
            One label per instance (the first of tied classes, as ``np.argmax``).
        """
        return self._point_prediction

    @cached_property
    def _point_prediction(self) -> NDArray[Any]:
        if self.labels.dtype.kind in "iu" and np.array_equal(
            self.labels, np.arange(self.labels.shape[0])
        ):
            return self.predicted_index  # default labels 0..K-1: no gather needed
        return self.labels[self.predicted_index]

    @cached_property
    def predicted_index(self) -> NDArray[np.intp]:
        """Column of the most probable class (first one on ties, as ``np.argmax``)."""
        return np.argmax(self.proba, axis=1)

    @cached_property
    def predicted_probability(self) -> NDArray[np.float64]:
        """p(f(x) | x; θ), the probability of the predicted class."""
        k = self.proba.shape[1]
        flat = np.arange(self.proba.shape[0]) * k + self.predicted_index  # row-major gather
        return np.ascontiguousarray(self.proba).ravel()[flat]

    def take(self, index: ArrayLike | slice) -> Categorical:
        """The class probabilities of some of the instances.

        Parameters
        ----------
        index : array-like of int
            Positions of the instances to keep, in the order wanted.

        Returns
        -------
        Categorical
            The same labels (and decision, if one was set) over ``len(index)`` instances.
        """
        out = object.__new__(Categorical)
        idx = index if isinstance(index, slice) else np.asarray(index)
        out.proba = self.proba[idx]
        out.labels, out._order, out._sorted = self.labels, self._order, self._sorted
        if self.__dict__.get("_decision") is not None:  # a decision apart from the argmax
            out._decision = True
            for key in ("_point_prediction", "predicted_index", "predicted_probability"):
                out.__dict__[key] = self.__dict__[key][idx]
        elif isinstance(idx, slice):  # a chunk of the pool: its argmax found once for all
            whole = self.__dict__.get("predicted_index")
            codes = self._codes if whole is None else whole
            out.__dict__["predicted_index"] = codes[idx].astype(np.intp)
        return out

    def _chunk(self, rows: slice) -> Categorical:
        return self.take(rows)

    @cached_property
    def _codes(self) -> NDArray[Any]:
        """``predicted_index`` in the smallest integer type, found a chunk at a time: what the
        chunks of a pass over the pool (``take(slice)``) read their decisions from, so that
        the passes of q*, the estimators' pool sums and the census check find each row's
        argmax once (one byte per instance up to 127 classes)."""
        k = self.proba.shape[1]
        dtype = np.int8 if k <= 127 else np.int16 if k <= 32767 else np.intp
        out = np.empty(self.n, dtype=dtype)
        for rows in row_chunks(self.n):
            out[rows] = np.argmax(self.proba[rows], axis=1)
        return out

    def with_decision(self, prediction: ArrayLike, name: str = "prediction") -> Categorical:
        """The same beliefs p(y | x) with another decision f(x) for the measure to score.

        The decision may be a threshold, a rule or a different model's labels (the thesis
        keeps f apart from p(y | x): Thm 4.1 takes both). ``predicted_index`` and
        ``predicted_probability`` then refer to f.

        Parameters
        ----------
        prediction : array-like of shape (n,)
            One label per instance, each in ``labels``.
        name : str, default "prediction"
            The argument's name in error messages.

        Returns
        -------
        Categorical
            A copy whose point prediction is ``prediction``.

        Raises
        ------
        ShapeError
            When ``prediction`` does not have one entry per instance.
        LabelSpaceError
            When a label is not one of the classes.
        """
        f = np.asarray(prediction)
        check_decision_shape(f.shape, self.n, name, classes=True)
        col = self.label_index(f, name)
        out = self.take(np.arange(self.n))
        out._decision = True
        out.__dict__["_point_prediction"] = self.labels[col]
        out.__dict__["predicted_index"] = col
        out.__dict__["predicted_probability"] = self.proba[np.arange(self.n), col]
        return out

    def label_index(self, y: ArrayLike, name: str = "labels") -> NDArray[np.intp]:
        """The column of each label in ``y``.

        Parameters
        ----------
        y : array-like
            Labels, each one of the classes.
        name : str, default "labels"
            The argument's name in error messages.

        Returns
        -------
        ndarray of int
            Column positions, of the shape of ``y``.

        Raises
        ------
        LabelSpaceError
            When a label is not one of the classes.
        """
        memo = self.__dict__.get("_label_memo")  # members of one tempering share lookups
        if memo is not None and memo[0] is y:
            return memo[1]
        out = label_index(self.labels, y, name, order=self._order, sorted_labels=self._sorted)
        if memo is not None and isinstance(y, np.ndarray):
            memo[:] = [y, out]
        return out

    def column_probability(self, y: ArrayLike, name: str = "labels") -> NDArray[np.float64]:
        """The probability p(y_i | x_i; θ) of one label per instance.

        Parameters
        ----------
        y : array-like of shape (n,)
            One label per instance (or one label for all).
        name : str, default "labels"
            The argument's name in error messages.

        Returns
        -------
        ndarray of shape (n,)
            The probability of each instance's label.

        Raises
        ------
        LabelSpaceError
            When a label is not one of the classes.
        """
        if y is self.__dict__.get("_point_prediction"):
            return self.predicted_probability  # the model's own predictions: no lookup
        col = self.label_index(y, name)
        col = np.broadcast_to(col, (self.n,))
        return self.proba[np.arange(self.n), col]


def label_index(
    labels: NDArray[Any],
    y: ArrayLike,
    name: str,
    *,
    order: NDArray[np.intp] | None = None,
    sorted_labels: NDArray[Any] | None = None,
    start: int = 0,
) -> NDArray[np.intp]:
    """Position of each value of ``y`` in the label array ``labels`` (vectorised lookup);
    a refusal names the value's position counted from ``start`` (``y`` a chunk)."""
    if order is None or sorted_labels is None:
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
    yy = np.asarray(y)
    try:
        pos = np.searchsorted(sorted_labels, yy)
    except TypeError as exc:
        raise LabelSpaceError(
            f"{name}: labels of type {yy.dtype} cannot be compared with the label space "
            f"{labels.tolist()}."
        ) from exc
    pos = np.clip(pos, 0, sorted_labels.shape[0] - 1)
    ok = sorted_labels[pos] == yy
    if not np.all(ok):
        bad = np.flatnonzero(~np.atleast_1d(ok))[0]
        value = np.atleast_1d(yy)[bad]  # a numpy scalar, or an object array's own value
        value = value.item() if isinstance(value, np.generic) else value
        raise LabelSpaceError(
            f"{name}: value {value!r} (position {start + bad}) is not in "
            "the label "
            f"space {labels.tolist()}; fix the label or pass the model's full class list."
        )
    return np.asarray(order[pos], dtype=np.intp)


def check_spread(x: NDArray[np.float64], name: str, start: int = 0) -> None:
    """Refuse a negative predictive variance (``name`` "var") or standard deviation ("std"),
    naming its entry counted from ``start`` (``x`` a chunk of rows)."""
    if (x < 0).any():
        bad = int(np.flatnonzero(x < 0)[0])
        what = (
            "standard deviations must be ≥ 0."
            if name == "std"
            else "predictive variances must be ≥ 0 (pass the variance, i.e. std**2, not a "
            "log-variance)."
        )
        raise InvalidVarianceError(f"{name}: entry {start + bad} is {x[bad]:g}; {what}")


class Gaussian(Predictive):
    """Gaussian predictive distribution N(mean, var) of a probabilistic regressor.

    The constructor takes the **variance** σ², not the standard deviation σ. A standard
    deviation (what scikit-learn's ``predict(X, return_std=True)`` returns) goes through
    ``Gaussian.from_std(mean, std)``, which squares it.

    Parameters
    ----------
    mean : array-like of shape (m,)
        The predictive mean of each instance, also the model's prediction f(x).
    var : array-like of shape (m,)
        The predictive **variance** σ² ≥ 0 of each instance (not the standard deviation).

    Raises
    ------
    EmptyPoolError
        When ``mean`` is empty.
    ShapeError
        When ``var`` and ``mean`` differ in length.
    InvalidVarianceError
        When a variance is negative.

    See Also
    --------
    Gaussian.from_std : The same from a standard deviation.
    SquaredError : The mean squared error.
    from_estimator : From a fitted probabilistic scikit-learn regressor.

    Examples
    --------
    >>> import activeeval as ae
    >>> pred = ae.Gaussian(mean=[1.0, 2.5], var=[0.25, 4.0])        # variances
    >>> same = ae.Gaussian.from_std(mean=[1.0, 2.5], std=[0.5, 2.0])  # standard deviations
    >>> same.var.tolist()
    [0.25, 4.0]
    >>> round(ae.SquaredError().intrinsic_value(pred), 3)   # the mean variance
    2.125
    """

    #: Set by :meth:`with_decision`: the prediction f(x) where it is not the mean.
    _decision: Any = None
    #: E[(y − mean)⁴] / var², the fourth standardized moment that the squared error's
    #: variance formulas take (eq. 4.17): 3, the Gaussian's. Only the tempered interval's
    #: members set another — the labels' estimate
    #: (:func:`activeeval.estimators.tempered.residual_kurtosis`); nothing else reads it.
    kurtosis: float = 3.0

    def __init__(self, mean: ArrayLike, var: ArrayLike) -> None:
        self.mean = check_finite_array(mean, "mean", ndim=1)
        self.var = check_finite_array(var, "var", ndim=1)
        if self.mean.shape[0] == 0:
            raise EmptyPoolError("mean: the pool is empty (0 instances).")
        if self.var.shape != self.mean.shape:
            raise ShapeError(
                f"var: has {self.var.shape[0]} entries but mean has {self.mean.shape[0]}."
            )
        check_spread(self.var, "var")

    @classmethod
    def from_std(cls, mean: ArrayLike, std: ArrayLike) -> Gaussian:
        """N(mean, std²) from a predictive **standard deviation** σ.

        Use this with what scikit-learn's ``predict(X, return_std=True)`` returns; the
        standard deviation is squared, since the constructor ``Gaussian(mean, var)`` takes
        the variance.

        Parameters
        ----------
        mean : array-like of shape (m,)
            The predictive mean of each instance.
        std : array-like of shape (m,)
            The predictive **standard deviation** σ ≥ 0 of each instance (not the variance).

        Returns
        -------
        Gaussian
            The distribution with ``var = std ** 2``.

        Raises
        ------
        ShapeError
            When ``std`` and ``mean`` differ in length.
        InvalidVarianceError
            When a standard deviation is negative.
        """
        sd = check_finite_array(std, "std", ndim=1)
        mu = check_finite_array(mean, "mean", ndim=1)
        if sd.shape != mu.shape:
            raise ShapeError(f"std: has {sd.shape[0]} entries but mean has {mu.shape[0]}.")
        check_spread(sd, "std")
        return cls(mean, sd * sd)

    def __repr__(self) -> str:
        return (
            f"Gaussian(m={self.n}, mean in [{self.mean.min():.4g}, {self.mean.max():.4g}], "
            f"var (variance) in [{self.var.min():.4g}, {self.var.max():.4g}])"
        )

    @property
    def n(self) -> int:
        return int(self.mean.shape[0])

    def support(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Gauss–Hermite nodes and weights, exact for polynomials of degree below 40.

        Returns
        -------
        values : ndarray of shape (n, 20)
            The nodes, mean + sqrt(2 var) · t_k, per instance.
        probs : ndarray of shape (1, 20)
            The normalized quadrature weights, shared by every instance.
        """
        nodes, weights = np.polynomial.hermite.hermgauss(GAUSS_HERMITE_NODES)
        values = self.mean[:, None] + np.sqrt(2.0 * self.var)[:, None] * nodes[None, :]
        return values, (weights / np.sqrt(np.pi))[None, :]

    def point_prediction(self) -> NDArray[np.float64]:
        """The prediction f(x): the mean, unless ``with_decision`` set another.

        Returns
        -------
        ndarray of shape (n,)
            One prediction per instance.
        """
        decision = self.__dict__.get("_decision")
        return self.mean if decision is None else decision

    def take(self, index: ArrayLike | slice) -> Gaussian:
        """The distribution of some of the instances.

        Parameters
        ----------
        index : array-like of int
            Positions of the instances to keep, in the order wanted.

        Returns
        -------
        Gaussian
            Means, variances (and decision and kurtosis, if set) of those instances.
        """
        out = object.__new__(Gaussian)
        idx = index if isinstance(index, slice) else np.asarray(index)
        out.mean, out.var = self.mean[idx], self.var[idx]
        if self.__dict__.get("_decision") is not None:
            out._decision = self._decision[idx]
        if "kurtosis" in self.__dict__:
            out.kurtosis = self.kurtosis
        return out

    def _chunk(self, rows: slice) -> Gaussian:
        return self.take(rows)

    def with_decision(self, prediction: ArrayLike, name: str = "prediction") -> Gaussian:
        """The same beliefs N(mean, var) with another prediction f(x) for the measure to score.

        E.g. a deployed model's output, where the Gaussian is a second model's belief.

        Parameters
        ----------
        prediction : array-like of shape (n,)
            One finite number per instance.
        name : str, default "prediction"
            The argument's name in error messages.

        Returns
        -------
        Gaussian
            A copy whose point prediction is ``prediction``.

        Raises
        ------
        ShapeError
            When ``prediction`` does not have one entry per instance.
        """
        f = check_finite_array(prediction, name, ndim=1)
        check_decision_shape(f.shape, self.n, name, classes=False)
        out = self.take(np.arange(self.n))
        out._decision = f
        return out


class Mixture(Predictive):
    """Mixture of predictive distributions over the same pool (thesis eq. 5.11).

    p(y | x) = Σ_j weights[j] p_j(y | x). Any conditional expectation is the weighted sum of
    the parts' expectations, so raw moments combine linearly (eq. 5.13).

    Parameters
    ----------
    parts : sequence of Predictive
        Components over the same ``n`` instances; all Categorical with the same labels, or all
        Gaussian (mixtures may nest).
    weights : array-like of shape (len(parts),), optional
        Non-negative, summing to one; uniform by default (eq. 5.11).

    Raises
    ------
    ShapeError
        When the parts differ in size or kind, or the weights are not a distribution.
    LabelSpaceError
        When Categorical parts have different labels.

    See Also
    --------
    compare : Samples from the mixture of the compared models' beliefs.
    Categorical : A classifier's class probabilities.
    Gaussian : A regressor's predictive distribution.

    Examples
    --------
    Two classifiers' beliefs, weighted 3:1:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> a = ae.Categorical(np.array([[0.9, 0.1], [0.4, 0.6]]))
    >>> b = ae.Categorical(np.array([[0.5, 0.5], [0.8, 0.2]]))
    >>> mix = ae.Mixture([a, b], weights=[0.75, 0.25])
    >>> np.round(mix.collapse().proba, 3).tolist()
    [[0.8, 0.2], [0.5, 0.5]]
    >>> mix.point_prediction().tolist()
    [0, 0]
    """

    def __init__(self, parts: Sequence[Predictive], weights: ArrayLike | None = None) -> None:
        parts = list(parts)
        if not parts:
            raise ShapeError("parts: a mixture needs at least one component.")
        for j, part in enumerate(parts):
            if not isinstance(part, Predictive):
                raise ShapeError(f"parts: component {j} is {type(part).__name__}, not Predictive.")
            if part.n != parts[0].n:
                raise ShapeError(
                    f"parts: component {j} covers {part.n} instances, component 0 covers "
                    f"{parts[0].n}; all must describe the same pool."
                )
        # A nested mixture of Categoricals counts as categorical (mixtures may nest).
        cats: list[Categorical] = []
        for part in parts:
            cat = part.collapse() if isinstance(part, Mixture) else part
            if isinstance(cat, Categorical):
                cats.append(cat)
        if cats and len(cats) != len(parts):
            raise ShapeError("parts: cannot mix Categorical and continuous components.")
        if cats and any(not np.array_equal(c.labels, cats[0].labels) for c in cats):
            raise LabelSpaceError("parts: Categorical components must share the same labels.")
        if weights is None:
            wts = np.full(len(parts), 1.0 / len(parts))
        else:
            wts = check_finite_array(weights, "weights", ndim=1)
            if wts.shape[0] != len(parts):
                raise ShapeError(f"weights: {wts.shape[0]} weights for {len(parts)} components.")
            if (wts < 0).any() or abs(wts.sum() - 1.0) > 1e-9:
                raise ShapeError("weights: mixture weights must be non-negative and sum to 1.")
        self.parts = parts
        self.weights = wts

    @property
    def n(self) -> int:
        return self.parts[0].n

    def support(self) -> tuple[NDArray[Any], NDArray[np.float64]]:
        """The parts' supports side by side, their probabilities scaled by the weights.

        Returns
        -------
        values : ndarray of shape (n, S)
            The concatenated support points.
        probs : ndarray of shape (n, S)
            Their probabilities (eq. 5.11).
        """
        vals, probs = [], []
        for part, w in zip(self.parts, self.weights, strict=True):
            v, p = part.support()
            shape = np.broadcast_shapes(v.shape, p.shape)
            vals.append(np.broadcast_to(v, (self.n, shape[1])))
            probs.append(np.broadcast_to(p, (self.n, shape[1])) * w)
        return np.concatenate(vals, axis=1), np.concatenate(probs, axis=1)

    def point_prediction(self) -> NDArray[Any]:
        """The mixture's prediction: the mode of the collapsed Categorical, else the mean.

        Returns
        -------
        ndarray of shape (n,)
            One prediction per instance.
        """
        collapsed = self.collapse()
        if collapsed is not None:
            return collapsed.point_prediction()
        return self.expect(lambda y: y)

    def _first_categorical(self) -> Categorical | None:
        """The first part, where every part is categorical (its classes are
        :meth:`collapse`'s), else None: :meth:`collapse`'s classes without averaging the
        pool's probabilities."""
        if not isinstance(self.parts[0], Categorical | Mixture):
            return None
        first = self.parts[0]
        cat = first._first_categorical() if isinstance(first, Mixture) else first
        rest = (p._first_categorical() if isinstance(p, Mixture) else p for p in self.parts[1:])
        if not isinstance(cat, Categorical) or any(not isinstance(c, Categorical) for c in rest):
            return None
        return cat

    def collapse(self) -> Categorical | None:
        """The equivalent single Categorical, for categorical parts.

        Returns
        -------
        Categorical or None
            The weighted average of the parts' class probabilities; None when the parts are
            continuous.
        """
        if not isinstance(self.parts[0], Categorical | Mixture):
            return None
        cats = [p.collapse() if isinstance(p, Mixture) else p for p in self.parts]
        if any(not isinstance(c, Categorical) for c in cats):
            return None
        proba = sum(w * c.proba for w, c in zip(self.weights, cats, strict=True))  # type: ignore[union-attr]
        return Categorical(np.clip(proba, 0.0, 1.0), cats[0].labels)  # type: ignore[union-attr]

    def take(self, index: ArrayLike | slice) -> Mixture:
        """The mixture over some of the instances.

        Parameters
        ----------
        index : array-like of int
            Positions of the instances to keep, in the order wanted.

        Returns
        -------
        Mixture
            Each part restricted to those instances, with the same weights.
        """
        out = object.__new__(Mixture)
        out.parts = [p.take(index) for p in self.parts]
        out.weights = self.weights
        return out

    def _chunk(self, rows: slice) -> Mixture:
        out = object.__new__(Mixture)
        out.parts = [p._chunk(rows) for p in self.parts]
        out.weights = self.weights
        return out


def first_part(predictive: Any) -> Any:
    """A mixture's first non-mixture part (the parts share the kind and label space); any
    other value as given."""
    while isinstance(predictive, Mixture):
        predictive = predictive.parts[0]
    return predictive


def check_labels(predictive: Predictive, labels: ArrayLike, name: str = "labels") -> NDArray[Any]:
    """``labels`` as an array, checked against the model: class labels in a categorical
    model's label space (a mixture's through its first part; the parts share it), finite
    numbers for a Gaussian regression model; other :class:`Predictive` subclasses' labels
    pass as given. Raises :class:`LabelSpaceError`,
    :class:`~activeeval.errors.NonFiniteError` or :class:`ShapeError` naming ``name``."""
    y = np.asarray(labels)
    leaf = first_part(predictive)
    if isinstance(leaf, Categorical):
        leaf.label_index(y, name)
        return y
    if isinstance(leaf, Gaussian):
        return check_finite_array(y, name, ndim=1)
    return y  # a user's own Predictive: its labels are its business


def as_predictive(predictions: Any, name: str = "predictions") -> Predictive:
    """Canonical predictive distribution from user input, read by name where names exist.

    What every public function does with its ``predictions`` argument:

    * a ``Predictive`` is returned unchanged;
    * a 2-d array: class probabilities, columns = class labels ``0..K-1``;
    * a 1-d array or a pandas Series with values in [0, 1]: a binary classifier's probability
      of class 1 (classes 0 and 1);
    * a pandas DataFrame: class probabilities in columns named by the classes (``0``, ``1``;
      ``"ham"``, ``"spam"``) or ``p_<label>`` as in a pool file — read by name, so reordered
      columns give the same distribution (stored in sorted label order) — or a regressor's
      ``mean`` and ``var`` (or ``mean`` and ``std``) columns.

    A fitted scikit-learn model is turned into one by ``from_estimator``.

    Parameters
    ----------
    predictions : Predictive, array-like or pandas DataFrame
        The model's predictions on the pool, in one of the forms above.
    name : str, default "predictions"
        The argument's name in error messages.

    Returns
    -------
    Predictive
        A ``Categorical`` or ``Gaussian`` (or the ``Predictive`` given).

    Raises
    ------
    ShapeError
        Anything else (a tuple such as ``(mean, std)``, a fitted model, a 3-d array), with
        what to pass instead; a DataFrame whose columns mix class columns with others.

    Warns
    -----
    ActiveEvalWarning
        When a 1-d array holds only 0 and 1: hard labels, not probabilities.

    See Also
    --------
    from_estimator : From a fitted scikit-learn model.
    Categorical : Class probabilities with their labels.
    Gaussian : A regressor's mean and variance.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> import activeeval as ae
    >>> pred = ae.as_predictive(np.array([0.2, 0.9]))        # P(class 1)
    >>> pred.labels.tolist(), np.round(pred.proba, 3).tolist()
    ([0, 1], [[0.8, 0.2], [0.1, 0.9]])
    >>> frame = pd.DataFrame({"spam": [0.3, 0.6], "ham": [0.7, 0.4]})
    >>> ae.as_predictive(frame).labels.tolist()               # columns read by name, sorted
    ['ham', 'spam']
    """
    if isinstance(predictions, Predictive):
        return predictions
    if isinstance(predictions, tuple):
        raise ShapeError(
            f"{name}: got a tuple of {len(predictions)} arrays; for a regressor pass "
            "Gaussian(mean, var) or Gaussian.from_std(mean, std), for a classifier its (m, K) "
            "class probabilities."
        )
    if hasattr(predictions, "fit") and (
        hasattr(predictions, "predict") or hasattr(predictions, "predict_proba")
    ):
        raise ShapeError(
            f"{name}: got a model ({type(predictions).__name__}); pass its predictive "
            "distribution on the pool: activeeval.from_estimator(model, X_pool)."
        )
    import pandas as pd

    if isinstance(predictions, pd.DataFrame):
        return _from_frame(predictions, name)
    arr = np.asarray(predictions)
    if arr.ndim == 1:
        return _positive_class(arr, name)
    if arr.ndim == 2:
        return Categorical(arr, name=name)
    raise ShapeError(
        f"{name}: expected an (m, K) array of class probabilities, an (m,) array of "
        "positive-class probabilities or a Predictive (Categorical, Gaussian, Mixture); got an "
        f"array of shape {arr.shape}. For a regressor pass Gaussian(mean, var)."
    )


#: An integer written without a plus sign or leading zeros (pool files' ids and labels).
INT_LIKE = r"^(?:0|-?[1-9][0-9]*)$"  # ASCII digits: Python's int() reads "1٣" as 13


def class_labels_from_names(names: list[str]) -> NDArray[Any]:
    """Class labels from column names (``p_`` already removed): integers if every name is an
    integer written without a plus sign or leading zeros (:data:`INT_LIKE`) that int64 holds,
    else strings — the pool files' rule (ids beyond int64 stay text too)."""
    if names and all(re.match(INT_LIKE, n) for n in names):
        values = [int(n) for n in names]
        if all(-(2**63) <= v < 2**63 for v in values):
            return np.array(values, dtype=np.int64)
    return np.array(names, dtype=object).astype(str)


#: Columns of a pool table that are not class probabilities.
_NOT_CLASSES = ("id", "cost", "label", "item", "mean", "var", "std")


@dataclass(frozen=True)
class FrameLayout:
    """How a table's columns hold a predictive distribution (:func:`frame_layout`): a
    regressor's ``mean`` and ``var`` (or ``std``), or class probabilities in ``columns``
    (the classes' sorted order) with their ``labels``."""

    kind: str  # "categorical", "var" or "std"
    columns: tuple[Any, ...]
    labels: NDArray[Any] | None = None

    def take(self, cols: list[Any]) -> list[int]:
        """The positions of :attr:`columns` among ``cols``."""
        return [cols.index(c) for c in self.columns]

    def build(self, values: NDArray[np.float64], name: str) -> Predictive:
        """The distribution of the rows ``values`` (the ``columns``, in that order)."""
        if self.kind == "var":
            return Gaussian(values[:, 0].copy(), values[:, 1].copy())
        if self.kind == "std":
            return Gaussian.from_std(values[:, 0].copy(), values[:, 1].copy())
        out = Categorical(values, labels=self.labels, name=name)
        out._named = True  # its class order is sorted, not the frame's (CostMatrixLoss.bind)
        return out


def frame_layout(cols: list[Any], name: str) -> FrameLayout:
    """How the columns ``cols`` of a DataFrame hold the predictions, read by name (see
    :func:`as_predictive`); a :class:`ShapeError` for columns that could be misread."""
    keys = {str(c) for c in cols}
    if keys == {"mean", "var"}:
        return FrameLayout("var", ("mean", "var"))
    if keys == {"mean", "std"}:
        return FrameLayout("std", ("mean", "std"))
    if "mean" in keys and keys & {"var", "std"}:  # a regressor's, with more
        extra = [c for c in cols if str(c) not in ("mean", "var", "std")] or ["var", "std"]
        raise ShapeError(
            f"{name}: the DataFrame's columns {cols} hold a regressor's mean and spread with "
            f"others ({extra}); pass only mean and var (or mean and std), e.g. "
            "frame[['mean', 'var']]."
        )
    prefixed = [c for c in cols if isinstance(c, str) and c.startswith("p_")]
    other = [c for c in cols if c not in prefixed]
    if (prefixed and other) or any(str(c) in _NOT_CLASSES for c in cols):
        extra = other if prefixed else [c for c in cols if str(c) in _NOT_CLASSES]
        raise ShapeError(
            f"{name}: the DataFrame's columns {cols} mix class-probability columns with "
            f"others ({extra}); pass only the class columns (named by the class, or "
            "p_<label>), e.g. frame[[...]], or mean and var for a regressor."
        )
    if prefixed:
        labels: NDArray[Any] = class_labels_from_names([c[2:] for c in prefixed])
    else:
        if len({type(c) for c in cols}) > 1:
            raise ShapeError(
                f"{name}: the DataFrame's column names {cols} mix types; name the class "
                "columns by the classes, all numbers or all strings."
            )
        labels = (
            class_labels_from_names(cols) if all(isinstance(c, str) for c in cols)
            else np.asarray(cols)
        )  # fmt: skip
    if len(set(labels.tolist())) != len(labels):
        raise ShapeError(f"{name}: the DataFrame's columns {cols} name a class twice.")
    order = np.argsort(labels, kind="stable")
    return FrameLayout("categorical", tuple(cols[i] for i in order), labels[order])


def _from_frame(frame: Any, name: str) -> Predictive:
    cols = list(frame.columns)
    layout = frame_layout(cols, name)
    return layout.build(frame.to_numpy(dtype=float)[:, layout.take(cols)], name)


def _positive_class(arr: NDArray[Any], name: str) -> Categorical:
    """An (m,) array of P(class 1): the binary Categorical over classes 0 and 1."""
    s = check_finite_array(arr, name, ndim=1)
    if ((s < 0) | (s > 1)).any():
        bad = int(np.flatnonzero((s < 0) | (s > 1))[0])
        raise ShapeError(
            f"{name}: a 1-d array is read as each instance's probability of class 1, but "
            f"entry {bad} is {s[bad]:g}; for a regressor pass Gaussian(mean, var), for "
            "several classes an (m, K) array."
        )
    if s.size > 1 and np.all((s == 0.0) | (s == 1.0)):
        warnings.warn(
            f"{name}: every entry is 0 or 1 — hard labels (model.predict), read as a model "
            "certain of every instance, which leaves active sampling nothing to learn from; "
            "pass the probabilities (predict_proba) and, to score these labels, "
            "prediction=labels.",
            ActiveEvalWarning,
            stacklevel=3,
        )
    return Categorical(np.c_[1.0 - s, s], labels=np.array([0, 1]), name=name)


def decided(predictive: Predictive, prediction: ArrayLike | None, name: str) -> Predictive:
    """``predictive`` with the decision ``prediction`` (:meth:`Categorical.with_decision`,
    :meth:`Gaussian.with_decision`), or unchanged when it is None."""
    if prediction is None:
        return predictive
    if isinstance(predictive, Categorical | Gaussian):
        return predictive.with_decision(prediction, name)
    raise ShapeError(
        f"{name}: a decision applies to a Categorical's or a Gaussian's beliefs, not to a "
        f"{type(predictive).__name__}."
    )


_P = TypeVar("_P", bound=Predictive)


def check_decision_shape(shape: tuple[Any, ...], m: int, name: str, classes: bool) -> None:
    """Refuse decisions not one per pool instance (``classes``: a classifier's, else a
    regressor's), as ``with_decision`` refuses them."""
    got = tuple(int(n) for n in shape)
    if got != (m,):
        what = "decision" if classes else "prediction"
        raise ShapeError(f"{name}: expected one {what} per pool instance, shape ({m},); got {got}.")


def decision_numbers(
    f: ArrayLike, labels: NDArray[Any] | None, name: str, start: int = 0
) -> NDArray[np.float64]:
    """Decisions as a store or a Dask block keeps them (:func:`restored_decision` reads them
    back), checked as ``with_decision`` checks them: a classifier's as their classes'
    positions among ``labels``, a regressor's (``labels`` None) as finite numbers; a refusal
    names the entry counted from ``start`` (``f`` a chunk)."""
    if labels is None:
        return check_finite_array(f, name, ndim=1, start=start)
    return label_index(labels, f, name, start=start).astype(np.float64)


def restored_decision(predictive: _P, stored: NDArray[np.float64] | None) -> _P:
    """``predictive`` with decisions kept as numbers (a store's, a Dask block's column): a
    Categorical's as its classes' positions, a Gaussian's as themselves; unchanged for None."""
    if stored is None:
        return predictive
    out: Predictive
    if isinstance(predictive, Categorical):
        out = predictive.with_decision(predictive.labels[stored.astype(np.intp)])
    else:
        assert isinstance(predictive, Gaussian)
        out = predictive.with_decision(stored)
    return cast(_P, out)


def from_estimator(estimator: Any, X: Any) -> Predictive:
    """The predictive distribution of a fitted scikit-learn model on the pool ``X``.

    A classifier (``predict_proba``): its class probabilities, the classes from ``classes_``.
    A regressor whose ``predict`` takes ``return_std=True`` (``GaussianProcessRegressor``,
    ``BayesianRidge``, ``ARDRegression``, …): ``Gaussian.from_std(mean, std)``. Anything else
    is refused with what to pass instead: a point regressor has no predictive distribution,
    and active evaluation needs one (thesis Sec. 4.5; calibrate a classifier's scores with
    ``calibrate_scores``).

    Parameters
    ----------
    estimator : fitted scikit-learn estimator
        A classifier with ``predict_proba`` or a regressor whose ``predict`` accepts
        ``return_std=True``; duck-typed models with those methods are accepted too.
    X : array-like of shape (m, d)
        The pool's features, as the model takes them.

    Returns
    -------
    Predictive
        A ``Categorical`` for a classifier, a ``Gaussian`` for a regressor.

    Raises
    ------
    ShapeError
        When the model is not fitted, has no predictive distribution, or predicts several
        targets.

    See Also
    --------
    as_predictive : From arrays and DataFrames.
    calibrate_scores : From raw scores and a few labels.
    evaluate : Estimate one model's measure on a pool.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from sklearn.linear_model import BayesianRidge, LogisticRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> clf = LogisticRegression().fit(X, [0, 0, 0, 1, 1, 1])
    >>> ae.from_estimator(clf, X).point_prediction().tolist()
    [0, 0, 0, 1, 1, 1]
    >>> reg = BayesianRidge().fit(X, [0.1, 0.9, 2.1, 2.9, 4.2, 5.0])
    >>> type(ae.from_estimator(reg, X)).__name__      # var = std**2 of predict(return_std=True)
    'Gaussian'
    """
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    kind = type(estimator).__name__
    try:
        check_is_fitted(estimator)
        # Estimators that may predict unfitted (a Gaussian process from its prior) pass
        # check_is_fitted; scikit-learn marks a fitted one by attributes ending in "_".
        fitted = hasattr(estimator, "__sklearn_is_fitted__") or any(
            k.endswith("_") and not k.startswith("__") for k in vars(estimator)
        )
    except NotFittedError:
        fitted = False
    except TypeError:  # not a scikit-learn estimator: duck-typed below
        fitted = True
    if not fitted:
        raise ShapeError(f"estimator: {kind} is not fitted; fit it first.")
    if hasattr(estimator, "predict_proba"):
        proba = np.asarray(estimator.predict_proba(X), dtype=float)
        classes = getattr(estimator, "classes_", None)
        return Categorical(proba, labels=classes, name=f"{kind}.predict_proba")
    if _is_classifier(estimator):
        raise ShapeError(
            f"estimator: {kind} is a classifier without predict_proba, so it gives decisions "
            "without probabilities; fit one that has them (SVC(probability=True), or "
            "sklearn.calibration.CalibratedClassifierCV around LinearSVC, RidgeClassifier, "
            "...), or pass its decisions as prediction= beside another model's probabilities."
        )
    if hasattr(estimator, "predict"):
        try:
            out = estimator.predict(X, return_std=True)
        except TypeError:
            out = None
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ShapeError(
                f"estimator: {kind}.predict has no return_std=True, so it gives point "
                "predictions without a predictive distribution; use a probabilistic "
                "regressor (GaussianProcessRegressor, BayesianRidge) or pass "
                "Gaussian(mean, var) with a variance you trust."
            )
        mean, std = (np.asarray(a, dtype=float) for a in out)
        if mean.ndim != 1 or std.ndim != 1:
            raise ShapeError(
                f"estimator: {kind} predicts {mean.shape[1:] or 'several'} targets per "
                "instance; evaluate one target at a time (a model of that target)."
            )
        return Gaussian.from_std(mean, std)
    raise ShapeError(
        f"estimator: {kind} has neither predict_proba nor predict; pass a fitted "
        "scikit-learn classifier or probabilistic regressor."
    )


def _is_classifier(estimator: Any) -> bool:
    """scikit-learn's own test (its estimator tags); False for an object it cannot read."""
    from sklearn.base import is_classifier

    try:
        return bool(is_classifier(estimator))
    except Exception:  # a duck-typed object scikit-learn cannot tag
        return False


def calibrate_scores(
    scores: ArrayLike,
    labeled_index: ArrayLike,
    labels: ArrayLike,
    *,
    method: str = "isotonic",
    classes: ArrayLike | None = None,
) -> Categorical:
    """Turn raw model scores into a Categorical predictive distribution (thesis Sec. 4.5).

    Active evaluation needs p(y | x; θ); a model that outputs scores (an SVM margin, a ranking
    score, an uncalibrated booster) is first calibrated on a small labeled subset of the pool.

    Parameters
    ----------
    scores : array-like of shape (m,) or (m, K)
        Scores on the whole pool: one per instance for a binary model (higher means the
        second class of ``classes``, by default the larger label), or one per class.
    labeled_index : array-like of shape (n,)
        Pool indices of the labeled calibration instances.
    labels : array-like of shape (n,)
        Their labels.
    method : {"isotonic", "platt"}, default "isotonic"
        Isotonic regression (binary scores only) or Platt scaling — a logistic regression on the
        scores, multinomial for (m, K) scores (Platt, 1999; Zadrozny & Elkan, 2002).
    classes : array-like, optional
        The label space; defaults to the sorted distinct ``labels``.

    Returns
    -------
    Categorical
        Calibrated class probabilities for every pool instance, columns in the order of
        ``classes``.

    Raises
    ------
    ShapeError
        When the scores, indices or labels have the wrong shape, or isotonic calibration is
        asked of one score per class.
    LabelSpaceError
        When one score per instance comes with other than two classes, or a label is not in
        ``classes``.

    See Also
    --------
    Categorical : Class probabilities with their labels.
    from_estimator : For models that already give probabilities.

    Examples
    --------
    An SVM-like margin, calibrated on six labeled instances of a pool of eight:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> scores = np.array([-2.0, -1.0, -0.5, 0.2, 0.8, 1.5, -1.5, 2.0])
    >>> pred = ae.calibrate_scores(scores, [0, 1, 2, 3, 4, 5], [0, 0, 1, 0, 1, 1])
    >>> np.round(pred.proba[:, 1], 3).tolist()
    [0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 0.0, 1.0]
    """
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    from ._validation import check_option

    method = check_option(method, ("isotonic", "platt"), "method")
    s = check_finite_array(scores, "scores")
    if s.ndim not in (1, 2) or s.shape[0] == 0:
        raise ShapeError(f"scores: expected shape (m,) or (m, K) with m > 0, got {s.shape}.")
    idx = np.asarray(labeled_index)
    y = np.asarray(labels)
    if idx.ndim != 1 or idx.shape != y.shape or idx.shape[0] < 2:
        raise ShapeError(
            "labeled_index, labels: need two equal-length 1-d arrays with at least 2 entries."
        )
    if not np.issubdtype(idx.dtype, np.integer) or idx.min() < 0 or idx.max() >= s.shape[0]:
        raise ShapeError(f"labeled_index: must be integer pool indices in [0, {s.shape[0]}).")
    lab = np.unique(y) if classes is None else np.asarray(classes)
    col = label_index(lab, y, "labels")
    if s.ndim == 1:
        if lab.shape[0] != 2:
            raise LabelSpaceError(
                f"classes: one score per instance calibrates a binary model; got {lab.shape[0]} "
                "classes. Pass one score column per class."
            )
        if method == "isotonic":
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
            p1 = iso.fit(s[idx], col.astype(float)).predict(s)
        else:
            lr = LogisticRegression(C=1e6, max_iter=1000).fit(s[idx, None], col)
            p1 = lr.predict_proba(s[:, None])[:, 1]
        p1 = np.clip(p1, 0.0, 1.0)
        return Categorical(np.c_[1.0 - p1, p1], labels=lab)
    if method == "isotonic":
        raise ShapeError("method: isotonic calibration takes one score per instance; use 'platt'.")
    lr = LogisticRegression(C=1e6, max_iter=2000).fit(s[idx], col)
    proba = np.zeros((s.shape[0], lab.shape[0]))
    proba[:, lr.classes_] = lr.predict_proba(s)
    return Categorical(proba / proba.sum(axis=1, keepdims=True), labels=lab)


def recalibrate(
    predictive: Predictive,
    indices: ArrayLike,
    labels: ArrayLike,
    weights: ArrayLike | None = None,
) -> Predictive:
    """Recalibrate a predictive distribution on labeled pool instances (batch-adaptive
    sampling, Sec. 4.5).

    Binary Categorical: isotonic regression of 1[y = labels[1]] on p(labels[1] | x).
    Multi-class Categorical: isotonic regression of 1[y = f(x)] on the confidence p(f(x) | x),
    the other classes rescaled to share the rest. Gaussian: the variances scaled by the
    weighted mean of (y − mean)² / var. ``weights`` (e.g. importance weights p/q of actively
    drawn labels) make the fit target the pool distribution rather than the sampling one.
    Distributions of other kinds are returned unchanged.
    """
    from sklearn.isotonic import IsotonicRegression

    idx = np.asarray(indices)
    y = np.asarray(labels)
    wts = np.ones(idx.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    if idx.size < 2:
        return predictive
    if isinstance(predictive, Categorical):
        proba = predictive.proba
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        if proba.shape[1] == 2:
            hit = (predictive.label_index(y) == 1).astype(float)
            p1 = iso.fit(proba[idx, 1], hit, sample_weight=wts).predict(proba[:, 1])
            p1 = np.clip(p1, 0.0, 1.0)
            return Categorical(np.c_[1.0 - p1, p1], predictive.labels)
        conf = predictive.predicted_probability
        hit = (predictive.label_index(y) == predictive.predicted_index[idx]).astype(float)
        new_conf = np.clip(iso.fit(conf[idx], hit, sample_weight=wts).predict(conf), 0.0, 1.0)
        rest = 1.0 - conf
        scale = np.divide(1.0 - new_conf, rest, out=np.zeros_like(rest), where=rest > 0)
        out = proba * scale[:, None]
        out[np.arange(proba.shape[0]), predictive.predicted_index] = new_conf
        no_rest = rest <= 0  # a one-hot row: spread the freed mass evenly
        if no_rest.any():
            k = proba.shape[1]
            out[no_rest] = (1.0 - new_conf[no_rest, None]) / (k - 1)
            out[no_rest, predictive.predicted_index[no_rest]] = new_conf[no_rest]
        return Categorical(out / out.sum(axis=1, keepdims=True), predictive.labels)
    if isinstance(predictive, Gaussian):
        z2 = (np.asarray(y, dtype=float) - predictive.mean[idx]) ** 2
        var = predictive.var[idx]
        ok = var > 0
        if not ok.any():
            return predictive
        s2 = float(np.sum(wts[ok] * z2[ok] / var[ok]) / np.sum(wts[ok]))
        return Gaussian(predictive.mean, predictive.var * s2)
    return predictive
