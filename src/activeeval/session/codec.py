"""How a session's values are written to a store and read back: float64 arrays as bytes, the
measure as its class and parameters, predictive distributions as arrays, pool ids, class labels
and item ids as plain integers or strings, and the fingerprint over the pool."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._chunks import row_chunks
from ..errors import (
    DuplicateIdError,
    LabelSpaceError,
    RankingItemsError,
    ShapeError,
    StoreError,
    UnknownOptionError,
)
from ..measures import (
    AbsoluteError,
    Accuracy,
    BalancedAccuracy,
    CostMatrixLoss,
    ErrorRate,
    FMeasure,
    LabelMean,
    LabelProportion,
    MacroF1,
    Measure,
    PerClass,
    Precision,
    Recall,
    SquaredError,
    WeightedF1,
)
from ..predictive import Categorical, Gaussian, Predictive
from ..ranking import DCG, ERR
from .lookup import _py


def _f64(a: NDArray[Any]) -> bytes:
    return np.ascontiguousarray(a, dtype="<f8").tobytes()


def _from_f64(b: bytes, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """A stored float64 column or matrix: a read-only view of the blob's bytes where the
    machine is little-endian (no copy), else a native copy."""
    return np.frombuffer(b, dtype="<f8").astype(np.float64, copy=False).reshape(shape)


def _stored_labels(values: list[Any], dtype: Any) -> NDArray[Any]:
    """Labels as stored (one per draw) as an array of ``dtype``; ``dtype`` None: a ranked
    pool's labels, each a JSON list of grades, as an object array of int64 grade arrays (each
    distinct label parsed once)."""
    if dtype is not None:
        return np.array(values, dtype=dtype)
    parsed = {v: np.asarray(json.loads(v), np.int64) for v in set(values)}
    out = np.empty(len(values), dtype=object)
    for j, v in enumerate(values):  # element by element: equal lengths must not broadcast
        out[j] = parsed[v]
    return out


# ------------------------------------------------------------------ canonical inputs
def _canonical_labels(labels: NDArray[Any], name: str) -> list[Any]:
    """A class label space as ints or strings (what a store and a CSV file can hold)."""
    vals = [_py(v) for v in labels.tolist()]
    if all(isinstance(v, str) for v in vals):
        return vals
    if all(isinstance(v, bool | int | float) for v in vals):
        ints = [int(v) for v in vals]
        if all(float(a) == float(b) for a, b in zip(ints, vals, strict=True)):
            return ints
    raise LabelSpaceError(
        f"{name}: a session stores class labels that are all integers or all strings; got "
        f"{vals[:5]}. Map the classes to integers or strings first."
    )


def _canonical_ids(ids: ArrayLike | None, m: int) -> NDArray[Any]:
    """Pool ids as an int64 array or an object array of str; unique, one per instance."""
    if ids is None:
        return np.arange(m, dtype=np.int64)
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != m:
        raise ShapeError(f"ids: expected {m} pool ids (one per instance), got shape {arr.shape}.")
    if arr.dtype.kind in "iu" or (
        arr.dtype.kind == "O"
        and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in arr.tolist())
    ):
        out = _int64_ids(arr)
    elif arr.dtype.kind in "US" or (
        arr.dtype.kind == "O" and all(isinstance(v, str) for v in arr.tolist())
    ):
        out = np.array([str(v) for v in arr.tolist()], dtype=object)
    else:
        raise ShapeError(
            f"ids: pool ids must be all integers or all strings, got dtype {arr.dtype}."
        )
    index = pd.Index(out)
    if not index.is_unique:
        dup = index[index.duplicated()][0]
        where = np.flatnonzero(index == dup)[:2].tolist()
        raise DuplicateIdError(
            f"ids: id {_py(dup)!r} appears at positions {where[0]} and {where[1]}; pool ids "
            "must be unique."
        )
    return out


def _int64_ids(arr: NDArray[Any]) -> NDArray[np.int64]:
    """Integer ids as int64, refusing one that int64 does not hold (the cast would wrap an
    unsigned id past 2**63 − 1 to a negative one, an id no label file names)."""
    info = np.iinfo(np.int64)
    if arr.dtype.kind == "O":
        over = [v for v in arr.tolist() if not info.min <= int(v) <= info.max]
    elif arr.dtype.kind == "u" and arr.size and arr.max() > info.max:
        over = [arr[np.argmax(arr > info.max)]]
    else:
        over = []
    if over:
        raise ShapeError(
            f"ids: id {int(over[0])} is beyond the integers a store keeps (-2**63 … 2**63 − 1); "
            "pass the ids as strings."
        )
    return np.asarray(arr.tolist() if arr.dtype.kind == "O" else arr, dtype=np.int64)


def _measure_spec(meas: Measure) -> dict[str, Any]:
    """The measure's class and parameters, enough to rebuild it (see :func:`_measure_from`)."""
    if isinstance(meas, Precision | Recall):
        return {"class": type(meas).__name__, "pos_label": _py(meas.pos_label)}
    if isinstance(meas, FMeasure):
        return {"class": "FMeasure", "beta": float(meas.beta), "pos_label": _py(meas.pos_label)}
    if isinstance(meas, CostMatrixLoss):
        return {
            "class": "CostMatrixLoss",
            "cost_matrix": np.asarray(meas.cost_matrix, dtype=float).tolist(),
            "labels": None if meas.labels is None else [_py(v) for v in meas.labels.tolist()],
        }
    if type(meas) in (ErrorRate, Accuracy, SquaredError, AbsoluteError, LabelMean, LabelProportion):
        return {"class": type(meas).__name__}
    if isinstance(meas, MacroF1 | WeightedF1):
        return {"class": type(meas).__name__, "beta": float(meas.beta)}
    if type(meas) is BalancedAccuracy:
        return {"class": "BalancedAccuracy"}
    if type(meas) is PerClass:
        raise _per_class_refused(meas.name)
    if type(meas) is DCG:
        return {"class": "DCG", "k": meas.k}
    if type(meas) is ERR:
        return {"class": "ERR", "k": meas.k, "max_grade": meas.max_grade}
    raise UnknownOptionError(
        f"measure: a session can store error_rate, accuracy, mse, mae, f1 (any β), precision, "
        f"recall, macro_f1, weighted_f1, balanced_accuracy, mean, proportion, CostMatrixLoss, "
        f"and DCG/ERR for ranked pools; got {meas!r}."
    )


