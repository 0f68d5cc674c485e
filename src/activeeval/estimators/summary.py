"""What the default estimate of one model reads from the whole pool, in a few numbers and a
fixed subsample, so that a session reports it without reading the pool
(``docs/design/lean-status.md``).

The model-assisted estimator in its finite-population form (:func:`~.assisted.assisted_estimate`
with ``pool_q``) and its tempered interval (:mod:`~.tempered`) read the pool for: the time t(n)
of q (:class:`~activeeval.sampling.TimeSummary`), the domain D where the weight can be positive
(whether it is the whole pool, its test mass, how many instances with test mass it holds —
the census count — and how many of them q cannot draw), the control variate's pool means μ_N,
μ_D, and the tempered curve's fixed subsample (:func:`~.tempered.subsample`: the model, q and
p there). :func:`summarize` computes them a chunk of the pool at a time with the arithmetic of
the whole-pool path, so that :func:`summary_estimate` on the labeled rows equals
:func:`~.assisted.assisted_estimate` bit for bit (tested), and a session's summary, made once at
``init``, gives what :func:`~activeeval.evaluate` gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import _chunks
from .._chunks import row_chunks, uniform, weighted_sum
from .._validation import pool_distribution
from ..measures import Measure
from ..predictive import Categorical, Gaussian, Predictive, check_labels
from ..sampling import TimeSummary
from .assisted import (
    AssistedEstimate,
    _as_assisted_census,
    _Expected,
    _on_rows,
    _Pool,
    _pool_moments,
    _rows_at_time,
    _warn_missing,
)
from .tempered import subsample

__all__ = ["PoolSummary", "summarize", "summary_estimate"]


@dataclass(frozen=True, eq=False)
class PoolSummary:
    """What one model's default estimate reads from a pool of ``size`` instances with the
    sampling distribution q (module docstring). ``sample`` is the model at the rows ``keep``
    of the tempered curve's subsample, ``sample_q`` and ``sample_p`` q and the (unnormalized)
    test distribution there."""

    size: int
    time: TimeSummary
    domain_all: bool
    #: P(D) under the test distribution (1 when D is the whole pool).
    mass: float
    mu_num: float
    mu_den: float
    #: Instances with test mass in D (``p_dom > 0``): every one labeled is the estimator's
    #: census.
    n_needed: int
    #: Instances of D with test mass as a campaign's census counts them (weight can be
    #: positive and p > 0; differs from ``n_needed`` only where P(D) = 0).
    n_domain: int
    #: Instances with test mass in D that q cannot draw (warned about, as the estimator does).
    missing: int
    #: The tempered family is defined: a Categorical, or a Gaussian with every variance > 0.
    curve_family: bool
    keep: NDArray[np.intp]
    sample: Predictive
    sample_q: NDArray[np.float64]
    sample_p: NDArray[np.float64]


class _OnDomain:
    """The test distribution renormalized on D (:func:`~.assisted._domain`'s ``p_dom``), a
    chunk of rows at a time, with that function's arithmetic (no array the size of the
    pool)."""

    def __init__(self, p: NDArray[np.float64], dom: list[NDArray[np.bool_]], mass: float):
        self.p, self.dom, self.mass = p, dom, mass

    def __getitem__(self, rows: slice) -> NDArray[np.float64]:
        d = self.dom[rows.start // _chunks.ROWS]  # the rows of one of row_chunks(m)
        return np.where(d, self.p[rows], 0.0) / self.mass


def summarize(
    meas: Measure, pred: Any, pool_weights: NDArray[np.float64], q: NDArray[np.float64]
) -> PoolSummary:
    """The summary of ``pred`` (a Categorical or Gaussian over the pool, or anything giving
    its chunks, ``_chunk(rows)``, and rows, ``take(rows)``) for the estimate of the bound
    ``meas`` from draws of ``q``, the test distribution ``pool_weights`` (a session's:
    uniform), each pass a chunk of rows at a time."""
    m = int(pred.n)
    p = pool_distribution(m, pool_weights)  # as assisted_estimate normalizes it
    dom: list[NDArray[np.bool_]] = []
    missing = 0
    positive_var = True
    family = True
    for rows in row_chunks(m):
        part = pred._chunk(rows)
        family = family and type(part) in (Categorical, Gaussian)
        d = meas.weight_can_be_positive(part.point_prediction())
        dom.append(d)
        missing += int(np.count_nonzero(d & (p[rows] > 0) & (q[rows] <= 0)))
        if isinstance(part, Gaussian):
            positive_var = positive_var and bool((part.var > 0).all())
    domain_all = all(bool(d.all()) for d in dom)
    mass = 1.0
    p_dom: Any = p
    if not domain_all:  # as _domain: P(D), and p renormalized on D where P(D) > 0
        parts: list[Any] = dom  # boolean chunks, summed as _domain sums them
        mass = sum(weighted_sum(p[rows], d) for rows, d in zip(row_chunks(m), parts, strict=True))
        if mass > 0:
            p_dom = _OnDomain(p, dom, mass)
    pool = _pool_moments(meas, pred, pred, p_dom)
    n_domain = sum(
        int(np.count_nonzero(d & (pool_weights[rows] > 0)))
        for rows, d in zip(row_chunks(m), dom, strict=True)
    )
    if isinstance(p_dom, _OnDomain):
        n_needed = sum(int(np.count_nonzero(p_dom[rows] > 0)) for rows in row_chunks(m))
    else:
        n_needed = sum(int(np.count_nonzero(p[rows] > 0)) for rows in row_chunks(m))
    keep = subsample(m)
    return PoolSummary(
        size=m,
        time=TimeSummary.of(q),
        domain_all=domain_all,
        mass=float(mass),
        mu_num=pool.mu_num,
        mu_den=pool.mu_den,
        n_needed=n_needed,
        n_domain=n_domain,
        missing=missing,
        curve_family=family and positive_var,
        keep=keep,
        sample=pred.take(keep),
        sample_q=np.asarray(q[keep], dtype=np.float64),
        sample_p=np.asarray(pool_weights[keep], dtype=np.float64),
    )


def summary_estimate(
    meas: Measure,
    pred: Any,
    s: PoolSummary,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    draw_q: NDArray[np.float64],
    level: float,
    t: float,
) -> AssistedEstimate:
    """:func:`~.assisted.assisted_estimate` (``pool_q``, no features, tuned power, the
    jackknife) from the summary ``s`` and the labeled rows: ``pred`` gives the model at the
    drawn rows (``take``), ``draw_q`` each draw's q, ``t`` the time of q at the number of
    distinct labeled instances (``s.time.time(n)``). Equal to it bit for bit."""
    y = check_labels(pred.take(draws[:1]), labels)
    m = s.size
    p = pool_distribution(m, uniform(m))  # a session's test distribution, as the estimator's
    units, first = np.unique(draws, return_index=True)
    pos, v, fpc = _rows_at_time(first, draw_q[first], p[units], t)
    if s.missing:
        _warn_missing(s.missing, stacklevel=3)
    if not s.domain_all:
        keep = meas.weight_can_be_positive(pred.take(draws[pos]).point_prediction())
        pos, v, fpc = pos[keep], v[keep], fpc[keep]
    pool = _Pool(_Expected(meas, pred, pred, 0), _Expected(meas, pred, pred, 1), s.mu_num, s.mu_den)
    a = _on_rows(meas, pred, draws, y, pos, v, fpc, pool, None, level)
    if not np.any(fpc > 0) and int(np.count_nonzero(p[np.unique(draws[pos])] > 0)) == s.n_needed:
        a = _as_assisted_census(a)  # every instance with test mass labeled, as the estimator
    return a
