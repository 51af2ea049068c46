"""First-principle position estimators shared by the localisation and tracking baselines
(STARK Appendix 7.6, Table 9).  Pure functions on numpy arrays; ``None`` means "no estimate".

Units: plane units (km for event tasks); bearings in degrees, CCW from +x at the sensor; times
in the task's unit.  Every estimator is bounded to the task's domain ([0, 10]^2 by default),
which every STARK prompt states.

Failure modes, documented once here:

* **Geometric dilution of precision (GDOP).** Nearly collinear sensors (or a target on the line
  through two bearing sensors) make the normal equations ill-conditioned; the estimate's error
  then grows far beyond the reading noise.  The multi-start search below avoids *local* minima,
  but cannot remove the ambiguity itself.
* **Too few readings.** Two ranges give two mirror-image solutions (we return the one with the
  lower cost inside the domain); fewer readings than unknowns give ``None``.
"""
from __future__ import annotations

import numpy as np
import shapely
from scipy.optimize import least_squares

DOMAIN = (0.0, 10.0)


def wrap_pi(a: np.ndarray) -> np.ndarray:
    """Wrap angles (radians) into (-pi, pi]."""
    return -((-np.asarray(a) + np.pi) % (2 * np.pi) - np.pi)


def _grid(domain=DOMAIN, n: int = 21) -> np.ndarray:
    g = np.linspace(domain[0], domain[1], n)
    xx, yy = np.meshgrid(g, g)
    return np.column_stack([xx.ravel(), yy.ravel()])


def _best_starts(cost: np.ndarray, pts: np.ndarray, k: int) -> np.ndarray:
    idx = np.argsort(cost)[:k]
    return pts[idx]


def _bounded(x0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.clip(x0, lo + 1e-9, hi - 1e-9)


def _multistart(res, jac, starts, lo, hi, good_cost: float):
    """Bounded nonlinear least squares (scipy ``least_squares``, method ``trf``) from each start
    in turn, keeping the lowest cost and stopping early once the cost is at most
    ``good_cost`` (residuals are scaled by their noise level, so a consistent fit has a cost
    of about half the number of residuals or less)."""
    best = None
    for x0 in starts:
        sol = least_squares(res, _bounded(np.asarray(x0, float), lo, hi), jac=jac,
                            bounds=(lo, hi), method="trf")
        if best is None or sol.cost < best.cost - 1e-15:
            best = sol
        if best.cost <= good_cost:
            break
    return best


# ---------------------------------------------------------------------------- multilateration
def linearized_multilateration(sensors: np.ndarray, ranges: np.ndarray) -> np.ndarray | None:
    """Closed-form least-squares start: subtract the last circle equation from the others,
    ``2 (s_m - s_i) . p = r_i^2 - r_m^2 - |s_i|^2 + |s_m|^2``.  Needs >= 3 non-collinear
    sensors; returns ``None`` if the system is rank-deficient."""
    if len(ranges) < 3:
        return None
    sm, rm = sensors[-1], ranges[-1]
    A = 2.0 * (sm - sensors[:-1])
    b = ranges[:-1] ** 2 - rm ** 2 - np.sum(sensors[:-1] ** 2, axis=1) + np.sum(sm ** 2)
    sol, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
    return sol if rank == 2 else None


def multilaterate(sensors: np.ndarray, ranges: np.ndarray, domain=DOMAIN,
                  relative_noise: bool = True, noise_scale: float = 0.01) -> np.ndarray | None:
    """Nonlinear least-squares multilateration (STARK Table 9, "Range-only").

    Minimises ``sum_i ((r_i - |p - s_i|) / w_i)^2`` with ``w_i = noise_scale * r_i`` for
    relative (Table 7) noise, else ``noise_scale``, over ``p`` in the domain, started from the linearised closed form and from the
    best points of a coarse 21 x 21 grid (so poor geometry does not trap it in a local minimum).

    Args:
        sensors: (m, 2); ranges: (m,) with NaN for missing readings.
    Returns: (2,) estimate, or ``None`` with fewer than 2 usable readings.
    """
    ok = np.isfinite(ranges)
    s, r = sensors[ok], ranges[ok]
    if len(r) < 2:
        return None
    w = (np.maximum(r, 0.05) if relative_noise else np.ones_like(r)) * noise_scale
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)

    def res(p):
        return (r - np.hypot(p[0] - s[:, 0], p[1] - s[:, 1])) / w

    def jac(p):
        d = np.maximum(np.hypot(p[0] - s[:, 0], p[1] - s[:, 1]), 1e-9)
        return -np.column_stack([(p[0] - s[:, 0]) / d, (p[1] - s[:, 1]) / d]) / w[:, None]

    grid = _grid(domain)
    d = np.hypot(grid[:, None, 0] - s[None, :, 0], grid[:, None, 1] - s[None, :, 1])
    gcost = np.sum(((r - d) / w) ** 2, axis=1)
    starts = list(_best_starts(gcost, grid, 3))
    lin = linearized_multilateration(s, r)
    if lin is not None and np.all(np.isfinite(lin)):
        starts.insert(0, lin)
    return _multistart(res, jac, starts, lo, hi, 0.5 * len(r)).x


