"""The store on disk: one SQLite file, its schema and migrations, and the plumbing every
operation goes through.

Crash safety. Every operation is one SQLite transaction (``BEGIN IMMEDIATE`` for writes) in WAL
mode with ``synchronous=FULL`` (:func:`_transaction`); concurrent writers wait on SQLite's busy
timeout and, beyond it, retry with exponential backoff (:func:`_with_retry`). A new store is
built under a temporary name beside its target and linked into place when complete
(:func:`build_store`), so a crash never leaves a half-created store; what a killed build left is
removed by the next (:func:`_remove_stale_builds`).

Schema. ``meta`` holds ``schema_version``; :data:`MIGRATIONS` maps a version k to the function
that upgrades a store from k to k + 1, applied in one transaction when a store is opened
(:func:`open_store`). A store written by a newer version is refused
(:class:`~activeeval.errors.SchemaVersionError`), as is a file that is not a store
(:class:`~activeeval.errors.NotAStoreError`).
"""

from __future__ import annotations

import errno
import os
import random
import re
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

try:  # POSIX: a build in progress holds a flock on its temporary file (see _claim_build_file)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from ..errors import NotAStoreError, SchemaVersionError, StoreError

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT",
    "MIGRATIONS",
    "RETRY_DEADLINE",
    "SCHEMA_VERSION",
    "StoreFile",
    "build_store",
    "open_store",
]

SCHEMA_VERSION = 8
"""Version of the store layout written by this package (``meta.schema_version``). Version 2
added the ``ranking`` table (ranked pools, thesis Ch. 6); version 3 the ``holder`` of each
hand-out (the annotator it is handed to, ``Session.next_batch(k, annotator=...)``), the
``agreement`` of labels settled from several annotations and each model's ``decision``
(``Session.create(prediction=...)``); version 4 the ``phases`` of the draw sequence (a q
re-planned by ``Session.add_model``); version 5 the ``draw_index`` of every phase and an
index of the pool by cost, so that hand-outs, intake and progress read no whole-pool column
(:mod:`~activeeval.session.lookup`); version 6 the ``parts`` of arrays above 1 MiB, so that
a draw reads one part of q and arrays beyond one SQLite value fit
(:mod:`~activeeval.session.blobs`); version 7 no table, but a new draw rule for new stores
(the stream of ``evaluate(random_state=seed)`` in every block; ``plan.draw_rule``, which
older stores keep): a release before it would continue such a store with other draws, so it
must refuse it; version 8 the ``summaries`` of the pool that a session's estimate reads
instead of the pool (``activeeval.estimators.summary``; written at init, none in a migrated
store, which keeps reading its pool). A store
of a newer version is refused (``SchemaVersionError``); an older one is upgraded by
``MIGRATIONS``."""
#: ``PRAGMA application_id`` of a session store ("AEVS").
APPLICATION_ID = 0x41455653
#: SQLite's own wait for a lock, in seconds, before :func:`_with_retry` backs off and retries.
BUSY_TIMEOUT = 5.0
#: Total time a transaction keeps retrying on a locked store before giving up, in seconds.
RETRY_DEADLINE = 120.0

