"""Deriving composition tables and conceptual neighbourhoods by exhaustive enumeration.

Two generic constructions, used by the point, interval and direction calculi:

* :func:`composition_from_sample` -- given a finite sample of objects and the base relation of
  every ordered pair, the composition table is read off all triples ``(x, y, z)``: ``r(x,y)``,
  ``s(y,z)`` and ``t(x,z)`` put ``t`` in ``r ∘ s``.  The result is *sound* by construction and
  *complete* when the sample realises every qualitatively distinct triple configuration (for
  PA and IA: every weak ordering of the endpoints; the tests check completeness against GQR
  and SparQ).
* :func:`neighbourhood_from_faces` -- relations that are unions of faces of a central
  arrangement of hyperplanes (each face a sign vector of linear forms such as endpoint
  differences).  Face ``f`` lies in the closure of face ``g`` iff ``f`` conforms to ``g``
  (every coordinate of ``f`` is 0 or equal to that of ``g``).  Two relations are conceptual
  neighbours iff a face of one lies in the closure of a face of the other: a continuous
  motion of the points or endpoints can then pass from one to the other directly (Galton's
  dominance construction, used by QSTRBench Appendix C for RCC-22).
* :func:`neighbourhood_one_coordinate` -- the neighbourhood under motions that move one
  coordinate at a time (one interval endpoint: Freksa's 1992 A-neighbours for IA), found
  exactly on a half-unit grid.
"""
from __future__ import annotations

from itertools import product
from typing import Callable, Sequence

import numpy as np


def composition_from_sample(rel: np.ndarray, names: Sequence[str]) -> dict[tuple[str, str], frozenset[str]]:
    """Composition table realised by all triples of a sample.

    Args:
        rel: ``(n, n)`` integer array, ``rel[i, j]`` = index into ``names`` of the relation
            between sample objects ``i`` and ``j``.
        names: relation names, ``m`` of them.

    Returns:
        ``{(r, s): frozenset(t)}`` for every pair realised by the sample.
    """
    m = len(names)
    rel = np.asarray(rel, dtype=np.int64)
    key = (rel[:, :, None] * m + rel[None, :, :]) * m + rel[:, None, :]
    out: dict[tuple[str, str], set[str]] = {}
    for k in np.unique(key):
        k = int(k)
        r, s, t = k // (m * m), (k // m) % m, k % m
        out.setdefault((names[r], names[s]), set()).add(names[t])
    return {pair: frozenset(v) for pair, v in out.items()}


def neighbourhood_from_faces(signs: np.ndarray, rel: np.ndarray, names: Sequence[str]) -> dict[str, frozenset[str]]:
    """Conceptual neighbourhood from faces of a hyperplane arrangement.

    Args:
        signs: ``(k, f)`` array of signs (-1, 0, 1) of ``f`` linear forms for ``k`` sample
            configurations (pairs of objects); it must contain every face of every relation.
        rel: ``(k,)`` relation index of each sample.
        names: relation names.

    Returns:
        name -> frozenset of neighbour names (symmetric, irreflexive).
    """
    signs = np.asarray(signs, dtype=np.int8)
    faces, first = np.unique(signs, axis=0, return_index=True)
    frel = np.asarray(rel)[first]
    # f conforms to g: every coordinate of f is 0 or equals g's
    conf = np.all((faces[:, None, :] == 0) | (faces[:, None, :] == faces[None, :, :]), axis=2)
    nb: dict[str, set[str]] = {n: set() for n in names}
    for i, j in zip(*np.nonzero(conf)):
        a, b = names[frel[i]], names[frel[j]]
        if a != b:
            nb[a].add(b)
            nb[b].add(a)
    return {n: frozenset(v) for n, v in nb.items()}


def neighbourhood_one_coordinate(classify: Callable[[tuple], str | None], coords: int, top: int,
                                 names: Sequence[str]) -> dict[str, frozenset[str]]:
    """Conceptual neighbourhood when a single coordinate moves continuously.

    Every configuration with coordinates on the half-unit grid ``0, 0.5, ..., top`` is moved
    one coordinate at a time by a quarter unit either way.  For calculi whose relations change
    only where a coordinate equals another or a sum/difference of others (endpoint and
    duration comparisons), every change happens on the half-unit grid, so the relation a
    quarter unit away is the one holding on the whole open stretch next to the start: each
    observed change is a direct transition, and every direct transition is observed.

    Args:
        classify: configuration (tuple of ``coords`` Fractions) -> relation name, or ``None``
            for an invalid configuration (e.g. an interval with start >= end).
        coords: number of coordinates.
        top: largest grid value.
        names: relation names (keys of the result).
    """
    from fractions import Fraction
    half = [Fraction(k, 2) for k in range(2 * top + 1)]
    q = Fraction(1, 4)
    nb: dict[str, set[str]] = {n: set() for n in names}
    for cfg in product(half, repeat=coords):
        r = classify(cfg)
        if r is None:
            continue
        for c in range(coords):
            for step in (q, -q):
                moved = cfg[:c] + (cfg[c] + step,) + cfg[c + 1:]
                s2 = classify(moved)
                if s2 is not None and s2 != r:
                    nb[r].add(s2)
                    nb[s2].add(r)
    return {n: frozenset(v) for n, v in nb.items()}


def sign(a: np.ndarray) -> np.ndarray:
    """Element-wise sign as int8."""
    return np.sign(a).astype(np.int8)
