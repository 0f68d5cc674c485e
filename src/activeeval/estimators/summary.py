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
from ..predictive import Categorical, Gaussian, Mixture, Predictive, check_labels
from ..sampling import TimeSummary
from .assisted import (
    MIN_DISAGREEMENTS,
    AssistedEstimate,
    _as_assisted_census,
    _Decisions,
    _design_influence,
    _disagreements,
    _Expected,
    _fit_sources,
    _model_terms,
    _on_rows,
    _paired_from_terms,
    _Pool,
    _pool_means,
    _rows_at_time,
    _warn_missing,
    add_means,
)
from .inference import _multiple_from_influence
from .tempered import Rows, curve, subsample

__all__ = [
    "AtRows",
    "PairSummary",
    "PoolSummary",
    "SummaryScores",
    "summarize",
    "summarize_pair",
    "summary_estimate",
    "summary_model_scores",
    "summary_multiple_comparison",
    "summary_paired_test",
]


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
    #: (μ_N, μ_D) under ``pool_weights`` as given, over the whole pool: the pool means of the
    #: anytime sequences' per-draw terms (:meth:`~.report.Pool.draw_terms`), which take the
    #: test distribution unnormalized and undivided by the domain; None in summaries stored
    #: before it was kept (their sequences read the pool).
    terms_mu: tuple[float, float] | None = None
    #: σ₀ per tempered member for the estimator ``sigma0_estimator``
    #: (``report.summary_sigma0``), stored at ``init`` so that a look does not recompute it;
    #: None: computed when needed.
    sigma0: NDArray[np.float64] | None = None
    #: The estimator whose σ₀ ``sigma0`` is: the session plan's (the model-assisted one in
    #: summaries stored before the thesis's was served), a Dask campaign's while it looks.
    sigma0_estimator: str = "assisted"


class AtRows:
    """A model known at some pool rows (``units``, sorted; a store's copies of the labeled
    rows, or the rows a cluster sent back): ``take`` of pool rows among them, as the whole
    pool's model would give them."""

    def __init__(self, pred: Any, units: NDArray[np.intp], m: int) -> None:
        self.pred, self.units, self.n = pred, units, m

    def take(self, rows: Any) -> Any:
        return self.pred.take(np.searchsorted(self.units, np.asarray(rows, dtype=np.intp)))


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
    family = True
    for rows in row_chunks(m):
        part = pred._chunk(rows)
        family = family and _family(part)
        d = meas.weight_can_be_positive(part.point_prediction())
        dom.append(d)
        missing += int(np.count_nonzero(d & (p[rows] > 0) & (q[rows] <= 0)))
    domain_all = all(bool(d.all()) for d in dom)
    mass = 1.0
    p_dom: Any = p
    if not domain_all:  # as _domain: P(D), and p renormalized on D where P(D) > 0
        parts: list[Any] = dom  # boolean chunks, summed as _domain sums them
        mass = sum(weighted_sum(p[rows], d) for rows, d in zip(row_chunks(m), parts, strict=True))
        if mass > 0:
            p_dom = _OnDomain(p, dom, mass)
    (mu_num, mu_den), terms_mu = _pool_means(meas, pred, pred, [p_dom, pool_weights])
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
        mu_num=mu_num,
        mu_den=mu_den,
        n_needed=n_needed,
        n_domain=n_domain,
        missing=missing,
        curve_family=family,
        keep=keep,
        sample=pred.take(keep),
        sample_q=np.asarray(q[keep], dtype=np.float64),
        sample_p=np.asarray(pool_weights[keep], dtype=np.float64),
        terms_mu=terms_mu,
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


