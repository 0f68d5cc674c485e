"""Labeling sessions on ranked pools (thesis Ch. 6; DESIGN.md "Command line": labels file
``id,item,grade``): the session hands out query ids, takes the grade of every item of each
query, and its estimate is the self-normalized estimate of eq. 3.31 over per-query DCG/ERR
values — checked against a direct computation from the grades (an independent DCG/ERR) and
against ``evaluate``/``compare`` with ``estimator="snis"`` on the same seed. Bad input is
refused with the store unchanged; the command line reads ranked pool files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import activeeval as ae
from activeeval.cli import main
from activeeval.session import Session
from test_store import _dump  # the store's whole state as SQL

N_GRADES = 3


def _pools(seed: int = 0, m: int = 50, vocab: int = 25):
    """Two rankers over m queries (item ids from a shared vocabulary, so their lists
    overlap), their relevance models, and a true grade for every (query, item)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(N_GRADES, size=(m, vocab), p=[0.6, 0.3, 0.1])
    rels = []
    for _ in range(2):
        lens = rng.integers(2, 7, m)
        off = np.r_[0, np.cumsum(lens)]
        items = np.concatenate([rng.permutation(vocab)[:n] for n in lens])
        proba = rng.dirichlet(np.ones(N_GRADES), off[-1])
        rels.append(ae.GradedRelevance(proba, off, items=items))
    return rels, truth


def _grades(rel: ae.GradedRelevance, truth: np.ndarray, i: int) -> np.ndarray:
    assert rel.items is not None
    return truth[i, rel.items[rel.offsets[i] : rel.offsets[i + 1]]]


def _dcg(grades: np.ndarray) -> float:
    """Thesis eq. 6.1 with gain 2^y − 1 and discount 1/log2(rank + 1), written out."""
    return float(sum((2.0**g - 1) / np.log2(r + 2) for r, g in enumerate(grades)))


def _err(grades: np.ndarray, max_grade: int) -> float:
    """Expected reciprocal rank (Chapelle et al., 2009), written out as a loop."""
    out, go_on = 0.0, 1.0
    for r, g in enumerate(grades):
        stop = (2.0**g - 1) / 2.0**max_grade
        out += go_on * stop / (r + 1)
        go_on *= 1 - stop
    return out


def _rows(rel: ae.GradedRelevance, truth: np.ndarray, ids: list[int]) -> pd.DataFrame:
    assert rel.items is not None
    rows = [
        (i, int(it), int(truth[i, it]))
        for i in ids
        for it in rel.items[rel.offsets[i] : rel.offsets[i + 1]]
    ]
    return pd.DataFrame(rows, columns=["id", "item", "grade"])


def _union_rows(rels, truth: np.ndarray, ids: list[int]) -> pd.DataFrame:
    frames = [_rows(r, truth, ids) for r in rels]
    return pd.concat(frames).drop_duplicates(["id", "item"]).reset_index(drop=True)


# ------------------------------------------------------------------------ estimates
def test_evaluation_session_is_evaluate_and_the_snis_sum_of_the_queries_dcg(tmp_path: Path) -> None:
    (rel, _), truth = _pools()
    s = Session.create(tmp_path / "r.db", rel, "dcg", 30, seed=4)
    assert s.plan.ranking and s.plan.label_space == (0, 1, 2) and s.plan.measure == "dcg"
    ids = s.next_batch(40)
    assert len(ids) == 30 and len(set(ids)) == 30
    s.record(_rows(rel, truth, ids).sample(frac=1.0, random_state=0))  # any row order
    est = s.estimate(estimator="snis")
    # Direct: Σ v·DCG / Σ v over the draws, v = (1/m)/q (eq. 3.31), DCG from the grades.
    frame = s.labels_frame()
    draws = np.array(
        [p for p in _session_draws(tmp_path / "r.db") if p in set(frame["id"].astype(int).tolist())]
    )
    values = np.array([_dcg(_grades(rel, truth, i)) for i in draws])
    v = 1.0 / s.q[draws]
    assert est.estimate == pytest.approx(float(v @ values / v.sum()), rel=1e-12)
    assert est.n_labels == 30
    # The same campaign through evaluate, with either estimator: bit-identical.
    for how in ("snis", "assisted"):
        res = ae.evaluate(
            rel,
            lambda idx: [_grades(rel, truth, i) for i in idx],
            "dcg",
            budget=30,
            random_state=4,
            estimator=how,
        )
        got = s.estimate(estimator=how)
        assert (got.estimate, got.stderr, got.ci) == (res.estimate, res.stderr, res.ci)
        assert got.n_draws == res.n_draws
        # The draws, their q, and the grades flat with each draw's offsets, as evaluate's.
        np.testing.assert_array_equal(got.indices, res.indices)
        np.testing.assert_array_equal(got.q, res.q)
        np.testing.assert_array_equal(got.labels, res.labels)
        np.testing.assert_array_equal(got.label_offsets, res.label_offsets)
        assert (got.n_labels, got.cost, got.budget) == (res.n_labels, res.cost, res.budget)
    assert s.estimate().estimate == res.estimate != est.estimate  # the default: assisted
    s.close()
    again = Session.open(tmp_path / "r.db").estimate()
    assert (again.estimate, again.stderr) == (res.estimate, res.stderr)


