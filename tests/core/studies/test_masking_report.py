"""Table 2 as a table, the paper's values, and the sentences of a masking study.

Expected values: the paper's text (its Table 2 block, as extracted from the PDF, shipped in
``tests/data/louppe2013_table2_text.txt``), Eqn 3 and every K by the brute-force
oracles of ``oracle.py`` (no varimp_core code), Theorem 2 (log2 10 for the LED).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _tables import TABLE2, TABLE2_EQN3, led_table, rows_of
from oracle import enumerate_trees, eqn3_bruteforce
from varimp_core.problems.registry import get_problem
from varimp_core.studies.masking import importance_vs_depth, importance_vs_k
from varimp_core.studies.masking_copy import add_noisy_copy
from varimp_core.studies.masking_report import (LOUPPE2013_TABLE2, LOUPPE2013_TABLE2_SUM,
                                                importance_table, order_text,
                                                summary_sentences, table2_mismatch,
                                                table2_sentences)

# Table 2's block of the text extracted from Louppe et al. (2013)'s PDF, verbatim
PAPER = Path(__file__).resolve().parents[2] / "data" / "louppe2013_table2_text.txt"
LED = dict(problem="led", irrelevant=0, copy="none", flip=0.1, k_semantics="id3", axis="K",
           max_features=1, max_depth="full")
COLUMNS = ["Eqn 3", *(f"K = {k}" for k in range(1, 8))]


@pytest.fixture(scope="module")
def table():
    return importance_table(importance_vs_k(led_table()), paper=True)


def test_the_paper_values_are_the_papers_text():
    """The text extracted from the PDF lists Table 2 column by column, except that the
    columns Eqn. 3 and K = 7 come interleaved in its first block."""
    text = PAPER.read_text()
    block = text[text.index("Eqn. 3 K = 1 K = 2"):text.index("Table 2: Variable importances")]
    numbers = re.findall(r"^\d\.\d{3}$", block, flags=re.M)
    ours = [v for column in LOUPPE2013_TABLE2.values() for v in column]
    assert Counter(numbers) == Counter([f"{v:.3f}" for v in ours] + ["3.321"] * 7)
    assert "(cid:80) 3.321" in block     # the eighth sum, behind the Sigma of the sum row
    for k in range(1, 7):                # every other column reads in order, then its sum
        column = "\n".join(f"{v:.3f}" for v in LOUPPE2013_TABLE2[k]) + "\n3.321\n"
        assert column in block, k
    first = numbers[:14]
    assert Counter(first) == Counter(f"{v:.3f}" for k in ("Eqn 3", 7)
                                     for v in LOUPPE2013_TABLE2[k])
    assert LOUPPE2013_TABLE2_SUM == 3.321


def test_table_cells_equal_the_oracles(table):
    rows = rows_of(led_table())
    body = table[table.variable != "Sum"]
    assert body.variable.tolist() == [f"X{j}" for j in range(1, 8)]
    np.testing.assert_allclose(body["Eqn 3"], eqn3_bruteforce(rows, 7), atol=1e-12)
    for k in range(1, 8):
        np.testing.assert_allclose(body[f"K = {k}"], enumerate_trees(rows, 7, k), atol=1e-9,
                                   err_msg=f"K = {k}")
    sums = table[table.variable == "Sum"].iloc[0]
    for c in COLUMNS:
        assert sums[c] == pytest.approx(math.log2(10), abs=1e-12)     # Theorem 2


def test_paper_columns_equal_the_tables_of_the_tests(table):
    body = table[table.variable != "Sum"]
    assert body["Eqn 3 (paper)"].tolist() == TABLE2_EQN3
    for k in range(1, 8):
        assert body[f"K = {k} (paper)"].tolist() == TABLE2[k]
    for c in COLUMNS:
        np.testing.assert_allclose(table[f"{c} (ours - paper)"], table[c] - table[f"{c} (paper)"])
        assert table[table.variable == "Sum"][f"{c} (paper)"].item() == 3.321
    # The paper truncates Eqn 3 (Theorem 1, exact) to 3 decimals.
    assert ((body["Eqn 3 (ours - paper)"] >= 0) & (body["Eqn 3 (ours - paper)"] < 1e-3)).all()


def test_table_sentences_name_the_largest_difference(table):
    (text,) = table2_sentences(table, None)
    # By hand from Table 2 and the oracle: X6 at K = 1, 0.2258 - 0.221.
    assert "0.0048 bits (X6, K = 1)" in text and "at most 0.0008 bits" in text


def test_without_the_papers_settings_only_our_values_and_a_sentence():
    assert table2_mismatch(LED) is None
    for change, words in [({"problem": "xor"}, "the problem is xor"),
                          ({"irrelevant": 2}, "2 irrelevant variables are added"),
                          ({"copy": "X5"}, "a noisy copy of X5 is added"),
                          ({"k_semantics": "sklearn"}, "scikit-learn"),
                          ({"axis": "depth"}, "against depth"),
                          ({"max_depth": 3}, "stop at depth 3")]:
        why = table2_mismatch({**LED, **change})
        assert words in why and why.endswith("so only our exact values are shown.")
    why = table2_mismatch({**LED, "irrelevant": 1, "copy": "X2"})
    assert "added and a noisy copy" in why

    xor = importance_vs_k(get_problem("xor:irrelevant=1").exact_table())
    t = importance_table(xor)
    assert list(t.columns) == ["variable", "K = 1", "K = 2", "K = 3"]
    # Eqn 3 for XOR: 1/2 bit per relevant bit at K = 1; Theorem 2: every column sums to 1.
    assert t["K = 1"].tolist() == pytest.approx([0.5, 0.5, 0.0, 1.0], abs=1e-12)
    with pytest.raises(ValueError, match="X1..X7 of the LED"):
        importance_table(xor, paper=True)
    depth = importance_table(importance_vs_depth(get_problem("xor").exact_table()))
    assert depth["depth = 1"].tolist() == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)


def _copy_rows():
    """The LED with a copy of X5 flipped with probability 0.1, by hand (oracle rows)."""
    return [(x + (c,), y, w * (0.9 if c == x[4] else 0.1))
            for x, y, w in rows_of(led_table()) for c in (0, 1)]


def test_the_order_sentence_lists_a_masked_copy():
    """At K = p the copy of X5 is masked: 0 bits (oracle), and the order still names it."""
    rows = _copy_rows()
    at_p = enumerate_trees(rows, 8, 8)
    assert at_p[7] == pytest.approx(0.0, abs=1e-12)
    table = add_noisy_copy(led_table(), "X5", 0.1)
    df = importance_vs_k(table, ks=[1, 8])
    last = order_text(df[df.K == 8])
    assert last.endswith("> X5' (0 bits)")
    assert sorted(re.findall(r"X\d'?", last)) == sorted(table.variables)
    settings = {**LED, "copy": "X5"}
    text = " ".join(summary_sentences(df, settings, information=math.log2(10),
                                     copy_name="X5'"))
    k1 = eqn3_bruteforce(rows, 8)
    assert f"at K=1 X5 has {k1[4]:.3f} and X5' {k1[7]:.3f} bits" in text
    assert f"at K=8 X5 has {at_p[4]:.3f} and X5' 0.000" in text and "masked by X5" in text
    order = text[text.index("The order changes"):]
    for v in table.variables:
        assert order.count(v + ("" if v.endswith("'") else " ")) >= 2, v


def test_ties_and_irrelevant_variables_in_the_order():
    df = importance_vs_k(get_problem("xor:irrelevant=2").exact_table(), ks=[1])
    assert order_text(df) == "X1 = X2 > X3 = X4 (0 bits)"     # Eqn 3: 1/2, 1/2, 0, 0


def test_summary_of_the_table2_study():
    df = importance_vs_k(led_table())
    text = " ".join(summary_sentences(df, LED, information=math.log2(10)))
    assert "3.3219 bits at every K (Theorem 2)" in text
    # Table 2: X4 above X3 at K = 1 (0.543 > 0.532), X3 above X4 at K = 7 (0.475 > 0.412)
    first, last = text.split("The order changes: ")[1].split(" at K=1, ")
    assert first.index("X4") < first.index("X3") and last.index("X3") < last.index("X4")
    assert pd.Series(TABLE2[1])[3] > TABLE2[1][2] and TABLE2[7][2] > TABLE2[7][3]
