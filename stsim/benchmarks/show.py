"""``stsim show TASK_ID --tasks FILE [--answers FILE] [--png OUT]``: one task, as a model and
as the scorer see it.

:func:`describe` prints the prompt (tracking: the first step prompts), the gold answer, the
first-principle baseline's answer and its error, and, for each reply in an answers file, the
text the task's rubric found in it, the typed value (or the outcome and why) and its score.

:func:`draw` draws the scenario with matplotlib (Agg backend, no display needed):

* STARK tier 1 (localisation, tracking): sensors ``A, B, ...`` (triangles), their readings --
  range circles, bearing rays (degrees counter-clockwise from +x, at the sensor), range-bearing
  rays ending at the measured range, proximity discs (filled: detected, dashed: not), time-of-
  arrival circles of radius ``speed * (T - t0)`` when the event time is known -- the truth
  (star) and the baseline's estimate (cross); tracking: the true trajectory (step golds), the
  filter's track (the baseline's per-step estimates) and the readings of the last step drawn.
* STARK tier 2: the two geometries (spatial / DE-9IM) or a trajectory and a geometry
  (spatiotemporal); the two intervals on a time axis (temporal).
* QSTRBench: the calculus's conceptual-neighbourhood graph (networkx circular layout), the
  relations in the question and the gold highlighted.
* STARK fields: the sensor sites (lon, lat degrees) coloured by their last reading, the target.
* STARK city knowledge: the street network (lon, lat), landmarks, and the shortest route A -> B.

Every picture uses data coordinates on its axes (``ax.transData``), so a test can check that a
known point lands on the expected pixel.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..records import Answer, Task

#: colours (shared with the tests, which look for them at known pixels)
SENSOR_COLOUR = "#1f77b4"
TRUTH_COLOUR = "#2ca02c"
ESTIMATE_COLOUR = "#d62728"
READING_COLOUR = "#7f7f7f"
GEOM_COLOURS = ("#1f77b4", "#ff7f0e")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class ShowError(ValueError):
    """A task that cannot be shown or drawn (message says why)."""


# ------------------------------------------------------------------------------------ text
def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def baseline_answers(task: Task) -> list[Answer]:
    """The first-principle baseline's answers to ``task`` (``crashed`` answers, not an
    exception, when it fails)."""
    from .runner import safe_solve
    from ..solvers.base import get_solver
    return safe_solve(get_solver("baseline", {"max_steps": None}), task)


def describe(task: Task, answers: list[Answer] | None = None, max_steps_shown: int = 3) -> str:
    """The text block of ``stsim show``: prompt, gold, baseline answer and, for each of
    ``answers`` (read from an answers file), the rubric's reading and the score."""
    from ..answers import RUBRICS
    from ..registry import FAMILIES, get_family
    from ..scoring.score import score_answers
    try:
        fam = get_family(task.family)
    except KeyError:
        fam = FAMILIES.get(task.family)
    rubric = task.meta.get("rubric", "stark")
    out = [f"task     {task.id}", f"family   {task.family}  (answer format {task.answer_format}, rubric {rubric})"]
    if fam is not None and fam.source:
        out.append(f"source   {fam.source}")
    out += ["", "prompt:", task.prompt]
    for s in task.steps[:max_steps_shown]:
        out.append(s.prompt)
    if len(task.steps) > max_steps_shown:
        out.append(f"... ({len(task.steps)} steps in all)")
    out.append("")
    if task.steps:
        golds = ", ".join(f"step {s.index}: {_short(s.answer, 60)}" for s in task.steps[:max_steps_shown])
        out.append(f"gold     {golds}" + (" ..." if len(task.steps) > max_steps_shown else ""))
    else:
        out.append(f"gold     {_short(task.answer)}")
    base = baseline_answers(task)
    out.append(_answers_block("baseline", task, base, score_answers([task], base, max_steps=None), None))
    if answers is not None:
        mine = [a for a in answers if a.task_id == task.id]
        scores = score_answers([task], mine, max_steps=None)
        out.append(_answers_block("reply", task, mine, scores, RUBRICS.get(rubric)))
    return "\n".join(out)


