"""Audit of relation items (STARK tier 2): does each label agree with OGC / DE-9IM (exact on
the printed decimals, :mod:`stsim.sim.shapes`) and Allen's algebra evaluated on the printed
coordinates?

Each finding's reason starts with a tag:

* ``[label]`` -- the label contradicts the rule; the reason gives the computed relation (DE-9IM
  matrix, Allen relation, event interval);
* ``[ambiguous]`` -- the spatiotemporal event holds on several disjoint runs, so the union of
  Table 21's rule is not an interval and no Allen relation is defined;
* ``[degenerate]`` -- an input the rules cannot evaluate (zero-length interval, invalid geometry).

Spatiotemporal items also report when a released event interval (``meta["released_event_
interval"]``) differs from the rule's, as extra context in the reason.
"""
from __future__ import annotations

from ..records import Task
from ..sim import allen
from ..sim.event_interval import satisfying_runs
from ..sim.shapes import GeometryError, exact_pair, holds, relate

RELATION_FAMILIES = ("stark.relation.spatial", "stark.relation.temporal",
                     "stark.relation.spatiotemporal", "stark.relation.temporal_choice",
                     "stark.relation.de9im")


def _fmt(iv) -> str:
    return f"[{iv[0]:g}, {iv[1]:g}]"


def _size_hint(a, b) -> str:
    """How close to the other label a pair is: the gap when disjoint, else the size of the
    shared part (a tolerance-based engine such as ArcGIS's may flip labels within these)."""
    ga, gb = exact_pair(a, b)
    if not ga.intersects(gb):
        return f"gap {ga.distance(gb):.2g}"
    inter = ga.intersection(gb)
    if inter.area > 0:
        return f"shared area {inter.area:.2g}"
    if inter.length > 0:
        return f"shared length {inter.length:.2g}"
    return "shared point(s) only"


def audit_relation(task: Task):
    """``(ok, reason)`` for one relation task (see module docstring for the reason tags)."""
    i, gold, fam = task.inputs, task.answer, task.family
    try:
        if fam == "stark.relation.spatial":
            got = int(holds(i["a"], i["b"], i["predicate"]))
            if got == int(gold):
                return True, ""
            return False, (f"[label] labelled {gold}, but {i['a']['type']} {i['predicate']} "
                           f"{i['b']['type']} is {bool(got)} (DE-9IM {relate(i['a'], i['b'])}; "
                           f"{_size_hint(i['a'], i['b'])})")
        if fam == "stark.relation.de9im":
            got = relate(i["a"], i["b"])
            return (got == gold, "" if got == gold else f"[label] matrix {gold} but shapely gives {got}")
        if fam in ("stark.relation.temporal", "stark.relation.temporal_choice"):
            rel = allen.relation(i["a"], i["b"])
            if fam == "stark.relation.temporal_choice":
                return (rel == gold, "" if rel == gold else f"[label] answer {gold} but A {rel} B")
            asked = allen.canonical(i["relation"])
            got = int(rel == asked)
            if got == int(gold):
                return True, ""
            return False, (f"[label] labelled {gold} for '{asked}', but A={_fmt(i['a'])} {rel} "
                           f"B={_fmt(i['b'])}")
        if fam == "stark.relation.spatiotemporal":
            allen.check_interval(i["reference"], "reference interval")
            runs = satisfying_runs(i["trajectory"], i["times"], i["geometry"], i["predicate"])
            asked = allen.canonical(i["relation"])
            rel_iv = task.meta.get("released_event_interval")
            note = ""
            if rel_iv and (not runs or len(runs) > 1 or [round(v, 4) for v in runs[0]] != [round(v, 4) for v in rel_iv]):
                note = f"; released event interval {_fmt(rel_iv)}"
            if len(runs) > 1:
                return False, (f"[ambiguous] labelled {gold}: '{i['predicate']}' holds on "
                               f"{len(runs)} disjoint runs {', '.join(_fmt(r) for r in runs)}{note}")
            if not runs:
                if int(gold) == 0:
                    return True, ""
                path = {"type": "LineString", "coords": i["trajectory"]}
                return False, (f"[label] labelled 1, but no trajectory segment satisfies "
                               f"'{i['predicate']}' with the {i['geometry']['type']}, so there is no "
                               f"event (whole path vs geometry: {_size_hint(path, i['geometry'])}){note}")
            rel = allen.relation(runs[0], i["reference"])
            got = int(rel == asked)
            if got == int(gold):
                return True, ""
            return False, (f"[label] labelled {gold} for '{asked}', but event {_fmt(runs[0])} {rel} "
                           f"reference {_fmt(i['reference'])}{note}")
    except (GeometryError, allen.IntervalError) as exc:
        return False, f"[degenerate] {exc}"
    except KeyError as exc:
        return False, f"[degenerate] missing input {exc}"
    return True, ""
