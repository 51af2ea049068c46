"""Task generators: one module per benchmark family group; importing this package registers
every family in :data:`stsim.registry.FAMILIES`.  Each family is ``(config, seed) -> Task``."""
from . import stark_tier1  # noqa: F401
from . import cardinal  # noqa: F401
from . import stark_fields  # noqa: F401
from . import stark_city  # noqa: F401
from . import stark_mobility  # noqa: F401
from . import qstrbench  # noqa: F401
from . import stark_tier2  # noqa: F401
from . import geoqa  # noqa: F401
