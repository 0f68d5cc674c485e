"""A session's plan as its store holds it, read without the pool (:func:`load_plan`):
:class:`SessionPlan` (what the session was created with), :class:`StoredPlan` (the plan,
with the whole pool read once first needed, :class:`PoolData`), and the draw rule
(:func:`_draw_block`; hand-outs draw through the draw index, :mod:`.lookup`).

This module loads neither the estimators nor the sampling code, so that the commands an
annotator's loop runs (``session next``, ``record``, ``status`` of progress, ``export``)
start fast; what needs the pool imports them when it reads it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .._chunks import uniform
from ..errors import NotAStoreError, StoreError
from ..predictive import restored_decision
from .lookup import PoolIds, plan_horizon, read_costs
from .schema import StoreFile

if TYPE_CHECKING:
    from ..estimators.report import Pool
    from ..stopping import StoppingRule

__all__ = [
    "BLOCK_DRAW_RULE",
    "DEFAULT_BLOCK_SIZE",
    "DRAW_RULE",
    "DRAW_RULES",
    "PoolData",
    "SessionPlan",
    "StoredPlan",
    "load_plan",
]

DEFAULT_BLOCK_SIZE = 1024
"""Draws materialized at a time (``Session.create``'s ``block_size``): block b of the draw
sequence is the b-th run of ``block_size`` uniforms of ``numpy.random.default_rng(seed)``'s
stream (:data:`DRAW_RULE`)."""
#: Name of the rule that turns (q, seed, block) into draws; stored with the plan. Block b of
#: phase 0 takes uniforms b·block_size … of the stream of ``default_rng(seed)`` (its bit
#: generator advanced, O(1) per block), so the draw sequence is the one
#: ``evaluate(random_state=seed)`` draws, in every block (schema 7).
DRAW_RULE = "inverse-cdf(cumsum(q)/sum, default_rng(seed) stream from block*block_size)"
#: The rule of stores written before schema 7: block b of phase 0 from
#: ``default_rng([seed, b])`` (the stream of ``default_rng(seed)`` in block 0 only). Such
#: stores keep it, so that they continue bit for bit.
BLOCK_DRAW_RULE = "inverse-cdf(cumsum(q)/sum, default_rng([seed, block]).random(block_size))"
#: Every rule this release can continue.
DRAW_RULES = (DRAW_RULE, BLOCK_DRAW_RULE)


@dataclass(frozen=True)
class SessionPlan:
    """What a session was created with; never changes afterwards.

    A session's ``plan`` attribute: the arguments of ``Session.create`` after validation,
    and how the draw sequence is generated.

    Attributes
    ----------
    session_id : str
        Random identifier; a labels input with a ``session_id`` column must carry this one.
    kind : {"evaluation", "comparison"}
        One model evaluated, or two or more compared.
    measure : str
        The measure's name (``"f1"``, ``"error_rate"``, ...).
    measure_spec : dict
        The measure's class and parameters, as stored.
    pos_label : label or None
        Positive class of F-measures, precision and recall.
    beta : float or None
        β of an F-measure.
    method : str
        Sampling method.
    budget : float
        Labels to buy, or total cost when ``cost_sensitive``.
    seed : int
        Seed of the draw sequence.
    level : float
        Confidence level of the reported intervals.
    pool_size : int
        Instances in the pool (queries, for a ranked pool).
    n_models : int
        Models evaluated (1) or compared.
    model_names : tuple of str
        A name per model.
    predictive_kind : {"categorical", "gaussian"}
        The models' predictive distributions.
    label_space : tuple or None
        The class labels (the grades, for a ranked pool); None for regressors.
    cost_sensitive : bool
        Whether per-instance labeling costs were given (the budget is then in cost units).
    fingerprint : str
        SHA-256 over the pool ids, every model's predictions and the costs.
    block_size : int
        Draws generated per block of the draw sequence.
    max_draws : int
        Cap on the length of the draw sequence (that of ``evaluate``: 20·budget + 1000
        draws, the budget in labels).
    draw_rule : str
        Name of the rule that turns (q, seed, block) into draws.
    created_at : str
        Creation time (UTC, ISO 8601).
    schema_version : int
        The store's schema version.
    ranking : bool
        A pool of ranked queries (``GradedRelevance`` models, DCG/ERR): ids are query ids, a
        label is the grade of every item of the query (labels input ``id,item,grade``).
    estimator : {"assisted", "snis"}
        The estimator the session reports (``Session.estimate``); stores written before
        sessions had a choice report the thesis's, ``"snis"``.
    stopping : StoppingRule or None
        The stopping rule: once it is met on the labeled prefix, ``Session.next_batch`` hands
        out nothing more and the reports say why.
    horizon : float
        t* of the anytime-valid sequences, in draws, fixed at creation (for stores from
        before, the same function of the stored plan).
    window : float or None
        A target-width rule's window, fixed at creation.
    sigma0_subsample : bool
        Whether the anytime sequences' σ₀ is summed over the tempered curve's fixed subsample
        (stores created since; above 50,000 instances it differs from the whole pool's sum,
        which stores created before keep).

    See Also
    --------
    activeeval.Session : The session whose ``plan`` this is.
    activeeval.session.SessionProgress : The session's mutable state, summarized.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3], [0.4, 0.6]])
    >>> tmp = tempfile.TemporaryDirectory()
    >>> s = ae.Session.create(os.path.join(tmp.name, "c.db"), proba, "f1", budget=4, seed=1)
    >>> s.plan.kind, s.plan.measure, s.plan.method, s.plan.estimator
    ('evaluation', 'f1', 'active', 'assisted')
    >>> s.plan.budget, s.plan.pool_size, s.plan.label_space
    (4.0, 5, (0, 1))
    >>> s.close()
    >>> tmp.cleanup()
    """

    session_id: str
    kind: str
    measure: str
    measure_spec: dict[str, Any]
    pos_label: Any
    beta: float | None
    method: str
    budget: float
    seed: int
    level: float
    pool_size: int
    n_models: int
    model_names: tuple[str, ...]
    predictive_kind: str
    label_space: tuple[Any, ...] | None
    cost_sensitive: bool
    fingerprint: str
    block_size: int
    max_draws: int
    draw_rule: str
    created_at: str
    schema_version: int
    ranking: bool = False
    estimator: str = "snis"
    stopping: StoppingRule | None = None
    horizon: float = math.nan
    window: float | None = None
    sigma0_subsample: bool = False

    def __repr__(self) -> str:
        from ..estimators.inference import _result_repr

        return _result_repr(
            self,
            ("session_id", "kind", "measure"),
            ("method", "estimator", "budget", "cost_sensitive", "seed", "level", "stopping"),
            ("pool_size", "n_models", "predictive_kind", "ranking"),
        )


def _draw_block(
    cdf: NDArray[np.float64],
    seed: int,
    block: int,
    size: int,
    phase: int = 0,
    rule: str = DRAW_RULE,
) -> NDArray[np.intp]:
    """Block ``block`` of the session's i.i.d. draws from q (inverse CDF, as
    :func:`~activeeval.sampling.draw`, pinned here: a stored session must not change when the
    library's sampler does). Phase k ≥ 1 (a model added) numbers its blocks from its first
    draw and has uniforms of its own, ``default_rng([seed, k, block])``; phase 0 follows the
    store's ``rule`` (:data:`DRAW_RULE` or, for stores before schema 7,
    :data:`BLOCK_DRAW_RULE`)."""
    u = _uniforms(seed, block, size, phase, rule)
    idx = np.searchsorted(cdf, u, side="right")
    return np.minimum(idx, cdf.shape[0] - 1).astype(np.intp)


def _uniforms(
    seed: int, block: int, size: int, phase: int = 0, rule: str = DRAW_RULE
) -> NDArray[np.float64]:
    """The uniforms of block ``block`` of phase ``phase`` (see :func:`_draw_block`). Under
    :data:`DRAW_RULE`, phase 0's are the stream of ``default_rng(seed)`` from uniform
    ``block·size`` on: each float64 uniform is one 64-bit output of PCG64, so advancing the
    bit generator by that many outputs lands exactly there."""
    if phase == 0 and rule == DRAW_RULE:
        bits = np.random.PCG64(seed)
        bits.advance(block * size)
        return np.random.Generator(bits).random(size)
    if rule not in DRAW_RULES:
        raise StoreError(f"draw rule {rule!r}: not one this release can continue.")
    key = [seed, block] if phase == 0 else [seed, phase, block]
    return np.random.default_rng(key).random(size)


def _stopping_from(text: str | None) -> StoppingRule | None:
    if text is None:
        return None
    from ..claims import parse_claim
    from ..stopping import StoppingRule

    spec = json.loads(text)
    claim = None if spec["claim"] is None else parse_claim(spec["claim"])
    return StoppingRule(spec["target_width"], claim, bool(spec["decide"]), spec["rule"])


# --------------------------------------------------------------------------- open
@dataclass(eq=False)
class PoolData:
    """What a session reads from its store's whole-pool columns (ids, costs, every model's
    predictions), loaded once first needed (:attr:`StoredPlan.data`) and checked against the
    fingerprint; ``pool`` is the pool interface
    (:class:`~activeeval.estimators.report.PlainPool` or
    :class:`~activeeval.estimators.report.RankedPool`) the session's reports ask; it caches a
    ranked pool's control-variate moments once first needed."""

    ids: NDArray[Any]
    index: pd.Index
    costs: NDArray[np.float64] | None
    price: NDArray[np.float64]  # each instance's labeling cost: costs, or 1
    predictives: list[Any]
    measure: Any
    grade_keys: NDArray[Any] | None  # a ranked pool: the items to grade, query after query
    grade_offsets: NDArray[np.int64] | None
    pw: NDArray[np.float64]  # the test distribution: uniform over the pool
    pool: Pool
    label_dtype: Any  # the stored labels' dtype; None: a ranked pool's grade lists (JSON)
    #: (first sequence number, q) of every phase of the draw sequence, the plan's q first.
    phases: tuple[tuple[int, NDArray[np.float64]], ...]


