"""Loaders of STARK's released data (``data_final_v5/``, or ``data_final.tar.gz``): tier-1
instances (:mod:`.tier1`), tier-2 relation items (:mod:`.tier2`), tier-3 items (:mod:`.tier3`),
field folders (:mod:`.fields`); :mod:`.folders` finds the release's folders.  Each turns the
released files into :class:`~stsim.records.Task` records with the same inputs as our
generators write, so the same baselines and scoring apply (``docs/stark-published.md``)."""
