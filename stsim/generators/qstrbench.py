"""QSTRBench and QSTRBenchExtended question families, and multi-hop composition chains.

Families (QSTRBench §3; one task per question, enumerated in a fixed order, so a suite with a
family's full ``size`` yields every question exactly once):

* ``qstr.<calc>.converse`` -- "given R(x,y), which relation holds between y and x?"
  (answer format ``relation``);
* ``qstr.<calc>.ct`` -- composition: "given R1(x,y) and R2(y,z), which relations can hold
  between x and z?" (``relation_set``), one per ordered pair of base relations;
* ``qstr.<calc>.cn`` -- conceptual neighbours of R (for 9IM: closest topological
  relationships) (``relation_set``);
* ``qstrx.<variant>.<calc>.<qtype>`` -- the same questions in the presentation variants of
  QSTRBenchExtended (:data:`EXTENDED_VARIANTS`);
* ``qstr.chain.<calc>`` -- beyond the paper: ``x0 R1 x1, ..., x(k-1) Rk xk`` with random
  ``k`` in ``k_min..k_max``; gold by algebraic closure of the path network.

Gold answers are computed by the calculus engine (:mod:`stsim.qstr`), never stored.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..qstr import CALCULUS_KEYS, all_calculi
from ..qstr.calculus import Calculus
from ..qstr.descriptions import SCHEMATIC_KEYS
from ..qstr.prompts import Style, atom, build_prompt, describe, display_names
from ..qstr.reasoner import chain_relations
from ..registry import Family, TaskBody, register_family

#: variant name -> (style, calculus keys it applies to); QSTRBench §3 "QSTRBenchExtended".
EXTENDED_VARIANTS: dict[str, tuple[Style, tuple[str, ...]]] = {
    **{f"{nota}-{naming}": (Style(nota, naming), CALCULUS_KEYS)
       for naming in ("symbol", "word", "nonce") for nota in ("prefix", "infix")},
    "schematic-eponymous": (Style("prefix", "symbol", "schematic"), SCHEMATIC_KEYS),
    "schematic-anonymous": (Style("prefix", "nonce", "schematic"), SCHEMATIC_KEYS),
    **{d: (Style("prefix", "symbol", d), ("rcc8",))
       for d in ("point", "latex", "unicode", "reverse", "none", "swapped")},
}
BASE_STYLE = Style()


def nonce_offsets() -> dict[str, int]:
    """First nonce word of each calculus' block (calculi in QSTRBench §4 order)."""
    out, k = {}, 0
    for key in CALCULUS_KEYS:
        out[key] = k
        k += len(all_calculi()[key])
    return out


def questions(cal: Calculus, qtype: str) -> list[list[str]]:
    """The relation argument(s) of every question of a type, in benchmark order."""
    return [list(q) for q in _questions(cal.key, qtype)]


@lru_cache(maxsize=None)
def _questions(key: str, qtype: str) -> tuple[tuple[str, ...], ...]:
    cal = all_calculi()[key]
    if qtype == "ct":
        return tuple((a, b) for a in cal.names for b in cal.names) if cal.has_composition else ()
    return tuple((a,) for a in cal.names)


def gold(cal: Calculus, qtype: str, rels: list[str]) -> list[str]:
    """Canonical gold relation names (calculus order)."""
    if qtype == "converse":
        return [cal.converse[rels[0]]]
    res = cal.compose(*rels) if qtype == "ct" else cal.neighbours[rels[0]]
    return [n for n in cal.names if n in res]


def guess_rate(cal: Calculus, qtype: str) -> float:
    """QSTRBench §4: 1/n for converse, 1/(2^n - 1) for CT and CN."""
    n = len(cal)
    return 1.0 / n if qtype == "converse" else 1.0 / (2 ** n - 1)


def _aliases(cal: Calculus, names: dict[str, str], style: Style) -> dict[str, str]:
    if style.naming != "symbol" or style.description == "swapped":
        return {}
    return {a: names[r.name] for r in cal.relations for a in r.aliases}


def make_question(key: str, qtype: str, index: int, style: Style = BASE_STYLE,
                  variant: str = "base") -> TaskBody:
    """Question ``index`` of ``qtype`` for calculus ``key`` in ``style``.

    Raises:
        IndexError: ``index`` out of range.
    """
    cal = all_calculi()[key]
    rels = list(_questions(key, qtype)[index])
    prompt, names = build_prompt(cal, qtype, rels, style, nonce_offsets()[key])
    canon = gold(cal, qtype, rels)
    shown = [names[n] for n in canon]
    answer: Any = shown[0] if qtype == "converse" else sorted(shown)
    spec = {"choices": [names[n] for n in cal.names], "aliases": _aliases(cal, names, style)}
    inputs = {"calculus": key, "question": qtype, "relations": rels,
              "style": {"notation": style.notation, "naming": style.naming,
                        "description": style.description},
              "names": names}
    meta = {"answer_spec": spec, "calculus": cal.abbrev, "qtype": qtype, "variant": variant,
            "canonical_answer": canon, "guess_rate": guess_rate(cal, qtype)}
    return TaskBody(prompt=prompt, inputs=inputs, answer=answer, meta=meta)


