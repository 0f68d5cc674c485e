"""The file formats through :mod:`activeeval.io` alone, without the command line: pool files to
the predictive distributions, ids and costs a session or campaign takes, labels files to the
frame ``Session.record`` takes, features files in a pool's id order, and tables written.

Error messages and atomic writes are tested through the command line (test_cli.py,
test_error_paths.py), which reads and writes every file through this module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import activeeval.io as aio
from activeeval import errors as ae_errors
from activeeval.errors import InputFileError, NonFiniteError, OutputFileError
from activeeval.io import (
    read_decision_column,
    read_features_file,
    read_labels_file,
    read_pool_file,
    read_pools,
    write_table,
)
from activeeval.predictive import Categorical


def _written(path: Path) -> pd.DataFrame:
    """A CSV file's ids and the doubles it holds (Python's float(), correctly rounded)."""
    frame = pd.read_csv(path, dtype=str)
    return frame.apply(lambda c: c.astype("int64") if c.name == "id" else c.map(float))


def test_the_module_does_not_need_the_command_line() -> None:
    tree = ast.parse(Path(aio.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] == "click" or m.endswith("cli")}


def test_a_pool_file_is_the_frame_written(task: dict[str, Path]) -> None:
    pool = read_pool_file(task["a"])
    frame = _written(task["a"])
    assert isinstance(pool.predictive, Categorical)
    assert pool.ids.dtype == np.int64 and pool.ids.tolist() == frame["id"].tolist()
    assert pool.predictive.labels.tolist() == [0, 1]
    assert np.array_equal(pool.predictive.proba, frame[["p_0", "p_1"]].to_numpy())
    assert pool.costs is None and pool.item_text is None
    assert pool.row_label == "line" and pool.rows.tolist() == list(range(2, 302))  # header: 1
    assert pool.path == task["a"]


def test_pool_files_are_aligned_on_the_first_files_ids(
    task: dict[str, Path], tmp_path: Path
) -> None:
    """A second model's file in another row and column order, with costs, comes back in the
    first file's id and class order; one file gives the model itself as its predictions."""
    b = _written(task["b"])
    b["cost"] = np.linspace(1.0, 2.0, b.shape[0])
    shuffled = b.sample(frac=1.0, random_state=0)[["p_1", "cost", "id", "p_0"]]
    shuffled.to_csv(tmp_path / "b_shuffled.csv", index=False)

    pools = read_pools([task["a"], tmp_path / "b_shuffled.csv"])
    assert pools.ids.tolist() == _written(task["a"])["id"].tolist()
    assert pools.names == [str(task["a"]), str(tmp_path / "b_shuffled.csv")]
    assert pools.predictions is pools.predictives and len(pools.predictives) == 2
    second = pools.predictives[1]
    assert isinstance(second, Categorical) and second.labels.tolist() == [0, 1]
    assert np.array_equal(second.proba, b[["p_0", "p_1"]].to_numpy())
    assert pools.costs is not None and np.array_equal(pools.costs, b["cost"].to_numpy())
    assert pools.files[1].ids.tolist() == shuffled["id"].tolist()  # as read, before alignment

    one = read_pools([task["a"]])
    assert one.predictions is one.predictives[0] and one.costs is None


def test_a_labels_file_is_read_as_written(task: dict[str, Path], tmp_path: Path) -> None:
    """CSV cells stay the text written (stripped), indexed by line; the same table written as
    Parquet is indexed by row; session_id and annotator columns are kept, others dropped."""
    frame, row_label = read_labels_file(task["truth"])
    truth = pd.read_csv(task["truth"])
    assert row_label == "line" and list(frame.columns) == ["id", "label"]
    assert frame.index.tolist() == list(range(2, 2 + truth.shape[0]))
    assert frame["id"].tolist() == truth["id"].astype(str).tolist()
    assert frame["label"].tolist() == truth["label"].astype(str).tolist()

    extra = truth.assign(annotator="ann", session_id="s-1", note="dropped")
    write_table(extra, tmp_path / "labels.parquet")
    frame, row_label = read_labels_file(tmp_path / "labels.parquet")
    assert row_label == "row"
    assert list(frame.columns) == ["id", "label", "session_id", "annotator"]
    assert frame.index.tolist() == list(range(1, 1 + truth.shape[0]))
    assert frame["label"].tolist() == truth["label"].tolist()


