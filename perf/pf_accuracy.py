"""Accuracy of the proximity and ToA particle-filter default trackers (issue 20): trimmed RMSE
(10 % each side) of the answer format's per-item error (``perf/_common.py``: Euclidean;
absolute for the temporal family; the norm of (dx, dy, dt) for x-y-t, as ``perf/bayes_floor.py``
scores it; before 2026-12-01 this script scored x-y-t by its position only) over the first 10
steps / all steps of ``--n`` generated tasks per family, with the CPU ms per task (after one
untimed warm-up task); the figures of
docs/stark-tier1.md's particle-filter table (30 tasks of suite seed 7).  Use it before and after
a change to the filters: the errors should move only within Monte-Carlo noise.

Run:  python perf/pf_accuracy.py [--n 30] [--seed 7] [--family ...]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import PF_FAMILIES as FAMILIES
from _common import item_errors, timed_each

from stsim.baselines import BASELINES
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=30, help="tasks per family")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--family", nargs="*", choices=FAMILIES)
    args = ap.parse_args(argv)
    print(f"{'family':34s} {'tRMSE@10':>9s} {'tRMSE@all':>9s} {'ms/task':>8s}")
    for fam in args.family or FAMILIES:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
        answers, each = timed_each(BASELINES[fam], tasks)
        e10, eall = [], []
        for task, ans in zip(tasks, answers):
            e = item_errors(task.answer_format, [a.value if a.status == "ok" else None for a in ans],
                            [s.answer for s in task.steps])
            e10 += e[:10].tolist()
            eall += e.tolist()
        print(f"{fam:34s} {trimmed_rmse(e10):9.4f} {trimmed_rmse(eall):9.4f} "
              f"{1000 * float(np.mean(each)):8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
