"""Label acquisition (thesis Algorithm 2): the label books and the walk of the draw sequence.

:func:`_walk_block` is Algorithm 2's stopping rule over one block of draws, a pure vectorised
function: a draw of an instance already in the campaign is free, a new instance costs its label
(1, or its cost λ(x)), and the walk stops at the first new instance the budget left cannot pay.
:func:`~activeeval.evaluate` / :func:`~activeeval.compare` (asking an oracle, drawing from a
random generator) and a :class:`~activeeval.Session` (handing out ids, drawing deterministic
blocks from its seed) both walk with it, so a session buys what ``evaluate`` buys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import LabelSpaceError, ShapeError
from .predictive import Predictive, check_labels

#: Why a walk stops: the next new instance costs more than the budget left; every instance
#: with q > 0 is in the campaign; the draw cap is reached; the caller's count of new
#: instances is reached (a session's hand-out of k ids; the walk resumes there).
STOP_REASONS = ("budget", "pool", "max_draws", "need")


@dataclass(frozen=True)
class _WalkStep:
    """What the walk does with one block of draws.

    ``consumed``: the block's leading draws the campaign passes (it keeps them; a draw left
    unconsumed by a ``"budget"`` or ``"need"`` stop is first in line when the walk resumes).
    ``bought``: offsets into the block of the draws that take a new instance, in draw order.
    ``cost``: their summed price. ``left``: instances with q > 0 still outside the campaign.
    ``stop``: one of :data:`STOP_REASONS`, or None when the block is used up and the walk goes
    on (for an empty block: it needs draws)."""

    consumed: int
    bought: NDArray[np.intp]
    cost: float
    left: int
    stop: str | None


def _budget_room(budget: float, spent: float) -> float:
    """The budget left, with the tolerance that lets a label cost exactly what is left."""
    return budget - spent + 1e-9 * max(budget, 1.0)


def _first_true_run(mask: NDArray[np.bool_]) -> int:
    """Length of the leading run of True values."""
    return int(mask.shape[0]) if mask.all() else int(np.argmin(mask))


def _walk_block(
    block: NDArray[np.intp],
    taken: NDArray[np.bool_],
    price: NDArray[np.float64],
    room: float,
    *,
    support: NDArray[np.bool_],
    left: int,
    draws_left: int,
    need: int | None = None,
) -> _WalkStep:
    """Algorithm 2's walk over one block of i.i.d. draws, vectorised within the block.

    Parameters
    ----------
    block : (n,) int array
        Pool positions of the next draws, in draw order.
    taken : (m,) bool array
        Instances already in the campaign (labeled, or handed out); their draws are free.
    price : (m,) float array
        Each instance's label price (ones without costs).
    room : float
        Budget left, tolerance included (:func:`_budget_room`).
    support : (m,) bool array
        Where q > 0; the walk ends once all of it is taken.
    left : int
        Instances of ``support`` not taken yet.
    draws_left : int
        Draws the cap still allows; the block is cut there.
    need : int, optional
        Stop once this many new instances are taken.

    Returns
    -------
    _WalkStep
        The first stop in draw order: the walk is over before the block (``"pool"``,
        ``"max_draws"``); the last instance of the support is taken (``"pool"``, ending at
        the draw that took it); the next new instance costs more than ``room`` (``"budget"``)
        or ``need`` is reached before it (``"need"``), that draw left unconsumed; the block is
        used up with ``need`` reached (``"need"``) or at the cap (``"max_draws"``).
    """
    none = np.empty(0, dtype=np.intp)
    if left == 0:
        return _WalkStep(0, none, 0.0, left, "pool")
    if draws_left <= 0:
        return _WalkStep(0, none, 0.0, left, "max_draws")
    if block.size == 0:
        return _WalkStep(0, none, 0.0, left, None)
    block = block[:draws_left]
    uniq, first = np.unique(block, return_index=True)
    fresh = np.sort(first[~taken[uniq]])  # first draw of each new instance
    cost = price[block[fresh]]
    n_aff = _first_true_run(np.cumsum(cost) <= room)
    n_take = n_aff if need is None else min(n_aff, need)
    in_support = np.cumsum(support[block[fresh[:n_take]]])
    if n_take and int(in_support[-1]) >= left:
        # Nothing left to buy: end at the draw that took the last instance.
        n_take = int(np.argmax(in_support >= left)) + 1
        bought = fresh[:n_take]
        return _WalkStep(int(bought[-1]) + 1, bought, float(cost[:n_take].sum()), 0, "pool")
    bought = fresh[:n_take]
    spent = float(cost[:n_take].sum())
    left -= int(in_support[-1]) if n_take else 0
    if n_take < fresh.shape[0]:  # the next new instance waits, first in line
        waits = "budget" if n_aff <= n_take else "need"
        return _WalkStep(int(fresh[n_take]), bought, spent, left, waits)
    if need is not None and n_take == need:
        return _WalkStep(block.shape[0], bought, spent, left, "need")
    at_cap = "max_draws" if block.shape[0] == draws_left else None
    return _WalkStep(block.shape[0], bought, spent, left, at_cap)


# --------------------------------------------------------------------------- label books
class _LabelBook:
    """Labels acquired so far, keyed by pool index; lookups are vectorised."""

    def __init__(self, m: int) -> None:
        self.known = np.zeros(m, dtype=bool)
        self.order: list[NDArray[np.intp]] = []
        self.values: list[NDArray[Any]] = []

    def add(self, idx: NDArray[np.intp], y: NDArray[Any]) -> None:
        self.known[idx] = True
        self.order.append(idx)
        self.values.append(y)

    def acquired(self) -> tuple[NDArray[np.intp], NDArray[Any]]:
        if not self.order:
            return np.empty(0, dtype=np.intp), np.empty(0)
        return np.concatenate(self.order), np.concatenate(self.values)

    def export(self) -> tuple[NDArray[np.intp], Any]:
        """What :attr:`OracleError.acquired` hands back: (indices, labels)."""
        return self.acquired()

    def lookup(self, idx: NDArray[np.intp]) -> NDArray[Any]:
        keys, vals = self.acquired()
        order = np.argsort(keys)
        pos = np.searchsorted(keys[order], idx)
        return vals[order][pos]


class _GradeBook(_LabelBook):
    """Labels of ranked queries. A query's label is the vector of its items' grades: the book
    holds one int64 grade array per labeled query (an object array per :meth:`lookup`), and
    :func:`_flat_grades` turns them into a result's flat grades and offsets.

    ``lengths[i]`` is the number of items to label for query i: its list (one ranker) or the
    union of both lists (:func:`~activeeval.ranking.ranking_union` order, comparisons)."""

    def __init__(self, lengths: NDArray[np.int64], n_grades: int) -> None:
        super().__init__(lengths.shape[0])
        self.lengths, self.n_grades = lengths, n_grades

    def accept(self, got: Any, idx: NDArray[np.intp]) -> NDArray[np.object_]:
        """The oracle's grades for the queries ``idx``, validated: one array per query."""
        lens = self.lengths[idx]
        if isinstance(got, list | tuple) and len(got) and np.ndim(got[0]) > 0:
            # One array per query: a loop over the oracle's answer, not over the pool.
            if len(got) != idx.shape[0]:
                raise ShapeError(
                    f"oracle: returned {len(got)} grade lists for {idx.shape[0]} queries."
                )
            sizes = np.array([np.size(g) for g in got], dtype=np.int64)
            if (sizes != lens).any():
                j = int(np.flatnonzero(sizes != lens)[0])
                raise ShapeError(
                    f"oracle: returned {sizes[j]} grades for query {int(idx[j])}, which has "
                    f"{lens[j]} items to label."
                )
            got = np.concatenate([np.ravel(g) for g in got]) if len(got) else np.empty(0)
        y = np.asarray(got)
        total = int(lens.sum())
        if y.shape != (total,):
            raise ShapeError(
                f"oracle: returned shape {y.shape} for {idx.shape[0]} queries with {total} items "
                "to label; return the grades of each query's items (in the ranker's order; for "
                "a comparison in ranking_union order) concatenated, or one array per query."
            )
        if y.size and (
            y.dtype.kind not in "iuf"
            or not np.isfinite(y).all()
            or (y != np.round(y)).any()
            or y.min() < 0
            or y.max() > self.n_grades - 1
        ):
            raise LabelSpaceError(
                f"oracle: grades must be integers 0, ..., {self.n_grades - 1} (the relevance "
                f"model's grade scale), got values such as {y[:5].tolist()}."
            )
        return _grade_rows(y.astype(np.int64), _offsets(lens))

    def export(self) -> tuple[NDArray[np.intp], Any]:
        """(query indices, list of each query's grade array) — nothing is lost on a failure."""
        idx, rows = self.acquired()
        return idx, list(rows)


