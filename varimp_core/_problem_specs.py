"""Definitions of the built-in problems: their options, distributions and samplers.

Private to :mod:`varimp_core.problems`, which parses specs and wraps these
definitions in the public :class:`~varimp_core.problems.Problem`.  Each
definition maps a dictionary of validated options to variable names, an exact
distribution (when one exists) and a seeded sampler.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["OPTION_SPECS", "PROBLEM_DEFS", "LED_SEGMENTS"]

# Louppe et al. (2013), Table 1: the i-th character is segment x_j for digit y = i.
LED_SEGMENTS = ("1011011111", "1000111011", "1111100111", "0011111011",
                "1010001010", "1101111111", "1011011011")


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
               "copies of X5; several joined by '+'."),
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
}


# -- discrete problems with an exact distribution ------------------------------
def _fair_bits(k: int) -> np.ndarray:
    """All ``2**k`` patterns of k bits, shape (2**k, k), in lexicographic order."""
    return ((np.arange(2**k)[:, None] >> np.arange(k - 1, -1, -1)) & 1).astype(np.int8)


class ProblemDef:
    """Defaults shared by every problem definition."""

    discrete = False            # every input is discrete by construction
    has_distribution = False    # an exact distribution table can be built
    task = "classification"
    target = "Y"
    no_exact = ""

    def task_of(self, o: dict) -> str:
        return self.task

    def details(self, o: dict) -> dict:
        return {}


class DiscreteDef(ProblemDef, ABC):
    """A problem given by a small base table plus ``irrelevant`` fair bits."""

    discrete = True
    has_distribution = True

    @abstractmethod
    def base(self, o: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact distribution of the relevant part: codes X, y and probabilities."""

    @abstractmethod
    def n_relevant(self, o: dict) -> int:
        """Number of relevant inputs (before the irrelevant bits)."""

    @abstractmethod
    def n_base_rows(self, o: dict) -> int:
        """Rows of the relevant part's exact table."""

    def variables(self, o: dict) -> tuple[str, ...]:
        return tuple(f"X{j + 1}" for j in range(self.n_relevant(o) + o["irrelevant"]))

    def relevant(self, o: dict) -> tuple[str, ...]:
        return self.variables(o)[: self.n_relevant(o)]

    def default_samples(self, o: dict) -> int:
        return 1000

    def exact_rows(self, o: dict) -> int:
        return self.n_base_rows(o) * 2 ** o["irrelevant"]

    def y_labels(self, o: dict) -> tuple:
        return (0, 1)

    def exact(self, o: dict):
        X, y, w = self.base(o)
        k = o["irrelevant"]
        if k:
            bits = _fair_bits(k)
            X = np.hstack([np.repeat(X, len(bits), axis=0), np.tile(bits, (len(X), 1))])
            y = np.repeat(y, len(bits))
            w = np.repeat(w, len(bits)) / len(bits)
        x_labels = ((0, 1),) * X.shape[1]
        return X, y, w, x_labels, self.y_labels(o)

    def sample(self, o: dict, n: int, rng: np.random.Generator) -> pd.DataFrame:
        X, y, w = self.base(o)
        idx = rng.choice(len(w), size=n, p=w / w.sum())
        cols = [X[idx].astype(np.int64)]
        if o["irrelevant"]:
            cols.append(rng.integers(0, 2, size=(n, o["irrelevant"]), dtype=np.int64))
        df = pd.DataFrame(np.hstack(cols), columns=list(self.variables(o)))
        df["Y"] = y[idx].astype(np.int64)
        return df