_SCHEMA_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE plan (
    singleton       INTEGER PRIMARY KEY CHECK (singleton = 1),
    kind            TEXT NOT NULL CHECK (kind IN ('evaluation', 'comparison')),
    measure         TEXT NOT NULL,
    measure_spec    TEXT NOT NULL,
    beta            REAL,
    pos_label       TEXT,
    method          TEXT NOT NULL,
    budget          REAL NOT NULL CHECK (budget > 0),
    seed            INTEGER NOT NULL CHECK (seed >= 0),
    level           REAL NOT NULL CHECK (level > 0 AND level < 1),
    pool_size       INTEGER NOT NULL CHECK (pool_size > 0),
    n_models        INTEGER NOT NULL CHECK (n_models >= 1),
    predictive_kind TEXT NOT NULL CHECK (predictive_kind IN ('categorical', 'gaussian')),
    label_space     TEXT,
    fingerprint     TEXT NOT NULL,
    q               BLOB NOT NULL,
    block_size      INTEGER NOT NULL CHECK (block_size > 0),
    max_draws       INTEGER NOT NULL CHECK (max_draws > 0),
    draw_rule       TEXT NOT NULL,
    created_at      TEXT NOT NULL
);
CREATE TABLE models (
    model       INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    n_columns   INTEGER NOT NULL,
    predictions BLOB NOT NULL
);
CREATE TABLE pool (
    position INTEGER PRIMARY KEY,
    id       NOT NULL UNIQUE,
    cost     REAL CHECK (cost IS NULL OR cost > 0)
);
CREATE TABLE state (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    cursor    INTEGER NOT NULL CHECK (cursor >= 0),
    finished  TEXT
);
CREATE TABLE draws (
    seq      INTEGER PRIMARY KEY,
    position INTEGER NOT NULL REFERENCES pool (position),
    q        REAL NOT NULL CHECK (q > 0)
);
CREATE TABLE handouts (
    position      INTEGER PRIMARY KEY REFERENCES pool (position),
    seq           INTEGER NOT NULL UNIQUE REFERENCES draws (seq),
    batch         INTEGER NOT NULL,
    handed_out_at TEXT NOT NULL
);
CREATE TABLE labels (
    position    INTEGER PRIMARY KEY REFERENCES handouts (position),
    label       NOT NULL,
    annotator   TEXT,
    recorded_at TEXT NOT NULL
);
CREATE TABLE audit (
    event         INTEGER PRIMARY KEY AUTOINCREMENT,
    at            TEXT NOT NULL,
    action        TEXT NOT NULL CHECK (action IN ('overwrite', 'refused')),
    position      INTEGER NOT NULL REFERENCES pool (position),
    old_label,
    new_label,
    old_annotator TEXT,
    annotator     TEXT
);
"""

# Version 2: a ranked pool (thesis Ch. 6). The pool's rows are queries; each model's
# ``predictions`` hold one row of grade probabilities per item (a categorical distribution over
# grades 0..G−1: predictive_kind 'categorical', label_space the grades), query after query;
# ``offsets`` (int64, m + 1) delimit the queries and ``items`` (JSON, or NULL) are the item ids.
# A query's label is the JSON list of its items' grades (see Session.record).
_SCHEMA_V2 = """
CREATE TABLE ranking (
    model   INTEGER PRIMARY KEY REFERENCES models (model),
    offsets BLOB NOT NULL,
    items   TEXT
)
"""

# Version 3: annotators. A hand-out is held by the annotator it was handed to (NULL: by nobody
# in particular, as every hand-out of an older store); no other annotator is handed it while it
# is pending, until it is released or reassigned. ``agreement`` keeps, for a label settled from
# several annotations (a labeling tool's overlap), how many there were and how many agreed.
# Decisions: ``models.decision`` holds a model's decision f(x) where it is not the mode (mean)
# of its beliefs (float64: the class index, or a regressor's value; NULL: the mode).
_SCHEMA_V3 = """
ALTER TABLE handouts ADD COLUMN holder TEXT;
ALTER TABLE models ADD COLUMN decision BLOB;
CREATE TABLE agreement (
    position      INTEGER PRIMARY KEY REFERENCES labels (position),
    n_annotations INTEGER NOT NULL CHECK (n_annotations >= 1),
    n_agreeing    INTEGER NOT NULL CHECK (n_agreeing >= 1 AND n_agreeing <= n_annotations)
)
"""

# Version 4: phases. The draws from sequence number ``first_seq`` on come from the phase's
# ``q`` (a model added: q re-planned for the models now compared); before the first phase,
# from ``plan.q``. An older store has none.
_SCHEMA_V4 = """
CREATE TABLE phases (
    phase      INTEGER PRIMARY KEY CHECK (phase >= 1),
    first_seq  INTEGER NOT NULL UNIQUE CHECK (first_seq >= 0),
    q          BLOB NOT NULL,
    reason     TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""

# Version 5: what hand-outs, intake and progress need without reading the pool
# (activeeval.session.lookup). Per phase (0: the plan's q) the running sums of q at the end of
# every ``chunk`` rows and the number of instances with q > 0; an index of the pool by cost
# (sessions with costs). ``meta.horizon`` is written for stores that lack it, from the budget
# at migration; from then on it stays fixed, as a new store's does (``extend`` keeps it), where
# such a store used to derive it again from the current budget at every open.
_SCHEMA_V5 = """
CREATE TABLE draw_index (
    phase     INTEGER PRIMARY KEY CHECK (phase >= 0),
    chunk     INTEGER NOT NULL CHECK (chunk > 0),
    n_support INTEGER NOT NULL CHECK (n_support >= 0),
    ends      BLOB NOT NULL
);
CREATE INDEX pool_cost ON pool (cost) WHERE cost IS NOT NULL
"""

# Version 6: arrays above 1 MiB. Such an array's column (plan.q, phases.q,
# models.predictions, models.decision) holds an empty blob and its bytes lie here, in parts
# of 4,096 rows (activeeval.session.blobs): a draw reads one part of q instead of walking a
# large blob's page chain, and arrays beyond one SQLite value (10⁹ bytes; a 10⁸ × 2 float64
# matrix is 1.6·10⁹) fit. ``owner`` is '<table>.<column>:<key>'. Smaller arrays stay in their
# column, as before.
_SCHEMA_V6 = """
CREATE TABLE parts (
    owner TEXT NOT NULL,
    part  INTEGER NOT NULL CHECK (part >= 0),
    data  BLOB NOT NULL,
    UNIQUE (owner, part)
)
"""

# Version 8: pool summaries. Per phase of q and model (a comparison's pair under the model
# number 2**31 - 1), what the default estimate reads from the whole pool
# (activeeval.estimators.summary.PoolSummary, PairSummary, serialized by
# activeeval.session.summaries), so that ``status`` costs O(labels), and per model a check of
# every stored row (``models.checks``: a 64-bit hash of the row's predictions and decision),
# so that the rows such an estimate reads are checked as the fingerprint checks the whole
# pool, and a copy of each labeled instance's row with its check (``labeled_rows``, written
# as labels are recorded), so that ``status`` reads them in one query, not one random read
# each. A store migrated to it has none of them: its estimates keep reading the pool.
_SCHEMA_V8 = """
CREATE TABLE summaries (
    phase INTEGER NOT NULL CHECK (phase >= 0),
    model INTEGER NOT NULL CHECK (model >= 0),
    data  BLOB NOT NULL,
    PRIMARY KEY (phase, model)
);
ALTER TABLE models ADD COLUMN checks BLOB;
CREATE TABLE labeled_rows (
    model    INTEGER NOT NULL CHECK (model >= 0),
    position INTEGER NOT NULL CHECK (position >= 0),
    data     BLOB NOT NULL,
    PRIMARY KEY (model, position)
) WITHOUT ROWID
"""

Migration = Callable[[sqlite3.Connection], None]


def _add_ranking_table(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA_V2)


def _add_annotators(conn: sqlite3.Connection) -> None:
    for stmt in _SCHEMA_V3.split(";"):
        conn.execute(stmt)


def _add_phases(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA_V4)


def _add_draw_index(conn: sqlite3.Connection) -> None:
    """Version 5's tables, filled from the stored q of every phase: O(pool) once, so that
    every later hand-out is O(labels)."""
    import numpy as np  # the schema module itself stays import-light

    from .lookup import plan_horizon, write_draw_index

    for stmt in _SCHEMA_V5.split(";"):
        conn.execute(stmt)
    blobs = [(0, conn.execute("SELECT q FROM plan").fetchone()[0])]
    blobs += conn.execute("SELECT phase, q FROM phases ORDER BY phase").fetchall()
    for phase, blob in blobs:
        write_draw_index(conn, int(phase), np.frombuffer(blob, "<f8"))
    if conn.execute("SELECT 1 FROM meta WHERE key = 'horizon'").fetchone() is None:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('horizon', ?)", (repr(plan_horizon(conn)),)
        )


