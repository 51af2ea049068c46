"""Count near misses and exact decimal incidences in generated STARK tier-2 items (issue 14).

For each seed, runs ``stsim generate stark-tier2 --seed S`` (the CLI, as a user would) and,
on the printed coordinates of every spatial, DE-9IM and spatiotemporal item, counts:

* near misses: a vertex of one geometry closer than MIN_CLEARANCE (0.005) to the other
  without touching it exactly (and, of those, closer than 0.001, ArcGIS's default tolerance);
* point-in-segment items: a Point geometry inside a segment of the other geometry (not at a
  vertex);
* collinear items: a segment of one geometry sharing a piece of positive length with a
  segment of the other without being the same segment;
* non-vertex-touching items: a vertex of one polygon (or line) inside an edge of the other,
  with the pair touching (boundaries meet, interiors do not) and not counted above.

Usage: python scripts/tier2_edge_counts.py [--seeds 1-10] [--out-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from stsim.sim.shapes import holds, incidences, near_misses


def _pairs(task):
    i = task["inputs"]
    if "a" in i:
        return [(i["a"], i["b"])]
    return [({"type": "LineString", "coords": i["trajectory"]}, i["geometry"])]


def classify(task) -> set[str]:
    kinds = set()
    for a, b in _pairs(task):
        gaps = near_misses(a, b)
        if gaps:
            kinds.add("near_miss_below_0.005")
            if gaps[0] < 0.001:
                kinds.add("near_miss_below_0.001")
        inc = incidences(a, b)
        if inc["collinear_overlap"]:
            kinds.add("collinear")
        elif inc["vertex_in_segment"]:
            if "Point" in (a["type"], b["type"]):
                kinds.add("point_in_segment")
            elif holds(a, b, "touches"):
                kinds.add("non_vertex_touch")
            else:
                kinds.add("vertex_in_segment_other")
    return kinds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-10", help="seed range a-b (inclusive)")
    ap.add_argument("--out-dir", default=None, help="keep the generated files here")
    args = ap.parse_args(argv)
    lo, hi = (int(v) for v in args.seeds.split("-"))
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="tier2-edges-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    total, n_items = Counter(), 0
    for seed in range(lo, hi + 1):
        path = out_dir / f"stark-tier2-seed{seed}.jsonl"
        subprocess.run([sys.executable, "-m", "stsim", "generate", "stark-tier2", "--seed", str(seed),
                        "-o", str(path)], check=True)
        per, n = Counter(), 0
        for line in path.read_text().splitlines():
            t = json.loads(line)
            if t["family"] not in ("stark.relation.spatial", "stark.relation.de9im",
                                   "stark.relation.spatiotemporal"):
                continue
            n += 1
            for k in classify(t):
                per[k] += 1
                per[f"{k}:{t['family']}"] += 1
        n_items += n
        total.update(per)
        print(f"seed {seed}: {n} geometry items; " + ", ".join(f"{k} {v}" for k, v in sorted(per.items()) if ":" not in k))
    print(f"all seeds {lo}-{hi}: {n_items} geometry items")
    for k, v in sorted(total.items()):
        print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