class LedDef(DiscreteDef):
    def n_relevant(self, o):
        return 7 + sum(n for _, n in copies_pairs(o["copies"]))

    def n_base_rows(self, o):
        return 10 if o["noise"] == 0 else 10 * 2**7

    def y_labels(self, o):
        return tuple(range(10))

    def base(self, o):
        digits = np.array([[int(s[d]) for s in LED_SEGMENTS] for d in range(10)], np.int8)
        q = o["noise"]
        if q == 0:
            X, y, w = digits, np.arange(10), np.full(10, 0.1)
        else:
            flips = _fair_bits(7)                     # all 128 flip patterns
            n_flip = flips.sum(axis=1)
            p_flip = q**n_flip * (1 - q) ** (7 - n_flip)
            X = (np.repeat(digits, 128, axis=0) ^ np.tile(flips, (10, 1))).astype(np.int8)
            y = np.repeat(np.arange(10), 128)
            w = np.tile(p_flip, 10) * 0.1
        extra = [X[:, seg - 1] for seg, n in copies_pairs(o["copies"]) for _ in range(n)]
        if extra:
            X = np.column_stack([X, *extra])
        return X, y, w

    def details(self, o):
        names, copy_of, j = self.variables(o), {}, 7
        for seg, n in copies_pairs(o["copies"]):
            for _ in range(n):
                copy_of[names[j]] = f"X{seg}"
                j += 1
        return {"copy_of": copy_of}

    def describe(self, o):
        text = ("Seven-segment LED digits (Louppe et al. 2013, Table 1): Y is a digit 0-9 "
                "drawn uniformly and X1..X7 are its lit segments.")
        if o["noise"]:
            text += f" Each segment is flipped with probability {o['noise']:g}."
        copy_of = self.details(o)["copy_of"]
        if copy_of:
            text += " " + ", ".join(f"{a} copies {b}" for a, b in copy_of.items()) + "."
        return text + _irrelevant_text(self, o)


class XorDef(DiscreteDef):
    def n_relevant(self, o):
        return o["relevant"]

    def n_base_rows(self, o):
        return 2 ** o["relevant"] * (2 if o["noise"] > 0 else 1)

    def base(self, o):
        X = _fair_bits(o["relevant"])
        parity = X.sum(axis=1) % 2
        w = np.full(len(X), 1.0 / len(X))
        return _flip_output(X, parity, w, o["noise"])

    def describe(self, o):
        m = o["relevant"]
        text = (f"XOR (Sutera 2013): Y is the parity of the {m} fair bits X1..X{m}; each is "
                "useless alone and all are needed together.")
        if o["noise"]:
            text += f" Y is flipped with probability {o['noise']:g}."
        return text + _irrelevant_text(self, o)


class SymDef(DiscreteDef):
    def n_relevant(self, o):
        return 2

    def n_base_rows(self, o):
        return 8 if o["noise"] > 0 else 6

    def base(self, o):
        X = _fair_bits(2)
        p1 = np.array([0.0, 0.5, 0.5, 1.0])          # P(Y=1 | X1, X2), Sutera Table 3.26
        q = o["noise"]
        p1 = p1 * (1 - q) + (1 - p1) * q
        X2 = np.repeat(X, 2, axis=0)
        y = np.tile([0, 1], 4)
        w = 0.25 * np.column_stack([1 - p1, p1]).ravel()
        keep = w > 0
        return X2[keep], y[keep], w[keep]

    def describe(self, o):
        text = ("SYM (Sutera 2013): X1, X2 are fair bits; Y = X1 when X1 = X2, otherwise a "
                "fair coin, so each is informative alone and more so together.")
        if o["noise"]:
            text += f" Y is flipped with probability {o['noise']:g}."
        return text + _irrelevant_text(self, o)


def _flip_output(X, y, w, q):
    if q == 0:
        return X, y, w
    X2 = np.repeat(X, 2, axis=0)
    y2 = np.column_stack([y, 1 - y]).ravel()
    w2 = np.column_stack([w * (1 - q), w * q]).ravel()
    return X2, y2, w2


def _irrelevant_text(d: DiscreteDef, o: dict) -> str:
    k = o["irrelevant"]
    if not k:
        return ""
    first = d.n_relevant(o) + 1
    names = f"X{first}" if k == 1 else f"X{first}..X{first + k - 1}"
    return f" {names}: {k} irrelevant fair bit{'s' if k > 1 else ''}."


