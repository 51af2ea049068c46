"""STARK knowledge-aware families on a simulated city (STARK §3.2.3, Tables 22-26), each a
yes/no question (answer 1/0, balanced: the label is drawn first with probability 1/2 and the
question is built to have it), with the gold computed from the city (:mod:`stsim.sim.city`):

=================================  ==========================================================
family                             question (gold)
=================================  ==========================================================
stark.knowledge.direction          is landmark A <dir> of landmark B? (8-point sector of the
                                   geodesic azimuth from B to A)
stark.knowledge.proximity          is there a <kind> within d metres of landmark A?
                                   (geodesic distance to the nearest amenity of that kind)
stark.knowledge.route              does the shortest route A -> B pass by landmark C?
                                   (C's corner is a node of the route)
stark.knowledge.eta                leaving A at t1 at v km/h on the printed route, can I
                                   reach B by t2? (route length / v <= t2 - t1)
stark.knowledge.route_segment      driving A -> B at the speed limits from t1, was I on the
                                   block X-Y during [w1, w2]? (closed-interval overlap)
=================================  ==========================================================

The city itself is recorded in ``inputs['city']`` (:meth:`City.to_json`), so the oracle solver
(:mod:`stsim.baselines.city`) re-derives every answer from the inputs alone.  Each task draws
its own city from the task's random stream.  Questions too close to a decision boundary are
redrawn (direction: within ``margin_deg`` of a sector edge; distances and times: within 10 %).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import Family, TaskBody, register_family
from ..sim.city import COMPASS8, City, azimuth, compass8, distance_m, make_city

CITY_DEFAULTS: dict[str, Any] = {"rows": 7, "cols": 7, "spacing_m": 400.0, "center": [-118.25, 34.05],
                                 "closed_fraction": 0.1, "n_landmarks": 10}
_YESNO = ("Answer 1 for yes or 0 for no, in this form (nothing else between the markers): "
          "[RESULTS_START] [p] [RESULTS_END]. Example: [RESULTS_START] [1] [RESULTS_END]")
RADII_M = (100, 150, 200, 250, 300, 400, 500, 600, 750, 1000, 1250, 1500, 2000, 2500, 3000)


def _city(rng, cfg) -> City:
    return make_city(rng, int(cfg["rows"]), int(cfg["cols"]), float(cfg["spacing_m"]),
                     tuple(cfg["center"]), float(cfg["closed_fraction"]), int(cfg["n_landmarks"]))


def _landmark_list(city: City) -> str:
    rows = [f"- {p.name}: corner of {city.corner(p.node)}, lat {p.lat:.6f}, lon {p.lon:.6f}"
            for p in city.landmarks()]
    return "Landmarks of the city:\n" + "\n".join(rows)


def _hhmm(minutes: float) -> str:
    m = int(round(minutes)) % (24 * 60)
    return f"{m // 60:02d}:{m % 60:02d}"


def _body(prompt_lines, city, label, **inputs) -> TaskBody:
    return TaskBody("\n".join([*prompt_lines, _YESNO]), {"city": city.to_json(), **inputs}, int(label),
                    meta={"label_drawn": int(label)})


# ------------------------------------------------------------------------------------ families
def make_direction(rng: np.random.Generator, cfg: dict[str, Any]) -> TaskBody:
    city = _city(rng, cfg)
    label = int(rng.integers(0, 2))
    marks = city.landmarks()
    for _ in range(200):
        a, b = rng.choice(len(marks), 2, replace=False)
        A, B = marks[int(a)], marks[int(b)]
        az = azimuth((B.lon, B.lat), (A.lon, A.lat))
        off_edge = min((az - 22.5) % 45.0, 45.0 - (az - 22.5) % 45.0)
        if off_edge >= float(cfg["margin_deg"]):
            break
    truth = compass8(az)
    if label:
        asked = truth
    else:
        k = COMPASS8.index(truth)
        asked = COMPASS8[(k + int(rng.choice([1, -1, 2, -2, 3, -3, 4]))) % 8]
    options = ", ".join(f"'{d} of'" for d in COMPASS8)
    lines = [_landmark_list(city), "",
             f"Directions use the 8-point compass ({options}); each covers 45 degrees of geodesic "
             "azimuth centred on its direction.",
             f"Question: is {A.name} {asked} of {B.name}?"]
    return _body(lines, city, truth == asked, a=A.name, b=B.name, asked=asked)


def make_proximity(rng, cfg):
    city = _city(rng, cfg)
    label = int(rng.integers(0, 2))
    kinds = sorted({p.kind for p in city.places if p.kind != "landmark"})
    for _ in range(200):
        A = city.landmarks()[int(rng.integers(len(city.landmarks())))]
        kind = kinds[int(rng.integers(len(kinds)))]
        near = min(distance_m((A.lon, A.lat), (p.lon, p.lat)) for p in city.places if p.kind == kind)
        fits = [r for r in RADII_M if (r >= 1.1 * near if label else r <= 0.9 * near)]
        if fits:
            radius = int(fits[0] if label else fits[-1]) if rng.random() < 0.5 else int(fits[int(rng.integers(len(fits)))])
            break
    else:
        raise RuntimeError("proximity: no radius found")  # pragma: no cover (never observed)
    amen = "\n".join(f"- {p.name} ({p.kind}): lat {p.lat:.6f}, lon {p.lon:.6f}"
                     for p in city.places if p.kind != "landmark")
    lines = [_landmark_list(city), "", "Amenities:", amen, "",
             "Distances are straight-line geodesic distances on the WGS84 ellipsoid.",
             f"Question: is there a {kind} within {radius} metres of {A.name}?"]
    return _body(lines, city, near <= radius, a=A.name, kind=kind, radius_m=radius)


def _route_pair(rng, city: City, min_nodes: int = 4):
    marks = city.landmarks()
    while True:
        a, b = rng.choice(len(marks), 2, replace=False)
        A, B = marks[int(a)], marks[int(b)]
        route = city.shortest_route(A.node, B.node)
        if len(route) >= min_nodes:
            return A, B, route


def make_route(rng, cfg):
    city = _city(rng, cfg)
    label = int(rng.integers(0, 2))
    for _ in range(500):
        A, B, route = _route_pair(rng, city)
        others = [p for p in city.landmarks() if p.name not in (A.name, B.name)]
        on = [p for p in others if p.node in route]
        near = [p for p in others if p.node not in route and any(city.graph.has_edge(p.node, n) for n in route)]
        off = [p for p in others if p.node not in route]
        pool = on if label else (near if near and rng.random() < 0.7 else off)
        if pool:
            C = pool[int(rng.integers(len(pool)))]
            break
    else:
        raise RuntimeError("route: no question found")  # pragma: no cover
    lines = [_landmark_list(city), "", f"Shortest driving route from {A.name} to {B.name}:",
             *city.directions(route, A.name, B.name), "",
             "A route passes by a landmark when it goes through the street corner where the landmark stands.",
             f"Question: does this route from {A.name} to {B.name} pass by {C.name}?"]
    return _body(lines, city, C.node in route, a=A.name, b=B.name, c=C.name)


def make_eta(rng, cfg):
    city = _city(rng, cfg)
    label = int(rng.integers(0, 2))
    A, B, route = _route_pair(rng, city)
    length = city.route_length_m(route)
    speed = round(float(rng.uniform(*cfg["speed_kmh_range"])), 1)
    travel_min = length / 1000.0 / speed * 60.0
    start = int(rng.integers(6 * 60, 21 * 60))
    slack = travel_min * float(rng.uniform(0.15, 0.6)) + 1.0
    deadline = int(np.ceil(start + travel_min + slack)) if label else int(np.floor(start + travel_min - slack))
    deadline = max(deadline, start)
    lines = [f"Driving route from {A.name} to {B.name}:", *city.directions(route, A.name, B.name), "",
             f"Question: if I leave {A.name} by car at {_hhmm(start)} and follow this route at an average "
             f"speed of {speed:g} km/h, can I arrive at {B.name} by {_hhmm(deadline)}?"]
    return _body(lines, city, start + travel_min <= deadline, a=A.name, b=B.name, speed_kmh=speed,
                 depart_min=start, deadline_min=deadline)


def make_route_segment(rng, cfg):
    city = _city(rng, cfg)
    label = int(rng.integers(0, 2))
    A, B, route = _route_pair(rng, city, min_nodes=5)
    times = city.edge_times_s(route)
    start = int(rng.integers(6 * 60, 21 * 60))
    total_min = times[-1][1] / 60.0
    mode = "on" if label else ("before_after" if rng.random() < 0.5 else "off_route")
    if mode == "off_route":
        route_edges = set(frozenset(e) for e in zip(route, route[1:]))
        cands = [(u, v) for u, v in city.graph.edges if frozenset((u, v)) not in route_edges
                 and (u in route or v in route)]
        u, v = cands[int(rng.integers(len(cands)))]
        w1 = start + rng.uniform(0, total_min)
        w2 = w1 + rng.uniform(5, 20)
        enter = exit_ = None
    else:
        k = int(rng.integers(len(times)))
        u, v = route[k], route[k + 1]
        enter, exit_ = start + times[k][0] / 60.0, start + times[k][1] / 60.0
        if mode == "on":
            mid = rng.uniform(enter, exit_)
            w1, w2 = mid - rng.uniform(1, 15), mid + rng.uniform(1, 15)
        elif rng.random() < 0.5:
            w2 = enter - rng.uniform(2, 20)
            w1 = w2 - rng.uniform(5, 20)
        else:
            w1 = exit_ + rng.uniform(2, 20)
            w2 = w1 + rng.uniform(5, 20)
    w1, w2 = (int(np.floor(w1)), int(np.ceil(w2))) if mode == "on" else \
        ((int(np.ceil(w1)), int(np.floor(w2))) if mode == "before_after" else (int(round(w1)), int(round(w2))))
    gold = enter is not None and w1 <= exit_ and enter <= w2
    lines = [f"Driving route from {A.name} to {B.name} (road class and speed limit in brackets):",
             *city.directions(route, A.name, B.name, show_class=True), "",
             f"I left {A.name} at {_hhmm(start)}, followed this route and drove every road at its speed "
             "limit without stopping.",
             f"Question: an incident blocked {city.block(u, v)} from "
             f"{_hhmm(w1)} to {_hhmm(w2)}. Was I on that block at some moment of that time window?"]
    return _body(lines, city, gold, a=A.name, b=B.name, depart_min=start, segment=[int(u), int(v)],
                 window_min=[w1, w2])


# ------------------------------------------------------------------------------------ validate
def is_published_tier3(task) -> bool:
    """True for STARK's released tier-3 items (their inputs are the question text only)."""
    return str(task.meta.get("source", "")).startswith("STARK data_final_v5/tier3")


