"""A session's estimate from its pool summary (issue 30, ``docs/design/lean-status.md``):
q's time summary against the whole-pool Newton iteration and its defining equation, the
summary-based estimate bit for bit against the pool's arrays, sessions that report without
reading their pool, and what still reads it (the anytime terms, reuse, the re-plan)."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.metrics import accuracy_score, f1_score

import activeeval as ae
from activeeval._chunks import ROWS, uniform
from activeeval.cli import main
from activeeval.errors import ShapeError, UnknownOptionError
from activeeval.estimators.report import pool_for, summary_static_estimate
from activeeval.estimators.summary import summarize
from activeeval.estimators.tempered import GRID
from activeeval.measures import get_measure
from activeeval.methods import ESTIMATORS
from activeeval.predictive import Categorical, Gaussian
from activeeval.sampling import TimeSummary, _successive_time, _time_to_reach, draw
from activeeval.sampling import optimal_distribution as q_star
from activeeval.session import report as session_report
from activeeval.session import stored as stored_mod
from activeeval.session.summaries import VERSION, _from_bytes, _to_bytes


def _q(kind: str, m: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "beta":
        q = rng.beta(0.5, 2.0, m)
    elif kind == "flat":
        q = np.ones(m)
    elif kind == "zeros":  # q vanishes on about 70% of the pool
        q = rng.random(m) * (rng.random(m) < 0.3)
    else:  # heavy-tailed
        q = rng.pareto(1.5, m) + 1e-3
    return q / q.sum()


def _whole_time(q: np.ndarray, n: int) -> float:
    """t(n) by Newton's iteration over the whole q, as before the summary."""
    support = int(np.count_nonzero(q > 0))
    if n >= support:
        return math.inf
    return _time_to_reach(q, float(n), positive=support < q.shape[0])


# ------------------------------------------------------------------------ q's time summary
@pytest.mark.parametrize("kind", ["beta", "flat", "zeros", "heavy"])
def test_time_of_a_pool_of_one_chunk_is_the_whole_pool_iteration_bit_for_bit(kind) -> None:
    q = _q(kind, 5000)
    for n in (0, 1, 7, 300, 1400, 4999, 5000):
        assert _successive_time(q, n) == _whole_time(q, n)


@pytest.mark.parametrize("kind", ["beta", "flat", "zeros", "heavy"])
def test_time_of_a_larger_pool_solves_the_same_equation_to_rounding(kind) -> None:
    q = _q(kind, ROWS + 40_000, seed=1)
    s = TimeSummary.of(q)
    assert s.tau > 0 and s.top.shape[0] <= 1 << 16
    assert np.all(s.top > s.tau) and int((q > s.tau).sum()) == s.top.shape[0]
    for n in (1, 50, 1000, 20_000, 40_000):  # within the series' range (0.63·TOP_Q at least)
        assert s.covers(n)
        t = _successive_time(q, n)
        assert t == pytest.approx(_whole_time(q, n), rel=1e-13)
        # the defining equation Σ (1 − e^(−q t)) = n, summed independently (math.fsum)
        assert math.fsum(-np.expm1(-q * t)) == pytest.approx(n, rel=1e-12)


def test_time_of_tiny_q_beyond_the_series_is_not_nan() -> None:
    # 65,536 large q and the rest about 1e-20: at t = 1/τ the series' terms overflow; the
    # range check must say "beyond", not pass a NaN through (a review found t = NaN)
    m = ROWS + 10_000
    q = np.full(m, 1e-20)
    q[: 1 << 16] = 1.0
    q /= q.sum()
    n = (1 << 16) + 64
    s = TimeSummary.of(q)
    assert not s.covers(n)
    t = s.time(n, q)
    assert math.isfinite(t) and t == _whole_time(q, n)


def test_time_beyond_the_series_falls_back_to_q_and_needs_it() -> None:
    q = _q("flat", ROWS + 40_000)  # τ = 1/m: the series holds to t = m, n ≈ 0.63 m
    s = TimeSummary.of(q)
    n = int(0.8 * q.shape[0])
    assert not s.covers(n) and s.covers(int(0.6 * q.shape[0]))
    assert s.time(n, q) == _whole_time(q, n)
    with pytest.raises(ValueError, match="beyond the series"):
        s.time(n)
    assert s.time(q.shape[0]) == math.inf and s.time(0) == 0.0


# ------------------------------------------------------------------ the summary's estimate
def _pool(kind: str, m: int, seed: int = 0, decision: bool = False):
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        mu, var = rng.normal(size=m), rng.gamma(2.0, 0.5, m)
        return Gaussian(mu, var), mu + rng.normal(size=m) * np.sqrt(var) * 1.5
    p1 = rng.beta(1.0, 6.0, m)
    pred = Categorical(np.column_stack([1 - p1, p1]))
    if decision:  # a deployed threshold apart from the probabilities
        pred = pred.with_decision((p1 > 0.3).astype(int))
    return pred, (rng.random(m) < np.clip(1.3 * p1, 0, 1)).astype(int)


CASES = [
    ("error_rate", "cat", False, 300),
    ("f1", "cat", False, 300),
    ("recall", "cat", False, 300),
    ("precision", "cat", True, 300),  # the domain is the predicted positives
    ("mse", "gauss", False, 300),
    ("mae", "gauss", False, 300),
    ("precision", "cat", False, 3000),  # every predicted positive labeled: the census
]


@pytest.mark.parametrize("m", [2000, ROWS + 5000])
@pytest.mark.parametrize(("measure", "kind", "decision", "n"), CASES)
def test_summary_estimate_is_the_pools_bit_for_bit(m, measure, kind, decision, n) -> None:
    pred, y = _pool(kind, m, decision=decision)
    meas = get_measure(measure).bind(pred)
    q = q_star(pred, meas)
    d = draw(q, n, random_state=1)
    pool = pool_for([pred], meas, uniform(m))
    want, how = pool.estimate(pool.reporting(q, 0.95, "assisted"), 0, d, y[d])
    got, how2 = summary_static_estimate(meas, pred, summarize(meas, pred, uniform(m), q), d,
                                        y[d], q[d], 0.95)  # fmt: skip
    assert how2 == how
    assert (got.estimate, got.stderr, got.n_labels) == (want.estimate, want.stderr, want.n_labels)
    assert got.confidence_interval(0.9, method=how) == want.confidence_interval(0.9, method=how)
    if how == "tempered":
        for a, b in zip(vars(got.score).values(), vars(want.score).values(), strict=True):
            np.testing.assert_array_equal(a, b)


def test_summary_round_trips_and_an_unknown_layout_is_ignored() -> None:
    pred, _ = _pool("cat", 3000, decision=True)
    meas = get_measure("precision").bind(pred)
    q = q_star(pred, meas)
    s = summarize(meas, pred, uniform(3000), q)
    raw = ([pred.proba[s.keep]], [pred.predicted_index[s.keep].astype(float)])
    back = _from_bytes(_to_bytes(s, *raw), "categorical", (0, 1))
    for k in ("size", "domain_all", "mass", "mu_num", "mu_den", "n_needed", "n_domain",
              "missing", "curve_family"):  # fmt: skip
        assert getattr(back, k) == getattr(s, k)
    np.testing.assert_array_equal(back.sample.proba, s.sample.proba)
    np.testing.assert_array_equal(back.sample.point_prediction(), s.sample.point_prediction())
    np.testing.assert_array_equal(back.time.top, s.time.top)
    with np.load(io.BytesIO(_to_bytes(s, *raw))) as z:
        other = {k: z[k] for k in z.files}
    other["version"] = np.int64(VERSION + 1)
    out = io.BytesIO()
    np.savez(out, **other)
    assert _from_bytes(out.getvalue(), "categorical", (0, 1)) is None


def test_a_gaussian_with_a_zero_variance_has_no_tempered_family() -> None:
    pred, _ = _pool("gauss", 400)
    var = pred.var.copy()
    var[7] = 0.0
    pred = Gaussian(pred.mean, var)
    meas = get_measure("mse").bind(pred)
    assert not summarize(meas, pred, uniform(400), q_star(pred, meas)).curve_family


# ---------------------------------------------------------------------------- sessions
def _session(tmp_path: Path, measure="f1", n=400, **kw):
    pred, y = _pool(kw.pop("kind", "cat"), kw.pop("m", 3000), decision=kw.pop("decision", False))
    s = ae.Session.create(tmp_path / "s.db", pred, measure, budget=2 * n, seed=3, **kw)
    ids = s.next_batch(n)
    s.record({i: y[i] for i in ids})
    return s, pred, y


def _whole(s: ae.Session):
    st = s._stored
    idx, dq, y = session_report._data(s._store, st)
    return session_report._estimate_on(st, idx, dq, y, 0, st.plan.estimator)


@pytest.mark.parametrize(
    "kw",
    [{}, {"measure": "precision", "decision": True}, {"measure": "mse", "kind": "gauss"},
     {"measure": "error_rate", "costs": np.linspace(1.0, 3.0, 3000)}],
)  # fmt: skip
def test_a_session_reports_from_its_summary_what_its_pool_gives(tmp_path, kw) -> None:
    s, *_ = _session(tmp_path, **kw)
    assert session_report._lean(s._stored, 0, None) is not None
    lean, whole = s.estimate(), _whole(s)
    assert (lean.estimate, lean.stderr, lean.ci, lean.interval, lean.cost) == (
        whole.estimate, whole.stderr, whole.ci, whole.interval, whole.cost
    )  # fmt: skip
    np.testing.assert_array_equal(lean.indices, whole.indices)
    np.testing.assert_array_equal(lean.q, whole.q)


def test_a_session_equals_evaluate_through_its_summary(tmp_path) -> None:
    pred, y = _pool("cat", 3000)
    s = ae.Session.create(tmp_path / "s.db", pred, "f1", budget=500, seed=11)
    while ids := s.next_batch(50):
        s.record({i: y[i] for i in ids})
    res = ae.evaluate(pred, lambda i: y[i], "f1", budget=500, random_state=11)
    got = s.estimate()
    assert session_report._lean(s._stored, 0, None) is not None
    assert (got.estimate, got.stderr, got.ci) == (res.estimate, res.stderr, res.ci)


def test_status_reads_no_whole_pool_column(tmp_path, monkeypatch) -> None:
    s, *_ = _session(tmp_path)
    want = s.estimate()
    s.close()

    def refuse(*a, **k):
        raise AssertionError("the whole pool was read")

    monkeypatch.setattr(stored_mod, "_load_pool", refuse)
    with ae.Session.open(tmp_path / "s.db") as s2:
        got = s2.estimate()
    assert (got.estimate, got.ci) == (want.estimate, want.ci)
    import activeeval.cli as cli

    monkeypatch.setattr(cli, "_REPLAN_ROWS", 1000)  # as on a pool above one chunk
    for extra in ([], ["--json"]):
        out = CliRunner().invoke(main, ["session", "status", str(tmp_path / "s.db"), *extra])
        assert out.exit_code == 0, out.output
    # what needs the pool still reads it, here refused: the proof that the above did not
    with ae.Session.open(tmp_path / "s.db") as s3, pytest.raises(AssertionError):
        s3.estimate(features=np.random.default_rng(0).random((3000, 2)))


