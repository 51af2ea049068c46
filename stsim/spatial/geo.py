"""Geographic primitives on WGS84, thin and explicit wrappers over well-kept libraries.

* geodesics (distance, azimuths, destination point) -- :class:`pyproj.Geod` (Karney's
  algorithm, exact to round-off, including nearly antipodal points);
* azimuth -> 8- or 16-point compass name;
* geohash encode / decode / bounding box / neighbours -- ``pygeohash``;
* H3 v4 cell, parent, children, grid distance, boundary -- ``h3``;
* S2 cell id, token and level -- ``s2sphere``.

Coordinate order: **every function in this module takes and returns (lat, lon)**, in that
order, in degrees (results are :class:`LatLon` named tuples).  Geometry elsewhere in stsim is
(lon, lat); convert with :func:`lonlat`.  Each function validates
its latitude (|lat| <= 90) and longitude (|lon| <= 180 for input, except where it says
otherwise), so the commonest order mistake -- a longitude beyond +-90 passed as latitude --
raises :class:`CoordinateError` instead of silently answering for another place.

Distances are metres on the WGS84 ellipsoid; azimuths are degrees clockwise from north,
normalised to ``[0, 360)``.  Grid encodings are the ones MultiGlobeQA (seed 003, §5.2) finds
models fail on: geohash interleaves longitude and latitude bits; H3 projects onto an
icosahedral hexagon grid; S2 onto the faces of a cube with a Hilbert curve per face.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import h3
import pygeohash
import s2sphere
from pyproj import Geod

_WGS84 = Geod(ellps="WGS84")


class CoordinateError(ValueError):
    """A latitude or longitude out of range (often a (lon, lat) / (lat, lon) mix-up), or an
    invalid cell identifier."""


class LatLon(NamedTuple):
    """A geographic point in degrees, latitude first."""
    lat: float
    lon: float


class Geodesic(NamedTuple):
    """Result of the inverse geodesic problem between two points.

    Attributes:
        distance_m: ellipsoidal distance in metres.
        azimuth: forward azimuth at the first point, degrees clockwise from north in [0, 360).
        back_azimuth: azimuth at the second point pointing back to the first, in [0, 360).
    """
    distance_m: float
    azimuth: float
    back_azimuth: float


class BBox(NamedTuple):
    """A latitude/longitude box in degrees: south <= lat <= north, west <= lon <= east."""
    south: float
    west: float
    north: float
    east: float


def check_lat_lon(lat: float, lon: float, where: str = "point") -> LatLon:
    """Validate and return ``(lat, lon)`` as floats.

    Raises:
        CoordinateError: non-finite values, |lat| > 90 or |lon| > 180; the message suggests
            a swapped order when the pair would be valid the other way round.
    """
    try:
        la, lo = float(lat), float(lon)
    except (TypeError, ValueError):
        raise CoordinateError(f"{where}: latitude and longitude must be numbers, got "
                              f"{lat!r}, {lon!r}") from None
    if not (math.isfinite(la) and math.isfinite(lo)):
        raise CoordinateError(f"{where}: non-finite coordinate ({lat!r}, {lon!r})")
    if abs(la) > 90.0 or abs(lo) > 180.0:
        hint = (" -- looks like (lon, lat) order; this function takes (lat, lon)"
                if abs(lo) <= 90.0 and abs(la) <= 180.0 else "")
        raise CoordinateError(f"{where}: latitude {la} must be in [-90, 90] and longitude {lo} "
                              f"in [-180, 180]{hint}")
    return LatLon(la, lo)


def lonlat(p: LatLon | tuple[float, float]) -> tuple[float, float]:
    """Swap a ``(lat, lon)`` pair to the ``(lon, lat)`` order of shapely / GeoJSON geometry."""
    return (float(p[1]), float(p[0]))


def normalise_lon(lon: float) -> float:
    """Longitude wrapped into ``[-180, 180)`` degrees (e.g. 190 -> -170, 180 -> -180)."""
    return (float(lon) + 180.0) % 360.0 - 180.0


# ------------------------------------------------------------------------------ geodesics
def inverse(lat1: float, lon1: float, lat2: float, lon2: float) -> Geodesic:
    """Shortest geodesic from point 1 to point 2 on WGS84 (pyproj.Geod.inv).

    Azimuths at a pole are those pyproj reports for the given longitude (the meridian of
    ``lon``).

    Raises:
        CoordinateError: a coordinate out of range.
    """
    p1, p2 = check_lat_lon(lat1, lon1, "point 1"), check_lat_lon(lat2, lon2, "point 2")
    az, baz, dist = _WGS84.inv(p1.lon, p1.lat, p2.lon, p2.lat)
    return Geodesic(float(dist), float(az) % 360.0, float(baz) % 360.0)


def distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Geodesic distance in metres between two (lat, lon) points on WGS84."""
    return inverse(lat1, lon1, lat2, lon2).distance_m


