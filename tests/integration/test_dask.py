"""Dask pools on a real ``distributed.LocalCluster`` (``make integration``).

A scheduler and two worker processes on localhost, talking over TCP, as on any Dask cluster
(``Client(address)``). The same pool held in NumPy and in Dask gives the same draws, q, labels
and estimate bit for bit, for the same seed — on a pool of one block (10⁵ rows, the issue's
acceptance) and of several blocks (6·10⁵ rows: three of ``_chunks.ROWS``), from a Dask array
cut into partitions unlike the blocks and from a partitioned Parquet dataset read with
``dd.read_parquet``. Marked ``integration``: ``make test`` deselects it; ``make integration``
installs the ``dask`` extra and runs it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import activeeval as ae
from activeeval import _chunks
from activeeval.errors import (
    ActiveEvalError,
    NonFiniteError,
    ProbabilityRowsError,
    ShapeError,
    UnknownOptionError,
)
from activeeval.session import streaming as streaming_mod

pytestmark = pytest.mark.integration

da = pytest.importorskip("dask.array", reason="the dask extra: make integration installs it")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A LocalCluster of two single-threaded worker processes and a client connected to it
    by its scheduler's TCP address, as to a remote cluster."""
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    with distributed.Client(cluster.scheduler_address) as c:
        yield c
    cluster.close()


def _binary(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """An overconfident binary model on m instances and labels from a shifted truth."""
    rng = np.random.default_rng(seed)
    p1 = rng.beta(0.5, 2.0, size=m)
    proba = np.column_stack([1.0 - p1, p1])
    y = (rng.random(m) < np.clip(1.3 * p1, 0.0, 1.0)).astype(int)
    return proba, y


def _same(a: Any, b: Any) -> None:
    """Two results of evaluate: the same campaign and estimate, bit for bit."""
    assert np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.q, b.q)
    assert np.array_equal(a.labels, b.labels)
    assert (a.estimate, a.stderr, a.ci) == (b.estimate, b.stderr, b.ci)
    assert (a.n_labels, a.n_draws, a.cost) == (b.n_labels, b.n_draws, b.cost)
    assert a.interval == b.interval


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision", "recall"])
@pytest.mark.parametrize("method", ["active", "passive"])
def test_a_pool_of_1e5_in_dask_gives_numpys_campaign(
    client: Any, measure: str, method: str
) -> None:
    proba, y = _binary(100_000, 1)
    pool = da.from_array(proba, chunks=(13_000, 2))  # partitions unlike the blocks
    want = ae.evaluate(proba, lambda i: y[i], measure, budget=250, method=method, random_state=5)
    got = ae.evaluate(pool, lambda i: y[i], measure, budget=250, method=method, random_state=5)
    _same(want, got)
    assert got.pool_q is None  # q stays on the cluster
    # the anytime interval from the pool summary and the drawn rows, as from the pool
    assert got.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")


@pytest.mark.parametrize("measure", ["f1", "precision", "error_rate"])
def test_a_pool_of_several_blocks_gives_numpys_campaign(client: Any, measure: str) -> None:
    m = 2 * _chunks.ROWS + 75_000
    proba, y = _binary(m, 2)
    pool = da.from_array(proba, chunks=(100_000, 2))
    assert len(range(0, m, _chunks.ROWS)) == 3
    want = ae.evaluate(proba, lambda i: y[i], measure, budget=400, random_state=11)
    got = ae.evaluate(pool, lambda i: y[i], measure, budget=400, random_state=11)
    _same(want, got)


def test_several_classes_and_float32(client: Any) -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(120_000, 4)) * np.array([1.0, 2.0, 0.5, 1.5])
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba = (proba / proba.sum(axis=1, keepdims=True)).astype(np.float32)
    y = np.array([rng.choice(4, p=r / r.sum()) for r in proba[:, :].astype(float)])
    want = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=300, random_state=2)
    got = ae.evaluate(da.from_array(proba, chunks=(50_000, 4)), lambda i: y[i], "error_rate",
                      budget=300, random_state=2)  # fmt: skip
    _same(want, got)


def test_a_partitioned_parquet_pool_read_with_dask(client: Any, tmp_path: Path) -> None:
    """A pool file's columns (id, p_<label> by name, in any order) as a partitioned Parquet
    dataset: the same campaign as the same columns in a pandas DataFrame."""
    proba, y = _binary(100_000, 4)
    frame = pd.DataFrame({"p_1": proba[:, 1], "id": np.arange(100_000) + 7, "p_0": proba[:, 0]})
    folder = tmp_path / "pool"
    folder.mkdir()
    for k, start in enumerate(range(0, 100_000, 30_000)):
        frame.iloc[start : start + 30_000].to_parquet(folder / f"part-{k}.parquet", index=False)
    pool = dd.read_parquet(str(folder))
    assert pool.npartitions == 4
    want = ae.evaluate(frame[["p_0", "p_1"]], lambda i: y[i], "f1", budget=300, random_state=8)
    got = ae.evaluate(pool, lambda i: y[i], "f1", budget=300, random_state=8)
    _same(want, got)


def test_a_regressor_in_a_dask_frame(client: Any) -> None:
    rng = np.random.default_rng(6)
    mean = rng.normal(size=100_000)
    var = rng.uniform(0.2, 2.0, size=100_000)
    y = mean + rng.normal(size=100_000) * np.sqrt(1.5 * var)
    frame = pd.DataFrame({"mean": mean, "var": var})
    pool = dd.from_pandas(frame, npartitions=3)
    for measure in ("mse", "mae"):
        want = ae.evaluate(frame, lambda i: y[i], measure, budget=200, random_state=1)
        got = ae.evaluate(pool, lambda i: y[i], measure, budget=200, random_state=1)
        _same(want, got)


def test_time_beyond_the_summarys_series_is_numpys_newton(client: Any) -> None:
    """t(n) where the power series does not reach n: Newton's iteration with its sums from the
    blocks equals the one over q in NumPy, bit for bit."""
    from activeeval.campaign import distributed as dist
    from activeeval.measures import get_measure
    from activeeval.sampling import _time_to_reach, sampling_distribution

    m = _chunks.ROWS + 40_000
    proba, _ = _binary(m, 9)
    meas = get_measure("f1").bind(ae.as_predictive(proba))
    pool = dist.DaskPool.of([da.from_array(proba, chunks=(90_000, 2))], ["predictions"])
    prep = dist._prepare(pool, meas, False, 0.05, 0.1, False)
    q = sampling_distribution("active", ae.as_predictive(proba), meas, costs=None)
    for n in (1_000.0, 150_000.0):
        assert dist._newton(pool, prep.plan, n, positive=False) == _time_to_reach(q, n)


