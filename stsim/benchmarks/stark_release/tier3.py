"""Loader for STARK's 350 released tier-3 (world-knowledge) items,
``data_final_v5/tier3_world_knowledge/<category>/{i}.csv`` (columns ``query``, ``answer`` 0/1,
and for POI/intent a ``location_map``), as binary tasks of our ``stark.knowledge.*``
families so any model can be scored on them.  The released query is the prompt (it is data).
There is no baseline: the items need world knowledge (real landmarks and roads), so the
city and mobility solvers return ``no_estimate`` on them.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterator

from ...records import Task
from .tier1 import resolve_data_dir
from .folders import release_folders
from ..suites import SuiteError

SUITE = "stark-published-tier3"

#: released category folder -> family
TIER3_FOLDERS: dict[str, str] = {
    "direction_questions": "stark.knowledge.direction",
    "landmark_questions": "stark.knowledge.proximity",
    "route_planning": "stark.knowledge.route",
    "travel_questions": "stark.knowledge.eta",
    "subroute_duration": "stark.knowledge.route_segment",
    "poi_pred": "stark.knowledge.poi",
    "intent_pred": "stark.knowledge.intent",
}


def load_tier3_instance(path: Path, family: str) -> Task:
    """One released tier-3 item.  Raises :class:`SuiteError` on a missing row or a label
    other than 0/1."""
    try:
        with open(path, newline="") as fh:
            row = next(csv.DictReader(fh))
        query, label = row["query"].strip(), row["answer"].strip()
    except (OSError, StopIteration, KeyError) as exc:
        raise SuiteError(f"{path}: no query/answer row ({exc!r})") from None
    if label not in ("0", "1"):
        raise SuiteError(f"{path}: answer must be 0 or 1, got {label!r}")
    inputs: dict[str, Any] = {"category": path.parent.name}
    if row.get("location_map"):
        inputs["location_map"] = row["location_map"]
    i = int(path.stem)
    meta = {"suite": SUITE, "source": f"STARK data_final_v5/tier3_world_knowledge/{path.parent.name}",
            "instance": i, "rubric": "stark"}
    return Task(f"{SUITE}/{family}/{i:06d}", family, query, inputs, int(label), "binary", [], meta)


def load_published_tier3(data: Path, n: int | None = None, options: dict[str, Any] | None = None) -> Iterator[Task]:
    """Yield the released tier-3 items (first ``n`` per category), category by category.

    Raises:
        SuiteError: missing folder or malformed item.
    """
    root = resolve_data_dir(data) / "tier3_world_knowledge"
    wanted = (options or {}).get("families")
    for folder, family in release_folders(root, TIER3_FOLDERS, wanted):
        paths = sorted(folder.glob("*.csv"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1)
        for p in paths if n is None else paths[:n]:
            yield load_tier3_instance(p, family)
