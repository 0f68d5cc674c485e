"""The steps every campaign shares: asking the oracle (Algorithm 2's walk over
:mod:`activeeval.acquisition`), sequential looks, the progress bar, the evaluation result."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from .._validation import (
    check_budget,
    check_costs,
    check_level,
    check_max_draws,
    real_number,
)
from ..acquisition import (
    Check,
    _budget_room,
    _LabelBook,
    _walk_block,
)
from ..errors import (
    ActiveEvalWarning,
    BudgetError,
    DegenerateIntervalWarning,
    OracleError,
    ShapeError,
    UnknownOptionError,
)
from ..estimators.inference import _wald_interval
from ..estimators.report import ComparisonOutcome, LazyTerms, Pool, Reporting
from ..results import ComparisonResult
from ..sampling import (
    Sampler,
)
from ..stopping import StoppingRule, rule_met

Oracle = Callable[[NDArray[np.intp]], ArrayLike]


@dataclass(frozen=True)
class CampaignSettings:
    """The settings :func:`~activeeval.evaluate` and :func:`~activeeval.compare` share, as
    given (each campaign validates those it uses, in its own order): the budget, method,
    costs, confidence level, seed, test distribution over the pool, the defensive mix, the
    estimator, the draw cap, the progress bar, and a comparison's sequential protocol
    (``sequential``, ``alpha``, ``step``) and the stopping rule's arguments."""

    budget: float
    method: str
    costs: ArrayLike | None
    level: float
    random_state: Any
    pool_weights: ArrayLike | None
    mix: float
    estimator: str
    max_draws: int | None
    progress: bool | None
    sequential: bool = False
    alpha: float = 0.05
    step: float | None = None
    #: The stopping rule's arguments as given: (target_width, claim, decide, rule).
    stopping: tuple[Any, ...] = (None, None, False, "anytime")


def _ask(oracle: Oracle, check: Check, book: _LabelBook, idx: NDArray[np.intp]) -> None:
    if idx.size == 0:
        return
    try:
        got = oracle(idx)
        y = check(got, idx)
    except (KeyboardInterrupt, SystemExit) as exc:
        setattr(exc, "acquired", book.export())  # noqa: B010  (nothing is lost)
        raise
    except Exception as exc:
        n = int(book.known.sum())
        hint = ""
        if isinstance(exc, (KeyError, IndexError)):  # e.g. y[idx] on a pandas Series by label
            hint = (" The oracle is called with positions in the pool (0 … m − 1), not a "
                    "Series' index labels: read a Series with y.iloc[idx] or "
                    "y.to_numpy()[idx].")  # fmt: skip
        raise OracleError(
            f"oracle: failed on {idx.shape[0]} indices ({exc}); the {n} labels acquired before "
            f"are kept in the exception's .acquired attribute.{hint}",
            book.export(),
        ) from exc
    book.add(idx, y)


