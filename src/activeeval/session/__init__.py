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
item of its list (of both lists' union for a comparison, in
:func:`~activeeval.ranking.ranking_union` order), recorded from rows ``id,item,grade`` and stored as
one JSON list per query, and the estimate is over per-query DCG/ERR values.

Estimates. A session reports what :func:`~activeeval.evaluate` / :func:`~activeeval.compare`
report for the same draws, bit for bit, with the estimator fixed in its plan: the
model-assisted one by default, the thesis's eq. 3.31 (``estimator="snis"``) for reproduction.
Stores created before the plan held an estimator report eq. 3.31 (now, as evaluate, the exact
value with stderr 0 once every instance that can move the measure is labeled). The
plan stores the estimator's name; its computation is the installed version's (eq. 3.31 is
fixed; the model-assisted estimator's tuning may improve between versions).

Schema. ``meta`` holds ``schema_version``; :data:`MIGRATIONS` maps a version k to the function
that upgrades a store from k to k + 1, applied in one transaction when a store is opened. A store
written by a newer version is refused (:class:`~activeeval.errors.SchemaVersionError`), as is a file
that is not a store (:class:`~activeeval.errors.NotAStoreError`).

The package: :mod:`.schema` (the SQLite file, its schema and migrations), :mod:`.codec`
(how values are stored), :mod:`.planning` (what :meth:`Session.create` validates, plans and
writes; the plan read back at :meth:`Session.open`), :mod:`.handout` (handing out ids),
:mod:`.intake` (label intake and audit), :mod:`.report` (estimates, comparisons, progress and
the exported tables), and :mod:`.facade`, the :class:`Session` that delegates to them.
"""

from __future__ import annotations

from .facade import Session
from .intake import DEFAULT_CHUNK_SIZE, RecordSummary
from .planning import DEFAULT_BLOCK_SIZE, SessionPlan
from .report import SessionProgress
from .schema import MIGRATIONS, SCHEMA_VERSION

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
