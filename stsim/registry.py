"""Registries that tie the flow together: task families, suites and solvers.

* A **family** (:class:`Family`) is a pure function ``(rng, config) -> TaskBody`` plus its
  answer format and default config.  :func:`generate_task` wraps it with the stable id and the
  per-task random stream of :mod:`stsim.seeding`, so every task is a pure function of
  ``(family, config, suite_seed, index)``.
* Families are found through the ``stsim.families`` entry-point group (``pyproject.toml``):
  :func:`load_families` loads every entry of the group once; loading an entry imports a module
  that calls :func:`register_family`.  stsim's own entry is the module :mod:`stsim.generators`;
  another package adds families the same way without forking stsim
  (``docs/adding-a-family.md``).  This module never imports the generators itself, so the
  import arrows stay downstream (``docs/architecture.md``).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable

from .records import Step, Task, UnknownName
from .seeding import task_rng


@dataclass
class TaskBody:
    """What a family's ``make`` function returns; :func:`generate_task` adds id and meta."""
    prompt: str
    inputs: dict[str, Any]
    answer: Any
    steps: list[Step] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """A task family.

    Attributes:
        name: dotted name, e.g. ``stark.localization.range``.
        answer_format: name in :data:`stsim.answers.FORMATS`.
        make: ``(rng, config) -> TaskBody``; must draw randomness only from ``rng``.
        defaults: default config; a suite or the user may override any key.
        description: one line for ``stsim list``.
        version: bump when the generator's output changes for the same seed.
        rubric: how model text is read (:data:`stsim.answers.RUBRICS`).
        validate: optional ``(task) -> None`` that raises :class:`~stsim.records.RecordError`
            when a task read from a file has inputs this family cannot have produced.
        size: for an *exhaustive* family (a fixed, enumerable question set such as the 5,760
            cardinal-direction templates), the number of distinct tasks; ``make`` is then
            called as ``make(rng, config, index)`` with ``0 <= index < size``.  ``None`` (the
            default) for sampled families, whose ``make`` takes ``(rng, config)``.  May be a
            zero-argument callable when counting needs work (the geoqa families execute their
            templates first); read it with :func:`family_size`.  ``make`` of such a family
            raises ``IndexError`` for an index beyond its tasks.
        source: where the family comes from: benchmark, paper section, tables (e.g. ``"STARK
            §3.2.1, Appendix 7.3; prompts Tables 11-14"``), or ``"beyond the paper: ..."``;
            shown in the task catalogue and the dataset card of ``stsim export``.
    """
    name: str
    answer_format: str
    make: Callable[..., TaskBody]
    defaults: dict[str, Any]
    description: str
    version: str = "1"
    rubric: str = "stark"
    validate: Callable[[Task], None] | None = None
    size: int | Callable[[], int] | None = None
    source: str = ""


def family_size(family: "Family") -> int | None:
    """The number of tasks of an exhaustive family (calling a lazy ``size``), else ``None``."""
    return family.size() if callable(family.size) else family.size


FAMILIES: dict[str, Family] = {}

#: The entry-point group that lists the modules registering families.
ENTRY_POINT_GROUP = "stsim.families"
_LOADED: set[str] = set()
#: the group's entry points, with the ``sys.path`` they were read under: reading them scans
#: every installed distribution's metadata (about 4 ms), and :func:`load_families` runs once
#: per family of a suite (650 times for ``stsim list``: 2.6 s of a 3 s start-up)
_ENTRY_POINTS: dict[str, Any] = {}


def _family_entry_points() -> tuple:
    """The ``stsim.families`` entry points, read again only when ``sys.path`` has changed (a
    distribution installed into a path already searched, while this process runs, is not
    seen until then)."""
    key = tuple(sys.path)
    if _ENTRY_POINTS.get("path") != key:
        _ENTRY_POINTS["eps"] = tuple(entry_points(group=ENTRY_POINT_GROUP))
        _ENTRY_POINTS["path"] = key
    return _ENTRY_POINTS["eps"]


class FamilyLoadError(RuntimeError):
    """An entry of the ``stsim.families`` group failed to load, or the group is empty."""


