"""The pool-feature smoother of the model-assisted estimator.

A Gaussian-kernel smoother of the labeled draws' residuals over standardized pool features,
fitted leave-one-out so that each draw's control variate is free of its own label; see
the *Model-assisted estimator* page of the documentation
(``docs/how-it-works/model-assisted.md``), "Pool features", for the estimator and what was
measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_finite_array, real_number
from ..errors import ShapeError

#: Bandwidth h of the residual smoother's Gaussian kernel K(x, x') = exp(−|x − x'|²/(2h²)) on
#: standardized features (model-assisted page, "Pool features").
DEFAULT_BANDWIDTH = 0.3
#: The residual smoother's pseudo-count κ (model-assisted page, "Pool features").
SMOOTHER_PRIOR = 1.0
#: Kernel entries computed at once by the smoother (32 MB of float64; with the squared
#: distances and the mask of near entries about 70 MB at peak).
_KERNEL_BLOCK = 1 << 22


def _standardized(features: ArrayLike, m: int) -> NDArray[np.float64]:
    """The pool features as an (m, d) array with every column of positive variance scaled to
    mean 0 and variance 1 (constant columns carry nothing and are dropped); computed once
    per :class:`_SmootherBatch` for the same ``features`` object."""
    batch = _BATCH.get()
    if batch is not None:
        return batch.standardized(features, m)
    x, centre, sd = _feature_moments(features, m)
    keep = sd > 0
    return (x[:, keep] - centre[keep]) / sd[keep]


def _feature_moments(
    features: ArrayLike, m: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The pool features checked (dense, real, finite, one row per instance, columns that
    can be standardized) as an (m, d) array with its column means and standard deviations:
    what :func:`_standardized` needs, and all that validating them before labels are bought
    needs (without building the standardized copy)."""
    if hasattr(features, "toarray") or np.iscomplexobj(features):
        raise ShapeError(
            "features: need a dense real array; a sparse matrix (e.g. word counts) is best "
            "passed as a few dense components (e.g. TruncatedSVD), or as .toarray()."
        )
    x = check_finite_array(features, "features")
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] != m:
        raise ShapeError(
            f"features: need one row of numbers per pool instance, shape ({m}, d); got shape "
            f"{x.shape}. Encode categorical features numerically (e.g. one-hot) first."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        centre = x.mean(axis=0)
        sd = x.std(axis=0)
    if not (np.all(np.isfinite(centre)) and np.all(np.isfinite(sd))):
        j = int(np.flatnonzero(~(np.isfinite(centre) & np.isfinite(sd)))[0])
        raise ShapeError(
            f"features: column {j} has values too large to standardize (overflow); rescale "
            "it (e.g. to its logarithm or to units of its spread)."
        )
    return x, centre, sd


def _check_bandwidth(bandwidth: float) -> float:
    h = real_number(bandwidth)
    if not (math.isfinite(h) and 1e-100 < h < 1e100):
        raise ShapeError(
            f"bandwidth: the smoother's kernel bandwidth must be a positive number in "
            f"(1e-100, 1e100), got {bandwidth!r}; it is in units of the standardized features "
            f"(default {DEFAULT_BANDWIDTH})."
        )
    return h


def _kernel_block(
    zc: NDArray[np.float64],
    zu: NDArray[np.float64],
    su: NDArray[np.float64],
    scale: float,
    groups: NDArray[np.intp] | None,
    lo: int,
    units: NDArray[np.intp],
) -> NDArray[np.float64]:
    """K(x, x_i) = exp(−|x − x_i|²/(2h²)) for the pool rows ``zc`` (from row ``lo``) and the
    units ``zu`` (|zu|² = ``su``, ``scale`` = −1/(2h²)), 0 across ``groups``."""
    d2 = zc @ zu.T  # becomes −|x − x_i|²/(2h²) in place
    d2 *= -2.0
    d2 += np.einsum("ij,ij->i", zc, zc)[:, None]
    d2 += su[None, :]
    np.minimum(d2, 0.0, out=np.multiply(d2, scale, out=d2))
    # Weights below e^-50 ≈ 2e-22 of κ are 0: they cannot move s beyond rounding, and
    # products of such weights would underflow to subnormals. exp runs only on the rest — in
    # many dimensions a small share of the block, and exp is its costliest step.
    near = d2 >= -50.0
    if groups is not None:
        near &= groups[lo : lo + zc.shape[0], None] == groups[units][None, :]
    k = np.zeros_like(d2)
    np.exp(d2, out=k, where=near)
    return k


def _smoothed(
    z: NDArray[np.float64],
    units: NDArray[np.intp],
    resid: NDArray[np.float64],
    p: NDArray[np.float64],
    bandwidth: float,
    v: NDArray[np.float64] | None = None,
    groups: NDArray[np.intp] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """The residual smoother s(x) = Σ_{i ≠ x} K(x, x_i) r_i / (Σ_{i ≠ x} K(x, x_i) + κ) of the
    labeled ``units`` (sorted, distinct) with residual columns ``resid`` (n, c): its p-weighted
    pool mean (c,) and its values at the units (n, c), each unit's own term left out
    (model-assisted page, "Pool features"). With ``groups`` (a code per pool instance),
    K(x, x_i) = 0 unless x and x_i share their group.

    With the units' estimator weights ``v``, also what the jackknife needs to delete unit i
    from the smoother: with δ_i unit i's weight in both sums, ∂s(x)/∂δ_i = K(x, x_i)(r_i −
    s(x)) / (W(x) + κ), W = Σ K, and s₍ᵢ₎ ≈ s − ∂s/∂δ_i (the infinitesimal jackknife), giving
    the pool mean of s₍ᵢ₎ (n, c) and Σ_{j ≠ i} v_j s₍ᵢ₎(x_j) (n, c). Linearized, not exact:
    the exact deletion overstated the standard error where a unit has one or two labeled
    neighbours, whose shrinkage it halves (model-assisted page, "Pool features"). Each is a
    vector-matrix product with the kernel block, so the pass stays O(m·n·(d + c)). Blocks of
    pool rows keep memory bounded; squared distances come from |a|² + |b|² − 2a·b (BLAS)."""
    m, n = z.shape[0], units.shape[0]
    c = resid.shape[1]
    mean = np.zeros(c)
    at = np.zeros(resid.shape)
    # Σ_x p_x K_xi / (W_x + κ) and Σ_x p_x s_x K_xi / (W_x + κ); the same over the units with v.
    pk, psk, vk, vsk = np.zeros(n), np.zeros((n, c)), np.zeros(n), np.zeros((n, c))
    if z.shape[1] and n:
        zu = z[units]
        su = np.einsum("ij,ij->i", zu, zu)
        step = max(1, _KERNEL_BLOCK // n)
        scale = -0.5 / bandwidth**2
        for lo in range(0, m, step):
            zc = z[lo : lo + step]
            k = _kernel_block(zc, zu, su, scale, groups, lo, units)
            a, b = np.searchsorted(units, [lo, lo + zc.shape[0]])
            own = np.arange(a, b)
            here = units[own] - lo
            k[here, own] = 0.0  # a unit never smooths its own residual
            inv_den = 1.0 / (k.sum(axis=1) + SMOOTHER_PRIOR)
            s = (k @ resid) * inv_den[:, None]
            pc = p[lo : lo + step]
            mean += pc @ s
            at[own] = s[here]
            if v is not None:
                g = pc * inv_den
                pk += k.T @ g
                psk += k.T @ (g[:, None] * s)
                gv = v[own] * inv_den[here]
                kh = k[here]
                vk += kh.T @ gv
                vsk += kh.T @ (gv[:, None] * s[here])
    if v is None:
        return mean, at, None
    return mean, at, _deleted(mean, at, resid, v, pk, psk, vk, vsk)


def _deleted(
    mean: NDArray[np.float64],
    at: NDArray[np.float64],
    resid: NDArray[np.float64],
    v: NDArray[np.float64],
    pk: NDArray[np.float64],
    psk: NDArray[np.float64],
    vk: NDArray[np.float64],
    vsk: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The jackknife's arrays for deleting unit i from the smoother (:func:`_smoothed`): the
    pool mean of s₍ᵢ₎ and Σ_{j ≠ i} v_j s₍ᵢ₎(x_j), each (n, c), from the kernel sums pk, psk
    (over the pool, with p) and vk, vsk (over the units, with v)."""
    mean_i = mean[None, :] - (resid * pk[:, None] - psk)
    t_i = (v @ at)[None, :] - v[:, None] * at - (resid * vk[:, None] - vsk)
    return mean_i, t_i


def _smoothed_nested(
    z: NDArray[np.float64],
    units: NDArray[np.intp],
    resid: NDArray[np.float64],
    p: NDArray[np.float64],
    bandwidth: float,
    sizes: Sequence[int],
    vs: Sequence[NDArray[np.float64] | None],
    groups: NDArray[np.intp] | None = None,
) -> list[tuple[NDArray[np.float64], NDArray[np.float64], Any]]:
    """:func:`_smoothed` for the nested unit sets ``units[:n]``, n in ``sizes`` (``units``
    distinct, in the order they were labeled, ``resid`` in that order), each with its own
    weights ``vs`` (length n, or None) — one pass of the kernel for them all, each result in
    the order of ``units[:n]`` and equal to :func:`_smoothed` on the sorted units up to
    rounding. For :meth:`~activeeval.Session.trajectory`: its points are growing prefixes of
    one sample. The sums over the first n units are matrix products with prefix indicators,
    so the pass costs O(m·N·(d + T·c)) for N units, T sizes and c residual columns."""
    m, big, c, t = z.shape[0], units.shape[0], resid.shape[1], len(sizes)
    size = np.asarray(sizes, dtype=np.intp)
    upto = (np.arange(big)[:, None] < size[None, :]).astype(float)  # (N, T): unit j in set t
    vmat = np.zeros((big, t))  # each set's weights, 0 beyond it
    for j, (n, v) in enumerate(zip(sizes, vs, strict=True)):
        if v is not None:
            vmat[:n, j] = v
    rmat = (upto[:, :, None] * resid[:, None, :]).reshape(big, t * c)  # r_j in set t
    mean, at = np.zeros((t, c)), np.zeros((big, t, c))
    pk, psk = np.zeros((big, t)), np.zeros((big, t, c))
    vk, vsk = np.zeros((big, t)), np.zeros((big, t, c))
    pos = np.full(m, -1, dtype=np.intp)  # a pool row's place among the units, −1 if none
    pos[units] = np.arange(big)
    if z.shape[1] and big:
        zu = z[units]
        su = np.einsum("ij,ij->i", zu, zu)
        step = max(1, _KERNEL_BLOCK // (big + 4 * t * c))  # the kernel and (rows, T, c) arrays
        scale = -0.5 / bandwidth**2
        for lo in range(0, m, step):
            zc = z[lo : lo + step]
            k = _kernel_block(zc, zu, su, scale, groups, lo, units)
            here = np.flatnonzero(pos[lo : lo + zc.shape[0]] >= 0)
            own = pos[lo + here]
            k[here, own] = 0.0  # a unit never smooths its own residual
            inv_den = 1.0 / (k @ upto + SMOOTHER_PRIOR)  # (rows, T)
            sv = (k @ rmat).reshape(-1, t, c) * inv_den[:, :, None]
            pc = p[lo : lo + step]
            mean += np.einsum("x,xtc->tc", pc, sv)
            at[own] = sv[here]
            g = pc[:, None] * inv_den
            pk += k.T @ g
            psk += (k.T @ (g[:, :, None] * sv).reshape(-1, t * c)).reshape(big, t, c)
            gv = vmat[own] * inv_den[here]
            kh = k[here]
            vk += kh.T @ gv
            vsk += (kh.T @ (gv[:, :, None] * sv[here]).reshape(-1, t * c)).reshape(big, t, c)
    out: list[tuple[NDArray[np.float64], NDArray[np.float64], Any]] = []
    for j, (n, v) in enumerate(zip(sizes, vs, strict=True)):
        a = at[:n, j]
        dropped = (
            None
            if v is None
            else _deleted(mean[j], a, resid[:n], v, pk[:n, j], psk[:n, j], vk[:n, j], vsk[:n, j])
        )
        out.append((mean[j], a, dropped))
    return out


class _Recorded(BaseException):
    """A recording :class:`_SmootherBatch` has a point's smoother inputs: stop that point.
    A BaseException, so that no ``except Exception`` on the way swallows it."""


class _SmootherBatch:
    """The smoothers of estimates on growing samples of one pool (the points of
    :meth:`~activeeval.Session.trajectory`), from one nested kernel pass
    (:func:`_smoothed_nested`) instead of one pass per point: first each point's run records
    its smoother's inputs and stops (:class:`_Recorded`); :meth:`compute` checks that they
    are nested samples of the same pool, features, test distribution, bandwidth and groups,
    with the same residual per unit; then the runs are served from the pass (in chunks of
    points whose (N, T, c) arrays fit :data:`_KERNEL_BLOCK`). A call it did not record (other
    residuals, features, p, bandwidth or groups) is smoothed as usual."""

    def __init__(self) -> None:
        self.recording = True
        self.calls: list[tuple[NDArray[np.intp], NDArray[np.float64], Any]] = []
        self.shared: tuple[Any, ...] | None = None  # z, p, bandwidth, groups of the first call
        self.same = True
        self.served: dict[tuple[bytes, bytes, bytes | None], Any] = {}
        self.features: tuple[Any, int, NDArray[np.float64]] | None = None

    def standardized(self, features: ArrayLike, m: int) -> NDArray[np.float64]:
        """:func:`_standardized`, once for the batch's features (one object, unchanged while
        the batch runs)."""
        if self.features is None or self.features[0] is not features or self.features[1] != m:
            token = _BATCH.set(None)
            try:
                self.features = (features, m, _standardized(features, m))
            finally:
                _BATCH.reset(token)
        return self.features[2]

    def smooth(
        self,
        z: NDArray[np.float64],
        units: NDArray[np.intp],
        resid: NDArray[np.float64],
        p: NDArray[np.float64],
        bandwidth: float,
        v: NDArray[np.float64] | None,
        groups: NDArray[np.intp] | None,
    ) -> Any:
        if self.shared is None:
            self.shared = (z, p, bandwidth, groups)
        elif not self._shares(z, p, bandwidth, groups):  # only the first call's arrays are kept
            if self.recording:
                self.same = False
            return None
        if not self.recording:
            return self.served.get(self._key(units, resid, v))
        self.calls.append((units, resid, v))
        raise _Recorded

    @staticmethod
    def _key(
        units: NDArray[np.intp], resid: NDArray[np.float64], v: NDArray[np.float64] | None
    ) -> tuple[bytes, bytes, bytes | None]:
        """A recorded call's inputs, as the key of its served result."""
        return units.tobytes(), resid.tobytes(), None if v is None else v.tobytes()

    def _shares(
        self,
        z: NDArray[np.float64],
        p: NDArray[np.float64],
        bandwidth: float,
        groups: NDArray[np.intp] | None,
    ) -> bool:
        """Whether a call smooths the same features, p, bandwidth and groups as the first."""
        assert self.shared is not None
        z0, p0, h0, g0 = self.shared
        same_groups = (groups is None) == (g0 is None) and (
            groups is None or np.array_equal(groups, g0)
        )
        return bool(
            (z is z0 or np.array_equal(z, z0))
            and np.array_equal(p, p0)
            and bandwidth == h0
            and same_groups
        )

    def compute(self) -> None:
        """Serve every recorded point from one nested pass, if they are nested samples."""
        self.recording = False
        if not self.same or self.shared is None or len(self.calls) < 2:
            return
        z, p, bandwidth, groups = self.shared
        prefix = np.empty(0, dtype=np.intp)  # the units in the order they joined
        known = np.empty((0, self.calls[0][1].shape[1]))  # their residuals
        for units, resid, _ in self.calls:
            old = np.isin(units, prefix)
            if old.sum() != prefix.shape[0] or resid.shape[1] != known.shape[1]:
                return  # not a superset of the previous sample, or other residual columns
            sorter = np.argsort(prefix)
            pos = sorter[np.searchsorted(prefix, units[old], sorter=sorter)]
            if not np.array_equal(resid[old], known[pos]):  # a unit's residual changed
                return
            prefix = np.concatenate([prefix, units[~old]])
            known = np.concatenate([known, resid[~old]])
        # Points in chunks whose (N, T, c) arrays stay within the kernel block's memory.
        chunk = max(1, _KERNEL_BLOCK // (4 * prefix.shape[0] * (known.shape[1] + 1)))
        for lo in range(0, len(self.calls), chunk):
            calls = self.calls[lo : lo + chunk]
            sizes = [units.shape[0] for units, _, _ in calls]
            places = [np.searchsorted(units, prefix[: len(units)]) for units, _, _ in calls]
            vs = [None if v is None else v[pl] for (_, _, v), pl in zip(calls, places, strict=True)]
            big = max(sizes)
            got = _smoothed_nested(z, prefix[:big], known[:big], p, bandwidth, sizes, vs, groups)
            for (units, resid, v), pl, (mean, at, dropped) in zip(calls, places, got, strict=True):
                back = np.empty_like(pl)
                back[pl] = np.arange(pl.shape[0])  # sorted position → prefix position
                drop = None if dropped is None else (dropped[0][back], dropped[1][back])
                self.served[self._key(units, resid, v)] = (mean, at[back], drop)


_BATCH: ContextVar[_SmootherBatch | None] = ContextVar("_BATCH", default=None)


def _batched_smoother(run: Any, args: Sequence[Any]) -> list[Any]:
    """``[run(a) for a in args]`` — estimates on growing samples of one pool, ``args`` in
    growing order — with the smoothers of all but the last from one nested pass
    (:class:`_SmootherBatch`; equal to their own passes up to rounding). The last runs as
    usual, so it equals a single estimate on that sample bit for bit."""
    if len(args) < 3 or _BATCH.get() is not None:  # within another batch: run plainly
        return [run(a) for a in args]
    batch = _SmootherBatch()
    token = _BATCH.set(batch)
    try:
        for a in args[:-1]:
            try:
                run(a)
            except _Recorded:
                pass
        batch.compute()
        out = [run(a) for a in args[:-1]]
    finally:
        _BATCH.reset(token)
    return [*out, run(args[-1])]
