"""Label Studio files: tasks out, a JSON export in, the same estimate as the CSV path.

The exports here are written the way Label Studio writes its "JSON" export (a list of tasks,
each with ``data`` and ``annotations``, each annotation a ``completed_by``, ``was_cancelled``
and a ``result`` of choices under ``from_name``); ``tests/integration/test_label_studio.py``
runs the round trip against a real Label Studio server (``make integration``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from activeeval.cli import main
from activeeval.errors import InputFileError, LabelConflictError, ShapeError, UnknownOptionError
from activeeval.labelstudio import labeling_config, read_export, write_tasks
from activeeval.session import Session


def _ann(who: object, choice: str | list[str], cancelled: bool = False) -> dict:
    choices = choice if isinstance(choice, list) else [choice]
    return {
        "completed_by": who,
        "was_cancelled": cancelled,
        "result": [
            {"from_name": "label", "to_name": "item", "type": "choices",
             "value": {"choices": choices}}
        ],
    }  # fmt: skip


def _export(tmp_path: Path, tasks: list[dict], name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks))
    return path


def _task(i: int, *annotations: dict) -> dict:
    return {"id": 100 + i, "data": {"id": i}, "annotations": list(annotations)}


def test_labeling_config_has_one_choice_per_class_under_label() -> None:
    xml = labeling_config(["spam", 'say "hi"'], show="body")
    assert '<Choices name="label" toName="item"' in xml and 'value="$body"' in xml
    assert '<Choice value="spam"/>' in xml and "<Choice value='say \"hi\"'/>" in xml
    assert 'value="$id"' in labeling_config([0, 1])


def test_write_tasks_copies_the_data_to_show_and_refuses_a_missing_row(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = pd.DataFrame({"id": ["7", "9"], "text": ["a", "b"], "lang": ["en", "fr"]})
    tasks, config = write_tasks([9, 7], tmp_path / "t.json", [0, 1], data=data)
    assert json.loads(tasks.read_text()) == [
        {"data": {"id": 9, "text": "b", "lang": "fr"}},
        {"data": {"id": 7, "text": "a", "lang": "en"}},
    ]
    assert 'value="$text"' in config.read_text()
    with pytest.raises(ShapeError, match=r"^data: no row for id 8 \(1 ids in all\)"):
        write_tasks([8], tmp_path / "u.json", [0, 1], data=data)
    with pytest.raises(ShapeError, match=r"^show: the data has no column 'body'"):
        write_tasks([7], tmp_path / "u.json", [0, 1], data=data, show="body")
    assert not (tmp_path / "u.json").exists()


def test_agreeing_annotations_give_their_choice_and_cancelled_ones_are_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _export(tmp_path, [
        _task(1, _ann(1, "1")),
        _task(2, _ann(1, "0"), _ann({"id": 2, "email": "b@x.org"}, "0")),
        _task(3, _ann(1, "1", cancelled=True), _ann(2, "0")),
    ])  # fmt: skip
    got = read_export(path)
    assert got.labels[["id", "label", "annotator"]].values.tolist() == [
        [1, "1", "1"], [2, "0", "1+b@x.org"], [3, "0", "2"],
    ]  # fmt: skip
    assert (got.n_tasks, got.n_cancelled, got.agreement) == (3, 1, 1.0)


def test_the_overlap_policies_settle_a_disagreement_or_refuse_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _export(tmp_path, [_task(1, _ann(1, "1"), _ann(2, "0"), _ann(3, "1"))])
    with pytest.raises(LabelConflictError, match=r"task 101 \(id 1\): the annotations disagree "
                       r"\(1: '1', 2: '0', 3: '1'\); nothing was recorded"):  # fmt: skip
        read_export(path)
    majority = read_export(path, overlap="majority").labels.iloc[0]
    assert (majority["label"], majority["annotator"], majority["n_agreeing"]) == ("1", "1+3", 2)
    judged = read_export(path, overlap="adjudicator", adjudicator="2").labels.iloc[0]
    assert (judged["label"], judged["annotator"], judged["n_annotations"]) == ("0", "2", 3)
    with pytest.raises(LabelConflictError, match=r"\(1: '1', 2: '0', 3: '1'\) and the adjudicator "
                       r"'9' has not annotated this task"):  # fmt: skip
        read_export(path, overlap="adjudicator", adjudicator="9")
    agreeing = _export(tmp_path, [_task(1, _ann(1, "1"), _ann(2, "1"))], "agree.json")
    assert read_export(agreeing, overlap="adjudicator", adjudicator="9").labels.shape[0] == 1
    two = _export(tmp_path, [_task(1, _ann(1, "1"), _ann(2, "0")), _task(2, _ann(3, "1"),
                  _ann(1, "0"))], "two.json")  # fmt: skip
    with pytest.raises(LabelConflictError, match=r"task 102 .* adjudicator '2' has not annotated"):
        read_export(two, overlap="adjudicator", adjudicator="2")
    tie = _export(tmp_path, [_task(1, _ann(1, "1"), _ann(2, "0"))], "tie.json")
    with pytest.raises(LabelConflictError, match="the annotations tie"):
        read_export(tie, overlap="majority")


def test_skipped_tasks_give_no_label_and_one_annotator_counts_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A task whose annotations are all cancelled (Label Studio's "skip") or that has none
    stays unlabeled; an annotator who annotated a task twice counts once, with their latest
    choice; one pool id imported as two tasks is one task."""
    path = _export(tmp_path, [
        _task(1, _ann(1, "1", cancelled=True)),
        _task(2),
        _task(3, _ann(1, "0"), _ann(1, "1"), _ann(2, "1")),
        {"id": 7, "data": {"id": 4}, "annotations": [_ann(1, "0")]},
        {"id": 8, "data": {"id": 4}, "annotations": [_ann(2, "1")]},
    ])  # fmt: skip
    got = read_export(path, overlap="adjudicator", adjudicator="2")
    columns = ["id", "label", "annotator", "n_annotations", "n_agreeing"]
    assert got.labels[columns].values.tolist() == [[3, "1", "1+2", 2, 2], [4, "1", "2", 2, 1]]
    assert got.labels.index.tolist() == [103, 7]  # the Label Studio task ids
    assert (got.n_tasks, got.n_unlabeled, got.n_cancelled) == (4, 2, 1)


