"""geotools: the tool API of the geoqa agentic tier, importable inside the sandbox.

This module runs where stsim is invisible (like :mod:`stsim.sandbox.harness`): it imports only
the standard library, numpy and pyproj, never stsim.  The host exports the entity store once
(:func:`stsim.geoqa.tool_table.export_tool_table`) as ``entities.json`` beside a
copy of this file and mounts that folder read-only into the sandbox
(:mod:`stsim.solvers.agentic`); the module loads the table when it is imported there.  Model
code can read the table but not change it (a read-only bind mount; Landlock in the process
mode).  :data:`API_DOC` is the documentation the model is shown.

Coordinates are ``lon, lat`` in degrees (WGS84, EPSG:4326; longitude east positive, latitude
north positive); distances are WGS84 geodesics (Karney 2013, via ``pyproj.Geod``) in km.
Every public function counts one *tool call* (:func:`calls`), recorded by the host.
"""
import math
import os
import re
import unicodedata

#: What the model is shown (the agentic system prompt embeds it verbatim).
API_DOC = '''\
Python module `geotools` (import geotools) -- read-only access to the benchmark's entity store:
the GeoNames places of at least 15,000 inhabitants (category "city"), the countries
(category "country", Natural Earth 1:110m polygons) and the places of the simulated cities
(categories "landmark" and "amenity:KIND", e.g. "amenity:cafe").
Coordinates are lon, lat in degrees (WGS84); distances are WGS84 geodesics in km.

An entity is a dict: {"id": "gn:2996944", "name": "Lyon", "category": "city",
  "country": "FRA" (ISO-3), "country_name": "France", "admin1": "Auvergne-Rhone-Alpes",
  "admin1_code": "84", "population": 472317, "capital": False, "timezone": "Europe/Paris",
  "lon": 4.84671, "lat": 45.74846, "aliases": [...]}
(countries: lon/lat is a point inside the polygon; simulated places: empty country fields.)

geotools.lookup(name, category=None, country=None, limit=10) -> list of entities
    Entities whose name or alias equals `name` (ignoring case, accents and punctuation),
    most populous first. `name` may be written "Name", "Name, Country" or
    "Name (Admin-1), Country" as in the questions. `country`: ISO-3 code or country name.
geotools.entity(entity_id) -> entity                      (KeyError if unknown)
geotools.geometry(entity_id) -> WKT string in lon lat order
    "POINT (4.84671 45.74846)" for a place, "POLYGON ((...))" / "MULTIPOLYGON (...)" for a
    country (shapely.wkt.loads reads it).
geotools.near(lon, lat, km, category="city", limit=50) -> list of entities
    Entities of `category` within `km` of the point, nearest first, each with an extra
    "distance_km". `category` may end in "*" ("amenity:*"); None = every category but
    countries. The point's own entity (distance 0) is included.
geotools.distance_km(a, b) -> float
    Geodesic distance between two places, each an entity id or a (lon, lat) pair.

Also available: numpy, scipy, shapely, pyproj (e.g. pyproj.Geod(ellps="WGS84")), h3,
s2sphere, pygeohash, networkx, zoneinfo.'''

_CALLS = [0]
_T = {}


class GeoToolsError(RuntimeError):
    """The entity table is missing or unreadable (the tool folder is not mounted)."""


def _here():
    return os.path.dirname(os.path.abspath(__file__))


#: where the table is looked for: beside this file (the mounted tool folder)
DATA_NAME = "entities.json"


def fold(text):
    """Case-, accent- and punctuation-insensitive key of a name ("Zürich" -> "zurich"); the same
    rule as the store's own (:func:`stsim.geoqa.store.fold`, checked by the tests)."""
    t = unicodedata.normalize("NFKD", str(text))
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = re.sub(r"[^0-9a-z]+", " ", t)
    return t.strip()


