"""The ``activeeval`` command: ``demo``, and ``session`` for labeling campaigns in a file.

File formats (part of the contract):

* **Pool file**, CSV (UTF-8) or Parquet, one per model, all with the same ids: a column ``id``;
  a classifier's class probabilities in columns ``p_<label>`` (the labels are read as integers
  if every one is an integer written without sign or leading zeros, else as strings; the
  same rule for ids and item ids, so that ``007`` is handed out and exported as written), or a
  regressor's predictive ``mean`` and ``var``; optionally a labeling ``cost`` per instance
  (strictly positive).
* **Ranked pool file** (a ranking function, thesis Ch. 6; measures ``dcg``, ``err``): one row
  per item of each query's ranked list, in the ranker's order (best first): the query ``id``,
  the ``item`` id (unique within its query; the same item id in two rankers' files marks the
  same document, which is then labeled once), the item's grade probabilities ``p_0`` …
  ``p_<G−1>``, and optionally a labeling ``cost`` per item (a query costs the sum).
* **Labels file**, CSV or Parquet: columns ``id,label``; optionally ``session_id``, which must
  then be the session's own. Other columns are ignored, so an ``export`` can be recorded again.
  For a ranked pool: columns ``id,item,grade``, one row for every item of each labeled query
  (for a comparison, every item either ranker lists).

Every input error exits with status 2 and a message on stderr that names the file, the line and
the column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import sys
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import MAX_STORED_SEED, PROBABILITY_ROW_TOL, check_seed
from .errors import (
    ActiveEvalError,
    ActiveEvalWarning,
    DuplicateIdError,
    EmptyPoolError,
    InputFileError,
    InvalidCostsError,
    InvalidVarianceError,
    LabelSpaceError,
    NonFiniteError,
    OutputFileError,
    ProbabilityRowsError,
    UnknownIdError,
    UnknownOptionError,
)
from .predictive import Categorical, Gaussian, Predictive
from .ranking import GradedRelevance

__all__ = ["PoolFile", "main", "read_labels_file", "read_pool_file"]

# An integer as Python/int64 writes it back: no '+', no '-0', no leading zeros.
# Ids and labels are read as integers only if every one is such text, so '007' stays the
# string '007' (handed out and exported as written) and is not the same id as '7'.
_INT_LIKE = r"^(?:0|-?[1-9]\d*)$"


def _scalar(x: Any) -> Any:
    """A numpy scalar as the plain Python value (for messages)."""
    return x.item() if isinstance(x, np.generic) else x


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="activeeval")
def main() -> None:
    """Label-efficient evaluation and comparison of predictive models."""


@main.command()
@click.option("--budget", default=100, show_default=True, help="Labels to buy.")
@click.option("--seed", default=0, show_default=True, help="Random seed of the draws.")
@click.option(
    "--reps",
    default=300,
    show_default=True,
    help="Repetitions used to measure the label savings.",
)
def demo(budget: int, seed: int, reps: int) -> None:
    """Active vs passive evaluation of a spam filter on a shifted pool (real bundled data)."""
    from .demo import run_demo

    try:
        check_seed(seed, "--seed", maximum=MAX_STORED_SEED)  # it seeds a session store too
        run_demo(budget=budget, seed=seed, reps=reps, echo=click.echo)
    except ActiveEvalError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


# --------------------------------------------------------------------------- file formats
def _read_table(path: Path) -> tuple[pd.DataFrame, str]:
    """A CSV or Parquet file as a DataFrame indexed by line number (CSV, header = line 1) or
    row number (Parquet); the second value says which ("line" or "row").

    CSV cells stay strings, so that every parse error can name its line and column; a row with
    more or fewer fields than the header (a truncated or ragged file) is refused.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror}).") from exc
    if raw[:4] == b"PAR1":
        try:
            frame = pd.read_parquet(io.BytesIO(raw))
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise InputFileError(f"{path}: is not a readable Parquet file ({exc}).") from exc
        frame.index = pd.RangeIndex(1, frame.shape[0] + 1)
        frame.columns = [str(c) for c in frame.columns]
        return frame, "row"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputFileError(
            f"{path}: line {line}, character {column}: byte 0x{raw[exc.start]:02x} is not valid "
            "UTF-8; save the file as UTF-8 (e.g. in a spreadsheet: CSV UTF-8)."
        ) from exc
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise InputFileError(f"{path}: is empty; expected a header line first.")
        header = [h.strip() for h in header]
        width = len(header)
        rows: list[list[str]] = []
        lines: list[int] = []
        for row in reader:
            if not row:
                continue  # blank line
            if len(row) != width:
                raise InputFileError(
                    f"{path}: line {reader.line_num} has {len(row)} field(s) but the header has "
                    f"{width} ({','.join(header)}); the file is truncated or a row is ragged."
                )
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InputFileError(
            f"{path}: line {reader.line_num}: {exc}; the file may be truncated (an unclosed "
            "quote) or not CSV."
        ) from exc
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputFileError(f"{path}: column {dup[0]!r} appears more than once in the header.")
    frame = pd.DataFrame(rows, columns=header, index=pd.Index(lines, name="line"), dtype=object)
    return frame, "line"


def _require(frame: pd.DataFrame, path: Path, columns: tuple[str, ...], what: str) -> None:
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(frame.columns) or "none"
            raise InputFileError(f"{path}: no column '{col}' (columns: {have}); {what}")


