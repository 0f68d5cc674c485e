"""The campaign's ledger, read without the pool: where it stands (:func:`progress`,
:class:`SessionProgress`), every label (:func:`labels_frame`), the audit trail
(:func:`audit_frame`), and the labeled prefix of the draws the estimates use
(:func:`_snapshot`). Everything here costs O(labels): ids come through the pool table's key,
costs through its rows, what q can still draw through the draw index (:mod:`.lookup`)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..acquisition import _budget_room, _first_true_run
from .lookup import Prices, _py, last_draw_index
from .schema import StoreFile
from .stored import StoredPlan

__all__ = ["SessionProgress", "audit_frame", "labels_frame", "progress"]


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
        from ..estimators.inference import _result_repr

        return _result_repr(self, *lines)


# ----------------------------------------------------------------- the labeled prefix
def _snapshot(
    c: sqlite3.Connection,
) -> tuple[NDArray[np.intp], NDArray[np.float64], dict[int, Any]]:
    """Campaign draws, their q, and the labels by pool position, from one transaction."""
    cursor = int(c.execute("SELECT cursor FROM state").fetchone()[0])
    rows = c.execute(
        "SELECT position, q FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
    ).fetchall()
    draws = np.array([r[0] for r in rows], dtype=np.intp)
    q = np.array([r[1] for r in rows], dtype=np.float64)
    return draws, q, dict(c.execute("SELECT position, label FROM labels").fetchall())


def _labeled_prefix(draws: NDArray[np.intp], labeled: NDArray[np.bool_]) -> int:
    """Length of the longest prefix of the draws whose instances are all labeled
    (``labeled``: per draw)."""
    return _first_true_run(labeled) if draws.size else 0


def progress(
    store: StoreFile, stored: StoredPlan, stopped: Callable[[], str | None]
) -> SessionProgress:
    """:meth:`Session.progress <activeeval.Session.progress>`; ``stopped`` says why the
    plan's stopping rule is met (:func:`.report.stop_reason`), asked only when the campaign
    is not finished otherwise."""

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
        budget = float(c.execute("SELECT budget FROM plan").fetchone()[0])  # extend: now
        several, unanimous = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(n_agreeing = n_annotations), 0) FROM agreement "
            "WHERE n_annotations > 1"
        ).fetchone()
        of = Prices(c, stored.plan.cost_sensitive).of
        spent, committed = float(of(labeled).sum()), float(of(handed).sum())
        if finished is None:
            # Finished in effect when no instance left to hand out is affordable.
            cheapest = _cheapest_left(c, stored, handed)
            if cheapest is None:
                finished = "pool"
            elif cheapest > _budget_room(budget, committed):
                finished = "budget"
        return (cursor, finished, handed, holders, labeled, draws, (several, unanimous), budget,
                spent, committed)  # fmt: skip

    cursor, finished, handed, holders, labeled, draws, overlap, budget, spent, committed = (
        store.read(read)
    )
    if finished is None and stored.plan.stopping is not None and stopped() is not None:
        finished = "stopping rule"
    # the instances in play, numbered locally (O(labels), not O(pool))
    units = np.union1d(np.union1d(handed, labeled), draws)
    handed, labeled, draws = (np.searchsorted(units, a) for a in (handed, labeled, draws))
    mask = np.zeros(units.shape[0], dtype=bool)
    mask[labeled] = True
    n_pending = int(handed.shape[0] - labeled.shape[0])
    n_prefix = _labeled_prefix(draws, mask[draws])
    pending_by, waiting, blocking_by = _holders(handed, holders, mask, draws[:n_prefix])
    return SessionProgress(
        n_labels=int(labeled.shape[0]),
        cost_spent=spent,
        committed=committed,
        budget=budget,
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


def _cheapest_left(
    c: sqlite3.Connection, stored: StoredPlan, handed: NDArray[np.intp]
) -> float | None:
    """The cost of the cheapest instance not handed out that the last phase's q can draw
    (None: there is none): without costs 1, else the first such row of the pool table's
    cost index."""
    index = last_draw_index(c, stored.plan.pool_size)
    if not stored.plan.cost_sensitive:
        if index.n_support == stored.plan.pool_size:  # q > 0 everywhere: no q to read
            left = index.n_support - int(handed.shape[0])  # (each handed-out id once)
        else:
            left = index.n_support - int(np.count_nonzero(index.q_at(c, handed) > 0))
        return 1.0 if left > 0 else None
    taken = set(handed.tolist())
    rows = c.execute("SELECT position, cost FROM pool WHERE cost IS NOT NULL ORDER BY cost")
    while batch := rows.fetchmany(256):  # rows with q = 0 are skipped a batch at a time
        free = [(p, cost) for p, cost in batch if p not in taken]
        if not free:
            continue
        q = index.q_at(c, np.array([p for p, _ in free], dtype=np.intp))
        drawable = np.flatnonzero(q > 0)
        if drawable.size:
            return float(free[int(drawable[0])][1])
    return None


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
    drawn, counts = np.unique(np.asarray(draws, dtype=np.intp), return_counts=True)
    pos = np.array([r[0] for r in rows], dtype=np.intp)
    at = np.minimum(np.searchsorted(drawn, pos), max(drawn.shape[0] - 1, 0))
    times = np.where(drawn[at] == pos, counts[at], 0) if drawn.size else np.zeros_like(pos)
    frame = pd.DataFrame(
        {
            "id": pd.Series([_py(v) for v in stored.ids_at(pos)], dtype=object),
            "label": [r[1] for r in rows],
            "annotator": [r[2] for r in rows],
            "timestamp": [r[3] for r in rows],
            "order": [r[6] for r in rows],
            "batch": [r[4] for r in rows],
            "first_draw": [r[5] for r in rows],
            "times_drawn": times,
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
    frame.insert(2, "id", [_py(v) for v in stored.ids_at(frame.pop("position").to_numpy(int))])
    return frame
