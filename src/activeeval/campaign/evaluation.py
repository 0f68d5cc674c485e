"""``evaluate``: validate → plan q → acquire → report, for one model."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from .._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_random_state,
    check_safeguards,
    pool_distribution,
)
from ..errors import (
    ShapeError,
    UnknownOptionError,
)
from ..estimators.report import (
    LazyTerms,
    PlainPool,
    RankedPool,
    _no_features,
    _result_fields,
)
from ..estimators.smoother import DEFAULT_BANDWIDTH
from ..measures import Measure, check_fits, get_measure
from ..methods import (
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    ESTIMATORS,
)
from ..predictive import (
    as_predictive,
    decided,
)
from ..results import EvaluationResult
from ..sampling import (
    check_distribution,
    check_support,
    sampling_distribution,
)
from ..stopping import horizon_draws, reported, stopping_rule, window_draws
from .batches import Replanning, _check_batch_size, _run_in_batches
from .ranked import _evaluate_ranking, _is_ranking
from .steps import (
    CampaignSettings,
    Oracle,
    _Acquisition,
    _bar,
    _Look,
    _no_label_bought,
    _run_looks,
    _check_step,
    _stop_step,
)
from .stratified import _check_strata, _stratified


def evaluate(
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
) -> EvaluationResult:
    """Estimate a model's performance on the pool from labels bought within a budget.

    Parameters
    ----------
    predictions : (m, K) array, Categorical, Gaussian, Mixture or GradedRelevance
        The model's predictive distribution on every pool instance; for a ranking function,
        its ranked lists with per-item grade distributions over a pool of m queries
        (thesis Ch. 6).
    oracle : callable
        ``oracle(indices) -> labels`` for pool indices never asked before; deterministic. For
        a ranking pool it receives query indices and returns the grades of every item of each
        query, in the ranker's order, concatenated (or a list with one array per query).
    measure : Measure or str
        ``"error_rate"``, ``"accuracy"``, ``"mse"``, ``"mae"``, ``"f1"``, ``"precision"``,
        ``"recall"`` or a measure object; for rankings ``"dcg"``, ``"err"``, ``DCG(k)`` or
        ``ERR(k, max_grade)``.
    budget : float
        Number of labels, or total cost Λ when ``costs`` are given (Sec. 4.3). Ranking pools:
        number of queries, or Λ in query-cost units when the GradedRelevance has item costs
        (a query costs its items' summed cost, scaled to mean one; Sec. 6.3).
    method : str
        ``"active"`` (q*, cost-sensitive with costs; Thm 4.1/4.2), ``"passive"`` (q = p),
        ``"stratified"`` (Bennett & Carvalho, 2010), ``"active_lambda"`` (q ∝ λ^(-1/2)),
        ``"active_uniC"`` (q* ignoring costs). Ranking pools: one of
        :data:`~activeeval.methods.RANKING_METHODS` (eq. 6.10 and the baselines of Sec. 6.3).
    costs : array-like of shape (m,), optional
        Labeling cost per pool instance; the budget is then in cost units. Ranking pools
        default to the items' summed costs.
    level : float
        Confidence level of ``ci``.
    random_state : None, int or numpy Generator
        Seed of the draws.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the pool (up to a constant); uniform by default.
    q : array-like of shape (m,), optional
        A sampling distribution of your own, overriding ``method``'s.
    floor, mix : float
        Safeguards of :func:`~activeeval.sampling.optimal_distribution`.
    n_strata : int
        Strata (≥ 1) for ``method="stratified"``, which estimates the unweighted pool
        average: it refuses a non-uniform ``pool_weights`` and ``features``.
    estimator : {"assisted", "snis"}
        ``"assisted"`` (default): the model-assisted estimator with power tuning
        (:mod:`activeeval.estimators.assisted`), which uses the model's expected loss on the whole
        pool as a control variate; ``"snis"``: the thesis's self-normalized estimator (eq. 3.31),
        for reproduction, which weights every draw by the q it was drawn from. The assisted
        estimator uses each distinct labeled instance once with weight p/π, π its
        successive-sampling inclusion probability, and the finite-population factor 1 − π in
        its variance (:mod:`activeeval.estimators.assisted`, "Finite pools"); after batch-adaptive
        sampling, whose q changes, it weights every draw by its own q instead. The stratified
        baseline always uses its own stratified estimator. On ranking pools the assisted
        estimator's control variate is the model's E[ℓ(r(x), y) | x] per query (App. A.1).
    batch_size : float, optional
        Batch-adaptive sampling: buy labels ``batch_size`` (labels, or cost units) at a time,
        recalibrate the model's predictive distribution on the labels so far
        (:func:`~activeeval.predictive.recalibrate`, weighted by p/q) and recompute q for the
        next batch. Every draw keeps the q it was drawn from in the estimator, which keeps it
        consistent: each draw's importance-weighted term has conditional mean G's numerator
        (resp. denominator) given the past, so the sums are martingales and the strong law
        for martingale differences applies (the control variate of the assisted estimator is
        the initial model's, fixed in advance). The draw that ends a batch (the first its
        budget cannot pay) is bought in the next, whatever it costs: turning it away would
        select against expensive instances. With ``features`` the smoother and its
        coefficient are fitted on all the labels, as in a static campaign; there the
        argument holds only for the plain difference estimator (an audit measured no added
        bias). Only for ``"active"`` and ``"active_uniC"`` without ``q``. The recalibrated
        distribution is shrunk toward the model's, as if the model counted for
        :data:`RECALIBRATION_PRIOR` labels: an isotonic fit on a first batch with few positives
        sets p(pos) = 0 on much of the pool, where q then kept only the defensive mix (recall
        at 100 labels in batches of 20 on a pool with 7.75% positives covered 0.76; shrunk,
        0.96). Batch-adaptive sampling is not the default: on the benchmark tasks it does not
        beat the static q* (``docs/results/batch_adaptive.md``).
    max_draws : int, optional
        Cap on draws (repeats of labeled instances are free); default 20·budget + 1000.
    progress : bool, optional
        Show a progress bar; by default one appears only if the campaign runs over a second.
    features : array-like of shape (m, d), optional
        The pool's features (numeric, one row per instance) for the model-assisted
        estimator: the labeled residuals, kernel-smoothed over the standardized features,
        become a second control variate with its own tuned coefficient
        (:mod:`activeeval.estimators.assisted`, "Pool features"). It pays where neighbours share
        labels the model gets wrong (near-duplicates, locally miscalibrated regions) and
        costs nothing measurable elsewhere; O(m·n·d) time.
    bandwidth : float
        The smoother's Gaussian kernel bandwidth on the standardized features; with the
        default, in 10 or more dimensions only near-duplicates are neighbours.
    prediction : array-like of shape (m,), optional
        The decision f(x) the measure scores — a tuned threshold's labels, a rule's, another
        model's — when it is not the mode (classifier) or mean (regressor) of
        ``predictions``, which then stay the beliefs p(y | x) that choose q and the control
        variate (Thm 4.1 takes f and p(y | x) apart).
    target_width : float, optional
        Stop once the interval is at most this wide (:mod:`activeeval.stopping`); the budget
        stays the cap.
    claim : str or Claim, optional
        Stop once a claim such as ``"f1 >= 0.80"`` or ``"error_rate <= 5%"`` is settled
        either way (established or refuted by the one-sided bounds at ``level``).
    rule : {"anytime", "fixed-width"}
        With a stopping rule: ``"anytime"`` (default) looks at the anytime-valid confidence
        sequence and reports its interval (``interval == "anytime"``), valid at the
        data-dependent stop; ``"fixed-width"`` (``target_width`` only) is Chow–Robbins':
        stops when the fixed-n interval is narrow enough and reports it — fewer labels,
        coverage only asymptotic.
    step : float, optional
        Labels (or cost) between looks under a stopping rule; default budget / 100. With
        ``batch_size`` the looks are the batches.

    Any stopping rule set makes the reported interval the anytime one, whether or not it
    stopped the campaign early (the looks were taken); :attr:`EvaluationResult.stopped` says
    why it stopped. Without one, the fixed-n interval is reported and
    ``result.confidence_interval(method="anytime")`` gives the anytime one on request.

    Returns
    -------
    EvaluationResult

    References
    ----------
    Thesis Algorithm 2, Thm 4.1, Thm 4.2; Bennett & Carvalho (2010) for ``stratified``.
    """
    if _is_ranking(predictions):
        _no_features(features, RankedPool.refuses_features)
        settings = CampaignSettings(
            budget, method, costs, level, random_state, pool_weights, mix, estimator, max_draws,
            progress, False, 0.05, step, (target_width, claim, False, rule),
        )  # fmt: skip
        return _evaluate_ranking(predictions, oracle, measure, settings, q, batch_size)
    predictive = decided(as_predictive(predictions), prediction, "prediction")
    meas = get_measure(measure, pos_label=pos_label)
    check_fits(meas, predictive)
    meas = meas.bind(predictive)
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
    with _bar(b, lam, progress) as bar:
        if method == "stratified" and q is None:
            res = _stratified(predictive, oracle, meas, b, lam, lv, rng, n_strata, bar)
            if res.n_labels == 0:
                raise _no_label_bought(budget, lam)
            return res
        if q is not None:
            qq = check_distribution(q, "q", predictive.n)
            f = predictive.point_prediction()
            pw = pool_distribution(predictive.n, pool_weights)
            check_support(qq, meas.weight_can_be_positive(f) & (pw > 0))
        else:
            qq = sampling_distribution(
                method, predictive, meas, costs=lam, pool_weights=pool_weights, floor=floor, mix=mix
            )
            pw = pool_distribution(predictive.n, pool_weights)  # checked by q's planning
        pool = PlainPool([predictive], meas, pw)
        book, check = pool.label_book()
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
    if acq.draws.size == 0:
        raise _no_label_bought(budget, lam)
    draws = acq.draws
    y = book.lookup(draws)
    # Batch-adaptive: q changed between batches, so every draw is weighted by its own q.
    draw_q = acq.draw_q if acq.switched else None
    est, interval = pool.estimate(rep, 0, draws, y, draw_q)
    res = EvaluationResult(
        **_result_fields(rep, est, interval), cost=acq.spent, budget=b, method=method,
        indices=draws, q=acq.draw_q, **pool.label_fields(y), stopped=stopped,
        anytime_terms=LazyTerms(pool, rep, draws, y, horizon, draw_q, window=window),
    )  # fmt: skip
    return reported(res, stop)