def _cells(series: pd.Series, path: Path, row_label: str, column: str) -> pd.Series:
    """Stripped cells; an empty one is refused."""
    out = series.map(lambda v: v.strip() if isinstance(v, str) else v)
    empty = out.isna().to_numpy() | (out == "").to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputFileError(
            f"{path}: {row_label} {series.index[i]}, column '{column}' is empty "
            f"({int(empty.sum())} empty cells in that column)."
        )
    return out


def _numbers(series: pd.Series, path: Path, row_label: str, column: str) -> NDArray[np.float64]:
    """A numeric column: unparsable and non-finite cells are refused naming line and column."""
    cells = _cells(series, path, row_label, column)
    num = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float, na_value=np.nan, copy=True)
    # Text read as Python reads it (correctly rounded): pandas before 3.1 can be 1 ulp off.
    text = cells.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool) & np.isfinite(num)
    num[text] = cells.to_numpy(dtype=object)[text].astype(float)
    bad = ~np.isfinite(num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = cells.iloc[i]
        as_float = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
        where = f"{path}: {row_label} {series.index[i]}, column '{column}'"
        if pd.isna(as_float) and str(value).strip().lower() not in ("nan", "-nan", "+nan"):
            raise InputFileError(f"{where}: {value!r} is not a number.")
        raise NonFiniteError(
            f"{where}: value {value!r} is not finite; all values must be finite numbers "
            "(drop or impute those instances first)."
        )
    return num


def _keys(series: pd.Series, path: Path, row_label: str, column: str) -> NDArray[Any]:
    """A key column as int64 when every cell is an integer that int64 holds (integer text,
    or integral numbers in a Parquet column), else as strings. Empty cells are refused."""
    if series.dtype.kind in "iu" and not series.isna().any():
        return series.to_numpy(dtype=np.int64)
    cells = _cells(series, path, row_label, column)
    if series.dtype.kind == "f":
        num = cells.to_numpy(dtype=float)
        if np.all(np.isfinite(num) & (np.floor(num) == num) & (np.abs(num) < 2.0**53)):
            return num.astype(np.int64)
    text = cells.map(str)
    if text.str.match(_INT_LIKE).all():
        try:
            return text.astype(np.int64).to_numpy()
        except (OverflowError, ValueError):  # beyond int64: keep them as strings
            pass
    return text.to_numpy(dtype=object)


def _ids(series: pd.Series, path: Path, row_label: str) -> NDArray[Any]:
    """Ids as int64 when every one looks like an integer, else as strings; unique."""
    ids = _keys(series, path, row_label, "id")
    dup = pd.Index(ids).duplicated(keep=False)
    if dup.any():
        where = np.flatnonzero(dup)
        first = ids[where[0]]
        again = where[1:][ids[where[1:]] == first][0]
        raise DuplicateIdError(
            f"{path}: {row_label} {series.index[again]}, column 'id': id {_scalar(first)!r} "
            f"already appears on {row_label} {series.index[where[0]]}; ids must be unique."
        )
    return ids


def read_features_file(path: str | Path, pool_ids: NDArray[Any]) -> NDArray[np.float64]:
    """A features file (CSV or Parquet: an ``id`` column and one numeric column per feature)
    as an (m, d) array in the order of ``pool_ids``, every pool id on exactly one row; ids
    read as in a pool file. Unknown, missing or repeated ids and cells that are not finite
    numbers are refused naming the line (row) and column."""
    p = Path(path)
    frame, row_label = _read_table(p)
    what = "a features file has an 'id' column and one numeric column per feature."
    _require(frame, p, ("id",), what)
    names = [c for c in frame.columns if c != "id"]
    if not names:
        raise InputFileError(f"{p}: no feature column besides 'id'; {what}")
    ids = _ids(frame["id"], p, row_label)
    pos = pd.Index(pool_ids).get_indexer(ids)
    if (pos < 0).any():
        i = int(np.flatnonzero(pos < 0)[0])
        raise InputFileError(
            f"{p}: {row_label} {frame.index[i]}, column 'id': id {_scalar(ids[i])!r} is not in "
            f"this session's pool ({int((pos < 0).sum())} unknown ids in all)."
        )
    m = pool_ids.shape[0]
    if pos.shape[0] < m:
        have = np.zeros(m, dtype=bool)
        have[pos] = True
        first = _scalar(pool_ids[np.flatnonzero(~have)[0]])
        raise InputFileError(
            f"{p}: no row for {m - pos.shape[0]} of the pool's {m} ids (e.g. {first!r}); the "
            "features file needs one row per pool instance."
        )
    x = np.empty((m, len(names)))
    x[pos] = np.column_stack([_numbers(frame[c], p, row_label, c) for c in names])
    return x


def _class_labels(columns: list[str]) -> NDArray[Any]:
    names = [c[2:] for c in columns]
    if all(pd.Series(names).str.match(_INT_LIKE)):
        return np.array([int(n) for n in names], dtype=np.int64)
    return np.array(names, dtype=object).astype(str)


@dataclass(frozen=True)
class PoolFile:
    """One model's pool file, parsed and validated.

    Attributes
    ----------
    path : Path
    ids : ndarray
        Pool ids, int64 when every id looks like an integer, else strings.
    predictive : Categorical, Gaussian or GradedRelevance
        A ranked pool file (with an ``item`` column) gives a ``GradedRelevance`` whose queries
        are ``ids`` in order of first appearance, each query's items in the file's order.
    costs : ndarray or None
        The ``cost`` column, if any.
    rows : ndarray
        Line (CSV) or row (Parquet) number of each instance, for messages.
    row_label : str
        ``"line"`` or ``"row"``.
    item_text : ndarray or None
        A ranked pool's item ids as written (in the ``GradedRelevance``'s order), so that
        several files can agree on one id type.
    """

    path: Path
    ids: NDArray[Any]
    predictive: Predictive | GradedRelevance
    costs: NDArray[np.float64] | None
    rows: NDArray[Any]
    row_label: str
    item_text: NDArray[Any] | None = None

    def __repr__(self) -> str:
        costs = "none" if self.costs is None else "per instance"
        return (
            f"PoolFile(path={str(self.path)!r}, ids={self.ids.shape[0]}, "
            f"predictive={type(self.predictive).__name__}, costs={costs})"
        )


def read_pool_file(path: str | Path, ranked: bool | None = None) -> PoolFile:
    """Read a pool file (see the module docstring for the format).

    ``ranked`` says which kind of file is expected: a ranked pool (``True``, what
    ``--measure dcg|err`` reads) or a classifier's or regressor's pool (``False``; an ``item``
    column is then one more ignored column). ``None`` decides by the ``item`` column.

    Raises
    ------
    InputFileError, DuplicateIdError, EmptyPoolError, ProbabilityRowsError, NonFiniteError,
    InvalidCostsError, InvalidVarianceError
        Each naming the file, line and column.
    """
    p = Path(path)
    frame, row_label = _read_table(p)
    what = "a pool file needs an id column and p_<label> (or mean,var) columns."
    _require(frame, p, ("id",), what)
    if frame.shape[0] == 0:
        raise EmptyPoolError(f"{p}: has no rows; a pool needs at least one instance.")
    if ranked is None:
        ranked = "item" in frame.columns
    if ranked:
        _require(frame, p, ("item",), "a ranked pool file (measures dcg, err) has one row per "
                 "item of each query: id,item,p_0..p_<G−1>[,cost].")  # fmt: skip
        return _ranked_pool_file(frame, p, row_label)
    if "item" in frame.columns and frame["id"].duplicated().any():
        raise InputFileError(
            f"{p}: has an 'item' column and repeated ids, as a ranked pool file has; a ranked "
            "pool is evaluated with --measure dcg or err."
        )
    ids = _ids(frame["id"], p, row_label)
    pcols = [c for c in frame.columns if c.startswith("p_")]
    regression = [c for c in ("mean", "var") if c in frame.columns]
    lines = frame.index.to_numpy()
    predictive: Predictive
    if pcols and regression:
        raise InputFileError(
            f"{p}: has both class-probability columns ({', '.join(pcols)}) and regression "
            f"columns ({', '.join(regression)}); a pool file describes one kind of model."
        )
    if pcols:
        labels = _class_labels(pcols)
        if pd.Index(labels).has_duplicates:
            raise InputFileError(f"{p}: columns {pcols} name the same class twice.")
        proba = _probabilities(frame, pcols, p, row_label)
        predictive = Categorical(proba, labels=labels)
    elif len(regression) == 2:
        mean = _numbers(frame["mean"], p, row_label, "mean")
        var = _numbers(frame["var"], p, row_label, "var")
        if (var < 0).any():
            r = int(np.flatnonzero(var < 0)[0])
            raise InvalidVarianceError(
                f"{p}: {row_label} {lines[r]}, column 'var': {var[r]:g} is negative; pass the "
                "predictive variance (std**2)."
            )
        predictive = Gaussian(mean, var)
    else:
        raise InputFileError(
            f"{p}: no prediction columns (columns: {', '.join(frame.columns)}); {what}"
        )
    return PoolFile(p, ids, predictive, _costs(frame, p, row_label, "instances"), lines, row_label)


def _costs(frame: pd.DataFrame, p: Path, row_label: str, what: str) -> NDArray[np.float64] | None:
    """The optional ``cost`` column: finite and strictly positive."""
    if "cost" not in frame.columns:
        return None
    costs = _numbers(frame["cost"], p, row_label, "cost")
    if (costs <= 0).any():
        r = int(np.flatnonzero(costs <= 0)[0])
        raise InvalidCostsError(
            f"{p}: {row_label} {frame.index[r]}, column 'cost': {costs[r]:g}; labeling costs must "
            f"be strictly positive (give free {what} a small positive cost)."
        )
    return costs


def _probabilities(
    frame: pd.DataFrame, pcols: list[str], p: Path, row_label: str
) -> NDArray[np.float64]:
    """Probability columns: each cell in [0, 1], each row summing to 1."""
    lines = frame.index.to_numpy()
    proba = np.column_stack([_numbers(frame[c], p, row_label, c) for c in pcols])
    neg = (proba < 0) | (proba > 1)
    if neg.any():
        r, k = (int(v[0]) for v in np.nonzero(neg))
        raise ProbabilityRowsError(
            f"{p}: {row_label} {lines[r]}, column '{pcols[k]}': {proba[r, k]:g} is not a "
            "probability in [0, 1]; pass class probabilities (predict_proba output)."
        )
    sums = proba.sum(axis=1)
    off = np.abs(sums - 1.0) > PROBABILITY_ROW_TOL
    if off.any():
        r = int(np.flatnonzero(off)[0])
        raise ProbabilityRowsError(
            f"{p}: {row_label} {lines[r]}, columns {','.join(pcols)}: the probabilities sum "
            f"to {sums[r]:.6g}; each row must sum to 1 (±{PROBABILITY_ROW_TOL:g}) "
            f"({int(off.sum())} such rows)."
        )
    return proba


def _ranked_pool_file(frame: pd.DataFrame, p: Path, row_label: str) -> PoolFile:
    """A ranked pool: rows id,item,p_0..p_<G−1>[,cost], a query's items in the ranker's order."""
    lines = frame.index.to_numpy()
    pcols = [c for c in frame.columns if c.startswith("p_")]
    want = [f"p_{g}" for g in range(len(pcols))]
    if len(pcols) < 2 or sorted(pcols, key=lambda c: (len(c), c)) != want:
        raise InputFileError(
            f"{p}: a ranked pool file needs grade-probability columns "
            f"p_0, p_1, ..., p_<G−1> for grades 0..G−1; got {pcols or 'none'}."
        )
    qids = _keys(frame["id"], p, row_label, "id")
    items = _keys(frame["item"], p, row_label, "item")
    codes, uniques = pd.factorize(qids)  # queries in order of first appearance
    order = np.argsort(codes, kind="stable")  # a query's rows keep the file's order
    pairs = pd.MultiIndex.from_arrays([codes, items])
    dup = pairs.duplicated()
    if dup.any():
        r = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero(pairs == pairs[r])[0])
        raise DuplicateIdError(
            f"{p}: {row_label} {lines[r]}, column 'item': item {_scalar(items[r])!r} of query "
            f"{_scalar(qids[r])!r} already appears on {row_label} {lines[first]}; an item is "
            "listed once per query."
        )
    proba = _probabilities(frame, want, p, row_label)[order]
    offsets = np.zeros(len(uniques) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=len(uniques)), out=offsets[1:])
    item_costs = _costs(frame, p, row_label, "items")
    rel = GradedRelevance(
        proba, offsets, items=items[order], costs=None if item_costs is None else item_costs[order]
    )
    first_row = lines[order][offsets[:-1]]
    ids = np.asarray(uniques.to_numpy() if hasattr(uniques, "to_numpy") else uniques)
    text = _cells(frame["item"], p, row_label, "item").map(str).to_numpy(dtype=object)[order]
    return PoolFile(p, ids, rel, None, first_row, row_label, text)