def test_the_anytime_interval_of_a_summary_estimate_reads_the_pool_then(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    lean, whole = s.estimate(), _whole(s)
    assert lean.confidence_interval(method="anytime") == whole.confidence_interval(method="anytime")


def test_reuse_of_a_session_read_from_its_summary(tmp_path) -> None:
    s, pred, y = _session(tmp_path, measure="error_rate")
    res = ae.evaluate(pred, lambda i: y[i], "error_rate", budget=100, reuse=s, random_state=0)
    whole = _whole(s)
    again = ae.evaluate(pred, lambda i: y[i], "error_rate", budget=100, reuse=whole,
                        random_state=0)  # fmt: skip
    assert (res.estimate, res.ci) == (again.estimate, again.ci)
    with pytest.raises(UnknownOptionError, match="pass the Session itself"):
        ae.evaluate(pred, lambda i: y[i], "error_rate", budget=100, reuse=s.estimate())


def test_a_migrated_store_has_no_summary_and_reads_its_pool(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    want = s.estimate()
    s.close()
    with sqlite3.connect(tmp_path / "s.db") as c:
        c.execute("DELETE FROM summaries")
    with ae.Session.open(tmp_path / "s.db") as s2:
        assert session_report._lean(s2._stored, 0, None) is None
        got = s2.estimate()
    assert (got.estimate, got.ci) == (want.estimate, want.ci)


def test_the_summary_a_store_keeps_whichever_estimator(tmp_path) -> None:
    """The thesis's estimator gets the pool summary as the default does (three models: their
    summary, stored as a comparison's); a multi-class average stores only its counts."""
    from activeeval.estimators.summary import PairSummary
    from activeeval.session.summaries import ClassSummary

    pred, _ = _pool("cat", 3000)
    other = Categorical(np.clip(pred.proba + 0.05, 0, None) / 1.1)
    space = tuple(pred.labels.tolist())
    for name, measure, pools in [("snis", "f1", [pred, other, other]), ("macro", "macro_f1", pred)]:
        s = ae.Session.create(tmp_path / f"{name}.db", pools, measure, budget=100,
                              estimator="snis")  # fmt: skip
        with sqlite3.connect(tmp_path / f"{name}.db") as c:
            (blob,) = [b for (b,) in c.execute("SELECT data FROM summaries")]
        got = _from_bytes(blob, "categorical", space)
        if name == "snis":
            assert isinstance(got, PairSummary) and len(got.samples) == 3
        else:
            assert isinstance(got, ClassSummary) and got.size == 3000 and len(got.pools) == 1
        s.close()


def test_status_above_one_chunk_replans_only_when_asked(tmp_path, monkeypatch) -> None:
    import activeeval.cli as cli

    s, *_ = _session(tmp_path)
    s.close()
    monkeypatch.setattr(cli, "_REPLAN_ROWS", 1000)  # the 3,000-instance pool counts as large
    path = str(tmp_path / "s.db")
    out = CliRunner().invoke(main, ["session", "status", path])
    assert out.exit_code == 0 and "--target-width W re-plans" in out.output
    assert "re-planned from" not in out.output
    out = CliRunner().invoke(main, ["session", "status", path, "--target-width", "0.05"])
    assert out.exit_code == 0 and "re-planned from 400 labels" in out.output
    monkeypatch.setattr(cli, "_REPLAN_ROWS", 1 << 18)
    out = CliRunner().invoke(main, ["session", "status", path])
    assert "re-planned from" in out.output and "--target-width W" not in out.output


def _drop_terms_mu(path: Path) -> None:
    """Store the summary as the release before ``terms_mu`` did (the same layout version,
    without the sequences' pool means)."""
    conn = sqlite3.connect(path)
    (blob,) = conn.execute("SELECT data FROM summaries WHERE model = 0").fetchone()
    with np.load(io.BytesIO(blob)) as z:
        arrays = {k: z[k] for k in z.files if k != "terms_mu"}
    out = io.BytesIO()
    np.savez(out, **arrays)
    with conn:
        conn.execute("UPDATE summaries SET data = ? WHERE model = 0", (out.getvalue(),))
    conn.close()


def test_a_summary_estimate_pickles_and_needs_no_store_for_its_anytime_interval(tmp_path) -> None:
    import pickle

    s, *_ = _session(tmp_path)
    lean, whole = s.estimate(), _whole(s)
    s.close()
    blob = pickle.dumps(lean)  # before its anytime terms are computed
    (tmp_path / "s.db").unlink()  # the summary and the labeled rows are all it needs
    back = pickle.loads(blob)
    want = whole.confidence_interval(method="anytime")
    assert back.confidence_interval(method="anytime") == want
    assert lean.confidence_interval(method="anytime") == want
    assert lean.confidence_sequence().equals(whole.confidence_sequence())


def test_an_older_summary_estimate_reads_its_own_pool_after_close(tmp_path) -> None:
    import pickle

    s, *_ = _session(tmp_path)
    s.close()
    _drop_terms_mu(tmp_path / "s.db")  # a summary stored before it kept them
    with ae.Session.open(tmp_path / "s.db") as s:
        assert s._stored.plan and session_report._lean(s._stored, 0, None) is not None
        lean, whole = s.estimate(), _whole(s)
    assert isinstance(lean.anytime_terms, session_report._PoolTerms)
    blob = pickle.dumps(lean)
    back = pickle.loads(blob)
    want = whole.confidence_interval(method="anytime")
    assert back.confidence_interval(method="anytime") == want  # the store opened again
    assert lean.confidence_interval(method="anytime") == want
    other, *_ = _session(tmp_path / "other")
    other.close()
    (tmp_path / "s.db").unlink()
    (tmp_path / "other" / "s.db").rename(tmp_path / "s.db")
    stranger = pickle.loads(blob)
    with pytest.raises(ae.errors.StoreError, match="another session's store"):
        stranger.confidence_interval(method="anytime")


# ------------------------------------------------------- a stopping rule from the summary
def _no_pool(monkeypatch) -> None:
    """Make any read of a session's whole pool fail."""

    def refuse(*args, **kwargs):
        raise AssertionError("the session read its whole pool")

    monkeypatch.setattr(stored_mod, "_load_pool", refuse)


@pytest.mark.parametrize(
    ("measure", "kw", "rule"),
    [
        ("error_rate", {}, {"target_width": 0.08}),
        ("f1", {}, {"claim": "f1 >= 0.9"}),
        ("precision", {"decision": True}, {"target_width": 0.2}),
        ("mse", {"kind": "gauss"}, {"target_width": 0.5}),
    ],
)
def test_a_stopping_rule_session_looks_from_its_summary_as_from_its_pool(
    tmp_path, monkeypatch, measure, kw, rule
) -> None:
    pred, y = _pool(kw.pop("kind", "cat"), 3000, decision=kw.pop("decision", False))
    path = tmp_path / "s.db"
    with ae.Session.create(path, pred, measure, budget=1500, seed=2, **rule) as s:
        while ids := s.next_batch(25):
            s.record({i: y[i] for i in ids})
        assert session_report._lean(s._stored, 0, None) is not None
        whole = _whole(s)  # the pool's path, rule and all
        stopped = s.stopped
    assert whole.interval == "anytime" and whole.stopped == stopped
    lean = _looks_without_the_pool(monkeypatch, path, stopped, ae.Session.estimate)
    assert lean.stopped == whole.stopped and lean.interval == "anytime"
    assert lean.estimate == whole.estimate and lean.ci == whole.ci
    assert lean.confidence_sequence().equals(whole.confidence_sequence())


def _looks_without_the_pool(monkeypatch, path: Path, stopped: Any, report: Any) -> Any:
    """The session at ``path`` reported (``report``: Session.estimate or compare) with every
    read of its pool refused: its rule's ``stopped`` is the pool's, nothing more is handed
    out once met, progress agrees, and ``session status --json`` runs; the result, with its
    anytime terms computed while the pool is refused."""
    import activeeval.cli as cli

    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(path) as s:
            res = report(s)
            assert s.stopped == stopped
            if stopped is not None:
                assert s.next_batch(5) == []
            prog = s.progress()
            res.anytime_terms()  # the sequences' terms from the summary too
        assert prog.finished == (stopped is not None or prog.complete)
        mp.setattr(cli, "_REPLAN_ROWS", 1000)  # as on a pool above one chunk: no re-plan
        out = CliRunner().invoke(main, ["session", "status", str(path), "--json"])
    assert out.exit_code == 0, out.output
    assert f'"interval": "{res.interval}"' in out.output and '"stopping"' in out.output
    return res


def _older_rule_session(path: Path, pred: Any, y: Any, seed: int, n: int) -> Any:
    """A one-model error-rate session with a target width at ``path``, ``n`` labels
    recorded, its summary then stored as before ``terms_mu`` (:func:`_drop_terms_mu`); the
    estimate it gave before."""
    with ae.Session.create(path, pred, "error_rate", budget=600, seed=seed,
                           target_width=0.1) as s:  # fmt: skip
        ids = s.next_batch(n)
        s.record({i: y[i] for i in ids})
        want = s.estimate()
    _drop_terms_mu(path)
    return want


def test_a_rule_session_with_an_older_summary_looks_at_its_pool(tmp_path) -> None:
    pred, y = _pool("cat", 3000)
    path = tmp_path / "s.db"
    want = _older_rule_session(path, pred, y, seed=2, n=200)
    with ae.Session.open(path) as s:
        assert session_report._lean(s._stored, 0, None) is None  # the pool's path
        got = s.estimate()
    assert got.ci == want.ci and got.stopped == want.stopped


# ------------------------------------------------------- a session above one chunk of pool
@pytest.fixture(scope="module")
def big_session(tmp_path_factory):
    """A session of one model on ROWS + 20,000 instances (above one chunk: the time summary's
    series, the tempered curve's subsample), 600 labels."""
    tmp = tmp_path_factory.mktemp("big")
    pred, y = _pool("cat", ROWS + 20_000, seed=4)
    with ae.Session.create(tmp / "s.db", pred, "f1", budget=600, seed=5) as s:
        while ids := s.next_batch(200):
            s.record({i: y[i] for i in ids})
    return tmp / "s.db", pred, y


def test_a_session_above_one_chunk_equals_its_pool_and_evaluate(big_session, tmp_path) -> None:
    path, pred, y = big_session
    with ae.Session.open(path) as s:
        lean = session_report._lean(s._stored, 0, None)
        assert lean is not None and lean.summary.time.tau > 0  # the series, not q itself
        assert lean.summary.keep.shape[0] == 50_000
        got, whole = s.estimate(), _whole(s)
        assert got.interval == "tempered"
        assert (got.estimate, got.stderr, got.ci) == (whole.estimate, whole.stderr, whole.ci)
    res = ae.evaluate(pred, lambda i: y[i], "f1", budget=600, random_state=5)
    assert (res.n_draws, res.estimate, res.ci) == (got.n_draws, got.estimate, got.ci)


def test_past_the_series_a_session_estimates_from_its_pool(big_session, monkeypatch) -> None:
    # Past the time summary's series (about 41,000 distinct labels at the least) the
    # session's estimate reads its pool (the series' own fallback is tested above)
    path, *_ = big_session
    with ae.Session.open(path) as s:
        want = s.estimate()
    monkeypatch.setattr(TimeSummary, "covers", lambda self, n: False)
    used: list[int] = []
    real = session_report._estimate_on
    monkeypatch.setattr(session_report, "_estimate_on", lambda *a, **k: used.append(1) or
                        real(*a, **k))  # fmt: skip
    with ae.Session.open(path) as s:
        got = s.estimate()
        snis = s.estimate(estimator="snis")  # needs no t(n): still the summary's
    assert used == [1]  # t from q itself: the same root, to rounding
    assert got.estimate == pytest.approx(want.estimate, rel=1e-12)
    assert got.ci == pytest.approx(want.ci, rel=1e-12)
    assert snis.interval == "wald" and math.isfinite(snis.estimate)


def test_a_large_summary_round_trips(big_session) -> None:
    path, *_ = big_session
    with ae.Session.open(path) as s:
        lean = session_report._lean(s._stored, 0, None)
        st = lean.summary
        with sqlite3.connect(path) as c:
            blob = c.execute("SELECT data FROM summaries").fetchone()[0]
    back = _from_bytes(blob, "categorical", (0, 1))
    for k in ("size", "domain_all", "mass", "mu_num", "mu_den", "n_needed", "n_domain"):
        assert getattr(back, k) == getattr(st, k)
    assert (back.time.tau, back.time.n_support) == (st.time.tau, st.time.n_support)
    for a, b in [(back.time.sums, st.time.sums), (back.time.top, st.time.top),
                 (back.keep, st.keep), (back.sample_q, st.sample_q),
                 (back.sample_p, st.sample_p), (back.sample.proba, st.sample.proba)]:  # fmt: skip
        np.testing.assert_array_equal(a, b)
    assert back.time.sums.shape == (20,) and back.time.tau > 0
    # the anytime sequences' pool means and σ₀ grid, and what they are: the pool's own
    from activeeval.estimators.assisted import _pool_moments
    from activeeval.estimators.report import PlainPool

    assert back.terms_mu is not None and back.terms_mu == st.terms_mu
    np.testing.assert_array_equal(back.sigma0, st.sigma0)
    pred = big_session[1]
    meas = get_measure("f1").bind(pred)
    pm = _pool_moments(meas, pred, pred, uniform(pred.n))
    assert back.terms_mu == (pm.mu_num, pm.mu_den)
    pool = PlainPool([pred], meas, uniform(pred.n))
    rep = pool.reporting(q_star(pred, meas), 0.95, "assisted")
    np.testing.assert_array_equal(back.sigma0, pool.sigma0(rep)[:, 0])


def test_an_altered_labeled_row_or_summary_is_refused(tmp_path) -> None:
    # the copy of a labeled row (made as the label was recorded) edited: refused
    s, *_ = _session(tmp_path)
    s.close()
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as c:
        pos, data = c.execute("SELECT position, data FROM labeled_rows LIMIT 1").fetchone()
        row = np.frombuffer(data, "<f8").copy()
        row[0] = 0.5
        c.execute("UPDATE labeled_rows SET data = ? WHERE position = ?", (row.tobytes(), pos))
    with ae.Session.open(path) as s2, pytest.raises(ae.errors.StoreError, match="altered"):
        s2.estimate()
    # a model row edited before its label: the label is recorded all the same, the row is
    # not copied, and the estimate that reads it refuses it
    pred, y = _pool("cat", 3000)
    s = ae.Session.create(tmp_path / "b.db", pred, "f1", budget=500, seed=3)
    ids = s.next_batch(50)
    s.close()
    with sqlite3.connect(tmp_path / "b.db") as c:
        blob = bytearray(c.execute("SELECT predictions FROM models").fetchone()[0])
        blob[16 * ids[0] : 16 * ids[0] + 8] = np.float64(0.5).tobytes()
        c.execute("UPDATE models SET predictions = ?", (bytes(blob),))
    with ae.Session.open(tmp_path / "b.db") as s3:
        s3.record({i: y[i] for i in ids})
        assert s3.progress().n_labels == 50
        with pytest.raises(ae.errors.StoreError, match="altered"):
            s3.estimate()
    # the summary itself unreadable
    s, *_ = _session(tmp_path / "c")
    s.close()
    with sqlite3.connect(tmp_path / "c" / "s.db") as c:
        c.execute("UPDATE summaries SET data = substr(data, 1, 200)")
    with (
        ae.Session.open(tmp_path / "c" / "s.db") as s4,
        pytest.raises(ae.errors.StoreError, match="pool summary cannot be read"),
    ):
        s4.estimate()


def test_labeled_rows_are_copied_as_recorded_and_read_in_one_query(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    res = s.estimate()
    s.close()
    with sqlite3.connect(tmp_path / "s.db") as c:
        copied = {p for (p,) in c.execute("SELECT position FROM labeled_rows")}
    assert copied == set(np.unique(res.indices).tolist())
    # without the copies (a store whose labels an older release recorded) the same estimate
    with sqlite3.connect(tmp_path / "s.db") as c:
        c.execute("DELETE FROM labeled_rows")
    with ae.Session.open(tmp_path / "s.db") as s2:
        again = s2.estimate()
    assert (again.estimate, again.ci) == (res.estimate, res.ci)


def test_a_pickled_result_of_a_relative_store_path_finds_it_again(tmp_path, monkeypatch) -> None:
    import pickle

    monkeypatch.chdir(tmp_path)
    pred, y = _pool("cat", 2000)
    with ae.Session.create("rel.db", pred, "error_rate", budget=300, seed=1) as s:
        s.record({i: y[i] for i in s.next_batch(300)})
        blob = pickle.dumps(s.estimate())
        want = _whole(s).confidence_interval(method="anytime")
    monkeypatch.chdir(tmp_path.parent)
    assert pickle.loads(blob).confidence_interval(method="anytime") == want


def test_records_and_estimates_survive_a_store_without_the_copies_table(tmp_path) -> None:
    # a label is never refused because of the copy: a store without labeled_rows records
    # and reports (its rows read from the model's array)
    s, _, y = _session(tmp_path)
    want = s.estimate()
    s.close()
    with sqlite3.connect(tmp_path / "s.db") as c:
        c.execute("DROP TABLE labeled_rows")
    with ae.Session.open(tmp_path / "s.db") as s2:
        assert (s2.estimate().estimate, s2.estimate().ci) == (want.estimate, want.ci)
        ids = s2.next_batch(20)
        s2.record({i: y[i] for i in ids})
        assert s2.progress().n_labels == 420 and math.isfinite(s2.estimate().estimate)


def test_a_copy_of_another_length_is_read_from_the_array(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    want = s.estimate()
    s.close()
    for data, which in (("x'0011223344'", "MIN"), ("data || x'001122'", "MAX")):
        with sqlite3.connect(tmp_path / "s.db") as c:  # 5 bytes; a whole copy and 3 more
            c.execute(
                f"UPDATE labeled_rows SET data = {data} "
                f"WHERE position = (SELECT {which}(position) FROM labeled_rows)"
            )
        with ae.Session.open(tmp_path / "s.db") as s2:
            got = s2.estimate()
        assert (got.estimate, got.ci) == (want.estimate, want.ci)


def test_the_summary_path_checks_the_bandwidth_as_the_pools_does(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    assert session_report._lean(s._stored, 0, None) is not None
    with pytest.raises(ae.errors.ShapeError, match="bandwidth"):
        s.estimate(bandwidth=-1.0)


def test_rule_sessions_get_a_summary_and_one_of_another_layout_is_ignored(tmp_path) -> None:
    pred, _ = _pool("cat", 3000)
    other, _ = _pool("cat", 3000, seed=1)
    ae.Session.create(tmp_path / "r.db", [pred, other], "f1", budget=300, decide=True).close()
    with sqlite3.connect(tmp_path / "r.db") as c:  # a pair's rule: its summary serves it
        assert c.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1
    ae.Session.create(tmp_path / "o.db", pred, "f1", budget=300, target_width=0.1).close()
    with sqlite3.connect(tmp_path / "o.db") as c:  # one model's rule: its summary serves it
        assert c.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1
    # a summary of layout 1 (sums compacted before the power sums): ignored, the pool read
    import activeeval.session.summaries as summaries

    s, *_ = _session(tmp_path / "v")
    want = s.estimate()
    s.close()
    with sqlite3.connect(tmp_path / "v" / "s.db") as c:
        blob = c.execute("SELECT data FROM summaries").fetchone()[0]
    with np.load(io.BytesIO(blob)) as z:
        other = {k: z[k] for k in z.files}
    other["version"] = np.int64(1)
    out = io.BytesIO()
    np.savez(out, **other)
    with sqlite3.connect(tmp_path / "v" / "s.db") as c:
        c.execute("UPDATE summaries SET data = ?", (out.getvalue(),))
    with ae.Session.open(tmp_path / "v" / "s.db") as s2:
        assert session_report._lean(s2._stored, 0, None) is None
        got = s2.estimate()
    assert summaries.VERSION == 2 and (got.estimate, got.ci) == (want.estimate, want.ci)


def test_no_summary_for_a_model_of_many_classes(tmp_path, monkeypatch) -> None:
    import activeeval.session.summaries as summaries

    # the subsample's rows, q, p and check: 8 bytes × (K + 3) each; two classes fit, not three
    monkeypatch.setattr(summaries, "SAMPLE_BYTES", 8 * 50_000 * 5)
    rng = np.random.default_rng(0)
    three = rng.dirichlet(np.ones(3), 2000)
    ae.Session.create(tmp_path / "k3.db", three, "error_rate", budget=100).close()
    two = rng.dirichlet(np.ones(2), 2000)
    ae.Session.create(tmp_path / "k2.db", two, "error_rate", budget=100).close()
    with sqlite3.connect(tmp_path / "k3.db") as c3, sqlite3.connect(tmp_path / "k2.db") as c2:
        assert c3.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 0
        assert c2.execute("SELECT COUNT(*) FROM summaries").fetchone()[0] == 1


def test_a_closed_results_anytime_interval_names_its_missing_store(tmp_path) -> None:
    s, *_ = _session(tmp_path)
    s.close()
    _drop_terms_mu(tmp_path / "s.db")  # a summary whose anytime terms read the pool
    with ae.Session.open(tmp_path / "s.db") as s:
        res = s.estimate()
    (tmp_path / "s.db").rename(tmp_path / "moved.db")
    with pytest.raises(ae.errors.NotAStoreError, match="anytime interval reads its session"):
        res.confidence_interval(method="anytime")


# ------------------------------------------------------------------------------ pairs
@pytest.mark.parametrize("m", [3_000, ROWS + 40_000])
@pytest.mark.parametrize("name", ["error_rate", "f1", "precision"])
def test_the_pair_summarys_paired_test_is_the_pools_bit_for_bit(m: int, name: str) -> None:
    """:func:`summary_paired_test` from :func:`summarize_pair` and the labeled rows equals
    :func:`assisted_paired_test` on the pool's arrays, bit for bit: with fewer than 30
    disagreements among the labels (the mixture's control variate alone) and with more
    (each model's own); precision's domain is short of the pool."""
    from activeeval.estimators.assisted import assisted_paired_test
    from activeeval.estimators.summary import (
        AtRows,
        summarize_pair,
        summary_model_scores,
        summary_paired_test,
    )
    from activeeval.estimators.tempered import score_curve
    from activeeval.predictive import Mixture
    from activeeval.sampling import comparison_distribution

    rng = np.random.default_rng(m)
    p1 = rng.beta(0.6, 2.0, m)
    p2 = np.clip(p1 + rng.normal(0.0, 0.15, m), 0.01, 0.99)
    y = (rng.random(m) < p1).astype(int)
    preds = [ae.as_predictive(np.column_stack([1 - p, p])) for p in (p1, p2)]
    meas = get_measure(name).bind(Mixture(preds))
    q = comparison_distribution(preds, meas)
    s = summarize_pair(meas, preds, uniform(m), q)
    for n in (40, 400):
        d = draw(q, n, random_state=1)
        want = assisted_paired_test(meas, preds, d, y[d], pool_weights=uniform(m), pool_q=q)
        units = np.unique(d)
        at = [AtRows(pr.take(units), units, m) for pr in preds]
        got = summary_paired_test(meas, at, s, d, y[d], q[d], 0.95)
        assert (got.difference, got.stderr, got.p_value) == (
            want.difference,
            want.stderr,
            want.p_value,
        )
        assert got.estimates == want.estimates and got.best == want.best
        first = np.unique(d, return_index=True)[1]
        curves = summary_model_scores(meas, at, s, units, y[d][first])
        for pr, curve in zip(preds, curves, strict=True):  # what compare's _ModelScores gives
            pool = score_curve(pr, meas, None, q, uniform(m), units, y[d][first])
            assert (curve is None) == (pool is None)
            for field in ("values", "variances", "spreads", "loglik"):
                assert np.array_equal(getattr(curve, field), getattr(pool, field))
    assert s.domain_all == (name != "precision")


def _pair_session(tmp_path: Path, measure: str, m: int = 3_000, n: int = 400):
    rng = np.random.default_rng(5)
    p1 = rng.beta(0.6, 2.0, m)
    p2 = np.clip(p1 + rng.normal(0.0, 0.15, m), 0.01, 0.99)
    y = (rng.random(m) < p1).astype(int)
    models = [np.column_stack([1 - p, p]) for p in (p1, p2)]
    s = ae.Session.create(tmp_path / f"{measure}.db", models, measure, budget=n, seed=3)
    while ids := s.next_batch(100):
        s.record({i: int(y[i]) for i in ids})
    return s, models, y


def _whole_comparison(s: ae.Session):
    st = s._stored
    idx, dq, y = session_report._data(s._store, st)
    return session_report._compare_on(st, idx, dq, y, st.plan.estimator)


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
def test_a_comparison_session_reports_from_its_pair_summary_what_its_pool_gives(
    tmp_path, measure
) -> None:
    s, models, y = _pair_session(tmp_path, measure)
    assert session_report._lean_pair(s._stored, None) is not None
    lean, whole = s.compare(), _whole_comparison(s)
    assert (lean.difference, lean.stderr, lean.p_value, lean.ci, lean.best, lean.cost) == (
        whole.difference, whole.stderr, whole.p_value, whole.ci, whole.best, whole.cost
    )  # fmt: skip
    np.testing.assert_array_equal(lean.estimates, whole.estimates)
    np.testing.assert_array_equal(lean.model_intervals(), whole.model_intervals())
    assert lean.confidence_interval(method="anytime") == whole.confidence_interval(method="anytime")
    res = ae.compare(models, lambda i: y[i], measure, budget=400, random_state=3)
    assert (lean.difference, lean.stderr, lean.ci) == (res.difference, res.stderr, res.ci)


def test_a_comparison_status_reads_no_whole_pool(tmp_path, monkeypatch) -> None:
    s, *_ = _pair_session(tmp_path, "f1")
    want = s.compare()
    s.close()

    def refuse(*a, **k):
        raise AssertionError("the whole pool was read")

    monkeypatch.setattr(stored_mod, "_load_pool", refuse)
    with ae.Session.open(tmp_path / "f1.db") as s2:
        got = s2.compare()
        np.testing.assert_array_equal(got.model_intervals(), want.model_intervals())
    assert (got.difference, got.ci) == (want.difference, want.ci)
    import activeeval.cli as cli

    monkeypatch.setattr(cli, "_REPLAN_ROWS", 1000)  # as on a pool above one chunk
    for extra in ([], ["--json"]):
        out = CliRunner().invoke(main, ["session", "status", str(tmp_path / "f1.db"), *extra])
        assert out.exit_code == 0, out.output
    with ae.Session.open(tmp_path / "f1.db") as s3, pytest.raises(AssertionError):
        features = np.random.default_rng(0).random((s3.plan.pool_size, 2))
        s3.compare(features=features)  # what needs the pool still reads it, here refused


def test_a_comparison_session_above_one_chunk_and_labeled_whole(tmp_path) -> None:
    s, *_ = _pair_session(tmp_path, "error_rate", m=ROWS + 5_000, n=300)
    lean, whole = s.compare(), _whole_comparison(s)
    assert (lean.difference, lean.stderr, lean.ci) == (whole.difference, whole.stderr, whole.ci)
    np.testing.assert_array_equal(lean.model_intervals(), whole.model_intervals())
    s.close()
    for measure, n in (("error_rate", 60), ("precision", 17)):  # q > 0 on 17 for precision
        (tmp_path / measure).mkdir()
        s, *_ = _pair_session(tmp_path / measure, measure, m=60, n=60)
        lean, whole = s.compare(), _whole_comparison(s)
        assert lean.n_labels == n and lean.stderr == 0.0  # all that q can draw labeled: exact
        assert (lean.difference, lean.ci) == (whole.difference, whole.ci)
        s.close()


def test_a_comparison_of_string_classes_reads_its_pair_summary(tmp_path) -> None:
    """String class labels: the pair summary's labels give the stored labels' type (a
    review found a crash here)."""
    rng = np.random.default_rng(0)
    a, b = rng.dirichlet([1, 1], 500), rng.dirichlet([1, 1], 500)
    y = np.where(rng.random(500) < a[:, 1], "pos", "neg")
    s = ae.Session.create(tmp_path / "s.db", [a, b], "error_rate", 60, labels=["neg", "pos"],
                          seed=0)  # fmt: skip
    while ids := s.next_batch(20):
        s.record({i: str(y[i]) for i in ids})
    assert session_report._lean_pair(s._stored, None) is not None
    lean, whole = s.compare(), _whole_comparison(s)
    assert (lean.difference, lean.stderr, lean.ci) == (whole.difference, whole.stderr, whole.ci)
    out = CliRunner().invoke(main, ["session", "status", str(tmp_path / "s.db")])
    assert out.exit_code == 0, out.output
    with pytest.raises(UnknownOptionError, match="estimate or comparison made from the pool"):
        ae.compare([a, b], lambda i: y[i], budget=60, reuse=lean)


def test_a_copied_row_moved_to_another_position_or_model_is_refused(tmp_path) -> None:
    """A copy's check is tied to its model and position (an audit found copies swapped
    between the models, or rotated among positions, read as valid); copies written before,
    with the plain check, are still read."""
    s, *_ = _pair_session(tmp_path, "f1")
    want = s.compare()
    s.close()
    path = tmp_path / "f1.db"
    with sqlite3.connect(path) as c:  # the two models' copies swapped
        c.execute("UPDATE labeled_rows SET model = model + 10")
        c.execute("UPDATE labeled_rows SET model = 11 - model")
    with ae.Session.open(path) as s2, pytest.raises(ae.errors.StoreError, match="altered"):
        s2.compare()
    with sqlite3.connect(path) as c:  # back, then one model's copies rotated by a position
        c.execute("UPDATE labeled_rows SET model = model + 10")
        c.execute("UPDATE labeled_rows SET model = 11 - model")
        rows = c.execute(
            "SELECT position, data FROM labeled_rows WHERE model = 1 ORDER BY position"
        ).fetchall()
        moved = [(d, p) for (p, _), (_, d) in zip(rows, rows[1:] + rows[:1], strict=True)]
        c.executemany("UPDATE labeled_rows SET data = ? WHERE model = 1 AND position = ?", moved)
    with ae.Session.open(path) as s3, pytest.raises(ae.errors.StoreError, match="altered"):
        s3.compare()
    from activeeval.session.summaries import _bound

    with sqlite3.connect(path) as c:  # every copy as written before: the plain check
        c.executemany(  # model 1's back in place
            "UPDATE labeled_rows SET data = ? WHERE model = 1 AND position = ?",
            [(d, p) for p, d in rows],
        )
        legacy = []
        for model, p, data in c.execute("SELECT model, position, data FROM labeled_rows"):
            row = np.frombuffer(data, "<f8")[:-1].copy()  # without the layout's marker
            row[-1:] = _bound(row[-1:].view(np.uint64), model, np.array([p])).view(np.float64)
            legacy.append((row.tobytes(), model, p))
        c.executemany("UPDATE labeled_rows SET data = ? WHERE model = ? AND position = ?", legacy)
    with ae.Session.open(path) as s4:
        got = s4.compare()
    assert (got.difference, got.stderr, got.ci) == (want.difference, want.stderr, want.ci)


# ------------------------------------------------------- σ₀ on the curve's subsample
def _sigma0_by_hand(meas, member, f, p, q, lam: float) -> float:
    """σ₀ of one tempered member written out from its definition (PlainPool.sigma0's
    docstring): Σ p²/q · (E[w²(ℓ − G)² | x] − λ(2 − λ)(m_N − G m_D)²) / D² over q > 0."""
    mn, md = meas.conditional_expectations(member, f)
    d = float(np.sum(p * md))
    g = float(np.sum(p * mn)) / d
    m2 = meas.conditional_second_moment(member, g, f) - lam * (2 - lam) * (mn - g * md) ** 2
    on = q > 0
    return math.sqrt(float(np.sum(p[on] ** 2 / q[on] * np.maximum(m2[on], 0.0))) / d**2)


@pytest.mark.parametrize("m", [4000, 120_000])
def test_sigma0_sums_over_the_pool_or_its_fixed_subsample(m) -> None:
    from activeeval.estimators.report import PlainPool, Reporting
    from activeeval.estimators.tempered import GRID, MAX_POOL, _Tempering, subsample

    pred, _ = _pool("cat", m, seed=6)
    meas = get_measure("f1").bind(pred)
    q = q_star(pred, meas)
    pw = uniform(m)
    got = PlainPool([pred], meas, pw).sigma0(Reporting(meas, q, pw, 0.95, "assisted"))[:, 0]
    keep = subsample(m)
    assert (keep.shape[0] == m) == (m <= MAX_POOL)
    sub = pred.take(keep)
    f = sub.point_prediction()
    temper = _Tempering(sub)
    for i in (0, len(GRID) // 3, int(np.argmin(np.abs(GRID - 1.0))), len(GRID) - 1):
        member = temper.at(float(GRID[i]))
        # every row, or the subsample's sums scaled by m/k (the p's themselves stay 1/m)
        want = _sigma0_by_hand(meas, member, f, pw[keep], q[keep], 1.0) * math.sqrt(
            keep.shape[0] / m
        )
        assert got[i] == pytest.approx(want, rel=1e-12)


def _terms_from_summary_and_pool(meas, preds, q, s, draws, y, horizon):
    """The pool (PlainPool) and its summary ``s`` with the drawn rows (SummaryPool), each
    with how it reports; checked: the anytime terms (per-draw columns, σ₀ per draw, the
    positive-unit flags) are the pool's bit for bit, and so is the σ₀ grid init stores."""
    from activeeval.estimators.report import PlainPool, Reporting, SummaryPool, with_sigma0
    from activeeval.estimators.summary import AtRows

    m = preds[0].n
    pool = PlainPool(preds, meas, uniform(m))
    rep = pool.reporting(q, 0.95, "assisted")
    units = np.unique(draws)
    sp = SummaryPool([AtRows(pr.take(units), units, m) for pr in preds], s, meas)
    rep0 = Reporting(meas, np.empty(0), uniform(m), 0.95, "assisted")
    a = pool.draw_terms(rep, draws, y[draws], horizon)
    b = sp.draw_terms(rep0, draws, y[draws], horizon, q[draws])
    assert np.array_equal(a.z, b.z) and np.array_equal(a.positive, b.positive)
    assert np.array_equal(a.sigma0, b.sigma0, equal_nan=True)
    stored = with_sigma0(meas, s).sigma0  # what init stores
    assert np.array_equal(stored.reshape(GRID.shape[0], -1), pool.sigma0(rep), equal_nan=True)
    return pool, rep, sp, rep0


@pytest.mark.parametrize("m", [70_000, ROWS + 5_000])
@pytest.mark.parametrize(
    ("measure", "kind", "decision"),
    [("error_rate", "cat", False), ("precision", "cat", True), ("mse", "gauss", False)],
)
def test_summary_pool_terms_are_the_pools_bit_for_bit_on_large_pools(m, measure, kind, decision):
    """The anytime terms (per-draw columns, σ₀ per draw, the positive-unit flags) and a
    look's estimate from the summary and the drawn rows equal the pool's arrays' — above the
    50,000-row subsample and above one chunk (uniform p a view)."""

    pred, y = _pool(kind, m, seed=2, decision=decision)
    meas = get_measure(measure).bind(pred)
    q = q_star(pred, meas)
    draws = draw(q, 500, random_state=4)
    s = summarize(meas, pred, uniform(m), q)
    pool, rep, sp, rep0 = _terms_from_summary_and_pool(meas, [pred], q, s, draws, y, 2000.0)
    ea, _ = pool.estimate(rep, 0, draws, y[draws])
    eb, _ = sp.estimate(rep0, 0, draws, y[draws], q[draws])
    assert (ea.estimate, ea.stderr) == (eb.estimate, eb.stderr)


def test_sigma0_of_a_group_or_a_store_from_before_sums_the_whole_pool(tmp_path, monkeypatch):
    """A non-uniform test distribution (a group's) or a session stored before the subsample
    keeps σ₀ over every row; a new session's looks use the subsample, as evaluate's."""
    import activeeval.estimators.tempered as tempered_mod
    from activeeval.estimators.report import PlainPool, Reporting

    monkeypatch.setattr(tempered_mod, "MAX_POOL", 1000)  # a 3,000-row pool is "large" here
    pred, y = _pool("cat", 3000, seed=7)
    meas = get_measure("error_rate").bind(pred)
    q = q_star(pred, meas)
    group = np.where(np.arange(3000) < 40, 1.0 / 40, 0.0)  # 40 rows: the subsample misses most
    whole = PlainPool([pred], meas, group)
    whole.sigma0_subsample = True
    rep = Reporting(meas, q, group, 0.95, "assisted")
    pr = PlainPool([pred], meas, group)
    pr.sigma0_subsample = False
    assert np.array_equal(whole.sigma0(rep), pr.sigma0(rep), equal_nan=True)
    assert np.isfinite(whole.sigma0(rep)).all()
    # a session stored before: no "sigma0" meta key, no terms_mu — its σ₀ over every row
    path = tmp_path / "old.db"
    new = _older_rule_session(path, pred, y, seed=1, n=150)
    with sqlite3.connect(path) as c:
        c.execute("DELETE FROM meta WHERE key = 'sigma0'")
    with ae.Session.open(path) as s:
        assert not s.plan.sigma0_subsample and not s._stored.pool.sigma0_subsample
        old = s.estimate()
        rep = session_report._reporting(s._stored, "assisted", None, 1.0, 1)
        full = s._stored.pool.sigma0(rep)
    sub = PlainPool([pred], meas, uniform(3000)).sigma0(rep)
    assert not np.array_equal(full, sub)  # the two sums differ on this pool
    assert old.estimate == new.estimate and old.ci != new.ci  # the same estimate, its own σ₀


# ------------------------------------------------ a comparison's rule from its pair summary
def _pair(m: int, seed: int = 5, k: int = 2):
    """``k`` binary models, the first calibrated, each next one noisier, and labels."""
    rng = np.random.default_rng(seed)
    p1 = rng.beta(0.6, 2.0, m)
    ps = [p1] + [np.clip(p1 + rng.normal(0.0, sd, m), 0.01, 0.99) for sd in (0.15, 0.25)[: k - 1]]
    y = (rng.random(m) < p1).astype(int)
    return [Categorical(np.column_stack([1 - p, p])) for p in ps], y


@pytest.mark.parametrize("m", [70_000, ROWS + 5_000])
@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
def test_pair_summary_pool_terms_are_the_pools_bit_for_bit(m, measure) -> None:
    """A comparison's anytime terms (per-draw columns, σ₀ per draw, positive-unit flags) and
    a look's comparison from the pair summary and the drawn rows equal the pool's — above
    the 50,000-row subsample and above one chunk; the σ₀ grid init stores is the pool's."""
    from activeeval.estimators.report import SummaryPool
    from activeeval.estimators.summary import AtRows, summarize_pair
    from activeeval.predictive import Mixture
    from activeeval.sampling import comparison_distribution

    preds, y = _pair(m)
    meas = get_measure(measure).bind(Mixture(preds))
    q = comparison_distribution(preds, meas)
    draws = draw(q, 400, random_state=4)
    s = summarize_pair(meas, preds, uniform(m), q)
    pool, rep, sp, rep0 = _terms_from_summary_and_pool(meas, preds, q, s, draws, y, 1000.0)
    units = np.unique(draws)
    quick = dataclasses.replace(rep, score=False)
    ca = pool.compare(quick, draws, y[draws])
    cb = sp.compare(dataclasses.replace(rep0, score=False), draws, y[draws], draw_q=q[draws])
    assert (ca.difference, ca.stderr, ca.p_value) == (cb.difference, cb.stderr, cb.p_value)
    with pytest.raises(ShapeError, match="draw_q"):
        pool.compare(quick, draws, y[draws], draw_q=q[draws])  # one q over the pool
    with pytest.raises(ShapeError, match="draw_q"):
        sp.compare(rep0, draws, y[draws])  # a summary has no q over the pool
    with pytest.raises(ShapeError, match="pair summary"):
        sp.estimate(rep0, 0, draws, y[draws], q[draws])
    with pytest.raises(ShapeError, match="2 model"):
        SummaryPool(AtRows(preds[0].take(units), units, m), s, meas)


def _pair_rule_session(path: Path, measure: str, rule: dict, m: int = 3_000, n: int = 1_500):
    models, y = _pair(m)
    with ae.Session.create(path, models, measure, budget=n, seed=3, **rule) as s:
        while ids := s.next_batch(40):
            s.record({i: int(y[i]) for i in ids})
        assert session_report._lean_pair(s._stored, None) is not None
        whole = _whole_comparison(s)  # the pool's path, rule and all
        stopped = s.stopped
    return whole, stopped


@pytest.mark.parametrize(
    ("measure", "rule"),
    [
        ("error_rate", {"decide": True}),
        ("f1", {"claim": "difference <= 0.05"}),
        ("precision", {"target_width": 0.1}),
        ("error_rate", {"target_width": 0.05, "rule": "fixed-width"}),
    ],
)
def test_a_comparison_rule_session_looks_from_its_pair_summary_as_from_its_pool(
    tmp_path, monkeypatch, measure, rule
) -> None:
    path = tmp_path / "s.db"
    whole, stopped = _pair_rule_session(path, measure, rule)
    assert stopped is not None and whole.stopped == stopped  # each rule stops early here
    lean = _looks_without_the_pool(monkeypatch, path, stopped, ae.Session.compare)
    assert lean.stopped == whole.stopped and lean.interval == whole.interval
    assert (lean.difference, lean.ci, lean.p_value) == (whole.difference, whole.ci, whole.p_value)
    assert lean.confidence_sequence().equals(whole.confidence_sequence())
    assert lean.test(method="anytime") == whole.test(method="anytime")


def _drop_pair_terms(path: Path) -> None:
    """Store the pair summary as the release before its sequences' terms (same layout)."""
    from activeeval.session.summaries import PAIR

    conn = sqlite3.connect(path)
    (blob,) = conn.execute("SELECT data FROM summaries WHERE model = ?", (PAIR,)).fetchone()
    with np.load(io.BytesIO(blob)) as z:
        arrays = {k: z[k] for k in z.files if k not in ("terms_mu", "sigma0")}
    out = io.BytesIO()
    np.savez(out, **arrays)
    with conn:
        conn.execute("UPDATE summaries SET data = ? WHERE model = ?", (out.getvalue(), PAIR))
    conn.close()


def test_an_older_pair_summary_serves_no_rule_and_reads_the_pool_for_its_terms(tmp_path) -> None:
    import pickle

    path = tmp_path / "r.db"
    whole, _ = _pair_rule_session(path, "error_rate", {"decide": True}, n=600)
    _drop_pair_terms(path)
    with ae.Session.open(path) as s:
        assert session_report._lean_pair(s._stored, None) is None  # the pool's path
        got = s.compare()
    assert (got.ci, got.stopped) == (whole.ci, whole.stopped)
    s, *_ = _pair_session(tmp_path, "f1")  # no rule: the estimate from the summary
    want = _whole_comparison(s).confidence_interval(method="anytime")
    s.close()
    _drop_pair_terms(tmp_path / "f1.db")
    with ae.Session.open(tmp_path / "f1.db") as s:
        lean = s.compare()
    assert isinstance(lean.anytime_terms, session_report._PoolComparison)
    assert pickle.loads(pickle.dumps(lean)).confidence_interval(method="anytime") == want


def test_a_pair_summary_comparison_pickles_and_needs_no_store_for_its_anytime_interval(
    tmp_path,
) -> None:
    import pickle

    s, *_ = _pair_session(tmp_path, "precision")
    lean, whole = s.compare(), _whole_comparison(s)
    s.close()
    blob = pickle.dumps(lean)
    (tmp_path / "precision.db").unlink()
    back = pickle.loads(blob)
    want = whole.confidence_interval(method="anytime")
    assert back.confidence_interval(method="anytime") == want
    assert back.test(method="anytime") == whole.test(method="anytime")


def test_a_pair_summarys_terms_round_trip_and_an_altered_shape_is_refused(tmp_path) -> None:
    from activeeval.session import summaries
    from activeeval.session.summaries import PAIR

    s, *_ = _pair_session(tmp_path, "f1")
    st = s._stored
    lean = session_report._lean_pair(st, None)
    assert lean.summary.terms_mu is not None and lean.summary.sigma0.shape == (GRID.shape[0], 2)
    mu = lean.summary.terms_mu
    preds = st.predictives
    for k, pr in enumerate(preds):  # each model's own means under the pool's weights
        mn, md = st.measure.conditional_expectations(pr, pr.point_prediction())
        assert mu[k] == pytest.approx((mn.mean(), md.mean()), rel=1e-12)
    # each model's σ₀ grid, in its column (what a look would compute from the pool)
    rep = st.pool.reporting(st.q, st.plan.level, "assisted")
    assert np.array_equal(lean.summary.sigma0, st.pool.sigma0(rep), equal_nan=True)
    s.close()
    path = tmp_path / "f1.db"
    with sqlite3.connect(path) as c:
        (blob,) = c.execute("SELECT data FROM summaries WHERE model = ?", (PAIR,)).fetchone()
    with np.load(io.BytesIO(blob)) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["terms_mu"] = arrays["terms_mu"][:1]
    out = io.BytesIO()
    np.savez(out, **arrays)
    with pytest.raises(ae.errors.StoreError, match="terms_mu"):
        summaries._from_bytes(out.getvalue(), "categorical", (0, 1))


@pytest.mark.parametrize("pair", [False, True])
def test_a_look_kept_for_the_labeled_prefix_follows_overwritten_labels(tmp_path, pair) -> None:
    """The look is kept per labeled prefix (draws, their q and labels): overwriting labels
    within one open session moves ``stopped`` as the pool's look does (a review found no
    test of it)."""
    models, y = _pair(3_000)
    pools = models if pair else models[0]
    rule = {"decide": True} if pair else {"claim": "error_rate <= 0.3"}
    with ae.Session.create(tmp_path / "s.db", pools, "error_rate", budget=1_500, seed=3,
                           **rule) as s:  # fmt: skip
        ids = s.next_batch(600 if pair else 300)
        s.record({i: int(y[i]) for i in ids})
        before = s.stopped
        flipped = {i: int(1 - y[i]) if (pair or i % 3) else int(y[i]) for i in ids}
        s.record(flipped, overwrite=True)
        after = s.stopped
        res = _whole_comparison(s) if pair else _whole(s)
    assert before is not None and after != before
    assert after == res.stopped


# ------------------------------------------------------- comparisons of more than two models
@pytest.mark.parametrize(("m", "name"), [(3_000, "error_rate"), (3_000, "f1"),
                                         (3_000, "precision"), (ROWS + 40_000, "f1")])  # fmt: skip
def test_the_summarys_multiple_comparison_is_the_pools_bit_for_bit(m: int, name: str) -> None:
    """:func:`summary_multiple_comparison` of three models from :func:`summarize_pair` and the
    labeled rows equals :func:`assisted_multiple_comparison` on the pool's arrays, bit for
    bit — estimates, the pairwise table with its adjusted p-values, the ranking — with fewer
    than 30 disagreements (the mixture alone) and with more (each model's own)."""
    from activeeval.estimators.assisted import assisted_multiple_comparison
    from activeeval.estimators.summary import AtRows, summarize_pair, summary_multiple_comparison
    from activeeval.predictive import Mixture
    from activeeval.sampling import comparison_distribution

    preds, y = _pair(m, k=3)
    meas = get_measure(name).bind(Mixture(preds))
    q = comparison_distribution(preds, meas)
    s = summarize_pair(meas, preds, uniform(m), q)
    assert np.asarray(s.moments).shape == (4, 3, 2)  # 3 own sources and the mixture
    for n in (40, 400):
        d = draw(q, n, random_state=1)
        want = assisted_multiple_comparison(meas, preds, d, y[d], pool_weights=uniform(m), pool_q=q)
        units = np.unique(d)
        at = [AtRows(pr.take(units), units, m) for pr in preds]
        got = summary_multiple_comparison(meas, at, s, d, y[d], q[d])
        np.testing.assert_array_equal(got.estimates, want.estimates)
        assert got.pairwise.equals(want.pairwise) and got.best == want.best
        np.testing.assert_array_equal(got.ranking, want.ranking)
        np.testing.assert_array_equal(got.stderrs, want.stderrs)


def _three_session(path: Path, measure: str, m: int = 3_000, n: int = 400, **rule):
    models, y = _pair(m, k=3)
    s = ae.Session.create(path, models, measure, budget=n, seed=3, **rule)
    while ids := s.next_batch(40 if rule else 100):
        s.record({i: int(y[i]) for i in ids})
    return s, models, y


@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
def test_a_comparison_of_three_models_reports_from_its_summary_what_its_pool_gives(
    tmp_path, monkeypatch, measure
) -> None:
    s, models, y = _three_session(tmp_path / "s.db", measure)
    assert session_report._lean_pair(s._stored, None) is not None
    whole = _whole_comparison(s)
    s.close()
    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(tmp_path / "s.db") as s2:
            lean = s2.compare()
            intervals = lean.model_intervals()
            anytime = lean.confidence_interval(method="anytime")
        out = CliRunner().invoke(main, ["session", "status", str(tmp_path / "s.db"), "--json"])
    assert out.exit_code == 0, out.output
    assert (lean.difference, lean.stderr, lean.p_value, lean.ci, lean.best, lean.cost) == (
        whole.difference, whole.stderr, whole.p_value, whole.ci, whole.best, whole.cost
    )  # fmt: skip
    np.testing.assert_array_equal(lean.estimates, whole.estimates)
    assert lean.comparison.pairwise.equals(whole.comparison.pairwise)
    np.testing.assert_array_equal(intervals, whole.model_intervals())
    assert anytime == whole.confidence_interval(method="anytime")
    res = ae.compare(models, lambda i: y[i], measure, budget=400, random_state=3)
    assert (lean.difference, lean.stderr, lean.ci) == (res.difference, res.stderr, res.ci)


@pytest.mark.parametrize(
    "rule",
    [{"decide": True}, {"target_width": 0.12}, {"target_width": 0.08, "rule": "fixed-width"}],
)
def test_a_rule_session_of_three_models_looks_from_its_summary_as_from_its_pool(
    tmp_path, monkeypatch, rule
) -> None:
    path = tmp_path / "s.db"
    s, *_ = _three_session(path, "error_rate", n=1_500, **rule)
    assert session_report._lean_pair(s._stored, None) is not None
    whole, stopped = _whole_comparison(s), s.stopped
    s.close()
    assert stopped is not None and whole.stopped == stopped  # each rule stops early here
    lean = _looks_without_the_pool(monkeypatch, path, stopped, ae.Session.compare)
    assert lean.stopped == whole.stopped and lean.interval == whole.interval
    assert (lean.difference, lean.ci, lean.p_value) == (whole.difference, whole.ci, whole.p_value)
    assert lean.confidence_sequence().equals(whole.confidence_sequence())


def test_a_three_model_summary_round_trips_and_a_labeled_pool_is_a_census(tmp_path) -> None:
    """The stored summary of three models keeps each model's terms and σ₀ column (as the pool
    computes them); labeled whole, a comparison of three compares the exact values (scikit-
    learn's error rates), stderr 0 and no warning, on both paths alike."""
    s, *_ = _three_session(tmp_path / "s.db", "f1")
    st = s._stored
    lean = session_report._lean_pair(st, None)
    assert len(lean.summary.terms_mu) == 3 and lean.summary.sigma0.shape == (GRID.shape[0], 3)
    rep = st.pool.reporting(st.q, st.plan.level, "assisted")
    assert np.array_equal(lean.summary.sigma0, st.pool.sigma0(rep), equal_nan=True)
    s.close()
    s, models, y = _three_session(tmp_path / "w.db", "error_rate", m=60, n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exact, not a degenerate interval
        lean, whole = s.compare(), _whole_comparison(s)
        exact = [1.0 - accuracy_score(y, mod.point_prediction()) for mod in models]
        np.testing.assert_allclose(lean.estimates, exact, rtol=0, atol=1e-15)
        assert lean.n_labels == 60 and lean.stderr == 0.0 and lean.comparison.census
        assert not np.any(lean.stderrs) and lean.p_value == 0.0  # the exact values differ
        best, runner = np.argsort(exact, kind="stable")[:2]
        assert lean.difference == pytest.approx(exact[best] - exact[runner], abs=1e-15)
        assert lean.confidence_interval(method="anytime") == (lean.difference,) * 2
        assert (lean.difference, lean.stderr, lean.ci) == (whole.difference, whole.stderr, whole.ci)
        np.testing.assert_array_equal(lean.estimates, whole.estimates)
    s.close()


# ------------------------------------------------------- a trajectory from the summary
def _status_plots(mp: pytest.MonkeyPatch, path: Path, tmp_path: Path) -> None:
    """``status --plot`` of the store at ``path`` draws its trajectory, on a pool taken for
    one above one chunk (no re-plan, which reads the pool)."""
    import activeeval.cli as cli

    mp.setattr(cli, "_REPLAN_ROWS", 1000)
    plot = tmp_path / "p.png"
    out = CliRunner().invoke(main, ["session", "status", str(path), "--plot", str(plot)])
    assert out.exit_code == 0, out.output
    assert plot.stat().st_size > 0


@pytest.mark.parametrize(
    ("k", "measure", "rule"),
    [(1, "f1", {}), (1, "error_rate", {"target_width": 0.08}), (1, "mse", {}),
     (1, "f1", {"costs": True}), (2, "precision", {}), (2, "error_rate", {"decide": True}),
     (3, "f1", {})],
)  # fmt: skip
def test_a_trajectory_from_the_summary_is_the_pools_bit_for_bit(
    tmp_path, monkeypatch, k, measure, rule
) -> None:
    """``Session.trajectory`` (and ``status --plot``, which draws it) reads the summary and
    the labeled rows where they serve, every point equal to the pool's: one model (with a
    rule, a Gaussian model, costs), a pair (with a rule) and three models."""
    if measure == "mse":
        pools, y = _pool("gauss", 3_000)
    elif k == 1:
        pools, y = _pool("cat", 3_000)
    else:
        pools, y = _pair(3_000, k=k)
    path = tmp_path / "s.db"
    if rule.pop("costs", False):
        rule["costs"] = np.random.default_rng(0).uniform(0.5, 3.0, 3_000)
    with ae.Session.create(path, pools, measure, budget=600, seed=3, **rule) as s:
        while ids := s.next_batch(60):
            s.record({i: y[i] for i in ids})
        assert session_report._lean_trajectory(s._store, s._stored, None, None) is not None
        with monkeypatch.context() as mp:  # the pool's path, point by point
            mp.setattr(session_report, "_lean_trajectory", lambda *a: None)
            whole = s.trajectory(max_points=15)

    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(path) as s2:
            lean = s2.trajectory(max_points=15)
        _status_plots(mp, path, tmp_path)
    assert len(lean) == len(whole) >= 10 and list(lean.columns) == list(whole.columns)
    pd.testing.assert_frame_equal(lean, whole, check_exact=True)


@pytest.mark.parametrize("k", [2, 3])
def test_a_trajectory_of_a_pool_labeled_whole_is_the_pools(tmp_path, monkeypatch, k) -> None:
    """Labeled whole, a pair's last point is the exact values' comparison; three models'
    the multiple comparison on the sample (stderr 0), as the pool's points."""
    models, y = _pair(60, k=k)
    with ae.Session.create(tmp_path / "s.db", models, "error_rate", budget=60, seed=3) as s:
        while ids := s.next_batch(20):
            s.record({i: int(y[i]) for i in ids})
        lean = s.trajectory(max_points=8)
        with monkeypatch.context() as mp:
            mp.setattr(session_report, "_lean_trajectory", lambda *a: None)
            whole = s.trajectory(max_points=8)
    assert lean["n_labels"].iloc[-1] == 60 and lean["stderr"].iloc[-1] == 0.0
    pd.testing.assert_frame_equal(lean, whole, check_exact=True)


def test_past_the_series_a_trajectory_reads_the_pool(tmp_path, monkeypatch) -> None:
    s, *_ = _three_session(tmp_path / "s.db", "f1")
    want = s.trajectory(max_points=10)
    monkeypatch.setattr(TimeSummary, "covers", lambda self, n: False)
    assert session_report._lean_trajectory(s._store, s._stored, None, None) is None
    pd.testing.assert_frame_equal(s.trajectory(max_points=10), want, check_exact=True)
    s.close()


def test_a_summary_of_two_models_serves_no_session_of_three(tmp_path) -> None:
    """A model added before any draw keeps one phase of q, but the stored summary is of the
    two models at init: the comparison of three reads its pool (a review found it served,
    and refused as altered, without the check)."""
    models, y = _pair(3_000, k=3)
    with ae.Session.create(tmp_path / "s.db", models[:2], "f1", budget=300, seed=3) as s:
        s.add_model(models[2], name="third")
        assert len(s._stored.phase_starts) == 1 and s.plan.n_models == 3
        assert session_report._lean_pair(s._stored, None) is None
        ids = s.next_batch(300)
        s.record({i: int(y[i]) for i in ids})
        got, want = s.compare(), _whole_comparison(s)
    assert (got.difference, got.stderr, got.ci) == (want.difference, want.stderr, want.ci)


@pytest.mark.parametrize("k", [2, 3])
def test_the_replan_hint_is_for_a_plan_the_status_can_make(tmp_path, monkeypatch, k) -> None:
    """Above one chunk, ``status`` of a session served by its summary says that
    ``--target-width`` re-plans the budget — for one model or two, which ``plan`` covers;
    three models get no such hint (the option is refused for them)."""
    import activeeval.cli as cli

    models, y = _pair(3_000, k=k)
    path = tmp_path / "s.db"
    with ae.Session.create(path, models, "error_rate", budget=400, seed=3) as s:
        ids = s.next_batch(100)  # under way: a re-plan has something to say
        s.record({i: int(y[i]) for i in ids})
    monkeypatch.setattr(cli, "_REPLAN_ROWS", 1000)  # as on a pool above one chunk
    out = CliRunner().invoke(main, ["session", "status", str(path)])
    assert out.exit_code == 0, out.output
    assert ("--target-width W re-plans" in out.output) == (k == 2)


def test_a_comparison_of_three_models_from_its_summary_imports_no_scipy_stats(tmp_path) -> None:
    """The studentized range waits until read, so a session's comparison of three models
    (what status and a rule's look compute) does not import scipy.stats (0.6 s of a
    command)."""
    import subprocess
    import sys

    s, *_ = _three_session(tmp_path / "s.db", "f1")
    s.close()
    code = (
        "import sys, activeeval as ae\n"
        f"with ae.Session.open({str(tmp_path / 's.db')!r}) as s:\n"
        "    r = s.compare(); r.model_intervals()\n"
        "print('scipy.stats' in sys.modules, r.comparison.k)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "3"]


# ------------------------------------------------------- multi-class averages' counts
def _on_the_pool_by_estimator(s: ae.Session) -> dict[str, Any]:
    """The session's estimate (one model) or comparison, from its pool, by each estimator."""
    st = s._stored
    idx, dq, y = session_report._data(s._store, st)
    if st.plan.n_models == 1:
        return {how: session_report._estimate_on(st, idx, dq, y, 0, how) for how in ESTIMATORS}
    return {how: session_report._compare_on(st, idx, dq, y, how) for how in ESTIMATORS}


def _assert_same_report(a: Any, b: Any) -> None:
    """Two estimates, or two comparisons, reported alike to the bit."""
    if isinstance(a, ae.EvaluationResult):
        assert (a.estimate, a.stderr, a.ci, a.interval, a.n_labels, a.cost) == (
            b.estimate, b.stderr, b.ci, b.interval, b.n_labels, b.cost
        )  # fmt: skip
        return
    assert (a.difference, a.stderr, a.p_value, a.ci, a.best, a.cost) == (
        b.difference, b.stderr, b.p_value, b.ci, b.best, b.cost
    )  # fmt: skip
    np.testing.assert_array_equal(a.estimates, b.estimates)


def _classes_pool(m: int, k: int = 4, seed: int = 0, names: bool = False):
    """A model of ``k`` classes (string classes with ``names``), a second one noisier, and
    labels drawn from the first."""
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.full(k, 0.7), m)
    y = (proba.cumsum(axis=1) > rng.random(m)[:, None]).argmax(axis=1)
    other = 0.6 * proba + 0.4 * rng.dirichlet(np.ones(k), m)
    labels = np.array([f"c{j}" for j in range(k)]) if names else np.arange(k)
    return [Categorical(proba, labels=labels), Categorical(other, labels=labels)], labels[y]


@pytest.mark.parametrize(
    ("measure", "n_models", "kw"),
    [("macro_f1", 1, {}), ("balanced_accuracy", 1, {"names": True}),
     ("weighted_f1", 1, {"prediction": True}), ("macro_f1", 1, {"costs": True}),
     ("macro_f1", 2, {}), ("balanced_accuracy", 2, {"names": True})],
)  # fmt: skip
def test_a_multi_class_average_reports_from_its_counts_what_its_pool_gives(
    tmp_path, monkeypatch, measure, n_models, kw
) -> None:
    """A session of a multi-class average stores each model's pool counts at init and
    reports its estimate, comparison and trajectory from them and the labeled rows, bit for
    bit the pool's, by either estimator, with every pool read refused; string classes, a
    deployed decision apart from the argmax and costs included."""
    models, y = _classes_pool(3_000, names=kw.get("names", False))
    models = models[:n_models]
    extra: dict[str, Any] = {}
    if kw.get("prediction"):  # the second most probable class where the top is below 0.5
        proba = models[0].proba
        second = np.argsort(proba, axis=1)[:, -2]
        extra["prediction"] = np.where(proba.max(axis=1) < 0.5, second, proba.argmax(axis=1))
    if kw.get("costs"):
        extra["costs"] = np.random.default_rng(1).uniform(0.5, 3.0, 3_000)
    path = tmp_path / "s.db"
    pools = models[0] if n_models == 1 else models
    with ae.Session.create(path, pools, measure, budget=400, seed=3, **extra) as s:
        while ids := s.next_batch(80):
            s.record({i: y[i] for i in ids})
        whole = _on_the_pool_by_estimator(s)
        with monkeypatch.context() as mp:
            mp.setattr(session_report, "_lean_trajectory", lambda *a: None)
            whole_path = s.trajectory(max_points=6)

    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(path) as s2:
            assert session_report._lean_classes(s2._stored, None) is not None
            lean = {how: s2.estimate(estimator=how) if n_models == 1 else
                    s2.compare(estimator=how) for how in ("assisted", "snis")}  # fmt: skip
            lean_path = s2.trajectory(max_points=6)
        _status_plots(mp, path, tmp_path)
        out = CliRunner().invoke(main, ["session", "status", str(path), "--json"])
        assert out.exit_code == 0, out.output
        key = "estimate" if n_models == 1 else "difference"
        assert json.loads(out.output)[key] == getattr(lean["assisted"], key)
    for how in ESTIMATORS:
        _assert_same_report(lean[how], whole[how])
    assert lean["assisted"].n_labels == 400 or extra.get("costs") is not None
    pd.testing.assert_frame_equal(lean_path, whole_path, check_exact=True)
    for res in (lean["assisted"], whole["assisted"]):  # no sequence, said alike on both paths
        with pytest.raises(ShapeError, match=f"{measure} \\(a function of several ratios"):
            res.confidence_interval(method="anytime")


def test_a_multi_class_average_labeled_whole_is_scikit_learns_value(tmp_path, monkeypatch):
    """Every instance labeled: the estimate from the counts is the census, scikit-learn's
    macro F1 of the pool, stderr 0; a pair's difference is the two exact values'."""
    models, y = _classes_pool(200, k=3, seed=4)
    path = tmp_path / "s.db"
    with ae.Session.create(path, models, "macro_f1", budget=200, seed=1, method="passive") as s:
        while ids := s.next_batch(100):
            s.record({i: y[i] for i in ids})
    want = [f1_score(y, mod.point_prediction(), average="macro") for mod in models]
    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(path) as s2:
            c = s2.compare()
    assert c.n_labels == 200 and c.stderr == 0.0 and c.comparison.census
    np.testing.assert_allclose(c.estimates, want, rtol=1e-12)
    assert c.difference == pytest.approx(want[0] - want[1], abs=1e-12)


def test_pool_counts_over_chunks_are_eq_4_21_and_a_stores_bit_for_bit(tmp_path) -> None:
    """The counts a model expects of itself (eq. 4.21), summed a chunk at a time, equal an
    independent sum by class (pandas) on a pool above one chunk, and the store's counts,
    read back a chunk at a time, equal the pool's to the bit."""
    from activeeval.estimators.classwise import on_pool
    from activeeval.session.summaries import read_class_summary

    m = ROWS + 5_000
    models, _ = _classes_pool(m, k=3, seed=2)
    proba = models[0].proba
    f = proba.argmax(axis=1)
    p = uniform(m)
    got = on_pool(proba, f, p)
    frame = pd.DataFrame({"f": f, "hit": p * proba[np.arange(m), f]})
    by = frame.groupby("f").sum()
    # bincount adds its terms one by one: a relative error up to (m − 1)·ε against pandas
    tol = m * np.finfo(float).eps
    np.testing.assert_allclose(got.counts.tp, by["hit"].to_numpy(), rtol=tol)
    np.testing.assert_allclose(got.counts.pp, np.bincount(f) / m, rtol=tol)
    np.testing.assert_allclose(got.counts.t, (proba * (1.0 / m)).sum(axis=0), rtol=tol)
    assert got.n_mass == m
    with ae.Session.create(tmp_path / "s.db", models[0], "macro_f1", budget=50, seed=0) as s:
        lean = read_class_summary(s._store, s._stored.plan)
        stored = lean.summary.pools[0]
        pool = s._stored.pool.counts(0)
    for name in ("tp", "pp", "t"):
        np.testing.assert_array_equal(getattr(stored.counts, name), getattr(pool.counts, name))
        np.testing.assert_array_equal(getattr(stored.counts, name), getattr(got.counts, name))
    assert stored.n_mass == pool.n_mass == m


def test_counts_and_q_of_a_fortran_ordered_pool_are_the_c_ordered_pools() -> None:
    """numpy's sums follow the memory layout: a pool held in Fortran order (as a whole-file
    read or a user's array may be) gives the counts and q* of the same pool in C order, bit
    for bit, as a store read a chunk at a time (C order) gives them."""
    from activeeval.estimators.classwise import on_pool
    from activeeval.sampling import comparison_distribution

    models, _ = _classes_pool(ROWS + 3_000, k=5, seed=6)
    a, b = (mod.proba for mod in models)
    fa, fb = np.asfortranarray(a), np.asfortranarray(b)
    p = uniform(a.shape[0])
    c, f = on_pool(a, a.argmax(axis=1), p).counts, on_pool(fa, a.argmax(axis=1), p).counts
    for name in ("tp", "pp", "t"):
        np.testing.assert_array_equal(getattr(c, name), getattr(f, name))
    for measure in ("macro_f1", "balanced_accuracy"):
        np.testing.assert_array_equal(q_star(fa, measure), q_star(a, measure))
        np.testing.assert_array_equal(
            comparison_distribution([fa, fb], measure), comparison_distribution([a, b], measure)
        )


def test_pool_counts_are_the_same_on_one_blas_thread(tmp_path) -> None:
    """A store made where BLAS runs one thread holds the counts a process with more computes
    (E[T] is not a BLAS product, whose rounding depends on the threads)."""
    import subprocess
    import sys

    from activeeval.estimators.classwise import on_pool

    code = (
        "import sys, numpy as np; from activeeval.estimators.classwise import on_pool\n"
        "rng = np.random.default_rng(7); proba = rng.dirichlet(np.full(4, 0.7), 200_000)\n"
        "c = on_pool(proba, proba.argmax(axis=1), np.full(200_000, 1 / 200_000)).counts\n"
        "sys.stdout.write(np.concatenate([c.tp, c.pp, c.t]).tobytes().hex())"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    one = np.frombuffer(bytes.fromhex(out.stdout), dtype=np.float64)
    rng = np.random.default_rng(7)
    proba = rng.dirichlet(np.full(4, 0.7), 200_000)
    c = on_pool(proba, proba.argmax(axis=1), np.full(200_000, 1 / 200_000)).counts
    np.testing.assert_array_equal(one, np.concatenate([c.tp, c.pp, c.t]))


def test_a_release_before_the_counts_does_not_read_them(tmp_path) -> None:
    """The counts are stored under a key of their own: a reader of one model's or a pair's
    summary (a release before them) finds none and reads its pool."""
    from activeeval.session.summaries import read_pair_summary, read_summary

    models, _ = _classes_pool(500)
    for pools in (models[0], models):
        path = tmp_path / f"s{len(np.atleast_1d(pools))}.db"
        with ae.Session.create(path, pools, "macro_f1", budget=50, seed=0) as s:
            plan = s._stored.plan
            assert read_summary(s._store, plan, 0) is None
            assert read_pair_summary(s._store, plan) is None
            assert session_report._lean_classes(s._stored, None) is not None


# ----------------------------------------------------- the thesis's estimator (snis)
@pytest.mark.parametrize(
    ("k", "plan", "measure", "n"),
    [(1, "snis", "f1", 300), (1, "assisted", "precision", 300), (2, "snis", "error_rate", 300),
     (2, "assisted", "f1", 300), (3, "snis", "f1", 300), (1, "snis", "precision", 3000)],
)  # fmt: skip
def test_the_thesis_estimator_reports_from_the_summary_what_its_pool_gives(
    tmp_path, monkeypatch, k, plan, measure, n
) -> None:
    """A session's estimate or comparison by the thesis's estimator (the plan's, or asked
    for instead of the model-assisted one, and the reverse) reads the summary and the
    labeled rows, bit for bit the pool's, with every pool read refused; its anytime interval,
    asked for, is the pool's too (the last case: the census)."""
    pools, y = (_pool("cat", 3_000)[0], _pool("cat", 3_000)[1]) if k == 1 else _pair(3_000, k=k)
    path = tmp_path / "s.db"
    with ae.Session.create(path, pools, measure, budget=n, seed=3, estimator=plan) as s:
        while ids := s.next_batch(100):
            s.record({i: y[i] for i in ids})
        whole = _on_the_pool_by_estimator(s)
        anytime = whole["snis"].confidence_interval(method="anytime") if k < 3 else None
    with monkeypatch.context() as mp:
        _no_pool(mp)
        with ae.Session.open(path) as s2:
            lean = {how: s2.estimate(estimator=how) if k == 1 else s2.compare(estimator=how)
                    for how in ("snis", "assisted")}  # fmt: skip
    for how in ESTIMATORS:
        _assert_same_report(lean[how], whole[how])
    if anytime is not None:  # the store is open again by path: the pool's terms, by snis
        assert lean["snis"].confidence_interval(method="anytime") == anytime


@pytest.mark.parametrize(
    ("k", "measure", "rule"),
    [(1, "f1", {"target_width": 0.3}), (1, "error_rate", {"claim": "error_rate <= 0.3"}),
     (1, "precision", {"target_width": 0.2, "rule": "fixed-width"}),
     (2, "error_rate", {"decide": True}),
     (2, "error_rate", {"target_width": 0.05, "rule": "fixed-width"})],
)  # fmt: skip
def test_the_thesis_estimator_under_a_rule_looks_from_its_summary_as_from_its_pool(
    tmp_path, monkeypatch, k, measure, rule
) -> None:
    """A rule session planned for the thesis's estimator looks, reports and gives its anytime
    interval from the summary (its σ₀ grid, the thesis's, stored at ``init``), bit for bit
    the pool's, with every pool read refused; asked for the other estimator, the same."""
    path = tmp_path / "s.db"
    if k == 1:
        pred, y = _pool("cat", 3_000, decision=measure == "precision")
        with ae.Session.create(path, pred, measure, budget=1_500, seed=3, estimator="snis",
                               **rule) as s:  # fmt: skip
            while ids := s.next_batch(25):
                s.record({i: y[i] for i in ids})
            assert session_report._lean(s._stored, 0, None).summary.sigma0_estimator == "snis"
            whole, stopped = _whole(s), s.stopped
            other = _on_the_pool_by_estimator(s)["assisted"]
        report = ae.Session.estimate
    else:
        whole, stopped = _pair_rule_session(path, measure, {**rule, "estimator": "snis"})
        report = ae.Session.compare
    assert stopped is not None and whole.stopped == stopped  # each rule stops early here
    lean = _looks_without_the_pool(monkeypatch, path, stopped, report)
    _assert_same_report(lean, whole)
    assert lean.stopped == whole.stopped and lean.interval == whole.interval
    assert lean.confidence_sequence().equals(whole.confidence_sequence())
    if k == 1:  # after the plan's estimator's look, the other's: its own look, as the pool's
        with monkeypatch.context() as mp:
            _no_pool(mp)
            with ae.Session.open(path) as s:
                assert s.estimate().stopped == stopped
                again = s.estimate(estimator="assisted")
        _assert_same_report(again, other)
        assert again.stopped == other.stopped
    else:
        assert lean.test(method="anytime") == whole.test(method="anytime")


@pytest.mark.parametrize("measure", ["macro_f1", "balanced_accuracy", "per_class_f1"])
def test_multi_class_q_moment_in_chunks_is_the_whole_arrays(measure: str) -> None:
    """q*'s moment of a multi-class average made in two chunked passes (the counts over the
    pool, then each instance's influence at them) equals the whole-array formula (eq. 4.6
    with ψ = ∇G·(c − S), S by model_counts) above one chunk, to rounding."""
    from activeeval.measures import decision_index, floored, influence_second_moment
    from activeeval.sampling import influence_moment

    models, _ = _classes_pool(ROWS + 3_000, k=4, seed=8)
    pred = models[0]
    meas = get_measure(measure).bind(pred)
    p = uniform(pred.n)
    a, mask, regular = influence_moment(pred, meas, p, floor=0.02)
    want = influence_second_moment(meas, floored(pred.proba, 0.02), decision_index(pred), p)
    assert mask.all() and regular
    np.testing.assert_allclose(a, want, rtol=1e-12)
