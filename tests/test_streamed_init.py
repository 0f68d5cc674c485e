"""``session init`` reads pool files a chunk at a time (``activeeval.session.streaming``).

A streamed store must be the store the whole-file read writes, byte for byte but for the
session's id and creation time; every error must say what the whole-file read says; and the
read must hold no more than a chunk of the file (tracemalloc, no timing).
"""

from __future__ import annotations

import re
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from activeeval import _chunks, io
from activeeval.cli import main
from activeeval.errors import ActiveEvalError, InputFileError
from activeeval.estimators.tempered import MAX_POOL
from activeeval.sampling import TOP_Q
from activeeval.session import Session
from activeeval.session import streaming as streaming_mod

CHUNK = 7  # rows per chunk in the streamed runs: every pool below spans many chunks


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, without what differs between two stores made of the same files
    (the session's id, the creation time)."""
    conn = sqlite3.connect(path)
    out: dict[str, list[tuple[object, ...]]] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        rows = conn.execute(f"SELECT * FROM {name}").fetchall()
        if name == "meta":
            rows = [r for r in rows if r[0] not in ("session_id", "created_at")]
        if name == "plan":
            rows = [r[:-1] for r in rows]  # created_at, the last column
        out[name] = sorted(rows, key=repr)
    conn.close()
    return out


def _init(store: Path, pools: list[Path], *args: str) -> object:
    argv = ["session", "init", str(store), *(a for p in pools for a in ("--pool", str(p))), *args]
    return CliRunner().invoke(main, argv)


def _whole_and_streamed(
    tmp_path: Path, pools: list[Path], args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> tuple[object, object]:
    """The same init read whole (the pool fits one chunk) and streamed (chunks of CHUNK rows,
    read_pools made to fail so that the streamed path must serve)."""
    whole = _init(tmp_path / "whole.db", pools, *args)
    with monkeypatch.context() as mp:
        mp.setattr(io, "STREAM_ROWS", CHUNK)

        def refuse(*a: object, **k: object) -> None:
            raise AssertionError("read whole")

        mp.setattr("activeeval.cli.read_pools", refuse)
        streamed = _init(tmp_path / "streamed.db", pools, *args)
    return whole, streamed


def _pool_frame(m: int, seed: int, ids: str = "int", costs: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, m)
    frame = pd.DataFrame({"id": np.arange(m) * 7 + 3, "p_0": 1 - p, "p_1": p})
    if ids == "str":
        frame["id"] = [f"doc-{i:05d}" for i in range(m)]
    elif ids == "int-like text then words":  # integers for many chunks, then a word
        frame["id"] = [str(i) for i in range(m - 1)] + ["last"]
    if costs:
        frame["cost"] = rng.integers(1, 5, m).astype(float)
    return frame


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        frame.to_parquet(path, row_group_size=50)  # row groups unlike the chunks
    else:
        frame.to_csv(path, index=False)
    return path


CASES = {
    "csv, int ids": ([("a.csv", {})], ("--measure", "error_rate", "--budget", "40")),
    "parquet, str ids, costs": (
        [("a.parquet", {"ids": "str", "costs": True})],
        ("--measure", "f1", "--budget", "60"),
    ),
    "csv, ids integer until the last chunk": (
        [("a.csv", {"ids": "int-like text then words"})],
        ("--measure", "accuracy", "--budget", "30", "--method", "passive"),
    ),
    "two models, parquet and csv, classes in another order, costs in one": (
        [("a.parquet", {"costs": True}), ("b.csv", {"swap": True})],
        ("--measure", "f1", "--budget", "50", "--target-width", "0.3"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_streamed_store_is_the_whole_file_store(case: str, tmp_path, monkeypatch) -> None:
    files, args = CASES[case]
    pools = []
    for j, (name, opts) in enumerate(files):
        frame = _pool_frame(403, j, ids=opts.get("ids", "int"), costs=opts.get("costs", False))
        if opts.get("swap"):
            frame = frame[["id", "p_1", "p_0"]]
        pools.append(_write(frame, tmp_path / name))
    whole, streamed = _whole_and_streamed(tmp_path, pools, args, monkeypatch)
    assert whole.exit_code == 0, whole.output  # type: ignore[attr-defined]
    assert streamed.exit_code == 0, streamed.output  # type: ignore[attr-defined]
    assert _tables(tmp_path / "streamed.db") == _tables(tmp_path / "whole.db")
    with Session.open(tmp_path / "streamed.db") as s:  # and it opens and continues
        ids = s.next_batch(5)
        assert len(ids) == 5
        assert s.predictives[0].n == 403  # its fingerprint checks


def test_a_regressor_pool_streams(tmp_path: Path, monkeypatch) -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"id": np.arange(300), "mean": rng.normal(size=300),
                          "var": rng.uniform(0.1, 2, 300)})  # fmt: skip
    pool = _write(frame, tmp_path / "r.csv")
    whole, streamed = _whole_and_streamed(tmp_path, [pool], ("--measure", "mse", "--budget", "30"),
                                          monkeypatch)  # fmt: skip
    assert whole.exit_code == 0 and streamed.exit_code == 0, streamed.output  # type: ignore[attr-defined]
    assert _tables(tmp_path / "streamed.db") == _tables(tmp_path / "whole.db")


def _decided(frame: pd.DataFrame, seed: int, labels: list[Any]) -> pd.DataFrame:
    """The frame with a decision column: a threshold's class on most rows, else another."""
    rng = np.random.default_rng(seed)
    first, second = (labels[0], labels[1])
    at = np.where(frame[f"p_{second}"].to_numpy() > 0.3, second, first)
    flip = rng.random(frame.shape[0]) < 0.1
    return frame.assign(at_0_3=np.where(flip, first, at))


@pytest.mark.parametrize("suffixes", [(".csv",), (".parquet", ".csv")])
def test_a_decision_column_streams_into_the_whole_file_store(
    suffixes: tuple[str, ...], tmp_path, monkeypatch
) -> None:
    """--prediction-column (a tuned threshold's classes) no longer sends the init to the
    whole-file read: the decisions are stored and fingerprinted a chunk at a time, the store
    the whole read writes; classes named by text in CSV and by value in Parquet, a second
    file's class columns in another order."""
    pools = []
    for j, suffix in enumerate(suffixes):
        frame = _decided(_pool_frame(403, j), 7 + j, [0, 1])
        if j:
            frame = frame[["id", "p_1", "at_0_3", "p_0"]]
        pools.append(_write(frame, tmp_path / f"m{j}{suffix}"))
    args = ("--measure", "f1", "--budget", "40", "--prediction-column", "at_0_3")
    whole, streamed = _whole_and_streamed(tmp_path, pools, args, monkeypatch)
    assert whole.exit_code == 0, whole.output  # type: ignore[attr-defined]
    assert streamed.exit_code == 0, streamed.output  # type: ignore[attr-defined]
    tables = _tables(tmp_path / "streamed.db")
    assert tables == _tables(tmp_path / "whole.db")
    conn = sqlite3.connect(tmp_path / "streamed.db")  # each model stored a decision
    assert conn.execute("SELECT COUNT(*) FROM models WHERE decision IS NOT NULL").fetchone() == (
        len(pools),
    )
    conn.close()
    with Session.open(tmp_path / "streamed.db") as s:  # its fingerprint checks, decisions too
        f = s.predictives[0].point_prediction()
        assert np.array_equal(f, _decided(_pool_frame(403, 0), 7, [0, 1])["at_0_3"])


def test_a_regressor_s_decision_column_streams(tmp_path, monkeypatch) -> None:
    rng = np.random.default_rng(4)
    mean = rng.normal(size=300)
    frame = pd.DataFrame({"id": np.arange(300), "mean": mean, "var": rng.uniform(0.1, 2, 300),
                          "deployed": np.round(mean, 1)})  # fmt: skip
    pool = _write(frame, tmp_path / "r.csv")
    args = ("--measure", "mse", "--budget", "30", "--prediction-column", "deployed")
    whole, streamed = _whole_and_streamed(tmp_path, [pool], args, monkeypatch)
    assert whole.exit_code == 0 and streamed.exit_code == 0, streamed.output  # type: ignore[attr-defined]
    assert _tables(tmp_path / "streamed.db") == _tables(tmp_path / "whole.db")


@pytest.mark.parametrize("bad", ["not a class", "empty", "no such column"])
def test_a_decision_column_s_errors_are_the_whole_read_s(bad: str, tmp_path, monkeypatch):
    frame = _decided(_pool_frame(200, 0), 3, [0, 1]).astype({"at_0_3": object})
    if bad == "not a class":
        frame.loc[150, "at_0_3"] = "2"
    elif bad == "empty":
        frame.loc[170, "at_0_3"] = ""
    pool = _write(frame, tmp_path / "pool.csv")
    column = "at_0_4" if bad == "no such column" else "at_0_3"
    args = ("--measure", "f1", "--budget", "20", "--prediction-column", column)
    if bad == "no such column":  # left to the whole-file read, which names the file
        out = _same_either_way(tmp_path, [pool], args, monkeypatch)
        assert out.exit_code == 2 and "line" not in out.output  # type: ignore[attr-defined]
        return
    whole, streamed = _whole_and_streamed(tmp_path, [pool], args, monkeypatch)
    assert whole.exit_code == streamed.exit_code == 2  # type: ignore[attr-defined]
    assert streamed.output == whole.output  # type: ignore[attr-defined]
    assert "line" in whole.output and "at_0_3" in whole.output  # type: ignore[attr-defined]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.csv"]  # no store left


def test_files_with_ids_in_another_order_are_read_whole(tmp_path, monkeypatch) -> None:
    a = _pool_frame(100, 0)
    b = _pool_frame(100, 1).iloc[::-1]
    pools = [_write(a, tmp_path / "a.csv"), _write(b, tmp_path / "b.csv")]
    monkeypatch.setattr(io, "STREAM_ROWS", CHUNK)
    made = _init(tmp_path / "s.db", pools, "--measure", "error_rate", "--budget", "20")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    assert not list(tmp_path.glob("*.build*"))  # the abandoned streamed build is gone
    monkeypatch.setattr(io, "STREAM_ROWS", 1 << 18)
    again = _init(tmp_path / "t.db", pools, "--measure", "error_rate", "--budget", "20")
    assert again.exit_code == 0  # type: ignore[attr-defined]
    assert _tables(tmp_path / "s.db") == _tables(tmp_path / "t.db")


def _broken(kind: str, tmp_path: Path) -> Path:
    frame = _pool_frame(200, 0, costs=kind == "cost").astype({"id": object})
    frame = frame.astype(object)
    if kind == "row sum":
        frame.loc[150, "p_1"] = 0.9
    elif kind == "empty id":
        frame.loc[151, "id"] = ""
    elif kind == "duplicate id":
        frame.loc[170, "id"] = frame.loc[12, "id"]
    elif kind == "cost":
        frame.loc[160, "cost"] = 0.0
    elif kind == "not a number":
        frame.loc[199, "p_0"] = "x"
    path = tmp_path / "pool.csv"
    text = frame.to_csv(index=False).splitlines()
    text.insert(40, "")  # a blank line: line numbers are not row numbers
    path.write_text("\n".join(text) + "\n")
    return path


@pytest.mark.parametrize("kind", ["row sum", "empty id", "duplicate id", "cost", "not a number"])
def test_errors_say_what_the_whole_file_read_says(kind: str, tmp_path, monkeypatch) -> None:
    pool = _broken(kind, tmp_path)
    args = ("--measure", "error_rate", "--budget", "20")
    whole, streamed = _whole_and_streamed(tmp_path, [pool], args, monkeypatch)
    assert whole.exit_code == streamed.exit_code == 2  # type: ignore[attr-defined]
    assert streamed.output == whole.output  # type: ignore[attr-defined]
    assert "line" in whole.output  # type: ignore[attr-defined]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.csv"]  # no store left


def test_a_streamed_init_holds_a_chunk_of_the_file_not_the_file(tmp_path, monkeypatch) -> None:
    m, chunk = 60_000, 4096
    pool = _write(_pool_frame(m, 5), tmp_path / "pool.csv")  # 5 MB of text
    monkeypatch.setattr(io, "STREAM_ROWS", chunk)  # the file's chunks
    monkeypatch.setattr(_chunks, "ROWS", chunk)  # q's planning passes
    monkeypatch.setattr(io, "CSV_BLOCK", 1 << 16)  # the bytes pyarrow parses at a time
    calls: list[int] = []
    real = streaming_mod._fill

    def counted(*a: object, **k: object) -> None:
        calls.append(1)
        real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(streaming_mod, "_fill", counted)
    import pyarrow as pa

    arrow: list[int] = []  # pyarrow's buffers (outside tracemalloc) as each chunk is given
    chunks = io.PoolStream.chunks

    def watched(self: io.PoolStream, *a: Any, **k: Any) -> Any:
        for frame in chunks(self, *a, **k):
            arrow.append(pa.total_allocated_bytes())
            yield frame

    monkeypatch.setattr(io.PoolStream, "chunks", watched)
    warm = _write(_pool_frame(3 * chunk, 6), tmp_path / "warm.csv")  # imports every module used
    assert _init(tmp_path / "w.db", [warm], "--measure", "f1", "--budget", "100").exit_code == 0  # type: ignore[attr-defined]
    bigger = _write(_pool_frame(2 * m, 7), tmp_path / "bigger.csv")
    peaks = []
    for name, file in (("s.db", pool), ("b.db", bigger)):
        tracemalloc.start()
        try:
            made = _init(tmp_path / name, [file], "--measure", "f1", "--budget", "100")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    assert calls == [1, 1, 1]
    # q is whole in memory (8 bytes per instance) and a few chunks are; the file, its ids and
    # its predictions are not: from m to 2m rows the peak grows by 8–24 bytes per row
    # (measured 18 before the pool summary, 18 with it, 9 with pyarrow parsing the CSV text —
    # its buffers, a block of text and a chunk of rows, are outside tracemalloc's view; read
    # whole, 650). Beyond, a fixed
    # amount: the pool summary's q (TOP_Q largest) and tempered subsample (MAX_POOL rows),
    # held twice while serialized.
    fixed = 3 * 8 * TOP_Q + 2 * 8 * MAX_POOL * (2 * 2 + 4)
    # pyarrow holds about a chunk of rows and a block of text: 0.23 MB measured, the files 5
    # and 10 MB of text (a row of these files is under 30 bytes as Arrow columns)
    assert max(arrow) < 30 * chunk + 4 * io.CSV_BLOCK, max(arrow)
    assert peaks[1] - peaks[0] < 24 * m, (peaks[1] - peaks[0]) / m
    assert peaks[0] < 24 * m + (2 << 20) + fixed, peaks[0] / m


def _same_either_way(tmp_path: Path, pools: list[Path], args: tuple[str, ...], monkeypatch):
    """The init's output, exit code and store with chunks of CHUNK rows are those of the
    whole-file read (the pool fits one chunk)."""
    whole = _init(tmp_path / "whole.db", pools, *args)
    with monkeypatch.context() as mp:
        mp.setattr(io, "STREAM_ROWS", CHUNK)
        chunked = _init(tmp_path / "chunked.db", pools, *args)

    def said(result: Any, name: str) -> tuple[int, str]:
        text = re.sub(r"session id \w+", "", result.output.replace(name, "X"))
        return result.exit_code, text

    assert said(chunked, "chunked.db") == said(whole, "whole.db")
    if whole.exit_code == 0:  # type: ignore[attr-defined]
        assert _tables(tmp_path / "chunked.db") == _tables(tmp_path / "whole.db")
    else:
        assert not list(tmp_path.glob("*.db*"))
    return whole


def test_a_second_file_shorter_by_less_than_a_chunk_is_refused(tmp_path, monkeypatch) -> None:
    a = _write(_pool_frame(21, 0), tmp_path / "a.csv")
    b = _write(_pool_frame(14, 1), tmp_path / "b.csv")  # a's first 14 ids
    out = _same_either_way(tmp_path, [a, b], ("--measure", "error_rate", "--budget", "10"),
                           monkeypatch)  # fmt: skip
    assert out.exit_code == 2 and "is missing" in out.output  # type: ignore[attr-defined]


def test_files_whose_ids_read_as_different_types_are_refused(tmp_path, monkeypatch) -> None:
    a = _pool_frame(30, 0)
    a["id"] = [f"{i}.0" for i in range(30)]  # text
    b = _pool_frame(30, 1)
    b["id"] = np.arange(30, dtype=float)  # numbers, read as integers
    pools = [_write(a, tmp_path / "t.csv"), _write(b, tmp_path / "f.parquet")]
    out = _same_either_way(tmp_path, pools, ("--measure", "error_rate", "--budget", "10"),
                           monkeypatch)  # fmt: skip
    assert out.exit_code == 2 and "is not in" in out.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "args",
    [
        ("--measure", "macro_f1", "--budget", "30"),  # q of an average: the pool whole
        ("--measure", "balanced_accuracy", "--budget", "30", "--method", "active_uniC"),
        ("--measure", "error_rate", "--budget", "30", "--method", "active_0"),
        ("--measure", "f1", "--budget", "30", "--method", "active_inf"),
    ],
)
def test_plans_that_need_the_pool_whole_read_it_whole(args, tmp_path, monkeypatch) -> None:
    rng = np.random.default_rng(0)
    pools = []
    for j in range(1 if "active_0" not in args and "active_inf" not in args else 2):
        p = rng.dirichlet(np.ones(3), 60)
        frame = pd.DataFrame({"id": np.arange(60), "p_a": p[:, 0], "p_b": p[:, 1],
                              "p_c": p[:, 2]})  # fmt: skip
        pools.append(_write(frame, tmp_path / f"m{j}.csv"))
    if "f1" in args:
        args = (*args, "--pos-label", "b")
    out = _same_either_way(tmp_path, pools, args, monkeypatch)
    assert out.exit_code == 0, out.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    [
        "id,foo\n",  # no rows, no prediction columns: "has no rows" first
        "id,p_0,p_0\n1,0.5,0.5\n2,0.5\n",  # a ragged row before the repeated column
        "id,p_0,p_1,mean,var\n,0.5,0.5,1,1\n",  # an empty id before the mixed columns
        "id,p_0,p_1\n1,0.5,0.5\n2,,0.5\n3,0.2,0.8\n",
    ],
)
def test_a_small_file_s_error_is_the_whole_read_s(text: str, tmp_path, monkeypatch) -> None:
    pool = tmp_path / "pool.csv"
    pool.write_text(text)
    out = _same_either_way(tmp_path, [pool], ("--measure", "error_rate", "--budget", "10"),
                           monkeypatch)  # fmt: skip
    assert out.exit_code == 2  # type: ignore[attr-defined]


def test_a_parquet_file_with_its_ids_as_the_index_is_refused_as_before(tmp_path, monkeypatch):
    frame = _pool_frame(40, 0).set_index("id")
    frame.to_parquet(tmp_path / "i.parquet")
    out = _same_either_way(tmp_path, [tmp_path / "i.parquet"],
                           ("--measure", "error_rate", "--budget", "10"), monkeypatch)  # fmt: skip
    assert out.exit_code == 2 and "no column 'id'" in out.output  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "args",
    [
        ("--measure", "f2", "--budget", "10"),  # not a measure
        ("--measure", "brier", "--budget", "10"),  # a measure, not a session's
        ("--measure", "per_class_f1", "--budget", "10"),
        ("--measure", "f2", "--budget", "10", "--method", "zzz"),  # the method is named first
        ("--measure", "error_rate", "--budget", "-1", "--level", "2"),  # the budget first
    ],
)
def test_arguments_are_refused_as_the_whole_read_refuses_them(args, tmp_path, monkeypatch):
    pool = _write(_pool_frame(60, 0), tmp_path / "pool.csv")
    written: list[int] = []
    real = streaming_mod._fill
    monkeypatch.setattr(streaming_mod, "_fill", lambda *a, **k: written.append(1) or real(*a, **k))
    out = _same_either_way(tmp_path, [pool], args, monkeypatch)
    assert out.exit_code == 2, out.output  # type: ignore[attr-defined]
    assert written == []  # refused before any pass that writes


