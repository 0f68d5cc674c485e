"""Users' own objects as predictions (issue 27, Deliver 1): DataFrames read by column name,
positive-class probabilities, fitted scikit-learn models, Gaussian.from_std; and measures
that do not fit the predictions refused everywhere."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression

import activeeval as ae
from activeeval.errors import InvalidVarianceError, ShapeError, UnknownOptionError
from activeeval.predictive import as_predictive

M = 2000


@pytest.fixture(scope="module")
def binary() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    s = rng.beta(0.6, 2.0, M)
    return s, (rng.random(M) < s).astype(int)


@pytest.mark.parametrize("names", [(0, 1), ("ham", "spam"), ("p_0", "p_1")])
def test_a_dataframe_is_read_by_column_name(binary, names) -> None:
    """Reordered columns give the same distribution and bit-identical campaigns."""
    s, y = binary
    frame = pd.DataFrame({names[0]: 1 - s, names[1]: s})
    labels = np.array(["ham", "spam"]) if names[0] == "ham" else np.array([0, 1])
    truth = labels[y]
    results = []
    for f in (frame, frame[[names[1], names[0]]]):
        pred = as_predictive(f)
        assert list(pred.labels) == list(labels)
        np.testing.assert_array_equal(pred.proba, np.c_[1 - s, s])
        res = ae.evaluate(f, lambda i: truth[i], "f1", budget=150, random_state=4)
        results.append((res.estimate, res.stderr, res.indices.tolist()))
    assert results[0] == results[1]


def test_a_dataframe_mixing_class_columns_with_others_is_refused(binary) -> None:
    s, _ = binary
    with pytest.raises(ShapeError, match=r"mix class-probability columns with others \(\['id'\]\)"):
        as_predictive(pd.DataFrame({"id": np.arange(M), "p_0": 1 - s, "p_1": s}))
    with pytest.raises(ShapeError, match=r"mix class-probability columns with others"):
        as_predictive(pd.DataFrame({0: 1 - s, 1: s, "cost": np.ones(M)}))
    with pytest.raises(ShapeError, match="mix types"):
        as_predictive(pd.DataFrame({0: 1 - s, "one": s}))


def test_a_regressor_dataframe_takes_var_or_std() -> None:
    mean, sd = np.linspace(0, 1, 50), np.linspace(0.1, 2, 50)
    g = as_predictive(pd.DataFrame({"mean": mean, "var": sd**2}))
    h = as_predictive(pd.DataFrame({"std": sd, "mean": mean}))
    np.testing.assert_allclose(g.var, sd**2)
    np.testing.assert_allclose(h.var, sd**2)
    # with another column, named as what it is (it was blamed on mean and var as
    # "class-probability columns with others")
    with pytest.raises(
        ShapeError, match=r"a regressor's mean and spread with others \(\['dec'\]\)"
    ):
        as_predictive(pd.DataFrame({"mean": mean, "var": sd**2, "dec": mean}))
    with pytest.raises(ShapeError, match=r"with others \(\['var', 'std'\]\)"):
        as_predictive(pd.DataFrame({"mean": mean, "var": sd**2, "std": sd}))


def test_positive_class_probabilities_are_a_binary_classifier(binary) -> None:
    s, y = binary
    for given in (s, pd.Series(s, name="p_spam")):
        pred = as_predictive(given)
        assert list(pred.labels) == [0, 1]
        np.testing.assert_array_equal(pred.proba[:, 1], s)
    a = ae.evaluate(s, lambda i: y[i], "error_rate", budget=100, random_state=2)
    b = ae.evaluate(np.c_[1 - s, s], lambda i: y[i], "error_rate", budget=100, random_state=2)
    assert (a.estimate, a.stderr) == (b.estimate, b.stderr)
    with pytest.raises(ShapeError, match=r"probability of class 1, but entry 0 is 3"):
        as_predictive(np.r_[3.0, s])


def test_what_is_not_predictions_is_refused_with_what_to_pass(binary) -> None:
    s, y = binary
    with pytest.raises(ShapeError, match=r"Gaussian\.from_std\(mean, std\)"):
        ae.evaluate((s, s), lambda i: y[i], "mse")
    model = LogisticRegression().fit(s[:, None], y)
    with pytest.raises(ShapeError, match=r"activeeval\.from_estimator\(model, X_pool\)"):
        ae.evaluate(model, lambda i: y[i], "f1")


def test_from_estimator_reads_classifiers_and_probabilistic_regressors(binary) -> None:
    s, y = binary
    X = np.c_[np.log(s / (1 - s)), np.random.default_rng(1).normal(size=M)]
    words = np.array(["ham", "spam"])[y]
    clf = LogisticRegression().fit(X, words)
    pred = ae.from_estimator(clf, X)
    assert list(pred.labels) == ["ham", "spam"]
    np.testing.assert_array_equal(pred.proba, clf.predict_proba(X))
    for reg in (BayesianRidge(), GaussianProcessRegressor(alpha=0.1)):
        fitted = reg.fit(X[:200], s[:200])
        mean, std = fitted.predict(X[:300], return_std=True)
        g = ae.from_estimator(fitted, X[:300])
        np.testing.assert_array_equal(g.mean, mean)
        np.testing.assert_allclose(g.var, std**2)
    with pytest.raises(ShapeError, match=r"LinearRegression\.predict has no return_std"):
        ae.from_estimator(LinearRegression().fit(X, s), X)
    with pytest.raises(ShapeError, match="neither predict_proba nor predict"):
        ae.from_estimator(object(), X)
    # a classifier without probabilities is told how to get them, not sent to regressors
    from sklearn.svm import SVC, LinearSVC

    for clf in (SVC(), LinearSVC()):
        with pytest.raises(ShapeError, match=r"classifier without predict_proba.*probability=True"):
            ae.from_estimator(clf.fit(X[:200], y[:200]), X)


def test_gaussian_from_std_squares_and_the_repr_names_the_variance() -> None:
    g = ae.Gaussian.from_std([0.0, 1.0], [0.5, 2.0])
    np.testing.assert_array_equal(g.var, [0.25, 4.0])
    assert "var (variance)" in repr(g)
    with pytest.raises(InvalidVarianceError, match=r"^std: entry 1 is -2"):
        ae.Gaussian.from_std([0.0, 1.0], [0.5, -2.0])


@pytest.mark.parametrize(
    ("predictions", "measure", "fragment"),
    [
        (ae.Gaussian(np.zeros(M), np.ones(M)), "error_rate", "scores class labels"),
        (ae.Gaussian(np.zeros(M), np.ones(M)), "f1", "scores class labels"),
        (np.full((M, 10), 0.1), "mse", "scores numeric predictions"),
        (np.full((M, 2), 0.5), "mae", "scores numeric predictions"),
    ],
)
def test_a_measure_that_does_not_fit_the_predictions_is_refused_everywhere(
    predictions, measure, fragment, tmp_path
) -> None:
    def oracle(i):
        return np.zeros(len(i))

    with pytest.raises(UnknownOptionError, match=f"^measure: {measure} {fragment}"):
        ae.evaluate(predictions, oracle, measure, budget=50)
    with pytest.raises(UnknownOptionError, match=f"^measure: {measure} {fragment}"):
        ae.compare([predictions, predictions], oracle, measure, budget=50)
    with pytest.raises(UnknownOptionError, match=f"^measure: {measure} {fragment}"):
        ae.Session.create(tmp_path / "s.db", predictions, measure, 50)
    with pytest.raises(UnknownOptionError, match=f"^measure: {measure} {fragment}"):
        ae.plan(predictions, measure)


def test_a_session_reads_a_dataframe_by_name_and_refuses_unknown_class_names(
    binary, tmp_path
) -> None:
    s, y = binary
    frame = pd.DataFrame({"ham": 1 - s, "spam": s})
    words = np.array(["ham", "spam"])[y]
    out = []
    for k, f in enumerate((frame, frame[["spam", "ham"]])):
        for labels in (None, ["ham", "spam"]):
            path = tmp_path / f"s{k}{labels is None}.db"
            with ae.Session.create(path, f, "f1", 60, labels=labels, pos_label="spam") as sess:
                ids = sess.next_batch(60)
                sess.record({i: words[i] for i in ids})
                res = sess.estimate()
                out.append((res.estimate, res.stderr, ids))
    assert all(o == out[0] for o in out)
    with pytest.raises(ae.errors.LabelSpaceError, match=r"columns name classes \['eggs'\]"):
        ae.Session.create(tmp_path / "x.db", pd.DataFrame({"ham": 1 - s, "eggs": s}), "f1", 60,
                          labels=["ham", "spam"])  # fmt: skip


# ------------------------------------------------------------------ compare: each model's own
def test_each_models_own_stderr_is_the_binomial_one_on_a_passive_sample(binary) -> None:
    """Passive draws, the thesis's estimator, a 0/1 loss: each model's standard error is
    sqrt(p̂(1 − p̂)/n) over the n draws (Lemma 3.4 with equal weights)."""
    s, y = binary
    other = np.clip(s + np.random.default_rng(3).normal(0, 0.2, M), 0.01, 0.99)
    res = ae.compare([np.c_[1 - s, s], np.c_[1 - other, other]], lambda i: y[i], "error_rate",
                     budget=300, method="passive", estimator="snis", random_state=1)  # fmt: skip
    n = res.n_draws
    for j, pr in enumerate((s, other)):
        wrong = ((pr[res.indices] > 0.5).astype(int) != y[res.indices]).mean()
        assert res.estimates[j] == pytest.approx(wrong, abs=1e-12)
        assert res.stderrs[j] == pytest.approx(np.sqrt(wrong * (1 - wrong) / n), rel=1e-9)
    lo, hi = res.model_intervals(0.9)[1]
    assert (lo, hi) == pytest.approx(
        res.estimates[1] + np.array([-1, 1]) * 1.6448536 * res.stderrs[1]
    )
    # one-sided: from the lowest value of the measure's range, as EvaluationResult's
    assert res.model_intervals(0.95, alternative="less")[0][0] == 0.0


def _own_coverage(estimator: str, budget: int, reps: int = 400) -> np.ndarray:
    """Coverage of each model's own 95% interval from compare (the comparison's q, chosen for
    the difference), labels drawn afresh from the first model on each run."""
    rng = np.random.default_rng(9)
    s = rng.beta(0.6, 2.0, 3000)
    other = np.clip(s + rng.normal(0, 0.15, s.size), 0.01, 0.99)
    preds = [np.c_[1 - s, s], np.c_[1 - other, other]]
    hits = np.zeros(2)
    for r in range(reps):
        y = (rng.random(s.size) < s).astype(int)
        res = ae.compare(preds, lambda i, y=y: y[i], "error_rate", budget=budget,
                         estimator=estimator, random_state=r)  # fmt: skip
        truth = [np.mean((s > 0.5) != y), np.mean((other > 0.5) != y)]
        iv = res.model_intervals()
        hits += [(iv[j, 0] <= truth[j] <= iv[j, 1]) for j in range(2)]
    return hits / reps


FLOOR = 0.95 - 3 * np.sqrt(0.95 * 0.05 / 400)


@pytest.mark.parametrize("estimator", ["assisted", "snis"])
def test_each_models_own_interval_covers_from_400_labels(estimator: str) -> None:
    """Coverage ≥ 0.95 − 3 MC s.e. (400 runs) at 400 labels."""
    cover = _own_coverage(estimator, 400)
    assert np.all(cover >= FLOOR), cover


def test_each_models_own_interval_at_100_labels_covers_with_the_tempered_join() -> None:
    """At 100 labels the comparison q leaves ~10 draws where the models agree, whose rare
    errors a Wald interval cannot see: Wald alone covered 0.83. Joined with each model's
    tempered-model score interval (the model-assisted estimator's model_intervals) it covers
    ≥ 0.95 − 3 MC s.e. (400 runs)."""
    cover = _own_coverage("assisted", 100)
    assert np.all(cover >= FLOOR), cover


@pytest.mark.xfail(
    strict=True,
    reason="known limit, reported: the thesis estimator's own intervals keep Wald alone, "
    "0.80 at 100 labels on the comparison's draws (the tempered join is the model-assisted "
    "estimator's)",
)
def test_each_models_own_snis_interval_at_100_labels_covers_less() -> None:
    cover = _own_coverage("snis", 100)
    assert np.all(cover >= FLOOR), cover


# ------------------------------------------------------------------ decisions apart from beliefs
def test_with_decision_keeps_the_beliefs_and_scores_the_decision(binary) -> None:
    s, _ = binary
    cat = ae.Categorical(np.c_[1 - s, s])
    f = (s > 0.3).astype(int)
    d = cat.with_decision(f)
    np.testing.assert_array_equal(d.point_prediction(), f)
    np.testing.assert_array_equal(d.proba, cat.proba)
    np.testing.assert_array_equal(d.predicted_probability, np.where(f == 1, s, 1 - s))
    part = d.take(np.arange(10, 20))
    np.testing.assert_array_equal(part.point_prediction(), f[10:20])
    with pytest.raises(ae.errors.LabelSpaceError):
        cat.with_decision(np.full(M, 7))
    with pytest.raises(ShapeError, match=r"^prediction: expected one decision per pool"):
        cat.with_decision(f[:-1])
    g = ae.Gaussian(np.zeros(5), np.ones(5)).with_decision(np.arange(5.0))
    np.testing.assert_array_equal(g.point_prediction(), np.arange(5.0))
    np.testing.assert_array_equal(g.take([1, 3]).point_prediction(), [1.0, 3.0])


def test_evaluate_scores_a_threshold_decision_without_bias(binary) -> None:
    """F1 of the decision s > 0.3 with the model's probabilities as beliefs: q is
    optimal_distribution(..., prediction=f) (Thm 4.1 with f apart from p(y | x)), the
    estimate unbiased within 3 MC s.e. and the interval covering ≥ 0.95 − 3 MC s.e. over
    300 pools drawn from the beliefs."""
    from activeeval.sampling import optimal_distribution

    s, _ = binary
    proba = np.c_[1 - s, s]
    f = (s > 0.3).astype(int)
    q = optimal_distribution(ae.Categorical(proba), "f1", prediction=f)
    rng = np.random.default_rng(12)
    dev, hits, reps = [], 0, 300
    for r in range(reps):
        y = (rng.random(M) < s).astype(int)
        res = ae.evaluate(proba, lambda i, y=y: y[i], "f1", budget=300, random_state=r,
                          prediction=f)  # fmt: skip
        truth = 2 * np.sum((f == 1) & (y == 1)) / (np.sum(f == 1) + np.sum(y == 1))
        dev.append(res.inference.estimate - truth)
        hits += res.ci[0] <= truth <= res.ci[1]
    np.testing.assert_allclose(res.q, q[res.indices], rtol=1e-12)
    assert abs(np.mean(dev)) <= 3 * np.std(dev) / np.sqrt(reps)
    assert hits / reps >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)
    # the planner scores the same decision
    assert ae.plan(proba, "f1", [300], prediction=f).stderr(300) == ae.plan(
        ae.Categorical(proba).with_decision(f), "f1", [300]
    ).stderr(300)


def test_compare_takes_one_decision_per_model(binary) -> None:
    """Two thresholds on the same beliefs: the difference of their F1 values, unbiased."""
    s, _ = binary
    proba = np.c_[1 - s, s]
    fa, fb = (s > 0.3).astype(int), (s > 0.5).astype(int)
    rng = np.random.default_rng(13)
    dev = []
    for r in range(200):
        y = (rng.random(M) < s).astype(int)
        res = ae.compare([proba, proba], lambda i, y=y: y[i], "f1", budget=200,
                         random_state=r, prediction=[fa, fb])  # fmt: skip

        def f1(f, y=y):
            return 2 * np.sum((f == 1) & (y == 1)) / (np.sum(f == 1) + np.sum(y == 1))

        dev.append(res.difference - (f1(fa) - f1(fb)))
    assert abs(np.mean(dev)) <= 3 * np.std(dev) / np.sqrt(200)
    one_each = r"^prediction: a comparison takes one decision array \(or None\) per model"
    with pytest.raises(ShapeError, match=one_each + r", a list of 2; got 1\."):
        ae.compare([proba, proba], lambda i: np.zeros(len(i)), "f1", prediction=[fa])
    with pytest.raises(ShapeError, match="not to a Mixture"):
        ae.evaluate(ae.Mixture([ae.Categorical(proba)] * 2), lambda i: np.zeros(len(i)),
                    "f1", prediction=fa)  # fmt: skip


@pytest.mark.filterwarnings("ignore:Predicted variances smaller than 0:UserWarning")
def test_review_findings_on_inputs(binary, tmp_path) -> None:
    """An independent review's findings: CSV-style string column names "0", "1" are the
    integer classes (the pool files' rule); a cost matrix is refused where a frame's class
    order is ambiguous; an unfitted or multi-target regressor is refused."""
    s, y = binary
    frame = pd.DataFrame({"1": s, "0": 1 - s})
    assert as_predictive(frame).labels.tolist() == [0, 1]
    res = ae.evaluate(frame, lambda i: y[i], "f1", budget=50, random_state=0)
    assert np.isfinite(res.estimate)
    words = pd.DataFrame({"spam": s, "ham": 1 - s})
    cost = ae.CostMatrixLoss([[0.0, 10.0], [1.0, 0.0]])
    with pytest.raises(UnknownOptionError, match=r"^cost_matrix: the classes were read"):
        ae.evaluate(words, lambda i: np.array(["ham", "spam"])[y[i]], cost, budget=50)
    named = ae.CostMatrixLoss([[0.0, 10.0], [1.0, 0.0]], labels=["spam", "ham"])
    explicit = ae.Categorical(np.c_[s, 1 - s], labels=["spam", "ham"])
    a = ae.evaluate(words, lambda i: np.array(["ham", "spam"])[y[i]], named, budget=80,
                    random_state=1)  # fmt: skip
    b = ae.evaluate(explicit, lambda i: np.array(["ham", "spam"])[y[i]], named, budget=80,
                    random_state=1)  # fmt: skip
    assert a.estimate == pytest.approx(b.estimate, rel=1e-12)
    ints = ae.evaluate(pd.DataFrame({1: s, 0: 1 - s}), lambda i: y[i], cost, budget=50)
    assert np.isfinite(ints.estimate)  # classes 0..K-1 index the matrix unambiguously
    X = np.c_[s, s**2]
    with pytest.raises(ShapeError, match=r"^estimator: GaussianProcessRegressor is not fitted"):
        ae.from_estimator(GaussianProcessRegressor(), X)
    two = GaussianProcessRegressor().fit(X[:100], np.c_[s[:100], s[:100]])
    with pytest.raises(ShapeError, match="targets per instance"):
        ae.from_estimator(two, X[:50])


def test_one_undefined_estimate_keeps_the_other_models_interval(binary) -> None:
    """Precision of a model that never predicts the positive class is undefined; the other
    model's own interval stays."""
    s, y = binary
    never = np.c_[np.ones(M), np.zeros(M)]
    with pytest.warns(ae.UndefinedEstimateWarning, match="precision"):
        res = ae.compare([np.c_[1 - s, s], never], lambda i: y[i], "precision", budget=200,
                         estimator="snis", random_state=0)  # fmt: skip
    assert np.isnan(res.estimates[1]) and np.isfinite(res.estimates[0])
    assert np.isfinite(res.stderrs[0]) and np.isnan(res.stderrs[1])
    assert np.all(np.isfinite(res.model_intervals()[0]))


def _run_session(session, y) -> ae.EvaluationResult | ae.ComparisonResult:  # type: ignore[no-untyped-def]
    while ids := session.next_batch(40):
        session.record({i: int(y[i]) for i in ids})
    return session.estimate() if session.plan.n_models == 1 else session.compare()


def test_a_session_scores_a_decision_apart_from_its_beliefs_as_evaluate_does(
    binary, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """F1 of the threshold 0.3 (not the argmax): the session stores the decision beside the
    beliefs, draws from the q planned for it and reports what evaluate reports, reopened."""
    s, y = binary
    proba, f = np.c_[1 - s, s], (s > 0.3).astype(int)
    want = ae.evaluate(proba, lambda i: y[i], "f1", budget=120, random_state=2, prediction=f)
    with ae.Session.create(tmp_path / "s.db", proba, "f1", 120, seed=2, prediction=f) as ses:
        got = _run_session(ses, y)
    assert (got.estimate, got.ci, got.n_labels) == (want.estimate, want.ci, want.n_labels)
    with ae.Session.open(tmp_path / "s.db") as again:  # the decision is read back
        assert again.estimate().estimate == want.estimate
    argmax = ae.evaluate(proba, lambda i: y[i], "f1", budget=120, random_state=2)
    assert argmax.estimate != want.estimate  # the decision matters on this pool
    # a Categorical that already carries the decision is stored the same way
    carried = ae.Categorical(proba).with_decision(f)
    with ae.Session.create(tmp_path / "t.db", carried, "f1", 120, seed=2) as ses:
        assert _run_session(ses, y).estimate == want.estimate


def test_a_comparison_session_takes_one_decision_per_model(binary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    s, y = binary
    proba = np.c_[1 - s, s]
    fs = [(s > 0.3).astype(int), None]
    want = ae.compare([proba, proba], lambda i: y[i], "f1", budget=150, random_state=1,
                      prediction=fs)  # fmt: skip
    with ae.Session.create(tmp_path / "s.db", [proba, proba], "f1", 150, seed=1,
                           prediction=fs) as ses:  # fmt: skip
        got = _run_session(ses, y)
    assert (got.difference, got.ci) == (want.difference, want.ci)
    with pytest.raises(ShapeError, match=r"^prediction: a comparison takes one decision array"):
        ae.Session.create(tmp_path / "u.db", [proba, proba], "f1", 50, prediction=fs[0])
    with pytest.raises(ShapeError, match=r"^prediction: expected one decision per pool"):
        ae.Session.create(tmp_path / "v.db", proba, "f1", 50, prediction=fs[0][:10])


def test_a_stored_decision_is_part_of_the_fingerprint(binary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    s, _ = binary
    f = (s > 0.3).astype(int)
    ae.Session.create(tmp_path / "s.db", np.c_[1 - s, s], "f1", 50, prediction=f).close()
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("UPDATE models SET decision = ?", ((1.0 - f).astype("<f8").tobytes(),))
    conn.commit()
    conn.close()
    with ae.Session.open(tmp_path / "s.db") as reopened:  # the pool is checked when read
        with pytest.raises(ae.errors.StoreError, match="does not match its fingerprint"):
            reopened.predictives  # noqa: B018


def test_cli_session_init_reads_the_decision_from_a_pool_column(binary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from activeeval.cli import main

    s, y = binary
    f = (s > 0.3).astype(int)
    pool = tmp_path / "pool.csv"
    rows = enumerate(zip(s.tolist(), f.tolist(), strict=True))
    pool.write_text(
        "id,p_0,p_1,at_0_3\n" + "".join(f"{i},{1 - v!r},{v!r},{d}\n" for i, (v, d) in rows)
    )
    run = CliRunner().invoke(main, ["session", "init", str(tmp_path / "s.db"), "--pool", str(pool),
                                    "--measure", "f1", "--budget", "80", "--seed", "5",
                                    "--prediction-column", "at_0_3"])  # fmt: skip
    assert run.exit_code == 0, run.stderr
    with ae.Session.open(tmp_path / "s.db") as ses:
        got = _run_session(ses, y)
    want = ae.evaluate(np.c_[1 - s, s], lambda i: y[i], "f1", budget=80, random_state=5,
                       prediction=f)  # fmt: skip
    assert got.estimate == pytest.approx(want.estimate, rel=1e-12)
    bad = CliRunner().invoke(main, ["session", "init", str(tmp_path / "t.db"), "--pool",
                                    str(pool), "--measure", "f1", "--budget", "80",
                                    "--prediction-column", "p_1"])  # fmt: skip
    assert bad.exit_code == 2 and "is not a class of the model" in bad.stderr


def test_a_decision_outside_the_classes_in_an_object_array_is_named(binary) -> None:
    """An object array's stray value (not a numpy scalar) is named with its position; it
    once raised AttributeError from the message itself."""
    s, y = binary
    f = (s > 0.3).astype(int).astype(object)
    f[17] = 7
    with pytest.raises(ae.errors.LabelSpaceError, match=r"value 7 \(position 17\)"):
        ae.evaluate(np.c_[1 - s, s], lambda i: y[i], "f1", budget=20, prediction=f)


def test_hard_labels_as_probabilities_are_warned_about(binary) -> None:
    s, _ = binary
    with pytest.warns(ae.ActiveEvalWarning, match=r"hard labels \(model\.predict\)"):
        as_predictive((s > 0.5).astype(float))


def test_each_models_interval_is_clipped_to_the_measures_range(binary) -> None:
    """A rare error rate's own interval does not go below 0."""
    s, y = binary
    other = np.clip(s + np.random.default_rng(3).normal(0, 0.2, M), 0.01, 0.99)
    res = ae.compare([np.c_[1 - s, s], np.c_[1 - other, other]], lambda i: y[i], "error_rate",
                     budget=40, random_state=3)  # fmt: skip
    assert res.value_range == (0.0, 1.0)
    iv = res.model_intervals()
    assert np.all(iv >= 0.0) and np.all(iv <= 1.0)
    raw = np.asarray(res.estimates)[:, None] + np.array([-1, 1]) * 1.959964 * res.stderrs[:, None]
    wald = np.clip(raw, 0, 1)  # joined with each model's score interval (test_tempered.py)
    assert np.all(iv[:, 0] <= wald[:, 0] + 1e-6) and np.all(iv[:, 1] >= wald[:, 1] - 1e-6)
    assert iv[0, 0] == 0.0  # the clipped end


def test_a_session_takes_a_comparison_s_decisions_as_rows_as_compare_does(binary, tmp_path):  # type: ignore[no-untyped-def]
    s, _ = binary
    other = np.clip(s + 0.1, 0.01, 0.99)
    f, g = (s > 0.3).astype(int), (other > 0.6).astype(int)
    pools = [np.c_[1 - s, s], np.c_[1 - other, other]]
    with ae.Session.create(tmp_path / "a.db", pools, "f1", 50, prediction=np.vstack([f, g])) as a:
        got = [p.point_prediction() for p in a.predictives]
    assert np.array_equal(got[0], f) and np.array_equal(got[1], g)
