"""``--solver code:PATH``: run solver programs (model-written or not) in the sandbox and turn
their values into typed answers.

``PATH`` is one of:

* ``FILE.py`` -- one program for every task; its ``solver`` is called as ``solver(inputs)``
  (the task's structured inputs), ``solver(readings, coordinate, timestamp)`` (STARK's tracking
  form: readings ``(T, n)`` with ``None`` for a missing reading, sensor coordinates ``(n, 2)``,
  time stamps ``(T,)``) or ``solver()``;
* ``DIR`` -- one program per task, named ``<task id with '/' replaced by '__'>.py``;
* ``FILE.jsonl`` -- one ``{"task_id", "code"}`` object per line.

A task without a program gets ``missing`` answers.  A single-answer task's value must fit the
task's answer format (``[x, y]`` for a point, a number for a time, ...); a tracking task's value
is one such entry per step (``None`` for a step without estimate).  Anything else is
``bad_shape``; sandbox failures keep their status (syntax_error, timeout, memory, crashed,
forbidden, no_result) on every item of the task.  A ``def solver`` whose required positional parameters
fit none of the call forms (read with :mod:`ast`, :func:`stsim.sandbox.call.signature_problem`)
is ``no_result`` on every item, naming the expected signatures, and is not run.
"""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..answers import get_format
from ..records import Answer, RecordError, Task, iter_jsonl
from ..sandbox.call import signature_problem, solver_parameters
from ..sandbox.isolation import Limits, Sandbox, SandboxError, SandboxResult, require_isolation
from .base import SolverError, register_solver


def _reason(exc: Exception) -> str:
    """Why a program file could not be read, in a few words."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
    return getattr(exc, "strerror", None) or str(exc)


def program_name(task_id: str) -> str:
    """File name of a task's program inside a ``code:DIR`` folder."""
    return task_id.replace("/", "__") + ".py"


def _finite_numbers(v: Any, n: int | None, what: str) -> list[float]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = [v]
    while isinstance(v, list) and len(v) == 1 and isinstance(v[0], list):
        v = v[0]  # [[x, y]] -> [x, y]
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                          and math.isfinite(x) for x in v):
        raise ValueError(f"expected {what} of finite numbers, got {v!r:.80}")
    if n is not None and len(v) != n:
        raise ValueError(f"expected {what} of {n} number(s), got {len(v)}")
    return [float(x) for x in v]


#: The answer formats a ``solver()`` value can fill: the sandbox returns numbers and arrays of
#: numbers only (``stsim.sandbox.harness``), so relation names, directions, DE-9IM strings and
#: the geoqa formats cannot come from a program.
CODE_FORMATS = ("point", "scalar", "time", "vector", "binary")


def check_code_families(solver_spec: str, families: list[str] | None) -> str | None:
    """Whether a ``code:`` solver (``solver_spec``) can answer the selected ``families``
    (registered family names; ``None`` for a data suite that declares none: not checked).

    Returns:
        ``None`` when every family's answer format is one of :data:`CODE_FORMATS` (or
        ``solver_spec`` is no ``code:`` solver), else a warning naming the families whose
        answers will be ``bad_shape``.
    Raises:
        SolverError: no selected family can be answered (every task would be ``bad_shape``).
    """
    if not solver_spec.startswith("code:") or not families:
        return None
    from ..registry import load_families
    fams = load_families()
    other = sorted({fams[f].answer_format for f in families if f in fams
                    and fams[f].answer_format not in CODE_FORMATS})
    names = [f for f in families if f in fams and fams[f].answer_format in other]
    if not names:
        return None
    what = (f"{len(names)} famil{'y' if len(names) == 1 else 'ies'} ({', '.join(names[:3])}"
            f"{', ...' if len(names) > 3 else ''}) answer in format{'s' if len(other) > 1 else ''} "
            f"{', '.join(other)}, which a solver() program cannot return (it returns numbers: "
            f"formats {', '.join(CODE_FORMATS)})")
    if len(names) == len(families):
        raise SolverError(f"--solver {solver_spec}: the selected {what}, so no task could be answered; use an "
                          "answers file (stsim score) or a live model for them")
    return f"--solver {solver_spec}: {what}; their answers will be bad_shape"


def typed_value(value: Any, answer_format: str, spec: dict[str, Any] | None = None) -> Any:
    """Check and convert a sandbox value to the answer format's typed value.

    Raises:
        ValueError: the value does not fit (wrong length, not numeric, non-finite) -- the
            caller records ``bad_shape`` with this message.
    """
    fmt = get_format(answer_format)
    if answer_format == "point":
        return _finite_numbers(value, 2, "a point [x, y]")
    if answer_format in ("scalar", "time"):
        return _finite_numbers(value, 1, "one number")[0]
    if answer_format == "vector":
        n = (spec or {}).get("length")
        return _finite_numbers(value, None if n is None else int(n), "a vector")
    if answer_format == "binary":
        x = _finite_numbers(value, 1, "0 or 1")[0]
        if x not in (0.0, 1.0):
            raise ValueError(f"expected 0 or 1, got {x}")
        return int(x)
    raise ValueError(f"answers in format {fmt.name!r} cannot come from a numeric solver() value")


