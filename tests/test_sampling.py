"""Acceptance tests of activeeval.sampling: instrumental distributions and draws from them.

The rule under test is Thm 4.1 / 4.2 of the thesis,

    q*(x) ∝ p(x) · sqrt( E_y[w² (ℓ − Ǧ)² | x] / λ(x) )            (eq. 4.6, eq. 4.25)

with the model's predictive distribution for p(y | x) and the intrinsic value Ǧ (eq. 4.21,
eq. 4.22) for G. Every expected distribution here is written out from the thesis's closed forms
(Cor. 4.2 / eq. 4.14, Cor. 4.3, Cor. 4.4 / eq. 4.18–4.20, eq. 4.23) with the intrinsic value
computed in the test, or compared between the closed-form fast paths (``fast=True``) and the
library's general rule (``fast=False``). Safeguards (floor on Ǧ, defensive mixture) are checked
against their documented definitions. ``draw`` is checked with a chi-square goodness-of-fit test.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import activeeval as ae
from activeeval.sampling import check_distribution

# The closed-form checks below use mix=0 on purpose (the thesis's q* without the defensive
# mixture), which warns that q has zeros; that warning has its own test
# (test_mix_zero_warns_when_q_leaves_instances_that_can_move_the_measure_at_zero, whose
# pytest.warns records it regardless of this filter).
pytestmark = pytest.mark.filterwarnings(
    "ignore:mix. with mix=0:activeeval.errors.ActiveEvalWarning"
)

# ------------------------------------------------------------------ pools from hypothesis


@st.composite
def categorical_pools(draw, min_m: int = 2, max_m: int = 30, min_k: int = 2, max_k: int = 5):
    """(m, K) class probabilities, including one-hot rows and exact ties.

    Entries are ratios of integers up to 1000: the quantities under test depend on 1 − Ǧ and
    1 − p(f(x)|x), which rounding would swamp for probabilities within 1e-12 of 1; on this
    grid they are either exactly 0 or at least ~1e-6, so 1e-10 is a rounding-proof tolerance.
    """
    m = draw(st.integers(min_m, max_m))
    k = draw(st.integers(min_k, max_k))
    raw = draw(
        hnp.arrays(
            np.float64,
            (m, k),
            elements=st.one_of(st.integers(0, 1000), st.sampled_from([0, 1])).map(float),
        )
    )
    raw[raw.sum(axis=1) == 0.0] = 1.0
    return raw / raw.sum(axis=1, keepdims=True)


def binary_pools(min_m: int = 2, max_m: int = 30):
    return categorical_pools(min_m=min_m, max_m=max_m, min_k=2, max_k=2)


def positive_arrays(m: int, low: float = 0.1, high: float = 10.0):
    return hnp.arrays(np.float64, m, elements=st.floats(low, high))


@st.composite
def pool_with_costs(draw, pools=None):
    """A categorical pool plus optional per-instance costs and optional pool weights."""
    proba = draw(pools if pools is not None else categorical_pools())
    m = proba.shape[0]
    costs = draw(st.one_of(st.none(), positive_arrays(m)))
    weights = draw(st.one_of(st.none(), positive_arrays(m, 0.2, 5.0)))
    return proba, costs, weights


# Variances are exactly 0 or at least 0.01: the general rule evaluates (f − y)² at the
# quadrature nodes y = μ + sqrt(2τ²)·node, which cancels catastrophically when τ ≪ |μ|·1e-8
# (rounding of μ + tiny), so near-zero non-zero variances test float rounding, not the rule.
gaussian_pools = st.integers(2, 20).flatmap(
    lambda m: st.tuples(
        hnp.arrays(np.float64, m, elements=st.floats(-5.0, 5.0)),  # mean
        hnp.arrays(np.float64, m, elements=st.one_of(st.just(0.0), st.floats(0.01, 4.0))),
        st.one_of(st.none(), positive_arrays(m)),  # costs
    )
)


# ------------------------------------------------------- formulas written out from the thesis


def _normalize(score: np.ndarray) -> np.ndarray:
    return score / score.sum()


def _eta(beta: float) -> float:
    return 1.0 / (1.0 + beta**2)  # thesis F_η with η = 1 / (1 + β²); β = inf gives η = 0


def _predicted(proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Predicted column (argmax, first on ties) and its probability p(f(x) | x)."""
    col = np.argmax(proba, axis=1)
    return col, proba[np.arange(proba.shape[0]), col]


