"""Qualitative spatial and temporal calculi (QSTRBench): relations, converse, composition
tables, conceptual neighbourhoods, weak composition and algebraic closure."""
from .calculus import Calculus, CalculusError, Relation
from .catalogue import CALCULUS_KEYS, all_calculi, get_calculus
from .reasoner import Network, algebraic_closure

__all__ = ["Calculus", "CalculusError", "Relation", "CALCULUS_KEYS", "all_calculi", "get_calculus",
           "Network", "algebraic_closure"]
