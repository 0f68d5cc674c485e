"""Anytime-valid intervals: confidence sequences over the draws, to stop when the answer is known.

Each draw of a campaign gives the terms (a, b, c, d) of the estimator's numerator,
denominator and the model's control variates, in their *predictable finite-pool* form; the
sequence is Ĝ_t ± σ̂_t·B_t with Robbins' normal-mixture boundary B_t, tuned at
``TUNE_SHARE`` of the horizon, an asymptotic confidence sequence by Waudby-Smith, Arbour,
Sinha, Kennedy & Ramdas (Thm 2.2). A one-sided bound is one end of the two-sided sequence
at the same level (:meth:`DrawTerms.sequence`). Guards for
the early looks: no interval before ``MIN_DRAWS`` draws, the logit (0/1 losses) or log scale
(non-negative unbounded losses), σ̂_t shrunk toward the largest σ₀ the model's plausible
tempered members imply (``PSEUDO_DRAWS`` pseudo-draws), and the running intersection.

The derivation, the guards' measured effect and the cost in width are on the *Anytime-valid
inference* page of the documentation (``docs/how-it-works/anytime.md``); the study that chose
this design is ``docs/design/anytime-valid.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from .._validation import check_level, check_option
from ..errors import ShapeError
from ..methods import ALTERNATIVES

__all__ = [
    "MIN_DRAWS",
    "PSEUDO_DRAWS",
    "DrawTerms",
    "boundary",
    "mixture_rho2",
]

#: Draws (and draws of positive weight, or on which compared models differ) before the
#: first interval of a sequence.
MIN_DRAWS = 30
#: σ₀ counts for this many draws in the shrunk σ̂_t (docs/how-it-works/anytime.md, guards).
PSEUDO_DRAWS = 100
#: The normal mixture is tuned at this share of the horizon (docs/how-it-works/anytime.md).
TUNE_SHARE = 0.2
#: The share of α a window boundary spends on its window (:func:`window_boundary`).
WINDOW_SHARE = 0.8
#: Above this many draws a sequence is evaluated on a grid of at most this many looks (all
#: the first ones, then evenly spaced) — a subset of the looks, so still time-uniform.
MAX_LOOKS = 4000


def mixture_rho2(horizon: float, level: float = 0.95) -> float:
    """ρ² of the normal-mixture boundary tightest at ``horizon`` draws, in closed form
    (Waudby-Smith et al. 2024, eq. for ρ*)."""
    alpha = 1.0 - check_level(level)
    if not (math.isfinite(horizon) and horizon >= 1):
        raise ShapeError(f"horizon: must be a number of draws >= 1, got {horizon!r}.")
    a = -2.0 * math.log(alpha)
    return (a + math.log(a + 1.0)) / horizon


def boundary(t: Any, rho2: float, level: float = 0.95) -> NDArray[np.float64]:
    """B_t, the multiplier of σ̂_t (half-width σ̂_t·B_t; the fixed-n Wald one is z/√t):
    Robbins' normal mixture at α = 1 − ``level`` (docs/how-it-works/anytime.md)."""
    alpha = 1.0 - check_level(level)
    tt = np.asarray(t, dtype=float)
    return np.sqrt(2 * (tt * rho2 + 1) / (tt * tt * rho2) * np.log(np.sqrt(tt * rho2 + 1) / alpha))


def window_boundary(
    t: Any, horizon: float, level: float, window: float | None = None
) -> NDArray[np.float64]:
    """The multiplier of σ̂_t: the normal mixture tuned at t* = :data:`TUNE_SHARE` ×
    ``horizon`` (the budget in draws) at α; with a
    ``window`` T, the smaller of two boundaries, each valid on its own, at α·(1 −
    :data:`WINDOW_SHARE`) (the mixture, every t) and α·:data:`WINDOW_SHARE` (for t ≤ T the
    constant z·√T on the sum: by the reflection principle P(max_{t≤T} |W_t| ≥ x) ≤
    4(1 − Φ(x/√T)) for a Brownian motion) — by the union bound both hold at once with
    probability ≥ 1 − α."""
    tt = np.asarray(t, dtype=float)
    alpha = 1.0 - level
    if window is None:
        t_star = max(TUNE_SHARE * horizon, float(MIN_DRAWS))
        return boundary(tt, mixture_rho2(t_star, level), level)
    a_mix = alpha * (1.0 - WINDOW_SHARE)
    lv_mix = 1.0 - a_mix
    mix = boundary(tt, mixture_rho2(window, lv_mix), lv_mix)
    z = float(special.ndtri(1.0 - alpha * WINDOW_SHARE / 4.0))
    with np.errstate(divide="ignore"):
        win = np.where(tt <= window, z * math.sqrt(window) / tt, np.inf)
    return np.minimum(mix, win)


