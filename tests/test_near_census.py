"""Near a census of class probabilities: the values the measure can still take given the
labels (report module, ``_attainable``) against scikit-learn on every assignment of the
instances left out, and the reported interval moved out to them — covering where the
estimator's own interval, blind to the few instances left out, missed."""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import f1_score, zero_one_loss

import activeeval as ae
from activeeval.estimators.inference import _snapped
from activeeval.estimators.report import MAX_ASSIGNMENTS, _attainable


def _binary(seed: int, m: int = 40):
    rng = np.random.default_rng(seed)
    p1 = rng.uniform(0.02, 0.98, m)
    y = (rng.random(m) < p1).astype(int)
    return ae.Categorical(np.c_[1 - p1, p1]), y


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_the_attainable_values_are_sklearns_over_every_assignment(measure: str) -> None:
    """All but five instances labeled: the values are scikit-learn's metric on the pool's
    labels with the five set every way (2⁵ assignments), distinct and sorted."""
    pred, y = _binary(0)
    meas = ae.get_measure(measure, pos_label=1).bind(pred)
    left = np.array([3, 11, 17, 29, 36])
    draws = np.setdiff1d(np.arange(pred.n), left)[::-1]  # any order, one repeat
    draws = np.r_[draws, draws[:1]]
    got = _attainable(meas, pred, np.full(pred.n, 1 / pred.n), draws, y[draws])
    f = pred.point_prediction()
    metric = zero_one_loss if measure == "error_rate" else f1_score
    want = set()
    for labels in itertools.product([0, 1], repeat=left.size):
        yy = y.copy()
        yy[left] = labels
        want.add(round(float(metric(yy, f)), 12))
    assert got is not None
    assert np.all(np.diff(got) > 0)
    assert {round(float(v), 12) for v in got} == want


def test_a_group_and_three_classes_and_too_many_left_out() -> None:
    """Test mass on a group only: instances outside it never count. Three classes: 3^k
    assignments, enumerated up to MAX_ASSIGNMENTS (seven instances), None beyond; None on a
    census and for a Gaussian."""
    rng = np.random.default_rng(1)
    proba = rng.dirichlet(np.ones(3), 30)
    pred = ae.Categorical(proba)
    y = rng.integers(0, 3, 30)
    meas = ae.get_measure("error_rate").bind(pred)
    p = np.where(np.arange(30) < 20, 1 / 20, 0.0)
    left = np.array([2, 5])
    draws = np.setdiff1d(np.arange(30), np.r_[left, np.arange(20, 30)])  # the group's others
    got = _attainable(meas, pred, p, draws, y[draws])
    f = pred.point_prediction()
    errors = int(np.sum(f[draws] != y[draws]))
    assert got == pytest.approx(np.array([errors, errors + 1, errors + 2]) / 20, rel=1e-12)
    most = int(math.log(MAX_ASSIGNMENTS) / math.log(3))
    assert most == 7
    some = np.arange(20)[most:]
    assert _attainable(meas, pred, p, some, y[some]) is not None
    fewer = np.arange(20)[most + 1 :]
    assert _attainable(meas, pred, p, fewer, y[fewer]) is None
    everything = np.arange(20)
    assert _attainable(meas, pred, p, everything, y[everything]) is None
    gauss = ae.Gaussian(rng.normal(size=30), np.ones(30))
    mse = ae.get_measure("mse").bind(gauss)
    assert _attainable(mse, gauss, p, draws, rng.normal(size=draws.size)) is None


def test_ends_move_out_to_attainable_values() -> None:
    """Each finite end to the nearest attainable value outside (or the range's end), then
    out by 64 ulps; NaN and infinite ends stay."""
    vals = np.array([0.2, 0.25, 0.3])
    lo, hi = _snapped(0.26, 0.27, vals)
    assert lo == pytest.approx(0.25, abs=1e-14) and lo < 0.25
    assert hi == pytest.approx(0.3, abs=1e-14) and hi > 0.3
    lo, hi = _snapped(0.1, 0.9, vals)
    assert (lo, hi) == pytest.approx((0.2, 0.3), abs=1e-14)
    assert _snapped(-math.inf, 0.21, vals)[0] == -math.inf
    assert all(math.isnan(x) for x in _snapped(math.nan, math.nan, vals))


def test_near_a_census_the_interval_covers_where_the_estimators_missed() -> None:
    """An overconfident model (it gives its errors probability ~1e-3) on a pool of 60 where
    a third of its decisions are wrong; campaigns that label all but one or two instances.
    The reported interval covers in every campaign, two-sided and one-sided, its ends are
    attainable values (within ulps) and it lies within their range — here narrower than the
    estimator's own, which spans values no labels can give. (Where the estimator's own
    missed — spam by number, group 'none', naive Bayes, coverage 0.917 at 800 labels — is
    measured in docs/results/continuous.md.)"""
    rng = np.random.default_rng(3)
    m = 60
    wrong = rng.random(m) < 1 / 3
    f1 = rng.integers(0, 2, m)
    y = np.where(wrong, 1 - f1, f1)
    p1 = np.where(f1 == 1, 1 - 1e-3, 1e-3)
    pred = ae.Categorical(np.c_[1 - p1, p1])
    truth = float(np.mean(pred.point_prediction() != y))
    near, narrower = 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(40):
            res = ae.evaluate(pred, lambda i: y[i], "error_rate", budget=58, random_state=r)
            vals = res.inference.attainable
            if vals is None:
                continue
            near += 1
            assert vals[0] - 1e-12 <= truth <= vals[-1] + 1e-12
            lo, hi = res.ci
            assert lo <= truth <= hi
            assert np.min(np.abs(vals - lo)) < 1e-13 and np.min(np.abs(vals - hi)) < 1e-13
            assert res.confidence_interval(alternative="less")[1] >= truth
            assert res.confidence_interval(alternative="greater")[0] <= truth
            assert vals[0] - 1e-12 <= lo and hi <= vals[-1] + 1e-12
            old = replace(res.inference, attainable=None).confidence_interval(method=res.interval)
            narrower += hi - lo < old[1] - old[0]
    assert near >= 20
    assert narrower == near
