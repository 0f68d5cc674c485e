"""The two results a user gets: one estimate, one comparison.

``evaluate`` and ``Session.estimate`` both return an ``EvaluationResult``; ``compare`` and
``Session.compare`` both return a ``ComparisonResult``. Each has a short repr; derived
quantities (other intervals, one-sided bounds, confidence sequences, tests) are methods.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import check_level, check_option
from .errors import ShapeError
from .estimators.anytime import DrawTerms, _certain
from .estimators.classwise import PerClassEstimate
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
from .measures import ClasswiseMeasure, Measure, clip_to_range
from .methods import ALTERNATIVES, INTERVAL_METHODS
from .probability_measures import ProbabilityMeasure, _ScoringRule

__all__ = ["ComparisonResult", "EvaluationResult", "GroupResult", "PerClassResult"]


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Outcome of an evaluation: one model's estimated measure with its interval.

    Returned by ``evaluate`` (a campaign) and by ``Session.estimate`` (a session, on the
    labeled prefix of its draws). It prints in a few lines; derived quantities are methods:
    other interval methods and one-sided bounds (``confidence_interval``), the anytime-valid
    confidence sequence (``confidence_sequence``).

    Attributes
    ----------
    estimate : float
        The performance estimate, clipped to the measure's range (an error rate is never
        below 0); ``inference.estimate`` is the unclipped, unbiased value.
    stderr : float
        Its standard error.
    ci : tuple of float
        Interval at ``level``, clipped to the same range; ``interval`` names its method.
    level : float
        Confidence level of ``ci``.
    n_labels : int
        Distinct instances labeled.
    n_draws : int
        Draws used, repeats of labeled instances included.
    cost : float
        Labeling cost spent (= ``n_labels`` without costs).
    budget : float
        The budget, in labels or cost units.
    method : str
        The sampling method (``"active"``, ``"passive"``, ``"stratified"``, ...).
    measure : str
        The measure's name.
    indices : ndarray of int
        The draw sequence: pool indices (query indices on a ranking pool).
    q : ndarray of float
        Each draw's sampling probability.
    labels : ndarray
        Each draw's label; on a ranking pool the drawn queries' grades, flat.
    inference : Estimate or None
        The underlying [Estimate][activeeval.estimators.inference.Estimate], for other
        interval methods; None for a session before its first label.
    label_offsets : ndarray of int or None
        Ranking pools only: draw ``j``'s grades are
        ``labels[label_offsets[j]:label_offsets[j + 1]]``.
    interval : str
        The method of ``ci``: ``"tempered"`` (the default estimator on a static q),
        ``"logit"`` or ``"wald"`` (where the tempered family is not defined, and with
        ``estimator="snis"``); ``"anytime"`` when a stopping rule was set, whether or not it
        ended the campaign early; ``"fixed-width"`` under Chow–Robbins' rule.
    value_range : tuple of float
        The measure's range, to which ``estimate`` and ``ci`` are clipped.
    stopped : str or None
        Why the campaign stopped before spending its budget (``"target width 0.05
        reached"``, ``"claim f1 >= 0.8 established"``, ...), or None when it ran to the
        budget (or a session still runs).
    anytime_terms : callable or None
        Gives the draws' per-draw terms of the anytime-valid sequence, computed once when
        first asked; None where there are none (a stratified campaign).
    effective_n : float
        Kish's effective sample size of the estimate's weights, (Σ v·w)²/Σ (v·w)² (NaN
        before the first label); far below ``n_labels``, a few labels carry the estimate.

    See Also
    --------
    evaluate : Runs a campaign and returns this result.
    ComparisonResult : The result of a comparison of models.
    activeeval.estimators.inference.Estimate : The underlying estimate and its intervals.

    Notes
    -----
    Which interval ``ci`` is, why the estimate is clipped, and how much wider the
    anytime-valid interval is, are explained on the *How it works* page of the
    documentation (``docs/how-it-works/index.md``, "What a result reports").

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, size=500)
    >>> proba = np.column_stack([1 - p1, p1])
    >>> y = (rng.uniform(size=500) < p1).astype(int)
    >>> res = ae.evaluate(proba, lambda idx: y[idx], "error_rate", budget=100, random_state=1)
    >>> print(res)
    EvaluationResult(measure='error_rate', method='active', estimate=0.2649, stderr=0.03574,
        ci=(0.1978, 0.3441), level=0.95, interval='tempered',
        n_labels=100, n_draws=103, effective_n=98.35, cost=100, budget=100, stopped=None)
    >>> lo, hi = res.confidence_interval(level=0.9, method="wald")
    >>> print(f"[{lo:.3f}, {hi:.3f}]")
    [0.206, 0.324]
    >>> print(f"error rate <= {res.confidence_interval(alternative='less')[1]:.3f}")
    error rate <= 0.330
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
    #: (``DrawTerms``), computed once when first asked.
    anytime_terms: Callable[[], DrawTerms] | None = field(default=None, repr=False)
    #: The distribution over the whole pool that every draw came from (a campaign from one
    #: q, or its reused mixture), which ``reuse=`` needs; None when q changed between draws,
    #: and for a session's estimate from its pool summary (which reads no q: reuse the
    #: Session itself).
    pool_q: NDArray[np.float64] | None = field(default=None, repr=False)

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
    ) -> tuple[float, float]:
        """Interval for the measure by any method, two-sided or one-sided.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level``.
        method : str, optional
            An interval method of ``Estimate.confidence_interval`` (``"wald"``, ``"t"``,
            ``"logit"``, ``"wilson"``, ``"clopper-pearson"``, ``"agresti-coull"``,
            ``"tempered"``); ``"anytime"``, the confidence sequence's running intersection
            after the last draw, valid whenever the campaign was stopped — the interval to
            report when you looked along the way and stopped when it suited you; or
            ``"fixed-width"``, Chow–Robbins' reported interval (the design-based one).
            Default: the method of ``ci`` (``interval``).
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            ``"less"``: the one-sided upper bound at ``level``, as the interval from the
            lowest value of the measure's range to it (e.g. for *error rate ≤ 5%*);
            ``"greater"``: the lower bound (e.g. for *F1 ≥ 0.80*).

        Returns
        -------
        tuple of float
            (lower, upper), clipped to the measure's ``value_range``; (nan, nan) for a
            session before its first label.

        Raises
        ------
        ShapeError
            ``method="anytime"`` on a result without per-draw terms (a stratified campaign),
            or whose prediction arrays were changed after the call (the sequence is computed
            from them when first asked: pass ``evaluate`` a copy to reuse the array).

        Notes
        -----
        The anytime interval is wider than the fixed-n one at the same labels; the measured
        ratio is on the *How it works* page (``docs/how-it-works/index.md``).
        """
        how = self.interval if method is None else method
        if method is not None:  # the result's own methods beside the estimate's
            how = check_option(method, (*INTERVAL_METHODS, "anytime", "fixed-width"), "method")
        if self.inference is None:
            return math.nan, math.nan
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
        """The anytime-valid confidence sequence after every draw.

        Plot ``lower`` and ``upper`` against ``n_draws`` to see when the answer was known.

        Parameters
        ----------
        level : float, optional
            Confidence level of the sequence (it holds at every draw at once); default the
            result's ``level``.
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            ``"less"``: a sequence of upper bounds, ``"greater"``: of lower bounds.

        Returns
        -------
        pandas.DataFrame
            One row per draw (up to 4,000 looks; beyond, an even grid), columns ``n_draws``;
            ``estimate``, the finite-pool martingale estimate the sequence is centred on (not
            the attribute ``estimate``, from which it differs by O(1/√n)); ``lower`` and
            ``upper``, the running intersection; ``started``, whether the start rule held
            (before, the interval is the measure's whole range).

        Raises
        ------
        ShapeError
            The result carries no per-draw terms (a stratified campaign, or a session before
            its first label).

        See Also
        --------
        confidence_interval : ``method="anytime"`` is the sequence's last interval.

        Notes
        -----
        The construction and its guarantee are on the *Anytime-valid inference* page of the
        documentation (``docs/design/anytime-valid.md``).
        """
        lv = check_level(self.level if level is None else level)
        terms = self._terms()
        seq = terms.sequence(0, lv, alternative)
        if self.inference is not None and self.inference.census:
            seq = _census_rows(seq, self.indices, self.estimate, alternative)
        return pd.DataFrame(
            {"n_draws": seq["t"], "estimate": seq["estimate"], "lower": seq["lower"],
             "upper": seq["upper"], "started": seq["started"]}
        )  # fmt: skip

    def _terms(self) -> DrawTerms:
        if self.anytime_terms is None:
            raise ShapeError(
                "method: this result carries no per-draw terms for an anytime-valid interval "
                "(a stratified campaign, a multi-class average, a session before its first "
                "label, or one whose q changed when a model was added); use a fixed-n method."
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
    """Outcome of a comparison: the difference of the models' measures, its test and interval.

    Returned by ``compare`` (a campaign, thesis Algorithm 3) and by ``Session.compare`` (a
    session, on the labeled prefix of its draws). For two models ``difference`` is
    Δ̂ = Ĝ[f₀] − Ĝ[f₁] with its Wald ``p_value`` (eq. 3.23–3.24). For k > 2 models
    ``difference`` and ``p_value`` compare the best model with the runner-up, and
    ``comparison`` holds the full
    [MultipleComparison][activeeval.estimators.inference.MultipleComparison] (pairwise
    table, Tukey range test).

    Attributes
    ----------
    difference : float
        Δ̂, model 0's estimate minus model 1's (k > 2: the best model's minus the
        runner-up's).
    stderr : float
        Standard error of ``difference``.
    p_value : float
        Wald p-value of Δ = 0 (k > 2: Holm-adjusted over all pairs); with a stopping rule
        (``interval`` ``"anytime"``) the anytime-valid one of ``test``: p ≤ 1 − ``level``
        when the sequence excluded 0 at some look.
    ci : tuple of float
        Interval for Δ at ``level``; ``interval`` names its method.
    best : int
        Index of the model with the better estimate (two models: 0 when ``difference`` is
        NaN; check it).
    estimates : ndarray of shape (k,)
        Each model's estimate (NaN for ``active_neq``, which identifies only the
        difference). Not clipped to the measure's range, so that ``difference`` stays their
        difference: with a handful of labels an F1 estimate can exceed 1.
    level : float
        Confidence level of ``ci``.
    n_labels : int
        Distinct instances labeled.
    n_draws : int
        Draws used, repeats of labeled instances included.
    cost : float
        Labeling cost spent (= ``n_labels`` without costs).
    budget : float
        The budget, in labels or cost units.
    method : str
        The sampling method (``"active"``, ``"passive"``, ``"active_neq"``, ...).
    measure : str
        The measure's name.
    indices : ndarray of int
        The draw sequence: pool indices (query indices for two rankers).
    q : ndarray of float
        Each draw's sampling probability.
    labels : ndarray
        Each draw's label; for two rankers the grades of the union of both lists, flat.
    comparison : Comparison, MultipleComparison or None
        The underlying paired test
        ([Comparison][activeeval.estimators.inference.Comparison]) or multiple comparison.
    stopped : str or None
        Why the campaign stopped before its budget (``"decided: model 0 is better"``, a
        claim settled, the sequential protocol's ``"p < 0.05 (sequential Wald test)"``), or
        None.
    label_offsets : ndarray of int or None
        Two rankers only: draw ``j``'s grades are
        ``labels[label_offsets[j]:label_offsets[j + 1]]``.
    value_range : tuple of float
        The measure's range, to which ``model_intervals`` clips each model's interval.
    model_scores : callable or None
        Gives each model's tempered-model score curve on the draws (model-assisted estimator;
        computed once, when ``model_intervals`` first asks); None where not computed.
    anytime_terms : callable or None
        Gives the draws' per-draw terms of the anytime-valid sequences, computed once when
        first asked; None for ``active_neq``.
    interval : str
        The method of ``ci``: ``"wald"``; ``"anytime"`` when a stopping rule was set,
        whether or not it ended the campaign early; ``"fixed-width"`` under Chow–Robbins'
        rule (the Wald interval).
    stderrs : ndarray of shape (k,)
        Each model's own design-based standard error on the comparison's draws (NaN where
        the method identifies only the difference, ``active_neq``). It rests on the labeled
        residuals alone and can be far too small where the draws missed a model's errors;
        ``model_intervals`` is the interval to read.

    See Also
    --------
    compare : Runs a comparison campaign and returns this result.
    EvaluationResult : The result of one model's evaluation.
    activeeval.estimators.inference.MultipleComparison : The table of k > 2 models.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.uniform(size=500) < p1).astype(int)
    >>> model_a = np.column_stack([1 - p1, p1])
    >>> model_b = np.column_stack([1 - p1**2, p1**2])
    >>> res = ae.compare([model_a, model_b], lambda idx: y[idx], budget=100, random_state=0)
    >>> print(f"difference {res.difference:.3f}, p = {res.p_value:.4f}, best: model {res.best}")
    difference -0.043, p = 0.0082, best: model 0
    >>> print(f"model 0 is better: p = {res.test(alternative='less'):.4f}")
    model 0 is better: p = 0.0041
    >>> np.round(res.model_intervals(), 3).tolist()
    [[0.099, 0.422], [0.142, 0.471]]
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
    #: The measure's range (``value_range``), to which
    #: ``model_intervals`` clips each model's interval.
    value_range: tuple[float, float] = (-math.inf, math.inf)
    #: A function giving each model's tempered-model score curve on the draws (model-assisted
    #: estimator; computed once, when ``model_intervals`` first asks), which
    #: ``model_intervals`` joins to its Wald interval; None where not computed.
    model_scores: Callable[[], tuple[Any, ...]] | None = None
    #: The draws' per-draw terms for the anytime-valid sequences (computed when first asked).
    anytime_terms: Callable[[], DrawTerms] | None = field(default=None, repr=False)
    #: The distribution over the whole pool that every draw came from (see EvaluationResult).
    pool_q: NDArray[np.float64] | None = field(default=None, repr=False)
    #: The interval method of ``ci``: ``"wald"``; ``"anytime"`` when a stopping rule was
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
        """Interval for ``difference``, two-sided or one-sided.

        For k > 2 models it is the best model against the runner-up: not adjusted for the
        other pairs, except ``"anytime"``, whose level is Bonferroni-adjusted over all
        k(k − 1)/2 pairs (so it holds whichever pair the data make best and runner-up).

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level``.
        method : {"wald", "t", "anytime", "fixed-width"}, optional
            ``"wald"`` (two-sided at the result's ``level`` it is ``ci`` unless a stopping
            rule was set); ``"t"`` (t with n − 1 degrees of freedom on the draws);
            ``"anytime"`` (the confidence sequence of Δ after the last draw, valid at a
            data-dependent stop); ``"fixed-width"`` (Chow–Robbins' reported interval, the
            Wald one). Default: the method of ``ci`` (``interval``).
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            ``"less"``: the one-sided upper bound of Δ (a non-inferiority claim
            Δ ≤ margin); ``"greater"``: the lower bound.

        Returns
        -------
        tuple of float
            (lower, upper); the open side of a one-sided bound is infinite.

        Raises
        ------
        ShapeError
            ``method="anytime"`` for ``active_neq``, which has no per-draw terms.
        """
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
        """The anytime-valid confidence sequence of ``difference`` after every draw.

        As ``EvaluationResult.confidence_sequence``; for k > 2 models the best against the
        runner-up, at a level Bonferroni-adjusted over all k(k − 1)/2 pairs.

        Parameters
        ----------
        level : float, optional
            Confidence level of the sequence; default the result's ``level``.
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            ``"less"``: a sequence of upper bounds of Δ, ``"greater"``: of lower bounds.

        Returns
        -------
        pandas.DataFrame
            One row per draw, columns ``n_draws``, ``difference`` (the sequence's centre),
            ``lower``, ``upper`` (running intersection) and ``started``.

        Raises
        ------
        ShapeError
            For ``active_neq``, which has no per-draw terms.
        """
        terms = self._terms()
        seq = terms.sequence(self._pair(), self._pair_level(level), alternative)
        if getattr(self.comparison, "census", False):
            seq = _census_rows(seq, self.indices, self.difference, alternative)
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
                "disagreements; a session's draws span two q when a model was added, or it "
                "has no label yet); use method='wald'."
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
        """Each model's own design-based standard error on the comparison's draws (NaN where
        the method identifies only the difference, ``active_neq``, or for results without
        them). It can be far too small where the draws missed a model's errors: read each
        model's value from ``model_intervals``."""
        k = len(self.estimates)
        own = getattr(self.comparison, "stderrs", None)
        if own is None:
            return np.full(k, math.nan)
        return np.where(np.isnan(self.estimates), math.nan, np.asarray(own, dtype=float))

    def model_intervals(
        self, level: float | None = None, alternative: str = "two-sided"
    ) -> NDArray[np.float64]:
        """Each model's own interval from ``estimates`` and ``stderrs``.

        Wald, joined with the model's tempered-model score interval (``model_scores``;
        model-assisted estimator only, as ``EvaluationResult``'s ``"tempered"``). The draws
        follow the comparison's q, chosen for the difference, so a model's own interval is
        wider than an evaluation of it alone would give, and its coverage is measured on the
        *How it works* page (``docs/how-it-works/index.md``). For a model's value that must
        be right, evaluate it alone.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level``.
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            One-sided bounds as in ``confidence_interval``.

        Returns
        -------
        ndarray of shape (k, 2)
            Row j is model j's (lower, upper), clipped to the measure's ``value_range``
            (an error rate's interval does not go below 0).
        """
        lv = check_level(self.level if level is None else level)
        scores = (None,) * len(self.estimates) if self.model_scores is None else self.model_scores()
        out = np.empty((len(self.estimates), 2))
        for j, (g, se, sc) in enumerate(zip(self.estimates, self.stderrs, scores, strict=True)):
            out[j] = _sided(partial(_joined, float(g), float(se), sc), lv, alternative)
        lo, hi = self.value_range
        return np.clip(out, lo, hi)

    def test(
        self, null: float = 0.0, alternative: str = "two-sided", method: str | None = None
    ) -> float:
        """The p-value of h₀: Δ = ``null``, Δ = ``difference``: Wald's (eq. 3.23–3.24), or
        the anytime-valid one of the confidence sequence.

        For two models ``test()`` is ``p_value``; for k > 2 it is not adjusted for the other
        pairs (``p_value`` is Holm-adjusted), except the anytime one, Bonferroni-adjusted over
        all pairs as its interval is.

        Parameters
        ----------
        null : float, default 0.0
            The difference under h₀.
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            h₁: Δ ≠ ``null``, Δ < ``null`` (``"less"``) or Δ > ``null`` (``"greater"``).
        method : {"wald", "anytime"}, optional
            ``"wald"``: valid at a fixed number of draws; ``"anytime"``: the smallest α at
            which the confidence sequence at level 1 − α excludes ``null`` at some look
            (``confidence_sequence``, each look's own interval) — valid however often the
            comparison was looked at and whenever it stopped. p ≤ α exactly when the
            sequence at 1 − α missed ``null`` somewhere, i.e. when its running intersection
            excludes it (the reported ``ci`` also stretches to the reported estimate). Found
            by bisection, reported as the end of the bracket that excludes, so it errs high
            by at most 1 part in 10⁴; floor 10⁻¹². Default: ``"anytime"`` when the result
            reports the anytime interval (``interval``, a stopping rule), else ``"wald"``.

        Returns
        -------
        float
            The p-value.
        """
        alternative = check_option(alternative, ALTERNATIVES, "alternative")
        default = "anytime" if self.interval == "anytime" else "wald"
        how = check_option(default if method is None else method, ("wald", "anytime"), "method")
        if how == "anytime":
            return self._anytime_p(_null(null), alternative)
        return _shifted_p(self.difference, self.stderr, _null(null), alternative)

    def _anytime_p(self, null: float, alternative: str) -> float:
        """:meth:`test`'s anytime p-value (:meth:`~.estimators.anytime.DrawTerms.p_value`),
        for k > 2 models Bonferroni-adjusted over the k(k − 1)/2 pairs as the anytime
        interval is; a census (every unit that counts labeled) has the exact difference."""
        if math.isnan(self.difference):
            return math.nan
        if getattr(self.comparison, "census", False):
            d = self.difference
            return _certain(d > null, d < null, alternative)
        pairs = len(self.estimates) * (len(self.estimates) - 1) / 2
        first = (1.0 - self.level) / pairs  # p ≤ 1 − level iff the level's sequence excludes it
        p = self._terms().p_value(self._pair(), null, alternative, first)
        return min(1.0, p * pairs)

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


