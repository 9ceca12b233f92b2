"""Definitions of the built-in problems: their options, distributions and samplers.

Private to :mod:`varimp_core.problems`, which parses specs and wraps these
definitions in the public :class:`~varimp_core.problems.Problem`.  Each
definition maps a dictionary of validated options to variable names, an exact
distribution (when one exists) and a seeded sampler.

The definitions live in three modules, gathered here in :data:`PROBLEM_DEFS`:
:mod:`varimp_core._problem_options` (the ``key=value`` options),
:mod:`varimp_core._problem_discrete` (LED, XOR and SYM, with exact tables) and
:mod:`varimp_core._problem_sampled` (Madelon, Strobl and the datasets bundled
with scikit-learn, sampled only).
"""

from __future__ import annotations

from typing import Any

from ._problem_discrete import LED_SEGMENTS, LedDef, SymDef, XorDef
from ._problem_options import OPTION_SPECS
from ._problem_sampled import _REAL, MadelonDef, RealDef, StroblDef, strobl_signal_variance

__all__ = ["OPTION_SPECS", "PROBLEM_DEFS", "LED_SEGMENTS", "strobl_signal_variance"]


PROBLEM_DEFS: dict[str, Any] = {
    "led": LedDef(), "xor": XorDef(), "sym": SymDef(), "madelon": MadelonDef(),
    "strobl": StroblDef(), **{name: RealDef(name) for name in _REAL},
}