# ------------------------------------------------------------------------------ pairs
@dataclass(frozen=True, eq=False)
class PairSummary:
    """What the model-assisted paired test of two models (:func:`~.assisted.assisted_paired_test`
    with ``pool_q``, no features, tuned coefficients) — or the multiple comparison of k > 2 —
    and each model's tempered interval read from a pool of ``size`` instances drawn from q:
    q's :class:`~activeeval.sampling.TimeSummary`; the domain D where some model's weight can
    be positive (whether it is the whole pool, its test mass, how many instances with test
    mass it holds, how many of them q cannot draw); the control variates' pool means
    ``moments[s][k]`` = (μ_N, μ_D) of each source s (each model's own p(y | x) in order, then
    their mixture, eq. 5.11) with model k's decisions; and the tempered curves' fixed subsample
    (``keep``): each model there (``samples``), q and the test distribution there, and
    whether each model's tempered family is defined (``families``)."""

    size: int
    time: TimeSummary
    domain_all: bool
    mass: float
    n_domain: int
    missing: int
    moments: tuple[tuple[tuple[float, float], ...], ...]
    keep: NDArray[np.intp]
    samples: tuple[Predictive, ...]
    sample_q: NDArray[np.float64]
    sample_p: NDArray[np.float64]
    families: tuple[bool, ...]
    #: Each model's (μ_N, μ_D) under its own p(y | x) and decisions and ``pool_weights`` as
    #: given, over the whole pool: the pool means of the comparison's anytime sequences'
    #: per-draw terms (:meth:`~.report.Pool.draw_terms`, as :attr:`PoolSummary.terms_mu`);
    #: None in summaries stored before it was kept (their sequences read the pool).
    terms_mu: tuple[tuple[float, float], ...] | None = None
    #: σ₀ per tempered member and model, shape (len(GRID), k), for the estimator
    #: ``sigma0_estimator`` (``report.summary_sigma0``), stored at ``init``; None: computed
    #: when needed.
    sigma0: NDArray[np.float64] | None = None
    #: The estimator whose σ₀ ``sigma0`` is (as :attr:`PoolSummary.sigma0_estimator`).
    sigma0_estimator: str = "assisted"
    #: Of two models, the units with test mass on which their decisions differ: once all are
    #: labeled, their difference of a mean of per-instance losses is exact
    #: (:func:`~.report.exact_difference`); None for more models and in summaries stored
    #: before it was kept.
    n_differ: int | None = None


def summarize_pair(
    meas: Measure, preds: list[Any], pool_weights: NDArray[np.float64], q: NDArray[np.float64]
) -> PairSummary:
    """The :class:`PairSummary` of k ≥ 2 models over the pool (each a Categorical or Gaussian,
    or anything giving its chunks, ``_chunk(rows)``, and rows, ``take(rows)``) for the bound
    ``meas``, the test distribution ``pool_weights`` and q, with the arithmetic of the
    whole-pool functions (:func:`~.assisted._domain`, :func:`~.assisted._pool_moments`), a
    chunk at a time."""
    m = int(preds[0].n)
    p = pool_distribution(m, pool_weights)
    dom: list[NDArray[np.bool_]] = []
    missing = 0
    n_domain = 0
    n_differ = 0
    families = [True] * len(preds)
    for rows in row_chunks(m):
        d = np.zeros(rows.stop - rows.start, dtype=bool)
        fs = []
        for k, pr in enumerate(preds):
            part = pr._chunk(rows)
            fs.append(part.point_prediction())
            d |= meas.weight_can_be_positive(fs[-1])
            families[k] = families[k] and _family(part)
        if len(preds) == 2:  # as report.count_differing counts them
            n_differ += int(np.count_nonzero((pool_weights[rows] > 0) & (fs[0] != fs[1])))
        dom.append(d)
        missing += int(np.count_nonzero(d & (p[rows] > 0) & (q[rows] <= 0)))
        n_domain += int(np.count_nonzero(d & (pool_weights[rows] > 0)))
    domain_all = all(bool(d.all()) for d in dom)
    mass = 1.0
    p_dom: Any = p
    if not domain_all:
        parts: list[Any] = dom
        mass = sum(weighted_sum(p[rows], d) for rows, d in zip(row_chunks(m), parts, strict=True))
        if mass > 0:
            p_dom = _OnDomain(p, dom, mass)
    moments, terms_mu = _source_means(meas, preds, p_dom, pool_weights)
    keep = subsample(m)
    return PairSummary(
        m, TimeSummary.of(q), domain_all, float(mass), n_domain, missing, moments, keep,
        tuple(pr.take(keep) for pr in preds), np.asarray(q[keep], dtype=np.float64),
        np.asarray(pool_weights[keep], dtype=np.float64), tuple(families), terms_mu,
        n_differ=n_differ if len(preds) == 2 else None,
    )  # fmt: skip