def _cor_4_2_moment(pi: np.ndarray, r: float) -> np.ndarray:
    """E[(ℓ_0/1 − R)² | x] = (1 − 2R)(1 − p(f(x)|x)) + R² (eq. 4.14 under the root)."""
    return (1.0 - 2.0 * r) * (1.0 - pi) + r * r


def _f_measure_moment(p1: np.ndarray, predicted_pos: np.ndarray, g: float, eta: float):
    """E[w² (ℓ − G)² | x] of F_η for a binary pool (eq. 4.18, squared; η = 1 gives eq. 4.20,
    η = 0 gives eq. 4.19)."""
    return np.where(
        predicted_pos,
        p1 * (1 - g) ** 2 + eta**2 * (1 - p1) * g**2,
        (1 - eta) ** 2 * p1 * g**2,
    )


def _intrinsic_f(p1: np.ndarray, predicted_pos: np.ndarray, eta: float, p=None) -> float:
    """Ǧ_F of eq. 4.21: Σ p·E[wℓ|x] / Σ p·E[w|x] with w = η f + (1 − η) y, ℓ = f·y."""
    p = np.ones_like(p1) if p is None else p
    f = predicted_pos.astype(float)
    return float(p @ (f * p1)) / float(p @ (eta * f + (1 - eta) * p1))


MEASURE_KINDS = ["error_rate", "accuracy", "f:0.5", "f:1", "f:2", "precision", "recall"]


def _measure(kind: str, pos_label=None):
    """The measure of ``kind``; F-measures one-vs-rest for ``pos_label`` (the binary
    default, the larger label, when None)."""
    if kind == "error_rate":
        return ae.ErrorRate()
    if kind == "accuracy":
        return ae.Accuracy()
    if kind == "precision":
        return ae.Precision(pos_label=pos_label)
    if kind == "recall":
        return ae.Recall(pos_label=pos_label)
    return ae.FMeasure(beta=float(kind.split(":")[1]), pos_label=pos_label)


def _support_mask(kind: str, proba: np.ndarray) -> np.ndarray:
    """Instances whose weight w can be non-zero: all, except predicted negatives for precision
    (positive class = the largest label = the last column here)."""
    if kind == "precision":
        return np.argmax(proba, axis=1) == proba.shape[1] - 1
    return np.ones(proba.shape[0], dtype=bool)


def _optimal(*args, **kwargs) -> np.ndarray:
    # An undefined intrinsic value (e.g. precision of a model that never predicts the positive
    # class) warns and falls back to p; the tests below check that the fallback is consistent.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ae.UndefinedEstimateWarning)
        return ae.sampling.optimal_distribution(*args, **kwargs)


# ------------------------------------------- 1. closed forms equal the general rule (1e-10)


@pytest.mark.parametrize("kind", MEASURE_KINDS)
@settings(max_examples=12)  # per measure
@given(
    pool=pool_with_costs(),
    safeguards=st.sampled_from(
        [(0.0, 0.0), (ae.methods.DEFAULT_FLOOR, ae.methods.DEFAULT_MIX), (0.2, 0.3)]
    ),
)
def test_categorical_closed_form_distribution_equals_general_rule(kind, pool, safeguards):
    # K = 2..5 classes; F-measures one-vs-rest for the largest label.
    proba, costs, weights = pool
    floor, mix = safeguards
    model = ae.Categorical(proba)
    got = {}
    for fast in (True, False):
        got[fast] = _optimal(
            model,
            _measure(kind, pos_label=proba.shape[1] - 1),
            costs=costs,
            pool_weights=weights,
            floor=floor,
            mix=mix,
            fast=fast,
        )
    np.testing.assert_allclose(got[True], got[False], rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["error_rate", "f:1"])
@settings(max_examples=15)
@given(proba=categorical_pools(min_k=3, max_k=5), costs=st.booleans())
def test_multiclass_closed_form_distribution_equals_general_rule(kind, proba, costs):
    # Error rate with many classes (Cor. 4.2 holds for any K) and F1 one-vs-rest.
    lam = np.linspace(0.5, 3.0, proba.shape[0]) if costs else None
    model = ae.Categorical(proba, labels=["b", "a", "zeta", "mu", "c"][: proba.shape[1]])
    meas = _measure(kind, pos_label="zeta" if kind != "error_rate" else None)
    fast = _optimal(model, meas, costs=lam, floor=0.0, mix=0.0, fast=True)
    general = _optimal(model, meas, costs=lam, floor=0.0, mix=0.0, fast=False)
    np.testing.assert_allclose(fast, general, rtol=0, atol=1e-10)


