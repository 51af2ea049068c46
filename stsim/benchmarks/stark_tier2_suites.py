"""The STARK tier-2 suite (relations); the whole-STARK suites are in :mod:`stark_suites`."""
from __future__ import annotations

from .suites import Suite, register_suite

#: family -> tasks in ``stark-tier2`` (2,000 in all).
STARK_TIER2 = {
    "stark.relation.spatial": 700,
    "stark.relation.temporal": 500,
    "stark.relation.temporal_choice": 200,
    "stark.relation.spatiotemporal": 450,
    "stark.relation.de9im": 150,
}


register_suite(Suite("stark-tier2", "STARK tier 2: spatial (Table 8), temporal (Allen), "
                     "spatiotemporal (Table 21) and DE-9IM relation tasks, 2,000 items.",
                     dict(STARK_TIER2)))
