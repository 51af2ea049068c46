"""The question templates of the geospatial QA benchmark: 14 spatial-function families (SFIDs).

Each template pairs paraphrases (question text with typed placeholders) with a query executed
over the entity store (:mod:`stsim.geoqa.store`, :mod:`stsim.geoqa.context`).  The ten SFIDs
the paper names (seed 003 §3.1, Fig. 1: metric, topological, direction, coordinates,
administrative hierarchy, shape, centrality, grid indexing, transformation, uncertainty) and
four of ours that analysts ask (nearest / k-nearest, aggregation within a radius, set
enumeration, routing over the network source).  The wording is ours.

Conventions: distances are WGS84 geodesics (``pyproj.Geod``, Karney 2013) in km unless the
question says metres or miles (1 mi = 1.609344 km); azimuths are degrees clockwise from true
north in [0, 360); points are answered ``lat, lon``; polygons are WKT in lon/lat order; areas
are geodesic polygon areas on WGS84 (``Geod.geometry_area_perimeter``) in km^2.  Every
degenerate execution (a tie within the answer tolerance, a bearing within 1 degree of a
compass-sector boundary, an empty set, no route) raises :class:`Degenerate` and is dropped.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np

from ..answers_geo import COMPASS16, fold as fold_name  # noqa: F401  (used by tests)
from .context import GEOD, Context, area_perimeter, geod_km
from .executor import Degenerate, Result, Template, register

MI_KM = 1.609344

I_BOOL = "Answer yes or no."
I_COUNT = "Answer with a whole number."
I_KM = "Answer with a number in {unit}."
I_AREA = "Answer with a number in square kilometres."
I_RATIO = "Answer with a decimal number."
I_ANGLE = "Answer with an azimuth in degrees clockwise from north (0 to 360)."
I_POINT = "Answer with latitude and longitude in decimal degrees, as: lat, lon."
I_BBOX = "Answer with [west, south, east, north] in decimal degrees."
I_POLY = "Answer with a WKT POLYGON in longitude-latitude order."
I_C8 = "Answer with one of the 8 compass points N, NE, E, SE, S, SW, W, NW."
I_C16 = "Answer with one of the 16 compass points (N, NNE, NE, ENE, E, ...)."
I_NAME = "Answer with the name only."
I_SET = "Answer with the names separated by semicolons, or 'none'."
I_RANK = "Answer with the names in order, separated by semicolons."
I_CELL = "Answer with the cell id only."
I_TIME = "Answer with the local date and time as YYYY-MM-DD HH:MM."



def plural(noun: str) -> str:
    """English plural of an amenity kind (``"pharmacy"`` -> ``"pharmacies"``, ``"police
    station"`` -> ``"police stations"``, ``"church"`` -> ``"churches"``): the regular rules on the
    last word (-s/-x/-z/-ch/-sh take -es; consonant + y takes -ies; else -s)."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if len(noun) > 1 and noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"

def T(tid, fmt, paraphrases, roles, sample, query, instruction, cap=800):
    """Register a template; its SFID is the part of ``tid`` before the first dot."""
    sfid = tid.split(".")[0]
    return register(Template(tid, sfid, fmt, tuple(paraphrases), roles, sample, query, instruction, cap))


# ------------------------------------------------------------------------------ helpers
def pt(ctx: Context, eid: str) -> str:
    """WKT ``POINT (lon lat)`` of an entity (5 decimals)."""
    lon, lat = ctx.ll(eid)
    return f"POINT ({lon:.5f} {lat:.5f})"


def loc_triples(ctx: Context, *ids: str) -> list[list]:
    """Gold triples ``[id, geo:asWKT, POINT (lon lat)]`` of entities."""
    return [[i, "geo:asWKT", pt(ctx, i)] for i in ids]


def d_km(ctx, a, b) -> float:
    """Geodesic distance (km, WGS84) between two entities."""
    (x1, y1), (x2, y2) = ctx.ll(a), ctx.ll(b)
    return float(geod_km(x1, y1, x2, y2))


def inv(ctx, a, b):
    """Inverse geodesic a -> b: (forward azimuth, back azimuth at b, distance km); azimuths
    in degrees clockwise from north, [0, 360)."""
    (x1, y1), (x2, y2) = ctx.ll(a), ctx.ll(b)
    az, baz, d = GEOD.inv(x1, y1, x2, y2)
    return float(az) % 360.0, float(baz) % 360.0, float(d) / 1000.0


def ids(**kw):
    """A binding with these role -> entity ids and no parameters."""
    return {"ids": kw, "params": {}}


def with_params(b, **params):
    """``b`` with ``params`` added to its parameters."""
    b["params"].update(params)
    return b


def near_major(ctx: Context, rng, a: str, k: int = 40) -> str:
    """A major city among the ``k`` major cities nearest to ``a`` (for pair questions about
    neighbouring places)."""
    lon, lat = ctx.ll(a)
    idx, _ = ctx.nearest(lon, lat, 200, exclude=ctx.city_index[a])
    maj = [i for i in idx if i in ctx._major_set][:k]
    if not maj:
        return ctx.pick_major(rng)[0]
    return str(ctx.city_ids[maj[int(rng.integers(len(maj)))]])


def pair(ctx, rng, near_p=0.5):
    """Two major cities: the second among the first's neighbours with probability ``near_p``."""
    a = ctx.pick_major(rng)[0]
    b = near_major(ctx, rng, a) if rng.random() < near_p else ctx.pick_major(rng)[0]
    return a, b


def tie(x: float, y: float, rel: float) -> bool:
    """``x`` and ``y`` within ``rel`` of the larger magnitude (a degenerate comparison)."""
    return abs(x - y) <= rel * max(abs(x), abs(y), 1e-9)


def country_ids(ctx):
    """Ids ``ne:ISO3`` of the countries with polygons, sorted."""
    return [f"ne:{i}" for i in ctx.country_isos]


def pick_country(ctx, rng) -> str:
    """A country id drawn uniformly (:meth:`Context.pick_country`: within the target income
    tier while the executor samples a stratum)."""
    return ctx.pick_country(rng)


def iso(eid: str) -> str:
    """ISO-3 of a country id ``ne:ISO3``."""
    return eid.split(":", 1)[1]


def city_list(ctx, rng, n_lo=4, n_hi=6):
    """A seed major city and up to ``n`` - 1 other major cities within ~1500 km."""
    a = ctx.pick_major(rng)[0]
    n = int(rng.integers(n_lo, n_hi + 1))
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, 1500.0)
    maj = [str(ctx.city_ids[i]) for i in idx if i in ctx._major_set and str(ctx.city_ids[i]) != a]
    if len(maj) < n - 1:
        return None
    pick = rng.choice(len(maj), size=n - 1, replace=False)
    return [a] + [maj[int(k)] for k in sorted(pick)]


def list_text(ctx, members):
    """Display names of a set of cities, separated by semicolons."""
    names = [ctx.display(m) for m in members]
    return "; ".join(names)


def sample_list(ctx, rng):
    """A binding with a set of 4-6 nearby major cities (``members``)."""
    m = city_list(ctx, rng)
    return None if m is None else {"ids": {}, "params": {}, "members": m}


def render_members(ctx, b):
    """Placeholder text ``{list}`` of a set binding."""
    return {"list": list_text(ctx, b["members"])}


def compass(az: float, points: int) -> str:
    """Abbreviated 8- or 16-point compass name of an azimuth (sectors centred on each point;
    a boundary goes clockwise)."""
    width = 360.0 / points
    k = int(math.floor((az % 360.0 + width / 2.0) / width)) % points
    return COMPASS16[k * (16 // points)]


def near_boundary(az: float, points: int, margin: float = 1.0) -> bool:
    """Whether an azimuth lies within ``margin`` degrees of a compass-sector boundary."""
    width = 360.0 / points
    off = (az % 360.0 + width / 2.0) % width
    return off < margin or width - off < margin


# ================================================================================ metric
def _metric_distance(ctx, b):
    d = d_km(ctx, b["ids"]["a"], b["ids"]["b"])
    unit = b["params"]["unit"]
    if d < 1.0:
        raise Degenerate("same place")
    val = d if unit == "km" else d / MI_KM
    return Result(val, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]), f"unit={unit}",
                  {"unit": unit})


T("metric.distance", "geo_distance",
  ["What is the geodesic distance between {a} and {b}, in {unit}?",
   "How far apart are {a} and {b} along the WGS84 ellipsoid, in {unit}?",
   "Measured along the shortest path on the WGS84 ellipsoid, how many {unit} separate {a} from {b}?"],
  {"a": "city", "b": "city"},
  lambda ctx, rng: with_params(ids(**dict(zip("ab", pair(ctx, rng)))), unit=["km", "miles"][int(rng.integers(2))]),
  _metric_distance, I_KM)


def _closer(ctx, b):
    a, x, y = b["ids"]["a"], b["ids"]["b"], b["ids"]["c"]
    dx, dy = d_km(ctx, a, x), d_km(ctx, a, y)
    if tie(dx, dy, 0.02):
        raise Degenerate("tie")
    win = x if dx < dy else y
    return Result(ctx.display(win), loc_triples(ctx, a, x, y), "", {"aliases": ctx.alias_spec([win])})


def _s_three(ctx, rng):
    a = ctx.pick_major(rng)[0]
    return ids(a=a, b=near_major(ctx, rng, a, 80), c=near_major(ctx, rng, a, 80))


T("metric.closer", "geo_entity",
  ["Which is closer to {a}: {b} or {c}?", "Of {b} and {c}, which lies nearer to {a} (geodesic distance)?"],
  {"a": "city", "b": "city", "c": "city"}, _s_three, _closer, I_NAME)


def _within(ctx, b):
    d = d_km(ctx, b["ids"]["a"], b["ids"]["b"])
    r = b["params"]["r"]
    if tie(d, r, 0.02) or d < 1:
        raise Degenerate("on the threshold")
    return Result(d <= r, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]), f"r={r}")


T("metric.within", "geo_boolean",
  ["Is {b} within {r} km of {a}?", "Does {b} lie less than {r} km (geodesic) from {a}?"],
  {"a": "city", "b": "city"},
  lambda ctx, rng: with_params(ids(**dict(zip("ab", pair(ctx, rng, 0.7)))), r=[100, 250, 500, 1000][int(rng.integers(4))]),
  _within, I_BOOL)


def _area(ctx, b):
    c = b["ids"]["country"]
    return Result(ctx.country_area_km2(iso(c)), [[c, "geo:hasGeometry", "ne_110m polygon"]])