@dataclass(frozen=True, eq=False)
class PerClassResult:
    """Outcome of evaluating a per-class measure: every class's estimate with its interval.

    Returned by ``evaluate`` for ``measure="per_class_f1"``, ``"per_class_precision"``,
    ``"per_class_recall"`` or a :class:`~activeeval.PerClass` measure. One campaign, one
    q (minimizing the sum of the K variances), K estimates.

    Attributes
    ----------
    classes : tuple
        The model's classes, in the order of the arrays.
    estimates : ndarray of shape (K,)
        Each class's estimate, clipped to [0, 1] (NaN where undefined: precision of a class
        the model never predicts, recall of a class the labels have not shown).
    stderrs : ndarray of shape (K,)
        Their standard errors (the jackknife's).
    ci : ndarray of shape (K, 2)
        Marginal logit intervals at ``level`` (the Wald interval on the logit scale);
        ``confidence_interval(adjust="bonferroni")`` gives simultaneous ones.
    level : float
        Confidence level of ``ci``.
    n_labels, n_draws : int
        Distinct instances labeled, and draws (repeats included).
    cost, budget : float
        Labeling cost spent, and the budget.
    method : str
        The sampling method.
    measure : str
        The measure's name.
    indices, q, labels : ndarray
        The draw sequence, each draw's sampling probability and label.
    inference : PerClassEstimate
        The underlying estimate, for other intervals.

    See Also
    --------
    evaluate : Runs the campaign.
    activeeval.estimators.classwise.PerClassEstimate : The estimate and its intervals.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> proba = rng.dirichlet([1.0, 1.0, 1.0], size=600)
    >>> y = np.array([rng.choice(3, p=row) for row in proba])
    >>> res = ae.evaluate(proba, lambda i: y[i], "per_class_recall", budget=150, random_state=0)
    >>> res.to_frame().round(2).columns.tolist()
    ['class', 'estimate', 'stderr', 'lower', 'upper']
    """

    classes: tuple[Any, ...]
    estimates: NDArray[np.float64]
    stderrs: NDArray[np.float64]
    ci: NDArray[np.float64]
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
    inference: PerClassEstimate
    interval: str = "logit"

    def confidence_interval(
        self,
        level: float | None = None,
        method: str = "logit",
        alternative: str = "two-sided",
        adjust: str | None = None,
    ) -> NDArray[np.float64]:
        """Each class's interval, two-sided or one-sided, marginal or simultaneous.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level``.
        method : {"logit", "wald", "t"}, default "logit"
            The interval method (the logit scale's Wald interval stays inside (0, 1)).
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            scipy's convention, as for :meth:`EvaluationResult.confidence_interval`.
        adjust : {None, "bonferroni"}
            None: marginal intervals; ``"bonferroni"``: all K hold together at ``level``.

        Returns
        -------
        ndarray of shape (K, 2)
            Low and high ends per class, clipped to [0, 1].
        """
        raw = self.inference.confidence_interval(level, method, alternative, adjust)
        return np.where(np.isnan(raw), np.nan, np.clip(raw, 0.0, 1.0))

    def to_frame(self) -> pd.DataFrame:
        """One row per class: ``class``, ``estimate``, ``stderr``, ``lower``, ``upper``.

        Returns
        -------
        pandas.DataFrame
            The estimates and the intervals of ``ci``.
        """
        return pd.DataFrame(
            {"class": list(self.classes), "estimate": self.estimates, "stderr": self.stderrs,
             "lower": self.ci[:, 0], "upper": self.ci[:, 1]}
        )  # fmt: skip

    def __repr__(self) -> str:
        shown = list(zip(self.classes, self.estimates, self.ci, strict=True))
        rows = [f"    {c!r}: {g:.4f} [{lo:.4f}, {hi:.4f}]," for c, g, (lo, hi) in shown[:20]]
        if len(shown) > 20:
            rows.append(f"    ... {len(shown) - 20} more classes (to_frame() lists all),")
        return "\n".join(
            [f"PerClassResult(measure={self.measure!r}, method={self.method!r}, "
             f"level={self.level:g}, interval={self.interval!r},", *rows,
             f"    n_labels={self.n_labels}, n_draws={self.n_draws}, cost={self.cost:g}, "
             f"budget={self.budget:g})"]
        )  # fmt: skip


