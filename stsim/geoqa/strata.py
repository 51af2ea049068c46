"""Income x density strata of the geoqa questions (seed 003 §3.2 "Strata Grid").

The paper tags each entity with the World Bank FY2026 income tier of its country and a density
tier from the WorldPop R2025A 1 km population raster binned at the global 33rd / 67th
percentiles, and samples up to 30 tuples per (template, KG, stratum) cell.  Neither the World
Bank classification nor a population raster ships in a PyPI package we can use offline, so
both are **proxies** (docs/geoqa.md, "Strata"):

* **Income tier** -- GDP per capita from the vendored Natural Earth 1:110m country table
  (``gdp_md_est`` in million US$ / ``pop_est``, both Natural Earth's 2019 figures) binned at the
  World Bank FY2026 GNI-per-capita (Atlas method) thresholds: low <= 1,135 US$, lower-middle
  1,136-4,495, upper-middle 4,496-13,935, high > 13,935.  GDP per capita is not GNI per capita
  (Atlas): countries near a threshold can fall in the neighbouring tier.  Countries without a
  1:110m polygon (small states, territories) get ``unknown``.
* **Density tier** -- the GeoNames populations of all places (>= 15,000 inhabitants) summed per
  H3 resolution-3 cell (~12,400 km^2), binned at the 33rd / 67th percentiles over the populated
  cells: low / medium / high.  A place's tier is its cell's.  Rural population below 15,000 per
  place is invisible to this proxy, so it measures urban density, not population density.
  No city of >= 100,000 lies in a low cell: the executor's stratified sampling gives the
  low-density tier smaller places as subjects (:meth:`~stsim.geoqa.context.Context.subjects`).

Known misplacements of the income proxy against the World Bank's FY2025 list (measured in
tests/test_geoqa_strata.py; docs/geoqa.md): Guinea, Lesotho, Nepal, Tajikistan and Tanzania
are low here (lower-middle for the World Bank), North Korea lower-middle and Syria
upper-middle (low), Algeria, Mongolia and Ukraine lower-middle (upper-middle), Bulgaria and
Russia upper-middle (high).

A question's stratum is that of its *primary entity*: the first city of its binding (role
order), else its first country (density ``none``: a whole country has no cell); questions about
the simulated cities are stratum ``sim``.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

#: World Bank FY2026 thresholds of GNI per capita, Atlas method (current US$): upper bounds of
#: low, lower-middle and upper-middle income (World Bank, "World Bank country classifications
#: by income level for 2025-2026", 1 July 2025).
WB_FY2026_THRESHOLDS = (1135.0, 4495.0, 13935.0)
INCOME_TIERS = ("low", "lower-middle", "upper-middle", "high")
DENSITY_TIERS = ("low", "medium", "high")
#: H3 resolution of the density cells (seed 003 Table 2: "H3-resolution-3 density terciles").
DENSITY_RES = 3


def income_tier(gdp_per_capita_usd: float) -> str:
    """World Bank tier of a per-capita income (US$) by :data:`WB_FY2026_THRESHOLDS`.

    Raises:
        ValueError: a negative or non-finite value.
    """
    x = float(gdp_per_capita_usd)
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"per-capita income must be a non-negative number, got {gdp_per_capita_usd!r}")
    return INCOME_TIERS[int(np.searchsorted(WB_FY2026_THRESHOLDS, x, side="left"))]


@lru_cache(maxsize=1)
def income_by_iso3() -> dict[str, str]:
    """ISO-3 -> income tier for the 177 Natural Earth 1:110m countries (GDP-per-capita proxy)."""
    import geopandas as gpd
    from .store import _NE_ISO_FIX, source_files
    ne = gpd.read_file(source_files()["naturalearth"][0])
    out: dict[str, str] = {}
    for _, r in ne.iterrows():
        iso3 = _NE_ISO_FIX.get(r["name"], r["iso_a3"])
        if r["pop_est"] and r["pop_est"] > 0 and r["gdp_md_est"] >= 0:
            out[str(iso3)] = income_tier(float(r["gdp_md_est"]) * 1e6 / float(r["pop_est"]))
    return out


def density_cells(lon: np.ndarray, lat: np.ndarray, pop: np.ndarray) -> tuple[dict[str, float], tuple[float, float]]:
    """Population per H3 resolution-3 cell and the 33rd / 67th percentiles over populated cells.

    Args:
        lon, lat: (n,) degrees (east, north); pop: (n,) inhabitants.
    Returns:
        ``({cell: population}, (p33, p67))``.
    """
    import h3
    cells: dict[str, float] = {}
    for x, y, p in zip(lon, lat, pop):
        c = h3.latlng_to_cell(float(y), float(x), DENSITY_RES)
        cells[c] = cells.get(c, 0.0) + float(p)
    vals = np.fromiter(cells.values(), dtype=float)
    p33, p67 = (float(v) for v in np.percentile(vals, [100 / 3, 200 / 3]))
    return cells, (p33, p67)


def density_tier(cell_pop: float, cuts: tuple[float, float]) -> str:
    """``low`` (<= p33), ``medium`` (<= p67) or ``high``."""
    return DENSITY_TIERS[int(np.searchsorted(cuts, float(cell_pop), side="left"))]


def city_tiers(ctx: Any) -> tuple[list[str], list[str]]:
    """Income and density tier of every city of a query context, in ``ctx.city_ids`` order
    (``(n,)`` lists of :data:`INCOME_TIERS` / ``unknown`` and :data:`DENSITY_TIERS`)."""
    import h3
    cells, cuts = density_cells(ctx.lon, ctx.lat, ctx.pop)
    inc = income_by_iso3()
    income = [inc.get(str(i), "unknown") for i in ctx.cities["iso3"]]
    density = [density_tier(cells[h3.latlng_to_cell(float(y), float(x), DENSITY_RES)], cuts)
               for x, y in zip(ctx.lon, ctx.lat)]
    return income, density


def entity_stratum(eid: str) -> dict[str, str]:
    """``{"income", "density"}`` of an entity id (``gn:``, ``ne:``, ``sim:``)."""
    from .context import get_context
    if eid.startswith("sim:"):
        return {"income": "sim", "density": "sim"}
    if eid.startswith("ne:"):
        return {"income": income_by_iso3().get(eid[3:], "unknown"), "density": "none"}
    ctx = get_context()
    i = ctx.city_index.get(eid)
    if i is None:
        return {"income": "unknown", "density": "unknown"}
    inc, dens = ctx.city_strata[i]
    return {"income": inc, "density": dens}


def primary_entity(binding: dict[str, Any]) -> str | None:
    """The entity a question's stratum is taken from (module docstring), or None."""
    if "network" in binding:
        return f"sim:{binding['network']}"
    ids = list(binding.get("ids", {}).values()) + list(binding.get("members", []))
    for prefix in ("gn:", "ne:", "sim:"):
        for e in ids:
            if isinstance(e, str) and e.startswith(prefix):
                return e
    cc = binding.get("params", {}).get("cc")
    if cc:
        from .context import get_context
        sub = get_context().by_country.get(cc)
        if sub is not None and len(sub):
            return f"ne:{sub['iso3'].iloc[0]}"
    return None


def stratum(binding: dict[str, Any]) -> str:
    """``"INCOME/DENSITY"`` of a question's binding (``unknown/unknown`` without an entity)."""
    e = primary_entity(binding)
    if e is None:
        return "unknown/unknown"
    s = entity_stratum(e)
    return f"{s['income']}/{s['density']}"


def stratified_indices(tid: str, k: int, seed: int = 0) -> list[int]:
    """Pool indices of template ``tid`` keeping at most ``k`` questions per stratum cell, in
    pool order.  The pool itself is already sampled by stratum with up to
    :data:`~stsim.geoqa.executor.K_PER_CELL` per cell (seed 003 §3.2: "up to 30 entity tuples
    per (template, KG, stratum)"); this keeps a smaller ``k``, the first ``k`` of each cell (a
    random sample of it: draws within a cell are uniform).

    Raises:
        KeyError: unknown template; ValueError: ``k`` < 1.
    """
    from .executor import pool
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    seen: dict[str, int] = {}
    out = []
    for i, inst in enumerate(pool(tid, seed)):
        s = stratum(inst.binding)
        if seen.get(s, 0) < k:
            seen[s] = seen.get(s, 0) + 1
            out.append(i)
    return out