def initial_azimuth(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Azimuth in degrees clockwise from north, in [0, 360), of the geodesic from point 1 to
    point 2, at point 1."""
    return inverse(lat1, lon1, lat2, lon2).azimuth


def destination(lat: float, lon: float, azimuth: float, distance: float) -> LatLon:
    """The point reached after ``distance`` metres along the geodesic leaving (lat, lon) at
    ``azimuth`` degrees clockwise from north (direct problem, pyproj.Geod.fwd).

    The returned longitude is wrapped into [-180, 180).

    Raises:
        CoordinateError: start point out of range or non-finite azimuth / distance.
    """
    p = check_lat_lon(lat, lon, "start")
    if not (math.isfinite(azimuth) and math.isfinite(distance)):
        raise CoordinateError(f"azimuth and distance must be finite, got {azimuth!r}, {distance!r}")
    lo, la, _ = _WGS84.fwd(p.lon, p.lat, float(azimuth), float(distance))
    return LatLon(float(la), normalise_lon(lo))


#: 16-point compass names clockwise from north; every second one is a point of COMPASS8.
COMPASS16: tuple[str, ...] = (
    "north", "north-northeast", "northeast", "east-northeast", "east", "east-southeast",
    "southeast", "south-southeast", "south", "south-southwest", "southwest", "west-southwest",
    "west", "west-northwest", "northwest", "north-northwest")


def compass_name(azimuth: float, points: int = 8) -> str:
    """Name of the compass point nearest to ``azimuth`` (degrees clockwise from north).

    Sectors are ``360 / points`` wide and centred on each point; an azimuth exactly on a sector
    boundary goes to the clockwise neighbour (8 points: 22.5 -> northeast, 337.5 -> north).

    Args:
        points: 8 (names as :data:`stsim.answers.COMPASS8`) or 16 (:data:`COMPASS16`).
    Raises:
        ValueError: ``points`` not 8 or 16, or a non-finite azimuth.
    """
    if points not in (8, 16):
        raise ValueError(f"points must be 8 or 16, got {points!r}")
    if not math.isfinite(azimuth):
        raise ValueError(f"azimuth must be finite, got {azimuth!r}")
    width = 360.0 / points
    k = int(math.floor((float(azimuth) % 360.0 + width / 2.0) / width)) % points
    return COMPASS16[k * (16 // points)]


# ------------------------------------------------------------------------------- geohash
_NEIGHBOUR_STEPS = {"north": ("top",), "northeast": ("top", "right"), "east": ("right",),
                    "southeast": ("bottom", "right"), "south": ("bottom",),
                    "southwest": ("bottom", "left"), "west": ("left",),
                    "northwest": ("top", "left")}


def _check_geohash(gh: str) -> str:
    if not isinstance(gh, str) or not gh or not pygeohash.is_valid_geohash(gh.lower()):
        raise CoordinateError(f"{gh!r} is not a geohash (base-32 digits 0-9 b-h j k m n p-z)")
    return gh.lower()


def geohash_encode(lat: float, lon: float, precision: int = 9) -> str:
    """Geohash of (lat, lon) with ``precision`` characters (1-12).

    A point exactly on a cell edge belongs to the cell north / east of it (each bisection sends
    a value equal to the midpoint to the upper half): (0, 0) -> ``s0000``.

    Raises:
        CoordinateError: coordinates out of range; ValueError: precision outside 1-12.
    """
    p = check_lat_lon(lat, lon)
    if not 1 <= int(precision) <= 12:
        raise ValueError(f"geohash precision must be 1-12, got {precision!r}")
    return pygeohash.encode(p.lat, p.lon, precision=int(precision))


def geohash_decode(gh: str) -> LatLon:
    """Centre (lat, lon) of a geohash cell.  Raises :class:`CoordinateError` on a bad hash."""
    c = pygeohash.decode_exactly(_check_geohash(gh))
    return LatLon(float(c.latitude), float(c.longitude))


def geohash_bbox(gh: str) -> BBox:
    """Bounding box (south, west, north, east) of a geohash cell, in degrees."""
    b = pygeohash.get_bounding_box(_check_geohash(gh))
    return BBox(float(b.min_lat), float(b.min_lon), float(b.max_lat), float(b.max_lon))


def geohash_neighbours(gh: str) -> dict[str, str | None]:
    """The eight neighbouring cells of the same precision, keyed by compass point.

    Neighbours wrap across the antimeridian (east of a cell touching +180 is a cell touching
    -180); beyond a pole there is no cell, reported as ``None``.
    """
    gh = _check_geohash(gh)
    out: dict[str, str | None] = {}
    for name, steps in _NEIGHBOUR_STEPS.items():
        cur: str | None = gh
        for step in steps:
            try:
                cur = pygeohash.get_adjacent(cur, step)
            except ValueError:  # beyond a pole
                cur = None
                break
        out[name] = cur
    return out


# ------------------------------------------------------------------------------------ H3
def _check_h3(cell: str) -> str:
    if not isinstance(cell, str) or not h3.is_valid_cell(cell):
        raise CoordinateError(f"{cell!r} is not a valid H3 cell index")
    return cell


def h3_cell(lat: float, lon: float, resolution: int) -> str:
    """H3 (v4) cell index, as a hex string, containing (lat, lon) at ``resolution`` (0-15)."""
    p = check_lat_lon(lat, lon)
    if not 0 <= int(resolution) <= 15:
        raise ValueError(f"H3 resolution must be 0-15, got {resolution!r}")
    return h3.latlng_to_cell(p.lat, p.lon, int(resolution))


def h3_resolution(cell: str) -> int:
    """Resolution (0-15) of an H3 cell."""
    return int(h3.get_resolution(_check_h3(cell)))


def h3_parent(cell: str, resolution: int) -> str:
    """The ancestor of ``cell`` at a coarser (or equal) ``resolution``.

    Raises:
        ValueError: ``resolution`` finer than the cell's own.
    """
    own = h3_resolution(cell)
    if not 0 <= int(resolution) <= own:
        raise ValueError(f"parent resolution must be in 0..{own} for {cell}, got {resolution!r}")
    return h3.cell_to_parent(cell, int(resolution))


def h3_children(cell: str, resolution: int) -> list[str]:
    """Sorted descendants of ``cell`` at a finer ``resolution``: 7 per level for a hexagon,
    6 at the first level below a pentagon."""
    own = h3_resolution(cell)
    if not own <= int(resolution) <= 15:
        raise ValueError(f"child resolution must be in {own}..15 for {cell}, got {resolution!r}")
    return sorted(h3.cell_to_children(cell, int(resolution)))


def h3_grid_distance(a: str, b: str) -> int:
    """Number of grid steps between two cells of the same resolution (h3.grid_distance).

    Raises:
        ValueError: different resolutions, or cells too far apart for H3 to measure (H3
            cannot cross some pentagon distortions).
    """
    if h3_resolution(a) != h3_resolution(b):
        raise ValueError(f"grid distance needs one resolution: {a} is {h3_resolution(a)}, "
                         f"{b} is {h3_resolution(b)}")
    try:
        return int(h3.grid_distance(a, b))
    except h3.H3BaseException as exc:
        raise ValueError(f"H3 cannot measure the grid distance from {a} to {b}: {exc}") from None


def h3_boundary(cell: str) -> list[LatLon]:
    """Vertices of the cell boundary as (lat, lon), in H3's order (counter-clockwise), not
    closed (first vertex not repeated).  Longitudes are in [-180, 180], so a cell straddling
    the antimeridian has vertices of both signs near +-180."""
    return [LatLon(float(la), float(lo)) for la, lo in h3.cell_to_boundary(_check_h3(cell))]


def h3_center(cell: str) -> LatLon:
    """Centre (lat, lon) of an H3 cell."""
    la, lo = h3.cell_to_latlng(_check_h3(cell))
    return LatLon(float(la), float(lo))


# ------------------------------------------------------------------------------------ S2
def _s2_from_token(token: str) -> s2sphere.CellId:
    if not isinstance(token, str) or not token or len(token) > 16 or any(
            ch not in "0123456789abcdef" for ch in token.lower()):
        raise CoordinateError(f"{token!r} is not an S2 token (1-16 hex digits)")
    cid = s2sphere.CellId.from_token(token.lower())
    if not cid.is_valid():
        raise CoordinateError(f"{token!r} is not a valid S2 cell token")
    return cid


def s2_cell_id(lat: float, lon: float, level: int = 30) -> int:
    """64-bit S2 cell id of the level-``level`` (0-30) cell containing (lat, lon)."""
    p = check_lat_lon(lat, lon)
    if not 0 <= int(level) <= 30:
        raise ValueError(f"S2 level must be 0-30, got {level!r}")
    cid = s2sphere.CellId.from_lat_lng(s2sphere.LatLng.from_degrees(p.lat, p.lon))
    return int(cid.parent(int(level)).id())


def s2_token(lat: float, lon: float, level: int = 30) -> str:
    """S2 token (cell id in hex, trailing zeros dropped) of the level-``level`` cell containing
    (lat, lon); e.g. the six level-0 face cells are ``1 3 5 7 9 b``."""
    return s2sphere.CellId(s2_cell_id(lat, lon, level)).to_token()


def s2_level(token: str) -> int:
    """Level (0-30) of the S2 cell named by ``token``."""
    return int(_s2_from_token(token).level())


def s2_face(token: str) -> int:
    """Cube face (0-5) of an S2 cell: 0 +x (lon 0), 1 +y (lon 90), 2 north pole, 3 -x
    (lon 180), 4 -y (lon -90), 5 south pole."""
    return int(_s2_from_token(token).face())


def s2_center(token: str) -> LatLon:
    """Centre (lat, lon) of the S2 cell named by ``token``."""
    ll = _s2_from_token(token).to_lat_lng()
    return LatLon(float(ll.lat().degrees), float(ll.lng().degrees))
