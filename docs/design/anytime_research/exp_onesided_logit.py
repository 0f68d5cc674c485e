"""Experiment 3b: one-sided time-uniform bounds (one-sided normal mixture at α = 0.05, ρ for
t* = 300) on the linear and the logit scale, with the start/shrink guards.
Usage: OMP_NUM_THREADS=1 python exp_onesided_logit.py [R] [seed]"""
import json, math, sys
import numpy as np
from scipy import special, stats
from cs_core import (draw_indices, make_pool, one_sided_mult, ratio_model_sigma, ratio_path,
                     ratio_terms, rho2_one_sided)
R = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
T, T0 = 1000, 30
t = np.arange(1, T + 1)
B1 = one_sided_mult(t, rho2_one_sided(300))[None, :]
pool = make_pool()
idx = draw_indices(pool, R, T, np.random.default_rng(seed))
res = {}
for meas, lam in (("err", 0.0), ("f1", 0.0), ("err", 1.0), ("f1", 1.0)):
    Gt = pool[f"G_{meas}"]
    X, Y = ratio_terms(pool, meas, lam, idx)
    G, sig = ratio_path(X, Y)
    s0 = ratio_model_sigma(pool, meas, lam)
    shr = np.sqrt((t * sig**2 + T0 * s0**2) / (t + T0))
    nw = np.cumsum(pool[f"{meas}_w"][idx] > 0, 1)
    st30 = np.broadcast_to(t >= T0, G.shape)
    stw = st30 & (nw >= 30)
    Gi = np.clip(G, 1e-9, 1 - 1e-9)
    print(f"\n{meas} λ={lam:g}  (G = {Gt:.4f})")
    for sname, sg in (("sandwich", sig), ("shrink σ0", shr)):
        for scale in ("linear", "logit"):
            if scale == "linear":
                up, lo = G + sg * B1, G - sg * B1
            else:
                h = sg * B1 / (Gi * (1 - Gi))
                up, lo = special.expit(special.logit(Gi) + h), special.expit(special.logit(Gi) - h)
            for stname, st in (("t≥30", st30), ("t≥30 & n_w≥30", stw)):
                if meas == "err" and stname != "t≥30":
                    continue
                with np.errstate(invalid="ignore"):
                    mu = (~(Gt <= up)) & st
                    ml = (~(Gt >= lo)) & st
                cu, cl = 1 - mu.any(1).mean(), 1 - ml.any(1).mean()
                se = lambda c: math.sqrt(max(c * (1 - c), 1e-12) / R)
                hw = [float(np.nanmean(up[:, L - 1] - G[:, L - 1])) for L in (100, 300, 1000)]
                res[f"{meas} λ={lam:g} | {sname} | {scale} | {stname}"] = dict(upper=cu, lower=cl, up_half=hw)
                print(f"  {sname:<10s} {scale:<6s} {stname:<14s} upper-bound cov {cu:.3f}±{se(cu):.3f} "
                      f"lower-bound cov {cl:.3f}±{se(cl):.3f}  upper − Ĝ at 100/300/1000 {np.round(hw, 4)}")
json.dump(res, open(f"res_onesided_logit_R{R}_s{seed}.json", "w"), indent=1)
