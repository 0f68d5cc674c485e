"""`make bench` Dask rows of the scale table: `evaluate` on a partitioned Parquet pool.

For each size the benchmark writes a partitioned Parquet dataset to local disk (files of
2²² rows, row groups of 2²⁰, columns ``p_0`` and ``p_1`` as float32: 8 bytes per instance),
then, in a child process, starts a ``distributed.LocalCluster`` of two single-threaded worker
processes, reads the dataset with ``dd.read_parquet`` and runs ``evaluate(pool, oracle, "f1",
budget=1000)``; the dataset is deleted after. Reported: the wall time of the call, of one Dask
pass over the pool for scale (``pool.sum().compute()``: reading every partition) and their
ratio, and the peak resident memory of every process (the client, which also runs the
scheduler, and each worker: ``ru_maxrss``). The oracle labels an instance from a hash of its
position (30% positives), so that no array of labels the size of the pool is needed.

    python benchmarks/dask_scale.py [--sizes 1e7 1e8 1e9] [--out docs/results] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np

PY = sys.executable
FILE_ROWS = 1 << 22
GROUP_ROWS = 1 << 20


def write_dataset(folder: Path, m: int, seed: int = 0) -> float:
    """A partitioned Parquet pool of m instances (p_0, p_1 as float32); seconds taken."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = time.perf_counter()
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    schema = pa.schema([("p_0", pa.float32()), ("p_1", pa.float32())])
    for k, start in enumerate(range(0, m, FILE_ROWS)):
        n = min(FILE_ROWS, m - start)
        p1 = rng.beta(0.5, 2.0, n).astype(np.float32)
        table = pa.table({"p_0": np.float32(1) - p1, "p_1": p1}, schema)
        pq.write_table(table, folder / f"part-{k:05d}.parquet", row_group_size=GROUP_ROWS)
    return time.perf_counter() - t


_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import numpy as np

    def maxrss():
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def oracle(idx):
        h = (np.asarray(idx).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(11)
        return (h / 2.0**53 < 0.3).astype(int)

    def main():
        import dask.dataframe as dd
        from distributed import Client, LocalCluster
        import activeeval as ae
        folder = sys.argv[1]
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None, memory_limit=0)
        client = Client(cluster)
        pool = dd.read_parquet(folder)
        a = time.perf_counter(); pool.sum().compute(); one_pass = time.perf_counter() - a
        a = time.perf_counter()
        res = ae.evaluate(pool, oracle, "f1", budget=1000, random_state=0, progress=False)
        wall = time.perf_counter() - a
        workers = client.run(maxrss)
        print(json.dumps({"wall_s": wall, "one_pass_s": one_pass, "estimate": res.estimate,
                          "ci": res.ci, "n_labels": res.n_labels,
                          "client_peak_MB": maxrss(),
                          "worker_peak_MB": sorted(workers.values())}))
        client.close(); cluster.close()

    if __name__ == "__main__":
        main()
    """
)


def bench(m: int, work: Path) -> dict[str, Any]:
    folder = work / f"pool_{m}"
    write_s = write_dataset(folder, m)
    script = work / "child.py"
    script.write_text(_CHILD)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    try:
        out = subprocess.run(
            [PY, str(script), str(folder)], capture_output=True, text=True, env=env, check=False
        )
        if out.returncode:
            raise RuntimeError(out.stderr[-3000:])
        row = json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder)
    disk = m * 8 / 1e9
    return {"pool": m, "dataset_GB": disk, "write_s": write_s, **row}


def write_report(out: Path, rows: list[dict[str, Any]]) -> None:
    (out / "dask_scale.json").write_text(
        json.dumps({"rows": rows, "machine": f"{os.cpu_count()} cores"}, indent=1) + "\n"
    )
    lines = [
        "# Scale: `evaluate` on a Dask pool",
        "",
        "Written by `python benchmarks/dask_scale.py` (`make bench`). A partitioned Parquet",
        "pool (files of 2²² rows, columns `p_0`, `p_1` as float32), written to local disk by",
        "the benchmark and deleted after, read with `dd.read_parquet` on a",
        "`distributed.LocalCluster` of two single-threaded worker processes on this 2-core",
        'machine; `evaluate(pool, oracle, "f1", budget=1000)`. One pass: `pool.sum()` over',
        "the dataset (reading every partition). Peak: each process's maximum resident set.",
        "",
        "| pool | dataset | evaluate | one Dask pass | ratio | peak: client | peak: workers |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        w = " / ".join(f"{x / 1000:.2f} GB" for x in r["worker_peak_MB"])
        lines.append(
            f"| {r['pool']:.0e} | {r['dataset_GB']:.1f} GB | {r['wall_s']:.0f} s | "
            f"{r['one_pass_s']:.1f} s | {r['wall_s'] / r['one_pass_s']:.1f}× | "
            f"{r['client_peak_MB'] / 1000:.2f} GB | {w} |"
        )
    lines += [
        "",
        "The call makes about six passes over the pool (the lengths of the partitions, two for",
        "q\\*'s sums, the chain of q's running sums with the largest q beside it, the power",
        "sums of t(n), the tempered curve's subsample) and one over the partitions the draws",
        "fell in; q is recomputed on the workers in each, never held whole. The running sums",
        "of q are a chain of tasks, one block after the other (each continues the previous",
        "block's sum, so that the draws are NumPy's bit for bit).",
        "",
    ]
    big = [r for r in rows if r["pool"] >= 10**9]
    for r in big:
        peak = max([r["client_peak_MB"], *r["worker_peak_MB"]])
        ok = "met" if peak <= 6000 else "not met"
        lines.append(
            f"- {r['pool']:.0e} instances through Dask: completed in {r['wall_s']:.0f} s, peak "
            f"of any process {peak / 1000:.2f} GB (goal ≤ 6 GB): {ok}."
        )
    (out / "dask_scale.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", nargs="*", type=float, default=[1e7, 1e8, 1e9])
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        rows = [bench(int(m), Path(tmp)) for m in args.sizes]
    write_report(args.out, rows)
    print((args.out / "dask_scale.md").read_text())


if __name__ == "__main__":
    main()
