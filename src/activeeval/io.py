"""The file formats of pools, labels and features, and atomic table output: from files to the
inputs of ``Session`` and ``evaluate`` without the command line (which reads and writes its
files through this module).

File formats (part of the contract):

* **Pool file**, CSV (UTF-8) or Parquet, one per model, all with the same ids: a column ``id``;
  a classifier's class probabilities in columns ``p_<label>`` (the labels are read as integers
  if every one is an integer written without sign or leading zeros that int64 holds, else as
  strings; the
  same rule for ids and item ids, so that ``007`` is handed out and exported as written), or a
  regressor's predictive ``mean`` and ``var``; optionally a labeling ``cost`` per instance
  (strictly positive).
* **Ranked pool file** (a ranking function, thesis Ch. 6; measures ``dcg``, ``err``): one row
  per item of each query's ranked list, in the ranker's order (best first): the query ``id``,
  the ``item`` id (unique within its query; the same item id in two rankers' files marks the
  same document, which is then labeled once), the item's grade probabilities ``p_0`` …
  ``p_<G−1>``, and optionally a labeling ``cost`` per item (a query costs the sum).
* **Labels file**, CSV or Parquet: columns ``id,label``; optionally ``session_id``, which must
  then be the session's own, and ``annotator``, who gave that row's label (a blank cell: the
  one ``record`` names). Other columns are ignored, so an ``export`` can be recorded again.
  For a ranked pool: columns ``id,item,grade``, one row for every item of each labeled query
  (for a comparison, every item either ranker lists).
* **Features file**, CSV or Parquet: an ``id`` column and one numeric column per feature, one
  row per pool id, in any order.

Public API:

* ``read_pools`` — one pool file per model → ``Pools``: the models' predictive distributions
  in the first file's id order, the ids, and the per-instance costs (what ``Session.create``,
  ``evaluate`` and ``compare`` take); ``read_pool_file`` reads one file into a ``PoolFile``.
* ``read_labels_file`` — a labels file as a frame for ``Session.record``.
* ``read_features_file`` — a features file as an array in a pool's id order (the
  ``features`` of ``Session.estimate``, ``evaluate``, ``compare``).
* ``write_table`` — a frame written whole or not at all, CSV or Parquet by the file name's
  ending (``TABLE_FORMATS``).

Every reading error is an ``ActiveEvalError`` (mostly ``InputFileError``) whose message names
the file, the line (CSV; the header is line 1) or row (Parquet), and the column; a failed
write raises ``OutputFileError``. The *Files* page of the API reference
(``docs/reference/io.md``) shows the formats as tables, with examples.

Example (the files' names are placeholders)::

    from activeeval import Session
    from activeeval.io import read_labels_file, read_pools

    pools = read_pools(["model_a.csv", "model_b.csv"])
    s = Session.create("s.db", pools.predictions, "f1", 300, costs=pools.costs,
                       ids=pools.ids, names=pools.names)
    ...
    frame, row_label = read_labels_file("labels.csv")
    s.record(frame, source="labels.csv", row_label=row_label)
"""

from __future__ import annotations

import csv
import os
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from io import BytesIO, StringIO, TextIOWrapper
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ._validation import PROBABILITY_ROW_TOL
from .errors import (
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
)
from .predictive import INT_LIKE, Categorical, Gaussian, Predictive, class_labels_from_names
from .ranking import GradedRelevance

__all__ = [
    "TABLE_FORMATS",
    "PoolFile",
    "Pools",
    "read_decision_column",
    "read_features_file",
    "read_group_column",
    "read_labels_file",
    "read_pool_file",
    "read_pools",
    "write_table",
]

# An integer as Python/int64 writes it back: no '+', no '-0', no leading zeros.
# Ids and labels are read as integers only if every one is such text, so '007' stays the
# string '007' (handed out and exported as written) and is not the same id as '7'.
_INT_LIKE = INT_LIKE


def _scalar(x: Any) -> Any:
    """A numpy scalar as the plain Python value (for messages)."""
    return x.item() if isinstance(x, np.generic) else x


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
            frame = pd.read_parquet(BytesIO(raw))
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
    reader = csv.reader(StringIO(text, newline=""), strict=True)
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


# ----------------------------------------------------------------- pool files in chunks
#: Rows of a pool file read at a time by a streamed ``session init`` (``PoolStream``).
STREAM_ROWS = 1 << 18


class NeedsWholeFile(Exception):
    """A pool file that ``PoolStream`` does not read a chunk at a time (a ranked pool, files
    listing their ids in different orders, text that is not UTF-8): read it whole instead,
    which reports what is wrong, if anything, as precisely as ever."""


def _header(path: Path) -> tuple[list[str], str, int | None]:
    """A pool file's column names (a Parquet file's pandas index left out, as
    :func:`_read_table` leaves it), "line" (CSV) or "row" (Parquet), and its number of rows
    where the file says (Parquet), without reading its rows. Whatever is wrong with them is
    left to the whole-file read to report (:class:`NeedsWholeFile`)."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
        if magic == b"PAR1":
            import pyarrow.parquet as pq

            source = pq.ParquetFile(path)
            index = (source.schema_arrow.pandas_metadata or {}).get("index_columns", [])
            hidden = {c for c in index if isinstance(c, str)}
            names = [str(c) for c in source.schema_arrow.names if c not in hidden]
            return names, "row", int(source.metadata.num_rows)
        with path.open(newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f, strict=True), None)
    except Exception as exc:  # unreadable, not UTF-8, not CSV, a damaged Parquet file
        raise NeedsWholeFile(str(exc)) from exc
    if header is None or not any(h.strip() for h in header):
        raise NeedsWholeFile("no header")
    header = [h.strip() for h in header]
    if len(set(header)) < len(header):
        raise NeedsWholeFile("a column named twice")
    return header, "line", None


def _csv_chunks(
    path: Path, header: list[str], columns: list[str], rows: int, numbers: frozenset[str]
) -> Iterator[pd.DataFrame]:
    """The CSV file's rows ``rows`` at a time, as :func:`_csv_rows` gives them, the
    ``numbers`` columns as floats where every cell of the chunk is a finite number and the id
    column as integers where every cell is integer text: by pyarrow while the file is plain
    (:func:`_csv_plain`), else by Python's reader from the first row not yet given (its byte
    offset and line) — the same rows, values and messages either way (the fast path takes
    only what the slow one reads the same)."""
    resume = [0, 1]  # the byte offset and line of the first row not yet given (0: the top)
    try:
        yield from _csv_plain(path, header, columns, rows, numbers, resume)
    except _NotPlain:
        yield from _csv_rows(path, header, columns, rows, (resume[0], resume[1]))


class _NotPlain(Exception):
    """A block of a CSV file that :func:`_csv_plain` leaves to Python's reader."""


