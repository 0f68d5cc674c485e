"""Reusing an earlier campaign's labels (issue 31, Deliver 1): ``evaluate(..., reuse=)`` and
``compare(..., reuse=)``. The combined estimate weighs every draw by p over the mixture of the
two campaigns' q (multiple importance sampling, balance heuristic): it is unbiased when the
old and new q differ (seeded Monte Carlo, 3 s.e.), its interval covers, old labels are free
and never asked again, and what cannot be reused is refused before any label."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import f1_score

import activeeval as ae
from activeeval.errors import LabelSpaceError, ShapeError, UnknownOptionError
from activeeval.sampling import optimal_distribution

M = 2000


def _models(seed: int = 0):
    """Labels, an older model and a newer one that errs differently."""
    rng = np.random.default_rng(seed)
    truth = rng.beta(0.7, 1.6, size=M)
    y = (rng.uniform(size=M) < truth).astype(int)
    v1 = np.clip(truth + rng.normal(0, 0.15, M), 0.01, 0.99)
    v2 = np.clip(truth + rng.normal(0, 0.08, M), 0.01, 0.99)
    return y, np.c_[1 - v1, v1], np.c_[1 - v2, v2]


def test_reused_labels_are_free_and_never_asked_again() -> None:
    y, p1, p2 = _models()
    asked: list[np.ndarray] = []

    def oracle(i):
        asked.append(np.asarray(i))
        return y[i]

    old = ae.evaluate(p1, oracle, "error_rate", budget=150, random_state=0)
    first = np.unique(np.concatenate(asked))
    asked.clear()
    new = ae.evaluate(p2, oracle, "f1", budget=100, random_state=1, reuse=old)
    again = np.concatenate(asked)
    assert not np.isin(again, first).any() and again.size == 100
    assert new.n_labels == 250 and new.cost == 100
    np.testing.assert_array_equal(new.indices[: old.n_draws], old.indices)
    # the reported weights are the balance heuristic's mixture, over the whole pool
    n1, n2 = old.n_draws, new.n_draws - old.n_draws
    q2 = optimal_distribution(p2, "f1")
    mixture = (n1 * old.pool_q + n2 * q2) / (n1 + n2)
    np.testing.assert_allclose(new.pool_q, mixture, rtol=1e-12)
    np.testing.assert_allclose(new.q, mixture[new.indices], rtol=1e-12)


@pytest.mark.parametrize(
    ("measure", "estimator"),
    [("f1", "assisted"), ("error_rate", "snis"), ("macro_f1", "assisted"), ("brier", "assisted")],
)
def test_reused_estimates_are_unbiased_when_the_old_and_new_q_differ(measure, estimator) -> None:
    y, p1, p2 = _models(1)
    f2 = p2.argmax(axis=1)
    truth = {
        "f1": f1_score(y, f2),
        "macro_f1": f1_score(y, f2, average="macro"),
        "error_rate": float(np.mean(f2 != y)),
        "brier": float(np.mean((p2[:, 1] - y) ** 2)),
    }[measure]
    q1 = optimal_distribution(p1, "error_rate")
    assert np.abs(q1 - optimal_distribution(p2, measure)).sum() > 0.1  # the designs differ
    reps, est, hits = 300, [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            old = ae.evaluate(p1, lambda i: y[i], "error_rate", budget=120, random_state=5000 + r)
            res = ae.evaluate(p2, lambda i: y[i], measure, budget=80, random_state=r,
                              reuse=old, estimator=estimator)  # fmt: skip
            est.append(res.estimate)
            hits += res.ci[0] <= truth <= res.ci[1]
    e = np.array(est)
    assert abs(e.mean() - truth) < 3 * e.std(ddof=1) / math.sqrt(reps), (e.mean(), truth)
    assert hits / reps >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps), hits / reps


def test_compare_reuses_an_evaluation_and_a_session() -> None:
    y, p1, p2 = _models(2)
    old = ae.evaluate(p1, lambda i: y[i], "error_rate", budget=150, random_state=0)
    cmp = ae.compare([p1, p2], lambda i: y[i], "error_rate", budget=100, random_state=1,
                     reuse=old)  # fmt: skip
    assert cmp.n_labels == 250 and cmp.pool_q is not None
    again = ae.evaluate(p2, lambda i: y[i], "error_rate", budget=50, random_state=2, reuse=cmp)
    assert again.n_labels == 300  # a reuse of a reuse: its draws came from its mixture


def test_a_session_is_reused_through_its_labeled_prefix(tmp_path) -> None:
    y, p1, p2 = _models(3)
    s = ae.Session.create(tmp_path / "s.db", p1, "error_rate", 60, seed=0)
    ids = s.next_batch(60)
    s.record(dict(zip(ids, y[np.asarray(ids)].tolist(), strict=True)))
    res = ae.evaluate(p2, lambda i: y[i], "error_rate", budget=40, random_state=0, reuse=s)
    assert res.n_labels == 100
    np.testing.assert_array_equal(res.indices[: s.estimate().n_draws], s.estimate().indices)


@pytest.mark.parametrize(
    ("kwargs", "head"),
    [({"target_width": 0.05}, "target_width"), ({"batch_size": 20}, "batch_size"),
     ({"method": "stratified"}, "method"), ({"groups": np.zeros(M)}, "groups")],
)  # fmt: skip
def test_what_reuse_does_not_take_is_refused_by_name(kwargs, head) -> None:
    y, p1, p2 = _models(4)
    old = ae.evaluate(p1, lambda i: y[i], budget=50, random_state=0)
    with pytest.raises(UnknownOptionError, match=rf"^{head}:"):
        ae.evaluate(p2, lambda i: y[i], budget=50, reuse=old, **kwargs)


def test_what_cannot_be_reused_is_refused() -> None:
    y, p1, p2 = _models(5)
    batched = ae.evaluate(p1, lambda i: y[i], budget=100, batch_size=50, random_state=0)
    no_q = r"^reuse: the earlier result carries no q — its campaign's q changed"
    with pytest.raises(UnknownOptionError, match=no_q):
        ae.evaluate(p2, lambda i: y[i], budget=50, reuse=batched)
    one_q = ae.evaluate(p1, lambda i: y[i], budget=100, random_state=0)
    small = ae.evaluate(p1[:500], lambda i: y[i], budget=50, random_state=0)
    with pytest.raises(ShapeError, match=r"^reuse: the earlier campaign's pool has 500"):
        ae.evaluate(p2, lambda i: y[i], budget=50, reuse=small)
    with pytest.raises(ShapeError, match=r"^reuse: expected an earlier result"):
        ae.evaluate(p2, lambda i: y[i], budget=50, reuse=[1, 2])
    named = ae.Categorical(p2, labels=np.array(["no", "yes"]))
    with pytest.raises(LabelSpaceError, match=r"^reuse: the earlier campaign's labels do not"):
        ae.evaluate(named, lambda i: np.where(y[i] == 1, "yes", "no"), budget=50, reuse=one_q)


def test_reusing_a_census_or_an_empty_session(tmp_path) -> None:
    y, p1, p2 = _models(6)
    small = p1[:50], p2[:50]
    census = ae.evaluate(small[0], lambda i: y[i], budget=50, method="passive", max_draws=5000,
                         random_state=0)  # fmt: skip
    res = ae.evaluate(small[1], lambda i: y[i], "f1", budget=10, reuse=census, random_state=0)
    assert res.cost == 0 and res.n_labels == 50 and res.ci == (res.estimate, res.estimate)
    assert res.estimate == pytest.approx(f1_score(y[:50], small[1].argmax(axis=1)))
    s = ae.Session.create(tmp_path / "empty.db", p1, "error_rate", 20, seed=0)
    fresh = ae.evaluate(p2, lambda i: y[i], budget=30, random_state=0, reuse=s)
    assert fresh.n_labels == 30
