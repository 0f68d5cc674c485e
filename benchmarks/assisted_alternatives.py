"""Alternatives to the model-assisted default, measured and rejected (module docstring of
:mod:`activeeval.estimators.assisted`: "Pool features" and "Optimal sampling").

Each study runs the benchmark's campaigns (``activeeval.demo._runs``, the draws and stopping
rule of ``make reproduce``) on the real tasks and prints the MAE per budget and its ratio to
the first row of the study, and the Wald coverage (from the repository's root):

    python -m benchmarks.assisted_alternatives floor     # q* vs floor-free and scaled floors
    python -m benchmarks.assisted_alternatives power     # tuned λ vs a fixed λ grid
    python -m benchmarks.assisted_alternatives bandwidth # features' kernel bandwidth
    python -m benchmarks.assisted_alternatives prior     # the smoother's pseudo-count κ
    python -m benchmarks.assisted_alternatives logits    # the model's logits as the features
    python -m benchmarks.assisted_alternatives targeted  # draws whose distinct-label π ∝ q*
    python -m benchmarks.assisted_alternatives clusters  # κ where two models disagree on a
                                                         # few tight clusters (the known limit)

Options: ``--reps`` (default 300), ``--tasks`` (indices into ``PLAN``). The docstring's
numbers used ``--reps 400`` for ``floor``, 500 for ``power``, 800 for ``clusters``, 2,000
for ``targeted`` and the default 300 for the rest. Minutes each on 2 cores; not part of the suite.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import activeeval.demo as demo_module
import activeeval.estimators.assisted as assisted_module
import activeeval.estimators.smoother as smoother_module
import reproduce.assisted as harness
from activeeval.estimators.assisted import assisted_distribution
from activeeval.predictive import Categorical
from activeeval.sampling import _from_moment, optimal_distribution
from reproduce.models import pool_for

BUDGETS = np.array([100.0, 200.0, 400.0])
TARGETED_BUDGETS = np.array([100.0, 200.0, 400.0, 800.0])
# A variant: (label, q, fixed power or None, features or None, set-up to run before it).
Variant = tuple[str, Any, float | None, Any, Callable[[], None]]


def _noop() -> None:
    pass


def _setting(i: int) -> tuple[Any, ...]:
    name, kind, meas0 = harness.PLAN[i]
    task, pred = pool_for(name, kind, {}, {})
    meas = meas0.bind(pred)
    f = pred.point_prediction()
    w = meas.weight(f, task.y_pool)
    truth = float(w @ meas.loss(f, task.y_pool) / w.sum())
    return f"{name} / {kind} / {meas.name}", task, pred, meas, truth


def _floor(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    m = pred.n
    p = np.full(m, 1.0 / m)
    f = pred.point_prediction()
    c = meas.intrinsic_value(pred, f, pool_weights=p)
    mask = meas.weight_can_be_positive(f)
    mn, md = meas.conditional_expectations(pred, f)
    var = np.maximum(meas.conditional_second_moment(pred, c, f) - (mn - c * md) ** 2, 0.0)
    yield "q* (default)", optimal_distribution(pred, meas), None, None, _noop
    yield (
        "variance q, floor 0, mix 0.05",
        assisted_distribution(pred, meas, floor=0.0, mix=0.05),
        None,
        None,
        _noop,
    )
    for mix in (0.1, 0.05):
        q = _from_moment(var + (c * md) ** 2, p, mask, None, mix, meas.regular, True)
        yield f"Var + (G m_D)^2, mix {mix}", q, None, None, _noop


def _power(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    q = optimal_distribution(pred, meas)
    yield "tuned λ (default)", q, None, None, _noop
    for lam in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        yield f"λ = {lam}", q, lam, None, _noop


def _setter(name: str, module: Any, value: float) -> Callable[[], None]:
    def set_it() -> None:
        setattr(module, name, value)

    return set_it


def _bandwidth(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    q = optimal_distribution(pred, meas)
    for h in (0.3, 0.15, 0.6, 1.0):
        yield f"h = {h}", q, None, task.X_pool, _setter("DEFAULT_BANDWIDTH", demo_module, h)
    demo_module.DEFAULT_BANDWIDTH = smoother_module.DEFAULT_BANDWIDTH


def _prior(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    q = optimal_distribution(pred, meas)
    default = smoother_module.SMOOTHER_PRIOR
    yield "no features", q, None, None, _noop
    for kappa in (1.0, 2.0, 4.0):
        set_it = _setter("SMOOTHER_PRIOR", smoother_module, kappa)
        yield f"κ = {kappa}", q, None, task.X_pool, set_it
    smoother_module.SMOOTHER_PRIOR = default


def _logits(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    q = optimal_distribution(pred, meas)
    yield "no features", q, None, None, _noop
    if isinstance(pred, Categorical):
        proba = np.clip(pred.proba, 1e-6, 1 - 1e-6)
        yield "the model's logits", q, None, np.log(proba[:, 1:] / proba[:, :1]), _noop
    yield "the pool's features", q, None, task.X_pool, _noop


def targeted(q: Any, n: int, cap: float = 0.999) -> Any:
    """The draw distribution whose distinct-label sample of size n has inclusion
    probabilities π_i = min(1, k·q_i), Σπ = n (capped at ``cap`` so every q stays finite):
    q'_i ∝ −log(1 − π_i), inverting π = 1 − exp(−q't) of the successive sample
    (:func:`activeeval.sampling.inclusion_probabilities`). With π ∝ q* the distinct labels
    follow the without-replacement optimum in q*'s shape (Godambe–Joshi's π ∝ σ), where
    the successive sample's concave π under-weights the instances q* favours most."""
    pi = np.minimum(harness.optimal_inclusion(q, n), cap)
    out = np.where(q > 0, np.maximum(-np.log1p(-pi), np.finfo(float).tiny), 0.0)
    return out / out.sum()