class _Acquisition:
    """Algorithm 2's loop — draw, label what is new, stop at the first draw the budget cannot
    pay (:func:`~activeeval.acquisition._walk_block`) — a chunk of draws at a time. It can be
    resumed with a larger budget (the sequential protocol): the draw that stopped it stays first
    in line, so the draws remain an i.i.d. sequence from q."""

    def __init__(
        self,
        q: NDArray[np.float64],
        oracle: Oracle,
        check: Check,
        costs: NDArray[np.float64] | None,
        rng: np.random.Generator,
        max_draws: int,
        bar: Any,
        book: _LabelBook | None = None,
    ) -> None:
        self.q, self.oracle, self.check = q, oracle, check
        self.costs, self.rng, self.max_draws, self.bar = costs, rng, max_draws, bar
        self.book = _LabelBook(q.shape[0]) if book is None else book
        # Without costs every label costs 1: a read-only view, no memory per instance.
        self.price = np.broadcast_to(1.0, q.shape) if costs is None else costs
        self.sampler = Sampler(q)
        self.support = q > 0
        self.left = int(self.support.sum()) - int(self.book.known[self.support].sum())
        self.spent = 0.0
        self.kept: list[NDArray[np.intp]] = []
        self.kept_q: list[NDArray[np.float64]] = []
        self.n_kept = 0
        self.pending = np.empty(0, dtype=np.intp)
        self.pending_q = np.empty(0)  # the q each pending draw was drawn from
        self.switched = False  # True once q has changed (batch-adaptive sampling)
        self.capped = False  # True when the draw cap stopped the last run

    @property
    def exhausted(self) -> bool:
        """Every instance with q > 0 is labeled: nothing is left to buy."""
        return self.left == 0

    @property
    def draws(self) -> NDArray[np.intp]:
        return np.concatenate(self.kept) if self.kept else np.empty(0, np.intp)

    @property
    def draw_q(self) -> NDArray[np.float64]:
        """The probability with which each kept draw was drawn (q may change between runs)."""
        return np.concatenate(self.kept_q) if self.kept_q else np.empty(0)

    def switch(self, q: NDArray[np.float64]) -> None:
        """Draw from ``q`` from now on. The draw that ended the batch (the first one its budget
        could not pay) stays first in line, weighted by the old q it was drawn from; later
        draws of its chunk, never looked at, are dropped. Each draw is then distributed as the
        q it was drawn from given the past, and is kept whatever it costs (the martingale
        argument of batch-adaptive sampling). Dropping that draw instead, as this did before,
        turned away the expensive draws at every batch end: with costs, a bias against them
        (−0.012 on an error rate in batches of 2 cost units, 4.5 MC standard errors)."""
        self.q = q
        self.sampler = Sampler(q)
        self.switched = True
        self.pending, self.pending_q = self.pending[:1], self.pending_q[:1]
        self.support = q > 0
        self.left = int(self.support.sum()) - int(self.book.known[self.support].sum())

    def run(self, budget: float) -> None:
        costs = self.costs
        chunk = int(min(max(2 * budget, 64), 1_000_000)) if costs is None else 4096
        while True:
            block, block_q = self.pending, self.pending_q
            self.pending, self.pending_q = np.empty(0, dtype=np.intp), np.empty(0)
            step = _walk_block(
                block, self.book.known, self.price, _budget_room(budget, self.spent),
                support=self.support, left=self.left, draws_left=self.max_draws - self.n_kept,
            )  # fmt: skip
            if step.stop is None and block.size == 0:  # the walk goes on: draw a chunk
                size = min(chunk, self.max_draws - self.n_kept)
                self.pending, self.pending_q = self.sampler.draw(size, self.rng)
                continue
            _ask(self.oracle, self.check, self.book, block[step.bought])
            self.spent += step.cost
            self.bar.update(step.bought.shape[0] if costs is None else step.cost)
            self.left = step.left
            self.kept.append(block[: step.consumed])
            self.kept_q.append(block_q[: step.consumed])
            self.n_kept += step.consumed
            if step.stop == "budget":  # the draw the budget cannot pay stays first in line
                self.pending, self.pending_q = block[step.consumed :], block_q[step.consumed :]
                return
            if step.stop is not None:
                self.capped = step.stop == "max_draws"
                return

    def require_labels(self, budget: float, reusing: bool) -> None:
        """Refuse a campaign that bought no label (a cost budget short of the first draw's
        cost), unless it reuses a census: then nothing was left to buy."""
        if self.draws.size == 0 and not (reusing and self.exhausted):
            raise _no_label_bought(budget, self.costs)

    def warn_if_capped(self, budget: float, stacklevel: int = 3) -> None:
        """Warn once the campaign is over if the draw cap, not the budget, ended it."""
        if self.capped:
            warn_capped(self.max_draws, self.spent, budget, stacklevel)