@dataclass(eq=False)
class StoredPlan:
    """A session's plan read back from its store (:func:`load_plan`), with what is derived
    from it once per open; nothing in it changes while the session is open.

    Opening reads no whole-pool column: hand-outs, intake and progress work from the plan,
    the draw index of every phase and the pool table's keys (:mod:`.lookup`), in O(labels).
    What needs the pool itself (estimates, the ids of the whole pool, the models'
    predictions) reads it once, when first asked for (:attr:`data`), and checks it against
    the fingerprint then."""

    plan: SessionPlan
    store: StoreFile
    #: The first sequence number of every phase of the draw sequence (0 first). Hand-outs
    #: read the last phase's draw index in their own transaction (:mod:`.lookup`).
    phase_starts: tuple[int, ...]
    ids_integer: bool
    _data: PoolData | None = None
    #: Each model's stored pool summary (:mod:`.summaries`), once read; None: there is none.
    _lean: dict[int | str, Any] = field(default_factory=dict)

    @property
    def data(self) -> PoolData:
        """The whole pool, read (and checked against the fingerprint) on first use."""
        if self._data is None:
            self._data = _load_pool(self.store, self.plan, self.ids_integer)
        return self._data

    @property
    def ids(self) -> NDArray[Any]:
        return self.data.ids

    @property
    def index(self) -> pd.Index:
        return self.data.index

    @property
    def costs(self) -> NDArray[np.float64] | None:
        return self.data.costs

    @property
    def price(self) -> NDArray[np.float64]:
        return self.data.price

    @property
    def predictives(self) -> list[Any]:
        return self.data.predictives

    @property
    def measure(self) -> Any:
        return self.data.measure

    @property
    def grade_keys(self) -> NDArray[Any] | None:
        return self.data.grade_keys

    @property
    def grade_offsets(self) -> NDArray[np.int64] | None:
        return self.data.grade_offsets

    @property
    def pw(self) -> NDArray[np.float64]:
        return self.data.pw

    @property
    def pool(self) -> Pool:
        return self.data.pool

    @property
    def label_dtype(self) -> Any:
        return self.data.label_dtype

    @property
    def phases(self) -> tuple[tuple[int, NDArray[np.float64]], ...]:
        return self.data.phases

    @property
    def q(self) -> NDArray[np.float64]:
        """The last phase's q, which new draws come from."""
        return self.phases[-1][1]

    def ids_at(self, positions: Any) -> list[Any]:
        """The pool ids at ``positions``, in their order (the pool table's key)."""
        pos = [int(p) for p in np.asarray(positions, dtype=np.intp).ravel().tolist()]
        return self.store.read(lambda c: PoolIds.ids_at(c, pos))

    def positions_of(self, keys: Sequence[Any]) -> NDArray[np.intp]:
        """The position of every id in ``keys`` (−1 where it is none of the pool's), through
        the pool table's id index."""
        return self.store.read(lambda c: PoolIds.positions_of(c, list(keys)))

    def first_ids(self, n: int) -> list[Any]:
        """The first ``n`` pool ids (for messages)."""
        return self.store.read(lambda c: PoolIds.head(c, n))

    def phases_used(self, n: int) -> int:
        """How many phases the first ``n`` draws span."""
        return 1 + sum(first < n for first in self.phase_starts[1:])

    def mixture(self, n: int) -> NDArray[np.float64]:
        """The q that the first ``n`` draws are weighted by: the one they all came from, or
        the balance heuristic's mixture Σ_k n_k q_k / n of the phases they span (n_k of
        them from phase k; multiple importance sampling, ``docs/how-it-works/sampling.md``)."""
        phases = self.phases
        if len(phases) <= 1:
            return self.q
        starts = [first for first, _ in phases] + [max(n, phases[-1][0])]
        counts = [max(0, min(n, starts[k + 1]) - starts[k]) for k in range(len(phases))]
        used = [k for k, c in enumerate(counts) if c > 0]
        if len(used) <= 1:
            return phases[used[0] if used else 0][1]
        total = np.zeros_like(self.q)
        for k in used:
            total += counts[k] * phases[k][1]
        return total / sum(counts)