def test_costs_that_differ_between_files_are_refused_alike(tmp_path, monkeypatch) -> None:
    a = _pool_frame(100, 0, costs=True)
    b = _pool_frame(100, 1, costs=True)
    b["cost"] = a["cost"]
    b.loc[60, "cost"] = a.loc[60, "cost"] + 1  # in the ninth chunk of 7 rows
    assert "column 'cost' differs" in _refused_alike(tmp_path, a, b, monkeypatch)


def _refused_alike(
    tmp_path: Path, a: pd.DataFrame, b: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> str:
    """The message of an init of the pool files a.csv and b.parquet, refused (exit 2) with
    the same output whole and streamed."""
    pools = [_write(a, tmp_path / "a.csv"), _write(b, tmp_path / "b.parquet")]
    args = ("--measure", "error_rate", "--budget", "20")
    whole, streamed = _whole_and_streamed(tmp_path, pools, args, monkeypatch)
    assert whole.exit_code == streamed.exit_code == 2  # type: ignore[attr-defined]
    assert streamed.output == whole.output  # type: ignore[attr-defined]
    return str(whole.output)  # type: ignore[attr-defined]


def test_files_whose_classes_differ_are_refused_alike(tmp_path, monkeypatch) -> None:
    a = _pool_frame(100, 0)
    b = _pool_frame(100, 1).rename(columns={"p_1": "p_2"})
    out = _refused_alike(tmp_path, a, b, monkeypatch)
    assert "classes [0, 2] differ from" in out
    assert "a.csv's [0, 1]; give every model the same p_<label> columns" in out


@pytest.mark.parametrize("past", ["every chunk", "the last chunk"])
def test_unsigned_ids_beyond_int64_stay_the_file_s_ids(past: str, tmp_path, monkeypatch) -> None:
    """A Parquet id column of uint64 whose values pass 2**63 − 1 was cast to int64, wrapping
    to negative ids that no label file would name; such ids are kept as text (as integer
    text beyond int64 is), whole or streamed, and handed out as the file wrote them."""
    frame = _pool_frame(100, 0)
    big = np.arange(100, dtype=np.uint64) + np.uint64(2**63 - 60)  # past 2**63 − 1 at row 59
    if past == "every chunk":
        big = big + np.uint64(100)
    frame["id"] = big
    pools = [_write(frame, tmp_path / "a.parquet")]
    args = ("--measure", "error_rate", "--budget", "30")
    whole, streamed = _whole_and_streamed(tmp_path, pools, args, monkeypatch)
    assert whole.exit_code == streamed.exit_code == 0  # type: ignore[attr-defined]
    assert _tables(tmp_path / "whole.db") == _tables(tmp_path / "streamed.db")
    with Session.open(tmp_path / "whole.db") as s:
        handed = s.next_batch(30)
    assert set(handed) <= {str(int(i)) for i in big}


@pytest.mark.parametrize("ids", ["int", "str"])
def test_the_fingerprint_fed_in_chunks_is_the_one_of_whole_arrays(ids: str, monkeypatch):
    from activeeval.session import codec

    rng = np.random.default_rng(4)
    m = 50
    pool_ids = np.arange(m) * 3 if ids == "int" else np.array([f"x{i}" for i in range(m)], object)
    arrays = [rng.random((m, 2)), rng.random((m, 3))]
    costs = rng.uniform(1, 2, m)
    whole = codec._fingerprint(pool_ids, arrays, costs)
    monkeypatch.setattr(_chunks, "ROWS", 7)
    assert codec._fingerprint(pool_ids, arrays, costs) == whole
    h = codec.PoolHash(ids == "int")
    for start, stop in [(0, 1), (1, 20), (20, 20), (20, 49), (49, 50)]:  # an empty piece too
        h.ids(pool_ids[start:stop])
    for j, a in enumerate(arrays):
        h.model(j, a.shape)
        h.rows(a[:13])
        h.rows(a[13:])
    assert h.finish(costs) == whole


@pytest.mark.parametrize(
    ("measure", "n_models", "method"),
    [("macro_f1", 1, "active"), ("balanced_accuracy", 2, "active"),
     ("weighted_f1", 2, "active_risk")],
)  # fmt: skip
def test_a_multi_class_average_streams(
    measure: str, n_models: int, method: str, tmp_path, monkeypatch
) -> None:
    """The multi-class averages' q* (the counts S over the pool, then the influences at S)
    is computed a chunk at a time: the streamed store is the whole-file store, byte for
    byte, and holds the counts its estimates read."""
    pools = []
    for j in range(n_models):
        rng = np.random.default_rng(j)
        proba = rng.dirichlet(np.full(3, 0.8), 403)
        frame = pd.DataFrame({"id": np.arange(403), **{f"p_{c}": proba[:, c] for c in range(3)}})
        pools.append(_write(frame, tmp_path / f"m{j}.parquet"))
    args = ("--measure", measure, "--budget", "40", "--method", method)
    whole, streamed = _whole_and_streamed(tmp_path, pools, args, monkeypatch)
    assert whole.exit_code == 0, whole.output  # type: ignore[attr-defined]
    assert streamed.exit_code == 0, streamed.output  # type: ignore[attr-defined]
    tables = _tables(tmp_path / "streamed.db")
    assert tables == _tables(tmp_path / "whole.db") and len(tables["summaries"]) == 1


# ---------------------------------------------------------------- the CSV fast path
def _plain_text(m: int, seed: int) -> str:
    """A pool file as ``to_csv`` writes it: no quote, no blank line (the fast path's)."""
    return _pool_frame(m, seed).to_csv(index=False)


def _read_alike(fast: list[pd.DataFrame], slow: list[pd.DataFrame], path: Path) -> None:
    """Chunk by chunk the same lines, ids and predictions as Python's reader gives."""
    s = io.PoolStream.open(path)
    assert [f.index.tolist() for f in fast] == [f.index.tolist() for f in slow]
    for a, b in zip(fast, slow, strict=True):
        ia, ib = s.ids(a, None), s.ids(b, None)
        assert ia.dtype == ib.dtype and np.array_equal(ia, ib)
        assert np.array_equal(s.predictions(a), s.predictions(b))


@pytest.mark.parametrize("ending", ["\n", "\r\n", "no newline at the end"])
def test_a_plain_csv_file_is_parsed_by_pyarrow_as_python_reads_it(ending, tmp_path, monkeypatch):
    """Blocks of a few lines (cut anywhere in a line) parsed by pyarrow give the chunks,
    lines, ids and numbers of Python's reader; Python's reader is not used."""
    text = _plain_text(403, 0).replace("\n", "\r\n" if ending == "\r\n" else "\n")
    if ending == "no newline at the end":
        text = text.rstrip("\n")
    path = tmp_path / "pool.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # with a byte-order mark
    slow = list(io._csv_rows(path, io._header(path)[0], ["id", "p_0", "p_1"], CHUNK))
    monkeypatch.setattr(io, "CSV_BLOCK", 61)
    monkeypatch.setattr(io, "_csv_rows", lambda *a, **k: pytest.fail("read by Python"))
    header = io._header(path)[0]
    fast = list(io._csv_chunks(path, header, header, CHUNK, frozenset({"p_0", "p_1"})))
    assert all(f["id"].dtype == np.int64 and f["p_0"].dtype == np.float64 for f in fast)
    _read_alike(fast, slow, path)


@pytest.mark.parametrize(
    "edit",
    ["blank line", "quoted cell", "lone CR", "nan", "inf", "empty cell", "word", "ragged",
     "spaces", "id 007", "id beyond int64"],
)  # fmt: skip
def test_a_csv_file_that_is_not_plain_is_read_on_by_python_from_the_next_chunk(
    edit: str, tmp_path, monkeypatch
) -> None:
    """Where a block is not plain (row 300 of 403, past many chunks already given), Python's
    reader gives the rest from the first row not yet given: the same chunks and lines as
    Python's reader alone, whichever way the file is odd."""
    lines = _plain_text(403, 1).split("\n")
    at = 301  # row 300
    row = lines[at].split(",")
    if edit == "blank line":
        lines.insert(at, "")
    elif edit == "quoted cell":
        lines[at] = f'"{row[0]}",{row[1]},{row[2]}'
    elif edit == "lone CR":
        lines[at] = lines[at] + "\r"
    elif edit in ("nan", "inf", "empty cell", "word"):
        cell = {"nan": "nan", "inf": "-inf", "empty cell": "", "word": "x"}[edit]
        lines[at] = f"{row[0]},{row[1]},{cell}"
    elif edit == "ragged":
        lines[at] = f"{row[0]},{row[1]}"
    elif edit == "spaces":
        lines[at] = f" {row[0]} , {row[1]} ,{row[2]}"
    elif edit == "id 007":
        lines[at] = f"007,{row[1]},{row[2]}"
    else:
        lines[at] = f"92233720368547758070,{row[1]},{row[2]}"
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(lines), newline="")
    monkeypatch.setattr(io, "CSV_BLOCK", 200)
    header = io._header(path)[0]
    try:
        slow = list(io._csv_rows(path, header, header, CHUNK))
    except InputFileError as exc:  # a ragged row: refused alike, naming its line
        with pytest.raises(InputFileError, match=re.escape(str(exc))):
            list(io._csv_chunks(path, header, header, CHUNK, frozenset({"p_0", "p_1"})))
        return
    fast = list(io._csv_chunks(path, header, header, CHUNK, frozenset({"p_0", "p_1"})))
    assert [f.index.tolist() for f in fast] == [f.index.tolist() for f in slow]
    for a, b in zip(fast, slow, strict=True):  # cell by cell, as the readers will read them
        for c in header:
            s = io.PoolStream.open(path)
            try:
                va = s.ids(a, None) if c == "id" else io._numbers(a[c], path, "line", c)
            except ActiveEvalError as exc:
                with pytest.raises(type(exc), match=re.escape(str(exc))):
                    s.ids(b, None) if c == "id" else io._numbers(b[c], path, "line", c)
                continue
            vb = s.ids(b, None) if c == "id" else io._numbers(b[c], path, "line", c)
            assert np.array_equal(va, vb)


