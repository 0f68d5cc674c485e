"""Speed of the ranking dynamic programs (thesis Thm 6.1, Appendix A.1), measured.

Goals: on a synthetic pool of the MSLR-WEB30k scale (30,000 queries × 120 items × 5 grades),
the absolute programs (eq. 6.10; DCG and ERR) run well under 10 s and the comparative ERR program
(eq. 6.11, O(|r₁||r₂|) per query) under 60 s on 2 cores. A second table times comparative ERR
per query against |r₁||r₂| to show the quadratic term. Timings are the median of ``--repeat``
runs; peak memory is numpy's traced allocations (tracemalloc) during one run.

    .venv/bin/python benchmarks/ranking_bench.py [--queries 30000 --items 120 --grades 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from run import median_time, peak_bytes  # benchmarks/ is the script directory

import activeeval as ae
from activeeval import ranking as rk


def _peak_mb(fn: Callable[[], Any]) -> float:
    return peak_bytes(fn) / 1e6


def synthetic_pair(
    m: int, length: int, grades: int, seed: int = 0
) -> tuple[ae.GradedRelevance, ae.GradedRelevance]:
    """Two rankers over ``m`` queries of ``length`` items each: the second reorders the first's
    candidates by a noisy score and replaces 10% of them with items of its own (an index update,
    Sec. 6.3.2). Grade distributions are Dirichlet(0.5) draws, item costs log document lengths.
    """
    rng = np.random.default_rng(seed)
    n = m * length
    raw = rng.gamma(0.5, size=(n, grades))
    proba1 = raw / raw.sum(axis=1, keepdims=True)
    offsets = np.arange(m + 1, dtype=np.int64) * length
    items1 = np.tile(np.arange(length, dtype=np.int64), m)
    costs1 = np.log1p(rng.integers(100, 10_000, size=n)).astype(float)
    # Ranker 2: the same candidate slots, shuffled within each query, 10% swapped for new ids.
    order = np.argsort(rng.random((m, length)) + np.arange(length) / length, axis=1)
    flat = (order + offsets[:-1, None]).ravel()
    items2 = items1[flat].copy()
    swap = rng.random(n) < 0.1
    items2[swap] += length  # ids ≥ length: never shown by ranker 1
    raw2 = rng.gamma(0.5, size=(n, grades))
    proba2 = np.where(swap[:, None], raw2 / raw2.sum(axis=1, keepdims=True), proba1[flat])
    costs2 = np.where(swap, np.log1p(rng.integers(100, 10_000, size=n)), costs1[flat])
    rel1 = ae.GradedRelevance(proba1, offsets, items=items1, costs=costs1)
    rel2 = ae.GradedRelevance(proba2, offsets, items=items2, costs=costs2)
    return rel1, rel2


def bench_pool(m: int, length: int, grades: int, repeat: int) -> dict[str, Any]:
    t = time.perf_counter()
    rel1, rel2 = synthetic_pair(m, length, grades)
    build = time.perf_counter() - t
    dcg, err = ae.DCG(), ae.ERR()
    cases: dict[str, tuple[Callable[[], Any], int]] = {
        "absolute DCG moment (eq. 6.10)": (
            lambda: rk.ranking_second_moment(rel1, dcg, 10.0),
            repeat,
        ),
        "absolute ERR moment (eq. 6.10)": (
            lambda: rk.ranking_second_moment(rel1, err, 0.3),
            repeat,
        ),
        "absolute DCG q* (active, costs)": (
            lambda: rk.ranking_distribution(rel1, dcg),
            repeat,
        ),
        "absolute ERR q* (active, costs)": (
            lambda: rk.ranking_distribution(rel1, err),
            repeat,
        ),
        "comparative DCG moment (eq. 6.11)": (
            lambda: rk.ranking_difference_moment(rel1, rel2, dcg, 0.0),
            repeat,
        ),
        "comparative ERR moment (eq. 6.11)": (
            lambda: rk.ranking_difference_moment(rel1, rel2, err, 0.0),
            max(1, repeat // 2),
        ),
        "comparative ERR q* (active, costs)": (
            lambda: rk.ranking_distribution([rel1, rel2], err),
            1,
        ),
        "comparative ERR moment, k = 10": (
            lambda: rk.ranking_difference_moment(rel1, rel2, ae.ERR(k=10), 0.0),
            repeat,
        ),
    }
    rows = []
    for name, (fn, reps) in cases.items():
        seconds = median_time(fn, reps)
        rows.append({"case": name, "seconds": seconds, "repeats": reps})
        print(f"  {name:<38s} {seconds:8.2f} s", flush=True)
    peaks = {
        "absolute ERR moment": _peak_mb(lambda: rk.ranking_second_moment(rel1, err, 0.3)),
        "comparative ERR moment": _peak_mb(
            lambda: rk.ranking_difference_moment(rel1, rel2, err, 0.0)
        ),
    }
    for name, mb in peaks.items():
        print(f"  peak traced memory, {name:<24s} {mb:8.0f} MB")
    return {
        "queries": m,
        "items_per_query": length,
        "grades": grades,
        "proba_array_MB": rel1.proba.nbytes / 1e6,
        "build_two_rankers_s": build,
        "timings": rows,
        "peak_traced_MB": peaks,
    }


def bench_scaling(lengths: list[int], grades: int, work: int, repeat: int) -> list[dict[str, Any]]:
    """Comparative ERR per query against |r₁||r₂| at roughly constant total work."""
    rows = []
    err = ae.ERR()
    for length in lengths:
        m = max(20, work // (length * length))
        rel1, rel2 = synthetic_pair(m, length, grades, seed=length)
        seconds = median_time(
            lambda r1=rel1, r2=rel2: rk.ranking_difference_moment(r1, r2, err, 0.0), repeat
        )
        per_query = seconds / m
        rows.append(
            {
                "length": length,
                "r1_times_r2": length * length,
                "queries": m,
                "seconds": seconds,
                "us_per_query": per_query * 1e6,
                "ns_per_r1r2": per_query / (length * length) * 1e9,
            }
        )
        print(
            f"  |r| = {length:4d}  |r1||r2| = {length * length:7d}"
            f"  {per_query * 1e6:10.1f} µs/query"
            f"  {per_query / (length * length) * 1e9:6.2f} ns per (i, j) pair",
            flush=True,
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=30_000)
    parser.add_argument("--items", type=int, default=120)
    parser.add_argument("--grades", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--scaling-lengths", type=int, nargs="*", default=[10, 30, 60, 120, 240, 480]
    )
    parser.add_argument("--scaling-work", type=int, default=50_000_000, help="Σ |r₁||r₂| per row")
    parser.add_argument("--out", type=Path, default=Path("docs/results/ranking_bench.json"))
    args = parser.parse_args(argv)

    print(
        f"ranking DPs on {args.queries:,} queries × {args.items} items × {args.grades} grades "
        f"(cpus: {os.cpu_count()}, numpy {np.__version__})"
    )
    pool = bench_pool(args.queries, args.items, args.grades, args.repeat)
    print("comparative ERR per query against |r1||r2|:")
    scaling = bench_scaling(args.scaling_lengths, args.grades, args.scaling_work, args.repeat)
    result = {
        "benchmark": "ranking dynamic programs (thesis Thm 6.1, App. A.1)",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
        },
        "goals": {
            "absolute_under_s": 10.0,
            "comparative_err_under_s": 60.0,
        },
        "pool": pool,
        "comparative_err_scaling": scaling,
        "chunk_elements": {"absolute": rk._CHUNK_ELEMENTS, "cross": rk._CROSS_CHUNK_ELEMENTS},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
