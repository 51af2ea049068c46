"""The parametric refit (:mod:`stsim.baselines.trajectory_refit`) against the particle filter
alone on the same generated tasks (issue 20, item 2): the default (filter and refit) against
``baseline:filter``; trimmed RMSE (the answer format's per-item error, ``perf/_common.py``:
Euclidean for positions, absolute for times, the norm of (dx, dy, dt) for x-y-t, as
``perf/bayes_floor.py`` scores it) over
the first 10 steps and over all steps, CPU ms per task of each, and the share of steps the
refit answered; with ``--limits FILE`` (the JSON ``perf/bayes_floor.py --save`` writes) also
both against the saved limit over its steps, on the tasks whose limit converged.

Run:  python perf/refit_accuracy.py --family stark.tracking.range [--n 20] [--seed 7]
          [--limits limits.json]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import REFIT_FAMILIES as FAMILIES
from _common import check_task_ids, item_errors, load_limits, timed_each

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse


def _errors(task, answers) -> np.ndarray:
    return item_errors(task.answer_format, [a.value if a.status == "ok" else None for a in answers],
                       [s.answer for s in task.steps])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=FAMILIES, nargs="+", required=True)
    ap.add_argument("--n", type=int, default=20, help="tasks per family")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--limits", default=None, help="saved limits (perf/bayes_floor.py --save)")
    args = ap.parse_args(argv)
    lim = {}
    if args.limits:
        try:
            lim = load_limits(args.limits, seed=args.seed)["families"]
        except SystemExit as exc:   # the message is printed
            return exc.code
    print(f"suite seed {args.seed}, {args.n} tasks per family; trimmed RMSE first 10 / all steps; CPU ms/task")
    for fam in args.family:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
        rows = {}
        for name, solve in (("default", BASELINES[fam]), ("filter", ALTERNATIVES[fam]["filter"])):
            answers, each = timed_each(solve, tasks)           # after a warm-up: caches, imports
            ms = 1000 * float(np.mean(each))
            E = np.array([_errors(t, a) for t, a in zip(tasks, answers)])
            rows[name] = E
            print(f"{fam:30s} {name:8s} {trimmed_rmse(E[:, :10].ravel()):.4f} / {trimmed_rmse(E.ravel()):.4f}"
                  f"  {ms:7.1f} ms/task", flush=True)
        if fam in lim:
            tl = [t for t in lim[fam]["tasks"] if not t["lost"] and t["index"] < args.n]
            try:
                check_task_ids(tl, dict(enumerate(tasks)), args.limits)
            except SystemExit as exc:   # the message is printed
                return exc.code
            k = len(tl[0]["gold"]) if tl else 0
            fmt = tasks[0].answer_format
            L = np.array([item_errors(fmt, t["limit"], t["gold"]) for t in tl])
            lt = trimmed_rmse(L.ravel())
            parts = []
            for name, E in rows.items():
                e = trimmed_rmse(E[[t["index"] for t in tl], :k].ravel())
                parts.append(f"{name} {e:.4f} ({e / lt:.2f}x)")
            print(f"{'':30s} limit {lt:.4f} over {k} steps on {len(tl)} tasks: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
