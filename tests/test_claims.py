"""One-sided bounds, p-values against a margin, claims and the release gate (issue 28, part).

References: scipy's one-sample and paired t tests (``alternative=``, their confidence
intervals) on passive samples with equal weights, where the package's ``t`` intervals are
the textbook ones; statsmodels' z test for the one-sided p-values; seeded Monte-Carlo
coverage of each side separately under the default design and estimator.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.weightstats import ztest

import activeeval as ae
from activeeval.claims import Claim, parse_claim
from activeeval.cli import main
from activeeval.errors import InvalidLevelError, ShapeError, UnknownOptionError
from activeeval.estimators import inference

SIDES = ("two-sided", "less", "greater")


def approx(x: float) -> object:
    return pytest.approx(x, rel=1e-14, abs=0)


def _passive_sample(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    fa = np.where(rng.random(n) < 0.3, 1 - y, y)  # ~30% errors
    fb = np.where(rng.random(n) < 0.2, 1 - y, y)  # ~20% errors
    return y, fa, fb


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alternative", SIDES)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_one_sided_t_bounds_are_scipys(seed: int, alternative: str, level: float) -> None:
    y, fa, fb = _passive_sample(seed)
    est = inference.estimate("error_rate", fa, y)  # q = p: the textbook sample mean
    want = stats.ttest_1samp((fa != y).astype(float), 0.0, alternative=alternative)
    got = est.confidence_interval(level, "t", alternative)
    assert got == pytest.approx(tuple(want.confidence_interval(level)), rel=1e-12)
    cmp = inference.paired_test("error_rate", [fa, fb], y)
    la, lb = (fa != y).astype(float), (fb != y).astype(float)
    want = stats.ttest_rel(la, lb, alternative=alternative)
    got = cmp.confidence_interval(level, "t", alternative)
    assert got == pytest.approx(tuple(want.confidence_interval(level)), rel=1e-12)


@pytest.mark.parametrize("null", [0.0, 0.05, -0.1])
@pytest.mark.parametrize("alternative", SIDES)
def test_p_values_against_a_margin_are_statsmodels_z_test(null: float, alternative: str) -> None:
    y, fa, fb = _passive_sample(5, 200)
    cmp = inference.paired_test("error_rate", [fa, fb], y)
    d = (fa != y).astype(float) - (fb != y).astype(float)
    side = {"two-sided": "two-sided", "less": "smaller", "greater": "larger"}[alternative]
    _, want = ztest(d, value=null, alternative=side, ddof=0)  # the sandwich SE: no Bessel
    assert cmp.test(null, alternative) == pytest.approx(want, rel=1e-10)
    assert cmp.test() == cmp.p_value


def test_every_interval_method_is_one_sided_at_twice_the_tail() -> None:
    y, fa, _ = _passive_sample(3, 80)
    est = inference.estimate("error_rate", fa, y)
    for method in ("wald", "t", "logit", "wilson", "clopper-pearson", "agresti-coull"):
        low, high = est.confidence_interval(0.90, method)
        # 2·0.95 − 1 is 0.9 to one ulp: the ends agree to rounding
        assert est.confidence_interval(0.95, method, "less") == (-math.inf, approx(high))
        assert est.confidence_interval(0.95, method, "greater") == (approx(low), math.inf)
    with pytest.raises(InvalidLevelError, match=r"^level: a one-sided bound at level 0\.5"):
        est.confidence_interval(0.5, "wald", "less")
    with pytest.raises(UnknownOptionError, match=r"^alternative:"):
        est.confidence_interval(0.95, "wald", "below")


def test_results_give_one_sided_bounds_clipped_to_the_measures_range() -> None:
    rng = np.random.default_rng(4)
    m = 3000
    p = rng.beta(0.5, 3.0, m)
    y = (rng.random(m) < p).astype(int)
    proba = np.c_[1 - p, p]
    res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=150, random_state=0)
    low90, high90 = res.confidence_interval(0.90)
    assert res.confidence_interval(0.95, alternative="less") == (0.0, approx(high90))
    assert res.confidence_interval(0.95, alternative="greater") == (approx(low90), 1.0)
    assert res.confidence_interval() == res.ci
    p2 = np.clip(p + rng.normal(0, 0.2, m), 0.01, 0.99)
    cmp = ae.compare([proba, np.c_[1 - p2, p2]], lambda i: y[i], budget=150, random_state=0)
    assert cmp.confidence_interval() == cmp.ci
    lo, hi = cmp.confidence_interval(0.90)
    assert cmp.confidence_interval(0.95, alternative="less") == (-math.inf, approx(hi))
    assert cmp.confidence_interval(0.95, alternative="greater") == (approx(lo), math.inf)
    assert cmp.test() == cmp.p_value


def test_one_sided_bounds_of_the_default_cover_on_each_side() -> None:
    """400 seeded campaigns of 100 labels (error rate, calibrated model, q*, the default
    model-assisted estimator with its logit interval): each one-sided 95% bound covers the
    pool's true error rate in at least 95% − 3 MC s.e. (0.917) of them."""
    rng = np.random.default_rng(11)
    m = 2000
    p = rng.beta(0.6, 4.0, m)
    y = (rng.random(m) < p).astype(int)
    proba = np.c_[1 - p, p]
    truth = float(np.mean(proba.argmax(1) != y))
    reps = 400
    upper_ok = lower_ok = 0
    for r in range(reps):
        res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=100, random_state=r)
        upper_ok += truth <= res.confidence_interval(0.95, alternative="less")[1]
        lower_ok += truth >= res.confidence_interval(0.95, alternative="greater")[0]
    floor = 0.95 - 3 * math.sqrt(0.95 * 0.05 / reps)
    assert upper_ok / reps >= floor
    assert lower_ok / reps >= floor


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("f1 >= 0.80", Claim("f1", ">=", 0.80)),
        ("error_rate<=5%", Claim("error_rate", "<=", 0.05)),
        ("  difference <= 0.005 ", Claim("difference", "<=", 0.005)),
        ("accuracy > 0.9", Claim("accuracy", ">", 0.9)),
        ("mse ≤ 1e-2", Claim("mse", "<=", 0.01)),
        ("difference >= -0.01", Claim("difference", ">=", -0.01)),
    ],
)
def test_claims_are_read(text: str, want: Claim) -> None:
    assert parse_claim(text) == want