def _check_shared_costs(pools: list[PoolFile], rels: list[GradedRelevance]) -> None:
    """An item both rankers list has one labeling cost (as an instance has one cost)."""
    from .ranking import _align as align_items

    if len(rels) != 2 or rels[0].item_costs is None or rels[1].item_costs is None:
        return
    al = align_items(rels[0], rels[1])
    shared = np.flatnonzero(al.partner1 >= 0)
    c1, c2 = rels[0].item_costs[shared], rels[1].item_costs[al.partner1[shared]]
    differ = np.flatnonzero(c1 != c2)
    if differ.size:
        k = int(differ[0])
        j = int(shared[k])
        assert rels[0].items is not None
        raise InvalidCostsError(
            f"{pools[1].path}: column 'cost' of item {_scalar(rels[0].items[j])!r} in query "
            f"{_scalar(pools[0].ids[int(rels[0].query_of_item[j])])!r} differs from "
            f"{pools[0].path}'s ({c2[k]:g} vs {c1[k]:g}); an item has one labeling cost."
        )


def _common_items(pools: list[PoolFile]) -> list[GradedRelevance]:
    """Rankers' item ids of one type across the files: integers only if every file's are
    (so that '004' in one file and 'x9' in another stay the strings they were written as)."""
    texts = [f.item_text for f in pools]
    rels = [f.predictive for f in pools]
    assert all(t is not None for t in texts) and all(isinstance(r, GradedRelevance) for r in rels)
    if all(r.items is not None and r.items.dtype.kind == "i" for r in rels):  # type: ignore[union-attr]
        return rels  # type: ignore[return-value]
    return [
        GradedRelevance(r.proba, r.offsets, items=t, costs=r.item_costs)  # type: ignore[union-attr]
        for r, t in zip(rels, texts, strict=True)
    ]


