"""Claims about a model's measure or a pair's difference, checked by one-sided bounds.

A claim is written once, the same way for release gates (``activeeval session status
--gate``) and for stopping rules: ``"f1 >= 0.80"``, ``"error_rate <= 0.05"`` (or
``"error_rate <= 5%"``), and for a pair ``"difference <= 0.005"`` with Δ = G(model 0) −
G(model 1), the sign :func:`~activeeval.compare` reports — for a loss, model 0 at most 0.005
worse than model 1 (non-inferiority). ``<=`` / ``<`` are established by the one-sided upper
bound at the level (``alternative="less"``), ``>=`` / ``>`` by the lower bound
(``"greater"``), the same one-sided bounds every result gives
(:meth:`~activeeval.EvaluationResult.confidence_interval`).

A bound from a fixed number of labels is valid for one look: checking a gate after every
batch and stopping at the first pass is repeated testing, and passes a false claim more often
than 1 − level says. A result whose interval is the anytime-valid one (``interval ==
"anytime"``: a stopping rule was set, or ``session status --anytime``) is checked on its
anytime-valid one-sided bound, which holds at every look (:mod:`activeeval.stopping`). Measured
(``docs/results/sequential.md``): a gate set at the true value and checked after every 10
labels up to 1,000 passed in 0–4% of runs on seven of nine real tasks, 6.5% on the
overconfident digits model's error rate and 8.1% on diamonds' MSE (goal ≤ 6.4%).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ._validation import check_level
from .errors import ShapeError, UnknownOptionError
from .results import ComparisonResult, EvaluationResult

__all__ = ["Claim", "Verdict", "parse_claim"]

_CLAIM = re.compile(
    r"^\s*([A-Za-z_][\w.\-@()]*)\s*(<=|>=|<|>|≤|≥)\s*([-+]?\s*[\d.]+(?:[eE][-+]?\d+)?)\s*(%?)\s*$",
    re.ASCII,
)
_OPS = {"≤": "<=", "≥": ">="}
_SIDES = {"<=": "less", "<": "less", ">=": "greater", ">": "greater"}


@dataclass(frozen=True)
class Claim:
    """``quantity op threshold``: ``quantity`` a measure's name (``"f1"``, ``"error_rate"``,
    …) or ``"difference"``; ``op`` one of ``<=``, ``<``, ``>=``, ``>``."""

    quantity: str
    op: str
    threshold: float

    def __post_init__(self) -> None:
        if self.op not in _SIDES:
            raise UnknownOptionError(f"op: must be one of <=, <, >=, >; got {self.op!r}.")
        if not (isinstance(self.threshold, int | float) and math.isfinite(self.threshold)):
            raise ShapeError(f"threshold: must be a finite number, got {self.threshold!r}.")

    @property
    def alternative(self) -> str:
        """The side of the one-sided bound that can establish the claim."""
        return _SIDES[self.op]

    def check(
        self,
        result: EvaluationResult | ComparisonResult,
        level: float = 0.95,
        *,
        aliases: tuple[str, ...] = (),
    ) -> Verdict:
        """Whether the one-sided bound of ``result`` at ``level`` establishes the claim.
        ``aliases``: other names the measure goes by (the CLI's ``dcg@10``).

        How often a claim is passed when it is false is the coverage of that side of the
        bound: measured with the logit interval, the upper bound of a rare error rate
        (3.5–3.9%, 100 labels) covered about 0.935 at 95%; the default's tempered interval
        covered 0.947 where the logit one covered 0.867 (breast cancer, 3.2% errors, 150
        labels), and over the stress suite of wrong models each side 0.96
        (``docs/results/robustness.md``). The upper bound of a difference between models that
        disagree on 1% of the pool, at 70–100 labels, covers about 0.90 (comparisons keep the
        Wald interval) — gates on such quantities pass a false claim more often than the
        level says.

        Raises
        ------
        UnknownOptionError
            The claim names another quantity than ``result`` estimates (its measure for an
            evaluation, ``difference`` for a comparison of two models).
        ShapeError
            The threshold lies outside the measure's range (the claim can never be
            established, or always holds).
        """
        lv = check_level(level, "level")
        if isinstance(result, ComparisonResult):
            if len(result.estimates) != 2:
                raise UnknownOptionError(
                    f"claim: a claim about 'difference' needs two models; this comparison has "
                    f"{len(result.estimates)} (its difference is the best against the "
                    "runner-up). Compare the pair the claim is about."
                )
            if self.quantity != "difference":
                raise UnknownOptionError(
                    f"claim: a comparison's claim is about 'difference' (model 0 − model 1 of "
                    f"{result.measure}), got {self.quantity!r}; e.g. 'difference <= 0.005'."
                )
        else:
            names = (result.measure, *aliases)
            if self.quantity not in names:
                raise UnknownOptionError(
                    f"claim: this result estimates {result.measure!r}, the claim is about "
                    f"{self.quantity!r}; name the measure as {' or '.join(map(repr, names))}."
                )
            lo, hi = result.value_range
            if not lo <= self.threshold <= hi:
                raise ShapeError(
                    f"claim: {result.measure} lies in [{lo:g}, {hi:g}]; a threshold of "
                    f"{self.threshold:.10g} is outside it."
                )
        low, high = result.confidence_interval(lv, alternative=self.alternative)
        bound = high if self.alternative == "less" else low
        if math.isnan(bound):
            return Verdict(self, False, math.nan, lv, math.nan)
        margin = self.threshold - bound if self.alternative == "less" else bound - self.threshold
        strict = self.op in ("<", ">")
        return Verdict(self, margin > 0 or (margin == 0 and not strict), bound, lv, margin)

    def __str__(self) -> str:
        return f"{self.quantity} {self.op} {self.threshold:.10g}"


@dataclass(frozen=True)
class Verdict:
    """A claim checked against a result: ``established`` when the one-sided ``bound`` at
    ``level`` lies on the claim's side of the threshold; ``margin`` how far (negative: short
    by that much; NaN before the first label)."""

    claim: Claim
    established: bool
    bound: float
    level: float
    margin: float

    def __str__(self) -> str:
        side = "upper" if self.claim.alternative == "less" else "lower"
        if math.isnan(self.bound):
            return f"{self.claim}: not established (no estimate yet)"
        how = f"one-sided {self.level * 100:.10g}% {side} bound {self.bound:.4g}"
        if self.established:
            return f"{self.claim}: established ({how}, {abs(self.margin):.4g} inside)"
        if self.margin == 0:
            return f"{self.claim}: not established ({how}, on the threshold)"
        return f"{self.claim}: not established yet ({how}, {abs(self.margin):.4g} short)"


def parse_claim(text: str) -> Claim:
    """``"f1 >= 0.80"`` → :class:`Claim`. The threshold may end in ``%`` (``"error_rate <=
    5%"`` is 0.05; for a difference, percentage points); ``≤``, ``≥`` and ``−`` read as
    ``<=``, ``>=`` and ``-``. A measure's name is its ``name`` (``f1``, ``f_beta(0.5)``,
    ``error_rate``, ``mse``, ``dcg``, …).

    Raises
    ------
    ShapeError
        ``text`` is not ``quantity op number``.
    """
    m = _CLAIM.match(text.replace("−", "-")) if isinstance(text, str) else None
    value: Any = None
    if m is not None:
        try:
            value = float(m.group(3).replace(" ", ""))
        except ValueError:
            value = None
    if m is None or value is None or not math.isfinite(value):
        raise ShapeError(
            f"claim: cannot read {text!r}; write 'quantity op number', e.g. 'f1 >= 0.80', "
            "'error_rate <= 5%' or 'difference <= 0.005' (op one of <=, <, >=, >)."
        )
    if m.group(4):
        value /= 100.0
    return Claim(m.group(1), _OPS.get(m.group(2), m.group(2)), value)
