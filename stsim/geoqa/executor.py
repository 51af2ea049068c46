"""The executor of the geospatial QA benchmark (MultiGlobeQA, seed 003 §3.3).

A :class:`Template` is question text with typed placeholders (several paraphrases) plus an
executable query over the entity store.  For each template the executor

1. samples a *binding* (entity ids for the template's roles and parameter values) with a
   random generator,
2. executes the query (geopandas / shapely / pyproj.Geod / h3 / s2sphere / pygeohash /
   networkx), which returns the gold answer, the *gold triples* (subject, predicate, object)
   the answer rests on, and the sub-template (parameter-bound variant, seed 003 §3.1),
3. validates the result against the answer format and the template's type constraints
   (distances at most half the ellipsoid's circumference, valid closed polygons, non-empty
   sets, ...) and discards degenerate executions (:class:`Degenerate`: ties, answers on a
   compass-sector boundary, division by zero, no path),
4. de-duplicates on (question, gold), the question taken in its canonical wording
   (paraphrase 0) so that one question in two wordings counts once; the family draws one
   paraphrase per task uniformly (seed 003 §3.3).

:func:`pool` does this once per template and seed and caches the list (a pure function of the
store and the seed); the families of :mod:`stsim.generators.geoqa` index into it.
:func:`execute` re-runs a query from a task's recorded binding: the oracle.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from ..seeding import task_rng

#: Half the WGS84 meridian circumference (km): no geodesic between two points is longer.
HALF_CIRCUMFERENCE_KM = 20003.931


class Degenerate(Exception):
    """An execution whose answer is undefined or ambiguous (tie, boundary case, no path...)."""


@dataclass
class Result:
    """What a query returns.

    Attributes:
        gold: the gold answer in the template's answer format.
        triples: ``[[subject, predicate, object], ...]`` facts the answer rests on.
        subtemplate: the parameter-bound variant (e.g. ``"unit=mi"``); majority baselines
            are per sub-template, so it must never depend on the answer.
        spec: extra ``answer_spec`` (tolerances, aliases, compass points).
        text: extra placeholder values for the question (beyond entity names and params).
    """
    gold: Any
    triples: list[list[Any]]
    subtemplate: str = ""
    spec: dict[str, Any] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Template:
    """A question template.

    Attributes:
        tid: ``SFID.name``, e.g. ``metric.distance``.
        sfid: spatial-function family (one of :data:`SFIDS`).
        answer_format: a geoqa format name (``geo_*``).
        paraphrases: question texts with ``{placeholders}`` (>= 2).
        roles: placeholder -> entity type (``city``, ``country``, ``place``...); the rest of
            the placeholders are parameters of the binding or :attr:`Result.text`.
        sample: ``(ctx, rng) -> binding`` (``{"ids": {role: id}, "params": {...}}``).
        query: ``(ctx, binding) -> Result``; raises :class:`Degenerate`.
        instruction: how to write the answer (shown after the question).
        cap: at most this many distinct questions in the pool.
    """
    tid: str
    sfid: str
    answer_format: str
    paraphrases: tuple[str, ...]
    roles: dict[str, str]
    sample: Callable[[Any, np.random.Generator], dict[str, Any]]
    query: Callable[[Any, dict[str, Any]], Result]
    instruction: str
    cap: int = 800


TEMPLATES: dict[str, Template] = {}

#: The 14 spatial-function families: the ten the paper names (§3.1, Fig. 1) and four of ours.
SFIDS = ("metric", "topology", "direction", "coordinates", "admin", "shape", "centrality", "grid",
         "transformation", "uncertainty", "nearest", "aggregation", "enumeration", "routing")


def register(t: Template) -> Template:
    """Add a template; ``ValueError`` on a duplicate id, an unknown SFID or < 2 paraphrases."""
    if t.tid in TEMPLATES:
        raise ValueError(f"template {t.tid!r} registered twice")
    if t.sfid not in SFIDS:
        raise ValueError(f"template {t.tid}: unknown SFID {t.sfid!r}")
    if len(t.paraphrases) < 2:
        raise ValueError(f"template {t.tid}: needs at least 2 paraphrases")
    TEMPLATES[t.tid] = t
    return t


def validate(t: Template, res: Result) -> Any:
    """Check a result against the template's format and type constraints; return the
    normalised gold.  Raises :class:`Degenerate` on a violation."""
    from ..answers import ParseError, get_format
    fmt = get_format(t.answer_format)
    try:
        gold = fmt.check(res.gold, res.spec or None)
    except ParseError as exc:
        raise Degenerate(f"invalid gold: {exc}") from None
    if t.answer_format == "geo_distance" and res.spec.get("unit", "km") == "km" and gold > HALF_CIRCUMFERENCE_KM:
        raise Degenerate("distance beyond half the circumference")
    if t.answer_format in ("geo_distance", "geo_area") and gold < 0 and not res.spec.get("signed"):
        raise Degenerate("negative length or area")
    if t.answer_format in ("geo_ranked",) and len(gold) < 2:
        raise Degenerate("ranked list of fewer than two")
    if t.answer_format == "geo_ratio" and not math.isfinite(gold):
        raise Degenerate("ratio not finite")
    return gold


def placeholder_values(t: Template, ctx: Any, binding: dict[str, Any], res: Result) -> dict[str, str]:
    """Text of every placeholder: entity names (``city_coords`` roles as name and
    coordinates), parameters, and the result's extra text."""
    values = {role: ctx.display_coords(eid) if t.roles.get(role) == "city_coords" else ctx.display(eid)
              for role, eid in binding.get("ids", {}).items()}
    values.update({p: _fmt_param(v) for p, v in binding.get("params", {}).items()})
    values.update(res.text)
    return values


