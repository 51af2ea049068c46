"""Metrics over per-item errors (STARK §4.1).

STARK reports trimmed RMSE / RMSPE: sort the errors and drop the top and bottom ``trim``
fraction (10 % each side by default; 25 % in the code-interpreter comparison of §4.4) before
taking the root mean square.  Metrics are plug-ins: functions ``(errors) -> float`` in
:data:`ERROR_METRICS`.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np


def _finite(errors: Sequence[float]) -> np.ndarray:
    """The errors as floats, without ``None`` and NaN; ``+inf`` (an error too large for a float)
    is kept, so a metric over it is ``inf`` rather than silently smaller."""
    e = np.asarray([x for x in errors if x is not None], dtype=float)
    return e[~np.isnan(e)]


def _rms(e: np.ndarray) -> float:
    """Root mean square without overflow: scaled by the largest error (so errors of 1e200
    give 1e200, not a numpy overflow warning); ``inf`` if any error is ``inf``; NaN if empty."""
    if not len(e):
        return math.nan
    top = float(np.max(e))
    if math.isinf(top):
        return math.inf
    if top == 0.0:
        return 0.0
    return top * float(np.sqrt(np.mean((e / top) ** 2)))


def trimmed(errors: Sequence[float], trim: float = 0.10) -> np.ndarray:
    """Sorted errors without the lowest and highest ``floor(trim * n)`` values.

    Raises ``ValueError`` unless ``0 <= trim < 0.5``.
    """
    if not 0.0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5), got {trim}")
    e = np.sort(_finite(errors))
    k = int(math.floor(trim * len(e)))
    return e[k:len(e) - k]


def rmse(errors: Sequence[float]) -> float:
    """Root mean square of the errors (``None``/NaN dropped); NaN for an empty list."""
    return _rms(_finite(errors))


def trimmed_rmse(errors: Sequence[float], trim: float = 0.10) -> float:
    """STARK's trimmed RMSE (§4.1): RMSE after dropping ``trim`` of the errors on each side."""
    return _rms(trimmed(errors, trim))


def rmspe(errors: Sequence[float], golds: Sequence[float], trim: float = 0.0) -> float:
    """Root mean squared percentage error, as a fraction: RMS of ``error / |gold|`` over items
    with non-zero gold (STARK §4.1, field prediction), optionally trimmed."""
    rel = [e / abs(g) for e, g in zip(errors, golds) if e is not None and g not in (None, 0)]
    return trimmed_rmse(rel, trim) if trim else rmse(rel)


def median_error(errors: Sequence[float]) -> float:
    """Median of the errors (``None``/NaN dropped); NaN for an empty list."""
    e = np.sort(_finite(errors))
    if not len(e):
        return math.nan
    lo, hi = e[(len(e) - 1) // 2], e[len(e) // 2]
    if lo == hi:  # also two infs, whose difference would be NaN
        return float(lo)
    return float(lo + (hi - lo) / 2)  # no overflow for huge errors, inf stays inf


ERROR_METRICS: dict[str, Callable[[Sequence[float]], float]] = {
    "trimmed_rmse": trimmed_rmse,
    "rmse": rmse,
    "median_error": median_error,
}
