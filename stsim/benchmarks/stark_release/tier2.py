"""Loader for STARK's released tier-2 items (``data_final_v5/tier2_v2_*``): reads each
question's text back into structured inputs, so the oracle scores them and the audit checks
their labels.

Layout: ``tier2_v2_spatial/{A}_{B}_{predicate}/{k}.csv``, ``tier2_v2_temporal/{relation}/{k}.csv``
and ``tier2_v2_spatial_temporal/{A}_{B}_{predicate}-{relation}/{k}.csv``; each CSV holds one
row with ``query`` (the prompt) and ``answer`` (0/1); spatiotemporal rows add ``i1`` (the
released event interval) and ``i2`` (the reference interval).  Geometry type words
``Point``/``Linestring``/``Polygon`` and STARK's relation names (``precedes``,
``is_overlapped_by``, ``overlaps with`` ...) are mapped to ours.  Numbers are taken exactly as
printed in the question.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any, Iterator

from ...records import Task
from ...sim import allen
from ...sim.shapes import SHORT
from .folders import release_folders
from ..suites import SuiteError

SUITE = "stark-published"
TYPES = {"point": "Point", "linestring": "LineString", "polygon": "Polygon"}
FOLDERS = {"tier2_v2_spatial": "stark.relation.spatial",
           "tier2_v2_temporal": "stark.relation.temporal",
           "tier2_v2_spatial_temporal": "stark.relation.spatiotemporal"}

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_PAIR = re.compile(r"\(\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\)")
_SPATIAL_Q = re.compile(r"Determine whether the (\w+) (\[[^\]]*\]) has the spatial relationship "
                        r"\*\*([\w ]+)\*\* with the (\w+) (\[[^\]]*\])")
_TEMPORAL_Q = re.compile(r"Determine whether the time interval (\([^)]*\)) has the temporal "
                         r"relationship \*\*([\w ]+)\*\* with the time interval (\([^)]*\))")
_ST_Q = re.compile(r"temporal relationship \*\*([\w ]+)\*\* with the reference interval (\([^)]*\))")
_ST_EVENT = re.compile(r"EVENT: the following object trajectory has the spatial relationship "
                       r"\*\*([\w ]+)\*\* with (\w+) (\[[^\]]*\])")
_TRAJ = re.compile(r"Object trajectory: (\[[^\]]*\])")
_TIMES = re.compile(r"Timestamp: \[([^\]]*)\]")


def _pairs(text: str) -> list[list[float]]:
    return [[float(a), float(b)] for a, b in _PAIR.findall(text)]


def _geom(word: str, text: str, where: str) -> dict[str, Any]:
    kind = TYPES.get(word.lower())
    if kind is None:
        raise SuiteError(f"{where}: unknown geometry type {word!r}")
    return {"type": kind, "coords": _pairs(text)}


def _interval(text: str) -> list[float]:
    return [float(v) for v in re.findall(_NUM, text)]


def parse_item(family: str, folder: str, row: dict[str, str], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(inputs, breakdown) of one released row, read from its question text.

    Raises:
        SuiteError: the question does not have the expected shape (naming ``where``).
    """
    q = row.get("query") or ""
    if family == "stark.relation.spatial":
        m = _SPATIAL_Q.search(q)
        if not m:
            raise SuiteError(f"{where}: cannot find the two geometries and the predicate in the question")
        a, b = _geom(m.group(1), m.group(2), where), _geom(m.group(4), m.group(5), where)
        pred = m.group(3).strip().lower()
        label = f"{SHORT[a['type']]}-{SHORT[b['type']]}-{pred}"
        return ({"a": a, "b": b, "predicate": pred, "decimals": 4},
                {"combination": label, "predicate": pred, "pair": label.rsplit("-", 1)[0]})
    if family == "stark.relation.temporal":
        m = _TEMPORAL_Q.search(q)
        if not m:
            raise SuiteError(f"{where}: cannot find the two intervals and the relation in the question")
        rel = allen.canonical(m.group(2).replace(" ", "_"))
        return ({"a": _interval(m.group(1)), "b": _interval(m.group(3)), "relation": rel},
                {"relation": rel})
    m, e, tr, ts = _ST_Q.search(q), _ST_EVENT.search(q), _TRAJ.search(q), _TIMES.findall(q)
    if not (m and e and tr and ts):
        raise SuiteError(f"{where}: cannot find trajectory, time stamps, event and reference interval")
    rel = allen.canonical(m.group(1).replace(" ", "_"))
    geom = _geom(e.group(2), e.group(3), where)
    pred = e.group(1).strip().lower()
    times = [float(v) for v in re.findall(_NUM, ts[-1])]
    label = f"L-{SHORT[geom['type']]}-{pred}"
    return ({"trajectory": _pairs(tr.group(1)), "times": times, "geometry": geom, "predicate": pred,
             "relation": rel, "reference": _interval(m.group(2)), "decimals": 4},
            {"combination": label, "relation": rel})


def load_tier2(root: Path, n: int | None = None, families: Any = None) -> Iterator[Task]:
    """Yield released tier-2 items (first ``n`` per released category folder when given), in
    the families ``stark.relation.{spatial, temporal, spatiotemporal}``.

    Raises:
        SuiteError: a folder is missing, or a file is unreadable or malformed (naming it).
    """
    for base, family in release_folders(root, FOLDERS, families):
        index = 0
        for cat in sorted(p for p in base.iterdir() if p.is_dir()):
            files = sorted(cat.glob("*.csv"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0)
            for f in files if n is None else files[:n]:
                where = f"{base.name}/{cat.name}/{f.name}"
                try:
                    with open(f, newline="", encoding="utf-8") as fh:
                        rows = list(csv.DictReader(fh))
                except (OSError, UnicodeDecodeError, csv.Error) as exc:
                    raise SuiteError(f"{where}: cannot read ({exc})") from None
                for r, row in enumerate(rows):
                    try:
                        inputs, breakdown = parse_item(family, cat.name, row, where)
                        answer = int(str(row["answer"]).strip())
                    except (KeyError, ValueError) as exc:
                        raise SuiteError(f"{where} row {r}: {exc}") from None
                    meta: dict[str, Any] = {"suite": SUITE, "source": f"STARK data_final_v5/{where}",
                                            "category": cat.name, "row": r, "rubric": "stark",
                                            "breakdown": breakdown}
                    if "i1" in row:
                        meta["released_event_interval"] = _interval(row["i1"]) or None
                    yield Task(f"{SUITE}/{family}/{index:06d}", family, row.get("query", ""), inputs,
                               answer, "binary", [], meta)
                    index += 1