def _add_parts(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA_V6)


def _keep_draw_rule(conn: sqlite3.Connection) -> None:
    """Nothing to change: the store keeps the draw rule it names (``plan.draw_rule``)."""


def _add_summaries(conn: sqlite3.Connection) -> None:
    for stmt in _SCHEMA_V8.split(";"):
        conn.execute(stmt)


MIGRATIONS: dict[int, Migration] = {
    1: _add_ranking_table,
    2: _add_annotators,
    3: _add_phases,
    4: _add_draw_index,
    5: _add_parts,
    6: _keep_draw_rule,
    7: _add_summaries,
}
"""``MIGRATIONS[k]`` upgrades a store of schema version k to k + 1: a function of the SQLite
connection, run inside the open transaction of ``Session.open`` (it must not commit). A store
is brought to ``SCHEMA_VERSION`` in one transaction when it is opened."""

_T = TypeVar("_T")


# ------------------------------------------------------------------- sqlite plumbing
def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _is_lock_error(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def _with_retry(fn: Callable[[], _T], path: Path) -> _T:
    """Run one transaction, retrying with exponential backoff (and jitter) while another
    process holds the store's write lock beyond SQLite's busy timeout."""
    delay = 0.02
    deadline = time.monotonic() + RETRY_DEADLINE
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc).lower():
                raise StoreError(
                    f"{path}: cannot write the store ({exc}): the store, or its {path.name}-wal "
                    f"and {path.name}-shm files beside it, are not writable by this user. "
                    "Check their permissions and the directory's; such files left by another "
                    "user's read can be removed while no process has the store open."
                ) from exc
            if not _is_lock_error(exc):
                raise StoreError(f"{path}: SQLite error ({exc}).") from exc
            if time.monotonic() + delay > deadline:
                raise StoreError(
                    f"{path}: another process has kept the store locked for over "
                    f"{RETRY_DEADLINE:.0f} s; try again when it has finished."
                ) from exc
            time.sleep(delay * (1.0 + random.random()))
            delay = min(2 * delay, 2.0)


