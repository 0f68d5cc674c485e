"""Batch-adaptive evaluation: q re-planned after every batch from a model recalibrated on
the labels so far (shrunk toward the model's own distribution)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import (
    pool_distribution,
    real_number,
)
from ..errors import (
    BudgetError,
    UndefinedEstimateWarning,
    UnknownOptionError,
)
from ..measures import Measure
from ..predictive import (
    Categorical,
    Gaussian,
    Predictive,
    recalibrate,
)
from ..sampling import (
    sampling_distribution,
)
from .steps import _Acquisition


def _check_batch_size(
    batch_size: Any, costs: NDArray[np.float64] | None, method: str, q: Any
) -> None:
    """Batch-adaptive sampling recomputes q*, so it needs a method that computes q* and no
    given q; a batch is a positive number of labels (whole) or of cost units."""
    if batch_size is None:
        return
    bs = real_number(batch_size)
    if not (math.isfinite(bs) and bs > 0):
        raise BudgetError(
            f"batch_size: must be a positive number of labels (of cost units with costs), got "
            f"{batch_size!r}; or None for a static q."
        )
    if costs is None and bs != math.floor(bs):
        raise BudgetError(
            f"batch_size: counts labels (no costs were given), so it must be a whole number, "
            f"got {batch_size!r}."
        )
    if costs is not None and bs < costs.min() * (1 - 1e-12):
        raise BudgetError(
            f"batch_size: {batch_size!r} cost units buy no label (the cheapest costs "
            f"{costs.min():g}); give at least that."
        )
    if method not in ("active", "active_uniC") or q is not None:
        used = "a given q" if q is not None else f"method={method!r}"
        raise UnknownOptionError(
            f"batch_size: batch-adaptive sampling recomputes q* from the recalibrated model, "
            f"which {used} does not do; use method='active' (or 'active_uniC') without q, or "
            "leave batch_size=None."
        )


@dataclass(frozen=True)
class Replanning:
    """How batch-adaptive sampling recomputes q after a batch: ``method``'s q for the model's
    ``predictive`` distribution recalibrated on the labels so far, for the losses and weights
    of its own predictions under ``measure``, with the campaign's costs, test distribution
    and safeguards (:func:`~activeeval.sampling.sampling_distribution`)."""

    predictive: Predictive
    measure: Measure
    method: str
    costs: NDArray[np.float64] | None
    pool_weights: ArrayLike | None
    floor: float
    mix: float


def _run_in_batches(
    acq: _Acquisition,
    batch: float,
    budget: float,
    replan: Replanning,
    stop: Callable[[NDArray[np.intp]], str | None] | None = None,
) -> str | None:
    """Batch-adaptive Algorithm 2: recalibrate on the labels so far, recompute q, go on. The
    recalibrated distribution stands in for p(y | x) only: the losses and weights stay those
    of the evaluated model's predictions f (precision's q lives on f's predicted positives;
    the recalibrated model's would leave some of them at q = 0, a bias). With a stopping
    rule, each batch is a look: ``stop(draws)`` says why to stop (returned), or None."""
    r = replan
    predictive = r.predictive
    pw = pool_distribution(predictive.n, r.pool_weights)
    f = predictive.point_prediction()
    target = 0.0
    while True:
        target = min(budget, target + batch)
        acq.run(target)
        if target >= budget or acq.exhausted or acq.n_kept >= acq.max_draws:
            return None
        draws = acq.draws
        if draws.size == 0:
            continue
        why = None if stop is None else stop(draws)
        if why is not None:
            return why
        v = pw[draws] / acq.draw_q
        current = _shrunk(
            recalibrate(predictive, draws, acq.book.lookup(draws), v),
            predictive,
            int(acq.book.known.sum()),
        )
        with warnings.catch_warnings():  # undefined under the recalibrated model: q falls back
            warnings.simplefilter("ignore", UndefinedEstimateWarning)  # (the estimate warns)
            q = sampling_distribution(
                r.method, current, r.measure, costs=r.costs, pool_weights=r.pool_weights,
                floor=r.floor, mix=r.mix, prediction=f,
            )  # fmt: skip
        acq.switch(q)


#: Pseudo-labels at the model's own probabilities in a batch's recalibration (:func:`_shrunk`).
RECALIBRATION_PRIOR = 50.0


def _shrunk(current: Predictive, model: Predictive, n: int) -> Predictive:
    """The recalibrated distribution shrunk toward the model's, as if the model's own
    probabilities counted for :data:`RECALIBRATION_PRIOR` labels beside the ``n`` labels
    the recalibration saw: (n·recalibrated + κ·model)/(n + κ) (class probabilities; the
    variances for a Gaussian). An isotonic fit on a first batch with few positives sets
    p(pos) = 0 on much of the pool, and q would keep only the defensive mix there."""
    a = n / (n + RECALIBRATION_PRIOR)
    if isinstance(current, Categorical) and isinstance(model, Categorical):
        return Categorical(a * current.proba + (1.0 - a) * model.proba, model.labels)
    if isinstance(current, Gaussian) and isinstance(model, Gaussian):
        return Gaussian(model.mean, a * current.var + (1.0 - a) * model.var)
    return current
