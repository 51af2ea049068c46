"""Geographic primitives (stsim.spatial.geo) against independently known values: closed forms
on the WGS84 ellipsoid, numerically integrated meridian arcs, hand-derived geohash bit
interleavings, published H3 examples and the S2 cube-face layout."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from stsim.spatial import geo
from stsim.spatial.geo import CoordinateError

A = 6378137.0                     # WGS84 semi-major axis (m)
F = 1 / 298.257223563             # WGS84 flattening
E2 = F * (2 - F)
DEG_EQUATOR = A * math.pi / 180   # metres per degree of longitude along the equator


def meridian_arc(lat1, lat2):
    """Meridian arc length in metres between two latitudes (degrees), by integrating the
    meridional radius of curvature M = a (1 - e^2) / (1 - e^2 sin^2 phi)^1.5."""
    m = lambda phi: A * (1 - E2) / (1 - E2 * math.sin(phi) ** 2) ** 1.5
    return quad(m, math.radians(lat1), math.radians(lat2), epsabs=1e-6)[0]


QUARTER_MERIDIAN = 10001965.7293  # m, the published WGS84 value


# --------------------------------------------------------------------------- geodesics
def test_meridian_integral_matches_published_quarter_meridian():
    assert meridian_arc(0, 90) == pytest.approx(QUARTER_MERIDIAN, abs=1e-3)


def test_equatorial_arc_is_exact():
    g = geo.inverse(0, 0, 0, 179)
    assert g.distance_m == pytest.approx(179 * DEG_EQUATOR, abs=1e-3)
    assert g.azimuth == pytest.approx(90) and g.back_azimuth == pytest.approx(270)


def test_antipodal_equatorial_points_go_over_the_pole():
    g = geo.inverse(0, 0, 0, 180)
    assert g.distance_m == pytest.approx(2 * QUARTER_MERIDIAN, abs=1e-3)
    assert g.azimuth in (pytest.approx(0), pytest.approx(180))


def test_nearly_antipodal_geodesic_leaves_the_equator():
    # beyond (1 - f) * 180 = 179.4 degrees of longitude the equator is no longer shortest
    g = geo.inverse(0, 0, 0, 179.5)
    assert g.distance_m < 179.5 * DEG_EQUATOR - 500  # about 987 m shorter
    assert 0 < g.azimuth < 90 - 1
    back = geo.destination(0, 0, g.azimuth, g.distance_m)
    assert back.lat == pytest.approx(0, abs=1e-8) and back.lon == pytest.approx(179.5, abs=1e-8)
    mirror = geo.inverse(0, 0, 0, -179.5)
    assert mirror.distance_m == pytest.approx(g.distance_m) and mirror.azimuth == pytest.approx(360 - g.azimuth)


@settings(max_examples=40, deadline=None)
@given(st.floats(-60, 60), st.floats(-180, 180), st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_direct_inverts_inverse_near_antipodes(lat, lon, dlat, dlon):
    lat2, lon2 = -lat + dlat, geo.normalise_lon(lon + 180 - dlon)
    g = geo.inverse(lat, lon, lat2, lon2)
    p = geo.destination(lat, lon, g.azimuth, g.distance_m)
    assert p.lat == pytest.approx(lat2, abs=1e-7)
    if abs(lat2) < 89.9:  # at a pole every longitude is the same point
        assert abs(geo.normalise_lon(p.lon - lon2)) < 1e-7


def test_poles():
    assert geo.distance_m(90, 0, 89, 0) == pytest.approx(meridian_arc(89, 90), abs=1e-3)
    # at a pole the longitude does not matter
    assert geo.distance_m(90, 0, 89, 123) == pytest.approx(meridian_arc(89, 90), abs=1e-3)
    assert geo.distance_m(90, 45, -90, -100) == pytest.approx(2 * QUARTER_MERIDIAN, abs=1e-3)
    p = geo.destination(-90, 0, 0, meridian_arc(-90, -89))
    assert p.lat == pytest.approx(-89, abs=1e-9)


def test_antimeridian():
    g = geo.inverse(0, 179.5, 0, -179.5)
    assert g.distance_m == pytest.approx(DEG_EQUATOR, abs=1e-3)
    assert g.azimuth == pytest.approx(90)
    p = geo.destination(0, 179.9, 90, 0.2 * DEG_EQUATOR)
    assert p.lon == pytest.approx(-179.9, abs=1e-9) and p.lat == pytest.approx(0, abs=1e-12)
    assert geo.normalise_lon(180) == -180 and geo.normalise_lon(190) == -170


def test_compass_names():
    assert [geo.compass_name(a) for a in (0, 22.49, 22.5, 90, 180, 337.49, 337.5, 360, -45)] == \
        ["north", "north", "northeast", "east", "south", "northwest", "north", "north", "northwest"]
    assert geo.compass_name(11.25, 16) == "north-northeast"
    assert geo.compass_name(11.24, 16) == "north"
    assert geo.compass_name(348.75, 16) == "north" and geo.compass_name(348.74, 16) == "north-northwest"
    assert geo.compass_name(202.5, 16) == "south-southwest"
    # due east along the equator
    assert geo.compass_name(geo.initial_azimuth(0, 10, 0, 20)) == "east"
    with pytest.raises(ValueError):
        geo.compass_name(10, 4)


# ------------------------------------------------------------------------ order mistakes
def test_lon_lat_order_mistake_is_caught():
    sydney_lat, sydney_lon = -33.8688, 151.2093
    geo.distance_m(sydney_lat, sydney_lon, 0, 0)
    for call in (lambda: geo.distance_m(sydney_lon, sydney_lat, 0, 0),
                 lambda: geo.geohash_encode(sydney_lon, sydney_lat),
                 lambda: geo.h3_cell(sydney_lon, sydney_lat, 5),
                 lambda: geo.s2_token(sydney_lon, sydney_lat, 10),
                 lambda: geo.destination(sydney_lon, sydney_lat, 0, 10)):
        with pytest.raises(CoordinateError, match=r"looks like \(lon, lat\)"):
            call()
    # where both orders are in range, the answer differs, so a swap shows in the result
    assert geo.geohash_encode(42.605, -5.603, 5) == "ezs42"
    assert geo.geohash_encode(-5.603, 42.605, 5) != "ezs42"
    assert geo.lonlat(geo.LatLon(1.0, 2.0)) == (2.0, 1.0)
    with pytest.raises(CoordinateError):
        geo.distance_m(float("nan"), 0, 0, 0)


# ------------------------------------------------------------------------------- geohash
def test_geohash_known_values():
    assert geo.geohash_encode(42.605, -5.603, 5) == "ezs42"          # the classic example
    c = geo.geohash_decode("ezs42")
    assert c.lat == pytest.approx(42.605, abs=0.022) and c.lon == pytest.approx(-5.603, abs=0.022)
    # 5 characters = 13 longitude bits and 12 latitude bits: 360/2^13 = 180/2^12 degrees
    assert geo.geohash_bbox("s0000") == (0.0, 0.0, 180 / 2 ** 12, 360 / 2 ** 13)
    b = geo.geohash_bbox("ezs42")
    assert b.south <= c.lat <= b.north and b.west <= c.lon <= b.east


def test_geohash_cell_boundary_tie_goes_north_east():
    assert geo.geohash_encode(0, 0, 5) == "s0000"        # bits 1,1,0,0,0 -> 24 -> 's'
    assert geo.geohash_encode(-1e-9, -1e-9, 5) == "7zzzz"
    edge = geo.geohash_bbox("ezs42").north
    assert geo.geohash_encode(edge, -5.603, 5) == geo.geohash_neighbours("ezs42")["north"]


def test_geohash_corners_of_the_world():
    # every bisection puts a value equal to the upper bound in the upper half: all bits 1
    assert geo.geohash_encode(90, 180, 5) == "zzzzz"
    assert geo.geohash_encode(-90, -180, 5) == "00000"
    assert geo.geohash_bbox("zzzzz").north == 90 and geo.geohash_bbox("00000").west == -180


def test_geohash_neighbours_hand_derived():
    n = geo.geohash_neighbours("s0000")
    # east/north: increment the last longitude/latitude bits; west/south: borrow across 0
    assert (n["east"], n["north"], n["west"], n["south"]) == ("s0001", "s0002", "ebpbp", "kpbpb")
    assert n["southwest"] == "7zzzz"


def test_geohash_neighbours_wrap_antimeridian_and_stop_at_poles():
    east_edge = geo.geohash_encode(0.01, 179.99, 5)
    assert geo.geohash_neighbours(east_edge)["east"] == geo.geohash_encode(0.01, -179.99, 5)
    top = geo.geohash_neighbours(geo.geohash_encode(89.99, 10, 5))
    assert top["north"] is None and top["northeast"] is None and top["south"] is not None
    with pytest.raises(CoordinateError):
        geo.geohash_decode("ai")  # 'a' and 'i' are not geohash digits


# ------------------------------------------------------------------------------------ H3
def test_h3_published_example():
    cell = geo.h3_cell(37.7752702151959, -122.418307270836, 9)
    assert cell == "8928308280fffff"
    assert geo.h3_resolution(cell) == 9
    parent = geo.h3_parent(cell, 8)
    assert geo.h3_resolution(parent) == 8 and cell in geo.h3_children(parent, 9)
    assert len(geo.h3_children(cell, 10)) == 7 and len(geo.h3_children(cell, 11)) == 49
    assert len(geo.h3_boundary(cell)) == 6
    with pytest.raises(ValueError):
        geo.h3_parent(cell, 10)


def test_h3_pentagon_has_five_sides_and_six_children():
    import h3
    pent = sorted(h3.get_pentagons(0))[0]
    assert len(geo.h3_boundary(pent)) == 5
    assert len(geo.h3_children(pent, 1)) == 6


def test_h3_cells_across_the_antimeridian():
    # at resolution 5 one cell straddles +-180: both points fall in it
    a, b = geo.h3_cell(0, 179.99, 5), geo.h3_cell(0, -179.99, 5)
    assert a == b and geo.h3_grid_distance(a, b) == 0
    lons = [p.lon for p in geo.h3_boundary(a)]
    assert min(lons) < -179 and max(lons) > 179          # vertices on both sides
    # at resolution 8 the points 0.002 degrees either side fall in two neighbouring cells; one
    # of them has a vertex west of the antimeridian; centres about sqrt(3) x 0.53 km apart
    a, b = geo.h3_cell(0, 179.998, 8), geo.h3_cell(0, -179.998, 8)
    assert a != b and geo.h3_grid_distance(a, b) == 1
    ca, cb = geo.h3_center(a), geo.h3_center(b)
    assert ca.lon > 179 and cb.lon < -179
    assert 500 < geo.distance_m(ca.lat, ca.lon, cb.lat, cb.lon) < 1500
    with pytest.raises(ValueError, match="one resolution"):
        geo.h3_grid_distance(geo.h3_cell(0, 0, 5), geo.h3_cell(0, 0, 6))
    with pytest.raises(CoordinateError):
        geo.h3_resolution("not-a-cell")


def test_h3_poles():
    n, s = geo.h3_cell(90, 0, 3), geo.h3_cell(-90, 0, 3)
    assert geo.h3_center(n).lat > 88 and geo.h3_center(s).lat < -88


# ------------------------------------------------------------------------------------ S2
@pytest.mark.parametrize("lat, lon, face, token", [
    (0, 0, 0, "1"), (0, 90, 1, "3"), (90, 0, 2, "5"), (0, 180, 3, "7"), (0, -180, 3, "7"),
    (0, -90, 4, "9"), (-90, 0, 5, "b"), (30, 60, 1, "3"), (45, 45, 2, "5")])
def test_s2_faces(lat, lon, face, token):
    # face k's level-0 id is (2k + 1) << 60, whose token is the single hex digit 2k + 1
    # (faces +x, +y, +z, -x, -y, -z: the largest |coordinate| of the unit vector wins);
    # (30, 60): y = 0.75 > z = 0.5 > x; (45, 45): z = 0.71 > x = y = 0.5
    assert geo.s2_token(lat, lon, 0) == token
    assert geo.s2_face(token) == face


def test_s2_levels_from_the_lowest_set_bit():
    # level = (60 - position of the lowest set bit) / 2: 0x89c25 << 44 -> bit 44 -> level 8
    assert geo.s2_level("89c25") == 8
    assert geo.s2_level("14") == 1 and geo.s2_level("1") == 0
    tok = geo.s2_token(51.4779, -0.0015, 12)
    assert geo.s2_level(tok) == 12
    assert geo.s2_center("5").lat == pytest.approx(90)
    with pytest.raises(CoordinateError):
        geo.s2_level("xyz")


def test_s2_cell_contains_its_descendants():
    leaf = geo.s2_cell_id(48.8584, 2.2945, 30)
    for level in (0, 5, 10, 20):
        cid = geo.s2_cell_id(48.8584, 2.2945, level)
        lsb = cid & -cid
        assert cid - lsb < leaf < cid + lsb   # the id range a cell covers
    centre = geo.s2_center(geo.s2_token(48.8584, 2.2945, 20))
    assert geo.distance_m(centre.lat, centre.lon, 48.8584, 2.2945) < 20  # level-20 cells ~ 10 m
