"""Anytime-valid intervals: confidence sequences over the draws, to stop when the answer is known.

Why. A fixed-n interval covers with probability ``level`` at *one* number of labels fixed in
advance. Looking after every batch and stopping when the interval is narrow enough, or when
a comparison looks decided, makes the stopping time depend on the data; repeated Wald
intervals then cover far less (0.52–0.62 when looking after every draw up to 1,000 on a
simulated pool; ``docs/design/anytime-valid.md``). A *confidence sequence* (CS) C_1, C_2, …
covers the target at every t at once with probability ≥ ``level``, so the interval at any
data-dependent stopping time covers too.

The estimators as ratios of per-draw terms. Draws x_1, x_2, … from q, v_i = p(x_i)/q(x_i);
for one model with loss ℓ, weight w (eq. 3.27) and the model's m_N = E[wℓ | x], m_D = E[w | x]
with pool means μ_N, μ_D, every draw gives

    a_i = v_i w_i ℓ_i,  b_i = v_i w_i,  c_i = v_i (μ_N − m_N(x_i)),  d_i = v_i (μ_D − m_D(x_i)),

and Ĝ_t(λ) = Σ(a + λc)/Σ(b + λd) over the first t draws: λ = 0 is the thesis's
self-normalized estimator (eq. 3.31), λ ∈ [0, 1] the model-assisted estimator with the model
as its control variate (``assisted``: E c = E d = 0, so every λ targets G = N/D) in its
with-replacement form — every draw a term, which is what a time-uniform argument needs (the
Hájek finite-population form's weights change with every new label; it is not a running
mean; "Finite pools" below gives the terms the sequence uses).
With ψ_i = (X_i − G Y_i)/D, X = a + λc, Y = b + λd, Ĝ_t − G = ψ̄_t + O(log log t / t) a.s.
(a ratio's remainder, by the law of the iterated logarithm), and the sandwich
σ̂_t² = t Σ(X − Ĝ_t Y)²/(ΣY)² (Lemma 3.4's, every draw a row) → Var ψ a.s.; λ̂_t, the
variance-minimizing coefficient on the first t draws clipped to [0, 1] as the estimator clips
it, converges at the LIL rate and moves Ĝ_t by O(log log t / t). Hence (Waudby-Smith, Arbour,
Sinha, Kennedy & Ramdas, *Time-uniform central limit theory and asymptotic confidence
sequences*, Thm 2.2) Ĝ_t ± σ̂_t B_t is an asymptotic CS for G, with Robbins' normal-mixture
boundary

    B_t = sqrt(2 (t ρ² + 1) / (t² ρ²) · log(sqrt(t ρ² + 1) / α)),
    ρ² = (−2 log α + log(−2 log α + 1)) / t*,

tightest at t = t*, fixed before the first look: :data:`TUNE_SHARE` of the *horizon* (the
budget in draws). A boundary tuned early costs little late and much less than the reverse
(the design note's measurement, the multiplier ÷ Wald's at t = 100 / 1,000 draws: t* = 100
1.55 / 1.65, t* = 300 1.62 / 1.59, t* = 1,000 1.97 / 1.55), and decisions and claims are
settled early when they are clear (``docs/results/sequential.md`` compares t* at a fifth of
the budget with t* at the budget).
One-sided bounds use the half-normal mixture at α — 2/sqrt(1 + ρ²t)·exp(ρ²S²/(2(1 + ρ²t)))·
Φ(ρS/sqrt(1 + ρ²t)) = 1/α solved for S, B_t = S/t — which Ville's inequality makes exactly
level α for a Brownian motion (not the end of the two-sided sequence at 2α). Differences of
models on the same draws, Δ = G_0 − G_1, have the i.i.d. terms ψ⁰ − ψ¹ and the same CS.
Under batch-adaptive q the terms are martingale differences with changing variance; the
same formula is then the design note's pooled-variance form, measured, not a theorem.

The guarantee is asymptotic in the first look: the early looks, where users stop, need
guards. On by default (the design note's simulation: 0.961–0.986 time-uniform coverage in
every cell with them, 0.60 for F1 without any):

* no interval before :data:`MIN_DRAWS` draws and :data:`MIN_DRAWS` draws of positive weight
  (an F-measure's units) or, for a difference, draws on which the models' terms differ;
  before then the whole range of the measure;
* for a measure in [0, 1] with a 0/1 loss the interval is built on the logit scale (delta
  method, as :func:`~.inference.logit_interval`), which keeps its long tail on the side
  where few errors have been seen; a mean of non-negative, unbounded losses (squared or
  absolute error) on the log scale, for the same reason: its rare large losses make the
  estimate right-skewed, low exactly when its σ̂ is low. On diamonds' Bayesian ridge (MSE,
  kurtosis of the residuals 103: ten of 20,000 instances hold a fifth of the MSE; looks
  every 10 labels to 1,000, 300 runs) the one-sided 95% upper bound missed the truth at
  some look in 0.070 of runs on the raw scale, 0.043 on the log scale (the lower bound
  0.003 both), the two-sided time-uniform coverage 0.937 → 0.980, at 2–6% more width;
* σ̂_t is shrunk toward a per-draw σ₀ implied by the model, with :data:`PSEUDO_DRAWS`
  pseudo-draws, which keeps σ̂ = 0 (no error among the first draws) from giving a point. σ₀
  is the largest over the members of the model's tempered family
  (:mod:`~activeeval.estimators.tempered`: logits × a) that the labels so far leave
  plausible (likelihood ratio within χ²₁(level)/2), each member's σ the per-draw σ of
  the estimator were the labels drawn from it (as q* is planned): on an overconfident model
  the labels soon rule out a = 1 and σ₀ grows to what the errors the model does not expect
  imply. With the model's own σ₀ and 30 pseudo-draws (the design note's guard), the
  overconfident digits case of ``docs/results/robustness.md`` (error rate, looks every 10
  labels to 1,000) covered 0.875 over 1,000 runs; with the plausible σ₀ 0.93 (200 runs), and
  with 100 pseudo-draws 0.946 (1,000 runs), at 4–13% more width at 300 labels on the other
  real tasks and none at 1,000;
* the running intersection of the sequence (valid: every C_t covers at once); where it is
  empty — the sequence missed at some look — the look's own C_t is reported.

The guards' margin depends on the pool: a review's harsh case (a rare error, the model's
logits 2.9× too large) measured 0.949 ± 0.003 (the model-assisted error rate, 4,000 runs)
where calibrated and mildly wrong models gave 0.962–0.990.

What it costs: near t* the CS is ×1.55–1.62 the width of the fixed-n Wald interval at the
same t (√t·B_t = 3.03 against 1.96 at α = 0.05), i.e. ≈ 2.4× the labels for the same
width; the running intersection gives back 13–16%. ``rule="fixed-width"`` (Chow & Robbins
1965) instead stops when the fixed-n interval is narrow enough and reports it: about 1× the
labels, valid only as the width goes to 0 (its coverage at the stopping time is measured in
``docs/results/sequential.md``).

Finite pools. A campaign labels each instance once; repeats are free. The terms above treat
every draw as new, which forfeits the finite-population gain the reported estimator has. The
sequence uses instead the *predictable finite-pool* terms (``docs/design/anytime-valid.md``,
option 2): with L_{i−1} the labeled units before draw i (each counted once) and 1{new_i} that
draw i labels a unit not labeled before,

    a_i = Σ_{j ∈ L_{i−1}} p_j w_j ℓ_j + v_i w_i ℓ_i 1{new_i},
    c_i = (μ_N − Σ_{j ∈ L_{i−1}} p_j m_N(x_j)) − v_i m_N(x_i) 1{new_i},

and b_i, d_i the same with w and m_D. Given the past, E[a_i] = N and E[c_i] = 0 exactly
(the labeled units enter with their labels, the unlabeled remainder by importance sampling),
for any q, including one that changes between batches; so a_i + λc_i − G(b_i + λd_i) are
martingale differences whose conditional variance shrinks as the pool is labeled. The
theorem's martingale form bounds their sum by the normal mixture in *intrinsic time* V_t
(the summed conditional variances) with ρ fixed in advance; the sequence plugs σ̂_t² = V̂_t/t
into the same σ̂_t·B_t instead, which is that mixture with a ρ that moves with the data. A
review measured what this costs on a Gaussian martingale (looks 30–1,000, α = 0.05): where the
variance falls, as it does here, the plug-in crosses less often than the intrinsic form
(0.015 against 0.012 two-sided); where it rises 100-fold halfway, it is not valid (0.060
against 0.034) — a batch-adaptive q that moved to a much worse design would be such a case;
static q never is. The design note's simulation measured these terms at 0.965–0.968
time-uniform coverage, 15–30% narrower than every-draw-a-term terms near a census, as precise
as the Hájek estimator. Repeats of labeled units add a term with no noise. The sequence's centre,
Σ(a + λc)/Σ(b + λd), is not the reported estimate (the Hájek finite-population form): the
two target the same G and differ by O(1/√n).

Not covered: the pool-features smoother (a label enters other draws' control variates; the
sequence uses the model's control variate alone, so it is valid but does not get the
smoother's gain). The derivation, the simulation behind each guard and the options weighed
are in ``docs/design/anytime-valid.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

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
#: σ₀ counts for this many draws in the shrunk σ̂_t (module docstring, guards).
PSEUDO_DRAWS = 100
#: The normal mixture is tuned at this share of the horizon (module docstring).
TUNE_SHARE = 0.2
#: The share of α a window boundary spends on its window (:func:`window_boundary`).
WINDOW_SHARE = 0.8
#: Above this many draws a sequence is evaluated on a grid of at most this many looks (all
#: the first ones, then evenly spaced) — a subset of the looks, so still time-uniform.
MAX_LOOKS = 4000


def mixture_rho2(horizon: float, level: float = 0.95, alternative: str = "two-sided") -> float:
    """ρ² of the normal-mixture boundary tightest at ``horizon`` draws: two-sided in closed form
    (Waudby-Smith et al. 2024, eq. for ρ*), one-sided by minimizing :func:`boundary` at t*."""
    alpha = 1.0 - check_level(level)
    if not (math.isfinite(horizon) and horizon >= 1):
        raise ShapeError(f"horizon: must be a number of draws >= 1, got {horizon!r}.")
    if alternative == "two-sided":
        a = -2.0 * math.log(alpha)
        return (a + math.log(a + 1.0)) / horizon
    res = optimize.minimize_scalar(
        lambda lr: float(_one_sided_s(horizon, math.exp(lr), alpha)),
        bounds=(-20, 5),
        method="bounded",
    )
    return math.exp(float(res.x))


def _one_sided_s(t: Any, rho2: float, alpha: float) -> NDArray[np.float64]:
    """S with 2/sqrt(1+ρ²t)·exp(ρ²S²/(2(1+ρ²t)))·Φ(ρS/sqrt(1+ρ²t)) = 1/α, elementwise: the
    half-normal mixture of exp(λS − λ²t/2) over λ ≥ 0 reaches 1/α (Ville). In z = ρS/sqrt(a),
    a = 1 + ρ²t: z²/2 + log Φ(z) = ½ log a − log 2 − log α, increasing in z, with its root in
    (0, sqrt(2(c + 1))] (log Φ(z) > −1 for z ≥ 0); vectorized bisection."""
    a = 1.0 + rho2 * np.asarray(t, dtype=float)
    c = 0.5 * np.log(a) - math.log(2.0) - math.log(alpha)
    lo = np.zeros_like(c)
    hi = np.sqrt(2.0 * (c + 1.0))
    for _ in range(60):  # the bracket shrinks 2^60-fold: far below float resolution
        mid = 0.5 * (lo + hi)
        low = mid * mid / 2 + special.log_ndtr(mid) < c
        lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
    return 0.5 * (lo + hi) * np.sqrt(a / rho2)


def boundary(
    t: Any, rho2: float, level: float = 0.95, alternative: str = "two-sided"
) -> NDArray[np.float64]:
    """B_t, the multiplier of σ̂_t (half-width σ̂_t·B_t; the fixed-n Wald one is z/√t):
    two-sided the normal mixture, one-sided (``"less"``/``"greater"``) the half-normal one,
    each at α = 1 − ``level`` (module docstring)."""
    alpha = 1.0 - check_level(level)
    alternative = check_option(alternative, ALTERNATIVES, "alternative")
    tt = np.asarray(t, dtype=float)
    if alternative == "two-sided":
        return np.sqrt(
            2 * (tt * rho2 + 1) / (tt * tt * rho2) * np.log(np.sqrt(tt * rho2 + 1) / alpha)
        )
    return _one_sided_s(tt, rho2, alpha) / tt


def window_boundary(
    t: Any, horizon: float, level: float, alternative: str, window: float | None = None
) -> NDArray[np.float64]:
    """The multiplier of σ̂_t: the normal mixture tuned at t* = :data:`TUNE_SHARE` ×
    ``horizon`` (the budget in draws) at α; with a
    ``window`` T, the smaller of two boundaries, each valid on its own, at α·(1 −
    :data:`WINDOW_SHARE`) (the mixture, every t) and α·:data:`WINDOW_SHARE` (for t ≤ T the
    constant z·√T on the sum: by the reflection principle P(max_{t≤T} |W_t| ≥ x) ≤
    4(1 − Φ(x/√T)) for a Brownian motion, 2(1 − Φ) one-sided) — by the union bound both hold
    at once with probability ≥ 1 − α."""
    tt = np.asarray(t, dtype=float)
    alpha = 1.0 - level
    if window is None:
        t_star = max(TUNE_SHARE * horizon, float(MIN_DRAWS))
        return boundary(tt, mixture_rho2(t_star, level, alternative), level, alternative)
    a_mix = alpha * (1.0 - WINDOW_SHARE)
    lv_mix = 1.0 - a_mix
    mix = boundary(tt, mixture_rho2(window, lv_mix, alternative), lv_mix, alternative)
    tails = 4.0 if alternative == "two-sided" else 2.0
    z = float(special.ndtri(1.0 - alpha * WINDOW_SHARE / tails))
    with np.errstate(divide="ignore"):
        win = np.where(tt <= window, z * math.sqrt(window) / tt, np.inf)
    return np.minimum(mix, win)


@dataclass(frozen=True, eq=False)
class DrawTerms:
    """Per-draw terms of k models on one draw sequence, for their confidence sequences.

    ``z``: shape (n, 4k), per model the columns (a, b, c, d) of the module docstring;
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

    @property
    def log_scale(self) -> bool:
        """A mean of non-negative losses with no upper bound (squared, absolute error): its
        sequence is built on the log scale (module docstring, guards)."""
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
        ``estimate``, ``lower``, ``upper``, ``started``."""
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
        half = np.sqrt(s2) * window_boundary(t, self.horizon, lv, alternative, self.window)
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
        if alternative == "less":
            lo = np.full(t.shape, lo_r)
        elif alternative == "greater":
            hi = np.full(t.shape, hi_r)
        if intersect:
            run_lo, run_hi = np.maximum.accumulate(lo), np.minimum.accumulate(hi)
            # An empty intersection means the sequence missed at some look (probability
            # ≤ α): report that look's own C_t rather than an empty or a made-up interval.
            empty = run_lo > run_hi
            lo, hi = np.where(empty, lo, run_lo), np.where(empty, hi, run_hi)
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
        """The models from best to worst by :meth:`estimates` (NaN last)."""
        g = self.estimates()
        key = -g if greater_is_better else g
        return [int(j) for j in np.argsort(np.nan_to_num(key, nan=np.inf), kind="stable")]

    def _differs(self, i: int, j: int) -> NDArray[np.bool_]:
        ri, rj = self.raw[:, 2 * i : 2 * i + 2], self.raw[:, 2 * j : 2 * j + 2]
        return np.any(ri != rj, axis=1)

    def _difference_range(self) -> tuple[float, float]:
        lo, hi = self.value_range
        return lo - hi, hi - lo


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
