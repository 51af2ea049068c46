"""Per-task random streams: any task can be regenerated alone, in any order, on any worker.

Every task draws from its own ``numpy.random.Generator`` seeded by
``SeedSequence(suite_seed, spawn_key=(family_key(family), index))``.  ``family_key`` is a
stable 32-bit hash of the family name, so adding or reordering families never changes another
family's tasks.
"""
from __future__ import annotations

import hashlib

import numpy as np


def family_key(family: str) -> int:
    """Stable 32-bit integer for a family name (first 4 bytes of its SHA-256)."""
    return int.from_bytes(hashlib.sha256(family.encode("utf-8")).digest()[:4], "big")


def task_rng(suite_seed: int, family: str, index: int) -> np.random.Generator:
    """The random generator of task ``index`` of ``family`` under ``suite_seed``.

    Raises:
        ValueError: if ``suite_seed`` or ``index`` is negative.
    """
    if suite_seed < 0 or index < 0:
        raise ValueError(f"seed and index must be non-negative (got seed={suite_seed}, index={index})")
    ss = np.random.SeedSequence(int(suite_seed), spawn_key=(family_key(family), int(index)))
    return np.random.Generator(np.random.PCG64(ss))
