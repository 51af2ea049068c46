"""The 15 geoqa answer formats: parse, EM and NE against hand-derived values (seed 003 §4)."""
from __future__ import annotations

import pytest

from stsim.answers import FORMATS, ParseError, check_gold, get_format, parse_answer
from stsim.answers_geo import GEO_FORMATS, geoqa_rubric


def score(fmt, text, gold, spec=None):
    f = get_format(fmt)
    return f.em_ne(f.normalise(f.parse(text, spec), spec), f.check(gold, spec), spec)


def test_fifteen_formats_registered():
    assert len(GEO_FORMATS) == 15
    assert all(f.name in FORMATS for f in GEO_FORMATS)


def test_boolean_and_count():
    assert score("geo_boolean", "Yes.", True) == (1, 0.0)
    assert score("geo_boolean", "false", True) == (0, 1.0)
    # count: tau = max(1, 0.1 * 20) = 2; off by one -> NE 0.5, EM 0
    assert score("geo_count", "19", 20) == (0, 0.5)
    assert score("geo_count", "1,234 cities", 1234) == (1, 0.0)
    assert score("geo_count", "3", 1) == (0, 1.0)
    with pytest.raises(ParseError):
        get_format("geo_count").parse("2.5")


def test_continuous_tolerances():
    # distance: tau = 1 % of 100 km = 1 km; 0.5 km off -> EM 1, NE 0.5
    em, ne = score("geo_distance", "100.5 km", 100.0)
    assert em == 1 and ne == pytest.approx(0.5)
    assert score("geo_distance", "103 km", 100.0) == (0, 1.0)
    em, ne = score("geo_distance", "500,005 m", 500000.0, {"abs_tol": 10.0, "rel_tol": 0.0})
    assert em == 1 and ne == pytest.approx(0.5)
    # area: tau = 2 % of 1000 = 20; 10 off -> 0.5
    em, ne = score("geo_area", "1010 km2", 1000.0)
    assert em == 1 and ne == pytest.approx(0.5)
    # ratio: tau = max(0.02 * 0.1, 0.005) = 0.005; 0.003 off -> 0.6
    em, ne = score("geo_ratio", "0.103", 0.1)
    assert em == 1 and ne == pytest.approx(0.6)
    # angle: circular, 359.5 vs 0.3 is 0.8 degrees apart
    em, ne = score("geo_angle", "0.3°", 359.5)
    assert em == 1 and ne == pytest.approx(0.8)
    assert score("geo_angle", "180", 0.0) == (0, 1.0)


def test_point_geodesic_tolerance():
    # 0.005 degrees of longitude on the equator = a * pi / 180 * 0.005 = 556.6 m (WGS84 a)
    em, ne = score("geo_point", "0, 0.005", [0.0, 0.0])
    assert em == 1 and ne == pytest.approx(6378137.0 * 3.141592653589793 / 180 * 0.005 / 1000, rel=1e-6)
    assert get_format("geo_point").parse("33.9 S, 151.2 E") == [-33.9, 151.2]
    assert get_format("geo_point").parse("151.2 E, 33.9 S") == [-33.9, 151.2]
    assert score("geo_point", "1, 0", [0.0, 0.0]) == (0, 1.0)


def test_bbox_and_polygon_iou():
    # boxes [0,0,2,2] and [1,0,3,2]: intersection 2, union 6 -> IoU 1/3
    em, ne = score("geo_bbox", "[1, 0, 3, 2]", [0, 0, 2, 2])
    assert em == 0 and ne == pytest.approx(2 / 3)
    # squares offset by 0.5: intersection 3, union 5 -> IoU 0.6 >= 0.5
    em, ne = score("geo_polygon", "POLYGON ((0.5 0, 2.5 0, 2.5 2, 0.5 2, 0.5 0))",
                   "POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))")
    assert em == 1 and ne == pytest.approx(0.4)
    with pytest.raises(ParseError):  # a bow tie is not a valid polygon
        get_format("geo_polygon").parse("POLYGON ((0 0, 1 1, 1 0, 0 1, 0 0))")


def test_compass_steps():
    assert score("geo_compass", "east", "NE") == (0, 0.25)
    assert score("geo_compass", "North-East", "NE") == (1, 0.0)
    assert score("geo_compass", "north-northeast", "N", {"points": 16}) == (0, 0.125)
    assert score("geo_compass", "S", "N", {"points": 16}) == (0, 1.0)
    with pytest.raises(ParseError):
        score("geo_compass", "NNE", "N")  # not an 8-point direction