@pytest.mark.parametrize("text", ["f1", "f1 = 0.8", ">= 0.8", "f1 >= high", "f1 >= 1.2.3", ""])
def test_a_claim_that_cannot_be_read_is_refused(text: str) -> None:
    with pytest.raises(ShapeError, match=r"^claim: cannot read"):
        parse_claim(text)


def test_a_claim_is_established_by_its_one_sided_bound() -> None:
    rng = np.random.default_rng(2)
    m = 3000
    p = rng.beta(0.5, 3.0, m)
    y = (rng.random(m) < p).astype(int)
    proba = np.c_[1 - p, p]
    res = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=200, random_state=1)
    upper = res.confidence_interval(0.95, alternative="less")[1]
    lower = res.confidence_interval(0.95, alternative="greater")[0]
    v = Claim("error_rate", "<=", upper + 1e-9).check(res)
    assert v.established and v.bound == upper and v.margin == pytest.approx(1e-9, abs=1e-15)
    assert Claim("error_rate", "<=", upper).check(res).established  # on the bound: <= holds
    assert not Claim("error_rate", "<", upper).check(res).established  # ... < does not
    v = Claim("error_rate", "<=", upper - 0.01).check(res)
    assert not v.established and v.margin == pytest.approx(-0.01)
    assert Claim("error_rate", ">=", lower - 0.001).check(res).established
    assert not Claim("error_rate", ">=", lower + 0.001).check(res).established
    assert "not established yet" in str(Claim("error_rate", "<=", upper - 0.01).check(res))
    assert lower < upper - 0.01 and not Claim("error_rate", "<=", upper - 0.01).check(res).refuted
    # refuted: the opposite one-sided bound at the level lies beyond the threshold
    v = Claim("error_rate", "<=", lower - 0.001).check(res)
    assert v.refuted and not v.established and "refuted" in str(v)
    assert Claim("error_rate", "<", lower).check(res).refuted  # on the bound: < is refuted
    assert not Claim("error_rate", "<=", lower).check(res).refuted  # ... <= is not
    assert Claim("error_rate", ">=", upper + 0.001).check(res).refuted
    assert not Claim("error_rate", ">=", upper).check(res).refuted
    with pytest.raises(UnknownOptionError, match=r"^claim: this result estimates 'error_rate'"):
        Claim("f1", ">=", 0.8).check(res)
    p2 = np.clip(p + rng.normal(0, 0.2, m), 0.01, 0.99)
    cmp = ae.compare([proba, np.c_[1 - p2, p2]], lambda i: y[i], budget=200, random_state=1)
    hi = cmp.confidence_interval(0.95, alternative="less")[1]
    assert Claim("difference", "<=", hi).check(cmp).established
    with pytest.raises(UnknownOptionError, match=r"^claim: a comparison's claim is about"):
        Claim("error_rate", "<=", 0.1).check(cmp)


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _labeled_store(task: dict[str, Path], *pools: Path) -> Path:
    store = task["dir"] / "s.db"
    flat = [a for p in pools for a in ("--pool", p)]
    code, _, err = _run("session", "init", store, *flat, "--measure", "error_rate", "--budget",
                        "120", "--seed", "3")  # fmt: skip
    assert code == 0, err
    batch = task["dir"] / "batch.csv"
    while True:
        assert _run("session", "next", store, "--k", "60", "--out", batch)[0] == 0
        rows = batch.read_text().splitlines()[1:]
        if not rows:
            return store
        ids = [int(r.split(",")[0]) for r in rows]
        truth = np.loadtxt(task["truth"], delimiter=",", skiprows=1, dtype=int)
        label = dict(zip(truth[:, 0], truth[:, 1], strict=True))
        labels = task["dir"] / "labels.csv"
        labels.write_text("id,label\n" + "".join(f"{i},{label[i]}\n" for i in ids))
        assert _run("session", "record", store, labels)[0] == 0


