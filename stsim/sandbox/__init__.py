"""Isolation for untrusted model-written code: :mod:`.isolation` starts and limits the sandboxed
interpreter, :mod:`.harness` is the program that runs inside it (it must not import stsim), and
:mod:`.call` checks the three call forms of ``solver()``.  See ``docs/architecture.md``."""
