"""What a session reports: its estimates and comparisons on the labeled prefix of the draws
(the shared :class:`~activeeval.EvaluationResult` and :class:`~activeeval.ComparisonResult`,
bit for bit what :func:`~activeeval.evaluate` / :func:`~activeeval.compare` report for the
same draws), per group, the trajectory of the estimate, and whether the plan's stopping rule
is met. Where the campaign stands and its tables are the ledger's (:mod:`.ledger`)."""

from __future__ import annotations

import dataclasses
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._validation import check_groups, check_option
from ..errors import (
    DegenerateIntervalWarning,
    ShapeError,
    StoreError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from ..estimators.inference import _wald_interval
from ..estimators.report import (
    LazyTerms,
    NoSequence,
    Reporting,
    _fields,
    _result_fields,
    pool_for,
)
from ..estimators.smoother import DEFAULT_BANDWIDTH, _batched_smoother, _check_bandwidth
from ..measures import ClasswiseMeasure
from ..methods import ESTIMATORS
from ..results import (
    ComparisonResult,
    EvaluationResult,
    GroupResult,
    additive,
    expected_labels,
    post_stratified,
)
from ..stopping import reported, rule_met
from .codec import _stored_labels

# SessionProgress lived here before the ledger; kept so that results pickled then unpickle
from .ledger import SessionProgress, _labeled_prefix, _snapshot
from .schema import StoreFile
from .stored import StoredPlan

__all__ = ["SessionProgress", "by_group", "compare", "estimate", "stop_reason", "trajectory"]


# ----------------------------------------------------------------- the labeled prefix
def _data(
    store: StoreFile, stored: StoredPlan, label_dtype: Any = None
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[Any]]:
    """The labeled prefix: pool positions, each draw's q, the labels (of ``label_dtype``,
    by default the pool's)."""
    draws, q, by_pos = store.read(_snapshot)
    n = _labeled_prefix(draws, np.isin(draws, np.fromiter(by_pos, np.intp, len(by_pos))))
    idx = draws[:n]
    dtype = stored.label_dtype if label_dtype is None else label_dtype
    return idx, q[:n], _stored_labels([by_pos[p] for p in idx.tolist()], dtype)


def _sample(
    stored: StoredPlan, idx: NDArray[np.intp], dq: NDArray[np.float64], y: NDArray[Any]
) -> dict[str, Any]:
    """A result's fields describing the sample: the labeling cost of its distinct instances,
    the plan's budget and method, the draws, their q and their labels (a ranked pool's grades
    flat, with each draw's offsets, as :func:`~activeeval.evaluate` reports them)."""
    return {
        "cost": float(stored.price[np.unique(idx)].sum()),
        "budget": stored.plan.budget,
        "method": stored.plan.method,
        "indices": idx,
        "q": dq,
        **stored.pool.label_fields(y),
    }


# ------------------------------------------------------------------------- estimates
def _check_estimator(
    stored: StoredPlan, estimator: str | None, features: ArrayLike | None, bandwidth: float
) -> str:
    """The estimator to report (the plan's unless overridden), with ``features`` checked
    for it."""
    how = _plan_estimator(stored, estimator)
    where = "estimator='snis'" if how == "snis" else ""
    stored.pool.check_features(features, bandwidth, stored.plan.pool_size, where)
    return how


def _reporting(
    stored: StoredPlan, estimator: str, features: ArrayLike | None, bandwidth: float, n: int
) -> Reporting:
    """How the session's first ``n`` draws are reported: the q they are weighted by (the
    plan's, or the mixture of the phases they span), the level, the estimator."""
    q = stored.mixture(n)
    return stored.pool.reporting(q, stored.plan.level, estimator, features, bandwidth)


def estimate(
    store: StoreFile,
    stored: StoredPlan,
    model: int,
    estimator: str | None,
    features: ArrayLike | None,
    bandwidth: float,
) -> EvaluationResult:
    """:meth:`Session.estimate <activeeval.Session.estimate>` on the stored labels: from the
    model's pool summary where the store has one and the request is the default's
    (:func:`_lean`), else from the pool."""
    if not 0 <= model < stored.plan.n_models:
        raise ShapeError(f"model: must be in [0, {stored.plan.n_models}), got {model}.")
    classes = _lean_classes(stored, features)
    if classes is not None:
        _check_bandwidth(bandwidth)  # as the estimator checks it on the pool's path
        how = _plan_estimator(stored, estimator)
        idx, dq, y = _data(store, stored, classes.label_dtype)
        return _class_estimate(stored, classes, model, idx, dq, y, how)
    lean = _lean(stored, model, features)
    if lean is not None:
        _check_bandwidth(bandwidth)  # as the estimator checks it on the pool's path
        idx, dq, y = _data(store, stored, lean.label_dtype)
        how = _plan_estimator(stored, estimator)
        if _reaches(lean, idx, how) and not _near_census(stored, lean, idx):
            return _lean_estimate(stored, lean, idx, dq, y, how)
        # beyond the time summary's series (tens of thousands of distinct labels), or a few
        # instances from a census (whose values the interval moves to): from the pool
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    return _estimate_on(stored, idx, dq, y, model, how, features, bandwidth)


def _lean(stored: StoredPlan, model: int, features: ArrayLike | None) -> Any:
    """The model's stored pool summary (:class:`~.summaries.LeanModel`) where it serves this
    estimate — either estimator, no features, one model and one phase of q; with a stopping
    rule, a summary that keeps its sequences' pool means (whose looks it then serves, by
    either estimator: :class:`~activeeval.estimators.report.SummaryPool`) — else None. Read
    once per open."""
    plan = stored.plan
    if not _summary_serves(stored, features, 1):
        return None
    if model not in stored._lean:
        from .summaries import read_summary

        stored._lean[model] = read_summary(stored.store, plan, model)
    return _serving(stored, stored._lean[model])


def _serving(stored: StoredPlan, lean: Any) -> Any:
    """``lean`` where it serves: under a stopping rule, a summary that keeps its sequences'
    pool means (a rule's looks need them: else the pool's path), else None."""
    if lean is None or stored.plan.stopping is None:
        return lean
    return lean if _serves_terms(stored, lean) else None


def _lean_classes(stored: StoredPlan, features: ArrayLike | None) -> Any:
    """A multi-class average's stored counts (:class:`~.summaries.LeanClasses`) where they
    serve — no features, one phase of q; either estimator, which reads only the counts and
    the labeled rows — else None. Read once per open."""
    plan = stored.plan
    if features is not None or len(stored.phase_starts) != 1 or plan.ranking:
        return None
    if "classes" not in stored._lean:
        from .codec import _measure_from
        from .summaries import read_class_summary

        classwise = isinstance(_measure_from(plan.measure_spec), ClasswiseMeasure)
        stored._lean["classes"] = read_class_summary(stored.store, plan) if classwise else None
    return stored._lean["classes"]


def _plan_estimator(stored: StoredPlan, estimator: str | None) -> str:
    """The estimator to report: the plan's unless overridden (checked)."""
    if estimator is None:
        return stored.plan.estimator
    return check_option(estimator, ESTIMATORS, "estimator")


def _lean_sample(
    stored: StoredPlan, idx: NDArray[np.intp], dq: NDArray[np.float64], y: NDArray[Any]
) -> dict[str, Any]:
    """:func:`_sample` from the store's rows: the cost of the labeled instances from the pool
    table's rows (:func:`_lean_cost`), not the pool's costs."""
    plan = stored.plan
    return {"cost": _lean_cost(stored, np.unique(idx)), "budget": plan.budget,
            "method": plan.method, "indices": idx, "q": dq, "labels": y,
            "label_offsets": None}  # fmt: skip


def _class_estimate(
    stored: StoredPlan, lean: Any, model: int, idx: NDArray[np.intp], dq: NDArray[np.float64],
    y: NDArray[Any], estimator: str,
) -> EvaluationResult:  # fmt: skip
    """:func:`_estimate_on` of a multi-class average from its stored counts and the labeled
    rows (:func:`~activeeval.estimators.classwise._estimate`), bit for bit the pool's."""
    from ..estimators.classwise import ClasswiseEstimate, _estimate
    from .codec import _measure_from

    plan = stored.plan
    meas = _measure_from(plan.measure_spec)  # not stored.measure, which reads the pool
    assert isinstance(meas, ClasswiseMeasure)  # _lean_classes serves only these
    sample = _lean_sample(stored, idx, dq, y)
    if idx.size == 0:
        return _no_estimate_yet(plan, meas.name, sample)
    units = np.unique(idx)
    at = lean.at(model, units, idx)
    ycls = lean.label_index(units, idx, y)
    est = _estimate(meas, lean.summary.pools[model], at, idx, ycls, dq,
                    estimator == "assisted", plan.level)  # fmt: skip
    assert isinstance(est, ClasswiseEstimate)  # a session's average: one number (codec)
    return EvaluationResult(**_fields(meas, plan.level, est, "logit"), **sample,
                            anytime_terms=NoSequence(meas.name))  # fmt: skip


def _class_compare(
    stored: StoredPlan, lean: Any, idx: NDArray[np.intp], dq: NDArray[np.float64],
    y: NDArray[Any], estimator: str,
) -> ComparisonResult:  # fmt: skip
    """:func:`_compare_on` of two models by a multi-class average from their stored counts
    and the labeled rows (:func:`~activeeval.estimators.classwise._paired`)."""
    from ..estimators.classwise import _paired
    from .codec import _measure_from

    plan = stored.plan
    meas = _measure_from(plan.measure_spec)
    assert isinstance(meas, ClasswiseMeasure)  # _lean_classes serves only these
    lv = plan.level
    sample = _lean_sample(stored, idx, dq, y)
    if idx.size == 0:
        return _no_comparison_yet(plan, meas.name, sample)
    units = np.unique(idx)
    ycls = lean.label_index(units, idx, y)
    c = _paired(meas, lean.summary.pools, (lean.at(0, units, idx), lean.at(1, units, idx)),
                idx, ycls, dq, estimator == "assisted", lv)  # fmt: skip
    return ComparisonResult(
        float(c.difference), float(c.stderr), float(c.p_value),
        _wald_interval(c.difference, c.stderr, lv), int(c.best),
        np.asarray(c.estimates, dtype=float), lv, c.n_labels, c.n_draws, measure=c.measure,
        comparison=c, value_range=meas.value_range, **sample,
        anytime_terms=NoSequence(meas.name),
    )  # fmt: skip


def _no_estimate_yet(plan: Any, name: str, sample: dict[str, Any]) -> EvaluationResult:
    """A summary's estimate before its first label, as :func:`_estimate_on` reports it."""
    nan = math.nan
    return EvaluationResult(
        nan, nan, (nan, nan), plan.level, 0, 0, measure=name, inference=None, **sample
    )


def _no_comparison_yet(plan: Any, name: str, sample: dict[str, Any]) -> ComparisonResult:
    """A summary's comparison before its first label, as :func:`_compare_on` reports it."""
    nan = math.nan
    return ComparisonResult(
        nan, nan, nan, (nan, nan), 0, np.full(plan.n_models, nan), plan.level, 0, 0,
        measure=name, comparison=None, **sample,
    )  # fmt: skip


def _serves_terms(stored: StoredPlan, lean: Any) -> bool:
    """Whether a summary (one model's or a pair's) gives the anytime sequences' terms as the
    pool would: it keeps their pool means and the store sums σ₀ over the subsample the
    summary holds."""
    return lean.summary.terms_mu is not None and stored.plan.sigma0_subsample


def _lean_estimate(
    stored: StoredPlan, lean: Any, idx: NDArray[np.intp], dq: NDArray[np.float64],
    y: NDArray[Any], estimator: str,
) -> EvaluationResult:  # fmt: skip
    """:func:`_estimate_on` by ``estimator`` from the pool summary: the labeled rows and
    their costs read from the store, the pool not at all — nor for the anytime interval and
    the stopping rule's look where the summary keeps its sequences' pool means
    (:class:`~activeeval.estimators.report.SummaryPool`, either estimator's sequences); else
    the anytime interval, asked for, reads the pool then (:class:`_PoolTerms`)."""
    from ..estimators.report import SummaryPool, summary_static_estimate
    from .codec import _measure_from

    plan = stored.plan
    meas = _measure_from(plan.measure_spec)
    units = np.unique(idx)
    sample = _lean_sample(stored, idx, dq, y)
    if idx.size == 0:
        return _no_estimate_yet(plan, meas.name, sample)
    pred = lean.at(units)
    est, interval = summary_static_estimate(
        meas, pred, lean.summary, idx, y, dq, plan.level, estimator=estimator
    )
    fields = _fields(meas, plan.level, est, interval)
    if not _serves_terms(stored, lean):
        terms: Any = _PoolTerms(stored.store.path.resolve(), plan.session_id, idx, y, stored,
                                estimator=estimator)  # fmt: skip
        return EvaluationResult(**fields, **sample, anytime_terms=terms)
    spool = SummaryPool(pred, lean.summary, meas)
    rep = _lean_reporting(spool, plan.level, estimator)
    terms = LazyTerms(spool, rep, idx, y, plan.horizon, dq, window=plan.window)
    res = EvaluationResult(**fields, **sample, anytime_terms=terms)
    if plan.stopping is None:
        return res
    why = _look(stored, spool, rep, idx, dq, y, terms)
    return reported(dataclasses.replace(res, stopped=why), plan.stopping)


def _look(
    stored: StoredPlan,
    spool: Any,
    rep: Reporting,
    idx: NDArray[np.intp],
    dq: NDArray[np.float64],
    y: NDArray[Any],
    terms: LazyTerms | None = None,
) -> str | None:
    """The stopping rule's look at the labeled prefix from a summary's pool
    (:func:`~activeeval.stopping.rule_met`), with the result's terms where given; kept for
    the prefix, so that a status's estimate and its ``stopped`` look once."""
    plan = stored.plan
    assert plan.stopping is not None
    ys = tuple(y.tolist()) if y.dtype == object else (y.dtype.str, y.tobytes())
    key = (idx.tobytes(), dq.tobytes(), ys, rep.estimator)
    hit = stored._lean.get("look")
    if hit is not None and hit[0] == key:
        return hit[1]
    same = terms is not None and terms.model is None and terms.window == plan.window
    why = rule_met(plan.stopping, spool, rep, idx, y, plan.horizon, dq, window=plan.window,
                   terms=terms() if same and terms is not None else None)  # fmt: skip
    stored._lean["look"] = (key, why)
    return why


def _lean_reporting(spool: Any, level: float, estimator: str) -> Reporting:
    """How a summary's session reports: by ``estimator`` at the plan's level, the session's
    uniform test distribution; no q over the pool (each draw's is given)."""
    return spool.reporting(np.empty(0), level, estimator)


@dataclasses.dataclass(eq=False)
class _PoolTerms:
    """A summary-based estimate's anytime terms, computed from the session's pool when first
    asked (:class:`~activeeval.estimators.report.LazyTerms` there): through the session if it
    is still open, else from the store at ``path``, opened for the purpose (refused if it is
    now another session's). Holds no connection, so that the result pickles."""

    path: Path
    session_id: str
    draws: NDArray[np.intp]
    labels: NDArray[Any]
    stored: StoredPlan | None = dataclasses.field(default=None, repr=False)
    done: Any = None
    #: The estimator whose terms these are (one pickled before it was kept: the default).
    estimator: str = "assisted"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "stored": None}

    def __call__(self) -> Any:
        if self.done is None:
            stored = self.stored
            if stored is not None and stored.store.is_open():
                self.done = self._from(stored)
            else:
                from ..errors import NotAStoreError
                from .schema import open_store
                from .stored import load_plan

                try:
                    conn = open_store(self.path)
                except NotAStoreError as exc:
                    raise NotAStoreError(
                        f"{self.path}: this result's anytime interval reads its session's pool "
                        f"from the store it was estimated from, which is gone ({exc}); open "
                        "the store where it is now and estimate again."
                    ) from exc
                store = StoreFile(self.path, conn)
                try:
                    stored = load_plan(store)
                    if stored.plan.session_id != self.session_id:
                        raise StoreError(
                            f"{self.path}: is now another session's store; the result's "
                            "anytime interval reads its own session's pool."
                        )
                    self.done = self._from(stored)
                finally:
                    store.close()
            self.stored = None
        return self.done

    def _from(self, stored: StoredPlan) -> Any:
        rep = _reporting(stored, self.estimator, None, DEFAULT_BANDWIDTH, self.draws.shape[0])
        return LazyTerms(stored.pool, rep, self.draws, self.labels, stored.plan.horizon,
                         model=0, window=stored.plan.window)()  # fmt: skip


