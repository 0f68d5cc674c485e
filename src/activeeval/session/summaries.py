"""A session's pool summaries: what its default estimate reads from the whole pool, made once
at ``init`` and stored (the ``summaries`` table, schema 8), so that ``status`` and
:meth:`Session.estimate <activeeval.Session.estimate>` cost O(labels)
(:mod:`activeeval.estimators.summary`; ``docs/design/lean-status.md``).

A summary is written for a session of one model or more of instances (not a ranked pool),
with or without a stopping rule, by either estimator (the thesis's reads of it only whether
the labels are a census), with a measure of per-instance losses (not the measures of
probabilities). A multi-class average stores instead each model's expected counts
(:class:`ClassSummary`).
Each is an ``.npz`` of its numbers and arrays: q's time summary, the domain's mass and
count, the control variates' pool means (over the domain for the estimate; each model's own
also over the pool as given, ``terms_mu``, for the anytime sequences, with their σ₀ grid,
``sigma0``: summaries stored before lack both, and a pair's rule was not served by one),
the tempered curve's subsample (each model's stored rows and decisions there, q and p).
What reads it
rebuilds the subsample's model from those rows exactly as the whole pool's is built, so the
estimate is the whole pool's bit for bit (tested); a store without one (made before schema
8, or of another kind) keeps reading its pool.
"""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import zipfile
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._chunks import row_chunks, uniform
from ..errors import StoreError
from ..predictive import restored_decision
from .blobs import (
    ArrayWriter,
    RowReader,
    StoredArray,
    _StoredCategorical,
    _StoredGaussian,
)
from .codec import _measure_from, _predictive_from
from .schema import StoreFile
from .stored import SessionPlan

__all__ = ["LeanModel", "cache_rows", "read_class_summary", "read_summary", "write_summaries"]

#: The layout of a stored summary; another is ignored (the estimate then reads the pool).
#: 2: q's power sums over the chunk with the exact part zeroed (1: compacted first), as
#: :class:`~activeeval.sampling.TimeSummary` sums them now.
VERSION = 2
#: A summary is written only where its subsample's rows take at most this many bytes (k
#: models of C classes with k · (C + 3) ≤ 83: one of 80 classes, two of 38, three of 24):
#: beyond, a status would read and parse a summary of hundreds of MB, and above about 2,500
#: classes it would not fit one SQLite value.
SAMPLE_BYTES = 32 << 20


#: The ``model`` under which a comparison's summary (of its two models or more) is stored (no
#: model's index).
PAIR = (1 << 31) - 1
#: The ``model`` under which a multi-class average's counts (:class:`ClassSummary`, of one
#: model or more) are stored: a key of their own, which a release before them does not read
#: (it reads its pool).
CLASSES = PAIR - 1


def write_summaries(conn: sqlite3.Connection, q: NDArray[np.float64]) -> None:
    """The summary of the new store's model — or, for two models or more, of all of them
    together (stored under model :data:`PAIR`) — for its q (phase 0), inside the build's
    transaction, read back from the stored rows a chunk at a time; nothing for a store the
    summary does not serve (module docstring)."""
    from ..estimators.report import ClasswisePool, PlainPool, pool_class, with_sigma0
    from ..estimators.summary import summarize, summarize_pair
    from ..estimators.tempered import MAX_POOL

    spec, m, n_models, pkind, space = conn.execute(
        "SELECT measure_spec, pool_size, n_models, predictive_kind, label_space FROM plan"
    ).fetchone()
    ranked = conn.execute("SELECT COUNT(*) FROM ranking").fetchone()[0]
    (estimator,) = conn.execute("SELECT value FROM meta WHERE key = 'estimator'").fetchone()
    widths = [w for (w,) in conn.execute("SELECT n_columns FROM models ORDER BY model")]
    if ranked:
        return
    plain = 8 * MAX_POOL * sum(int(w) + 3 for w in widths) <= SAMPLE_BYTES  # it fits
    labels = None if space is None else tuple(json.loads(space))
    models = [_StoredModel(conn, k, int(m), pkind, labels) for k in range(int(n_models))]
    try:
        meas = _measure_from(json.loads(spec))
        kind = pool_class([md.chunk_type() for md in models], meas)
        if kind is ClasswisePool:  # a multi-class average's counts, whichever estimator
            blob = _class_bytes([_class_counts(meas, md) for md in models], int(m))
            for md in models:
                md.write_checks(conn)
            conn.execute(
                "INSERT INTO summaries (phase, model, data) VALUES (0, ?, ?)", (CLASSES, blob)
            )
            return
        if kind is not PlainPool or not plain:
            return
        if n_models == 1:
            s: Any = with_sigma0(meas, summarize(meas, models[0], uniform(int(m)), q), estimator)
            samples = [s.sample]
        else:
            s = with_sigma0(meas, summarize_pair(meas, models, uniform(int(m)), q), estimator)
            samples = list(s.samples)
        decisions = [md.decisions(s.keep) for md in models]
        for md in models:
            md.write_checks(conn)
    finally:
        for md in models:
            md.close()
    rows = [_stored_rows(x) for x in samples]
    blob = _to_bytes(s, rows, decisions)
    key = 0 if n_models == 1 else PAIR
    conn.execute("INSERT INTO summaries (phase, model, data) VALUES (0, ?, ?)", (key, blob))