def test_errors_name_the_pools_row(client: Any) -> None:
    proba, y = _binary(300_000, 5)
    bad = proba.copy()
    bad[280_123, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r"entry \(280123, 1\)"):
        ae.evaluate(da.from_array(bad, chunks=(70_000, 2)), lambda i: y[i], budget=50)
    bad = proba.copy()
    bad[270_001] = [0.9, 0.6]
    with pytest.raises(ProbabilityRowsError, match=r"row 270001 sums to 1\.5"):
        ae.evaluate(da.from_array(bad, chunks=(70_000, 2)), lambda i: y[i], budget=50)


def test_a_pool_that_changes_between_passes_is_refused(client: Any) -> None:
    proba, y = _binary(100_000, 7)

    def jitter(block: np.ndarray) -> np.ndarray:
        e = np.random.default_rng().uniform(0, 1e-3, size=block.shape[0])  # new every pass
        return np.column_stack([block[:, 0] - e, block[:, 1] + e])

    pool = da.from_array(proba, chunks=(25_000, 2)).map_blocks(jitter, dtype=float)
    with pytest.raises(ShapeError, match="changed between passes"):
        ae.evaluate(pool, lambda i: y[i], "error_rate", budget=100, random_state=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pool_weights": np.ones(1000)}, "pool_weights: not supported on a Dask pool"),
        ({"estimator": "ht"}, "estimator"),
        ({"batch_size": 10}, "batch_size: not supported on a Dask pool"),
        ({"method": "stratified"}, "method"),
        ({"measure": "macro_f1"}, "macro_f1 on a Dask pool is not supported"),
        ({"measure": "brier"}, "brier on a Dask pool is not supported"),
    ],
)
def test_what_a_dask_pool_does_not_take_is_refused(client: Any, kwargs: dict, match: str) -> None:
    proba, y = _binary(1000, 8)
    measure = kwargs.pop("measure", "error_rate")
    with pytest.raises(UnknownOptionError, match=match):
        ae.evaluate(da.from_array(proba, chunks=500), lambda i: y[i], measure, budget=50, **kwargs)


def test_pools_a_dask_pool_cannot_hold_are_refused(client: Any) -> None:
    proba, y = _binary(1000, 8)
    with pytest.raises(ShapeError, match=r"da.stack\(\[1 - p, p\], axis=1\)"):
        ae.evaluate(da.from_array(proba[:, 1], chunks=500), lambda i: y[i], budget=20)
    frame = pd.DataFrame({"id": np.arange(1000), "p_0": proba[:, 0], "p_1": proba[:, 1],
                          "cost": np.ones(1000)})  # fmt: skip
    with pytest.raises(UnknownOptionError, match="cost column"):
        ae.evaluate(dd.from_pandas(frame, npartitions=2), lambda i: y[i], budget=20)
    ranked = pd.DataFrame({"id": [0, 0, 1], "item": [0, 1, 0], "p_0": [0.5, 0.2, 0.1],
                           "p_1": [0.5, 0.8, 0.9]})  # fmt: skip
    with pytest.raises(UnknownOptionError, match="ranked pool"):
        ae.evaluate(dd.from_pandas(ranked, npartitions=1), lambda i: y[i], "dcg", budget=2)


# ------------------------------------------------------------------ Session.create
def _store_tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows but the session's id and creation time (as test_streamed_init)."""
    import sqlite3

    conn = sqlite3.connect(path)
    out: dict[str, list[tuple[object, ...]]] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        rows = conn.execute(f"SELECT * FROM {name}").fetchall()
        if name == "meta":
            rows = [r for r in rows if r[0] not in ("session_id", "created_at")]
        if name == "plan":
            rows = [r[:-1] for r in rows]
        out[name] = sorted(rows, key=repr)
    conn.close()
    return out


def _refused(*args: Any) -> None:
    raise AssertionError("computed whole: the streamed read should have served")


