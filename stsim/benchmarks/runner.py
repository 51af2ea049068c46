"""The runner: suite -> tasks -> solver -> answers -> scores -> summary, written as it goes.

Output folder layout (every file appended and flushed line by line, so an interrupted run keeps
everything it finished)::

    tasks.jsonl     one Task per line
    answers.jsonl   one Answer per task (per step for tracking)
    scores.jsonl    one Score per scored item
    summary.json    {"suite", "seed", "solver", "families": {FAMILY: {"n", "trimmed_rmse",
                    "rmse", "median_error", "failures", ...}}, "interrupted": bool,
                    STARK families add "stark_trimmed", "stark_n", "stark_failures"
                    (STARK's own per-item convention, stark_metric.py),
                    "analyses": {PREFIX: {...}} (when a benchmark analysis applies), ...};
                    categorical families also get "chance", "breakdown" and the measured
                    random-guess reference "random_accuracy" on the same tasks;
                    "solver_variant_families": families that used a ``baseline:NAME``
                    variant (the others ran the default baseline);
                    "isolation": the sandbox isolation level(s) of code-computed answers
                    (None when no code ran), "isolation_note" when it was the weaker process mode;
                    "usage": live models' cost summed over answers (model calls, prompt and
                    completion tokens, code runs, tool calls, budget exhaustions; usage_totals)
    program_output/ ``<task>.stdout.txt`` / ``.stderr.txt``: what each ``code:`` program printed
                    (truncated at the sandbox's output limit, the dropped byte count noted)
    cardinal/       report.json, confusion.csv, confusion.png (cardinal-direction tasks only)
    run.json        what identifies the run (suite, solver, seed, n, family filter, max_steps,
                    data, mode, step_budget, stsim version), written before the first task: ``--resume``
                    checks it

**Resume** (``run(..., resume=True)``, ``stsim run SUITE --resume DIR``): an interrupted run
(Ctrl-C, a kill, a lost machine) is continued in its own folder.  Its tasks are made again
(same suite and seed: same bytes, checked against ``tasks.jsonl``); every task that already has
a final answer for each of its items in ``answers.jsonl`` keeps it, and only the others are
solved.  A task is not final when an item is missing from the file (the run stopped while
solving it; a line cut short by a kill is ignored) or was answered ``missing`` because a
model request failed.  The folder is then rewritten in task order, so a resumed run's files
equal an uninterrupted run's (timing fields aside).  The kept answers are first saved to
``answers.previous.jsonl`` (replaced atomically), which is deleted when the run completes and
read again if the resume itself is interrupted.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from tqdm import tqdm

from .. import __version__
from ..records import RUN_FOLDER_FILES, Answer, JsonlWriter, Score, Task, dumps
from ..answers import get_format, lenient_read
from ..solvers.random_guess import random_reference
from ..scoring.score import run_analyses, score_answers, summarise, wants_analysis
from ..scoring.stark_metric import stark_item, summarise_stark
from ..solvers.base import ORACLE_PREFIXES, OracleSolver, Solver, SolverError, get_solver
from .suites import Suite, SuiteError, get_suite


#: what summary.json and the report say when code ran without namespaces
WEAK_ISOLATION_NOTE = ("code ran with --isolation process: a resource-limited process with no "
                       "filesystem, network or PID namespaces (weaker than the default bwrap)")


#: the counters of ``Answer.usage`` summed by :func:`usage_totals`
USAGE_KEYS = ("model_calls", "prompt_tokens", "completion_tokens", "code_runs", "tool_calls")


def usage_totals(answers: Iterable[Answer]) -> dict[str, int]:
    """``summary.json`` ``usage``: each of :data:`USAGE_KEYS` summed over the answers' ``usage``,
    ``answers`` (answers that record usage) and ``budget_exhausted`` (answers with that status:
    the agentic step budget ran out)."""
    out = {k: 0 for k in USAGE_KEYS}
    out.update(answers=0, budget_exhausted=0)
    for a in answers:
        if a.usage is not None:
            out["answers"] += 1
            for k in USAGE_KEYS:
                v = a.usage.get(k, 0)
                out[k] += int(v) if isinstance(v, int) and not isinstance(v, bool) else 0
        out["budget_exhausted"] += a.status == "budget_exhausted"
    return out


def safe_solve(solver: Solver, task: Task) -> list[Answer]:
    """Run a solver on one task; an unexpected exception becomes a ``crashed`` answer (with
    the exception text) instead of ending the run.  :class:`SolverError` propagates."""
    try:
        return solver.solve(task)
    except SolverError:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded, never swallowed silently
        detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
        keys = [s.index for s in task.steps] or [None]
        return [Answer(task.id, k, "crashed", detail=detail, solver=solver.name) for k in keys]


def _solve_chunk(args: tuple[str, Task, dict | None]) -> list[Answer]:
    spec, task, options = args
    return safe_solve(get_solver(spec, options), task)


def solve_all(tasks: Iterable[Task], solver_spec: str, workers: int = 1,
              options: dict | None = None, solver: Solver | None = None) -> Iterator[tuple[Task, list[Answer]]]:
    """Yield ``(task, answers)`` in task order, solving in ``workers`` processes when > 1
    (threads, sharing one solver, when the solver is ``threaded``).  ``solver``: an already
    built solver for ``solver_spec`` (else built here)."""
    if solver is None:
        solver = get_solver(solver_spec, options)
    if workers <= 1:
        for t in tasks:
            yield t, safe_solve(solver, t)
        return
    if getattr(solver, "threaded", False):
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            buf = list(tasks)
            for t, ans in zip(buf, pool.map(lambda t: safe_solve(solver, t), buf)):
                yield t, ans
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        buf = list(tasks)
        for t, ans in zip(buf, pool.map(_solve_chunk, [(solver_spec, t, options) for t in buf], chunksize=4)):
            yield t, ans


class RunError(ValueError):
    """A run that cannot start: e.g. its output folder is a file or cannot be created."""


def make_out_dir(out: Path, flag: str = "--out") -> None:
    """Create the output folder ``out``; raise :class:`RunError` naming it (as ``flag``) when it
    is an existing file or cannot be created (missing permission, a file in the way)."""
    if out.exists() and not out.is_dir():
        raise RunError(f"{flag} {out}: is an existing file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"{flag} {out}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK):
        raise RunError(f"{flag} {out}: folder is not writable")


#: the largest ``workers`` of a live model's run: requests in flight (``--workers``' range)
MAX_WORKERS = 256


def local_workers_max() -> int:
    """The largest ``workers`` for a solver that runs on this machine (processes, or sandboxes
    of a ``code:`` solver or of a live model's ``ci`` / ``agentic`` code, each an interpreter
    of its own): 4 per core (``os.cpu_count()``), at least 8 (``--workers 1000`` started 1000
    of them)."""
    return max(8, 4 * (os.cpu_count() or 1))


def runs_here(solver_spec: str, solver_options: dict[str, Any] | None = None) -> bool:
    """Whether each worker of ``solver_spec`` runs on this machine: every solver but a live
    model (``openai...``) in ``da`` mode (its default), whose workers are requests in flight."""
    return not (solver_spec.startswith("openai") and (solver_options or {}).get("mode", "da") == "da")


def check_run_options(*, seed: Any, trim: Any, workers: Any, max_steps: Any,
                      solver_spec: str | None = None, solver_options: dict[str, Any] | None = None) -> None:
    """Raise :class:`RunError` naming the first out-of-range run option: ``seed`` a
    non-negative integer, ``trim`` in [0, 0.5), ``workers`` >= 1 and at most
    :data:`MAX_WORKERS`, and, for a solver that :func:`runs_here` (``solver_spec`` and its
    ``solver_options``; when given), at most :func:`local_workers_max`; ``max_steps`` -1 (suite
    default), ``None`` (all) or >= 0."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RunError(f"--seed must be a non-negative integer, got {seed!r}")
    if not isinstance(trim, (int, float)) or not 0.0 <= trim < 0.5:
        raise RunError(f"--trim must be in [0, 0.5), got {trim!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise RunError(f"--workers must be at least 1, got {workers!r}")
    if workers > MAX_WORKERS:
        raise RunError(f"--workers must be at most {MAX_WORKERS} (requests in flight to a live model), "
                       f"got {workers}")
    if solver_spec is not None and runs_here(solver_spec, solver_options) and workers > local_workers_max():
        raise RunError(f"--workers {workers}: --solver {solver_spec} runs each worker on this machine "
                       f"(a process or a sandbox); at most {local_workers_max()} here (4 per core)")
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < -1):
        raise RunError(f"--max-steps must be 0 (all) or positive, got {max_steps!r}")


