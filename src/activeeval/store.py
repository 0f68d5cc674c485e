"""Persistent labeling sessions: an evaluation or comparison campaign stored in one SQLite file.

A session is thesis Algorithm 2 (or 3) with the oracle taken out of the loop: the library hands
out the pool ids to label next, people label them whenever they can, and the labels come back
later — possibly from several annotators, processes or machine restarts. Everything the
estimate depends on is stored, so a reopened session continues exactly where it stopped and
gives bit-identical estimates:

* the **plan** — measure and its parameters (positive class, β), sampling method, estimator,
  budget, seed, confidence level, the pool's ids, labeling costs and every model's
  predictions, a SHA-256 fingerprint over them, and the sampling distribution q itself as
  float64 bytes (q is never recomputed, so a change to
  :func:`~activeeval.sampling.optimal_distribution` in a later version cannot change a
  running session);
* the **draw sequence** x₁, x₂, … ~ q i.i.d., each draw with its q(xᵢ). Block b of
  ``block_size`` draws comes from ``np.random.default_rng([seed, b])`` by inverse-CDF lookup in
  cumsum(q), so the sequence is a function of (q, seed) alone — not of how many times
  :meth:`Session.next_batch` is called, nor of crashes; blocks are persisted as they are
  materialized. (NumPy's SeedSequence makes ``[seed, 0]`` the stream of ``seed``, so a
  campaign within the first block draws exactly what ``evaluate(..., random_state=seed)``
  draws);
* the **hand-outs** (ids given to annotators, each with its first draw), the **labels** with
  annotator and time, and an **audit** table of refused and accepted relabels.

Stopping rule (that of :func:`~activeeval.evaluate`, one function for both:
:func:`~activeeval.acquisition._walk_block`): walk the draw sequence; a draw of
an instance already handed out is free; a new instance costs its label (1, or its cost λ(x));
stop for good at the first draw whose new label the remaining budget cannot pay. Ids handed out
but not labeled yet count as spent. The walk depends only on the draws and the costs, never on
the labels, so the whole campaign is fixed by (q, seed, costs, budget) in advance and every
hand-out schedule produces the same ids in the same order.

Crash safety. Every operation is one SQLite transaction (``BEGIN IMMEDIATE`` for writes) in WAL
mode with ``synchronous=FULL``; recording a large labels input commits ``chunk_size`` rows per
transaction, so a killed process keeps every committed chunk and never half a chunk, and
re-running the same record completes it (identical relabels are no-ops). Concurrent writers
wait on SQLite's busy timeout and, beyond it, retry with exponential backoff.

Ranked pools (thesis Ch. 6). With ``GradedRelevance`` models (one ranker, or two with item
ids) the pool's instances are queries: a query is handed out, its label is the grade of every
item of its list (of both lists' union for a comparison, in :func:`~activeeval.ranking_union`
order), recorded from rows ``id,item,grade`` and stored as one JSON list per query, and the
estimate is over per-query DCG/ERR values.

Estimates. A session reports what :func:`~activeeval.evaluate` / :func:`~activeeval.compare`
report for the same draws, bit for bit, with the estimator fixed in its plan: the
model-assisted one by default, the thesis's eq. 3.31 (``estimator="snis"``) for reproduction.
Stores created before the plan held an estimator report eq. 3.31 (now, as evaluate, the exact
value with stderr 0 once every instance that can move the measure is labeled). The
plan stores the estimator's name; its computation is the installed version's (eq. 3.31 is
fixed; the model-assisted estimator's tuning may improve between versions).

Schema. ``meta`` holds ``schema_version``; :data:`MIGRATIONS` maps a version k to the function
that upgrades a store from k to k + 1, applied in one transaction when a store is opened. A store
written by a newer version is refused (:class:`~activeeval.SchemaVersionError`), as is a file
that is not a store (:class:`~activeeval.NotAStoreError`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import random
import re
import sqlite3
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from tqdm.auto import tqdm

try:  # POSIX: a build in progress holds a flock on its temporary file (see _claim_build_file)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from ._validation import (
    MAX_STORED_SEED,
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    check_option,
    check_seed,
)
from ._version import __version__
from .acquisition import _budget_room, _first_true_run, _walk_block
from .errors import (
    DegenerateIntervalWarning,
    DuplicateIdError,
    LabelConflictError,
    LabelSpaceError,
    NotAStoreError,
    RankingItemsError,
    SchemaVersionError,
    SessionMismatchError,
    ShapeError,
    StoreError,
    UndefinedEstimateWarning,
    UnknownIdError,
    UnknownOptionError,
)
from .estimators.assisted import _value_pool
from .estimators.inference import (
    Comparison,
    Estimate,
    MultipleComparison,
    _result_repr,
)
from .estimators.report import (
    _census,
    _check_features,
    _compare_sample,
    _ranking_comparison,
    _ranking_estimate,
    _ranking_pair_pools,
    _reported,
    _static_estimate,
)
from .estimators.smoother import DEFAULT_BANDWIDTH, _batched_smoother
from .measures import (
    AbsoluteError,
    Accuracy,
    CostMatrixLoss,
    ErrorRate,
    FMeasure,
    Measure,
    Precision,
    Recall,
    SquaredError,
    clip_to_range,
    get_measure,
)
from .methods import ESTIMATORS, RANKING_METHODS, SAMPLING_METHODS, SESSION_COMPARISON_METHODS
from .predictive import Categorical, Gaussian, Mixture, Predictive, as_predictive
from .ranking import (
    DCG,
    ERR,
    GradedRelevance,
    RankingMeasure,
    _bind_for_labels,
    _bind_pair,
    _check_pair,
    ranking_distribution,
    ranking_expectation,
    ranking_pair_values,
    ranking_query_costs,
    ranking_union,
    ranking_values,
)
from .sampling import (
    check_distribution,
    comparison_distribution,
    cost_distribution,
    optimal_distribution,
    passive_distribution,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "RecordSummary",
    "Session",
    "SessionComparison",
    "SessionEstimate",
    "SessionPlan",
    "SessionProgress",
]

#: Version of the store layout written by this module (``meta.schema_version``). Version 2
#: added the ``ranking`` table (ranked pools, thesis Ch. 6).
SCHEMA_VERSION = 2
#: ``PRAGMA application_id`` of a session store ("AEVS").
APPLICATION_ID = 0x41455653
#: Draws materialized at a time; block b is ``default_rng([seed, b])``'s next ``block_size``.
DEFAULT_BLOCK_SIZE = 1024
#: Label rows committed per transaction by :meth:`Session.record`.
DEFAULT_CHUNK_SIZE = 5000
#: SQLite's own wait for a lock, in seconds, before :func:`_with_retry` backs off and retries.
BUSY_TIMEOUT = 5.0
#: Total time a transaction keeps retrying on a locked store before giving up, in seconds.
RETRY_DEADLINE = 120.0
#: Name of the rule that turns (q, seed, block) into draws; stored with the plan.
DRAW_RULE = "inverse-cdf(cumsum(q)/sum, default_rng([seed, block]).random(block_size))"


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

Migration = Callable[[sqlite3.Connection], None]


def _add_ranking_table(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA_V2)


#: ``MIGRATIONS[k]`` upgrades a store of schema version k to k + 1 (run inside the open
#: transaction of :meth:`Session.open`; it must not commit).
MIGRATIONS: dict[int, Migration] = {1: _add_ranking_table}

_T = TypeVar("_T")


# ------------------------------------------------------------------------- results
@dataclass(frozen=True)
class SessionPlan:
    """What a session was created with; never changes afterwards.

    Attributes
    ----------
    session_id : str
        Random identifier; a labels input with a ``session_id`` column must carry this one.
    kind : {"evaluation", "comparison"}
    measure : str
        The measure's name (``"f1"``, ``"error_rate"``, ...); ``measure_spec`` holds its class
        and parameters, ``pos_label`` and ``beta`` those of F-measures.
    method, budget, seed, level
        Sampling method, budget (labels, or cost units with costs), seed, confidence level.
    pool_size, n_models, model_names, predictive_kind, label_space
        The pool and the models' predictive distributions (``label_space`` is None for
        regressors).
    cost_sensitive : bool
        Whether per-instance labeling costs were given (the budget is then in cost units).
    fingerprint : str
        SHA-256 over the pool ids, every model's predictions and the costs.
    block_size, max_draws, draw_rule
        How the draw sequence is generated, and the cap on its length (that of
        :func:`~activeeval.evaluate`: 20·budget + 1000 draws, the budget in labels).
    ranking : bool
        A pool of ranked queries (``GradedRelevance`` models, DCG/ERR): ids are query ids, a
        label is the grade of every item of the query (labels input ``id,item,grade``);
        ``label_space`` holds the grades.
    estimator : {"assisted", "snis"}
        The estimator the session reports (:meth:`Session.estimate`); stores written before
        sessions had a choice report the thesis's, ``"snis"``.
    """

    session_id: str
    kind: str
    measure: str
    measure_spec: dict[str, Any]
    pos_label: Any
    beta: float | None
    method: str
    budget: float
    seed: int
    level: float
    pool_size: int
    n_models: int
    model_names: tuple[str, ...]
    predictive_kind: str
    label_space: tuple[Any, ...] | None
    cost_sensitive: bool
    fingerprint: str
    block_size: int
    max_draws: int
    draw_rule: str
    created_at: str
    schema_version: int
    ranking: bool = False
    estimator: str = "snis"

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("session_id", "kind", "measure"),
            ("method", "estimator", "budget", "cost_sensitive", "seed", "level"),
            ("pool_size", "n_models", "predictive_kind", "ranking"),
        )


@dataclass(frozen=True)
class SessionProgress:
    """Where a campaign stands.

    Attributes
    ----------
    n_labels : int
        Distinct pool instances labeled.
    cost_spent : float
        Their labeling cost (= ``n_labels`` without costs).
    committed : float
        ``cost_spent`` plus the cost of ids handed out but not labeled yet.
    budget : float
    n_draws : int
        Draws the campaign has walked through (repeats of handed-out instances included).
    n_handed_out, n_pending : int
        Ids handed out so far, and those of them still waiting for a label.
    n_estimation_draws : int
        Length of the longest fully labeled prefix of the draws, which the estimate uses.
    finished : bool
        No further id will be handed out: the next new instance in the draw sequence costs more
        than is left (``stop_reason="budget"``), every instance q can draw is handed out
        (``"pool"``), or the draw cap is reached (``"max_draws"``).
    complete : bool
        Finished and nothing pending: the campaign's estimate is final.
    """

    n_labels: int
    cost_spent: float
    committed: float
    budget: float
    n_draws: int
    n_handed_out: int
    n_pending: int
    n_estimation_draws: int
    finished: bool
    complete: bool
    stop_reason: str | None

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("n_labels", "cost_spent", "committed", "budget"),
            ("n_draws", "n_handed_out", "n_pending", "n_estimation_draws"),
            ("finished", "complete", "stop_reason"),
        )


@dataclass(frozen=True)
class RecordSummary:
    """What :meth:`Session.record` did: labels stored for the first time, identical relabels
    skipped, and labels replaced (``overwrite=True``)."""

    n_new: int
    n_unchanged: int
    n_overwritten: int


@dataclass(frozen=True, eq=False)
class SessionEstimate:
    """A session's performance estimate (evaluation sessions, or one model of a comparison).

    Attributes
    ----------
    estimate, stderr : float
        The estimate and its standard error on the labeled prefix of the draws, by the
        session's estimator (what :func:`~activeeval.evaluate` reports for the same draws,
        clipped like it to the measure's range; ``inference.estimate`` is unclipped); NaN
        before the first label.
    ci : tuple of float
        The interval at ``level`` by ``interval``, clipped to the same range.
    n_labels, n_draws : int
        Distinct labeled instances and draws in the prefix.
    inference : Estimate or None
        The underlying :class:`~activeeval.estimators.inference.Estimate` (None before the first
        label).
    interval : str
        How ``ci`` was formed: ``"logit"`` (the model-assisted estimator of a measure in
        [0, 1], with its Clopper–Pearson fallback at 0 or 1) or ``"wald"``.
    """

    estimate: float
    stderr: float
    ci: tuple[float, float]
    level: float
    n_labels: int
    n_draws: int
    measure: str
    inference: Estimate | None
    interval: str = "wald"
    value_range: tuple[float, float] = (-math.inf, math.inf)

    def confidence_interval(
        self, level: float | None = None, method: str | None = None
    ) -> tuple[float, float]:
        """Interval by any method of :meth:`Estimate.confidence_interval` (default: the
        session's, ``interval``), clipped like ``ci`` to the measure's ``value_range``."""
        if self.inference is None:
            return math.nan, math.nan
        ci = self.inference.confidence_interval(level, method or self.interval)
        if math.isnan(self.estimate):
            return ci
        return clip_to_range(self.estimate, ci, self.value_range)[1]

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "estimate", "stderr"),
            ("ci", "level", "interval"),
            ("n_labels", "n_draws"),
        )


@dataclass(frozen=True, eq=False)
class SessionComparison:
    """A comparison session's verdict, as :class:`~activeeval.ComparisonResult`.

    For two models ``difference`` = Ĝ[f₀] − Ĝ[f₁] with the paired Wald test (eq. 3.21–3.24);
    for k > 2, the best model against the runner-up, Holm-adjusted over all pairs, with the full
    :class:`~activeeval.MultipleComparison` in ``comparison``.
    """

    difference: float
    stderr: float
    p_value: float
    ci: tuple[float, float]
    best: int
    estimates: NDArray[np.float64]
    level: float
    n_labels: int
    n_draws: int
    measure: str
    comparison: Comparison | MultipleComparison | None

    def __repr__(self) -> str:
        return _result_repr(
            self,
            ("measure", "difference", "stderr", "p_value"),
            ("ci", "level", "best", "estimates"),
            ("n_labels", "n_draws"),
        )


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


def _f64(a: NDArray[Any]) -> bytes:
    return np.ascontiguousarray(a, dtype="<f8").tobytes()


def _from_f64(b: bytes, shape: tuple[int, ...]) -> NDArray[np.float64]:
    return np.frombuffer(b, dtype="<f8").astype(np.float64).reshape(shape)


def _refuse_cells(
    ok: NDArray[np.bool_], source: str, row_label: str, cells: pd.Series, column: str, what: str
) -> None:
    """LabelSpaceError naming the first row whose cell in ``column`` fails ``ok`` (``cells``
    indexed by the rows' names for messages), its value, what it should be and how many rows
    fail; nothing when every row passes."""
    if ok.all():
        return
    i = int(np.flatnonzero(~ok)[0])
    raise LabelSpaceError(
        f"{source}: {row_label} {cells.index[i]}, column '{column}': "
        f"{_py(cells.iloc[i])!r} is not {what} ({int((~ok).sum())} such rows)."
    )


def _py(x: Any) -> Any:
    """A plain Python scalar (numpy scalars unwrapped) for SQLite and JSON."""
    return x.item() if isinstance(x, np.generic) else x


# ------------------------------------------------------------------ canonical inputs
def _canonical_labels(labels: NDArray[Any], name: str) -> list[Any]:
    """A class label space as ints or strings (what a store and a CSV file can hold)."""
    vals = [_py(v) for v in labels.tolist()]
    if all(isinstance(v, str) for v in vals):
        return vals
    if all(isinstance(v, bool | int | float) for v in vals):
        ints = [int(v) for v in vals]
        if all(float(a) == float(b) for a, b in zip(ints, vals, strict=True)):
            return ints
    raise LabelSpaceError(
        f"{name}: a session stores class labels that are all integers or all strings; got "
        f"{vals[:5]}. Map the classes to integers or strings first."
    )


def _canonical_ids(ids: ArrayLike | None, m: int) -> NDArray[Any]:
    """Pool ids as an int64 array or an object array of str; unique, one per instance."""
    if ids is None:
        return np.arange(m, dtype=np.int64)
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != m:
        raise ShapeError(f"ids: expected {m} pool ids (one per instance), got shape {arr.shape}.")
    if arr.dtype.kind in "iu":
        out = arr.astype(np.int64)
    elif arr.dtype.kind in "US" or (
        arr.dtype.kind == "O" and all(isinstance(v, str) for v in arr.tolist())
    ):
        out = np.array([str(v) for v in arr.tolist()], dtype=object)
    elif arr.dtype.kind == "O" and all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v in arr.tolist()
    ):
        out = arr.astype(np.int64)
    else:
        raise ShapeError(
            f"ids: pool ids must be all integers or all strings, got dtype {arr.dtype}."
        )
    index = pd.Index(out)
    if not index.is_unique:
        dup = index[index.duplicated()][0]
        where = np.flatnonzero(index == dup)[:2].tolist()
        raise DuplicateIdError(
            f"ids: id {_py(dup)!r} appears at positions {where[0]} and {where[1]}; pool ids "
            "must be unique."
        )
    return out


def _measure_spec(meas: Measure) -> dict[str, Any]:
    """The measure's class and parameters, enough to rebuild it (see :func:`_measure_from`)."""
    if isinstance(meas, Precision | Recall):
        return {"class": type(meas).__name__, "pos_label": _py(meas.pos_label)}
    if isinstance(meas, FMeasure):
        return {"class": "FMeasure", "beta": float(meas.beta), "pos_label": _py(meas.pos_label)}
    if isinstance(meas, CostMatrixLoss):
        return {
            "class": "CostMatrixLoss",
            "cost_matrix": np.asarray(meas.cost_matrix, dtype=float).tolist(),
            "labels": None if meas.labels is None else [_py(v) for v in meas.labels.tolist()],
        }
    if type(meas) in (ErrorRate, Accuracy, SquaredError, AbsoluteError):
        return {"class": type(meas).__name__}
    if type(meas) is DCG:
        return {"class": "DCG", "k": meas.k}
    if type(meas) is ERR:
        return {"class": "ERR", "k": meas.k, "max_grade": meas.max_grade}
    raise UnknownOptionError(
        f"measure: a session can store error_rate, accuracy, mse, mae, f1 (any β), precision, "
        f"recall, CostMatrixLoss, and DCG/ERR for ranked pools; got {meas!r}."
    )


def _measure_from(spec: Mapping[str, Any]) -> Measure:
    cls = spec["class"]
    if cls == "FMeasure":
        return FMeasure(beta=float(spec["beta"]), pos_label=spec["pos_label"])
    if cls == "Precision":
        return Precision(pos_label=spec["pos_label"])
    if cls == "Recall":
        return Recall(pos_label=spec["pos_label"])
    if cls == "CostMatrixLoss":
        return CostMatrixLoss(np.asarray(spec["cost_matrix"]), labels=spec["labels"])
    if cls == "DCG":
        return DCG(k=spec["k"])  # type: ignore[return-value]
    if cls == "ERR":
        return ERR(k=spec["k"], max_grade=spec["max_grade"])  # type: ignore[return-value]
    simple: dict[str, type[Measure]] = {
        "ErrorRate": ErrorRate,
        "Accuracy": Accuracy,
        "SquaredError": SquaredError,
        "AbsoluteError": AbsoluteError,
    }
    if cls not in simple:
        raise StoreError(f"store: unknown measure class {cls!r} in the plan.")
    return simple[cls]()


def _coerce_label(value: Any, label_space: Sequence[Any] | None, name: str) -> Any:
    """A label given loosely (e.g. ``"1"`` from a command line) in the label space's type."""
    if label_space is None:
        return value
    v = _py(value)
    if label_space and isinstance(label_space[0], int) and isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            pass
    elif label_space and isinstance(label_space[0], str) and not isinstance(v, str):
        v = str(v)
    if v not in label_space:
        raise LabelSpaceError(f"{name}: {value!r} is not in the label space {list(label_space)}.")
    return v


def _fingerprint(
    ids: NDArray[Any],
    predictions: Sequence[NDArray[np.float64]],
    costs: NDArray[Any] | None,
    ranking: Sequence[tuple[NDArray[np.int64], str | None]] | None = None,
) -> str:
    """SHA-256 over the pool ids, every model's prediction array and the costs (and, for a
    ranked pool, every model's query offsets and item ids)."""
    h = hashlib.sha256()
    if ids.dtype.kind == "i":
        h.update(b"activeeval-pool-v1\x00int64 ids\x00")
        h.update(np.ascontiguousarray(ids, dtype="<i8").tobytes())
    else:
        h.update(b"activeeval-pool-v1\x00str ids\x00")
        h.update(json.dumps(ids.tolist(), separators=(",", ":")).encode())
    for j, arr in enumerate(predictions):
        h.update(f"\x00model {j} {arr.shape}\x00".encode())
        h.update(_f64(arr))
    h.update(b"\x00costs\x00")
    h.update(b"none" if costs is None else _f64(costs))
    for j, (offsets, items) in enumerate(ranking or ()):
        h.update(f"\x00ranking {j}\x00".encode())
        h.update(np.ascontiguousarray(offsets, dtype="<i8").tobytes())
        h.update(b"\x00items\x00" + (b"none" if items is None else items.encode()))
    return h.hexdigest()


def _int_keys(cells: pd.Series) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Integer ids from cells holding ints, integral floats or integer text — exactly, also
    beyond 2^53 (integer text never goes through float) — and which cells held one."""
    out = np.full(len(cells), -1, dtype=np.int64)
    ok = np.zeros(len(cells), dtype=bool)
    if cells.dtype.kind in "iu" and not cells.isna().any():
        return cells.to_numpy(dtype=np.int64), np.ones(len(cells), dtype=bool)
    if cells.dtype.kind == "b":
        return out, ok
    text = cells.astype(str).str.strip()
    digits = text.str.fullmatch(r"[+-]?\d+").fillna(False).to_numpy(dtype=bool)
    if digits.any():
        exact = pd.to_numeric(text[digits], errors="coerce").to_numpy()
        if exact.dtype.kind == "i":  # int64 held every one of them
            out[digits], ok[digits] = exact, True
        else:  # some beyond int64: those are no item of an int64 pool; the others exactly
            for i in np.flatnonzero(digits).tolist():
                x = int(text.iloc[i])
                if -(2**63) <= x < 2**63:
                    out[i], ok[i] = x, True
    rest = ~digits
    if rest.any():  # integral numbers written as floats ("2.0", Parquet float columns)
        num = pd.to_numeric(text[rest], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            fine = np.isfinite(num) & (np.floor(num) == num) & (np.abs(num) < 2.0**53)
        where = np.flatnonzero(rest)[fine]
        out[where], ok[where] = num[fine].astype(np.int64), True
    return out, ok


def _item_list(items: NDArray[Any]) -> list[Any]:
    """Item ids as plain ints or strings (what JSON and a labels file can hold)."""
    vals = [_py(v) for v in items.tolist()]
    if all(isinstance(v, str) for v in vals):
        blank = next((v for v in vals if v != v.strip() or not v), None)
        if blank is not None:
            raise RankingItemsError(
                f"items: item id {blank!r} is empty or has leading or trailing blanks, which a "
                "labels file cannot reproduce; strip the item ids first."
            )
        return vals
    if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        return vals
    raise RankingItemsError(
        f"items: a session stores item ids that are all integers or all strings; got "
        f"{vals[:5]}. Map the item ids to integers or strings first."
    )


def _prediction_array(pred: Predictive) -> tuple[str, NDArray[np.float64], list[Any] | None]:
    if isinstance(pred, Categorical):
        return "categorical", pred.proba, _canonical_labels(pred.labels, "labels")
    if isinstance(pred, Gaussian):
        return "gaussian", np.column_stack([pred.mean, pred.var]), None
    raise ShapeError(
        f"pools: a session stores Categorical (class probabilities) or Gaussian (mean, var) "
        f"predictions, got {type(pred).__name__}."
    )


def _predictive_from(kind: str, arr: NDArray[np.float64], labels: Sequence[Any] | None) -> Any:
    if kind == "categorical":
        return Categorical(arr, labels=np.asarray(labels))
    return Gaussian(arr[:, 0].copy(), arr[:, 1].copy())


def _draw_block(cdf: NDArray[np.float64], seed: int, block: int, size: int) -> NDArray[np.intp]:
    """Block ``block`` of the session's i.i.d. draws from q (inverse CDF, as
    :func:`~activeeval.sampling.draw`, pinned here: a stored session must not change when the
    library's sampler does)."""
    u = np.random.default_rng([seed, block]).random(size)
    idx = np.searchsorted(cdf, u, side="right")
    return np.minimum(idx, cdf.shape[0] - 1).astype(np.intp)


# ----------------------------------------------------------------------- the session
class Session:
    """A persistent labeling campaign on one SQLite file.

    Create one with :meth:`create`, reopen it (in this or any later process) with :meth:`open`.
    The loop is ``ids = s.next_batch(k)`` → label them → ``s.record({id: label, ...})``, until
    :meth:`next_batch` returns nothing; :meth:`estimate` (evaluation) or :meth:`compare`
    (comparison) may be called at any time, :meth:`progress` tells where the campaign stands.

    A session object holds the immutable plan in memory and reads all mutable state from the
    store inside each transaction, so any number of processes may work on one store at once.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._load()

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        pools: Any,
        measure: Measure | RankingMeasure | str,
        budget: float,
        *,
        method: str = "active",
        seed: int = 0,
        costs: ArrayLike | None = None,
        level: float = 0.95,
        pos_label: Any = None,
        labels: ArrayLike | None = None,
        ids: ArrayLike | None = None,
        beta: float | None = None,
        names: Sequence[str] | None = None,
        block_size: int = DEFAULT_BLOCK_SIZE,
        estimator: str = "assisted",
    ) -> Session:
        """Plan a campaign and write it to a new store at ``path``.

        Parameters
        ----------
        path : path-like
            The store file; must not exist yet. It is built under a temporary name and linked
            into place when complete, so a crash never leaves a half-created store.
        pools : predictive or list of predictives
            One model's predictions on the pool (an evaluation), or a list of two or more
            models' predictions on the same pool (a comparison): ``Categorical``, ``Gaussian``
            or an ``(m, K)`` array of class probabilities; or a ranker's ``GradedRelevance``
            over m queries (two, with item ids, for a comparison).
        measure : Measure or str
            ``"error_rate"``, ``"accuracy"``, ``"mse"``, ``"mae"``, ``"f1"``,
            ``"precision"``, ``"recall"``, or such a measure object (also ``CostMatrixLoss``);
            for a ranked pool ``"dcg"``, ``"err"``, ``DCG(k)`` or ``ERR(k, max_grade)``.
        budget : float
            Labels to buy, or total cost when ``costs`` are given.
        method : str
            Evaluation: ``"active"`` (q*, Thm 4.1/4.2), ``"passive"``, ``"active_uniC"``,
            ``"active_lambda"``; comparison: also ``"active_0"``, ``"active_inf"``,
            ``"active_risk"`` (see :func:`~activeeval.comparison_distribution`).
            Ranked pools: one of :data:`~activeeval.RANKING_METHODS` (eq. 6.10, 6.11).
        seed : int
            Non-negative seed of the draw sequence, at most 2**63 − 1 (what the store holds).
        costs : array-like of shape (m,), optional
            Labeling cost per pool instance, strictly positive. A ranked pool defaults to
            its items' summed costs (:func:`~activeeval.ranking_query_costs`).
        level : float
            Confidence level of the reported intervals.
        pos_label : label, optional
            Positive class of F-measures, precision and recall (default: the largest label).
        labels : array-like, optional
            Class label of each probability column when ``pools`` are arrays (default
            ``0..K-1``).
        ids : array-like of shape (m,), optional
            Pool ids (all integers or all strings, unique); default ``0..m-1``.
        beta : float, optional
            β of ``measure="f1"`` (F_β); default 1.
        names : sequence of str, optional
            A name per model (default ``model 0``, ``model 1``, ...).
        block_size : int
            Draws generated per block of the draw sequence.
        estimator : {"assisted", "snis"}
            The estimator the session reports, as :func:`~activeeval.evaluate`'s: the
            model-assisted one (default; its finite-population form, logit interval for
            measures in [0, 1]) or the thesis's (eq. 3.31, Wald interval), for reproduction.
            Stored in the plan; :meth:`estimate` and :meth:`compare` can override it.

        Returns
        -------
        Session
        """
        target = Path(path)
        if target.exists():
            raise StoreError(
                f"{target}: already exists; open it with Session.open (activeeval session "
                "status) or choose another file name."
            )
        models = list(pools) if isinstance(pools, list | tuple) else [pools]
        if not models:
            raise ShapeError("pools: pass one model's predictions, or a list of two or more.")
        if isinstance(pools, list | tuple) and len(models) == 1:
            raise ShapeError(
                "pools: a comparison needs at least two models; pass a single model's "
                "predictions (not a one-element list) to evaluate it."
            )
        ranked = any(isinstance(mdl, GradedRelevance) for mdl in models)
        ranking_rows: list[tuple[NDArray[np.int64], str | None]] | None = None
        if ranked:
            rels = cls._ranking_models(models, labels, pos_label, beta)
            m = rels[0].n
            preds: list[Any] = list(rels)
            arrays = [r.proba for r in rels]
            kind_name = "categorical"  # per item: a distribution over the grades
            label_space: list[Any] | None = list(range(rels[0].n_grades))
            ranking_rows = [
                (r.offsets, None if r.items is None else json.dumps(_item_list(r.items)))
                for r in rels
            ]
            lam = check_costs(costs, m) if costs is not None else ranking_query_costs(*rels)
        else:
            preds, arrays, kind_name, label_space = cls._classic_models(models, labels)
            m = preds[0].n
            lam = check_costs(costs, m)
        pool_ids = _canonical_ids(ids, m)
        b = check_budget(budget, lam)
        lv = check_level(level)
        seed = check_seed(seed, "seed", maximum=MAX_STORED_SEED)
        if int(block_size) < 1:
            raise ShapeError(f"block_size: must be a positive integer, got {block_size!r}.")
        comparison = len(preds) > 1
        methods: tuple[str, ...] = RANKING_METHODS if ranked else SAMPLING_METHODS
        if comparison and not ranked:
            methods = SESSION_COMPARISON_METHODS
        method = check_option(method, methods, "method")
        estimator = check_option(estimator, ESTIMATORS, "estimator")
        if names is None:
            model_names = [f"model {j}" for j in range(len(preds))]
        else:
            model_names = [str(n) for n in names]
            if len(model_names) != len(preds):
                raise ShapeError(f"names: {len(model_names)} names for {len(preds)} models.")
        meas: Any
        if ranked:
            if not isinstance(measure, RankingMeasure | str):
                raise UnknownOptionError(
                    f"measure: a ranked pool is evaluated with 'dcg', 'err', DCG(k) or "
                    f"ERR(k, max_grade); got {measure!r}."
                )
            meas = _bind_for_labels(measure, *preds)
            q = ranking_distribution(
                preds if comparison else preds[0], meas, costs=lam, method=method
            )
            q = np.ascontiguousarray(check_distribution(q, "q", m), dtype=np.float64)
        else:
            if isinstance(measure, RankingMeasure):
                raise UnknownOptionError(
                    f"measure: {measure.name} scores ranked lists; pass a GradedRelevance pool "
                    "(a ranker's lists with grade probabilities)."
                )
            meas = cls._plan_measure(measure, preds, label_space, pos_label, beta)
            q = cls._plan_distribution(method, preds, meas, lam)
        fingerprint = _fingerprint(pool_ids, arrays, lam, ranking_rows)
        max_draws = check_max_draws(None, b, lam)
        spec = _measure_spec(meas)
        session_id = uuid.uuid4().hex
        created = _now()
        plan_row = (
            "comparison" if comparison else "evaluation",
            meas.name,
            json.dumps(spec),
            float(meas.beta) if isinstance(meas, FMeasure) else None,
            json.dumps(_py(getattr(meas, "pos_label", None))),
            method,
            b,
            int(seed),
            lv,
            m,
            len(preds),
            kind_name,
            None if label_space is None else json.dumps(label_space),
            fingerprint,
            _f64(q),
            int(block_size),
            max_draws,
            DRAW_RULE,
            created,
        )
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
                    for stmt in (_SCHEMA_V1 + ";" + _SCHEMA_V2).split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                    conn.executemany(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        [
                            ("schema_version", str(SCHEMA_VERSION)),
                            ("application", "activeeval.session"),
                            ("session_id", session_id),
                            ("created_at", created),
                            ("created_with", f"activeeval {__version__}"),
                            ("estimator", estimator),
                        ],
                    )
                    conn.execute(
                        "INSERT INTO plan (singleton, kind, measure, measure_spec, beta, "
                        "pos_label, method, budget, seed, level, pool_size, n_models, "
                        "predictive_kind, label_space, fingerprint, q, block_size, max_draws, "
                        "draw_rule, created_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                        "?, ?, ?, ?, ?, ?, ?)",
                        plan_row,
                    )
                    conn.executemany(
                        "INSERT INTO models (model, name, n_columns, predictions) "
                        "VALUES (?, ?, ?, ?)",
                        [
                            (j, model_names[j], arr.shape[1], _f64(arr))
                            for j, arr in enumerate(arrays)
                        ],
                    )
                    if ranking_rows is not None:
                        conn.executemany(
                            "INSERT INTO ranking (model, offsets, items) VALUES (?, ?, ?)",
                            [
                                (j, np.ascontiguousarray(off, dtype="<i8").tobytes(), it)
                                for j, (off, it) in enumerate(ranking_rows)
                            ],
                        )
                    cost_col: list[Any] = [None] * m if lam is None else lam.tolist()
                    conn.executemany(
                        "INSERT INTO pool (position, id, cost) VALUES (?, ?, ?)",
                        zip(range(m), pool_ids.tolist(), cost_col, strict=True),
                    )
                    conn.execute("INSERT INTO state (singleton, cursor) VALUES (1, 0)")
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
        return cls.open(target)

    @staticmethod
    def _classic_models(
        models: list[Any], labels: ArrayLike | None
    ) -> tuple[list[Predictive], list[NDArray[np.float64]], str, list[Any] | None]:
        """Classifiers' or regressors' predictions: validated, on one pool, one kind and one
        label space."""
        preds: list[Predictive] = []
        for j, pool in enumerate(models):
            name = "pools" if len(models) == 1 else f"pools[{j}]"
            if labels is not None and not isinstance(pool, Predictive):
                pool = Categorical(pool, labels=labels, name=name)
            elif labels is not None and not (
                isinstance(pool, Categorical) and np.array_equal(pool.labels, np.asarray(labels))
            ):
                raise LabelSpaceError(
                    f"labels: {name} already carries its own labels; pass labels only with "
                    "probability arrays."
                )
            preds.append(as_predictive(pool, name))
        m = preds[0].n
        arrays: list[NDArray[np.float64]] = []
        kinds: set[str] = set()
        spaces: list[list[Any] | None] = []
        for j, pred in enumerate(preds):
            if pred.n != m:
                raise ShapeError(
                    f"pools[{j}]: covers {pred.n} instances, pools[0] covers {m}; all models "
                    "must be evaluated on the same pool."
                )
            kind, arr, space = _prediction_array(pred)
            kinds.add(kind)
            arrays.append(arr)
            spaces.append(space)
        if len(kinds) > 1:
            raise ShapeError("pools: cannot compare a classifier with a regressor.")
        if any(s != spaces[0] for s in spaces):
            raise LabelSpaceError(
                f"pools: the models have different class label spaces ({spaces[0]} vs "
                f"{next(s for s in spaces if s != spaces[0])}); give every model the same "
                "classes in the same order."
            )
        return preds, arrays, kinds.pop(), spaces[0]

    @staticmethod
    def _ranking_models(
        models: list[Any], labels: ArrayLike | None, pos_label: Any, beta: float | None
    ) -> list[GradedRelevance]:
        """Rankers' relevance models: one (an evaluation) or two on the same queries with item
        ids (a comparison labels the union of both lists, as :func:`~activeeval.compare`)."""
        for j, mdl in enumerate(models):
            if not isinstance(mdl, GradedRelevance):
                raise ShapeError(
                    f"pools[{j}]: is a {type(mdl).__name__}, but pools[0] is a ranked pool "
                    "(GradedRelevance); compare rankers with rankers."
                )
        for name, value in (("labels", labels), ("pos_label", pos_label), ("beta", beta)):
            if value is not None:
                raise UnknownOptionError(
                    f"{name}: does not apply to a ranked pool (grades are 0..G−1 and the "
                    "measure is dcg or err)."
                )
        if len(models) > 2:
            raise ShapeError(
                f"pools: ranking comparisons take exactly two rankers, got {len(models)}; "
                "compare them pairwise."
            )
        rels = list(_check_pair(models[0], models[1])) if len(models) == 2 else [models[0]]
        for j, r in enumerate(rels):
            if (r.lengths == 0).any():
                q0 = int(np.flatnonzero(r.lengths == 0)[0])
                raise ShapeError(
                    f"pools[{j}]: query {q0} lists no item, so it has no grade to record; drop "
                    "empty queries from a session's pool (their DCG and ERR are 0)."
                )
        return rels

    @staticmethod
    def _plan_measure(
        measure: Measure | str,
        preds: list[Predictive],
        label_space: list[Any] | None,
        pos_label: Any,
        beta: float | None,
    ) -> Measure:
        if pos_label is not None:
            pos_label = _coerce_label(pos_label, label_space, "pos_label")
        if isinstance(measure, str):
            key = check_option(
                measure,
                ("error_rate", "accuracy", "mse", "mae", "f1", "precision", "recall"),
                "measure",
            )
            if beta is not None and key != "f1":
                raise UnknownOptionError(f"beta: only the F-measure ('f1') has a β, not {key!r}.")
            meas = (
                FMeasure(beta=float(beta), pos_label=pos_label)
                if beta is not None
                else get_measure(key, pos_label=pos_label)
            )
        else:
            meas = get_measure(measure)
            if beta is not None:
                raise UnknownOptionError("beta: pass β inside the measure object.")
        if pos_label is not None and not isinstance(meas, FMeasure):
            raise UnknownOptionError(
                f"pos_label: {meas.name} has no positive class; pos_label applies to f1, "
                "precision and recall."
            )
        if meas.categorical != isinstance(preds[0], Categorical):
            what = "class probabilities" if meas.categorical else "a Gaussian (mean, var)"
            raise UnknownOptionError(
                f"measure: {meas.name} needs {what} predictions; got {type(preds[0]).__name__}."
            )
        bound = meas.bind(preds[0] if len(preds) == 1 else Mixture(preds))
        if isinstance(bound, FMeasure) and label_space is not None:
            # The store keeps labels as plain ints or strings; so must the positive class be.
            bound = replace(
                bound, pos_label=_coerce_label(bound.pos_label, label_space, "pos_label")
            )
        return bound

    @staticmethod
    def _plan_distribution(
        method: str, preds: list[Predictive], meas: Measure, lam: NDArray[np.float64] | None
    ) -> NDArray[np.float64]:
        m = preds[0].n
        if method == "active_lambda" and lam is None:
            raise UnknownOptionError("method: 'active_lambda' samples by cost and needs costs.")
        if len(preds) > 1:
            q = comparison_distribution(preds, meas, method=method, costs=lam)
        elif method == "passive":
            q = passive_distribution(m)
        elif method == "active_lambda":
            q = cost_distribution(lam)  # type: ignore[arg-type]
        else:
            q = optimal_distribution(preds[0], meas, costs=lam if method == "active" else None)
        return np.ascontiguousarray(check_distribution(q, "q", m), dtype=np.float64)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Session:
        """Open an existing store (resuming its campaign), migrating an older schema.

        Raises
        ------
        NotAStoreError
            The file does not exist or is not an activeeval session store.
        SchemaVersionError
            The store was written by a newer activeeval.
        StoreError
            The stored pool does not match its fingerprint (the file was altered).
        """
        target = Path(path)
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
            version = cls._inspect(target, conn)
            _configure(conn)
            if version < SCHEMA_VERSION:
                _with_retry(lambda: cls._migrate(conn, target, MIGRATIONS), target)
            return cls(target, conn)
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _inspect(path: Path, conn: sqlite3.Connection) -> int:
        """Schema version of the store, read without writing anything to the file."""
        not_store = (
            f"{path}: is not an activeeval session store (expected an SQLite file made by "
            "activeeval session init / Session.create)."
        )
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
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

    @staticmethod
    def _migrate(conn: sqlite3.Connection, path: Path, migrations: Mapping[int, Migration]) -> None:
        """Upgrade the store to :data:`SCHEMA_VERSION` in one transaction: every step or none."""
        with _transaction(conn, write=True):
            version = int(
                conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
            )
            while version < SCHEMA_VERSION:
                if version not in migrations:
                    raise SchemaVersionError(
                        f"{path}: no migration from store schema version {version} to "
                        f"{version + 1}."
                    )
                migrations[version](conn)
                version += 1
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),)
                )

    def _load(self) -> None:
        """Read the immutable plan, pool and predictions, and check the fingerprint."""

        def read() -> tuple[Any, ...]:
            with _transaction(self._conn, write=False) as c:
                meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
                plan = c.execute(
                    "SELECT kind, measure, measure_spec, beta, pos_label, method, budget, seed, "
                    "level, pool_size, n_models, predictive_kind, label_space, fingerprint, q, "
                    "block_size, max_draws, draw_rule, created_at FROM plan"
                ).fetchone()
                models = c.execute(
                    "SELECT name, n_columns, predictions FROM models ORDER BY model"
                ).fetchall()
                pool = c.execute("SELECT id, cost FROM pool ORDER BY position").fetchall()
                ranking = c.execute("SELECT offsets, items FROM ranking ORDER BY model").fetchall()
            return meta, plan, models, pool, ranking

        try:
            meta, plan, models, pool, ranking = _with_retry(read, self.path)
        except sqlite3.DatabaseError as exc:
            raise NotAStoreError(f"{self.path}: the store is damaged ({exc}).") from exc
        if plan is None:
            raise NotAStoreError(f"{self.path}: the store has no plan; it is not a session.")
        (
            kind,
            measure_name,
            spec,
            beta,
            pos_label,
            method,
            budget,
            seed,
            level,
            m,
            n_models,
            pkind,
            space,
            fingerprint,
            qblob,
            block_size,
            max_draws,
            draw_rule,
            created,
        ) = plan
        label_space = None if space is None else tuple(json.loads(space))
        ids_list = [r[0] for r in pool]
        if all(isinstance(v, int) for v in ids_list):
            ids = np.array(ids_list, dtype=np.int64)
        else:
            ids = np.array([str(v) for v in ids_list], dtype=object)
        costs = None if pool[0][1] is None else np.array([r[1] for r in pool], dtype=np.float64)
        structure = [(np.frombuffer(off, dtype="<i8").astype(np.int64), it) for off, it in ranking]
        if ranking and len(ranking) != len(models):
            raise StoreError(f"{self.path}: the ranking table does not cover every model.")
        rows = [int(off[-1]) for off, _ in structure if off.size] if ranking else [m] * len(models)
        try:
            arrays = [_from_f64(blob, (r, k)) for (_, k, blob), r in zip(models, rows, strict=True)]
        except ValueError as exc:
            raise StoreError(
                f"{self.path}: the stored predictions do not fit the pool ({exc}); the file was "
                "altered outside activeeval."
            ) from exc
        if _fingerprint(ids, arrays, costs, structure or None) != fingerprint:
            raise StoreError(
                f"{self.path}: the stored pool does not match its fingerprint; the file was "
                "altered outside activeeval."
            )
        self.ids = ids
        self.costs = costs
        self.q: NDArray[np.float64] = _from_f64(qblob, (m,))
        self._cdf = np.cumsum(self.q)
        self._cdf /= self._cdf[-1]
        self._index = pd.Index(ids)
        spec_dict = json.loads(spec)
        meas: Any = _measure_from(spec_dict)
        self._grade_keys: NDArray[Any] | None = None
        self._grade_offsets: NDArray[np.int64] | None = None
        if ranking:
            rels = [
                GradedRelevance(a, off, None if it is None else np.array(json.loads(it)))
                for a, (off, it) in zip(arrays, structure, strict=True)
            ]
            self.predictives: list[Any] = list(rels)
            if len(rels) == 1:
                meas = meas.bind(rels[0])
                self._grade_offsets = rels[0].offsets
                self._grade_keys = rels[0].positions if rels[0].items is None else rels[0].items
            else:
                meas = _bind_pair(meas, rels[0], rels[1])
                self._grade_keys, self._grade_offsets = ranking_union(rels[0], rels[1])
        else:
            self.predictives = [_predictive_from(pkind, a, label_space) for a in arrays]
        self.measure: Any = meas
        self.plan = SessionPlan(
            session_id=meta["session_id"],
            kind=kind,
            measure=measure_name,
            measure_spec=spec_dict,
            pos_label=json.loads(pos_label) if pos_label is not None else None,
            beta=beta,
            method=method,
            budget=float(budget),
            seed=int(seed),
            level=float(level),
            pool_size=int(m),
            n_models=int(n_models),
            model_names=tuple(r[0] for r in models),
            predictive_kind=pkind,
            label_space=label_space,
            cost_sensitive=costs is not None,
            fingerprint=fingerprint,
            block_size=int(block_size),
            max_draws=int(max_draws),
            draw_rule=draw_rule,
            created_at=created,
            schema_version=int(meta["schema_version"]),
            ranking=bool(ranking),
            estimator=meta.get("estimator", "snis"),
        )
        self._pw = np.full(m, 1.0 / m)  # the test distribution: uniform over the pool
        self._moments: Any = None  # a ranked pool's control-variate moments, when first needed
        self._price = np.ones(m) if costs is None else costs

    def close(self) -> None:
        """Close the store (the campaign stays on disk; reopen it with :meth:`open`)."""
        self._conn.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        p = self.plan
        return (
            f"Session({str(self.path)!r}, {p.kind} of {p.measure}, method={p.method!r}, "
            f"budget={p.budget:g}, models={p.n_models}, pool={p.pool_size})"
        )

    @property
    def session_id(self) -> str:
        """The session's random identifier."""
        return self.plan.session_id

    # ------------------------------------------------------------------ hand-outs
    def _write(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        def attempt() -> _T:
            with _transaction(self._conn, write=True) as c:
                return body(c)

        return _with_retry(attempt, self.path)

    def _read(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        def attempt() -> _T:
            with _transaction(self._conn, write=False) as c:
                return body(c)

        return _with_retry(attempt, self.path)

    @staticmethod
    def _pending(c: sqlite3.Connection) -> list[int]:
        rows = c.execute(
            "SELECT h.position FROM handouts h LEFT JOIN labels l ON l.position = h.position "
            "WHERE l.position IS NULL ORDER BY h.seq"
        ).fetchall()
        return [r[0] for r in rows]

    def next_batch(self, k: int) -> list[Any]:
        """Ids to label next: at most ``k``, in draw order.

        Ids handed out earlier and not labeled yet come first (so calling it again before
        recording returns the same ids — it is idempotent), then new ones from the draw
        sequence: repeats of handed-out instances are skipped (a repeated draw is free), and
        the walk stops for good at the first new instance whose label the budget minus
        everything handed out cannot pay. An empty list means nothing is left to hand out
        and nothing is pending.

        Parameters
        ----------
        k : int
            Maximum number of ids to return, ≥ 1.

        Returns
        -------
        list
            Pool ids (as given at creation), never one already labeled.
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ShapeError(f"k: must be a positive integer, got {k!r}.")
        positions = self._write(lambda c: self._hand_out(c, int(k)))
        return [_py(v) for v in self.ids[np.asarray(positions, dtype=np.intp)].tolist()]

    def items_to_grade(self, ids: Sequence[Any]) -> pd.DataFrame:
        """A ranked pool's grading sheet for the queries ``ids`` (e.g. from :meth:`next_batch`):
        one row ``id, item`` per item to grade, in the stored order (the ranker's list; for a
        comparison both lists' union, :func:`~activeeval.ranking_union`), and an empty
        ``grade`` column to fill in and :meth:`record`. Items are the item ids, or the 0-based
        rank when the ranker has none."""
        if not self.plan.ranking:
            raise ShapeError(
                "items_to_grade: this session's pool is not ranked; label the ids themselves."
            )
        keys, offsets = self._grade_keys, self._grade_offsets
        assert keys is not None and offsets is not None
        pos = self._positions(pd.Series(list(ids), dtype=object), "ids", "entry")
        lens = offsets[pos + 1] - offsets[pos]
        ends = np.cumsum(lens)
        rows = np.repeat(offsets[pos], lens) + np.arange(int(ends[-1]) if lens.size else 0)
        rows -= np.repeat(ends - lens, lens)
        return pd.DataFrame(
            {
                "id": pd.Series(
                    [_py(v) for v in self.ids[np.repeat(pos, lens)].tolist()], dtype=object
                ),
                "item": pd.Series([_py(v) for v in keys[rows].tolist()], dtype=object),
                "grade": pd.Series([None] * rows.shape[0], dtype=object),
            }
        )

    def _hand_out(self, c: sqlite3.Connection, k: int) -> list[int]:
        pending = self._pending(c)
        if len(pending) >= k:
            return pending[:k]
        fresh = self._walk(c, k - len(pending))
        return pending + fresh

    def _walk(self, c: sqlite3.Connection, need: int) -> list[int]:
        """Extend the campaign by up to ``need`` new instances: Algorithm 2's walk
        (:func:`~activeeval.acquisition._walk_block`) over the stored draws from the cursor on,
        materializing and persisting a block of draws whenever the walk needs more."""
        cursor, finished = c.execute("SELECT cursor, finished FROM state").fetchone()
        if finished is not None:
            return []
        m, price, plan = self.plan.pool_size, self._price, self.plan
        handed = np.array([r[0] for r in c.execute("SELECT position FROM handouts")], np.intp)
        in_campaign = np.zeros(m, dtype=bool)
        in_campaign[handed] = True
        room = _budget_room(plan.budget, float(price[handed].sum()))
        support = self.q > 0
        left = int(support.sum()) - int(in_campaign[support].sum())
        n_mat = int(c.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM draws").fetchone()[0])
        tail = np.array(
            [
                r[0]
                for r in c.execute(
                    "SELECT position FROM draws WHERE seq >= ? ORDER BY seq", (cursor,)
                )
            ],
            dtype=np.intp,
        )
        batch = int(c.execute("SELECT COALESCE(MAX(batch) + 1, 0) FROM handouts").fetchone()[0])
        new_pos: list[NDArray[np.intp]] = []
        new_seq: list[NDArray[np.intp]] = []
        while True:
            step = _walk_block(
                tail, in_campaign, price, room, support=support, left=left,
                draws_left=plan.max_draws - cursor, need=need,
            )  # fmt: skip
            if step.stop is None and tail.size == 0:  # the walk goes on: the next block
                tail = _draw_block(self._cdf, plan.seed, n_mat // plan.block_size, plan.block_size)
                c.executemany(
                    "INSERT INTO draws (seq, position, q) VALUES (?, ?, ?)",
                    zip(
                        range(n_mat, n_mat + tail.shape[0]),
                        tail.tolist(),
                        self.q[tail].tolist(),
                        strict=True,
                    ),
                )
                n_mat += tail.shape[0]
                continue
            new_pos.append(tail[step.bought])
            new_seq.append(cursor + step.bought)
            in_campaign[tail[step.bought]] = True
            room -= step.cost
            need -= step.bought.shape[0]
            left = step.left
            cursor += step.consumed
            tail = tail[step.consumed :]
            if step.stop is not None:
                # A stop at `need` is no finish: the next hand-out resumes at the cursor.
                finished = None if step.stop == "need" else step.stop
                break
        pos = np.concatenate(new_pos) if new_pos else np.empty(0, np.intp)
        seq = np.concatenate(new_seq) if new_seq else np.empty(0, np.intp)
        now = _now()
        c.executemany(
            "INSERT INTO handouts (position, seq, batch, handed_out_at) VALUES (?, ?, ?, ?)",
            ((p, s, batch, now) for p, s in zip(pos.tolist(), seq.tolist(), strict=True)),
        )
        c.execute("UPDATE state SET cursor = ?, finished = ?", (cursor, finished))
        return [int(p) for p in pos.tolist()]

    # --------------------------------------------------------------------- labels
    def _positions(
        self, ids: pd.Series, source: str, row_label: str, column: str = "id"
    ) -> NDArray[np.intp]:
        """Pool position of every id (vectorised); unknown ids are refused naming the row."""
        ok = np.ones(len(ids), dtype=bool)
        keys: Any
        if self.ids.dtype.kind == "i":
            num = ids if ids.dtype.kind in "iu" else pd.to_numeric(ids, errors="coerce")
            if num.dtype.kind in "iu":
                keys = num.to_numpy(dtype=np.int64)
            else:  # some ids are not integers
                vals = num.to_numpy(dtype=float, na_value=np.nan)
                ok = np.isfinite(vals)
                vals = np.where(ok, vals, -1.0)
                ok &= np.floor(vals) == vals
                keys = vals.astype(np.int64)
        else:
            keys = ids.astype(str).str.strip().to_numpy(dtype=object)
        pos = np.asarray(self._index.get_indexer(keys), dtype=np.intp)
        bad = (~ok) | (pos < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            sample = ", ".join(repr(_py(v)) for v in self.ids[:3].tolist())
            raise UnknownIdError(
                f"{source}: {row_label} {ids.index[i]}, column '{column}': id "
                f"{_py(ids.iloc[i])!r} is not in this session's pool ({self.plan.pool_size} ids, "
                f"e.g. {sample}; {int(bad.sum())} unknown ids in all). Is it a labels file for "
                "another session?"
            )
        return pos

    def _label_values(self, labels: pd.Series, source: str, row_label: str) -> list[Any]:
        """Labels in the session's label type; outside the label space they are refused."""
        space = self.plan.label_space
        raw = labels  # numbers parse with surrounding blanks; string labels must match exactly
        missing = raw.isna().to_numpy() | (raw == "").to_numpy()
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise LabelSpaceError(
                f"{source}: {row_label} {labels.index[i]}, column 'label': the label is empty; "
                "every row needs a label."
            )
        if space is None:  # regression: finite numbers
            num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            bad = ~np.isfinite(num)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise LabelSpaceError(
                    f"{source}: {row_label} {labels.index[i]}, column 'label': "
                    f"{_py(labels.iloc[i])!r} is not a finite number (a regression label)."
                )
            return [float(v) for v in num.tolist()]
        if isinstance(space[0], int):
            num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            finite = np.isfinite(num)
            ints = np.where(finite, num, 0.0)
            ok = finite & (np.floor(ints) == ints)
            vals: Any = ints.astype(np.int64)
        else:
            vals = raw.astype(str).to_numpy(dtype=object)
            ok = np.ones(len(raw), dtype=bool)
        ok &= pd.Index(list(space)).get_indexer(vals) >= 0
        _refuse_cells(ok, source, row_label, labels, "label", f"in the label space {list(space)}")
        return [_py(v) for v in vals.tolist()]

    def _label_input(self, labels: Any, source: str) -> pd.DataFrame:
        if self.plan.ranking:
            return self._grade_input(labels, source)
        if isinstance(labels, pd.DataFrame):
            for col in ("id", "label"):
                if col not in labels.columns:
                    raise ShapeError(
                        f"{source}: no column '{col}' (columns: "
                        f"{', '.join(map(str, labels.columns))}); a labels table has columns "
                        "id,label."
                    )
            cols = ["id", "label"] + (["session_id"] if "session_id" in labels.columns else [])
            return labels[cols]
        if isinstance(labels, Mapping):
            return pd.DataFrame(
                {
                    "id": pd.Series(list(labels.keys()), dtype=object),
                    "label": pd.Series(list(labels.values()), dtype=object),
                }
            )
        raise ShapeError(
            f"{source}: expected a mapping id → label or a DataFrame with columns id,label; got "
            f"{type(labels).__name__}."
        )

    def _grade_input(self, labels: Any, source: str) -> pd.DataFrame:
        """A ranked pool's labels as rows id,item,grade (a mapping id → the grades of the
        query's items in their order is expanded to such rows)."""
        assert self._grade_keys is not None and self._grade_offsets is not None
        if isinstance(labels, pd.DataFrame):
            for col in ("id", "item", "grade"):
                if col not in labels.columns:
                    raise ShapeError(
                        f"{source}: no column '{col}' (columns: "
                        f"{', '.join(map(str, labels.columns))}); a ranked pool's labels table "
                        "has columns id,item,grade (one row per item of each labeled query)."
                    )
            extra = ["session_id"] if "session_id" in labels.columns else []
            return labels[["id", "item", "grade", *extra]]
        if not isinstance(labels, Mapping):
            raise ShapeError(
                f"{source}: expected a mapping query id → grades or a DataFrame with columns "
                f"id,item,grade; got {type(labels).__name__}."
            )
        ids = pd.Series(list(labels.keys()), dtype=object)
        pos = self._positions(ids, source, "entry") if len(ids) else np.empty(0, np.intp)
        rows_id, rows_item, rows_grade = [], [], []
        for i, (key, grades) in enumerate(labels.items()):
            lo, hi = int(self._grade_offsets[pos[i]]), int(self._grade_offsets[pos[i] + 1])
            g = list(np.ravel(np.asarray(grades, dtype=object)))
            if len(g) != hi - lo:
                raise ShapeError(
                    f"{source}: query {key!r} has {hi - lo} items to grade, got {len(g)} grades; "
                    "give one grade per item, in the ranker's order (a comparison: the order "
                    "of ranking_union)."
                )
            rows_id += [key] * len(g)
            rows_item += [_py(v) for v in self._grade_keys[lo:hi].tolist()]
            rows_grade += g
        frame = pd.DataFrame(
            {
                "id": pd.Series(rows_id, dtype=object),
                "item": pd.Series(rows_item, dtype=object),
                "grade": pd.Series(rows_grade, dtype=object),
            }
        )
        frame.index = pd.Index([repr(_py(k)) for k in rows_id], dtype=object)  # for messages
        return frame

    def _grade_values(
        self, frame: pd.DataFrame, source: str, row_label: str
    ) -> tuple[NDArray[np.intp], list[str]]:
        """Rows id,item,grade → one label per query: the JSON list of its items' grades in
        the stored order. Every item of a query must be graded; an item given twice with
        different grades, an unknown item or a grade outside 0..G−1 is refused."""
        keys, offsets = self._grade_keys, self._grade_offsets
        assert keys is not None and offsets is not None
        pos = self._positions(frame["id"], source, row_label)
        n_grades = len(self.plan.label_space or ())
        cells = frame["grade"]
        g = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(g) & (np.floor(g) == g) & (g >= 0) & (g <= n_grades - 1)
        _refuse_cells(ok, source, row_label, cells, "grade", f"a grade 0, ..., {n_grades - 1}")
        item_cells = frame["item"]
        ikeys: Any
        if keys.dtype.kind in "iu":
            ikeys, fine = _int_keys(item_cells)
        else:
            fine = np.ones(len(frame), dtype=bool)
            ikeys = item_cells.astype(str).str.strip().to_numpy(dtype=object)
        queries = np.unique(pos)
        lens = offsets[queries + 1] - offsets[queries]
        ends = np.cumsum(lens)
        slot = np.arange(int(ends[-1]) if lens.size else 0) - np.repeat(ends - lens, lens)
        rows = np.repeat(offsets[queries], lens) + slot
        cand = keys[rows] if keys.dtype.kind in "iu" else keys[rows].astype(str).astype(object)
        index = pd.MultiIndex.from_arrays([np.repeat(queries, lens), cand])
        loc = np.asarray(index.get_indexer(pd.MultiIndex.from_arrays([pos, ikeys])), np.intp)
        bad = (loc < 0) | ~fine
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            q0 = int(pos[i])
            shown = ", ".join(
                repr(_py(v)) for v in keys[offsets[q0] : min(offsets[q0] + 3, offsets[q0 + 1])]
            )
            raise UnknownIdError(
                f"{source}: {row_label} {frame.index[i]}, column 'item': "
                f"{_py(item_cells.iloc[i])!r} is not an item of query "
                f"{_py(self.ids[q0])!r} (its items: {shown or 'none'}"
                f"{', ...' if offsets[q0 + 1] - offsets[q0] > 3 else ''})."
            )
        order = np.argsort(loc, kind="stable")
        same = loc[order][1:] == loc[order][:-1]
        clash = same & (g[order][1:] != g[order][:-1])
        if clash.any():
            j = int(np.flatnonzero(clash)[0])
            a, b = int(order[j]), int(order[j + 1])
            raise DuplicateIdError(
                f"{source}: item {_py(item_cells.iloc[a])!r} of query {_py(self.ids[pos[a]])!r} "
                f"appears on {row_label}s {frame.index[a]} and {frame.index[b]} with different "
                f"grades ({_py(cells.iloc[a])!r}, {_py(cells.iloc[b])!r}); keep one row per "
                "item."
            )
        grades = np.full(slot.shape[0], -1, dtype=np.int64)
        grades[loc] = g.astype(np.int64)
        missing = grades < 0
        if missing.any():
            j = int(np.flatnonzero(missing)[0])
            q0 = int(np.repeat(queries, lens)[j])
            n_miss = int(missing[np.repeat(queries, lens) == q0].sum())
            raise ShapeError(
                f"{source}: query {_py(self.ids[q0])!r} lacks the grade of item "
                f"{_py(cand[j])!r} ({n_miss} of its {offsets[q0 + 1] - offsets[q0]} items "
                "ungraded); a query is labeled with the grades of all its items, one row "
                "id,item,grade each."
            )
        per_query = np.split(grades, ends[:-1])
        return queries.astype(np.intp), [json.dumps(x.tolist()) for x in per_query]

    def record(
        self,
        labels: Mapping[Any, Any] | pd.DataFrame,
        annotator: str | None = None,
        overwrite: bool = False,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        progress: bool | None = None,
        source: str = "labels",
        row_label: str = "row",
    ) -> RecordSummary:
        """Store labels of handed-out ids.

        Everything is validated before anything is written, and invalid input leaves the
        store unchanged: ids not in the pool or never handed out by :meth:`next_batch`
        (:class:`~activeeval.UnknownIdError`), labels outside the label space
        (:class:`~activeeval.LabelSpaceError`), one id twice with different labels, and a
        ``session_id`` column naming another session
        (:class:`~activeeval.SessionMismatchError`). Recording a label identical to the stored
        one is a no-op, so a labels file can be recorded again safely; a *different* label is
        refused (:class:`~activeeval.LabelConflictError`, naming the id) unless
        ``overwrite=True``. Refused and accepted relabels are both written to the audit table.

        Labels are committed ``chunk_size`` rows per transaction: if the process dies, every
        committed chunk is kept (none half-written) and recording the same input again
        completes it.

        Parameters
        ----------
        labels : mapping or DataFrame
            ``{id: label}``, or a DataFrame with columns ``id``, ``label`` and optionally
            ``session_id`` (other columns are ignored). A ranked pool: a DataFrame with
            columns ``id``, ``item``, ``grade``, one row for every item of each query (item
            = the item id, or the 0-based rank when the ranker has no item ids), or
            ``{query_id: grades}`` in the list's order (a comparison: ``ranking_union``'s).
        annotator : str, optional
            Who labeled them; stored with each label.
        overwrite : bool
            Replace stored labels that differ.
        chunk_size : int
            Rows per transaction.
        progress : bool, optional
            Progress bar; by default shown only on a terminal.
        source, row_label : str
            How error messages name the input and its rows (the command line passes the file
            name and ``"line"``, with the DataFrame indexed by line number).

        Returns
        -------
        RecordSummary
        """
        if int(chunk_size) < 1:
            raise ShapeError(f"chunk_size: must be a positive integer, got {chunk_size!r}.")
        if self.plan.ranking and isinstance(labels, Mapping):
            row_label = "query"  # the expanded rows are named by their query id
        frame = self._label_input(labels, source)
        if "session_id" in frame.columns:
            sid = frame["session_id"].map(lambda v: str(v).strip() if pd.notna(v) else "")
            other = (sid != "") & (sid != self.session_id)
            if other.any():
                i = int(np.flatnonzero(other.to_numpy())[0])
                raise SessionMismatchError(
                    f"{source}: {row_label} {frame.index[i]}, column 'session_id': "
                    f"{sid.iloc[i]!r} is another session; this store is session "
                    f"{self.session_id}."
                )
        if frame.shape[0] == 0:
            return RecordSummary(0, 0, 0)
        if self.plan.ranking:
            pos, values = self._grade_values(frame, source, row_label)
        else:
            pos = self._positions(frame["id"], source, row_label)
            values = self._label_values(frame["label"], source, row_label)
            pos, values = self._dedupe(frame, pos, values, source, row_label)
        stored, handed = self._read(
            lambda c: (
                {
                    p: (lab, ann)
                    for p, lab, ann in c.execute("SELECT position, label, annotator FROM labels")
                },
                np.array([r[0] for r in c.execute("SELECT position FROM handouts")], np.intp),
            )
        )
        was_handed = np.zeros(self.plan.pool_size, dtype=bool)
        was_handed[handed] = True
        if not was_handed[pos].all():
            i = int(np.flatnonzero(~was_handed[pos])[0])
            raise UnknownIdError(
                f"{source}: id {_py(self.ids[pos[i]])!r} was never handed out for labeling "
                f"({int((~was_handed[pos]).sum())} such ids); record labels only for ids from "
                "next_batch (activeeval session next), so the draws stay those of the plan."
            )
        conflicts = [
            (p, v)
            for p, v in zip(pos.tolist(), values, strict=True)
            if p in stored and stored[p][0] != v
        ]
        if conflicts and not overwrite:
            self._audit_refused(conflicts, stored, annotator)
            p0, v0 = conflicts[0]
            raise LabelConflictError(
                f"{source}: id {_py(self.ids[p0])!r} is already labeled {stored[p0][0]!r}"
                f"{' by ' + stored[p0][1] if stored[p0][1] else ''}, not {v0!r} "
                f"({len(conflicts)} conflicting labels in all; nothing was recorded). Pass "
                "overwrite=True (--overwrite) to replace them; the attempt was audited."
            )
        todo = [
            (p, v)
            for p, v in zip(pos.tolist(), values, strict=True)
            if p not in stored or stored[p][0] != v
        ]
        n_unchanged = len(values) - len(todo)
        n_new = n_over = 0
        step = int(chunk_size)
        with tqdm(
            total=len(todo),
            unit="labels",
            disable=None if progress is None else not progress,
            leave=False,
        ) as bar:
            for start in range(0, len(todo), step):
                chunk = todo[start : start + step]

                def write(c: sqlite3.Connection, ch: list[tuple[int, Any]] = chunk) -> Any:
                    return self._write_chunk(c, ch, annotator, overwrite, source)

                a, b = self._write(write)
                n_new += a
                n_over += b
                bar.update(len(chunk))
        return RecordSummary(n_new, n_unchanged, n_over)

    def _dedupe(
        self,
        frame: pd.DataFrame,
        pos: NDArray[np.intp],
        values: list[Any],
        source: str,
        row_label: str,
    ) -> tuple[NDArray[np.intp], list[Any]]:
        """One row per id; an id given twice with different labels is refused."""
        dup = pd.Index(pos).duplicated()
        if not dup.any():
            return pos, values
        first: dict[int, int] = {}
        for i, p in enumerate(pos.tolist()):
            j = first.setdefault(p, i)
            if values[j] != values[i]:
                raise DuplicateIdError(
                    f"{source}: id {_py(self.ids[p])!r} appears on {row_label}s "
                    f"{frame.index[j]} and {frame.index[i]} with different labels "
                    f"({values[j]!r}, {values[i]!r}); keep one row per id."
                )
        keep = ~dup
        return pos[keep], [v for v, k in zip(values, keep, strict=True) if k]

    def _audit_refused(
        self, conflicts: list[tuple[int, Any]], stored: Mapping[int, Any], annotator: str | None
    ) -> None:
        now = _now()
        rows = [(now, "refused", p, stored[p][0], v, stored[p][1], annotator) for p, v in conflicts]
        self._write(
            lambda c: c.executemany(
                "INSERT INTO audit (at, action, position, old_label, new_label, old_annotator, "
                "annotator) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        )

    def _write_chunk(
        self,
        c: sqlite3.Connection,
        chunk: list[tuple[int, Any]],
        annotator: str | None,
        overwrite: bool,
        source: str,
    ) -> tuple[int, int]:
        positions = json.dumps([p for p, _ in chunk])
        current = {
            p: (lab, ann)
            for p, lab, ann in c.execute(
                "SELECT position, label, annotator FROM labels WHERE position IN "
                "(SELECT value FROM json_each(?))",
                (positions,),
            )
        }
        now = _now()
        new = [(p, v, annotator, now) for p, v in chunk if p not in current]
        changed = [(p, v) for p, v in chunk if p in current and current[p][0] != v]
        if changed and not overwrite:  # written by another process since validation
            p0, v0 = changed[0]
            raise LabelConflictError(
                f"{source}: id {_py(self.ids[p0])!r} was labeled {current[p0][0]!r} by another "
                f"process while recording, not {v0!r}; earlier chunks were recorded. Pass "
                "overwrite=True (--overwrite) to replace it."
            )
        c.executemany(
            "INSERT INTO labels (position, label, annotator, recorded_at) VALUES (?, ?, ?, ?)",
            new,
        )
        if changed:
            c.executemany(
                "INSERT INTO audit (at, action, position, old_label, new_label, old_annotator, "
                "annotator) VALUES (?, 'overwrite', ?, ?, ?, ?, ?)",
                [(now, p, current[p][0], v, current[p][1], annotator) for p, v in changed],
            )
            c.executemany(
                "UPDATE labels SET label = ?, annotator = ?, recorded_at = ? WHERE position = ?",
                [(v, annotator, now, p) for p, v in changed],
            )
        return len(new), len(changed)

    # ----------------------------------------------------------------- estimation
    def _snapshot(
        self, c: sqlite3.Connection
    ) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.bool_], list[Any]]:
        """Campaign draws, their q, and the labels by pool position, from one transaction."""
        cursor = int(c.execute("SELECT cursor FROM state").fetchone()[0])
        rows = c.execute(
            "SELECT position, q FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
        ).fetchall()
        draws = np.array([r[0] for r in rows], dtype=np.intp)
        q = np.array([r[1] for r in rows], dtype=np.float64)
        labeled = np.zeros(self.plan.pool_size, dtype=bool)
        by_pos: list[Any] = [None] * self.plan.pool_size
        for p, lab in c.execute("SELECT position, label FROM labels"):
            labeled[p] = True
            by_pos[p] = lab
        return draws, q, labeled, by_pos

    def _labeled_prefix(self, draws: NDArray[np.intp], labeled: NDArray[np.bool_]) -> int:
        """Length of the longest prefix of the draws whose instances are all labeled."""
        return _first_true_run(labeled[draws]) if draws.size else 0

    def _label_array(self, by_pos: list[Any], idx: NDArray[np.intp]) -> NDArray[Any]:
        if self.plan.ranking:  # one array of grades per draw (in the stored item order)
            parsed = {p: np.asarray(json.loads(by_pos[p]), np.int64) for p in set(idx.tolist())}
            out = np.empty(idx.shape[0], dtype=object)
            for j, p in enumerate(idx.tolist()):
                out[j] = parsed[p]
            return out
        vals = [by_pos[i] for i in idx.tolist()]
        if self.plan.label_space is None:
            return np.array(vals, dtype=np.float64)
        if self.plan.label_space and isinstance(self.plan.label_space[0], int):
            return np.array(vals, dtype=np.int64)
        return np.array(vals, dtype=self.predictives[0].labels.dtype)

    def _data(self) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[Any]]:
        """The labeled prefix: pool positions, each draw's q, the labels."""
        draws, q, labeled, by_pos = self._read(self._snapshot)
        n = self._labeled_prefix(draws, labeled)
        idx = draws[:n]
        return idx, q[:n], self._label_array(by_pos, idx)

    def estimate(
        self,
        model: int = 0,
        *,
        estimator: str | None = None,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
    ) -> SessionEstimate:
        """The performance estimate from the labels recorded so far.

        The estimate :func:`~activeeval.evaluate` reports for the same draws (bit for bit), on
        the longest *prefix* of the draw sequence whose instances are all labeled: by default
        the model-assisted estimator (:mod:`activeeval.estimators.assisted`) in its
        finite-population form — the distinct instances of a prefix of i.i.d. draws from q are a
        successive sample — with the logit interval for measures in [0, 1]; ``"snis"``: the thesis's
        eq. 3.31 with the sandwich standard error of Lemma 3.4, every draw weighted by its q;
        once every instance that can move the measure is labeled, the exact value. Taking a
        prefix keeps the argument behind the estimator valid while labels arrive out of
        order: the draws are i.i.d. from q, and the prefix ends at a point decided by the
        draws themselves and the order of labeling, so the estimate is that of an i.i.d.
        sample stopped at a stopping time — *provided* whether a handed-out instance is
        labeled yet does not depend on its label. If hard instances come back later, the
        prefix under-represents them (a review measured −0.06 on an error rate when 40% of
        the errors, and no correct instance, were still pending): estimate once the pending
        ids are in. Using every labeled draw instead would let which labels came back first
        decide which draws count, whatever the delays.

        Parameters
        ----------
        model : int
            For comparison sessions, which model to estimate (all models share the draws).
        estimator : {"assisted", "snis"}, optional
            Overrides the session's estimator (``plan.estimator``).
        features : array-like of shape (m, d), optional
            The pool's features, one row per instance in the pool's order at creation, for
            the model-assisted estimator's second control variate (as
            :func:`~activeeval.evaluate`'s ``features``); not stored.
        bandwidth : float
            The smoother's kernel bandwidth (as :func:`~activeeval.evaluate`'s).

        Returns
        -------
        SessionEstimate
            NaN values before the first label of the prefix.
        """
        if not 0 <= model < self.plan.n_models:
            raise ShapeError(f"model: must be in [0, {self.plan.n_models}), got {model}.")
        how = self._estimator(estimator)
        self._check_features(features, how, bandwidth)
        idx, _, y = self._data()
        return self._estimate_on(idx, y, model, how, features, bandwidth)

    def _check_features(self, features: ArrayLike | None, estimator: str, bandwidth: float) -> None:
        where = "ranking pools" if self.plan.ranking else ""
        if estimator == "snis" and not where:
            where = "estimator='snis'"
        _check_features(features, bandwidth, self.plan.pool_size, where)

    def _estimator(self, estimator: str | None) -> str:
        if estimator is None:
            return self.plan.estimator
        return check_option(estimator, ESTIMATORS, "estimator")

    def _estimate_on(
        self,
        idx: NDArray[np.intp],
        y: NDArray[Any],
        model: int,
        estimator: str,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
    ) -> SessionEstimate:
        lv = self.plan.level
        if idx.size == 0:
            nan = math.nan
            return SessionEstimate(nan, nan, (nan, nan), lv, 0, 0, self.measure.name, None)
        interval = "wald"
        if self.plan.ranking:  # as evaluate (one ranker) / compare (two) on a ranked pool
            values = self._query_values(idx, y)[model]
            pool = self._ranking_moments()[model] if estimator == "assisted" else None
            est = _ranking_estimate(
                self.measure, self.predictives[model], idx, values, self.q, self._pw, lv,
                estimator, pool,
            )  # fmt: skip
        else:
            pred = self.predictives[model]
            est, interval = _static_estimate(
                self.measure, pred, idx, y, self.q, self._pw, lv, estimator, features, bandwidth,
                census=_census(self.measure, pred, idx, y, self._pw, lv),
            )  # fmt: skip
        value, ci = _reported(est, lv, interval, self.measure)
        return SessionEstimate(
            estimate=value,
            stderr=est.stderr,
            ci=ci,
            level=lv,
            n_labels=est.n_labels,
            n_draws=est.n_draws,
            measure=est.measure,
            inference=est,
            interval=interval,
            value_range=self.measure.value_range,
        )

    def _ranking_moments(self) -> list[Any]:
        """Each ranker's control-variate pool moments (computed once per open session): its own
        grade model's for one ranker, the mixture of both for two (as evaluate / compare)."""
        if self._moments is None:
            rels = self.predictives
            self._moments = (
                _ranking_pair_pools(rels[0], rels[1], self.measure, self._pw)
                if len(rels) == 2
                else [_value_pool(ranking_expectation(rels[0], self.measure), self._pw)]
            )
        return list(self._moments)

    def _query_values(self, idx: NDArray[np.intp], y: NDArray[Any]) -> list[NDArray[np.float64]]:
        """Per-draw ranking values ℓ(r(x), y) of every ranker (eq. 6.9) from the stored
        grades (a comparison's in ranking_union order)."""
        lens = np.fromiter((a.shape[0] for a in y), dtype=np.int64, count=y.shape[0])
        offsets = np.zeros(lens.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.concatenate(list(y)) if y.shape[0] else np.empty(0, np.int64)
        if len(self.predictives) == 1:
            return [ranking_values(self.measure, flat, offsets)]
        a, b = ranking_pair_values(
            self.predictives[0], self.predictives[1], self.measure, idx, flat
        )
        return [a, b]

    def compare(
        self,
        *,
        estimator: str | None = None,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
    ) -> SessionComparison:
        """The comparison of the session's models from the labels recorded so far: what
        :func:`~activeeval.compare` reports for the same draws, on the labeled prefix of the
        draws (see :meth:`estimate`).

        Two models: Δ = G[f₀] − G[f₁] with the paired Wald test (eq. 3.21–3.24) — by default
        from the model-assisted estimator with each model's own predictive distribution as a
        control variate (:func:`~activeeval.estimators.assisted.assisted_paired_test`), ``"snis"``
        the thesis's paired test; k > 2: the multiple comparison (Holm), reporting the best model
        against the runner-up with its Holm-adjusted p-value. ``estimator`` overrides the
        session's (``plan.estimator``); ``features``, ``bandwidth`` as in :meth:`estimate`
        (:func:`~activeeval.compare`'s).
        """
        if self.plan.n_models < 2:
            raise ShapeError("compare: this session evaluates one model; use estimate() instead.")
        how = self._estimator(estimator)
        self._check_features(features, how, bandwidth)
        idx, _, y = self._data()
        return self._compare_on(idx, y, how, features, bandwidth)

    def _compare_on(
        self,
        idx: NDArray[np.intp],
        y: NDArray[Any],
        estimator: str,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
    ) -> SessionComparison:
        lv = self.plan.level
        k = self.plan.n_models
        if idx.size == 0:
            nan = math.nan
            return SessionComparison(
                nan, nan, nan, (nan, nan), 0, np.full(k, nan), lv, 0, 0, self.measure.name, None
            )
        if self.plan.ranking:  # two rankers, as compare on a ranked pool
            values = self._query_values(idx, y)
            pools = self._ranking_moments() if estimator == "assisted" else None
            c = _ranking_comparison(
                self.measure, idx, (values[0], values[1]), self.q, self._pw, lv, estimator, pools,
                census=True,
            )  # fmt: skip
            diff, se, pv, best, est, cmp = (
                c.difference, c.stderr, c.p_value, c.best, np.array(c.estimates), c,
            )  # fmt: skip
        else:
            diff, se, pv, best, est, cmp = _compare_sample(
                self.measure, self.predictives, y, idx, self.q, self._pw, 1.0, lv, estimator, True,
                features, bandwidth,
            )  # fmt: skip
        z = float(stats.norm.isf((1 - lv) / 2))
        nan_ci = (math.nan, math.nan)
        ci = nan_ci if math.isnan(diff) else (float(diff - z * se), float(diff + z * se))
        return SessionComparison(
            float(diff), float(se), float(pv), ci, int(best), np.asarray(est, dtype=float), lv,
            cmp.n_labels, cmp.n_draws, cmp.measure, cmp,
        )  # fmt: skip

    def trajectory(
        self,
        max_points: int = 60,
        *,
        estimator: str | None = None,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
    ) -> pd.DataFrame:
        """The estimate recomputed on growing labeled prefixes of the draws, for plots.

        Each point is a prefix that ends just before the first draw of a not-yet-counted
        instance (a stopping time of the draw sequence). Columns: ``n_labels``, ``cost``,
        ``n_draws``, ``estimate``, ``stderr``, ``low``, ``high`` — for comparisons the
        difference, its standard error and interval, plus ``p_value``. ``estimator`` overrides
        the session's; ``features``, ``bandwidth`` as in :meth:`estimate`.
        """
        how = self._estimator(estimator)
        self._check_features(features, how, bandwidth)
        idx, _, y = self._data()
        if idx.size == 0:
            return pd.DataFrame(
                columns=["n_labels", "cost", "n_draws", "estimate", "stderr", "low", "high"]
            )
        _, first = np.unique(idx, return_index=True)
        first = np.sort(first)
        ends = np.append(first[1:], idx.shape[0])  # prefix j holds the first j + 1 instances
        spent = np.cumsum(self._price[idx[first]])
        pick = np.unique(
            np.linspace(0, ends.shape[0] - 1, min(max_points, ends.shape[0])).round().astype(int)
        )

        def at(n: int) -> dict[str, float]:
            if self.plan.n_models == 1:
                e = self._estimate_on(idx[:n], y[:n], 0, how, features, bandwidth)
                return {"estimate": e.estimate, "stderr": e.stderr, "low": e.ci[0], "high": e.ci[1]}
            cm = self._compare_on(idx[:n], y[:n], how, features, bandwidth)
            return {"estimate": cm.difference, "stderr": cm.stderr, "low": cm.ci[0],
                    "high": cm.ci[1], "p_value": cm.p_value}  # fmt: skip

        ns = [int(ends[j]) for j in pick.tolist()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedEstimateWarning)
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            # With features, one kernel pass serves every point's smoother but the last.
            points = [at(n) for n in ns] if features is None else _batched_smoother(at, ns)
        rows = [
            {"n_labels": j + 1, "cost": float(spent[j]), "n_draws": n, **point}
            for j, n, point in zip(pick.tolist(), ns, points, strict=True)
        ]
        return pd.DataFrame(rows)

    # ------------------------------------------------------------------- reporting
    def progress(self) -> SessionProgress:
        """Labels and cost spent against the budget, draws, pending ids."""

        def read(c: sqlite3.Connection) -> tuple[Any, ...]:
            cursor, finished = c.execute("SELECT cursor, finished FROM state").fetchone()
            handed = np.array([r[0] for r in c.execute("SELECT position FROM handouts")], np.intp)
            labeled = np.array([r[0] for r in c.execute("SELECT position FROM labels")], np.intp)
            draws = np.array(
                [
                    r[0]
                    for r in c.execute(
                        "SELECT position FROM draws WHERE seq < ? ORDER BY seq", (cursor,)
                    )
                ],
                dtype=np.intp,
            )
            return cursor, finished, handed, labeled, draws

        cursor, finished, handed, labeled, draws = self._read(read)
        price = self._price
        spent = float(price[labeled].sum())
        committed = float(price[handed].sum())
        mask = np.zeros(self.plan.pool_size, dtype=bool)
        mask[labeled] = True
        if finished is None:
            # Finished in effect when no instance left to hand out is affordable.
            left = np.ones(self.plan.pool_size, dtype=bool)
            left[handed] = False
            left &= self.q > 0
            room = _budget_room(self.plan.budget, committed)
            if not left.any():
                finished = "pool"
            elif price[left].min() > room:
                finished = "budget"
        n_pending = int(handed.shape[0] - labeled.shape[0])
        return SessionProgress(
            n_labels=int(labeled.shape[0]),
            cost_spent=spent,
            committed=committed,
            budget=self.plan.budget,
            n_draws=int(cursor),
            n_handed_out=int(handed.shape[0]),
            n_pending=n_pending,
            n_estimation_draws=self._labeled_prefix(draws, mask),
            finished=finished is not None,
            complete=finished is not None and n_pending == 0,
            stop_reason=finished,
        )

    def labels_frame(self) -> pd.DataFrame:
        """Every recorded label with its hand-out and draw information, in hand-out order.

        Columns: ``id``, ``label``, ``annotator``, ``timestamp`` (UTC, ISO 8601), ``order``
        (1-based hand-out rank), ``batch``, ``first_draw`` (0-based index of the instance's
        first draw in the sequence), ``times_drawn`` (draws of it in the campaign so far),
        ``q`` (its sampling probability) and ``session_id``. A ranked pool has one row per
        item of each labeled query, with ``item`` and ``grade`` in place of ``label`` (the
        columns id,item,grade a ranked labels input takes).
        """

        def read(c: sqlite3.Connection) -> tuple[list[Any], list[int]]:
            rows = c.execute(
                "SELECT h.position, l.label, l.annotator, l.recorded_at, h.batch, h.seq, "
                "h.rank FROM (SELECT position, batch, seq, ROW_NUMBER() OVER (ORDER BY seq) "
                "AS rank FROM handouts) h JOIN labels l ON l.position = h.position ORDER BY h.seq"
            ).fetchall()
            cursor = int(c.execute("SELECT cursor FROM state").fetchone()[0])
            draws = [r[0] for r in c.execute("SELECT position FROM draws WHERE seq < ?", (cursor,))]
            return rows, draws

        rows, draws = self._read(read)
        counts = np.bincount(np.asarray(draws, dtype=np.intp), minlength=self.plan.pool_size)
        pos = np.array([r[0] for r in rows], dtype=np.intp)
        frame = pd.DataFrame(
            {
                "id": pd.Series([_py(v) for v in self.ids[pos].tolist()], dtype=object),
                "label": [r[1] for r in rows],
                "annotator": [r[2] for r in rows],
                "timestamp": [r[3] for r in rows],
                "order": [r[6] for r in rows],
                "batch": [r[4] for r in rows],
                "first_draw": [r[5] for r in rows],
                "times_drawn": counts[pos],
                "q": self.q[pos],
                "session_id": self.session_id,
            }
        )
        if not self.plan.ranking:
            return frame
        keys, offsets = self._grade_keys, self._grade_offsets
        assert keys is not None and offsets is not None
        grades = [json.loads(v) for v in frame.pop("label")]
        items = [[_py(k) for k in keys[offsets[p] : offsets[p + 1]].tolist()] for p in pos]
        frame.insert(1, "item", pd.Series(items, dtype=object))
        frame.insert(2, "grade", pd.Series(grades, dtype=object))
        frame = frame.explode(["item", "grade"], ignore_index=True)
        frame["grade"] = frame["grade"].astype(np.int64)
        return frame

    def audit_frame(self) -> pd.DataFrame:
        """The audit table: every refused or accepted relabel, oldest first."""
        rows = self._read(
            lambda c: c.execute(
                "SELECT at, action, position, old_label, new_label, old_annotator, annotator "
                "FROM audit ORDER BY event"
            ).fetchall()
        )
        frame = pd.DataFrame(
            rows,
            columns=[
                "at",
                "action",
                "position",
                "old_label",
                "new_label",
                "old_annotator",
                "annotator",
            ],
        )
        frame.insert(2, "id", [_py(v) for v in self.ids[frame.pop("position").to_numpy(int)]])
        return frame