# ------------------------------------------------------------------------------ triangulation
def triangulate(sensors: np.ndarray, bearings_deg: np.ndarray, domain=DOMAIN) -> np.ndarray | None:
    """Bearing-only triangulation (STARK Table 9): intersect the bearing lines by weighted
    linear least squares on ``n_i . p = n_i . s_i`` (``n_i`` the line normal), reweighted by
    1/distance (perpendicular error grows with range), then refined by nonlinear least squares
    on the wrapped angle residuals, bounded to the domain.

    Returns (2,) or ``None`` with fewer than 2 usable bearings or parallel bearing lines.
    """
    ok = np.isfinite(bearings_deg)
    s, th = sensors[ok], np.radians(bearings_deg[ok])
    if len(th) < 2:
        return None
    n = np.column_stack([-np.sin(th), np.cos(th)])
    b = np.sum(n * s, axis=1)
    w = np.ones(len(th))
    p = None
    for _ in range(3):
        A, bb = n * w[:, None], b * w
        sol, _, rank, sv = np.linalg.lstsq(A, bb, rcond=None)
        if rank < 2:
            break
        p = sol
        w = 1.0 / np.maximum(np.hypot(p[0] - s[:, 0], p[1] - s[:, 1]), 0.1)
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)

    sb = 2 * np.pi * 0.01  # residual scale: STARK Table 7 bearing half-width (rad)

    def res(q):
        return wrap_pi(np.arctan2(q[1] - s[:, 1], q[0] - s[:, 0]) - th) / sb

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d2 = np.maximum(dx * dx + dy * dy, 1e-12)
        return np.column_stack([-dy / d2, dx / d2]) / sb

    grid = _grid(domain)
    ang = np.arctan2(grid[:, None, 1] - s[None, :, 1], grid[:, None, 0] - s[None, :, 0])
    gcost = np.sum(wrap_pi(ang - th[None, :]) ** 2, axis=1)
    starts = list(_best_starts(gcost, grid, 3))
    if p is not None:
        starts.insert(0, p)
    return _multistart(res, jac, starts, lo, hi, 0.5 * len(th)).x


# ---------------------------------------------------------------------- range + bearing fusion
def range_bearing_fix(sensors: np.ndarray, rb: np.ndarray, range_sigma: float = 0.01,
                      bearing_sigma_rad: float = 2 * np.pi * 0.01, domain=DOMAIN) -> np.ndarray | None:
    """Fuse range and bearing readings (STARK Table 9, "Range + bearing").

    Each sensor alone gives ``s_i + r_i (cos b_i, sin b_i)``, with errors proportional to
    ``r_i``; these are averaged with weights ``1 / r_i^2`` and refined by nonlinear least squares
    on both residual kinds, each scaled by its noise level (``range_sigma * r_i`` and
    ``bearing_sigma_rad``).

    Args: sensors (m, 2); rb (m, 2) of ``[range, bearing_deg]``, NaN rows missing.
    Returns: (2,) or ``None`` if no sensor reported.
    """
    ok = np.all(np.isfinite(rb), axis=1)
    s, r, th = sensors[ok], rb[ok, 0], np.radians(rb[ok, 1])
    if len(r) == 0:
        return None
    pts = s + r[:, None] * np.column_stack([np.cos(th), np.sin(th)])
    w = 1.0 / np.maximum(r, 1e-3) ** 2
    x0 = np.sum(pts * w[:, None], axis=0) / np.sum(w)
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)
    sr = np.maximum(range_sigma * r, 1e-4)

    def res(q):
        d = np.hypot(q[0] - s[:, 0], q[1] - s[:, 1])
        a = np.arctan2(q[1] - s[:, 1], q[0] - s[:, 0])
        return np.concatenate([(r - d) / sr, wrap_pi(a - th) / bearing_sigma_rad])

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d2 = np.maximum(dx * dx + dy * dy, 1e-12)
        d = np.sqrt(d2)
        return np.vstack([-np.column_stack([dx / d, dy / d]) / sr[:, None],
                          np.column_stack([-dy / d2, dx / d2]) / bearing_sigma_rad])

    return _multistart(res, jac, [x0], lo, hi, np.inf).x


