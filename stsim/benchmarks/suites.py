"""Named suites: which families, how many tasks each, and where the tasks come from.

A suite either *generates* tasks (a mapping family -> default count, each task a pure function
of ``(family, seed, index)``) or *loads* them from data the user supplies (``--data DIR``),
like ``stark-published``.  Other issues add their suites here with :func:`register_suite`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Callable, Iterator

from ..records import Task
from ..registry import family_size, generate_task, get_family


class SuiteError(ValueError):
    """Unknown suite, or a suite used without what it needs (e.g. ``--data``)."""


@dataclass(frozen=True)
class Suite:
    """A named set of tasks.

    Attributes:
        name: suite name used on the command line.
        description: one line for ``stsim list``.
        families: family -> default number of tasks (generated suites).
        loader: ``(data_dir, n_per_family, options) -> Iterator[Task]`` for suites read from
            user-supplied data; ``None`` for generated suites.
        max_steps: tracking steps scored per task (STARK: first 10); ``None`` = all.
        data_families: for a data suite, the families its loader can yield (lets a run check
            ``--family`` and ``--solver`` before reading the data); empty when unknown.
    """
    name: str
    description: str
    families: dict[str, int] = field(default_factory=dict)
    loader: Callable[..., Iterator[Task]] | None = None
    max_steps: int | None = 10
    data_families: tuple[str, ...] = ()

    def family_names(self, only: str | None = None) -> list[str] | None:
        """The families this suite can yield (matching the ``only`` glob when given), in suite
        order; ``None`` for a data suite that does not declare :attr:`data_families`."""
        names = list(self.families) if self.loader is None else list(self.data_families)
        if self.loader is not None and not names:
            return None
        return [f for f in names if only is None or fnmatch(f, only)]

    def _counts(self, n: int | None, only: str | None) -> Iterator[tuple[str, int]]:
        """(family, number of its tasks) in suite order (see :meth:`task_keys`)."""
        for f, k in self.families.items():
            if only is not None and not fnmatch(f, only):
                continue
            count = k if n is None else n
            size = family_size(get_family(f))
            yield f, count if size is None else min(count, size)

    def describe_n(self, n: int | None, only: str | None = None) -> str:
        """An ``n_per_family`` as a message shows it: the number, or for None (no ``--n``) each
        family's own count with its value (``each family's own count, 10``; ``16 to 96`` where
        the families of ``only`` differ; a data suite's loader reads ``n`` itself: no value)."""
        if n is not None:
            return repr(n)
        counts = sorted({c for _, c in self._counts(None, only)})
        if self.loader is not None or not counts:
            return "each family's own count"
        return "each family's own count, " + (f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}")

    def same_tasks(self, n1: int | None, n2: int | None, only: str | None = None) -> bool:
        """Whether ``n1`` and ``n2`` (None: each family's own count) give every family matching
        ``only`` the same number of tasks, so the same tasks (``--n 10`` and no ``--n`` where every
        family's own count is 10).  A data suite's loader reads ``n`` itself: only equal ``n`` are
        the same there."""
        if n1 == n2:
            return True
        return self.loader is None and list(self._counts(n1, only)) == list(self._counts(n2, only))

    def iter_task_keys(self, n: int | None = None, only: str | None = None) -> Iterator[tuple[str, int]]:
        """:meth:`task_keys` one at a time (no list: memory does not grow with ``n``)."""
        for f, count in self._counts(n, only):
            for i in range(count):
                yield f, i

    def task_keys(self, n: int | None = None, only: str | None = None) -> list[tuple[str, int]]:
        """(family, index) of every task, in suite order; ``n`` overrides each family's count
        (capped at the size of an exhaustive family); ``only`` keeps families matching a glob
        pattern (e.g. ``'stark.localization.*'``)."""
        return list(self.iter_task_keys(n, only))

    def count_tasks(self, n: int | None = None, only: str | None = None) -> int:
        """``len(task_keys(n, only))`` without making the list."""
        return sum(count for _, count in self._counts(n, only))

    def tasks(self, n: int | None = None, seed: int = 0, data: str | Path | None = None,
              options: dict[str, Any] | None = None, only: str | None = None) -> Iterator[Task]:
        """Yield the suite's tasks.

        Raises:
            SuiteError: a data suite without ``data`` or with an unreadable directory; ``data``
                given to a suite that generates its tasks (it would be ignored).
        """
        if self.loader is not None:
            if data is None:
                raise SuiteError(f"suite {self.name!r} reads published data: pass --data DIR "
                                 "(see `stsim list` and docs/stark-published.md)")
            for t in self.loader(Path(data), n, options or {}):
                if only is None or fnmatch(t.family, only):
                    yield t
            return
        if data is not None:
            readers = sorted(name for name, su in SUITES.items() if su.loader is not None)
            raise SuiteError(f"suite {self.name!r} generates its tasks and reads no --data (it would "
                             f"be ignored); the suites that read data: {', '.join(readers)}")
        if only is not None and not self.count_tasks(1, only):
            raise SuiteError(f"no family of suite {self.name!r} matches {only!r}")
        for fam, i in self.iter_task_keys(n, only):
            yield generate_task(fam, i, suite=self.name, suite_seed=seed)


SUITES: dict[str, Suite] = {}


def register_suite(suite: Suite) -> Suite:
    if suite.name in SUITES:
        raise ValueError(f"suite {suite.name!r} registered twice")
    for f in suite.families:
        get_family(f)  # fail early on a typo
    SUITES[suite.name] = suite
    return suite


def get_suite(name: str) -> Suite:
    """The suite called ``name``; raise :class:`SuiteError` listing the known ones."""
    _load_builtin()
    try:
        return SUITES[name]
    except KeyError:
        raise SuiteError(f"unknown suite {name!r}; known suites: {', '.join(sorted(SUITES))}") from None


def all_suites() -> dict[str, Suite]:
    _load_builtin()
    return dict(SUITES)


_LOADED = False


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import builtin_suites  # noqa: F401  (registers suites)
