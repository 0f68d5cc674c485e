"""Benchmark-only adapters for the peer libraries run side by side with activeeval.

Peers (never runtime dependencies of activeeval; installed only for the benchmarks):

* ``oasis`` 0.1.3 -- Marchant & Rubinstein (VLDB 2017), "In search of an entity resolution
  OASIS: optimal asymptotic sequential importance sampling".  Provides ``OASISSampler``
  (adaptive, stratified importance sampling for the weighted F-measure), ``ImportanceSampler``
  (Sawade et al. 2010, static importance sampling), ``DruckSampler`` (Druck & McCallum 2011,
  proportional stratified sampling) and ``PassiveSampler`` (uniform sampling).
* ``ppi-python`` (module ``ppi_py``) -- prediction-powered inference, PPI++ (Angelopoulos,
  Duchi & Zrnic 2023).

Install (benchmark-only)::

    pip install numpy scipy scikit-learn
    pip install --no-deps oasis==0.1.3     # its metadata requires the obsolete `sklearn`
    pip install ppi-python

oasis 0.1.3 needs shims to import and run under current numpy/scipy; they are applied here,
in the harness only, before ``import oasis``:

* ``scipy.percentile`` / ``scipy.ptp`` (removed from scipy) are aliased to numpy's; these are
  the only removed scipy aliases oasis uses (``oasis/stratification.py``).
* ``oasis/__init__.py`` imports ``oasis.experiments``, which does ``import tables``
  (PyTables, only used by its HDF5 experiment writer that we never call).  If PyTables is not
  installed, a temporary empty stand-in module is placed in ``sys.modules`` just for the
  import and removed afterwards, so nothing else in the process sees it.
* ``oasis/input_verification.py`` calls ``warnings.warn`` without importing ``warnings``
  (hit when ``proba=True`` but scores fall outside [0, 1]); the module gets the missing name.

oasis draws from numpy's *global* random state (``np.random.choice``); the adapters seed it
per repetition and restore the caller's global state afterwards.

Importing this module never fails when the peers are absent; use :func:`oasis_available`
and :func:`ppi_available`.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "OasisRun",
    "oasis_available",
    "oasis_import_error",
    "ppi_available",
    "ppi_import_error",
    "run_oasis",
    "run_oasis_with_info",
    "run_ppi_mean",
]

SAMPLERS = ("oasis", "sawade_is", "passive", "druck")

# --------------------------------------------------------------------------------------
# Importing the peers (with the oasis compatibility shims)
# --------------------------------------------------------------------------------------

_oasis: Any = None
_oasis_error: str | None = None
_ppi: Any = None
_ppi_error: str | None = None


def _import_oasis() -> None:
    global _oasis, _oasis_error
    try:
        import scipy

        # Removed scipy re-exports of numpy functions that oasis 0.1.3 still calls.
        for name in ("percentile", "ptp"):
            if not hasattr(scipy, name):
                setattr(scipy, name, getattr(np, name))

        stub_tables = False
        if "tables" not in sys.modules:
            try:
                import tables  # noqa: F401  (real PyTables, if installed)
            except ImportError:
                stand_in = types.ModuleType("tables")
                stand_in.__doc__ = "stand-in inserted by benchmarks/peers.py for `import oasis`"
                sys.modules["tables"] = stand_in
                stub_tables = True
        try:
            import oasis
        finally:
            if stub_tables:
                sys.modules.pop("tables", None)

        import oasis.input_verification as iv

        if not hasattr(iv, "warnings"):
            iv.warnings = warnings
        _oasis = oasis
    except Exception as exc:  # ImportError, or anything the old package trips over
        _oasis = None
        _oasis_error = f"{type(exc).__name__}: {exc}"


def _import_ppi() -> None:
    global _ppi, _ppi_error
    try:
        import ppi_py

        _ppi = ppi_py
    except Exception as exc:
        _ppi = None
        _ppi_error = f"{type(exc).__name__}: {exc}"


# A peer's import installed a process-wide "ignore every warning" filter (measured: after
# `import peers` warnings.filters began with ('ignore', None, Warning)), which silenced
# activeeval's own warnings — and a test's warnings-as-errors — for the rest of the process.
# The imports keep their filters to themselves.
with warnings.catch_warnings():
    _import_oasis()
    _import_ppi()


def oasis_available() -> bool:
    """True when ``oasis`` (0.1.3) imported successfully with the shims applied."""
    return _oasis is not None


def oasis_import_error() -> str | None:
    """Why ``oasis`` could not be imported (None when it was)."""
    return _oasis_error


def ppi_available() -> bool:
    """True when ``ppi_py`` (package ``ppi-python``) imported successfully."""
    return _ppi is not None


def ppi_import_error() -> str | None:
    """Why ``ppi_py`` could not be imported (None when it was)."""
    return _ppi_error


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def _budgets(budgets: int | Sequence[int] | ArrayLike) -> NDArray[np.intp]:
    b = np.atleast_1d(np.asarray(budgets))
    if b.ndim != 1 or b.size == 0:
        raise ValueError("budgets must be a non-empty 1-d sequence of integers")
    if not np.all(np.equal(np.mod(b, 1), 0)):
        raise ValueError("budgets must be integers")
    b = b.astype(np.intp)
    if np.any(b < 1):
        raise ValueError("budgets must be >= 1")
    return b


@contextlib.contextmanager
def _global_numpy_seed(entropy: Sequence[int]) -> Any:
    """Seed numpy's legacy global RandomState (used by oasis) and restore it afterwards."""
    state = np.random.get_state()  # noqa: NPY002 (oasis uses the legacy global RNG)
    np.random.seed(list(entropy))  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