T("metric.country_area", "geo_area",
  ["What is the geodesic area of the Natural Earth 1:110m polygon of {country}, in km²?",
   "Computed on the WGS84 ellipsoid, how large is the 1:110m country polygon of {country} in square kilometres?"],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _area, I_AREA)


def _area_ratio(ctx, b):
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    x, y = ctx.country_area_km2(iso(a)), ctx.country_area_km2(iso(c))
    if x < y or y <= 0:
        raise Degenerate("ordered pair expected")
    return Result(x / y, [[a, "geo:hasGeometry", "ne_110m polygon"], [c, "geo:hasGeometry", "ne_110m polygon"]])


def _s_country_pair(ctx, rng, neighbour_p=0.0):
    a = pick_country(ctx, rng)
    nb = ctx.adjacency[iso(a)]
    if nb and rng.random() < neighbour_p:
        return ids(country=a, country_b="ne:" + nb[int(rng.integers(len(nb)))])
    b = pick_country(ctx, rng)
    return None if a == b else ids(country=a, country_b=b)


T("metric.area_ratio", "geo_ratio",
  ["By the geodesic areas of their 1:110m polygons, how many times larger is {country} than {country_b}?",
   "What is the ratio of the polygon area of {country} to that of {country_b} (WGS84 geodesic areas)?"],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng), _area_ratio, I_RATIO)


def _dist_ratio(ctx, b):
    a, x, y = b["ids"]["a"], b["ids"]["b"], b["ids"]["c"]
    dx, dy = d_km(ctx, a, x), d_km(ctx, a, y)
    if dy < 10 or dx < 10:
        raise Degenerate("near-zero distance")
    return Result(dx / dy, loc_triples(ctx, a, x, y))


T("metric.distance_ratio", "geo_ratio",
  ["What is the distance from {a} to {b} divided by the distance from {a} to {c} (geodesic distances)?",
   "Divide the geodesic distance between {a} and {b} by the geodesic distance between {a} and {c}. What is the result?"],
  {"a": "city", "b": "city", "c": "city"}, _s_three, _dist_ratio, I_RATIO)


def _perimeter(ctx, b):
    c = b["ids"]["country"]
    return Result(ctx.country_perimeter_km(iso(c)), [[c, "geo:hasGeometry", "ne_110m polygon"]], "", {"unit": "km"})


T("metric.perimeter", "geo_distance",
  ["What is the geodesic perimeter of the 1:110m polygon of {country}, in km?",
   "How long is the boundary (all parts) of the Natural Earth 1:110m polygon of {country}, measured on the WGS84 ellipsoid in km?"],
  {"country": "country"}, lambda ctx, rng: with_params(ids(country=pick_country(ctx, rng)), unit="km"), _perimeter, I_KM)


# ================================================================================ topology
def _poly_triples(*cs):
    return [[c, "geo:hasGeometry", "ne_110m polygon"] for c in cs]


def _touch(ctx, b):
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    return Result(iso(c) in ctx.adjacency[iso(a)], _poly_triples(a, c))


T("topology.share_boundary", "geo_boolean",
  ["Do the 1:110m polygons of {country} and {country_b} intersect (share boundary points)?",
   "Are the Natural Earth 1:110m polygons of {country} and {country_b} in contact, i.e. not disjoint?"],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng, 0.5), _touch, I_BOOL)

DE9IM_NAMES = ("equals", "contains", "within", "overlaps", "touches", "disjoint")


def named_relation(g, h) -> str:
    """The first of :data:`DE9IM_NAMES` whose DE-9IM predicate (shapely) holds between two
    areal geometries (Clementini et al. 1993; OGC Simple Features 6.1.15.3).  Raises
    :class:`Degenerate` if none does (impossible for two non-empty polygons)."""
    for name in DE9IM_NAMES:
        if getattr(g, name)(h):
            return name
    raise Degenerate("no named relation")


def _relation(ctx, b):
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    g, h = ctx.country_geom(iso(a)), ctx.country_geom(iso(c))
    name = named_relation(g, h)
    return Result(name, _poly_triples(a, c) + [[a, "geo:relate", g.relate(h)]], "", {"aliases": {name: []}})


T("topology.relation", "geo_entity",
  ["Which named DE-9IM relation holds between the 1:110m polygons of {country} and {country_b}: equals, contains, within, overlaps, touches or disjoint?",
   "Classify the topological relation of the {country} polygon to the {country_b} polygon (Natural Earth 1:110m) as one of equals, contains, within, overlaps, touches, disjoint."],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng, 0.6), _relation, I_NAME)


def _neighbours(ctx, b):
    a = b["ids"]["country"]
    nb = ctx.adjacency[iso(a)]
    if not nb:
        raise Degenerate("no neighbours")
    names = ["ne:" + n for n in nb]
    return Result([ctx.display(n) for n in names], _poly_triples(a, *names), "",
                  {"aliases": ctx.alias_spec(names)})


T("topology.neighbours", "geo_entity_set",
  ["Which countries' 1:110m polygons intersect the polygon of {country}?",
   "List every country whose Natural Earth 1:110m polygon touches or overlaps that of {country}."],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _neighbours, I_SET)


def _n_neighbours(ctx, b):
    a = b["ids"]["country"]
    return Result(len(ctx.adjacency[iso(a)]), _poly_triples(a))


T("topology.neighbour_count", "geo_count",
  ["How many other countries' 1:110m polygons intersect the polygon of {country}?",
   "With how many countries does the Natural Earth 1:110m polygon of {country} share boundary points?"],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _n_neighbours, I_COUNT)

#: Point-in-polygon only this far (km) from the polygon boundary: the 1:110m generalisation
#: moves boundaries by up to tens of km.
PIP_MARGIN_KM = 50.0


def boundary_km_lower(geom, lon, lat) -> float:
    """A lower bound (km) on the geodesic distance from a point to a polygon boundary: the
    planar distance in degrees times the shortest length of a degree within that distance
    (a degree of longitude at the largest latitude reached, 110.57 km for latitude)."""
    from shapely.geometry import Point
    deg = geom.boundary.distance(Point(lon, lat))
    top = min(89.9, abs(lat) + deg)
    return deg * min(110.57, 111.32 * math.cos(math.radians(top)))


def _pip(ctx, b):
    a, c = b["ids"]["a"], b["ids"]["country"]
    lon, lat = ctx.ll(a)
    g = ctx.country_geom(iso(c))
    if boundary_km_lower(g, lon, lat) < PIP_MARGIN_KM:
        raise Degenerate("too close to the generalised boundary")
    from shapely.geometry import Point
    inside = bool(g.contains(Point(lon, lat)))
    return Result(inside, loc_triples(ctx, a) + _poly_triples(c))


def _s_pip(ctx, rng):
    a = ctx.pick_major(rng)[0]
    own = ctx.city(a)["iso3"]
    if own not in ctx.countries.index:
        return None
    if rng.random() < 0.5:
        return ids(a=a, country="ne:" + own)
    nb = ctx.adjacency[own]
    other = nb[int(rng.integers(len(nb)))] if nb else iso(pick_country(ctx, rng))
    return ids(a=a, country="ne:" + other)


T("topology.point_in_polygon", "geo_boolean",
  ["Does the GeoNames point of {a} lie inside the Natural Earth 1:110m polygon of {country}?",
   "Is the location of {a} contained in the 1:110m country polygon of {country}?"],
  {"a": "city_coords", "country": "country"}, _s_pip, _pip, I_BOOL)


def _bbox_meet(ctx, b):
    from shapely.geometry import box
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    g, h = ctx.country_geom(iso(a)), ctx.country_geom(iso(c))
    if g.bounds[2] - g.bounds[0] > 180 or h.bounds[2] - h.bounds[0] > 180:
        raise Degenerate("box across the antimeridian")
    return Result(bool(box(*g.bounds).intersects(box(*h.bounds))), _poly_triples(a, c))


T("topology.bbox_intersect", "geo_boolean",
  ["Do the longitude-latitude bounding boxes of {country} and {country_b} (1:110m polygons) intersect?",
   "Does the bounding box of the {country} polygon overlap or touch the bounding box of the {country_b} polygon?"],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng, 0.3), _bbox_meet, I_BOOL)


# ================================================================================ direction
def _azimuth(ctx, b):
    az, _, d = inv(ctx, b["ids"]["a"], b["ids"]["b"])
    if d < 5:
        raise Degenerate("too close")
    return Result(az, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]))


T("direction.azimuth", "geo_angle",
  ["What is the initial geodesic azimuth from {a} to {b}?",
   "Setting off from {a} along the shortest path to {b} on the WGS84 ellipsoid, in which azimuth do you start?"],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng)))), _azimuth, I_ANGLE)


def _compass_q(points):
    def q(ctx, b):
        az, _, d = inv(ctx, b["ids"]["a"], b["ids"]["b"])
        if d < 5 or near_boundary(az, points):
            raise Degenerate("on a sector boundary")
        return Result(compass(az, points), loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]), "",
                      {"points": points})
    return q


T("direction.compass8", "geo_compass",
  ["In which direction (8-point compass, by initial geodesic azimuth) does {b} lie from {a}?",
   "Looking from {a}, in which of the eight compass directions is {b} (initial azimuth of the geodesic)?"],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng)))), _compass_q(8), I_C8)
T("direction.compass16", "geo_compass",
  ["On a 16-point compass, in which direction does {b} lie from {a} (initial geodesic azimuth)?",
   "Give the 16-point compass direction from {a} to {b}, judged by the geodesic's initial azimuth."],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng)))), _compass_q(16), I_C16)


def _north_of(ctx, b):
    (_, la), (_, lb) = ctx.ll(b["ids"]["a"]), ctx.ll(b["ids"]["b"])
    if abs(la - lb) < 0.05:
        raise Degenerate("same latitude")
    return Result(la > lb, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]))


T("direction.north_of", "geo_boolean",
  ["Is {a} farther north (higher latitude) than {b}?", "Does {a} lie at a higher latitude than {b}?"],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng)))), _north_of, I_BOOL)


def _final_az(ctx, b):
    _, baz, d = inv(ctx, b["ids"]["a"], b["ids"]["b"])
    if d < 5:
        raise Degenerate("too close")
    return Result((baz + 180.0) % 360.0, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]))


T("direction.final_azimuth", "geo_angle",
  ["Travelling along the geodesic from {a} to {b}, what is your azimuth on arrival at {b}?",
   "What is the final (arrival) azimuth of the shortest WGS84 path from {a} to {b}?"],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng, 0.3)))), _final_az, I_ANGLE)


