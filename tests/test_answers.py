"""Answer parsing per the STARK rubric, and the answer formats."""
import math

import pytest

from stsim.answers import FORMATS, numbers_in, parse_answer, stark_rubric


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
