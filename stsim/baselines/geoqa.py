"""Baselines of the geospatial QA families (``geoqa.*``, seed 003).

* ``baseline`` (and ``--solver oracle``): **the executor as oracle** -- it re-runs the
  template's query on the task's recorded binding (:func:`stsim.geoqa.executor.execute`).  It
  scores EM = 1 and NE = 0 by construction, because the gold came from the same query: it
  proves the record is reproducible, not that the query is right (the re-derivation tests of
  ``tests/test_geoqa_rederive.py`` do that by second routes).
* ``baseline:majority``: seed 003 §4's lower bound, "a majority-class baseline that predicts
  each sub-template's most frequent gold answer".  Over the template's whole question pool it
  answers, for every sub-template, the most frequent gold (ties: the smallest in JSON order).
  For continuous formats (distance, area, ratio, angle, count, point, box) every gold is unique
  and "most frequent" would be arbitrary, so it answers the median (component-wise for points
  and boxes): the constant with the most EM hits under relative tolerances.  It reads no
  entity of the task.
"""
from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from typing import Any

import numpy as np

from ..records import Answer, Task

_MEDIAN_FORMATS = ("geo_distance", "geo_area", "geo_ratio", "geo_angle", "geo_count", "geo_point", "geo_bbox")


def solve_oracle(task: Task, solver: str = "baseline") -> list[Answer]:
    """Re-execute the task's query (the executor as oracle)."""
    from ..geoqa.executor import Degenerate, execute
    try:
        value = execute(task.inputs["template"], task.inputs["binding"])
    except (KeyError, Degenerate) as exc:
        return [Answer(task.id, None, "no_estimate", solver=solver, detail=f"query failed: {exc}")]
    return [Answer(task.id, None, "ok", value=value, solver=solver)]


@lru_cache(maxsize=None)
def majority_answers(tid: str) -> dict[str, Any]:
    """Sub-template -> the majority (or median, see the module docstring) gold of template
    ``tid`` over its whole question pool."""
    from ..geoqa.executor import TEMPLATES, load_templates, pool
    load_templates()
    fmt = TEMPLATES[tid].answer_format
    groups: dict[str, list[Any]] = {}
    for inst in pool(tid):
        groups.setdefault(inst.subtemplate, []).append(inst.gold)
    out: dict[str, Any] = {}
    for sub, golds in sorted(groups.items()):
        if fmt in _MEDIAN_FORMATS:
            med = np.median(np.asarray(golds, dtype=float), axis=0)
            out[sub] = int(round(float(med))) if fmt == "geo_count" else (
                [float(v) for v in med] if np.ndim(med) else float(med))
        else:
            counts = Counter(json.dumps(g, sort_keys=True) for g in golds)
            best = max(counts.values())
            out[sub] = json.loads(min(k for k, v in counts.items() if v == best))
    return out


def solve_majority(task: Task, solver: str = "baseline:majority") -> list[Answer]:
    """Answer the sub-template's majority gold."""
    table = majority_answers(task.inputs["template"])
    sub = task.inputs.get("subtemplate", "")
    if sub not in table:
        return [Answer(task.id, None, "no_estimate", solver=solver, detail=f"sub-template {sub!r} has no questions")]
    return [Answer(task.id, None, "ok", value=table[sub], solver=solver)]


def _families() -> list[str]:
    from ..geoqa.executor import load_templates
    return [f"geoqa.{tid}" for tid in load_templates()]


ALTERNATIVES = {f: {"majority": solve_majority} for f in _families()}
