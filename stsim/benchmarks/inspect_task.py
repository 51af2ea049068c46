"""Inspect AI integration (``pip install 'stsim[inspect]'``): every stsim suite as an Inspect
task, run with ``inspect eval``, scored by stsim's own rubric and metrics.

* :func:`suite_task` / :func:`stsim_suite` -- an Inspect ``Task`` for a suite: a dataset of
  ``Sample`` s made from our tasks (``id`` = task id, ``target`` = the gold as JSON), each
  starting with the benchmark's system prompt and first user turn exactly as the live-model
  solver sends them (:func:`stsim.generators.chat_prompts.chat_plan`, direct-answer mode);
* :func:`stsim_conversation` -- the solver: one model reply per user turn, so a tracking task is
  multi-turn as in STARK (the task prompt with step 0, then one user turn per further step,
  each reply that step's answer);
* :func:`stsim_scorer` -- reads each reply with the task's rubric and answer format
  (:func:`stsim.answers.parse_answer`) and scores it with :func:`stsim.scoring.score.score_answers`;
  the per-sample value is ``{"correct": accuracy of the task's items or None, "error": mean
  error of its scored items or None, "failures": items not read}`` and the per-item scores are
  in the score's metadata;
* :func:`stsim_metrics` -- the per-family summary of ``stsim score`` (``trimmed_rmse``, ``rmse``,
  ``median_error`` or ``accuracy``, ``failures``) as ``FAMILY/METRIC`` entries, so the Inspect
  log shows our numbers.

Code-interpreter mode (running model code in our sandbox inside Inspect) is not provided:
``mode="ci"`` raises.  ``stsim export SUITE --format inspect -o DIR`` writes ``DIR/tasks.jsonl``
and ``DIR/stsim_task.py``, a task file for ``inspect eval DIR/stsim_task.py`` (it imports stsim).
"""
from __future__ import annotations

# Absolute imports only: `inspect eval stsim/benchmarks/inspect_task.py@stsim_suite` loads this
# file as a stand-alone module, where relative imports fail.

import json
import math
from pathlib import Path
from typing import Any, Iterable

from stsim.records import Score as StsimScore
from stsim.records import Task as StsimTask


def _inspect():
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise ImportError("the Inspect AI integration needs inspect-ai: pip install 'stsim[inspect]'") from None


def samples(tasks: Iterable[StsimTask], max_steps: int | None = 10, mode: str = "da") -> list:
    """Inspect ``Sample`` s of ``tasks``: input = system prompt and first user turn; metadata
    holds the task (JSON), the later user turns and the step each turn asks.

    Raises:
        ValueError: ``mode`` other than ``"da"``; ``max_steps == 0`` (nothing to ask).
    """
    _inspect()
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from stsim.generators.chat_prompts import chat_plan
    from stsim.records import dumps
    if mode != "da":
        raise ValueError("the Inspect tasks run direct-answer mode only (no code-interpreter sandbox)")
    if max_steps == 0:
        raise ValueError("max_steps must be None (all) or >= 1")
    out = []
    for t in tasks:
        plan = chat_plan(t, mode, max_steps if t.steps else None)
        gold = [s.answer for s in t.steps] if t.steps else t.answer
        out.append(Sample(
            id=t.id, target=dumps(gold),
            input=[ChatMessageSystem(content=plan.system), ChatMessageUser(content=plan.turns[0].content)],
            metadata={"stsim_task": dumps(t.to_dict()), "family": t.family, "max_steps": max_steps,
                      "turns": [u.content for u in plan.turns], "message_steps": [u.step for u in plan.turns]}))
    return out


def stsim_conversation():
    """The Inspect solver: one ``generate`` per user turn of the sample (replies kept in
    ``state.metadata["replies"]``, in turn order)."""
    _inspect()
    from inspect_ai.model import ChatMessageUser
    from inspect_ai.solver import solver

    @solver
    def stsim_conversation():
        async def solve(state, generate):
            replies = []
            for k, content in enumerate(state.metadata["turns"]):
                if k:
                    state.messages.append(ChatMessageUser(content=content))
                state = await generate(state)
                replies.append(state.output.completion)
            state.metadata["replies"] = replies
            return state
        return solve
    return stsim_conversation()


def score_replies(task: StsimTask, steps: list[int | None], replies: list[str],
                  max_steps: int | None = 10) -> list[StsimScore]:
    """Score the model's replies to a task as ``stsim score`` scores an answers file holding
    ``{"task_id", "step", "text"}`` lines: each reply read by the task's rubric and format."""
    from stsim.answers import parse_answer, reading_spec
    from stsim.scoring.score import score_answers
    answers = [parse_answer(text, task_id=task.id, step=step, answer_format=task.answer_format,
                            rubric=task.meta.get("rubric", "stark"), spec=reading_spec(task),
                            solver="answers-file")
               for step, text in zip(steps, replies)]
    return score_answers([task], answers, max_steps=max_steps)