# --------------------------------------------------------------------------------------
# oasis
# --------------------------------------------------------------------------------------


@dataclass
class OasisRun:
    """Estimates plus diagnostics from :func:`run_oasis_with_info`.

    ``estimates[r, j]``: the sampler's F_alpha estimate right after its ``budgets[j]``-th
    distinct label (oracle query) in repetition ``r`` (NaN if undefined, e.g. 0/0, or if the
    iteration cap was hit first).  ``iterations[r]``: sampler iterations used to reach the
    largest budget (>= distinct labels when sampling with replacement).  ``cpu_seconds[r]``:
    process CPU time of repetition ``r`` (construction + sampling; CPU rather than wall time
    so that it is not inflated by other load on a shared machine).
    """

    sampler: str
    budgets: NDArray[np.intp]
    estimates: NDArray[np.float64]
    iterations: NDArray[np.int64]
    cpu_seconds: NDArray[np.float64]
    n_strata: int | None
    exhausted: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))


def _check_binary(a: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-d")
    if not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must contain only 0/1")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _make_strata(
    scores: NDArray[np.float64], n_strata: int | str, n_bins: int | str, min_size: int = 1
) -> Any:
    """Score-based 'cum_sqrt_F' stratification (oasis's default method), built once per call.

    ``n_strata`` is a goal: oasis drops empty strata, so the realised count can be lower.
    With ``'auto'`` oasis picks counts by the Freedman-Diaconis rule and prints them; that
    chatter is swallowed.  Strata smaller than ``min_size`` are merged into their neighbour
    on the score axis (DruckSampler labels 2 items per stratum up front, so without
    replacement it needs ``min_size=2``; oasis leaves such strata in place and then crashes).
    """
    assert _oasis is not None
    if n_bins == "auto" and n_strata != "auto":
        # enough score bins to place the strata boundaries finely
        n_bins = int(max(10 * int(n_strata), 100))
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strata = _oasis.stratify_by_scores(scores, n_strata, method="cum_sqrt_F", n_bins=n_bins)
    if min_size <= 1 or strata.sizes_.min() >= min_size:
        return strata
    # Strata from stratify_by_scores are ordered by score; merge small ones into a neighbour.
    groups = [np.asarray(ids) for ids in strata.allocations_]
    while len(groups) > 1 and min(g.size for g in groups) < min_size:
        k = min(range(len(groups)), key=lambda i: groups[i].size)
        j = k - 1 if k > 0 else 1
        if 0 < k < len(groups) - 1 and groups[k + 1].size < groups[k - 1].size:
            j = k + 1
        groups[min(j, k)] = np.concatenate([groups[j], groups[k]])
        del groups[max(j, k)]
    alloc = np.empty(scores.size, dtype=np.int64)
    for i, g in enumerate(groups):
        alloc[g] = i
    return _oasis.Strata(alloc)


@dataclass(frozen=True)
class _OasisConfig:
    sampler: str
    alpha: float
    proba: bool
    epsilon: float
    prior_strength: float | None
    replace: bool
    max_iter: int
    seed: int
    on_cap: str


