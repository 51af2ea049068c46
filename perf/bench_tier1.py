"""Speed of STARK tier-1 generation and localisation baselines, against a naive reference run
in the same process (ratios, not absolute times: these machines are noisy).

Reference ("naive"): per task, one ``scipy.optimize.least_squares`` call from a single start at
the domain centre with finite-difference Jacobians (for proximity: STARK's grid search).  The
table also gives each method's trimmed RMSE on the same tasks, since a fast solver that lands in
the wrong minimum is no bargain.

A second table (issue 20) gives every default tier-1 baseline, tracking included: tasks per
CPU second on ``--large`` tasks per family and how the total cost grows from ``--small`` to
``--large`` tasks (``growth`` = cost(large) / cost(small) / (large / small), and the log-log
``slope`` of cost(n) over six n from small to large: both 1.0 when linear), from one pass over
the tasks timing each with ``time.process_time`` (CPU time: wall time on this shared machine
swings with the other processes' load).  The cost of the first ``small`` tasks is a sample of
``small`` tasks, so growth and slope carry its noise (about +-0.1 at 10 tasks).

Third, the wall-clock speed-up of solving through the runner with ``--workers 2`` over 1
(``solve_all``, its process pool's start-up included, as a user sees it) on ``--workers-n``
tasks of every family, in ``--repeats`` alternating pairs of runs: each pair's ratio, the
median and range, and the cores that other processes used meanwhile (``/proc/stat`` busy time
less this process tree's own CPU time), the cores this run obtained with 1 and with 2 workers,
and ``bound`` = 2 x (CPU seconds with 1 worker) / (CPU seconds with 2 workers), the speed-up two
free cores would allow with the pool's extra work counted (it does not depend on the load).
When others used more than a quarter of a core the script says the machine is too busy for
the speed-up to mean what a second worker gives: with Linux's autogroup scheduling
(``/proc/sys/kernel/sched_autogroup_enabled``) the CPU is shared per session, so on a busy
machine a run's two workers share one session's share and the measured speed-up stays
near 1 whatever the code does (measured: 1 worker 0.38 cores, 2 workers 0.40, others 1.6).

Run:  python perf/bench_tier1.py [--n 100] [--seed 0] [--small 10] [--large 200] [--skip-naive]
      [--family stark.tracking.event ...] [--workers-n 20] [--repeats 5]
The issue-20 tables alone (about 2-4 minutes on 2 idle cores):
      python perf/bench_tier1.py --skip-naive
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _common import LOCALISATION as FAMILIES
from _common import TRACKING, timed_each
from scipy.optimize import least_squares

from stsim.answers import get_format
from stsim.baselines import BASELINES
from stsim.baselines.geometry import proximity_grid_search, wrap_pi
from stsim.scoring.metrics import trimmed_rmse
from stsim.registry import generate_task
from stsim.sim.readings import readings_to_array


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


def _cpu_busy() -> tuple[float, float, float] | None:
    """(busy CPU seconds of the whole machine from /proc/stat, this process's and its reaped
    children's CPU seconds, wall seconds), or None without /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    t = os.times()
    return ((sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK"),
            t.user + t.system + t.children_user + t.children_system, time.perf_counter())


def _others(before, after) -> tuple[float, float]:
    """(cores used by other processes, cores used by this run) on average between two
    :func:`_cpu_busy` snapshots (nan without /proc/stat)."""
    if before is None or after is None:
        return float("nan"), float("nan")
    wall = max(after[2] - before[2], 1e-9)
    ours = after[1] - before[1]
    return max(0.0, (after[0] - before[0] - ours) / wall), ours / wall


def per_task_costs(fam: str, tasks) -> np.ndarray:
    """CPU seconds (``time.process_time``) of ``BASELINES[fam]`` on each task, after one untimed
    warm-up call (lazy imports, cached tables): ``perf/_common.py``'s :func:`timed_each`."""
    return timed_each(BASELINES[fam], tasks)[1]


def growth(each: np.ndarray, small: int) -> tuple[float, float]:
    """(growth ratio, log-log slope) of the total cost of the first n tasks, n = small ..
    len(each): ratio = (cost(large) / cost(small)) / (large / small), slope = least-squares
    exponent b of cost(n) ~ n^b over 6 geometric n; both 1.0 when the cost is linear."""
    cum = np.cumsum(each)
    ns = np.unique(np.geomspace(small, len(each), 6).round().astype(int))
    ratio = (cum[-1] / cum[small - 1]) / (len(each) / small)
    return float(ratio), float(np.polyfit(np.log(ns), np.log(cum[ns - 1]), 1)[0])


def cost_table(seed: int, small: int, large: int, families=None) -> None:
    """Tasks per CPU second of every default baseline on ``large`` tasks per family, and how the
    total cost grows from ``small`` to ``large`` tasks (growth ratio and log-log slope)."""
    print(f"\n{'family':36s} {'tasks/s':>8s} {'ms/task':>8s} {'growth':>7s} {'slope':>6s} "
          f"{'others':>6s}")
    for fam in families or FAMILIES + TRACKING:
        tasks = [generate_task(fam, i, suite_seed=seed) for i in range(large)]
        b0 = _cpu_busy()
        each = per_task_costs(fam, tasks)
        others, _ = _others(b0, _cpu_busy())
        ratio, slope = growth(each, small)
        print(f"{fam:36s} {len(each) / each.sum():8.1f} {1000 * each.mean():8.2f} {ratio:7.2f} "
              f"{slope:6.2f} {others:6.2f}", flush=True)
    print(f"tasks/s and ms/task: CPU time of one process ({large} tasks per family); growth = "
          f"(cost of {large} tasks / cost of the first {small}) / ({large} / {small}); slope = "
          f"fitted exponent of cost ~ n^slope over {small}..{large} tasks (1.0 = linear); others = "
          f"cores used by other processes meanwhile.")


def workers_speedup(seed: int, per_family: int, repeats: int, families=None,
                    busy: float = 0.25) -> dict:
    """Wall-clock speed-up of ``solve_all(..., workers=2)`` over ``workers=1`` (the runner's
    process pool, its start-up included) on ``per_family`` tasks of every family, measured in
    ``repeats`` alternating pairs (1, 2, 1, 2, ...): prints each pair, the median ratio and
    its range, the cores other processes used during the 2-worker runs (from /proc/stat), and
    a warning when they used more than ``busy`` cores (the ratio then measures how much of the
    machine was free, not what a second worker gives).  Returns the figures."""
    from stsim.benchmarks.runner import solve_all
    tasks = [generate_task(fam, i, suite_seed=seed) for fam in families or FAMILIES + TRACKING
             for i in range(per_family)]
    for _ in solve_all(tasks[:: max(1, per_family)], "baseline", workers=1):  # warm-up
        pass

    def run(workers: int) -> tuple[float, float, float]:
        b0 = _cpu_busy()
        t = time.perf_counter()
        for _ in solve_all(tasks, "baseline", workers=workers):
            pass
        wall = time.perf_counter() - t
        return (wall, *_others(b0, _cpu_busy()))

    pairs = []
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            autogroup = f.read().strip() == "1"
    except OSError:
        autogroup = False
    print(f"\n--workers 2 vs 1 on {len(tasks)} tasks ({per_family} per family), {repeats} pairs, "
          f"{os.cpu_count()} CPUs; others / ours = cores used by other processes / by this run"
          + ("; the kernel's autogroup scheduling is on: on a busy machine this run's processes "
             "share one session's CPU share, so 2 workers may get no more CPU than 1" if autogroup else ""))
    print(f"{'pair':>4s} {'1 worker s':>10s} {'2 workers s':>11s} {'speed-up':>8s} "
          f"{'others 1':>8s} {'others 2':>8s} {'ours 1':>6s} {'ours 2':>6s} {'bound':>5s}")
    for k in range(repeats):
        one, two = run(1), run(2)
        pairs.append((one, two))
        bound = 2 * (one[0] * one[2]) / (two[0] * two[2])
        print(f"{k:4d} {one[0]:10.2f} {two[0]:11.2f} {one[0] / two[0]:8.2f} {one[1]:8.2f} "
              f"{two[1]:8.2f} {one[2]:6.2f} {two[2]:6.2f} {bound:5.2f}", flush=True)
    ratios = np.array([a[0] / b[0] for a, b in pairs])
    others = np.array([b[1] for _, b in pairs])
    bounds = np.array([2 * a[0] * a[2] / (b[0] * b[2]) for a, b in pairs])
    res = {"median": float(np.median(ratios)), "min": float(ratios.min()),
           "max": float(ratios.max()), "others_cores": float(np.median(others)),
           "bound": float(np.median(bounds))}
    print(f"speed-up of --workers 2 over 1: median {res['median']:.2f} (range {res['min']:.2f}-"
          f"{res['max']:.2f}); other processes used {res['others_cores']:.2f} cores (median) "
          f"during the 2-worker runs; bound = 2 x CPU seconds of 1 worker / CPU seconds of 2 "
          f"(the speed-up two free cores would allow, pool overhead counted): {res['bound']:.2f}")
    if not res["others_cores"] <= busy:
        print(f"WARNING: machine busy (other processes used more than {busy} cores): the speed-up "
              f"measures the free share of the machine, not what a second worker gives")
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", type=int, default=10, help="tasks per family, small run")
    ap.add_argument("--large", type=int, default=200, help="tasks per family, large run")
    ap.add_argument("--skip-naive", action="store_true", help="only the cost tables")
    ap.add_argument("--workers-n", type=int, default=20,
                    help="tasks per family of the --workers 2 vs 1 measurement (0: skip it)")
    ap.add_argument("--repeats", type=int, default=5, help="pairs of 1- and 2-worker runs")
    ap.add_argument("--family", nargs="*", choices=FAMILIES + TRACKING,
                    help="families of the cost table (default: all)")
    args = ap.parse_args()
    if not args.skip_naive:
        naive_table(args)
    cost_table(args.seed, args.small, args.large, args.family)
    if args.workers_n > 0:
        workers_speedup(args.seed, args.workers_n, args.repeats, args.family)


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
