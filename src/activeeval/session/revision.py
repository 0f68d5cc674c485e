"""Revising a running session: a larger budget (:meth:`Session.extend
<activeeval.Session.extend>`) and one more model (:meth:`Session.add_model
<activeeval.Session.add_model>`).

A larger budget continues the same draw sequence from q. A new model starts a *phase*: the
draws from the walk's cursor on (draws generated but not yet looked at are dropped) come
from q re-planned for the models now compared (``phases`` table; their uniforms are the
phase's own, ``default_rng([seed, phase, block])``), and the reports weigh every draw by p
over the mixture of the phases' q, Σ_k n_k q_k / n (multiple importance sampling with the
balance heuristic, as ``evaluate(..., reuse=)``; ``docs/how-it-works/sampling.md``, "Reusing
labels"). The labels already recorded keep counting, and the estimates on the draws before
the new phase do not change.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .._validation import check_budget, check_max_draws, check_option
from ..errors import BudgetError, LabelSpaceError, ShapeError, UnknownOptionError
from ..estimators.report import ClasswisePool
from ..measures import ClasswiseMeasure
from ..predictive import Predictive
from .blobs import StoredArray, write_array
from .codec import _fingerprint
from .lookup import write_draw_index
from .planning import (
    StoredPlan,
    _classic_models,
    _decision_array,
    _plan_distribution,
    _with_decisions,
)
from .schema import StoreFile, _now

__all__ = ["add_model", "extend"]


def extend(store: StoreFile, stored: StoredPlan, budget: float) -> None:
    """Raise the session's budget to ``budget`` (labels, or cost units when the session has
    costs); the draw cap grows with it, and a campaign that had stopped at its budget or cap
    resumes where it stopped."""
    plan = stored.plan
    b = check_budget(budget, stored.costs)
    if b <= plan.budget:
        raise BudgetError(
            f"budget: the session's budget is already {plan.budget:g}; extend it to a larger "
            f"one (got {b:g})."
        )
    cap = max(plan.max_draws, check_max_draws(None, b, stored.costs))

    def write(c: sqlite3.Connection) -> None:
        c.execute("UPDATE plan SET budget = ?, max_draws = ?", (b, cap))
        c.execute("UPDATE state SET finished = NULL WHERE finished IN ('budget', 'max_draws')")

    store.write(write)


def add_model(
    store: StoreFile, stored: StoredPlan, predictions: Any, name: Any, prediction: Any
) -> None:
    """Add a model to the session: from the next block of draws on, q is re-planned for
    comparing every model (the session becomes a comparison if it was an evaluation)."""
    plan = stored.plan
    if plan.ranking:
        raise UnknownOptionError(
            "add_model: a ranked session's queries cannot take another ranker yet; create a "
            "session for it (evaluate(..., reuse=session) reuses this one's grades)."
        )
    if plan.stopping is not None:
        raise UnknownOptionError(
            "add_model: this session has a stopping rule, whose anytime-valid sequence "
            "assumes draws from one q; create a session for the new model with "
            "evaluate(..., reuse=session) or without a rule."
        )
    meas = stored.measure
    if getattr(meas, "any_predictions", False):
        raise UnknownOptionError(
            f"add_model: {meas.name} is the mean of the label itself, the same for every "
            "model; a session of it has nothing to compare."
        )
    k = plan.n_models
    if isinstance(meas, ClasswiseMeasure):
        ClasswisePool.check_pair(meas, k + 1, "add_model")
    labels = None if plan.label_space is None else list(plan.label_space)
    if isinstance(predictions, Predictive):  # it carries its classes, checked below
        labels = None
    try:
        (pred,), (array,), kind, space = _classic_models([predictions], labels)
    except (LabelSpaceError, ShapeError) as exc:
        raise type(exc)(str(exc).replace("pools", "predictions", 1)) from None
    if pred.n != plan.pool_size:
        raise ShapeError(
            f"predictions: cover {pred.n} instances, the session's pool {plan.pool_size}; "
            "give the new model's predictions on the same pool, in the same order."
        )
    if kind != plan.predictive_kind or (space is not None and tuple(space) != plan.label_space):
        raise LabelSpaceError(
            f"predictions: a {kind} model with classes {space} cannot join a session of "
            f"{plan.predictive_kind} models with classes {plan.label_space}; give the "
            "session's classes in its order."
        )
    (pred,) = _with_decisions([pred], prediction, False)
    name = f"model {k}" if name is None else str(name)
    if name in plan.model_names:
        raise ShapeError(f"name: the session already has a model named {name!r}.")
    preds = [*stored.predictives, pred]
    method = check_option(plan.method, stored.pool.session_methods(k + 1), "method")
    q = _plan_distribution(method, preds, meas, stored.costs)
    decision = _decision_array(pred)

    def write(c: sqlite3.Connection) -> None:
        m = plan.pool_size
        rows = c.execute(
            "SELECT model, n_columns, decision IS NOT NULL FROM models ORDER BY model"
        ).fetchall()
        arrays = [StoredArray("models.predictions", j, (m, n)).read(c) for j, n, _ in rows]
        decisions = [
            StoredArray("models.decision", j, (m,)).read(c) if has else None for j, _, has in rows
        ]
        fingerprint = _fingerprint(
            stored.ids, [*arrays, array], stored.costs, None, [*decisions, decision]
        )
        c.execute(
            "INSERT INTO models (model, name, n_columns, predictions, decision) "
            "VALUES (?, ?, ?, x'', ?)",
            (k, name, array.shape[1], None if decision is None else b""),
        )
        write_array(c, StoredArray("models.predictions", k, array.shape), array)
        if decision is not None:
            write_array(c, StoredArray("models.decision", k, decision.shape), decision)
        c.execute(
            "UPDATE plan SET n_models = ?, kind = 'comparison', fingerprint = ?",
            (k + 1, fingerprint),
        )
        # The phase starts at the walk's cursor: draws generated from the old q but not yet
        # looked at (none handed out) are dropped, so the new q takes effect at once.
        first = int(c.execute("SELECT cursor FROM state").fetchone()[0])
        c.execute("DELETE FROM draws WHERE seq >= ?", (first,))
        same = c.execute("SELECT phase FROM phases WHERE first_seq = ?", (first,)).fetchone()
        if first == 0:  # nothing drawn yet: the plan's q is replaced
            phase = 0
        elif same:
            phase = int(same[0])
        else:
            phase = int(c.execute("SELECT COALESCE(MAX(phase) + 1, 1) FROM phases").fetchone()[0])
            c.execute(
                "INSERT INTO phases (phase, first_seq, q, reason, created_at) VALUES "
                "(?, ?, x'', ?, ?)",
                (phase, first, f"add_model {name}", _now()),
            )
        where = StoredArray("plan.q", 1, q.shape) if phase == 0 else (
            StoredArray("phases.q", phase, q.shape))  # fmt: skip
        write_array(c, where, q)
        write_draw_index(c, phase, q)
        c.execute("UPDATE state SET finished = NULL WHERE finished = 'pool'")

    store.write(write)