def _session_draws(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        cursor = conn.execute("SELECT cursor FROM state").fetchone()[0]
        return [
            r[0]
            for r in conn.execute(
                "SELECT position FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
            )
        ]
    finally:
        conn.close()


def test_comparison_session_labels_the_union_and_matches_compare(tmp_path: Path) -> None:
    rels, truth = _pools(seed=1)
    s = Session.create(tmp_path / "c.db", rels, "err", 25, seed=2)
    assert s.plan.kind == "comparison" and s.plan.measure_spec == {
        "class": "ERR",
        "k": None,
        "max_grade": N_GRADES - 1,
    }
    ids = s.next_batch(25)
    s.record(_union_rows(rels, truth, ids))
    for how in ("assisted", "snis"):  # the session's default, then the thesis's
        c = s.compare() if how == "assisted" else s.compare(estimator="snis")
        res = ae.compare(
            rels,
            lambda idx: [truth[i, ae.ranking.ranking_union(*rels, [i])[0]] for i in idx],
            "err",
            budget=25,
            random_state=2,
            estimator=how,
        )
        assert (c.difference, c.stderr, c.p_value) == (res.difference, res.stderr, res.p_value)
        assert c.ci == res.ci and list(c.estimates) == list(res.estimates)
        np.testing.assert_array_equal(c.indices, res.indices)
        np.testing.assert_array_equal(c.q, res.q)
        np.testing.assert_array_equal(c.labels, res.labels)
        np.testing.assert_array_equal(c.label_offsets, res.label_offsets)
        assert (c.n_labels, c.n_draws, c.cost) == (res.n_labels, res.n_draws, res.cost)
    # Each ranker's estimate from an ERR written out, on the draws' grades.
    draws = np.array(_session_draws(tmp_path / "c.db"))
    v = 1.0 / s.q[draws]
    for j, rel in enumerate(rels):
        vals = np.array([_err(_grades(rel, truth, i), N_GRADES - 1) for i in draws])
        direct = float(v @ vals / v.sum())
        assert s.estimate(j, estimator="snis").estimate == pytest.approx(direct, rel=1e-12)
        assert c.estimates[j] == pytest.approx(direct, rel=1e-12)


def test_mapping_input_rows_input_and_export_store_the_same_labels(tmp_path: Path) -> None:
    (rel, _), truth = _pools(seed=2)
    a = Session.create(tmp_path / "a.db", rel, "dcg", 12, seed=0)
    b = Session.create(tmp_path / "b.db", rel, "dcg", 12, seed=0)
    ids = a.next_batch(12)
    assert b.next_batch(12) == ids
    a.record({i: _grades(rel, truth, i).tolist() for i in ids})
    b.record(_rows(rel, truth, ids))
    assert a.estimate().estimate == b.estimate().estimate
    exported = a.labels_frame()
    assert list(exported.columns[:3]) == ["id", "item", "grade"]
    assert exported.shape[0] == int(rel.lengths[ids].sum())
    done = a.record(exported)  # an export is a valid labels input: nothing changes
    assert (done.n_new, done.n_unchanged, done.n_overwritten) == (0, 12, 0)
    conn = sqlite3.connect(tmp_path / "a.db")
    stored = dict(conn.execute("SELECT position, label FROM labels").fetchall())
    conn.close()
    assert stored[ids[0]] == json.dumps(_grades(rel, truth, ids[0]).tolist())


def test_query_costs_come_from_the_item_costs(tmp_path: Path) -> None:
    (rel, _), truth = _pools(seed=3)
    rng = np.random.default_rng(0)
    costly = ae.GradedRelevance(
        rel.proba, rel.offsets, items=rel.items, costs=rng.uniform(0.5, 2.0, rel.total_items)
    )
    s = Session.create(tmp_path / "r.db", costly, "dcg", 10.0, seed=1)
    assert s.plan.cost_sensitive
    np.testing.assert_allclose(s.costs, ae.ranking.ranking_query_costs(costly), rtol=1e-15)
    ids = s.next_batch(100)
    s.record(_rows(costly, truth, ids))
    prog = s.progress()
    assert prog.cost_spent == pytest.approx(float(s.costs[ids].sum()))
    assert prog.cost_spent <= 10.0 + 1e-9 and prog.finished


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "edit, error, match",
    [
        (lambda f: f.iloc[1:], ae.errors.ShapeError, "lacks the grade of item"),
        (
            lambda f: f.assign(grade=f["grade"].where(f.index != 0, 3)),
            ae.errors.LabelSpaceError,
            "grade 0, ..., 2",
        ),
        (
            lambda f: f.assign(grade=f["grade"].astype(object).where(f.index != 0, "high")),
            ae.errors.LabelSpaceError,
            "'high'",
        ),
        (
            lambda f: f.assign(grade=f["grade"].where(f.index != 0, 1.5)),
            ae.errors.LabelSpaceError,
            "1.5",
        ),
        (
            lambda f: f.assign(item=f["item"].where(f.index != 0, 999)),
            ae.errors.UnknownIdError,
            "999 is not an item of query",
        ),
        (
            lambda f: f.assign(id=f["id"].where(f.index != 0, 10**6)),
            ae.errors.UnknownIdError,
            "not in this session's pool",
        ),
        (
            lambda f: pd.concat([f, f.iloc[:1].assign(grade=(f["grade"].iloc[0] + 1) % 3)]),
            ae.errors.DuplicateIdError,
            "different grades",
        ),
        (lambda f: f.rename(columns={"grade": "label"}), ae.errors.ShapeError, "id,item,grade"),
    ],
    ids=[
        "missing-item",
        "grade-too-high",
        "grade-text",
        "grade-fraction",
        "unknown-item",
        "unknown-query",
        "item-twice",
        "id-label-columns",
    ],
)
def test_bad_ranked_labels_are_refused_and_the_store_is_unchanged(
    tmp_path: Path, edit, error, match
) -> None:
    (rel, _), truth = _pools(seed=4)
    path = tmp_path / "r.db"
    s = Session.create(path, rel, "dcg", 8, seed=0)
    ids = s.next_batch(8)
    rows = _rows(rel, truth, ids)
    before = _dump(path)
    with pytest.raises(error, match=match):
        s.record(edit(rows))
    assert _dump(path) == before
    s.record(rows)  # the good input still records completely
    assert s.progress().n_labels == 8


