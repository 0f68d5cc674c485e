"""The two results a user gets: one estimate, one comparison.

:func:`~activeeval.evaluate` and :meth:`~activeeval.Session.estimate` both return an
:class:`EvaluationResult`; :func:`~activeeval.compare` and :meth:`~activeeval.Session.compare`
both return a :class:`ComparisonResult`. Each has a short repr; an estimate gives any
interval method by :meth:`EvaluationResult.confidence_interval`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import check_level, check_option
from .errors import ShapeError
from .estimators.anytime import DrawTerms
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
        The method of ``ci`` (``"tempered"``, ``"logit"`` or ``"wald"``; ``"anytime"`` when
        a stopping rule was set, whether or not it ended the campaign early, ``"fixed-width"``
        under Chow–Robbins' rule).
    stopped : str or None
        Why the campaign stopped before spending its budget — the stopping rule that was met
        (``"target width 0.05 reached"``, ``"claim f1 >= 0.8 established"``, …) — or None
        when it ran to the budget (or a session still runs).
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
    stopped: str | None = None
    #: A function giving the draws' per-draw terms for the anytime-valid sequence
    #: (:class:`~activeeval.estimators.anytime.DrawTerms`), computed once when first asked.
    anytime_terms: Callable[[], DrawTerms] | None = field(default=None, repr=False)

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> tuple[float, float]:
        """Interval by any method of :meth:`Estimate.confidence_interval`, or ``"anytime"``;
        by default the method of :attr:`ci`; clipped like :attr:`ci` to the measure's
        ``value_range``.

        ``"anytime"``: the confidence sequence's running intersection after the last draw
        (:meth:`confidence_sequence`), valid whenever the campaign was stopped — the interval
        to report when you looked at the estimate along the way and stopped when it suited
        you. It is wider than the fixed-n interval at the same labels: on the real tasks
        1.4–2.3 times at 300 labels, median 1.54 (``docs/results/sequential.md``; more at a
        handful of labels and near a census; :mod:`activeeval.estimators.anytime`).
        ``"fixed-width"`` is the reported interval of Chow–Robbins' rule, the design-based
        one.

        ``alternative``: ``"two-sided"``, or a one-sided bound at ``level`` — ``"less"`` the
        upper bound (the interval from the lowest value of the measure's range to it, e.g. for
        *error rate ≤ 5%*), ``"greater"`` the lower bound (e.g. for *F1 ≥ 0.80*)."""
        if self.inference is None:
            return math.nan, math.nan
        how = self.interval if method is None else method
        if how == "anytime":
            return self._anytime(level, alternative)
        if how == "fixed-width":
            how = "logit" if self.inference.binary_loss else "wald"
        ci = self.inference.confidence_interval(level, how, alternative)
        if math.isnan(self.estimate):
            return ci
        return clip_to_range(self.estimate, ci, self.value_range)[1]

    def confidence_sequence(
        self, level: float | None = None, alternative: str = "two-sided"
    ) -> pd.DataFrame:
        """The anytime-valid confidence sequence after every draw (up to 4,000 looks; beyond,
        an even grid): columns ``n_draws``, ``estimate`` (the finite-pool martingale estimate
        the sequence is centred on — not :attr:`estimate`, the Hájek form, from which it
        differs by O(1/√n): on a ranked pool stopped at a target width, :attr:`estimate` lay
        outside the anytime interval in 2% of runs), ``lower``, ``upper`` (running
        intersection) and ``started``
        (the start rule held: before, the measure's whole range). Plot ``lower``/``upper``
        against ``n_draws`` to see when the answer was known.
        :mod:`activeeval.estimators.anytime` has the construction and its guarantee."""
        lv = check_level(self.level if level is None else level)
        terms = self._terms()
        seq = terms.sequence(0, lv, alternative)
        return pd.DataFrame(
            {"n_draws": seq["t"], "estimate": seq["estimate"], "lower": seq["lower"],
             "upper": seq["upper"], "started": seq["started"]}
        )  # fmt: skip

    def _terms(self) -> DrawTerms:
        if self.anytime_terms is None:
            raise ShapeError(
                "method: this result carries no per-draw terms for an anytime-valid interval "
                "(a stratified campaign, or a session before its first label); use a "
                "fixed-n method."
            )
        return self.anytime_terms()

    def _anytime(self, level: float | None, alternative: str) -> tuple[float, float]:
        lv = check_level(self.level if level is None else level)
        if self.inference is not None and self.inference.census:
            return self.estimate, self.estimate  # every unit that counts is labeled: exact
        return self._terms().interval(0, lv, alternative, include=self.estimate)

    @property
    def effective_n(self) -> float:
        return math.nan if self.inference is None else float(self.inference.effective_n)

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "method", "estimate", "stderr"),
            ("ci", "level", "interval"),
            ("n_labels", "n_draws", "effective_n", "cost", "budget", "stopped"),
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
    #: Why the campaign stopped before its budget (``"decided: model 1 is better"``, a claim
    #: settled, the sequential protocol's ``"p < alpha"``), or None.
    stopped: str | None = None
    label_offsets: NDArray[np.int64] | None = None
    #: The measure's range (:attr:`~activeeval.measures.Measure.value_range`), to which
    #: :meth:`model_intervals` clips each model's interval.
    value_range: tuple[float, float] = (-math.inf, math.inf)
    #: A function giving each model's tempered-model score curve on the draws (model-assisted
    #: estimator; computed once, when :meth:`model_intervals` first asks), which
    #: :meth:`model_intervals` joins to its Wald interval; None where not computed.
    model_scores: Callable[[], tuple[Any, ...]] | None = None
    #: The draws' per-draw terms for the anytime-valid sequences (computed when first asked).
    anytime_terms: Callable[[], DrawTerms] | None = field(default=None, repr=False)
    #: The interval method of :attr:`ci`: ``"wald"``; ``"anytime"`` when a stopping rule was
    #: set (whether or not it ended the campaign early), ``"fixed-width"`` under Chow–Robbins'
    #: rule (the Wald interval).
    interval: str = "wald"

    @property
    def stopped_early(self) -> bool:
        """Deprecated: ``stopped is not None``."""
        warnings.warn(
            "ComparisonResult.stopped_early is deprecated; use `stopped` (why the campaign "
            "stopped, or None).",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.stopped is not None

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> tuple[float, float]:
        """Interval for ``difference`` at ``level`` (default :attr:`level`): ``"wald"`` (two-sided
        at :attr:`level` it is :attr:`ci` unless a stopping rule ended the campaign), ``"t"``
        (t_{n−1} on the draws) or ``"anytime"`` (the confidence sequence of Δ after the last
        draw, valid at a data-dependent stop; :mod:`activeeval.estimators.anytime`); by default
        :attr:`interval` (``"fixed-width"``, Chow–Robbins' rule's, is the Wald interval). ``alternative="less"`` gives the one-sided upper bound of Δ (a
        non-inferiority claim Δ ≤ margin), ``"greater"`` the lower bound. For k > 2 models
        it is the best model against the runner-up: not adjusted for the other pairs, except
        ``"anytime"``, whose level is Bonferroni-adjusted over all k(k − 1)/2 pairs (so it
        holds whichever pair the data make best and runner-up)."""
        lv = check_level(self.level if level is None else level)
        how = check_option(
            self.interval if method is None else method,
            ("wald", "t", "anytime", "fixed-width"),
            "method",
        )
        if how == "anytime":
            return self._anytime(lv, alternative)
        if how == "fixed-width":  # Chow–Robbins' reported interval: the fixed-n Wald one
            how = "wald"
        d, se, n = self.difference, self.stderr, self.n_draws
        return _sided(lambda lv: _difference_interval(d, se, n, lv, how), lv, alternative)

    def confidence_sequence(
        self, level: float | None = None, alternative: str = "two-sided"
    ) -> pd.DataFrame:
        """The anytime-valid confidence sequence of ``difference`` after every draw, as
        :meth:`EvaluationResult.confidence_sequence` (k > 2: best against runner-up, level
        Bonferroni-adjusted over all pairs)."""
        terms = self._terms()
        seq = terms.sequence(self._pair(), self._pair_level(level), alternative)
        return pd.DataFrame(
            {"n_draws": seq["t"], "difference": seq["estimate"], "lower": seq["lower"],
             "upper": seq["upper"], "started": seq["started"]}
        )  # fmt: skip

    def _pair(self) -> tuple[int, int]:
        """Two models: (0, 1). More: :attr:`best` and the runner-up by :attr:`estimates`,
        the pair :attr:`difference` is about (an audit found the interval of another pair
        reported beside it when the pair came from the sequences' centres)."""
        if len(self.estimates) == 2:
            return 0, 1
        gib = bool(getattr(self.comparison, "greater_is_better", False))
        key = -self.estimates if gib else self.estimates
        order = [int(j) for j in np.argsort(np.nan_to_num(key, nan=np.inf), kind="stable")]
        runner = next(j for j in order if j != self.best)
        return int(self.best), runner

    def _pair_level(self, level: float | None) -> float:
        lv = check_level(self.level if level is None else level)
        k = len(self.estimates)
        return 1.0 - (1.0 - lv) / (k * (k - 1) / 2)

    def _terms(self) -> DrawTerms:
        if self.anytime_terms is None:
            raise ShapeError(
                "method: this comparison carries no per-draw terms for an anytime-valid "
                "interval (method='active_neq' identifies only the difference on the "
                "disagreements); use method='wald'."
            )
        return self.anytime_terms()

    def _anytime(self, level: float, alternative: str) -> tuple[float, float]:
        if getattr(self.comparison, "census", False):
            return self.difference, self.difference  # every unit that counts is labeled
        include = self.difference  # best − runner-up for k > 2, the pair of _pair
        return self._terms().interval(
            self._pair(), self._pair_level(level), alternative, include=include
        )

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
            ("n_labels", "n_draws", "cost", "budget", "stopped"),
        )


def _joined(g: float, se: float, score: Any, level: float) -> tuple[float, float]:
    """The Wald interval of (g, se) at ``level``, joined with the score set of ``score``
    (a :class:`~activeeval.estimators.inference.ScoreCurve`) where there is one."""
    base = _wald_interval(g, se, level)
    return base if score is None else score.join(base, g, level)
