"""The records that carry a task from its generator to the report.

One flow, one record type per stage (docs/architecture.md, "The flow")::

    Task (prompt + structured inputs + typed gold)  ->  Answer (typed value or outcome)  ->  Score

* :class:`Task` is what a generator yields and a solver reads.  Models read ``prompt``;
  first-principle solvers read ``inputs``.  Sequential tasks (tracking) carry their per-step
  prompt fragments, inputs and gold answers in ``steps``.
* :class:`Answer` is what any solver returns: a typed ``value`` with ``status == "ok"``, or an
  explicit outcome (``no_estimate``, ``format_failure``, ``refusal``, ``missing``, or a sandbox
  failure) with ``value`` set to ``None``.
* :class:`Score` is the per-item verdict of :mod:`stsim.scoring.score`.

All three serialise to one JSON object per line (JSONL).  JSON has no NaN: missing readings are
written as ``null`` and read back as ``None`` (solvers turn them into ``numpy.nan``).  Readers
raise :class:`RecordError` naming the file and line of the first bad record.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

#: The files ``stsim run`` writes into its run folder (``--out``), replacing any of these names;
#: ``answers.previous.jsonl`` only while a resumed run is incomplete (deleted when it completes).
RUN_FOLDER_FILES = ("run.json", "tasks.jsonl", "answers.jsonl", "answers.previous.jsonl", "scores.jsonl",
                    "summary.json")

#: Outcomes of model-written solver code run in the sandbox, other than ``ok``
#: (:mod:`stsim.sandbox.isolation`; ``syntax_error``: it does not compile, so it never ran).
SANDBOX_FAILURES = ("syntax_error", "timeout", "memory", "crashed", "forbidden", "no_result", "bad_shape")

#: Outcomes an :class:`Answer` may carry.  ``ok`` means ``value`` holds a typed answer.
ANSWER_STATUSES = (
    "ok",
    "no_estimate",      # a solver declined: too few usable readings for the unknowns
    "format_failure",   # model text could not be parsed in the task's answer format
    "refusal",          # the model explicitly refused
    "missing",          # no answer was supplied for this task / step
    *SANDBOX_FAILURES,  # sandbox outcomes (model-written solver code)
    "budget_exhausted",  # agentic tier: the step budget ran out before a final answer (not a refusal)
)


class RecordError(ValueError):
    """A record (task, answer or score) is malformed; the message says where and why."""


class GoldError(RecordError):
    """A task whose inputs are well formed but whose gold answer is not the one they determine
    (a family validator that recomputes the gold raises it): ``stsim score`` refuses it like any
    malformed record, ``stsim audit`` reports it as an inconsistent gold answer (exit 1)."""


class UnknownName(KeyError):
    """A name (family, answer format, relation, template...) that no registry knows; the
    message lists the known ones.  The CLI reports it as a user error."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown name"


def finite_numbers(value: Any, what: str, length: int | None = None) -> list[float]:
    """``value`` as a list of finite floats, for the ``validate`` functions of families.

    Args:
        value: a list (or tuple) that must hold only finite int/float numbers (not bools).
        what: where the value sits, for the message (e.g. ``"task t1: inputs.domain"``).
        length: the exact number of entries required, or ``None`` for any non-empty list.

    Raises:
        RecordError: not a list, a wrong length, or an entry that is not a finite number.
    """
    if not isinstance(value, (list, tuple)) or not value:
        raise RecordError(f"{what} must be a non-empty list of numbers, got {value!r:.60}")
    if length is not None and len(value) != length:
        raise RecordError(f"{what} must hold {length} numbers, got {len(value)}")
    out = []
    for k, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise RecordError(f"{what}[{k}] must be a finite number, got {v!r:.40}")
        out.append(float(v))
    return out


@dataclass
class Step:
    """One step of a sequential task (e.g. one time stamp of a tracking task).

    Attributes:
        index: 0-based step number.
        prompt: the prompt fragment a model sees for this step (new readings).
        inputs: structured inputs of this step (JSON-serialisable), e.g. ``{"time": t,
            "readings": [...]}``.
        answer: the gold answer of this step, in the task's ``answer_format``.
    """

    index: int
    prompt: str
    inputs: dict[str, Any]
    answer: Any


