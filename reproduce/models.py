"""The scikit-learn models the reproduction protocols evaluate (the demo's logistic regression
and the pool's predictive distribution come from :mod:`activeeval.demo`)."""

from __future__ import annotations

from typing import Any

from sklearn.base import BaseEstimator
from sklearn.linear_model import BayesianRidge
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from activeeval.datasets import EvaluationTask
from activeeval.demo import fit_logistic, pool_predictive
from activeeval.predictive import Predictive

__all__ = ["fit_classifier", "fit_regressor", "pool_for"]


def fit_classifier(task: EvaluationTask, kind: str = "logistic", random_state: int = 0) -> Any:
    """Fit a classifier on the task's training data: ``logistic`` (well calibrated on its own
    distribution), ``naive_bayes`` (notoriously over-confident, Sec. 4.4.2) or
    ``gradient_boosting``."""
    if kind == "logistic":
        return fit_logistic(task)  # the demo's model
    model: BaseEstimator
    if kind == "naive_bayes":
        model = GaussianNB()
    elif kind == "gradient_boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(max_iter=200, random_state=random_state)
    elif kind == "random_forest":
        from sklearn.ensemble import RandomForestClassifier

        model = RandomForestClassifier(
            n_estimators=200, min_samples_leaf=3, random_state=random_state, n_jobs=1
        )
    elif kind == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        model = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=25))
    else:
        raise ValueError(f"kind: unknown classifier {kind!r}")
    return model.fit(task.X_train, task.y_train)


def fit_regressor(task: EvaluationTask) -> Any:
    """Bayesian ridge regression: a Gaussian predictive distribution with variance."""
    return make_pipeline(StandardScaler(), BayesianRidge()).fit(task.X_train, task.y_train)


def pool_for(
    task_name: str,
    kind: str,
    tasks: dict[str, EvaluationTask],
    preds: dict[tuple[str, str], Predictive],
) -> tuple[EvaluationTask, Predictive]:
    """The task (diamonds subsampled to 20,000 pool instances) and the model's predictive
    distribution on its pool, loaded and fitted once per run (``tasks``/``preds`` cache)."""
    from activeeval.datasets import load_task

    if task_name not in tasks:
        kw = {"pool_size": 20000} if task_name == "diamonds_regression" else {}
        tasks[task_name] = load_task(task_name, **kw)
    task = tasks[task_name]
    if (task_name, kind) not in preds:
        model = fit_regressor(task) if kind == "bayesian_ridge" else fit_classifier(task, kind)
        preds[(task_name, kind)] = pool_predictive(model, task.X_pool)
    return task, preds[(task_name, kind)]
