"""``stsim score``: answers files in every answer format, per-item outcomes and the summary."""
from __future__ import annotations

import json

import pytest

from stsim.solvers.answers_file import OUTCOMES, outcome_counts, read_answers, tag_outcomes
from stsim.scoring.score import score_answers
from stsim.cli import main
from stsim.records import RecordError, Task, read_tasks, write_jsonl

# (format, gold, spec, right answer text, wrong answer text, unreadable text)
CASES = [
    ("point", [1.0, 2.0], None, "[1.0, 2.0]", "[4.0, 6.0]", "[1.0]"),
    ("scalar", 3.5, None, "3.5", "4.5", "three"),
    ("time", 12.0, None, "[12.0]", "[15.0]", "[]"),
    ("vector", [1.0, 2.0, 3.0], {"length": 3}, "[1, 2, 3]", "[1, 2, 5]", "[1, 2]"),
    ("binary", 1, None, "[1]", "[0]", "[maybe]"),
    ("relation", "meets", {"choices": ["before", "meets", "overlaps"]}, "Meets", "before", "sideways"),
    ("relation_set", ["before", "meets"], {"choices": ["before", "meets", "overlaps"]}, "{meets, before}",
     "{before}", "{nearby}"),
    ("direction", "northeast", None, "NE", "south", "up"),
    ("cell", "u4pruyd", None, "U4PRUYD", "u4pruye", "??"),
    ("geometry", "POLYGON ((0 0, 1 0, 1 1, 0 0))", None, "POLYGON ((1 0, 1 1, 0 0, 1 0))",
     "POLYGON ((0 0, 2 0, 2 2, 0 0))", "POLYGON ((0 0, 1"),
    ("entity_set", ["Paris", "Lyon"], None, "lyon; paris", "Paris", None),  # None: reply has no answer block
]


def _tasks():
    out = []
    for fmt, gold, spec, *_ in CASES:
        meta = {"answer_spec": spec} if spec else {}
        out.append(Task(f"t/{fmt}", f"fam.{fmt}", "q", {}, gold, fmt, meta=meta))
    return out


def _wrap(t):
    return "Paris, I think." if t is None else f"Reasoning... [RESULTS_START] {t} [RESULTS_END]"


@pytest.mark.parametrize("col,expected", [(3, "correct"), (4, "wrong"), (5, "format_failure")])
def test_every_format_right_wrong_unreadable(tmp_path, col, expected):
    tasks = _tasks()
    path = tmp_path / "a.jsonl"
    write_jsonl(path, [{"task_id": f"t/{c[0]}", "text": _wrap(c[col])} for c in CASES])
    answers, warnings = read_answers(path, {t.id: t for t in tasks})
    scores = tag_outcomes(score_answers(tasks, answers), tolerance=0.5)
    got = {s.task_id.split("/")[1]: s.extra["outcome"] for s in scores}
    assert got == {c[0]: expected for c in CASES}, got
    assert warnings == []


def test_numeric_outcome_without_tolerance_is_scored_with_error(tmp_path):
    tasks = _tasks()[:1]
    path = tmp_path / "a.jsonl"
    write_jsonl(path, [{"task_id": "t/point", "value": [4.0, 6.0]}])
    answers, _ = read_answers(path, {t.id: t for t in tasks})
    (s,) = tag_outcomes(score_answers(tasks, answers))
    assert s.extra["outcome"] == "scored" and s.error == pytest.approx(5.0)  # 3-4-5 triangle


def test_typed_values_refusal_missing_and_bad_lines(tmp_path):
    tasks = _tasks()
    path = tmp_path / "a.jsonl"
    write_jsonl(path, [
        {"task_id": "t/point", "value": [1.0, 2.0, 9.0]},            # wrong length: format failure
        {"task_id": "t/point", "value": [1.0, 2.0]},                 # repeat: ignored, first kept
        {"task_id": "t/scalar", "text": "I'm sorry, but I cannot help with that."},
        {"task_id": "t/direction", "value": "NE"},                   # typed answer given as text
        {"task_id": "t/binary", "status": "no_estimate", "value": None},
        {"task_id": "t/relation", "value": 7},                       # not a relation name
        {"task_id": "t/time", "step": 3, "value": 1.0},              # no such step
        {"task_id": "elsewhere/x", "value": 1},                      # unknown task
    ])
    answers, warnings = read_answers(path, {t.id: t for t in tasks})
    scores = tag_outcomes(score_answers(tasks, answers))
    got = {s.task_id.split("/")[1]: s.extra["outcome"] for s in scores}
    assert got["point"] == "format_failure" and got["scalar"] == "refusal"
    assert got["direction"] == "correct" and got["binary"] == "no_answer"
    assert got["relation"] == "format_failure" and got["time"] == "missing" and got["cell"] == "missing"
    assert len(warnings) == 3 and any("a second answer for task t/point" in w for w in warnings)
    counts = outcome_counts(scores)["all"]
    assert sum(counts.values()) == len(CASES) and set(counts) <= set(OUTCOMES)


