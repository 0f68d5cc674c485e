"""Campaigns on ranked pools (Ch. 6): one ranker's DCG/ERR, or two rankers' difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_random_state,
    pool_distribution,
)
from ..acquisition import (
    _GradeBook,
)
from ..errors import (
    ShapeError,
)
from ..estimators.inference import (
    Comparison,
)
from ..estimators.report import (
    _ranking_comparison,
    _ranking_estimate,
    _ranking_pair_pools,
)
from ..methods import (
    ESTIMATORS,
    RANKING_METHODS,
)
from ..ranking import (
    GradedRelevance,
    _bind_for_labels,
    _check_pair,
    ranking_distribution,
    ranking_pair_values,
    ranking_query_costs,
    ranking_union,
    ranking_values,
)
from ..results import ComparisonResult, EvaluationResult
from ..sampling import (
    check_distribution,
    check_support,
)
from .steps import (
    Oracle,
    _Acquisition,
    _bar,
    _evaluation_result,
    _no_label_bought,
    _p_and_se,
    _run_comparison,
)


def _is_ranking(predictions: Any) -> bool:
    if isinstance(predictions, GradedRelevance):
        return True
    return (
        isinstance(predictions, list | tuple)
        and len(predictions) > 0
        and all(isinstance(r, GradedRelevance) for r in predictions)
    )


def _ranking_setup(
    m: int,
    costs: ArrayLike | None,
    default_costs: NDArray[np.float64] | None,
    budget: float,
    level: float,
    oracle: Any,
    max_draws: int | None,
) -> tuple[NDArray[np.float64] | None, float, float, int]:
    """Query costs λ (given, else the items' summed costs), budget, level and draw cap."""
    lam = check_costs(costs, m) if costs is not None else default_costs
    lv = check_level(level)
    b = check_budget(budget, lam)
    if not callable(oracle):
        raise ShapeError("oracle: must be a callable mapping query indices to graded labels.")
    return lam, b, lv, check_max_draws(max_draws, b, lam)


def _evaluate_ranking(
    rel: GradedRelevance,
    oracle: Oracle,
    measure: Any,
    budget: float,
    method: str,
    costs: ArrayLike | None,
    level: float,
    random_state: Any,
    pool_weights: ArrayLike | None,
    q: ArrayLike | None,
    mix: float,
    estimator: str,
    batch_size: float | None,
    max_draws: int | None,
    progress: bool | None,
) -> EvaluationResult:
    """:func:`evaluate` on a pool of ranked queries (thesis Sec. 6.2, Algorithm 2)."""
    meas = _bind_for_labels(measure, rel)
    method = check_option(method, RANKING_METHODS, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    if batch_size is not None:
        raise ShapeError(
            "batch_size: batch-adaptive recalibration is not available for ranking pools; "
            "leave batch_size=None."
        )
    lam, b, lv, max_draws = _ranking_setup(
        rel.n, costs, ranking_query_costs(rel), budget, level, oracle, max_draws
    )
    pw = pool_distribution(rel.n, pool_weights)
    if q is not None:
        qq = check_distribution(q, "q", rel.n)
        check_support(qq, pw > 0)
    else:
        qq = ranking_distribution(
            rel, meas, costs=lam, method=method, mix=mix, pool_weights=pool_weights
        )
    book = _GradeBook(rel.lengths, rel.n_grades)
    rng = check_random_state(random_state)
    with _bar(b, lam, progress) as bar:
        acq = _Acquisition(qq, oracle, book.accept, lam, rng, max_draws, bar, book=book)
        acq.run(b)
    acq.warn_if_capped(b, stacklevel=4)  # from evaluate
    if acq.draws.size == 0:
        raise _no_label_bought(budget, lam)
    draws, draw_q = acq.draws, acq.draw_q
    flat, offsets = book.grades(book.lookup(draws))
    values = ranking_values(meas, flat, offsets)
    est = _ranking_estimate(meas, rel, draws, values, qq, pw, lv, estimator)
    return _evaluation_result(est, lv, acq.spent, b, method, draws, draw_q, flat, meas, offsets)


def _compare_ranking(
    rels: Sequence[GradedRelevance],
    oracle: Oracle,
    measure: Any,
    budget: float,
    method: str,
    costs: ArrayLike | None,
    level: float,
    random_state: Any,
    pool_weights: ArrayLike | None,
    mix: float,
    sequential: bool,
    alpha: float,
    step: float | None,
    estimator: str,
    max_draws: int | None,
    progress: bool | None,
) -> ComparisonResult:
    """:func:`compare` for two rankers on a pool of queries (thesis Sec. 6.2, Algorithm 3):
    the union of both lists is labeled; the paired test runs on per-query values."""
    if len(rels) != 2:
        raise ShapeError(
            f"predictions: ranking comparisons take exactly two rankers, got {len(rels)}; "
            "compare them pairwise."
        )
    rel1, rel2 = _check_pair(rels[0], rels[1])
    meas = _bind_for_labels(measure, rel1, rel2)
    method = check_option(method, RANKING_METHODS, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    alpha = check_level(alpha, "alpha")
    lam, b, lv, max_draws = _ranking_setup(
        rel1.n, costs, ranking_query_costs(rel1, rel2), budget, level, oracle, max_draws
    )
    pw = pool_distribution(rel1.n, pool_weights)
    qq = ranking_distribution(
        [rel1, rel2], meas, costs=lam, method=method, mix=mix, pool_weights=pool_weights
    )
    union_offsets = ranking_union(rel1, rel2)[1]
    book = _GradeBook(np.diff(union_offsets), rel1.n_grades)
    pools = _ranking_pair_pools(rel1, rel2, meas, pw) if estimator == "assisted" else None

    def test(draws: NDArray[np.intp], census: bool = False) -> Comparison:
        flat, _ = book.grades(book.lookup(draws))
        values = ranking_pair_values(rel1, rel2, meas, draws, flat)
        return _ranking_comparison(meas, draws, values, qq, pw, lv, estimator, pools, census)

    rng = check_random_state(random_state)
    with _bar(b, lam, progress) as bar:
        acq = _Acquisition(qq, oracle, book.accept, lam, rng, max_draws, bar, book=book)
        draws, stopped_early = _run_comparison(
            acq, b, sequential, step, alpha, lambda d: _p_and_se(test(d))
        )
    acq.warn_if_capped(b, stacklevel=4)  # from compare
    c = test(draws, census=True)
    flat, offsets = book.grades(book.lookup(draws))
    return ComparisonResult(
        difference=c.difference,
        stderr=c.stderr,
        p_value=c.p_value,
        ci=c.confidence_interval(lv),
        best=c.best,
        estimates=np.array(c.estimates),
        level=lv,
        n_labels=int(book.known.sum()),
        n_draws=int(draws.shape[0]),
        cost=acq.spent,
        budget=b,
        method=method,
        measure=meas.name,
        indices=draws,
        q=qq[draws],
        labels=flat,
        comparison=c,
        stopped_early=stopped_early,
        label_offsets=offsets,
    )
