"""Scoring rules that hold across families."""
from stsim.scoring.score import score_answers, summarise
from stsim.records import Answer, Task
from stsim.registry import generate_task, validate_task


def _binary_task(i: int) -> Task:
    return Task(f"t/x/{i:06d}", "demo.binary", "q", {}, 1, "binary", [], {})


def test_a_categorical_family_with_only_failures_reports_accuracy_zero():
    tasks = [_binary_task(i) for i in range(3)]
    answers = [Answer(tasks[0].id, None, "format_failure", detail="no block"),
               Answer(tasks[1].id, None, "refusal")]
    row = summarise(score_answers(tasks, answers))["demo.binary"]
    assert row["accuracy"] == 0.0 and row["failures"] == 3 and "trimmed_rmse" not in row
    assert row["failure_kinds"] == {"format_failure": 1, "missing": 1, "refusal": 1}


def test_failures_count_as_wrong_in_accuracy():
    tasks = [_binary_task(i) for i in range(4)]
    answers = [Answer(t.id, None, "ok", value=1) for t in tasks[:3]]
    assert summarise(score_answers(tasks, answers))["demo.binary"]["accuracy"] == 0.75


def test_released_tier3_items_pass_validation(stark_data):
    from stsim.benchmarks.stark_release.tier3 import load_published_tier3
    tasks = list(load_published_tier3(stark_data, 1, {}))
    assert len(tasks) == 7
    for t in tasks:
        validate_task(t)


def test_generated_city_task_still_validated():
    import copy

    import pytest

    from stsim.records import RecordError
    t = generate_task("stark.knowledge.route", 0)
    validate_task(t)
    bad = copy.deepcopy(t)
    bad.inputs["city"] = {"nodes": "garbage"}
    with pytest.raises(RecordError, match="inputs.city is malformed"):
        validate_task(bad)
