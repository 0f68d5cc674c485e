"""Algorithm 2's walk (activeeval.acquisition._walk_block) against the loop written out one draw
at a time: a draw of an instance in the campaign is free, a new instance costs its price, the
walk stops at the first new instance the budget left cannot pay, once every instance with q > 0
is in, at the draw cap, or (a session's hand-out) once the asked-for count is taken.

Prices are multiples of 1/4 so that every sum is exact in floating point: the vectorised
cumulative sums and the loop's running total then compare equal, and so do evaluate's budget
room (recomputed from the spent total) and a session's (decremented by each purchase)."""

from __future__ import annotations

import numpy as np
import pytest

from activeeval.acquisition import STOP_REASONS, _budget_room, _walk_block

PRICES = np.array([0.25, 0.5, 1.0, 1.75, 3.0])


def _reference(block, taken, price, room, support, left, draws_left, need=None):
    """One block, one draw at a time: (consumed, bought offsets, cost, left, stop)."""
    if left == 0:
        return 0, [], 0.0, 0, "pool"
    if draws_left <= 0:
        return 0, [], 0.0, left, "max_draws"
    if len(block) == 0:
        return 0, [], 0.0, left, None
    taken = set(np.flatnonzero(taken).tolist())
    bought: list[int] = []
    cost = 0.0
    block = block[:draws_left].tolist()
    for j, x in enumerate(block):
        if x in taken:
            continue
        if cost + price[x] > room:
            return j, bought, cost, left, "budget"
        if need is not None and len(bought) == need:
            return j, bought, cost, left, "need"
        bought.append(j)
        taken.add(x)
        cost += price[x]
        left -= int(support[x])
        if left == 0:
            return j + 1, bought, cost, 0, "pool"
    if need is not None and len(bought) == need:
        return len(block), bought, cost, left, "need"
    return len(block), bought, cost, left, "max_draws" if len(block) == draws_left else None


def _case(rng: np.random.Generator):
    m = int(rng.integers(1, 12))
    price = rng.choice(PRICES, size=m) if rng.random() < 0.7 else np.ones(m)
    support = rng.random(m) < 0.85
    support[rng.integers(m)] = True
    taken = rng.random(m) < rng.choice([0.0, 0.3, 0.7])
    # A draw outside the support: the draw evaluate carries over a batch, drawn from the old q.
    pool = np.arange(m) if rng.random() < 0.3 else np.flatnonzero(support)
    block = rng.choice(pool, size=int(rng.integers(0, 15))).astype(np.intp)
    left = int((support & ~taken).sum())
    return block, taken, price, support, left


def test_walk_of_one_block_equals_the_draw_by_draw_loop() -> None:
    rng = np.random.default_rng(20240611)
    seen = set()
    for _ in range(3000):
        block, taken, price, support, left = _case(rng)
        room = float(rng.choice(PRICES) * rng.integers(0, 12)) + 1e-9
        draws_left = int(rng.integers(0, 18))
        need = None if rng.random() < 0.5 else int(rng.integers(1, 6))
        step = _walk_block(
            block, taken, price, room, support=support, left=left, draws_left=draws_left,
            need=need,
        )  # fmt: skip
        want = _reference(block, taken, price, room, support, left, draws_left, need)
        got = (step.consumed, step.bought.tolist(), step.cost, step.left, step.stop)
        assert got == want, (block, taken, price, room, support, left, draws_left, need)
        assert step.stop is None or step.stop in STOP_REASONS
        seen.add(step.stop)
    assert seen == {None, *STOP_REASONS}  # every way of stopping was exercised


def _algorithm2(draws, price, support, budget, max_draws):
    """Algorithm 2 over a whole draw sequence: (new instances in order, draws walked, stop)."""
    taken: set[int] = set()
    order: list[int] = []
    spent = 0.0
    left = int(support.sum())
    for n, x in enumerate(draws.tolist()):
        if n == max_draws:
            return order, n, "max_draws"
        if x in taken:
            continue
        if spent + price[x] > budget:
            return order, n, "budget"
        order.append(x)
        taken.add(x)
        spent += price[x]
        left -= 1
        if left == 0:
            return order, n + 1, "pool"
    raise AssertionError("the draw sequence is too short for this case")


def _sequence(rng: np.random.Generator):
    m = int(rng.integers(1, 10))
    price = rng.choice(PRICES, size=m) if rng.random() < 0.7 else np.ones(m)
    q = rng.random(m) * (rng.random(m) < 0.8)
    q[rng.integers(m)] += 0.5
    q /= q.sum()
    draws = rng.choice(m, size=2000, p=q).astype(np.intp)
    budget = float(rng.choice(PRICES) * rng.integers(1, 16))
    return m, price, q > 0, draws, budget, int(rng.integers(1, 200))


def _walk_in_calls(draws, price, support, calls, max_draws, block_size, recompute_room):
    """Walk ``draws`` as a caller does: one call per (budget, need), a block of draws sourced
    whenever the walk asks for one, resuming at the first unconsumed draw. ``recompute_room``:
    evaluate's room, from the spent total at every block; else a session's, from the spent
    total at the call's start, less each purchase. Returns (new instances, draws kept, stop)."""
    taken = np.zeros(price.shape[0], dtype=bool)
    order: list[int] = []
    kept = sourced = 0
    spent = 0.0
    for budget, need in calls:
        tail, room = draws[kept:sourced], _budget_room(budget, spent)
        while True:
            room = _budget_room(budget, spent) if recompute_room else room
            left = int((support & ~taken).sum())
            step = _walk_block(
                tail, taken, price, room, support=support, left=left,
                draws_left=max_draws - kept, need=need,
            )  # fmt: skip
            if step.stop is None and tail.size == 0:
                tail = draws[sourced : sourced + min(block_size, max_draws - kept)]
                sourced += tail.shape[0]
                continue
            order += tail[step.bought].tolist()
            taken[tail[step.bought]] = True
            assert step.left == int((support & ~taken).sum())
            spent, room, kept = spent + step.cost, room - step.cost, kept + step.consumed
            tail = tail[step.consumed :]
            if step.stop is not None:
                break
    return order, kept, step.stop


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_walk_in_chunks_with_growing_budgets_equals_algorithm_2(seed: int) -> None:
    """evaluate's use: chunks of draws, the room recomputed from the spent total, the draw the
    budget cannot pay kept first in line for the next (larger) budget of a sequential run."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        _, price, support, draws, budget, max_draws = _sequence(rng)
        targets = np.linspace(0, budget, int(rng.integers(1, 5)) + 1)[1:]
        calls = [(float(t), None) for t in targets]
        got = _walk_in_calls(draws, price, support, calls, max_draws, int(rng.integers(1, 9)), True)
        assert got == _algorithm2(draws, price, support, _budget_room(budget, 0.0), max_draws)


@pytest.mark.parametrize("seed", range(4))
def test_session_walk_in_hand_outs_equals_algorithm_2(seed: int) -> None:
    """A session's use: blocks of draws, hand-outs of k new instances (the walk stops at k and
    resumes at the cursor), the room decremented by each purchase. The hand-out schedule
    changes nothing: the ids in order, the draws walked and the finish are Algorithm 2's."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(150):
        m, price, support, draws, budget, max_draws = _sequence(rng)
        # Each hand-out but the last takes a new instance: m + 1 of them reach the finish.
        calls = [(budget, int(k)) for k in rng.integers(1, 4, size=m + 1)]
        got = _walk_in_calls(
            draws, price, support, calls, max_draws, int(rng.integers(1, 9)), False
        )
        assert got == _algorithm2(draws, price, support, _budget_room(budget, 0.0), max_draws)
