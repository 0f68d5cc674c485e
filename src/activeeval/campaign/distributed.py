"""``evaluate`` and ``compare`` on Dask pools: a ``dask.array.Array`` of class probabilities,
or a ``dask.dataframe.DataFrame`` of a pool file's columns, computed partition by partition.

The pool is cut into blocks of :data:`activeeval._chunks.ROWS` rows — the chunks of the NumPy
path's passes — and every pass over it is a map over the blocks on the cluster's workers,
whose small results (sums, counts) the client adds up in row order, as the NumPy path adds up
its chunks. The arithmetic of each block is the NumPy path's own (the same functions on the
same rows), so that for the same pool in NumPy and in Dask the q, the draws, the labels asked
for and the estimate (or the comparison) are the same bit for bit (tested on a
``distributed.LocalCluster``). Only sums, the sampling distribution's chunk ends (one number
per :data:`~activeeval.sampling.DRAW_ROWS` rows), the tempered curve's fixed subsample and the
drawn rows travel to the client; q itself is recomputed on the workers where a pass needs it.

What runs where (``docs/guide/dask.md``):

1. the first pass validates every block and sums the models' expected loss and weight (q*'s
   centers: one model's intrinsic value, eq. 4.21; k ≥ 2 models' under their mixture, eq. 5.12),
   the test mass of the domain, the control variates' pool means;
2. the second sums q*'s unnormalized score (eq. 4.6; each pair's, eq. 5.16) and the defensive
   mixture's mass;
3. a chain of tasks, block after block: the running sums of q at every chunk's end (each
   block continues the previous block's sum, as one cumulative sum does), with the counts
   and largest q of :class:`~activeeval.sampling.TimeSummary` carried along;
4. its power sums, and (one model) q and the model at the tempered curve's subsample;
   with labeling costs (a last column of every block, checked in pass 1, where its cheapest
   and sum are taken too), Σ q·λ and the cheapest cost where q > 0 (the horizon of a
   stopping rule's sequence, the looks' least step);
5. the campaign: uniforms drawn on the client from the seed find their chunk among the ends
   there; each block with draws finds their rows on its worker and sends back the rows, q
   and the models there (and the costs: each draw is priced on the client); the walk of
   Algorithm 2 and the oracle run on the client;
6. the estimate from the pool summary and the labeled rows
   (:func:`~activeeval.estimators.report.summary_static_estimate`,
   :func:`~activeeval.estimators.report.summary_outcome`: the paired test of two models,
   the multiple comparison of more; by the thesis's estimator from the drawn rows alone);
   a stopping rule's looks and
   the anytime-valid interval from the same summary and the drawn rows
   (:class:`~activeeval.estimators.report.SummaryPool`: the first pass's control-variate
   means under the pool's test distribution are the sequences' ``terms_mu``).

Decisions apart from the beliefs (``prediction=``) are one more column of their model's
blocks (:class:`_Decided`). Dask is imported only here, only when a Dask pool is passed
(the ``dask`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from .. import _chunks
from .._chunks import dot, draw_chunks, grouped, span_ends, uniform, weighted_sum, within_chunk
from .._validation import (
    budget_number,
    check_cost_values,
    check_finite_array,
    check_level,
    check_option,
    check_random_state,
    check_rows,
    check_safeguards,
    check_same_ids,
    dask_values,
    pool_distribution,
)
from ..acquisition import _label_check, _LabelBook
from ..errors import ShapeError, UnknownOptionError
from ..estimators.report import (
    LazyTerms,
    SummaryPool,
    _exact_value,
    _fields,
    _samples,
    exact_difference,
    exact_outcome,
    summary_outcome,
    summary_static_estimate,
    undefined_error,
    with_exact_difference,
    with_sigma0,
)
from ..estimators.summary import (
    AtRows,
    PairSummary,
    PoolSummary,
    SummaryScores,
    _family,
)
from ..estimators.tempered import subsample
from ..measures import (
    ClasswiseMeasure,
    Measure,
    check_fits,
    get_measure,
    refuse_decision,
    warn_undefined_intrinsic,
)
from ..predictive import (
    Categorical,
    FrameLayout,
    Mixture,
    Predictive,
    check_decision_shape,
    check_spread,
    decision_numbers,
    frame_layout,
    restored_decision,
)
from ..probability_measures import ProbabilityMeasure
from ..results import ComparisonResult, EvaluationResult
from ..sampling import (
    DRAW_ROWS,
    TOP_Q,
    TimeSummary,
    model_pairs,
    newton_time,
    pairs_averaged,
    warn_zero_q,
)
from ..stopping import (
    StoppingRule,
    comparison_rule,
    horizon_of,
    reported,
    rule_met,
    stopping_rule,
    window_draws,
)
from .steps import (
    Oracle,
    _Acquisition,
    _bar,
    _check_oracle,
    _check_step,
    _comparison_result,
    _fixed_setup,
    _run_looks,
    _stop_step,
)

__all__ = ["DaskPool", "compare_dask", "evaluate_dask"]

#: The methods a Dask pool samples with.
DASK_METHODS = ("active", "active_uniC", "passive")


# ----------------------------------------------------------------------------- the pool
@dataclass(frozen=True)
class _ArrayLayout:
    """An (m, K) array's columns: class probabilities of the classes 0 … K − 1."""

    width: int

    def build(self, values: NDArray[np.float64], name: str) -> Predictive:
        return Categorical(values, name=name)


@dataclass(frozen=True)
class _Decided:
    """A layout whose last column is the model's decision f(x) (``prediction=``) beside
    ``inner``'s beliefs: a classifier's as its class's position, a regressor's as itself."""

    inner: Any

    @property
    def width(self) -> int:
        return _width(self.inner) + 1

    def build(self, values: NDArray[np.float64], name: str) -> Predictive:
        return restored_decision(self.inner.build(values[:, :-1], name), values[:, -1])


def _width(layout: Any) -> int:
    """The columns of a layout's blocks."""
    return layout.width if isinstance(layout, _ArrayLayout | _Decided) else len(layout.columns)