#: Bytes of a CSV pool file that pyarrow parses at a time (:func:`_csv_plain`).
CSV_BLOCK = 1 << 23
#: Integer text (:data:`~activeeval.predictive.INT_LIKE`) of at most 18 digits: int64 holds it.
_INT18 = r"^(?:0|-?[1-9][0-9]{0,17})$"


def _csv_plain(
    path: Path,
    header: list[str],
    columns: list[str],
    rows: int,
    numbers: frozenset[str],
    resume: list[int],
) -> Iterator[pd.DataFrame]:
    """The fast path of :func:`_csv_chunks`: blocks of whole lines parsed by pyarrow, where a
    line is its row and Python's reader would read every cell as pyarrow does — UTF-8 without
    a byte-order mark past the file's first, no quote, NUL, blank line or lone carriage
    return, no line longer than Python reads integer text (``sys.get_int_max_str_digits``:
    pandas refuses longer integers, pyarrow would not), no zero among exponents of three digits
    (:func:`_huge_exponent`), each line of the header's width — so
    that row r (from 0) is line r + 2. ``numbers`` columns are parsed as floats (pyarrow rounds
    decimal text correctly, as Python's ``float``, and takes only text pandas takes too:
    tested); a block with a cell that is not a finite number raises :class:`_NotPlain`, as
    does anything else out of the ordinary, before any of its rows is given, with ``resume``
    set to the byte offset and line of the first row not given. It holds a block of text and
    about a chunk of rows."""
    import sys

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    types = {c: pa.float64() if c in numbers else pa.string() for c in columns}
    read = pcsv.ReadOptions(column_names=header, use_threads=False)
    parse = pcsv.ParseOptions(newlines_in_values=False, ignore_empty_lines=False)
    convert = pcsv.ConvertOptions(
        column_types=types, include_columns=columns, null_values=[], strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )  # fmt: skip
    longest = sys.get_int_max_str_digits() or None

    def plain(text: bytes) -> bool:
        return not (b'"' in text or b"\0" in text or b"\xef\xbb\xbf" in text or b"\n\n" in text
                    or b"\n\r\n" in text or text.startswith((b"\n", b"\r\n"))
                    or text.count(b"\r") != text.count(b"\r\n"))  # fmt: skip

    def parsed(block: bytes, ends: NDArray[np.intp]) -> Any:
        if not plain(block):
            raise _NotPlain
        if longest is not None and np.diff(ends, prepend=-1).max(initial=0) > longest:
            raise _NotPlain
        if not block.isascii():  # text in every column, as Python's reader decodes it
            try:
                block.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _NotPlain from exc
        try:
            table = pcsv.read_csv(BytesIO(block), read, parse, convert)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise _NotPlain from exc
        if table.num_rows != ends.shape[0]:
            raise _NotPlain
        zero = False
        for c in columns:
            if c in numbers:
                col = table.column(c)
                if not pc.all(pc.is_finite(col)).as_py():
                    raise _NotPlain  # NaN or infinite: the message is the slow path's
                zero = zero or pc.any(pc.equal(col, 0.0)).as_py()
        if zero and _huge_exponent(block):
            raise _NotPlain  # maybe 0e309, which pandas before 3 does not read as a number
        return table

    def frame(table: Any, line: int) -> pd.DataFrame:
        if "id" in columns and "id" not in numbers:  # integer text: as _keys reads it
            ids = table.column("id")
            if pc.all(pc.match_substring_regex(ids, _INT18)).as_py():
                table = table.set_column(columns.index("id"), "id", pc.cast(ids, pa.int64()))
        out = table.to_pandas()
        out.index = pd.RangeIndex(line, line + table.num_rows, name="line")
        return out

    with path.open("rb") as f:
        first = f.readline(CSV_BLOCK)
        start = first[3:] if first.startswith(b"\xef\xbb\xbf") else first
        try:
            names = next(csv.reader([start.decode("utf-8")], strict=True), None)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise _NotPlain from exc
        if not first.endswith(b"\n") or first.count(b"\r") != first.count(b"\r\n"):
            raise _NotPlain  # no line but the header, or a header over several lines
        if [h.strip() for h in names or []] != header:
            raise _NotPlain
        resume[:] = [len(first), 2]
        offset = len(first)  # of the text not yet parsed
        pending: list[Any] = []
        starts = np.empty(0, dtype=np.int64)  # the pending rows' byte offsets
        carry = b""
        while True:
            chunk = f.read(CSV_BLOCK)
            data = carry + chunk
            end = data.rfind(b"\n") + 1 if chunk else len(data)
            block, carry = data[:end], data[end:]
            if len(carry) > CSV_BLOCK:
                raise _NotPlain  # a line longer than a block (or lines ended by CR alone)
            if block:
                ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
                if ends.shape[0] == 0 or ends[-1] != len(block) - 1:
                    ends = np.append(ends, len(block) - 1)  # the last line, unterminated
                pending.append(parsed(block, ends))
                starts = np.concatenate([starts, offset + np.r_[0, ends[:-1] + 1]])
                offset += len(block)
            while starts.shape[0] >= rows or (not chunk and starts.shape[0]):
                whole = pa.concat_tables(pending)
                n = min(rows, starts.shape[0])
                yield frame(whole.slice(0, n), resume[1])
                pending = [whole.slice(n)]
                starts = starts[n:]
                resume[:] = [int(starts[0]) if starts.shape[0] else offset, resume[1] + n]
            if not chunk:
                return


