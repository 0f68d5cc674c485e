"""``session init`` on pool files larger than one chunk, a chunk of rows at a time.

The files are read in a few passes of :data:`activeeval.io.STREAM_ROWS` rows: the ids (their
type: integers only if every one is), then the ids and costs of every file side by side into
the store's pool table, then each model's predictions into the store — each chunk checked as
:func:`activeeval.io.read_pool_file` checks the whole file and hashed into the fingerprint as
it passes. q is then planned from the stored predictions, read back a chunk at a time (the
passes of :mod:`activeeval.sampling` read the pool through ``Predictive._chunk``). No array of
the pool's predictions or ids is ever whole in memory; q (and the costs, if any) is, at 8 bytes
per instance.

The store is the one :meth:`Session.create <activeeval.Session.create>` writes from the same
files read whole (:func:`activeeval.io.read_pools`), byte for byte but for the session's id and
creation time (tested). Files a chunk-by-chunk read does not serve are read whole instead
(:func:`create_from_files` returns None; it lists them).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .. import io
from .._chunks import row_chunks
from .._validation import check_costs, check_same_ids, dask_values
from ..errors import (
    ActiveEvalError,
    DuplicateIdError,
    ShapeError,
    StoreError,
    UnknownOptionError,
)
from ..estimators.report import PlainPool
from ..predictive import Categorical, check_decision_shape, decision_numbers
from .blobs import (
    ArrayWriter,
    RowReader,
    StoredArray,
    _StoredCategorical,
    _StoredGaussian,
    _WholePool,
)
from .codec import PoolHash, _canonical_ids, _canonical_labels
from .planning import (
    CreateRequest,
    _checked,
    _measure_name,
    _model_names,
    _planned,
    _write_head,
)
from .schema import build_store
from .summaries import write_summaries

__all__ = ["DaskStream", "create_from_dask", "create_from_files"]


def _scan_ids(stream: io.PoolStream) -> tuple[bool, int]:
    """Whether every id of the file is an integer (else all are read as strings), and the
    number of rows; every id cell checked (none empty), duplicates within a chunk refused.
    A file of at most one chunk with something wrong in it is read whole instead
    (:class:`~activeeval.io.NeedsWholeFile`), so that its error is the one the whole-file
    read reports first."""
    integer, m = True, 0
    failure: ActiveEvalError | None = None
    try:
        for frame in stream.chunks(["id"]):
            if failure is None:
                try:
                    integer &= stream.ids(frame, None).dtype.kind == "i"
                except ActiveEvalError as exc:
                    failure = exc
            m += frame.shape[0]
    except ActiveEvalError as exc:  # a ragged or unreadable row: nothing more to count
        failure = failure or exc
    if failure is not None:
        if m <= io.STREAM_ROWS:
            raise io.NeedsWholeFile(str(failure)) from failure
        raise failure
    return integer, m


def create_from_files(
    target: str | Path,
    paths: Sequence[str | Path],
    request: CreateRequest,
    decision_column: str | None = None,
) -> Path | None:
    """The store ``session init`` writes from the pool files ``paths`` (one per model), read
    a chunk at a time; ``request`` as :meth:`Session.create <activeeval.Session.create>`
    takes it, without ``pools``, ``ids``, ``costs`` and ``prediction`` (the files') and
    ``names`` (the files' paths); ``decision_column``: the column of each file holding its
    model's decisions (``--prediction-column``). None, with nothing written, where the files
    are to be read whole: a pool of at most one chunk, a ranked pool, files of different
    kinds or id types or with their ids in different orders, a header or a one-chunk file
    the whole-file read refuses, a decision column a file lacks, and a plan whose q needs
    the pool whole (comparisons' ``active_0`` and ``active_inf``)."""
    try:
        streams = [io.PoolStream.open(p) for p in paths]
    except io.NeedsWholeFile:
        return None
    decisions: list[_Decisions | None] = [None] * len(streams)
    if decision_column is not None:
        if any(decision_column not in s.columns for s in streams):
            return None  # the whole-file read says which file lacks it
        decisions = [_ColumnDecisions(s, decision_column, streams[0]) for s in streams]
    return _create_from_streams(Path(target), streams, request, [str(p) for p in paths], decisions)


class _Decisions:
    """One model's decisions f(x) as the store keeps them (a classifier's: the class's
    position; a regressor's: the number), a chunk of :data:`~activeeval.io.STREAM_ROWS`
    rows at a time in the pool's order, checked as the whole pool's are."""

    def chunks(self, model: Any) -> Iterator[NDArray[np.float64]]:
        """The decisions of ``model`` (its stored beliefs, read a chunk at a time)."""
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class _ColumnDecisions(_Decisions):
    """A column of the model's pool file (``--prediction-column``), read as
    :func:`~activeeval.io.read_decision_column` reads it; its classes are the first file's
    (every file's columns are stored in the first file's class order)."""

    stream: io.PoolStream
    column: str
    base: io.PoolStream

    def chunks(self, model: Any) -> Iterator[NDArray[np.float64]]:
        s, col = self.stream, self.column
        for frame in s.chunks([col], text=(col,)):
            cells = io._decision_cells(frame[col], s.path, s.row_label, col, self.base.labels)
            yield np.asarray(cells, dtype=np.float64)


@dataclasses.dataclass(frozen=True)
class _GivenDecisions(_Decisions):
    """An array given with a Dask pool (``Session.create(prediction=)``): a NumPy array, a
    Dask array or a Dask Series, in the pool's row order; each chunk checked as the pool in
    NumPy checks it whole (:func:`~activeeval.predictive.decision_numbers`)."""

    values: Any
    name: str

    @classmethod
    def of(cls, values: Any, name: str, m: int, kind: str) -> _GivenDecisions:
        values = dask_values(values, name)
        check_decision_shape(values.shape, m, name, kind == "categorical")
        return cls(values, name)

    def chunks(self, model: Any) -> Iterator[NDArray[np.float64]]:
        labels = model.labels if isinstance(model, Categorical) else None
        at = 0
        for f in self._rows(model.n):
            yield decision_numbers(f, labels, self.name, at)
            at += f.shape[0]

    def _rows(self, m: int) -> Iterator[NDArray[Any]]:
        """The values, :data:`~activeeval.io.STREAM_ROWS` at a time (the last fewer); a Dask
        array's blocks each computed once."""
        n = io.STREAM_ROWS
        if isinstance(self.values, np.ndarray):
            for rows in row_chunks(m, n):
                yield self.values[rows]
            return
        import dask

        pending: list[NDArray[Any]] = []
        held = 0
        for block in self.values.to_delayed().ravel():
            pending.append(np.asarray(dask.compute(block)[0]))
            held += pending[-1].shape[0]
            while held >= n:
                both = np.concatenate(pending) if len(pending) > 1 else pending[0]
                yield both[:n]
                pending, held = [both[n:]], held - n
        if held:
            yield np.concatenate(pending) if len(pending) > 1 else pending[0]


def _create_from_streams(
    out: Path,
    streams: list[io.PoolStream],
    request: CreateRequest,
    names: Sequence[str] | None,
    decisions: Sequence[_Decisions | None],
) -> Path | None:
    """:func:`create_from_files` from the opened ``streams``, the models named ``names``,
    with their ``decisions`` (None: the most probable class, or the mean)."""
    try:
        if len({s.kind for s in streams}) > 1:
            return None
        if streams[0].n_rows is not None and streams[0].n_rows <= io.STREAM_ROWS:
            return None
        scans = [_scan_ids(s) for s in streams]
    except io.NeedsWholeFile:
        return None
    integer, m = scans[0]
    if m <= io.STREAM_ROWS or any(sc != scans[0] for sc in scans):
        return None
    # what needs no pool is refused before the passes that write, as the plan refuses it
    # (after the files' own errors, as the whole-file read reports them first)
    costs = any(s.has_costs for s in streams)
    _checked(request, PlainPool, len(streams), None, budget=not costs)
    if isinstance(request.measure, str):
        _measure_name(request.measure, request.beta)
    if out.exists():
        raise StoreError(
            f"{out}: already exists; open it with Session.open (activeeval session "
            "status) or choose another file name."
        )
    try:
        build_store(out, lambda conn: _fill(conn, streams, integer, m, request, names, decisions))
    except (io.NeedsWholeFile, _WholePool):
        return None
    return out


@dataclasses.dataclass(frozen=True)
class DaskStream(io.PoolStream):
    """A Dask pool read as a pool file is streamed, a partition (or block) at a time on
    this process, which writes the store: a ``dask.dataframe.DataFrame`` with a pool file's
    columns (``id``, ``p_<label>`` or ``mean`` and ``var``, ``cost``), or a
    ``dask.array.Array`` of class probabilities (ids ``0 … m − 1`` or the request's, class
    labels ``0 … K − 1`` or the request's). Errors name the pool's row, counted from 1 as
    a Parquet file's."""

    source: Any = None
    ids_given: NDArray[Any] | None = None

    @classmethod
    def of(cls, pool: Any, k: int, ids: Any, labels: Any) -> DaskStream:
        import dask.array as da
        import dask.dataframe as dd

        where = Path(f"pools[{k}] (a Dask pool)")
        if isinstance(pool, dd.DataFrame):
            for arg, value in (("ids", ids), ("labels", labels)):
                if value is not None:
                    raise ShapeError(
                        f"{arg}: a Dask DataFrame pool gives its {arg} in its columns (id, "
                        f"p_<label>); drop {arg}=."
                    )
            columns = [str(c) for c in pool.columns]
            if "id" not in columns:
                raise ShapeError(
                    f"{where}: a Dask DataFrame pool needs the pool file's id column (with "
                    "p_<label> or mean and var); add one, e.g. from the frame's index."
                )
            known = ("id", "cost", "mean", "var", "item")
            other = [c for c in columns if c not in known and not c.startswith("p_")]
            if other:
                raise ShapeError(
                    f"{where}: its columns {columns} mix the pool file's columns (id, "
                    f"p_<label> or mean and var, cost) with others ({other}); drop them."
                )
            arr: Any = pool
            n_rows = int(pool.map_partitions(len).compute().sum())
        elif isinstance(pool, da.Array) and pool.ndim == 2 and pool.shape[1] >= 1:
            k_cols = int(pool.shape[1])
            arr = pool.compute_chunk_sizes() if np.isnan(pool.shape[0]) else pool
            n_rows = int(arr.shape[0])
            given = np.arange(k_cols)
            if labels is not None:  # as Session.create checks them for an array
                given = np.asarray(labels)
                if given.ndim != 1 or given.shape[0] != k_cols:
                    raise ShapeError(
                        f"labels: expected {k_cols} labels (one per column of proba), got "
                        f"shape {given.shape}."
                    )
            columns = ["id", *(f"p_{j}" for j in range(k_cols))]  # the array's own columns
            ids = _canonical_ids(ids, n_rows)  # once: every pass slices it
        else:
            raise ShapeError(
                f"{where}: a Dask pool is a dask.dataframe.DataFrame with a pool file's "
                "columns or a dask.array.Array (m, K ≥ 1) of class probabilities; got a "
                f"{type(pool).__name__} of shape {getattr(pool, 'shape', '?')}."
            )
        if "item" in columns:
            raise io.NeedsWholeFile("a ranked pool")
        pcols = [c for c in columns if c.startswith("p_")]
        regression = [c for c in ("mean", "var") if c in columns]
        classes: NDArray[Any] | None = None
        if not isinstance(pool, dd.DataFrame):  # an array's classes as given, in its order,
            # of their own type (as Session.create keeps them; not read back from names)
            kind, pred_cols, classes = "categorical", pcols, given
        elif pcols and not regression:
            classes = io._class_labels(pcols)
            order = np.argsort(classes, kind="stable")  # the classes sorted, as Session.create
            kind, pred_cols, classes = "categorical", [pcols[i] for i in order], classes[order]
        elif len(regression) == 2 and not pcols:
            kind, pred_cols = "gaussian", ["mean", "var"]
        else:
            raise ShapeError(
                f"{where}: its columns {columns} hold neither class probabilities p_<label> "
                "nor a regressor's mean and var."
            )
        return cls(where, columns, "row", kind, pred_cols, classes, n_rows, arr, ids)

    def ids(self, frame: pd.DataFrame, integer: bool | None) -> NDArray[Any]:
        """A chunk's ids: an array's, as given (checked whole, as Session.create checks
        them); a data frame's, read as a pool file's."""
        if isinstance(self.ids_given, np.ndarray):
            return frame["id"].to_numpy(dtype=self.ids_given.dtype)
        return super().ids(frame, integer)

    def chunks(
        self, columns: list[str], rows: int | None = None, text: tuple[str, ...] = ()
    ) -> Iterator[pd.DataFrame]:
        """The pool's ``columns``, ``rows`` (default :data:`~activeeval.io.STREAM_ROWS`) rows
        at a time as a pool file's (whatever its partitions), indexed by row number from 1;
        a partition (or block) is computed at a time (``text``: unused, the cells' own)."""
        n = io.STREAM_ROWS if rows is None else rows
        start, held = 1, 0
        pending: list[pd.DataFrame] = []
        for part in self._parts(columns):
            pending.append(part)
            held += part.shape[0]
            while held >= n:
                both = pd.concat(pending) if len(pending) > 1 else pending[0]
                out, rest = both.iloc[:n], both.iloc[n:]
                out.index = pd.RangeIndex(start, start + n)
                yield out
                start += n
                held -= n
                pending = [rest] if held else []
        if held:
            last = pd.concat(pending) if len(pending) > 1 else pending[0]
            last.index = pd.RangeIndex(start, start + held)
            yield last

    def _parts(self, columns: list[str]) -> Iterator[pd.DataFrame]:
        """The pool's ``columns``, a partition (a DataFrame's) or block (an array's) at a
        time."""
        import dask
        import dask.dataframe as dd

        if isinstance(self.source, dd.DataFrame):
            for part in self.source.partitions:
                yield dask.compute(part[columns])[0].reset_index(drop=True)
            return
        at = 0
        for block in self.source.rechunk({1: -1}).to_delayed().ravel():
            values = np.asarray(dask.compute(block)[0], dtype=float)
            frame = pd.DataFrame(values, columns=self.columns[1:])  # the array's column order
            assert self.ids_given is not None  # an array's ids: given, or its positions
            frame["id"] = self.ids_given[at : at + values.shape[0]]
            at += values.shape[0]
            yield frame[columns]


def create_from_dask(target: str | os.PathLike[str], request: CreateRequest) -> Path:
    """The store :meth:`Session.create <activeeval.Session.create>` writes for Dask pools
    (``request.pools``: one, or a list), read a partition at a time as a pool file is by
    :func:`create_from_files`: the same store as from the pool in NumPy, byte for byte but
    for the session's id and creation time. A pool of at most one chunk is computed into
    memory and created as a NumPy pool; a larger one that the streamed read does not serve
    (a plan that needs the pool whole: comparisons' ``active_0`` and ``active_inf``) is
    refused rather than brought into memory."""
    pools = list(request.pools) if isinstance(request.pools, list | tuple) else [request.pools]
    out = Path(target)
    if request.costs is not None:
        raise ShapeError(
            "costs: a Dask pool gives its costs in a cost column of its DataFrame (as a pool "
            "file does); drop costs= and add the column."
        )
    names = [f"pools[{k}]" for k in range(len(pools))]
    streams = [DaskStream.of(p, k, request.ids, request.labels) for k, p in enumerate(pools)]
    check_same_ids(pools, names)
    m = streams[0].n_rows
    if any(s.n_rows != m for s in streams):
        raise ShapeError(
            f"pools: the Dask pools cover {[s.n_rows for s in streams]} instances; every model "
            "must be evaluated on the same pool."
        )
    decisions: list[_Decisions | None] = [None] * len(streams)
    if request.prediction is not None:
        from .planning import _decision_list

        given = _decision_list(request.prediction, len(streams))
        if m is not None and m > io.STREAM_ROWS:  # a smaller pool is planned in memory
            decisions = [
                None if f is None else _GivenDecisions.of(f, name, m, s.kind)
                for (f, name), s in zip(given, streams, strict=True)
            ]
    try:
        made = _create_from_streams(
            out, list(streams), _without_pools(request), request.names, decisions
        )
        if made is not None:
            return made
    except io.NeedsWholeFile:
        pass
    if m is not None and m > io.STREAM_ROWS:
        raise UnknownOptionError(
            f"pools: this plan needs the whole pool in memory (a ranked pool's q, or a "
            f"comparison's by method {request.method!r}), and a Dask pool of {m} instances is "
            "not brought into memory by activeeval; pass pool.compute() if it fits, or "
            "another measure or method."
        )
    from .planning import create_store

    return create_store(out, _in_memory(request, pools))


def _without_pools(r: CreateRequest) -> CreateRequest:
    return dataclasses.replace(r, pools=None, ids=None, prediction=None)


def _in_memory(r: CreateRequest, pools: list[Any]) -> CreateRequest:
    """The request with its Dask pools computed: arrays, or a DataFrame's predictions with
    its ids (and costs) taken apart."""
    import dask.dataframe as dd

    preds, ids, costs = [], r.ids, r.costs
    for k, p in enumerate(pools):
        got = p.compute()
        if isinstance(p, dd.DataFrame):
            if k == 0:  # every frame's ids are these, in this order (check_same_ids)
                ids = got["id"].to_numpy()
            if "cost" in got.columns:
                c = got["cost"].to_numpy(dtype=float)
                if costs is not None and not np.array_equal(c, costs):
                    raise ShapeError(
                        f"pools[{k}]: its cost column differs from an earlier pool's; an "
                        "instance's labeling cost is the same whichever model is evaluated."
                    )
                costs = c
            got = got.drop(columns=[c for c in ("id", "cost") if c in got.columns])
        preds.append(got)
    one = not isinstance(r.pools, list | tuple)
    return dataclasses.replace(r, pools=preds[0] if one else preds, ids=ids, costs=costs)


def _fill(
    conn: sqlite3.Connection,
    streams: list[io.PoolStream],
    integer: bool,
    m: int,
    r: CreateRequest,
    names_given: Sequence[str] | None,
    decisions: Sequence[_Decisions | None],
) -> None:
    base = streams[0]
    names = _model_names(names_given, len(streams))
    h = PoolHash(integer)
    costs = _pool_rows(conn, streams, integer, h)
    lam = None if costs is None else check_costs(costs, m)
    readers: list[RowReader] = []
    try:
        preds: list[Any] = []
        for j, s in enumerate(streams):
            width = len(s.prediction_columns)
            conn.execute(
                "INSERT INTO models (model, name, n_columns, predictions, decision) "
                "VALUES (?, ?, ?, x'', NULL)",
                (j, names[j], width),
            )
            where = StoredArray("models.predictions", j, (m, width))
            h.model(j, where.shape)
            order = _class_order(base, s)
            with ArrayWriter(conn, where) as w:
                at = 0
                for frame in s.chunks(s.prediction_columns):
                    arr = s.predictions(frame)
                    if order is not None:
                        arr = np.ascontiguousarray(arr[:, order])
                    w.write(at, arr)
                    h.rows(arr)
                    at += arr.shape[0]
            readers.append(RowReader(conn, where))
            preds.append(
                _StoredCategorical(readers[-1], m, base.labels)
                if base.labels is not None
                else _StoredGaussian(readers[-1], m)
            )
        h.tail(lam)  # the fingerprint's order: ids, predictions, costs, then decisions
        for j, source in enumerate(decisions):
            if source is not None:
                readers.append(_write_decisions(conn, j, m, source, preds[j], h))
                preds[j] = (
                    _StoredCategorical(preds[j]._reader, m, base.labels, readers[-1])
                    if base.labels is not None
                    else _StoredGaussian(preds[j]._reader, m, readers[-1])
                )
        fingerprint = h.digest()
        label_space = None if base.labels is None else _canonical_labels(base.labels, "labels")
        request = dataclasses.replace(r, names=names)
        meta, plan_row, q = _planned(request, preds, base.kind, label_space, lam, fingerprint)
    finally:
        for rd in readers:
            rd.close()
    _write_head(conn, meta, plan_row, q)
    write_summaries(conn, q)


def _write_decisions(
    conn: sqlite3.Connection, j: int, m: int, source: _Decisions, model: Any, h: PoolHash
) -> RowReader:
    """Model ``j``'s decisions into the store and the fingerprint, a chunk at a time; a
    reader of them."""
    where = StoredArray("models.decision", j, (m,))
    h.decision(j)
    model._reader.close()  # its blob is on the row the writer sets (reopened as read)
    with ArrayWriter(conn, where) as w:
        at = 0
        for f in source.chunks(model):
            w.write(at, f)
            h.rows(f)
            at += f.shape[0]
    assert at == m, (at, m)  # a column of the pool's file, or an array checked for m rows
    return RowReader(conn, where)


def _class_order(base: io.PoolStream, s: io.PoolStream) -> NDArray[np.intp] | None:
    """The columns of ``s`` in the order of ``base``'s classes (None: the same order)."""
    if base.labels is None or s is base:
        return None
    assert s.labels is not None
    order = io._class_columns(s.path, s.labels, base.path, base.labels)
    return None if np.array_equal(order, np.arange(order.shape[0])) else order


def _pool_rows(
    conn: sqlite3.Connection, streams: list[io.PoolStream], integer: bool, h: PoolHash
) -> NDArray[np.float64] | None:
    """The pool table's rows (position, id, cost) from every file's ids and costs side by
    side, the ids hashed; the costs (None: no file has a cost column). Files whose ids are
    not the same in the same order are read whole (:class:`~activeeval.io.NeedsWholeFile`)."""
    base = streams[0]
    iters = [s.chunks(["id", "cost"] if s.has_costs else ["id"]) for s in streams]
    costs: list[NDArray[np.float64]] | None = [] if any(s.has_costs for s in streams) else None
    at = 0
    while True:
        got = [next(it, None) for it in iters]
        if all(f is None for f in got):
            break
        frames = tuple(f for f in got if f is not None)
        if len(frames) < len(got) or len({f.shape[0] for f in frames}) > 1:
            raise io.NeedsWholeFile("files of different lengths")
        ids = base.ids(frames[0], integer)
        for s, f in zip(streams[1:], frames[1:], strict=True):
            if not np.array_equal(s.ids(f, integer), ids):
                raise io.NeedsWholeFile("ids in another order")
        c = _chunk_costs(streams, frames, ids)
        if costs is not None:
            assert c is not None
            costs.append(c)
        rows = zip(range(at, at + ids.shape[0]), ids.tolist(),
                   [None] * ids.shape[0] if c is None else c.tolist(), strict=True)  # fmt: skip
        try:
            conn.executemany("INSERT INTO pool (position, id, cost) VALUES (?, ?, ?)", rows)
        except sqlite3.IntegrityError:
            _seen_before(conn, base, frames[0], ids, at)
            raise
        h.ids(ids)
        at += ids.shape[0]
    return None if costs is None else np.concatenate(costs)


def _chunk_costs(
    streams: list[io.PoolStream], frames: tuple[pd.DataFrame, ...], ids: NDArray[Any]
) -> NDArray[np.float64] | None:
    """A chunk's costs from the files that give them, equal where several do."""
    out: NDArray[np.float64] | None = None
    for s, f in zip(streams, frames, strict=True):
        if s.has_costs:
            out = io._merged_costs(out, s.costs(f), s.path, streams[0].path, ids)
    return out


def _seen_before(
    conn: sqlite3.Connection, s: io.PoolStream, frame: pd.DataFrame, ids: NDArray[Any], at: int
) -> None:
    """Raise DuplicateIdError for the first id of this chunk that an earlier chunk holds,
    naming both rows as :func:`~activeeval.io.read_pool_file` does."""
    for i, v in enumerate(ids.tolist()):
        row = conn.execute("SELECT position FROM pool WHERE id = ?", (v,)).fetchone()
        if row is not None and row[0] < at:
            raise DuplicateIdError(
                f"{s.path}: {s.row_label} {frame.index[i]}, column 'id': id {v!r} already "
                f"appears on {s.row_label} {_row_of(s, int(row[0]))}; ids must be unique."
            )


def _row_of(s: io.PoolStream, position: int) -> Any:
    """The line (CSV) or row (Parquet) of the file's ``position``-th instance."""
    start = 0
    for frame in s.chunks(["id"]):
        if position < start + frame.shape[0]:
            return frame.index[position - start]
        start += frame.shape[0]
    return position + 1
