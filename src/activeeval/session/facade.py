"""The ``Session`` facade: every public method delegates to the package's modules
(``planning``, ``handout``, ``intake``, ``report``, over ``schema``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from .._validation import is_dask
from ..errors import ShapeError
from ..estimators.smoother import DEFAULT_BANDWIDTH
from . import ledger
from .handout import next_batch as _next_batch
from .handout import release as _release
from .intake import DEFAULT_CHUNK_SIZE, RecordSummary
from .intake import items_to_grade as _items_to_grade
from .intake import record as _record
from .schema import StoreFile, open_store
from .stored import DEFAULT_BLOCK_SIZE, SessionPlan, load_plan

if TYPE_CHECKING:
    from ..measures import Measure
    from ..ranking import RankingMeasure
    from ..results import ComparisonResult, EvaluationResult, GroupResult
    from .ledger import SessionProgress


def _report() -> ModuleType:
    """The estimates' module, imported when first needed: the commands of an annotator's
    loop (hand-outs, intake, progress, export) never load the estimators."""
    from . import report

    return report


def _revision() -> ModuleType:
    from . import revision

    return revision


__all__ = ["Session"]


class Session:
    """A persistent labeling campaign on one SQLite file.

    Create one with ``Session.create``, reopen it (in this or any later process) with
    ``Session.open``. The loop is ``ids = s.next_batch(k)`` → label them →
    ``s.record({id: label, ...})``, until ``next_batch`` returns nothing; ``estimate``
    (evaluation) or ``compare`` (comparison) may be called at any time, ``progress`` tells
    where the campaign stands. The campaign is fixed in advance by its plan (q, seed, costs,
    budget): every hand-out schedule, crash or restart gives the same ids in the same order,
    and a reopened store gives bit-identical estimates.

    A session object holds the immutable plan in memory and reads all mutable state from the
    store inside each transaction, so any number of processes may work on one store at once.
    Use it as a context manager, or call ``close``, to close the store.

    Parameters
    ----------
    path : pathlib.Path
        The store file.
    conn : sqlite3.Connection
        An open connection to it. Not called directly: use ``Session.create`` or
        ``Session.open``.

    Attributes
    ----------
    path : pathlib.Path
        The store file.
    plan : SessionPlan
        What the session was created with (measure, method, budget, seed, ...).
    ids : ndarray of shape (m,)
        The pool ids, in the pool's order at creation.
    costs : ndarray of shape (m,) or None
        Labeling cost per pool instance, if costs were given.
    q : ndarray of shape (m,)
        The sampling distribution new draws come from (the last phase's, after
        ``add_model``).
    phases : tuple of (int, ndarray)
        Each phase of the draw sequence: its first draw's sequence number and its q (one
        phase until a model is added).
    predictives : list
        Each model's predictive distribution over the pool.
    measure : Measure or RankingMeasure
        The measure, bound to the pool's label space.

    See Also
    --------
    activeeval.evaluate : The same campaign in one call, with an oracle function.
    activeeval.compare : Compare models in one call, with an oracle function.
    activeeval.session.SessionProgress : What ``progress`` returns.
    activeeval.io.read_pools : Read pool files into what ``Session.create`` takes.

    Notes
    -----
    The *Labeling campaigns* page of the user guide (``docs/guide/campaigns.md``) describes
    the store, the draw sequence, the stopping rule and the command line.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> p1 = rng.uniform(0.05, 0.95, 200)
    >>> proba = np.column_stack([1 - p1, p1])        # the model's class probabilities
    >>> y = (rng.uniform(size=200) < p1).astype(int)  # the labels annotators would give
    >>> tmp = tempfile.TemporaryDirectory()
    >>> s = ae.Session.create(os.path.join(tmp.name, "campaign.db"), proba, "error_rate",
    ...                       budget=40, seed=0)
    >>> ids = s.next_batch(10)
    >>> ids[:5]
    [127, 53, 8, 3, 162]
    >>> s.record({i: int(y[i]) for i in ids}, annotator="ann")
    RecordSummary(n_new=10, n_unchanged=0, n_overwritten=0)
    >>> while ids := s.next_batch(10):
    ...     _ = s.record({i: int(y[i]) for i in ids})
    >>> s.progress().complete
    True
    >>> res = s.estimate()
    >>> print(f"{res.estimate:.3f} with {res.n_labels} labels")
    0.256 with 40 labels
    >>> s.close()
    >>> tmp.cleanup()
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._store = StoreFile(path, conn)
        self._load()

    def _load(self) -> None:
        """Read the plan (again, after a revision); the pool itself is read when first
        needed (``ids``, ``costs``, ``q``, ``phases``, ``predictives``, ``measure``,
        estimates), so that hand-outs and intake cost O(labels)."""
        self._stored = stored = load_plan(self._store)
        self.plan: SessionPlan = stored.plan

    @property
    def ids(self) -> NDArray[Any]:
        """The pool ids, in the pool's order at creation (reads the pool)."""
        return self._stored.ids

    @property
    def costs(self) -> NDArray[np.float64] | None:
        """Labeling cost per pool instance, if costs were given (reads the pool)."""
        return self._stored.costs

    @property
    def q(self) -> NDArray[np.float64]:
        """The sampling distribution new draws come from (reads the pool)."""
        return self._stored.q

    @property
    def phases(self) -> tuple[tuple[int, NDArray[np.float64]], ...]:
        """Each phase of the draw sequence: its first draw's sequence number and its q."""
        return self._stored.phases

    @property
    def predictives(self) -> list[Any]:
        """Each model's predictive distribution over the pool (reads the pool)."""
        return self._stored.predictives

    def _from_summary(self) -> bool:
        """Whether :meth:`estimate` (of model 0, the defaults) — or, for two models or more,
        :meth:`compare` — reads the stored pool summary instead of the pool (for as many
        labels as its time summary reaches; a multi-class average: its stored counts)."""
        if _report()._lean_classes(self._stored, None) is not None:
            return True
        if self.plan.n_models >= 2:
            return _report()._lean_pair(self._stored, None) is not None
        return _report()._lean(self._stored, 0, None) is not None

    @property
    def measure(self) -> Any:
        """The measure, bound to the pool's label space."""
        return self._stored.measure

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
        target_width: float | None = None,
        claim: Any = None,
        decide: bool = False,
        rule: str = "anytime",
        prediction: Any = None,
    ) -> Session:
        """Plan a campaign and write it to a new store at ``path``.

        Parameters
        ----------
        path : str or os.PathLike
            The store file; must not exist yet. It is built under a temporary name and linked
            into place when complete, so a crash never leaves a half-created store.
        pools : predictive or list of predictives
            One model's predictions on the pool (an evaluation), or a list of two or more
            models' predictions on the same pool (a comparison): ``Categorical``, ``Gaussian``
            or an ``(m, K)`` array of class probabilities; or a ranker's ``GradedRelevance``
            over m queries (two, with item ids, for a comparison). A Dask pool (a
            ``dask.dataframe.DataFrame`` with a pool file's columns, or a ``dask.array.Array``
            of class probabilities) is read a partition at a time into the store, which is
            then the same as from the pool in NumPy (``docs/guide/dask.md``).
        measure : Measure or str
            ``"error_rate"``, ``"accuracy"``, ``"mse"``, ``"mae"``, ``"f1"``,
            ``"precision"``, ``"recall"``, the multi-class averages ``"macro_f1"``,
            ``"weighted_f1"``, ``"balanced_accuracy"`` (two models at most, no stopping
            rule), ``"mean"``, ``"proportion"``, or such a measure object (also
            ``CostMatrixLoss``); for a ranked pool ``"dcg"``, ``"err"``, ``DCG(k)`` or
            ``ERR(k, max_grade)``.
        budget : float
            Labels to buy, or total cost when ``costs`` are given.
        method : str
            Evaluation: ``"active"`` (q*, Thm 4.1/4.2), ``"passive"``, ``"active_uniC"``,
            ``"active_lambda"``; comparison: also ``"active_0"``, ``"active_inf"``,
            ``"active_risk"`` (see ``activeeval.sampling.comparison_distribution``).
            Ranked pools: one of ``activeeval.methods.RANKING_METHODS`` (eq. 6.10, 6.11).
        seed : int
            Non-negative seed of the draw sequence, at most 2**63 − 1 (what the store holds).
            The draws are those of ``evaluate(..., random_state=seed)`` (``compare``): a
            session labeled to its end reports what they report.
        costs : array-like of shape (m,), optional
            Labeling cost per pool instance, strictly positive. A ranked pool defaults to
            its items' summed costs (``activeeval.ranking.ranking_query_costs``).
        level : float
            Confidence level of the reported intervals.
        pos_label : label, optional
            Positive class of F-measures, precision and recall (default: the larger of a
            binary model's two classes; required with more classes).
        labels : array_like, optional
            Class label of each probability column when ``pools`` are arrays (default
            ``0..K-1``).
        ids : array-like of shape (m,), optional
            Pool ids (all integers or all strings, unique); default ``0..m-1``.
        beta : float, optional
            β of ``measure="f1"`` (F_β); default 1.
        names : sequence of str, optional
            A name per model (default ``model 0``, ``model 1``, ...).
        block_size : int
            Draws generated per block of the draw sequence (the sequence itself does not
            depend on it).
        estimator : {"assisted", "snis"}
            The estimator the session reports, as ``evaluate``'s: the model-assisted one
            (default; its finite-population form, the tempered interval: logit for measures
            in [0, 1] or Wald, joined with the tempered-model score interval) or the thesis's
            (eq. 3.31, Wald interval), for reproduction. Stored in the plan; ``estimate`` and
            ``compare`` can override it.
        target_width : float, optional
            Stopping rule: stop once the interval (of the difference, for a comparison) is at
            most this wide, as ``evaluate``'s ``target_width``.
        claim : str or Claim, optional
            Stopping rule: stop once a claim such as ``"f1 >= 0.80"`` (for two models, e.g.
            ``"difference <= 0.005"``) is established or refuted, as ``evaluate``'s and
            ``compare``'s ``claim``.
        decide : bool
            Stopping rule of a comparison: stop once the anytime-valid confidence sequence
            of the difference excludes 0, as ``compare``'s ``decide``.
        rule : {"anytime", "fixed-width"}
            How the stopping rule looks: the anytime-valid confidence sequence (default) or,
            with ``target_width`` only, the fixed-n interval (Chow–Robbins).
        prediction : array-like of shape (m,), or a list of them (one per model, or None)
            The decision f(x) the measure scores — a tuned threshold's labels, a rule's,
            another model's — where it is not the mode (classifier) or mean (regressor) of
            ``pools``, which stay the beliefs p(y | x) that choose q and the control variate
            (Thm 4.1 takes f and p(y | x) apart), as in ``evaluate(..., prediction=)``. The
            store keeps it beside the beliefs.

        Returns
        -------
        Session
            The new session, open on its store.

        Raises
        ------
        StoreError
            ``path`` exists already or cannot be written.
        ShapeError
            Invalid input, naming the argument; also a measure no label can define for the
            model (precision of a model that predicts the positive class nowhere).

        Notes
        -----
        A stopping rule is part of the plan: once it is met on the labeled prefix,
        ``next_batch`` hands out nothing more, ``stopped`` says why, and ``estimate`` /
        ``compare`` report the anytime-valid interval (under ``rule="anytime"``). Looking
        after every batch is then honest: a session stopped this way reports what
        ``evaluate`` with the same rule and seed reports when its ``step`` is the batch size.
        """
        from .planning import CreateRequest, create_store

        request = CreateRequest(
            pools, measure, budget, method=method, seed=seed, costs=costs, level=level,
            pos_label=pos_label, labels=labels, ids=ids, beta=beta, names=names,
            block_size=block_size, estimator=estimator,
            stopping=(target_width, claim, decide, rule), prediction=prediction,
        )  # fmt: skip
        models = pools if isinstance(pools, list | tuple) else [pools]
        if any(is_dask(p) for p in models):
            from .streaming import create_from_dask

            return cls.open(create_from_dask(path, request))
        return cls.open(create_store(path, request))

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Session:
        """Open an existing store (resuming its campaign), migrating an older schema.

        Parameters
        ----------
        path : str or os.PathLike
            The store file, as written by ``Session.create`` (or ``activeeval session init``).

        Returns
        -------
        Session
            The session, open on its store; close it with ``close`` (or use it in a ``with``
            block).

        Raises
        ------
        NotAStoreError
            The file does not exist or is not an activeeval session store.
        SchemaVersionError
            The store was written by a newer activeeval.
        StoreError
            The store's tables do not fit together (the file was altered). The stored pool
            is checked against its fingerprint when a command first reads it (``ids``,
            ``predictives``, ``q``, an estimate that reads the pool); hand-outs, intake and
            progress read only their rows, and an estimate from the pool summary only the
            labeled rows, each checked against its stored row check.
        """
        target = Path(path)
        conn = open_store(target)
        try:
            return cls(target, conn)
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        """Close the store (the campaign stays on disk; reopen it with ``Session.open``)."""
        self._store.close()

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

    @property
    def stopped(self) -> str | None:
        """Why the plan's stopping rule is met on the labels recorded so far (e.g. ``"target
        width 0.05 reached (0.0497)"``), or None: no rule, or not met yet."""
        if self.plan.stopping is None:
            return None
        return _report().stop_reason(self._store, self._stored)

    # ------------------------------------------------------------------ hand-outs
    def next_batch(self, k: int, annotator: str | None = None) -> list[Any]:
        """Ids to label next: at most ``k``, in draw order; none once the plan's stopping rule
        is met (``stopped`` says why).

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
        annotator : str, optional
            Hand out to this annotator: their own pending ids first, then pending ids nobody
            holds, then new ones, all held by them from now on. Ids another annotator holds
            are never handed out (until ``release`` frees them), so annotators working in
            parallel split the campaign within its one budget. Without it (None), ids held by
            nobody in particular, as before annotators were named.

        Returns
        -------
        list
            Pool ids (as given at creation), never one already labeled.

        See Also
        --------
        release : Free or reassign an annotator's pending ids.
        progress : Pending ids per annotator (``pending_by_annotator``).
        """
        if self._stored.plan.stopping is not None and self.stopped is not None:
            return []
        return _next_batch(self._store, self._stored, k, annotator)

    def extend(self, budget: float) -> None:
        """Raise the budget: the campaign continues the same draws from the same q.

        Parameters
        ----------
        budget : float
            The new total budget — labels, or cost units for a session with costs — larger
            than the current one (``plan.budget``). A campaign that stopped at its budget or
            at its draw cap resumes where it stopped (the cap grows with the budget).

        Raises
        ------
        BudgetError
            When ``budget`` is not larger than the current one.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.random.default_rng(0).dirichlet([1.0, 1.0], size=50)
        >>> tmp = tempfile.TemporaryDirectory()
        >>> s = ae.Session.create(os.path.join(tmp.name, "s.db"), proba, "error_rate", 5, seed=0)
        >>> len(s.next_batch(10))
        5
        >>> s.extend(8)
        >>> len(s.next_batch(10))  # the 5 still pending, and 3 more
        8
        >>> s.close(); tmp.cleanup()
        """
        _revision().extend(self._store, self._stored, budget)
        self._load()

    def add_model(
        self, predictions: Any, name: str | None = None, prediction: ArrayLike | None = None
    ) -> None:
        """Add a model: from the next block of draws on, q is planned for comparing every
        model, and the labels already recorded keep counting.

        The session becomes a comparison (``compare()``; ``estimate(model=k)`` for each
        model). Every draw is then weighted by p over the mixture of the q it and the others
        came from (multiple importance sampling with the balance heuristic), so the estimates
        on the labels recorded before stay what they were. Raise the budget for the new
        labels with :meth:`extend`.

        Parameters
        ----------
        predictions : (m, K) array, DataFrame, Categorical or Gaussian
            The new model's predictions on the session's pool, in the pool's order, of the
            session's kind (class probabilities with the same classes, or a regressor's).
        name : str, optional
            The model's name (``plan.model_names``); ``"model k"`` by default.
        prediction : array-like of shape (m,), optional
            The new model's decisions f(x), when they are not its most probable class.

        Raises
        ------
        ShapeError, LabelSpaceError
            When the predictions are not of the session's pool, kind or classes, or the name
            is taken.
        UnknownOptionError
            For a ranked session, a session with a stopping rule, a label mean, or a third
            model of a multi-class average (compared in pairs).

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np
        >>> import activeeval as ae
        >>> rng = np.random.default_rng(0)
        >>> v1, v2 = rng.dirichlet([1.0, 1.0], size=50), rng.dirichlet([1.0, 1.0], size=50)
        >>> tmp = tempfile.TemporaryDirectory()
        >>> s = ae.Session.create(os.path.join(tmp.name, "s.db"), v1, "error_rate", 10, seed=0)
        >>> s.add_model(v2, name="v2")
        >>> s.plan.kind, s.plan.model_names
        ('comparison', ('model 0', 'v2'))
        >>> s.close(); tmp.cleanup()
        """
        _revision().add_model(self._store, self._stored, predictions, name, prediction)
        self._load()

    def release(
        self, annotator: str, ids: Sequence[Any] | None = None, to: str | None = None
    ) -> list[Any]:
        """Release an annotator's pending ids, or reassign them to another annotator.

        Labels already recorded are untouched; only ids handed out to ``annotator`` and not
        labeled yet change holder.

        Parameters
        ----------
        annotator : str
            The annotator who holds the ids (as passed to ``next_batch``).
        ids : sequence, optional
            Only these of their pending ids (others of ``ids`` are ignored); all by default.
        to : str, optional
            The annotator who takes them over; None frees them for whoever asks next.

        Returns
        -------
        list
            The ids that changed holder, in draw order.

        Raises
        ------
        ShapeError
            ``annotator`` or ``to`` is not a non-empty string, or both name the same one.
        UnknownIdError
            An id of ``ids`` is not in the pool.
        """
        return _release(self._store, self._stored, annotator, ids, to)

    def items_to_grade(self, ids: Sequence[Any]) -> pd.DataFrame:
        """A ranked pool's grading sheet for the queries ``ids``.

        One row ``id, item`` per item to grade, in the stored order (the ranker's list; for a
        comparison both lists' union, ``activeeval.ranking.ranking_union``), and an empty
        ``grade`` column to fill in and pass to ``record``. Items are the item ids, or the
        0-based rank when the ranker has none.

        Parameters
        ----------
        ids : sequence
            Query ids handed out by ``next_batch``.

        Returns
        -------
        pandas.DataFrame
            Columns ``id``, ``item``, ``grade`` (empty).

        Raises
        ------
        ShapeError
            The session's pool is not ranked.
        """
        return _items_to_grade(self._stored, ids)

    # --------------------------------------------------------------------- labels
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
        store unchanged. Recording a label identical to the stored one is a no-op, so a labels
        file can be recorded again safely; a *different* label is refused unless
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
        source : str
            How error messages name the input (the command line passes the file name).
        row_label : str
            How error messages name the input's rows, by the DataFrame's index (the command
            line passes ``"line"``, with the DataFrame indexed by line number).

        Returns
        -------
        RecordSummary
            How many labels were new, unchanged (identical relabels) and overwritten.

        Raises
        ------
        UnknownIdError
            An id is not in the pool or was never handed out by ``next_batch``.
        LabelSpaceError
            A label is outside the label space.
        DuplicateIdError
            One id appears twice with different labels.
        SessionMismatchError
            A ``session_id`` column names another session.
        LabelConflictError
            A label differs from the stored one and ``overwrite`` is False (the message names
            the id).
        """
        return _record(
            self._store, self._stored, labels, annotator, overwrite, chunk_size=chunk_size,
            progress=progress, source=source, row_label=row_label,
        )  # fmt: skip

    # ----------------------------------------------------------------- estimation
    @overload
    def estimate(
        self,
        model: int = ...,
        *,
        estimator: str | None = ...,
        features: ArrayLike | None = ...,
        bandwidth: float = ...,
        groups: None = ...,
    ) -> EvaluationResult: ...

    @overload
    def estimate(
        self,
        model: int = ...,
        *,
        estimator: str | None = ...,
        features: ArrayLike | None = ...,
        bandwidth: float = ...,
        groups: ArrayLike,
    ) -> GroupResult: ...

    def estimate(
        self,
        model: int = 0,
        *,
        estimator: str | None = None,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
        groups: ArrayLike | None = None,
    ) -> EvaluationResult | GroupResult:
        """The performance estimate from the labels recorded so far.

        What ``evaluate`` reports for the same draws (bit for bit), on the longest *prefix*
        of the draw sequence whose instances are all labeled: by default the model-assisted
        estimator in its finite-population form with the tempered interval; ``"snis"``: the
        thesis's eq. 3.31 with the sandwich standard error of Lemma 3.4; once every instance
        that can move the measure is labeled, the exact value.

        Parameters
        ----------
        model : int
            For comparison sessions, which model to estimate (all models share the draws).
        estimator : {"assisted", "snis"}, optional
            Overrides the session's estimator (``plan.estimator``).
        features : array-like of shape (m, d), optional
            The pool's features, one row per instance in the pool's order at creation, for
            the model-assisted estimator's second control variate (as
            ``evaluate``'s ``features``); not stored.
        bandwidth : float
            The smoother's kernel bandwidth (as ``evaluate``'s).
        groups : array-like of shape (m,), optional
            A group label per pool instance, in the pool's order at creation: the estimate
            within every group and overall, as ``evaluate(..., groups=)`` reports them (a
            ``GroupResult``; the session's draws, not a q planned for the groups).

        Returns
        -------
        EvaluationResult or GroupResult
            The result ``evaluate`` returns, with ``cost`` the labeling cost of the prefix's
            distinct instances, ``budget`` and ``method`` the plan's, and ``indices``, ``q``,
            ``labels`` the prefix's draws. NaN values before the first label of the prefix
            (``inference`` None, empty arrays).

        Raises
        ------
        ShapeError
            ``model`` is not one of the session's models.

        Notes
        -----
        Taking a prefix keeps the argument behind the estimator valid while labels arrive out
        of order: the draws are i.i.d. from q, and the prefix ends at a point decided by the
        draws themselves and the order of labeling, so the estimate is that of an i.i.d.
        sample stopped at a stopping time — *provided* whether a handed-out instance is
        labeled yet does not depend on its label. If hard instances come back later, the
        prefix under-represents them (a review measured −0.06 on an error rate when 40% of
        the errors, and no correct instance, were still pending): estimate once the pending
        ids are in. Using every labeled draw instead would let which labels came back first
        decide which draws count, whatever the delays.
        """
        if groups is not None:
            return _report().by_group(self._store, self._stored, groups, model, estimator, features,
                             bandwidth)  # fmt: skip
        return _report().estimate(self._store, self._stored, model, estimator, features, bandwidth)

    @overload
    def compare(
        self,
        *,
        estimator: str | None = ...,
        features: ArrayLike | None = ...,
        bandwidth: float = ...,
        groups: None = ...,
    ) -> ComparisonResult: ...

    @overload
    def compare(
        self,
        *,
        estimator: str | None = ...,
        features: ArrayLike | None = ...,
        bandwidth: float = ...,
        groups: ArrayLike,
    ) -> GroupResult: ...

    def compare(
        self,
        *,
        estimator: str | None = None,
        features: ArrayLike | None = None,
        bandwidth: float = DEFAULT_BANDWIDTH,
        groups: ArrayLike | None = None,
    ) -> ComparisonResult | GroupResult:
        """The comparison of the session's models from the labels recorded so far.

        What ``compare`` reports for the same draws, on the labeled prefix of the draws (see
        ``estimate``). Two models: Δ = G[f₀] − G[f₁] with the paired Wald test
        (eq. 3.21–3.24) — by default from the model-assisted estimator with each model's own
        predictive distribution as a control variate (``assisted_paired_test``), ``"snis"``
        the thesis's paired test; k > 2: the multiple comparison (Holm), reporting the best
        model against the runner-up with its Holm-adjusted p-value.

        Parameters
        ----------
        estimator : {"assisted", "snis"}, optional
            Overrides the session's estimator (``plan.estimator``).
        features : array-like of shape (m, d), optional
            The pool's features, one row per instance in the pool's order at creation (as
            ``compare``'s ``features``); not stored.
        bandwidth : float
            The smoother's kernel bandwidth (as ``compare``'s).
        groups : array-like of shape (m,), optional
            A group label per pool instance: the comparison within every group and overall
            (a ``GroupResult`` of comparisons).

        Returns
        -------
        ComparisonResult or GroupResult
            The result ``compare`` returns for the labeled prefix; NaN values before its first
            label.

        Raises
        ------
        ShapeError
            The session evaluates one model (use ``estimate``).
        """
        if groups is not None:
            if self.plan.n_models < 2:
                raise ShapeError("compare: this session evaluates one model; use estimate().")
            return _report().by_group(self._store, self._stored, groups, None, estimator, features,
                             bandwidth)  # fmt: skip
        return _report().compare(self._store, self._stored, estimator, features, bandwidth)

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
        instance (a stopping time of the draw sequence).

        Parameters
        ----------
        max_points : int
            At most this many prefixes, spread evenly over the labeled instances.
        estimator : {"assisted", "snis"}, optional
            Overrides the session's estimator (``plan.estimator``).
        features : array-like of shape (m, d), optional
            The pool's features, as in ``estimate``.
        bandwidth : float
            The smoother's kernel bandwidth, as in ``estimate``.

        Returns
        -------
        pandas.DataFrame
            One row per point; columns ``n_labels``, ``cost``, ``n_draws``, ``estimate``,
            ``stderr``, ``low``, ``high`` — for comparisons the difference, its standard
            error and interval, plus ``p_value``. Empty before the first label.

        Notes
        -----
        The band (``low``, ``high``) is the design-based interval (logit or Wald): the
        tempered-model score interval that ``estimate`` joins to it costs a pass over the
        pool per point (a 60-point trajectory on 5,000 instances took 1 s with it, 0.04 s
        without).
        """
        return _report().trajectory(
            self._store, self._stored, max_points, estimator, features, bandwidth
        )

    # ------------------------------------------------------------------- reporting
    def progress(self) -> SessionProgress:
        """Where the campaign stands: labels and cost spent against the budget, draws,
        pending ids.

        Returns
        -------
        SessionProgress
            Counts and whether the campaign is finished (nothing more to hand out) and
            complete (finished and nothing pending: the estimate is final).
        """
        return ledger.progress(self._store, self._stored, lambda: self.stopped)

    def labels_frame(self) -> pd.DataFrame:
        """Every recorded label with its hand-out and draw information, in hand-out order.

        Returns
        -------
        pandas.DataFrame
            Columns ``id``, ``label``, ``annotator``, ``timestamp`` (UTC, ISO 8601),
            ``order`` (1-based hand-out rank), ``batch``, ``first_draw`` (0-based index of the
            instance's first draw in the sequence), ``times_drawn`` (draws of it in the
            campaign so far), ``q`` (its sampling probability) and ``session_id``. A ranked
            pool has one row per item of each labeled query, with ``item`` and ``grade`` in
            place of ``label`` (the columns id,item,grade a ranked labels input takes). The
            table is a valid labels input: ``record`` accepts it again.
        """
        return ledger.labels_frame(self._store, self._stored)

    def audit_frame(self) -> pd.DataFrame:
        """The audit table: every refused or accepted relabel, oldest first.

        Returns
        -------
        pandas.DataFrame
            Columns ``at`` (UTC time), ``action`` (``"overwrite"`` or ``"refused"``), ``id``,
            ``old_label``, ``new_label``, ``old_annotator``, ``annotator``.
        """
        return ledger.audit_frame(self._store, self._stored)
