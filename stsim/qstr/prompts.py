"""QSTRBench prompts in the structure of the paper's Table 4 (own wording).

A prompt is: a one-line role statement, the calculus description, the conceptual
neighbourhood description (CN questions only), a line announcing the question, the
multiple-answer sentence (CT and CN questions), the ``### Answer:`` instruction, the question.

:class:`Style` selects the presentation variants of QSTRBenchExtended (§3): prefix ``R(x,y)``
or infix ``x R y``; symbol, word or nonce relation names; textual, schematic, point-based,
LaTeX, Unicode, reversed, absent or name-swapped descriptions.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .calculus import Calculus

QTYPES = ("converse", "ct", "cn")

ROLE = "You answer questions about qualitative spatial and temporal calculi."
ANNOUNCE = "A question about these relations follows."
MULTI = "More than one relation may be possible; if so, give every possible relation."
ANSWER = ('Finish with a line that starts with "### Answer:" followed only by the relation names, '
          "separated by semicolons.")
CN_TEXT = {
    "region": ("The conceptual neighbourhood of a relation R between x and y is the set of relations "
               "that can hold immediately after R when x, y or both deform or move continuously, "
               "with no other relation holding in between."),
    "interval": ("The conceptual neighbourhood of a relation R between x and y is the set of relations "
                 "that can hold immediately after R when x, y or both deform or move continuously, "
                 "with no other relation holding in between."),
    "point": ("The conceptual neighbourhood of a relation R between x and y is the set of relations "
              "that can hold immediately after R when x, y or both move continuously, with no other "
              "relation holding in between."),
    "9im": ("The topological distance between two of these relations is the number of the nine "
            "intersections that are empty in one relation and non-empty in the other. The closest "
            "topological relationships of a relation R are the relations at the smallest non-zero "
            "topological distance from R."),
}
ANONYMOUS_TITLE = "The calculus in this question"

#: QSTRBench §3: names swapped in the misleading RCC-8 variant.
RCC8_SWAPS = {"EQ": "EC", "EC": "EQ", "DC": "PO", "PO": "DC", "TPP": "NTPPi", "NTPPi": "TPP",
              "TPPi": "NTPP", "NTPP": "TPPi"}


@lru_cache(maxsize=1)
def nonce_words() -> tuple[str, ...]:
    """The shipped nonce words (``stsim/data/nonce_words.txt``, made by
    ``scripts/make_nonce_words.py``)."""
    text = resources.files("stsim").joinpath("data/nonce_words.txt").read_text(encoding="utf-8")
    return tuple(w for w in text.split() if w)


@dataclass(frozen=True)
class Style:
    """How a question is presented.

    Attributes:
        notation: ``prefix`` (``R(x,y)``) or ``infix`` (``x R y``).
        naming: ``symbol``, ``word`` or ``nonce``.
        description: ``text``, ``schematic``, ``point``, ``latex``, ``unicode``, ``reverse``,
            ``none`` or ``swapped`` (the last five for RCC-8 only).
    """
    notation: str = "prefix"
    naming: str = "symbol"
    description: str = "text"

    @property
    def anonymous(self) -> bool:
        return self.naming == "nonce" or self.description == "swapped"


def display_names(cal: Calculus, style: Style, nonce_offset: int = 0) -> dict[str, str]:
    """Canonical relation name -> the name shown in the prompt (and expected in answers).

    Nonce names are taken from :func:`nonce_words` starting at ``nonce_offset`` (each calculus
    has its own block, so no two relations of the benchmark share a nonce word).

    Raises:
        ValueError: unknown naming, or not enough nonce words.
    """
    if style.description == "swapped":
        return {n: RCC8_SWAPS[n] for n in cal.names}
    if style.naming == "symbol":
        return {n: n for n in cal.names}
    if style.naming == "word":
        return {r.name: r.word for r in cal.relations}
    if style.naming == "nonce":
        words = nonce_words()
        if nonce_offset + len(cal) > len(words):
            raise ValueError(f"need {nonce_offset + len(cal)} nonce words, have {len(words)}")
        return {n: words[nonce_offset + i] for i, n in enumerate(cal.names)}
    raise ValueError(f"unknown naming {style.naming!r}; use symbol, word or nonce")


def atom(name: str, a: str, b: str, style: Style) -> str:
    """``R(a,b)`` or ``a R b``."""
    return f"{name}({a},{b})" if style.notation == "prefix" else f"{a} {name} {b}"


def question(qtype: str, shown: list[str], style: Style, cal: Calculus) -> str:
    """The question sentence for converse, CT or CN."""
    if qtype == "converse":
        return f"Given {atom(shown[0], 'x', 'y', style)}, which relation holds between y and x?"
    if qtype == "ct":
        return (f"Given {atom(shown[0], 'x', 'y', style)} and {atom(shown[1], 'y', 'z', style)}, "
                "which relations can hold between x and z?")
    if qtype == "cn":
        if cal.kind == "9im":
            return f"Which relations are the closest topological relationships of {atom(shown[0], 'x', 'y', style)}?"
        return f"Which relations are the conceptual neighbours of {atom(shown[0], 'x', 'y', style)}?"
    raise ValueError(f"unknown question type {qtype!r}; use one of {QTYPES}")


def describe(cal: Calculus, names: dict[str, str], style: Style) -> str:
    """The calculus description block for a style."""
    from . import descriptions
    return descriptions.describe(cal, names, style)


@lru_cache(maxsize=256)
def _cached_description(key: str, style: Style, nonce_offset: int) -> tuple[str, tuple[tuple[str, str], ...]]:
    from .catalogue import all_calculi
    cal = all_calculi()[key]
    names = display_names(cal, style, nonce_offset)
    return describe(cal, names, style), tuple(names.items())


def build_prompt(cal: Calculus, qtype: str, relations: list[str], style: Style = Style(),
                 nonce_offset: int = 0) -> tuple[str, dict[str, str]]:
    """Prompt text and the display-name map for one question.

    Args:
        cal: the calculus.
        qtype: ``converse``, ``ct`` or ``cn``.
        relations: canonical names of the relation(s) asked about (two for ``ct``).
        style: presentation variant.
        nonce_offset: first nonce word of this calculus' block.

    Raises:
        ValueError: unknown question type or style value; CalculusError: unknown relation.
    """
    for r in relations:
        cal.relation(r)
    desc, items = _cached_description(cal.key, style, nonce_offset)
    names = dict(items)
    parts = [ROLE]
    if desc:
        parts.append(desc)
    if qtype == "cn":
        parts.append(CN_TEXT[cal.kind])
    parts.append(ANNOUNCE)
    if qtype in ("ct", "cn"):
        parts.append(MULTI)
    parts.append(ANSWER)
    parts.append(question(qtype, [names[r] for r in relations], style, cal))
    return "\n\n".join(parts), names