@pytest.mark.parametrize("streamed", [True, False])
def test_a_session_of_a_dask_frame_is_the_numpy_sessions_store(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    """A session created from a Dask DataFrame with a pool file's columns (partition by
    partition, or computed whole where a pool fits one chunk) writes the store the same
    pool in NumPy writes, byte for byte but for the session's id and time, and continues."""
    from activeeval import io
    from activeeval.session import Session

    proba, y = _binary(5_000, 12)
    ids = np.arange(5_000) * 3 + 1
    frame = pd.DataFrame({"id": ids, "p_0": proba[:, 0], "p_1": proba[:, 1]})
    if streamed:  # the chunked read serves pools above STREAM_ROWS: make this one so
        monkeypatch.setattr(io, "STREAM_ROWS", 700)
        monkeypatch.setattr(streaming_mod, "_in_memory", _refused)
    whole = Session.create(tmp_path / "numpy.db", proba, "f1", 200, ids=ids, seed=4)
    dask_pool = dd.from_pandas(frame, npartitions=6)
    made = Session.create(tmp_path / "dask.db", dask_pool, "f1", 200, seed=4)
    assert _store_tables(tmp_path / "dask.db") == _store_tables(tmp_path / "numpy.db")
    for s in (whole, made):
        got = s.next_batch(150)
        s.record({i: int(y[(i - 1) // 3]) for i in got})
    assert whole.estimate().estimate == made.estimate().estimate
    whole.close()
    made.close()


def test_a_session_of_a_dask_array_and_of_two_models(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from activeeval import io
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 900)
    monkeypatch.setattr(streaming_mod, "_in_memory", _refused)
    a, _ = _binary(4_000, 13)
    b, _ = _binary(4_000, 14)
    want = Session.create(tmp_path / "n.db", [a, b], "error_rate", 100, seed=1,
                          labels=["no", "yes"], names=["a", "b"])  # fmt: skip
    pools = [da.from_array(a, chunks=1_500), da.from_array(b, chunks=1_100)]
    got = Session.create(tmp_path / "d.db", pools, "error_rate", 100, seed=1,
                         labels=["no", "yes"], names=["a", "b"])  # fmt: skip
    assert _store_tables(tmp_path / "d.db") == _store_tables(tmp_path / "n.db")
    want.close()
    got.close()
    with pytest.raises(ShapeError, match="cost column"):
        Session.create(tmp_path / "c.db", da.from_array(a, chunks=1_000), "f1", 50,
                       costs=np.ones(4_000))  # fmt: skip


def test_a_dask_session_keeps_the_decisions_given(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session.create(prediction=) of a Dask pool above one chunk stores the decisions (a
    tuned threshold's classes) as the pool in NumPy does — they were once dropped without a
    word — from a NumPy array, a Dask array or a Dask Series; per model for a pair."""
    from activeeval import io
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 700)
    monkeypatch.setattr(streaming_mod, "_in_memory", _refused)
    a, y = _binary(3_000, 18)
    b, _ = _binary(3_000, 19)
    f = (a[:, 1] > 0.3).astype(int)
    frame = pd.DataFrame({"id": np.arange(3_000), "p_0": a[:, 0], "p_1": a[:, 1], "f": f})
    ddf = dd.from_pandas(frame, npartitions=4)
    Session.create(tmp_path / "n.db", a, "f1", 80, seed=2, prediction=f).close()
    for name, pool, given in [
        ("numpy", da.from_array(a, chunks=1_000), f),
        ("dask array", da.from_array(a, chunks=1_000), da.from_array(f, chunks=900)),
        ("dask series", ddf.drop(columns="f"), ddf["f"]),
    ]:
        made = tmp_path / f"{name}.db"
        Session.create(made, pool, "f1", 80, seed=2, prediction=given).close()
        assert _store_tables(made) == _store_tables(tmp_path / "n.db"), name
    with Session.open(tmp_path / "numpy.db") as s:
        assert np.array_equal(s.predictives[0].point_prediction(), f)
        got = s.next_batch(60)
        s.record({i: int(y[i]) for i in got})
        est = s.estimate().estimate
    with Session.open(tmp_path / "n.db") as s:
        s.record({i: int(y[i]) for i in s.next_batch(60)})
        assert s.estimate().estimate == est
    pair = [da.from_array(a, chunks=1_000), da.from_array(b, chunks=1_000)]
    Session.create(tmp_path / "pn.db", [a, b], "error_rate", 80, seed=3, prediction=[None, f],
                   names=["a", "b"]).close()  # fmt: skip
    Session.create(tmp_path / "pd.db", pair, "error_rate", 80, seed=3, prediction=[None, f],
                   names=["a", "b"]).close()  # fmt: skip
    assert _store_tables(tmp_path / "pd.db") == _store_tables(tmp_path / "pn.db")
    with pytest.raises(ShapeError, match=r"prediction: expected one decision per pool instance"):
        Session.create(tmp_path / "x.db", pair[0], "f1", 80, prediction=f[:-1])
    with pytest.raises(ShapeError, match=r"prediction\[1\]: expected one decision"):
        Session.create(tmp_path / "y.db", pair, "f1", 80, prediction=[None, f[1:]])
    with pytest.raises(ae.errors.LabelSpaceError):
        Session.create(tmp_path / "z.db", pair[0], "f1", 80, prediction=np.where(f, 2, 0))
    assert not any((tmp_path / f"{x}.db").exists() for x in "xyz")


def test_a_dask_sessions_errors_name_the_pools_row(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from activeeval import io
    from activeeval.errors import DuplicateIdError
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 700)
    proba, _ = _binary(3_000, 15)
    frame = pd.DataFrame({"id": np.arange(3_000), "p_0": proba[:, 0], "p_1": proba[:, 1]})
    bad = frame.copy()
    bad.loc[2_345, "p_1"] += 0.3
    with pytest.raises(ActiveEvalError, match=r"pools\[0\] \(a Dask pool\): row 2346"):
        Session.create(tmp_path / "a.db", dd.from_pandas(bad, npartitions=4), "f1", 50)
    bad = frame.copy()
    bad.loc[2_900, "id"] = 17
    with pytest.raises(
        DuplicateIdError, match="row 2901, column 'id': id 17 already appears on row 18"
    ):
        Session.create(tmp_path / "b.db", dd.from_pandas(bad, npartitions=4), "f1", 50)
    assert not (tmp_path / "a.db").exists() and not (tmp_path / "b.db").exists()


# ---------------------------------------------------------------------------- compare
def _pair(m: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two binary models on m instances (the second the first plus noise) and labels."""
    proba, y = _binary(m, seed)
    rng = np.random.default_rng(seed + 100)
    p2 = np.clip(proba[:, 1] + rng.normal(0.0, 0.15, m), 0.01, 0.99)
    return proba, np.column_stack([1.0 - p2, p2]), y


def _same_comparison(a: Any, b: Any) -> None:
    assert np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.q, b.q)
    assert np.array_equal(a.labels, b.labels)
    assert (a.difference, a.stderr, a.p_value, a.ci) == (b.difference, b.stderr, b.p_value, b.ci)
    assert a.best == b.best and np.array_equal(a.estimates, b.estimates)
    assert (a.n_labels, a.n_draws, a.cost) == (b.n_labels, b.n_draws, b.cost)


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
@pytest.mark.parametrize("method", ["active", "passive"])
def test_a_pair_of_1e5_in_dask_gives_numpys_comparison(
    client: Any, measure: str, method: str
) -> None:
    a, b, y = _pair(100_000, 21)
    pools = [da.from_array(a, chunks=(30_000, 2)), da.from_array(b, chunks=(45_000, 2))]
    want = ae.compare([a, b], lambda i: y[i], measure, budget=300, method=method, random_state=4)
    got = ae.compare(pools, lambda i: y[i], measure, budget=300, method=method, random_state=4)
    _same_comparison(want, got)
    assert got.pool_q is None
    assert np.array_equal(got.model_intervals(), want.model_intervals())  # tempered, each

    assert got.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")
    assert got.test(method="anytime") == want.test(method="anytime")


@pytest.mark.parametrize("measure", ["f1", "precision"])
def test_a_pair_of_several_blocks_gives_numpys_comparison(client: Any, measure: str) -> None:
    m = 2 * _chunks.ROWS + 75_000
    a, b, y = _pair(m, 22)
    pools = [da.from_array(a, chunks=(200_000, 2)), da.from_array(b, chunks=(150_000, 2))]
    for budget in (60, 500):  # the mixture's control variate alone, and each model's own
        want = ae.compare([a, b], lambda i: y[i], measure, budget=budget, random_state=6)
        got = ae.compare(pools, lambda i: y[i], measure, budget=budget, random_state=6)
        _same_comparison(want, got)
        assert np.array_equal(got.model_intervals(), want.model_intervals())


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_decisions_apart_from_the_beliefs_give_numpys_campaign(client: Any, measure: str) -> None:
    """prediction= (a tuned threshold's classes, given as a NumPy array, a Dask array cut
    unlike the pool, or a Dask Series) travels as a column beside the beliefs: the same
    campaign and estimate as in NumPy, bit for bit, for one model, a pair (decisions for one
    of them) and a regressor's rounded means; a class the model lacks is refused alike."""
    m = _chunks.ROWS + 90_000  # two blocks
    a, b, y = _pair(m, 25)
    f = (a[:, 1] > 0.3).astype(int)
    pool = da.from_array(a, chunks=(110_000, 2))
    want = ae.evaluate(a, lambda i: y[i], measure, budget=300, random_state=3, prediction=f)
    assert want.estimate != ae.evaluate(a, lambda i: y[i], measure, budget=300,
                                        random_state=3).estimate  # fmt: skip
    for given in (f, da.from_array(f, chunks=70_000), dd.from_pandas(pd.Series(f), npartitions=3)):
        got = ae.evaluate(pool, lambda i: y[i], measure, budget=300, random_state=3,
                          prediction=given)  # fmt: skip
        _same(want, got)
    pools = [pool, da.from_array(b, chunks=(90_000, 2))]
    want = ae.compare([a, b], lambda i: y[i], measure, budget=300, random_state=4,
                      prediction=[None, f])  # fmt: skip
    got = ae.compare(pools, lambda i: y[i], measure, budget=300, random_state=4,
                     prediction=[None, f])  # fmt: skip
    _same_comparison(want, got)
    bad = f.astype(object)
    bad[m - 5] = 7
    for pools_given in (a, pool):
        with pytest.raises(ae.errors.LabelSpaceError, match=rf"value 7 \(position {m - 5}\)"):
            ae.evaluate(pools_given, lambda i: y[i], measure, budget=30, prediction=bad)
    with pytest.raises(ShapeError, match=r"prediction: a comparison takes one decision array"):
        ae.compare(pools, lambda i: y[i], measure, budget=30, prediction=[f])


def test_a_regressor_s_decisions_on_a_dask_frame_give_numpys_campaign(client: Any) -> None:
    rng = np.random.default_rng(26)
    m = _chunks.ROWS + 40_000
    mean, var = rng.normal(size=m), rng.uniform(0.1, 2.0, m)
    y = mean + rng.normal(size=m) * np.sqrt(var) * 1.3
    frame = dd.from_pandas(pd.DataFrame({"id": np.arange(m), "mean": mean, "var": var}),
                           npartitions=3)  # fmt: skip
    deployed = np.round(mean, 1)
    want = ae.evaluate(ae.Gaussian(mean, var), lambda i: y[i], "mse", budget=200,
                       random_state=2, prediction=deployed)  # fmt: skip
    got = ae.evaluate(frame, lambda i: y[i], "mse", budget=200, random_state=2,
                      prediction=deployed)  # fmt: skip
    _same(want, got)
    assert got.estimate != ae.evaluate(frame, lambda i: y[i], "mse", budget=200,
                                       random_state=2).estimate  # the decisions count  # fmt: skip
    deployed[7] = np.nan
    with pytest.raises(NonFiniteError, match="prediction"):
        ae.evaluate(frame, lambda i: y[i], "mse", budget=200, prediction=deployed)


def test_labeling_costs_give_numpys_campaign(client: Any) -> None:
    """costs= (Thm 4.2: q* over λ^(1/2), the budget in cost units) travel as a last column
    beside the models: the same draws, prices, estimate and interval as in NumPy, bit for
    bit — for each method, a Dask array or Series of costs, a stopping rule (its horizon from
    Σ q·λ) and a pair; bad costs refused as NumPy refuses them, naming the entry."""
    m = _chunks.ROWS + 90_000
    a, b, y = _pair(m, 27)
    c = np.random.default_rng(27).integers(1, 6, m).astype(float)
    pool = da.from_array(a, chunks=(110_000, 2))
    for method, given in (("active", c), ("active_uniC", da.from_array(c, chunks=60_000)),
                          ("passive", dd.from_pandas(pd.Series(c), npartitions=3))):  # fmt: skip
        want = ae.evaluate(a, lambda i: y[i], "f1", budget=700, method=method, random_state=3,
                           costs=c)  # fmt: skip
        got = ae.evaluate(pool, lambda i: y[i], "f1", budget=700, method=method,
                          random_state=3, costs=given)  # fmt: skip
        _same(want, got)
        assert got.cost <= 700 and got.n_labels < 700
    unit = ae.evaluate(a, lambda i: y[i], "f1", budget=700, random_state=3)
    assert not np.array_equal(unit.q, want.q)  # the costs count
    want = ae.evaluate(a, lambda i: y[i], "error_rate", budget=3_000, random_state=4, costs=c,
                       target_width=0.05, progress=False)  # fmt: skip
    got = ae.evaluate(pool, lambda i: y[i], "error_rate", budget=3_000, random_state=4, costs=c,
                      target_width=0.05, progress=False)  # fmt: skip
    _same(want, got)
    assert want.stopped is not None and got.stopped == want.stopped
    assert got.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")
    pools = [pool, da.from_array(b, chunks=(90_000, 2))]
    want = ae.compare([a, b], lambda i: y[i], "error_rate", budget=700, random_state=5, costs=c)
    got = ae.compare(pools, lambda i: y[i], "error_rate", budget=700, random_state=5, costs=c)
    _same_comparison(want, got)
    for bad, error in ((np.r_[c[:-1], 0.0], ae.errors.InvalidCostsError),
                       (np.r_[c[:-1], np.nan], NonFiniteError), (c[:-1], ShapeError)):  # fmt: skip
        with pytest.raises(error) as numpy_said:
            ae.evaluate(a, lambda i: y[i], "f1", budget=50, costs=bad)
        with pytest.raises(error) as dask_said:
            ae.evaluate(pool, lambda i: y[i], "f1", budget=50, costs=bad)
        assert str(dask_said.value) == str(numpy_said.value)
    with pytest.raises(ae.errors.BudgetError, match="cost units buy no label"):
        ae.evaluate(pool, lambda i: y[i], "f1", budget=0.5, costs=c)
    for given in ([a, b], pools):  # a budget short of the first draw's cost: no label bought
        with pytest.raises(ae.errors.BudgetError, match="no label was bought"):
            ae.compare(given, lambda i: y[i], "error_rate", budget=1.5, random_state=0,
                       costs=np.r_[1.0, np.full(m - 1, 5.0)])  # fmt: skip
    with pytest.raises(ShapeError, match="costs: cannot be read as a numeric array"):
        ae.evaluate(pool, lambda i: y[i], "f1", budget=50, costs=np.full(m, "x"))
    with pytest.raises(ShapeError, match="costs: expected a 1-d array, got a Dask DataFrame"):
        ae.evaluate(pool, lambda i: y[i], "f1", budget=50,
                    costs=dd.from_pandas(pd.DataFrame({"cost": c}), npartitions=2))  # fmt: skip
    with pytest.raises(ae.errors.BudgetError, match="must be a finite number"):
        ae.evaluate(pool, lambda i: y[i], "f1", budget=math.nan, costs=c)


def test_a_pair_labeled_whole_is_a_census(client: Any) -> None:
    a, b, y = _pair(300, 23)
    pools = [da.from_array(a, chunks=100), da.from_array(b, chunks=120)]
    kw = {"budget": 300, "random_state": 1, "max_draws": 100_000}
    want = ae.compare([a, b], lambda i: y[i], "error_rate", **kw)
    got = ae.compare(pools, lambda i: y[i], "error_rate", **kw)
    assert got.n_labels == 300 and got.stderr == 0.0
    truth = [float(np.mean(p.argmax(axis=1) != y)) for p in (a, b)]
    assert got.difference == pytest.approx(truth[0] - truth[1], abs=1e-15)
    _same_comparison(want, got)


def test_a_pair_whose_differing_units_are_labeled_is_exact_as_numpy_s(client: Any) -> None:
    """Two models deciding differently on 12 of 5,000 instances: once those are labeled the
    difference of error rates is exact (report.exact_difference); the Dask pool's first pass
    counts them as the NumPy pool does, so decide stops on the same draw with the same Δ."""
    rng = np.random.default_rng(31)
    m = 5_000
    p1 = rng.uniform(0.05, 0.95, m)
    y = (rng.random(m) < p1).astype(int)
    other = p1.copy()
    flip = rng.choice(m, 12, replace=False)
    other[flip] = 1 - other[flip]
    a, b = np.c_[1 - p1, p1], np.c_[1 - other, other]
    pools = [da.from_array(a, chunks=(2_000, 2)), da.from_array(b, chunks=(1_500, 2))]
    kw = {"budget": 400, "random_state": 2, "decide": True}
    want = ae.compare([a, b], lambda i: y[i], "error_rate", **kw)
    got = ae.compare(pools, lambda i: y[i], "error_rate", **kw)
    fa, fb = a.argmax(axis=1), b.argmax(axis=1)
    delta = float(np.sum((fa != y)[flip]) - np.sum((fb != y)[flip])) / m
    assert want.stopped is not None and want.stopped.startswith("decided")
    assert want.difference == pytest.approx(delta, abs=1e-15) and want.n_labels < 400
    assert got.stopped == want.stopped and got.n_labels == want.n_labels
    assert got.difference == want.difference and got.ci == want.ci


def test_what_a_dask_comparison_does_not_take_is_refused(client: Any) -> None:
    a, b, y = _pair(1_000, 24)
    pools = [da.from_array(a, chunks=500), da.from_array(b, chunks=500)]
    with pytest.raises(UnknownOptionError, match=r"sequential: the thesis's protocol .* Dask"):
        ae.compare(pools, lambda i: y[i], budget=50, sequential=True)
    with pytest.raises(UnknownOptionError, match="cannot both end"):  # as NumPy refuses it
        ae.compare(pools, lambda i: y[i], budget=50, sequential=True, decide=True)
    with pytest.raises(ShapeError, match="need at least two models to compare, got 1"):
        ae.compare(pools[:1], lambda i: y[i], budget=50)  # as NumPy refuses it
    with pytest.raises(UnknownOptionError, match="method"):
        ae.compare(pools, lambda i: y[i], budget=50, method="active_neq")
    with pytest.raises(ShapeError, match=r"predictions\[1\]: covers 999 instances"):
        ae.compare([pools[0], da.from_array(b[:999], chunks=500)], lambda i: y[i], budget=50)


def _three(m: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Three binary models on m instances (the first overconfident, the others it with
    noise) and labels."""
    a, b, y = _pair(m, seed)
    rng = np.random.default_rng(seed + 200)
    p3 = np.clip(a[:, 1] + rng.normal(0.05, 0.25, m), 0.01, 0.99)
    return [a, b, np.column_stack([1.0 - p3, p3])], y


def _same_multiple(want: Any, got: Any) -> None:
    """Two multiple comparisons: every pair's row (Δ, standard error, the p-values) and the
    ranking, bit for bit."""
    _same_comparison(want, got)
    pd.testing.assert_frame_equal(got.comparison._table, want.comparison._table, check_exact=True)
    assert np.array_equal(got.comparison.ranking, want.comparison.ranking)


@pytest.mark.parametrize(
    ("m", "measure", "budget"),
    [
        (100_000, "error_rate", 300),
        (100_000, "f1", 300),
        (2 * _chunks.ROWS + 75_000, "precision", 600),
    ],
)
def test_three_models_in_dask_give_numpys_multiple_comparison(
    client: Any, m: int, measure: str, budget: int
) -> None:
    """q is the average of the pairs' q* (eq. 5.16), summed over the blocks pair by pair:
    the draws, the multiple comparison (Holm's, Bonferroni's and Tukey's p-values), each
    model's tempered interval and the anytime interval are NumPy's, bit for bit."""
    models, y = _three(m, 25)
    pools = [
        da.from_array(p, chunks=(c, 2))
        for p, c in zip(models, (90_000, 70_000, 110_000), strict=True)
    ]
    want = ae.compare(models, lambda i: y[i], measure, budget=budget, random_state=3)
    got = ae.compare(pools, lambda i: y[i], measure, budget=budget, random_state=3)
    assert want.comparison.__class__.__name__ == "MultipleComparison"
    _same_multiple(want, got)
    assert got.pool_q is None
    assert np.array_equal(got.model_intervals(), want.model_intervals())
    assert got.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")


def test_three_models_in_dask_labeled_whole_a_census_a_rule_and_a_pair_with_nothing(
    client: Any,
) -> None:
    """Labeled whole, the exact multiple comparison; under a stopping rule, NumPy's looks;
    two models that decide alike (their pair's q* zero: it counts p), NumPy's q."""
    models, y = _three(300, 26)
    pools = [da.from_array(p, chunks=c) for p, c in zip(models, (100, 120, 90), strict=True)]
    kw = {"budget": 300, "random_state": 1, "max_draws": 100_000}
    want = ae.compare(models, lambda i: y[i], "error_rate", **kw)
    got = ae.compare(pools, lambda i: y[i], "error_rate", **kw)
    assert got.n_labels == 300 and got.stderr == 0.0 and got.comparison.census
    _same_multiple(want, got)

    models, y = _three(150_000, 27)
    pools = [
        da.from_array(p, chunks=(c, 2))
        for p, c in zip(models, (30_000, 45_000, 50_000), strict=True)
    ]
    kw = {"budget": 3_000, "random_state": 9, "decide": True}
    want = ae.compare(models, lambda i: y[i], "error_rate", **kw)
    got = ae.compare(pools, lambda i: y[i], "error_rate", **kw)
    assert want.stopped is not None and want.n_labels < 3_000
    _same_multiple(want, got)
    _same_stop(want, got)

    tempered = models[0] ** 2 / (models[0] ** 2).sum(axis=1, keepdims=True)  # same decisions
    alike = [models[0], tempered, models[2]]
    want = ae.compare(alike, lambda i: y[i], "error_rate", budget=300, random_state=2)
    got = ae.compare([da.from_array(p, chunks=(40_000, 2)) for p in alike], lambda i: y[i],
                     "error_rate", budget=300, random_state=2)  # fmt: skip
    _same_multiple(want, got)


# ------------------------------------------------- what an audit of the first version found
def test_frames_of_a_pair_are_paired_by_id_or_refused(client: Any, tmp_path: Path) -> None:
    """Two models' frames whose ids are in different orders would be paired row by row:
    refused, in compare and in Session.create (which would have misaligned them)."""
    from activeeval.session import Session

    a, b, y = _pair(20_000, 3)
    ids = np.arange(20_000) + 100
    fa = pd.DataFrame({"id": ids, "p_0": a[:, 0], "p_1": a[:, 1]})
    fb = pd.DataFrame({"id": ids, "p_0": b[:, 0], "p_1": b[:, 1]})
    shuffled = fb.sample(frac=1, random_state=0).reset_index(drop=True)
    pools = [dd.from_pandas(fa, npartitions=2), dd.from_pandas(shuffled, npartitions=2)]
    with pytest.raises(ShapeError, match=r"predictions\[1\]: its ids are not"):
        ae.compare(pools, lambda i: y[i], "error_rate", budget=100, random_state=0)
    with pytest.raises(ShapeError, match=r"pools\[1\]: its ids are not"):
        Session.create(tmp_path / "s.db", pools, "error_rate", 100)
    disjoint = fb.assign(id=ids + 10**6)
    with pytest.raises(ShapeError, match="its ids are not"):
        Session.create(tmp_path / "t.db", [pools[0], dd.from_pandas(disjoint, npartitions=3)],
                       "error_rate", 100)  # fmt: skip
    aligned = [pools[0], dd.from_pandas(fb, npartitions=3)]
    want = ae.compare([a, b], lambda i: y[i], "error_rate", budget=300, random_state=0)
    _same_comparison(want, ae.compare(aligned, lambda i: y[i], "error_rate", budget=300,
                                      random_state=0))  # fmt: skip


def test_where_q_star_has_nothing_to_aim_at_dask_falls_back_as_numpy(client: Any) -> None:
    """q* zero everywhere or undefined under the model: the NumPy path falls back to p (on
    the domain); the Dask path does the same, bit for bit (it refused these at first)."""
    a, _, y = _pair(20_000, 4)
    tempered = a**2 / (a**2).sum(axis=1, keepdims=True)  # the model tempered: its decisions
    for measure in ("error_rate", "f1"):  # the same decisions everywhere: Δ = 0
        want = ae.compare([a, tempered], lambda i: y[i], measure, budget=200, random_state=2)
        got = ae.compare([da.from_array(a, chunks=7_000), da.from_array(tempered, chunks=6_000)],
                         lambda i: y[i], measure, budget=200, random_state=2)  # fmt: skip
        _same_comparison(want, got)
    onehot = np.eye(2)[y]  # a model certain and right everywhere, no floor: q* is zero
    want = ae.evaluate(onehot, lambda i: y[i], "error_rate", budget=100, floor=0, random_state=1)
    got = ae.evaluate(da.from_array(onehot, chunks=5_000), lambda i: y[i], "error_rate",
                      budget=100, floor=0, random_state=1)  # fmt: skip
    _same(want, got)
    never = np.column_stack([np.ones(20_000), np.zeros(20_000)])  # class 1 impossible
    with pytest.warns(ae.UndefinedEstimateWarning):
        want = ae.evaluate(never, lambda i: y[i], "recall", budget=100, random_state=1)
    with pytest.warns(ae.UndefinedEstimateWarning):
        got = ae.evaluate(da.from_array(never, chunks=5_000), lambda i: y[i], "recall",
                          budget=100, random_state=1)  # fmt: skip
    _same(want, got)


def test_a_dask_session_above_one_chunk_is_the_numpy_store_for_ids_and_classes(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Digit-string ids stay strings (as Session.create keeps them), and unsorted class
    columns are stored in the classes' order, above one chunk as below."""
    from activeeval import io
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 700)
    monkeypatch.setattr(streaming_mod, "_in_memory", _refused)
    proba, _ = _binary(3_000, 16)
    ids = np.arange(3_000).astype(str)
    Session.create(tmp_path / "n.db", proba, "f1", 80, ids=ids, seed=2).close()
    s = Session.create(tmp_path / "d.db", da.from_array(proba, chunks=1_000), "f1", 80,
                       ids=ids, seed=2)  # fmt: skip
    assert all(isinstance(i, str) for i in s.next_batch(3))
    s.close()
    assert _store_tables(tmp_path / "d.db")["pool"] == _store_tables(tmp_path / "n.db")["pool"]
    # an array's classes as given: their order and type (they were sorted, and digit
    # strings came back as integers, so that the store's label space was not the user's)
    three = np.random.default_rng(2).dirichlet(np.ones(3), 3_000)
    for labels in (["b", "c", "a"], ["1", "2", "3"], [2, 0, 1]):
        Session.create(tmp_path / "ln.db", three, "error_rate", 60, labels=labels,
                       seed=3).close()  # fmt: skip
        with Session.create(tmp_path / "ld.db", da.from_array(three, chunks=1_000),
                            "error_rate", 60, labels=labels, seed=3) as s:  # fmt: skip
            assert s.predictives[0].labels.tolist() == labels
        assert _store_tables(tmp_path / "ld.db") == _store_tables(tmp_path / "ln.db"), labels
        for name in ("ln.db", "ld.db"):
            (tmp_path / name).unlink()
    frame = pd.DataFrame({"id": np.arange(3_000), "p_1": proba[:, 1], "p_0": proba[:, 0]})
    Session.create(tmp_path / "fn.db", proba, "f1", 80, seed=2).close()
    Session.create(tmp_path / "fd.db", dd.from_pandas(frame, npartitions=3), "f1", 80,
                   seed=2).close()  # fmt: skip
    assert _store_tables(tmp_path / "fd.db") == _store_tables(tmp_path / "fn.db")


def test_a_dask_sessions_arguments_are_checked_as_numpys(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from activeeval import io
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 700)
    proba, _ = _binary(3_000, 17)
    pool = da.from_array(proba, chunks=1_000)
    for ids in (np.arange(3_001), np.arange(2_999)):
        with pytest.raises(ShapeError, match="ids: expected 3000 pool ids"):
            Session.create(tmp_path / "a.db", pool, "f1", 50, ids=ids)
    with pytest.raises(ShapeError, match="labels: expected 2 labels"):
        Session.create(tmp_path / "b.db", pool, "f1", 50, labels=["x"])
    frame = pd.DataFrame({"id": np.arange(3_000), "p_0": proba[:, 0], "p_1": proba[:, 1]})
    with pytest.raises(ShapeError, match="labels: a Dask DataFrame pool gives"):
        Session.create(tmp_path / "c.db", dd.from_pandas(frame, npartitions=2), "f1", 50,
                       labels=[0, 1])  # fmt: skip
    with pytest.raises(ShapeError, match=r"with others \(\['label'\]\)"):
        Session.create(tmp_path / "d.db", dd.from_pandas(frame.assign(label=0), npartitions=2),
                       "f1", 50)  # fmt: skip
    with pytest.raises(UnknownOptionError, match="needs the whole pool in memory"):
        Session.create(tmp_path / "e.db", [pool, pool], "f1", 50, method="active_0")
    assert not any((tmp_path / f"{x}.db").exists() for x in "abcde")


def test_a_multi_class_average_session_of_a_dask_pool_is_the_numpy_store(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multi-class average's q* (the counts over the pool, then the influences at them)
    and its stored counts come a partition at a time: the store the pool in NumPy writes,
    byte for byte, for one model and a pair."""
    from activeeval import io
    from activeeval.session import Session

    monkeypatch.setattr(io, "STREAM_ROWS", 700)
    monkeypatch.setattr(streaming_mod, "_in_memory", _refused)
    rng = np.random.default_rng(21)
    a, b = (rng.dirichlet(np.full(3, 0.8), 3_000) for _ in range(2))
    for name, numpy_pools, dask_pools in [
        ("one", a, da.from_array(a, chunks=1_000)),
        ("pair", [a, b], [da.from_array(a, chunks=900), da.from_array(b, chunks=1_300)]),
    ]:
        Session.create(tmp_path / f"{name}_n.db", numpy_pools, "macro_f1", 60, seed=3).close()
        Session.create(tmp_path / f"{name}_d.db", dask_pools, "macro_f1", 60, seed=3).close()
        got = _store_tables(tmp_path / f"{name}_d.db")
        assert got == _store_tables(tmp_path / f"{name}_n.db") and len(got["summaries"]) == 1


def test_evaluates_options_and_messages_as_numpy(client: Any) -> None:
    proba, y = _binary(2_000, 18)
    pool = da.from_array(proba, chunks=700)
    with pytest.raises(UnknownOptionError, match="rule"):
        ae.evaluate(pool, lambda i: y[i], budget=20, rule="bogus")
    with pytest.raises(ShapeError, match="bandwidth"):
        ae.evaluate(pool, lambda i: y[i], budget=20, bandwidth=-1)
    kw = {"budget": 50, "estimator": "ASSISTED", "random_state": 0}
    _same(ae.evaluate(proba, lambda i: y[i], **kw), ae.evaluate(pool, lambda i: y[i], **kw))
    a, b, y2 = _pair(2_000, 19)
    pools = [da.from_array(a, chunks=700), da.from_array(b, chunks=900)]
    with pytest.raises(ae.ActiveEvalError, match="alpha: must lie strictly between 0 and 1"):
        ae.compare(pools, lambda i: y2[i], budget=20, alpha=7)
    _same_comparison(
        ae.compare([a, b], lambda i: y2[i], budget=60, method="active_uniC", random_state=0),
        ae.compare(pools, lambda i: y2[i], budget=60, method="active_uniC", random_state=0),
    )
    with pytest.raises(ShapeError, match="no prediction columns"):
        ae.evaluate(dd.from_pandas(pd.DataFrame({"id": np.arange(10)}), npartitions=1),
                    lambda i: y[i], budget=5)  # fmt: skip
    rng = np.random.default_rng(1)
    m = 600_000
    var = rng.uniform(0.5, 2.0, m)
    var[300_001] = -2.0
    frame = pd.DataFrame({"mean": rng.normal(size=m), "var": var})
    with pytest.raises(ae.ActiveEvalError, match="var: entry 300001 is -2"):
        ae.evaluate(dd.from_pandas(frame, npartitions=3), lambda i: i * 0.0, "mse", budget=5)


# ------------------------------------------------------------- stopping rules on Dask pools
def _same_stop(want: Any, got: Any) -> None:
    """The same stop: why, when, and the anytime interval and sequence reported."""
    assert got.stopped == want.stopped and got.interval == want.interval
    assert got.ci == want.ci
    assert got.confidence_sequence().equals(want.confidence_sequence())


@pytest.mark.parametrize(
    ("measure", "rule"),
    [
        ("error_rate", {"target_width": 0.06}),
        ("f1", {"claim": "f1 >= 0.3", "step": 20}),
        ("precision", {"target_width": 0.15, "rule": "fixed-width"}),
    ],
)
def test_a_stopping_rule_on_a_dask_pool_stops_as_on_numpy(
    client: Any, measure: str, rule: dict
) -> None:
    """The rule's looks from the pool summary and the drawn rows: the same stop at the same
    draw as the pool in NumPy, on one block and on three; 30,000 and 150,000 rows are pools
    of one chunk whose uniform test distribution does not sum to 1 exactly (a review found
    the sequences' pool means taken under the renormalized one, off in the last bit)."""
    sizes = ((30_000, 7_000), (150_000, 40_000), (2 * _chunks.ROWS + 75_000, 100_000))
    for m, chunks in sizes:
        proba, y = _binary(m, 31)
        pool = da.from_array(proba, chunks=(chunks, 2))
        kw = {"budget": 2_000, "random_state": 8, **rule}
        oracle = y.__getitem__
        want = ae.evaluate(proba, oracle, measure, **kw)
        got = ae.evaluate(pool, oracle, measure, **kw)
        assert want.stopped is not None and want.n_labels < 2_000  # the rule ends it early
        _same(want, got)
        _same_stop(want, got)


@pytest.mark.parametrize(
    ("measure", "rule"),
    [
        ("error_rate", {"decide": True}),
        ("f1", {"claim": "difference <= 0.05"}),
        ("precision", {"target_width": 0.12}),
    ],
)
def test_a_comparisons_stopping_rule_on_dask_pools_stops_as_on_numpy(
    client: Any, measure: str, rule: dict
) -> None:
    a, b, y = _pair(150_000, 32)
    pools = [da.from_array(a, chunks=(30_000, 2)), da.from_array(b, chunks=(45_000, 2))]
    kw = {"budget": 3_000, "random_state": 9, **rule}
    want = ae.compare([a, b], lambda i: y[i], measure, **kw)
    got = ae.compare(pools, lambda i: y[i], measure, **kw)
    assert want.stopped is not None and want.n_labels < 3_000
    _same_comparison(want, got)
    _same_stop(want, got)
    assert got.test(method="anytime") == want.test(method="anytime")


def test_a_dask_result_pickles_with_its_anytime_terms_and_step_needs_a_rule(client: Any) -> None:
    import pickle

    proba, y = _binary(100_000, 33)
    pool = da.from_array(proba, chunks=(25_000, 2))
    got = ae.evaluate(pool, lambda i: y[i], "error_rate", budget=400, random_state=2)
    back = pickle.loads(pickle.dumps(got))  # before its terms are computed: no cluster needed
    want = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=400, random_state=2)
    assert back.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")
    with pytest.raises(UnknownOptionError, match="step"):
        ae.evaluate(pool, lambda i: y[i], "error_rate", budget=400, step=10)


def test_looks_past_the_time_summarys_series_are_numpys(client: Any, monkeypatch: Any) -> None:
    """Past the time summary's series (tens of thousands of labels; here made to end at 40)
    the looks' and the estimate's t(n) take Newton's passes over the Dask pool's q: the same
    stop and interval as NumPy, and a comparison's result holds no Dask graph."""
    import pickle

    from activeeval.sampling import TimeSummary

    real = TimeSummary.covers
    monkeypatch.setattr(TimeSummary, "covers", lambda self, n: n < 40 and real(self, n))
    proba, y = _binary(30_000, 34)
    kw = {"budget": 2_000, "random_state": 3, "target_width": 0.08}
    want = ae.evaluate(proba, y.__getitem__, "error_rate", **kw)
    got = ae.evaluate(da.from_array(proba, chunks=(7_000, 2)), y.__getitem__, "error_rate", **kw)
    assert want.stopped is not None and want.n_labels > 40
    _same(want, got)
    _same_stop(want, got)
    a, b, y2 = _pair(30_000, 35)
    pools = [da.from_array(a, chunks=(7_000, 2)), da.from_array(b, chunks=(9_000, 2))]
    kw2 = {"budget": 1_500, "random_state": 3, "decide": True}
    want2 = ae.compare([a, b], y2.__getitem__, "error_rate", **kw2)
    got2 = ae.compare(pools, y2.__getitem__, "error_rate", **kw2)
    _same_comparison(want2, got2)
    _same_stop(want2, got2)
    assert np.array_equal(got2.model_intervals(), want2.model_intervals())
    assert b"dask" not in pickle.dumps(got2) and b"distributed" not in pickle.dumps(got2)


# ------------------------------------------------------------- the thesis's estimator
@pytest.mark.parametrize(
    ("measure", "rule"),
    [("error_rate", {}), ("f1", {}), ("precision", {"target_width": 0.15}),
     ("error_rate", {"claim": "error_rate <= 0.4", "step": 20}),
     ("f1", {"target_width": 0.15, "rule": "fixed-width"})],  # its looks: fixed-n intervals
)  # fmt: skip
def test_the_thesis_estimator_on_a_dask_pool_is_numpys(client: Any, measure: str, rule: dict):
    """``estimator="snis"`` (eq. 3.31) from the drawn rows: NumPy's estimate, interval and
    anytime interval, bit for bit; under a rule NumPy's looks (their σ₀ the thesis's,
    computed once on the summary's subsample), on one block and on three."""
    for m, chunks in ((100_000, 13_000), (2 * _chunks.ROWS + 75_000, 100_000)):
        proba, y = _binary(m, 33)
        pool = da.from_array(proba, chunks=(chunks, 2))
        kw = {"budget": 2_000 if rule else 300, "random_state": 12, "estimator": "snis", **rule}
        want = ae.evaluate(proba, y.__getitem__, measure, **kw)
        got = ae.evaluate(pool, y.__getitem__, measure, **kw)
        assert want.interval == (rule.get("rule", "anytime") if rule else "wald")
        assert got.pool_q is None
        _same(want, got)
        assert got.confidence_interval(method="anytime") == want.confidence_interval(
            method="anytime"
        )
        if rule:
            assert want.stopped is not None and want.n_labels < 2_000  # the rule ends it early
            _same_stop(want, got)


@pytest.mark.parametrize(
    ("k", "rule"),
    [(2, {}), (2, {"decide": True}), (2, {"target_width": 0.05, "rule": "fixed-width"}), (3, {})],
)
def test_the_thesis_estimator_compares_dask_pools_as_numpy(client: Any, k: int, rule: dict):
    """A comparison by the thesis's estimator (the paired test of two, the multiple
    comparison of three) on Dask pools: NumPy's, bit for bit, with its anytime interval and,
    under ``decide``, its stop; labeled whole, the exact values."""
    if k == 2:
        a, b, y = _pair(150_000, 34)
        models = [a, b]
    else:
        models, y = _three(150_000, 34)
    pools = [da.from_array(p, chunks=(40_000, 2)) for p in models]
    kw = {"budget": 3_000 if rule else 400, "random_state": 13, "estimator": "snis", **rule}
    want = ae.compare(models, y.__getitem__, "error_rate", **kw)
    got = ae.compare(pools, y.__getitem__, "error_rate", **kw)
    (_same_comparison if k == 2 else _same_multiple)(want, got)
    assert got.model_scores is None and want.model_scores is None  # no tempered curves
    assert got.confidence_interval(method="anytime") == want.confidence_interval(method="anytime")
    if rule:
        assert want.stopped is not None and want.n_labels < 3_000
        _same_stop(want, got)
    small, y = _three(200, 35)
    kw = {"budget": 200, "random_state": 1, "max_draws": 100_000, "estimator": "snis"}
    want = ae.compare(small[:k], y.__getitem__, "f1", **kw)
    got = ae.compare([da.from_array(p, chunks=70) for p in small[:k]], y.__getitem__, "f1", **kw)
    assert got.comparison.census and got.stderr == 0.0
    (_same_comparison if k == 2 else _same_multiple)(want, got)