class _PoolComparison(_PoolTerms):
    """A pair-summary comparison's anytime terms, from the session's pool when first asked
    (as :class:`_PoolTerms` for one model's estimate)."""

    def _from(self, stored: StoredPlan) -> Any:
        rep = _reporting(stored, self.estimator, None, DEFAULT_BANDWIDTH, self.draws.shape[0])
        return LazyTerms(stored.pool, rep, self.draws, self.labels, stored.plan.horizon)()


def _terms(
    stored: StoredPlan, rep: Reporting, idx: NDArray[np.intp], y: NDArray[Any], model: int | None
) -> LazyTerms | None:
    """The anytime-valid sequence's per-draw terms, or None where the draws span phases of
    q (a model added): weighted by the phases' mixture, which depends on where the prefix
    ends, they are not a martingale, so no anytime interval is offered."""
    plan = stored.plan
    if stored.phases_used(idx.shape[0]) > 1:
        return None
    if model is None:
        return LazyTerms(stored.pool, rep, idx, y, plan.horizon)
    return LazyTerms(stored.pool, rep, idx, y, plan.horizon, model=model, window=plan.window)


def _estimate_on(
    stored: StoredPlan,
    idx: NDArray[np.intp],
    dq: NDArray[np.float64],
    y: NDArray[Any],
    model: int,
    estimator: str,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
    score: bool = True,
) -> EvaluationResult:
    """As evaluate reports the draws ``idx`` (their q ``dq``, labels ``y``) for ``model``:
    one model's estimate, or on a ranked comparison's pool one ranker's (as compare);
    without ``score``, with the design-based interval (a trajectory's band)."""
    sample = _sample(stored, idx, stored.mixture(idx.shape[0])[idx], y)
    if idx.size == 0:
        nan = math.nan
        return EvaluationResult(
            nan, nan, (nan, nan), stored.plan.level, 0, 0, measure=stored.measure.name,
            inference=None, **sample, pool_q=stored.mixture(0),
        )  # fmt: skip
    rep = _reporting(stored, estimator, features, bandwidth, idx.shape[0])
    rep = dataclasses.replace(rep, score=score)
    est, interval = stored.pool.estimate(rep, model, idx, y)
    plan = stored.plan
    terms = _terms(stored, rep, idx, y, model)
    res = EvaluationResult(**_result_fields(rep, est, interval), **sample, anytime_terms=terms,
                           pool_q=rep.q)  # fmt: skip
    if plan.stopping is None or not score or plan.n_models > 1:
        return res  # a comparison session's rule is about the difference
    why = rule_met(plan.stopping, stored.pool, rep, idx, y, plan.horizon, window=plan.window)
    return reported(dataclasses.replace(res, stopped=why), plan.stopping)