def test_items_to_grade_is_only_for_ranked_pools(tmp_path: Path) -> None:
    proba = np.full((10, 2), 0.5)
    with Session.create(tmp_path / "c.db", proba, "error_rate", 3) as s:
        with pytest.raises(ae.errors.ShapeError, match="not ranked"):
            s.items_to_grade(s.next_batch(3))


def test_a_conflicting_regrade_is_refused_and_audited_unless_overwritten(tmp_path: Path) -> None:
    (rel, _), truth = _pools(seed=5)
    s = Session.create(tmp_path / "r.db", rel, "dcg", 5, seed=0)
    ids = s.next_batch(5)
    rows = _rows(rel, truth, ids)
    s.record(rows, annotator="ann")
    changed = rows.copy()
    changed.loc[0, "grade"] = (changed.loc[0, "grade"] + 1) % N_GRADES
    with pytest.raises(ae.errors.LabelConflictError, match=f"id {ids[0]!r} is already labeled"):
        s.record(changed, annotator="bob")
    assert s.audit_frame()["action"].tolist() == ["refused"]
    done = s.record(changed, annotator="bob", overwrite=True)
    assert done.n_overwritten == 1
    assert s.audit_frame()["action"].tolist() == ["refused", "overwrite"]
    got = s.labels_frame()
    assert (
        got.loc[(got["id"] == ids[0]) & (got["item"] == rows.loc[0, "item"]), "grade"].item()
        == (changed.loc[0, "grade"])
    )