# -- continuous or large problems without an exact distribution ----------------
class MadelonDef(ProblemDef):
    no_exact = "'madelon' has no exact distribution (its inputs are continuous)"

    def variables(self, o):
        return tuple(f"X{j + 1}" for j in range(20 + o["irrelevant"]))

    def relevant(self, o):
        return self.variables(o)[:20]

    def default_samples(self, o):
        return o["samples"]

    def details(self, o):
        return {"informative": self.variables(o)[:5], "redundant": self.variables(o)[5:10],
                "noisy_copy_of": {f"X{11 + j}": f"X{1 + j}" for j in range(10)}}

    def describe(self, o):
        return ("Madelon-like data (Guyon et al.): 32 Gaussian clusters on the vertices of a "
                "5-cube (X1..X5), randomly labelled, so Y depends on X1..X5 jointly; X6..X10 "
                "are linear combinations of them and X11..X20 are noisy copies of X1..X10; "
                f"{o['irrelevant']} Gaussian probes follow.")

    def sample(self, o, n, rng):
        """Guyon's MADELON design, written out rather than taken from ``make_classification``.

        The 32 vertices of :math:`\\{-1, 1\\}^5` are the cluster centres and each
        gets a *random* label (balanced over the classes); a cluster's points are
        :math:`c + Z A_c` with :math:`Z \\sim N(0, I_5)` and a random matrix
        :math:`A_c` of U(-1, 1) entries; X6..X10 are :math:`X_{1..5} B` with
        another such B; 1% of labels are redrawn at random.
        ``make_classification(n_informative=5, n_clusters_per_class=16)`` cannot
        be used here: with :math:`2^5` clusters it takes the vertices in sorted
        order and labels them alternately, so Y depends on X5 alone.
        """
        k, bits = o["n_classes"], 5
        centres = o["separation"] * (2.0 * _fair_bits(bits) - 1.0)                     # (32, 5)
        n_clusters = centres.shape[0]
        labels = rng.permutation(np.arange(n_clusters) % k)
        cluster = rng.permutation(np.arange(n) % n_clusters)          # equal sizes
        mix = rng.uniform(-1.0, 1.0, size=(n_clusters, bits, bits))
        informative = np.einsum("ni,nij->nj", rng.normal(size=(n, bits)), mix[cluster])
        informative += centres[cluster]
        redundant = informative @ rng.uniform(-1.0, 1.0, size=(bits, bits))
        X = np.hstack([informative, redundant])
        y = labels[cluster]
        flip = rng.random(n) < 0.01
        y[flip] = rng.integers(k, size=int(flip.sum()))
        std = X.std(axis=0)
        std = np.where(std > 0, std, 1.0)   # never an exact repeat, even for tiny samples
        copies = X + rng.normal(size=X.shape) * (o["copy_noise"] * std)
        probes = rng.normal(size=(n, o["irrelevant"]))
        df = pd.DataFrame(np.hstack([X, copies, probes]), columns=list(self.variables(o)))
        df["Y"] = y.astype(np.int64)
        return df