def by_group(
    store: StoreFile,
    stored: StoredPlan,
    groups: Any,
    model: int | None,
    estimator: str | None,
    features: ArrayLike | None,
    bandwidth: float,
) -> GroupResult:
    """:meth:`Session.estimate <activeeval.Session.estimate>` (``model``) or
    :meth:`Session.compare <activeeval.Session.compare>` (None) within each group of the
    pool: the session's report with the test distribution restricted to the group, and the
    pool's (post-stratified for an evaluation of a mean)."""
    plan = stored.plan
    if plan.ranking:
        raise UnknownOptionError(
            "groups: per-group estimates are for pools of instances; a ranked session's "
            "queries are estimated together."
        )
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    if isinstance(groups, pd.Series) and set(groups.index) == set(stored.index):
        groups = groups.reindex(stored.index).to_numpy()  # a Series by id: aligned on the ids
    labels, codes = check_groups(groups, plan.pool_size, stored.pw)
    shares = np.bincount(codes, weights=stored.pw, minlength=len(labels)).astype(np.float64)
    seen = np.zeros(plan.pool_size, dtype=bool)
    seen[idx] = True
    q = stored.mixture(idx.shape[0])

    def one(pw: NDArray[np.float64], n_labels: int) -> Any:
        # The session's report on the same draws, its test distribution the group's (no
        # stopping rule: the rule is about the whole pool).
        data = dataclasses.replace(
            stored.data, pw=pw, pool=pool_for(stored.predictives, stored.measure, pw)
        )
        group = dataclasses.replace(
            stored, _data=data, plan=dataclasses.replace(plan, stopping=None)
        )
        res = (
            _compare_on(group, idx, dq, y, how, features, bandwidth)
            if model is None
            else _estimate_on(group, idx, dq, y, model, how, features, bandwidth)
        )
        return dataclasses.replace(res, n_labels=n_labels)

    per_group = [
        one(np.where(codes == k, stored.pw, 0.0) / shares[k],
            int(np.count_nonzero(seen & (codes == k))))
        for k in range(len(labels))
    ]  # fmt: skip
    overall = one(stored.pw, int(seen.sum()))
    if model is not None and additive(stored.measure) and idx.size:
        if all(math.isfinite(r.estimate) for r in per_group):
            overall = post_stratified(overall, per_group, shares, stored.measure)
    return GroupResult(
        groups=labels, results=tuple(per_group), overall=overall, shares=shares,
        expected_labels=expected_labels(q, codes, len(labels), int(idx.shape[0])),
        design="given", level=plan.level, measure=stored.measure.name, method=plan.method,
        n_labels=int(seen.sum()), n_draws=int(idx.shape[0]),
        cost=float(stored.price[seen].sum()), budget=plan.budget, indices=idx, q=q[idx],
        labels=y,
    )  # fmt: skip


