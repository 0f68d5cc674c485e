"""Experiment 3: one-sided bounds, tuned/predictable λ, paired differences, exact betting CS,
and the finite-population (distinct-instance) form.

Usage: OMP_NUM_THREADS=1 python exp_extra.py SECTION [R] [seed]
SECTION ∈ {onesided, lambda, pairs, betting, finite}
"""

import json
import os
import math
import sys
import time

import numpy as np
from scipy import stats

from cs_core import (
    ALPHA, draw_indices, fmt, make_pool, one_sided_mult, ratio_model_sigma, ratio_path,
    ratio_terms, ratio_true_sigma, rho2_for, rho2_one_sided, summarize, two_sided_mult,
    wald_mult,
)

SECTION = sys.argv[1]
R = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
T, TSTAR, T0 = 1000, 300, 30
t = np.arange(1, T + 1)
rho2 = rho2_for(TSTAR)
B = two_sided_mult(t, rho2)[None, :]
W = wald_mult(t)[None, :]
res = {}
t_start = time.time()


def tu_cov(miss_mask, start=T0):
    m = miss_mask.copy()
    m[:, : start - 1] = False
    c = 1 - m.any(1).mean()
    return c, math.sqrt(max(c * (1 - c), 1e-12) / m.shape[0])


# ------------------------------------------------------------------------- one-sided
if SECTION == "onesided":
    pool = make_pool()
    idx = draw_indices(pool, R, T, np.random.default_rng(seed))
    rho2_1 = rho2_one_sided(TSTAR)
    B1 = one_sided_mult(t, rho2_1)[None, :]
    B2a = two_sided_mult(t, rho2_for(TSTAR, 2 * ALPHA), 2 * ALPHA)[None, :]
    Ba = B
    z1 = stats.norm.isf(ALPHA) / np.sqrt(t)[None, :]
    print(f"rho2 one-sided (t*={TSTAR}) = {rho2_1:.5f}; two-sided at α: {rho2:.5f}")
    print("multipliers ×√t at t=100/300/1000 — one-sided mixture:",
          [round(float(B1[0, L - 1] * math.sqrt(L)), 3) for L in (100, 300, 1000)],
          "two-sided at 2α:", [round(float(B2a[0, L - 1] * math.sqrt(L)), 3) for L in (100, 300, 1000)],
          "two-sided at α:", [round(float(Ba[0, L - 1] * math.sqrt(L)), 3) for L in (100, 300, 1000)],
          "one-sided Wald z:", round(stats.norm.isf(ALPHA), 3))
    # Brownian check of the boundaries alone: Gaussian random walk, σ = 1, t = 1..T
    Z = np.cumsum(np.random.default_rng(seed + 100).standard_normal((4000, T)), 1)
    for name, Bm in (("one-sided mixture α", B1), ("two-sided at 2α, one end", B2a),
                     ("two-sided at α, one end", Ba)):
        c_up, se_up = tu_cov(Z / t[None, :] > Bm, 1)
        c_up30, _ = tu_cov(Z / t[None, :] > Bm, T0)
        print(f"  Gaussian walk, {name:<28s}: P(no upper crossing, t≥1) {c_up:.4f} ± {se_up:.4f}; t≥30 {c_up30:.4f}")
        res[f"gauss | {name}"] = dict(t1=c_up, t30=c_up30)
    for meas, lam in (("err", 0.0), ("f1", 0.0), ("err", 1.0), ("f1", 1.0)):
        G_true = pool[f"G_{meas}"]
        X, Y = ratio_terms(pool, meas, lam, idx)
        G, sig = ratio_path(X, Y)
        s_true = ratio_true_sigma(pool, meas, lam, G_true)
        s0 = ratio_model_sigma(pool, meas, lam)
        shr = np.sqrt((t * sig**2 + T0 * s0**2) / (t + T0))
        print(f"\n{meas} λ={lam:g}")
        for sname, sg in (("oracle σ", np.full_like(sig, s_true)), ("sandwich σ̂", sig),
                          ("σ̂ shrink σ0", shr)):
            for name, Bm in (("one-sided mixture α", B1), ("two-sided at 2α, one end", B2a),
                             ("two-sided at α, one end", Ba), ("repeated Wald z_α", z1)):
                with np.errstate(invalid="ignore"):
                    up = ~(G_true <= G + sg * Bm)
                    lo = ~(G_true >= G - sg * Bm)
                cu, su = tu_cov(up)
                cl, sl = tu_cov(lo)
                w = [float(np.nanmean(sg[:, L - 1] * Bm[0, L - 1])) for L in (100, 300, 1000)]
                wr = [wi / float(np.nanmean(sg[:, L - 1] * z1[0, L - 1])) for wi, L in zip(w, (100, 300, 1000))]
                res[f"{meas} λ={lam:g} | {sname} | {name}"] = dict(upper=cu, upper_se=su, lower=cl, lower_se=sl, half=w, ratio=wr)
                print(f"  {sname:<13s} {name:<26s} upper-bound cov {cu:.3f}±{su:.3f}  lower-bound cov "
                      f"{cl:.3f}±{sl:.3f}  half-width t=100/300/1000 {np.round(w, 4)} (×{np.round(wr, 2)} one-sided Wald)")

