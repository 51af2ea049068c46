"""Scaling of ``--cluster`` (issue 19): tasks per second of the plain local run, the local
``--workers 2`` process pool, and Dask LocalClusters of 1 and 2 worker processes, all measured in
this one process on the same tasks, for a CPU-bound suite (STARK tier-1 families, first-principle
baselines) and for a sandboxed code solver (``code:FILE.py``, one sandbox per task).

    python perf/bench_distributed.py [--n N] [--code-n M] [--chunk-size K] [--repeat R]

The clusters are started (and warmed by a small run) before timing, so the rates are the
steady state; the start-up cost is printed separately.  The settings are timed in interleaved
rounds (``--repeat``) and the best rate of each is shown, so a change of machine load during
the run hits every setting alike; the load average is printed.  Labelled "local cluster, 2 cores": on
this machine the ratio against the plain local run is the result, not the absolute figure
(docs/distributed.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from stsim.benchmarks.runner import run

PROGRAM = "import numpy as np\ndef solver(inputs):\n    return (np.array([1.0, 2.0]) * 2).tolist()\n"


def timed(label: str, n_expected: int | None, **kw) -> float:
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        s = run(out_dir=Path(d) / "o", progress=False, **kw)
        dt = time.perf_counter() - t0
    if n_expected is not None and s["n_tasks"] != n_expected:
        raise SystemExit(f"{label}: {s['n_tasks']} tasks, expected {n_expected}")
    return s["n_tasks"] / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="tasks per tier-1 family (14 families; default 12)")
    ap.add_argument("--code-n", type=int, default=40, help="tasks for the sandboxed code solver (default 40)")
    ap.add_argument("--chunk-size", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=2,
                    help="rounds over all settings, interleaved; the best rate of each is shown (default 2)")
    a = ap.parse_args()
    from distributed import LocalCluster

    tmp = Path(tempfile.mkdtemp())
    prog = tmp / "solver.py"
    prog.write_text(PROGRAM)
    cases = [
        ("CPU-bound: quickstart (STARK tier-1 baselines)",
         dict(suite_name="quickstart", solver_spec="baseline", n=a.n), 14 * a.n),
        ("sandboxed code solver: code:solver.py on stark.localization.range",
         dict(suite_name="quickstart", solver_spec=f"code:{prog}", n=a.code_n,
              only="stark.localization.range"), a.code_n),
    ]
    clusters = {}
    for k in (1, 2):
        t0 = time.perf_counter()
        lc = LocalCluster(n_workers=k, threads_per_worker=1, processes=True, dashboard_address=":0")
        clusters[k] = lc
        warm = dict(cases[0][1], n=1)
        timed("warm-up", None, cluster=lc.scheduler_address, **warm)
        print(f"LocalCluster of {k} worker process(es): started and warmed in {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
    timed("warm-up", None, **dict(cases[0][1], n=1))
    print(f"local cluster, 2 cores (os.cpu_count() = {os.cpu_count()}, load average at start "
          f"{os.getloadavg()[0]:.1f}); tasks/s, ratio against the plain local run measured just before")
    print(f"{'case':68s} {'setting':22s} {'tasks/s':>8s} {'ratio':>6s}")
    try:
        for label, kw, n in cases:
            settings = [("plain local run", {}), ("local --workers 2", {"workers": 2})]
            settings += [(f"--cluster local:{k}", {"cluster": lc.scheduler_address, "chunk_size": a.chunk_size})
                         for k, lc in clusters.items()]
            best = {name: 0.0 for name, _ in settings}
            for _ in range(max(1, a.repeat)):  # interleaved, so a change of machine load hits all
                for name, extra in settings:
                    best[name] = max(best[name], timed(label, n, **extra, **kw))
            base = best["plain local run"]
            for name, _ in settings:
                print(f"{label:68s} {name:22s} {best[name]:8.1f} {best[name] / base:6.2f}")
            print(f"(load average now {os.getloadavg()[0]:.1f})")
    finally:
        for lc in clusters.values():
            lc.close()


if __name__ == "__main__":
    main()
