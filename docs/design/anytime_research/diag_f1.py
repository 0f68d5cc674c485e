import numpy as np
from cs_core import *
pool = make_pool(); R,T=1000,1000
idx = draw_indices(pool, R, T, np.random.default_rng(1))
t = np.arange(1,T+1); B = two_sided_mult(t, rho2_for(300))
for meas,lam in (("f1",0.0),("err",0.0),("f1",1.0)):
    X,Y = ratio_terms(pool, meas, lam, idx); G,sig = ratio_path(X,Y)
    Gt = pool[f"G_{meas}"]
    miss = np.abs(G-Gt) > sig*B; miss[:, :29] = False
    anym = miss.any(1); first = np.argmax(miss,1)+1
    print(meas, lam, "miss rate", anym.mean(), "first-miss t quantiles", np.percentile(first[anym],[10,25,50,75,90]))
    print("  miss side (est above truth share):", np.mean((G[anym, first[anym]-1] > Gt)))
    for L in (30,50,100,300,1000):
        z = (G[:,L-1]-Gt)/(sig[:,L-1]/np.sqrt(L))
        print(f"  t={L}: SD(Ĝ)*sqrt(t)={np.std(G[:,L-1])*np.sqrt(L):.3f} mean σ̂={np.mean(sig[:,L-1]):.3f} bias={np.mean(G[:,L-1])-Gt:+.4f}  z 2.5/97.5% {np.percentile(z,[2.5,97.5]).round(2)}")
    if meas=="f1":
        nw = np.cumsum(pool["f1_w"][idx]>0,1)
        print("  #draws with w>0 at t=30:", np.percentile(nw[:,29],[5,50,95]))
