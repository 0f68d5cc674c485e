"""Stopping rules: end a campaign when the answer is known, with intervals that stay valid.

Three rules, one object (:class:`StoppingRule`), shared by :func:`~activeeval.evaluate`,
:func:`~activeeval.compare`, sessions and the CLI; the budget stays the hard cap:

* ``target_width=w`` — stop once the interval is at most ``w`` wide;
* ``claim="f1 >= 0.80"`` (one model) or ``claim="difference <= 0.005"`` (two) — stop once the
  claim is settled either way: *established* when the one-sided bound on its side passes the
  threshold, *refuted* when the opposite one-sided bound does (the claim syntax of
  :mod:`activeeval.claims`, the same as the release gates');
* ``decide=True`` (comparisons) — stop once the interval for Δ = G(model 0) − G(model 1)
  excludes 0 (k > 2: once the best model's interval against every other excludes 0, each at
  level 1 − α/(k(k − 1)/2)).

Under ``rule="anytime"`` (default) every look uses the anytime-valid confidence sequence
(:mod:`activeeval.estimators.anytime`), so the interval at the stop — and the verdict —
keep their level whatever the looks; the result reports it (``interval == "anytime"``).
``rule="fixed-width"`` (``target_width`` only) is Chow & Robbins' (1965) rule: stop when the
fixed-n interval is narrow enough and report it; it needs about the labels a fixed-n design
that knew σ would buy, and its coverage at the stop is only asymptotic (as w → 0), measured
in ``docs/results/sequential.md``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ._chunks import chunked_dot
from ._validation import check_option, real_number
from .claims import Claim, parse_claim
from .errors import DegenerateIntervalWarning, ShapeError, UnknownOptionError
from .estimators.anytime import MIN_DRAWS, DrawTerms
from .estimators.inference import _wald_interval
from .estimators.report import _ONE, Pool, Reporting
from .results import ComparisonResult, EvaluationResult

__all__ = [
    "RULES",
    "StoppingRule",
    "as_anytime",
    "comparison_rule",
    "horizon_draws",
    "horizon_of",
    "reported",
    "rule_met",
    "stopping_rule",
    "window_draws",
]

#: The stopping rules' interval constructions.
RULES = ("anytime", "fixed-width")
#: A target-width rule's window is this multiple of the draws the model's σ₀ predicts
#: (:func:`window_draws`): 2 keeps the stop ≤ 1.7× a fixed-n design's labels when σ₀ is
#: right and inside the window while σ₀ underestimates the variance by up to 1.4-fold.
WINDOW_FACTOR = 2.0


@dataclass(frozen=True)
class StoppingRule:
    """When to stop (see the module docstring): any of ``target_width``, ``claim`` and
    ``decide``, the first met ends the campaign; ``rule`` the interval the looks use."""

    target_width: float | None = None
    claim: Claim | None = None
    decide: bool = False
    rule: str = "anytime"

    def __str__(self) -> str:
        parts = []
        if self.target_width is not None:
            parts.append(f"target width {self.target_width:.6g}")
        if self.claim is not None:
            parts.append(f"claim {self.claim}")
        if self.decide:
            parts.append("decide")
        return " or ".join(parts) + ("" if self.rule == "anytime" else f" ({self.rule})")

    def met(
        self,
        terms: DrawTerms,
        level: float,
        order: Sequence[int] | None = None,
        fixed: Callable[[], tuple[float, float]] | None = None,
        greater_is_better: bool = False,
        include: float | None = None,
    ) -> str | None:
        """Why to stop now, or None. ``terms``: the draws so far (one model, or k compared);
        ``order``: for a comparison, the models from best to worst by their current
        estimates (default: the sequences' centres); ``fixed``: the fixed-n two-sided
        interval (``rule="fixed-width"``); ``greater_is_better``: the measure's direction
        (a decision needs the best model's side, not only 0 excluded); ``include``: the
        estimate the result will report (one model, or Δ of two), to which the interval is
        widened within its look's C_t (:meth:`DrawTerms.interval`), so that the rule checks
        the interval the result reports.
        A comparison's width and claim are about Δ = G(0) − G(1) (k > 2: the best against
        the runner-up), at level 1 − α/(k(k − 1)/2) for k > 2."""
        k = terms.k
        if k == 1:
            what: Any = 0
            lv = level
        else:
            best = list(order) if order is not None else terms.order(greater_is_better)
            what = (0, 1) if k == 2 else (best[0], best[1])
            lv = level if k == 2 else 1.0 - (1.0 - level) / (k * (k - 1) / 2)
        if self.target_width is not None:
            if self.rule == "fixed-width":
                lo, hi = fixed() if fixed is not None else (math.nan, math.nan)
                started = terms.n >= MIN_DRAWS
            else:
                lo, hi = terms.interval(what, lv, include=include)
                started = True
            if started and hi - lo <= self.target_width:
                return f"target width {self.target_width:.6g} reached ({hi - lo:.4g})"
        if self.claim is not None:
            why = _settled(self.claim, terms, what, lv, include)
            if why is not None:
                return why
        if self.decide and k > 1:
            return _decided(terms, lv, best, k, greater_is_better, include)
        return None


def _settled(
    c: Claim, terms: DrawTerms, what: Any, lv: float, include: float | None = None
) -> str | None:
    """A claim is established when the one-sided bound on its side passes the threshold,
    refuted when the opposite one does (each a one-sided sequence at ``lv``)."""
    up = terms.interval(what, lv, "less", include=include)[1]
    low = terms.interval(what, lv, "greater", include=include)[0]
    t, strict = c.threshold, c.op in ("<", ">")
    if c.alternative == "less":
        if up < t or (up == t and not strict):
            return f"claim {c} established (upper bound {up:.4g})"
        if low > t or (low == t and strict):
            return f"claim {c} refuted (lower bound {low:.4g})"
    else:
        if low > t or (low == t and not strict):
            return f"claim {c} established (lower bound {low:.4g})"
        if up < t or (up == t and strict):
            return f"claim {c} refuted (upper bound {up:.4g})"
    return None


def _decided(
    terms: DrawTerms,
    lv: float,
    order: list[int],
    k: int,
    greater_is_better: bool,
    include: float | None = None,
) -> str | None:
    """The best model's sequence against every other lies wholly on its side of 0:
    G_best − G_j > 0 for a score, < 0 for a loss (``include``: Δ = G_0 − G_1 reported for
    two models)."""
    best = order[0]
    for j in range(k):
        if j != best:
            point = None if include is None else (include if best == 0 else -include)
            lo, hi = terms.interval((best, j), lv, include=point)
            if not (lo > 0.0 if greater_is_better else hi < 0.0):
                return None
    return f"decided: model {best} is {'better' if k == 2 else 'best'}"


def stopping_rule(
    target_width: Any = None,
    claim: Any = None,
    decide: Any = False,
    rule: str = "anytime",
    *,
    measure: Any,
    n_models: int = 1,
) -> StoppingRule | None:
    """The validated stopping rule of a campaign's arguments, or None when none is set.

    Raises
    ------
    ShapeError
        ``target_width`` is not a positive number below the measure's range, or ``claim``
        cannot be read or lies outside the measure's range.
    UnknownOptionError
        ``rule`` is unknown, ``rule="fixed-width"`` is combined with a claim or a decision,
        ``decide`` is set for one model, or the claim names another quantity.
    """
    rule = check_option(rule, RULES, "rule")
    if not isinstance(decide, bool):
        raise ShapeError(f"decide: must be True or False, got {decide!r}.")
    width = None
    lo, hi = getattr(measure, "value_range", (-math.inf, math.inf))
    span = (hi - lo) * (2 if n_models > 1 else 1)
    if target_width is not None:
        width = real_number(target_width)
        if not (math.isfinite(width) and 0 < width < span):
            raise ShapeError(
                f"target_width: the interval's width to stop at must be a positive number below "
                f"the range's width ({span:g}), got {target_width!r}."
            )
    parsed = None
    if claim is not None:
        parsed = claim if isinstance(claim, Claim) else parse_claim(claim)
        name = measure.name
        if n_models == 2 and parsed.quantity != "difference":
            raise UnknownOptionError(
                f"claim: a comparison's claim is about 'difference' (model 0 − model 1 of "
                f"{name}), got {parsed.quantity!r}; e.g. 'difference <= 0.005'."
            )
        if n_models > 2:
            raise UnknownOptionError(
                f"claim: a claim is about one model or a pair; this comparison has {n_models} "
                "models. Compare the pair the claim is about, or use decide=True."
            )
        if n_models == 1 and parsed.quantity != name:
            raise UnknownOptionError(
                f"claim: this campaign estimates {name!r}, the claim is about "
                f"{parsed.quantity!r}; name the measure as {name!r}."
            )
        _check_claim_range(parsed, name, (lo, hi) if n_models == 1 else (lo - hi, hi - lo))
    if decide and n_models < 2:
        raise UnknownOptionError(
            "decide: stops a comparison once it is decided; evaluate has one model. Use "
            "target_width= or claim= instead."
        )
    if rule == "fixed-width" and (parsed is not None or decide or width is None):
        raise UnknownOptionError(
            "rule: 'fixed-width' (Chow–Robbins) stops at a target width only; give "
            "target_width= and drop claim= and decide=, or use rule='anytime'."
        )
    if width is None and parsed is None and not decide:
        return None
    return StoppingRule(width, parsed, decide, rule)


def _check_claim_range(claim: Claim, name: str, span: tuple[float, float]) -> None:
    """A claim's threshold lies in the quantity's range, and the claim does not hold for
    every value in it (a rule on such a claim would stop before any label)."""
    lo, hi = span
    what = name if claim.quantity != "difference" else f"the difference of {name}"
    t = claim.threshold
    if not lo <= t <= hi:
        raise ShapeError(
            f"claim: {what} lies in [{lo:g}, {hi:g}]; a threshold of {t:.10g} is outside it."
        )
    if (claim.op == "<=" and t >= hi) or (claim.op == ">=" and t <= lo):
        raise ShapeError(
            f"claim: {claim.quantity} {claim.op} {t:.10g} holds for every value of {what} "
            f"(its range is [{lo:g}, {hi:g}]), so there is nothing to establish; set a "
            "threshold inside the range."
        )


def comparison_rule(
    target_width: Any, claim: Any, decide: Any, rule: str, measure: Any, k: int, sequential: bool
) -> StoppingRule | None:
    """A comparison's stopping rule (:func:`stopping_rule`), refused beside the thesis's
    sequential protocol (two rules cannot both end one campaign)."""
    stop = stopping_rule(target_width, claim, decide, rule, measure=measure, n_models=k)
    if stop is not None and sequential:
        raise UnknownOptionError(
            "sequential: the thesis's protocol (Wald tests at every look) and a stopping rule "
            "(decide=, claim=, target_width=) cannot both end the campaign; drop "
            "sequential=True — decide=True is its valid form."
        )
    return stop


def window_draws(
    stop: StoppingRule | None, pool: Pool, rep: Reporting, horizon: float
) -> float | None:
    """The window T of a target-width rule's boundary (:func:`~.estimators.anytime.
    window_boundary`), fixed before the first look from the model: :data:`WINDOW_FACTOR` ×
    the draws after which the fixed-n interval would be ``target_width`` wide were the
    model's per-draw σ₀ right, (2 z σ₀ / w)², capped at the ``horizon`` (the budget). Most of
    α is then spent where the rule is expected to stop: the stopping time is about
    (z_{0.8α/4}/z)·√(T/n) ≈ 1.19·√(T/n) times the labels n a fixed-n design needs, against
    ≈ 2.4 for the normal mixture alone. None (the mixture) for other rules, for Chow–Robbins,
    and for comparisons (no σ₀ of a difference; several models)."""
    if stop is None or stop.target_width is None or stop.rule != "anytime":
        return None
    if len(pool.models) != 1:
        return None
    sigma0 = float(pool.sigma0(rep)[_ONE, 0])  # the model's own: no label yet
    if not (math.isfinite(sigma0) and sigma0 > 0):
        return None
    z = float(special.ndtri(0.5 + rep.level / 2))
    n = (2.0 * z * sigma0 / stop.target_width) ** 2
    return float(min(max(WINDOW_FACTOR * n, MIN_DRAWS), horizon))


def horizon_draws(
    budget: float, q: NDArray[np.float64], costs: NDArray[np.float64] | None
) -> float:
    """The anytime sequences' horizon t* in draws, fixed before the first look from the plan
    alone: the budget in labels, or with costs the budget over the mean cost of a draw from q
    (repeats of labeled instances are free, so a campaign draws somewhat more: t* a little
    early, which moves the width by a few percent, ``docs/design/anytime-valid.md``)."""
    # Σ q·λ a chunk at a time, as a cluster's blocks add it
    return horizon_of(budget, None if costs is None else chunked_dot(q, costs))


def horizon_of(budget: float, draw_cost: float | None) -> float:
    """:func:`horizon_draws` from the mean cost of a draw from q, Σ q·λ (None: no costs)."""
    if draw_cost is None:
        return max(float(budget), 1.0)
    return max(float(budget) / draw_cost, 1.0)


def rule_met(
    stop: StoppingRule,
    pool: Pool,
    rep: Reporting,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    horizon: float,
    draw_q: NDArray[np.float64] | None = None,
    window: float | None = None,
    terms: DrawTerms | None = None,
) -> str | None:
    """One look: whether ``stop`` is met on the sample (draws, their labels; ``draw_q`` each
    draw's q where q changed between batches; ``window``: :func:`window_draws`), and why —
    what a campaign checks after every step and a session on its labeled prefix.
    ``terms``: the sample's per-draw terms where the caller has them (the result's
    :class:`~.estimators.report.LazyTerms` of the same draws, horizon and window)."""
    if terms is None:
        terms = pool.draw_terms(rep, draws, labels, horizon, draw_q, window)
    k = len(pool.models)
    gib = bool(getattr(rep.measure, "greater_is_better", False))
    quick = replace(rep, score=False)  # a look needs no tempered curve
    # The look's design-based estimate (or comparison), once: the interval is widened to
    # the estimate the result will report, and Chow–Robbins' rule checks its fixed-n interval.
    include: float | None = None
    with warnings.catch_warnings():  # a degenerate look is not warned about
        warnings.simplefilter("ignore")
        if k == 1:
            est, _ = pool.estimate(quick, 0, draws, labels, draw_q)
            lo_r, hi_r = getattr(rep.measure, "value_range", (-math.inf, math.inf))
            include = float(np.clip(est.estimate, lo_r, hi_r))  # as the result reports it
        elif k == 2 or stop.rule == "fixed-width":
            c = pool.compare(quick, draws, labels, draw_q=draw_q)
        if k == 2:
            include = float(c.difference)

    def fixed() -> tuple[float, float]:
        if k > 1:
            return _wald_interval(c.difference, c.stderr, rep.level)
        with warnings.catch_warnings():  # a degenerate look never stops: not warned
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            return est.confidence_interval(rep.level, "logit" if est.binary_loss else "wald")

    return stop.met(terms, rep.level, None, fixed, gib, include)


def as_anytime(res: Any) -> Any:
    """A result reported with its anytime-valid interval (and, for a comparison, p-value:
    :meth:`~activeeval.ComparisonResult.test`), valid however often it was looked at."""
    ci = res.confidence_interval(method="anytime")
    if isinstance(res, ComparisonResult):
        return replace(res, ci=ci, interval="anytime", p_value=res.test(method="anytime"))
    return replace(res, ci=ci, interval="anytime")


def reported(res: Any, stop: StoppingRule | None) -> Any:
    """A result as a stopping rule reports it: the anytime interval (or Chow–Robbins' fixed
    one) whenever a rule was set — the looks were taken, stopped early or not."""
    if stop is None:
        return res
    if isinstance(res, ComparisonResult):
        if res.comparison is None:
            return res
        if stop.rule == "fixed-width":
            return replace(res, interval="fixed-width")
        return as_anytime(res)
    if not isinstance(res, EvaluationResult) or res.inference is None:
        return res
    how = "anytime" if stop.rule == "anytime" else "fixed-width"
    return replace(res, ci=res.confidence_interval(method=how), interval=how)
