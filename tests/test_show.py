"""`stsim show`: the text view (prompt, gold, baseline, how a reply was read) and the pictures:
non-blank, and known points (sensors, landmarks, field sites, truth) on the pixels their data
coordinates map to."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from stsim.benchmarks.show import ESTIMATE_COLOUR, SENSOR_COLOUR, TRUTH_COLOUR, draw
from stsim.cli import main
from stsim.records import read_tasks


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("show") / "tasks.jsonl"
    assert main(["generate", "stark-mini", "--n", "1", "-o", str(path)]) == 0
    return path


def _task(path, family):
    return next(t for t in read_tasks(path) if t.family == family)


def _rgb(hex_colour):
    return np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])


def _pixel(png, fig, ax, xy):
    """The RGB of the saved image at the pixel where data point ``xy`` lands."""
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[..., :3]
    px, py = ax.transData.transform(xy)
    h = img.shape[0]
    return img[int(round(h - py)), int(round(px))]


def _nonblank(png):
    import matplotlib.image as mpimg
    img = mpimg.imread(png)[..., :3]
    return float(np.mean(np.any(img < 0.95, axis=-1)))


@pytest.mark.parametrize("family", ["stark.localization.range", "stark.localization.bearing",
                                    "stark.localization.proximity", "stark.tracking.range_bearing",
                                    "stark.localization.event"])
def test_tier1_sensors_land_on_their_pixels(tmp_path, tasks_file, family):
    import matplotlib.pyplot as plt
    task = _task(tasks_file, family)
    png = tmp_path / "t.png"
    fig, ax = draw(task, png)
    assert _nonblank(png) > 0.01
    for s in task.inputs["sensors"]:  # the sensor triangles are drawn last, on top
        assert np.allclose(_pixel(png, fig, ax, s), _rgb(SENSOR_COLOUR), atol=0.02), s
    # an empty corner of the domain stays background (white), so the check above can fail
    plt.close(fig)


def test_truth_star_and_estimate_on_their_pixels(tmp_path, tasks_file):
    """A localisation task drawn with a hand-made estimate 3 units from the truth: the truth
    pixel is green, the estimate pixel red."""
    import matplotlib.pyplot as plt
    from stsim.records import Answer
    task = _task(tasks_file, "stark.localization.range")
    gx, gy = task.answer
    far = [gx - 3 if gx > 5 else gx + 3, gy]
    png = tmp_path / "t.png"
    fig, ax = draw(task, png, answers=[Answer(task.id, None, "ok", value=far)])
    assert np.allclose(_pixel(png, fig, ax, (gx, gy)), _rgb(TRUTH_COLOUR), atol=0.02)
    assert np.allclose(_pixel(png, fig, ax, far), _rgb(ESTIMATE_COLOUR), atol=0.02)
    plt.close(fig)


@pytest.mark.parametrize("family", ["stark.field.spatial_impute", "stark.knowledge.route",
                                    "stark.relation.spatial", "stark.relation.spatiotemporal",
                                    "stark.relation.temporal", "stark.relation.de9im", "stark.tracking.event"])
def test_other_pictures_are_drawn(tmp_path, tasks_file, family):
    import matplotlib.pyplot as plt
    task = _task(tasks_file, family)
    png = tmp_path / "t.png"
    fig, ax = draw(task, png)
    assert _nonblank(png) > 0.01
    if family == "stark.field.spatial_impute":
        assert np.allclose(_pixel(png, fig, ax, task.inputs["target_site"]), _rgb(TRUTH_COLOUR), atol=0.02)
    if family == "stark.knowledge.route":
        from stsim.sim.city import City
        city = City.from_json(task.inputs["city"])
        a = city.place(task.inputs["a"])
        route = city.shortest_route(a.node, city.place(task.inputs["b"]).node)
        on_route = []  # points along each street of the route (labels may cover a few)
        for n0, n1 in zip(route, route[1:]):
            (x0, y0), (x1, y1) = city.lonlat(n0), city.lonlat(n1)
            for f in (0.3, 0.5, 0.7):
                px = _pixel(png, fig, ax, (x0 + f * (x1 - x0), y0 + f * (y1 - y0)))
                on_route.append(np.allclose(px, _rgb(ESTIMATE_COLOUR), atol=0.05))
        assert np.mean(on_route) > 0.8, on_route
        # a street corner off the route is not drawn in the route colour
        off = next(n for n in city.graph.nodes if n not in route and all(m not in route for m in city.graph[n]))
        assert not np.allclose(_pixel(png, fig, ax, city.lonlat(off)), _rgb(ESTIMATE_COLOUR), atol=0.05)
    plt.close(fig)


def test_neighbourhood_graph(tmp_path):
    import matplotlib.pyplot as plt
    from stsim.registry import generate_task
    task = generate_task("qstr.rcc8.cn", 0)
    png = tmp_path / "cn.png"
    fig, ax = draw(task, png)
    assert _nonblank(png) > 0.01
    assert "RCC8" in ax.get_xlabel().replace("-", "")
    plt.close(fig)


def test_show_text_reads_a_reply(tmp_path, tasks_file, capsys):
    task = _task(tasks_file, "stark.localization.range")
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": task.id, "step": None,
                                   "text": "I think\n[RESULTS_START] [1, 2] [RESULTS_END]"}) + "\n")
    png = tmp_path / "p.png"
    assert main(["show", task.id, "--tasks", str(tasks_file), "--answers", str(answers), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert task.prompt in out and f"gold     {json.dumps(task.answer)}" in out
    assert "baseline: [" in out and "the rubric read: '[1, 2]'" in out
    err = math.dist(task.answer, [1, 2])
    assert f"reply: [1.0, 2.0]  error {err:.6g}" in out
    assert png.exists() and _nonblank(png) > 0.01
    answers.write_text(json.dumps({"task_id": task.id, "step": None, "text": "no idea"}) + "\n")
    assert main(["show", task.id, "--tasks", str(tasks_file), "--answers", str(answers)]) == 0
    assert "the rubric found no answer in it" in capsys.readouterr().out


def test_show_bad_input(tmp_path, tasks_file, capsys):
    assert main(["show", "nope", "--tasks", str(tasks_file)]) == 2
    assert "no task 'nope'" in capsys.readouterr().err
    task = _task(tasks_file, "stark.knowledge.poi")
    assert main(["show", task.id, "--tasks", str(tasks_file), "--png", str(tmp_path / "x.png")]) == 2
    assert "no picture for family stark.knowledge.poi" in capsys.readouterr().err
    assert main(["show", task.id, "--tasks", str(tasks_file), "--png", str(tmp_path / "no" / "x.png")]) == 2


@pytest.mark.parametrize("family, edit, message", [
    # readings that are not numbers reached matplotlib: a ConversionError traceback
    ("stark.localization.range", lambda t: t["inputs"].update(readings=["a", "b", None, True]),
     "reading 'a' is not a number"),
    ("stark.localization.range", lambda t: t["inputs"].pop("sensors"), "inputs.sensors is missing"),
])
def test_show_checks_the_task_as_score_and_audit_do(tmp_path, tasks_file, capsys, family, edit, message):
    task = next(json.loads(line) for line in tasks_file.read_text().splitlines()
                if json.loads(line)["family"] == family)
    edit(task)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(task) + "\n")
    assert main(["show", task["id"], "--tasks", str(bad), "--png", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: task {task['id']}" in err and message in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()


def test_show_answers_file_without_a_reply_to_this_task(tmp_path, tasks_file, capsys):
    """An answers file answering other tasks of the file, not this one, was refused as
    'answers of another suite, seed or --n?' (exit 2): it is the task that has no reply."""
    tasks = read_tasks(tasks_file)
    task, other = _task(tasks_file, "stark.localization.range"), tasks[-1]
    assert other.id != task.id
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": other.id, "step": None if not other.steps else other.steps[0].index,
                                   "text": "no idea"}) + "\n")
    assert main(["show", task.id, "--tasks", str(tasks_file), "--answers", str(answers)]) == 0
    assert "reply: no answer for this task" in capsys.readouterr().out
