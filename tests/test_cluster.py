"""`--cluster` on Dask distributed (issue 19): a LocalCluster of 2 worker processes writes the
bytes of the local run, survives a killed worker, reports a chunk that keeps failing, bounds
live-model requests cluster-wide and shares the response cache.

One LocalCluster per module (starting one costs seconds); runs reach it as ``tcp://ADDRESS``.
"""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="stsim[distributed] (dask[distributed]) not installed")

from stsim.benchmarks import cluster as clustermod  # noqa: E402
from stsim.benchmarks.cluster import ChunkFailed, ClusterError, check_cluster_spec  # noqa: E402
from stsim.benchmarks.suites import SUITES, Suite, register_suite  # noqa: E402
from stsim.cli import main  # noqa: E402

from .fake_openai import FakeChatServer, Slow  # noqa: E402

#: tier-1 (a localisation and a tracking family), tier-2, QSTR and cardinal families
MIXED = {"stark.localization.range": 5, "stark.tracking.bearing": 4, "stark.relation.spatial": 5,
         "stark.relation.temporal": 3, "qstr.rcc8.converse": 4, "qstr.ia.ct": 4, "cardinal.large": 5}
FILES = ("tasks.jsonl", "answers.jsonl", "scores.jsonl")


def _mixed() -> str:
    if "test-mixed" not in SUITES:
        register_suite(Suite("test-mixed", "tier-1, tier-2, QSTR and cardinal (tests)", dict(MIXED)))
    return "test-mixed"


@pytest.fixture(scope="module")
def address():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  dashboard_address=":0") as lc:
        yield lc.scheduler_address


def _summary(out: Path, timing: bool = True) -> dict:
    s = json.loads((out / "summary.json").read_text().replace(str(out), "OUT"))  # analyses name their files
    if timing:
        s.pop("wall_s")  # the one timing field
    return s


