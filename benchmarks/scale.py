"""`make bench` scale table: time and peak memory of sessions and of `evaluate` on large pools.

Every command runs in its own process (the CLI as a user runs it, interpreter start included);
its peak memory is that process's maximum resident set (``os.wait4``'s ``ru_maxrss``). A
session's commands run five times each on a store of the pool: ``next --k 1000`` then
``record`` of those 1,000 labels (five rounds, each a new batch), ``status`` and ``export``;
the table gives the median. The Python API's times are the same calls in one process on an
open session. ``evaluate`` runs on a NumPy pool of two-class probabilities, beside one numpy
pass over the array (its sum) for scale. Children run with Python's bytecode cache on (as
a user's installation has it; ``PYTHONDONTWRITEBYTECODE`` is dropped from their
environment), so that a command's time is not its modules' compilation.

    python benchmarks/scale.py [--sizes 1e6 1e7] [--evaluate 1e6 1e7 1e8] [--compare 1e7]
                               [--out docs/results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PY = sys.executable


def timed(args: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident MB (``wait4`` on the child) and stdout of one process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t = time.perf_counter()
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    out_chunks = []
    assert proc.stdout is not None and proc.stderr is not None
    out_chunks.append(proc.stdout.read())
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise RuntimeError(f"{' '.join(args)} failed: {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024, "".join(out_chunks)


def write_pool(path: Path, m: int, seed: int = 0) -> None:
    """A pool file of m instances: id, p_0, p_1 (Parquet, row groups of 10⁶)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    schema = pa.schema([("id", pa.int64()), ("p_0", pa.float64()), ("p_1", pa.float64())])
    with pq.ParquetWriter(path, schema) as w:
        for start in range(0, m, 10**6):
            n = min(10**6, m - start)
            p1 = rng.uniform(0.0, 1.0, n)
            w.write_table(
                pa.table({"id": np.arange(start, start + n), "p_0": 1 - p1, "p_1": p1}, schema)
            )


def bench_session(m: int, work: Path, rounds: int = 5) -> dict[str, Any]:
    """Every session command on a pool of m instances (median of ``rounds`` runs)."""
    pool = work / f"pool_{m}.parquet"
    store = work / f"s_{m}.db"
    write_pool(pool, m)
    cli = [PY, "-m", "activeeval", "session"]
    init = timed([*cli, "init", str(store), "--pool", str(pool), "--measure", "f1",
                  "--budget", "20000", "--seed", "0"])  # fmt: skip
    rng = np.random.default_rng(1)
    rows: dict[str, list[tuple[float, float]]] = {"next": [], "record": [], "status": [],
                                                  "export": []}  # fmt: skip
    for r in range(rounds):
        batch = work / f"batch_{m}_{r}.csv"
        rows["next"].append(timed([*cli, "next", str(store), "--k", "1000", "--out",
                                   str(batch)])[:2])  # fmt: skip
        ids = pd.read_csv(batch)["id"]
        labels = work / f"labels_{m}_{r}.csv"
        pd.DataFrame({"id": ids, "label": rng.integers(0, 2, ids.shape[0])}).to_csv(
            labels, index=False
        )
        rows["record"].append(timed([*cli, "record", str(store), str(labels)])[:2])
    for _ in range(rounds):
        rows["export"].append(timed([*cli, "export", str(store), str(work / "out.csv")])[:2])
    api = api_times(store, rounds)
    for _ in range(rounds):
        rows["status"].append(timed([*cli, "status", str(store)])[:2])
    out = {
        "pool": m,
        "store_MB": store.stat().st_size / 1e6,
        "init": {"wall_s": init[0], "peak_MB": init[1]},
        **{
            k: {
                "wall_s": statistics.median(w for w, _ in v),
                "peak_MB": statistics.median(p for _, p in v),
            }
            for k, v in rows.items()
        },
        "api": api,
    }
    pool.unlink()
    store.unlink()
    return out


_API = textwrap.dedent(
    """
    import json, sys, time, statistics
    import numpy as np
    from activeeval.session import Session
    store, rounds = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(2)
    t = {"open": [], "next": [], "record": [], "progress": [], "export": []}
    for _ in range(rounds):
        a = time.perf_counter(); s = Session.open(store); t["open"].append(time.perf_counter() - a)
        a = time.perf_counter(); ids = s.next_batch(1000); t["next"].append(time.perf_counter() - a)
        labels = {i: int(v) for i, v in zip(ids, rng.integers(0, 2, len(ids)))}
        a = time.perf_counter(); s.record(labels); t["record"].append(time.perf_counter() - a)
        a = time.perf_counter(); s.progress(); t["progress"].append(time.perf_counter() - a)
        a = time.perf_counter(); s.labels_frame(); t["export"].append(time.perf_counter() - a)
        s.close()
    est = []
    for _ in range(rounds):  # the first also imports the estimators: reported apart
        a = time.perf_counter(); s = Session.open(store); s.estimate()
        est.append(time.perf_counter() - a); s.close()
    out = {k: statistics.median(v) for k, v in t.items()}
    out["estimate"] = statistics.median(est)
    out["estimate_first"] = est[0]
    print(json.dumps(out))
    """
)