def _writable(path: Path) -> bool:
    """Whether this user may write ``path`` (a directory: create files in it)."""
    return os.access(path, os.W_OK | (os.X_OK if path.is_dir() else 0))


def _file_system_error(path: Path, exc: OSError | sqlite3.Error, action: str) -> StoreError:
    """What the file system refused while ``action`` (e.g. "create the store") on the store
    ``path``, and how to fix it: a full disk, a directory or store this user cannot write."""
    directory = path.parent
    detail = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
    text = f"{detail} {getattr(exc, 'sqlite_errorname', '')}".lower()
    code = exc.errno if isinstance(exc, OSError) else None
    if code in (errno.ENOSPC, errno.EDQUOT) or "disk is full" in text or "sqlite_full" in text:
        return StoreError(
            f"{path}: cannot {action}: no space left on the device of {directory} ({detail}). "
            "Free some space or choose a directory on another device."
        )
    refused = ("readonly", "read-only", "unable to open", "cantopen", "permission")
    if code in (errno.EACCES, errno.EPERM, errno.EROFS) or any(w in text for w in refused):
        creating = action.startswith("create")
        side = (
            ""
            if creating
            else f", where SQLite must create {path.name}-wal and {path.name}-shm even to read "
            "the store"
        )
        elsewhere = "choose another directory" if creating else "work on a copy elsewhere"
        if not _writable(directory):
            what = f"this user cannot write in directory {directory}{side}"
            fix = f"Make the directory writable (e.g. chmod u+w {directory}) or {elsewhere}."
        elif path.exists() and not _writable(path):
            what = "the store is read-only for this user"
            fix = f"Make it writable (e.g. chmod u+w {path}) or {elsewhere}."
        else:
            what = (
                f"this user cannot write in directory {directory}{side}, or the store is read-only"
            )
            fix = f"Check their permissions (e.g. chmod u+w {directory}) or {elsewhere}."
        return StoreError(f"{path}: cannot {action}: {what} ({detail}). {fix}")
    return StoreError(f"{path}: cannot {action} ({detail}).")