def test_bad_ranked_plans_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    rels, _ = _pools(seed=6)
    path = tmp_path / "r.db"
    bare = ae.GradedRelevance(rels[0].proba, rels[0].offsets)  # no item ids
    cases = [
        (
            lambda: Session.create(path, [rels[0], rels[1], rels[0]], "dcg", 5),
            ae.errors.ShapeError,
            "exactly two",
        ),
        (
            lambda: Session.create(path, [bare, rels[1]], "dcg", 5),
            ae.errors.RankingItemsError,
            "item ids",
        ),
        (
            lambda: Session.create(path, rels[0], "dcg", 5, pos_label=1),
            ae.errors.UnknownOptionError,
            "pos_label",
        ),
        (lambda: Session.create(path, rels[0], "f1", 5), ae.errors.UnknownOptionError, "measure"),
        (
            lambda: Session.create(path, rels[0], "dcg", 5, method="active_0"),
            ae.errors.UnknownOptionError,
            "method",
        ),
        (
            lambda: Session.create(path, [rels[0], np.full((50, 2), 0.5)], "dcg", 5),
            ae.errors.ShapeError,
            "rankers with rankers",
        ),
        (lambda: Session.create(path, rels[0], "dcg", 0.5), ae.errors.BudgetError, "budget"),
    ]
    for make, error, match in cases:
        with pytest.raises(error, match=match):
            make()
        assert not path.exists()


def test_a_ranker_without_item_ids_records_items_by_rank(tmp_path: Path) -> None:
    (rel, _), truth = _pools(seed=7)
    bare = ae.GradedRelevance(rel.proba, rel.offsets)
    s = Session.create(tmp_path / "r.db", bare, "dcg", 6, seed=0)
    ids = s.next_batch(6)
    rows = [
        (i, r, int(g)) for i in ids for r, g in enumerate(_grades(rel, truth, i))
    ]  # item = 0-based rank in the list
    sheet = s.items_to_grade(ids)
    assert sheet[["id", "item"]].values.tolist() == [[i, r] for i, r, _ in rows]
    assert sheet["grade"].isna().all()
    s.record(pd.DataFrame(rows, columns=["id", "item", "grade"]))
    draws = np.array(_session_draws(tmp_path / "r.db"))
    v = 1.0 / s.q[draws]
    vals = np.array([_dcg(_grades(rel, truth, i)) for i in draws])
    direct = float(v @ vals / v.sum())
    assert s.estimate(estimator="snis").estimate == pytest.approx(direct, rel=1e-12)


# ------------------------------------------------------------------------- command line
def _pool_file(path: Path, rel: ae.GradedRelevance, costs: bool = False) -> None:
    assert rel.items is not None
    q = np.repeat(np.arange(rel.n), rel.lengths)
    frame = pd.DataFrame({"id": [f"q{i}" for i in q], "item": rel.items})
    for g in range(rel.n_grades):
        frame[f"p_{g}"] = rel.proba[:, g]
    if costs:
        frame["cost"] = 1.0 + (rel.items % 3)
    frame.to_csv(path, index=False)


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_ranked_campaign_init_next_record_status_export(tmp_path: Path) -> None:
    rels, truth = _pools(seed=8)
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    _pool_file(a, rels[0], costs=True)
    _pool_file(b, rels[1], costs=True)
    store = tmp_path / "c.db"
    code, out, err = _run(
        "session", "init", store, "--pool", a, "--pool", b, "--measure", "dcg", "--budget", 30
    )
    assert code == 0, err
    assert "comparison of 2 models on dcg, pool of 50 queries" in out
    sheet_csv = tmp_path / "batch.csv"
    code, out, _ = _run("session", "next", store, "--k", 10, "--out", sheet_csv)
    sheet = pd.read_csv(sheet_csv)
    assert code == 0 and list(sheet.columns) == ["id", "item", "grade"]
    assert sheet["grade"].isna().all()  # the grades to fill in
    ids = [int(x[1:]) for x in pd.unique(sheet["id"])]
    assert len(ids) == 10
    items, _ = ae.ranking.ranking_union(rels[0], rels[1], ids)  # both lists' union, query by query
    assert sheet["item"].tolist() == items.tolist()
    labels = sheet.assign(
        grade=[truth[int(i[1:]), it] for i, it in zip(sheet["id"], sheet["item"], strict=True)]
    )
    labels_csv = tmp_path / "labels.csv"
    labels.iloc[1:].to_csv(labels_csv, index=False)
    before = _dump(store)
    code, _, err = _run("session", "record", store, labels_csv)
    assert code == 2 and "lacks the grade of item" in err and _dump(store) == before
    labels.to_csv(labels_csv, index=False)
    code, out, err = _run("session", "record", store, labels_csv)
    assert code == 0, err
    code, out, _ = _run("session", "status", store, "--json")
    status = json.loads(out)
    with Session.open(store) as s:
        c = s.compare()
    assert status["n_labels"] == 10 and status["difference"] == c.difference
    code, _, err = _run("session", "status", store, "--features", a)  # any existing file
    assert code == 2 and "not ranking pools; drop features" in err
    export = tmp_path / "export.csv"
    assert _run("session", "export", store, export)[0] == 0
    code, out, _ = _run("session", "record", store, export)
    assert code == 0 and "0 new labels (10 unchanged" in out