def test_the_gate_exits_0_when_established_1_when_not_yet_2_on_bad_input(task) -> None:
    store = _labeled_store(task, task["a"])
    with ae.Session.open(store) as s:
        res = s.estimate()
    upper = res.confidence_interval(0.95, alternative="less")[1]
    code, out, _ = _run("session", "status", store, "--gate", f"error_rate <= {upper + 0.01}")
    assert code == 0 and "gate:     error_rate <=" in out and ": established" in out
    assert "valid for one look" in out
    code, out, _ = _run("session", "status", store, "--gate", f"error_rate <= {upper - 0.01}")
    assert code == 1 and "not established yet" in out and "0.01 short" in out
    lower = res.confidence_interval(0.95, alternative="greater")[0]
    code, out, _ = _run("session", "status", store, "--gate", f"error_rate <= {lower - 0.001}")
    assert code == 1 and ": refuted" in out  # not established: exit 1, and the text says why
    code, out, _ = _run("session", "status", store, "--json", "--gate",
                        f"error_rate <= {lower - 0.001}")  # fmt: skip
    assert code == 1 and json.loads(out)["gate"]["refuted"] is True
    code, out, _ = _run("session", "status", store, "--gate", f"error_rate <= {upper - 0.01}",
                        "--level", "0.5001")  # fmt: skip
    assert code in (0, 1)
    code, _, err = _run("session", "status", store, "--gate", "error_rate <= lots")
    assert code == 2 and err.startswith("error: claim: cannot read")
    code, _, err = _run("session", "status", store, "--gate", "f1 >= 0.5")
    assert code == 2 and "this result estimates 'error_rate'" in err
    code, _, err = _run("session", "status", store, "--gate", "error_rate <= 0.3", "--level", "2")
    assert code == 2 and err.startswith("error: level:")
    code, out, _ = _run("session", "status", store, "--json", "--gate", f"error_rate <= {upper}")
    gate = json.loads(out)["gate"]
    assert code == 0 and gate["established"] and gate["bound"] == pytest.approx(upper)
    assert gate["valid_for"] == "one look" and gate["level"] == 0.95 and gate["refuted"] is False


def test_a_pair_is_gated_on_its_difference(task) -> None:
    store = _labeled_store(task, task["a"], task["b"])
    with ae.Session.open(store) as s:
        hi = s.compare().confidence_interval(0.95, alternative="less")[1]
    code, out, _ = _run("session", "status", store, "--gate", f"difference <= {hi + 1e-6}")
    assert code == 0 and "upper bound" in out
    code, _, _ = _run("session", "status", store, "--gate", f"difference <= {hi - 0.02}")
    assert code == 1


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_one_sided_binomial_bounds_are_the_textbook_one_sided_formulas(level: float) -> None:
    """Independent one-sided formulas with z_{1−α} (not the code's two-sided route): Wald
    p̂ ± z·√(p̂(1−p̂)/n); Wilson's score bound; Clopper–Pearson's Beta quantiles at α."""
    y, fa, _ = _passive_sample(7, 90)
    x = int(np.sum(fa != y))
    n = y.shape[0]
    p, a = x / n, 1 - level
    z = stats.norm.isf(a)
    est = inference.estimate("error_rate", fa, y)
    wald = z * math.sqrt(p * (1 - p) / n)
    assert est.confidence_interval(level, "wald", "less")[1] == approx(p + wald)
    assert est.confidence_interval(level, "wald", "greater")[0] == approx(p - wald)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert est.confidence_interval(level, "wilson", "less")[1] == approx(centre + half)
    assert est.confidence_interval(level, "wilson", "greater")[0] == approx(centre - half)
    cp_high = stats.beta.ppf(level, x + 1, n - x)
    cp_low = stats.beta.ppf(a, x, n - x + 1)
    assert est.confidence_interval(level, "clopper-pearson", "less")[1] == approx(cp_high)
    assert est.confidence_interval(level, "clopper-pearson", "greater")[0] == approx(cp_low)