def test_an_adjudicator_is_named_by_user_id_or_by_e_mail(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bob = {"id": 2, "email": "bob@x.org"}
    path = _export(tmp_path, [_task(1, _ann({"id": 1, "email": "al@x.org"}, "1"), _ann(bob, "0"))])
    for name in ("2", "bob@x.org"):
        got = read_export(path, overlap="adjudicator", adjudicator=name).labels.iloc[0]
        assert (got["label"], got["annotator"]) == ("0", "bob@x.org")


def test_task_data_is_written_as_json_label_studio_accepts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = pd.DataFrame({"id": [1, 2], "score": [0.5, np.nan],
                         "at": pd.to_datetime(["2026-01-02", None])})  # fmt: skip
    tasks, _ = write_tasks([1, 2], tmp_path / "t.json", [0, 1], data=data, session_id="abc")
    text = tasks.read_text()
    assert "NaN" not in text
    assert json.loads(text) == [
        {"data": {"id": 1, "session_id": "abc", "score": 0.5, "at": "2026-01-02T00:00:00"}},
        {"data": {"id": 2, "session_id": "abc", "score": None, "at": None}},
    ]


@pytest.mark.parametrize(
    ("tasks", "err", "match"),
    [
        ([_task(1, _ann(1, ["0", "1"]))], InputFileError, r"more than one choice for the control"),
        ([{"id": 5, "data": {"text": "x"}, "annotations": []}], InputFileError, r"no data\.id"),
        ({"tasks": []}, InputFileError, r"a Label Studio JSON export is a list of tasks"),
    ],
)
def test_an_export_it_cannot_read_is_refused_by_name(tmp_path, tasks, err, match) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(tasks))
    with pytest.raises(err, match=match):
        read_export(path)


