"""Revising a running session (issue 31, Deliver 1): ``Session.extend(budget)`` continues the
same draws; ``Session.add_model`` re-plans q for comparing every model from the next block of
draws on, and the reports weigh every draw by p over the mixture of the phases' q. A store of
an earlier release gains a model and a budget and keeps its estimates; the CLI does both."""

from __future__ import annotations

import math
import shutil
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import activeeval as ae
from activeeval.cli import main
from activeeval.errors import BudgetError, LabelSpaceError, ShapeError, UnknownOptionError
from activeeval.estimators.inference import estimate
from activeeval.sampling import comparison_distribution, optimal_distribution

M = 600
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stores"


def _models(seed: int = 0):
    rng = np.random.default_rng(seed)
    truth = rng.beta(0.7, 1.6, size=M)
    y = (rng.uniform(size=M) < truth).astype(int)
    v1 = np.clip(truth + rng.normal(0, 0.15, M), 0.01, 0.99)
    v2 = np.clip(truth + rng.normal(0, 0.08, M), 0.01, 0.99)
    return y, np.c_[1 - v1, v1], np.c_[1 - v2, v2]


def _label_all(s: ae.Session, y: np.ndarray, k: int = 1000) -> None:
    ids = s.next_batch(k)
    if ids:
        s.record(dict(zip(ids, y[np.asarray(ids)].tolist(), strict=True)))


def test_extend_continues_the_same_draws(tmp_path: Path) -> None:
    y, p1, _ = _models()
    a = ae.Session.create(tmp_path / "a.db", p1, "f1", 20, seed=4)
    _label_all(a, y)
    assert a.progress().finished and a.progress().n_labels == 20
    a.extend(35)
    _label_all(a, y)
    b = ae.Session.create(tmp_path / "b.db", p1, "f1", 35, seed=4)
    _label_all(b, y)
    ea, eb = a.estimate(), b.estimate()
    np.testing.assert_array_equal(ea.indices, eb.indices)
    assert (ea.estimate, ea.stderr, ea.ci) == (eb.estimate, eb.stderr, eb.ci)
    with pytest.raises(BudgetError, match=r"^budget: the session's budget is already 35"):
        a.extend(30)


def test_add_model_keeps_the_estimates_and_weighs_draws_by_the_phases_mixture(tmp_path) -> None:
    y, p1, p2 = _models(1)
    s = ae.Session.create(tmp_path / "s.db", p1, "error_rate", 40, seed=2)
    _label_all(s, y)
    before = s.estimate()
    s.add_model(p2, name="v2")
    assert s.plan.kind == "comparison" and s.plan.model_names == ("model 0", "v2")
    after = s.estimate(model=0)
    assert (after.estimate, after.stderr, after.ci) == (before.estimate, before.stderr, before.ci)
    s.extend(80)
    _label_all(s, y)
    res = s.estimate(model=1, estimator="snis")
    # an independent computation: the phases from the draws table, the mixture by hand
    q0 = optimal_distribution(p1, "error_rate")
    q1 = comparison_distribution([p1, p2], "error_rate")
    seq_q = pd.read_sql("SELECT seq, q FROM draws ORDER BY seq", _conn(s))
    first = int(pd.read_sql("SELECT first_seq FROM phases", _conn(s))["first_seq"].iloc[0])
    n = res.n_draws
    n0, n1 = min(first, n), max(0, n - first)
    assert 0 < first < n  # draws of both phases in the prefix
    np.testing.assert_allclose(seq_q["q"].to_numpy()[first:n], q1[res.indices[first:]])
    mixture = (n0 * q0 + n1 * q1) / n
    np.testing.assert_allclose(res.pool_q, mixture, rtol=1e-12)
    labels = y[res.indices]
    by_hand = estimate("error_rate", p2[res.indices], labels, mixture[res.indices])
    assert res.estimate == pytest.approx(by_hand.estimate, rel=1e-12)
    assert res.stderr == pytest.approx(by_hand.stderr, rel=1e-12)
    cmp = s.compare()
    assert math.isfinite(cmp.difference) and cmp.n_labels == 80


