"""Passes over the pool a chunk of rows at a time, so that the working memory of a pool-level
sum or map is a few chunks whatever the pool's size (``docs/guide/large-pools.md``).

A pool of at most :data:`ROWS` instances is one chunk: the arithmetic is then exactly that of
one whole-array pass, so results on such pools do not depend on the chunking. On larger pools
sums are added chunk by chunk (rounding differs from one pairwise sum over the whole array in
the last bits), except the cumulative sums of :func:`chunk_ends`, which are carried across
chunks and so equal ``np.cumsum`` bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import NDArray

__all__ = ["ROWS", "chunk_ends", "inverse_cdf", "row_chunks", "uniform", "weighted_sum"]

#: Rows per chunk of a whole-pool pass (2 MiB per float64 column).
ROWS = 1 << 18


def row_chunks(m: int, rows: int | None = None) -> Iterator[slice]:
    """Consecutive slices covering ``range(m)``, ``rows`` (default :data:`ROWS`) at a time."""
    size = ROWS if rows is None else rows
    for start in range(0, m, size):
        yield slice(start, min(start + size, m))


def uniform(m: int) -> NDArray[np.float64]:
    """The uniform distribution over m instances: ``np.full(m, 1/m)``, or above one chunk a
    read-only view of the one value (``np.broadcast_to``: no memory per instance)."""
    if m <= ROWS:
        return np.full(m, 1.0 / m)
    return np.broadcast_to(np.float64(1.0 / m), (m,))


def weighted_sum(p: NDArray[np.float64], x: NDArray[np.float64]) -> float:
    """Σ p·x over a chunk: ``p @ x``, or where p is one value repeated (:func:`uniform`'s
    view) that value times Σ x — numpy's pairwise sum, faster and more accurate than a dot
    product with a zero stride, which numpy adds up one term at a time."""
    if p.strides == (0,) and p.shape[0]:
        return float(p[0] * x.sum())
    return float(p @ x)


def chunk_ends(q: NDArray[np.float64], chunk: int) -> NDArray[np.float64]:
    """The running sums Σ_{j ≤ i} q_j at the last row i of every chunk of ``chunk`` rows
    (the last chunk may be shorter): exactly ``np.cumsum(q)`` there, computed a few
    :data:`ROWS` at a time with the sum so far carried in."""
    m = q.shape[0]
    build = max(ROWS // chunk, 1) * chunk
    ends: list[NDArray[np.float64]] = []
    carry = np.zeros(1)
    for start in range(0, m, build):
        run = np.cumsum(np.concatenate([carry, q[start : start + build]]))[1:]
        last = np.arange(chunk - 1, run.shape[0], chunk)
        if start + run.shape[0] == m and (last.size == 0 or last[-1] != run.shape[0] - 1):
            last = np.append(last, run.shape[0] - 1)
        ends.append(run[last])
        carry = run[-1:]
    return np.concatenate(ends) if ends else np.zeros(0)


def inverse_cdf(
    ends: NDArray[np.float64],
    chunk: int,
    m: int,
    u: NDArray[np.float64],
    read: Callable[[int, int], NDArray[np.float64]],
    altered: Callable[[int, int], None] | None = None,
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """``searchsorted(cumsum(q) / Σq, u, side="right")`` capped at m − 1, and q there, for
    uniforms ``u`` in [0, 1), from the chunk ends of q (:func:`chunk_ends`) and ``read(start,
    stop)`` giving q on a chunk's rows: a draw finds its chunk among the normalized ends, then
    its instance among that chunk's cumulative sums, continued from the previous chunk's end
    (bit for bit the whole pool's). ``altered(start, stop)`` is called (and should raise) when
    a chunk's q does not sum to its stored end."""
    total = ends[-1]
    chunks = np.minimum(np.searchsorted(ends / total, u, side="right"), ends.shape[0] - 1)
    idx = np.empty(u.shape[0], dtype=np.intp)
    qd = np.empty(u.shape[0])
    order = np.argsort(chunks, kind="stable")  # the draws grouped by chunk, found once
    touched, first = np.unique(chunks[order], return_index=True)
    bounds = np.append(first, order.shape[0])
    spans = zip(touched.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    for j, lo, hi in spans:
        start = j * chunk
        stop = min(start + chunk, m)
        qc = read(start, stop)
        carry = ends[j - 1] if j else 0.0
        run = np.cumsum(np.concatenate([[carry], qc]))[1:]
        if altered is not None and run[-1] != ends[j]:
            altered(start, stop)
        at = order[lo:hi]
        local = np.minimum(np.searchsorted(run / total, u[at], side="right"), stop - start - 1)
        idx[at] = start + local
        qd[at] = qc[local]
    return np.minimum(idx, m - 1), qd