def load_plan(store: StoreFile) -> StoredPlan:
    """Read the immutable plan and what hand-outs need; the pool itself is read when first
    needed (:attr:`StoredPlan.data`)."""
    meta, plan, names, ranking, phase_rows, n_indexed, integer = _read_plan(store)
    (
        kind,
        measure_name,
        spec,
        beta,
        pos_label,
        method,
        budget,
        seed,
        level,
        m,
        n_models,
        pkind,
        space,
        fingerprint,
        block_size,
        max_draws,
        draw_rule,
        created,
        has_costs,
    ) = plan
    label_space = None if space is None else tuple(json.loads(space))
    starts = (0, *(int(first) for (first,) in phase_rows))
    if n_indexed != len(starts):
        raise StoreError(f"{store.path}: the draw index does not cover every phase of q.")
    if draw_rule not in DRAW_RULES:
        raise StoreError(
            f"{store.path}: its draw rule {draw_rule!r} is not one this release can continue; "
            "the file was altered outside activeeval."
        )
    session_plan = SessionPlan(
        session_id=meta["session_id"],
        kind=kind,
        measure=measure_name,
        measure_spec=json.loads(spec),
        pos_label=json.loads(pos_label) if pos_label is not None else None,
        beta=beta,
        method=method,
        budget=float(budget),
        seed=int(seed),
        level=float(level),
        pool_size=int(m),
        n_models=int(n_models),
        model_names=tuple(names),
        predictive_kind=pkind,
        label_space=label_space,
        cost_sensitive=bool(has_costs),
        fingerprint=fingerprint,
        block_size=int(block_size),
        max_draws=int(max_draws),
        draw_rule=draw_rule,
        created_at=created,
        schema_version=int(meta["schema_version"]),
        ranking=bool(ranking),
        estimator=meta.get("estimator", "snis"),
        stopping=_stopping_from(meta.get("stopping")),
        horizon=(float(meta["horizon"]) if "horizon" in meta else store.read(plan_horizon)),
        window=float(meta["window"]) if "window" in meta else None,
        sigma0_subsample=meta.get("sigma0") == "subsample",
    )
    return StoredPlan(
        plan=session_plan,
        store=store,
        phase_starts=starts,
        ids_integer=integer,
    )


