"""The parametric refit (:mod:`stsim.baselines.trajectory_refit`) against the particle filter
alone on the same generated tasks (issue 20, item 2): the default (filter and refit) against
``baseline:filter``; trimmed RMSE (Euclidean norm of
the answer's error: position, time, or x-y-t together as ``perf/bayes_floor.py`` scores it) over
the first 10 steps and over all steps, CPU ms per task of each, and the share of steps the
refit answered; with ``--limits FILE`` (the JSON ``perf/bayes_floor.py --save`` writes) also
both against the saved limit over its steps, on the tasks whose limit converged.

Run:  python perf/refit_accuracy.py --family stark.tracking.range [--n 20] [--seed 7]
          [--limits limits.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse

FAMILIES = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.event", "stark.temporal_tracking.event", "stark.tracking.event_xyt"]


def _errors(task, answers) -> np.ndarray:
    gold = [s.answer for s in task.steps]
    return np.array([np.linalg.norm(np.atleast_1d(np.asarray(a.value, float) - np.asarray(g, float)))
                     for a, g in zip(answers, gold)])


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
            with open(args.limits) as fh:
                data = json.load(fh)
            lim, seed = data["families"], int(data["meta"]["seed"])
        except (OSError, ValueError, KeyError) as exc:
            print(f"stsim: error: --limits {args.limits}: not a readable bayes_floor --save file ({exc})",
                  file=sys.stderr)
            return 2
        if seed != args.seed:   # the ratios would compare different tasks
            print(f"stsim: error: --limits {args.limits} holds suite seed {seed}'s tasks; pass --seed {seed}",
                  file=sys.stderr)
            return 2
    print(f"suite seed {args.seed}, {args.n} tasks per family; trimmed RMSE first 10 / all steps; CPU ms/task")
    for fam in args.family:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
        rows = {}
        for name, solve in (("default", BASELINES[fam]), ("filter", ALTERNATIVES[fam]["filter"])):
            solve(tasks[0])                                     # warm-up: caches, imports
            t0 = time.process_time()
            errs = [_errors(t, solve(t)) for t in tasks]
            ms = 1000 * (time.process_time() - t0) / len(tasks)
            E = np.array(errs)
            rows[name] = E
            print(f"{fam:30s} {name:8s} {trimmed_rmse(E[:, :10].ravel()):.4f} / {trimmed_rmse(E.ravel()):.4f}"
                  f"  {ms:7.1f} ms/task", flush=True)
        if fam in lim:
            tl = [t for t in lim[fam]["tasks"] if not t["lost"] and t["index"] < args.n]
            wrong = [t["id"] for t in tl if t["id"] != tasks[t["index"]].id]
            if wrong:
                print(f"stsim: error: --limits {args.limits}: tasks {wrong[:3]} are not this run's", file=sys.stderr)
                return 2
            k = len(tl[0]["gold"]) if tl else 0
            L = np.array([np.linalg.norm(np.atleast_2d(np.asarray(t["limit"], float) - np.asarray(t["gold"], float))
                                         .reshape(k, -1), axis=1) for t in tl])
            lt = trimmed_rmse(L.ravel())
            parts = []
            for name, E in rows.items():
                e = trimmed_rmse(E[[t["index"] for t in tl], :k].ravel())
                parts.append(f"{name} {e:.4f} ({e / lt:.2f}x)")
            print(f"{'':30s} limit {lt:.4f} over {k} steps on {len(tl)} tasks: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