@dataclass(frozen=True)
class ClassSummary:
    """What the estimators of a multi-class average (macro F1, balanced accuracy, ...) read
    from the whole pool, per model: its :class:`~activeeval.estimators.classwise.PoolCounts`
    (the counts it expects of itself, eq. 4.21, and the instances with test mass) — with the
    labeled rows, all either estimator needs."""

    size: int
    pools: tuple[Any, ...]


def _class_counts(meas: Any, md: _StoredModel) -> Any:
    """A stored model's pool counts, a chunk at a time, as the pool in memory gives them
    (:meth:`~activeeval.estimators.report.ClasswisePool.counts`)."""
    from ..estimators.classwise import pool_counts_of
    from ..sampling import class_chunks

    # a session's test distribution; the probabilities as they are (no floor)
    parts = class_chunks(md, meas.name, None, uniform(md.n), 0.0)
    return pool_counts_of(((pr, f, p) for _, pr, f, p in parts()), len(md.labels or ()))


def _class_bytes(pools: list[Any], m: int) -> bytes:
    """A :class:`ClassSummary` as stored: each model's counts (TP, PP, T rows) and mass."""
    out = io.BytesIO()
    np.savez(
        out, version=np.int64(VERSION), size=np.int64(m),
        class_counts=np.array([[pc.counts.tp, pc.counts.pp, pc.counts.t] for pc in pools]),
        n_mass=np.array([pc.n_mass for pc in pools], dtype=np.int64),
    )  # fmt: skip
    return out.getvalue()


def read_class_summary(store: StoreFile, plan: SessionPlan) -> LeanClasses | None:
    """The stored counts of a multi-class average's models (phase 0), or None (none stored,
    another layout, or not of these models)."""
    s = _stored_summary(store, plan, CLASSES)
    if not isinstance(s, ClassSummary) or len(s.pools) != plan.n_models:
        return None
    return LeanClasses(s, tuple(
        LeanModel(s, store, k, plan.pool_size, plan.predictive_kind, plan.label_space)
        for k in range(plan.n_models)
    ))  # fmt: skip


@dataclass(eq=False)
class LeanClasses:
    """A multi-class average's stored counts (:class:`ClassSummary`) and the store to read
    every model's labeled rows from."""

    summary: ClassSummary
    models: tuple[LeanModel, ...]

    @property
    def label_dtype(self) -> Any:
        return self.models[0].label_dtype

    def at(self, model: int, units: NDArray[np.intp], draws: NDArray[np.intp]) -> Any:
        """The model at the ``draws`` (pool rows among the sorted distinct ``units``), as the
        estimators of class labels take it
        (:class:`~activeeval.estimators.classwise.ClassDraws`)."""
        from ..estimators.classwise import ClassDraws
        from ..measures import as_categorical, decision_index

        pred = self.models[model].at(units).take(draws)
        cat = as_categorical(pred, "measure")
        p = uniform(self.summary.size)[draws]  # a session's test distribution
        return ClassDraws(cat.proba, decision_index(cat, pred.point_prediction()), p)

    def label_index(self, units: NDArray[np.intp], draws: NDArray[np.intp], y: Any) -> Any:
        """The labels ``y`` of the draws as class columns (a label outside the model's
        classes refused as the pool's path refuses it)."""
        from ..measures import as_categorical

        return as_categorical(self.models[0].at(units).take(draws[:1]), "measure").label_index(
            y, "labels"
        )


