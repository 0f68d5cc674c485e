"""The reproduction harness: its vectorised engines equal the campaign loops, its interpolation
helpers invert known curves, and the smoke versions of `make reproduce` run end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import activeeval as ae
from activeeval.demo import first_occurrence, labels_to_match, simulate_static
from activeeval.estimators.assisted import assisted_estimate
from reproduce import comparison as cmp_exp
from reproduce import estimation
from reproduce.simulate import simulate_comparison


def _pool(seed: int = 0, m: int = 2000):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 0.5, m)
    y = (rng.random(m) < p).astype(int)
    pa = np.clip(p + rng.normal(0, 0.15, m), 0.01, 0.99)
    pb = np.clip(p + rng.normal(0, 0.3, m), 0.01, 0.99)
    return ae.Categorical(np.c_[1 - pa, pa]), ae.Categorical(np.c_[1 - pb, pb]), y, rng


def test_first_occurrence_marks_each_value_once_per_row() -> None:
    draws = np.array([[3, 1, 3, 2, 1], [0, 0, 0, 4, 0]])
    expected = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 1, 0]], dtype=bool)
    np.testing.assert_array_equal(first_occurrence(draws), expected)


@pytest.mark.parametrize("measure", [ae.ErrorRate(), ae.FMeasure(pos_label=1)])
@pytest.mark.parametrize("with_costs", [False, True])
def test_simulate_comparison_equals_compare_run_by_run(measure, with_costs) -> None:
    a, b, y, rng = _pool()
    costs = rng.lognormal(0, 0.7, y.shape[0]) if with_costs else None
    if costs is not None:
        costs /= costs.mean()
    q = ae.sampling.comparison_distribution([a, b], measure, costs=costs)
    fs = [a.point_prediction(), b.point_prediction()]
    wl = np.stack([measure.weight(f, y) * measure.loss(f, y) for f in fs])
    w = np.stack([measure.weight(f, y) for f in fs])
    budgets = [40, 120]
    for seed in range(3):
        runs = simulate_comparison(q, wl, w, budgets, 1, costs=costs, random_state=seed)
        for j, budget in enumerate(budgets):
            res = ae.compare(
                [a, b],
                lambda i: y[i],
                measure,
                budget=budget,
                costs=costs,
                random_state=seed,
                estimator="snis",
            )
            assert res.n_draws == runs.n_draws[0, j]
            assert res.difference == pytest.approx(runs.difference[0, j], abs=1e-12)
            assert res.stderr == pytest.approx(runs.stderr[0, j], abs=1e-12)
            assert res.p_value == pytest.approx(runs.p_value[0, j], abs=1e-9)


def test_label_swap_makes_the_two_models_exchangeable() -> None:
    # Under the swap each draw's pair of losses is exchanged with probability 1/2, so the mean
    # difference over runs is 0: |mean| must be within 4 Monte-Carlo standard errors.
    a, b, y, _ = _pool(1)
    meas = ae.ErrorRate()
    q = ae.sampling.comparison_distribution([a, b], meas)
    fs = [a.point_prediction(), b.point_prediction()]
    wl = np.stack([meas.loss(f, y) for f in fs])
    runs = simulate_comparison(q, wl, np.ones_like(wl), [200], 2000, swap=True, random_state=3)
    d = runs.difference[:, 0]
    assert abs(d.mean()) < 4 * d.std() / np.sqrt(d.size)


def test_labels_to_match_inverts_a_power_law() -> None:
    budgets = np.array([50.0, 100, 200, 400, 800])
    mae = 0.3 / np.sqrt(budgets)
    assert labels_to_match(budgets, mae, 0.3 / np.sqrt(300)) == pytest.approx(300)
    # Beyond the grid it extrapolates along the last segment of the same power law.
    assert labels_to_match(budgets, mae, 0.3 / np.sqrt(3200)) == pytest.approx(3200)


def test_saved_labels_reads_the_crossing_on_a_log_budget_axis() -> None:
    budgets = [50.0, 100, 200, 400, 800]
    passive = [0.4, 0.3, 0.2, 0.1, 0.05]
    active = [0.2, 0.1, 0.05, 0.01, 0.0]
    # active reaches 0.05 exactly at 200 labels: 1 - 200/800 saved.
    assert cmp_exp.saved_labels(budgets, passive, active) == pytest.approx(0.75)
    assert np.isnan(cmp_exp.saved_labels(budgets, active, passive))


def test_estimation_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    settings = estimation.run(
        tmp_path, reps=30, budgets=(50, 100, 200), smoke=True, with_peers=False
    )
    assert (tmp_path / "active_estimation.md").read_text().startswith("# Active estimation")
    assert (tmp_path / "active_estimation_mae.png").stat().st_size > 10_000
    data = json.loads((tmp_path / "active_estimation.json").read_text())
    assert {d["measure"] for d in data} == {"error_rate", "f1"}
    for s in settings:
        for c in s.curves:
            assert np.all(np.isfinite(c.mae)), (s.measure, c.method)
    f1 = next(s for s in settings if s.measure == "f1")
    # Seeded regression check of the headline: on the email shift task, active F1 estimation
    # beats passive at 200 labels (measured ratio ≈ 0.45 over 300 repetitions).
    assert f1.curve("active").mae[-1] < f1.curve("passive").mae[-1]


def test_comparison_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    results = cmp_exp.run(tmp_path, reps=30, budgets=(50, 100, 200), smoke=True)
    md = (tmp_path / "active_comparison.md").read_text()
    assert "Type I error" in md and "Sequential protocol" in md
    assert (tmp_path / "active_comparison.png").stat().st_size > 10_000
    pair = results["pairs"][0]
    assert set(pair["rows"]) == set(cmp_exp.METHODS)
    # Seeded: at 200 labels active picks the better email model at least as often as passive.
    assert (
        pair["rows"]["active"]["selection_error"][-1]
        <= pair["rows"]["passive"]["selection_error"][-1]
    )


@pytest.mark.filterwarnings("ignore:max_draws:activeeval.ActiveEvalWarning")  # the cap binds
def test_simulation_stops_at_the_campaign_draw_cap_like_evaluate() -> None:
    # q puts almost no mass on most of the pool, so 30 distinct labels cannot be bought within
    # evaluate's default cap of 20·budget + 1000 draws; both stop at the cap.
    rng = np.random.default_rng(5)
    m = 200
    p1 = rng.uniform(0.1, 0.9, m)
    proba = np.c_[1 - p1, p1]
    y = (rng.random(m) < p1).astype(int)
    q = np.full(m, 1e-7)
    q[:10] = (1 - 1e-7 * (m - 10)) / 10
    meas = ae.ErrorRate()
    f = np.argmax(proba, axis=1)
    res = ae.evaluate(proba, lambda i: y[i], meas, budget=30, q=q, random_state=3, estimator="snis")
    runs = simulate_static(q, meas.loss(f, y), np.ones(m), [30], 1, random_state=3)
    assert res.n_draws == runs.n_draws[0, 0] == 20 * 30 + 1000
    assert res.n_labels == runs.n_labels[0, 0] < 30
    assert res.estimate == pytest.approx(runs.estimate[0, 0], abs=1e-12)


def test_labels_to_match_handles_a_census_that_reaches_zero_error() -> None:
    budgets = np.array([50.0, 100, 200, 400])
    # Exactly 0 from 200 on: the crossing of 0.01 lies on the 100 → 200 segment, halfway in
    # error (0.02 → 0), i.e. at 100 · 2^0.5 labels on the log-budget axis.
    assert labels_to_match(budgets, np.array([0.05, 0.02, 0.0, 0.0]), 0.01) == pytest.approx(
        100 * np.sqrt(2)
    )
    assert labels_to_match(budgets, np.zeros(4), 0.01) == 50.0  # already there: upper bound


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_assisted_runs_equal_the_campaign_and_the_snis_engine(measure: str) -> None:
    from activeeval.demo import _runs

    pa, _, y, _ = _pool(9)
    meas = ae.get_measure(measure, pos_label=1).bind(pa)
    f = pa.point_prediction()
    w = meas.weight(f, y)
    q = ae.sampling.optimal_distribution(pa, meas)
    budgets = np.array([40.0, 150.0])
    snis, *_ = _runs(q, pa, meas, y, budgets, 5, seed=3, assisted=False, finite=False)
    runs = simulate_static(q, w * meas.loss(f, y), w, budgets, 5, random_state=3)
    np.testing.assert_allclose(snis, runs.estimate, rtol=1e-12)
    est, se, _, n_eff, _ = _runs(q, pa, meas, y, budgets, 2, seed=3, assisted=True)
    wr, wr_se, _, _, _ = _runs(q, pa, meas, y, budgets, 2, seed=3, assisted=True, finite=False)
    for j, b in enumerate(budgets):
        res = ae.evaluate(pa, lambda i: y[i], meas, budget=b, q=q, random_state=3)
        assert res.estimate == pytest.approx(est[0, j], rel=1e-12)
        assert res.stderr == pytest.approx(se[0, j], rel=1e-9)
        assert res.inference.effective_n == pytest.approx(n_eff[0, j], rel=1e-12)
        # The with-replacement form: every draw a row, weighted by the q it was drawn from.
        old = assisted_estimate(meas, pa, res.indices, res.labels, res.q)
        assert old.estimate == pytest.approx(wr[0, j], rel=1e-12)
        assert old.stderr == pytest.approx(wr_se[0, j], rel=1e-9)
    # With the pool's features (here the model's own probabilities plus noise).
    x = np.column_stack([pa.proba, np.random.default_rng(2).normal(size=pa.n)])
    fe, fse, *_ = _runs(q, pa, meas, y, budgets, 2, seed=3, assisted=True, features=x)
    for j, b in enumerate(budgets):
        res = ae.evaluate(pa, lambda i: y[i], meas, budget=b, q=q, random_state=3, features=x)
        assert res.estimate == pytest.approx(fe[0, j], rel=1e-12)
        assert res.stderr == pytest.approx(fse[0, j], rel=1e-9)


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_pair_runs_equal_compare_with_either_estimator(measure: str) -> None:
    from activeeval.estimators.assisted import MIN_DISAGREEMENTS, _disagreements
    from reproduce.assisted import _pair_runs, _pair_terms

    a, b, y, _ = _pool(5)
    _, meas, dom, full = _pair_terms([a, b], ae.get_measure(measure, pos_label=1), y)
    q = ae.sampling.comparison_distribution([a, b], meas)
    budgets = np.array([25.0, 150.0])
    seen = set()
    for estimator, assisted, finite in (("assisted", True, True), ("snis", False, False)):
        diff, se, _ = _pair_runs(q, full, dom, meas, budgets, 1, 3, assisted, finite)
        for j, n in enumerate(budgets):
            res = ae.compare([a, b], lambda i: y[i], meas, budget=n, random_state=3,
                             estimator=estimator, progress=False)  # fmt: skip
            assert res.difference == pytest.approx(diff[0, j], rel=1e-12)
            assert res.stderr == pytest.approx(se[0, j], rel=1e-9)
            labeled = np.unique(res.indices)
            seen.add(_disagreements(full["predictions"], labeled) >= MIN_DISAGREEMENTS)
    assert seen == {False, True}  # both choices of control-variate sources are exercised
    # With the pool's features (the two models' probabilities plus noise).
    x = np.column_stack([a.proba, b.proba, np.random.default_rng(2).normal(size=a.n)])
    diff, se, _ = _pair_runs(q, full, dom, meas, budgets, 1, 3, True, True, features=x)
    for j, n in enumerate(budgets):
        res = ae.compare([a, b], lambda i: y[i], meas, budget=n, random_state=3, features=x,
                         progress=False)  # fmt: skip
        assert res.difference == pytest.approx(diff[0, j], rel=1e-12)
        assert res.stderr == pytest.approx(se[0, j], rel=1e-9)
        plain = ae.compare([a, b], lambda i: y[i], meas, budget=n, random_state=3,
                           progress=False)  # fmt: skip
        assert plain.difference != res.difference


def test_assisted_smoke_reproduction_reports_single_models_and_pairs(tmp_path: Path) -> None:
    from reproduce import assisted

    out = assisted.run(tmp_path, reps=20, budgets=(50, 100, 200), smoke=True)
    md = (tmp_path / "model_assisted.md").read_text()
    assert "## Model pairs" in md and "/ error_rate Δ | 100 |" in md
    pair = json.loads((tmp_path / "model_assisted_pairs.json").read_text())[0]
    assert pair["truth"] == pytest.approx(pair["values"][0] - pair["values"][1])
    for name in (assisted.DEFAULT, assisted.MIXTURE_CV, assisted.PAIR_FEATURES,
                 "active (thesis SNIS)", "passive"):  # fmt: skip
        assert np.all(np.isfinite(pair["methods"][name]["mae"])), name
    assert len(out["settings"]) == 2
    # The Godambe–Joshi limit per budget, in its own table beside the default.
    assert "| setting | n | limit | ÷limit | labels ÷ model | if right | limit ÷peer |" in md
    for row in out["settings"]:
        lim = row["methods"][assisted.LIMIT]
        rmse = np.asarray(lim["rmse"])
        assert np.all(np.isfinite(rmse)) and np.all(np.diff(rmse) < 0) and np.all(rmse > 0)
        np.testing.assert_allclose(lim["mae"], np.sqrt(2 / np.pi) * rmse)
        assert np.all(np.isfinite(lim["rmse_labels"]))
        lo, hi = (np.asarray(x) for x in lim["labels_scatter"])
        assert np.all(lo < 1.0) and np.all(hi > 1.0)
        assert np.all(np.isfinite(row["methods"][assisted.DEFAULT]["rmse"]))


def test_few_labels_script_runs(capsys) -> None:
    """``benchmarks/few_labels.py`` (the README's known limits at a handful of labels) still
    runs: each study at 3 campaigns, smoke only."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "few_labels.py"
    spec = importlib.util.spec_from_file_location("few_labels", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for study in ("mse", "compare", "batches"):
        script.main([study, "--reps", "3"])
    out = capsys.readouterr().out
    assert out.count("coverage") == 9 and out.count("type I error") == 4


def test_alternatives_script_runs(capsys) -> None:
    """``benchmarks/assisted_alternatives.py`` (the measured-and-rejected alternatives the
    assisted module docstring quotes) still runs: two studies at 3 campaigns, smoke only."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "assisted_alternatives.py"
    spec = importlib.util.spec_from_file_location("assisted_alternatives", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(["power", "--reps", "3", "--tasks", "0"])
    script.main(["clusters", "--reps", "3"])
    script.main(["targeted", "--reps", "3", "--tasks", "0"])
    out = capsys.readouterr().out
    assert "λ = 0.5" in out and "κ = 4.0" in out and "cover" in out
    assert "π ∝ q* at 800 labels" in out

    # targeted(q, n) inverts the successive sample's π = 1 − exp(−q't): its distinct-label
    # inclusion probabilities are min(1, k·q) (Σ = n), up to the cap.
    from activeeval.sampling import inclusion_probabilities
    from reproduce.assisted import optimal_inclusion

    rng = np.random.default_rng(3)
    q = rng.gamma(0.5, size=400) * (rng.random(400) > 0.1)
    q /= q.sum()
    for n in (20, 150):
        goal = optimal_inclusion(q, n)
        got = inclusion_probabilities(script.targeted(q, n), n)
        if goal.max() < 0.999:  # no cap: exact
            np.testing.assert_allclose(got, goal, rtol=1e-9, atol=1e-12)
        else:  # capped at 0.999: Σπ = n takes a time t' ≠ t, π = 1 − (1 − goal)^(t'/t)
            free = (goal < 0.999) & (q > 0)
            assert (goal >= 1).any() and np.all(got[goal >= 1] > 0.99)
            ratio = np.log1p(-got[free]) / np.log1p(-goal[free])
            np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
            assert abs(ratio[0] - 1.0) < 0.01
            assert got.sum() == pytest.approx(n, rel=1e-9)
        assert np.all(got[q == 0] == 0)


@pytest.mark.parametrize("shift", [0.0, -3.0])
@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_stress_suite_intervals_equal_evaluate(measure: str, shift: float) -> None:
    """The robustness benchmark's vectorized default interval (design-based joined with the
    tempered-model score interval) is evaluate's, campaign for campaign: labels from the
    model (no Platt member joins), and from its log-odds − 3 (the labels reject b = 0, the
    Platt members join)."""
    from activeeval.demo import _runs
    from reproduce.robustness import tempered_intervals

    pa, _, y, rng = _pool(9)
    if shift:
        r = special.expit(special.logit(pa.proba[:, 1]) + shift)
        y = (rng.random(pa.n) < r).astype(int)
    meas = ae.get_measure(measure, pos_label=1).bind(pa)
    q = ae.sampling.optimal_distribution(pa, meas)
    budgets = np.array([40.0, 150.0])
    est, se, _, n_eff, drawn = _runs(q, pa, meas, y, budgets, 1, seed=3, assisted=True)
    lo, hi = tempered_intervals(pa, meas, y, q, budgets, est, se, n_eff, drawn)
    for j, b in enumerate(budgets):
        res = ae.evaluate(pa, lambda i: y[i], meas, budget=b, q=q, random_state=3)
        assert res.interval == "tempered"
        assert (res.inference.score.parameters is not None) == bool(shift)
        assert res.ci == pytest.approx((lo[0, j], hi[0, j]), rel=1e-9)


def test_stress_suite_intervals_equal_evaluate_for_a_gaussian() -> None:
    """As above for a regressor's Gaussian whose residuals are heavier-tailed than it says
    (Laplace): the replay's members take each campaign's residual kurtosis from the curves at
    3 and 4 (V and S are linear in it), evaluate's from its own curve."""
    from activeeval.demo import _runs
    from activeeval.estimators.tempered import residual_kurtosis
    from reproduce.robustness import tempered_intervals

    rng = np.random.default_rng(4)
    mean, var = rng.normal(size=1500), rng.uniform(0.2, 2.0, 1500)
    y = mean + 1.5 * np.sqrt(var) * rng.laplace(scale=1 / np.sqrt(2), size=1500)
    pred = ae.Gaussian(mean, var)
    meas = ae.get_measure("mse").bind(pred)
    q = ae.sampling.optimal_distribution(pred, meas)
    budgets = np.array([40.0, 150.0])
    est, se, _, n_eff, drawn = _runs(q, pred, meas, y, budgets, 1, seed=3, assisted=True)
    lo, hi = tempered_intervals(pred, meas, y, q, budgets, est, se, n_eff, drawn)
    for j, b in enumerate(budgets):
        res = ae.evaluate(pred, lambda i: y[i], meas, budget=b, q=q, random_state=3)
        assert res.interval == "tempered"
        units = np.unique(res.indices)
        assert residual_kurtosis(pred.take(units), y[units]) > 3.0  # the members' not 3
        assert res.ci == pytest.approx((lo[0, j], hi[0, j]), rel=1e-9)


@pytest.mark.parametrize("measure", ["error_rate", "f1"])
def test_sequential_benchmark_intervals_equal_evaluate(measure: str) -> None:
    """The sequential benchmark's anytime interval at a look is what ``evaluate`` reports
    after the same draws (one run, the campaign's generator): without a rule (the mixture
    boundary) and with a target width (the window boundary)."""
    from activeeval.demo import _runs
    from activeeval.estimators.report import PlainPool
    from activeeval.stopping import StoppingRule, horizon_draws, window_draws
    from reproduce.sequential import anytime_at_looks

    pa, _, y, _ = _pool(9)
    meas = ae.get_measure(measure, pos_label=1).bind(pa)
    q = ae.sampling.optimal_distribution(pa, meas)
    budgets = np.array([60.0, 200.0])
    _, _, _, _, (draws, kept) = _runs(q, pa, meas, y, budgets, 1, seed=3, assisted=True)
    pool = PlainPool([pa], meas, np.full(pa.n, 1.0 / pa.n))
    rep = pool.reporting(q, 0.95, "assisted")
    horizon = horizon_draws(200, q, None)
    lo, hi = anytime_at_looks(pool, rep, draws, kept, y, horizon)
    res = ae.evaluate(pa, lambda i: y[i], meas, budget=200, q=q, random_state=3)
    assert res.n_draws == kept[0, 1]
    assert res.confidence_interval(method="anytime") == pytest.approx((lo[0, 1], hi[0, 1]))
    window = window_draws(StoppingRule(target_width=1e-3), pool, rep, horizon)
    assert window is not None
    lo, hi = anytime_at_looks(pool, rep, draws, kept, y, horizon, window=window)
    res = ae.evaluate(pa, lambda i: y[i], meas, budget=200, q=q, random_state=3,
                      target_width=1e-3, step=60)  # fmt: skip
    assert res.interval == "anytime" and res.n_draws == kept[0, 1]
    assert res.ci == pytest.approx((lo[0, 1], hi[0, 1]), rel=1e-12)


def test_sequential_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    from reproduce import sequential

    res = sequential.run(tmp_path, 8, smoke=True)
    text = (tmp_path / "sequential.md").read_text()
    assert "time-uniform" in text.lower() or "every look" in text
    s = res["singles"][0]
    assert set(s["rules"]) == {sequential.RULE_WINDOW, sequential.RULE_MIXTURE, sequential.RULE_CR}
    assert 0.0 <= s["time_uniform_coverage"]["anytime"] <= 1.0
    assert "type1" in res["pairs"][0]


def test_classwise_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    from reproduce import classwise

    res = classwise.run(tmp_path, 6, budgets=(100,), smoke=True, log=lambda _: None)
    text = (tmp_path / "classwise.md").read_text()
    assert "| digits | logistic | macro_f1 | 100 |" in text
    row = res["rows"][0]
    assert set(row["arms"]) == {f"{m}/{e}" for m, e in classwise.ARMS}
    assert 0.0 <= row["arms"]["active/assisted"]["coverage"] <= 1.0


def test_continuous_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    from reproduce import continuous

    res = continuous.run(tmp_path, 6, budgets=(100,), smoke=True, log=lambda _: None)
    text = (tmp_path / "continuous.md").read_text()
    assert "| default_skew | logistic | roc_auc | 100 |" in text
    brier = next(r for r in res["rows"] if r["measure"] == "brier")
    assert set(brier["arms"]) == {f"{m}/{e}" for m, e in continuous.ARMS}
    assert 0.0 <= brier["arms"]["active/assisted"]["coverage"] <= 1.0
    # One section again, in two processes: the same numbers, the other sections kept.
    again = continuous.run(tmp_path, 6, budgets=(100,), smoke=True, log=lambda _: None,
                           sections=("groups",), workers=2)  # fmt: skip
    assert again["groups"] == res["groups"] and again["rows"] == res["rows"]
    assert again["reuse"] == res["reuse"]
    twice = continuous.run_measures(6, (100,), smoke=True, log=lambda _: None, workers=2)
    assert twice == res["rows"]
    # One measure's rows again: the others kept, the order the report's.
    one = continuous.run(tmp_path, 6, budgets=(100,), smoke=True, log=lambda _: None,
                         sections=("measures",), measures=("roc_auc",))  # fmt: skip
    assert one["rows"] == res["rows"]

    # The report again, up to the sections' timings ("(…, 3 s)"): replacing one timing by
    # its text could hit another section's equal one (a race this test lost at times).
    def untimed(s: str) -> str:
        return re.sub(r"\b\d+ s\)", "N s)", s)

    assert untimed((tmp_path / "continuous.md").read_text()) == untimed(text)
