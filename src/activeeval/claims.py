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

These figures, and the measured coverage of each side of the bounds, are on the *Planning a
budget* page of the documentation (``docs/how-it-works/planning.md``, Claims).
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
    """A claim ``quantity op threshold`` about a measure or a pair's difference.

    Established by a result's one-sided bound: ``<=`` and ``<`` by the upper bound,
    ``>=`` and ``>`` by the lower bound. Usually made by
    [parse_claim][activeeval.claims.parse_claim] from text such as ``"f1 >= 0.80"``; the
    same claims serve release gates (``activeeval session status --gate``) and stopping
    rules.

    Parameters
    ----------
    quantity : str
        A measure's name (``"f1"``, ``"error_rate"``, …), or ``"difference"`` for a pair's
        Δ = G(model 0) − G(model 1) as [compare][activeeval.compare] reports it.
    op : str
        The comparison: ``"<="``, ``"<"``, ``">="`` or ``">"``.
    threshold : float
        A finite number.

    Raises
    ------
    UnknownOptionError
        An ``op`` that is not one of the four.
    ShapeError
        A threshold that is not a finite number.

    See Also
    --------
    activeeval.claims.parse_claim : Read a claim from text.
    activeeval.claims.Verdict : A claim checked against a result.
    EvaluationResult.confidence_interval : The one-sided bounds a claim is checked on.

    Examples
    --------
    >>> from activeeval.claims import Claim
    >>> claim = Claim("error_rate", "<=", 0.05)
    >>> print(claim)
    error_rate <= 0.05
    >>> claim.alternative
    'less'
    """

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

        A false claim passes as often as that side of the bound fails to cover; where the
        bound covers less than ``level`` (rare error rates, small differences) gates pass
        false claims more often (measured: ``docs/how-it-works/planning.md``, Claims). A
        result with the anytime-valid interval is checked on its anytime-valid bound.

        Parameters
        ----------
        result : EvaluationResult or ComparisonResult
            The estimate the claim is about: an evaluation of the measure the claim names,
            or a comparison of two models for a claim about ``difference``.
        level : float
            Confidence level of the one-sided bound, in (0, 1).
        aliases : tuple of str
            Other names the measure goes by (the CLI's ``dcg@10``).

        Returns
        -------
        Verdict
            Established or not, with the bound and the margin.

        Raises
        ------
        UnknownOptionError
            The claim names another quantity than ``result`` estimates (its measure for an
            evaluation, ``difference`` for a comparison of two models).
        ShapeError
            The threshold lies outside the measure's range (the claim can never be
            established, or always holds).

        Examples
        --------
        >>> import numpy as np
        >>> import activeeval as ae
        >>> from activeeval.claims import parse_claim
        >>> rng = np.random.default_rng(0)
        >>> p = rng.beta(8, 1, size=1000)
        >>> proba = np.column_stack([p, 1 - p])
        >>> y = (rng.uniform(size=1000) > p).astype(int)
        >>> res = ae.evaluate(proba, lambda idx: y[idx], "error_rate", budget=100,
        ...                   random_state=0)
        >>> print(parse_claim("error_rate <= 0.25").check(res))
        error_rate <= 0.25: established (one-sided 95% upper bound 0.202, 0.048 inside)
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
            names = tuple(dict.fromkeys((result.measure, *aliases)))  # each name once
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
        # The opposite one-sided bound at the same level: beyond the threshold, the claim is
        # refuted (its negation established), as a stopping rule's claim is settled either way.
        other = "greater" if self.alternative == "less" else "less"
        o_low, o_high = result.confidence_interval(lv, alternative=other)
        against = o_low - self.threshold if self.alternative == "less" else self.threshold - o_high
        refuted = against > 0 or (against == 0 and strict)
        return Verdict(self, margin > 0 or (margin == 0 and not strict), bound, lv, margin,
                       refuted=bool(refuted))  # fmt: skip

    def __str__(self) -> str:
        return f"{self.quantity} {self.op} {self.threshold:.10g}"