def _eastmost(ctx, b):
    mem = [b["ids"][k] for k in ("a", "b", "c")]
    lons = [ctx.ll(m)[0] for m in mem]
    if max(lons) - min(lons) > 180:
        raise Degenerate("spans the antimeridian")
    s = sorted(lons)
    if s[-1] - s[-2] < 0.05:
        raise Degenerate("tie")
    win = mem[int(np.argmax(lons))]
    return Result(ctx.display(win), loc_triples(ctx, *mem), "", {"aliases": ctx.alias_spec([win])})


T("direction.easternmost", "geo_entity",
  ["Which of {a}, {b} and {c} lies farthest east?", "Of {a}, {b} and {c}, which has the greatest longitude (is easternmost)?"],
  {"a": "city", "b": "city", "c": "city"}, _s_three, _eastmost, I_NAME)


# ================================================================================ coordinates
def _coords(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    return Result([lat, lon], loc_triples(ctx, b["ids"]["a"]))


T("coordinates.city", "geo_point",
  ["What are the coordinates of {a}?", "Give the latitude and longitude of {a} (GeoNames point)."],
  {"a": "city"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _coords, I_POINT)


def equal_area_centroid(geom):
    """Centroid of a lon/lat polygon computed in the equal-area EPSG:6933 projection (so it is
    the area-weighted centre, not the centre in degrees), returned as ``(lon, lat)``."""
    import shapely
    from pyproj import Transformer
    fwd = Transformer.from_crs("EPSG:4326", "EPSG:6933", always_xy=True)
    back = Transformer.from_crs("EPSG:6933", "EPSG:4326", always_xy=True)
    c = shapely.transform(geom, lambda xy: np.column_stack(fwd.transform(xy[:, 0], xy[:, 1]))).centroid
    lon, lat = back.transform(c.x, c.y)
    return float(lon), float(lat)


def _centroid(ctx, b):
    c = b["ids"]["country"]
    g = ctx.country_geom(iso(c))
    if g.bounds[2] - g.bounds[0] > 180:
        raise Degenerate("across the antimeridian")
    lon, lat = equal_area_centroid(g)
    return Result([lat, lon], _poly_triples(c))


T("coordinates.centroid", "geo_point",
  ["Where is the area-weighted centroid of the 1:110m polygon of {country}?",
   "What are the coordinates of the centroid (computed in an equal-area projection) of the Natural Earth 1:110m polygon of {country}?"],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _centroid, I_POINT)


def _antipode(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    return Result([-lat, (lon + 360.0) % 360.0 - 180.0], loc_triples(ctx, b["ids"]["a"]))


T("coordinates.antipode", "geo_point",
  ["What are the coordinates of the antipode of {a}?", "Which point on Earth is diametrically opposite {a}?"],
  {"a": "city"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _antipode, I_POINT)


def _destination(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    lo2, la2, _ = GEOD.fwd(lon, lat, b["params"]["az"], b["params"]["d"] * 1000.0)
    return Result([float(la2), (float(lo2) + 180.0) % 360.0 - 180.0], loc_triples(ctx, b["ids"]["a"]),
                  f"d={b['params']['d']}")


T("coordinates.destination", "geo_point",
  ["Starting at {a}, you travel {d} km along a geodesic with initial azimuth {az}°. Where do you arrive?",
   "What point lies {d} km from {a} along the geodesic that leaves {a} at azimuth {az}°?"],
  {"a": "city"},
  lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), d=[100, 250, 500, 1000, 2500][int(rng.integers(5))],
                               az=int(rng.integers(24)) * 15),
  _destination, I_POINT)


def _midpoint(ctx, b):
    (x1, y1), (x2, y2) = ctx.ll(b["ids"]["a"]), ctx.ll(b["ids"]["b"])
    az, _, d = GEOD.inv(x1, y1, x2, y2)
    if d < 10_000:
        raise Degenerate("too close")
    lo, la, _ = GEOD.fwd(x1, y1, az, d / 2.0)
    return Result([float(la), (float(lo) + 180.0) % 360.0 - 180.0], loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]))


T("coordinates.midpoint", "geo_point",
  ["What is the midpoint of the geodesic between {a} and {b}?",
   "Which point lies halfway along the shortest WGS84 path from {a} to {b}?"],
  {"a": "city", "b": "city"}, lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng, 0.3)))), _midpoint, I_POINT)


# ================================================================================ admin
def _admin_triples(ctx, a):
    r = ctx.city(a)
    return [[a, "gn:admin1Code", f"{r['iso2']}.{r['admin1_code']}"], [f"{r['iso2']}.{r['admin1_code']}", "rdfs:label", r["admin1_name"]],
            [a, "gn:countryCode", r["iso3"]], [r["iso3"], "rdfs:label", r["country_name"]]]


def _country_of(ctx, b):
    r = ctx.city(b["ids"]["a"])
    return Result(r["country_name"], _admin_triples(ctx, b["ids"]["a"]))


T("admin.country", "geo_entity",
  ["In which country is {a}?", "Which country does the place {a} belong to?"],
  {"a": "city_coords"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _country_of, I_NAME)


def _admin1(ctx, b):
    r = ctx.city(b["ids"]["a"])
    if not r["admin1_name"]:
        raise Degenerate("no admin-1 name")
    return Result(r["admin1_name"], _admin_triples(ctx, b["ids"]["a"]))


T("admin.admin1", "geo_entity",
  ["In which first-level administrative division (state, province, region...) is {a}?",
   "Name the first-order administrative unit that contains {a}."],
  {"a": "city_coords"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _admin1, I_NAME)


def _in_country(ctx, b):
    r = ctx.city(b["ids"]["a"])
    target = b["params"]["country_name"]
    return Result(r["country_name"] == target, _admin_triples(ctx, b["ids"]["a"]))


def _s_in_country(ctx, rng):
    a = ctx.pick_major(rng)[0]
    r = ctx.city(a)
    if rng.random() < 0.5 or r["iso3"] not in ctx.adjacency or not ctx.adjacency[r["iso3"]]:
        name = r["country_name"]
    else:
        nb = ctx.adjacency[r["iso3"]]
        name = ctx.display("ne:" + nb[int(rng.integers(len(nb)))])
    return with_params(ids(a=a), country_name=name)


T("admin.in_country", "geo_boolean",
  ["Is {a} in {country_name}?", "Does {a} lie within the country of {country_name} (by its GeoNames country code)?"],
  {"a": "city_coords"}, _s_in_country, _in_country, I_BOOL)


def _count_admin1(ctx, b):
    cc, code = b["params"]["cc"], b["params"]["code"]
    n = len(ctx.by_admin1.get((cc, code), ()))
    return Result(n, [[f"{cc}.{code}", "rdfs:label", b["params"]["admin1"]], [f"{cc}.{code}", "stsim:citiesOver15000", n]])


def _s_admin1(ctx, rng):
    a = ctx.pick_major(rng)[0]
    r = ctx.city(a)
    if not r["admin1_name"]:
        return None
    return {"ids": {}, "params": {"cc": r["iso2"], "code": r["admin1_code"], "admin1": r["admin1_name"],
                                  "country_name": r["country_name"]}}


T("admin.count_in_admin1", "geo_count",
  ["According to GeoNames, how many places with at least 15,000 inhabitants are in {admin1} ({country_name})?",
   "How many GeoNames populated places of 15,000 people or more lie in the first-level division {admin1}, {country_name}?"],
  {}, _s_admin1, _count_admin1, I_COUNT)


def _same_country(ctx, b):
    x, y = ctx.city(b["ids"]["a"]), ctx.city(b["ids"]["b"])
    return Result(x["iso3"] == y["iso3"], _admin_triples(ctx, b["ids"]["a"]) + _admin_triples(ctx, b["ids"]["b"]))


T("admin.same_country", "geo_boolean",
  ["Are {a} and {b} in the same country?", "Do {a} and {b} belong to one and the same country?"],
  {"a": "city_coords", "b": "city_coords"},
  lambda ctx, rng: ids(**dict(zip("ab", pair(ctx, rng, 0.8)))), _same_country, I_BOOL)


def _chain(ctx, b):
    r = ctx.city(b["ids"]["a"])
    if not r["admin1_name"] or r["admin1_name"] == r["country_name"]:
        raise Degenerate("no distinct admin-1")
    return Result([r["admin1_name"], r["country_name"]], _admin_triples(ctx, b["ids"]["a"]))


T("admin.chain", "geo_ranked",
  ["List the administrative units containing {a}, from its first-level division up to its country.",
   "Give the containment chain of {a}: first-level administrative division, then country."],
  {"a": "city_coords"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _chain, I_RANK)


def _capital(ctx, b):
    cc = b["params"]["cc"]
    c = ctx.by_country[cc]
    caps = c[c["capital"]]
    if len(caps) != 1:
        raise Degenerate("no single capital")
    cid = caps.iloc[0]["id"]
    return Result(caps.iloc[0]["name"], [[cid, "gn:capitalOf", cc]], "",
                  {"aliases": {caps.iloc[0]["name"]: ctx.aliases(cid)}})


def _s_capital(ctx, rng):
    c = ctx.cities
    ccs = sorted(set(c.loc[c["capital"], "iso2"]))
    cc = ccs[int(rng.integers(len(ccs)))]
    return {"ids": {}, "params": {"cc": cc, "country_name": ctx.by_country[cc]["country_name"].iloc[0]}}


T("admin.capital", "geo_entity",
  ["What is the capital of {country_name}?", "Which city is the national capital of {country_name}?"],
  {}, _s_capital, _capital, I_NAME)


# ================================================================================ shape
def _parts(ctx, b):
    c = b["ids"]["country"]
    g = ctx.country_geom(iso(c))
    return Result(len(getattr(g, "geoms", [g])), _poly_triples(c))


T("shape.parts", "geo_count",
  ["How many separate polygons make up the 1:110m geometry of {country}?",
   "Of how many parts (polygons) does the Natural Earth 1:110m geometry of {country} consist?"],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _parts, I_COUNT)


def polsby_popper(geom) -> float:
    """Polsby-Popper compactness 4 pi A / P^2 (Polsby & Popper 1991) with geodesic area and
    whole-boundary perimeter (WGS84, :func:`~stsim.geoqa.context.area_perimeter`): 1 for a
    disc, less otherwise."""
    area, perim = area_perimeter(geom)
    return 4.0 * math.pi * area / perim ** 2


def _pp(ctx, b):
    c = b["ids"]["country"]
    return Result(polsby_popper(ctx.country_geom(iso(c))), _poly_triples(c))


T("shape.polsby_popper", "geo_ratio",
  ["What is the Polsby-Popper compactness 4πA/P² of the 1:110m polygon of {country} (geodesic area and perimeter)?",
   "Compute the isoperimetric quotient 4π·area/perimeter² of the Natural Earth 1:110m geometry of {country} on the WGS84 ellipsoid."],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _pp, I_RATIO)


def _solidity(ctx, b):
    c = b["ids"]["country"]
    g = ctx.country_geom(iso(c))
    if g.bounds[2] - g.bounds[0] > 180:
        raise Degenerate("hull across the antimeridian")
    return Result(area_perimeter(g)[0] / area_perimeter(g.convex_hull)[0], _poly_triples(c))


T("shape.convexity", "geo_ratio",
  ["What fraction of the area of its convex hull (hull taken in longitude-latitude) does the 1:110m polygon of {country} fill (geodesic areas)?",
   "Give the solidity of {country}'s 1:110m geometry: its geodesic area divided by the geodesic area of its lon/lat convex hull."],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _solidity, I_RATIO)


def _hull(ctx, b):
    c = b["ids"]["country"]
    g = ctx.country_geom(iso(c))
    if g.bounds[2] - g.bounds[0] > 180:
        raise Degenerate("hull across the antimeridian")
    return Result(g.convex_hull.wkt, _poly_triples(c))


T("shape.convex_hull", "geo_polygon",
  ["What is the convex hull, in the longitude-latitude plane, of the 1:110m polygon of {country}?",
   "Give the lon/lat convex hull of the Natural Earth 1:110m geometry of {country}."],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _hull, I_POLY)


def _bbox(ctx, b):
    c = b["ids"]["country"]
    g = ctx.country_geom(iso(c))
    if g.bounds[2] - g.bounds[0] > 180:
        raise Degenerate("box across the antimeridian")
    return Result(list(g.bounds), _poly_triples(c))


T("shape.bbox", "geo_bbox",
  ["What is the bounding box of the 1:110m polygon of {country}?",
   "Give the longitude-latitude extent (west, south, east, north) of the Natural Earth 1:110m geometry of {country}."],
  {"country": "country"}, lambda ctx, rng: ids(country=pick_country(ctx, rng)), _bbox, I_BBOX)


def _more_compact(ctx, b):
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    x, y = polsby_popper(ctx.country_geom(iso(a))), polsby_popper(ctx.country_geom(iso(c)))
    if tie(x, y, 0.05):
        raise Degenerate("tie")
    win = a if x > y else c
    return Result(ctx.display(win), _poly_triples(a, c), "", {"aliases": ctx.alias_spec([win])})


T("shape.more_compact", "geo_entity",
  ["Which 1:110m polygon is more compact by the Polsby-Popper score: {country} or {country_b}?",
   "Of {country} and {country_b}, whose Natural Earth 1:110m geometry has the higher 4πA/P² (geodesic)?"],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng), _more_compact, I_NAME)


# ================================================================================ centrality
def _sums(ctx, mem):
    ll = np.array([ctx.ll(m) for m in mem])
    n = len(mem)
    d = np.zeros((n, n))
    for i in range(n):
        d[i] = geod_km(np.full(n, ll[i, 0]), np.full(n, ll[i, 1]), ll[:, 0], ll[:, 1])
    return d.sum(axis=1)


def _argbest(ctx, mem, vals, largest):
    order = np.argsort(-vals if largest else vals, kind="stable")
    if tie(vals[order[0]], vals[order[1]], 0.01):
        raise Degenerate("tie")
    win = mem[int(order[0])]
    return Result(ctx.display(win), loc_triples(ctx, *mem), f"n={len(mem)}", {"aliases": ctx.alias_spec([win])})


T("centrality.medoid", "geo_entity",
  ["Among {list}, which city minimises the sum of geodesic distances to the others (the medoid)?",
   "Which of these cities is the medoid of the set (smallest total geodesic distance to the rest): {list}?"],
  {}, sample_list, lambda ctx, b: _with_text(_argbest(ctx, b["members"], _sums(ctx, b["members"]), False), ctx, b),
  I_NAME)
T("centrality.outlier", "geo_entity",
  ["Among {list}, which city has the largest total geodesic distance to the others?",
   "Which of these cities is the most peripheral (largest sum of geodesic distances to the rest): {list}?"],
  {}, sample_list, lambda ctx, b: _with_text(_argbest(ctx, b["members"], _sums(ctx, b["members"]), True), ctx, b),
  I_NAME)


def _with_text(res, ctx, b):
    res.text.update(render_members(ctx, b))
    return res


def spherical_centre(lons, lats) -> tuple[float, float]:
    """Geographic centre of points: the normalised mean of their unit vectors (the centre of
    mass projected back to the sphere), as ``(lon, lat)``; raises :class:`Degenerate` when
    the mean vector is (nearly) zero."""
    lo, la = np.radians(lons), np.radians(lats)
    v = np.column_stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)]).mean(axis=0)
    n = np.linalg.norm(v)
    if n < 1e-6:
        raise Degenerate("points balance out")
    v = v / n
    return float(np.degrees(np.arctan2(v[1], v[0]))), float(np.degrees(np.arcsin(v[2])))