def cache_rows(c: sqlite3.Connection, positions: list[int]) -> None:
    """Copy every model's stored rows at newly labeled ``positions`` into ``labeled_rows``
    (with their decisions and checks), inside the recording transaction, for a store with a
    pool summary. A row that fails its check, or cannot be read, is not copied (the label is
    recorded all the same; the estimate that reads the row then refuses it)."""
    if not positions or c.execute("SELECT 1 FROM summaries WHERE phase = 0").fetchone() is None:
        return
    m, kind, space, n_models = c.execute(
        "SELECT pool_size, predictive_kind, label_space, n_models FROM plan"
    ).fetchone()
    labels = None if space is None else tuple(json.loads(space))
    units = np.unique(np.asarray(positions, dtype=np.intp))
    for k in range(int(n_models)):
        _cache_model_rows(c, k, int(m), kind, labels, units)


def _cache_model_rows(
    c: sqlite3.Connection, k: int, m: int, kind: str, labels: Any, units: NDArray[np.intp]
) -> None:
    try:
        model = _StoredModel(c, k, m, kind, labels)
        try:
            checks = model.checks(units)  # first: a model added later has none, nor copies
            if checks is None:
                return
            raw, dec = model.raw(units)
        finally:
            model.close()
    except (StoreError, sqlite3.DatabaseError):
        return
    good = checks == _row_checks(raw, dec)
    parts = [raw] if dec is None else [raw, dec[:, None]]
    bound = _bound(checks, k, units)  # the copy's check, tied to its model and position
    rows = np.column_stack([*parts, bound.view(np.float64)[:, None], np.ones((len(units), 1))])
    try:
        c.executemany(
            "INSERT OR REPLACE INTO labeled_rows (model, position, data) VALUES (?, ?, ?)",
            [(k, int(p), rows[i].astype("<f8").tobytes())
             for i, p in enumerate(units.tolist()) if good[i]],
        )  # fmt: skip
    except sqlite3.OperationalError:  # no such table (a store the copies postdate): skip
        return


@dataclass(eq=False)
class LeanModel:
    """A model's pool summary (``summary``, an
    :class:`~activeeval.estimators.summary.PoolSummary`) and the store to read its rows from."""

    summary: Any
    store: StoreFile
    model: int
    size: int
    kind: str
    labels: tuple[Any, ...] | None
    #: The last rows read (:meth:`at`) and the units they are at: a status reads them for
    #: the estimate and again for the rule's look.
    _last: tuple[bytes, Any] | None = dataclasses.field(default=None, repr=False)

    @property
    def label_dtype(self) -> Any:
        """The stored labels' dtype, as :func:`~.stored._label_dtype` finds it from the pool."""
        if self.labels is None:
            return np.float64
        if self.labels and isinstance(self.labels[0], int):
            return np.int64
        if isinstance(self.summary, ClassSummary):  # no subsample: a row of the labels
            k = len(self.labels)
            return _predictive_from(self.kind, np.full((1, k), 1.0 / k), self.labels).labels.dtype
        sample = getattr(self.summary, "sample", None)  # a pair's summary has two samples
        return (self.summary.samples[0] if sample is None else sample).labels.dtype

    def at(self, units: NDArray[np.intp]) -> Any:
        """The model at the distinct pool rows ``units`` (sorted), read from the store: the
        copies of labeled rows (:func:`cache_rows`) in one query, any other row from the
        model's array; each checked against its row check (once per open: the rows at the
        same units are kept)."""
        key = np.ascontiguousarray(units, dtype=np.intp).tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]

        def read(c: sqlite3.Connection) -> tuple[Any, ...]:
            model = _StoredModel(c, self.model, self.size, self.kind, self.labels)
            try:
                return model.rows_at(units)
            finally:
                model.close()

        raw, decision, checks = self.store.read(read)
        if checks is None or not np.array_equal(checks, _row_checks(raw, decision)):
            raise StoreError(
                f"{self.store.path}: the stored predictions at the labeled instances do not "
                "match their checks; the file was altered outside activeeval."
            )
        from ..estimators.summary import AtRows

        at = AtRows(_built(self.kind, self.labels, raw, decision), units, self.size)
        self._last = (key, at)
        return at


