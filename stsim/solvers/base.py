"""Solvers by name, as ``--solver`` takes them: every solver is ``solve(task) -> [Answer]``.

Built in:

* ``baseline`` -- the family's first-principle baseline (:data:`stsim.baselines.BASELINES`);
* ``baseline:NAME`` -- a named alternative (e.g. ``baseline:grid``, STARK's proximity grid
  search), falling back to the default baseline for families without that alternative
  (``stsim run`` refuses a variant that applies to none of the run's families and records in
  summary.json the families that used it).

Other modules add solvers with :func:`register_solver` (answers files, live models,
sandboxed code, oracles).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from ..records import Answer, Task


class SolverError(ValueError):
    """Unknown solver, or a solver that cannot handle a family."""


class Solver(Protocol):
    """``name`` and ``solve``; a solver whose work is waiting on a network sets ``threaded =
    True`` so the runner solves tasks in threads rather than processes; a solver holding
    resources (files, sandboxes) may define ``close()``, which the runner calls at the end."""

    name: str

    def solve(self, task: Task) -> list[Answer]: ...


@dataclass(frozen=True)
class BaselineSolver:
    """Dispatch to the family's first-principle baseline (or a named alternative)."""

    variant: str | None = None

    @property
    def name(self) -> str:
        return "baseline" if self.variant is None else f"baseline:{self.variant}"

    def applies_to(self, family: str) -> bool:
        """Whether this solver's variant (if any) is used for ``family``; without a variant,
        always true."""
        from ..baselines import ALTERNATIVES
        return self.variant is None or self.variant in ALTERNATIVES.get(family, {})

    def supports(self, family: str) -> bool:
        from ..baselines import BASELINES
        return family in BASELINES

    def solve(self, task: Task) -> list[Answer]:
        from ..baselines import ALTERNATIVES, BASELINES
        if self.variant is not None and self.variant in ALTERNATIVES.get(task.family, {}):
            return ALTERNATIVES[task.family][self.variant](task, solver=self.name)
        if task.family not in BASELINES:
            raise SolverError(f"no baseline for family {task.family!r}")
        # the family has no such variant: its default baseline answers, and says so
        return BASELINES[task.family](task, solver="baseline")


SOLVERS: dict[str, Callable[[str | None], Solver]] = {}


def register_solver(name: str, factory: Callable[..., Solver]) -> None:
    """Register ``factory(arg, **options)`` under ``name``; ``--solver name:arg`` passes ``arg``.

    ``options`` are run-level settings (e.g. ``out_dir``, ``max_steps``, ``base_url``); a
    factory takes the ones it understands and ignores the rest."""
    if name in SOLVERS:
        raise ValueError(f"solver {name!r} registered twice")
    SOLVERS[name] = factory


def _baseline_factory(arg: str | None, **_options) -> Solver:
    from ..baselines import ALTERNATIVES
    if arg is not None and not any(arg in alts for alts in ALTERNATIVES.values()):
        known = sorted({k for alts in ALTERNATIVES.values() for k in alts})
        raise SolverError(f"unknown baseline variant {arg!r}; known: {', '.join(known)}")
    return BaselineSolver(arg)


register_solver("baseline", _baseline_factory)


#: Families whose baseline recomputes the gold exactly from the scenario: the cardinal
#: scenes redrawn with shapely, the calculus engine (QSTRBench), shapely / Allen for STARK
#: tier 2, the geoqa executor re-running its query.  Numeric families have estimators, not
#: oracles.
ORACLE_PREFIXES = ("cardinal.", "qstr.", "qstrx.", "stark.relation.", "geoqa.")


@dataclass
class OracleSolver:
    """``--solver oracle``: the exact baseline of the families in :data:`ORACLE_PREFIXES`.

    Raises:
        SolverError: a task of another family.
    """
    name: str = "oracle"

    def supports(self, family: str) -> bool:
        from ..baselines import BASELINES
        return family.startswith(ORACLE_PREFIXES) and family in BASELINES

    def solve(self, task: Task) -> list[Answer]:
        from ..baselines import BASELINES
        if not self.supports(task.family):
            raise SolverError(f"the oracle solver handles only exact families "
                              f"({', '.join(p + '*' for p in ORACLE_PREFIXES)}); got {task.family!r}"
                              " (use --solver baseline for numeric families)")
        return BASELINES[task.family](task, solver=self.name)


def _oracle_factory(arg: str | None, **_options) -> Solver:
    if arg is not None:
        raise SolverError(f"the oracle solver takes no argument, got {arg!r}")
    return OracleSolver()


register_solver("oracle", _oracle_factory)


def load_builtin_solvers() -> None:
    """Register the solvers that live in their own modules (``code:``, ``openai:``)."""
    from . import code as code_solver  # noqa: F401 - imported for registration
    from . import live_model as openai_solver  # noqa: F401 - imported for registration


def get_solver(spec: str, options: dict | None = None) -> Solver:
    """Build the solver named by ``spec`` (``name`` or ``name:arg``) with run-level ``options``.

    Raises:
        SolverError: unknown name, listing the known ones.
    """
    load_builtin_solvers()
    name, _, arg = spec.partition(":")
    if name not in SOLVERS:
        raise SolverError(f"unknown solver {spec!r}; known: {', '.join(sorted(SOLVERS))} (with their "
                          "arguments: baseline:VARIANT, code:PROGRAM.py|DIR|PROGRAMS.jsonl, openai:MODEL; "
                          "`stsim run --help` lists the variants)")
    return SOLVERS[name](arg or None, **(options or {}))


from . import random_guess  # noqa: E402,F401  (registers the random-guess reference)