def _centre(ctx, b):
    ll = np.array([ctx.ll(m) for m in b["members"]])
    lon, lat = spherical_centre(ll[:, 0], ll[:, 1])
    return _with_text(Result([lat, lon], loc_triples(ctx, *b["members"]), f"n={len(b['members'])}"), ctx, b)


T("centrality.centre", "geo_point",
  ["What is the geographic centre (normalised mean of the unit vectors) of {list}?",
   "Find the spherical centre of mass of these cities, projected back to the surface: {list}."],
  {}, sample_list, _centre, I_POINT)


def _closest_to_centre(ctx, b):
    mem = b["members"]
    ll = np.array([ctx.ll(m) for m in mem])
    lon, lat = spherical_centre(ll[:, 0], ll[:, 1])
    d = geod_km(np.full(len(mem), lon), np.full(len(mem), lat), ll[:, 0], ll[:, 1])
    return _with_text(_argbest(ctx, mem, np.asarray(d), False), ctx, b)


T("centrality.closest_to_centre", "geo_entity",
  ["Which of {list} is nearest to the group's geographic centre (normalised mean of unit vectors)?",
   "Of these cities, which lies closest (geodesic) to their spherical centre of mass: {list}?"],
  {}, sample_list, _closest_to_centre, I_NAME)


def _set_bbox(ctx, b):
    ll = np.array([ctx.ll(m) for m in b["members"]])
    w, s, e, n = ll[:, 0].min(), ll[:, 1].min(), ll[:, 0].max(), ll[:, 1].max()
    if e - w > 180 or e - w < 0.01 or n - s < 0.01:
        raise Degenerate("degenerate box")
    return _with_text(Result([float(w), float(s), float(e), float(n)], loc_triples(ctx, *b["members"])), ctx, b)


T("centrality.bbox", "geo_bbox",
  ["What is the bounding box of {list}?", "Give the smallest longitude-latitude box containing these cities: {list}."],
  {}, sample_list, _set_bbox, I_BBOX)


def _set_hull(ctx, b):
    from shapely.geometry import MultiPoint
    ll = [ctx.ll(m) for m in b["members"]]
    h = MultiPoint(ll).convex_hull
    if h.geom_type != "Polygon" or h.area < 1e-3 or max(x for x, _ in ll) - min(x for x, _ in ll) > 180:
        raise Degenerate("collinear or across the antimeridian")
    return _with_text(Result(h.wkt, loc_triples(ctx, *b["members"])), ctx, b)


T("centrality.convex_hull", "geo_polygon",
  ["What is the convex hull, in the longitude-latitude plane, of {list}?",
   "Give the lon/lat convex hull polygon of these cities: {list}."],
  {}, lambda ctx, rng: (lambda m: None if m is None else {"ids": {}, "params": {}, "members": m})(city_list(ctx, rng, 4, 7)),
  _set_hull, I_POLY)


# ================================================================================ grid
def _gh(ctx, b):
    from ..spatial.geo import geohash_encode
    lon, lat = ctx.ll(b["ids"]["a"])
    p = b["params"]["p"]
    return Result(geohash_encode(lat, lon, p), loc_triples(ctx, b["ids"]["a"]), f"p={p}")


T("grid.geohash", "geo_cell",
  ["What is the geohash of {a} at precision {p}?", "Encode the location of {a} as a {p}-character geohash."],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), p=int(rng.integers(4, 9))), _gh, I_CELL)


def _h3(ctx, b):
    import h3
    lon, lat = ctx.ll(b["ids"]["a"])
    r = b["params"]["r"]
    return Result(h3.latlng_to_cell(lat, lon, r), loc_triples(ctx, b["ids"]["a"]), f"r={r}")


T("grid.h3", "geo_cell",
  ["Which H3 cell at resolution {r} contains {a}?", "What is the H3 index (resolution {r}) of the location of {a}?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=int(rng.integers(3, 10))), _h3, I_CELL)


def _s2(ctx, b):
    from ..spatial.geo import s2_token
    lon, lat = ctx.ll(b["ids"]["a"])
    lv = b["params"]["level"]
    return Result(s2_token(lat, lon, lv), loc_triples(ctx, b["ids"]["a"]), f"level={lv}")


T("grid.s2", "geo_cell",
  ["What is the token of the level-{level} S2 cell containing {a}?", "Give the S2 cell token (level {level}) of the location of {a}."],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), level=int(rng.integers(6, 15))), _s2, I_CELL)


def _h3_parent(ctx, b):
    import h3
    lon, lat = ctx.ll(b["ids"]["a"])
    r, r2 = b["params"]["r"], b["params"]["r2"]
    cell = h3.latlng_to_cell(lat, lon, r)
    return Result(h3.cell_to_parent(cell, r2), [[cell, "h3:resolution", r]], f"dr={r - r2}", {}, {"cell": cell})


def _s_h3_parent(ctx, rng):
    r = int(rng.integers(5, 11))
    return with_params(ids(a=ctx.pick_major(rng)[0]), r=r, r2=int(rng.integers(max(0, r - 4), r)))


T("grid.h3_parent", "geo_cell",
  ["What is the parent at resolution {r2} of the H3 cell {cell}?", "Which resolution-{r2} H3 cell contains the H3 cell {cell}?"],
  {}, _s_h3_parent, _h3_parent, I_CELL)