def warn_capped(max_draws: int, spent: float, budget: float, stacklevel: int) -> None:
    """The warning of a campaign the draw cap ``max_draws`` ended with ``spent`` of its
    ``budget`` spent (none if the budget was spent); ``stacklevel`` as ``warnings.warn``'s,
    counted from the caller."""
    if spent < budget * (1 - 1e-9):
        warnings.warn(
            f"max_draws: the campaign reached its cap of {max_draws} draws with "
            f"{spent:g} of the budget {budget:g} spent (repeated draws of labeled "
            "instances are free but count toward the cap); the result uses the labels "
            "bought so far. Pass a larger max_draws to spend the whole budget.",
            ActiveEvalWarning,
            stacklevel=stacklevel + 1,
        )


def _comparison_result(
    rep: Reporting,
    c: ComparisonOutcome,
    acq: _Acquisition,
    sample: dict[str, Any],
    stopped: str | None,
    terms: LazyTerms | None = None,
) -> ComparisonResult:
    """What :func:`~activeeval.compare` reports: the comparison ``c`` of the campaign's draws
    (Wald interval for Δ), with ``sample``'s fields (budget, method, draws, their q and
    labels) and the labels ``acq`` bought."""
    return ComparisonResult(
        difference=c.difference,
        stderr=c.stderr,
        p_value=c.p_value,
        ci=_wald_interval(c.difference, c.stderr, rep.level),
        best=c.best,
        estimates=c.estimates,
        level=rep.level,
        n_labels=int(acq.book.known.sum()),
        n_draws=int(sample["indices"].shape[0]),
        cost=acq.spent,
        measure=rep.measure.name,
        comparison=c.comparison,
        model_scores=c.scores,
        stopped=stopped,
        anytime_terms=terms,
        value_range=getattr(rep.measure, "value_range", (-math.inf, math.inf)),
        **sample,
    )


def _bar(b: float, lam: NDArray[np.float64] | None, progress: bool | None) -> Any:
    unit = "labels" if lam is None else "cost"
    return tqdm(total=b, unit=unit, delay=1.0, disable=progress is False, leave=False)


def _look_step(acq: _Acquisition, b: float, step: Any, default: int = 20) -> float:
    """The sequential looks' spacing: ``step``, or budget / ``default`` by default; never
    below the cheapest label where q > 0 (a smaller step would only add looks that buy
    nothing)."""
    unit = 1.0 if acq.costs is None else float(acq.costs[acq.support].min())
    if step is None:
        return max(b / default, unit)
    s = real_number(step)
    if not (math.isfinite(s) and s >= unit * (1 - 1e-12)):
        raise BudgetError(
            f"step: the labels (cost units with costs) between sequential looks must be a "
            f"finite number of at least one label ({unit:g}, the cheapest), got {step!r}; or "
            f"None for budget / {default}."
        )
    if s >= b:
        raise BudgetError(
            f"step: {step!r} is not below the budget ({b:g}): the only look would be at the "
            f"end, where the campaign stops anyway; use a smaller step, or None for budget / "
            f"{default}."
        )
    return s


def _run_comparison(
    acq: _Acquisition,
    b: float,
    sequential: bool,
    step: float | None,
    alpha: float,
    p_value: Callable[[NDArray[np.intp]], tuple[float, float]],
) -> tuple[NDArray[np.intp], str | None]:
    """Algorithm 3's loop; with ``sequential``, look every ``step`` and stop at p < alpha.
    ``p_value(draws)`` gives (p, stderr); a look with stderr 0 (e.g. a single draw, or only
    identical losses so far) carries no evidence and never stops the campaign, nor does a look
    before the first label (a step below one instance's cost)."""
    if not sequential:
        acq.run(b)
        return acq.draws, None

    def rejected(draws: NDArray[np.intp]) -> str | None:
        with warnings.catch_warnings():  # a look with stderr 0 never stops: not warned
            warnings.simplefilter("ignore", DegenerateIntervalWarning)
            pv, se = p_value(draws)
        return f"p < {alpha:g} (sequential Wald test)" if se > 0 and pv < alpha else None

    return _run_looks(acq, b, _look_step(acq, b, step), rejected)


