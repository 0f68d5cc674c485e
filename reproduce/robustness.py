"""The stress suite (issue 26, Deliver 1): the default when the model's probabilities are wrong.

Every real pool of the model-assisted benchmark (e-mail with its time shift, credit default,
caravan, diamonds) plus scikit-learn's digits, 3 vs rest, scored by models whose
probabilities err the ways real models' do: the task's logistic regression (the control; on
the e-mail pool it meets the time-shifted pool, on digits it is the issue's overconfident
case), its logits × 2 (overconfident) and × 0.5 (underconfident), a gradient-boosted model
fitted to near-zero training loss, a class-balanced logistic regression on the rare-class
pools, and a homoscedastic Bayesian ridge regressor (MSE). For each setting and budget,
side by side in one run: the default (``evaluate(method="active")``: q* with the
model-assisted estimator), passive (``method="passive"``, the same estimator on uniform
draws), the thesis's SNIS on q*, and the peers: oasis's OASIS and Sawade importance sampler
(F1), ppi_py's PPI++ with uniform labels and with active-inference importance weights
(means of losses), and GLIDE's ``ActiveSampler`` + ``ASIMeanEstimator`` and
``StratifiedSampler`` + ``StratifiedPPIMeanEstimator`` (means of losses; in its own Python
3.12 environment through ``benchmarks/glide_worker.py``). Writes ``robustness.md`` and
``robustness.json``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from activeeval.datasets import EvaluationTask, load_task
from activeeval.demo import _runs, _samples, fit_logistic, pool_predictive, simulate_static
from activeeval.estimators.assisted import assisted_distribution
from activeeval.estimators.inference import logit_interval
from activeeval.estimators.tempered import (
    _rows,
    as_curve,
    platt_chosen,
    platt_loglik,
    platt_members,
    pointwise_log_likelihood,
    residual_kurtosis,
    variance_curve,
    with_platt,
)
from activeeval.measures import ErrorRate, FMeasure, Measure, SquaredError
from activeeval.predictive import Categorical, Gaussian, Predictive
from activeeval.sampling import optimal_distribution, passive_distribution

from .models import fit_regressor

ROOT = Path(__file__).resolve().parents[1]
GLIDE_PYTHON = ROOT / ".venv-glide" / "bin" / "python"
GLIDE_WORKER = ROOT / "benchmarks" / "glide_worker.py"
BUDGETS = (50, 100, 200, 400, 800)
Z95 = 1.959963984540054
#: The oasis samplers are pure-Python loops (≈0.2 ms per iteration, thousands of iterations
#: per campaign at 800 labels): they run on at most this many repetitions.
OASIS_REPS = 1000
BOOTSTRAP = 400

DEFAULT = "default (q*, assisted)"
PASSIVE = "passive (assisted)"
SNIS = "thesis SNIS (q*)"
OASIS = "peer oasis OASIS"
SAWADE = "peer oasis Sawade IS"
PPI_UNIFORM = "peer PPI++ (uniform)"
PPI_ACTIVE = "peer PPI++ (active-inference q)"
GLIDE_ASI = "peer GLIDE Active + ASI"
GLIDE_STRAT = "peer GLIDE Stratified (Neyman) + PPI"
PEERS = (OASIS, SAWADE, PPI_UNIFORM, PPI_ACTIVE, GLIDE_ASI, GLIDE_STRAT)
GLIDE_MISSING = "not run (make glide-env)"


# ------------------------------------------------------------------------------------------
# Tasks and models
# ------------------------------------------------------------------------------------------


def load_digits3(train_share: float = 0.3, seed: int = 0) -> EvaluationTask:
    """scikit-learn's digits (1,797 images, bundled with scikit-learn), digit 3 vs rest; a
    random ``train_share`` trains the model, the rest is the pool (issue 26's overconfident
    case)."""
    from sklearn.datasets import load_digits

    d = load_digits()
    y = (d.target == 3).astype(int)
    order = np.random.default_rng(seed).permutation(y.size)
    k = round(train_share * y.size)
    tr, pool = order[:k], np.sort(order[k:])
    return EvaluationTask(
        name="digits3",
        X_train=d.data[tr],
        y_train=y[tr],
        X_pool=d.data[pool],
        y_pool=y[pool],
        costs=None,
        feature_names=tuple(f"pixel_{i}" for i in range(d.data.shape[1])),
        description=f"scikit-learn digits, 3 vs rest; random {train_share:.0%} train.",
    )


def _load(name: str) -> EvaluationTask:
    if name == "digits3":
        return load_digits3()
    if name == "diamonds_regression":
        return load_task(name, pool_size=20000)  # as the model-assisted benchmark
    return load_task(name)


def _logistic(task: EvaluationTask, balanced: bool = False) -> Any:
    from sklearn.linear_model import LogisticRegression

    if task.name == "digits3" and not balanced:
        # As a new user would: a plain logistic regression on the raw pixels (issue 26).
        return LogisticRegression(max_iter=5000).fit(task.X_train, task.y_train)
    if not balanced:
        return fit_logistic(task)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(
        StandardScaler(), LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    )
    return model.fit(task.X_train, task.y_train)


def _boosted(task: EvaluationTask) -> Any:
    """Gradient boosting run to near-zero training loss: many iterations, no early stopping,
    no regularization (overconfident off its training data)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=500,
        learning_rate=0.3,
        early_stopping=False,
        min_samples_leaf=5,
        l2_regularization=0.0,
        random_state=0,
    )
    return model.fit(task.X_train, task.y_train)


def _scaled(pred: Predictive, factor: float) -> Categorical:
    """A binary model's logits × ``factor`` (> 1 overconfident, < 1 underconfident)."""
    assert isinstance(pred, Categorical)
    p1 = np.clip(pred.proba[:, 1], 1e-15, 1 - 1e-15)
    s = 1.0 / (1.0 + np.exp(-factor * np.log(p1 / (1 - p1))))
    return Categorical(np.c_[1 - s, s], labels=pred.labels)


#: (task, variant): what is wrong with the model's probabilities.
VARIANTS: dict[str, str] = {
    "logistic": "the task's logistic regression (the control; on digits the issue's plain one)",
    "logits ×2": "overconfident: the logistic regression's logits × 2",
    "logits ×0.5": "underconfident: the logistic regression's logits × 0.5",
    "boosted": "overconfident: gradient boosting fitted to near-zero training loss",
    "balanced": "class-balanced logistic regression on a rare class",
    "bayesian ridge": "homoscedastic Bayesian ridge regression",
}
CLASSIFIER_TASKS = ("email_shift", "default_skew", "caravan_skew", "digits3")
RARE = ("default_skew", "caravan_skew", "digits3")


