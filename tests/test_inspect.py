"""Inspect AI integration, offline: `stsim export --format inspect` writes a task file; `inspect
eval` runs it with Inspect's mockllm model fed a mixed list of replies (right, wrong, malformed,
refusal), and the Inspect scores equal `stsim score` on the same replies, item by item and
family by family."""
from __future__ import annotations

import itertools
import json

import pytest

from stsim.cli import main

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai not installed (pip install 'stsim[inspect]')")

MAX_STEPS = 2


def _reply(kind, task, gold):
    if kind == "malformed":
        return "[RESULTS_START] somewhere over there [RESULTS_END]"
    if kind == "refusal":
        return "I'm sorry, I cannot help with that."
    if kind == "wrong":
        if isinstance(gold, list):
            gold = [g + 1.0 for g in gold]
        elif task["answer_format"] == "binary":
            gold = 1 - gold
        elif task["answer_format"] == "relation":
            gold = next(c for c in task["meta"]["answer_spec"]["choices"] if c != gold)
        else:
            gold = gold + 1.0
    text = gold if isinstance(gold, str) else json.dumps(gold)
    return f"Let me think.\n[RESULTS_START] {text} [RESULTS_END]"


def test_inspect_eval_scores_equal_stsim_score(tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    exp = tmp_path / "inspect"
    assert main(["export", "quickstart", "--n", "1", "--format", "inspect", "-o", str(exp)]) == 0
    more = tmp_path / "rel.jsonl"
    assert main(["generate", "stark-tier2", "--n", "2", "--family", "stark.relation.temporal*", "-o", str(more)]) == 0
    with open(exp / "tasks.jsonl", "a") as fh:  # a categorical family too: binary and a 13-way choice
        fh.write(more.read_text())
    tasks = [json.loads(l) for l in (exp / "tasks.jsonl").read_text().splitlines()]
    kinds = itertools.cycle(["right", "wrong", "malformed", "refusal", "right"])
    outputs = []
    for t in tasks:  # in dataset order: Inspect runs one sample at a time below
        golds = [s["answer"] for s in t["steps"][:MAX_STEPS]] if t["steps"] else [t["answer"]]
        outputs += [_reply(next(kinds), t, g) for g in golds]
    usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm counts tokens with tiktoken (a download)
    model = get_model("mockllm/model", custom_outputs=[
        ModelOutput.from_content(model="mockllm/model", content=c).model_copy(update={"usage": usage}) for c in outputs])
    monkeypatch.chdir(exp)  # Inspect reads a task file name as a glob relative to the working folder
    (log,) = inspect_eval("stsim_task.py", model=model, task_args={"max_steps": MAX_STEPS},
                          log_dir=str(tmp_path / "logs"), display="none", max_samples=1, max_connections=1)
    assert log.status == "success", log.error
    assert len(log.samples) == len(tasks) == 18

    # the replies each sample actually got, as an answers file for `stsim score`
    answers = tmp_path / "answers.jsonl"
    inspect_items = []
    with open(answers, "w") as fh:
        for s in log.samples:
            replies = [m.text for m in s.messages if m.role == "assistant"]
            assert s.messages[0].role == "system" and len(replies) == len(s.metadata["message_steps"])
            for step, text in zip(s.metadata["message_steps"], replies):
                fh.write(json.dumps({"task_id": s.id, "step": step, "text": text}) + "\n")
            inspect_items += s.scores["stsim_score"].metadata["items"]
    out = tmp_path / "scored"
    assert main(["score", str(exp / "tasks.jsonl"), str(answers), "--max-steps", str(MAX_STEPS), "--out", str(out)]) == 0
    ours = [json.loads(l) for l in (out / "scores.jsonl").read_text().splitlines()]
    key = lambda d: (d["task_id"], -1 if d["step"] is None else d["step"])  # noqa: E731

    def plain(d):  # `stsim score` also tags each item's outcome (correct / wrong / scored / ...)
        d = dict(d, extra={k: v for k, v in d.get("extra", {}).items() if k != "outcome"})
        return {k: v for k, v in d.items() if k != "extra" or v}
    assert sorted(map(plain, inspect_items), key=key) == sorted(map(plain, ours), key=key)
    statuses = {d["status"] for d in ours}
    assert {"ok", "format_failure", "refusal"} <= statuses
    assert any(d["error"] == 0.0 for d in ours) and any(d["correct"] == 1 for d in ours)
    assert any(d["correct"] == 0 and d["status"] == "ok" for d in ours)

    metrics = log.results.scores[0].metrics
    summary = json.loads((out / "summary.json").read_text())["families"]
    compared = 0
    for fam, row in summary.items():
        for k in ("n", "failures", "trimmed_rmse", "rmse", "median_error", "accuracy"):
            if k in row and row[k] is not None:
                assert metrics[f"{fam}/{k}"].value == pytest.approx(row[k], abs=1e-12), (fam, k)
                compared += 1
    assert compared >= 3 * len(summary)


def test_samples_carry_the_live_solvers_messages():
    from stsim.benchmarks.inspect_task import samples
    from stsim.benchmarks.suites import get_suite
    from stsim.generators.chat_prompts import chat_plan
    tasks = list(get_suite("quickstart").tasks(n=1, only="stark.tracking.bearing"))
    (s,) = samples(tasks, max_steps=3)
    plan = chat_plan(tasks[0], "da", 3)
    assert [m.text for m in s.input] == [plan.system, plan.turns[0].content]
    assert s.metadata["turns"] == [t.content for t in plan.turns] and s.metadata["message_steps"] == [0, 1, 2]
    assert json.loads(s.target) == [st.answer for st in tasks[0].steps]
    with pytest.raises(ValueError, match="direct-answer"):
        samples(tasks, mode="ci")


def test_registered_task_in_the_package(monkeypatch):
    """`inspect eval stsim/benchmarks/inspect_task.py@stsim_suite -T suite=...`: the package's
    @task is found by Inspect's file scan and scores a right reply as exact."""
    from pathlib import Path

    from inspect_ai import eval as inspect_eval
    from inspect_ai._eval.list import list_tasks
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from stsim.benchmarks.suites import get_suite
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    assert [t.name for t in list_tasks("stsim/benchmarks/inspect_task.py")] == ["stsim_suite"]
    (task,) = get_suite("quickstart").tasks(n=1, only="stark.localization.range")
    usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    reply = f"[RESULTS_START] {json.dumps(task.answer)} [RESULTS_END]"
    model = get_model("mockllm/model", custom_outputs=[
        ModelOutput.from_content(model="mockllm/model", content=reply).model_copy(update={"usage": usage})])
    (log,) = inspect_eval("stsim/benchmarks/inspect_task.py@stsim_suite", model=model, display="none",
                          task_args={"suite": "quickstart", "n": 1, "family": "stark.localization.range"},
                          log_dir=str(root / ".pytest-inspect-logs"), log_format="json")
    import shutil
    shutil.rmtree(root / ".pytest-inspect-logs", ignore_errors=True)
    assert log.status == "success", log.error
    (s,) = log.samples
    assert s.id == task.id and s.scores["stsim_score"].value == {"correct": None, "error": 0.0, "failures": 0}