def _source_means(
    meas: Measure, preds: list[Any], p_dom: Any, pool_weights: NDArray[np.float64]
) -> tuple[tuple[tuple[tuple[float, float], ...], ...], tuple[tuple[float, float], ...]]:
    """The control variates' pool means: (μ_N, μ_D) of every source — each model's own
    p(y | x), then their mixture (eq. 5.11) — with every model's decisions under ``p_dom``;
    and each model's own under the test distribution as given (the anytime terms' pool
    means). :func:`~.assisted._pool_means` of each source and model, bit for bit (the same
    sums, :func:`~.assisted.add_means`), in one pass that reads each model's chunk once."""
    k = len(preds)
    # per source j and model i: [N, D] under p_dom, and for a model's own source under
    # the test distribution as given too
    ps = [[[p_dom, pool_weights] if j == i else [p_dom] for i in range(k)] for j in range(k + 1)]
    sums = [[[[0.0, 0.0] for _ in pji] for pji in pj] for pj in ps]
    for rows in row_chunks(int(preds[0].n)):
        parts = [pr._chunk(rows) for pr in preds]
        fs = [part.point_prediction() for part in parts]
        for j, src in enumerate([*parts, Mixture(parts)]):
            for i, f in enumerate(fs):
                m_num, m_den = meas.conditional_expectations(src, f)
                add_means(sums[j][i], ps[j][i], rows, m_num, m_den)
    moments = tuple(tuple((sj[i][0][0], sj[i][0][1]) for i in range(k)) for sj in sums)
    return moments, tuple((sums[i][i][1][0], sums[i][i][1][1]) for i in range(k))


def _family(part: Predictive) -> bool:
    """Whether the tempered family is defined on a chunk (:func:`~.tempered.curve_defined`:
    a Categorical, or a Gaussian with every variance positive)."""
    if type(part) not in (Categorical, Gaussian):
        return False
    return not (isinstance(part, Gaussian) and not bool((part.var > 0).all()))


def summary_model_scores(
    meas: Measure, preds: list[Any], s: PairSummary, units: NDArray[np.intp], labels: Any
) -> tuple[Any, ...]:
    """Each model's tempered-model score curve on a comparison's labeled ``units`` (their
    ``labels``), from the pair's summary: :func:`~.tempered.score_curve` bit for bit (the
    comparison's ``_ModelScores``), the models at the units given by ``preds`` (``take``)."""
    n = int(units.shape[0])
    out: list[Any] = []
    for k, pr in enumerate(preds):
        if not (s.families[k] and n >= 1) or s.time.n_support <= n:
            out.append(None)
            continue
        t = s.time.time(n)
        rows = Rows(s.samples[k], None, s.sample_q, s.sample_p, s.size, t)
        out.append(curve(rows, meas, pr.take(units), labels))
    return tuple(out)


def summary_paired_test(
    meas: Measure,
    preds: list[Any],
    s: PairSummary,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    draw_q: NDArray[np.float64],
    level: float,
) -> Any:
    """:func:`~.assisted.assisted_paired_test` (``pool_q``, a uniform test distribution, no
    features, tuned coefficients, the jackknife) from the pair's summary ``s`` and the
    labeled rows: ``preds`` give the two models at the drawn rows (``take``), ``draw_q``
    each draw's q. Equal to it bit for bit (tested)."""
    v, fpc, by_source = _summary_rows(meas, preds, s, draws, labels, draw_q)
    return _paired_from_terms(v, by_source, None, draws, level, meas, fpc, False, True, None)