def validate_city(task) -> None:
    """Reject a city task whose ``inputs['city']`` cannot be rebuilt or lacks a named place.

    Raises:
        RecordError: naming the task and the problem.
    """
    from ..records import RecordError, finite_numbers
    if is_published_tier3(task):  # STARK's released items carry text, not a simulated world
        return
    inp = task.inputs
    if "window_min" in inp:
        finite_numbers(inp["window_min"], f"task {task.id}: inputs.window_min", 2)
    if "segment" in inp and not (isinstance(inp["segment"], list) and len(inp["segment"]) == 2
                                 and all(type(v) is int for v in inp["segment"])):
        raise RecordError(f"task {task.id}: inputs.segment must be two node ids, got {inp['segment']!r:.60}")
    try:
        city = City.from_json(task.inputs["city"])
        for key in ("a", "b", "c"):
            if key in task.inputs:
                city.place(task.inputs[key])
        if "segment" in inp:
            for node in inp["segment"]:
                city.graph.nodes[node]
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"task {task.id}: inputs.city is malformed ({exc})") from None


def _register(name, make, extra, description):
    register_family(Family(name, "binary", make, {**CITY_DEFAULTS, **extra}, description, validate=validate_city,
                           source="STARK §3.2.3, Tables 22-26 (simulated city)"))


_register("stark.knowledge.direction", make_direction, {"margin_deg": 4.0},
          "Is landmark A <8-point direction> of landmark B in a simulated city (Table 22)?")
_register("stark.knowledge.proximity", make_proximity, {},
          "Is there an amenity of a kind within d metres of a landmark (Table 23)?")
_register("stark.knowledge.route", make_route, {},
          "Does the printed shortest route from A to B pass by landmark C (Table 24)?")
_register("stark.knowledge.eta", make_eta, {"speed_kmh_range": [20.0, 60.0]},
          "Can I reach B by a deadline at a given average speed on the printed route (Table 25)?")
_register("stark.knowledge.route_segment", make_route_segment, {},
          "Was I on a given block during an incident window, driving at speed limits (Table 26)?")