def test_a_tie_with_no_error_is_even_on_each_side_and_nulls_are_numbers() -> None:
    tie = inference.Comparison((0.2, 0.2), 0.0, 0.0, 1.0, 10, 10, False)
    assert (tie.test(0.0, "less"), tie.test(0.0, "greater"), tie.test()) == (0.5, 0.5, 1.0)
    assert (tie.test(0.1, "less"), tie.test(0.1, "greater")) == (0.0, 1.0)  # Δ = 0 < 0.1
    for bad in ("0.01", None, True, math.nan):
        with pytest.raises(ShapeError, match=r"^null: must be a finite number"):
            tie.test(bad)


def test_claims_are_validated_and_name_every_measure() -> None:
    with pytest.raises(UnknownOptionError, match=r"^op:"):
        Claim("f1", "==", 0.5)
    with pytest.raises(ShapeError, match=r"^threshold:"):
        Claim("f1", ">=", math.nan)
    assert parse_claim("f_beta(0.5) >= 0.5") == Claim("f_beta(0.5)", ">=", 0.5)
    assert parse_claim("difference >= −0.01") == Claim("difference", ">=", -0.01)
    assert parse_claim("dcg@10 >= 1.5") == Claim("dcg@10", ">=", 1.5)
    with pytest.raises(ShapeError):
        parse_claim("f1 >= ٠.٥")  # digits are ASCII
    rng = np.random.default_rng(3)
    m = 2000
    p = rng.beta(1, 1, m)
    y = (rng.random(m) < p).astype(int)
    proba = np.c_[1 - p, p]
    res = ae.evaluate(proba, lambda i: y[i], ae.FMeasure(beta=0.5), 200, random_state=0)
    assert res.measure == "f_beta(0.5)"
    low = res.confidence_interval(0.95, alternative="greater")[0]
    assert parse_claim(f"f_beta(0.5) >= {low - 0.01}").check(res).established
    assert Claim("f0.5", ">=", low - 0.01).check(res, aliases=("f0.5",)).established
    with pytest.raises(UnknownOptionError, match=r"name the measure as 'f_beta\(0\.5\)'\.$"):
        Claim("f1", ">=", 0.5).check(res)
    with pytest.raises(ShapeError, match=r"^claim: f_beta\(0\.5\) lies in \[0, 1\]"):
        Claim("f_beta(0.5)", ">=", 5).check(res)
    three = [proba, np.c_[p, 1 - p], np.c_[1 - p**2, p**2]]
    cmp = ae.compare(three, lambda i: y[i], budget=100, random_state=0)
    with pytest.raises(UnknownOptionError, match=r"needs two models; this comparison has 3"):
        Claim("difference", "<=", 0.0).check(cmp)


def test_the_gates_level_is_used_and_only_with_a_gate(task) -> None:
    store = _labeled_store(task, task["a"])
    with ae.Session.open(store) as s:
        res = s.estimate()
    hi90 = res.confidence_interval(0.90, alternative="less")[1]
    hi99 = res.confidence_interval(0.99, alternative="less")[1]
    assert hi90 < hi99
    claim = f"error_rate <= {(hi90 + hi99) / 2}"
    assert _run("session", "status", store, "--gate", claim, "--level", "0.9")[0] == 0
    code, out, _ = _run("session", "status", store, "--gate", claim, "--level", "0.99")
    assert code == 1 and "one-sided 99% upper bound" in out
    code, _, err = _run("session", "status", store, "--level", "0.9")
    assert code == 2 and err.startswith("error: level: --level sets the --gate")


def test_a_gate_before_the_first_label_is_not_established(task) -> None:
    store = task["dir"] / "empty.db"
    code, _, err = _run("session", "init", store, "--pool", task["a"], "--measure", "error_rate",
                        "--budget", "50")  # fmt: skip
    assert code == 0, err
    code, out, _ = _run("session", "status", store, "--gate", "error_rate <= 0.5")
    assert code == 1 and "not established (no estimate yet)" in out
