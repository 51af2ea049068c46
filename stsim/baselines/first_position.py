"""The prior's law of a track's first position and the step-0 posterior under it (issue 20),
for the particle filters of :mod:`stsim.baselines.sensor_particle_tracking` (range, bearing,
range+bearing) and :mod:`stsim.baselines.particle_tracking` (proximity, ToA).

Every generated trajectory is min-max normalised per axis over all its steps (STARK Appendix
7.3, :func:`stsim.sim.motion.random_trajectory`), so its first position lies *exactly* on an
edge of the domain whenever that axis is monotone at the start (29 % of range+bearing's prior
draws, corners included; 52 % of proximity's), exactly in a corner when both are (8 %, 16 %),
and within about
0.01 units of the centre when a spiral or circle from its own centre dominates (5 %).  A
smoothed histogram spreads these atoms over a fifth of a unit; under bounded noise a step-0
posterior a few hundredths wide then misses them (median step-0 error on 19 range+bearing tasks
of suite seed 7: 0.046 units with the smoothed histogram, 0.026 with this law, the Monte-Carlo
limit of ``perf/bayes_floor.py`` 0.026).

:class:`FirstPositionLaw` keeps the law's parts apart: point masses (the four corners, and the
library's first points that crowd one cell), densities along the four edges, and an area
density for the rest.  :func:`start_posterior` integrates a step's likelihood against each part
on grids refined around the positions the readings allow, and draws particles from the result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

#: a cell of the law's grid holding more than this share of the library's first points is
#: kept as point masses (the centre cluster: 5 % of first points within 0.01 units; a smooth
#: density puts about 0.002 % in a cell of 0.05 units)
DENSE_SHARE = 0.005
#: share of a uniform density on the square mixed into the law (a task drawn from another
#: prior, e.g. STARK's released tracks, keeps every position possible); 10 %, as the smoothed
#: histogram it replaces
UNIFORM_SHARE = 0.1


@dataclass(frozen=True)
class FirstPositionLaw:
    """The prior's law of the first position on the square ``[lo, hi]^2`` (plane units).

    Attributes:
        lo, hi: the domain's bounds on both axes.
        axis: (cells,) cell centres of the densities' grid (cell width ``(hi - lo) / cells``).
        area: (cells, cells) density per unit area of the part off the edges and atoms,
            indexed ``[iy, ix]``.
        lines: (4, cells) density per unit length along the edges ``x = lo``, ``x = hi``,
            ``y = lo``, ``y = hi`` (corners excluded), at the positions ``axis`` along them.
        points: (K, 2) point masses: the corners ``(lo, lo), (hi, lo), (lo, hi), (hi, hi)``,
            then the library first points that crowd one cell (:data:`DENSE_SHARE`).
        mass: (K,) their probabilities.
    The four parts' total is 1 (``area`` and ``lines`` integrate to their shares)."""
    lo: float
    hi: float
    axis: np.ndarray
    area: np.ndarray
    lines: np.ndarray
    points: np.ndarray
    mass: np.ndarray


