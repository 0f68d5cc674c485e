"""Continuous evaluation (issue 31) on real bundled data: per-group estimates (Deliver 2) and
the measures of probabilities (Deliver 3).

Slices: ``evaluate(..., groups=g)`` with real groups of the pool (students or not, the
numbers an e-mail holds, caravan customers' main type, a diamond's cut) — q planned for the
groups (minimax or sum), the pool's q* ignoring them, passive — with every group's coverage,
width and MAE. Measures of probabilities: Brier score, log loss, ECE, ROC AUC and average
precision of calibrated models and of models whose probabilities are wrong (class-weighted, boosted,
naive Bayes), the default (``evaluate(proba, oracle, measure, budget)``) against passive
sampling — with the same estimator, and for the Brier score and log loss also the plain mean
of the uniform sample, which is scikit-learn's metric on it. MAE against the whole pool's
value (scikit-learn's metric on all its labels), coverage and width of the reported 95%
interval. No peer estimates these measures under unequal sampling (oasis: F-measures;
ppi_py, GLIDE: means), so passive sampling is the baseline. Reuse across campaigns
(Deliver 1): a weekly release, model v1 then v2 reusing v1's labels. Writes
``continuous.md`` and ``continuous.json``; ``sections=`` regenerates some sections and keeps
the others from the ``continuous.json`` already there.
"""

from __future__ import annotations

import functools
import json
import math
import multiprocessing
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import activeeval as ae
from activeeval.probability_measures import ProbabilityMeasure

BUDGETS = (100, 200, 400, 800)
MEASURES = ("brier", "log_loss", "ece", "roc_auc", "average_precision")
#: (method, estimator): the default first. For the ECE, ROC AUC and average precision the
#: estimator is one (``estimator`` applies to the Brier score and log loss only).
ARMS = (("active", "assisted"), ("passive", "assisted"), ("passive", "snis"))
#: (task, model); the models are fitted on the task's training split.
SETTINGS = (
    ("default_skew", "logistic"),
    ("default_skew", "balanced"),
    ("default_skew", "boosted"),
    ("caravan_skew", "logistic"),
    ("email_shift", "logistic"),
    ("email_shift", "naive Bayes"),
    ("digits_shift", "logistic"),
    ("digits_shift", "naive Bayes"),
    ("digits_shift", "boosted"),
)
#: The class scored by ROC AUC and average precision on the ten-class digits (one vs rest).
DIGIT = 3


def _covers(low: Any, high: Any, value: Any) -> Any:
    """Whether the interval holds the value, up to rounding: a census reports the exact
    value as a point, summed in another order than the truth here (1e-12 apart)."""
    tol = 1e-9 * np.maximum(1.0, np.abs(value))
    return (np.asarray(low) - tol <= value) & (value <= np.asarray(high) + tol)


def model(task: str, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The model's class probabilities on the task's pool, the pool's labels, the classes."""
    t = ae.load_task(task)
    est = {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000)),
        "balanced": make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=3000, class_weight="balanced")
        ),
        "naive Bayes": GaussianNB(),
        "boosted": HistGradientBoostingClassifier(max_iter=200, random_state=0),
    }[kind]
    est.fit(t.X_train, t.y_train)
    return est.predict_proba(t.X_pool), np.asarray(t.y_pool), est.classes_


def _arm(cat, y, measure, kw, method, estimator, budget, reps, g) -> dict[str, float]:
    errs, hits, widths = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            res = ae.evaluate(cat, lambda i: y[i], measure, budget=budget, method=method,
                              estimator=estimator, random_state=r, **kw)  # fmt: skip
            lo, hi = res.ci
            if math.isnan(res.estimate):  # no label of one side (ROC AUC, AP): undefined
                continue
            errs.append(abs(res.estimate - g))
            hits.append(_covers(lo, hi, g))
            widths.append(hi - lo)
    err = np.array(errs)
    return {"mae": float(err.mean()), "mae_se": float(err.std(ddof=1) / math.sqrt(len(err))),
            "coverage": float(np.mean(hits)), "width": float(np.mean(widths)),
            "undefined": reps - len(err)}  # fmt: skip