def load_families() -> dict[str, Family]:
    """Load every entry of the ``stsim.families`` entry-point group once and return
    :data:`FAMILIES`.  Idempotent and cheap after the first call (the entry points are read
    again only when ``sys.path`` changes, :func:`_family_entry_points`).

    Each entry names a module (``name = "package.module"``); importing it registers its
    families with :func:`register_family`.

    Raises:
        FamilyLoadError: no entry at all (stsim is not installed: run ``pip install -e .``),
            or an entry whose module fails to import (naming the entry and the error).
    """
    eps = _family_entry_points()
    if not eps and not _LOADED:
        raise FamilyLoadError(f"no {ENTRY_POINT_GROUP!r} entry points found: stsim is not installed "
                              "as a distribution (run `pip install -e .` in the checkout)")
    for ep in eps:
        key = f"{ep.name}={ep.value}"
        if key in _LOADED:
            continue
        try:
            ep.load()
        except Exception as exc:  # noqa: BLE001 - re-raised with the entry named
            raise FamilyLoadError(f"entry point {ep.name!r} ({ep.value}) of group "
                                  f"{ENTRY_POINT_GROUP!r} failed to load: {type(exc).__name__}: {exc}") from exc
        _LOADED.add(key)
    return FAMILIES


def register_family(family: Family) -> Family:
    """Add ``family`` to :data:`FAMILIES`; raise ``ValueError`` on a duplicate name."""
    if family.name in FAMILIES:
        raise ValueError(f"family {family.name!r} registered twice")
    FAMILIES[family.name] = family
    return family


def get_family(name: str) -> Family:
    """The family called ``name`` (families are loaded first, :func:`load_families`).

    Raises:
        UnknownName: (a ``KeyError``) an unknown name, naming the closest known ones
            (:func:`unknown_family_message`).
    """
    load_families()
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownName(unknown_family_message(name)) from None


def unknown_family_message(name: str) -> str:
    """What :func:`get_family` says of an unknown family: the closest known names
    (:func:`difflib.get_close_matches`) and where the rest are listed (``stsim list``), not all
    of them (there are hundreds)."""
    import difflib
    close = difflib.get_close_matches(str(name), FAMILIES, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    return f"unknown family {name!r}; {hint}({len(FAMILIES)} families: `stsim list` lists them)"


def resolve_config(family: Family, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """Defaults updated by ``overrides``; raise ``ValueError`` naming unknown keys."""
    cfg = dict(family.defaults)
    unknown = sorted(set(overrides or {}) - set(cfg))
    if unknown:
        raise ValueError(f"{family.name}: unknown config key(s) {', '.join(unknown)}; "
                         f"known: {', '.join(sorted(cfg))}")
    cfg.update(overrides or {})
    return cfg


def generate_task(family_name: str, index: int, suite: str = "adhoc", suite_seed: int = 0,
                  config: dict[str, Any] | None = None) -> Task:
    """Generate task ``index`` of a family: identical bytes for identical arguments, whatever
    else was generated before (:mod:`stsim.seeding`).

    Raises:
        UnknownName: (a ``KeyError``) unknown family.
        ValueError: ``index`` outside an enumerated family's ``0..size-1``.
    """
    fam = get_family(family_name)
    cfg = resolve_config(fam, config)
    rng = task_rng(suite_seed, fam.name, index)
    if fam.size is None:
        body = fam.make(rng, cfg)
    elif callable(fam.size) and index >= 0:
        try:  # a lazy size is counted only when the index is out of range
            body = fam.make(rng, cfg, index)
        except IndexError:
            size = family_size(fam)
            raise ValueError(f"{fam.name} has exactly {size} tasks (index 0..{size - 1}); "
                             f"got index {index}") from None
    elif not callable(fam.size) and 0 <= index < fam.size:
        body = fam.make(rng, cfg, index)
    else:
        size = family_size(fam)
        raise ValueError(f"{fam.name} has exactly {size} tasks (index 0..{size - 1}); "
                         f"got index {index}")
    meta = {"suite": suite, "seed": suite_seed, "index": index, "generator_version": fam.version,
            "config": cfg, "rubric": fam.rubric, **body.meta}
    return Task(id=f"{suite}/{fam.name}/{index:06d}", family=fam.name, prompt=body.prompt,
                inputs=body.inputs, answer=body.answer, answer_format=fam.answer_format,
                steps=body.steps, meta=meta)


def validate_task(task: Task) -> None:
    """Check a task read from a file against its family's rules.

    Raises:
        RecordError: unknown answer format, a gold answer (task or step) that does not fit the
            answer format (naming task and step), or inputs the family's validator rejects.
    """
    from .answers import FORMATS, ParseError, check_gold
    from .records import RecordError
    load_families()
    if task.answer_format not in FORMATS:
        raise RecordError(f"task {task.id}: unknown answer format {task.answer_format!r}")
    fam = FAMILIES.get(task.family)
    if fam is not None and fam.validate is not None:
        fam.validate(task)
    spec = task.meta.get("answer_spec")
    golds = [(f" step {s.index}", s.answer) for s in task.steps] if task.steps else [("", task.answer)]
    for where, gold in golds:
        try:
            check_gold(task.answer_format, gold, spec)
        except ParseError as exc:
            raise RecordError(f"task {task.id}{where}: bad gold 'answer' ({exc})") from None

