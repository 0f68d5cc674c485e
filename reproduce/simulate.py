"""Many repetitions of Algorithm 3 (a comparison campaign) at once, for the reproduction
protocols: the draws, stopping rule and prefix sums of :func:`activeeval.demo.simulate_static`
(its single-model counterpart, which the demo runs), with the paired influence rule on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from activeeval.demo import _Design, _draws_and_stops, _prefix_at

__all__ = ["ComparisonRuns", "simulate_comparison"]


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
    of :func:`activeeval.estimators.inference.paired_test` (tested equal to it).
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