def _huge_exponent(text: bytes) -> bool:
    """Whether ``text`` holds an exponent of three digits or more (``e``/``E``, an optional
    ``+``, three digits). pandas before 3 refuses zero with an exponent beyond 308 (``0e309``)
    as not a number where Python and pyarrow read 0: :func:`_csv_plain` leaves a block with
    such text and a zero to Python's reader, whose reading is pandas'."""
    if b"e" not in text and b"E" not in text:
        return False
    a = np.frombuffer(text, dtype=np.uint8)
    at = np.flatnonzero((a == ord("e")) | (a == ord("E"))) + 1
    at = at[at < a.size]
    at = at + (a[at] == ord("+"))
    at = at[at + 2 < a.size]
    digit = (a >= ord("0")) & (a <= ord("9"))
    return bool(np.any(digit[at] & digit[at + 1] & digit[at + 2]))


def _csv_rows(
    path: Path, header: list[str], columns: list[str], rows: int, resume: tuple[int, int] = (0, 1)
) -> Iterator[pd.DataFrame]:
    """The CSV file's rows ``rows`` at a time, as :func:`_read_table` reads them whole (cells
    as strings, indexed by line; blank lines skipped, ragged rows refused); with ``resume``,
    from that byte offset, the start of that line (0: the top, the header first)."""
    width = len(header)
    pick = [header.index(c) for c in columns]
    offset, before = resume[0], resume[1] - 1
    try:
        with path.open("rb") as raw:
            raw.seek(offset)
            f = TextIOWrapper(raw, encoding="utf-8" if offset else "utf-8-sig", newline="")
            reader = csv.reader(f, strict=True)
            if not offset:
                next(reader)
            batch: list[list[str]] = []
            lines: list[int] = []
            try:
                for row in reader:
                    if not row:
                        continue
                    if len(row) != width:
                        raise InputFileError(
                            f"{path}: line {before + reader.line_num} has {len(row)} field(s) "
                            f"but the header has {width} ({','.join(header)}); the file is "
                            "truncated or a row is ragged."
                        )
                    batch.append([row[i] for i in pick])
                    lines.append(before + reader.line_num)
                    if len(batch) == rows:
                        yield pd.DataFrame(batch, columns=columns, dtype=object,
                                           index=pd.Index(lines, name="line"))  # fmt: skip
                        batch, lines = [], []
            except csv.Error as exc:
                raise InputFileError(
                    f"{path}: line {before + reader.line_num}: {exc}; the file may be truncated "
                    "(an unclosed quote) or not CSV."
                ) from exc
            if batch:
                yield pd.DataFrame(batch, columns=columns, dtype=object,
                                   index=pd.Index(lines, name="line"))  # fmt: skip
    except UnicodeDecodeError as exc:
        raise NeedsWholeFile(str(exc)) from exc


def _parquet_chunks(path: Path, columns: list[str], rows: int) -> Iterator[pd.DataFrame]:
    """The Parquet file's rows ``rows`` at a time (only ``columns``), indexed by row number
    from 1, as :func:`_read_table` reads them whole."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def frame(table: Any, start: int) -> pd.DataFrame:
        out = table.to_pandas()
        out.index = pd.RangeIndex(start, start + out.shape[0])
        out.columns = [str(c) for c in out.columns]
        return out

    start = 1
    pending: list[Any] = []  # batches not yet yielded: pyarrow's end at row groups
    held = 0
    try:
        # pre_buffer=False: with it, pyarrow keeps every row group read so far (the memory
        # of a pass would grow with the file)
        source = pq.ParquetFile(path, pre_buffer=False)
        for batch in source.iter_batches(batch_size=rows, columns=columns):
            pending.append(batch)
            held += batch.num_rows
            while held >= rows:
                table = pa.Table.from_batches(pending)
                yield frame(table.slice(0, rows), start)
                start += rows
                held -= rows
                pending = table.slice(rows).to_batches()
        if held:
            yield frame(pa.Table.from_batches(pending), start)
    except (InputFileError, NeedsWholeFile):
        raise
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise InputFileError(f"{path}: is not a readable Parquet file ({exc}).") from exc


@dataclass(frozen=True)
class PoolStream:
    """One classifier's or regressor's pool file, read a chunk of rows at a time: what a
    streamed ``session init`` reads instead of :func:`read_pool_file`, with the same checks
    and the same messages (each naming file, line or row, and column).

    Attributes
    ----------
    path : pathlib.Path
    columns : list of str
        The file's columns.
    row_label : str
        ``"line"`` (CSV) or ``"row"`` (Parquet).
    kind : str
        ``"categorical"`` (``p_<label>`` columns) or ``"gaussian"`` (``mean``, ``var``).
    prediction_columns : list of str
    labels : ndarray or None
        A classifier's classes, in its columns' order.
    n_rows : int or None
        The number of rows, where the file says (Parquet).
    """

    path: Path
    columns: list[str]
    row_label: str
    kind: str
    prediction_columns: list[str]
    labels: NDArray[Any] | None
    n_rows: int | None

    @classmethod
    def open(cls, path: str | Path) -> PoolStream:
        """The file's header; :class:`NeedsWholeFile` for a ranked pool file and for any
        header the whole-file read refuses (it says why, in its own order of checks)."""
        p = Path(path)
        columns, row_label, n_rows = _header(p)
        if "id" not in columns or "item" in columns:
            raise NeedsWholeFile("no id column, or a ranked pool file")
        pcols = [c for c in columns if c.startswith("p_")]
        regression = [c for c in ("mean", "var") if c in columns]
        if pcols and not regression:
            labels = _class_labels(pcols)
            if not pd.Index(labels).has_duplicates:
                return cls(p, columns, row_label, "categorical", pcols, labels, n_rows)
        elif len(regression) == 2 and not pcols:
            return cls(p, columns, row_label, "gaussian", ["mean", "var"], None, n_rows)
        raise NeedsWholeFile("prediction columns the whole-file read refuses")

    @property
    def has_costs(self) -> bool:
        return "cost" in self.columns

    def chunks(
        self, columns: list[str], rows: int | None = None, text: tuple[str, ...] = ()
    ) -> Iterator[pd.DataFrame]:
        """The file's ``columns``, ``rows`` (default :data:`STREAM_ROWS`) rows at a time; a
        CSV file's ``text`` columns (a decision column) as their cells' text."""
        n = STREAM_ROWS if rows is None else rows
        if self.row_label == "row":
            return _parquet_chunks(self.path, columns, n)
        # probabilities, mean, var, cost
        numbers = frozenset(c for c in columns if c != "id" and c not in text)
        return _csv_chunks(self.path, self.columns, columns, n, numbers)

    def ids(self, frame: pd.DataFrame, integer: bool | None) -> NDArray[Any]:
        """A chunk's ids as :func:`_keys` reads them, unique within the chunk; ``integer``:
        the whole file's type (None: this chunk's own)."""
        ids = _keys(frame["id"], self.path, self.row_label, "id", as_text=integer is False)
        if integer and ids.dtype.kind != "i":
            raise NeedsWholeFile("ids of another type")
        dup = pd.Index(ids).duplicated(keep=False)
        if dup.any():
            _duplicate(ids, dup, frame.index, self.path, self.row_label)
        return ids

    def predictions(self, frame: pd.DataFrame) -> NDArray[np.float64]:
        """A chunk's predictions as stored: a classifier's probabilities (checked as
        :func:`read_pool_file` checks them), a regressor's columns mean, var."""
        if self.kind == "categorical":
            return _probabilities(frame, self.prediction_columns, self.path, self.row_label)
        mean = _numbers(frame["mean"], self.path, self.row_label, "mean")
        var = _numbers(frame["var"], self.path, self.row_label, "var")
        _check_var(var, frame.index.to_numpy(), self.path, self.row_label)
        return np.column_stack([mean, var])

    def costs(self, frame: pd.DataFrame) -> NDArray[np.float64]:
        """A chunk's costs, checked as :func:`read_pool_file` checks them."""
        out = _costs(frame, self.path, self.row_label, "instances")
        assert out is not None
        return out


