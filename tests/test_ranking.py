"""Acceptance tests of activeeval.ranking: DCG/ERR and the dynamic programs of thesis App. A.1.

The single rule is eq. 6.12: a conditional expectation over a query's label vector is a sum over
all |Y|^|r| label vectors weighted by Π_z p(y_z | x, z) (eq. 6.3). Here it is computed by brute
force enumeration (lists of up to 6 items, 3–5 grades, the union of two lists up to 10 items)
with DCG and ERR evaluated straight from eq. 6.1 and 6.2, and compared with the polynomial-time
programs to 1e-10. On longer ragged pools a second, independent reference — a per-query Python
loop over pairs of rank positions, each pair's expectation taken item by item from its exponents
of κ and 1 − κ — checks the vectorised, chunked implementation.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import activeeval as ae
from activeeval import ranking as rk
from activeeval.ranking import (
    DCG,
    ERR,
    GradedRelevance,
    QueryValue,
    grades_from_classifier,
    grades_from_regression,
    ranking_difference_expectation,
    ranking_difference_moment,
    ranking_distribution,
    ranking_expectation,
    ranking_intrinsic_difference,
    ranking_intrinsic_value,
    ranking_query_costs,
    ranking_second_moment,
    ranking_values,
)

TOL = 1e-10


# ------------------------------------------------------------------- definitions (eq. 6.1/6.2)
def dcg_by_definition(grades: np.ndarray, k: int | None) -> np.ndarray:
    """Eq. 6.1 for label rows ``grades`` (S, L) of one list, truncated at k."""
    out = np.zeros(grades.shape[0])
    for i in range(grades.shape[1]):
        if k is not None and i >= k:
            break
        out += (2.0 ** grades[:, i] - 1.0) / math.log2(i + 2)
    return out


def err_by_definition(grades: np.ndarray, k: int | None, max_grade: int) -> np.ndarray:
    """Eq. 6.2 for label rows ``grades`` (S, L) of one list, truncated at k."""
    out = np.zeros(grades.shape[0])
    still = np.ones(grades.shape[0])
    for i in range(grades.shape[1]):
        if k is not None and i >= k:
            break
        stop = (2.0 ** grades[:, i] - 1.0) / 2.0**max_grade
        out += still * stop / (i + 1)
        still = still * (1.0 - stop)
    return out


def value_by_definition(measure, grades: np.ndarray) -> np.ndarray:
    if isinstance(measure, ERR):
        return err_by_definition(grades, measure.k, measure.max_grade)
    return dcg_by_definition(grades, measure.k)


# ----------------------------------------------------------------------- brute force (eq. 6.12)
def enumerate_labels(dists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All label vectors over len(dists) items and their probabilities Π_z p(y_z) (eq. 6.3)."""
    n_items, n_grades = dists.shape
    ys = np.array(list(itertools.product(range(n_grades), repeat=n_items)), dtype=np.int64)
    ys = ys.reshape(n_grades**n_items, n_items)  # an empty list has one (empty) label vector
    prob = np.ones(ys.shape[0])
    for z in range(n_items):
        prob *= dists[z, ys[:, z]]
    return ys, prob


def brute_force_moment(measure, dists, order, center):
    """E[(ℓ(r, y) − c)²] and E[ℓ] for one list (``order`` indexes rows of ``dists``)."""
    ys, prob = enumerate_labels(dists)
    values = value_by_definition(measure, ys[:, order])
    return float(prob @ (values - center) ** 2), float(prob @ values)


def brute_force_difference(measure, dists, order1, order2, center):
    """E[(ℓ(r₁, y) − ℓ(r₂, y) − c)²] and E[δ] over the union of both lists."""
    ys, prob = enumerate_labels(dists)
    delta = value_by_definition(measure, ys[:, order1]) - value_by_definition(
        measure, ys[:, order2]
    )
    return float(prob @ (delta - center) ** 2), float(prob @ delta)


# ------------------------------------------------------------------------------- strategies
@st.composite
def grade_rows(draw, n_rows: int, n_grades: int) -> np.ndarray:
    """Rows on the simplex, including one-hot rows and zero entries."""
    rows = []
    for _ in range(n_rows):
        kind = draw(st.sampled_from(["dense", "sparse", "one-hot"]))
        if kind == "one-hot":
            row = np.zeros(n_grades)
            row[draw(st.integers(0, n_grades - 1))] = 1.0
        else:
            elems = st.floats(0.0, 1.0) if kind == "dense" else st.sampled_from([0.0, 0.3, 1.0])
            row = np.array(draw(st.lists(elems, min_size=n_grades, max_size=n_grades)))
            if row.sum() == 0.0:
                row[0] = 1.0
            row = row / row.sum()
        rows.append(row)
    return np.array(rows).reshape(n_rows, n_grades)


MAX_UNION = {3: 10, 4: 8, 5: 7}  # keeps |Y|^|union| ≤ 78,125 label vectors


@st.composite
def measures(draw, n_grades: int):
    k = draw(st.sampled_from([None, 1, 2, 3, 4, 6, 7]))
    if draw(st.booleans()):
        return DCG(k=k)
    return ERR(k=k, max_grade=n_grades - 1 + draw(st.integers(0, 1)))


@st.composite
def ranked_pools(draw, max_queries: int = 3):
    """A pool of 1–3 queries; each with its own list of 0–6 items in the ranker's order."""
    n_grades = draw(st.integers(3, 5))
    lengths = draw(st.lists(st.integers(0, 6), min_size=1, max_size=max_queries))
    if sum(lengths) == 0:
        lengths[0] = 1
    proba = draw(grade_rows(sum(lengths), n_grades))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    return GradedRelevance(proba, offsets), draw(measures(n_grades))