@dataclass(frozen=True)
class Verdict:
    """A claim checked against a result, as [Claim.check][activeeval.claims.Claim.check]
    returns it.

    ``print(verdict)`` says in one line whether the claim is established, on which bound,
    and by how much.

    Attributes
    ----------
    claim : Claim
        The claim checked.
    established : bool
        Whether the one-sided ``bound`` at ``level`` lies on the claim's side of the
        threshold (on it, for ``<=`` and ``>=``).
    bound : float
        The one-sided bound: upper for ``<=`` and ``<``, lower for ``>=`` and ``>``; NaN
        before the first label.
    level : float
        Confidence level of the bound.
    margin : float
        How far the bound lies inside the threshold (negative: short by that much; NaN
        before the first label).
    refuted : bool
        Whether the opposite one-sided bound at ``level`` lies beyond the threshold: the
        claim's negation is established (more labels will not establish the claim, unless
        that bound was one of the 1 − ``level`` that miss).

    See Also
    --------
    activeeval.claims.Claim : The claim and its ``check``.
    activeeval.claims.parse_claim : Read a claim from text.

    Examples
    --------
    >>> import numpy as np
    >>> import activeeval as ae
    >>> from activeeval.claims import parse_claim
    >>> rng = np.random.default_rng(0)
    >>> p = rng.beta(8, 1, size=1000)
    >>> proba = np.column_stack([p, 1 - p])
    >>> y = (rng.uniform(size=1000) > p).astype(int)
    >>> res = ae.evaluate(proba, lambda idx: y[idx], "error_rate", budget=100,
    ...                   random_state=0)
    >>> verdict = parse_claim("error_rate <= 0.2").check(res)
    >>> print(verdict)
    error_rate <= 0.2: not established yet (one-sided 95% upper bound 0.2017, 0.0017 short)
    >>> verdict.established, round(verdict.margin, 3)
    (False, -0.002)
    """

    claim: Claim
    established: bool
    bound: float
    level: float
    margin: float
    refuted: bool = False

    def __str__(self) -> str:
        side = "upper" if self.claim.alternative == "less" else "lower"
        if math.isnan(self.bound):
            return f"{self.claim}: not established (no estimate yet)"
        how = f"one-sided {self.level * 100:.10g}% {side} bound {self.bound:.4g}"
        if self.established:
            return f"{self.claim}: established ({how}, {abs(self.margin):.4g} inside)"
        if self.refuted:
            other = "lower" if side == "upper" else "upper"
            return (
                f"{self.claim}: refuted ({how}; the {other} bound at the same level lies "
                "beyond the threshold: more labels will not establish it)"
            )
        if self.margin == 0:
            return f"{self.claim}: not established ({how}, on the threshold)"
        return f"{self.claim}: not established yet ({how}, {abs(self.margin):.4g} short)"


def parse_claim(text: str) -> Claim:
    """Read a claim such as ``"f1 >= 0.80"``.

    The threshold may end in ``%`` (``"error_rate <= 5%"`` is 0.05; for a difference,
    percentage points); ``≤``, ``≥`` and ``−`` read as ``<=``, ``>=`` and ``-``. A measure's
    name is its ``name`` (``f1``, ``f_beta(0.5)``, ``error_rate``, ``mse``, ``dcg``, …); a
    pair's difference is ``difference``.

    Parameters
    ----------
    text : str
        ``quantity op number``, ``op`` one of ``<=``, ``<``, ``>=``, ``>``.

    Returns
    -------
    Claim
        The claim, to check against a result with ``Claim.check``.

    Raises
    ------
    ShapeError
        ``text`` is not ``quantity op number``.

    See Also
    --------
    activeeval.claims.Claim : The claim and its ``check``.
    activeeval.claims.Verdict : A claim checked against a result.

    Examples
    --------
    >>> from activeeval.claims import parse_claim
    >>> parse_claim("error_rate <= 5%")
    Claim(quantity='error_rate', op='<=', threshold=0.05)
    >>> print(parse_claim("difference ≤ 0.005"))
    difference <= 0.005
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