def plan(smoke: bool = False) -> list[tuple[str, str, Measure]]:
    """(task, variant, measure) per setting, in report order."""
    out: list[tuple[str, str, Measure]] = []
    for task in CLASSIFIER_TASKS:
        kinds = ["logistic", "logits ×2", "logits ×0.5", "boosted"]
        if task in RARE:
            kinds.append("balanced")
        for kind in kinds:
            out += [(task, kind, ErrorRate()), (task, kind, FMeasure(1.0, pos_label=1))]
    out.append(("diamonds_regression", "bayesian ridge", SquaredError()))
    if smoke:
        f1 = FMeasure(1.0, pos_label=1)
        return [("digits3", "logits ×2", ErrorRate()), ("digits3", "logits ×2", f1)]
    return out


def model_for(
    task_name: str, kind: str, tasks: dict[str, EvaluationTask], preds: dict[Any, Predictive]
) -> tuple[EvaluationTask, Predictive]:
    if task_name not in tasks:
        tasks[task_name] = _load(task_name)
    task = tasks[task_name]
    key = (task_name, kind)
    if key not in preds:
        if kind == "bayesian ridge":
            pred = pool_predictive(fit_regressor(task), task.X_pool)
        elif kind in ("logits ×2", "logits ×0.5"):
            _, base = model_for(task_name, "logistic", tasks, preds)
            pred = _scaled(base, 2.0 if kind == "logits ×2" else 0.5)
        elif kind == "boosted":
            pred = pool_predictive(_boosted(task), task.X_pool)
        else:
            pred = pool_predictive(_logistic(task, kind == "balanced"), task.X_pool)
        preds[key] = pred
    return task, preds[key]


def how_wrong(pred: Predictive, y: NDArray[Any], bins: int = 10) -> dict[str, float]:
    """Expected calibration error of p(y = 1) (equal-width bins) and the model-expected vs the
    pool's error rate; for a Gaussian, the model-expected vs the pool's MSE."""
    if isinstance(pred, Gaussian):
        return {
            "expected_mse": float(np.mean(pred.var)),
            "true_mse": float(np.mean((y - pred.mean) ** 2)),
        }
    assert isinstance(pred, Categorical)
    s = pred.proba[:, 1]
    yb = (y == pred.labels[1]).astype(float)
    which = np.minimum((s * bins).astype(int), bins - 1)
    ece = sum(
        abs(yb[which == k].mean() - s[which == k].mean()) * np.mean(which == k)
        for k in range(bins)
        if np.any(which == k)
    )
    f = pred.point_prediction()
    return {
        "ece": float(ece),
        "expected_error": float(np.mean(1.0 - pred.proba.max(axis=1))),
        "true_error": float(np.mean(f != y)),
        "positives": float(yb.mean()),
        "predicted_positives": float(np.mean(f == pred.labels[1])),
    }


# ------------------------------------------------------------------------------------------
# Methods
# ------------------------------------------------------------------------------------------


@dataclass
class Runs:
    """Per (repetition, budget): estimate and interval (NaN bounds: none reported)."""

    est: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    note: str = ""
    #: The default's one-sided 95% bounds (the ends of its two-sided 90% interval) and the
    #: width of its design-based part (logit or Wald) alone, where computed.
    lo1: NDArray[np.float64] | None = None
    hi1: NDArray[np.float64] | None = None
    base_width: NDArray[np.float64] | None = None


