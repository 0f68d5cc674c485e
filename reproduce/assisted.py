"""Model-assisted estimation side by side with the thesis's estimator and the peers.

Same pools, same label budgets, one run: passive (uniform, SNIS), thesis active (q*, SNIS),
activeeval's model-assisted estimator with power tuning under uniform draws, under the thesis's
q* (the default; also given the pool's features) and under its own variance-optimal q
(with its floor, and without it), the oracle q from the true labels, and
PPI++ (``ppi_py``, the model's expected loss as the prediction) for measures that are means of
losses: with uniform labels, with importance weights under the active-inference
q ∝ sqrt(Var[ℓ|x]) (Zrnic & Candès, 2024; the draws of "assisted, own q"), and with importance
weights on exactly the default's draws (the two estimators alone). The oasis peers' F1 numbers
come from the active-estimation run (same pools and budgets, ``active_estimation.json``).
The comparison issue's model pairs likewise, with ``compare``'s default and the same given
the pool's features.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from activeeval._validation import check_random_state
from activeeval.datasets import EvaluationTask, load_task
from activeeval.demo import _runs, _samples, labels_to_match, pool_predictive
from activeeval.estimators.assisted import (
    MIN_DISAGREEMENTS,
    _conditional_variance,
    _disagreements,
    _domain,
    _model_terms,
    _paired_from_terms,
    _prediction_groups,
    _with_smoother,
    assisted_distribution,
    assisted_estimate,
)
from activeeval.estimators.inference import logit_interval
from activeeval.estimators.smoother import DEFAULT_BANDWIDTH, _standardized
from activeeval.measures import ErrorRate, FMeasure, Measure, SquaredError
from activeeval.methods import DEFAULT_MIX
from activeeval.predictive import Categorical, Gaussian, Mixture, Predictive
from activeeval.sampling import comparison_distribution, optimal_distribution, passive_distribution

from .comparison import _fit_models
from .models import fit_classifier, fit_regressor, pool_for

PLAN: list[tuple[str, str, Measure]] = [
    ("email_shift", "logistic", ErrorRate()),
    ("email_shift", "logistic", FMeasure(1.0, pos_label=1)),
    ("default_skew", "logistic", ErrorRate()),
    ("default_skew", "logistic", FMeasure(1.0, pos_label=1)),
    ("caravan_skew", "logistic", FMeasure(1.0, pos_label=1)),
    ("diamonds_regression", "bayesian_ridge", SquaredError()),
    ("email_shift", "naive_bayes", ErrorRate()),
    ("default_skew", "naive_bayes", FMeasure(1.0, pos_label=1)),
]


def _peers_module() -> Any:
    try:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
        import peers
    except ImportError:
        return None
    return peers if peers.ppi_available() else None


def _ppi(
    losses_true: NDArray[np.float64],
    losses_pred: NDArray[np.float64],
    budgets: NDArray[np.float64],
    reps: int,
    seed: int,
    draws: Any = None,
    q: NDArray[np.float64] | None = None,
) -> NDArray[np.float64] | None:
    """PPI++ (``ppi_py``) estimates of the pool mean of ``losses_true`` with ``losses_pred``
    (the model's expectation of each loss) as the prediction: uniform labels without
    replacement, or — with ``draws`` = (draws, kept) from q — on exactly the draws of our
    campaign with importance weights 1/q (``w``), the whole pool as the unlabeled set. None
    if ppi_py is missing."""
    peers = _peers_module()
    if peers is None:
        return None
    if draws is None:
        return np.asarray(
            peers.run_ppi_mean(losses_true, losses_pred, [int(b) for b in budgets], reps, seed=seed)
        )
    assert q is not None
    d, kept = draws
    samples = [d[r, : kept[r, j]] for r in range(reps) for j in range(budgets.shape[0])]
    out = peers.run_ppi_importance(losses_true, losses_pred, samples, 1.0 / q)
    return np.asarray(out).reshape(reps, budgets.shape[0])


def optimal_inclusion(sigma: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Inclusion probabilities π ≥ 0, π ≤ 1, Σπ = n (n distinct labels) that minimize
    Σ_i (1/π_i − 1)·σ_i²: π_i = min(1, k·σ_i) (Lagrange; Särndal, Swensson & Wretman, 1992,
    §12.2), where k solves Σπ = n. π = 1 wherever σ > 0 when n covers those instances; π = 0
    where σ = 0 (those instances need no label)."""
    sig = np.asarray(sigma, dtype=float)
    if n < 1:
        raise ValueError(f"n: the number of labels must be at least 1, got {n}.")
    if not np.isfinite(sig).all() or (sig < 0).any():
        raise ValueError("sigma: standard deviations must be finite and non-negative.")
    pi = np.zeros_like(sig)
    pos = np.flatnonzero(sig > 0)
    if n >= pos.size:
        pi[pos] = 1.0
        return pi
    scaled = sig[pos] / sig[pos].max()  # k·σ cannot overflow on tiny σ
    s = np.sort(scaled)[::-1]
    tail = np.cumsum(s[::-1])[::-1]  # Σ_{j ≥ t} s_j
    t = np.arange(n)
    # The t largest are capped at 1: the least t with (n − t)·s_t ≤ Σ_{j ≥ t} s_j (t = n − 1
    # always qualifies; failing at t − 1 means k·s_{t−1} > 1).
    cap = int(np.argmax((n - t) * s[:n] <= tail[:n]))
    pi[pos] = np.minimum(1.0, (n - cap) / tail[cap] * scaled)
    return pi


def model_limit(
    pred: Predictive, meas: Measure, budgets: NDArray[np.float64], y: NDArray[Any] | None = None
) -> tuple[list[float], list[float] | None]:
    """The root mean square error below which no design-unbiased estimator can be expected to
    go with n distinct labels, at each n in ``budgets``, if the model's probabilities are
    right (to first order for ratio measures); and, given the pool's labels ``y``, the same
    design's and estimator's RMSE on those labels (a calibration check).

    Under the model (the y_i independent given x_i), the error of a ratio measure's
    estimate is to first order Σ_s u_i/π_i − Σ_pool u_i with u_i = p_i·w_i(ℓ_i − Ǧ)/D̄
    (Ǧ and D̄ = Σ p E[w | x] the model's), and any design-unbiased estimator of Σ u under a
    design with inclusion probabilities π (fixed or random size, not depending on the labels)
    has an anticipated MSE of at least V = Σ (1/π_i − 1)·Var[u_i | x_i] (Godambe & Joshi,
    1965; the difference estimator with the model's E[u | x] reaches it). The variance is
    :func:`~activeeval.estimators.assisted.assisted_distribution`'s; V is minimized over the designs
    of expected size n (:func:`optimal_inclusion`). Returned as √V.

    With the labels, the same design and difference estimator have MSE
    V_y = Σ (1/π_i − 1)·e_i², e_i = p_i·[(wℓ − m_N) − G(w − m_D)]/D at the pool's G and D;
    infinite where an instance the model is certain of (π = 0) has e ≠ 0. On a single pool
    √(V_y/V) scatters around 1 even for a right model (:func:`limit_scatter`: 0.71–1.26 in
    80% of the label vectors drawn from the logistic model on the e-mail pool at 800
    labels, 0.93–1.08 at 100); far from
    1 it says the probabilities are wrong and the limit means nothing (the naive-Bayes
    error rate: the model expects 0.65% errors where the pool has 9.7%). NaN where the
    model's own value is undefined."""
    m = pred.n
    p = np.full(m, 1.0 / m)
    f = pred.point_prediction()
    c = meas.intrinsic_value(pred, f, pool_weights=p)
    var, m_den = _conditional_variance(pred, meas, c, f)
    nan = [math.nan] * len(budgets)
    if math.isnan(c) or not np.isfinite(var).all():
        return nan, None if y is None else nan
    sigma = p * np.sqrt(var) / float(p @ m_den)
    designs = [optimal_inclusion(sigma, int(n)) for n in budgets]
    limit = [
        math.sqrt(float(np.sum((1.0 / pi[pi > 0] - 1.0) * sigma[pi > 0] ** 2))) for pi in designs
    ]
    if y is None:
        return limit, None
    w = meas.weight(f, y)
    if not p @ w > 0:  # the pool's own value is undefined
        return limit, nan
    m_num = meas.conditional_expectations(pred, f)[0]
    g = float(w @ meas.loss(f, y) / w.sum())
    e = p * ((w * meas.loss(f, y) - m_num) - g * (w - m_den)) / float(p @ w)
    labels = []
    for pi in designs:
        keep = pi > 0
        v_y = float(np.sum((1.0 / pi[keep] - 1.0) * e[keep] ** 2))
        labels.append(math.inf if np.any(e[~keep] != 0) else math.sqrt(v_y))
    return limit, labels


#: Label vectors :func:`limit_scatter` draws from the model.
SCATTER_REPS = 200


def draw_labels(pred: Predictive, rng: np.random.Generator) -> NDArray[Any]:
    """One label per pool instance drawn from the model itself (a Categorical's classes, a
    Gaussian's values)."""
    if isinstance(pred, Categorical):
        u = rng.random(pred.n)[:, None]
        k = (u > np.cumsum(pred.proba, axis=1)).sum(axis=1)
        return pred.labels[np.minimum(k, pred.proba.shape[1] - 1)]
    if isinstance(pred, Gaussian):
        return pred.mean + np.sqrt(pred.var) * rng.normal(size=pred.n)
    raise TypeError(f"draw_labels: cannot draw labels from a {type(pred).__name__}.")


def limit_scatter(
    pred: Predictive,
    meas: Measure,
    budgets: NDArray[np.float64],
    reps: int = SCATTER_REPS,
    seed: int = 0,
) -> tuple[list[float], list[float]]:
    """10% and 90% quantiles, at each budget, of √(V_y/V) (:func:`model_limit`) over ``reps``
    label vectors drawn from the model itself (:func:`draw_labels`): how far a right
    model's pool scatters around its limit. NaN where the limit is 0 or undefined."""
    rng = check_random_state(seed)
    limit = np.asarray(model_limit(pred, meas, budgets)[0])
    ok = limit > 0
    ratios = np.full((reps, limit.shape[0]), math.nan)
    for r in range(reps):
        on = model_limit(pred, meas, budgets, draw_labels(pred, rng))[1]
        assert on is not None
        ratios[r, ok] = np.asarray(on)[ok] / limit[ok]
    if not ok.any():
        return [math.nan] * limit.shape[0], [math.nan] * limit.shape[0]
    lo = np.full(limit.shape[0], math.nan)
    hi = lo.copy()
    lo[ok], hi[ok] = np.nanpercentile(ratios[:, ok], [10, 90], axis=0)
    return list(lo), list(hi)


def run(out: Path, reps: int, budgets: tuple[int, ...], smoke: bool = False) -> dict[str, Any]:
    b = np.asarray(budgets, dtype=float)
    plan = PLAN[:2] if smoke else PLAN
    tasks: dict[str, EvaluationTask] = {}
    preds: dict[tuple[str, str], Predictive] = {}
    results = []
    t0 = time.time()
    for task_name, kind, meas0 in plan:
        task, pred = pool_for(task_name, kind, tasks, preds)
        meas = meas0.bind(pred)
        y = task.y_pool
        f = pred.point_prediction()
        w = meas.weight(f, y)
        truth = float(w @ meas.loss(f, y) / w.sum())
        m = pred.n
        q_pass = passive_distribution(m)
        q_snis = optimal_distribution(pred, meas)
        q_assist = assisted_distribution(pred, meas)
        q_var = assisted_distribution(pred, meas, floor=0.0, mix=VARIANCE_MIX)
        a_true = w**2 * (meas.loss(f, y) - truth) ** 2
        q_oracle = np.sqrt(a_true) / np.sqrt(a_true).sum()
        x = task.X_pool
        # name: (q, model-assisted, finite-population rows, pool features)
        methods: dict[str, tuple[NDArray[np.float64], bool, bool, Any]] = {
            "passive": (q_pass, False, False, None),
            "active (thesis SNIS)": (q_snis, False, False, None),
            "assisted, uniform q": (q_pass, True, True, None),
            DEFAULT: (q_snis, True, True, None),
            WITH_REPLACEMENT: (q_snis, True, False, None),
            "assisted, own q": (q_assist, True, True, None),
            VARIANCE_Q: (q_var, True, True, None),
            FEATURES: (q_snis, True, True, x),
            # The limit: the default's design and estimator with q from the true labels,
            # which needs no control variate (λ = 0).
            ORACLE: (q_oracle, False, True, None),
        }
        row: dict[str, Any] = {
            "task": task_name,
            "model": kind,
            "measure": meas.name,
            "truth": truth,
            "budgets": list(b),
            "methods": {},
        }
        drawn_by: dict[str, Any] = {}
        for name, (q, assisted, finite, feats) in methods.items():
            est, se, lam, n_eff, drawn_by[name] = _runs(
                q, pred, meas, y, b, reps, seed=0, assisted=assisted, finite=finite, features=feats
            )
            if assisted and meas.binary_loss:  # evaluate's interval for these estimators
                lo, hi = logit_interval(est, se, 0.95, n_eff, unit_weights=meas.unit_weights)
            else:
                z = 1.959963984540054
                lo, hi = est - z * se, est + z * se
            cover = _covered(lo, hi, truth)
            row["methods"][name] = _curve(est, truth, reps, cover)
            if assisted:
                row["methods"][name]["power"] = list(np.nanmean(lam, axis=0))
        for label, kw in (
            ("peer PPI++ (uniform)", {}),
            # Active inference (Zrnic & Candès, 2024): q ∝ sqrt(model's conditional variance),
            # mixed with uniform — the draws of "assisted, own q".
            (
                "peer PPI++ (active inference q)",
                {"draws": drawn_by["assisted, own q"], "q": q_assist},
            ),
            # The estimator alone: PPI++ on exactly the default's draws from q*.
            (SAME_DRAWS, {"draws": drawn_by["active (thesis SNIS)"], "q": q_snis}),
        ):
            ppi = (
                _ppi(meas.loss(f, y), meas.conditional_expectations(pred, f)[0], b, reps, 0, **kw)
                if meas.regular
                else None
            )
            if ppi is not None:
                row["methods"][label] = _curve(ppi, truth, reps, None)
        limit, on_labels = model_limit(pred, meas, b, y)
        row["methods"][LIMIT] = {
            # The MAE normal errors would have at the limit's MSE (the oasis peers record MAE
            # only).
            "mae": list(np.sqrt(2.0 / np.pi) * np.asarray(limit)),
            "mae_se": None,
            "rmse": limit,
            "rmse_labels": on_labels,
            "labels_scatter": limit_scatter(pred, meas, b),  # 10%, 90% of √(V_y/V)
            "coverage": None,
            "power": None,
        }
        results.append(row)
        print(f"{task_name:20s} {kind:14s} {meas.name:10s} ({time.time() - t0:.0f}s)", flush=True)
    pairs = run_pairs(reps, budgets, smoke)
    out.mkdir(parents=True, exist_ok=True)
    (out / "model_assisted.json").write_text(json.dumps(results, indent=1))
    (out / "model_assisted_pairs.json").write_text(json.dumps(pairs, indent=1))
    _report(results, pairs, out, reps)
    return {"settings": results, "pairs": pairs}


PAIR_PLAN: list[tuple[str, tuple[str, str], Measure]] = [
    ("email_shift", ("logistic", "gradient_boosting"), ErrorRate()),
    ("email_shift", ("logistic", "gradient_boosting"), FMeasure(1.0, pos_label=1)),
    ("default_skew", ("logistic", "gradient_boosting"), ErrorRate()),
    ("diamonds_regression", ("gp_linear", "gp_matern"), SquaredError()),
]


def _pair_terms(
    preds: list[Predictive], meas0: Measure, y: NDArray[Any]
) -> tuple[Predictive, Measure, NDArray[np.bool_] | None, dict[str, Any]]:
    """As :func:`~activeeval.assisted_paired_test` sets up a pair under uniform p: the
    mixture, the bound measure, the domain and both models' terms on the whole pool under
    each control-variate source, for both choices of sources: each model's own predictive
    distribution (``"models"``) or the mixture alone (``"mixture"``); the predictions,
    which decide between them per sample; the models and the test distribution on the
    domain, for the smoother of pool features."""
    mix = Mixture(preds)
    meas = meas0.bind(mix)
    p = np.full(mix.n, 1.0 / mix.n)
    fs = [pr.point_prediction() for pr in preds]
    dom, p_dom = _domain(meas, preds, p)
    whole = np.arange(mix.n)
    terms = {
        name: [_model_terms(meas, preds, src, whole, y, p_dom) for src in sources]
        for name, sources in (("models", preds), ("mixture", [mix]))
    }
    return mix, meas, dom, {**terms, "predictions": fs, "preds": preds, "p_dom": p_dom}


def _pair_runs(
    q: NDArray[np.float64],
    full: dict[str, Any],
    dom: NDArray[np.bool_] | None,
    meas: Measure,
    budgets: NDArray[np.float64],
    reps: int,
    seed: int,
    assisted: bool,
    finite: bool = True,
    mixture_only: bool = False,
    features: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], Any]:
    """Δ̂ = Ĝ_A − Ĝ_B and its standard error per (rep, budget) for a model pair, by the
    campaign's stopping rule, and the draws. ``full`` are :func:`_pair_terms`' terms on the
    whole pool (sliced per sample); the estimator is :func:`assisted_paired_test`'s, which
    takes each model's own distribution as a control variate once the sample has
    :data:`~activeeval.estimators.assisted.MIN_DISAGREEMENTS` (``mixture_only``: never). λ = 0 with
    every draw a row and the linearized standard error is the thesis's paired test; both
    tested equal to :func:`activeeval.compare`. With the pool's ``features`` the smoothed
    residuals under the mixture are one more source (what ``compare(..., features=)``
    does; tested equal)."""
    draws, kept, samples = _samples(q, budgets, reps, seed, dom, finite)
    diff = np.full(kept.shape, np.nan)
    se = np.full(kept.shape, np.nan)
    z = None if features is None else _standardized(features, q.shape[0])
    groups = _prediction_groups(full["preds"], full["predictions"])
    p_dom = full["p_dom"]

    def at(src: Sequence[Any], ir: NDArray[np.intp]) -> list[Any]:
        return [(wl[ir], w[ir], mn[ir], md[ir], pool) for wl, w, mn, md, pool in src]

    for r, j, idx, ir, v, fpc in samples:
        per_model = (
            assisted
            and not mixture_only
            and _disagreements(full["predictions"], ir) >= MIN_DISAGREEMENTS
        )
        models = [at(src, ir) for src in full["models" if per_model else "mixture"]]
        ref = at(full["mixture"][0], ir)
        by_source, dropped = _with_smoother(
            z, models, ref, ir, p_dom, DEFAULT_BANDWIDTH, v, groups, fpc
        )
        c = _paired_from_terms(
            v, by_source, None if assisted else 0.0, idx, 0.95, meas, fpc,
            jackknife=assisted or finite, dropped=dropped,
        )  # fmt: skip
        diff[r, j], se[r, j] = c.difference, c.stderr
    return diff, se, (draws, kept)