def _run_looks(
    acq: _Acquisition,
    b: float,
    step_size: float,
    stop: Callable[[NDArray[np.intp]], str | None] | None,
) -> tuple[NDArray[np.intp], str | None]:
    """Buy ``step_size`` more (labels or cost) at a time up to the budget ``b``; after each
    look ``stop(draws)`` says why to stop now, or None to go on. No look before the first
    label; the last look (budget spent, or every instance labeled) never stops early."""
    target = 0.0
    while True:
        target = min(b, target + step_size) if stop is not None else b
        acq.run(target)
        draws = acq.draws
        if stop is None or target >= b or acq.exhausted or acq.n_kept >= acq.max_draws:
            return draws, None
        if draws.size == 0:
            continue
        why = stop(draws)
        if why is not None:
            return draws, why


def _check_step(step: Any, looks: bool, batch_size: Any = None) -> None:
    """``step`` spaces looks; refused where there are none to space (before any label)."""
    if step is None:
        return
    if batch_size is not None:
        raise UnknownOptionError(
            "step: with batch_size the looks are the batches; drop step= (or batch_size=)."
        )
    if not looks:
        raise UnknownOptionError(
            "step: spaces the looks of a stopping rule (target_width=, claim=, decide=) or of "
            "sequential=True; none is set, so nothing looks. Drop step= or set a rule."
        )


def _stop_step(acq: _Acquisition, b: float, step: float | None) -> float:
    """The looks' spacing under a stopping rule: ``step``, or budget / 100 by default (the
    anytime-valid sequence holds at every draw, so frequent looks cost no validity)."""
    return _look_step(acq, b, step, default=100)


class _Look:
    """One look of a campaign under a stopping rule
    (:func:`~activeeval.stopping.rule_met` on the draws so far)."""

    def __init__(
        self,
        stop: StoppingRule,
        pool: Pool,
        rep: Reporting,
        acq: _Acquisition,
        horizon: float,
        window: float | None = None,
    ) -> None:
        self.stop, self.pool, self.rep, self.acq = stop, pool, rep, acq
        self.horizon, self.window = horizon, window

    def __call__(self, draws: NDArray[np.intp]) -> str | None:
        acq = self.acq
        y = acq.book.lookup(draws)
        draw_q = acq.draw_q if acq.switched else None
        return rule_met(self.stop, self.pool, self.rep, draws, y, self.horizon, draw_q, self.window)


def _fixed_setup(
    m: int,
    costs: ArrayLike | None,
    default_costs: NDArray[np.float64] | None,
    budget: float,
    level: float,
    oracle: Any,
    max_draws: int | None,
    oracle_maps: str = "pool indices to labels",
) -> tuple[NDArray[np.float64] | None, float, float, int]:
    """Costs λ (given, else ``default_costs``: a ranked pool's summed item costs), budget,
    level and draw cap, checked, and the oracle a callable (``oracle_maps``: what it maps)."""
    lam = check_costs(costs, m) if costs is not None else default_costs
    lv = check_level(level)
    b = check_budget(budget, lam)
    _check_oracle(oracle, oracle_maps)
    return lam, b, lv, check_max_draws(max_draws, b, lam)


def _check_oracle(oracle: Any, oracle_maps: str = "pool indices to labels") -> None:
    if not callable(oracle):
        raise ShapeError(f"oracle: must be a callable mapping {oracle_maps}.")


def _no_label_bought(budget: float, costs: NDArray[np.float64] | None) -> BudgetError:
    """A cost budget that covers the cheapest instance but not the first one drawn."""
    mean = math.nan if costs is None else float(costs.mean())
    return BudgetError(
        f"budget: {budget!r} cost units ran out before the first label (the first instance "
        f"drawn costs more); no label was bought. Raise the budget well above the mean "
        f"instance cost ({mean:.4g})."
    )