def test_bytes_that_are_not_utf_8_in_a_column_not_read_are_refused_as_before(tmp_path, monkeypatch):
    """pyarrow checks only the columns it converts; the text of every column is checked
    (the whole-file read names the byte), so a streamed init refuses such a file too."""
    frame = _pool_frame(403, 2)
    frame["note"] = "été"
    path = _write(frame, tmp_path / "pool.csv")
    raw = path.read_bytes()
    at = raw.index("été".encode(), len(raw) // 2)
    path.write_bytes(raw[:at] + b"\xff" + raw[at + 1 :])
    out = _same_either_way(tmp_path, [path], ("--measure", "f1", "--budget", "20"), monkeypatch)
    assert out.exit_code == 2 and "is not valid UTF-8" in out.output  # type: ignore[attr-defined]


def _either_reader(data: bytes, tmp_path: Path, block: int, monkeypatch) -> tuple[Any, Any]:
    """What the fast path and Python's reader alone give for the file ``data``: per chunk of 3
    rows its lines, ids and predictions, or the error."""
    path = tmp_path / "pool.csv"
    path.write_bytes(data)
    s = io.PoolStream.open(path)
    monkeypatch.setattr(io, "CSV_BLOCK", block)

    def read(chunks: Any) -> Any:
        try:
            return [(f.index.tolist(), s.ids(f, None).tolist(), s.predictions(f).tolist())
                    for f in chunks]  # fmt: skip
        except ActiveEvalError as exc:
            return f"{type(exc).__name__}: {exc}"

    numbers = frozenset(c for c in s.columns if c != "id")
    fast = read(io._csv_chunks(path, s.columns, s.columns, 3, numbers))
    return fast, read(io._csv_rows(path, s.columns, s.columns, 3))


_BOM = "\ufeff"
_TWELVE = "".join(f"{i},0.5,0.5\n" for i in range(12))


@pytest.mark.parametrize(
    ("text", "block"),
    [
        (f"id,p_0,p_1\n{_BOM}7,0.5,0.5\n8,0.5,0.5\n", 1 << 23),  # a mark in a line: kept
        (f"p_0,p_1,id\n{_BOM}0.5,0.5,7\n", 1 << 23),  # ... so not a number
        ("id,p_0,p_1\n" + _TWELVE.replace("\n6,", f"\n{_BOM}6,"), 17),  # at a block's start
        ("id,p_0,p_1\r\r\n1,0.5,0.5\n1,0.5,0.5\n", 1 << 23),  # a CR in the header: a line
        ('id,p_0,"p_1\r"\n1,0.5,0.5\n1,0.5,0.6\n', 1 << 23),
        ("id,p_0,p_1\n1," + "0" * 4300 + "1,0\n", 1 << 23),  # integer text pandas refuses
        ("id,p_0,p_1\n1,0e309,1\n2,0.5,0.5e0\n", 1 << 23),  # zero pandas 2 refuses, Python not
        ("id,p_0,p_1\n1,1e-120,1\n2,0.5,0.5e+100\n", 1 << 23),  # huge exponents, no zero
        ("id,p_0,p_1\r" + _TWELVE.replace("\n", "\r"), 17),  # lines ended by CR alone
        ("id,p_0,p_1\n" + _TWELVE.replace("\n", "\r"), 17),  # ... after the header
        ("id,p_0,p_1\n" + _TWELVE + "12,0.5,0.5\n\n13,0.5,0.5", 23),  # blank, no last newline
    ],
)
def test_odd_files_read_as_python_reads_them(text: str, block: int, tmp_path, monkeypatch):
    """Files a review found read otherwise by the first fast path (a byte-order mark starting
    a block, which pyarrow drops; a CR in the header, which Python counts as a line; integer
    text beyond Python's digit limit, which pandas refuses) and files without a newline where
    Python sees lines: the fast path gives what Python's reader gives."""
    fast, slow = _either_reader(text.encode(), tmp_path, block, monkeypatch)
    assert fast == slow


def test_python_s_reader_resumes_where_the_fast_path_stopped(tmp_path, monkeypatch) -> None:
    """A file that stops being plain near its end is read by Python from the first row not
    yet given (its byte offset and line), not again from the top."""
    lines = _plain_text(403, 3).split("\n")
    lines.insert(390, "")  # a blank line: line numbers are not row numbers from here on
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(lines))
    header = io._header(path)[0]
    monkeypatch.setattr(io, "CSV_BLOCK", 300)
    alone = list(io._csv_rows(path, header, header, CHUNK))
    resumed: list[tuple[int, int]] = []
    real = io._csv_rows

    def spy(*a: Any) -> Any:
        resumed.append(a[4])
        return real(*a)

    monkeypatch.setattr(io, "_csv_rows", spy)
    fast = list(io._csv_chunks(path, header, header, CHUNK, frozenset({"p_0", "p_1"})))
    ((offset, line),) = resumed
    assert line > 300 and path.read_bytes()[:offset].count(b"\n") == line - 1
    assert [f.index.tolist() for f in fast] == [f.index.tolist() for f in alone]
    _read_alike(fast, alone, path)