def _fmt_param(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


@dataclass(frozen=True)
class Instance:
    """One verified question of a template's pool.

    Attributes:
        binding: entity ids and parameters the query ran on.
        gold: the validated gold answer.
        triples: the facts the answer rests on.
        subtemplate: parameter-bound variant.
        spec: ``answer_spec`` of the task.
        values: every placeholder's text (so any paraphrase can be rendered).
    """
    binding: dict[str, Any]
    gold: Any
    triples: list[list[Any]]
    subtemplate: str
    spec: dict[str, Any]
    values: dict[str, str]

    def question(self, t: Template, k: int) -> str:
        """Paraphrase ``k`` of the question."""
        return t.paraphrases[k].format(**self.values)

    def instruction(self, t: Template) -> str:
        return t.instruction.format(**self.values)


def execute(tid: str, binding: dict[str, Any]) -> Any:
    """Re-run template ``tid``'s query on ``binding`` and return the validated gold (the
    executor as oracle).  Raises :class:`KeyError` (unknown template) or :class:`Degenerate`."""
    from .context import get_context
    t = TEMPLATES[tid]
    return validate(t, t.query(get_context(), binding))


@lru_cache(maxsize=1)
def _code_hash() -> str:
    """Hash of the modules that decide the questions (executor, context, templates, store, strata)."""
    import hashlib
    from pathlib import Path
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in ("executor.py", "context.py", "templates.py", "store.py", "strata.py"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def _pool_file(tid: str, seed: int):
    from .store import cache_dir, cache_key
    return cache_dir() / f"pools-{cache_key()}-{_code_hash()}" / f"{tid}.seed{seed}.json"


_FULL: dict[tuple[str, int], tuple[Instance, ...]] = {}
_BUILDERS: dict[tuple[str, int], "_PoolBuilder"] = {}


#: At most this many questions per (template, source, stratum) cell (seed 003 §3.2 draws "up
#: to 30 entity tuples per (template, KG, stratum)"; we keep 50, as a template here has one
#: source instead of three KGs).  docs/geoqa.md, "Sampling".
K_PER_CELL = 50
#: Sampled bindings per stratum cell before the cell is given up (a cell whose questions are
#: mostly degenerate or duplicates, or whose entities the template rarely reaches).
ATTEMPTS_PER_QUESTION = 6


def stratum_targets(t: Template) -> list[tuple[str, str]]:
    """The stratum cells the executor samples a template in, in a fixed order: the 4 x 3
    (income, density) grid of seed 003 §3.2 for templates about cities, the four income tiers
    (density ``none``) for templates whose first role is a country, and for the simulated-city
    templates (stratum ``sim/sim``: no income, no density) one cell ``("sim", "K")`` per
    simulated city ``K`` of :data:`~stsim.geoqa.store.NETWORKS`.  Places in countries
    without an income tier (``unknown``: no Natural Earth 1:110m polygon) are never targeted;
    a question lands there only when a template's sampler draws one as a secondary choice
    (still at most :data:`K_PER_CELL`)."""
    from .store import N_NETWORKS
    from .strata import DENSITY_TIERS, INCOME_TIERS
    if "{net}" in t.paraphrases[0]:
        return [("sim", str(k)) for k in range(N_NETWORKS)]
    first = next(iter(t.roles.values()), "city")
    if first == "country":
        return [(inc, "none") for inc in INCOME_TIERS]
    return [(inc, d) for inc in INCOME_TIERS for d in DENSITY_TIERS]


def _label(cell: tuple[str, str]) -> str:
    return f"{cell[0]}/{cell[1]}"


def sampling_cell(binding: dict[str, Any]) -> str:
    """The cell a pool question counts against: its stratum (:func:`~stsim.geoqa.strata.stratum`,
    ``INCOME/DENSITY``), or ``sim/K`` for a question about simulated city ``K``."""
    from .strata import stratum
    if "network" in binding:
        return f"sim/{binding['network']}"
    return stratum(binding)


class _PoolBuilder:
    """Draws a template's pool one question at a time, so that a prefix costs only its own
    executions; the decisions (degenerate, duplicate, stratum full, yes/no balance) depend only
    on earlier draws, so any prefix equals the same prefix of the complete pool.

    Stratified sampling (seed 003 §3.2): draws go round-robin over the template's stratum
    cells (:func:`stratum_targets`) that are still open, starting at a cell fixed by the
    template id (sha256); each draw samples its primary entity
    within the cell (:meth:`~stsim.geoqa.context.Context.targeting`), and a question is kept
    only while its own cell (:func:`sampling_cell`) has fewer than
    :data:`K_PER_CELL` questions (and, for yes/no templates, fewer than ``K_PER_CELL // 2`` of
    its answer).  A cell closes when it holds ``K_PER_CELL`` questions or after
    ``ATTEMPTS_PER_QUESTION * K_PER_CELL`` draws; the pool is complete when every cell is
    closed or it holds ``cap`` questions."""

    def __init__(self, t: Template, seed: int):
        self.t = t
        self.rng = task_rng(seed, f"geoqa-pool/{t.tid}", 0)
        self.seen: set[tuple[str, str]] = set()
        self.n_class: dict[tuple[str, Any], int] = {}
        self.n_cell: dict[str, int] = {}
        self.targets = stratum_targets(t)
        self.tries = [0] * len(self.targets)
        # each template starts the round at its own cell, so that short prefixes of many
        # templates (geoqa-small, geoqa-mini) do not all favour the first cells
        import hashlib
        self.turn = int(hashlib.sha256(t.tid.encode()).hexdigest()[:8], 16) % len(self.targets)
        self.out: list[Instance] = []
        self.attempts = 0
        self.done = False

    def _next_target(self) -> int | None:
        """Index of the next open cell in round-robin order, or None when all are closed."""
        n = len(self.targets)
        for _ in range(n):
            j = self.turn % n
            self.turn += 1
            if (self.n_cell.get(_label(self.targets[j]), 0) < K_PER_CELL
                    and self.tries[j] < ATTEMPTS_PER_QUESTION * K_PER_CELL):
                return j
        return None

    def extend(self, n: int) -> list[Instance]:
        """Draw until the pool has ``n`` questions or is complete (class docstring); return
        the questions so far."""
        from .context import get_context
        ctx, t = get_context(), self.t
        while len(self.out) < n and not self.done:
            j = self._next_target() if len(self.out) < t.cap else None
            if j is None:
                self.done = True
                break
            self.tries[j] += 1
            self.attempts += 1
            try:
                with ctx.targeting(self.targets[j]):
                    binding = t.sample(ctx, self.rng)
                if binding is None:
                    continue
                res = t.query(ctx, binding)
                gold = validate(t, res)
                values = placeholder_values(t, ctx, binding, res)
            except Degenerate:
                continue
            # de-duplicate on the question in its canonical wording (paraphrase 0) and the
            # gold: one question in two wordings counts once
            key = (t.paraphrases[0].format(**values), json.dumps(gold, sort_keys=True))
            if key in self.seen:
                continue
            cell = sampling_cell(binding)
            if self.n_cell.get(cell, 0) >= K_PER_CELL:
                continue
            if t.answer_format == "geo_boolean":
                if self.n_class.get((cell, gold), 0) >= K_PER_CELL // 2:
                    continue  # yes/no questions are balanced per cell: at most half of K per answer
                self.n_class[(cell, gold)] = self.n_class.get((cell, gold), 0) + 1
            self.n_cell[cell] = self.n_cell.get(cell, 0) + 1
            self.seen.add(key)
            row = json.loads(json.dumps(Instance(binding, gold, res.triples, res.subtemplate, res.spec,
                                                 values).__dict__))
            self.out.append(Instance(**row))
        return self.out


def _builder(tid: str, seed: int) -> _PoolBuilder:
    key = (tid, seed)
    if key not in _BUILDERS:
        _BUILDERS[key] = _PoolBuilder(TEMPLATES[tid], seed)
    return _BUILDERS[key]


def pool(tid: str, seed: int = 0) -> tuple[Instance, ...]:
    """The verified, de-duplicated questions of template ``tid`` for ``seed``, sampled by
    stratum (up to :data:`K_PER_CELL` per (template, source, stratum) cell, at most ``cap``;
    :class:`_PoolBuilder`), in draw order.  Samplers and queries that raise
    :class:`Degenerate` are skipped.

    The complete pool is kept as JSON in the user cache, keyed by the store's sources and the
    hash of the code that makes questions; every question goes through the same JSON round
    trip when drawn, so a cached and a fresh pool are equal value for value.

    Raises:
        KeyError: unknown template.
    """
    import os
    key = (tid, seed)
    if key in _FULL:
        return _FULL[key]
    TEMPLATES[tid]  # KeyError on an unknown template
    path = _pool_file(tid, seed)
    if path.is_file():
        try:
            _FULL[key] = tuple(Instance(**r) for r in json.loads(path.read_text(encoding="utf-8")))
            return _FULL[key]
        except (ValueError, TypeError):
            pass  # a damaged cache file: rebuild it
    out = tuple(_builder(tid, seed).extend(10 ** 9))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps([inst.__dict__ for inst in out]), encoding="utf-8")
    os.replace(tmp, path)
    _FULL[key] = out
    return out


def instance(tid: str, index: int, seed: int = 0) -> Instance:
    """Question ``index`` of template ``tid``'s pool, drawing only as far as needed when the
    complete pool is not cached yet.

    Raises:
        IndexError: ``index`` beyond the pool (or negative); KeyError: unknown template.
    """
    if index < 0:
        raise IndexError(f"negative index {index}")
    key = (tid, seed)
    if key not in _FULL and not _pool_file(tid, seed).is_file():
        out = _builder(tid, seed).extend(index + 1)
        if index < len(out):
            return out[index]
    return pool(tid, seed)[index]


def load_templates() -> dict[str, Template]:
    """Import the template definitions (registers them) and return :data:`TEMPLATES`."""
    from . import templates  # noqa: F401
    return TEMPLATES
