"""Acceptance tests of activeeval.measures: conditional moments and intrinsic values.

The single rule (thesis Thm 4.1 and Cor. 3.1): for a generalized risk with weight w and loss ℓ,
the quantities that drive optimal sampling are E[w ℓ | x], E[w | x] and E[w² (ℓ − c)² | x]
under the model's predictive distribution. Here they are computed by direct enumeration over
the classes (Categorical) or by scipy.integrate.quad (Gaussian) from the definitions, and
compared with both the closed forms (fast=True) and the library's general rule (fast=False).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate

import activeeval as ae

# ------------------------------------------------------------------ pools from hypothesis

LABEL_KINDS = ("range", "shuffled-int", "str")


@st.composite
def categorical_pools(draw, max_m: int = 12, min_k: int = 2, max_k: int = 5):
    """(proba, labels) with rows on the simplex, including one-hot rows and exact ties."""
    m = draw(st.integers(1, max_m))
    k = draw(st.integers(min_k, max_k))
    raw = draw(
        hnp.arrays(
            np.float64,
            (m, k),
            elements=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0])),
        )
    )
    raw[raw.sum(axis=1) == 0.0] = 1.0
    proba = raw / raw.sum(axis=1, keepdims=True)
    kind = draw(st.sampled_from(LABEL_KINDS))
    if kind == "range":
        labels = np.arange(k)
    elif kind == "shuffled-int":
        labels = np.array(draw(st.permutations([13, -2, 5, 0, 42][:k])))
    else:
        labels = np.array(draw(st.permutations(["b", "a", "zeta", "mu", "c"][:k])))
    return proba, labels


@st.composite
def pools_with_predictions(draw, **kwargs):
    """A pool plus the prediction per instance: the argmax, or arbitrary labels."""
    proba, labels = draw(categorical_pools(**kwargs))
    m, k = proba.shape
    if draw(st.booleans()):
        pred = labels[np.argmax(proba, axis=1)]
        explicit = None
    else:
        cols = draw(st.lists(st.integers(0, k - 1), min_size=m, max_size=m))
        pred = labels[np.array(cols)]
        explicit = pred
    return proba, labels, pred, explicit


# ------------------------------------------------------- definitions written out directly


def _eta(beta: float) -> float:
    return 1.0 / (1.0 + beta**2)  # β = inf gives η = 0 (recall)


def _definition(kind: str, labels: np.ndarray, rng_seed: int = 0):
    """(measure factory, loss(f, y), weight(f, y)) from the definitions, as scalar functions.

    F-measures follow Cor. 3.1 on one-vs-rest labels: f' = 1[f = pos], y' = 1[y = pos],
    w = η f' + (1 − η) y', ℓ = 1 − ℓ_0/1(f', y').
    """
    if kind == "error_rate":
        return ae.ErrorRate(), lambda f, y: float(f != y), lambda f, y: 1.0
    if kind == "accuracy":
        return ae.Accuracy(), lambda f, y: float(f == y), lambda f, y: 1.0
    if kind == "cost_matrix":
        rng = np.random.default_rng(rng_seed)
        k = labels.shape[0]
        cost = rng.uniform(0.0, 3.0, size=(k, k))
        order = rng.permutation(k)  # the measure's label order differs from the model's
        meas_labels = labels[order]
        where = {lab: i for i, lab in enumerate(meas_labels.tolist())}
        return (
            ae.CostMatrixLoss(cost, labels=meas_labels),
            lambda f, y: float(cost[where[y], where[f]]),  # rows: true, columns: predicted
            lambda f, y: 1.0,
        )
    beta = {"precision": 0.0, "recall": math.inf}.get(kind)
    if beta is None:
        beta = float(kind.split(":")[1])
    pos = labels[rng_seed % labels.shape[0]]
    eta = _eta(beta)
    if kind == "precision":
        meas = ae.Precision(pos_label=pos)
    elif kind == "recall":
        meas = ae.Recall(pos_label=pos)
    else:
        meas = ae.FMeasure(beta=beta, pos_label=pos)

    def weight(f, y):
        return eta * float(f == pos) + (1.0 - eta) * float(y == pos)

    def loss(f, y):
        return 1.0 - float((f == pos) != (y == pos))

    return meas, loss, weight


def _enumerate(proba, labels, pred, loss, weight, c: float):
    """E[wℓ|x], E[w|x], E[w²(ℓ−c)²|x] by a loop over instances and classes."""
    m, k = proba.shape
    e_wl, e_w, e_sq = np.zeros(m), np.zeros(m), np.zeros(m)
    for i in range(m):
        for j in range(k):
            y = labels[j].item()
            f = pred[i].item()
            w, ell = weight(f, y), loss(f, y)
            e_wl[i] += proba[i, j] * w * ell
            e_w[i] += proba[i, j] * w
            e_sq[i] += proba[i, j] * w**2 * (ell - c) ** 2
    return e_wl, e_w, e_sq


CLASSIFICATION_MEASURES = [
    "error_rate",
    "accuracy",
    "cost_matrix",
    "precision",
    "recall",
    "f:0.5",
    "f:1",
    "f:2",
    "f:0.1",
    "f:10",
]


# --------------------------------------------------- 4. conditional moments, Categorical


@pytest.mark.parametrize("kind", CLASSIFICATION_MEASURES)
@settings(max_examples=30)  # per measure; 10 measures
@given(
    pool=pools_with_predictions(),
    c=st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 0.5, 1.0])),
    seed=st.integers(0, 1000),
)
def test_categorical_moments_fast_and_general_rule_equal_enumeration_of_definition(
    kind, pool, c, seed
):
    proba, labels, pred, explicit = pool
    meas, loss, weight = _definition(kind, labels, seed)
    model = ae.Categorical(proba, labels=labels)
    e_wl, e_w, e_sq = _enumerate(proba, labels, pred, loss, weight, c)
    got = {}
    for fast in (True, False):
        wl, w = meas.conditional_expectations(model, explicit, fast=fast)
        np.testing.assert_allclose(wl, e_wl, rtol=0, atol=1e-10)
        np.testing.assert_allclose(w, e_w, rtol=0, atol=1e-10)
        sq = meas.conditional_second_moment(model, c, explicit, fast=fast)
        np.testing.assert_allclose(sq, e_sq, rtol=0, atol=1e-10)
        got[fast] = (wl, w, sq)
    # the closed form (fast path) and the general rule (summation over the support) agree
    for a, b in zip(got[True], got[False], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_error_rate_closed_form_equals_cor_4_2_by_hand():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.4, 0.4, 0.2]])
    c = 0.23
    pi = proba.max(axis=1)  # the argmax's probability (ties: first column, same value)
    expected = (1 - 2 * c) * (1 - pi) + c**2  # eq. 4.14 under the square root
    got = ae.ErrorRate().conditional_second_moment(ae.Categorical(proba), c)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_f_measure_closed_form_equals_cor_4_4_by_hand():
    p1 = np.array([0.9, 0.6, 0.3, 0.05])
    proba = np.column_stack([1 - p1, p1])
    g, eta = 0.7, 1 / (1 + 2.0**2)
    model = ae.Categorical(proba)
    predicted_pos = p1 >= 0.5
    expected = np.where(
        predicted_pos,
        p1 * (1 - g) ** 2 + eta**2 * (1 - p1) * g**2,  # eq. 4.18, f(x) = 1
        (1 - eta) ** 2 * p1 * g**2,  # eq. 4.18, f(x) = 0 (squared)
    )
    got = ae.FMeasure(beta=2.0).bind(model).conditional_second_moment(model, g)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    # precision, eq. 4.20: f(x)·((1 − 2G) p(f(x)|x) + G²)
    expected = np.where(predicted_pos, (1 - 2 * g) * p1 + g**2, 0.0)
    got = ae.Precision().bind(model).conditional_second_moment(model, g)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    # recall, eq. 4.19
    expected = np.where(predicted_pos, p1 * (1 - g) ** 2, p1 * g**2)
    got = ae.Recall().bind(model).conditional_second_moment(model, g)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_f_measure_positive_class_defaults_to_the_larger_of_two_labels_including_strings():
    proba = np.array([[0.2, 0.8], [0.6, 0.4]])
    for labels, largest in [([10, -1], 10), (["emu", "cat"], "emu")]:
        model = ae.Categorical(proba, labels=labels)
        assert ae.FMeasure().bind(model).pos_label == largest
        assert ae.Recall().bind(model).pos_label == largest
        mix = ae.Mixture([model, model], weights=[0.3, 0.7])
        assert ae.FMeasure(beta=2.0).bind(mix).pos_label == largest


@pytest.mark.parametrize("meas", [ae.FMeasure(), ae.Precision(), ae.Recall()])
def test_one_class_measure_on_many_classes_needs_its_class(meas):
    """With three classes 'f1' used to score the largest label one-vs-rest without a word;
    now the positive class must be named, or an average or per-class measure chosen."""
    model = ae.Categorical(np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2]]), labels=["a", "b", "c"])
    with pytest.raises(ae.errors.LabelSpaceError, match=r"pos_label.*per_class"):
        meas.bind(model)
    assert replace(meas, pos_label="b").bind(model).pos_label == "b"


def test_f_measure_eta_maps_beta_to_thesis_trade_off():
    assert ae.FMeasure(beta=1.0).eta == 0.5
    assert ae.FMeasure(beta=2.0).eta == pytest.approx(0.2, abs=1e-15)
    assert ae.Precision().eta == 1.0
    assert ae.Recall().eta == 0.0
    assert ae.FMeasure(beta=math.inf).eta == 0.0


# ------------------------------------------------------ 4. conditional moments, Gaussian

gaussian_pools = st.integers(1, 4).flatmap(
    lambda m: st.tuples(
        hnp.arrays(np.float64, m, elements=st.floats(-5.0, 5.0)),  # mean
        hnp.arrays(np.float64, m, elements=st.floats(0.05, 9.0)),  # var
        hnp.arrays(np.float64, m, elements=st.floats(-5.0, 5.0)),  # prediction f(x)
    )
)


def _quad_gaussian(g, mean: float, var: float, kink: float) -> tuple[float, float]:
    """∫ g(y) N(y | mean, var) dy by adaptive quadrature in z = (y − mean)/σ, split at the
    loss's kink; returns (value, quad's error estimate). The density is below 1e-300 beyond
    |z| = 37, so truncating at |z| = 40 + |kink| loses nothing in double precision."""
    s = math.sqrt(var)
    z0 = (kink - mean) / s
    half = 40.0 + abs(z0)
    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)
    val, err = integrate.quad(
        lambda z: g(mean + s * z) * math.exp(-0.5 * z * z) * inv_sqrt_2pi,
        -half,
        half,
        points=[z0],
        epsabs=1e-14,
        epsrel=1e-13,
        limit=500,
    )
    return val, err


def _assert_close_to_quad(got: float, val: float, err: float) -> None:
    # quad's own error estimate must be negligible next to the tolerance for the comparison to
    # be meaningful; the tolerance is 1e-10 relative to max(1, |value|) plus that estimate.
    scale = max(1.0, abs(val))
    assert err <= 1e-11 * scale
    assert abs(got - val) <= 1e-10 * scale + err


@settings(max_examples=30)
@given(pool=gaussian_pools, c=st.floats(0.0, 20.0))
def test_squared_error_gaussian_moments_equal_numerical_integration(pool, c):
    mean, var, pred = pool
    model = ae.Gaussian(mean, var)
    meas = ae.SquaredError()
    wl, w = meas.conditional_expectations(model, pred)
    sq = meas.conditional_second_moment(model, c, pred)
    np.testing.assert_array_equal(w, 1.0)
    for i in range(mean.shape[0]):
        f = pred[i]
        val, err = _quad_gaussian(lambda y, f=f: (f - y) ** 2, mean[i], var[i], f)
        _assert_close_to_quad(wl[i], val, err)
        val, err = _quad_gaussian(lambda y, f=f: ((f - y) ** 2 - c) ** 2, mean[i], var[i], f)
        _assert_close_to_quad(sq[i], val, err)


@settings(max_examples=30)
@given(pool=gaussian_pools, c=st.floats(0.0, 10.0))
def test_absolute_error_gaussian_moments_equal_numerical_integration(pool, c):
    mean, var, pred = pool
    model = ae.Gaussian(mean, var)
    meas = ae.AbsoluteError()
    wl, w = meas.conditional_expectations(model, pred)
    sq = meas.conditional_second_moment(model, c, pred)
    np.testing.assert_array_equal(w, 1.0)
    for i in range(mean.shape[0]):
        f = pred[i]
        val, err = _quad_gaussian(lambda y, f=f: abs(f - y), mean[i], var[i], f)
        _assert_close_to_quad(wl[i], val, err)
        val, err = _quad_gaussian(lambda y, f=f: (abs(f - y) - c) ** 2, mean[i], var[i], f)
        _assert_close_to_quad(sq[i], val, err)


@given(pool=gaussian_pools, c=st.floats(0.0, 50.0), explicit=st.booleans())
def test_squared_error_fast_path_equals_gauss_hermite_general_rule(pool, c, explicit):
    # 20-node Gauss–Hermite quadrature is exact for polynomials of degree ≤ 39; the integrand
    # ((f − y)² − c)² has degree 4, so the two agree to rounding. Rounding is relative to the
    # size of the terms that cancel, E[ℓ²] + c², hence the scaled absolute tolerance.
    mean, var, pred = pool
    model = ae.Gaussian(mean, var)
    pred_arg = pred if explicit else None
    f = pred if explicit else mean
    meas = ae.SquaredError()
    fast = meas.conditional_second_moment(model, c, pred_arg, fast=True)
    general = meas.conditional_second_moment(model, c, pred_arg, fast=False)
    d2 = (mean - f) ** 2
    scale = d2**2 + 6 * d2 * var + 3 * var**2 + c**2 + 1.0
    assert np.all(np.abs(fast - general) <= 1e-12 * scale)
    wl_fast, _ = meas.conditional_expectations(model, pred_arg, fast=True)
    wl_general, _ = meas.conditional_expectations(model, pred_arg, fast=False)
    np.testing.assert_allclose(wl_fast, wl_general, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wl_fast, d2 + var, rtol=1e-14, atol=0)  # E(f − y)², eq. 4.17


def test_gaussian_moments_with_zero_and_subnormal_variance_are_point_masses():
    mean = np.array([0.0, 1.0, -2.0])
    pred = np.array([1.0, 1.0, 0.5])
    c = 0.3
    for var in (np.zeros(3), np.full(3, 1e-320)):
        model = ae.Gaussian(mean, var)
        for meas, ell in [
            (ae.SquaredError(), (pred - mean) ** 2),
            (ae.AbsoluteError(), np.abs(pred - mean)),
        ]:
            wl, _ = meas.conditional_expectations(model, pred)
            np.testing.assert_allclose(wl, ell, rtol=0, atol=1e-15)
            sq = meas.conditional_second_moment(model, c, pred)
            np.testing.assert_allclose(sq, (ell - c) ** 2, rtol=0, atol=1e-15)


# -------------------------------------------------------------- 4. mixtures (eq. 5.11)


@st.composite
def categorical_mixtures(draw):
    proba, labels = draw(categorical_pools(max_m=8))
    m, k = proba.shape
    j = draw(st.integers(2, 4))
    parts = [proba]
    for _ in range(j - 1):
        raw = draw(hnp.arrays(np.float64, (m, k), elements=st.floats(0.0, 1.0)))
        raw[raw.sum(axis=1) == 0.0] = 1.0
        parts.append(raw / raw.sum(axis=1, keepdims=True))
    raw_w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=j, max_size=j)))
    return parts, labels, raw_w / raw_w.sum()


@pytest.mark.parametrize("kind", ["error_rate", "accuracy", "cost_matrix", "f:1", "f:2", "recall"])
@settings(max_examples=25)
@given(mix=categorical_mixtures(), c=st.floats(0.0, 1.0), seed=st.integers(0, 100))
def test_mixture_moments_equal_weighted_parts_and_enumeration_over_mixture(kind, mix, c, seed):
    parts, labels, weights = mix
    meas, loss, weight = _definition(kind, labels, seed)
    models = [ae.Categorical(p, labels=labels) for p in parts]
    mixture = ae.Mixture(models, weights=weights)
    mixed = sum(w * p for w, p in zip(weights, parts, strict=True))
    pred = labels[np.argmax(mixed, axis=1)]  # prediction of the mixture: its own mode
    # (a) enumeration over the mixture's class probabilities
    e_wl, e_w, e_sq = _enumerate(mixed, labels, pred, loss, weight, c)
    # (b) weighted sum of each part's moments at the mixture's prediction (eq. 5.13)
    parts_sq = sum(
        w * meas.conditional_second_moment(mdl, c, pred)
        for w, mdl in zip(weights, models, strict=True)
    )
    parts_wl = sum(
        w * meas.conditional_expectations(mdl, pred)[0]
        for w, mdl in zip(weights, models, strict=True)
    )
    for fast in (True, False):
        sq = meas.conditional_second_moment(mixture, c, fast=fast)
        np.testing.assert_allclose(sq, e_sq, rtol=0, atol=1e-10)
        np.testing.assert_allclose(sq, parts_sq, rtol=0, atol=1e-10)
        wl, w = meas.conditional_expectations(mixture, fast=fast)
        np.testing.assert_allclose(wl, e_wl, rtol=0, atol=1e-10)
        np.testing.assert_allclose(wl, parts_wl, rtol=0, atol=1e-10)
        np.testing.assert_allclose(w, e_w, rtol=0, atol=1e-10)
    # the collapsed Categorical gives the same moments
    collapsed = mixture.collapse()
    np.testing.assert_allclose(
        meas.conditional_second_moment(collapsed, c), e_sq, rtol=0, atol=1e-10
    )


def test_mixture_of_gaussians_squared_error_moments_equal_weighted_parts():
    rng = np.random.default_rng(3)
    m = 7
    gs = [ae.Gaussian(rng.normal(size=m), rng.gamma(2.0, size=m)) for _ in range(3)]
    weights = np.array([0.5, 0.2, 0.3])
    mixture = ae.Mixture(gs, weights=weights)
    pred = sum(w * g.mean for w, g in zip(weights, gs, strict=True))  # mixture mean
    np.testing.assert_allclose(mixture.point_prediction(), pred, rtol=1e-12, atol=1e-14)
    c = 1.7
    expected = 0.0
    for w, g in zip(weights, gs, strict=True):
        d2 = (g.mean - pred) ** 2
        m2 = d2 + g.var
        m4 = d2**2 + 6 * d2 * g.var + 3 * g.var**2
        expected = expected + w * (m4 - 2 * c * m2 + c**2)
    meas = ae.SquaredError()
    for fast in (True, False):
        got = meas.conditional_second_moment(mixture, c, fast=fast)
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=0)


# ------------------------------------------------------------ 4. intrinsic value (eq. 4.21)


@pytest.mark.parametrize("kind", CLASSIFICATION_MEASURES)
@settings(max_examples=30)
@given(
    pool=pools_with_predictions(),
    seed=st.integers(0, 1000),
    use_weights=st.booleans(),
)
def test_intrinsic_value_equals_direct_formula(kind, pool, seed, use_weights):
    proba, labels, pred, explicit = pool
    meas, loss, weight = _definition(kind, labels, seed)
    model = ae.Categorical(proba, labels=labels)
    m = proba.shape[0]
    pw = np.random.default_rng(seed).uniform(0.1, 3.0, m) if use_weights else np.ones(m)
    e_wl, e_w, _ = _enumerate(proba, labels, pred, loss, weight, 0.0)
    den = pw @ e_w
    if den <= 1e-12:
        return  # undefined; tested separately
    expected = (pw @ e_wl) / den  # eq. 4.21 with p(x) ∝ pool weight
    got = meas.intrinsic_value(model, explicit, pool_weights=pw if use_weights else None)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_intrinsic_error_rate_is_mean_probability_of_not_the_prediction():
    proba = np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5], [0.1, 0.9]])
    model = ae.Categorical(proba)
    # argmax prediction: eq. 4.22 gives mean(1 − max_k p_k)
    assert ae.ErrorRate().intrinsic_value(model) == pytest.approx(np.mean(1 - proba.max(1)))
    # an explicit prediction that differs from the argmax on two instances
    pred = np.array([1, 1, 0, 0])
    expected = np.mean(1 - proba[np.arange(4), pred])
    assert ae.ErrorRate().intrinsic_value(model, pred) == pytest.approx(expected, abs=1e-15)
    pw = np.array([1.0, 2.0, 0.5, 4.0])
    expected = pw @ (1 - proba[np.arange(4), pred]) / pw.sum()
    assert ae.ErrorRate().intrinsic_value(model, pred, pool_weights=pw) == pytest.approx(
        expected, abs=1e-15
    )


def test_intrinsic_mse_of_gaussian_is_mean_of_bias_squared_plus_variance():
    mean = np.array([0.0, 1.0, 3.0])
    var = np.array([1.0, 0.5, 2.0])
    model = ae.Gaussian(mean, var)
    assert ae.SquaredError().intrinsic_value(model) == pytest.approx(var.mean(), abs=1e-15)
    pred = np.array([1.0, 1.0, 1.0])
    expected = np.mean((mean - pred) ** 2 + var)
    assert ae.SquaredError().intrinsic_value(model, pred) == pytest.approx(expected, abs=1e-14)


def test_intrinsic_precision_of_model_without_predicted_positives_is_nan_with_warning():
    model = ae.Categorical(np.array([[0.9, 0.1], [0.6, 0.4]]))
    with pytest.warns(ae.UndefinedEstimateWarning):
        assert math.isnan(ae.Precision(pos_label=1).intrinsic_value(model))


# ----------------------------------------------------------- per-instance loss and weight


def test_cost_matrix_loss_indexes_rows_by_true_and_columns_by_predicted_label():
    cost = np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 5.0], [3.0, 6.0, 0.0]])
    meas = ae.CostMatrixLoss(cost, labels=["a", "b", "c"])
    pred = np.array(["a", "b", "c", "a", "c"])
    y = np.array(["b", "c", "a", "a", "b"])
    # cost[true, predicted]: (b, a) → cost[1, 0], (c, b) → cost[2, 1], ...
    np.testing.assert_array_equal(meas.loss(pred, y), [2.0, 6.0, 4.0, 0.0, 5.0])
    # a unit off-diagonal cost matrix is the zero-one loss
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 50)
    pred = rng.integers(0, 4, 50)
    zero_one = ae.CostMatrixLoss(1.0 - np.eye(4))
    assert ae.estimators.inference.estimate(zero_one, pred, y).estimate == pytest.approx(
        np.mean(pred != y)
    )


def test_cost_matrix_loss_binds_to_model_labels():
    model = ae.Categorical(np.array([[0.2, 0.8], [0.9, 0.1]]), labels=["no", "yes"])
    cost = np.array([[0.0, 1.0], [5.0, 0.0]])  # a missed "yes" costs 5
    est = ae.estimators.inference.estimate(ae.CostMatrixLoss(cost), model, ["no", "yes"])
    assert est.estimate == pytest.approx((1.0 + 5.0) / 2)


def test_named_measures_resolve_to_their_classes():
    assert isinstance(ae.get_measure("error_rate"), ae.ErrorRate)
    assert isinstance(ae.get_measure("Accuracy"), ae.Accuracy)
    assert isinstance(ae.get_measure("mse"), ae.SquaredError)
    assert isinstance(ae.get_measure("mae"), ae.AbsoluteError)
    f1 = ae.get_measure("f1", pos_label="x")
    assert isinstance(f1, ae.FMeasure) and f1.beta == 1.0 and f1.pos_label == "x"
    assert isinstance(ae.get_measure("precision"), ae.Precision)
    assert isinstance(ae.get_measure("recall"), ae.Recall)
    meas = ae.FMeasure(beta=2.0)
    assert ae.get_measure(meas) is meas
    assert ae.ErrorRate().greater_is_better is False
    assert ae.Accuracy().greater_is_better is True
    assert ae.FMeasure().greater_is_better is True
    assert ae.SquaredError().binary_loss is False