def _load_pool(store: StoreFile, plan: SessionPlan, integer: bool) -> PoolData:
    """The whole pool: ids (``integer`` ones, else strings), costs, every model's predictions
    and q per phase, checked against the fingerprint."""
    from ..estimators.report import PlainPool, RankedPool, pool_for
    from .codec import _fingerprint, _measure_from

    m = plan.pool_size

    def read(c: sqlite3.Connection) -> tuple[Any, ...]:
        models = [
            (name, k, _flat(c, "models.predictions", j),
             None if has is None else _flat(c, "models.decision", j))
            for j, name, k, has in c.execute(
                "SELECT model, name, n_columns, decision IS NOT NULL OR NULL FROM models "
                "ORDER BY model"
            ).fetchall()
        ]  # fmt: skip
        pool = _pool_columns(c, m, integer, plan.cost_sensitive)
        ranking = c.execute("SELECT offsets, items FROM ranking ORDER BY model").fetchall()
        q0 = _flat(c, "plan.q", 1)
        phases = [
            (first, _flat(c, "phases.q", phase))
            for phase, first in c.execute("SELECT phase, first_seq FROM phases ORDER BY phase")
        ]
        return models, pool, ranking, q0, phases

    try:
        models, (ids, costs), ranking, qblob, phase_rows = store.read(read)
    except sqlite3.DatabaseError as exc:
        raise NotAStoreError(f"{store.path}: the store is damaged ({exc}).") from exc
    if len(models) != plan.n_models:
        raise StoreError(
            f"{store.path}: a model was added by another process while this session was "
            "open; open the store again."
        )
    if ids is None:
        raise StoreError(
            f"{store.path}: the pool table's ids or costs are not of the session's types; "
            "the file was altered outside activeeval."
        )
    arrays, structure = _read_pool(store.path, m, models, ranking)
    decisions = [None if r[3] is None else _sized(store.path, r[3], (m,)) for r in models]
    if _fingerprint(ids, arrays, costs, structure or None, decisions) != plan.fingerprint:
        raise StoreError(
            f"{store.path}: the stored pool does not match its fingerprint; the file was "
            "altered outside activeeval."
        )
    phases = (
        (0, _sized(store.path, qblob, (m,))),
        *((int(first), _sized(store.path, q, (m,))) for first, q in phase_rows),
    )
    predictives, meas = _bind_models(
        _measure_from(plan.measure_spec), arrays, structure, plan.predictive_kind,
        plan.label_space,
    )  # fmt: skip
    predictives = [restored_decision(p, f) for p, f in zip(predictives, decisions, strict=True)]
    pw = uniform(m)
    pool = pool_for(predictives, meas, pw)
    if isinstance(pool, PlainPool):  # a store from before keeps its σ₀ over the whole pool
        pool.sigma0_subsample = plan.sigma0_subsample
    grade_keys, grade_offsets = (
        pool.items_to_grade() if isinstance(pool, RankedPool) else (None, None)
    )
    return PoolData(
        ids=ids,
        index=pd.Index(ids),
        costs=costs,
        price=np.ones(m) if costs is None else costs,
        predictives=predictives,
        measure=meas,
        grade_keys=grade_keys,
        grade_offsets=grade_offsets,
        pw=pw,
        pool=pool,
        label_dtype=_label_dtype(pool, plan.label_space),
        phases=phases,
    )