@dataclass(frozen=True)
class DaskPool:
    """One or more models' Dask pools cut into blocks of :data:`~activeeval._chunks.ROWS`
    rows: ``blocks[j]`` holds every model's block j (Dask ``Delayed`` numpy arrays), in row
    order; ``layouts`` say how each model's columns hold it."""

    blocks: tuple[tuple[Any, ...], ...]
    m: int
    layouts: tuple[Any, ...]
    names: tuple[str, ...]
    #: Whether each block ends with the labeling costs, one column after the models'.
    costed: bool = False

    @classmethod
    def of(
        cls,
        objs: list[Any],
        names: list[str],
        decisions: list[tuple[Any, str]] | None = None,
        costs: Any = None,
    ) -> DaskPool:
        """The pool of Dask collections, one per model (module docstring), read by name;
        ``decisions``: per model, its decisions (None: the mode or mean) and their name;
        ``costs``: each instance's labeling cost (a NumPy array, a Dask array or Series),
        carried as a last column (:func:`block_costs`)."""
        arrays, layouts = [], []
        for obj, name in zip(objs, names, strict=True):
            arr, layout = _as_array(obj, name)
            arrays.append(arr)
            layouts.append(layout)
        check_same_ids(objs, names)
        m = int(arrays[0].shape[0])
        for arr, name in zip(arrays[1:], names[1:], strict=True):
            if int(arr.shape[0]) != m:
                raise ShapeError(
                    f"{name}: covers {int(arr.shape[0])} instances, {names[0]} covers {m}; "
                    "all models must be evaluated on the same pool."
                )
        if m == 0:
            raise ShapeError(f"{names[0]}: the pool is empty (0 rows); pass at least one instance.")
        for j, (f, name) in enumerate(decisions or ()):
            if f is not None:
                arrays[j], layouts[j] = _with_decisions(arrays[j], layouts[j], f, name)
        if costs is not None:
            arrays.append(_as_column(costs, "costs", arrays[0]))
        per_model = [  # block j of each model is the NumPy path's chunk j
            arr.rechunk({0: _chunks.ROWS, 1: -1}).to_delayed().ravel().tolist() for arr in arrays
        ]
        blocks = tuple(tuple(b) for b in zip(*per_model, strict=True))
        return cls(blocks, m, tuple(layouts), tuple(names), costs is not None)

    def starts(self) -> list[int]:
        return [rows.start for rows in _chunks.row_chunks(self.m)]

    def tasks(self, kernel: Any, *args: Any, nout: int | None = None) -> list[Any]:
        """``kernel(blocks, start, m, layouts, names, *args)`` on every block, as Dask tasks."""
        import dask

        return [
            dask.delayed(kernel, nout=nout, pure=True)(
                b, s, self.m, self.layouts, self.names, *args
            )
            for b, s in zip(self.blocks, self.starts(), strict=True)
        ]

    def map(self, kernel: Any, *args: Any) -> list[Any]:
        """:meth:`tasks` computed on the cluster, the results in row order."""
        import dask

        return list(dask.compute(*self.tasks(kernel, *args)))

    def head(self) -> list[Predictive]:
        """Each model on the first rows (its kind and label space, to bind the measure):
        two rows of each come to the client, not the block."""
        import dask

        first = dask.compute(dask.delayed(_first_rows, pure=True)(self.blocks[0], 2))[0]
        return _models(first, 0, self.layouts, self.names, validate=True)

    @property
    def width(self) -> list[int]:
        """Each block's arrays' columns: every model's, then the costs' one."""
        return [_width(lay) for lay in self.layouts] + ([1] if self.costed else [])


def _first_rows(blocks: Any, n: int) -> list[NDArray[Any]]:
    """The first ``n`` rows of every model's block (on the worker holding it)."""
    return [np.asarray(b)[:n] for b in blocks]