def first_position_law(first: np.ndarray, domain=(0.0, 10.0), cells: int = 201,
                       smooth: float = 4.0, uniform: float = UNIFORM_SHARE) -> FirstPositionLaw:
    """The law of the first position estimated from prior draws ``first`` (M, 2) (the first
    points of :func:`stsim.baselines.prior_motion.motion_library`'s trajectories): points
    exactly on an edge (within 1e-9) or in a corner, and points in a cell holding more than
    :data:`DENSE_SHARE` of all (and more than 20), are counted as such; the rest is a histogram on ``cells`` x
    ``cells`` cells Gaussian-smoothed by ``smooth`` cells (reflecting at the edges), the edges'
    points a histogram along each edge smoothed the same way.  A share ``uniform`` of a
    uniform density on the square is mixed in.

    Raises ``ValueError`` for an empty ``first``, or a point not finite or outside the domain."""
    from scipy.ndimage import gaussian_filter, gaussian_filter1d
    first = np.asarray(first, float)
    lo, hi = (float(v) for v in domain)
    if first.ndim != 2 or first.shape[1] != 2 or not len(first):
        raise ValueError(f"first must be a non-empty (M, 2) array of positions, got shape {first.shape}")
    if not np.isfinite(first).all() or (first < lo - 1e-9).any() or (first > hi + 1e-9).any():
        raise ValueError(f"first positions must be finite and lie in [{lo}, {hi}]^2")
    M = len(first)
    h = (hi - lo) / cells
    axis = lo + (np.arange(cells) + 0.5) * h
    x, y = first[:, 0], first[:, 1]
    side_x = np.where(np.abs(x - lo) < 1e-9, 0, np.where(np.abs(x - hi) < 1e-9, 1, -1))
    side_y = np.where(np.abs(y - lo) < 1e-9, 0, np.where(np.abs(y - hi) < 1e-9, 1, -1))
    ix = np.clip(((x - lo) / h).astype(int), 0, cells - 1)
    iy = np.clip(((y - lo) / h).astype(int), 0, cells - 1)
    inner = (side_x < 0) & (side_y < 0)
    count = np.zeros((cells, cells))
    np.add.at(count, (iy[inner], ix[inner]), 1.0)
    dense = inner & (count[iy, ix] > max(DENSE_SHARE * M, 20))
    inner &= ~dense
    area = np.zeros((cells, cells))
    np.add.at(area, (iy[inner], ix[inner]), 1.0)
    area = gaussian_filter(area, smooth, mode="reflect")
    keep = 1.0 - uniform
    area *= keep * inner.sum() / M / max(area.sum(), 1e-300) / h ** 2
    area += uniform / (hi - lo) ** 2
    lines = np.zeros((4, cells))
    for j, (on, other, along) in enumerate(((side_x == 0, side_y, iy), (side_x == 1, side_y, iy),
                                            (side_y == 0, side_x, ix), (side_y == 1, side_x, ix))):
        m = on & (other < 0)
        if m.any():
            c = gaussian_filter1d(np.bincount(along[m], minlength=cells).astype(float), smooth, mode="reflect")
            lines[j] = keep * m.sum() / M * c / c.sum() / h
    corners = np.array([[lo, lo], [hi, lo], [lo, hi], [hi, hi]])
    cmass = np.array([((side_x == a) & (side_y == b)).sum() for a, b in ((0, 0), (1, 0), (0, 1), (1, 1))]) / M
    points = np.vstack([corners, first[dense]])
    mass = keep * np.concatenate([cmass, np.full(int(dense.sum()), 1.0 / M)])
    return FirstPositionLaw(lo, hi, axis, area, lines, points, mass)


def first_position_law_of(lib, domain=(0.0, 10.0), cells: int = 201, smooth: float = 4.0) -> FirstPositionLaw:
    """:func:`first_position_law` of a motion library's first points (``lib.pos[:, 0]``),
    cached with the library (:func:`stsim.baselines.prior_motion.library_cache`)."""
    from .prior_motion import library_cache
    cache = library_cache(lib)
    key = ("first_position_law", float(domain[0]), float(domain[1]), int(cells), float(smooth))
    if key not in cache:
        cache[key] = first_position_law(lib.pos[:, 0], domain, cells, smooth)
    return cache[key]


#: Likelihood of one step's readings at positions (2, m): ``(lik (m,), viol (m,))``, ``lik`` >= 0
#: on one scale across calls, ``viol`` how far the bounds must be widened (0 where met).
Likelihood = Callable[[np.ndarray], "tuple[np.ndarray, np.ndarray]"]


def _slack(V: np.ndarray, blocks: tuple) -> np.ndarray:
    """Per cell, the largest change of the violation ``V`` to a neighbouring cell centre within
    its block (``blocks``: ``(B, a)`` for 1-D cells, ``(B, a, a)`` for 2-D ones, ``[iy, ix]``):
    a cell whose centre violates the readings by less than that may still hold positions that
    meet them (a ring thinner than a cell passing between centres)."""
    Vb = V.reshape(blocks)
    out = np.zeros_like(Vb)
    for ax in range(1, Vb.ndim):
        d = np.abs(np.diff(Vb, axis=ax))
        lo_, hi_ = [slice(None)] * Vb.ndim, [slice(None)] * Vb.ndim
        lo_[ax], hi_[ax] = slice(None, -1), slice(1, None)
        np.maximum(out[tuple(lo_)], d, out=out[tuple(lo_)])
        np.maximum(out[tuple(hi_)], d, out=out[tuple(hi_)])
    return out.ravel()


def _unique_rows(a: np.ndarray) -> np.ndarray:
    """The distinct rows of ``a`` (n, 2) in lexicographic order: ``np.unique(a, axis=0)``'s
    answer (its structured-dtype sort is ~8x slower on the few thousand rows of
    :func:`_refine`).  Rows equal but for the sign of a zero count as one, as there; which
    of them is kept may differ (none arise in :func:`_refine`: each value is ``x + lo``, never
    -0)."""
    s = a[np.lexsort((a[:, 1], a[:, 0]))]
    keep = np.ones(len(s), bool)
    np.any(s[1:] != s[:-1], axis=1, out=keep[1:])
    return s[keep]


