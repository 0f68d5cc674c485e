"""Pool-sized arrays in a store: a model's predictions and decisions, q per phase.

An array of at most :data:`PART_BYTES` bytes is one blob in its own row's column (``plan.q``,
``phases.q``, ``models.predictions``, ``models.decision``), as every store before schema
version 6 keeps it. A larger one leaves that column an empty blob and lies in the ``parts``
table (schema version 6), in parts of :data:`PART_ROWS` rows — the draw index's chunk, so that
a draw reads one part of q. Parts keep the commands that read a few rows O(labels) on large
pools: SQLite keeps a blob beyond a page in a chain of overflow pages, and a read at an offset
first walks the chain up to it, so reading rows spread over one 80 MB blob (q of 10⁷
instances) reads most of it. They also hold arrays larger than one SQLite value (10⁹ bytes;
the predictions of 10⁸ instances of a binary model are 1.6·10⁹). Arrays are written a chunk
of rows at a time (``zeroblob`` and incremental blob I/O: no copy of the array as bytes) and
read whole or by rows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._chunks import row_chunks
from ..errors import StoreError
from ..predictive import Categorical, Gaussian, restored_decision

__all__ = ["PART_BYTES", "PART_ROWS", "ArrayWriter", "RowReader", "StoredArray", "write_array"]

#: The largest array stored as one blob; a larger one is stored in parts of PART_ROWS rows.
PART_BYTES = 1 << 20
#: Rows per part, the draw index's chunk (``lookup.CHUNK`` is this); the last part may be
#: shorter.
PART_ROWS = 4096
#: Part blobs a reader keeps open at once.
_OPEN_PARTS = 64
#: :meth:`RowReader.at` reads a part's wanted rows as one run where the run is at most this
#: many times as long as their count.
_DENSE = 16

#: column → (table, column); every such table's key is its rowid.
_WHERE = {
    "plan.q": ("plan", "q"),
    "phases.q": ("phases", "q"),
    "models.predictions": ("models", "predictions"),
    "models.decision": ("models", "decision"),
    "models.checks": ("models", "checks"),
}


@dataclass(frozen=True)
class StoredArray:
    """A stored float64 array of ``shape`` (rows first): the value of ``column`` (e.g.
    ``"models.predictions"``) in the row whose key is ``key`` (the plan's 1, a phase, a
    model), or, that value empty, its parts."""

    column: str
    key: int
    shape: tuple[int, ...]

    @property
    def owner(self) -> str:
        """Its ``parts.owner``."""
        return f"{self.column}:{int(self.key)}"

    @property
    def width(self) -> int:
        return int(np.prod(self.shape[1:], dtype=np.int64)) if len(self.shape) > 1 else 1

    @property
    def nbytes(self) -> int:
        return 8 * self.shape[0] * self.width

    def _own_length(self, c: sqlite3.Connection) -> int:
        """Bytes in the column itself (0: empty, or NULL)."""
        table, col = _WHERE[self.column]
        n = c.execute(f"SELECT length({col}) FROM {table} WHERE rowid = ?", (self.key,)).fetchone()
        return 0 if n is None or n[0] is None else int(n[0])

    def stored_bytes(self, c: sqlite3.Connection) -> int:
        """Bytes the store holds for it, by lengths alone (SQLite reads no content)."""
        own = self._own_length(c)
        if own:
            return own
        parts = c.execute(
            "SELECT COALESCE(SUM(length(data)), 0) FROM parts WHERE owner = ?", (self.owner,)
        )
        return int(parts.fetchone()[0])

    def read(self, c: sqlite3.Connection) -> NDArray[np.float64]:
        """The whole array: a read-only view of the blob's bytes where it is one blob, else
        assembled from its parts (its length is the caller's to check, against the shape
        it expects)."""
        if self._own_length(c):
            table, col = _WHERE[self.column]
            blob = c.execute(f"SELECT {col} FROM {table} WHERE rowid = ?", (self.key,))
            flat = np.frombuffer(blob.fetchone()[0], dtype="<f8").astype(np.float64, copy=False)
            return flat.reshape(self.shape)
        out = np.empty(self.stored_bytes(c) // 8)
        view = memoryview(out.data).cast("B")
        at = 0
        rows = c.execute("SELECT data FROM parts WHERE owner = ? ORDER BY part", (self.owner,))
        for (data,) in rows:
            view[at : at + len(data)] = data
            at += len(data)
        return out.reshape(self.shape)


class RowReader:
    """Rows of a stored array read through incremental blob I/O, from its one blob or from
    the parts holding them (opened as needed, a few at a time), without reading the rest. A
    context manager."""

    def __init__(self, c: sqlite3.Connection, where: StoredArray) -> None:
        self.where = where
        self._c = c
        self._rb = 8 * where.width
        self._open: dict[int, Any] = {}
        self._rowids: dict[int, int] = {}  # parts' rowids looked up ahead (:meth:`at`)
        m = where.shape[0]
        own = where._own_length(c)
        self._own = bool(own)
        if own:
            self._part_rows = max(m, 1)
            self._blob(0)
            if own != where.nbytes:
                self.close()
                self._altered(f"holds {own} bytes, not {where.nbytes}")
            return
        # the part size is part 0's (a store of 8046082 has parts of another size)
        first, count = c.execute(
            "SELECT (SELECT length(data) FROM parts WHERE owner = ?1 AND part = 0), "
            "(SELECT COUNT(*) FROM parts WHERE owner = ?1)",
            (where.owner,),
        ).fetchone()
        self._part_rows = max((first or 0) // self._rb, 1)
        if not first or first % self._rb or count != -(-m // self._part_rows):
            self._altered(f"has {count} parts, part 0 of {first} bytes, for {m} rows")

    def _altered(self, what: str) -> None:
        raise StoreError(f"{self.where.owner}: {what}; the store was altered outside activeeval.")

    def _blob(self, j: int) -> Any:
        blob = self._open.get(j)
        if blob is not None:
            return blob
        if len(self._open) >= _OPEN_PARTS:
            self.close()
        if self._own:  # the array is its column's one blob (opened again after a close)
            table, col = _WHERE[self.where.column]
            blob = self._open[0] = self._c.blobopen(table, col, self.where.key, readonly=True)
            return blob
        rowid = self._rowids.get(j)
        if rowid is None:
            row = self._c.execute(
                "SELECT rowid FROM parts WHERE owner = ? AND part = ?", (self.where.owner, j)
            ).fetchone()
            if row is None:
                self._altered(f"part {j} is missing")
            rowid = int(row[0])
        blob = self._open[j] = self._c.blobopen("parts", "data", rowid, readonly=True)
        rows = min(self._part_rows, self.where.shape[0] - j * self._part_rows)
        if len(blob) != rows * self._rb:
            self.close()
            self._altered(f"part {j} holds {len(blob)} bytes, not {rows * self._rb}")
        return blob

    def rows(self, start: int, stop: int) -> NDArray[np.float64]:
        """Rows ``start`` to ``stop`` − 1 (they may span parts), shaped as the array's."""
        w = self.where.width
        out = np.empty((stop - start) * w)
        at = start
        while at < stop:
            j, off = divmod(at, self._part_rows)
            end = min(stop, (j + 1) * self._part_rows)
            blob = self._blob(j)
            blob.seek(off * self._rb)
            lo = (at - start) * w
            out[lo : lo + (end - at) * w] = np.frombuffer(blob.read((end - at) * self._rb), "<f8")
            at = end
        return out.reshape((stop - start, *self.where.shape[1:]))

    def at(self, positions: NDArray[np.intp]) -> NDArray[np.float64]:
        """The rows at ``positions`` (any order, repeats allowed), each part opened once: the
        rows a part holds read as one run from the first to the last where they lie close
        (the run at most :data:`_DENSE` times as long as their count), else one by one."""
        out = np.empty((positions.shape[0], *self.where.shape[1:]))
        if positions.shape[0] == 0:
            return out
        order = np.argsort(positions, kind="stable")
        pos = positions[order]
        part = pos // self._part_rows
        cuts = np.flatnonzero(np.diff(part)) + 1
        if not self._own:  # every part's rowid in a few queries, not one per part
            wanted = [j for j in np.unique(part).tolist() if j not in self._rowids]
            for lo in range(0, len(wanted), 500):
                few = wanted[lo : lo + 500]
                marks = ",".join("?" * len(few))
                self._rowids.update(self._c.execute(
                    f"SELECT part, rowid FROM parts WHERE owner = ? AND part IN ({marks})",
                    (self.where.owner, *few),
                ).fetchall())  # fmt: skip
        for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, pos.shape[0]].tolist(),
                          strict=True):  # fmt: skip
            first, last = int(pos[lo]), int(pos[hi - 1])
            if last - first + 1 <= _DENSE * (hi - lo):
                out[order[lo:hi]] = self.rows(first, last + 1)[pos[lo:hi] - first]
            else:
                for i, p in zip(order[lo:hi].tolist(), pos[lo:hi].tolist(), strict=True):
                    out[i] = self.rows(p, p + 1)[0]
        return out

    def close(self) -> None:
        for b in self._open.values():
            b.close()
        self._open = {}

    def __enter__(self) -> RowReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ArrayWriter:
    """A stored array written a chunk of rows at a time, in any order: the column's row (which
    must exist) is set to ``zeroblob`` — or, above :data:`PART_BYTES`, to an empty blob, with
    zeroblob parts of :data:`PART_ROWS` rows — and :meth:`write` fills rows. A context
    manager."""

    def __init__(self, c: sqlite3.Connection, where: StoredArray) -> None:
        self.where = where
        self._c = c
        self._rb = 8 * where.width
        self._current: tuple[int, Any] | None = None
        table, col = _WHERE[where.column]
        c.execute("DELETE FROM parts WHERE owner = ?", (where.owner,))
        if where.nbytes <= PART_BYTES:
            c.execute(f"UPDATE {table} SET {col} = zeroblob(?) WHERE rowid = ?",
                      (where.nbytes, where.key))  # fmt: skip
            self._part_rows = max(where.shape[0], 1)
            self._target = (table, col)
            self._rowids = [where.key]
            return
        c.execute(f"UPDATE {table} SET {col} = x'' WHERE rowid = ?", (where.key,))
        self._part_rows = PART_ROWS
        self._target = ("parts", "data")
        self._rowids = []
        for j, start in enumerate(range(0, where.shape[0], PART_ROWS)):
            n = min(PART_ROWS, where.shape[0] - start)
            cur = c.execute(
                "INSERT INTO parts (owner, part, data) VALUES (?, ?, zeroblob(?))",
                (where.owner, j, n * self._rb),
            )
            self._rowids.append(int(cur.lastrowid or 0))

    def _blob(self, j: int) -> Any:
        if self._current is not None and self._current[0] == j:
            return self._current[1]
        self.close()
        blob = self._c.blobopen(*self._target, self._rowids[j])
        self._current = (j, blob)
        return blob

    def write(self, start: int, values: NDArray[Any]) -> None:
        """Rows ``start`` … ``start + len(values)`` − 1 (``values``: those rows)."""
        w = self.where.width
        data = np.ascontiguousarray(values, dtype="<f8").reshape(-1)
        rows = data.shape[0] // w
        at, done = start, 0
        while done < rows:
            j, off = divmod(at, self._part_rows)
            n = min(rows - done, (j + 1) * self._part_rows - at)
            blob = self._blob(j)
            blob.seek(off * self._rb)
            blob.write(data[done * w : (done + n) * w].tobytes())
            at += n
            done += n

    def close(self) -> None:
        if self._current is not None:
            self._current[1].close()
            self._current = None

    def __enter__(self) -> ArrayWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_array(c: sqlite3.Connection, where: StoredArray, values: NDArray[Any]) -> None:
    """The whole array written, a chunk of rows at a time (no copy of it as bytes); the
    column's row must exist."""
    arr = np.asarray(values)
    with ArrayWriter(c, where) as w:
        for rows in row_chunks(where.shape[0]):
            w.write(rows.start, arr[rows])


