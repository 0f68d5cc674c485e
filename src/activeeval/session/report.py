"""What a session reports: its estimates and comparisons on the labeled prefix of the draws
(the shared :class:`~activeeval.EvaluationResult` and :class:`~activeeval.ComparisonResult`,
bit for bit what :func:`~activeeval.evaluate` / :func:`~activeeval.compare` report for the
same draws), the trajectory of the estimate, where the campaign stands
(:class:`SessionProgress`), and the labels and audit tables."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._validation import check_groups, check_option
from ..acquisition import _budget_room, _first_true_run
from ..errors import (
    DegenerateIntervalWarning,
    ShapeError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from ..estimators.inference import _result_repr, _wald_interval
from ..estimators.report import LazyTerms, Reporting, _result_fields, pool_for
from ..estimators.smoother import DEFAULT_BANDWIDTH, _batched_smoother
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
from .codec import _py, _stored_labels
from .planning import StoredPlan
from .schema import StoreFile

__all__ = [
    "SessionProgress",
    "audit_frame",
    "compare",
    "estimate",
    "labels_frame",
    "progress",
    "trajectory",
]


@dataclass(frozen=True)
class SessionProgress:
    """Where a campaign stands: what ``Session.progress`` returns.

    Attributes
    ----------
    n_labels : int
        Distinct pool instances labeled.
    cost_spent : float
        Their labeling cost (= ``n_labels`` without costs).
    committed : float
        ``cost_spent`` plus the cost of ids handed out but not labeled yet.
    budget : float
        The plan's budget (labels, or cost units with costs).
    n_draws : int
        Draws the campaign has walked through (repeats of handed-out instances included).
    n_handed_out : int
        Ids handed out so far.
    n_pending : int
        Ids handed out and still waiting for a label.
    n_estimation_draws : int
        Length of the longest fully labeled prefix of the draws, which the estimate uses.
    finished : bool
        No further id will be handed out: the next new instance in the draw sequence costs more
        than is left (``stop_reason="budget"``), every instance q can draw is handed out
        (``"pool"``), the draw cap is reached (``"max_draws"``), or the plan's stopping rule
        is met on the labels so far (``"stopping rule"``; ``Session.stopped`` says how).
    complete : bool
        Finished and nothing pending: the campaign's estimate is final.
    stop_reason : {"budget", "pool", "max_draws", "stopping rule"} or None
        Why the campaign is finished; None while it is not.
    pending_by_annotator : dict
        Pending ids per holder: the annotator's name, or None for ids handed out to nobody
        in particular (``Session.next_batch(k, annotator=...)``); holders with none pending
        are left out.
    n_waiting : int
        Labels recorded but not yet in the estimate: their instances lie beyond the longest
        fully labeled prefix of the draws, behind ids still pending.
    blocking_by_annotator : dict
        Who holds the pending ids that keep those labels waiting (handed out before the
        last waiting label's instance), per holder as in ``pending_by_annotator``.
    n_overlapping : int
        Labels settled from several annotations (a labeling tool's overlap, e.g. a Label
        Studio export).
    n_unanimous : int
        Of those, the labels on which every annotation agreed (the agreement rate is
        ``n_unanimous / n_overlapping``).

    See Also
    --------
    activeeval.Session : ``Session.progress`` returns it.
    activeeval.session.SessionPlan : What the campaign was created with.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3], [0.4, 0.6]])
    >>> tmp = tempfile.TemporaryDirectory()
    >>> s = ae.Session.create(os.path.join(tmp.name, "c.db"), proba, "error_rate", budget=3)
    >>> ids = s.next_batch(2)
    >>> _ = s.record({ids[0]: 0})
    >>> p = s.progress()
    >>> p.n_labels, p.n_pending, p.committed, p.finished
    (1, 1, 2.0, False)
    >>> s.close()
    >>> tmp.cleanup()
    """

    n_labels: int
    cost_spent: float
    committed: float
    budget: float
    n_draws: int
    n_handed_out: int
    n_pending: int
    n_estimation_draws: int
    finished: bool
    complete: bool
    stop_reason: str | None
    pending_by_annotator: dict[str | None, int] = dataclasses.field(default_factory=dict)
    n_waiting: int = 0
    blocking_by_annotator: dict[str | None, int] = dataclasses.field(default_factory=dict)
    n_overlapping: int = 0
    n_unanimous: int = 0

    def __repr__(self) -> str:
        lines = [
            ("n_labels", "cost_spent", "committed", "budget"),
            ("n_draws", "n_handed_out", "n_pending", "n_estimation_draws"),
            ("finished", "complete", "stop_reason"),
        ]
        if self.n_waiting or any(k is not None for k in self.pending_by_annotator):
            lines.append(("pending_by_annotator", "n_waiting", "blocking_by_annotator"))
        if self.n_overlapping:
            lines.append(("n_overlapping", "n_unanimous"))
        return _result_repr(self, *lines)


# ----------------------------------------------------------------- the labeled prefix
def _snapshot(
    c: sqlite3.Connection, pool_size: int
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.bool_], list[Any]]:
    """Campaign draws, their q, and the labels by pool position, from one transaction."""
    cursor = int(c.execute("SELECT cursor FROM state").fetchone()[0])
    rows = c.execute(
        "SELECT position, q FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
    ).fetchall()
    draws = np.array([r[0] for r in rows], dtype=np.intp)
    q = np.array([r[1] for r in rows], dtype=np.float64)
    labeled = np.zeros(pool_size, dtype=bool)
    by_pos: list[Any] = [None] * pool_size
    for p, lab in c.execute("SELECT position, label FROM labels"):
        labeled[p] = True
        by_pos[p] = lab
    return draws, q, labeled, by_pos


def _labeled_prefix(draws: NDArray[np.intp], labeled: NDArray[np.bool_]) -> int:
    """Length of the longest prefix of the draws whose instances are all labeled."""
    return _first_true_run(labeled[draws]) if draws.size else 0


def _data(
    store: StoreFile, stored: StoredPlan
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[Any]]:
    """The labeled prefix: pool positions, each draw's q, the labels."""
    draws, q, labeled, by_pos = store.read(lambda c: _snapshot(c, stored.plan.pool_size))
    n = _labeled_prefix(draws, labeled)
    idx = draws[:n]
    return idx, q[:n], _stored_labels([by_pos[p] for p in idx.tolist()], stored.label_dtype)


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
    how = (
        stored.plan.estimator
        if estimator is None
        else check_option(estimator, ESTIMATORS, "estimator")
    )
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
    """:meth:`Session.estimate <activeeval.Session.estimate>` on the stored labels."""
    if not 0 <= model < stored.plan.n_models:
        raise ShapeError(f"model: must be in [0, {stored.plan.n_models}), got {model}.")
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    return _estimate_on(stored, idx, dq, y, model, how, features, bandwidth)


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
        group = dataclasses.replace(
            stored, pw=pw, pool=pool_for(stored.predictives, stored.measure, pw),
            plan=dataclasses.replace(plan, stopping=None),
        )  # fmt: skip
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
    met yet, or no label yet)."""
    plan = stored.plan
    if plan.stopping is None:
        return None
    idx, _dq, y = _data(store, stored)
    if idx.size == 0:
        return None
    rep = _reporting(stored, plan.estimator, None, DEFAULT_BANDWIDTH, idx.shape[0])
    return rule_met(plan.stopping, stored.pool, rep, idx, y, plan.horizon, window=plan.window)


def compare(
    store: StoreFile,
    stored: StoredPlan,
    estimator: str | None,
    features: ArrayLike | None,
    bandwidth: float,
) -> ComparisonResult:
    """:meth:`Session.compare <activeeval.Session.compare>` on the stored labels."""
    if stored.plan.n_models < 2:
        raise ShapeError("compare: this session evaluates one model; use estimate() instead.")
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    return _compare_on(stored, idx, dq, y, how, features, bandwidth)


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
    """:meth:`Session.trajectory <activeeval.Session.trajectory>` on the stored labels."""
    how = _check_estimator(stored, estimator, features, bandwidth)
    idx, dq, y = _data(store, stored)
    if idx.size == 0:  # the same columns as once labels arrive (a comparison's p-value too)
        columns = ["n_labels", "cost", "n_draws", "estimate", "stderr", "low", "high"]
        return pd.DataFrame(columns=columns + (["p_value"] if stored.plan.n_models > 1 else []))
    _, first = np.unique(idx, return_index=True)
    first = np.sort(first)
    ends = np.append(first[1:], idx.shape[0])  # prefix j holds the first j + 1 instances
    spent = np.cumsum(stored.price[idx[first]])
    pick = np.unique(
        np.linspace(0, ends.shape[0] - 1, min(max_points, ends.shape[0])).round().astype(int)
    )

    def at(n: int) -> dict[str, float]:
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


# ------------------------------------------------------------------------- reporting
def progress(store: StoreFile, stored: StoredPlan) -> SessionProgress:
    """:meth:`Session.progress <activeeval.Session.progress>`."""

    def read(c: sqlite3.Connection) -> tuple[Any, ...]:
        cursor, finished = c.execute("SELECT cursor, finished FROM state").fetchone()
        rows = c.execute("SELECT position, seq, holder FROM handouts ORDER BY seq").fetchall()
        handed = np.array([r[0] for r in rows], np.intp)
        holders = [r[2] for r in rows]
        labeled = np.array([r[0] for r in c.execute("SELECT position FROM labels")], np.intp)
        draws = np.array(
            [
                r[0]
                for r in c.execute(
                    "SELECT position FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
                )
            ],
            dtype=np.intp,
        )
        several, unanimous = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(n_agreeing = n_annotations), 0) FROM agreement "
            "WHERE n_annotations > 1"
        ).fetchone()
        return cursor, finished, handed, holders, labeled, draws, (several, unanimous)

    cursor, finished, handed, holders, labeled, draws, overlap = store.read(read)
    plan, price = stored.plan, stored.price
    spent = float(price[labeled].sum())
    committed = float(price[handed].sum())
    mask = np.zeros(plan.pool_size, dtype=bool)
    mask[labeled] = True
    if finished is None:
        # Finished in effect when no instance left to hand out is affordable.
        left = np.ones(plan.pool_size, dtype=bool)
        left[handed] = False
        left &= stored.q > 0
        room = _budget_room(plan.budget, committed)
        if not left.any():
            finished = "pool"
        elif price[left].min() > room:
            finished = "budget"
        elif stop_reason(store, stored) is not None:
            finished = "stopping rule"
    n_pending = int(handed.shape[0] - labeled.shape[0])
    n_prefix = _labeled_prefix(draws, mask)
    pending_by, waiting, blocking_by = _holders(handed, holders, mask, draws[:n_prefix])
    return SessionProgress(
        n_labels=int(labeled.shape[0]),
        cost_spent=spent,
        committed=committed,
        budget=plan.budget,
        n_draws=int(cursor),
        n_handed_out=int(handed.shape[0]),
        n_pending=n_pending,
        n_estimation_draws=n_prefix,
        finished=finished is not None,
        complete=finished is not None and n_pending == 0,
        stop_reason=finished,
        pending_by_annotator=pending_by,
        n_waiting=waiting,
        blocking_by_annotator=blocking_by,
        n_overlapping=int(overlap[0]),
        n_unanimous=int(overlap[1]),
    )


def _holders(
    handed: NDArray[np.intp], holders: list[str | None], labeled: NDArray[np.bool_],
    prefix: NDArray[np.intp],
) -> tuple[dict[str | None, int], int, dict[str | None, int]]:  # fmt: skip
    """Pending ids per holder; the labels beyond the estimate's prefix; and per holder the
    pending ids handed out before the last of those labels (in hand-out order, ``handed``),
    which hold them back."""
    done = labeled[handed]
    in_prefix = np.zeros(labeled.shape[0], dtype=bool)
    in_prefix[prefix] = True
    waits = done & ~in_prefix[handed]
    last = int(np.flatnonzero(waits)[-1]) if waits.any() else -1
    pending_by: dict[str | None, int] = {}
    blocking_by: dict[str | None, int] = {}
    for j in np.flatnonzero(~done).tolist():
        pending_by[holders[j]] = pending_by.get(holders[j], 0) + 1
        if j < last:
            blocking_by[holders[j]] = blocking_by.get(holders[j], 0) + 1
    return pending_by, int(waits.sum()), blocking_by


def labels_frame(store: StoreFile, stored: StoredPlan) -> pd.DataFrame:
    """:meth:`Session.labels_frame <activeeval.Session.labels_frame>`."""

    def read(c: sqlite3.Connection) -> tuple[list[Any], list[int]]:
        rows = c.execute(
            "SELECT h.position, l.label, l.annotator, l.recorded_at, h.batch, h.seq, "
            "h.rank, d.q FROM (SELECT position, batch, seq, ROW_NUMBER() OVER (ORDER BY seq) "
            "AS rank FROM handouts) h JOIN labels l ON l.position = h.position "
            "JOIN draws d ON d.seq = h.seq ORDER BY h.seq"
        ).fetchall()
        cursor = int(c.execute("SELECT cursor FROM state").fetchone()[0])
        draws = [r[0] for r in c.execute("SELECT position FROM draws WHERE seq < ?", (cursor,))]
        return rows, draws

    rows, draws = store.read(read)
    counts = np.bincount(np.asarray(draws, dtype=np.intp), minlength=stored.plan.pool_size)
    pos = np.array([r[0] for r in rows], dtype=np.intp)
    frame = pd.DataFrame(
        {
            "id": pd.Series([_py(v) for v in stored.ids[pos].tolist()], dtype=object),
            "label": [r[1] for r in rows],
            "annotator": [r[2] for r in rows],
            "timestamp": [r[3] for r in rows],
            "order": [r[6] for r in rows],
            "batch": [r[4] for r in rows],
            "first_draw": [r[5] for r in rows],
            "times_drawn": counts[pos],
            "q": np.array([r[7] for r in rows], dtype=np.float64),
            "session_id": stored.plan.session_id,
        }
    )
    if not stored.plan.ranking:  # the table of a labels input: id,label, or id,item,grade
        return frame
    keys, offsets = stored.grade_keys, stored.grade_offsets
    assert keys is not None and offsets is not None
    grades = [json.loads(v) for v in frame.pop("label")]
    items = [[_py(k) for k in keys[offsets[p] : offsets[p + 1]].tolist()] for p in pos]
    frame.insert(1, "item", pd.Series(items, dtype=object))
    frame.insert(2, "grade", pd.Series(grades, dtype=object))
    frame = frame.explode(["item", "grade"], ignore_index=True)
    frame["grade"] = frame["grade"].astype(np.int64)
    return frame


def audit_frame(store: StoreFile, stored: StoredPlan) -> pd.DataFrame:
    """:meth:`Session.audit_frame <activeeval.Session.audit_frame>`."""
    rows = store.read(
        lambda c: c.execute(
            "SELECT at, action, position, old_label, new_label, old_annotator, annotator "
            "FROM audit ORDER BY event"
        ).fetchall()
    )
    frame = pd.DataFrame(
        rows,
        columns=[
            "at",
            "action",
            "position",
            "old_label",
            "new_label",
            "old_annotator",
            "annotator",
        ],
    )
    frame.insert(2, "id", [_py(v) for v in stored.ids[frame.pop("position").to_numpy(int)]])
    return frame
