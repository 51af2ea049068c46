"""First-principle solvers, each ``Task -> list[Answer]``, reading only ``task.inputs``.

:data:`BASELINES` maps a family to its default baseline; :data:`ALTERNATIVES` maps a family to
named alternatives (``--solver baseline:NAME``)."""
from . import city as _city
from . import fields as _fields
from . import mobility as _mobility
from .cardinal import BASELINES as _CARDINAL
from .qstr import qstr_baselines
from .stark_tier1 import ALTERNATIVES, BASELINES
from .stark_tier2 import BASELINES as _TIER2

BASELINES.update(_TIER2)

BASELINES.update(_CARDINAL)
BASELINES.update(_fields.BASELINES)
ALTERNATIVES.update(_fields.ALTERNATIVES)
BASELINES.update(_city.BASELINES)
BASELINES.update(_mobility.BASELINES)
ALTERNATIVES.update(_mobility.ALTERNATIVES)
BASELINES.update(qstr_baselines())
from . import geoqa as _geoqa  # noqa: E402
BASELINES.update(_geoqa.BASELINES)
for _f, _alts in _geoqa.ALTERNATIVES.items():
    ALTERNATIVES.setdefault(_f, {}).update(_alts)

__all__ = ["BASELINES", "ALTERNATIVES"]
