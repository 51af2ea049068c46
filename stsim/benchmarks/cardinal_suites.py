"""Suites of the cardinal-direction benchmark (Cohn & Blackwell, seed 002).

* ``cardinal`` -- a quick, balanced core: the first 96 questions of ``cardinal.large`` (each
  template x heading x side once, locomotion and person rotating) and the first 16 of
  ``cardinal.t4_from_agent`` (each heading x side once);
* ``cardinal-large`` -- all 5,760 questions of the paper's *large* set (T1-T6);
* ``cardinal-t4-agent`` -- all 960 questions of the disambiguated T4.
"""
from __future__ import annotations

from ..generators.cardinal import LARGE_SIZE, T4_FROM_AGENT_SIZE
from .suites import Suite, register_suite

register_suite(Suite("cardinal", "Cardinal directions, quick balanced core: T1-T6 x 8 headings x "
                     "2 sides (96) + T4-from-agent (16).",
                     {"cardinal.large": 96, "cardinal.t4_from_agent": 16}))
register_suite(Suite("cardinal-large", f"Cardinal directions (Cohn & Blackwell): all {LARGE_SIZE:,} "
                     "templated questions T1-T6.", {"cardinal.large": LARGE_SIZE}))
register_suite(Suite("cardinal-t4-agent", f"Cardinal directions: T4 asked 'from' the agent, "
                     f"all {T4_FROM_AGENT_SIZE} questions.", {"cardinal.t4_from_agent": T4_FROM_AGENT_SIZE}))
