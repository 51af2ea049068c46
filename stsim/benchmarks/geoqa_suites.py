"""Suites of the geospatial QA benchmark (MultiGlobeQA-style, seed 003; docs/geoqa.md).

Every template's pool is sampled by stratum (:mod:`stsim.geoqa.executor`, seed 003 §3.2): up
to ``K_PER_CELL`` = 50 questions per (template, source, income x density stratum) cell, the
draws going round-robin over the cells, so any prefix of a pool spreads over the strata.

* ``geoqa`` (large) -- every question of every template's stratified pool and every
  false-premise question (``geoqa.fp.*``, seed 003 §3.4);
* ``geoqa-small`` -- a fixed canonical subset of ``geoqa`` (seed 003 Appendix A.3): up to
  :data:`SMALL_CELL` questions per (source, SFID) cell, split evenly over the cell's templates
  (water-filling over :func:`max_pool_size`), each template's *first* questions -- a prefix of
  its pool, hence a strict subset of ``geoqa`` with the same task contents -- plus
  false-premise questions making up :data:`FALSE_PREMISE_SHARE` of the suite, split evenly
  over the templates that have them;
* ``geoqa-mini`` -- the first 20 questions of every template (the quick demo; no false premises).

:func:`composition` counts a suite's questions per stratum (``stsim entities strata SUITE``).
"""
from __future__ import annotations

from ..geoqa.executor import K_PER_CELL, load_templates
from ..geoqa.premise import PERTURBATIONS
from .suites import Suite, register_suite

#: At most this many questions per (source, SFID) cell in ``geoqa-small`` (the paper's small split).
SMALL_CELL = 200
#: Target share of false-premise questions in ``geoqa-small`` (seed 003 §3.4: 7.8 %).
FALSE_PREMISE_SHARE = 0.08

_T = load_templates()
_FAMILIES = {f"geoqa.{tid}": t.cap for tid, t in _T.items()}
_FP = {f"geoqa.fp.{tid}": _T[tid].cap for tid in PERTURBATIONS}


def source_of(tid: str) -> str:
    """The entity source of a template: ``sim`` (questions about the simulated cities) or
    ``geonames`` (GeoNames places and Natural Earth countries)."""
    return "sim" if "{net}" in _T[tid].paraphrases[0] else "geonames"


def max_pool_size(tid: str) -> int:
    """Upper bound of a template's pool size known without drawing it: ``cap``, and
    :data:`~stsim.geoqa.executor.K_PER_CELL` per stratum cell it is sampled in (a city
    template's pool can exceed the 12 targeted cells' bound only by questions that land in the
    ``unknown`` income tier, which this bound leaves out)."""
    from ..geoqa.executor import K_PER_CELL, stratum_targets
    return min(_T[tid].cap, K_PER_CELL * len(stratum_targets(_T[tid])))


