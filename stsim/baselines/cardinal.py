"""First-principle solver for the cardinal-direction families: draw the scene and measure.

Independent of the generator's vector rule (:func:`stsim.spatial.compass.direction_of_feature`),
this solver builds the scene of each question as shapely geometry in a local (east, north)
frame, moves the agent along its heading (and back, after turning around), finds the target
point -- the nearest point of the lake, of the road, or of the sea around the island; the
park's centroid for the bandstand -- and names the azimuth from the agent to it with
:func:`stsim.spatial.geo.compass_name`.  It reads only ``task.inputs`` and is exact on every
question (100 % accuracy), which makes it the benchmark's oracle.
"""
from __future__ import annotations

import math

from shapely import affinity
from shapely.geometry import LineString, Point, box
from shapely.ops import nearest_points

from ..records import Answer, Task
from ..spatial.compass import COMPASS8
from ..spatial.geo import compass_name

#: Scene scale: features have radius / half-width 1; the agent stands this far from the edge
#: and moves this far along its heading.
OFFSET = 0.01
STEP = 0.05


def _unit(direction: str) -> tuple[float, float]:
    a = math.radians(45.0 * COMPASS8.index(direction))
    return math.sin(a), math.cos(a)


def _target_point(inputs: dict, agent: Point) -> Point:
    """Where the question's target is, as seen from ``agent``."""
    feature = inputs["feature"]
    if feature == "lake":
        lake = Point(0, 0).buffer(1.0, quad_segs=256)
        return nearest_points(agent, lake)[1]
    if feature == "island":
        island = Point(0, 0).buffer(1.0, quad_segs=256)
        sea = box(-10, -10, 10, 10).difference(island)
        return nearest_points(agent, sea)[1]
    if feature == "park":
        # a square park whose edge on the agent's side faces that side
        park = affinity.rotate(box(-1, -1, 1, 1), -45.0 * COMPASS8.index(inputs["side"]),
                               origin=(0, 0))
        return park.centroid
    if feature == "road":
        ax, ay = _unit(inputs["road_runs"][1])
        road = LineString([(-100 * ax, -100 * ay), (100 * ax, 100 * ay)])
        return nearest_points(agent, road)[1]
    raise ValueError(f"unknown feature {feature!r}")


def _start(inputs: dict) -> Point:
    """The agent's starting point: on the ``side`` edge, just outside a lake, just inside an
    island's shore, on a park's edge midpoint, or beside the road (feature centred at 0)."""
    sx, sy = _unit(inputs["side"])
    r = {"lake": 1.0 + OFFSET, "island": 1.0 - OFFSET, "park": 1.0, "road": OFFSET}[inputs["feature"]]
    return Point(r * sx, r * sy)


def solve_cardinal(task: Task, solver: str = "baseline") -> list[Answer]:
    """Answer one cardinal-direction task by measuring its drawn scene.

    Returns a ``no_estimate`` answer when the scene is impossible (the heading does not run
    along the side, or a road not along the heading).
    """
    x = task.inputs
    hx, hy = _unit(x["heading"])
    sx, sy = _unit(x["side"])
    if abs(hx * sx + hy * sy) > 1e-9:
        return [Answer(task.id, None, "no_estimate", solver=solver,
                       detail=f"heading {x['heading']} does not run along the {x['side']} side")]
    agent = _start(x)
    agent = Point(agent.x + STEP * hx, agent.y + STEP * hy)        # moving along the edge
    if x["turned_around"]:
        agent = Point(agent.x - 2 * STEP * hx, agent.y - 2 * STEP * hy)  # and back past the start
    target = _target_point(x, agent)
    azimuth = math.degrees(math.atan2(target.x - agent.x, target.y - agent.y)) % 360.0
    return [Answer(task.id, None, "ok", value=compass_name(azimuth, 8), solver=solver)]


BASELINES = {"cardinal.large": solve_cardinal, "cardinal.t4_from_agent": solve_cardinal}