#: SQLite's files beside a database ``x``: ``x-wal``, ``x-shm``, ``x-journal``.
_SIDE_FILES = ("-wal", "-shm", "-journal")


def _build_pattern(target: Path) -> re.Pattern[str]:
    """Names of the temporary files :meth:`Session.create` builds ``target`` under: the
    store ``.NAME.<32 hex>.tmp`` and SQLite's side files of it."""
    side = "|".join(map(re.escape, _SIDE_FILES))
    return re.compile(rf"(\.{re.escape(target.name)}\.[0-9a-f]{{32}}\.tmp)({side})?")


def _claim_build_file(target: Path) -> tuple[Path, int]:
    """A new, empty temporary file beside ``target`` to build the store in, and an open
    descriptor holding an exclusive ``flock`` on it for the whole build. The kernel drops the
    lock when the process ends, however it ends (SIGKILL included), so a later create can tell
    a leftover of a killed build (lock free) from a live one (:func:`_remove_stale_builds`)."""
    for _ in range(8):
        tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        if fcntl is None:  # pragma: no cover - Windows: no stale-build detection
            return tmp, fd
        # Blocking: a cleaner that opened the file between O_EXCL and here holds the lock
        # only while it unlinks the file, which the link count then shows; take a new name.
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_nlink > 0:
            return tmp, fd
        os.close(fd)
    raise StoreError(f"{target}: could not claim a temporary file in {target.parent}.")


def _remove_build_files(tmp: Path) -> None:
    """A build's temporary store and its side files; side files first, so that a side file
    never outlives its (locked) store file while the build runs."""
    for suffix in (*_SIDE_FILES, ""):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)


def _remove_stale_builds(target: Path) -> list[str]:
    """Remove what earlier creates of ``target`` that were killed (SIGKILL, power loss) left
    beside it: temporary stores whose ``flock`` no live process holds, with their side files,
    and side files whose temporary store is gone. A live build's files are kept. Returns the
    names removed."""
    if fcntl is None:  # pragma: no cover - Windows
        return []
    pattern = _build_pattern(target)
    try:
        names = sorted(os.listdir(target.parent))
    except OSError:
        return []
    removed: list[str] = []
    for name in names:
        match = pattern.fullmatch(name)
        if match is None:
            continue
        path = target.parent / name
        main = target.parent / match.group(1)
        try:
            if match.group(2) is not None:  # a side file: an orphan once its store is gone
                if not main.exists():
                    path.unlink()
                    removed.append(name)
                continue
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: a build in progress
            os.close(fd)
            continue
        try:
            _remove_build_files(path)
            removed.append(name)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _connect(path: Path, *, create: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); never creates a file
    unless ``create``."""
    if create:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    else:
        uri = f"file:{quote(str(path.resolve()))}?mode=rw"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
    return conn


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB: large record/hand-out transactions


@contextmanager
def _transaction(conn: sqlite3.Connection, *, write: bool) -> Iterator[sqlite3.Connection]:
    """One transaction: ``BEGIN IMMEDIATE`` takes the write lock up front (no deadlock on a
    read-to-write upgrade); a plain ``BEGIN`` gives a consistent read snapshot."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class StoreFile:
    """An open store: its path and its connection (autocommit; transactions are explicit).
    Every read and write is one transaction, retried while another process holds the lock."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    def write(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        def attempt() -> _T:
            with _transaction(self.conn, write=True) as c:
                return body(c)

        return _with_retry(attempt, self.path)

    def read(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        def attempt() -> _T:
            with _transaction(self.conn, write=False) as c:
                return body(c)

        return _with_retry(attempt, self.path)

    def close(self) -> None:
        self.conn.close()

    def is_open(self) -> bool:
        """Whether the connection is still open."""
        try:
            self.conn.execute("SELECT 1")
        except sqlite3.ProgrammingError:
            return False
        return True


# --------------------------------------------------------------- creating, opening
def build_store(target: Path, fill: Callable[[sqlite3.Connection], None]) -> None:
    """Write a new store at ``target``: the schema and ``fill``'s rows in one transaction, in a
    temporary file beside ``target`` that is linked into place when complete (atomic, and never
    replacing a store created meanwhile). Whatever the file system refuses becomes a
    :class:`~activeeval.errors.StoreError` saying how to fix it; the temporary files never stay."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_builds(target)
        tmp, lock = _claim_build_file(target)
    except OSError as exc:
        raise _file_system_error(target, exc, "create the store") from exc
    try:
        conn = _connect(tmp, create=True)
        try:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            _configure(conn)
            with _transaction(conn, write=True):
                for stmt in ";".join(
                    (
                        _SCHEMA_V1,
                        _SCHEMA_V2,
                        _SCHEMA_V3,
                        _SCHEMA_V4,
                        _SCHEMA_V5,
                        _SCHEMA_V6,
                        _SCHEMA_V8,
                    )
                ).split(";"):
                    if stmt.strip():
                        conn.execute(stmt)
                fill(conn)
        finally:
            conn.close()  # the last connection checkpoints the WAL into the file
        try:
            os.link(tmp, target)  # atomic, and never replaces a store created meanwhile
        except FileExistsError as exc:
            raise StoreError(f"{target}: already exists; choose another file name.") from exc
    except (OSError, sqlite3.Error) as exc:  # a full disk, a directory turned read-only
        raise _file_system_error(target, exc, "create the store") from exc
    finally:
        try:
            _remove_build_files(tmp)
        finally:
            os.close(lock)


