"""The proximity / ToA particle filters against the limit, step by step and over filter seeds
(issue 20): the limit (:func:`stsim.baselines.trajectory_posterior.task_posterior`, the
settings of ``perf/bayes_floor.py``: 1000 particles, 2 MH sweeps, 40 levels, one run, seed 0)
is computed once per task and kept in a cache file, so filter settings can be compared against
it in seconds.  Prints, for the default (for ToA with the parametric refit,
``refit=REFIT_SETTINGS["toa"]``) and for ``--against`` settings (JSON keyword arguments of
:func:`stsim.baselines.particle_tracking.track_task` over the default's; ``{"refit": null}``:
the filter alone), the Euclidean trimmed RMSE (absolute
time error for the temporal family) over the first 10 and over all of the limit's steps on the
tasks whose limit converged, the ratio to the limit, and the per-step RMS of both.

Run:  python perf/pf_vs_limit.py --family stark.tracking.proximity --n 40 --steps 20
          [--seeds 3] [--against '{"extent": 0, "terminal": 0}'] [--cache perf/.limits]
The limit takes 5-60 s per task (minutes for 50 ToA steps): run it in the background.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import sys

import numpy as np

from stsim.baselines.particle_tracking import track_task
from stsim.baselines.trajectory_posterior import NotConverged, task_posterior
from stsim.baselines.trajectory_refit import REFIT_SETTINGS
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse

FAMILIES = ["stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]


def _answers(task, pos, emit):
    if task.answer_format == "time":
        return np.asarray(emit, float)
    if task.answer_format == "vector":
        return np.column_stack([pos, emit])
    return np.asarray(pos, float)


def _errors(task, est, m):
    gold = np.array([s.answer for s in task.steps[:m]], float)
    d = np.asarray(est, float)[:m] - gold
    return np.abs(d) if d.ndim == 1 else np.hypot(d[:, 0], d[:, 1])   # x-y-t: its position


def limits(fam: str, n: int, steps: int, seed: int, cache: str) -> dict:
    """Per task index the limit's answers (steps,) or None (the sampler did not converge)."""
    path = os.path.join(cache, f"{fam}-seed{seed}-steps{steps}.pkl")
    got = pickle.load(open(path, "rb")) if os.path.exists(path) else {}
    for i in range(n):
        if i in got:
            continue
        task = generate_task(fam, i, suite="stark-tier1", suite_seed=seed)
        try:
            r = task_posterior(task, n_steps=steps, n_particles=1000, n_moves=2, seed=0,
                               max_levels=40, ess_keep=0.3, max_sweeps=8)
            got[i] = _answers(task, r.pos, r.emit)
        except (NotConverged, ValueError):
            got[i] = None
        print(f"limit {fam} task {i}: {'lost' if got[i] is None else 'ok'}", file=sys.stderr, flush=True)
        os.makedirs(cache, exist_ok=True)
        pickle.dump(got, open(path, "wb"))
    return got


def score(fam: str, lim: dict, steps: int, seed: int, seeds: int, kw: dict) -> dict:
    ours, ref = [], []
    for i, lv in lim.items():
        if lv is None:
            continue
        task = generate_task(fam, i, suite="stark-tier1", suite_seed=seed)
        m = min(steps, len(task.steps))
        for s in range(seeds):
            # the family's default: the filter, and for ToA the parametric refit after it
            full = {**({"refit": REFIT_SETTINGS["toa"]} if task.inputs["modality"] == "toa" else {}), **kw}
            pos, emit = track_task(task, seed=s, **full)
            ours.append(_errors(task, _answers(task, pos, emit), m))
            ref.append(_errors(task, lv, m))
    o, r = np.array(ours), np.array(ref)
    return {"tasks": len(o) // seeds, "ours10": trimmed_rmse(o[:, :10].ravel()),
            "lim10": trimmed_rmse(r[:, :10].ravel()), "ours": trimmed_rmse(o.ravel()),
            "lim": trimmed_rmse(r.ravel()), "step_ours": np.sqrt((o ** 2).mean(0)),
            "step_lim": np.sqrt((r ** 2).mean(0))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=FAMILIES, required=True)
    ap.add_argument("--n", type=int, default=20, help="tasks")
    ap.add_argument("--steps", type=int, default=10, help="steps of the limit (tracking steps scored)")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--seeds", type=int, default=3, help="filter seeds per task")
    ap.add_argument("--against", default=None, help="JSON track_task settings to compare (e.g. the previous default)")
    ap.add_argument("--cache", default=os.path.join(os.path.dirname(__file__), ".limits"))
    args = ap.parse_args(argv)
    lim = limits(args.family, args.n, args.steps, args.seed, args.cache)
    lost = sum(v is None for v in lim.values())
    print(f"{args.family}: {args.n} tasks of suite seed {args.seed}, limit lost on {lost}; "
          f"{args.seeds} filter seeds; trimmed RMSE first 10 / all {args.steps} steps")
    rows = [("default", {})] + ([("against", json.loads(args.against))] if args.against else [])
    for name, kw in rows:
        r = score(args.family, lim, args.steps, args.seed, args.seeds, kw)
        print(f"{name:8s} {r['ours10']:.4f} ({r['ours10'] / r['lim10']:.2f}x limit {r['lim10']:.4f}) / "
              f"{r['ours']:.4f} ({r['ours'] / r['lim']:.2f}x limit {r['lim']:.4f})  {kw or ''}")
        print(f"{'':8s} per step RMS ours  {np.round(r['step_ours'], 3).tolist()}")
        print(f"{'':8s} per step RMS limit {np.round(r['step_lim'], 3).tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
