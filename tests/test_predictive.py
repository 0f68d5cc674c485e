"""Acceptance tests of activeeval.predictive: supports, expectations, mixtures (eq. 5.11).

Expected values are computed directly: weighted sums over class probabilities written as
loops, closed-form Gaussian moments, and mixtures assembled by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import factorial2

import activeeval as ae


@st.composite
def probability_rows(draw, max_m: int = 10, max_k: int = 5):
    m = draw(st.integers(1, max_m))
    k = draw(st.integers(1, max_k))
    raw = draw(
        hnp.arrays(
            np.float64,
            (m, k),
            elements=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.25, 1.0])),
        )
    )
    raw[raw.sum(axis=1) == 0.0] = 1.0
    return raw / raw.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------- Categorical


@given(proba=probability_rows(), shift=st.integers(-5, 5))
def test_categorical_expectation_is_probability_weighted_sum_over_classes(proba, shift):
    m, k = proba.shape
    labels = np.arange(k) * 3 + shift
    model = ae.Categorical(proba, labels=labels)

    def g(y):
        return y**2 - 2.0 * y

    expected = np.zeros(m)
    for i in range(m):
        for j in range(k):
            expected[i] += proba[i, j] * g(float(labels[j]))
    np.testing.assert_allclose(model.expect(g), expected, rtol=1e-12, atol=1e-12)
    # indicator of one class: its column probability
    np.testing.assert_allclose(
        model.expect(lambda y: (y == labels[-1]).astype(float)), proba[:, -1], atol=1e-15
    )


@given(proba=probability_rows())
def test_categorical_point_prediction_is_argmax_label_first_on_ties(proba):
    k = proba.shape[1]
    labels = np.array([f"class-{j}" for j in range(k)])[::-1]
    model = ae.Categorical(proba, labels=labels)
    for i in range(proba.shape[0]):
        best = proba[i].max()
        first = min(j for j in range(k) if proba[i, j] == best)
        assert model.point_prediction()[i] == labels[first]


def test_categorical_default_labels_are_column_indices():
    model = ae.Categorical([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    np.testing.assert_array_equal(model.labels, [0, 1, 2])
    np.testing.assert_array_equal(model.point_prediction(), [1, 0])
    assert model.n == len(model) == 2


def test_categorical_label_index_and_column_probability_follow_label_order():
    proba = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]])
    model = ae.Categorical(proba, labels=["zeta", "alpha", "mu"])
    np.testing.assert_array_equal(model.label_index(["mu", "zeta", "alpha"]), [2, 0, 1])
    np.testing.assert_allclose(model.column_probability(["alpha", "mu"]), [0.2, 0.4])
    np.testing.assert_allclose(model.column_probability("zeta"), [0.1, 0.3])
    ints = ae.Categorical(proba, labels=[40, -7, 3])
    np.testing.assert_array_equal(ints.label_index([3, 40, -7, 3]), [2, 0, 1, 2])


def test_categorical_take_restricts_rows_in_order_keeping_labels():
    proba = np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    model = ae.Categorical(proba, labels=["n", "y"])
    sub = model.take([2, 0, 0])
    np.testing.assert_array_equal(sub.proba, proba[[2, 0, 0]])
    np.testing.assert_array_equal(sub.point_prediction(), ["n", "y", "y"])
    np.testing.assert_array_equal(sub.label_index(["y", "n"]), [1, 0])
    assert sub.n == 3


def test_probability_rows_within_tolerance_are_accepted():
    ae.Categorical([[0.5, 0.5 + 9e-7]])
    with pytest.raises(ae.errors.ProbabilityRowsError):
        ae.Categorical([[0.5, 0.5 + 2e-6]])


# ---------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize("degree", [*range(1, 12), 20, 31, 38, 39])
def test_gaussian_expectation_is_exact_for_polynomials_below_degree_forty(degree):
    # 20-node Gauss–Hermite: exact for degree ≤ 39. Central moments E(y − μ)^k = σ^k (k − 1)!!
    # for even k and 0 for odd k; rounding is relative to E|y − μ|^k ≤ σ^k k!! scale.
    mean = np.array([0.0, 1.5, -3.0, 10.0])
    var = np.array([1.0, 0.3, 4.0, 0.01])
    model = ae.Gaussian(mean, var)
    got = model.expect(lambda y: (y - mean[:, None]) ** degree)
    sigma_k = np.sqrt(var) ** degree
    expected = sigma_k * factorial2(degree - 1) if degree % 2 == 0 else np.zeros(4)
    scale = sigma_k * factorial2(degree)
    assert np.all(np.abs(got - expected) <= 1e-13 * scale)


def test_gaussian_raw_moments_match_closed_forms():
    mean = np.array([-1.0, 0.0, 2.5])
    var = np.array([0.5, 2.0, 1.0])
    model = ae.Gaussian(mean, var)
    np.testing.assert_allclose(model.expect(lambda y: y), mean, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(model.expect(lambda y: y**2), mean**2 + var, rtol=1e-13)
    np.testing.assert_allclose(
        model.expect(lambda y: y**4), mean**4 + 6 * mean**2 * var + 3 * var**2, rtol=1e-13
    )
    # a smooth non-polynomial: E cos y = exp(−σ²/2) cos μ (quadrature error far below 1e-12)
    np.testing.assert_allclose(
        model.expect(np.cos), np.exp(-var / 2) * np.cos(mean), rtol=0, atol=1e-12
    )


def test_gaussian_with_zero_variance_is_a_point_mass_at_the_mean():
    model = ae.Gaussian([1.0, -2.0], [0.0, 0.0])
    values, probs = model.support()
    np.testing.assert_array_equal(values, np.array([[1.0], [-2.0]]) * np.ones(values.shape[1]))
    assert np.sum(probs) == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_array_equal(model.point_prediction(), [1.0, -2.0])


def test_gaussian_take_restricts_instances():
    model = ae.Gaussian([0.0, 1.0, 2.0], [1.0, 2.0, 3.0])
    sub = model.take([2, 0])
    np.testing.assert_array_equal(sub.mean, [2.0, 0.0])
    np.testing.assert_array_equal(sub.var, [3.0, 1.0])


# ----------------------------------------------------------------------------- Mixture


@given(j=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_mixture_support_is_weighted_concatenation_and_collapse_is_weighted_average(j, seed):
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(1, 8)), int(rng.integers(2, 5))
    probas = [rng.dirichlet(np.full(k, 0.6), size=m) for _ in range(j)]
    weights = rng.dirichlet(np.ones(j))
    labels = np.array(["x", "w", "v", "u"][:k])
    mix = ae.Mixture([ae.Categorical(p, labels=labels) for p in probas], weights=weights)
    values, probs = mix.support()
    assert probs.shape == (m, j * k)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    for part in range(j):
        np.testing.assert_allclose(
            probs[:, part * k : (part + 1) * k], weights[part] * probas[part], atol=1e-15
        )
        np.testing.assert_array_equal(np.broadcast_to(values, (m, j * k))[:, part * k], labels[0])
    mixed = sum(w * p for w, p in zip(weights, probas, strict=True))
    collapsed = mix.collapse()
    assert isinstance(collapsed, ae.Categorical)
    np.testing.assert_allclose(collapsed.proba, mixed, atol=1e-15)
    np.testing.assert_array_equal(collapsed.labels, labels)
    np.testing.assert_array_equal(mix.point_prediction(), labels[np.argmax(mixed, axis=1)])
    # any expectation is the weighted sum of the parts' expectations (eq. 5.13)
    ind = mix.expect(lambda y: (y == "w").astype(float))
    np.testing.assert_allclose(ind, mixed[:, 1], atol=1e-14)


def test_mixture_weights_default_to_uniform_and_nested_mixtures_collapse():
    a = ae.Categorical([[1.0, 0.0], [0.2, 0.8]])
    b = ae.Categorical([[0.0, 1.0], [0.6, 0.4]])
    c = ae.Categorical([[0.5, 0.5], [1.0, 0.0]])
    flat = ae.Mixture([a, b])
    np.testing.assert_allclose(flat.weights, [0.5, 0.5])
    np.testing.assert_allclose(flat.collapse().proba, [[0.5, 0.5], [0.4, 0.6]])
    nested = ae.Mixture([flat, c], weights=[0.5, 0.5])
    expected = 0.25 * a.proba + 0.25 * b.proba + 0.5 * c.proba
    np.testing.assert_allclose(nested.collapse().proba, expected, atol=1e-15)
    np.testing.assert_allclose(nested.expect(lambda y: y.astype(float)), expected[:, 1], atol=1e-15)
    sub = nested.take([1])
    np.testing.assert_allclose(sub.collapse().proba, expected[[1]], atol=1e-15)


def test_mixture_of_gaussians_predicts_the_mixture_mean_and_has_mixture_moments():
    g1 = ae.Gaussian([0.0, 2.0], [1.0, 0.5])
    g2 = ae.Gaussian([4.0, -2.0], [2.0, 0.1])
    w = np.array([0.25, 0.75])
    mix = ae.Mixture([g1, g2], weights=w)
    assert mix.collapse() is None
    mean = w[0] * g1.mean + w[1] * g2.mean
    np.testing.assert_allclose(mix.point_prediction(), mean, rtol=1e-13, atol=1e-14)
    second = w[0] * (g1.mean**2 + g1.var) + w[1] * (g2.mean**2 + g2.var)
    np.testing.assert_allclose(mix.expect(lambda y: y**2), second, rtol=1e-13)
    assert mix.n == 2
    np.testing.assert_allclose(mix.take([1]).point_prediction(), mean[[1]], rtol=1e-13)


# -------------------------------------------------------------------------- as_predictive


def test_as_predictive_passes_predictives_through_and_reads_matrices_as_probabilities():
    g = ae.Gaussian([0.0], [1.0])
    assert ae.as_predictive(g) is g
    model = ae.as_predictive([[0.3, 0.7], [0.9, 0.1]])
    assert isinstance(model, ae.Categorical)
    np.testing.assert_array_equal(model.labels, [0, 1])
    np.testing.assert_array_equal(model.point_prediction(), [1, 0])
    assert math.isclose(model.proba.sum(), 2.0)
