"""What hand-outs, intake and progress read from a store without reading its pool, so that
``next_batch``, ``record``, ``progress`` and ``labels_frame`` cost O(labels), not O(pool):

- :class:`PoolIds`: pool ids by position and positions by id, through the ``pool`` table's
  keys (its primary key and its ``UNIQUE`` id index);
- :class:`DrawIndex`: the draw sequence's inverse CDF a chunk at a time. Per phase of q the
  store keeps the running sums of q at the end of every chunk of :data:`CHUNK` rows (the
  ``draw_index`` table, schema version 5); a draw finds its chunk among those ends and then
  its instance within the chunk, from that chunk's q read out of the stored q blob. Because
  ``np.cumsum`` adds in order, the sums of a chunk continued from the previous chunk's end are
  bit for bit those of the cumulative sum over the whole pool, so the draws are exactly
  :func:`~activeeval.session.planning._draw_block`'s (tested).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import _chunks
from ..errors import StoreError
from .blobs import PART_ROWS, RowReader, StoredArray

__all__ = [
    "CHUNK", "DrawIndex", "PoolIds", "Prices", "chunk_ends", "last_draw_index", "plan_horizon",
    "read_costs", "read_draw_index",
    "write_draw_index",
]  # fmt: skip

#: Rows per chunk of the draw index: a draw reads one chunk of q (32 KiB), one part of it
#: where q is stored in parts.
CHUNK = PART_ROWS


def _py(x: Any) -> Any:
    """A plain Python scalar (numpy scalars unwrapped) for SQLite and JSON."""
    return x.item() if isinstance(x, np.generic) else x


def chunk_ends(q: NDArray[np.float64], chunk: int = CHUNK) -> NDArray[np.float64]:
    """The running sums of q at the end of every chunk of ``chunk`` rows, exactly
    ``np.cumsum(q)`` there (:func:`activeeval._chunks.chunk_ends`)."""
    return _chunks.chunk_ends(q, chunk)


def plan_horizon(c: sqlite3.Connection) -> float:
    """The anytime sequences' horizon ``Session.create`` stores (``meta.horizon``), computed
    again from the stored plan's budget, q and costs, for a store that does not hold it
    (O(pool), once: the migration to version 5 stores it)."""
    from ..stopping import horizon_draws

    budget, m, has_costs = c.execute(
        "SELECT budget, pool_size, (SELECT cost IS NOT NULL FROM pool WHERE position = 0) FROM plan"
    ).fetchone()
    costs = read_costs(c, int(m)) if has_costs else None
    return horizon_draws(budget, StoredArray("plan.q", 1, (int(m),)).read(c), costs)


def read_costs(c: sqlite3.Connection, m: int) -> NDArray[np.float64]:
    """Every pool instance's labeling cost, in position order, read straight into an array
    (a TypeError where a row has none: a store without costs, or an altered one)."""
    rows = c.execute("SELECT cost FROM pool ORDER BY position")
    return np.fromiter((r[0] for r in rows), dtype=np.float64, count=m)


def write_draw_index(conn: sqlite3.Connection, phase: int, q: NDArray[np.float64]) -> None:
    """Store phase ``phase``'s draw index: its chunk ends and the size of its support."""
    ends = chunk_ends(q)
    conn.execute(
        "INSERT OR REPLACE INTO draw_index (phase, chunk, n_support, ends) VALUES (?, ?, ?, ?)",
        (phase, CHUNK, int(np.count_nonzero(q > 0)), np.ascontiguousarray(ends, "<f8").tobytes()),
    )