@settings(max_examples=25)
@given(pool=gaussian_pools, explicit=st.booleans())
def test_squared_error_gaussian_closed_form_distribution_equals_general_rule(pool, explicit):
    # The general rule integrates with 20-node Gauss–Hermite quadrature, exact for the degree-4
    # integrand of the squared loss up to rounding.
    mean, var, costs = pool
    model = ae.Gaussian(mean, var)
    pred = mean + np.linspace(-1.0, 1.0, mean.shape[0]) if explicit else None
    fast = _optimal(model, "mse", costs=costs, prediction=pred, floor=0, mix=0, fast=True)
    general = _optimal(model, "mse", costs=costs, prediction=pred, floor=0, mix=0, fast=False)
    np.testing.assert_allclose(fast, general, rtol=0, atol=1e-10)


# ------------------------------------------- 1. the distributions equal the thesis's formulas


@settings(max_examples=25)
@given(pool=pool_with_costs())
def test_error_rate_distribution_equals_normalized_cor_4_2(pool):
    proba, costs, _ = pool
    _, pi = _predicted(proba)
    r = float(np.mean(1.0 - pi))  # intrinsic error rate, eq. 4.22
    assume(r > 0.0)  # r = 0 (a certain model) is the degenerate case tested separately
    lam = np.ones(proba.shape[0]) if costs is None else costs
    expected = _normalize(np.sqrt(_cor_4_2_moment(pi, r) / lam))  # eq. 4.14; Thm 4.2
    got = ae.sampling.optimal_distribution(proba, "error_rate", costs=costs, floor=0.0, mix=0.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


@settings(max_examples=15)
@given(pool=pool_with_costs())
def test_accuracy_distribution_equals_error_rate_distribution(pool):
    # ℓ_acc = 1 − ℓ_0/1 and Ǎ = 1 − Ř, so (ℓ_acc − Ǎ)² = (ℓ_0/1 − Ř)²: the same q* (Cor. 4.2).
    proba, costs, weights = pool
    _, pi = _predicted(proba)
    assume(np.mean(1.0 - pi) > 0.0)
    kw = dict(costs=costs, pool_weights=weights, floor=0.0, mix=0.0)
    np.testing.assert_allclose(
        ae.sampling.optimal_distribution(proba, "accuracy", **kw),
        ae.sampling.optimal_distribution(proba, "error_rate", **kw),
        rtol=0,
        atol=1e-12,
    )


@settings(max_examples=15)
@given(proba=categorical_pools(), weights=positive_arrays(30, 0.0, 5.0))
def test_pool_weights_enter_as_test_distribution_p_x(proba, weights):
    # eq. 4.6 with a non-uniform p(x): q ∝ p(x)·sqrt(a(x)), and Ř weighted by p (eq. 4.21).
    pw = weights[: proba.shape[0]]
    assume(pw.sum() > 0)
    _, pi = _predicted(proba)
    p = pw / pw.sum()
    r = float(p @ (1.0 - pi))
    score = p * np.sqrt(_cor_4_2_moment(pi, r))
    assume(score.sum() > 0)
    got = ae.sampling.optimal_distribution(proba, "error_rate", pool_weights=pw, floor=0.0, mix=0.0)
    np.testing.assert_allclose(got, _normalize(score), rtol=0, atol=1e-10)


@settings(max_examples=15)
@given(pool=pool_with_costs(), floor=st.floats(0.01, 0.45))
def test_floor_clips_the_intrinsic_risk_into_floor_one_minus_floor(pool, floor):
    proba, costs, _ = pool
    _, pi = _predicted(proba)
    r = min(max(float(np.mean(1.0 - pi)), floor), 1.0 - floor)  # the documented safeguard
    lam = np.ones(proba.shape[0]) if costs is None else costs
    expected = _normalize(np.sqrt(_cor_4_2_moment(pi, r) / lam))
    got = ae.sampling.optimal_distribution(proba, "error_rate", costs=costs, floor=floor, mix=0.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


@settings(max_examples=15)
@given(proba=binary_pools(), mix=st.floats(0.0, 1.0))
def test_defensive_mixture_is_convex_combination_with_the_pool_distribution(proba, mix):
    _, pi = _predicted(proba)
    r = float(np.mean(1.0 - pi))
    assume(r > 0.0)
    core = _normalize(np.sqrt(_cor_4_2_moment(pi, r)))
    expected = (1.0 - mix) * core + mix / proba.shape[0]  # q = (1 − ε) q* + ε p
    got = ae.sampling.optimal_distribution(proba, "error_rate", floor=0.0, mix=mix)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


@settings(max_examples=25)
@given(pool=pool_with_costs(binary_pools()))
def test_precision_distribution_equals_eq_4_20(pool):
    proba, costs, _ = pool
    p1 = proba[:, 1]
    pos = np.argmax(proba, axis=1) == 1  # f(x) = 1; ties go to class 0 (argmax)
    assume(pos.any())
    g = float(p1[pos].mean())  # intrinsic precision, eq. 4.21 with w = f(x)
    a = np.where(pos, (1.0 - 2.0 * g) * p1 + g * g, 0.0)  # eq. 4.20 under the root
    lam = np.ones(proba.shape[0]) if costs is None else costs
    score = np.sqrt(a / lam)
    assume(score.sum() > 0)
    got = ae.sampling.optimal_distribution(proba, "precision", costs=costs, floor=0.0, mix=0.0)
    np.testing.assert_allclose(got, _normalize(score), rtol=0, atol=1e-10)
    assert np.all(got[~pos] == 0.0)


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0, math.inf])
@settings(max_examples=10)  # per β
@given(pool=pool_with_costs(binary_pools()))
def test_f_measure_and_recall_distributions_equal_eq_4_18_and_4_19(beta, pool):
    proba, costs, weights = pool
    p1 = proba[:, 1]
    pos = np.argmax(proba, axis=1) == 1
    eta = _eta(beta)
    p = np.ones(p1.shape[0]) if weights is None else weights / weights.sum()
    den = float(p @ (eta * pos + (1 - eta) * p1))
    assume(den > 0)
    g = _intrinsic_f(p1, pos, eta, p)
    lam = np.ones(proba.shape[0]) if costs is None else costs
    score = p * np.sqrt(_f_measure_moment(p1, pos, g, eta) / lam)
    assume(score.sum() > 0)
    meas = ae.Recall() if math.isinf(beta) else ae.FMeasure(beta=beta)
    got = ae.sampling.optimal_distribution(
        proba, meas, costs=costs, pool_weights=weights, floor=0.0, mix=0.0
    )
    np.testing.assert_allclose(got, _normalize(score), rtol=0, atol=1e-10)


