"""Replies at the edges of the geoqa answer formats: each is read as its writer meant it, or
is a format failure naming why (never a silent mis-reading).  Every input here was read
wrongly before the fix its test names (docs/geoqa.md, "What the reader reads and refuses")."""
from __future__ import annotations

import pytest

from stsim.answers import ParseError, check_value, parse_answer


def read(text, fmt, spec=None):
    return parse_answer(text, task_id="t", step=None, answer_format=fmt, rubric="geoqa", spec=spec or {})


@pytest.mark.parametrize("fmt, reply, why", [
    ("geo_cell", '{"answer": 123, "note": ""}', "JSON number 123"),     # was read as the cell '123'
    ("geo_cell", '{"answer": 8.5e3, "note": ""}', "JSON number"),
    ("geo_entity", '{"answer": true, "note": ""}', "JSON boolean true"),  # was the name 'True'
    ("geo_compass", '{"answer": 45, "note": ""}', "JSON number 45"),
    ("geo_entity_set", '{"answer": ["Oslo", 7], "note": ""}', "JSON number 7"),  # was names 'Oslo', '7'
    ("geo_count", '{"answer": true, "note": ""}', "JSON boolean true"),
])
def test_a_structured_answer_of_the_wrong_json_type_is_a_format_failure(fmt, reply, why):
    a = read(reply, fmt)
    assert a.status == "format_failure" and a.value is None and why in a.detail, a
    # the same values as JSON strings (the schema's type) are read
    assert read('{"answer": "u4pruyd", "note": ""}', "geo_cell").value == "u4pruyd"
    assert read('{"answer": "0123", "note": ""}', "geo_cell").value == "0123"
    assert read('{"answer": ["Oslo", "Bergen"], "note": ""}', "geo_entity_set").value == ["Bergen", "Oslo"]
    assert read('{"answer": 12, "note": ""}', "geo_count").value == 12
    assert read('{"answer": true, "note": ""}', "geo_boolean").value is True


def test_a_typed_cell_id_must_be_a_string():
    # an answers file's "value": 123 for a geohash question was accepted as the cell '123'
    with pytest.raises(ParseError, match="a cell id is a string, got int"):
        check_value("geo_cell", 123, {}, what="answer")
    assert check_value("geo_cell", "0123", {}, what="answer") == "0123"


@pytest.mark.parametrize("fmt, value, what", [
    ("geo_distance", -12.0, "a distance"), ("geo_area", -5.0, "an area"),
    ("geo_ratio", -0.4, "a ratio"), ("geo_distance", -1e-9, "a distance"),
])
def test_a_negative_distance_area_or_ratio_is_refused(fmt, value, what):
    # typed values (answers-file "value") and replies were accepted and scored by their
    # distance from the gold: -12 km against a gold of 12 km had EM 0 but NE < 1 nearby
    with pytest.raises(ParseError, match=f"{what} cannot be negative"):
        check_value(fmt, value, {}, what="answer")
    a = read(f"Answer: {value!r} {'km' if fmt == 'geo_distance' else ''}", fmt, {"unit": "km"})
    assert a.status == "format_failure" and "cannot be negative" in a.detail
    assert check_value(fmt, 0.0, {}, what="answer") == 0.0
    assert check_value(fmt, -0.0, {}, what="answer") == 0.0
    # an azimuth may be written negative (west of north): -90 is 270
    assert check_value("geo_angle", -90.0, {}, what="answer") == 270.0
    # gold values are checked by the same rule
    with pytest.raises(ParseError):
        check_value(fmt, value, {}, what="gold")