def test_a_features_file_is_put_in_the_pools_id_order(
    task: dict[str, Path], tmp_path: Path
) -> None:
    ids = read_pool_file(task["a"]).ids
    rng = np.random.default_rng(1)
    x = rng.normal(size=(ids.shape[0], 2))
    frame = pd.DataFrame({"x1": x[:, 0], "id": ids, "x2": x[:, 1]})
    frame.iloc[::-1].to_csv(tmp_path / "features.csv", index=False)  # rows in another order
    assert np.array_equal(read_features_file(tmp_path / "features.csv", ids), x)


def test_write_table_refuses_a_name_of_another_type(task: dict[str, Path], tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    with pytest.raises(OutputFileError, match=r"out\.xlsx: must end in \.csv, \.parquet or \.pq"):
        write_table(_written(task["truth"]), tmp_path / "out.xlsx")
    assert sorted(tmp_path.iterdir()) == before


def test_a_decision_column_is_read_in_the_pool_s_order_and_must_cover_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from activeeval.errors import LabelSpaceError
    from activeeval.io import read_decision_column

    path = tmp_path / "pool.csv"
    path.write_text("id,p_0,p_1,at\n3,0.8,0.2,0\n1,0.6,0.4,1\n2,0.1,0.9,1\n")
    assert read_decision_column(path, "at", np.array([1, 2, 3]), [0, 1]).tolist() == [1, 1, 0]
    with pytest.raises(InputFileError, match=r"no row for 1 of the pool's 4 ids \(e\.g\. 4\); "
                       r"the file needs one row with column 'at' per pool instance"):  # fmt: skip
        read_decision_column(path, "at", np.array([1, 2, 3, 4]), [0, 1])
    with pytest.raises(LabelSpaceError, match=r"line 3, column 'at': '1' is not a class of the"):
        read_decision_column(path, "at", np.array([1, 2, 3]), ["a", "b"])


@pytest.mark.parametrize("dtype", ["float32", "float64", "Float64", "int64", "double[pyarrow]"])
def test_a_parquet_files_number_columns_read_as_their_text(tmp_path, dtype) -> None:  # type: ignore[no-untyped-def]
    """Number columns (a Parquet file's, of any numeric type) are read by numpy, not cell by
    cell (0.19 s against 0.005 s a chunk of 2^18 rows): the same doubles as the file's text
    read by Python, and a null or infinite cell refused naming its row as a text cell is."""
    p1 = np.array([0, 1, 1, 0]) if dtype == "int64" else np.array([0.1, 0.3, 0.7, 0.9])
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "p_0": 1 - p1, "p_1": p1}).astype(
        {"p_0": dtype, "p_1": dtype}
    )
    frame.to_parquet(tmp_path / "a.parquet")
    text = {c: frame[c].astype("float64").map(repr) for c in ("p_0", "p_1")}  # exact digits
    frame.assign(**text).to_csv(tmp_path / "a.csv", index=False)
    got = read_pool_file(tmp_path / "a.parquet").predictive.proba
    want = read_pool_file(tmp_path / "a.csv").predictive.proba
    assert got.dtype == np.float64 and np.array_equal(got, want)
    assert np.array_equal(got, frame[["p_0", "p_1"]].to_numpy(dtype=np.float64))
    if dtype == "int64":
        return
    bad = frame.copy()
    bad.loc[2, "p_1"] = np.inf
    bad.to_parquet(tmp_path / "inf.parquet")
    with pytest.raises(NonFiniteError, match=r"inf\.parquet: row 3, column 'p_1': value .*inf"):
        read_pool_file(tmp_path / "inf.parquet")
    for name in ("null", "nan"):  # an Arrow column's NaN is not its null: both are empty
        values = frame["p_1"].to_numpy(dtype=np.float64, copy=True)
        values[2] = np.nan
        if name == "null" or dtype != "double[pyarrow]":
            bad["p_1"] = pd.Series(values).astype(dtype)  # NaN read as the dtype's null
        else:
            pa = pytest.importorskip("pyarrow")
            bad["p_1"] = pd.arrays.ArrowExtensionArray(pa.array(values, from_pandas=False))
            assert not bad["p_1"].isna().any()  # a NaN, not a null
        bad.to_parquet(tmp_path / f"{name}.parquet")
        with pytest.raises(InputFileError, match=rf"{name}\.parquet: row 3, column 'p_1' is empty"):
            read_pool_file(tmp_path / f"{name}.parquet")


