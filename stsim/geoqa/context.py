"""Query context over the entity store: arrays, spatial indexes and display names.

Built once per process (:func:`get_context`).  Distances are WGS84 geodesics (``pyproj.Geod``,
Karney's algorithm) in km; the k-d tree over unit vectors only pre-selects candidates (a
chord is monotone in the great-circle angle), every answer is decided on geodesic distances.
Coordinates are ``[lon, lat]`` unless a name says ``lat``/``lon``.
"""
from __future__ import annotations

from collections import Counter
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from pyproj import Geod

from .store import EntityStore, load_store, networks

GEOD = Geod(ellps="WGS84")
EARTH_R_KM = 6371.0088  # mean radius: only to convert km to chord for candidate search
#: Cities used as question subjects: at least this many inhabitants (recognisable places);
#: every city of the store (>= 15,000) is a candidate answer.
MAJOR_POPULATION = 100_000
#: Stratified sampling (:mod:`stsim.geoqa.strata`): a stratum cell with fewer major cities than
#: this also offers its smaller places (>= 15,000 inhabitants, unambiguous name) as subjects
#: to the templates that allow small places -- the low-density tier has no major city at all.
SMALL_PLACE_FILL = 50


def unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """``(n, 3)`` unit vectors of ``[lon, lat]`` degrees on the sphere."""
    lo, la = np.radians(lon), np.radians(lat)
    return np.column_stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)])


def geod_km(lon1, lat1, lon2, lat2) -> np.ndarray | float:
    """Geodesic distance(s) in km on WGS84 (broadcasting like ``Geod.inv``)."""
    return GEOD.inv(lon1, lat1, lon2, lat2)[2] / 1000.0


def area_perimeter(geom) -> tuple[float, float]:
    """Geodesic area (km^2) and perimeter (km) of a (multi)polygon on WGS84 (Karney 2013, via
    ``pyproj.Geod``).  Each part is oriented counter-clockwise first (so parts never cancel),
    and the perimeter is the length of the whole boundary, interior rings included --
    ``Geod.geometry_area_perimeter`` alone leaves holes out of the perimeter (Lesotho inside
    South Africa), which a compactness score must not."""
    from shapely.geometry.polygon import orient
    area = perim = 0.0
    for part in getattr(geom, "geoms", [geom]):
        a, _ = GEOD.geometry_area_perimeter(orient(part, 1.0))
        area += a
        perim += GEOD.geometry_length(part.boundary)
    return abs(area) / 1e6, perim / 1000.0


