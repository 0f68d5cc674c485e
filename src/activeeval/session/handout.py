"""Handing out ids to label: Algorithm 2's walk over the session's draw sequence.

The walk (:func:`~activeeval.acquisition._walk_block`, the one :func:`~activeeval.evaluate`
takes too) goes over the stored draws from the cursor on; a draw of an instance already handed
out is free, a new instance costs its label, and the walk stops for good at the first new
instance whose label the budget minus everything handed out cannot pay. Blocks of draws are
materialized from the draw index (:mod:`.lookup`; the draws :func:`~.stored._draw_block`
gives) and persisted as the walk needs them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..acquisition import _budget_room, _walk_block
from ..errors import ShapeError, UnknownIdError
from .lookup import PoolIds, Prices, _py, last_draw_index
from .schema import StoreFile, _now
from .stored import StoredPlan, _uniforms

__all__ = ["check_annotator", "next_batch", "release"]


def check_annotator(annotator: Any, name: str = "annotator") -> str | None:
    """None (nobody in particular) or a non-empty name."""
    if annotator is None:
        return None
    if not isinstance(annotator, str) or not annotator.strip():
        raise ShapeError(
            f"{name}: an annotator is named by a non-empty string, got {annotator!r}; leave it "
            "out to hand out to nobody in particular."
        )
    return annotator.strip()  # " alice" is alice


def next_batch(store: StoreFile, stored: StoredPlan, k: int, annotator: Any = None) -> list[Any]:
    """At most ``k`` ids to label next, in draw order: the pending ones first, then new ones
    (see :meth:`Session.next_batch <activeeval.Session.next_batch>`). With ``annotator``,
    only ids no other annotator holds, and those handed out are held by ``annotator``."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ShapeError(f"k: must be a positive integer, got {k!r}.")
    who = check_annotator(annotator)
    return store.write(lambda c: _ids(c, _hand_out(c, stored, int(k), who)))


def _ids(c: sqlite3.Connection, positions: list[int]) -> list[Any]:
    """The pool ids at ``positions``, in their order."""
    return [_py(v) for v in PoolIds.ids_at(c, positions)]


def _pending(c: sqlite3.Connection, holder: str | None) -> list[int]:
    """Pending hand-outs (no label yet) held by ``holder`` (None: held by nobody), in draw
    order."""
    rows = c.execute(
        "SELECT h.position FROM handouts h LEFT JOIN labels l ON l.position = h.position "
        "WHERE l.position IS NULL AND h.holder IS ? ORDER BY h.seq",
        (holder,),
    ).fetchall()
    return [r[0] for r in rows]


def _hand_out(c: sqlite3.Connection, stored: StoredPlan, k: int, who: str | None) -> list[int]:
    """The holder's own pending ids, then (for a named annotator) pending ids nobody holds,
    which become theirs, then new ones from the walk, held by them."""
    pending = _pending(c, who)
    if who is not None and len(pending) < k:
        claimed = _pending(c, None)[: k - len(pending)]
        c.executemany("UPDATE handouts SET holder = ? WHERE position = ?",
                      ((who, p) for p in claimed))  # fmt: skip
        pending = sorted(pending + claimed, key=_seq_of(c))
    if len(pending) >= k:
        return pending[:k]
    fresh = _walk(c, stored, k - len(pending), who)
    return pending + fresh


def _seq_of(c: sqlite3.Connection) -> Any:
    seq = dict(c.execute("SELECT position, seq FROM handouts").fetchall())
    return seq.__getitem__