def _value(items: list[StsimScore]) -> dict[str, Any]:
    errors = [s.error for s in items if s.status == "ok" and s.error is not None]
    categorical = any(s.correct is not None for s in items)
    return {"correct": (sum(s.correct or 0 for s in items) / len(items)) if categorical and items else None,
            "error": (sum(errors) / len(errors)) if errors and not categorical else None,
            "failures": sum(s.status != "ok" for s in items)}


def stsim_metrics(trim: float = 0.10):
    """An Inspect metric: :func:`stsim.scoring.score.summarise` over every item of every sample,
    flattened to ``{"FAMILY/METRIC": value}`` (``n``, ``failures``, and ``trimmed_rmse``,
    ``rmse``, ``median_error`` or ``accuracy``)."""
    _inspect()
    from inspect_ai.scorer import metric

    @metric
    def stsim_summary():
        def compute(scores) -> dict[str, float | None]:
            from stsim.scoring.score import summarise
            items = [StsimScore(**d) for s in scores  # Score or SampleScore, by Inspect version
                     for d in (getattr(s, "score", s).metadata or {}).get("items", [])]
            out: dict[str, float | None] = {}
            for fam, row in summarise(items, trim).items():
                for k in ("n", "failures", "trimmed_rmse", "rmse", "median_error", "accuracy"):
                    if k in row:
                        v = row[k]
                        out[f"{fam}/{k}"] = None if v is None or (isinstance(v, float) and math.isnan(v)) else v
            return out
        return compute
    return stsim_summary()


def stsim_scorer(max_steps: int | None = 10, trim: float = 0.10):
    """The Inspect scorer: our rubric, answer formats and scoring (module docstring)."""
    _inspect()
    from inspect_ai.scorer import Score, scorer

    @scorer(metrics=[stsim_metrics(trim)])
    def stsim_score():
        async def score(state, target):
            task = StsimTask.from_dict(json.loads(state.metadata["stsim_task"]))
            replies = state.metadata.get("replies") or []
            items = score_replies(task, state.metadata["message_steps"], replies, max_steps)
            return Score(value=_value(items), answer=replies[-1] if replies else None,
                         metadata={"items": [s.to_dict() for s in items]})
        return score
    return stsim_score()


def suite_task(suite: str, n: int | None = None, seed: int = 0, family: str | None = None,
               max_steps: int | None = -1, data: str | None = None, tasks_file: str | Path | None = None):
    """An Inspect ``Task`` for a stsim suite (or for the tasks of ``tasks_file``, a tasks
    JSONL as ``stsim generate`` writes it).  ``max_steps``: tracking steps asked and scored;
    -1 = the suite's default (10), None = all.

    Raises:
        SuiteError: unknown suite or a data suite without ``data``.
    """
    _inspect()
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset
    from stsim.benchmarks.suites import get_suite
    if tasks_file is not None:
        from stsim.records import read_tasks
        tasks = read_tasks(tasks_file)
        steps = 10 if max_steps == -1 else max_steps
    else:
        s = get_suite(suite)
        steps = s.max_steps if max_steps == -1 else max_steps
        tasks = list(s.tasks(n=n, seed=seed, data=data, only=family))
    return Task(dataset=MemoryDataset(samples(tasks, steps), name=f"stsim-{suite}"),
                solver=stsim_conversation(), scorer=stsim_scorer(steps), name=f"stsim_{suite}")


try:  # the @task registration needs inspect-ai; without it the function is a plain one
    from inspect_ai import task
except ImportError:  # pragma: no cover - optional extra
    def task(fn):
        return fn


@task
def stsim_suite(suite: str = "quickstart", n: int | None = None, seed: int = 0, family: str | None = None,
                max_steps: int | None = -1):
    """The registered Inspect task (one per suite through ``-T suite=NAME``):
    ``inspect eval stsim/benchmarks/inspect_task.py@stsim_suite -T suite=stark-mini -T n=1 --model ...``."""
    return suite_task(suite, n=n, seed=seed, family=family, max_steps=max_steps)


TASK_FILE = '''"""Inspect AI task for the stsim suite {suite!r} (written by `stsim export {suite} --format inspect`).

Run:  inspect eval {name} --model PROVIDER/MODEL
The tasks are in tasks.jsonl next to this file; replies are read and scored by stsim
(pip install 'stsim[inspect]').
"""
from pathlib import Path

from inspect_ai import task

from stsim.benchmarks.inspect_task import suite_task


@task
def stsim_{ident}(max_steps: int | None = {max_steps!r}):
    return suite_task({suite!r}, tasks_file=Path(__file__).with_name("tasks.jsonl"), max_steps=max_steps)
'''


def write_task_file(tasks: Iterable[StsimTask], out: Path, suite: str, max_steps: int | None) -> list[Path]:
    """``stsim export --format inspect``: ``out/tasks.jsonl`` and ``out/stsim_task.py``."""
    from stsim.records import write_jsonl
    write_jsonl(out / "tasks.jsonl", tasks)
    ident = "".join(c if c.isalnum() else "_" for c in suite)
    path = out / "stsim_task.py"
    path.write_text(TASK_FILE.format(suite=suite, name=path.name, ident=ident, max_steps=max_steps), encoding="utf-8")
    return [out / "tasks.jsonl", path]
