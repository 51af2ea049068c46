"""The entity store as the agentic tier's tool API reads it inside the sandbox (issue 17, item 5).

:func:`export_tool_table` writes the columns the tool API (``stsim/sandbox/geotools.py``) needs
to one column-oriented JSON file (geometry as WKT text), so that the sandboxed interpreter reads
it with the standard library alone, without stsim, geopandas or pyarrow (pyarrow's allocator
and thread pools reserve over 1 GB of address space, more than the sandbox's limit).  Written
once per store (keyed by the store's cache key) into the user cache, atomically.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .store import cache_dir, cache_key, fold, load_store

#: Bump when the exported columns change.
TOOL_TABLE_VERSION = "2"

#: Columns of the exported table, in order.
COLUMNS = ("id", "name", "aliases", "category", "iso3", "country_name", "admin1_code", "admin1_name",
           "population", "capital", "timezone", "lon", "lat", "wkt", "keys")


def tool_table_path() -> Path:
    """Where the exported table of the installed store lives (built or not)."""
    return cache_dir() / f"tools-{cache_key()}-v{TOOL_TABLE_VERSION}" / "entities.json"


def export_tool_table(path: str | Path | None = None) -> Path:
    """Write the tool table (unless it exists) and return its path.

    The file is ``{"version", "store_cache_key", "rows", "columns": {NAME: [value per row]}}``
    with the columns :data:`COLUMNS`; ``lon``, ``lat`` in degrees (WGS84) are the point of a place and a
    point inside the polygon of a country (shapely's ``representative_point``); ``wkt`` is the
    geometry (lon lat order, shapely's WKT at full precision); ``aliases`` ``|``-joined;
    ``keys`` the names ``lookup`` matches (:func:`~stsim.geoqa.store.fold` of the name, of each
    alias and, for places of a simulated city, of the name before its ``, City`` suffix),
    folded here once so the sandbox need not fold 34,000 rows at every start.
    Rows in the store's order.

    Raises:
        StoreError: the store cannot be built.
    """
    path = tool_table_path() if path is None else Path(path)
    if path.is_file():
        return path
    t = load_store().table
    geoms = list(t.geometry)
    points = [g if g.geom_type == "Point" else g.representative_point() for g in geoms]
    data = {c: [str(x) for x in t[c]] for c in ("id", "name", "aliases", "category", "iso3", "country_name",
                                                 "admin1_code", "admin1_name", "timezone")}
    data["population"] = [int(x) for x in t["population"]]
    data["capital"] = [bool(x) for x in t["capital"]]
    data["lon"] = [float(p.x) for p in points]
    data["lat"] = [float(p.y) for p in points]
    data["wkt"] = [g.wkt for g in geoms]
    keys = []
    for name, aliases, cat in zip(data["name"], data["aliases"], data["category"]):
        k = {fold(name)} | {fold(a) for a in aliases.split("|") if a}
        if cat != "country":
            k.add(fold(name.split(",")[0]))
        keys.append(sorted(x for x in k if x))
    data["keys"] = keys
    doc = {"version": TOOL_TABLE_VERSION, "store_cache_key": cache_key(), "rows": len(t),
           "columns": {c: data[c] for c in COLUMNS}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)
    return path
