"""Acceptance tests of input validation at the public boundary of the statistical core.

Every error the core raises is an :class:`ActiveEvalError` (itself a ``ValueError``) of a specific
type, and its message starts with the name of the offending argument (house style).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import activeeval as ae
from activeeval import errors
from activeeval._validation import check_costs, check_level, check_option, check_probability_rows

PROBA = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
POINT = np.array([1, 0, 0])
LABELS = np.array([1, 1, 0])


def _model() -> ae.Categorical:
    return ae.Categorical(PROBA, labels=["neg", "pos"])


def _estimate() -> ae.estimators.inference.Estimate:
    return ae.estimators.inference.estimate("error_rate", POINT, LABELS)


def _comparison() -> ae.estimators.inference.Comparison:
    return ae.estimators.inference.paired_test("error_rate", [POINT, 1 - POINT], LABELS)


def _multiple() -> ae.estimators.inference.MultipleComparison:
    return ae.estimators.inference.multiple_comparison(
        "error_rate", [POINT, 1 - POINT, LABELS], LABELS
    )


# (exception type, argument named in the message, call)
CASES: list[tuple[str, type[ae.ActiveEvalError], str, Callable[[], Any]]] = [
    # --- class probabilities
    ("row-sum", ae.errors.ProbabilityRowsError, "proba", lambda: ae.Categorical([[0.5, 0.4]])),
    (
        "row-sum-matrix-input",
        ae.errors.ProbabilityRowsError,
        "predictions",
        lambda: ae.estimators.inference.estimate("error_rate", [[0.5, 0.4], [0.5, 0.5]], [0, 1]),
    ),
    (
        "proba-negative",
        ae.errors.ProbabilityRowsError,
        "proba",
        lambda: ae.Categorical([[1.2, -0.2]]),
    ),
    (
        "proba-above-one",
        ae.errors.ProbabilityRowsError,
        "proba",
        lambda: ae.Categorical([[0.0, 1.0], [1.5, 0.0]]),
    ),
    ("proba-nan", ae.errors.NonFiniteError, "proba", lambda: ae.Categorical([[np.nan, 1.0]])),
    ("proba-inf", ae.errors.NonFiniteError, "proba", lambda: ae.Categorical([[np.inf, 0.0]])),
    ("proba-1d", ae.errors.ShapeError, "proba", lambda: ae.Categorical([0.5, 0.5])),
    ("proba-no-columns", ae.errors.ShapeError, "proba", lambda: ae.Categorical(np.zeros((2, 0)))),
    ("proba-empty", ae.errors.EmptyPoolError, "proba", lambda: ae.Categorical(np.zeros((0, 2)))),
    ("proba-not-numeric", ae.errors.ShapeError, "proba", lambda: ae.Categorical([["a", "b"]])),
    # --- class labels
    (
        "labels-duplicate",
        ae.errors.LabelSpaceError,
        "labels",
        lambda: ae.Categorical(PROBA, labels=["a", "a"]),
    ),
    (
        "labels-count",
        ae.errors.ShapeError,
        "labels",
        lambda: ae.Categorical(PROBA, labels=["a", "b", "c"]),
    ),
    (
        "label-outside-space",
        ae.errors.LabelSpaceError,
        "labels",
        lambda: ae.estimators.inference.estimate("error_rate", _model(), ["pos", "neg", "maybe"]),
    ),
    (
        "label-wrong-type",
        ae.errors.LabelSpaceError,
        "labels",
        lambda: ae.estimators.inference.estimate("error_rate", _model(), [1, 0, 1]),
    ),
    (
        "label-outside-default-space",
        ae.errors.LabelSpaceError,
        "labels",
        lambda: ae.estimators.inference.estimate("accuracy", PROBA, [0, 1, 2]),
    ),
    (
        "prediction-outside-space",
        ae.errors.LabelSpaceError,
        "prediction",
        lambda: ae.ErrorRate().conditional_expectations(_model(), np.array(["pos", "x", "neg"])),
    ),
    # --- Gaussian
    ("mean-nan", ae.errors.NonFiniteError, "mean", lambda: ae.Gaussian([0.0, np.nan], [1.0, 1.0])),
    ("mean-inf", ae.errors.NonFiniteError, "mean", lambda: ae.Gaussian([-np.inf], [1.0])),
    ("var-nan", ae.errors.NonFiniteError, "var", lambda: ae.Gaussian([0.0], [np.nan])),
    ("var-inf", ae.errors.NonFiniteError, "var", lambda: ae.Gaussian([0.0], [np.inf])),
    (
        "var-negative",
        ae.errors.InvalidVarianceError,
        "var",
        lambda: ae.Gaussian([0.0, 1.0], [1.0, -0.1]),
    ),
    ("var-length", ae.errors.ShapeError, "var", lambda: ae.Gaussian([1.0, 2.0], [1.0])),
    ("mean-2d", ae.errors.ShapeError, "mean", lambda: ae.Gaussian([[1.0]], [[1.0]])),
    ("mean-empty", ae.errors.EmptyPoolError, "mean", lambda: ae.Gaussian([], [])),
    ("mean-not-numeric", ae.errors.ShapeError, "mean", lambda: ae.Gaussian(["a"], [1.0])),
    (
        "regression-labels-nan",
        ae.errors.NonFiniteError,
        "labels",
        lambda: ae.estimators.inference.estimate(
            "mse", ae.Gaussian([1.0, 2.0], [1.0, 1.0]), [1.0, np.nan]
        ),
    ),
    (
        "regression-labels-inf",
        ae.errors.NonFiniteError,
        "labels",
        lambda: ae.estimators.inference.estimate("mae", np.array([1.0, 2.0]), [np.inf, 1.0]),
    ),
    (
        "regression-point-predictions-nan",
        ae.errors.NonFiniteError,
        "predictions",
        lambda: ae.estimators.inference.estimate("mse", np.array([1.0, np.nan]), [1.0, 2.0]),
    ),
    # --- Mixture
    ("mixture-empty", ae.errors.ShapeError, "parts", lambda: ae.Mixture([])),
    ("mixture-not-predictive", ae.errors.ShapeError, "parts", lambda: ae.Mixture([PROBA])),
    (
        "mixture-pool-size",
        ae.errors.ShapeError,
        "parts",
        lambda: ae.Mixture([ae.Categorical(PROBA), ae.Categorical(PROBA[:2])]),
    ),
    (
        "mixture-mixed-kinds",
        ae.errors.ShapeError,
        "parts",
        lambda: ae.Mixture([ae.Categorical(PROBA), ae.Gaussian([0.0, 1.0, 2.0], [1.0] * 3)]),
    ),
    (
        "mixture-nested-mixed-kinds",
        ae.errors.ShapeError,
        "parts",
        lambda: ae.Mixture(
            [ae.Mixture([ae.Categorical(PROBA)]), ae.Gaussian([0.0, 1.0, 2.0], [1.0] * 3)]
        ),
    ),
    (
        "mixture-labels",
        ae.errors.LabelSpaceError,
        "parts",
        lambda: ae.Mixture([ae.Categorical(PROBA), _model()]),
    ),
    (
        "mixture-weights-sum",
        ae.errors.ShapeError,
        "weights",
        lambda: ae.Mixture([ae.Categorical(PROBA)] * 2, weights=[0.3, 0.3]),
    ),
    (
        "mixture-weights-negative",
        ae.errors.ShapeError,
        "weights",
        lambda: ae.Mixture([ae.Categorical(PROBA)] * 2, weights=[1.5, -0.5]),
    ),
    (
        "mixture-weights-count",
        ae.errors.ShapeError,
        "weights",
        lambda: ae.Mixture([ae.Categorical(PROBA)] * 2, weights=[1.0]),
    ),
    (
        "mixture-weights-nan",
        ae.errors.NonFiniteError,
        "weights",
        lambda: ae.Mixture([ae.Categorical(PROBA)] * 2, weights=[np.nan, 1.0]),
    ),
    # --- predictions and samples
    (
        "as-predictive-1d",
        ae.errors.ShapeError,
        "predictions",
        lambda: ae.as_predictive([0.2, 1.8]),  # a 1-d array is P(class 1): 1.8 is not one
    ),
    (
        "prediction-shape",
        ae.errors.ShapeError,
        "prediction",
        lambda: ae.ErrorRate().conditional_second_moment(ae.Categorical(PROBA), 0.1, POINT[:2]),
    ),
    (
        "predictions-count",
        ae.errors.ShapeError,
        "predictions",
        lambda: ae.estimators.inference.estimate("error_rate", PROBA, [0, 1]),
    ),
    (
        "point-predictions-count",
        ae.errors.ShapeError,
        "predictions",
        lambda: ae.estimators.inference.estimate("error_rate", POINT[:2], LABELS),
    ),
    (
        "second-model-count",
        ae.errors.ShapeError,
        "predictions[1]",
        lambda: ae.estimators.inference.paired_test("error_rate", [POINT, POINT[:2]], LABELS),
    ),
    (
        "labels-2d",
        ae.errors.ShapeError,
        "labels",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, [LABELS]),
    ),
    (
        "labels-empty",
        ae.errors.EmptyPoolError,
        "labels",
        lambda: ae.estimators.inference.estimate("error_rate", np.array([]), []),
    ),
    (
        "paired-three-models",
        ae.errors.ShapeError,
        "predictions",
        lambda: ae.estimators.inference.paired_test("error_rate", [POINT, POINT, POINT], LABELS),
    ),
    (
        "multiple-one-model",
        ae.errors.ShapeError,
        "predictions",
        lambda: ae.estimators.inference.multiple_comparison("error_rate", [POINT], LABELS),
    ),
    (
        "indices-shape",
        ae.errors.ShapeError,
        "indices",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, indices=[0, 1]),
    ),
    # --- sampling probabilities and pool weights
    (
        "q-zero",
        ae.errors.InvalidSamplingDistributionError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, 0.0, 0.2]),
    ),
    (
        "q-negative",
        ae.errors.InvalidSamplingDistributionError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, -0.1, 0.2]),
    ),
    (
        "q-above-one",
        ae.errors.InvalidSamplingDistributionError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, 1.5, 0.2]),
    ),
    (
        "q-nan",
        ae.errors.NonFiniteError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, np.nan, 0.2]),
    ),
    (
        "q-inf",
        ae.errors.NonFiniteError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[np.inf, 0.5, 0.2]),
    ),
    (
        "q-length",
        ae.errors.ShapeError,
        "q",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, 0.5]),
    ),
    (
        "q-missing",
        ae.errors.ShapeError,
        "q",
        lambda: ae.estimators.inference.importance_weights(None),
    ),
    (
        "p-negative",
        ae.errors.ShapeError,
        "p",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, p=[1.0, -1.0, 1.0]),
    ),
    (
        "p-length",
        ae.errors.ShapeError,
        "p",
        lambda: ae.estimators.inference.estimate(
            "error_rate", POINT, LABELS, q=[0.2, 0.2, 0.2], p=[1.0, 1.0]
        ),
    ),
    (
        "p-nan",
        ae.errors.NonFiniteError,
        "p",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, p=[1.0, np.nan, 1.0]),
    ),
    (
        "pool-weights-length",
        ae.errors.ShapeError,
        "pool_weights",
        lambda: ae.ErrorRate().intrinsic_value(ae.Categorical(PROBA), pool_weights=[1.0, 2.0]),
    ),
    (
        "pool-weights-negative",
        ae.errors.ShapeError,
        "pool_weights",
        lambda: ae.ErrorRate().intrinsic_value(ae.Categorical(PROBA), pool_weights=[1, -1, 1]),
    ),
    (
        "pool-weights-nan",
        ae.errors.NonFiniteError,
        "pool_weights",
        lambda: ae.ErrorRate().intrinsic_value(ae.Categorical(PROBA), pool_weights=[1, np.nan, 1]),
    ),
    # --- levels
    (
        "level-one",
        ae.errors.InvalidLevelError,
        "level",
        lambda: ae.estimators.inference.estimate("error_rate", POINT, LABELS, level=1.0),
    ),
    (
        "level-zero",
        ae.errors.InvalidLevelError,
        "level",
        lambda: _estimate().confidence_interval(level=0.0),
    ),
    (
        "level-percent",
        ae.errors.InvalidLevelError,
        "level",
        lambda: _estimate().confidence_interval(level=95),
    ),
    (
        "level-nan",
        ae.errors.InvalidLevelError,
        "level",
        lambda: _comparison().confidence_interval(level=math.nan),
    ),
    (
        "level-text",
        ae.errors.InvalidLevelError,
        "level",
        lambda: ae.estimators.inference.proportion_confint(3, 10, level="high"),
    ),
    (
        "level-negative",
        ae.errors.InvalidLevelError,
        "level",
        lambda: ae.estimators.inference.paired_test(
            "error_rate", [POINT, POINT], LABELS, level=-0.5
        ),
    ),
    (
        "alpha",
        ae.errors.InvalidLevelError,
        "alpha",
        lambda: _multiple().best_is_significant(alpha=1.5),
    ),
    # --- options
    (
        "measure-unknown",
        ae.errors.UnknownOptionError,
        "measure",
        lambda: ae.estimators.inference.estimate("auc", POINT, LABELS),
    ),
    (
        "measure-not-a-string",
        ae.errors.UnknownOptionError,
        "measure",
        lambda: ae.estimators.inference.estimate(3, POINT, LABELS),
    ),
    (
        "interval-method",
        ae.errors.UnknownOptionError,
        "method",
        lambda: _estimate().confidence_interval(method="bootstrap"),
    ),
    (
        "comparison-method",
        ae.errors.UnknownOptionError,
        "method",
        lambda: _comparison().confidence_interval(method="wilson"),
    ),
    (
        "proportion-method",
        ae.errors.UnknownOptionError,
        "method",
        lambda: ae.estimators.inference.proportion_confint(3, 10, method="jeffreys"),
    ),
    (
        "adjustment-method",
        ae.errors.UnknownOptionError,
        "method",
        lambda: _multiple().adjusted_p_value(0, 1, method="sidak"),
    ),
    (
        "binomial-method-continuous-loss",
        ae.errors.ShapeError,
        "method",
        lambda: ae.estimators.inference.estimate(
            "mse", np.array([0.0, 1.0]), [0.5, 0.5]
        ).confidence_interval(method="wilson"),
    ),
    ("pair-unknown", ae.errors.ShapeError, "a, b", lambda: _multiple().adjusted_p_value(0, 7)),
    # --- proportions
    (
        "count-above-nobs",
        ae.errors.ShapeError,
        "count, nobs",
        lambda: ae.estimators.inference.proportion_confint(11, 10),
    ),
    (
        "count-negative",
        ae.errors.ShapeError,
        "count, nobs",
        lambda: ae.estimators.inference.proportion_confint(-1, 10),
    ),
    (
        "nobs-zero",
        ae.errors.ShapeError,
        "count, nobs",
        lambda: ae.estimators.inference.proportion_confint(0, 0),
    ),
    # --- measures
    (
        "cost-matrix-not-square",
        ae.errors.ShapeError,
        "cost_matrix",
        lambda: ae.CostMatrixLoss([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0]]),
    ),
    ("cost-matrix-1d", ae.errors.ShapeError, "cost_matrix", lambda: ae.CostMatrixLoss([0.0, 1.0])),
    (
        "cost-matrix-nan",
        ae.errors.NonFiniteError,
        "cost_matrix",
        lambda: ae.CostMatrixLoss([[0.0, np.nan], [1.0, 0.0]]),
    ),
    (
        "cost-matrix-labels",
        ae.errors.ShapeError,
        "labels",
        lambda: ae.CostMatrixLoss([[0.0, 1.0], [1.0, 0.0]], labels=["a", "b", "c"]),
    ),
    (
        "cost-matrix-vs-model",
        ae.errors.ShapeError,
        "cost_matrix",
        lambda: ae.estimators.inference.estimate(
            ae.CostMatrixLoss(1 - np.eye(3)), PROBA, [0, 1, 1]
        ),
    ),
    (
        "cost-matrix-label-outside",
        ae.errors.LabelSpaceError,
        "labels",
        lambda: ae.estimators.inference.estimate(
            ae.CostMatrixLoss(1 - np.eye(2)), POINT, [0, 1, 5]
        ),
    ),
    ("beta-negative", ae.ActiveEvalError, "beta", lambda: ae.FMeasure(beta=-1.0)),
    ("beta-nan", ae.ActiveEvalError, "beta", lambda: ae.FMeasure(beta=math.nan)),
    (
        "pos-label-unresolvable",
        ae.errors.LabelSpaceError,
        "pos_label",
        lambda: ae.estimators.inference.estimate("f1", np.array([0, 1, 2]), [0, 2, 2]),
    ),
    (
        "pos-label-unresolvable-strings",
        ae.errors.LabelSpaceError,
        "pos_label",
        lambda: ae.estimators.inference.estimate("recall", np.array(["a", "b"]), ["b", "b"]),
    ),
    (
        "pos-label-outside-space",
        ae.errors.LabelSpaceError,
        "pos_label",
        lambda: ae.estimators.inference.estimate(
            ae.FMeasure(pos_label="maybe"), _model(), ["pos", "neg", "pos"]
        ),
    ),
    (
        "pos-label-unbound",
        ae.errors.LabelSpaceError,
        "pos_label",
        lambda: ae.FMeasure().conditional_second_moment(ae.Categorical(PROBA), 0.5),
    ),
    # --- labeling costs
    (
        "costs-negative",
        ae.errors.InvalidCostsError,
        "costs",
        lambda: check_costs([1.0, -2.0, 1.0], 3),
    ),
    ("costs-zero", ae.errors.InvalidCostsError, "costs", lambda: check_costs([1.0, 0.0, 1.0], 3)),
    ("costs-nan", ae.errors.NonFiniteError, "costs", lambda: check_costs([1.0, np.nan, 1.0], 3)),
    ("costs-inf", ae.errors.NonFiniteError, "costs", lambda: check_costs([1.0, np.inf, 1.0], 3)),
    ("costs-length", ae.errors.ShapeError, "costs", lambda: check_costs([1.0, 1.0], 3)),
    ("costs-2d", ae.errors.ShapeError, "costs", lambda: check_costs([[1.0, 1.0, 1.0]], 3)),
]


@pytest.mark.parametrize(
    ("exc_type", "argument", "call"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_invalid_input_raises_specific_error_naming_the_argument(exc_type, argument, call):
    with pytest.raises(exc_type) as info:
        call()
    assert isinstance(info.value, ae.ActiveEvalError)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(f"{argument}:"), str(info.value)


def test_every_error_type_subclasses_active_eval_error_and_value_error():
    classes = [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if obj.__module__ == errors.__name__
    ]
    assert sorted(c.__name__ for c in classes) == sorted(errors.__all__)  # all listed
    failures = [c for c in classes if issubclass(c, Exception) and not issubclass(c, Warning)]
    assert len(failures) >= 12
    for err in failures:
        assert issubclass(err, ae.ActiveEvalError)
        assert issubclass(err, ValueError)
    for warning in set(classes) - set(failures):
        assert issubclass(warning, ae.ActiveEvalWarning)


def test_warning_types_are_user_warnings():
    for warning in (ae.UndefinedEstimateWarning, ae.DegenerateIntervalWarning):
        assert issubclass(warning, ae.ActiveEvalWarning)
        assert issubclass(warning, UserWarning)


def test_error_messages_locate_the_offending_entry():
    with pytest.raises(ae.errors.ProbabilityRowsError, match=r"row 2 sums to 0\.9"):
        ae.Categorical([[0.5, 0.5], [1.0, 0.0], [0.6, 0.3]])
    with pytest.raises(ae.errors.NonFiniteError, match=r"entry \(1, 0\)"):
        ae.Categorical([[0.5, 0.5], [np.nan, 1.0]])
    with pytest.raises(ae.errors.InvalidCostsError, match="entry 2 is -1"):
        check_costs([1.0, 2.0, -1.0], 3)
    with pytest.raises(ae.errors.LabelSpaceError, match=r"value 'maybe' \(position 2\)"):
        ae.estimators.inference.estimate("error_rate", _model(), ["pos", "neg", "maybe"])
    with pytest.raises(ae.errors.InvalidSamplingDistributionError, match="draw 1"):
        ae.estimators.inference.estimate("error_rate", POINT, LABELS, q=[0.5, 0.0, 0.2])
    with pytest.raises(ae.errors.ShapeError, match=r"^pool_weights: entry 1 is -1;"):
        ae.sampling.optimal_distribution(PROBA, "error_rate", pool_weights=[1, -1, 1])
    with pytest.raises(ae.errors.ShapeError, match=r"^pool_weights: sum to 0;"):
        ae.sampling.optimal_distribution(PROBA, "error_rate", pool_weights=[0, 0, 0])


def test_a_measure_no_label_can_define_is_refused_before_labels_are_bought(tmp_path):
    """Precision of a model that predicts the positive class nowhere (with test mass) is 0/0
    whatever the labels: evaluate and Session.create refuse it before the oracle is asked
    (they used to spend the budget and report NaN); one positive prediction is enough."""
    m = 300
    never = np.c_[np.full(m, 0.8), np.full(m, 0.2)]
    asked: list[int] = []

    def oracle(idx):  # type: ignore[no-untyped-def]
        asked.extend(np.asarray(idx).tolist())
        return np.zeros(len(idx), dtype=int)

    match = r"^measure: precision is undefined whatever the labels \(the model predicts 1 "
    with pytest.raises(ae.errors.ShapeError, match=match):
        ae.evaluate(never, oracle, "precision", budget=50, random_state=0)
    with pytest.raises(ae.errors.ShapeError, match=match):
        ae.evaluate(never, oracle, "precision", budget=50, method="stratified", random_state=0)
    with pytest.raises(ae.errors.ShapeError, match=match):
        ae.Session.create(tmp_path / "s.db", never, "precision", 50)
    assert asked == [] and not (tmp_path / "s.db").exists()
    weights = np.ones(m)
    one = never.copy()
    one[7] = [0.3, 0.7]  # one predicted positive ...
    assert np.isfinite(ae.evaluate(one, oracle, "precision", budget=50, random_state=0).estimate)
    weights[7] = 0.0  # ... without test mass
    with pytest.raises(ae.errors.ShapeError, match=match):
        ae.evaluate(one, oracle, "precision", budget=50, pool_weights=weights, random_state=0)
    # recall and F1 can be moved by any label: not refused
    assert ae.evaluate(never, lambda i: np.ones(len(i), int), "recall", budget=20).n_labels > 0
    # groups, and comparisons where no model is defined (one undefined model of two is
    # reported beside the other, as before)
    groups = np.arange(m) % 3
    asked.clear()
    with pytest.raises(ae.errors.ShapeError, match=match):
        ae.evaluate(never, oracle, "precision", budget=50, groups=groups, random_state=0)
    several = r"^measure: precision is undefined whatever the labels \(no model predicts 1 "
    with pytest.raises(ae.errors.ShapeError, match=several):
        ae.compare([never, never.copy()], oracle, "precision", budget=50, random_state=0)
    with pytest.raises(ae.errors.ShapeError, match=several):
        ae.compare([never, never.copy()], oracle, "precision", budget=50, groups=groups)
    with pytest.raises(ae.errors.ShapeError, match=several):
        ae.Session.create(tmp_path / "c.db", [never, never.copy()], "precision", 50)
    assert asked == [] and not (tmp_path / "c.db").exists()


def test_an_unknown_interval_method_lists_every_method_a_result_takes():
    rng = np.random.default_rng(0)
    p1 = rng.uniform(0.1, 0.9, 400)
    y = (rng.random(400) < p1).astype(int)
    res = ae.evaluate(np.c_[1 - p1, p1], lambda i: y[i], "error_rate", budget=60, random_state=0)
    with pytest.raises(ae.errors.UnknownOptionError, match=r"anytime.*fixed-width"):
        res.confidence_interval(method="bogus")
    assert res.confidence_interval(method="fixed-width") == res.confidence_interval(method="logit")


# ------------------------------------------------------------- validators accept good input


def test_check_costs_accepts_positive_finite_costs_and_none():
    assert check_costs(None, 5) is None
    got = check_costs([1, 2.5, 0.01], 3)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.0, 2.5, 0.01])


def test_check_level_accepts_open_unit_interval():
    assert check_level(0.95) == 0.95
    assert check_level("0.5") == 0.5
    assert check_level(np.float32(0.9)) == pytest.approx(0.9)


def test_check_option_is_case_and_separator_insensitive():
    choices = ("wald", "clopper-pearson")
    assert check_option("Clopper_Pearson", choices, "method") == "clopper-pearson"
    assert check_option("WALD", choices, "method") == "wald"
    lo, hi = ae.estimators.inference.proportion_confint(3, 10, 0.95, "Clopper_Pearson")
    assert (lo, hi) == ae.estimators.inference.proportion_confint(3, 10, 0.95, "clopper-pearson")


def test_check_probability_rows_returns_float_array():
    got = check_probability_rows([[1, 0], [0, 1]])
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.eye(2))