#: run options that identify a run; ``--resume`` refuses a folder whose run.json differs.
RUN_IDENTITY = ("suite", "solver", "seed", "n_per_family", "families_filter", "max_steps", "data", "mode",
                "step_budget", "context", "language", "structured")
#: evaluation conditions of a run (``run(..., condition=...)``) and their values when not given;
#: a run.json written before they were recorded counts as having the defaults.
CONDITION_DEFAULTS: dict[str, Any] = {"context": "none", "language": "en", "structured": False}

#: details of ``missing`` answers that a resume asks again (the request failed, not the model).
_RETRY_DETAILS = ("request failed", "an earlier step's request failed")


def _read_lines_tolerant(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file written by a run; a last line cut short by a kill is
    skipped, any other bad line raises :class:`RunError`."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            if i >= len(lines) - 2 and not path.read_text(encoding="utf-8").endswith("\n"):
                break  # the line being written when the run was killed
            raise RunError(f"--resume: {path}:{i + 1}: not valid JSON; the folder is damaged") from None
        out.append(obj)
    return out


def previous_answers(out: Path, tasks: Iterable[Task]) -> dict[str, list[Answer]]:
    """Final answers of an interrupted run in ``out``: task id -> its answers in step order,
    for every one of ``tasks`` whose items all have an answer that is not a failed request.
    Reads ``answers.previous.jsonl`` (left by an interrupted resume) and ``answers.jsonl``."""
    by_task: dict[str, dict[Any, Answer]] = {}
    for name in ("answers.previous.jsonl", "answers.jsonl"):
        for obj in _read_lines_tolerant(out / name):
            a = Answer(**{k: obj.get(k) for k in Answer.__dataclass_fields__})
            by_task.setdefault(a.task_id, {})[a.step] = a
    final = {}
    for t in tasks:
        items = by_task.get(t.id)
        if items is None:
            continue
        tid = t.id
        keys = [s.index for s in t.steps] or [None]
        if set(keys) - set(items):
            continue
        ans = [items[k] for k in keys]
        if any(a.status == "missing" and (a.detail or "").startswith(_RETRY_DETAILS) for a in ans):
            continue
        final[tid] = ans
    return final


#: each key of :data:`RUN_IDENTITY` as a user gives it to ``stsim run`` (the refusals name these)
RUN_OPTIONS = {"suite": "SUITE", "solver": "--solver", "seed": "--seed", "n_per_family": "--n",
               "families_filter": "--family", "max_steps": "--max-steps", "data": "--data", "mode": "--mode",
               "step_budget": "--step-budget", "context": "--context", "language": "--language",
               "structured": "--structured"}


def run_identity(suite: Suite, solver_spec: str, *, seed: int, n: int | None, only: str | None,
                 max_steps: int | None, data: str | Path | None, solver_options: dict[str, Any] | None,
                 condition: dict[str, Any] | None) -> dict[str, Any]:
    """What makes a run the run it is (:data:`RUN_IDENTITY`, written to its run.json), from
    :func:`run`'s arguments of the same names (``max_steps`` -1: the suite's own; ``condition``
    the ``context`` / ``language`` given, the others their :data:`CONDITION_DEFAULTS`).  Raises
    :class:`RunError` for an unknown ``condition`` key."""
    openai = solver_spec.startswith("openai")
    unknown = sorted(set(condition or {}) - {"context", "language"})
    if unknown:
        raise RunError(f"unknown run condition(s) {', '.join(unknown)}; known: context, language")
    return {"suite": suite.name, "solver": solver_spec, "seed": seed, "n_per_family": n, "families_filter": only,
            "max_steps": suite.max_steps if max_steps == -1 else max_steps,
            "data": None if data is None else str(data),
            "mode": (solver_options or {}).get("mode") if openai else None,
            "step_budget": (solver_options or {}).get("step_budget") if openai else None,
            **CONDITION_DEFAULTS, **(condition or {}),
            "structured": bool((solver_options or {}).get("structured", False))}


def identity_differences(recorded: dict[str, Any], identity: dict[str, Any], suite: Suite) -> list[str]:
    """How the run ``recorded`` (a run folder's run.json, or the summary.json of a run made
    before run.json) differs from the run ``identity`` (:func:`run_identity`) of ``suite``: one
    ``"--n: 10 there, 3 now"`` per option of :data:`RUN_OPTIONS` (``[]``: the same run).  The
    one rule of ``--resume`` and of ``--out`` onto a folder that holds a run: a key the record
    lacks is not compared (an older stsim did not record it), except the conditions, which
    count as their :data:`CONDITION_DEFAULTS`; two ``n_per_family`` that give every family the
    same number of tasks (``--n 10`` and none given, where each family's own count is 10;
    :meth:`Suite.same_tasks`; of the same suite only: another suite's counts are not
    ``suite``'s) are the same run."""
    old = {**CONDITION_DEFAULTS, **recorded}
    same_suite = old.get("suite") == identity["suite"]

    def shown(k, v):
        if k == "n_per_family" and same_suite:                    # None: each family's own count, named
            return suite.describe_n(v, identity["families_filter"])
        if k == "n_per_family" and v is None:
            return "each family's own count"
        return "not given" if v is None else repr(v)
    diff = [k for k in RUN_IDENTITY if k in old and old[k] != identity.get(k)]
    if "n_per_family" in diff and same_suite and suite.same_tasks(old["n_per_family"], identity["n_per_family"],
                                                                  identity["families_filter"]):
        diff.remove("n_per_family")
    return [f"{RUN_OPTIONS[k]}: {shown(k, old[k])} there, {shown(k, identity.get(k))} now" for k in diff]


def recorded_run(out: Path) -> dict[str, Any] | None:
    """The identity recorded in a run folder ``out``: its run.json, else the summary.json of a
    run made before run.json, when it is a JSON object naming a suite; None otherwise (no such
    files, unreadable ones, or a folder no `stsim run` made, e.g. `stsim score --out`'s)."""
    for name in ("run.json", "summary.json"):
        try:
            old = json.loads((out / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return old if isinstance(old, dict) and "suite" in old else None
    return None


def _check_other_run(out: Path, identity: dict[str, Any], suite: Suite) -> None:
    """Raise :class:`RunError` when ``out`` holds another run than ``identity``
    (:func:`recorded_run`, :func:`identity_differences`; the rule of ``--resume``): a new run
    there would overwrite its answers.jsonl, scores.jsonl and summary.json.  The same run again
    (a live model going on from its cache) is allowed."""
    old = recorded_run(out)
    differ = identity_differences(old, identity, suite) if old is not None else []
    if differ:
        raise RunError(f"--out {out}: holds another run ({'; '.join(differ)}); running here would overwrite its "
                       "answers.jsonl, scores.jsonl and summary.json: give another --out, or remove the folder")


def _check_resume(out: Path, identity: dict[str, Any], suite: Suite) -> int | None:
    """Raise :class:`RunError` unless ``out`` holds a run with the same identity
    (:func:`identity_differences`).  Returns the ``n_per_family`` recorded there (None: each
    family's own count), which the resumed run keeps, so that its summary.json says what its
    run.json says."""
    path = out / "run.json"
    if out.exists() and not out.is_dir():
        hint = (f"; give its folder: --resume {out.parent}"
                if out.name in RUN_FOLDER_FILES and (out.parent / "run.json").is_file() else "")
        raise RunError(f"--resume {out}: is a file, not a folder; --resume takes the folder of the "
                       "interrupted run (its --out folder, holding run.json, tasks.jsonl and answers.jsonl)"
                       + hint)
    if not out.is_dir():
        raise RunError(f"--resume {out}: no such folder")
    if not path.exists():
        raise RunError(f"--resume {out}: no run.json in it (not a run folder, or made by an older stsim)")
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise RunError(f"--resume {out}: run.json is not valid JSON") from None
    if not isinstance(recorded, dict):
        raise RunError(f"--resume {out}: run.json holds no run (a JSON object)")
    diff = identity_differences(recorded, identity, suite)
    if diff:
        raise RunError(f"--resume {out}: another run is there ({'; '.join(diff)}); nothing was changed")
    return recorded.get("n_per_family")


def summary_so_far(out: Path) -> dict[str, Any]:
    """The summary.json of the run in ``out`` (``{}`` when it has none yet, or an unreadable
    one: a run killed before its first summary): what a resume keeps (its wall time) and checks
    (its trim)."""
    try:
        before = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return before if isinstance(before, dict) else {}


def _summary_before(out: Path, trim: float) -> dict[str, Any]:
    """:func:`summary_so_far` of the run being resumed.  Raises :class:`RunError` when that
    summary was made with another ``trim`` than ``trim``: resuming would replace its table with
    one trimmed otherwise (``stsim score`` rescores a run's files with another trim)."""
    before = summary_so_far(out)
    if isinstance(before.get("trim"), (int, float)) and before["trim"] != trim:
        raise RunError(f"--resume {out}: its summary.json was made with --trim {before['trim']:g}; resuming "
                       f"with --trim {trim:g} would replace it: resume with --trim {before['trim']:g}, or "
                       f"rescore with `stsim score {out / 'tasks.jsonl'} {out / 'answers.jsonl'} --trim "
                       f"{trim:g}`; nothing was changed")
    return before


def _atomic_jsonl(path: Path, records: Iterable[Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with JsonlWriter(tmp) as w:
        for r in records:
            w.write(r)
    os.replace(tmp, path)


def default_out_dir(suite: str) -> Path:
    return Path("runs") / f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}"


def run(suite_name: str, solver_spec: str = "baseline", *, n: int | None = None, seed: int = 0,
        out_dir: str | Path | None = None, data: str | Path | None = None,
        max_steps: int | None = -1, trim: float = 0.10, workers: int = 1,
        progress: bool = True, only: str | None = None,
        solver_options: dict[str, Any] | None = None,
        transform: Callable[[Task], Task] | None = None, resume: bool = False,
        cluster: str | None = None, chunk_size: int | None = None,
        condition: dict[str, Any] | None = None) -> dict[str, Any]:
    """Generate (or load), solve, score and summarise a suite; return the summary dict.

    Args:
        n: tasks per family (default: the suite's own counts; for data suites, all).
        max_steps: tracking steps scored per task; -1 = the suite's default (10), None = all.
        only: run only the families matching this glob pattern.
        cluster: ``local:N`` or ``tcp://HOST:PORT``: generate, solve and score on a Dask cluster
            in chunks of ``chunk_size`` tasks (stsim/benchmarks/cluster.py); the files are those
            of the local run.  ``workers`` > 1 is then only allowed for threaded (live-model)
            solvers, where it bounds the requests in flight across the whole cluster.
        solver_options: run-level solver settings (e.g. ``base_url``, ``mode``); ``out_dir`` and
            ``max_steps`` are added.
        transform: applied to every task before it is written and solved (an evaluation
            condition, e.g. geoqa's ``--context``).
        resume: continue the interrupted run in ``out_dir`` (module docstring, "Resume").
        condition: the evaluation condition ``transform`` applies, recorded in run.json and
            summary.json and part of the run's identity: ``context`` (geoqa ``--context``,
            default ``none``), ``language`` (default ``en``); ``structured`` (structured output
            of a live model) is taken from ``solver_options``.
    Raises:
        SuiteError / SolverError: unknown suite or solver, a data suite without data or with
            bad data, a family filter matching nothing, or a ``code:`` solver on families none
            of which answers in a format a program can return (``CODE_FORMATS``).
        RunError: an out-of-range option (seed, trim, max_steps; workers above 4 per core
            for a solver that runs here, :func:`check_run_options`), an output
            folder that cannot be created, ``cluster`` together with ``transform`` or
            ``resume`` (not supported yet), or (``resume``) a folder without a run of the same
            suite, solver, seed, ``n``, filter, ``max_steps``, data, mode, context, language
            and structured output, or whose tasks differ; (not ``resume``) an ``out_dir`` that
            holds another run by the same rule (:func:`identity_differences`); an unknown
            ``condition`` key.
        ClusterError: a bad ``cluster`` value or an unreachable scheduler.
        ChunkFailed: (after the summary is written) chunks that kept failing on the cluster,
            naming their task ids; every other task is written.
    Every input is checked before the output folder is created.
    """
    suite = get_suite(suite_name)
    check_run_options(seed=seed, trim=trim, workers=workers, max_steps=max_steps, solver_spec=solver_spec,
                      solver_options=solver_options)
    steps = suite.max_steps if max_steps == -1 else max_steps
    if resume and out_dir is None:
        raise RunError("--resume needs the folder of the interrupted run")
    out = Path(out_dir) if out_dir is not None else default_out_dir(suite_name)
    identity = run_identity(suite, solver_spec, seed=seed, n=n, only=only, max_steps=max_steps, data=data,
                            solver_options=solver_options, condition=condition)
    cond = {k: identity[k] for k in CONDITION_DEFAULTS}
    before: dict[str, Any] = {}        # a resumed run's summary.json so far (its wall time, trim)
    if resume:
        n = identity["n_per_family"] = _check_resume(out, identity, suite)   # the same tasks: its n kept
        before = _summary_before(out, trim)
    else:
        _check_other_run(out, identity, suite)
    options = {"out_dir": str(out), "max_steps": steps, **(solver_options or {})}
    solver = get_solver(solver_spec, options)  # fails fast on a bad spec
    variant = getattr(solver, "variant", None)
    families = suite.family_names(only)
    if families == []:
        raise SuiteError(f"no family of suite {suite_name!r} matches {only!r}")
    if variant is not None and families and not any(solver.applies_to(f) for f in families):
        from ..baselines import ALTERNATIVES
        where = sorted(f for f, alts in ALTERNATIVES.items() if variant in alts)
        raise SolverError(f"--solver {solver_spec}: variant {variant!r} applies to none of the families of "
                          f"suite {suite_name!r}" + (f" matching {only!r}" if only else "")
                          + f"; it applies to: {', '.join(where)}")
    if solver_spec.startswith("code:"):   # a program returns numbers: no task of these families answered
        from ..solvers.code import check_code_families
        check_code_families(solver_spec, families)
    if isinstance(solver, OracleSolver) and families:
        unsupported = [f for f in families if not solver.supports(f)]
        if unsupported:
            raise SolverError(f"--solver oracle: no oracle for {', '.join(unsupported[:4])}"
                              + (" ..." if len(unsupported) > 4 else "")
                              + f" (exact families only: {', '.join(p + '*' for p in ORACLE_PREFIXES)}; "
                              "use --solver baseline or --family to select exact families)")
    if cluster is not None:
        from .cluster import check_cluster_spec
        check_cluster_spec(cluster)
        if resume or transform is not None:  # workers generate their own tasks: neither reaches them yet
            raise RunError("--cluster cannot be combined with --resume, --context or --language yet; "
                           "run these locally")
        if workers > 1 and not getattr(solver, "threaded", False):
            raise RunError(f"--workers {workers} with --cluster: the cluster's worker processes solve in "
                           "parallel; --workers is only for live models (requests in flight, cluster-wide)")
    # the first task is made before the run folder: a missing or bad --data, or a --family
    # matching nothing, fails here and leaves nothing behind
    pending = suite.tasks(n=n, seed=seed, data=data, only=only)
    if transform is not None:
        pending = map(transform, pending)
    first = next(pending, None)
    if first is None:
        what = f"matches --family {only!r}" if only is not None else "was found"
        raise SuiteError(f"no task of suite {suite_name!r} {what}"
                         + (f" in --data {data}" if data is not None else ""))
    stack = contextlib.ExitStack()
    if cluster is not None:
        from .cluster import Cluster
        cl = stack.enter_context(Cluster(cluster))
    try:
        make_out_dir(out)
    except BaseException:
        stack.close()
        raise
    previous: dict[str, list[Answer]] = {}
    everything: list[Task] = []
    if resume:  # all tasks first: each one already written must be the same, byte for byte
        everything = [first, *pending]
        recorded = {o["id"]: dumps(o) for o in _read_lines_tolerant(out / "tasks.jsonl")}
        for t in everything:
            if t.id in recorded and recorded[t.id] != dumps(t.to_dict()):
                raise RunError(f"--resume {out}: task {t.id} differs from the one in tasks.jsonl "
                               "(another stsim version or other data?); start a new run")
        previous = previous_answers(out, everything)
        _atomic_jsonl(out / "answers.previous.jsonl", [a for ans in previous.values() for a in ans])
    else:
        (out / "run.json").write_text(json.dumps({**identity, "stsim_version": __version__}, indent=2,
                                                 sort_keys=True) + "\n")
    total = suite.count_tasks(n, only) if suite.loader is None else None
    all_scores: list[Score] = []
    analysed: tuple[list[Task], list[Answer]] = ([], [])  # kept for benchmark analyses
    summary: dict[str, Any] = {"suite": suite_name, "seed": seed, "solver": solver_spec,
                               "n_per_family": n, "families_filter": only, "max_steps": steps, "trim": trim,
                               "stsim_version": __version__, "data": None if data is None else str(data),
                               **cond}
    if solver_options:
        summary["solver_options"] = {k: str(v) if isinstance(v, Path) else v for k, v in solver_options.items()}
    variant_families: set[str] = set()  # families that used the solver's variant
    isolation: set[str] = set()  # sandbox isolation levels of the answers computed by code
    usage: list[Answer] = []  # answers that record what they cost (live models)
    n_tasks = 0
    categorical: list[Task] = []  # for the random-guess reference column
    stark_items = []  # STARK's own per-item convention (stark_metric), one per STARK instance
    lenient: dict[str, int] = {}  # format failures a lenient reader would have read (model text)
    interrupted = False
    # a collection of programs (code:DIR, code:PROGRAMS.jsonl): which of them this run used
    programs = solver.program_names() if callable(getattr(solver, "program_names", None)) else None
    used_programs: set[str] = set()
    started = time.perf_counter()
    stream = None
    with stack, JsonlWriter(out / "tasks.jsonl") as tw, JsonlWriter(out / "answers.jsonl") as aw, \
            JsonlWriter(out / "scores.jsonl") as sw:
        tasks = itertools.chain([first], pending)

        def tee(it: Iterable[Task]) -> Iterator[Task]:
            for t in it:
                tw.write(t)
                yield t

        def resumed() -> Iterator[tuple[Task, list[Answer]]]:
            """(task, answers) in task order: kept answers, else solved now."""
            todo = [t for t in everything if t.id not in previous]
            solved = solve_all(iter(todo), solver_spec, workers, options, solver)
            try:
                for t in everything:
                    tw.write(t)
                    yield (t, previous[t.id]) if t.id in previous else next(solved)
            finally:
                solved.close()

        def local() -> Iterator[tuple[Task, list[Answer], list[Score]]]:
            pairs = resumed() if resume else solve_all(tee(tasks), solver_spec, workers, options, solver)
            for task, answers in pairs:
                yield task, answers, score_answers([task], answers, max_steps=steps)

        def on_cluster() -> Iterator[tuple[Task, list[Answer], list[Score]]]:
            for task, answers, scores in stream:
                tw.write(task)
                yield task, answers, scores

        if cluster is not None:
            stream = _cluster_stream(cl, suite, suite_name, seed, n, only, tasks, solver, solver_spec,
                                     options, steps, workers, chunk_size, stack)
        results = local() if cluster is None else on_cluster()
        reused = 0
        bar = tqdm(total=total, desc=f"{suite_name} / {solver_spec}", unit="task",
                   disable=not progress, leave=False)
        try:
            for task, answers, scores in results:
                reused += task.id in previous
                for a in answers:
                    aw.write(a)
                    if a.isolation:
                        isolation.add(a.isolation)
                    if a.usage is not None or a.status == "budget_exhausted":
                        usage.append(a)
                for s in scores:
                    sw.write(s)
                all_scores.extend(scores)
                item = stark_item(task, answers, steps)
                for a in answers:
                    if a.status == "format_failure" and a.text is not None and lenient_read(
                            a.text, task.answer_format, task.meta.get("answer_spec")) is not None:
                        lenient[task.family] = lenient.get(task.family, 0) + 1
                if item is not None:
                    stark_items.append(item)
                if wants_analysis(task.family):
                    analysed[0].append(task)
                    analysed[1].extend(answers)
                if not get_format(task.answer_format).numeric:
                    categorical.append(task)
                if variant is not None and solver.applies_to(task.family):
                    variant_families.add(task.family)
                if programs is not None:
                    used_programs.add(solver.name_of(task.id))
                n_tasks += 1
                bar.update(1)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            bar.close()
            if callable(getattr(solver, "close", None)):
                solver.close()
            if variant is not None:
                summary["solver_variant_families"] = sorted(variant_families)
            wall = round(time.perf_counter() - started, 3)
            if resume:
                # the run's wall time is its sessions' sum: the time already spent is not lost
                wall_before = before.get("wall_s")
                summary["resumed"] = {"reused_tasks": reused, "solved_tasks": n_tasks - reused,
                                      "wall_s_before": wall_before, "wall_s_now": wall}
                wall = round(wall + (wall_before or 0.0), 3)
            if stream is not None:
                results.close()  # cancels the chunks still on the cluster
                if stream.failed:
                    summary["failed_tasks"] = list(stream.failed)
            summary["isolation"] = ", ".join(sorted(isolation)) or None
            if usage:
                summary["usage"] = usage_totals(usage)
            if any(i.startswith("process") for i in isolation):
                summary["isolation_note"] = WEAK_ISOLATION_NOTE
            summary.update(n_tasks=n_tasks, interrupted=interrupted,
                           wall_s=wall,
                           families=summarise(all_scores, trim))
            for fam, row in summarise_stark(stark_items, trim).items():
                summary["families"].setdefault(fam, {}).update(row)
            for fam, k in lenient.items():
                summary["families"].setdefault(fam, {})["lenient_recoverable"] = k
            if analysed[0]:
                summary["analyses"] = run_analyses(*analysed, out_dir=out)
            for fam, ref in random_reference(categorical, steps).items():
                summary["families"].setdefault(fam, {}).update(ref)
            unused = sorted(programs - used_programs) if programs and not interrupted else []
            if unused:
                summary["warnings"] = [f"{solver.name}: {len(unused)} of its {len(programs)} program(s) are for "
                                       f"no task of this run: {', '.join(unused[:3])}" + (", ..." if len(unused) > 3
                                                                                        else "")]
            (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    summary["out_dir"] = str(out)
    if resume and not interrupted:
        (out / "answers.previous.jsonl").unlink(missing_ok=True)
    if interrupted:
        raise KeyboardInterrupt(str(out))
    if stream is not None and stream.failed:
        from .cluster import ChunkFailed
        raise ChunkFailed(stream.failed, stream.errors, str(out))
    if programs and n_tasks and not programs & used_programs:  # as an answers file of another suite
        example = solver.name_of(first.id)
        raise SolverError(f"{solver.name}: none of its {len(programs)} program(s) is for a task of this run "
                          f"(names like {example!r} expected; it has e.g. {sorted(programs)[0]!r}): programs "
                          f"of another suite, --n or --family? {out} holds the run, every answer 'missing'")
    return summary


def _cluster_stream(cl, suite, suite_name: str, seed: int, n: int | None, only: str | None,
                    tasks: Iterator[Task], solver: Solver, solver_spec: str, options: dict[str, Any],
                    steps: int | None, workers: int, chunk_size: int | None, stack: contextlib.ExitStack):
    """The :class:`~stsim.benchmarks.cluster.ChunkStream` of a ``--cluster`` run: generated
    suites send (family, index) keys, data suites the loaded tasks; live models get the
    cluster-wide semaphore and the shared response cache (appended to the run's cache file)."""
    from .cluster import DEFAULT_CHUNK, ChunkStream, Work, chunks_of
    size = chunk_size or DEFAULT_CHUNK
    if suite.loader is None:
        chunks = chunks_of(suite=suite_name, seed=seed, keys=suite.task_keys(n, only), size=size)
    else:
        chunks = chunks_of(suite=suite_name, seed=seed, tasks=tasks, size=size)
    work = Work(solver_spec, dict(options), steps)
    cache, cache_file, transcript_file = None, None, None
    chat = getattr(solver, "client", None)
    if getattr(solver, "threaded", False) and chat is not None and hasattr(chat, "_cache"):
        # one cache file, written here only; workers read the broadcast copy and return new entries
        cache = dict(chat._cache)
        cache_file = getattr(chat, "_cache_w", None)
        transcript_file = getattr(chat, "_trans_w", None)
        work.options.update(out_dir=None, cache=None)
        work.threads = workers
        work.semaphore = f"stsim-llm-{id(stack):x}-{time.time_ns():x}"
        work.leases = max(1, int(options.get("concurrency", workers)))
        from distributed import Semaphore
        sem = Semaphore(max_leases=work.leases, name=work.semaphore)

        def close_semaphore() -> None:
            import warnings
            with warnings.catch_warnings():  # a worker's last release may still be on its way
                warnings.simplefilter("ignore", RuntimeWarning)
                sem.close()
        stack.callback(close_semaphore)
    stream = ChunkStream(cl.client, chunks, work, window=2 * cl.n_threads() + 1, cache=cache,
                         cache_file=cache_file, transcript_file=transcript_file)
    stream.chunk_size = size
    return stream
