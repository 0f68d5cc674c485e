"""Campaigns on ranked pools (Ch. 6): one ranker's DCG/ERR, or two rankers' difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_level,
    check_option,
    check_random_state,
    pool_distribution,
)
from ..errors import (
    ShapeError,
)
from ..estimators.report import (
    LazyTerms,
    RankedPool,
    _result_fields,
)
from ..methods import (
    ESTIMATORS,
)
from ..ranking import (
    GradedRelevance,
    _bind_for_labels,
    _check_pair,
    ranking_distribution,
    ranking_query_costs,
)
from ..results import ComparisonResult, EvaluationResult
from ..sampling import (
    check_distribution,
    check_support,
)
from ..stopping import comparison_rule, horizon_draws, reported, stopping_rule, window_draws
from .steps import (
    CampaignSettings,
    Oracle,
    _Acquisition,
    _bar,
    _check_step,
    _comparison_result,
    _fixed_setup,
    _Look,
    _no_label_bought,
    _run_comparison,
    _run_looks,
    _stop_step,
)


def _is_ranking(predictions: Any) -> bool:
    if isinstance(predictions, GradedRelevance):
        return True
    return (
        isinstance(predictions, list | tuple)
        and len(predictions) > 0
        and all(isinstance(r, GradedRelevance) for r in predictions)
    )


#: What a ranking campaign's oracle maps (its error message).
_GRADES = "query indices to graded labels"


def _evaluate_ranking(
    rel: GradedRelevance,
    oracle: Oracle,
    measure: Any,
    settings: CampaignSettings,
    q: ArrayLike | None,
    batch_size: float | None,
) -> EvaluationResult:
    """:func:`evaluate` on a pool of ranked queries (thesis Sec. 6.2, Algorithm 2)."""
    s = settings
    meas = _bind_for_labels(measure, rel)
    width, claim, _decide, rule = s.stopping
    stop = stopping_rule(width, claim, False, rule, measure=meas)
    _check_step(s.step, stop is not None)
    method = check_option(s.method, RankedPool.evaluate_methods, "method")
    estimator = check_option(s.estimator, ESTIMATORS, "estimator")
    if batch_size is not None:
        raise ShapeError(
            "batch_size: batch-adaptive recalibration is not available for ranking pools; "
            "leave batch_size=None."
        )
    default_costs = ranking_query_costs(rel)
    lam, b, lv, max_draws = _fixed_setup(
        rel.n, s.costs, default_costs, s.budget, s.level, oracle, s.max_draws, _GRADES
    )
    pw = pool_distribution(rel.n, s.pool_weights)
    if q is not None:
        qq = check_distribution(q, "q", rel.n)
        check_support(qq, pw > 0)
    else:
        qq = ranking_distribution(
            rel, meas, costs=lam, method=method, mix=s.mix, pool_weights=s.pool_weights
        )
    pool = RankedPool([rel], meas, pw)
    book, check = pool.label_book()
    rng = check_random_state(s.random_state)
    rep = pool.reporting(qq, lv, estimator)
    horizon = horizon_draws(b, qq, lam)
    window = window_draws(stop, pool, rep, horizon)
    with _bar(b, lam, s.progress) as bar:
        acq = _Acquisition(qq, oracle, check, lam, rng, max_draws, bar, book=book)
        watch = None if stop is None else _Look(stop, pool, rep, acq, horizon, window)
        _draws, stopped = _run_looks(acq, b, _stop_step(acq, b, s.step), watch)
    acq.warn_if_capped(b, stacklevel=4)  # from evaluate
    if acq.draws.size == 0:
        raise _no_label_bought(s.budget, lam)
    draws = acq.draws
    y = book.lookup(draws)
    est, interval = pool.estimate(rep, 0, draws, y)
    res = EvaluationResult(
        **_result_fields(rep, est, interval), cost=acq.spent, budget=b, method=method,
        indices=draws, q=acq.draw_q, **pool.label_fields(y), stopped=stopped,
        anytime_terms=LazyTerms(pool, rep, draws, y, horizon, window=window),
    )  # fmt: skip
    return reported(res, stop)


def _compare_ranking(
    rels: Sequence[GradedRelevance], oracle: Oracle, measure: Any, settings: CampaignSettings
) -> ComparisonResult:
    """:func:`compare` for two rankers on a pool of queries (thesis Sec. 6.2, Algorithm 3):
    the union of both lists is labeled; the paired test runs on per-query values."""
    s = settings
    if len(rels) != 2:
        raise ShapeError(
            f"predictions: ranking comparisons take exactly two rankers, got {len(rels)}; "
            "compare them pairwise."
        )
    rel1, rel2 = _check_pair(rels[0], rels[1])
    meas = _bind_for_labels(measure, rel1, rel2)
    width, claim, decide, rule = s.stopping
    stop = comparison_rule(width, claim, decide, rule, meas, 2, s.sequential)
    _check_step(s.step, stop is not None or s.sequential)
    method = check_option(s.method, RankedPool.compare_methods, "method")
    estimator = check_option(s.estimator, ESTIMATORS, "estimator")
    alpha = check_level(s.alpha, "alpha")
    default_costs = ranking_query_costs(rel1, rel2)
    lam, b, lv, max_draws = _fixed_setup(
        rel1.n, s.costs, default_costs, s.budget, s.level, oracle, s.max_draws, _GRADES
    )
    pw = pool_distribution(rel1.n, s.pool_weights)
    qq = ranking_distribution(
        [rel1, rel2], meas, costs=lam, method=method, mix=s.mix, pool_weights=s.pool_weights
    )
    pool = RankedPool([rel1, rel2], meas, pw)
    book, check = pool.label_book()
    rep = pool.reporting(qq, lv, estimator)
    if estimator == "assisted":
        pool.moments()  # the control variate's pool moments, before any label is bought

    def look(draws: NDArray[np.intp]) -> tuple[float, float]:
        c = pool.compare(rep, draws, book.lookup(draws))
        return c.p_value, c.stderr

    rng = check_random_state(s.random_state)
    horizon = horizon_draws(b, qq, lam)
    with _bar(b, lam, s.progress) as bar:
        acq = _Acquisition(qq, oracle, check, lam, rng, max_draws, bar, book=book)
        if stop is None:
            draws, stopped = _run_comparison(acq, b, s.sequential, s.step, alpha, look)
        else:
            watch = _Look(stop, pool, rep, acq, horizon)
            draws, stopped = _run_looks(acq, b, _stop_step(acq, b, s.step), watch)
    acq.warn_if_capped(b, stacklevel=4)  # from compare
    y = book.lookup(draws)
    c = pool.compare(rep, draws, y, census=True)
    sample = {"budget": b, "method": method, "indices": draws, "q": qq[draws]}
    terms = LazyTerms(pool, rep, draws, y, horizon)
    res = _comparison_result(rep, c, acq, {**sample, **pool.label_fields(y)}, stopped, terms)
    return reported(res, stop)
