"""Planning a labeling budget before the first label, and re-planning from the labels so far.

``plan`` evaluates the variance of the chosen estimator under the chosen sampling
distribution as a pool-level formula of the model's predictive distribution (the objective
q* minimizes, Thm 4.1, eq. 4.6), at any budget and for passive sampling beside it, and
inverts it: the budget for a target interval width or, for a pair of models, for a test's
power. ``Plan.replan`` re-predicts from a result on the labels so far.

The derivation (the Poisson embedding of Algorithm 2, the model-assisted and thesis
estimators' variance at n labels, pairs, costs, ranked pools), the approximations and their
measured cost, the width and the re-plan are on the *Planning a budget* page of the
documentation (``docs/how-it-works/planning.md``); measured accuracy in
``docs/results/planning.md``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._validation import (
    check_costs,
    check_level,
    check_option,
    check_safeguards,
    decisions_per_model,
    real_number,
)
from ._validation import pool_distribution as _pool_distribution
from .errors import ActiveEvalWarning, BudgetError, ShapeError, UnknownOptionError
from .estimators.assisted import _conditional_variance
from .estimators.inference import _box_least_squares, _wald_interval, logit_interval
from .measures import (
    ClasswiseMeasure,
    Measure,
    _influences,
    as_categorical,
    check_fits,
    decision_index,
    get_measure,
    intrinsic,
    model_counts,
)
from .methods import (
    ALTERNATIVES,
    COMPARISON_METHODS,
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    ESTIMATORS,
    RANKING_METHODS,
    SAMPLING_METHODS,
)
from .predictive import (
    Categorical,
    Gaussian,
    Mixture,
    Predictive,
    as_predictive,
    decided,
    recalibrate,
)
from .probability_measures import ProbabilityMeasure, _ScoringRule
from .ranking import (
    GradedRelevance,
    get_ranking_measure,
    ranking_difference_expectation,
    ranking_difference_moment,
    ranking_distribution,
    ranking_expectation,
    ranking_pair_values,
    ranking_query_costs,
    ranking_second_moment,
    ranking_values,
)
from .results import ComparisonResult, EvaluationResult
from .sampling import _time_to_reach, comparison_distribution, sampling_distribution

__all__ = ["Plan", "plan"]

_ANY = (-math.inf, math.inf)

#: A predicted variance below this is reported as 0: a census of every instance that can
#: move the estimate, up to exp(−q t) of the rest (standard errors below 1e-10).
_NEGLIGIBLE = 1e-20

#: Default budgets (labels): doublings from 50, up to the pool.
_GRID = (50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400)


# ------------------------------------------------------------------------------- the curve
@dataclass(frozen=True, eq=False)
class _Curve:
    """V as a function of the Poisson time t of one sampling distribution
    (``docs/how-it-works/planning.md``).

    ``p`` pool distribution, ``q`` sampling distribution, ``e`` and ``s`` the per-instance
    mean and variance of the linearized term z (already divided by D), ``price`` the cost of
    each instance (ones without costs), ``scale`` the re-planning factor on V."""

    q: NDArray[np.float64]
    p: NDArray[np.float64]
    e: NDArray[np.float64]
    s: NDArray[np.float64]
    price: NDArray[np.float64]
    scale: float = 1.0
    #: The model-assisted estimator's finite-population form (distinct labeled instances);
    #: False: the thesis estimator's with-replacement form (every draw a term).
    finite: bool = True
    #: After a re-plan: (pool indices of the labeled units, their 1/π at the labels so far,
    #: p² times their centred squared residuals) — V at time t is then their Horvitz–Thompson
    #: extrapolation (:meth:`Plan.replan`).
    sample: tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]] | None = None

    @property
    def support(self) -> NDArray[np.bool_]:
        return self.q > 0

    def spent(self, t: float) -> tuple[float, float]:
        """(expected distinct labels, expected cost) at time t."""
        if math.isinf(t):
            on = self.support
            return float(on.sum()), float(self.price[on].sum())
        pi = -np.expm1(-self.q * t)
        return float(pi.sum()), float(self.price @ pi)

    def variance(self, t: float) -> float:
        """The estimator's variance at time t, expected over labels from the model (module
        docstring): Hájek's for the finite-population form (``finite``), else the
        with-replacement one over the t expected draws; 0 at the census t = inf."""
        if math.isinf(t) or t <= 0:
            return 0.0 if math.isinf(t) else math.inf
        if self.sample is not None:
            units, inv_pi, pr2 = self.sample
            qu = self.q[units]
            if self.finite:
                shape = np.exp(-qu * t) / -np.expm1(-qu * t)
            else:
                shape = 1.0 / (qu * t)
            return self.scale * float(np.sum(inv_pi * shape * pr2))
        on = self.support
        q, p, e, s = self.q[on], self.p[on], self.e[on], self.s[on]
        if not self.finite:  # Lemma 3.4 over t draws: Σ p² E[z²] / q, and Σ p e = 0
            return self.scale * float(np.sum(p * p * (e * e + s) / q)) / t
        pi = -np.expm1(-q * t)
        keep = pi > 0
        if not keep.any():
            return math.inf
        c = np.exp(-q[keep] * t)  # 1 − π, accurate where π is near 1
        v = self.scale * float(np.sum(c / pi[keep] * p[keep] ** 2 * s[keep]))
        return v if v > _NEGLIGIBLE else 0.0

    def dominated_by(self, t: float, share: float = 0.5, rare: float = 0.1) -> int | None:
        """The number of instances that carry ``share`` of the variance's first term at time
        t, if they are so few that a campaign draws none of them with probability at least
        1 − ``rare`` (Σ π < rare); else None."""
        if math.isinf(t) or t <= 0:
            return None
        on = self.support
        pi = -np.expm1(-self.q[on] * t)
        moment = self.s[on] + self.e[on] ** 2
        part = np.exp(-self.q[on] * t) / np.maximum(pi, 1e-300) * self.p[on] ** 2 * moment
        total = float(part.sum())
        if not total > 0:
            return None
        order = np.argsort(part)[::-1]
        k = int(np.searchsorted(np.cumsum(part[order]), share * total)) + 1
        return k if float(pi[order[:k]].sum()) < rare else None

    def time_for(self, budget: float, cost_sensitive: bool) -> float:
        """The t at which the expected distinct labels (or their cost) reach ``budget``
        (:func:`~activeeval.sampling.successive_time`'s Newton iteration); inf when the budget
        covers every instance q can draw (a census)."""
        on = self.support
        q = self.q[on]
        c = self.price[on] if cost_sensitive else np.ones(q.shape[0])
        if budget >= float(c.sum()) * (1 - 1e-12):
            return math.inf
        return _time_to_reach(q, budget, c if cost_sensitive else None)


@dataclass(frozen=True, eq=False)
class _Larger:
    """A re-planned curve: the larger of the curves' variances at every t — the model's
    shape and the labels' shape, each rescaled to the standard error at the labels so far
    (:meth:`Plan.replan`). Labels and costs follow the first."""

    parts: list[_Curve]
    base: _Curve  # the model's own curve, which a further re-plan starts from

    @property
    def q(self) -> NDArray[np.float64]:
        return self.parts[0].q

    @property
    def p(self) -> NDArray[np.float64]:
        return self.parts[0].p

    @property
    def scale(self) -> float:
        return 1.0

    def spent(self, t: float) -> tuple[float, float]:
        return self.parts[0].spent(t)

    def time_for(self, budget: float, cost_sensitive: bool) -> float:
        return self.parts[0].time_for(budget, cost_sensitive)

    def variance(self, t: float) -> float:
        return max(c.variance(t) for c in self.parts)


# ------------------------------------------------------------------------------- the plan
@dataclass(frozen=True, eq=False)
class Plan:
    """Predicted standard error and interval width against the labeling budget.

    The prediction for one model's measure (or a pair's difference), for the planned sampling
    method and for passive sampling beside it, and the budget that reaches a target width
    or (with ``effect``) a test's power. Made by [plan][activeeval.plan]; ``print(plan)``
    shows the table. The derivation is on the *Planning a budget* page of the documentation
    (``docs/how-it-works/planning.md``).

    Attributes
    ----------
    kind : {"evaluation", "comparison"}
        One model's measure, or the difference between two models.
    measure : str
        The measure's name.
    method : str
        The sampling method planned (``"passive"`` is always planned beside it).
    estimator : {"assisted", "snis"}
        The estimator whose variance is predicted.
    level : float
        Confidence level of the widths (two-sided intervals) and of the tests.
    value : float
        The model-expected value of the measure (the intrinsic value, eq. 4.21), or of the
        difference Δ = G(model 0) − G(model 1) under the models' mixture; after
        ``replan``, the result's estimate.
    budgets : ndarray
        The budgets of ``table`` (labels, or cost units with costs).
    cost_sensitive : bool
        Whether budgets are cost budgets (the plan was given ``costs``).
    target_width : float or None
        The interval width the ``needed`` budgets reach.
    effect : float or None
        The true value of the difference (or of the measure) the test should detect.
    power : float
        The power wanted for ``effect``.
    alternative : {"two-sided", "less", "greater"}
        The side of the test (scipy's convention).
    null : float
        The null value of the test.
    labels_so_far : int or None
        Set by ``replan``: the labels the re-plan rests on.
    needed : dict
        ``{method: budget, "passive": budget}`` reaching ``target_width`` and, with
        ``effect``, the power (None for a power no budget reaches); empty when neither was
        asked for.
    unit : str
        What a budget counts without costs: ``"labels"``, or ``"queries"`` for a ranked
        pool.

    See Also
    --------
    plan : Make the plan of a model or of a pair.
    evaluate : Run the campaign; its result re-plans with ``Plan.replan``.
    compare : Run a pair's campaign.
    activeeval.claims.Claim : A release claim, checked on a result's one-sided bound.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.beta(8, 1, size=1000)
    >>> proba = np.column_stack([p1, 1 - p1])
    >>> pl = ae.plan(proba, "error_rate", target_width=0.05)
    >>> print(pl)
    plan: evaluation of error_rate, method active, estimator assisted; ...
       labels        se active       width active       se passive      width passive
           50          0.03793             0.1542          0.04098             0.1675
    ...
    needed for width ≤ 0.05 (±0.025):
            active: 309 labels
           passive: 355 labels
      active needs 87% of passive's budget
    >>> print(f"{pl.width(200):.3f} {pl.width(200, which='passive'):.3f}")
    0.068 0.074
    """

    kind: str
    measure: str
    method: str
    estimator: str
    level: float
    value: float
    budgets: NDArray[np.float64]
    cost_sensitive: bool
    target_width: float | None
    effect: float | None
    power: float
    alternative: str
    null: float
    labels_so_far: int | None
    _curves: dict[str, _Curve | _Larger] = field(repr=False)
    _binary: bool = field(repr=False, default=False)
    _value_range: tuple[float, float] = field(repr=False, default=(-math.inf, math.inf))
    _residual: Any = field(repr=False, default=None)
    needed: dict[str, float | None] = field(default_factory=dict)
    unit: str = "labels"

    # ------------------------------------------------------------------ per budget
    @property
    def methods(self) -> tuple[str, ...]:
        """The sampling methods planned: ``method`` and ``"passive"``."""
        return tuple(self._curves)

    def _curve(self, which: str | None) -> _Curve | _Larger:
        key = self.method if which is None else which
        if key not in self._curves:
            raise UnknownOptionError(f"which: this plan has {list(self._curves)}, not {key!r}.")
        return self._curves[key]

    def labels(self, budget: float, which: str | None = None) -> float:
        """Expected number of distinct labels a budget buys.

        Parameters
        ----------
        budget : float
            Labels, or cost units when the plan has costs.
        which : str, optional
            The sampling method: the planned ``method`` (default) or ``"passive"``.

        Returns
        -------
        float
            The expected distinct labels; ``budget`` itself without costs.
        """
        c = self._curve(which)
        return c.spent(c.time_for(_budget(budget), self.cost_sensitive))[0]

    def stderr(self, budget: float, which: str | None = None) -> float:
        """Predicted standard error of the estimate at a budget.

        Parameters
        ----------
        budget : float
            Labels, or cost units when the plan has costs.
        which : str, optional
            The sampling method: the planned ``method`` (default) or ``"passive"``.

        Returns
        -------
        float
            The root-mean-square standard error over campaigns of that budget.

        Raises
        ------
        BudgetError
            A negative or non-finite budget.
        UnknownOptionError
            A ``which`` that is not one of ``methods``.
        """
        c = self._curve(which)
        return math.sqrt(c.variance(c.time_for(_budget(budget), self.cost_sensitive)))

    def width(self, budget: float, which: str | None = None) -> float:
        """Predicted width of the two-sided interval at ``level``.

        The design-based interval (logit for the model-assisted estimator of a measure in
        [0, 1], else Wald clipped to the measure's range) at the predicted standard error,
        centred on ``value``.

        Parameters
        ----------
        budget : float
            Labels, or cost units when the plan has costs.
        which : str, optional
            The sampling method: the planned ``method`` (default) or ``"passive"``.

        Returns
        -------
        float
            The interval's width (upper minus lower bound).
        """
        return self._width(self.stderr(budget, which))

    def power_at(self, budget: float, which: str | None = None) -> float:
        """Predicted power of the level-α Wald test of ``null`` against ``alternative``.

        The probability that the test rejects when the true value is ``effect``.

        Parameters
        ----------
        budget : float
            Labels, or cost units when the plan has costs.
        which : str, optional
            The sampling method: the planned ``method`` (default) or ``"passive"``.

        Returns
        -------
        float
            The power, in [0, 1].

        Raises
        ------
        UnknownOptionError
            The plan was made without ``effect``.
        """
        if self.effect is None:
            raise UnknownOptionError("effect: this plan has no effect to detect; pass effect=.")
        return _power(self.effect - self.null, self.stderr(budget, which), self.level,
                      self.alternative)  # fmt: skip

    def _width(self, se: float) -> float:
        """Width of the design-based interval at standard error ``se``, centred on
        :attr:`value`: the logit interval, else Wald clipped to the measure's range. The
        default reports it joined with the tempered-model score interval, wider where few
        labels cannot tell a right model from a wrong one (``docs/how-it-works/planning.md``,
        Width)."""
        g = self.value
        if not math.isfinite(se):
            return math.inf
        if self._binary and 0.0 < g < 1.0:
            low, high = logit_interval(g, se, self.level)
            return float(high - low)
        lo, hi = _wald_interval(g, se, self.level)
        return min(hi, self._value_range[1]) - max(lo, self._value_range[0])

    # ------------------------------------------------------------------ inversions
    def budget_for(
        self,
        target_width: float | None = None,
        *,
        effect: float | None = None,
        power: float | None = None,
        which: str | None = None,
    ) -> float | None:
        """The smallest budget that reaches a target width and (with ``effect``) a power.

        Labels are rounded up to an integer (at least one); a cost budget is the expected
        cost of those labels. A census (every instance q can draw) reaches any width, so the
        budget never exceeds it.

        Parameters
        ----------
        target_width : float, optional
            Width of the two-sided interval wanted; default the plan's ``target_width``.
        effect : float, optional
            The true value of the difference (or of the measure) the test should detect;
            default the plan's ``effect``.
        power : float, optional
            The power wanted, in (0, 1); default the plan's ``power``.
        which : str, optional
            The sampling method: the planned ``method`` (default) or ``"passive"``.

        Returns
        -------
        float or None
            The budget (labels, or cost units with costs); None when not even a census
            reaches the power (an ``effect`` equal to ``null``).

        Raises
        ------
        UnknownOptionError
            Neither a target width nor an effect, here or in the plan.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> rng = np.random.default_rng(0)
        >>> p1 = rng.beta(8, 1, size=1000)
        >>> pl = ae.plan(np.column_stack([p1, 1 - p1]), "error_rate")
        >>> pl.budget_for(0.05), pl.budget_for(0.05, which="passive")
        (309.0, 355.0)
        """
        width = (
            self.target_width if target_width is None else _positive(target_width, "target_width")
        )
        eff = self.effect if effect is None else _finite(effect, "effect")
        pw = self.power if power is None else _unit(power, "power")
        if width is None and eff is None:
            raise UnknownOptionError(
                "target_width: give target_width= (an interval width) or effect= (a "
                "difference to detect) to compute a budget."
            )
        c = self._curve(which)

        def ok(t: float) -> bool:
            se = math.sqrt(c.variance(t))
            good = True
            if width is not None:
                good &= self._width(se) <= width
            if eff is not None:
                good &= _power(eff - self.null, se, self.level, self.alternative) >= pw
            return good

        n_all, cost_all = c.spent(math.inf)
        if not ok(math.inf):
            return None  # not even a census: a power that no amount of labels gives
        t_hi = c.time_for(n_all - 0.5, False)  # half a label short of a census
        if not ok(t_hi):
            return cost_all if self.cost_sensitive else n_all
        lo, hi = 0.0, t_hi
        t = 1.0 / float(c.q.max())
        while not ok(t) and t < t_hi:  # bracket geometrically, then bisect
            lo, t = t, min(2 * t, t_hi)
        hi = t
        for _ in range(200):
            if hi - lo <= 1e-9 * hi:
                break
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        n = max(math.ceil(c.spent(hi)[0] - 1e-9), 1)
        if not self.cost_sensitive:
            return float(n)
        return c.spent(c.time_for(n, False))[1]

    # ------------------------------------------------------------------ re-planning
    def replan(self, result: EvaluationResult | ComparisonResult) -> Plan:
        """The plan re-predicted from a result on the labels so far.

        The model's own prediction trusts its probabilities; the labels say how large the
        residuals really are. The re-plan takes, at every budget, the larger of two curves
        rescaled to the result's standard error at the labels so far: the model
        recalibrated on the labels, and the labels' own Horvitz–Thompson extrapolation
        (derivation: ``docs/how-it-works/planning.md``, Re-planning). The plan's value
        becomes the result's estimate; passive's line stays the model's prediction.

        Parameters
        ----------
        result : EvaluationResult or ComparisonResult
            A result of [evaluate][activeeval.evaluate], [compare][activeeval.compare] or a
            session, drawn from this plan's sampling distribution with the same predictions
            and measure.

        Returns
        -------
        Plan
            The re-planned plan, with ``labels_so_far`` set and ``needed`` recomputed.

        Raises
        ------
        UnknownOptionError
            A result of another kind or measure than the plan's.
        ShapeError
            Draws that do not come from the plan's sampling distribution.
        BudgetError
            No labels, or no finite estimate yet.

        Warns
        -----
        ActiveEvalWarning
            The labels cannot re-plan (standard error 0, e.g. no error among them, or a
            census): the plan keeps the model's curve and value.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> rng = np.random.default_rng(0)
        >>> p = rng.beta(8, 1, size=1000)  # the true P(y = 0 | x)
        >>> y = (rng.uniform(size=1000) > p).astype(int)
        >>> sharp = 1 / (1 + ((1 - p) / p) ** 2)  # an overconfident model: logits doubled
        >>> proba = np.column_stack([sharp, 1 - sharp])
        >>> pl = ae.plan(proba, "error_rate", target_width=0.05)
        >>> res = ae.evaluate(proba, lambda idx: y[idx], "error_rate", budget=60,
        ...                   random_state=0)
        >>> pl.needed["active"], pl.replan(res).needed["active"]
        (99.0, 283.0)
        """
        if isinstance(result, ComparisonResult) != (self.kind == "comparison"):
            raise UnknownOptionError(
                f"result: a {type(result).__name__} cannot re-plan the plan of "
                f"{'a comparison' if self.kind == 'comparison' else 'an evaluation'}."
            )
        if getattr(result, "measure", self.measure) != self.measure:
            raise UnknownOptionError(
                f"result: estimates {result.measure}, this plan {self.measure}; re-plan with "
                "the plan of the measure the result reports."
            )
        value = result.difference if isinstance(result, ComparisonResult) else result.estimate
        se = float(result.stderr)
        if not (math.isfinite(value) and math.isfinite(se) and se >= 0):
            raise BudgetError(
                "result: no finite estimate and standard error yet (too few labels); label "
                "more before re-planning."
            )
        cur = self._curves[self.method]
        c = cur.base if isinstance(cur, _Larger) else cur
        idx = np.asarray(result.indices, dtype=np.intp)
        if idx.size == 0:
            raise BudgetError("result: no labels yet; label some before re-planning.")
        drawn_q = getattr(result, "q", None)
        if (
            idx.max() >= c.q.shape[0]
            or np.any(c.q[idx] <= 0)
            or (drawn_q is not None and not np.allclose(drawn_q, c.q[idx], rtol=1e-9, atol=0))
        ):
            raise ShapeError(
                f"result: its draws do not come from this plan's sampling distribution "
                f"({self.method}: a result of another method, a batch-adaptive campaign or "
                "other predictions); re-plan with the plan of the predictions and method the "
                "labels were drawn with."
            )
        units, first = np.unique(idx, return_index=True)
        t_now = c.time_for(float(units.size), False)
        model = replace(c, sample=None, scale=1.0)
        parts: list[_Curve] = []
        if math.isinf(t_now):
            why = "they cover every instance q can draw (a census: the estimate is exact)"
        elif se == 0:
            why = "their standard error is 0 (e.g. no error among them)"
        else:
            pi = -np.expm1(-c.q[units] * t_now)
            v = c.p[units] / pi
            r = self._residual(units, first, result, v)
            rc = r - float(v @ r) / float(v.sum())
            sample = replace(model, sample=(units, 1.0 / pi, c.p[units] ** 2 * rc * rc))
            e, s = self._residual.recalibrated_terms(units, first, result, v, c.p)
            for curve in (replace(model, e=e, s=s), sample):
                now = curve.variance(t_now)
                if now > 0:
                    parts.append(replace(curve, scale=se * se / now))
            why = "neither the recalibrated model nor the labels show any variance"
        if not parts:
            warnings.warn(
                f"result: the labels so far cannot re-plan: {why}; the plan keeps the "
                "model's curve and value.",
                ActiveEvalWarning,
                stacklevel=2,
            )
            parts, value = [model], self.value
        curves = dict(self._curves)
        curves[self.method] = _Larger(parts, model)
        out = replace(self, value=float(value), labels_so_far=int(units.size),
                      _curves=curves, needed={})  # fmt: skip
        return replace(out, needed=out._needed())

    def _needed(self) -> dict[str, float | None]:
        if self.target_width is None and self.effect is None:
            return {}
        return {k: self.budget_for(which=k) for k in self._curves}

    # ------------------------------------------------------------------ output
    @property
    def table(self) -> Any:
        """A pandas DataFrame, one row per budget: expected labels, standard error and
        interval width for each method (and the power with ``effect``)."""
        import pandas as pd

        rows = []
        for b in self.budgets:
            row: dict[str, float] = {"budget": float(b)}
            for k in self._curves:
                row[f"labels_{k}"] = round(self.labels(b, k), 6)
                se = self.stderr(b, k)
                row[f"stderr_{k}"] = se
                row[f"width_{k}"] = self._width(se)
                if self.effect is not None:
                    row[f"power_{k}"] = _power(self.effect - self.null, se, self.level,
                                               self.alternative)  # fmt: skip
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def saving(self) -> float | None:
        """Passive's needed budget ÷ the planned method's (None without a target)."""
        a, b = self.needed.get(self.method), self.needed.get("passive")
        if a is None or b is None or self.method == "passive" or a <= 0:
            return None
        return b / a

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain Python values, ready for ``json.dumps``.

        Returns
        -------
        dict
            The settings (``kind``, ``measure``, ``method``, ``level``, ...), the table's
            rows under ``"rows"``, ``"needed"`` and ``"saving"``.
        """
        return {
            "kind": self.kind,
            "measure": self.measure,
            "method": self.method,
            "estimator": self.estimator,
            "level": self.level,
            "value": self.value,
            "cost_sensitive": self.cost_sensitive,
            "target_width": self.target_width,
            "effect": self.effect,
            "power": self.power if self.effect is not None else None,
            "alternative": self.alternative if self.effect is not None else None,
            "null": self.null if self.effect is not None else None,
            "labels_so_far": self.labels_so_far,
            "rows": self.table.to_dict(orient="records"),
            "needed": self.needed,
            "saving": self.saving,
        }

    def __str__(self) -> str:
        unit = "cost" if self.cost_sensitive else self.unit
        what = self.measure if self.kind == "evaluation" else f"Δ {self.measure} (0 − 1)"
        pos = getattr(getattr(self._residual, "meas", None), "pos_label", None)
        pos_text = "" if pos is None else f" (positive class {pos!r})"
        head = (
            f"plan: {self.kind} of {self.measure}{pos_text}, method {self.method}, estimator "
            f"{self.estimator}; model-expected {what} = {self.value:.4g}; widths of "
            f"{self.level:.0%} intervals"
        )
        if self.labels_so_far is not None:
            head += (
                f"\n  re-planned from {self.labels_so_far} labels (the {self.method} line; "
                "passive's standard error stays the model's prediction)"
            )
        cols = [f"{unit:>9}"]
        for k in self._curves:
            cols += [f"{'se ' + k:>16}", f"{'width ' + k:>18}"]
            if self.effect is not None:
                cols.append(f"{'power ' + k:>14}")
        lines = [head, " ".join(cols)]
        for r in self.table.to_dict(orient="records"):
            cells = [f"{r['budget']:>9g}"]
            for k in self._curves:
                cells += [f"{r[f'stderr_{k}']:>16.4g}", f"{r[f'width_{k}']:>18.4g}"]
                if self.effect is not None:
                    cells.append(f"{r[f'power_{k}']:>14.3f}")
            lines.append(" ".join(cells))
        lines.extend(self._needed_text())
        return "\n".join(lines)

    def _needed_text(self) -> list[str]:
        if not self.needed:
            return []
        goal = []
        if self.target_width is not None:
            goal.append(f"width ≤ {self.target_width:g} (±{self.target_width / 2:g})")
        if self.effect is not None:
            side = {"two-sided": "≠", "less": "<", "greater": ">"}[self.alternative]
            q = "Δ" if self.kind == "comparison" else self.measure
            goal.append(
                f"power {self.power:.0%} for H1: {q} {side} {self.null:g} when "
                f"{q} = {self.effect:g}"
            )
        unit = "cost units" if self.cost_sensitive else self.unit
        out = ["needed for " + " and ".join(goal) + ":"]
        for k, b in self.needed.items():
            if b is None:
                out.append(f"  {k:>12}: not reachable (no budget gives that power)")
                continue
            more = ""
            if self.labels_so_far is not None and k == self.method and not self.cost_sensitive:
                left = math.ceil(b) - self.labels_so_far
                more = f" (about {left:g} more)" if left > 0 else " (already reached)"
            out.append(f"  {k:>12}: {b:g} {unit}{more}")
        if self.saving is not None:
            out.append(f"  {self.method} needs {1 / self.saving:.0%} of passive's budget")
        return out

    def plot(self, ax: Any = None) -> Any:
        """Draw the predicted interval width against the budget, one line per method.

        Log-log axes; the target width, if any, as a dashed horizontal line.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure's.

        Returns
        -------
        matplotlib Axes
            The Axes drawn on.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6.4, 4.0))
        hi = float(self.budgets.max())
        grid = np.unique(np.geomspace(max(float(self.budgets.min()), 1.0), hi, 60))
        for k in self._curves:
            ax.plot(grid, [self.width(b, k) for b in grid], label=k, marker="")
        if self.target_width is not None:
            ax.axhline(self.target_width, color="0.4", lw=0.8, ls="--", label="target width")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("labeling cost" if self.cost_sensitive else self.unit)
        what = self.measure if self.kind == "evaluation" else f"difference in {self.measure}"
        ax.set_ylabel(f"width of the {self.level:.0%} interval")
        ax.set_title(f"predicted: {what}, {self.estimator} estimator", fontsize="medium")
        ax.legend(loc="best")
        return ax


# ------------------------------------------------------------------------------- helpers
def _budget(value: Any) -> float:
    b = real_number(value)  # NaN for what is not a real number: refused below, by name
    if not (math.isfinite(b) and b >= 0):
        raise BudgetError(f"budget: must be a finite non-negative number, got {value!r}.")
    return b


def _positive(value: Any, name: str) -> float:
    x = real_number(value)
    if not (math.isfinite(x) and x > 0):
        raise ShapeError(f"{name}: must be a finite positive number, got {value!r}.")
    return x


def _unit(value: Any, name: str) -> float:
    x = real_number(value)
    if not 0.0 < x < 1.0:
        raise ShapeError(f"{name}: must lie strictly between 0 and 1, got {value!r}.")
    return x


def _finite(value: Any, name: str) -> float:
    x = real_number(value)
    if not math.isfinite(x):
        raise ShapeError(f"{name}: must be a finite number, got {value!r}.")
    return x


def _power(shift: float, se: float, level: float, alternative: str) -> float:
    """Power of the level-α Wald test (eq. 3.23–3.24) when the estimate is normal around
    null + ``shift`` with standard error ``se``."""
    alpha = 1.0 - level
    if not math.isfinite(se):
        return alpha
    if se <= 0:
        if alternative == "less":
            return 1.0 if shift < 0 else 0.0
        if alternative == "greater":
            return 1.0 if shift > 0 else 0.0
        return 1.0 if shift != 0 else 0.0
    d = shift / se
    if alternative == "less":
        return float(special.ndtr(-d + special.ndtri(alpha)))  # Φ(−d − z_α)
    if alternative == "greater":
        return float(special.ndtr(d + special.ndtri(alpha)))  # Φ(d − z_α)
    z = -special.ndtri(alpha / 2)
    return float(special.ndtr(d - z) + special.ndtr(-d - z))


def _single_terms(
    pred: Predictive, meas: Measure, p: NDArray[np.float64], assisted: bool,
    f: NDArray[Any] | None = None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(G, e, s) of one model (``docs/how-it-works/planning.md``), e and s divided by D
    (resp. D²); ``f`` the model's predictions if ``pred`` is another distribution (a
    recalibrated one)."""
    f = pred.point_prediction() if f is None else f
    m_n, m_d = meas.conditional_expectations(pred, f)
    d = float(p @ m_d)
    if not d > 0:
        raise ShapeError(
            f"measure: {meas.name} is undefined under the model (its expected weight on the "
            "pool is zero, e.g. precision of a model that never predicts the positive class); "
            "there is nothing to plan."
        )
    g = float(p @ m_n) / d  # eq. 4.21
    var = _conditional_variance(pred, meas, g, f)[0]  # E[w²(ℓ − G)² | x] − e², eq. 4.6
    e = np.zeros(m_n.shape[0]) if assisted else (m_n - g * m_d) / d
    return g, e, var / (d * d)


def _scoring_terms(
    beliefs: NDArray[np.float64], proba: NDArray[np.float64], meas: _ScoringRule,
    p: NDArray[np.float64], assisted: bool,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(G, e, s) of a mean of per-instance losses of the model's probabilities ``proba``
    (Brier score, log loss) with labels drawn from ``beliefs`` r (the model's own, or its
    recalibration): w ≡ 1, D = 1, z = ℓ − G, s = Var[ℓ | x] (eq. 4.6 for a regular risk),
    e = E[z | x] = Σ_k r_k L(p̂, k) − G; for the model-assisted estimator (λ = 1) z less its
    control variate, the model's own expected loss m(x) = Σ_k p̂_k L(p̂, k) about its pool
    mean, so e = (E_r[ℓ | x] − m(x)) − (G − Σ p m): 0 when r is the model."""
    loss = meas.loss_matrix(proba)
    mean = np.einsum("ik,ik->i", beliefs, loss)
    g = float(p @ mean)
    s = np.maximum(np.einsum("ik,ik->i", beliefs, loss * loss) - mean * mean, 0.0)
    if not assisted:
        return g, mean - g, s
    own = np.einsum("ik,ik->i", proba, loss)
    return g, (mean - own) - (g - float(p @ own)), s


def _ranked_terms(
    rels: list[GradedRelevance], meas: Any, p: NDArray[np.float64], assisted: bool
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(value, E[z | x] before centring, e, s) of a ranker (regular risk: w ≡ 1, D = 1) or a
    pair of rankers under the per-item mixture (eq. 6.10, 6.11; App. A.1's dynamic programs
    for the moments)."""
    if len(rels) == 1:
        mean = ranking_expectation(rels[0], meas)
        g = float(p @ mean)
        second = ranking_second_moment(rels[0], meas, g)
    else:
        mean = ranking_difference_expectation(rels[0], rels[1], meas)
        g = float(p @ mean)
        second = ranking_difference_moment(rels[0], rels[1], meas, g)
    first = mean - g
    s = np.maximum(second - first * first, 0.0)
    return g, mean, (np.zeros_like(first) if assisted else first), s


def _classwise_terms(
    preds: list[Predictive], meas: ClasswiseMeasure, p: NDArray[np.float64], assisted: bool,
    fs: list[NDArray[Any]] | None = None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(G, e, s) of a function of several ratios, or (Δ, e, s) of a pair under the models'
    mixture: its influence ψ = ∇g·(c − S) at the counts the model expects (the planning
    page's z), e = E[ψ | x] (0 for the model-assisted estimator), s = Var[ψ | x]."""
    cats = [as_categorical(pr, meas.name) for pr in preds]
    fs = [pr.point_prediction() for pr in preds] if fs is None else fs
    proba = cats[0].proba if len(cats) == 1 else np.mean([c.proba for c in cats], axis=0)
    cols = [decision_index(cats[0], f) for f in fs]
    psi = _influences(meas, proba, cols[0], p)
    value = float(intrinsic(meas, proba, cols[0], p))
    if len(cols) == 2:
        psi = psi - _influences(meas, proba, cols[1], p)
        value -= float(intrinsic(meas, proba, cols[1], p))
    first = np.einsum("ij,ij->i", proba, psi)
    s = np.maximum(np.einsum("ij,ij,ij->i", proba, psi, psi) - first * first, 0.0)
    return value, (np.zeros_like(first) if assisted else first), s


def _pair_terms(
    preds: list[Predictive], meas: Measure, p: NDArray[np.float64], assisted: bool,
    fs: list[NDArray[Any]] | None = None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """(Δ, e, s) of ψ₀ − ψ₁ under the models' mixture (eq. 5.5, 5.11); ``fs`` as ``f`` of
    :func:`_single_terms`."""
    mixture = Mixture(preds)
    fs = [pr.point_prediction() for pr in preds] if fs is None else fs
    gs, ds, firsts = [], [], []
    for f in fs:
        m_n, m_d = meas.conditional_expectations(mixture, f)
        d = float(p @ m_d)
        if not d > 0:
            raise ShapeError(
                f"measure: {meas.name} is undefined under the models (zero expected weight "
                "on the pool); there is nothing to plan."
            )
        g = float(p @ m_n) / d
        gs.append(g)
        ds.append(d)
        firsts.append((m_n - g * m_d) / d)
    first = firsts[0] - firsts[1]
    second = meas.difference_second_moment(mixture, (fs[0], fs[1]), (gs[0], gs[1]), (ds[0], ds[1]))
    s = np.maximum(second - first * first, 0.0)
    return gs[0] - gs[1], (np.zeros_like(first) if assisted else first), s


def plan(
    predictions: Any,
    measure: Measure | str = "error_rate",
    budgets: ArrayLike | None = None,
    *,
    method: str = "active",
    estimator: str = "assisted",
    costs: ArrayLike | None = None,
    level: float = 0.95,
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alternative: str = "two-sided",
    null: float = 0.0,
    pool_weights: ArrayLike | None = None,
    pos_label: Any = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    prediction: Any = None,
) -> Plan:
    """Predict, before the first label, how the interval narrows with the labeling budget.

    The predicted standard error and interval width at each budget, for the sampling method
    planned and for passive sampling beside it, from the model's own predictive distribution;
    with ``target_width`` or ``effect``, the budget that reaches it. For a pair of models the
    prediction is of their difference. The derivation, its approximations and their measured
    cost are on the *Planning a budget* page of the documentation
    (``docs/how-it-works/planning.md``).

    Parameters
    ----------
    predictions : (m, K) array, Categorical, Gaussian, or a list of two of them
        One model's predictive distribution over the pool, or two models' for a comparison
        (as [evaluate][activeeval.evaluate] and [compare][activeeval.compare] take them);
        a ranker's ``GradedRelevance`` (or two) for a ranked pool.
    measure : Measure or str
        As ``evaluate``'s.
    budgets : array-like of float, optional
        Budgets for the table (labels, or cost units with ``costs``); default doublings
        from 50 labels (50 × mean cost with costs) up to the pool.
    method : str
        The sampling method planned (``"active"``: q* of the measure, Thm 4.1/4.2, or of the
        difference, Thm 5.1); passive sampling is always planned beside it.
    estimator : {"assisted", "snis"}
        The estimator the campaign will report.
    costs : array-like of shape (m,), optional
        Labeling cost of every pool instance; budgets are then cost budgets (Thm 4.2).
    level : float
        Confidence level of the two-sided intervals whose width is predicted, and of the
        test with ``effect``.
    target_width : float, optional
        Width of the two-sided interval wanted (0.02 for ±0.01): the plan reports the budget
        that reaches it (``Plan.needed``).
    effect : float, optional
        For the budget of a test: the true value of Δ (or of the measure) to detect. A
        non-inferiority gate "difference <= 0.005" planned for two equal models is
        ``effect=0, null=0.005, alternative="less"``.
    power : float
        The power wanted for ``effect``, in (0, 1).
    alternative : {"two-sided", "less", "greater"}
        The side of the test: ``"less"`` for H1 value < ``null``, ``"greater"`` for
        H1 value > ``null``.
    null : float
        The null value of the test.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    pos_label : label, optional
        The positive class of ``"f1"``, ``"precision"`` and ``"recall"``, as
        ``evaluate``'s.
    floor : float
        Safeguard of q*: bounds [floor, 1 − floor] on the intrinsic value for 0/1 losses; for
        a multi-class average, the share of each instance's probability spread evenly over
        the classes; 0 disables.
    mix : float
        Safeguard of q*: weight in [0, 1] of the defensive mixture with p; 0 disables.
    prediction : array-like of shape (m,), optional
        The decision f(x) the measure scores when it is not the mode or mean of
        ``predictions``, as ``evaluate``'s; for a pair, as ``compare``'s: one decision (or
        None) per model.

    Returns
    -------
    Plan
        ``print(plan)`` shows the table; ``Plan.table`` is a DataFrame, ``Plan.plot``
        draws width against budget, ``Plan.replan`` re-plans from a result.

    Raises
    ------
    UnknownOptionError
        An unknown method, estimator or alternative; a measure that does not fit the
        predictions (a classification measure for a regressor); a measure of the predicted
        probabilities that is not a mean of a loss (``ece``, ``roc_auc``,
        ``average_precision``), or a comparison of any, whose intervals plan() does not
        predict yet (``brier`` and ``log_loss`` of one model it does).
    ShapeError
        Predictions that do not cover the same pool, more than two models, two models that
        predict the same label everywhere, a power, target width or effect outside its
        range.
    InvalidLevelError
        A ``level`` outside (0, 1).
    BudgetError
        ``budgets`` that are not finite positive numbers.
    InvalidCostsError
        Costs that are not strictly positive and finite.

    Warns
    -----
    ActiveEvalWarning
        Half of the predicted variance sits on a few instances (the width is then the
        root-mean-square over campaigns, wider than a typical one), or the model is certain
        of every label (a zero-width prediction, to be re-planned from the first labels).

    See Also
    --------
    Plan : The plan: widths, budgets, re-planning.
    evaluate : Estimate one model's measure on the budget planned.
    compare : Compare two models on the budget planned.
    activeeval.sampling.optimal_distribution : q*, whose variance the plan predicts.

    Examples
    --------
    How many labels for a ±0.025 interval on one model's error rate:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.beta(8, 1, size=1000)
    >>> pl = ae.plan(np.column_stack([p1, 1 - p1]), "error_rate", target_width=0.05)
    >>> pl.needed
    {'active': 309.0, 'passive': 355.0}

    How many labels to detect a difference of 0.05 in error rate with 80% power:

    >>> a, b = rng.uniform(0.5, 1, size=1000), rng.uniform(0, 1, size=1000)
    >>> pair = [np.column_stack([a, 1 - a]), np.column_stack([b, 1 - b])]
    >>> ae.plan(pair, "error_rate", effect=0.05, power=0.8).needed
    {'active': 298.0, 'passive': 585.0}
    """
    level = check_level(level)
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    alternative = check_option(alternative, ALTERNATIVES, "alternative")
    check_safeguards(mix, floor)
    pw = _unit(power, "power")
    tw = None if target_width is None else _positive(target_width, "target_width")
    eff = None if effect is None else _finite(effect, "effect")
    null = _finite(null, "null")
    preds, meas, method, costs = _models(predictions, measure, method, pos_label, costs, prediction)
    ranked, pair = isinstance(preds[0], GradedRelevance), len(preds) > 1
    m = preds[0].n
    lam = check_costs(costs, m)
    qs: dict[str, NDArray[np.float64]] = {}
    for k in dict.fromkeys((method, "passive")):
        if ranked:
            qs[k] = ranking_distribution(
                preds if pair else preds[0], meas, costs=lam, method=k, mix=mix,
                pool_weights=pool_weights,
            )  # fmt: skip
        elif pair:
            qs[k] = comparison_distribution(
                preds, meas, method=k, costs=lam, pool_weights=pool_weights, mix=mix
            )
        else:
            qs[k] = sampling_distribution(
                k, preds[0], meas, costs=lam, pool_weights=pool_weights, floor=floor, mix=mix
            )
    budgets_arr = _budgets(budgets, m, lam)
    out = _build(
        preds, meas, qs, lam, _pool_distribution(m, pool_weights),
        method=method, estimator=estimator, level=level, budgets=budgets_arr,
        target_width=tw, effect=eff, power=pw, alternative=alternative, null=null,
    )  # fmt: skip
    _warn_if_misleading(out, float(budgets_arr.min()), lam is not None, m)
    return out


def _models(
    predictions: Any,
    measure: Any,
    method: str,
    pos_label: Any,
    costs: ArrayLike | None,
    prediction: Any = None,
) -> tuple[list[Any], Any, str, ArrayLike | None]:
    """The validated models (predictive distributions, or rankers' GradedRelevance), the
    measure bound to them, the method checked against the kind's methods, and the costs (a
    ranked pool's default: its items' summed costs, as its campaigns)."""
    ranked = isinstance(predictions, GradedRelevance) or (
        isinstance(predictions, list | tuple)
        and any(isinstance(r, GradedRelevance) for r in predictions)
    )
    pair = isinstance(predictions, list | tuple)
    if pair and len(predictions) != 2:
        raise ShapeError(
            f"predictions: plan() takes one model or a pair, got {len(predictions)} models; "
            "plan the pairs you will test one at a time."
        )
    if ranked:
        preds: list[Any] = list(predictions) if pair else [predictions]
        if not all(isinstance(r, GradedRelevance) for r in preds):
            raise ShapeError(
                "predictions: a ranker's GradedRelevance can only be planned with another "
                "ranker's, not with a classifier's or regressor's predictions."
            )
        if prediction is not None:
            raise ShapeError("prediction: a ranker's decision is its ranking; drop prediction.")
        method = check_option(method, RANKING_METHODS, "method")
        meas: Any = get_ranking_measure(measure).bind(preds[0])
        return preds, meas, method, ranking_query_costs(*preds) if costs is None else costs
    if pair:
        preds = [as_predictive(pr, f"predictions[{k}]") for k, pr in enumerate(predictions)]
        if prediction is not None:
            given = decisions_per_model(prediction, 2)  # as compare takes them
            preds = [decided(pr, f, f"prediction[{k}]")
                     for k, (pr, f) in enumerate(zip(preds, given, strict=True))]  # fmt: skip
        if preds[0].n != preds[1].n:
            raise ShapeError(
                f"predictions[1]: covers {preds[1].n} instances, predictions[0] covers "
                f"{preds[0].n}; both models must be evaluated on the same pool."
            )
        method = check_option(method, COMPARISON_METHODS, "method")
        if method == "active_neq":
            raise UnknownOptionError(
                "method: 'active_neq' identifies only the difference through a rescaling the "
                "planner does not model; plan 'active' instead."
            )
        meas = get_measure(measure, pos_label=pos_label)
        check_fits(meas, preds[0])
        meas = meas.bind(Mixture(preds))
        _probability_refusals(meas, pair, prediction)
        if np.all(preds[0].point_prediction() == preds[1].point_prediction()):
            raise ShapeError(
                "predictions: the two models predict the same label on every instance, so "
                "their difference is 0 on any labels; there is nothing to plan or to detect."
            )
    else:
        preds = [decided(as_predictive(predictions), prediction, "prediction")]
        method = check_option(method, SAMPLING_METHODS, "method")
        meas = get_measure(measure, pos_label=pos_label)
        check_fits(meas, preds[0])
        meas = meas.bind(preds[0])
        _probability_refusals(meas, pair, prediction)
    if getattr(meas, "vector", False):
        raise UnknownOptionError(
            f"measure: plan() predicts one interval, and {meas.name} has one per class; plan "
            "macro_f1, weighted_f1 or balanced_accuracy, or one class's f1 with pos_label=."
        )
    return preds, meas, method, costs


def _probability_refusals(meas: Any, pair: bool, prediction: Any) -> None:
    """Refuse, by name, what plan() does not predict of a measure of the probabilities: a
    comparison, one that is not a mean of a loss, and a decision (it scores probabilities,
    not decisions, as evaluate refuses ``prediction=`` for it)."""
    if not isinstance(meas, ProbabilityMeasure):
        return
    if prediction is not None:
        raise UnknownOptionError(
            f"prediction: {meas.name} scores the predicted probabilities, not a decision; "
            "drop prediction=."
        )
    if pair or not isinstance(meas, _ScoringRule):
        what = "a comparison of" if pair else "the interval of"
        raise UnknownOptionError(
            f"measure: plan() predicts the intervals of measures of decisions (error_rate, "
            f"f1, mse, ...) and of one model's brier or log_loss, not yet {what} {meas.name}, "
            f"a measure of the predicted probabilities. Run a pilot instead: evaluate(..., "
            f"{meas.name!r}, budget=n0) and scale its standard error by sqrt(n0 / n) for n "
            "labels."
        )


def _budgets(budgets: ArrayLike | None, m: int, lam: NDArray[np.float64] | None) -> Any:
    """The table's budgets: given (finite, positive), else doublings from 50 labels (50 ×
    the mean cost) below the pool size."""
    if budgets is None:
        unit = 1.0 if lam is None else float(np.mean(lam))
        grid = [float(f"{g * unit:.2g}") for g in _GRID if g < m]
        return np.asarray(grid or [m * unit], dtype=float)
    out = np.atleast_1d(np.asarray(budgets, dtype=float))
    if out.ndim != 1 or not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise BudgetError(f"budgets: must be finite positive numbers, got {np.asarray(budgets)!r}.")
    return out


def _warn_if_misleading(out: Plan, smallest: float, cost_sensitive: bool, m: int) -> None:
    """Warn where the plan's width would mislead: most of the variance on a few instances
    that most campaigns never draw, or a model certain of every label."""
    for k, curve in out._curves.items():
        assert isinstance(curve, _Curve)
        few = curve.dominated_by(curve.time_for(smallest, cost_sensitive))
        if few is not None:
            warnings.warn(
                f"predictions: under {k} sampling, half of the predicted variance sits on "
                f"{few} of the {m} instances (the model gives them a far larger conditional "
                "variance than the rest). The plan's width is the root-mean-square over "
                "campaigns: most campaigns, which do not draw them, report narrower "
                "intervals, the few that do far wider ones.",
                ActiveEvalWarning,
                stacklevel=3,
            )
    first = out._curves[out.method]
    t_small = first.time_for(min(10.0, 0.5 * float(np.sum(first.q > 0))), False)
    if first.variance(t_small) == 0.0:
        warnings.warn(
            "predictions: the model is certain of every label it can be asked about, so the "
            "plan predicts a zero-width interval; it cannot be trusted until a re-plan from "
            "the first labels (Plan.replan).",
            ActiveEvalWarning,
            stacklevel=3,
        )


def plan_for_q(
    predictions: Any,
    measure: Measure,
    q: ArrayLike,
    budgets: ArrayLike,
    *,
    method: str,
    estimator: str = "assisted",
    costs: ArrayLike | None = None,
    level: float = 0.95,
    target_width: float | None = None,
) -> Plan:
    """The plan of a campaign whose sampling distribution ``q`` is already fixed (a
    session's, drawn as ``method``), with passive next to it; ``measure`` bound to the
    predictions. What ``session status`` re-plans from (:meth:`Plan.replan`)."""
    pair = isinstance(predictions, list | tuple)
    preds = list(predictions) if pair else [predictions]
    if not isinstance(preds[0], GradedRelevance):
        preds = [as_predictive(x) for x in preds]
    lam = check_costs(costs, preds[0].n)
    qs = {method: np.asarray(q, dtype=float)}
    qs.setdefault("passive", _pool_distribution(preds[0].n, None))
    return _build(
        preds, measure, qs, lam, _pool_distribution(preds[0].n, None), method=method,
        estimator=check_option(estimator, ESTIMATORS, "estimator"), level=check_level(level),
        budgets=np.atleast_1d(np.asarray(budgets, dtype=float)),
        target_width=None if target_width is None else _positive(target_width, "target_width"),
    )  # fmt: skip


def _build(
    preds: list[Predictive],
    meas: Measure,
    qs: dict[str, NDArray[np.float64]],
    lam: NDArray[np.float64] | None,
    p: NDArray[np.float64],
    *,
    method: str,
    estimator: str,
    level: float,
    budgets: NDArray[np.float64],
    target_width: float | None = None,
    effect: float | None = None,
    power: float = 0.8,
    alternative: str = "two-sided",
    null: float = 0.0,
) -> Plan:
    """The plan for validated inputs and the sampling distributions ``qs`` by method (the
    first key the planned one): what :func:`plan` and a session's re-plan share."""
    pair = len(preds) > 1
    assisted = estimator == "assisted"
    residual: _Residuals | _RankedResiduals | _ClasswiseResiduals | _ScoringResiduals
    if isinstance(preds[0], GradedRelevance):
        value, mean, e, s = _ranked_terms(preds, meas, p, assisted)
        residual = _RankedResiduals(preds, meas, mean, e, s, assisted)
    elif isinstance(meas, ClasswiseMeasure):
        value, e, s = _classwise_terms(preds, meas, p, assisted)
        residual = _ClasswiseResiduals(preds, meas, p, assisted)
    elif isinstance(meas, _ScoringRule):
        cat = as_categorical(preds[0], meas.name)
        value, e, s = _scoring_terms(cat.proba, cat.proba, meas, p, assisted)
        residual = _ScoringResiduals(cat, meas, assisted)
    else:
        if pair:
            value, e, s = _pair_terms(preds, meas, p, assisted)
        else:
            value, e, s = _single_terms(preds[0], meas, p, assisted)
        residual = _Residuals(preds, meas, assisted)
    price = np.ones(p.shape[0]) if lam is None else lam
    # The finite-pool form (labeled units exact) is the model-assisted estimator's of one
    # ratio; a function of several ratios, and a mean of losses of the probabilities
    # (activeeval.estimators.probability), are estimated over the draws (with replacement).
    finite = assisted and not isinstance(meas, ClasswiseMeasure | _ScoringRule)
    curves: dict[str, _Curve | _Larger] = {
        k: _Curve(np.asarray(q, dtype=float), p, e, s, price, finite=finite) for k, q in qs.items()
    }
    binary = assisted and getattr(meas, "binary_loss", False) and not pair
    out = Plan(
        kind="comparison" if pair else "evaluation",
        measure=meas.name,
        method=method,
        estimator=estimator,
        level=level,
        value=value,
        budgets=budgets,
        cost_sensitive=lam is not None,
        target_width=target_width,
        effect=effect,
        power=power,
        alternative=alternative,
        null=null,
        labels_so_far=None,
        _curves=curves,
        _binary=binary,
        _value_range=(-math.inf, math.inf) if pair else getattr(meas, "value_range", _ANY),
        _residual=residual,
        unit="queries" if isinstance(preds[0], GradedRelevance) else "labels",
    )
    return replace(out, needed=out._needed())


class _Residuals:
    """r = z − λ̂·b at labeled units, for :meth:`Plan.replan`: z the linearized term of the
    estimate (one model: w(ℓ − Ĝ)/D̂; a pair: ψ₀ − ψ₁), b its model-expected part — one
    model's m_N − Ĝ m_D; for a pair each model's own predictive distribution's, the two
    sources of the model-assisted comparison — and λ̂ the v²-weighted least-squares
    coefficient(s) clipped to [0, 1] (0 for the thesis estimator)."""

    def __init__(self, preds: list[Predictive], meas: Measure, assisted: bool) -> None:
        self.meas, self.assisted, self.preds = meas, assisted, preds
        self.fs = [pr.point_prediction() for pr in preds]
        # conditional expectations under each source distribution, for each model's f
        self.moments = [[meas.conditional_expectations(src, f) for f in self.fs] for src in preds]

    def __call__(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64],
    ) -> NDArray[np.float64]:  # fmt: skip
        meas = self.meas
        y = np.asarray(result.labels)[first]
        if len(self.fs) == 1:
            inf = getattr(result, "inference", None)
            gs = [float(getattr(inf, "estimate", result.estimate))]
        else:
            gs = [float(g) for g in np.asarray(result.estimates)[:2]]
        z = np.zeros(units.size)
        b = np.zeros((units.size, len(self.moments)))
        sv = float(v.sum())
        for j, (f, g) in enumerate(zip(self.fs, gs, strict=False)):
            w = np.asarray(meas.weight(f[units], y), dtype=float)
            d = float(v @ w) / sv
            if not d > 0:
                d = 1.0
            sign = 1.0 if j == 0 else -1.0
            z += sign * w * (np.asarray(meas.loss(f[units], y), dtype=float) - g) / d
            for k, src in enumerate(self.moments):
                m_n, m_d = src[j]
                b[:, k] += sign * (m_n[units] - g * m_d[units]) / d
        return _regressed(z, b[:, :1] if len(self.fs) == 1 else b, v, self.assisted)

    def recalibrated_terms(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64], p: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
        """(e, s) of ``docs/how-it-works/planning.md`` under the models' distributions
        recalibrated on the labeled units (:func:`_recalibrated`), the models' predictions
        unchanged."""
        y = np.asarray(result.labels)[first]
        new = [_recalibrated(pr, units, y, v) for pr in self.preds]
        if len(new) == 1:
            _, e, s = _single_terms(new[0], self.meas, p, self.assisted, self.fs[0])
        else:
            _, e, s = _pair_terms(new, self.meas, p, self.assisted, self.fs)
        return e, s


class _ScoringResiduals:
    """:class:`_Residuals` for a mean of losses of the probabilities (Brier score, log loss):
    z = ℓ − Ĝ at the labeled units, b = e(x) − Ĝ with e the model's own expected loss (the
    estimator's control variate), λ̂ as :func:`_regressed` fits it. Their estimator counts
    every draw, so both of :meth:`Plan.replan`'s curves fall as 1/t and the re-plan is the
    standard error so far scaled by √(t_now/t) (tested)."""

    def __init__(self, pred: Categorical, meas: _ScoringRule, assisted: bool) -> None:
        self.pred, self.meas, self.assisted = pred, meas, assisted
        self.loss = meas.loss_matrix(pred.proba)
        self.expected = np.einsum("ik,ik->i", pred.proba, self.loss)

    def __call__(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64],
    ) -> NDArray[np.float64]:  # fmt: skip
        codes = self.pred.label_index(np.asarray(result.labels)[first])
        inf = getattr(result, "inference", None)
        g = float(getattr(inf, "estimate", result.estimate))
        z = self.loss[units, codes] - g
        return _regressed(z, (self.expected[units] - g)[:, None], v, self.assisted)

    def recalibrated_terms(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64], p: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
        """(e, s) with labels from the model recalibrated on the labeled units
        (:func:`_recalibrated`), the losses still of the model's probabilities."""
        y = np.asarray(result.labels)[first]
        new = _recalibrated(self.pred, units, y, v)
        assert isinstance(new, Categorical)
        _, e, s = _scoring_terms(new.proba, self.pred.proba, self.meas, p, self.assisted)
        return e, s


def _pp_part(
    meas: ClasswiseMeasure, proba: NDArray[np.float64], f: NDArray[np.intp],
    p: NDArray[np.float64],
) -> NDArray[np.float64]:  # fmt: skip
    """∂G/∂PP at the decision f(x): the predicted-positives part of the influence ψ (at the
    counts ``proba`` expects)."""
    _value, (_dtp, dpp, _dt) = meas.value_and_grad(model_counts(proba, f, p))
    return np.asarray(dpp[f], dtype=float)


class _ClasswiseResiduals:
    """:class:`_Residuals` for a function of several ratios: z = ψ(x, y) at the labeled
    units (a pair: ψ₀ − ψ₁), ψ the influence at the counts each model expects; b, per
    model's own distribution, the two control variates of the model-assisted estimator:
    the expectation of ψ's label-dependent part (TP, T) and ψ's predicted-positives part
    (PP, known from f); λ̂ as there."""

    def __init__(
        self, preds: list[Predictive], meas: ClasswiseMeasure, p: NDArray[np.float64],
        assisted: bool,
    ) -> None:  # fmt: skip
        self.meas, self.assisted, self.preds = meas, assisted, preds
        self.fs = [pr.point_prediction() for pr in preds]
        cats = [as_categorical(pr, meas.name) for pr in preds]
        self.cat = cats[0]
        cols = [decision_index(cats[0], f) for f in self.fs]
        self.psi = []  # each source's influence of the estimate (a pair: the difference)
        columns = []
        for c in cats:
            psi = _influences(meas, c.proba, cols[0], p)
            pp = _pp_part(meas, c.proba, cols[0], p)
            if len(cols) == 2:
                psi = psi - _influences(meas, c.proba, cols[1], p)
                pp = pp - _pp_part(meas, c.proba, cols[1], p)
            self.psi.append(psi)
            columns += [np.einsum("ij,ij->i", c.proba, psi) - pp, pp]
        self.b = np.column_stack(columns)

    def __call__(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64],
    ) -> NDArray[np.float64]:  # fmt: skip
        y = self.cat.label_index(np.asarray(result.labels)[first], "labels")
        z = self.psi[0][units, y]
        return _regressed(z, self.b[units], v, self.assisted)

    def recalibrated_terms(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64], p: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
        """(e, s) under the models recalibrated on the labeled units, as
        :meth:`_Residuals.recalibrated_terms`."""
        y = np.asarray(result.labels)[first]
        new = [_recalibrated(pr, units, y, v) for pr in self.preds]
        _, e, s = _classwise_terms(new, self.meas, p, self.assisted, self.fs)
        return e, s


class _RankedResiduals:
    """:class:`_Residuals` for rankers (Ch. 6): z = ℓ(r(x), y) − Ĝ per labeled query (a pair:
    the difference of the two rankers' values − Δ̂), b its model-expected part (the grade
    model's, for a pair the per-item mixture's, as the model-assisted estimator's control
    variate). The grade models are not recalibrated: their (e, s) stay the model's."""

    def __init__(
        self, rels: list[GradedRelevance], meas: Any, mean: NDArray[np.float64],
        e: NDArray[np.float64], s: NDArray[np.float64], assisted: bool,
    ) -> None:  # fmt: skip
        self.rels, self.meas, self.mean, self.e, self.s = rels, meas, mean, e, s
        self.assisted = assisted

    def __call__(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64],
    ) -> NDArray[np.float64]:  # fmt: skip
        idx = np.asarray(result.indices)
        flat = np.asarray(result.labels)
        if len(self.rels) == 1:
            values = ranking_values(self.meas, flat, result.label_offsets)
            g = float(getattr(result.inference, "estimate", result.estimate))
        else:
            a, b = ranking_pair_values(self.rels[0], self.rels[1], self.meas, idx, flat)
            values, g = a - b, float(result.difference)
        z = values[first] - g
        return _regressed(z, (self.mean[units] - g)[:, None], v, self.assisted)

    def recalibrated_terms(
        self, units: NDArray[np.intp], first: NDArray[np.intp], result: Any,
        v: NDArray[np.float64], p: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
        return self.e, self.s


def _regressed(
    z: NDArray[np.float64], b: NDArray[np.float64], v: NDArray[np.float64], assisted: bool
) -> NDArray[np.float64]:
    """z − b λ̂ with λ̂ the v²-weighted least-squares coefficients of z on the columns of b
    within [0, 1] each (the model-assisted estimator's power tuning); z for the thesis
    estimator."""
    if not assisted:
        return z
    vv = v * v
    zc = z - float(vv @ z) / float(vv.sum())
    bc = b - (vv @ b) / float(vv.sum())
    # the box's least squares, not the unconstrained fit clipped: the columns can move
    # together (a function of ratios' model part and its predicted positives)
    lam = _box_least_squares((v * zc)[:, None], (v[:, None] * bc)[:, None, :])
    return z - b @ lam


#: Prior standard deviation of the recalibration's slope (around 1) and intercept (around 0)
#: on the logit scale: a weak pull, so 50 labels that happen to hold no error cannot make the
#: model more confident without bound.
_PRIOR_SD = 1.0


def _penalized_logistic(
    feats: NDArray[np.float64],
    target: NDArray[np.float64],
    w: NDArray[np.float64],
    center: NDArray[np.float64],
    offset: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """argmin of Σ w·logloss(target, expit(offset + feats θ)) + |θ − center|²/(2 sd²):
    Newton's method (the objective is strictly convex)."""
    theta = center.astype(float).copy()
    off = 0.0 if offset is None else offset
    eye = np.eye(feats.shape[1]) / _PRIOR_SD**2
    for _ in range(100):
        prob = special.expit(off + feats @ theta)
        grad = feats.T @ (w * (prob - target)) + eye @ (theta - center)
        hess = (feats * (w * prob * (1.0 - prob))[:, None]).T @ feats + eye
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta


def _recalibrated(
    pred: Predictive, units: NDArray[np.intp], y: NDArray[Any], v: NDArray[np.float64]
) -> Predictive:
    """The predictive distribution refitted on the labeled units with weights v ∝ p/π (so
    the fit targets the pool): a binary classifier's logit scaled and shifted, logit p' =
    a·logit p + b (Platt scaling of the model's own logits); a multi-class one's
    probabilities tempered, p' ∝ p^a; both by weighted maximum likelihood with a Gaussian
    prior around the model (a = 1, b = 0; :data:`_PRIOR_SD`). A Gaussian's variances are
    scaled by the weighted mean of (y − mean)²/var (:func:`~activeeval.predictive.recalibrate`).
    An overconfident model gets a < 1: its confident instances' residual variance grows
    everywhere, not only where a label happened to fall. The slope is capped at 1: a
    re-plan never trusts the model beyond its own confidence, since 50 labels that hold no
    error say little about a confident region's rare errors."""
    w = v * (v.shape[0] / float(v.sum()))
    if isinstance(pred, Gaussian):
        return recalibrate(pred, units, y, w)
    if not isinstance(pred, Categorical):
        return pred
    logp = np.log(np.clip(pred.proba, 1e-300, 1.0))
    hit = pred.label_index(y)
    k = pred.proba.shape[1]
    if k == 2:
        x = np.clip(logp[:, 1] - logp[:, 0], -30.0, 30.0)
        feats = np.c_[x[units], np.ones(units.shape[0])]
        target = (hit == 1).astype(float)
        theta = _penalized_logistic(feats, target, w, np.array([1.0, 0.0]))
        if theta[0] > 1.0:  # never more confident than the model: b alone, at a = 1
            b = _penalized_logistic(feats[:, 1:], target, w, np.zeros(1), offset=feats[:, 0])
            theta = np.array([1.0, b[0]])
        s1 = special.expit(theta[0] * x + theta[1])
        return Categorical(np.c_[1.0 - s1, s1], pred.labels)
    a = 1.0
    lu = logp[units]
    for _ in range(50):  # Newton on the tempered softmax's weighted log-likelihood
        z = a * lu
        z -= z.max(axis=1, keepdims=True)
        q = np.exp(z)
        q /= q.sum(axis=1, keepdims=True)
        mean = (q * lu).sum(axis=1)
        var = (q * lu * lu).sum(axis=1) - mean * mean
        grad = -float(w @ (lu[np.arange(units.shape[0]), hit] - mean)) + (a - 1.0) / _PRIOR_SD**2
        hess = float(w @ var) + 1.0 / _PRIOR_SD**2
        step = grad / hess
        a = min(max(a - step, 1e-3), 1.0)  # never more confident than the model
        if abs(step) < 1e-10:
            break
    z = a * logp
    z -= z.max(axis=1, keepdims=True)
    out = np.exp(z)
    return Categorical(out / out.sum(axis=1, keepdims=True), pred.labels)