def _duplicate(
    ids: NDArray[Any], dup: NDArray[np.bool_], rows: Any, path: Path, label: str
) -> None:
    where = np.flatnonzero(dup)
    first = ids[where[0]]
    again = where[1:][ids[where[1:]] == first][0]
    raise DuplicateIdError(
        f"{path}: {label} {rows[again]}, column 'id': id {_scalar(first)!r} "
        f"already appears on {label} {rows[where[0]]}; ids must be unique."
    )


def _check_var(var: NDArray[np.float64], lines: NDArray[Any], p: Path, row_label: str) -> None:
    if (var < 0).any():
        r = int(np.flatnonzero(var < 0)[0])
        raise InvalidVarianceError(
            f"{p}: {row_label} {lines[r]}, column 'var': {var[r]:g} is negative; pass the "
            "predictive variance (std**2)."
        )


def _require(frame: pd.DataFrame, path: Path, columns: tuple[str, ...], what: str) -> None:
    for col in columns:
        if col not in frame.columns:
            have = ", ".join(frame.columns) or "none"
            raise InputFileError(f"{path}: no column '{col}' (columns: {have}); {what}")


def _cells(series: pd.Series, path: Path, row_label: str, column: str) -> pd.Series:
    """Stripped cells; an empty one is refused."""
    out = series.map(lambda v: v.strip() if isinstance(v, str) else v)
    _refuse_empty(series, out.isna().to_numpy() | (out == "").to_numpy(), path, row_label, column)
    return out


def _refuse_empty(
    series: pd.Series, empty: NDArray[np.bool_], path: Path, row_label: str, column: str
) -> None:
    """Refuse a column's ``empty`` cells, naming the first one's line or row."""
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise InputFileError(
            f"{path}: {row_label} {series.index[i]}, column '{column}' is empty "
            f"({int(empty.sum())} empty cells in that column)."
        )


def _numbers(series: pd.Series, path: Path, row_label: str, column: str) -> NDArray[np.float64]:
    """A numeric column: unparsable and non-finite cells are refused naming line and column."""
    numeric = series.dtype.kind in "fiu"  # no cell is text (a Parquet file's numbers)
    if numeric:  # read by numpy, not cell by cell in Python; NaN is empty (as NA is)
        cells = series
        num = series.to_numpy(dtype=float, na_value=np.nan, copy=True)
        _refuse_empty(series, np.isnan(num), path, row_label, column)
    else:
        cells = _cells(series, path, row_label, column)
        num = pd.to_numeric(cells, errors="coerce").to_numpy(
            dtype=float, na_value=np.nan, copy=True
        )
        # Text read as Python reads it (correctly rounded): pandas before 3.1 can be 1 ulp off.
        text = cells.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool) & np.isfinite(num)
        num[text] = cells.to_numpy(dtype=object)[text].astype(float)
    bad = ~np.isfinite(num)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        # the cell as the per-cell read gives it (an error: its cost no matter)
        value = (_cells(series, path, row_label, column) if numeric else cells).iloc[i]
        as_float = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
        where = f"{path}: {row_label} {series.index[i]}, column '{column}'"
        if pd.isna(as_float) and str(value).strip().lower() not in ("nan", "-nan", "+nan"):
            raise InputFileError(f"{where}: {value!r} is not a number.")
        raise NonFiniteError(
            f"{where}: value {value!r} is not finite; all values must be finite numbers "
            "(drop or impute those instances first)."
        )
    return num


def _keys(
    series: pd.Series, path: Path, row_label: str, column: str, as_text: bool = False
) -> NDArray[Any]:
    """A key column as int64 when every cell is an integer that int64 holds (integer text,
    or integral numbers in a Parquet column), else as strings (always, with ``as_text``: a
    chunk of a file whose other chunks are strings). Empty cells are refused."""
    whole = series.dtype.kind in "iu" and not series.isna().any() and not as_text
    if whole and not (series.dtype.kind == "u" and series.max() > np.iinfo(np.int64).max):
        return series.to_numpy(dtype=np.int64)
    # (unsigned integers beyond int64, which the cast would wrap to negative ids: strings
    # below, as integer text beyond int64 is)
    cells = _cells(series, path, row_label, column)
    if as_text:
        return cells.map(str).to_numpy(dtype=object)
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
        _duplicate(ids, dup, series.index, path, row_label)
    return ids


