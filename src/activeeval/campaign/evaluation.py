"""``evaluate``: validate → plan q → acquire → report, for one model."""

from __future__ import annotations

from typing import Any, Literal, overload

from numpy.typing import ArrayLike

from .._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_random_state,
    check_safeguards,
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
    _result_fields,
    refuse_undefined,
)
from ..estimators.smoother import DEFAULT_BANDWIDTH, _check_bandwidth
from ..measures import ClasswiseMeasure, Measure, PerClass, check_fits, get_measure, refuse_decision
from ..methods import (
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    ESTIMATORS,
)
from ..predictive import (
    as_predictive,
    decided,
)
from ..probability_measures import ProbabilityMeasure
from ..results import EvaluationResult, GroupResult, PerClassResult
from ..sampling import (
    check_distribution,
    check_support,
    sampling_distribution,
)
from ..stopping import horizon_draws, reported, stopping_rule, window_draws
from .batches import Replanning, _check_batch_size, _run_in_batches
from .classwise import _evaluate_classwise
from .distributed import evaluate_dask
from .groups import _evaluate_groups
from .groups import refuse as refuse_groups
from .probability import _evaluate_probability
from .probability import refuse as refuse_probability
from .ranked import _evaluate_ranking, _is_ranking
from .reuse import Reused
from .reuse import refuse as refuse_reuse
from .steps import (
    CampaignSettings,
    Oracle,
    _Acquisition,
    _bar,
    _check_step,
    _Look,
    _no_label_bought,
    _run_looks,
    _stop_step,
)
from .stratified import _check_strata, _stratified

#: The names of the per-class measures, whose result is a PerClassResult.
PerClassName = Literal["per_class_f1", "per_class_precision", "per_class_recall"]


@overload
def evaluate(
    predictions: Any,
    oracle: Oracle,
    measure: Measure | str = ...,
    *,
    groups: ArrayLike,
    **kwargs: Any,
) -> GroupResult: ...


@overload
def evaluate(
    predictions: Any, oracle: Oracle, measure: PerClass | PerClassName, *args: Any, **kwargs: Any
) -> PerClassResult: ...


@overload
def evaluate(
    predictions: Any, oracle: Oracle, measure: Measure | str = ..., *args: Any, **kwargs: Any
) -> EvaluationResult: ...


