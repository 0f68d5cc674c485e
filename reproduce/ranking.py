"""Reproduction of thesis Sec. 6.3: active estimation and comparison of ranking functions.

Corpus: :func:`activeeval.datasets.load_movielens_ranking` (no learning-to-rank corpus ships
inside a registry package; see its docstring for the construction). Relevance models, as in
Sec. 6.3.1: a random-forest regressor on the grade (p(y | x, z) from its Gaussian prediction,
standard deviation from its out-of-bag residuals, :func:`~activeeval.grades_from_regression`),
a random-forest classifier over the grades, and a multinomial logit. Each ranking function
lists a query's candidates by expected grade.

Protocols (costs: summed item costs per query, mean one; budgets Λ in those units):

* estimation of DCG@10 / ERR@10 of the random-forest-regression ranker: mean absolute error vs
  Λ for ``active``, ``active_uniD``, ``active_uniC``, ``active_lambda``, ``passive`` with the
  thesis's estimator (eq. 6.9), and ``active`` with the model-assisted estimator;
* model selection (Sec. 6.3.2): the fraction of runs in which the sign of Δ̂ names the worse
  of two rankers, for RF regression vs RF classification and logit vs RF regression;
* a simulated index update (Sec. 6.3.2): the current ranker vs the same ranker with 10% of
  every list removed; mean absolute error of Δ̂ vs Λ.

Repetitions of static designs run vectorised (:func:`activeeval.demo.simulate_static`,
:mod:`.simulate`); the model-assisted estimator tunes its coefficient per sample, so it runs
per repetition on the same draws.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from activeeval._validation import check_random_state
from activeeval.datasets import RankingCorpus, load_movielens_ranking
from activeeval.demo import _Design, _draws_and_stops, simulate_static
from activeeval.estimators.assisted import (
    _estimate_from_terms,
    _paired_from_terms,
    _successive_rows,
    _value_pool,
    _value_terms,
)
from activeeval.methods import RANKING_METHODS
from activeeval.ranking import (
    DCG,
    ERR,
    GradedRelevance,
    QueryValue,
    RankingMeasure,
    grades_from_classifier,
    grades_from_regression,
    ranking_distribution,
    ranking_expectation,
    ranking_mixed_pair,
    ranking_pair_values,
    ranking_query_costs,
    ranking_union,
    ranking_values,
)

from .comparison import saved_labels
from .simulate import simulate_comparison

BUDGETS = (10, 20, 50, 100, 200, 400)
MEASURES: dict[str, RankingMeasure] = {"DCG@10": DCG(k=10), "ERR@10": ERR(k=10, max_grade=4)}
PAIRS = (("rf_regression", "rf_classification"), ("logit", "rf_regression"))


# ======================================================================= rankers
def _ranker(corpus: RankingCorpus, proba: NDArray[np.float64]) -> GradedRelevance:
    """The ranking function of a pointwise relevance model: each query's candidates by expected
    grade, best first (ties by item id)."""
    score = proba @ np.arange(proba.shape[1])
    query = np.repeat(np.arange(corpus.n_queries), np.diff(corpus.offsets))
    order = np.lexsort((corpus.items, -score, query))
    return GradedRelevance(
        proba[order], corpus.offsets, items=corpus.items[order], costs=corpus.item_costs[order]
    )


def fit_rankers(corpus: RankingCorpus, seed: int = 0) -> dict[str, GradedRelevance]:
    """Random-forest regression and classification and a multinomial logit, as rankers."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, g = corpus.X_train, corpus.y_train, corpus.n_grades
    forest = {"n_estimators": 100, "min_samples_leaf": 20, "max_features": 0.4, "n_jobs": -1}
    reg = RandomForestRegressor(oob_score=True, random_state=seed, **forest).fit(X, y)
    sd = float(np.sqrt(np.mean((reg.oob_prediction_ - y) ** 2)))
    mean = reg.predict(corpus.X_pool)
    clf = RandomForestClassifier(random_state=seed, **forest).fit(X, y)
    logit = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(X, y)
    return {
        "rf_regression": _ranker(corpus, grades_from_regression(mean, np.full_like(mean, sd), g)),
        "rf_classification": _ranker(
            corpus, grades_from_classifier(clf.predict_proba(corpus.X_pool), clf.classes_)
        ),
        "logit": _ranker(
            corpus, grades_from_classifier(logit.predict_proba(corpus.X_pool), logit.classes_)
        ),
    }


