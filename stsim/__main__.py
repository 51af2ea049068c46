"""``python -m stsim``: the same as the ``stsim`` command (:mod:`stsim.cli`)."""
import sys

from .cli import main

sys.exit(main())
