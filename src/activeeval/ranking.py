"""Active evaluation of ranking functions: DCG and ERR with graded relevance (thesis Ch. 6).

A pool holds ``m`` queries; a ranking function returns an ordered list of items per query, and
a ``GradedRelevance`` gives every listed item a distribution over the grades 0, ..., |Y| − 1.
``activeeval.evaluate`` and ``activeeval.compare`` accept it directly. The functions here give
the sampling distributions of eq. 6.10 and 6.11 (Derivation 1), computed by the dynamic
programs of Appendix A.1 instead of the sum over |Y|^|r(x)| label vectors of eq. 6.12, and turn
an oracle's grades into per-query values ℓ(r(x), y) for the estimators.

The derivations, the corrections to Appendix A.1 and the layout of the computation are on the
*Ranking* page of the documentation (``docs/how-it-works/ranking.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import (
    check_costs,
    check_finite_array,
    check_option,
    check_probability_rows,
    check_safeguards,
    pool_distribution,
)
from .errors import (
    InvalidCostsError,
    InvalidOffsetsError,
    InvalidVarianceError,
    LabelSpaceError,
    RankingItemsError,
    ShapeError,
    UnknownOptionError,
)
from .measures import Measure
from .methods import DEFAULT_MIX, RANKING_METHODS

__all__ = [
    "DCG",
    "ERR",
    "RANKING_METHODS",
    "GradedRelevance",
    "QueryValue",
    "RankingMeasure",
    "get_ranking_measure",
    "grades_from_classifier",
    "grades_from_regression",
    "ranking_difference_expectation",
    "ranking_difference_moment",
    "ranking_distribution",
    "ranking_expectation",
    "ranking_intrinsic_difference",
    "ranking_intrinsic_value",
    "ranking_mixed_pair",
    "ranking_pair_values",
    "ranking_query_costs",
    "ranking_second_moment",
    "ranking_union",
    "ranking_values",
]

#: Padded block size (float64 entries per array) of the dynamic programs; bounds their memory.
_CHUNK_ELEMENTS = 1 << 19
#: Block size of the comparative ERR program, which holds three float and three boolean
#: (queries, positions₁, positions₂) blocks at once; small enough to stay in cache.
_CROSS_CHUNK_ELEMENTS = 1 << 18

#: Position standing for "not in this list" (r⁻¹(x, z) = ∞, eq. A.10).
_ABSENT = np.iinfo(np.int64).max


# =============================================================================== the pool
class GradedRelevance:
    """Per-item grade distributions of a ranking function over a pool of queries.

    The ranked lists of a pool of ``m`` queries, stored flat (query after query, each in the
    ranker's order), with the relevance model's distribution over the grades of every listed
    item (thesis Ch. 6). Pass it to ``activeeval.evaluate`` (one ranker) or
    ``activeeval.compare`` (a pair) in place of a predictive distribution.

    Parameters
    ----------
    proba : array-like of shape (total_items, n_grades)
        ``proba[j, g]`` is p(y = g | x, z; θ) for the j-th flat item (eq. 6.3): grade ``g`` is
        the column index (0 irrelevant, ``n_grades − 1`` perfectly relevant). Rows lie on the
        simplex (±1e-6), as for ``Categorical``. Within a query the items are in the ranker's
        order (best first).
    offsets : array-like of int, shape (m + 1,)
        Query ``i`` spans rows ``offsets[i]:offsets[i + 1]``; ``offsets[0] == 0``, non-decreasing,
        ``offsets[-1] == total_items``. An empty list is allowed (its DCG and ERR are 0).
    items : array-like of shape (total_items,), optional
        Item ids (ints or strings), unique within a query, identifying the same item across two
        rankers of the same query. Needed to compare rankers.
    costs : array-like of shape (total_items,), optional
        Labeling cost of every item (> 0; the thesis takes it logarithmic in document length).
        A query costs the sum over its items, scaled to mean one over the pool (see
        ``query_costs``).

    Attributes
    ----------
    n : int
        Number of queries m.
    n_grades : int
        |Y|, the number of grades.
    lengths : ndarray of int, shape (m,)
        |r(x)|, the length of every list.
    query_costs : ndarray of shape (m,) or None
        λ(x), the summed item costs of each query scaled to mean one; None without costs.

    See Also
    --------
    activeeval.DCG : Discounted cumulative gain.
    activeeval.ERR : Expected reciprocal rank.
    activeeval.grades_from_regression : Grade distributions from a regressor.
    activeeval.ranking.ranking_distribution : The sampling distribution over the queries.

    Notes
    -----
    Costs are in the thesis's unit (Sec. 6.3): a campaign's budget then counts average queries,
    whereas per-query ``costs=`` given to a campaign are used as they are. With a depth-k
    measure, ``truncated(k)`` leaves only the items that count, so only they are graded and
    paid for. See the *Ranking* page of the documentation (``docs/how-it-works/ranking.md``).

    Examples
    --------
    A pool of 100 queries with 4 items each, and an oracle that returns a query's grades:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> rng = np.random.default_rng(0)
    >>> grades = rng.integers(0, 3, size=400)
    >>> proba = np.full((400, 3), 0.1)
    >>> proba[np.arange(400), grades] = 0.8
    >>> rel = ae.GradedRelevance(proba, offsets=np.arange(0, 401, 4))
    >>> rel
    GradedRelevance(n=100, total_items=400, n_grades=3, items=no, costs=no)
    >>> oracle = lambda idx: [grades[4 * i : 4 * i + 4] for i in idx]
    >>> res = ae.evaluate(rel, oracle, "dcg", budget=30, random_state=0)
    >>> print(f"{res.estimate:.2f} from {res.n_labels} labeled queries")
    3.73 from 30 labeled queries
    """

    def __init__(
        self,
        proba: ArrayLike,
        offsets: ArrayLike,
        items: ArrayLike | None = None,
        costs: ArrayLike | None = None,
    ) -> None:
        self.proba = _check_grade_rows(proba)
        self.offsets = _check_offsets(offsets, self.proba.shape[0], "offsets", "proba")
        self.items = None if items is None else _check_items(items, self.offsets)
        self.item_costs = check_costs(costs, self.proba.shape[0], "costs")

    @classmethod
    def _trusted(
        cls,
        proba: NDArray[np.float64],
        offsets: NDArray[np.int64],
        items: NDArray[Any] | None,
        item_costs: NDArray[np.float64] | None,
    ) -> GradedRelevance:
        out = object.__new__(cls)
        out.proba, out.offsets, out.items, out.item_costs = proba, offsets, items, item_costs
        return out

    @property
    def n(self) -> int:
        """Number of queries in the pool."""
        return int(self.offsets.shape[0] - 1)

    def __len__(self) -> int:
        return self.n

    @property
    def n_grades(self) -> int:
        """|Y|, the number of relevance grades."""
        return int(self.proba.shape[1])

    @property
    def total_items(self) -> int:
        return int(self.proba.shape[0])

    @cached_property
    def lengths(self) -> NDArray[np.int64]:
        """|r(x)| for every query."""
        return np.diff(self.offsets)

    @cached_property
    def query_of_item(self) -> NDArray[np.int64]:
        """Query index of every flat item."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.lengths)

    @cached_property
    def positions(self) -> NDArray[np.int64]:
        """0-based rank of every flat item in its query's list (r⁻¹(x, z) − 1, eq. A.10)."""
        return np.arange(self.total_items, dtype=np.int64) - np.repeat(
            self.offsets[:-1], self.lengths
        )

    @property
    def query_costs(self) -> NDArray[np.float64] | None:
        """λ(x): the sum of the item costs of each query, scaled to mean one over the pool (the
        thesis's cost unit, Sec. 6.3); None without item costs."""
        return ranking_query_costs(self)

    def take(self, index: ArrayLike) -> GradedRelevance:
        """The pool restricted to the queries ``index`` (in that order, repeats allowed).

        Parameters
        ----------
        index : array-like of int, shape (n,)
            Query indices in ``[-m, m)``.

        Returns
        -------
        GradedRelevance
            ``n`` queries with their items, ids and costs.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
        ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
        >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
        >>> rel.take([1, 1, 0]).lengths.tolist()
        [3, 3, 2]
        """
        idx = np.asarray(index)
        if idx.size == 0:
            idx = idx.astype(np.int64)
        if (
            idx.ndim != 1
            or idx.dtype.kind not in "iu"
            or (idx.size and (idx.min() < -self.n or idx.max() >= self.n))
        ):
            raise ShapeError(f"index: expected 1-d integer query indices in [0, {self.n}).")
        idx = idx.astype(np.int64)
        idx = np.where(idx < 0, idx + self.n, idx)
        lens = self.lengths[idx]
        offsets = np.zeros(idx.shape[0] + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.repeat(self.offsets[idx] - offsets[:-1], lens) + np.arange(offsets[-1])
        return self._rows(flat, offsets)

    def truncated(self, k: int) -> GradedRelevance:
        """Every list cut to its top ``k`` items (a shorter list whole).

        That is all DCG@k and ERR@k look at, hence all that needs grades (thesis Sec. 6.3). A
        campaign's oracle grades every item of the lists it is given, and a query costs all of
        their items, so pass ``rel.truncated(k)`` (for a comparison, both rankers truncated)
        with ``DCG(k)`` or ``ERR(k)`` to grade, and pay for, only the top k; the estimand is
        the same.

        Parameters
        ----------
        k : int
            Truncation depth, ≥ 1.

        Returns
        -------
        GradedRelevance
            The same queries with at most ``k`` items each.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
        ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
        >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
        >>> rel.truncated(2).offsets.tolist()
        [0, 2, 4]
        """
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ShapeError(f"k: the truncation depth must be a positive integer, got {k!r}.")
        keep = self.positions < k
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.minimum(self.lengths, k), out=offsets[1:])
        return self._rows(keep, offsets)

    def _rows(self, rows: NDArray[Any], offsets: NDArray[np.int64]) -> GradedRelevance:
        """The flat items ``rows`` (indices or a mask) with their ids and costs, as queries
        spanning ``offsets``."""
        return GradedRelevance._trusted(
            self.proba[rows],
            offsets,
            None if self.items is None else self.items[rows],
            None if self.item_costs is None else self.item_costs[rows],
        )

    def uniform(self) -> GradedRelevance:
        """The same lists with a uniform grade distribution p(y | x, z) = 1/|Y|.

        The ``active_uniD`` baseline of Sec. 6.3, for rankers without a relevance model.

        Returns
        -------
        GradedRelevance
            Same offsets, ids and costs; every row of ``proba`` is 1/|Y|.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> rel = ae.GradedRelevance(np.array([[0.2, 0.8], [0.9, 0.1]]), offsets=[0, 2])
        >>> rel.uniform().proba.tolist()
        [[0.5, 0.5], [0.5, 0.5]]
        """
        g = self.n_grades
        proba = np.broadcast_to(np.full(g, 1.0 / g), self.proba.shape)
        return GradedRelevance._trusted(proba, self.offsets, self.items, self.item_costs)

    def __repr__(self) -> str:
        return (
            f"GradedRelevance(n={self.n}, total_items={self.total_items}, "
            f"n_grades={self.n_grades}, items={'yes' if self.items is not None else 'no'}, "
            f"costs={'yes' if self.item_costs is not None else 'no'})"
        )


def _check_grade_rows(proba: ArrayLike) -> NDArray[np.float64]:
    """Grade distributions as class probabilities; zero rows are allowed (every list of the
    pool empty, e.g. one ranker in a comparison), the pool itself is ``offsets``."""
    shape = np.shape(proba)
    if len(shape) == 2 and shape[0] == 0 and shape[1] >= 1:
        return np.zeros(shape)
    return check_probability_rows(proba, "proba")


def _check_offsets(offsets: ArrayLike, total: int, name: str, data_name: str) -> NDArray[np.int64]:
    """Offsets of a ragged array: integers, start at 0, non-decreasing, end at ``total``."""
    try:
        raw = np.asarray(offsets)
    except (TypeError, ValueError) as exc:
        raise InvalidOffsetsError(f"{name}: cannot be read as an integer array ({exc}).") from exc
    if raw.ndim != 1 or raw.shape[0] < 2:
        raise InvalidOffsetsError(
            f"{name}: expected a 1-d array of m + 1 ≥ 2 boundaries (query i spans "
            f"offsets[i]:offsets[i+1]), got shape {raw.shape}."
        )
    if raw.dtype.kind == "f":
        if not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
            raise InvalidOffsetsError(f"{name}: entries must be integers.")
    elif raw.dtype.kind not in "iu":
        raise InvalidOffsetsError(f"{name}: entries must be integers, got dtype {raw.dtype}.")
    off = raw.astype(np.int64)
    if off[0] != 0:
        raise InvalidOffsetsError(f"{name}: must start at 0, starts at {off[0]}.")
    steps = np.diff(off)
    if (steps < 0).any():
        bad = int(np.flatnonzero(steps < 0)[0])
        raise InvalidOffsetsError(
            f"{name}: decreases from {off[bad]} to {off[bad + 1]} at query {bad}; offsets must "
            "be non-decreasing (each query's items are contiguous)."
        )
    if off[-1] != total:
        raise InvalidOffsetsError(
            f"{name}: ends at {off[-1]} but {data_name} has {total} rows; the last offset must "
            "equal the number of items."
        )
    return off


def _check_items(items: ArrayLike, offsets: NDArray[np.int64]) -> NDArray[Any]:
    ids = np.asarray(items)
    total = int(offsets[-1])
    if ids.ndim != 1 or ids.shape[0] != total:
        raise ShapeError(
            f"items: expected {total} item ids (one per row of proba), got {ids.shape}."
        )
    if total == 0:
        return ids
    n = offsets.shape[0] - 1
    codes, base = _item_codes([ids], n, "items: ids must be mutually comparable")
    query = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    keys = np.sort(query * base + codes)
    dup = keys[1:] == keys[:-1]
    if dup.any():
        q = int(keys[1:][dup][0]) // base
        raise RankingItemsError(
            f"items: query {q} lists an item id twice; ids must be unique within a query (the "
            "same id in two rankers' lists of a query marks the same item)."
        )
    return ids


def _item_codes(
    ids: list[NDArray[Any]], n_queries: int, fail: str
) -> tuple[NDArray[np.int64], int]:
    """Integer codes of item ids (concatenated) and their range, so that query · range + code
    is a unique key of a (query, item) pair. Integer ids are their own codes (no sort)."""
    flat = np.concatenate(ids) if len(ids) > 1 else ids[0]
    if flat.dtype.kind in "iu" and flat.size:
        low, high = int(flat.min()), int(flat.max())
        base = high - low + 1
        if base * max(n_queries, 1) < 2**62:
            return flat.astype(np.int64) - low, base
    try:
        _, inverse = np.unique(flat, return_inverse=True)
    except TypeError as exc:
        raise RankingItemsError(f"{fail} ({exc}); use one id type.") from exc
    codes = inverse.ravel().astype(np.int64)
    return codes, int(codes.max()) + 1 if codes.size else 1


# ============================================================================== measures
@dataclass(frozen=True)
class RankingMeasure:
    """Per-query ranking performance ℓ(r(x), y) (greater is better), truncated at ``k``.

    The base of ``DCG`` and ``ERR``: a measure is a position weight per rank and a value κ(y)
    per grade; the methods compute its values from labels and its expectations under a
    relevance model. Use a subclass; this class itself has no weights.

    Parameters
    ----------
    k : int, optional
        Truncation depth (≥ 1): only the top ``k`` items of a list count. None uses the whole
        list.

    See Also
    --------
    activeeval.DCG : Discounted cumulative gain (eq. 6.1).
    activeeval.ERR : Expected reciprocal rank (eq. 6.2).
    activeeval.ranking.get_ranking_measure : A measure from its name.

    Examples
    --------
    >>> import activeeval as ae
    >>> m = ae.DCG(k=10)
    >>> isinstance(m, ae.RankingMeasure), m.k, m.greater_is_better
    (True, 10, True)
    """

    k: int | None = None

    name: ClassVar[str] = "ranking"
    greater_is_better: ClassVar[bool] = True

    @property
    def value_range(self) -> tuple[float, float]:
        """Where a per-query value (and so the ranking risk) can lie: gains are ≥ 0."""
        return (0.0, math.inf)

    def __post_init__(self) -> None:
        if self.k is not None and (
            isinstance(self.k, bool) or not isinstance(self.k, int | np.integer) or self.k < 1
        ):
            raise ShapeError(
                f"k: the truncation depth must be a positive integer or None, got {self.k!r}."
            )

    def bind(self, relevance: GradedRelevance | None = None) -> RankingMeasure:
        """The measure with data-dependent parameters resolved from ``relevance``.

        Parameters
        ----------
        relevance : GradedRelevance, optional
            The relevance model the measure will be computed under.

        Returns
        -------
        RankingMeasure
            ``self`` for DCG; ERR fills in ``max_grade``.
        """
        return self

    def position_weights(self, positions: NDArray[np.int64]) -> NDArray[np.float64]:
        """Weight of rank ``positions + 1``; zero beyond ``k``.

        Parameters
        ----------
        positions : ndarray of int
            0-based ranks.

        Returns
        -------
        ndarray of float
            One weight per entry of ``positions``.
        """
        raise NotImplementedError

    def grade_values(self, n_grades: int) -> NDArray[np.float64]:
        """κ(y) for y = 0, ..., n_grades − 1.

        Parameters
        ----------
        n_grades : int
            Number of grades |Y|.

        Returns
        -------
        ndarray of shape (n_grades,)
            The value of each grade.
        """
        raise NotImplementedError

    def values(self, labels: ArrayLike, offsets: ArrayLike) -> NDArray[np.float64]:
        """ℓ(r(x), y) per query from graded labels (as ``ranking_values``).

        Parameters
        ----------
        labels : array-like of int, shape (total_items,)
            Grades in the ranker's order, query after query.
        offsets : array-like of int, shape (n + 1,)
            Query i's labels are ``labels[offsets[i]:offsets[i+1]]``.

        Returns
        -------
        ndarray of shape (n,)
            The per-query value ℓ.

        Examples
        --------
        >>> import activeeval as ae
        >>> ae.DCG().values([2, 0, 2, 1, 0], [0, 2, 5]).round(3).tolist()
        [3.0, 3.631]
        """
        return ranking_values(self, labels, offsets)

    def expectation(self, relevance: GradedRelevance) -> NDArray[np.float64]:
        """E[ℓ(r(x), y) | x; θ] per query (eq. 6.12), as ``ranking_expectation``.

        Parameters
        ----------
        relevance : GradedRelevance
            The ranker's lists and grade distributions.

        Returns
        -------
        ndarray of shape (m,)
            The expected value of every query under the relevance model.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
        ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
        >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
        >>> ae.ERR().expectation(rel).round(3).tolist()
        [0.567, 0.539]
        """
        return ranking_expectation(relevance, self)

    def intrinsic_value(self, relevance: GradedRelevance) -> float:
        """Ř, the pool average of E[ℓ | x; θ] (eq. 4.22), as ``ranking_intrinsic_value``.

        Parameters
        ----------
        relevance : GradedRelevance
            The ranker's lists and grade distributions.

        Returns
        -------
        float
            The intrinsic value, uniform over the queries.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
        ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
        >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
        >>> round(ae.ERR().intrinsic_value(rel), 3)
        0.553
        """
        return ranking_intrinsic_value(relevance, self)

    def conditional_second_moment(
        self, relevance: GradedRelevance, center: float
    ) -> NDArray[np.float64]:
        """E[(ℓ − c)² | x; θ] per query (eq. 6.10), as ``ranking_second_moment``.

        Parameters
        ----------
        relevance : GradedRelevance
            The ranker's lists and grade distributions.
        center : float
            The centre c, usually the intrinsic value Ř.

        Returns
        -------
        ndarray of shape (m,)
            The second moment about ``center`` of every query.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
        ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
        >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
        >>> ae.DCG().conditional_second_moment(rel, 2.5).round(3).tolist()
        [1.614, 1.986]
        """
        return ranking_second_moment(relevance, self, center)

    def _limit(self, lengths: NDArray[np.int64]) -> NDArray[np.int64]:
        return lengths if self.k is None else np.minimum(lengths, self.k)


@dataclass(frozen=True)
class DCG(RankingMeasure):
    """Discounted cumulative gain (Järvelin & Kekäläinen, 2002; thesis eq. 6.1).

    ℓ_dcg(r(x), y) = Σ_{i ≤ min(k, |r(x)|)} (2^{y_{r_i}} − 1) / log₂(i + 1): the gain
    2^y − 1 of every listed item, discounted by its rank.

    Parameters
    ----------
    k : int, optional
        Truncation depth (DCG@k); None uses the whole list.

    See Also
    --------
    activeeval.ERR : Expected reciprocal rank.
    activeeval.GradedRelevance : The ranked lists and their grade distributions.
    activeeval.ranking.ranking_values : DCG of labeled queries.

    Examples
    --------
    Two queries with grades (2, 0) and (2, 1, 0), and the expected DCG under a relevance model:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> ae.DCG().values([2, 0, 2, 1, 0], offsets=[0, 2, 5]).round(3).tolist()
    [3.0, 3.631]
    >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
    >>> ae.DCG().expectation(rel).round(3).tolist()
    [2.542, 2.415]
    """

    name: ClassVar[str] = "dcg"

    def position_weights(self, positions: NDArray[np.int64]) -> NDArray[np.float64]:
        """1 / log₂(rank + 1) for rank ``positions + 1``; zero beyond ``k``.

        Parameters
        ----------
        positions : ndarray of int
            0-based ranks.

        Returns
        -------
        ndarray of float
            One weight per entry of ``positions``.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> ae.DCG(k=2).position_weights(np.arange(4)).round(3).tolist()
        [1.0, 0.631, 0.0, 0.0]
        """
        w = 1.0 / np.log2(positions + 2.0)
        return w if self.k is None else np.where(positions < self.k, w, 0.0)

    def grade_values(self, n_grades: int) -> NDArray[np.float64]:
        """The gain 2^y − 1 of grades y = 0, ..., n_grades − 1.

        Parameters
        ----------
        n_grades : int
            Number of grades |Y|.

        Returns
        -------
        ndarray of shape (n_grades,)
            The gains.

        Examples
        --------
        >>> import activeeval as ae
        >>> ae.DCG().grade_values(3).tolist()
        [0.0, 1.0, 3.0]
        """
        return np.exp2(np.arange(n_grades, dtype=float)) - 1.0


@dataclass(frozen=True)
class ERR(RankingMeasure):
    """Expected reciprocal rank (Chapelle et al., 2009; thesis eq. 6.2).

    ℓ_err(r(x), y) = Σ_{i ≤ min(k, |r(x)|)} (1/i) R(y_{r_i}) ∏_{l<i} (1 − R(y_{r_l})), with the
    stopping probability R(y) = (2^y − 1) / 2^{max_grade}: the expected reciprocal rank of the
    item at which a user scanning the list stops. Values lie in [0, 1].

    Parameters
    ----------
    k : int, optional
        Truncation depth (ERR@k); None uses the whole list.
    max_grade : int, optional
        y_max of eq. 6.2. None takes ``n_grades − 1`` of the relevance model (``bind``);
        computing values from labels alone needs it explicitly.

    See Also
    --------
    activeeval.DCG : Discounted cumulative gain.
    activeeval.GradedRelevance : The ranked lists and their grade distributions.
    activeeval.ranking.ranking_values : ERR of labeled queries.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> ae.ERR(max_grade=2).values([2, 0, 2, 1, 0], offsets=[0, 2, 5]).round(3).tolist()
    [0.75, 0.781]
    >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
    >>> ae.ERR().expectation(rel).round(3).tolist()
    [0.567, 0.539]
    """

    max_grade: int | None = None

    name: ClassVar[str] = "err"

    @property
    def value_range(self) -> tuple[float, float]:
        return (0.0, 1.0)  # a probability-weighted mean of reciprocal ranks

    def __post_init__(self) -> None:
        super().__post_init__()
        mg = self.max_grade
        if mg is not None and (
            isinstance(mg, bool) or not isinstance(mg, int | np.integer) or mg < 1
        ):
            raise ShapeError(f"max_grade: must be a positive integer or None, got {mg!r}.")

    def bind(self, relevance: GradedRelevance | None = None) -> ERR:
        """The measure with ``max_grade`` taken from ``relevance`` when it is None.

        Parameters
        ----------
        relevance : GradedRelevance, optional
            The relevance model; its top grade ``n_grades − 1`` (at least 1) becomes
            ``max_grade``. None returns the measure unchanged.

        Returns
        -------
        ERR
            A copy with ``max_grade`` set, or ``self``.

        Raises
        ------
        LabelSpaceError
            When ``max_grade`` is below the model's top grade (R(y) would exceed 1).

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> rel = ae.GradedRelevance(np.full((2, 5), 0.2), offsets=[0, 2])
        >>> ae.ERR(k=10).bind(rel)
        ERR(k=10, max_grade=4)
        """
        if relevance is None:
            return self
        top = relevance.n_grades - 1
        if self.max_grade is None:
            return replace(self, max_grade=max(top, 1))
        if self.max_grade < top:
            raise LabelSpaceError(
                f"max_grade: is {self.max_grade} but the relevance model has grades up to {top}; "
                "R(y) = (2^y − 1)/2^max_grade would exceed 1. Pass max_grade ≥ n_grades − 1."
            )
        return self

    def _max_grade(self) -> int:
        if self.max_grade is None:
            raise LabelSpaceError(
                "max_grade: ERR needs y_max (eq. 6.2) to turn grades into stopping "
                "probabilities; pass ERR(max_grade=...) or a GradedRelevance to bind it."
            )
        return int(self.max_grade)

    def position_weights(self, positions: NDArray[np.int64]) -> NDArray[np.float64]:
        """The reciprocal rank 1 / (``positions`` + 1); zero beyond ``k``.

        Parameters
        ----------
        positions : ndarray of int
            0-based ranks.

        Returns
        -------
        ndarray of float
            One weight per entry of ``positions``.

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> ae.ERR(k=3).position_weights(np.arange(4)).round(3).tolist()
        [1.0, 0.5, 0.333, 0.0]
        """
        w = np.reciprocal(positions + 1.0)
        return w if self.k is None else np.where(positions < self.k, w, 0.0)

    def grade_values(self, n_grades: int) -> NDArray[np.float64]:
        """The stopping probability R(y) = (2^y − 1) / 2^max_grade of y = 0, ..., n_grades − 1.

        Parameters
        ----------
        n_grades : int
            Number of grades |Y|.

        Returns
        -------
        ndarray of shape (n_grades,)
            The stopping probabilities.

        Raises
        ------
        LabelSpaceError
            When ``max_grade`` is None (bind the measure to a relevance model first).

        Examples
        --------
        >>> import activeeval as ae
        >>> ae.ERR(max_grade=2).grade_values(3).tolist()
        [0.0, 0.25, 0.75]
        """
        gains = np.exp2(np.arange(n_grades, dtype=float)) - 1.0
        return gains / float(2.0 ** self._max_grade())


def get_ranking_measure(measure: RankingMeasure | str) -> RankingMeasure:
    """A ranking measure from its name: ``"dcg"`` → ``DCG()``, ``"err"`` → ``ERR()``.

    Measure objects pass through unchanged.

    Parameters
    ----------
    measure : RankingMeasure or str
        ``"dcg"`` or ``"err"`` (case-insensitive), or a ``DCG`` / ``ERR`` object.

    Returns
    -------
    RankingMeasure
        The measure, untruncated and (for ERR) with ``max_grade=None`` when given by name.

    Raises
    ------
    UnknownOptionError
        For any other name or object.

    See Also
    --------
    activeeval.DCG : Discounted cumulative gain.
    activeeval.ERR : Expected reciprocal rank.

    Examples
    --------
    >>> import activeeval as ae
    >>> from activeeval.ranking import get_ranking_measure
    >>> get_ranking_measure("err")
    ERR(k=None, max_grade=None)
    >>> get_ranking_measure(ae.DCG(k=5))
    DCG(k=5)
    """
    if isinstance(measure, RankingMeasure):
        return measure
    if isinstance(measure, str):
        key = check_option(measure, ("dcg", "err"), "measure")
        return DCG() if key == "dcg" else ERR()
    raise UnknownOptionError(
        f"measure: expected DCG(...), ERR(...), 'dcg' or 'err' for rankings, got {measure!r}."
    )


# ============================================================================ conversions
def grades_from_regression(mean: ArrayLike, std: ArrayLike, n_grades: int) -> NDArray[np.float64]:
    """Grade distributions from a regressor's Gaussian prediction of the relevance grade.

    The grade is the real-valued prediction N(mean, std²) rounded to the nearest grade, with
    the outer bins open; a zero ``std`` puts all mass on the bin of ``mean`` (a point
    prediction). The thesis obtains p(y_z | x, z; θ) from a random forest regressor in this
    spirit (Sec. 6.3.1), e.g. ``std`` from the spread of the trees.

    Parameters
    ----------
    mean : array-like of shape (total_items,)
        Predicted grade of every flat item.
    std : array-like of shape (total_items,)
        Its standard deviation (≥ 0).
    n_grades : int
        |Y| ≥ 2.

    Returns
    -------
    ndarray of shape (total_items, n_grades)
        Rows on the simplex, ready for ``GradedRelevance``.

    See Also
    --------
    activeeval.grades_from_classifier : Grade distributions from a classifier over grades.
    activeeval.GradedRelevance : The ranked lists and their grade distributions.

    Notes
    -----
    p(y = g) = Φ((g + ½ − mean)/std) − Φ((g − ½ − mean)/std) for 0 < g < n_grades − 1,
    p(0) = Φ((½ − mean)/std), p(n_grades − 1) = 1 − Φ((n_grades − 3/2 − mean)/std). See the
    *Ranking* page of the documentation (``docs/how-it-works/ranking.md``).

    Examples
    --------
    >>> from activeeval import grades_from_regression
    >>> proba = grades_from_regression([0.2, 1.5, 2.0], std=[0.5, 0.5, 0.0], n_grades=3)
    >>> proba.round(3).tolist()
    [[0.726, 0.27, 0.005], [0.023, 0.477, 0.5], [0.0, 0.0, 1.0]]
    """
    mu = check_finite_array(mean, "mean", ndim=1)
    sd = check_finite_array(std, "std", ndim=1)
    if sd.shape != mu.shape:
        raise ShapeError(f"std: has {sd.shape[0]} entries but mean has {mu.shape[0]}.")
    if (sd < 0).any():
        bad = int(np.flatnonzero(sd < 0)[0])
        raise InvalidVarianceError(
            f"std: entry {bad} is {sd[bad]:g}; a predictive standard deviation must be ≥ 0."
        )
    if isinstance(n_grades, bool) or not isinstance(n_grades, int | np.integer) or n_grades < 2:
        raise ShapeError(f"n_grades: need an integer ≥ 2, got {n_grades!r}.")
    edges = np.arange(n_grades - 1, dtype=float) + 0.5
    gap = edges[None, :] - mu[:, None]
    pos = sd > 0
    scale = np.where(pos, sd, 1.0)[:, None]
    from scipy import special  # here, not at import: scipy.special alone takes 0.15 s

    cdf = np.where(pos[:, None], special.ndtr(gap / scale), (gap >= 0).astype(float))
    proba = np.diff(cdf, axis=1, prepend=0.0, append=1.0)
    return np.clip(proba, 0.0, 1.0)


def grades_from_classifier(
    proba: ArrayLike, classes: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Grade distributions from a classifier over grades (e.g. ordinal logit, Sec. 6.3.1).

    The columns of ``proba`` are placed at their grade, so that column ``g`` of the result is
    p(y = g). Grades the classifier never saw get probability 0.

    Parameters
    ----------
    proba : array-like of shape (total_items, K)
        Class probabilities of every flat item, e.g. ``predict_proba`` output; rows sum to 1.
    classes : array-like of int, shape (K,), optional
        The grade of each column (scikit-learn's ``classes_``): unique non-negative integers.
        Default ``0, ..., K − 1``.

    Returns
    -------
    ndarray of shape (total_items, max(classes) + 1)
        Rows on the simplex, ready for ``GradedRelevance``.

    See Also
    --------
    activeeval.grades_from_regression : Grade distributions from a regressor.
    activeeval.GradedRelevance : The ranked lists and their grade distributions.

    Examples
    --------
    A classifier that never saw grade 1:

    >>> from activeeval import grades_from_classifier
    >>> grades_from_classifier([[0.7, 0.3], [0.2, 0.8]], classes=[0, 2]).tolist()
    [[0.7, 0.0, 0.3], [0.2, 0.0, 0.8]]
    """
    p = check_probability_rows(proba, "proba")
    if classes is None:
        return p
    cls = np.asarray(classes)
    if cls.ndim != 1 or cls.shape[0] != p.shape[1]:
        raise ShapeError(
            f"classes: expected {p.shape[1]} grades (one per column), got {cls.shape}."
        )
    if cls.dtype.kind not in "iuf" or np.any(cls != np.round(cls)) or np.any(cls < 0):
        raise LabelSpaceError(f"classes: grades must be non-negative integers, got {cls.tolist()}.")
    col = cls.astype(np.int64)
    if np.unique(col).shape[0] != col.shape[0]:
        raise LabelSpaceError("classes: grades must be unique.")
    out = np.zeros((p.shape[0], int(col.max()) + 1))
    out[:, col] = p
    return out


# =========================================================================== labels → ℓ
def ranking_values(
    measure: RankingMeasure | str, labels: ArrayLike, offsets: ArrayLike
) -> NDArray[np.float64]:
    """ℓ(r(x), y) for every query from the oracle's graded labels (eq. 6.1, 6.2).

    Parameters
    ----------
    measure : DCG, ERR, "dcg" or "err"
        ERR needs ``max_grade`` (bind it with ``ERR(...).bind(relevance)``).
    labels : array-like of int, shape (total_items,)
        Grades in the ranker's order, query after query.
    offsets : array-like of int, shape (n + 1,)
        Query i's labels are ``labels[offsets[i]:offsets[i+1]]``.

    Returns
    -------
    ndarray of shape (n,)
        The per-query loss ℓ fed to the self-normalized estimator (greater is better).

    See Also
    --------
    activeeval.ranking.ranking_pair_values : The values of two rankers from their union's labels.
    activeeval.ranking.QueryValue : Averages these values with importance weights.

    Examples
    --------
    Two queries graded (2, 0) and (2, 1, 0):

    >>> import activeeval as ae
    >>> from activeeval.ranking import ranking_values
    >>> ranking_values("dcg", [2, 0, 2, 1, 0], offsets=[0, 2, 5]).round(3).tolist()
    [3.0, 3.631]
    >>> ranking_values(ae.ERR(max_grade=2), [2, 0, 2, 1, 0], [0, 2, 5]).round(3).tolist()
    [0.75, 0.781]
    """
    meas = get_ranking_measure(measure)
    y = check_finite_array(labels, "labels", ndim=1)
    off = _check_offsets(offsets, y.shape[0], "offsets", "labels")
    if y.size and (np.any(y != np.round(y)) or y.min() < 0):
        bad = int(np.flatnonzero((y != np.round(y)) | (y < 0))[0])
        raise LabelSpaceError(
            f"labels: entry {bad} is {y[bad]:g}; grades are integers 0 (irrelevant), 1, ..., y_max."
        )
    grades = y.astype(np.int64)
    top = int(grades.max()) if grades.size else 0
    if isinstance(meas, ERR) and grades.size and top > meas._max_grade():
        bad = int(np.flatnonzero(grades > meas._max_grade())[0])
        raise LabelSpaceError(
            f"labels: entry {bad} is grade {grades[bad]} above max_grade={meas.max_grade}."
        )
    kappa = meas.grade_values(top + 1)[grades]
    lengths = np.diff(off)
    positions = np.arange(y.shape[0], dtype=np.int64) - np.repeat(off[:-1], lengths)
    if isinstance(meas, DCG):
        return _segment_sum(meas.position_weights(positions) * kappa, off)  # eq. 6.1
    # eq. 6.2: with a one-point grade distribution E[ℓ] is ℓ itself (E[κ] = κ, E[1 − κ] = 1 − κ).
    one_point = (kappa, kappa * kappa, 1.0 - kappa, (1.0 - kappa) ** 2)
    return _err_mean_second(one_point, off, meas, second=False)[0]


# ====================================================================== flat/padded engine
def _segment_sum(x: NDArray[np.float64], offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """Σ over each query's items; empty queries give 0."""
    starts = offsets[:-1]
    padded = np.append(x, 0.0)  # every start, even of trailing empty queries, is a valid index
    out = np.add.reduceat(padded, starts)
    out[offsets[1:] == starts] = 0.0
    return out


def _chunks(dims: Sequence[NDArray[np.int64]], budget: int) -> Iterator[NDArray[np.int64]]:
    """Query index blocks whose padded size count × Π max(dims) stays within ``budget``.

    Queries are visited in order of their own padded size, so each block pads to lists of
    similar length. The loop runs over blocks, not queries.
    """
    size = np.ones(dims[0].shape[0], dtype=np.int64)
    for d in dims:
        size *= np.maximum(d, 1)
    order = np.argsort(size, kind="stable")
    m, start = order.shape[0], 0
    while start < m:
        cap = max(1, budget // int(size[order[start]]))
        window = order[start : min(m, start + cap)]
        padded = np.arange(1, window.shape[0] + 1, dtype=np.int64)
        for d in dims:
            padded *= np.maximum.accumulate(np.maximum(d[window], 1))
        take = max(1, int(np.searchsorted(padded, budget, side="right")))
        yield window[:take]
        start += take


def _slots(
    starts: NDArray[np.int64], lengths: NDArray[np.int64], width: int
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Flat index of (query, position) for a padded block, and which slots hold an item."""
    pos = np.arange(width, dtype=np.int64)[None, :]
    valid = pos < lengths[:, None]
    return np.where(valid, starts[:, None] + pos, 0), valid


def _pad(
    flat: NDArray[Any], idx: NDArray[np.int64], valid: NDArray[np.bool_], fill: Any
) -> NDArray[Any]:
    if flat.shape[0] == 0:
        return np.full(idx.shape, fill, dtype=flat.dtype)
    return np.where(valid, flat[idx], fill)


def _exclusive_cumprod(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """out[..., i] = Π_{l<i} x[..., l] (empty product 1), without division."""
    out = np.ones_like(x)
    n = x.shape[axis]
    if n > 1:
        head = [slice(None)] * x.ndim
        tail = [slice(None)] * x.ndim
        head[axis] = slice(1, None)
        tail[axis] = slice(None, n - 1)
        np.cumprod(x[tuple(tail)], axis=axis, out=out[tuple(head)])
    return out


def _reverse_exclusive_cumprod(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """out[..., i] = Π_{l>i} x[..., l] (empty product 1), without division."""
    flip = [slice(None)] * x.ndim
    flip[axis] = slice(None, None, -1)
    return _exclusive_cumprod(x[tuple(flip)], axis)[tuple(flip)]


# ===================================================================== per-item moments
#: Per-item (E[κ], E[κ²], E[1 − κ], E[(1 − κ)²]) of ERR's stopping probability κ = R(y).
_ErrMoments = tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]
]


def _item_weights(meas: RankingMeasure, rel: GradedRelevance) -> NDArray[np.float64]:
    """Position weight of every flat item (a table lookup: one log per rank, not per item)."""
    longest = int(rel.lengths.max()) if rel.n else 0
    return meas.position_weights(np.arange(longest, dtype=np.int64))[rel.positions]


def _dcg_item_moments(
    proba: NDArray[np.float64], meas: RankingMeasure, rows: NDArray[np.bool_] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[2^y − 1] and Var[2^y − 1] per item (eq. A.1); the variance is centred per grade.
    Only ``rows`` are computed (others 0): items beyond the truncation depth never count."""
    sub = proba if rows is None else proba[rows]
    gains = meas.grade_values(proba.shape[1])
    mean = sub @ gains
    var = np.zeros_like(mean)
    for g, value in enumerate(gains):  # loop over grades
        dev = value - mean
        var += sub[:, g] * dev * dev
    if rows is None:
        return mean, var
    return _scatter(mean, rows, 0.0), _scatter(var, rows, 0.0)


def _scatter(x: NDArray[np.float64], rows: NDArray[np.bool_], fill: float) -> NDArray[np.float64]:
    out = np.full(rows.shape[0], fill)
    out[rows] = x
    return out


def _needed_rows(meas: RankingMeasure, *ranks: NDArray[np.int64]) -> NDArray[np.bool_] | None:
    """Items ranked within the truncation depth in any of ``ranks`` (None: all items)."""
    if meas.k is None:
        return None
    rows = ranks[0] < meas.k
    for r in ranks[1:]:
        rows |= r < meas.k
    return rows


def _map4(
    fn: Callable[[Any, Any], NDArray[np.float64]], xs: Sequence[Any], ys: Sequence[Any]
) -> _ErrMoments:
    """Apply ``fn`` to the four ERR moments pairwise."""
    return (fn(xs[0], ys[0]), fn(xs[1], ys[1]), fn(xs[2], ys[2]), fn(xs[3], ys[3]))


def _pad_moments(
    moments: _ErrMoments, idx: NDArray[np.int64], valid: NDArray[np.bool_]
) -> _ErrMoments:
    """Padded ERR moments; a pad has E[κ] = E[κ²] = 0 and E[1 − κ] = E[(1 − κ)²] = 1, so it
    neither contributes nor stops the user."""
    return _map4(lambda x, f: _pad(x, idx, valid, f), moments, (0.0, 0.0, 1.0, 1.0))


def _err_item_moments(
    proba: NDArray[np.float64], meas: RankingMeasure, rows: NDArray[np.bool_] | None = None
) -> _ErrMoments:
    """E[κ], E[κ²], E[1 − κ], E[(1 − κ)²] per item, κ = R(y) (eq. A.4), O(|Y|) each; only
    ``rows`` are computed (others those of a pad)."""
    sub = proba if rows is None else proba[rows]
    kappa = meas.grade_values(proba.shape[1])
    # One matrix-vector product per moment: gemv beats an (N, |Y|) @ (|Y|, 4) gemm by ~10x.
    out = (
        sub @ kappa,
        sub @ (kappa * kappa),
        sub @ (1.0 - kappa),
        sub @ ((1.0 - kappa) ** 2),
    )
    if rows is None:
        return out
    return _map4(lambda x, f: _scatter(x, rows, f), out, (0.0, 0.0, 1.0, 1.0))


# ============================================================================ absolute
def _err_mean_second(
    moments: _ErrMoments,
    offsets: NDArray[np.int64],
    meas: RankingMeasure,
    *,
    second: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[ℓ_err] and E[ℓ_err²] per query from per-item a = E[κ], b = E[κ²], s = E[1 − κ],
    t = E[(1 − κ)²] (Appendix A.1, absolute ERR), O(|r(x)|) per query.

    With w_i = 1/i (0 beyond k), P_i = Π_{l<i} s_l and T_i = Π_{l<i} t_l:

        E[ℓ]  = Σ_i w_i a_i P_i                                                  (eq. A.4)
        E[ℓ²] = Σ_i w_i² b_i T_i + 2 Σ_i w_i (a_i − b_i) T_i B_i                  (eq. A.6, A.9)
        B_i   = Σ_{l>i} w_l a_l Π_{i<k<l} s_k = w_{i+1} a_{i+1} + s_{i+1} B_{i+1}

    The cross term E[κ_{1:i} κ_{1:l}] = w_i w_l E[κ_i(1 − κ_i)] T_i a_l Π_{i<k<l} s_k follows
    from the split of eq. A.7. Eq. A.9 writes Π_{i<k<l} s_k as a ratio of suffix products; the
    backward recurrence for B avoids that division (and its underflow on long lists).
    """
    a, b, s, t = moments
    n = offsets.shape[0] - 1
    lengths = meas._limit(np.diff(offsets))
    mean, sq = np.zeros(n), np.zeros(n)
    starts = offsets[:-1]
    for rows in _chunks([lengths], _CHUNK_ELEMENTS):
        width = int(lengths[rows].max())
        if width == 0:
            continue
        idx, valid = _slots(starts[rows], lengths[rows], width)
        w = np.where(valid, meas.position_weights(np.arange(width, dtype=np.int64))[None, :], 0.0)
        pa = _pad(a, idx, valid, 0.0)
        ps = _pad(s, idx, valid, 1.0)
        c = w * pa
        mean[rows] = np.sum(c * _exclusive_cumprod(ps), axis=1)
        if not second:
            continue
        pb = _pad(b, idx, valid, 0.0)
        tt = _exclusive_cumprod(_pad(t, idx, valid, 1.0))
        back = np.zeros((width, rows.shape[0]))  # B transposed: columns contiguous
        cT, sT = c.T, ps.T
        for i in range(width - 2, -1, -1):  # loop over rank positions
            np.multiply(sT[i + 1], back[i + 1], out=back[i])
            back[i] += cT[i + 1]
        sq[rows] = np.sum(w * w * pb * tt, axis=1) + 2.0 * np.sum(
            w * (pa - pb) * tt * back.T, axis=1
        )
    return mean, sq


def _absolute_mean_var(
    rel: GradedRelevance, meas: RankingMeasure
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[ℓ | x; θ] and Var[ℓ | x; θ] per query."""
    if isinstance(meas, DCG):
        # eq. A.1-A.3: ℓ = Σ_i κ_i with independent κ_i, so the variance is Σ_i Var κ_i; this
        # is eq. A.3 with the cross terms 2 Σ_{i<l} E κ_i E κ_l folded into (E ℓ)².
        mu, var = _dcg_item_moments(rel.proba, meas, _needed_rows(meas, rel.positions))
        d = _item_weights(meas, rel)
        return _segment_sum(d * mu, rel.offsets), _segment_sum(d * d * var, rel.offsets)
    moments = _err_item_moments(rel.proba, meas, _needed_rows(meas, rel.positions))
    mean, sq = _err_mean_second(moments, rel.offsets, meas)
    return mean, np.maximum(sq - mean * mean, 0.0)


def ranking_expectation(
    relevance: GradedRelevance, measure: RankingMeasure | str
) -> NDArray[np.float64]:
    """E[ℓ(r(x), y) | x; θ] for every query (eq. 6.12; App. A.1), O(m |Y| max|r|).

    Parameters
    ----------
    relevance : GradedRelevance
        The ranker's lists and grade distributions.
    measure : DCG, ERR, "dcg" or "err"
        An ERR without ``max_grade`` takes the model's top grade.

    Returns
    -------
    ndarray of shape (m,)
        The expected value of every query under the relevance model.

    See Also
    --------
    activeeval.ranking.ranking_intrinsic_value : Its pool average Ř.
    activeeval.ranking.ranking_second_moment : E[(ℓ − c)² | x; θ].

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
    >>> from activeeval.ranking import ranking_expectation
    >>> ranking_expectation(rel, "dcg").round(3).tolist()
    [2.542, 2.415]
    >>> ranking_expectation(rel, ae.DCG(k=2)).round(3).tolist()
    [2.542, 2.315]
    """
    meas = get_ranking_measure(measure).bind(relevance)
    return _absolute_mean_var(relevance, meas)[0]


def ranking_intrinsic_value(
    relevance: GradedRelevance,
    measure: RankingMeasure | str,
    pool_weights: ArrayLike | None = None,
) -> float:
    """Ř = Σ_x p(x) E[ℓ(r(x), y) | x; θ], the intrinsic performance (eq. 4.22, App. A.1).

    Parameters
    ----------
    relevance : GradedRelevance
        The ranker's lists and grade distributions.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the queries (up to a constant); uniform by default.

    Returns
    -------
    float
        The measure's expected value over the pool under the relevance model.

    See Also
    --------
    activeeval.ranking.ranking_expectation : The per-query expectations it averages.
    activeeval.ranking.ranking_intrinsic_difference : Δ̌ for two rankers.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
    >>> from activeeval.ranking import ranking_intrinsic_value
    >>> round(ranking_intrinsic_value(rel, "dcg"), 3)
    2.479
    """
    p = pool_distribution(relevance.n, pool_weights)
    return float(p @ ranking_expectation(relevance, measure))


def ranking_second_moment(
    relevance: GradedRelevance, measure: RankingMeasure | str, center: float
) -> NDArray[np.float64]:
    """E[(ℓ(r(x), y) − c)² | x; θ] for every query, the moment of eq. 6.10.

    Computed as Var[ℓ | x] + (E[ℓ | x] − c)² from the dynamic programs of Appendix A.1
    (eq. A.3 for DCG, eq. A.6/A.9 for ERR) in O(m |Y| max|r|) time.

    Parameters
    ----------
    relevance : GradedRelevance
        The ranker's lists and grade distributions.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure.
    center : float
        The centre c, usually the intrinsic value Ř.

    Returns
    -------
    ndarray of shape (m,)
        The second moment about ``center`` of every query.

    See Also
    --------
    activeeval.ranking.ranking_distribution : q* ∝ sqrt of this moment over λ (eq. 6.10).
    activeeval.ranking.ranking_difference_moment : The moment for two rankers (eq. 6.11).

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> proba = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                   [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> rel = ae.GradedRelevance(proba, offsets=[0, 2, 5])
    >>> from activeeval.ranking import ranking_second_moment
    >>> ranking_second_moment(rel, "dcg", center=2.479).round(3).tolist()
    [1.616, 1.982]
    """
    meas = get_ranking_measure(measure).bind(relevance)
    mean, var = _absolute_mean_var(relevance, meas)
    return var + (mean - float(center)) ** 2


# ========================================================================= comparisons
@dataclass(frozen=True)
class _Alignment:
    """Which flat items of two rankers' lists are the same (query, item) pair."""

    partner1: NDArray[np.int64]  # for each r₁ item its flat index in r₂, or −1
    partner2: NDArray[np.int64]  # for each r₂ item its flat index in r₁, or −1
    rank2_of_1: NDArray[np.int64]  # for each r₁ item its 0-based r₂ rank, or _ABSENT (eq. A.10)
    rank1_of_2: NDArray[np.int64]  # for each r₂ item its 0-based r₁ rank, or _ABSENT


def _check_pair(rel1: Any, rel2: Any) -> tuple[GradedRelevance, GradedRelevance]:
    for j, r in enumerate((rel1, rel2)):
        if not isinstance(r, GradedRelevance):
            raise ShapeError(f"relevance[{j}]: expected a GradedRelevance, got {type(r).__name__}.")
    if rel1.n != rel2.n:
        raise ShapeError(
            f"relevance[1]: covers {rel2.n} queries, relevance[0] covers {rel1.n}; both rankers "
            "must be evaluated on the same pool of queries."
        )
    if rel1.n_grades != rel2.n_grades:
        raise LabelSpaceError(
            f"relevance[1]: has {rel2.n_grades} grades, relevance[0] has {rel1.n_grades}; both "
            "relevance models must use the same grade scale."
        )
    if rel1.items is None or rel2.items is None:
        j = 0 if rel1.items is None else 1
        raise RankingItemsError(
            f"relevance[{j}]: has no item ids; comparing two rankers needs `items` for both, so "
            "that an item listed by both is labeled once and scored at both of its positions."
        )
    return rel1, rel2


def _align(rel1: GradedRelevance, rel2: GradedRelevance) -> _Alignment:
    ids1, ids2 = rel1.items, rel2.items
    assert ids1 is not None and ids2 is not None  # _check_pair
    n1 = rel1.total_items
    if (ids1.dtype.kind in "iu") != (ids2.dtype.kind in "iu") and n1 and ids2.size:
        raise RankingItemsError(
            f"items: relevance[0] has ids of dtype {ids1.dtype}, relevance[1] of dtype "
            f"{ids2.dtype}; the same item must carry the same id in both rankers."
        )
    codes, base = _item_codes(
        [ids1, ids2], rel1.n, "items: the two rankers' item ids cannot be compared"
    )
    key1 = rel1.query_of_item * base + codes[:n1]
    key2 = rel2.query_of_item * base + codes[n1:]
    partner1 = np.full(n1, -1, dtype=np.int64)
    partner2 = np.full(rel2.total_items, -1, dtype=np.int64)
    if n1 and key2.size:
        order = np.argsort(key2, kind="stable")
        loc = np.minimum(np.searchsorted(key2[order], key1), key2.shape[0] - 1)
        hit = key2[order][loc] == key1
        partner1[hit] = order[loc[hit]]
        partner2[partner1[hit]] = np.flatnonzero(hit)
    rank2_of_1 = np.full(n1, _ABSENT, dtype=np.int64)
    rank1_of_2 = np.full(rel2.total_items, _ABSENT, dtype=np.int64)
    hit1, hit2 = partner1 >= 0, partner2 >= 0
    rank2_of_1[hit1] = rel2.positions[partner1[hit1]]
    rank1_of_2[hit2] = rel1.positions[partner2[hit2]]
    return _Alignment(partner1, partner2, rank2_of_1, rank1_of_2)


def _pair_rows(
    rel1: GradedRelevance, rel2: GradedRelevance, meas: RankingMeasure, al: _Alignment
) -> tuple[NDArray[np.bool_] | None, NDArray[np.bool_] | None]:
    """Items within the truncation depth of either list (None: all items)."""
    return (
        _needed_rows(meas, rel1.positions, al.rank2_of_1),
        _needed_rows(meas, rel2.positions, al.rank1_of_2),
    )


def _mix_shared(x1: NDArray[np.float64], x2: NDArray[np.float64], al: _Alignment) -> None:
    """In place: an item both rankers show gets the expectation under the mixture ½p₁ + ½p₂
    (eq. 5.11) in both arrays; expectations are linear in the distribution."""
    hit = np.flatnonzero(al.partner1 >= 0)
    other = al.partner1[hit]
    shared = 0.5 * (x1[hit] + x2[other])
    x1[hit] = shared
    x2[other] = shared


def ranking_mixed_pair(
    relevance1: GradedRelevance, relevance2: GradedRelevance
) -> tuple[GradedRelevance, GradedRelevance]:
    """Both rankers' lists under the relevance model a comparison assumes.

    An item both show gets the mixture ½p₁ + ½p₂ of their grade distributions (eq. 5.11), an
    item one ranker shows keeps that ranker's. ``ranking_expectation`` of the two results are
    the per-ranker control variates of the model-assisted comparison; their difference is
    ``ranking_difference_expectation``.

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.

    Returns
    -------
    tuple of GradedRelevance
        The two rankers' lists, in their own order, with mixed distributions for shared items.

    See Also
    --------
    activeeval.ranking.ranking_difference_expectation : E[δ | x; θ] under this model.

    Examples
    --------
    Item 10 of query 0 is listed by both rankers and gets the mean of their distributions:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_mixed_pair
    >>> m1, m2 = ranking_mixed_pair(r1, r2)
    >>> m1.proba[0].round(3).tolist(), m2.proba[1].round(3).tolist()
    ([0.3, 0.3, 0.4], [0.3, 0.3, 0.4])
    """
    rel1, rel2 = _check_pair(relevance1, relevance2)
    al = _align(rel1, rel2)
    p1, p2 = rel1.proba.copy(), rel2.proba.copy()
    hit = np.flatnonzero(al.partner1 >= 0)
    shared = 0.5 * (p1[hit] + p2[al.partner1[hit]])
    p1[hit] = shared
    p2[al.partner1[hit]] = shared
    return (
        GradedRelevance._trusted(p1, rel1.offsets, rel1.items, rel1.item_costs),
        GradedRelevance._trusted(p2, rel2.offsets, rel2.items, rel2.item_costs),
    )


def _dcg_difference_mean_var(
    rel1: GradedRelevance, rel2: GradedRelevance, meas: RankingMeasure, al: _Alignment
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[δ] and Var[δ] for DCG (eq. A.10-A.12): δ = Σ_{z ∈ r₁ ∪ r₂} u_z (2^{y_z} − 1) with
    u_z = d₁(z) − d₂(z) (d_j = 0 for an item r_j does not show, eq. A.10), independent terms."""
    rows1, rows2 = _pair_rows(rel1, rel2, meas, al)
    mu1, var1 = _dcg_item_moments(rel1.proba, meas, rows1)
    mu2, var2 = _dcg_item_moments(rel2.proba, meas, rows2)
    hit1, hit2 = al.partner1 >= 0, al.partner2 >= 0
    # Mixture variance of a shared item: ½(v₁ + v₂) + ¼(μ₁ − μ₂)².
    gap = mu1[hit1] - mu2[al.partner1[hit1]]
    _mix_shared(mu1, mu2, al)
    _mix_shared(var1, var2, al)
    var1[hit1] += 0.25 * gap * gap
    mu, var = mu1, var1
    d1, d2 = _item_weights(meas, rel1), _item_weights(meas, rel2)
    u1 = d1.copy()
    u1[hit1] -= d2[al.partner1[hit1]]
    u2 = np.where(hit2, 0.0, -d2)  # r₂-only items; shared ones are counted with r₁
    mean = _segment_sum(u1 * mu, rel1.offsets) + _segment_sum(u2 * mu2, rel2.offsets)
    v = _segment_sum(u1 * u1 * var, rel1.offsets) + _segment_sum(u2 * u2 * var2, rel2.offsets)
    return mean, v


class _CrossWorkspace:
    """Reusable (Q, L₁, L₂) buffers of the comparative ERR program: fresh multi-megabyte
    temporaries per block would cost a page fault per page, doubling the run time."""

    def __init__(self) -> None:
        self.size = 0
        self.floats: list[NDArray[np.float64]] = []
        self.masks: list[NDArray[np.bool_]] = []

    def views(
        self, shape: tuple[int, int, int]
    ) -> tuple[list[NDArray[np.float64]], list[NDArray[np.bool_]]]:
        n = shape[0] * shape[1] * shape[2]
        if n > self.size:
            self.size = n
            self.floats = [np.empty(n) for _ in range(3)]
            self.masks = [np.empty(n, dtype=bool) for _ in range(3)]
        return (
            [x[:n].reshape(shape) for x in self.floats],
            [x[:n].reshape(shape) for x in self.masks],
        )


def _err_cross_block(
    first: _ErrMoments,
    w1: NDArray[np.float64],
    p2of1: NDArray[np.int64],
    second: _ErrMoments,
    w2: NDArray[np.float64],
    p1of2: NDArray[np.int64],
    work: _CrossWorkspace,
) -> NDArray[np.float64]:
    """E[ℓ₁ ℓ₂ | x; θ] for a padded block of queries (eq. A.14-A.21, corrected).

    ``first`` holds r₁'s per-slot moments (Q, L₁) and ``second`` r₂'s (Q, L₂), with weights
    ``w1``, ``w2``; ``p2of1`` is the 0-based r₂ rank of r₁'s item (``_ABSENT`` if r₂ does not
    show it), ``p1of2`` the r₁ slot of r₂'s item (``_ABSENT`` if it is not among r₁'s first L₁).
    Pads: E[κ] = E[κ²] = w = 0, E[1 − κ] = E[(1 − κ)²] = 1.

    For z = r₁[i] and z̄ = r₂[j] (eq. A.14), with S₁(z) the items before z in r₁ and S₂(z̄)
    those before z̄ in r₂, independence (eq. 6.3) factorizes the expectation item by item:

        z ≠ z̄:  E[κ_z (1−κ_z)^{[z ∈ S₂(z̄)]}] · E[κ_z̄ (1−κ_z̄)^{[z̄ ∈ S₁(z)]}]             (A.19)
                 · Π_{z' ∈ S₁(z), z' ≠ z̄} E[(1−κ_{z'})^{1 + [z' ∈ S₂(z̄)]}]                   (A.20)
                 · Π_{z' ∉ S₁(z), z' ≠ z, z̄} E[(1−κ_{z'})^{[z' ∈ S₂(z̄)]}]                     (A.21)
        z = z̄:  E[κ_z²] · Π_{S₁ ∩ S₂} E[(1−κ)²] · Π_{S₁ △ S₂} E[1−κ]                       (A.19)

    For fixed j, A.20 is a prefix product and A.21 a suffix product over r₁'s slots, times
    C_j = Π E[1 − κ] over the items before z̄ in r₂ that are not among r₁'s first L₁ slots:
    O(L₁ L₂) per query after O(|Y|) per item. Items of r₁ beyond its truncation depth behave
    exactly as items r₁ does not show. Layout (Q, i, j): the scans run along axis 1.
    """
    a1, b1, s1, t1 = (x[:, :, None] for x in first)
    a2, b2, s2, _ = second
    q, n1 = w1.shape
    n2 = w2.shape[1]
    (fac, prod, tmp), (before2, own, before1) = work.views((q, n1, n2))
    np.less(p2of1[:, :, None], np.arange(n2)[None, None, :], out=before2)  # r₁[i] ∈ S₂(r₂[j])
    np.equal(p1of2[:, None, :], np.arange(n1)[None, :, None], out=own)  # r₁[i] is r₂[j]
    np.less(p1of2[:, None, :], np.arange(n1)[None, :, None], out=before1)  # r₂[j] ∈ S₁(r₁[i])
    # A.20: prefix over r₁ slots of E[(1−κ)²] (also before z̄ in r₂) or E[1−κ]; z̄ excluded.
    np.copyto(fac, s1)
    np.copyto(fac, t1, where=before2)
    np.copyto(fac, 1.0, where=own)
    prod[:, 0, :] = 1.0
    np.cumprod(fac[:, :-1, :], axis=1, out=prod[:, 1:, :])
    # A.21: suffix over r₁ slots of E[1−κ] (before z̄ in r₂) or 1; z̄ itself has 1 here.
    fac.fill(1.0)
    np.copyto(fac, s1, where=before2)
    tmp[:, -1, :] = 1.0
    np.cumprod(fac[:, :0:-1, :], axis=1, out=tmp[:, -2::-1, :])
    prod *= tmp
    # A.19: the two items' own factors, E[κ(1−κ)] where the other item precedes; z = z̄: E[κ²].
    np.copyto(fac, a1)
    np.copyto(fac, a1 - b1, where=before2)
    np.copyto(tmp, a2[:, None, :])
    np.copyto(tmp, (a2 - b2)[:, None, :], where=before1)
    fac *= tmp
    np.copyto(fac, b1, where=own)
    prod *= fac
    per_j = np.matmul(w1[:, None, :], prod)[:, 0, :]
    outside = _exclusive_cumprod(np.where(p1of2 == _ABSENT, s2, 1.0), axis=1)  # C_j
    return np.sum(per_j * outside * w2, axis=1)


def _err_difference_mean_var(
    rel1: GradedRelevance, rel2: GradedRelevance, meas: RankingMeasure, al: _Alignment
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """E[δ] and Var[δ] for ERR: eq. A.13 with E[ℓ_k], E[ℓ_k²] from the absolute program and
    E[ℓ₁ ℓ₂] from :func:`_err_cross_block`, O(|Y| |r₁ ∪ r₂| + |r₁| |r₂|) per query."""
    rows1, rows2 = _pair_rows(rel1, rel2, meas, al)
    m1 = _err_item_moments(rel1.proba, meas, rows1)
    m2 = _err_item_moments(rel2.proba, meas, rows2)
    for x1, x2 in zip(m1, m2, strict=True):
        _mix_shared(x1, x2, al)
    mean1, sq1 = _err_mean_second(m1, rel1.offsets, meas)
    mean2, sq2 = _err_mean_second(m2, rel2.offsets, meas)
    cross = np.zeros(rel1.n)
    len1, len2 = meas._limit(rel1.lengths), meas._limit(rel2.lengths)
    # r₁ rank of every r₂ item, counting only r₁'s first k slots (the rest act as absent).
    p2of1 = al.rank2_of_1
    p1of2 = al.rank1_of_2
    if meas.k is not None:
        p1of2 = np.where(p1of2 >= meas.k, _ABSENT, p1of2)
    pw = meas.position_weights
    work = _CrossWorkspace()
    for rows in _chunks([len1, len2], _CROSS_CHUNK_ELEMENTS):
        n1, n2 = int(len1[rows].max()), int(len2[rows].max())
        if n1 == 0 or n2 == 0:
            continue
        i1, v1 = _slots(rel1.offsets[:-1][rows], len1[rows], n1)
        i2, v2 = _slots(rel2.offsets[:-1][rows], len2[rows], n2)
        cross[rows] = _err_cross_block(
            _pad_moments(m1, i1, v1),
            np.where(v1, pw(np.arange(n1, dtype=np.int64))[None, :], 0.0),
            _pad(p2of1, i1, v1, _ABSENT),
            _pad_moments(m2, i2, v2),
            np.where(v2, pw(np.arange(n2, dtype=np.int64))[None, :], 0.0),
            _pad(p1of2, i2, v2, _ABSENT),
            work,
        )
    mean = mean1 - mean2
    var = (sq1 - mean1 * mean1) + (sq2 - mean2 * mean2) - 2.0 * (cross - mean1 * mean2)
    return mean, np.maximum(var, 0.0)


def _difference_mean_var(
    rel1: GradedRelevance, rel2: GradedRelevance, meas: RankingMeasure
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    al = _align(rel1, rel2)
    if isinstance(meas, DCG):
        return _dcg_difference_mean_var(rel1, rel2, meas, al)
    return _err_difference_mean_var(rel1, rel2, meas, al)


def _bind_pair(
    measure: RankingMeasure | str, rel1: GradedRelevance, rel2: GradedRelevance
) -> RankingMeasure:
    return get_ranking_measure(measure).bind(rel1).bind(rel2)


def _bind_for_labels(measure: RankingMeasure | str, *rels: GradedRelevance) -> RankingMeasure:
    """The measure bound to the ranker(s) of a labeling campaign, whose grades are recorded on
    the relevance model's scale 0, ..., n_grades − 1: an ERR ``max_grade`` above it (allowed
    in the expectations, where the top grades simply have probability 0) would make grades
    the campaign must refuse, so it is refused here, before any label is bought."""
    meas = get_ranking_measure(measure)
    for rel in rels:
        meas = meas.bind(rel)
    top = rels[0].n_grades - 1
    mg = getattr(meas, "max_grade", None)
    if mg is not None and mg > max(top, 1):  # ERR binds a single-grade model to 1
        raise LabelSpaceError(
            f"max_grade: is {mg} but the relevance model's grades are 0, ..., {top}, and "
            f"labels are recorded on that scale, so a grade above {top} could never be "
            f"labeled. Give the model a probability column for every grade up to {mg} (zeros "
            "where it never predicts one), or leave max_grade=None."
        )
    return meas


def ranking_difference_expectation(
    relevance1: GradedRelevance, relevance2: GradedRelevance, measure: RankingMeasure | str
) -> NDArray[np.float64]:
    """E[δ(x, y) | x; θ] = E[ℓ(r₁(x), y) − ℓ(r₂(x), y) | x; θ] per query (eq. 6.9, 6.12).

    An item both rankers show has the mixture of their grade distributions (eq. 5.11).

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure.

    Returns
    -------
    ndarray of shape (m,)
        The expected difference of every query.

    See Also
    --------
    activeeval.ranking.ranking_intrinsic_difference : Its pool average Δ̌.
    activeeval.ranking.ranking_mixed_pair : The per-item mixture model.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_difference_expectation
    >>> ranking_difference_expectation(r1, r2, "dcg").round(3).tolist()
    [0.148, 0.554]
    """
    rel1, rel2 = _check_pair(relevance1, relevance2)
    return _difference_mean_var(rel1, rel2, _bind_pair(measure, rel1, rel2))[0]


def ranking_intrinsic_difference(
    relevance1: GradedRelevance,
    relevance2: GradedRelevance,
    measure: RankingMeasure | str,
    pool_weights: ArrayLike | None = None,
) -> float:
    """Δ̌ = Ř[r₁] − Ř[r₂] under the per-item mixture model (Sec. 6.2, eq. 5.12).

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure.
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the queries (up to a constant); uniform by default.

    Returns
    -------
    float
        The intrinsic difference, the centre of eq. 6.11.

    See Also
    --------
    activeeval.ranking.ranking_difference_expectation : The per-query differences it averages.
    activeeval.ranking.ranking_intrinsic_value : Ř for one ranker.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_intrinsic_difference
    >>> round(ranking_intrinsic_difference(r1, r2, "dcg"), 3)
    0.351
    """
    p = pool_distribution(relevance1.n, pool_weights)
    return float(p @ ranking_difference_expectation(relevance1, relevance2, measure))


def ranking_difference_moment(
    relevance1: GradedRelevance,
    relevance2: GradedRelevance,
    measure: RankingMeasure | str,
    center: float,
) -> NDArray[np.float64]:
    """E[(ℓ(r₁(x), y) − ℓ(r₂(x), y) − c)² | x; θ] per query, the moment of eq. 6.11.

    Labels range over the union of both lists; an item both rankers show has the mixture of
    the two grade distributions (eq. 5.11). DCG: eq. A.12 in O(m |Y| max|r₁ ∪ r₂|); ERR:
    eq. A.13-A.21 (corrected) in O(m (|Y| max|r₁ ∪ r₂| + max|r₁||r₂|)).

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure.
    center : float
        The centre c, usually the intrinsic difference Δ̌.

    Returns
    -------
    ndarray of shape (m,)
        The second moment of the difference about ``center`` of every query.

    See Also
    --------
    activeeval.ranking.ranking_second_moment : The moment for one ranker (eq. 6.10).
    activeeval.ranking.ranking_distribution : q* for the comparison (eq. 6.11).

    Notes
    -----
    The corrections to Appendix A.1 are on the *Ranking* page of the documentation
    (``docs/how-it-works/ranking.md``).

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_difference_moment
    >>> ranking_difference_moment(r1, r2, "dcg", center=0.0).round(3).tolist()
    [0.436, 1.743]
    """
    rel1, rel2 = _check_pair(relevance1, relevance2)
    mean, var = _difference_mean_var(rel1, rel2, _bind_pair(measure, rel1, rel2))
    return var + (mean - float(center)) ** 2


# ================================================================================= costs
def ranking_query_costs(
    relevance: GradedRelevance, other: GradedRelevance | None = None
) -> NDArray[np.float64] | None:
    """λ(x) per query: the summed costs of the items to label, scaled to mean one.

    With ``other``, the union of both lists is labeled (an item both show counts once, at the
    first ranker's cost).

    Parameters
    ----------
    relevance : GradedRelevance
        The (first) ranker, with item ``costs``.
    other : GradedRelevance, optional
        The second ranker of a comparison; then both need ``items`` and ``costs``.

    Returns
    -------
    ndarray of shape (m,) or None
        Query costs with mean one over the pool; None when no item costs were given.

    Raises
    ------
    InvalidCostsError
        When only one ranker has costs, or a query has no item to label (cost 0).

    See Also
    --------
    activeeval.GradedRelevance : Holds the item costs (``costs=``).
    activeeval.ranking.ranking_distribution : Uses these costs by default.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.ranking import ranking_query_costs
    >>> rel = ae.GradedRelevance(np.full((5, 2), 0.5), offsets=[0, 2, 5],
    ...                          costs=[1.0, 1.0, 1.0, 2.0, 1.0])
    >>> ranking_query_costs(rel).round(3).tolist()
    [0.667, 1.333]
    """
    if other is None:
        if relevance.item_costs is None:
            return None
        lam = _segment_sum(relevance.item_costs, relevance.offsets)
    else:
        rel1, rel2 = _check_pair(relevance, other)
        if rel1.item_costs is None and rel2.item_costs is None:
            return None
        if rel1.item_costs is None or rel2.item_costs is None:
            raise InvalidCostsError(
                "costs: only one of the two rankers has item costs; the union of both lists is "
                "labeled, so give both GradedRelevance objects `costs` (or neither)."
            )
        al = _align(rel1, rel2)
        only2 = np.where(al.partner2 >= 0, 0.0, rel2.item_costs)
        lam = _segment_sum(rel1.item_costs, rel1.offsets) + _segment_sum(only2, rel2.offsets)
    if (lam <= 0).any():
        bad = int(np.flatnonzero(lam <= 0)[0])
        raise InvalidCostsError(
            f"costs: query {bad} has no item to label (cost 0); labeling costs must be strictly "
            "positive (Thm 4.2). An empty list is worth exactly 0, so either give the campaign "
            "per-query costs instead of item costs (costs=, > 0 for every query), or leave "
            "empty queries out and "
            "multiply the estimate and its interval by (queries kept) / (all queries); "
            "dropping them without that factor overstates the mean."
        )
    return lam / lam.mean()


# ============================================================== sampling distributions
def ranking_distribution(
    relevance: GradedRelevance | Sequence[GradedRelevance],
    measure: RankingMeasure | str = "dcg",
    *,
    costs: ArrayLike | None = None,
    method: str = "active",
    mix: float = DEFAULT_MIX,
    pool_weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Instrumental distribution over the m queries for estimating DCG/ERR (Derivation 1).

    ``active``: q(x) ∝ p(x)·sqrt(E[(ℓ − Ř)² | x; θ] / λ(x)) (eq. 6.10) for one ranker, or
    q(x) ∝ p(x)·sqrt(E[(δ − Δ̌)² | x; θ] / λ(x)) (eq. 6.11) for a pair, with the intrinsic Ř, Δ̌
    as centres; then the defensive mixture (1 − mix)·q + mix·p keeps every importance weight
    p/q below 1/mix. Variants of Sec. 6.3: ``active_uniD`` (uniform grade distribution instead
    of the model's), ``active_uniC`` (λ ≡ 1), ``active_lambda`` (q ∝ p·λ^(-1/2)), ``passive``
    (q = p).

    Parameters
    ----------
    relevance : GradedRelevance or a pair of them
        One ranker (absolute estimation) or two (comparison; both need ``items``).
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure; default ``"dcg"``.
    costs : array-like of shape (m,), optional
        λ(x) > 0 per query; by default the rankers' item costs summed per query
        (``ranking_query_costs``), else unit costs.
    method : str
        One of ``RANKING_METHODS``; default ``"active"``.
    mix : float
        Defensive-mixture weight ε ∈ [0, 1] (not applied to ``passive``/``active_lambda``).
    pool_weights : array-like of shape (m,), optional
        Test distribution p(x) over the queries (up to a constant), e.g. query frequencies;
        uniform by default (Derivation 1 with a non-uniform test distribution, as Thm 4.1).

    Returns
    -------
    q : ndarray of shape (m,)
        Positive (for mix > 0), sums to one.

    See Also
    --------
    activeeval.sampling.draw : Draw query indices from q.
    activeeval.ranking.ranking_second_moment : The moment of eq. 6.10.
    activeeval.ranking.ranking_difference_moment : The moment of eq. 6.11.

    Notes
    -----
    The dynamic programs that compute the moments (Thm 6.1, Appendix A.1) are on the
    *Ranking* page of the documentation (``docs/how-it-works/ranking.md``).

    References
    ----------
    Thesis eq. 6.10, 6.11 (Derivation 1), Thm 6.1 and Appendix A.1; Sec. 6.3 for the variants.

    Examples
    --------
    One ranker, then a comparison of two (their lists share items 10 and 11):

    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_distribution
    >>> ranking_distribution(r1, "dcg").round(3).tolist()
    [0.477, 0.523]
    >>> ranking_distribution([r1, r2], "err").round(3).tolist()
    [0.475, 0.525]
    """
    rels = _as_relevance_list(relevance)
    method = check_option(method, RANKING_METHODS, "method")
    check_safeguards(mix)
    m = rels[0].n
    if len(rels) == 1:
        meas = get_ranking_measure(measure).bind(rels[0])
        lam = check_costs(costs, m) if costs is not None else ranking_query_costs(rels[0])
    else:
        _check_pair(rels[0], rels[1])
        meas = _bind_pair(measure, rels[0], rels[1])
        lam = check_costs(costs, m) if costs is not None else ranking_query_costs(*rels)
    p = pool_distribution(m, pool_weights)
    if method == "passive":
        return p
    if method == "active_lambda":
        if lam is None:
            raise InvalidCostsError(
                "costs: method='active_lambda' samples by cost alone and needs costs (per query, "
                "or item costs on the GradedRelevance)."
            )
        score = p / np.sqrt(lam)
        return score / score.sum()
    if method == "active_uniD":
        rels = [r.uniform() for r in rels]
    if len(rels) == 1:
        mean, var = _absolute_mean_var(rels[0], meas)
    else:
        mean, var = _difference_mean_var(rels[0], rels[1], meas)
    center = float(p @ mean)  # Ř (eq. 4.22) or Δ̌
    moment = var + (mean - center) ** 2
    if lam is not None and method != "active_uniC":
        moment = moment / lam
    score = p * np.sqrt(moment)  # eq. 6.10 / 6.11
    total = score.sum()
    if not total > 0:
        return p
    return (1.0 - mix) * (score / total) + mix * p


def _as_relevance_list(relevance: Any) -> list[GradedRelevance]:
    if isinstance(relevance, GradedRelevance):
        return [relevance]
    if isinstance(relevance, Sequence) and not isinstance(relevance, str):
        rels = list(relevance)
        if len(rels) == 1 and isinstance(rels[0], GradedRelevance):
            return rels
        if len(rels) == 2:
            return list(_check_pair(rels[0], rels[1]))
        raise ShapeError(
            f"relevance: pass one GradedRelevance or a pair of them, got {len(rels)} entries."
        )
    raise ShapeError(
        f"relevance: expected a GradedRelevance or a pair of them, got {type(relevance).__name__}."
    )


# ============================================================ estimation from labels
def ranking_union(
    relevance1: GradedRelevance, relevance2: GradedRelevance, index: ArrayLike | None = None
) -> tuple[NDArray[Any], NDArray[np.int64]]:
    """The items to label when comparing two rankers on the queries ``index``.

    The union r₁(x) ∪ r₂(x) is annotated (Sec. 6.2): per query, r₁'s items in r₁'s order, then
    the items only r₂ shows, in r₂'s order.

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.
    index : array-like of int, optional
        Query indices (repeats allowed); all queries by default.

    Returns
    -------
    items : ndarray of shape (total,)
        Item ids, query after query (the order ``ranking_pair_values`` expects labels in).
    offsets : ndarray of int, shape (len(index) + 1,)
        Query j's items are ``items[offsets[j]:offsets[j+1]]``.

    See Also
    --------
    activeeval.ranking.ranking_pair_values : Both rankers' values from the union's labels.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_union
    >>> items, offsets = ranking_union(r1, r2, [1])
    >>> items.tolist(), offsets.tolist()
    ([10, 12, 13, 14], [0, 4])
    """
    return _union_layout(relevance1, relevance2, index)[0:2]


def ranking_pair_values(
    relevance1: GradedRelevance,
    relevance2: GradedRelevance,
    measure: RankingMeasure | str,
    index: ArrayLike,
    labels: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ℓ(r₁(x), y) and ℓ(r₂(x), y) of the queries ``index`` from the grades of their union.

    A shared item's single label scores both rankers. Feed the two arrays to
    ``activeeval.estimators.inference.paired_test`` with ``QueryValue`` (eq. 6.9, 3.21).

    Parameters
    ----------
    relevance1, relevance2 : GradedRelevance
        The two rankers on the same queries, both with ``items``.
    measure : DCG, ERR, "dcg" or "err"
        The ranking measure; an ERR without ``max_grade`` takes the models' top grade.
    index : array-like of int, shape (n,)
        The labeled queries (repeats allowed).
    labels : array-like of int, shape (total,)
        Grades of the union of both lists of every query in ``index``, in the order of
        ``ranking_union(relevance1, relevance2, index)`` (repeated queries repeated).

    Returns
    -------
    values1, values2 : ndarray of shape (n,)
        The per-query values of the two rankers.

    See Also
    --------
    activeeval.ranking.ranking_union : The order of ``labels``.
    activeeval.ranking.ranking_values : The values of one ranker.

    Examples
    --------
    Query 1's union is items 10, 12, 13 (of r₁) and 14 (of r₂ only):

    >>> import numpy as np
    >>> import activeeval as ae
    >>> p1 = np.array([[0.1, 0.3, 0.6], [0.5, 0.4, 0.1],
    ...                [0.2, 0.2, 0.6], [0.7, 0.2, 0.1], [0.8, 0.2, 0.0]])
    >>> r1 = ae.GradedRelevance(p1, offsets=[0, 2, 5], items=[10, 11, 10, 12, 13])
    >>> p2 = np.array([[0.3, 0.3, 0.4], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    >>> r2 = ae.GradedRelevance(p2, offsets=[0, 2, 4], items=[11, 10, 14, 10])
    >>> from activeeval.ranking import ranking_pair_values
    >>> v1, v2 = ranking_pair_values(r1, r2, "dcg", [1], labels=[2, 1, 0, 2])
    >>> v1.round(3).tolist(), v2.round(3).tolist()
    ([3.631], [4.893])
    """
    rel1, rel2 = _check_pair(relevance1, relevance2)
    meas = _bind_pair(measure, rel1, rel2)
    _, offsets, at1, at2 = _union_layout(rel1, rel2, index)
    y = check_finite_array(labels, "labels", ndim=1)
    if y.shape[0] != offsets[-1]:
        raise ShapeError(
            f"labels: expected {offsets[-1]} grades (the union of both lists of every drawn "
            f"query, in ranking_union order), got {y.shape[0]}."
        )
    sub1, sub2 = rel1.take(np.asarray(index)), rel2.take(np.asarray(index))
    return ranking_values(meas, y[at1], sub1.offsets), ranking_values(meas, y[at2], sub2.offsets)


def _union_layout(
    rel1: GradedRelevance, rel2: GradedRelevance, index: ArrayLike | None
) -> tuple[NDArray[Any], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Union items and offsets of the queries ``index``, and where each ranker's flat items
    sit in that union."""
    rel1, rel2 = _check_pair(rel1, rel2)
    idx = np.arange(rel1.n) if index is None else np.asarray(index)
    sub1, sub2 = rel1.take(idx), rel2.take(idx)
    al = _align(sub1, sub2)
    only2 = np.flatnonzero(al.partner2 < 0)
    count2 = np.bincount(sub2.query_of_item[only2], minlength=sub1.n)
    offsets = np.zeros(sub1.n + 1, dtype=np.int64)
    np.cumsum(sub1.lengths + count2, out=offsets[1:])
    at1 = offsets[sub1.query_of_item] + sub1.positions
    before = np.zeros(sub1.n, dtype=np.int64)
    np.cumsum(count2[:-1], out=before[1:])
    q_only = sub2.query_of_item[only2]
    rank_only = np.arange(only2.shape[0], dtype=np.int64) - before[q_only]
    at2 = np.empty(sub2.total_items, dtype=np.int64)
    at2[only2] = offsets[q_only] + sub1.lengths[q_only] + rank_only
    shared = np.flatnonzero(al.partner2 >= 0)
    at2[shared] = at1[al.partner2[shared]]
    assert sub1.items is not None and sub2.items is not None  # _check_pair
    items = np.empty(offsets[-1], dtype=np.result_type(sub1.items, sub2.items))
    items[at1] = sub1.items
    items[at2[only2]] = sub2.items[only2]
    return items, offsets, at1, at2


class QueryValue(Measure):
    """Adapter that lets the self-normalized estimator average per-query ranking values.

    Ranking labels are vectors, so the per-query loss ℓ(r(x), y) is computed first
    (``ranking_values``) and handed to ``activeeval.estimators.inference.estimate`` or
    ``paired_test`` as the *prediction*, with placeholder labels. ``loss(prediction, y)``
    returns ``prediction``; the estimator is then eq. 3.31 with w ≡ 1 (the ranking risk,
    eq. 6.4, is a regular risk), with its sandwich standard error.

    Parameters
    ----------
    measure : RankingMeasure or str
        The ranking measure the values were computed with (it names the estimate and sets
        its range); default ``"dcg"``.

    See Also
    --------
    activeeval.ranking.ranking_values : The per-query values of one ranker.
    activeeval.ranking.ranking_pair_values : The per-query values of two rankers.
    activeeval.evaluate : Runs the whole campaign on a GradedRelevance instead.

    Examples
    --------
    Three drawn queries, their ERR from the oracle's grades, and their sampling probabilities:

    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.estimators import inference
    >>> from activeeval.ranking import QueryValue, ranking_values
    >>> values = ranking_values(ae.ERR(max_grade=2), [2, 0, 2, 1, 0, 1, 1], [0, 2, 5, 7])
    >>> q = np.array([0.5, 0.3, 0.2])
    >>> est = inference.estimate(QueryValue("err"), values, np.zeros(3), q)
    >>> print(f"{est.estimate:.3f} ± {est.stderr:.2f}")
    0.564 ± 0.13
    """

    categorical = False
    binary_loss = False
    regular = True
    greater_is_better = True

    def __init__(self, measure: RankingMeasure | str = "dcg") -> None:
        self.ranking_measure = get_ranking_measure(measure)
        self.name = self.ranking_measure.name

    def loss(self, prediction: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
        """The per-query value itself: ``prediction``, broadcast to the shape of ``y``.

        Parameters
        ----------
        prediction : array-like
            Per-query values ℓ(r(x), y).
        y : array-like
            Placeholder labels (ignored except for their shape).

        Returns
        -------
        ndarray of float
            ``prediction`` as floats, broadcast with ``y``.
        """
        shape = np.broadcast_shapes(np.shape(prediction), np.shape(y))
        return np.broadcast_to(np.asarray(prediction, dtype=float), shape)

    @property
    def value_range(self) -> tuple[float, float]:
        return self.ranking_measure.value_range

    def __repr__(self) -> str:
        return f"QueryValue({self.ranking_measure!r})"