def stop_reason(store: StoreFile, stored: StoredPlan) -> str | None:
    """Why the session's stopping rule is met on the labeled prefix, or None (no rule, not
    met yet, or no label yet): from the pool summary of one model or of the compared models
    where it serves the rule's look (:class:`~activeeval.estimators.report.SummaryPool`), else from
    the pool."""
    plan = stored.plan
    if plan.stopping is None:
        return None
    if plan.n_models == 1:
        lean = _lean(stored, 0, None)
    else:
        lean = _lean_pair(stored, None)
    if lean is not None:  # the look from the summary and the labeled rows
        idx, dq, y = _data(store, stored, lean.label_dtype)
        if idx.size == 0:
            return None
        units = np.unique(idx)
        if lean.summary.time.covers(int(units.shape[0])):
            spool, rep = _summary_pool(stored, lean, units)
            return _look(stored, spool, rep, idx, dq, y)
    idx, _dq, y = _data(store, stored)
    if idx.size == 0:
        return None
    rep = _reporting(stored, plan.estimator, None, DEFAULT_BANDWIDTH, idx.shape[0])
    return rule_met(plan.stopping, stored.pool, rep, idx, y, plan.horizon, window=plan.window)


def _summary_pool(stored: StoredPlan, lean: Any, units: NDArray[np.intp]) -> tuple[Any, Any]:
    """The session's pool as its summary (one model's or a pair's) and the labeled
    ``units``' rows give it (:class:`~activeeval.estimators.report.SummaryPool`), and how it
    reports: the plan's estimator at the plan's level, the session's uniform test
    distribution; no q over the pool (each draw's is given)."""
    from ..estimators.report import SummaryPool
    from .codec import _measure_from

    meas = _measure_from(stored.plan.measure_spec)  # not stored.measure, which reads the pool
    spool = SummaryPool(lean.at(units), lean.summary, meas)
    return spool, _lean_reporting(spool, stored.plan.level, stored.plan.estimator)