@dataclass(frozen=True, eq=False)
class GroupResult:
    """Outcome of evaluating (or comparing) within groups of the pool (slices) and overall.

    Returned by ``evaluate(..., groups=g)``, ``compare(..., groups=g)`` and a session's
    ``estimate(groups=g)`` / ``compare(groups=g)``. One campaign, one q planned for the
    groups (``design``), an :class:`EvaluationResult` per group — the measure under the test
    distribution restricted to the group — and one for the whole pool; for a comparison a
    :class:`ComparisonResult` per group (``estimates`` are then the differences Δ). Where
    the measure is a mean over instances (error rate, accuracy, a cost matrix, MSE, MAE, the
    mean label, the Brier score, the log loss) an evaluation's ``overall`` is
    post-stratified, Σ_k share_k · estimate_k, so the groups' estimates weighted by their
    shares add up to it exactly (once every group has a label; before, the pool-wide
    estimate).

    Attributes
    ----------
    groups : tuple
        The group labels, sorted.
    results : tuple of EvaluationResult or ComparisonResult
        Each group's result, in the order of ``groups`` (``n_labels``: the group's labeled
        instances).
    overall : EvaluationResult or ComparisonResult
        The whole pool's.
    shares : ndarray of shape (G,)
        Each group's share of the test distribution.
    expected_labels : ndarray of shape (G,)
        The distinct instances of each group the campaign's draws label in expectation,
        Σ_(x in k) 1 − (1 − q(x))^n for n draws from q: what each group's interval rests on.
    design : str
        How q was planned: ``"minimax"`` (the largest group variance), ``"sum"`` (their
        sum), or ``"given"`` (``q=`` or ``method="passive"``).
    level : float
        Confidence level of the intervals.
    measure, method : str
        The measure's name and the sampling method.
    n_labels, n_draws : int
        Distinct instances labeled, and draws, in the whole campaign.
    cost, budget : float
        Labeling cost spent, and the budget.
    indices, q, labels : ndarray
        The draw sequence, each draw's sampling probability and label.

    See Also
    --------
    evaluate : Runs the campaign (``groups=``).
    activeeval.sampling.grouped_distribution : How q is planned.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, size=2000)
    >>> y = (rng.uniform(size=2000) < p1).astype(int)
    >>> country = np.where(rng.uniform(size=2000) < 0.1, "fr", "us")
    >>> res = ae.evaluate(np.c_[1 - p1, p1], lambda i: y[i], "error_rate", budget=300,
    ...                   groups=country, random_state=0)
    >>> res.to_frame().columns.tolist()
    ['group', 'share', 'n_labels', 'estimate', 'stderr', 'lower', 'upper']
    """

    groups: tuple[Any, ...]
    results: tuple[Any, ...]
    overall: Any
    shares: NDArray[np.float64]
    expected_labels: NDArray[np.float64]
    design: str
    level: float
    measure: str
    method: str
    n_labels: int
    n_draws: int
    cost: float
    budget: float
    indices: NDArray[np.intp]
    q: NDArray[np.float64]
    labels: NDArray[Any]

    @property
    def comparison(self) -> bool:
        """Whether the groups' results are comparisons (their values differences Δ)."""
        return isinstance(self.overall, ComparisonResult)

    @property
    def estimates(self) -> NDArray[np.float64]:
        """Each group's estimate (a comparison's: its difference Δ)."""
        return np.array([_value(r) for r in self.results])

    @property
    def stderrs(self) -> NDArray[np.float64]:
        """Each group's standard error."""
        return np.array([r.stderr for r in self.results])

    @property
    def ci(self) -> NDArray[np.float64]:
        """Each group's marginal interval at ``level``, shape (G, 2)."""
        return np.array([r.ci for r in self.results], dtype=float).reshape(-1, 2)

    def __getitem__(self, group: Any) -> Any:
        """The result of one group, by its label."""
        for g, r in zip(self.groups, self.results, strict=True):
            if g == group:
                return r
        raise KeyError(f"group {group!r} is not one of {list(self.groups)[:10]}")

    def confidence_interval(
        self,
        level: float | None = None,
        method: str | None = None,
        alternative: str = "two-sided",
        adjust: str | None = None,
    ) -> NDArray[np.float64]:
        """Each group's interval, marginal or simultaneous.

        Parameters
        ----------
        level : float, optional
            Confidence level; default the result's ``level``.
        method : str, optional
            An interval method of :meth:`EvaluationResult.confidence_interval`; default each
            group's reported one.
        alternative : {"two-sided", "less", "greater"}, default "two-sided"
            scipy's convention, as for :meth:`EvaluationResult.confidence_interval`.
        adjust : {None, "bonferroni"}
            None: marginal intervals; ``"bonferroni"``: each at level 1 − α/G, so that all G
            hold together at ``level``.

        Returns
        -------
        ndarray of shape (G, 2)
            Low and high ends per group.
        """
        lv = check_level(self.level if level is None else level)
        if adjust is not None:
            check_option(adjust, ("bonferroni",), "adjust")
            lv = 1.0 - (1.0 - lv) / len(self.groups)
        rows = [r.confidence_interval(lv, method, alternative) for r in self.results]
        return np.array(rows, dtype=float).reshape(-1, 2)

    def to_frame(self) -> pd.DataFrame:
        """One row per group: ``group``, ``share``, ``n_labels``, ``estimate`` (a comparison:
        ``difference`` and ``p_value``), ``stderr``, ``lower``, ``upper``.

        Returns
        -------
        pandas.DataFrame
            The groups' estimates and the intervals of ``ci``.
        """
        ci = self.ci
        value = "difference" if self.comparison else "estimate"
        frame = pd.DataFrame(
            {"group": list(self.groups), "share": self.shares,
             "n_labels": [r.n_labels for r in self.results], value: self.estimates,
             "stderr": self.stderrs, "lower": ci[:, 0], "upper": ci[:, 1]}
        )  # fmt: skip
        if self.comparison:
            frame["p_value"] = [r.p_value for r in self.results]
        return frame

    def __repr__(self) -> str:
        rows = [
            f"    {g!r}: {_value(r):.4f} [{r.ci[0]:.4f}, {r.ci[1]:.4f}] ({r.n_labels} labels),"
            for g, r in list(zip(self.groups, self.results, strict=True))[:20]
        ]
        if len(self.groups) > 20:
            rows.append(f"    ... {len(self.groups) - 20} more groups (to_frame() lists all),")
        o = self.overall
        return "\n".join(
            [f"GroupResult(measure={self.measure!r}, method={self.method!r}, "
             f"design={self.design!r}, level={self.level:g},", *rows,
             f"    overall: {_value(o):.4f} [{o.ci[0]:.4f}, {o.ci[1]:.4f}],",
             f"    n_labels={self.n_labels}, n_draws={self.n_draws}, cost={self.cost:g}, "
             f"budget={self.budget:g})"]
        )  # fmt: skip


