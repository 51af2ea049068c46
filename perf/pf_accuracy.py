"""Accuracy of the proximity and ToA particle-filter default trackers (issue 20): Euclidean
trimmed RMSE (10 % each side, absolute error for the temporal family) over the first 10 steps /
all steps of ``--n`` generated tasks per family, with the ms per task; the figures of
docs/stark-tier1.md's particle-filter table (30 tasks of suite seed 7).  Use it before and after
a change to the filters: the errors should move only within Monte-Carlo noise.

Run:  python perf/pf_accuracy.py [--n 30] [--seed 7] [--family ...]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from stsim.baselines import BASELINES
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse

FAMILIES = ["stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=30, help="tasks per family")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--family", nargs="*", choices=FAMILIES)
    args = ap.parse_args(argv)
    print(f"{'family':34s} {'tRMSE@10':>9s} {'tRMSE@all':>9s} {'ms/task':>8s}")
    for fam in args.family or FAMILIES:
        e10, eall, dt = [], [], 0.0
        for i in range(args.n):
            task = generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed)
            gold = np.array([s.answer for s in task.steps], float)
            t = time.perf_counter()
            est = np.array([a.value for a in BASELINES[fam](task)], float)
            dt += time.perf_counter() - t
            d = est - gold
            e = np.abs(d) if d.ndim == 1 else np.hypot(d[:, 0], d[:, 1])   # x-y-t: position
            e10 += e[:10].tolist()
            eall += e.tolist()
        print(f"{fam:34s} {trimmed_rmse(e10):9.4f} {trimmed_rmse(eall):9.4f} "
              f"{1000 * dt / args.n:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
