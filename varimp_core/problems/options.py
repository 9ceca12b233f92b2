"""Options of the built-in problems: one :class:`Option` per ``key=value`` of a spec.

Read by :mod:`varimp_core.problems.registry` (which parses specs with
:data:`OPTION_SPECS`) and by the problem definitions.  Each option parses and validates its
text into a value; ``copies`` values are kept in a canonical form that
:func:`copies_pairs` turns back into (segment, count) pairs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Option", "OPTION_SPECS", "copies_pairs"]


# -- options -----------------------------------------------------------------
@dataclass(frozen=True)
class Option:
    """One ``key=value`` option of a problem spec."""

    key: str
    default: Any
    type: str                       # "int", "float", "choice" or "copies"
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False          # the lower bound itself is excluded
    choices: tuple[str, ...] = ()

    def allowed(self) -> str:
        """Describe the allowed values in a few words."""
        if self.type == "choice":
            return "one of " + ", ".join(self.choices)
        if self.type == "copies":
            return ("a list like 'X5:2' or 'X5:2+X2:1' (a segment X1..X7, a colon and "
                    "a count from 1 to 50)")
        kind = "a whole number" if self.type == "int" else "a number"
        if self.low_open:
            return f"{kind} greater than {_num(self.low)} and at most {_num(self.high)}"
        return f"{kind} from {_num(self.low)} to {_num(self.high)}"

    def parse(self, text: str, problem: str) -> Any:
        """Convert ``text`` to the option's value or raise ``ValueError``."""
        text = text.strip()
        bad = ValueError(f"Option '{self.key}' of '{problem}' must be {self.allowed()}, "
                         f"got {text!r}.")
        if self.type == "choice":
            if text.lower() not in self.choices:
                raise bad
            return text.lower()
        if self.type == "copies":
            return _parse_copies(text, bad)
        try:
            value = int(text) if self.type == "int" else float(text)
        except ValueError:
            raise bad from None
        if not math.isfinite(value) or value < self.low or value > self.high \
                or (self.low_open and value == self.low):
            raise bad
        return value


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _parse_copies(text: str, bad: ValueError) -> str:
    """Canonical form of a ``copies`` value: segments sorted, counts merged."""
    if not text:
        return ""
    counts: dict[int, int] = {}
    for part in text.split("+"):
        m = re.fullmatch(r"\s*[xX]([1-7])\s*:\s*(\d{1,3})\s*", part)
        if m is None or not 1 <= int(m.group(2)) <= 50:
            raise bad
        seg = int(m.group(1))
        counts[seg] = counts.get(seg, 0) + int(m.group(2))
    if sum(counts.values()) > 100:
        raise bad
    return "+".join(f"X{s}:{counts[s]}" for s in sorted(counts))


def copies_pairs(value: str) -> list[tuple[int, int]]:
    """``"X2:1+X5:2"`` -> ``[(2, 1), (5, 2)]`` (segment, number of copies)."""
    if not value:
        return []
    return [(int(a[1:]), int(b)) for a, b in (p.split(":") for p in value.split("+"))]


_IRR = "Number of independent fair binary variables appended (irrelevant to Y)."
_NOISE_Y = "Probability of flipping Y."
OPTION_SPECS: dict[str, tuple[Option, ...]] = {
    "led": (
        Option("irrelevant", 0, "int", _IRR, 0, 1000),
        Option("noise", 0.0, "float", "Probability of flipping each of the 7 segments "
               "independently (Breiman's LED uses 0.1).", 0, 0.5),
        Option("copies", "", "copies", "Exact copies of segments, e.g. X5:2 adds two "
               "copies of X5, named X5' and X5'' as the Masking page names a copy; several "
               "joined by '+'."),
    ),
    "xor": (
        Option("relevant", 2, "int", "Number of fair bits whose parity is Y.", 1, 30),
        Option("irrelevant", 0, "int", _IRR, 0, 1000),
        Option("noise", 0.0, "float", _NOISE_Y, 0, 0.5),
    ),
    "sym": (
        Option("irrelevant", 0, "int", _IRR, 0, 1000),
        Option("noise", 0.0, "float", _NOISE_Y, 0, 0.5),
    ),
    "toy": (
        Option("irrelevant", 0, "int", _IRR, 0, 1000),
    ),
    "madelon": (
        Option("samples", 1500, "int", "Number of rows to draw.", 10, 1_000_000),
        Option("irrelevant", 480, "int", "Number of Gaussian probes (irrelevant features).",
               0, 20_000),
        Option("n_classes", 2, "int", "Number of classes.", 2, 8),
        Option("copy_noise", 0.5, "float", "Standard deviation of the noise added to each "
               "copy, as a multiple of the copied column's standard deviation.", 0, 10,
               low_open=True),
        Option("separation", 2.0, "float", "Half the side of the hypercube whose vertices are "
               "the cluster centres (make_classification's class_sep). 2 makes a forest on "
               "the 20 relevant inputs about as accurate (~0.85-0.9) as on Guyon's MADELON.",
               0, 100, low_open=True),
    ),
    "strobl": (
        Option("task", "classification", "choice", "Classification (logistic link) or "
               "regression (Gaussian noise).", choices=("classification", "regression")),
        Option("samples", 1000, "int", "Number of rows to draw.", 10, 1_000_000),
        Option("seed", 0, "int", "Seed choosing the 5 relevant features among the first "
               "ten.", 0, 2**32 - 1),
    ),
    "gauss": (
        Option("samples", 30, "int", "Number of rows to draw.", 4, 1_000_000),
        Option("noise", 0.5, "float", "Standard deviation of the noise added before the "
               "threshold.", 0, 10),
    ),
}
