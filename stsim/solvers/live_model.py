"""``--solver openai:MODEL``: a live model behind an OpenAI-compatible endpoint, in STARK's two
modes (§4.4, Appendix 7.1 Table 5) and geoqa's agentic tier:

* **DA** (direct answer): the model must answer from its own reasoning, no code or tools.
* **CI** (code interpreter): the model may reply with a Python block defining ``solver()``;
  the block runs in :mod:`stsim.sandbox.isolation`, and what it printed (with its returned
  value, or its failure) goes back to the model as the next user turn.  The exchange ends when
  the reply contains ``[RESULTS_START]`` or after ``max_turns`` model replies.
* **agentic** (geoqa tasks only; :mod:`stsim.solvers.agentic`): the model's code runs as
  scripts in a sandbox with the entity store mounted read-only and the tool API ``geotools``
  importable; the first reply without code is the answer; after ``step_budget`` replies with
  code the answer is ``budget_exhausted`` (not a refusal).

Every answer records what it cost in ``Answer.usage``: model calls, prompt and completion
tokens (from the endpoint's ``usage``; a cached reply counts what it cost when it was paid),
and in CI / agentic mode code runs and tool calls.

Either way the final reply is read by the task's rubric and answer format
(:func:`stsim.answers.parse_answer`) and scored like any other solver.  Tracking tasks are
multi-turn: the first user turn is the task prompt with step 0's readings, then one user turn
per further step, and each step's reply is that step's answer.

The system prompts (STARK Table 5, our wording) and the user turns come from
:func:`stsim.generators.chat_prompts.chat_plan`, the same function ``stsim export --format chat``
uses, so an exported conversation is exactly what this solver sends.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..answers import parse_answer, reading_spec
from ..generators.chat_prompts import CI_NO_CODE_TURN, MODES, SYSTEM_CI, SYSTEM_DA, chat_plan  # noqa: F401
from ..records import Answer, Task
from .chat_client import ChatClient, ChatConfig, ChatError, ChatReply, EndpointUnreachable, needs_api_key
from ..sandbox.isolation import Limits, Sandbox, SandboxError, require_isolation
from .base import SolverError, register_solver
from ..generators.chat_prompts import DEFAULT_STEP_BUDGET


_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.IGNORECASE | re.DOTALL)
_RESULTS = re.compile(r"RESULTS?[ _]?START", re.IGNORECASE)


def extract_code(reply: str) -> str | None:
    """The last fenced Python block of a reply, or ``None``."""
    blocks = code_blocks(reply)
    return blocks[-1] if blocks else None


def code_blocks(reply: str) -> list[str]:
    """Every fenced Python block of a reply (```` ```python ````, ```` ```py ```` or a bare
    ```` ``` ````), in order."""
    return [m.group("code") for m in _CODE.finditer(reply)]


def _add_usage(total: dict[str, int], got: ChatReply) -> None:
    """Count one model reply and its tokens (missing or non-integer counts add 0)."""
    total["model_calls"] = total.get("model_calls", 0) + 1
    for k in ("prompt_tokens", "completion_tokens"):
        v = (got.usage or {}).get(k)
        total[k] = total.get(k, 0) + (int(v) if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0)


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
        mode: ``"da"``, ``"ci"`` or ``"agentic"``.
        max_turns: model replies allowed per answer in CI mode before giving up.
        step_budget: agentic mode: model replies allowed per question (>= 1).
        max_steps: tracking steps asked (the rest are answered ``missing``); None = all.
        sandbox: the sandbox for CI code (default: :class:`Sandbox` with default limits).
    """

    threaded = True  # waits on the network: the runner solves tasks in threads

    def __init__(self, client: ChatClient, mode: str = "da", max_turns: int = 5,
                 max_steps: int | None = 10, sandbox: Sandbox | None = None, structured: bool = False,
                 step_budget: int = DEFAULT_STEP_BUDGET) -> None:
        if mode not in MODES:
            raise SolverError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
        if not isinstance(step_budget, int) or step_budget < 1:
            raise SolverError(f"--step-budget must be at least 1 (model replies per question), got {step_budget!r}")
        self.client, self.mode, self.max_turns, self.max_steps = client, mode, max_turns, max_steps
        self.step_budget = step_budget
        self._sandbox = sandbox
        self.structured = structured
        self.name = f"openai:{client.config.model}" + ("" if mode == "da" else f":{mode}")

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            if self.mode == "agentic":
                from .agentic import agentic_sandbox
                self._sandbox = agentic_sandbox()
            else:
                self._sandbox = Sandbox(Limits())
        return self._sandbox

    def close(self) -> None:
        """Close the cache and transcript files and the sandbox."""
        self.client.close()
        if self._sandbox is not None:
            self._sandbox.close()

    def _turn(self, messages: list[dict[str, str]], extra: dict[str, Any] | None = None,
              usage: dict[str, int] | None = None) -> ChatReply:
        """Get the final reply for the last user turn (running CI code as the model asks); a
        refusal, an empty or a tool-call-only reply ends the turn at once.  ``usage`` (updated
        in place) counts model calls, tokens and code runs."""
        usage = {} if usage is None else usage
        for _ in range(self.max_turns if self.mode == "ci" else 1):
            got = self.client.complete(messages, extra) if extra else self.client.complete(messages)
            _add_usage(usage, got)
            reply = got.text
            messages.append({"role": "assistant", "content": reply})
            if got.outcome != "ok" or self.mode == "da" or _RESULTS.search(reply):
                return got
            code = extract_code(reply)
            if code is None:
                feedback = CI_NO_CODE_TURN
            else:
                usage["code_runs"] = usage.get("code_runs", 0) + 1
                feedback = sandbox_feedback(self.sandbox.run(code))
            messages.append({"role": "user", "content": feedback})
        return got

    def _agentic(self, task: Task, messages: list[dict[str, str]]) -> Answer:
        """The agentic loop (module docstring; :mod:`stsim.solvers.agentic`): code replies run in
        the tool sandbox until a reply without code (the answer) or the step budget's end
        (``budget_exhausted``)."""
        from .agentic import cell_feedback, cell_program, join_code, tool_calls
        usage = {"model_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "code_runs": 0, "tool_calls": 0}
        for k in range(self.step_budget):
            got = self.client.complete(messages)
            _add_usage(usage, got)
            messages.append({"role": "assistant", "content": got.text})
            blocks = code_blocks(got.text) if got.outcome == "ok" else []
            if not blocks:  # final: an answer, a refusal, or an unusable reply
                a = self._parse(task, None, got)
                break
            res = self.sandbox.run(cell_program(join_code(blocks)))
            usage["code_runs"] += 1
            usage["tool_calls"] += tool_calls(res)
            messages.append({"role": "user", "content": cell_feedback(res, self.step_budget - k - 1)})
        else:
            a = Answer(task.id, None, "budget_exhausted", text=got.text,
                       detail=f"step budget of {self.step_budget} model replies used up without a final answer "
                              f"({usage['code_runs']} code runs, {usage['tool_calls']} tool calls)",
                       solver=self.name)
        a.usage = usage
        a.isolation = self.sandbox.isolation_label
        return a

    def _answer(self, task: Task, step: int | None, got: ChatReply, usage: dict[str, int] | None = None) -> Answer:
        a = self._parse(task, step, got)
        if self.mode == "ci":  # the model could run code: say how it was isolated
            a.isolation = self.sandbox.isolation_label
        a.usage = usage
        return a

    def _parse(self, task: Task, step: int | None, got: ChatReply) -> Answer:
        if got.outcome == "refusal":
            return Answer(task.id, step, "refusal", text=got.text, detail=got.detail, solver=self.name)
        if got.outcome != "ok":
            return Answer(task.id, step, "format_failure", text=got.text or None, detail=got.detail,
                          solver=self.name)
        return parse_answer(got.text, task_id=task.id, step=step, answer_format=task.answer_format,
                            rubric=task.meta.get("rubric", "stark"), spec=reading_spec(task),
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
        if self.mode == "agentic" and (task.steps or not task.family.startswith("geoqa.")):
            raise SolverError(f"--mode agentic: the tool API serves geoqa tasks only; task {task.id} is of "
                              f"family {task.family} (select geoqa families with --family)")
        plan = chat_plan(task, self.mode, None if not task.steps else self.max_steps, self.step_budget)
        messages = [{"role": "system", "content": plan.system}]
        if self.mode == "agentic":
            messages.append({"role": "user", "content": plan.turns[0].content})
            try:
                return [self._agentic(task, messages)]
            except EndpointUnreachable:
                raise
            except ChatError as exc:
                return [Answer(task.id, None, "missing", detail=f"request failed: {exc}", solver=self.name)]
        if not task.steps:
            messages.append({"role": "user", "content": plan.turns[0].content})
            extra = None
            if self.structured and self.mode == "da" and task.meta.get("answer_schema"):
                # OpenAI-compatible structured output: the JSON Schema of the task's answer type
                extra = {"response_format": {"type": "json_schema", "json_schema": {
                    "name": "answer", "strict": True, "schema": task.meta["answer_schema"]}}}
            try:
                usage: dict[str, int] = {}
                got = self._turn(messages, extra, usage)
                return [self._answer(task, None, got, usage)]
            except EndpointUnreachable:
                raise
            except ChatError as exc:
                return [Answer(task.id, None, "missing", detail=f"request failed: {exc}", solver=self.name)]
        out: list[Answer] = []
        for turn in plan.turns:
            if out and out[-1].status == "missing":
                out.append(Answer(task.id, turn.step, "missing", detail="an earlier step's request failed",
                                  solver=self.name))
                continue
            messages.append({"role": "user", "content": turn.content})
            try:
                usage = {}
                got = self._turn(messages, usage=usage)
                out.append(self._answer(task, turn.step, got, usage))
            except EndpointUnreachable:
                raise
            except ChatError as exc:
                out.append(Answer(task.id, turn.step, "missing", detail=f"request failed: {exc}", solver=self.name))
        out += [Answer(task.id, i, "missing", detail="step not asked (beyond max_steps)", solver=self.name)
                for i in plan.not_asked]
        return out


def _openai_factory(arg: str | None, *, base_url: str | None = None, mode: str = "da",
                    out_dir: str | Path | None = None, cache: str | Path | None = None,
                    temperature: float | None = 0.0, seed: int | None = 0, max_tokens: int | None = None,
                    timeout_s: float = 120.0, max_retries: int = 5, concurrency: int = 4,
                    api_key_env: str = "OPENAI_API_KEY", max_steps: int | None = 10,
                    max_turns: int = 5, sandbox_reuse: bool = True, isolation: str = "bwrap",
                    structured: bool = False, step_budget: int | None = None,
                    **_: Any) -> OpenAISolver:
    if not arg:
        raise SolverError("--solver openai:MODEL needs a model name")
    if mode not in MODES:
        raise SolverError(f"--mode {mode!r}: unknown; known: {', '.join(MODES)}")
    if step_budget is not None and mode != "agentic":
        raise SolverError(f"--step-budget is for --mode agentic (the geoqa tool tier), not --mode {mode}")
    budget = DEFAULT_STEP_BUDGET if step_budget is None else step_budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise SolverError(f"--step-budget must be at least 1 (model replies per question), got {budget!r}")
    if structured and mode != "da":
        raise SolverError(f"--structured is for direct-answer mode (--mode da), not --mode {mode}")
    if mode in ("ci", "agentic"):  # fail closed before the first request
        try:
            require_isolation(isolation)
        except (SandboxError, ValueError) as exc:
            raise SolverError(f"--solver openai:{arg} --mode {mode}: {exc}") from None
    if base_url is not None:
        from urllib.parse import urlparse
        u = urlparse(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise SolverError(f"--base-url {base_url!r}: not an http(s) URL; give the endpoint root, "
                              "e.g. http://127.0.0.1:8000/v1 or https://api.openai.com/v1")
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
    elif mode == "agentic":
        from ..geoqa.store import StoreError
        from .agentic import agentic_sandbox
        try:
            sandbox = agentic_sandbox(isolation, sandbox_reuse, max(1, concurrency))
        except (SandboxError, StoreError) as exc:
            raise SolverError(f"--solver openai:{arg} --mode agentic: {exc}") from None
    return OpenAISolver(ChatClient(cfg, cache_path, transcript), mode=mode, max_turns=max_turns,
                        max_steps=max_steps, sandbox=sandbox, structured=structured, step_budget=budget)


register_solver("openai", _openai_factory)