def _align(pools: list[PoolFile]) -> tuple[list[Any], NDArray[Any] | None]:
    """Put every model's rows in the first file's id order; same ids, same kind, same classes,
    and equal costs wherever several files give them."""
    if all(isinstance(f.predictive, GradedRelevance) for f in pools):
        pools = [replace(f, predictive=r) for f, r in zip(pools, _common_items(pools), strict=True)]
    base = pools[0]
    index = pd.Index(base.ids)
    preds: list[Any] = [base.predictive]
    costs = base.costs
    for other in pools[1:]:
        pos = index.get_indexer(other.ids) if other.ids.dtype == base.ids.dtype else None
        if pos is None or (pos < 0).any():
            r = 0 if pos is None else int(np.flatnonzero(pos < 0)[0])
            raise UnknownIdError(
                f"{other.path}: {other.row_label} {other.rows[r]}, column 'id': id "
                f"{_scalar(other.ids[r])!r} is not in {base.path}; every pool file must list the "
                "same ids (one file per model on the same pool)."
            )
        if other.ids.shape[0] != base.ids.shape[0]:
            missing = np.setdiff1d(np.arange(base.ids.shape[0]), pos)[0]
            raise UnknownIdError(
                f"{other.path}: id {_scalar(base.ids[missing])!r} of {base.path} ({base.row_label} "
                f"{base.rows[missing]}) is missing; every pool file must list the same ids."
            )
        order = np.argsort(pos)
        pred = other.predictive
        if isinstance(pred, GradedRelevance) and isinstance(base.predictive, GradedRelevance):
            preds.append(pred.take(order))
            continue
        if type(pred) is not type(base.predictive):
            raise InputFileError(
                f"{other.path}: describes a {type(pred).__name__} model but {base.path} a "
                f"{type(base.predictive).__name__} one; compare models of one kind."
            )
        if isinstance(pred, Categorical) and isinstance(base.predictive, Categorical):
            want = base.predictive.labels
            if set(pred.labels.tolist()) != set(want.tolist()):
                raise LabelSpaceError(
                    f"{other.path}: classes {pred.labels.tolist()} differ from {base.path}'s "
                    f"{want.tolist()}; give every model the same p_<label> columns."
                )
            cols = pd.Index(pred.labels).get_indexer(want)
            pred = Categorical(pred.proba[order][:, cols], labels=want)
        elif isinstance(pred, Gaussian):
            pred = Gaussian(pred.mean[order], pred.var[order])
        preds.append(pred)
        if other.costs is not None:
            c = other.costs[order]
            if costs is None:
                costs = c
            elif not np.array_equal(c, costs):
                r = int(np.flatnonzero(c != costs)[0])
                raise InvalidCostsError(
                    f"{other.path}: column 'cost' differs from {base.path}'s at id "
                    f"{_scalar(base.ids[r])!r} ({c[r]:g} vs {costs[r]:g}); an instance has one "
                    "cost."
                )
    if all(isinstance(r, GradedRelevance) for r in preds):
        _check_shared_costs(pools, preds)
    return preds, costs


