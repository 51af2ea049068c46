"""The compass direction model (stsim.spatial.compass): vectors, turning, sides, roads."""
import math

import pytest

from stsim.spatial.compass import (COMPASS8, SPELLING, DirectionError, azimuth_of,
                                   direction_of_feature, is_perpendicular, nearest_point,
                                   opposite, perpendiculars, road_axis, rotate, turn_around,
                                   vector_of)


def test_vectors_are_unit_and_point_the_right_way():
    assert vector_of("north") == (0.0, 1.0)
    assert vector_of("east") == (1.0, 0.0)
    assert vector_of("southwest") == pytest.approx((-math.sqrt(0.5), -math.sqrt(0.5)))
    for d in COMPASS8:
        assert math.hypot(*vector_of(d)) == pytest.approx(1.0)
        assert nearest_point(*vector_of(d)) == d


def test_azimuths_and_spelling():
    assert [azimuth_of(d) for d in ("north", "east", "south", "west")] == [0, 90, 180, 270]
    assert azimuth_of("northwest") == 315
    assert SPELLING["northeast"] == "north-east" and SPELLING["south"] == "south"


def test_turning_around_and_opposites():
    assert turn_around("south") == "north"
    assert opposite("northeast") == "southwest"
    assert all(opposite(opposite(d)) == d for d in COMPASS8)
    assert rotate("northwest", 1) == "north" and rotate("north", -3) == "southwest"


def test_perpendiculars_are_the_two_sides():
    assert set(perpendiculars("south")) == {"east", "west"}
    assert set(perpendiculars("northeast")) == {"southeast", "northwest"}
    for d in COMPASS8:
        for s in perpendiculars(d):
            assert is_perpendicular(d, s)
        assert not is_perpendicular(d, d) and not is_perpendicular(d, rotate(d, 1))


def test_nearest_point_sector_boundaries():
    # 22.5 degrees is the north / northeast boundary: goes clockwise, to northeast
    a = math.radians(22.5)
    assert nearest_point(math.sin(a), math.cos(a)) == "northeast"
    a = math.radians(22.4)
    assert nearest_point(math.sin(a), math.cos(a)) == "north"
    with pytest.raises(DirectionError):
        nearest_point(0.0, 0.0)


def test_feature_directions_hand_worked():
    # east shore of a lake: the lake is west, whichever way one walks along it
    assert direction_of_feature("south", "east", "inside") == "west"
    assert direction_of_feature(turn_around("south"), "east", "inside") == "west"
    # east shore of an island: the sea is east
    assert direction_of_feature("south", "east", "outside") == "east"
    # north-west side, heading south-west: the inside is south-east
    assert direction_of_feature("southwest", "northwest", "inside") == "southeast"


def test_feature_direction_rejects_impossible_scenes():
    with pytest.raises(DirectionError, match="perpendicular"):
        direction_of_feature("north", "north", "inside")
    with pytest.raises(DirectionError, match="target"):
        direction_of_feature("north", "east", "beside")
    with pytest.raises(DirectionError, match="compass points"):
        direction_of_feature("up", "east", "inside")


def test_road_axis():
    assert road_axis("east", "west") == pytest.approx((-1.0, 0.0))
    assert road_axis("southwest", "northeast") == pytest.approx((math.sqrt(0.5), math.sqrt(0.5)))
    with pytest.raises(DirectionError, match="opposite"):
        road_axis("north", "east")