# ------------------------------------------------------------------- tuned λ (error rate)
if SECTION == "lambda":
    pool = make_pool()
    idx = draw_indices(pool, R, T, np.random.default_rng(seed))
    G_true = pool["G_err"]
    v, l = pool["v"][idx], pool["err_l"][idx]
    mu = float(pool["p"] @ pool["err_mN"])
    mp = pool["err_mN"][idx] - mu  # m' = m_N − μ_N (pool mean 0 under p)
    cs = lambda a: np.cumsum(a, 1)
    Sv, Svl, Svm = cs(v), cs(v * l), cs(v * mp)
    S2, S2l, S2m, S2ll, S2lm, S2mm = cs(v * v), cs(v * v * l), cs(v * v * mp), cs(v * v * l * l), cs(v * v * l * mp), cs(v * v * mp * mp)
    lb, mb = Svl / Sv, Svm / Sv  # v-weighted means
    cov_lm = S2lm - mb * S2l - lb * S2m + lb * mb * S2
    var_m = S2mm - 2 * mb * S2m + mb * mb * S2
    with np.errstate(invalid="ignore", divide="ignore"):
        lam_t = np.clip(np.nan_to_num(cov_lm / var_m), 0, 1)
    # plug-in: λ̂_t refit on all t draws (what the package does at every look)
    Gt = lb - lam_t * mb
    ss = S2ll + lam_t**2 * S2mm + Gt**2 * S2 - 2 * lam_t * S2lm - 2 * Gt * S2l + 2 * lam_t * Gt * S2m
    sig_t = np.sqrt(np.maximum(ss, 0) * t) / Sv
    # predictable: term i uses λ̂_{i−1} (0 before 10 draws)
    lam_prev = np.concatenate([np.zeros((R, 1)), lam_t[:, :-1]], 1)
    lam_prev[:, :10] = 0.0
    Xp = v * (l - lam_prev * mp)
    Gp, sig_p = ratio_path(Xp, v)
    lam_star = None
    # λ* on the pool (population regression under q)
    q = pool["q"]; vv = pool["v"]; ll = pool["err_l"]; mm = pool["err_mN"] - mu
    A = ll - (q @ (vv * ll)); Bc = mm - (q @ (vv * mm))
    lam_star = float(np.clip((q @ (vv * vv * A * Bc)) / (q @ (vv * vv * Bc * Bc)), 0, 1))
    s_star = ratio_true_sigma(pool, "err", lam_star, G_true)
    X1, Y1 = ratio_terms(pool, "err", lam_star, idx)
    G1, sig1 = ratio_path(X1, Y1)
    print(f"λ* = {lam_star:.3f}, σ(λ*) = {s_star:.4f}; λ̂_t quantiles at t=30/100/1000:",
          [np.percentile(lam_t[:, L - 1], [10, 50, 90]).round(2).tolist() for L in (30, 100, 1000)])
    for name, Gx, sg in (("fixed λ = λ*", G1, sig1), ("plug-in λ̂_t (refit each t)", Gt, sig_t),
                         ("predictable λ̂_{i−1}", Gp, sig_p), ("SNIS λ = 0", *ratio_path(v * l, v))):
        d = summarize(Gx, sg * B, G_true, T0, wald_half=sg * W)
        Gi = np.clip(Gx, 1e-9, 1 - 1e-9); hl = sg * B / (Gi * (1 - Gi))
        lo_, hi_ = 1 / (1 + np.exp(-(np.log(Gi / (1 - Gi)) - hl))), 1 / (1 + np.exp(-(np.log(Gi / (1 - Gi)) + hl)))
        ml = ~((lo_ <= G_true) & (G_true <= hi_)); ml[:, : T0 - 1] = False
        d["cov_logit"] = float(1 - ml.any(1).mean())
        print(f"  [{name}] logit-scale CS time-uniform coverage {d['cov_logit']:.3f}")
        res[name] = d
        print(fmt(name, d), "| fixed-t Wald cov", [round(d[f"fixcov{L}"], 3) for L in (100, 300, 1000)],
              "| SD·√t at 300", round(float(np.std(Gx[:, 299]) * math.sqrt(300)), 4),
              "mean σ̂ at 300", round(float(np.mean(sg[:, 299])), 4))

