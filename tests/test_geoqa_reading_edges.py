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


@pytest.mark.parametrize("reply, spec, why", [
    ("Latvia and Russia", {}, "joins 2 names (Latvia; Russia) with 'and'"),   # was the one name 'Latvia and Russia'
    ("Latvia & Russia", {}, "joins 2 names"),
    ("Latvia or Russia", {}, "with 'or'"),
    ("Latvia; Russia", {}, "names 2 entities (Latvia; Russia)"),
    ("Riga, Latvia and Moscow, Russia", {}, "joins 2 names (Riga, Latvia; Moscow, Russia)"),
    ("Lettland und Russland", {"language": "de"}, "with 'und'"),
    ("Letonia y Rusia", {"language": "es"}, "with 'y'"),
])
def test_a_reply_naming_two_entities_where_one_is_asked_is_a_format_failure(reply, spec, why):
    a = read(f"Answer: {reply}", "geo_entity", spec)
    assert a.status == "format_failure" and why in a.detail, a


@pytest.mark.parametrize("reply, gold", [
    ("Bosnia and Herzegovina", "Bosnia and Herzegovina"),
    ("Trinidad & Tobago", "Trinidad and Tobago"),          # '&' is 'and' (was not matched)
    ("Zenica, Bosnia and Herzegovina", "Zenica, Bosnia and Herzegovina"),
    ("Newfoundland and Labrador", "Newfoundland and Labrador"),
    ("Or Yehuda, Israel", "Or Yehuda, Israel"),            # a list word first names no list
])
def test_names_that_hold_and_or_or_stay_one_name(reply, gold):
    for spec in ({}, {"language": "es"}):
        a = read(f"Answer: {reply}", "geo_entity", spec)
        assert a.status == "ok" and a.value == reply, a
    assert get_format_em("geo_entity", reply, gold) == 1
    # a wrong one is wrong, not a format failure
    assert get_format_em("geo_entity", "Treinta y Tres", "Montevideo", {"language": "es"}) == 0
    # a name the task knows (spec aliases) with 'and' in it is one name
    assert read("Answer: Foo and Bar", "geo_entity", {"aliases": {"Foo and Bar": []}}).status == "ok"


def get_format_em(fmt, reply, gold, spec=None):
    from stsim.answers import get_format
    f = get_format(fmt)
    return f.em_ne(f.normalise(f.parse(reply, spec or {}), spec), f.check(gold, spec), spec)[0]


def test_and_separates_the_names_of_a_list_and_or_is_refused():
    # 'Oslo, Bergen and Trondheim' was two names ('Bergen and Trondheim' one of them)
    assert read("Answer: Oslo, Bergen and Trondheim", "geo_ranked").value == ["Oslo", "Bergen", "Trondheim"]
    assert read("Answer: Oslo, Bergen, and Trondheim", "geo_ranked").value == ["Oslo", "Bergen", "Trondheim"]
    assert read("Answer: Oslo und Bergen", "geo_entity_set", {"language": "de"}).value == ["Bergen", "Oslo"]
    a = read("Answer: Sarajevo, Bosnia and Herzegovina; Port of Spain, Trinidad and Tobago", "geo_entity_set")
    assert a.value == ["Port of Spain, Trinidad and Tobago", "Sarajevo, Bosnia and Herzegovina"]
    a = read("Answer: Oslo or Bergen", "geo_entity_set")
    assert a.status == "format_failure" and "offers alternatives" in a.detail


