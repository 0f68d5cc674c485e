"""measure="mean" and "proportion" (issue 27, Deliver 4): the mean of the label itself, from a
predictive distribution for the label — against enumeration, a census and seeded campaigns."""

from __future__ import annotations

import numpy as np
import pytest

import activeeval as ae
from activeeval.errors import LabelSpaceError, UnknownOptionError
from activeeval.sampling import optimal_distribution

M = 3000
VALUES = np.arange(1, 6)


def _ratings(seed: int, m: int = M) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet([0.7] * 5, m)


def _draw(proba: np.ndarray, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return values[(rng.random(proba.shape[0])[:, None] > np.cumsum(proba, 1)).sum(1)]


def test_q_is_thm_4_1_with_the_label_as_the_loss() -> None:
    """q* ∝ p·sqrt(E[(y − Ǧ)² | x]) with Ǧ = Σ_x p(x) E[y | x], enumerated over the values."""
    proba = _ratings(1, 50)
    mean = proba @ VALUES
    g = mean.mean()
    second = (proba * (VALUES - g) ** 2).sum(1)
    want = np.sqrt(second) / np.sqrt(second).sum()
    got = optimal_distribution(ae.Categorical(proba, labels=VALUES), "mean", mix=0.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_census_gives_the_pool_mean_exactly() -> None:
    rng = np.random.default_rng(2)
    proba = _ratings(2, 40)
    y = _draw(proba, VALUES, rng)
    res = ae.evaluate(ae.Categorical(proba, labels=VALUES), lambda i: y[i], "mean",
                      budget=40, method="passive", random_state=0)  # fmt: skip
    assert res.estimate == pytest.approx(y.mean(), abs=1e-12) and res.stderr == 0.0


@pytest.mark.parametrize("kind", ["ratings", "gaussian", "proportion"])
def test_campaigns_are_unbiased_and_cover(kind: str) -> None:
    """Pools drawn from the predictive distribution itself, 300 runs, 200 labels: bias within
    3 MC s.e., coverage ≥ 0.95 − 3 MC s.e., and the planner's standard error within the
    chi-square band of the spread."""
    rng = np.random.default_rng(5)
    if kind == "ratings":
        proba = _ratings(3)
        pred, measure = ae.Categorical(proba, labels=VALUES), "mean"

        def draw():
            return _draw(proba, VALUES, rng)
    elif kind == "gaussian":
        mu, sd = rng.normal(0, 1, M), rng.uniform(0.2, 2.0, M)
        pred, measure = ae.Gaussian.from_std(mu, sd), "mean"

        def draw():
            return mu + sd * rng.standard_normal(M)
    else:
        s = rng.beta(0.5, 2.0, M)
        pred, measure = s, "proportion"

        def draw():
            return (rng.random(M) < s).astype(int)

    reps = 300
    dev, hits = [], 0
    for r in range(reps):
        y = draw()
        res = ae.evaluate(pred, lambda i, y=y: y[i], measure, budget=200, random_state=r)
        dev.append(res.inference.estimate - y.mean())
        hits += res.ci[0] <= y.mean() <= res.ci[1]
    dev = np.asarray(dev)
    assert abs(dev.mean()) <= 3 * dev.std() / np.sqrt(reps)
    assert hits / reps >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)
    from scipy import stats

    v, pv = dev.var(ddof=1), ae.plan(pred, measure, [200]).stderr(200) ** 2
    assert v * (reps - 1) / stats.chi2.ppf(0.9995, reps - 1) <= pv
    assert pv <= v * (reps - 1) / stats.chi2.ppf(0.0005, reps - 1)


def test_what_mean_and_proportion_refuse(tmp_path) -> None:
    words = ae.Categorical(np.full((10, 2), 0.5), labels=np.array(["a", "b"]))
    with pytest.raises(LabelSpaceError, match="needs numeric labels"):
        ae.evaluate(words, lambda i: np.array(["a"] * len(i)), "mean", budget=5)
    with pytest.raises(LabelSpaceError, match="share of labels equal to 1"):
        ae.evaluate(ae.Categorical(_ratings(0, 10), labels=VALUES), lambda i: i, "proportion")
    with pytest.raises(UnknownOptionError, match="the same for every model"):
        ae.compare([np.full((10, 2), 0.5)] * 2, lambda i: np.zeros(len(i)), "mean")
    proba = _ratings(4, 300)
    y = _draw(proba, VALUES, np.random.default_rng(4))
    with ae.Session.create(tmp_path / "s.db", ae.Categorical(proba, labels=VALUES), "mean",
                           60) as s:  # fmt: skip
        ids = s.next_batch(60)
        s.record({i: int(y[i]) for i in ids})
        assert np.isfinite(s.estimate().estimate)
    with ae.Session.open(tmp_path / "s.db") as s:
        assert s.plan.measure == "mean"
    # a decision f(x) plays no part in the label's mean: refused, not ignored
    f = np.full(300, VALUES[0])
    cat = ae.Categorical(proba, labels=VALUES)
    with pytest.raises(UnknownOptionError, match="prediction: 'mean' is the mean of the label"):
        ae.evaluate(cat, lambda i: y[i], "mean", budget=20, prediction=f)
    with pytest.raises(UnknownOptionError, match="prediction: 'proportion' is the mean"):
        ae.evaluate(np.full(300, 0.4), lambda i: y[i] > 2, "proportion", budget=20,
                    prediction=np.zeros(300, dtype=int))  # fmt: skip
    with pytest.raises(UnknownOptionError, match="prediction: 'mean' is the mean of the label"):
        ae.compare([cat, cat], lambda i: y[i], "mean", budget=20, prediction=[None, f])
    with pytest.raises(UnknownOptionError, match="prediction: 'mean' is the mean of the label"):
        ae.Session.create(tmp_path / "t.db", cat, "mean", 60, prediction=f)
    assert not (tmp_path / "t.db").exists()


@pytest.mark.parametrize("peers", [True, False])
def test_label_mean_smoke_reproduction_writes_report(tmp_path, monkeypatch, peers) -> None:
    """With the peers installed here, and as on a machine without them (fresh clone)."""
    import json

    from reproduce import label_mean
    from reproduce import robustness as rb

    if not peers:
        monkeypatch.setattr(rb, "glide_available", lambda: False)
        monkeypatch.setattr(rb, "_ppi", lambda *a: {})

    result = label_mean.run(tmp_path, reps=8, budgets=(100, 200), smoke=True, log=lambda s: None)
    md = (tmp_path / "label_mean.md").read_text()
    assert md.startswith("# The mean of the label") and "## Figures" in md
    if not peers:
        assert "no peer ran" in md
    data = json.loads((tmp_path / "label_mean.json").read_text())
    assert data["reps"] == 8 and {s["measure"] for s in data["settings"]} == {"proportion"}
    for s in result["settings"]:
        assert 0.0 < s["truth"] < 1.0  # the pool's share of positives
        d = s["methods"]["default (q*, assisted)"]
        assert np.all(np.isfinite(d["mae"])) and np.all(np.isfinite(d["coverage"]))