# ------------------------------------------------------------------------ pairs
if SECTION == "pairs":
    pool = make_pool()
    rng = np.random.default_rng(seed + 7)
    right = np.flatnonzero(pool["err_l"] == 0)
    wrong = np.flatnonzero(pool["err_l"] == 1)
    for label, k_right, k_wrong in (("null Δ = 0", 250, 250), ("Δ = −0.01", 250, 200), ("Δ = −0.02", 250, 150)):
        flip = np.zeros(pool["m"], bool)
        flip[rng.choice(right, k_right, replace=False)] = True
        flip[rng.choice(wrong, k_wrong, replace=False)] = True
        lB = np.where(flip, 1 - pool["err_l"], pool["err_l"])
        D_true = float(pool["err_l"].mean() - lB.mean())
        idx = draw_indices(pool, R, T, np.random.default_rng(seed))
        v = pool["v"][idx]
        X = v * (pool["err_l"][idx] - lB[idx])
        G, sig = ratio_path(X, v)
        d = summarize(G, sig * B, D_true, T0, wald_half=sig * W)
        res[f"pairs | {label}"] = d
        print(f"\n{label}: Δ_true = {D_true:+.4f}")
        print(fmt("  CS for Δ (sandwich, t≥30)", d))
        # model-implied σ0 of the pair's terms (y ~ s; predictions fixed)
        s_, yA = pool["s"], pool["yhat"]
        yB = np.where(flip, 1 - yA, yA)
        dl1, dl0 = (1.0 != yA) * 1.0 - (1.0 != yB), (0.0 != yA) * 1.0 - (0.0 != yB)
        D0 = float(pool["p"] @ (s_ * dl1 + (1 - s_) * dl0))
        s0 = math.sqrt(pool["q"] @ (pool["v"] ** 2 * (s_ * (dl1 - D0) ** 2 + (1 - s_) * (dl0 - D0) ** 2)))
        shr = np.sqrt((t * sig**2 + T0 * s0**2) / (t + T0))
        ndis = np.cumsum(flip[idx], 1)
        start = (t[None, :] >= T0) & (ndis >= 30)
        print(f"  disagreements among draws at t=30/100/300 (median): "
              f"{[int(np.median(ndis[:, L - 1])) for L in (30, 100, 300)]}; σ0 = {s0:.3f}, σ̂(1000) median = {np.median(sig[:, -1]):.3f}")
        for gname, sg, st in (("shrink σ0", shr, None), ("start at 30 disagreements", sig, start),
                              ("shrink σ0 + 30 disagreements", shr, start)):
            with np.errstate(invalid="ignore"):
                miss = ~(np.abs(G - D_true) <= sg * B)
            miss &= (t[None, :] >= T0) if st is None else st
            c = 1 - miss.any(1).mean()
            res[f"pairs | {label} | {gname}"] = dict(cov=c, se=math.sqrt(max(c * (1 - c), 1e-12) / R))
            print(f"  CS for Δ, {gname:<30s} cov {c:.3f} ± {math.sqrt(max(c * (1 - c), 1e-12) / R):.3f}")
        excl_g = (np.abs(G) > shr * B) & start
        stop_g = np.where(excl_g.any(1), np.argmax(excl_g, 1) + 1, T)
        res[f"pairs decisions guarded | {label}"] = dict(rej=float(excl_g.any(1).mean()), stop=float(stop_g.mean()))
        print(f"  P(reject) guarded CS every draw {excl_g.any(1).mean():.3f} (mean stop {stop_g.mean():.0f})")
        # decisions: the package's sequential protocol (Wald p < 0.05 at 20 looks, 50 … 1000)
        looks = np.arange(50, T + 1, 50)
        with np.errstate(invalid="ignore", divide="ignore"):
            zstat = G / (sig / np.sqrt(t))
        p20 = 2 * stats.norm.sf(np.abs(zstat[:, looks - 1]))
        rej_wald20 = (p20 < ALPHA).any(1)
        excl = np.abs(G) > sig * B
        excl[:, : T0 - 1] = False
        rej_cs_every = excl.any(1)
        rej_cs_20 = excl[:, looks - 1].any(1)
        rej_fixed = (p20[:, -1] < ALPHA)
        stop_cs = np.where(rej_cs_every, np.argmax(excl, 1) + 1, T)
        stop_w = np.where(rej_wald20, looks[np.argmax(p20 < ALPHA, 1)], T)
        out = dict(D=D_true, rej_wald20=rej_wald20.mean(), rej_cs_every=rej_cs_every.mean(),
                   rej_cs_20=rej_cs_20.mean(), rej_fixed1000=rej_fixed.mean(),
                   stop_cs=float(stop_cs.mean()), stop_wald=float(stop_w.mean()))
        res[f"pairs decisions | {label}"] = out
        print(f"  P(reject): sequential Wald, 20 looks {out['rej_wald20']:.3f} (mean stop {out['stop_wald']:.0f}); "
              f"CS every draw {out['rej_cs_every']:.3f} (mean stop {out['stop_cs']:.0f}); "
              f"CS at the 20 looks {out['rej_cs_20']:.3f}; one fixed-n Wald at 1000 {out['rej_fixed1000']:.3f}")