def load(path=None):
    """Load the entity table (``entities.json`` beside this file by default) into memory.

    Raises:
        GeoToolsError: the file is missing or not a table of the expected columns.
    """
    import json
    import numpy as np
    path = os.path.join(_here(), DATA_NAME) if path is None else str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            cols = json.load(fh)["columns"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise GeoToolsError(f"geotools: cannot read the entity table {path}: {exc}") from None
    need = ("id", "name", "aliases", "category", "iso3", "country_name", "admin1_code", "admin1_name",
            "population", "capital", "timezone", "lon", "lat", "wkt", "keys")
    missing = [c for c in need if c not in cols]
    if missing:
        raise GeoToolsError(f"geotools: {path} lacks the columns {', '.join(missing)}")
    _T.clear()
    _T.update(cols)
    _geod()
    _T["lon_a"] = np.asarray(cols["lon"], dtype=float)
    _T["lat_a"] = np.asarray(cols["lat"], dtype=float)
    _T["index"] = {eid: i for i, eid in enumerate(cols["id"])}
    by_cat = {}
    for i, c in enumerate(cols["category"]):
        by_cat.setdefault(c, []).append(i)
    _T["by_cat"] = {c: np.asarray(v, dtype=np.int64) for c, v in by_cat.items()}
    # unit vectors on the sphere: a cheap pre-selection before the exact geodesics of near()
    lo, la = np.radians(_T["lon_a"]), np.radians(_T["lat_a"])
    _T["xyz"] = np.column_stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)])
    keys = {}
    for i, ks in enumerate(cols["keys"]):  # folded names and aliases (folded by the exporter)
        for k in ks:
            keys.setdefault(k, []).append(i)
    _T["keys"] = keys
    _T["path"] = path


def _table():
    if not _T:
        load()
    return _T


def calls():
    """Number of tool calls made so far in this process (each public function counts one)."""
    return _CALLS[0]


def _count():
    _CALLS[0] += 1


def _row(i):
    t = _T
    return {"id": t["id"][i], "name": t["name"][i], "category": t["category"][i], "country": t["iso3"][i],
            "country_name": t["country_name"][i], "admin1": t["admin1_name"][i],
            "admin1_code": t["admin1_code"][i], "population": int(t["population"][i]),
            "capital": bool(t["capital"][i]), "timezone": t["timezone"][i],
            "lon": float(t["lon"][i]), "lat": float(t["lat"][i]),
            "aliases": [a for a in t["aliases"][i].split("|") if a]}


def _index(entity_id):
    t = _table()
    try:
        return t["index"][entity_id]
    except (KeyError, TypeError):
        raise KeyError(f"geotools: no entity {entity_id!r} (ids look like 'gn:2996944', 'ne:FRA', "
                       "'sim:0:Cafe 1'; find them with lookup())") from None


def _country_match(i, country):
    c = fold(country)
    t = _T
    return c in (fold(t["iso3"][i]), fold(t["country_name"][i]))


_QUALIFIED = re.compile(r"^\s*(?P<name>.*?)\s*(?:\((?P<admin1>[^()]*)\))?\s*(?:,\s*(?P<country>[^,()]+))?\s*$")


def lookup(name, category=None, country=None, limit=10):
    """Entities named ``name`` (folded name or alias; ``"Name (Admin-1), Country"`` accepted),
    optionally of one ``category`` and ``country`` (ISO-3 or name), most populous first (then
    by id); at most ``limit``.  An unknown name gives ``[]``."""
    _count()
    t = _table()
    hits = list(t["keys"].get(fold(name), []))
    admin1 = None
    if not hits:
        m = _QUALIFIED.match(str(name))
        if m and (m.group("admin1") or m.group("country")):
            hits = list(t["keys"].get(fold(m.group("name")), []))
            admin1 = m.group("admin1")
            country = country or m.group("country")
    if category is not None:
        hits = [i for i in hits if _cat_ok(t["category"][i], category)]
    if country:
        hits = [i for i in hits if _country_match(i, country)]
    if admin1:
        hits = [i for i in hits if fold(t["admin1_name"][i]) == fold(admin1)]
    hits.sort(key=lambda i: (-int(t["population"][i]), t["id"][i]))
    return [_row(i) for i in hits[:max(0, int(limit))]]