def _column_rows(
    p: Path, column: str, pool_ids: NDArray[Any], naming: str
) -> tuple[pd.DataFrame, str]:
    """The rows of file ``p`` holding each pool id, in the pool's order, with ``column``
    required (``naming``: what names it, for the message)."""
    frame, row_label = _read_table(p)
    _require(frame, p, ("id", column), f"{naming} names a column of the file.")
    need = f"the file needs one row with column '{column}' per pool instance"
    return frame.iloc[_pool_rows(frame, pool_ids, p, row_label, need)], row_label


def read_decision_column(
    path: str | Path, column: str, pool_ids: NDArray[Any], labels: Sequence[Any] | None
) -> NDArray[Any]:
    """One model's decisions f(x) from a column of its pool file, in the pool's order.

    Parameters
    ----------
    path : str or pathlib.Path
        The model's pool file (or any CSV or Parquet file with an ``id`` column).
    column : str
        The column holding the decision: a class label per instance for a classifier (a
        tuned threshold's, a rule's), a number for a regressor.
    pool_ids : ndarray
        The pool's ids, in the order the decisions are returned.
    labels : sequence or None
        The classifier's classes, which every cell must name; None for a regressor.

    Returns
    -------
    ndarray of shape (len(pool_ids),)
        The decisions: the classes themselves, or floats.

    Raises
    ------
    InputFileError
        No such column, an empty cell, an id of the pool missing from the file, or (a
        regressor) a cell that is not a number; each naming file, line and column.
    LabelSpaceError
        A cell that names no class.

    See Also
    --------
    read_pool_file : The beliefs beside them.
    activeeval.Session : ``Session.create(prediction=...)`` takes them.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from activeeval.io import read_decision_column
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "pool.csv"
    >>> _ = path.write_text("id,p_0,p_1,at_0.3\\n1,0.8,0.2,0\\n2,0.6,0.4,1\\n")
    >>> read_decision_column(path, "at_0.3", np.array([2, 1]), [0, 1]).tolist()
    [1, 0]
    >>> tmp.cleanup()
    """
    p = Path(path)
    rows, row_label = _column_rows(p, column, pool_ids, "the decision column")
    got = _decision_cells(rows[column], p, row_label, column, labels)
    return got if labels is None else np.asarray(labels)[got]


def _decision_cells(
    series: pd.Series,
    path: Path,
    row_label: str,
    column: str,
    labels: Sequence[Any] | NDArray[Any] | None,
) -> NDArray[Any]:
    """A decision column's cells (:func:`read_decision_column`): a regressor's numbers, or
    each cell's class as its position in ``labels`` (the cell's text is the class's)."""
    if labels is None:
        return _numbers(series, path, row_label, column)
    position = {str(_scalar(v)): i for i, v in enumerate(labels)}  # a class by its text
    by_value = series.dtype.kind in "biuf"
    if by_value:  # a Parquet file's numbers or booleans: by value, as evaluate(prediction=)
        # reads an array (1.0 and True are the class 1)
        cells = _cells(series, path, row_label, column)
        values = cells.to_numpy()
        values = values.astype(np.int64) if series.dtype.kind == "b" else values
        codes = pd.Index(np.asarray(labels)).get_indexer(values)
    else:
        cells = _cells(series, path, row_label, column).map(str)
        codes = pd.Index(list(position)).get_indexer(cells)
    if (codes < 0).any():
        i = int(np.flatnonzero(codes < 0)[0])
        raise LabelSpaceError(
            f"{path}: {row_label} {series.index[i]}, column '{column}': "
            f"{_scalar(cells.iloc[i])!r} is "
            f"not a class of the model ({', '.join(position)})."
        )
    if by_value:
        return np.asarray(codes, dtype=np.intp)
    return np.asarray(list(position.values()), dtype=np.intp)[codes]


def read_group_column(path: str | Path, column: str, pool_ids: NDArray[Any]) -> NDArray[Any]:
    """Each pool instance's group from a column of a file, in the pool's order.

    Parameters
    ----------
    path : str or pathlib.Path
        A CSV or Parquet file with an ``id`` column (the pool file, typically).
    column : str
        The column holding each instance's group (a country, a segment).
    pool_ids : ndarray
        The pool's ids, in the order the groups are returned.

    Returns
    -------
    ndarray of shape (len(pool_ids),)
        The group labels as written in the file (text).

    Raises
    ------
    InputFileError
        No such column, an empty cell, or an id of the pool missing from the file; each
        naming file, line and column.

    See Also
    --------
    activeeval.Session.estimate : ``groups=`` takes them.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from activeeval.io import read_group_column
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "pool.csv"
    >>> _ = path.write_text("id,p_0,p_1,country\\n1,0.8,0.2,fr\\n2,0.6,0.4,us\\n")
    >>> read_group_column(path, "country", np.array([2, 1])).tolist()
    ['us', 'fr']
    >>> tmp.cleanup()
    """
    p = Path(path)
    rows, row_label = _column_rows(p, column, pool_ids, "--by")
    return _cells(rows[column], p, row_label, column).map(str).to_numpy(dtype=object)


