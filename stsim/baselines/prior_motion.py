"""The generator's trajectory prior as the motion model of the particle filters (issue 20),
shared by :mod:`stsim.baselines.particle_tracking` (proximity, ToA) and
:mod:`stsim.baselines.sensor_particle_tracking` (range, bearing, range+bearing).

* :func:`motion_library`: trajectories drawn from the prior of a tracking family (STARK
  Appendix 7.3: 1..3 summed basis motions, min-max normalised per axis over all steps) with their
  per-step differences (velocity, acceleration, jerk), and :func:`library_cache`, its per-step
  tables laid out as contiguous rows;
* :func:`task_schedule`, :func:`step_grid` and :func:`on_step_grid`: the prior a task was drawn
  from, the step grid that covers its readings, and its readings placed on that grid;
* the step-0 draw: :func:`start_grid` and :func:`grid_draw` (the grid of a redraw, or of a
  step 0 no position meets) and :func:`start_graph` (library first positions near each other, for the first
  velocity); the prior's law of the first position is :mod:`stsim.baselines.first_position`;
* :func:`reflect` (positions kept in the domain) and :func:`adaptive_tolerance` (the widening
  of a step's noise bounds that keeps a given effective sample size, as in ABC-SMC; Del Moral,
  Doucet & Jasra 2012).

``ROUNDING`` is half a unit of the printed 4th decimal of every reading.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numba
import numpy as np

from ..sim.motion import MOTION_RANGES
from .geometry import DOMAIN

#: half a unit of the 4th printed decimal (readings are printed with 4 decimals).
ROUNDING = 5e-5


@dataclass(frozen=True)
class MotionLibrary:
    """Trajectories drawn from the generator's prior: ``pos`` (M, n, 2), their per-step
    velocities ``vel`` (M, n-1, 2), accelerations ``acc`` (M, n-2, 2) and jerks ``jerk``
    (M, n-3, 2), all in plane units per step^k."""
    pos: np.ndarray
    vel: np.ndarray
    acc: np.ndarray
    jerk: np.ndarray


@lru_cache(maxsize=8)
def motion_library(n_steps: int, duration: float, max_components: int = 3,
                   motion_ranges: str = "stark_release", size: int = 4000,
                   seed: int = 0) -> MotionLibrary:
    """``size`` trajectories from the trajectory prior of a tracking family (STARK Appendix 7.3,
    :func:`stsim.sim.motion.random_trajectory`: 1..``max_components`` summed basis motions, each
    with parameters uniform in ``motion_ranges``'s table, sampled at ``linspace(0, duration,
    n_steps)``, min-max normalised per axis into [0, 10]), drawn vectorised with a fixed seed
    (cached per argument set).

    Raises ``ValueError`` for an unknown ``motion_ranges`` name or ``n_steps < 4``."""
    from .trajectory_posterior import PriorLayout, trajectories
    if motion_ranges not in MOTION_RANGES:
        raise ValueError(f"motion_ranges must be one of {', '.join(MOTION_RANGES)}, got {motion_ranges!r}")
    if n_steps < 4:
        raise ValueError(f"the motion library needs n_steps >= 4, got {n_steps}")
    rng = np.random.default_rng(seed)
    lay = PriorLayout(MOTION_RANGES[motion_ranges])
    u = rng.random((size, lay.dim))
    k = rng.integers(1, max_components + 1, size=size)
    mask = rng.random((size, len(lay.kinds))).argsort(axis=1).argsort(axis=1) < k[:, None]
    pos = trajectories(lay, u, mask, np.linspace(0.0, duration, n_steps))
    vel = np.diff(pos, axis=1)
    acc = np.diff(vel, axis=1)
    return MotionLibrary(pos, vel, acc, np.diff(acc, axis=1))


def prior_config(task) -> dict:
    """The trajectory prior a task was drawn from: ``n_steps``, ``duration`` (s),
    ``max_components``, ``motion_ranges`` and ``emit_time_range`` (s; event families), from
    ``task.meta["config"]`` (a generated task) or else the family's defaults (a task read from a
    file, e.g. STARK's release)."""
    from ..registry import get_family
    cfg = dict((task.meta or {}).get("config") or {})
    if not cfg:
        try:
            cfg = dict(get_family(task.family).defaults)
        except (KeyError, ValueError):
            cfg = {}
    return {"n_steps": int(cfg.get("n_steps", len(task.steps) if task.steps else 50)),
            "duration": float(cfg.get("duration", 10.0)),
            "max_components": int(cfg.get("max_components", 3)),
            "motion_ranges": str(cfg.get("motion_ranges", "stark_release")),
            "emit_time_range": tuple(cfg.get("emit_time_range", (0.0, 10.0)))}


def task_schedule(task) -> tuple[int, float, int, str]:
    """``(n_steps, duration, max_components, motion_ranges)`` of :func:`prior_config`."""
    c = prior_config(task)
    return c["n_steps"], c["duration"], c["max_components"], c["motion_ranges"]