def compare(
    store: StoreFile,
    stored: StoredPlan,
    estimator: str | None,
    features: ArrayLike | None,
    bandwidth: float,
) -> ComparisonResult:
    """:meth:`Session.compare <activeeval.Session.compare>` on the stored labels: from the
    models' summary where the store has one and the request is the default's
    (:func:`_lean_pair`), else from the pool."""
    if stored.plan.n_models < 2:
        raise ShapeError("compare: this session evaluates one model; use estimate() instead.")
    classes = _lean_classes(stored, features)
    if classes is not None:
        _check_bandwidth(bandwidth)  # as the estimator checks it on the pool's path
        how = _plan_estimator(stored, estimator)
        idx, dq, y = _data(store, stored, classes.label_dtype)
        return _class_compare(stored, classes, idx, dq, y, how)
    lean = _lean_pair(stored, features)
    if lean is not None:
        _check_bandwidth(bandwidth)  # as the estimator checks it on the pool's path
        idx, dq, y = _data(store, stored, lean.label_dtype)
        how = _plan_estimator(stored, estimator)
        if _reaches(lean, idx, how):
            return _lean_compare(stored, lean, idx, dq, y, how)
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    return _compare_on(stored, idx, dq, y, how, features, bandwidth)


def _summary_serves(stored: StoredPlan, features: ArrayLike | None, n_models: int) -> bool:
    """Whether a stored summary serves this request: no features, ``n_models`` models and
    one phase of q, not a ranked pool (either estimator: :func:`_serving` for a rule)."""
    plan = stored.plan
    return not (
        features is not None
        or plan.n_models != n_models
        or len(stored.phase_starts) != 1
        or plan.ranking
    )