def test_options_and_files_are_checked(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _export(tmp_path, [_task(1, _ann(1, "1"))])
    with pytest.raises(UnknownOptionError, match=r"^overlap: 'vote' is not a policy"):
        read_export(path, overlap="vote")
    with pytest.raises(UnknownOptionError, match=r"^adjudicator: name the adjudicating"):
        read_export(path, overlap="adjudicator")
    (tmp_path / "bad.json").write_text("[{")
    with pytest.raises(InputFileError, match=r"bad\.json: not JSON"):
        read_export(tmp_path / "bad.json")


# ------------------------------------------------------------------ through a session


def _pool_files(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    rng = np.random.default_rng(3)
    p1 = rng.beta(1.0, 5.0, 400)
    y = (rng.random(400) < p1).astype(int)
    pool = tmp_path / "pool.csv"
    pd.DataFrame({"id": np.arange(400), "p_0": 1 - p1, "p_1": p1}).to_csv(pool, index=False)
    data = tmp_path / "data.csv"
    pd.DataFrame({"id": np.arange(400), "text": [f"item {i}" for i in range(400)]}).to_csv(
        data, index=False
    )
    return pool, data, y


def _run(*args: object) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def _answer(tasks: Path, y: np.ndarray, overlap_every: int = 0) -> list[dict]:
    """An export labeling every task with the truth (a second, agreeing or not, annotator on
    every ``overlap_every``-th task)."""
    out = []
    for k, task in enumerate(json.loads(tasks.read_text())):
        truth = str(int(y[task["data"]["id"]]))
        anns = [_ann("alice@x.org", truth)]
        if overlap_every and k % overlap_every == 0:
            anns.append(
                _ann("bob@x.org", truth if k % (2 * overlap_every) else str(1 - int(truth)))
            )
        out.append({"id": 1000 + k, "data": task["data"], "annotations": anns})
    return out


def test_cli_round_trip_gives_the_estimate_of_the_csv_path(tmp_path: Path) -> None:
    pool, data, y = _pool_files(tmp_path)
    for name in ("ls.db", "csv.db"):
        assert _run("session", "init", tmp_path / name, "--pool", pool, "--measure",
                    "error_rate", "--budget", 60, "--seed", 4)[0] == 0  # fmt: skip
    tasks = tmp_path / "tasks.json"
    for _ in range(3):  # three batches of 20, each labeled in "Label Studio" and recorded
        code, out, _ = _run("session", "next", tmp_path / "ls.db", "--k", 20, "--format",
                            "label-studio", "--out", tasks, "--data", data)  # fmt: skip
        assert code == 0 and "wrote 20 tasks" in out
        export = _export(tmp_path, _answer(tasks, y, overlap_every=5))
        code, out, err = _run("session", "record", tmp_path / "ls.db", export, "--overlap",
                              "adjudicator", "--adjudicator", "alice@x.org")  # fmt: skip
        assert code == 0, err
        assert "4 with several annotations, all agreeing on 2 (50%)" in out
        code, out, _ = _run("session", "next", tmp_path / "csv.db", "--k", 20)
        ids = [int(v) for v in out.split()[1:]]
        labels = tmp_path / "labels.csv"
        labels.write_text("id,label\n" + "".join(f"{i},{y[i]}\n" for i in ids))
        assert _run("session", "record", tmp_path / "csv.db", labels)[0] == 0
    with Session.open(tmp_path / "ls.db") as a, Session.open(tmp_path / "csv.db") as b:
        ea, eb = a.estimate(), b.estimate()
        assert (ea.estimate, ea.stderr, ea.ci, ea.n_labels) == (eb.estimate, eb.stderr, eb.ci, 60)
        # alone, or adjudicating a disagreement: alice; both agreeing: both
        assert set(a.labels_frame()["annotator"]) == {"alice@x.org", "alice@x.org+bob@x.org"}
        p = a.progress()
        assert (p.n_overlapping, p.n_unanimous) == (12, 6)
    code, out, _ = _run("session", "status", tmp_path / "ls.db")
    assert "agreement: 6 of 12 labels with several annotations were unanimous (50%)" in out
    status = json.loads(_run("session", "status", tmp_path / "ls.db", "--json")[1])
    assert status["agreement"] == {"labels": 12, "unanimous": 6}


def test_cli_refuses_a_disagreement_and_records_nothing(tmp_path: Path) -> None:
    pool, _, y = _pool_files(tmp_path)
    store = tmp_path / "s.db"
    _run("session", "init", store, "--pool", pool, "--measure", "error_rate", "--budget", 30)
    tasks = tmp_path / "tasks.json"
    assert _run("session", "next", store, "--k", 10, "--format", "label-studio",
                "--out", tasks)[0] == 0  # fmt: skip
    assert 'value="$id"' in (tmp_path / "tasks.config.xml").read_text()  # no data: the id
    export = _export(tmp_path, _answer(tasks, y, overlap_every=2))
    code, _, err = _run("session", "record", store, export)
    assert code == 2 and "the annotations disagree" in err and "--overlap" in err
    with Session.open(store) as s:
        assert s.progress().n_labels == 0
    code, _, err = _run("session", "record", store, export, "--overlap", "adjudicator")
    assert code == 2 and err.startswith("error: --adjudicator: name the adjudicating")
    code, _, err = _run("session", "next", store, "--format", "label-studio")
    assert code == 2 and "give --out" in err


def test_a_labels_table_may_name_each_row_s_annotator(tmp_path: Path) -> None:
    pool, _, y = _pool_files(tmp_path)
    proba = pd.read_csv(pool)[["p_0", "p_1"]].to_numpy()
    with Session.create(tmp_path / "s.db", proba, "error_rate", 10, seed=1) as s:
        ids = s.next_batch(4)
        table = pd.DataFrame({"id": ids, "label": [int(y[i]) for i in ids],
                              "annotator": ["ann", None, "bo", "bo"]})  # fmt: skip
        s.record(table, annotator="default")
        got = s.labels_frame().set_index("id")["annotator"].to_dict()
    assert got == {ids[0]: "ann", ids[1]: "default", ids[2]: "bo", ids[3]: "bo"}


def test_agreement_follows_the_latest_record_of_each_label(tmp_path: Path) -> None:
    """A label re-recorded from a later export (now with a second annotation), or replaced
    from a CSV, carries the agreement of what settled it last."""
    pool, _, y = _pool_files(tmp_path)
    proba = pd.read_csv(pool)[["p_0", "p_1"]].to_numpy()
    with Session.create(tmp_path / "s.db", proba, "error_rate", 10, seed=1) as s:
        i = s.next_batch(1)[0]
        truth = str(int(y[i]))
        other = str(1 - int(y[i]))

        def export(name: str, *annotations: dict) -> Path:
            task = {"id": 1, "data": {"id": i}, "annotations": list(annotations)}
            return _export(tmp_path, [task], name)

        s.record(read_export(export("1.json", _ann(1, truth))).labels)
        assert (s.progress().n_overlapping, s.progress().n_unanimous) == (0, 0)
        twice = export("2.json", _ann(1, truth), _ann(2, other))
        s.record(read_export(twice, overlap="adjudicator", adjudicator="1").labels)
        assert (s.progress().n_overlapping, s.progress().n_unanimous) == (1, 0)
        s.record(read_export(export("3.json", _ann(1, truth), _ann(2, truth))).labels)
        assert (s.progress().n_overlapping, s.progress().n_unanimous) == (1, 1)
        s.record({i: int(other)}, annotator="carol", overwrite=True)  # one source now
        assert (s.progress().n_overlapping, s.progress().n_unanimous) == (0, 0)


def test_cli_export_rules_skipped_tasks_sessions_and_refused_formats(tmp_path: Path) -> None:
    pool, _, y = _pool_files(tmp_path)
    store, other = tmp_path / "s.db", tmp_path / "o.db"
    for path in (store, other):
        _run("session", "init", path, "--pool", pool, "--measure", "error_rate", "--budget", 30)
    tasks = tmp_path / "tasks.json"
    _run(
        "session",
        "next",
        store,
        "--k",
        6,
        "--format",
        "label-studio",
        "--out",
        tasks,
        "--data",
        pool,
    )  # fmt: skip  (the pool file as data: its p_ columns stay out)
    written = json.loads(tasks.read_text())
    assert set(written[0]["data"]) == {"id", "session_id"}
    answered = _answer(tasks, y)
    answered[0]["annotations"] = [_ann(1, "1", cancelled=True)]  # skipped in Label Studio
    export = _export(tmp_path, answered)
    code, _, err = _run("session", "record", store, export, "--annotator", "bob")
    assert code == 2 and "--annotator: a Label Studio export names who gave each label" in err
    code, out, err = _run("session", "record", store, export)
    assert code == 0, err
    assert "1 without a label (skipped or not annotated: still pending)" in out
    with Session.open(store) as s:
        assert (s.progress().n_labels, s.progress().n_pending) == (5, 1)
    with Session.open(other) as s:  # the same pool, another session: refused by its id
        s.next_batch(30)
    code, _, err = _run("session", "record", other, export)
    assert code == 2 and "column 'session_id'" in err and "is another session" in err
    mean = np.full(400, 0.5)
    regressor = tmp_path / "reg.csv"
    pd.DataFrame({"id": np.arange(400), "mean": mean, "var": mean}).to_csv(regressor, index=False)
    _run("session", "init", tmp_path / "r.db", "--pool", regressor, "--measure", "mse",
         "--budget", 10)  # fmt: skip
    code, _, err = _run("session", "next", tmp_path / "r.db", "--k", 2, "--format",
                        "label-studio", "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 2 and "numbers (a regressor's)" in err
    with Session.open(tmp_path / "r.db") as s:
        assert s.progress().n_handed_out == 0  # refused before anything was handed out


def test_review_fixes_data_columns_flags_and_annotator_names(tmp_path: Path) -> None:
    """Missing values and list cells become JSON; --data must cover the pool before anything
    is handed out; a labels file's annotator column is read, names trimmed; refusals spell
    flags with their values."""
    data = pd.DataFrame({"id": [1, 2], "n": pd.array([3, None], dtype="Int64"),
                         "tags": [np.array(["a", "b"]), np.array([], dtype=str)]})  # fmt: skip
    tasks, _ = write_tasks([1, 2], tmp_path / "t.json", [0, 1], data=data)
    assert [t["data"] for t in json.loads(tasks.read_text())] == [
        {"id": 1, "n": 3, "tags": ["a", "b"]}, {"id": 2, "n": None, "tags": []},
    ]  # fmt: skip
    pool, data_file, y = _pool_files(tmp_path)
    store = tmp_path / "s.db"
    _run("session", "init", store, "--pool", pool, "--measure", "error_rate", "--budget", 20)
    partial = tmp_path / "partial.csv"
    pd.read_csv(data_file).head(10).to_csv(partial, index=False)
    out = tmp_path / "x.json"
    code, _, err = _run("session", "next", store, "--k", 5, "--annotator", "amy", "--format",
                        "label-studio", "--out", out, "--data", partial)  # fmt: skip
    assert code == 2 and "no row for pool id 10 (390 ids in all)" in err
    with Session.open(store) as s:
        assert s.progress().n_handed_out == 0
        ids = s.next_batch(3)
    labels = tmp_path / "labels.csv"
    names = ["7", " bob ", "  "]
    labels.write_text("id,label,annotator\n" + "".join(
        f"{i},{y[i]},{n}\n" for i, n in zip(ids, names, strict=True)
    ))  # fmt: skip
    assert _run("session", "record", store, labels, "--annotator", " carol ")[0] == 0
    with Session.open(store) as s:
        got = s.labels_frame().set_index("id")["annotator"].to_dict()
    assert got == {ids[0]: "7", ids[1]: "bob", ids[2]: "carol"}
    export = _export(tmp_path, [_task(1, _ann(1, "1"))])
    code, _, err = _run("session", "record", store, export, "--adjudicator", "2")
    assert code == 2 and "with --overlap 'adjudicator', and only then" in err
