"""Acceptance tests of the ``activeeval session`` command line.

What a user relies on: the documented file formats are read (CSV and Parquet pool files,
``id,label`` labels files), a campaign runs init → next → record → status → export, ``status
--json`` has exactly the documented keys, and every bad input exits with status 2 and an
``error:`` message naming the file, line and column — with the store unchanged. Reliability:
a record killed with SIGKILL keeps every committed chunk and completes when re-run, and two
processes recording into one store at once both succeed without "database is locked".
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from activeeval.cli import main
from activeeval.session import Session

JSON_KEYS = {
    "measure",
    "n_labels",
    "n_draws",
    "cost_spent",
    "budget",
    "estimate",
    "stderr",
    "ci",
    "level",
    "interval",
    "effective_n",
    "pending_by_annotator",
    "waiting",
    "agreement",
}


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _status_json(store: Path, *args: str | Path) -> dict:
    """``session status STORE --json [args]``, which must exit 0, parsed."""
    code, out, err = _run("session", "status", store, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _label(batch: Path, truth: Path, out: Path) -> None:
    ids = pd.read_csv(batch)
    ids.merge(pd.read_csv(truth), on="id").to_csv(out, index=False)


def _campaign(task: dict[str, Path], store: Path, k: int = 25) -> None:
    """next → label from the truth → record, until next hands out nothing."""
    batch, labels = task["dir"] / "batch.csv", task["dir"] / "labels.csv"
    while True:
        code, _, _ = _run("session", "next", store, "--k", k, "--out", batch)
        assert code == 0
        if pd.read_csv(batch).empty:
            return
        _label(batch, task["truth"], labels)
        assert _run("session", "record", store, labels, "--annotator", "oracle")[0] == 0


# ----------------------------------------------------------------------------- workflow


def test_evaluation_campaign_end_to_end(task: dict[str, Path]) -> None:
    store = task["dir"] / "s.db"
    code, out, err = _run(
        "session",
        "init",
        store,
        "--pool",
        task["a"],
        "--measure",
        "f1",
        "--pos-label",
        "1",
        "--budget",
        "60",
        "--seed",
        "3",
    )
    assert code == 0, err
    assert "evaluation of f1" in out and "positive class 1" in out
    code, out, _ = _run("session", "next", store, "--k", "5")
    assert code == 0 and out.splitlines()[0] == "id" and len(out.splitlines()) == 6
    assert _run("session", "next", store, "--k", "5")[1] == out  # idempotent until recorded
    _campaign(task, store)
    status = _status_json(store, "--plot", task["dir"] / "p.png")
    assert set(status) == JSON_KEYS
    with Session.open(store) as s:
        e = s.estimate()
        assert status["estimate"] == e.estimate and status["ci"] == list(e.ci)
        assert status["interval"] == e.interval == "tempered"
        assert status["effective_n"] == e.effective_n == e.inference.effective_n
        assert status["n_draws"] == e.n_draws == s.progress().n_draws
    assert (status["measure"], status["n_labels"], status["budget"]) == ("f1", 60, 60.0)
    assert status["cost_spent"] == 60.0 and status["level"] == 0.95
    assert (task["dir"] / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    code, out, _ = _run("session", "status", store)
    assert code == 0 and "60 recorded, 0 pending" in out and "complete" in out
    assert re.search(r"estimate: 0\.\d{4}\s+stderr 0\.\d{4}\s+95% CI \[", out)
    assert re.search(r"\(tempered\)  \(from \d+ draws; effective n \d+\.\d\)", out)
    code, _, _ = _run("session", "export", store, task["dir"] / "export.csv")
    assert code == 0
    export = pd.read_csv(task["dir"] / "export.csv")
    assert list(export.columns[:4]) == ["id", "label", "annotator", "timestamp"]
    assert {"order", "first_draw", "times_drawn", "q", "session_id"} <= set(export.columns)
    assert (
        export["order"].tolist() == list(range(1, 61)) and (export["annotator"] == "oracle").all()
    )
    truth = pd.read_csv(task["truth"]).set_index("id")["label"]
    assert (export["label"].to_numpy() == truth.loc[export["id"]].to_numpy()).all()
    before = _dump(store)  # an export can be recorded again: same session, same labels
    code, out, _ = _run("session", "record", store, task["dir"] / "export.csv")
    assert code == 0 and "0 new labels (60 unchanged" in out
    assert _dump(store) == before


def test_comparison_campaign_reports_difference_p_value_and_best(task: dict[str, Path]) -> None:
    store = task["dir"] / "c.db"
    code, _, err = _run(
        "session",
        "init",
        store,
        "--pool",
        task["a"],
        "--pool",
        task["b"],
        "--measure",
        "error_rate",
        "--budget",
        "80",
    )
    assert code == 0, err
    _campaign(task, store, k=30)
    status = _status_json(store)
    assert set(status) == JSON_KEYS - {"effective_n"} | {
        "difference",
        "p_value",
        "best",
        "estimate_ci",
    }
    with Session.open(store) as s:
        c = s.compare()
    assert status["difference"] == c.difference and status["p_value"] == c.p_value
    assert status["best"] == c.best and status["ci"] == list(c.ci)
    assert status["estimate"] == c.estimates.tolist()
    assert status["estimate_ci"] == c.model_intervals().tolist()
    code, out, _ = _run("session", "status", store)
    assert "difference (model 0 − model 1)" in out and "p-value" in out and "best:" in out
    lo, hi = c.model_intervals()[0]
    assert f"model 0:  {c.estimates[0]:.4f}  95% CI [{lo:.4f}, {hi:.4f}]" in out


def test_parquet_pool_with_costs_and_string_classes(task: dict[str, Path]) -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 1, 50)
    frame = pd.DataFrame(
        {
            "id": [f"doc{i}" for i in range(50)],
            "p_ham": 1 - p,
            "p_spam": p,
            "cost": rng.uniform(0.5, 2.0, 50),
        }
    )
    frame.to_parquet(task["dir"] / "pool.parquet", index=False)
    store = task["dir"] / "s.db"
    code, out, err = _run(
        "session",
        "init",
        store,
        "--pool",
        task["dir"] / "pool.parquet",
        "--measure",
        "precision",
        "--pos-label",
        "spam",
        "--budget",
        "10",
    )
    assert code == 0, err
    assert "budget 10 cost units" in out
    code, out, _ = _run("session", "next", store, "--k", "100")
    ids = out.split()[1:]
    assert ids and all(i.startswith("doc") for i in ids)
    assert frame.set_index("id").loc[ids, "cost"].sum() <= 10
    labels = pd.DataFrame({"id": ids, "label": ["spam"] * len(ids)})
    labels.to_csv(task["dir"] / "l.csv", index=False)
    assert _run("session", "record", store, task["dir"] / "l.csv")[0] == 0
    status = json.loads(_run("session", "status", store, "--json")[1])
    assert status["cost_spent"] == pytest.approx(frame.set_index("id").loc[ids, "cost"].sum())


def test_zero_padded_ids_are_handed_out_and_exported_as_written(tmp_path: Path) -> None:
    # '007' is not the integer 7: read as one, the ids came back as '7' (which no longer
    # joins with the user's data), and a pool holding both '007' and '7' was refused.
    ids = ["007", "7", "010", "0", "-3", "-0"]
    pool = tmp_path / "pool.csv"
    pool.write_text("id,p_0,p_1\n" + "".join(f"{i},0.5,0.5\n" for i in ids))
    store = tmp_path / "s.db"
    code, _, err = _run("session", "init", store, "--pool", pool, "--measure", "error_rate",
                        "--budget", "6")  # fmt: skip
    assert code == 0, err
    batch = tmp_path / "batch.csv"
    assert _run("session", "next", store, "--k", "6", "--out", batch)[0] == 0
    handed = pd.read_csv(batch, dtype=str)["id"].tolist()
    assert sorted(handed) == sorted(ids)
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{int(i == '007')}\n" for i in ids))
    assert _run("session", "record", store, labels)[0] == 0
    out = tmp_path / "export.csv"
    assert _run("session", "export", store, out)[0] == 0
    exported = pd.read_csv(out, dtype=str).set_index("id")["label"]
    assert exported.to_dict() == {i: str(int(i == "007")) for i in ids}
    # Canonical integer text (and Parquet integers) still gives integer ids.
    pool.write_text("id,p_0,p_1\n7,0.5,0.5\n-3,0.5,0.5\n0,0.5,0.5\n")
    other = tmp_path / "t.db"
    assert _run("session", "init", other, "--pool", pool, "--measure", "error_rate",
                "--budget", "2")[0] == 0  # fmt: skip
    with Session.open(other) as s:
        assert s.ids.dtype.kind == "i"


# -------------------------------------------------------------------------- bad input

HEAD = "id,p_0,p_1\n"
GOOD_ROWS = "1,0.2,0.8\n2,0.6,0.4\n3,0.5,0.5\n"

BAD_POOLS = [
    # (name, file bytes, extra args, message pattern naming file, line and column)
    ("missing-id-column", b"key,p_0,p_1\n1,0.5,0.5\n", [], r"a\.csv: no column 'id'"),
    (
        "duplicate-ids",
        (HEAD + GOOD_ROWS + "2,0.1,0.9\n").encode(),
        [],
        r"a\.csv: line 5, column 'id': id 2 already appears on line 3",
    ),
    (
        "probabilities-not-summing",
        (HEAD + "1,0.2,0.8\n2,0.5,0.4\n").encode(),
        [],
        r"a\.csv: line 3, columns p_0,p_1: the probabilities sum to 0\.9",
    ),
    (
        "probability-negative",
        (HEAD + "1,-0.2,1.2\n").encode(),
        [],
        r"a\.csv: line 2, column 'p_0': -0\.2 is not a probability",
    ),
    (
        "nan",
        (HEAD + "1,0.2,0.8\n2,nan,0.4\n").encode(),
        [],
        r"a\.csv: line 3, column 'p_0': value 'nan' is not finite",
    ),
    (
        "inf",
        (HEAD + "1,0.2,inf\n").encode(),
        [],
        r"a\.csv: line 2, column 'p_1': value 'inf' is not finite",
    ),
    (
        "not-a-number",
        (HEAD + "1,0.2,abc\n").encode(),
        [],
        r"a\.csv: line 2, column 'p_1': 'abc' is not a number",
    ),
    ("empty-cell", (HEAD + "1,,0.8\n").encode(), [], r"a\.csv: line 2, column 'p_0' is empty"),
    (
        "negative-cost",
        b"id,p_0,p_1,cost\n1,0.5,0.5,1\n2,0.5,0.5,-1\n",
        [],
        r"a\.csv: line 3, column 'cost': -1; labeling costs must be strictly positive",
    ),
    (
        "zero-cost",
        b"id,p_0,p_1,cost\n1,0.5,0.5,0\n",
        [],
        r"a\.csv: line 2, column 'cost': 0; labeling costs must be strictly positive",
    ),
    ("empty-pool", HEAD.encode(), [], r"a\.csv: has no rows"),
    ("empty-file", b"", [], r"a\.csv: is empty"),
    (
        "truncated-last-line",
        (HEAD + GOOD_ROWS + "4,0.3").encode(),
        [],
        r"a\.csv: line 5 has 2 field\(s\) but the header has 3 \(id,p_0,p_1\); the file is "
        r"truncated or a row is ragged",
    ),
    (
        "ragged-row",
        (HEAD + "1,0.2,0.8,9\n" + GOOD_ROWS).encode(),
        [],
        r"a\.csv: line 2 has 4 field\(s\)",
    ),
    (
        "unclosed-quote",
        (HEAD + GOOD_ROWS + '"4,0.3,0.7\n').encode(),
        [],
        r"a\.csv: line \d+: .*unclosed quote",
    ),
    (
        "not-utf8",
        (HEAD + "1,0.2,0.8\nd\xe9j\xe0,0.5,0.5\n").encode("latin-1"),
        [],
        r"a\.csv: line 3, character 2: byte 0xe9 is not valid UTF-8",
    ),
    ("no-prediction-columns", b"id,score\n1,0.5\n", [], r"a\.csv: no prediction columns"),
    (
        "budget-below-one-label",
        (HEAD + GOOD_ROWS).encode(),
        ["--budget", "0.5"],
        r"budget: 0\.5 buys no label",
    ),
    (
        "budget-below-cheapest-cost",
        b"id,p_0,p_1,cost\n1,0.5,0.5,2\n",
        ["--budget", "1"],
        r"budget: 1\.0 cost units buy no label \(the cheapest instance costs 2\)",
    ),
    (
        "unknown-measure",
        (HEAD + GOOD_ROWS).encode(),
        ["--measure", "auc"],
        r"measure: unknown value 'auc'",
    ),
    (
        "pos-label-not-a-class",
        (HEAD + GOOD_ROWS).encode(),
        ["--pos-label", "7"],
        r"--pos-label: '7' is not in the label space \[0, 1\]",
    ),
]


@pytest.mark.parametrize(
    ("content", "extra", "pattern"), [c[1:] for c in BAD_POOLS], ids=[c[0] for c in BAD_POOLS]
)
def test_bad_pool_file_exits_2_naming_file_line_column_and_creates_no_store(
    tmp_path: Path, content: bytes, extra: list[str], pattern: str
) -> None:
    (tmp_path / "a.csv").write_bytes(content)
    args = {"--measure": "f1", "--budget": "2"}
    for i in range(0, len(extra), 2):
        args[extra[i]] = extra[i + 1]
    flat = [x for kv in args.items() for x in kv]
    code, out, err = _run("session", "init", tmp_path / "s.db", "--pool", tmp_path / "a.csv", *flat)
    assert code == 2
    assert err.startswith("error: ") and re.search(pattern, err), err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "s.db").exists()


def test_pools_of_different_models_with_different_ids_are_refused(task: dict[str, Path]) -> None:
    b = pd.read_csv(task["b"])
    b.loc[7, "id"] = 5  # line 9 of b.csv
    b.to_csv(task["b"], index=False)
    code, _, err = _run(
        "session",
        "init",
        task["dir"] / "s.db",
        "--pool",
        task["a"],
        "--pool",
        task["b"],
        "--measure",
        "error_rate",
        "--budget",
        "5",
    )
    assert code == 2
    assert re.search(r"b\.csv: line 9, column 'id': id 5 is not in .*a\.csv", err), err
    assert not (task["dir"] / "s.db").exists()
    b.drop(index=7).to_csv(task["b"], index=False)  # now an id of a.csv is missing from b.csv
    code, _, err = _run(
        "session",
        "init",
        task["dir"] / "s.db",
        "--pool",
        task["a"],
        "--pool",
        task["b"],
        "--measure",
        "error_rate",
        "--budget",
        "5",
    )
    assert code == 2 and re.search(r"b\.csv: id 1007 of .*a\.csv \(line 9\) is missing", err)


@pytest.fixture
def started(task: dict[str, Path]) -> dict[str, Path]:
    """A session with 10 ids handed out and the first 5 labeled."""
    store = task["dir"] / "s.db"
    assert (
        _run(
            "session",
            "init",
            store,
            "--pool",
            task["a"],
            "--measure",
            "error_rate",
            "--budget",
            "40",
        )[0]
        == 0
    )
    _run("session", "next", store, "--k", "10", "--out", task["dir"] / "batch.csv")
    batch = pd.read_csv(task["dir"] / "batch.csv")
    labeled = batch.merge(pd.read_csv(task["truth"]), on="id")
    labeled.iloc[:5].to_csv(task["dir"] / "first.csv", index=False)
    assert _run("session", "record", store, task["dir"] / "first.csv")[0] == 0
    task["store"] = store
    task["ids"] = batch["id"].tolist()  # type: ignore[assignment]
    task["labels"] = labeled  # type: ignore[assignment]
    return task


def _bad_labels(s: dict, name: str) -> tuple[bytes, str]:
    """(labels file bytes, message pattern) for one kind of bad labels file."""
    ids = s["ids"]
    ok = f"{ids[5]},0\n{ids[6]},1\n"
    with Session.open(s["store"]) as session:
        sid = session.session_id
    return {
        "missing-id-column": (f"key,label\n{ok}", r"l\.csv: no column 'id'"),
        "missing-label-column": (f"id,y\n{ok}", r"l\.csv: no column 'label'"),
        "id-not-in-pool": (
            f"id,label\n{ok}99999,1\n",
            r"l\.csv: line 4, column 'id': id '99999' is not in this session's pool",
        ),
        "label-outside-space": (
            f"id,label\n{ok}{ids[7]},7\n",
            r"l\.csv: line 4, column 'label': '7' is not in the label space",
        ),
        "label-not-a-class-name": (
            f"id,label\n{ok}{ids[7]},spam\n",
            r"l\.csv: line 4, column 'label': 'spam' is not in the label",
        ),
        "empty-label": (f"id,label\n{ok}{ids[7]},\n", r"l\.csv: line 4, column 'label' is empty"),
        "duplicate-id-different-labels": (
            f"id,label\n{ok}{ids[5]},1\n",
            rf"l\.csv: id {ids[5]} appears on lines 2 and 4 with different labels",
        ),
        "truncated-last-line": (
            f"id,label\n{ok}{str(ids[7])[:2]}",
            r"l\.csv: line 4 has 1 field\(s\) but the header has 2",
        ),
        "ragged-row": (f"id,label\n{ids[5]},0,x\n", r"l\.csv: line 2 has 3 field\(s\)"),
        "not-utf8": (
            b"id,label\n" + f"{ids[5]},0\n".encode() + b"\xff\xfe,1\n",
            r"l\.csv: line 3, character 1: byte 0xff is not valid UTF-8",
        ),
        "other-session": (
            f"id,label,session_id\n{ids[5]},0,{sid}\n{ids[6]},1,{'0' * 32}\n",
            rf"l\.csv: line 3, column 'session_id': '{'0' * 32}' is another "
            rf"session; this store is session {sid}",
        ),
        "never-handed-out": (
            f"id,label\n{ok}{ids[0] + 1 if ids[0] + 1 not in ids else 1299},0\n",
            r"l\.csv: id \d+ was never handed out",
        ),
    }[name]


BAD_LABELS = [
    "missing-id-column",
    "missing-label-column",
    "id-not-in-pool",
    "label-outside-space",
    "label-not-a-class-name",
    "empty-label",
    "duplicate-id-different-labels",
    "truncated-last-line",
    "ragged-row",
    "not-utf8",
    "other-session",
    "never-handed-out",
]


@pytest.mark.parametrize("name", BAD_LABELS)
def test_bad_labels_file_exits_2_and_leaves_the_store_unchanged(started: dict, name: str) -> None:
    content, pattern = _bad_labels(started, name)
    path = started["dir"] / "l.csv"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    before = _dump(started["store"])
    code, out, err = _run("session", "record", started["store"], path)
    assert code == 2
    assert err.startswith("error: ") and re.search(pattern, err), err
    assert out == "" and "Traceback" not in err
    assert _dump(started["store"]) == before


def test_conflicting_relabel_is_refused_then_overwritten_on_request(started: dict) -> None:
    store, first = started["store"], started["labels"].iloc[:5].copy()
    flipped = first.assign(label=1 - first["label"])
    flipped.iloc[:2].to_csv(started["dir"] / "flip.csv", index=False)
    conn = sqlite3.connect(store)
    before = conn.execute("SELECT * FROM labels ORDER BY position").fetchall()
    conn.close()
    code, _, err = _run("session", "record", store, started["dir"] / "flip.csv", "--annotator", "b")
    assert code == 2
    assert f"id {first['id'].iloc[0]} is already labeled {first['label'].iloc[0]}" in err
    assert "2 conflicting labels" in err
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT * FROM labels ORDER BY position").fetchall() == before
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE action = 'refused'").fetchone()[0] == 2
    conn.close()
    code, out, _ = _run("session", "record", store, started["dir"] / "flip.csv", "--overwrite")
    assert code == 0 and "2 overwritten" in out
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT COUNT(*) FROM audit WHERE action = 'overwrite'").fetchone()[0] == 2
    conn.close()


def test_store_from_a_newer_schema_and_a_non_store_exit_2(started: dict) -> None:
    store = started["store"]
    conn = sqlite3.connect(store)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    before = store.read_bytes()
    for cmd in (["status"], ["next", "--k", "3"]):
        code, _, err = _run("session", cmd[0], store, *cmd[1:])
        assert code == 2 and "schema version 99, newer than" in err and "upgrade activeeval" in err
    assert store.read_bytes() == before
    truth = started["truth"]
    before = truth.read_bytes()
    code, _, err = _run("session", "status", truth)
    assert code == 2 and re.search(r"truth\.csv: is not an activeeval session store", err)
    assert truth.read_bytes() == before
    code, _, err = _run("session", "status", started["dir"] / "missing.db")
    assert code == 2  # click's own usage error for a missing file


# ------------------------------------------------------------------------- reliability


def _cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "activeeval.cli", *map(str, args)]


def _count(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM labels").fetchone()[0])
    finally:
        conn.close()


def test_record_killed_mid_file_keeps_whole_chunks_and_completes_on_rerun(tmp_path: Path) -> None:
    m, n, chunk = 200_000, 100_000, 2000
    rng = np.random.default_rng(0)
    p1 = rng.random(m)
    y = (rng.random(m) < p1).astype(int)
    store = tmp_path / "big.db"
    with Session.create(store, np.c_[1 - p1, p1], "error_rate", n, method="passive") as s:
        ids = s.next_batch(n)
    labels = pd.DataFrame({"id": ids, "label": y[ids]})
    labels.to_csv(tmp_path / "labels.csv", index=False)
    cmd = _cli("session", "record", store, tmp_path / "labels.csv", "--chunk-size", chunk)
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 40
        while _count(store) == 0:
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.002)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    committed = _count(store)
    assert 0 < committed < n, "the record finished before it could be killed"
    assert committed % chunk == 0  # whole transactions only, none half-written
    conn = sqlite3.connect(store)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    got = conn.execute("SELECT p.id, l.label FROM labels l JOIN pool p USING (position)").fetchall()
    conn.close()
    assert sorted(got) == sorted(zip(ids[:committed], y[ids[:committed]].tolist(), strict=True))

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"{n - committed} new labels ({committed} unchanged" in done.stdout
    with Session.open(store) as s:
        frame = s.labels_frame()
        assert s.progress().n_labels == n
    assert frame["id"].tolist() == ids and (frame["label"].to_numpy() == y[ids]).all()


def test_two_processes_recording_at_once_both_succeed(tmp_path: Path) -> None:
    m, n = 40_000, 16_000
    rng = np.random.default_rng(1)
    p1 = rng.random(m)
    y = (rng.random(m) < p1).astype(int)
    store = tmp_path / "s.db"
    with Session.create(store, np.c_[1 - p1, p1], "error_rate", n, method="passive") as s:
        ids = np.array(s.next_batch(n))
    halves = {"alice": ids[0::2], "bob": ids[1::2]}
    procs = []
    for name, part in halves.items():
        pd.DataFrame({"id": part, "label": y[part]}).to_csv(tmp_path / f"{name}.csv", index=False)
    # A third writer holds the lock while both start, so that they contend from their first
    # chunk on; it is held beyond SQLite's busy timeout, so the backoff path runs too.
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    for name in halves:
        cmd = _cli(
            "session",
            "record",
            store,
            tmp_path / f"{name}.csv",
            "--annotator",
            name,
            "--chunk-size",
            100,
        )
        procs.append(
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    time.sleep(8.5)
    assert all(p.poll() is None for p in procs)  # both still waiting for the lock
    holder.execute("ROLLBACK")
    released = datetime.now(UTC).isoformat(timespec="microseconds")
    holder.close()
    outputs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err.lower() and "busy" not in err.lower()
        assert f"recorded {n // 2} new labels" in out
    with Session.open(store) as s:
        frame = s.labels_frame().set_index("id")
    assert len(frame) == n
    for name, part in halves.items():
        assert (frame.loc[part, "annotator"] == name).all()
        assert (frame.loc[part, "label"].to_numpy() == y[part]).all()
    for part in halves.values():  # each waited out the holder, beyond SQLite's busy timeout
        assert frame.loc[part, "timestamp"].min() > released


def test_init_stores_the_estimator_and_status_reports_it(task: dict[str, Path]) -> None:
    for how in ("assisted", "snis"):
        store = task["dir"] / f"{how}.db"
        args = ["--estimator", how] if how == "snis" else []  # assisted is the default
        code, out, err = _run("session", "init", store, "--pool", task["a"], "--measure", "f1",
                              "--budget", 30, *args)  # fmt: skip
        assert code == 0 and f"estimator {how}" in out, err
        _campaign(task, store)
        code, out, _ = _run("session", "status", store)
        assert code == 0 and f"estimator {how}," in out
        status = json.loads(_run("session", "status", store, "--json")[1])
        with Session.open(store) as s:
            assert s.plan.estimator == how
            e = s.estimate()
            assert (status["estimate"], status["stderr"]) == (e.estimate, e.stderr)
            assert e.interval == ("tempered" if how == "assisted" else "wald")
    code, _, err = _run("session", "init", task["dir"] / "x.db", "--pool", task["a"], "--measure",
                        "f1", "--budget", 30, "--estimator", "ols")  # fmt: skip
    assert code == 2 and "estimator" in err and "'assisted'" in err
    assert not (task["dir"] / "x.db").exists()


def test_status_with_a_features_file(task: dict[str, Path]) -> None:
    """``status --features`` reads id + numeric columns in any row order and reports what
    ``Session.estimate(features=...)`` reports in pool order; bad files exit 2 naming the
    line and column; a comparison session reports ``Session.compare(features=...)``."""
    store = task["dir"] / "s.db"
    init = ["session", "init", store, "--pool", task["a"], "--measure", "error_rate"]
    assert _run(*init, "--budget", "60", "--seed", "3")[0] == 0
    _campaign(task, store)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2))
    x[:, 1] = pd.read_csv(task["truth"])["label"] + 0.01 * rng.normal(size=300)  # informative
    frame = pd.DataFrame({"id": np.arange(1000, 1300), "f1": x[:, 0], "f2": x[:, 1]})
    path = task["dir"] / "features.csv"
    frame.sample(frac=1.0, random_state=2).to_csv(path, index=False)
    status = _status_json(store, "--features", path)
    with Session.open(store) as s:
        e = s.estimate(features=x)
        plain = s.estimate()
    assert status["estimate"] == e.estimate and status["ci"] == list(e.ci)
    assert status["feature_power"] == e.inference.feature_power
    assert e.estimate != plain.estimate
    code, out, err = _run("session", "status", store, "--features", path)
    assert code == 0, err
    assert f"features: coefficient {e.inference.feature_power:.4f} on the smoothed" in out
    code, _, err = _run("session", "status", store, "--plot", task["dir"] / "p.png",
                        "--features", path)  # fmt: skip
    assert code == 0, err
    bad = frame.astype({"f2": object})
    bad.loc[7, "f2"] = "n/a"
    bad.to_csv(path, index=False)
    code, _, err = _run("session", "status", store, "--features", path)
    assert code == 2 and f"{path}: line 9, column 'f2': 'n/a' is not a number" in err
    frame.iloc[:-1].to_csv(path, index=False)
    code, _, err = _run("session", "status", store, "--features", path)
    assert code == 2 and "no row for 1 of the pool's 300 ids (e.g. 1299)" in err
    frame.assign(id=frame["id"] + 1).to_csv(path, index=False)
    code, _, err = _run("session", "status", store, "--features", path)
    assert code == 2 and "line 301, column 'id': id 1300 is not in this session's pool" in err
    pair = task["dir"] / "pair.db"
    code, _, err = _run("session", "init", pair, "--pool", task["a"], "--pool", task["b"],
                        "--measure", "error_rate", "--budget", "60", "--seed", "3")  # fmt: skip
    assert code == 0, err
    _campaign(task, pair)
    frame.to_csv(path, index=False)
    status = _status_json(pair, "--features", path)
    with Session.open(pair) as s:
        c = s.compare(features=x)
        plain = s.compare()
    assert status["difference"] == c.difference and status["ci"] == list(c.ci)
    assert status["feature_power"] == c.comparison.feature_power
    assert c.difference != plain.difference
    code, _, err = _run("session", "status", pair, "--plot", task["dir"] / "q.png",
                        "--features", path)  # fmt: skip
    assert code == 0, err


def test_status_with_features_on_a_census(task: dict[str, Path]) -> None:
    """Every instance labeled: the exact value, no control variate — ``feature_power`` 0 (it
    used to crash: the census had no such field)."""
    store = task["dir"] / "census.db"
    code, _, err = _run("session", "init", store, "--pool", task["a"], "--measure", "error_rate",
                        "--budget", "300", "--seed", "3")  # fmt: skip
    assert code == 0, err
    _campaign(task, store, k=150)
    path = task["dir"] / "features.csv"
    rng = np.random.default_rng(2)
    pd.DataFrame({"id": np.arange(1000, 1300), "f1": rng.normal(size=300)}).to_csv(
        path, index=False
    )
    status = _status_json(store, "--features", path)
    assert status["n_labels"] == 300 and status["stderr"] == 0.0
    assert status["feature_power"] == 0.0


def test_output_paths_that_would_destroy_a_store_are_refused(task: dict[str, Path]) -> None:
    """`export S S`, `next S --out S` (or its -wal), or writing over another store used to
    replace the store with a CSV and lose every label; such paths, a missing directory and a
    plot that is not a .png are refused with exit 2 before anything is handed out, and the
    store is unchanged. `next --out x.parquet` writes Parquet, as export does."""
    store, other = task["dir"] / "s.db", task["dir"] / "t.db"
    for s in (store, other):
        code, _, err = _run("session", "init", s, "--pool", task["a"], "--measure",
                            "error_rate", "--budget", "40")  # fmt: skip
        assert code == 0, err
    _campaign(task, store, k=10)
    before = _dump(store)
    wal = store.with_name(store.name + "-wal")
    for args, pattern in [
        (("export", store, store), "is the session store"),
        (("export", store, other), "is an SQLite database"),
        (("export", store, other.with_name(other.name + "-wal")), "is an SQLite database"),
        (("next", store, "--out", store), "is the session store"),
        (("next", store, "--out", wal), "is the session store"),
        (("next", store, "--out", task["dir"] / "no" / "b.csv"), "does not exist"),
        (("status", store, "--plot", task["dir"] / "p.txt"), r"must end in \.png"),
        (("status", store, "--plot", store), "is the session store"),
    ]:
        code, _, err = _run("session", *args)
        assert code == 2 and re.search(pattern, err), (args, code, err)
    assert _dump(store) == before
    with Session.open(other) as s:
        assert s.progress().n_pending == 0  # nothing handed out by the refused next
    code, _, err = _run("session", "next", other, "--k", "3", "--out", task["dir"] / "b.parquet")
    assert code == 0, err
    assert pd.read_parquet(task["dir"] / "b.parquet").shape == (3, 1)


def test_file_system_errors_exit_2_with_a_message(task: dict[str, Path], tmp_path: Path) -> None:
    store = task["dir"] / "s.db"
    assert _run("session", "init", store, "--pool", task["a"], "--measure", "error_rate",
                "--budget", "10")[0] == 0  # fmt: skip
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = _run("session", "export", store, blocker / "e.csv")  # parent is a file
    assert code == 2 and err.startswith("error:"), err
    if Path("/proc/version").is_file():  # a file no one may write: an OSError, not a traceback
        code, _, err = _run("session", "export", store, "/proc/version")
        assert code == 2 and err.startswith("error: /proc/version: cannot write"), err
        # Matplotlib's own write fails: _command turns the OSError into exit 2.
        code, _, err = _run("session", "status", store, "--plot", "/proc/activeeval.png")
        assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err


# ------------------------------------------------------- what the minimum versions exposed
def test_a_foreign_warning_inside_a_command_is_shown_and_the_command_ends() -> None:
    """``_command`` replayed other packages' warnings while still recording them, so each one
    re-entered the list being replayed: the command never ended (seen with matplotlib 3.8's
    PyparsingDeprecationWarning). Run in a subprocess so the old behaviour fails, not hangs."""
    code = (
        "import warnings\n"
        "from activeeval.cli import _command\n"
        "with _command():\n"
        "    warnings.warn('a foreign warning', UserWarning)\n"
        "print('ended')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout == "ended\n"
    assert done.stderr.count("a foreign warning") == 1


def test_numbers_in_a_pool_file_are_read_correctly_rounded(tmp_path: Path) -> None:
    """Every decimal in a pool file is the double Python's float() gives (correctly rounded);
    pandas' to_numeric before 3.1 was 1 ulp off on 122 of 300 such values."""
    from activeeval.io import _numbers

    rng = np.random.default_rng(3)
    text = [repr(float(x)) for x in rng.normal(0, 1, 300) * 10.0 ** rng.integers(-5, 5, 300)]
    got = _numbers(pd.Series(text, dtype=object), tmp_path / "f.csv", "line", "x")
    assert got.tolist() == [float(t) for t in text]
