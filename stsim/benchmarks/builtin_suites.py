"""The suites that ship with stsim (``stsim list`` prints them)."""
from __future__ import annotations

from .stark_release.tier1 import FOLDERS, load_published
from .stark_release.tier2 import FOLDERS as TIER2_FOLDERS
from .suites import Suite, register_suite

STARK_TIER1 = [
    "stark.localization.range", "stark.localization.bearing", "stark.localization.range_bearing",
    "stark.localization.proximity", "stark.localization.event", "stark.temporal_localization.event",
    "stark.localization.event_xyt",
    "stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
    "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
    "stark.tracking.event_xyt",
]

register_suite(Suite("quickstart", "Small default: every STARK tier-1 family, 10 tasks each.",
                     {f: 10 for f in STARK_TIER1}))
register_suite(Suite("stark-tier1", "STARK tier 1: localisation and tracking, 14 families x 50 tasks "
                     "(first 10 tracking steps scored).", {f: 50 for f in STARK_TIER1}))
register_suite(Suite("stark-published", "STARK's released tier-1 instances and tier-2 relation items "
                     "(--data DIR or the data_final.tar.gz archive); --n N = first N per family "
                     "(tier 1) or per released category (tier 2).", {}, loader=load_published,
                     data_families=tuple(dict.fromkeys([f for f, _, _ in FOLDERS.values()]
                                                       + list(TIER2_FOLDERS.values())))))

from . import cardinal_suites  # noqa: F401,E402
from . import qstr_suites  # noqa: F401,E402
from . import stark_suites  # noqa: F401,E402  (STARK fields, knowledge, whole-STARK suites)
from . import stark_tier2_suites  # noqa: F401,E402
from . import geoqa_suites  # noqa: F401,E402