def run_oasis_with_info(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    scores: ArrayLike,
    budgets: int | Sequence[int] | ArrayLike,
    n_reps: int,
    *,
    alpha: float = 0.5,
    proba: bool = True,
    epsilon: float = 1e-3,
    n_strata: int | str = 30,
    n_bins: int | str = "auto",
    prior_strength: float | None = None,
    replace: bool | None = None,
    max_iter: int | None = None,
    seed: int = 0,
    sampler: str = "oasis",
    on_cap: str = "nan",
    n_jobs: int = 1,
) -> OasisRun:
    """Run one of oasis's samplers ``n_reps`` times; see :func:`run_oasis`."""
    if _oasis is None:
        raise RuntimeError(f"oasis is not available: {_oasis_error}")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    yt = _check_binary(y_true, "y_true")
    yp = _check_binary(y_pred, "y_pred")
    sc = np.ascontiguousarray(np.asarray(scores, dtype=np.float64))
    n = yt.size
    if yp.size != n or sc.shape != (n,):
        raise ValueError("y_true, y_pred and scores must have the same length")
    if not np.all(np.isfinite(sc)):
        raise ValueError("scores must be finite")
    b = _budgets(budgets)
    b_max = int(b.max())
    if b_max > n:
        raise ValueError(f"largest budget {b_max} exceeds the pool size {n}")
    if n_reps < 1:
        raise ValueError("n_reps must be >= 1")
    if on_cap not in ("nan", "last"):
        raise ValueError("on_cap must be 'nan' or 'last'")

    # Sampling with replacement is intrinsic to OASIS and Sawade IS (oasis hard-codes it);
    # passive and Druck default here to *without* replacement so every iteration is a new label.
    if replace is None:
        replace = sampler in ("oasis", "sawade_is")
    if sampler in ("oasis", "sawade_is") and not replace:
        raise ValueError(f"oasis's {sampler} sampler only samples with replacement")
    if max_iter is None:
        # Iteration cap (oasis pre-allocates its history arrays to max_iter).  Re-draws of
        # already-labelled items are free but still iterations; near-exhaustive budgets with a
        # concentrated instrumental distribution can need many of them.
        max_iter = n if not replace else max(20 * b_max, 2 * n)
    strata = None
    n_strata_real: int | None = None
    if sampler in ("oasis", "druck"):
        min_size = 2 if (sampler == "druck" and not replace) else 1
        strata = _make_strata(sc, n_strata, n_bins, min_size=min_size)
        n_strata_real = int(strata.n_strata_)

    cfg = _OasisConfig(
        sampler=sampler,
        alpha=float(alpha),
        proba=bool(proba),
        epsilon=float(epsilon),
        prior_strength=prior_strength,
        replace=bool(replace),
        max_iter=int(max_iter),
        seed=int(seed),
        on_cap=on_cap,
    )
    n_jobs = max(1, min(int(n_jobs), n_reps))
    order = np.arange(n_reps)
    if n_jobs == 1:
        parts = [_oasis_reps(yt, yp, sc, b, range(n_reps), cfg, strata)]
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        chunks = [range(i, n_reps, n_jobs) for i in range(n_jobs)]
        with ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("fork")) as ex:
            futs = [ex.submit(_oasis_reps, yt, yp, sc, b, c, cfg, strata) for c in chunks]
            parts = [f.result() for f in futs]
        order = np.concatenate([np.asarray(c) for c in chunks])
    est = np.concatenate([p[0] for p in parts])
    iters = np.concatenate([p[1] for p in parts])
    secs = np.concatenate([p[2] for p in parts])
    exhausted = np.concatenate([p[3] for p in parts])
    inv = np.argsort(order)  # back to repetition order
    est, iters, secs, exhausted = est[inv], iters[inv], secs[inv], exhausted[inv]
    return OasisRun(
        sampler=sampler,
        budgets=b,
        estimates=est,
        iterations=iters,
        cpu_seconds=secs,
        n_strata=n_strata_real,
        exhausted=exhausted,
    )