def validate_qstr(task) -> None:
    """Reject a qstr task read from a file whose inputs the engine cannot interpret.

    Raises:
        RecordError: unknown calculus or question type, wrong number of relations, unknown
            relation names, or a display-name map that does not cover the calculus.
    """
    from ..qstr.calculus import CalculusError
    from ..records import RecordError
    inp = task.inputs if isinstance(task.inputs, dict) else {}
    key, q, rels = inp.get("calculus"), inp.get("question"), inp.get("relations")
    cals = all_calculi()
    if key not in cals:
        raise RecordError(f"task {task.id}: unknown calculus {key!r}; known: {', '.join(cals)}")
    cal = cals[key]
    want = {"converse": 1, "cn": 1, "ct": 2}.get(q)
    if q != "chain" and want is None:
        raise RecordError(f"task {task.id}: unknown question type {q!r}")
    if not isinstance(rels, list) or (want is not None and len(rels) != want) or not rels:
        raise RecordError(f"task {task.id}: {q} needs {want or 'at least 1'} relation(s), got {rels!r}")
    if not all(isinstance(r, str) for r in rels):
        raise RecordError(f"task {task.id}: relations must be relation names (strings), got {rels!r:.80}")
    try:
        cal.mask(rels)
    except CalculusError as exc:
        raise RecordError(f"task {task.id}: {exc}") from None
    names = inp.get("names")
    if names is not None and (not isinstance(names, dict) or set(names) != set(cal.names)):
        raise RecordError(f"task {task.id}: 'names' must map every {cal.abbrev} relation to its shown name")


def _register(name: str, key: str, qtype: str, style: Style, variant: str, desc: str) -> None:
    cal = all_calculi()[key]
    size = len(questions(cal, qtype))
    if size == 0:
        return
    register_family(Family(
        name=name, answer_format="relation" if qtype == "converse" else "relation_set",
        make=lambda rng, cfg, index, k=key, q=qtype, s=style, v=variant: make_question(k, q, index, s, v),
        defaults={}, description=desc, version="2", rubric="qstrbench", size=size,
        validate=validate_qstr, source="QSTRBench (Cohn & Blackwell, seed 000) §3" + (
            "" if variant == "base" else f"; QSTRBenchExtended presentation variant {variant!r}")))


QTYPE_TEXT = {"converse": "converse", "ct": "composition", "cn": "conceptual neighbourhood"}
BASE_FAMILIES: dict[str, int] = {}
EXTENDED_FAMILIES: dict[str, int] = {}


def _register_questions(prefix: str, keys, style: Style, variant: str, label: str,
                        into: dict[str, int]) -> None:
    """Register ``<prefix>.<calc>.<qtype>`` for every calculus and question type that has
    questions, recording each family's size in ``into``."""
    for key in keys:
        cal = all_calculi()[key]
        for q in ("converse", "ct", "cn"):
            n = len(questions(cal, q))
            if n:
                name = f"{prefix}.{key}.{q}"
                _register(name, key, q, style, variant, label.format(cal=cal.abbrev, q=QTYPE_TEXT[q], n=n))
                into[name] = n


_register_questions("qstr", CALCULUS_KEYS, BASE_STYLE, "base", "QSTRBench {cal} {q} questions ({n})",
                    BASE_FAMILIES)
for _variant, (_style, _keys) in EXTENDED_VARIANTS.items():
    _register_questions(f"qstrx.{_variant}", _keys, _style, _variant,
                        f"QSTRBenchExtended {_variant} {{cal}} {{q}} ({{n}})", EXTENDED_FAMILIES)


# ------------------------------------------------------------------------------ chains
def make_chain(key: str, rng, cfg: dict[str, Any]) -> TaskBody:
    """A multi-hop composition question of random length ``k`` in ``k_min..k_max``.

    Raises:
        ValueError: ``k_min < 1`` or ``k_min > k_max``.
    """
    k_min, k_max = int(cfg["k_min"]), int(cfg["k_max"])
    if not 1 <= k_min <= k_max:
        raise ValueError(f"need 1 <= k_min <= k_max, got {k_min}, {k_max}")
    cal = all_calculi()[key]
    k = int(rng.integers(k_min, k_max + 1))
    chain = [cal.names[int(i)] for i in rng.integers(0, len(cal), k)]
    res = chain_relations(cal, chain)
    names = display_names(cal, BASE_STYLE)
    facts = ", ".join(atom(r, f"x{i}", f"x{i + 1}", BASE_STYLE) for i, r in enumerate(chain))
    from ..qstr.prompts import ANSWER, ANNOUNCE, MULTI, ROLE
    prompt = "\n\n".join([ROLE, describe(cal, names, BASE_STYLE), ANNOUNCE, MULTI, ANSWER,
                          f"Given {facts}, which relations can hold between x0 and x{k}?"])
    return TaskBody(prompt=prompt, inputs={"calculus": key, "question": "chain", "relations": chain},
                    answer=[n for n in cal.names if n in res],
                    meta={"answer_spec": {"choices": list(cal.names),
                                          "aliases": _aliases(cal, names, BASE_STYLE)},
                          "calculus": cal.abbrev, "qtype": "chain", "k": k,
                          "guess_rate": 1.0 / (2 ** len(cal) - 1)})


CHAIN_FAMILIES: list[str] = []
for _key in CALCULUS_KEYS:
    if not all_calculi()[_key].has_composition:
        continue
    register_family(Family(
        name=f"qstr.chain.{_key}", answer_format="relation_set",
        make=lambda rng, cfg, k=_key: make_chain(k, rng, cfg), defaults={"k_min": 2, "k_max": 10},
        description=f"{all_calculi()[_key].abbrev} multi-hop composition chains, k = 2..10 "
                    "(gold by algebraic closure)", rubric="qstrbench", validate=validate_qstr,
        source="beyond QSTRBench: multi-hop composition chains (gold by algebraic closure)"))
    CHAIN_FAMILIES.append(f"qstr.chain.{_key}")
