"""The frontier of accuracy against cost for a tracker that learns the trajectory's parameters
(issue 20, items 2-3): :func:`stsim.baselines.posterior_tracking.posterior_track` at each
budget of :data:`~stsim.baselines.posterior_tracking.BUDGETS`, against the SAVED limits of
``perf/bayes_floor.py --save PATH`` (never recomputed here; several files are the parts of one
set, ``bayes_floor.py --first``, pooled in task order).

Per family and budget: the ratio of the tracker's trimmed error (the answer format's per-item
error, ``perf/_common.py``: Euclidean; absolute time error for the temporal family; [x, y, t]
norm for x-y-t, as ``bayes_floor.py``) to the
limit's, over the first ``steps`` steps the limits file holds, on the tasks whose limit
converged; the CPU ms per task to answer those first steps and to answer all of the task's
steps (one run per task: the time at which each step's answer was ready; the sampler never
reads a later step); the steps the default filter answered after the sampler failed.  Beside
them the default tracker (ratio, CPU ms/task over all steps) and the cost target: Stone Soup's
particle filter (``perf/vs_stonesoup.py``'s tuned configuration for the family, the range one
for proximity/ToA as ``perf/pf_cost.py`` does) measured in the same run on ``--ss-n`` tasks,
divided by ``--target`` (5).  A budget meets both targets when its ratio is at most
``1 + --tolerance`` and its all-steps cost at most the cost target.

Saves a PNG (``--png``): ratio against CPU ms/task per family, both costs of each budget, the
default tracker, the 1.10 line and the cost-target line.  Exit 1 when on some family no
budget meets both targets, 2 on bad input (a missing limits file, files that are not parts of
one set: another suite seed or steps, a task in two files).

Run:  python perf/limit_frontier.py --limits /work/tmp/limits_n20.json [part2.json ...] [--n 20]
          [--family stark.tracking.range ...] [--budgets tiny small medium] [--ss-n 3]
          [--png docs/img/limit-frontier.png] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from _common import STONESOUP_FAMILIES as SS_FAMILIES
from _common import answer_values, check_limit_tasks, cpu_ms_per_task, item_errors, limit_set, ratio_to_limit

from stsim.baselines import BASELINES
from stsim.baselines.posterior_tracking import BUDGETS, posterior_track
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse


def _errs(fmt: str, est, gold) -> list[float]:
    return item_errors(fmt, est, gold).tolist()


def stonesoup_ms(fam: str, seed: int, n: int) -> float | None:
    """CPU ms per task of Stone Soup's particle filter (perf/vs_stonesoup.py's tuned config) on
    ``n`` tasks of ``fam`` (range tasks for the families Stone Soup has no model for)."""
    try:
        from vs_stonesoup import TUNED, stonesoup_track
    except ImportError:   # Stone Soup (the 'perf' extra) absent
        return None
    ref = fam if fam in SS_FAMILIES else "stark.tracking.range"
    tasks = [generate_task(ref, i, suite="stark-tier1", suite_seed=seed) for i in range(n)]
    cfg = TUNED["pf"][ref]
    return cpu_ms_per_task(lambda t: stonesoup_track(t, "pf", cfg), tasks)


def family_rows(fam: str, fam_data: dict, seed: int, steps: int, n: int, budgets: list[str],
                path: str = "--limits") -> dict:
    tasks = [r for r in fam_data["tasks"] if not r["lost"]][:n]
    out = {"default": {"e": [], "ms_all": []}, **{b: {"e": [], "ms10": [], "ms_all": [], "fallback": 0}
                                                  for b in budgets}}
    e_lim = []
    if tasks:   # warm-up: lazy imports and the default filters' cached prior library
        BASELINES[fam](generate_task(fam, tasks[0]["index"], suite="stark-tier1", suite_seed=seed))
    for rec in tasks:
        task = generate_task(fam, rec["index"], suite="stark-tier1", suite_seed=seed)
        check_limit_tasks([rec], {rec["index"]: task}, path)
        fmt = task.answer_format
        gold = np.asarray(rec["gold"], float)
        e_lim += _errs(fmt, rec["limit"], gold)
        c = time.process_time()
        ans = BASELINES[fam](task)
        out["default"]["ms_all"].append(1000 * (time.process_time() - c))
        dv = np.array([a.value if a.status == "ok" else np.full(gold.shape[1:], np.nan)
                       for a in ans[:steps]], float)
        out["default"]["e"] += _errs(fmt, dv, gold)
        for b in budgets:
            r = posterior_track(task, b)
            out[b]["e"] += _errs(fmt, answer_values(task, r.pos, r.emit)[:steps], gold)
            out[b]["ms10"].append(1000 * r.cpu[min(steps, len(r.cpu)) - 1])
            out[b]["ms_all"].append(1000 * r.cpu[-1])
            out[b]["fallback"] += r.fallback
        print(f"  {fam} task {rec['index']} done", file=sys.stderr, flush=True)
    lim = trimmed_rmse(e_lim)
    res = {"n": len(tasks), "limit": lim}
    for k, v in out.items():
        res[k] = {"err": trimmed_rmse(v["e"]), "ratio": ratio_to_limit(trimmed_rmse(v["e"]), lim),
                  "ms_all": float(np.mean(v["ms_all"])),
                  "ms10": float(np.mean(v["ms10"])) if v.get("ms10") else None,
                  "fallback": v.get("fallback")}
    return res


def plot(results: dict, budgets: list[str], tol: float, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fams = list(results)
    cols = min(4, len(fams))
    rows = (len(fams) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.4 * rows), squeeze=False)
    for ax, fam in zip(axes.ravel(), fams):
        r = results[fam]
        bs = [b for b in budgets if b in r]   # a merged run may lack a budget on some family
        xs10 = [r[b]["ms10"] for b in bs]
        xs = [r[b]["ms_all"] for b in bs]
        ys = [r[b]["ratio"] for b in bs]
        ax.plot(xs10, ys, "o-", color="tab:blue", label="learning tracker at its cost over 10 steps")
        ax.plot(xs, ys, "s--", color="tab:blue", alpha=0.5, label="learning tracker at its cost over 50 steps")
        for b, x, y in zip(bs, xs, ys):
            ax.annotate(b, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.plot([r["default"]["ms_all"]], [r["default"]["ratio"]], "D", color="tab:orange",
                label="default tracker at its cost over 50 steps")
        ax.axhline(1 + tol, color="green", lw=1, label=f"{1 + tol:.2f} x limit")
        if r.get("target_ms"):
            ax.axvline(r["target_ms"], color="red", lw=1, label="Stone Soup PF / 5")
        ax.set_xscale("log")
        ax.set_title(fam.replace("stark.", ""), fontsize=9)
        ax.set_xlabel("CPU ms / task")
        ax.set_ylabel("trimmed error / limit, first 10 steps")
    for ax in axes.ravel()[len(fams):]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limits", metavar="PATH", nargs="+", default=None, required=True,
                    help="perf/bayes_floor.py --save JSON (e.g. /work/tmp/limits_n20.json), or the parts of one "
                         "set (bayes_floor.py --first), pooled")
    ap.add_argument("--family", nargs="*", default=None, help="tracking families (default: all in the file)")
    ap.add_argument("--n", type=int, default=20, help="tasks per family (the first n the limit did not lose)")
    ap.add_argument("--budgets", nargs="*", default=["tiny", "small", "medium"], choices=list(BUDGETS))
    ap.add_argument("--ss-n", type=int, default=3, help="tasks for Stone Soup's particle filter cost")
    ap.add_argument("--target", type=float, default=5.0, help="required speed-up over Stone Soup's PF")
    ap.add_argument("--tolerance", type=float, default=0.10, help="allowed excess over the limit")
    ap.add_argument("--png", default=os.path.join(os.path.dirname(__file__), "..", "docs", "img",
                                                  "limit-frontier.png"),
                    help="figure path (default docs/img/limit-frontier.png, the one docs/stark-tier1.md shows)")
    ap.add_argument("--json", default=None, help="also write the table as JSON")
    args = ap.parse_args(argv)
    try:
        limits, seed, steps = limit_set(args.limits)
    except SystemExit as exc:   # the message is printed
        return exc.code
    where = " + ".join(args.limits)
    fams = args.family or [f for f, v in limits.items() if v["tasks"]]     # localisation families hold none
    bad = [f for f in fams if not limits.get(f, {}).get("tasks")]
    if bad:
        print(f"stsim: error: no per-task tracking limits for {bad} in {where}", file=sys.stderr)
        return 2
    results, missed = {}, []
    print(f"limits {where}: seed {seed}, first {steps} steps; budgets {args.budgets}; "
          f"CPU ms per task (process time)")
    print(f"{'family':32s} {'tracker':9s} {'ratio':>6s} {'ms 10 st':>9s} {'ms all':>8s} "
          f"{'fallback':>8s} {'SS PF ms':>8s} {'target':>7s} {'meets':>5s}")
    for fam in fams:
        r = family_rows(fam, limits[fam], seed, steps, args.n, args.budgets, where)
        ss = stonesoup_ms(fam, seed, args.ss_n)
        r["ss_ms"], r["target_ms"] = ss, (ss / args.target if ss else None)
        results[fam] = r
        ok_any = False
        for k in ["default"] + args.budgets:
            v = r[k]
            meets = v["ratio"] <= 1 + args.tolerance and (r["target_ms"] is None or v["ms_all"] <= r["target_ms"])
            ok_any |= meets
            ms10 = f"{v['ms10']:9.0f}" if v["ms10"] is not None else f"{'-':>9s}"
            fb = f"{v['fallback']:8d}" if v["fallback"] is not None else f"{'-':>8s}"
            sst = f"{ss:8.0f} {r['target_ms']:7.1f}" if ss else f"{'-':>8s} {'-':>7s}"
            print(f"{fam:32s} {k:9s} {v['ratio']:6.2f} {ms10} {v['ms_all']:8.0f} {fb} {sst} "
                  f"{'yes' if meets else 'no':>5s}", flush=True)
        print(f"{'':32s} limit {r['limit']:.4f} on {r['n']} tasks", flush=True)
        if not ok_any:
            missed.append(f"{fam}: no tracker within {1 + args.tolerance:.2f}x the limit at "
                          f"<= {r['target_ms'] or float('nan'):.1f} ms/task")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(results, fh, indent=1)
    plot(results, args.budgets, args.tolerance, args.png)
    print(f"figure: {args.png}")
    for m in missed:
        print("MISSED:", m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