# mypy cannot match the first overload's keyword-only ``groups`` with the parameter of the same
# name below, which takes it by keyword too (``[misc]``, "does not accept all parameters").
def evaluate(  # type: ignore[misc]
    predictions: Any,
    oracle: Oracle,
    measure: Measure | str = "error_rate",
    budget: float = 200,
    method: str = "active",
    costs: ArrayLike | None = None,
    level: float = 0.95,
    random_state: Any = None,
    *,
    pool_weights: ArrayLike | None = None,
    pos_label: Any = None,
    q: ArrayLike | None = None,
    floor: float = DEFAULT_FLOOR,
    mix: float = DEFAULT_MIX,
    n_strata: int = 10,
    estimator: str = "assisted",
    batch_size: float | None = None,
    max_draws: int | None = None,
    progress: bool | None = None,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
    prediction: ArrayLike | None = None,
    target_width: float | None = None,
    claim: Any = None,
    rule: str = "anytime",
    step: float | None = None,
    groups: ArrayLike | None = None,
    group_design: str = "minimax",
    reuse: Any = None,
) -> EvaluationResult | PerClassResult | GroupResult:
    """Estimate a model's performance on the pool from labels bought within a budget.

    Draws pool instances from a sampling distribution q — by default the variance-optimal
    ``q*`` computed from the model's own predictive distribution — asks the oracle for the
    labels of new ones until the budget is spent, and returns the estimate with its
    standard error and confidence interval (thesis Algorithm 2). A ranking function is
    evaluated the same way on a pool of queries (thesis Ch. 6).

    Parameters
    ----------
    predictions : (m, K) array, Categorical, Gaussian, Mixture or GradedRelevance
        The model's predictive distribution p(y | x) on every pool instance, e.g. a
        classifier's ``predict_proba`` output; for a ranking function, its ranked lists with
        per-item grade distributions over a pool of m queries. A Dask pool (a
        ``dask.array.Array`` of class probabilities, or a ``dask.dataframe.DataFrame`` of a
        pool file's columns) is computed partition by partition on the cluster, with the
        same result as in NumPy (either estimator; ``active``, ``active_uniC`` or
        ``passive``; see the *Pools on a Dask cluster* page, ``docs/guide/dask.md``).
    oracle : callable
        ``oracle(indices) -> labels`` for pool indices never asked before; deterministic.
        For a ranking pool it receives query indices and returns the grades of every item of
        each query, in the ranker's order, concatenated (or a list with one array per query).
    measure : Measure or str, default "error_rate"
        ``"error_rate"``, ``"accuracy"``, ``"mse"``, ``"mae"``, ``"f1"``, ``"precision"``,
        ``"recall"``, the multi-class ``"macro_f1"``, ``"weighted_f1"``,
        ``"balanced_accuracy"``, ``"per_class_f1"`` (``_precision``, ``_recall``: a
        ``PerClassResult``), ``"mean"``, ``"proportion"`` or a measure object; for rankings
        ``"dcg"``, ``"err"``, ``DCG(k)`` or ``ERR(k, max_grade)``.
    budget : float, default 200
        Number of labels, or total cost Λ when ``costs`` are given (Sec. 4.3). Ranking pools:
        number of queries, or Λ in query-cost units when the GradedRelevance has item costs.
    method : str, default "active"
        ``"active"`` (``q*``, cost-sensitive with costs; Thm 4.1/4.2), ``"passive"`` (q = p),
        ``"stratified"`` (Bennett & Carvalho, 2010), ``"active_lambda"`` (q ∝ λ^(-1/2)),
        ``"active_uniC"`` (``q*`` ignoring costs). Ranking pools: one of
        [RANKING_METHODS][activeeval.methods.RANKING_METHODS] (eq. 6.10 and the baselines of
        Sec. 6.3).
    costs : array-like of shape (m,), optional
        Labeling cost per pool instance; ``budget`` is then in cost units. Ranking pools
        default to the items' summed costs.
    level : float, default 0.95
        Confidence level of ``ci``.
    random_state : None, int or numpy Generator
        Seed of the draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    pos_label : label, optional
        The positive class of ``"f1"``, ``"precision"`` and ``"recall"``; by default the
        larger of a binary model's two classes (required with more classes).
    q : array-like of shape (m,), optional
        A sampling distribution of your own, overriding ``method``'s.
    floor : float
        Safeguard of ``q*``: bounds [floor, 1 − floor] on the intrinsic value for 0/1
        losses; for a multi-class average or per-class measure, the share of each
        instance's probability spread evenly over the classes; 0 disables (see
        [optimal_distribution][activeeval.sampling.optimal_distribution]).
    mix : float
        Safeguard of ``q*``: weight in [0, 1] of the defensive mixture with p; 0 disables.
    n_strata : int, default 10
        Number of strata (≥ 1) for ``method="stratified"``.
    estimator : {"assisted", "snis"}, default "assisted"
        ``"assisted"``: the model-assisted estimator, which uses the model's expected loss on
        the whole pool as a control variate; ``"snis"``: the thesis's self-normalized
        importance-sampling estimator (eq. 3.31), for reproduction. See Notes.
    batch_size : float, optional
        Batch-adaptive sampling: buy ``batch_size`` labels (or cost units) at a time,
        recalibrate the model on the labels so far and recompute q for the next batch. Only
        for ``"active"`` and ``"active_uniC"`` without ``q``; not the default (see Notes).
    max_draws : int, optional
        Cap on draws (repeats of labeled instances are free but count); default 20 per label
        the budget buys, plus 1,000.
    progress : bool, optional
        Show a progress bar; by default one appears only if the campaign runs over a second.
    features : array-like of shape (m, d), optional
        Numeric pool features, one row per instance, for the model-assisted estimator: the
        labeled residuals, kernel-smoothed over the standardized features, become a second
        control variate. O(m·n·d) time.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth on the standardized features; with the
        default, in 10 or more dimensions only near-duplicates are neighbours.
    prediction : array-like of shape (m,), optional
        The decision f(x) the measure scores (a tuned threshold's labels, a rule's, another
        model's) when it is not the mode (classifier) or mean (regressor) of
        ``predictions``, which then stay the beliefs p(y | x) that choose q.
    target_width : float, optional
        Stop once the interval is at most this wide; the budget stays the cap.
    claim : str or Claim, optional
        Stop once a claim such as ``"f1 >= 0.80"`` or ``"error_rate <= 5%"`` is settled
        either way (established or refuted by the one-sided bounds at ``level``).
    rule : {"anytime", "fixed-width"}, default "anytime"
        With a stopping rule: ``"anytime"`` reports the anytime-valid interval, valid at the
        data-dependent stop; ``"fixed-width"`` (``target_width`` only) is Chow–Robbins' rule,
        which reports the fixed-n interval: fewer labels, coverage only asymptotic.
    step : float, optional
        Labels (or cost) between looks under a stopping rule; default budget / 100. With
        ``batch_size`` the looks are the batches.
    groups : array-like of shape (m,), optional
        A group label per pool instance (a country, a device, a segment): the measure is
        estimated within every group and overall, and ``method="active"`` draws from q
        planned for the groups (:func:`~activeeval.sampling.grouped_distribution`). Not with
        stopping rules, batches or pool features.
    group_design : {"minimax", "sum"}, default "minimax"
        How q serves the groups: minimize the largest group's variance, or their sum.
    reuse : EvaluationResult, ComparisonResult or Session, optional
        An earlier campaign on the same pool — another model, version or measure — whose
        labels this one reuses: they are free, and its draws join the new ones, every draw
        weighted by p over the mixture of the two campaigns' q (multiple importance sampling
        with the balance heuristic). The new draws come from q planned for what is asked
        now; ``budget`` counts the new labels. Not with stopping rules, batches, groups or
        pool features.

    Returns
    -------
    EvaluationResult, PerClassResult or GroupResult
        The estimate, its standard error and interval, the labels spent and the draws; for a
        per-class measure one estimate and interval per class; with ``groups``, one result
        per group and one overall (``GroupResult``).

    See Also
    --------
    compare : Compare two or more models on the same pool.
    plan : Labels needed for a target interval width, before any is bought.
    Session : The same campaign as a persistent session, for labels that arrive over time.
    activeeval.sampling.optimal_distribution : The ``q*`` that ``method="active"`` draws from.

    Notes
    -----
    With a stopping rule (``target_width`` or ``claim``) the reported interval is the
    anytime one (``interval == "anytime"``), whether or not the rule ended the campaign
    early, and ``stopped`` says why it stopped. Without one the fixed-n interval is
    reported; ``result.confidence_interval(method="anytime")`` gives the anytime one.

    The default estimator, ``"assisted"``, is beyond the thesis; the stratified baseline
    always uses its own stratified estimator, which estimates the unweighted pool average
    and so refuses a non-uniform ``pool_weights``, ``features`` and stopping rules. The
    estimators, batch-adaptive sampling (why it stays consistent, the shrinkage of its
    recalibration, what it measured), the stratified baseline, costs on ranking pools and
    the decision ``prediction`` apart from the beliefs ``predictions`` are explained on the
    *How it works* page of the documentation (``docs/how-it-works/index.md``); the
    model-assisted estimator and pool features on the *Model-assisted estimator* page
    (``docs/how-it-works/model-assisted.md``).

    References
    ----------
    C. Sawade, *Active Evaluation of Predictive Models*, PhD thesis, University of Potsdam,
    2013: Algorithm 2, eq. 3.31, Thm 4.1, Thm 4.2; Ch. 6 for ranking functions.

    P. N. Bennett and V. R. Carvalho, "Online stratified sampling: evaluating classifiers at
    web-scale", CIKM 2010 (``method="stratified"``).

    Examples
    --------
    A pool of 500 instances, a classifier's class probabilities, and an oracle that knows
    the labels:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, size=500)
    >>> proba = np.column_stack([1 - p1, p1])
    >>> y = (rng.uniform(size=500) < p1).astype(int)
    >>> res = ae.evaluate(proba, lambda idx: y[idx], "error_rate", budget=100, random_state=1)
    >>> print(f"{res.estimate:.3f} [{res.ci[0]:.3f}, {res.ci[1]:.3f}], {res.n_labels} labels")
    0.265 [0.198, 0.344], 100 labels
    >>> print(f"{float((proba.argmax(axis=1) != y).mean()):.3f}")  # the truth, all 500 labels
    0.260
    """
    if is_dask(predictions):
        _check_bandwidth(bandwidth)  # what the NumPy path checks of options unused here
        estimator = check_option(estimator, ESTIMATORS, "estimator")
        return evaluate_dask(
            predictions, oracle, measure, budget, method, level, random_state,
            pos_label=pos_label, floor=floor, mix=mix, max_draws=max_draws, progress=progress,
            target_width=target_width, claim=claim, rule=rule, step=step, estimator=estimator,
            prediction=prediction, costs=costs,
            refused={
                "pool_weights": pool_weights, "q": q, "batch_size": batch_size,
                "features": features, "groups": groups, "reuse": reuse,
            },
        )  # fmt: skip
    if _is_ranking(predictions):
        refuse_ranked_decision(prediction)
        if reuse is not None:
            raise UnknownOptionError(
                "reuse: a ranked pool's queries are not reused yet; run the campaign afresh."
            )
        if groups is not None:
            raise UnknownOptionError(
                "groups: per-group estimates are for pools of instances; a ranked pool's "
                "queries are estimated together (evaluate each group's queries separately)."
            )
        _no_features(features, RankedPool.refuses_features)
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress, False, 0.05, step, (target_width, claim, False, rule),
        )  # fmt: skip
        return _evaluate_ranking(predictions, oracle, measure, settings, q, batch_size)
    predictive = decided(as_predictive(predictions), prediction, "prediction")
    meas = get_measure(measure, pos_label=pos_label)
    refuse_decision(meas, prediction is not None)
    check_fits(meas, predictive)
    meas = meas.bind(predictive)
    reused = None
    if reuse is not None:
        refuse_reuse(target_width=target_width, claim=claim, step=step, batch_size=batch_size,
                     groups=groups, features=features)  # fmt: skip
        if method == "stratified":
            raise UnknownOptionError(
                "method: the stratified baseline draws without one q, so its draws cannot be "
                "weighed with reused ones; use method='active' or 'passive' with reuse=."
            )
        reused = Reused.of(reuse, predictive.n)
    if groups is not None:
        refuse_groups("evaluate", target_width=target_width, claim=claim, step=step,
                      batch_size=batch_size, features=features)  # fmt: skip
        if isinstance(meas, ProbabilityMeasure):
            refuse_probability(meas, prediction=prediction)
        if method == "stratified":
            raise UnknownOptionError(
                "method: with groups= the campaign samples from q planned for the groups "
                "('active') or from p ('passive'); the stratified baseline has strata of its own."
            )
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress,
        )  # fmt: skip
        return _evaluate_groups(predictive, oracle, meas, settings, q, floor, groups,
                                group_design)  # fmt: skip
    if isinstance(meas, ClasswiseMeasure):
        ClasswisePool.refuse(meas, target_width=target_width, claim=claim, step=step,
                             batch_size=batch_size, features=features)  # fmt: skip
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress,
        )  # fmt: skip
        return _evaluate_classwise(predictive, oracle, meas, settings, q, floor, reused)
    if isinstance(meas, ProbabilityMeasure):
        refuse_probability(meas, prediction=prediction, target_width=target_width, claim=claim,
                           step=step, batch_size=batch_size, features=features)  # fmt: skip
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress,
        )  # fmt: skip
        return _evaluate_probability(predictive, oracle, meas, settings, q, floor, reused)
    stop = stopping_rule(target_width, claim, False, rule, measure=meas)
    _check_step(step, stop is not None, batch_size)
    method = check_option(method, PlainPool.evaluate_methods, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    check_safeguards(mix, floor)
    snis_or_strata = estimator == "snis" or (method == "stratified" and q is None)
    where = f"estimator={estimator!r}, method={method!r}" if snis_or_strata else ""
    PlainPool.check_features(features, bandwidth, predictive.n, where)  # before any label
    lam = check_costs(costs, predictive.n)
    lv = check_level(level)
    b = check_budget(budget, lam)
    if not callable(oracle):
        raise ShapeError("oracle: must be a callable mapping pool indices to labels.")
    rng = check_random_state(random_state)
    max_draws = check_max_draws(max_draws, b, lam)
    _check_batch_size(batch_size, lam, method, q)
    if method == "stratified" and q is None:
        _check_strata(n_strata, predictive.n, pool_weights)
        if stop is not None:
            raise UnknownOptionError(
                "method: the stratified baseline has no anytime-valid interval, so no stopping "
                "rule; use method='active' or drop target_width= and claim=."
            )
    pw = pool_distribution(predictive.n, pool_weights)
    refuse_undefined(meas, [predictive], pw)
    with _bar(b, lam, progress) as bar:
        if method == "stratified" and q is None:
            res = _stratified(predictive, oracle, meas, b, lam, lv, rng, n_strata, bar)
            if res.n_labels == 0:
                raise _no_label_bought(budget, lam)
            return res
        if q is not None:
            qq = check_distribution(q, "q", predictive.n)
            f = predictive.point_prediction()
            check_support(qq, meas.weight_can_be_positive(f) & (pw > 0))
        else:
            qq = sampling_distribution(
                method, predictive, meas, costs=lam, pool_weights=pool_weights, floor=floor, mix=mix
            )
            qq.flags.writeable = False  # the campaign's record of what it drew from
        pool = PlainPool([predictive], meas, pw)
        book, check = pool.label_book()
        if reused is not None:
            reused.prefill(book, check)
        acq = _Acquisition(qq, oracle, check, lam, rng, max_draws, bar, book=book)
        rep = pool.reporting(qq, lv, estimator, features, bandwidth)
        horizon = horizon_draws(b, qq, lam)
        window = window_draws(stop, pool, rep, horizon)
        look = None if stop is None else _Look(stop, pool, rep, acq, horizon, window)
        stopped = None
        if batch_size is None:
            _draws, stopped = _run_looks(acq, b, _stop_step(acq, b, step), look)
        else:
            replan = Replanning(predictive, meas, method, lam, pool_weights, floor, mix)
            stopped = _run_in_batches(acq, float(batch_size), b, replan, look)
    acq.warn_if_capped(b)
    acq.require_labels(budget, reused is not None)
    if reused is not None:  # every draw, old and new, weighted by the mixture of the two q
        draws, mixture = reused.combined(acq.draws, qq)
        rep = pool.reporting(mixture, lv, estimator, features, bandwidth)
        y = book.lookup(draws)
        est, interval = pool.estimate(rep, 0, draws, y)
        return EvaluationResult(
            **_result_fields(rep, est, interval), cost=acq.spent, budget=b, method=method,
            indices=draws, q=mixture[draws], **pool.label_fields(y), pool_q=mixture,
        )  # fmt: skip
    draws = acq.draws
    y = book.lookup(draws)
    # Batch-adaptive: q changed between batches, so every draw is weighted by its own q.
    draw_q = acq.draw_q if acq.switched else None
    est, interval = pool.estimate(rep, 0, draws, y, draw_q)
    res = EvaluationResult(
        **_result_fields(rep, est, interval), cost=acq.spent, budget=b, method=method,
        indices=draws, q=acq.draw_q, **pool.label_fields(y), stopped=stopped,
        pool_q=None if acq.switched else qq,
        anytime_terms=LazyTerms(pool, rep, draws, y, horizon, draw_q, window=window),
    )  # fmt: skip
    return reported(res, stop)