def read_features_file(path: str | Path, pool_ids: NDArray[Any]) -> NDArray[np.float64]:
    """Read a features file as an array in a pool's id order.

    The file (CSV or Parquet) has an ``id`` column and one numeric column per feature, every
    pool id on exactly one row, in any order; ids are read as in a pool file. The result is
    the ``features`` argument of ``Session.estimate``, ``evaluate`` and ``compare``.

    Parameters
    ----------
    path : str or pathlib.Path
        The features file.
    pool_ids : ndarray of shape (m,)
        The pool's ids, in the pool's order (e.g. ``Pools.ids`` or ``Session.ids``).

    Returns
    -------
    ndarray of shape (m, d)
        One row per pool id, in the order of ``pool_ids``; one column per feature column, in
        the file's order.

    Raises
    ------
    InputFileError
        A missing ``id`` column or feature column, an id not in ``pool_ids``, a pool id
        without a row, or a cell that is not a number (naming the line or row, and column).
    DuplicateIdError
        An id appears on two rows.
    NonFiniteError
        A cell is NaN or infinite.

    See Also
    --------
    read_pools : Read the pool files whose ids the features follow.
    activeeval.evaluate : Takes the array as ``features``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from activeeval.io import read_features_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "features.csv"
    >>> _ = path.write_text("id,age,income\\n3,52,1.5\\n1,31,2.0\\n2,45,0.5\\n")
    >>> read_features_file(path, np.array([1, 2, 3])).tolist()
    [[31.0, 2.0], [45.0, 0.5], [52.0, 1.5]]
    >>> tmp.cleanup()
    """
    p = Path(path)
    frame, row_label = _read_table(p)
    what = "a features file has an 'id' column and one numeric column per feature."
    _require(frame, p, ("id",), what)
    names = [c for c in frame.columns if c != "id"]
    if not names:
        raise InputFileError(f"{p}: no feature column besides 'id'; {what}")
    need = "the features file needs one row per pool instance"
    order = _pool_rows(frame, pool_ids, p, row_label, need)
    return np.column_stack([_numbers(frame[c], p, row_label, c) for c in names])[order]


def _pool_rows(
    frame: pd.DataFrame, pool_ids: NDArray[Any], p: Path, row_label: str, need: str
) -> NDArray[np.intp]:
    """The row of ``frame`` that holds each pool id, in the pool's order: every row's id must
    be a pool id (once: ``_ids``) and every pool id on a row (``need`` says so otherwise)."""
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
            f"{p}: no row for {m - pos.shape[0]} of the pool's {m} ids (e.g. {first!r}); {need}."
        )
    order = np.empty(m, dtype=np.intp)
    order[pos] = np.arange(pos.shape[0])
    return order


def _class_labels(columns: list[str]) -> NDArray[Any]:
    return class_labels_from_names([c[2:] for c in columns])


@dataclass(frozen=True)
class PoolFile:
    """One model's pool file, parsed and validated: what ``read_pool_file`` returns.

    Attributes
    ----------
    path : pathlib.Path
        The file, as given.
    ids : ndarray
        Pool ids, int64 when every id looks like an integer, else strings.
    predictive : Categorical or Gaussian or GradedRelevance
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

    See Also
    --------
    read_pool_file : Read one pool file.
    read_pools : Read and align one pool file per model.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from activeeval.io import read_pool_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "model.csv"
    >>> _ = path.write_text("id,p_0,p_1,cost\\n7,0.9,0.1,1\\n8,0.3,0.7,2\\n")
    >>> pool = read_pool_file(path)
    >>> pool.ids.tolist(), pool.costs.tolist(), pool.row_label, pool.rows.tolist()
    ([7, 8], [1.0, 2.0], 'line', [2, 3])
    >>> np.round(pool.predictive.proba, 3).tolist()
    [[0.9, 0.1], [0.3, 0.7]]
    >>> tmp.cleanup()
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
    """Read one model's pool file.

    A CSV or Parquet file with an ``id`` column and a classifier's ``p_<label>`` columns, a
    regressor's ``mean`` and ``var``, or (a ranked pool) one row per item with ``item`` and
    ``p_0`` … ``p_<G−1>``; optionally ``cost`` (the formats: the *Files* page of the API
    reference, or the module docstring of ``activeeval.io``). A CSV file is parsed a chunk at
    a time, by pyarrow where its text is plain; one with anything wrong in it is read again
    whole, so that the message names the first problem as it always has.

    Parameters
    ----------
    path : str or pathlib.Path
        The pool file.
    ranked : bool, optional
        Which kind of file is expected: a ranked pool (``True``, what ``--measure dcg|err``
        reads) or a classifier's or regressor's pool (``False``; an ``item`` column is then
        one more ignored column). ``None`` (default) decides by the ``item`` column.

    Returns
    -------
    PoolFile
        The ids, the model's predictive distribution (``Categorical``, ``Gaussian`` or
        ``GradedRelevance``), the costs, and each instance's line or row number.

    Raises
    ------
    InputFileError, DuplicateIdError, EmptyPoolError, ProbabilityRowsError, NonFiniteError,
    InvalidCostsError, InvalidVarianceError
        Each naming the file, line and column.

    See Also
    --------
    read_pools : Read one pool file per model, aligned on the first file's ids.
    activeeval.Session : Its ``create`` takes the predictive distribution.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from activeeval.io import read_pool_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "regressor.csv"
    >>> _ = path.write_text("id,mean,var\\na,1.5,0.25\\nb,3.0,1.0\\n")
    >>> pool = read_pool_file(path)
    >>> pool.ids.tolist(), pool.predictive.mean.tolist(), pool.predictive.var.tolist()
    (['a', 'b'], [1.5, 3.0], [0.25, 1.0])
    >>> tmp.cleanup()
    """
    p = Path(path)
    fast = _pool_table(p)
    if fast is not None:
        try:
            return _pool_file(*fast, p, ranked)
        except Exception:  # the whole-file read says what is wrong, as it always has
            pass
    return _pool_file(*_read_table(p), p, ranked)


def _pool_table(p: Path) -> tuple[pd.DataFrame, str] | None:
    """A CSV pool file read a chunk at a time as a streamed ``session init`` reads it
    (:func:`_csv_chunks`: pyarrow where the text is plain), its probabilities, mean, var and
    cost as floats and integer ids as int64 — the values :func:`_read_table`'s text gives,
    at a fraction of the time and memory; None for a Parquet file, and where the whole-file
    read is to say what is wrong (the header, a row the chunks refuse, no rows)."""
    try:
        header, row_label, _ = _header(p)
    except NeedsWholeFile:
        return None
    if row_label != "line":
        return None
    numbers = frozenset(c for c in header if c.startswith("p_") or c in ("mean", "var", "cost"))
    try:
        chunks = list(_csv_chunks(p, header, header, STREAM_ROWS, numbers))
    except Exception:  # whatever stops it (text not UTF-8: NeedsWholeFile), the
        return None  # whole-file read reports, as it always has
    if not chunks:
        return None
    if "id" in header and any(c["id"].dtype.kind != "i" for c in chunks):
        for c in chunks:  # text throughout, as the whole read has it (int64 came from text)
            c["id"] = np.array(c["id"].astype(str).tolist(), dtype=object)
    frame = pd.concat(chunks) if len(chunks) > 1 else chunks[0]
    return frame, row_label


def _pool_file(frame: pd.DataFrame, row_label: str, p: Path, ranked: bool | None) -> PoolFile:
    """:func:`read_pool_file` from the file's table."""
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
        _check_var(var, lines, p, row_label)
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