@dataclass
class Task:
    """A benchmark item: prompt text, structured inputs and a gold answer computed by code.

    Attributes:
        id: stable identifier ``suite/family/NNNNNN`` (``...@LANG`` for a geoqa task in
            another language, stsim/generators/geoqa_languages.py).
        family: task family name, e.g. ``stark.localization.range``.
        prompt: everything a model needs, in plain text.
        inputs: structured, JSON-serialisable inputs for first-principle solvers.
        answer: gold answer in ``answer_format`` (``None`` for stepped tasks).
        answer_format: name of an answer format in :mod:`stsim.answers`.
        steps: per-step fragments for sequential tasks; empty otherwise.
        meta: seed, generator version and parameters used.
    """

    id: str
    family: str
    prompt: str
    inputs: dict[str, Any]
    answer: Any
    answer_format: str
    steps: list[Step] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def prompt_view(self) -> dict[str, Any]:
        """What a model is shown: id, family, prompt, answer format and, for stepped tasks, each
        step's index and prompt.  No gold answer, inputs or metadata."""
        view: dict[str, Any] = {"id": self.id, "family": self.family, "prompt": self.prompt,
                                "answer_format": self.answer_format}
        if self.steps:
            view["steps"] = [{"index": s.index, "prompt": s.prompt} for s in self.steps]
        return view

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "task") -> "Task":
        """Build a Task from a JSON object; raise :class:`RecordError` naming ``where``."""
        if not isinstance(d, dict):
            raise RecordError(f"{where}: expected a JSON object, got {type(d).__name__}")
        missing = [k for k in ("id", "family", "prompt", "inputs", "answer_format") if k not in d]
        if missing:
            hint = ("; this looks like a `generate --prompts-only` file, which has no gold: use the "
                    "full tasks file" if "inputs" in missing and "prompt" in d and "answer" not in d else "")
            if "id" in missing and "task_id" in d:  # the files given in the wrong order
                kind = "scores" if "family" in d and "status" in d and "text" not in d else "answers"
                hint = (f"; this is a line of {kind} (it has 'task_id'), not a task: give a tasks file "
                        "(`stsim score TASKS.jsonl ANSWERS.jsonl`: the tasks come first)")
            raise RecordError(f"{where}: missing field(s) {', '.join(missing)}{hint}")
        if not isinstance(d["inputs"], dict):
            raise RecordError(f"{where}: 'inputs' must be an object")
        for key in ("id", "family", "prompt", "answer_format"):
            if not isinstance(d[key], str):
                raise RecordError(f"{where}: {key!r} must be a string, got {_json_kind(d[key])}")
        for key, kind, want in (("meta", dict, "an object"), ("steps", list, "an array")):
            if d.get(key) is not None and not isinstance(d[key], kind):
                raise RecordError(f"{where}: {key!r} must be {want} (or absent), got {_json_kind(d[key])}")
        steps = []
        seen: dict[int, int] = {}  # step index -> position of its step: one lookup per step, not a scan
        for i, s in enumerate(d.get("steps") or []):
            if not isinstance(s, dict):
                raise RecordError(f"{where}: step {i} is malformed (expected an object, got {_json_kind(s)})")
            index, prompt, inputs = s.get("index"), s.get("prompt", ""), s.get("inputs")
            problem = ("'index' must be an integer" if isinstance(index, bool) or not isinstance(index, int) else
                       "'prompt' must be a string" if not isinstance(prompt, str) else
                       "'inputs' must be an object" if inputs is not None and not isinstance(inputs, dict) else
                       f"index {index} repeats step {seen[index]}" if index in seen else None)
            if problem is not None:
                raise RecordError(f"{where}: step {i} is malformed ({problem})")
            seen[index] = i
            steps.append(Step(index=index, prompt=prompt, inputs=dict(inputs or {}), answer=s.get("answer")))
        return cls(id=d["id"], family=d["family"], prompt=d["prompt"],
                   inputs=d["inputs"], answer=d.get("answer"),
                   answer_format=d["answer_format"], steps=steps,
                   meta=dict(d.get("meta") or {}))

    @property
    def n_items(self) -> int:
        """Number of scored items: one per step for sequential tasks, else one."""
        return len(self.steps) if self.steps else 1


def _json_kind(value: Any) -> str:
    """The JSON name of a decoded value's type (``a JSON number``, ``null``, ...)."""
    if value is None:
        return "null"
    kind = {bool: "boolean", int: "number", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)
    return f"a JSON {kind}"


@dataclass
class Answer:
    """A solver's answer to one task (or one step of a sequential task).

    Attributes:
        task_id: the :attr:`Task.id` answered.
        step: step index for sequential tasks, ``None`` otherwise.
        status: one of :data:`ANSWER_STATUSES`; ``"ok"`` iff ``value`` is a typed answer.
        value: typed answer (e.g. ``[x, y]`` for ``point``) or ``None``.
        text: raw model text when the answer was parsed from text.
        detail: free-form explanation of a non-ok outcome (e.g. why no estimate).
        solver: name of the solver that produced it.
        isolation: for answers computed by sandboxed code (``code:`` solvers, live models in
            ``--mode ci``), the sandbox's isolation level (``bwrap...`` = namespaces,
            ``process...`` = the weaker explicit process mode); ``None`` otherwise.
        usage: live models: what the answer cost -- ``model_calls`` (replies requested),
            ``prompt_tokens`` and ``completion_tokens`` (summed from the endpoint's ``usage``),
            and with code ``code_runs`` (sandboxed runs) and ``tool_calls`` (geoqa tool API
            calls, agentic mode); ``None`` for other solvers (docs/answer-formats.md).
    """

    task_id: str
    step: int | None
    status: str
    value: Any = None
    text: str | None = None
    detail: str | None = None
    solver: str | None = None
    isolation: str | None = None
    usage: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.status not in ANSWER_STATUSES:
            raise RecordError(f"answer for {self.task_id}: unknown status {self.status!r}")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None or k in ("step", "value")}