#: (task, model, grouping, measure) for the slices.
GROUP_SETTINGS = (
    ("default_skew", "logistic", "student", "error_rate"),
    ("default_skew", "logistic", "student", "f1"),
    ("email_shift", "logistic", "number", "error_rate"),
    ("caravan_skew", "logistic", "MOSHOOFD", "error_rate"),
    ("diamonds_regression", "Bayesian ridge", "cut", "mse"),
    # Models whose probabilities are wrong: overconfident boosted trees, naive Bayes.
    ("default_skew", "boosted", "student", "error_rate"),
    ("default_skew", "boosted", "student", "f1"),
    ("email_shift", "naive Bayes", "number", "error_rate"),
    ("caravan_skew", "boosted", "MOSHOOFD", "error_rate"),
)
#: The slices' models whose probabilities are wrong (summarized apart).
WRONG_MODELS = ("boosted", "naive Bayes")
GROUP_BUDGETS = (400, 800)
#: Campaigns per cell of the slices: the issue's coverage floor, 0.93, is nominal − 3 MC s.e.
#: at 1,000.
GROUP_REPS = 1000
#: The slices' arms: q for the groups (``groups=`` with each design), the pool's q* with
#: per-group estimates, uniform draws.
GROUP_ARMS = ("minimax", "sum", "pool q*", "passive")


def grouped_model(task: str, kind: str, grouping: str) -> tuple[Any, np.ndarray, np.ndarray]:
    """The model's predictive distribution on the pool, the labels and the group of each
    instance (a column of the pool's features)."""
    if task == "diamonds_regression":
        t = ae.load_task(task, random_state=0, train_size=2000, pool_size=10_000)
        reg = BayesianRidge().fit(t.X_train, t.y_train)
        pred: Any = ae.from_estimator(reg, t.X_pool)
    else:
        t = ae.load_task(task)
        proba, _, classes = model(task, kind)
        pred = ae.Categorical(proba, labels=classes)
    names = list(t.feature_names)
    if grouping == "number":  # none / small / big
        col = t.X_pool[:, names.index("number_small")] + 2 * t.X_pool[:, names.index("number_big")]
        groups = np.array(["none", "small", "big"])[col.astype(int)]
    else:
        groups = t.X_pool[:, names.index(grouping)].astype(int)
    return pred, np.asarray(t.y_pool), groups


