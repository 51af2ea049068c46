"""First-principle solvers, each ``Task -> list[Answer]``, reading only ``task.inputs``.

:data:`BASELINES` maps a family to its default baseline; :data:`ALTERNATIVES` maps a family to
named alternatives (``--solver baseline:NAME``)."""
from .qstr import qstr_baselines
from .stark_tier1 import ALTERNATIVES, BASELINES

BASELINES = {**BASELINES, **qstr_baselines()}

__all__ = ["BASELINES", "ALTERNATIVES"]