def _same_run(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert _summary(a) == _summary(b)
    for name in ("cardinal/report.json", "cardinal/confusion.csv"):
        assert (a / name).exists() == (b / name).exists(), name
        if (a / name).exists():
            assert ((a / name).read_text().replace(str(a), "OUT")
                    == (b / name).read_text().replace(str(b), "OUT")), name


def test_cluster_spec_is_checked():
    for good in ("local:1", "local:8", "tcp://10.0.0.5:8786", "tcp://sched.example:8786"):
        check_cluster_spec(good)
    for bad in ("local:0", "local", "local:x", "8786", "tcp://host", "http://host:8786", ""):
        with pytest.raises(ClusterError):
            check_cluster_spec(bad)


def test_bad_cluster_value_is_exit_2(tmp_path, capsys):
    assert main(["run", "quickstart", "--n", "1", "--cluster", "local:0", "--out", str(tmp_path / "o")]) == 2
    assert "local:N needs N >= 1" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main(["run", "quickstart", "--n", "1", "--cluster", "local:2", "--workers", "2",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--workers is only for live models" in capsys.readouterr().err


def test_mixed_suite_same_bytes_as_local_run(tmp_path, address):
    suite = _mixed()
    assert main(["run", suite, "--out", str(tmp_path / "local"), "--quiet"]) == 0
    assert main(["run", suite, "--out", str(tmp_path / "dask"), "--quiet", "--cluster", address,
                 "--chunk-size", "3"]) == 0
    _same_run(tmp_path / "local", tmp_path / "dask")
    assert (tmp_path / "dask" / "cardinal" / "report.json").exists()
    tasks = (tmp_path / "dask" / "tasks.jsonl").read_text().splitlines()
    assert [json.loads(l)["family"] for l in tasks] == [f for f, k in MIXED.items() for _ in range(k)]
    # score: the same scores and summary as scoring here
    local = tmp_path / "local"
    assert main(["score", str(local / "tasks.jsonl"), str(local / "answers.jsonl"), "--out", str(tmp_path / "s1")]) == 0
    assert main(["score", str(local / "tasks.jsonl"), str(local / "answers.jsonl"), "--out", str(tmp_path / "s2"),
                 "--cluster", address]) == 0
    assert (tmp_path / "s1" / "scores.jsonl").read_bytes() == (tmp_path / "s2" / "scores.jsonl").read_bytes()
    assert _summary(tmp_path / "s1", timing=False) == _summary(tmp_path / "s2", timing=False)
    # generate: the same file as the local generator
    assert main(["generate", suite, "-o", str(tmp_path / "g.jsonl"), "--cluster", address, "--chunk-size", "4"]) == 0
    assert (tmp_path / "g.jsonl").read_bytes() == (tmp_path / "local" / "tasks.jsonl").read_bytes()


def test_data_suite_ships_the_loaded_tasks(tmp_path, address, stark_data):
    """stark-published read here from the released files; workers get the tasks, not the files."""
    args = ["run", "stark-published", "--data", str(stark_data), "--n", "1", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "local")]) == 0
    assert main(args + ["--out", str(tmp_path / "dask"), "--cluster", address, "--chunk-size", "5"]) == 0
    _same_run(tmp_path / "local", tmp_path / "dask")
    assert _summary(tmp_path / "dask")["n_tasks"] > 10


def test_killed_worker_loses_and_duplicates_nothing(tmp_path, address):
    """Answers come from a slow loopback model (0.15 s a request) so the run is still going when
    one worker process is killed; its chunks are rerun elsewhere and every task is written once."""
    suite = _mixed()
    reply = "[RESULTS_START] [1.0, 2.0] [RESULTS_END]"
    killed = {}
    with FakeChatServer(lambda body, n: (200, Slow(0.15, reply))) as srv:
        base = ["run", suite, "--family", "stark.localization.range", "--n", "20", "--quiet",
                "--solver", "openai:fake", "--base-url", srv.url, "--workers", "4"]
        assert main(base + ["--out", str(tmp_path / "local")]) == 0
        out = tmp_path / "dask"

        def kill_one():
            client = distributed.Client(address, timeout="10s")
            try:
                deadline = time.monotonic() + 30
                answers = out / "answers.jsonl"
                while time.monotonic() < deadline:  # the first chunks are in: kill a worker mid-run
                    if answers.exists() and answers.read_text().count("\n") >= 2:
                        break
                    time.sleep(0.02)
                pids = client.run(os.getpid)
                addr = sorted(pids)[0]
                killed["done_before"] = answers.read_text().count("\n")
                os.kill(pids[addr], signal.SIGKILL)
                killed["addr"] = addr
            finally:
                client.close()
        t = threading.Thread(target=kill_one)
        t.start()
        t0 = time.monotonic()
        assert main(base + ["--out", str(out), "--cluster", address, "--chunk-size", "2"]) == 0
        killed["run_s"] = time.monotonic() - t0
        t.join()
    assert "addr" in killed and 2 <= killed["done_before"] < 20, killed  # killed mid-run
    print(killed)
    _same_run(tmp_path / "local", out)
    ids = [json.loads(l)["task_id"] for l in (out / "answers.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 20


def test_chunk_that_keeps_failing_is_named_and_the_rest_kept(tmp_path, address, capsys, monkeypatch):
    """Index 7 of cardinal.core is made to raise on the worker (the chunk is shipped with a
    key the family does not have); its chunk fails after the retries, the others are written."""
    suite = "test-bad-index"
    if suite not in SUITES:
        # cardinal.core is exhaustive: a count past its size is capped by task_keys, so build the
        # keys by hand through a suite whose task_keys we replace
        register_suite(Suite(suite, "a chunk with an index outside an exhaustive family (tests)",
                             {"qstr.rcc8.converse": 6}))
    real_keys = Suite.task_keys

    def keys(self, n=None, only=None):
        got = real_keys(self, n, only)
        if self.name == suite:
            got[3] = ("qstr.rcc8.converse", 10**6)  # outside 0..size-1: generate_task raises
        return got
    monkeypatch.setattr(Suite, "task_keys", keys)
    out = tmp_path / "o"
    assert main(["run", suite, "--out", str(out), "--quiet", "--cluster", address, "--chunk-size", "2"]) == 1
    err = capsys.readouterr().err
    assert "test-bad-index/qstr.rcc8.converse/000002" in err and "/1000000" in err
    assert "has exactly" in err  # generate_task's own error text
    ids = [json.loads(l)["id"] for l in (out / "tasks.jsonl").read_text().splitlines()]
    assert ids == [f"{suite}/qstr.rcc8.converse/{i:06d}" for i in (0, 1, 4, 5)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed_tasks"] == [f"{suite}/qstr.rcc8.converse/000002", f"{suite}/qstr.rcc8.converse/1000000"]
    assert summary["n_tasks"] == 4


def test_interrupt_cancels_the_chunks_and_exits_130(tmp_path, address, monkeypatch, capsys):
    """Ctrl-C while results stream in: exit 130, files kept, nothing left on the cluster."""
    real = clustermod.ChunkStream.__iter__

    def interrupted(self):
        for k, item in enumerate(real(self)):
            if k == 3:
                raise KeyboardInterrupt
            yield item
    monkeypatch.setattr(clustermod.ChunkStream, "__iter__", interrupted)
    out = tmp_path / "o"
    assert main(["run", _mixed(), "--out", str(out), "--quiet", "--cluster", address, "--chunk-size", "2"]) == 130
    assert "files written so far are kept" in capsys.readouterr().err
    assert (out / "tasks.jsonl").read_text().count("\n") == 3
    assert json.loads((out / "summary.json").read_text())["interrupted"] is True
    with distributed.Client(address, timeout="10s") as c:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            left = c.run_on_scheduler(lambda dask_scheduler: [k for k in dask_scheduler.tasks
                                                              if str(k).startswith("stsim-")])
            if not left:
                break
            time.sleep(0.1)
        assert left == []


def test_live_model_global_concurrency_and_shared_cache(tmp_path, address):
    """--workers 2 bounds the requests in flight across both worker processes (each chunk runs
    2 threads, so 4 would be in flight without the cluster-wide semaphore); a second run into the
    same folder reads the one cache file and sends nothing."""
    reply = "[RESULTS_START] [3.0, 4.0] [RESULTS_END]"
    with FakeChatServer(lambda body, n: (200, Slow(0.1, reply))) as srv:
        args = ["run", _mixed(), "--family", "stark.localization.range", "--n", "12", "--quiet",
                "--solver", "openai:fake", "--base-url", srv.url, "--workers", "2",
                "--cluster", address, "--chunk-size", "3"]
        out = tmp_path / "o"
        assert main(args + ["--out", str(out)]) == 0
        sent = len(srv.requests)
        assert sent == 12 and srv.max_in_flight == 2
        cache = (out / "llm_cache.jsonl").read_text().splitlines()
        assert len(cache) == 12 and len({json.loads(l)["key"] for l in cache}) == 12
        first = (out / "answers.jsonl").read_bytes()
        trans = [json.loads(l) for l in (out / "transcript.jsonl").read_text().splitlines()]
        assert len(trans) == 12 and not any(r["cached"] for r in trans)  # one line per request
        assert main(args + ["--out", str(out)]) == 0
        assert len(srv.requests) == sent  # resumed: every reply from the cache
        assert (out / "answers.jsonl").read_bytes() == first
        assert len((out / "llm_cache.jsonl").read_text().splitlines()) == 12
        trans = [json.loads(l) for l in (out / "transcript.jsonl").read_text().splitlines()]
        assert len(trans) == 24 and all(r["cached"] for r in trans[12:])  # the resume: cache hits
