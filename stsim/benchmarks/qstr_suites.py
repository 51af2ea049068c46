"""QSTRBench suites: ``qstrbench`` (base questions), ``qstrbench-extended`` (presentation
variants) and ``qstr-chains`` (multi-hop composition)."""
from __future__ import annotations

from ..generators.qstrbench import BASE_FAMILIES, CHAIN_FAMILIES, EXTENDED_FAMILIES
from .suites import Suite, register_suite

register_suite(Suite("qstrbench", "QSTRBench: converse, composition and conceptual-neighbourhood "
                     f"questions over nine calculi ({sum(BASE_FAMILIES.values())} questions).",
                     dict(BASE_FAMILIES), max_steps=None))
register_suite(Suite("qstrbench-extended", "QSTRBenchExtended: the questions in prefix/infix x "
                     "symbol/word/nonce, schematic and RCC-8 description variants "
                     f"({sum(EXTENDED_FAMILIES.values())} questions).",
                     dict(EXTENDED_FAMILIES), max_steps=None))
register_suite(Suite("qstr-chains", "Multi-hop composition chains (k = 2..10) over every calculus "
                     "with a composition table, 50 per calculus; gold by algebraic closure.",
                     {f: 50 for f in CHAIN_FAMILIES}, max_steps=None))
