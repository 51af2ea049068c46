"""Suites, solvers, the runner, scoring, metrics, audit and reports."""