def test_cli_ranked_pool_file_errors_name_the_line_and_column(tmp_path: Path) -> None:
    (rel, _), _ = _pools(seed=9)
    good = tmp_path / "A.csv"
    _pool_file(good, rel)
    frame = pd.read_csv(good)
    cases = {
        "grades.csv": (frame.rename(columns={"p_2": "p_3"}), "p_0, p_1, ..., p_<G−1>"),
        "dup.csv": (pd.concat([frame, frame.iloc[[0]]]), "already appears on line 2"),
        "sum.csv": (
            frame.assign(p_0=frame["p_0"].where(frame.index != 4, 0.9)),
            "line 6, columns p_0,p_1,p_2",
        ),
    }
    for name, (bad, message) in cases.items():
        bad.to_csv(tmp_path / name, index=False)
        code, _, err = _run(
            "session",
            "init",
            tmp_path / f"{name}.db",
            "--pool",
            tmp_path / name,
            "--measure",
            "dcg",
            "--budget",
            5,
        )
        assert code == 2 and message in err, (name, err)
        assert not (tmp_path / f"{name}.db").exists()


def test_large_integer_item_ids_are_matched_exactly(tmp_path: Path) -> None:
    # 64-bit item ids (e.g. hashes) beyond 2^53: matched as integers, never through float,
    # so a neighbouring id that does not exist is refused rather than rounded onto one.
    big = 2**53
    rel = ae.GradedRelevance(np.full((4, 3), 1 / 3), [0, 2, 4], np.array([big + 1, big + 3, 5, 6]))
    path = tmp_path / "r.db"
    s = Session.create(path, rel, "dcg", 10, seed=0, method="passive")
    s.next_batch(2)
    before = _dump(path)
    wrong = pd.DataFrame({"id": [0, 0], "item": [str(big), str(big + 3)], "grade": [2, 0]})
    with pytest.raises(ae.errors.UnknownIdError, match=f"'{big}' is not an item of query 0"):
        s.record(wrong)
    assert _dump(path) == before
    rows = pd.DataFrame({"id": [0, 0], "item": [str(big + 3), str(big + 1)], "grade": [0, 2]})
    s.record(rows)
    s.record({1: [1, 1]})
    got = s.labels_frame()
    assert got.loc[got["id"] == 0, "item"].tolist() == [big + 1, big + 3]
    assert got.loc[got["id"] == 0, "grade"].tolist() == [2, 0]


def test_item_ids_a_labels_file_cannot_reproduce_are_refused(tmp_path: Path) -> None:
    rel = ae.GradedRelevance(np.full((2, 3), 1 / 3), [0, 2], np.array([" a", "b"]))
    with pytest.raises(ae.errors.RankingItemsError, match="leading or trailing blanks"):
        Session.create(tmp_path / "r.db", rel, "dcg", 1)
    assert not (tmp_path / "r.db").exists()


def test_mapping_errors_name_the_query(tmp_path: Path) -> None:
    (rel, _), truth = _pools(seed=10)
    s = Session.create(tmp_path / "r.db", rel, "dcg", 3, seed=0)
    ids = s.next_batch(3)
    bad = {i: _grades(rel, truth, i).tolist() for i in ids}
    bad[ids[1]][0] = 7
    with pytest.raises(ae.errors.LabelSpaceError, match=f"query {ids[1]!r}, column 'grade': 7"):
        s.record(bad)