def small_counts() -> dict[str, int]:
    """Family -> number of questions of ``geoqa-small`` (before capping at each pool's size)."""
    cells: dict[tuple[str, str], list[str]] = {}
    for tid, t in _T.items():
        cells.setdefault((source_of(tid), t.sfid), []).append(tid)
    out: dict[str, int] = {}
    for tids in cells.values():
        # water-filling: the cell's SMALL_CELL questions split evenly over its templates, a
        # template whose pool is bounded below its share giving the rest to the others
        bound = {tid: max_pool_size(tid) for tid in tids}
        left, todo = SMALL_CELL, sorted(tids, key=lambda x: (bound[x], x))
        while todo:
            tid = todo.pop(0)
            out[f"geoqa.{tid}"] = take = min(bound[tid], left // (len(todo) + 1))
            left -= take
    n_fp = round(FALSE_PREMISE_SHARE / (1 - FALSE_PREMISE_SHARE) * sum(out.values()))
    for fam in _FP:
        out[fam] = n_fp // len(_FP)
    return out


register_suite(Suite("geoqa", f"Geospatial QA over real places (MultiGlobeQA-style): up to {K_PER_CELL} verified "
                     f"questions per (template, source, income x density stratum) cell of {len(_FAMILIES)} templates in 14 spatial-function families and the false-premise "
                     f"questions of {len(_FP)} of them.", {**_FAMILIES, **_FP}))
register_suite(Suite("geoqa-small", f"Geospatial QA, small split: up to {SMALL_CELL} questions per (source, SFID) "
                     f"cell and ~{FALSE_PREMISE_SHARE:.0%} false premises; a subset of geoqa.", small_counts()))
register_suite(Suite("geoqa-mini", "Geospatial QA, small: the first 20 questions of every template.",
                     {f: 20 for f in _FAMILIES}))


def composition(suite_name: str, only: str | None = None) -> dict:
    """What a geoqa suite asks, counted from its task keys without writing tasks: questions per
    income x density stratum (``"INCOME/DENSITY"``, :func:`stsim.geoqa.strata.stratum`),
    per source (``geonames`` / ``sim``) and the false-premise share.

    Returns:
        ``{"suite", "n", "n_false_premise", "false_premise_share", "cells": {stratum: n},
        "income": {tier: n}, "density": {tier: n}, "source": {source: n}}`` (counts include
        the false-premise questions, whose stratum is that of their perturbed binding).
    Raises:
        SuiteError: unknown suite, or one without geoqa families.
    """
    from collections import Counter
    from ..geoqa.executor import pool
    from ..geoqa.premise import false_instance
    from ..geoqa.strata import stratum
    from .suites import SuiteError, get_suite
    suite = get_suite(suite_name)
    keys = [k for k in suite.task_keys(only=only) if k[0].startswith("geoqa.")]
    if not keys:
        raise SuiteError(f"suite {suite_name!r} has no geoqa questions" + (f" matching {only!r}" if only else ""))
    cells: Counter = Counter()
    sources: Counter = Counter()
    n_fp = 0
    for fam, i in keys:
        if fam.startswith("geoqa.fp."):
            tid = fam.removeprefix("geoqa.fp.")
            binding = false_instance(tid, i).binding
            n_fp += 1
        else:
            tid = fam.removeprefix("geoqa.")
            binding = pool(tid)[i].binding
        cells[stratum(binding)] += 1
        sources[source_of(tid)] += 1
    income: Counter = Counter()
    density: Counter = Counter()
    for lab, v in cells.items():
        inc, dens = lab.split("/")
        income[inc] += v
        density[dens] += v
    return {"suite": suite_name, "n": len(keys), "n_false_premise": n_fp,
            "false_premise_share": round(n_fp / len(keys), 6), "cells": dict(sorted(cells.items())),
            "income": dict(sorted(income.items())), "density": dict(sorted(density.items())),
            "source": dict(sorted(sources.items()))}


def format_composition(c: dict) -> str:
    """:func:`composition` as a table: rows income tiers, columns density tiers (``none``:
    country questions; ``sim``: simulated cities), with totals."""
    from ..geoqa.strata import DENSITY_TIERS, INCOME_TIERS
    incomes = [i for i in (*INCOME_TIERS, "unknown", "sim") if i in c["income"]]
    dens = [d for d in (*DENSITY_TIERS, "none", "sim") if d in c["density"]]
    w = max(len(i) for i in incomes + ["income"])
    lines = [f"suite {c['suite']}: {c['n']} questions, {c['n_false_premise']} with a false premise "
             f"({100 * c['false_premise_share']:.1f} %)",
             f"{'income':<{w}}  " + "  ".join(f"{d:>7}" for d in dens) + f"  {'total':>7}"]
    for i in incomes:
        lines.append(f"{i:<{w}}  " + "  ".join(f"{c['cells'].get(f'{i}/{d}', 0):>7}" for d in dens)
                     + f"  {c['income'][i]:>7}")
    lines.append(f"{'total':<{w}}  " + "  ".join(f"{c['density'][d]:>7}" for d in dens) + f"  {c['n']:>7}")
    lines.append("Strata are proxies (income: GDP per capita at World Bank FY2026 thresholds; density: "
                 "H3-res-3 terciles of GeoNames populations): docs/geoqa.md, 'Strata'.")
    return "\n".join(lines)


def language_composition(suite_name: str, only: str | None = None, seed: int = 0) -> dict:
    """Per language of :data:`stsim.geoqa.languages.LANGUAGES`: how many of a geoqa suite's
    questions it has (every language has every question) and what share of them is
    translated: ``{lang: {"n", "templates", "labels"}}``, ``templates`` the share of tasks whose
    template has a translation (the rest fall back to English), ``labels`` translated / all
    entity labels (``inputs.labels``); 1 for English.  Generates every task once per language.

    Raises:
        SuiteError: unknown suite, or one without geoqa families.
    """
    from ..generators.geoqa_languages import with_language
    from ..geoqa.languages import LANGUAGES
    from .suites import SuiteError, get_suite
    tasks = [t for t in get_suite(suite_name).tasks(seed=seed, only=only) if t.family.startswith("geoqa.")]
    if not tasks:
        raise SuiteError(f"suite {suite_name!r} has no geoqa questions" + (f" matching {only!r}" if only else ""))
    out = {}
    for lang in LANGUAGES:
        if lang == "en":
            out[lang] = {"n": len(tasks), "templates": 1.0, "labels": 1.0}
            continue
        tr = done = total = 0
        for t in tasks:
            x = with_language(t, lang)
            tr += "language_fallback" not in x.inputs
            done += x.inputs["labels"][0]
            total += x.inputs["labels"][1]
        out[lang] = {"n": len(tasks), "templates": round(tr / len(tasks), 6),
                     "labels": round(done / total, 6) if total else None}
    return out


def format_language_composition(c: dict) -> str:
    lines = [f"{'language':<10}  {'n':>7}  {'templ%':>6}  {'label%':>6}"]
    for lang, r in c.items():
        lab = "-" if r["labels"] is None else f"{100 * r['labels']:.1f}"
        lines.append(f"{lang:<10}  {r['n']:>7}  {100 * r['templates']:>6.1f}  {lab:>6}")
    lines.append("templ%: questions whose template is translated (the rest stay English); label%: "
                 "translated entity labels (the rest fall back to English): docs/geoqa.md, 'Languages'.")
    return "\n".join(lines)
