"""Bayes (minimum-mean-square-error) position estimates under the task's own noise model.

The task states its noise model (STARK Table 7 by default: bounded uniform noise) and that the
object is uniform on the domain.  The posterior density of the position is then
``prior(p) * prod_i logpdf(z_i | h_i(p))`` and its mean minimises the expected squared error:
no estimator can do better on average, which makes it the reference for what is achievable.
With bounded noise the posterior is (nearly) uniform on the *feasible set*, the positions
consistent with every reading, so the estimate is that set's centroid.

The posterior is evaluated on an adaptive grid: a box around a least-squares start grows until
it contains the posterior's support (log density within 12 nats of its maximum), then a finer
grid over the support's bounding box gives the mean.  Failure modes: a second, disjoint mode
far from the least-squares start (mirror ambiguity with two sensors) is not explored; if no
grid point is feasible (readings inconsistent with the stated model) the least-squares start is
returned unchanged.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..sim.noise import UniformAbsolute, noise_from_dict
from .geometry import DOMAIN, wrap_pi

SUPPORT_NATS = 12.0


def _grid(lo: np.ndarray, hi: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys = np.linspace(lo[0], hi[0], n), np.linspace(lo[1], hi[1], n)
    xx, yy = np.meshgrid(xs, ys)
    return np.column_stack([xx.ravel(), yy.ravel()]), xs, ys


def grid_posterior_mean(loglik: Callable[[np.ndarray], np.ndarray], start: np.ndarray,
                        domain=DOMAIN, n: int = 81, w0: float = 0.25,
                        extra: Callable[[np.ndarray], np.ndarray] | None = None):
    """Posterior mean of a 2D position under ``loglik`` and a uniform prior on the domain.

    Args:
        loglik: (N, 2) points -> (N,) log-likelihood (``-inf`` where infeasible).
        start: (2,) a point near the posterior mode (e.g. a least-squares fit).
        extra: optional (N, 2) -> (N,) quantity whose posterior mean is also returned (e.g.
            the conditional mean of the emission time at each position).
    Returns:
        ``(mean (2,), extra_mean or None)``, or ``None`` when no grid point is feasible.
    """
    dlo, dhi = np.array([domain[0]] * 2, float), np.array([domain[1]] * 2, float)
    c = np.clip(np.asarray(start, float), dlo, dhi)
    w = w0
    for _ in range(8):
        lo, hi = np.maximum(c - w, dlo), np.minimum(c + w, dhi)
        pts, xs, ys = _grid(lo, hi, n)
        ll = loglik(pts)
        top = np.max(ll)
        if not np.isfinite(top):
            if np.all(lo <= dlo) and np.all(hi >= dhi):
                return None
            w *= 2.0
            continue
        sup = (ll >= top - SUPPORT_NATS).reshape(n, n)
        touches = ((sup[:, 0].any() and lo[0] > dlo[0]) or (sup[:, -1].any() and hi[0] < dhi[0])
                   or (sup[0, :].any() and lo[1] > dlo[1]) or (sup[-1, :].any() and hi[1] < dhi[1]))
        if not touches:
            break
        w *= 2.0
    # refine on the support's bounding box, padded by one coarse cell
    iy, ix = np.nonzero(sup)
    cell = np.array([xs[1] - xs[0], ys[1] - ys[0]])
    lo2 = np.maximum(np.array([xs[ix.min()], ys[iy.min()]]) - cell, dlo)
    hi2 = np.minimum(np.array([xs[ix.max()], ys[iy.max()]]) + cell, dhi)
    pts, _, _ = _grid(lo2, hi2, n)
    ll = loglik(pts)
    top = np.max(ll)
    if not np.isfinite(top):  # support thinner than the fine grid: use the coarse one
        return np.array([xs[ix].mean(), ys[iy].mean()]), None
    wts = np.exp(ll - top)
    mean = wts @ pts / wts.sum()
    ex = None if extra is None else float(wts @ extra(pts) / wts.sum())
    return mean, ex


# ----------------------------------------------------------------------------- log-likelihoods
def _dists(pts: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.hypot(pts[:, None, 0] - s[None, :, 0], pts[:, None, 1] - s[None, :, 1])


def range_loglik(sensors: np.ndarray, ranges: np.ndarray, noise: dict | None):
    """(N, 2) -> (N,) log-likelihood of range readings (NaN readings ignored)."""
    ok = np.isfinite(ranges)
    s, z, model = sensors[ok], ranges[ok], noise_from_dict(noise)
    return lambda pts: np.sum(model.logpdf(z[None, :], _dists(pts, s)), axis=1)


def bearing_loglik(sensors: np.ndarray, bearings_deg: np.ndarray, noise_rad: dict | None):
    """(N, 2) -> (N,) log-likelihood of bearing readings; noise acts on the wrapped angle
    difference in radians."""
    ok = np.isfinite(bearings_deg)
    s, th, model = sensors[ok], np.radians(bearings_deg[ok]), noise_from_dict(noise_rad)

    def ll(pts):
        ang = np.arctan2(pts[:, None, 1] - s[None, :, 1], pts[:, None, 0] - s[None, :, 0])
        return np.sum(model.logpdf(wrap_pi(th[None, :] - ang), 0.0), axis=1)
    return ll


def toa_marginal(sensors: np.ndarray, times: np.ndarray, speed: float, noise: dict | None):
    """Log-likelihood of a position with the unknown emission time integrated out (flat prior),
    and the conditional posterior mean of the emission time at that position.

    With uniform noise of half-width ``b`` the residuals ``r_i = T_i - d_i / v`` must share a
    ``t0`` within ``b`` of each: the feasible ``t0`` interval has length
    ``2b - (max r - min r)`` and midpoint ``(max r + min r) / 2``.  With Gaussian noise the
    marginal is ``exp(-sum (r_i - mean r)^2 / (2 sigma^2))`` and the mean is ``mean r``.
    Returns ``(loglik, t0_mean)``, each (N, 2) -> (N,).
    """
    ok = np.isfinite(times)
    s, T = sensors[ok], times[ok]
    model = noise_from_dict(noise)

    def resid(pts):
        return T[None, :] - _dists(pts, s) / speed

    if isinstance(model, UniformAbsolute):
        b = model.half_width

        def ll(pts):
            r = resid(pts)
            length = 2 * b - (r.max(axis=1) - r.min(axis=1))
            with np.errstate(divide="ignore"):
                return np.where(length > 0, np.log(np.maximum(length, 1e-300)), -np.inf)

        def t0(pts):
            r = resid(pts)
            return 0.5 * (r.max(axis=1) + r.min(axis=1))
        return ll, t0
    sigma = getattr(model, "sigma", 0.01)

    def ll_g(pts):
        r = resid(pts)
        return -0.5 * np.sum((r - r.mean(axis=1, keepdims=True)) ** 2, axis=1) / sigma ** 2
    return ll_g, lambda pts: resid(pts).mean(axis=1)