@settings(max_examples=20)
@given(pool=gaussian_pools)
def test_squared_error_gaussian_distribution_equals_eq_4_23(pool):
    mean, tau2, costs = pool
    r = float(np.mean(tau2))  # Ř₂ = mean predictive variance (eq. 4.23)
    a = (3.0 * tau2 - 2.0 * r) * tau2 + r * r
    lam = np.ones(mean.shape[0]) if costs is None else costs
    score = np.sqrt(a / lam)
    assume(score.sum() > 0)
    got = ae.sampling.optimal_distribution(
        ae.Gaussian(mean, tau2), "mse", costs=costs, floor=0, mix=0
    )
    np.testing.assert_allclose(got, _normalize(score), rtol=0, atol=1e-10)


@settings(max_examples=20)
@given(pool=gaussian_pools, shift=hnp.arrays(np.float64, 20, elements=st.floats(-3.0, 3.0)))
def test_squared_error_distribution_with_biased_predictions_equals_cor_4_3(pool, shift):
    # Cor. 4.3 with μ_x = predictive mean, σ_x² = τ², and a prediction f(x) ≠ μ_x.
    mean, tau2, _ = pool
    f = mean + shift[: mean.shape[0]]
    d2 = (f - mean) ** 2
    r = float(np.mean(d2 + tau2))  # intrinsic MSE, eq. 4.22
    a = d2 * (6 * tau2 - 2 * r + d2) + (3 * tau2 - 2 * r) * tau2 + r * r
    score = np.sqrt(np.maximum(a, 0.0))
    assume(score.sum() > 0)
    got = ae.sampling.optimal_distribution(
        ae.Gaussian(mean, tau2), "mse", prediction=f, floor=0, mix=0
    )
    np.testing.assert_allclose(got, _normalize(score), rtol=0, atol=1e-10)