def _h3_dist(ctx, b):
    import h3
    (x1, y1), (x2, y2) = ctx.ll(b["ids"]["a"]), ctx.ll(b["ids"]["b"])
    r = b["params"]["r"]
    c1, c2 = h3.latlng_to_cell(y1, x1, r), h3.latlng_to_cell(y2, x2, r)
    try:
        k = int(h3.grid_distance(c1, c2))
    except Exception:  # H3 cannot measure across some pentagon distortions
        raise Degenerate("no grid distance") from None
    return Result(k, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]) + [[b["ids"]["a"], f"h3:cell{r}", c1], [b["ids"]["b"], f"h3:cell{r}", c2]],
                  f"r={r}")


T("grid.h3_distance", "geo_count",
  ["What is the H3 grid distance between the resolution-{r} cells of {a} and {b}?",
   "How many H3 grid steps (resolution {r}) separate the cell of {a} from the cell of {b}?"],
  {"a": "city", "b": "city"},
  lambda ctx, rng: with_params(ids(**dict(zip("ab", pair(ctx, rng, 1.0)))), r=int(rng.integers(3, 7))), _h3_dist, I_COUNT)

_GH_DIRS = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")


def _gh_neigh(ctx, b):
    from ..spatial.geo import geohash_encode, geohash_neighbours
    lon, lat = ctx.ll(b["ids"]["a"])
    gh = geohash_encode(lat, lon, b["params"]["p"])
    nb = geohash_neighbours(gh)[b["params"]["dir"]]
    if nb is None:
        raise Degenerate("beyond a pole")
    return Result(nb, [[gh, "geohash:precision", b["params"]["p"]]], f"dir={b['params']['dir']}", {}, {"gh": gh})


T("grid.geohash_neighbour", "geo_cell",
  ["Which geohash cell is the {dir} neighbour of {gh}?", "Name the geohash of the same precision adjacent to {gh} on its {dir} side."],
  {}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), p=int(rng.integers(4, 8)),
                                   dir=_GH_DIRS[int(rng.integers(8))]), _gh_neigh, I_CELL)


def _same_h3(ctx, b):
    import h3
    (x1, y1), (x2, y2) = ctx.ll(b["ids"]["a"]), ctx.ll(b["ids"]["b"])
    r = b["params"]["r"]
    c1, c2 = h3.latlng_to_cell(y1, x1, r), h3.latlng_to_cell(y2, x2, r)
    return Result(c1 == c2, [[b["ids"]["a"], f"h3:cell{r}", c1], [b["ids"]["b"], f"h3:cell{r}", c2]], f"r={r}")


def _s_same_h3(ctx, rng):
    a = ctx.pick_major(rng)[0]
    lon, lat = ctx.ll(a)
    idx, _ = ctx.nearest(lon, lat, 3, exclude=ctx.city_index[a])
    bb = str(ctx.city_ids[idx[int(rng.integers(len(idx)))]])
    if ctx._names.get(bb) is None:
        return None
    return with_params(ids(a=a, b=bb), r=int(rng.integers(2, 6)))


T("grid.same_h3", "geo_boolean",
  ["Do {a} and {b} fall in the same H3 cell at resolution {r}?", "At H3 resolution {r}, are {a} and {b} in one cell?"],
  {"a": "city", "b": "city"}, _s_same_h3, _same_h3, I_BOOL)


def _s2_parent(ctx, b):
    from ..spatial.geo import s2_token, _s2_from_token
    lon, lat = ctx.ll(b["ids"]["a"])
    lv, lv2 = b["params"]["level"], b["params"]["level2"]
    tok = s2_token(lat, lon, lv)
    return Result(_s2_from_token(tok).parent(lv2).to_token(), [[tok, "s2:level", lv]], f"dl={lv - lv2}", {}, {"token": tok})


def _s_s2_parent(ctx, rng):
    lv = int(rng.integers(8, 17))
    return with_params(ids(a=ctx.pick_major(rng)[0]), level=lv, level2=int(rng.integers(lv - 4, lv)))


T("grid.s2_parent", "geo_cell",
  ["What is the token of the level-{level2} parent of S2 cell {token}?", "Which level-{level2} S2 cell contains the S2 cell {token}? Give its token."],
  {}, _s_s2_parent, _s2_parent, I_CELL)


def _gh_centre(ctx, b):
    from ..spatial.geo import geohash_decode, geohash_encode
    lon, lat = ctx.ll(b["ids"]["a"])
    gh = geohash_encode(lat, lon, b["params"]["p"])
    c = geohash_decode(gh)
    return Result([c.lat, c.lon], [[gh, "geohash:precision", b["params"]["p"]]], f"p={b['params']['p']}", {}, {"gh": gh})


T("grid.geohash_centre", "geo_point",
  ["What is the centre point of the geohash cell {gh}?", "Decode the geohash {gh} to the coordinates of its cell centre."],
  {}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), p=int(rng.integers(3, 7))), _gh_centre, I_POINT)