def _per_class_refused(name: str) -> UnknownOptionError:
    """A session reports one number per model, so a per-class measure is refused."""
    return UnknownOptionError(
        f"measure: a session reports one number per model, and {name} is one per class; use "
        "macro_f1, weighted_f1 or balanced_accuracy in the session, or evaluate() for "
        "per-class values."
    )


def _measure_from(spec: Mapping[str, Any]) -> Measure:
    cls = spec["class"]
    if cls == "FMeasure":
        return FMeasure(beta=float(spec["beta"]), pos_label=spec["pos_label"])
    if cls in ("MacroF1", "WeightedF1"):
        return (MacroF1 if cls == "MacroF1" else WeightedF1)(beta=float(spec["beta"]))
    if cls == "Precision":
        return Precision(pos_label=spec["pos_label"])
    if cls == "Recall":
        return Recall(pos_label=spec["pos_label"])
    if cls == "CostMatrixLoss":
        return CostMatrixLoss(np.asarray(spec["cost_matrix"]), labels=spec["labels"])
    if cls == "DCG":
        return DCG(k=spec["k"])  # type: ignore[return-value]
    if cls == "ERR":
        return ERR(k=spec["k"], max_grade=spec["max_grade"])  # type: ignore[return-value]
    simple: dict[str, type[Measure]] = {
        "ErrorRate": ErrorRate,
        "Accuracy": Accuracy,
        "SquaredError": SquaredError,
        "AbsoluteError": AbsoluteError,
        "LabelMean": LabelMean,
        "LabelProportion": LabelProportion,
        "BalancedAccuracy": BalancedAccuracy,
    }
    if cls not in simple:
        raise StoreError(f"store: unknown measure class {cls!r} in the plan.")
    return simple[cls]()


def _coerce_label(value: Any, label_space: Sequence[Any] | None, name: str) -> Any:
    """A label given loosely (e.g. ``"1"`` from a command line) in the label space's type."""
    if label_space is None:
        return value
    v = _py(value)
    if label_space and isinstance(label_space[0], int) and isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            pass
    elif label_space and isinstance(label_space[0], str) and not isinstance(v, str):
        v = str(v)
    if v not in label_space:
        raise LabelSpaceError(f"{name}: {value!r} is not in the label space {list(label_space)}.")
    return v