def _lean_pair(stored: StoredPlan, features: ArrayLike | None) -> Any:
    """The comparison's stored summary of its k ≥ 2 models (:class:`~.summaries.LeanPair`)
    where it serves (as :func:`_lean`: under a stopping rule, one that keeps its sequences'
    pool means), else None. Read once per open."""
    plan = stored.plan
    if plan.n_models < 2 or not _summary_serves(stored, features, plan.n_models):
        return None
    if "pair" not in stored._lean:
        from .summaries import read_pair_summary

        stored._lean["pair"] = read_pair_summary(stored.store, plan)
    return _serving(stored, stored._lean["pair"])


def _lean_compare(
    stored: StoredPlan, lean: Any, idx: NDArray[np.intp], dq: NDArray[np.float64],
    y: NDArray[Any], estimator: str,
) -> ComparisonResult:  # fmt: skip
    """:func:`_compare_on` of the default from the pair summary: the labeled rows and their
    costs read from the store, the pool not at all — nor for the anytime interval and the
    stopping rule's look where the summary keeps its sequences' pool means
    (:class:`~activeeval.estimators.report.SummaryPool`); else the anytime interval, asked
    for, reads the pool then (:class:`_PoolComparison`)."""
    from ..estimators.report import SummaryPool
    from ..estimators.summary import SummaryScores
    from .codec import _measure_from

    plan = stored.plan
    meas = _measure_from(plan.measure_spec)  # not stored.measure, which reads the pool
    units = np.unique(idx)
    lv = plan.level
    sample = _lean_sample(stored, idx, dq, y)
    vr = getattr(meas, "value_range", (-math.inf, math.inf))
    if idx.size == 0:
        return _no_comparison_yet(plan, meas.name, sample)
    preds = lean.at(units)
    out = _summary_comparison(stored, meas, preds, lean.summary, idx, dq, y, estimator)
    c = out.comparison
    scores = None
    assisted = estimator == "assisted"
    if assisted and units.shape[0] < plan.pool_size:  # not the exact values of a census
        first = np.unique(idx, return_index=True)[1]
        scores = SummaryScores(meas, preds, lean.summary, units, y[first])
    spool: Any = None
    if _serves_terms(stored, lean):
        spool = SummaryPool(preds, lean.summary, meas)
        rep = _lean_reporting(spool, lv, estimator)
        terms: Any = LazyTerms(spool, rep, idx, y, plan.horizon, dq)
    else:
        terms = _PoolComparison(stored.store.path.resolve(), plan.session_id, idx, y, stored,
                                estimator=estimator)  # fmt: skip
    res = ComparisonResult(
        float(out.difference), float(out.stderr), float(out.p_value),
        _wald_interval(out.difference, out.stderr, lv), int(out.best),
        np.asarray(out.estimates, dtype=float), lv, c.n_labels, c.n_draws,
        measure=c.measure, comparison=c, model_scores=scores, value_range=vr, **sample,
        anytime_terms=terms,
    )  # fmt: skip
    if plan.stopping is None:
        return res
    assert spool is not None  # under a rule, _lean_pair serves only a summary with the terms
    why = _look(stored, spool, rep, idx, dq, y, terms)
    return reported(dataclasses.replace(res, stopped=why), plan.stopping)


def _summary_comparison(
    stored: StoredPlan, meas: Any, preds: list[Any], summary: Any, idx: NDArray[np.intp],
    dq: NDArray[np.float64], y: NDArray[Any], estimator: str,
) -> Any:  # fmt: skip
    """The comparison of the draws ``idx`` by ``estimator`` from the summary and the models
    at the labeled rows ``preds``, as the pool's path gives it (``_compare_sample``): models
    labeled whole compare their exact values; otherwise the paired test of two, the best
    against the runner-up of more (:func:`~activeeval.estimators.report.summary_outcome`)."""
    from .._chunks import uniform
    from ..estimators.report import (
        _exact_value,
        exact_difference,
        exact_outcome,
        summary_outcome,
        with_exact_difference,
    )

    plan = stored.plan
    units, first = np.unique(idx, return_index=True)
    if units.shape[0] == plan.pool_size:  # all labeled: the exact values
        p = uniform(plan.pool_size)[units]  # a session's test distribution
        exact = [_exact_value(meas, pr.take(units).point_prediction(), y[first], p) for pr in preds]
        return exact_outcome(exact, idx.shape[0], units.shape[0], plan.level, meas)
    p = np.full(idx.shape[0], 1.0 / plan.pool_size)  # as the pool's path weighs the draws
    known = exact_difference(meas, preds, idx, y, p, summary.n_differ)  # as _compare_sample
    return with_exact_difference(
        lambda: summary_outcome(meas, preds, summary, idx, y, dq, plan.level, estimator), known
    )