def test_pyarrow_reads_decimal_text_as_python_and_pandas_do() -> None:
    """The fast path's numbers: where pyarrow takes a cell as a finite number, Python's
    ``float`` of the stripped text gives the same double (correctly rounded) and pandas
    takes it too — on digits of every length, exponents to the ends of the doubles, and
    short strings of digits, signs, points, exponents and spaces. (Zero with an exponent of
    three digits is left to Python's reader: pandas before 3 refuses 0e309.)"""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(7)
    texts = []
    for _ in range(20_000):
        digits = "".join(map(str, rng.integers(0, 10, int(rng.integers(1, 25)))))
        exp = int(rng.integers(-330, 310))
        texts += [f"0.{digits}", f"{digits[0]}.{digits[1:]}e{exp}", f"-.{digits}E{exp}"]
    texts += [
        "2.2250738585072011e-308",
        "4.9406564584124654e-324",
        "1.7976931348623157e308",
        "9007199254740993",
        "0.1000000000000000055511151231257827021181583404541015625",
    ]
    alphabet = list("0123456789.eE+- \t")
    texts += ["".join(rng.choice(alphabet, int(rng.integers(1, 7)))) for _ in range(30_000)]
    texts = [t for t in texts if t.strip()]
    convert = pcsv.ConvertOptions(column_types={"x": pa.float64()}, null_values=[],
                                  strings_can_be_null=False)  # fmt: skip
    taken = 0
    for t in texts:
        try:
            got = pcsv.read_csv(pa.py_buffer(f"x,y\n{t},1\n".encode()),
                                convert_options=convert).column("x")[0].as_py()  # fmt: skip
        except pa.ArrowInvalid:
            continue
        if not np.isfinite(got) or (got == 0 and io._huge_exponent(t.encode())):
            continue  # refused by the fast path: Python's reader says why
        taken += 1
        assert np.isfinite(pd.to_numeric(pd.Series([t.strip()], dtype=object)).iloc[0]), t
        want = float(t.strip())
        assert got == want and np.signbit(got) == np.signbit(want), t
    assert taken > 60_000