class Context:
    """The store prepared for queries.

    Attributes:
        store: the :class:`~stsim.geoqa.store.EntityStore`.
        cities: city rows (DataFrame, original order) with ``lon``/``lat`` columns.
        countries: country rows (GeoDataFrame) indexed by ISO-3.
    """

    def __init__(self, store: EntityStore):
        self.store = store
        t = store.table
        c = t[t["category"] == "city"].copy()
        c["lon"] = c.geometry.x.to_numpy()
        c["lat"] = c.geometry.y.to_numpy()
        self.cities = c.reset_index(drop=True)
        self.city_ids = self.cities["id"].to_numpy()
        self.city_index = {cid: i for i, cid in enumerate(self.city_ids)}
        self.lon = self.cities["lon"].to_numpy()
        self.lat = self.cities["lat"].to_numpy()
        self.pop = self.cities["population"].to_numpy()
        self.countries = t[t["category"] == "country"].set_index("iso3", drop=False)
        self.places = t[t["network"] >= 0].reset_index(drop=True)
        self._names = self._display_names()
        self.major = np.flatnonzero((self.pop >= MAJOR_POPULATION)
                                    & np.array([self._names.get(i) is not None for i in self.city_ids]))
        self._major_set = set(int(i) for i in self.major)
        self.in_polygon_country = np.array([iso in self.countries.index for iso in self.cities["iso3"]])
        self._target: tuple[tuple[str, str], bool] | None = None

    # ------------------------------------------------------------------ names
    def _display_names(self) -> dict[str, str | None]:
        """Unambiguous display names: ``Name, Country`` for cities, ``Name (Admin-1),
        Country`` when the first repeats; ``None`` (never sampled as a subject) when even
        that repeats."""
        c = self.cities
        first = [f"{n}, {cn}" for n, cn in zip(c["name"], c["country_name"])]
        second = [f"{n} ({a}), {cn}" if a else None for n, a, cn in zip(c["name"], c["admin1_name"], c["country_name"])]
        n1, n2 = Counter(first), Counter(s for s in second if s)
        out: dict[str, str | None] = {}
        for cid, f, s in zip(c["id"], first, second):
            out[cid] = f if n1[f] == 1 else (s if s and n2[s] == 1 else None)
        for _, r in self.countries.iterrows():
            out[r["id"]] = r["name"]
        for _, r in self.places.iterrows():
            out[r["id"]] = r["name"]
        return out

    def display(self, entity_id: str) -> str:
        """The name a question shows for ``entity_id``; :class:`~stsim.geoqa.executor.Degenerate`
        when it has none (an execution that would need it is dropped)."""
        name = self._names.get(entity_id)
        if name is None:
            from .executor import Degenerate
            raise Degenerate(f"{entity_id} has no unambiguous display name")
        return name

    def display_coords(self, entity_id: str) -> str:
        """A city named without its country (for administrative questions, whose answer the
        usual ``Name, Country`` would give away): ``Name (45.76°N, 4.84°E)``."""
        lon, lat = self.ll(entity_id)
        name = self.store.row(entity_id)["name"]
        return f"{name} ({abs(lat):.2f}°{'N' if lat >= 0 else 'S'}, {abs(lon):.2f}°{'E' if lon >= 0 else 'W'})"

    def aliases(self, entity_id: str) -> list[str]:
        """Other accepted spellings of an entity (plain name, GeoNames alternates, NE name)."""
        r = self.store.row(entity_id)
        out = [r["name"]] + [a for a in str(r["aliases"]).split("|") if a]
        disp = self._names.get(entity_id)
        return sorted({a for a in out if a and a != disp})

    def alias_spec(self, ids: list[str]) -> dict[str, list[str]]:
        """``answer_spec["aliases"]`` for entity answers: display name -> accepted aliases."""
        return {self.display(i): self.aliases(i) for i in ids}

    # ------------------------------------------------------------------ cities
    @cached_property
    def by_country(self) -> dict[str, Any]:
        """ISO-2 -> that country's cities, most populous first (stable)."""
        c = self.cities.sort_values("population", ascending=False, kind="stable")
        return {k: g for k, g in c.groupby("iso2", sort=True)}

    @cached_property
    def by_admin1(self) -> dict[tuple[str, str], Any]:
        """(ISO-2, admin-1 code) -> cities, most populous first (stable)."""
        c = self.cities.sort_values("population", ascending=False, kind="stable")
        return {k: g for k, g in c.groupby(["iso2", "admin1_code"], sort=True)}

    @cached_property
    def tree(self):
        from scipy.spatial import cKDTree
        return cKDTree(unit_vectors(self.lon, self.lat))

    def city(self, cid: str):
        return self.cities.iloc[self.city_index[cid]]

    def ll(self, cid: str) -> tuple[float, float]:
        """``(lon, lat)`` of a city or place id."""
        if cid in self.city_index:
            i = self.city_index[cid]
            return float(self.lon[i]), float(self.lat[i])
        g = self.store.row(cid).geometry
        return float(g.x), float(g.y)

    def within_km(self, lon: float, lat: float, r_km: float) -> tuple[np.ndarray, np.ndarray]:
        """Indices of cities within ``r_km`` (geodesic) of a point and their distances (km),
        sorted by distance."""
        chord = 2.0 * np.sin(min(np.pi, (r_km * 1.01 + 1.0) / EARTH_R_KM) / 2.0)
        cand = np.array(sorted(self.tree.query_ball_point(unit_vectors(np.array([lon]), np.array([lat]))[0], chord)),
                        dtype=int)
        if not len(cand):
            return cand, np.zeros(0)
        d = geod_km(np.full(len(cand), lon), np.full(len(cand), lat), self.lon[cand], self.lat[cand])
        keep = d <= r_km
        order = np.argsort(d[keep], kind="stable")
        return cand[keep][order], d[keep][order]

    def nearest(self, lon: float, lat: float, k: int, exclude: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest cities (geodesic) to a point, nearest first, with distances (km)."""
        kk = min(len(self.lon), 4 * k + 8)
        _, cand = self.tree.query(unit_vectors(np.array([lon]), np.array([lat]))[0], kk)
        cand = np.asarray(cand, dtype=int)
        if exclude is not None:
            cand = cand[cand != exclude]
        d = geod_km(np.full(len(cand), lon), np.full(len(cand), lat), self.lon[cand], self.lat[cand])
        order = np.argsort(d, kind="stable")[: k + 1]
        return cand[order], d[order]

    def pick_major(self, rng: np.random.Generator, n: int = 1) -> list[str]:
        """``n`` distinct major cities (ids), uniformly.

        Inside :meth:`targeting` the first city of the first call is drawn uniformly from the
        target stratum's subjects (:meth:`subjects`) instead, the rest as usual."""
        if self._target is not None:
            cell, small = self._target
            self._target = None
            cand = self.subjects(cell, small)
            if len(cand):
                first = int(cand[int(rng.integers(len(cand)))])
                rest = rng.choice(self.major[self.major != first], size=n - 1, replace=False) if n > 1 else []
                return [str(self.city_ids[first])] + [str(self.city_ids[i]) for i in rest]
        idx = rng.choice(self.major, size=n, replace=False)
        return [str(self.city_ids[i]) for i in idx]

    def pick_country(self, rng: np.random.Generator) -> str:
        """A country id ``ne:ISO3`` drawn uniformly (inside :meth:`targeting`: the first call
        draws among the countries of the target income tier, when there are any)."""
        isos = self.country_isos
        if self._target is not None:
            (income, _), _ = self._target
            self._target = None
            tiers = self.country_income
            sub = [i for i in isos if tiers.get(i) == income]
            isos = sub or isos
        return f"ne:{isos[int(rng.integers(len(isos)))]}"

    # ------------------------------------------------------------------ strata
    @cached_property
    def city_strata(self) -> list[tuple[str, str]]:
        """``(income, density)`` tier of every city, in :attr:`city_ids` order
        (:func:`stsim.geoqa.strata.city_tiers`)."""
        from .strata import city_tiers
        return list(zip(*city_tiers(self)))

    @cached_property
    def country_income(self) -> dict[str, str]:
        """ISO-3 -> income tier of the countries (:func:`stsim.geoqa.strata.income_by_iso3`)."""
        from .strata import income_by_iso3
        return income_by_iso3()

    @cached_property
    def _cells(self) -> tuple[dict[tuple[str, str], np.ndarray], dict[tuple[str, str], np.ndarray]]:
        named = np.array([self._names.get(i) is not None for i in self.city_ids])
        major_cells: dict[tuple[str, str], list[int]] = {}
        all_cells: dict[tuple[str, str], list[int]] = {}
        for i, cell in enumerate(self.city_strata):
            if named[i]:
                all_cells.setdefault(cell, []).append(i)
                if i in self._major_set:
                    major_cells.setdefault(cell, []).append(i)
        as_arr = lambda d: {k: np.array(v, dtype=int) for k, v in d.items()}  # noqa: E731
        return as_arr(major_cells), as_arr(all_cells)

    def subjects(self, cell: tuple[str, str], small_places: bool = True) -> np.ndarray:
        """City indices that may be a question's subject in stratum ``cell`` (income, density),
        ascending: the cell's major cities; with ``small_places``, when the cell has fewer than
        :data:`SMALL_PLACE_FILL` of them, every place of the cell with an unambiguous name
        (>= 15,000 inhabitants) instead.  Empty for an unpopulated cell."""
        major, every = self._cells
        m = major.get(cell, np.zeros(0, dtype=int))
        if small_places and len(m) < SMALL_PLACE_FILL:
            return every.get(cell, np.zeros(0, dtype=int))
        return m

    def targeting(self, cell: tuple[str, str] | None, small_places: bool = True):
        """Context manager: the next :meth:`pick_major` / :meth:`pick_country` draws its first
        entity from stratum ``cell`` (seed 003 §3.2: entities sampled within each strata cell)."""
        from contextlib import contextmanager

        @contextmanager
        def cm():
            self._target = None if cell is None else (cell, small_places)
            try:
                yield self
            finally:
                self._target = None
        return cm()

    # ------------------------------------------------------------------ countries
    @cached_property
    def country_isos(self) -> list[str]:
        return sorted(self.countries.index)

    def country_geom(self, iso3: str):
        return self.countries.loc[iso3, "geometry"]

    @cached_property
    def adjacency(self) -> dict[str, list[str]]:
        """Countries whose 1:110m polygons intersect (share a boundary), by ISO-3, sorted."""
        from shapely import STRtree
        isos = self.country_isos
        geoms = [self.country_geom(i) for i in isos]
        tree = STRtree(geoms)
        out: dict[str, list[str]] = {i: [] for i in isos}
        for a, g in enumerate(geoms):
            for b in tree.query(g, predicate="intersects"):
                if int(b) != a:
                    out[isos[a]].append(isos[int(b)])
        return {k: sorted(v) for k, v in out.items()}

    def country_area_km2(self, iso3: str) -> float:
        """Geodesic area of the country polygon (km^2, WGS84; :func:`area_perimeter`)."""
        return area_perimeter(self.country_geom(iso3))[0]

    def country_perimeter_km(self, iso3: str) -> float:
        """Geodesic length of the whole boundary, holes included (km; :func:`area_perimeter`)."""
        return area_perimeter(self.country_geom(iso3))[1]

    def networks(self):
        return networks()


@lru_cache(maxsize=1)
def get_context() -> Context:
    """The process-wide :class:`Context` (builds the store at first use)."""
    return Context(load_store())
