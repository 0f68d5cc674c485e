"""``reuse=``: the labels an earlier campaign bought, combined with a new campaign's.

The earlier draws x ~ q₁ (n₁ of them, i.i.d.) and the new ones x ~ q₂ (n₂) are weighted as
multiple importance sampling with the balance heuristic: every draw, old or new, by
p(x)/q̄(x) with the mixture q̄ = (n₁ q₁ + n₂ q₂)/(n₁ + n₂) (Veach & Guibas 1995). The expected
number of draws of x is n q̄(x), as if all n draws came from q̄, so every estimator of the
campaign (the census, the model-assisted one, the thesis's) is applied to the n draws with q̄
as their q; treating the deterministic mixture as i.i.d. draws from q̄ can only overstate the
variance (the derivation is on the *Sampling distributions* page, "Reusing labels"). Labels
the earlier campaign bought are free: a new draw of one costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..acquisition import Check, _LabelBook
from ..errors import ActiveEvalError, LabelSpaceError, ShapeError, UnknownOptionError
from ..results import ComparisonResult, EvaluationResult

#: What ``reuse=`` does not take, by argument: the reason.
_REFUSED = {
    "target_width": "has no anytime-valid sequence over two designs, so no stopping rule",
    "claim": "has no anytime-valid sequence over two designs, so no stopping rule",
    "decide": "has no anytime-valid sequence over two designs, so no stopping rule",
    "sequential": "has no sequential test over two designs",
    "step": "has no stopping rule whose looks step= could space",
    "batch_size": "is not re-planned in batches",
    "groups": "is not estimated per group yet",
    "features": "uses no pool features yet",
}


def refuse(**given: Any) -> None:
    """Refuse, by the argument's name, what a campaign with ``reuse=`` does not take."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise UnknownOptionError(
                f"{name}: a campaign with reuse= {_REFUSED[name]}; drop {name}=."
            )


@dataclass(frozen=True)
class Reused:
    """The earlier campaign's draws (pool indices, repeats included), their labels, and the
    distribution over the pool they came from."""

    draws: NDArray[np.intp]
    labels: NDArray[Any]
    q: NDArray[np.float64]

    @classmethod
    def of(cls, earlier: Any, m: int) -> Reused:
        """The draws of ``earlier``: an :class:`~activeeval.EvaluationResult` or
        :class:`~activeeval.ComparisonResult` of a campaign from one q on the same pool, or a
        :class:`~activeeval.Session` (its labeled prefix)."""
        if not isinstance(earlier, EvaluationResult | ComparisonResult) and callable(
            getattr(earlier, "estimate", None)
        ):
            session, earlier = earlier, earlier.estimate()  # its labeled prefix, with its q
            if earlier.pool_q is None:  # estimated from the pool summary: q is read now
                earlier = replace(earlier, pool_q=session.q)
        if not isinstance(earlier, EvaluationResult | ComparisonResult):
            raise ShapeError(
                "reuse: expected an earlier result of evaluate or compare, or a Session, got "
                f"{type(earlier).__name__}."
            )
        if earlier.label_offsets is not None:
            raise UnknownOptionError(
                "reuse: a ranked pool's queries are not reused yet; run the campaign afresh."
            )
        if earlier.pool_q is None:
            raise UnknownOptionError(
                "reuse: the earlier result carries no q — its campaign's q changed between "
                "its draws (batch-adaptive sampling, the stratified baseline), so its draws "
                "cannot be weighted by one q, or it is a session's estimate or comparison made "
                "from the pool summary (which keeps no q); reuse a campaign drawn from one q, "
                "or pass the Session itself."
            )
        if earlier.pool_q.shape[0] != m:
            raise ShapeError(
                f"reuse: the earlier campaign's pool has {earlier.pool_q.shape[0]} instances, "
                f"this one {m}; reuse labels of the same pool, in the same order."
            )
        draws = np.asarray(earlier.indices, dtype=np.intp)
        return cls(draws, np.asarray(earlier.labels), np.asarray(earlier.pool_q, dtype=float))

    def prefill(self, book: _LabelBook, check: Check) -> None:
        """Enter the earlier labels in the new campaign's label book (checked against the new
        predictions' label space), so that new draws of them are free."""
        idx, first = np.unique(self.draws, return_index=True)
        if not idx.size:
            return
        try:
            labels = check(self.labels[first], idx)
        except ActiveEvalError as exc:  # the check speaks of the oracle; these came from reuse
            detail = str(exc).partition(":")[2].strip()
            raise LabelSpaceError(
                f"reuse: the earlier campaign's labels do not fit these predictions ({detail})"
            ) from None
        book.add(idx, labels)

    def combined(
        self,
        new_draws: NDArray[np.intp],
        q_new: NDArray[np.float64],
        first: tuple[int, NDArray[np.float64]] | None = None,
    ) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
        """All draws (earlier first) and the balance heuristic's mixture q̄ over the pool:
        each proposal's q weighted by its count of draws. ``first``: (k, q_k) where the
        first k of ``new_draws`` came from q_k, not ``q_new`` (a draw carried over from an
        earlier stage)."""
        k, q_k = (0, q_new) if first is None else first
        n1, n2 = self.draws.shape[0], new_draws.shape[0] - k
        mixture = (n1 * self.q + k * q_k + n2 * q_new) / (n1 + k + n2)
        return np.concatenate([self.draws, new_draws]), mixture