# ------------------------------------------------------------------------ groups
def expected_labels(
    q: NDArray[np.float64], codes: NDArray[np.intp], n_groups: int, n_draws: int
) -> NDArray[np.float64]:
    """The distinct instances of each group that ``n_draws`` i.i.d. draws from ``q`` label
    in expectation, Σ_(x in k) 1 − (1 − q(x))^n."""
    hit = -np.expm1(n_draws * np.log1p(-np.minimum(q, 1.0 - 1e-16)))
    return np.bincount(codes, weights=hit, minlength=n_groups).astype(np.float64)


def _value(res: Any) -> float:
    """A result's value: an evaluation's estimate, a comparison's difference."""
    return float(res.difference if isinstance(res, ComparisonResult) else res.estimate)


def additive(meas: Measure) -> bool:
    """Whether the measure is a mean over instances, so the groups' values weighted by their
    shares add up to the pool's."""
    if isinstance(meas, ProbabilityMeasure):
        return isinstance(meas, _ScoringRule)
    return not isinstance(meas, ClasswiseMeasure) and meas.regular


def post_stratified(
    overall: EvaluationResult,
    per_group: list[EvaluationResult],
    shares: NDArray[np.float64],
    meas: Measure,
) -> EvaluationResult:
    """The post-stratified overall estimate Σ_k P_k Ĝ_k with variance Σ_k P_k² se_k² (the
    groups' influence terms live on disjoint instances, so they are uncorrelated); where the
    overall result's interval is the tempered one, its score curve is kept and joined at
    the post-stratified estimate."""
    g = float(shares @ np.array([r.estimate for r in per_group]))
    se = math.sqrt(float(shares**2 @ np.array([r.stderr for r in per_group]) ** 2))
    inf = overall.inference
    binary = bool(getattr(meas, "binary_loss", False))
    census = all(r.inference is not None and r.inference.census for r in per_group)
    score = inf.score if inf is not None and overall.interval == "tempered" else None
    est = Estimate(
        g, se, overall.n_draws, overall.n_labels,
        inf.effective_n if inf is not None else math.nan, binary, overall.level, meas.name,
        census=census, score=score,
    )  # fmt: skip
    interval = "tempered" if score is not None else ("logit" if binary else "wald")
    ci = est.confidence_interval(overall.level, interval)
    low, high = overall.value_range
    return replace(
        overall, estimate=min(max(g, low), high), stderr=se,
        ci=(max(ci[0], low), min(ci[1], high)), inference=est, interval=interval,
        anytime_terms=None,
    )  # fmt: skip


def _census_rows(
    seq: dict[str, Any], draws: NDArray[np.intp], exact: float, alternative: str
) -> dict[str, Any]:
    """A confidence sequence whose campaign labeled every unit that counts: from the draw
    that labeled the last new unit on, the labeled units are the final ones, so the value is
    known exactly (``exact``) and each bound the alternative reports collapses onto it (the
    rows before are unchanged, and so is the sequence's time-uniform coverage)."""
    last = int(np.unique(draws, return_index=True)[1].max()) + 1  # draws, counted from 1
    at = np.asarray(seq["t"]) >= last
    out = {key: np.array(value, copy=True) for key, value in seq.items()}
    out["estimate"] = np.where(at, exact, out["estimate"])
    if alternative in ("two-sided", "greater"):
        out["lower"] = np.where(at, exact, out["lower"])
    if alternative in ("two-sided", "less"):
        out["upper"] = np.where(at, exact, out["upper"])
    return out
