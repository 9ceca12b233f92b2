"""Small tables for the core tests, written out by hand from the papers."""

import itertools

import numpy as np

from varimp_core.data.table import DiscreteTable

# Louppe et al. (2013), Table 1: segment values for y = 0..9.
LED_SEGMENTS = ("1011011111", "1000111011", "1111100111", "0011111011", "1010001010",
                "1101111111", "1011011011")
# Louppe et al. (2013), Table 2: the column "Eqn. 3" and the columns K = 1..7 (10,000
# randomized trees), truncated to 3 decimals by the paper, typed here from the paper's text
# (its Table 2 block is in tests/data/louppe2013_table2_text.txt) and not taken from
# the core, so that the tests comparing the app's paper column with these values are
# independent of the app.  The text interleaves the columns "Eqn. 3" and "K = 7"; Eqn. 3 is
# the one that agrees with K = 1 (Theorem 1).  The paper prints
# 3.321 = log2 10 under every column (the truncated entries add up to 3.317..3.319).
TABLE2_EQN3 = [0.412, 0.581, 0.531, 0.542, 0.656, 0.225, 0.372]
TABLE2 = {
    1: [0.414, 0.583, 0.532, 0.543, 0.658, 0.221, 0.368],
    2: [0.362, 0.663, 0.512, 0.525, 0.731, 0.140, 0.385],
    3: [0.327, 0.715, 0.496, 0.484, 0.778, 0.126, 0.392],
    4: [0.309, 0.757, 0.489, 0.445, 0.810, 0.122, 0.387],
    5: [0.304, 0.787, 0.483, 0.414, 0.827, 0.122, 0.382],
    6: [0.305, 0.801, 0.475, 0.409, 0.831, 0.121, 0.375],
    7: [0.306, 0.799, 0.475, 0.412, 0.835, 0.120, 0.372],
}


def led_rows():
    X = np.array([[int(s[i]) for s in LED_SEGMENTS] for i in range(10)])
    return X, np.arange(10)


def led_table():
    X, y = led_rows()
    return DiscreteTable(X, y, np.full(10, 0.1), tuple(f"X{j + 1}" for j in range(7)), exact=True)


def xor_table(m=2, k=0):
    p = m + k
    X = np.array(list(itertools.product([0, 1], repeat=p)))
    y = X[:, :m].sum(axis=1) % 2
    return DiscreteTable(X, y, np.full(len(X), 1 / len(X)), tuple(f"X{j + 1}" for j in range(p)),
                         exact=True)


def with_irrelevant(table, k):
    """Append k independent fair bits to an exact table (probabilities multiply)."""
    bits = np.array(list(itertools.product([0, 1], repeat=k)))
    n, b = table.n_rows, len(bits)
    X = np.hstack([np.repeat(table.X, b, axis=0), np.tile(bits, (n, 1))])
    w = np.repeat(table.weight, b) / b
    names = table.variables + tuple(f"X{table.n_features + j + 1}" for j in range(k))
    return DiscreteTable(X, np.repeat(table.y, b), w, names, exact=True)


def rows_of(table):
    """Rows as (x_tuple, y, weight) for the oracles."""
    return [(tuple(int(v) for v in x), int(y), float(w))
            for x, y, w in zip(table.X, table.y, table.weight)]
