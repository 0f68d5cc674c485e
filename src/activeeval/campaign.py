"""Evaluation campaigns against a labeling oracle (thesis Algorithm 2).

``evaluate`` draws pool instances i.i.d. from an instrumental distribution, asks the oracle only
for instances it has not labeled before (a deterministic oracle is the common case, so a
repeated draw costs nothing), and stops at the first draw whose label the remaining budget can
no longer pay for. The budget counts labels, or cost units Λ when per-instance costs are given
(Thm 4.2: about n* = Λ / E_q[λ] draws). The walk is :mod:`activeeval.acquisition`'s, shared
with sessions; the draws, their sampling probabilities and the labels go to
:mod:`activeeval.estimators.report`, which gives what campaigns and sessions report.

``method="stratified"`` is the baseline of Bennett & Carvalho (2010): equal-count strata on the
model's confidence, labels allocated to strata in batches in proportion to N_h·σ̂_h (Neyman),
σ̂_h re-estimated as labels arrive, sampling without replacement within strata.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from tqdm.auto import tqdm

from ._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_random_state,
    check_safeguards,
    pool_distribution,
    real_number,
)
from .acquisition import (
    Check,
    _budget_room,
    _GradeBook,
    _label_check,
    _LabelBook,
    _walk_block,
)
from .errors import (
    ActiveEvalWarning,
    BudgetError,
    DegenerateIntervalWarning,
    OracleError,
    ShapeError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from .estimators.assisted import assisted_estimate
from .estimators.inference import (
    Comparison,
    Estimate,
    estimate,
)
from .estimators.report import (
    _census,
    _check_features,
    _compare_sample,
    _no_features,
    _ranking_comparison,
    _ranking_estimate,
    _ranking_pair_pools,
    _reported,
    _static_estimate,
)
from .estimators.smoother import DEFAULT_BANDWIDTH
from .measures import Measure, get_measure
from .methods import (
    COMPARISON_METHODS,
    DEFAULT_FLOOR,
    DEFAULT_MIX,
    ESTIMATORS,
    EVALUATE_METHODS,
    RANKING_METHODS,
)
from .predictive import (
    Categorical,
    Gaussian,
    Mixture,
    Predictive,
    as_predictive,
    recalibrate,
)
from .ranking import (
    GradedRelevance,
    _bind_for_labels,
    _check_pair,
    ranking_distribution,
    ranking_pair_values,
    ranking_query_costs,
    ranking_union,
    ranking_values,
)
from .results import ComparisonResult, EvaluationResult
from .sampling import (
    check_distribution,
    check_support,
    comparison_distribution,
    draw,
    sampling_distribution,
)

__all__ = ["ComparisonResult", "EvaluationResult", "compare", "evaluate"]

Oracle = Callable[[NDArray[np.intp]], ArrayLike]


def _ask(oracle: Oracle, check: Check, book: _LabelBook, idx: NDArray[np.intp]) -> None:
    if idx.size == 0:
        return
    try:
        got = oracle(idx)
        y = check(got, idx)
    except (KeyboardInterrupt, SystemExit) as exc:
        setattr(exc, "acquired", book.export())  # noqa: B010  (nothing is lost)
        raise
    except Exception as exc:
        n = int(book.known.sum())
        raise OracleError(
            f"oracle: failed on {idx.shape[0]} indices ({exc}); the {n} labels acquired before "
            "are kept in the exception's .acquired attribute.",
            book.export(),
        ) from exc
    book.add(idx, y)


class _Acquisition:
    """Algorithm 2's loop — draw, label what is new, stop at the first draw the budget cannot
    pay (:func:`~activeeval.acquisition._walk_block`) — a chunk of draws at a time. It can be
    resumed with a larger budget (the sequential protocol): the draw that stopped it stays first
    in line, so the draws remain an i.i.d. sequence from q."""

    def __init__(
        self,
        q: NDArray[np.float64],
        oracle: Oracle,
        check: Check,
        costs: NDArray[np.float64] | None,
        rng: np.random.Generator,
        max_draws: int,
        bar: Any,
        book: _LabelBook | None = None,
    ) -> None:
        self.q, self.oracle, self.check = q, oracle, check
        self.costs, self.rng, self.max_draws, self.bar = costs, rng, max_draws, bar
        self.book = _LabelBook(q.shape[0]) if book is None else book
        self.price = np.ones(q.shape[0]) if costs is None else costs
        self.support = q > 0
        self.left = int(self.support.sum()) - int(self.book.known[self.support].sum())
        self.spent = 0.0
        self.kept: list[NDArray[np.intp]] = []
        self.kept_q: list[NDArray[np.float64]] = []
        self.n_kept = 0
        self.pending = np.empty(0, dtype=np.intp)
        self.pending_q = np.empty(0)  # the q each pending draw was drawn from
        self.switched = False  # True once q has changed (batch-adaptive sampling)
        self.capped = False  # True when the draw cap stopped the last run

    @property
    def exhausted(self) -> bool:
        """Every instance with q > 0 is labeled: nothing is left to buy."""
        return self.left == 0

    @property
    def draws(self) -> NDArray[np.intp]:
        return np.concatenate(self.kept) if self.kept else np.empty(0, np.intp)

    @property
    def draw_q(self) -> NDArray[np.float64]:
        """The probability with which each kept draw was drawn (q may change between runs)."""
        return np.concatenate(self.kept_q) if self.kept_q else np.empty(0)

    def switch(self, q: NDArray[np.float64]) -> None:
        """Draw from ``q`` from now on. The draw that ended the batch (the first one its budget
        could not pay) stays first in line, weighted by the old q it was drawn from; later
        draws of its chunk, never looked at, are dropped. Each draw is then distributed as the
        q it was drawn from given the past, and is kept whatever it costs (the martingale
        argument of batch-adaptive sampling). Dropping that draw instead, as this did before,
        turned away the expensive draws at every batch end: with costs, a bias against them
        (−0.012 on an error rate in batches of 2 cost units, 4.5 MC standard errors)."""
        self.q = q
        self.switched = True
        self.pending, self.pending_q = self.pending[:1], self.pending_q[:1]
        self.support = q > 0
        self.left = int(self.support.sum()) - int(self.book.known[self.support].sum())

    def run(self, budget: float) -> None:
        costs = self.costs
        chunk = int(min(max(2 * budget, 64), 1_000_000)) if costs is None else 4096
        while True:
            block, block_q = self.pending, self.pending_q
            self.pending, self.pending_q = np.empty(0, dtype=np.intp), np.empty(0)
            step = _walk_block(
                block, self.book.known, self.price, _budget_room(budget, self.spent),
                support=self.support, left=self.left, draws_left=self.max_draws - self.n_kept,
            )  # fmt: skip
            if step.stop is None and block.size == 0:  # the walk goes on: draw a chunk
                self.pending = draw(self.q, min(chunk, self.max_draws - self.n_kept), self.rng)
                self.pending_q = self.q[self.pending]
                continue
            _ask(self.oracle, self.check, self.book, block[step.bought])
            self.spent += step.cost
            self.bar.update(step.bought.shape[0] if costs is None else step.cost)
            self.left = step.left
            self.kept.append(block[: step.consumed])
            self.kept_q.append(block_q[: step.consumed])
            self.n_kept += step.consumed
            if step.stop == "budget":  # the draw the budget cannot pay stays first in line
                self.pending, self.pending_q = block[step.consumed :], block_q[step.consumed :]
                return
            if step.stop is not None:
                self.capped = step.stop == "max_draws"
                return

    def warn_if_capped(self, budget: float, stacklevel: int = 3) -> None:
        """Warn once the campaign is over if the draw cap, not the budget, ended it."""
        if self.capped and self.spent < budget * (1 - 1e-9):
            warnings.warn(
                f"max_draws: the campaign reached its cap of {self.max_draws} draws with "
                f"{self.spent:g} of the budget {budget:g} spent (repeated draws of labeled "
                "instances are free but count toward the cap); the result uses the labels "
                "bought so far. Pass a larger max_draws to spend the whole budget.",
                ActiveEvalWarning,
                stacklevel=stacklevel,
            )


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

    Returns
    -------
    EvaluationResult

    References
    ----------
    Thesis Algorithm 2, Thm 4.1, Thm 4.2; Bennett & Carvalho (2010) for ``stratified``.
    """
    if _is_ranking(predictions):
        _no_features(features, "ranking pools")
        return _evaluate_ranking(
            predictions, oracle, measure, budget, method, costs, level, random_state,
            pool_weights, q, mix, estimator, batch_size, max_draws, progress,
        )  # fmt: skip
    predictive = as_predictive(predictions)
    meas = get_measure(measure, pos_label=pos_label).bind(predictive)
    method = check_option(method, EVALUATE_METHODS, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    check_safeguards(mix, floor)
    snis_or_strata = estimator == "snis" or (method == "stratified" and q is None)
    where = f"estimator={estimator!r}, method={method!r}" if snis_or_strata else ""
    _check_features(features, bandwidth, predictive.n, where)  # before any label is bought
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
        acq = _Acquisition(qq, oracle, _label_check(predictive), lam, rng, max_draws, bar)
        if batch_size is None:
            acq.run(b)
        else:
            _run_in_batches(
                acq, float(batch_size), b, predictive, meas, method, lam, pool_weights, floor, mix
            )
    acq.warn_if_capped(b)
    if acq.draws.size == 0:
        raise _no_label_bought(budget, lam)
    draws, spent, draw_q = acq.draws, acq.spent, acq.draw_q
    y = acq.book.lookup(draws)
    pw = pool_distribution(predictive.n, pool_weights)
    census = _census(meas, predictive, draws, y, pw, lv)  # once: it warns when undefined
    if acq.switched and census is None:
        # Batch-adaptive: q changed between batches, so every draw is weighted by the q it was
        # drawn from (draw_q), in the with-replacement form. Without the ratio-bias
        # correction, which assumes draws from one q: on email F1 at 200 labels in batches of
        # 50 it turned a bias of +0.0015 into −0.0081 and raised the MAE by 0.0048 ± 0.0010
        # (150 paired campaigns).
        est: Estimate
        if estimator == "assisted":
            est = assisted_estimate(
                meas, predictive, draws, y, draw_q, pool_weights=pw, level=lv,
                bias_correction=False, features=features, bandwidth=bandwidth,
            )  # fmt: skip
        else:
            est = estimate(
                meas, predictive.take(draws), y, draw_q, p=pw[draws], indices=draws, level=lv
            )
        interval = "logit" if estimator == "assisted" and est.binary_loss else "wald"
    else:
        est, interval = _static_estimate(
            meas, predictive, draws, y, qq, pw, lv, estimator, features, bandwidth, census=census
        )
    return _evaluation_result(est, lv, spent, b, method, draws, draw_q, y, meas, interval=interval)


def _check_batch_size(
    batch_size: Any, costs: NDArray[np.float64] | None, method: str, q: Any
) -> None:
    """Batch-adaptive sampling recomputes q*, so it needs a method that computes q* and no
    given q; a batch is a positive number of labels (whole) or of cost units."""
    if batch_size is None:
        return
    bs = real_number(batch_size)
    if not (math.isfinite(bs) and bs > 0):
        raise BudgetError(
            f"batch_size: must be a positive number of labels (of cost units with costs), got "
            f"{batch_size!r}; or None for a static q."
        )
    if costs is None and bs != math.floor(bs):
        raise BudgetError(
            f"batch_size: counts labels (no costs were given), so it must be a whole number, "
            f"got {batch_size!r}."
        )
    if costs is not None and bs < costs.min() * (1 - 1e-12):
        raise BudgetError(
            f"batch_size: {batch_size!r} cost units buy no label (the cheapest costs "
            f"{costs.min():g}); give at least that."
        )
    if method not in ("active", "active_uniC") or q is not None:
        used = "a given q" if q is not None else f"method={method!r}"
        raise UnknownOptionError(
            f"batch_size: batch-adaptive sampling recomputes q* from the recalibrated model, "
            f"which {used} does not do; use method='active' (or 'active_uniC') without q, or "
            "leave batch_size=None."
        )


def _evaluation_result(
    est: Estimate,
    lv: float,
    spent: float,
    b: float,
    method: str,
    draws: NDArray[np.intp],
    draw_q: NDArray[np.float64],
    labels: NDArray[Any],
    meas: Any,
    label_offsets: NDArray[np.int64] | None = None,
    interval: str = "wald",
) -> EvaluationResult:
    value, ci = _reported(est, lv, interval, meas)
    return EvaluationResult(
        estimate=value,
        stderr=est.stderr,
        ci=ci,
        level=lv,
        n_labels=est.n_labels,
        n_draws=est.n_draws,
        cost=spent,
        budget=b,
        method=method,
        measure=est.measure,
        indices=draws,
        q=draw_q,
        labels=labels,
        inference=est,
        label_offsets=label_offsets,
        interval=interval,
        value_range=meas.value_range,
    )


def _bar(b: float, lam: NDArray[np.float64] | None, progress: bool | None) -> Any:
    unit = "labels" if lam is None else "cost"
    return tqdm(total=b, unit=unit, delay=1.0, disable=progress is False, leave=False)


def _p_and_se(c: Comparison) -> tuple[float, float]:
    return c.p_value, c.stderr


def _look_step(acq: _Acquisition, b: float, step: Any) -> float:
    """The sequential looks' spacing: ``step``, or budget / 20 by default; never below the
    cheapest label where q > 0 (a smaller step would only add looks that buy nothing)."""
    unit = 1.0 if acq.costs is None else float(acq.costs[acq.support].min())
    if step is None:
        return max(b / 20, unit)
    s = real_number(step)
    if not (math.isfinite(s) and s >= unit * (1 - 1e-12)):
        raise BudgetError(
            f"step: the labels (cost units with costs) between sequential looks must be a "
            f"finite number of at least one label ({unit:g}, the cheapest), got {step!r}; or "
            "None for budget / 20."
        )
    return s


def _run_comparison(
    acq: _Acquisition,
    b: float,
    sequential: bool,
    step: float | None,
    alpha: float,
    p_value: Callable[[NDArray[np.intp]], tuple[float, float]],
) -> tuple[NDArray[np.intp], bool]:
    """Algorithm 3's loop; with ``sequential``, look every ``step`` and stop at p < alpha.
    ``p_value(draws)`` gives (p, stderr); a look with stderr 0 (e.g. a single draw, or only
    identical losses so far) carries no evidence and never stops the campaign, nor does a look
    before the first label (a step below one instance's cost)."""
    step_size = _look_step(acq, b, step) if sequential else b
    target = 0.0
    while True:
        target = min(b, target + step_size)
        acq.run(target)
        draws = acq.draws
        if not sequential or target >= b or acq.exhausted:
            return draws, False
        if draws.size == 0:
            continue
        with warnings.catch_warnings():  # a look with stderr 0 never stops: not warned
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            pv, se = p_value(draws)
        if se > 0 and pv < alpha:
            return draws, True


def _run_in_batches(
    acq: _Acquisition,
    batch: float,
    budget: float,
    predictive: Predictive,
    meas: Measure,
    method: str,
    costs: NDArray[np.float64] | None,
    pool_weights: ArrayLike | None,
    floor: float,
    mix: float,
) -> None:
    """Batch-adaptive Algorithm 2: recalibrate on the labels so far, recompute q, go on. The
    recalibrated distribution stands in for p(y | x) only: the losses and weights stay those
    of the evaluated model's predictions f (precision's q lives on f's predicted positives;
    the recalibrated model's would leave some of them at q = 0, a bias)."""
    pw = pool_distribution(predictive.n, pool_weights)
    f = predictive.point_prediction()
    target = 0.0
    while True:
        target = min(budget, target + batch)
        acq.run(target)
        if target >= budget or acq.exhausted or acq.n_kept >= acq.max_draws:
            return
        draws = acq.draws
        if draws.size == 0:
            continue
        v = pw[draws] / acq.draw_q
        current = _shrunk(
            recalibrate(predictive, draws, acq.book.lookup(draws), v),
            predictive,
            int(acq.book.known.sum()),
        )
        with warnings.catch_warnings():  # undefined under the recalibrated model: q falls back
            warnings.simplefilter("ignore", UndefinedEstimateWarning)  # (the estimate warns)
            q = sampling_distribution(
                method, current, meas, costs=costs, pool_weights=pool_weights, floor=floor,
                mix=mix, prediction=f,
            )  # fmt: skip
        acq.switch(q)


#: Pseudo-labels at the model's own probabilities in a batch's recalibration (:func:`_shrunk`).
RECALIBRATION_PRIOR = 50.0


def _shrunk(current: Predictive, model: Predictive, n: int) -> Predictive:
    """The recalibrated distribution shrunk toward the model's, as if the model's own
    probabilities counted for :data:`RECALIBRATION_PRIOR` labels beside the ``n`` labels
    the recalibration saw: (n·recalibrated + κ·model)/(n + κ) (class probabilities; the
    variances for a Gaussian). An isotonic fit on a first batch with few positives sets
    p(pos) = 0 on much of the pool, and q would keep only the defensive mix there."""
    a = n / (n + RECALIBRATION_PRIOR)
    if isinstance(current, Categorical) and isinstance(model, Categorical):
        return Categorical(a * current.proba + (1.0 - a) * model.proba, model.labels)
    if isinstance(current, Gaussian) and isinstance(model, Gaussian):
        return Gaussian(model.mean, a * current.var + (1.0 - a) * model.var)
    return current


def _no_label_bought(budget: float, costs: NDArray[np.float64] | None) -> BudgetError:
    """A cost budget that covers the cheapest instance but not the first one drawn."""
    mean = math.nan if costs is None else float(costs.mean())
    return BudgetError(
        f"budget: {budget!r} cost units ran out before the first label (the first instance "
        f"drawn costs more); no label was bought. Raise the budget well above the mean "
        f"instance cost ({mean:.4g})."
    )


def confidence_score(predictive: Predictive, measure: Measure) -> NDArray[np.float64]:
    """The stratification variable: p(y = pos | x) for F-measures, the probability of the
    predicted class for other classification measures, the predictive variance for
    regression."""
    if isinstance(predictive, Mixture):
        collapsed = predictive.collapse()
        if collapsed is not None:
            predictive = collapsed
    if isinstance(predictive, Categorical):
        pos = getattr(measure, "pos_label", None)
        if pos is not None:
            return predictive.proba[:, predictive.label_index([pos], "pos_label")[0]]
        return predictive.proba[np.arange(predictive.n), predictive.predicted_index]
    if isinstance(predictive, Gaussian):
        return predictive.var
    return np.asarray(measure.conditional_second_moment(predictive, 0.0), dtype=float)


def _equal_count_strata(score: NDArray[np.float64], n_strata: int) -> NDArray[np.intp]:
    order = np.argsort(score, kind="stable")
    strata = np.empty(score.shape[0], dtype=np.intp)
    strata[order] = (np.arange(score.shape[0]) * n_strata) // score.shape[0]
    return strata


def _largest_remainder(share: NDArray[Any], total: int, cap: NDArray[np.intp]) -> Any:
    """Integer allocation of ``total`` proportional to ``share`` without exceeding ``cap``."""
    alloc = np.zeros(share.shape[0], dtype=np.intp)
    left = total
    active = (cap > 0) & (share > 0)
    while left > 0 and active.any():
        s = np.where(active, share, 0.0)
        raw = left * s / s.sum()
        add = np.minimum(np.floor(raw).astype(np.intp), cap - alloc)
        if add.sum() == 0:
            best = np.flatnonzero(active)[np.argmax((raw - np.floor(raw))[active])]
            add[best] = 1
        alloc += add
        left -= int(add.sum())
        active &= alloc < cap
    return alloc


def _check_strata(n_strata: int, m: int, pool_weights: ArrayLike | None) -> None:
    """``method="stratified"`` estimates the plain pool average: refuse weights it would
    ignore, and a stratum count below one."""
    if isinstance(n_strata, bool) or not isinstance(n_strata, (int, np.integer)) or n_strata < 1:
        raise ShapeError(f"n_strata: must be a whole number of strata ≥ 1, got {n_strata!r}.")
    p = pool_distribution(m, pool_weights)
    if pool_weights is not None and np.ptp(p) > 0:
        raise UnknownOptionError(
            "pool_weights: method='stratified' estimates the unweighted pool average and "
            "cannot use test weights; use method='active' (or 'passive') with pool_weights, "
            "or drop pool_weights."
        )


def _stratified(
    predictive: Predictive,
    oracle: Oracle,
    measure: Measure,
    budget: float,
    costs: NDArray[np.float64] | None,
    level: float,
    rng: np.random.Generator,
    n_strata: int,
    bar: Any,
) -> EvaluationResult:
    m = predictive.n
    f = predictive.point_prediction()
    n_strata = int(max(1, min(n_strata, m, budget // 2 if costs is None else n_strata)))
    strata = _equal_count_strata(confidence_score(predictive, measure), n_strata)
    size = np.bincount(strata, minlength=n_strata)
    book = _LabelBook(m)
    unlabeled = [rng.permutation(np.flatnonzero(strata == h)) for h in range(n_strata)]
    taken = np.zeros(n_strata, dtype=np.intp)
    spent = 0.0
    unit_cost = 1.0 if costs is None else float(costs.mean())
    batch = max(n_strata * 2, int(budget / unit_cost) // 10)
    prior, center = _stratum_prior(predictive, measure, f, strata, n_strata)
    sigma = np.sqrt(prior)
    # First batch: two labels per stratum, so that every stratum mean is estimable.
    alloc = np.minimum(size, 2)
    while True:
        if taken.sum() > 0:
            want = batch if costs is not None else min(batch, int(budget - spent))
            if want <= 0:
                break
            alloc = _largest_remainder(size * sigma, want, size - taken)
        if alloc.sum() == 0:
            break
        picks = np.concatenate(
            [unlabeled[h][taken[h] : taken[h] + alloc[h]] for h in range(n_strata)]
        )
        picks = rng.permutation(picks)
        price = np.ones(picks.shape[0]) if costs is None else costs[picks]
        affordable = np.cumsum(price) <= _budget_room(budget, spent)
        picks = picks[affordable]
        if picks.size == 0:
            break
        _ask(oracle, _label_check(predictive), book, picks)
        spent += float(price[affordable].sum())
        bar.update(picks.size if costs is None else float(price[affordable].sum()))
        taken += np.bincount(strata[picks], minlength=n_strata)
        sigma = _stratum_sd(book, strata, measure, f, prior, center)
        if not affordable.all():
            break
    idx, y = book.acquired()
    est = _stratified_estimate(measure, f[idx], y, strata[idx], size, level, idx.shape[0])
    share = (size / m)[strata[idx]] / np.maximum(taken[strata[idx]], 1)
    return EvaluationResult(
        estimate=est.estimate,
        stderr=est.stderr,
        ci=est.confidence_interval(level) if not math.isnan(est.estimate) else (math.nan,) * 2,
        level=level,
        n_labels=idx.shape[0],
        n_draws=idx.shape[0],
        cost=spent,
        budget=budget,
        method="stratified",
        measure=measure.name,
        indices=idx,
        q=share,
        labels=y,
        inference=est,
    )


#: Pseudo-labels per stratum given to the model's own within-stratum variance when labels
#: update the Neyman allocation. Measured on a simulated pool (n = 200, 10 strata, 400 runs):
#: purely label-driven allocation biases the error-rate estimate by -0.011 (strata whose first
#: labels show no error stop being sampled), 20 pseudo-labels by -0.003 with the lowest MAE.
STRATUM_PRIOR_LABELS = 20.0


def _stratum_prior(
    predictive: Predictive, measure: Measure, f: NDArray[Any], strata: NDArray[np.intp], k: int
) -> tuple[NDArray[np.float64], float]:
    """Within-stratum variance of z = w(ℓ − Ǧ) under the model's predictive distribution."""
    c = measure.intrinsic_value(predictive, f)
    c = 0.5 if math.isnan(c) else c
    second = measure.conditional_second_moment(predictive, c, f)  # E[z² | x]
    wl, w = measure.conditional_expectations(predictive, f)
    first = wl - c * w  # E[z | x]
    cnt = np.maximum(np.bincount(strata, minlength=k), 1)
    mean1 = np.bincount(strata, weights=first, minlength=k) / cnt
    var = np.bincount(strata, weights=second, minlength=k) / cnt - mean1**2
    return np.maximum(var, 1e-12), c


def _stratum_sd(
    book: _LabelBook,
    strata: NDArray[np.intp],
    measure: Measure,
    f: NDArray[Any],
    prior: NDArray[np.float64],
    center: float,
) -> NDArray[np.float64]:
    """Per-stratum s.d. of z = w(ℓ − Ǧ): the labels' within-stratum sum of squares pooled with
    ``STRATUM_PRIOR_LABELS`` pseudo-labels at the model's variance ``prior``."""
    idx, y = book.acquired()
    z = measure.weight(f[idx], y) * (measure.loss(f[idx], y) - center)
    h = strata[idx]
    k = prior.shape[0]
    cnt = np.bincount(h, minlength=k).astype(float)
    s1 = np.bincount(h, weights=z, minlength=k)
    s2 = np.bincount(h, weights=z * z, minlength=k)
    # Σz² − (Σz)²/n cancels to a tiny negative number when a stratum's z are all equal.
    within = np.maximum(s2 - s1 * s1 / np.maximum(cnt, 1.0), 0.0)
    k0 = STRATUM_PRIOR_LABELS
    return np.sqrt((within + k0 * prior) / (cnt + k0))


def _stratified_estimate(
    measure: Measure,
    pred: NDArray[Any],
    y: NDArray[Any],
    h: NDArray[np.intp],
    size: NDArray[np.intp],
    level: float,
    n: int,
) -> Estimate:
    """Stratified ratio estimator Σ_h W_h m̄_h(wℓ) / Σ_h W_h m̄_h(w) with its linearized
    variance Σ_h W_h² (1 − n_h/N_h) s_h²(z) / n_h (finite-population correction)."""
    n_strata = size.shape[0]
    weights = size / size.sum()
    w = measure.weight(pred, y)
    wl = w * measure.loss(pred, y)
    cnt = np.bincount(h, minlength=n_strata).astype(float)
    seen = cnt > 0
    mean_wl = np.bincount(h, weights=wl, minlength=n_strata)[seen] / cnt[seen]
    mean_w = np.bincount(h, weights=w, minlength=n_strata)[seen] / cnt[seen]
    den = float(weights[seen] @ mean_w)
    if not den > 0:
        return Estimate(math.nan, math.nan, n, n, 0.0, measure.binary_loss, level, measure.name)
    g = float(weights[seen] @ mean_wl) / den
    z = (wl - g * w) / den
    zs1 = np.bincount(h, weights=z, minlength=n_strata)
    zs2 = np.bincount(h, weights=z * z, minlength=n_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        # A sample variance, ≥ 0; Σz² − (Σz)²/n can round below 0 when z is constant.
        s2 = np.where(
            cnt > 1, np.maximum(zs2 - zs1 * zs1 / np.maximum(cnt, 1), 0.0) / (cnt - 1), 0.0
        )
        fpc = 1.0 - cnt / np.maximum(size, 1)
        var = float(np.sum(np.where(seen, weights**2 * fpc * s2 / np.maximum(cnt, 1), 0.0)))
    # Effective n for binomial intervals: the n that gives the same variance under q = p.
    n_eff = g * (1 - g) / var if 0 < var and 0 < g < 1 else float(n)
    return Estimate(
        estimate=g,
        stderr=math.sqrt(max(var, 0.0)),
        n_draws=n,
        n_labels=n,
        effective_n=float(n_eff),
        binary_loss=measure.binary_loss,
        level=level,
        measure=measure.name,
    )


# --------------------------------------------------------------------------- comparisons


def compare(
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
) -> ComparisonResult:
    """Compare two or more models on the pool from labels bought within a budget.

    Parameters
    ----------
    predictions : sequence of predictive distributions
        Each model's predictions on the same pool (as for :func:`evaluate`), or two
        GradedRelevance rankers of the same queries (with item ids). Then the union of both
        lists is labeled (Sec. 6.2): the oracle receives query indices and returns the grades
        of :func:`~activeeval.ranking.ranking_union`'s items for them, in that order; an item
        both rankers show takes the mixture of their grade models (eq. 5.11); ``method`` is one
        of :data:`~activeeval.methods.RANKING_METHODS` (eq. 6.11).
    oracle, measure, budget, costs, level, random_state, pool_weights, pos_label, mix,
    max_draws, progress
        As for :func:`evaluate`.
    method : str
        ``"active"`` (Thm 5.1 under the mixture of the models, eq. 5.11; eq. 5.16 for k > 2),
        ``"passive"``, ``"active_0"``, ``"active_inf"``, ``"active_neq"``, ``"active_risk"``,
        ``"active_uniC"``, ``"active_lambda"`` (see
        :func:`~activeeval.sampling.comparison_distribution`).
    sequential : bool
        The sequential protocol of Table 5.1: label ``step`` more labels (or cost units) at a
        time and stop as soon as the p-value falls below ``alpha``. **Repeated testing inflates
        the type I error above alpha** (each look is another chance of a false rejection); the
        reproduction in ``docs/results/`` measures how much. Use it to save labels when a
        decision is all you need, not for a p-value to report.
    alpha : float
        Significance level of the sequential stopping rule.
    step : float, optional
        Labels (or cost) per sequential look; default budget / 20.
    estimator : {"assisted", "snis"}
        ``"assisted"`` (default) compares model-assisted estimates, each model's own
        predictive distribution a control variate with its coefficient tuned for the
        differences once 30 labeled instances have differing predictions, the mixture of
        the models before (:func:`~activeeval.estimators.assisted.assisted_paired_test`, for k > 2
        :func:`~activeeval.estimators.assisted.assisted_multiple_comparison`; two rankers: each
        query's expected measure under the rankers' grade models, shared items under their
        mixture, eq. 5.11, with one coefficient); ``"snis"`` is the thesis's paired Wald
        test / multiple comparison. ``active_neq`` always uses ``"snis"``.
    features, bandwidth
        As for :func:`evaluate`, with the model-assisted estimator: each model's labeled
        residuals under the mixture of the models, smoothed over the pool's features, are
        one more control variate with its own coefficient, tuned for the differences
        (:mod:`activeeval.estimators.assisted`, "Pool features"). It pays where near neighbours
        share which model is right.

    Returns
    -------
    ComparisonResult

    Notes
    -----
    The interval for Δ is Wald, so it needs Δ̂ to be roughly normal. For an F-measure on a
    rare class that takes a few hundred labels: for logistic regression vs gradient boosting
    on Default's F1 (1,000 campaigns) the 95% interval covered 0.81 at 100 labels, 0.91 at
    200 and 0.95 at 400 (the thesis's estimator: 0.82, 0.91, 0.94). The shortfall at 100 is
    the O(1/n) bias of the ratio estimates (0.4 SD there), not the standard error, which
    matched the true spread. Error-rate comparisons kept their type I error near or below α
    from 50–100 labels (``docs/results/active_comparison.md``, label-swap null).

    References
    ----------
    Thesis Algorithm 3, Thm 5.1, Cor. 5.1–5.2, eq. 5.16, Table 5.1.
    """
    if _is_ranking(predictions):
        _no_features(features, "ranking pools")
        return _compare_ranking(
            list(predictions), oracle, measure, budget, method, costs, level, random_state,
            pool_weights, mix, sequential, alpha, step, estimator, max_draws, progress,
        )  # fmt: skip
    preds = [as_predictive(p, f"predictions[{k}]") for k, p in enumerate(predictions)]
    if len(preds) < 2:
        raise ShapeError(f"predictions: need at least two models to compare, got {len(preds)}.")
    for idx, pr in enumerate(preds):  # before Mixture(preds), whose error names no argument
        if pr.n != preds[0].n:
            raise ShapeError(
                f"predictions[{idx}]: covers {pr.n} instances, predictions[0] covers "
                f"{preds[0].n}; all models must be evaluated on the same pool."
            )
    method = check_option(method, COMPARISON_METHODS, "method")
    estimator = check_option(estimator, ESTIMATORS, "estimator")
    where = f"estimator={estimator!r}" if estimator == "snis" else ""
    if method == "active_neq":
        estimator = "snis"
        where = "method='active_neq' (the thesis's estimator)"
    _check_features(features, bandwidth, preds[0].n, where)  # before any label is bought
    meas = get_measure(measure, pos_label=pos_label).bind(Mixture(preds))
    if method == "active_neq" and not meas.regular:
        raise ShapeError(
            "method: 'active_neq' rescales a difference of regular risks by the disagreement "
            f"mass; {meas.name} is a ratio measure. Use 'active' instead."
        )
    lam = check_costs(costs, preds[0].n)
    lv = check_level(level)
    alpha = check_level(alpha, "alpha")
    b = check_budget(budget, lam)
    if not callable(oracle):
        raise ShapeError("oracle: must be a callable mapping pool indices to labels.")
    rng = check_random_state(random_state)
    max_draws = check_max_draws(max_draws, b, lam)
    qq = comparison_distribution(
        preds, meas, method=method, costs=lam, pool_weights=pool_weights, mix=mix
    )
    pw = pool_distribution(preds[0].n, pool_weights)
    support_mass = float(pw[qq > 0].sum()) if method == "active_neq" else 1.0
    with _bar(b, lam, progress) as bar:
        acq = _Acquisition(qq, oracle, _label_check(preds[0]), lam, rng, max_draws, bar)

        def p_value(draws: NDArray[np.intp]) -> tuple[float, float]:
            y = acq.book.lookup(draws)
            res = _compare_sample(
                meas, preds, y, draws, qq, pw, support_mass, lv, estimator, False, features,
                bandwidth,
            )  # fmt: skip
            return res[2], res[1]

        draws, stopped_early = _run_comparison(acq, b, sequential, step, alpha, p_value)
    acq.warn_if_capped(b)
    y = acq.book.lookup(draws)
    diff, se, pv, best, est, cmp = _compare_sample(
        meas, preds, y, draws, qq, pw, support_mass, lv, estimator, True, features, bandwidth
    )
    z = stats.norm.isf((1 - lv) / 2)
    return ComparisonResult(
        difference=diff,
        stderr=se,
        p_value=pv,
        ci=(float(diff - z * se), float(diff + z * se)),
        best=best,
        estimates=est,
        level=lv,
        n_labels=int(acq.book.known.sum()),
        n_draws=int(draws.shape[0]),
        cost=acq.spent,
        budget=b,
        method=method,
        measure=meas.name,
        indices=draws,
        q=qq[draws],
        labels=y,
        comparison=cmp,
        stopped_early=stopped_early,
    )


# ------------------------------------------------------------------------- ranked pools


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
