"""First-principle solvers, each ``Task -> list[Answer]``, reading only ``task.inputs``.

:data:`BASELINES` maps a family to its default baseline; :data:`ALTERNATIVES` maps a family to
named alternatives (``--solver baseline:NAME``)."""
from .stark_tier1 import ALTERNATIVES
from .stark_tier1 import BASELINES as _TIER1
from .stark_tier2 import BASELINES as _TIER2

BASELINES = {**_TIER1, **_TIER2}

__all__ = ["BASELINES", "ALTERNATIVES"]
