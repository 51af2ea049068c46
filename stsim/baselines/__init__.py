"""First-principle solvers, each ``Task -> list[Answer]``, reading only ``task.inputs``.

:data:`BASELINES` maps a family to its default baseline; :data:`ALTERNATIVES` maps a family to
named alternatives (``--solver baseline:NAME``).  Both are filled with :func:`register_baseline`,
which refuses a second baseline for the same family (or variant).  A baseline may cover a whole
group of families by a name prefix ending in ``.`` (``"qstr."``): the QSTRBench oracle answers
every calculus question from the calculus engine, whatever presentation variant the generator
registered, so this package never needs to import the generators.
"""
from __future__ import annotations

from typing import Callable, Iterator

from ..records import Answer
from . import cardinal as _cardinal
from . import city as _city
from . import fields as _fields
from . import mobility as _mobility
from . import stark_tier1 as _tier1
from . import stark_tier2 as _tier2
from .qstr import solve_qstr

__all__ = ["BASELINES", "ALTERNATIVES", "BaselineTable", "register_baseline"]

BaselineFn = Callable[..., list[Answer]]


class BaselineTable(dict):
    """``family -> baseline`` with whole-group entries: a key ending in ``.`` (e.g. ``"qstr."``)
    answers for every family whose name starts with it; an exact key wins over a prefix.

    ``family in table``, ``table[family]`` and ``table.get(family)`` follow the prefixes;
    iteration lists the registered keys (exact names and prefixes) as a plain dict does.
    """

    def _prefix(self, family: str):
        if not isinstance(family, str):
            return None
        best = None
        for key in dict.keys(self):
            if key.endswith(".") and family.startswith(key) and (best is None or len(key) > len(best)):
                best = key
        return best

    def __contains__(self, family) -> bool:
        return dict.__contains__(self, family) or self._prefix(family) is not None

    def __missing__(self, family):
        key = self._prefix(family)
        if key is None:
            raise KeyError(family)
        return dict.__getitem__(self, key)

    def get(self, family, default=None):
        return self[family] if family in self else default


#: family (or ``prefix.``) -> default baseline.
BASELINES: BaselineTable = BaselineTable()
#: family -> {variant name -> baseline}.
ALTERNATIVES: dict[str, dict[str, BaselineFn]] = {}


def register_baseline(family: str, fn: BaselineFn, variant: str | None = None) -> None:
    """Register ``fn`` as the default baseline of ``family`` (``variant=None``) or as its
    alternative ``--solver baseline:VARIANT``.  ``family`` may be a prefix ending in ``.``
    (default baselines only).

    Raises:
        ValueError: a second baseline for the same family, or for the same (family, variant).
    """
    if variant is None:
        if dict.__contains__(BASELINES, family):
            raise ValueError(f"baseline for {family!r} registered twice")
        BASELINES[family] = fn
        return
    if family.endswith("."):
        raise ValueError(f"alternatives are registered per family, not per prefix ({family!r})")
    alts = ALTERNATIVES.setdefault(family, {})
    if variant in alts:
        raise ValueError(f"baseline variant {variant!r} of {family!r} registered twice")
    alts[variant] = fn


def _items() -> Iterator[tuple[str, BaselineFn, str | None]]:
    for mod in (_tier1, _tier2, _cardinal, _fields, _city, _mobility):
        for fam, fn in mod.BASELINES.items():
            yield fam, fn, None
        for fam, alts in getattr(mod, "ALTERNATIVES", {}).items():
            for name, fn in alts.items():
                yield fam, fn, name
    yield "qstr.", solve_qstr, None
    yield "qstrx.", solve_qstr, None
    from . import geoqa as _geoqa
    yield "geoqa.", _geoqa.solve_oracle, None
    for fam, alts in _geoqa.ALTERNATIVES.items():
        for name, fn in alts.items():
            yield fam, fn, name


for _fam, _fn, _variant in _items():
    register_baseline(_fam, _fn, _variant)