def _lean_cost(stored: StoredPlan, units: NDArray[np.intp]) -> float:
    """The labeling cost of the distinct labeled ``units``, read from the pool table's rows
    for them (no array over the pool); refused where another process added a model."""
    return float(_lean_prices(stored, units).sum())


def _lean_prices(stored: StoredPlan, units: NDArray[np.intp]) -> NDArray[np.float64]:
    """The labeling cost of each of ``units`` (:func:`_lean_cost`)."""
    from .lookup import Prices

    plan = stored.plan

    def read(c: Any) -> tuple[int, NDArray[np.float64]]:
        n_models = c.execute("SELECT COUNT(*) FROM models").fetchone()[0]
        return n_models, Prices(c, plan.cost_sensitive).of(units)

    n_models, prices = stored.store.read(read)
    if n_models != plan.n_models:  # as reading the pool finds it
        raise StoreError(
            f"{stored.store.path}: a model was added by another process while this session "
            "was open; open the store again."
        )
    return prices


def _lean_trajectory(
    store: StoreFile, stored: StoredPlan, estimator: str | None, features: ArrayLike | None
) -> tuple[Any, tuple[NDArray[np.intp], NDArray[np.float64], NDArray[Any]]] | None:
    """The summary (one model's or the comparison's) and the labeled draws where the summary
    serves a trajectory — the default estimate or comparison, every prefix within its time
    summary's series — else None."""
    classes = _lean_classes(stored, features)
    if classes is not None:
        return classes, _data(store, stored, classes.label_dtype)
    if stored.plan.n_models == 1:
        lean = _lean(stored, 0, features)
    else:
        lean = _lean_pair(stored, features)
    if lean is None:
        return None
    data = _data(store, stored, lean.label_dtype)
    if not _reaches(lean, data[0], _plan_estimator(stored, estimator)):
        return None
    return lean, data


def _near_census(stored: StoredPlan, lean: Any, idx: NDArray[np.intp]) -> bool:
    """:func:`~activeeval.estimators.report.summary_near_census` of the labeled draws
    ``idx`` (the model at them read from the store, not the pool); False before the first."""
    from ..estimators.report import summary_near_census
    from .codec import _measure_from

    if idx.size == 0:
        return False
    meas = _measure_from(stored.plan.measure_spec)
    units = np.unique(idx)
    return summary_near_census(meas, lean.at(units), lean.summary, units)


def _reaches(lean: Any, idx: NDArray[np.intp], estimator: str) -> bool:
    """Whether the summary serves ``estimator`` on the draws ``idx``: the model-assisted
    estimator within its time summary's series (t(n) at the distinct labels); the thesis's,
    which needs no t(n), at any number."""
    return estimator != "assisted" or lean.summary.time.covers(int(np.unique(idx).shape[0]))


def _lean_at(
    stored: StoredPlan, lean: Any, idx: NDArray[np.intp], dq: NDArray[np.float64],
    y: NDArray[Any], estimator: str,
) -> dict[str, float]:  # fmt: skip
    """A trajectory's point from the summary: the design-based interval of the estimate, or
    of the comparison with its p-value, on the prefix ``idx`` — as :func:`_estimate_on` and
    :func:`_compare_on` give it without ``score`` (a multi-class average: by ``estimator``)."""
    from ..estimators.report import summary_static_estimate
    from .codec import _measure_from
    from .summaries import LeanClasses

    plan = stored.plan
    if isinstance(lean, LeanClasses):
        if plan.n_models == 1:
            e = _class_estimate(stored, lean, 0, idx, dq, y, estimator)
            return {"estimate": e.estimate, "stderr": e.stderr, "low": e.ci[0], "high": e.ci[1]}
        cm = _class_compare(stored, lean, idx, dq, y, estimator)
        return {"estimate": cm.difference, "stderr": cm.stderr, "low": cm.ci[0],
                "high": cm.ci[1], "p_value": cm.p_value}  # fmt: skip
    meas = _measure_from(plan.measure_spec)  # not stored.measure, which reads the pool
    units = np.unique(idx)
    if plan.n_models == 1:
        est, interval = summary_static_estimate(
            meas,
            lean.at(units),
            lean.summary,
            idx,
            y,
            dq,
            plan.level,
            score=False,
            estimator=estimator,
        )
        f = _fields(meas, plan.level, est, interval)
        return {"estimate": f["estimate"], "stderr": f["stderr"], "low": f["ci"][0],
                "high": f["ci"][1]}  # fmt: skip
    c = _summary_comparison(stored, meas, lean.at(units), lean.summary, idx, dq, y, estimator)
    ci = _wald_interval(c.difference, c.stderr, plan.level)
    return {"estimate": c.difference, "stderr": c.stderr, "low": ci[0], "high": ci[1],
            "p_value": c.p_value}  # fmt: skip