def _binary_moment(kind: str, proba: np.ndarray) -> np.ndarray:
    """E[w²(ℓ − Ǧ)² | x] of a binary pool from the thesis's closed forms, Ǧ from eq. 4.21."""
    col, pi = _predicted(proba)
    if kind in ("error_rate", "accuracy"):
        return _cor_4_2_moment(pi, float(np.mean(1.0 - pi)))
    eta = {"precision": 1.0, "recall": 0.0}.get(kind)
    eta = _eta(float(kind.split(":")[1])) if eta is None else eta
    p1, pos = proba[:, 1], col == 1
    den = float(np.sum(eta * pos + (1 - eta) * p1))
    g = _intrinsic_f(p1, pos, eta) if den > 0 else math.nan
    return _f_measure_moment(p1, pos, g, eta)


@pytest.mark.parametrize("kind", MEASURE_KINDS)
@settings(max_examples=10)  # per measure
@given(proba=binary_pools(), costs=positive_arrays(30))
def test_cost_sensitive_distribution_divides_cost_free_score_by_sqrt_cost(kind, proba, costs):
    # Thm 4.2 (eq. 4.25): q*_λ ∝ sqrt(a(x)/λ(x)) ∝ q*(x)/sqrt(λ(x)), q*'s normalizer cancelling.
    lam = costs[: proba.shape[0]]
    a = _binary_moment(kind, proba)
    assume(np.nansum(a) > 0)  # all-zero moments: degenerate fallback, not Thm 4.2
    free = _optimal(proba, _measure(kind), floor=0.0, mix=0.0)
    got = _optimal(proba, _measure(kind), costs=lam, floor=0.0, mix=0.0)
    np.testing.assert_allclose(got, _normalize(np.sqrt(a / lam)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(got, _normalize(free / np.sqrt(lam)), rtol=0, atol=1e-10)


def test_named_measure_and_raw_probabilities_give_the_same_distribution_as_objects():
    rng = np.random.default_rng(3)
    p1 = rng.uniform(size=40)
    proba = np.c_[1 - p1, p1]
    for name, meas in [("error_rate", ae.ErrorRate()), ("f1", ae.FMeasure(pos_label=1))]:
        np.testing.assert_array_equal(
            ae.sampling.optimal_distribution(proba, name),
            ae.sampling.optimal_distribution(ae.Categorical(proba), meas),
        )


# ----------------------------------------------------------------------- 2. safeguards


@pytest.mark.parametrize("kind", MEASURE_KINDS)
@settings(max_examples=10)  # per measure
@given(
    pool=pool_with_costs(binary_pools()),
    floor=st.one_of(st.just(0.0), st.floats(0.0, 0.45)),
    mix=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0)),
)
def test_distribution_sums_to_one_and_keeps_mix_share_where_weight_can_be_positive(
    kind, pool, floor, mix
):
    proba, costs, weights = pool
    q = _optimal(proba, _measure(kind), costs=costs, pool_weights=weights, floor=floor, mix=mix)
    p = np.full(proba.shape[0], 1 / proba.shape[0]) if weights is None else weights / weights.sum()
    mask = _support_mask(kind, proba)
    assert q.shape == (proba.shape[0],)
    assert np.all(np.isfinite(q)) and np.all(q >= 0.0)
    assert abs(q.sum() - 1.0) <= 1e-12
    if not mask.any():
        # precision of a model that never predicts the positive class is undefined: the
        # documented fallback is the pool distribution
        np.testing.assert_allclose(q, p, rtol=0, atol=1e-15)
        return
    assert np.all(q[mask] >= mix * p[mask] * (1 - 1e-12))  # defensive share ε·p(x)
    assert np.all(q[~mask] == 0.0)  # no mass where no label can move the estimate


