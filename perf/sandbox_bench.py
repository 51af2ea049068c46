"""Sandbox throughput: sandboxed runs per second of a trivial numpy solver, and the median
overhead per run against a plain ``python -c`` subprocess doing the same work, in one run.

    python perf/sandbox_bench.py [--runs N] [--warm W] [--parallel P] [--reuse]
                                 [--isolation auto|bwrap|process]

``--reuse``: zygote sandboxes (one pre-imported interpreter per sandbox forks a child per job).

Issue 5 target: at least 10 sandboxed runs per second on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from stsim.sandbox.isolation import Limits, Sandbox

PROGRAM = "import numpy as np\ndef solver():\n    return np.array([1.0, 2.0]) * 2\n"
PLAIN = "import numpy as np; print((np.array([1.0, 2.0]) * 2).tolist())"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--warm", type=int, default=2, help="interpreters started ahead (default 2)")
    ap.add_argument("--isolation", default="auto")
    ap.add_argument("--parallel", type=int, default=1, help="threads submitting runs (default 1)")
    ap.add_argument("--reuse", action="store_true", help="zygote sandboxes (fork per job)")
    a = ap.parse_args()
    load = os.getloadavg()[0]

    plain = []
    t0 = time.perf_counter()
    for _ in range(a.runs):
        s = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", PLAIN], check=True, capture_output=True)
        plain.append(time.perf_counter() - s)
    plain_total = time.perf_counter() - t0

    with Sandbox(Limits(wall_s=30), isolation=a.isolation, warm=a.warm, reuse=a.reuse) as sb:
        sb.run(PROGRAM)  # start-up of the pool is not counted
        walls, statuses, isos = [], set(), set()

        def one(_):
            s = time.perf_counter()
            r = sb.run(PROGRAM)
            walls.append(time.perf_counter() - s)
            statuses.add(r.status)
            isos.add(r.isolation)
        t0 = time.perf_counter()
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(a.parallel) as pool:
            list(pool.map(one, range(a.runs)))
        total = time.perf_counter() - t0
        iso = ",".join(sorted(isos))
    assert statuses == {"ok"}, statuses
    print(f"isolation {iso}, warm {a.warm}, parallel {a.parallel}, {a.runs} runs each, "
          f"{os.cpu_count()} cores, load average {load:.2f} at start")
    print(f"sandboxed : {a.runs / total:6.2f} runs/s   median {statistics.median(walls) * 1000:7.1f} ms per run")
    print(f"plain -c  : {a.runs / plain_total:6.2f} runs/s   median {statistics.median(plain) * 1000:7.1f} ms per run")
    print(f"median overhead per run: {(statistics.median(walls) - statistics.median(plain)) * 1000:+.1f} ms")



if __name__ == "__main__":
    main()
