"""Error paths a user meets, each a named error or a one-line ``error:`` with exit status 2.

What is checked: bad seeds and random states are refused by the one check every entry point
uses, naming the argument (``--seed`` on the command line); a store in a directory this user
cannot write, a full disk and a killed ``init`` say what is wrong and leave no temporary files
behind (the next ``init`` removes those of a killed one, never those of a live one); outputs
are written whole or not at all, and only in the formats asked for; results print short;
``python -m activeeval`` is the ``activeeval`` command; ``status`` before any label says so
and its JSON is valid. File-system failures are simulated where the machine cannot produce
them on demand (a full disk; a read-only directory when the tests run as root, whom chmod does
not stop): the simulated call raises what the real one raises.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import signal
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import activeeval as ae
import activeeval.session.schema as schema_module
from activeeval.acquisition import _LabelBook
from activeeval.campaign.stratified import _stratum_sd
from activeeval.cli import main
from activeeval.demo import simulate_static
from activeeval.session import Session

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _one_line_error(code: int, err: str) -> str:
    """The message of a clean failure: exit status 2, one ``error:`` line, no traceback."""
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.fixture
def files(task: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """conftest's pool files and labels (``task``), with ``out/`` for stores, which holds
    nothing else, so that a leftover file shows."""
    out = tmp_path / "out"
    out.mkdir()
    return {**task, "out": out}


def _init(files: dict[str, Path], store: Path, *extra: str | Path) -> tuple[int, str, str]:
    return _run("session", "init", store, "--pool", files["a"], "--measure", "error_rate",
                "--budget", "40", *extra)  # fmt: skip


def _labeled(files: dict[str, Path], store: Path, k: int = 10) -> None:
    """A store with ``k`` labels recorded."""
    assert _init(files, store)[0] == 0
    batch, labels = files["out"] / "batch.csv", files["out"] / "labels.csv"
    assert _run("session", "next", store, "--k", k, "--out", batch)[0] == 0
    pd.read_csv(batch).merge(pd.read_csv(files["truth"]), on="id").to_csv(labels, index=False)
    assert _run("session", "record", store, labels)[0] == 0
    batch.unlink()
    labels.unlink()


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# ------------------------------------------------------------------ seeds, random_state


@pytest.mark.parametrize(
    ("seed", "pattern"),
    [
        ("99999999999999999999", r"--seed: 99999999999999999999 is too large; .* 2\*\*63 - 1"),
        ("-1", r"--seed: must be a non-negative integer, got -1; use e\.g\. 1 instead"),
    ],
    ids=["beyond-int64", "negative"],
)
def test_session_init_refuses_a_seed_naming_the_option(
    files: dict[str, Path], seed: str, pattern: str
) -> None:
    err = _one_line_error(*_init(files, files["out"] / "s.db", "--seed", seed)[::2])
    assert re.search(pattern, err), err
    assert _names(files["out"]) == []


def _ranker(m: int = 6, seed: int = 0) -> ae.GradedRelevance:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(3), size=3 * m)
    items = np.tile(np.arange(3), m)
    return ae.GradedRelevance(proba, np.arange(0, 3 * m + 1, 3), items=items)


def _entry_points() -> dict[str, object]:
    """Every public function that takes a random_state or seed, called with one."""
    p = np.linspace(0.05, 0.95, 40)
    proba, other = np.c_[1 - p, p], np.c_[p, 1 - p]

    def never(idx: np.ndarray) -> np.ndarray:
        raise AssertionError("the oracle was called before the random state was checked")

    q = np.full(40, 1 / 40)
    return {
        "evaluate": lambda rs: ae.evaluate(proba, never, "error_rate", 10, random_state=rs),
        "evaluate-stratified": lambda rs: ae.evaluate(
            proba, never, "error_rate", 10, method="stratified", random_state=rs
        ),
        "compare": lambda rs: ae.compare([proba, other], never, "error_rate", 10, random_state=rs),
        "evaluate-ranking": lambda rs: ae.evaluate(_ranker(), never, "dcg", 3, random_state=rs),
        "compare-rankings": lambda rs: ae.compare(
            [_ranker(), _ranker(seed=1)], never, "dcg", 3, random_state=rs
        ),
        "draw": lambda rs: ae.sampling.draw(q, 5, random_state=rs),
        "load_task": lambda rs: ae.load_task("default_skew", random_state=rs),
        "simulate_static": lambda rs: simulate_static(q, p, np.ones(40), [5], 2, random_state=rs),
    }


@pytest.mark.parametrize("entry", sorted(_entry_points()))
@pytest.mark.parametrize(
    "bad", ["abc", -1, 1.5, True, [1, -2]], ids=["str", "negative", "float", "bool", "neg-list"]
)
def test_every_entry_point_refuses_a_bad_random_state_naming_it(entry: str, bad: object) -> None:
    with pytest.raises(ae.errors.InvalidRandomStateError, match=r"^random_state: ") as info:
        _entry_points()[entry](bad)
    assert "non-negative integer" in str(info.value)
    assert isinstance(info.value, ae.ActiveEvalError)


@pytest.mark.parametrize("bad", ["abc", -1, 2**63, 1.0, True], ids=str)
def test_session_create_refuses_a_bad_seed_naming_it(tmp_path: Path, bad: object) -> None:
    proba = np.c_[np.full(20, 0.3), np.full(20, 0.7)]
    with pytest.raises(ae.errors.InvalidRandomStateError, match=r"^seed: "):
        Session.create(tmp_path / "s.db", proba, "error_rate", 5, seed=bad)  # type: ignore[arg-type]
    assert _names(tmp_path) == []


def test_what_numpy_accepts_draws_what_numpy_draws() -> None:
    """None, integers of any size, sequences of them, SeedSequence, BitGenerator and Generator
    are accepted and draw exactly what ``np.random.default_rng`` of them draws."""
    q = np.full(50, 1 / 50)
    for rs in (0, 2**100, np.uint64(7), [3, 4], np.random.SeedSequence(5)):
        expect = np.minimum(
            np.searchsorted(np.cumsum(q) / q.sum(), np.random.default_rng(rs).random(8), "right"),
            49,
        )
        assert ae.sampling.draw(q, 8, random_state=rs).tolist() == expect.tolist()
    gen = np.random.default_rng(1)
    ae.sampling.draw(q, 8, random_state=gen)  # a Generator is used, not copied: it advances
    assert gen.random() == np.random.default_rng(1).random(9)[-1]
    assert ae.sampling.draw(q, 3, random_state=None).shape == (3,)
    assert ae.sampling.draw(q, 3, random_state=np.random.PCG64(2)).shape == (3,)


# ----------------------------------------------------------- a directory this user cannot write


@contextmanager
def _read_only(directory: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``directory`` read-only for this user: by chmod, or, for root (whom chmod does not
    stop), by making the calls that would write there raise what they raise for other users:
    os.open ``PermissionError`` (EACCES), SQLite "attempt to write a readonly database"."""
    if not ROOT:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    real_open, real_connect, real_writable = os.open, sqlite3.connect, schema_module._writable

    def refusing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)).parent == directory and flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    class NoSharedMemory:
        """A connection to a WAL store whose -shm cannot be created: every read fails."""

        def execute(self, sql: str, *args: object) -> None:
            if not sql.startswith("PRAGMA busy_timeout"):
                raise sqlite3.OperationalError("attempt to write a readonly database")

        def close(self) -> None:
            pass

    def connect(database: object, *args: object, **kwargs: object) -> object:
        if str(directory) in str(database):
            return NoSharedMemory()
        return real_connect(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing_open)
    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(schema_module, "_writable", lambda p: p != directory and real_writable(p))
    yield