def test_entity_sets_and_ranked_lists():
    assert score("geo_entity", "sao paulo", "São Paulo") == (1, 0.0)
    spec = {"aliases": {"Munich": ["München", "Munich, Germany"]}}
    assert score("geo_entity", "München", "Munich", spec) == (1, 0.0)
    assert score("geo_entity", "Berlin", "Munich", spec) == (0, 1.0)
    em, ne = score("geo_entity_set", "A; B; D", ["A", "B", "C"])  # Jaccard 2/4
    assert em == 0 and ne == pytest.approx(0.5)
    assert score("geo_entity_set", "none", []) == (1, 0.0)
    em, ne = score("geo_ranked", "B; A; C", ["A", "B", "C"])  # one discordant pair of 3
    assert em == 0 and ne == pytest.approx(1 / 3)
    em, ne = score("geo_ranked", "A; B", ["A", "B", "C"])  # Jaccard 2/3, order right
    assert ne == pytest.approx(1 / 3)
    assert score("geo_ranked", "1. A\n2. B\n3. C", ["A", "B", "C"]) == (1, 0.0)


def test_cells_and_datetimes():
    assert score("geo_cell", "0x851F8D47FFFFFFF", "851f8d47fffffff") == (1, 0.0)
    assert score("geo_cell", "u281z", "u281y") == (0, 1.0)
    em, ne = score("geo_datetime", "2024-01-01 12:30", "2024-01-01T12:00")
    assert em == 0 and ne == pytest.approx(0.5)
    assert score("geo_datetime", "2024-01-01T12:00:59", "2024-01-01T12:00") == (1, 0.0)


def test_rubric_and_failures():
    assert geoqa_rubric("Let me think.\nAnswer: **yes**") == "yes"
    assert geoqa_rubric('{"answer": [48.1, 11.6]}') == "48.1, 11.6"
    assert geoqa_rubric('{"answer": ["A", "B"]}') == "A; B"
    # a JSON list of one name with a comma stays one name (free text would split it at the comma)
    one = geoqa_rubric('{"answer": ["Ilula, Tanzania"]}')
    fmt = next(f for f in GEO_FORMATS if f.name == "geo_entity_set")
    assert fmt.parse(one) == ["Ilula, Tanzania"]
    assert fmt.parse("Ilula, Tanzania") == ["Ilula", "Tanzania"]  # no task to say otherwise
    # with the task's names, "A, B" that is one of them stays one name, in free text too
    spec = {"aliases": {"Ilula, Tanzania": ["Ilula"], "Iringa, Tanzania": ["Iringa"]}}
    assert fmt.parse("Ilula, Tanzania", spec) == ["Ilula, Tanzania"]
    assert fmt.parse("Iringa, Tanzania, Ilula, Tanzania", spec) == ["Iringa, Tanzania", "Ilula, Tanzania"]
    assert fmt.parse("Ilula, Iringa", spec) == ["Ilula", "Iringa"]
    assert fmt.parse("Ilula, Kenya", spec) == ["Ilula", "Kenya"]
    assert geoqa_rubric("first line\nsecond line") is None
    a = parse_answer("Answer: twelve", task_id="t", step=None, answer_format="geo_count", rubric="geoqa")
    assert a.status == "format_failure"
    a = parse_answer("I cannot answer that.\nSorry", task_id="t", step=None, answer_format="geo_count",
                     rubric="geoqa")
    assert a.status == "refusal"
    a = parse_answer("I cannot determine that.", task_id="t", step=None, answer_format="geo_boolean",
                     rubric="geoqa")
    assert a.status == "refusal"
    a = parse_answer("Answer: \u221233.9, 151.2", task_id="t", step=None, answer_format="geo_point", rubric="geoqa")
    assert a.value == [-33.9, 151.2]  # a Unicode minus is a minus
    a = parse_answer("Yes.", task_id="t", step=None, answer_format="geo_boolean", rubric="geoqa")
    assert (a.status, a.value) == ("ok", True)


def test_check_gold_rejects_bad_golds():
    with pytest.raises(ParseError):
        check_gold("geo_bbox", [2, 0, 1, 1])
    with pytest.raises(ParseError):
        check_gold("geo_count", -1)
    assert check_gold("geo_compass", "ne") == "NE"


@pytest.mark.parametrize("fmt", ["geo_count", "geo_distance", "geo_area", "geo_ratio", "geo_angle",
                                 "geo_point", "geo_bbox"])
@pytest.mark.parametrize("huge", ["9" * 400, "1e400", "-" + "9" * 5000])
def test_numbers_too_large_for_a_float_are_format_failures(fmt, huge):
    # 'Answer: 999...9' (400 digits) on a count question was an OverflowError traceback
    # (int(inf)) that ended `stsim score`; every format reads it as a format failure
    text = {"geo_point": f"{huge}, 1", "geo_bbox": f"{huge}, 1, 2, 3"}.get(fmt, huge)
    with pytest.raises(ParseError, match="too large"):
        get_format(fmt).parse(text, {})
    a = parse_answer(f"Answer: {text}", task_id="t", step=None, answer_format=fmt, rubric="geoqa")
    assert a.status == "format_failure" and "too large" in a.detail


