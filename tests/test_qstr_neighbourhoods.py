"""Conceptual neighbourhoods against continuous motion, computed exactly.

Two random configurations are joined by a straight-line motion of all coordinates (endpoints
or points).  Every linear form that defines the relations (endpoint differences, duration
difference, sector lines) changes sign only at a rational time, so classifying the scene at
all those times and at the midpoints between them (exact :class:`~fractions.Fraction`
arithmetic) gives the full sequence of relations passed through.  Consecutive distinct
relations must be conceptual neighbours (soundness), and every neighbourhood edge must show
up on some motion (completeness).  For IA and INDU the straight-line motions of all endpoints
check the ``"dominance"`` variant, and motions of a single endpoint the default (Freksa's
A-neighbours)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from stsim.qstr import get_calculus
from stsim.qstr.directions import cdc_relation, star_relation
from stsim.qstr.temporal import ia_relation, indu_relation


def _pa(a, b):
    return "<" if a[0] < b[0] else "=" if a[0] == b[0] else ">"


# key -> (dimension per object, classify(obj_a, obj_b), linear forms on the 2*dim coordinates)
def _interval_forms(with_duration):
    f = [(0, 2), (0, 3), (1, 2), (1, 3)]
    forms = [lambda c, i=i, j=j: c[i] - c[j] for i, j in f]
    if with_duration:
        forms.append(lambda c: (c[1] - c[0]) - (c[3] - c[2]))
    return forms


SPECS = {
    "pa": (1, _pa, [lambda c: c[0] - c[1]]),
    "ia": (2, lambda a, b: ia_relation(*a, *b), _interval_forms(False)),
    "indu": (2, lambda a, b: indu_relation(*a, *b), _interval_forms(True)),
    "cdc": (2, cdc_relation, [lambda c: c[0] - c[2], lambda c: c[1] - c[3]]),
    "star": (2, star_relation, [lambda c: c[0] - c[2], lambda c: c[1] - c[3],
                                lambda c: (c[0] - c[2]) - (c[1] - c[3]),
                                lambda c: (c[0] - c[2]) + (c[1] - c[3])]),
}


def _random_config(key, rng):
    if key in ("ia", "indu"):
        out = []
        for _ in range(2):
            s = int(rng.integers(0, 6))
            out += [s, s + int(rng.integers(1, 5))]
        return out
    dim = SPECS[key][0]
    return [int(v) for v in rng.integers(-3, 4, 2 * dim)]


def _neighbourhood(key, variant):
    cal = get_calculus(key)
    return cal.neighbours if variant is None else cal.neighbour_variants[variant]


def transitions(key, a, b):
    """Relations passed through when moving linearly from configuration a to b."""
    dim, rel, forms = SPECS[key]
    times = {Fraction(0), Fraction(1)}
    for f in forms:
        fa, fb = f(a), f(b)
        if fa != fb:
            t = Fraction(fa, fa - fb)
            if 0 < t < 1:
                times.add(t)
    ts = sorted(times)
    ts = sorted(set(ts) | {(p + q) / 2 for p, q in zip(ts, ts[1:])})
    seq = []
    for t in ts:
        c = [Fraction(x) * (1 - t) + Fraction(y) * t for x, y in zip(a, b)]
        r = rel(c[:dim], c[dim:])
        if not seq or seq[-1] != r:
            seq.append(r)
    return seq


CASES = [("pa", None, False), ("cdc", None, False), ("star", None, False),
         ("ia", "dominance", False), ("indu", "dominance", False),
         ("ia", None, True), ("indu", None, True)]


@pytest.mark.parametrize("key,variant,one_endpoint", CASES)
def test_motion_passes_only_through_neighbours_and_finds_every_edge(key, variant, one_endpoint):
    nbh = _neighbourhood(key, variant)
    rng = np.random.default_rng(11)
    seen = set()
    for _ in range(2000 if key != "indu" else 5000):
        a = _random_config(key, rng)
        b = _random_config(key, rng)
        if one_endpoint:  # move a single endpoint, keep the motion valid (start < end)
            c = int(rng.integers(len(a)))
            b = list(a)
            b[c] = int(rng.integers(-1, 11))
            if not (b[0] < b[1] and b[2] < b[3]):
                continue
        seq = transitions(key, a, b)
        for p, q in zip(seq, seq[1:]):
            assert q in nbh[p], f"{p} -> {q} is not a neighbourhood edge"
            seen.add(frozenset((p, q)))
    edges = {frozenset((p, q)) for p, nb in nbh.items() for q in nb}
    assert edges - seen == set()