def _merged_costs(
    have: NDArray[np.float64] | None,
    c: NDArray[np.float64],
    path: Path,
    base: Path,
    ids: NDArray[Any],
) -> NDArray[np.float64]:
    """The costs ``c`` another file (``path``) gives for the instances ``ids``: taken where
    no file gave them yet, else equal to those (``base``'s)."""
    if have is None:
        return c
    if not np.array_equal(c, have):
        r = int(np.flatnonzero(c != have)[0])
        raise InvalidCostsError(
            f"{path}: column 'cost' differs from {base}'s at id {_scalar(ids[r])!r} "
            f"({c[r]:g} vs {have[r]:g}); an instance has one cost."
        )
    return have


def _class_columns(
    path: Path, labels: NDArray[Any], base_path: Path, want: NDArray[Any]
) -> NDArray[np.intp]:
    """The columns of a model's classes ``labels`` (file ``path``) in the order of the first
    file's classes ``want``; refused, naming both files, where the classes differ (read
    whole or streamed alike)."""
    if set(labels.tolist()) != set(want.tolist()):
        raise LabelSpaceError(
            f"{path}: classes {labels.tolist()} differ from {base_path}'s {want.tolist()}; "
            "give every model the same p_<label> columns."
        )
    return np.asarray(pd.Index(labels).get_indexer(want), dtype=np.intp)


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
            cols = _class_columns(other.path, pred.labels, base.path, want)
            pred = Categorical(pred.proba[order][:, cols], labels=want)
        elif isinstance(pred, Gaussian):
            pred = Gaussian(pred.mean[order], pred.var[order])
        preds.append(pred)
        if other.costs is not None:
            costs = _merged_costs(costs, other.costs[order], other.path, base.path, base.ids)
    if all(isinstance(r, GradedRelevance) for r in preds):
        _check_shared_costs(pools, preds)
    return preds, costs


@dataclass(frozen=True)
class Pools:
    """Several models' pool files read together, aligned on the first file's ids.

    Attributes
    ----------
    predictives : list of Categorical, Gaussian or GradedRelevance
        One per file, in the files' order, each with its rows (a ranked pool: its queries) in
        the first file's id order and, for classifiers, its classes in the first file's order.
    ids : ndarray
        The pool ids (queries, for ranked pools), in the first file's order.
    costs : ndarray or None
        Labeling cost per instance, if any file has a ``cost`` column (files that have one
        agree). A ranked pool's item costs are inside its ``GradedRelevance`` instead.
    files : tuple of PoolFile
        The files as read (before alignment), for their paths and line numbers.

    See Also
    --------
    read_pools : Returns it.
    activeeval.Session : ``create`` takes ``predictions``, ``ids``, ``costs``, ``names``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from activeeval.io import read_pools
    >>> tmp = tempfile.TemporaryDirectory()
    >>> a, b = Path(tmp.name) / "a.csv", Path(tmp.name) / "b.csv"
    >>> _ = a.write_text("id,p_0,p_1\\n1,0.9,0.1\\n2,0.3,0.7\\n")
    >>> _ = b.write_text("id,p_1,p_0\\n2,0.6,0.4\\n1,0.2,0.8\\n")
    >>> pools = read_pools([a, b])
    >>> pools.ids.tolist(), len(pools.predictions), pools.costs is None
    ([1, 2], 2, True)
    >>> np.round(pools.predictives[1].proba, 3).tolist()  # b in a's id and class order
    [[0.8, 0.2], [0.4, 0.6]]
    >>> tmp.cleanup()
    """

    predictives: list[Predictive | GradedRelevance]
    ids: NDArray[Any]
    costs: NDArray[np.float64] | None
    files: tuple[PoolFile, ...]

    @property
    def predictions(self) -> Any:
        """What ``Session.create`` (``pools``), ``evaluate`` and ``compare``
        (``predictions``) take: the one model's predictive distribution, or the list of
        several models'."""
        return self.predictives[0] if len(self.predictives) == 1 else self.predictives

    @property
    def names(self) -> list[str]:
        """Each model's file path as given: ``Session.create``'s ``names``."""
        return [str(f.path) for f in self.files]

    def __repr__(self) -> str:
        costs = "none" if self.costs is None else "per instance"
        kind = type(self.predictives[0]).__name__
        return (
            f"Pools(files={self.names!r}, ids={self.ids.shape[0]}, predictive={kind}, "
            f"costs={costs})"
        )