@pytest.mark.parametrize("mix", [0.0, ae.methods.DEFAULT_MIX, 0.3, 1.0])
def test_precision_distribution_is_zero_exactly_on_predicted_negatives(mix):
    p1 = np.array([1.0, 0.0, 0.9, 0.2, 0.5, 0.51, 1.0, 0.05, 0.7, 0.0])
    proba = np.c_[1 - p1, p1]
    pred_pos = p1 > 0.5  # 0.5 is a tie, resolved to class 0 by argmax
    q = ae.sampling.optimal_distribution(proba, "precision", mix=mix)
    assert np.all(q[~pred_pos] == 0.0)
    assert np.all(q[pred_pos] > 0.0)
    assert abs(q.sum() - 1.0) <= 1e-12


def test_floor_keeps_positive_mass_on_instances_the_model_is_certain_about():
    # 90 instances with p(f(x)|x) = 1 exactly and 10 at 0.99: Ř = 0.001 < floor.
    pi = np.r_[np.ones(90), np.full(10, 0.99)]
    proba = np.c_[pi, 1 - pi]
    floor = 0.05
    q = ae.sampling.optimal_distribution(proba, "error_rate", floor=floor, mix=0.0)
    assert np.all(q > 0)
    # the certain instances get moment floor² (eq. 4.14 with R clipped to the floor)
    expected = _normalize(np.sqrt(_cor_4_2_moment(pi, floor)))
    np.testing.assert_allclose(q, expected, rtol=0, atol=1e-15)
    # ... which is far more than the unguarded q* gives them (R = 0.001: sqrt(a) = 0.001
    # against 0.05 with the floor, about 9.8 times more after normalization)
    q0 = ae.sampling.optimal_distribution(proba, "error_rate", floor=0.0, mix=0.0)
    assert q[0] > 5 * q0[0]


@settings(max_examples=25)
@given(proba=binary_pools(min_m=2), floor=st.floats(0.01, 0.45))
def test_floor_bounds_the_spread_of_the_binary_error_rate_distribution(proba, floor):
    # With Ř clipped to c ∈ [floor, 1/2] and 1 − p(f(x)|x) ∈ [0, 1/2] for a binary argmax,
    # a(x) = (1 − 2c)(1 − π) + c² lies in [c², 1/2 − c + c²]; so every importance weight
    # relative to passive sampling is bounded by sqrt(1/2 − floor + floor²)/floor.
    q = ae.sampling.optimal_distribution(proba, "error_rate", floor=floor, mix=0.0)
    bound = math.sqrt(0.5 - floor + floor**2) / floor
    assert q.max() / q.min() <= bound * (1 + 1e-12)


def test_certain_model_without_safeguards_falls_back_to_pool_distribution():
    # All p(f(x)|x) = 1 and floor = 0: Ř = 0 and every moment vanishes; q must not be 0/0.
    proba = np.eye(2)[np.array([0, 1, 1, 0, 1])]
    q = ae.sampling.optimal_distribution(proba, "error_rate", floor=0.0, mix=0.0)
    np.testing.assert_allclose(q, np.full(5, 0.2), rtol=0, atol=1e-15)
    w = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    q = ae.sampling.optimal_distribution(proba, "error_rate", pool_weights=w, floor=0.0, mix=0.0)
    np.testing.assert_allclose(q, w / w.sum(), rtol=0, atol=1e-15)


@given(costs=positive_arrays(25), weights=st.one_of(st.none(), positive_arrays(25, 0.0, 3.0)))
def test_cost_distribution_is_proportional_to_pool_weight_over_sqrt_cost(costs, weights):
    assume(weights is None or weights.sum() > 0)
    p = np.ones(25) if weights is None else weights
    expected = _normalize(p / np.sqrt(costs))  # active_lambda, Sec. 4.4.1
    np.testing.assert_allclose(
        ae.sampling.cost_distribution(costs, pool_weights=weights), expected, rtol=0, atol=1e-14
    )


@given(n=st.integers(1, 50), weights=positive_arrays(50, 0.0, 3.0))
def test_passive_distribution_is_uniform_or_proportional_to_pool_weights(n, weights):
    np.testing.assert_allclose(
        ae.sampling.passive_distribution(n), np.full(n, 1.0 / n), rtol=0, atol=0
    )
    w = weights[:n]
    assume(w.sum() > 0)
    # Exact reference (fractions); the code's rounding: its sum of ≤ 50 positive terms is
    # within 50·ε of the exact one, and one division.
    exact = sum(Fraction(float(x)) for x in w)
    want = np.array([float(Fraction(float(x)) / exact) for x in w])
    np.testing.assert_allclose(
        ae.sampling.passive_distribution(n, pool_weights=w), want, rtol=51 * 2.0**-52, atol=0
    )


