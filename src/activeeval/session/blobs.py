"""Pool-sized arrays in a store: a model's predictions and decisions, q per phase.

An array of at most :data:`PART_BYTES` bytes is one blob in its own row's column (``plan.q``,
``phases.q``, ``models.predictions``, ``models.decision``), as every store before schema
version 6 keeps it. A larger one — SQLite holds at most 10⁹ bytes in one value, and a 10⁸ × 2
float64 matrix is 1.6·10⁹ — leaves that column an empty blob and lies in the ``parts`` table
(schema version 6), cut into parts of whole rows, a multiple of the draw index's chunk each, so
that a chunk of q never straddles two parts. Both are written a chunk of rows at a time
(SQLite's ``zeroblob`` and incremental blob I/O: no copy of the array as bytes) and read whole
or by rows.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._chunks import row_chunks

__all__ = ["PART_BYTES", "ArrayWriter", "RowReader", "StoredArray", "write_array"]

#: The largest array stored as one blob; a larger one is cut into parts of at most this size.
PART_BYTES = 1 << 28
#: A part's rows are a multiple of this (the draw index's chunk, ``lookup.CHUNK``).
ROW_QUANTUM = 4096
#: Bytes read from a blob at a time when an array is read whole.
_READ_BYTES = 1 << 24

#: column → (table, column); every such table's key is its rowid.
_WHERE = {
    "plan.q": ("plan", "q"),
    "phases.q": ("phases", "q"),
    "models.predictions": ("models", "predictions"),
    "models.decision": ("models", "decision"),
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

    def _parts(self, c: sqlite3.Connection) -> list[tuple[int, int]]:
        """(rowid, bytes) of every part in order; empty where the column holds the array."""
        table, col = _WHERE[self.column]
        n = c.execute(f"SELECT length({col}) FROM {table} WHERE rowid = ?", (self.key,)).fetchone()
        if n is not None and n[0]:
            return []
        rows = c.execute(
            "SELECT rowid, length(data) FROM parts WHERE owner = ? ORDER BY part", (self.owner,)
        )
        return [(int(r), int(b)) for r, b in rows]

    def stored_bytes(self, c: sqlite3.Connection) -> int:
        """Bytes the store holds for it, by lengths alone (SQLite reads no content)."""
        table, col = _WHERE[self.column]
        n = c.execute(f"SELECT length({col}) FROM {table} WHERE rowid = ?", (self.key,)).fetchone()
        return int(n[0] or 0) + sum(b for _, b in self._parts(c)) if n is not None else 0

    def read(self, c: sqlite3.Connection) -> NDArray[np.float64]:
        """The whole array: a read-only view of the blob's bytes where it is one blob, else
        assembled from its parts."""
        parts = self._parts(c)
        if not parts:
            table, col = _WHERE[self.column]
            blob = c.execute(f"SELECT {col} FROM {table} WHERE rowid = ?", (self.key,)).fetchone()
            flat = np.frombuffer(blob[0], dtype="<f8").astype(np.float64, copy=False)
            return flat.reshape(self.shape)
        out = np.empty(sum(b for _, b in parts) // 8)
        view = memoryview(out.data).cast("B")
        at = 0
        for rowid, size in parts:
            with c.blobopen("parts", "data", rowid, readonly=True) as blob:
                for lo in range(0, size, _READ_BYTES):
                    data = blob.read(min(_READ_BYTES, size - lo))
                    view[at : at + len(data)] = data
                    at += len(data)
        return out.reshape(self.shape)


class RowReader:
    """Rows of a stored array read through incremental blob I/O, from its one blob or from
    its parts, without reading the rest. A context manager."""

    def __init__(self, c: sqlite3.Connection, where: StoredArray) -> None:
        self.where = where
        self._rb = 8 * where.width
        parts = where._parts(c)
        if parts:
            self._part_rows = parts[0][1] // self._rb
            self._blobs = [c.blobopen("parts", "data", r, readonly=True) for r, _ in parts]
        else:
            table, col = _WHERE[where.column]
            self._part_rows = max(where.shape[0], 1)
            self._blobs = [c.blobopen(table, col, where.key, readonly=True)]

    def rows(self, start: int, stop: int) -> NDArray[np.float64]:
        """Rows ``start`` to ``stop`` − 1 (they may span parts), shaped as the array's."""
        w = self.where.width
        out = np.empty((stop - start) * w)
        at = start
        while at < stop:
            j, off = divmod(at, self._part_rows)
            end = min(stop, (j + 1) * self._part_rows)
            blob = self._blobs[j]
            blob.seek(off * self._rb)
            lo = (at - start) * w
            out[lo : lo + (end - at) * w] = np.frombuffer(blob.read((end - at) * self._rb), "<f8")
            at = end
        return out.reshape((stop - start, *self.where.shape[1:]))

    def close(self) -> None:
        for b in self._blobs:
            b.close()
        self._blobs = []

    def __enter__(self) -> RowReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def part_rows(row_bytes: int) -> int:
    """Rows per part of an array whose rows are ``row_bytes`` long."""
    return max(PART_BYTES // row_bytes // ROW_QUANTUM, 1) * ROW_QUANTUM


class ArrayWriter:
    """A stored array written a chunk of rows at a time, in any order: the column's row (which
    must exist) is set to ``zeroblob`` — or, above :data:`PART_BYTES`, to an empty blob, with
    zeroblob parts — and :meth:`write` fills rows. A context manager."""

    def __init__(self, c: sqlite3.Connection, where: StoredArray) -> None:
        self.where = where
        self._rb = 8 * where.width
        table, col = _WHERE[where.column]
        c.execute("DELETE FROM parts WHERE owner = ?", (where.owner,))
        if where.nbytes <= PART_BYTES:
            self._part_rows = max(where.shape[0], 1)
            c.execute(f"UPDATE {table} SET {col} = zeroblob(?) WHERE rowid = ?",
                      (where.nbytes, where.key))  # fmt: skip
            self._blobs = [c.blobopen(table, col, where.key)]
            return
        self._part_rows = part_rows(self._rb)
        c.execute(f"UPDATE {table} SET {col} = x'' WHERE rowid = ?", (where.key,))
        self._blobs = []
        for j, start in enumerate(range(0, where.shape[0], self._part_rows)):
            n = min(self._part_rows, where.shape[0] - start)
            cur = c.execute(
                "INSERT INTO parts (owner, part, data) VALUES (?, ?, zeroblob(?))",
                (where.owner, j, n * self._rb),
            )
            self._blobs.append(c.blobopen("parts", "data", int(cur.lastrowid or 0)))

    def write(self, start: int, values: NDArray[Any]) -> None:
        """Rows ``start`` … ``start + len(values)`` − 1 (``values``: those rows)."""
        w = self.where.width
        data = np.ascontiguousarray(values, dtype="<f8").reshape(-1)
        rows = data.shape[0] // w
        at, done = start, 0
        while done < rows:
            j, off = divmod(at, self._part_rows)
            n = min(rows - done, (j + 1) * self._part_rows - at)
            blob = self._blobs[j]
            blob.seek(off * self._rb)
            blob.write(data[done * w : (done + n) * w].tobytes())
            at += n
            done += n

    def close(self) -> None:
        for b in self._blobs:
            b.close()
        self._blobs = []

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