def _targeted(task: Any, pred: Any, meas: Any) -> Iterator[Variant]:
    q = optimal_distribution(pred, meas)
    yield "q* (default)", q, None, None, _noop
    yield "π ∝ q* at 800 labels", targeted(q, 800), None, None, _noop


STUDIES = {
    "floor": (_floor, [0, 1, 2, 3, 4, 5, 6, 7]),
    "power": (_power, [0, 3]),
    "bandwidth": (_bandwidth, [0]),
    "prior": (_prior, [0, 1, 6]),
    "logits": (_logits, [0, 1, 3, 6]),
    "targeted": (_targeted, [0, 1, 3, 4, 5, 6]),
}


def _disagreeing_clusters() -> tuple[list[Any], Any, Any]:
    """Two classifiers that agree except on 6 of 40 tight clusters (1,500 instances, 4
    features): the pool of the known limit in :mod:`activeeval.estimators.assisted`
    ("Comparisons")."""
    rng = np.random.default_rng(7)
    m, clusters = 1500, 40
    centre = 3.0 * rng.normal(size=(clusters, 4))
    c = rng.integers(clusters, size=m)
    x = centre[c] + 0.05 * rng.normal(size=(m, 4))
    true = rng.integers(2, size=clusters)
    purity = rng.uniform(0.7, 1.0, size=clusters)
    y = np.where(rng.random(m) < purity[c], true[c], rng.integers(2, size=m))
    logits = np.zeros((clusters, 2))
    logits[np.arange(clusters), true] = 1.5
    logits += 1.2 * rng.normal(size=(clusters, 2))  # wrong on whole clusters
    lg = logits[c] + 0.1 * rng.normal(size=(m, 2))
    proba = np.exp(lg - lg.max(1, keepdims=True))
    proba /= proba.sum(1, keepdims=True)
    flip = np.isin(c, rng.choice(clusters, 6, replace=False))
    other = proba.copy()
    other[flip] = other[flip][:, ::-1]
    return [Categorical(proba), Categorical(other)], y, x


def _clusters(reps: int) -> None:
    import activeeval as ae

    preds, y, x = _disagreeing_clusters()
    truth = float(np.mean(preds[0].point_prediction() != y))
    truth -= float(np.mean(preds[1].point_prediction() != y))
    q = ae.sampling.comparison_distribution(preds, "error_rate")
    default = smoother_module.SMOOTHER_PRIOR
    for n in (50, 100, 200):
        draws = [
            ae.compare(preds, lambda i: y[i], "error_rate", n, random_state=r).indices
            for r in range(reps)
        ]
        print(f"## pair disagreeing on 6 of 40 clusters, {n} labels, {reps} comparisons")
        for kappa in (None, 1.0, 2.0, 4.0):
            smoother_module.SMOOTHER_PRIOR = default if kappa is None else kappa
            feats = None if kappa is None else x
            out = np.empty((reps, 2))
            for r, idx in enumerate(draws):
                c = assisted_module.assisted_paired_test(
                    "error_rate", preds, idx, y[idx], pool_q=q, features=feats
                )
                out[r] = c.difference, c.stderr
            err = out[:, 0] - truth
            cover = np.mean(np.abs(err) <= 1.959964 * out[:, 1])
            name = "no features" if kappa is None else f"κ = {kappa}"
            print(f"  {name:12s} MAE {np.abs(err).mean():.5f}  cover {cover:.3f}", flush=True)
    smoother_module.SMOOTHER_PRIOR = default


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=sorted([*STUDIES, "clusters"]))
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--tasks", type=str, default=None, help="comma-separated PLAN indices")
    args = ap.parse_args(argv)
    if args.study == "clusters":
        _clusters(args.reps)
        return
    variants, default_tasks = STUDIES[args.study]
    tasks = default_tasks if args.tasks is None else [int(t) for t in args.tasks.split(",")]
    budgets = TARGETED_BUDGETS if args.study == "targeted" else BUDGETS
    for i in tasks:
        label, task, pred, meas, truth = _setting(i)
        print(f"## {label}  (MAE at {budgets.astype(int).tolist()} labels, {args.reps} campaigns)")
        first = None
        for name, q, power, feats, set_up in variants(task, pred, meas):
            set_up()
            est, se, *_ = demo_module._runs(
                q, pred, meas, task.y_pool, budgets, args.reps, 0, True, power, features=feats
            )
            err = np.abs(est - truth)
            mae = np.nanmean(err, axis=0)
            first = mae if first is None else first
            cover = np.nanmean(err <= 1.959964 * se, axis=0)
            print(f"  {name:32s} MAE {np.round(mae, 5)}  ÷first {np.round(mae / first, 3)}  "
                  f"cover {np.round(cover, 3)}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