def _walk(c: sqlite3.Connection, stored: StoredPlan, need: int, who: str | None) -> list[int]:
    """Extend the campaign by up to ``need`` new instances: Algorithm 2's walk
    (:func:`~activeeval.acquisition._walk_block`) over the stored draws from the cursor on,
    materializing and persisting a block of draws whenever the walk needs more.

    O(labels): the walk sees only the instances of the draws it walks over, numbered
    locally (their order kept, so every step is the one over the whole pool); whether they
    are taken, their price and the support left come from the handed-out rows, the pool
    table's costs and the last phase's draw index (:mod:`.lookup`)."""
    cursor, finished = c.execute("SELECT cursor, finished FROM state").fetchone()
    if finished is not None:
        return []
    plan = stored.plan
    # Read in this transaction, not at open: another process may have raised the budget or
    # added a model (a new phase of q) since; new draws come from the last phase's q.
    budget, max_draws = c.execute("SELECT budget, max_draws FROM plan").fetchone()
    starts = [0, *(r[0] for r in c.execute("SELECT first_seq FROM phases ORDER BY phase"))]
    index = last_draw_index(c, plan.pool_size)
    handed = np.array(
        [r[0] for r in c.execute("SELECT position FROM handouts ORDER BY seq")], np.intp
    )
    prices = Prices(c, plan.cost_sensitive)
    room = _budget_room(float(budget), float(prices.of(handed).sum()))
    left = index.n_support - int(np.count_nonzero(index.q_at(c, handed) > 0))
    taken = handed
    n_mat = int(c.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM draws").fetchone()[0])
    rows = c.execute("SELECT position, q FROM draws WHERE seq >= ? ORDER BY seq", (cursor,))
    tail_rows = rows.fetchall()
    tail = np.array([r[0] for r in tail_rows], dtype=np.intp)
    tail_q = np.array([r[1] for r in tail_rows], dtype=np.float64)
    batch = int(c.execute("SELECT COALESCE(MAX(batch) + 1, 0) FROM handouts").fetchone()[0])
    new_pos: list[NDArray[np.intp]] = []
    new_seq: list[NDArray[np.intp]] = []
    while True:
        uniq, local = np.unique(tail, return_inverse=True)
        support = np.zeros(uniq.shape[0], dtype=bool)
        support[local] = tail_q > 0  # each draw's q is the last phase's at its instance
        step = _walk_block(
            local.astype(np.intp), np.isin(uniq, taken), prices.of(uniq), room,
            support=support, left=left, draws_left=int(max_draws) - cursor, need=need,
        )  # fmt: skip
        if step.stop is None and tail.size == 0:  # the walk goes on: the next block
            phase = len(starts) - 1
            block = (n_mat - starts[phase]) // plan.block_size
            tail, tail_q = index.draw(
                c, _uniforms(plan.seed, block, plan.block_size, phase, plan.draw_rule)
            )
            c.executemany(
                "INSERT INTO draws (seq, position, q) VALUES (?, ?, ?)",
                zip(range(n_mat, n_mat + tail.shape[0]), tail.tolist(), tail_q.tolist(),
                    strict=True),
            )  # fmt: skip
            n_mat += tail.shape[0]
            continue
        bought = tail[step.bought]
        new_pos.append(bought)
        new_seq.append(cursor + step.bought)
        taken = np.concatenate([taken, bought])
        room -= step.cost
        need -= step.bought.shape[0]
        left = step.left
        cursor += step.consumed
        tail, tail_q = tail[step.consumed :], tail_q[step.consumed :]
        if step.stop is not None:
            # A stop at `need` is no finish: the next hand-out resumes at the cursor.
            finished = None if step.stop == "need" else step.stop
            break
    pos = np.concatenate(new_pos) if new_pos else np.empty(0, np.intp)
    seq = np.concatenate(new_seq) if new_seq else np.empty(0, np.intp)
    now = _now()
    c.executemany(
        "INSERT INTO handouts (position, seq, batch, handed_out_at, holder) VALUES (?, ?, ?, ?, ?)",
        ((p, s, batch, now, who) for p, s in zip(pos.tolist(), seq.tolist(), strict=True)),
    )
    c.execute("UPDATE state SET cursor = ?, finished = ?", (cursor, finished))
    return [int(p) for p in pos.tolist()]


def release(
    store: StoreFile, stored: StoredPlan, annotator: Any, ids: Any = None, to: Any = None
) -> list[Any]:
    """:meth:`Session.release <activeeval.Session.release>`: ``annotator``'s pending ids (all,
    or those among ``ids``) to nobody in particular, or to the annotator ``to``."""
    who = check_annotator(annotator)
    if who is None:
        raise ShapeError("annotator: name whose pending ids to release, e.g. 'alice'.")
    new = check_annotator(to, "to")
    if new == who:
        raise ShapeError(
            f"to: {to!r} already holds them; name another annotator, or none to free them."
        )
    keys = None if ids is None else _id_list(ids)
    wanted = None if keys is None else set(store.read(lambda c: positions_of(c, stored, keys)))

    def write(c: sqlite3.Connection) -> list[int]:
        mine = [p for p in _pending(c, who) if wanted is None or p in wanted]
        c.executemany("UPDATE handouts SET holder = ? WHERE position = ?",
                      ((new, p) for p in mine))  # fmt: skip
        return mine

    return store.write(lambda c: _ids(c, write(c)))


def _id_list(ids: Any) -> list[Any]:
    """``ids`` as a list of plain values (a generator is read once, here)."""
    if isinstance(ids, str | bytes) or not hasattr(ids, "__iter__"):
        raise ShapeError(f"ids: a list of pool ids, got {ids!r}.")
    return [_py(v) for v in ids]


def positions_of(c: sqlite3.Connection, stored: StoredPlan, keys: list[Any]) -> list[int]:
    """Pool positions of the ids ``keys`` (refused by name when one is not in the pool)."""
    pos = PoolIds.positions_of(c, [_as_key(k, stored.ids_integer) for k in keys])
    if (pos < 0).any():
        bad = keys[int(np.flatnonzero(pos < 0)[0])]
        raise UnknownIdError(f"ids: {bad!r} is not an id of this session's pool.")
    return pos.tolist()


def _as_key(key: Any, integer: bool) -> Any:
    """``key`` as the pool table holds ids: an int of an integer pool (a bool or a float is
    no id there), else a string."""
    if isinstance(key, bool):
        return None
    if integer:
        if isinstance(key, float) and key.is_integer():
            return int(key)
        return key if isinstance(key, int) else None
    return key if isinstance(key, str) else None