# --------------------------------------------------------------- exact betting CS
if SECTION == "betting":
    pool = make_pool()
    idx = draw_indices(pool, R, T, np.random.default_rng(seed))
    vmax = pool["vmax"]
    for meas in ("err", "f1"):
        G_true = pool[f"G_{meas}"]
        X, Y = ratio_terms(pool, meas, 0.0, idx)
        Ga, sig = ratio_path(X, Y)
        s0 = ratio_model_sigma(pool, meas, 0.0)
        lo_g, hi_g = (0.0, 0.6) if meas == "err" else (0.1, 0.9)
        grid = np.concatenate([np.linspace(lo_g, hi_g, 321), [G_true]])
        K = grid.shape[0]
        c0 = (s0 * (Y.mean()) / vmax) ** 2  # prior variance of x (model-implied), predictable
        thr = math.log(1 / ALPHA)
        widths = {kind: {L: [] for L in (100, 300, 1000)} for kind in ("PrPl", "t*")}
        miss = {kind: 0 for kind in ("PrPl", "t*")}
        tt = t[:, None].astype(float)
        for r in range(R):
            x = (X[r][:, None] - grid[None, :] * Y[r][:, None]) / vmax  # (T, K) ∈ [−g, 1 − g]
            cx = np.cumsum(x, 0)
            mean_prev = np.vstack([np.zeros((1, K)), cx[:-1] / tt[:-1]])
            dev2 = (x - mean_prev) ** 2
            var_prev = np.vstack([np.full((1, K), c0), (c0 + np.cumsum(dev2, 0)[:-1]) / (tt[:-1] + 1)])
            for kind in ("PrPl", "t*"):
                if kind == "PrPl":
                    lam = np.sqrt(2 * math.log(2 / ALPHA) / (var_prev * tt * np.log(tt + 1)))
                else:
                    lam = np.sqrt(2 * math.log(2 / ALPHA) / (var_prev * TSTAR))
                lp = np.minimum(lam, 0.5 / np.maximum(grid, 1e-9)[None, :])
                lm = np.minimum(lam, 0.5 / (1 - grid)[None, :])
                logKp = np.cumsum(np.log1p(lp * x), 0)
                logKm = np.cumsum(np.log1p(-lm * x), 0)
                logK = np.logaddexp(logKp, logKm) - math.log(2)
                rej = logK >= thr
                miss[kind] += bool(rej[:, -1].any() and False) or bool(rej[:, K - 1].any())
                acc = ~np.maximum.accumulate(rej, 0)  # running intersection (rejected stays out)
                for L in (100, 300, 1000):
                    a = acc[L - 1, :-1]
                    widths[kind][L].append(grid[:-1][a].max() - grid[:-1][a].min() if a.any() else 0.0)
        print(f"\n{meas} SNIS, exact betting CS (grid step {(hi_g - lo_g) / 320:.5f}, vmax={vmax:.2f})")
        for kind in ("PrPl", "t*"):
            cov = 1 - miss[kind] / R
            se = math.sqrt(max(cov * (1 - cov), 1e-12) / R)
            w = {L: float(np.mean(widths[kind][L])) for L in (100, 300, 1000)}
            wald = {L: float(np.nanmean(2 * sig[:, L - 1] * W[0, L - 1])) for L in (100, 300, 1000)}
            asy = {L: float(np.nanmean(2 * sig[:, L - 1] * B[0, L - 1])) for L in (100, 300, 1000)}
            res[f"betting {meas} {kind}"] = dict(cov=cov, se=se, w=w, wald=wald, asy=asy)
            print(f"  betting ({kind:<4s}) cov (all t ≥ 1) {cov:.3f} ± {se:.3f}; running-intersection width "
                  + ", ".join(f"t={L}: {w[L]:.4f} (×{w[L] / wald[L]:.2f} Wald, ×{w[L] / asy[L]:.2f} asympt. CS)" for L in (100, 300, 1000)))

