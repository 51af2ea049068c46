"""``--solver openai:MODEL``: a live model behind an OpenAI-compatible endpoint, in STARK's two
modes (§4.4, Appendix 7.1 Table 5):

* **DA** (direct answer): the model must answer from its own reasoning, no code or tools.
* **CI** (code interpreter): the model may reply with a Python block defining ``solver()``;
  the block runs in :mod:`stsim.sandbox.isolation`, and what it printed (with its returned
  value, or its failure) goes back to the model as the next user turn.  The exchange ends when
  the reply contains ``[RESULTS_START]`` or after ``max_turns`` model replies.

Either way the final reply is read by the task's rubric and answer format
(:func:`stsim.answers.parse_answer`) and scored like any other solver.  Tracking tasks are
multi-turn: the first user turn is the task prompt with step 0's readings, then one user turn
per further step, and each step's reply is that step's answer.

The system prompts below say what STARK Table 5 says, in our own words.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..answers import parse_answer
from ..records import Answer, Task
from .chat_client import ChatClient, ChatConfig, ChatError, ChatReply, EndpointUnreachable, needs_api_key
from ..sandbox.isolation import Limits, Sandbox, SandboxError, require_isolation
from .base import SolverError, register_solver

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

MODES = {"da": SYSTEM_DA, "ci": SYSTEM_CI}

_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.IGNORECASE | re.DOTALL)
_RESULTS = re.compile(r"RESULTS?[ _]?START", re.IGNORECASE)


def extract_code(reply: str) -> str | None:
    """The last fenced Python block of a reply, or ``None``."""
    blocks = [m.group("code") for m in _CODE.finditer(reply)]
    return blocks[-1] if blocks else None


def sandbox_feedback(res) -> str:
    """The user turn that reports a sandboxed run back to the model (our wording)."""
    parts = []
    if res.stdout:
        parts.append("Printed output:\n" + res.stdout + ("\n[output truncated]" if res.stdout_truncated else ""))
    if res.status == "ok":
        parts.append(f"solver() returned: {res.value}")
    else:
        parts.append(f"The run failed ({res.status}): {res.detail}")
    if res.stderr and res.status != "ok":
        parts.append("Error output:\n" + res.stderr[-2000:])
    return "\n\n".join(parts)


class OpenAISolver:
    """Answer tasks with a chat model (DA or CI mode).

    Args:
        client: a :class:`ChatClient` (shared by threads).
        mode: ``"da"`` or ``"ci"``.
        max_turns: model replies allowed per answer in CI mode before giving up.
        max_steps: tracking steps asked (the rest are answered ``missing``); None = all.
        sandbox: the sandbox for CI code (default: :class:`Sandbox` with default limits).
    """

    threaded = True  # waits on the network: the runner solves tasks in threads

    def __init__(self, client: ChatClient, mode: str = "da", max_turns: int = 5,
                 max_steps: int | None = 10, sandbox: Sandbox | None = None) -> None:
        if mode not in MODES:
            raise SolverError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        self.client, self.mode, self.max_turns, self.max_steps = client, mode, max_turns, max_steps
        self._sandbox = sandbox
        self.name = f"openai:{client.config.model}" + (":ci" if mode == "ci" else "")

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox(Limits())
        return self._sandbox

    def close(self) -> None:
        """Close the cache and transcript files and the sandbox."""
        self.client.close()
        if self._sandbox is not None:
            self._sandbox.close()

    def _turn(self, messages: list[dict[str, str]]) -> ChatReply:
        """Get the final reply for the last user turn (running CI code as the model asks); a
        refusal, an empty or a tool-call-only reply ends the turn at once."""
        for _ in range(self.max_turns if self.mode == "ci" else 1):
            got = self.client.complete(messages)
            reply = got.text
            messages.append({"role": "assistant", "content": reply})
            if got.outcome != "ok" or self.mode == "da" or _RESULTS.search(reply):
                return got
            code = extract_code(reply)
            if code is None:
                feedback = ("No Python block and no answer found. Either send code in a ```python "
                            "block, or give the answer between [RESULTS_START] and [RESULTS_END].")
            else:
                feedback = sandbox_feedback(self.sandbox.run(code))
            messages.append({"role": "user", "content": feedback})
        return got

    def _answer(self, task: Task, step: int | None, got: ChatReply) -> Answer:
        a = self._parse(task, step, got)
        if self.mode == "ci":  # the model could run code: say how it was isolated
            a.isolation = self.sandbox.isolation_label
        return a

    def _parse(self, task: Task, step: int | None, got: ChatReply) -> Answer:
        if got.outcome == "refusal":
            return Answer(task.id, step, "refusal", text=got.text, detail=got.detail, solver=self.name)
        if got.outcome != "ok":
            return Answer(task.id, step, "format_failure", text=got.text or None, detail=got.detail,
                          solver=self.name)
        return parse_answer(got.text, task_id=task.id, step=step, answer_format=task.answer_format,
                            rubric=task.meta.get("rubric", "stark"), spec=task.meta.get("answer_spec"),
                            solver=self.name)

    def solve(self, task: Task) -> list[Answer]:
        """Answers of one task (one per asked step for tracking).

        Raises:
            SolverError: the endpoint is unreachable (:class:`EndpointUnreachable`): the run stops.
        """
        try:
            return self._solve(task)
        except EndpointUnreachable as exc:
            raise SolverError(str(exc)) from None

    def _solve(self, task: Task) -> list[Answer]:
        messages = [{"role": "system", "content": MODES[self.mode]}]
        if not task.steps:
            messages.append({"role": "user", "content": task.prompt})
            try:
                return [self._answer(task, None, self._turn(messages))]
            except EndpointUnreachable:
                raise
            except ChatError as exc:
                return [Answer(task.id, None, "missing", detail=f"request failed: {exc}", solver=self.name)]
        out: list[Answer] = []
        asked = task.steps if self.max_steps is None else task.steps[: self.max_steps]
        for st in task.steps:
            if st not in asked or (out and out[-1].status == "missing"):
                why = "step not asked (beyond max_steps)" if st not in asked else "an earlier step's request failed"
                out.append(Answer(task.id, st.index, "missing", detail=why, solver=self.name))
                continue
            content = (task.prompt + "\n\n" + st.prompt) if st.index == task.steps[0].index else st.prompt
            messages.append({"role": "user", "content": content})
            try:
                out.append(self._answer(task, st.index, self._turn(messages)))
            except EndpointUnreachable:
                raise
            except ChatError as exc:
                out.append(Answer(task.id, st.index, "missing", detail=f"request failed: {exc}", solver=self.name))
        return out


def _openai_factory(arg: str | None, *, base_url: str | None = None, mode: str = "da",
                    out_dir: str | Path | None = None, cache: str | Path | None = None,
                    temperature: float | None = 0.0, seed: int | None = 0, max_tokens: int | None = None,
                    timeout_s: float = 120.0, max_retries: int = 5, concurrency: int = 4,
                    api_key_env: str = "OPENAI_API_KEY", max_steps: int | None = 10,
                    max_turns: int = 5, sandbox_reuse: bool = True, isolation: str = "bwrap",
                    **_: Any) -> OpenAISolver:
    if not arg:
        raise SolverError("--solver openai:MODEL needs a model name")
    if mode == "ci":  # fail closed before the first request
        try:
            require_isolation(isolation)
        except (SandboxError, ValueError) as exc:
            raise SolverError(f"--solver openai:{arg} --mode ci: {exc}") from None
    why = needs_api_key(base_url or ChatConfig.base_url, api_key_env)
    if why is not None:
        raise SolverError(f"--solver openai:{arg}: {why}")
    cfg = ChatConfig(model=arg, base_url=base_url or ChatConfig.base_url, api_key_env=api_key_env,
                     temperature=temperature, seed=seed, max_tokens=max_tokens, timeout_s=timeout_s,
                     max_retries=max_retries, concurrency=concurrency)
    out = Path(out_dir) if out_dir is not None else None
    cache_path = Path(cache) if cache is not None else (out / "llm_cache.jsonl" if out else None)
    transcript = out / "transcript.jsonl" if out else None
    sandbox = None
    if mode == "ci":
        sandbox = Sandbox(Limits(), isolation=isolation, reuse=sandbox_reuse,
                          warm=max(1, concurrency) if sandbox_reuse else 0)
    return OpenAISolver(ChatClient(cfg, cache_path, transcript), mode=mode, max_turns=max_turns,
                        max_steps=max_steps, sandbox=sandbox)


register_solver("openai", _openai_factory)
