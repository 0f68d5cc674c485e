"""The measure × predictions table of the guide ("Which predictions each measure fits"),
cell by cell: every combination it says fits gives an estimate; every other one is refused
with a specific exception before the first label is asked for (the oracle is never called)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import activeeval as ae
from activeeval.errors import LabelSpaceError, ShapeError, UnknownOptionError

M = 300
RNG = np.random.default_rng(0)
P1 = RNG.uniform(0.05, 0.95, M)
P3 = RNG.dirichlet(np.ones(3), M)
MU = RNG.normal(size=M)


def _ranked() -> ae.GradedRelevance:
    offsets = np.arange(0, 3 * 40 + 1, 3)
    return ae.GradedRelevance(RNG.dirichlet(np.ones(3), 120), offsets)


KINDS: dict[str, Any] = {
    "binary": ae.Categorical(np.c_[1 - P1, P1]),
    "multiclass": ae.Categorical(P3),
    "string classes": ae.Categorical(np.c_[1 - P1, P1], labels=np.array(["ham", "spam"])),
    "1-D P(y=1)": P1,
    "gaussian": ae.Gaussian(MU, np.full(M, 0.5)),
    "mixture of categoricals": ae.Mixture(
        [ae.Categorical(np.c_[1 - P1, P1]), ae.Categorical(np.c_[1 - P1**2, P1**2])]
    ),
    "mixture of gaussians": ae.Mixture(
        [ae.Gaussian(MU, np.full(M, 0.5)), ae.Gaussian(MU + 1, np.full(M, 0.5))]
    ),
    "ranked": _ranked(),
}

MEASURES: dict[str, Any] = {
    "error_rate": "error_rate",
    "accuracy": "accuracy",
    "cost matrix": ae.CostMatrixLoss(np.array([[0.0, 1.0], [5.0, 0.0]])),
    "f1": "f1",
    "precision": "precision",
    "recall": "recall",
    "mse": "mse",
    "mae": "mae",
    "mean": "mean",
    "proportion": "proportion",
    "macro_f1": "macro_f1",
    "weighted_f1": "weighted_f1",
    "balanced_accuracy": "balanced_accuracy",
    "per_class_f1": "per_class_f1",
    "brier": "brier",
    "log_loss": "log_loss",
    "ece": "ece",
    "roc_auc": "roc_auc",
    "average_precision": "average_precision",
    "dcg": "dcg",
    "err": "err",
}

CLASSIFY = {"binary", "multiclass", "string classes", "1-D P(y=1)", "mixture of categoricals"}
#: The table: measure -> kinds it fits (every other kind is refused).
FITS: dict[str, set[str]] = {
    "error_rate": CLASSIFY,
    "accuracy": CLASSIFY,
    # C is 2 × 2, rows and columns the classes in order: a 3-class model is refused
    "cost matrix": CLASSIFY - {"multiclass"},
    # one class's measure: with three classes pos_label must name it (refused without)
    "f1": CLASSIFY - {"multiclass"},
    "precision": CLASSIFY - {"multiclass"},
    "recall": CLASSIFY - {"multiclass"},
    "macro_f1": CLASSIFY,
    "weighted_f1": CLASSIFY,
    "balanced_accuracy": CLASSIFY,
    "per_class_f1": CLASSIFY,
    # measures of the probabilities; the ranking ones score one class (pos_label for K > 2)
    "brier": CLASSIFY,
    "log_loss": CLASSIFY,
    "ece": CLASSIFY,
    "roc_auc": CLASSIFY - {"multiclass"},
    "average_precision": CLASSIFY - {"multiclass"},
    "mse": {"gaussian", "mixture of gaussians"},
    "mae": {"gaussian", "mixture of gaussians"},
    "mean": (CLASSIFY - {"string classes"}) | {"gaussian", "mixture of gaussians"},
    "proportion": {"binary", "1-D P(y=1)", "mixture of categoricals"},
    "dcg": {"ranked"},
    "err": {"ranked"},
}


#: The oracle's labels, drawn from the predictions (so losses vary and intervals are proper).
Y01 = (RNG.random(M) < P1).astype(int)
Y3 = np.array([RNG.choice(3, p=row) for row in P3])
YG = MU + RNG.normal(0, 0.7, M)
YR = RNG.integers(0, 3, (40, 3))  # each query's three grades


def _labels(kind: str, idx: np.ndarray) -> Any:
    if kind == "ranked":
        return YR[idx].ravel()
    if kind in ("gaussian", "mixture of gaussians"):
        return YG[idx]
    if kind == "string classes":
        return np.where(Y01[idx] == 1, "spam", "ham")
    return Y3[idx] if kind == "multiclass" else Y01[idx]


CELLS = [(m, k) for m in MEASURES for k in KINDS]


@pytest.mark.parametrize(("measure", "kind"), CELLS, ids=[f"{m}|{k}" for m, k in CELLS])
def test_each_cell_of_the_compatibility_table(measure: str, kind: str) -> None:
    asked: list[int] = []

    def oracle(idx: np.ndarray) -> Any:
        asked.append(len(idx))
        return _labels(kind, np.asarray(idx))

    run = lambda: ae.evaluate(KINDS[kind], oracle, MEASURES[measure], budget=30, random_state=1)  # noqa: E731
    if kind in FITS[measure]:
        res = run()
        value = res.estimates if isinstance(res, ae.PerClassResult) else res.estimate
        assert res.n_labels > 0 and np.all(np.isfinite(value))
    else:
        with pytest.raises((UnknownOptionError, LabelSpaceError, ShapeError)) as refused:
            run()
        assert not asked, "refused only after asking the oracle"
        head = str(refused.value).split(":")[0]
        assert head in ("measure", "predictions", "labels", "cost_matrix", "pos_label"), str(
            refused.value
        )