def _answers_block(label: str, task: Task, answers: list[Answer], scores, rubric_fn) -> str:
    by_step = {s.step: s for s in scores}
    lines = []
    for a in answers[:3] if task.steps else answers:
        where = f" step {a.step}" if a.step is not None else ""
        sc = by_step.get(a.step)
        verdict = "" if sc is None else (f"  error {sc.error:.6g}" if sc.error is not None else
                                         f"  correct {sc.correct}" if sc.correct is not None else "")
        if a.status == "ok":
            lines.append(f"{label}{where}: {_short(a.value, 120)}{verdict}")
        else:
            lines.append(f"{label}{where}: {a.status}" + (f" ({a.detail.splitlines()[0]})" if a.detail else ""))
        if a.text is not None:
            lines.append(f"    reply text: {a.text!r}" if len(a.text) < 300 else
                         f"    reply text: {a.text[:300]!r} ...")
            found = rubric_fn(a.text) if rubric_fn is not None else None
            lines.append(f"    the rubric read: {found!r}" if found is not None else
                         "    the rubric found no answer in it")
    if task.steps and len(answers) > 3:
        lines.append(f"{label}: ... ({len(answers)} step answers)")
    if not answers:
        lines.append(f"{label}: no answer for this task")
    return "\n".join(lines)