@dataclass(frozen=True, eq=False)
class DrawTerms:
    """Per-draw terms of k models on one draw sequence, for their confidence sequences.

    ``z``: shape (n, 4k), per model the columns (a, b, c, d) of docs/how-it-works/anytime.md;
    ``tune``: λ tuned on the draws (model-assisted) or 0 (the thesis's estimator);
    ``positive``: per draw and model, whether the draw labels a new unit of positive weight
    (the start rule); ``raw``: per draw and model w·ℓ and w of a new unit (0 for a repeat),
    which tell where two models differ;
    ``sigma0``: per draw and model the σ₀ the sequence shrinks toward after that draw (NaN:
    no shrinkage; :meth:`~activeeval.estimators.report.Pool.draw_terms`); ``horizon``:
    t* in draws; ``logit``: the measure lies in [0, 1] with a 0/1 loss (logit scale);
    ``value_range``: the measure's range, the interval before the start rule holds.
    """

    z: NDArray[np.float64]
    tune: bool
    positive: NDArray[np.bool_]
    raw: NDArray[np.float64]
    sigma0: NDArray[np.float64]
    horizon: float
    logit: bool
    value_range: tuple[float, float] = (-math.inf, math.inf)
    #: T of the window boundary (:func:`window_boundary`), or None for the mixture alone.
    window: float | None = None
    #: (t₀, Δ): from draw t₀ on, every unit of the pool on which models 0 and 1 decide
    #: differently is labeled, so their difference of a mean of per-instance losses is Δ
    #: exactly (the units where they agree add nothing to it); None where not reached or not
    #: known (:meth:`~activeeval.estimators.report.Pool.draw_terms`).
    exact: tuple[int, float] | None = None

    @property
    def log_scale(self) -> bool:
        """A mean of non-negative losses with no upper bound (squared, absolute error): its
        sequence is built on the log scale (docs/how-it-works/anytime.md, guards)."""
        return not self.logit and self.value_range == (0.0, math.inf)

    @property
    def n(self) -> int:
        return int(self.z.shape[0])

    @property
    def k(self) -> int:
        return int(self.z.shape[1] // 4)

    def looks(self) -> NDArray[np.int64]:
        """The numbers of draws t at which the sequence is evaluated: every t up to
        :data:`MAX_LOOKS`, beyond that an even grid ending at n."""
        if self.n <= MAX_LOOKS:
            return np.arange(1, self.n + 1)
        head = np.arange(1, MAX_LOOKS // 2 + 1)
        tail = np.linspace(MAX_LOOKS // 2 + 1, self.n, MAX_LOOKS - head.size).round()
        return np.unique(np.concatenate([head, tail.astype(np.int64)]))

    def sequence(
        self,
        model: int | tuple[int, int],
        level: float = 0.95,
        alternative: str = "two-sided",
        *,
        intersect: bool = True,
        upto: int | None = None,
    ) -> dict[str, NDArray[Any]]:
        """The CS of model ``model``'s value, or of the difference G_i − G_j for a pair
        ``(i, j)``, at every look up to ``upto`` draws (default all): arrays ``t``,
        ``estimate``, ``lower``, ``upper``, ``started``.

        A one-sided bound (``"less"``: the upper end; ``"greater"``: the lower) is that end
        of the two-sided sequence at the same level, running intersection included (and its
        fallback to the look's own C_t where the intersection is empty), not from the
        half-normal mixture at α, which is exactly level α for a Brownian motion (the
        two-sided end is 8–10% wider, 13% inside a target-width window): the guarantee here
        is asymptotic, and its finite-sample error is first order in the terms' skewness on
        one side (Edgeworth: O(t^-1/2) one-sided, O(t^-1) two-sided). Where an overconfident
        model's rare confident errors skew the terms, the half-normal upper bound passed a
        gate set at the true value in 7.7% of runs (digits 3 vs rest, error rate) while the
        two-sided sequence covered 0.950; one end of it errs at most as often as it misses
        (docs/how-it-works/anytime.md)."""
        lv = check_level(level)
        alternative = check_option(alternative, ALTERNATIVES, "alternative")
        n = self.n if upto is None else int(upto)
        t = self.looks()
        t = t[t <= n]
        pair = isinstance(model, tuple)
        cols: list[int] = [int(j) for j in model] if isinstance(model, tuple) else [int(model)]
        mom = _cumulative(self.z, [4 * j + r for j in cols for r in range(4)], t)
        g, s2 = _path(mom, t, len(cols), self.tune)
        est = g[:, 0] - g[:, 1] if pair else g[:, 0]
        if pair:  # no σ₀ for a difference: the start rule on differing units guards it
            pos = self._differs(cols[0], cols[1])
            sig0 = np.full(t.shape, np.nan)
        else:
            pos = self.positive[:, cols[0]]
            sig0 = self.sigma0[t - 1, cols[0]]
        npos = np.cumsum(pos)[t - 1]
        shrink = np.isfinite(sig0) & (sig0 > 0)
        if np.any(shrink):
            s2 = np.where(shrink, _shrunk(s2, t, sig0), s2)
        half = np.sqrt(s2) * window_boundary(t, self.horizon, lv, self.window)
        lo_r, hi_r = self._difference_range() if pair else self.value_range
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if self.logit and not pair:
                gi = np.clip(est, 1e-12, 1 - 1e-12)
                h = half / (gi * (1 - gi))
                lg = special.logit(gi)
                lo, hi = special.expit(lg - h), special.expit(lg + h)
            elif self.log_scale and not pair:
                # a mean of non-negative losses (est > 0): the log scale, delta method
                h = half / np.where(est > 0, est, np.nan)
                lo = np.where(est > 0, est * np.exp(-h), est - half)
                hi = np.where(est > 0, est * np.exp(h), est + half)
            else:
                lo, hi = est - half, est + half
        started = (t >= MIN_DRAWS) & (npos >= MIN_DRAWS) & np.isfinite(est) & np.isfinite(half)
        lo = np.where(started, np.maximum(lo, lo_r), lo_r)
        hi = np.where(started, np.minimum(hi, hi_r), hi_r)
        known = self._known(cols) if pair else None
        if known is not None:  # the difference is exact from t₀ on: a point, which covers
            at = t >= known[0]
            est, lo, hi = (np.where(at, known[1], a) for a in (est, lo, hi))
            started = started | at
        if intersect:
            run_lo, run_hi = np.maximum.accumulate(lo), np.minimum.accumulate(hi)
            # An empty intersection means the sequence missed at some look (probability
            # ≤ α): report that look's own C_t rather than an empty or a made-up interval.
            empty = run_lo > run_hi
            lo, hi = np.where(empty, lo, run_lo), np.where(empty, hi, run_hi)
        if alternative == "less":  # the two-sided sequence's upper end, as reported
            lo = np.full(t.shape, lo_r)
        elif alternative == "greater":
            hi = np.full(t.shape, hi_r)
        return {"t": t, "estimate": est, "lower": lo, "upper": hi, "started": started}

    def interval(
        self,
        model: int | tuple[int, int],
        level: float = 0.95,
        alternative: str = "two-sided",
        upto: int | None = None,
        include: float | None = None,
    ) -> tuple[float, float]:
        """The running intersection of the CS at the last look (``upto`` draws); with
        ``include`` (the reported estimate, which is not the sequence's centre), widened to
        it as far as that look's own C_t reaches. Any interval between the intersection and
        C_t covers whenever the sequence does (both do exactly when every C_s covers), so
        the widening keeps the guarantee; it only keeps a reported estimate from lying
        outside its own interval (a review found −0.048 reported with [−0.042, −0.015])."""
        seq = self.sequence(model, level, alternative, upto=upto)
        if seq["t"].size == 0:
            lo_r, hi_r = self._difference_range() if isinstance(model, tuple) else self.value_range
            return float(lo_r), float(hi_r)
        lo, hi = float(seq["lower"][-1]), float(seq["upper"][-1])
        if include is None or not math.isfinite(include) or lo <= include <= hi:
            return lo, hi
        raw = self.sequence(model, level, alternative, intersect=False, upto=upto)
        raw_lo, raw_hi = float(raw["lower"][-1]), float(raw["upper"][-1])
        return min(lo, max(include, raw_lo)), max(hi, min(include, raw_hi))

    def p_value(
        self,
        pair: tuple[int, int],
        null: float,
        alternative: str = "two-sided",
        first: float | None = None,
    ) -> float:
        """The anytime-valid p-value of G_i − G_j = ``null`` for ``pair`` = (i, j): the
        smallest α at which the sequence at level 1 − α excludes ``null`` at some look, with
        each look's own C_t (not the running intersection, whose empty-set fallback and the
        reported interval's widening are not nested in α). Each C_t shrinks as α grows, so
        "some look excludes ``null``" is monotone in α and bisection on log α finds its
        edge; valid because p ≤ α only if some C_t(α) missed, which happens with
        probability ≤ α. Floored at 10⁻¹²; the centre and σ̂_t do not depend on α, so they
        are computed once and each step evaluates only the boundary. ``first``: an α tried
        before the bisection (the reported level's), so that p ≤ ``first`` exactly when the
        sequence at 1 − ``first`` excludes ``null``. NaN before any draw."""
        alternative = check_option(alternative, ALTERNATIVES, "alternative")
        t = self.looks()
        if t.size == 0:
            return math.nan
        cols = [int(pair[0]), int(pair[1])]
        mom = _cumulative(self.z, [4 * j + r for j in cols for r in range(4)], t)
        g, s2 = _path(mom, t, 2, self.tune)
        est = g[:, 0] - g[:, 1]
        npos = np.cumsum(self._differs(cols[0], cols[1]))[t - 1]
        sd = np.sqrt(s2)
        lo_r, hi_r = self._difference_range()
        if not lo_r <= null <= hi_r:  # outside the values a difference can take
            return _certain(null < lo_r, null > hi_r, alternative)
        known = self._known(cols)
        if known is not None and known[0] <= int(t[-1]):
            # Δ is known: 10⁻¹² where h₁ holds, 1 where it does not (whatever an earlier look
            # said), as a census's comparison answers (ComparisonResult.test)
            return _certain(known[1] > null, known[1] < null, alternative)
        if alternative == "two-sided":
            gap = np.abs(est - null)
        elif alternative == "less":  # h1: Δ < null; the upper bound excludes it
            gap = null - est
        else:
            gap = est - null
        with np.errstate(invalid="ignore"):
            live = (t >= MIN_DRAWS) & (npos >= MIN_DRAWS) & np.isfinite(est) & (gap > 0)
        if not live.any():
            return 1.0
        t, sd, gap = t[live], sd[live], gap[live]

        def excludes(alpha: float) -> bool:
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                half = sd * window_boundary(t, self.horizon, 1.0 - alpha, self.window)
            return bool(np.any(half < gap))

        low, high = 1e-12, 0.999
        if excludes(low):
            return low
        if not excludes(high):
            return 1.0
        if first is not None and low < first < high:
            if excludes(first):
                high = first
            else:
                low = first
        while high / low > 1.0001:  # low: no look excludes null; high: some look does
            mid = math.sqrt(low * high)
            if excludes(mid):
                high = mid
            else:
                low = mid
        return high

    def only(self, model: int) -> DrawTerms:
        """The terms of model ``model`` alone (one model of a comparison's draws)."""
        return DrawTerms(
            self.z[:, 4 * model : 4 * model + 4], self.tune, self.positive[:, model : model + 1],
            self.raw[:, 2 * model : 2 * model + 2], self.sigma0[:, model : model + 1],
            self.horizon, self.logit, self.value_range, self.window,
        )  # fmt: skip

    def estimates(self) -> NDArray[np.float64]:
        """Each model's estimate Ĝ_n(λ̂_n) from the terms after the last draw (the centre of
        its sequence)."""
        t = np.array([self.n])
        out = np.full(self.k, math.nan)
        if self.n == 0:
            return out
        for j in range(self.k):
            mom = _cumulative(self.z, list(range(4 * j, 4 * j + 4)), t)
            out[j] = _path(mom, t, 1, self.tune)[0][0, 0]
        return out

    def order(self, greater_is_better: bool) -> list[int]:
        """The models from best to worst by :meth:`estimates` (NaN last); two models whose
        difference is known (:attr:`exact`) by its sign, which their centres can contradict."""
        if self.k == 2 and self.exact is not None and self.exact[1] != 0.0:
            return [0, 1] if (self.exact[1] > 0.0) == greater_is_better else [1, 0]
        g = self.estimates()
        key = -g if greater_is_better else g
        return [int(j) for j in np.argsort(np.nan_to_num(key, nan=np.inf), kind="stable")]

    def _known(self, cols: list[int]) -> tuple[int, float] | None:
        """:attr:`exact` for the difference G_i − G_j of ``cols`` = [i, j] (its sign for
        [1, 0]); None for another pair or where not known."""
        if self.exact is None or sorted(cols) != [0, 1]:
            return None
        t0, delta = self.exact
        return t0, (delta if cols == [0, 1] else -delta)

    def _differs(self, i: int, j: int) -> NDArray[np.bool_]:
        ri, rj = self.raw[:, 2 * i : 2 * i + 2], self.raw[:, 2 * j : 2 * j + 2]
        return np.any(ri != rj, axis=1)

    def _difference_range(self) -> tuple[float, float]:
        lo, hi = self.value_range
        return lo - hi, hi - lo


def _certain(above: bool, below: bool, alternative: str) -> float:
    """The p-value where the difference is known to lie ``above`` the null (or ``below``
    it; neither: equal to it): 10⁻¹² where h₁ (``alternative``, of Δ against the null)
    holds, 1 where it cannot."""
    if alternative == "two-sided":
        holds = above or below
    else:
        holds = below if alternative == "less" else above
    return 1e-12 if holds else 1.0


def _cumulative(
    z: NDArray[np.float64], cols: list[int], t: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Σ z and Σ z zᵀ over the first t draws, at every t of ``t`` (columns ``cols``); in
    chunks, so memory is a chunk × p², not n × p²."""
    zz = z[:, cols]
    p = zz.shape[1]
    sums = np.cumsum(zz, axis=0)[t - 1]
    out = np.empty((t.shape[0], p, p))
    run = np.zeros((p, p))
    chunk = max(1, 2_000_000 // (p * p))
    for start in range(0, zz.shape[0], chunk):
        block = zz[start : start + chunk]
        cum = np.cumsum(block[:, :, None] * block[:, None, :], axis=0) + run
        sel = (t > start) & (t <= start + block.shape[0])
        out[sel] = cum[t[sel] - 1 - start]
        run = cum[-1]
    return sums, out


def _path(
    mom: tuple[NDArray[np.float64], NDArray[np.float64]], t: NDArray[np.int64], k: int, tune: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per look: each of the k models' Ĝ_t(λ̂_t), and σ̂_t² of the estimate (k = 1) or of the
    difference (k = 2). λ̂_t minimizes Σ ψ², ψ linear in λ around the λ = 0 estimates, and
    is clipped to [0, 1] (one λ for a pair, tuned for the difference, as comparisons do)."""
    s, m = mom
    tt = t.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        g0 = np.stack([s[:, 4 * j] / s[:, 4 * j + 1] for j in range(k)], axis=1)
        lam = np.zeros(t.shape[0])
        if tune:
            f = np.zeros((t.shape[0], 4 * k))  # ψ⁰ coefficients
            h = np.zeros((t.shape[0], 4 * k))  # ψ¹ coefficients (∂ψ/∂λ)
            sign = [1.0, -1.0]
            for j in range(k):
                den = s[:, 4 * j + 1] / tt
                f[:, 4 * j] = sign[j] / den
                f[:, 4 * j + 1] = -sign[j] * g0[:, j] / den
                h[:, 4 * j + 2] = sign[j] / den
                h[:, 4 * j + 3] = -sign[j] * g0[:, j] / den
            fh = np.einsum("ti,tij,tj->t", f, m, h)
            hh = np.einsum("ti,tij,tj->t", h, m, h)
            lam = np.where(hh > 0, np.clip(-fh / hh, 0.0, 1.0), 0.0)
            lam = np.nan_to_num(lam)
        g = np.empty((t.shape[0], k))
        e = np.zeros((t.shape[0], 4 * k))
        for j in range(k):
            num = s[:, 4 * j] + lam * s[:, 4 * j + 2]
            den = s[:, 4 * j + 1] + lam * s[:, 4 * j + 3]
            g[:, j] = num / den
            scale = (1.0 if j == 0 else -1.0) / (den / tt)
            e[:, 4 * j] = scale
            e[:, 4 * j + 1] = -scale * g[:, j]
            e[:, 4 * j + 2] = scale * lam
            e[:, 4 * j + 3] = -scale * g[:, j] * lam
        ss = np.maximum(np.einsum("ti,tij,tj->t", e, m, e), 0.0)
    return g, ss / tt


def _shrunk(s2: Any, t: Any, sig0: Any) -> Any:
    """σ̂_t² shrunk toward σ₀² as if σ₀ counted for :data:`PSEUDO_DRAWS` draws."""
    return (t * s2 + PSEUDO_DRAWS * sig0**2) / (t + PSEUDO_DRAWS)