@st.composite
def ranker_pairs(draw, max_queries: int = 2):
    """Two rankers over the same queries: overlapping candidates in different orders, items
    only one ranker shows, lists of 0–6 items, and each model's own grade distributions."""
    n_grades = draw(st.integers(3, 5))
    n_queries = draw(st.integers(1, max_queries))
    per_query = []
    for _ in range(n_queries):
        n_union = draw(st.integers(1, MAX_UNION[n_grades]))
        cand = list(range(n_union))
        # r₁ shows n₁ candidates; r₂ shows the rest (so the union is the candidate set) plus
        # some of r₁'s, in its own order; both lists have at most 6 items.
        n1 = draw(st.integers(max(0, n_union - 6), min(6, n_union)))
        r1 = draw(st.permutations(cand))[:n1]
        rest = [z for z in cand if z not in r1]
        shared = draw(st.permutations(r1))[: draw(st.integers(0, 6 - len(rest)))]
        r2 = draw(st.permutations(rest + list(shared)))
        dist1 = draw(grade_rows(n_union, n_grades))
        dist2 = draw(grade_rows(n_union, n_grades))
        per_query.append((n_union, list(r1), list(r2), dist1, dist2))
    return n_grades, per_query, draw(measures(n_grades))


def build_pair(per_query, n_grades, costs=False):
    """GradedRelevance objects of both rankers, item ids = candidate index."""
    p1, p2, i1, i2, o1, o2 = [], [], [], [], [0], [0]
    for _, r1, r2, dist1, dist2 in per_query:
        p1.append(dist1[r1].reshape(-1, n_grades))
        p2.append(dist2[r2].reshape(-1, n_grades))
        i1 += r1
        i2 += r2
        o1.append(o1[-1] + len(r1))
        o2.append(o2[-1] + len(r2))
    c1 = np.arange(1, len(i1) + 1, dtype=float) if costs else None
    c2 = np.arange(1, len(i2) + 1, dtype=float) if costs else None
    return (
        GradedRelevance(np.concatenate(p1), o1, items=np.array(i1, dtype=int), costs=c1),
        GradedRelevance(np.concatenate(p2), o2, items=np.array(i2, dtype=int), costs=c2),
    )


def union_distributions(n_union, r1, r2, dist1, dist2):
    """Per-item model of a comparison: the mixture ½p₁ + ½p₂ for shared items (eq. 5.11)."""
    out = np.empty_like(dist1)
    for z in range(n_union):
        if z in r1 and z in r2:
            out[z] = 0.5 * (dist1[z] + dist2[z])
        else:
            out[z] = dist1[z] if z in r1 else dist2[z]
    return out


# ============================================================= the DPs equal enumeration
@settings(max_examples=120)
@given(ranked_pools(), st.floats(-3.0, 3.0))
def test_absolute_moment_equals_enumeration(pool, center):
    rel, measure = pool
    moment = ranking_second_moment(rel, measure, center)
    mean = ranking_expectation(rel, measure)
    for q in range(rel.n):
        lo, hi = rel.offsets[q], rel.offsets[q + 1]
        want, want_mean = brute_force_moment(
            measure.bind(rel), rel.proba[lo:hi], np.arange(hi - lo), center
        )
        assert moment[q] == pytest.approx(want, abs=TOL)
        assert mean[q] == pytest.approx(want_mean, abs=TOL)


@settings(max_examples=120)
@given(ranker_pairs(), st.floats(-3.0, 3.0))
def test_difference_moment_equals_enumeration(pair, center):
    n_grades, per_query, measure = pair
    rel1, rel2 = build_pair(per_query, n_grades)
    moment = ranking_difference_moment(rel1, rel2, measure, center)
    mean = ranking_difference_expectation(rel1, rel2, measure)
    for q, (n_union, r1, r2, dist1, dist2) in enumerate(per_query):
        dists = union_distributions(n_union, r1, r2, dist1, dist2)
        want, want_mean = brute_force_difference(measure.bind(rel1), dists, r1, r2, center)
        assert moment[q] == pytest.approx(want, abs=TOL)
        assert mean[q] == pytest.approx(want_mean, abs=TOL)


@pytest.mark.parametrize("measure", [DCG(), DCG(k=3), ERR(), ERR(k=2)], ids=repr)
def test_same_candidates_reordered_equals_enumeration(measure):
    """Two rankers ordering the same five candidates differently (the index-update case)."""
    rng = np.random.default_rng(3)
    dist1, dist2 = rng.dirichlet(np.ones(5), size=5), rng.dirichlet(np.ones(5), size=5)
    r1, r2 = [0, 1, 2, 3, 4], [3, 0, 4, 2, 1]
    rel1 = GradedRelevance(dist1[r1], [0, 5], items=r1)
    rel2 = GradedRelevance(dist2[r2], [0, 5], items=r2)
    dists = union_distributions(5, r1, r2, dist1, dist2)
    want, _ = brute_force_difference(measure.bind(rel1), dists, r1, r2, 0.1)
    got = ranking_difference_moment(rel1, rel2, measure, 0.1)[0]
    assert got == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("measure", [DCG(), ERR(k=3)], ids=repr)
def test_disjoint_lists_equal_enumeration(measure):
    """No item in common: δ is a difference of two independent list measures."""
    rng = np.random.default_rng(4)
    dists = rng.dirichlet(np.ones(4), size=7)
    r1, r2 = [0, 1, 2], [3, 4, 5, 6]
    rel1 = GradedRelevance(dists[r1], [0, 3], items=r1)
    rel2 = GradedRelevance(dists[r2], [0, 4], items=r2)
    want, _ = brute_force_difference(measure.bind(rel1), dists, r1, r2, -0.2)
    assert ranking_difference_moment(rel1, rel2, measure, -0.2)[0] == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("measure", [DCG(), DCG(k=2), ERR(), ERR(k=1)], ids=repr)
