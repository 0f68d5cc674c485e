"""Smoke test of the peer adapters in benchmarks/peers.py (skipped when the peers are absent).

Run with:  python -m pytest -q benchmarks/test_peers_smoke.py
"""

from __future__ import annotations

import numpy as np
import peers
import pytest

N_POOL = 2000
BUDGET = 500
N_REPS = 20


def _pool(seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibrated synthetic pool: p ~ Beta(1, 3), y ~ Bernoulli(p), prediction = [p > 0.5]."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.0, 3.0, size=N_POOL)
    y = (rng.random(N_POOL) < p).astype(np.int64)
    pred = (p > 0.5).astype(np.int64)
    return y, pred, p


def _f_alpha(y: np.ndarray, pred: np.ndarray, alpha: float) -> float:
    tp = float(np.sum(y * pred))
    fp = float(np.sum((1 - y) * pred))
    fn = float(np.sum(y * (1 - pred)))
    return tp / (alpha * (tp + fp) + (1 - alpha) * (tp + fn))


def _near(est: np.ndarray, truth: float) -> None:
    """Mean of the replicate estimates within 4 standard errors (+0.01 for ratio bias)."""
    assert np.all(np.isfinite(est)), est
    se = float(np.std(est, ddof=1)) / np.sqrt(est.size)
    assert abs(float(np.mean(est)) - truth) <= 4 * se + 0.01, (np.mean(est), se, truth)


needs_oasis = pytest.mark.skipif(
    not peers.oasis_available(), reason=f"oasis not installed: {peers.oasis_import_error()}"
)
needs_ppi = pytest.mark.skipif(
    not peers.ppi_available(), reason=f"ppi_py not installed: {peers.ppi_import_error()}"
)


@needs_oasis
@pytest.mark.parametrize("sampler", ["oasis", "sawade_is", "passive", "druck"])
@pytest.mark.parametrize("alpha", [0.5, 0.0])
def test_oasis_samplers_near_truth(sampler: str, alpha: float) -> None:
    y, pred, p = _pool()
    truth = _f_alpha(y, pred, alpha)
    est = peers.run_oasis(y, pred, p, [BUDGET, 100], N_REPS, alpha=alpha, sampler=sampler, seed=1)
    assert est.shape == (N_REPS, 2)
    _near(est[:, 0], truth)
    # more labels should not make the spread worse by much
    assert np.nanstd(est[:, 0]) <= 1.5 * np.nanstd(est[:, 1]) + 1e-9


@needs_oasis
def test_oasis_distinct_label_accounting() -> None:
    y, pred, p = _pool()
    info = peers.run_oasis_with_info(y, pred, p, [50, 400], 3, sampler="oasis", seed=2)
    # sampling with replacement: at least as many iterations as distinct labels
    assert np.all(info.iterations >= 400)
    assert not info.exhausted.any()
    # without replacement (passive): exactly one label per iteration
    info = peers.run_oasis_with_info(y, pred, p, [50, 400], 3, sampler="passive", seed=2)
    assert np.all(info.iterations == 400)


@needs_oasis
def test_oasis_reproducible_and_leaves_global_rng_alone() -> None:
    y, pred, p = _pool()
    np.random.seed(123)  # noqa: NPY002
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    a = peers.run_oasis(y, pred, p, [60, 120], 4, sampler="oasis", seed=5)
    after = np.random.get_state()[1]  # noqa: NPY002
    assert np.array_equal(before, after)
    b = peers.run_oasis(y, pred, p, [60, 120], 4, sampler="oasis", seed=5, n_jobs=2)
    np.testing.assert_array_equal(a, b)


@needs_ppi
def test_ppi_mean_near_truth() -> None:
    y, pred, p = _pool()
    loss = (y != pred).astype(float)  # 0-1 loss
    loss_hat = np.where(pred == 1, 1.0 - p, p)  # model's expected 0-1 loss
    est = peers.run_ppi_mean(loss, loss_hat, [BUDGET, 100], N_REPS, seed=3)
    assert est.shape == (N_REPS, 2)
    _near(est[:, 0], float(loss.mean()))
    w = np.random.default_rng(4).uniform(0.5, 2.0, size=N_POOL)
    est_w = peers.run_ppi_mean(loss, loss_hat, [BUDGET], N_REPS, seed=3, weights=w)
    _near(est_w[:, 0], float(np.sum(w * loss) / np.sum(w)))


@needs_ppi
def test_ppi_importance_reduces_to_uniform_and_is_consistent() -> None:
    import ppi_py

    rng = np.random.default_rng(4)
    m = 3000
    yhat = rng.random(m)
    y = (rng.random(m) < yhat).astype(float)
    # Constant importance weights: ppi_py's unweighted estimate with the pool as unlabeled set.
    s = rng.choice(m, 200)
    got = peers.run_ppi_importance(y, yhat, [s], np.ones(m))[0]
    want = float(np.asarray(ppi_py.ppi_mean_pointestimate(y[s], yhat[s], yhat)).ravel()[0])
    assert got == pytest.approx(want, rel=1e-12)
    # Draws from a non-uniform q with weights 1/q: the mean over R samples is within 4 MC-SE
    # of the pool mean (self-normalised, O(1/n) bias far below that at n = 300).
    q = np.sqrt(yhat * (1 - yhat)) + 0.05
    q /= q.sum()
    est = peers.run_ppi_importance(y, yhat, [rng.choice(m, 300, p=q) for _ in range(300)], 1 / q)
    assert abs(est.mean() - y.mean()) <= 4 * est.std() / np.sqrt(est.size)