def _conn(s: ae.Session) -> sqlite3.Connection:
    """A connection of the test's own to the store's tables."""
    return sqlite3.connect(s.path)


def test_a_session_with_a_new_model_estimates_it_without_bias(tmp_path: Path) -> None:
    y, p1, p2 = _models(2)
    f2 = p2.argmax(axis=1)
    truth = float(np.mean(f2 != y))
    reps, est, hits = 120, [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            s = ae.Session.create(tmp_path / f"s{r}.db", p1, "f1", 40, seed=r)
            _label_all(s, y)
            s.add_model(p2)
            s.extend(70)
            _label_all(s, y)
            res = s.estimate(model=1)
            assert res.measure == "f1"
            est.append(res.estimate)
            truth_f1 = 2 * np.sum((f2 == 1) & (y == 1)) / (np.sum(f2 == 1) + np.sum(y == 1))
            hits += res.ci[0] <= truth_f1 <= res.ci[1]
            s.close()
    e = np.array(est)
    assert abs(e.mean() - truth_f1) < 3 * e.std(ddof=1) / math.sqrt(reps), (e.mean(), truth_f1)
    assert hits / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert 0 < truth < 1


@pytest.mark.parametrize("name", ["evaluation_f1_v2.db", "comparison_error_rate_v2.db"])
def test_an_earlier_release_s_store_gains_a_model_and_a_budget(name: str, tmp_path) -> None:
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    s = ae.Session.open(path)
    assert s.plan.schema_version == 8  # migrated
    k, m = s.plan.n_models, s.plan.pool_size
    before = [s.estimate(model=j) for j in range(k)]
    p = np.random.default_rng(0).uniform(0.05, 0.95, size=m)
    s.add_model(np.c_[1 - p, p], name="new")
    assert s.plan.n_models == k + 1
    for j, b in enumerate(before):  # the labels recorded keep their estimates, bit for bit
        a = s.estimate(model=j)
        assert (a.estimate, a.stderr, a.ci) == (b.estimate, b.stderr, b.ci)
    s.extend(s.plan.budget + 10)
    assert len(s.next_batch(5)) == 5
    budget = s.plan.budget
    s.close()
    reopened = ae.Session.open(path)  # the fingerprint covers the new model
    assert reopened.plan.budget == budget and reopened.plan.model_names[-1] == "new"
    reopened.close()


def test_what_add_model_cannot_take_is_refused(tmp_path: Path) -> None:
    _, p1, p2 = _models(3)
    s = ae.Session.create(tmp_path / "s.db", p1, "error_rate", 20, seed=0)
    with pytest.raises(ShapeError, match=r"^predictions: cover 100 instances"):
        s.add_model(p2[:100])
    with pytest.raises(LabelSpaceError, match=r"^predictions"):
        s.add_model(ae.Categorical(p2, labels=np.array(["a", "b"])))
    s.add_model(p2, name="v2")
    with pytest.raises(ShapeError, match=r"^name: the session already has a model named 'v2'"):
        s.add_model(p2, name="v2")
    ruled = ae.Session.create(tmp_path / "r.db", p1, "error_rate", 20, target_width=0.1)
    with pytest.raises(UnknownOptionError, match=r"^add_model: this session has a stopping rule"):
        ruled.add_model(p2)
    macro = ae.Session.create(tmp_path / "m.db", [p1, p2], "macro_f1", 20)
    with pytest.raises(ShapeError, match=r"^add_model: macro_f1 compares exactly two"):
        macro.add_model(p1)


def test_the_cli_extends_and_adds_a_model(tmp_path: Path) -> None:
    _, p1, p2 = _models(4)
    ids = [f"r{i}" for i in range(M)]
    for name, p in (("a.csv", p1), ("b.csv", p2)):
        frame = pd.DataFrame({"id": ids, "p_0": p[:, 0], "p_1": p[:, 1]})
        (frame.iloc[::-1] if name == "b.csv" else frame).to_csv(tmp_path / name, index=False)
    store = str(tmp_path / "s.db")
    run = CliRunner().invoke
    assert run(main, ["session", "init", store, "--pool", str(tmp_path / "a.csv"),
                      "--measure", "error_rate", "--budget", "20"]).exit_code == 0  # fmt: skip
    out = run(main, ["session", "add-model", store, "--pool", str(tmp_path / "b.csv")])
    assert out.exit_code == 0, out.output
    assert "added 'b'" in out.output
    out = run(main, ["session", "extend", store, "--budget", "30"])
    assert out.exit_code == 0 and "-> 30 labels" in out.output, out.output
    s = ae.Session.open(store)
    np.testing.assert_allclose(s.predictives[1].proba, p2)  # aligned on the session's ids
    assert s.plan.budget == 30
    s.close()
    out = run(main, ["session", "extend", store, "--budget", "10"])
    assert out.exit_code != 0 and "--budget: the session's budget is already 30" in out.output


def test_the_cli_refuses_an_added_model_s_other_costs(tmp_path: Path) -> None:
    # An instance has one cost: a new model's file may repeat the session's, not change them
    _, p1, p2 = _models(4)
    ids = [f"r{i}" for i in range(M)]
    costs = 1.0 + np.arange(M) % 3
    run = CliRunner().invoke
    for name, cost in (("a.csv", costs), ("same.csv", costs), ("other.csv", costs + 1)):
        frame = pd.DataFrame({"id": ids, "p_0": p2[:, 0], "p_1": p2[:, 1], "cost": cost})
        frame.iloc[::-1].to_csv(tmp_path / name, index=False)
    pd.DataFrame({"id": ids, "p_0": p1[:, 0], "p_1": p1[:, 1]}).to_csv(
        tmp_path / "plain.csv", index=False
    )
    for base, other, says in (
        ("a.csv", "other.csv", "column 'cost' differs from the session's at id 'r"),
        ("plain.csv", "a.csv", "the session has no labeling costs"),
    ):
        store = str(tmp_path / f"{base}.db")
        out = run(main, ["session", "init", store, "--pool", str(tmp_path / base),
                         "--measure", "error_rate", "--budget", "20"])  # fmt: skip
        assert out.exit_code == 0, out.output
        out = run(main, ["session", "add-model", store, "--pool", str(tmp_path / other)])
        assert out.exit_code == 2 and says in out.output, out.output
        assert ae.Session.open(store).plan.n_models == 1
    store = str(tmp_path / "a.csv.db")
    out = run(main, ["session", "add-model", store, "--pool", str(tmp_path / "same.csv")])
    assert out.exit_code == 0, out.output


def test_a_new_phase_starts_at_the_cursor_and_refuses_anytime_intervals(tmp_path) -> None:
    y, p1, p2 = _models(5)
    s = ae.Session.create(tmp_path / "s.db", p1, "error_rate", 30, seed=1)
    _label_all(s, y)
    cursor = s.progress().n_draws
    s.add_model(p2)
    assert s.phases[1][0] == cursor  # the new q takes effect at the next draw
    s.extend(60)
    _label_all(s, y)
    q1 = comparison_distribution([p1, p2], "error_rate")
    seq_q = pd.read_sql("SELECT seq, position, q FROM draws WHERE seq >= ?", _conn(s),
                        params=(cursor,))  # fmt: skip
    np.testing.assert_allclose(seq_q["q"], q1[seq_q["position"]])
    res = s.estimate(model=1)
    with pytest.raises(ShapeError):
        res.confidence_interval(method="anytime")
    out = CliRunner().invoke(main, ["session", "status", str(s.path)])
    assert out.exit_code == 0, out.output


def test_the_cli_says_when_an_extended_session_s_rule_is_met(tmp_path: Path) -> None:
    y, p1, _ = _models(4)
    s = ae.Session.create(tmp_path / "s.db", p1, "error_rate", 40, seed=0, target_width=0.9)
    while (ids := s.next_batch(10)) and s.stopped is None:
        s.record({i: int(y[i]) for i in ids})
    assert s.stopped is not None
    s.close()
    out = CliRunner().invoke(main, ["session", "extend", str(tmp_path / "s.db"), "--budget", "80"])
    assert out.exit_code == 0, out.output
    assert "stopping rule is met (target width 0.9 reached" in out.output
    assert "next: activeeval session next" not in out.output