@dataclass(frozen=True)
class DrawIndex:
    """One phase's q as stored: where (``table``, ``rowid``: its column or, that empty, its
    parts) and its chunk ends; draws and q at given positions are read a chunk at a time."""

    table: str  # "plan" (phase 0) or "phases"
    rowid: int
    m: int
    chunk: int
    n_support: int
    ends: NDArray[np.float64]

    def _reader(self, c: sqlite3.Connection) -> RowReader:
        return RowReader(c, StoredArray(f"{self.table}.q", self.rowid, (self.m,)))

    def q_at(self, c: sqlite3.Connection, positions: NDArray[np.intp]) -> NDArray[np.float64]:
        """q at ``positions`` (any order, repeats allowed)."""
        with self._reader(c) as r:
            return r.at(positions)

    def draw(
        self, c: sqlite3.Connection, u: NDArray[np.float64]
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """The inverse-CDF draws of the uniforms ``u`` (``searchsorted(cumsum(q) / Σq, u,
        side="right")``, capped at m − 1) and q at each."""
        with self._reader(c) as r:
            return _chunks.inverse_cdf(self.ends, self.chunk, self.m, u, r.rows, _altered)


def _altered(start: int, stop: int) -> None:
    raise StoreError(
        f"the draw index does not match q at instances {start}–{stop - 1}; "
        "the store was altered outside activeeval."
    )


def read_draw_index(c: sqlite3.Connection, phase: int, m: int) -> DrawIndex:
    """Phase ``phase``'s draw index (0: the plan's q)."""
    chunk, n_support, ends = c.execute(
        "SELECT chunk, n_support, ends FROM draw_index WHERE phase = ?", (phase,)
    ).fetchone()
    table = "plan" if phase == 0 else "phases"
    rowid = 1 if phase == 0 else phase
    return DrawIndex(table, rowid, m, int(chunk), int(n_support), np.frombuffer(ends, "<f8"))


def last_draw_index(c: sqlite3.Connection, m: int) -> DrawIndex:
    """The draw index of the last phase of q, which new draws come from, as the store holds
    it now (another process may have added a phase since this one opened the store)."""
    last = int(c.execute("SELECT MAX(phase) FROM draw_index").fetchone()[0])
    return read_draw_index(c, last, m)


class PoolIds:
    """Pool ids by position and positions by id, read through the ``pool`` table's keys.
    ``integer``: the ids are integers (else strings)."""

    def __init__(self, c: sqlite3.Connection) -> None:
        row = c.execute("SELECT typeof(id) FROM pool WHERE position = 0").fetchone()
        self.integer = row is not None and row[0] == "integer"

    @staticmethod
    def ids_at(c: sqlite3.Connection, positions: Sequence[int]) -> list[Any]:
        """The ids at ``positions``, in their order."""
        rows = dict(
            c.execute(
                "SELECT position, id FROM pool WHERE position IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(set(int(p) for p in positions))),),
            ).fetchall()
        )
        return [rows[int(p)] for p in positions]

    @staticmethod
    def positions_of(c: sqlite3.Connection, keys: Sequence[Any]) -> NDArray[np.intp]:
        """The position of every key (−1 where it is no id of the pool); keys as the pool
        holds them (int or str)."""
        rows = dict(
            c.execute(
                "SELECT p.id, p.position FROM pool p WHERE p.id IN "
                "(SELECT value FROM json_each(?))",
                (json.dumps(list(dict.fromkeys(keys))),),
            ).fetchall()
        )
        return np.array([rows.get(k, -1) for k in keys], dtype=np.intp)

    @staticmethod
    def head(c: sqlite3.Connection, n: int) -> list[Any]:
        return [r[0] for r in c.execute("SELECT id FROM pool ORDER BY position LIMIT ?", (n,))]

    @staticmethod
    def costs_at(c: sqlite3.Connection, positions: Sequence[int]) -> dict[int, float]:
        """Each position's labeling cost (1 where the session has no costs)."""
        rows = c.execute(
            "SELECT position, cost FROM pool WHERE position IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(int(p) for p in positions))),),
        ).fetchall()
        return {int(p): 1.0 if v is None else float(v) for p, v in rows}


class Prices:
    """Labeling costs by pool position, read from the pool table as first needed (ones
    without costs)."""

    def __init__(self, c: sqlite3.Connection, cost_sensitive: bool) -> None:
        self.c, self.cost_sensitive = c, cost_sensitive
        self.known: dict[int, float] = {}

    def of(self, positions: NDArray[np.intp]) -> NDArray[np.float64]:
        if not self.cost_sensitive:
            return np.ones(positions.shape[0])
        missing = [p for p in positions.tolist() if p not in self.known]
        if missing:
            self.known.update(PoolIds.costs_at(self.c, missing))
        return np.array([self.known[p] for p in positions.tolist()], dtype=np.float64)