def read_summary(store: StoreFile, plan: SessionPlan, model: int) -> LeanModel | None:
    """The stored summary of ``model`` for the plan's q (phase 0), or None (none stored, or
    of another layout)."""
    s = _stored_summary(store, plan, model)
    if s is None:
        return None
    return LeanModel(s, store, model, plan.pool_size, plan.predictive_kind, plan.label_space)


def _stored_summary(store: StoreFile, plan: SessionPlan, key: int) -> Any:
    """The summary stored under ``key`` (a model, or :data:`PAIR`) for the plan's q (phase
    0), or None: none stored, or of another layout, size or subsample than the pool's path
    would take (numpy's stream changed)."""
    row = store.read(
        lambda c: c.execute(
            "SELECT data FROM summaries WHERE phase = 0 AND model = ?", (key,)
        ).fetchone()
    )
    if row is None:
        return None
    s = _from_bytes(row[0], plan.predictive_kind, plan.label_space, store.path)
    if s is None or s.size != plan.pool_size:
        return None
    if isinstance(s, ClassSummary):
        return s
    from ..estimators.tempered import subsample

    return s if np.array_equal(s.keep, subsample(s.size)) else None


@dataclass(eq=False)
class LeanPair:
    """A comparison's summary of its k ≥ 2 models (an
    :class:`~activeeval.estimators.summary.PairSummary`) and the store to read every model's
    labeled rows from."""

    summary: Any
    models: tuple[LeanModel, ...]

    @property
    def label_dtype(self) -> Any:
        return self.models[0].label_dtype

    def at(self, units: NDArray[np.intp]) -> list[Any]:
        """Each model at the distinct pool rows ``units`` (sorted) (:meth:`LeanModel.at`)."""
        return [lm.at(units) for lm in self.models]


def read_pair_summary(store: StoreFile, plan: SessionPlan) -> LeanPair | None:
    """The stored summary of a comparison of k ≥ 2 models for the plan's q (phase 0), or
    None (none stored, of another layout, or of another number of models)."""
    s = _stored_summary(store, plan, PAIR)
    if len(getattr(s, "samples", ())) != plan.n_models:  # none, or not of these models
        return None
    return LeanPair(s, tuple(
        LeanModel(s, store, k, plan.pool_size, plan.predictive_kind, plan.label_space)
        for k in range(plan.n_models)
    ))  # fmt: skip


