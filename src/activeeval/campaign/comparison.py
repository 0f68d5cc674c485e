"""``compare``: validate → plan q → acquire → report, for two or more models (Algorithm 3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_random_state,
    decisions_per_model,
    is_dask,
    pool_distribution,
    refuse_ranked_decision,
)
from ..errors import (
    ShapeError,
    UnknownOptionError,
)
from ..estimators.report import (
    ClasswisePool,
    LazyTerms,
    PlainPool,
    RankedPool,
    _no_features,
    refuse_undefined,
)
from ..estimators.smoother import DEFAULT_BANDWIDTH, _check_bandwidth
from ..measures import ClasswiseMeasure, Measure, check_fits, get_measure, refuse_decision
from ..methods import (
    DEFAULT_MIX,
    ESTIMATORS,
)
from ..predictive import (
    Mixture,
    as_predictive,
    decided,
)
from ..probability_measures import ProbabilityMeasure
from ..results import ComparisonResult, GroupResult
from ..sampling import (
    comparison_distribution,
)
from ..stopping import comparison_rule, horizon_draws, reported
from .classwise import _compare_classwise
from .distributed import compare_dask
from .groups import _compare_groups
from .groups import refuse as refuse_groups
from .ranked import _compare_ranking, _is_ranking
from .reuse import Reused
from .reuse import refuse as refuse_reuse
from .steps import (
    CampaignSettings,
    Oracle,
    _Acquisition,
    _bar,
    _check_step,
    _comparison_result,
    _Look,
    _run_comparison,
    _run_looks,
    _stop_step,
)


def _per_model(prediction: Any, k: int) -> list[Any] | None:
    """``compare(prediction=)``: one decision array (or None) per model, checked."""
    return None if prediction is None else decisions_per_model(prediction, k)


@overload
def compare(
    predictions: Sequence[Any],
    oracle: Oracle,
    measure: Measure | str = ...,
    *,
    groups: ArrayLike,
    **kwargs: Any,
) -> GroupResult: ...


@overload
def compare(
    predictions: Sequence[Any],
    oracle: Oracle,
    measure: Measure | str = ...,
    *args: Any,
    **kwargs: Any,
) -> ComparisonResult: ...


# mypy cannot match the first overload's keyword-only ``groups`` with the parameter of the same
# name below, which takes it by keyword too (``[misc]``, as for ``evaluate``).
def compare(  # type: ignore[misc]
    predictions: Sequence[Any],
    oracle: Oracle,
    measure: Measure | str = "error_rate",
    budget: float = 300,
    method: str = "active",
    costs: ArrayLike | None = None,
    level: float = 0.95,
    random_state: Any = None,
    *,
    pool_weights: ArrayLike | None = None,
    pos_label: Any = None,
    mix: float = DEFAULT_MIX,
    sequential: bool = False,
    alpha: float = 0.05,
    step: float | None = None,
    estimator: str = "assisted",
    max_draws: int | None = None,
    progress: bool | None = None,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
    prediction: Sequence[ArrayLike | None] | None = None,
    decide: bool = False,
    claim: Any = None,
    target_width: float | None = None,
    rule: str = "anytime",
    reuse: Any = None,
    groups: ArrayLike | None = None,
    group_design: str = "minimax",
) -> ComparisonResult | GroupResult:
    """Compare two or more models on the pool from labels bought within a budget.

    Draws pool instances from a sampling distribution q chosen for the difference of the
    models' measures — by default the ``q*`` that maximizes the power of the paired test, under
    the mixture of the models' predictive distributions — labels them within the budget and
    tests which model is better (thesis Algorithm 3). Two ranking functions of the same
    queries are compared the same way.

    Parameters
    ----------
    predictions : sequence of predictive distributions
        Each model's predictions on the same pool (as for ``evaluate``), or two
        GradedRelevance rankers of the same queries (with item ids): then the union of both
        lists is labeled (Sec. 6.2) and the oracle returns the grades of
        [ranking_union][activeeval.ranking.ranking_union]'s items, in that order.
    oracle : callable
        ``oracle(indices) -> labels``, as for ``evaluate``.
    measure : Measure or str, default "error_rate"
        As for ``evaluate``; a loss or score of the models' predictions (not a label mean).
    budget : float, default 300
        Number of labels, or total cost when ``costs`` are given.
    method : str, default "active"
        ``"active"`` (Thm 5.1 under the mixture of the models, eq. 5.11; eq. 5.16 for k > 2),
        ``"passive"``, ``"active_0"``, ``"active_inf"``, ``"active_neq"``, ``"active_risk"``,
        ``"active_uniC"``, ``"active_lambda"`` (see
        [comparison_distribution][activeeval.sampling.comparison_distribution]). Ranking
        pools: one of [RANKING_METHODS][activeeval.methods.RANKING_METHODS] (eq. 6.11).
    costs : array-like of shape (m,), optional
        Labeling cost per pool instance; ``budget`` is then in cost units.
    level : float, default 0.95
        Confidence level of ``ci``.
    random_state : None, int or numpy Generator
        Seed of the draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    pos_label : label, optional
        The positive class of an F-measure, precision or recall (as for ``evaluate``).
    mix : float
        Weight of the defensive mixture with p in q (as for ``evaluate``).
    sequential : bool, default False
        The thesis's sequential protocol (Table 5.1): label ``step`` more labels at a time
        and stop once the Wald p-value falls below ``alpha``. Repeated testing inflates the
        type I error above ``alpha``; kept to reproduce the thesis. ``decide=True`` is the
        valid rule.
    alpha : float, default 0.05
        Significance level of the sequential protocol.
    step : float, optional
        Labels (or cost) between looks; default budget / 20 for ``sequential``, budget / 100
        under a stopping rule.
    estimator : {"assisted", "snis"}, default "assisted"
        ``"assisted"`` compares model-assisted estimates, each model's own predictive
        distribution a control variate; ``"snis"`` is the thesis's paired Wald test
        (multiple comparison for k > 2). ``method="active_neq"`` always uses ``"snis"``.
    max_draws : int, optional
        Cap on draws (repeats of labeled instances are free but count); as for ``evaluate``.
    progress : bool, optional
        Show a progress bar; by default one appears only if the campaign runs over a second.
    features : array-like of shape (m, d), optional
        Numeric pool features for the model-assisted estimator: each model's smoothed
        labeled residuals are one more control variate, tuned for the differences.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth on the standardized features.
    prediction : sequence, optional
        One decision f(x) per model, or None to use that model's mode or mean (as
        ``evaluate``'s ``prediction``).
    decide : bool, default False
        Stop once the comparison is decided: the anytime-valid confidence sequence of
        Δ = G(model 0) − G(model 1) excludes 0 (k > 2: the best model's against every other).
    claim : str or Claim, optional
        Two models: stop once a claim about the difference, e.g. ``"difference <= 0.005"``
        (for a loss, model 0 at most 0.005 worse than model 1), is established or refuted.
    target_width : float, optional
        Stop once the interval for Δ is at most this wide.
    rule : {"anytime", "fixed-width"}, default "anytime"
        As for ``evaluate``: with any stopping rule ``ci`` is the anytime interval of Δ
        (``interval == "anytime"``) and ``stopped`` says why the campaign stopped.
    reuse : EvaluationResult, ComparisonResult or Session, optional
        An earlier campaign on the same pool (any models, any measure) whose labels this one
        reuses, as for ``evaluate``.
    groups : array-like of shape (m,), optional
        A group label per pool instance: two models compared within every group and
        overall, q planned for the groups' differences (a ``GroupResult`` of comparisons).
    group_design : {"minimax", "sum"}, default "minimax"
        As for ``evaluate``.

    Returns
    -------
    ComparisonResult
        The difference Δ̂ of the first two models (k > 2: best against runner-up), its
        p-value and interval, each model's estimate, the labels spent and the draws.

    See Also
    --------
    evaluate : Estimate one model's measure.
    Session : The same comparison as a persistent session, for labels that arrive over time.
    activeeval.sampling.comparison_distribution : The q the comparison draws from.
    activeeval.estimators.assisted.assisted_paired_test : The default paired test.

    Notes
    -----
    The interval for Δ is Wald, so it needs Δ̂ to be roughly normal: for an F-measure on a
    rare class that takes a few hundred labels. The measured coverage, the sequential
    protocol's type I error, the stopping rules of k > 2 models, the estimator of a
    comparison and its pool features are explained on the *How it works* page of the
    documentation (``docs/how-it-works/index.md``, "Comparing models").

    References
    ----------
    C. Sawade, *Active Evaluation of Predictive Models*, PhD thesis, University of Potsdam,
    2013: Algorithm 3, eq. 3.23–3.24, Thm 5.1, Cor. 5.1–5.2, eq. 5.11, eq. 5.16,
    Table 5.1; Sec. 6.2 for ranking functions.

    Examples
    --------
    Two models' class probabilities on the same pool of 500 instances:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.uniform(size=500) < p1).astype(int)
    >>> model_a = np.column_stack([1 - p1, p1])
    >>> model_b = np.column_stack([1 - p1**2, p1**2])
    >>> res = ae.compare([model_a, model_b], lambda idx: y[idx], budget=100, random_state=0)
    >>> print(f"difference {res.difference:.3f}, p = {res.p_value:.3f}, best: model {res.best}")
    difference -0.043, p = 0.008, best: model 0
    """
    if reuse is not None and _is_ranking(predictions):
        raise UnknownOptionError(
            "reuse: a ranked pool's queries are not reused yet; run the campaign afresh."
        )
    if groups is not None and _is_ranking(predictions):
        raise UnknownOptionError(
            "groups: per-group comparisons are for pools of instances; compare each group's "
            "queries separately."
        )
    if isinstance(predictions, list | tuple) and any(is_dask(p) for p in predictions):
        _check_bandwidth(bandwidth)  # what the NumPy path checks of options unused here
        estimator = check_option(estimator, ESTIMATORS, "estimator")
        return compare_dask(
            predictions, oracle, measure, budget, method, level, random_state,
            pos_label=pos_label, mix=mix, max_draws=max_draws, progress=progress,
            target_width=target_width, claim=claim, decide=decide, rule=rule, step=step,
            sequential=sequential, alpha=alpha, estimator=estimator,
            prediction=_per_model(prediction, len(predictions)), costs=costs,
            refused={
                "pool_weights": pool_weights, "features": features, "reuse": reuse,
                "groups": groups,
            },
        )  # fmt: skip
    if _is_ranking(predictions):
        refuse_ranked_decision(prediction)
        _no_features(features, RankedPool.refuses_features)
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress, sequential, alpha, step, (target_width, claim, decide, rule),
        )  # fmt: skip
        return _compare_ranking(list(predictions), oracle, measure, settings)
    preds = [as_predictive(p, f"predictions[{k}]") for k, p in enumerate(predictions)]
    decisions = _per_model(prediction, len(preds))
    if decisions is not None:
        preds = [
            decided(p, f, f"prediction[{k}]")
            for k, (p, f) in enumerate(zip(preds, decisions, strict=True))
        ]
    if len(preds) < 2:
        raise ShapeError(f"predictions: need at least two models to compare, got {len(preds)}.")
    for idx, pr in enumerate(preds):  # before Mixture(preds), whose error names no argument
        if pr.n != preds[0].n:
            raise ShapeError(
                f"predictions[{idx}]: covers {pr.n} instances, predictions[0] covers "
                f"{preds[0].n}; all models must be evaluated on the same pool."
            )
    method = check_option(method, PlainPool.compare_methods, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    where = f"estimator={estimator!r}" if estimator == "snis" else ""
    if method == "active_neq":
        estimator = "snis"
        where = "method='active_neq' (the thesis's estimator)"
    PlainPool.check_features(features, bandwidth, preds[0].n, where)  # before any label
    meas = get_measure(measure, pos_label=pos_label)
    refuse_decision(meas, decisions is not None and any(f is not None for f in decisions))
    check_fits(meas, preds[0])
    if getattr(meas, "any_predictions", False):
        raise UnknownOptionError(
            f"measure: {meas.name} is the mean of the label itself, the same for every model; "
            "compare models with a loss or score of their predictions (error_rate, f1, mse, "
            "...), or evaluate each judge's agreement with the labels."
        )
    if isinstance(meas, ProbabilityMeasure):
        raise UnknownOptionError(
            f"measure: compare does not test a difference in {meas.name} (a measure of "
            f"probabilities); evaluate each model with evaluate(pred, oracle, {meas.name!r}), "
            "or compare by a measure of decisions (error_rate, f1, ...)."
        )
    meas = meas.bind(Mixture(preds))
    reused = None
    if reuse is not None:
        refuse_reuse(target_width=target_width, claim=claim, decide=decide, step=step,
                     sequential=sequential, features=features, groups=groups)  # fmt: skip
        reused = Reused.of(reuse, preds[0].n)
    if groups is not None:
        refuse_groups("compare", target_width=target_width, claim=claim, decide=decide,
                      step=step, sequential=sequential, features=features)  # fmt: skip
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress,
        )  # fmt: skip
        return _compare_groups(preds, oracle, meas, settings, groups, group_design)
    if isinstance(meas, ClasswiseMeasure):
        ClasswisePool.refuse(meas, target_width=target_width, claim=claim, step=step,
                             features=features, decide=decide, sequential=sequential)  # fmt: skip
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress,
        )  # fmt: skip
        return _compare_classwise(preds, oracle, meas, settings, reused)
    if method == "active_neq" and not meas.regular:
        raise ShapeError(
            "method: 'active_neq' rescales a difference of regular risks by the disagreement "
            f"mass; {meas.name} is a ratio measure. Use 'active' instead."
        )
    stop = comparison_rule(target_width, claim, decide, rule, meas, len(preds), sequential)
    _check_step(step, stop is not None or sequential)
    if stop is not None and method == "active_neq":
        raise UnknownOptionError(
            "method: 'active_neq' identifies only the difference on the disagreements and has "
            "no anytime-valid sequence; use method='active' with a stopping rule."
        )
    lam = check_costs(costs, preds[0].n)
    lv = check_level(level)
    alpha = check_level(alpha, "alpha")
    b = check_budget(budget, lam)
    if not callable(oracle):
        raise ShapeError("oracle: must be a callable mapping pool indices to labels.")
    rng = check_random_state(random_state)
    max_draws = check_max_draws(max_draws, b, lam)
    pw = pool_distribution(preds[0].n, pool_weights)
    refuse_undefined(meas, preds, pw)
    qq = comparison_distribution(
        preds, meas, method=method, costs=lam, pool_weights=pool_weights, mix=mix
    )
    qq.flags.writeable = False  # the campaign's record of what it drew from
    support_mass = float(pw[qq > 0].sum()) if method == "active_neq" else 1.0
    pool = PlainPool(preds, meas, pw)
    rep = pool.reporting(qq, lv, estimator, features, bandwidth, support_mass)
    book, check = pool.label_book()
    if reused is not None:
        reused.prefill(book, check)
    with _bar(b, lam, progress) as bar:
        acq = _Acquisition(qq, oracle, check, lam, rng, max_draws, bar, book=book)

        def look(draws: NDArray[np.intp]) -> tuple[float, float]:
            c = pool.compare(rep, draws, book.lookup(draws))
            return c.p_value, c.stderr

        horizon = horizon_draws(b, qq, lam)
        if stop is None:
            draws, stopped = _run_comparison(acq, b, sequential, step, alpha, look)
        else:
            watch = _Look(stop, pool, rep, acq, horizon)
            draws, stopped = _run_looks(acq, b, _stop_step(acq, b, step), watch)
    acq.warn_if_capped(b)
    acq.require_labels(budget, reused is not None)  # a cost budget short of the first draw
    if reused is not None:  # every draw, old and new, weighted by the mixture of the two q
        draws, qq = reused.combined(draws, qq)
        rep = pool.reporting(qq, lv, estimator, features, bandwidth, support_mass)
    y = book.lookup(draws)
    c = pool.compare(rep, draws, y, census=True)
    sample = {"budget": b, "method": method, "indices": draws, "q": qq[draws], "pool_q": qq}
    anytime = method != "active_neq" and reused is None
    terms = LazyTerms(pool, rep, draws, y, horizon) if anytime else None
    res = _comparison_result(rep, c, acq, {**sample, **pool.label_fields(y)}, stopped, terms)
    return reported(res, stop)
