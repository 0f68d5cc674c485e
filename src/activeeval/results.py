"""The two results a user gets: one estimate, one comparison.

:func:`~activeeval.evaluate` and :meth:`~activeeval.Session.estimate` both return an
:class:`EvaluationResult`; :func:`~activeeval.compare` and :meth:`~activeeval.Session.compare`
both return a :class:`ComparisonResult`. Each has a short repr; an estimate gives any
interval method by :meth:`EvaluationResult.confidence_interval`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._validation import check_level, check_option
from .estimators.inference import (
    Comparison,
    Estimate,
    MultipleComparison,
    _difference_interval,
    _null,
    _result_repr,
    _shifted_p,
    _sided,
    _wald_interval,
)
from .measures import clip_to_range
from .methods import ALTERNATIVES

__all__ = ["ComparisonResult", "EvaluationResult"]


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Outcome of an evaluation: a campaign's (:func:`~activeeval.evaluate`) or a session's
    (:meth:`~activeeval.Session.estimate`, on the labeled prefix of its draws).

    Attributes
    ----------
    estimate, stderr : float
        The performance estimate and its standard error. The estimate is clipped to the
        measure's range (:attr:`~activeeval.measures.Measure.value_range`): with a handful of
        labels the model-assisted estimator can leave it (an error rate below 0), and
        clipping only moves it closer to the truth; ``inference.estimate`` is the unclipped,
        unbiased value.
    ci : tuple of float
        Interval at ``level``, clipped to the same range. Which one:

        * the default model-assisted estimator on a static q (``evaluate``, sessions):
          ``"tempered"`` — the design-based interval (for a measure in [0, 1] with a 0/1
          loss — error rate, accuracy, F-measures, precision, recall — the Wald interval on
          the logit scale, :func:`~activeeval.estimators.inference.logit_interval`, joined
          with Clopper–Pearson on Kish's effective n where the estimate is 0 or 1; else
          Wald) joined with the score interval of the model's tempered probabilities
          (:mod:`activeeval.estimators.tempered`), which stays honest when the model is
          over- or underconfident (``docs/results/robustness.md``);
        * the model-assisted estimator where that family is not defined (a mixture of
          models, batch-adaptive q, ranked pools): the design-based interval alone
          (``"logit"`` or ``"wald"``);
        * ``estimator="snis"``: the Wald interval (Lemma 3.3, as in the thesis).

        :meth:`confidence_interval` gives the others.
    n_labels, n_draws : int
        Distinct instances labeled; draws used (repeats of labeled instances included).
    cost : float
        Labeling cost spent (= n_labels without costs).
    indices, q, labels : ndarray
        The draw sequence (pool indices), each draw's sampling probability, each draw's label.
        For a ranking pool ``labels`` are the drawn queries' grades, flat, and draw ``j``'s
        grades are ``labels[label_offsets[j]:label_offsets[j + 1]]``.
    inference : Estimate or None
        The underlying :class:`~activeeval.estimators.inference.Estimate`, for other interval
        methods (None for a session before its first label).
    label_offsets : ndarray or None
        Ranking pools only: offsets of each draw's grades in ``labels``.
    interval : str
        The method of ``ci`` (``"tempered"``, ``"logit"`` or ``"wald"``).
    effective_n : float
        Kish's effective sample size of the estimate's weights, (Σ v·w)²/Σ (v·w)² (the labels'
        worth in uniform draws; NaN before the first label). Far below ``n_labels``, the
        weights are uneven and a few labels carry the estimate.
    """

    estimate: float
    stderr: float
    ci: tuple[float, float]
    level: float
    n_labels: int
    n_draws: int
    cost: float
    budget: float
    method: str
    measure: str
    indices: NDArray[np.intp]
    q: NDArray[np.float64]
    labels: NDArray[Any]
    inference: Estimate | None
    label_offsets: NDArray[np.int64] | None = None
    interval: str = "wald"
    value_range: tuple[float, float] = (-math.inf, math.inf)

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> tuple[float, float]:
        """Interval by any method of :meth:`Estimate.confidence_interval`; by default the
        method of :attr:`ci`; clipped like :attr:`ci` to the measure's ``value_range``.

        ``alternative``: ``"two-sided"``, or a one-sided bound at ``level`` — ``"less"`` the
        upper bound (the interval from the lowest value of the measure's range to it, e.g. for
        *error rate ≤ 5%*), ``"greater"`` the lower bound (e.g. for *F1 ≥ 0.80*)."""
        if self.inference is None:
            return math.nan, math.nan
        how = self.interval if method is None else method
        ci = self.inference.confidence_interval(level, how, alternative)
        if math.isnan(self.estimate):
            return ci
        return clip_to_range(self.estimate, ci, self.value_range)[1]

    @property
    def effective_n(self) -> float:
        return math.nan if self.inference is None else float(self.inference.effective_n)

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "method", "estimate", "stderr"),
            ("ci", "level", "interval"),
            ("n_labels", "n_draws", "effective_n", "cost", "budget"),
        )


