"""A session's plan: what :meth:`Session.create <activeeval.Session.create>` validates, plans
(the models, the bound measure, the sampling distribution q) and writes to a new store, and
what :meth:`Session.open <activeeval.Session.open>` reads back (:class:`StoredPlan`)."""

from __future__ import annotations

import json
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

from .._chunks import uniform
from .._validation import (
    MAX_STORED_SEED,
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_seed,
    decisions_per_model,
    refuse_ranked_decision,
)
from .._version import __version__
from ..errors import (
    LabelSpaceError,
    ShapeError,
    StoreError,
    UnknownOptionError,
)
from ..estimators.report import (
    ClasswisePool,
    Pool,
    RankedPool,
    pool_class,
    pool_for,
    refuse_undefined,
)
from ..measures import (
    ClasswiseMeasure,
    FMeasure,
    MacroF1,
    Measure,
    WeightedF1,
    check_fits,
    get_measure,
    refuse_decision,
)
from ..methods import ESTIMATORS
from ..predictive import Categorical, Mixture, Predictive, as_predictive, decided
from ..ranking import (
    GradedRelevance,
    RankingMeasure,
    _bind_for_labels,
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
from .blobs import StoredArray, write_array
from .codec import (
    _canonical_ids,
    _coerce_label,
    _fingerprint,
    _item_list,
    _measure_spec,
    _per_class_refused,
    _prediction_array,
    _py,
)
from .lookup import write_draw_index
from .schema import SCHEMA_VERSION, _now, build_store
from .stored import (
    DEFAULT_BLOCK_SIZE,
    DRAW_RULE,
    SessionPlan,
    StoredPlan,
    load_plan,
)
from .summaries import write_summaries

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DRAW_RULE",
    "CreateRequest",
    "SessionPlan",
    "StoredPlan",
    "create_store",
    "load_plan",
]


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
    q: NDArray[np.float64]  # the plan's q (its blob is in plan_row), for the draw index


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
    fingerprint = _fingerprint(pool_ids, arrays, lam, ranking_rows, decisions)
    meta, plan_row, q = _planned(r, preds, kind_name, label_space, lam, fingerprint)
    model_names = _model_names(r.names, len(preds))
    return _NewStore(meta, plan_row, model_names, arrays, ranking_rows, lam, pool_ids, decisions, q)


def _planned(
    r: CreateRequest,
    preds: list[Any],
    kind_name: str,
    label_space: list[Any] | None,
    lam: NDArray[np.float64] | None,
    fingerprint: str,
) -> tuple[list[tuple[str, str]], tuple[Any, ...], NDArray[np.float64]]:
    """The plan of the request on the validated models ``preds``: the new store's meta
    rows, its plan row (q's column left empty: :func:`_write_plan` writes q) and q."""
    kind = pool_class(preds)
    ranked = kind is RankedPool
    m = preds[0].n
    b, lv, seed, method, estimator = _checked(r, kind, len(preds), lam)
    comparison = len(preds) > 1
    _model_names(r.names, len(preds))  # refused before q is planned
    meas, q = _plan_measure_and_q(
        r.measure, preds, ranked, label_space, r.pos_label, r.beta, lam, method, r.stopping
    )
    decided = [p.__dict__.get("_decision") is not None or getattr(p, "_decisions", None)
               is not None for p in preds]  # fmt: skip
    refuse_decision(meas, any(decided))
    width, claim, decide, rule = r.stopping
    stop = (
        comparison_rule(width, claim, decide, rule, meas, len(preds), False)
        if comparison
        else stopping_rule(width, claim, decide, rule, measure=meas)
    )
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
        ("sigma0", "subsample"),  # σ₀ over the tempered curve's fixed subsample
    ]
    if stop is not None:
        meta.append(("stopping", json.dumps(_stopping_spec(stop))))
        pool = pool_for(preds, meas, uniform(m))
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
        b"",  # q: written by _write_plan, a chunk at a time (blobs.write_array)
        int(r.block_size),
        max_draws,
        DRAW_RULE,
        created,
    )
    return meta, plan_row, q


