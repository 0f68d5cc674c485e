"""GLIDE (``glide-py``) run for the robustness benchmark, in its own Python ≥ 3.12 environment.

``glide-py`` needs Python ≥ 3.12 and the project runs on 3.11, so the benchmark
(``reproduce/robustness.py``) writes one cell's inputs to an ``.npz`` file and runs::

    .venv-glide/bin/python benchmarks/glide_worker.py IN.npz OUT.npz

Input arrays: ``target`` (the per-instance quantity whose pool mean is estimated: 1{error}
or the squared error), ``proxy`` (the model's expectation of it), ``uncertainty`` (the
model's standard deviation of it, > 0), ``groups`` (strata, integers; one row per budget or
one for all), ``budgets`` (label
budgets), ``seeds``, ``method`` (``"active"``: ``ActiveSampler`` + ``ASIMeanEstimator``;
``"stratified"``: ``StratifiedSampler(strategy="neyman")`` + ``StratifiedPPIMeanEstimator``)
and ``level``. Output arrays of shape (seeds, budgets): ``estimate``, ``lower``, ``upper``,
``n_labels`` (NaN where GLIDE raised; ``errors`` holds the first message).

The active design. ``ActiveSampler._compute_probabilities`` (glide-py 0.11.0) returns
π = n·u/Σu when no π exceeds 1 and otherwise minimizes Σ u²/π subject to Σπ = n, 0 ≤ π ≤ 1
with scipy's ``trust-constr``, which takes minutes and gigabytes on pools of a few hundred.
The optimum has the closed form π = min(1, c·u) with c set so that Σπ = n (Lagrange;
water-filling), computed here by :func:`capped_inclusion` (tested equal to GLIDE's own
optimizer on a small pool). The draw then mirrors ``ActiveSampler.sample`` line by line
(glide/samplers/active.py and core.py of 0.11.0): ``rng = default_rng(seed)``; a random
permutation; one Bernoulli(π) per instance in that order; the instances up to the point where
the running count of selected instances first exceeds n are kept (``searchsorted(cumsum, n,
side="right")``), the rest get π = 0 and ξ = NaN. Same seed, same π: the same draws as
``ActiveSampler().sample``.

This file needs only numpy to import (:func:`capped_inclusion` is imported by the 3.11 side
and its tests); ``glide`` is imported when a cell runs.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray


def capped_inclusion(u: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """π minimizing Σ u²/π subject to Σπ = n and 0 < π ≤ 1: π = min(1, c·u), c > 0 solving
    Σ min(1, c·u) = n (the largest u are capped at 1 one by one until the rest, scaled
    in proportion to u, sum to what is left). ``u`` > 0, 1 ≤ n ≤ len(u)."""
    u = np.asarray(u, dtype=float)
    if not (np.all(np.isfinite(u)) and np.all(u > 0)):
        raise ValueError("u: uncertainties must be finite and > 0")
    if not 1 <= n <= u.size:
        raise ValueError(f"n: must be between 1 and {u.size}, got {n}")
    if n == u.size:
        return np.ones_like(u)
    s = np.sort(u)[::-1]
    tail = np.cumsum(s[::-1])[::-1]  # Σ_{j ≥ t} s_j
    t = np.arange(n)
    # The t largest are capped: the least t with (n − t)·s_t ≤ Σ_{j ≥ t} s_j.
    cap = int(np.argmax((n - t) * s[:n] <= tail[:n]))
    c = (n - cap) / tail[cap]
    return np.asarray(np.minimum(1.0, c * u))


def active_draw(
    pi: NDArray[np.float64], n: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``ActiveSampler.sample``'s draw given its π (glide-py 0.11.0, verbatim in effect):
    (π with 0 beyond the cutoff, ξ with NaN beyond it), in the pool's order."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pi))  # samplers.core._shuffle
    pi_shuffled = pi[order]
    xi_shuffled = rng.binomial(n=1, p=pi_shuffled).astype(float)
    cumulative = np.cumsum(xi_shuffled)
    cutoff = np.searchsorted(cumulative, n, side="right")  # _compute_cutoff_indices
    kept = order[:cutoff]
    pi_out = np.zeros(len(pi))  # _build_output
    xi_out = np.full(len(pi), np.nan)
    pi_out[kept] = pi_shuffled[:cutoff]
    xi_out[kept] = xi_shuffled[:cutoff]
    return pi_out, xi_out


def run_cell(data: dict[str, Any]) -> dict[str, Any]:
    from glide.estimators import ASIMeanEstimator, StratifiedPPIMeanEstimator
    from glide.samplers import StratifiedSampler

    target = np.asarray(data["target"], dtype=float)
    proxy = np.asarray(data["proxy"], dtype=float)
    u = np.asarray(data["uncertainty"], dtype=float)
    groups = np.asarray(data["groups"])  # (N,) or one row per budget
    budgets = [int(b) for b in np.atleast_1d(data["budgets"])]
    seeds = [int(s) for s in np.atleast_1d(data["seeds"])]
    method = str(data["method"])
    level = float(data["level"])
    shape = (len(seeds), len(budgets))
    out = {k: np.full(shape, np.nan) for k in ("estimate", "lower", "upper", "n_labels")}
    errors: list[str] = []
    for j, n in enumerate(budgets):
        pi_n = capped_inclusion(u, n) if method == "active" else None
        for r, seed in enumerate(seeds):
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    if method == "active":
                        assert pi_n is not None
                        pi, xi = active_draw(pi_n, n, seed)
                        y_obs = np.where(xi == 1, target, np.nan)
                        res = ASIMeanEstimator().estimate(y_obs, proxy, pi, confidence_level=level)
                    elif method == "stratified":
                        g = groups[j] if groups.ndim == 2 else groups
                        xi = StratifiedSampler().sample(
                            proxy, g, n_samples=n, strategy="neyman", random_seed=seed
                        )
                        y_obs = np.where(xi == 1, target, np.nan)
                        res = StratifiedPPIMeanEstimator().estimate(
                            y_obs, proxy, g, confidence_level=level
                        )
                    else:
                        raise ValueError(f"method: unknown {method!r}")
                ci = res.confidence_interval
                out["estimate"][r, j] = float(res.mean)
                out["lower"][r, j] = float(ci.lower_bound)
                out["upper"][r, j] = float(ci.upper_bound)
                out["n_labels"][r, j] = float(res.n_true)
            except Exception as exc:  # a seed GLIDE cannot estimate: NaN, first reason kept
                if not errors:
                    errors.append(f"{type(exc).__name__}: {exc}")
    out["errors"] = np.asarray(errors[:1] or [""])
    return out


def main(argv: list[str]) -> None:
    src, dst = argv
    with np.load(src, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    np.savez(dst, **run_cell(data))


if __name__ == "__main__":
    main(sys.argv[1:])
