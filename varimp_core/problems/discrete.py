"""Discrete built-in problems with an exact distribution: LED, XOR, SYM and Louppe's toy.

Private to :mod:`varimp_core.problems.registry` (through :mod:`varimp_core.problems.specs`).
Also holds :class:`ProblemDef`, the defaults every problem definition shares,
which :mod:`varimp_core.problems.sampled` builds on.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from varimp_core.problems.options import copies_pairs

__all__ = ["LED_SEGMENTS", "ProblemDef", "DiscreteDef", "LedDef", "XorDef", "SymDef", "ToyDef"]

# Louppe et al. (2013), Table 1: the i-th character is segment x_j for digit y = i.
LED_SEGMENTS = ("1011011111", "1000111011", "1111100111", "0011111011",
                "1010001010", "1101111111", "1011011011")


# -- discrete problems with an exact distribution ------------------------------
def fair_bits(k: int) -> np.ndarray:
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
            bits = fair_bits(k)
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

    def variables(self, o):
        """X1..X7, the copies named as the Masking page names a copy (X5', X5'' for two
        copies of X5), then the irrelevant bits X8, X9, ..."""
        copies = [f"X{seg}" + "'" * (i + 1) for seg, n in copies_pairs(o["copies"])
                  for i in range(n)]
        return (*(f"X{j}" for j in range(1, 8)), *copies,
                *(f"X{8 + j}" for j in range(o["irrelevant"])))

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
            flips = fair_bits(7)                     # all 128 flip patterns
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
        X = fair_bits(o["relevant"])
        parity = X.sum(axis=1) % 2
        w = np.full(len(X), 1.0 / len(X))
        return _flip_output(X, parity, w, o["noise"])

    def sample(self, o: dict, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """Rows of the base table up to 2^16 of them (the seeded samples of old links);
        beyond, the m bits are drawn directly (the table of 2^30 rows would not fit)."""
        if self.n_base_rows(o) <= 2**16:
            return super().sample(o, n, rng)
        m = o["relevant"]
        X = rng.integers(0, 2, size=(n, m + o["irrelevant"]), dtype=np.int64)
        y = X[:, :m].sum(axis=1) % 2
        if o["noise"] > 0:
            y = np.where(rng.random(n) < o["noise"], 1 - y, y)
        df = pd.DataFrame(X, columns=list(self.variables(o)))
        df["Y"] = y.astype(np.int64)
        return df

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
        X = fair_bits(2)
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


class ToyDef(DiscreteDef):
    """Louppe's thesis toy (section 7.2.3): three equally likely rows.

    ======  ====  ====  ===
    row     X1    X2    Y
    ======  ====  ====  ===
    1       0     0     0
    2       1     1     1
    3       2     1     1
    ======  ====  ====  ===

    X2 = Y and X1 takes three values.  :math:`H(Y) = \\log_2 3 - 2/3 = 0.9183` bits;
    both inputs carry all of it, so totally randomized multiway trees give each
    :math:`H(Y)/2 = 0.4591` bits, while scikit-learn's Extra-Trees at K = 1 (four
    distinct trees, probabilities 1/8, 1/8, 1/4, 1/2) give 0.3758 and 0.5425 bits.
    """

    def n_relevant(self, o):
        return 2

    def n_base_rows(self, o):
        return 3

    def base(self, o):
        X = np.array([[0, 0], [1, 1], [2, 1]], np.int8)
        return X, np.array([0, 1, 1]), np.full(3, 1.0 / 3)

    def exact(self, o: dict):
        X, y, w, x_labels, y_labels = super().exact(o)
        return X, y, w, ((0, 1, 2),) + tuple(x_labels[1:]), y_labels

    def describe(self, o):
        text = ("Louppe's toy (thesis, section 7.2.3): three equally likely rows with "
                "X1 = 0, 1, 2, X2 = Y and Y = 0, 1, 1; its extra-trees at K = 1 are four "
                "trees.")
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
    bits = d.variables(o)[d.n_relevant(o):]
    names = bits[0] if k == 1 else f"{bits[0]}..{bits[-1]}"
    return f" {names}: {k} irrelevant fair bit{'s' if k > 1 else ''}."
