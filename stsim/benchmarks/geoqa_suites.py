"""Suites of the geospatial QA benchmark (MultiGlobeQA-style, seed 003; docs/geoqa.md).

* ``geoqa`` -- every verified question of every template (up to each template's cap) and every
  false-premise question (``geoqa.fp.*``, seed 003 §3.4);
* ``geoqa-small`` -- a fixed canonical subset of ``geoqa`` (seed 003 Appendix A.3): up to
  :data:`SMALL_CELL` questions per (source, SFID) cell, split evenly over the cell's templates
  (each template's first questions, a random sample of its pool, so the subset is a strict
  prefix-wise subset of ``geoqa``), plus false-premise questions making up
  :data:`FALSE_PREMISE_SHARE` of the suite, split evenly over the templates that have them;
* ``geoqa-mini`` -- the first 20 questions of every template (the quick demo; no false premises).
"""
from __future__ import annotations

from ..geoqa.executor import load_templates
from ..geoqa.premise import PERTURBATIONS
from .suites import Suite, register_suite

#: At most this many questions per (source, SFID) cell in ``geoqa-small`` (the paper's small split).
SMALL_CELL = 200
#: Target share of false-premise questions in ``geoqa-small`` (seed 003 §3.4: 7.8 %).
FALSE_PREMISE_SHARE = 0.08

_T = load_templates()
_FAMILIES = {f"geoqa.{tid}": t.cap for tid, t in _T.items()}
_FP = {f"geoqa.fp.{tid}": _T[tid].cap for tid in PERTURBATIONS}


def source_of(tid: str) -> str:
    """The entity source of a template: ``sim`` (questions about the simulated cities) or
    ``geonames`` (GeoNames places and Natural Earth countries)."""
    return "sim" if "{net}" in _T[tid].paraphrases[0] else "geonames"


def small_counts() -> dict[str, int]:
    """Family -> number of questions of ``geoqa-small`` (before capping at each pool's size)."""
    cells: dict[tuple[str, str], list[str]] = {}
    for tid, t in _T.items():
        cells.setdefault((source_of(tid), t.sfid), []).append(tid)
    out: dict[str, int] = {}
    for tids in cells.values():
        for tid in tids:
            out[f"geoqa.{tid}"] = min(_T[tid].cap, SMALL_CELL // len(tids))
    n_fp = round(FALSE_PREMISE_SHARE / (1 - FALSE_PREMISE_SHARE) * sum(out.values()))
    for fam in _FP:
        out[fam] = n_fp // len(_FP)
    return out


register_suite(Suite("geoqa", f"Geospatial QA over real places (MultiGlobeQA-style): all verified questions "
                     f"of {len(_FAMILIES)} templates in 14 spatial-function families and the false-premise "
                     f"questions of {len(_FP)} of them.", {**_FAMILIES, **_FP}))
register_suite(Suite("geoqa-small", f"Geospatial QA, small split: up to {SMALL_CELL} questions per (source, SFID) "
                     f"cell and ~{FALSE_PREMISE_SHARE:.0%} false premises; a subset of geoqa.", small_counts()))
register_suite(Suite("geoqa-mini", "Geospatial QA, small: the first 20 questions of every template.",
                     {f: 20 for f in _FAMILIES}))
