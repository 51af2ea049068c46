"""The parametric refit (:mod:`stsim.baselines.trajectory_refit`) against the particle filter
alone on the same generated tasks (issue 20, item 2): the default (filter and refit) against
``baseline:filter``; trimmed RMSE (the answer format's per-item error, ``perf/_common.py``:
Euclidean for positions, absolute for times, the norm of (dx, dy, dt) for x-y-t, as
``perf/bayes_floor.py`` scores it) over
the first 10 steps and over all steps, CPU ms per task of each, and the share of steps the
refit answered; with ``--limits FILE`` (the JSON ``perf/bayes_floor.py --save`` writes; several
files of one suite seed and steps, parts of one set made with ``bayes_floor.py --first``, are
pooled) also
both against the saved limit over its steps, on the tasks whose limit converged, with the
limit's independent runs scored on their own (how far the reference itself moves with its
Monte-Carlo error), and where the default's excess is: its ratio without the one task, then the
two, that hold most of it (``_common.excess_by_task``), and how far the ratio moves with the
tasks drawn (a paired bootstrap over them, ``_common.ratio_interval``).  ``--filter-seeds 1 2 ...`` also scores the default with its filter's
random draws from those seeds (``stark_tier1.default_track(task, seed)``; seed 0 is the
default baseline's answers): the spread over seeds is how much of a figure on 20 tasks is the
tracker's own luck (the refit's searches start from the filter's answers).

Run:  python perf/refit_accuracy.py --family stark.tracking.range [--n 20] [--seed 7]
          [--limits limits.json [part2.json ...]] [--filter-seeds 1 2 3]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import REFIT_FAMILIES as FAMILIES
from _common import (answer_values, check_limit_tasks, excess_by_task, item_errors, limit_set, ratio_interval,
                     ratio_to_limit, timed_each)

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines.stark_tier1 import default_track
from stsim.cli.common import int_at_least
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse


def _errors(task, answers) -> np.ndarray:
    return item_errors(task.answer_format, [a.value if a.status == "ok" else None for a in answers],
                       [s.answer for s in task.steps])


def _limit_runs(task: dict) -> list:
    """A saved task's sampler runs (``limit_runs``; files written before ``--runs`` existed:
    ``limit_run1`` and ``limit_run2``), None for a lost run."""
    runs = task.get("limit_runs")
    return runs if runs is not None else [task.get("limit_run1"), task.get("limit_run2")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=FAMILIES, nargs="+", required=True)
    ap.add_argument("--n", type=int, default=20, help="tasks per family")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--limits", nargs="+", default=None, metavar="PATH",
                    help="saved limits (perf/bayes_floor.py --save); several files of the same suite seed "
                         "and steps (parts of one set, bayes_floor.py --first) are pooled")
    ap.add_argument("--filter-seeds", type=int_at_least(0), nargs="*", default=[], metavar="SEED",
                    help="also score the default with its filter's draws from these seeds (the default row is "
                         "seed 0; numpy's generators take no negative seed)")
    args = ap.parse_args(argv)
    lim = {}
    if args.limits:
        try:
            lim = limit_set(args.limits, args.seed)[0]
        except SystemExit as exc:   # the message is printed
            return exc.code
    where = " + ".join(args.limits or [])
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
        for seed in dict.fromkeys(s for s in args.filter_seeds if s != 0):   # 0 is the default row
            E = np.array([item_errors(t.answer_format, answer_values(t, *default_track(t, seed)).tolist(),
                                      [s.answer for s in t.steps]) for t in tasks])
            rows[f"seed {seed}"] = E
            print(f"{'':30s} {'seed ' + str(seed):8s} {trimmed_rmse(E[:, :10].ravel()):.4f} / "
                  f"{trimmed_rmse(E.ravel()):.4f}", flush=True)
        if fam in lim:
            tl = [t for t in lim[fam]["tasks"] if not t["lost"] and t["index"] < args.n]
            try:
                check_limit_tasks(tl, dict(enumerate(tasks)), where)
            except SystemExit as exc:   # the message is printed
                return exc.code
            k = len(tl[0]["gold"]) if tl else 0
            fmt = tasks[0].answer_format
            L = np.array([item_errors(fmt, t["limit"], t["gold"]) for t in tl])
            lt = trimmed_rmse(L.ravel())
            runs = [trimmed_rmse(np.array([item_errors(fmt, r, t["gold"]) for r, t in zip(rs, tl)]).ravel())
                    for rs in zip(*(_limit_runs(t) for t in tl)) if all(r is not None for r in rs)]
            parts, ratios = [], []
            for name, E in rows.items():
                e = trimmed_rmse(E[[t["index"] for t in tl], :k].ravel())
                parts.append(f"{name} {e:.4f} ({ratio_to_limit(e, lt):.2f}x)")
                if name != "filter":
                    ratios.append(ratio_to_limit(e, lt))
            print(f"{'':30s} limit {lt:.4f} over {k} steps on {len(tl)} tasks: " + ", ".join(parts))
            if runs:
                print(f"{'':30s} the limit's runs on their own: " + ", ".join(f"{r:.4f}" for r in runs))
            if len(ratios) > 1:
                print(f"{'':30s} default over {len(ratios)} filter draws: mean {np.mean(ratios):.2f}x "
                      f"(from {min(ratios):.2f}x to {max(ratios):.2f}x)")
            ours = [E[[t["index"] for t in tl], :k] for name, E in rows.items() if name != "filter"]
            if len(tl) > 1:
                lo, hi = ratio_interval(ours, L)
                print(f"{'':30s} with the tasks drawn again (paired bootstrap over the {len(tl)} tasks, 90 %): "
                      f"{lo:.2f}x to {hi:.2f}x")
            excess = excess_by_task(ours, L)
            if excess:
                print(f"{'':30s} where the excess is (mean over draws): " + "; ".join(
                    f"without task{'s' if len(rm) > 1 else ''} {', '.join(str(tl[i]['index']) for i in rm)} {r:.2f}x"
                    for rm, r in excess))
    return 0


if __name__ == "__main__":
    sys.exit(main())
