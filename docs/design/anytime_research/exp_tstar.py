"""Experiment 4: sensitivity to the tuning time t* (sandwich σ̂, looks t = 30..1000).
Usage: OMP_NUM_THREADS=1 python exp_tstar.py [R] [seed]"""
import json, sys
import numpy as np
from cs_core import (draw_indices, fmt, make_pool, ratio_path, ratio_terms, ratio_true_sigma,
                     rho2_for, summarize, two_sided_mult, wald_mult)
R = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
T = 1000; t = np.arange(1, T + 1); W = wald_mult(t)[None, :]
pool = make_pool(); idx = draw_indices(pool, R, T, np.random.default_rng(seed))
res = {}
for meas, lam in (("err", 0.0), ("err", 1.0), ("f1", 1.0)):
    X, Y = ratio_terms(pool, meas, lam, idx); G, sig = ratio_path(X, Y)
    Gt = pool[f"G_{meas}"]; s_true = ratio_true_sigma(pool, meas, lam, Gt)
    print(f"\n{meas} λ={lam:g}")
    for ts in (30, 100, 300, 1000, 3000):
        B = two_sided_mult(t, rho2_for(ts))[None, :]
        for nm, sg in (("oracle σ", np.full_like(sig, s_true)), ("sandwich", sig)):
            d = summarize(G, sg * B, Gt, 30, wald_half=sg * W)
            res[f"{meas} λ={lam:g} | t*={ts} | {nm}"] = d
            print(fmt(f"t*={ts:<5d} {nm}", d))
json.dump(res, open(f"res_tstar_R{R}_s{seed}.json", "w"), indent=1)
