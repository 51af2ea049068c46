"""stsim: simulate space and time to build verified reasoning benchmarks, solve them with
first-principle methods, and score any solver against the same answer formats."""

__version__ = "0.1.0"
