"""Argument checks at the public boundary.

Each message names the offending argument and says how to fix it (the classes are in
:mod:`activeeval.errors`). Below the public boundary the math works on trusted arrays.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from . import _chunks
from ._chunks import chunked_sum, row_chunks, uniform
from .errors import (
    BudgetError,
    EmptyPoolError,
    InvalidCostsError,
    InvalidLevelError,
    InvalidRandomStateError,
    NonFiniteError,
    ProbabilityRowsError,
    ShapeError,
    UnknownOptionError,
)

#: Rows of a probability matrix must sum to one within this absolute tolerance.
PROBABILITY_ROW_TOL = 1e-6


def is_dask(obj: Any) -> bool:
    """Whether ``obj`` is a Dask collection (told by its type's module: Dask is not imported
    for the question)."""
    return type(obj).__module__.split(".")[0] == "dask"


def dask_values(f: Any, name: str) -> Any:
    """Per-instance values given with a Dask pool (``costs=``, ``prediction=``): a Dask array
    (its chunk sizes known), a Dask Series' array, or a NumPy array; a Dask DataFrame is
    refused, not brought to this process."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(f, dd.DataFrame):
        raise ShapeError(
            f"{name}: expected a 1-d array, got a Dask DataFrame of columns {list(f.columns)}; "
            "pass one of its columns (frame['cost'])."
        )
    if isinstance(f, dd.Series):
        return f.to_dask_array(lengths=True)
    if isinstance(f, da.Array):
        return f.compute_chunk_sizes() if any(math.isnan(c) for c in f.chunks[0]) else f
    return np.asarray(f)


def check_same_ids(objs: Sequence[Any], names: Sequence[str]) -> None:
    """Refuse Dask data frames whose ``id`` columns differ (in value or order): the models of
    a Dask pool are paired row by row, as arrays are (one pass over the ids)."""
    import dask.array as da
    import dask.dataframe as dd

    framed = [(o, n) for o, n in zip(objs, names, strict=True)
              if isinstance(o, dd.DataFrame) and "id" in o.columns]  # fmt: skip
    if len(framed) < 2:
        return
    first = framed[0][0]["id"].to_dask_array(lengths=True)
    for obj, name in framed[1:]:
        ids = obj["id"].to_dask_array(lengths=True)
        if ids.shape != first.shape or bool(da.any(ids.rechunk(first.chunks) != first).compute()):
            raise ShapeError(
                f"{name}: its ids are not {framed[0][1]}'s in the same order; Dask pools of "
                "several models are paired row by row: give every model the same instances, "
                "sorted the same way (e.g. by id)."
            )


def check_finite_array(
    x: ArrayLike, name: str, *, ndim: int | None = None, dtype: Any = float, start: int = 0
) -> NDArray[Any]:
    """Convert to an array of ``dtype``, check its dimensionality and that it is finite; an
    error names the entry with its row counted from ``start`` (``x`` a chunk of rows)."""
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name}: cannot be read as a numeric array ({exc}).") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ShapeError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}.")
    if arr.size and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))[0]
        where = np.unravel_index(bad, arr.shape)
        at = tuple(int(i) + (start if d == 0 else 0) for d, i in enumerate(where))
        raise NonFiniteError(
            f"{name}: entry {at} is {arr.ravel()[bad]}; "
            "all values must be finite. Drop or impute those instances first."
        )
    return arr


def check_probability_rows(proba: ArrayLike, name: str = "proba") -> NDArray[np.float64]:
    """Validate an ``(m, K)`` matrix of class probabilities.

    Two passes over the matrix on the success path (row sums and the minimum): non-finite
    entries make their row sum non-finite, and non-negative entries whose rows sum to one
    cannot exceed one (beyond the tolerance). The full diagnosis runs only on failure.
    """
    try:
        p = np.asarray(proba, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"{name}: cannot be read as a numeric array ({exc}).") from exc
    if p.ndim != 2:
        raise ShapeError(f"{name}: expected a 2-d array, got shape {p.shape}.")
    m, k = p.shape
    if m == 0:
        raise EmptyPoolError(f"{name}: the pool is empty (0 rows); pass at least one instance.")
    if k < 1:
        raise ShapeError(f"{name}: needs at least one class column, got shape {p.shape}.")
    for rows in row_chunks(m):  # a chunk at a time: no temporary the size of the pool
        check_rows(p[rows], rows.start, name)
    return p


