"""Sandbox throughput: sandboxed runs per second of a small numpy solver in the default mode
(bubblewrap namespaces, zygote forking a child per run from a numpy-importing template), next
to one plain ``python -c`` subprocess per sample doing the same work with no isolation at all
(the HumanEval-style reference), measured in the same run.

    python perf/sandbox_bench.py [--runs N] [--warm W] [--parallel P] [--fresh]
                                 [--isolation bwrap|process]

``--fresh``: a fresh sandbox (bubblewrap + interpreter + numpy import) per run instead.

Issue 12 target: at least 10 sandboxed runs per second on 2 cores in the default mode.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from stsim.sandbox.isolation import Limits, Sandbox

PROGRAM = "import numpy as np\ndef solver():\n    return np.array([1.0, 2.0]) * 2\n"
PLAIN = "import numpy as np; print((np.array([1.0, 2.0]) * 2).tolist())"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--warm", type=int, default=2, help="zygotes (or interpreters) started ahead (default 2)")
    ap.add_argument("--isolation", default="bwrap", choices=("bwrap", "process"))
    ap.add_argument("--parallel", type=int, default=1, help="threads submitting runs (default 1)")
    ap.add_argument("--fresh", action="store_true", help="a fresh sandbox per run (not the default)")
    a = ap.parse_args()
    load = os.getloadavg()[0]

    plain = []
    t0 = time.perf_counter()
    for _ in range(a.runs):
        s = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", PLAIN], check=True, capture_output=True)
        plain.append(time.perf_counter() - s)
    plain_total = time.perf_counter() - t0

    with Sandbox(Limits(wall_s=30), isolation=a.isolation, warm=a.warm, reuse=not a.fresh) as sb:
        sb.run(PROGRAM)  # start-up of the pool is not counted
        walls, statuses, isos = [], set(), set()

        def one(_):
            s = time.perf_counter()
            r = sb.run(PROGRAM)
            walls.append(time.perf_counter() - s)
            statuses.add(r.status)
            isos.add(r.isolation)
        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.parallel) as pool:
            list(pool.map(one, range(a.runs)))
        total = time.perf_counter() - t0
        iso = ",".join(sorted(isos))
    assert statuses == {"ok"}, statuses
    rate, ref = a.runs / total, a.runs / plain_total
    print(f"isolation {iso}, warm {a.warm}, parallel {a.parallel}, {a.runs} runs each, "
          f"{os.cpu_count()} cores, load average {load:.2f} at start")
    print(f"sandboxed : {rate:6.2f} runs/s   median {statistics.median(walls) * 1000:7.1f} ms per run")
    print(f"plain -c  : {ref:6.2f} runs/s   median {statistics.median(plain) * 1000:7.1f} ms per run")
    print(f"ratio sandboxed / plain: {rate / ref:.1f}x   target >= 10 runs/s: {'met' if rate >= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