@pytest.mark.parametrize("scale", [5e-324, 1e-310, 1e300, 8e307])
def test_pool_weights_whose_sum_is_subnormal_or_overflows_are_normalized(scale: float) -> None:
    """Regression: 9 weights of 5e-324 overflowed in the division under numpy 1.26 (found by
    Hypothesis in make test-min), and weights of 1e308 summed to inf, giving p = 0."""
    w = np.array([1.0, 1.0, 2.0]) * scale
    np.testing.assert_allclose(
        ae.sampling.passive_distribution(3, pool_weights=w), [0.25, 0.25, 0.5], rtol=1e-15
    )


# --------------------------------------------------------------------------- 3. draw()


def _target_distribution() -> np.ndarray:
    rng = np.random.default_rng(11)
    q = rng.gamma(0.7, size=40)
    q[[0, 7, 8, 39]] = 0.0  # zero mass at both ends and in the middle
    return q / q.sum()


def test_draw_frequencies_match_q_by_chi_square_goodness_of_fit():
    q = _target_distribution()
    n = 200_000
    idx = ae.sampling.draw(q, n, random_state=20240917)
    assert idx.shape == (n,) and np.issubdtype(idx.dtype, np.integer)
    assert idx.min() >= 0 and idx.max() < q.shape[0]
    counts = np.bincount(idx, minlength=q.shape[0])
    support = q > 0
    assert counts[~support].sum() == 0  # zero-probability instances are never drawn
    assert (n * q[support]).min() > 5  # chi-square approximation is accurate
    # Under H0 (draws i.i.d. from q) the chi-square p-value is ≈ Uniform(0, 1), so a correct
    # sampler gives p ≤ 1e-3 for only 0.1% of seeds. The seed is fixed, so the outcome is
    # deterministic: this test can be wrong only if this particular seed is one of those 0.1%.
    result = stats.chisquare(counts[support], n * q[support])
    assert result.pvalue > 1e-3, result


def test_draw_never_returns_zero_probability_instances_even_at_the_boundaries():
    q = np.zeros(10)
    q[[3, 4]] = [0.25, 0.75]
    idx = ae.sampling.draw(q, 50_000, random_state=0)
    assert set(np.unique(idx).tolist()) == {3, 4}
    single = np.zeros(5)
    single[2] = 1.0
    np.testing.assert_array_equal(ae.sampling.draw(single, 100, random_state=1), np.full(100, 2))


def test_draw_is_reproducible_given_the_seed_and_accepts_a_generator():
    q = _target_distribution()
    a = ae.sampling.draw(q, 1000, random_state=7)
    np.testing.assert_array_equal(a, ae.sampling.draw(q, 1000, random_state=7))
    np.testing.assert_array_equal(
        a, ae.sampling.draw(q, 1000, random_state=np.random.default_rng(7))
    )
    assert not np.array_equal(a, ae.sampling.draw(q, 1000, random_state=8))
    assert ae.sampling.draw(q, 0, random_state=7).shape == (0,)


# --------------------------------------------------------------------------- 4. validation

Q_OK = np.array([0.2, 0.3, 0.5])
PROBA = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])

BAD_DISTRIBUTIONS = [
    ("sum-below-one", ae.errors.InvalidSamplingDistributionError, [0.2, 0.3, 0.4]),
    ("sum-above-one", ae.errors.InvalidSamplingDistributionError, [0.2, 0.3, 0.6]),
    ("negative", ae.errors.InvalidSamplingDistributionError, [0.7, -0.2, 0.5]),
    ("nan", ae.errors.NonFiniteError, [0.5, np.nan, 0.5]),
    ("inf", ae.errors.NonFiniteError, [np.inf, 0.0, 0.0]),
    ("empty", ae.errors.EmptyPoolError, []),
    ("two-d", ae.errors.ShapeError, [[0.5, 0.5]]),
]


@pytest.mark.parametrize(
    ("exc_type", "q"), [c[1:] for c in BAD_DISTRIBUTIONS], ids=[c[0] for c in BAD_DISTRIBUTIONS]
)
def test_check_distribution_and_draw_reject_invalid_q_naming_it(exc_type, q):
    for call in (lambda: check_distribution(q), lambda: ae.sampling.draw(q, 10, random_state=0)):
        with pytest.raises(exc_type) as info:
            call()
        assert isinstance(info.value, ae.ActiveEvalError)
        assert str(info.value).startswith("q:"), str(info.value)


