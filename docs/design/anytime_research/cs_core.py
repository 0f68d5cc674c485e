"""Core of the anytime-valid CS prototype (numpy/scipy only; no activeeval import).

Pool: m instances, model probability s ~ Beta(0.6, 2), label y ~ Bernoulli(s) (the model is
calibrated), prediction yhat = 1{s > 1/2}. Sampling q = 0.9 q* + 0.1 uniform, q* ∝ sqrt(s(1-s)).
Draws i.i.d. from q with replacement; v = p/q with p uniform (E_q v = 1).

Every fixed-λ estimator here is a ratio of per-draw sums Ĝ_t = Σ X_i / Σ Y_i of i.i.d. terms
(SNIS: X = v w ℓ, Y = v w; difference estimator: X = v(λμ_N + wℓ − λm_N), Y = v(λμ_D + w − λm_D)),
with influence φ_i = (X_i − G Y_i)/E[Y] and the per-draw scale σ̂_t² = t Σ (X − ĜY)² / (ΣY)²
(= t · stderr², the package's Lemma 3.4 sandwich).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats

ALPHA = 0.05


# --------------------------------------------------------------------------- pool
def make_pool(m=5000, seed=0, mix=0.1, miscal=None):
    """``miscal=(a, b)``: labels from expit(a·logit s + b) instead of s (a miscalibrated model;
    q, the control variates and σ₀ still use s)."""
    rng = np.random.default_rng(seed)
    s = rng.beta(0.6, 2.0, m)
    s_true = s if miscal is None else special.expit(miscal[0] * special.logit(s) + miscal[1])
    y = (rng.random(m) < s_true).astype(float)
    yhat = (s > 0.5).astype(float)
    qstar = np.sqrt(s * (1 - s))
    qstar /= qstar.sum()
    q = (1 - mix) * qstar + mix / m
    p = np.full(m, 1.0 / m)
    pool = dict(m=m, s=s, y=y, yhat=yhat, q=q, p=p, v=p / q, vmax=float((p / q).max()))
    # error rate: w = 1, ℓ = 1{y != yhat}; model: m_N = P(y != yhat | x), m_D = 1
    pool["err_l"] = (y != yhat).astype(float)
    pool["err_w"] = np.ones(m)
    pool["err_mN"] = yhat * (1 - s) + (1 - yhat) * s
    pool["err_mD"] = np.ones(m)
    # F1 = Σ yhat·y / Σ (y + yhat)/2: w = (y + yhat)/2, wℓ = yhat·y
    pool["f1_wl"] = yhat * y
    pool["f1_w"] = (y + yhat) / 2
    pool["f1_mN"] = yhat * s
    pool["f1_mD"] = (s + yhat) / 2
    pool["err_wl"] = pool["err_l"]
    pool["G_err"] = float(pool["err_l"].mean())
    pool["G_f1"] = float(pool["f1_wl"].sum() / pool["f1_w"].sum())
    return pool


def draw_indices(pool, R, T, rng):
    cq = np.cumsum(pool["q"])
    cq /= cq[-1]
    return np.searchsorted(cq, rng.random((R, T)), side="right").clip(0, pool["m"] - 1)


# ------------------------------------------------------------------ per-draw ratio terms
def ratio_terms(pool, meas, lam, idx):
    """X, Y per draw (R, T) for the fixed-λ estimator of measure ``meas`` ('err' or 'f1')."""
    v = pool["v"][idx]
    wl, w = pool[f"{meas}_wl"][idx], pool[f"{meas}_w"][idx]
    if lam == 0:
        return v * wl, v * w
    mN, mD = pool[f"{meas}_mN"], pool[f"{meas}_mD"]
    muN, muD = float(pool["p"] @ mN), float(pool["p"] @ mD)
    return v * (lam * muN + wl - lam * mN[idx]), v * (lam * muD + w - lam * mD[idx])


def ratio_true_sigma(pool, meas, lam, G):
    """Asymptotic per-draw σ of the fixed-λ ratio estimator: E_q[(X − GY)²]^{1/2} / E_q[Y]."""
    q, v = pool["q"], pool["v"]
    wl, w = pool[f"{meas}_wl"], pool[f"{meas}_w"]
    mN, mD = pool[f"{meas}_mN"], pool[f"{meas}_mD"]
    muN, muD = float(pool["p"] @ mN), float(pool["p"] @ mD)
    X = v * (lam * muN + wl - lam * mN)
    Y = v * (lam * muD + w - lam * mD)
    return math.sqrt(q @ (X - G * Y) ** 2) / (q @ Y)


def ratio_model_sigma(pool, meas, lam):
    """σ₀: the same σ with labels replaced by the model's predictive distribution (available
    before any label is bought; used only as the prior of the variance guard)."""
    s, yhat, q, v = pool["s"], pool["yhat"], pool["q"], pool["v"]
    out = 0.0
    G0 = None
    mN, mD = pool[f"{meas}_mN"], pool[f"{meas}_mD"]
    muN, muD = float(pool["p"] @ mN), float(pool["p"] @ mD)
    G0 = muN / muD
    for yy, py in ((1.0, s), (0.0, 1 - s)):
        if meas == "err":
            wl, w = (yy != yhat).astype(float), np.ones_like(s)
        else:
            wl, w = yhat * yy, (yy + yhat) / 2
        X = v * (lam * muN + wl - lam * mN)
        Y = v * (lam * muD + w - lam * mD)
        out += q @ (py * (X - G0 * Y) ** 2)
    D0 = float(q @ (v * mD))
    return math.sqrt(out) / D0


def ratio_path(X, Y):
    """Ĝ_t and σ̂_t (per-draw scale, σ̂_t/√t = sandwich stderr) for every prefix t = 1..T."""
    t = np.arange(1, X.shape[1] + 1)
    SX, SY = np.cumsum(X, 1), np.cumsum(Y, 1)
    SXX, SXY, SYY = np.cumsum(X * X, 1), np.cumsum(X * Y, 1), np.cumsum(Y * Y, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        G = SX / SY
        ss = SXX - 2 * G * SXY + G * G * SYY
        sig = np.sqrt(np.maximum(ss, 0) * t) / SY
    return G, sig


# -------------------------------------------------------------------------- boundaries
def rho2_for(tstar, alpha=ALPHA):
    """Waudby-Smith et al.: ρ² minimizing the two-sided normal-mixture boundary at t*."""
    a = -2 * math.log(alpha)
    return (a + math.log(a + 1)) / tstar


def two_sided_mult(t, rho2, alpha=ALPHA):
    """B_t with half-width σ̂_t·B_t: sqrt(2(tρ²+1)/(t²ρ²) · log(sqrt(tρ²+1)/α))."""
    t = np.asarray(t, float)
    return np.sqrt(2 * (t * rho2 + 1) / (t * t * rho2) * np.log(np.sqrt(t * rho2 + 1) / alpha))


def _one_sided_S(t, rho2, alpha):
    """Standardized boundary S (for S_t/σ) of the one-sided (half-normal) mixture:
    2/sqrt(1+ρ²t) · exp(ρ²S²/(2(1+ρ²t))) · Φ(ρS/sqrt(1+ρ²t)) = 1/α, solved for S."""
    a = 1 + rho2 * t
    def f(S):
        z = math.sqrt(rho2) * S / math.sqrt(a)
        return math.log(2) - 0.5 * math.log(a) + z * z / 2 + special.log_ndtr(z) + math.log(alpha)
    return optimize.brentq(f, 0.0, 100 * math.sqrt(a / rho2))


def one_sided_mult(t, rho2, alpha=ALPHA):
    """Half-width multiplier (one end) of the one-sided normal mixture: σ̂_t · S(t)/t."""
    t = np.atleast_1d(np.asarray(t, float))
    return np.array([_one_sided_S(tt, rho2, alpha) / tt for tt in t])


def rho2_one_sided(tstar, alpha=ALPHA):
    res = optimize.minimize_scalar(
        lambda lr: _one_sided_S(tstar, math.exp(lr), alpha), bounds=(-15, 5), method="bounded"
    )
    return math.exp(res.x)


def wald_mult(t, alpha=ALPHA):
    return stats.norm.isf(alpha / 2) / np.sqrt(np.asarray(t, float))


# ------------------------------------------------------------------------ bookkeeping
def summarize(G_hat, half, G_true, t_from=30, looks=(100, 300, 1000), wald_half=None):
    """Time-uniform coverage over t = t_from..T (every draw a look), fixed-t coverage and mean
    widths at ``looks`` (width ratio to the Wald interval at the same t if given)."""
    T = G_hat.shape[1]
    sl = slice(t_from - 1, T)
    with np.errstate(invalid="ignore"):
        miss = ~(np.abs(G_hat[:, sl] - G_true) <= half[:, sl])  # NaN counts as a miss
    R = G_hat.shape[0]
    cov = 1 - miss.any(1).mean()
    out = dict(cov=cov, se=math.sqrt(max(cov * (1 - cov), 1e-12) / R))
    # running intersection width (same coverage event)
    lo = np.maximum.accumulate(np.where(np.isnan(G_hat[:, sl]), -np.inf, G_hat[:, sl] - half[:, sl]), 1)
    hi = np.minimum.accumulate(np.where(np.isnan(G_hat[:, sl]), np.inf, G_hat[:, sl] + half[:, sl]), 1)
    for L in looks:
        if L > T:
            continue
        out[f"w{L}"] = float(np.nanmean(2 * half[:, L - 1]))
        out[f"wi{L}"] = float(np.mean(np.maximum(hi[:, L - t_from] - lo[:, L - t_from], 0)))
        if wald_half is not None:
            out[f"r{L}"] = out[f"w{L}"] / float(np.nanmean(2 * wald_half[:, L - 1]))
            with np.errstate(invalid="ignore"):
                out[f"fixcov{L}"] = float(np.mean(np.abs(G_hat[:, L - 1] - G_true) <= wald_half[:, L - 1]))
    return out


def fmt(name, d, looks=(100, 300, 1000)):
    parts = [f"{name:<44s} cov {d['cov']:.3f} ± {d['se']:.3f}"]
    for L in looks:
        if f"w{L}" in d:
            r = f" (×{d[f'r{L}']:.2f} Wald)" if f"r{L}" in d else ""
            parts.append(f"w{L} {d[f'w{L}']:.4f}{r}")
    return " | ".join(parts)
