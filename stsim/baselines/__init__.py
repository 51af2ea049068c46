"""First-principle solvers, each ``Task -> list[Answer]``, reading only ``task.inputs``.

:data:`BASELINES` maps a family to its default baseline; :data:`ALTERNATIVES` maps a family to
named alternatives (``--solver baseline:NAME``)."""
from .cardinal import BASELINES as _CARDINAL
from .stark_tier1 import ALTERNATIVES, BASELINES

BASELINES.update(_CARDINAL)

__all__ = ["BASELINES", "ALTERNATIVES"]
