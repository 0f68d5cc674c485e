"""Reproduction of the thesis's active-comparison protocol (Ch. 5.4) on real bundled data.

(a) model-selection error (fraction of runs whose estimate prefers the model with the worse
whole-pool value) vs budget, for passive, active, active_0, active_inf, active_neq and
active_risk; (b) mean p-value and power at α = 0.05 vs budget; (c) Type I error under the
label-swap null of Sec. 5.4.2 as a function of α and n; (d) five models compared with the
k-model mixture (eq. 5.16); (e) the sequential protocol of Table 5.1.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from activeeval.campaign import compare
from activeeval.datasets import EvaluationTask, load_task
from activeeval.demo import pool_predictive
from activeeval.measures import ErrorRate, FMeasure, Measure, SquaredError
from activeeval.predictive import Predictive
from activeeval.sampling import comparison_distribution

from .models import fit_classifier
from .simulate import simulate_comparison

METHODS = ("passive", "active", "active_0", "active_inf", "active_neq", "active_risk")
ALPHAS = (0.01, 0.05, 0.1)


@dataclass
class PairSetting:
    task: str
    models: list[str]
    measure: str
    values: list[float]
    budgets: list[float]
    rows: dict[str, dict[str, list[float]]] = field(default_factory=dict)


def _fit_models(task: EvaluationTask, kinds: list[str]) -> list[Predictive]:
    preds = []
    for kind in kinds:
        if kind.startswith("gp_"):
            preds.append(_fit_gp(task, kind))
        else:
            preds.append(pool_predictive(fit_classifier(task, kind), task.X_pool))
    return preds


def _fit_gp(task: EvaluationTask, kind: str) -> Predictive:
    """Gaussian processes with a linear or a Matérn kernel (thesis Sec. 5.4)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import (
        ConstantKernel,
        DotProduct,
        Matern,
        WhiteKernel,
    )
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    base = DotProduct(sigma_0=1.0) if kind == "gp_linear" else ConstantKernel() * Matern(nu=1.5)
    gp = GaussianProcessRegressor(base + WhiteKernel(), normalize_y=True, random_state=0)
    model = make_pipeline(StandardScaler(), gp).fit(task.X_train, task.y_train)
    return pool_predictive(model, task.X_pool)


def _losses(meas: Measure, preds: list[Predictive], y: NDArray[Any]) -> tuple[Any, Any, Any]:
    fs = [p.point_prediction() for p in preds]
    w = np.stack([meas.weight(f, y) for f in fs])
    wl = np.stack([meas.weight(f, y) * meas.loss(f, y) for f in fs])
    values = wl.sum(axis=1) / w.sum(axis=1)
    return wl, w, values


def run_pair(
    task: EvaluationTask,
    kinds: list[str],
    preds: list[Predictive],
    meas: Measure,
    budgets: NDArray[np.float64],
    reps: int,
    seed: int = 0,
) -> PairSetting:
    bound = meas.bind(preds[0])
    y = task.y_pool
    wl, w, values = _losses(bound, preds, y)
    delta = values[0] - values[1]
    # Index of the truly better model, and the sign a correct Δ̂ must have.
    better_sign = np.sign(delta) if bound.greater_is_better else -np.sign(delta)
    st = PairSetting(task.name, kinds, bound.name, list(values), list(budgets))
    for method in METHODS:
        if method == "active_neq" and not bound.regular:
            continue
        q = comparison_distribution(preds, bound, method=method)
        mass = float(np.mean(q > 0)) if method == "active_neq" else 1.0
        runs = simulate_comparison(q, wl, w, budgets, reps, support_mass=mass, random_state=seed)
        picked = np.sign(runs.difference) * (1 if bound.greater_is_better else -1)
        sel_err = np.mean(picked != better_sign, axis=0)
        pv = runs.p_value
        row = {
            "selection_error": list(sel_err),
            "selection_error_se": list(np.sqrt(sel_err * (1 - sel_err) / reps)),
            "mean_p": list(np.nanmean(pv, axis=0)),
            "power_0.05": list(np.nanmean(pv < 0.05, axis=0)),
        }
        if method in ("passive", "active"):
            null = simulate_comparison(
                q, wl, w, budgets, reps, swap=True, support_mass=mass, random_state=seed + 1
            )
            for a in ALPHAS:
                row[f"type1_{a}"] = list(np.nanmean(null.p_value < a, axis=0))
        st.rows[method] = row
    return st


