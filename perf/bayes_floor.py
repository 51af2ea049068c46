"""Is the default localisation baseline the Bayes posterior mean?  Compare it with a brute-force
posterior mean over a dense grid of the whole domain (701 x 701), on the same generated tasks.

Equal figures mean the adaptive-grid estimator is (numerically) the MMSE estimator, so no
solver can have a lower expected squared error on that generator.

Run:  python perf/bayes_floor.py [--family stark.localization.bearing] [--n 200] [--seed 1]
"""
from __future__ import annotations

import argparse

import numpy as np

from stsim.baselines import BASELINES
from stsim.baselines.stark_tier1 import position_loglik
from stsim.scoring.metrics import rmse, trimmed_rmse
from stsim.registry import generate_task


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="stark.localization.bearing",
                    choices=["stark.localization.range", "stark.localization.bearing",
                             "stark.localization.range_bearing"])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    g = np.linspace(0.0, 10.0, 701)
    xx, yy = np.meshgrid(g, g)
    grid = np.column_stack([xx.ravel(), yy.ravel()])
    ours, brute = [], []
    for i in range(args.n):
        task = generate_task(args.family, i, suite="stark-tier1", suite_seed=args.seed)
        est = np.array(BASELINES[args.family](task)[0].value)
        ll = position_loglik(task)(grid)
        w = np.exp(ll - ll.max())
        mean = w @ grid / w.sum()
        ours.append(float(np.hypot(*(est - task.answer))))
        brute.append(float(np.hypot(*(mean - task.answer))))
    print(f"{args.family}, n={args.n}, seed={args.seed}")
    print(f"  baseline     trimmed RMSE {trimmed_rmse(ours):.4f}  RMSE {rmse(ours):.4f}")
    print(f"  brute force  trimmed RMSE {trimmed_rmse(brute):.4f}  RMSE {rmse(brute):.4f}")


if __name__ == "__main__":
    main()
