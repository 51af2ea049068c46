"""Systematic resampling for the particle filters and the SMC sampler of this folder, and the
bank of standard normals the regularised filters draw their kernel noise from."""
from __future__ import annotations

import numba
import numpy as np


def systematic_resample(w: np.ndarray, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
    """Systematic resampling (Kitagawa 1996, "Monte Carlo filter and smoother for non-Gaussian
    nonlinear state space models", J. Comput. Graph. Stat. 5(1)).

    Args:
        w: (M,) non-negative weights (need not be normalised; their sum must be > 0).
        rng: one ``rng.random()`` draw ``u`` is used.
        n: number of indices drawn (default ``M``).
    Returns:
        (n,) sorted indices into ``w``: for each point ``(u + i) / n``, ``i = 0..n-1``, the first
        ``j`` whose normalised cumulative weight reaches it.  Computed by counting the points up
        to each cumulative weight (``floor(n c_j - u) + 1``) rather than searching for each
        point, in one compiled pass (:func:`systematic_indices`; the numpy version it replaced,
        cumulative sum, floor, clip and ``repeat``, cost 30-90 microseconds per call for 1000
        particles against about 4, a fifth of a range+bearing filter's time; the same indices).
        Fewer than ``n`` when rounding leaves the last cumulative weight a hair below ``n``.
    Raises:
        ValueError: the weights' sum is not positive and finite (nothing to resample from).
    """
    w = np.ascontiguousarray(w, dtype=float)
    total = float(w.sum()) if len(w) else 0.0
    if not (np.isfinite(total) and total > 0):
        raise ValueError(f"systematic_resample needs weights with a positive, finite sum, got {total!r}")
    return systematic_indices(w, rng.random(), len(w) if n is None else int(n))


@numba.njit(cache=True)
def systematic_indices(w, u, n):
    """The indices of :func:`systematic_resample` for weights ``w`` (M,) float64 (sum > 0) and
    the uniform draw ``u`` in ``[0, 1)``: ``j`` repeated ``k_j - k_{j-1}`` times, ``k_j =
    clip(floor(c_j n / c_M - u) + 1, 0, n)`` with ``c`` the running sum of ``w`` (summed in
    order, as ``numpy.cumsum``).  Returns (at most n,) int64."""
    m = len(w)
    c = np.empty(m)
    acc = 0.0
    for i in range(m):
        acc += w[i]
        c[i] = acc
    scale = n / c[m - 1]
    out = np.empty(n, np.int64)
    j = 0
    prev = 0
    for i in range(m):
        k = np.int64(np.floor(c[i] * scale - u)) + 1
        if k < 0:
            k = 0
        elif k > n:
            k = n
        for _ in range(k - prev):
            out[j] = i
            j += 1
        prev = k
    return out[:j]


_NORMALS: dict = {}


def normal_bank(size: int = 1 << 18) -> np.ndarray:
    """A fixed bank of ``size`` standard normal draws (seed 0; cached, one per size): a
    regularised particle filter's kernel noise for a step is a slice of it at a random offset
    (:func:`bank_normals`): drawing ``6 N`` fresh normals at every resampling step was a fifth
    of the range/bearing filter's cost (the ToA and proximity filter still draws them: there
    the bank saved no measurable time, session 22, and would move its answers)."""
    if size not in _NORMALS:
        _NORMALS[size] = np.random.default_rng(0).standard_normal(size)
    return _NORMALS[size]


def bank_normals(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """(rows, n) standard normals for one step: a contiguous slice of :func:`normal_bank` at
    an offset drawn from ``rng`` (one ``rng.integers`` draw, none when the request is the
    whole bank; a view, not to be written to).
    Raises ``ValueError`` when ``rows * n`` exceeds the bank (2^18 draws)."""
    bank = normal_bank()
    m = rows * n
    if m > len(bank):
        raise ValueError(f"bank_normals: {rows} x {n} normals exceed the bank of {len(bank)}")
    o = int(rng.integers(0, len(bank) - m)) if m < len(bank) else 0
    return bank[o:o + m].reshape(rows, n)
