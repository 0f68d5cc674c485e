"""Several annotators on one campaign: each is handed ids no other holds, within one budget.

A named hand-out (``next_batch(k, annotator=...)``) is held by its annotator until labeled,
released or reassigned; the estimate keeps using the longest fully labeled prefix of the draws,
and ``progress`` says how many returned labels wait behind whose unreturned ids.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import activeeval as ae
from activeeval.cli import main
from activeeval.errors import ShapeError, UnknownIdError
from activeeval.session import Session

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "stores"


def _pool(m: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p1 = rng.beta(1.0, 4.0, m)
    return np.c_[1 - p1, p1], (rng.random(m) < p1).astype(int)


def _session(tmp_path: Path, budget: int = 60, name: str = "s.db") -> tuple[Session, np.ndarray]:
    proba, y = _pool()
    return Session.create(tmp_path / name, proba, "error_rate", budget, seed=5), y


def test_annotators_get_disjoint_ids_each_idempotent(tmp_path: Path) -> None:
    s, _ = _session(tmp_path)
    a = s.next_batch(10, annotator="alice")
    b = s.next_batch(10, annotator="bob")
    assert len(a) == len(b) == 10 and not set(a) & set(b)
    assert s.next_batch(10, annotator="alice") == a  # her pending ids again, nothing new
    assert s.next_batch(10, annotator="bob") == b
    assert s.progress().pending_by_annotator == {"alice": 10, "bob": 10}
    # the hand-outs are the campaign's own draws, in order: together they are what one
    # unnamed hand-out of 20 gives on the same plan
    t, _ = _session(tmp_path, name="t.db")
    assert sorted(t.next_batch(20)) == sorted(a + b)


def test_the_one_budget_caps_all_annotators_together(tmp_path: Path) -> None:
    s, _ = _session(tmp_path, budget=25)
    got = [s.next_batch(10, annotator=who) for who in ("alice", "bob", "carol", "dave")]
    sizes = [len(g) for g in got]
    assert sum(sizes) == 25 and sizes[-1] == 0
    assert len({i for g in got for i in g}) == 25
    assert s.progress().committed == 25


def test_unnamed_pending_ids_are_claimed_by_a_named_annotator(tmp_path: Path) -> None:
    s, _ = _session(tmp_path)
    shared = s.next_batch(6)
    mine = s.next_batch(4, annotator="alice")
    assert mine == shared[:4]  # pending ids held by nobody go first, in draw order
    assert s.next_batch(2) == shared[4:]  # nobody's ask: only what nobody holds
    assert s.progress().pending_by_annotator == {"alice": 4, None: 2}
    bob = s.next_batch(5, annotator="bob")
    assert bob[:2] == shared[4:] and not set(bob) & set(mine)


def test_release_and_reassign_move_only_pending_ids(tmp_path: Path) -> None:
    s, y = _session(tmp_path)
    a = s.next_batch(8, annotator="alice")
    s.record({a[0]: int(y[a[0]]), a[1]: int(y[a[1]])}, annotator="alice")
    moved = s.release("alice", ids=a[2:5], to="bob")
    assert moved == a[2:5]
    assert s.next_batch(8, annotator="bob")[:3] == a[2:5]
    freed = s.release("alice")
    assert freed == a[5:]
    assert s.progress().pending_by_annotator == {"bob": 8, None: 3}
    assert s.next_batch(3, annotator="carol") == a[5:]
    labels = s.labels_frame()
    assert set(labels["id"]) == {a[0], a[1]} and set(labels["annotator"]) == {"alice"}
    assert s.release("nobody-holds-anything") == []


def test_release_refuses_what_it_cannot_do_by_name(tmp_path: Path) -> None:
    s, _ = _session(tmp_path)
    s.next_batch(3, annotator="alice")
    with pytest.raises(ShapeError, match=r"^annotator: an annotator is named"):
        s.next_batch(3, annotator="")
    with pytest.raises(ShapeError, match=r"^annotator: an annotator is named"):
        s.next_batch(3, annotator=7)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"^annotator: name whose pending ids"):
        s.release(None)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"^to: 'alice' already holds them"):
        s.release("alice", to="alice")
    with pytest.raises(UnknownIdError, match=r"^ids: 10000 is not an id"):
        s.release("alice", ids=[10000])
    with pytest.raises(ShapeError, match=r"^ids: a list of pool ids"):
        s.release("alice", ids="abc")


def test_labels_waiting_behind_an_unreturned_id_are_counted_and_attributed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    s, y = _session(tmp_path)
    a = s.next_batch(5, annotator="alice")
    b = s.next_batch(5, annotator="bob")
    s.record({i: int(y[i]) for i in b}, annotator="bob")
    p = s.progress()
    # every one of bob's labels lies behind alice's five unreturned ids
    assert (p.n_waiting, p.blocking_by_annotator, p.n_estimation_draws) == (5, {"alice": 5}, 0)
    s.record({i: int(y[i]) for i in a[:3]}, annotator="alice")
    p = s.progress()
    assert p.n_waiting == 5 and p.blocking_by_annotator == {"alice": 2}
    s.record({i: int(y[i]) for i in a[3:]}, annotator="alice")
    p = s.progress()
    assert (p.n_waiting, p.blocking_by_annotator, p.n_labels) == (0, {}, 10)
    assert p.n_estimation_draws == p.n_draws


def test_a_campaign_split_among_annotators_reports_what_evaluate_reports(tmp_path) -> None:  # type: ignore[no-untyped-def]
    proba, y = _pool()
    s = Session.create(tmp_path / "s.db", proba, "error_rate", 60, seed=5)
    who = ["alice", "bob", "carol"]
    for turn in range(40):
        ids = s.next_batch(4, annotator=who[turn % 3])
        if not ids:
            break
        s.record({i: int(y[i]) for i in ids}, annotator=who[turn % 3])
    assert s.progress().complete
    got = s.estimate()
    want = ae.evaluate(proba, lambda i: y[i], "error_rate", budget=60, random_state=5)
    assert (got.estimate, got.stderr, got.ci, got.n_labels) == (
        want.estimate,
        want.stderr,
        want.ci,
        want.n_labels,
    )


def test_two_annotators_asking_at_once_never_share_an_id(tmp_path: Path) -> None:
    s, _ = _session(tmp_path, budget=200)
    s.close()
    out: dict[str, list] = {}

    def ask(name: str) -> None:
        with Session.open(tmp_path / "s.db") as mine:
            out[name] = [i for _ in range(5) for i in mine.next_batch(8, annotator=name)]

    threads = [threading.Thread(target=ask, args=(n,)) for n in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not set(out["alice"]) & set(out["bob"])
    assert len(set(out["alice"])) == len(set(out["bob"])) == 8


def test_a_store_of_the_previous_schema_gains_annotators_and_keeps_its_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    name = "evaluation_f1_v2.db"
    expected = json.loads((FIXTURES / "expected.json").read_text())[name]
    shutil.copy(FIXTURES / name, tmp_path / name)
    with Session.open(tmp_path / name) as s:
        assert s.plan.schema_version == 8  # v2 -> v3 (annotators) -> v4 (phases) -> … -> v8
        assert s.next_batch(len(expected["next"]), annotator="alice") == expected["next"]
        assert s.progress().pending_by_annotator == {"alice": len(expected["next"])}
    conn = sqlite3.connect(tmp_path / name)
    assert "holder" in [r[1] for r in conn.execute("PRAGMA table_info(handouts)")]
    conn.close()


def _run(*args: object) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_cli_hands_out_per_annotator_releases_and_reports(tmp_path: Path) -> None:
    proba, y = _pool()
    pool = tmp_path / "pool.csv"
    pool.write_text(
        "id,p_0,p_1\n" + "".join(f"{i},{a!r},{b!r}\n" for i, (a, b) in enumerate(proba.tolist()))
    )
    store = tmp_path / "s.db"
    assert _run("session", "init", store, "--pool", pool, "--measure", "error_rate",
                "--budget", 40, "--seed", 5)[0] == 0  # fmt: skip
    code, out_a, _ = _run("session", "next", store, "--k", 4, "--annotator", "alice")
    code_b, out_b, _ = _run("session", "next", store, "--k", 4, "--annotator", "bob")
    ids_a = [int(v) for v in out_a.split()[1:]]
    ids_b = [int(v) for v in out_b.split()[1:]]
    assert code == code_b == 0 and len(ids_a) == 4 and not set(ids_a) & set(ids_b)
    labels = tmp_path / "bob.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{y[i]}\n" for i in ids_b))
    assert _run("session", "record", store, labels, "--annotator", "bob")[0] == 0
    code, out, _ = _run("session", "status", store)
    assert code == 0 and "pending:  alice 4" in out
    assert "waiting:  4 recorded labels" in out and "(alice 4)" in out
    code, out, _ = _run("session", "status", store, "--json")
    status = json.loads(out)
    assert status["pending_by_annotator"] == [{"annotator": "alice", "ids": 4}]
    assert status["waiting"] == {"labels": 4, "behind": [{"annotator": "alice", "ids": 4}]}
    code, out, _ = _run("session", "release", store, "--annotator", "alice", "--to", "carol")
    assert code == 0 and "released 4 pending ids of alice to carol" in out
    code, out, _ = _run("session", "next", store, "--k", 4, "--annotator", "carol")
    assert [int(v) for v in out.split()[1:]] == ids_a
    code, _, err = _run("session", "next", store, "--annotator", "")
    assert code == 2 and err.startswith("error: --annotator: an annotator is named")
    code, _, err = _run("session", "release", store, "--annotator", "carol", "--to", "carol")
    assert code == 2 and err.startswith("error: --to: 'carol' already holds them")