# Typed values of the wrong JSON type are format failures, never a score: before the fix
# [true, 2] scored as the point [1, 2], Infinity / 1e400 as an infinite error, a non-WKT
# polygon value raised a GEOSException (a traceback).
@pytest.mark.parametrize("fmt,gold,value,needle", [
    ("point", [1.0, 2.0], [True, 2.0], "JSON boolean"),
    ("point", [1.0, 2.0], [False, 2.0], "JSON boolean"),
    ("scalar", 1.0, True, "JSON boolean"),
    ("time", 1.0, [True], "JSON boolean"),
    ("vector", [1.0, 2.0], [1.0, True], "JSON boolean"),
    ("point", [1.0, 2.0], ["1.0", 2.0], "must be numbers"),
    ("relation_set", ["before"], ["before", True], "JSON boolean"),
    ("geo_point", [10.0, 20.0], [True, 20.0], "JSON boolean"),
    ("geo_polygon", "POLYGON ((0 0, 1 0, 1 1, 0 0))", 5, "WKT"),
    ("geo_polygon", "POLYGON ((0 0, 1 0, 1 1, 0 0))", [[0, 0], [1, 0], [1, 1]], "WKT"),
])
def test_typed_value_of_wrong_json_type_is_a_format_failure(tmp_path, fmt, gold, value, needle):
    task = Task("t/x", f"fam.{fmt}", "q", {}, gold, fmt)
    path = tmp_path / "a.jsonl"
    write_jsonl(path, [{"task_id": "t/x", "value": value}])
    (a,), _ = read_answers(path, {"t/x": task})
    assert a.status == "format_failure" and needle in a.detail, a
    (s,) = tag_outcomes(score_answers([task], [a]))
    assert s.extra["outcome"] == "format_failure" and s.error is None


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_typed_value_is_a_format_failure_not_an_infinite_error(tmp_path, literal):
    task = Task("t/x", "fam.point", "q", {}, [1.0, 2.0], "point")
    path = tmp_path / "a.jsonl"
    path.write_text('{"task_id": "t/x", "value": [%s, 2.0]}\n' % literal)
    (a,), _ = read_answers(path, {"t/x": task})
    assert a.status == "format_failure" and "non-finite" in a.detail


def test_typed_true_stays_a_yes_for_binary_answers(tmp_path):
    task = Task("t/x", "fam.binary", "q", {}, 1, "binary")
    path = tmp_path / "a.jsonl"
    write_jsonl(path, [{"task_id": "t/x", "value": True}])
    (a,), _ = read_answers(path, {"t/x": task})
    assert a.status == "ok" and a.value == 1


@pytest.mark.parametrize("line,needle", [
    ('{"step": 1}', "missing 'task_id'"),
    ('{"task_id": "t/point"}', "needs 'text'"),
    ('{"task_id": "t/point", "status": "great"}', "unknown status"),
    ('{"task_id": "t/point", "step": "1", "value": 1}', "'step' must be an integer"),
    ('[1, 2]', "expected a JSON object"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, needle):
    path = tmp_path / "a.jsonl"
    path.write_text('{"task_id": "t/scalar", "value": 1}\n' + line + "\n")
    with pytest.raises(RecordError, match=needle) as exc:
        read_answers(path, {t.id: t for t in _tasks()})
    assert f"{path}:2" in str(exc.value)


def test_cli_score_tracking_answers_outcomes_and_summary(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "quickstart", "--n", "1", "-o", str(tasks)]) == 0
    rows = [json.loads(l) for l in tasks.read_text().splitlines()]
    trk = next(r for r in rows if r["family"] == "stark.tracking.range")
    loc = next(r for r in rows if r["family"] == "stark.localization.range")
    lines = [{"task_id": loc["id"], "text": _wrap(json.dumps(loc["answer"]))}]
    for st in trk["steps"][:10]:
        x, y = st["answer"]
        lines.append({"task_id": trk["id"], "step": st["index"], "text": _wrap(f"[{x + 0.3}, {y - 0.4}]")})
    answers = tmp_path / "answers.jsonl"
    write_jsonl(answers, lines)
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out), "--tolerance", "0.6"]) == 0
    printed = capsys.readouterr().out
    assert "Outcomes per item" in printed
    summary = json.loads((out / "summary.json").read_text())
    fam = summary["families"]["stark.tracking.range"]
    assert fam["outcomes"] == {"correct": 10}  # every error is 0.5 <= 0.6
    assert fam["rmse"] == pytest.approx(0.5, abs=1e-9)
    assert summary["families"]["stark.localization.range"]["outcomes"] == {"correct": 1}
    n_items = sum(f["n"] for f in summary["families"].values())
    assert summary["outcomes"]["missing"] == n_items - 11
    assert main(["score", str(tasks), str(tmp_path / "nope.jsonl")]) == 2
    capsys.readouterr()
    for bad in ("inf", "nan", "-0.1"):  # inf made every readable item 'correct'
        assert main(["score", str(tasks), str(answers), "--tolerance", bad]) == 2
        assert "--tolerance must be a finite non-negative number" in capsys.readouterr().err