class _StoredModel:
    """A stored model read a chunk (``_chunk``) or some rows (``take``) at a time, with its
    stored decisions; ``raw`` gives the stored rows themselves."""

    def __init__(self, c: sqlite3.Connection, model: int, m: int, kind: str, labels: Any) -> None:
        width = c.execute("SELECT n_columns FROM models WHERE model = ?", (model,)).fetchone()[0]
        has = c.execute(
            "SELECT decision IS NOT NULL FROM models WHERE model = ?", (model,)
        ).fetchone()[0]
        self.n, self.kind, self.labels, self.model, self._c = m, kind, labels, model, c
        self._pred = RowReader(c, StoredArray("models.predictions", model, (m, int(width))))
        self._dec = RowReader(c, StoredArray("models.decision", model, (m,))) if has else None
        self._base: Any = (
            _StoredCategorical(self._pred, m, np.asarray(labels), self._dec)
            if kind == "categorical"
            else _StoredGaussian(self._pred, m, self._dec)
        )

    def chunk_type(self) -> Any:
        return self._chunk(slice(0, min(self.n, 1)))

    def _chunk(self, rows: slice) -> Any:
        return self._base._chunk(rows)

    def take(self, rows: Any) -> Any:
        return self._base.take(rows)

    def raw(self, units: NDArray[np.intp]) -> tuple[NDArray[np.float64], Any]:
        """The stored rows (and decisions, or None) at ``units``."""
        at = np.asarray(units, dtype=np.intp)
        return self._pred.at(at), self.decisions(at)

    def decisions(self, units: NDArray[np.intp]) -> NDArray[np.float64] | None:
        """The stored decisions at ``units`` (None: the model's own)."""
        return None if self._dec is None else self._dec.at(np.asarray(units, dtype=np.intp))

    def rows_at(self, units: NDArray[np.intp]) -> tuple[Any, Any, Any]:
        """The stored rows, decisions (or None) and checks (or None) at the sorted distinct
        ``units``: from ``labeled_rows`` where copied there, else from the arrays."""
        width = self._pred.where.width
        has = self._dec is not None
        raw = np.empty((units.shape[0], width))
        dec = np.empty(units.shape[0]) if has else None
        checks = np.empty(units.shape[0], dtype=np.uint64)
        found = np.zeros(units.shape[0], dtype=bool)
        for lo in range(0, units.shape[0], 20_000):
            few = json.dumps(units[lo : lo + 20_000].tolist())
            try:
                copies = self._c.execute(
                    "SELECT position, data FROM labeled_rows WHERE model = ? AND position IN "
                    "(SELECT value FROM json_each(?))",
                    (self.model, few),
                ).fetchall()
            except sqlite3.OperationalError:  # no such table: every row from the arrays
                break
            if not copies:
                continue
            pos = np.fromiter((p for p, _ in copies), np.int64, len(copies))
            nbytes = np.fromiter(
                (len(d) if isinstance(d, bytes) else -1 for _, d in copies), np.int64, len(copies)
            )
            for size in (width + has + 1, width + has + 2):
                sel = np.flatnonzero(nbytes == 8 * size)  # another length: from the arrays
                if not sel.shape[0]:
                    continue
                block = np.frombuffer(b"".join(copies[j][1] for j in sel.tolist()), dtype="<f8")
                block = block.reshape(sel.shape[0], size)
                i = np.searchsorted(units, pos[sel])
                raw[i] = block[:, :width]
                if dec is not None:
                    dec[i] = block[:, width]
                check = np.ascontiguousarray(block[:, width + has]).view(np.uint64)
                if size == width + has + 2:  # a check tied to its model and position
                    check = _bound(check, self.model, pos[sel])
                checks[i] = check
                found[i] = True
        rest = units[~found]
        if rest.shape[0]:
            r_raw, r_dec = self.raw(rest)
            r_checks = self.checks(rest)
            if r_checks is None:
                return raw, dec, None
            raw[~found], checks[~found] = r_raw, r_checks
            if dec is not None:
                dec[~found] = r_dec
        return raw, dec, checks

    def write_checks(self, c: sqlite3.Connection) -> None:
        """Store every row's check (:func:`_row_checks`), a chunk of rows at a time."""
        where = StoredArray("models.checks", self.model, (self.n,))
        self.close()  # the writer's UPDATE of the model's row would abort open blobs
        with ArrayWriter(c, where) as w:
            for rows in row_chunks(self.n):
                dec = None if self._dec is None else self._dec.rows(rows.start, rows.stop)
                raw = self._pred.rows(rows.start, rows.stop)
                w.write(rows.start, _row_checks(raw, dec).view(np.float64))

    def checks(self, units: NDArray[np.intp]) -> NDArray[np.uint64] | None:
        """The stored checks at ``units``; None where the store has none."""
        if self._c.execute(
            "SELECT checks IS NULL FROM models WHERE model = ?", (self.model,)
        ).fetchone()[0]:
            return None
        where = StoredArray("models.checks", self.model, (self.n,))
        with RowReader(self._c, where) as r:
            return r.at(np.asarray(units, dtype=np.intp)).view(np.uint64)

    def close(self) -> None:
        self._pred.close()
        if self._dec is not None:
            self._dec.close()


#: The row check's multiplier (the golden ratio's 64-bit fraction) and starting value.
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SEED = np.uint64(0xCBF29CE484222325)


def _row_checks(raw: NDArray[np.float64], decision: Any) -> NDArray[np.uint64]:
    """A 64-bit check of each stored row — its values' bits, and its decision's — mixed a
    column at a time (xor, multiply, xor-shift): any change to a row's bytes changes its
    check but with probability 2⁻⁶⁴. Not a defence against a forger; against an edit or a
    damaged file, as the fingerprint is."""
    bits = np.ascontiguousarray(raw, dtype=np.float64).reshape(raw.shape[0], -1).view(np.uint64)
    cols = [bits[:, j] for j in range(bits.shape[1])]
    if decision is not None:
        cols.append(np.ascontiguousarray(decision, dtype=np.float64).view(np.uint64))
    h = np.full(raw.shape[0], _SEED, dtype=np.uint64)
    for col in cols:
        h ^= col
        h *= _MIX
        h ^= h >> np.uint64(29)
    return h