class StroblDef(ProblemDef):
    discrete = True
    no_exact = ("'strobl' has no exact distribution table (50 features with 2 to 51 "
                "levels give about 10^65 rows)")

    def task_of(self, o):
        return o["task"]

    def variables(self, o):
        return tuple(f"X{j + 1}" for j in range(50))

    def relevant(self, o):
        return self.variables(o)[:5]

    def default_samples(self, o):
        return o["samples"]

    def details(self, o):
        order = _strobl_order(o["seed"])
        names = self.variables(o)
        return {"original_index": dict(zip(names, order)),
                "n_levels": {v: j + 1 for v, j in zip(names, order)},
                "relevant_original": order[:5]}

    def describe(self, o):
        s = ", ".join(str(j) for j in _strobl_order(o["seed"])[:5])
        return ("Li et al. (2019) simulation after Strobl et al.: 50 independent discrete "
                "features, the j-th uniform on 0..j; Y depends on the features with "
                f"j = {s} (renamed X1..X5), so X6..X50 are irrelevant despite having up to "
                f"51 levels ({o['task']}).")

    def sample(self, o, n, rng):
        order = _strobl_order(o["seed"])
        X = np.column_stack([rng.integers(0, j + 1, size=n) for j in order])
        signal = (X[:, :5] / np.array(order[:5], dtype=float)).sum(axis=1)  # sum X_j / j
        if o["task"] == "classification":
            prob = 1.0 / (1.0 + np.exp(-(2.0 / 5.0 * signal - 1.0)))       # Li 2019, sec. 4
            y = (rng.random(n) < prob).astype(np.int64)
        else:
            sd = 10.0 * math.sqrt(strobl_signal_variance(order[:5]))       # 100 * Var
            y = signal / 5.0 + rng.normal(scale=sd, size=n)
        df = pd.DataFrame(X.astype(np.int64), columns=list(self.variables(o)))
        df["Y"] = y
        return df


@lru_cache(maxsize=64)
def _strobl_order(seed: int) -> tuple[int, ...]:
    """Original indices j: the 5 relevant (sorted) first, then the 45 others."""
    chosen = np.random.default_rng(seed).choice(10, size=5, replace=False) + 1
    relevant = sorted(int(j) for j in chosen)
    return tuple(relevant + [j for j in range(1, 51) if j not in relevant])


def strobl_signal_variance(relevant: tuple[int, ...]) -> float:
    """Exact ``Var((1/5) sum_{j in S} X_j / j)`` for independent X_j uniform on 0..j.

    ``Var(X_j) = ((j + 1)**2 - 1) / 12 = j (j + 2) / 12``, so
    ``Var(X_j / j) = (j + 2) / (12 j)``.
    """
    return sum((j + 2) / (12.0 * j) for j in relevant) / len(relevant) ** 2


# -- real datasets bundled with scikit-learn -------------------------------------
_REAL = {
    "iris": ("classification", "Fisher's iris: 150 flowers, 4 measurements, 3 species."),
    "wine": ("classification", "Wine recognition: 178 wines, 13 chemical measurements, "
             "3 cultivars."),
    "breast_cancer": ("classification", "Wisconsin breast cancer: 569 tumours, 30 features "
                      "of cell nuclei, malignant or benign."),
    "digits": ("classification", "Handwritten digits: 1,797 images of 8x8 pixel "
               "intensities (0-16), 10 classes."),
    "diabetes": ("regression", "Diabetes: 442 patients, 10 standardised baseline "
                 "variables, disease progression after one year (regression)."),
}


@lru_cache(maxsize=8)
def _load_real(name: str) -> pd.DataFrame:
    import sklearn.datasets

    frame = getattr(sklearn.datasets, f"load_{name}")(as_frame=True).frame
    frame.columns = [str(c) for c in frame.columns]
    return frame


class RealDef(ProblemDef):
    target = "target"

    def __init__(self, name: str):
        self.name = name
        self.task, self.text = _REAL[name]
        self.no_exact = f"'{name}' has no exact distribution (it is a finite real dataset)"

    def variables(self, o):
        return tuple(c for c in _load_real(self.name).columns if c != "target")

    def relevant(self, o):
        return None

    def default_samples(self, o):
        return len(_load_real(self.name))

    def describe(self, o):
        return self.text + " Bundled with scikit-learn."

    def sample(self, o, n, rng):
        frame = _load_real(self.name)
        if n >= len(frame):
            return frame.copy()
        idx = np.sort(rng.choice(len(frame), size=n, replace=False))
        return frame.iloc[idx].reset_index(drop=True)


PROBLEM_DEFS: dict[str, Any] = {
    "led": LedDef(), "xor": XorDef(), "sym": SymDef(), "madelon": MadelonDef(),
    "strobl": StroblDef(), **{name: RealDef(name) for name in _REAL},
}