def run_k_models(
    task: EvaluationTask,
    kinds: list[str],
    preds: list[Predictive],
    meas: Measure,
    budgets: NDArray[np.float64],
    reps: int,
    seed: int = 0,
) -> PairSetting:
    """Five models: how often the model with the best estimate is not the truly best one."""
    bound = meas.bind(preds[0])
    wl, w, values = _losses(bound, preds, task.y_pool)
    best = int(np.argmax(values) if bound.greater_is_better else np.argmin(values))
    st = PairSetting(task.name, kinds, bound.name, list(values), list(budgets))
    for method in ("passive", "active", "active_risk"):
        q = comparison_distribution(preds, bound, method=method)
        runs = simulate_comparison(q, wl, w, budgets, reps, random_state=seed)
        est = runs.estimates
        picked = np.argmax(est, axis=-1) if bound.greater_is_better else np.argmin(est, axis=-1)
        err = np.mean(picked != best, axis=0)
        st.rows[method] = {
            "selection_error": list(err),
            "selection_error_se": list(np.sqrt(err * (1 - err) / reps)),
        }
    return st


def run_sequential(
    task: EvaluationTask,
    preds: list[Predictive],
    meas: Measure,
    budget: int,
    reps: int,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Table 5.1: label until p < 0.05 or the budget is spent."""
    bound = meas.bind(preds[0])
    _, _, values = _losses(bound, preds, task.y_pool)
    delta = values[0] - values[1]
    out = {}
    oracle = task.oracle()
    for method in ("passive", "active", "active_risk"):
        labels, sig, wrong = [], [], []
        for r in range(reps):
            res = compare(
                preds,
                oracle,
                bound,
                budget=budget,
                method=method,
                sequential=True,
                alpha=0.05,
                random_state=seed + r,
                progress=False,
            )
            labels.append(res.n_labels)
            s = res.p_value < 0.05
            sig.append(s)
            wrong.append(s and np.sign(res.difference) != np.sign(delta))
        out[method] = {
            "mean_labels": float(np.mean(labels)),
            "significance_rate": float(np.mean(sig)),
            "false_decision_rate": float(np.mean(wrong)),
        }
    return out


def saved_labels(budgets: list[float], ref: list[float], other: list[float]) -> float:
    """1 − n_other / n_ref, where n_other is the budget at which ``other``'s curve first
    reaches the error ``ref`` has at its largest budget (linear interpolation in log budget)."""
    target = ref[-1]
    lb = np.log(np.asarray(budgets))
    o = np.asarray(other)
    if o[0] <= target:
        return float(1 - budgets[0] / budgets[-1])  # at least this much (grid floor)
    for i in range(1, len(o)):
        if o[i] <= target:
            t = (o[i - 1] - target) / (o[i - 1] - o[i])
            n = float(np.exp(lb[i - 1] + t * (lb[i] - lb[i - 1])))
            return 1 - n / budgets[-1]
    return float("nan")


def run(out: Path, reps: int, budgets: tuple[int, ...], smoke: bool = False) -> dict[str, Any]:
    b = np.asarray(budgets, dtype=float)
    results: dict[str, Any] = {"pairs": [], "k_models": [], "sequential": {}}
    email = load_task("email_shift")
    t0 = time.time()
    pair_plan: list[tuple[EvaluationTask, list[str], Measure]] = [
        (email, ["logistic", "gradient_boosting"], ErrorRate()),
        (email, ["logistic", "gradient_boosting"], FMeasure(1.0, pos_label=1)),
    ]
    if not smoke:
        default = load_task("default_skew")
        pair_plan.append((default, ["logistic", "gradient_boosting"], ErrorRate()))
        diamonds = load_task("diamonds_regression", pool_size=5000)
        pair_plan.append((diamonds, ["gp_linear", "gp_matern"], SquaredError()))
    cache: dict[tuple[str, str], Predictive] = {}
    for task, kinds, meas in pair_plan:
        preds = []
        for kind in kinds:
            key = (task.name, kind)
            if key not in cache:
                cache[key] = _fit_models(task, [kind])[0]
            preds.append(cache[key])
        st = run_pair(task, kinds, preds, meas, b, reps)
        results["pairs"].append(st.__dict__)
        print(
            f"{task.name:20s} {' vs '.join(kinds):32s} {st.measure:10s} values "
            f"{np.round(st.values, 4)} ({time.time() - t0:.0f}s)",
            flush=True,
        )
    five = ["logistic", "gradient_boosting", "naive_bayes", "random_forest", "knn"]
    if smoke:
        five = ["logistic", "gradient_boosting", "naive_bayes"]
    preds5 = []
    for kind in five:
        key = (email.name, kind)
        if key not in cache:
            cache[key] = _fit_models(email, [kind])[0]
        preds5.append(cache[key])
    k_st = run_k_models(email, five, preds5, ErrorRate(), b, reps)
    results["k_models"].append(k_st.__dict__)
    print(
        f"k models on email: values {np.round(k_st.values, 4)} ({time.time() - t0:.0f}s)",
        flush=True,
    )
    seq_reps = 40 if smoke else 300
    results["sequential"] = run_sequential(
        email,
        [cache[(email.name, "logistic")], cache[(email.name, "gradient_boosting")]],
        ErrorRate(),
        int(b.max()),
        seq_reps,
    )
    results["sequential_reps"] = seq_reps
    print(f"sequential protocol done ({time.time() - t0:.0f}s)", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "active_comparison.json").write_text(json.dumps(results, indent=1))
    _report(results, out, reps)
    return results


def _report(results: dict[str, Any], out: Path, reps: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {
        "passive": "tab:gray",
        "active": "tab:blue",
        "active_0": "tab:green",
        "active_inf": "tab:red",
        "active_neq": "tab:pink",
        "active_risk": "tab:brown",
    }
    pairs = results["pairs"]
    panels = [*pairs, *results["k_models"]]
    fig, axes = plt.subplots(2, len(panels), figsize=(4.2 * len(panels), 6.6), squeeze=False)
    for col, st in enumerate(panels):
        ax, ax2 = axes[0, col], axes[1, col]
        for method, row in st["rows"].items():
            style = {"label": method, "marker": "o", "ms": 3, "color": colors.get(method)}
            ax.errorbar(
                st["budgets"],
                row["selection_error"],
                yerr=row["selection_error_se"],
                capsize=2,
                **style,
            )
            if "mean_p" in row:
                ax2.plot(st["budgets"], row["mean_p"], **style)
        extra = f" +{len(st['models']) - 2}" if len(st["models"]) > 2 else ""
        ax.set_title(
            f"{st['task']}: {' vs '.join(st['models'][:2])}{extra}\n{st['measure']}", fontsize=8
        )
        ax.set_ylabel("model-selection error")
        ax2.set_ylabel("mean p-value")
        for a in (ax, ax2):
            a.set_xscale("log")
            a.set_xticks(st["budgets"])
            a.set_xticklabels([f"{int(b)}" for b in st["budgets"]])
            a.minorticks_off()
            a.set_xlabel("labels")
            a.grid(alpha=0.3)
        if not any("mean_p" in r for r in st["rows"].values()):
            ax2.axis("off")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "active_comparison.png", dpi=90)
    plt.close(fig)

    lines = [
        "# Active comparison on real data (thesis Ch. 5.4 protocol)",
        "",
        f"Generated by `make reproduce` ({reps} repetitions per budget and method). "
        "Model-selection error = fraction of runs whose estimates prefer the model with "
        "the worse whole-pool value. *Labels saved* = 1 − (labels the method needs to "
        "reach passive's model-selection error at the largest budget) ÷ that budget "
        "(a value at the grid floor means the method is already there at the smallest "
        "budget). Type I error: label-swap null of Sec. 5.4.2.",
        "",
        "![model selection](active_comparison.png)",
        "",
    ]
    for st in pairs:
        b = st["budgets"]
        lines += [
            f"## {st['task']}: {' vs '.join(st['models'])}, {st['measure']}",
            "",
            f"Whole-pool values: {', '.join(f'{v:.4f}' for v in st['values'])}.",
            "",
            "| method | "
            + " | ".join(f"sel.err@{int(x)}" for x in b)
            + " | labels saved | "
            + " | ".join(f"mean p@{int(x)}" for x in b)
            + f" | power@{int(b[-1])} |",
            "|" + "---|" * (3 + 2 * len(b)),
        ]
        ref = st["rows"]["passive"]["selection_error"]
        for method, row in st["rows"].items():
            saved = saved_labels(b, ref, row["selection_error"])
            lines.append(
                f"| {method} | "
                + " | ".join(f"{v:.3f}" for v in row["selection_error"])
                + f" | {saved:.0%} | "
                + " | ".join(f"{v:.3f}" for v in row["mean_p"])
                + f" | {row['power_0.05'][-1]:.3f} |"
            )
        lines += [
            "",
            "Type I error under the label-swap null (MC standard error ≈ "
            f"{np.sqrt(0.05 * 0.95 / reps):.4f} at α = 0.05):",
            "",
            "| method | α | " + " | ".join(f"n={int(x)}" for x in b) + " |",
            "|" + "---|" * (2 + len(b)),
        ]
        for method in ("passive", "active"):
            for a in ALPHAS:
                vals = st["rows"][method][f"type1_{a}"]
                lines.append(f"| {method} | {a} | " + " | ".join(f"{v:.3f}" for v in vals) + " |")
        lines.append("")
    for st in results["k_models"]:
        b = st["budgets"]
        lines += [
            f"## {len(st['models'])} models on {st['task']} ({', '.join(st['models'])}), "
            f"{st['measure']}",
            "",
            f"Whole-pool values: {', '.join(f'{v:.4f}' for v in st['values'])}.",
            "",
            "| method | " + " | ".join(f"sel.err@{int(x)}" for x in b) + " | labels saved |",
            "|" + "---|" * (2 + len(b)),
        ]
        ref = st["rows"]["passive"]["selection_error"]
        for method, row in st["rows"].items():
            lines.append(
                f"| {method} | "
                + " | ".join(f"{v:.3f}" for v in row["selection_error"])
                + f" | {saved_labels(b, ref, row['selection_error']):.0%} |"
            )
        lines.append("")
    seq = results["sequential"]
    lines += [
        "## Sequential protocol (Table 5.1)",
        "",
        f"Label until p < 0.05 or {int(pairs[0]['budgets'][-1])} labels "
        f"({results['sequential_reps']} runs, email, logistic vs gradient boosting, error "
        "rate). Repeated testing makes the nominal level invalid; the false-decision rate "
        "(significant, but the wrong model) is what it costs.",
        "",
        "| method | mean labels | significance rate | false decisions |",
        "|---|---|---|---|",
    ]
    for method, row in seq.items():
        lines.append(
            f"| {method} | {row['mean_labels']:.1f} | {row['significance_rate']:.3f} | "
            f"{row['false_decision_rate']:.3f} |"
        )
    (out / "active_comparison.md").write_text("\n".join(lines) + "\n")
