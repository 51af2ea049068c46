"""The chat messages a live model is sent for a task: one source for the live-model solver
(``--solver openai:MODEL``), ``stsim generate --prompts-only``, ``stsim export --format chat``
and the Inspect AI tasks, so an outside harness that replays these messages reproduces our runs.

The layout (STARK §4.4 and Appendix 7.1, Table 5):

* one **system** message: :data:`SYSTEM_DA` (direct answer) or :data:`SYSTEM_CI` (code
  interpreter), whatever the family; or, for geoqa's agentic tier, :func:`system_agentic`
  (the tool API's documentation and the step budget);
* a single-answer task: one **user** turn, the task prompt;
* a tracking task (``task.steps``): the first user turn is the task prompt, a blank line and
  step 0's readings; every further asked step is one more user turn holding that step's
  readings, sent after the model's reply to the previous step is appended as an
  ``assistant`` message.  Each step's reply is that step's answer.  Steps beyond
  ``max_steps`` are not asked (they are scored ``missing``).

In CI mode the model may answer a user turn with a Python block instead of an answer; the
solver then runs it and sends what it printed as an extra user turn (see
:func:`stsim.solvers.live_model.sandbox_feedback`), or :data:`CI_NO_CODE_TURN` when the
reply had neither code nor an answer.  Those turns depend on the model's replies and are not
part of the fixed plan below.

The system prompts say what STARK Table 5 says, in our own words.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..records import Task

#: STARK Table 5, direct-answer mode (same content, our wording).
SYSTEM_DA = ("You are a helpful assistant. Answer from your own reasoning only: "
             "you may not write or run code, and you may not use any tools.")

#: STARK Table 5, code-interpreter mode (same content, our wording).
SYSTEM_CI = (
    "You are a helpful assistant, and you may use Python for signal-processing work.\n"
    "1. To run code, reply with one ```python code block that defines a function called solver "
    "(this function is mandatory). Put all your code, imports included, inside functions; "
    "nothing may run outside them. Only the numpy, scipy and shapely libraries may be used. "
    "Template:\n"
    "```python\n"
    "def solver():\n"
    "    # import numpy / scipy here and compute your answer\n"
    "    # takes no input; returns the result as a numpy array\n"
    "    return result\n"
    "```\n"
    "The code is not run interactively: a bare variable name shows nothing, but whatever you "
    "print() will be sent back to you.\n"
    "2. [IMPORTANT] When you have the answer, write it directly in the chat between the "
    "keywords [RESULTS_START] and [RESULTS_END]; that ends the exchange.")

#: Agentic tier of the geoqa benchmark (issue 17, item 5; seed 003 §4 "agentic"): our wording.
#: ``{budget}`` is the step budget (model replies per question), ``{api}`` the tool API's
#: documentation (:data:`stsim.sandbox.geotools.API_DOC`).
SYSTEM_AGENTIC_TEMPLATE = (
    "You are a helpful assistant with a Python sandbox that holds a read-only geographic entity "
    "store and a small tool API for it.\n"
    "1. To run code, reply with a ```python code block. It runs as a script in a fresh process "
    "(variables do not carry over from one block to the next); whatever it prints is sent back to "
    "you. A reply with code is never taken as your answer.\n"
    "2. When you know the answer, reply without any code block and end with the line "
    "'Answer: ...' written as the question asks. If the question cannot be answered, say so.\n"
    "3. You have at most {budget} replies for this question, code replies included; the last one "
    "must be the answer.\n\n"
    "{api}")

#: The default step budget of the agentic tier (model replies per question).
DEFAULT_STEP_BUDGET = 6


def system_agentic(budget: int = DEFAULT_STEP_BUDGET) -> str:
    """The agentic system prompt for a step budget of ``budget`` replies (>= 1).

    Raises:
        ValueError: ``budget`` < 1.
    """
    from ..sandbox.geotools import API_DOC
    if budget < 1:
        raise ValueError(f"the step budget must be at least 1 reply, got {budget}")
    return SYSTEM_AGENTIC_TEMPLATE.format(budget=budget, api=API_DOC)


#: mode name -> system prompt (agentic: with the default step budget; the solver formats its own).
MODES = {"da": SYSTEM_DA, "ci": SYSTEM_CI, "agentic": system_agentic()}

#: CI mode: the user turn sent when a reply has neither a Python block nor an answer.
CI_NO_CODE_TURN = ("No Python block and no answer found. Either send code in a ```python "
                   "block, or give the answer between [RESULTS_START] and [RESULTS_END].")


@dataclass(frozen=True)
class UserTurn:
    """One fixed user turn: ``step`` is the tracking step it asks for (``None`` for a
    single-answer task); ``content`` is the message text."""

    step: int | None
    content: str


@dataclass(frozen=True)
class ChatPlan:
    """The fixed part of a conversation about one task.

    Attributes:
        system: the system prompt (:data:`MODES` of ``mode``).
        turns: the user turns, in order; the model answers each before the next is sent.
        not_asked: indices of tracking steps beyond ``max_steps`` (never sent, scored missing).
        mode: ``"da"``, ``"ci"`` or ``"agentic"``.
    """

    system: str
    turns: tuple[UserTurn, ...]
    not_asked: tuple[int, ...]
    mode: str

    def messages(self) -> list[dict[str, str]]:
        """System and user messages in the order sent (OpenAI chat format); a harness appends
        the model's reply as an ``assistant`` message after each user message."""
        return [{"role": "system", "content": self.system}] + \
            [{"role": "user", "content": t.content} for t in self.turns]