@pytest.mark.parametrize("fmt, text, gold", [
    ("geo_ratio", "0,338", 0.338),          # was read as 338 (a thousands separator)
    ("geo_distance", "0,500 km", 0.5),
    ("geo_count", "0,003", 3),              # was read as 3: correct
    ("geo_ratio", "6579,47", 6579.47),      # already a format failure (two numbers)
])
def test_a_decimal_comma_is_never_read_as_a_thousands_separator(fmt, text, gold):
    # in a reply to an English question (no spec language); to a German one they read as
    # decimals (tests/test_geoqa_reading_edges.py)
    with pytest.raises(ParseError, match="is not a number as written in English"):
        get_format(fmt).parse(text, {})
    if fmt == "geo_count":   # German 0,003 is 0.003: no count
        with pytest.raises(ParseError, match="a count must be a whole number"):
            get_format(fmt).parse(text, {"language": "de"})
    else:
        assert get_format(fmt).parse(text, {"language": "de"}) == pytest.approx(gold, rel=1e-12)
    # real thousands separators still read
    assert get_format("geo_count").parse("1,234,567", {}) == 1234567
    assert get_format("geo_distance").parse("12,345.5 km", {}) == 12345.5


@pytest.mark.parametrize("text, spec, read", [
    ("850.4 miles", {"unit": "km"}, 850.4 * 1.609344),   # was read as 850.4 km: scored correct
    ("1.157 km", {"unit": "m"}, 1157.0),                 # was read as 1.157 m: scored wrong
    ("16.09344 km", {"unit": "miles"}, 10.0),
    ("10 mi", {"unit": "miles"}, 10.0),
    ("250 metres", {"unit": "km"}, 0.25),
    ("784.0449 km", {"unit": "m", "abs_tol": 10.0, "rel_tol": 0.0}, 784044.9),
    ("42", {"unit": "m"}, 42.0),                         # a bare number is in the question's unit
    ("42 km", {}, 42.0),                                 # no unit named: km
])
def test_a_distance_in_another_unit_is_converted_to_the_questions(text, spec, read):
    assert get_format("geo_distance").parse(text, spec) == pytest.approx(read, rel=1e-12)


def test_unit_words_change_the_score_as_they_change_the_length():
    # gold 850.418 km: '850.4 miles' is 1368.6 km, far outside 1 %; '850.4 km' is within
    assert score("geo_distance", "850.4 miles", 850.418, {"unit": "km"}) == (0, 1.0)
    assert score("geo_distance", "850.4 km", 850.418, {"unit": "km"})[0] == 1
    # gold 1157.059 m: '1.157 km' is 1157 m, 0.059 m off, tau = 11.57 m
    em, ne = score("geo_distance", "1.157 km", 1157.059, {"unit": "m"})
    assert em == 1 and ne == pytest.approx(0.059 / 11.57059, rel=1e-6)


@pytest.mark.parametrize("text", ["33.8 %", "33.8%", "33.8 percent", "33.8 per cent"])
def test_a_ratio_written_as_a_percentage(text):
    # was read as 33.8 against a gold of 0.338
    assert get_format("geo_ratio").parse(text, {}) == pytest.approx(0.338, rel=1e-12)
    assert score("geo_ratio", text, 0.3384)[0] == 1


@pytest.mark.parametrize("fmt", ["geo_distance", "geo_count", "geo_area", "geo_angle"])
def test_a_percent_sign_beside_other_quantities_is_a_format_failure(fmt):
    # '%' was dropped as punctuation: '12 %' read as 12 km, 12 cities, ...
    with pytest.raises(ParseError, match="unexpected text 'percent'"):
        get_format(fmt).parse("12 %", {})


@pytest.mark.parametrize("text, read", [
    ("2025-09-24 11:53 PM", "2025-09-24T23:53"),       # was read as 11:53 (PM dropped)
    ("2025-09-24 11:53 p.m.", "2025-09-24T23:53"),
    ("2025-09-24 12:05 AM", "2025-09-24T00:05"),       # was 12:05
    ("2025-09-24 12:05 pm", "2025-09-24T12:05"),
    ("2025-09-24 07:30am (local time)", "2025-09-24T07:30"),
    ("2025-09-24 23:53", "2025-09-24T23:53"),
    ("2025-09-24T23:53:00+04:00", "2025-09-24T23:53"),
    ("It is 2025-09-24 23:53 there.", "2025-09-24T23:53"),
    # the same minute twice is one answer, not two (it was a format failure 'found 2')
    ("2025-09-24 11:53 PM (2025-09-24 23:53)", "2025-09-24T23:53"),
    ("2025-09-24T23:53 (2025-09-24 23:53:00 local time)", "2025-09-24T23:53"),
])
def test_datetime_reads_the_clock_as_written(text, read):
    assert get_format("geo_datetime").parse(text, {}) == read


