"""Many repetitions of Algorithm 2 at once, for the reproduction protocols.

Running ``ae.evaluate`` a thousand times per budget and method is slow in Python, so for static
sampling distributions the repetitions are simulated together: an (R, L) matrix of draws, the
first occurrence of each index per row (a new label), the running label count or cost, and
prefix sums of v·w·ℓ, v·w and the three sandwich terms. The estimate and standard error at any
budget are read off the prefix sums at the draw where the budget runs out — the same stopping
rule as :func:`activeeval.campaign.evaluate` (tested equal to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["StaticRuns", "first_occurrence", "simulate_static"]


def first_occurrence(draws: NDArray[np.intp]) -> NDArray[np.bool_]:
    """Mask of the first occurrence of each value within each row of ``draws``."""
    order = np.argsort(draws, axis=1, kind="stable")
    srt = np.take_along_axis(draws, order, axis=1)
    first_sorted = np.ones(draws.shape, dtype=bool)
    first_sorted[:, 1:] = srt[:, 1:] != srt[:, :-1]
    out = np.empty(draws.shape, dtype=bool)
    np.put_along_axis(out, order, first_sorted, axis=1)
    return out


@dataclass(frozen=True)
class StaticRuns:
    """Per-repetition, per-budget results, arrays of shape (n_reps, n_budgets)."""

    budgets: NDArray[np.float64]
    estimate: NDArray[np.float64]
    stderr: NDArray[np.float64]
    n_draws: NDArray[np.intp]
    n_labels: NDArray[np.intp]
    cost: NDArray[np.float64]
    binary_count: NDArray[np.float64]
    effective_n: NDArray[np.float64]


def simulate_static(
    q: ArrayLike,
    weighted_loss: ArrayLike,
    weight: ArrayLike,
    budgets: ArrayLike,
    n_reps: int,
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    random_state: Any = None,
    chunk_reps: int = 250,
) -> StaticRuns:
    """Simulate ``n_reps`` runs of Algorithm 2 with a fixed ``q`` at every budget.

    Parameters
    ----------
    q : (m,) sampling distribution over the pool.
    weighted_loss, weight : (m,) arrays
        w·ℓ and w of every pool instance under its true label.
    budgets : increasing label counts, or cost budgets Λ when ``costs`` are given.
    """
    qq = np.asarray(q, dtype=float)
    wl = np.asarray(weighted_loss, dtype=float)
    w = np.asarray(weight, dtype=float)
    m = qq.shape[0]
    p = np.full(m, 1.0 / m) if pool_weights is None else np.asarray(pool_weights, float)
    p = p / p.sum()
    b = np.asarray(budgets, dtype=float)
    lam = None if costs is None else np.asarray(costs, dtype=float)
    v = np.divide(p, qq, out=np.zeros(m), where=qq > 0)
    n_support = int((qq > 0).sum())
    cdf = np.cumsum(qq)
    cdf /= cdf[-1]
    rng = np.random.default_rng(random_state)
    mean_cost = 1.0 if lam is None else float(qq @ lam)
    length = int(3 * b.max() / mean_cost) + 64
    parts = []
    for start in range(0, n_reps, chunk_reps):
        r = min(chunk_reps, n_reps - start)
        parts.append(_chunk(rng, cdf, v, wl, w, lam, b, r, length, n_support, m))
    return StaticRuns(b, *(np.concatenate([pt[i] for pt in parts]) for i in range(7)))


def _chunk(
    rng: np.random.Generator,
    cdf: NDArray[np.float64],
    v: NDArray[np.float64],
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    lam: NDArray[np.float64] | None,
    budgets: NDArray[np.float64],
    r: int,
    length: int,
    n_support: int,
    m: int,
) -> tuple[NDArray[Any], ...]:
    while True:
        draws = np.minimum(np.searchsorted(cdf, rng.random((r, length)), side="right"), m - 1)
        new = first_occurrence(draws)
        price = new.astype(float) if lam is None else np.where(new, lam[draws], 0.0)
        spent = np.cumsum(price, axis=1)
        labels = np.cumsum(new, axis=1)
        exhausted = labels[:, -1] >= n_support
        tol = 1e-9 * max(float(budgets.max()), 1.0)
        if np.all((spent[:, -1] > budgets.max() + tol) | exhausted):
            break
        length *= 2
    # Draws kept at each budget: up to (not including) the first draw the budget cannot pay.
    over = spent[:, :, None] > budgets[None, None, :] + tol
    kept = np.where(over.any(axis=1), over.argmax(axis=1), length)
    full = np.where(exhausted, np.argmax(labels >= n_support, axis=1) + 1, length)
    kept = np.minimum(kept, full[:, None])
    vd, wld, wd = v[draws], wl[draws], w[draws]
    sums = [
        np.cumsum(x, axis=1)
        for x in (vd * wld, vd * wd, (vd * wld) ** 2, vd**2 * wd * wld, (vd * wd) ** 2)
    ]
    at = [np.take_along_axis(s, kept - 1, axis=1) for s in sums]
    a, d, s_ll, s_lw, s_ww = at
    with np.errstate(invalid="ignore", divide="ignore"):
        g = a / d
        var = (s_ll - 2 * g * s_lw + g * g * s_ww) / (d * d)  # Lemma 3.4: Σ v²w²(ℓ−Ĝ)² / (Σvw)²
        n_eff = d * d / s_ww
    cost = np.take_along_axis(spent, kept - 1, axis=1)
    n_lab = np.take_along_axis(labels, kept - 1, axis=1)
    return g, np.sqrt(np.maximum(var, 0.0)), kept, n_lab, cost, g * n_eff, n_eff