def test_class_labels_beyond_int64_are_read_as_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A class column ``p_99999999999999999999`` crashed ``session init`` with an uncaught
    OverflowError (exit 1, no message): integer text beyond int64 stays text, as ids do, and
    every label of the file with it (one rule for all of a file's labels)."""
    from click.testing import CliRunner

    from activeeval import Session
    from activeeval.cli import main
    from activeeval.predictive import class_labels_from_names

    big = "99999999999999999999"
    assert class_labels_from_names(["0", big]).tolist() == ["0", big]
    assert class_labels_from_names(["0", str(2**63 - 1)]).dtype == np.int64
    assert class_labels_from_names([str(-(2**63)), "1"]).dtype == np.int64
    assert class_labels_from_names(["0", str(2**63)]).dtype.kind == "U"
    pool = tmp_path / "pool.csv"
    pool.write_text(f"id,p_0,p_{big}\n1,0.3,0.7\n2,0.6,0.4\n3,0.5,0.5\n")
    out = CliRunner().invoke(
        main, ["session", "init", str(tmp_path / "s.db"), "--pool", str(pool), "--measure",
               "error_rate", "--budget", "2"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    with Session.open(tmp_path / "s.db") as s:
        ids = s.next_batch(2)
        s.record({i: big for i in ids})
        assert s.estimate().n_labels == 2


def _pool_texts() -> dict[str, str]:
    """CSV pool files, each read by the chunked reader (chunks of 3 rows) and whole."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.01, 0.99, 10).tolist()
    rows = [f"{i},{1 - v!r},{v!r}" for i, v in enumerate(p)]
    return {
        "int ids": "id,p_0,p_1\n" + "\n".join(rows) + "\n",
        "ids integer, then a word": "id,p_0,p_1\n" + "\n".join([*rows[:7], "x7,0.5,0.5"]) + "\n",
        "costs, CRLF, spaces": "id,p_a,p_b,cost\r\n"
        + "".join(f"{i}, {1 - v!r} ,{v!r},{i + 1}\r\n" for i, v in enumerate(p)),
        "a quote past the first chunk": "id,p_0,p_1\n"
        + "\n".join([*rows[:5], '"5",0.5,0.5', *rows[6:]])
        + "\n",
        "regressor": "id,mean,var\n" + "".join(f"r{i},{v * 10!r},{v!r}\n" for i, v in enumerate(p)),
        "ranked": "id,item,p_0,p_1\n"
        + "".join(f"{i // 3},{i % 3},{1 - v!r},{v!r}\n" for i, v in enumerate(p)),
    }


@pytest.mark.parametrize("name", list(_pool_texts()))
def test_a_csv_pool_file_read_in_chunks_is_the_file_read_whole(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_pool_file parses a CSV file as a streamed init does (pyarrow where plain): the
    same ids (type too), predictions, costs and lines as the whole-file text, with the
    whole-file read made to fail so that the chunked one must serve."""
    path = tmp_path / "pool.csv"
    path.write_bytes(_pool_texts()[name].encode())
    want = aio._pool_file(*aio._read_table(path), path, None)
    monkeypatch.setattr(aio, "STREAM_ROWS", 3)

    def refuse(p: Path) -> None:
        raise AssertionError("read whole")

    monkeypatch.setattr(aio, "_read_table", refuse)
    got = aio.read_pool_file(path)
    assert got.ids.dtype == want.ids.dtype and np.array_equal(got.ids, want.ids)
    assert type(got.predictive) is type(want.predictive)
    for field in ("proba", "mean", "var", "offsets"):
        if hasattr(want.predictive, field):
            a, b = getattr(got.predictive, field), getattr(want.predictive, field)
            assert np.array_equal(a, b) and a.dtype == b.dtype, field
    if hasattr(want.predictive, "labels"):
        assert got.predictive.labels.tolist() == want.predictive.labels.tolist()
    assert (got.costs is None) == (want.costs is None)
    if want.costs is not None:
        assert np.array_equal(got.costs, want.costs)
    assert np.array_equal(got.rows, want.rows) and got.row_label == want.row_label
    if want.item_text is not None:
        assert np.array_equal(got.item_text, want.item_text)


@pytest.mark.parametrize(
    "text",
    [
        "id,p_0,p_1\n0,0.5,0.5\n1,0.5,0.5\n2,0.5,0.5\n3,0.9,0.5\n",  # a row sum, chunk 2
        "id,p_0,p_1\n0,0.5,0.5\n1,0.5,0.5\n2,0.5,0.5\n3,,1\n",  # an empty cell
        "id,p_0,p_1\n0,0.5,0.5\n1,0.5,0.5\n2,0.5,0.5\n0,0.5,0.5\n",  # an id seen in chunk 1
        "id,p_0,p_1\n0,0.5,0.5\n1,0.5,0.5\n2,0.5,0.5\n3,0.5\n",  # a ragged row
        "id,p_0,p_1\n",  # no rows
        "id,p_0,p_0\n0,0.5,0.5\n",  # a column named twice
        "id,p_0,p_1,mean,var\n0,0.5,0.5,1,1\n",  # two kinds of model
    ],
)
def test_a_csv_pool_file_s_error_is_the_whole_read_s(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pool.csv"
    path.write_text(text)
    with pytest.raises(ae_errors.ActiveEvalError) as whole:
        aio._pool_file(*aio._read_table(path), path, None)
    monkeypatch.setattr(aio, "STREAM_ROWS", 3)
    with pytest.raises(type(whole.value)) as chunked:
        aio.read_pool_file(path)
    assert str(chunked.value) == str(whole.value)


def test_ids_of_other_scripts_digits_stay_text(tmp_path: Path) -> None:
    """Only ASCII digits make an integer id: Python's int() reads "1٣" (an Arabic-Indic
    three) as 13, which made it collide with the id 13."""
    path = tmp_path / "pool.csv"
    path.write_text("id,p_0,p_1\n1٣,0.5,0.5\n13,0.5,0.5\n", encoding="utf-8")
    got = aio.read_pool_file(path)
    assert got.ids.tolist() == ["1٣", "13"]


@pytest.mark.parametrize("kind", ["float", "bool"])
def test_a_parquet_decision_column_of_numbers_is_read_by_value(kind: str, tmp_path: Path) -> None:
    """1.0 and True are the class 1, as evaluate(prediction=) reads an array; a NaN is an
    empty cell and 0.5 no class."""
    f = np.array([1, 0, 1, 1])
    dec = f.astype(float) if kind == "float" else f.astype(bool)
    frame = pd.DataFrame({"id": [1, 2, 3, 4], "p_0": 0.5, "p_1": 0.5, "dec": dec})
    frame.to_parquet(tmp_path / "p.parquet")
    got = read_decision_column(tmp_path / "p.parquet", "dec", np.array([4, 3, 2, 1]), [0, 1])
    assert got.tolist() == [1, 1, 0, 1]
    if kind == "float":
        for bad, message in ((np.nan, "is empty"), (0.5, "0.5 is not a class")):
            frame.loc[2, "dec"] = bad
            frame.to_parquet(tmp_path / "p.parquet")
            with pytest.raises(ae_errors.ActiveEvalError, match=message):
                read_decision_column(tmp_path / "p.parquet", "dec", np.array([1, 2, 3, 4]), [0, 1])
