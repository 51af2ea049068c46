"""Conversion between sensor-reading arrays and their JSON form.

JSON has no NaN, so a dropped reading is ``null``.  A range+bearing reading is the pair
``[range, bearing_deg]``; a dropped one is a single ``null`` (not ``[null, null]``).
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _row_to_json(row: np.ndarray, pairs: bool) -> list:
    if pairs:
        return [None if np.any(np.isnan(r)) else [float(r[0]), float(r[1])] for r in row]
    return [None if np.isnan(r) else float(r) for r in row]


def readings_to_json(a: np.ndarray, pairs: bool, stepped: bool) -> list:
    """Array -> JSON lists with ``None`` for missing readings.

    Args:
        a: (m,) or (m, 2) for one set of readings; (k, m) or (k, m, 2) when ``stepped``.
        pairs: readings are ``[range, bearing]`` pairs (last axis of length 2).
        stepped: the first axis is time steps (tracking).
    """
    a = np.asarray(a, dtype=float)
    return [_row_to_json(r, pairs) for r in a] if stepped else _row_to_json(a, pairs)


def _row_to_array(row: list, pairs: bool) -> list:
    if pairs:
        return [[np.nan, np.nan] if r is None else [np.nan if v is None else v for v in r] for r in row]
    return [np.nan if r is None else r for r in row]


def readings_to_array(rows: Any, pairs: bool, stepped: bool) -> np.ndarray:
    """JSON readings -> float array with NaN for missing values; inverse of
    :func:`readings_to_json`.  Shapes as there."""
    if stepped:
        return np.array([_row_to_array(r, pairs) for r in rows], dtype=float)
    return np.array(_row_to_array(rows, pairs), dtype=float)
