"""How large does `stsim fidelity`'s KS D get when nothing differs?

Replaces the release by 50 tasks per family from our own generator (another seed) and compares
them with 200 generated tasks (seed 5), as `stsim fidelity stark-tier1 --n 200 --seed 5` does
with the release; prints, per issue-15 feature group, the largest D of each of ``--reps`` draws.
docs/stark-tier1.md ("Fidelity report") quotes the result.

Usage: ``python scripts/fidelity_null.py [--reps 10]``
"""
from __future__ import annotations

import argparse

import numpy as np

from stsim.benchmarks.builtin_suites import STARK_TIER1
from stsim.benchmarks.fidelity import compare_features, task_features
from stsim.registry import generate_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    fams = [f for f in STARK_TIER1 if "tracking" in f or f == "stark.localization.proximity"]
    gen = {f: [task_features(generate_task(f, i, suite_seed=5)) for i in range(200)] for f in fams}
    worst: dict[str, list[float]] = {}
    for rep in range(args.reps):
        rng = np.random.default_rng(rep)
        groups: dict[str, list[float]] = {}
        for f in fams:
            ref = [task_features(generate_task(f, i, suite_seed=1000 + rep)) for i in range(50)]
            for row in compare_features(f, ref, gen[f], rng):
                if row.group:
                    groups.setdefault(row.group, []).append(row.d)
        for g, ds in groups.items():
            worst.setdefault(g, []).append(max(ds))
        print(rep, {g: round(max(ds), 3) for g, ds in sorted(groups.items())}, flush=True)
    for g, v in sorted(worst.items()):
        v = np.array(v)
        print(f"{g:16s} largest D: median {np.median(v):.3f}, below 0.2 in {int((v < 0.2).sum())} of {v.size}")


if __name__ == "__main__":
    main()