# -------------------------------------------------------------------------------- pictures
def draw(task: Task, path: str | Path | None = None, answers: list[Answer] | None = None,
         dpi: int = 100):
    """Draw ``task``'s scenario; save it as PNG at ``path`` when given.  ``answers``: the
    estimate to draw (default: the baseline's).  Returns ``(figure, axes)``.

    Raises:
        ShowError: no picture is defined for the family (e.g. cardinal-direction text).
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fam = task.family
    if answers is None and not fam.startswith(("qstr", "cardinal")):
        answers = baseline_answers(task)
    fig, ax = plt.subplots(figsize=(6, 6), dpi=dpi)
    if "sensors" in task.inputs and "readings" in task.inputs and "domain" in task.inputs:
        _draw_tier1(ax, task, answers or [])
    elif fam in ("stark.relation.spatial", "stark.relation.de9im"):
        _draw_geometries(ax, task)
    elif fam == "stark.relation.spatiotemporal":
        _draw_spatiotemporal(ax, task)
    elif fam in ("stark.relation.temporal", "stark.relation.temporal_choice"):
        _draw_intervals(ax, task)
    elif "calculus" in task.inputs:
        _draw_neighbourhood(ax, task)
    elif "sites" in task.inputs and "values" in task.inputs:
        _draw_field(ax, task)
    elif "city" in task.inputs:
        _draw_city(ax, task)
    else:
        plt.close(fig)
        raise ShowError(f"no picture for family {fam} (its task is text only); the text view shows it all")
    ax.set_title(f"{task.id}", fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=dpi)
    return fig, ax


def _xy(v) -> tuple[float, float] | None:
    ok = isinstance(v, (list, tuple)) and len(v) >= 2 and v[0] is not None and v[1] is not None
    return (float(v[0]), float(v[1])) if ok else None


def _draw_readings(ax, sensors, readings, modality: str, inp: dict, t0: float | None) -> None:
    from matplotlib.patches import Circle
    span = 15.0
    for (sx, sy), r in zip(sensors, readings):
        if r is None:
            continue
        if modality == "range":
            ax.add_patch(Circle((sx, sy), r, fill=False, color=READING_COLOUR, lw=0.8))
        elif modality == "bearing":
            b = math.radians(r)
            ax.plot([sx, sx + span * math.cos(b)], [sy, sy + span * math.sin(b)], color=READING_COLOUR, lw=0.8)
        elif modality == "range_bearing":
            rng, b = r[0], math.radians(r[1])
            ax.plot([sx, sx + rng * math.cos(b)], [sy, sy + rng * math.sin(b)], color=READING_COLOUR, lw=0.8)
            ax.plot([sx + rng * math.cos(b)], [sy + rng * math.sin(b)], "o", color=READING_COLOUR, ms=3)
        elif modality == "proximity":
            radius = float(inp.get("radius", 4.0))
            ax.add_patch(Circle((sx, sy), radius, fill=bool(r), alpha=0.12 if r else 1.0, color=READING_COLOUR,
                                ls="-" if r else "--", lw=0.8))
        elif modality == "toa" and t0 is not None:
            ax.add_patch(Circle((sx, sy), float(inp["wave_speed"]) * (r - t0), fill=False,
                                color=READING_COLOUR, lw=0.8))


def _draw_tier1(ax, task: Task, answers: list[Answer]) -> None:
    inp = task.inputs
    lo, hi = (float(v) for v in inp["domain"])
    sensors = [(float(s[0]), float(s[1])) for s in inp["sensors"]]
    modality = inp["modality"]
    by_step = {a.step: a for a in answers if a.status == "ok"}
    truth = task.meta.get("truth") if isinstance(task.meta.get("truth"), dict) else {}
    if task.steps:
        path = truth.get("positions") or [s.answer for s in task.steps]
        pts = [p for p in (_xy(v) for v in path) if p]
        est = [_xy(by_step[s.index].value) if s.index in by_step else None for s in task.steps]
        last = task.steps[-1]
        t0 = (truth.get("emit_times") or [None])[-1] if modality == "toa" else None
        _draw_readings(ax, sensors, last.inputs["readings"], modality, inp, t0)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=TRUTH_COLOUR, lw=1.5, label="true trajectory")
            ax.plot(*pts[-1], "*", color=TRUTH_COLOUR, ms=14, label=f"truth at step {last.index}")
        es = [p for p in est if p]
        if es:
            ax.plot([p[0] for p in es], [p[1] for p in es], "--", color=ESTIMATE_COLOUR, lw=1.2,
                    label="filter track (baseline)")
        if est and est[-1]:
            ax.plot(*est[-1], "x", color=ESTIMATE_COLOUR, ms=10, mew=2, label="estimate")
    else:
        truth_pt = _xy(truth.get("position")) or _xy(task.answer)
        _draw_readings(ax, sensors, inp["readings"], modality, inp, truth.get("t0"))
        if truth_pt:
            ax.plot(*truth_pt, "*", color=TRUTH_COLOUR, ms=14, label="truth")
        est = by_step.get(None)
        if est is not None and _xy(est.value):
            ax.plot(*_xy(est.value), "x", color=ESTIMATE_COLOUR, ms=10, mew=2, label="estimate (baseline)")
    for i, (sx, sy) in enumerate(sensors):
        ax.plot(sx, sy, "^", color=SENSOR_COLOUR, ms=10)
        ax.annotate(LETTERS[i], (sx, sy), textcoords="offset points", xytext=(6, 6), fontsize=9, color=SENSOR_COLOUR)
    pad = 0.05 * (hi - lo)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal")
    unit = "km" if modality == "toa" else ""
    ax.set_xlabel(f"x {unit}".strip())
    ax.set_ylabel(f"y {unit}".strip())
    ax.legend(loc="best", fontsize=7, framealpha=0.6)


def _shape(g: dict):
    from shapely.geometry import LineString, Point, Polygon
    coords = [tuple(map(float, c)) for c in g["coords"]]
    return {"Point": lambda: Point(coords[0]), "LineString": lambda: LineString(coords),
            "Polygon": lambda: Polygon(coords)}[g["type"]]()


def _plot_shape(ax, geom, colour: str, label: str) -> None:
    if geom.geom_type == "Point":
        ax.plot(geom.x, geom.y, "o", color=colour, ms=8, label=label)
    elif geom.geom_type == "LineString":
        x, y = geom.xy
        ax.plot(x, y, "-", color=colour, lw=2, label=label)
    else:
        x, y = geom.exterior.xy
        ax.fill(x, y, color=colour, alpha=0.35, label=label)
        ax.plot(x, y, "-", color=colour, lw=1.5)


def _draw_geometries(ax, task: Task) -> None:
    a, b = _shape(task.inputs["a"]), _shape(task.inputs["b"])
    _plot_shape(ax, a, GEOM_COLOURS[0], f"a ({a.geom_type})")
    _plot_shape(ax, b, GEOM_COLOURS[1], f"b ({b.geom_type})")
    what = task.inputs.get("predicate")
    ax.set_xlabel(f"{what}(a, b)? gold: {task.answer}" if what else f"DE-9IM(a, b) = {task.answer}")
    ax.set_aspect("equal")
    ax.legend(fontsize=7)


def _draw_spatiotemporal(ax, task: Task) -> None:
    inp = task.inputs
    g = _shape(inp["geometry"])
    _plot_shape(ax, g, GEOM_COLOURS[1], f"geometry ({g.geom_type})")
    traj = [(float(p[0]), float(p[1])) for p in inp["trajectory"]]
    ax.plot([p[0] for p in traj], [p[1] for p in traj], "-o", color=GEOM_COLOURS[0], ms=3, label="trajectory")
    for (x, y), t in zip(traj, inp["times"]):
        ax.annotate(f"{t:g}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=6)
    ax.set_xlabel(f"{inp['predicate']} event interval {inp['relation']} {inp['reference']}? gold: {task.answer}")
    ax.set_aspect("equal")
    ax.legend(fontsize=7)


def _draw_intervals(ax, task: Task) -> None:
    a, b = task.inputs["a"], task.inputs["b"]
    ax.barh([1], [a[1] - a[0]], left=[a[0]], height=0.4, color=GEOM_COLOURS[0], label=f"a = {a}")
    ax.barh([0], [b[1] - b[0]], left=[b[0]], height=0.4, color=GEOM_COLOURS[1], label=f"b = {b}")
    ax.set_yticks([0, 1], ["b", "a"])
    ask = task.inputs.get("relation")
    ax.set_xlabel("time" + (f"; {ask}(a, b)? gold: {task.answer}" if ask else f"; Allen relation: {task.answer}"))
    ax.set_ylim(-1, 2)
    ax.margins(x=0.1)
    ax.legend(fontsize=7)


def _draw_neighbourhood(ax, task: Task) -> None:
    import networkx as nx
    from ..qstr import get_calculus
    cal = get_calculus(task.inputs["calculus"])
    g = nx.Graph()
    g.add_nodes_from(cal.names)
    for r, nb in cal.neighbours.items():
        g.add_edges_from((r, s) for s in nb)
    pos = nx.circular_layout(g, scale=1.0)
    asked = {str(r) for k in ("relation", "relations", "r1", "r2") for r in
             (task.inputs.get(k) if isinstance(task.inputs.get(k), list) else [task.inputs.get(k)]) if r}
    gold = set(task.answer if isinstance(task.answer, list) else [task.answer])
    colours = [TRUTH_COLOUR if n in gold else (ESTIMATE_COLOUR if n in asked else "#dddddd") for n in g.nodes]
    nx.draw_networkx(g, pos, ax=ax, node_color=colours, node_size=500, font_size=7)
    ax.set_xlabel(f"{cal.abbrev} conceptual neighbourhood graph; red: in the question, green: gold")
    ax.set_aspect("equal")


def _draw_field(ax, task: Task) -> None:
    inp = task.inputs
    sites = [(float(s[0]), float(s[1])) for s in inp["sites"]]
    vals = inp["values"]
    last = vals[-1] if vals and isinstance(vals[0], list) else vals
    xs, ys = [s[0] for s in sites], [s[1] for s in sites]
    sc = ax.scatter(xs, ys, c=[v if v is not None else math.nan for v in last], cmap="coolwarm", s=120,
                    marker="^", edgecolors="k")
    ax.figure.colorbar(sc, ax=ax, label=f"last reading ({inp.get('unit', '')})", shrink=0.7)
    target = inp.get("target_site")
    if target:
        ax.plot(target[0], target[1], "*", color=TRUTH_COLOUR, ms=16, label=f"target (gold {task.answer:.2f})")
        ax.legend(fontsize=7)
    cx, cy = inp["center"]
    ax.plot(cx, cy, "+", color="k", ms=10)
    ax.set_xlabel("longitude (degrees east)")
    ax.set_ylabel("latitude (degrees north)")
    ax.ticklabel_format(useOffset=False)


def _draw_city(ax, task: Task) -> None:
    from ..sim.city import City
    city = City.from_json(task.inputs["city"])
    g = city.graph
    for u, v in g.edges:
        (x0, y0), (x1, y1) = city.lonlat(u), city.lonlat(v)
        ax.plot([x0, x1], [y0, y1], "-", color="#bbbbbb", lw=1)
    for p in city.places:
        if p.kind == "landmark":
            ax.plot(p.lon, p.lat, "s", color=SENSOR_COLOUR, ms=5)
            ax.annotate(p.name, (p.lon, p.lat), fontsize=5, textcoords="offset points", xytext=(3, 3))
    a, b = task.inputs.get("a"), task.inputs.get("b")
    if a and b:
        pa, pb = city.place(a), city.place(b)
        if pa.node is not None and pb.node is not None:
            route = city.shortest_route(pa.node, pb.node)
            pts = [city.lonlat(n) for n in route]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=ESTIMATE_COLOUR, lw=2.5,
                    label=f"shortest route {a} -> {b}")
            ax.legend(fontsize=7)
    ax.set_xlabel(f"longitude (degrees east); gold: {task.answer}")
    ax.ticklabel_format(useOffset=False)
    ax.set_ylabel("latitude (degrees north)")
