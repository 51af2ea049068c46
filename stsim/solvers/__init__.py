"""How an answer is obtained: every solver is ``solve(task) -> list[Answer]``.

:mod:`.base` holds the solver registry (``--solver NAME[:ARG]``), the baseline adapter and the
oracle; :mod:`.random_guess` the chance reference; :mod:`.answers_file` reads a file of model
replies; :mod:`.live_model` and :mod:`.chat_client` ask a live model; :mod:`.code` runs
model-written ``solver()`` programs in :mod:`stsim.sandbox`.  See ``docs/architecture.md``."""
