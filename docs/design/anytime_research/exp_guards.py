"""Experiment 2: small-sample guards for the asymptotic CS (ρ for t* = 300, looks at every draw).

Variants of σ̂ and of the scale: the sandwich σ̂ (Lemma 3.4), the package's delete-one jackknife
(ε_i = (1 − v_i/Σv)(Ĝ − Ĝ₍ᵢ₎), Σ(ε − ε̄)²), the CS built on the logit scale and mapped back,
the pseudo-count shrinkage toward the model-implied σ₀, and a start rule counting draws with
positive weight (w > 0) instead of draws.

Usage: OMP_NUM_THREADS=1 python exp_guards.py [R] [seed] [miscal]
"""

import json
import sys
import time

import numpy as np
from scipy import special

from cs_core import (
    draw_indices, fmt, make_pool, ratio_model_sigma, ratio_path, ratio_terms, rho2_for,
    summarize, two_sided_mult, wald_mult,
)

R = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
MISCAL = (0.6, 0.3) if len(sys.argv) > 3 and sys.argv[3] == "miscal" else None
T, TSTAR, T0 = 1000, 300, 30
t0 = time.time()
pool = make_pool(miscal=MISCAL)
idx = draw_indices(pool, R, T, np.random.default_rng(seed))
t = np.arange(1, T + 1)
B = two_sided_mult(t, rho2_for(TSTAR))[None, :]
W = wald_mult(t)[None, :]
tri = np.tril(np.ones((T, T), bool))  # [t-1, i-1]: row i is in the prefix of length t


def jackknife_sigma(X, Y, v):
    """Per-draw σ̂_t = sqrt(t · Σ_i (ε_i − ε̄)²) of the package's jackknife, every prefix t."""
    out = np.empty_like(X)
    for r in range(X.shape[0]):
        x, y, vv = X[r], Y[r], v[r]
        SX, SY, SV = np.cumsum(x), np.cumsum(y), np.cumsum(vv)
        G = SX / SY
        with np.errstate(invalid="ignore", divide="ignore"):
            eps = (1 - vv[None, :] / SV[:, None]) * (x[None, :] - G[:, None] * y[None, :]) / (
                SY[:, None] - y[None, :])
        eps = np.where(tri, eps, 0.0)
        # deleting the only row with Y > 0 (SY − Y_i = 0): the package falls back to the
        # linearized influence for such a sample; do the same
        bad = ~np.isfinite(eps).all(1) | (np.abs(eps) > 1e6).any(1)
        lin = np.where(tri, (x[None, :] - G[:, None] * y[None, :]) / SY[:, None], 0.0)
        eps = np.where(bad[:, None], lin, eps)
        s1, s2 = eps.sum(1), (eps * eps).sum(1)
        out[r] = np.sqrt(np.maximum(s2 - s1 * s1 / t, 0) * t)
    return out


def logit_half(G, sig, mult):
    """Lower/upper ends of the CS on the logit scale, returned as a symmetric-in-test form:
    a (lo, hi) pair."""
    Gi = np.clip(G, 1e-9, 1 - 1e-9)
    lg = special.logit(Gi)
    h = sig * mult / (Gi * (1 - Gi))
    return special.expit(lg - h), special.expit(lg + h)


def summarize_lohi(lo, hi, G_true, start_mask, looks=(100, 300, 1000)):
    """Time-uniform coverage where the CS is reported only where start_mask is True."""
    with np.errstate(invalid="ignore"):
        miss = ~((lo <= G_true) & (G_true <= hi)) & start_mask
    cov = 1 - miss.any(1).mean()
    out = dict(cov=cov, se=float(np.sqrt(max(cov * (1 - cov), 1e-12) / lo.shape[0])))
    for L in looks:
        out[f"w{L}"] = float(np.nanmean(hi[:, L - 1] - lo[:, L - 1]))
    return out


res = {}
for meas, lam in (("err", 0.0), ("f1", 0.0), ("f1", 1.0), ("err", 1.0)):
    G_true = pool[f"G_{meas}"]
    X, Y = ratio_terms(pool, meas, lam, idx)
    v = pool["v"][idx]
    G, sig = ratio_path(X, Y)
    t1 = time.time()
    sjk = jackknife_sigma(X, Y, v)
    s0 = ratio_model_sigma(pool, meas, lam)
    shr = np.sqrt((t * sig**2 + T0 * s0**2) / (t + T0))
    shr_jk = np.sqrt((t * sjk**2 + T0 * s0**2) / (t + T0))
    nw = np.cumsum(pool[f"{meas}_w"][idx] > 0, 1)
    tag = f"{meas} λ={lam:g}"
    print(f"\n{tag} (jackknife {time.time() - t1:.1f}s); wald-width reference at t=100/300/1000:",
          [round(float(np.nanmean(2 * sig[:, L - 1] * W[0, L - 1])), 4) for L in (100, 300, 1000)])
    start30 = np.broadcast_to(t >= 30, G.shape)
    startw = start30 & (nw >= 30)
    for name, sg in (("sandwich", sig), ("jackknife", sjk), ("sandwich+shrink σ0", shr),
                     ("jackknife+shrink σ0", shr_jk)):
        for scale in ("linear", "logit"):
            if scale == "linear":
                lo, hi = G - sg * B, G + sg * B
            else:
                lo, hi = logit_half(G, sg, B)
            for sname, smask in (("t≥30", start30), ("t≥30 & n_w≥30", startw)):
                if meas == "err" and sname != "t≥30":
                    continue  # w ≡ 1: same rule
                d = summarize_lohi(lo, hi, G_true, smask)
                key = f"{tag} | {name} | {scale} | {sname}"
                res[key] = d
                print(fmt(f"{name:<20s} {scale:<6s} {sname}", d))
    # repeated fixed-n Wald with the jackknife (for reference)
    d = summarize(G, sjk * W, G_true, T0, wald_half=sjk * W)
    print(f"  fixed-t Wald coverage with jackknife σ̂ at 100/300/1000:",
          [round(d[f"fixcov{L}"], 3) for L in (100, 300, 1000)], "time-uniform:", round(d["cov"], 3))
    d2 = summarize(G, sig * W, G_true, T0, wald_half=sig * W)
    print(f"  fixed-t Wald coverage with sandwich σ̂ at 100/300/1000:",
          [round(d2[f"fixcov{L}"], 3) for L in (100, 300, 1000)])
    print(f"  share of runs with n_w ≥ 30 at t = 30/100: {np.mean(nw[:, 29] >= 30):.2f}/"
          f"{np.mean(nw[:, 99] >= 30):.2f}")
print(f"\n{time.time() - t0:.1f}s")
json.dump(res, open(f"res_guards_R{R}_s{seed}{'_miscal' if MISCAL else ''}.json", "w"), indent=1)
