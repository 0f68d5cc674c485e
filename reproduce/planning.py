"""Validation of the budget planner and of the one-sided bounds (issue 28, Deliver 4).

For every real pool of the stress suite (``reproduce/robustness.py``: e-mail with its time
shift, credit default, caravan, digits 3 vs rest, diamonds) and every model there, the
planner's predicted width of the default's 95% interval (:func:`activeeval.plan`, before any
label) at 100 / 200 / 400 / 800 labels is set against the mean width the default
(``evaluate(method="active")``: q* with the model-assisted estimator) realizes over the
campaigns, and passive's prediction against passive's campaigns. Re-planning: each campaign's
first 50 labels re-plan (:meth:`activeeval.Plan.replan` on what its result at 50 labels holds:
the draws, their labels, the estimate and its standard error) and the median over campaigns of
re-planned ÷ realized width is reported.

Calibrated models. The real labels are not those of a calibrated model even for the plain
logistic regressions (the e-mail pool is shifted in time; digits' regression is overconfident),
so each pool also appears with labels drawn once from its logistic regression's (diamonds: its
Bayesian ridge's) predictive distribution: the same features, predictions and q, a model
calibrated by construction ("calibrated (labels from the model)").

One-sided bounds. The same campaigns' one-sided 95% bounds (each side separately: the lower
for claims ``>=``, the upper for ``<=``) of the interval ``evaluate`` reports — the
design-based one joined with the tempered-model score interval, what
``confidence_interval(alternative=...)`` and a gate's ``claim=`` use — and, beside them, of
the design-based part alone (what the planner predicts); a gate set exactly at the true value
passes in 1 − coverage of its side. Fixed n, one look.

Measures of probabilities (section ``probability``). The planner's Brier score and log loss
of one model (its with-replacement form) against ``evaluate``'s campaigns on the settings of
``reproduce/continuous.py`` (credit default, caravan, e-mail and the ten-class shifted digits;
logistic regressions, a class-balanced one, boosted trees, naive Bayes) and each logistic
regression's calibrated twin (labels drawn from it): the predicted width of the Wald interval
(what ``plan`` predicts) against the realized mean width of ``confidence_interval(method=
"wald")``, the re-plan from each campaign's first 50 labels, and the one-sided 95% bounds of
the interval ``evaluate`` reports (Wald joined with the score interval along recalibrations).
The log loss draws uniformly (its q is passive's), so it has one arm.

Writes ``planning.md`` and ``planning.json``; ``sections=`` regenerates one section and keeps
the other from the ``planning.json`` already there.
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
from types import SimpleNamespace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from activeeval.demo import _runs
from activeeval.errors import BudgetError
from activeeval.estimators.inference import logit_interval
from activeeval.measures import ErrorRate, FMeasure, Measure
from activeeval.planner import Plan, plan
from activeeval.predictive import Predictive
from activeeval.probability_measures import ProbabilityMeasure
from activeeval.sampling import optimal_distribution, passive_distribution

from .assisted import draw_labels
from .robustness import how_wrong, model_for, pool_value, tempered_intervals
from .robustness import plan as stress_settings

BUDGETS = (50, 100, 200, 400, 800)
REPLAN_AT = 50
CALIBRATED = "calibrated (labels from the model)"
Z90 = 1.6448536269514722  # one-sided 95%


def settings(smoke: bool = False) -> list[tuple[str, str, Measure]]:
    """(task, model, measure): the stress suite's, plus each pool's calibrated twin."""
    stress = stress_settings(smoke)
    twins = []
    for task, kind, meas in stress:
        if kind in ("logistic", "bayesian ridge"):
            twins.append((task, CALIBRATED, meas))
    if smoke:
        f1 = FMeasure(1.0, pos_label=1)
        return [("digits3", CALIBRATED, ErrorRate()), ("digits3", "logits ×2", f1)]
    return twins + stress


def _bounds(
    meas: Measure, level: float, est: NDArray[np.float64], se: NDArray[np.float64],
    n_eff: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """The design-based part of the default's interval at a two-sided ``level``: logit
    (Clopper–Pearson fallback) for measures in [0, 1], else Wald — what the planner predicts.
    ``evaluate`` reports it joined with the tempered-model score interval
    (:mod:`activeeval.estimators.tempered`), measured in ``docs/results/robustness.md``."""
    if meas.binary_loss:
        lo, hi = logit_interval(est, se, level, n_eff, unit_weights=meas.unit_weights)
        return np.asarray(lo), np.asarray(hi)
    from scipy import stats

    z = float(stats.norm.isf((1 - level) / 2))
    return est - z * se, est + z * se


def _replanned(
    pl: Plan, meas: Measure, c: dict[str, Any], j0: int, budgets: list[float]
) -> NDArray[np.float64]:
    """Per campaign: the plan re-planned (:meth:`~activeeval.Plan.replan`) from its first
    ``REPLAN_AT`` labels — their draws, labels, estimate and standard error, as the
    campaign's result holds them — and its predicted width at each budget (NaN where the
    campaign has no estimate yet)."""
    est, se = c["est"][:, j0], c["se"][:, j0]
    out = np.full((est.shape[0], len(budgets)), np.nan)
    for r in range(est.shape[0]):
        if not (math.isfinite(est[r]) and math.isfinite(se[r]) and se[r] > 0):
            continue
        idx = c["draws"][r][: c["kept"][r, j0]]
        res = SimpleNamespace(
            estimate=float(est[r]), stderr=float(se[r]), n_labels=REPLAN_AT,
            cost=float(REPLAN_AT), indices=idx, labels=c["y"][r][idx], measure=meas.name,
        )  # fmt: skip
        again = pl.replan(res)  # type: ignore[arg-type]
        out[r] = [again.width(b) for b in budgets]
    return out


#: Calibrated twins: label vectors drawn from the model, each with reps / LABEL_DRAWS
#: campaigns — the plan predicts the width expected over pools drawn from the model.
LABEL_DRAWS = 20


def _campaigns(
    pred: Predictive, meas: Measure, ys: list[NDArray[Any]], q: NDArray[np.float64],
    b: NDArray[np.float64], reps: int, reported: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """The default's campaigns on each label vector of ``ys`` (reps split evenly), stacked:
    estimates, standard errors, effective n, the truth of each campaign's pool, and for
    re-planning each campaign's draws and labels; with ``reported``, also the one-sided 95%
    bounds of the interval ``evaluate`` reports (the design-based one joined with the
    tempered-model score interval, two-sided at 0.90: ``lo1``, ``hi1``) — what
    ``confidence_interval(alternative=...)`` and a release gate's ``claim=`` use."""
    parts: dict[str, list[Any]] = {k: [] for k in ("est", "se", "n_eff", "truth", "draws",
                                                    "kept", "y", "lo1", "hi1")}  # fmt: skip
    per = max(reps // len(ys), 1)
    for k, y in enumerate(ys):
        est, se, _, n_eff, (draws, kept) = _runs(q, pred, meas, y, b, per, seed=k,
                                                 assisted=True)  # fmt: skip
        if reported:
            lo1, hi1 = tempered_intervals(pred, meas, y, q, b, est, se, n_eff, (draws, kept),
                                          0.90)  # fmt: skip
            parts["lo1"].append(np.clip(lo1, *meas.value_range))
            parts["hi1"].append(np.clip(hi1, *meas.value_range))
        parts["est"].append(est)
        parts["se"].append(se)
        parts["n_eff"].append(n_eff)
        parts["truth"].append(np.full(per, pool_value(meas, pred, y)))
        parts["draws"].extend(draws)
        parts["kept"].append(kept)
        parts["y"].extend([y] * per)
    out: dict[str, Any] = {
        k: np.concatenate(v) for k, v in parts.items() if k not in ("draws", "y") and v
    }
    out["draws"], out["y"] = parts["draws"], parts["y"]
    return out


def one_setting(
    pred: Predictive, meas: Measure, ys: list[NDArray[Any]], b: NDArray[np.float64], reps: int
) -> dict[str, Any]:
    pl = plan(pred, meas, b)
    row: dict[str, Any] = {"model_value": pl.value, "budgets": b.tolist()}
    m = pred.n
    for which, q in (("active", optimal_distribution(pred, meas)),
                     ("passive", passive_distribution(m))):  # fmt: skip
        c = _campaigns(pred, meas, ys, q, b, reps, reported=which == "active")
        est, se, n_eff, truth = c["est"], c["se"], c["n_eff"], c["truth"][:, None]
        lo, hi = _bounds(meas, 0.95, est, se, n_eff)
        width = hi - lo
        realized = np.nanmean(width, axis=0)
        predicted = np.array([pl.width(x, which) for x in b])
        cell: dict[str, Any] = {
            "predicted": predicted.tolist(),
            "realized": realized.tolist(),
            "ratio": (predicted / realized).tolist(),
            "campaigns": np.sum(np.isfinite(width), axis=0).tolist(),
            # predicted standard error ÷ the root mean squared error over the campaigns
            "stderr_ratio": (
                np.array([pl.stderr(x, which) for x in b])
                / np.sqrt(np.nanmean((est - truth) ** 2, axis=0))
            ).tolist(),
        }
        if which == "active":
            j0 = int(np.flatnonzero(b == REPLAN_AT)[0])
            later = [float(x) for x in b[j0 + 1 :]]
            again = _replanned(pl, meas, c, j0, later)
            ratio = again / realized[j0 + 1 :]
            cell["replanned_median_ratio"] = [None] * (j0 + 1) + [
                float(np.nanmedian(ratio[:, k])) for k in range(len(later))
            ]
            cell["replanned_quartiles"] = [None] * (j0 + 1) + [
                [float(np.nanpercentile(ratio[:, k], 25)), float(np.nanpercentile(ratio[:, k], 75))]
                for k in range(len(later))
            ]
            # One-sided 95% bounds, each side on its own: of the interval evaluate reports
            # (what a gate uses) and of its design-based part alone (what plan predicts).
            for prefix, (low1, high1) in (
                ("", (c["lo1"], c["hi1"])),
                ("design_", _bounds(meas, 0.90, est, se, n_eff)),
            ):
                ok = np.isfinite(low1) & np.isfinite(high1)
                n_ok = ok.sum(axis=0)
                tol = 1e-12 * max(1.0, float(np.nanmax(np.abs(truth))))
                cell[f"{prefix}coverage_lower"] = (
                    np.sum(ok & (low1 - tol <= truth), axis=0) / n_ok
                ).tolist()
                cell[f"{prefix}coverage_upper"] = (
                    np.sum(ok & (high1 + tol >= truth), axis=0) / n_ok
                ).tolist()
                cell[f"{prefix}coverage_n"] = n_ok.tolist()
        row[which] = cell
    return row


#: The report's sections and the keys of planning.json each writes.
SECTIONS = {
    "widths": ("reps", "seconds", "settings"),
    "probability": ("probability",),
}


def run(
    out: Path, reps: int, budgets: tuple[int, ...] = BUDGETS, smoke: bool = False,
    log: Callable[[str], None] = print, sections: tuple[str, ...] = tuple(SECTIONS),
    workers: int = 1,
) -> dict[str, Any]:  # fmt: skip
    """Run ``sections`` (keeping the others from ``out``'s planning.json) and write the
    report."""
    path = out / "planning.json"
    result: dict[str, Any] = {}
    if set(sections) != set(SECTIONS):
        old = json.loads(path.read_text())
        result = {k: old[k] for x in SECTIONS if x not in sections for k in SECTIONS[x] if k in old}
    if "widths" in sections:
        result.update(run_widths(reps, budgets, smoke, log))
    if "probability" in sections:
        result["probability"] = run_probability(reps, budgets, smoke, log, workers)
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    (out / "planning.md").write_text(report(result))
    return result


def run_widths(
    reps: int, budgets: tuple[int, ...], smoke: bool, log: Callable[[str], None]
) -> dict[str, Any]:
    """The classifiers' and the regressor's widths and one-sided bounds (the settings)."""
    tasks: dict[str, Any] = {}
    preds: dict[Any, Predictive] = {}
    rows = []
    t0 = time.time()
    for task_name, kind, meas0 in settings(smoke):
        base = "bayesian ridge" if task_name == "diamonds_regression" else "logistic"
        task, pred = model_for(task_name, base if kind == CALIBRATED else kind, tasks, preds)
        if kind == CALIBRATED:
            rng = np.random.default_rng(17)
            ys = [draw_labels(pred, rng) for _ in range(LABEL_DRAWS)]
        else:
            ys = [task.y_pool]
        meas = meas0.bind(pred)
        b = np.asarray(sorted({REPLAN_AT, *[x for x in budgets if x < 0.7 * pred.n]}), dtype=float)
        row = {"task": task_name, "model": kind, "measure": meas.name, "pool": pred.n}
        row.update(how_wrong(pred, ys[0]))
        row.update(one_setting(pred, meas, ys, b, reps))
        rows.append(row)
        log(f"{task_name:20s} {kind:36s} {meas.name:10s} ({time.time() - t0:.0f}s)")
    return {"reps": reps, "seconds": time.time() - t0, "settings": rows}


# ------------------------------------------------------------- measures of probabilities
#: The measures of probabilities ``plan`` predicts for one model.
PROBABILITY = ("brier", "log_loss")


def probability_settings(smoke: bool = False) -> list[tuple[str, str]]:
    """(task, model): ``reproduce/continuous.py``'s, after each logistic regression's
    calibrated twin."""
    from .continuous import SETTINGS

    if smoke:
        return [("email_shift", CALIBRATED), ("email_shift", "naive Bayes")]
    return [(t, CALIBRATED) for t, k in SETTINGS if k == "logistic"] + list(SETTINGS)


def _widths(cat: Any, measure: str, budgets: list[int]) -> list[float]:
    """``plan``'s predicted width at each budget (one plan)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pl = plan(cat, measure, budgets)
    return [pl.width(x) for x in budgets]


@functools.lru_cache(maxsize=16)
def _probability_pool(task: str, kind: str) -> tuple[Any, list[NDArray[Any]]]:
    """The model's predictive distribution and its label vectors: the pool's, or for a
    calibrated twin :data:`LABEL_DRAWS` drawn from the logistic regression."""
    import activeeval as ae

    from .continuous import _model_cached

    proba, y, classes = _model_cached(task, "logistic" if kind == CALIBRATED else kind)
    cat = ae.Categorical(proba, labels=classes)
    if kind != CALIBRATED:
        return cat, [y]
    rng = np.random.default_rng(17)
    return cat, [draw_labels(cat, rng) for _ in range(LABEL_DRAWS)]


def _probability_cell(
    task: str, kind: str, measure: str, budget: int, method: str, reps: int,
    later: tuple[int, ...],
) -> dict[str, Any]:  # fmt: skip
    """``reps`` campaigns of ``evaluate`` at one budget (campaign r on label vector r mod
    their number): the Wald width, the one-sided 95% bounds' coverage, the error; with
    ``later``, each campaign's re-planned width at those budgets."""
    import activeeval as ae

    cat, ys = _probability_pool(task, kind)
    m = cat.n
    meas = ae.get_measure(measure).bind(cat)
    assert isinstance(meas, ProbabilityMeasure)
    truths = [meas.value(cat.proba, cat.label_index(y, "labels"), np.full(m, 1 / m)) for y in ys]
    pl = plan(cat, measure, [budget, *later]) if later else None
    width, lower, upper, err, again = [], [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(reps):
            y, g = ys[r % len(ys)], float(truths[r % len(ys)])
            res = ae.evaluate(cat, y.__getitem__, measure, budget=budget, method=method,
                              random_state=r)  # fmt: skip
            lo, hi = res.confidence_interval(method="wald")
            tol = 1e-12 * max(1.0, abs(g))
            width.append(hi - lo)
            # one-sided bounds; a campaign without both (NaN) is left out, as the widths do
            low = res.confidence_interval(0.95, alternative="greater")[0]
            high = res.confidence_interval(0.95, alternative="less")[1]
            ok = math.isfinite(low) and math.isfinite(high)
            lower.append(low - tol <= g if ok else math.nan)
            upper.append(high + tol >= g if ok else math.nan)
            err.append(res.estimate - g)
            if pl is not None:
                try:
                    again.append([pl.replan(res).width(b) for b in later])
                except BudgetError:  # no finite standard error yet: not re-planned
                    again.append([math.nan] * len(later))
    e = np.asarray(err)
    return {
        "realized": float(np.nanmean(width)),
        "rmse": float(np.sqrt(np.nanmean(e**2))),
        "coverage_lower": float(np.nanmean(np.asarray(lower, dtype=float))),
        "coverage_upper": float(np.nanmean(np.asarray(upper, dtype=float))),
        "replanned": again,
    }


def run_probability(
    reps: int, budgets: tuple[int, ...], smoke: bool, log: Callable[[str], None],
    workers: int = 1,
) -> dict[str, Any]:  # fmt: skip
    """The default's campaigns for every probability setting, measure and budget (``workers``
    processes, spawned: each campaign is seeded by its repetition, so the numbers do not
    depend on them). Passive's prediction is validated on the classifiers' and the
    regressor's widths only (here it would double the campaigns)."""
    t0 = time.time()
    budgets = budgets[:2] if smoke else budgets
    if REPLAN_AT not in budgets:
        raise ValueError(f"budgets: must hold {REPLAN_AT}, where the re-plan starts.")
    jobs = []  # (setting row, cell arguments)
    for task, kind in probability_settings(smoke):
        cat, _ = _probability_pool(task, kind)
        b = [x for x in budgets if x < 0.5 * cat.n]
        later = tuple(x for x in b if x > REPLAN_AT)
        for measure in PROBABILITY:  # the campaigns at REPLAN_AT labels also re-plan
            jobs += [((task, kind, measure, b), (x, later if x == REPLAN_AT else ())) for x in b]
    cells = [(t, k, ms, x, "active", reps, lt) for (t, k, ms, _), (x, lt) in jobs]
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            done = list(ex.map(_probability_cell, *zip(*cells, strict=True)))
    else:
        done = [_probability_cell(*c) for c in cells]
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for ((task, kind, measure, b), _), cell in zip(jobs, done, strict=True):
        key = (task, kind, measure)
        if key not in rows:
            cat, _ = _probability_pool(task, kind)
            rows[key] = {"task": task, "model": kind, "measure": measure, "pool": cat.n,
                         "classes": len(cat.labels), "budgets": b,
                         "predicted": _widths(cat, measure, b),
                         "cells": []}  # fmt: skip
        rows[key]["cells"].append(cell)
    for row in rows.values():
        cells_ = row.pop("cells")
        realized = np.array([c["realized"] for c in cells_])
        row["realized"] = realized.tolist()
        row["ratio"] = (np.array(row["predicted"]) / realized).tolist()
        for k in ("rmse", "coverage_lower", "coverage_upper"):
            row[k] = [c[k] for c in cells_]
        k0 = row["budgets"].index(REPLAN_AT) + 1  # the re-plan predicts the later budgets
        ratio = np.array(cells_[k0 - 1]["replanned"]) / realized[None, k0:]
        row["replanned_median_ratio"] = [None] * k0 + np.nanmedian(ratio, 0).tolist()
        quart = np.nanpercentile(ratio, [25, 75], axis=0).T.tolist()
        row["replanned_quartiles"] = [None] * k0 + quart
        log(f"planning: {row['task']}/{row['model']} {row['measure']} ({time.time() - t0:.0f} s)")
    return {"reps": reps, "seconds": time.time() - t0, "rows": list(rows.values())}


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def _f(x: Any, fmt: str = ".3f") -> str:
    return "–" if x is None or not math.isfinite(x) else format(x, fmt)


#: A realized mean width below this is a census in effect (every instance that can move the
#: measure labeled): ratios of such widths say nothing and are listed apart.
CENSUS_WIDTH = 1e-3


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """The issue's figures from the runs, per group (calibrated twins, stress suite):
    prediction ratios at budgets ≥ 100 (before and after re-planning), one-sided coverage per
    cell and pooled."""
    out: dict[str, Any] = {}
    for group in ("calibrated", "stress"):
        rows = [
            s for s in result["settings"] if (s["model"] == CALIBRATED) == (group == "calibrated")
        ]
        planned, replanned, census, cover, design = [], [], [], [], []
        for s in rows:
            a = s["active"]
            for j, b in enumerate(s["budgets"]):
                for side in ("lower", "upper"):
                    cover.append((a[f"coverage_{side}"][j], a["coverage_n"][j], s, b, side))
                    if f"design_coverage_{side}" in a:  # runs before both were kept lack it
                        design.append((a[f"design_coverage_{side}"][j],
                                       a["design_coverage_n"][j], s, b, side))  # fmt: skip
                if b < 100:
                    continue
                for which in ("active", "passive"):
                    c = s[which]
                    tag = (c["ratio"][j], s, b, which)
                    if c["realized"][j] < CENSUS_WIDTH:
                        census.append(tag)
                    else:
                        planned.append(tag)
                if a["realized"][j] >= CENSUS_WIDTH:
                    replanned.append((a["replanned_median_ratio"][j], s, b, "active"))
        n_cov = sum(n for _, n, *_ in cover)
        out[group] = {
            "planned": planned,
            "replanned": replanned,
            "census": census,
            "coverage_pooled": sum(c * n for c, n, *_ in cover) / n_cov,
            "coverage_min": min(c for c, *_ in cover),
            "coverage_below": [x for x in cover if x[0] < 0.93],
            "cells": len(cover),
            "design_pooled": (
                sum(c * n for c, n, *_ in design) / sum(n for _, n, *_ in design)
                if design
                else math.nan
            ),
            "design_min": min((c for c, *_ in design), default=math.nan),
            "design_below": sum(1 for c, *_ in design if c < 0.93),
        }
    return out


def _cell(s: dict[str, Any], b: float, extra: str = "") -> str:
    model = "" if s["model"] == CALIBRATED else f" / {s['model']}"
    return f"{s['task']}{model} / {s['measure']} at {b:g}{extra}"


def _ratios(tags: list[Any], lo: float, hi: float) -> str:
    r = np.array([t[0] for t in tags])
    inside = int(np.sum((r >= lo) & (r <= hi)))
    return (
        f"{inside} of {r.size} cells in [{lo}, {hi}], median {np.median(r):.3f}, range "
        f"[{r.min():.3f}, {r.max():.3f}]"
    )


def report(result: dict[str, Any]) -> str:
    fg = figures(result)
    cal, st = fg["calibrated"], fg["stress"]
    reps = result["reps"]
    mc = 3 * math.sqrt(0.95 * 0.05 / reps)
    lines = [
        "# Planning a budget, and one-sided bounds",
        "",
        f"Generated by `python -m reproduce --only planning` ({reps} campaigns per setting and "
        f"budget, {result['seconds'] / 60:.0f} min). Method: `reproduce/planning.py`'s "
        "docstring. *Predicted* is `activeeval.plan(...)` before any label; *realized* the "
        "mean width of the default's 95% interval over the campaigns; *re-planned* the "
        f"median over campaigns of the plan re-planned from each campaign's first {REPLAN_AT} "
        "labels ÷ the realized mean width. Cells whose realized mean width is below "
        f"{CENSUS_WIDTH:g} (a census in effect) are listed apart.",
        "",
        "## Figures",
        "",
        "Predicted ÷ realized width, budgets ≥ 100, the default (q*) and passive:",
        "",
        "- calibrated models (goal [0.85, 1.15] in every cell): "
        + _ratios(cal["planned"], 0.85, 1.15)
        + "; outside: "
        + (
            ", ".join(
                _cell(s, b, f" ({w}) {r:.3f}")
                for r, s, b, w in cal["planned"]
                if not 0.85 <= r <= 1.15
            )
            or "none"
        )
        + ".",
        f"- stress suite before re-planning: {_ratios(st['planned'], 0.8, 1.25)}.",
        f"- stress suite re-planned after {REPLAN_AT} labels (the default; goal: median over "
        f"runs in [0.8, 1.25]): {_ratios(st['replanned'], 0.8, 1.25)}; calibrated models "
        f"re-planned: {_ratios(cal['replanned'], 0.8, 1.25)}.",
        "- a census in effect (realized width < "
        f"{CENSUS_WIDTH:g}): "
        + (
            ", ".join(_cell(s, b, f" ({w}) {r:.3g}") for r, s, b, w in cal["census"] + st["census"])
            or "none"
        )
        + ".",
        "",
        "One-sided 95% bounds of the interval the default reports (the design-based one joined "
        "with the tempered-model score interval: what `confidence_interval(alternative=...)` "
        "and a gate's `claim=` use), each side separately (goal: every cell ≥ 0.93 = "
        f"0.95 − 3 MC s.e. at 1,000 runs, here 3 MC s.e. = {mc:.3f}; pooled ≥ 0.945). A gate set "
        "exactly at the true value passes in 1 − coverage of its side (fixed n, one look):",
        "",
    ]
    for name, g in (("calibrated models", cal), ("stress suite", st)):
        below = sorted(g["coverage_below"], key=lambda x: x[0])
        shown = below[:20]
        more = f" and {len(below) - len(shown)} more (table below)" if len(below) > 20 else ""
        lines.append(
            f"- {name}: pooled {g['coverage_pooled']:.4f}, lowest cell {g['coverage_min']:.3f}; "
            f"{len(below)} of {g['cells']} cells below 0.93"
            + (
                ", lowest first: "
                + ", ".join(_cell(s, b, f" {side} {c:.3f}") for c, _, s, b, side in shown)
                + more
                if below
                else ""
            )
            + "."
            + (
                f" The design-based part alone (what `plan` predicts): pooled "
                f"{g['design_pooled']:.4f}, lowest cell {g['design_min']:.3f}, "
                f"{g['design_below']} cells below 0.93."
                if math.isfinite(g["design_pooled"])
                else ""
            )
        )
    lines += [
        "",
        "## Reading the figures",
        "",
        "- Where a calibrated prediction misses, the cause is one of three, each visible in the"
        " table: (i) a small sample of a rare class (Caravan F1, 6.5% positives, at 100 "
        "labels): the estimates spread more than the asymptotic variance says (*se ÷ spread*: "
        "0.60 at 50 labels, 0.88 at 100) and the logit interval around a small F1 estimate "
        "widens further, until about 200 labels; (ii) one instance carrying most of the model's"
        " variance (diamonds, passive: a Bayesian ridge variance of 75.8 where the median is "
        "0.025, 98% of the total): the plan is the root-mean-square width, which the few "
        "campaigns that draw that instance make far wider than the typical one — `plan` warns "
        "when this happens; (iii) a near census (digits F1 at 400 of 1,258), where both widths "
        "are tiny and their ratio says little.",
        f"- Re-planning from {REPLAN_AT} labels rests on the standard error at {REPLAN_AT} "
        "labels; where that standard error is itself too small (the cells whose one-sided "
        "coverage at 50 is low: overconfident and boosted models on the rare-class pools), the "
        "re-plan inherits it (see `robustness.md`). And where the model is confidently wrong "
        f"on a region it gives little mass, {REPLAN_AT} labels rarely contain one of its "
        "errors (digits, logits × 2: the model claims 0.009% errors where the pool has 0.6%; "
        "in about 97% of runs none of the ~4 labels drawn there is an error), so no rule using "
        "only those labels can tell this pool from one where the model is right: the re-plan "
        "of those runs must coincide with the right model's, and the realized width differs.",
        "- One-sided bounds: the upper bound of a rare error rate and the lower bound of a "
        "rare-class F1 cover less than the lower (resp. upper) one: when the sample happens to "
        "hold few errors, the estimate and its standard error are small together. The stress "
        "suite measures this (`robustness.md`). The widths here are the design-based "
        "interval's (logit or Wald), the part the planner predicts; the bounds are those the "
        "default reports (joined with the tempered-model score interval), the design-based "
        "part's alone summarized beside them.",
    ]
    lines += ["", "## Per setting", ""]
    head = ("| pool | model | measure | n | predicted | realized | ratio | se ÷ spread | "
            "passive ratio | re-planned (IQR) | cover lower | cover upper |")  # fmt: skip
    lines += [head, "|" + "---|" * 12]
    for s in result["settings"]:
        a, pa = s["active"], s["passive"]
        for j, b in enumerate(s["budgets"]):
            rq = a["replanned_quartiles"][j]
            rp = a["replanned_median_ratio"][j]
            rtxt = "–" if rp is None else f"{rp:.3f} ({rq[0]:.2f}–{rq[1]:.2f})"
            lines.append(
                f"| {s['task']} | {s['model']} | {s['measure']} | {b:g} | "
                f"{_f(a['predicted'][j], '.4f')} | {_f(a['realized'][j], '.4f')} | "
                f"{_f(a['ratio'][j])} | {_f(a['stderr_ratio'][j])} | {_f(pa['ratio'][j])} | "
                f"{rtxt} | "
                f"{_f(a['coverage_lower'][j])} | {_f(a['coverage_upper'][j])} |"
            )
    if "probability" in result:
        lines += ["", *_probability_report(result["probability"])]
    return "\n".join(lines) + "\n"


def _probability_report(res: dict[str, Any]) -> list[str]:
    """The measures of probabilities: figures, then the table."""
    cal = [r for r in res["rows"] if r["model"] == CALIBRATED]
    stress = [r for r in res["rows"] if r["model"] != CALIBRATED]

    def tags(rows: list[dict[str, Any]], key: str) -> list[Any]:
        return [(x, r, b, "") for r in rows
                for x, b in zip(r[key], r["budgets"], strict=True)
                if b >= 100 and x is not None]  # fmt: skip

    wrong = [r for r in stress if r["model"] not in ("logistic", CALIBRATED)]

    def med(rows: list[dict[str, Any]], measure: str, key: str) -> str:
        x = [v for v, r, *_ in tags([r for r in rows if r["measure"] == measure], key)]
        return f"{np.nanmedian(x):.2f}" if x else "–"

    cover = [
        (c, r, b, side)
        for r in res["rows"]
        for side in ("lower", "upper")
        for c, b in zip(r[f"coverage_{side}"], r["budgets"], strict=True)
    ]
    outside = [_cell(r, b, f" {x:.3f}") for x, r, b, _ in tags(cal, "ratio")
               if not 0.85 <= x <= 1.15]  # fmt: skip
    low = [
        _cell(r, b, f" {side} {c:.3f}")
        for c, r, b, side in sorted((x for x in cover if x[0] < 0.93), key=lambda x: x[0])
    ]
    planned = tags(cal, "ratio")
    lines = [
        "## Measures of probabilities: the Brier score and log loss",
        "",
        f"{res['reps']} campaigns per setting and budget ({res['seconds'] / 60:.0f} min); "
        "method: the module docstring. Budgets below half the pool. *Predicted* is "
        "`plan(proba, measure)`'s Wald width (its with-replacement form), *realized* the mean "
        'width of `confidence_interval(method="wald")` over the campaigns. The log loss '
        "draws uniformly, so its default is passive. The default only: passive's prediction is "
        "validated in the widths above.",
        "",
        "- calibrated twins (labels drawn from the logistic regression; goal [0.85, 1.15]): "
        + _ratios(planned, 0.85, 1.15)
        + "; outside: "
        + (", ".join(outside) or "none")
        + ".",
        f"- the models on their real labels, before re-planning: "
        f"{_ratios(tags(stress, 'ratio'), 0.8, 1.25)}; re-planned after {REPLAN_AT} labels "
        f"(goal: median over runs in [0.8, 1.25]): "
        f"{_ratios(tags(stress, 'replanned_median_ratio'), 0.8, 1.25)}; calibrated twins "
        f"re-planned: {_ratios(tags(cal, 'replanned_median_ratio'), 0.8, 1.25)}.",
        f"- one-sided 95% bounds of the reported interval, each side separately: pooled "
        f"{np.mean([c for c, *_ in cover]):.4f}, lowest {min(c for c, *_ in cover):.3f}; "
        f"{len(low)} of {len(cover)} cells below 0.93"
        + (": " + ", ".join(low) if low else "")
        + ".",
        f"- Reading: a re-plan of these measures scales the standard error at {REPLAN_AT} "
        f"labels by √({REPLAN_AT}/n) (their estimator counts every draw). Median ratio to the "
        f"realized width over the cells from 100 labels: the Brier score re-planned "
        f"{med(stress, 'brier', 'replanned_median_ratio')} on the real labels; the log loss "
        f"of the models whose probabilities are wrong re-planned "
        f"{med(wrong, 'log_loss', 'replanned_median_ratio')} (their first plan "
        f"{med(wrong, 'log_loss', 'ratio')}), of the calibrated twins "
        f"{med(cal, 'log_loss', 'replanned_median_ratio')} (their first plan "
        f"{med(cal, 'log_loss', 'ratio')}). Where a few instances carry most of a loss's "
        "variance (the log loss on a rare class: the positives the model gives a small "
        f"probability), the standard error at {REPLAN_AT} labels is below its typical value in "
        "most campaigns, so the re-plan falls short: for a model believed calibrated the "
        "first plan is the better guide there; for one whose probabilities are wrong the "
        "re-plan, though short, is far closer.",
        "",
        "| pool | model | measure | n | predicted | realized | ratio | re-planned (IQR) | RMSE | "
        "cover lower | cover upper |",
        "|" + "---|" * 11,
    ]
    for r in res["rows"]:
        for j, b in enumerate(r["budgets"]):
            rq, rp = r["replanned_quartiles"][j], r["replanned_median_ratio"][j]
            rtxt = "–" if rp is None else f"{rp:.3f} ({rq[0]:.2f}–{rq[1]:.2f})"
            lines.append(
                f"| {r['task']} | {r['model']} | {r['measure']} | {b:g} | "
                f"{_f(r['predicted'][j], '.4f')} | {_f(r['realized'][j], '.4f')} | "
                f"{_f(r['ratio'][j])} | {rtxt} | {_f(r['rmse'][j], '.4f')} | "
                f"{_f(r['coverage_lower'][j])} | {_f(r['coverage_upper'][j])} |"
            )
    return lines
