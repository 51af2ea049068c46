"""Speed of STARK tier-1 generation and localisation baselines, against a naive reference run
in the same process (ratios, not absolute times: these machines are noisy).

Reference ("naive"): per task, one ``scipy.optimize.least_squares`` call from a single start at
the domain centre with finite-difference Jacobians (for proximity: STARK's grid search).  The
table also gives each method's trimmed RMSE on the same tasks, since a fast solver that lands in
the wrong minimum is no bargain.

A second table (issue 20) gives every default tier-1 baseline, tracking included: tasks per
second, how the total cost grows from ``--small`` to ``--large`` tasks per family (``growth`` =
time(large) / time(small) / (large / small): 1.0 is linear), and the speed-up of solving through
the runner with ``--workers 2`` over 1 on the same ``--large`` tasks (process start-up
included, as a user sees it).

Run:  python perf/bench_tier1.py [--n 100] [--seed 0] [--small 10] [--large 200] [--skip-naive]
      [--family stark.tracking.event ...]
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

TRACKING = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]
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


def _solve_time(fam: str, tasks) -> float:
    t = time.perf_counter()
    for task in tasks:
        BASELINES[fam](task)
    return time.perf_counter() - t


def _slope(fam: str, tasks, small: int) -> float:
    """Exponent ``b`` of total cost ``~ n^b`` fitted (least squares in log-log) to the cumulative
    solve time after n = small .. len(tasks) tasks (6 geometric points); 1.0 is linear."""
    each = []
    for task in tasks:
        t = time.perf_counter()
        BASELINES[fam](task)
        each.append(time.perf_counter() - t)
    cum = np.cumsum(each)
    ns = np.unique(np.geomspace(small, len(tasks), 6).round().astype(int))
    return float(np.polyfit(np.log(ns), np.log(cum[ns - 1]), 1)[0])


def cost_table(seed: int, small: int, large: int, families=None) -> None:
    """Tasks/s of every default baseline, growth small -> large (ratio and fitted log-log
    slope), and --workers 2 speed-up."""
    from stsim.benchmarks.runner import solve_all
    print(f"\n{'family':36s} {'tasks/s':>8s} {'growth':>7s} {'slope':>6s} {'workers 2/1':>11s}")
    for fam in families or FAMILIES + TRACKING:
        tasks = [generate_task(fam, i, suite_seed=seed) for i in range(large)]
        BASELINES[fam](tasks[0])  # warm-up (lazy imports)
        t_small = _solve_time(fam, tasks[:small])
        t_large = _solve_time(fam, tasks)
        growth = (t_large / t_small) / (large / small)
        slope = _slope(fam, tasks, small)
        t = time.perf_counter()
        for _ in solve_all(tasks, "baseline", workers=1):
            pass
        w1 = time.perf_counter() - t
        t = time.perf_counter()
        for _ in solve_all(tasks, "baseline", workers=2):
            pass
        w2 = time.perf_counter() - t
        print(f"{fam:36s} {large / t_large:8.1f} {growth:7.2f} {slope:6.2f} {w1 / w2:11.2f}", flush=True)
    print("growth = (time for large / time for small) / (large / small); slope = fitted exponent "
          "of cost ~ n^slope over small..large tasks; 1.0 = linear.")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", type=int, default=10, help="tasks per family, small run")
    ap.add_argument("--large", type=int, default=200, help="tasks per family, large run")
    ap.add_argument("--skip-naive", action="store_true", help="only the cost table")
    ap.add_argument("--family", nargs="*", choices=FAMILIES + TRACKING,
                    help="families of the cost table (default: all)")
    args = ap.parse_args()
    if not args.skip_naive:
        naive_table(args)
    cost_table(args.seed, args.small, args.large, args.family)


def naive_table(args) -> None:
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