# ------------------------------------------------------------ finite-population form
if SECTION == "finite":
    import os
    for m in [int(x) for x in os.environ.get("MS", "5000,1000").split(",")]:
        pool = make_pool(m=m)
        q, p, l = pool["q"], pool["p"], pool["err_l"]
        G_true = pool["G_err"]
        idx = draw_indices(pool, R, T, np.random.default_rng(seed))
        # τ(n): Σ_k (1 − exp(−q_k τ)) = n (the package's successive-sampling time)
        ns = np.arange(1, T + 1)
        lo_, hi_ = np.zeros(T), np.full(T, 1e9)
        for _ in range(200):
            mid = (lo_ + hi_) / 2
            f = (-np.expm1(-np.outer(mid, q))).sum(1) - np.minimum(ns, m - 1e-6)
            lo_, hi_ = np.where(f < 0, mid, lo_), np.where(f < 0, hi_, mid)
        tau = (lo_ + hi_) / 2
        s0 = ratio_model_sigma(pool, "err", 0.0)
        Gfp = np.empty((R, T)); sefp = np.empty((R, T)); nlab = np.empty((R, T), int)
        Gm = np.empty((R, T)); Sm = np.empty((R, T))
        for r in range(R):
            d = idx[r]
            units, first = np.unique(d, return_index=True)
            order = np.argsort(first)
            units, first = units[order], first[order]
            new = np.zeros(T, bool); new[first] = True
            n_t = np.cumsum(new)
            nlab[r] = n_t
            Kn = units.shape[0]
            incl = first[None, :] <= (t - 1)[:, None]  # (T, Kn)
            pi = -np.expm1(-np.outer(tau[n_t - 1], q[units]))
            vk = np.where(incl, p[units][None, :] / pi, 0.0)
            lk = l[units][None, :]
            Sv = vk.sum(1)
            g = (vk * lk).sum(1) / Sv
            u = vk * (lk - g[:, None]) / Sv[:, None]
            c = np.where(incl, 1 - pi, 0.0)
            A = (c * u).sum(1) / np.maximum(c.sum(1), 1e-300)
            sefp[r] = np.sqrt((c * (u - A[:, None]) ** 2).sum(1))
            Gfp[r] = g
            # predictable finite-population martingale: T_i = Σ_{labeled before i} p ℓ + v_i ℓ_i 1{new_i}
            known = np.concatenate([[0.0], np.cumsum(np.where(new, p[d] * l[d], 0.0))[:-1]])
            Ti = known + np.where(new, p[d] / q[d] * l[d], 0.0)
            Gm[r] = np.cumsum(Ti) / t
            Sm[r] = np.cumsum(Ti**2) - t * Gm[r] ** 2
        X, Y = ratio_terms(pool, "err", 0.0, idx)
        Gwr, sig = ratio_path(X, Y)
        print(f"\nm = {m}: G = {G_true:.4f}; distinct labels at t=100/300/1000: "
              f"{[int(np.mean(nlab[:, L - 1])) for L in (100, 300, 1000)]}")
        rho2M = rho2 / s0**2
        halfM = np.sqrt(2 * (Sm * rho2M + 1) / rho2M * np.log(np.sqrt(Sm * rho2M + 1) / ALPHA)) / t
        Bn = two_sided_mult(nlab, rho2)
        cases = {
            "WR (every draw a term), sandwich": (Gwr, sig * B),
            "FP center, FP se, n = labels (naive port)": (Gfp, sefp * np.sqrt(nlab) * Bn),
            "FP center, FP se, t = draws": (Gfp, sefp * np.sqrt(t) * B),
            "FP center, WR sandwich width": (Gfp, sig * B),
            "predictable FP martingale, intrinsic time": (Gm, halfM),
        }
        for name, (Gx, h) in cases.items():
            d = summarize(Gx, h, G_true, T0)
            d["fixcov"] = {L: float(np.mean(np.abs(Gx[:, L - 1] - G_true) <= h[:, L - 1])) for L in (100, 300, 1000)}
            d["sd"] = {L: float(np.std(Gx[:, L - 1])) for L in (100, 300, 1000)}
            res[f"m={m} | {name}"] = d
            print(fmt(f"  {name}", d), "| SD(center) t=100/300/1000",
                  [round(d["sd"][L], 4) for L in (100, 300, 1000)])
        wald_fp = {L: float(np.mean(np.abs(Gfp[:, L - 1] - G_true) <= 1.96 * sefp[:, L - 1])) for L in (100, 300, 1000)}
        print("  fixed-n Wald coverage of the FP form at 100/300/1000:", {k: round(v_, 3) for k, v_ in wald_fp.items()},
              "mean FP se·√n / σ̂_WR at 1000:", round(float(np.mean(sefp[:, -1] * np.sqrt(nlab[:, -1])) / np.mean(sig[:, -1])), 3))

print(f"\n{time.time() - t_start:.1f}s")
json.dump(res, open(f"res_{SECTION}_R{R}_s{seed}{os.environ.get('MS', '')}.json", "w"), indent=1, default=float)
