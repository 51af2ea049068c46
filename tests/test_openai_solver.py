"""The chat-completions client and the openai:MODEL solver against a scripted server on
127.0.0.1: retries on 429 / 5xx / slow / malformed replies, the cache, the transcript, DA and
CI modes end to end, and a run killed midway that resumes without re-sending a paid request."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.fake_openai import FakeChatServer, Slow
from stsim.solvers.chat_client import ChatClient, ChatConfig, ChatError, cache_key
from stsim.solvers.live_model import SYSTEM_CI, SYSTEM_DA, OpenAISolver, extract_code
from stsim.sandbox.isolation import Limits, Sandbox
from stsim.benchmarks.suites import get_suite
from stsim.cli import main

MSG = [{"role": "user", "content": "hello"}]


def test_retries_on_429_500_malformed_and_slow_then_caches(tmp_path):
    script = [(429, "busy"), (500, "oops"), (200, b"{not json"), (200, b'{"choices": "none"}'),
              (200, Slow(1.0, "late")), (200, "[RESULTS_START] [1, 2] [RESULTS_END]")]
    slept = []
    with FakeChatServer(lambda body, n: script[n]) as srv:
        cfg = ChatConfig("m", srv.url, timeout_s=0.4, max_retries=6, backoff_s=0.01, temperature=0.5, seed=7)
        c = ChatClient(cfg, tmp_path / "cache.jsonl", tmp_path / "t.jsonl", sleep=slept.append)
        r = c.complete(MSG)
        assert r.text.endswith("[RESULTS_END]") and not r.cached and r.usage["prompt_tokens"] == 11
        assert len(srv.requests) == 6
        assert srv.requests[0] == {"model": "m", "messages": MSG, "temperature": 0.5, "seed": 7}
        # 429 carries Retry-After: 0; then doubling from 0.01 s
        assert slept == [0.0, 0.02, 0.04, 0.08, 0.16]
        again = c.complete(MSG)
        assert again.cached and again.text == r.text and len(srv.requests) == 6
        c.close()
        # a new client on the same cache file pays nothing either
        c2 = ChatClient(cfg, tmp_path / "cache.jsonl")
        assert c2.complete(MSG).cached and len(srv.requests) == 6
    lines = [json.loads(l) for l in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [l.get("status") for l in lines[:6]] == [429, 500, 200, 200, None, 200]
    assert "malformed" in lines[2]["error"] and "malformed" in lines[3]["error"]
    assert "timed out" in lines[4]["error"]
    assert lines[5]["text"] == r.text and lines[5]["latency_s"] >= 0 and lines[6]["cached"] is True
    assert all(l["key"] == cache_key("m", cfg.params(), MSG) for l in lines)


def test_non_retryable_status_and_exhausted_retries(tmp_path):
    with FakeChatServer(lambda body, n: (401, "bad key")) as srv:
        c = ChatClient(ChatConfig("m", srv.url, max_retries=3), sleep=lambda s: None)
        with pytest.raises(ChatError, match="HTTP 401"):
            c.complete(MSG)
        assert len(srv.requests) == 1
    with FakeChatServer(lambda body, n: (503, "down")) as srv:
        c = ChatClient(ChatConfig("m", srv.url, max_retries=2), sleep=lambda s: None)
        with pytest.raises(ChatError, match="3 attempts"):
            c.complete(MSG)
        assert len(srv.requests) == 3


def test_concurrency_is_bounded():
    from concurrent.futures import ThreadPoolExecutor
    with FakeChatServer(lambda body, n: (200, Slow(0.2, "ok"))) as srv:
        c = ChatClient(ChatConfig("m", srv.url, concurrency=2))
        with ThreadPoolExecutor(6) as pool:
            texts = list(pool.map(lambda i: c.complete([{"role": "user", "content": str(i)}]).text, range(6)))
        assert texts == ["ok"] * 6 and len(srv.requests) == 6
        assert srv.max_in_flight == 2


def _oracle(tasks):
    """Reply with each item's gold (what a perfect model would say), found from the conversation."""
    by_prompt = {t.prompt: t for t in tasks}

    def reply(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        task = next(t for p, t in by_prompt.items() if users[0].startswith(p))
        gold = task.steps[len(users) - 1].answer if task.steps else task.answer
        return f"Thinking.\n[RESULTS_START] {json.dumps(gold)} [RESULTS_END]"
    return reply


def test_da_suite_end_to_end_with_flaky_server(tmp_path):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    reply = _oracle(tasks)

    def script(body, n):
        if n % 7 == 3:
            return 429, "slow down"
        if n % 11 == 5:
            return 500, "internal"
        return 200, reply(body)
    out = tmp_path / "run"
    with FakeChatServer(script) as srv:
        assert main(["run", "quickstart", "--n", "1", "--solver", "openai:fake-1", "--base-url", srv.url,
                     "--out", str(out), "--quiet", "--workers", "3", "--max-steps", "3"]) == 0
        bodies = srv.requests
    summary = json.loads((out / "summary.json").read_text())
    for fam, row in summary["families"].items():
        assert row["failures"] == 0, (fam, row)
        assert row["rmse"] < 1e-9, (fam, row)
    assert all(b["messages"][0] == {"role": "system", "content": SYSTEM_DA} for b in bodies)
    trk = [b for b in bodies if len(b["messages"]) == 6]  # third step of a tracking task: sys+3 user+2 asst
    assert len(trk) >= 7 and [m["role"] for m in trk[0]["messages"]] == ["system", "user", "assistant"] * 1 + \
        ["user", "assistant", "user"]
    transcript = (out / "transcript.jsonl").read_text().splitlines()
    assert len(transcript) == len(bodies)  # one line per HTTP attempt, none cached
    n_items = 7 + 7 * 3
    assert sum(1 for l in transcript if json.loads(l).get("text")) == n_items


def test_ci_mode_runs_code_in_the_sandbox_and_feeds_output_back(tmp_path):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    loc = next(t for t in tasks if t.family == "stark.localization.range")
    trk = next(t for t in tasks if t.family == "stark.tracking.bearing")

    def script(body, n):
        msgs = body["messages"]
        last = msgs[-1]["content"]
        if "solver() returned: " in last:
            value = last.split("solver() returned: ")[1].strip()
            return 200, f"[RESULTS_START] {value} [RESULTS_END]"
        if "failed (timeout)" in last:
            return 200, "[RESULTS_START] [0, 0] [RESULTS_END]"
        k = sum(m["role"] == "user" for m in msgs)
        if k > 1:  # a new tracking step (feedback turns were answered above): a hanging program
            return 200, "Let me compute.\n```python\ndef solver():\n    while True:\n        pass\n```"
        return 200, ("Let me compute.\n```python\nimport numpy as np\ndef solver():\n"
                     f"    print('sum of pairs', {k})\n    return np.array([{k}.5, 2.25])\n```")
    with FakeChatServer(script) as srv, Sandbox(Limits(wall_s=3, cpu_s=2)) as sb:
        client = ChatClient(ChatConfig("fake-ci", srv.url), transcript_path=tmp_path / "t.jsonl")
        solver = OpenAISolver(client, mode="ci", max_steps=2, sandbox=sb)
        (a,) = solver.solve(loc)
        assert a.status == "ok" and a.value == [1.5, 2.25]
        second = srv.requests[1]["messages"]
        assert second[0]["content"] == SYSTEM_CI
        assert "Printed output:\nsum of pairs 1" in second[-1]["content"]
        steps = solver.solve(trk)
        assert [s.status for s in steps[:2]] == ["ok", "ok"] and steps[0].value == [1.5, 2.25]
        assert steps[1].value == [0.0, 0.0]  # the model's answer after being told of the timeout
        assert {s.status for s in steps[2:]} == {"missing"}
        assert any("The run failed (timeout)" in m["content"] for m in srv.requests[-1]["messages"])
    assert extract_code("no code here") is None


def test_ci_suite_end_to_end_through_the_cli(tmp_path):
    """A CI-mode model that always computes in code: reply 1 sends a program returning the gold,
    reply 2 repeats what the sandbox reported.  Every item must come back exact."""
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    oracle = _oracle(tasks)

    def script(body, n):
        last = body["messages"][-1]["content"]
        if "solver() returned: " in last:
            return 200, "[RESULTS_START] " + last.split("solver() returned: ")[1].strip() + " [RESULTS_END]"
        body = dict(body, messages=[m for m in body["messages"] if m["role"] == "user"
                                    and not m["content"].startswith("Printed") and "solver()" not in m["content"]])
        gold = oracle(body).split("[RESULTS_START]")[1].split("[RESULTS_END]")[0].strip()
        return 200, f"```python\nimport numpy as np\ndef solver():\n    print('ok')\n    return np.array({gold})\n```"
    out = tmp_path / "ci"
    with FakeChatServer(script) as srv:
        assert main(["run", "quickstart", "--n", "1", "--solver", "openai:fake-ci", "--mode", "ci",
                     "--base-url", srv.url, "--out", str(out), "--quiet", "--workers", "2", "--max-steps", "1",
                     "--sandbox", "zygote"]) == 0
        assert all(b["messages"][0]["content"] == SYSTEM_CI for b in srv.requests)
    summary = json.loads((out / "summary.json").read_text())
    for fam, row in summary["families"].items():
        assert row["failures"] == 0 and row["rmse"] < 1e-9, (fam, row)


def test_killed_run_resumes_without_resending(tmp_path):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    reply = _oracle(tasks)
    out = tmp_path / "run"
    cache = out / "llm_cache.jsonl"
    with FakeChatServer(lambda body, n: (200, Slow(0.08, reply(body)))) as srv:
        cmd = [sys.executable, "-m", "stsim.cli", "run", "quickstart", "--n", "1", "--solver", "openai:fake",
               "--base-url", srv.url, "--out", str(out), "--quiet", "--max-steps", "2"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not cache.exists() or len(cache.read_text().splitlines()) < 8):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        paid = {json.loads(l)["key"] for l in cache.read_text().splitlines() if l.endswith("}")}
        first_run = len(srv.requests)
        assert 8 <= len(paid) < 21  # killed midway (7 + 7 x 2 items in all)
        assert subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode == 0
        keys = [cache_key(b["model"], {k: b[k] for k in ("temperature", "seed") if k in b}, b["messages"])
                for b in srv.requests]
    resent = [k for k in keys[first_run:] if k in paid]
    assert resent == []
    assert len(keys) - len(set(keys)) <= 1  # at most the one request in flight at the kill
    summary = json.loads((out / "summary.json").read_text())
    assert all(r["failures"] == 0 for r in summary["families"].values())