@dataclass(frozen=True, eq=False)
class ComparisonResult:
    """Outcome of a comparison: a campaign's (:func:`~activeeval.compare`, thesis Algorithm 3)
    or a session's (:meth:`~activeeval.Session.compare`, on the labeled prefix of its draws).

    For two models ``difference`` = Ĝ[f₀] − Ĝ[f₁] with its Wald ``p_value`` (eq. 3.24). For
    k > 2 models, ``difference`` and ``p_value`` compare the best model with the runner-up
    (Holm-adjusted over all pairs), and ``comparison`` holds the full
    :class:`~activeeval.estimators.inference.MultipleComparison` (pairwise table, Tukey range test).

    Attributes
    ----------
    estimates : ndarray of shape (k,)
        Each model's estimate (NaN for ``active_neq``, which identifies only the difference).
        Unlike :class:`EvaluationResult`'s, they are not clipped to the measure's range, so
        that ``difference`` stays their difference: with a handful of labels an F1 estimate
        can exceed 1.
    best : int
        Index of the model with the better estimate (for two models, 0 when ``difference``
        is NaN: check it).
    """

    difference: float
    stderr: float
    p_value: float
    ci: tuple[float, float]
    best: int
    estimates: NDArray[np.float64]
    level: float
    n_labels: int
    n_draws: int
    cost: float
    budget: float
    method: str
    measure: str
    indices: NDArray[np.intp]
    q: NDArray[np.float64]
    labels: NDArray[Any]
    comparison: Comparison | MultipleComparison | None
    stopped_early: bool = False
    label_offsets: NDArray[np.int64] | None = None
    #: The measure's range (:attr:`~activeeval.measures.Measure.value_range`), to which
    #: :meth:`model_intervals` clips each model's interval.
    value_range: tuple[float, float] = (-math.inf, math.inf)
    #: A function giving each model's tempered-model score curve on the draws (model-assisted
    #: estimator; computed once, when :meth:`model_intervals` first asks), which
    #: :meth:`model_intervals` joins to its Wald interval; None where not computed.
    model_scores: Callable[[], tuple[Any, ...]] | None = None

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> tuple[float, float]:
        """Interval for ``difference`` at ``level`` (default :attr:`level`): ``"wald"`` (the
        default; two-sided at :attr:`level` it is :attr:`ci`) or ``"t"`` (t_{n−1} on the
        draws). ``alternative="less"`` gives the one-sided upper bound of Δ (a
        non-inferiority claim Δ ≤ margin), ``"greater"`` the lower bound. For k > 2 models
        it is the best model against the runner-up, not adjusted for the other pairs."""
        lv = check_level(self.level if level is None else level)
        how = check_option("wald" if method is None else method, ("wald", "t"), "method")
        d, se, n = self.difference, self.stderr, self.n_draws
        return _sided(lambda lv: _difference_interval(d, se, n, lv, how), lv, alternative)

    @property
    def stderrs(self) -> NDArray[np.float64]:
        """Each model's own standard error on the comparison's draws (NaN where the method
        identifies only the difference, ``active_neq``, or for results without them)."""
        k = len(self.estimates)
        own = getattr(self.comparison, "stderrs", None)
        if own is None:
            return np.full(k, math.nan)
        return np.where(np.isnan(self.estimates), math.nan, np.asarray(own, dtype=float))

    def model_intervals(
        self, level: float | None = None, alternative: str = "two-sided"
    ) -> NDArray[np.float64]:
        """Each model's own interval, shape (k, 2), from :attr:`estimates` and
        :attr:`stderrs` at ``level`` (default :attr:`level`): Wald, joined with the model's
        tempered-model score interval (:attr:`model_scores`; model-assisted estimator only,
        as :class:`EvaluationResult`'s ``tempered``); one-sided as :meth:`confidence_interval`,
        clipped to the measure's :attr:`value_range` (an error rate's interval does not go
        below 0). The draws follow the comparison's q, chosen for the difference, so a
        model's own interval is wider than an evaluation of it alone would give: the q leaves
        few draws where the models agree, and their rare errors are what a Wald interval
        misses. Measured (error rates, a 3,000-instance calibrated pool): Wald alone covered
        0.83 / 0.94 / 0.94 at 100 / 200 / 400 labels with the model-assisted estimator (400
        runs), joined 0.94–0.96 at 100 labels (300 runs, 1.1–1.2× the width); the thesis's
        estimator keeps Wald, 0.80 / 0.90 / 0.93. For a model's value that must be right,
        evaluate it alone."""
        lv = check_level(self.level if level is None else level)
        scores = (None,) * len(self.estimates) if self.model_scores is None else self.model_scores()
        out = np.empty((len(self.estimates), 2))
        for j, (g, se, sc) in enumerate(zip(self.estimates, self.stderrs, scores, strict=True)):
            out[j] = _sided(partial(_joined, float(g), float(se), sc), lv, alternative)
        lo, hi = self.value_range
        return np.clip(out, lo, hi)

    def test(self, null: float = 0.0, alternative: str = "two-sided") -> float:
        """The Wald p-value of h₀: Δ = ``null`` against Δ ≠ ``null``, Δ < ``null``
        (``"less"``) or Δ > ``null`` (``"greater"``), Δ = ``difference`` (eq. 3.23–3.24).
        For two models ``test()`` is :attr:`p_value`; for k > 2 it is not adjusted for the
        other pairs (:attr:`p_value` is Holm-adjusted)."""
        alternative = check_option(alternative, ALTERNATIVES, "alternative")
        return _shifted_p(self.difference, self.stderr, _null(null), alternative)

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "method", "difference", "stderr"),
            ("p_value", "ci", "level", "best", "estimates", "stderrs"),
            ("n_labels", "n_draws", "cost", "budget", "stopped_early"),
        )


def _joined(g: float, se: float, score: Any, level: float) -> tuple[float, float]:
    """The Wald interval of (g, se) at ``level``, joined with the score set of ``score``
    (a :class:`~activeeval.estimators.inference.ScoreCurve`) where there is one."""
    base = _wald_interval(g, se, level)
    return base if score is None else score.join(base, g, level)
