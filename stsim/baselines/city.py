"""Oracle solvers for the simulated-city families (:mod:`stsim.generators.stark_city`).

STARK builds no first-principle baseline for these (Appendix 7.6: spatial libraries and map
services answer them exactly).  Here the city is in the task, so each solver rebuilds it from
``inputs['city']`` and recomputes the answer (azimuth, geodesic distance, Dijkstra route,
travel times): it reads only the inputs, never the gold, and should score 100 %.  STARK's
published tier-3 items carry no city (they need world knowledge): the solvers return an
explicit ``no_estimate`` for them.
"""
from __future__ import annotations

from typing import Any, Callable

from ..records import Answer, Task
from ..sim.city import City, azimuth, compass8, distance_m


def _direction(city: City, inp: dict[str, Any]) -> bool:
    a, b = city.place(inp["a"]), city.place(inp["b"])
    return compass8(azimuth((b.lon, b.lat), (a.lon, a.lat))) == inp["asked"]


def _proximity(city: City, inp: dict[str, Any]) -> bool:
    a = city.place(inp["a"])
    return any(distance_m((a.lon, a.lat), (p.lon, p.lat)) <= float(inp["radius_m"])
               for p in city.places if p.kind == inp["kind"])


def _route(city: City, inp: dict[str, Any]) -> bool:
    route = city.shortest_route(city.place(inp["a"]).node, city.place(inp["b"]).node)
    return city.place(inp["c"]).node in route


def _eta(city: City, inp: dict[str, Any]) -> bool:
    route = city.shortest_route(city.place(inp["a"]).node, city.place(inp["b"]).node)
    minutes = city.route_length_m(route) / 1000.0 / float(inp["speed_kmh"]) * 60.0
    return float(inp["depart_min"]) + minutes <= float(inp["deadline_min"])


def _route_segment(city: City, inp: dict[str, Any]) -> bool:
    route = city.shortest_route(city.place(inp["a"]).node, city.place(inp["b"]).node)
    u, v = inp["segment"]
    w1, w2 = inp["window_min"]
    for (x, y), (t_in, t_out) in zip(zip(route, route[1:]), city.edge_times_s(route)):
        if {x, y} == {u, v}:
            enter = float(inp["depart_min"]) + t_in / 60.0
            leave = float(inp["depart_min"]) + t_out / 60.0
            return enter <= w2 and w1 <= leave
    return False


RULES: dict[str, Callable[[City, dict[str, Any]], bool]] = {
    "stark.knowledge.direction": _direction,
    "stark.knowledge.proximity": _proximity,
    "stark.knowledge.route": _route,
    "stark.knowledge.eta": _eta,
    "stark.knowledge.route_segment": _route_segment,
}


def solve_city(task: Task, solver: str = "baseline") -> list[Answer]:
    """Recompute the yes/no answer from the task's city (1 = yes)."""
    if "city" not in task.inputs:
        return [Answer(task.id, None, "no_estimate", solver=solver,
                       detail="no simulated city in the task: this item needs world knowledge")]
    city = City.from_json(task.inputs["city"])
    return [Answer(task.id, None, "ok", value=int(RULES[task.family](city, task.inputs)), solver=solver)]


BASELINES = {f: solve_city for f in RULES}
