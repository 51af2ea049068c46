"""The proximity / ToA particle filters against the limit, step by step and over filter seeds
(issue 20): the limit is read from ``perf/bayes_floor.py --save PATH`` files (``--limits
PATH [PATH ...]``: per task the mean of two sampler runs, 1000 particles; several files are the
parts of one set, ``bayes_floor.py --first``, pooled in task order; the suite seed and scored
steps come from the files), never recomputed here, so filter settings can be compared against it
in seconds.  Prints, for the default (``stark_tier1.default_track_settings``: for ToA the MAP
smoother where ``SMOOTHED_DEFAULTS`` has the family and the parametric refit; before 2026-12-01
without the smoother) and for ``--against`` settings (JSON keyword arguments of
:func:`stsim.baselines.particle_tracking.track_task` over the default's; ``{"refit": null}``:
the filter alone), the trimmed RMSE of the per-item error over the first 10 and over all of the
limit's steps on the tasks whose limit converged, the ratio to the limit, how far the ratio over
all steps moves with the tasks drawn (``_common.ratio_interval``), and the per-step RMS of
both.  The per-item error is the answer format's, as ``perf/bayes_floor.py`` scores it
(``perf/_common.py``): Euclidean for positions, absolute for times, and for x-y-t the norm of
``(dx, dy, dt)`` (position and time together; before 2026-12-01 this script scored x-y-t by
its position only).

Run:  python perf/pf_vs_limit.py --limits limits.json [part2.json ...] --family stark.tracking.proximity
          [--n 20] [--seeds 3] [--against '{"extent": 0, "terminal": 0}']
Exit 2 when a limits file is absent, the files hold no per-task limits of the family, hold tasks
that are not the ones generated from their suite seed (another generator version: their task
ids), or are not parts of one set (another suite seed or steps, a task in two files).
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np
from _common import PF_FAMILIES as FAMILIES
from _common import answer_values, check_limit_tasks, family_limits, item_errors, limit_set, ratio_interval

from stsim.baselines.particle_tracking import track_task
from stsim.baselines.stark_tier1 import default_track_settings
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse


def _errors(task, est, m):
    gold = np.array([s.answer for s in task.steps[:m]], float)
    return item_errors(task.answer_format, np.asarray(est, float)[:m], gold)


def limits(paths: str | list[str], fam: str, n: int) -> tuple[dict, int, int]:
    """``({task index: (the generated task, the limit's answers (steps,) or (steps, d), or None
    when lost)}, suite seed, steps)`` of the first ``n`` tasks of ``fam`` in ``bayes_floor.py
    --save`` files (one path, or the parts of one set: :func:`_common.limit_set`), each task
    generated from the files' suite seed (the first file's).

    Raises SystemExit(2) with a message when a file or the family's tasks are absent
    (:func:`_common.load_limits`, :func:`_common.family_limits`), the files are not parts of one
    set (:func:`_common.limit_set`), or a record's task id or gold answers are not the
    generated task's (:func:`_common.check_limit_tasks`: another generator version)."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    fams, seed, steps = limit_set(paths)
    where = " + ".join(paths)
    records = family_limits({"families": fams}, fam, where)[:n]
    tasks = {r["index"]: generate_task(fam, r["index"], suite="stark-tier1", suite_seed=seed) for r in records}
    check_limit_tasks(records, tasks, where)
    got = {r["index"]: (tasks[r["index"]],
                        None if r["lost"] or r["limit"] is None else np.asarray(r["limit"], float))
           for r in records}
    return got, seed, steps


def score(lim: dict, steps: int, seeds: int, kw: dict) -> dict:
    ours, ref = [], []
    for task, lv in lim.values():
        if lv is None:
            continue
        m = min(steps, len(task.steps))
        for s in range(seeds):
            # the family's default: the filter, and for ToA its smoother and refit
            full = {**default_track_settings(task), **kw}
            pos, emit = track_task(task, seed=s, **full)
            ours.append(_errors(task, answer_values(task, pos, emit), m))
            ref.append(_errors(task, lv, m))
    o, r = np.array(ours), np.array(ref)
    per_draw = [o[s::seeds] for s in range(seeds)]               # (tasks, steps) for each filter seed
    return {"tasks": len(o) // seeds, "interval": ratio_interval(per_draw, r[::seeds]),
            "ours10": trimmed_rmse(o[:, :10].ravel()),
            "lim10": trimmed_rmse(r[:, :10].ravel()), "ours": trimmed_rmse(o.ravel()),
            "lim": trimmed_rmse(r.ravel()), "step_ours": np.sqrt((o ** 2).mean(0)),
            "step_lim": np.sqrt((r ** 2).mean(0))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limits", metavar="PATH", nargs="+", required=True,
                    help="perf/bayes_floor.py --save JSON (per-task limits; its seed and steps are used), or "
                         "the parts of one set (bayes_floor.py --first), pooled")
    ap.add_argument("--family", choices=FAMILIES, required=True)
    ap.add_argument("--n", type=int, default=20, help="tasks (the first n of the files, in task order)")
    ap.add_argument("--seeds", type=int, default=3, help="filter seeds per task")
    ap.add_argument("--against", default=None, help="JSON track_task settings to compare (e.g. the previous default)")
    args = ap.parse_args(argv)
    lim, seed, steps = limits(args.limits, args.family, args.n)
    lost = sum(lv is None for _, lv in lim.values())
    shown = min(steps, max(len(task.steps) for task, _ in lim.values()))     # proximity has 20
    print(f"{args.family}: {len(lim)} tasks of suite seed {seed} ({' + '.join(args.limits)}), limit lost on {lost}; "
          f"{args.seeds} filter seeds; trimmed RMSE first 10 / all {shown} steps")
    rows = [("default", {})] + ([("against", json.loads(args.against))] if args.against else [])
    for name, kw in rows:
        r = score(lim, steps, args.seeds, kw)
        print(f"{name:8s} {r['ours10']:.4f} ({r['ours10'] / r['lim10']:.2f}x limit {r['lim10']:.4f}) / "
              f"{r['ours']:.4f} ({r['ours'] / r['lim']:.2f}x limit {r['lim']:.4f})  {kw or ''}")
        lo, hi = r["interval"]
        print(f"{'':8s} all steps with the tasks drawn again (paired bootstrap over the {r['tasks']} tasks, "
              f"90 %, mean over the draws' ratios): {lo:.2f}x to {hi:.2f}x")
        print(f"{'':8s} per step RMS ours  {np.round(r['step_ours'], 3).tolist()}")
        print(f"{'':8s} per step RMS limit {np.round(r['step_lim'], 3).tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