class PoolHash:
    """:func:`_fingerprint` fed a chunk at a time, in its order: the ids (:meth:`ids`), every
    model's predictions (:meth:`model`, then :meth:`rows`), the costs, a ranked pool's
    structure and the decisions (:meth:`finish`). The digest is the whole arrays' bit for
    bit: SHA-256 is one stream, and the id list's JSON is cut between items."""

    def __init__(self, integer: bool) -> None:
        self._h = hashlib.sha256()
        self._integer = integer
        self._first = True  # no id yet
        self._open = not integer  # the id list's JSON is not closed yet
        kind = b"int64 ids" if integer else b"str ids"
        self._h.update(b"activeeval-pool-v1\x00" + kind + b"\x00")

    def ids(self, chunk: NDArray[Any]) -> None:
        """The next ids, in position order."""
        if self._integer:
            self._h.update(np.ascontiguousarray(chunk, dtype="<i8").tobytes())
            return
        body = json.dumps(chunk.tolist(), separators=(",", ":"))[1:-1]  # the items, bare
        if body:
            self._h.update((b"[" if self._first else b",") + body.encode())
            self._first = False

    def model(self, j: int, shape: tuple[int, ...]) -> None:
        """Model ``j``'s predictions follow (their whole shape)."""
        self._end_ids()
        self._h.update(f"\x00model {j} {shape}\x00".encode())

    def rows(self, chunk: NDArray[np.float64]) -> None:
        """The next rows of the current model's predictions (or decisions)."""
        self._h.update(_f64(chunk))

    def _end_ids(self) -> None:
        if self._open:
            self._h.update(b"[]" if self._first else b"]")
            self._open = False

    def finish(
        self,
        costs: NDArray[Any] | None,
        ranking: Sequence[tuple[NDArray[np.int64], str | None]] | None = None,
        decisions: Sequence[NDArray[np.float64] | None] = (),
    ) -> str:
        """The hex digest, after the costs, a ranked pool's structure and the decisions."""
        self.tail(costs, ranking)
        for j, f in enumerate(decisions):
            if f is not None:
                self.decision(j)
                self.rows(f)
        return self._h.hexdigest()

    def tail(
        self,
        costs: NDArray[Any] | None,
        ranking: Sequence[tuple[NDArray[np.int64], str | None]] | None = None,
    ) -> None:
        """The costs and a ranked pool's structure (:meth:`finish`'s first part)."""
        self._end_ids()
        h = self._h
        h.update(b"\x00costs\x00")
        h.update(b"none" if costs is None else _f64(costs))
        for j, (offsets, items) in enumerate(ranking or ()):
            h.update(f"\x00ranking {j}\x00".encode())
            h.update(np.ascontiguousarray(offsets, dtype="<i8").tobytes())
            h.update(b"\x00items\x00" + (b"none" if items is None else items.encode()))

    def decision(self, j: int) -> None:
        """Model ``j``'s stored decisions follow (after :meth:`tail`, fed by :meth:`rows`)."""
        self._h.update(f"\x00decision {j}\x00".encode())

    def digest(self) -> str:
        """The hex digest after :meth:`tail` and any decisions."""
        return self._h.hexdigest()


def _fingerprint(
    ids: NDArray[Any],
    predictions: Sequence[NDArray[np.float64]],
    costs: NDArray[Any] | None,
    ranking: Sequence[tuple[NDArray[np.int64], str | None]] | None = None,
    decisions: Sequence[NDArray[np.float64] | None] = (),
) -> str:
    """SHA-256 over the pool ids, every model's prediction array and the costs (and, for a
    ranked pool, every model's query offsets and item ids; and any model's stored decision,
    which a store without one leaves out, so its fingerprint is unchanged)."""
    h = PoolHash(ids.dtype.kind == "i")
    for rows in row_chunks(ids.shape[0]):  # a chunk at a time: no copy of a whole array
        h.ids(ids[rows])
    for j, arr in enumerate(predictions):
        h.model(j, arr.shape)
        for rows in row_chunks(arr.shape[0]):
            h.rows(arr[rows])
    return h.finish(costs, ranking, decisions)


def _item_list(items: NDArray[Any]) -> list[Any]:
    """Item ids as plain ints or strings (what JSON and a labels file can hold)."""
    vals = [_py(v) for v in items.tolist()]
    if all(isinstance(v, str) for v in vals):
        blank = next((v for v in vals if v != v.strip() or not v), None)
        if blank is not None:
            raise RankingItemsError(
                f"items: item id {blank!r} is empty or has leading or trailing blanks, which a "
                "labels file cannot reproduce; strip the item ids first."
            )
        return vals
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return vals
    raise RankingItemsError(
        f"items: a session stores item ids that are all integers or all strings; got "
        f"{vals[:5]}. Map the item ids to integers or strings first."
    )


def _prediction_array(pred: Predictive) -> tuple[str, NDArray[np.float64], list[Any] | None]:
    if isinstance(pred, Categorical):
        return "categorical", pred.proba, _canonical_labels(pred.labels, "labels")
    if isinstance(pred, Gaussian):
        return "gaussian", np.column_stack([pred.mean, pred.var]), None
    raise ShapeError(
        f"pools: a session stores Categorical (class probabilities) or Gaussian (mean, var) "
        f"predictions, got {type(pred).__name__}."
    )


def _predictive_from(kind: str, arr: NDArray[np.float64], labels: Sequence[Any] | None) -> Any:
    if kind == "categorical":
        return Categorical(arr, labels=np.asarray(labels))
    return Gaussian(arr[:, 0].copy(), arr[:, 1].copy())