def read_pools(paths: Sequence[str | Path], ranked: bool | None = None) -> Pools:
    """Read one pool file per model and align them on the first file's ids.

    Every file must list the same ids (in any order), describe the same kind of model (with
    the same classes), and give equal costs wherever several files give them; ranked pools'
    item ids are read as integers only if every file's are, and an item both rankers list has
    one cost. This is what ``activeeval session init --pool A.csv --pool B.csv`` reads.

    Parameters
    ----------
    paths : sequence of str or pathlib.Path
        One pool file per model (a list, even for one model).
    ranked : bool, optional
        Which kind of files are expected, as in ``read_pool_file``.

    Returns
    -------
    Pools
        The models' predictive distributions in the first file's id order, the ids, the
        costs, and the files as read; ``pools.predictions``, ``pools.ids``, ``pools.costs``
        and ``pools.names`` are ``Session.create``'s arguments.

    Raises
    ------
    InputFileError
        No path; or a file's errors as in ``read_pool_file``; or files of different kinds.
    UnknownIdError
        A file lists an id the first does not, or misses one of its ids.
    LabelSpaceError
        Classifiers' files name different classes.
    InvalidCostsError
        Two files' costs differ for one instance (or one item of ranked pools).

    See Also
    --------
    read_pool_file : Read one pool file.
    activeeval.Session : Its ``create`` takes what this returns.

    Examples
    --------
    >>> import os, tempfile
    >>> from pathlib import Path
    >>> import activeeval as ae
    >>> from activeeval.io import read_pools
    >>> tmp = tempfile.TemporaryDirectory()
    >>> a, b = Path(tmp.name) / "a.csv", Path(tmp.name) / "b.csv"
    >>> _ = a.write_text("id,p_0,p_1\\n1,0.9,0.1\\n2,0.3,0.7\\n3,0.6,0.4\\n")
    >>> _ = b.write_text("id,p_0,p_1\\n3,0.5,0.5\\n1,0.8,0.2\\n2,0.4,0.6\\n")
    >>> pools = read_pools([a, b])
    >>> s = ae.Session.create(os.path.join(tmp.name, "s.db"), pools.predictions, "error_rate",
    ...                       2, ids=pools.ids, costs=pools.costs, names=pools.names)
    >>> s.plan.kind, s.plan.n_models, s.plan.pool_size
    ('comparison', 2, 3)
    >>> s.close()
    >>> tmp.cleanup()
    """
    if isinstance(paths, str | os.PathLike) or not paths:
        raise InputFileError(
            f"read_pools: pass a list of pool file paths, one per model (got {paths!r})."
        )
    files = tuple(read_pool_file(p, ranked=ranked) for p in paths)
    preds, costs = _align(list(files))
    return Pools(preds, files[0].ids, costs, files)


def read_labels_file(path: str | Path, ranking: bool = False) -> tuple[pd.DataFrame, str]:
    """Read a labels file for ``Session.record``.

    A CSV or Parquet file with columns ``id``, ``label`` (a ranked pool: ``id``, ``item``,
    ``grade``, one row per item) and optionally ``session_id`` and (not for a ranked pool)
    ``annotator``; other columns are dropped.
    Cells are kept as read (CSV: strings); ``Session.record`` converts them to the session's
    ids and labels.

    Parameters
    ----------
    path : str or pathlib.Path
        The labels file.
    ranking : bool
        Read a ranked pool's grades (``id``, ``item``, ``grade``) instead of labels.

    Returns
    -------
    frame : pandas.DataFrame
        The ``id``, ``label`` (or ``item``, ``grade``), ``session_id`` and ``annotator``
        columns, indexed by
        line number (CSV; the header is line 1) or row number (Parquet).
    row_label : str
        ``"line"`` or ``"row"``: what the index counts, for ``Session.record``'s
        ``row_label``.

    Raises
    ------
    InputFileError
        The file cannot be read, lacks a column, or has an empty cell (naming line and
        column).

    See Also
    --------
    activeeval.Session : ``Session.record`` takes the frame.
    write_table : Write a labels table (e.g. ``Session.labels_frame()``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from activeeval.io import read_labels_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = Path(tmp.name) / "labels.csv"
    >>> _ = path.write_text("id,label,note\\n1,0,easy\\n2,1,\\n")
    >>> frame, row_label = read_labels_file(path)
    >>> frame.index.tolist(), frame.columns.tolist(), row_label
    ([2, 3], ['id', 'label'], 'line')
    >>> tmp.cleanup()
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
    optional = ("session_id",) if ranking else ("session_id", "annotator")
    cols = [*need] + [c for c in optional if c in frame.columns]
    out = frame[cols].copy()
    for col in need:
        out[col] = _cells(out[col], p, row_label, col)
    return out, row_label


# ------------------------------------------------------------------------------- writing
TABLE_FORMATS: Mapping[str, str] = MappingProxyType(
    {".csv": "csv", "": "csv", ".parquet": "parquet", ".pq": "parquet"}
)
"""What ``write_table`` writes, by the file name's ending (lower-cased; no ending: CSV)."""


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


def write_table(frame: pd.DataFrame, out: str | os.PathLike[str]) -> None:
    """Write a table whole or not at all, CSV or Parquet by the file name's ending.

    CSV (UTF-8, ``\\n`` line ends) for a ``.csv`` name or one without extension, Parquet for
    ``.parquet`` or ``.pq`` (``TABLE_FORMATS``). The table goes to a new temporary file beside
    ``out`` that is moved onto ``out`` (``os.replace``, atomic) once it is written and flushed
    to disk; on any failure it is removed and an earlier ``out`` stays as it was, never a
    truncated file. Replacing a file keeps its permissions.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table, written without its index.
    out : str or os.PathLike
        The file to write (or replace).

    Raises
    ------
    OutputFileError
        ``out`` has another ending, or cannot be written (the message says why).

    See Also
    --------
    read_labels_file : Read a labels table back.
    activeeval.Session : ``labels_frame`` and ``audit_frame`` give tables to write.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from activeeval.io import write_table
    >>> tmp = tempfile.TemporaryDirectory()
    >>> out = Path(tmp.name) / "labels.csv"
    >>> write_table(pd.DataFrame({"id": [1, 2], "label": [0, 1]}), out)
    >>> print(out.read_text(), end="")
    id,label
    1,0
    2,1
    >>> tmp.cleanup()
    """
    target = Path(out)
    kind = TABLE_FORMATS.get(target.suffix.lower())
    if kind is None:
        raise OutputFileError(
            f"{target}: must end in .csv, .parquet or .pq, or have no extension (the table format "
            f"written); {target.suffix} is not a table format."
        )
    with _replacing(target) as tmp:
        if kind == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False, lineterminator="\n")
