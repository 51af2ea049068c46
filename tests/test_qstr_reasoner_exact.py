"""Algebraic closure against an independent brute-force realisation (issue 14, item 4).

Atomic PA and IA networks (one base relation per pair) are consistent exactly when some
ordering of their points / interval endpoints realises every constraint; algebraic closure
(path consistency) decides consistency for them (PA: van Beek 1992 for {<, =, >}; atomic IA
networks are ORD-Horn, Nebel & Bürckert 1995, for which path consistency is complete).  The
brute force below places the points (endpoints) one variable at a time into every position of
the weak ordering built so far and keeps the placements that satisfy every constraint; the
relation of two placed variables is read off the definitions (Allen 1983, Fig. 2), not from
stsim's tables.
"""
from __future__ import annotations

import numpy as np
import pytest

from stsim.qstr import Network, algebraic_closure, get_calculus


def _pa_rel(x, y) -> str:
    return "<" if x < y else ">" if x > y else "="


def _ia_rel(a, b) -> str:
    """Allen's relation of interval a = (s, e) to b, from the endpoint comparisons."""
    (s1, e1), (s2, e2) = a, b
    if e1 < s2:
        return "<"
    if e2 < s1:
        return ">"
    if e1 == s2:
        return "m"
    if e2 == s1:
        return "mi"
    if s1 == s2 and e1 == e2:
        return "="
    if s1 == s2:
        return "s" if e1 < e2 else "si"
    if e1 == e2:
        return "f" if s1 > s2 else "fi"
    if s2 < s1 and e1 < e2:
        return "d"
    if s1 < s2 and e2 < e1:
        return "di"
    return "o" if s1 < s2 else "oi"


def _positions(levels: int) -> range:
    """Candidate values against ``levels`` placed levels at 0, 3, ..., 3 (levels - 1): on a
    level, or in a gap before, between or after them; each gap has two places (3k + 1 < 3k + 2)
    so both end points of a new interval can fall into one gap."""
    return range(-2, 3 * levels)


def _renumber(values):
    ranks = {v: 3 * k for k, v in enumerate(sorted(set(values)))}
    return [ranks[v] for v in values]


def brute_force_consistent(kind: str, n: int, rel: dict[tuple[int, int], str]) -> bool:
    """Whether some ordering of the points (PA) or endpoints (IA) realises every constraint
    ``rel[(i, j)]`` (i < j).  Depth-first over variables; each variable's point(s) go on or
    between the levels of the ordering so far, in every way."""
    def extend(placed: list) -> bool:
        k = len(placed)
        if k == n:
            return True
        flat = [v for p in placed for v in (p if kind == "ia" else (p,))]
        levels = len(set(flat))
        if kind == "pa":
            cands = [x for x in _positions(levels)]
        else:
            cands = [(s, e) for s in _positions(levels) for e in _positions(levels) if s < e]
        for c in cands:
            f = _pa_rel if kind == "pa" else _ia_rel
            if all(f(placed[i], c) == rel[(i, k)] for i in range(k)):
                vals = _renumber(flat + (list(c) if kind == "ia" else [c]))
                nxt = ([tuple(vals[2 * i:2 * i + 2]) for i in range(k + 1)] if kind == "ia"
                       else vals)
                if extend(nxt):
                    return True
        return False
    return extend([])


def _random_network(kind: str, rng: np.random.Generator):
    """An atomic network: the relations of a random realisation (ties likely), then with
    probability 2/3 one or two pairs changed to another base relation (often inconsistent)."""
    n = int(rng.integers(3, 7))
    if kind == "pa":
        objs = [int(v) for v in rng.integers(0, 4, n)]
        f = _pa_rel
    else:
        objs = []
        for _ in range(n):
            s, e = sorted(int(v) for v in rng.choice(6, 2, replace=False))
            objs.append((s, e))
        f = _ia_rel
    rel = {(i, j): f(objs[i], objs[j]) for i in range(n) for j in range(i + 1, n)}
    names = get_calculus(kind).names
    if rng.random() < 2 / 3:
        pairs = list(rel)
        for idx in rng.choice(len(pairs), min(len(pairs), int(rng.integers(1, 3))), replace=False):
            rel[pairs[idx]] = str(rng.choice(names))
    return n, rel


@pytest.mark.parametrize("kind", ["pa", "ia"])
def test_closure_agrees_with_brute_force_on_random_atomic_networks(kind):
    rng = np.random.default_rng(14)
    cal = get_calculus(kind)
    verdicts = []
    for _ in range(250):
        n, rel = _random_network(kind, rng)
        net = Network(cal, n)
        for (i, j), r in rel.items():
            net.constrain(i, j, [r])
        want = brute_force_consistent(kind, n, rel)
        assert algebraic_closure(net) == want, (kind, n, rel)
        verdicts.append(want)
    # both verdicts occur often enough for the comparison to mean something
    assert 60 <= sum(verdicts) <= 190


def test_brute_force_hand_cases():
    # a before b, b before c, c before a: no ordering
    assert not brute_force_consistent("pa", 3, {(0, 1): "<", (1, 2): "<", (0, 2): ">"})
    # a meets b, b meets c, a before c: realised by (0,1), (1,2), (2,3)
    assert brute_force_consistent("ia", 3, {(0, 1): "m", (1, 2): "m", (0, 2): "<"})
    # a meets b, b meets c, a meets c: a's end would equal both b's start and b's end
    assert not brute_force_consistent("ia", 3, {(0, 1): "m", (1, 2): "m", (0, 2): "m"})


@pytest.mark.parametrize("kind, first, second", [("ia", "<", ">"), ("pa", "<", ">"), ("ia", "m", "o")])
def test_contradicting_constraints_on_one_pair_are_inconsistent(kind, first, second):
    net = Network(get_calculus(kind), 2)
    net.constrain(0, 1, [first])
    net.constrain(0, 1, [second])
    assert net.relation(0, 1) == frozenset()
    assert algebraic_closure(net) is False


@pytest.mark.parametrize("kind, names, ok", [("ia", ["<"], False), ("pa", ["<", ">"], False),
                                             ("ia", ["=", "<"], True), ("pa", ["="], True)])
def test_self_loop_without_identity_is_inconsistent(kind, names, ok):
    net = Network(get_calculus(kind), 3)
    net.constrain(0, 0, names)
    assert algebraic_closure(net) is ok


def test_empty_relation_reached_through_the_converse_is_inconsistent():
    # (1, 0) constrained to "<" empties (0, 1) after "<" was set there: 0 < 1 and 1 < 0
    net = Network(get_calculus("pa"), 3)
    net.constrain(0, 1, ["<"])
    net.constrain(1, 0, ["<"])
    assert algebraic_closure(net) is False
