"""False-premise questions (seed 003 §3.4): a satisfiable (template, binding) perturbed so that
the premise its question states no longer holds; the gold answer is a rejection.

MultiGlobeQA derives 7.8 % of its English questions this way ("a containment relation that is
false or a route passing through no entity of the requested type") and compares the negative
rejection rate (NRR, rejections of false-premise questions) with the false-refusal rate (FRR,
abstentions on answerable questions) over the *same* sub-templates (§5.3, Appendix G.7).

Each :class:`Perturbation` names the premise of one template as a predicate over a binding,
evaluated on the entity store exactly as the question words it:

==========================  ===============  ==========================================================
template                    kind             premise (true for every pool question; false after)
==========================  ===============  ==========================================================
admin.count_in_admin1       containment      a GeoNames place of the named country has the named
enumeration.top_in_admin1                    admin-1 division (the division is in that country)
nearest.larger_city         threshold        some place other than ``a`` has more than ``pop``
                                             inhabitants
aggregation.largest_within  radius           some place other than ``a`` lies within ``r`` km of ``a``
nearest.amenity             absent_kind      the simulated city has a place of the asked kind
routing.length              absent_place     the route's end corner is an intersection of the
routing.streets                              simulated city's street grid
==========================  ===============  ==========================================================

:func:`false_instance` perturbs the pool questions of a template in pool order (one fixed
random stream per pool index, so question ``i`` is a pure function of the store and ``i``),
keeps a perturbation only when the original premise holds and the perturbed one does not, and
de-duplicates on the question text.  The perturbed question reuses the template's paraphrases
and instruction, so nothing but the premise tells it from an answerable one.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..seeding import task_rng
from .executor import Instance, Template, instance, load_templates
from .templates import plural

#: Answer format and gold of every false-premise question.
FORMAT = "geo_rejection"
#: Populations (inhabitants) beyond every GeoNames place: no city "with more than" them exists.
IMPOSSIBLE_POPULATIONS = (30_000_000, 40_000_000, 50_000_000, 100_000_000)
#: Radii (km) tried for the radius perturbation (the largest below 0.9 x the nearest place).
SMALL_RADII = (2, 5, 10, 20, 30)
#: Place kinds the simulated cities (``stsim.sim.city``) never contain, nor name a landmark after
#: (a "Central Library" landmark rules out "library").
ABSENT_KINDS = ("post office", "bakery", "bank", "petrol station", "dentist")


@dataclass(frozen=True)
class Perturbation:
    """How to falsify the premise of one template.

    Attributes:
        tid: the template.
        kind: ``containment``, ``threshold``, ``radius``, ``absent_kind`` or ``absent_place``.
        perturb: ``(ctx, binding, rng) -> binding | None``, a new binding (never mutating the
            argument); ``None`` when this question cannot be perturbed.
        premise: ``(ctx, binding) -> bool``, the premise as the question states it.
        facts: ``(ctx, binding) -> [[s, p, o], ...]``, the facts that refute the premise (the
            "gold triples" of the false-premise question).
    """
    tid: str
    kind: str
    perturb: Callable[[Any, dict[str, Any], np.random.Generator], dict[str, Any] | None]
    premise: Callable[[Any, dict[str, Any]], bool]
    facts: Callable[[Any, dict[str, Any]], list[list[Any]]]


def _copy(b: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(b))


# ---------------------------------------------------------------- containment (admin-1 in country)
def _admin1_premise(ctx, b) -> bool:
    p = b["params"]
    sub = ctx.by_country.get(p["cc"])
    return sub is not None and bool((sub["admin1_name"] == p["admin1"]).any())


def _admin1_perturb(ctx, b, rng):
    p = b["params"]
    ccs = sorted(cc for cc in ctx.by_country if cc != p["cc"])
    cc2 = ccs[int(rng.integers(len(ccs)))]
    name2 = str(ctx.by_country[cc2]["country_name"].iloc[0])
    if not name2 or name2 == p["country_name"]:
        return None
    out = _copy(b)
    out["params"].update(cc=cc2, country_name=name2)
    out["params"].pop("code", None)  # the division has no code in the named country
    return out


def _admin1_facts(ctx, b):
    p = b["params"]
    rows = ctx.cities[ctx.cities["admin1_name"] == p["admin1"]]
    homes = sorted(set(rows["iso2"]))
    return ([[f"admin1:{p['admin1']}", "gn:countryCode", cc] for cc in homes]
            + [[f"country:{p['cc']}", "rdfs:label", p["country_name"]]])


# ---------------------------------------------------------------- threshold (a city larger than pop)
def _larger_premise(ctx, b) -> bool:
    a, pop = b["ids"]["a"], b["params"]["pop"]
    big = np.flatnonzero(ctx.pop > pop)
    return bool(len(big[big != ctx.city_index[a]]))


def _larger_perturb(ctx, b, rng):
    out = _copy(b)
    p = int(IMPOSSIBLE_POPULATIONS[int(rng.integers(len(IMPOSSIBLE_POPULATIONS)))])
    out["params"].update(pop=p, pop_text=f"{p:,}")
    return out


def _larger_facts(ctx, b):
    i = int(np.argmax(ctx.pop))
    return [[str(ctx.city_ids[i]), "gn:population", int(ctx.pop[i])],
            ["gn:cities15000", "stsim:maxPopulation", int(ctx.pop[i])]]


# ---------------------------------------------------------------- radius (a place within r km)
def _nearest_other_km(ctx, a: str) -> float:
    lon, lat = ctx.ll(a)
    _, d = ctx.nearest(lon, lat, 1, exclude=ctx.city_index[a])
    return float(np.atleast_1d(d)[0])


def _radius_premise(ctx, b) -> bool:
    a, r = b["ids"]["a"], b["params"]["r"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.within_km(lon, lat, float(r))
    return bool(((d <= r) & (idx != ctx.city_index[a])).any())


def _radius_perturb(ctx, b, rng):
    dn = _nearest_other_km(ctx, b["ids"]["a"])
    ok = [r for r in SMALL_RADII if r < 0.9 * dn and r < b["params"]["r"]]
    if not ok:
        return None
    out = _copy(b)
    out["params"]["r"] = ok[-1]
    return out


def _radius_facts(ctx, b):
    a = b["ids"]["a"]
    lon, lat = ctx.ll(a)
    idx, d = ctx.nearest(lon, lat, 1, exclude=ctx.city_index[a])
    i, dk = int(np.atleast_1d(idx)[0]), float(np.atleast_1d(d)[0])
    return [[a, "stsim:nearestPlace", str(ctx.city_ids[i])], [a, "stsim:nearestPlaceKm", round(dk, 3)]]


# ---------------------------------------------------------------- absent kind (simulated city)
def _kinds(ctx, b) -> set[str]:
    return {p.kind for p in ctx.networks()[b["network"]].city.places}


def _kind_premise(ctx, b) -> bool:
    return b["params"]["kind"] in _kinds(ctx, b)


def _kind_perturb(ctx, b, rng):
    names = " ".join(p.name.lower() for p in ctx.networks()[b["network"]].city.places)
    absent = [k for k in ABSENT_KINDS if k not in _kinds(ctx, b) and k not in names]
    if not absent:
        return None
    k = absent[int(rng.integers(len(absent)))]
    out = _copy(b)
    out["params"].update(kind=k, kind_plural=plural(k))
    return out


def _kind_facts(ctx, b):
    net = ctx.networks()[b["network"]]
    return [[net.name, "stsim:hasPlaceKind", k] for k in sorted(_kinds(ctx, b))]


# ---------------------------------------------------------------- absent place (street corner)
def _corners(ctx, b) -> set[str]:
    city = ctx.networks()[b["network"]].city
    return {f"the corner of {city.corner(n)}" for n in city.graph.nodes}


def _corner_premise(ctx, b) -> bool:
    return b["params"]["q"] in _corners(ctx, b)


def _corner_perturb(ctx, b, rng):
    from ..sim.city import ordinal
    city = ctx.networks()[b["network"]].city
    rows = max(int(d["row"]) for _, d in city.graph.nodes(data=True))
    avenue = city.corner(int(b["params"]["v"])).split(" and ")[0]
    street = f"{ordinal(rows + 2 + int(rng.integers(3)))} Street"
    out = _copy(b)
    out["params"].update(q=f"the corner of {avenue} and {street}", v=None)
    return out


def _corner_facts(ctx, b):
    net = ctx.networks()[b["network"]]
    g = net.city.graph
    streets = sorted({d["street"] for _, _, d in g.edges(data=True)})
    return [[net.name, "stsim:hasStreet", s] for s in streets]


PERTURBATIONS: dict[str, Perturbation] = {p.tid: p for p in (
    Perturbation("admin.count_in_admin1", "containment", _admin1_perturb, _admin1_premise, _admin1_facts),
    Perturbation("enumeration.top_in_admin1", "containment", _admin1_perturb, _admin1_premise, _admin1_facts),
    Perturbation("nearest.larger_city", "threshold", _larger_perturb, _larger_premise, _larger_facts),
    Perturbation("aggregation.largest_within", "radius", _radius_perturb, _radius_premise, _radius_facts),
    Perturbation("nearest.amenity", "absent_kind", _kind_perturb, _kind_premise, _kind_facts),
    Perturbation("routing.length", "absent_place", _corner_perturb, _corner_premise, _corner_facts),
    Perturbation("routing.streets", "absent_place", _corner_perturb, _corner_premise, _corner_facts),
)}


@dataclass(frozen=True)
class FalseInstance:
    """One false-premise question.

    Attributes:
        base_index: index of the perturbed question in its template's pool.
        binding: the perturbed binding.
        values: every placeholder's text (the perturbed ones replaced).
        subtemplate: the sub-template of the perturbed pool question (FRR and NRR are compared
            over the same sub-templates, seed 003 G.7).
        kind: the perturbation's kind.
        triples: facts that refute the premise.
    """
    base_index: int
    binding: dict[str, Any]
    values: dict[str, str]
    subtemplate: str
    kind: str
    triples: list[list[Any]] = field(default_factory=list)

    def question(self, t: Template, k: int) -> str:
        """Paraphrase ``k`` of the (false-premise) question."""
        return t.paraphrases[k].format(**self.values)

    def instruction(self, t: Template) -> str:
        return t.instruction.format(**self.values)


def premise_holds(tid: str, binding: dict[str, Any]) -> bool:
    """Evaluate template ``tid``'s premise on ``binding`` over the entity store (the check a
    false-premise question is built on and its oracle re-runs).  KeyError: no perturbation."""
    from .context import get_context
    return bool(PERTURBATIONS[tid].premise(get_context(), binding))


def _values(ctx, t: Template, inst: Instance, b: dict[str, Any]) -> dict[str, str]:
    from .executor import _fmt_param
    values = dict(inst.values)
    for k, v in b.get("params", {}).items():
        if k in values and v is not None:
            values[k] = _fmt_param(v)
    return values


class _Builder:
    def __init__(self, tid: str, seed: int):
        self.tid, self.seed = tid, seed
        self.j = 0
        self.out: list[FalseInstance] = []
        self.seen: set[str] = set()
        self.done = False

    def extend(self, n: int) -> list[FalseInstance]:
        from .context import get_context
        ctx, t, pert = get_context(), load_templates()[self.tid], PERTURBATIONS[self.tid]
        while len(self.out) < n and not self.done:
            try:
                inst = instance(self.tid, self.j, self.seed)
            except IndexError:
                self.done = True
                break
            j = self.j
            self.j += 1
            if not pert.premise(ctx, inst.binding):
                raise AssertionError(f"{self.tid} pool question {j}: its premise does not hold")
            b = pert.perturb(ctx, inst.binding, task_rng(self.seed, f"geoqa-fp/{self.tid}", j))
            if b is None or pert.premise(ctx, b):
                continue
            fi = FalseInstance(j, b, _values(ctx, t, inst, b), inst.subtemplate, pert.kind, pert.facts(ctx, b))
            q = fi.question(t, 0)
            if q in self.seen:
                continue
            self.seen.add(q)
            self.out.append(FalseInstance(**json.loads(json.dumps(fi.__dict__))))
        return self.out


_BUILDERS: dict[tuple[str, int], _Builder] = {}


def false_instance(tid: str, index: int, seed: int = 0) -> FalseInstance:
    """False-premise question ``index`` of template ``tid`` (perturbing the pool in order).

    Raises:
        KeyError: a template without a perturbation; IndexError: ``index`` beyond the questions
            the pool yields (or negative).
    """
    if index < 0:
        raise IndexError(f"negative index {index}")
    PERTURBATIONS[tid]
    key = (tid, seed)
    if key not in _BUILDERS:
        _BUILDERS[key] = _Builder(tid, seed)
    out = _BUILDERS[key].extend(index + 1)
    if index >= len(out):
        raise IndexError(f"{tid}: only {len(out)} false-premise questions")
    return out[index]


def false_pool_size(tid: str, seed: int = 0) -> int:
    """How many false-premise questions template ``tid``'s whole pool yields."""
    key = (tid, seed)
    if key not in _BUILDERS:
        _BUILDERS[key] = _Builder(tid, seed)
    return len(_BUILDERS[key].extend(10 ** 9))