def test_init_into_a_read_only_directory_says_the_directory_cannot_be_written(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ro = files["out"]
    with _read_only(ro, monkeypatch):
        err = _one_line_error(*_init(files, ro / "s.db")[::2])
    assert (
        f"{ro / 's.db'}: cannot create the store: this user cannot write in directory {ro}" in err
    )
    assert f"chmod u+w {ro}" in err and "choose another directory" in err
    assert _names(ro) == []


def test_status_of_a_store_in_a_read_only_directory_says_so_not_that_it_is_no_store(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = files["out"] / "s.db"
    assert _init(files, store)[0] == 0
    with _read_only(files["out"], monkeypatch):
        err = _one_line_error(*_run("session", "status", store)[::2])
        with pytest.raises(ae.errors.StoreError) as info:
            Session.open(store)
    assert "is not an activeeval session store" not in err
    assert not isinstance(info.value, ae.errors.NotAStoreError)
    assert f"cannot open the store: this user cannot write in directory {files['out']}" in err
    assert "s.db-wal and s.db-shm" in err and f"chmod u+w {files['out']}" in err
    assert _names(files["out"]) == ["s.db"]


# ------------------------------------------------------------- full disk, killed init


def _fail_inside_transaction(exc: BaseException) -> object:
    """A ``_transaction`` whose body runs and then fails with ``exc`` before the commit."""
    real = schema_module._transaction

    @contextmanager
    def failing(conn: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
        with real(conn, write=write):
            yield conn
            raise exc

    return failing


@pytest.mark.parametrize("where", ["claiming-the-file", "writing-the-store", "linking-into-place"])
def test_init_on_a_full_disk_exits_2_and_leaves_nothing_behind(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    if where == "claiming-the-file":
        real_open = os.open

        def no_space(path: object, flags: int, *args: object, **kwargs: object) -> int:
            if flags & os.O_CREAT:
                raise full
            return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", no_space)
    elif where == "writing-the-store":  # what SQLite raises on ENOSPC
        failing = _fail_inside_transaction(sqlite3.OperationalError("database or disk is full"))
        monkeypatch.setattr(schema_module, "_transaction", failing)
    else:

        def link(*args: object) -> None:
            raise full

        monkeypatch.setattr(os, "link", link)
    err = _one_line_error(*_init(files, files["out"] / "s.db")[::2])
    assert "cannot create the store: no space left on the device of" in err, err
    assert _names(files["out"]) == []


_KILL_AFTER_COMMIT = """
import os, signal, sys
from contextlib import contextmanager
import activeeval.session.schema as schema
real = schema._transaction

@contextmanager
def commit_then_die(conn, *, write):
    with real(conn, write=write):
        yield conn
    os.kill(os.getpid(), signal.SIGKILL)  # the build's store, -wal and -shm are on disk

schema._transaction = commit_then_die
from activeeval.cli import main
main(sys.argv[1:], prog_name="activeeval")
"""

_BUILD = re.compile(r"\.s\.db\.[0-9a-f]{32}\.tmp(-wal|-shm|-journal)?")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_init_killed_by_sigkill_leaves_files_that_the_next_init_removes(
    files: dict[str, Path],
) -> None:
    store = files["out"] / "s.db"
    args = ["session", "init", store, "--pool", files["a"], "--measure", "error_rate",
            "--budget", "40"]  # fmt: skip
    child = subprocess.run(
        [sys.executable, "-c", _KILL_AFTER_COMMIT, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    left = _names(files["out"])
    assert left and all(_BUILD.fullmatch(n) for n in left), left
    assert any(n.endswith(".tmp") for n in left) and any(n.endswith("-wal") for n in left)
    code, out, err = _run(*args)
    assert code == 0 and out.startswith(f"created {store}"), err
    assert _names(files["out"]) == ["s.db"]
    with Session.open(store) as s:
        assert s.plan.pool_size == 300


@pytest.mark.skipif(sys.platform == "win32", reason="stale-build detection uses flock")
def test_the_next_init_removes_dead_builds_only(files: dict[str, Path]) -> None:
    """A build whose flock is held (a live init) and another store's files are kept; a dead
    build's files, orphaned side files, and nothing else, are removed."""
    import fcntl

    out = files["out"]

    def build(store: str) -> Path:
        return out / f".{store}.{uuid.uuid4().hex}.tmp"

    live, dead, orphan, other = build("s.db"), build("s.db"), build("s.db"), build("t.db")
    for path in (live, dead, other):
        path.write_bytes(b"")
    for path in (live, dead):
        Path(f"{path}-wal").write_bytes(b"x")
    Path(f"{dead}-shm").write_bytes(b"x")
    Path(f"{orphan}-shm").write_bytes(b"x")
    unrelated = out / ".s.db.notahex.tmp"
    unrelated.write_bytes(b"")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live init holds its build's lock
        code, _, err = _init(files, out / "s.db")
        assert code == 0, err
    finally:
        os.close(fd)
    assert _names(out) == sorted(
        [live.name, f"{live.name}-wal", other.name, unrelated.name, "s.db"]
    )


# ----------------------------------------------------------------------------- outputs


def _disk_fills_while_writing(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """``DataFrame.<method>`` writes a few bytes of its file, then the disk is full."""

    def write(self: pd.DataFrame, path: object, *args: object, **kwargs: object) -> None:
        Path(str(path)).write_bytes(b"id,la")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pd.DataFrame, method, write)


@pytest.mark.parametrize(("name", "method"), [("out.csv", "to_csv"), ("out.parquet", "to_parquet")])
def test_export_to_a_full_disk_keeps_the_earlier_file_and_leaves_no_temporary(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, name: str, method: str
) -> None:
    store, target = files["out"] / "s.db", files["out"] / name
    _labeled(files, store)
    assert _run("session", "export", store, target)[0] == 0
    before = target.read_bytes()
    with monkeypatch.context() as patch:
        _disk_fills_while_writing(patch, method)
        err = _one_line_error(*_run("session", "export", store, target)[::2])
    assert err == f"error: {target}: cannot write it ({os.strerror(errno.ENOSPC)}).\n"
    assert target.read_bytes() == before
    assert _names(files["out"]) == sorted(["s.db", name])


def test_next_out_to_a_full_disk_writes_nothing_and_hands_out_the_same_ids_again(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, batch = files["out"] / "s.db", files["out"] / "batch.csv"
    assert _init(files, store)[0] == 0
    with monkeypatch.context() as patch:
        _disk_fills_while_writing(patch, "to_csv")
        _one_line_error(*_run("session", "next", store, "--k", "5", "--out", batch)[::2])
    assert _names(files["out"]) == ["s.db"]
    with Session.open(store) as s:
        pending = s.next_batch(5)  # the ids handed out are pending: the same ones come again
    assert _run("session", "next", store, "--k", "5", "--out", batch)[0] == 0
    assert pd.read_csv(batch)["id"].tolist() == pending


def test_export_and_next_refuse_an_unknown_file_type_before_any_work(
    files: dict[str, Path],
) -> None:
    store = files["out"] / "s.db"
    _labeled(files, store)
    with Session.open(store) as s:
        pending = s.progress().n_pending
    for args in (("export", store, files["out"] / "labels.xlsx"),
                 ("next", store, "--k", "5", "--out", files["out"] / "batch.xlsx")):  # fmt: skip
        err = _one_line_error(*_run("session", *args)[::2])
        assert "must end in .csv, .parquet or .pq (the file type written); .xlsx is not" in err
    assert _names(files["out"]) == ["s.db"]
    with Session.open(store) as s:
        assert s.progress().n_pending == pending  # nothing handed out
    # A name without extension is CSV, as documented.
    assert _run("session", "export", store, files["out"] / "labels")[0] == 0
    assert pd.read_csv(files["out"] / "labels").shape[0] == 10


# ------------------------------------------------------------------------------- reprs


def _short(obj: object, estimate: float | None = None) -> str:
    text = repr(obj)
    assert 1 <= len(text.splitlines()) <= 5 and len(text) < 500, text
    assert text.startswith(type(obj).__name__ + "(")
    if estimate is not None:
        assert f"{estimate:.4g}" in text, text
    return text


def test_results_on_a_pool_of_100k_print_in_a_few_short_lines(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    m = 100_000
    p = rng.random(m)
    y = (rng.random(m) < p).astype(int)
    a, b, c = np.c_[1 - p, p], np.c_[p, 1 - p], np.c_[1 - p**2, p**2]

    def oracle(i: np.ndarray) -> np.ndarray:
        return y[i]

    r = ae.evaluate(a, oracle, "f1", 60, random_state=0)
    text = _short(r, r.estimate)
    assert "ci=(" in text and "n_labels=60" in text and "method='active'" in text
    assert "measure='f1'" in text and "level=0.95" in text
    _short(r.inference, r.inference.estimate)  # AssistedEstimate
    two = ae.compare([a, b], oracle, "error_rate", 60, random_state=0)
    _short(two, two.difference)
    _short(two.comparison, two.difference)
    three = ae.compare([a, b, c], oracle, "error_rate", 60, random_state=0)
    _short(three, three.difference)
    _short(three.comparison)
    idx = r.indices
    _short(ae.estimators.inference.estimate("error_rate", a[idx], y[idx]), None)
    _short(ae.estimators.inference.paired_test("error_rate", [a[idx], b[idx]], y[idx]))
    _short(
        ae.estimators.inference.multiple_comparison("error_rate", [a[idx], b[idx], c[idx]], y[idx])
    )
    with Session.create(tmp_path / "s.db", a, "error_rate", 30) as s:
        ids = s.next_batch(30)
        s.record({i: int(y[i]) for i in ids})
        e = s.estimate()
        _short(e, e.estimate)
        _short(s.plan)
        _short(s.progress())
    with Session.create(tmp_path / "c.db", [a, b], "error_rate", 30) as s:
        ids = s.next_batch(30)
        s.record({i: int(y[i]) for i in ids})
        cmp = s.compare()
        _short(cmp, cmp.difference)
    _short(ae.load_task("default_skew"))


# ------------------------------------------------------------------- python -m activeeval


def test_python_m_activeeval_is_the_activeeval_command(files: dict[str, Path]) -> None:
    for args in (["--help"], ["session", "--help"], ["--version"]):
        done = subprocess.run([sys.executable, "-m", "activeeval", *args], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        same = CliRunner().invoke(main, args, prog_name="activeeval").stdout
        assert done.stdout.splitlines()[:3] == same.splitlines()[:3]  # the width may differ
    assert done.stdout.startswith("activeeval, version ")
    store = files["out"] / "m.db"
    args = ["session", "init", str(store), "--pool", str(files["a"]), "--measure",
            "error_rate", "--budget", "20"]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "activeeval", *args], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.startswith(f"created {store}"), done.stderr
    args[2] = str(files["out"] / "n.db")
    bad = subprocess.run([sys.executable, "-m", "activeeval", *args, "--seed", "-1"],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("error: --seed: "), bad.stderr
    assert _names(files["out"]) == ["m.db"]


# ------------------------------------------------------------- status before any label


def _strict_json(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not valid JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("models", [1, 2], ids=["evaluation", "comparison"])
def test_status_before_any_label_says_so_and_its_json_is_valid(
    files: dict[str, Path], models: int
) -> None:
    store = files["out"] / "s.db"
    pools = ["--pool", files["a"]] + (["--pool", files["b"]] if models == 2 else [])
    assert _run("session", "init", store, *pools, "--measure", "error_rate",
                "--budget", "40")[0] == 0  # fmt: skip
    code, out, err = _run("session", "status", store)
    assert code == 0 and err == "", err
    assert "nan" not in out.lower()
    what = "estimate" if models == 1 else "difference"
    assert f"{what}: none yet: no label has been recorded" in out
    code, out, _ = _run("session", "status", store, "--json")
    assert code == 0
    status = _strict_json(out)
    keys = {"measure", "n_labels", "n_draws", "cost_spent", "budget", "estimate", "stderr",
            "ci", "level"}  # fmt: skip
    keys |= {"interval", "pending_by_annotator", "waiting", "agreement"}
    if models == 2:
        keys |= {"difference", "p_value", "best", "estimate_ci"}
    else:
        keys |= {"effective_n"}
    assert set(status) == keys
    assert status.get("interval") is None and status.get("effective_n") is None
    assert status["pending_by_annotator"] == [] and status["agreement"]["labels"] == 0
    assert status["n_labels"] == 0 and status["stderr"] is None and status["ci"] == [None, None]
    assert status["estimate"] == (None if models == 1 else [None, None])
    assert status.get("estimate_ci", [[None, None]] * 2) == [[None, None]] * 2
    _labeled(files, files["out"] / "later.db")
    status = _strict_json(_run("session", "status", files["out"] / "later.db", "--json")[1])
    assert math.isfinite(status["estimate"]) and status["n_labels"] == 10


# ---------------------------------------------------------------- variance, never negative


def test_stratum_spread_of_constant_values_is_not_negative() -> None:
    """Σz² − (Σz)²/n of five equal z = 0.7 rounds to −4.4e-16; clipped at 0, the stratum's
    s.d. is exactly that of its prior pseudo-labels."""
    book = _LabelBook(5)
    book.add(np.arange(5), np.ones(5, dtype=int))  # every loss 1: z = 1 − 0.3 = 0.7
    prior = np.array([1e-12])
    sd = _stratum_sd(book, np.zeros(5, dtype=np.intp), ae.ErrorRate(), np.zeros(5, dtype=int),
                     prior, 0.3)  # fmt: skip
    k0 = 20.0
    assert sd[0] == pytest.approx(math.sqrt(k0 * prior[0] / (5 + k0)), rel=1e-12)
