"""Systematic resampling for the particle filters and the SMC sampler of this folder."""
from __future__ import annotations

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
        point: the same indices, about 2x cheaper.
    """
    m = len(w)
    n = m if n is None else n
    c = np.cumsum(w, dtype=float)
    c *= n / c[-1]
    k = np.floor(c - rng.random()).astype(np.intp)
    k += 1
    np.clip(k, 0, n, out=k)
    return np.repeat(np.arange(m), np.diff(k, prepend=0))