def api_times(store: Path, rounds: int) -> dict[str, float]:
    _, _, out = timed([PY, "-c", _API, str(store), str(rounds)])
    return json.loads(out.strip().splitlines()[-1])


_EVALUATE = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import activeeval as ae
    m = int(float(sys.argv[1]))
    rng = np.random.default_rng(0)
    P = np.empty((m, 2))
    truth = np.empty(m, dtype=np.int8)
    for s in range(0, m, 10**7):
        p1 = rng.uniform(0.0, 1.0, min(10**7, m - s))
        P[s : s + p1.shape[0], 1] = p1
        P[s : s + p1.shape[0], 0] = 1 - p1
        truth[s : s + p1.shape[0]] = rng.random(p1.shape[0]) < p1
    models = [P]
    if sys.argv[2] == "compare":  # a second model: the first's probability plus noise
        B = np.empty((m, 2))
        for s in range(0, m, 10**7):
            e = min(s + 10**7, m)
            B[s:e, 1] = np.clip(P[s:e, 1] + rng.normal(0.0, 0.1, e - s), 0.0, 1.0)
            B[s:e, 0] = 1 - B[s:e, 1]
        models.append(B)
    a = time.perf_counter(); P.sum(); one_pass = time.perf_counter() - a  # memory-bound
    a = time.perf_counter()
    if len(models) == 1:
        res = ae.evaluate(P, lambda i: truth[i], "f1", budget=1000, random_state=0,
                          progress=False)
        value = res.estimate
    else:
        res = ae.compare(models, lambda i: truth[i], "f1", budget=1000, random_state=0,
                         progress=False)
        value = res.difference
    wall = time.perf_counter() - a
    print(json.dumps({"wall_s": wall, "one_pass_s": one_pass, "estimate": value,
                      "input_MB": sum(x.nbytes for x in models) / 1e6}))
    """
)


def bench_evaluate(m: int, rounds: int = 3, kind: str = "evaluate") -> dict[str, Any]:
    """``evaluate`` (or ``compare`` of two models, ``kind``) on m instances: the median of
    ``rounds`` runs (each its own process), the largest peak among them."""
    runs = []
    for _ in range(rounds):
        _, peak, out = timed([PY, "-c", _EVALUATE, str(m), kind])
        runs.append({**json.loads(out.strip().splitlines()[-1]), "peak_MB": peak})
    runs.sort(key=lambda r: r["wall_s"])
    mid = runs[len(runs) // 2]
    peak = max(r["peak_MB"] for r in runs)
    return {"pool": m, **mid, "peak_MB": peak, "rounds": rounds, "kind": kind}


def write_report(out: Path, sessions: list[dict[str, Any]], evals: list[dict[str, Any]]) -> None:
    data = {"sessions": sessions, "evaluate": evals, "machine": f"{os.cpu_count()} cores"}
    (out / "scale.json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [
        "# Scale: sessions and `evaluate` on large pools",
        "",
        "Written by `python benchmarks/scale.py` (`make bench`). Each CLI command is its own",
        "process, interpreter start included; peak is that process's maximum resident set.",
        "Medians of 5 runs; `next --k 1000` and `record` of 1,000 labels are five successive",
        "batches. API: the same calls in one process on an open session (`estimate`: opened",
        "afresh and estimated, five times; the first, in brackets, also imports the",
        "estimators). `init` streams the Parquet pool file a chunk of rows at",
        "a time and stores the pool summary that `status` and `estimate` read instead of the",
        "pool. Children run with Python's bytecode cache on, as an installation has it.",
        "",
        "## Session commands (CLI: wall seconds / peak MB)",
        "",
        "| pool | init | next 1,000 | record 1,000 | status | export | store |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in sessions:
        cells = [f"{r[k]['wall_s']:.2f} s / {r[k]['peak_MB']:.0f} MB"
                 for k in ("init", "next", "record", "status", "export")]  # fmt: skip
        lines.append(f"| {r['pool']:.0e} | " + " | ".join(cells) + f" | {r['store_MB']:.0f} MB |")
    lines += ["", "## Session calls (Python API, seconds)", "",
              "| pool | open | next_batch(1000) | record 1,000 | progress | labels_frame | "
              "open + estimate (first) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in sessions:
        a = r["api"]
        lines.append(
            f"| {r['pool']:.0e} | {a['open']:.3f} | {a['next']:.3f} | {a['record']:.3f} | "
            f"{a['progress']:.3f} | {a['export']:.3f} | {a['estimate']:.3f} "
            f"({a.get('estimate_first', a['estimate']):.2f}) |"
        )
    lines += ["", "## `evaluate(P, oracle, \"f1\", budget=1000)` on a NumPy pool", "",
              "And `compare([P, B], oracle, \"f1\", budget=1000)` of two models (B: P's",
              "probability plus normal noise of s.d. 0.1); input counts both models.", "",
              "Median wall time of 3 runs, each its own process; the largest peak of the three.",
              "One numpy pass: `P.sum()`, one reduction over every entry (memory-bound).",
              "",
              "| call | pool | input | wall | one numpy pass | ratio | peak RSS |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in evals:
        lines.append(
            f"| {r.get('kind', 'evaluate')} | {r['pool']:.0e} × 2 | {r['input_MB']:.0f} MB | "
            f"{r['wall_s']:.2f} s | "
            f"{r['one_pass_s']:.3f} s | {r['wall_s'] / r['one_pass_s']:.0f}× | "
            f"{r['peak_MB'] / 1000:.2f} GB |"
        )
    lines += ["", "## Against the goals", ""]
    lines += _goals(sessions, evals)
    lines += [
        "",
        "`evaluate` and `compare` make their passes over the pool a chunk of rows at a time",
        "(about 12 bytes per instance beyond the input; `docs/guide/large-pools.md`).",
        "`init` reads the pool file a chunk at a time and keeps q (8 bytes per instance) in",
        "memory, and writes the pool summary. `status` and `estimate` of one model read the",
        "summary and the labeled rows, not the pool (the budget re-plan, which reads the pool,",
        "runs above 262,144 instances only with `--target-width`); so do the comparison of a",
        "session of two models or more (their summary), sessions with a stopping rule (its",
        "looks and anytime interval from the same summary) and trajectories (`status --plot`).",
        "Not built yet: summaries for groups and features (they read the stored pool whole,",
        "once per process: about 16 GB at 10⁸). Dask pools: [Scale on Dask](dask_scale.md).",
    ]
    (out / "scale.md").write_text("\n".join(lines) + "\n")


def _goals(sessions: list[dict[str, Any]], evals: list[dict[str, Any]]) -> list[str]:
    """Each measured figure against the scale issue's goal: met or not."""
    out = []
    for r in sessions:
        if r["pool"] >= 10**8:
            p = r["init"]["peak_MB"]
            out.append(f"- {r['pool']:.0e}, CLI `init`: {r['init']['wall_s']:.0f} s, {p:.0f} MB "
                       f"(goal ≤ 1.5 GB): {'met' if p <= 1500 else 'not met'}")  # fmt: skip
        for k in ("next", "record", "status", "export"):
            w, p = r[k]["wall_s"], r[k]["peak_MB"]
            ok = "met" if w <= 1.5 and p <= 300 else "not met"
            out.append(f"- {r['pool']:.0e}, CLI `{k}`: {w:.2f} s, {p:.0f} MB "
                       f"(goal ≤ 1.5 s, ≤ 300 MB): {ok}")  # fmt: skip
        for k in ("next", "record", "progress", "export", "estimate"):
            v = r["api"][k]
            out.append(f"- {r['pool']:.0e}, API `{k}`: {v:.3f} s (goal ≤ 0.3 s): "
                       f"{'met' if v <= 0.3 else 'not met'}")  # fmt: skip
    for r in evals:
        if r["pool"] >= 10**8 and r.get("kind", "evaluate") == "evaluate":
            ok = r["peak_MB"] <= 3500 and r["wall_s"] <= 10
            out.append(f"- `evaluate` at {r['pool']:.0e} × 2: {r['wall_s']:.1f} s, "
                       f"{r['peak_MB'] / 1000:.2f} GB (goal ≤ 10 s, ≤ 3.5 GB): "
                       f"{'met' if ok else 'not met'}")  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", nargs="*", type=float, default=[1e6, 1e7])
    ap.add_argument("--evaluate", nargs="*", type=float, default=[1e6, 1e7])
    ap.add_argument("--compare", nargs="*", type=float, default=[1e7])
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    args = ap.parse_args()
    # evaluate first: after a session's 10⁸ status (16 GB) the machine reclaims memory for a
    # while and every timing is slower
    evals = [bench_evaluate(int(m)) for m in args.evaluate]
    evals += [bench_evaluate(int(m), kind="compare") for m in args.compare]
    with tempfile.TemporaryDirectory() as tmp:
        sessions = [bench_session(int(m), Path(tmp)) for m in args.sizes]
    write_report(args.out, sessions, evals)
    print((args.out / "scale.md").read_text())


if __name__ == "__main__":
    main()