def _bound(checks: NDArray[np.uint64], model: int, positions: NDArray[Any]) -> NDArray[np.uint64]:
    """Row checks xor a mix of their model and pool position (its own inverse): a copy in
    ``labeled_rows`` carries its check bound so, and a copy moved to another position or
    model by an edit no longer matches its row's check there. (Copies written before carry
    the plain check, one field shorter, and are read as such.)"""
    h = (np.uint64(model) << np.uint64(40)) ^ np.asarray(positions).astype(np.uint64)
    h = h ^ _SEED
    h *= _MIX
    h ^= h >> np.uint64(29)
    h *= _MIX
    return np.asarray(checks, dtype=np.uint64) ^ h


def _stored_rows(pred: Any) -> NDArray[np.float64]:
    """A model's rows as the store holds them (a classifier's probabilities; a regressor's
    mean and variance), from the model read from them (:class:`_StoredModel`)."""
    if hasattr(pred, "proba"):
        return np.asarray(pred.proba, dtype=np.float64)
    return np.column_stack([pred.mean, pred.var])


def _built(kind: str, labels: Any, raw: NDArray[np.float64], decision: Any) -> Any:
    """The model at some rows from their stored values, as the store's whole pool is built."""
    return restored_decision(_predictive_from(kind, raw, labels), decision)


_SCALARS = ("size", "domain_all", "mass", "mu_num", "mu_den", "n_needed", "n_domain",
            "missing", "curve_family")  # fmt: skip


def _to_bytes(s: Any, rows: list[NDArray[np.float64]], decisions: list[Any]) -> bytes:
    """A summary as stored: one model's :class:`~activeeval.estimators.summary.PoolSummary`
    (its subsample's rows ``raw``), or a pair's
    :class:`~activeeval.estimators.summary.PairSummary` (``raw_0``, ``raw_1``, and the
    control variates' ``moments``), with each model's decisions there where apart."""
    t = s.time
    arrays: dict[str, Any] = {
        "version": np.int64(VERSION),
        "t_size": np.int64(t.size),
        "t_support": np.int64(t.n_support),
        "t_top": t.top,
        "t_tau": np.float64(t.tau),
        "t_sums": t.sums,
        "keep": s.keep.astype(np.int64),
        "sample_q": s.sample_q,
        "sample_p": s.sample_p,
    }
    if len(rows) == 1:
        arrays.update({k: np.asarray(getattr(s, k)) for k in _SCALARS}, raw=rows[0])
        if s.terms_mu is not None:
            arrays["terms_mu"] = np.asarray(s.terms_mu, dtype=np.float64)
        if s.sigma0 is not None:
            arrays[_SIGMA0[s.sigma0_estimator]] = np.asarray(s.sigma0, dtype=np.float64)
        if decisions[0] is not None:
            arrays["decision"] = decisions[0]
    else:
        arrays.update({k: np.asarray(getattr(s, k)) for k in _PAIR_SCALARS})
        arrays["moments"] = np.asarray(s.moments, dtype=np.float64)
        arrays["families"] = np.asarray(s.families, dtype=bool)
        if s.terms_mu is not None:
            arrays["terms_mu"] = np.asarray(s.terms_mu, dtype=np.float64)
        if s.sigma0 is not None:
            arrays[_SIGMA0[s.sigma0_estimator]] = np.asarray(s.sigma0, dtype=np.float64)
        if s.n_differ is not None:
            arrays["n_differ"] = np.int64(s.n_differ)
        for k, (raw, dec) in enumerate(zip(rows, decisions, strict=True)):
            arrays[f"raw_{k}"] = raw
            if dec is not None:
                arrays[f"decision_{k}"] = dec
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


_PAIR_SCALARS = ("size", "domain_all", "mass", "n_domain", "missing")


def _from_bytes(blob: bytes, kind: str, labels: Any, path: Any = "summary") -> Any:
    """The summary in ``blob``, None where its layout is another (``VERSION``); a
    :class:`~activeeval.errors.StoreError` where it cannot be read (altered)."""
    try:
        return _read_blob(blob, kind, labels)
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise StoreError(
            f"{path}: its pool summary cannot be read ({exc}); the store was altered outside "
            "activeeval."
        ) from exc


