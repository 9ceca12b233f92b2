"""Definitions of the built-in problems: their options, distributions and samplers.

Private to :mod:`varimp_core.problems.registry`, which parses specs and wraps these
definitions in the public :class:`~varimp_core.problems.registry.Problem`.  Each
definition maps a dictionary of validated options to variable names, an exact
distribution (when one exists) and a seeded sampler.

The definitions live in three modules, gathered here in :data:`PROBLEM_DEFS`:
:mod:`varimp_core.problems.options` (the ``key=value`` options),
:mod:`varimp_core.problems.discrete` (LED, XOR, SYM and Louppe's toy, with exact tables) and
:mod:`varimp_core.problems.sampled` (Madelon, Strobl and the datasets bundled
with scikit-learn, sampled only).
"""

from __future__ import annotations

from typing import Any

from varimp_core.problems.discrete import LedDef, SymDef, ToyDef, XorDef
from varimp_core.problems.sampled import (REAL_DATASETS, GaussDef, MadelonDef, RealDef,
                                          StroblDef)

__all__ = ["PROBLEM_DEFS"]


PROBLEM_DEFS: dict[str, Any] = {
    "led": LedDef(), "xor": XorDef(), "sym": SymDef(), "toy": ToyDef(), "madelon": MadelonDef(),
    "strobl": StroblDef(), "gauss": GaussDef(), **{name: RealDef(name) for name in REAL_DATASETS},
}
