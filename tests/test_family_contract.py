"""One contract, scikit-learn style (``parametrize_with_checks``), that every registered family
and its default baseline pass.  A new family gets these checks without writing a test.

For each family (task index 0 and 1 of a fixed suite seed):

* generation is a pure function of (family, config, seed, index): the same bytes twice, in
  either order;
* the task validates and survives a JSONL round trip byte for byte;
* the prompt says how the family's rubric reads a reply (its markers);
* the gold answer, written as a model would write it in the rubric's format, is read back by
  the family's own rubric and scores as exactly right;
* the default baseline's answers are well-formed (one per scored item, known statuses, ``ok``
  values of the answer format's shape) and score without error;
* where the family defines ``validate``: a copy with no inputs, a copy whose list inputs hold
  values of the wrong type, and a copy that lost its last reading (``readings`` or field
  ``values``) are each rejected with a :class:`~stsim.records.RecordError`.
"""
from __future__ import annotations

import copy
import json

import pytest

from stsim.answers import check_gold, get_format, parse_answer, prompt_names_rubric
from stsim.baselines import BASELINES
from stsim.records import ANSWER_STATUSES, RecordError, Task, dumps
from stsim.registry import generate_task, load_families, validate_task
from stsim.scoring.score import score_answers, scored_steps
from stsim.solvers.base import BaselineSolver

FAMILIES = load_families()
NAMES = sorted(FAMILIES)
SEED = 20261130


def _task(name: str, index: int) -> Task:
    return generate_task(name, index, suite="contract", suite_seed=SEED)


def _line(task: Task) -> str:
    return dumps(task.to_dict())


def test_there_are_families_to_check():
    assert len(NAMES) >= 284  # STARK, QSTRBench and cardinal families at least


@pytest.mark.parametrize("name", NAMES)
def test_generation_is_pure(name):
    a0, a1 = _line(_task(name, 0)), _line(_task(name, 1))
    b1, b0 = _line(_task(name, 1)), _line(_task(name, 0))
    assert (a0, a1) == (b0, b1)
    assert a0 != a1, "two indices gave the same task"


@pytest.mark.parametrize("name", NAMES)
def test_task_validates_and_round_trips(name):
    task = _task(name, 0)
    validate_task(task)
    line = _line(task)
    back = Task.from_dict(json.loads(line))
    validate_task(back)
    assert _line(back) == line


@pytest.mark.parametrize("name", NAMES)
def test_prompt_names_the_rubric(name):
    fam, task = FAMILIES[name], _task(name, 0)
    assert prompt_names_rubric(fam.rubric, task.prompt), \
        f"{name}: the prompt does not say how the {fam.rubric!r} rubric reads a reply"


def _reply(rubric: str, fmt: str, gold) -> str:
    """The gold answer written as a model following the prompt would write it."""
    if rubric == "stark":
        body = json.dumps(gold) if isinstance(gold, list) else f"[{gold}]"
        return f"Working shown here.\n[RESULTS_START] {body} [RESULTS_END]"
    if rubric == "qstrbench":
        names = gold if isinstance(gold, list) else [gold]
        return "Reasoning first.\n### Answer: " + ", ".join(names)
    if rubric == "cardinal":
        return str(gold)
    if rubric == "geoqa":
        from stsim.answers_geo import answer_text
        return "Working shown here.\nAnswer: " + answer_text(fmt, gold)
    raise AssertionError(f"no reply writer for rubric {rubric!r}: add one to this contract test")


@pytest.mark.parametrize("name", NAMES)
def test_gold_reads_back_through_the_rubric(name):
    fam, task = FAMILIES[name], _task(name, 0)
    spec = task.meta.get("answer_spec")
    fmt = get_format(fam.answer_format)
    for step in scored_steps(task, None):
        gold = task.steps[step].answer if step is not None else task.answer
        check_gold(fam.answer_format, gold, spec)
        ans = parse_answer(_reply(fam.rubric, fam.answer_format, gold), task_id=task.id, step=step,
                           answer_format=fam.answer_format, rubric=fam.rubric, spec=spec)
        assert ans.status == "ok", f"{name} step {step}: gold {gold!r} not read back: {ans.detail}"
        if fmt.numeric:
            assert fmt.error(ans.value, gold) == pytest.approx(0.0, abs=1e-9)
        else:
            assert fmt.correct(ans.value, gold) == 1, (ans.value, gold)


@pytest.mark.parametrize("name", NAMES)
def test_baseline_answers_are_well_formed_and_score(name):
    if name not in BASELINES:
        pytest.skip(f"{name} has no baseline")
    task = _task(name, 0)
    answers = BaselineSolver().solve(task)
    keys = [(a.task_id, a.step) for a in answers]
    assert len(keys) == len(set(keys)), "two answers for one item"
    assert set(keys) == {(task.id, s) for s in scored_steps(task, None)}
    spec = task.meta.get("answer_spec")
    for a in answers:
        assert a.status in ANSWER_STATUSES
        if a.status == "ok":
            check_gold(task.answer_format, a.value, spec)
    scores = score_answers([task], answers, max_steps=None)
    assert len(scores) == len(keys)
    fmt = get_format(task.answer_format)
    for s in scores:
        if s.status == "ok":
            assert (s.error is not None and s.error >= 0) if fmt.numeric else s.correct in (0, 1)


def _corruptions(task: Task):
    """(what, corrupted copy) pairs a validator must reject."""
    inp = task.inputs
    yield "no inputs", {}
    lists = {k: v for k, v in inp.items() if isinstance(v, list) and v}
    for key, val in lists.items():
        bad = copy.deepcopy(inp)
        bad[key] = [{"not": "a value of this input"} for _ in val]
        yield f"{key!r} holds values of the wrong type", bad
    for key in ("readings", "values"):  # a reading removed (parallel to sensors, steps or sites)
        if isinstance(inp.get(key), list) and inp[key]:
            bad = copy.deepcopy(inp)
            bad[key] = bad[key][:-1]
            yield f"{key!r} lost its last entry", bad


@pytest.mark.parametrize("name", NAMES)
def test_validate_rejects_corrupted_inputs(name):
    fam = FAMILIES[name]
    if fam.validate is None:
        pytest.skip(f"{name} defines no validate")
    task = _task(name, 0)
    for what, inputs in _corruptions(task):
        bad = copy.copy(task)
        bad.inputs = inputs
        with pytest.raises(RecordError):
            fam.validate(bad)
            pytest.fail(f"{name}: validate accepted a copy whose {what}")