def _read_blob(blob: bytes, kind: str, labels: Any) -> Any:
    from ..estimators.summary import PairSummary, PoolSummary
    from ..sampling import TimeSummary

    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        if "version" not in z.files or int(z["version"]) != VERSION:
            return None
        if "class_counts" in z.files:  # a multi-class average's
            return _class_summary(z)
        time = TimeSummary(
            int(z["t_size"]), int(z["t_support"]), z["t_top"], float(z["t_tau"]), z["t_sums"]
        )
        if "moments" in z.files:  # a pair's
            sc = {k: z[k].item() for k in _PAIR_SCALARS}
            mom = z["moments"]
            samples = tuple(
                _built(kind, labels, z[f"raw_{k}"],
                       z[f"decision_{k}"] if f"decision_{k}" in z.files else None)
                for k in range(mom.shape[1])
            )  # fmt: skip
            return PairSummary(
                int(sc["size"]), time, bool(sc["domain_all"]), float(sc["mass"]),
                int(sc["n_domain"]), int(sc["missing"]),
                tuple(tuple((float(a), float(b)) for a, b in row) for row in mom),
                z["keep"].astype(np.intp), samples, z["sample_q"], z["sample_p"],
                tuple(bool(x) for x in z["families"]),
                _pairs_of(z["terms_mu"], mom.shape[1]) if "terms_mu" in z.files else None,
                *_sigma0_of(z, mom.shape[1]),
                n_differ=int(z["n_differ"]) if "n_differ" in z.files else None,
            )  # fmt: skip
        scalars = {k: z[k].item() for k in _SCALARS}
        sigma0, sigma0_for = _sigma0_of(z, None)
        decision = z["decision"] if "decision" in z.files else None
        sample = _built(kind, labels, z["raw"], decision)
        return PoolSummary(
            size=int(scalars["size"]),
            time=time,
            domain_all=bool(scalars["domain_all"]),
            mass=float(scalars["mass"]),
            mu_num=float(scalars["mu_num"]),
            mu_den=float(scalars["mu_den"]),
            n_needed=int(scalars["n_needed"]),
            n_domain=int(scalars["n_domain"]),
            missing=int(scalars["missing"]),
            curve_family=bool(scalars["curve_family"]),
            keep=z["keep"].astype(np.intp),
            sample=sample,
            sample_q=z["sample_q"],
            sample_p=z["sample_p"],
            terms_mu=_pairs_of(z["terms_mu"], None) if "terms_mu" in z.files else None,
            sigma0=sigma0,
            sigma0_estimator=sigma0_for,
        )


#: The summary's key of the σ₀ grid of each estimator: the plan's (the model-assisted
#: estimator's under the name it had before the thesis's was served).
_SIGMA0 = {"assisted": "sigma0", "snis": "sigma0_snis"}


def _sigma0_of(z: Any, k: int | None) -> tuple[NDArray[np.float64] | None, str]:
    """The stored σ₀ grid (None: none stored) and its estimator."""
    for how, key in _SIGMA0.items():
        if key in z.files:
            return _grid_of(z[key], k), how
    return None, "assisted"


def _class_summary(z: Any) -> ClassSummary:
    from ..estimators.classwise import PoolCounts
    from ..measures import Counts

    counts, mass = z["class_counts"], z["n_mass"]
    if counts.ndim != 3 or counts.shape[1] != 3 or mass.shape != counts.shape[:1]:
        raise ValueError(f"class_counts holds {counts.shape} values and n_mass {mass.shape}")
    return ClassSummary(int(z["size"]), tuple(
        PoolCounts(Counts(tp=c[0], pp=c[1], t=c[2]), int(n))
        for c, n in zip(counts, mass, strict=True)
    ))  # fmt: skip


def _pairs_of(values: NDArray[np.float64], k: int | None) -> Any:
    """Stored pool means (μ_N, μ_D): one model's pair (``k`` None), or one pair per model of
    ``k``; another shape is an altered summary."""
    want = (2,) if k is None else (k, 2)
    if values.shape != want:
        raise ValueError(f"terms_mu holds {values.shape} values, not {want}")
    if k is None:
        return float(values[0]), float(values[1])
    return tuple((float(a), float(b)) for a, b in values)


def _grid_of(values: NDArray[np.float64], k: int | None) -> NDArray[np.float64]:
    """A stored σ₀ grid, one value per tempered member (and model of ``k``); another shape is
    an altered summary."""
    from ..estimators.tempered import GRID

    want = GRID.shape if k is None else (GRID.shape[0], k)
    if values.shape != want:
        raise ValueError(f"sigma0 holds {values.shape} values, not {want}")
    return values