def test_identical_rankers_have_zero_difference(measure):
    rng = np.random.default_rng(5)
    proba = rng.dirichlet(np.ones(5), size=40)
    offsets = [0, 7, 7, 20, 40]
    items = np.concatenate([rng.permutation(7), [], rng.permutation(13), rng.permutation(20)])
    rel = GradedRelevance(proba, offsets, items=items.astype(int))
    twin = GradedRelevance(proba.copy(), offsets, items=items.astype(int))
    np.testing.assert_allclose(ranking_difference_expectation(rel, twin, measure), 0.0, atol=1e-13)
    np.testing.assert_allclose(ranking_difference_moment(rel, twin, measure, 0.3), 0.09, atol=1e-12)


# ======================================================= vectorised vs per-query reference
def item_moment_table(dists, kappa):
    """E[κ^α (1 − κ)^β] of every item's label for α, β ∈ {0, 1, 2}."""
    powers = np.arange(3)
    table = (
        kappa[None, None, :] ** powers[:, None, None]
        * (1.0 - kappa)[None, None, :] ** powers[None, :, None]
    )
    return np.einsum("zg,abg->zab", dists, table)


def reference_err_cross(table, order_a, order_b, wa, wb):
    """E[ℓ_a ℓ_b] for ERR lists ``order_a``, ``order_b``: every pair of rank positions, each
    pair's expectation taken item by item from its exponents of κ and 1 − κ (eq. 6.3)."""
    total = 0.0
    union = set(order_a) | set(order_b)
    for i, z in enumerate(order_a):
        for j, zb in enumerate(order_b):
            if wa[i] == 0.0 or wb[j] == 0.0:
                continue
            term = wa[i] * wb[j]
            for item in union:
                alpha = int(item == z) + int(item == zb)
                beta = int(item in order_a[:i]) + int(item in order_b[:j])
                term *= table[item, alpha, beta]
            total += term
    return total


def reference_err_mean(table, order, w):
    total = 0.0
    for i, z in enumerate(order):
        term = w[i] * table[z, 1, 0]
        for item in order[:i]:
            term *= table[item, 0, 1]
        total += term
    return total


def reference_dcg_cross(dists, gains, order_a, order_b, wa, wb):
    """E[ℓ_a ℓ_b] for DCG: Σ_{i,j} d_i d_j E[g(y_{a_i}) g(y_{b_j})]."""
    total = 0.0
    for i, z in enumerate(order_a):
        for j, zb in enumerate(order_b):
            if z == zb:
                e = float(dists[z] @ gains**2)
            else:
                e = float(dists[z] @ gains) * float(dists[zb] @ gains)
            total += wa[i] * wb[j] * e
    return total


def reference_moments(measure, dists, order1, order2, center):
    """Per-query reference: E[(ℓ₁ − ℓ₂ − c)²] (order2 may be empty for absolute moments)."""
    n_grades = dists.shape[1]
    kappa = measure.grade_values(n_grades)

    def weights(order):
        return [measure.position_weights(np.array([i]))[0] for i in range(len(order))]

    w1, w2 = weights(order1), weights(order2)
    if isinstance(measure, ERR):
        table = item_moment_table(dists, kappa)
        cross = lambda a, b, wa, wb: reference_err_cross(table, a, b, wa, wb)  # noqa: E731
        mean = reference_err_mean(table, order1, w1) - reference_err_mean(table, order2, w2)
    else:
        cross = lambda a, b, wa, wb: reference_dcg_cross(dists, kappa, a, b, wa, wb)  # noqa: E731
        mean = sum(w * float(dists[z] @ kappa) for w, z in zip(w1, order1, strict=True)) - sum(
            w * float(dists[z] @ kappa) for w, z in zip(w2, order2, strict=True)
        )
    second = (
        cross(order1, order1, w1, w1)
        - 2.0 * cross(order1, order2, w1, w2)
        + cross(order2, order2, w2, w2)
    )
    return second - 2.0 * center * mean + center**2, mean


def random_ragged_pair(rng, n_queries=30, max_len=10, n_grades=5, overlap=0.6):
    """Two rankers on a ragged pool: lengths 0..max_len, shared and exclusive items."""
    p1, p2, i1, i2, o1, o2, per_query = [], [], [], [], [0], [0], []
    for _ in range(n_queries):
        n_union = int(rng.integers(0, max_len + 1))
        dist1 = rng.dirichlet(np.full(n_grades, 0.6), size=n_union).reshape(n_union, n_grades)
        dist2 = rng.dirichlet(np.full(n_grades, 0.6), size=n_union).reshape(n_union, n_grades)
        shown1 = rng.random(n_union) < overlap + (1 - overlap) / 2
        shown2 = ~shown1 | (rng.random(n_union) < overlap)
        r1 = [int(z) for z in rng.permutation(np.flatnonzero(shown1))]
        r2 = [int(z) for z in rng.permutation(np.flatnonzero(shown2))]
        p1.append(dist1[r1].reshape(-1, n_grades))
        p2.append(dist2[r2].reshape(-1, n_grades))
        i1 += [1000 + z for z in r1]  # same ids across queries: matching is per query
        i2 += [1000 + z for z in r2]
        o1.append(o1[-1] + len(r1))
        o2.append(o2[-1] + len(r2))
        per_query.append((n_union, r1, r2, dist1, dist2))
    rel1 = GradedRelevance(np.concatenate(p1), o1, items=np.array(i1))
    rel2 = GradedRelevance(np.concatenate(p2), o2, items=np.array(i2))
    return rel1, rel2, per_query