def test_check_distribution_accepts_valid_q_and_checks_pool_length():
    np.testing.assert_array_equal(check_distribution(Q_OK, n=3), Q_OK)
    with pytest.raises(ae.errors.ShapeError, match=r"^q:"):
        check_distribution(Q_OK, n=4)


def test_draw_rejects_a_negative_number_of_draws():
    with pytest.raises(ae.errors.BudgetError, match=r"^n:"):
        ae.sampling.draw(Q_OK, -1)


BAD_COSTS = [
    ("zero", ae.errors.InvalidCostsError, [1.0, 0.0, 2.0]),
    ("negative", ae.errors.InvalidCostsError, [1.0, -1.0, 2.0]),
    ("nan", ae.errors.NonFiniteError, [1.0, np.nan, 2.0]),
    ("inf", ae.errors.NonFiniteError, [1.0, np.inf, 2.0]),
    ("short", ae.errors.ShapeError, [1.0, 2.0]),
    ("long", ae.errors.ShapeError, [1.0, 2.0, 3.0, 4.0]),
    ("two-d", ae.errors.ShapeError, [[1.0, 2.0, 3.0]]),
]


@pytest.mark.parametrize(
    ("exc_type", "costs"), [c[1:] for c in BAD_COSTS], ids=[c[0] for c in BAD_COSTS]
)
@pytest.mark.parametrize("measure", ["error_rate", "f1", "precision"])
def test_optimal_distribution_rejects_invalid_costs_naming_them(exc_type, costs, measure):
    with pytest.raises(exc_type) as info:
        ae.sampling.optimal_distribution(PROBA, measure, costs=costs)
    assert isinstance(info.value, ae.ActiveEvalError)
    assert str(info.value).startswith("costs:"), str(info.value)


@pytest.mark.parametrize(
    ("exc_type", "costs"), [c[1:] for c in BAD_COSTS[:4]], ids=[c[0] for c in BAD_COSTS[:4]]
)
def test_cost_distribution_rejects_invalid_costs_naming_them(exc_type, costs):
    with pytest.raises(exc_type, match=r"^costs:"):
        ae.sampling.cost_distribution(costs)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("floor", -0.01),
        ("floor", 0.5),
        ("floor", 0.9),
        ("floor", math.nan),
        ("mix", -0.1),
        ("mix", 1.1),
        ("mix", math.nan),
    ],
)
def test_optimal_distribution_rejects_safeguards_out_of_range(argument, value):
    with pytest.raises(ae.ActiveEvalError) as info:
        ae.sampling.optimal_distribution(PROBA, "error_rate", **{argument: value})
    assert str(info.value).startswith(f"{argument}:"), str(info.value)


@pytest.mark.parametrize(
    "weights", [[1.0, 1.0], [1.0, -1.0, 1.0], [0.0, 0.0, 0.0], [1.0, np.nan, 1.0]]
)
def test_pool_weights_are_validated_naming_them(weights):
    for call in (
        lambda: ae.sampling.passive_distribution(3, pool_weights=weights),
        lambda: ae.sampling.optimal_distribution(PROBA, "error_rate", pool_weights=weights),
    ):
        with pytest.raises(ae.ActiveEvalError) as info:
            call()
        assert str(info.value).startswith("pool_weights:"), str(info.value)


def test_mix_zero_warns_when_q_leaves_instances_that_can_move_the_measure_at_zero():
    # F1: a predicted negative with p(pos | x) = 0 has moment (1 − η)²·π·Ǧ² = 0; only the
    # defensive mixture keeps it drawable. With mix = 0 the user is told, not silently misled.
    proba = np.array([[0.1, 0.9], [0.6, 0.4], [1.0, 0.0], [0.3, 0.7]])
    with pytest.warns(ae.ActiveEvalWarning, match="mix=0, q is zero on 1 instances"):
        q = ae.sampling.optimal_distribution(proba, ae.FMeasure(pos_label=1), mix=0.0)
    assert q[2] == 0.0
    q = ae.sampling.optimal_distribution(proba, ae.FMeasure(pos_label=1))  # default mix keeps it
    assert q[2] > 0.0