def _interval(
    meas: Measure, est: NDArray[np.float64], se: NDArray[np.float64], n_eff: NDArray[np.float64],
    level: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """The design-based part of evaluate's interval for the model-assisted estimator: logit
    Wald (Clopper–Pearson fallback) for measures in [0, 1], Wald otherwise (as
    reproduce/assisted.py)."""
    if meas.binary_loss:
        lo, hi = logit_interval(est, se, level, n_eff, unit_weights=meas.unit_weights)
        return np.asarray(lo), np.asarray(hi)
    z = float(stats.norm.isf((1 - level) / 2))
    return est - z * se, est + z * se


def tempered_intervals(
    pred: Predictive, meas: Measure, y: NDArray[Any], q: NDArray[np.float64],
    b: NDArray[np.float64], est: NDArray[np.float64], se: NDArray[np.float64],
    n_eff: NDArray[np.float64], drawn: tuple[NDArray[np.intp], NDArray[np.intp]],
    level: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:  # fmt: skip
    """evaluate's default interval per (rep, budget) — the design-based one joined with the
    tempered-model score interval (:mod:`activeeval.estimators.tempered`; for two classes
    with the Platt members too) — with the variance curves computed once per budget (the
    campaigns stop at exactly that many distinct labels; the Platt members any campaign takes,
    each taking those :func:`~activeeval.estimators.tempered.curve` would compute) and each
    campaign's log-likelihoods summed from per-instance values (tested equal to evaluate). A
    Gaussian's members take each campaign's :func:`residual_kurtosis` κ; V and S hold the
    fourth moment once, linearly, so they are the curves at κ = 3 and 4 combined,
    V₃ + (κ − 3)(V₄ − V₃)."""
    lo, hi = _interval(meas, est, se, n_eff, level)
    draws, kept = drawn
    f = pred.point_prediction()
    p = np.full(pred.n, 1.0 / pred.n)
    ll_all = pointwise_log_likelihood(pred, y)
    cat = pred if isinstance(pred, Categorical) and pred.proba.shape[1] == 2 else None
    none = np.empty(0, dtype=np.intp)
    for j, n in enumerate(b):
        values, variances, spreads = variance_curve(pred, meas, f, q, p, int(n))
        tail = isinstance(pred, Gaussian)
        if tail:  # the curves' change per unit of kurtosis
            _, v4, s4 = variance_curve(pred, meas, f, q, p, int(n), kurtosis=4.0)
            dv, ds = v4 - variances, s4 - spreads
        todo = []
        for r in range(est.shape[0]):
            units = np.unique(draws[r, : kept[r, j]])
            vr, sr = variances, spreads
            if tail:
                k = residual_kurtosis(pred.take(units), y[units]) - 3.0
                vr, sr = variances + k * dv, spreads + k * ds
            curve = as_curve(values, vr, sr, ll_all[units].sum(axis=0))
            if units.shape[0] != int(n) or curve is None:
                continue
            ll = none.astype(float) if cat is None else platt_loglik(cat.take(units), y[units])
            todo.append((r, curve, ll, none if cat is None else platt_chosen(ll)))
        # The Platt members any campaign takes, computed once for all of them.
        union = np.unique(np.concatenate([c for *_, c in todo] or [none]))
        if cat is not None and union.size:
            g, v, sp = platt_members(_rows(cat, f, q, p, int(n)), meas, union)
        for r, curve, ll, chosen in todo:
            if chosen.size:
                at = np.searchsorted(union, chosen)  # the chosen members' positions in union
                curve = with_platt(curve, g[at], v[at], sp[at], ll[chosen])
            lo[r, j], hi[r, j] = curve.join((lo[r, j], hi[r, j]), float(est[r, j]), level)
    return lo, hi


def _tempered_runs(
    pred: Predictive, meas: Measure, y: NDArray[Any], q: NDArray[np.float64],
    b: NDArray[np.float64], reps: int, seed: int, sided: bool,
) -> Runs:  # fmt: skip
    """The model-assisted campaigns on ``q`` with evaluate's default interval, clipped to the
    measure's range; with ``sided``, also its one-sided 95% bounds (the two-sided 90%
    interval's ends) and the width of its design-based part."""
    est, se, _, n_eff, drawn = _runs(q, pred, meas, y, b, reps, seed=seed, assisted=True)
    rng_ = meas.value_range
    lo, hi = (np.clip(x, *rng_) for x in tempered_intervals(pred, meas, y, q, b, est, se,
                                                             n_eff, drawn))  # fmt: skip
    if not sided:
        return Runs(est, lo, hi)
    lo1, hi1 = (np.clip(x, *rng_) for x in tempered_intervals(pred, meas, y, q, b, est, se,
                                                               n_eff, drawn, 0.90))  # fmt: skip
    base = np.subtract(*_interval(meas, est, se, n_eff)[::-1])
    return Runs(est, lo, hi, lo1=lo1, hi1=hi1, base_width=base)


def _ours(
    pred: Predictive, meas: Measure, y: NDArray[Any], b: NDArray[np.float64], reps: int
) -> dict[str, Runs]:
    f = pred.point_prediction()
    w = meas.weight(f, y)
    m = pred.n
    q_star = optimal_distribution(pred, meas)
    out = {
        name: _tempered_runs(pred, meas, y, q, b, reps, seed=0, sided=name == DEFAULT)
        for name, q in ((DEFAULT, q_star), (PASSIVE, passive_distribution(m)))
    }
    # The thesis's estimator on q*, vectorised (tested equal to evaluate(estimator="snis")).
    s = simulate_static(q_star, w * meas.loss(f, y), w, b, reps, random_state=0)
    out[SNIS] = Runs(s.estimate, s.estimate - Z95 * s.stderr, s.estimate + Z95 * s.stderr)
    return out


def _peers_module() -> Any:
    try:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import peers
    except ImportError:
        return None
    return peers


def _oasis(
    pred: Predictive, meas: FMeasure, y: NDArray[Any], b: NDArray[np.float64], reps: int
) -> dict[str, Runs]:
    peers = _peers_module()
    if peers is None or not peers.oasis_available():
        return {}
    assert isinstance(pred, Categorical)
    pos = meas.pos_label
    score = pred.proba[:, pred.label_index([pos])[0]]
    f = pred.point_prediction()
    out = {}
    for name, sampler in ((OASIS, "oasis"), (SAWADE, "sawade_is")):
        est = peers.run_oasis(
            (y == pos).astype(int), (f == pos).astype(int), score, [int(x) for x in b],
            reps, alpha=meas.eta, sampler=sampler, seed=0, n_jobs=1,
        )  # fmt: skip
        nan = np.full(est.shape, np.nan)
        out[name] = Runs(est, nan, nan.copy())
    return out


def _ppi_ci(
    ppi: Any, y: NDArray[np.float64], yhat: NDArray[np.float64], unl: NDArray[np.float64],
    w: NDArray[np.float64] | None = None,
) -> tuple[float, float, float]:  # fmt: skip
    """PPI++ (λ tuned by ppi_py) 95% interval and its centre, the point estimate."""
    import warnings

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        lo, hi = ppi.ppi_mean_ci(y, yhat, unl, alpha=0.05, lam=None, w=w)
    lo, hi = float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
    return 0.5 * (lo + hi), lo, hi


def _ppi(
    pred: Predictive, meas: Measure, y: NDArray[Any], b: NDArray[np.float64], reps: int
) -> dict[str, Runs]:
    """PPI++ as benchmarks/peers.py runs it (uniform: a seeded permutation per repetition,
    its first n labeled, the rest unlabeled; active inference: importance weights 1/q on
    campaigns' draws from q ∝ sqrt(Var[ℓ | x]) mixed with uniform, the whole pool
    unlabeled), with ppi_py's interval."""
    try:
        import ppi_py
    except ImportError:
        return {}
    f = pred.point_prediction()
    loss = np.asarray(meas.loss(f, y), dtype=float)
    yhat = np.asarray(meas.conditional_expectations(pred, f)[0], dtype=float)
    m = loss.size
    shape = (reps, b.size)
    uni = [np.full(shape, np.nan) for _ in range(3)]
    act = [np.full(shape, np.nan) for _ in range(3)]
    q_ai = assisted_distribution(pred, meas)
    draws, kept, _ = _samples(q_ai, b, reps, 0, None, False)
    imp = 1.0 / (m * q_ai)
    for r in range(reps):
        perm = np.random.default_rng([0, r]).permutation(m)
        for j, n in enumerate(b.astype(int)):
            lab, unl = perm[:n], perm[n:]
            for k, v in enumerate(_ppi_ci(ppi_py, loss[lab], yhat[lab], yhat[unl])):
                uni[k][r, j] = v
            idx = draws[r, : kept[r, j]]
            for k, v in enumerate(_ppi_ci(ppi_py, loss[idx], yhat[idx], yhat, imp[idx])):
                act[k][r, j] = v
    return {PPI_UNIFORM: Runs(uni[0], uni[1], uni[2]), PPI_ACTIVE: Runs(act[0], act[1], act[2])}


def glide_available() -> bool:
    return GLIDE_PYTHON.exists()


def glide_inputs(
    pred: Predictive, meas: Measure, y: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """GLIDE's target (1{error} or the squared error), proxy (the model's expectation of
    it), uncertainty (its standard deviation under the model, floored at 1e-6 since GLIDE
    rejects zeros) and strata (five, by quantiles of the proxy, as in GLIDE's examples)."""
    f = pred.point_prediction()
    target = np.asarray(meas.loss(f, y), dtype=float)
    proxy = np.asarray(meas.conditional_expectations(pred, f)[0], dtype=float)
    if isinstance(pred, Gaussian):  # (y − μ)² with y ~ N(μ, σ²): sd √2·σ²
        sd = math.sqrt(2.0) * np.asarray(pred.var, dtype=float)
    else:
        sd = np.sqrt(np.clip(proxy * (1.0 - proxy), 0.0, None))
    u = np.maximum(sd, 1e-6)
    edges = np.unique(np.quantile(proxy, [0.25, 0.5, 0.75, 0.9]))
    groups = np.digitize(proxy, edges).astype(np.intp)
    return target, proxy, u, groups


def neyman_strata(proxy: NDArray[np.float64], groups: NDArray[np.intp], n: int) -> NDArray[np.intp]:
    """``groups`` (ordered by the proxy) with neighbours merged until GLIDE's Neyman
    allocation of ``n`` labels (∝ N_h·sd_h of the proxy, rounded) gives every stratum at
    least two labels and leaves at least two of its instances unlabeled, which
    ``StratifiedSampler`` demands (it raises otherwise: "fewer than two allocations",
    "over-allocated"). The stratum furthest out of bounds is merged into its neighbour with
    the smaller allocation, one at a time."""
    g = np.unique(groups, return_inverse=True)[1].astype(np.intp)
    while True:
        k = int(g.max()) + 1
        if k == 1:
            return g
        size = np.bincount(g, minlength=k)
        sd = np.array([np.std(proxy[g == h], ddof=1) if size[h] > 1 else 0.0 for h in range(k)])
        weight = size * sd
        alloc = n * weight / weight.sum() if weight.sum() > 0 else np.zeros(k)
        short = 2.0 - alloc  # > 0: fewer than two labels
        over = alloc - (size - 3.0)  # > 0: rounding up may leave fewer than two unlabeled
        if short.max() <= 0 and over.max() <= 0:
            return g
        h = int(np.argmax(np.maximum(short, over)))
        nb = h - 1 if h == k - 1 or (h > 0 and alloc[h - 1] <= alloc[h + 1]) else h + 1
        g = np.where(g == max(h, nb), min(h, nb), g)
        g = np.unique(g, return_inverse=True)[1].astype(np.intp)


def run_glide(
    target: NDArray[np.float64],
    proxy: NDArray[np.float64],
    u: NDArray[np.float64],
    groups: NDArray[np.intp],
    budgets: NDArray[np.float64],
    seeds: NDArray[np.intp],
    method: str,
    level: float = 0.95,
    timeout: float = 3600.0,
) -> dict[str, NDArray[Any]]:
    """One cell, every seed and budget, in one call of the worker under ``.venv-glide``."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        np.savez(src, target=target, proxy=proxy, uncertainty=u, groups=groups,
                 budgets=np.asarray(budgets, dtype=np.int64), seeds=seeds,
                 method=np.asarray(method), level=np.asarray(level))  # fmt: skip
        subprocess.run(
            [str(GLIDE_PYTHON), str(GLIDE_WORKER), str(src), str(dst)],
            check=True,
            timeout=timeout,
        )
        with np.load(dst, allow_pickle=False) as res:
            return {k: res[k] for k in res.files}


def _glide(
    pred: Predictive, meas: Measure, y: NDArray[Any], b: NDArray[np.float64], reps: int
) -> dict[str, Runs]:
    if not glide_available():
        return {}
    target, proxy, u, groups = glide_inputs(pred, meas, y)
    groups = np.stack([neyman_strata(proxy, groups, int(n)) for n in b])
    out = {}
    for name, method in ((GLIDE_ASI, "active"), (GLIDE_STRAT, "stratified")):
        res = run_glide(target, proxy, u, groups, b, np.arange(reps), method)
        out[name] = Runs(res["estimate"], res["lower"], res["upper"], str(res["errors"][0]))
    return out


# ------------------------------------------------------------------------------------------
# Summaries
# ------------------------------------------------------------------------------------------


def summarize(r: Runs, truth: float) -> dict[str, Any]:
    err = r.est - truth
    ok = np.isfinite(err)
    n = ok.sum(axis=0)
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        ae = np.abs(err)
        tol = 1e-12 * max(1.0, abs(truth))
        has_ci = np.isfinite(r.lo) & np.isfinite(r.hi)
        cover_each = ((r.lo - tol <= truth) & (truth <= r.hi + tol)).astype(float)
        cover_each[~has_ci] = np.nan
        ci_n = has_ci.sum(axis=0)
        cover = np.nanmean(cover_each, axis=0)
        out: dict[str, Any] = {
            "reps": [int(x) for x in n],
            "failed": [int(x) for x in (~ok).sum(axis=0)],
            "mae": list(np.nanmean(ae, axis=0)),
            "mae_se": list(np.nanstd(ae, axis=0) / np.sqrt(np.maximum(n, 1))),
            "bias": list(np.nanmean(err, axis=0)),
            "bias_se": list(np.nanstd(err, axis=0) / np.sqrt(np.maximum(n, 1))),
            "rmse": list(np.sqrt(np.nanmean(err**2, axis=0))),
            "coverage": list(np.where(ci_n > 0, cover, np.nan)),
            "coverage_se": list(np.sqrt(cover * (1 - cover) / np.maximum(ci_n, 1))),
            "width": list(np.where(ci_n > 0, np.nanmean(r.hi - r.lo, axis=0), np.nan)),
        }
    if r.lo1 is not None and r.hi1 is not None:
        both = np.isfinite(r.lo1) & np.isfinite(r.hi1)
        k = np.maximum(both.sum(axis=0), 1)
        out["coverage_lower"] = list(np.sum(both & (r.lo1 - tol <= truth), axis=0) / k)
        out["coverage_upper"] = list(np.sum(both & (truth <= r.hi1 + tol), axis=0) / k)
    if r.base_width is not None:
        with np.errstate(all="ignore"):
            out["width_vs_design"] = list(np.nanmean(r.hi - r.lo, axis=0)
                                          / np.nanmean(r.base_width, axis=0))  # fmt: skip
    if r.note:
        out["note"] = r.note
    return out


def ratio_to_best_peer(
    runs: dict[str, Runs], truth: float, boot: int = BOOTSTRAP, seed: int = 0
) -> dict[str, Any]:
    """MAE of the default ÷ the least MAE of any peer, per budget, with its bootstrap s.e.
    (each method's repetitions resampled independently: they are independent campaigns)."""
    peers = [k for k in PEERS if k in runs]
    nb = runs[DEFAULT].est.shape[1]
    if not peers:
        return {"ratio": [math.nan] * nb, "se": [math.nan] * nb, "best": [None] * nb}
    rng = np.random.default_rng(seed)
    errs = {k: np.abs(runs[k].est - truth) for k in [DEFAULT, *peers]}

    def mae(e: NDArray[np.float64], j: int, idx: NDArray[np.intp] | None) -> float:
        col = e[:, j] if idx is None else e[idx, j]
        col = col[np.isfinite(col)]
        return float(col.mean()) if col.size else math.inf

    ratio, se, best = [], [], []
    for j in range(nb):
        pm = {k: mae(errs[k], j, None) for k in peers}
        k_best = min(pm, key=lambda k: pm[k])
        ratio.append(mae(errs[DEFAULT], j, None) / pm[k_best] if pm[k_best] > 0 else math.nan)
        best.append(k_best)
        vals = []
        for _ in range(boot):
            idx = {
                k: np.asarray(rng.integers(0, errs[k].shape[0], errs[k].shape[0]), dtype=np.intp)
                for k in errs
            }
            den = min(mae(errs[k], j, idx[k]) for k in peers)
            if den > 0 and math.isfinite(den):
                vals.append(mae(errs[DEFAULT], j, idx[DEFAULT]) / den)
        se.append(float(np.std(vals)) if vals else math.nan)
    return {"ratio": ratio, "se": se, "best": best}


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------


#: The issue's digits case ("Figures to reach": coverage ≥ 0.93 at 150 and 400 labels, error
#: rate and F1, 1,000 seeds): digits 3 vs rest, the plain logistic regression on a random 30%
#: of the images. Split 0 is the stress suite's; the issue found another split worse (F1
#: covered 0.743 at 400 labels), so five splits are run.
DIGITS_SPLITS = (0, 1, 2, 3, 4)
DIGITS_BUDGETS = (150, 400)


def digits_case(
    reps: int, smoke: bool = False, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """The default, passive and the thesis's SNIS on the issue's digits case, split by split
    (:data:`DIGITS_SPLITS`, :data:`DIGITS_BUDGETS`; the same campaigns as the stress suite's
    :func:`_ours`)."""
    rows = []
    for split in DIGITS_SPLITS[:1] if smoke else DIGITS_SPLITS:
        task = load_digits3(seed=split)
        pred = pool_predictive(_logistic(task), task.X_pool)
        y = task.y_pool
        for meas0 in (ErrorRate(), FMeasure(1.0, pos_label=1)):
            meas = meas0.bind(pred)
            truth = pool_value(meas, pred, y)
            runs = _ours(pred, meas, y, np.asarray(DIGITS_BUDGETS, dtype=float), reps)
            rows.append({
                "split": split, "measure": meas.name, "truth": truth,
                "budgets": list(DIGITS_BUDGETS), "model": how_wrong(pred, y),
                "methods": {k: summarize(v, truth) for k, v in runs.items()},
            })  # fmt: skip
            log(f"digits case, split {split}, {meas.name}")
    return {"reps": reps, "rows": rows}


def digits_lines(case: dict[str, Any]) -> list[str]:
    """The digits case's table and its reading against the issue's floor (0.93)."""
    lines = [
        "## The issue's digits case",
        "",
        f"Digits 3 vs rest, the plain logistic regression on a random 30% of the images (split "
        f"0 is the suite's `digits3 / logistic`), {case['reps']} seeded campaigns per cell; "
        "coverage ± its MC s.e. (bold: below the issue's 0.93) and mean width, for the "
        "default, passive and the thesis's SNIS. `expects` / `has`: the model's expected and "
        "the pool's error rate.",
        "",
        "| split | expects / has | measure | n | default | passive | thesis SNIS | default MAE |",
        "|---|---|---|---|---|---|---|---|",
    ]
    low = []
    for row in case["rows"]:
        md = row["model"]
        for j, n in enumerate(row["budgets"]):
            cells = []
            for name in (DEFAULT, PASSIVE, SNIS):
                s = row["methods"][name]
                c = s["coverage"][j]
                mark = "**" if c < 0.93 else ""
                cells.append(f"{mark}{_f(c, '.3f')}{mark} ± {_f(s['coverage_se'][j], '.3f')} "
                             f"/ {_f(s['width'][j])}")  # fmt: skip
            c = row["methods"][DEFAULT]["coverage"][j]
            if c < 0.93:
                low.append(f"split {row['split']} {row['measure']} @{n}: {c:.3f}")
            lines.append(
                f"| {row['split']} | {md['expected_error']:.4f} / {md['true_error']:.4f} "
                f"| {row['measure']} | {n} | "
                + " | ".join(cells)
                + f" | {_f(row['methods'][DEFAULT]['mae'][j])} |"
            )
    covs = [r["methods"][DEFAULT]["coverage"][j] for r in case["rows"]
            for j in range(len(r["budgets"]))]  # fmt: skip
    lines += [
        "",
        f"- The default's coverage over these {len(covs)} cells: {min(covs):.3f}–"
        f"{max(covs):.3f}; below 0.93 ({len(low)}): {'; '.join(low) if low else 'none'}.",
        "",
    ]
    return lines


def _timed(
    timing: dict[str, float], fn: Callable[..., dict[str, Runs]], *args: Any
) -> dict[str, Runs]:
    """``fn(*args)``, its wall time split evenly over the methods it ran, into ``timing``."""
    t = time.time()
    res = fn(*args)
    for k in res:
        timing[k] = (time.time() - t) / max(len(res), 1)
    return res


#: What ``run`` can regenerate on its own (``--sections``); the others are kept from the
#: output directory's ``robustness.json``.
SECTIONS = ("settings", "digits_case", "recheck")
#: Campaigns per cell where a cell of the stress suite below the floor is measured again: the
#: issue's floor, 0.93, is nominal − 3 MC s.e. at 1,000; the suite's own runs have fewer.
RECHECK_REPS = 1000
#: The re-measurement's campaigns are seeded apart from the suite's (seed 0).
RECHECK_SEED = 1


def _floor(n: float) -> float:
    """The issue's coverage floor at ``n`` labels: 0.90 at 50, 0.93 from 100."""
    return 0.90 if n < 100 else 0.93


def recheck(result: dict[str, Any], reps: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """The stress suite's cells below a floor — the two-sided interval's, or from 100 labels
    either one-sided 95% bound's — measured again with ``reps`` fresh campaigns of the
    default alone (its peers are what makes the suite slow to run at 1,000)."""
    tasks: dict[str, EvaluationTask] = {}
    preds: dict[Any, Predictive] = {}
    measures = {(t, k, m.name): m for t, k, m in plan()}
    out = []
    for row in result["settings"]:
        d = row["methods"][DEFAULT]
        cells = [
            (j, n) for j, n in enumerate(row["budgets"])
            if d["coverage"][j] < _floor(n)
            or (n >= 100 and min(d.get("coverage_lower", [1.0] * (j + 1))[j],
                                 d.get("coverage_upper", [1.0] * (j + 1))[j]) < 0.93)
        ]  # fmt: skip
        if not cells:
            continue
        t0 = time.time()
        task, pred = model_for(row["task"], row["model"], tasks, preds)
        meas = measures[row["task"], row["model"], row["measure"]].bind(pred)
        y = task.y_pool
        b = np.asarray([n for _, n in cells], dtype=float)
        q = optimal_distribution(pred, meas)
        runs = _tempered_runs(pred, meas, y, q, b, reps, seed=RECHECK_SEED, sided=True)
        now = summarize(runs, pool_value(meas, pred, y))  # as the suite counts them
        for k, (j, n) in enumerate(cells):
            out.append({
                "task": row["task"], "model": row["model"], "measure": row["measure"],
                "n": int(n), "reps": reps,
                "before": {"reps": result["reps"], "coverage": d["coverage"][j],
                           "lower": d.get("coverage_lower", [math.nan] * (j + 1))[j],
                           "upper": d.get("coverage_upper", [math.nan] * (j + 1))[j]},
                "coverage": float(now["coverage"][k]),
                "lower": float(now["coverage_lower"][k]),
                "upper": float(now["coverage_upper"][k]),
                "failed": int(now["failed"][k]),
            })  # fmt: skip
        log(f"recheck: {row['task']} / {row['model']} / {row['measure']} "
            f"({time.time() - t0:.0f}s)")  # fmt: skip
    return out


def recheck_lines(cells: list[dict[str, Any]]) -> list[str]:
    """The re-measured cells: before and after, and which stay below a floor."""
    if not cells:
        return ["## Cells below a floor, measured again", "", "None were below a floor.", ""]
    reps = cells[0]["reps"]
    mc = math.sqrt(0.95 * 0.05 / reps)
    lines = [
        f"## Cells below a floor, measured again ({reps} campaigns)",
        "",
        f"The cells above whose coverage fell below the issue's floor (0.93 from 100 labels, "
        f"0.90 at 50), or from 100 labels whose one-sided 95% bound held in fewer than 0.93 of "
        f"the campaigns, with {reps} fresh campaigns of the default (seed {RECHECK_SEED}; the "
        f"floor is nominal − 3 MC s.e. at 1,000, MC s.e. {mc:.4f} at 0.95). Before: this "
        f"page's run ({cells[0]['before']['reps']} campaigns).",
        "",
        "| cell | two-sided before → now | lower bound before → now | upper bound before → now |",
        "|---|---|---|---|",
    ]
    still = []
    for c in cells:
        b = c["before"]
        name = f"{c['task']} / {c['model']} / {c['measure']} @{c['n']}"

        def mark(x: float, floor: float) -> str:
            return f"**{x:.3f}**" if x < floor else f"{x:.3f}"

        lines.append(
            f"| {name} | {b['coverage']:.3f} → {mark(c['coverage'], _floor(c['n']))} | "
            f"{_f(b['lower'], '.3f')} → {mark(c['lower'], 0.93 if c['n'] >= 100 else 0)} | "
            f"{_f(b['upper'], '.3f')} → {mark(c['upper'], 0.93 if c['n'] >= 100 else 0)} |"
        )
        if c["coverage"] < _floor(c["n"]):
            still.append(f"{name} two-sided {c['coverage']:.3f}")
        for side in ("lower", "upper"):
            if c["n"] >= 100 and c[side] < 0.93:
                still.append(f"{name} {side} {c[side]:.3f}")
    lines += [
        "",
        f"- Below a floor at {reps} campaigns ({len(still)}): "
        + ("; ".join(still) if still else "none")
        + ".",
        "",
    ]
    return lines


def run(
    out: Path, reps: int, budgets: tuple[int, ...] = BUDGETS, smoke: bool = False,
    oasis_reps: int | None = None, log: Callable[[str], None] = print,
    sections: tuple[str, ...] = SECTIONS,
) -> dict[str, Any]:  # fmt: skip
    path = out / "robustness.json"
    before = json.loads(path.read_text()) if path.exists() else {}
    if "settings" in sections:
        result = stress_suite(reps, budgets, smoke, oasis_reps, log)
    elif before:  # keep the stress suite's cells of the run before
        result = {k: v for k, v in before.items() if k not in ("digits_case", "recheck")}
    else:
        raise FileNotFoundError(f"{path}: no stress suite to keep; run its settings first.")
    if "digits_case" in sections:
        result["digits_case"] = digits_case(reps, smoke, log)
    elif "digits_case" in before:  # keep the digits case of the run before
        result["digits_case"] = before["digits_case"]
    if "recheck" in sections:  # after the cells it re-measures
        result["recheck"] = recheck(result, min(reps, 30) if smoke else RECHECK_REPS, log)
    elif "recheck" in before and "settings" not in sections:  # still about these cells
        result["recheck"] = before["recheck"]
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))
    (out / "robustness.md").write_text(report(result))
    return result


def pool_value(meas: Measure, pred: Predictive, y: NDArray[Any]) -> float:
    """The measure (bound to ``pred``) of the model's decisions on the whole pool's labels."""
    f = pred.point_prediction()
    w = meas.weight(f, y)
    return float(w @ meas.loss(f, y) / w.sum())


def stress_suite(
    reps: int, budgets: tuple[int, ...], smoke: bool, oasis_reps: int | None,
    log: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    """Every setting of :func:`plan`: the default, passive, SNIS and the peers per budget,
    the models' miscalibration, and the ratios to the best peer."""
    oasis_reps = min(reps, OASIS_REPS if oasis_reps is None else oasis_reps)
    tasks: dict[str, EvaluationTask] = {}
    preds: dict[Any, Predictive] = {}
    settings = []
    models: dict[str, dict[str, Any]] = {}
    t0 = time.time()
    for task_name, kind, meas0 in plan(smoke):
        task, pred = model_for(task_name, kind, tasks, preds)
        y = task.y_pool
        meas = meas0.bind(pred)
        truth = pool_value(meas, pred, y)
        b = np.asarray([x for x in budgets if x < 0.7 * pred.n], dtype=float)
        models.setdefault(f"{task_name} / {kind}", {"pool": pred.n, **how_wrong(pred, y)})
        timing: dict[str, float] = {}
        runs = _timed(timing, _ours, pred, meas, y, b, reps)
        if isinstance(meas, FMeasure):
            runs.update(_timed(timing, _oasis, pred, meas, y, b, oasis_reps))
        if meas.regular:  # a mean of losses: PPI++ and GLIDE apply
            runs.update(_timed(timing, _ppi, pred, meas, y, b, reps))
            runs.update(_timed(timing, _glide, pred, meas, y, b, reps))
        row = {
            "task": task_name,
            "model": kind,
            "measure": meas.name,
            "truth": truth,
            "budgets": [int(x) for x in b],
            "methods": {k: summarize(v, truth) for k, v in runs.items()},
            "ratio": ratio_to_best_peer(runs, truth),
            "seconds": timing,
        }
        settings.append(row)
        log(f"{task_name:20s} {kind:12s} {meas.name:10s} ({time.time() - t0:.0f}s)")
    return {
        "reps": reps,
        "oasis_reps": oasis_reps,
        "glide": glide_available(),
        "seconds": time.time() - t0,
        "models": models,
        "settings": settings,
    }


def _f(x: float, fmt: str = ".4f") -> str:
    return "–" if x is None or not math.isfinite(x) else format(x, fmt)


def _flag(d: dict[str, Any], p: dict[str, Any], j: int) -> str:
    """'ok' when the default's MAE is at most passive's + 2 MC s.e. (of the difference)."""
    lim = 2 * math.hypot(d["mae_se"][j], p["mae_se"][j])
    return "ok" if d["mae"][j] <= p["mae"][j] + lim else "**above**"


def headline(result: dict[str, Any]) -> list[str]:
    lines = [
        "| setting | n | cover (± MC s.e.) | width | MAE | ÷best peer (± boot s.e.) "
        "| best peer | ÷passive | ≤ passive + 2 s.e. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["settings"]:
        d, p = row["methods"][DEFAULT], row["methods"][PASSIVE]
        rt = row["ratio"]
        label = f"{row['task']} / {row['model']} / {row['measure']}"
        for j, n in enumerate(row["budgets"]):
            cov = d["coverage"][j]
            mark = "**" if cov < _floor(n) else ""
            best = rt["best"][j]
            if best is not None and row["methods"][best]["failed"][j]:
                fb = row["methods"][best]
                bad = fb["failed"][j]
                best += f" ({bad} of {bad + fb['reps'][j]} undefined)"
            lines.append(
                f"| {label} | {n} | {mark}{_f(cov, '.3f')}{mark} "
                f"± {_f(d['coverage_se'][j], '.3f')} "
                f"| {_f(d['width'][j])} | {_f(d['mae'][j])} "
                f"| {_f(rt['ratio'][j], '.2f')} ± {_f(rt['se'][j], '.2f')} "
                f"| {(best or '–').removeprefix('peer ')} "
                f"| {_f(d['mae'][j] / p['mae'][j] if p['mae'][j] > 0 else math.nan, '.2f')} "
                f"| {_flag(d, p, j)} |"
            )
    return lines


def findings(result: dict[str, Any]) -> list[str]:
    """The issue's figures, read off the run: coverage floors, the ratio to the best peer and
    to passive, cell by cell (budgets from 100 for the ratios, as the issue states them)."""
    low, lose, above, ratios, covs = [], [], [], [], []
    sides: dict[str, list[float]] = {"lower": [], "upper": []}
    side_low: list[str] = []
    widen: dict[int, list[float]] = {}
    for row in result["settings"]:
        d, p, rt = row["methods"][DEFAULT], row["methods"][PASSIVE], row["ratio"]
        label = f"{row['task']} / {row['model']} / {row['measure']}"
        for j, n in enumerate(row["budgets"]):
            cov = d["coverage"][j]
            covs.append(cov)
            if cov < _floor(n):
                low.append(f"{label} @{n}: {cov:.3f}")
            if n >= 100 and math.isfinite(rt["ratio"][j]):
                ratios.append(rt["ratio"][j])
                if rt["ratio"][j] > 1 + 2 * rt["se"][j]:
                    best = str(rt["best"][j]).removeprefix("peer ")
                    lose.append(f"{label} @{n}: {rt['ratio'][j]:.2f} ± {rt['se'][j]:.2f} ({best})")
            if n >= 100 and _flag(d, p, j) != "ok":
                above.append(f"{label} @{n}: {d['mae'][j]:.4f} vs {p['mae'][j]:.4f}")
            for side in ("lower", "upper"):
                c1 = d.get(f"coverage_{side}", [math.nan] * (j + 1))[j]
                if math.isfinite(c1):
                    sides[side].append(c1)
                    if n >= 100 and c1 < 0.93:
                        side_low.append(f"{label} @{n} {side}: {c1:.3f}")
            if "width_vs_design" in d and math.isfinite(d["width_vs_design"][j]):
                widen.setdefault(n, []).append(d["width_vs_design"][j])
    n_cells = len(covs)
    reps = result["reps"]
    pooled = float(np.mean(covs)) if covs else math.nan
    pooled_se = math.sqrt(pooled * (1 - pooled) / max(n_cells * reps, 1))
    med = float(np.median(ratios)) if ratios else math.nan

    def listing(items: list[str]) -> str:
        return "; ".join(items) if items else "none"

    return [
        f"- Coverage of the default's 95% interval, pooled over all {n_cells} cells: "
        f"{pooled:.3f} ± {pooled_se:.3f} (goal ≥ 0.945).",
        f"- Cells below the coverage floor (0.93 from 100 labels, 0.90 at 50; "
        f"{len(low)} of {n_cells}): {listing(low)}.",
        f"- Median MAE ratio default ÷ best peer over {len(ratios)} cells with a peer, "
        f"100–800 labels: {med:.2f} (goal ≤ 0.85). Cells where the default loses to the best "
        f"peer by more than 2 bootstrap s.e. ({len(lose)}): {listing(lose)}.",
        f"- Cells (100–800 labels) where the default's MAE is above passive's by more than 2 "
        f"MC s.e. ({len(above)}): {listing(above)}.",
        "- One-sided 95% bounds of the default (each side on its own, as a release gate uses "
        "it), pooled over the cells: the lower bound holds in "
        f"{np.mean(sides['lower']) if sides['lower'] else math.nan:.3f}, the upper in "
        f"{np.mean(sides['upper']) if sides['upper'] else math.nan:.3f} of the campaigns; "
        f"cells below 0.93 on a side from 100 labels ({len(side_low)}): {listing(side_low)}.",
        "- Width of the default's interval ÷ its design-based part alone (logit or Wald), "
        "median over cells by budget: "
        + ", ".join(
            f"{n}: {np.median(v):.2f} (max {np.max(v):.2f})" for n, v in sorted(widen.items())
        )
        + ".",
    ]


def report(result: dict[str, Any]) -> str:
    reps, oreps = result["reps"], result["oasis_reps"]
    glide = result["glide"]
    lines = [
        "# Robustness: the default when the model's probabilities are wrong",
        "",
        f"Generated by `python -m reproduce --only robustness` ({reps} repetitions per budget; "
        f"the oasis samplers {oreps}; GLIDE {'run' if glide else GLIDE_MISSING}; "
        f"{result['seconds'] / 60:.0f} min). Issue 26, Deliver 1. MAE and bias of the "
        "estimate against the whole pool's value; `cover` = share of 95% intervals that "
        "contain it (± its Monte-Carlo standard error √(c(1 − c)/R)); `width` = mean "
        'interval width. The default is `ae.evaluate(..., method="active")` (q*, the '
        "model-assisted estimator, its `tempered` interval: the logit-Wald interval for "
        "measures in [0, 1], Wald otherwise, joined with the score interval of the model's "
        "tempered probabilities — for two classes also of its Platt recalibrations σ(a·logit "
        "+ b) where the labels reject b = 0 — `activeeval.estimators.tempered`); passive "
        'is `method="passive"` (the same estimator and interval on uniform draws); thesis SNIS is '
        '`estimator="snis"` on q* with its Wald interval. Peers: oasis 0.1.3 OASIS and '
        "Sawade importance sampling (F1 only; point estimates, no interval); ppi_py PPI++ "
        "with uniform labels and with importance weights on draws from the active-inference "
        "q ∝ sqrt(Var[ℓ | x]) mixed with uniform (as `benchmarks/peers.py`), with "
        "`ppi_mean_ci`'s interval; GLIDE (glide-py 0.11.0, Python 3.12, "
        "`benchmarks/glide_worker.py`) `ActiveSampler` + `ASIMeanEstimator` (target "
        "1{error} or the squared error, proxy its expectation under the model, uncertainty "
        'its standard deviation under the model) and `StratifiedSampler(strategy="neyman")` '
        "+ `StratifiedPPIMeanEstimator` (five strata by quantiles of the proxy, neighbours "
        "merged until Neyman allocation gives each at least the two labels GLIDE demands). "
        "GLIDE and PPI++ estimate means, so they run on error rate and MSE, not on F1 (a ratio). "
        "GLIDE's active design: π = min(1, c·u) with Σπ = n in closed form (its own "
        "trust-constr optimizer reaches the same π but takes minutes and gigabytes on these "
        "pools; equality tested on a small pool), then its own shuffle, Bernoulli draws and "
        "cut at n labels, mirrored from the installed source; its label count is random, at "
        "most n.",
        "",
        "`÷best peer` = the default's MAE ÷ the least MAE of the peers run on that cell, with "
        "its bootstrap standard error over repetitions (the best of several noisy peers is "
        "biased low); `÷passive` = ÷ passive's MAE; the last column says whether the "
        "default's MAE is within two Monte-Carlo standard errors (of the difference) of "
        "passive's or below. Coverage in bold: below 0.93 (0.90 at 50 labels), the issue's "
        "floor.",
        "",
        "## The models: how wrong their probabilities are",
        "",
        "ECE = expected calibration error of p(y = 1) over the pool (10 equal-width bins); "
        "`expects` = the model's own expected error rate (mean of 1 − max p), `has` = the "
        "pool's error rate; for the regressor the model's expected vs the pool's MSE.",
        "",
        "| task / model | what | pool | positives | ECE | expects | has |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, m in result["models"].items():
        kind = key.split(" / ", 1)[1]
        if "ece" in m:
            lines.append(
                f"| {key} | {VARIANTS[kind]} | {m['pool']} | {m['positives']:.3f} | "
                f"{m['ece']:.3f} | {m['expected_error']:.4f} | {m['true_error']:.4f} |"
            )
        else:
            lines.append(
                f"| {key} | {VARIANTS[kind]} | {m['pool']} | – | – | MSE "
                f"{m['expected_mse']:.4f} | MSE {m['true_mse']:.4f} |"
            )
    lines += ["", "## What this shows", "", *findings(result), ""]
    if "recheck" in result:
        lines += recheck_lines(result["recheck"])
    if "digits_case" in result:
        lines += digits_lines(result["digits_case"])
    lines += ["## Headline: the default per setting and budget", "", *headline(result), ""]
    lines += ["## Every method", ""]
    lines.append(
        "Per cell: MAE / bias / coverage / mean width ('–': no interval). Repetitions as "
        "above; a method's failed repetitions (estimate undefined) are left out and counted "
        "in the JSON."
    )
    lines.append("")
    for row in result["settings"]:
        lines += [
            f"### {row['task']} / {row['model']} / {row['measure']} "
            f"(pool value {row['truth']:.4f})",
            "",
            "| method | " + " | ".join(f"n = {n}" for n in row["budgets"]) + " |",
            "|---|" + "---|" * len(row["budgets"]),
        ]
        for name, s in row["methods"].items():
            cells = [
                f"{_f(s['mae'][j])} / {_f(s['bias'][j], '+.4f')} / "
                f"{_f(s['coverage'][j], '.3f')} / {_f(s['width'][j])}"
                for j in range(len(row["budgets"]))
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        if not glide and row["measure"] != "f1":
            lines.append(f"| GLIDE | {GLIDE_MISSING} |" + " |" * (len(row["budgets"]) - 1))
        lines.append("")
    return "\n".join(lines) + "\n"