def _compare_on(
    stored: StoredPlan,
    idx: NDArray[np.intp],
    dq: NDArray[np.float64],
    y: NDArray[Any],
    estimator: str,
    features: ArrayLike | None = None,
    bandwidth: float = DEFAULT_BANDWIDTH,
    score: bool = True,
) -> ComparisonResult:
    """As compare reports the draws ``idx`` (their q ``dq``, labels ``y``), with the exact
    values once every unit with test mass is labeled; without ``score``, each model's own
    interval is Wald's alone (a trajectory)."""
    lv = stored.plan.level
    k = stored.plan.n_models
    sample = _sample(stored, idx, stored.mixture(idx.shape[0])[idx], y)
    if idx.size == 0:
        nan = math.nan
        return ComparisonResult(
            nan, nan, nan, (nan, nan), 0, np.full(k, nan), lv, 0, 0,
            measure=stored.measure.name, comparison=None, **sample, pool_q=stored.mixture(0),
        )  # fmt: skip
    rep = _reporting(stored, estimator, features, bandwidth, idx.shape[0])
    rep = dataclasses.replace(rep, score=score)
    c = stored.pool.compare(rep, idx, y, census=True)
    diff, se = c.difference, c.stderr
    ci = _wald_interval(diff, se, lv)
    cmp = c.comparison
    plan = stored.plan
    res = ComparisonResult(
        float(diff), float(se), float(c.p_value), ci, int(c.best),
        np.asarray(c.estimates, dtype=float), lv, cmp.n_labels, cmp.n_draws,
        measure=cmp.measure, comparison=cmp, model_scores=c.scores,
        value_range=getattr(stored.measure, "value_range", (-math.inf, math.inf)), **sample,
        anytime_terms=_terms(stored, rep, idx, y, None),
        pool_q=rep.q,
    )  # fmt: skip
    if plan.stopping is None or not score:
        return res
    why = rule_met(plan.stopping, stored.pool, rep, idx, y, plan.horizon, window=plan.window)
    return reported(dataclasses.replace(res, stopped=why), plan.stopping)


def trajectory(
    store: StoreFile,
    stored: StoredPlan,
    max_points: int,
    estimator: str | None,
    features: ArrayLike | None,
    bandwidth: float,
) -> pd.DataFrame:
    """:meth:`Session.trajectory <activeeval.Session.trajectory>` on the stored labels: from
    the pool summary where it serves the request (:func:`_lean_at`), else from the pool."""
    lean = _lean_trajectory(store, stored, estimator, features)
    if lean is not None:
        _check_bandwidth(bandwidth)  # as the estimator checks it on the pool's path
        how = _plan_estimator(stored, estimator)
        idx, dq, y = lean[1]
    else:
        how = _check_estimator(stored, estimator, features, bandwidth)
        idx, dq, y = _data(store, stored)
    if idx.size == 0:  # the same columns as once labels arrive (a comparison's p-value too)
        columns = ["n_labels", "cost", "n_draws", "estimate", "stderr", "low", "high"]
        return pd.DataFrame(columns=columns + (["p_value"] if stored.plan.n_models > 1 else []))
    _, first = np.unique(idx, return_index=True)
    first = np.sort(first)
    ends = np.append(first[1:], idx.shape[0])  # prefix j holds the first j + 1 instances
    if lean is not None:
        spent = np.cumsum(_lean_prices(stored, idx[first]))
    else:
        spent = np.cumsum(stored.price[idx[first]])
    pick = np.unique(
        np.linspace(0, ends.shape[0] - 1, min(max_points, ends.shape[0])).round().astype(int)
    )

    def at(n: int) -> dict[str, float]:
        if lean is not None:
            return _lean_at(stored, lean[0], idx[:n], dq[:n], y[:n], how)
        if stored.plan.n_models == 1:
            e = _estimate_on(stored, idx[:n], dq[:n], y[:n], 0, how, features, bandwidth,
                             score=False)  # fmt: skip
            return {"estimate": e.estimate, "stderr": e.stderr, "low": e.ci[0], "high": e.ci[1]}
        cm = _compare_on(stored, idx[:n], dq[:n], y[:n], how, features, bandwidth, score=False)
        return {"estimate": cm.difference, "stderr": cm.stderr, "low": cm.ci[0],
                "high": cm.ci[1], "p_value": cm.p_value}  # fmt: skip

    ns = [int(ends[j]) for j in pick.tolist()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedEstimateWarning)
        warnings.simplefilter("ignore", DegenerateIntervalWarning)
        # With features, one kernel pass serves every point's smoother but the last.
        points = [at(n) for n in ns] if features is None else _batched_smoother(at, ns)
    rows = [
        {"n_labels": j + 1, "cost": float(spent[j]), "n_draws": n, **point}
        for j, n, point in zip(pick.tolist(), ns, points, strict=True)
    ]
    return pd.DataFrame(rows)
