"""The tempered-model score interval: honest intervals when the model's probabilities are wrong.

The default's standard error is estimated from the labels, so an overconfident model's
campaign that misses its unexpected errors reports a low estimate with a small standard error.
The score interval instead takes the estimator's variance from the pool, under a one-parameter
family standing in for the true p(y | x): the model's logits times a, p_a(y | x) ∝ p(y | x)^a,
for each a on :data:`GRID` (a Gaussian's variance divided by a, its members' kurtosis the
labels' residuals', :func:`residual_kurtosis`). For each member it computes the value G_a
(eq. 4.21 under p_a), the finite-population variance V_a at the campaign's distinct labels,
the spread S_a of the pool's own value and the labels' log-likelihood (a
:class:`~.inference.ScoreCurve`). The reported
interval joins the design-based one (logit or Wald) with every θ that some plausible member
does not reject (|Ĝ − θ| ≤ z·√V_a and |θ − G_a| ≤ z·√S_a). For two classes the curve
also takes the Platt recalibrations σ(a·logit r + b) where the labels reject the tempered
family for them (a base rate wrong as well as a temperature; :func:`curve`). ROC AUC and
average precision take an interval of the same kind over the Platt recalibrations of the
model, the tempered ones among them (:func:`rank_curve`, their influence functions), and so do
the Brier score and the log loss (:func:`loss_curve`; for more than two classes over the top-label
recalibrations). Not computed for the thesis estimator, batch-adaptive campaigns,
comparisons, mixtures of models, ranked pools and a census; pools above :data:`MAX_POOL` are
summarized on a fixed subsample.

The derivation, the formulas for V_a and S_a and the measured coverage and width are in the
section "The default: the tempered interval" of the *Intervals* page of the documentation
(``docs/how-it-works/intervals.md``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ..measures import Measure
from ..predictive import Categorical, Gaussian, Predictive
from ..probability_measures import Ranks, _RankMeasure, _ScoringRule
from ..sampling import _successive_time
from .inference import ScoreCurve, plausible_by_family

__all__ = [
    "GRID",
    "MAX_POOL",
    "as_curve",
    "curve",
    "curve_defined",
    "curve_on",
    "loss_curve",
    "platt_chosen",
    "platt_loglik",
    "platt_members",
    "pointwise_log_likelihood",
    "rank_curve",
    "rank_members",
    "residual_kurtosis",
    "score_curve",
    "subsample",
    "tempered",
    "variance_curve",
    "with_platt",
]

#: The tempering factors a (logits × a): from nearly uniform to 20 times sharper.
GRID: NDArray[np.float64] = np.geomspace(0.05, 20.0, 41)

#: Pools larger than this are summarized on a fixed uniform subsample of this size.
MAX_POOL = 50_000

#: The rank measures' family, σ(a·logit r + b): the slopes a (the tempering factors of
#: :data:`GRID`) and the shifts b of the log-odds (a base rate from e^−4 to e^4 times the model's).
RANK_SLOPES: NDArray[np.float64] = GRID
RANK_SHIFTS: NDArray[np.float64] = np.linspace(-4.0, 4.0, 17)

#: :func:`rank_curve` evaluates only the members inside the likelihood-ratio set at this level.
RANK_CUT_LEVEL = 0.999

#: :func:`curve` adds the Platt family to the tempered one for two classes where the labels
#: reject b = 0 at this level (χ²₁). Over fresh labels from a tempered truth the test has its
#: nominal size; on one finite pool the campaigns share its labels, and a pool whose labels
#: happen to hold fewer positives than the truth expects (84 of 90.6) made it fire in 31–41%
#: of F1 campaigns at 0.95 (5% wider), in 1–2.5% at 0.99. Boosted trees on caravan reject
#: b = 0 at 0.99 in nearly every campaign; with a base rate off by b = 0.5–1 the tempered
#: family alone covered anyway (measured: the level changed coverage by ≤ 0.005).
PLATT_TEST_LEVEL = 0.99

#: The rank measures' families start from the model's log-odds capped at ±log((1 − c)/c) for
#: this c (±27.6): a probability nearer 0 or 1 says no more about how wrong the model may be
#: (Gaussian naive Bayes gives most of the digits pool probabilities below e^−100, which no
#: slope on the grid would soften).
RANK_CLIP = 1e-12


def tempered(pred: Predictive, a: float, kurtosis: float = 3.0) -> Predictive | None:
    """The predictive distribution with its logits times ``a`` (a Categorical: p^a
    renormalized per instance) or its variance divided by ``a`` (a Gaussian, whose fourth
    moment takes ``kurtosis``: :func:`residual_kurtosis`); the decision f(x) is not part of it
    (the caller passes the model's). None for other distributions."""
    if isinstance(pred, Categorical):
        member = _Tempering(pred).at(a)
        del member.__dict__["_label_memo"]  # the memo serves one tempering's loop, not a caller
        return member
    if isinstance(pred, Gaussian):
        out = Gaussian(pred.mean, pred.var / a)
        out.kurtosis = kurtosis
        return out
    return None


def residual_kurtosis(judged: Predictive, labels: NDArray[Any]) -> float:
    """The kurtosis a Gaussian model's tempered members take: Σ z⁴ · n / (Σ z²)² over the
    ``labels`` of the instances ``judged`` (the model there), z = (y − mean)/√var, never below
    the Gaussian's 3; 3 for a Categorical, or without two labels.

    The family scales the variance (a) and keeps the Gaussian's shape, so its members' V_a
    take E[(y − f)⁴] = 3·var²/a² (eq. 4.17 at f = mean). Residuals with heavier tails than the
    model's make the squared error's terms vary more: on diamonds' 'Fair' cut (311 of 10,000
    instances, Bayesian ridge) the standardized residuals' kurtosis is 6.4, the squared
    residuals' variance 2.7 times the Gaussian members', and the group's interval covered
    0.91–0.92 at 74–135 labels — every miss a pool value above the upper end. The kurtosis is
    free of the scale a, so one estimate from the labels that judge the members serves them
    all (moment matching, as the likelihood judges a; the labels are drawn by q given x, not
    y). Measured in ``docs/results/continuous.md``; derived on the *Intervals* page."""
    if not isinstance(judged, Gaussian) or labels.shape[0] < 2:
        return 3.0
    z2 = (np.asarray(labels, dtype=float) - judged.mean) ** 2 / judged.var
    s2 = float(z2.sum())
    if not s2 > 0:
        return 3.0
    return max(3.0, float(z2 @ z2) * z2.shape[0] / (s2 * s2))


class _Tempering:
    """A Categorical's log-probabilities shifted once by their row maximum, so each member
    p^a is one exp and one row sum (a > 0 keeps the maximum's place), and built like
    :meth:`Categorical.take` without re-validating rows that sum to one by construction."""

    def __init__(self, pred: Categorical) -> None:
        self.pred = pred
        logp = np.log(np.clip(pred.proba, 1e-300, 1.0))
        self.shifted = logp - logp.max(axis=1, keepdims=True)
        #: The last labels looked up by a member and their columns, shared by the members
        #: (each is asked the same decisions' columns: one lookup, not one per member). Kept
        #: by identity: the members serve a loop over the grid with one decisions array,
        #: never changed in place there (:func:`tempered` gives a member without it).
        self.memo: list[Any] = [None, None]

    def at(self, a: float) -> Categorical:
        out = np.exp(self.shifted * a)
        if out.shape[1] == 2:  # the row sums numpy's reduction gives, 30 times faster
            out /= (out[:, 0] + out[:, 1])[:, None]
        else:
            out /= out.sum(axis=1, keepdims=True)
        return _member(self.pred, out, self.memo)


def _member(pred: Categorical, proba: NDArray[np.float64], memo: list[Any]) -> Categorical:
    """A Categorical over ``pred``'s labels with rows ``proba`` that sum to one by
    construction (not re-validated), sharing the label lookups' ``memo``."""
    member = object.__new__(Categorical)
    member.proba = proba
    member.labels, member._order, member._sorted = pred.labels, pred._order, pred._sorted
    member.__dict__["_label_memo"] = memo
    return member


def pointwise_log_likelihood(pred: Predictive, y: NDArray[Any]) -> NDArray[np.float64]:
    """log p_a(y_i | x_i), shape (instances, len(:data:`GRID`)), for the instances of
    ``pred`` with labels ``y``: a·log p(y | x) − log Σ_k p(k | x)^a for a Categorical, the
    normal log-density with variance var/a for a Gaussian."""
    if isinstance(pred, Categorical):
        logp = np.log(np.clip(pred.proba, 1e-300, 1.0))
        top = logp.max(axis=1)
        shifted = logp - top[:, None]  # a > 0 keeps the maximum's place: log Σ e^{a·s} ≥ 0
        own = shifted[np.arange(logp.shape[0]), pred.label_index(y)]
        out = np.empty((logp.shape[0], GRID.shape[0]))
        for j, a in enumerate(GRID):  # one slope at a time: memory that of the rows, not × 41
            out[:, j] = a * own - np.log(np.exp(shifted * a).sum(axis=1))
        return out
    assert isinstance(pred, Gaussian)
    r2 = (np.asarray(y, dtype=float) - pred.mean) ** 2 / pred.var
    return np.asarray(
        0.5 * np.log(GRID[None, :] / (2 * np.pi * pred.var[:, None]))
        - 0.5 * GRID[None, :] * r2[:, None],
        dtype=float,
    )


def score_curve(
    pred: Predictive,
    meas: Measure,
    f: NDArray[Any] | None,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    units: NDArray[np.intp],
    labels: NDArray[Any],
) -> ScoreCurve | None:
    """:func:`curve` (the tempered family, for two classes the Platt one too) for a static
    campaign that labeled the distinct pool instances ``units`` (with ``labels``) by draws
    from ``q``, the model's decisions being ``f`` (None: ``pred``'s point prediction, taken
    only where the curve looks), the members judged by the labels of the labeled instances
    with p > 0 only, so that a group's are judged by the group's labels
    (docs/how-it-works/intervals.md); None where the family is not defined (same page), a
    Gaussian has a zero variance, or the campaign labeled every instance q can draw."""
    n_labels = int(units.shape[0])
    if not curve_defined(pred, n_labels):
        return None
    if int((q > 0).sum()) <= n_labels:
        return None
    # The members are judged by the labels of the instances whose value is estimated (p > 0):
    # a group's by the group's own, as the model may err there otherwise than overall.
    inside = p[units] > 0
    return curve(_rows(pred, f, q, p, n_labels), meas, pred.take(units[inside]), labels[inside])


def rank_curve(
    meas: _RankMeasure,
    cat: Categorical,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    cut_level: float = RANK_CUT_LEVEL,
) -> ScoreCurve | None:
    """The score curve of ROC AUC or average precision (a bound rank measure of
    ``activeeval.probability_measures``) estimated from the ``draws`` (pool indices, repeats
    included, with ``labels``) from ``q``.

    Two families stand in for P(positive | x): the Platt family σ(a·logit r(x) + b), r the
    model's probability of the positive class, a on :data:`RANK_SLOPES` and b on
    :data:`RANK_SHIFTS` (its likelihood-ratio set χ²₂'s), and within it the tempered one,
    b = 0 (χ²₁'s, its own best member the reference); the score sets of the two are joined.
    For each member: the labels' log-likelihood (positive or not, each distinct labeled
    instance with p > 0 once); G_ab, the pool's value in expectation (``_expected_value``);
    and, the estimate being a with-replacement (Hansen–Hurwitz) ratio, by its influence ψ
    (the measure's ``_influences``, the pool's sums under the member)
    V_ab = Σ p² E_ab[ψ² | x] / (n q) and S_ab = Σ p² Var_ab[ψ | x] (the realized pool's
    influences sum to zero: no mean term). The scores ranked stay the model's. Members
    outside their family's likelihood-ratio set at ``cut_level`` are left out (1.0 keeps
    all, in the order of :func:`rank_members`); intervals at levels above it use the rest.
    None where a label is missing or the draws cover every instance q can draw."""
    judged = _judged(q, p, draws, labels)
    if judged is None:
        return None
    n, rows, rows_labels = judged
    pos = meas._pos()
    z = (cat.label_index(rows_labels) == pos).astype(np.float64)
    families = rank_members()[2]
    loglik = _platt_loglik(_logit(cat.proba[rows, pos]), z)
    chosen = _chosen(loglik, families, cut_level)
    m = q.shape[0]
    keep = subsample(m)
    k = keep.shape[0]
    qk, pk = q[keep], p[keep]
    scale = m / k
    proba_k = cat.proba[keep]
    ranks = Ranks(meas.scores(proba_k))
    logit_k = _logit(proba_k[:, pos])
    # Units q cannot draw add no variance the design can see (the estimator is biased there
    # instead, which no variance shows): their terms are left out.
    over_q = np.divide(pk * pk, qk, out=np.zeros(k), where=qk > 0) * scale / n
    p2 = pk * pk * scale
    values = np.full(chosen.shape[0], math.nan)
    variances = np.full(chosen.shape[0], math.nan)
    spreads = np.full(chosen.shape[0], math.nan)
    for j, c in enumerate(chosen):
        r = _platt_at(logit_k, c)
        g, mu, second, var = meas._moments(r, pk * scale, ranks)
        if math.isnan(g):
            continue
        values[j] = meas._expected_value(r, pk * scale, ranks, own=pk)
        variances[j] = float(over_q @ second)
        spreads[j] = float(p2 @ var)
        if k < m:  # G_ab is a subsample's estimate: its sampling variance joins S_ab
            spreads[j] += (1.0 - k / m) / k * float(np.mean((m * pk * mu) ** 2))
    ok = np.isfinite(values)
    if not ok.any():
        return None
    return ScoreCurve(values[ok], variances[ok], spreads[ok], loglik[chosen][ok],
                      parameters=families[chosen][ok])  # fmt: skip


def loss_curve(
    meas: _ScoringRule,
    cat: Categorical,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    draws: NDArray[np.intp],
    labels: NDArray[Any],
    assisted: bool,
    cut_level: float = RANK_CUT_LEVEL,
) -> ScoreCurve | None:
    """The score curve of the Brier score or the log loss estimated from the ``draws`` (pool
    indices, repeats included, with ``labels``) from ``q``: the self-normalized mean, or with
    ``assisted`` the model-assisted one (the model's own expected loss e(x) its control
    variate, λ ∈ [0, 1]).

    The families standing in for p(y | x) are :func:`rank_curve`'s for two classes (the Platt
    recalibrations of the second class's probability, the tempered ones among them); for
    more, the top-label family p(k | x) ∝ p̂_k^a e^{b·1[k = top]} (top the model's most
    probable class, the first of a tie; a and b on :func:`rank_members`' grids, χ²₂'s set)
    and the tempered one within it (b = 0, χ²₁'s). For each member: the labels'
    log-likelihood (each distinct labeled instance with p > 0 once); G = Σ p E[ℓ | x], the
    losses ℓ those of the model's own probabilities; λ the member's least-squares
    coefficient Σ (p²/q)(μ − G)(e − Ē) / Σ (p²/q)(e − Ē)² within [0, 1] (0 without
    ``assisted``), μ(x) = E[ℓ | x], Ē = Σ p e; the estimate being a with-replacement
    (Hansen–Hurwitz) ratio of the residuals ℓ − λe, V = Σ (p²/(n q)) (Var[ℓ | x] + (μ − G −
    λ(e − Ē))²); and S = Σ p² Var[ℓ | x]. Members outside their family's likelihood-ratio set
    at ``cut_level`` are left out. None where the draws cover every instance q can draw or no
    labeled instance has p > 0."""
    judged = _judged(q, p, draws, labels)
    if judged is None:
        return None
    n, rows, rows_labels = judged
    codes = cat.label_index(rows_labels)
    n_classes = cat.proba.shape[1]
    m = q.shape[0]
    keep = subsample(m)
    k = keep.shape[0]
    qk, pk = q[keep], p[keep]
    scale = m / k
    proba_k = cat.proba[keep]
    loss = meas.loss_matrix(proba_k)
    slopes, shifts, families = rank_members()
    # member(c): E[ℓ | x] and Var[ℓ | x] under member c, for the subsample's rows.
    if n_classes == 2:  # the Platt family and the tempered one, as for the rank measures
        loglik = _platt_loglik(_logit(cat.proba[rows, 1]), (codes == 1).astype(np.float64))
        logit_k = _logit(proba_k[:, 1])
        step = loss[:, 1] - loss[:, 0]

        def member(c: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            r = _platt_at(logit_k, c)
            return loss[:, 0] + r * step, r * (1.0 - r) * step * step

    else:  # the top-label family p^a e^{b·1[k = top]}, the tempered one (b = 0) among it
        loglik = _top_label_loglik(cat.proba[rows], codes)
        shifted_k, top_k = _top_shifted(proba_k)
        loss2 = loss * loss

        def member(c: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            pm = np.exp(shifted_k * slopes[c])
            pm[np.arange(k), top_k] = math.exp(shifts[c])
            pm /= pm.sum(axis=1, keepdims=True)
            mu = np.einsum("ik,ik->i", pm, loss)
            return mu, np.maximum(np.einsum("ik,ik->i", pm, loss2) - mu * mu, 0.0)

    chosen = _chosen(loglik, families, cut_level)
    e = np.einsum("ik,ik->i", proba_k, loss)  # the model's own expected loss
    e_bar = scale * float(pk @ e)
    w = np.divide(pk * pk, qk, out=np.zeros(k), where=qk > 0) * scale  # p²/q; q = 0 left out
    dev = e - e_bar
    dd = float(w @ (dev * dev))
    p2 = pk * pk * scale
    values = np.empty(chosen.shape[0])
    variances = np.empty(chosen.shape[0])
    spreads = np.empty(chosen.shape[0])
    for j, c in enumerate(chosen):
        mu, var = member(int(c))
        g = scale * float(pk @ mu)
        lam = min(max(float(w @ ((mu - g) * dev)) / dd, 0.0), 1.0) if assisted and dd > 0 else 0.0
        values[j] = g
        variances[j] = float(w @ (var + (mu - g - lam * dev) ** 2)) / n
        spreads[j] = float(p2 @ var)
        if k < m:  # G is a subsample's estimate: its sampling variance joins S
            spreads[j] += (1.0 - k / m) / k * float(np.mean((m * pk * mu - g) ** 2))
    return ScoreCurve(values, variances, spreads, loglik[chosen], parameters=families[chosen])


def curve(
    rows: Rows, meas: Measure, judged: Predictive, judged_labels: NDArray[Any]
) -> ScoreCurve | None:
    """The score curve of a static campaign's estimate from the ``rows`` of :func:`subsample`
    (as :func:`curve_on`), its members judged by the labels ``judged_labels`` of the
    labeled instances with test mass (``judged``, the model there): the tempered family, and
    for two classes also the Platt recalibrations σ(a·logit r + b) of :func:`rank_members`'
    grid (:func:`platt_members`, where :func:`platt_chosen` takes any). The tempered
    members are interpolated as :class:`ScoreCurve` does with one family; each family's
    likelihood-ratio set is its own (χ²₁, χ²₂). None as :func:`as_curve`."""
    values, variances, spreads = curve_on(
        rows, meas, kurtosis=residual_kurtosis(judged, judged_labels)
    )
    loglik = pointwise_log_likelihood(judged, judged_labels).sum(axis=0)
    base = as_curve(values, variances, spreads, loglik)
    if base is None or not (isinstance(rows.pred, Categorical) and rows.pred.proba.shape[1] == 2):
        return base
    assert isinstance(judged, Categorical)
    loglik = platt_loglik(judged, judged_labels)
    chosen = platt_chosen(loglik)
    members = platt_members(rows, meas, chosen)
    return with_platt(base, *members, loglik[chosen])


def platt_loglik(judged: Categorical, labels: NDArray[Any]) -> NDArray[np.float64]:
    """The log-likelihood of the ``labels`` of the instances ``judged`` (a binary model there)
    under every member of :func:`rank_members`, in its order."""
    z = (judged.label_index(labels) == 1).astype(np.float64)
    return _platt_loglik(_logit(judged.proba[:, 1]), z)


def platt_chosen(loglik: NDArray[np.float64]) -> NDArray[np.intp]:
    """The Platt members (family 2 of :func:`rank_members`; its b = 0 members are the
    tempered ones) inside the family's likelihood-ratio set at :data:`RANK_CUT_LEVEL` under
    the log-likelihoods ``loglik`` (:func:`platt_loglik`): those :func:`curve` computes —
    none unless the labels reject the tempered family for the Platt one (the likelihood-ratio
    test of b = 0, χ²₁ at :data:`PLATT_TEST_LEVEL`): where a temperature explains the labels,
    the wider χ²₂ set would only widen the interval."""
    families = rank_members()[2]
    gain = float(np.max(loglik[families == 2]) - np.max(loglik[families == 1]))
    if not 2.0 * gain > float(special.chdtri(1, 1.0 - PLATT_TEST_LEVEL)):
        return np.empty(0, dtype=np.intp)
    chosen = _chosen(loglik, families, RANK_CUT_LEVEL)
    return chosen[families[chosen] == 2]


def platt_members(
    rows: Rows, meas: Measure, chosen: NDArray[np.intp]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(G, V, S) as :func:`curve_on`'s under the Platt recalibrations σ(a·logit r + b) of a
    binary model's second class (r capped as :data:`RANK_CLIP`), the members ``chosen`` of
    :func:`rank_members`: an overconfident model's errors are often a base rate as well as a
    temperature (boosted trees that expect an F1 of 0.90 where the pool has 0.09), which
    tempering alone cannot stand for. ``rows.pred`` is a binary model (a Categorical)."""
    pred_k = rows.pred
    assert isinstance(pred_k, Categorical)
    logit_k = _logit(pred_k.proba[:, 1])
    memo: list[Any] = [None, None]

    def member(c: int) -> Categorical:
        r = _platt_at(logit_k, c)
        return _member(pred_k, np.column_stack([1.0 - r, r]), memo)

    members = (member(int(c)) for c in chosen)
    return _members_curve(rows, meas, members, chosen.shape[0])


def with_platt(
    base: ScoreCurve,
    values: NDArray[np.float64],
    variances: NDArray[np.float64],
    spreads: NDArray[np.float64],
    loglik: NDArray[np.float64],
) -> ScoreCurve:
    """``base`` (the tempered family) joined with the Platt members given (those defined):
    the tempered members as ``base`` interpolates them, a family of their own (χ²₁), then
    the Platt ones (χ²₂)."""
    ok = np.isfinite(loglik)  # members undefined under the measure drop out of the bounds
    if not ok.any():
        return base
    dense = base.dense()
    added = (values[ok], variances[ok], spreads[ok], loglik[ok])
    values, variances, spreads, loglik = (
        np.concatenate([a, b]) for a, b in zip(dense.fields(), added, strict=True)
    )
    one, two = dense.values.shape[0], int(ok.sum())
    families = np.repeat(np.array([1, 2], dtype=np.intp), [one, two])
    return ScoreCurve(values, variances, spreads, loglik, parameters=families)


def _judged(
    q: NDArray[np.float64], p: NDArray[np.float64], draws: NDArray[np.intp], labels: NDArray[Any]
) -> tuple[int, NDArray[np.intp], NDArray[Any]] | None:
    """(n, the distinct labeled instances with test mass — those that judge the members —
    and their labels) of a campaign's ``draws``; None with fewer than two draws, draws that
    cover every instance q can draw, or no labeled instance with test mass."""
    n = int(draws.shape[0])
    units, first = np.unique(draws, return_index=True)
    if n < 2 or int((q > 0).sum()) <= units.shape[0]:
        return None
    inside = p[units] > 0
    if not inside.any():  # no label where the value is estimated: nothing judges the members
        return None
    return n, units[inside], labels[first][inside]


def _platt_loglik(logit: NDArray[np.float64], z: NDArray[np.float64]) -> NDArray[np.float64]:
    """The log-likelihood of the labels ``z`` (1: the class whose capped log-odds are
    ``logit``) under every member of :func:`rank_members`, in its order."""
    slopes, shifts, families = rank_members()
    platt = families == 2
    # log σ(±t) = −log(1 + e^{∓t}) for every labeled unit (rows) and Platt member (columns),
    # the sign that of the label; the tempered members are the Platt ones with b = 0.
    t = (2.0 * z - 1.0)[:, None] * (logit[:, None] * slopes[platt] + shifts[platt])
    loglik = np.empty(slopes.shape[0])
    loglik[platt] = -np.logaddexp(0.0, -t).sum(axis=0)
    loglik[~platt] = loglik[platt][shifts[platt] == 0.0]
    return loglik


def _top_shifted(proba: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The log-probabilities less their row maximum (at most 0; 0 at the top class, whose
    column is the second array), probabilities capped below at :data:`RANK_CLIP`."""
    logp = np.log(np.clip(proba, RANK_CLIP, 1.0))
    top = logp.argmax(axis=1)
    return logp - logp[np.arange(logp.shape[0]), top][:, None], top


def _top_label_loglik(proba: NDArray[np.float64], codes: NDArray[np.intp]) -> NDArray[np.float64]:
    """The log-likelihood of the labels (columns ``codes``) under every member of
    :func:`rank_members` read as the top-label family: p(k | x) ∝ p̂_k^a e^{b·1[k = top]}
    (the model's most probable class's odds shifted by b, the tempered family at b = 0)."""
    slopes, shifts, _ = rank_members()
    shifted, top = _top_shifted(proba)
    rows = np.arange(proba.shape[0])
    own = float(shifted[rows, codes].sum())
    n_top = float(np.count_nonzero(codes == top))
    others = shifted.copy()
    others[rows, top] = -np.inf  # Σ over the other classes of e^{a·s_k}, per row and slope
    out = np.empty(slopes.shape[0])
    for a in np.unique(slopes):  # one slope at a time: memory that of the rows, not × 41
        mine = np.flatnonzero(slopes == a)
        log_rest = np.log(np.exp(others * a).sum(axis=1))
        norm = np.logaddexp(shifts[mine][None, :], log_rest[:, None]).sum(axis=0)
        out[mine] = a * own + n_top * shifts[mine] - norm
    return out


def _chosen(
    loglik: NDArray[np.float64], families: NDArray[np.intp], cut_level: float
) -> NDArray[np.intp]:
    """The members computed: all (``cut_level`` ≥ 1) or those inside their family's
    likelihood-ratio set at ``cut_level``."""
    if cut_level >= 1.0:
        return np.arange(loglik.shape[0])
    return np.flatnonzero(plausible_by_family(loglik, cut_level, families))


def rank_members() -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """(a, b, family) of every member of :func:`rank_curve`'s families, in its order: the
    Platt family (2 parameters; a-major), then the tempered one (1; b = 0)."""
    n_b = RANK_SHIFTS.shape[0]
    slopes = np.concatenate([np.repeat(RANK_SLOPES, n_b), RANK_SLOPES])
    shifts = np.concatenate(
        [np.tile(RANK_SHIFTS, RANK_SLOPES.shape[0]), np.zeros_like(RANK_SLOPES)]
    )
    families = np.repeat(
        np.array([2, 1], dtype=np.intp), [n_b * RANK_SLOPES.shape[0], RANK_SLOPES.shape[0]]
    )
    return slopes, shifts, families


def _platt_at(logit: NDArray[np.float64], c: int) -> NDArray[np.float64]:
    """σ(a·logit + b) for member ``c`` of :func:`rank_members` (the capped log-odds ``logit``)."""
    slopes, shifts, _ = rank_members()
    return np.asarray(special.expit(slopes[c] * logit + shifts[c]), dtype=np.float64)


def _logit(r: NDArray[np.float64]) -> NDArray[np.float64]:
    """log r − log(1 − r) with r kept within :data:`RANK_CLIP` of 0 and 1."""
    return np.asarray(special.logit(np.clip(r, RANK_CLIP, 1.0 - RANK_CLIP)), dtype=np.float64)


def curve_defined(pred: Predictive, n_labels: int) -> bool:
    """Whether the tempered family is defined for ``pred`` (a Categorical, or a Gaussian
    whose variances are all positive) and there is a label to score."""
    if type(pred) not in (Categorical, Gaussian) or n_labels < 1:
        return False
    return not (isinstance(pred, Gaussian) and not (pred.var > 0).all())


def as_curve(
    values: NDArray[np.float64],
    variances: NDArray[np.float64],
    spreads: NDArray[np.float64],
    loglik: NDArray[np.float64],
) -> ScoreCurve | None:
    """The curve over the members where value, variance and likelihood are all defined;
    None when fewer than two are."""
    ok = np.isfinite(values) & np.isfinite(variances) & np.isfinite(loglik)
    if ok.sum() < 2:
        return None
    return ScoreCurve(values[ok], variances[ok], spreads[ok], loglik[ok])


def variance_curve(
    pred: Predictive,
    meas: Measure,
    f: NDArray[Any] | None,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    n_labels: int,
    grid: NDArray[np.float64] = GRID,
    kurtosis: float = 3.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(G_a, V_a, S_a) for each a of ``grid`` (NaN where the measure is undefined under p_a)
    at ``n_labels`` distinct labels drawn from ``q``, fewer than the instances q can draw, a
    Gaussian's members with ``kurtosis`` (:func:`residual_kurtosis`;
    docs/how-it-works/intervals.md)."""
    return curve_on(_rows(pred, f, q, p, n_labels), meas, grid, kurtosis)


@dataclass(frozen=True)
class Rows:
    """What the curve functions sum over: the model ``pred``, its decisions ``f`` (None: its
    point prediction), ``q`` and ``p`` on the rows of :func:`subsample` of a pool of ``m``
    instances, and the time ``t`` of q at the campaign's distinct labels (a session's or a
    cluster's pool summary stores the rows; :func:`_rows` takes them from the pool)."""

    pred: Predictive
    f: NDArray[Any] | None
    q: NDArray[np.float64]
    p: NDArray[np.float64]
    m: int
    t: float


def _rows(
    pred: Predictive,
    f: NDArray[Any] | None,
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    n_labels: int,
) -> Rows:
    """The :class:`Rows` of a pool (``pred``, ``f``, ``q``, ``p`` over it) at ``n_labels``
    distinct labels drawn from q."""
    t = _successive_time(q, n_labels)  # q is the campaign's, validated
    m = q.shape[0]
    keep = subsample(m)
    pred_k = pred if keep.shape[0] == m else pred.take(keep)
    return Rows(pred_k, None if f is None else f[keep], q[keep], p[keep], m, t)


def subsample(m: int) -> NDArray[np.intp]:
    """The pool rows :func:`variance_curve` sums over: all of them, or above
    :data:`MAX_POOL` a fixed uniform subsample of that many (the same for every call)."""
    if m > MAX_POOL:  # a fixed subsample; sums scale by m/MAX_POOL, the same for every a
        return np.sort(np.random.default_rng(0).choice(m, MAX_POOL, replace=False))
    return np.arange(m)


def curve_on(
    rows: Rows, meas: Measure, grid: NDArray[np.float64] = GRID, kurtosis: float = 3.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`variance_curve` on the ``rows`` of :func:`subsample`."""
    pred_k = rows.pred
    tempering = _Tempering(pred_k) if isinstance(pred_k, Categorical) else None

    def member(a: float) -> Predictive:
        pa = tempering.at(a) if tempering is not None else tempered(pred_k, a, kurtosis)
        assert pa is not None
        return pa

    members = (member(float(a)) for a in grid)
    return _members_curve(rows, meas, members, grid.shape[0])


def _members_curve(
    rows: Rows, meas: Measure, members: Iterable[Predictive], count: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`curve_on` for the ``count`` distributions ``members`` standing in for p(y | x)
    on the subsample's ``rows`` (:func:`platt_members`' too)."""
    pred_k, qk, pk, m, t = rows.pred, rows.q, rows.p, rows.m, rows.t
    fk = pred_k.point_prediction() if rows.f is None else rows.f
    with np.errstate(over="ignore", divide="ignore"):
        c = np.where(qk > 0, np.exp(-qk * t) / -np.expm1(-qk * t), 0.0)  # (1 − π)/π
    k = qk.shape[0]
    scale = m / k
    dom = meas.weight_can_be_positive(fk)  # the estimator's domain (its Hájek sums)
    cp2 = np.where(dom, c * pk * pk * scale, 0.0)
    pd = np.where(dom, pk, 0.0)
    model_n, model_d = meas.conditional_expectations(pred_k, fk)
    values = np.full(count, math.nan)
    variances = np.full(count, math.nan)
    spreads = np.full(count, math.nan)
    p2 = pk * pk * scale
    for j, pa in enumerate(members):
        m_n, m_d = meas.conditional_expectations(pa, fk)
        d = scale * float(pk @ m_d)
        if not d * d > 0:  # undefined under p_a (or so nearly that d² underflows): NaN
            continue
        g = scale * float(pk @ m_n) / d  # eq. 4.21 under p_a
        # Var_a[w(ℓ − G_a) | x] (as assisted._conditional_variance, reusing m_n, m_d)
        second = meas.conditional_second_moment(pa, g, fk)
        s = np.maximum(second - (m_n - g * m_d) ** 2, 0.0) / (d * d)
        mu = (m_n - g * m_d) / d
        b = (model_n - g * model_d) / d
        b -= float(pd @ b) / float(pd.sum())  # the Hájek form centres it (0 only at the model)
        bb = float(cp2 @ (b * b))
        lam = min(max(float(cp2 @ (mu * b)) / bb, 0.0), 1.0) if bb > 0 else 0.0
        values[j] = g
        variances[j] = float(cp2 @ (s + (mu - lam * b) ** 2))
        spreads[j] = float(p2 @ s)
        if k < m:  # G_a itself is a subsample's estimate: its sampling variance joins S_a
            spreads[j] += (1.0 - k / m) / k * float(np.mean((m * pk * mu) ** 2))
    return values, variances, spreads