@pytest.mark.parametrize("budget", [None, 1, 150], ids=["default-blocks", "1-elem", "150-elem"])
@pytest.mark.parametrize(
    "measure", [DCG(), DCG(k=5), ERR(max_grade=4), ERR(k=4, max_grade=5)], ids=repr
)
def test_vectorised_equals_per_query_reference(measure, budget, monkeypatch):
    """Ragged pool, empty lists, shared/exclusive items, and blocks far smaller than a query."""
    if budget is not None:
        monkeypatch.setattr(rk, "_CHUNK_ELEMENTS", budget)
        monkeypatch.setattr(rk, "_CROSS_CHUNK_ELEMENTS", budget)
    rng = np.random.default_rng(11)
    rel1, rel2, per_query = random_ragged_pair(rng)
    center = 0.37
    moment = ranking_difference_moment(rel1, rel2, measure, center)
    mean = ranking_difference_expectation(rel1, rel2, measure)
    absolute = ranking_second_moment(rel1, measure, center)
    for q, (n_union, r1, r2, dist1, dist2) in enumerate(per_query):
        dists = union_distributions(n_union, r1, r2, dist1, dist2)
        want, want_mean = reference_moments(measure, dists, r1, r2, center)
        assert moment[q] == pytest.approx(want, abs=1e-9)
        assert mean[q] == pytest.approx(want_mean, abs=1e-12)
        want_abs, _ = reference_moments(measure, dist1, r1, [], center)
        assert absolute[q] == pytest.approx(want_abs, abs=1e-9)


def test_reference_agrees_with_enumeration():
    """The per-query reference is itself checked against enumeration on a small pair."""
    rng = np.random.default_rng(12)
    dists = rng.dirichlet(np.ones(4), size=6)
    r1, r2 = [4, 0, 2, 5], [2, 1, 4, 3]
    for measure in (DCG(k=3), ERR(max_grade=3)):
        want, _ = brute_force_difference(measure, dists, r1, r2, 0.2)
        got, _ = reference_moments(measure, dists, r1, r2, 0.2)
        assert got == pytest.approx(want, abs=TOL)


def test_long_lists_do_not_underflow():
    """Products of E[1 − κ] over 400 top-graded items underflow to 0; the programs never
    divide by them (eq. A.9's suffix-product ratio would give 0/0 here)."""
    n = 400  # (1/16)^400 = 2^-1600 underflows to 0
    proba = np.tile([0.0, 0.0, 0.0, 0.0, 1.0], (n, 1))
    rel = GradedRelevance(proba, [0, n], items=np.arange(n))
    twin = GradedRelevance(proba, [0, n], items=np.arange(n)[::-1].copy())
    err = ERR(max_grade=4)
    assert np.isfinite(ranking_second_moment(rel, err, 0.0)).all()
    assert np.isfinite(ranking_difference_moment(rel, twin, err, 0.0)).all()
    # Deterministic labels: the moment is (ℓ − c)² with ℓ from the labels themselves.
    value = ranking_values(err, np.full(n, 4), [0, n])[0]
    assert ranking_second_moment(rel, err, 0.0)[0] == pytest.approx(value**2, rel=1e-12)


# =========================================================================== per-query values
@pytest.mark.parametrize(
    "measure", [DCG(), DCG(k=3), ERR(max_grade=4), ERR(k=2, max_grade=6)], ids=repr
)
def test_values_from_labels_equal_definition_per_query(measure):
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 12, size=30)
    lengths[-1] = 0  # a trailing empty list
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    labels = rng.integers(0, 5, size=offsets[-1])
    got = ranking_values(measure, labels, offsets)
    for q in range(30):
        y = labels[offsets[q] : offsets[q + 1]][None, :]
        assert got[q] == pytest.approx(value_by_definition(measure, y)[0], abs=1e-12)


def test_values_by_name_and_known_numbers():
    # DCG of grades (3, 0, 1): 7/log2(2) + 0 + 1/log2(4) = 7.5.
    assert ranking_values("dcg", [3, 0, 1], [0, 3])[0] == pytest.approx(7.5)
    # ERR with y_max = 1 and grades (1, 1): R = 1/2, ERR = 1/2 + (1/2)(1/2)/2 = 0.625.
    assert ranking_values(ERR(max_grade=1), [1, 1], [0, 2])[0] == pytest.approx(0.625)


def test_expectation_of_one_hot_model_is_the_labels_value():
    rng = np.random.default_rng(8)
    labels = rng.integers(0, 4, size=50)
    offsets = [0, 10, 25, 25, 50]
    rel = GradedRelevance(np.eye(4)[labels], offsets)
    for measure in (DCG(k=4), ERR()):
        want = ranking_values(measure.bind(rel), labels, offsets)
        np.testing.assert_allclose(ranking_expectation(rel, measure), want, atol=1e-12)
        np.testing.assert_allclose(
            ranking_second_moment(rel, measure, 1.0), (want - 1.0) ** 2, atol=1e-12
        )


# ================================================================== sampling distributions
def ragged_relevance(rng, n_queries=25, n_grades=5, costs=True, items=True):
    lengths = rng.integers(1, 15, size=n_queries)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    proba = rng.dirichlet(np.full(n_grades, 0.5), size=offsets[-1])
    ids = np.concatenate([rng.permutation(n) for n in lengths]) if items else None
    c = np.log(2.0 + rng.integers(50, 5000, size=offsets[-1])) if costs else None
    return GradedRelevance(proba, offsets, items=ids, costs=c)


@pytest.mark.parametrize("measure", [DCG(), ERR(k=5)], ids=repr)
def test_active_distribution_is_eq_6_10_with_defensive_mixture(measure):
    rng = np.random.default_rng(20)
    rel = ragged_relevance(rng)
    center = ranking_intrinsic_value(rel, measure)
    assert center == pytest.approx(float(np.mean(ranking_expectation(rel, measure))))
    lam = rel.query_costs
    core = np.sqrt(ranking_second_moment(rel, measure, center) / lam)
    want = 0.9 * core / core.sum() + 0.1 / rel.n
    np.testing.assert_allclose(ranking_distribution(rel, measure), want, rtol=1e-12)
    q = ranking_distribution(rel, measure, mix=0.0)
    np.testing.assert_allclose(q, core / core.sum(), rtol=1e-12)