def test_answers_of_another_suite_are_bad_input(tmp_path, capsys):
    """A tasks file of one suite scored with the answers of another: no line matches, so the
    run stops with exit 2 naming the file and the ids (it used to print a table of 'missing'
    items and exit 0)."""
    from stsim.cli import main
    tasks = tmp_path / "tier2.jsonl"
    assert main(["generate", "stark-tier2", "--n", "1", "--family", "stark.relation.temporal", "-o", str(tasks)]) == 0
    answers = tmp_path / "cardinal_answers.jsonl"
    answers.write_text(json.dumps({"task_id": "cardinal/cardinal.large/000000", "text": "west"}) + "\n"
                       + json.dumps({"task_id": "cardinal/cardinal.large/000001", "text": "east"}) + "\n")
    out = tmp_path / "scores"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: {answers}: none of its 2 answer(s) has a task_id in the tasks file" in err
    assert "line 1 (cardinal/cardinal.large/000000)" in err
    assert "'stark-tier2/stark.relation.temporal/000000'" in err
    assert not out.exists()  # bad input leaves no folder behind
    # one matching line among unknown ones is still scored, with a warning (unchanged)
    first = read_tasks(tasks)[0]
    with answers.open("a") as fh:
        fh.write(json.dumps({"task_id": first.id, "value": first.answer}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 0
    assert "ignored 2 answer(s) whose task_id is not in the tasks file" in capsys.readouterr().err


def test_step_zero_on_single_answer_tasks_says_how_to_fix(tmp_path, capsys):
    """README's '{"task_id", "step", "text"}' read literally gives "step": 0 for a single-answer
    task. Every line ignored is bad input (exit 2) and the message says to omit the step; one
    usable line among them is scored, with the hint as a warning."""
    from stsim.cli import main
    tasks = tmp_path / "t.jsonl"
    assert main(["generate", "stark-mini", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    ts = read_tasks(tasks)
    answers = tmp_path / "a.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t.id, "step": 0, "text": "[RESULTS_START] [1, 2] [RESULTS_END]"})
                               + "\n" for t in ts))
    assert main(["score", str(tasks), str(answers)]) == 2
    err = capsys.readouterr().err
    assert f"none of its {len(ts)} answer(s) is usable; first: {answers}:1: ignored: task {ts[0].id} has a " \
           "single answer, no steps (got step 0; omit 'step' or give null)" in err
    with answers.open("a") as fh:
        fh.write(json.dumps({"task_id": ts[0].id, "text": "[RESULTS_START] [1, 2] [RESULTS_END]"}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 0
    assert "(got step 0; omit 'step' or give null)" in capsys.readouterr().err


@pytest.mark.parametrize("edit, message", [
    # 'meta' as an array was a TypeError traceback from dict(); an integer id became the string "5"
    ({"meta": [1]}, "'meta' must be an object (or absent), got a JSON array"),
    ({"id": 5}, "'id' must be a string, got a JSON number"),
    ({"family": None}, "'family' must be a string, got null"),
    ({"answer_format": ["point"]}, "'answer_format' must be a string, got a JSON array"),
    ({"prompt": {"text": "q"}}, "'prompt' must be a string, got a JSON object"),
    ({"steps": {"a": 1}}, "'steps' must be an array (or absent), got a JSON object"),
    ({"steps": [1]}, "step 0 is malformed (expected an object, got a JSON number)"),
    ({"steps": [{"index": True}]}, "step 0 is malformed ('index' must be an integer)"),
    ({"steps": [{"index": "0"}]}, "step 0 is malformed ('index' must be an integer)"),
    ({"steps": [{"index": 0}, {"index": 0}]}, "step 1 is malformed (index 0 repeats step 0)"),
    ({"steps": [{"index": 0, "inputs": [1]}]}, "step 0 is malformed ('inputs' must be an object)"),
])
def test_task_fields_of_the_wrong_json_type_are_named(tmp_path, edit, message):
    task = {"id": "t/x", "family": "fam.point", "prompt": "q", "inputs": {}, "answer": [1.0, 2.0],
            "answer_format": "point", **edit}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(task) + "\n")
    with pytest.raises(RecordError) as exc:
        read_tasks(path)
    assert str(exc.value) == f"{path}:1: {message}"


def test_repeated_step_index_found_in_a_large_task_names_both_steps():
    """The repeat check scanned every earlier step for each step (quadratic: 50,000 steps took
    minutes); one lookup per step now.  Non-consecutive indices, the repeat at the end, naming
    the first step of that index; the same task without the repeat loads with its steps in order."""
    from stsim.records import Task
    n = 50_000
    steps = [{"index": 2 * k + 1, "prompt": f"p{k}"} for k in range(n)]
    base = {"id": "t/x", "family": "fam.point", "prompt": "q", "inputs": {}, "answer_format": "point"}
    task = Task.from_dict({**base, "steps": steps})
    assert [s.index for s in task.steps] == list(range(1, 2 * n, 2)) and task.steps[-1].prompt == f"p{n - 1}"
    with pytest.raises(RecordError, match=f"step {n} is malformed \\(index 20001 repeats step 10000\\)"):
        Task.from_dict({**base, "steps": steps + [{"index": 20_001}]})


def test_json_nested_too_deeply_is_named_not_a_recursion_error(tmp_path):
    """A line like [[[[...]]]] 100,000 deep was a RecursionError traceback from json."""
    task = Task("t/x", "fam.point", "q", {}, [1.0, 2.0], "point")
    path = tmp_path / "a.jsonl"
    path.write_text('{"task_id": "t/x", "value": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(RecordError, match=f"{path}:1: JSON nested too deeply to be a record"):
        read_answers(path, {"t/x": task})
    path.write_text('{"task_id": "t/x", "value": ' + "[" * 900 + "]" * 900 + "}\n")  # decodes: checked
    (a,), _ = read_answers(path, {"t/x": task})
    assert a.status == "format_failure"


def test_integer_of_too_many_digits_is_bad_input_not_a_traceback(tmp_path, capsys):
    """A JSON integer of 5,000 digits (over Python's 4,300-digit int conversion limit) in an
    answers or tasks file was a ValueError traceback (exit 1); it is bad input naming the line."""
    task = Task("t/x", "fam.point", "q", {}, [1.0, 2.0], "point")
    path = tmp_path / "a.jsonl"
    path.write_text('{"task_id": "t/x", "text": "[1, 2]"}\n{"task_id": "t/x", "value": ' + "9" * 5000 + "}\n")
    with pytest.raises(RecordError, match=f"{path}:2: not a usable JSON record .*4300 digits"):
        read_answers(path, {"t/x": task})
    tasks = tmp_path / "tasks.jsonl"
    write_jsonl(tasks, [task])
    assert main(["score", str(tasks), str(path), "--out", str(tmp_path / "s")]) == 2
    assert f"stsim: error: {path}:2: not a usable JSON record" in capsys.readouterr().err
    big = json.dumps(task.to_dict()).replace('"inputs": {}', '"inputs": {"n": ' + "1" * 4400 + "}")
    tasks.write_text(big + "\n")
    with pytest.raises(RecordError, match=f"{tasks}:1: not a usable JSON record"):
        read_tasks(tasks)


def test_tolerance_without_a_numeric_task_is_refused(tmp_path, capsys):
    """--tolerance on a file of categorical / geoqa tasks changed nothing but was recorded in
    summary.json and printed as '(numeric: correct if error <= X)', exit 0."""
    tasks, num = tmp_path / "tasks.jsonl", tmp_path / "num.jsonl"
    assert main(["generate", "cardinal", "--n", "1", "-o", str(tasks)]) == 0
    assert main(["generate", "quickstart", "--family", "stark.localization.range", "--n", "1", "-o", str(num)]) == 0
    capsys.readouterr()
    first = json.loads(tasks.read_text().splitlines()[0])["id"]
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": first, "text": "west"}) + "\n")
    assert main(["score", str(tasks), str(answers), "--tolerance", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "stsim: error: --tolerance 0.5:" in err and "no task with a numeric error" in err and "direction" in err
    assert main(["score", str(tasks), str(answers)]) == 0
    # one numeric task among them is enough
    tasks.write_text(tasks.read_text() + num.read_text())
    assert main(["score", str(tasks), str(answers), "--tolerance", "0.5", "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["tolerance"] == 0.5