def reflect(p: np.ndarray, v: np.ndarray, lo: float, hi: float) -> None:
    """Reflect positions ``p`` (N, 2) or rows (2, N) into [lo, hi] (plane units) in place,
    flipping the sign of the velocity ``v`` (same shape) where a component was reflected."""
    if p.flags.c_contiguous and v.flags.c_contiguous and p.shape == v.shape:
        fp, fv = p.reshape(-1), v.reshape(-1)             # views: only the few outside are touched
        i = np.flatnonzero((fp < lo) | (fp > hi))
        if i.size:
            x = fp[i]
            x = np.where(x < lo, 2 * lo - x, 2 * hi - x)
            fp[i] = np.clip(x, lo, hi)
            fv[i] *= -1
        return
    below, above = p < lo, p > hi
    out = below | above
    if out.any():
        np.subtract(2 * lo, p, out=p, where=below)
        np.subtract(2 * hi, p, out=p, where=above)
        np.negative(v, out=v, where=out)
        np.clip(p, lo, hi, out=p)


@numba.njit(cache=True)
def propagate_rows(X, jerk, pick, scale, decay, lo, hi):
    """One step of the particle filters' constant-acceleration motion
    (:func:`~stsim.baselines.sensor_particle_tracking.sensor_track`,
    :func:`~stsim.baselines.particle_tracking.particle_track`), in place on the particles ``X`` (6, N) (rows
    x, y, vx, vy, ax, ay; plane units per step^k): ``a = decay a + j``, ``v += a``, ``p += v``
    with the jerk ``j = jerk[:, pick] * scale`` (``jerk`` (2, M) a library step's third
    differences, ``pick`` (N,) int64 the trajectory each particle takes it from, ``scale`` (N,)),
    then a position outside ``[lo, hi]`` reflected back (clipped) and its velocity's sign
    flipped (:func:`reflect`).  Each element's operations are the
    whole-array numpy ones it replaced, in the same order (the same particles bit for bit),
    without the dozen array passes per step (a quarter of a range+bearing filter's time, 15 -> 11 ms
    per task)."""
    n = X.shape[1]
    for i in range(n):
        for a in range(2):
            acc = X[4 + a, i]
            if decay != 1.0:
                acc = acc * decay
            acc = acc + jerk[a, pick[i]] * scale[i]
            X[4 + a, i] = acc
            vel = X[2 + a, i] + acc
            p = X[a, i] + vel
            if p < lo or p > hi:
                p = 2 * lo - p if p < lo else 2 * hi - p
                p = min(max(p, lo), hi)
                vel = -vel
            X[2 + a, i] = vel
            X[a, i] = p


_GRIDS: dict = {}
_LIBS: dict = {}