def call_args(task: Task) -> dict[str, Any]:
    """Arguments offered to ``solver``: the task inputs, and STARK's tracking-form triple."""
    args: dict[str, Any] = {"inputs": task.inputs}
    if task.steps and "readings" in task.inputs and "sensors" in task.inputs:
        times = task.inputs.get("times") or [s.inputs.get("time") for s in task.steps]
        args.update(readings=task.inputs["readings"], coordinate=task.inputs["sensors"], timestamp=times)
    return args


def answers_from_result(task: Task, res: SandboxResult, solver: str) -> list[Answer]:
    """One :class:`Answer` per item of ``task`` from a sandbox result."""
    return [replace(a, isolation=res.isolation) for a in _answers(task, res, solver)]


def _answers(task: Task, res: SandboxResult, solver: str) -> list[Answer]:
    keys = [s.index for s in task.steps] or [None]
    if res.status != "ok":
        return [Answer(task.id, k, res.status, detail=res.detail, solver=solver) for k in keys]
    spec = task.meta.get("answer_spec")
    if not task.steps:
        try:
            return [Answer(task.id, None, "ok", value=typed_value(res.value, task.answer_format, spec), solver=solver)]
        except ValueError as exc:
            return [Answer(task.id, None, "bad_shape", detail=str(exc), solver=solver)]
    v = res.value
    if not isinstance(v, list) or len(v) != len(keys):
        n = len(v) if isinstance(v, list) else type(v).__name__
        return [Answer(task.id, k, "bad_shape", detail=f"expected one entry per step ({len(keys)}), got {n}",
                       solver=solver) for k in keys]
    out = []
    for k, item in zip(keys, v):
        if item is None:
            out.append(Answer(task.id, k, "no_result", detail="no estimate for this step", solver=solver))
            continue
        try:
            out.append(Answer(task.id, k, "ok", value=typed_value(item, task.answer_format, spec), solver=solver))
        except ValueError as exc:
            out.append(Answer(task.id, k, "bad_shape", detail=f"step {k}: {exc}", solver=solver))
    return out


