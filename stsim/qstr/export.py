"""Export a calculus as JSON (relation names as keys) or in GQR's text formats.

GQR (Gantner, Westphal & Wölfl 2008) reads a composition table as lines ``r : s :: ( t u )``
(``<name>.comp``), a converse table as ``r :: s`` (``<name>.conv``) and a ``<name>.spec`` naming
both files, the identity and the number of relations.
"""
from __future__ import annotations

from typing import Any

from .calculus import Calculus


def to_json(cal: Calculus) -> dict[str, Any]:
    """Relations, identity, converse, composition and neighbourhood of ``cal`` as JSON data."""
    from .descriptions import SCHEMATIC_KEYS, schematics
    pics = schematics(cal.key) if cal.key in SCHEMATIC_KEYS else {}
    return {
        "key": cal.key, "name": cal.title, "abbrev": cal.abbrev, "identity": cal.identity,
        "relations": {r.name: {"word": r.word, "description": r.description,
                               "schematic": list(pics.get(r.name, ())), "aliases": list(r.aliases)}
                      for r in cal.relations},
        "converse": {n: cal.converse[n] for n in cal.names},
        "composition": ({a: {b: [n for n in cal.names if n in cal.compose(a, b)] for b in cal.names}
                         for a in cal.names} if cal.has_composition else None),
        "conceptual_neighbourhood": {n: [m for m in cal.names if m in cal.neighbours[n]] for n in cal.names},
        "conceptual_neighbourhood_variants": {
            v: {n: [m for m in cal.names if m in nb[n]] for n in cal.names}
            for v, nb in cal.neighbour_variants.items()},
        "source": dict(cal.source),
    }


def to_gqr(cal: Calculus) -> dict[str, str]:
    """``{"comp": ..., "conv": ..., "spec": ...}`` file texts in GQR's formats.

    Raises:
        ValueError: the calculus has no composition table.
    """
    if not cal.has_composition:
        raise ValueError(f"{cal.abbrev} has no composition table to export")
    w = max(len(n) for n in cal.names)
    comp = "".join(f"{a:<{w}} : {b:<{w}} :: ( {' '.join(n for n in cal.names if n in cal.compose(a, b))} )\n"
                   for a in cal.names for b in cal.names)
    conv = "".join(f"{a:<{w}} :: {cal.converse[a]}\n" for a in cal.names)
    spec = (f"# {cal.title}\ncomp_table_file {cal.key}/calculus/{cal.key}.comp\n"
            f"converse_file {cal.key}/calculus/{cal.key}.conv\nidentity {cal.identity}\n"
            f"calculus_size {len(cal)}\n")
    return {"comp": comp, "conv": conv, "spec": spec}
