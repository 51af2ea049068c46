"""Cost of the proximity and ToA default trackers against Stone Soup's particle filter, in the
same run (issue 20, item 3: "at least 5x faster per task than Stone Soup's particle filter").

Stone Soup has no proximity or time-of-arrival measurement model, so its reference is the
particle filter of ``perf/vs_stonesoup.py`` on ``stark.tracking.range`` tasks, the nearest
comparable task (50 steps, 4 sensors), with the settings tuned there for range (its
``TUNED["pf"]``: particle count, ESS resampling, MCMC moves, ...; the same filter that script
scores); the table gives the ms per task of each default tracker on its own family's tasks,
the reference's ms per task and their ratio, and the ratio per step (proximity tasks have 20
steps, ToA position tasks 40, the others 50).  Exit 1 when a family is less than ``--target``
times faster per task.  For scale it also prints the plain bootstrap filter of the first
version of ``perf/vs_stonesoup.py`` (1000 particles, systematic resampling after every
reading, no moves: ``--config old`` there), and each family's ratio to it, which the target
does not use.

Times are the process's CPU time (``time.process_time``: the machine is shared, so wall time
swings with the other processes' load) and the reference is measured before and after the
families, its mean the denominator (both printed: they should agree within ~20 %).

``--variant NAME`` also times each family's ``baseline:NAME`` (e.g. ``refit``) in the same run
and prints its ratio (the target applies to the defaults only).

Run:  python perf/pf_cost.py [--n 10] [--ref-n 5] [--seed 7] [--target 5] [--variant refit]
"""
from __future__ import annotations

import argparse
import sys

from _common import PF_FAMILIES as FAMILIES
from _common import cpu_ms_per_task as _ms_per_task   # after a warm-up: lazy imports, cached priors

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.registry import generate_task


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10, help="tasks per family")
    ap.add_argument("--ref-n", type=int, default=5, help="range tasks for Stone Soup's particle filter")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--target", type=float, default=5.0, help="required speed ratio")
    ap.add_argument("--variant", default=None, help="also time this baseline variant (baseline:NAME)")
    args = ap.parse_args(argv)
    from vs_stonesoup import OLD, TUNED, stonesoup_track  # perf/ script: Stone Soup is the 'perf' extra
    ref_tasks = [generate_task("stark.tracking.range", i, suite="stark-tier1", suite_seed=args.seed)
                 for i in range(args.ref_n)]
    tuned = TUNED["pf"]["stark.tracking.range"]

    def ref_ms(cfg=tuned):
        return _ms_per_task(lambda t: stonesoup_track(t, "pf", cfg), ref_tasks)
    ref0 = ref_ms()
    plain = ref_ms(OLD["pf"])
    ours = {}
    for fam in FAMILIES:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
        ours[fam] = (_ms_per_task(BASELINES[fam], tasks), len(tasks[0].steps))
        if args.variant and args.variant in ALTERNATIVES.get(fam, {}):
            ours[fam, args.variant] = (_ms_per_task(ALTERNATIVES[fam][args.variant], tasks), len(tasks[0].steps))
    ref1 = ref_ms()
    ref = 0.5 * (ref0 + ref1)
    print(f"Stone Soup particle filter ({tuned.label('pf')}), stark.tracking.range, 50 steps: "
          f"{ref:.1f} ms/task CPU ({args.ref_n} tasks; {ref0:.1f} before, {ref1:.1f} after the "
          f"families); plain bootstrap ({OLD['pf'].label('pf')}): {plain:.1f}")
    print(f"{'family':34s} {'steps':>5s} {'ms/task':>8s} {'PF/ours':>8s} {'per step':>8s} "
          f"{'plain/ours':>10s}")
    missed = []
    for fam in FAMILIES:
        ms, steps = ours[fam]
        ratio = ref / ms
        print(f"{fam:34s} {steps:5d} {ms:8.1f} {ratio:8.1f} {ratio * 50 / steps:8.1f} "
              f"{plain / ms:10.1f}", flush=True)
        if (fam, args.variant) in ours:
            vms = ours[fam, args.variant][0]
            print(f"{'  baseline:' + args.variant:34s} {steps:5d} {vms:8.1f} {ref / vms:8.1f} "
                  f"{ref / vms * 50 / steps:8.1f} {plain / vms:10.1f}", flush=True)
        if ratio < args.target:
            missed.append(f"{fam}: {ratio:.1f}x faster per task than Stone Soup's particle filter "
                          f"(target {args.target:g}x)")
    for m in missed:
        print("MISSED:", m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