def _oasis_reps(
    yt: NDArray[np.int64],
    yp: NDArray[np.int64],
    sc: NDArray[np.float64],
    b: NDArray[np.intp],
    reps: range,
    cfg: _OasisConfig,
    strata: Any,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Run the repetitions ``reps`` (module-level so that worker processes can run it)."""
    assert _oasis is not None
    # oasis passes predictions/scores through np.array(..., copy=False): hand it ndarrays with
    # the final dtype so numpy 2 never needs a copy.  Column vectors = one classifier.
    preds2 = yp.reshape(-1, 1)
    scores2 = sc.reshape(-1, 1)
    b_max = int(b.max())

    def oracle(idx: Any) -> int:
        return int(yt[idx])

    m = len(reps)
    est = np.full((m, b.size), np.nan)
    iters = np.zeros(m, dtype=np.int64)
    secs = np.zeros(m)
    exhausted = np.zeros(m, dtype=bool)
    for i, r in enumerate(reps):
        t0 = time.process_time()
        with (
            _global_numpy_seed([cfg.seed, r, SAMPLERS.index(cfg.sampler)]),
            warnings.catch_warnings(),
            np.errstate(divide="ignore", invalid="ignore"),
        ):
            warnings.simplefilter("ignore")
            if cfg.sampler == "oasis":
                smp = _oasis.OASISSampler(
                    cfg.alpha,
                    preds2,
                    scores2,
                    oracle,
                    proba=cfg.proba,
                    epsilon=cfg.epsilon,
                    prior_strength=cfg.prior_strength,
                    strata=strata,
                    max_iter=cfg.max_iter,
                )
            elif cfg.sampler == "sawade_is":
                smp = _oasis.ImportanceSampler(
                    cfg.alpha,
                    preds2,
                    scores2,
                    oracle,
                    proba=cfg.proba,
                    epsilon=cfg.epsilon,
                    max_iter=cfg.max_iter,
                )
            elif cfg.sampler == "druck":
                smp = _oasis.DruckSampler(
                    cfg.alpha,
                    preds2,
                    scores2,
                    oracle,
                    proba=cfg.proba,
                    strata=strata,
                    max_iter=cfg.max_iter,
                    replace=cfg.replace,
                )
            else:
                smp = _oasis.PassiveSampler(
                    cfg.alpha, preds2, oracle, max_iter=cfg.max_iter, replace=cfg.replace
                )
            # Druck labels 2 items per stratum inside its constructor; count those too.
            have = int(np.count_nonzero(~np.isnan(smp.cached_labels_)))
            if have < b_max:
                try:
                    smp.sample_distinct(b_max - have)
                except Exception as exc:  # oasis raises a bare Exception when max_iter is hit
                    if "max_iter" not in str(exc) and "No more space" not in str(exc):
                        raise
                    exhausted[i] = True
            # Estimate history restricted to iterations that queried the oracle: the estimate
            # right after the k-th distinct label sits at position k-1 -- the protocol of
            # oasis's own experiments.repeat_expt (estimate_[queried_oracle_]).
            hist = np.asarray(smp.estimate_, dtype=np.float64).reshape(-1)
            q = np.asarray(smp.queried_oracle_, dtype=bool).reshape(-1)
            per_label = hist[q]
            ok = b <= per_label.size
            est[i, ok] = per_label[b[ok] - 1]
            if exhausted[i] and cfg.on_cap == "last" and hist.size:
                est[i, ~ok] = hist[-1]
            iters[i] = int(smp.t_)
        secs[i] = time.process_time() - t0
    return est, iters, secs, exhausted


def run_oasis(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    scores: ArrayLike,
    budgets: int | Sequence[int] | ArrayLike,
    n_reps: int,
    *,
    alpha: float = 0.5,
    proba: bool = True,
    epsilon: float = 1e-3,
    n_strata: int | str = 30,
    n_bins: int | str = "auto",
    prior_strength: float | None = None,
    replace: bool | None = None,
    max_iter: int | None = None,
    seed: int = 0,
    sampler: str = "oasis",
    on_cap: str = "nan",
    n_jobs: int = 1,
) -> NDArray[np.float64]:
    """F_alpha estimates of an oasis sampler after exactly ``budget`` distinct labels.

    Parameters
    ----------
    y_true, y_pred : 0/1 arrays (n,)
        Ground truth (served by the oracle) and the classifier's predictions.
    scores : float array (n,)
        Classifier scores; with ``proba=True`` they are taken as P(y=1) in [0, 1], otherwise
        oasis squashes them with a logistic function scaled to the most extreme score.
    budgets : ints
        Numbers of distinct labels at which to read the estimate (any order; each <= n).
    n_reps : int
        Independent repetitions (fresh sampler each time, numpy global RNG seeded with
        ``(seed, rep, sampler)``).
    alpha : float
        oasis's weight: F_alpha = TP / (alpha (TP+FP) + (1-alpha)(TP+FN)); 0.5 is F1,
        1 is precision, 0 is recall.
    epsilon : float
        Epsilon-greedy mixing with the passive distribution (oasis and sawade_is only).
    n_strata, n_bins :
        Goal number of 'cum_sqrt_F' score strata (oasis and druck; realised count can be
        lower) and the histogram bins used to build them; ``'auto'`` = oasis's heuristics.
    prior_strength : float or None
        OASIS Beta prior strength; None = oasis default (2 * number of strata).
    replace : bool or None
        None = with replacement for oasis / sawade_is (their only mode), without for
        passive / druck.
    max_iter : int or None
        Iteration cap (distinct + repeated draws).  None = n for sampling without
        replacement, else max(20 * max(budgets), 2 * n).  OASIS costs ~0.2-0.25 ms per
        iteration, so hitting the default cap at budget 800 costs ~3-4 s per repetition.
    sampler : 'oasis' | 'sawade_is' | 'passive' | 'druck'
    on_cap : 'nan' | 'last'
        What to report for budgets not reached when the iteration cap is hit (possible only
        when sampling with replacement, for budgets close to the pool size with a
        concentrated instrumental distribution): NaN, or the estimate at the last iteration
        (which then rests on fewer than ``budget`` labels; see ``OasisRun.exhausted``).
    n_jobs : int
        Worker processes (fork) over which repetitions are split; results do not depend on
        it, since each repetition is seeded by its own index.

    Returns
    -------
    ndarray (n_reps, len(budgets))
        The estimate right after the sampler's ``budget``-th *distinct* oracle query, i.e.
        ``estimate_[queried_oracle_][budget - 1]`` -- the convention of oasis's own
        experiment runner.  Samplers that draw with replacement also take free re-draws of
        already-labelled items; those iterations are not counted (the estimate is read at
        the iteration that obtained the ``budget``-th new label, before further free
        re-draws).  NaN where the estimate is undefined (0/0, e.g. no predicted or true
        positive sampled yet; for druck every budget <= 2 x strata, its initialisation
        phase) or, with ``on_cap='nan'``, the iteration cap was hit before that budget.
    """
    return run_oasis_with_info(
        y_true,
        y_pred,
        scores,
        budgets,
        n_reps,
        alpha=alpha,
        proba=proba,
        epsilon=epsilon,
        n_strata=n_strata,
        n_bins=n_bins,
        prior_strength=prior_strength,
        replace=replace,
        max_iter=max_iter,
        seed=seed,
        sampler=sampler,
        on_cap=on_cap,
        n_jobs=n_jobs,
    ).estimates


# --------------------------------------------------------------------------------------
# ppi_py (PPI++)
# --------------------------------------------------------------------------------------


def run_ppi_mean(
    losses_true: ArrayLike,
    losses_pred: ArrayLike,
    budgets: int | Sequence[int] | ArrayLike,
    n_reps: int,
    seed: int = 0,
    weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """PPI++ estimates of the (weighted) mean loss over the pool.

    For each repetition a uniformly random permutation of the pool is drawn
    (``np.random.default_rng([seed, rep])``); for budget ``b`` its first ``b`` items are the
    labelled sample (a uniform sample without replacement; samples are nested across budgets,
    as in a sequential labelling campaign) and the other ``n - b`` items are the unlabelled
    set.  The estimate is ``ppi_py.ppi_mean_pointestimate(Y=losses_true[lab],
    Yhat=losses_pred[lab], Yhat_unlabeled=losses_pred[unlab], lam=None)``; ``lam=None`` makes
    ppi_py choose the power-tuning parameter lambda from the data (PPI++, clipped to [0, 1]).

    ``weights`` (optional, length n, >= 0): per-item weights defining a weighted mean target
    sum(w L) / sum(w); passed as ``w`` / ``w_unlabeled`` (ppi_py normalises each set's weights
    to mean 1).

    ``losses_pred`` is the model's own prediction of each item's loss (e.g. its expected loss
    under its predictive distribution).  Budgets must satisfy 2 <= b < n.  Returns an array
    of shape (n_reps, len(budgets)); NaN if ppi_py's lambda is undefined (constant losses_pred).
    """
    if _ppi is None:
        raise RuntimeError(f"ppi_py is not available: {_ppi_error}")
    y = np.asarray(losses_true, dtype=np.float64)
    yhat = np.asarray(losses_pred, dtype=np.float64)
    if y.ndim != 1 or yhat.shape != y.shape:
        raise ValueError("losses_true and losses_pred must be 1-d and of equal length")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(yhat))):
        raise ValueError("losses must be finite")
    n = y.size
    w = None
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != y.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite, non-negative and of length n")
    b = _budgets(budgets)
    if np.any(b < 2) or np.any(b >= n):
        raise ValueError(f"budgets must satisfy 2 <= b < n = {n}")
    if n_reps < 1:
        raise ValueError("n_reps must be >= 1")

    est = np.full((n_reps, b.size), np.nan)
    for r in range(n_reps):
        perm = np.random.default_rng([seed, r]).permutation(n)
        for j, bj in enumerate(b):
            lab, unlab = perm[:bj], perm[bj:]
            kw: dict[str, Any] = {}
            if w is not None:
                if w[lab].sum() <= 0 or w[unlab].sum() <= 0:
                    continue
                kw = {"w": w[lab], "w_unlabeled": w[unlab]}
            with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
                warnings.simplefilter("ignore")
                val = _ppi.ppi_mean_pointestimate(y[lab], yhat[lab], yhat[unlab], lam=None, **kw)
            est[r, j] = float(np.asarray(val).reshape(-1)[0])
    return est


def run_ppi_importance(
    losses_true: ArrayLike,
    losses_pred: ArrayLike,
    samples: Sequence[ArrayLike],
    importance: ArrayLike,
) -> NDArray[np.float64]:
    """PPI++ mean-loss estimates on given labelled samples drawn from a non-uniform q.

    ``samples`` are index arrays into the pool (draws with replacement, repeats included);
    ``importance`` is p/q per pool item up to a constant. For each sample the estimate is
    ``ppi_py.ppi_mean_pointestimate(Y=losses_true[s], Yhat=losses_pred[s],
    Yhat_unlabeled=losses_pred, lam=None, w=importance[s])``: the labelled mean is importance
    weighted (ppi_py normalises ``w`` to mean one, a self-normalised estimate), the whole pool
    is the unlabelled set, and ppi_py tunes lambda (PPI++). This is prediction-powered
    inference with active sampling in the sense of Zrnic & Candès (2024), on the same draws
    as the estimator it is compared with. Returns one estimate per sample (NaN if undefined).
    """
    if _ppi is None:
        raise RuntimeError(f"ppi_py is not available: {_ppi_error}")
    y = np.asarray(losses_true, dtype=np.float64)
    yhat = np.asarray(losses_pred, dtype=np.float64)
    imp = np.asarray(importance, dtype=np.float64)
    if y.ndim != 1 or yhat.shape != y.shape or imp.shape != y.shape:
        raise ValueError("losses_true, losses_pred and importance must be 1-d of equal length")
    out = np.full(len(samples), np.nan)
    for i, s in enumerate(samples):
        idx = np.asarray(s, dtype=np.intp)
        if idx.size < 2:
            continue
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")
            val = _ppi.ppi_mean_pointestimate(y[idx], yhat[idx], yhat, lam=None, w=imp[idx])
        out[i] = float(np.asarray(val).reshape(-1)[0])
    return out


def _main() -> None:  # pragma: no cover - manual timing helper
    """``python benchmarks/peers.py [n_pool] [budget] [n_reps]``: CPU time per repetition."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 800
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = np.random.default_rng(0)
    p = rng.beta(1.0, 4.0, size=n)
    y = (rng.random(n) < p).astype(np.int64)
    pred = (p > 0.5).astype(np.int64)
    print(f"pool {n}, budget {budget}, {reps} reps")
    print(f"oasis available: {oasis_available()}, ppi available: {ppi_available()}")
    if oasis_available():
        for s in SAMPLERS:
            info = run_oasis_with_info(y, pred, p, [budget], reps, sampler=s)
            print(
                f"  {s:<9} {info.cpu_seconds.mean():7.3f} s/rep  "
                f"{info.iterations.mean():8.0f} iterations  capped {int(info.exhausted.sum())}"
            )
    if ppi_available():
        t0 = time.process_time()
        run_ppi_mean((y != pred).astype(float), np.where(pred == 1, 1 - p, p), [budget], reps)
        print(f"  ppi       {(time.process_time() - t0) / reps:7.4f} s/rep")


if __name__ == "__main__":
    _main()