def _refine(lik: Likelihood, centres: np.ndarray, h: float, place: Callable, lo: float, hi: float,
            want: int, budget: int, levels: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Cells of width ``h`` at 1-D ``centres`` (n,) or 2-D ``centres`` (n, 2) (a regular grid,
    x fastest; ``place`` maps them to positions (2, n)), subdivided until ``want`` centres meet
    the readings, at most ``levels`` times: each level keeps the cells that may hold a position
    meeting them (centre met, or its violation below its change to a neighbouring centre,
    :func:`_slack`; the 20 least violating when fewer than 5 are kept), adds their neighbours,
    and splits each into ``s`` per axis (``s`` in 2..64 so that about ``budget`` centres result;
    a level has at most about ``max(budget, 4 x 9 x kept)`` cells).  Returns the last level's
    ``(centres, lik, h)``."""
    dim = 1 if centres.ndim == 1 else 2
    n0 = len(centres)
    blocks = (1, n0) if dim == 1 else (1, int(round(np.sqrt(n0))), int(round(np.sqrt(n0))))
    for level in range(levels + 1):
        L, V = lik(place(centres))
        ok = L > 0
        if ok.sum() >= want or level == levels or h < 1e-5:
            return centres, L, h
        ok |= V <= _slack(V, blocks)
        if ok.sum() < 5:  # the 20 least violating cells (not their ties: a flat V is all)
            ok = np.zeros(len(V), bool)
            ok[np.argpartition(V, min(19, len(V) - 1))[:20]] = True
        base = centres[ok]
        offs = np.array([-1.0, 0.0, 1.0]) * h
        if dim == 1:
            near = np.unique(np.round((base[:, None] + offs - lo).ravel() / h * 2) / 2 * h + lo)
            near = near[(near >= lo) & (near <= hi)]
        else:
            grid = np.stack(np.meshgrid(offs, offs), axis=-1).reshape(-1, 2)
            near = _unique_rows(np.round(((base[:, None, :] + grid).reshape(-1, 2) - lo) / h * 2) / 2 * h + lo)
            near = near[((near >= lo) & (near <= hi)).all(axis=-1)]
        s = int(np.clip((budget / max(len(near), 1)) ** (1.0 / dim), 2, 64))
        sub = (np.arange(s) + 0.5) / s - 0.5
        if dim == 1:
            centres = (near[:, None] + sub * h).ravel()
            blocks = (len(near), s)
        else:
            d = np.stack(np.meshgrid(sub, sub), axis=-1).reshape(-1, 2) * h
            centres = (near[:, None, :] + d).reshape(-1, 2)
            blocks = (len(near), s, s)
        h = h / s
    return centres, L, h   # pragma: no cover  (the loop returns at its last level)


def _checked(lik: Likelihood) -> Likelihood:
    """``lik`` with its return checked: two arrays of the positions' count, finite, >= 0."""
    def checked(P):
        out = lik(P)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise ValueError("the likelihood must return a pair (lik (m,), viol (m,)) for positions (2, m), "
                             f"got {type(out).__name__}")
        L, V = (np.asarray(a, float) for a in out)
        m = P.shape[1]
        for name, a in (("likelihood", L), ("violation", V)):
            if a.shape != (m,):
                raise ValueError(f"the {name} must have shape ({m},) for positions (2, {m}), got {a.shape}")
            if not np.isfinite(a).all() or (a < 0).any():
                raise ValueError(f"the {name} must be finite and >= 0; got {a[~(np.isfinite(a) & (a >= 0))][:3]}")
        return L, V
    return checked


def start_posterior(lik: Likelihood, law: FirstPositionLaw, n: int, rng: np.random.Generator, *,
                    cells: int = 101, want: int = 300, budget: int = 10_000, levels: int = 8):
    """The posterior of the first position given one step's readings under ``law``, integrated
    on grids refined around the positions the readings allow (:func:`_refine`; the point
    masses exactly), and ``n`` particles drawn from it.  The area part starts from ``cells`` x
    ``cells`` cells, each edge from ``10 cells``; a level of refinement has about ``budget``
    cells, at most ``levels`` levels, until ``want`` cell centres meet the readings.

    Args:
        lik: the step's likelihood, called with positions (2, m) (plane units, row 0 x, row 1
            y) and returning ``(lik (m,), viol (m,))``: ``lik`` >= 0 on one scale across calls
            (e.g. the product of the readings' densities; 0 where a reading is not met),
            ``viol`` >= 0 how far the readings' bounds must be widened for the position to meet
            them (0 where met; it guides the refinement).  E.g. one detection disk of radius
            ``r`` about ``c``: ``d = hypot(P[0] - c[0], P[1] - c[1]); return (d <= r) * 1.0,
            maximum(d / r - 1, 0)``.
        law: :class:`FirstPositionLaw` (:func:`first_position_law`, or
            :func:`first_position_law_of` a motion library).
        n: particles to draw (>= 1); rng: a ``numpy.random.Generator``.

    Returns ``(p (n, 2), q (n,), mean (2,))``: particles (a cell's particle uniform within it,
    along the edge for an edge's, exactly at a point mass), the likelihood at each particle's
    cell centre or point (the proposal's likelihood, for a filter to divide out as it weighs
    the particle by its own), and the posterior mean by the quadrature; ``None`` when no
    position of the domain meets the readings (a filter then widens the bounds itself).

    Raises ``ValueError`` for ``n`` < 1, or a ``lik`` that returns arrays of another shape, or
    a negative or non-finite likelihood or violation (naming which)."""
    if n < 1:
        raise ValueError(f"start_posterior needs n >= 1 particles, got {n}")
    lik = _checked(lik)

    lo, hi = law.lo, law.hi
    n_law = len(law.axis)
    h_law = (hi - lo) / n_law
    h0 = (hi - lo) / cells
    axis = lo + (np.arange(cells) + 0.5) * h0
    parts = []                                         # (positions (2, m), weight (m,), lik, jitter)
    xx, yy = np.meshgrid(axis, axis)
    c2, L2, h2 = _refine(lik, np.column_stack([xx.ravel(), yy.ravel()]), h0, lambda c: c.T, lo, hi,
                         want, budget, levels)
    ix = np.clip(((c2[:, 0] - lo) / h_law).astype(int), 0, n_law - 1)
    iy = np.clip(((c2[:, 1] - lo) / h_law).astype(int), 0, n_law - 1)
    parts.append((c2.T, L2 * law.area[iy, ix] * h2 * h2, L2, ("area", h2)))
    met = c2[L2 > 0]
    if len(met):  # the edges the readings' region reaches (within a first-level cell)
        reach = [met[:, 0].min() <= lo + h0, met[:, 0].max() >= hi - h0,
                 met[:, 1].min() <= lo + h0, met[:, 1].max() >= hi - h0]
    else:
        reach = [True] * 4
    for j in range(4):
        if not (law.lines[j].any() and reach[j]):
            continue
        fixed = lo if j in (0, 2) else hi
        if j < 2:
            place = (lambda t, f=fixed: np.vstack([np.full_like(t, f), t]))
        else:
            place = (lambda t, f=fixed: np.vstack([t, np.full_like(t, f)]))
        t0 = lo + (np.arange(10 * cells) + 0.5) * h0 / 10
        t1, L1, h1 = _refine(lik, t0, h0 / 10, place, lo, hi, want, budget // 10, levels)
        dens = law.lines[j][np.clip(((t1 - lo) / h_law).astype(int), 0, n_law - 1)]
        parts.append((place(t1), L1 * dens * h1, L1, ("line", j, h1)))
    if len(law.points):
        Lp = lik(law.points.T)[0]
        parts.append((law.points.T, Lp * law.mass, Lp, ("point",)))
    total = sum(w.sum() for _, w, _, _ in parts)
    if not total > 0:
        return None
    mean = sum(P @ w for P, w, _, _ in parts) / total
    sizes = [len(w) for _, w, _, _ in parts]
    W = np.concatenate([w for _, w, _, _ in parts])
    pick = rng.choice(len(W), size=n, p=W / total)
    p = np.empty((n, 2))
    q = np.empty(n)
    start = 0
    for (P, w, L, kind), m in zip(parts, sizes):
        sel = (pick >= start) & (pick < start + m)
        i = pick[sel] - start
        start += m
        if not sel.any():
            continue
        p[sel] = P[:, i].T
        q[sel] = L[i]
        if kind[0] == "area":
            p[sel] += rng.uniform(-0.5, 0.5, size=(len(i), 2)) * kind[1]
        elif kind[0] == "line":
            ax = 1 if kind[1] < 2 else 0
            p[sel, ax] += rng.uniform(-0.5, 0.5, size=len(i)) * kind[2]
    np.clip(p, lo, hi, out=p)
    return p, q, mean
