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

from .._validation import check_random_state

__all__ = [
    "ComparisonRuns",
    "StaticRuns",
    "first_occurrence",
    "simulate_comparison",
    "simulate_static",
]


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
    census_mask: ArrayLike | None = None,
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
    census_mask : (m,) bool array, optional
        The instances that can move the measure (``measure.weight_can_be_positive``): once all
        are labeled, :func:`activeeval.evaluate` reports the exact pool value with stderr 0,
        and so does the simulation when the mask is given.
    """
    wl = np.asarray(weighted_loss, dtype=float)
    w = np.asarray(weight, dtype=float)
    d = _Design(q, budgets, costs, pool_weights, random_state)
    mask = None if census_mask is None else np.asarray(census_mask, dtype=bool)
    parts = []
    for start in range(0, n_reps, chunk_reps):
        r = min(chunk_reps, n_reps - start)
        parts.append(_chunk(d, wl, w, r, mask))
    return StaticRuns(d.budgets, *(np.concatenate([pt[i] for pt in parts]) for i in range(7)))


class _Design:
    """A static sampling design: q, its CDF, importance weights, costs, budgets, the RNG."""

    def __init__(
        self,
        q: ArrayLike,
        budgets: ArrayLike,
        costs: ArrayLike | None,
        pool_weights: ArrayLike | None,
        random_state: Any,
    ) -> None:
        self.q = np.asarray(q, dtype=float)
        self.m = m = self.q.shape[0]
        p = np.full(m, 1.0 / m) if pool_weights is None else np.asarray(pool_weights, float)
        self.p = p = p / p.sum()
        self.budgets = np.asarray(budgets, dtype=float)
        self.lam = None if costs is None else np.asarray(costs, dtype=float)
        self.v = np.divide(p, self.q, out=np.zeros(m), where=self.q > 0)
        self.n_support = int((self.q > 0).sum())
        self.cdf = np.cumsum(self.q)
        self.cdf /= self.cdf[-1]
        self.rng = check_random_state(random_state)
        mean_cost = 1.0 if self.lam is None else float(self.q @ self.lam)
        self.length = int(3 * self.budgets.max() / mean_cost) + 64
        # The campaign's cap on draws (evaluate's default max_draws), per budget.
        unit = 1.0 if self.lam is None else float(self.lam.mean())
        self.max_draws = (20 * self.budgets / unit + 1000).astype(np.intp)


def _draws_and_stops(
    d: _Design, r: int
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """(r, L) draws and, per budget, the number of draws kept, labels bought and cost spent —
    the stopping rule of :class:`activeeval.campaign._Acquisition`."""
    rng, cdf, lam, budgets, m, n_support = d.rng, d.cdf, d.lam, d.budgets, d.m, d.n_support
    length = d.length
    u = np.empty((r, 0))
    while True:
        # Extend (never redraw) the uniforms, so a single row consumes the generator exactly
        # as the campaign loop does.
        u = np.hstack([u, rng.random((r, length - u.shape[1]))])
        draws = np.minimum(np.searchsorted(cdf, u, side="right"), m - 1)
        new = first_occurrence(draws)
        price = new.astype(float) if lam is None else np.where(new, lam[draws], 0.0)
        spent = np.cumsum(price, axis=1)
        labels = np.cumsum(new, axis=1)
        exhausted = labels[:, -1] >= n_support
        tol = 1e-9 * max(float(budgets.max()), 1.0)
        if np.all((spent[:, -1] > budgets.max() + tol) | exhausted):
            break
        if length >= d.max_draws.max():
            break  # rows still short of the budget stop at the cap, as evaluate does
        length = min(2 * length, int(d.max_draws.max()))
    # Draws kept at each budget: up to (not including) the first draw the budget cannot pay.
    over = spent[:, :, None] > budgets[None, None, :] + tol
    kept = np.where(over.any(axis=1), over.argmax(axis=1), length)
    full = np.where(exhausted, np.argmax(labels >= n_support, axis=1) + 1, length)
    kept = np.minimum(np.minimum(kept, full[:, None]), d.max_draws[None, :])
    cost = np.take_along_axis(spent, kept - 1, axis=1)
    n_lab = np.take_along_axis(labels, kept - 1, axis=1)
    return draws, kept, n_lab, cost


def _prefix_at(x: NDArray[np.float64], kept: NDArray[np.intp]) -> NDArray[np.float64]:
    """Σ of ``x`` over the first ``kept`` draws of each row, per budget."""
    return np.take_along_axis(np.cumsum(x, axis=1), kept - 1, axis=1)


def _chunk(
    d: _Design,
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    r: int,
    mask: NDArray[np.bool_] | None,
) -> tuple[NDArray[Any], ...]:
    draws, kept, n_lab, cost = _draws_and_stops(d, r)
    v = d.v
    a, b = v[draws] * wl[draws], v[draws] * w[draws]  # v·w·ℓ and v·w per draw
    s_a, s_b = _prefix_at(a, kept), _prefix_at(b, kept)
    s_aa, s_ab, s_bb = _prefix_at(a * a, kept), _prefix_at(a * b, kept), _prefix_at(b * b, kept)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = s_a / s_b
        var = (s_aa - 2 * g * s_ab + g * g * s_bb) / (s_b * s_b)  # Lemma 3.4
        n_eff = s_b * s_b / s_bb
    se = np.sqrt(np.maximum(var, 0.0))
    if mask is not None and mask.any():
        pw = d.p
        exact = float(pw @ wl) / float(pw @ w)
        needed = first_occurrence(draws) & mask[draws]
        full = _prefix_at(needed.astype(float), kept) >= int(mask.sum())
        g, se = np.where(full, exact, g), np.where(full, 0.0, se)
    return g, se, kept, n_lab, cost, g * n_eff, n_eff


@dataclass(frozen=True)
class ComparisonRuns:
    """Per-repetition, per-budget results of paired comparisons, shape (n_reps, n_budgets);
    ``estimates`` has shape (n_reps, n_budgets, k)."""

    budgets: NDArray[np.float64]
    estimates: NDArray[np.float64]
    difference: NDArray[np.float64]
    stderr: NDArray[np.float64]
    n_draws: NDArray[np.intp]
    n_labels: NDArray[np.intp]
    cost: NDArray[np.float64]

    @property
    def p_value(self) -> NDArray[np.float64]:
        """Two-sided Wald p-value of models 0 vs 1 (eq. 3.24); 1 for an exact zero."""
        from scipy import stats

        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.abs(self.difference) / self.stderr
        p = 2.0 * stats.norm.sf(z)
        return np.where(self.difference == 0.0, 1.0, np.where(self.stderr == 0.0, 0.0, p))


def simulate_comparison(
    q: ArrayLike,
    weighted_losses: ArrayLike,
    weights: ArrayLike,
    budgets: ArrayLike,
    n_reps: int,
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    swap: bool = False,
    support_mass: float = 1.0,
    random_state: Any = None,
    chunk_reps: int = 100,
) -> ComparisonRuns:
    """Simulate ``n_reps`` comparison campaigns (Algorithm 3) with a fixed ``q``.

    Parameters
    ----------
    weighted_losses, weights : arrays of shape (k, m)
        w_j·ℓ_j and w_j of every model j on every pool instance under its true label.
    swap : bool
        The label-swap protocol of Sec. 5.4.2: at every draw, models 0 and 1 exchange their
        predictions with probability ½, which makes their expected risks equal (the null).
    support_mass : float
        P_p(q > 0) for ``active_neq`` (the difference is rescaled by it, Sec. 5.2.2).

    The difference of models 0 and 1 and its standard error follow the paired influence rule
    of :func:`activeeval.paired_test` (tested equal to it).
    """
    wl = np.atleast_2d(np.asarray(weighted_losses, dtype=float))
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    d = _Design(q, budgets, costs, pool_weights, random_state)
    rng = d.rng
    out: list[tuple[NDArray[Any], ...]] = []
    for start in range(0, n_reps, chunk_reps):
        r = min(chunk_reps, n_reps - start)
        draws, kept, n_lab, cost = _draws_and_stops(d, r)
        vd = d.v[draws]
        a = [vd * x[draws] for x in wl]  # v·w_j·ℓ_j per draw
        bb = [vd * x[draws] for x in w]  # v·w_j per draw
        if swap:
            flip = rng.random(draws.shape) < 0.5
            a[0], a[1] = np.where(flip, a[1], a[0]), np.where(flip, a[0], a[1])
            bb[0], bb[1] = np.where(flip, bb[1], bb[0]), np.where(flip, bb[0], bb[1])
        s_a = np.stack([_prefix_at(x, kept) for x in a], axis=-1)
        s_b = np.stack([_prefix_at(x, kept) for x in bb], axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            g = s_a / s_b
            # u₀ − u₁ = Σ_k c_k x_k with x = (a₀, b₀, a₁, b₁) and c = (1, −G₀, −1, G₁)/D.
            c = np.stack(
                [
                    1 / s_b[..., 0],
                    -g[..., 0] / s_b[..., 0],
                    -1 / s_b[..., 1],
                    g[..., 1] / s_b[..., 1],
                ],
                axis=-1,
            )
        x = [a[0], bb[0], a[1], bb[1]]
        var = np.zeros(kept.shape)
        for i in range(4):
            for j in range(i, 4):
                term = _prefix_at(x[i] * x[j], kept) * c[..., i] * c[..., j]
                var += term if i == j else 2 * term
        diff = (g[..., 0] - g[..., 1]) * support_mass
        se = np.sqrt(np.maximum(var, 0.0)) * support_mass
        out.append((g * support_mass, diff, se, kept, n_lab, cost))
    return ComparisonRuns(d.budgets, *(np.concatenate([o[i] for o in out]) for i in range(6)))