# ------------------------------------------------- a model read from the store by rows
class _WholePool(NotImplementedError):
    """A pass that would read the streamed pool whole: its init reads the files whole."""


class _StoredCategorical(Categorical):
    """A classifier's predictions as the store being built holds them, read a chunk at a time:
    every pass over the pool reads its chunks (``_chunk``, ``take``), with the stored
    decisions ``decisions`` (None: the most probable class); nothing reads them whole
    (``proba`` refuses, so that a whole-pool read cannot slip in unnoticed)."""

    def __init__(
        self, reader: RowReader, m: int, labels: NDArray[Any], decisions: RowReader | None = None
    ) -> None:
        self._reader, self._m, self._decisions = reader, m, decisions
        self.labels = labels
        self._order = np.argsort(labels, kind="stable")
        self._sorted = labels[self._order]

    @property
    def n(self) -> int:
        return self._m

    @property
    def proba(self) -> NDArray[np.float64]:  # type: ignore[override]
        raise _WholePool("a streamed pool is read a chunk at a time")

    def take(self, index: ArrayLike | slice) -> Categorical:
        out = object.__new__(Categorical)
        out.proba = _rows(self._reader, self._m, index)
        out.labels, out._order, out._sorted = self.labels, self._order, self._sorted
        return restored_decision(out, _decided_rows(self._decisions, self._m, index))

    def _chunk(self, rows: slice) -> Categorical:
        return self.take(rows)

    def __repr__(self) -> str:
        return f"_StoredCategorical(m={self._m}, labels={self.labels.tolist()})"