def _difference_variance(
    meas: Measure, mix: Predictive, fa: NDArray[Any], fb: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[d | x] and Var[d | x] of the loss difference d = ℓ(f_A, y) − ℓ(f_B, y) under the
    common predictive distribution ``mix`` (by summation over its support)."""

    def d(y: NDArray[Any]) -> NDArray[np.float64]:
        return np.asarray(meas.loss(fa[:, None], y) - meas.loss(fb[:, None], y), dtype=float)

    mean = mix.expect(d)
    return mean, np.maximum(mix.expect(lambda y: d(y) ** 2) - mean**2, 0.0)


def run_pairs(reps: int, budgets: tuple[int, ...], smoke: bool = False) -> list[dict[str, Any]]:
    """The model pairs of the comparison issue: MAE of Δ̂ against the pool's Δ and coverage
    of the 95% interval :func:`activeeval.compare` reports, for passive and the thesis's
    paired test (SNIS), the default (model-assisted with each model's own predictive
    distribution as a control variate, comparison q of Thm 5.1), the same with the mixture
    of the two models as the one control variate, the model-assisted estimator under uniform
    q and under the active-inference q, the oracle q, and — for differences of mean losses —
    PPI++ on d = ℓ_A − ℓ_B with E[d | x] under the mixture, under model A and under model B
    as the prediction (uniform labels; importance weights under the active-inference
    q ∝ sqrt(Var[d | x]) of the mixture, mixed with uniform; on the default's draws)."""
    b = np.asarray(budgets, dtype=float)
    plan = PAIR_PLAN[:1] if smoke else PAIR_PLAN
    tasks: dict[str, EvaluationTask] = {}
    fitted: dict[tuple[str, str], Predictive] = {}
    results = []
    t0 = time.time()
    for task_name, kinds, meas0 in plan:
        if task_name not in tasks:
            size = {"pool_size": 5000} if task_name == "diamonds_regression" else {}
            tasks[task_name] = load_task(task_name, **size)  # the comparison issue's pools
        task = tasks[task_name]
        for kind in kinds:
            if (task_name, kind) not in fitted:
                fitted[(task_name, kind)] = _fit_models(task, [kind])[0]
        preds = [fitted[(task_name, kind)] for kind in kinds]
        mix, meas, dom, full = _pair_terms(preds, meas0, task.y_pool)
        m = mix.n
        p = np.full(m, 1.0 / m)
        fs = full["predictions"]
        wl = np.stack([t[0] for t in full["mixture"][0]])
        w = np.stack([t[1] for t in full["mixture"][0]])
        values = wl.sum(axis=1) / w.sum(axis=1)
        truth = float(values[0] - values[1])
        # The oracle: q ∝ p·|influence of Δ̂| from the true labels (no control variate).
        u = (wl[0] - values[0] * w[0]) / w[0].mean() - (wl[1] - values[1] * w[1]) / w[1].mean()
        q_oracle = np.abs(u) / np.abs(u).sum()
        q_cmp = comparison_distribution(preds, meas, method="active")
        # name: (q, model-assisted, finite-population rows, the mixture as the only source,
        # pool features)
        methods: dict[str, tuple[NDArray[np.float64], bool, bool, bool, Any]] = {
            "passive": (p, False, False, False, None),
            "active (thesis SNIS)": (q_cmp, False, False, False, None),
            "assisted, uniform q": (p, True, True, False, None),
            DEFAULT: (q_cmp, True, True, False, None),
            MIXTURE_CV: (q_cmp, True, True, True, None),
            PAIR_FEATURES: (q_cmp, True, True, False, task.X_pool),
            ORACLE: (q_oracle, False, True, False, None),
        }
        if meas.regular:  # a difference of mean losses: the peers' active-inference q
            d_pred, d_var = _difference_variance(meas, mix, fs[0], fs[1])
            s = np.sqrt(d_var)
            q_ai = (1 - DEFAULT_MIX) * s / s.sum() + DEFAULT_MIX * p if s.sum() > 0 else p
            methods["assisted, active-inference q"] = (q_ai, True, True, False, None)
        row: dict[str, Any] = {
            "task": task_name,
            "model": " vs ".join(kinds),
            "measure": meas.name,
            "truth": truth,
            "values": list(values),
            "budgets": list(b),
            "methods": {},
        }
        drawn_by: dict[str, Any] = {}
        for name, (q, assisted, finite, mixture_only, feats) in methods.items():
            est, se, drawn_by[name] = _pair_runs(
                q, full, dom, meas, b, reps, 0, assisted, finite, mixture_only, feats
            )
            half = 1.959963984540054 * se
            cover = _covered(est - half, est + half, truth)
            row["methods"][name] = _curve(est, truth, reps, cover, np.sign(truth))
        if meas.regular:
            d_true = wl[0] - wl[1]  # w ≡ 1
            preds_d = {
                "mixture": d_pred,
                kinds[0]: _difference_variance(meas, preds[0], fs[0], fs[1])[0],
                kinds[1]: _difference_variance(meas, preds[1], fs[0], fs[1])[0],
            }
            peer_runs: list[tuple[str, dict[str, Any]]] = [
                ("peer PPI++ (uniform", {}),
                (
                    "peer PPI++ (active inference q",
                    {"draws": drawn_by["assisted, active-inference q"], "q": q_ai},
                ),
                (SAME_DRAWS.removesuffix(")"), {"draws": drawn_by[DEFAULT], "q": q_cmp}),
            ]
            for label, kw in peer_runs:
                for source, yhat in preds_d.items():
                    ppi = _ppi(d_true, yhat, b, reps, 0, **kw)
                    if ppi is not None:
                        row["methods"][f"{label}; Ŷ under {source})"] = _curve(
                            ppi, truth, reps, None, np.sign(truth)
                        )
        results.append(row)
        print(
            f"pair {task_name:20s} {row['model']:30s} {meas.name:10s} ({time.time() - t0:.0f}s)",
            flush=True,
        )
    return results


def _covered(lo: NDArray[np.float64], hi: NDArray[np.float64], truth: float) -> NDArray[np.float64]:
    """Share of intervals (per budget) that contain the pool value. An interval of zero width
    at an exact estimate (every instance that matters labeled) covers: the tolerance is
    rounding, 1e-12 of the value's scale."""
    tol = 1e-12 * max(1.0, abs(truth))
    return np.asarray(np.nanmean((lo - tol <= truth) & (truth <= hi + tol), axis=0))


def _curve(
    est: NDArray[np.float64],
    truth: float,
    reps: int,
    cover: NDArray[np.float64] | None,
    sign: float | None = None,
) -> dict[str, Any]:
    """MAE (± its MC standard error), RMSE, coverage and — for a difference — the share of
    estimates whose sign differs from the pool's Δ (the wrong model preferred)."""
    err = np.abs(est - truth)
    out: dict[str, Any] = {
        "mae": list(np.nanmean(err, axis=0)),
        "mae_se": list(np.nanstd(err, axis=0) / np.sqrt(reps)),
        "rmse": list(np.sqrt(np.nanmean(err**2, axis=0))),
        "coverage": None if cover is None else list(cover),
        "power": None,
    }
    if sign is not None:
        out["wrong_sign"] = list(np.mean(np.sign(est) != sign, axis=0))
    return out


def _peer_f1(out: Path) -> dict[tuple[str, str], dict[str, list[float]]]:
    path = out / "active_estimation.json"
    if not path.exists():
        return {}
    peers: dict[tuple[str, str], dict[str, list[float]]] = {}
    for s in json.loads(path.read_text()):
        if s["measure"] != "f1" or s["cost_budget"]:
            continue
        for c in s["curves"]:
            if c["method"].startswith("peer_"):
                peers.setdefault((s["task"], s["model"]), {})[c["method"]] = c["mae"]
    return peers


def _peer_reps(out: Path) -> str:
    """The oasis peers' repetition count(s) in ``active_estimation.json``, as text."""
    path = out / "active_estimation.json"
    found: set[int] = set()
    if path.exists():
        for s in json.loads(path.read_text()):
            found.update(c["reps"] for c in s["curves"] if c["method"].startswith("peer_"))
    return "/".join(str(r) for r in sorted(found)) or "no"


def _report(
    results: list[dict[str, Any]], pairs: list[dict[str, Any]], out: Path, reps: int
) -> None:
    peer_f1 = _peer_f1(out)
    lines = [
        "# Model-assisted estimation vs the thesis's estimator and the peers",
        "",
        f"Generated by `make reproduce` ({reps} repetitions per budget; the oasis columns "
        f"come from its active-estimation run, same pools and budgets, {_peer_reps(out)} "
        "repetitions). MAE of "
        "the estimate against the whole-pool value; `cover@n` = coverage of the 95% "
        "interval `evaluate` reports for that estimator (model-assisted rows: Wald on the "
        "logit scale for measures in [0, 1], Clopper–Pearson on Kish's effective n where the "
        "estimate is 0 or 1; thesis, passive and oracle rows: Wald; the "
        "model-assisted and oracle rows with the jackknife standard error for ratio "
        "measures, the thesis and passive rows with the linearized one). "
        "Model-assisted rows use each distinct labeled instance once (the finite-population "
        "form, `evaluate`'s default) unless marked 'with-replacement form'. An interval of "
        "zero width at an exact estimate (every instance that matters labeled) counts as "
        "covering.",
        "",
    ]
    for row in results:
        meths = _with_peers(row, peer_f1)
        title = f"{row['task']} / {row['model']} / {row['measure']}"
        lines += _table(f"{title} (pool value {row['truth']:.4f})", row["budgets"], meths)
    lines += [
        "## Model pairs: the difference Δ = G_A − G_B",
        "",
        "The comparison issue's pairs, same protocol: MAE of Δ̂ against the pool's Δ and "
        "coverage of the 95% Wald interval `compare` reports. The default is "
        '`compare(method="active")`: the comparison q of Thm 5.1 and each model\'s own '
        "predictive distribution as a control variate (once 30 labeled instances have "
        "differing predictions; the mixture before); 'the mixture as one control variate' "
        "is the same draws with the thesis's mixture (eq. 5.11) as the only source. PPI++ "
        "estimates the mean of d = ℓ_A − ℓ_B with E[d | x] under the mixture, under model A "
        "or under model B as its prediction; its active-inference q ∝ sqrt(Var[d | x]) "
        "under the mixture, mixed with uniform. No peer compares F-measures.",
        "",
    ]
    for row in pairs:
        title = f"{row['task']} / {row['model']} / {row['measure']}"
        values = ", ".join(f"{x:.4f}" for x in row["values"])
        lines += _table(f"{title} (pool Δ {row['truth']:+.4f}; values {values})",
                        row["budgets"], row["methods"])  # fmt: skip
    lines += _summary(results, peer_f1, pairs)
    (out / "model_assisted.md").write_text("\n".join(lines) + "\n")


def _table(title: str, b: list[float], meths: dict[str, Any]) -> list[str]:
    lines = [
        f"## {title}",
        "",
        "| method | "
        + " | ".join(f"MAE@{int(x)}" for x in b)
        + " | "
        + " | ".join(f"cover@{int(x)}" for x in b)
        + " | mean λ |",
        "|" + "---|" * (2 + 2 * len(b)),
    ]
    for name, r in meths.items():
        cov = r.get("coverage")
        pw = r.get("power")
        lines.append(
            f"| {name} | "
            + " | ".join(f"{v:.4f}" for v in r["mae"])
            + " | "
            + " | ".join("" if cov is None else f"{v:.3f}" for v in (cov or b))
            + " | "
            + ("" if pw is None else f"{np.nanmean(pw):.2f}")
            + " |"
        )
    return [*lines, ""]


DEFAULT = "assisted, q* (default)"  # evaluate(method="active") with its default estimator
WITH_REPLACEMENT = "assisted, q*, every draw a row (with-replacement form)"
ORACLE = "oracle q (true labels)"
SAME_DRAWS = "PPI++ on the default's draws (importance weights, q*)"
MIXTURE_CV = "assisted, q*, the mixture as one control variate"
FEATURES = "assisted, q*, + pool features"  # evaluate(method="active", features=X)
PAIR_FEATURES = "assisted, comparison q, + pool features"  # compare(..., features=X)
#: The model-assisted estimator's variance q (module assisted, eq. next to Thm 4.1) without
#: the floor, mixed with this share of p.
VARIANCE_MIX = 0.05
VARIANCE_Q = f"assisted, variance q (floor 0, mix {VARIANCE_MIX})"
#: model_limit, as the MAE of normal errors at the least anticipated MSE.
LIMIT = "limit if the model's probabilities are right (Godambe–Joshi, normal errors)"


def _summary(
    results: list[dict[str, Any]],
    peer_f1: dict[tuple[str, str], dict[str, list[float]]],
    pairs: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> list[str]:
    """The issue's figures per setting: MAE of the default ÷ the best peer (each peer with its
    own sampling), ÷ PPI++ on the default's own draws (the estimators alone) and ÷ the thesis's
    estimator, labels passive needs for the default's error, share of the oracle-q limit
    reached (MAE_oracle ÷ MAE_default), and the default's interval coverage; model pairs
    (the difference Δ) after the single models; then the single models' Godambe–Joshi
    limit (:func:`_limit_table`)."""
    lines = [
        "## Summary: the default (q*, model-assisted) against the peers",
        "",
        "Per setting and budget n: `÷peer` = MAE of the default ÷ the lowest MAE of any peer "
        "method, each with its own sampling (PPI++ with uniform labels, PPI++ with importance "
        "weights under the active-inference q ∝ sqrt(Var[ℓ|x]), oasis OASIS, oasis Sawade "
        "IS; for a pair, PPI++ with the best of its three predictions at that n); "
        "`÷PPI++ same draws` = ÷ PPI++ with importance weights on exactly the default's "
        "draws (the two estimators alone; means of losses only); `÷thesis` = ÷ the thesis's "
        "estimator on the same q*; `÷passive` = ÷ passive's MAE at the same n; "
        "`×passive` = labels passive needs for the default's MAE ÷ n (log-log interpolation "
        "on the passive curve; '> x' when passive does not get there within the largest "
        "budget); `oracle` = MAE with the true-label q ÷ MAE of the default ('–' where the "
        "default is exact); `cover` = coverage of the default's 95% interval (`evaluate`'s "
        "`ci`: Wald on the logit scale for measures in [0, 1] with its Clopper–Pearson "
        "fallback, Wald for MSE and for differences); `features: ÷peer`, `cover` = the same "
        "for the default given the pool's features (`evaluate(..., features=X)`, "
        "`compare(..., features=X)` for a pair: the smoothed residuals as one more control "
        "variate).",
        "",
        "| setting | n | ÷peer | best peer | ÷PPI++ same draws | ÷thesis | ÷passive | ×passive "
        "| oracle | cover | features: ÷peer | features: cover |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in [*results, *pairs]:
        meths = _with_peers(row, peer_f1)
        b = np.asarray(row["budgets"])
        d = meths[DEFAULT]
        peers = {k: v["mae"] for k, v in meths.items() if k.startswith(PEER)}
        same = [v["mae"] for k, v in meths.items() if k.startswith(SAME_DRAWS.removesuffix(")"))]
        label = f"{row['task']} / {row['model']} / {row['measure']}"
        feats = meths.get(FEATURES, meths.get(PAIR_FEATURES))
        for j, n in enumerate(b):
            if n < SUMMARY_FROM:
                continue
            best = min(peers, key=lambda k: peers[k][j]) if peers else None
            need = labels_to_match(b, np.asarray(meths["passive"]["mae"]), d["mae"][j])
            lines.append(
                f"| {label}{' Δ' if row in pairs else ''} | {int(n)} | "
                + (_ratio(d["mae"][j], peers[best][j]) if best else "–")
                + f" | {(best or '–').removeprefix(PEER).strip(' _')} | "
                + (_ratio(d["mae"][j], min(x[j] for x in same)) if same else "–")
                + f" | {_ratio(d['mae'][j], meths['active (thesis SNIS)']['mae'][j])} | "
                f"{_ratio(d['mae'][j], meths['passive']['mae'][j])} | "
                + (f"{need / n:.2f}" if need <= b[-1] else f"> {b[-1] / n:.1f}")
                + f" | {_ratio(meths[ORACLE]['mae'][j], d['mae'][j])} "
                f"| {d['coverage'][j]:.3f} | "
                + (
                    f"{_ratio(feats['mae'][j], peers[best][j]) if best else '–'} | "
                    f"{feats['coverage'][j]:.3f} |"
                    if feats is not None
                    else "– | – |"
                )
            )
    return [*lines, "", *_limit_table(results, peer_f1)]


#: Beyond this factor between the labels' RMSE and the model's (√(V_y/V), model_limit), the
#: model's probabilities are contradicted by the pool: its limit is not set against anything.
LIMIT_TRUST = 2.0
#: Peer methods' names start with this (PPI++ here, oasis from the active-estimation run).
PEER = "peer"
#: The summaries start at this budget.
SUMMARY_FROM = 100


def _with_peers(
    row: dict[str, Any], peer_f1: dict[tuple[str, str], dict[str, list[float]]]
) -> dict[str, Any]:
    """A setting's methods with the oasis peers' F1 curves (MAE only) added."""
    meths = dict(row["methods"])
    if row["measure"] == "f1":
        for name, mae in peer_f1.get((row["task"], row["model"]), {}).items():
            meths[name] = {"mae": mae, "coverage": None, "power": None}
    return meths


def _limit_table(
    results: list[dict[str, Any]], peer_f1: dict[tuple[str, str], dict[str, list[float]]]
) -> list[str]:
    """The Godambe–Joshi limit (:func:`model_limit`) beside the default and the best peer."""
    lines = [
        "## How far the model's probabilities can take any estimator",
        "",
        "`limit` = the least RMSE a design-unbiased estimator (to first order for ratio "
        "measures) can be expected to reach with n distinct labels if the model's "
        "probabilities are right (Godambe & Joshi, 1965: Σ(1/π − 1)·Var[u | x], minimized "
        "over the inclusion probabilities π; `experiments.assisted.model_limit`), computed "
        "from the model, not measured, and averaged over label vectors the model could "
        "produce; `labels ÷ model` = the RMSE the limit's design and estimator have on this "
        "pool's labels ÷ the limit, and `if right` its 10–90% range over "
        f"{SCATTER_REPS} label vectors drawn from the model itself (`limit_scatter`). Where "
        "`labels ÷ model` lies outside that range (marked *), the probabilities are off and "
        "the limit is indicative only; beyond "
        f"×{LIMIT_TRUST:g} either way they are contradicted and the limit means nothing "
        "('–'). `÷limit` = the default's measured RMSE ÷ the limit: it can fall below 1 "
        "where this pool's labels are easier than the model's average, or through the "
        "default's small bias. `limit ÷peer` = the limit ÷ the best peer's RMSE (the "
        "summary's best peer by MAE) for the PPI++ peers; the oasis peers record MAE only, "
        "so for them the MAE normal errors would have at the limit ÷ the peer's MAE.",
        "",
        "| setting | n | limit | ÷limit | labels ÷ model | if right | limit ÷peer |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results:
        meths = _with_peers(row, peer_f1)
        lim = meths.get(LIMIT)
        if lim is None:
            continue
        peers = {k: v for k, v in meths.items() if k.startswith(PEER)}
        d = meths[DEFAULT]
        label = f"{row['task']} / {row['model']} / {row['measure']}"
        for j, n in enumerate(row["budgets"]):
            if n < SUMMARY_FROM:
                continue
            rmse = lim["rmse"][j]
            on = lim["rmse_labels"][j] / rmse if rmse > 0 else math.nan
            lo, hi = lim["labels_scatter"][0][j], lim["labels_scatter"][1][j]
            trusted = 1.0 / LIMIT_TRUST <= on <= LIMIT_TRUST
            mark = "" if not trusted or lo <= on <= hi else "*"
            vs = "–"
            if peers and trusted:
                best = peers[min(peers, key=lambda k: peers[k]["mae"][j])]
                vs = (
                    _ratio(rmse, best["rmse"][j])
                    if "rmse" in best
                    else _ratio(lim["mae"][j], best["mae"][j])
                )
            lines.append(
                f"| {label} | {int(n)} | {rmse:.4f} | "
                + (_ratio(d["rmse"][j], rmse) if trusted else "–")
                + " | "
                + (f"{on:.2f}{mark}" if math.isfinite(on) else "–" if math.isnan(on) else "∞")
                + " | "
                + (f"{lo:.2f}–{hi:.2f}" if math.isfinite(lo) and math.isfinite(hi) else "–")
                + f" | {vs} |"
            )
    return [*lines, ""]


def _ratio(a: float, b: float) -> str:
    """a ÷ b to two places; '–' when b is 0 up to rounding (an exact estimate), '> 100' for
    a nearly exact one."""
    if not b > 1e-12:
        return "–"
    return f"{a / b:.2f}" if a / b < 100 else "> 100"


BATCH_PLAN = [
    ("email_shift", "logistic", ErrorRate()),
    ("email_shift", "logistic", FMeasure(1.0, pos_label=1)),
    ("email_shift", "naive_bayes", ErrorRate()),
    ("default_skew", "naive_bayes", FMeasure(1.0, pos_label=1)),
    ("caravan_skew", "logistic", FMeasure(1.0, pos_label=1)),
    ("diamonds_regression", "bayesian_ridge", SquaredError()),
]


def run_batch_adaptive(
    out: Path, reps: int, budgets: tuple[int, ...] = (200, 400, 800), batch: int = 50
) -> list[dict[str, Any]]:
    """Static q* vs batch-adaptive q* (recalibrated every ``batch`` labels), both with the
    default model-assisted estimator, same seeds: does recalibration help?"""
    from activeeval.campaign import evaluate
    from activeeval.campaign.batches import RECALIBRATION_PRIOR

    rows = []
    for task_name, kind, meas0 in BATCH_PLAN:
        kw = {"pool_size": 5000} if task_name == "diamonds_regression" else {}
        task = load_task(task_name, **kw)
        model = fit_regressor(task) if kind == "bayesian_ridge" else fit_classifier(task, kind)
        pred = pool_predictive(model, task.X_pool)
        meas = meas0.bind(pred)
        y = task.y_pool
        f = pred.point_prediction()
        w = meas.weight(f, y)
        truth = float(w @ meas.loss(f, y) / w.sum())
        oracle = task.oracle()
        row: dict[str, Any] = {
            "task": task_name,
            "model": kind,
            "measure": meas.name,
            "budgets": list(budgets),
        }
        for name, bs in (("static", None), ("batch-adaptive", batch)):
            err = np.full((reps, len(budgets)), np.nan)
            err_wr = np.full((reps, len(budgets)), np.nan)
            for j, b in enumerate(budgets):
                for r in range(reps):
                    res = evaluate(
                        pred, oracle, meas, budget=b, batch_size=bs, random_state=r, progress=False
                    )
                    err[r, j] = abs(res.estimate - truth)
                    # The same draws, every draw a row weighted by its own q (the form a
                    # batch-adaptive campaign uses): the like-for-like static comparator.
                    # Both without the ratio-bias correction, which assumes one q.
                    wr = assisted_estimate(
                        meas, pred, res.indices, res.labels, res.q, bias_correction=False
                    )
                    err_wr[r, j] = abs(wr.estimate - truth)
            for label, e in ((name, err), (f"{name}, with-replacement form", err_wr)):
                if label == "batch-adaptive, with-replacement form":
                    continue  # identical to "batch-adaptive"
                row[label] = {
                    "mae": list(np.nanmean(e, axis=0)),
                    "mae_se": list(np.nanstd(e, axis=0) / np.sqrt(reps)),
                }
        rows.append(row)
        print(f"batch-adaptive {task_name} {kind} {meas.name}", flush=True)
    lines = [
        "# Batch-adaptive sampling: does recalibrating q help?",
        "",
        f"{reps} campaigns per budget, labels bought {batch} at a time; after each batch "
        "the predictive distribution is recalibrated (isotonic / variance scaling, "
        "weighted by p/q, shrunk toward the model's own as if it counted for "
        f"{RECALIBRATION_PRIOR:g} labels) and q* recomputed with the model's predictions; "
        "the draw that ends a batch is bought in the next. Same seeds, default model-assisted "
        "estimator. A batch-adaptive campaign weights every draw by the q it was drawn "
        "from (the with-replacement form); a static campaign uses the finite-population "
        "form, and its with-replacement form on the same draws is the like-for-like "
        "comparator of recalibration alone (both without the ratio-bias correction, which "
        "assumes draws from one q and made batch-adaptive F1 worse). MAE ± its Monte-Carlo "
        "standard error.",
        "",
        "| task | model | measure | method | " + " | ".join(f"MAE@{b}" for b in budgets) + " |",
        "|" + "---|" * (4 + len(budgets)),
    ]
    for row in rows:
        for name in ("static", "static, with-replacement form", "batch-adaptive"):
            r = row[name]
            lines.append(
                f"| {row['task']} | {row['model']} | {row['measure']} | {name} | "
                + " | ".join(
                    f"{m:.4f} ± {e:.4f}" for m, e in zip(r["mae"], r["mae_se"], strict=True)
                )
                + " |"
            )
    out.mkdir(parents=True, exist_ok=True)
    (out / "batch_adaptive.md").write_text("\n".join(lines) + "\n")
    (out / "batch_adaptive.json").write_text(json.dumps(rows, indent=1))
    return rows
