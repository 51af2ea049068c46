"""``python -m stsim.cli``: the same as the ``stsim`` command (:func:`stsim.cli.main`)."""
import sys

from . import main

sys.exit(main())