def _row_sums(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """``a.sum(axis=1)``, bit for bit; below 8 columns (where numpy adds a row's entries in
    order, not pairwise) column by column: numpy reduces short rows one at a time, 40 times
    slower for two classes."""
    if a.shape[1] >= 8:
        return np.asarray(a.sum(axis=1), dtype=float)
    sums = a[:, 0].copy()
    for j in range(1, a.shape[1]):
        sums += a[:, j]
    return sums


def check_rows(chunk: NDArray[np.float64], start: int, name: str) -> None:
    """:func:`check_probability_rows` on the rows of ``chunk``, the first being row ``start``
    of the pool (a chunk of it here, or a cluster's partition); errors name the pool's row."""
    sums = _row_sums(chunk)
    if not np.isfinite(sums).all():
        check_finite_array(chunk, name, start=start)  # raises NonFiniteError naming the entry
    if chunk.min() < 0.0:
        bad = start + int(np.flatnonzero((chunk < 0.0).any(axis=1))[0])
        raise ProbabilityRowsError(
            f"{name}: row {bad} has a probability outside [0, 1]; pass class probabilities "
            "(e.g. predict_proba output), not scores or log-probabilities."
        )
    off = np.abs(sums - 1.0) > PROBABILITY_ROW_TOL
    if off.any():
        bad = int(np.flatnonzero(off)[0])
        raise ProbabilityRowsError(
            f"{name}: row {start + bad} sums to {sums[bad]:.6g}; rows must sum to 1 "
            f"(±{PROBABILITY_ROW_TOL:g}). Pass normalized class probabilities, "
            "e.g. predict_proba output."
        )


def check_costs(costs: ArrayLike | None, n: int, name: str = "costs") -> NDArray[np.float64] | None:
    """Validate per-instance labeling costs: shape ``(n,)``, finite, strictly positive."""
    if costs is None:
        return None
    c = check_finite_array(costs, name, ndim=1)
    if c.shape[0] != n:
        raise ShapeError(f"{name}: has {c.shape[0]} entries but the pool has {n} instances.")
    return check_cost_values(c, name)


def check_cost_values(
    c: NDArray[np.float64], name: str = "costs", start: int = 0
) -> NDArray[np.float64]:
    """Costs (finite) strictly positive; a refusal names the entry counted from ``start``
    (``c`` a chunk of the pool's)."""
    if (c <= 0).any():
        bad = int(np.flatnonzero(c <= 0)[0])
        raise InvalidCostsError(
            f"{name}: entry {start + bad} is {c[bad]:g}; labeling costs must be strictly "
            "positive (Thm 4.2 assumes λ(x) ≥ ε > 0). Give free instances a small positive cost."
        )
    return c


def decisions_per_model(prediction: Any, k: int) -> list[Any]:
    """A comparison's ``prediction=``: one decision array (or None) per model of the ``k``,
    as a list or tuple, or a (k, m) array (a row per model)."""
    if isinstance(prediction, np.ndarray) and prediction.ndim == 2:
        prediction = list(prediction)
    if not isinstance(prediction, list | tuple) or len(prediction) != k:
        got = (
            f"{len(prediction)}"
            if isinstance(prediction, list | tuple)
            else f"{type(prediction).__name__} of shape {np.shape(prediction)}"
        )
        raise ShapeError(
            f"prediction: a comparison takes one decision array (or None) per model, a list "
            f"of {k}; got {got}."
        )
    return list(prediction)


def refuse_ranked_decision(prediction: Any) -> None:
    """A ranked pool's decision is its ranking: ``prediction=`` is refused, not ignored."""
    if prediction is not None:
        raise ShapeError("prediction: a ranked pool's decision is its ranking; drop prediction=.")


def budget_number(budget: Any) -> float:
    """A budget as a finite number (what :func:`check_budget` checks before the costs)."""
    try:
        b = float(budget)
    except (TypeError, ValueError) as exc:
        raise BudgetError(f"budget: must be a number, got {budget!r}.") from exc
    if not math.isfinite(b):
        raise BudgetError(f"budget: must be a finite number, got {budget!r}.")
    return b


def check_budget(budget: float, costs: NDArray[np.float64] | None) -> float:
    """A budget that buys at least one label: a whole number of labels, or cost units."""
    b = budget_number(budget)
    if costs is None:
        if b < 1:
            raise BudgetError(f"budget: {budget!r} buys no label; pass at least 1 label.")
        if b != int(b):
            raise BudgetError(f"budget: a label budget must be a whole number, got {budget!r}.")
    elif b < costs.min():
        raise BudgetError(
            f"budget: {budget!r} cost units buy no label (the cheapest instance costs "
            f"{costs.min():.4g}); raise the budget."
        )
    return b


def check_max_draws(max_draws: int | None, b: float, lam: Any) -> int:
    """The caller's cap on draws, a whole number ≥ 1, or the default: 20 per label the budget
    buys, plus 1,000 (repeats of labeled instances are free but count). The mean cost: the
    costs ``lam``'s, summed a chunk at a time as a cluster's partitions add them (or what a
    Dask pool's passes found, ``lam.mean()``)."""
    if max_draws is None:
        if lam is None:
            return int(20 * b + 1000)
        mean = chunked_sum(lam) / lam.shape[0] if isinstance(lam, np.ndarray) else lam.mean()
        return int(20 * (b / mean) + 1000)
    if isinstance(max_draws, bool) or not isinstance(max_draws, (int, np.integer)) or max_draws < 1:
        raise BudgetError(
            f"max_draws: must be a whole number of draws ≥ 1, got {max_draws!r}; omit it for "
            "the default (20 per label the budget buys, plus 1,000)."
        )
    return int(max_draws)


def check_level(level: float, name: str = "level") -> float:
    """A confidence level (or significance level) strictly between 0 and 1."""
    try:
        lv = float(level)
    except (TypeError, ValueError) as exc:
        raise InvalidLevelError(f"{name}: must be a number in (0, 1), got {level!r}.") from exc
    if not (0.0 < lv < 1.0):
        raise InvalidLevelError(f"{name}: must lie strictly between 0 and 1, got {level!r}.")
    return lv


def check_option(value: str, choices: tuple[str, ...] | list[str], name: str) -> str:
    """A string option among documented ``choices`` (case-insensitive, '-' and '_' alike)."""
    if not isinstance(value, str):
        raise UnknownOptionError(f"{name}: expected one of {list(choices)}, got {value!r}.")
    key = value.lower().replace("-", "_")
    normalized = {c.lower().replace("-", "_"): c for c in choices}
    if key not in normalized:
        raise UnknownOptionError(f"{name}: unknown value {value!r}; choose one of {list(choices)}.")
    return normalized[key]


#: Largest seed a session store keeps: SQLite's INTEGER is a signed 64-bit integer.
MAX_STORED_SEED = 2**63 - 1

_SEED_CHOICES = (
    "pass None (fresh entropy from the operating system), a non-negative integer such as 0, "
    "a numpy.random.Generator or a numpy.random.SeedSequence"
)


def check_seed(seed: Any, name: str = "seed", *, maximum: int | None = None) -> int:
    """A non-negative integer seed (a bool is not one), at most ``maximum`` if given."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidRandomStateError(
            f"{name}: must be a non-negative integer, got {seed!r}; {_SEED_CHOICES}."
            if maximum is None
            else f"{name}: must be a non-negative integer such as 0, got {seed!r}."
        )
    value = int(seed)
    if value < 0:
        raise InvalidRandomStateError(
            f"{name}: must be a non-negative integer, got {value}; use e.g. {-value} instead."
        )
    if maximum is not None and value > maximum:
        raise InvalidRandomStateError(
            f"{name}: {value} is too large; a session store keeps seeds up to 2**63 - 1 "
            f"({maximum}). Pass a smaller non-negative integer, e.g. {value % (maximum + 1)}."
        )
    return value


def check_random_state(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """The generator ``np.random.default_rng(random_state)``, for whatever numpy accepts (None,
    a non-negative integer or sequence of them, a SeedSequence, BitGenerator or Generator,
    returned as is); anything else, and a bool, is refused naming ``name``."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, bool | int | np.integer):
        return np.random.default_rng(check_seed(random_state, name))
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidRandomStateError(
            f"{name}: {reprlib.repr(random_state)} cannot seed numpy's random generator ({exc}); "
            f"{_SEED_CHOICES}."
        ) from exc


def check_same_length(name_a: str, a: NDArray[Any], name_b: str, b: NDArray[Any]) -> None:
    """Two per-instance arrays must describe the same instances."""
    if a.shape[0] != b.shape[0]:
        raise ShapeError(
            f"{name_b}: has {b.shape[0]} entries but {name_a} has {a.shape[0]}; "
            "they must describe the same instances."
        )


def _one_positive_value(pool_weights: Any, n: int) -> bool:
    """Whether ``pool_weights`` is one finite positive float repeated over a pool above one
    chunk with no memory per instance (:func:`~activeeval._chunks.uniform`'s view)."""
    return (
        isinstance(pool_weights, np.ndarray)
        and pool_weights.dtype == np.float64
        and pool_weights.shape == (n,)
        and pool_weights.strides == (0,)
        and n > _chunks.ROWS
        and bool(np.isfinite(pool_weights[0]) and pool_weights[0] > 0)
    )


def pool_distribution(n: int, pool_weights: ArrayLike | None) -> NDArray[np.float64]:
    """p(x) over the pool: uniform, or proportional to ``pool_weights``."""
    if n == 0:
        raise EmptyPoolError("pool: the pool is empty; pass at least one instance.")
    if pool_weights is None:
        return uniform(n)
    if _one_positive_value(pool_weights, n):  # uniform()'s view: checked by its one value
        return uniform(n)
    pw = check_finite_array(pool_weights, "pool_weights", ndim=1)
    if pw.shape[0] != n:
        raise ShapeError(f"pool_weights: has {pw.shape[0]} entries but the pool has {n}.")
    with np.errstate(over="ignore"):  # an overflowing sum is rescaled below
        total = float(pw.sum())
    if (pw < 0).any():
        bad = int(np.flatnonzero(pw < 0)[0])
        raise ShapeError(
            f"pool_weights: entry {bad} is {pw[bad]:g}; weights of the test distribution must "
            "be non-negative (0 leaves an instance out)."
        )
    if total <= 0:
        raise ShapeError(
            "pool_weights: sum to 0; give some instance a positive weight (the test "
            "distribution is proportional to them)."
        )
    if not np.finfo(np.float64).tiny <= total < math.inf:
        # A subnormal or overflowing sum: scale by a power of two first (exact), so that the
        # largest weight lies in [0.5, 1); dividing by a subnormal can overflow (numpy < 2).
        pw = np.ldexp(pw, -int(np.frexp(pw.max())[1]))
        total = float(pw.sum())
    return pw / total


def real_number(value: Any) -> float:
    """``value`` as a float if it is a real number (a bool is not), else NaN — for checks
    that then refuse non-finite or out-of-range values, naming the argument."""
    real = isinstance(value, int | float | np.integer | np.floating)
    return float(value) if real and not isinstance(value, bool) else math.nan


def check_safeguards(mix: float, floor: float = 0.0) -> None:
    """The defensive-mixture weight in [0, 1] and the floor in [0, 0.5) (NaN refused)."""
    if not 0.0 <= floor < 0.5:
        raise ShapeError(f"floor: must lie in [0, 0.5), got {floor}.")
    if not 0.0 <= mix <= 1.0:
        raise ShapeError(f"mix: the defensive-mixture weight must lie in [0, 1], got {mix}.")


#: The most groups ``groups=`` takes (each costs a pass over its members and its own
#: estimate; beyond, the per-group intervals are too many to read).
MAX_GROUPS = 1000


def check_groups(
    groups: Any, m: int, p: NDArray[np.float64]
) -> tuple[tuple[Any, ...], NDArray[np.intp]]:
    """The distinct group labels (sorted) and each instance's group code, refusing a grouping
    that is not one label per pool instance, has a missing label, too many groups or a group
    without test mass."""
    if isinstance(groups, pd.Series) and not groups.index.equals(pd.RangeIndex(len(groups))):
        raise ShapeError(
            "groups: a Series is read in the pool's order, and this one's index is not "
            "0 … m − 1 (it would be ignored); pass groups.to_numpy() in the pool's order, or "
            "reset its index."
        )
    try:
        # A list keeps its values' types: 1 and "1" stay two labels (and are refused below)
        # instead of being merged as strings.
        arr = np.asarray(groups, dtype=object if isinstance(groups, list | tuple) else None)
    except (TypeError, ValueError) as exc:
        raise ShapeError(f"groups: cannot be read as an array of labels ({exc}).") from exc
    if arr.ndim != 1 or arr.shape[0] != m:
        raise ShapeError(
            f"groups: expected one group label per pool instance ({m}), got shape {arr.shape}."
        )
    missing = np.asarray(pd.isna(arr), dtype=bool)  # NaN, None, NaT, pandas' NA
    if missing.any():
        raise ShapeError(
            f"groups: {int(missing.sum())} instances have no group (first at position "
            f"{int(np.flatnonzero(missing)[0])}); give every instance a label, e.g. 'other'."
        )
    try:
        labels, codes = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise ShapeError(f"groups: labels of mixed types cannot be ordered ({exc}).") from exc
    if labels.shape[0] > MAX_GROUPS:
        raise ShapeError(
            f"groups: {labels.shape[0]} groups; at most {MAX_GROUPS} are estimated at once."
        )
    mass = np.bincount(codes, weights=p, minlength=labels.shape[0])
    if np.any(mass <= 0):
        empty = labels[np.flatnonzero(mass <= 0)[0]]
        empty = empty.item() if hasattr(empty, "item") else empty
        raise ShapeError(
            f"groups: group {empty!r} has no test mass (its pool_weights are all zero); drop "
            "it or give it weight."
        )
    return tuple(x.item() if hasattr(x, "item") else x for x in labels), codes.astype(np.intp)