def _offsets(lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    """Offsets of consecutive runs of these lengths: 0, l₀, l₀ + l₁, …"""
    offsets = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _grade_rows(flat: NDArray[np.int64], offsets: NDArray[np.int64]) -> NDArray[np.object_]:
    """Flat grades as one array per query (an object array; the inverse of
    :func:`_flat_grades`)."""
    rows = np.empty(offsets.shape[0] - 1, dtype=object)
    for j in range(rows.shape[0]):  # element by element: equal lengths must not broadcast
        rows[j] = flat[offsets[j] : offsets[j + 1]]
    return rows


def _flat_grades(rows: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Ranked labels (one grade array per draw) as flat grades and each draw's offsets — the
    ``labels`` and ``label_offsets`` a ranked pool's result reports."""
    lens = np.fromiter((a.shape[0] for a in rows), dtype=np.int64, count=rows.shape[0])
    flat = np.concatenate(list(rows)) if rows.shape[0] else np.empty(0, np.int64)
    return flat, _offsets(lens)


Check = Callable[[Any, NDArray[np.intp]], NDArray[Any]]


def _check_oracle_labels(predictive: Predictive, got: Any, expected: int) -> NDArray[Any]:
    y = np.asarray(got)
    if y.shape != (expected,):
        raise ShapeError(f"oracle: returned shape {y.shape} for {expected} indices.")
    return check_labels(predictive, y, "oracle")


def _label_check(predictive: Predictive) -> Check:
    """The oracle's answer for ``idx`` as one label per index, in the model's label space."""
    return lambda got, idx: _check_oracle_labels(predictive, got, idx.shape[0])