@pytest.mark.parametrize("measure", [DCG(k=3), ERR()], ids=repr)
def test_comparison_distribution_is_eq_6_11(measure):
    rng = np.random.default_rng(21)
    rel1 = ragged_relevance(rng)
    # r₂: each query's items reordered, a third of them swapped for items r₁ does not show.
    items2 = []
    for q in range(rel1.n):
        own = rng.permutation(rel1.items[rel1.offsets[q] : rel1.offsets[q + 1]])
        swap = rng.random(own.shape[0]) < 1 / 3
        items2.append(np.where(swap, 1000 + own, own))
    perm = GradedRelevance(
        rng.dirichlet(np.ones(5), size=rel1.total_items),
        rel1.offsets,
        items=np.concatenate(items2),
        costs=rel1.item_costs,
    )
    delta = ranking_intrinsic_difference(rel1, perm, measure)
    lam = ranking_query_costs(rel1, perm)
    core = np.sqrt(ranking_difference_moment(rel1, perm, measure, delta) / lam)
    want = 0.9 * core / core.sum() + 0.1 / rel1.n
    np.testing.assert_allclose(ranking_distribution([rel1, perm], measure), want, rtol=1e-12)


def test_method_variants_of_section_6_3():
    rng = np.random.default_rng(22)
    rel = ragged_relevance(rng)
    m, lam = rel.n, rel.query_costs
    np.testing.assert_allclose(ranking_distribution(rel, "dcg", method="passive"), 1.0 / m)
    q_lam = ranking_distribution(rel, "dcg", method="active_lambda")
    np.testing.assert_allclose(q_lam, lam**-0.5 / np.sum(lam**-0.5), rtol=1e-12)
    # active_uniC: eq. 6.10 with λ ≡ 1.
    bare = GradedRelevance(rel.proba, rel.offsets)
    np.testing.assert_allclose(
        ranking_distribution(rel, "err", method="active_uniC"),
        ranking_distribution(bare, "err"),
        rtol=1e-12,
    )
    # active_uniD: the model replaced by uniform grade distributions, costs kept.
    uniform = GradedRelevance(np.full_like(rel.proba, 0.2), rel.offsets, costs=rel.item_costs)
    np.testing.assert_allclose(
        ranking_distribution(rel, "err", method="active_uniD"),
        ranking_distribution(uniform, "err"),
        rtol=1e-12,
    )
    # Explicit per-query costs override the item costs.
    costs = rng.uniform(0.5, 2.0, size=m)
    core = np.sqrt(ranking_second_moment(rel, "dcg", ranking_intrinsic_value(rel, "dcg")) / costs)
    np.testing.assert_allclose(
        ranking_distribution(rel, "dcg", costs=costs, mix=0.0), core / core.sum(), rtol=1e-12
    )


def test_distribution_is_a_distribution_with_the_defensive_floor():
    rng = np.random.default_rng(23)
    rel = ragged_relevance(rng, n_queries=60)
    for method in ("active", "active_uniD", "active_uniC"):
        q = ranking_distribution(rel, ERR(), method=method, mix=0.2)
        assert q.sum() == pytest.approx(1.0, abs=1e-12)
        assert q.min() >= 0.2 / rel.n - 1e-15


def test_distribution_is_uniform_when_no_query_carries_information():
    """Identical deterministic rankers: every moment is 0 and q falls back to uniform."""
    proba = np.eye(3)[[0, 1, 2, 2, 1]]
    rel = GradedRelevance(proba, [0, 2, 5], items=[0, 1, 0, 1, 2])
    q = ranking_distribution([rel, rel], "dcg", mix=0.0)
    np.testing.assert_allclose(q, 0.5)


def test_active_distribution_favours_uncertain_cheap_queries():
    """Two equally costly queries: a certain list gets less mass than an uncertain one; an
    expensive copy of the uncertain one gets less mass than the cheap one (eq. 6.10)."""
    certain = np.tile([0.0, 1.0, 0.0], (4, 1))
    unsure = np.tile([1 / 3, 1 / 3, 1 / 3], (4, 1))
    proba = np.vstack([certain, unsure, unsure])
    costs = np.concatenate([np.ones(8), 4 * np.ones(4)])
    q = ranking_distribution(GradedRelevance(proba, [0, 4, 8, 12], costs=costs), DCG(), mix=0.0)
    assert q[1] > q[0]
    assert q[1] > q[2]
    assert q[2] == pytest.approx(q[1] / 2.0)  # λ ratio 4 → sqrt gives factor 2


