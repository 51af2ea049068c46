"""The nine calculi of QSTRBench Table 1, built once on first use."""
from __future__ import annotations

from functools import lru_cache

from .calculus import Calculus, CalculusError

#: Calculus keys in the order of QSTRBench §4.
CALCULUS_KEYS = ("pa", "rcc5", "cdc", "ia", "rcc8", "indu", "star", "9im", "rcc22")


@lru_cache(maxsize=1)
def all_calculi() -> dict[str, Calculus]:
    """key -> :class:`Calculus` for all nine calculi (tables derived on the first call)."""
    from .directions import build_cdc, build_star
    from .temporal import build_ia, build_indu, build_pa
    from .topology import build_9im, build_rcc5, build_rcc8, build_rcc22
    pa = build_pa()
    rcc8 = build_rcc8()
    built = {"pa": pa, "rcc5": build_rcc5(rcc8), "cdc": build_cdc(pa), "ia": build_ia(),
             "rcc8": rcc8, "indu": build_indu(), "star": build_star(), "9im": build_9im(rcc8),
             "rcc22": build_rcc22(rcc8)}
    return {k: built[k] for k in CALCULUS_KEYS}


def get_calculus(name: str) -> Calculus:
    """A calculus by key or abbreviation (case-insensitive: ``rcc8``, ``RCC-8``, ``IA``).

    Raises:
        CalculusError: unknown name, listing the known ones.
    """
    key = name.lower().replace("-", "").replace("_", "")
    cals = all_calculi()
    if key in cals:
        return cals[key]
    for c in cals.values():
        if c.abbrev.lower().replace("-", "") == key:
            return c
    raise CalculusError(f"unknown calculus {name!r}; known: {', '.join(c.abbrev for c in cals.values())}")
