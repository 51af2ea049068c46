"""Suites of the geospatial QA benchmark (MultiGlobeQA-style, seed 003; docs/geoqa.md).

* ``geoqa`` -- every verified question of every template (up to each template's cap);
* ``geoqa-mini`` -- the first 20 questions of every template (a random sample of each).
"""
from __future__ import annotations

from ..geoqa.executor import load_templates
from .suites import Suite, register_suite

_FAMILIES = {f"geoqa.{tid}": t.cap for tid, t in load_templates().items()}

register_suite(Suite("geoqa", f"Geospatial QA over real places (MultiGlobeQA-style): all verified questions "
                     f"of {len(_FAMILIES)} templates in 14 spatial-function families.", dict(_FAMILIES)))
register_suite(Suite("geoqa-mini", "Geospatial QA, small: the first 20 questions of every template.",
                     {f: 20 for f in _FAMILIES}))
