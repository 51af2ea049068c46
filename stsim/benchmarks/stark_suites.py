"""Suites for the whole of STARK: field prediction, the knowledge-aware tier, all families,
a small sample, and the released field and tier-3 data."""
from __future__ import annotations

from ..registry import load_families
from .stark_release.fields import FIELD_FOLDERS, load_published_fields
from .stark_release.tier3 import load_published_tier3
from .suites import Suite, register_suite

STARK_FIELDS = ["stark.field.spatial_impute", "stark.field.temporal_impute",
                "stark.field.spatiotemporal_impute", "stark.field.spatiotemporal_forecast"]
STARK_KNOWLEDGE = ["stark.knowledge.direction", "stark.knowledge.proximity", "stark.knowledge.route",
                   "stark.knowledge.eta", "stark.knowledge.route_segment", "stark.knowledge.poi",
                   "stark.knowledge.intent"]


def all_stark_families() -> list[str]:
    """Every registered ``stark.*`` family, in registration order."""
    return [f for f in load_families() if f.startswith("stark.")]


register_suite(Suite("stark-fields", "STARK field-variable prediction on synthetic temperature fields, "
                     "4 families x 50 (RMSPE).", {f: 50 for f in STARK_FIELDS}))
register_suite(Suite("stark-knowledge", "STARK tier 3 on a simulated city and a simulated person, "
                     "7 yes/no families x 50.", {f: 50 for f in STARK_KNOWLEDGE}))
register_suite(Suite("stark", "Every STARK family stsim generates, 50 tasks each.",
                     {f: 50 for f in all_stark_families()}))
register_suite(Suite("stark-mini", "Every STARK family stsim generates, 3 tasks each.",
                     {f: 3 for f in all_stark_families()}))
register_suite(Suite("stark-published-fields", "STARK's released field-prediction instances "
                     "(--data DIR or data_final.tar.gz), 4 families x 50.", {}, loader=load_published_fields,
                     data_families=tuple(FIELD_FOLDERS.values())))
register_suite(Suite("stark-published-tier3", "STARK's 350 released tier-3 world-knowledge items "
                     "(--data DIR or data_final.tar.gz); no baseline.", {}, loader=load_published_tier3))
