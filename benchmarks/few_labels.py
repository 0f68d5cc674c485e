"""The README's "Known limits of the intervals" at a handful of labels, measured on simulated
pools with fixed seeds (minutes on 2 cores; not part of the suite):

    python benchmarks/few_labels.py mse        # MSE interval coverage at 3–50 labels, right model
    python benchmarks/few_labels.py compare    # type I error of compare() at 2–10 labels
    python benchmarks/few_labels.py batches    # batch-adaptive F1 against static q

``--reps`` (default 400) campaigns per row.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import activeeval as ae


def _mse(reps: int) -> None:
    """A Gaussian model that is exactly right (y ~ N(μ, σ²)), 3,000 instances."""
    rng = np.random.default_rng(0)
    m = 3000
    mu = rng.normal(0, 1, m)
    sd = np.exp(rng.normal(-0.5, 0.5, m))
    y = mu + sd * rng.standard_normal(m)
    model = ae.Gaussian(mu, sd**2)
    truth = float(np.mean((y - mu) ** 2))
    for b in (3, 5, 10, 20, 50):
        res = [
            ae.evaluate(model, lambda i: y[i], "mse", budget=b, random_state=r) for r in range(reps)
        ]
        cover = np.mean([r.ci[0] <= truth <= r.ci[1] for r in res])
        print(f"  MSE, {b:3d} labels: coverage {cover:.3f}", flush=True)


def _compare(reps: int) -> None:
    """Two classifiers with exactly equal pool error rates (Δ = 0), 2,000 instances: they
    disagree on 400, half of them won by each."""
    rng = np.random.default_rng(0)
    m = 2000
    y = rng.integers(0, 2, m)
    pa = rng.uniform(0.05, 0.95, m)
    a = np.c_[1 - pa, pa]
    fa = a.argmax(1)
    flip = np.r_[np.flatnonzero(fa == y)[:200], np.flatnonzero(fa != y)[:200]]
    b = a.copy()
    b[flip] = b[flip, ::-1]
    for n in (2, 3, 5, 10):
        rejected = flagged = 0
        for r in range(reps):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                c = ae.compare([a, b], lambda i: y[i], "error_rate", budget=n, random_state=r)
            rejected += c.p_value < 0.05
            flagged += any(issubclass(w.category, ae.DegenerateIntervalWarning) for w in caught)
        print(
            f"  compare, {n:2d} labels: type I error at α = 0.05 {rejected / reps:.3f}, "
            f"flagged degenerate (stderr 0) {flagged / reps:.3f}",
            flush=True,
        )


def _batches(reps: int) -> None:
    """F1 of a calibrated classifier, 2,000 instances, static q* against batch-adaptive."""
    rng = np.random.default_rng(0)
    m = 2000
    p1 = rng.beta(0.7, 3, m)
    y = (rng.random(m) < p1).astype(int)
    proba = np.c_[1 - p1, p1]
    f = proba.argmax(1)
    truth = 2 * np.sum((f == 1) & (y == 1)) / (np.sum(f == 1) + np.sum(y == 1))
    for budget, batch in ((60, None), (60, 15), (200, None), (200, 50)):
        res = [
            ae.evaluate(proba, lambda i: y[i], "f1", budget=budget, batch_size=batch,
                        random_state=r)
            for r in range(reps)
        ]  # fmt: skip
        est = np.array([r.estimate for r in res])
        cover = np.mean([r.ci[0] <= truth <= r.ci[1] for r in res])
        se = np.mean([r.stderr for r in res])
        print(
            f"  F1, budget {budget}, batch_size {batch}: bias {est.mean() - truth:+.4f} "
            f"(MC-SE {est.std() / np.sqrt(reps):.4f}), SD {est.std():.4f}, mean stderr "
            f"{se:.4f}, coverage {cover:.3f}",
            flush=True,
        )


STUDIES = {"mse": _mse, "compare": _compare, "batches": _batches}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=sorted(STUDIES))
    ap.add_argument("--reps", type=int, default=400)
    args = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ae.ActiveEvalWarning)
        STUDIES[args.study](args.reps)


if __name__ == "__main__":
    main()
