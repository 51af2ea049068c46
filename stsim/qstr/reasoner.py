"""Constraint networks over a calculus and algebraic closure (path consistency).

A network over variables ``0..n-1`` holds, for every ordered pair, a set of base relations
(bit mask, :mod:`stsim.qstr.calculus`).  Algebraic closure repeats
``R(i,k) <- R(i,k) ∩ (R(i,j) ∘ R(j,k))`` until nothing changes (Mackworth's PC-2 with a queue of
changed edges; Renz & Nebel 1999 §2).  For PA and the ORD-Horn part of IA it decides
consistency; in general it only refines, so an empty relation proves inconsistency.

An empty relation is inconsistent wherever it comes from: a constraint that contradicts an
earlier one on the same pair (``constrain(0, 1, ["<"])`` then ``[">"]``), a self-loop
constrained to exclude the identity relation (``constrain(0, 0, ["<"])``), or closure itself.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable

from .calculus import Calculus, CalculusError


class Network:
    """A qualitative constraint network.

    Args:
        calculus: the calculus of every constraint.
        n: number of variables (``n >= 1``).

    Raises:
        CalculusError: ``n < 1``.
    """

    def __init__(self, calculus: Calculus, n: int) -> None:
        if n < 1:
            raise CalculusError(f"a network needs at least one variable, got {n}")
        self.calculus = calculus
        self.n = n
        u = calculus.universe
        ident = 1 << calculus.index[calculus.identity]
        self.rel = [[ident if i == j else u for j in range(n)] for i in range(n)]

    def constrain(self, i: int, j: int, names: Iterable[str]) -> None:
        """Intersect ``R(i,j)`` with the given relations (and ``R(j,i)`` with their converse).
        A relation may become empty here (contradicting constraints, or a self-loop ``i == j``
        without the identity relation); :func:`algebraic_closure` then reports inconsistency.

        Raises:
            CalculusError: unknown relation name or variable index out of range.
        """
        if not (0 <= i < self.n and 0 <= j < self.n):
            raise CalculusError(f"variable index out of range 0..{self.n - 1}: ({i}, {j})")
        m = self.calculus.mask(names)
        self.rel[i][j] &= m
        self.rel[j][i] &= self.calculus.converse_mask(m)

    def relation(self, i: int, j: int) -> frozenset[str]:
        """Current set of possible relations between variables ``i`` and ``j``."""
        return frozenset(self.calculus.names_of(self.rel[i][j]))


def algebraic_closure(net: Network) -> bool:
    """Make ``net`` algebraically closed in place.

    Returns:
        ``False`` if some relation is or became empty, including a self-loop whose relation
        lost the identity (the network is inconsistent), else ``True``.
    """
    cal, r, n = net.calculus, net.rel, net.n
    ident = 1 << cal.index[cal.identity]
    if any(r[i][i] & ident == 0 for i in range(n)):
        return False
    if any(r[i][j] == 0 for i in range(n) for j in range(n)):
        return False
    queue = deque((i, j) for i in range(n) for j in range(n) if i != j)
    queued = set(queue)

    def tighten(a: int, b: int, allowed: int) -> bool:
        """Intersect R(a,b) with ``allowed`` (and R(b,a) with its converse); requeue both edges
        when it shrank; False when it became empty (inconsistent network)."""
        new = r[a][b] & allowed
        if new != r[a][b]:
            if not new:
                return False
            r[a][b] = new
            r[b][a] = cal.converse_mask(new)
            for e in ((a, b), (b, a)):
                if e not in queued:
                    queue.append(e)
                    queued.add(e)
        return True

    while queue:
        i, j = queue.popleft()
        queued.discard((i, j))
        rij = r[i][j]
        for k in range(n):
            if k == i or k == j:
                continue
            # R(i,k) via j, then R(k,j) via i
            if not (tighten(i, k, cal.compose_masks(rij, r[j][k]))
                    and tighten(k, j, cal.compose_masks(r[k][i], rij))):
                return False
    return True


def chain_relations(calculus: Calculus, chain: list[str]) -> frozenset[str]:
    """Relations possible between ``x0`` and ``xk`` given ``x(i-1) chain[i-1] x(i)`` for
    ``i = 1..k``, by algebraic closure of the path network.

    Raises:
        CalculusError: empty chain or unknown relation.
    """
    if not chain:
        raise CalculusError("a chain needs at least one relation")
    net = Network(calculus, len(chain) + 1)
    for i, r in enumerate(chain):
        net.constrain(i, i + 1, [r])
    algebraic_closure(net)
    return net.relation(0, len(chain))