def open_store(target: Path) -> sqlite3.Connection:
    """A configured connection to the existing store ``target``, migrated to
    :data:`SCHEMA_VERSION` (closed again if any of it fails).

    Raises
    ------
    NotAStoreError
        The file does not exist or is not an activeeval session store.
    SchemaVersionError
        The store was written by a newer activeeval.
    """
    if not target.is_file():
        raise NotAStoreError(
            f"{target}: no such session store; create one with Session.create "
            "(activeeval session init)."
        )
    try:
        conn = _connect(target)
    except sqlite3.OperationalError as exc:  # the file system refused, not the content
        raise _file_system_error(target, exc, "open the store") from exc
    except sqlite3.Error as exc:
        raise NotAStoreError(f"{target}: cannot be opened as a session store ({exc}).") from exc
    try:
        version = _inspect(target, conn)
        _configure(conn)
        if version < SCHEMA_VERSION:
            _with_retry(lambda: _migrate(conn, target, MIGRATIONS), target)
    except BaseException:
        conn.close()
        raise
    return conn


def _inspect(path: Path, conn: sqlite3.Connection) -> int:
    """Schema version of the store, read without writing anything to the file."""
    not_store = (
        f"{path}: is not an activeeval session store (expected an SQLite file made by "
        "activeeval session init / Session.create)."
    )
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id != APPLICATION_ID or "meta" not in tables:
            raise NotAStoreError(not_store)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError as exc:  # e.g. no -wal/-shm in a read-only directory
        raise _file_system_error(path, exc, "open the store") from exc
    except sqlite3.DatabaseError as exc:  # "file is not a database"
        raise NotAStoreError(f"{not_store[:-1]}; {exc}.") from exc
    try:
        version = int(row[0])
    except (TypeError, ValueError) as exc:
        raise NotAStoreError(not_store) from exc
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path}: was written with store schema version {version}, newer than the "
            f"version {SCHEMA_VERSION} this activeeval reads; upgrade activeeval "
            "(pip install -U activeeval) to open it."
        )
    if version < 1:
        raise NotAStoreError(f"{path}: has an invalid schema version {version}.")
    return version


def _migrate(conn: sqlite3.Connection, path: Path, migrations: Mapping[int, Migration]) -> None:
    """Upgrade the store to :data:`SCHEMA_VERSION` in one transaction: every step or none."""
    with _transaction(conn, write=True):
        version = int(
            conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        )
        while version < SCHEMA_VERSION:
            if version not in migrations:
                raise SchemaVersionError(
                    f"{path}: no migration from store schema version {version} to {version + 1}."
                )
            migrations[version](conn)
            version += 1
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