# ========================================================================= costs, pool ops
def test_query_costs_are_item_sums_scaled_to_mean_one():
    rel = GradedRelevance(np.full((5, 2), 0.5), [0, 2, 5], costs=[1.0, 2.0, 1.0, 1.0, 1.0])
    np.testing.assert_allclose(rel.query_costs, [1.0, 1.0])
    rel = GradedRelevance(np.full((4, 2), 0.5), [0, 1, 4], costs=[1.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(rel.query_costs, np.array([1.0, 6.0]) / 3.5)
    assert GradedRelevance(np.full((2, 2), 0.5), [0, 2]).query_costs is None


def test_comparison_costs_label_the_union_once():
    rel1 = GradedRelevance(np.full((3, 2), 0.5), [0, 3], items=["a", "b", "c"], costs=[1, 2, 3])
    rel2 = GradedRelevance(np.full((2, 2), 0.5), [0, 2], items=["c", "d"], costs=[3, 5])
    lam = ranking_query_costs(rel1, rel2)
    np.testing.assert_allclose(lam, [1.0])  # one query: scaled to mean one
    rel3 = GradedRelevance(
        np.full((4, 2), 0.5), [0, 1, 4], items=["a", "b", "c", "d"], costs=[1, 2, 3, 4]
    )
    rel4 = GradedRelevance(np.full((3, 2), 0.5), [0, 2, 3], items=["a", "x", "d"], costs=[1, 10, 4])
    np.testing.assert_allclose(ranking_query_costs(rel3, rel4), np.array([11.0, 9.0]) / 10.0)


def test_take_restricts_to_queries_in_order():
    rng = np.random.default_rng(30)
    rel = ragged_relevance(rng, n_queries=10)
    idx = np.array([7, 2, 2, 9])
    sub = rel.take(idx)
    np.testing.assert_array_equal(sub.lengths, rel.lengths[idx])
    full = ranking_second_moment(rel, ERR(), 0.2)
    np.testing.assert_allclose(ranking_second_moment(sub, ERR(), 0.2), full[idx], rtol=1e-14)
    want_items = np.concatenate([rel.items[rel.offsets[i] : rel.offsets[i + 1]] for i in idx])
    np.testing.assert_array_equal(sub.items, want_items)
    want_costs = rel.query_costs[idx]
    np.testing.assert_allclose(sub.query_costs, want_costs / want_costs.mean(), rtol=1e-14)


def test_truncated_keeps_each_lists_top_k_and_the_truncated_measures():
    rng = np.random.default_rng(31)
    rel = ragged_relevance(rng, n_queries=30)
    for k in (1, 2, 5):
        t = rel.truncated(k)
        for i in range(rel.n):  # a loop as the reference, over a small pool
            a, b = rel.offsets[i], rel.offsets[i] + min(k, rel.lengths[i])
            np.testing.assert_array_equal(t.proba[t.offsets[i] : t.offsets[i + 1]], rel.proba[a:b])
            np.testing.assert_array_equal(t.items[t.offsets[i] : t.offsets[i + 1]], rel.items[a:b])
        for meas in (DCG(k=k), ERR(k=k, max_grade=rel.n_grades - 1)):
            np.testing.assert_allclose(
                ranking_expectation(t, meas), ranking_expectation(rel, meas), rtol=1e-13
            )
            np.testing.assert_allclose(
                ranking_second_moment(t, meas, 0.3), ranking_second_moment(rel, meas, 0.3),
                rtol=1e-13,
            )  # fmt: skip
        # A query costs its top k items only (still scaled to mean one).
        top = [slice(rel.offsets[i], rel.offsets[i] + min(k, rel.lengths[i])) for i in range(rel.n)]
        lam = np.array([rel.item_costs[s].sum() for s in top])
        np.testing.assert_allclose(t.query_costs, lam / lam.mean(), rtol=1e-13)
    for bad in (0, -1, 2.0, True, None):
        with pytest.raises(ae.errors.ShapeError, match=r"^k: the truncation depth"):
            rel.truncated(bad)


def test_take_refuses_fractional_indices():
    rel = ragged_relevance(np.random.default_rng(32), n_queries=5)
    for bad in ([0.7], [[1, 2]], ["1"]):
        with pytest.raises(ae.errors.ShapeError, match=r"^index: expected 1-d integer"):
            rel.take(bad)
    assert rel.take([]).n == 0


def test_a_campaign_refuses_an_err_max_grade_above_the_models_grades():
    """Labels are checked against the model's grades 0..G−1: a larger ERR max_grade used to
    be accepted and every real top grade then refused by the oracle check."""
    rng = np.random.default_rng(33)
    off = np.arange(0, 41, 4)
    proba = rng.dirichlet(np.ones(4), 40)
    calls = []

    def oracle(idx):
        calls.append(idx)
        return [np.full(4, 4)] * len(idx)

    rel = GradedRelevance(proba, off, items=np.tile(np.arange(4), 10))
    with pytest.raises(
        ae.errors.LabelSpaceError, match=r"^max_grade: is 4 .* grades are 0, \.\.\., 3"
    ):
        ae.evaluate(rel, oracle, ERR(max_grade=4), budget=3)
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^max_grade: is 4"):
        ae.compare([rel, rel], oracle, ERR(max_grade=4), budget=3)
    assert calls == []
    # A single-grade model binds ERR's max_grade to 1 (review helper-31: it was refused).
    one = GradedRelevance(np.ones((40, 1)), off)
    r1 = ae.evaluate(one, lambda i: [np.zeros(4, int)] * len(i), "err", budget=40)
    assert r1.estimate == 0.0
    # The fix the message gives: a zero column for grade 4.
    rel5 = GradedRelevance(np.c_[proba, np.zeros(40)], off)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ae.DegenerateIntervalWarning)
        r = ae.evaluate(rel5, oracle, ERR(max_grade=4), budget=3, random_state=0)
    # Every item grade 4: R = 15/16 at each of 4 positions.
    stop = 15 / 16
    want = sum(stop * (1 - stop) ** j / (j + 1) for j in range(4))
    assert r.estimate == pytest.approx(want, rel=1e-12)


# =============================================================================== conversions
def test_grades_from_regression_is_a_discretized_gaussian():
    mean = np.array([0.2, 1.7, 3.9, 10.0, -4.0])
    std = np.array([0.5, 1.0, 0.3, 2.0, 1.0])
    got = grades_from_regression(mean, std, 5)
    edges = np.array([-np.inf, 0.5, 1.5, 2.5, 3.5, np.inf])
    want = np.diff(stats.norm.cdf((edges[None, :] - mean[:, None]) / std[:, None]), axis=1)
    np.testing.assert_allclose(got, want, atol=1e-15)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)


def test_grades_from_regression_point_prediction_is_one_hot():
    got = grades_from_regression([0.2, 2.6, 9.0, -1.0], [0.0, 0.0, 0.0, 0.0], 4)
    np.testing.assert_array_equal(got, np.eye(4)[[0, 3, 3, 0]])


def test_grades_from_classifier_places_columns_at_their_grade():
    proba = np.array([[0.5, 0.2, 0.3], [0.1, 0.1, 0.8]])
    np.testing.assert_array_equal(grades_from_classifier(proba), proba)
    got = grades_from_classifier(proba, classes=[0, 2, 4])
    np.testing.assert_array_equal(got[:, [0, 2, 4]], proba)
    np.testing.assert_array_equal(got[:, [1, 3]], 0.0)


