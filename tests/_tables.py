"""Small tables for the core tests, written out by hand from the papers."""

import itertools

import numpy as np

from varimp_core.data.table import DiscreteTable
from varimp_core.studies.masking_report import LOUPPE2013_TABLE2

# Louppe et al. (2013), Table 1: segment values for y = 0..9.
LED_SEGMENTS = ("1011011111", "1000111011", "1111100111", "0011111011", "1010001010",
                "1101111111", "1011011011")
# Louppe et al. (2013), Table 2: the column "Eqn. 3" and the columns K = 1..7 (10,000
# randomized trees), truncated to 3 decimals by the paper.  The app shows them too, so they
# are written once, in the core; test_masking_report checks them against the paper's text.
TABLE2_EQN3 = list(LOUPPE2013_TABLE2["Eqn 3"])
TABLE2 = {k: list(LOUPPE2013_TABLE2[k]) for k in range(1, 8)}


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
