"""Cost of reading a very long model reply against a reply at the scan limit, in the same run.

The readers of a reply (the rubric, the refusal reader, the lenient reader that ``stsim score``
counts with) are regular expressions over the text; before the limit
:data:`stsim.answers.MAX_REPLY_CHARS` a 50 MB reply took ~10 s CPU (``python -m cProfile -m
stsim.cli score``: the refusal reader 3.7 s, ``normalise_typography`` 3.2 s, the STARK rubric
1.3 s), 50 times a 1 MB one.  Prints the CPU seconds of ``parse_answer`` + ``lenient_read`` on a
reply of ``--mb`` MB (no answer block: every reader scans it all, the slowest case) and on one
of ``MAX_REPLY_CHARS`` characters, and their ratio: about 1 when long replies cost what the
limit allows.  Exit 1 when the ratio is above ``--max-ratio`` (3).

Run:  python perf/long_reply.py [--mb 50] [--repeats 3] [--max-ratio 3]
"""
from __future__ import annotations

import argparse
import sys

from _common import timed_each

from stsim.answers import MAX_REPLY_CHARS, lenient_read, parse_answer


def _read(text: str) -> None:
    parse_answer(text, task_id="t", step=None, answer_format="point")
    lenient_read(text, "point")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=50.0, help="length of the long reply, millions of characters")
    ap.add_argument("--repeats", type=int, default=3, help="reads of each reply (the median is used)")
    ap.add_argument("--max-ratio", type=float, default=3.0, help="largest acceptable long / limit ratio")
    args = ap.parse_args(argv)
    unit = "The sensors sit at various positions, so I reason about each of them in turn. "
    at_limit = (unit * (MAX_REPLY_CHARS // len(unit) + 1))[:MAX_REPLY_CHARS]
    long = (unit * (int(args.mb * 1e6) // len(unit) + 1))[:int(args.mb * 1e6)]
    ref = sorted(timed_each(_read, [at_limit] * args.repeats)[1])[args.repeats // 2]
    big = sorted(timed_each(_read, [long] * args.repeats)[1])[args.repeats // 2]
    ratio = big / ref
    print(f"reply of {len(long):,} characters: {big:.3f} s CPU; at the limit ({MAX_REPLY_CHARS:,}): "
          f"{ref:.3f} s; ratio {ratio:.2f} (length ratio {len(long) / MAX_REPLY_CHARS:.0f})")
    if ratio > args.max_ratio:
        print(f"MISSED: a long reply costs {ratio:.1f}x one at the limit (at most {args.max_ratio:g}x)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
