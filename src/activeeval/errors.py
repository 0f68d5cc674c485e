"""The exception and warning classes.

Every error subclasses :class:`ActiveEvalError`, itself a :class:`ValueError`, so callers can
catch one type; each message names the offending argument and says how to fix it. Every
warning subclasses :class:`ActiveEvalWarning`.
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
    """Root of every error raised by activeeval on bad input."""


class ShapeError(ActiveEvalError):
    """An array has the wrong number of dimensions or a length that does not match."""


class NonFiniteError(ActiveEvalError):
    """An array holds NaN or infinity where finite numbers are required."""


class ProbabilityRowsError(ActiveEvalError):
    """Class probabilities are negative, above one, or rows do not sum to one."""


class InvalidVarianceError(ActiveEvalError):
    """A predictive variance is negative."""


class LabelSpaceError(ActiveEvalError):
    """A label lies outside the label space of the predictive distribution or measure."""


class InvalidCostsError(ActiveEvalError):
    """Labeling costs are not strictly positive and finite."""


class InvalidSamplingDistributionError(ActiveEvalError):
    """A sampling distribution is negative, does not sum to one, or misses pool mass."""


class EmptyPoolError(ActiveEvalError):
    """The pool, or the labeled sample, has no instances."""


class BudgetError(ActiveEvalError):
    """A budget too small to buy a single label."""


class InvalidLevelError(ActiveEvalError):
    """A confidence level or significance level outside (0, 1)."""


class InvalidRandomStateError(ShapeError):
    """A ``random_state`` (or seed) that cannot seed numpy's random generator, or a session
    seed beyond what a store holds. A :class:`ShapeError`, which bad seeds raised before."""


class UnknownOptionError(ActiveEvalError):
    """A string option (measure name, method, ...) that is not one of the documented choices."""


class InvalidOffsetsError(ActiveEvalError):
    """Offsets of a ragged array (ranked lists) do not start at 0, decrease, or do not end at
    the number of items."""


class RankingItemsError(ActiveEvalError):
    """Item ids of ranked lists are missing where needed, repeated within a query, or not
    comparable."""


class DuplicateIdError(ActiveEvalError):
    """Pool ids (or ids within one labels input) that are not unique."""


class UnknownIdError(ActiveEvalError):
    """An id that is not in the session's pool, or that the session never handed out."""


class InputFileError(ActiveEvalError):
    """A pool or labels file that cannot be read: missing column, ragged or truncated row,
    bad encoding, unparsable value. The message names the file, line and column."""


class OutputFileError(ActiveEvalError):
    """An output path the command line must not or cannot write: the session store itself,
    another SQLite database, a missing directory, or the wrong file type."""


class StoreError(ActiveEvalError):
    """A labeling-session store that cannot be created, opened or written."""


class NotAStoreError(StoreError):
    """A file that is not an activeeval session store."""


class SchemaVersionError(StoreError):
    """A session store written by a newer activeeval, with a schema this version cannot read."""


class LabelConflictError(StoreError):
    """A label that differs from the one already recorded for the same id (pass overwrite=True
    to replace it; every attempt is audited)."""


class SessionMismatchError(StoreError):
    """A labels input that belongs to another session (its ``session_id`` differs)."""


class OracleError(ActiveEvalError):
    """The oracle failed or returned unusable labels. The labels acquired before the failure
    are kept in :attr:`acquired` as ``(indices, labels)`` so nothing is lost."""

    def __init__(self, message: str, acquired: tuple[NDArray[Any], NDArray[Any]]) -> None:
        super().__init__(message)
        self.acquired = acquired


class ActiveEvalWarning(UserWarning):
    """Root of the warnings activeeval emits."""


class UndefinedEstimateWarning(ActiveEvalWarning):
    """A ratio estimate is undefined (no positive weight drawn yet) and NaN is returned."""


class DegenerateIntervalWarning(ActiveEvalWarning):
    """A standard error of zero collapses a Wald interval to a point."""