# ====================================================================== estimation adapter
def test_query_value_adapter_gives_the_self_normalized_estimate():
    rng = np.random.default_rng(40)
    rel = ragged_relevance(rng, n_queries=50)
    q = ranking_distribution(rel, ERR())
    idx = ae.sampling.draw(q, 30, random_state=1)
    sub = rel.take(idx)
    labels = rng.integers(0, 5, size=sub.total_items)
    values = ranking_values(ERR().bind(rel), labels, sub.offsets)
    est = ae.estimators.inference.estimate(QueryValue(ERR()), values, np.zeros(30), q[idx])
    v = 1.0 / (rel.n * q[idx])
    assert est.estimate == pytest.approx(float(v @ values / v.sum()), rel=1e-12)
    u = v * (values - est.estimate) / v.sum()
    assert est.stderr == pytest.approx(float(np.sqrt(u @ u)), rel=1e-12)
    cmp = ae.estimators.inference.paired_test(
        QueryValue("err"), [values, 0.5 * values], np.zeros(30), q[idx]
    )
    assert cmp.difference == pytest.approx(0.5 * est.estimate, rel=1e-12)


def test_union_lists_first_rankers_items_then_the_seconds_own():
    rel1 = GradedRelevance(np.full((5, 2), 0.5), [0, 3, 5], items=["a", "b", "c", "a", "d"])
    rel2 = GradedRelevance(np.full((5, 2), 0.5), [0, 2, 5], items=["x", "b", "d", "y", "z"])
    items, offsets = rk.ranking_union(rel1, rel2)
    assert items.tolist() == ["a", "b", "c", "x", "a", "d", "y", "z"]
    assert offsets.tolist() == [0, 4, 8]
    items, offsets = rk.ranking_union(rel1, rel2, [1, 1, 0])
    assert items.tolist() == ["a", "d", "y", "z"] * 2 + ["a", "b", "c", "x"]
    assert offsets.tolist() == [0, 4, 8, 12]


@pytest.mark.parametrize("measure", [DCG(k=3), ERR()], ids=repr)
def test_pair_values_score_each_ranker_from_union_labels(measure):
    rng = np.random.default_rng(41)
    rel1, rel2, _ = random_ragged_pair(rng, n_queries=15)
    index = np.array([3, 0, 3, 14, 7])
    items, offsets = rk.ranking_union(rel1, rel2, index)
    labels = rng.integers(0, 5, size=items.shape[0])
    got1, got2 = rk.ranking_pair_values(rel1, rel2, measure, index, labels)
    bound = measure.bind(rel1)
    for d, q in enumerate(index):
        span = slice(offsets[d], offsets[d + 1])
        grade = dict(zip(items[span], labels[span], strict=True))
        assert len(grade) == span.stop - span.start  # every union item once
        for rel, got in ((rel1, got1), (rel2, got2)):
            ys = np.array([[grade[z] for z in rel.items[rel.offsets[q] : rel.offsets[q + 1]]]])
            ys = ys.reshape(1, -1)
            assert got[d] == pytest.approx(value_by_definition(bound, ys)[0], abs=1e-12)
    with pytest.raises(ae.errors.ShapeError, match=r"^labels: expected"):
        rk.ranking_pair_values(rel1, rel2, measure, index, labels[:-1])


def test_default_mix_matches_sampling():
    assert rk.DEFAULT_MIX == ae.methods.DEFAULT_MIX


# =============================================================================== validation
GOOD = np.full((3, 2), 0.5)


@pytest.mark.parametrize(
    ("offsets", "fragment"),
    [
        ([1, 3], "must start at 0"),
        ([0, 2, 1, 3], "decreases"),
        ([0, 2], "ends at 2"),
        ([[0, 3]], "1-d"),
        ([0.0, 1.5, 3.0], "integers"),
        (["a", "b"], "integers"),
    ],
)
def test_bad_offsets_raise_naming_offsets(offsets, fragment):
    with pytest.raises(ae.errors.InvalidOffsetsError, match=fragment) as info:
        GradedRelevance(GOOD, offsets)
    assert str(info.value).startswith("offsets:")
    assert isinstance(info.value, ValueError)


def test_rows_not_summing_to_one_raise_naming_proba():
    with pytest.raises(ae.errors.ProbabilityRowsError, match=r"^proba: row 1 sums to 0\.9"):
        GradedRelevance([[0.5, 0.5], [0.4, 0.5]], [0, 2])
    with pytest.raises(ae.errors.ProbabilityRowsError, match=r"^proba: row 0"):
        GradedRelevance([[-0.5, 1.5]], [0, 1])


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_non_positive_costs_raise_naming_costs(bad):
    with pytest.raises(ae.errors.InvalidCostsError, match=r"^costs: entry 1"):
        GradedRelevance(GOOD, [0, 3], costs=[1.0, bad, 1.0])
    with pytest.raises(ae.errors.ShapeError, match=r"^costs:"):
        GradedRelevance(GOOD, [0, 3], costs=[1.0, 1.0])


def test_item_ids_must_be_unique_within_a_query_and_match_rows():
    with pytest.raises(
        ae.errors.RankingItemsError, match=r"^items: query 1 lists an item id twice"
    ):
        GradedRelevance(np.full((5, 2), 0.5), [0, 2, 5], items=[1, 2, 1, 3, 1])
    GradedRelevance(np.full((4, 2), 0.5), [0, 2, 4], items=[1, 2, 1, 2])  # across queries: fine
    with pytest.raises(ae.errors.ShapeError, match=r"^items:"):
        GradedRelevance(GOOD, [0, 3], items=[1, 2])


