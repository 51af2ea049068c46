"""Cost of the default trackers with and without the MAP smoother before the refit, against
Stone Soup's particle filter in the same run (issue 20: a family joins
``stark_tier1.SMOOTHED_DEFAULTS`` only while its default stays at least 5x cheaper per task than
Stone Soup's particle filter; the margin for timing noise is the caller's).

For each family: CPU ms per task of its default as it is (``default``) and with the family
added to :data:`stsim.baselines.stark_tier1.SMOOTHED_DEFAULTS` for the run (``+smoother``;
the smoother settings of :func:`stsim.baselines.trajectory_smoother.settings_for`), or removed
when it is in it (``-smoother``), and each one's ratio to the reference: Stone Soup's particle
filter of ``perf/vs_stonesoup.py`` (its ``TUNED["pf"]``) on the family's own tasks where Stone
Soup has its measurement model (range, bearing, range+bearing), else on range tasks (as
``perf/pf_cost.py``), measured before, between and after ``--rounds`` (3) rounds of the
families; each round's ratio is against the reference times on either side of it
(``_common.round_ratios``) and the table gives the median ms per task, the median ratio and
the rounds' range (one pass swings by 10-20 % with the machine's speed).  Times:
``time.process_time`` per task after a warm-up (``_common.cpu_ms_per_task``).

Run:  python perf/smoothed_cost.py [--family F ...] [--n 10] [--ref-n 5] [--seed 7] [--rounds 3]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import STONESOUP_FAMILIES
from _common import cpu_ms_per_task as _ms_per_task
from _common import round_ratios, timed_rounds

from stsim.baselines import BASELINES
from stsim.baselines import stark_tier1
from stsim.cli.common import int_at_least
from stsim.registry import generate_task

FAMILIES = ["stark.tracking.range", "stark.tracking.range_bearing", "stark.tracking.event",
            "stark.temporal_tracking.event", "stark.tracking.event_xyt"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", nargs="+", choices=FAMILIES, default=FAMILIES)
    ap.add_argument("--n", type=int, default=10, help="tasks per family")
    ap.add_argument("--ref-n", type=int, default=5, help="tasks for Stone Soup's particle filter")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--rounds", type=int_at_least(1), default=3, help="rounds of reference, families, reference")
    args = ap.parse_args(argv)
    from vs_stonesoup import TUNED, stonesoup_track  # perf/ script: Stone Soup is the 'perf' extra

    def ref_family(fam):
        return fam if fam in STONESOUP_FAMILIES else "stark.tracking.range"

    refs = {}
    for rf in sorted({ref_family(f) for f in args.family}):
        tasks = [generate_task(rf, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.ref_n)]
        cfg = TUNED["pf"][rf]
        refs[rf] = (lambda tasks=tasks, cfg=cfg: _ms_per_task(lambda t: stonesoup_track(t, "pf", cfg), tasks))
    base = tuple(stark_tier1.SMOOTHED_DEFAULTS)
    tasks = {fam: [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
             for fam in args.family}
    variants = {fam: (("default", base),
                      ("-smoother" if fam in base else "+smoother",
                       tuple(f for f in base if f != fam) if fam in base else base + (fam,)))
                for fam in args.family}

    def timed(fam, smoothed):
        stark_tier1.SMOOTHED_DEFAULTS = smoothed
        return _ms_per_task(BASELINES[fam], tasks[fam])
    try:
        ref_times, times = timed_rounds(
            refs, {(fam, label): (lambda fam=fam, smoothed=smoothed: timed(fam, smoothed))
                   for fam in args.family for label, smoothed in variants[fam]}, args.rounds)
    finally:
        stark_tier1.SMOOTHED_DEFAULTS = base
    for rf in refs:
        print(f"Stone Soup particle filter on {rf}: {np.median(ref_times[rf]):.1f} ms/task CPU (median; "
              f"{', '.join(f'{r:.1f}' for r in ref_times[rf])} before, between and after {args.rounds} rounds "
              f"of the families; {args.ref_n} tasks)")
    print(f"{'family':32s} {'variant':10s} {'ms/task':>8s} {'PF/ours':>8s} {'range':>11s}")
    for fam in args.family:
        for label, _ in variants[fam]:
            each = round_ratios(ref_times[ref_family(fam)], times[fam, label])
            print(f"{fam:32s} {label:10s} {np.median(times[fam, label]):8.1f} {np.median(each):8.2f} "
                  f"{each.min():5.2f}-{each.max():<5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
