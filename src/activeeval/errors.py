"""The exception and warning classes.

Every error subclasses ``ActiveEvalError``, itself a ``ValueError``, so callers can catch
one type; each message names the offending argument and says how to fix it. Every warning
subclasses ``ActiveEvalWarning``.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import NDArray

__all__ = [
    "ActiveEvalError",
    "ActiveEvalWarning",
    "BudgetError",
    "DegenerateIntervalWarning",
    "DuplicateIdError",
    "EmptyPoolError",
    "InputFileError",
    "InvalidCostsError",
    "InvalidLevelError",
    "InvalidOffsetsError",
    "InvalidRandomStateError",
    "InvalidSamplingDistributionError",
    "InvalidVarianceError",
    "LabelConflictError",
    "LabelSpaceError",
    "NonFiniteError",
    "NotAStoreError",
    "OracleError",
    "OutputFileError",
    "ProbabilityRowsError",
    "RankingItemsError",
    "SchemaVersionError",
    "SessionMismatchError",
    "ShapeError",
    "StoreError",
    "UndefinedEstimateWarning",
    "UnknownIdError",
    "UnknownOptionError",
]


class ActiveEvalError(ValueError):
    """Root of every error activeeval raises on bad input.

    A ``ValueError``, so ``except ValueError`` also catches it; every message names the
    offending argument and says how to fix it.
    """


class ShapeError(ActiveEvalError):
    """Raised when an array has the wrong number of dimensions or a length that does not
    match, and for other out-of-range arguments (a power outside (0, 1), a negative target
    width, an unreadable claim)."""


class NonFiniteError(ActiveEvalError):
    """Raised when an array holds NaN or infinity where finite numbers are required."""


class ProbabilityRowsError(ActiveEvalError):
    """Raised when class probabilities are negative or above one, or a row does not sum to
    one."""


class InvalidVarianceError(ActiveEvalError):
    """Raised when a predictive variance is negative."""


class LabelSpaceError(ActiveEvalError):
    """Raised when a label lies outside the label space of the predictive distribution or
    measure."""


class InvalidCostsError(ActiveEvalError):
    """Raised when labeling costs are not strictly positive and finite."""


class InvalidSamplingDistributionError(ActiveEvalError):
    """Raised when a sampling distribution is negative, does not sum to one, or gives zero
    probability to pool mass it must cover."""


class EmptyPoolError(ActiveEvalError):
    """Raised when the pool, or the labeled sample, has no instances."""


class BudgetError(ActiveEvalError):
    """Raised when a budget (or a batch size, a step between looks) is not a finite
    non-negative number or is too small to buy a single label, and when a re-plan has no
    labels yet."""


class InvalidLevelError(ActiveEvalError):
    """Raised when a confidence level or significance level lies outside (0, 1)."""


class InvalidRandomStateError(ShapeError):
    """Raised when a ``random_state`` (or seed) cannot seed numpy's random generator, or a
    session seed is beyond what a store holds. A [ShapeError][activeeval.errors.ShapeError],
    which bad seeds raised before."""


class UnknownOptionError(ActiveEvalError):
    """Raised when a string option (measure name, method, estimator, ...) is not one of the
    documented choices, or an option does not apply (a claim about another measure than the
    result's, a result that cannot re-plan this plan)."""


class InvalidOffsetsError(ActiveEvalError):
    """Raised when the offsets of a ragged array (ranked lists) do not start at 0, decrease,
    or do not end at the number of items."""


class RankingItemsError(ActiveEvalError):
    """Raised when item ids of ranked lists are missing where needed, repeated within a
    query, or not comparable."""


class DuplicateIdError(ActiveEvalError):
    """Raised when pool ids (or the ids within one labels input) are not unique."""


class UnknownIdError(ActiveEvalError):
    """Raised when an id is not in the session's pool, or the session never handed it
    out."""


class InputFileError(ActiveEvalError):
    """Raised when a pool or labels file cannot be read: a missing column, a ragged or
    truncated row, a bad encoding, an unparsable value. The message names the file, line
    and column."""


class OutputFileError(ActiveEvalError):
    """Raised when the command line is given an output path it must not or cannot write: the
    session store itself, another SQLite database, a missing directory, or the wrong file
    type."""


class StoreError(ActiveEvalError):
    """Raised when a labeling-session store cannot be created, opened or written."""


class NotAStoreError(StoreError):
    """Raised when a file opened as a session store is not an activeeval session store."""


class SchemaVersionError(StoreError):
    """Raised when a session store was written by a newer activeeval, with a schema this
    version cannot read."""


class LabelConflictError(StoreError):
    """Raised when a label differs from the one already recorded for the same id (pass
    ``overwrite=True`` to replace it; every attempt is audited)."""


class SessionMismatchError(StoreError):
    """Raised when a labels input belongs to another session (its ``session_id``
    differs)."""


class OracleError(ActiveEvalError):
    """Raised when the oracle fails or returns unusable labels.

    The labels acquired before the failure are kept in ``acquired``, so nothing is lost.

    Parameters
    ----------
    message : str
        What went wrong.
    acquired : tuple of (ndarray, ndarray)
        ``(indices, labels)`` of the labels acquired before the failure.
    """

    def __init__(self, message: str, acquired: tuple[NDArray[Any], NDArray[Any]]) -> None:
        super().__init__(message)
        self.acquired = acquired


class ActiveEvalWarning(UserWarning):
    """Root of the warnings activeeval emits; emitted itself where a result or a plan may
    mislead (e.g. a plan whose variance sits on a few instances, a re-plan the labels
    cannot support)."""


class UndefinedEstimateWarning(ActiveEvalWarning):
    """Emitted when a ratio estimate is undefined (no positive weight drawn yet) and NaN is
    returned."""


class DegenerateIntervalWarning(ActiveEvalWarning):
    """Emitted when an interval collapses to a point: a standard error of zero (a Wald
    interval), or an interval wholly outside the measure's range clipped to its boundary.
    Either rests on too few labels."""
