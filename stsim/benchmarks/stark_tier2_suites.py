"""Suites of STARK tier 2 (relations) and of STARK tiers 1 + 2 together."""
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


def register(tier1_families: list[str]) -> None:
    """Register ``stark-tier2`` and ``stark`` (tier 1 at 50 per family, plus tier 2)."""
    register_suite(Suite("stark-tier2", "STARK tier 2: spatial (Table 8), temporal (Allen), "
                         "spatiotemporal (Table 21) and DE-9IM relation tasks, 2,000 items.",
                         dict(STARK_TIER2)))
    register_suite(Suite("stark", "STARK tiers 1 and 2: stark-tier1 plus stark-tier2.",
                         {**{f: 50 for f in tier1_families}, **STARK_TIER2}))