def test_string_item_ids_match_like_integer_ids():
    rng = np.random.default_rng(31)
    rel1, rel2, _ = random_ragged_pair(rng, n_queries=12)
    as_str = [
        GradedRelevance(r.proba, r.offsets, items=np.array([f"doc{i}" for i in r.items]))
        for r in (rel1, rel2)
    ]
    for measure in (DCG(k=4), ERR()):
        np.testing.assert_allclose(
            ranking_difference_moment(*as_str, measure, 0.1),
            ranking_difference_moment(rel1, rel2, measure, 0.1),
            rtol=1e-14,
        )
    with pytest.raises(
        ae.errors.RankingItemsError, match=r"^items: relevance\[0\] has ids of dtype"
    ):
        ranking_difference_moment(rel1, as_str[1], "dcg", 0.0)


def test_comparisons_need_items_same_pool_and_grades():
    a = GradedRelevance(GOOD, [0, 3], items=[0, 1, 2])
    with pytest.raises(ae.errors.RankingItemsError, match=r"^relevance\[1\]: has no item ids"):
        ranking_difference_moment(a, GradedRelevance(GOOD, [0, 3]), "dcg", 0.0)
    with pytest.raises(ae.errors.ShapeError, match=r"^relevance\[1\]: covers 2 queries"):
        ranking_difference_moment(a, GradedRelevance(GOOD, [0, 1, 3], items=[0, 1, 2]), "err", 0)
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^relevance\[1\]: has 3 grades"):
        ranking_distribution([a, GradedRelevance(np.full((3, 3), 1 / 3), [0, 3], items=[0, 1, 2])])
    with pytest.raises(ae.errors.InvalidCostsError, match=r"^costs: only one"):
        ranking_query_costs(a, GradedRelevance(GOOD, [0, 3], items=[0, 1, 2], costs=[1, 1, 1]))


def test_bad_labels_raise_naming_labels():
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^labels: entry 1"):
        ranking_values("dcg", [1, -1], [0, 2])
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^labels: entry 0"):
        ranking_values("dcg", [0.5, 1], [0, 2])
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^labels: entry 1 is grade 5"):
        ranking_values(ERR(max_grade=4), [1, 5], [0, 2])
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^max_grade:"):
        ranking_values("err", [1, 2], [0, 2])
    with pytest.raises(
        ae.errors.InvalidOffsetsError, match=r"^offsets: ends at 3 but labels has 2"
    ):
        ranking_values("dcg", [1, 2], [0, 3])


def test_bad_measure_parameters_raise():
    with pytest.raises(ae.errors.ShapeError, match=r"^k:"):
        DCG(k=0)
    with pytest.raises(ae.errors.ShapeError, match=r"^max_grade:"):
        ERR(max_grade=0)
    with pytest.raises(ae.errors.LabelSpaceError, match=r"^max_grade: is 2"):
        ERR(max_grade=2).bind(GradedRelevance(np.full((1, 5), 0.2), [0, 1]))
    with pytest.raises(ae.errors.UnknownOptionError, match=r"^measure:"):
        ranking_distribution(GradedRelevance(GOOD, [0, 3]), "ndcg")


def test_bad_methods_and_costs_raise():
    rel = GradedRelevance(GOOD, [0, 1, 3])
    with pytest.raises(ae.errors.UnknownOptionError, match=r"^method:"):
        ranking_distribution(rel, "dcg", method="active_0")
    with pytest.raises(ae.errors.InvalidCostsError, match=r"^costs: method='active_lambda'"):
        ranking_distribution(rel, "dcg", method="active_lambda")
    with pytest.raises(ae.errors.InvalidCostsError, match=r"^costs: entry 0"):
        ranking_distribution(rel, "dcg", costs=[0.0, 1.0])
    with pytest.raises(ae.errors.ShapeError, match=r"^mix:"):
        ranking_distribution(rel, "dcg", mix=1.5)
    with pytest.raises(ae.errors.InvalidVarianceError, match=r"^std: entry 0"):
        grades_from_regression([1.0], [-1.0], 3)


def test_optimal_distribution_routes_ranked_pools_to_the_ranking_programs() -> None:
    rng = np.random.default_rng(3)
    offsets = np.r_[0, np.cumsum(rng.integers(1, 8, 40))]
    items = np.arange(offsets[-1])
    a = ae.GradedRelevance(rng.dirichlet(np.ones(4), offsets[-1]), offsets, items=items)
    b = ae.GradedRelevance(rng.dirichlet(np.ones(4), offsets[-1]), offsets, items=items)
    np.testing.assert_array_equal(
        ae.sampling.optimal_distribution(a, "dcg"), ae.ranking.ranking_distribution(a, "dcg")
    )
    np.testing.assert_array_equal(
        ae.sampling.optimal_distribution([a, b], ae.ERR()),
        ae.ranking.ranking_distribution([a, b], ae.ERR()),
    )


def test_intrinsic_values_take_pool_weights() -> None:
    rng = np.random.default_rng(31)
    lengths = rng.integers(0, 6, 40)
    off = np.r_[0, np.cumsum(lengths)]
    proba = rng.dirichlet(np.ones(3), int(off[-1]))
    items = np.concatenate([rng.permutation(10)[:n] for n in lengths])
    rel1 = GradedRelevance(proba, off, items=items)
    rel2 = GradedRelevance(proba[::-1].copy(), off, items=items)
    p = rng.uniform(0, 2, 40)
    for meas in ("dcg", ERR(k=3)):
        e = ranking_expectation(rel1, meas)
        assert ranking_intrinsic_value(rel1, meas, p) == pytest.approx(p @ e / p.sum(), rel=1e-12)
        assert ranking_intrinsic_value(rel1, meas) == pytest.approx(e.mean(), rel=1e-12)
        d = ranking_difference_expectation(rel1, rel2, meas)
        got = ranking_intrinsic_difference(rel1, rel2, meas, p)
        assert got == pytest.approx(p @ d / p.sum(), rel=1e-12, abs=1e-15)