def read_labels_file(path: str | Path, ranking: bool = False) -> tuple[pd.DataFrame, str]:
    """Read a labels file: columns ``id``, ``label`` (``ranking``: ``id``, ``item``, ``grade``)
    and optionally ``session_id``.

    Returns the frame (indexed by line number, or row number for Parquet) and the word for its
    rows (``"line"`` or ``"row"``). Empty cells are refused naming line and column.
    """
    p = Path(path)
    frame, row_label = _read_table(p)
    need = ("id", "item", "grade") if ranking else ("id", "label")
    what = (
        "a ranked pool's labels file has columns id,item,grade (one row per item)."
        if ranking
        else "a labels file has columns id,label."
    )
    _require(frame, p, need, what)
    cols = [*need] + (["session_id"] if "session_id" in frame.columns else [])
    out = frame[cols].copy()
    for col in need:
        out[col] = _cells(out[col], p, row_label, col)
    return out, row_label


# ------------------------------------------------------------------------------- session
@contextmanager
def _command(json_errors: bool = False) -> Iterator[None]:
    """Input errors → ``error: ...`` on stderr and exit status 2; the library's warnings →
    ``warning: ...`` lines on stderr."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ActiveEvalWarning)
            try:
                yield
            except ActiveEvalError as exc:
                click.echo(f"error: {exc}", err=True)
                sys.exit(2)
            except OSError as exc:  # the file system refused a read or write
                where = f"{exc.filename}: " if exc.filename else ""
                click.echo(f"error: {where}{exc.strerror or exc}", err=True)
                sys.exit(2)
    finally:
        # Replayed after the recording ends: inside it, showwarning would append to ``caught``.
        seen: set[str] = set()
        for w in caught:
            msg = str(w.message)
            if not issubclass(w.category, ActiveEvalWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            elif msg not in seen:
                seen.add(msg)
                click.echo(f"warning: {msg}", err=True)


_STORE = click.Path(exists=True, dir_okay=False, path_type=Path)


def _check_output(out: Path, store: Path, what: str, suffixes: tuple[str, ...] = ()) -> None:
    """Refuse, before any work, an output path that would destroy a store (this session's
    own file or its -wal/-shm/-journal, or any other SQLite database), whose directory is
    missing, or (with ``suffixes``) of another file type."""
    from .store import _SIDE_FILES

    target, base = out.resolve(), store.resolve()
    if target in [base, *(base.with_name(base.name + x) for x in _SIDE_FILES)]:
        raise OutputFileError(
            f"{what}: {out} is the session store {store} (or one of its files); writing there "
            "would destroy the store and every label in it. Choose another file name."
        )
    owner = [target.with_name(target.name.removesuffix(x)) for x in _SIDE_FILES]
    for db in {target, *owner}:  # the file, or the database whose side file it is
        if _is_sqlite(db):
            raise OutputFileError(
                f"{what}: {out} is an SQLite database (another session store?) or one of its "
                "files; refusing to overwrite it. Choose another file name."
            )
    if not target.parent.is_dir():
        raise OutputFileError(
            f"{what}: {out.parent} does not exist or is not a directory; create the directory."
        )
    if suffixes and out.suffix.lower() not in suffixes:
        named = [x for x in suffixes if x]
        choices = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
        raise OutputFileError(
            f"{what}: {out} must end in {choices} (the file type written); "
            f"{out.suffix or 'a name without extension'} is not a type this command writes."
        )


def _is_sqlite(path: Path) -> bool:
    if not path.is_file():
        return False
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


#: What a table output is written as, by its name's ending (no ending: CSV).
_TABLE_FORMATS = {".csv": "csv", "": "csv", ".parquet": "parquet", ".pq": "parquet"}


@contextmanager
def _replacing(out: Path) -> Iterator[Path]:
    """A new temporary file beside ``out`` to write, moved onto ``out`` (``os.replace``, atomic)
    once the block succeeds. On any failure (a full disk: OSError ENOSPC) it is removed, and
    an earlier ``out`` stays as it was: never a truncated file."""
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # umask applies
        if out.is_file():
            shutil.copymode(out, tmp)  # replacing a file keeps its permissions
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)  # a delayed write error (ENOSPC on close or flush) surfaces here
        finally:
            os.close(fd)
        os.replace(tmp, out)
    except OSError as exc:
        raise OutputFileError(f"{out}: cannot write it ({exc.strerror or exc}).") from exc
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def _write_frame(frame: pd.DataFrame, out: Path) -> None:
    """CSV, or Parquet for a .parquet/.pq name (:data:`_TABLE_FORMATS`), written whole or not
    at all."""
    with _replacing(out) as tmp:
        if _TABLE_FORMATS[out.suffix.lower()] == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, lineterminator="\n")


_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@main.group()
def session() -> None:
    """Labeling campaigns kept in a store file: init, next, record, status, export.

    \b
    activeeval session init STORE --pool A.csv [--pool B.csv] --measure f1 --budget 300
    activeeval session next STORE --k 20 --out batch.csv
    activeeval session record STORE labels.csv --annotator NAME
    activeeval session status STORE [--json] [--plot progress.png]
    activeeval session export STORE labels_out.csv
    """


def _fmt(x: float, digits: int = 4) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _measure_text(plan: Any) -> str:
    """The measure's name, with a ranking measure's truncation depth (dcg@10)."""
    k = plan.measure_spec.get("k")
    return plan.measure if k is None else f"{plan.measure}@{k}"


def _budget_text(budget: float, cost_sensitive: bool, ranking: bool = False) -> str:
    """The budget in its unit: cost units, else labels (queries for a ranked pool, whose
    query costs, the sums of the items' costs, are scaled to mean one over the pool)."""
    if cost_sensitive and ranking:
        return f"{budget:g} cost units (a query costs its items' summed cost ÷ the pool's mean)"
    if cost_sensitive:
        return f"{budget:g} cost units"
    return f"{budget:g} {'queries' if ranking else 'labels'}"


@session.command("init")
@click.argument("store", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--pool",
    "pools",
    multiple=True,
    required=True,
    type=_FILE,
    help="Pool file of a model (CSV or Parquet); repeat to compare models.",
)
@click.option(
    "--measure",
    required=True,
    help="error_rate, accuracy, f1, precision, recall (classifiers); mse, mae (regressors); "
    "dcg, err (ranked pools).",
)
@click.option("--pos-label", default=None, help="Positive class of f1/precision/recall.")
@click.option("--beta", type=float, default=None, help="β of the F-measure (with --measure f1).")
@click.option(
    "--budget",
    type=float,
    required=True,
    help="Labels to buy (cost units if the pool has a cost column).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draws (≥ 0).")
@click.option(
    "--method",
    default="active",
    show_default=True,
    help="active, passive, active_uniC, active_lambda (comparisons: also active_0, "
    "active_inf, active_risk; ranked pools: also active_uniD).",
)
@click.option("--level", type=float, default=0.95, show_default=True, help="Confidence level.")
@click.option(
    "--depth",
    type=click.IntRange(min=1),
    default=None,
    help="Ranked pools: truncation depth k of dcg/err (DCG@k); only each list's top k items "
    "are graded (and count toward a query's cost). Default: the whole list.",
)
@click.option(
    "--estimator",
    default="assisted",
    show_default=True,
    help="assisted (the model-assisted estimator, as evaluate/compare) or snis (the thesis's "
    "eq. 3.31, for reproduction).",
)
def session_init(
    store: Path,
    pools: tuple[Path, ...],
    measure: str,
    pos_label: str | None,
    beta: float | None,
    budget: float,
    seed: int,
    method: str,
    level: float,
    depth: int | None,
    estimator: str,
) -> None:
    """Plan a campaign: read the pool file(s) and create STORE."""
    from .ranking import DCG, ERR
    from .store import Session

    with _command():
        check_seed(seed, "--seed", maximum=MAX_STORED_SEED)  # before any file is read
        key = measure.strip().lower()
        meas: Any = measure
        if depth is not None:
            if key not in ("dcg", "err"):
                raise UnknownOptionError(
                    f"--depth: truncates a ranking measure (dcg, err), not {measure!r}."
                )
            meas = DCG(k=depth) if key == "dcg" else ERR(k=depth)
        files = [read_pool_file(p, ranked=key in ("dcg", "err")) for p in pools]
        preds, costs = _align(files)
        if depth is not None:  # only the top items count, so only they are graded and paid
            preds = [r.truncated(depth) for r in preds]
        s = Session.create(
            store,
            preds[0] if len(preds) == 1 else preds,
            meas,
            budget,
            method=method,
            seed=seed,
            costs=costs,
            level=level,
            pos_label=pos_label,
            ids=files[0].ids,
            beta=beta,
            names=[str(f.path) for f in files],
            estimator=estimator,
        )
        with s:
            plan = s.plan
            what = (
                f"evaluation of {_measure_text(plan)}"
                if plan.kind == "evaluation"
                else f"comparison of {plan.n_models} models on {_measure_text(plan)}"
            )
            pos = f" (positive class {plan.pos_label!r})" if plan.pos_label is not None else ""
            click.echo(
                f"created {store}: {what}{pos}, pool of {plan.pool_size} "
                f"{'queries' if plan.ranking else 'instances'}, method "
                f"{plan.method}, estimator {plan.estimator}, budget "
                f"{_budget_text(plan.budget, plan.cost_sensitive, plan.ranking)}, "
                f"seed {plan.seed}\nsession id {plan.session_id}\n"
                f"next: activeeval session next {store} --k 20 --out batch.csv"
            )


@session.command("next")
@click.argument("store", type=_STORE)
@click.option("--k", "k", type=int, default=20, show_default=True, help="Ids to hand out.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the ids to this CSV file (header 'id'; a ranked pool: a sheet id,item,grade "
    "with the grades to fill in) instead of stdout; Parquet for a .parquet or .pq name.",
)
def session_next(store: Path, k: int, out: Path | None) -> None:
    """Ids to label next: pending ones first (idempotent), then new draws, within budget."""
    from .store import Session

    with _command():
        if out is not None:
            _check_output(out, store, "--out", tuple(_TABLE_FORMATS))
        with Session.open(store) as s:
            ids = s.next_batch(k)
            frame = (
                s.items_to_grade(ids)  # a sheet id,item,grade with the grades to fill in
                if s.plan.ranking
                else pd.DataFrame({"id": pd.Series(ids, dtype=object)})
            )
            if out is None:
                click.echo(frame.to_csv(index=False, lineterminator="\n"), nl=False)
            else:
                _write_frame(frame, out)
            prog = s.progress()
            if not ids:
                click.echo(
                    f"nothing left to label: the campaign is complete ({prog.n_labels} labels); "
                    f"see activeeval session status {store}",
                    err=True,
                )
            elif out is not None:
                click.echo(
                    f"wrote {len(ids)} ids to {out} ({prog.n_pending} pending in all; "
                    f"{prog.committed:g} of "
                    f"{_budget_text(prog.budget, s.plan.cost_sensitive, s.plan.ranking)} committed)"
                )


@session.command("record")
@click.argument("store", type=_STORE)
@click.argument("labels", type=_FILE)
@click.option("--annotator", default=None, help="Who labeled them (stored with each label).")
@click.option("--overwrite", is_flag=True, help="Replace stored labels that differ (audited).")
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=5000,
    show_default=True,
    help="Labels committed per transaction.",
)
def session_record(
    store: Path, labels: Path, annotator: str | None, overwrite: bool, chunk_size: int
) -> None:
    """Record a labels file (id,label). Idempotent; conflicting relabels are refused."""
    from .store import Session

    with _command(), Session.open(store) as s:
        frame, row_label = read_labels_file(labels, ranking=s.plan.ranking)
        done = s.record(
            frame,
            annotator=annotator,
            overwrite=overwrite,
            chunk_size=chunk_size,
            source=str(labels),
            row_label=row_label,
        )
        prog = s.progress()
        click.echo(
            f"recorded {done.n_new} new labels ({done.n_unchanged} unchanged, "
            f"{done.n_overwritten} overwritten) from {labels}; {prog.n_labels} labels, cost "
            f"{prog.cost_spent:g} of "
            f"{_budget_text(prog.budget, s.plan.cost_sensitive, s.plan.ranking)}, "
            f"{prog.n_pending} pending"
        )


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def _json_safe(x: Any) -> Any:
    """NaN and infinities as null, recursively: JSON has no such numbers."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_json_safe(v) for v in x]
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _why_no_estimate(prog: Any) -> str | None:
    """Why a session has no estimate yet, in words; None once it has labeled draws."""
    if prog.n_labels == 0:
        return (
            "none yet: no label has been recorded (hand out ids with activeeval session next, "
            "then record their labels with activeeval session record)"
        )
    if prog.n_estimation_draws == 0:
        return (
            "none yet: the first id handed out has no label (the estimate uses the draws up to "
            "the first unlabeled one)"
        )
    return None


def _status_dict(s: Any, features: NDArray[np.float64] | None = None) -> dict[str, Any]:
    prog = s.progress()
    plan = s.plan
    out: dict[str, Any] = {
        "measure": plan.measure,
        "n_labels": prog.n_labels,
        "n_draws": prog.n_estimation_draws,
        "cost_spent": prog.cost_spent,
        "budget": plan.budget,
    }
    if plan.n_models == 1:
        e = s.estimate(features=features)
        inf: Any = e.inference
        out.update(
            estimate=_nan_to_none(e.estimate),
            stderr=_nan_to_none(e.stderr),
            ci=[_nan_to_none(v) for v in e.ci],
            level=plan.level,
        )
    else:
        c = s.compare(features=features)
        inf = c.comparison
        out.update(
            estimate=[_nan_to_none(float(v)) for v in c.estimates],
            stderr=_nan_to_none(c.stderr),
            ci=[_nan_to_none(v) for v in c.ci],
            level=plan.level,
            difference=_nan_to_none(c.difference),
            p_value=_nan_to_none(c.p_value),
            best=None if math.isnan(c.difference) else int(c.best),
        )
    if features is not None:  # λ_s of the smoothed residuals; None before the first label
        out["feature_power"] = None if inf is None else _nan_to_none(inf.feature_power)
    return out


def _plot(s: Any, path: Path, features: NDArray[np.float64] | None = None) -> None:
    """Estimate (or difference) ± interval against labels spent, Agg backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    plan = s.plan
    traj = s.trajectory(features=features)
    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x_col = "cost" if plan.cost_sensitive else "n_labels"
    name = _measure_text(plan)
    what = name if plan.n_models == 1 else f"difference in {name} (model 0 − 1)"
    if plan.n_models > 2:
        what = f"{name}: best − runner-up"
    if traj.empty:
        ax.text(0.5, 0.5, "no labels recorded yet", ha="center", va="center")
    else:
        x = traj[x_col].to_numpy(float)
        ax.fill_between(
            x,
            traj["low"].to_numpy(float),
            traj["high"].to_numpy(float),
            alpha=0.25,
            color="C0",
            label=f"{plan.level:.0%} interval",
        )
        ax.plot(x, traj["estimate"].to_numpy(float), color="C0", marker=".", label="estimate")
        if plan.n_models > 1:
            ax.axhline(0.0, color="0.4", lw=0.8)
        ax.legend(loc="best")
    ax.set_xlabel("labeling cost spent" if plan.cost_sensitive else "labels")
    ax.set_ylabel(what)
    ax.set_title(
        f"{s.path.name}: {plan.kind} of {_measure_text(plan)}, method {plan.method}, "
        f"estimator {plan.estimator}"
    )
    ax.set_xlim(left=0, right=plan.budget)
    with _replacing(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")


@session.command("status")
@click.argument("store", type=_STORE)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a PNG of the estimate ± interval against labels spent.",
)
@click.option(
    "--features",
    type=_FILE,
    default=None,
    help="CSV/Parquet of the pool's features (id + numeric columns): labeled neighbours "
    "become a second control variate of the estimate or comparison.",
)
def session_status(store: Path, as_json: bool, plot: Path | None, features: Path | None) -> None:
    """Labels and cost spent against the budget, the estimate and its interval (or the
    difference, p-value and best model)."""
    from .estimators.report import _no_features
    from .store import Session

    with _command():
        if plot is not None:
            _check_output(plot, store, "--plot", (".png",))
        with Session.open(store) as s:
            x = None
            if features is not None:
                if s.plan.ranking:  # refused before the file is read, as Session would refuse it
                    _no_features(features, "ranking pools")
                x = read_features_file(features, s.ids)
            status = _status_dict(s, x)
            if plot is not None:
                _plot(s, plot, x)
            if as_json:
                click.echo(json.dumps(_json_safe(status), indent=2, allow_nan=False))
                return
            plan, prog = s.plan, s.progress()
            pct = f"{prog.cost_spent / plan.budget:.0%}"
            state = (
                "complete"
                if prog.complete
                else (
                    "all handed out; waiting for pending labels" if prog.finished else "in progress"
                )
            )
            lines = [
                f"session {plan.session_id} ({plan.kind}, {_measure_text(plan)}, "
                f"method {plan.method}, estimator {plan.estimator}, seed {plan.seed})",
                f"labels:   {prog.n_labels} recorded, {prog.n_pending} pending; cost "
                f"{prog.cost_spent:g} of "
                f"{_budget_text(plan.budget, plan.cost_sensitive, plan.ranking)} ({pct}); "
                f"{prog.n_draws} draws; {state}",
            ]
            lv = f"{plan.level:.0%}"
            pending = _why_no_estimate(prog)
            if pending is not None:
                lines.append(f"{'estimate' if plan.n_models == 1 else 'difference'}: {pending}")
                if plan.n_models > 1:
                    lines.extend(f"model {j}:  {name}" for j, name in enumerate(plan.model_names))
            elif plan.n_models == 1:
                lines.append(
                    f"estimate: {_fmt(status['estimate'])}  stderr {_fmt(status['stderr'])}  "
                    f"{lv} CI [{_fmt(status['ci'][0])}, {_fmt(status['ci'][1])}]  "
                    f"(from {status['n_draws']} draws)"
                )
            else:
                for j, (name, est) in enumerate(
                    zip(plan.model_names, status["estimate"], strict=True)
                ):
                    lines.append(f"model {j}:  {_fmt(est)}  {name}")
                pair = "model 0 − model 1" if plan.n_models == 2 else "best − runner-up"
                best = status["best"]
                lines.append(
                    f"difference ({pair}): {_fmt(status['difference'])}  stderr "
                    f"{_fmt(status['stderr'])}  {lv} CI [{_fmt(status['ci'][0])}, "
                    f"{_fmt(status['ci'][1])}]  p-value {_fmt(status['p_value'])}"
                )
                lines.append(
                    "best:     "
                    + ("—" if best is None else f"model {best} ({plan.model_names[best]})")
                )
            if "feature_power" in status:
                lines.append(
                    f"features: coefficient {_fmt(status['feature_power'])} on the smoothed "
                    "residuals (0: the estimate does not use them; its standard error comes from "
                    "the jackknife that re-tunes the coefficients, so it can differ slightly)"
                )
            if plot is not None:
                lines.append(f"plot:     {plot}")
            click.echo("\n".join(lines))


@session.command("export")
@click.argument("store", type=_STORE)
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def session_export(store: Path, out: Path) -> None:
    """Write every label with annotator, timestamp and draw order (CSV for a .csv name or
    one without extension, Parquet for .parquet or .pq; other endings are refused)."""
    from .store import Session

    with _command():
        _check_output(out, store, "out", tuple(_TABLE_FORMATS))
        with Session.open(store) as s:
            frame = s.labels_frame()
            _write_frame(frame, out)
            click.echo(f"wrote {frame.shape[0]} labels to {out}")


if __name__ == "__main__":  # pragma: no cover
    main()