# ================================================================================ transformation
def utm_zone(lon: float, lat: float) -> tuple[int, str]:
    """UTM zone number and hemisphere letter (N/S) of a point, with the Norway (32V) and
    Svalbard (31X-37X) exceptions (NGA, The Universal Grids, DMA TM 8358.2, §2-1)."""
    zone = int((lon + 180.0) // 6.0) % 60 + 1
    if 56.0 <= lat < 64.0 and 3.0 <= lon < 12.0:
        zone = 32
    if 72.0 <= lat < 84.0 and 0.0 <= lon < 42.0:
        zone = 31 if lon < 9 else 33 if lon < 21 else 35 if lon < 33 else 37
    return zone, "N" if lat >= 0 else "S"


def _utm_zone(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    if abs(lat) > 84:
        raise Degenerate("outside UTM")
    z, h = utm_zone(lon, lat)
    off = ((lon + 180.0) % 6.0)
    if min(off, 6.0 - off) < 0.01:
        raise Degenerate("on a zone boundary")
    return Result(f"{z}{h}", loc_triples(ctx, b["ids"]["a"]), "", {"aliases": {f"{z}{h}": [f"{z} {h}", f"zone {z}{h}", f"{z}{'north' if h == 'N' else 'south'}"]}})


T("transformation.utm_zone", "geo_entity",
  ["In which UTM zone (number and hemisphere, e.g. 33N) is {a}?", "Give the UTM zone, with N or S, that contains {a}."],
  {"a": "city"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _utm_zone, I_NAME)


def _utm_coord(which):
    def q(ctx, b):
        from pyproj import Transformer
        lon, lat = ctx.ll(b["ids"]["a"])
        if abs(lat) > 84:
            raise Degenerate("outside UTM")
        z, h = utm_zone(lon, lat)
        epsg = (32600 if h == "N" else 32700) + z
        x, y = Transformer.from_crs("EPSG:4326", f"EPSG:{epsg}", always_xy=True).transform(lon, lat)
        return Result(float(x if which == "easting" else y), loc_triples(ctx, b["ids"]["a"]) + [[b["ids"]["a"], "utm:zone", f"{z}{h}"]],
                      "", {"unit": "m", "abs_tol": 10.0, "rel_tol": 0.0, "signed": True}, {"zone": f"{z}{h}", "epsg": str(epsg)})
    return q


T("transformation.utm_easting", "geo_distance",
  ["What is the UTM easting of {a} in zone {zone} (EPSG:{epsg}), in metres?",
   "Project {a} to WGS 84 / UTM zone {zone} (EPSG:{epsg}). What is its easting in metres?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), unit="metres"), _utm_coord("easting"), I_KM)
T("transformation.utm_northing", "geo_distance",
  ["What is the UTM northing of {a} in zone {zone} (EPSG:{epsg}), in metres?",
   "Project {a} to WGS 84 / UTM zone {zone} (EPSG:{epsg}). What is its northing in metres?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), unit="metres"), _utm_coord("northing"), I_KM)


def _merc(which):
    def q(ctx, b):
        from pyproj import Transformer
        lon, lat = ctx.ll(b["ids"]["a"])
        x, y = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True).transform(lon, lat)
        return Result(float(x if which == "x" else y), loc_triples(ctx, b["ids"]["a"]), "",
                      {"unit": "m", "abs_tol": 10.0, "rel_tol": 0.0, "signed": True})
    return q


T("transformation.webmercator_x", "geo_distance",
  ["What is the Web Mercator (EPSG:3857) x coordinate of {a}, in metres?",
   "Transform {a} to EPSG:3857 (Web Mercator). What is its x (easting) in metres?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), unit="metres"), _merc("x"), I_KM)
T("transformation.webmercator_y", "geo_distance",
  ["What is the Web Mercator (EPSG:3857) y coordinate of {a}, in metres?",
   "Transform {a} to EPSG:3857 (Web Mercator). What is its y (northing) in metres?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), unit="metres"), _merc("y"), I_KM)


def _rand_dt(rng) -> datetime:
    return datetime(2025, 1, 1) + timedelta(minutes=int(rng.integers(0, 365 * 24 * 60)))


def _local_time(ctx, b):
    r = ctx.city(b["ids"]["a"])
    tz = r["timezone"]
    if not tz:
        raise Degenerate("no time zone")
    utc = datetime.fromisoformat(b["params"]["utc"]).replace(tzinfo=ZoneInfo("UTC"))
    local = utc.astimezone(ZoneInfo(tz)).replace(tzinfo=None)
    return Result(local.strftime("%Y-%m-%dT%H:%M"), [[b["ids"]["a"], "gn:timezone", tz]], "",
                  {}, {"utc_text": utc.strftime("%Y-%m-%d %H:%M")})


T("transformation.local_time", "geo_datetime",
  ["When it is {utc_text} UTC, what is the local date and time in {a}?",
   "At {utc_text} UTC, what do the clocks in {a} show (local civil time, date included)?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), utc=_rand_dt(rng).isoformat()),
  _local_time, I_TIME)


def _time_between(ctx, b):
    ra, rb = ctx.city(b["ids"]["a"]), ctx.city(b["ids"]["b"])
    if not ra["timezone"] or not rb["timezone"]:
        raise Degenerate("no time zone")
    local_a = datetime.fromisoformat(b["params"]["t"]).replace(tzinfo=ZoneInfo(ra["timezone"]))
    # a wall time skipped or repeated by a DST change is ambiguous
    back = local_a.astimezone(ZoneInfo("UTC")).astimezone(ZoneInfo(ra["timezone"]))
    if back.replace(tzinfo=None) != local_a.replace(tzinfo=None) or local_a.fold:
        raise Degenerate("DST gap")
    other = local_a.replace(fold=1).utcoffset() != local_a.utcoffset()
    if other:
        raise Degenerate("ambiguous wall time")
    out = local_a.astimezone(ZoneInfo(rb["timezone"])).replace(tzinfo=None)
    return Result(out.strftime("%Y-%m-%dT%H:%M"), [[b["ids"]["a"], "gn:timezone", ra["timezone"]],
                                                     [b["ids"]["b"], "gn:timezone", rb["timezone"]]],
                  "", {}, {"t_text": local_a.strftime("%Y-%m-%d %H:%M")})


T("transformation.time_between", "geo_datetime",
  ["When it is {t_text} local time in {a}, what are the local date and time in {b}?",
   "A call starts at {t_text} in {a} (local time). What date and time is it then in {b}?"],
  {"a": "city", "b": "city"},
  lambda ctx, rng: with_params(ids(**dict(zip("ab", pair(ctx, rng, 0.0)))), t=_rand_dt(rng).isoformat()),
  _time_between, I_TIME)


# ================================================================================ uncertainty
def _unc_dist(kind):
    def q(ctx, b):
        d = d_km(ctx, b["ids"]["a"], b["ids"]["b"])
        e = b["params"]["e"]
        if d <= 2 * e + 1:
            raise Degenerate("uncertainty discs overlap")
        return Result(d - 2 * e if kind == "min" else d + 2 * e, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]),
                      f"e={e}", {"unit": "km"})
    return q


def _s_unc(ctx, rng):
    return with_params(ids(**dict(zip("ab", pair(ctx, rng, 0.6)))), e=[1, 5, 10, 25, 50][int(rng.integers(5))])


T("uncertainty.min_distance", "geo_distance",
  ["The positions of {a} and {b} are each known only to within {e} km (geodesic radius). What is the smallest possible distance between them, in km?",
   "If {a} and {b} may each be anywhere within {e} km of their recorded points, how close could they be at the least (km)?"],
  {"a": "city", "b": "city"}, _s_unc, _unc_dist("min"), "Answer with a number in km.")
T("uncertainty.max_distance", "geo_distance",
  ["The positions of {a} and {b} are each known only to within {e} km (geodesic radius). What is the largest possible distance between them, in km?",
   "If {a} and {b} may each be anywhere within {e} km of their recorded points, how far apart could they be at most (km)?"],
  {"a": "city", "b": "city"}, _s_unc, _unc_dist("max"), "Answer with a number in km.")


def _could_within(ctx, b):
    d = d_km(ctx, b["ids"]["a"], b["ids"]["b"])
    e, r = b["params"]["e"], b["params"]["r"]
    if tie(d - 2 * e, r, 0.02):
        raise Degenerate("on the threshold")
    return Result(d - 2 * e < r, loc_triples(ctx, b["ids"]["a"], b["ids"]["b"]), f"e={e},r={r}")


T("uncertainty.could_be_within", "geo_boolean",
  ["{a} and {b} are each located only to within {e} km. Could they be less than {r} km apart?",
   "Given positional uncertainty of {e} km for both {a} and {b}, is a separation under {r} km possible?"],
  {"a": "city", "b": "city"},
  lambda ctx, rng: with_params(_s_unc(ctx, rng), r=[50, 100, 200, 400][int(rng.integers(4))]), _could_within, I_BOOL)


def geodesic_circle_area_km2(lon, lat, r_km, n=720) -> float:
    """Area (km^2) of the geodesic disc of radius ``r_km`` around a point: the WGS84 polygon of
    ``n`` geodesic destination points (``Geod.fwd``) measured by ``Geod.polygon_area_perimeter``."""
    az = np.arange(n) * 360.0 / n
    lo, la, _ = GEOD.fwd(np.full(n, lon), np.full(n, lat), az, np.full(n, r_km * 1000.0))
    area, _ = GEOD.polygon_area_perimeter(lo, la)
    return abs(area) / 1e6


def _buffer_area(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    return Result(geodesic_circle_area_km2(lon, lat, b["params"]["r"]), loc_triples(ctx, b["ids"]["a"]))


T("uncertainty.buffer_area", "geo_area",
  ["What is the area of the geodesic buffer of radius {r} km around {a}, in km²?",
   "All points within {r} km (geodesic) of {a} form a region. How large is it in square kilometres?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=int(rng.integers(5, 2001))),
  _buffer_area, I_AREA)


def _rounding_error(ctx, b):
    lon, lat = ctx.ll(b["ids"]["a"])
    p = b["params"]["p"]
    h = 0.5 * 10.0 ** (-p)
    la0, lo0 = round(lat, p), round(lon, p)
    corners = [(lo0 + sx * h, la0 + sy * h) for sx in (-1, 1) for sy in (-1, 1)]
    d = max(float(geod_km(lo0, la0, x, y)) for x, y in corners) * 1000.0
    return Result(d, loc_triples(ctx, b["ids"]["a"]), f"p={p}", {"unit": "m"},
                  {"lat_r": f"{la0:.{p}f}", "lon_r": f"{lo0:.{p}f}"})


T("uncertainty.rounding_error", "geo_distance",
  ["The coordinates of {a} are given rounded to {p} decimal places as ({lat_r}, {lon_r}). What is the largest possible distance, in metres, between the true point and the rounded one?",
   "{a} is recorded as lat {lat_r}, lon {lon_r} (both rounded to {p} decimals). How far in metres can the true location be from this point at most?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), p=int(rng.integers(1, 5)), unit="metres"),
  _rounding_error, "Answer with a number in metres.")


def _gh_error(ctx, b):
    from ..spatial.geo import geohash_bbox, geohash_encode
    lon, lat = ctx.ll(b["ids"]["a"])
    p = b["params"]["p"]
    gh = geohash_encode(lat, lon, p)
    bb = geohash_bbox(gh)
    corners = [(x, y) for x in (bb.west, bb.east) for y in (bb.south, bb.north)]
    d = max(float(geod_km(lon, lat, x, y)) for x, y in corners) * 1000.0
    return Result(d, loc_triples(ctx, b["ids"]["a"]) + [[b["ids"]["a"], f"geohash{p}", gh]], f"p={p}", {"unit": "m"})


T("uncertainty.geohash_error", "geo_distance",
  ["If {a} is stored only as its precision-{p} geohash, how far (metres) can a point of that cell be from {a}'s true location at most?",
   "What is the largest geodesic distance in metres from {a} to any corner of its {p}-character geohash cell?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), p=int(rng.integers(4, 9))), _gh_error,
  "Answer with a number in metres.")


# ================================================================================ nearest
def _nearest_city(ctx, b):
    a = b["ids"]["a"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.nearest(lon, lat, 2, exclude=ctx.city_index[a])
    if tie(d[0], d[1], 0.02) or d[0] < 0.5:
        raise Degenerate("tie")
    win = str(ctx.city_ids[idx[0]])
    name = ctx._names.get(win)
    if name is None:
        raise Degenerate("ambiguous name")
    return Result(name, loc_triples(ctx, a, win, str(ctx.city_ids[idx[1]])), "", {"aliases": ctx.alias_spec([win])})


T("nearest.city", "geo_entity",
  ["Which GeoNames place of at least 15,000 inhabitants is nearest to {a}?",
   "What is the closest other city (population 15,000 or more, geodesic distance) to {a}?"],
  {"a": "city"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _nearest_city, I_NAME)


def _knn(ctx, b):
    a, k = b["ids"]["a"], b["params"]["k"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.nearest(lon, lat, k + 1, exclude=ctx.city_index[a])
    if any(tie(d[i], d[i + 1], 0.01) for i in range(k)) or d[0] < 0.5:
        raise Degenerate("tie")
    win = [str(ctx.city_ids[i]) for i in idx[:k]]
    if any(ctx._names.get(w) is None for w in win):
        raise Degenerate("ambiguous name")
    return Result([ctx.display(w) for w in win], loc_triples(ctx, a, *win), f"k={k}", {"aliases": ctx.alias_spec(win)})


T("nearest.knn", "geo_ranked",
  ["List the {k} places of at least 15,000 inhabitants nearest to {a}, nearest first.",
   "Which {k} cities (population 15,000 or more) are closest to {a}? Order them by geodesic distance, nearest first."],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), k=int(rng.integers(3, 6))), _knn, I_RANK)


def _nearest_dist(ctx, b):
    a = b["ids"]["a"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.nearest(lon, lat, 1, exclude=ctx.city_index[a])
    if d[0] < 0.5:
        raise Degenerate("duplicate point")
    return Result(float(d[0]), loc_triples(ctx, a, str(ctx.city_ids[idx[0]])), "", {"unit": "km"})


T("nearest.distance", "geo_distance",
  ["How far is {a} from the nearest other place of at least 15,000 inhabitants, in km?",
   "What is the geodesic distance in km from {a} to its nearest neighbouring city (population 15,000 or more)?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), unit="km"), _nearest_dist, I_KM)


def _nearest_capital(ctx, b):
    a = b["ids"]["a"]
    lon, lat = ctx.ll(a)
    caps = np.flatnonzero(ctx.cities["capital"].to_numpy())
    caps = caps[caps != ctx.city_index[a]]
    d = geod_km(np.full(len(caps), lon), np.full(len(caps), lat), ctx.lon[caps], ctx.lat[caps])
    o = np.argsort(d, kind="stable")
    if tie(d[o[0]], d[o[1]], 0.02):
        raise Degenerate("tie")
    win = str(ctx.city_ids[caps[o[0]]])
    return Result(ctx.display(win), loc_triples(ctx, a, win) + [[win, "gn:capitalOf", ctx.city(win)["iso3"]]], "",
                  {"aliases": ctx.alias_spec([win])})


T("nearest.capital", "geo_entity",
  ["Which national capital (other than {a} itself) is nearest to {a}?",
   "What is the closest national capital city to {a}, by geodesic distance (not counting {a})?"],
  {"a": "city"}, lambda ctx, rng: ids(a=ctx.pick_major(rng)[0]), _nearest_capital, I_NAME)


def _nearest_bigger(ctx, b):
    a, p = b["ids"]["a"], b["params"]["pop"]
    lon, lat = ctx.ll(a)
    big = np.flatnonzero(ctx.pop >= p)
    big = big[big != ctx.city_index[a]]
    d = geod_km(np.full(len(big), lon), np.full(len(big), lat), ctx.lon[big], ctx.lat[big])
    o = np.argsort(d, kind="stable")
    if tie(d[o[0]], d[o[1]], 0.02):
        raise Degenerate("tie")
    win = str(ctx.city_ids[big[o[0]]])
    if ctx._names.get(win) is None:
        raise Degenerate("ambiguous name")
    return Result(ctx.display(win), loc_triples(ctx, a, win) + [[win, "gn:population", int(ctx.city(win)["population"])]],
                  f"pop={p}", {"aliases": ctx.alias_spec([win])})


T("nearest.larger_city", "geo_entity",
  ["Which city with more than {pop_text} inhabitants (other than {a}) is nearest to {a}?",
   "What is the nearest city of over {pop_text} people to {a} (excluding {a} itself)?"],
  {"a": "city"},
  lambda ctx, rng: (lambda p: with_params(ids(a=ctx.pick_major(rng)[0]), pop=p, pop_text=f"{p:,}"))(
      [500_000, 1_000_000, 2_000_000][int(rng.integers(3))]),
  _nearest_bigger, I_NAME)


def _net_places(net, kinds=None):
    return [p for p in net.city.places if kinds is None or p.kind in kinds]


def _s_amenity(ctx, rng):
    nets = ctx.networks()
    net = nets[int(rng.integers(len(nets)))]
    lms = _net_places(net, ("landmark",))
    lm = lms[int(rng.integers(len(lms)))]
    kinds = sorted({p.kind for p in net.city.places if p.kind != "landmark"})
    kind = kinds[int(rng.integers(len(kinds)))]
    return {"ids": {"place": f"sim:{net.index}:{lm.name}"}, "params": {"net": net.name, "kind": kind,
                                                                          "kind_plural": plural(kind)},
            "network": net.index}


def _nearest_amenity(ctx, b):
    net = ctx.networks()[b["network"]]
    src = b["ids"]["place"]
    lon, lat = ctx.ll(src)
    cands = _net_places(net, (b["params"]["kind"],))
    d = [float(geod_km(lon, lat, p.lon, p.lat)) for p in cands]
    o = np.argsort(d, kind="stable")
    if len(cands) > 1 and tie(d[o[0]], d[o[1]], 0.03):
        raise Degenerate("tie")
    win = cands[int(o[0])]
    wid = f"sim:{net.index}:{win.name}"
    return Result(win.name, loc_triples(ctx, src, *[f"sim:{net.index}:{p.name}" for p in cands]), "",
                  {"aliases": {win.name: [ctx.display(wid)]}})


T("nearest.amenity", "geo_entity",
  ["In the simulated city of {net}, which {kind} is nearest in straight-line (geodesic) distance to {place}?",
   "Which {kind} of {net} (a simulated city) is closest as the crow flies to {place}?"],
  {"place": "place"}, _s_amenity, _nearest_amenity, I_NAME)


# ================================================================================ aggregation
def _count_within(ctx, b):
    a, r = b["ids"]["a"], b["params"]["r"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, r * 1.02)
    near_edge = np.abs(d - r) <= 0.02 * r
    if near_edge.any():
        raise Degenerate("a city on the circle")
    idx = idx[(d <= r) & (idx != ctx.city_index[a])]
    return Result(int(len(idx)), loc_triples(ctx, a) + [[str(ctx.city_ids[i]), "stsim:withinKm", r] for i in idx[:30]], f"r={r}")


T("aggregation.count_within", "geo_count",
  ["How many other places of at least 15,000 inhabitants lie within {r} km of {a}?",
   "Counting GeoNames cities of 15,000 people or more, how many besides {a} are within {r} km (geodesic) of it?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=[25, 50, 100, 200][int(rng.integers(4))]),
  _count_within, I_COUNT)


def _pop_within(ctx, b):
    a, r = b["ids"]["a"], b["params"]["r"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, r * 1.02)
    if (np.abs(d - r) <= 0.02 * r).any():
        raise Degenerate("a city on the circle")
    idx = idx[d <= r]
    return Result(int(ctx.pop[idx].sum()), [[str(ctx.city_ids[i]), "gn:population", int(ctx.pop[i])] for i in idx[:40]], f"r={r}")


T("aggregation.population_within", "geo_count",
  ["What is the total population of all places of at least 15,000 inhabitants within {r} km of {a}, {a} included (GeoNames figures)?",
   "Summing GeoNames populations, how many people live in the cities (15,000+) within {r} km of {a}, counting {a}?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=[10, 25, 50][int(rng.integers(3))]),
  _pop_within, I_COUNT)


def _mean_dist(ctx, b):
    a = b["ids"]["a"]
    others = [b["ids"][k] for k in ("b", "c", "d")]
    return Result(float(np.mean([d_km(ctx, a, o) for o in others])), loc_triples(ctx, a, *others), "", {"unit": "km"})


T("aggregation.mean_distance", "geo_distance",
  ["What is the mean geodesic distance from {a} to {b}, {c} and {d}, in km?",
   "On average, how far (km, geodesic) is {a} from the three cities {b}, {c} and {d}?"],
  {"a": "city", "b": "city", "c": "city", "d": "city"},
  lambda ctx, rng: (lambda m: ids(a=m[0], b=m[1], c=m[2], d=m[3]))(ctx.pick_major(rng, 4)), _mean_dist, I_KM.replace("{unit}", "km"))


def _largest_within(ctx, b):
    a, r = b["ids"]["a"], b["params"]["r"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, r * 1.02)
    if (np.abs(d - r) <= 0.02 * r).any():
        raise Degenerate("a city on the circle")
    idx = idx[(d <= r) & (idx != ctx.city_index[a])]
    if len(idx) < 2:
        raise Degenerate("fewer than two")
    o = np.argsort(-ctx.pop[idx], kind="stable")
    if ctx.pop[idx[o[0]]] == ctx.pop[idx[o[1]]]:
        raise Degenerate("tie")
    win = str(ctx.city_ids[idx[o[0]]])
    if ctx._names.get(win) is None:
        raise Degenerate("ambiguous name")
    return Result(ctx.display(win), [[str(ctx.city_ids[i]), "gn:population", int(ctx.pop[i])] for i in idx[:40]], f"r={r}",
                  {"aliases": ctx.alias_spec([win])})


T("aggregation.largest_within", "geo_entity",
  ["Which is the most populous place (GeoNames) within {r} km of {a}, not counting {a}?",
   "Among the cities within {r} km of {a} (excluding {a}), which has the largest GeoNames population?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=[50, 100, 200][int(rng.integers(3))]),
  _largest_within, I_NAME)


def _net_within(ctx, b):
    net = ctx.networks()[b["network"]]
    src = b["ids"]["place"]
    lon, lat = ctx.ll(src)
    r = b["params"]["r"]
    cands = _net_places(net, (b["params"]["kind"],))
    d = np.array([float(geod_km(lon, lat, p.lon, p.lat)) * 1000.0 for p in cands])
    if (np.abs(d - r) <= 0.02 * r).any():
        raise Degenerate("on the circle")
    inside = [p for p, x in zip(cands, d) if x <= r]
    return inside, [[src, "geo:asWKT", pt(ctx, src)]] + [[f"sim:{net.index}:{p.name}", "geo:asWKT", f"POINT ({p.lon} {p.lat})"] for p in cands]


def _count_amen(ctx, b):
    inside, tr = _net_within(ctx, b)
    return Result(len(inside), tr, f"r={b['params']['r']}")


def _s_amen_r(ctx, rng):
    b = _s_amenity(ctx, rng)
    b["params"]["r"] = [500, 1000, 1500][int(rng.integers(3))]
    return b


T("aggregation.count_amenities", "geo_count",
  ["How many {kind_plural} of the simulated city {net} lie within {r} m (straight line) of {place}?",
   "In {net} (simulated), count the {kind_plural} no more than {r} metres as the crow flies from {place}."],
  {"place": "place"}, _s_amen_r, _count_amen, I_COUNT)


# ================================================================================ enumeration
def _cities_within(ctx, b):
    a, r = b["ids"]["a"], b["params"]["r"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, r * 1.03)
    if (np.abs(d - r) <= 0.03 * r).any():
        raise Degenerate("a city on the circle")
    idx = idx[(d <= r) & (idx != ctx.city_index[a])]
    win = [str(ctx.city_ids[i]) for i in idx]
    if not win or len(win) > 10 or any(ctx._names.get(w) is None for w in win):
        raise Degenerate("empty, too long or ambiguous")
    return Result([ctx.display(w) for w in win], loc_triples(ctx, a, *win), f"r={r}", {"aliases": ctx.alias_spec(win)})


T("enumeration.cities_within", "geo_entity_set",
  ["List the places of at least 15,000 inhabitants within {r} km of {a}, other than {a}.",
   "Which GeoNames cities (population 15,000+) besides {a} lie within {r} km (geodesic) of it?"],
  {"a": "city"}, lambda ctx, rng: with_params(ids(a=ctx.pick_major(rng)[0]), r=[15, 25, 40][int(rng.integers(3))]),
  _cities_within, I_SET)


def _common_nb(ctx, b):
    a, c = b["ids"]["country"], b["ids"]["country_b"]
    common = sorted(set(ctx.adjacency[iso(a)]) & set(ctx.adjacency[iso(c)]))
    if not common:
        raise Degenerate("empty")
    names = ["ne:" + x for x in common]
    return Result([ctx.display(n) for n in names], _poly_triples(a, c, *names), "", {"aliases": ctx.alias_spec(names)})


T("enumeration.common_neighbours", "geo_entity_set",
  ["Which countries' 1:110m polygons intersect both the polygon of {country} and that of {country_b}?",
   "List the countries whose Natural Earth 1:110m geometry is in contact with both {country} and {country_b}."],
  {"country": "country", "country_b": "country"}, lambda ctx, rng: _s_country_pair(ctx, rng, 0.9), _common_nb, I_SET)


def _amen_list(ctx, b):
    inside, tr = _net_within(ctx, b)
    if not inside:
        raise Degenerate("empty")
    return Result([p.name for p in inside], tr, f"r={b['params']['r']}")


T("enumeration.amenities_within", "geo_entity_set",
  ["List the {kind_plural} of the simulated city {net} within {r} m (straight line) of {place}.",
   "Which {kind_plural} in {net} (simulated) lie no more than {r} metres as the crow flies from {place}?"],
  {"place": "place"}, _s_amen_r, _amen_list, I_SET)


def _top_admin1(ctx, b):
    cc, code = b["params"]["cc"], b["params"]["code"]
    sub = ctx.by_admin1.get((cc, code))
    if sub is None:
        raise Degenerate("no cities")
    if len(sub) < 4 or sub["population"].iloc[2] == sub["population"].iloc[3] or sub["population"].iloc[:3].nunique() < 3:
        raise Degenerate("fewer than four or a tie")
    top = list(sub["id"].iloc[:3])
    if any(ctx._names.get(t) is None for t in top):
        raise Degenerate("ambiguous name")
    return Result([ctx.display(t) for t in top], [[t, "gn:population", int(p)] for t, p in zip(sub["id"].iloc[:4], sub["population"].iloc[:4])],
                  "", {"aliases": ctx.alias_spec(top)})


T("enumeration.top_in_admin1", "geo_ranked",
  ["List the three most populous GeoNames places in {admin1} ({country_name}), largest first.",
   "Which are the three largest cities by GeoNames population in {admin1}, {country_name}? Largest first."],
  {}, _s_admin1, _top_admin1, I_RANK)


def _top_country(ctx, b):
    cc, k = b["params"]["cc"], b["params"]["k"]
    sub = ctx.by_country[cc]
    if len(sub) <= k or sub["population"].iloc[:k + 1].nunique() < k + 1:
        raise Degenerate("too few or a tie")
    top = list(sub["id"].iloc[:k])
    if any(ctx._names.get(t) is None for t in top):
        raise Degenerate("ambiguous name")
    return Result([ctx.display(t) for t in top], [[t, "gn:population", int(p)] for t, p in zip(sub["id"].iloc[:k + 1], sub["population"].iloc[:k + 1])],
                  f"k={k}", {"aliases": ctx.alias_spec(top)})


def _s_top_country(ctx, rng):
    a = ctx.pick_major(rng)[0]
    r = ctx.city(a)
    return {"ids": {}, "params": {"cc": r["iso2"], "country_name": r["country_name"], "k": int(rng.integers(2, 6))}}


T("enumeration.top_in_country", "geo_ranked",
  ["List the {k} most populous GeoNames places of {country_name}, largest first.",
   "Which {k} cities of {country_name} have the largest GeoNames populations? Largest first."],
  {}, _s_top_country, _top_country, I_RANK)


# ================================================================================ routing
def _corner_name(net, node):
    return f"the corner of {net.city.corner(node)}"


def _s_route(ctx, rng):
    nets = ctx.networks()
    net = nets[int(rng.integers(len(nets)))]
    nodes = sorted(net.city.graph.nodes)
    u, v = (int(x) for x in rng.choice(nodes, 2, replace=False))
    return {"ids": {}, "params": {"net": net.name, "u": u, "v": v, "p": _corner_name(net, u), "q": _corner_name(net, v)},
            "network": net.index}


def _route(ctx, b):
    import networkx as nx
    net = ctx.networks()[b["network"]]
    g = net.city.graph
    u, v = b["params"]["u"], b["params"]["v"]
    try:
        path = nx.shortest_path(g, u, v, weight="length_m")
    except nx.NetworkXNoPath:
        raise Degenerate("no path") from None
    if len(path) < 3:
        raise Degenerate("trivial route")
    length = sum(g.edges[a, c]["length_m"] for a, c in zip(path, path[1:]))
    # the route must be unique: the best route avoiding any one of its edges is longer by > 1 %
    # (the graph is never modified: a weight of None hides an edge)
    for a, c in zip(path, path[1:]):
        def w(x, y, d, banned=frozenset((a, c))):
            return None if frozenset((x, y)) == banned else d["length_m"]
        try:
            alt = nx.shortest_path_length(g, u, v, weight=w)
        except nx.NetworkXNoPath:
            alt = math.inf
        if alt <= length * 1.01:
            raise Degenerate("near-tied routes")
    triples = [[f"{net.name}:node{a}", "stsim:street", g.edges[a, c]["street"]] for a, c in zip(path, path[1:])]
    triples += [[f"{net.name}:node{a}-{c}", "stsim:length_m", round(g.edges[a, c]["length_m"], 3)] for a, c in zip(path, path[1:])]
    return net, path, length, triples


def _route_length(ctx, b):
    _, path, length, tr = _route(ctx, b)
    return Result(length, tr, "", {"unit": "m"})


T("routing.length", "geo_distance",
  ["In the simulated city of {net}, how long is the shortest street route from {p} to {q}, in metres?",
   "What is the length in metres of the shortest path along the streets of {net} (simulated) from {p} to {q}?"],
  {}, _s_route, _route_length, "Answer with a number in metres.")


def _route_blocks(ctx, b):
    _, path, _, tr = _route(ctx, b)
    return Result(len(path) - 1, tr)


T("routing.blocks", "geo_count",
  ["How many blocks (street segments between intersections) does the shortest route from {p} to {q} in {net} use?",
   "In the simulated city of {net}, the shortest street route from {p} to {q} runs along how many blocks?"],
  {}, _s_route, _route_blocks, I_COUNT)


def _arrival(ctx, b):
    net, path, _, tr = _route(ctx, b)
    g = net.city.graph
    secs = sum(g.edges[a, c]["length_m"] / (g.edges[a, c]["speed_kmh"] / 3.6) for a, c in zip(path, path[1:]))
    if abs(secs % 60 - 30) < 5:
        raise Degenerate("half a minute: rounding ambiguous")
    dep = datetime.fromisoformat(b["params"]["dep"])
    arr = dep + timedelta(seconds=round(secs / 60.0) * 60)
    return Result(arr.strftime("%Y-%m-%dT%H:%M"), tr + [[f"{net.name}:route", "stsim:travel_s", round(secs, 1)]], "",
                  {}, {"dep_text": dep.strftime("%Y-%m-%d %H:%M")})


T("routing.arrival", "geo_datetime",
  ["In the simulated city of {net}, you leave {p} at {dep_text} and drive the shortest route (by length) to {q} at exactly the speed limits. When do you arrive (to the nearest minute)?",
   "Departing {p} in {net} at {dep_text}, driving at the posted speed limits along the shortest street route to {q}: what is the arrival date and time, rounded to the minute?"],
  {}, lambda ctx, rng: (lambda bb: (bb["params"].update(dep=_rand_dt(rng).isoformat()), bb)[1])(_s_route(ctx, rng)),
  _arrival, I_TIME + " Speed limits: residential 30 km/h, arterial 50 km/h, expressway 80 km/h (each block's class is in the map).")


def _passes(ctx, b):
    net, path, _, tr = _route(ctx, b)
    w = b["params"]["w"]
    return Result(w in path, tr)


def _s_passes(ctx, rng):
    b = _s_route(ctx, rng)
    net = ctx.networks()[b["network"]]
    import networkx as nx
    try:
        path = nx.shortest_path(net.city.graph, b["params"]["u"], b["params"]["v"], weight="length_m")
    except nx.NetworkXNoPath:
        return None
    inner = path[1:-1]
    if inner and rng.random() < 0.5:
        w = int(inner[int(rng.integers(len(inner)))])
    else:
        w = int(rng.choice(sorted(set(net.city.graph.nodes) - set(path))))
    b["params"].update(w=w, wq=_corner_name(net, w))
    return b


T("routing.passes_through", "geo_boolean",
  ["Does the shortest street route from {p} to {q} in the simulated city of {net} pass through {wq}?",
   "In {net} (simulated), is {wq} on the shortest route by length from {p} to {q}?"],
  {}, _s_passes, _passes, I_BOOL)


def _detour(ctx, b):
    net, path, length, tr = _route(ctx, b)
    g = net.city.graph
    a, c = g.nodes[path[0]], g.nodes[path[-1]]
    straight = float(geod_km(a["lon"], a["lat"], c["lon"], c["lat"])) * 1000.0
    return Result(length / straight, tr + [[f"{net.name}:node{path[0]}", "geo:asWKT", f"POINT ({a['lon']} {a['lat']})"],
                                           [f"{net.name}:node{path[-1]}", "geo:asWKT", f"POINT ({c['lon']} {c['lat']})"]])


T("routing.detour_index", "geo_ratio",
  ["In the simulated city of {net}, what is the ratio of the shortest street-route length from {p} to {q} to their straight-line (geodesic) distance?",
   "What is the detour index (route length / geodesic distance) of the shortest street route from {p} to {q} in {net}?"],
  {}, _s_route, _detour, I_RATIO)


def _streets(ctx, b):
    net, path, _, tr = _route(ctx, b)
    legs = net.city.legs(path)
    if len(legs) < 2:
        raise Degenerate("a single street")
    names = [leg["street"] for leg in legs]
    if len(set(names)) != len(names):
        raise Degenerate("a street repeats")
    return Result(names, tr, f"legs={min(len(names), 4)}")


T("routing.streets", "geo_ranked",
  ["Which streets does the shortest route from {p} to {q} in the simulated city of {net} follow, in order?",
   "List, in driving order, the streets of the shortest route by length from {p} to {q} in {net} (simulated)."],
  {}, _s_route, _streets, I_RANK)


def _nearest_by_route(ctx, b):
    import networkx as nx
    net = ctx.networks()[b["network"]]
    g = net.city.graph
    u = b["params"]["u"]
    dist = nx.single_source_dijkstra_path_length(g, u, weight="length_m")
    lms = [p for p in net.city.landmarks() if p.node != u]
    d = np.array([dist.get(p.node, math.inf) for p in lms])
    o = np.argsort(d, kind="stable")
    if tie(d[o[0]], d[o[1]], 0.02):
        raise Degenerate("tie")
    win = lms[int(o[0])]
    return Result(win.name, [[f"sim:{net.index}:{p.name}", "stsim:routeLength_m", round(float(x), 1)] for p, x in zip(lms, d)], "",
                  {"aliases": {win.name: [f"{win.name}, {net.name}"]}})


T("routing.nearest_landmark", "geo_entity",
  ["Which landmark of the simulated city {net} is closest to {p} by shortest street route?",
   "Driving along the streets of {net} (simulated) from {p}, which landmark is nearest by route length?"],
  {}, _s_route, _nearest_by_route, I_NAME)


def network_text(index: int) -> str:
    """The map of simulated city ``index`` that network questions show: its places with
    coordinates, and every block (street segment between two corners) with street name, road
    class and length in metres."""
    from .store import networks
    net = networks()[index]
    g = net.city.graph
    lines = [f"Map of {net.name}, a simulated city (coordinates are lat, lon in degrees).", "Places:"]
    for p in net.city.places:
        where = f" at the corner of {net.city.corner(p.node)}" if p.node is not None else ""
        lines.append(f"- {p.name} ({p.kind}): {p.lat:.6f}, {p.lon:.6f}{where}")
    lines.append("Corners:")
    for n in sorted(g.nodes):
        lines.append(f"- {net.city.corner(n)}: {g.nodes[n]['lat']:.6f}, {g.nodes[n]['lon']:.6f}")
    lines.append("Blocks (two-way):")
    for u, v, d in sorted(g.edges(data=True), key=lambda e: (min(e[0], e[1]), max(e[0], e[1]))):
        lines.append(f"- {net.city.corner(u)} to {net.city.corner(v)}: {d['street']}, {d['road_class']}, {d['length_m']:.1f} m")
    return "\n".join(lines)