class _StoredGaussian(Gaussian):
    """A regressor's predictions as the store being built holds them (mean, var), read a
    chunk at a time, with its stored decisions (see :class:`_StoredCategorical`)."""

    def __init__(self, reader: RowReader, m: int, decisions: RowReader | None = None) -> None:
        self._reader, self._m, self._decisions = reader, m, decisions

    @property
    def n(self) -> int:
        return self._m

    @property
    def mean(self) -> NDArray[np.float64]:  # type: ignore[override]
        raise _WholePool("a streamed pool is read a chunk at a time")

    @property
    def var(self) -> NDArray[np.float64]:  # type: ignore[override]
        raise _WholePool("a streamed pool is read a chunk at a time")

    def take(self, index: ArrayLike | slice) -> Gaussian:
        arr = _rows(self._reader, self._m, index)
        out = object.__new__(Gaussian)
        out.mean, out.var = arr[:, 0].copy(), arr[:, 1].copy()
        return restored_decision(out, _decided_rows(self._decisions, self._m, index))

    def _chunk(self, rows: slice) -> Gaussian:
        return self.take(rows)

    def __repr__(self) -> str:
        return f"_StoredGaussian(m={self._m})"


def _decided_rows(
    reader: RowReader | None, m: int, index: ArrayLike | slice
) -> NDArray[np.float64] | None:
    """The stored decisions at ``index`` (None: no stored decisions)."""
    return None if reader is None else _rows(reader, m, index)


def _rows(reader: RowReader, m: int, index: ArrayLike | slice) -> NDArray[np.float64]:
    """The stored rows at ``index`` (a slice, or positions in any order with repeats)."""
    if isinstance(index, slice):
        start, stop, step = index.indices(m)
        if step != 1:
            return _rows(reader, m, np.arange(start, stop, step))
        return reader.rows(start, stop)
    return reader.at(np.asarray(index, dtype=np.intp))