def _read_plan(store: StoreFile) -> tuple[Any, ...]:
    """The store's meta, plan (without q), model names, whether the pool is ranked, the
    phases' first draws, every phase's draw index and whether the ids are integers, from one
    transaction; no whole-pool column."""

    def read(c: sqlite3.Connection) -> tuple[Any, ...]:
        meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
        plan = c.execute(
            "SELECT kind, measure, measure_spec, beta, pos_label, method, budget, seed, "
            "level, pool_size, n_models, predictive_kind, label_space, fingerprint, "
            "block_size, max_draws, draw_rule, created_at, "
            "(SELECT cost IS NOT NULL FROM pool WHERE position = 0) FROM plan"
        ).fetchone()
        if plan is None:
            return meta, None, [], False, [], 0, False
        names = [r[0] for r in c.execute("SELECT name FROM models ORDER BY model")]
        n_ranking = int(c.execute("SELECT COUNT(*) FROM ranking").fetchone()[0])
        # the models' prediction blobs by their lengths alone (SQLite reads no content):
        # one row of n_columns per pool instance, unless the pool is ranked
        unfit = c.execute(
            "SELECT COUNT(*) FROM models WHERE length(predictions) + (SELECT "
            "COALESCE(SUM(length(data)), 0) FROM parts WHERE owner = 'models.predictions:' "
            "|| model) != 8 * n_columns * ?",
            (int(plan[9]),),
        ).fetchone()[0]
        if n_ranking not in (0, len(names)) or (n_ranking == 0 and unfit):
            raise StoreError(
                f"{store.path}: the stored predictions do not fit the pool (ranking rows "
                f"{n_ranking}, models {len(names)}); the file was altered outside activeeval."
            )
        ranked = n_ranking > 0
        phases = c.execute("SELECT first_seq FROM phases ORDER BY phase").fetchall()
        n_indexed = int(c.execute("SELECT COUNT(*) FROM draw_index").fetchone()[0])
        return meta, plan, names, ranked, phases, n_indexed, PoolIds(c).integer

    try:
        out = store.read(read)
    except sqlite3.DatabaseError as exc:
        raise NotAStoreError(f"{store.path}: the store is damaged ({exc}).") from exc
    if out[1] is None:
        raise NotAStoreError(f"{store.path}: the store has no plan; it is not a session.")
    return out