def test_a_ranked_store_without_its_ranking_rows_is_refused(tmp_path: Path) -> None:
    (rel, _), _ = _pools(seed=11)
    path = tmp_path / "r.db"
    Session.create(path, rel, "dcg", 3).close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM ranking")
    conn.commit()
    conn.close()
    with pytest.raises(ae.errors.StoreError, match="altered outside activeeval"):
        Session.open(path)


def test_cli_two_ranked_files_agree_on_the_item_id_type(tmp_path: Path) -> None:
    # File A's items all look like integers ('000'..), file B has one that does not ('x9'):
    # both are read as the strings written, so '004' in A is '004' in B.
    rows_a, rows_b = [], []
    for q in range(6):
        for k in range(3):
            rows_a.append({"id": q, "item": f"{(q + k) % 8:03d}", "p_0": 0.5, "p_1": 0.5})
            rows_b.append({"id": q, "item": f"{(q + k + 1) % 8:03d}", "p_0": 0.3, "p_1": 0.7})
        rows_b.append({"id": q, "item": "x9", "p_0": 0.9, "p_1": 0.1})
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    pd.DataFrame(rows_a).to_csv(a, index=False)
    pd.DataFrame(rows_b).to_csv(b, index=False)
    store = tmp_path / "c.db"
    code, _, err = _run(
        "session", "init", store, "--pool", a, "--pool", b, "--measure", "err", "--budget", 4
    )
    assert code == 0, err
    sheet = tmp_path / "sheet.csv"
    assert _run("session", "next", store, "--k", 4, "--out", sheet)[0] == 0
    items = pd.read_csv(sheet, dtype=str)["item"].tolist()
    assert "x9" in items and all(len(i) == 3 or i == "x9" for i in items)
    filled = pd.read_csv(sheet, dtype=str).assign(grade=1)
    filled.to_csv(sheet, index=False)
    code, _, err = _run("session", "record", store, sheet)
    assert code == 0, err


def test_cli_bad_item_cells_exit_with_status_2(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "id": [1, 1, 2],
            "item": pd.array([10, None, 11], dtype="Int64"),
            "p_0": [0.5, 0.5, 0.5],
            "p_1": [0.5, 0.5, 0.5],
        }
    )
    path = tmp_path / "pool.parquet"
    frame.to_parquet(path)
    code, _, err = _run(
        "session", "init", tmp_path / "s.db", "--pool", path, "--measure", "dcg", "--budget", 1
    )
    assert code == 2 and "row 2, column 'item' is empty" in err
    huge = tmp_path / "huge.csv"
    pd.DataFrame(
        {"id": [1, 1], "item": ["99999999999999999999", "5"], "p_0": [0.5, 0.5], "p_1": [0.5, 0.5]}
    ).to_csv(huge, index=False)
    code, _, err = _run(
        "session", "init", tmp_path / "h.db", "--pool", huge, "--measure", "dcg", "--budget", 1
    )
    assert code == 0, err  # too large for int64: the ids stay strings


def test_cli_depth_truncates_the_measure_and_shared_items_have_one_cost(tmp_path: Path) -> None:
    rels, _ = _pools(seed=12)
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    _pool_file(a, rels[0], costs=True)
    _pool_file(b, rels[1], costs=True)
    store = tmp_path / "d.db"
    code, _, err = _run(
        "session", "init", store, "--pool", a, "--measure", "err", "--depth", 3, "--budget", 5
    )
    assert code == 0, err
    with Session.open(store) as s:
        assert s.plan.measure_spec == {"class": "ERR", "k": 3, "max_grade": N_GRADES - 1}
    code, _, err = _run(
        "session", "init", tmp_path / "e.db", "--pool", a, "--measure", "error_rate",
        "--depth", 3, "--budget", 5,
    )  # fmt: skip
    assert code == 2 and "--depth" in err
    frame = pd.read_csv(b)
    frame["cost"] = frame["cost"] + 0.5  # the same item now costs more in B than in A
    frame.to_csv(b, index=False)
    code, _, err = _run(
        "session", "init", tmp_path / "f.db", "--pool", a, "--pool", b, "--measure", "dcg",
        "--budget", 5,
    )  # fmt: skip
    assert code == 2 and "an item has one labeling cost" in err
    assert not (tmp_path / "e.db").exists() and not (tmp_path / "f.db").exists()


