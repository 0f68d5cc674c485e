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
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ROWS",
    "chunk_ends",
    "chunked_sum",
    "dot",
    "draw_chunks",
    "grouped",
    "inverse_cdf",
    "row_chunks",
    "span_ends",
    "span_rows",
    "uniform",
    "weighted_sum",
    "within_chunk",
]

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


#: The longest dot product :func:`dot` leaves to BLAS in one call.
DOT_ROWS = 1 << 13


def dot(a: NDArray[Any], b: NDArray[Any]) -> float:
    """Σ a·b: ``a @ b`` a block of :data:`DOT_ROWS` at a time, the blocks' products added in
    order. BLAS splits a longer dot product among its threads (OpenBLAS above 10,000
    entries), and its rounding then depends on how many it has: the same pool would give
    another sum on a machine with more cores, or on a cluster's worker (which Dask runs with
    one BLAS thread). Blocks this short are summed by one thread, so the sum is the same
    everywhere; up to one block, it is ``a @ b`` itself."""
    n = a.shape[0]
    if n <= DOT_ROWS:
        return float(a @ b)
    total = 0.0
    for start in range(0, n, DOT_ROWS):
        total += float(a[start : start + DOT_ROWS] @ b[start : start + DOT_ROWS])
    return total


def weighted_sum(p: NDArray[np.float64], x: NDArray[Any]) -> float:
    """Σ p·x over a chunk: :func:`dot`, or where p is one value repeated (:func:`uniform`'s
    view) that value times Σ x — numpy's pairwise sum, faster and more accurate than a dot
    product with a zero stride, which numpy adds up one term at a time."""
    if p.strides == (0,) and p.shape[0]:
        return float(p[0] * x.sum())
    return dot(p, x)


def chunked_sum(x: NDArray[np.float64]) -> float:
    """Σ x a chunk of :data:`ROWS` at a time, the chunks' sums added in order: what a pass
    over the pool's chunks, here or on a cluster's partitions, adds up bit for bit (one chunk:
    ``x.sum()``)."""
    total = 0.0
    for rows in row_chunks(x.shape[0]):
        total += float(x[rows].sum())
    return total


def chunked_dot(a: NDArray[Any], b: NDArray[Any]) -> float:
    """Σ a·b a chunk of :data:`ROWS` at a time (each chunk's :func:`dot`), the chunks' sums
    added in order: what a pass over the pool's chunks, here or on a cluster's partitions,
    adds up bit for bit."""
    total = 0.0
    for rows in row_chunks(a.shape[0]):
        total += dot(a[rows], b[rows])
    return total


def chunk_ends(q: NDArray[np.float64], chunk: int) -> NDArray[np.float64]:
    """The running sums Σ_{j ≤ i} q_j at the last row i of every chunk of ``chunk`` rows
    (the last chunk may be shorter): exactly ``np.cumsum(q)`` there, computed a few
    :data:`ROWS` at a time with the sum so far carried in."""
    m = q.shape[0]
    build = span_rows(chunk)
    ends: list[NDArray[np.float64]] = []
    carry = np.zeros(1)
    for start in range(0, m, build):
        part, carry = span_ends(q[start : start + build], carry, chunk, start + build >= m)
        ends.append(part)
    return np.concatenate(ends) if ends else np.zeros(0)


def span_rows(chunk: int) -> int:
    """The rows :func:`chunk_ends` sums at a time: :data:`ROWS` (a whole number of chunks)."""
    return max(ROWS // chunk, 1) * chunk


def span_ends(
    qs: NDArray[np.float64], carry: NDArray[np.float64], chunk: int, last: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`chunk_ends` on one span of :func:`span_rows` rows, q there ``qs``: the running
    sums at its chunks' ends, continued from ``carry`` (the sum before the span, a 1-array),
    the span's own last sum included when it is the ``last`` one; and the carry on."""
    run = np.cumsum(np.concatenate([carry, qs]))[1:]
    at = np.arange(chunk - 1, run.shape[0], chunk)
    if last and (at.size == 0 or at[-1] != run.shape[0] - 1):
        at = np.append(at, run.shape[0] - 1)
    return run[at], run[-1:]


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
    chunks = draw_chunks(ends, u)
    idx = np.empty(u.shape[0], dtype=np.intp)
    qd = np.empty(u.shape[0])
    for j, at in grouped(chunks):
        start = j * chunk
        stop = min(start + chunk, m)
        carry = ends[j - 1] if j else 0.0
        local, qd[at], reached = within_chunk(read(start, stop), carry, ends[-1], u[at])
        if altered is not None and reached != ends[j]:
            altered(start, stop)
        idx[at] = start + local
    return np.minimum(idx, m - 1), qd


def draw_chunks(ends: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.intp]:
    """The chunk of each uniform's draw: its place among the normalized chunk ends."""
    return np.minimum(np.searchsorted(ends / ends[-1], u, side="right"), ends.shape[0] - 1)


def grouped(keys: NDArray[np.intp]) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """Each distinct key (ascending) with the positions holding it, in their order."""
    order = np.argsort(keys, kind="stable")  # the positions grouped by key, found once
    touched, first = np.unique(keys[order], return_index=True)
    bounds = np.append(first, order.shape[0])
    for j, lo, hi in zip(touched.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        yield j, order[lo:hi]


def within_chunk(
    qc: NDArray[np.float64], carry: float, total: float, u: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.float64], float]:
    """The draws of uniforms ``u`` within a chunk whose q is ``qc``, the running sum before it
    ``carry`` and Σq ``total``: their rows in the chunk, q at them, and the running sum at
    the chunk's end (its stored end, unless q changed since the ends were summed)."""
    run = np.cumsum(np.concatenate([[carry], qc]))[1:]
    local = np.minimum(np.searchsorted(run / total, u, side="right"), qc.shape[0] - 1)
    return local, qc[local], float(run[-1])
