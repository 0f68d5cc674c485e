"""The robustness stress suite (issue 26): GLIDE's active design in closed form, the GLIDE
worker (under ``.venv-glide``, when present) and a smoke run of ``reproduce --only
robustness``."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from reproduce import robustness
from reproduce.assisted import optimal_inclusion

ROOT = Path(__file__).resolve().parents[1]
NO_GLIDE = "no .venv-glide (make glide-env): the GLIDE path is not tested"


def _worker():
    spec = importlib.util.spec_from_file_location("glide_worker", robustness.GLIDE_WORKER)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n", [1, 7, 40, 150, 299, 300])
def test_capped_inclusion_solves_the_capped_problem(n: int) -> None:
    rng = np.random.default_rng(n)
    u = rng.gamma(0.3, size=300) + 1e-6  # heavy right tail: the cap binds for large n
    pi = _worker().capped_inclusion(u, n)
    assert pi.sum() == pytest.approx(n, rel=1e-12)
    assert np.all(pi > 0) and np.all(pi <= 1.0)
    free = pi < 1.0
    if free.any():  # π ∝ u below the cap, and every capped u exceeds every free one
        ratio = pi[free] / u[free]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
        if (~free).any():
            assert u[~free].min() >= u[free].max()
    # The same optimum as the Godambe–Joshi design of the model-assisted benchmark.
    np.testing.assert_allclose(pi, optimal_inclusion(u, n), rtol=1e-12, atol=1e-15)


def test_capped_inclusion_is_glides_optimum_and_draw() -> None:
    """On a tiny pool: where no π reaches 1 GLIDE's formula gives the closed form's π within
    1e-12; where the cap binds GLIDE's own trust-constr optimizer (``maxiter=100``) stops
    short of the optimum (measured: 9.4e-5 from it at n = 12, its largest π 0.99997 where
    the optimum is 1) and the closed form's Σu²/π is no larger than its
    (the closed form is the exact optimum, GLIDE's an approximation of it). The mirrored draw
    equals ``ActiveSampler().sample`` seed for seed given GLIDE's π."""
    if not robustness.glide_available():
        pytest.skip(NO_GLIDE)
    script = textwrap.dedent(
        f"""
        import importlib.util, json, warnings
        import numpy as np
        from glide.samplers import ActiveSampler
        spec = importlib.util.spec_from_file_location("w", {str(robustness.GLIDE_WORKER)!r})
        w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)
        rng = np.random.default_rng(0)
        u = rng.gamma(0.5, size=40) + 0.01
        out = {{}}
        for n in (3, 12):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = ActiveSampler()._compute_probabilities(u, n)
            ours = w.capped_inclusion(u, n)
            out[n] = {{
                "diff": float(np.abs(theirs - ours).max()),
                "capped": int((ours >= 1).sum()),
                "objective": [float(np.sum(u**2 / ours)), float(np.sum(u**2 / theirs))],
            }}
            for seed in range(5 if n == 3 else 1):  # trust-constr takes 3 s a call on 40 items
                pi_g, xi_g = ActiveSampler().sample(u, n, random_seed=seed)
                pi_o, xi_o = w.active_draw(theirs, n, seed)
                assert np.array_equal(pi_g, pi_o), (n, seed)
                assert np.array_equal(xi_g, xi_o, equal_nan=True), (n, seed)
        print(json.dumps(out))
        """
    )
    res = subprocess.run(
        [str(robustness.GLIDE_PYTHON), "-c", script], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["3"]["capped"] == 0 and out["3"]["diff"] < 1e-12
    assert out["12"]["capped"] > 0  # GLIDE's trust-constr path is exercised
    for n, v in out.items():
        ours, theirs = v["objective"]
        assert ours <= theirs * (1 + 1e-12), n
        assert v["diff"] < 2e-4, (n, v)


def test_neyman_strata_give_glide_two_labels_each() -> None:
    rng = np.random.default_rng(1)
    proxy = np.concatenate([np.full(500, 1e-4), rng.beta(0.5, 5, 1500)])  # one flat stratum
    groups = np.digitize(proxy, np.unique(np.quantile(proxy, [0.25, 0.5, 0.75, 0.9])))
    for n in (20, 200, 1500):  # 1500: the spread strata would be over-allocated
        g = robustness.neyman_strata(proxy, groups, n)
        k = g.max() + 1
        size = np.bincount(g)
        sd = np.array([proxy[g == h].std(ddof=1) for h in range(k)])
        alloc = n * size * sd / (size * sd).sum()
        assert np.all(alloc >= 2) and np.all(alloc <= size - 3)
        # Strata stay intervals of the proxy (merged neighbours only).
        order = np.argsort(proxy, kind="stable")
        assert np.all(np.diff(g[order]) >= 0)


def test_glide_worker_runs_both_designs() -> None:
    if not robustness.glide_available():
        pytest.skip(NO_GLIDE)
    rng = np.random.default_rng(2)
    m = 600
    p = rng.beta(0.5, 6, m)
    target = (rng.random(m) < p).astype(float)
    u = np.sqrt(p * (1 - p)) + 1e-6
    groups = np.digitize(p, np.quantile(p, [0.5, 0.9]))
    budgets = np.array([40, 120])
    for method in ("active", "stratified"):
        res = robustness.run_glide(target, p, u, groups, budgets, np.arange(6), method)
        assert res["estimate"].shape == (6, 2)
        assert np.all(np.isfinite(res["estimate"])), res["errors"]
        assert np.all(res["lower"] <= res["estimate"]) and np.all(res["estimate"] <= res["upper"])
        assert np.all(res["n_labels"] <= budgets)


def test_robustness_smoke_reproduction_writes_report(tmp_path: Path) -> None:
    result = robustness.run(tmp_path, reps=8, budgets=(50, 100), smoke=True, oasis_reps=3,
                            log=lambda s: None)  # fmt: skip
    md = (tmp_path / "robustness.md").read_text()
    assert md.startswith("# Robustness") and "## Headline" in md
    data = json.loads((tmp_path / "robustness.json").read_text())
    assert data["reps"] == 8 and {s["measure"] for s in data["settings"]} == {"error_rate", "f1"}
    for s in result["settings"]:
        d = s["methods"][robustness.DEFAULT]
        assert np.all(np.isfinite(d["mae"])) and np.all(np.isfinite(d["coverage"]))
        assert {robustness.PASSIVE, robustness.SNIS} <= set(s["methods"])
        if s["measure"] == "error_rate":
            glide = robustness.GLIDE_ASI in s["methods"]
            assert glide == robustness.glide_available()
            if not glide:
                assert robustness.GLIDE_MISSING in md
    # The overconfident digits model: it expects far fewer errors than the pool has.
    m = data["models"]["digits3 / logits ×2"]
    assert m["expected_error"] < 0.5 * m["true_error"]
    # The digits case: split 0 is the suite's digits3 / logistic, both measures, both
    # budgets, with the default's coverage; a --sections run replaces it and keeps the cells.
    case = data["digits_case"]
    assert "## The issue's digits case" in md
    assert [(r["split"], r["measure"]) for r in case["rows"]] == [(0, "error_rate"), (0, "f1")]
    task, pred = robustness.model_for("digits3", "logistic", {}, {})
    assert case["rows"][0]["model"] == robustness.how_wrong(pred, task.y_pool)
    for r in case["rows"]:
        assert r["budgets"] == list(robustness.DIGITS_BUDGETS)
        assert np.all(np.isfinite(r["methods"][robustness.DEFAULT]["coverage"]))
    again = robustness.run(tmp_path, reps=4, smoke=True, sections=("digits_case",),
                           log=lambda s: None)  # fmt: skip
    assert again["settings"] == data["settings"] and again["digits_case"]["reps"] == 4
    assert "recheck" in data and again["recheck"] == data["recheck"]  # kept with its cells
    assert json.loads((tmp_path / "robustness.json").read_text())["digits_case"]["reps"] == 4
    cells = robustness.run(tmp_path, reps=4, budgets=(50,), smoke=True, oasis_reps=2,
                           sections=("settings",), log=lambda s: None)  # fmt: skip
    assert cells["digits_case"] == again["digits_case"] and cells["reps"] == 4
    # New cells: the re-measurement of the old ones is dropped, not kept beside them.
    assert (
        "recheck" not in cells and "measured again" not in (tmp_path / "robustness.md").read_text()
    )


def test_recheck_measures_again_the_cells_below_a_floor() -> None:
    """A cell is re-measured when its coverage is below the floor (0.90 at 50 labels, 0.93
    from 100) or, from 100 labels, a one-sided bound's is below 0.93; the others are not."""
    d = robustness.DEFAULT
    rows = [
        {"task": "digits3", "model": "logits ×2", "measure": "error_rate", "budgets": [50, 100],
         "methods": {d: {"coverage": [0.91, 0.92], "coverage_lower": [0.5, 0.99],
                         "coverage_upper": [0.5, 0.99]}}},
        {"task": "digits3", "model": "logits ×2", "measure": "f1", "budgets": [50, 100],
         "methods": {d: {"coverage": [0.89, 0.95], "coverage_lower": [0.99, 0.92],
                         "coverage_upper": [0.99, 0.99]}}},
    ]  # fmt: skip
    cells = robustness.recheck({"settings": rows, "reps": 250}, reps=12, log=lambda s: None)
    assert [(c["measure"], c["n"]) for c in cells] == [("error_rate", 100), ("f1", 50), ("f1", 100)]
    assert [c["before"]["coverage"] for c in cells] == [0.92, 0.89, 0.95]
    assert cells[2]["before"]["lower"] == 0.92 and cells[0]["before"]["reps"] == 250
    for c in cells:
        assert c["reps"] == 12
        # Fractions of 12 campaigns; a two-sided 95% interval holds whenever both one-sided
        # 95% bounds (the two-sided 90% interval's ends) do, so it covers at least as often
        # as the two together.
        for k in ("coverage", "lower", "upper"):
            assert abs(c[k] * 12 - round(c[k] * 12)) < 1e-9
        assert c["coverage"] >= c["lower"] + c["upper"] - 1 - 1e-12
    md = "\n".join(robustness.recheck_lines(cells))
    assert "measured again (12 campaigns)" in md and "digits3 / logits ×2 / f1 @50" in md


@pytest.mark.parametrize(
    "argv",
    [
        ["--only", "continuous", "--sections", "digits_case"],
        ["--only", "robustness", "--sections", "groups"],
        ["--only", "estimation", "--sections", "groups"],
        ["--only", "robustness", "--sections", "digits_case"],  # OUT has no robustness.json
        ["--sections", "groups"],  # every part, and OUT has no continuous.json
        ["--only", "planning", "--sections", "groups"],
        ["--only", "planning", "--sections", "probability"],  # OUT has no planning.json
        ["--only", "robustness", "--sections", "recheck"],  # no robustness.json to recheck
    ],
)
def test_reproduce_refuses_sections_it_cannot_run(argv: list[str], tmp_path: Path) -> None:
    """``--sections`` names sections of the part run, and a part regenerated in part keeps
    the rest from OUT's JSON: another part's section, a part without sections, or no JSON to
    keep from is an error before any work (argparse exits with status 2)."""
    from reproduce.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main([*argv, "--out", str(tmp_path)])
    assert exc.value.code == 2