def _as_array(obj: Any, name: str) -> tuple[Any, Any]:
    """A model's Dask pool as a Dask array of its columns, and their layout."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(obj, dd.DataFrame):
        cols = [c for c in obj.columns if c != "id"]
        if "item" in cols:
            raise UnknownOptionError(
                f"{name}: the Dask pool has an item column, a ranked pool (one row per item "
                "of each query); ranked pools on Dask are not supported. Evaluate it in "
                "NumPy: activeeval.io.read_pool_file on the file."
            )
        if "cost" in cols:
            raise UnknownOptionError(
                f"{name}: the Dask pool has a cost column; pass the costs as costs= (e.g. "
                "costs=frame['cost']) and the predictions without it, as evaluate and compare "
                "take a DataFrame in NumPy (a session reads the column: Session.create)."
            )
        layout = frame_layout(cols, name)
        if not layout.columns:
            raise ShapeError(
                f"{name}: the Dask pool has no prediction columns (columns {list(obj.columns)}); "
                "give its class probabilities p_<label> (or a regressor's mean and var)."
            )
        return obj[list(layout.columns)].to_dask_array(lengths=True), layout
    if isinstance(obj, da.Array):
        if obj.ndim != 2:
            raise ShapeError(
                f"{name}: a Dask array holds an (m, K) matrix of class probabilities; got "
                f"{obj.ndim} dimensions. For a binary model's P(class 1), pass "
                "da.stack([1 - p, p], axis=1); for a regressor, a Dask DataFrame with "
                "mean and var columns."
            )
        arr = obj.compute_chunk_sizes() if any(math.isnan(c) for c in obj.chunks[0]) else obj
        if int(arr.shape[1]) < 1:
            raise ShapeError(f"{name}: needs at least one class column, got shape {arr.shape}.")
        return arr, _ArrayLayout(int(arr.shape[1]))
    raise ShapeError(
        f"{name}: a Dask pool is a dask.array.Array of class probabilities or a "
        f"dask.dataframe.DataFrame of a pool file's columns; got {type(obj).__name__}."
    )


def _with_decisions(arr: Any, layout: Any, f: Any, name: str) -> tuple[Any, _Decided]:
    """The model's columns with its decisions ``f`` (a NumPy array, a Dask array or Series,
    in the pool's row order) as one more, read on the workers as ``with_decision`` reads
    them (:func:`_decision_numbers`)."""
    import dask.array as da

    f = dask_values(f, name)
    m = int(arr.shape[0])
    check_decision_shape(f.shape, m, name, _labels(layout) is not None)
    if not isinstance(f, da.Array):
        f = da.from_array(f, chunks=(arr.chunks[0],))
    numbers = f.map_blocks(
        _decision_numbers, _labels(layout), name, dtype=np.float64, meta=np.empty(0)
    )
    return da.concatenate([arr.astype(np.float64), numbers[:, None]], axis=1), _Decided(layout)


def _as_column(costs: Any, name: str, arr: Any) -> Any:
    """The costs as an (m, 1) Dask array of floats beside the pool ``arr``; their shape
    refused as :func:`~activeeval._validation.check_costs` refuses it (their values are
    checked on the workers, :func:`_k_first`)."""
    import dask.array as da

    c = dask_values(costs, name)
    m = int(arr.shape[0])
    if c.dtype.kind not in "biuf":  # as check_finite_array refuses text
        raise ShapeError(f"{name}: cannot be read as a numeric array (dtype {c.dtype}).")
    if c.ndim != 1:
        raise ShapeError(f"{name}: expected a 1-d array, got shape {tuple(c.shape)}.")
    if int(c.shape[0]) != m:
        raise ShapeError(f"{name}: has {int(c.shape[0])} entries but the pool has {m} instances.")
    if not isinstance(c, da.Array):
        c = da.from_array(c, chunks=(arr.chunks[0],))
    return c.astype(np.float64)[:, None]


def block_costs(blocks: Any, layouts: Any) -> NDArray[np.float64] | None:
    """A block's costs (its last column, after the models'), or None: no costs."""
    if len(blocks) == len(layouts):
        return None
    return np.asarray(blocks[len(layouts)], dtype=np.float64)[:, 0]


def _labels(layout: Any) -> NDArray[Any] | None:
    """A classifier's classes in its columns' order (None: a regressor)."""
    if isinstance(layout, _ArrayLayout):
        return np.arange(layout.width)
    return layout.labels if layout.kind == "categorical" else None


def _decision_numbers(
    f: NDArray[Any], labels: NDArray[Any] | None, name: str, block_info: Any = None
) -> NDArray[Any]:
    """A block of decisions as :class:`_Decided` keeps them (:func:`decision_numbers`, a
    refusal naming the pool's position)."""
    start = int(block_info[0]["array-location"][0][0]) if block_info else 0
    return decision_numbers(f, labels, name, start)


def _models(
    blocks: Any, start: int, layouts: Any, names: Any, validate: bool = False
) -> list[Predictive]:
    """Each model on a block, validated on the first pass, errors naming the pool's rows."""
    out = []
    for block, layout, name in zip(blocks[: len(layouts)], layouts, names, strict=True):
        values = np.asarray(block, dtype=float)
        out.append(_built(values, start, layout, name) if validate else layout.build(values, name))
    return out


def _built(values: NDArray[np.float64], start: int, layout: Any, name: str) -> Predictive:
    """The model on a block, validated as the whole pool would be, errors naming the pool's
    rows."""
    if isinstance(layout, _Decided):  # its decisions were checked as they were read
        return restored_decision(_built(values[:, :-1], start, layout.inner, name), values[:, -1])
    if not isinstance(layout, FrameLayout) or layout.kind == "categorical":
        check_rows(values, start, name)
    else:  # a regressor's mean and var (or std), checked as Gaussian checks them
        check_finite_array(values[:, 0], "mean", ndim=1, start=start)
        check_finite_array(values[:, 1], layout.kind, ndim=1, start=start)
        check_spread(values[:, 1], layout.kind, start)
    return layout.build(values, name)


# ------------------------------------------------------------------------ the plan of q
def _rows_p(start: int, n: int, m: int) -> NDArray[np.float64]:
    """The uniform test distribution on a block's rows, as q* slices it."""
    return uniform(m)[start : start + n]


def _rows_pw(start: int, n: int, m: int) -> NDArray[np.float64]:
    """The same, as the estimators normalize it (:func:`~activeeval.estimators.summary.summarize`:
    the test distribution of ``uniform(m)``; a pool of one chunk sums it)."""
    return pool_distribution(m, uniform(m))[start : start + n]


def _sources(parts: list[Predictive]) -> list[Predictive]:
    """The control variates' sources: the model itself; for k ≥ 2, each model's own p(y | x)
    and their mixture (eq. 5.11), as :class:`~activeeval.estimators.summary.PairSummary`."""
    return parts if len(parts) == 1 else [*parts, Mixture(parts)]


@dataclass(frozen=True)
class _Plan:
    """What a block needs to compute q: the measure, the models' number, q*'s centers
    (one model: its intrinsic value, eq. 4.21; k ≥ 2 models: each model's under their
    mixture and its scale, eq. 5.12) and sums (one model's score, or each pair's, eq. 5.16).
    ``passive``: q = p."""

    meas: Measure
    k: int
    passive: bool
    centers: tuple[float, ...] = ()
    scales: tuple[float, ...] = ()
    regular: bool = True
    score_total: float = 1.0
    mix: float = 0.0
    defensive_total: float = 0.0
    #: Where q* has nothing to aim at: "domain" (one model: p on the instances whose weight
    #: can be positive), as the NumPy path falls back.
    fallback: str = ""
    #: k ≥ 2 models: each pair's score sum, the pairs (i, j), i < j, in row-major order; a
    #: pair whose score sums to 0 counts p (as comparison_distribution).
    pair_totals: tuple[float, ...] = ()
    #: Whether q* divides by the labeling costs (Thm 4.2, eq. 4.25: method "active" with
    #: costs; "active_uniC" ignores them in q).
    costs: bool = False

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return model_pairs(self.k)

    def domain(self, parts: list[Predictive]) -> NDArray[np.bool_]:
        """Where some model's weight can be positive."""
        d = self.meas.weight_can_be_positive(parts[0].point_prediction())
        for part in parts[1:]:
            d = d | self.meas.weight_can_be_positive(part.point_prediction())
        return d

    def score(
        self, parts: list[Predictive], lam: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """One model's q* unnormalized on a block: sqrt(E[w²(ℓ − Ǧ)² | x] / λ), zero off its
        domain (:func:`~activeeval.sampling._from_moment`, uniform p; ``lam`` the block's
        costs where q* weighs them)."""
        meas = self.meas
        f = parts[0].point_prediction()
        a = meas.conditional_second_moment(parts[0], self.centers[0], f, fast=True)
        a = np.maximum(a, 0.0, out=a)
        if not self.regular:
            a[~meas.weight_can_be_positive(f)] = 0.0
        if lam is not None:
            a /= lam
        return np.sqrt(a, out=a)

    def pair_scores(
        self,
        parts: list[Predictive],
        p: NDArray[np.float64],
        lam: NDArray[np.float64] | None = None,
    ) -> Iterator[NDArray[np.float64]]:
        """Each pair's unnormalized score on a block, p·sqrt(E[(ψ_i − ψ_j)² | x] / λ) under
        the models' mixture (:func:`~activeeval.sampling.comparison_distribution`; ``lam``
        as :meth:`score`'s), one pair at a time."""
        fs = [part.point_prediction() for part in parts]
        mixture = Mixture(parts)
        for i, j in self.pairs:
            a = self.meas.difference_second_moment(
                mixture, (fs[i], fs[j]), (self.centers[i], self.centers[j]),
                (self.scales[i], self.scales[j]), fast=True,
            )  # fmt: skip
            np.maximum(a, 0.0, out=a)
            if lam is not None:
                a /= lam
            np.sqrt(a, out=a)
            a *= p
            yield a

    def q(
        self,
        parts: list[Predictive],
        start: int,
        m: int,
        lam: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """q on a block's rows, as the NumPy path computes it there (``lam``: the block's
        costs, where q* weighs them)."""
        p = _rows_p(start, parts[0].n, m)
        if self.passive:
            return np.array(p)
        if self.fallback == "domain":  # _defensive(p, p, mask, 1.0): 0·p + p_D/P(D)
            return 0.0 * p + np.where(self.domain(parts), p, 0.0) / self.defensive_total
        if self.k == 1:
            score = self.score(parts, lam)
            score /= self.score_total
        else:  # the average of the pairs' normalized scores (eq. 5.16)
            scores = self.pair_scores(parts, p, lam)
            score = pairs_averaged(next(scores), scores, self.pair_totals, p)
        if self.mix <= 0:
            return score
        if self.k == 1 and self.regular:  # the defensive mixture with the uniform pool
            score *= 1.0 - self.mix
            score += self.mix / m
            return score
        if self.defensive_total <= 0:
            return score
        d = self.domain(parts)
        return (1.0 - self.mix) * score + self.mix * (np.where(d, p, 0.0) / self.defensive_total)


def _k_first(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, meas: Measure
) -> dict[str, Any]:
    """Pass 1 on a block: every model validated; q*'s sums (one model: Σ p·E[w | x] and
    Σ p·E[wℓ | x], :func:`~activeeval.sampling.influence_moment`; k ≥ 2: each model's under
    their mixture, :func:`~activeeval.sampling._pair_moments`); each model's and the union's
    domain; and the control variates' sums under p (valid where the domain is the pool)."""
    parts = _models(blocks, start, layouts, names, validate=True)
    n = parts[0].n
    lam = block_costs(blocks, layouts)
    if lam is not None:  # as check_costs checks them, entries counted in the pool
        check_cost_values(check_finite_array(lam, "costs", ndim=1, start=start), "costs", start)
    p, pw = _rows_p(start, n, m), _rows_pw(start, n, m)
    fs = [part.point_prediction() for part in parts]
    under = parts[0] if len(parts) == 1 else Mixture(parts)
    sums = []
    for f in fs:
        wl, w = meas.conditional_expectations(under, f, fast=True)
        sums.append((weighted_sum(p, w), weighted_sum(p, wl)))
    ds = [meas.weight_can_be_positive(f) for f in fs]
    d = ds[0]
    for other in ds[1:]:
        d = d | other
    return {
        "sums": sums,
        "own_domain": [int(np.count_nonzero(x & (p > 0))) for x in ds],
        "n_domain": int(np.count_nonzero(d & (p > 0))),
        # as summarize_pair counts them: where two models decide differently
        "n_differ": int(np.count_nonzero((p > 0) & (fs[0] != fs[1]))) if len(fs) == 2 else 0,
        "domain_all": bool(d.all()),
        "mass": weighted_sum(pw, d),
        "moments": _moment_sums(meas, parts, fs, pw),
        "terms": [_own_sums(meas, part, f, p) for part, f in zip(parts, fs, strict=True)],
        "families": [_family(part) for part in parts],
        # the cheapest cost and their sum (chunked_sum's part), for the budget and the cap
        "costs": None if lam is None else (float(lam.min()), float(lam.sum())),
    }


def _moment_sums(
    meas: Measure, parts: list[Predictive], fs: list[Any], p: NDArray[np.float64]
) -> list[list[tuple[float, float]]]:
    """Σ p·m_N and Σ p·m_D of every source with every model's decisions
    (:func:`~activeeval.estimators.assisted._pool_moments` on a chunk)."""
    out = []
    for src in _sources(parts):
        row = []
        for f in fs:
            m_num, m_den = meas.conditional_expectations(src, f)
            row.append((weighted_sum(p, m_num), weighted_sum(p, m_den)))
        out.append(row)
    return out


def _own_sums(
    meas: Measure, part: Predictive, f: NDArray[Any], p: NDArray[np.float64]
) -> tuple[float, float]:
    """Σ p·m_N and Σ p·m_D of a model's own p(y | x) with its own decisions under the pool's
    test distribution as a session and ``evaluate`` hold it (``uniform(m)``, not renormalized:
    on a pool of one chunk its sum is not exactly 1): the anytime sequences' pool means
    (:attr:`~activeeval.estimators.summary.PoolSummary.terms_mu`)."""
    m_num, m_den = meas.conditional_expectations(part, f)
    return weighted_sum(p, m_num), weighted_sum(p, m_den)


def _k_second(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, mass: float | None
) -> dict[str, Any]:
    """Pass 2 on a block: q*'s score sum (one model's, with its zeros where a weight can be
    positive; of k ≥ 2, each pair's), the defensive mixture's mass; with a domain short of
    the pool the control variates' sums under p renormalized on it (mass > 0), and the
    instances with test mass there."""
    parts = _models(blocks, start, layouts, names)
    n = parts[0].n
    p, pw = _rows_p(start, n, m), _rows_pw(start, n, m)
    d = plan.domain(parts)
    out: dict[str, Any] = {}
    if not plan.passive:
        lam = block_costs(blocks, layouts) if plan.costs else None
        if plan.k == 1:
            score = plan.score(parts, lam)
            out["score"] = [float(score.sum())]
            out["zeros"] = int(((score <= 0) & d).sum())
        else:
            out["score"] = [float(a.sum()) for a in plan.pair_scores(parts, p, lam)]
            out["zeros"] = 0
        out["defensive"] = np.where(d, p, 0.0).sum()
    if mass is not None:
        p_dom = np.where(d, pw, 0.0) / mass
        fs = [part.point_prediction() for part in parts]
        out["moments"] = _moment_sums(plan.meas, parts, fs, p_dom)
        out["n_needed"] = int(np.count_nonzero(p_dom > 0))
    else:
        out["n_needed"] = int(np.count_nonzero(pw > 0))
    return out


def _block_q(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan
) -> tuple[list[Predictive], NDArray[np.float64]]:
    parts = _models(blocks, start, layouts, names)
    return parts, plan.q(parts, start, m, block_costs(blocks, layouts) if plan.costs else None)


def _k_draw_cost(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan
) -> tuple[float, float]:
    """A block's Σ q·λ (:func:`~activeeval._chunks.dot`: the horizon's mean cost of a draw,
    :func:`~activeeval.stopping.horizon_draws`) and its cheapest cost where q > 0 (inf
    where q is 0 throughout)."""
    _, q = _block_q(blocks, start, m, layouts, names, plan)
    lam = block_costs(blocks, layouts)
    assert lam is not None
    drawn = lam[q > 0]
    return dot(q, lam), float(drawn.min()) if drawn.size else math.inf


def _k_ends(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, carry: Any
) -> tuple[NDArray[np.float64], tuple[Any, ...]]:
    """Pass 3, a chain of tasks: q's running sums at the block's chunk ends, continued from
    the sum before the block (:func:`~activeeval._chunks.chunk_ends`); and carried on with
    that sum, the positive q counted so far, the :data:`~activeeval.sampling.TOP_Q` + 1
    largest q so far (:meth:`TimeSummary.top_part`, :meth:`TimeSummary.merge_tops`: a
    multiset's, whatever the order) and the instances with test mass in the domain that q
    cannot draw — so that no block's largest q wait in memory for a merge."""
    parts, q = _block_q(blocks, start, m, layouts, names, plan)
    total, count, best, missing = carry
    ends, total = span_ends(q, total, DRAW_ROWS, start + q.shape[0] >= m)
    n_pos, top = TimeSummary.top_part(q)
    pw = _rows_pw(start, parts[0].n, m)
    missing += int(np.count_nonzero(plan.domain(parts) & (pw > 0) & (q <= 0)))
    return ends, (total, count + n_pos, TimeSummary.merge_tops(best, top), missing)


def _k_sums(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, tau: float | None
) -> Any:
    """Pass 4: the block's part of :meth:`TimeSummary.sums_part` (``tau`` None: its
    positive q, the whole support being kept)."""
    _, q = _block_q(blocks, start, m, layouts, names, plan)
    if tau is None:
        return q[q > 0]
    return TimeSummary.sums_part(q, tau)


def _k_rows(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, local: Any
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    """Every model's rows ``local`` (counted in the block) and q there."""
    _, q = _block_q(blocks, start, m, layouts, names, plan)
    return [np.asarray(b, dtype=float)[local] for b in blocks], q[local]


def _k_draw(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, asked: Any
) -> list[tuple[NDArray[np.intp], NDArray[np.float64], list[NDArray[np.float64]]]]:
    """The draws that fell in this block: for each of its chunks ``(offset, carry, end,
    total, u)``, the rows of the uniforms ``u`` (:func:`~activeeval._chunks.within_chunk`),
    q there and every model's rows; refused when q no longer sums to the chunk's end (the
    pool changed between passes)."""
    _, q = _block_q(blocks, start, m, layouts, names, plan)
    values = [np.asarray(b, dtype=float) for b in blocks]
    out = []
    for offset, carry, end, total, u in asked:
        qc = q[offset : offset + DRAW_ROWS]
        local, qd, reached = within_chunk(qc, carry, total, u)
        if reached != end:
            first, last = start + offset, start + offset + qc.shape[0] - 1
            raise ShapeError(
                f"{names[0]}: the Dask pool's rows {first}–{last} changed between passes over "
                "it (their q no longer sums to what the first pass found); pass a pool whose "
                "partitions compute the same values every time (persist it, or read a file "
                "that is not being written)."
            )
        out.append((start + offset + local, qd, [v[offset + local] for v in values]))
    return out


# ----------------------------------------------------------------- the pool's summaries
@dataclass(frozen=True)
class _Prepared:
    """A Dask pool's plan of q, its chunk ends and the estimate's pool summary (one model's
    :class:`PoolSummary`, k ≥ 2 models' :class:`PairSummary`)."""

    plan: _Plan
    ends: NDArray[np.float64]
    summary: Any
    #: What the campaign reads of the costs (None: a budget in labels).
    costs: _CostStats | None = None


@dataclass(frozen=True)
class _CostStats:
    """What a campaign reads of a Dask pool's costs, in place of the array
    (:func:`~activeeval._validation.check_budget`, ``check_max_draws``, ``_look_step``,
    ``_no_label_bought``): the cheapest; the mean (the blocks' sums added in order, as
    :func:`~activeeval._chunks.chunked_sum`); the cheapest where q > 0; and Σ q·λ, a draw's
    mean cost (the blocks' dot products added in order, as :func:`~activeeval._chunks.
    chunked_dot`)."""

    cheapest: float
    average: float
    cheapest_drawable: float
    draw_cost: float

    def min(self) -> float:
        return self.cheapest

    def mean(self) -> float:
        return self.average

    def __getitem__(self, support: Any) -> _Cheapest:  # costs[support].min(), q's support
        return _Cheapest(self.cheapest_drawable)


@dataclass(frozen=True)
class _Cheapest:
    value: float

    def min(self) -> float:
        return self.value


def _added(parts: list[Any]) -> Any:
    """Nested lists of floats added up in order, from 0.0 (as the NumPy path adds chunks)."""
    total = np.zeros(np.shape(parts[0]))
    for part in parts:
        total += np.asarray(part, dtype=float)
    return total


def _prepare(
    pool: DaskPool, meas: Measure, passive: bool, floor: float, mix: float, costs_in_q: bool
) -> _Prepared:
    """The plan of q (``costs_in_q``: q* weighs the pool's costs), its chunk ends, the pool
    summary and what the campaign reads of the costs, in a few passes over the pool."""
    k = len(pool.layouts)
    first = pool.map(_k_first, meas)
    if all(sum(r["own_domain"][j] for r in first) == 0 for j in range(k)):
        raise undefined_error(meas, k)  # as refuse_undefined: no label can move it
    sums = _added([r["sums"] for r in first])  # (k, 2): Σ p·w, Σ p·wℓ per model
    mass = 0.0
    for r in first:
        mass += r["mass"]
    moments = _added([r["moments"] for r in first])
    # Each model's own source with its own decisions under the pool's test distribution:
    # the anytime sequences' pool means (PoolSummary.terms_mu), whatever the domain.
    own = _added([r["terms"] for r in first])
    terms_mu = tuple((float(own[j][0]), float(own[j][1])) for j in range(k))
    domain_all = all(r["domain_all"] for r in first)
    plan = _Plan(meas, k, passive)
    if not passive:
        plan = replace(_centered(meas, k, sums, floor, mix), costs=costs_in_q)
        if plan.fallback:  # undefined under the model: p on the domain, as NumPy warns
            warn_undefined_intrinsic(meas.name, stacklevel=5)
    on_domain = not domain_all and mass > 0
    second = pool.map(_k_second, plan, mass if on_domain else None)
    if on_domain:  # the control variates' means under p renormalized on the domain
        moments = _added([r["moments"] for r in second])
    if not passive:
        totals = [0.0] * len(second[0]["score"])
        defensive = 0.0
        for r in second:
            for n, part in enumerate(r["score"]):
                totals[n] += part
            defensive += r["defensive"]
        if k > 1:
            plan = replace(plan, pair_totals=tuple(totals), defensive_total=defensive)
        else:
            fallback = plan.fallback
            if not totals[0] > 0 and not fallback:  # q* zero everywhere: as NumPy falls back
                fallback = "domain"
            zeros = sum(r["zeros"] for r in second)
            if mix <= 0 and zeros and not fallback:
                warn_zero_q(zeros, stacklevel=5)
            plan = replace(
                plan, score_total=totals[0], defensive_total=defensive, fallback=fallback
            )
    ends, n_support, tau, missing = _ends_and_support(pool, plan)
    time = _time_summary(pool, plan, n_support, tau)
    n_domain = sum(r["n_domain"] for r in first)
    mom = tuple(tuple((float(a), float(b)) for a, b in row) for row in moments)
    keep = subsample(pool.m)
    rows, sample_q = _rows_at(pool, plan, keep)
    rows = rows[:k]  # the models' (not the costs')
    stats = _cost_stats(pool, plan, first)
    families = [all(r["families"][j] for r in first) for j in range(k)]
    sample_p = np.asarray(uniform(pool.m)[keep], dtype=np.float64)
    if k > 1:
        samples = tuple(
            lay.build(r, name) for lay, r, name in zip(pool.layouts, rows, pool.names, strict=True)
        )
        summary: Any = PairSummary(
            pool.m, time, domain_all, 1.0 if domain_all else float(mass), n_domain, missing,
            mom, keep, samples, sample_q, sample_p, tuple(families), terms_mu,
            n_differ=sum(r["n_differ"] for r in first) if k == 2 else None,
        )  # fmt: skip
        return _Prepared(plan, ends, summary, stats)
    summary = PoolSummary(
        size=pool.m,
        time=time,
        domain_all=domain_all,
        mass=1.0 if domain_all else float(mass),
        mu_num=mom[0][0][0],
        mu_den=mom[0][0][1],
        n_needed=sum(r["n_needed"] for r in second),
        n_domain=n_domain,
        missing=missing,
        curve_family=families[0],
        keep=keep,
        sample=pool.layouts[0].build(rows[0], pool.names[0]),
        sample_q=sample_q,
        sample_p=sample_p,
        terms_mu=terms_mu[0],
    )
    return _Prepared(plan, ends, summary, stats)


def _cost_stats(pool: DaskPool, plan: _Plan, first: list[dict[str, Any]]) -> _CostStats | None:
    """:class:`_CostStats` from the first pass's parts and one more pass over q."""
    if not pool.costed:
        return None
    total = 0.0
    for r in first:
        total += r["costs"][1]
    draw_cost, cheapest_drawable = 0.0, math.inf
    for dc, low in pool.map(_k_draw_cost, plan):
        draw_cost += dc
        cheapest_drawable = min(cheapest_drawable, low)
    cheapest = min(r["costs"][0] for r in first)
    return _CostStats(cheapest, total / pool.m, cheapest_drawable, draw_cost)


def _centered(meas: Measure, k: int, sums: NDArray[np.float64], floor: float, mix: float) -> _Plan:
    """q*'s plan from the first pass's sums: one model's intrinsic value (eq. 4.21, within
    the floor for 0/1 losses); k ≥ 2 models' centers and scales under their mixture (eq. 5.12)."""
    if k == 1:
        scale, total = float(sums[0][0]), float(sums[0][1])
        if not scale > 0:  # undefined under the model: influence_moment gives None
            return _Plan(meas, 1, False, (0.0,), (), meas.regular, mix=mix, fallback="domain")
        c = total / scale  # eq. 4.21
        if meas.binary_loss and floor > 0:
            c = min(max(c, floor), 1.0 - floor)
        return _Plan(meas, 1, False, (c,), (), meas.regular, mix=mix)
    centers = tuple(float(wl) / s if s > 0 else 0.0 for s, wl in sums)
    scales = tuple(1.0 if meas.regular else max(float(s), 1e-300) for s, _ in sums)
    return _Plan(meas, k, False, centers, scales, meas.regular, mix=mix)


#: Blocks per stretch of the chain of running sums computed at once: a longer chain of
#: ``Delayed`` objects holds graphs that grow with its length squared (each link's holds all
#: before it); between stretches only the carry (a sum, counts and the 65,536 largest q)
#: comes back.
CHAIN_BLOCKS = 32


def _ends_and_support(pool: DaskPool, plan: _Plan) -> tuple[NDArray[np.float64], int, float, int]:
    """The chunk ends of q, the support's size, the (TOP_Q + 1)-th largest q and the
    domain's instances q cannot draw: a chain of tasks (:func:`_k_ends`), each continuing
    the previous block's running sum as one cumulative sum does."""
    import dask

    ends: list[NDArray[np.float64]] = []
    carry: Any = (np.zeros(1), 0, np.empty(0), 0)
    spans = list(zip(pool.blocks, pool.starts(), strict=True))
    for at in range(0, len(spans), CHAIN_BLOCKS):
        links = []
        link_carry = carry
        for b, s in spans[at : at + CHAIN_BLOCKS]:
            link = dask.delayed(_k_ends, nout=2, pure=True)(
                b, s, pool.m, pool.layouts, pool.names, plan, link_carry
            )
            links.append(link[0])
            link_carry = link[1]
        got, carry = dask.compute(links, link_carry)
        ends.extend(got)
    _, n_support, best, missing = carry
    return np.concatenate(ends), n_support, float(np.min(best)), missing


def _time_summary(pool: DaskPool, plan: _Plan, n_support: int, tau: float) -> TimeSummary:
    """:meth:`TimeSummary.of` from the blocks' parts."""
    m = pool.m
    if m <= _chunks.ROWS:  # one block: q itself, as the NumPy path keeps it
        if n_support < m:
            (q,) = pool.map(_k_sums, plan, None)
        else:
            q = _rows_at(pool, plan, np.arange(m))[1]
        return TimeSummary(m, n_support, q, 0.0, np.zeros(0))
    if n_support <= TOP_Q:
        return TimeSummary.assemble(m, n_support, 0.0, pool.map(_k_sums, plan, None), [])
    parts = pool.map(_k_sums, plan, tau)
    return TimeSummary.assemble(m, n_support, tau, [t for t, _ in parts], [s for _, s in parts])


def _rows_at(
    pool: DaskPool, plan: _Plan, idx: NDArray[np.intp]
) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    """Every model's rows and q at the sorted pool rows ``idx``, a task per block that has
    some."""
    import dask

    tasks, spans = [], []
    for j, at in grouped(idx // _chunks.ROWS):
        s = j * _chunks.ROWS
        tasks.append(
            dask.delayed(_k_rows, nout=2, pure=True)(
                pool.blocks[j], s, pool.m, pool.layouts, pool.names, plan, idx[at] - s
            )
        )
        spans.append(at)
    got = dask.compute(*tasks)
    rows = [np.empty((idx.shape[0], w)) for w in pool.width]
    q = np.empty(idx.shape[0])
    for at, (r, qq) in zip(spans, got, strict=True):
        for k, rk in enumerate(r):
            rows[k][at] = rk
        q[at] = qq
    return rows, q


# ------------------------------------------------------------------------ the campaign
class _DaskSampler:
    """Draws from a Dask pool's q as :class:`~activeeval.sampling.Sampler` draws from an
    array: the chunk of each uniform from the ends on the client, its row within the chunk
    on the worker holding the block; the models' rows at the draws come back with them."""

    def __init__(self, pool: DaskPool, prep: _Prepared) -> None:
        self.pool, self.prep = pool, prep
        self.rows: list[tuple[NDArray[np.intp], list[NDArray[np.float64]]]] = []
        self.prices = _Prices()  # the drawn rows' costs, where the pool has them

    def draw(
        self, n: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        import dask

        pool, ends = self.pool, self.prep.ends
        u = rng.random(n)
        chunks = draw_chunks(ends, u)
        per_block = _chunks.ROWS // DRAW_ROWS
        tasks, where = [], []
        for b, at_b in grouped(chunks // per_block):
            asked = []
            for j, at in grouped(chunks[at_b]):
                pos = at_b[at]
                carry = float(ends[j - 1]) if j else 0.0
                asked.append(
                    ((j % per_block) * DRAW_ROWS, carry, float(ends[j]), float(ends[-1]), u[pos])
                )
                where.append(pos)
            tasks.append(
                dask.delayed(_k_draw, pure=True)(
                    pool.blocks[b],
                    b * _chunks.ROWS,
                    pool.m,
                    pool.layouts,
                    pool.names,
                    self.prep.plan,
                    asked,
                )
            )
        idx = np.empty(n, dtype=np.intp)
        qd = np.empty(n)
        rows = [np.empty((n, w)) for w in pool.width]
        got = [part for parts in dask.compute(*tasks) for part in parts]
        for pos, (i, q, r) in zip(where, got, strict=True):
            idx[pos], qd[pos] = i, q
            for k, rk in enumerate(r):
                rows[k][pos] = rk
        idx = np.minimum(idx, pool.m - 1)
        self.rows.append((idx, rows))
        if pool.costed:
            self.prices.add(idx, rows[-1][:, 0])
        return idx, qd

    def models_at(self, units: NDArray[np.intp]) -> list[AtRows]:
        """Every model at the sorted distinct drawn rows ``units``."""
        idx = np.concatenate([i for i, _ in self.rows])
        first = np.unique(idx, return_index=True)[1]
        at = first[np.searchsorted(idx[first], units)]
        out = []
        for k, (layout, name) in enumerate(zip(self.pool.layouts, self.pool.names, strict=True)):
            rows = np.concatenate([r[k] for _, r in self.rows])
            out.append(AtRows(layout.build(rows[at], name), units, self.pool.m))
        return out


class _Taken:
    """Which pool rows a campaign has labeled, without an array over the pool: indexed by
    pool rows as :class:`~activeeval.acquisition._LabelBook`'s ``known`` is."""

    def __init__(self) -> None:
        self.rows = np.empty(0, dtype=np.intp)

    def __getitem__(self, idx: Any) -> NDArray[np.bool_]:
        return np.isin(np.asarray(idx, dtype=np.intp), self.rows)

    def __setitem__(self, idx: Any, value: bool) -> None:
        self.rows = np.union1d(self.rows, np.asarray(idx, dtype=np.intp))

    def sum(self) -> int:
        return int(self.rows.shape[0])


class _Drawn:
    """The support of q at drawn rows: every drawn row has q > 0."""

    def __getitem__(self, idx: Any) -> NDArray[np.bool_]:
        return np.ones(np.shape(idx), dtype=bool)


class _Prices:
    """Each drawn row's labeling cost, indexed by pool rows as a campaign's costs array is
    (:func:`~activeeval.acquisition._walk_block` prices only drawn rows): the costs come
    back from the cluster with the draws."""

    def __init__(self) -> None:
        self.rows = np.empty(0, dtype=np.intp)
        self.values = np.empty(0)

    def add(self, idx: NDArray[np.intp], costs: NDArray[np.float64]) -> None:
        both = np.concatenate([self.rows, idx])
        self.rows, first = np.unique(both, return_index=True)
        self.values = np.concatenate([self.values, costs])[first]

    def __getitem__(self, idx: Any) -> NDArray[np.float64]:
        return self.values[np.searchsorted(self.rows, np.asarray(idx, dtype=np.intp))]


class _DaskAcquisition(_Acquisition):
    """Algorithm 2's walk of :class:`~.steps._Acquisition`, unchanged, over draws from a
    Dask pool: the label book and the support are kept for the drawn rows only, and the
    costs (``costs``: what the passes found of them, None for a budget in labels) for the
    drawn rows."""

    def __init__(
        self, sampler: _DaskSampler, n_support: int, oracle: Oracle, check: Any,
        rng: np.random.Generator, max_draws: int, bar: Any,
    ) -> None:  # fmt: skip
        book = _LabelBook(0)
        book.known = _Taken()  # type: ignore[assignment]
        self.q = None  # type: ignore[assignment]
        costs = sampler.prep.costs
        self.oracle, self.check, self.costs, self.rng = oracle, check, costs, rng  # type: ignore[assignment]
        self.max_draws, self.bar, self.book = max_draws, bar, book
        self.price = (
            np.broadcast_to(1.0, (sampler.pool.m,)) if costs is None else sampler.prices  # type: ignore[assignment]
        )
        self.sampler = sampler  # type: ignore[assignment]
        self.support = _Drawn()  # type: ignore[assignment]
        self.left = n_support
        self.spent = 0.0
        self.kept, self.kept_q = [], []
        self.n_kept = 0
        self.pending = np.empty(0, dtype=np.intp)
        self.pending_q = np.empty(0)
        self.switched = False
        self.capped = False


def evaluate_dask(
    predictions: Any, oracle: Oracle, measure: Any, budget: float, method: str, level: float,
    random_state: Any, *, pos_label: Any, floor: float, mix: float, max_draws: int | None,
    progress: bool | None, target_width: Any = None, claim: Any = None, rule: str = "anytime",
    step: Any = None, estimator: str = "assisted", prediction: Any = None, costs: Any = None,
    refused: dict[str, Any],
) -> EvaluationResult:  # fmt: skip
    """:func:`~activeeval.evaluate` of one model on a Dask pool (module docstring): the same
    result as on the pool in NumPy, bit for bit — its stopping rule's looks and anytime
    interval too — but ``pool_q`` (not brought to the client); by ``estimator`` (checked), the
    thesis's too (eq. 3.31; under a rule, the estimator's σ₀ grid is computed once, on the
    summary's subsample, before the first draw); the decisions ``prediction`` in a column
    beside the beliefs (:class:`_Decided`); the labeling ``costs`` in a last column
    (:func:`block_costs`: q* weighs them, Thm 4.2, and the budget is in their units).
    ``refused``: the options a Dask pool does not take yet, by name, with their values
    (refused unless at their defaults)."""
    _refuse(refused)
    pool = DaskPool.of([predictions], ["predictions"], [(prediction, "prediction")], costs)
    (head,) = pool.head()
    meas = get_measure(measure, pos_label=pos_label)
    refuse_decision(meas, prediction is not None)
    check_fits(meas, head)
    meas = meas.bind(head)
    if isinstance(meas, ClasswiseMeasure | ProbabilityMeasure):
        raise UnknownOptionError(
            f"measure: {meas.name} on a Dask pool is not supported yet (its q and estimate need "
            "the pool's confusion counts or probabilities whole); evaluate the pool in NumPy, "
            "or a measure such as 'error_rate', 'f1', 'precision', 'recall', 'mse'."
        )
    stop = stopping_rule(target_width, claim, False, rule, measure=meas)
    _check_step(step, stop is not None)
    method = check_option(method, DASK_METHODS, "method")  # after the rule, as NumPy's
    check_safeguards(mix, floor)
    b, lv, max_draws, rng, prep = _planned(
        pool, meas, method, floor, mix, (budget, level, oracle, max_draws, random_state)
    )
    sampler = _DaskSampler(pool, prep)
    with _bar(b, cast(Any, prep.costs), progress) as bar:
        acq = _DaskAcquisition(
            sampler, prep.summary.time.n_support, oracle, _label_check(head), rng, max_draws, bar
        )
        looks = _Looks(stop, meas, lv, b, pool, prep, sampler, acq, estimator)
        _, stopped = _run_looks(acq, b, _stop_step(acq, b, step), looks if stop else None)
    acq.warn_if_capped(b)
    acq.require_labels(budget, False)
    draws = acq.draws
    y = acq.book.lookup(draws)
    units = np.unique(draws)
    served = _time_served(prep, estimator, units)
    summary = looks.summary if served else _with_time(pool, prep)
    at = sampler.models_at(units)
    est, interval = summary_static_estimate(
        meas, at[0], summary, draws, y, acq.draw_q, lv, estimator=estimator
    )
    res = EvaluationResult(
        **_fields(meas, lv, est, interval), cost=acq.spent, budget=b, method=method,
        indices=draws, q=acq.draw_q, labels=y, label_offsets=None, stopped=stopped,
        anytime_terms=looks.terms(at, draws, y),
    )  # fmt: skip
    return reported(res, stop)


def compare_dask(
    predictions: Any, oracle: Oracle, measure: Any, budget: float, method: str, level: float,
    random_state: Any, *, pos_label: Any, mix: float, max_draws: int | None,
    progress: bool | None, target_width: Any = None, claim: Any = None, decide: Any = False,
    rule: str = "anytime", step: Any = None, sequential: bool = False, alpha: float = 0.05,
    estimator: str = "assisted", prediction: list[Any] | None = None, costs: Any = None,
    refused: dict[str, Any],
) -> ComparisonResult:  # fmt: skip
    """:func:`~activeeval.compare` of k ≥ 2 models on Dask pools: the same result as on the
    pools in NumPy, bit for bit (Δ, its standard error, p-value and interval — of more than
    two models the multiple comparison, eq. 5.16's q — each model's estimate and tempered
    interval, the draws, a stopping rule's looks and the anytime interval), but
    ``pool_q``; by ``estimator`` (checked), the thesis's too; ``prediction``: per model,
    its decisions or None (checked for one per model). ``refused`` as
    :func:`evaluate_dask`'s."""
    _refuse(refused)
    models = list(predictions)
    k = len(models)
    decisions = [(f, f"prediction[{j}]") for j, f in enumerate(prediction or [None] * k)]
    if len(models) < 2:
        raise ShapeError(f"predictions: need at least two models to compare, got {len(models)}.")
    pool = DaskPool.of(models, [f"predictions[{j}]" for j in range(k)], decisions, costs)
    heads = pool.head()
    meas = get_measure(measure, pos_label=pos_label)
    refuse_decision(meas, any(f is not None for f, _ in decisions))
    check_fits(meas, heads[0])
    if getattr(meas, "any_predictions", False) or isinstance(
        meas, ClasswiseMeasure | ProbabilityMeasure
    ):
        raise UnknownOptionError(
            f"measure: {meas.name} in a comparison of Dask pools is not supported; compare by "
            "a measure of decisions ('error_rate', 'f1', 'precision', 'recall', 'mse', ...)."
        )
    meas = meas.bind(Mixture(heads))
    stop = comparison_rule(target_width, claim, decide, rule, meas, k, sequential)
    _check_step(step, stop is not None or sequential)
    if sequential:
        raise UnknownOptionError(
            "sequential: the thesis's protocol (Wald tests at every look) is not supported on "
            "a Dask pool; decide=True is its valid form (an anytime-valid comparison)."
        )
    check_level(alpha, "alpha")  # after the rule, as NumPy's
    method = check_option(method, DASK_METHODS, "method")
    check_safeguards(mix)
    b, lv, max_draws, rng, prep = _planned(  # the floor is one model's
        pool, meas, method, 0.0, mix, (budget, level, oracle, max_draws, random_state)
    )
    sampler = _DaskSampler(pool, prep)
    with _bar(b, cast(Any, prep.costs), progress) as bar:
        acq = _DaskAcquisition(
            sampler, prep.summary.time.n_support, oracle, _label_check(heads[0]), rng,
            max_draws, bar,
        )  # fmt: skip
        looks = _Looks(stop, meas, lv, b, pool, prep, sampler, acq, estimator)
        _, stopped = _run_looks(acq, b, _stop_step(acq, b, step), looks if stop else None)
    acq.warn_if_capped(b)
    acq.require_labels(budget, False)
    draws = acq.draws
    y = acq.book.lookup(draws)
    units = np.unique(draws)
    at = sampler.models_at(units)
    if units.shape[0] == pool.m:  # every instance labeled: the exact values (a census)
        first = np.unique(draws, return_index=True)[1]
        p = uniform(pool.m)[units]
        exact = [_exact_value(meas, pr.take(units).point_prediction(), y[first], p) for pr in at]
        outcome = exact_outcome(exact, draws.shape[0], units.shape[0], lv, meas)
    else:
        served = _time_served(prep, estimator, units)
        summary = prep.summary if served else _with_time(pool, prep)
        p = np.full(draws.shape[0], 1.0 / pool.m)  # the uniform test distribution
        known = exact_difference(meas, at, draws, y, p, summary.n_differ)  # as NumPy's path
        outcome = with_exact_difference(
            lambda: summary_outcome(meas, at, summary, draws, y, acq.draw_q, lv, estimator),
            known,
        )
        if estimator == "assisted":  # each model's tempered interval, when first asked for
            first = np.unique(draws, return_index=True)[1]
            scores = SummaryScores(meas, at, summary, units, y[first])
            if not served:  # t(n) from passes over the pool: now, so no result holds its graph
                scores()
                scores.summary = prep.summary
            outcome = outcome._replace(scores=scores)
    sample = {"budget": b, "method": method, "indices": draws, "q": acq.draw_q,
              "labels": y, "label_offsets": None}  # fmt: skip
    # what _comparison_result reads of a Reporting (its measure and level), without a pool
    reporting: Any = _Reported(meas, lv)
    res = _comparison_result(reporting, outcome, acq, sample, stopped, looks.terms(at, draws, y))
    return reported(res, stop)


def _planned(
    pool: DaskPool, meas: Measure, method: str, floor: float, mix: float, given: tuple[Any, ...]
) -> tuple[float, float, int, np.random.Generator, _Prepared]:
    """The campaign's budget, level, draw cap and random state, checked as the NumPy path
    checks them, and its plan of q (:func:`_prepare`). ``given``: budget, level, oracle,
    max_draws, random_state as passed. With costs, the budget and the cap are checked after
    the passes that find the cheapest and mean cost (the level and the oracle before)."""
    budget, level, oracle, max_draws, random_state = given
    passive = method == "passive"
    if not pool.costed:
        _, b, lv, cap = _fixed_setup(pool.m, None, None, budget, level, oracle, max_draws)
        rng = check_random_state(random_state)
        return b, lv, cap, rng, _prepare(pool, meas, passive, floor, mix, False)
    budget_number(budget)  # what needs no costs is checked before the passes
    check_level(level)
    _check_oracle(oracle)
    rng = check_random_state(random_state)
    prep = _prepare(pool, meas, passive, floor, mix, method == "active")  # uniC: q ignores λ
    _, b, lv, cap = _fixed_setup(pool.m, None, cast(Any, prep.costs), budget, level, oracle,
                                 max_draws)  # fmt: skip
    return b, lv, cap, rng, prep


class _Looks:
    """A Dask campaign's stopping rule and anytime-valid sequences from its pool summary and
    the drawn rows (:class:`~activeeval.estimators.report.SummaryPool`), as the NumPy path's
    :class:`~.steps._Look` and ``LazyTerms`` give them from the pool: the horizon (the budget
    in labels), the target-width rule's window, each draw's q as drawn. Under a rule the
    summary keeps its σ₀ grid, computed once for every look."""

    def __init__(
        self, stop: StoppingRule | None, meas: Measure, level: float, b: float, pool: DaskPool,
        prep: _Prepared, sampler: _DaskSampler, acq: _DaskAcquisition, estimator: str,
    ) -> None:  # fmt: skip
        self.stop, self.meas, self.level, self.pool, self.prep = stop, meas, level, pool, prep
        self.estimator = estimator
        self.sampler, self.acq = sampler, acq
        self.horizon = horizon_of(b, None if prep.costs is None else prep.costs.draw_cost)
        self.summary, self.window = prep.summary, None
        if stop is not None:  # σ₀ of the estimator's sequences, once for every look
            s = self.summary = with_sigma0(meas, prep.summary, estimator)
            spool = SummaryPool([AtRows(x, s.keep, pool.m) for x in _samples(s)], s, meas)
            self.window = window_draws(stop, spool, self._reporting(spool), self.horizon)

    def _reporting(self, spool: SummaryPool) -> Any:
        return spool.reporting(np.empty(0), self.level, self.estimator)

    def __call__(self, draws: NDArray[np.intp]) -> str | None:
        assert self.stop is not None
        units = np.unique(draws)
        s = self.summary
        if not _time_served(self.prep, self.estimator, units):
            s = replace(_with_time(self.pool, self.prep), sigma0=s.sigma0,
                        sigma0_estimator=s.sigma0_estimator)  # fmt: skip
        spool = SummaryPool(self.sampler.models_at(units), s, self.meas)
        y = self.acq.book.lookup(draws)
        return rule_met(self.stop, spool, self._reporting(spool), draws, y, self.horizon,
                        self.acq.draw_q, self.window)  # fmt: skip

    def terms(self, at: list[AtRows], draws: NDArray[np.intp], y: NDArray[Any]) -> LazyTerms:
        """The result's anytime-valid sequences' per-draw terms, computed when first asked."""
        spool = SummaryPool(at, self.summary, self.meas)
        return LazyTerms(spool, self._reporting(spool), draws, y, self.horizon,
                         self.acq.draw_q, window=self.window)  # fmt: skip


@dataclass(frozen=True)
class _Reported:
    """What a comparison's result reads of how it is reported."""

    measure: Measure
    level: float


def _refuse(refused: dict[str, Any]) -> None:
    """Refuse the options a Dask pool does not take yet, naming the first one given."""
    for name, value in refused.items():
        if value is not None and value is not False:
            raise UnknownOptionError(
                f"{name}: not supported on a Dask pool yet; evaluate the pool in NumPy "
                "(dask_array.compute()) for it, or drop the option. A Dask pool takes "
                "method 'active', 'active_uniC' or 'passive', either estimator, decisions "
                "(prediction=), labeling costs (costs=) and a uniform test distribution "
                "(docs/guide/dask.md)."
            )


# ----------------------------------------------------- t(n) beyond the summary's series
class _PoolTime(TimeSummary):
    """A :class:`TimeSummary` whose t(n) beyond the series runs Newton's iteration over the
    Dask pool's q (a pass per step, as :func:`~activeeval.sampling._time_to_reach`)."""

    pool: Any = None
    plan: Any = None

    def time(self, n: int, q: NDArray[np.float64] | None = None) -> float:
        if self.covers(n):
            return super().time(n)
        return _newton(self.pool, self.plan, float(n), positive=self.n_support < self.size)


def _time_served(prep: _Prepared, estimator: str, units: NDArray[np.intp]) -> bool:
    """Whether an estimate of the distinct labeled ``units`` needs no pass over the pool for
    t(n): within the summary's series, or by the thesis's estimator, which reads no t(n)."""
    return estimator != "assisted" or prep.summary.time.covers(int(units.shape[0]))


def _with_time(pool: DaskPool, prep: _Prepared) -> Any:
    """The summary whose t(n) reaches past its series over the Dask pool's q."""
    t = prep.summary.time
    time = _PoolTime(t.size, t.n_support, t.top, t.tau, t.sums)
    object.__setattr__(time, "pool", pool)
    object.__setattr__(time, "plan", prep.plan)
    return replace(prep.summary, time=time)


def _k_gap(
    blocks: Any, start: int, m: int, layouts: Any, names: Any, plan: _Plan, t: float,
    positive: bool,
) -> tuple[float, float]:  # fmt: skip
    """A block's Σ (e^(−q t) − 1) and Σ q e^(−q t), as :func:`~activeeval.sampling._time_to_reach`
    sums a chunk."""
    _, q = _block_q(blocks, start, m, layouts, names, plan)
    if positive:
        q = q[q > 0]
    em = np.expm1(-q * t)
    return float(em.sum()), dot(q, 1.0 + em)


def _newton(pool: DaskPool, plan: _Plan, total: float, positive: bool) -> float:
    """:func:`~activeeval.sampling._time_to_reach` (no prices) with its sums from the blocks,
    added in row order."""

    def sums(t: float) -> tuple[float, float]:
        gap, slope = total, 0.0
        for g, s in pool.map(_k_gap, plan, t, positive):
            gap += g
            slope += s
        return gap, slope

    return newton_time(total, total, sums)