class CodeSolver:
    """Solve tasks by running their programs in a :class:`~stsim.sandbox.isolation.Sandbox`.

    Args:
        path: ``FILE.py``, ``DIR`` or ``FILE.jsonl`` (see the module docstring).
        output_dir: where each program's stdout and stderr are kept (see :meth:`keep_output`);
            ``stsim run`` passes ``OUT/program_output``.  None: not kept.
        limits: sandbox limits; ``sandbox_options`` go to :class:`Sandbox` (e.g. ``share_stsim``,
            ``isolation``: ``"bwrap"`` by default, ``"process"`` only when asked for).
    Raises:
        SolverError: the path does not exist, a JSONL line is malformed, or the isolation asked
            for cannot be had here (fail closed: checked before any program runs).
    """

    def __init__(self, path: str | Path, limits: Limits | None = None, *,
                 output_dir: str | Path | None = None, **sandbox_options: Any) -> None:
        self.path = Path(path)
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.name = f"code:{path}"
        self._single: str | None = None
        self._programs: dict[str, str] | None = None
        if self.path.is_file() and self.path.suffix == ".jsonl":
            self._programs = {}
            self._program_lines: dict[str, int] = {}
            try:
                for lineno, obj in iter_jsonl(self.path):
                    code = obj.get("code", obj.get("source"))
                    if "task_id" not in obj or not isinstance(code, str):
                        raise SolverError(f"{self.path}:{lineno}: expected {{\"task_id\", \"code\"}}")
                    self._programs[str(obj["task_id"])] = code
                    self._program_lines[str(obj["task_id"])] = lineno
            except RecordError as exc:
                raise SolverError(str(exc)) from None
        elif self.path.is_file():
            try:
                self._single = self.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SolverError(f"code:{self.path}: cannot read the program ({_reason(exc)})") from None
        elif not self.path.exists():
            raise SolverError(f"code:{self.path}: no such file or folder (give a .py file, a folder of "
                              "programs or a .jsonl file of {\"task_id\", \"code\"})")
        elif not self.path.is_dir():
            raise SolverError(f"code solver: {self.path} is neither a .py file, a .jsonl file nor a folder")
        names = self.program_names()
        if names is not None and not names:
            raise SolverError(f"code:{self.path}: holds no programs (" + (
                "no line" if self._programs is not None else
                "no .py file; one per task, named <task id with '/' replaced by '__'>.py") + ")")
        try:
            require_isolation(sandbox_options.get("isolation", "bwrap"))
        except (SandboxError, ValueError) as exc:
            raise SolverError(f"{self.name}: {exc}") from None
        self._limits = limits
        self._options = sandbox_options
        self._sandbox: Sandbox | None = None
        if sandbox_options.get("reuse", True):
            # zygotes are started now, by this (the run's) thread: they live as long as it does
            # (bubblewrap's --die-with-parent), and threads solving tasks share them
            self._sandbox = Sandbox(self._limits, **self._options)

    #: the work happens in sandboxes: the runner solves tasks in threads sharing this solver
    #: (one zygote per worker thread, ``warm``) instead of one solver per worker process
    threaded = True

    def program_names(self) -> set[str] | None:
        """The names of a collection's programs: a folder's ``.py`` file names, a JSONL's task
        ids; ``None`` for one ``FILE.py`` (it serves every task)."""
        if self._single is not None:
            return None
        if self._programs is not None:
            return set(self._programs)
        return {p.name for p in self.path.glob("*.py")}

    def name_of(self, task_id: str) -> str:
        """The name of ``task_id``'s program among :meth:`program_names`."""
        return task_id if self._programs is not None else program_name(task_id)

    def program_for(self, task: Task) -> str | None:
        if self._single is not None:
            return self._single
        if self._programs is not None:
            return self._programs.get(task.id)
        f = self.path / program_name(task.id)
        return f.read_text(encoding="utf-8") if f.is_file() else None

    def _unreadable(self, task: Task, exc: Exception) -> list[Answer]:
        """A folder's program for ``task`` that cannot be read, naming the file, for each answer;
        the run goes on.  Not UTF-8: ``syntax_error`` (Python itself refuses to compile it, a
        ``SyntaxError``; it never ran); another read error (permissions...): ``crashed``."""
        keys = [s.index for s in task.steps] or [None]
        detail = f"{self.path / program_name(task.id)}: cannot read the program ({_reason(exc)})"
        status = "syntax_error" if isinstance(exc, UnicodeDecodeError) else "crashed"
        return [Answer(task.id, k, status, detail=detail, solver=self.name) for k in keys]

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox(self._limits, **self._options)
        return self._sandbox

    def program_label(self, task: Task) -> str:
        """What a syntax error or a traceback of ``task``'s program calls it: the ``.py`` file,
        or ``PROGRAMS.jsonl:LINE`` for a program on a line of a JSONL file."""
        if self._programs is not None:
            return f"{self.path}:{self._program_lines.get(task.id, 0)}"
        return str(self.path if self._single is not None else self.path / program_name(task.id))

    def run_program(self, task: Task, source: str) -> SandboxResult:
        """Run one program for ``task`` (the sandboxed run, without turning it into answers)."""
        return self.sandbox.run(source, call_args(task), filename=self.program_label(task))

    def close(self) -> None:
        """Stop the sandbox's long-lived interpreters, if any."""
        if self._sandbox is not None:
            self._sandbox.close()

    def solve(self, task: Task) -> list[Answer]:
        try:
            source = self.program_for(task)
        except (OSError, UnicodeDecodeError) as exc:
            return self._unreadable(task, exc)
        if source is None:
            keys = [s.index for s in task.steps] or [None]
            return [Answer(task.id, k, "missing", detail=f"no program for this task in {self.path}",
                           solver=self.name) for k in keys]
        params = solver_parameters(source)   # read with ast, never run: a def solver the harness cannot call
        problem = None if params is None else signature_problem(params, call_args(task))
        if problem is not None:
            keys = [s.index for s in task.steps] or [None]
            return [Answer(task.id, k, "no_result", detail=problem, solver=self.name) for k in keys]
        res = self.run_program(task, source)
        self.keep_output(task, res)
        return answers_from_result(task, res, self.name)

    def keep_output(self, task: Task, res: SandboxResult) -> None:
        """Write what the program printed to ``output_dir/<task>.stdout.txt`` and
        ``.stderr.txt`` (only when non-empty): the first ``Limits.output_bytes`` of each, and
        when more was printed a last line ``[stsim: N more bytes dropped]``."""
        if self.output_dir is None:
            return
        self.output_dir.mkdir(parents=True, exist_ok=True)
        stem = program_name(task.id)[:-3]
        for name, text, total in (("stdout", res.stdout, res.stdout_bytes), ("stderr", res.stderr, res.stderr_bytes)):
            if not total and not text:
                continue
            dropped = total - min(total, int(res.limits.get("output_bytes", total)))
            if dropped:
                text += f"\n[stsim: {dropped} more bytes dropped]\n"
            (self.output_dir / f"{stem}.{name}.txt").write_text(text, encoding="utf-8")


def _code_factory(arg: str | None, *, sandbox_reuse: bool = True, isolation: str = "bwrap",
                  out_dir: str | Path | None = None, concurrency: int = 1, **_options) -> CodeSolver:
    if not arg:
        raise SolverError("--solver code:PATH needs a .py file, a folder of programs or a .jsonl file")
    return CodeSolver(arg, reuse=sandbox_reuse, isolation=isolation, warm=max(1, int(concurrency)),
                      output_dir=Path(out_dir) / "program_output" if out_dir is not None else None)


register_solver("code", _code_factory)