def index_update(rel: GradedRelevance, fraction: float = 0.1, seed: int = 0) -> GradedRelevance:
    """The ranker on an outdated index: round(fraction·|r(x)|) random items of every list
    removed (Sec. 6.3.2), the order of the rest kept."""
    rng = check_random_state(seed)
    query = rel.query_of_item
    order = np.lexsort((rng.random(rel.total_items), query))  # random order within queries
    rank = np.empty(rel.total_items, dtype=np.int64)
    rank[order] = np.arange(rel.total_items) - np.repeat(rel.offsets[:-1], rel.lengths)
    keep = rank >= np.round(fraction * rel.lengths)[query]
    lengths = np.bincount(query[keep], minlength=rel.n)
    offsets = np.zeros(rel.n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    assert rel.items is not None and rel.item_costs is not None
    return GradedRelevance(
        rel.proba[keep], offsets, items=rel.items[keep], costs=rel.item_costs[keep]
    )


def true_values(
    corpus: RankingCorpus, rel: GradedRelevance, meas: RankingMeasure
) -> NDArray[np.float64]:
    """ℓ(r(x), y) of every pool query under the true grades."""
    assert rel.items is not None
    grades = corpus.grades(np.arange(rel.n), rel.items, rel.offsets)
    return ranking_values(meas.bind(rel), grades, rel.offsets)


# ===================================================================== protocols
def _mae(est: NDArray[np.float64], truth: float) -> tuple[list[float], list[float]]:
    err = np.abs(est - truth)
    return list(np.nanmean(err, axis=0)), list(np.nanstd(err, axis=0) / np.sqrt(err.shape[0]))


def _assisted_runs(
    q: NDArray[np.float64],
    values: list[NDArray[np.float64]],
    expect: list[NDArray[np.float64]],
    lam: NDArray[np.float64] | None,
    budgets: NDArray[np.float64],
    reps: int,
    seed: int,
    meas: RankingMeasure,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Model-assisted estimates (one ranker) or differences (two) and standard errors per
    (rep, budget), on the draws and stopping rule of the campaign."""
    m = q.shape[0]
    draws, kept, _, _ = _draws_and_stops(_Design(q, budgets, lam, None, seed), reps)
    pools = [_value_pool(e, np.full(m, 1.0 / m)) for e in expect]
    qv = QueryValue(meas)
    est = np.full(kept.shape, np.nan)
    se = np.full(kept.shape, np.nan)
    p = np.full(m, 1.0 / m)
    for r in range(reps):
        for j in range(budgets.shape[0]):
            idx = draws[r, : kept[r, j]]
            pos, v, fpc = _successive_rows(idx, q, p)
            ir = idx[pos]
            parts = [_value_terms(x[ir], pl, ir) for x, pl in zip(values, pools, strict=True)]
            if len(parts) == 1:
                a: Any = _estimate_from_terms(v, parts[0], None, idx, 0.95, qv, fpc)
            else:
                a = _paired_from_terms(v, [parts], None, idx, 0.95, qv, fpc)
            est[r, j] = a.estimate if len(parts) == 1 else a.difference
            se[r, j] = a.stderr
    return est, se


def run_estimation(
    corpus: RankingCorpus,
    rel: GradedRelevance,
    name: str,
    budgets: NDArray[np.float64],
    reps: int,
    seed: int = 0,
) -> list[dict[str, Any]]:
    out = []
    lam = ranking_query_costs(rel)
    for mname, meas in MEASURES.items():
        bound = meas.bind(rel)
        values = true_values(corpus, rel, bound)
        truth = float(values.mean())
        row: dict[str, Any] = {"ranker": name, "measure": mname, "truth": truth, "curves": {}}
        for method in RANKING_METHODS:
            q = ranking_distribution(rel, bound, method=method)
            runs = simulate_static(
                q, values, np.ones_like(values), budgets, reps, costs=lam, random_state=seed
            )
            mae, mae_se = _mae(runs.estimate, truth)
            z = 1.959963984540054
            cover = np.abs(runs.estimate - truth) <= z * runs.stderr
            row["curves"][method] = {
                "mae": mae,
                "mae_se": mae_se,
                "coverage": list(np.mean(cover, axis=0)),
                "queries": list(np.mean(runs.n_labels, axis=0)),
            }
            if method == "active":
                expect = ranking_expectation(rel, bound)
                est, se = _assisted_runs(q, [values], [expect], lam, budgets, reps, seed, bound)
                mae, mae_se = _mae(est, truth)
                cover = np.abs(est - truth) <= z * se
                row["curves"]["active + assisted"] = {
                    "mae": mae,
                    "mae_se": mae_se,
                    "coverage": list(np.mean(cover, axis=0)),
                }
        out.append(row)
    return out


def run_pair(
    corpus: RankingCorpus,
    rel1: GradedRelevance,
    rel2: GradedRelevance,
    names: tuple[str, str],
    budgets: NDArray[np.float64],
    reps: int,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Model-selection error and |Δ̂ − Δ| vs Λ for two rankers of the same queries."""
    out = []
    lam = ranking_query_costs(rel1, rel2)
    items, offsets = ranking_union(rel1, rel2)
    grades = corpus.grades(np.arange(rel1.n), items, offsets)
    for mname, meas in MEASURES.items():
        v1, v2 = ranking_pair_values(rel1, rel2, meas, np.arange(rel1.n), grades)
        delta = float(v1.mean() - v2.mean())
        row: dict[str, Any] = {
            "rankers": list(names),
            "measure": mname,
            "values": [float(v1.mean()), float(v2.mean())],
            "curves": {},
        }
        wl = np.stack([v1, v2])
        for method in RANKING_METHODS:
            q = ranking_distribution([rel1, rel2], meas, method=method)
            runs = simulate_comparison(
                q, wl, np.ones_like(wl), budgets, reps, costs=lam, random_state=seed
            )
            row["curves"][method] = _pair_curve(runs.difference, delta)
            if method == "active":
                bound = meas.bind(rel1).bind(rel2)
                expect = [ranking_expectation(r, bound) for r in ranking_mixed_pair(rel1, rel2)]
                est, _ = _assisted_runs(q, [v1, v2], expect, lam, budgets, reps, seed, bound)
                row["curves"]["active + assisted"] = _pair_curve(est, delta)
        out.append(row)
    return out


def _pair_curve(diff: NDArray[np.float64], delta: float) -> dict[str, list[float]]:
    wrong = np.sign(diff) != np.sign(delta)
    sel = np.mean(wrong, axis=0)
    mae, mae_se = _mae(diff, delta)
    return {
        "selection_error": list(sel),
        "selection_error_se": list(np.sqrt(sel * (1 - sel) / diff.shape[0])),
        "mae": mae,
        "mae_se": mae_se,
    }


# ====================================================================== reporting
def run(out: Path, reps: int, budgets: tuple[int, ...] = BUDGETS, smoke: bool = False) -> dict:
    corpus = load_movielens_ranking(random_state=0)
    rankers = fit_rankers(corpus, seed=0)
    b = np.asarray(budgets, dtype=float)
    results: dict[str, Any] = {"reps": reps, "budgets": list(budgets), "corpus": {
        "queries": corpus.n_queries, "items": int(corpus.offsets[-1]),
        "description": corpus.description}}  # fmt: skip
    results["estimation"] = run_estimation(corpus, rankers["rf_regression"], "rf_regression", b,
                                           reps)  # fmt: skip
    pairs = PAIRS[:1] if smoke else PAIRS
    results["comparison"] = [
        row for a, c in pairs for row in run_pair(corpus, rankers[a], rankers[c], (a, c), b, reps)
    ]
    current = rankers["rf_regression"]
    results["index_update"] = run_pair(
        corpus, current, index_update(current), ("current index", "outdated index"), b, reps
    )
    _report(results, out)
    return results


def _saving(budgets: list[float], passive: list[float], active: list[float]) -> str:
    s = saved_labels(budgets, passive, active)
    return "n/a" if np.isnan(s) else f"{100 * s:.0f}%"


def _report(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    (out / "ranking.json").write_text(json.dumps(results, indent=1))
    budgets = results["budgets"]
    lines = [
        "# Active evaluation of ranking functions (thesis Sec. 6.3) on MovieLens",
        "",
        f"Generated by `make reproduce` ({results['reps']} repetitions per point; "
        f"{results['corpus']['queries']:,} queries, {results['corpus']['items']:,} items). "
        + results["corpus"]["description"],
        "Budgets Λ are in query-cost units (summed item costs, mean query = 1). "
        "'Saved' = 1 − Λ_active / Λ_passive at passive's error at the largest budget "
        "(interpolated in log Λ; a value at the grid floor means active is already there at "
        "the smallest budget).",
        "",
        "![The tables of this page against the budget Λ](ranking.png)",
        "",
        "## Estimation: mean absolute error vs Λ (RF-regression ranker)",
        "",
    ]
    panels = []
    for row in results["estimation"]:
        lines += [f"**{row['measure']}** (true value {row['truth']:.4f})", ""]
        lines += ["| method | " + " | ".join(f"Λ={x}" for x in budgets) + " | saved | cover@100 |"]
        lines += ["|---" * (len(budgets) + 3) + "|"]
        passive = row["curves"]["passive"]["mae"]
        for method, c in row["curves"].items():
            j = budgets.index(100) if 100 in budgets else -1
            lines.append(
                f"| {method} | " + " | ".join(f"{x:.4f}" for x in c["mae"])
                + f" | {_saving(budgets, passive, c['mae'])} | {c['coverage'][j]:.3f} |"
            )  # fmt: skip
        lines.append("")
        panels.append((f"estimation {row['measure']}", row["curves"], "mae"))
    for key, title in (("comparison", "Model selection"), ("index_update", "Index update")):
        lines += [f"## {title}", ""]
        metric = "selection_error" if key == "comparison" else "mae"
        for row in results[key]:
            a, c = row["rankers"]
            lines += [
                f"**{a} vs {c}, {row['measure']}** (true values {row['values'][0]:.4f} vs "
                f"{row['values'][1]:.4f}; {metric.replace('_', ' ')})",
                "",
                "| method | " + " | ".join(f"Λ={x}" for x in budgets) + " | saved |",
                "|---" * (len(budgets) + 2) + "|",
            ]
            passive = row["curves"]["passive"][metric]
            for method, cv in row["curves"].items():
                lines.append(
                    f"| {method} | " + " | ".join(f"{x:.4f}" for x in cv[metric])
                    + f" | {_saving(budgets, passive, cv[metric])} |"
                )  # fmt: skip
            lines.append("")
            panels.append((f"{a} vs {c} {row['measure']}", row["curves"], metric))
    (out / "ranking.md").write_text("\n".join(lines) + "\n")
    cols = 4
    rows_n = int(np.ceil(len(panels) / cols))
    fig, axes = plt.subplots(rows_n, cols, figsize=(4 * cols, 3.2 * rows_n), squeeze=False)
    for ax, (title, curves, metric) in zip(axes.flat, panels, strict=False):
        for method, cv in curves.items():
            ax.plot(budgets, cv[metric], marker="o", ms=3, label=method)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=8)
        ax.set_xlabel("Λ")
        ax.set_ylabel(metric.replace("_", " "))
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "ranking.png", dpi=110)
    plt.close(fig)