def chat_plan(task: Task, mode: str = "da", max_steps: int | None = 10,
              step_budget: int = DEFAULT_STEP_BUDGET) -> ChatPlan:
    """The system prompt and user turns the live-model solver sends for ``task``.

    Args:
        task: any task (``task.steps`` non-empty for tracking).
        mode: ``"da"`` (direct answer) or ``"ci"`` (code interpreter), STARK Table 5, or
            ``"agentic"`` (geoqa's tool API in the sandbox, :func:`system_agentic`).
        max_steps: tracking steps asked (the first ``max_steps``); ``None`` = all.
        step_budget: agentic mode: model replies allowed per question (named in the prompt).
    Raises:
        ValueError: unknown ``mode``, a negative ``max_steps``, a step budget below 1.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    if max_steps is not None and max_steps < 0:
        raise ValueError(f"max_steps must be None or >= 0, got {max_steps}")
    system = system_agentic(step_budget) if mode == "agentic" else MODES[mode]
    if not task.steps:
        return ChatPlan(system, (UserTurn(None, task.prompt),), (), mode)
    asked = task.steps if max_steps is None else task.steps[:max_steps]
    turns = tuple(UserTurn(st.index, (task.prompt + "\n\n" + st.prompt) if k == 0 else st.prompt)
                  for k, st in enumerate(asked))
    return ChatPlan(system, turns, tuple(st.index for st in task.steps[len(asked):]), mode)


def chat_record(task: Task, mode: str = "da", max_steps: int | None = 10,
                step_budget: int = DEFAULT_STEP_BUDGET) -> dict[str, Any]:
    """One line of ``stsim export --format chat`` / ``generate --prompts-only``: the task's
    :meth:`~stsim.records.Task.prompt_view` (no gold, inputs or metadata) plus

    * ``mode``, ``max_steps``, ``rubric`` (how the reply is read, :data:`stsim.answers.RUBRICS`);
    * ``messages``: system and user messages in the order sent (:meth:`ChatPlan.messages`);
    * ``message_steps``: for each user message, the tracking step it asks (``null`` for a
      single-answer task);
    * ``steps_not_asked``: tracking steps never sent (scored ``missing``);
    * in CI mode, ``ci_no_code_turn``: the text sent when a reply has neither code nor answer;
    * in agentic mode, ``step_budget``: model replies allowed (named in the system prompt).
    """
    plan = chat_plan(task, mode, max_steps, step_budget)
    rec = task.prompt_view()
    rec.update(mode=mode, max_steps=max_steps, rubric=task.meta.get("rubric", "stark"),
               messages=plan.messages(), message_steps=[t.step for t in plan.turns],
               steps_not_asked=list(plan.not_asked))
    if mode == "ci":
        rec["ci_no_code_turn"] = CI_NO_CODE_TURN
    if mode == "agentic":
        rec["step_budget"] = step_budget
    return rec
