"""A simulated city for STARK's knowledge-aware tier (§3.2.3, Tables 22-26): a street graph
with road classes and speed limits, named landmarks at street corners and amenities
(hospital, police station, cafe, ...) with WGS84 coordinates, all deterministic from a
random generator.

Layout: a perturbed grid of ``rows x cols`` intersections ``spacing_m`` apart, laid out in a
local azimuthal-equidistant projection around ``center`` and converted to ``[lon, lat]``
(pyproj).  East-west streets are "1st Street", "2nd Street", ... from south to north;
north-south avenues carry tree names from west to east.  One street and one avenue are
arterials, one avenue is an expressway, the rest are residential (:data:`ROAD_CLASSES`); a
few residential blocks are closed (removed) while keeping the graph connected.  Edge lengths
are geodesic distances (WGS84) between the corner coordinates.

Routes are shortest by length (Dijkstra, networkx); travel times use each road's speed limit.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import networkx as nx
import numpy as np
from pyproj import Geod, Transformer

from ..records import UnknownName

GEOD = Geod(ellps="WGS84")

#: road class -> speed limit (km/h)
ROAD_CLASSES: dict[str, float] = {"residential": 30.0, "arterial": 50.0, "expressway": 80.0}

AVENUE_NAMES = ("Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Hazel", "Juniper", "Laurel", "Maple")
LANDMARK_NAMES = ("City Hall", "Central Library", "Union Station", "Riverside Park", "Science Museum",
                  "Old Cathedral", "Convention Center", "Botanical Garden", "Grand Theater",
                  "Memorial Stadium", "Art Gallery", "Farmers Market")
#: amenity kind -> how many the city has
AMENITY_COUNTS: dict[str, int] = {"hospital": 2, "police station": 2, "fire station": 2, "cafe": 5,
                                  "pharmacy": 3, "school": 3, "supermarket": 3}
COMPASS8 = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")


def ordinal(n: int) -> str:
    """1 -> '1st', 2 -> '2nd', 11 -> '11th'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def compass8(azimuth_deg: float) -> str:
    """8-point compass sector of an azimuth (degrees clockwise from north): each sector spans
    45 degrees centred on its direction (north = [-22.5, 22.5))."""
    return COMPASS8[int(((azimuth_deg % 360.0) + 22.5) // 45.0) % 8]


def azimuth(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Forward geodesic azimuth (degrees, [0, 360)) from ``a`` to ``b``, both ``[lon, lat]``."""
    az, _, _ = GEOD.inv(a[0], a[1], b[0], b[1])
    return float(az % 360.0)


def distance_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Geodesic distance (metres, WGS84) between ``[lon, lat]`` points."""
    return float(GEOD.inv(a[0], a[1], b[0], b[1])[2])


@dataclass(frozen=True)
class Place:
    """A named place: a landmark at a street corner (``node`` set) or an amenity (``node`` None).

    ``kind`` is ``"landmark"`` or an :data:`AMENITY_COUNTS` key; ``lon``/``lat`` in degrees."""
    name: str
    kind: str
    lon: float
    lat: float
    node: int | None = None


class City:
    """Street graph plus places.

    Attributes:
        graph: undirected :class:`networkx.Graph`; node attributes ``lon``, ``lat``, ``row``,
            ``col``; edge attributes ``street``, ``road_class``, ``speed_kmh``, ``length_m``.
        places: landmarks and amenities.
    """

    def __init__(self, graph: nx.Graph, places: list[Place]):
        self.graph = graph
        self.places = places

    # ---------------------------------------------------------------------------- queries
    def place(self, name: str) -> Place:
        """The place called ``name``; ``KeyError`` if none."""
        for p in self.places:
            if p.name == name:
                return p
        raise UnknownName(f"no place named {name!r}")

    def landmarks(self) -> list[Place]:
        return [p for p in self.places if p.kind == "landmark"]

    def lonlat(self, node: int) -> tuple[float, float]:
        d = self.graph.nodes[node]
        return d["lon"], d["lat"]

    def corner(self, node: int) -> str:
        """Street address of an intersection, e.g. 'Cedar Avenue and 3rd Street'."""
        d = self.graph.nodes[node]
        return f"{AVENUE_NAMES[d['col']]} Avenue and {ordinal(d['row'] + 1)} Street"

    def block(self, u: int, v: int) -> str:
        """A block (edge) in words, e.g. '6th Street between Cedar Avenue and Birch Avenue'."""
        street = self.graph.edges[u, v]["street"]
        cross = [c for c in (self.corner(u), self.corner(v)) for c in c.split(" and ") if c != street]
        return f"{street} between {cross[0]} and {cross[1]}"

    def shortest_route(self, a: int, b: int) -> list[int]:
        """Nodes of the shortest route by length (Dijkstra); ``NetworkXNoPath`` if none."""
        return nx.shortest_path(self.graph, a, b, weight="length_m")

    def route_edges(self, route: list[int]) -> list[dict[str, Any]]:
        return [self.graph.edges[u, v] for u, v in zip(route, route[1:])]

    def route_length_m(self, route: list[int]) -> float:
        return float(sum(e["length_m"] for e in self.route_edges(route)))

    def edge_times_s(self, route: list[int]) -> list[tuple[float, float]]:
        """(enter, exit) seconds after departure of each edge of ``route`` at speed limits."""
        out, t = [], 0.0
        for e in self.route_edges(route):
            dt = e["length_m"] / (e["speed_kmh"] / 3.6)
            out.append((t, t + dt))
            t += dt
        return out

    def legs(self, route: list[int]) -> list[dict[str, Any]]:
        """Group consecutive edges on the same street: ``street``, ``road_class``,
        ``speed_kmh``, ``length_m``, ``nodes`` (first..last), ``heading`` (8-point)."""
        legs: list[dict[str, Any]] = []
        for u, v in zip(route, route[1:]):
            e = self.graph.edges[u, v]
            if legs and legs[-1]["street"] == e["street"]:
                legs[-1]["nodes"].append(v)
                legs[-1]["length_m"] += e["length_m"]
            else:
                legs.append({"street": e["street"], "road_class": e["road_class"], "speed_kmh": e["speed_kmh"],
                             "length_m": e["length_m"], "nodes": [u, v]})
        for leg in legs:
            leg["azimuth"] = azimuth(self.lonlat(leg["nodes"][0]), self.lonlat(leg["nodes"][-1]))
            leg["heading"] = compass8(leg["azimuth"])
        return legs

    def directions(self, route: list[int], start: str, end: str, show_class: bool = False) -> list[str]:
        """Turn-by-turn description of ``route`` (lengths rounded to the metre)."""
        lines = [f"Start at {start} ({self.corner(route[0])})."]
        prev = None
        for leg in self.legs(route):
            where = f"{leg['street']}" + (f" ({leg['road_class']}, {leg['speed_kmh']:g} km/h)" if show_class else "")
            to = self.corner(leg["nodes"][-1])
            length = f"{round(leg['length_m'])} m"
            if prev is None:
                lines.append(f"Head {leg['heading']} on {where} for {length}, to {to}.")
            else:
                turn = (leg["azimuth"] - prev + 540.0) % 360.0 - 180.0
                side = "right" if turn > 0 else "left"
                lines.append(f"Turn {side} onto {where} and go {leg['heading']} for {length}, to {to}.")
            prev = leg["azimuth"]
        lines.append(f"Arrive at {end} ({self.corner(route[-1])}).")
        return [f"{i + 1}. {s}" for i, s in enumerate(lines)]

    # ---------------------------------------------------------------------------- JSON
    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form (recorded in task inputs so solvers can rebuild the city)."""
        g = self.graph
        return {"nodes": [[n, g.nodes[n]["lon"], g.nodes[n]["lat"], g.nodes[n]["row"], g.nodes[n]["col"]] for n in g.nodes],
                "edges": [[u, v, d["street"], d["road_class"], d["speed_kmh"], d["length_m"]] for u, v, d in g.edges(data=True)],
                "places": [asdict(p) for p in self.places]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "City":
        """Inverse of :meth:`to_json`.  Raises ``KeyError``/``ValueError`` on a malformed dict."""
        g = nx.Graph()
        for n, lon, lat, row, col in data["nodes"]:
            g.add_node(int(n), lon=float(lon), lat=float(lat), row=int(row), col=int(col))
        for u, v, street, cls_, speed, length in data["edges"]:
            g.add_edge(int(u), int(v), street=street, road_class=cls_, speed_kmh=float(speed), length_m=float(length))
        return cls(g, [Place(**p) for p in data["places"]])


def make_city(rng: np.random.Generator, rows: int = 7, cols: int = 7, spacing_m: float = 400.0,
              center: tuple[float, float] = (-118.25, 34.05), closed_fraction: float = 0.1,
              n_landmarks: int = 10) -> City:
    """Draw a city (see the module docstring).

    Args:
        rows, cols: intersections north-south and east-west (``cols <= 10``, ``n_landmarks <= 12``).
        spacing_m: nominal block length (metres); corners are jittered by up to 15 %.
        center: ``[lon, lat]`` of the grid centre.
        closed_fraction: fraction of residential blocks removed (connectivity kept).
    Raises:
        ValueError: a size outside the supported ranges.
    """
    if not (2 <= cols <= len(AVENUE_NAMES) and rows >= 2 and 1 <= n_landmarks <= len(LANDMARK_NAMES)
            and n_landmarks <= rows * cols):
        raise ValueError(f"make_city: unsupported size rows={rows}, cols={cols}, n_landmarks={n_landmarks}")
    to_geo = _local_to_geographic(float(center[0]), float(center[1]))
    g = nx.Graph()
    x0, y0 = -(cols - 1) * spacing_m / 2, -(rows - 1) * spacing_m / 2
    for r in range(rows):
        for c in range(cols):
            jx, jy = rng.uniform(-0.15, 0.15, 2) * spacing_m
            lon, lat = to_geo.transform(x0 + c * spacing_m + jx, y0 + r * spacing_m + jy)
            g.add_node(r * cols + c, lon=round(float(lon), 6), lat=round(float(lat), 6), row=r, col=c)
    arterial_row = int(rng.integers(1, rows - 1))
    arterial_col, express_col = (int(v) for v in rng.choice(np.arange(1, cols - 1), 2, replace=False))
    for r in range(rows):
        for c in range(cols):
            n = r * cols + c
            if c + 1 < cols:
                _add_edge(g, n, n + 1, f"{ordinal(r + 1)} Street", "arterial" if r == arterial_row else "residential")
            if r + 1 < rows:
                cls_ = "expressway" if c == express_col else "arterial" if c == arterial_col else "residential"
                _add_edge(g, n, n + cols, f"{AVENUE_NAMES[c]} Avenue", cls_)
    residential = [(u, v) for u, v, d in g.edges(data=True) if d["road_class"] == "residential"]
    order = rng.permutation(len(residential))
    to_close = int(round(closed_fraction * len(residential)))
    for k in order:
        if to_close == 0:
            break
        u, v = residential[k]
        data = g.edges[u, v]
        g.remove_edge(u, v)
        if nx.is_connected(g):
            to_close -= 1
        else:
            g.add_edge(u, v, **data)
    places: list[Place] = []
    for name, node in zip(rng.permutation(LANDMARK_NAMES)[:n_landmarks],
                          rng.choice(rows * cols, n_landmarks, replace=False)):
        lon, lat = g.nodes[int(node)]["lon"], g.nodes[int(node)]["lat"]
        places.append(Place(str(name), "landmark", lon, lat, int(node)))
    half_w, half_h = (cols - 1) * spacing_m / 2, (rows - 1) * spacing_m / 2
    for kind, count in AMENITY_COUNTS.items():
        for k in range(count):
            lon, lat = to_geo.transform(rng.uniform(-half_w, half_w), rng.uniform(-half_h, half_h))
            places.append(Place(f"{kind.title()} {k + 1}", kind, round(float(lon), 6), round(float(lat), 6)))
    return City(g, places)


@lru_cache(maxsize=8)
def _local_to_geographic(lon0: float, lat0: float) -> Transformer:
    """Local azimuthal-equidistant metres around (lon0, lat0) -> WGS84 lon/lat."""
    return Transformer.from_crs(f"+proj=aeqd +lat_0={lat0} +lon_0={lon0} +datum=WGS84", "EPSG:4326",
                                always_xy=True)


def _add_edge(g: nx.Graph, u: int, v: int, street: str, road_class: str) -> None:
    a, b = g.nodes[u], g.nodes[v]
    g.add_edge(u, v, street=street, road_class=road_class, speed_kmh=ROAD_CLASSES[road_class],
               length_m=round(distance_m((a["lon"], a["lat"]), (b["lon"], b["lat"])), 3))