def entity(entity_id):
    """The entity of ``entity_id``; :class:`KeyError` when unknown."""
    _count()
    return _row(_index(entity_id))


def geometry(entity_id):
    """WKT (lon lat) of an entity: ``POINT`` for places, ``(MULTI)POLYGON`` for countries."""
    _count()
    return _T["wkt"][_index(entity_id)]


def _cat_ok(cat, category):
    if category is None:
        return cat != "country"
    if category.endswith("*"):
        return cat.startswith(category[:-1])
    return cat == category


def _geod():
    if "geod" not in _T:
        from pyproj import Geod
        _T["geod"] = Geod(ellps="WGS84")
    return _T["geod"]


def near(lon, lat, km, category="city", limit=50):
    """Entities of ``category`` within ``km`` (geodesic) of ``(lon, lat)``, nearest first (ties by
    id), each with ``distance_km``; at most ``limit``.

    Raises:
        ValueError: a coordinate outside [-180, 180] x [-90, 90] or a negative radius.
    """
    import numpy as np
    _count()
    t = _table()
    lon, lat, km = float(lon), float(lat), float(km)
    if not (-180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0) or not km >= 0:
        raise ValueError(f"geotools.near: expected lon in [-180, 180], lat in [-90, 90], km >= 0; "
                         f"got {lon}, {lat}, {km}")
    parts = [ix for c, ix in t["by_cat"].items() if _cat_ok(c, category)]
    if not parts:
        return []
    cand = np.sort(np.concatenate(parts))
    # pre-select on the sphere (mean radius 6371.0088 km): the WGS84 geodesic differs from the
    # great circle by well under 1 %, so a 1 % + 1 km margin keeps every point within km
    lo, la = math.radians(lon), math.radians(lat)
    p = np.array([math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)])
    ang = min(math.pi, (km * 1.01 + 1.0) / 6371.0088)
    cand = cand[t["xyz"][cand] @ p >= math.cos(ang)]
    if not len(cand):
        return []
    _, _, d = _geod().inv(np.full(len(cand), lon), np.full(len(cand), lat), t["lon_a"][cand], t["lat_a"][cand])
    d = np.asarray(d) / 1000.0
    keep = d <= km
    cand, d = cand[keep], d[keep]
    order = sorted(range(len(cand)), key=lambda k: (d[k], t["id"][cand[k]]))[:max(0, int(limit))]
    out = []
    for k in order:
        row = _row(int(cand[k]))
        row["distance_km"] = float(d[k])
        out.append(row)
    return out


def _point(x):
    if isinstance(x, str):
        i = _index(x)
        if _T["category"][i] == "country":
            raise ValueError(f"geotools.distance_km: {x} is a country (a polygon); use geometry() "
                             "and shapely for polygons")
        return float(_T["lon"][i]), float(_T["lat"][i])
    try:
        lon, lat = (float(v) for v in x)
    except (TypeError, ValueError):
        raise ValueError(f"geotools.distance_km: expected an entity id or (lon, lat), got {x!r}") from None
    if not (-180.0 <= lon <= 180.0 and -90.0 <= lat <= 90.0) or math.isnan(lon + lat):
        raise ValueError(f"geotools.distance_km: ({lon}, {lat}) is not a lon, lat pair in degrees")
    return lon, lat


def distance_km(a, b):
    """WGS84 geodesic distance in km between ``a`` and ``b`` (entity ids or ``(lon, lat)``).

    Raises:
        KeyError: an unknown id; ValueError: a country id or a bad coordinate pair.
    """
    _count()
    _table()
    (lo1, la1), (lo2, la2) = _point(a), _point(b)
    return float(_geod().inv(lo1, la1, lo2, la2)[2]) / 1000.0


# Loaded when imported from the mounted tool folder (the zygote imports it once, so each
# sandboxed run starts with the table in memory); a plain import elsewhere loads nothing.
if os.path.exists(os.path.join(_here(), DATA_NAME)):
    try:
        load()
    except GeoToolsError:
        pass  # the first call retries and raises the reason; the zygote must not die importing it
