"""Measures of a classifier's predicted probabilities: the Brier score, log loss, expected
calibration error, ROC AUC and average precision, with scikit-learn's definitions.

These score the probabilities p̂(· | x) themselves, not a decision f(x). The Brier score and
log loss are pool means of a per-instance loss L(p̂(x), y) (regular risks, eq. 3.1, with the
probability vector as the prediction); the ECE is a sum of absolute per-bin pool means; ROC
AUC and average precision are ratios of sums over pairs of instances. For each, this module
gives its value on a labeled pool (``value``: the census, equal to scikit-learn's function)
and E[ψ(x, y)² | x] under the model's probabilities (``influence_second_moment``), the
integrand of q* (Thm 4.1, eq. 4.6, with the measure's influence function ψ in place of
w(ℓ − G)). The influence functions are derived on the *Sampling distributions* page
(``docs/how-it-works/sampling.md``, "Measures of probabilities"); the estimators from
importance-weighted draws are in :mod:`activeeval.estimators.probability`.

Pools are weighted by the test distribution p(x) (``p``, summing to one), so a value is the
one scikit-learn computes with ``sample_weight=p``; uniform p gives the unweighted value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import LabelSpaceError, UnknownOptionError
from .measures import _NAMED, PROBABILITY_MEASURES, Measure, as_categorical
from .measures import get_measure as get_measure  # activeeval.get_measure: see measures
from .predictive import Predictive

__all__ = [
    "ROCAUC",
    "AveragePrecision",
    "BrierScore",
    "ExpectedCalibrationError",
    "LogLoss",
    "ProbabilityMeasure",
]


# ------------------------------------------------------------------- sums over ranks
class Ranks:
    """Scores sorted once, for weighted sums over the instances scored below, at least or at
    most each point of ``at`` (the scores themselves by default): each sum is then one
    cumulative sum, O(n), where a sort per sum cost O(n log n) — the rank measures take up
    to four sums over the same scores, over the whole pool when q* is planned."""

    def __init__(self, keys: NDArray[Any], at: NDArray[Any] | None = None) -> None:
        self.order = np.argsort(keys, kind="stable")
        k = keys[self.order]
        at = keys if at is None else at
        self.lo = np.searchsorted(k, at, "left")
        self.hi = np.searchsorted(k, at, "right")

    def _cumulative(self, weights: NDArray[Any]) -> NDArray[np.float64]:
        return np.concatenate(([0.0], np.cumsum(weights[self.order], dtype=np.float64)))

    def below(self, weights: NDArray[Any]) -> NDArray[np.float64]:
        """Σ_j weights_j · (1[keys_j < at] + ½·1[keys_j = at]): the Mann–Whitney count with
        ties halved."""
        c = self._cumulative(weights)
        return c[self.lo] + 0.5 * (c[self.hi] - c[self.lo])

    def at_least(self, weights: NDArray[Any]) -> NDArray[np.float64]:
        """Σ_j weights_j · 1[keys_j ≥ at]."""
        c = self._cumulative(weights)
        return c[-1] - c[self.lo]

    def at_most(self, weights: NDArray[Any]) -> NDArray[np.float64]:
        """Σ_j weights_j · 1[keys_j ≤ at]."""
        return self._cumulative(weights)[self.hi]


def below(keys: NDArray[Any], weights: NDArray[Any], at: NDArray[Any]) -> NDArray[np.float64]:
    """Σ_j weights_j · (1[keys_j < at] + ½·1[keys_j = at]) for every entry of ``at``."""
    return Ranks(keys, at).below(weights)


def at_least(keys: NDArray[Any], weights: NDArray[Any], at: NDArray[Any]) -> NDArray[np.float64]:
    """Σ_j weights_j · 1[keys_j ≥ at] for every entry of ``at``."""
    return Ranks(keys, at).at_least(weights)


def at_most(keys: NDArray[Any], weights: NDArray[Any], at: NDArray[Any]) -> NDArray[np.float64]:
    """Σ_j weights_j · 1[keys_j ≤ at] for every entry of ``at``."""
    return Ranks(keys, at).at_most(weights)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """num / den, 0 where den = 0 (a precision where no test mass is scored that high: such
    an instance has p = 0 and counts for nothing)."""
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den > 0)


# ------------------------------------------------------------------------ base class
class ProbabilityMeasure(Measure):
    """A measure of a classifier's class probabilities rather than of its decisions.

    The base class of :class:`BrierScore`, :class:`LogLoss`,
    :class:`ExpectedCalibrationError`, :class:`ROCAUC` and :class:`AveragePrecision`.
    Such a measure has no ``loss(f(x), y)`` of a decision; it gives its value on a labeled
    pool (``value``) and the second moment of its influence function under the model's
    probabilities (``influence_second_moment``), from which q* follows (eq. 4.6). It needs a
    classifier's class probabilities (a ``Categorical`` or an (m, K) array), whose classes it
    reads when bound; ``evaluate`` estimates it (:mod:`activeeval.estimators.probability`).

    Attributes
    ----------
    pos_label : label or None
        The positive class of a measure of one class's scores (ROC AUC, average precision,
        a binary ECE); the larger of two labels by default. None for the others.
    classes : tuple or None
        The model's classes in column order, once bound.

    See Also
    --------
    evaluate : Estimates these with ``measure="brier"`` and the other names.
    activeeval.estimators.probability.probability_estimate : The estimators.

    Examples
    --------
    The value on a labeled pool equals scikit-learn's:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.8, 0.2]])
    >>> meas = ae.get_measure("roc_auc").bind(ae.Categorical(proba))
    >>> float(meas.value(proba, np.array([0, 1, 0, 0]), np.full(4, 0.25)))
    0.6666666666666666
    """

    categorical = True
    regular = False
    binary_loss = False
    #: True for a measure of one class's scores (ROC AUC, average precision).
    one_class: bool = False
    #: ``get_measure(name, pos_label=...)`` passes the positive class to the constructor.
    takes_pos_label: bool = True
    #: Whether the measure scores one class (ROC AUC, AP, a binary ECE) and so has one.
    has_pos_label: bool = True
    #: Whether q*'s ``floor`` applies (the beliefs (1 − floor)·p̂ + floor/K); see
    #: :meth:`influence_second_moment` of the measures that ignore it.
    uses_floor: bool = True

    def __init__(self, pos_label: Any = None) -> None:
        self.pos_label = pos_label
        self.classes: tuple[Any, ...] | None = None

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, 1)`` unless a subclass says otherwise."""
        return (0.0, 1.0)

    def bind(self, predictive: Predictive | None = None, values: Any = None) -> Measure:
        """The measure with the model's classes and positive class resolved.

        Parameters
        ----------
        predictive : Predictive
            The model's class probabilities on the pool.
        values : ignored
            Kept for the base class's signature; the classes come from ``predictive``.

        Returns
        -------
        ProbabilityMeasure
            A copy bound to the model's classes.

        Raises
        ------
        LabelSpaceError
            When the predictions are not class probabilities, or ``pos_label`` is not one of
            the model's classes, or a measure of one class's scores is asked of more than two
            classes without ``pos_label``.
        """
        if predictive is None:
            return self
        cat = as_categorical(predictive, self.name)
        labels = tuple(cat.labels.tolist())
        out = type(self).__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.classes = labels
        if self.pos_label is not None:
            if self.pos_label not in labels:
                raise LabelSpaceError(
                    f"pos_label: {self.pos_label!r} is not one of the model's classes "
                    f"{list(labels)[:10]}; name one of them."
                )
        elif self._needs_pos_label() and len(labels) > 2:
            raise LabelSpaceError(
                f"measure: {self.name} scores one class's probability, and the model has "
                f"{len(labels)} classes; name the class with pos_label= (one-vs-rest)."
            )
        elif len(labels) == 2 and self.has_pos_label:  # the larger label, as F-measures'
            out.pos_label = labels[int(cat._order[-1])]
        return out

    def _needs_pos_label(self) -> bool:
        return self.one_class

    def _pos(self) -> int:
        """The positive class's column (of the larger of two labels by default, set when
        bound)."""
        classes = self._bound()
        if self.pos_label is None:
            return len(classes) - 1
        return classes.index(self.pos_label)

    def _bound(self) -> tuple[Any, ...]:
        if self.classes is None:
            raise LabelSpaceError(
                f"measure: {self.name} is not bound to a model's classes; call "
                "bind(predictive) first (evaluate does)."
            )
        return self.classes

    def value(
        self, proba: NDArray[np.float64], codes: NDArray[np.intp], p: NDArray[np.float64]
    ) -> float:
        """The measure on a pool whose every label is known (the census).

        Parameters
        ----------
        proba : ndarray of shape (m, K)
            The model's class probabilities, columns in the order of ``classes``.
        codes : ndarray of int of shape (m,)
            Each instance's label as a column index.
        p : ndarray of shape (m,)
            The test distribution over the pool (sums to one).

        Returns
        -------
        float
            The value, NaN where it is undefined (a ROC AUC without both classes).
        """
        raise NotImplementedError

    def influence_second_moment(
        self,
        beliefs: NDArray[np.float64],
        proba: NDArray[np.float64],
        p: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """E[ψ(x, y)² | x] for every instance, y drawn from ``beliefs``.

        Parameters
        ----------
        beliefs : ndarray of shape (m, K)
            The distribution p(y | x) that stands in for the truth (the model's probabilities,
            floored by q*'s safeguard).
        proba : ndarray of shape (m, K)
            The probabilities the measure scores (the model's, as given).
        p : ndarray of shape (m,)
            The test distribution over the pool.

        Returns
        -------
        ndarray of shape (m,)
            The integrand of q* (eq. 4.6).
        """
        raise NotImplementedError

    def __repr__(self) -> str:
        if self.one_class or self.pos_label is not None:
            return f"{type(self).__name__}(pos_label={self.pos_label!r})"
        return f"{type(self).__name__}()"


# ------------------------------------------------------- per-instance scoring rules
class _ScoringRule(ProbabilityMeasure):
    """A pool mean of a per-instance loss L(p̂(x), y) (a proper scoring rule)."""

    greater_is_better = False
    #: No positive class: ``pos_label`` is refused (``get_measure`` passes it to be refused).
    has_pos_label = False

    def __init__(self, pos_label: Any = None) -> None:
        if pos_label is not None:
            raise UnknownOptionError(
                f"pos_label: {self.name} scores the probability of every class and has no "
                f"positive class; drop pos_label={pos_label!r}."
            )
        super().__init__()

    def loss_matrix(self, proba: NDArray[np.float64]) -> NDArray[np.float64]:
        """L(p̂(x), k) for every instance and class.

        Parameters
        ----------
        proba : ndarray of shape (m, K)
            Class probabilities, columns in the order of the model's classes.

        Returns
        -------
        ndarray of shape (m, K)
            The loss of each instance's probabilities if its label were each class.
        """
        raise NotImplementedError

    def value(
        self, proba: NDArray[np.float64], codes: NDArray[np.intp], p: NDArray[np.float64]
    ) -> float:
        loss = self.loss_matrix(proba)[np.arange(codes.shape[0]), codes]
        return float(p @ loss)

    def influence_second_moment(
        self,
        beliefs: NDArray[np.float64],
        proba: NDArray[np.float64],
        p: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        # eq. 4.6 for a regular risk: E[(ℓ − Ǧ)² | x], Ǧ the intrinsic value (eq. 4.22).
        loss = self.loss_matrix(proba)
        g = float(p @ np.einsum("ik,ik->i", beliefs, loss))
        return np.einsum("ik,ik->i", beliefs, (loss - g) ** 2)


class BrierScore(_ScoringRule):
    """The Brier score: Σ_k (p̂_k(x) − 1[y = k])², halved for two classes.

    scikit-learn's ``brier_score_loss`` (``scale_by_half="auto"``): in [0, 1] for two classes
    (the squared error of the positive class's probability), in [0, 2] for more. Lower is
    better. ``measure="brier"``.

    Parameters
    ----------
    pos_label : None
        The Brier score has no positive class; any other value is refused.

    See Also
    --------
    LogLoss : The other proper scoring rule.
    evaluate : Estimates it from a few labels.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.probability_measures import BrierScore
    >>> proba = np.array([[0.9, 0.1], [0.4, 0.6]])
    >>> BrierScore().bind(ae.Categorical(proba)).loss_matrix(proba).round(2).tolist()
    [[0.01, 0.81], [0.36, 0.16]]
    """

    name = "brier"

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, 1)`` for two classes, ``(0, 2)`` for more."""
        return (0.0, 1.0) if len(self._bound()) == 2 else (0.0, 2.0)

    def loss_matrix(self, proba: NDArray[np.float64]) -> NDArray[np.float64]:
        """Σ_k (p̂_k − 1[y = k])² for every instance and label y, halved for two classes.

        Parameters
        ----------
        proba : ndarray of shape (m, K)
            Class probabilities.

        Returns
        -------
        ndarray of shape (m, K)
            Column y: the instance's Brier score if its label were class y.
        """
        # Σ_k (p_k − 1[y = k])² = Σ_k p_k² − 2 p_y + 1 for the label y.
        out = np.einsum("ik,ik->i", proba, proba)[:, None] - 2.0 * proba + 1.0
        if proba.shape[1] == 2:
            out *= 0.5
        return out


class LogLoss(_ScoringRule):
    """The log loss (cross-entropy): −log p̂_y(x), probabilities clipped to [ε, 1 − ε].

    scikit-learn's ``log_loss``: natural logarithm, ε the machine epsilon of float64 (so a
    probability of zero costs about 36, not infinity). Lower is better. ``measure="log_loss"``.

    Parameters
    ----------
    pos_label : None
        The log loss has no positive class; any other value is refused.

    See Also
    --------
    BrierScore : The bounded scoring rule.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.probability_measures import LogLoss
    >>> proba = np.array([[0.9, 0.1], [0.5, 0.5]])
    >>> LogLoss().bind(ae.Categorical(proba)).loss_matrix(proba).round(3).tolist()
    [[0.105, 2.303], [0.693, 0.693]]
    """

    name = "log_loss"

    def influence_second_moment(
        self,
        beliefs: NDArray[np.float64],
        proba: NDArray[np.float64],
        p: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """One for every instance: q* for the log loss is the pool distribution p.

        Parameters
        ----------
        beliefs, proba : ndarray of shape (m, K)
            Unused: the model's probabilities, as for the other measures.
        p : ndarray of shape (m,)
            Unused: the test distribution.

        Returns
        -------
        ndarray of shape (m,)
            Ones, so that q ∝ p (per unit cost, p/√λ).

        Notes
        -----

        The log loss is unbounded where the model is confidently wrong, which is exactly
        where its own probabilities (floored or tempered) cannot say: on the benchmark's
        real pools every model-based q tried — eq. 4.6 with the floor, the conditional
        variance of the loss, tempered probabilities, heavier defensive mixtures — erred
        more than uniform draws in at least one of six cells, by up to 35 %, and covered as
        little as 0.80 (``docs/results/continuous.md``). So the draws are uniform (per unit
        cost: q ∝ p/√λ, eq. 4.25) and the gain comes from the model-assisted estimator alone.
        """
        return np.ones(proba.shape[0])

    @property
    def value_range(self) -> tuple[float, float]:
        """``(0, −log ε)``, ε the machine epsilon."""
        return (0.0, -math.log(np.finfo(np.float64).eps))

    def loss_matrix(self, proba: NDArray[np.float64]) -> NDArray[np.float64]:
        """−log p̂_y, probabilities clipped to [ε, 1 − ε], for every instance and label y.

        Parameters
        ----------
        proba : ndarray of shape (m, K)
            Class probabilities.

        Returns
        -------
        ndarray of shape (m, K)
            Column y: the instance's log loss if its label were class y.
        """
        eps = np.finfo(np.float64).eps
        return -np.log(np.clip(proba, eps, 1.0 - eps))


# ------------------------------------------------------------------------------ ECE
class ExpectedCalibrationError(ProbabilityMeasure):
    """The expected calibration error with equal-width bins.

    ECE = Σ_b |Σ_{x in bin b} p(x) (1[y = t(x)] − s(x))|, the pool share of each bin times
    the gap between its frequency and its mean probability. For two classes s(x) is the
    positive class's probability and t(x) the positive class (the reliability diagram of
    scikit-learn's ``calibration_curve``); for more, s(x) is the top probability and t(x) the
    most probable class (top-label ECE, Guo et al. 2017). Bins are ``n_bins`` equal widths on
    [0, 1], assigned as ``calibration_curve(strategy="uniform")`` does (a probability on an
    inner edge goes to the lower bin). Lower is better. ``measure="ece"``.

    Parameters
    ----------
    n_bins : int, default 10
        The number of equal-width bins.
    pos_label : label, optional
        For two classes, the class whose probability is binned (the larger label by default).

    See Also
    --------
    BrierScore : A calibration-sensitive score without bins.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.probability_measures import ExpectedCalibrationError
    >>> proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.2, 0.8], [0.1, 0.9]])
    >>> meas = ExpectedCalibrationError(n_bins=5).bind(ae.Categorical(proba))
    >>> round(meas.value(proba, np.array([0, 1, 1, 1]), np.full(4, 0.25)), 3)
    0.25
    """

    name = "ece"
    greater_is_better = False

    def __init__(self, n_bins: int = 10, pos_label: Any = None) -> None:
        if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
            raise UnknownOptionError(
                f"n_bins: expected a positive integer number of bins, got {n_bins!r}."
            )
        super().__init__(pos_label)
        self.n_bins = int(n_bins)

    def _needs_pos_label(self) -> bool:
        return False

    def binned(
        self, proba: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]]:
        """Each instance's binned probability s(x), its class t(x) and its bin.

        Parameters
        ----------
        proba : ndarray of shape (m, K)
            Class probabilities.

        Returns
        -------
        scores : ndarray of shape (m,)
            s(x): the positive class's probability (two classes, or ``pos_label`` given),
            else the top probability.
        target : ndarray of int of shape (m,)
            t(x): the column whose frequency the bin compares with s.
        bins : ndarray of int of shape (m,)
            The bin, 0 … ``n_bins`` − 1, as ``calibration_curve(strategy="uniform")``.
        """
        if proba.shape[1] == 2 or self.pos_label is not None:
            pos = self._pos()
            s = proba[:, pos]
            target = np.full(proba.shape[0], pos, dtype=np.intp)
        else:
            target = np.argmax(proba, axis=1)
            s = proba[np.arange(proba.shape[0]), target]
        edges = np.linspace(0.0, 1.0, self.n_bins + 1)
        return s, target, np.searchsorted(edges[1:-1], s)

    def value(
        self, proba: NDArray[np.float64], codes: NDArray[np.intp], p: NDArray[np.float64]
    ) -> float:
        s, target, bins = self.binned(proba)
        gap = np.bincount(bins, weights=p * ((codes == target) - s), minlength=self.n_bins)
        return float(np.abs(gap).sum())

    def influence_second_moment(
        self,
        beliefs: NDArray[np.float64],
        proba: NDArray[np.float64],
        p: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        # Each bin's gap is M_b·(acc_b − conf_b) with M_b and conf_b known from the pool; the
        # estimator's influence is 1_b(x)·(1[y = t] − acc_b). Under the beliefs, acc_b is the
        # bin's mean belief in its targets, and E[(z − acc)² | x] = r(1 − acc)² + (1 − r)acc².
        _, target, bins = self.binned(proba)
        r = beliefs[np.arange(proba.shape[0]), target]
        mass = np.bincount(bins, weights=p, minlength=self.n_bins)
        hit = np.bincount(bins, weights=p * r, minlength=self.n_bins)
        acc = np.divide(hit, mass, out=np.zeros_like(hit), where=mass > 0)[bins]
        return r * (1.0 - acc) ** 2 + (1.0 - r) * acc**2

    def __repr__(self) -> str:
        extra = "" if self.pos_label is None else f", pos_label={self.pos_label!r}"
        return f"ExpectedCalibrationError(n_bins={self.n_bins}{extra})"


# ------------------------------------------------------------------- ranking measures
class _RankMeasure(ProbabilityMeasure):
    """A measure of how the positive class's probability ranks the instances.

    q*'s ``floor`` does not apply: spreading a share of each instance's probability evenly
    over the classes makes a rare positive class common (a floor of 0.05 gives every
    instance a 2.5 % chance of the positive class, against 3 % overall on the default-skew
    pool), and the influence of a positive is largest where it is least expected, so q*
    went to the instances the model rightly ranks low: more MAE than passive sampling in six
    of nine cells at 400 labels (up to 1.8×). Unfloored, the ROC AUC's q* is ahead on
    calibrated models but behind on badly overconfident ones (``docs/results/continuous.md``).
    The defensive ``mix`` still bounds every weight.
    """

    greater_is_better = True
    one_class = True
    uses_floor = False

    def scores(self, proba: NDArray[np.float64]) -> NDArray[np.float64]:
        """s(x): the positive class's probability."""
        return proba[:, self._pos()]

    def influence_second_moment(
        self,
        beliefs: NDArray[np.float64],
        proba: NDArray[np.float64],
        p: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        return self._moments(beliefs[:, self._pos()], p, Ranks(self.scores(proba)))[2]

    def _moments(
        self, r: NDArray[np.float64], p: NDArray[np.float64], ranks: Ranks
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(G, E[ψ | x], E[ψ² | x], Var[ψ | x]) with P(y = positive | x) = ``r``, ``ranks``
        those of the model's scores: G the measure of the pool doubled (each instance once
        positive with mass p·r, once not with mass p·(1 − r)), at which ψ is the influence
        function. Where ``r`` leaves a side of the comparison empty, (NaN, 0, 1, 0): q* then
        spreads evenly and no value exists."""
        parts = self._influences(r, p, ranks)
        if parts is None:
            return math.nan, np.zeros_like(r), np.ones_like(r), np.zeros_like(r)
        g, pos, neg = parts
        return (g, r * pos + (1.0 - r) * neg, r * pos * pos + (1.0 - r) * neg * neg,
                r * (1.0 - r) * (pos - neg) ** 2)  # fmt: skip

    def _expected_value(
        self,
        r: NDArray[np.float64],
        p: NDArray[np.float64],
        ranks: Ranks,
        own: NDArray[np.float64] | None = None,
    ) -> float:
        """The pool's value when each label is drawn, positive with probability ``r``, as the
        ratio of the expected sums (eq. 4.21's form). It differs from the doubled pool's
        (:meth:`_moments`) by the self-pairs: an instance's own label counts in its precision
        (AP), and a positive is never paired with itself (ROC AUC). ``own``: each row's own
        mass where ``p`` weights a subsample up to the pool (a row then stands for several
        instances, and only its own mass pairs with itself); ``p`` by default. NaN where
        ``r`` leaves a side empty."""
        raise NotImplementedError

    def _influences(
        self, r: NDArray[np.float64], p: NDArray[np.float64], ranks: Ranks
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]] | None:
        """(G, ψ(x, 1), ψ(x, 0)) with the pool's sums taken under P(y = 1 | x) = ``r``; None
        where they leave a side empty."""
        raise NotImplementedError


class ROCAUC(_RankMeasure):
    """The area under the ROC curve of the positive class's probability.

    AUC = Σ_{i, j} p_i p_j y_i (1 − y_j) H(s_i − s_j) / (π₁ π₀), H(t) = 1[t > 0] + ½·1[t = 0],
    π₁ and π₀ the pool shares of positives and negatives: the probability that a random
    positive outscores a random negative, ties counted half — scikit-learn's
    ``roc_auc_score``. For more than two classes, one class against the rest
    (``pos_label=``). Higher is better. ``measure="roc_auc"``.

    Parameters
    ----------
    pos_label : label, optional
        The positive class; the larger of two labels by default, required for more.

    See Also
    --------
    AveragePrecision : The area under the precision–recall curve.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.probability_measures import ROCAUC
    >>> proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.8, 0.2]])
    >>> meas = ROCAUC().bind(ae.Categorical(proba))
    >>> float(meas.value(proba, np.array([0, 1, 1, 0]), np.full(4, 0.25)))
    1.0
    """

    name = "roc_auc"

    def value(
        self, proba: NDArray[np.float64], codes: NDArray[np.intp], p: NDArray[np.float64]
    ) -> float:
        s, z = self.scores(proba), (codes == self._pos()).astype(np.float64)
        pi1, pi0 = float(p @ z), float(p @ (1.0 - z))
        if pi1 <= 0.0 or pi0 <= 0.0:
            return math.nan
        f0 = Ranks(s).below(p * (1.0 - z))  # negatives' mass below each score
        return float((p * z) @ f0) / (pi1 * pi0)

    def _influences(
        self, r: NDArray[np.float64], p: NDArray[np.float64], ranks: Ranks
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]] | None:
        # ψ(x, y) = y (F₀(s)/π₀ − A)/π₁ + (1 − y)(F₁(s)/π₁ − A)/π₀, F₀(s) the negatives' mass
        # below s and F₁(s) the positives' above (ties half): the Hoeffding projection of the
        # two-sample U-statistic over π₁π₀ (DeLong et al. 1988), all under the beliefs.
        pi1, pi0 = float(p @ r), float(p @ (1.0 - r))
        if pi1 <= 0.0 or pi0 <= 0.0:
            return None
        f0 = ranks.below(p * (1.0 - r))
        f1 = pi1 - ranks.below(p * r)
        a = float((p * r) @ f0) / (pi1 * pi0)
        return a, (f0 / pi0 - a) / pi1, (f1 / pi1 - a) / pi0

    def _expected_value(
        self,
        r: NDArray[np.float64],
        p: NDArray[np.float64],
        ranks: Ranks,
        own: NDArray[np.float64] | None = None,
    ) -> float:
        # E[y_i (1 − y_j)] = r_i (1 − r_j) for i ≠ j and 0 for i = j, where the doubled pool
        # counts a tie of ½ p_i² r_i (1 − r_i); E[π₁π₀] = E[π₁(Σp − π₁)] = π₁π₀ − Var π₁.
        pi1, pi0 = float(p @ r), float(p @ (1.0 - r))
        var = float((p * (p if own is None else own)) @ (r * (1.0 - r)))
        if pi1 <= 0.0 or pi0 <= 0.0 or not pi1 * pi0 - var > 0.0:
            return math.nan
        pairs = float((p * r) @ ranks.below(p * (1.0 - r))) - 0.5 * var
        return pairs / (pi1 * pi0 - var)


class AveragePrecision(_RankMeasure):
    """Average precision: the mean, over positives, of the precision at their score.

    AP = Σ_i p_i y_i TP(s_i)/R(s_i) / π₁, TP(s) and R(s) the pool mass of positives and of all
    instances scored s or higher — scikit-learn's ``average_precision_score`` (the step-wise
    area under the precision–recall curve, ties grouped). R(s) needs no label, so only the
    positives' pair sum TP is estimated. For more than two classes, one class against the
    rest (``pos_label=``). Higher is better. ``measure="average_precision"``.

    Parameters
    ----------
    pos_label : label, optional
        The positive class; the larger of two labels by default, required for more.

    See Also
    --------
    ROCAUC : The area under the ROC curve.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.probability_measures import AveragePrecision
    >>> proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.8, 0.2]])
    >>> meas = AveragePrecision().bind(ae.Categorical(proba))
    >>> round(float(meas.value(proba, np.array([0, 1, 0, 0]), np.full(4, 0.25))), 3)
    0.5
    """

    name = "average_precision"

    def value(
        self, proba: NDArray[np.float64], codes: NDArray[np.intp], p: NDArray[np.float64]
    ) -> float:
        s, z = self.scores(proba), (codes == self._pos()).astype(np.float64)
        pi1 = float(p @ z)
        if pi1 <= 0.0:
            return math.nan
        ranks = Ranks(s)
        reach = ranks.at_least(p)  # R(s_i), no labels needed; 0 where only p = 0 is above
        tp = ranks.at_least(p * z)
        return float((p * z) @ _ratio(tp, reach)) / pi1

    def _influences(
        self, r: NDArray[np.float64], p: NDArray[np.float64], ranks: Ranks
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]] | None:
        # AP = Σ_i p_i y_i a(s_i) / π₁ with the precision a(s) = TP(s)/R(s); its influence is
        # ψ(x, y) = [y (a(x) + b(x) − AP) − c(x)] / π₁ with b(x) = Σ_{s_j ≤ s(x)} p_j y_j / R_j
        # and c(x) = Σ_{s_j ≤ s(x)} p_j y_j a_j / R_j (derived on the sampling page).
        pi1 = float(p @ r)
        if pi1 <= 0.0:
            return None
        reach = ranks.at_least(p)
        prec = _ratio(ranks.at_least(p * r), reach)
        later = ranks.at_most(_ratio(p * r, reach))
        spent = ranks.at_most(_ratio(p * r * prec, reach))
        ap = float((p * r) @ prec) / pi1
        return ap, (prec + later - ap - spent) / pi1, -spent / pi1

    def _expected_value(
        self,
        r: NDArray[np.float64],
        p: NDArray[np.float64],
        ranks: Ranks,
        own: NDArray[np.float64] | None = None,
    ) -> float:
        # E[y_i TP(s_i)] = r_i TP_r(s_i) + p_i r_i (1 − r_i): an instance's own label counts
        # in the positives scored at least its score (y_i² = y_i).
        pi1 = float(p @ r)
        if pi1 <= 0.0:
            return math.nan
        reach = ranks.at_least(p)
        tp = ranks.at_least(p * r) + (p if own is None else own) * (1.0 - r)
        return float((p * r) @ _ratio(tp, reach)) / pi1


_NAMED.update(
    zip(
        PROBABILITY_MEASURES,
        (BrierScore, LogLoss, ExpectedCalibrationError, ROCAUC, AveragePrecision),
        strict=True,
    )
)
assert all(_NAMED[name].name == name for name in PROBABILITY_MEASURES)