def test_the_conjoined_names_file_holds_every_such_name_of_the_store():
    from importlib import resources

    from stsim.answers_geo import CONJOINED_NAMES, conjoined_in_store
    from stsim.geoqa.store import load_store
    shipped = [line for line in resources.files("stsim").joinpath(CONJOINED_NAMES).read_text("utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    want = conjoined_in_store(load_store().table)
    assert "Bosnia and Herzegovina" in want and "Treinta y Tres" in want and "Latvia" not in want
    assert set(want) <= set(shipped), sorted(set(want) - set(shipped))[:20]


def test_a_task_asked_in_another_language_is_read_in_it():
    from types import SimpleNamespace

    from stsim.answers import reading_spec
    de = SimpleNamespace(meta={"answer_spec": {"unit": "km"}}, inputs={"language": "de"})
    assert reading_spec(de) == {"unit": "km", "language": "de"}
    assert de.meta["answer_spec"] == {"unit": "km"}                       # the task is not changed
    en = SimpleNamespace(meta={"answer_spec": {"unit": "km"}}, inputs={})
    assert reading_spec(en) is en.meta["answer_spec"]
    assert reading_spec(SimpleNamespace(meta={}, inputs={"language": "es"})) == {"language": "es"}


@pytest.mark.parametrize("fmt, reply, lang, value", [
    ("geo_count", "12.000", "de", None),       # was read as 12
    ("geo_count", "1,500", "de", None),        # was read as 1500 (German: 1.5)
    ("geo_distance", "1,500 km", "es", None),
    ("geo_distance", "12.000 km", "el", None),
    ("geo_count", "1,500", "ru", None),        # Russian decimal comma
    ("geo_count", "12.000", "en", None),       # a count with three decimals: 12 or 12000
    ("geo_count", "12.000", "ru", None),
    ("geo_count", "1.234.567", "de", 1234567),
    ("geo_count", "12 000", "ru", 12000),      # CLDR ru groups with a (no-break) space
    ("geo_count", "12\u00a0000", "ka", 12000),
    ("geo_distance", "1,5 km", "de", 1.5),
    ("geo_distance", "1.234,5 km", "de", 1234.5),
    ("geo_distance", "1,234.5 km", "de", 1234.5),   # English writing in a German reply: one reading
    ("geo_distance", "12.5 km", "de", 12.5),
    ("geo_distance", "1,500 km", "en", 1500.0),     # English grouping in an English reply
    ("geo_distance", "1,500 km", "zh", 1500.0),     # CLDR zh, ja, fa: English separators
    ("geo_distance", "12.000 km", "en", 12.0),
    ("geo_distance", "\u06f1\u06f2\u066b\u06f5 km", "fa", 12.5),   # Persian digits and decimal separator
])
def test_numbers_are_read_with_the_separators_of_the_questions_language(fmt, reply, lang, value):
    a = read(f"Answer: {reply}", fmt, {"language": lang, "unit": "km"})
    if value is None:
        assert a.status == "format_failure" and "ambiguous" in a.detail, a
    else:
        assert a.status == "ok" and a.value == pytest.approx(value, rel=1e-12), a


def test_an_ambiguous_number_names_both_readings():
    a = read("Answer: 1,500", "geo_count", {"language": "de"})
    assert "1.5 as written in German, 1500 in English" in a.detail
    a = read("Answer: 1,5 km", "geo_distance", {"unit": "km"})
    assert a.status == "format_failure" and "'1,5' is not a number as written in English" in a.detail


@pytest.mark.parametrize("fmt, reply, spec, value", [
    ("geo_distance", "850 Meilen", {"unit": "km"}, 850 * 1.609344),      # was a format failure
    ("geo_distance", "850 миль", {"unit": "km"}, 850 * 1.609344),        # was read as 850 km (word dropped)
    ("geo_distance", "850 millas", {"unit": "km", "language": "es"}, 850 * 1.609344),
    ("geo_distance", "1368公里", {"unit": "miles", "language": "zh"}, 1368 / 1.609344),   # was 1368 miles
    ("geo_distance", "1368 χλμ.", {"unit": "miles"}, 1368 / 1.609344),
    ("geo_distance", "1368 キロメートル", {"unit": "m"}, 1368000.0),
    ("geo_distance", "\u06f8\u06f5\u06f0 \u06a9\u06cc\u0644\u0648\u0645\u062a\u0631",   # 850 km, Persian
     {"unit": "miles", "language": "fa"}, 850 / 1.609344),
    ("geo_distance", "850 კმ", {"unit": "m"}, 850000.0),
    ("geo_area", "1200 км²", {}, 1200.0),
    ("geo_area", "1200 Quadratkilometer", {}, 1200.0),
    ("geo_ratio", "33,8 Prozent", {"language": "de"}, 0.338),
    ("geo_ratio", "3,5-mal", {"language": "de"}, 3.5),
    ("geo_angle", "45 градусов", {}, 45.0),
])
def test_unit_words_of_the_supported_languages_are_read(fmt, reply, spec, value):
    a = read(f"Answer: {reply}", fmt, spec)
    assert a.status == "ok" and a.value == pytest.approx(value, rel=1e-12), a


@pytest.mark.parametrize("fmt, reply", [
    ("geo_distance", "850 км около"),       # a word in another script was dropped: 850 km
    ("geo_distance", "850 Prozent"),        # a unit word of another quantity
    ("geo_count", "12 Städte"),
])
def test_other_words_beside_a_number_are_named_in_any_script(fmt, reply):
    a = read(f"Answer: {reply}", fmt, {"unit": "km"})
    assert a.status == "format_failure" and "unexpected text" in a.detail, a


def test_the_unit_table_covers_the_generators_languages_and_no_word_names_two_units():
    from stsim.answers_locale import SUPPORTED_LANGUAGES, unit_words
    from stsim.geoqa.languages import LANGUAGES
    assert set(SUPPORTED_LANGUAGES) == set(LANGUAGES)
    words = unit_words()      # raises ValueError on a word naming two units
    assert words["meilen"] == "mi" and words["километров"] == "km" and words["公里"] == "km"
    assert {"km", "m", "mi", "sq km", "percent", "deg", "times"} == set(words.values())


@pytest.mark.parametrize("fmt, reply, spec, value", [
    ("geo_distance", "1368 km (850 miles)", {"unit": "km"}, 1368.0),      # was 'found 2 numbers'
    ("geo_distance", "850 miles (1368 km)", {"unit": "km"}, 850 * 1.609344),   # the first value is read
    ("geo_distance", "1,368 km (850 mi).", {"unit": "km"}, 1368.0),
    ("geo_distance", "1370 km (850 mi)", {"unit": "km"}, 1370.0),         # both rounded to tens
    ("geo_distance", "1000 km (621 miles)", {"unit": "km"}, 1000.0),
    ("geo_distance", "1368 km (850 Meilen)", {"unit": "km", "language": "de"}, 1368.0),
    ("geo_distance", "1368 km [850 miles]", {"unit": "km"}, 1368.0),
    ("geo_ratio", "0.338 (33.8 %)", {}, 0.338),
    ("geo_count", "12 (12.0)", {}, 12),
])
def test_a_value_with_its_conversion_in_brackets_reads_the_first(fmt, reply, spec, value):
    a = read(f"Answer: {reply}", fmt, spec)
    assert a.status == "ok" and a.value == pytest.approx(value, rel=1e-12), a


@pytest.mark.parametrize("fmt, reply, spec, why", [
    # 950 mi is 1528.9 km: 161 km from 1368, rounding allows 0.5 + 8.0 (950 to tens of miles)
    ("geo_distance", "1368 km (950 miles)", {"unit": "km"}, "two different numbers"),
    # 1000 is read to hundreds at most (two significant digits): 50 + 8 km, not 500
    ("geo_distance", "1000 km (900 miles)", {"unit": "km"}, "two different numbers"),
    ("geo_ratio", "0.338 (38 %)", {}, "two different numbers"),
    ("geo_distance", "1368 km (rounded to 1370)", {"unit": "km"}, "unexpected text 'rounded to'"),
    ("geo_distance", "1368 km, 850 miles", {"unit": "km"}, "expected one number, found 2"),
])
def test_an_inconsistent_or_unbracketed_second_value_stays_a_format_failure(fmt, reply, spec, why):
    a = read(f"Answer: {reply}", fmt, spec)
    assert a.status == "format_failure" and why in a.detail, a


def test_an_answers_file_reads_a_german_task_in_german(tmp_path):
    """End to end: a geoqa count task asked in German (``--language de``) and the same task in
    English, read from one answers file: ``1,500`` is ambiguous in German (1.5 or 1500) and
    1500 in English."""
    import json

    from stsim.benchmarks.suites import get_suite
    from stsim.generators.geoqa_languages import with_language
    from stsim.solvers.answers_file import read_answers
    (en,) = list(get_suite("geoqa-small").tasks(n=1, only="geoqa.aggregation.count_amenities"))
    de = with_language(en, "de")
    assert en.answer_format == "geo_count" and "language" not in (de.meta.get("answer_spec") or {})
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({"task_id": t.id, "text": f"Answer: {text}"}) + "\n"
                            for t, text in ((de, "1,500"), (en, "1,500"))))
    answers, _ = read_answers(path, {en.id: en, de.id: de})
    got = {a.task_id: a for a in answers}
    assert got[de.id].status == "format_failure" and "ambiguous" in got[de.id].detail
    assert got[en.id].status == "ok" and got[en.id].value == 1500


@pytest.mark.parametrize("reply, fmt, value", [
    ('{"answer": 12.125, "note": ""}', "geo_distance", 12.125),   # JSON has one decimal point: not German 12125
    ('{"answer": 1500, "note": ""}', "geo_count", 1500),
    ('{"answer": [52.125, 13.405], "note": ""}', "geo_point", [52.125, 13.405]),
])
def test_a_json_number_is_read_as_json_whatever_the_questions_language(reply, fmt, value):
    a = read(reply, fmt, {"language": "de", "unit": "km"})
    assert a.status == "ok" and a.value == value, a
    # the same number as text in a German reply is ambiguous
    assert read("Answer: 12.125 km", "geo_distance", {"language": "de", "unit": "km"}).status == "format_failure"
