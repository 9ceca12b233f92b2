"""Discrete data as a table of distinct rows with weights.

Every discrete computation in varimp (entropies, Eqn 3, the exact tree
recursion, the multiway forest) runs on a :class:`DiscreteTable`: integer
codes for the inputs and the output, one row per distinct configuration and a
weight per row.  The weight is a probability when the table is an exact
distribution (``exact=True``, weights sum to 1) and a count when it is a sample.
Cost then scales with the number of distinct configurations, not with N.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["DiscreteTable", "compress_rows"]


def compress_rows(codes: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge identical rows of an integer matrix, summing their weights.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_columns)
        Non-negative integer codes.
    weight : ndarray of shape (n_rows,)
        Weight of each row.

    Returns
    -------
    unique : ndarray of shape (n_distinct, n_columns)
        Distinct rows, in lexicographic order.
    total : ndarray of shape (n_distinct,)
        Summed weight of each distinct row; rows of zero total weight are dropped.
    """
    codes = np.asarray(codes, dtype=np.int64)
    weight = np.asarray(weight, dtype=float)
    if codes.shape[0] == 0:
        return codes.reshape(0, codes.shape[1] if codes.ndim == 2 else 0), weight[:0]
    span = codes.max(axis=0).astype(float) + 1 if codes.size else np.ones(codes.shape[1])
    # the product of the spans in log2: with hundreds of columns (Madelon's 500) it passes
    # 1.8e308 and np.prod warned of an overflow in the logs
    if codes.ndim == 2 and codes.shape[1] and float(np.sum(np.log2(span))) < 62:
        # one int64 key per row: a 1-D unique is an order of magnitude faster than axis=0
        strides = np.concatenate([np.cumprod(span[::-1])[::-1][1:], [1]]).astype(np.int64)
        keys, inverse = np.unique(codes @ strides, return_inverse=True)
        unique = (keys[:, None] // strides) % span.astype(np.int64)
    else:
        unique, inverse = np.unique(codes, axis=0, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=weight, minlength=unique.shape[0])
    keep = total > 0
    return unique[keep], total[keep]


@dataclass(frozen=True)
class DiscreteTable:
    """Distinct rows of discrete inputs and a discrete output, with weights.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), dtype int64
        Codes ``0 .. n_levels[j] - 1`` of each input.
    y : ndarray of shape (n_rows,), dtype int64
        Codes ``0 .. n_classes - 1`` of the output.
    weight : ndarray of shape (n_rows,)
        Probability of each row (``exact=True``) or its count in a sample.
        Rows of weight 0 are dropped on construction (after the default
        labels are read from them): a configuration of probability 0 is not
        a row of the distribution.
    variables : tuple of str
        Input names, ``X1 .. Xp`` for built-in problems.
    target : str
        Output name.
    x_labels : tuple of tuple
        The value each code stands for, per input.
    y_labels : tuple
        The value each output code stands for.
    exact : bool
        True when the weights are the true distribution, False for a sample
        (plug-in estimates).
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    variables: tuple[str, ...]
    target: str = "Y"
    x_labels: tuple[tuple, ...] = field(default=())
    y_labels: tuple = field(default=())
    exact: bool = False

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=np.int64)
        y = np.asarray(self.y, dtype=np.int64).ravel()
        w = np.asarray(self.weight, dtype=float).ravel()
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array of codes, got shape {X.shape}.")
        if not (X.shape[0] == y.shape[0] == w.shape[0]):
            raise ValueError(
                f"X, y and weight must have the same number of rows, got "
                f"{X.shape[0]}, {y.shape[0]} and {w.shape[0]}."
            )
        if len(self.variables) != X.shape[1]:
            raise ValueError(
                f"{len(self.variables)} variable names were given for {X.shape[1]} columns."
            )
        if X.size and X.min() < 0 or y.size and y.min() < 0:
            raise ValueError("Codes must be non-negative integers.")
        if np.any(~np.isfinite(w)) or np.any(w < 0):
            raise ValueError("Row weights must be finite and non-negative.")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "weight", w)
        object.__setattr__(self, "variables", tuple(str(v) for v in self.variables))
        if not self.x_labels:
            labels = tuple(tuple(range(int(X[:, j].max()) + 1 if X.shape[0] else 0))
                           for j in range(X.shape[1]))
            object.__setattr__(self, "x_labels", labels)
        else:
            object.__setattr__(self, "x_labels", tuple(tuple(lv) for lv in self.x_labels))
        if not self.y_labels:
            object.__setattr__(self, "y_labels", tuple(range(int(y.max()) + 1 if y.size else 0)))
        else:
            object.__setattr__(self, "y_labels", tuple(self.y_labels))
        # Rows of weight 0 carry no probability: keep them and a node that only they reach
        # looks non-empty and a variable that only they vary looks non-constant (issue 14).
        # The levels were read above from every row, so a level seen only in a dropped row
        # stays a level (of probability 0), as in compressed().
        positive = w > 0
        if not positive.all():
            object.__setattr__(self, "X", X[positive])
            object.__setattr__(self, "y", y[positive])
            object.__setattr__(self, "weight", w[positive])

    # -- shape -------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """Number of inputs p."""
        return self.X.shape[1]

    @property
    def n_rows(self) -> int:
        """Number of distinct rows."""
        return self.X.shape[0]

    @property
    def n_levels(self) -> np.ndarray:
        """Number of levels of each input, ndarray of shape (n_features,)."""
        return np.array([max(len(lv), 1) for lv in self.x_labels], dtype=np.int64)

    @property
    def n_classes(self) -> int:
        """Number of output classes."""
        return max(len(self.y_labels), 1)

    @property
    def total_weight(self) -> float:
        """Sum of the weights: 1 for an exact table, N for a sample."""
        return float(self.weight.sum())

    @property
    def probabilities(self) -> np.ndarray:
        """Row weights normalised to sum to 1."""
        return self.weight / self.weight.sum()

    # -- construction ------------------------------------------------------
    def compressed(self) -> "DiscreteTable":
        """Return the same table with identical rows merged."""
        joint = np.column_stack([self.X, self.y])
        rows, w = compress_rows(joint, self.weight)
        return DiscreteTable(rows[:, :-1], rows[:, -1], w, self.variables, self.target,
                             self.x_labels, self.y_labels, self.exact)

    def subset(self, columns) -> "DiscreteTable":
        """Keep only the inputs at the given indices (rows merged again)."""
        columns = [int(c) for c in columns]
        return DiscreteTable(self.X[:, columns], self.y, self.weight,
                             tuple(self.variables[c] for c in columns), self.target,
                             tuple(self.x_labels[c] for c in columns), self.y_labels,
                             self.exact).compressed()

    @classmethod
    def from_codes(cls, X, y, *, variables=None, target="Y", weight=None, x_labels=(),
                   y_labels=(), exact=False) -> "DiscreteTable":
        """Build a compressed table from per-sample codes (one row per sample)."""
        X = np.asarray(X, dtype=np.int64)
        if X.ndim == 1:
            X = X[:, None]
        if variables is None:
            variables = tuple(f"X{j + 1}" for j in range(X.shape[1]))
        w = np.ones(X.shape[0]) if weight is None else np.asarray(weight, dtype=float)
        return cls(X, np.asarray(y, dtype=np.int64), w, tuple(variables), target,
                   x_labels, y_labels, exact).compressed()

    def expand(self) -> tuple[np.ndarray, np.ndarray]:
        """Return per-sample codes ``(X, y)`` by repeating each row ``weight`` times.

        Only for tables whose weights are whole counts.
        """
        counts = np.rint(self.weight).astype(np.int64)
        if not np.allclose(counts, self.weight):
            raise ValueError("expand() needs whole-number counts; this table holds probabilities.")
        return np.repeat(self.X, counts, axis=0), np.repeat(self.y, counts)

    def to_frame(self):
        """Return a pandas DataFrame of the labelled rows with a ``weight`` column."""
        import pandas as pd

        data = {v: [self.x_labels[j][c] for c in self.X[:, j]]
                for j, v in enumerate(self.variables)}
        data[self.target] = [self.y_labels[c] for c in self.y]
        data["weight"] = self.weight
        return pd.DataFrame(data)

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DiscreteTable":
        """The DiscreteTable that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)
