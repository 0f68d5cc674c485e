"""Standalone prototype of anytime-valid intervals for activeeval (numpy/scipy only).

Public sketch (what the package would expose; see REPORT.md, "Design"):

    mixture_rho2(horizon, level=0.95, alternative="two-sided") -> float
    boundary(t, rho2, level=0.95, alternative="two-sided") -> ndarray      # B_t, half-width = σ̂_t·B_t
    anytime_interval(estimate, stderr, n_draws, *, level, horizon, alternative, scale,
                     sigma0=None, pseudo_draws=30) -> (low, high)             # one look
    confidence_sequence(X, Y, *, level, horizon, t_min, w_positive, min_positive, sigma0,
                        pseudo_draws, scale, alternative, intersect) -> dict  # every prefix
    finite_pool_terms(draws, q, p, wl, w) -> (TN, TD)                        # predictable FP form

Conventions: draws i.i.d. from a fixed q (or any predictable q for the martingale form); for a
ratio measure G = N/D every draw contributes X_i (numerator term) and Y_i (denominator term):
SNIS X = v·w·ℓ, Y = v·w; difference estimator with fixed λ: X = v(λμ_N + wℓ − λm_N),
Y = v(λμ_D + w − λm_D). Ĝ_t = ΣX/ΣY, σ̂_t² = t·Σ(X − Ĝ_tY)²/(ΣY)² = t·stderr_t² (Lemma 3.4).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special


# ------------------------------------------------------------------ boundaries
def mixture_rho2(horizon: float, level: float = 0.95, alternative: str = "two-sided") -> float:
    """ρ² of the normal-mixture boundary that is tightest at t = ``horizon`` (in draws).
    Must be fixed before the first look (e.g. from the budget), never from the data."""
    alpha = 1 - level
    if alternative == "two-sided":
        a = -2 * math.log(alpha)
        return (a + math.log(a + 1)) / horizon  # Waudby-Smith et al.
    res = optimize.minimize_scalar(
        lambda lr: _one_sided_S(horizon, math.exp(lr), alpha), bounds=(-15, 5), method="bounded")
    return math.exp(res.x)


def _one_sided_S(t: float, rho2: float, alpha: float) -> float:
    """S solving 2/sqrt(1+ρ²t)·exp(ρ²S²/(2(1+ρ²t)))·Φ(ρS/sqrt(1+ρ²t)) = 1/α (half-normal mixture;
    Ville's inequality gives P(∃t: S_t/σ ≥ S(t)) ≤ α for Brownian motion)."""
    a = 1 + rho2 * t

    def f(S):
        z = math.sqrt(rho2) * S / math.sqrt(a)
        return math.log(2) - 0.5 * math.log(a) + z * z / 2 + special.log_ndtr(z) + math.log(alpha)

    return optimize.brentq(f, 0.0, 100 * math.sqrt(a / rho2))


def boundary(t, rho2: float, level: float = 0.95, alternative: str = "two-sided"):
    """Multiplier B_t of σ̂_t (half-width σ̂_t·B_t; Wald's is z/√t). Two-sided: the
    Gaussian mixture sqrt(2(tρ²+1)/(t²ρ²)·log(sqrt(tρ²+1)/α)); one-sided ("less"/"greater"):
    the half-normal mixture at α (exact in the Gaussian limit, not the end of the two-sided
    sequence at 2α, which is equally wide but only approximately level α)."""
    t = np.asarray(t, dtype=float)
    alpha = 1 - level
    if alternative == "two-sided":
        return np.sqrt(2 * (t * rho2 + 1) / (t * t * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))
    flat = np.atleast_1d(t).ravel()
    out = np.array([_one_sided_S(tt, rho2, alpha) / tt for tt in flat])
    return out.reshape(t.shape) if t.ndim else float(out[0])


# --------------------------------------------------------------------- one look
def _shrink(sig: np.ndarray, t: np.ndarray, sigma0: float | None, pseudo: int) -> np.ndarray:
    if sigma0 is None or pseudo <= 0:
        return sig
    return np.sqrt((t * sig**2 + pseudo * sigma0**2) / (t + pseudo))


def _ends(g, half, scale, alternative):
    if scale == "logit":
        gi = np.clip(g, 1e-12, 1 - 1e-12)
        h = half / (gi * (1 - gi))
        lg = special.logit(gi)
        lo, hi = special.expit(lg - h), special.expit(lg + h)
    else:
        lo, hi = g - half, g + half
    if alternative == "less":
        lo = np.full_like(np.asarray(hi, float), -np.inf)
    elif alternative == "greater":
        hi = np.full_like(np.asarray(lo, float), np.inf)
    return lo, hi


def anytime_interval(estimate: float, stderr: float, n_draws: int, *, level: float = 0.95,
                     horizon: float, alternative: str = "two-sided", scale: str = "logit",
                     sigma0: float | None = None, pseudo_draws: int = 30) -> tuple[float, float]:
    """The CS at the current look from (Ĝ_t, stderr_t, t) only: σ̂_t = √t·stderr_t must be the
    with-replacement (every draw a term) standard error, t the number of draws."""
    t = float(n_draws)
    sig = _shrink(np.asarray(math.sqrt(t) * stderr), np.asarray(t), sigma0, pseudo_draws)
    half = sig * boundary(t, mixture_rho2(horizon, level, alternative), level, alternative)
    lo, hi = _ends(np.asarray(estimate, float), half, scale, alternative)
    return float(lo), float(hi)


# -------------------------------------------------------------- every prefix
def confidence_sequence(X, Y, *, level=0.95, horizon=300, t_min=30, w_positive=None,
                        min_positive=30, sigma0=None, pseudo_draws=30, scale="logit",
                        alternative="two-sided", intersect=True):
    """The CS after every draw from the per-draw terms (X_i, Y_i) of one campaign.

    Before the start rule holds (t ≥ t_min and, with ``w_positive`` (bool per draw), at least
    ``min_positive`` draws with positive weight) the interval is the whole range (−∞, ∞), or
    [0, 1] on the logit scale. ``intersect``: running intersection (valid: all CSs cover
    simultaneously with probability ≥ 1 − α asymptotically)."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    T = X.shape[0]
    t = np.arange(1, T + 1, dtype=float)
    SX, SY = np.cumsum(X), np.cumsum(Y)
    with np.errstate(invalid="ignore", divide="ignore"):
        G = SX / SY
        ss = np.cumsum(X * X) - 2 * G * np.cumsum(X * Y) + G * G * np.cumsum(Y * Y)
        sig = np.sqrt(np.maximum(ss, 0) * t) / SY
    sig = _shrink(sig, t, sigma0, pseudo_draws)
    half = sig * boundary(t, mixture_rho2(horizon, level, alternative), level, alternative)
    lo, hi = _ends(G, half, scale, alternative)
    started = t >= t_min
    if w_positive is not None:
        started &= np.cumsum(np.asarray(w_positive, bool)) >= min_positive
    started &= np.isfinite(G)
    wide_lo, wide_hi = (0.0, 1.0) if scale == "logit" else (-np.inf, np.inf)
    lo = np.where(started, lo, wide_lo)
    hi = np.where(started, hi, wide_hi)
    if intersect:
        lo, hi = np.maximum.accumulate(lo), np.minimum.accumulate(hi)
    return {"t": t.astype(int), "estimate": G, "lower": lo, "upper": hi, "started": started}


# ------------------------------------------------------- finite-population form
def finite_pool_terms(draws, q, p, wl, w):
    """Predictable finite-population terms: for draw i at instance x_i,
        T^N_i = Σ_{j labeled before i} p_j·(wℓ)_j + (p/q)(x_i)·(wℓ)(x_i)·1{x_i new},
    and T^D_i the same with w. E[T_i | past] = (N, D) exactly (labels already bought are used
    exactly; only the unlabeled remainder is estimated), so T − G·T^D are martingale
    differences with shrinking variance. Feed (TN, TD) to the martingale (intrinsic-time) CS:
    ``martingale_cs``. ``p`` is the pool distribution (sums to 1), ``q`` the sampling one."""
    draws = np.asarray(draws)
    seen = np.zeros(q.shape[0], bool)
    new = np.empty(draws.shape[0], bool)
    for i, x in enumerate(draws):  # first appearance (O(n))
        new[i] = not seen[x]
        seen[x] = True
    TN = np.concatenate([[0.0], np.cumsum(np.where(new, p[draws] * wl[draws], 0.0))[:-1]])
    TD = np.concatenate([[0.0], np.cumsum(np.where(new, p[draws] * w[draws], 0.0))[:-1]])
    TN = TN + np.where(new, p[draws] / q[draws] * wl[draws], 0.0)
    TD = TD + np.where(new, p[draws] / q[draws] * w[draws], 0.0)
    return TN, TD


def martingale_cs(TN, TD, *, level=0.95, horizon=300, sigma0, t_min=30):
    """Intrinsic-time normal-mixture CS for G = N/D from martingale terms: with
    Ŝ_t = Σ (TN_i − Ĝ_t TD_i)²/D̂_t² (the variance process), Ĝ_t ± sqrt(2(Ŝρ²+1)/ρ²·
    log(sqrt(Ŝρ²+1)/α))/t, ρ² = ρ²(horizon)/σ0² fixed in advance (σ0: the with-replacement σ
    implied by the model)."""
    alpha = 1 - level
    t = np.arange(1, len(TN) + 1, dtype=float)
    SN, SD = np.cumsum(TN), np.cumsum(TD)
    with np.errstate(invalid="ignore", divide="ignore"):
        G = SN / SD
        Dh = SD / t
        S = (np.cumsum(TN**2) - 2 * G * np.cumsum(TN * TD) + G**2 * np.cumsum(TD**2)) / Dh**2
    r2 = mixture_rho2(horizon, level) / sigma0**2
    half = np.sqrt(2 * (S * r2 + 1) / r2 * np.log(np.sqrt(S * r2 + 1) / alpha)) / t
    half = np.where(t >= t_min, half, np.inf)
    return {"t": t.astype(int), "estimate": G, "lower": G - half, "upper": G + half}


# ---------------------------------------------------------------- self-check
if __name__ == "__main__":
    from cs_core import draw_indices, make_pool, ratio_model_sigma, ratio_terms

    pool = make_pool()
    R, T = 300, 1000
    idx = draw_indices(pool, R, T, np.random.default_rng(11))
    s0 = ratio_model_sigma(pool, "f1", 0.0)
    X, Y = ratio_terms(pool, "f1", 0.0, idx)
    wpos = pool["f1_w"][idx] > 0
    hits = 0
    for r in range(R):
        cs = confidence_sequence(X[r], Y[r], horizon=300, w_positive=wpos[r], sigma0=s0)
        hits += np.all((cs["lower"] <= pool["G_f1"]) & (pool["G_f1"] <= cs["upper"]))
    print(f"F1 SNIS, logit + shrink + start guards, {R} runs: time-uniform coverage {hits / R:.3f}")
    g, se, n = 0.2, 0.02, 300
    print("one look (Ĝ=0.2, se=0.02, t=300, horizon 300):",
          anytime_interval(g, se, n, horizon=300, scale="linear"),
          "Wald:", (g - 1.96 * se, g + 1.96 * se))
    # finite-population martingale on the error rate
    s0e = ratio_model_sigma(pool, "err", 0.0)
    hits = 0
    for r in range(R):
        TN, TD = finite_pool_terms(idx[r], pool["q"], pool["p"], pool["err_wl"], pool["err_w"])
        cs = martingale_cs(TN, TD, horizon=300, sigma0=s0e)
        hits += np.all((cs["lower"] <= pool["G_err"]) & (pool["G_err"] <= cs["upper"]))
    print(f"error rate, predictable finite-pool martingale CS, {R} runs: coverage {hits / R:.3f}")