def test_cli_depth_grades_only_each_lists_top_k(tmp_path: Path) -> None:
    """With --depth k the grading sheet lists, per query, the union of both rankers' top k
    items only (all that DCG@k looks at); the recorded sheet gives the exact DCG@k of both."""
    rels, truth = _pools(seed=14, m=12)
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    _pool_file(a, rels[0])
    _pool_file(b, rels[1])
    store = tmp_path / "d.db"
    code, _, err = _run(
        "session", "init", store, "--pool", a, "--pool", b, "--measure", "dcg", "--depth", 2,
        "--budget", 12, "--method", "passive",
    )  # fmt: skip
    assert code == 0, err
    sheet = tmp_path / "sheet.csv"
    assert _run("session", "next", store, "--k", 12, "--out", sheet)[0] == 0
    got = pd.read_csv(sheet)
    for qid, rows in got.groupby("id"):
        i = int(str(qid)[1:])
        top = [set(r.items[r.offsets[i] : r.offsets[i] + 2].tolist()) for r in rels]
        assert set(rows["item"].tolist()) == top[0] | top[1]
    assert got["id"].nunique() == 12  # passive: every query is drawn
    got["grade"] = truth[got["id"].str[1:].astype(int), got["item"]]
    got.to_csv(sheet, index=False)
    assert _run("session", "record", store, sheet)[0] == 0
    with Session.open(store) as s:
        c = s.compare()
    want = [np.mean([_dcg(_grades(r, truth, i)[:2]) for i in range(12)]) for r in rels]
    np.testing.assert_allclose(c.estimates, want, rtol=1e-12)


def test_integer_item_cells_parse_exactly_in_every_form() -> None:
    from activeeval.session.intake import _int_keys

    cells = pd.Series(
        ["9007199254740993", " 5", "2.0", "x", "99999999999999999999", None, "-7"], dtype=object
    )
    keys, ok = _int_keys(cells)
    assert ok.tolist() == [True, True, True, False, False, False, True]
    assert keys[ok].tolist() == [2**53 + 1, 5, 2, -7]
    keys, ok = _int_keys(pd.Series([1.0, 2.5, np.nan]))
    assert ok.tolist() == [True, False, False] and keys[0] == 1
    assert _int_keys(pd.Series([True, False]))[1].tolist() == [False, False]
    assert _int_keys(pd.Series(pd.array([4, None], dtype="Int64")))[1].tolist() == [True, False]


def test_cli_the_measure_decides_whether_a_pool_file_is_ranked(tmp_path: Path) -> None:
    # A classifier's pool file may carry an 'item' column of its own (a product, a document):
    # with a classifier measure it is one more ignored column, not a ranked pool.
    clf = tmp_path / "clf.csv"
    pd.DataFrame(
        {"id": [1, 2, 3], "item": ["a", "b", "a"], "p_0": [0.2, 0.6, 0.5], "p_1": [0.8, 0.4, 0.5]}
    ).to_csv(clf, index=False)
    code, out, err = _run(
        "session", "init", tmp_path / "c.db", "--pool", clf, "--measure", "error_rate",
        "--budget", 2,
    )  # fmt: skip
    assert code == 0 and "pool of 3 instances" in out, err
    # A ranked file (repeated query ids) with a classifier measure, and a classifier file with
    # a ranking measure: each refused, saying which file the measure needs.
    rels, _ = _pools(seed=13)
    ranked = tmp_path / "ranked.csv"
    _pool_file(ranked, rels[0])
    code, _, err = _run(
        "session", "init", tmp_path / "r.db", "--pool", ranked, "--measure", "error_rate",
        "--budget", 2,
    )  # fmt: skip
    assert code == 2 and "repeated ids, as a ranked pool file has" in err
    assert "--measure dcg or err" in err
    plain = tmp_path / "plain.csv"
    pd.read_csv(clf).drop(columns="item").to_csv(plain, index=False)
    code, _, err = _run(
        "session", "init", tmp_path / "p.db", "--pool", plain, "--measure", "dcg", "--budget", 2
    )
    assert code == 2 and "no column 'item'" in err and "a ranked pool file" in err
    assert not any((tmp_path / n).exists() for n in ("r.db", "p.db"))