def summary_multiple_comparison(
    meas: Measure,
    preds: list[Any],
    s: PairSummary,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    draw_q: NDArray[np.float64],
) -> Any:
    """:func:`~.assisted.assisted_multiple_comparison` of k ≥ 2 models (``pool_q``, a uniform
    test distribution, no features, tuned coefficients, the jackknife) from their summary
    ``s`` (:func:`summarize_pair` of the k models) and the labeled rows, as
    :func:`summary_paired_test`. Equal to it bit for bit (tested)."""
    v, fpc, by_source = _summary_rows(meas, preds, s, draws, labels, draw_q)
    pairs = np.triu_indices(len(preds), 1)
    _, g, u = _fit_sources(v, by_source, None, pairs, fpc, meas, False, True, None)
    u = _design_influence(u, fpc)
    return _multiple_from_influence(g, u, int(np.unique(draws).size), meas, n_draws=draws.shape[0])


def _summary_rows(
    meas: Measure,
    preds: list[Any],
    s: PairSummary,
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    draw_q: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[Any]]:
    """:func:`~.assisted._comparison_rows` from the summary: the rows in the domain at t(n),
    their weights v and 1 − π, and every model's terms under each control-variate source —
    the mixture alone (eq. 5.11) below :data:`~.assisted.MIN_DISAGREEMENTS` disagreements,
    else each model's own (:func:`~.assisted._sources`) — with the summary's pool means."""
    mix = Mixture([pr.pred for pr in preds])
    mix_at = AtRows(mix, preds[0].units, preds[0].n)
    y = check_labels(mix.take(np.searchsorted(preds[0].units, draws[:1])), labels)
    m = s.size
    p = pool_distribution(m, uniform(m))
    units, first = np.unique(draws, return_index=True)
    t = s.time.time(int(units.shape[0]))
    pos, v, fpc = _rows_at_time(first, draw_q[first], p[units], t)
    if s.missing:
        _warn_missing(s.missing, stacklevel=4)
    if not s.domain_all:
        at = draws[pos]
        keep = np.zeros(at.shape[0], dtype=bool)
        for pr in preds:
            keep |= meas.weight_can_be_positive(pr.take(at).point_prediction())
        pos, v, fpc = pos[keep], v[keep], fpc[keep]
    rows, yr = draws[pos], y[pos]
    fs = [_Decisions(pr) for pr in preds]
    k = len(preds)
    agree = _disagreements(fs, rows) < MIN_DISAGREEMENTS
    sources = [k] if agree else list(range(k))  # the mixture alone, or each model's own
    at_src = [*preds, mix_at]
    by_source = [
        _model_terms(meas, preds, at_src[j], rows, yr, None, [
            _Pool(_Expected(meas, at_src[j], pr, 0), _Expected(meas, at_src[j], pr, 1),
                  *s.moments[j][i])
            for i, pr in enumerate(preds)
        ])
        for j in sources
    ]  # fmt: skip
    return v, fpc, by_source


@dataclass(eq=False)
class SummaryScores:
    """Each model's tempered-model score curve on a comparison's labeled ``units`` from the
    pair's summary (:func:`summary_model_scores`), computed on the first call and kept: a
    comparison result's ``model_scores`` (a class rather than a closure, so that the result
    pickles)."""

    meas: Measure
    preds: list[Any]
    summary: PairSummary
    units: NDArray[np.intp]
    labels: NDArray[Any]
    done: tuple[Any, ...] | None = None

    def __call__(self) -> tuple[Any, ...]:
        if self.done is None:
            self.done = summary_model_scores(
                self.meas, self.preds, self.summary, self.units, self.labels
            )
        return self.done