def _checked(
    r: CreateRequest,
    kind: type[Pool],
    n_models: int,
    lam: NDArray[np.float64] | None,
    budget: bool = True,
) -> tuple[float, float, int, str, str]:
    """The request's arguments that need no pool, checked in the order a refusal names them:
    budget (unless not ``budget``: its check needs the costs), level, seed, block size,
    method, estimator (a measure's name next: :func:`_measure_name`)."""
    b = check_budget(r.budget, lam) if budget else float(r.budget)
    lv = check_level(r.level)
    seed = check_seed(r.seed, "seed", maximum=MAX_STORED_SEED)
    if int(r.block_size) < 1:
        raise ShapeError(f"block_size: must be a positive integer, got {r.block_size!r}.")
    method = check_option(r.method, kind.session_methods(n_models), "method")
    estimator = check_option(r.estimator, ESTIMATORS, "estimator")
    return b, lv, seed, method, estimator


def _with_decisions(preds: list[Any], prediction: Any, ranked: bool) -> list[Any]:
    """The models with the decisions ``prediction`` (one array for one model; a list with one
    array, or None, per model for several), as ``evaluate`` and ``compare`` take them."""
    if prediction is None:
        return preds
    if ranked:
        refuse_ranked_decision(prediction)
    given = _decision_list(prediction, len(preds))
    return [decided(p, f, name) for p, (f, name) in zip(preds, given, strict=True)]


def _decision_list(prediction: Any, n_models: int) -> list[tuple[Any, str]]:
    """``Session.create(prediction=)`` per model, with its name for messages: one array for
    one model; a list with one array (or None) per model for several."""
    if n_models == 1:
        return [(prediction, "prediction")]
    given = decisions_per_model(prediction, n_models)  # as compare takes them
    return [(f, f"prediction[{j}]") for j, f in enumerate(given)]


def _decision_array(pred: Any) -> NDArray[np.float64] | None:
    """A model's stored decision: None where it is the mode (mean) of its beliefs."""
    if pred.__dict__.get("_decision") is None:
        return None
    if isinstance(pred, Categorical):
        return np.asarray(pred.predicted_index, dtype=np.float64)
    return np.asarray(pred.point_prediction(), dtype=np.float64)


def _stopping_spec(stop: StoppingRule) -> dict[str, Any]:
    return {
        "target_width": stop.target_width,
        "claim": None if stop.claim is None else str(stop.claim),
        "decide": stop.decide,
        "rule": stop.rule,
    }


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
    _write_head(conn, new.meta, new.plan_row, new.q)
    for j, (arr, f) in enumerate(zip(new.arrays, new.decisions, strict=True)):
        conn.execute(
            "INSERT INTO models (model, name, n_columns, predictions, decision) "
            "VALUES (?, ?, ?, x'', ?)",
            (j, new.model_names[j], arr.shape[1], None if f is None else b""),
        )
        write_array(conn, StoredArray("models.predictions", j, arr.shape), arr)
        if f is not None:
            write_array(conn, StoredArray("models.decision", j, f.shape), f)
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
    write_summaries(conn, new.q)


def _write_head(
    conn: sqlite3.Connection,
    meta: list[tuple[str, str]],
    plan_row: tuple[Any, ...],
    q: NDArray[np.float64],
) -> None:
    """A new store's meta, plan (with q), draw index and the state before the first draw:
    every row but the pool's and the models'."""
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta)
    conn.execute(
        "INSERT INTO plan (singleton, kind, measure, measure_spec, beta, "
        "pos_label, method, budget, seed, level, pool_size, n_models, "
        "predictive_kind, label_space, fingerprint, q, block_size, max_draws, "
        "draw_rule, created_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?)",
        plan_row,
    )
    write_array(conn, StoredArray("plan.q", 1, q.shape), q)
    conn.execute("INSERT INTO state (singleton, cursor) VALUES (1, 0)")
    write_draw_index(conn, 0, q)


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
        refuse_undefined(meas, preds, uniform(preds[0].n))
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


def _measure_name(measure: str, beta: float | None) -> str:
    """A measure a session takes by name (and β only for an F-measure), or the refusal."""
    if measure.strip().lower().startswith("per_class"):
        raise _per_class_refused(measure)
    key = check_option(measure, SESSION_MEASURES, "measure")
    if beta is not None and key not in _WITH_BETA:
        raise UnknownOptionError(
            f"beta: only the F-measures ({', '.join(_WITH_BETA)}) have a β, not {key!r}."
        )
    return key


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
        key = _measure_name(measure, beta)
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