# ---------------------------------------------------------------------------------- proximity
def feasible_region(sensors: np.ndarray, hits: np.ndarray, radius: float, domain=DOMAIN,
                    quad_segs: int = 32):
    """The set of positions consistent with binary disk readings: the domain square,
    intersected with every detecting sensor's disk, minus every non-detecting sensor's disk
    (shapely geometry; disks approximated by polygons with ``4 * quad_segs`` vertices)."""
    box = shapely.box(domain[0], domain[0], domain[1], domain[1])
    region = box
    for (x, y), h in zip(sensors, hits):
        if not np.isfinite(h):
            continue
        disk = shapely.Point(x, y).buffer(radius, quad_segs=quad_segs)
        region = region.intersection(disk) if h >= 0.5 else region.difference(disk)
    return region


def proximity_grid_search(sensors: np.ndarray, hits: np.ndarray, radius: float, domain=DOMAIN,
                          step: float = 0.05) -> np.ndarray | None:
    """STARK's proximity baseline (Appendix 7.6): a grid search minimising the number of
    readings a candidate position contradicts; ties are resolved by averaging all minimisers
    (the paper does not say how it breaks ties)."""
    ok = np.isfinite(hits)
    if not ok.any():
        return None
    g = np.arange(domain[0], domain[1] + step / 2, step)
    xx, yy = np.meshgrid(g, g)
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    s, h = sensors[ok], hits[ok]
    inside = np.hypot(pts[:, None, 0] - s[None, :, 0], pts[:, None, 1] - s[None, :, 1]) <= radius
    cost = np.sum(inside != (h[None, :] >= 0.5), axis=1)
    return pts[cost == cost.min()].mean(axis=0)


def proximity_mmse(sensors: np.ndarray, hits: np.ndarray, radius: float,
                   domain=DOMAIN) -> np.ndarray | None:
    """Minimum-mean-square-error estimate under a uniform prior on the domain: the centroid of
    the region consistent with all readings (:func:`feasible_region`).  Falls back to the grid
    search when readings contradict each other (empty region)."""
    ok = np.isfinite(hits)
    if not ok.any():
        return None
    region = feasible_region(sensors, hits, radius, domain)
    if region.is_empty or region.area <= 1e-12:
        return proximity_grid_search(sensors, hits, radius, domain)
    c = region.centroid
    return np.array([c.x, c.y])


# ------------------------------------------------------------------------- time of arrival fit
def toa_fit(sensors: np.ndarray, times: np.ndarray, speed: float, domain=DOMAIN,
            prior: tuple[np.ndarray, float] | None = None) -> tuple[np.ndarray, float] | None:
    """Nonlinear least squares over position and emission time (STARK Table 9, "Event-based"):
    minimise ``sum_i (T_i - t0 - |p - s_i| / v)^2``.

    Starts: for each point of a 21 x 21 grid the optimal ``t0`` is the mean of
    ``T_i - |p - s_i| / v`` (closed form), and the three best grid points start the solver.
    ``prior = (p_prev, sigma)`` adds the pseudo-residual ``(p - p_prev) / sigma`` (tracking with
    history); with a prior one reading suffices, without one three are needed.

    Returns ``(p (2,), t0)`` or ``None``.
    """
    ok = np.isfinite(times)
    s, T = sensors[ok], times[ok]
    need = 1 if prior is not None else 3
    if len(T) < need:
        return None
    lo = np.array([domain[0], domain[0], -np.inf])
    hi = np.array([domain[1], domain[1], np.inf])
    scale = 0.01  # ToA noise level: makes the prior weight comparable

    def res(q):
        d = np.hypot(q[0] - s[:, 0], q[1] - s[:, 1])
        r = (T - q[2] - d / speed) / scale
        if prior is not None:
            r = np.concatenate([r, (q[:2] - prior[0]) / prior[1]])
        return r

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d = np.maximum(np.hypot(dx, dy), 1e-9)
        J = np.column_stack([-dx / (d * speed), -dy / (d * speed), -np.ones_like(d)]) / scale
        if prior is not None:
            J = np.vstack([J, np.array([[1.0 / prior[1], 0, 0], [0, 1.0 / prior[1], 0]])])
        return J

    starts = []
    if prior is not None:
        p0 = np.clip(prior[0], domain[0], domain[1])
        starts.append(np.array([*p0, np.mean(T - np.hypot(*(p0 - s).T) / speed)]))
    grid = _grid(domain)
    d = np.hypot(grid[:, None, 0] - s[None, :, 0], grid[:, None, 1] - s[None, :, 1])
    t0 = np.mean(T[None, :] - d / speed, axis=1)
    gcost = np.sum(((T[None, :] - t0[:, None] - d / speed) / scale) ** 2, axis=1)
    if prior is not None:
        gcost += np.sum(((grid - prior[0]) / prior[1]) ** 2, axis=1)
    starts += [np.array([*grid[i], t0[i]]) for i in np.argsort(gcost)[:3]]
    best = _multistart(res, jac, starts, lo, hi, 0.5 * len(T) + (2.0 if prior is not None else 0.0))
    return best.x[:2], float(best.x[2])