@dataclass
class Score:
    """Per-item verdict: the error or correctness of one answer against its gold.

    ``error`` is a non-negative distance for numeric formats (``None`` when the answer is not
    ``ok``); ``correct`` is 0/1 for categorical formats.
    """

    task_id: str
    family: str
    step: int | None
    status: str
    error: float | None = None
    correct: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["extra"]:
            d.pop("extra")
        return d


# ----------------------------------------------------------------------------------------- I/O
def _clean(obj: Any) -> Any:
    """Replace float NaN/inf by None so the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def dumps(obj: dict[str, Any]) -> str:
    """One strict-JSON line with stable key order (same input, same bytes)."""
    return json.dumps(_clean(obj), sort_keys=True, separators=(",", ":"), allow_nan=False)


class JsonlWriter:
    """Append records to a JSONL file, flushing after each line so an interrupted run keeps
    everything already written."""

    def __init__(self, path: str | os.PathLike, mode: str = "w") -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, mode, encoding="utf-8", newline="\n")

    def write(self, record: Any) -> None:
        d = record.to_dict() if hasattr(record, "to_dict") else record
        self._fh.write(dumps(d) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "JsonlWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> int:
    """Write records (objects with ``to_dict`` or plain dicts) to ``path``; return the count."""
    n = 0
    with JsonlWriter(path) as w:
        for r in records:
            w.write(r)
            n += 1
    return n


def _json_problem(exc: json.JSONDecodeError) -> str:
    """What a JSON decoder stopped at, with the column (1-based) and, for a non-ASCII character
    there (a Unicode minus sign U+2212 in a number, a typographic quote), its code point and name:
    ``Expecting value at column 31: '\u2212' U+2212 MINUS SIGN``."""
    import unicodedata
    text = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
    ch = exc.doc[exc.pos] if 0 <= exc.pos < len(exc.doc) else ""
    if ch and not ch.isascii():
        text += f": {ch!r} U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()
        if ch in "\u2212\u2012\u2013\u2014\ufe63\uff0d":
            text += " (JSON numbers take the ASCII hyphen-minus '-')"
    return text


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line (UTF-8; a leading byte-order mark
    is skipped; CRLF line ends are read as LF).  Besides regular files, other
    existing non-folders are read as streams: ``/dev/null`` (no lines), ``/dev/stdin``, a pipe
    such as bash's ``<(...)``.

    Raises:
        RecordError: the file is missing, a directory, unreadable, or a line is not UTF-8 or
            not a JSON object, is nested too deeply or holds an integer of more digits than
            Python converts (4300) (naming the line, and the column and character where possible).
    """
    p = Path(path)
    if p.is_dir():
        inside = sorted(f.name for f in p.glob("*.jsonl"))
        raise RecordError(f"{p}: is a directory, not a JSONL file"
                          + (f" (it holds {', '.join(inside)}: give one of them)" if inside else ""))
    if not p.exists():
        raise RecordError(f"{p}: no such file")
    try:
        fh = open(p, "rb")  # decoded line by line, so a bad byte is named with its line
    except OSError as exc:
        raise RecordError(f"{p}: cannot read ({exc.strerror})") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark (Notepad, PowerShell's Out-File): not data
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise RecordError(f"{p}:{lineno}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte "
                                  f"{exc.start + 1} of the line; save the file as UTF-8)") from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line.rstrip("\r\n"))  # a cut line: "Unterminated string"
            except json.JSONDecodeError as exc:
                raise RecordError(f"{p}:{lineno}: not valid JSON ({_json_problem(exc)})") from None
            except RecursionError:  # e.g. [[[[...]]]] thousands deep: no record is nested like that
                raise RecordError(f"{p}:{lineno}: JSON nested too deeply to be a record") from None
            except ValueError as exc:  # an integer of more digits than int() converts (4300)
                raise RecordError(f"{p}:{lineno}: not a usable JSON record ({exc.args[0].split(';')[0]})") from None
            if not isinstance(obj, dict):
                raise RecordError(f"{p}:{lineno}: expected a JSON object")
            yield lineno, obj


def read_tasks(path: str | os.PathLike) -> list[Task]:
    """Read a ``tasks.jsonl`` file.

    Raises:
        RecordError: on the first malformed line, naming file and line; a task id used twice,
            naming both lines; or if the file is empty.
    """
    return [task for _, task in read_task_lines(path)]


def read_task_lines(path: str | os.PathLike) -> list[tuple[int, Task]]:
    """:func:`read_tasks` with each task's line number (1-based) in the file, for messages
    about a task that parses but that its family refuses.  Raises as :func:`read_tasks`."""
    tasks: list[tuple[int, Task]] = []
    line_of: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        task = Task.from_dict(obj, where=f"{path}:{lineno}")
        if task.id in line_of:
            raise RecordError(f"{path}:{lineno}: task id {task.id!r} repeats line {line_of[task.id]}; "
                              "task ids must be unique")
        line_of[task.id] = lineno
        tasks.append((lineno, task))
    if not tasks:
        raise RecordError(f"{path}: contains no tasks (the file is empty or blank)")
    return tasks
