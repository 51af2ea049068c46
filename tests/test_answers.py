"""Answer parsing per the STARK rubric, and the answer formats."""
import json
import math
from decimal import Decimal

import numpy as np
import pytest

from stsim.answers import FORMATS, ParseError, check_value, numbers_in, parse_answer, stark_rubric


@pytest.mark.parametrize("text, body", [
    ("bla [RESULTS_START] [1.5, 2.5] [RESULTS_END] bla", "[1.5, 2.5]"),
    ("[RESULT_START] [3] [RESULT_END]", "[3]"),                      # the paper's own typo
    ("[RESULTS_START] [p] [RESULT_END]", "[p]"),                     # mixed, Table 19
    ("RESULTS_START 4.2 RESULTS_END", "4.2"),                        # no brackets
    ("[ RESULTS_START ][7][ RESULTS_END ]", "[7]"),                  # spaces inside brackets
    ("[RESULTS_START] [1] [RESULTS_END] then [RESULTS_START] [2] [RESULTS_END]", "[2]"),  # last wins
    ("no block here", None),
])
def test_stark_rubric(text, body):
    assert stark_rubric(text) == body


def test_numbers_scientific_notation():
    assert numbers_in("[1.18537902e-01, 1.3171e+02]") == [0.118537902, 131.71]


def test_parse_point_ok_and_error_is_euclidean():
    a = parse_answer("[RESULTS_START] [3, 4] [RESULTS_END]", task_id="t", step=None, answer_format="point")
    assert a.status == "ok" and a.value == [3.0, 4.0]
    assert FORMATS["point"].error(a.value, [0.0, 0.0]) == pytest.approx(5.0)


@pytest.mark.parametrize("text, status", [
    ("[RESULTS_START] [3] [RESULTS_END]", "format_failure"),         # one number for a point
    ("[RESULTS_START] [x, y] [RESULTS_END]", "format_failure"),
    ("I cannot determine the location.", "refusal"),
    ("The object is near the middle.", "format_failure"),
    ("", "format_failure"),
])
def test_parse_point_failures(text, status):
    a = parse_answer(text, task_id="t", step=None, answer_format="point")
    assert a.status == status and a.value is None and a.detail


def test_parse_never_raises_on_non_string():
    assert parse_answer(None, task_id="t", step=0, answer_format="time").status == "format_failure"
    assert parse_answer(12, task_id="t", step=0, answer_format="time").status == "format_failure"


def test_vector_length_is_enforced():
    ok = parse_answer("[RESULTS_START] [1, 2, 3] [RESULTS_END]", task_id="t", step=None,
                      answer_format="vector", spec={"length": 3})
    bad = parse_answer("[RESULTS_START] [1, 2] [RESULTS_END]", task_id="t", step=None,
                       answer_format="vector", spec={"length": 3})
    assert ok.value == [1.0, 2.0, 3.0] and bad.status == "format_failure"
    assert FORMATS["vector"].error([1, 2, 3], [1, 2, 5]) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="length 2 against a gold of length 3"):
        FORMATS["vector"].error([1, 2], [1, 2, 5])  # scored as a format failure
    assert FORMATS["vector"].error([3e200, 4e200, 0], [0, 0, 0]) == pytest.approx(5e200)  # no overflow


@pytest.mark.parametrize("text, value", [("1", 1), ("[0]", 0), ("Yes", 1), ("false", 0), ("1.0", 1)])
def test_binary(text, value):
    assert FORMATS["binary"].parse(text) == value


@pytest.mark.parametrize("body", ["between 5 and 6", "4.49 min", "[NaN, 5.1]", "x = 1, y = 2"])
def test_words_among_numbers_are_a_format_failure(body):
    a = parse_answer(f"[RESULTS_START] {body} [RESULTS_END]", task_id="t", step=None, answer_format="point")
    assert a.status == "format_failure" and "numbers only" in a.detail


def test_scientific_notation_is_not_a_word():
    a = parse_answer("[RESULTS_START] [1.5e-1, 2E+0] [RESULTS_END]", task_id="t", step=None, answer_format="point")
    assert a.status == "ok" and a.value == [0.15, 2.0]


# check_value refused a JSON boolean inside a list twice (the second check could not fire) and
# caught a non-finite number a second time after normalising (reachable only with a non-float
# number, which the first check missed): one check now covers every number kind, and an integer
# too large for a float (a JSON literal of 400 digits) is refused for every format, where a
# geo gold raised OverflowError (a traceback) and a point answer said "does not fit".
@pytest.mark.parametrize("fmt,value,needle", [
    ("point", [np.float32("inf"), 1.0], "non-finite number inf"),
    ("time", Decimal("-Infinity"), "non-finite number"),
    ("vector", [1.0, np.float64("nan")], "non-finite number nan"),
    ("point", [10 ** 400, 1], "too large for a float"),
    ("geo_distance", 10 ** 400, "too large for a float"),
    ("geo_point", [10 ** 400, 1.0], "too large for a float"),
], ids=["float32-inf", "decimal-inf", "float64-nan", "point-huge-int", "geo_distance-huge-int",
        "geo_point-huge-int"])
