"""`make bench`: speed and memory goals of activeeval, measured (never asserted in unit tests).

Goals (issue: active estimation): computing q* on a pool of 10⁷ instances × 10 classes costs at
most 3× one numpy pass over the probability array, with peak extra memory at most 2× the array.
Timings are the median of several runs; memory is numpy's traced allocations (tracemalloc) on
top of the input array.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import activeeval as ae


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def peak_bytes(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - base


def bench_optimal_distribution(m: int, k: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    proba = rng.random((m, k))
    proba /= proba.sum(axis=1, keepdims=True)
    nbytes = proba.nbytes
    one_pass = median_time(lambda: proba.sum(axis=1), repeat)
    cat = ae.Categorical(proba)
    _ = cat.predicted_index
    rows: dict[str, Any] = {
        "pool": m,
        "classes": k,
        "array_MB": nbytes / 1e6,
        "one_numpy_pass_s": one_pass,
    }
    cases: dict[str, Callable[[], Any]] = {
        "validate (Categorical)": lambda: ae.Categorical(proba),
        "q* error rate": lambda: ae.sampling.optimal_distribution(
            ae.Categorical(proba), "error_rate"
        ),
        "q* f1 (pos = last class)": lambda: ae.sampling.optimal_distribution(
            ae.Categorical(proba), "f1"
        ),
        "q* precision": lambda: ae.sampling.optimal_distribution(
            ae.Categorical(proba), "precision"
        ),
    }

    def q_only() -> Any:  # q* on an already validated Categorical (validation excluded)
        c = object.__new__(ae.Categorical)
        c.proba, c.labels = proba, cat.labels
        c._order, c._sorted = cat._order, cat._sorted
        return ae.sampling.optimal_distribution(c, "error_rate")

    cases["q* error rate, validated input"] = q_only
    for name, fn in cases.items():
        t = median_time(fn, repeat)
        peak = peak_bytes(fn)
        rows[name] = {
            "seconds": t,
            "x_one_pass": t / one_pass,
            "peak_extra_MB": peak / 1e6,
            "x_array": peak / nbytes,
        }
    return rows


def bench_evaluate(m: int, budget: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    p1 = rng.beta(0.5, 0.5, m)
    proba = np.c_[1 - p1, p1]
    y = (rng.random(m) < p1).astype(int)
    cat = ae.Categorical(proba)
    t = median_time(
        lambda: ae.evaluate(
            cat, lambda i: y[i], "f1", budget=budget, random_state=0, progress=False
        ),
        repeat,
    )
    return {"pool": m, "budget": budget, "evaluate_f1_seconds": t}


def bench_features(m: int, d: int, budget: int, repeat: int) -> dict[str, Any]:
    """evaluate with the pool's features (the smoother's kernel pass, O(m·n·d)), and a
    session's 60-point trajectory with features (one nested pass for all points but the last)
    against one estimate on the same session."""
    import tempfile

    rng = np.random.default_rng(2)
    x = rng.normal(size=(m, d))
    p1 = 1 / (1 + np.exp(-x[:, 0] - 0.5 * x[:, 1]))
    y = (rng.random(m) < p1).astype(int)
    cat = ae.Categorical(np.c_[1 - p1, p1])
    t_eval = median_time(
        lambda: ae.evaluate(
            cat,
            lambda i: y[i],
            "error_rate",
            budget=budget,
            random_state=0,
            progress=False,
            features=x,
        ),
        repeat,
    )
    small = m // 10
    with tempfile.TemporaryDirectory() as tmp:
        s = ae.Session.create(Path(tmp) / "s.db", cat.proba[:small], "error_rate", 500, seed=1)
        while ids := s.next_batch(100):
            s.record({i: int(y[i]) for i in ids})
        xs = x[:small]
        t_one = median_time(lambda: s.estimate(features=xs), repeat)
        t_traj = median_time(lambda: s.trajectory(60, features=xs), 1)
        s.close()
    return {
        "pool": m,
        "features": d,
        "budget": budget,
        "evaluate_error_rate_features_seconds": t_eval,
        "session_pool": small,
        "session_labels": 500,
        "session_estimate_features_seconds": t_one,
        "session_trajectory_60_features_seconds": t_traj,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pool", type=int, default=10_000_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("docs/results/bench.json"))
    args = ap.parse_args()
    res = {
        "optimal_distribution": bench_optimal_distribution(args.pool, args.classes, args.repeat),
        "evaluate": bench_evaluate(1_000_000, 800, args.repeat),
        "features": bench_features(1_000_000, 20, 800, args.repeat),
    }
    od = res["optimal_distribution"]
    print(
        f"pool {od['pool']:,} x {od['classes']} classes ({od['array_MB']:.0f} MB); "
        f"one numpy pass (row sums) {od['one_numpy_pass_s']:.3f} s"
    )
    for name, row in od.items():
        if isinstance(row, dict):
            print(
                f"  {name:34s} {row['seconds']:7.3f} s  {row['x_one_pass']:5.2f}x one pass  "
                f"peak +{row['peak_extra_MB']:7.1f} MB ({row['x_array']:.2f}x array)"
            )
    ev = res["evaluate"]
    print(
        f"evaluate(f1, budget {ev['budget']}) on a pool of {ev['pool']:,}: "
        f"{ev['evaluate_f1_seconds']:.3f} s"
    )
    fe = res["features"]
    print(
        f"evaluate(error_rate, budget {fe['budget']}, features) on {fe['pool']:,} x "
        f"{fe['features']}: {fe['evaluate_error_rate_features_seconds']:.2f} s; a session on "
        f"{fe['session_pool']:,} with {fe['session_labels']} labels: estimate "
        f"{fe['session_estimate_features_seconds']:.2f} s, 60-point trajectory "
        f"{fe['session_trajectory_60_features_seconds']:.2f} s"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
