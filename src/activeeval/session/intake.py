"""Label intake: what :meth:`Session.record <activeeval.Session.record>` parses, validates,
deduplicates, audits and writes, and a ranked pool's grading sheet
(:meth:`Session.items_to_grade <activeeval.Session.items_to_grade>`).

Everything is validated before anything is written; labels are committed ``chunk_size`` rows
per transaction, so a killed process keeps every committed chunk and never half a chunk, and
re-running the same record completes it (identical relabels are no-ops).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from tqdm.auto import tqdm

from ..errors import (
    DuplicateIdError,
    LabelConflictError,
    LabelSpaceError,
    SessionMismatchError,
    ShapeError,
    UnknownIdError,
)
from .lookup import PoolIds, _py
from .schema import StoreFile, _now
from .stored import StoredPlan
from .summaries import cache_rows

__all__ = ["DEFAULT_CHUNK_SIZE", "RecordSummary", "items_to_grade", "record"]

DEFAULT_CHUNK_SIZE = 5000
"""Label rows committed per transaction by ``Session.record`` (its ``chunk_size``): a killed
process keeps every committed chunk, never half of one."""


@dataclass(frozen=True)
class RecordSummary:
    """What ``Session.record`` did with the labels it was given.

    Attributes
    ----------
    n_new : int
        Labels stored for the first time.
    n_unchanged : int
        Labels identical to the stored ones, skipped (recording a labels file again is safe).
    n_overwritten : int
        Stored labels replaced by different ones (``overwrite=True``).

    See Also
    --------
    activeeval.Session : ``Session.record`` returns it.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3], [0.4, 0.6]])
    >>> tmp = tempfile.TemporaryDirectory()
    >>> s = ae.Session.create(os.path.join(tmp.name, "c.db"), proba, "error_rate", budget=3)
    >>> ids = s.next_batch(2)
    >>> s.record({i: 0 for i in ids})
    RecordSummary(n_new=2, n_unchanged=0, n_overwritten=0)
    >>> s.record({ids[0]: 0, ids[1]: 1}, overwrite=True)
    RecordSummary(n_new=0, n_unchanged=1, n_overwritten=1)
    >>> s.close()
    >>> tmp.cleanup()
    """

    n_new: int
    n_unchanged: int
    n_overwritten: int


def _refuse_cells(
    ok: NDArray[np.bool_], source: str, row_label: str, cells: pd.Series, column: str, what: str
) -> None:
    """LabelSpaceError naming the first row whose cell in ``column`` fails ``ok`` (``cells``
    indexed by the rows' names for messages), its value, what it should be and how many rows
    fail; nothing when every row passes."""
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    raise LabelSpaceError(
        f"{source}: {row_label} {cells.index[i]}, column '{column}': "
        f"{_py(cells.iloc[i])!r} is not {what} ({int((~ok).sum())} such rows)."
    )


def _int_keys(cells: pd.Series) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Integer ids from cells holding ints, integral floats or integer text — exactly, also
    beyond 2^53 (integer text never goes through float) — and which cells held one."""
    out = np.full(len(cells), -1, dtype=np.int64)
    ok = np.zeros(len(cells), dtype=bool)
    if cells.dtype.kind in "iu" and not cells.isna().any():
        return cells.to_numpy(dtype=np.int64), np.ones(len(cells), dtype=bool)
    if cells.dtype.kind == "b":
        return out, ok
    text = cells.astype(str).str.strip()
    digits = text.str.fullmatch(r"[+-]?\d+").fillna(False).to_numpy(dtype=bool)
    if digits.any():
        exact = pd.to_numeric(text[digits], errors="coerce").to_numpy()
        if exact.dtype.kind == "i":  # int64 held every one of them
            out[digits], ok[digits] = exact, True
        else:  # some beyond int64: those are no item of an int64 pool; the others exactly
            for i in np.flatnonzero(digits).tolist():
                x = int(text.iloc[i])
                if -(2**63) <= x < 2**63:
                    out[i], ok[i] = x, True
    rest = ~digits
    if rest.any():  # integral numbers written as floats ("2.0", Parquet float columns)
        num = pd.to_numeric(text[rest], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            fine = np.isfinite(num) & (np.floor(num) == num) & (np.abs(num) < 2.0**53)
        where = np.flatnonzero(rest)[fine]
        out[where], ok[where] = num[fine].astype(np.int64), True
    return out, ok


def items_to_grade(stored: StoredPlan, ids: Sequence[Any]) -> pd.DataFrame:
    """A ranked pool's grading sheet for the queries ``ids`` (see :meth:`Session.items_to_grade
    <activeeval.Session.items_to_grade>`)."""
    if not stored.plan.ranking:
        raise ShapeError(
            "items_to_grade: this session's pool is not ranked; label the ids themselves."
        )
    keys, offsets = stored.grade_keys, stored.grade_offsets
    assert keys is not None and offsets is not None
    pos = _positions(stored, pd.Series(list(ids), dtype=object), "ids", "entry")
    lens = offsets[pos + 1] - offsets[pos]
    ends = np.cumsum(lens)
    rows = np.repeat(offsets[pos], lens) + np.arange(int(ends[-1]) if lens.size else 0)
    rows -= np.repeat(ends - lens, lens)
    return pd.DataFrame(
        {
            "id": pd.Series(
                [_py(v) for v in stored.ids[np.repeat(pos, lens)].tolist()], dtype=object
            ),
            "item": pd.Series([_py(v) for v in keys[rows].tolist()], dtype=object),
            "grade": pd.Series([None] * rows.shape[0], dtype=object),
        }
    )


def _positions(
    stored: StoredPlan, ids: pd.Series, source: str, row_label: str, column: str = "id"
) -> NDArray[np.intp]:
    """Pool position of every id (vectorised); unknown ids are refused naming the row."""
    ok = np.ones(len(ids), dtype=bool)
    keys: Any
    if stored.ids_integer:
        num = ids if ids.dtype.kind in "iu" else pd.to_numeric(ids, errors="coerce")
        if num.dtype.kind in "iu":
            keys = num.to_numpy(dtype=np.int64)
        else:  # some ids are not integers
            vals = num.to_numpy(dtype=float, na_value=np.nan)
            ok = np.isfinite(vals)
            vals = np.where(ok, vals, -1.0)
            ok &= np.floor(vals) == vals
            keys = vals.astype(np.int64)
    else:
        keys = ids.astype(str).str.strip().to_numpy(dtype=object)
    pos = stored.positions_of([_py(k) if good else None for k, good in zip(keys, ok, strict=True)])
    bad = (~ok) | (pos < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        sample = ", ".join(repr(_py(v)) for v in stored.first_ids(3))
        raise UnknownIdError(
            f"{source}: {row_label} {ids.index[i]}, column '{column}': id "
            f"{_py(ids.iloc[i])!r} is not in this session's pool ({stored.plan.pool_size} ids, "
            f"e.g. {sample}; {int(bad.sum())} unknown ids in all). Is it a labels file for "
            "another session?"
        )
    return pos


def _label_values(stored: StoredPlan, labels: pd.Series, source: str, row_label: str) -> list[Any]:
    """Labels in the session's label type; outside the label space they are refused."""
    space = stored.plan.label_space
    raw = labels  # numbers parse with surrounding blanks; string labels must match exactly
    missing = raw.isna().to_numpy() | (raw == "").to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise LabelSpaceError(
            f"{source}: {row_label} {labels.index[i]}, column 'label': the label is empty; "
            "every row needs a label."
        )
    if space is None:  # regression: finite numbers
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(num)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise LabelSpaceError(
                f"{source}: {row_label} {labels.index[i]}, column 'label': "
                f"{_py(labels.iloc[i])!r} is not a finite number (a regression label)."
            )
        return [float(v) for v in num.tolist()]
    if isinstance(space[0], int):
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        finite = np.isfinite(num)
        ints = np.where(finite, num, 0.0)
        ok = finite & (np.floor(ints) == ints)
        vals: Any = ints.astype(np.int64)
    else:
        vals = raw.astype(str).to_numpy(dtype=object)
        ok = np.ones(len(raw), dtype=bool)
    ok &= pd.Index(list(space)).get_indexer(vals) >= 0
    _refuse_cells(ok, source, row_label, labels, "label", f"in the label space {list(space)}")
    return [_py(v) for v in vals.tolist()]


def _label_input(stored: StoredPlan, labels: Any, source: str) -> pd.DataFrame:
    if stored.plan.ranking:
        return _grade_input(stored, labels, source)
    if isinstance(labels, pd.DataFrame):
        for col in ("id", "label"):
            if col not in labels.columns:
                raise ShapeError(
                    f"{source}: no column '{col}' (columns: "
                    f"{', '.join(map(str, labels.columns))}); a labels table has columns "
                    "id,label."
                )
        optional = ("session_id", "annotator", "n_annotations", "n_agreeing")
        return labels[["id", "label"] + [c for c in optional if c in labels.columns]]
    if isinstance(labels, Mapping):
        return pd.DataFrame(
            {
                "id": pd.Series(list(labels.keys()), dtype=object),
                "label": pd.Series(list(labels.values()), dtype=object),
            }
        )
    raise ShapeError(
        f"{source}: expected a mapping id → label or a DataFrame with columns id,label; got "
        f"{type(labels).__name__}."
    )


def _grade_input(stored: StoredPlan, labels: Any, source: str) -> pd.DataFrame:
    """A ranked pool's labels as rows id,item,grade (a mapping id → the grades of the
    query's items in their order is expanded to such rows)."""
    assert stored.grade_keys is not None and stored.grade_offsets is not None
    if isinstance(labels, pd.DataFrame):
        for col in ("id", "item", "grade"):
            if col not in labels.columns:
                raise ShapeError(
                    f"{source}: no column '{col}' (columns: "
                    f"{', '.join(map(str, labels.columns))}); a ranked pool's labels table "
                    "has columns id,item,grade (one row per item of each labeled query)."
                )
        extra = ["session_id"] if "session_id" in labels.columns else []
        return labels[["id", "item", "grade", *extra]]
    if not isinstance(labels, Mapping):
        raise ShapeError(
            f"{source}: expected a mapping query id → grades or a DataFrame with columns "
            f"id,item,grade; got {type(labels).__name__}."
        )
    ids = pd.Series(list(labels.keys()), dtype=object)
    pos = _positions(stored, ids, source, "entry") if len(ids) else np.empty(0, np.intp)
    rows_id, rows_item, rows_grade = [], [], []
    for i, (key, grades) in enumerate(labels.items()):
        lo, hi = int(stored.grade_offsets[pos[i]]), int(stored.grade_offsets[pos[i] + 1])
        g = list(np.ravel(np.asarray(grades, dtype=object)))
        if len(g) != hi - lo:
            raise ShapeError(
                f"{source}: query {key!r} has {hi - lo} items to grade, got {len(g)} grades; "
                "give one grade per item, in the ranker's order (a comparison: the order "
                "of ranking_union)."
            )
        rows_id += [key] * len(g)
        rows_item += [_py(v) for v in stored.grade_keys[lo:hi].tolist()]
        rows_grade += g
    frame = pd.DataFrame(
        {
            "id": pd.Series(rows_id, dtype=object),
            "item": pd.Series(rows_item, dtype=object),
            "grade": pd.Series(rows_grade, dtype=object),
        }
    )
    frame.index = pd.Index([repr(_py(k)) for k in rows_id], dtype=object)  # for messages
    return frame


def _grade_values(
    stored: StoredPlan, frame: pd.DataFrame, source: str, row_label: str
) -> tuple[NDArray[np.intp], list[str]]:
    """Rows id,item,grade → one label per query: the JSON list of its items' grades in
    the stored order. Every item of a query must be graded; an item given twice with
    different grades, an unknown item or a grade outside 0..G−1 is refused."""
    keys, offsets = stored.grade_keys, stored.grade_offsets
    assert keys is not None and offsets is not None
    pos = _positions(stored, frame["id"], source, row_label)
    n_grades = len(stored.plan.label_space or ())
    cells = frame["grade"]
    g = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(g) & (np.floor(g) == g) & (g >= 0) & (g <= n_grades - 1)
    _refuse_cells(ok, source, row_label, cells, "grade", f"a grade 0, ..., {n_grades - 1}")
    item_cells = frame["item"]
    ikeys: Any
    if keys.dtype.kind in "iu":
        ikeys, fine = _int_keys(item_cells)
    else:
        fine = np.ones(len(frame), dtype=bool)
        ikeys = item_cells.astype(str).str.strip().to_numpy(dtype=object)
    queries = np.unique(pos)
    lens = offsets[queries + 1] - offsets[queries]
    ends = np.cumsum(lens)
    slot = np.arange(int(ends[-1]) if lens.size else 0) - np.repeat(ends - lens, lens)
    rows = np.repeat(offsets[queries], lens) + slot
    cand = keys[rows] if keys.dtype.kind in "iu" else keys[rows].astype(str).astype(object)
    index = pd.MultiIndex.from_arrays([np.repeat(queries, lens), cand])
    loc = np.asarray(index.get_indexer(pd.MultiIndex.from_arrays([pos, ikeys])), np.intp)
    bad = (loc < 0) | ~fine
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        q0 = int(pos[i])
        shown = ", ".join(
            repr(_py(v)) for v in keys[offsets[q0] : min(offsets[q0] + 3, offsets[q0 + 1])]
        )
        raise UnknownIdError(
            f"{source}: {row_label} {frame.index[i]}, column 'item': "
            f"{_py(item_cells.iloc[i])!r} is not an item of query "
            f"{_py(stored.ids[q0])!r} (its items: {shown or 'none'}"
            f"{', ...' if offsets[q0 + 1] - offsets[q0] > 3 else ''})."
        )
    order = np.argsort(loc, kind="stable")
    same = loc[order][1:] == loc[order][:-1]
    clash = same & (g[order][1:] != g[order][:-1])
    if clash.any():
        j = int(np.flatnonzero(clash)[0])
        a, b = int(order[j]), int(order[j + 1])
        raise DuplicateIdError(
            f"{source}: item {_py(item_cells.iloc[a])!r} of query {_py(stored.ids[pos[a]])!r} "
            f"appears on {row_label}s {frame.index[a]} and {frame.index[b]} with different "
            f"grades ({_py(cells.iloc[a])!r}, {_py(cells.iloc[b])!r}); keep one row per "
            "item."
        )
    grades = np.full(slot.shape[0], -1, dtype=np.int64)
    grades[loc] = g.astype(np.int64)
    missing = grades < 0
    if missing.any():
        j = int(np.flatnonzero(missing)[0])
        q0 = int(np.repeat(queries, lens)[j])
        n_miss = int(missing[np.repeat(queries, lens) == q0].sum())
        raise ShapeError(
            f"{source}: query {_py(stored.ids[q0])!r} lacks the grade of item "
            f"{_py(cand[j])!r} ({n_miss} of its {offsets[q0 + 1] - offsets[q0]} items "
            "ungraded); a query is labeled with the grades of all its items, one row "
            "id,item,grade each."
        )
    per_query = np.split(grades, ends[:-1])
    return queries.astype(np.intp), [json.dumps(x.tolist()) for x in per_query]


def record(
    store: StoreFile,
    stored: StoredPlan,
    labels: Mapping[Any, Any] | pd.DataFrame,
    annotator: str | None,
    overwrite: bool,
    *,
    chunk_size: int,
    progress: bool | None,
    source: str,
    row_label: str,
) -> RecordSummary:
    """Validate ``labels`` completely, then write them ``chunk_size`` rows per transaction (see
    :meth:`Session.record <activeeval.Session.record>`, whose arguments these are)."""
    if int(chunk_size) < 1:
        raise ShapeError(f"chunk_size: must be a positive integer, got {chunk_size!r}.")
    if stored.plan.ranking and isinstance(labels, Mapping):
        row_label = "query"  # the expanded rows are named by their query id
    frame = _label_input(stored, labels, source)
    _check_session_ids(stored, frame, source, row_label)
    if frame.shape[0] == 0:
        return RecordSummary(0, 0, 0)
    if stored.plan.ranking:  # a query's grades come from one annotator
        pos, values = _grade_values(stored, frame, source, row_label)
        who: dict[int, str | None] = dict.fromkeys(pos.tolist(), _trimmed(annotator))
        agree: dict[int, tuple[int, int]] = {}
    else:
        pos = _positions(stored, frame["id"], source, row_label)
        values = _label_values(stored, frame["label"], source, row_label)
        frame, pos, values = _dedupe(stored, frame, pos, values, source, row_label)
        who, agree = _row_annotators(frame, pos, annotator, source, row_label)
    todo = _to_write(store, stored, pos, values, who, overwrite, source)
    n_unchanged = len(values) - len(todo)
    n_new = n_over = 0
    step = int(chunk_size)
    groups: dict[str | None, list[tuple[int, Any]]] = {}
    for p, v in todo:  # one annotator per written chunk: rows of a labeling tool's export differ
        groups.setdefault(who[p], []).append((p, v))
    with tqdm(
        total=len(todo),
        unit="labels",
        disable=None if progress is None else not progress,
        leave=False,
    ) as bar:
        for name, rows in groups.items():
            for start in range(0, len(rows), step):
                chunk = rows[start : start + step]

                def write(
                    c: sqlite3.Connection, ch: list[tuple[int, Any]] = chunk, by: Any = name
                ) -> Any:
                    return _write_chunk(stored, c, ch, by, overwrite, source, agree)

                a, b = store.write(write)
                n_new += a
                n_over += b
                bar.update(len(chunk))
    written = {p for p, _ in todo}
    settled = [(p, *agree[p]) for p in pos.tolist() if p in agree and p not in written]
    if settled:  # an unchanged label now settled from other annotations: how they agreed
        store.write(lambda c: _write_agreement(c, settled))
    return RecordSummary(n_new, n_unchanged, n_over)


def _write_agreement(c: sqlite3.Connection, rows: list[tuple[int, int, int]]) -> None:
    c.executemany(
        "INSERT OR REPLACE INTO agreement (position, n_annotations, n_agreeing) VALUES (?, ?, ?)",
        rows,
    )


def _trimmed(name: Any) -> str | None:
    """An annotator's name without surrounding blanks (as hand-outs name holders); a blank or
    missing one is None."""
    if name is None or (not isinstance(name, str) and pd.isna(name)):
        return None
    return str(name).strip() or None


def _row_annotators(
    frame: pd.DataFrame, pos: NDArray[np.intp], annotator: str | None, source: str,
    row_label: str,
) -> tuple[dict[int, str | None], dict[int, tuple[int, int]]]:  # fmt: skip
    """Who labeled each position (a labels table's ``annotator`` column, else ``annotator``)
    and, where the table has ``n_annotations`` and ``n_agreeing``, how many annotations the
    label was settled from and how many agreed with it."""
    keys = pos.tolist()
    annotator = _trimmed(annotator)
    if "annotator" in frame.columns:
        names = [_trimmed(v) for v in frame["annotator"]]
        who = {p: (n if n is not None else annotator) for p, n in zip(keys, names, strict=True)}
    else:
        who = dict.fromkeys(keys, annotator)
    agree: dict[int, tuple[int, int]] = {}
    if {"n_annotations", "n_agreeing"} <= set(frame.columns):
        counts = frame[["n_annotations", "n_agreeing"]].apply(pd.to_numeric, errors="coerce")
        n, k = (counts[c].to_numpy(dtype=float, na_value=np.nan) for c in counts.columns)
        ok = np.isfinite(n) & np.isfinite(k) & (k >= 1) & (n >= k) & (n == np.floor(n))
        ok &= k == np.floor(k)
        _refuse_cells(ok, source, row_label, frame["n_agreeing"], "n_agreeing",
                      "a whole number of agreeing annotations, 1 to n_annotations")  # fmt: skip
        agree = {p: (int(a), int(b)) for p, a, b in zip(keys, n, k, strict=True)}
    return who, agree


def _check_session_ids(
    stored: StoredPlan, frame: pd.DataFrame, source: str, row_label: str
) -> None:
    """A ``session_id`` column must name this session (or be empty) on every row."""
    if "session_id" in frame.columns:
        sid = frame["session_id"].map(lambda v: str(v).strip() if pd.notna(v) else "")
        other = (sid != "") & (sid != stored.plan.session_id)
        if other.any():
            i = int(np.flatnonzero(other.to_numpy())[0])
            raise SessionMismatchError(
                f"{source}: {row_label} {frame.index[i]}, column 'session_id': "
                f"{sid.iloc[i]!r} is another session; this store is session "
                f"{stored.plan.session_id}."
            )


def _to_write(
    store: StoreFile,
    stored: StoredPlan,
    pos: NDArray[np.intp],
    values: list[Any],
    who: Mapping[int, str | None],
    overwrite: bool,
    source: str,
) -> list[tuple[int, Any]]:
    """The (position, label) pairs to write: every id must have been handed out; a label
    that differs from the recorded one is refused (and the attempt audited) unless
    ``overwrite``; identical relabels are dropped."""
    recorded, handed = store.read(
        lambda c: (
            {
                p: (lab, ann)
                for p, lab, ann in c.execute("SELECT position, label, annotator FROM labels")
            },
            np.array([r[0] for r in c.execute("SELECT position FROM handouts")], np.intp),
        )
    )
    was_handed = np.isin(pos, handed)
    if not was_handed.all():
        i = int(np.flatnonzero(~was_handed)[0])
        raise UnknownIdError(
            f"{source}: id {_py(stored.ids_at([pos[i]])[0])!r} was never handed out for "
            f"labeling ({int((~was_handed).sum())} such ids); record labels only for ids from "
            "next_batch (activeeval session next), so the draws stay those of the plan."
        )
    conflicts = [
        (p, v)
        for p, v in zip(pos.tolist(), values, strict=True)
        if p in recorded and recorded[p][0] != v
    ]
    if conflicts and not overwrite:
        _audit_refused(store, conflicts, recorded, who)
        p0, v0 = conflicts[0]
        raise LabelConflictError(
            f"{source}: id {_py(stored.ids_at([p0])[0])!r} is already labeled {recorded[p0][0]!r}"
            f"{' by ' + recorded[p0][1] if recorded[p0][1] else ''}, not {v0!r} "
            f"({len(conflicts)} conflicting labels in all; nothing was recorded). Pass "
            "overwrite=True (--overwrite) to replace them; the attempt was audited."
        )
    return [
        (p, v)
        for p, v in zip(pos.tolist(), values, strict=True)
        if p not in recorded or recorded[p][0] != v
    ]


def _dedupe(
    stored: StoredPlan,
    frame: pd.DataFrame,
    pos: NDArray[np.intp],
    values: list[Any],
    source: str,
    row_label: str,
) -> tuple[pd.DataFrame, NDArray[np.intp], list[Any]]:
    """One row per id (the first); an id given twice with different labels is refused."""
    dup = pd.Index(pos).duplicated()
    if not dup.any():
        return frame, pos, values
    first: dict[int, int] = {}
    for i, p in enumerate(pos.tolist()):
        j = first.setdefault(p, i)
        if values[j] != values[i]:
            raise DuplicateIdError(
                f"{source}: id {_py(stored.ids_at([p])[0])!r} appears on {row_label}s "
                f"{frame.index[j]} and {frame.index[i]} with different labels "
                f"({values[j]!r}, {values[i]!r}); keep one row per id."
            )
    keep = ~dup
    return frame[keep], pos[keep], [v for v, k in zip(values, keep, strict=True) if k]


def _audit_refused(
    store: StoreFile,
    conflicts: list[tuple[int, Any]],
    recorded: Mapping[int, Any],
    who: Mapping[int, str | None],
) -> None:
    now = _now()
    rows = [(now, "refused", p, recorded[p][0], v, recorded[p][1], who[p]) for p, v in conflicts]
    store.write(
        lambda c: c.executemany(
            "INSERT INTO audit (at, action, position, old_label, new_label, old_annotator, "
            "annotator) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    )


def _write_chunk(
    stored: StoredPlan,
    c: sqlite3.Connection,
    chunk: list[tuple[int, Any]],
    annotator: str | None,
    overwrite: bool,
    source: str,
    agree: Mapping[int, tuple[int, int]],
) -> tuple[int, int]:
    positions = json.dumps([p for p, _ in chunk])
    current = {
        p: (lab, ann)
        for p, lab, ann in c.execute(
            "SELECT position, label, annotator FROM labels WHERE position IN "
            "(SELECT value FROM json_each(?))",
            (positions,),
        )
    }
    now = _now()
    new = [(p, v, annotator, now) for p, v in chunk if p not in current]
    changed = [(p, v) for p, v in chunk if p in current and current[p][0] != v]
    if changed and not overwrite:  # written by another process since validation
        p0, v0 = changed[0]
        (id0,) = PoolIds.ids_at(c, [p0])
        raise LabelConflictError(
            f"{source}: id {_py(id0)!r} was labeled {current[p0][0]!r} by another "
            f"process while recording, not {v0!r}; earlier chunks were recorded. Pass "
            "overwrite=True (--overwrite) to replace it."
        )
    c.executemany(
        "INSERT INTO labels (position, label, annotator, recorded_at) VALUES (?, ?, ?, ?)",
        new,
    )
    cache_rows(c, [p for p, *_ in new])  # the rows a summarized estimate reads, in one place
    if changed:
        c.executemany(
            "INSERT INTO audit (at, action, position, old_label, new_label, old_annotator, "
            "annotator) VALUES (?, 'overwrite', ?, ?, ?, ?, ?)",
            [(now, p, current[p][0], v, current[p][1], annotator) for p, v in changed],
        )
        c.executemany(
            "UPDATE labels SET label = ?, annotator = ?, recorded_at = ? WHERE position = ?",
            [(v, annotator, now, p) for p, v in changed],
        )
    # How the labels written were settled: from several annotations (their agreement), or
    # from one source (a relabel replaces an earlier overlap's record)
    _write_agreement(c, [(p, *agree[p]) for p, _ in chunk if p in agree])
    c.executemany(
        "DELETE FROM agreement WHERE position = ?", [(p,) for p, _ in chunk if p not in agree]
    )
    return len(new), len(changed)
