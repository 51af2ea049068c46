"""Parts shared by the perf/ scripts: the family lists, the per-item error, the reader of
``perf/bayes_floor.py --save`` limits files and the timed loop over tasks.

The scripts are run as ``python perf/X.py``, so this folder is ``sys.path[0]`` and they import
it as ``from _common import ...`` (tests/test_perf_scripts.py puts perf/ on ``sys.path``).

**Per-item error (one convention for every script).**  :func:`item_errors` is the answer
format's own error, :meth:`stsim.answers.AnswerFormat.error` (what ``stsim score`` reports per
item): the Euclidean distance for a point ``[x, y]`` (plane units), the absolute difference for
a time, and for the x-y-t vector ``[x, y, t]`` the norm of ``(dx, dy, dt)`` (plane units and
time units together, as ``perf/bayes_floor.py`` has always scored it; not the position alone).
A missing or non-finite estimate counts as an infinite error (the trimmed RMSE trims it, an
untrimmed one shows it).
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from stsim.answers import get_format
from stsim.scoring.metrics import trimmed_rmse

#: The seven STARK tier-1 tracking families (50 steps; proximity 20, ToA position 40).
TRACKING = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]
#: The seven STARK tier-1 localisation families.
LOCALISATION = ["stark.localization.range", "stark.localization.bearing",
                "stark.localization.range_bearing", "stark.localization.proximity",
                "stark.localization.event", "stark.temporal_localization.event",
                "stark.localization.event_xyt"]
#: Tracking families Stone Soup has a measurement model for (perf/vs_stonesoup.py).
STONESOUP_FAMILIES = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing"]
#: Tracking families whose default is the proximity / ToA particle filter (issue 20).
PF_FAMILIES = ["stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
               "stark.tracking.event_xyt"]
#: Tracking families whose default is the filter followed by the parametric refit
#: (``baseline:filter``: the filter alone).
REFIT_FAMILIES = [f for f in TRACKING if f != "stark.tracking.proximity"]


def answer_values(task, pos, emit) -> np.ndarray:
    """A tracker's answers in the task's answer format from its positions ``pos`` (steps, 2),
    plane units, and emission times ``emit`` (steps,), the task's time unit: ``emit`` for a
    time task, ``[x, y, t]`` rows (steps, 3) for an x-y-t task, else ``pos``."""
    if task.answer_format == "time":
        return np.asarray(emit, float)
    if task.answer_format == "vector":
        return np.column_stack([pos, emit])
    return np.asarray(pos, float)


def item_errors(answer_format: str, est, gold) -> np.ndarray:
    """Per-item errors (n,) of estimates ``est`` against ``gold``, each (n,) for a time or
    scalar format or (n, d) for a point / vector format: the answer format's error (module
    docstring); ``inf`` where the estimate is missing (``None``) or not finite.

    Raises:
        ValueError: ``est`` and ``gold`` have different lengths, or an estimate (not ``None``)
        is not numbers of its gold answer's shape (e.g. ``[x]`` or ``[x, y, t]`` against a
        point ``[x, y]``, a row against a time), naming the item and both shapes."""
    fmt = get_format(answer_format)
    if len(est) != len(gold):
        raise ValueError(f"{len(est)} estimates against {len(gold)} gold answers")
    out = np.empty(len(gold))
    for k, (e, g) in enumerate(zip(est, gold)):
        if e is None:
            out[k] = np.inf
            continue
        try:
            a = np.asarray(e, float)
        except (TypeError, ValueError):   # ragged, e.g. [[1.0, 2.0], 3.0]
            a = None
        if a is None or a.shape != np.shape(g):
            what = f"{e!r} (not an array of numbers)" if a is None else f"of shape {a.shape}"
            raise ValueError(f"{answer_format} estimate {k} is {what}; its gold answer has shape {np.shape(g)}")
        if not np.all(np.isfinite(a)):
            out[k] = np.inf
        else:
            v = fmt.error(a.tolist(), np.asarray(g, float).tolist())
            out[k] = v if np.isfinite(v) else np.inf
    return out


def fail(message: str) -> SystemExit:
    """Print ``stsim: error: message`` to stderr and return ``SystemExit(2)`` to raise."""
    print(f"stsim: error: {message}", file=sys.stderr)
    return SystemExit(2)


def load_limits(path: str | None, *, seed: int | None = None) -> dict[str, Any]:
    """The JSON a ``perf/bayes_floor.py --save PATH`` run wrote: ``{"meta": {"seed", "steps",
    ...}, "families": {family: {"summary": ..., "tasks": [{"index", "id", "lost", "gold",
    "limit", ...}]}}}``.  With ``seed``, the file must hold that suite seed's tasks.

    Raises:
        SystemExit(2), after a ``stsim: error:`` line: the file is absent (how to produce it),
        unreadable, not such a file (no ``meta`` / ``families``), or of another suite seed."""
    if not path or not os.path.exists(path):
        raise fail(f"limits file {path!r} not found: produce it once with "
                   "`python perf/bayes_floor.py --n 20 --save PATH` (hours of CPU) and pass "
                   "--limits PATH; this script never recomputes the limit")
    try:
        with open(path) as fh:
            data = json.load(fh)
        file_seed = int(data["meta"]["seed"])
        int(data["meta"]["steps"])
        if not isinstance(data["families"], dict):
            raise TypeError("'families' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise fail(f"--limits {path}: not a readable bayes_floor --save file "
                   f"({type(exc).__name__}: {exc}; needs 'meta' with 'seed' and 'steps', and 'families')") from None
    if seed is not None and file_seed != seed:   # the ratios would compare different tasks
        raise fail(f"--limits {path} holds suite seed {file_seed}'s tasks; pass --seed {file_seed}")
    return data


def limit_set(paths: list[str], seed: int | None = None) -> tuple[dict, int, int]:
    """``({family: {"tasks": [...]}}, suite seed, steps)``: the task records of the
    ``bayes_floor.py --save`` files ``paths`` (parts of one set, ``bayes_floor.py --first``: the
    same suite seed and steps), pooled in index order.  ``seed``: the suite seed the files must
    hold (None: the first file's).

    Raises:
        SystemExit(2), after a ``stsim: error:`` line: a file :func:`load_limits` refuses (of
        another suite seed than ``seed``), files of different suite seeds or steps, or a
        family's task in two files."""
    fams: dict = {}
    first = None
    for path in paths:
        data = load_limits(path, seed=seed)
        here = (int(data["meta"]["seed"]), int(data["meta"]["steps"]))
        if first is not None and here[0] != first[0]:
            raise fail(f"--limits {path} holds suite seed {here[0]}'s tasks, {paths[0]} {first[0]}'s: "
                       "pool only parts of one set")
        if first is not None and here[1] != first[1]:
            raise fail(f"--limits {path} scores {here[1]} steps, {paths[0]} {first[1]}: pool only parts of one set")
        first = first or here
        for fam, rec in data["families"].items():
            have = fams.setdefault(fam, {"tasks": []})["tasks"]
            again = sorted({t["index"] for t in have} & {t["index"] for t in rec.get("tasks") or []})
            if again:
                raise fail(f"--limits {path}: {fam}'s task(s) {again} are in an earlier file too")
            have += rec.get("tasks") or []
    for rec in fams.values():
        rec["tasks"].sort(key=lambda t: t["index"])
    return fams, first[0], first[1]


def family_limits(data: dict[str, Any], fam: str, path: str) -> list[dict[str, Any]]:
    """The per-task records of ``fam`` in a :func:`load_limits` file.

    Raises:
        SystemExit(2), after a ``stsim: error:`` line: the file has no per-task limits of ``fam``."""
    tasks = data["families"].get(fam, {}).get("tasks")
    if not tasks:
        raise fail(f"{path}: no per-task limits of {fam}")
    return tasks


def check_limit_tasks(records: Sequence[dict[str, Any]], tasks: dict[int, Any], path: str) -> None:
    """Each limits record against the generated task of its ``index`` (``tasks``: index ->
    Task): its ``id``, and its gold answers (``gold``, saved rounded to 6 decimals by
    ``perf/bayes_floor.py``; None for a task the sampler lost) within 5e-7 of the generated
    task's first steps.  Task ids carry only the family and index, so a generator that draws
    other trajectories under the same ids shows in the gold answers alone.

    Raises:
        SystemExit(2), after a ``stsim: error:`` line naming the first mismatches (another
        generator version)."""
    wrong = []
    for r in records:
        task = tasks.get(r["index"])
        if task is None:
            continue
        if r["id"] != task.id:
            wrong.append(f"{r['index']}: {r['id']} (generated {task.id})")
        elif r.get("gold") is not None:
            saved = np.asarray(r["gold"], float)
            gen = np.asarray([s.answer for s in task.steps][:len(saved)], float)
            off = float(np.abs(saved - gen).max()) if saved.shape == gen.shape else np.inf
            if not off <= 5e-7:
                wrong.append(f"{r['index']}: {r['id']} (gold answers up to {off:.3g} from the generated ones)")
    if wrong:
        raise fail(f"--limits {path}: tasks {wrong[:3]} are not this run's (another generator version?)")


def timed_each(fn: Callable[[Any], Any], items: Sequence[Any], *, warmup: bool = True
               ) -> tuple[list[Any], np.ndarray]:
    """``([fn(item) for item in items], CPU seconds (len(items),) of each call)``, timed with
    ``time.process_time`` (the machine is shared: wall time swings with other processes), after
    one untimed warm-up call on the first item (lazy imports, cached tables) unless
    ``warmup=False``."""
    if warmup and len(items):
        fn(items[0])
    out, each = [], np.empty(len(items))
    for k, item in enumerate(items):
        t = time.process_time()
        out.append(fn(item))
        each[k] = time.process_time() - t
    return out, each


def ratio_to_limit(error: float, limit: float) -> float:
    """``error / limit`` for a tracker's trimmed RMSE against the limit's on the same items, NaN
    when the limit's is 0 or less (a degenerate limits file: every limit answer exact), where no
    ratio is defined; a NaN ratio prints as ``nan`` and fails every ``<=`` target check."""
    return float(error) / float(limit) if limit > 0 else float("nan")


def excess_by_task(ours: Sequence[np.ndarray], limit: np.ndarray, drop: int = 2) -> list[tuple[list[int], float]]:
    """Where a tracker's excess over the limit sits, task by task (issue 20, session 24: on range
    two of nine tasks held all of it).  ``ours``: one (T, k) array of per-item errors per draw
    of the tracker, on the limit's T tasks and k steps; ``limit`` (T, k) the limit's.  Greedily,
    ``drop`` times (at most T - 1), the task (row) whose removal lowers the mean over the draws
    of :func:`ratio_to_limit` (trimmed RMSE against the limit's on the same rows) the most is
    removed.  Returns ``[(rows removed so far, mean ratio without them), ...]``."""
    limit = np.asarray(limit, float)
    kept, removed, out = list(range(len(limit))), [], []

    def mean_ratio(rows: list) -> float:
        lt = trimmed_rmse(limit[rows].ravel())
        return float(np.mean([ratio_to_limit(trimmed_rmse(np.asarray(E, float)[rows].ravel()), lt) for E in ours]))

    for _ in range(min(int(drop), len(kept) - 1)):
        best = min(kept, key=lambda i: mean_ratio([j for j in kept if j != i]))
        kept.remove(best)
        removed.append(best)
        out.append((list(removed), mean_ratio(kept)))
    return out


def ratio_interval(ours: Sequence[np.ndarray], limit: np.ndarray, level: float = 0.9, resamples: int = 2000,
                   seed: int = 0) -> tuple[float, float]:
    """How far a ratio to the limit on T tasks moves with the tasks drawn (issue 20, session 28:
    on 10-20 tasks one task with a broad posterior moves x-y-t's ratio by 0.1x): the central
    ``level`` interval of the mean over the draws of :func:`ratio_to_limit` over ``resamples``
    paired bootstrap resamples of the tasks (Efron & Tibshirani 1993, ch. 13: percentile
    interval; each resample draws T rows with replacement, the same rows of every draw and of
    the limit).  ``ours`` and ``limit`` as :func:`excess_by_task`.  Returns ``(low, high)``;
    ``(nan, nan)`` for fewer than 2 tasks.  Deterministic for a given ``seed``."""
    limit = np.asarray(limit, float)
    ours = [np.asarray(E, float) for E in ours]
    T = len(limit)
    if T < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    vals = np.empty(resamples)
    for b in range(resamples):
        rows = rng.integers(0, T, T)
        lt = trimmed_rmse(limit[rows].ravel())
        vals[b] = np.mean([ratio_to_limit(trimmed_rmse(E[rows].ravel()), lt) for E in ours])
    lo, hi = np.nanpercentile(vals, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def round_ratios(refs: Sequence[float], times: Sequence[float]) -> np.ndarray:
    """Each round's speed ratio (R,) of a reference over a tracker timed between its
    measurements: ``refs`` (R + 1,) the reference's times before, between and after the rounds,
    ``times`` (R,) the tracker's in each round; a round's ratio is the mean of the two reference
    times around it over the tracker's (the machine's speed drifts over seconds, so a ratio
    against a reference taken minutes away swings by 10-20 %).  Raises ``ValueError`` unless
    ``len(refs) == len(times) + 1``."""
    refs, times = np.asarray(refs, float), np.asarray(times, float)
    if len(refs) != len(times) + 1:
        raise ValueError(f"{len(times)} rounds need {len(times) + 1} reference times, got {len(refs)}")
    return 0.5 * (refs[:-1] + refs[1:]) / times


def timed_rounds(refs: Mapping[Hashable, Callable[[], float]], runs: Mapping[Hashable, Callable[[], float]],
                 rounds: int) -> tuple[dict, dict]:
    """The reference-tracker-reference timing of the cost checks: each reference of ``refs``
    timed once, then ``rounds`` times every run of ``runs`` (in their order) followed by every
    reference again.  Each callable returns its own time (e.g. :func:`cpu_ms_per_task`).
    Returns ``({ref: (rounds + 1,) times}, {run: (rounds,) times})``, ready for
    :func:`round_ratios`."""
    ref_times = {name: [fn()] for name, fn in refs.items()}
    times = {key: [] for key in runs}
    for _ in range(rounds):
        for key, fn in runs.items():
            times[key].append(fn())
        for name, fn in refs.items():
            ref_times[name].append(fn())
    return ref_times, times


def cpu_ms_per_task(fn: Callable[[Any], Any], tasks: Sequence[Any]) -> float:
    """Mean CPU milliseconds of ``fn`` per task (:func:`timed_each`, after a warm-up)."""
    return 1000 * float(np.mean(timed_each(fn, tasks)[1]))
