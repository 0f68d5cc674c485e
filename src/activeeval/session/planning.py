"""A session's plan: what :meth:`Session.create <activeeval.Session.create>` validates, plans
(the models, the bound measure, the sampling distribution q) and writes to a new store, and
what :meth:`Session.open <activeeval.Session.open>` reads back (:class:`StoredPlan`)."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    MAX_STORED_SEED,
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_seed,
)
from .._version import __version__
from ..claims import parse_claim
from ..errors import (
    LabelSpaceError,
    NotAStoreError,
    ShapeError,
    StoreError,
    UnknownOptionError,
)
from ..estimators.inference import _result_repr
from ..estimators.report import ClasswisePool, Pool, RankedPool, pool_class, pool_for
from ..measures import (
    ClasswiseMeasure,
    FMeasure,
    MacroF1,
    Measure,
    WeightedF1,
    check_fits,
    get_measure,
)
from ..methods import ESTIMATORS
from ..predictive import Categorical, Mixture, Predictive, as_predictive, decided
from ..ranking import (
    GradedRelevance,
    RankingMeasure,
    _bind_for_labels,
    _bind_pair,
    _check_pair,
    ranking_distribution,
    ranking_query_costs,
)
from ..sampling import (
    check_distribution,
    comparison_distribution,
    cost_distribution,
    optimal_distribution,
    passive_distribution,
)
from ..stopping import (
    StoppingRule,
    comparison_rule,
    horizon_draws,
    stopping_rule,
    window_draws,
)
from .codec import (
    _canonical_ids,
    _coerce_label,
    _f64,
    _fingerprint,
    _from_f64,
    _item_list,
    _measure_from,
    _measure_spec,
    _per_class_refused,
    _prediction_array,
    _predictive_from,
    _py,
)
from .schema import SCHEMA_VERSION, StoreFile, _now, build_store

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DRAW_RULE",
    "CreateRequest",
    "SessionPlan",
    "StoredPlan",
    "create_store",
    "load_plan",
]

DEFAULT_BLOCK_SIZE = 1024
"""Draws materialized at a time (``Session.create``'s ``block_size``): block b of the draw
sequence is ``block_size`` uniforms from ``numpy.random.default_rng([seed, b])``."""
#: Name of the rule that turns (q, seed, block) into draws; stored with the plan.
DRAW_RULE = "inverse-cdf(cumsum(q)/sum, default_rng([seed, block]).random(block_size))"


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

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("session_id", "kind", "measure"),
            ("method", "estimator", "budget", "cost_sensitive", "seed", "level", "stopping"),
            ("pool_size", "n_models", "predictive_kind", "ranking"),
        )


def _draw_block(
    cdf: NDArray[np.float64], seed: int, block: int, size: int, phase: int = 0
) -> NDArray[np.intp]:
    """Block ``block`` of the session's i.i.d. draws from q (inverse CDF, as
    :func:`~activeeval.sampling.draw`, pinned here: a stored session must not change when the
    library's sampler does). Phase k ≥ 1 (a model added) numbers its blocks from its first
    draw and has uniforms of its own, ``default_rng([seed, k, block])``; phase 0 keeps the
    draw rule of stores without phases."""
    key = [seed, block] if phase == 0 else [seed, phase, block]
    u = np.random.default_rng(key).random(size)
    idx = np.searchsorted(cdf, u, side="right")
    return np.minimum(idx, cdf.shape[0] - 1).astype(np.intp)


# ------------------------------------------------------------------------- create
@dataclass(frozen=True)
class CreateRequest:
    """What :meth:`Session.create <activeeval.Session.create>` is asked for (its arguments
    but the path, as given); :func:`create_store` validates it."""

    pools: Any
    measure: Measure | RankingMeasure | str
    budget: float
    method: str
    seed: int
    costs: ArrayLike | None
    level: float
    pos_label: Any
    labels: ArrayLike | None
    ids: ArrayLike | None
    beta: float | None
    names: Sequence[str] | None
    block_size: int
    estimator: str
    #: The stopping rule's arguments as given: (target_width, claim, decide, rule).
    stopping: tuple[Any, ...] = (None, None, False, "anytime")
    #: The decisions f(x) the measure scores, as given (``Session.create(prediction=)``).
    prediction: Any = None


@dataclass(frozen=True)
class _NewStore:
    """A validated request as a new store's rows: meta, the plan row, the models' names and
    prediction arrays, a ranked pool's (offsets, item ids JSON) per model, the costs and the
    pool ids."""

    meta: list[tuple[str, str]]
    plan_row: tuple[Any, ...]
    model_names: list[str]
    arrays: list[NDArray[np.float64]]
    ranking_rows: list[tuple[NDArray[np.int64], str | None]] | None
    costs: NDArray[np.float64] | None
    pool_ids: NDArray[Any]
    #: Per model, its decision f(x) where it is not the mode (mean) of its beliefs: the
    #: class index (classifier) or value (regressor) per instance; None for the mode.
    decisions: list[NDArray[np.float64] | None]


def create_store(path: str | os.PathLike[str], request: CreateRequest) -> Path:
    """Plan a campaign and write it to a new store at ``path`` (see :meth:`Session.create
    <activeeval.Session.create>`); returns the store's path."""
    target = Path(path)
    if target.exists():
        raise StoreError(
            f"{target}: already exists; open it with Session.open (activeeval session "
            "status) or choose another file name."
        )
    new = _validated(request)
    build_store(target, lambda conn: _write_plan(conn, new))
    return target


def _validated(r: CreateRequest) -> _NewStore:
    """The request checked and planned (models, measure, q), as the new store's rows."""
    models = _model_list(r.pools)
    kind = pool_class(models)
    ranked = kind is RankedPool
    preds, arrays, kind_name, label_space, ranking_rows, lam = _pool_models(
        models, ranked, r.labels, r.pos_label, r.beta, r.costs
    )
    preds = _with_decisions(preds, r.prediction, ranked)
    decisions = [_decision_array(p) for p in preds]
    m = preds[0].n
    pool_ids = _canonical_ids(r.ids, m)
    b = check_budget(r.budget, lam)
    lv = check_level(r.level)
    seed = check_seed(r.seed, "seed", maximum=MAX_STORED_SEED)
    if int(r.block_size) < 1:
        raise ShapeError(f"block_size: must be a positive integer, got {r.block_size!r}.")
    comparison = len(preds) > 1
    method = check_option(r.method, kind.session_methods(len(preds)), "method")
    estimator = check_option(r.estimator, ESTIMATORS, "estimator")
    model_names = _model_names(r.names, len(preds))
    meas, q = _plan_measure_and_q(
        r.measure, preds, ranked, label_space, r.pos_label, r.beta, lam, method, r.stopping
    )
    width, claim, decide, rule = r.stopping
    stop = (
        comparison_rule(width, claim, decide, rule, meas, len(preds), False)
        if comparison
        else stopping_rule(width, claim, decide, rule, measure=meas)
    )
    fingerprint = _fingerprint(pool_ids, arrays, lam, ranking_rows, decisions)
    max_draws = check_max_draws(None, b, lam)
    spec = _measure_spec(meas)
    session_id = uuid.uuid4().hex
    created = _now()
    meta = [
        ("schema_version", str(SCHEMA_VERSION)),
        ("application", "activeeval.session"),
        ("session_id", session_id),
        ("created_at", created),
        ("created_with", f"activeeval {__version__}"),
        ("estimator", estimator),
        ("horizon", repr(horizon_draws(b, q, lam))),
    ]
    if stop is not None:
        meta.append(("stopping", json.dumps(_stopping_spec(stop))))
        pool = pool_for(preds, meas, np.full(m, 1.0 / m))
        rep = pool.reporting(q, lv, estimator)
        window = window_draws(stop, pool, rep, horizon_draws(b, q, lam))
        if window is not None:  # fixed before the first label, from the model
            meta.append(("window", repr(window)))
    plan_row = (
        "comparison" if comparison else "evaluation",
        meas.name,
        json.dumps(spec),
        float(meas.beta) if isinstance(meas, FMeasure) else None,
        json.dumps(_py(getattr(meas, "pos_label", None))),
        method,
        b,
        int(seed),
        lv,
        m,
        len(preds),
        kind_name,
        None if label_space is None else json.dumps(label_space),
        fingerprint,
        _f64(q),
        int(r.block_size),
        max_draws,
        DRAW_RULE,
        created,
    )
    return _NewStore(meta, plan_row, model_names, arrays, ranking_rows, lam, pool_ids, decisions)


def _with_decisions(preds: list[Any], prediction: Any, ranked: bool) -> list[Any]:
    """The models with the decisions ``prediction`` (one array for one model; a list with one
    array, or None, per model for several), as ``evaluate`` and ``compare`` take them."""
    if prediction is None:
        return preds
    if ranked:
        raise ShapeError("prediction: a ranked pool's decision is its ranking; drop prediction=.")
    if len(preds) == 1:
        return [decided(preds[0], prediction, "prediction")]
    if not isinstance(prediction, list | tuple) or len(prediction) != len(preds):
        raise ShapeError(
            f"prediction: a comparison takes one decision array (or None) per model, a list "
            f"of {len(preds)}; got {type(prediction).__name__}."
        )
    pairs = enumerate(zip(preds, prediction, strict=True))
    return [decided(p, f, f"prediction[{j}]") for j, (p, f) in pairs]


def _decision_array(pred: Any) -> NDArray[np.float64] | None:
    """A model's stored decision: None where it is the mode (mean) of its beliefs."""
    if pred.__dict__.get("_decision") is None:
        return None
    if isinstance(pred, Categorical):
        return np.asarray(pred.predicted_index, dtype=np.float64)
    return np.asarray(pred.point_prediction(), dtype=np.float64)


def _restore_decision(pred: Any, stored: NDArray[np.float64] | None) -> Any:
    if stored is None:
        return pred
    if isinstance(pred, Categorical):
        return pred.with_decision(pred.labels[stored.astype(np.intp)])
    return pred.with_decision(stored)


def _stopping_spec(stop: StoppingRule) -> dict[str, Any]:
    return {
        "target_width": stop.target_width,
        "claim": None if stop.claim is None else str(stop.claim),
        "decide": stop.decide,
        "rule": stop.rule,
    }


def _stopping_from(text: str | None) -> StoppingRule | None:
    if text is None:
        return None
    spec = json.loads(text)
    claim = None if spec["claim"] is None else parse_claim(spec["claim"])
    return StoppingRule(spec["target_width"], claim, bool(spec["decide"]), spec["rule"])


def _model_list(pools: Any) -> list[Any]:
    """One model's predictions (an evaluation) or a list of two or more (a comparison)."""
    models = list(pools) if isinstance(pools, list | tuple) else [pools]
    if not models:
        raise ShapeError("pools: pass one model's predictions, or a list of two or more.")
    if isinstance(pools, list | tuple) and len(models) == 1:
        raise ShapeError(
            "pools: a comparison needs at least two models; pass a single model's "
            "predictions (not a one-element list) to evaluate it."
        )
    return models


def _model_names(names: Sequence[str] | None, n_models: int) -> list[str]:
    if names is None:
        return [f"model {j}" for j in range(n_models)]
    model_names = [str(n) for n in names]
    if len(model_names) != n_models:
        raise ShapeError(f"names: {len(model_names)} names for {n_models} models.")
    return model_names


def _write_plan(conn: sqlite3.Connection, new: _NewStore) -> None:
    """A new store's rows (inside :func:`~.schema.build_store`'s transaction): meta, plan,
    models, a ranked pool's structure, the pool, and the state before the first draw."""
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", new.meta)
    conn.execute(
        "INSERT INTO plan (singleton, kind, measure, measure_spec, beta, "
        "pos_label, method, budget, seed, level, pool_size, n_models, "
        "predictive_kind, label_space, fingerprint, q, block_size, max_draws, "
        "draw_rule, created_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?)",
        new.plan_row,
    )
    conn.executemany(
        "INSERT INTO models (model, name, n_columns, predictions, decision) VALUES (?, ?, ?, ?, ?)",
        [
            (j, new.model_names[j], arr.shape[1], _f64(arr), None if f is None else _f64(f))
            for j, (arr, f) in enumerate(zip(new.arrays, new.decisions, strict=True))
        ],
    )
    if new.ranking_rows is not None:
        conn.executemany(
            "INSERT INTO ranking (model, offsets, items) VALUES (?, ?, ?)",
            [
                (j, np.ascontiguousarray(off, dtype="<i8").tobytes(), it)
                for j, (off, it) in enumerate(new.ranking_rows)
            ],
        )
    m = new.pool_ids.shape[0]
    cost_col: list[Any] = [None] * m if new.costs is None else new.costs.tolist()
    conn.executemany(
        "INSERT INTO pool (position, id, cost) VALUES (?, ?, ?)",
        zip(range(m), new.pool_ids.tolist(), cost_col, strict=True),
    )
    conn.execute("INSERT INTO state (singleton, cursor) VALUES (1, 0)")


def _pool_models(
    models: list[Any],
    ranked: bool,
    labels: ArrayLike | None,
    pos_label: Any,
    beta: float | None,
    costs: ArrayLike | None,
) -> tuple[
    list[Any],
    list[NDArray[np.float64]],
    str,
    list[Any] | None,
    list[tuple[NDArray[np.int64], str | None]] | None,
    NDArray[np.float64] | None,
]:
    """The models' predictions (validated), their arrays as stored, the predictive kind, the
    label space, a ranked pool's (offsets, item ids JSON) per model, and the costs."""
    ranking_rows: list[tuple[NDArray[np.int64], str | None]] | None = None
    if ranked:
        rels = _ranking_models(models, labels, pos_label, beta)
        m = rels[0].n
        preds: list[Any] = list(rels)
        arrays = [r.proba for r in rels]
        kind_name = "categorical"  # per item: a distribution over the grades
        label_space: list[Any] | None = list(range(rels[0].n_grades))
        ranking_rows = [
            (r.offsets, None if r.items is None else json.dumps(_item_list(r.items))) for r in rels
        ]
        lam = check_costs(costs, m) if costs is not None else ranking_query_costs(*rels)
    else:
        preds, arrays, kind_name, label_space = _classic_models(models, labels)
        m = preds[0].n
        lam = check_costs(costs, m)
    return preds, arrays, kind_name, label_space, ranking_rows, lam


def _plan_measure_and_q(
    measure: Measure | RankingMeasure | str,
    preds: list[Any],
    ranked: bool,
    label_space: list[Any] | None,
    pos_label: Any,
    beta: float | None,
    lam: NDArray[np.float64] | None,
    method: str,
    stopping: Any = (None, None, False, "anytime"),
) -> tuple[Any, NDArray[np.float64]]:
    """The measure bound to the models, and the sampling distribution q of ``method``
    (``stopping``: the rule's arguments as given, refused for a function of ratios)."""
    meas: Any
    if ranked:
        if not isinstance(measure, RankingMeasure | str):
            raise UnknownOptionError(
                f"measure: a ranked pool is evaluated with 'dcg', 'err', DCG(k) or "
                f"ERR(k, max_grade); got {measure!r}."
            )
        meas = _bind_for_labels(measure, *preds)
        m = preds[0].n
        q = ranking_distribution(
            preds if len(preds) > 1 else preds[0], meas, costs=lam, method=method
        )
        q = np.ascontiguousarray(check_distribution(q, "q", m), dtype=np.float64)
    else:
        if isinstance(measure, RankingMeasure):
            raise UnknownOptionError(
                f"measure: {measure.name} scores ranked lists; pass a GradedRelevance pool "
                "(a ranker's lists with grade probabilities)."
            )
        meas = _plan_measure(measure, preds, label_space, pos_label, beta)
        _check_classwise(meas, method, len(preds), stopping)
        q = _plan_distribution(method, preds, meas, lam)
    return meas, q


def _classic_models(
    models: list[Any], labels: ArrayLike | None
) -> tuple[list[Predictive], list[NDArray[np.float64]], str, list[Any] | None]:
    """Classifiers' or regressors' predictions: validated, on one pool, one kind and one
    label space."""
    preds: list[Predictive] = []
    for j, pool in enumerate(models):
        name = "pools" if len(models) == 1 else f"pools[{j}]"
        if labels is not None and isinstance(pool, pd.DataFrame):  # read by name, then match
            pool = as_predictive(pool, name)
            if not isinstance(pool, Categorical):
                raise LabelSpaceError(
                    f"labels: {name} is a regressor's frame (mean, var); labels name classes."
                )
            unknown = sorted(set(pool.labels.tolist()) - set(np.asarray(labels).tolist()), key=str)
            missing = sorted(set(np.asarray(labels).tolist()) - set(pool.labels.tolist()), key=str)
            if unknown or missing:
                raise LabelSpaceError(
                    f"labels: {name}'s columns name classes {unknown} that labels does not "
                    f"list, and labels lists {missing} that no column names; name the columns "
                    "by the classes (or p_<label>), or leave labels out."
                )
            order = [int(np.flatnonzero(pool.labels == lab)[0]) for lab in np.asarray(labels)]
            pool = Categorical(pool.proba[:, order], labels=labels, name=name)
        if labels is not None and not isinstance(pool, Predictive):
            pool = Categorical(pool, labels=labels, name=name)
        elif labels is not None and not (
            isinstance(pool, Categorical) and np.array_equal(pool.labels, np.asarray(labels))
        ):
            raise LabelSpaceError(
                f"labels: {name} already carries its own labels; pass labels only with "
                "probability arrays."
            )
        preds.append(as_predictive(pool, name))
    m = preds[0].n
    arrays: list[NDArray[np.float64]] = []
    kinds: set[str] = set()
    spaces: list[list[Any] | None] = []
    for j, pred in enumerate(preds):
        if pred.n != m:
            raise ShapeError(
                f"pools[{j}]: covers {pred.n} instances, pools[0] covers {m}; all models "
                "must be evaluated on the same pool."
            )
        kind, arr, space = _prediction_array(pred)
        kinds.add(kind)
        arrays.append(arr)
        spaces.append(space)
    if len(kinds) > 1:
        raise ShapeError("pools: cannot compare a classifier with a regressor.")
    if any(s != spaces[0] for s in spaces):
        raise LabelSpaceError(
            f"pools: the models have different class label spaces ({spaces[0]} vs "
            f"{next(s for s in spaces if s != spaces[0])}); give every model the same "
            "classes in the same order."
        )
    return preds, arrays, kinds.pop(), spaces[0]


def _ranking_models(
    models: list[Any], labels: ArrayLike | None, pos_label: Any, beta: float | None
) -> list[GradedRelevance]:
    """Rankers' relevance models: one (an evaluation) or two on the same queries with item
    ids (a comparison labels the union of both lists, as :func:`~activeeval.compare`)."""
    for j, mdl in enumerate(models):
        if not isinstance(mdl, GradedRelevance):
            raise ShapeError(
                f"pools[{j}]: is a {type(mdl).__name__}, but pools[0] is a ranked pool "
                "(GradedRelevance); compare rankers with rankers."
            )
    for name, value in (("labels", labels), ("pos_label", pos_label), ("beta", beta)):
        if value is not None:
            raise UnknownOptionError(
                f"{name}: does not apply to a ranked pool (grades are 0..G−1 and the "
                "measure is dcg or err)."
            )
    if len(models) > 2:
        raise ShapeError(
            f"pools: ranking comparisons take exactly two rankers, got {len(models)}; "
            "compare them pairwise."
        )
    rels = list(_check_pair(models[0], models[1])) if len(models) == 2 else [models[0]]
    for j, r in enumerate(rels):
        if (r.lengths == 0).any():
            q0 = int(np.flatnonzero(r.lengths == 0)[0])
            raise ShapeError(
                f"pools[{j}]: query {q0} lists no item, so it has no grade to record; drop "
                "empty queries from a session's pool (their DCG and ERR are 0)."
            )
    return rels


#: The measures a session takes by name (``session init --measure``).
SESSION_MEASURES = (
    "error_rate",
    "accuracy",
    "mse",
    "mae",
    "f1",
    "precision",
    "recall",
    "macro_f1",
    "weighted_f1",
    "balanced_accuracy",
    "mean",
    "proportion",
)
_WITH_BETA = ("f1", "macro_f1", "weighted_f1")


def _check_classwise(meas: Measure, method: str, n_models: int, stopping: Any) -> None:
    """What a session scored by a function of several ratios does not take, by name."""
    if not isinstance(meas, ClasswiseMeasure):
        return
    if method not in ClasswisePool.session_methods(n_models):
        raise UnknownOptionError(
            f"method: {meas.name} (a function of several ratios) takes "
            f"{list(ClasswisePool.session_methods(n_models))}, not {method!r}."
        )
    if n_models > 1:
        ClasswisePool.check_pair(meas, n_models, "pools")
    width, claim, decide = stopping[:3]
    ClasswisePool.refuse(meas, target_width=width, claim=claim, decide=decide)


def _plan_measure(
    measure: Measure | str,
    preds: list[Predictive],
    label_space: list[Any] | None,
    pos_label: Any,
    beta: float | None,
) -> Measure:
    if pos_label is not None:
        pos_label = _coerce_label(pos_label, label_space, "pos_label")
    if isinstance(measure, str):
        if measure.strip().lower().startswith("per_class"):
            raise _per_class_refused(measure)
        key = check_option(measure, SESSION_MEASURES, "measure")
        if beta is not None and key not in _WITH_BETA:
            raise UnknownOptionError(
                f"beta: only the F-measures ({', '.join(_WITH_BETA)}) have a β, not {key!r}."
            )
        meas: Measure
        if beta is not None and key != "f1":
            meas = (MacroF1 if key == "macro_f1" else WeightedF1)(beta=float(beta))
        else:
            meas = (
                FMeasure(beta=float(beta), pos_label=pos_label)
                if beta is not None
                else get_measure(key, pos_label=pos_label)
            )
    else:
        meas = get_measure(measure)
        if beta is not None:
            raise UnknownOptionError("beta: pass β inside the measure object.")
    if pos_label is not None and not isinstance(meas, FMeasure):
        raise UnknownOptionError(
            f"pos_label: {meas.name} has no positive class; pos_label applies to f1, "
            "precision and recall."
        )
    check_fits(meas, preds[0])
    bound = meas.bind(preds[0] if len(preds) == 1 else Mixture(preds))
    if isinstance(bound, FMeasure) and label_space is not None:
        # The store keeps labels as plain ints or strings; so must the positive class be.
        bound = replace(bound, pos_label=_coerce_label(bound.pos_label, label_space, "pos_label"))
    return bound


def _plan_distribution(
    method: str, preds: list[Predictive], meas: Measure, lam: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    m = preds[0].n
    if method == "active_lambda" and lam is None:
        raise UnknownOptionError("method: 'active_lambda' samples by cost and needs costs.")
    if len(preds) > 1:
        q = comparison_distribution(preds, meas, method=method, costs=lam)
    elif method == "passive":
        q = passive_distribution(m)
    elif method == "active_lambda":
        q = cost_distribution(lam)  # type: ignore[arg-type]
    else:
        q = optimal_distribution(preds[0], meas, costs=lam if method == "active" else None)
    return np.ascontiguousarray(check_distribution(q, "q", m), dtype=np.float64)


# --------------------------------------------------------------------------- open
@dataclass(eq=False)
class StoredPlan:
    """A session's plan read back from its store (:func:`load_plan`), with what is derived
    from it once per open; nothing in it changes while the session is open. ``pool`` is the
    pool interface (:class:`~activeeval.estimators.report.PlainPool` or
    :class:`~activeeval.estimators.report.RankedPool`) the session's reports ask; it caches a
    ranked pool's control-variate moments once first needed."""

    plan: SessionPlan
    ids: NDArray[Any]
    index: pd.Index
    costs: NDArray[np.float64] | None
    price: NDArray[np.float64]  # each instance's labeling cost: costs, or 1
    q: NDArray[np.float64]
    cdf: NDArray[np.float64]
    predictives: list[Any]
    measure: Any
    grade_keys: NDArray[Any] | None  # a ranked pool: the items to grade, query after query
    grade_offsets: NDArray[np.int64] | None
    pw: NDArray[np.float64]  # the test distribution: uniform over the pool
    pool: Pool
    label_dtype: Any  # the stored labels' dtype; None: a ranked pool's grade lists (JSON)
    #: (first sequence number, q) of every phase of the draw sequence, the plan's q first;
    #: ``q`` and ``cdf`` are the last phase's, which new draws come from.
    phases: tuple[tuple[int, NDArray[np.float64]], ...] = ()

    def phases_used(self, n: int) -> int:
        """How many phases the first ``n`` draws span."""
        starts = [first for first, _ in self.phases[1:]]
        return 1 + sum(first < n for first in starts)

    def mixture(self, n: int) -> NDArray[np.float64]:
        """The q that the first ``n`` draws are weighted by: the one they all came from, or
        the balance heuristic's mixture Σ_k n_k q_k / n of the phases they span (n_k of
        them from phase k; multiple importance sampling, ``docs/how-it-works/sampling.md``)."""
        if len(self.phases) <= 1:
            return self.q
        starts = [first for first, _ in self.phases] + [max(n, self.phases[-1][0])]
        counts = [max(0, min(n, starts[k + 1]) - starts[k]) for k in range(len(self.phases))]
        used = [k for k, c in enumerate(counts) if c > 0]
        if len(used) <= 1:
            return self.phases[used[0] if used else 0][1]
        total = np.zeros_like(self.q)
        for k in used:
            total += counts[k] * self.phases[k][1]
        return total / sum(counts)


def load_plan(store: StoreFile) -> StoredPlan:
    """Read the immutable plan, pool and predictions, and check the fingerprint."""
    meta, plan, models, pool, ranking, phase_rows = _read_plan(store)
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
        qblob,
        block_size,
        max_draws,
        draw_rule,
        created,
    ) = plan
    label_space = None if space is None else tuple(json.loads(space))
    ids, costs, arrays, structure = _read_pool(store.path, m, models, pool, ranking)
    decisions = [None if r[3] is None else _from_f64(r[3], (m,)) for r in models]
    if _fingerprint(ids, arrays, costs, structure or None, decisions) != fingerprint:
        raise StoreError(
            f"{store.path}: the stored pool does not match its fingerprint; the file was "
            "altered outside activeeval."
        )
    phases = (
        (0, _from_f64(qblob, (m,))),
        *((int(first), _from_f64(blob, (m,))) for first, blob in phase_rows),
    )
    q: NDArray[np.float64] = phases[-1][1]
    cdf = np.cumsum(q)
    cdf /= cdf[-1]
    spec_dict = json.loads(spec)
    predictives, meas = _bind_models(
        _measure_from(spec_dict), arrays, structure, pkind, label_space
    )
    predictives = [_restore_decision(p, f) for p, f in zip(predictives, decisions, strict=True)]
    pw = np.full(m, 1.0 / m)
    pool = pool_for(predictives, meas, pw)
    grade_keys, grade_offsets = (
        pool.items_to_grade() if isinstance(pool, RankedPool) else (None, None)
    )
    session_plan = SessionPlan(
        session_id=meta["session_id"],
        kind=kind,
        measure=measure_name,
        measure_spec=spec_dict,
        pos_label=json.loads(pos_label) if pos_label is not None else None,
        beta=beta,
        method=method,
        budget=float(budget),
        seed=int(seed),
        level=float(level),
        pool_size=int(m),
        n_models=int(n_models),
        model_names=tuple(r[0] for r in models),
        predictive_kind=pkind,
        label_space=label_space,
        cost_sensitive=costs is not None,
        fingerprint=fingerprint,
        block_size=int(block_size),
        max_draws=int(max_draws),
        draw_rule=draw_rule,
        created_at=created,
        schema_version=int(meta["schema_version"]),
        ranking=bool(ranking),
        estimator=meta.get("estimator", "snis"),
        stopping=_stopping_from(meta.get("stopping")),
        horizon=(
            float(meta["horizon"])
            if "horizon" in meta
            else horizon_draws(budget, phases[0][1], costs)
        ),
        window=float(meta["window"]) if "window" in meta else None,
    )
    return StoredPlan(
        plan=session_plan,
        ids=ids,
        index=pd.Index(ids),
        costs=costs,
        price=np.ones(m) if costs is None else costs,
        q=q,
        cdf=cdf,
        predictives=predictives,
        measure=meas,
        grade_keys=grade_keys,
        grade_offsets=grade_offsets,
        pw=pw,
        pool=pool,
        label_dtype=_label_dtype(pool, label_space),
        phases=phases,
    )


def _label_dtype(pool: Pool, label_space: tuple[Any, ...] | None) -> Any:
    """The dtype of the session's labels as estimated: a regressor's floats, a classifier's
    int or str classes (its labels' dtype); None for a ranked pool's grade lists."""
    if isinstance(pool, RankedPool):
        return None
    if label_space is None:
        return np.float64
    if label_space and isinstance(label_space[0], int):
        return np.int64
    return pool.models[0].labels.dtype


def _read_plan(store: StoreFile) -> tuple[Any, ...]:
    """The store's meta, plan, models, pool and ranking rows, from one transaction."""

    def read(c: sqlite3.Connection) -> tuple[Any, ...]:
        meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
        plan = c.execute(
            "SELECT kind, measure, measure_spec, beta, pos_label, method, budget, seed, "
            "level, pool_size, n_models, predictive_kind, label_space, fingerprint, q, "
            "block_size, max_draws, draw_rule, created_at FROM plan"
        ).fetchone()
        models = c.execute(
            "SELECT name, n_columns, predictions, decision FROM models ORDER BY model"
        ).fetchall()
        pool = c.execute("SELECT id, cost FROM pool ORDER BY position").fetchall()
        ranking = c.execute("SELECT offsets, items FROM ranking ORDER BY model").fetchall()
        phases = c.execute("SELECT first_seq, q FROM phases ORDER BY phase").fetchall()
        return meta, plan, models, pool, ranking, phases

    try:
        meta, plan, models, pool, ranking, phases = store.read(read)
    except sqlite3.DatabaseError as exc:
        raise NotAStoreError(f"{store.path}: the store is damaged ({exc}).") from exc
    if plan is None:
        raise NotAStoreError(f"{store.path}: the store has no plan; it is not a session.")
    return meta, plan, models, pool, ranking, phases


def _read_pool(
    path: Path, m: int, models: list[Any], pool: list[Any], ranking: list[Any]
) -> tuple[NDArray[Any], NDArray[np.float64] | None, list[NDArray[np.float64]], list[Any]]:
    """Pool ids, costs, every model's prediction array and a ranked pool's (offsets, item ids
    JSON) per model, from the stored rows."""
    ids_list = [r[0] for r in pool]
    if all(isinstance(v, int) for v in ids_list):
        ids = np.array(ids_list, dtype=np.int64)
    else:
        ids = np.array([str(v) for v in ids_list], dtype=object)
    costs = None if pool[0][1] is None else np.array([r[1] for r in pool], dtype=np.float64)
    structure = [(np.frombuffer(off, dtype="<i8").astype(np.int64), it) for off, it in ranking]
    if ranking and len(ranking) != len(models):
        raise StoreError(f"{path}: the ranking table does not cover every model.")
    rows = [int(off[-1]) for off, _ in structure if off.size] if ranking else [m] * len(models)
    try:
        arrays = [_from_f64(blob, (r, k)) for (_, k, blob, _), r in zip(models, rows, strict=True)]
    except ValueError as exc:
        raise StoreError(
            f"{path}: the stored predictions do not fit the pool ({exc}); the file was "
            "altered outside activeeval."
        ) from exc
    return ids, costs, arrays, structure


def _bind_models(
    meas: Any,
    arrays: list[NDArray[np.float64]],
    structure: list[Any],
    pkind: str,
    label_space: tuple[Any, ...] | None,
) -> tuple[list[Any], Any]:
    """The models' predictive distributions (a ranked pool's ``GradedRelevance``) and the
    measure bound to them."""
    if not structure:
        return [_predictive_from(pkind, a, label_space) for a in arrays], meas
    rels = [
        GradedRelevance(a, off, None if it is None else np.array(json.loads(it)))
        for a, (off, it) in zip(arrays, structure, strict=True)
    ]
    meas = meas.bind(rels[0]) if len(rels) == 1 else _bind_pair(meas, rels[0], rels[1])
    return list(rels), meas