@pytest.mark.parametrize("what", ["gold", "answer"])
def test_check_value_refuses_every_kind_of_non_finite_or_huge_number(fmt, value, needle, what):
    with pytest.raises(ParseError, match=needle):
        check_value(fmt, value, what=what)


def test_check_value_keeps_finite_numpy_and_decimal_numbers():
    assert check_value("point", [np.float32(1.5), Decimal("2.25")]) == [1.5, 2.25]
    assert check_value("scalar", 10 ** 300) == 1e300
    with pytest.raises(ParseError, match="a vector gold of length 3 expected, got 2"):
        check_value("vector", [1.0, 2.0], {"length": 3})


def test_a_reply_longer_than_the_scan_limit_is_read_from_its_end_and_says_so(tmp_path):
    """A 50 MB reply took ~10 s of regular-expression scans (rubric, refusal and lenient
    readers over the whole text): readers now scan the last MAX_REPLY_CHARS characters, where
    the answer block is, and the answer's detail and read_answers' warning say so."""
    from stsim.answers import MAX_REPLY_CHARS, lenient_read
    from stsim.records import Task
    from stsim.solvers.answers_file import read_answers
    filler = "I reason about the sensors. " * (MAX_REPLY_CHARS // 28 + 1000)   # > the limit alone
    reply = "[RESULTS_START] [1, 1] [RESULTS_END] " + filler + "[RESULTS_START] [3.5, 4.25] [RESULTS_END]"
    a = parse_answer(reply, task_id="t", step=None, answer_format="point")
    assert a.status == "ok" and a.value == [3.5, 4.25] and a.text == reply
    assert a.detail == (f"a reply of {len(reply):,} characters: only its last {MAX_REPLY_CHARS:,} were read "
                        "(stsim.answers.MAX_REPLY_CHARS)")
    # the only block lies before the last MAX_REPLY_CHARS characters: not read, and the detail says why
    early = "[RESULTS_START] [3.5, 4.25] [RESULTS_END] " + filler
    b = parse_answer(early, task_id="t", step=None, answer_format="point")
    assert b.status == "format_failure" and b.detail.startswith("no answer found by the 'stark' rubric; a reply of")
    # STARK's own reader (the first block) still reads the whole reply
    c = parse_answer(early, task_id="t", step=None, answer_format="point", rubric="stark-legacy")
    assert c.status == "ok" and c.value == [3.5, 4.25]
    assert lenient_read(filler + "[RESULTS_START] x = 3.5, y = 4.25 [RESULTS_END]", "point") == [3.5, 4.25]
    # a reply within the limit: no note
    assert parse_answer("[RESULTS_START] [1, 2] [RESULTS_END]", task_id="t", step=None,
                        answer_format="point").detail is None
    task = Task("t/x", "fam.point", "q", {}, [1.0, 2.0], "point")
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"task_id": "t/x", "text": reply}) + "\n")
    (got,), warnings = read_answers(path, {"t/x": task})
    assert got.value == [3.5, 4.25] and warnings == [
        f"{path}: 1 reply longer than {MAX_REPLY_CHARS:,} characters (the first: task t/x, {len(reply):,}) "
        f"read from the last {MAX_REPLY_CHARS:,} only, where the answer block is "
        "(stsim.answers.MAX_REPLY_CHARS; each answer's detail says so)"]


def test_a_reply_too_long_for_a_whole_reply_rubric_is_not_read_from_its_end(tmp_path):
    """The cardinal rubric scores a reply naming one direction and rejects one naming several
    (seed 002 §3.1): read from its last MAX_REPLY_CHARS characters only, 'north' + filler +
    'east' (invalid as a whole) was scored 'east'.  Such a reply is a format failure saying
    why; read_answers and the cardinal report say so too."""
    from stsim.answers import MAX_REPLY_CHARS, read_cardinal
    from stsim.records import Task
    from stsim.scoring.cardinal_report import cardinal_report
    from stsim.solvers.answers_file import read_answers
    filler = "I think about the map. " * (MAX_REPLY_CHARS // 23 + 1000)
    reply = "north. " + filler + "Answer: east"
    assert read_cardinal(reply).direction is None          # the whole names two directions
    a = parse_answer(reply, task_id="t", step=None, answer_format="direction", rubric="cardinal")
    assert a.status == "format_failure" and a.value is None and a.text == reply
    assert a.detail.startswith(f"a reply of {len(reply):,} characters: the 'cardinal' rubric reads the whole")
    short = parse_answer("The lake is to the east.", task_id="t", step=None, answer_format="direction",
                         rubric="cardinal")
    assert short.status == "ok" and short.value == "east"  # within the limit: unchanged
    task = Task("t/x", "fam.dir", "q", {}, "east", "direction", meta={"rubric": "cardinal"})
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"task_id": "t/x", "text": reply}) + "\n")
    (got,), warnings = read_answers(path, {"t/x": task})
    assert got.status == "format_failure" and warnings == [
        f"{path}: 1 reply longer than {MAX_REPLY_CHARS:,} characters to a question whose rubric reads the "
        f"whole reply (cardinal; the first: task t/x, {len(reply):,}) not read: format failures "
        "(stsim.answers.MAX_REPLY_CHARS)"]
    report = cardinal_report([task], [got])
    assert report["overall"]["correct"] == 0 and report["rubric"]["invalid"] == 1