def _pool_columns(
    c: sqlite3.Connection, m: int, integer: bool, cost_sensitive: bool
) -> tuple[NDArray[Any] | None, NDArray[np.float64] | None]:
    """The pool's ids and costs (None without costs) in position order, read a column at a
    time straight into arrays; (None, None) where a value is not of the session's type (the
    table was altered)."""
    rows = c.execute("SELECT id FROM pool ORDER BY position")
    try:
        if integer:
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=m)
        else:
            ids = np.array([str(r[0]) for r in rows], dtype=object)
        costs = read_costs(c, m) if cost_sensitive else None
    except (TypeError, ValueError):
        return None, None
    return ids, costs


def _flat(c: sqlite3.Connection, column: str, key: int) -> NDArray[np.float64]:
    """A stored float64 array, flat, as long as the store holds it (its column's blob or its
    parts: :mod:`.blobs`)."""
    from .blobs import StoredArray

    n = StoredArray(column, key, (0,)).stored_bytes(c)
    return StoredArray(column, key, (n // 8,)).read(c)


def _sized(path: Path, flat: NDArray[np.float64], shape: tuple[int, ...]) -> NDArray[np.float64]:
    """A stored array in its shape, or a StoreError where it does not fit (the store was
    altered)."""
    try:
        return flat.reshape(shape)
    except ValueError as exc:
        raise StoreError(
            f"{path}: a stored array does not fit the pool ({exc}); the file was altered "
            "outside activeeval."
        ) from exc


def _read_pool(
    path: Path, m: int, models: list[Any], ranking: list[Any]
) -> tuple[list[NDArray[np.float64]], list[Any]]:
    """Every model's prediction array and a ranked pool's (offsets, item ids JSON) per
    model, from the stored rows."""
    structure = [(np.frombuffer(off, dtype="<i8").astype(np.int64), it) for off, it in ranking]
    if ranking and len(ranking) != len(models):
        raise StoreError(f"{path}: the ranking table does not cover every model.")
    rows = [int(off[-1]) for off, _ in structure if off.size] if ranking else [m] * len(models)
    try:
        arrays = [flat.reshape(r, k) for (_, k, flat, _), r in zip(models, rows, strict=True)]
    except ValueError as exc:
        raise StoreError(
            f"{path}: the stored predictions do not fit the pool ({exc}); the file was "
            "altered outside activeeval."
        ) from exc
    return arrays, structure


def _bind_models(
    meas: Any,
    arrays: list[NDArray[np.float64]],
    structure: list[Any],
    pkind: str,
    label_space: tuple[Any, ...] | None,
) -> tuple[list[Any], Any]:
    """The models' predictive distributions (a ranked pool's ``GradedRelevance``) and the
    measure bound to them."""
    from ..ranking import GradedRelevance, _bind_pair
    from .codec import _predictive_from

    if not structure:
        return [_predictive_from(pkind, a, label_space) for a in arrays], meas
    rels = [
        GradedRelevance(a, off, None if it is None else np.array(json.loads(it)))
        for a, (off, it) in zip(arrays, structure, strict=True)
    ]
    meas = meas.bind(rels[0]) if len(rels) == 1 else _bind_pair(meas, rels[0], rels[1])
    return list(rels), meas


def _label_dtype(pool: Pool, label_space: tuple[Any, ...] | None) -> Any:
    """The dtype of the session's labels as estimated: a regressor's floats, a classifier's
    int or str classes (its labels' dtype); None for a ranked pool's grade lists."""
    from ..estimators.report import RankedPool

    if isinstance(pool, RankedPool):
        return None
    if label_space is None:
        return np.float64
    if label_space and isinstance(label_space[0], int):
        return np.int64
    return pool.models[0].labels.dtype