def start_grid(lo: float, hi: float, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """The step-0 grid over the square domain ``[lo, hi]^2`` (plane units): axis ``g``
    (cells,) and its points (cells^2, 2), x fastest; cached."""
    key = (float(lo), float(hi), int(cells))
    if key not in _GRIDS:
        g = np.linspace(lo, hi, cells)
        xx, yy = np.meshgrid(g, g)
        _GRIDS[key] = (g, np.column_stack([xx.ravel(), yy.ravel()]))
    return _GRIDS[key]


def library_cache(lib: MotionLibrary) -> dict:
    """Per-library precomputations (cached; the library is kept referenced so its ``id`` stays
    unique): the k-d tree of the first positions, velocities ``vel`` (n-1, 2, M) and jerks
    ``jerk`` (n-3, 2, M) laid out per step as contiguous rows, first accelerations (2, M)."""
    from scipy.spatial import cKDTree
    hit = _LIBS.get(id(lib))
    if hit is None or hit[0] is not lib:
        if len(_LIBS) > 16:
            _LIBS.clear()
        hit = (lib, {"start_tree": cKDTree(lib.pos[:, 0]),
                     "vel": np.ascontiguousarray(lib.vel.transpose(1, 2, 0)),
                     "acc0": np.ascontiguousarray(lib.acc[:, 0].T),
                     "jerk": np.ascontiguousarray(lib.jerk.transpose(1, 2, 0))})
        _LIBS[id(lib)] = hit
    return hit[1]


def grid_draw(viol: np.ndarray, lik_at, grid: np.ndarray, cell: float, n: int,
              rng: np.random.Generator, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``n`` positions drawn from one step's readings on the grid ``grid`` (m, 2) of cell width
    ``cell`` (plane units): a cell with probability proportional to ``lik_at(eps)`` (m,), the
    position uniform within it (clipped to ``[lo, hi]^2``); ``eps`` = 0, or, when no cell
    centre meets the readings (all violations ``viol`` (m,) > 0, or zero likelihood), the
    21st smallest violation (the bounds widened until about 20 cells meet them).  The particle
    filters' draw for a lost track and for a step 0 that no position of the first position's
    law meets.  Returns ``(p (n, 2), q (n,) the likelihood of each drawn cell, eps)``."""
    eps = 0.0
    w = lik_at(0.0) if not np.all(viol > 0) else None
    if w is None or w.sum() <= 0:
        j = min(20, len(viol) - 1)
        eps = float(np.partition(viol, j)[j])
        w = lik_at(eps)
    idx = rng.choice(len(grid), size=n, p=w / w.sum())
    p = grid[idx] + rng.uniform(-0.5, 0.5, size=(n, 2)) * cell
    np.clip(p, lo, hi, out=p)
    return p, w[idx], eps


def start_graph(lib: MotionLibrary, knn: int) -> np.ndarray:
    """(M, knn) indices of the ``knn`` library first positions nearest to each library first
    position (itself included); cached per library and ``knn``."""
    cache = library_cache(lib)
    if ("start_graph", knn) not in cache:
        tree = cache["start_tree"]
        cache["start_graph", knn] = tree.query(tree.data, k=knn)[1]
    return cache["start_graph", knn]


def adaptive_tolerance(viol: np.ndarray, logw: np.ndarray, min_ess: float, uniform: bool = False) -> float:
    """Smallest widening ``eps`` (>= 0) of the step's bounds keeping ``min_ess`` effective
    particles (or every live particle when fewer are alive): the adaptive tolerance of ABC-SMC
    (Del Moral, Doucet & Jasra 2012, Statistics and Computing 22(5)).

    Args: viol (N,) each particle's violation of the step's readings in units of their noise
        bound (0: consistent); logw (N,) log weights before the step; ``uniform``: the caller
        knows ``logw`` is constant (just resampled), so the ESS of a subset is its size.
    Returns: ``eps``, a particle being kept when ``viol <= eps``."""
    if uniform:
        need = int(np.ceil(min(min_ess, len(viol))))
        if need <= 0 or np.count_nonzero(viol <= 0.0) >= need:
            return 0.0
        return float(np.partition(viol, need - 1)[need - 1])
    w = np.exp(logw - logw.max())
    w1, w2 = w.sum(), w @ w
    target = min(min_ess, w1 * w1 / w2)
    ok = viol <= 0.0
    if ok.all():
        return 0.0
    we = w[ok]
    s1, s2 = we.sum(), we @ we
    if s2 > 0 and s1 * s1 / s2 >= target:
        return 0.0
    # the ESS of the particles with viol <= e, at each distinct value e of the live particles
    alive = np.flatnonzero(w > 0)
    order = alive[np.argsort(viol[alive])]
    v, ws = viol[order], w[order]
    c1, c2 = np.cumsum(ws), np.cumsum(ws * ws)
    last = np.append(v[1:] != v[:-1], True)                # the last particle of each tie group
    ess = np.where(c2 > 0, c1 * c1 / np.where(c2 > 0, c2, 1.0), 0.0)
    hit = np.flatnonzero(last & (ess >= target))
    return float(v[hit[0]] if len(hit) else v[-1])


def step_grid(n_steps: int, duration: float, length: int) -> tuple[int, float]:
    """The trajectory step grid that covers ``length`` steps of a prior of ``n_steps`` positions
    over ``duration`` seconds: ``(n_lib, span)``, ``n_lib = max(n_steps, length, 4)`` positions
    (at least the 4 the library needs) over ``span`` seconds at the prior's own step
    ``duration / (n_steps - 1)`` (``duration`` when ``n_steps`` is 1); step ``k`` at
    ``k * span / (n_lib - 1)`` s."""
    n_lib = max(n_steps, length, 4)
    return n_lib, duration * (n_lib - 1) / max(n_steps - 1, 1)


def on_step_grid(task, z: np.ndarray, size: int = 4000) -> tuple[np.ndarray, np.ndarray, "MotionLibrary"]:
    """The readings ``z`` (one row per task step) placed on the trajectory's step grid, and the
    prior library for it: ``(index, full, lib)`` with ``index`` the task steps' trajectory step
    numbers, ``full`` the readings of every step up to the last (NaN where unobserved) and
    ``lib`` the :func:`motion_library` of the task's prior (:func:`task_schedule`).  A task may hold
    a subset of a trajectory's steps (STARK's worked Table 17 shows steps 0, 1, 2, 8, 9): the
    filter runs over every step up to the last, unobserved ones included."""
    n, duration, kmax, table = task_schedule(task)
    index = np.arange(len(z))
    if task.steps and len(task.steps) == len(z):
        cand = np.array([st.index for st in task.steps])
        if cand[0] >= 0 and np.all(np.diff(cand) > 0):
            index = cand
    full = np.full((int(index[-1]) + 1, *z.shape[1:]), np.nan)
    full[index] = z
    n_lib, span = step_grid(n, duration, len(full))
    return index, full, motion_library(n_lib, span, kmax, table, size=size)


def in_domain(task, pos: np.ndarray) -> np.ndarray:
    """``pos`` (..., 2) (plane units) projected onto the task's square domain
    (``inputs.domain``, default :data:`~stsim.baselines.geometry.DOMAIN`).  Every trajectory of
    the prior lies in it (min-max normalised onto it, STARK Appendix 7.3), so the posterior mean
    does too; the refit's centre (a linearised shift) and a filter's last reflection can land
    outside, and projecting onto a convex set that holds the truth never moves an answer away
    from it (issue 20: range task 34 of suite seed 7 was answered (94.7, 77.6) at step 0)."""
    lo, hi = task.inputs.get("domain", DOMAIN)
    return np.clip(pos, lo, hi)