def _group_arm(pred, y, groups, measure, arm, budget, reps, truth) -> dict[str, Any]:
    g = len(truth)
    est = np.full((reps, g), np.nan)
    hit = np.zeros((reps, g))
    width = np.full((reps, g), np.nan)
    expected = np.zeros(g)
    kw: dict[str, Any] = {"groups": groups}
    if arm in ("minimax", "sum"):
        kw["group_design"] = arm
    elif arm == "passive":
        kw["method"] = "passive"
    else:
        kw["q"] = ae.sampling.optimal_distribution(pred, measure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            res = ae.evaluate(pred, lambda i: y[i], measure, budget=budget, random_state=r, **kw)
            ci = res.ci
            est[r] = res.estimates
            hit[r] = _covers(ci[:, 0], ci[:, 1], truth)
            width[r] = ci[:, 1] - ci[:, 0]
            expected += res.expected_labels / reps
    err = np.abs(est - truth)
    defined = ~np.isnan(est)
    return {
        "mae": np.nanmean(err, axis=0).tolist(),
        "coverage": (np.where(defined, hit, 0).sum(0) / np.maximum(defined.sum(0), 1)).tolist(),
        "width": np.nanmean(width, axis=0).tolist(),
        "expected_labels": expected.tolist(),
        "undefined": (reps - defined.sum(0)).tolist(),
    }


@functools.cache
def _grouped(setting: tuple[str, str, str, str]) -> tuple[Any, np.ndarray, np.ndarray, Any]:
    """A slice setting's model, labels, groups and census (once per process)."""
    task, kind, grouping, measure = setting
    pred, y, groups = grouped_model(task, kind, grouping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        census = ae.evaluate(pred, y.__getitem__, measure, budget=len(y), method="passive",
                             groups=groups, max_draws=50 * len(y))  # fmt: skip
    return pred, y, groups, census


def _group_cell(setting: tuple[str, str, str, str], budget: int, arm: str, reps: int) -> Any:
    pred, y, groups, census = _grouped(setting)
    return _group_arm(pred, y, groups, setting[3], arm, budget, reps, census.estimates)


def run_groups(
    reps: int, budgets: tuple[int, ...] = GROUP_BUDGETS, smoke: bool = False,
    log: Callable[[str], None] = print, workers: int = 1,
    settings: tuple[tuple[str, str, str, str], ...] = GROUP_SETTINGS,
) -> list[dict[str, Any]]:  # fmt: skip
    """The slices: every setting (of ``settings``), budget and arm; the cells in ``workers``
    processes (each campaign seeded by its repetition, so the numbers do not depend on them)."""
    t0 = time.time()
    settings = settings[:1] if smoke else settings
    cells = [(st, b, a) for st in settings for b in budgets for a in GROUP_ARMS]
    args = [list(x) for x in zip(*cells, strict=True)] + [[reps] * len(cells)]
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            done = iter(list(ex.map(_group_cell, *args)))
    else:
        done = map(_group_cell, *args)
    rows = []
    for st in settings:
        task, kind, grouping, measure = st
        _, _, groups, census = _grouped(st)
        for b in budgets:
            arms = {a: next(done) for a in GROUP_ARMS}
            rows.append({"data": task, "model": kind, "grouping": grouping, "measure": measure,
                         "budget": b, "groups": [str(x) for x in np.unique(groups)],
                         "shares": census.shares.tolist(),
                         "values": census.estimates.tolist(), "arms": arms})  # fmt: skip
        log(f"continuous: groups {task}/{grouping} {measure} done ({time.time() - t0:.0f} s)")
    return rows


#: The weekly release: (task, measure); v1 a logistic regression on the older half of the
#: training data, v2 gradient boosting on all of it.
REUSE_SETTINGS = (
    ("email_shift", "f1"),
    ("email_shift", "error_rate"),
    ("default_skew", "f1"),
    ("default_skew", "error_rate"),
)
#: Labels bought for v1, then for v2.
OLD, NEW = 300, 200


def release(task: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """v1's and v2's class probabilities on the task's pool, and the pool's labels."""
    t = ae.load_task(task)
    half = len(t.y_train) // 2
    v1 = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000))
    v1.fit(t.X_train[:half], t.y_train[:half])
    v2 = HistGradientBoostingClassifier(max_iter=200, random_state=0).fit(t.X_train, t.y_train)
    return v1.predict_proba(t.X_pool), v2.predict_proba(t.X_pool), np.asarray(t.y_pool)


def run_reuse(
    reps: int, smoke: bool = False, log: Callable[[str], None] = print
) -> list[dict[str, Any]]:
    """v1 evaluated with OLD labels, then v2 with NEW more reusing them, against fresh
    campaigns of NEW and of OLD + NEW labels for v2."""
    t0 = time.time()
    rows = []
    for task, measure in REUSE_SETTINGS[:1] if smoke else REUSE_SETTINGS:
        p1, p2, y = release(task)
        m, oracle = len(y), y.__getitem__
        g = ae.evaluate(p2, y.__getitem__, measure, budget=m, method="passive",
                        max_draws=50 * m).estimate  # fmt: skip
        arms: dict[str, list[tuple[float, bool, float]]] = {
            "reuse": [],
            "fresh": [],
            "fresh all": [],
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for r in range(reps):
                old = ae.evaluate(p1, oracle, measure, budget=OLD, random_state=10**6 + r)
                runs = {
                    "reuse": ae.evaluate(p2, oracle, measure, budget=NEW, random_state=r,
                                         reuse=old),
                    "fresh": ae.evaluate(p2, oracle, measure, budget=NEW, random_state=r),
                    "fresh all": ae.evaluate(p2, oracle, measure, budget=OLD + NEW,
                                             random_state=r),
                }  # fmt: skip
                for a, res in runs.items():
                    lo, hi = res.ci
                    arms[a].append((res.estimate - g, bool(_covers(lo, hi, g)), hi - lo))
        cells = {}
        for a, vals in arms.items():
            e = np.array([v[0] for v in vals])
            cells[a] = {"mae": float(np.abs(e).mean()),
                        "mae_se": float(np.abs(e).std(ddof=1) / math.sqrt(reps)),
                        "bias": float(e.mean()), "bias_se": float(e.std(ddof=1) / math.sqrt(reps)),
                        "coverage": float(np.mean([v[1] for v in vals])),
                        "width": float(np.mean([v[2] for v in vals]))}  # fmt: skip
        rows.append({"data": task, "measure": measure, "value": float(g), "pool": m,
                     "arms": cells})  # fmt: skip
        log(f"continuous: reuse {task} {measure} done ({time.time() - t0:.0f} s)")
    return rows


def _measure_setting(task: str, kind: str, measure: str) -> tuple[Any, np.ndarray, dict, float]:
    """A setting's model, labels, the measure's keywords and its value on the pool."""
    proba, y, classes = _model_cached(task, kind)
    cat = ae.Categorical(proba, labels=classes)
    codes = cat.label_index(y, "labels")
    one_class = measure in ("roc_auc", "average_precision") and len(classes) > 2
    kw = {"pos_label": DIGIT} if one_class else {}
    meas = ae.get_measure(measure, **kw).bind(cat)
    assert isinstance(meas, ProbabilityMeasure)
    m = len(y)
    return cat, y, kw, meas.value(proba, codes, np.full(m, 1 / m))


@functools.lru_cache(maxsize=2)
def _model_cached(task: str, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return model(task, kind)


def _measure_cell(task: str, kind: str, measure: str, budget: int, arm: tuple[str, str],
                  reps: int) -> dict[str, float]:  # fmt: skip
    cat, y, kw, g = _measure_setting(task, kind, measure)
    return _arm(cat, y, measure, kw, arm[0], arm[1], budget, reps, g)


def run_measures(
    reps: int, budgets: tuple[int, ...] = BUDGETS, smoke: bool = False,
    log: Callable[[str], None] = print, workers: int = 1,
    measures: tuple[str, ...] = MEASURES,
) -> list[dict[str, Any]]:  # fmt: skip
    """The ``measures`` of probabilities: every setting, measure, budget and arm; the cells
    in ``workers`` processes (each campaign seeded by its repetition, so the numbers do not
    depend on them; spawned, not forked: a fork after the parent's OpenMP threads ran — a
    boosted model fitted — can hang its children)."""
    t0 = time.time()
    settings = SETTINGS[:1] + SETTINGS[6:7] if smoke else SETTINGS
    plan = []  # (task, kind, measure, budget, arms)
    for task, kind in settings:
        m = len(ae.load_task(task).y_pool)
        for measure in (x for x in MEASURES if x in measures):
            arms = ARMS if measure in ("brier", "log_loss") else ARMS[:2]
            plan += [(task, kind, measure, b, arms) for b in budgets if b < 0.5 * m]
    cells = [(tk, kd, ms, b, a, reps) for tk, kd, ms, b, arms in plan for a in arms]
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            done = iter(list(ex.map(_measure_cell, *zip(*cells, strict=True))))
    else:
        done = (_measure_cell(*c) for c in cells)
    rows = []
    for task, kind, measure, b, arms in plan:
        cat, _, _, g = _measure_setting(task, kind, measure)
        rows.append({"data": task, "model": kind, "pool": cat.n, "classes": len(cat.labels),
                     "measure": measure, "budget": b, "value": g,
                     "arms": {f"{a}/{e}": next(done) for a, e in arms}})  # fmt: skip
        if b == max(x for x in budgets if x < 0.5 * cat.n):
            log(f"continuous: {task}/{kind} {measure} done ({time.time() - t0:.0f} s)")
    return rows


#: The report's sections and the keys of continuous.json each writes.
SECTIONS = {
    "measures": ("reps", "budgets", "rows", "seconds"),
    "groups": ("group_reps", "groups", "group_seconds"),
    "reuse": ("reuse", "reuse_seconds"),
}


def run(
    out: Path, reps: int, budgets: tuple[int, ...] = BUDGETS, smoke: bool = False,
    log: Callable[[str], None] = print, sections: tuple[str, ...] = tuple(SECTIONS),
    workers: int = 1, measures: tuple[str, ...] = MEASURES, slices: tuple[str, ...] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The ``sections`` (all by default), written to ``out``: continuous.json and
    continuous.md, the other sections kept from the continuous.json there; of the measures
    section, the rows of ``measures``, and of the slices those of the ``slices`` models
    ("task/model"; None: all), the others kept likewise."""
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"sections: unknown {sorted(unknown)}; choose from {list(SECTIONS)}")
    result: dict[str, Any] = {}
    if set(sections) != set(SECTIONS):
        kept = json.loads((out / "continuous.json").read_text())
        result = {k: kept[k] for s in SECTIONS if s not in sections for k in SECTIONS[s]}
    if "measures" in sections:
        t0 = time.time()
        rows = run_measures(reps, budgets, smoke, log, workers=workers, measures=measures)
        if set(measures) != set(MEASURES):  # the others' rows kept, in the report's order
            kept = json.loads((out / "continuous.json").read_text())
            assert kept["reps"] == reps and kept["budgets"] == list(budgets)

            def key(r: dict[str, Any]) -> tuple[Any, ...]:
                return r["data"], r["model"], r["measure"], r["budget"]

            fresh = {key(r): r for r in rows}
            assert set(fresh) <= {key(r) for r in kept["rows"]}
            rows = [fresh.get(key(r), r) for r in kept["rows"]]
        result.update(reps=reps, budgets=list(budgets), rows=rows,
                      seconds=round(time.time() - t0, 1))  # fmt: skip
    if "groups" in sections:
        t0, g_reps = time.time(), min(reps, GROUP_REPS)
        chosen = GROUP_SETTINGS if slices is None else tuple(
            st for st in GROUP_SETTINGS if f"{st[0]}/{st[1]}" in slices
        )  # fmt: skip
        if slices is not None and len(chosen) < len(set(slices)):
            known = sorted({f"{st[0]}/{st[1]}" for st in GROUP_SETTINGS})
            raise ValueError(f"slices: unknown {sorted(slices)}; choose from {known}")
        group_rows = run_groups(g_reps, budgets=(400,) if smoke else GROUP_BUDGETS,
                                smoke=smoke, log=log, workers=workers, settings=chosen)  # fmt: skip
        seconds = time.time() - t0
        if slices is not None:  # the other settings' rows kept, in GROUP_SETTINGS' order
            kept = json.loads((out / "continuous.json").read_text())
            assert kept["group_reps"] == g_reps

            def gkey(r: dict[str, Any]) -> tuple[Any, ...]:
                return r["data"], r["model"], r["grouping"], r["measure"]

            by = {(gkey(r), r["budget"]): r for r in kept["groups"]}
            by.update({(gkey(r), r["budget"]): r for r in group_rows})
            group_rows = [by[(st, b)] for st in GROUP_SETTINGS for b in GROUP_BUDGETS
                          if (st, b) in by]  # fmt: skip
            seconds += kept["group_seconds"]
        result.update(group_reps=g_reps, groups=group_rows,
                      group_seconds=round(seconds, 1))  # fmt: skip
    if "reuse" in sections:
        t0 = time.time()
        result.update(reuse=run_reuse(reps, smoke=smoke, log=log),
                      reuse_seconds=round(time.time() - t0, 1))  # fmt: skip
    write(out, result)
    return result


def write(out: Path, result: dict[str, Any]) -> None:
    """continuous.json and continuous.md in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "continuous.json").write_text(json.dumps(result, indent=1))
    (out / "continuous.md").write_text(report(result))


def report(res: dict[str, Any]) -> str:
    reps = res["reps"]
    cov_se = math.sqrt(0.95 * 0.05 / reps)
    default = "active/assisted"
    lines = [
        "# Continuous evaluation",
        "",
        "Issue 31: reusing labels across campaigns (Deliver 1), per-group estimates "
        "(Deliver 2) and the measures of probabilities (Deliver 3).",
        "",
        *_reuse_report(res),
        *_group_report(res),
        "## Measures of probabilities",
        "",
        "Generated by `python -m reproduce --only continuous` "
        f"({reps} campaigns per cell, {res['seconds']:.0f} s). The default "
        "(`evaluate(proba, oracle, measure, budget)`) against passive sampling with the same "
        "estimator (`passive/assisted`) and, for the Brier score and log loss, the plain mean "
        "of a uniform sample (`passive/snis`, scikit-learn's metric on it). The default's "
        "design: q* from the measure's influence function (eq. 4.6) — under the floored "
        "model for the Brier score and ECE, under the model as it is for ROC AUC and average "
        "precision (the floor makes a rare positive class common; ROC AUC in two stages: a "
        "quarter of the budget from that q*, the rest from q* under the Platt recalibration "
        "σ(a·logit + b) of the model the first labels fit best, where they reject the "
        "model's own probabilities at 0.95), and the pool distribution "
        "itself for the log loss (no model-based q beat uniform draws on these pools: the "
        "log loss is unbounded where the model is confidently wrong, which its own "
        "probabilities cannot show) — with the defensive mixture ε = 0.1. Estimators: the "
        "model-assisted mean for the Brier score and log loss, its Wald interval joined with "
        "the score interval along recalibrations of the model (`tempered`: for two classes "
        "the Platt family σ(a·logit + b) and the tempered one, for more the top-label family "
        "p^a·e^(b·1[top]) and the tempered one); the post-stratified bins for "
        "the ECE (its interval projects Bonferroni-simultaneous Wilson intervals of the bins' "
        "frequencies, conservative by construction); the importance-weighted sample AUC and "
        "average precision with the jackknife's standard error, their logit intervals joined "
        "with the score interval along the Platt and tempered recalibrations "
        "(`activeeval.estimators.probability`, derived on the Intervals page). The passive "
        "arms use the same estimators and intervals.",
        "",
        "Pools: credit-card default (`default_skew`, 3.3 % positives, a pool of 8,000), caravan "
        "insurance (`caravan_skew`, 6 %), spam under temporal shift (`email_shift`, 10 %) and "
        f"digits with the order shift (`digits_shift`, ten classes; ROC AUC and average "
        f"precision of digit {DIGIT} against the rest, the ECE top-label). Models: logistic "
        'regression, the same with `class_weight="balanced"` (inflated rare-class '
        "probabilities), gradient boosting (overconfident) and Gaussian naive Bayes "
        "(badly overconfident).",
        "",
        f"MAE ± its Monte-Carlo s.e.; coverage of the 95% interval (MC s.e. {cov_se:.3f}); "
        "`ratio`: the default's MAE over the best passive arm's (below 1: the default is "
        "ahead). ROC AUC and average precision are undefined on draws without a label of "
        "one side (no positive among them, say); such campaigns (`undef.`: the default's, "
        "then passive's) are left out of MAE and coverage.",
        "",
        "| data | model | measure | budget | value | default MAE | cov. | width | "
        "passive MAE (cov.) | passive/snis MAE (cov.) | undef. | ratio |",
        "|---" * 12 + "|",
    ]
    at400: dict[str, list[tuple[float, str]]] = {}
    worst: dict[str, float] = {}
    for r in res["rows"]:
        d = r["arms"][default]
        others = [k for k in r["arms"] if k != default]
        b = r["arms"][min(others, key=lambda o: r["arms"][o]["mae"])]
        ratio = d["mae"] / b["mae"] if b["mae"] > 0 else math.nan
        if r["budget"] == 400:  # ahead, tied or behind by 2 MC s.e. of the MAE difference
            gap = (d["mae"] - b["mae"]) / math.hypot(d["mae_se"], b["mae_se"])
            side = "ahead" if gap < -2 else ("behind" if gap > 2 else "tied")
            at400.setdefault(r["measure"], []).append((ratio, side))
        worst[r["measure"]] = min(worst.get(r["measure"], 1.0), d["coverage"])
        snis = r["arms"].get("passive/snis")
        snis_cell = f"{snis['mae']:.4f} ({snis['coverage']:.3f})" if snis else "—"
        p = r["arms"]["passive/assisted"]
        lines.append(
            f"| {r['data']} | {r['model']} | {r['measure']} | {r['budget']} | "
            f"{r['value']:.4f} | {d['mae']:.4f} ± {d['mae_se']:.4f} | {d['coverage']:.3f} | "
            f"{d['width']:.4f} | {p['mae']:.4f} ({p['coverage']:.3f}) | {snis_cell} | "
            f"{d.get('undefined', 0)}, {p.get('undefined', 0)} | {ratio:.2f} |"
        )
    lines += ["", "### Summary at 400 labels (the issue's figure: MAE ≤ passive's)", "",
              "Ahead / tied / behind: the default's MAE against the best passive arm's, by more "
              "than two Monte-Carlo standard errors of the difference, or not.", ""]  # fmt: skip
    lines += ["| measure | cells | ahead | tied | behind | ratios | lowest coverage, any budget |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for meas in MEASURES:
        rs = at400.get(meas, [])
        if not rs:
            continue
        count = {side: sum(x[1] == side for x in rs) for side in ("ahead", "tied", "behind")}
        ratios = [x[0] for x in rs]
        lines.append(
            f"| {meas} | {len(rs)} | {count['ahead']} | {count['tied']} | {count['behind']} | "
            f"{min(ratios):.2f}–{max(ratios):.2f} | {worst[meas]:.3f} |"
        )
    return "\n".join(lines) + "\n"


def _group_report(res: dict[str, Any]) -> list[str]:
    rows = res.get("groups", [])
    if not rows:
        return []
    reps = res["group_reps"]
    cov_se = math.sqrt(0.95 * 0.05 / reps)
    lines = [
        "## Per-group estimates",
        "",
        "Generated by `python -m reproduce --only continuous` "
        f"({reps} campaigns per cell, {res['group_seconds']:.0f} s). "
        "`evaluate(pred, oracle, measure, budget, groups=g)` with real groups of the pool: "
        "q planned for the groups (`minimax`, the default: the largest group variance; "
        "`sum`: the sum of the groups' variances; `activeeval.sampling.grouped_distribution`), "
        "the pool's q* ignoring the groups (`pool q*`, the same per-group estimates), and "
        "uniform draws (`passive`). Pools: credit-card default by student status "
        "(`default_skew`), spam by the numbers an e-mail holds "
        "(`email_shift`: none, small, big), caravan insurance by the customer's main type "
        "(`caravan_skew`, ten types, the smallest 29 of 3,822), each scored by a logistic "
        "regression"
        + (
            " and by a model whose probabilities are wrong (gradient-boosted trees, "
            "overconfident; naive Bayes on spam)"
            if any(r["model"] in WRONG_MODELS for r in rows)
            else ""
        )
        + ", and the log price of a diamond by its cut "
        "(`diamonds_regression`, a Bayesian ridge regression's Gaussian, MSE).",
        "",
        f"Per group: coverage of the 95% interval (MC s.e. {cov_se:.3f}), mean width, MAE, "
        "and the expected labels (the distinct instances of the group the draws label, in "
        "expectation: Σ 1 − (1 − q)^n). The issue's figure: "
        "coverage ≥ 0.93 for every group with ≥ 30 expected labels.",
        "",
    ]
    worst: dict[bool, dict[str, list[float]]] = {
        w: {a: [] for a in GROUP_ARMS} for w in (False, True)
    }
    for r in rows:
        wrong = r["model"] in WRONG_MODELS
        lines += [
            f"### {r['data']} / {r['model']} by {r['grouping']}: {r['measure']}, "
            f"{r['budget']} labels",
            "",
            "| group | share | value | "
            + " | ".join(f"{a}: cov. / width / MAE (labels)" for a in GROUP_ARMS)
            + " |",
            "|---" * (3 + len(GROUP_ARMS)) + "|",
        ]
        for k, g in enumerate(r["groups"]):
            cells = []
            for a in GROUP_ARMS:
                d = r["arms"][a]
                cells.append(
                    f"{d['coverage'][k]:.3f} / {d['width'][k]:.4f} / {d['mae'][k]:.4f} "
                    f"({d['expected_labels'][k]:.0f})"
                )
                if d["expected_labels"][k] >= 30:
                    worst[wrong][a].append(d["coverage"][k])
            lines.append(
                f"| {g} | {r['shares'][k]:.3f} | {r['values'][k]:.4f} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    lines += ["### Summary: groups with ≥ 30 expected labels", "",
              "| models | arm | groups × cells | lowest coverage | below 0.93 |",
              "|---|---|---|---|---|"]  # fmt: skip
    for wrong, name in ((False, "as fitted"), (True, "probabilities wrong")):
        for a in GROUP_ARMS:
            covs = worst[wrong][a]
            if covs:
                below = sum(c < 0.93 for c in covs)
                lines.append(f"| {name} | {a} | {len(covs)} | {min(covs):.3f} | {below} |")
    return [*lines, ""]


def _reuse_report(res: dict[str, Any]) -> list[str]:
    rows = res.get("reuse", [])
    if not rows:
        return []
    reps = res["reps"]
    lines = [
        "## Reusing labels: a weekly release",
        "",
        f"Generated by `python -m reproduce --only continuous` ({reps} runs per cell, "
        f"{res['reuse_seconds']:.0f} s). Model v1 (a logistic regression on the older half of "
        "the training data) is evaluated with "
        f"{OLD} labels (`evaluate(v1, oracle, measure, budget={OLD})`, the default q*); then "
        f"v2 (gradient boosting on all of it) with {NEW} more, reusing them "
        f"(`evaluate(v2, oracle, measure, budget={NEW}, reuse=old)`: v1's labels are free, "
        "v2's draws come from v2's own q*, and every draw is weighted by p over the mixture "
        "of the two q — multiple importance sampling with the balance heuristic). Against a "
        f"fresh campaign for v2 of {NEW} labels and one of {OLD + NEW}. MAE against v2's value "
        "on the whole pool, bias ± its MC s.e., coverage and width of the 95% interval. The "
        f"issue's figure: MAE with reuse ≤ 0.8 × the fresh {NEW}-label campaign's, coverage "
        "≥ 0.93.",
        "",
        "| data | measure | value | reuse MAE (cov.) | bias | fresh "
        f"{NEW} MAE (cov.) | fresh {OLD + NEW} MAE (cov.) | reuse / fresh {NEW} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a = r["arms"]
        u, f, fa = a["reuse"], a["fresh"], a["fresh all"]
        lines.append(
            f"| {r['data']} | {r['measure']} | {r['value']:.4f} | {u['mae']:.4f} ± "
            f"{u['mae_se']:.4f} ({u['coverage']:.3f}) | {u['bias']:+.4f} ± {u['bias_se']:.4f} | "
            f"{f['mae']:.4f} ({f['coverage']:.3f}) | {fa['mae']:.4f} ({fa['coverage']:.3f}) | "
            f"{u['mae'] / f['mae']:.2f} |"
        )
    return [*lines, ""]
