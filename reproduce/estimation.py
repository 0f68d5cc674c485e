"""Reproduction of the thesis's active-estimation protocol (Ch. 4.4) on real bundled data.

For each task a model is trained on one source and evaluated on a shifted or held-out pool; the
evaluation is repeated ``reps`` times per budget and method, and the mean absolute error of the
estimate against the whole-pool value is reported as a function of the budget. Run with
``make reproduce`` (1,000 repetitions) or ``python -m reproduce --only estimation --smoke``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from activeeval.campaign import evaluate
from activeeval.datasets import EvaluationTask
from activeeval.demo import StaticRuns, simulate_static
from activeeval.measures import ErrorRate, FMeasure, Measure, Precision, Recall, SquaredError
from activeeval.predictive import Predictive
from activeeval.sampling import (
    cost_distribution,
    optimal_distribution,
    passive_distribution,
)

from .curves import Curve, Setting
from .models import pool_for
from .report import write_active_estimation_report

BUDGETS = (50, 100, 200, 400, 800)
#: Repetitions of the methods that cannot be vectorised across runs (the stratified baseline
#: runs Algorithm 2 one campaign at a time). The oasis peers are pure-Python loops too, but
#: the model-assisted comparison (issue 8) asks for 1,000 repetitions of every method: about
#: 50 min of the run on 2 cores (measured: 57 min for the whole estimation part).
STRATIFIED_REPS = 300
PEER_REPS = 1000
ASSISTED_REPS = 1000
BATCH_REPS = 150


def _mae(est: NDArray[np.float64], truth: float) -> tuple[list[float], list[float]]:
    err = np.abs(est - truth)
    n = np.sum(~np.isnan(err), axis=0)
    return list(np.nanmean(err, axis=0)), list(np.nanstd(err, axis=0) / np.sqrt(np.maximum(n, 1)))


def _coverage(runs: StaticRuns, truth: float, method: str) -> NDArray[np.float64]:
    """Fraction of runs whose 95% interval covers ``truth``, per budget."""
    from scipy import stats

    from activeeval.estimators.inference import proportion_confint

    g, se, n = runs.estimate, runs.stderr, runs.n_draws
    if method == "wald":
        half = 1.959963984540054 * se
        lo, hi = g - half, g + half
    elif method == "t":
        half = stats.t.isf(0.025, np.maximum(n - 1, 1)) * se * np.sqrt(n / np.maximum(n - 1, 1))
        lo, hi = g - half, g + half
    else:
        n_eff = runs.effective_n
        count = np.clip(g * n_eff, 0, n_eff)
        lo, hi = proportion_confint(count, n_eff, 0.95, method)
    covered = (lo <= truth) & (truth <= hi)
    width = np.nanmean(hi - lo, axis=0)
    return np.vstack([np.nanmean(covered, axis=0), width])


@dataclass
class _Pool:
    """The per-instance terms of the measure under the true labels, shared by every curve."""

    wl: NDArray[np.float64]
    w: NDArray[np.float64]
    truth: float
    mask: NDArray[np.bool_]  # instances that can move the measure (census once all labeled)
    budgets: NDArray[np.float64]
    reps: int
    costs: NDArray[np.float64] | None
    seed: int

    def curve(self, name: str, q: NDArray[np.float64], intervals: tuple[str, ...] = ()) -> Curve:
        runs = simulate_static(
            q,
            self.wl,
            self.w,
            self.budgets,
            self.reps,
            costs=self.costs,
            census_mask=self.mask,
            random_state=self.seed,
        )
        mae, se = _mae(runs.estimate, self.truth)
        extra: dict[str, Any] = {
            "mean_labels": list(np.mean(runs.n_labels, axis=0)),
            "mean_cost": list(np.mean(runs.cost, axis=0)),
        }
        for method in intervals:
            cov = _coverage(runs, self.truth, method)
            extra[f"coverage_{method}"] = list(cov[0])
            extra[f"width_{method}"] = list(cov[1])
        return Curve(name, list(self.budgets), mae, se, extra)


def _stratified_curve(
    pred: Predictive,
    task: EvaluationTask,
    meas: Measure,
    truth: float,
    budgets: NDArray[np.float64],
    reps: int,
    costs: NDArray[np.float64] | None,
    seed: int,
) -> Curve:
    reps = min(reps, STRATIFIED_REPS)
    est = np.full((reps, budgets.shape[0]), np.nan)
    oracle = task.oracle()
    for j, b in enumerate(budgets):
        for r in range(reps):
            res = evaluate(
                pred,
                oracle,
                meas,
                budget=b,
                method="stratified",
                costs=costs,
                random_state=seed + r,
                progress=False,
            )
            est[r, j] = res.estimate
    mae, se = _mae(est, truth)
    return Curve("stratified", list(budgets), mae, se, {"reps": reps})


def run_setting(
    task: EvaluationTask,
    model_name: str,
    pred: Predictive,
    meas: Measure,
    budgets: NDArray[np.float64],
    reps: int,
    *,
    costs: NDArray[np.float64] | None = None,
    seed: int = 0,
    stratified: bool = True,
    safeguard_variants: bool = False,
    peers: Callable[..., list[Curve]] | None = None,
) -> Setting:
    f = pred.point_prediction()
    y = task.y_pool
    bound = meas.bind(pred)
    w = bound.weight(f, y)
    wl = w * bound.loss(f, y)
    truth = float(wl.sum() / w.sum())
    setting = Setting(task.name, model_name, bound.name, truth, costs is not None)
    m = pred.n
    binary = ("wilson",) if bound.binary_loss else ()
    pool = _Pool(wl, w, truth, bound.weight_can_be_positive(f), budgets, reps, costs, seed)
    s = setting.curves
    s.append(pool.curve("passive", passive_distribution(m), ("t", *binary)))
    s.append(pool.curve("active", optimal_distribution(pred, bound, costs=costs), ("wald",)))
    if costs is not None:
        s.append(pool.curve("active_uniC", optimal_distribution(pred, bound)))
        s.append(pool.curve("active_lambda", cost_distribution(costs)))
    if safeguard_variants:
        q_raw = optimal_distribution(pred, bound, costs=costs, floor=0.0, mix=0.0)
        s.append(pool.curve("active_no_safeguards", q_raw, ("wald",)))
    # The limit: q* computed with the true labels (what a perfect model would give).
    a_true = w**2 * (bound.loss(f, y) - truth) ** 2
    score = np.sqrt(a_true if costs is None else a_true / costs)
    if score.sum() > 0:
        s.append(pool.curve("oracle_q", score / score.sum()))
    if stratified:
        s.append(_stratified_curve(pred, task, bound, truth, budgets, reps, costs, seed))
    if peers is not None:
        s.extend(peers(task, pred, bound, truth, budgets, reps, seed))
    return setting


def _settings_plan(smoke: bool) -> list[tuple[str, str, Measure, bool]]:
    """(task, model kind, measure, with costs)."""
    plan: list[tuple[str, str, Measure, bool]] = []
    email_measures: list[Measure] = [
        ErrorRate(),
        FMeasure(1.0, pos_label=1),
        FMeasure(0.5, pos_label=1),
        Precision(pos_label=1),
        Recall(pos_label=1),
    ]
    for meas in email_measures:
        plan.append(("email_shift", "logistic", meas, False))
    plan.append(("email_shift", "logistic", ErrorRate(), True))
    plan.append(("email_shift", "logistic", FMeasure(1.0, pos_label=1), True))
    for meas in [
        ErrorRate(),
        FMeasure(1.0, pos_label=1),
        Precision(pos_label=1),
        Recall(pos_label=1),
    ]:
        plan.append(("default_skew", "logistic", meas, False))
        plan.append(("caravan_skew", "logistic", meas, False))
    plan.append(("diamonds_regression", "bayesian_ridge", SquaredError(), False))
    for meas in [ErrorRate(), FMeasure(1.0, pos_label=1)]:
        plan.append(("email_shift", "naive_bayes", meas, False))
        plan.append(("default_skew", "naive_bayes", meas, False))
    if smoke:
        plan = [p for p in plan if p[0] == "email_shift" and p[1] == "logistic"][:2]
    return plan


def run(
    out: Path, reps: int, budgets: tuple[int, ...], smoke: bool = False, with_peers: bool = True
) -> list[Setting]:
    out.mkdir(parents=True, exist_ok=True)
    b = np.asarray(budgets, dtype=float)
    tasks: dict[str, EvaluationTask] = {}
    preds: dict[tuple[str, str], Predictive] = {}
    peers = None
    if with_peers and not smoke:
        peers = _peer_runner()
    # Without the peers (``--no-peers``), keep the peer curves of an earlier full run: they do
    # not depend on activeeval's code, and the oasis samplers take most of the run time.
    earlier = {} if peers is not None else _earlier_peer_curves(out)
    settings = []
    for task_name, kind, meas, with_costs in _settings_plan(smoke):
        t0 = time.time()
        task, pred = pool_for(task_name, kind, tasks, preds)
        setting = run_setting(
            task,
            kind,
            pred,
            meas,
            b,
            reps,
            costs=task.costs if with_costs else None,
            stratified=not with_costs,
            safeguard_variants=kind == "naive_bayes" or task_name == "default_skew",
            peers=peers if meas.name == "f1" and not with_costs else None,
        )
        if peers is None:
            key = (setting.task, setting.model, setting.measure, setting.cost_budget)
            setting.curves.extend(earlier.get(key, []))
        settings.append(setting)
        print(
            f"{task_name:20s} {kind:14s} {setting.measure:14s} costs={with_costs!s:5s} "
            f"truth={setting.truth:.4f} ({time.time() - t0:.1f}s)",
            flush=True,
        )
    (out / "active_estimation.json").write_text(
        json.dumps([_as_dict(s) for s in settings], indent=1)
    )
    write_active_estimation_report(settings, out, reps=reps)
    return settings


def load_settings(path: Path) -> list[Setting]:
    """Settings back from ``active_estimation.json`` (to rewrite the report)."""
    out = []
    for s in json.loads(path.read_text()):
        st = Setting(s["task"], s["model"], s["measure"], s["truth"], s["cost_budget"])
        for c in s["curves"]:
            extra = {k: v for k, v in c.items() if k not in ("method", "budgets", "mae", "mae_se")}
            st.curves.append(Curve(c["method"], c["budgets"], c["mae"], c["mae_se"], extra))
        out.append(st)
    return out


def _earlier_peer_curves(out: Path) -> dict[tuple[str, str, str, bool], list[Curve]]:
    path = out / "active_estimation.json"
    if not path.exists():
        return {}
    found: dict[tuple[str, str, str, bool], list[Curve]] = {}
    for s in json.loads(path.read_text()):
        for c in s["curves"]:
            if c["method"].startswith("peer_"):
                extra = {
                    k: v for k, v in c.items() if k not in ("method", "budgets", "mae", "mae_se")
                }
                key = (s["task"], s["model"], s["measure"], s["cost_budget"])
                found.setdefault(key, []).append(
                    Curve(c["method"], c["budgets"], c["mae"], c["mae_se"], extra)
                )
    return found


def _as_dict(s: Setting) -> dict[str, Any]:
    return {
        "task": s.task,
        "model": s.model,
        "measure": s.measure,
        "truth": s.truth,
        "cost_budget": s.cost_budget,
        "curves": [
            {"method": c.method, "budgets": c.budgets, "mae": c.mae, "mae_se": c.mae_se, **c.extra}
            for c in s.curves
        ],
    }


def _peer_runner() -> Callable[..., list[Curve]] | None:
    try:
        import sys

        root = Path(__file__).resolve().parents[1]
        sys.path.insert(0, str(root / "benchmarks"))
        import peers
    except ImportError:
        return None
    if not peers.oasis_available():
        print("note: the oasis peer is not installed; `make reproduce` installs it.")
        return None

    def run_peers(
        task: EvaluationTask,
        pred: Predictive,
        meas: FMeasure,
        truth: float,
        budgets: NDArray[np.float64],
        reps: int,
        seed: int,
    ) -> list[Curve]:
        from activeeval.predictive import Categorical

        assert isinstance(pred, Categorical)
        f = pred.point_prediction()
        pos = meas.pos_label
        score = pred.proba[:, pred.label_index([pos])[0]]
        y_bin = (task.y_pool == pos).astype(int)
        f_bin = (f == pos).astype(int)
        curves = []
        for sampler in ("oasis", "sawade_is"):
            n = min(reps, PEER_REPS)
            est = peers.run_oasis(
                y_bin,
                f_bin,
                score,
                [int(x) for x in budgets],
                n,
                alpha=meas.eta,
                sampler=sampler,
                seed=seed,
                n_jobs=2,
            )
            mae, se = _mae(est, truth)
            unreached = list(np.mean(np.isnan(est), axis=0))
            curves.append(
                Curve(
                    f"peer_{sampler}", list(budgets), mae, se, {"reps": n, "unreached": unreached}
                )
            )
        return curves

    return run_peers
