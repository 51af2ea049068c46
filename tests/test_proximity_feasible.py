"""Proximity localisation always answers inside the exact feasible set (issue 14, item 3).

F = the domain, inside every detecting sensor's closed disk, outside every silent sensor's
disk.  Hand-built degenerate scenes: tangent disks (F is one point), a thin lens, a crescent
whose centroid lies outside it, and inconsistent readings (F empty: ``no_estimate``).
"""
from __future__ import annotations

import numpy as np
import pytest

from stsim.baselines import BASELINES
from stsim.baselines.geometry import (feasible_region, proximity_estimate, proximity_margin)

from tests.helpers import tier1_task

R = 4.0


def _solve(sensors, hits):
    t = tier1_task("stark.localization.proximity", sensors, hits, radius=R)
    (a,) = BASELINES[t.family](t)
    return a


def _feasible(p, sensors, hits, tol=1e-9):
    """Exact membership test written out: within R of each detecting sensor, beyond R of each
    silent one, inside [0, 10]^2 (slack ``tol`` for binary floats)."""
    d = np.hypot(*(np.asarray(sensors, float) - np.asarray(p, float)).T)
    h = np.asarray(hits) >= 0.5
    return bool(np.all(d[h] <= R + tol) and np.all(d[~h] > R - tol) and np.all((np.asarray(p) >= -tol) & (np.asarray(p) <= 10 + tol)))


@pytest.mark.parametrize("sensors, hits, point", [
    # the scene: centres 8 apart on y = 2.007, the disks touch at the midpoint only
    ([[1.013, 2.007], [9.013, 2.007]], [1, 1], (5.013, 2.007)),
    # diagonal tangency: offset (4.8, 6.4) has length 8 (3-4-5 triangle times 1.6)
    ([[1.013, 2.007], [5.813, 8.407]], [1, 1], (3.413, 5.207)),
    # tangency plus a third detection whose disk holds the tangent point (distance 3.493)
    ([[1.013, 2.007], [9.013, 2.007], [5.013, 5.5]], [1, 1, 1], (5.013, 2.007)),
    # tangency with a fourth, silent sensor far from the point (distance 8.73)
    ([[1.013, 2.007], [9.013, 2.007], [5.013, 5.5], [9.5, 9.5]], [1, 1, 1, 0], (5.013, 2.007)),
    # thin lens: centres 7.9999 apart, width 1e-4 and height 0.04; area ~ 3e-6 * ... < 1e-6
    ([[1.013, 2.007], [9.0129, 2.007]], [1, 1], (5.01295, 2.007)),
])
def test_degenerate_feasible_set_returns_its_point(sensors, hits, point):
    a = _solve(sensors, hits)
    assert a.status == "ok"
    assert a.value == pytest.approx(point, abs=1e-7)
    assert _feasible(a.value, sensors, hits)
    # polygonal disks lose the tangency: the inner approximation is empty
    assert feasible_region(np.array(sensors, float), np.array(hits, float), R).area < 1e-6


def test_thin_lens_of_some_area_gives_its_centroid():
    # centres 7.96 apart: a lens 0.04 wide, symmetric about x = 4.993 and y = 2.007
    sensors, hits = [[1.013, 2.007], [8.973, 2.007]], [1, 1]
    a = _solve(sensors, hits)
    assert a.value == pytest.approx((4.993, 2.007), abs=1e-6)
    assert _feasible(a.value, sensors, hits)


def test_crescent_whose_centroid_lies_outside_it():
    # detected by (5, 5), not by (5.5, 5): a crescent 0.5 wide on the left; its centroid
    # (x about 2.2) lies inside the silent disk
    s, h = np.array([[5.0, 5.0], [5.5, 5.0]]), np.array([1.0, 0.0])
    c = np.array(feasible_region(s, h, R).centroid.coords[0])
    assert proximity_margin(c, s, h, R)[0] < -0.1
    a = _solve(s.tolist(), h.tolist())
    assert a.status == "ok" and _feasible(a.value, s, h)


@pytest.mark.parametrize("sensors, hits", [
    ([[1.013, 2.007], [9.113, 2.007]], [1, 1]),        # detections 8.1 apart: disks disjoint
    ([[5.0, 5.0], [5.0, 5.0]], [1, 0]),                # same place, detected and not
    ([[2.0, 5.0], [8.0, 5.0], [5.0, 5.0]], [1, 1, 0]),  # the lens (x 4..6) inside a silent disk
])
def test_inconsistent_readings_give_a_clear_no_estimate(sensors, hits):
    a = _solve(sensors, hits)
    assert a.status == "no_estimate"
    assert "inconsistent readings" in a.detail and ("misses by" in a.detail or "circle" in a.detail)


def test_estimate_always_inside_the_feasible_set_on_random_scenes():
    """Random 4-sensor scenes on the printed grid (2 decimals), a third of them with two
    sensors exactly 8 apart (tangent or near-tangent disks), readings true for a random target."""
    rng = np.random.default_rng(14)
    for k in range(120):
        s = np.round(rng.uniform(0, 10, (4, 2)), 2)
        target = rng.uniform(0, 10, 2)
        if k % 3 == 0:
            ang = rng.choice([0.0, np.pi / 2, np.arctan2(6.4, 4.8)])
            off = 8 * np.array([np.cos(ang), np.sin(ang)])  # (8, 0), (0, 8) or (4.8, 6.4)
            s[0] = np.round([rng.uniform(0, 10 - off[0]), rng.uniform(0, 10 - off[1])], 2)
            s[1] = np.round(s[0] + off, 2)
            target = 0.5 * (s[0] + s[1])
        h = (np.hypot(*(s - target).T) <= R).astype(float)
        est, why = proximity_estimate(s, h, R)
        assert est is not None, why
        assert _feasible(est, s, h), (s, h, est)
