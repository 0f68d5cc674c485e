"""Persistent labeling sessions: an evaluation or comparison campaign stored in one SQLite file.

A session is thesis Algorithm 2 (or 3) with the oracle taken out of the loop: the library hands
out the pool ids to label next, people label them whenever they can, and the labels come back
later — possibly from several annotators, processes or machine restarts. Everything the
estimate depends on is stored (the plan, the sampling distribution q, the draw sequence, the
hand-outs, the labels and an audit of relabels), so a reopened session continues exactly where
it stopped and gives bit-identical estimates; every operation is one SQLite transaction, so a
crash loses at most the transaction in progress.

Public names: ``Session`` (create, open, hand out, record, estimate, compare), its
``SessionPlan``, ``SessionProgress`` and ``RecordSummary``, and the constants
``DEFAULT_BLOCK_SIZE``, ``DEFAULT_CHUNK_SIZE``, ``SCHEMA_VERSION`` and ``MIGRATIONS``.

The *Labeling campaigns* page of the user guide (``docs/guide/campaigns.md``) describes the
plan, the draw sequence, the stopping rule, crash safety, ranked pools, the estimates and the
schema; the API reference page *Sessions* documents the names.

The package: ``schema`` (the SQLite file, its schema and migrations), ``lookup`` (ids,
costs and draws read through the store's keys and draw index, without the pool), ``codec``
(how values are stored), ``stored`` (the plan read back at ``Session.open``; the pool read
when first needed), ``planning`` (what ``Session.create`` validates, plans and writes),
``handout`` (handing out ids), ``intake`` (label intake and audit), ``ledger`` (progress and
the exported tables), ``report`` (estimates and comparisons), ``revision`` (a larger budget,
another model), and ``facade``, the ``Session`` that delegates to them. Hand-outs, intake
and the ledger cost O(labels) and load neither the estimators nor the sampling code; what
reads the pool does so once, when first asked.
"""

from __future__ import annotations

from .facade import Session
from .intake import DEFAULT_CHUNK_SIZE, RecordSummary
from .ledger import SessionProgress
from .schema import MIGRATIONS, SCHEMA_VERSION
from .stored import DEFAULT_BLOCK_SIZE, SessionPlan

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_CHUNK_SIZE",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "RecordSummary",
    "Session",
    "SessionPlan",
    "SessionProgress",
]
