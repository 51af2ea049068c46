"""Benchmarks: named suites (which families, how many tasks, which released files), the STARK
release loaders (:mod:`stsim.benchmarks.stark_release`) and the runner that takes a suite
through a solver to scores and a summary.  See ``docs/architecture.md``."""