@pytest.mark.parametrize("text, message", [
    ("2025-09-24 10:00 UTC, i.e. 2025-09-24 13:00 local", "found 2 different"),   # the first was taken
    ("2025-09-24 13:53 PM", "hour 13 on a 12-hour clock"),
    ("2025-09-24 00:10 AM", "hour 0 on a 12-hour clock"),
])
def test_datetime_ambiguities_are_format_failures(text, message):
    with pytest.raises(ParseError, match=message):
        get_format("geo_datetime").parse(text, {})


def test_structured_empty_list_is_the_empty_set_and_an_object_is_no_answer():
    """The answer schema gives an entity set as 'array of strings (empty for none)', but
    {"answer": []} was a format failure ('no names in the answer') while 'Answer: none' was
    read as the empty set; {"answer": {"a": 1}} was read as the name "a': 1"."""
    def read(text, fmt):
        return parse_answer(text, task_id="t", step=None, answer_format=fmt, rubric="geoqa", spec={})
    for text in ('{"answer": [], "note": ""}', "Answer: none"):
        a = read(text, "geo_entity_set")
        assert (a.status, a.value) == ("ok", []), a.detail
    assert read('{"answer": []}', "geo_point").status == "format_failure"
    a = read('{"answer": {"a": 1}, "note": ""}', "geo_ranked")
    assert a.status == "format_failure" and a.value is None


@pytest.mark.parametrize("gold, reply", [
    ("Łódź, Poland", "Lodz, Poland"),      # 'Łódź' folded to 'odz': the ASCII spelling was wrong
    ("Ørsta, Norway", "Orsta, Norway"),
    ("Đà Nẵng, Vietnam", "Da Nang, Vietnam"),
    ("Þórshöfn, Iceland", "Thorshofn, Iceland"),
    ("Straße", "Strasse"),
    ("Ærøskøbing", "AEROSKOBING"),
])
def test_latin_letters_without_a_decomposition_fold_to_their_ascii_spelling(gold, reply):
    assert score("geo_entity", reply, gold) == (1, 0.0)
    assert score("geo_entity", gold, gold) == (1, 0.0)
    assert score("geo_entity_set", f"{reply}; Oslo", [gold, "Oslo"]) == (1, 0.0)
    # a different name still differs
    assert score("geo_entity", "Lida", "Łódź") == (0, 1.0)


def test_a_name_in_another_script_is_named_as_such_not_as_empty():
    # 'Answer: 东京' to a --language zh question was a format failure reading 'empty entity name'
    for name in ("东京", "Москва", "Αθήνα"):
        with pytest.raises(ParseError, match="has no Latin letter or digit: names are matched against the English"):
            get_format("geo_entity").parse(name, {})
    with pytest.raises(ParseError, match="empty entity name"):
        get_format("geo_entity").parse(" ** ", {})


def test_words_a_task_allows_beside_a_number_are_not_converted():
    """answer_spec["units"] allows more words beside the number; only the length units and
    '%' / 'percent' convert: another allowed word beside a distance raised KeyError out of
    parse_answer (the reader never raises on a reply), beside a ratio it divided by 100."""
    spec = {"unit": "km", "units": ["km by road"]}
    assert get_format("geo_distance").parse("850 km by road", spec) == 850.0
    a = parse_answer("Answer: 850 km by road", task_id="t", step=None, answer_format="geo_distance",
                     rubric="geoqa", spec=spec)
    assert a.status == "ok" and a.value == 850.0
    assert get_format("geo_ratio").parse("0.34 of the area", {"units": ["of the area"]}) == 0.34
    assert get_format("geo_ratio").parse("34 %", {"units": ["of the area"]}) == pytest.approx(0.34, rel=1e-12)


@pytest.mark.parametrize("text", ["3.5 times", "3.5x", "3.5 x", "3.5 times larger", "3.5 times as large", "3.5×"])
def test_a_ratio_answered_as_so_many_times_is_read(text):
    """metric.area_ratio asks "how many times larger is A than B?": '3.5 times' and '3.5x'
    were format failures ('unexpected text'), while '3.5×' read as 3.5."""
    assert get_format("geo_ratio").parse(text, {}) == 3.5
    assert score("geo_ratio", text, 3.52)[0] == 1
    with pytest.raises(ParseError, match="unexpected text 'times'"):
        get_format("geo_distance").parse("3.5 times", {"unit": "km"})   # only a ratio is so many times
