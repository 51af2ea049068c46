"""Same seed, same bytes; any task regenerated alone equals its copy; the audit passes on
generated tasks and flags a gold answer moved away from its readings."""
import copy
import json

import pytest

from stsim.scoring.audit import audit_task
from stsim.benchmarks.builtin_suites import STARK_TIER1
from stsim.cli import main
from stsim.records import Task, dumps, read_tasks
from stsim.registry import generate_task


def test_same_seed_same_bytes_and_tasks_regenerate_alone(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["generate", "quickstart", "--n", "2", "--seed", "7", "-o", str(a)]) == 0
    assert main(["generate", "quickstart", "--n", "2", "--seed", "7", "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    lines = a.read_text().splitlines()
    assert len(lines) == 2 * len(STARK_TIER1)
    # regenerate the last task of the file alone, out of order
    last = json.loads(lines[-1])
    alone = generate_task(last["family"], last["meta"]["index"], suite="quickstart", suite_seed=7)
    assert dumps(alone.to_dict()) == lines[-1]


def test_different_seeds_differ():
    t1 = generate_task("stark.localization.range", 0, suite_seed=1)
    t2 = generate_task("stark.localization.range", 0, suite_seed=2)
    assert t1.answer != t2.answer


@pytest.mark.parametrize("family", STARK_TIER1)
def test_audit_passes_on_generated_tasks(family):
    for i in range(3):
        results = audit_task(generate_task(family, i, suite_seed=3))
        bad = [r for r in results if not r.ok]
        assert not bad, bad[:3]


@pytest.mark.parametrize("family, shift", [
    ("stark.localization.range", [0.3, 0.0]),
    ("stark.localization.bearing", [0.0, 0.5]),
    ("stark.localization.proximity", [4.0, 4.0]),
    ("stark.localization.event", [0.4, 0.0]),
])
def test_audit_flags_a_moved_gold_answer(family, shift):
    task = generate_task(family, 0, suite_seed=3)
    moved = copy.deepcopy(task)
    moved.answer = [task.answer[0] + shift[0], task.answer[1] + shift[1]]
    if family.endswith("proximity"):  # move to a point whose detections differ
        import numpy as np
        from stsim.sim.sensors import ProximitySensor
        s = np.array(task.inputs["sensors"])
        want = np.array(task.inputs["readings"])
        for x in np.linspace(0, 10, 41):
            for y in np.linspace(0, 10, 41):
                if (ProximitySensor(4.0).true(s, np.array([[x, y]]))[0] != want).any():
                    moved.answer = [x, y]
                    break
            else:
                continue
            break
    (r,) = audit_task(moved)
    assert not r.ok and r.violation > 0 and "Sensor" in r.reason or "ToA" in r.reason


def test_audit_flags_a_moved_temporal_gold():
    task = generate_task("stark.temporal_localization.event", 0, suite_seed=3)
    moved = copy.deepcopy(task)
    moved.answer = task.answer + 0.5
    (ok,) = audit_task(task)
    (bad,) = audit_task(moved)
    assert ok.ok and not bad.ok and bad.violation > 0.1


def test_audit_cli_exit_codes(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.*", "-o", str(good)])
    assert main(["audit", str(good)]) == 0
    tasks = read_tasks(good)
    tasks[0].answer = [tasks[0].answer[0] + 1.0, tasks[0].answer[1]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(dumps(t.to_dict()) + "\n" for t in tasks))
    capsys.readouterr()
    assert main(["audit", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {tasks[0].id}" in out and "1 inconsistent" in out


@pytest.mark.parametrize("family", ["stark.tracking.range", "stark.tracking.event"])
def test_audit_names_the_sensor_as_the_prompt_does(family):
    """Audit findings said 'sensor 2' (ToA: 'ToA reading 2', counting only the sensors that
    reported, so a dropped reading before it named the wrong sensor); the prompt says
    'Sensor C'."""
    task = generate_task(family, 0, suite_seed=3)
    assert "- Sensor A: [" in task.prompt
    # a step with a dropped reading before the last one that reported
    k, row = next((k, r) for k, r in enumerate(task.inputs["readings"])
                  if r[0] is None and sum(v is not None for v in r) >= 2 and r[-1] is not None)
    bad = copy.deepcopy(task)
    bad.inputs["readings"][k][-1] = row[-1] + 3.0
    bad.steps[k].inputs["readings"][-1] = row[-1] + 3.0
    r = next(r for r in audit_task(bad) if r.step == k)
    assert not r.ok and r.reason.startswith("Sensor D (index 3): "), r.reason
