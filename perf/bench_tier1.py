"""Speed of STARK tier-1 generation and localisation baselines, against a naive reference run
in the same process (ratios, not absolute times: these machines are noisy).

Reference ("naive"): per task, one ``scipy.optimize.least_squares`` call from a single start at
the domain centre with finite-difference Jacobians (for proximity: STARK's grid search).  The
table also gives each method's trimmed RMSE on the same tasks, since a fast solver that lands in
the wrong minimum is no bargain.

Run:  python perf/bench_tier1.py [--n 100] [--seed 0]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import least_squares

from stsim.answers import get_format
from stsim.baselines import BASELINES
from stsim.baselines.geometry import proximity_grid_search, wrap_pi
from stsim.scoring.metrics import trimmed_rmse
from stsim.registry import generate_task
from stsim.sim.readings import readings_to_array

FAMILIES = ["stark.localization.range", "stark.localization.bearing",
            "stark.localization.range_bearing", "stark.localization.proximity",
            "stark.localization.event", "stark.temporal_localization.event",
            "stark.localization.event_xyt"]


def naive(task) -> object:
    """Single-start least squares from the centre (the reference)."""
    inp = task.inputs
    s = np.asarray(inp["sensors"], float)
    z = readings_to_array(inp["readings"], inp["modality"] == "range_bearing", False)
    x0 = np.array([5.0, 5.0])
    m = inp["modality"]
    if m == "range":
        f = lambda p: z - np.hypot(*(p - s).T)  # noqa: E731
    elif m == "bearing":
        th = np.radians(z)
        f = lambda p: wrap_pi(np.arctan2(p[1] - s[:, 1], p[0] - s[:, 0]) - th)  # noqa: E731
    elif m == "range_bearing":
        th = np.radians(z[:, 1])
        f = lambda p: np.concatenate([(z[:, 0] - np.hypot(*(p - s).T)) / 0.01,  # noqa: E731
                                      wrap_pi(np.arctan2(p[1] - s[:, 1], p[0] - s[:, 0]) - th) / 0.0628])
    elif m == "proximity":
        return proximity_grid_search(s, z, float(inp["radius"])).tolist()
    else:
        v = float(inp["wave_speed"])
        f3 = lambda q: z - q[2] - np.hypot(*(q[:2] - s).T) / v  # noqa: E731
        q = least_squares(f3, np.array([5.0, 5.0, float(np.min(z))])).x
        return {"time": float(q[2]), "vector": q.tolist()}.get(task.answer_format, q[:2].tolist())
    return least_squares(f, x0).x.tolist()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"{'family':36s} {'gen/s':>8s} {'ours/s':>8s} {'naive/s':>8s} {'speed ratio':>11s} "
          f"{'ours tRMSE':>10s} {'naive tRMSE':>11s}")
    for fam in FAMILIES:
        t = time.perf_counter()
        tasks = [generate_task(fam, i, suite_seed=args.seed) for i in range(args.n)]
        gen = args.n / (time.perf_counter() - t)
        fmt = get_format(tasks[0].answer_format)
        t = time.perf_counter()
        ours = [BASELINES[fam](task)[0].value for task in tasks]
        ours_rate = args.n / (time.perf_counter() - t)
        t = time.perf_counter()
        ref = [naive(task) for task in tasks]
        ref_rate = args.n / (time.perf_counter() - t)
        e_ours = [fmt.error(v, task.answer) for v, task in zip(ours, tasks)]
        e_ref = [fmt.error(v, task.answer) for v, task in zip(ref, tasks)]
        print(f"{fam:36s} {gen:8.0f} {ours_rate:8.1f} {ref_rate:8.1f} {ours_rate / ref_rate:11.2f} "
              f"{trimmed_rmse(e_ours):10.4f} {trimmed_rmse(e_ref):11.4f}")
    print("speed ratio = ours / naive tasks per second (> 1: ours is faster).")


if __name__ == "__main__":
    main()
