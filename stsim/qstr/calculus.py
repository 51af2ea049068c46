"""The :class:`Calculus` type: base relations, identity, converse, composition table and
conceptual neighbourhood of a binary qualitative calculus (QSTRBench §2).

Relation *sets* (disjunctions of base relations) are handled as Python ``int`` bit masks over the
calculus' relation order, so weak composition of sets (:meth:`Calculus.compose_sets`) is a union
of table look-ups; :mod:`stsim.qstr.reasoner` builds algebraic closure on top of it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping


class CalculusError(ValueError):
    """An unknown relation name, or tables that violate the calculus axioms."""


@dataclass(frozen=True)
class Relation:
    """One base relation.

    Attributes:
        name: the symbol used in prompts and answers (e.g. ``TPPi``, ``b<``, ``NE``).
        word: an English word name (``tangential_proper_part_inverse``), used by word prompts.
        description: one English sentence saying when ``name(x,y)`` holds (own wording).
        aliases: other names that answers may use (e.g. GQR's ``TPPI`` or ``IPD``).
    """
    name: str
    word: str
    description: str
    aliases: tuple[str, ...] = ()


@dataclass
class Calculus:
    """A binary qualitative calculus with its derived (or cited) tables.

    Attributes:
        key: short identifier (``pa``, ``ia``, ``indu``, ``rcc5``, ``rcc8``, ``rcc22``, ``9im``,
            ``cdc``, ``star``).
        title: the name used in prompts (``Allen's Interval Algebra``).
        abbrev: abbreviation as in QSTRBench Table 1 (``IA``).
        summary: one paragraph describing the domain (own wording).
        relations: base relations in the order used for prompts.
        identity: name of the identity relation.
        converse: name -> name of its converse.
        composition: ``(r, s)`` -> frozenset of names: the weak composition ``r ∘ s`` (if
            ``r(x,y)`` and ``s(y,z)`` then ``x`` and ``z`` stand in one of these).
        neighbours: name -> frozenset of conceptual neighbours (or, for 9IM, the closest
            topological relationships).
        kind: ``"region"``, ``"interval"`` or ``"point"``; selects the CN wording (§3.1).
        source: how each table was obtained (derivation or citation).
        neighbour_variants: other neighbourhoods of the same relations under a different
            notion of continuous change, by name (e.g. IA's ``"dominance"``).
        anonymous_summary: the summary after "is" for prompts that hide the calculus and its
            relation names (nonce names, QSTRBench §3); empty: ``summary`` after its " is ".
        symbol_note: sentence about the relation *symbols*, added to the summary only when the
            prompt shows them (not with word or nonce names).
    """
    key: str
    title: str
    abbrev: str
    summary: str
    relations: tuple[Relation, ...]
    identity: str
    converse: dict[str, str]
    composition: dict[tuple[str, str], frozenset[str]]
    neighbours: dict[str, frozenset[str]]
    kind: str
    source: dict[str, str] = field(default_factory=dict)
    neighbour_variants: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    anonymous_summary: str = ""
    symbol_note: str = ""

    def __post_init__(self) -> None:
        self.names: tuple[str, ...] = tuple(r.name for r in self.relations)
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.universe: int = (1 << len(self.names)) - 1
        missing = [n for n in self.names if n not in self.converse]
        if missing or self.identity not in self.index:
            raise CalculusError(f"{self.key}: converse missing for {missing} or bad identity")
        n = len(self.names)
        self._comp = [[0] * n for _ in range(n)]
        for (a, b), res in self.composition.items():
            self._comp[self.index[a]][self.index[b]] = self.mask(res)
        self._conv = [self.index[self.converse[r]] for r in self.names]

    # ---------------------------------------------------------------- names and masks
    def __len__(self) -> int:
        return len(self.names)

    def relation(self, name: str) -> Relation:
        """The :class:`Relation` called ``name``; raise :class:`CalculusError` if unknown."""
        try:
            return self.relations[self.index[name]]
        except KeyError:
            raise CalculusError(f"{self.abbrev}: unknown relation {name!r}; "
                                f"known: {', '.join(self.names)}") from None

    def mask(self, names: Iterable[str]) -> int:
        """Bit mask of a set of relation names; raise :class:`CalculusError` on unknown names."""
        m = 0
        for nm in names:
            if nm not in self.index:
                raise CalculusError(f"{self.abbrev}: unknown relation {nm!r}; "
                                    f"known: {', '.join(self.names)}")
            m |= 1 << self.index[nm]
        return m

    def names_of(self, mask: int) -> list[str]:
        """Relation names in a bit mask, in calculus order."""
        return [nm for i, nm in enumerate(self.names) if mask >> i & 1]

    @property
    def has_composition(self) -> bool:
        return len(self.composition) == len(self.names) ** 2

    # ---------------------------------------------------------------- operations
    def compose(self, r: str, s: str) -> frozenset[str]:
        """Weak composition of two base relations, ``r ∘ s``."""
        self.relation(r), self.relation(s)
        if (r, s) not in self.composition:
            raise CalculusError(f"{self.abbrev}: no composition table entry for {r} ∘ {s}")
        return self.composition[(r, s)]

    def compose_masks(self, a: int, b: int) -> int:
        """Weak composition of two relation sets given as bit masks: the union of ``r ∘ s``
        over ``r`` in ``a`` and ``s`` in ``b`` (QSTRBench §2)."""
        out = 0
        comp = self._comp
        i = 0
        while a:
            if a & 1:
                row = comp[i]
                bb, j = b, 0
                while bb:
                    if bb & 1:
                        out |= row[j]
                    bb >>= 1
                    j += 1
            a >>= 1
            i += 1
        return out

    def compose_sets(self, a: Iterable[str], b: Iterable[str]) -> frozenset[str]:
        """Weak composition of two sets of relation names."""
        return frozenset(self.names_of(self.compose_masks(self.mask(a), self.mask(b))))

    def converse_mask(self, a: int) -> int:
        """Converse of a relation set given as a bit mask."""
        out, i = 0, 0
        while a:
            if a & 1:
                out |= 1 << self._conv[i]
            a >>= 1
            i += 1
        return out

    def converse_set(self, a: Iterable[str]) -> frozenset[str]:
        """Converse of a set of relation names."""
        return frozenset(self.names_of(self.converse_mask(self.mask(a))))

    # ---------------------------------------------------------------- checks
    def check(self) -> None:
        """Raise :class:`CalculusError` unless converse is an involution, the identity is its
        own converse and neutral for composition, and the converse law
        ``conv(r ∘ s) = conv(s) ∘ conv(r)`` holds for every entry of the table; the conceptual
        neighbourhood must be symmetric and irreflexive."""
        for r in self.names:
            if self.converse[self.converse[r]] != r:
                raise CalculusError(f"{self.abbrev}: converse of converse of {r} is not {r}")
        if self.converse[self.identity] != self.identity:
            raise CalculusError(f"{self.abbrev}: identity is not its own converse")
        if self.has_composition:
            for r in self.names:
                for s, got in ((r, self.compose(self.identity, r)), (r, self.compose(r, self.identity))):
                    if got != {s}:
                        raise CalculusError(f"{self.abbrev}: identity law fails for {r}: {sorted(got)}")
                for s in self.names:
                    lhs = self.converse_set(self.compose(r, s))
                    rhs = self.compose(self.converse[s], self.converse[r])
                    if lhs != rhs:
                        raise CalculusError(f"{self.abbrev}: converse law fails for {r} ∘ {s}")
        for r, nb in self.neighbours.items():
            if r in nb:
                raise CalculusError(f"{self.abbrev}: {r} listed as its own neighbour")
            for s in nb:
                if r not in self.neighbours[s]:
                    raise CalculusError(f"{self.abbrev}: neighbourhood not symmetric: {r} -> {s}")


def table_from_rows(rows: Mapping[str, Mapping[str, str]]) -> dict[tuple[str, str], frozenset[str]]:
    """Composition table from rows written as ``{r: {s: "A B C"}}`` (space-separated names)."""
    return {(r, s): frozenset(cell.split()) for r, row in rows.items() for s, cell in row.items()}
