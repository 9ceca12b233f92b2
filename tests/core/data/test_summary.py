"""The Data page's summary and preview, against values worked out by hand."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from varimp_core.data.prepare import prepare_problem, prepare_table
from varimp_core.data.leaks import find_leaks
from varimp_core.data.summary import column_table, describe, display_cell, preview, rank_inputs
from varimp_core.problems.registry import get_problem


def test_xor_exact_by_hand():
    """Y = X1 xor X2 of two fair bits: 4 equally likely rows, H(Y) = 1 bit, 2 classes."""
    prepared = prepare_problem(get_problem("xor"))
    s = describe(prepared)
    assert (s["p"], s["N"], s["classes"], s["exact"], s["distinct_rows"]) == (2, None, 2, True, 4)
    assert s["H_Y"] == pytest.approx(1.0, abs=1e-12)
    assert (s["n_numeric"], s["n_discrete"], s["y_binned"]) == (0, 2, False)
    out = preview(prepared)
    assert out["kind"] == "exact" and out["columns"][-1] == "P(row)"
    assert len(out["rows"]) == 4 and [r[-1] for r in out["rows"]] == [0.25] * 4
    for *x, y, _ in out["rows"]:   # each shown row obeys y = x1 xor x2
        assert int(y) == int(x[0]) ^ int(x[1])


def test_upload_preview_shows_raw_rows_and_cuts_columns():
    raw = pd.DataFrame({"a": [0.123456789, 2.0, 3.0], "b": ["x", "y", "x"], "c": [1, 2, 3],
                        "y": ["p", "q", "p"]})
    prepared = prepare_table(raw, "y")
    out = preview(prepared, raw=raw, rows=2, columns=2)
    assert out["kind"] == "upload" and out["total_rows"] == 3 and out["n_inputs"] == 3
    assert out["columns"] == ["a", "b", "y"]
    assert out["rows"] == [[0.123457, "x", "p"], [2.0, "y", "q"]]   # 6 significant digits
    s = describe(prepared)
    assert (s["p"], s["N"], s["classes"]) == (3, 3, 2)
    assert s["H_Y"] == pytest.approx(-(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3))


def test_display_cells():
    assert display_cell(float("nan")) is None and display_cell(float("-inf")) == "-inf"
    assert display_cell(1 / 3) == 0.333333 and display_cell("=1") == "=1"


def test_preview_caption_says_which_rows_are_shown():
    from varimp_core.api import load_data
    from varimp_core.data.summary import preview

    # the facts each caption carries: rows shown of rows there, exact or sampled (and the
    # seed), inputs shown of inputs there
    led = preview(load_data(problem="led"), rows=4)
    assert re.search(r"\b4 of 10 rows\b", led["caption"])          # LED: 10 digits
    assert "exact distribution" in led["caption"] and "probability" in led["caption"]
    sample = preview(load_data(problem="xor", n_samples=50), rows=3, columns=1, seed=9)
    assert re.search(r"\b3 of 50 sampled rows\b", sample["caption"])
    assert "seed 9" in sample["caption"] and re.search(r"\b1 of 2 inputs\b", sample["caption"])
    assert "exact" not in sample["caption"]


def test_a_leak_is_a_question_in_the_column_list_and_ranks_first():
    """``copy`` equals y except on 2 rows of 200 (99% held out); ``noise`` is independent.
    The leak's row asks whether it is known before the outcome and carries its score."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 200)
    copy = np.where(np.isin(np.arange(200), [10, 110]), 1 - y, y)
    df = pd.DataFrame({"noise": rng.integers(0, 3, 200), "copy": copy, "y": y})
    d = prepare_table(df, "y")
    leaks = find_leaks(d)
    rows = {r["column"]: r for r in column_table(d, df.columns, leaks)}
    assert rows["copy"]["role"] == "input" and rows["copy"]["leak"] == pytest.approx(0.99)
    assert "known before the outcome" in rows["copy"]["reason"]
    assert "99.0%" in rows["copy"]["reason"]
    assert rows["noise"]["leak"] is None and rows["noise"]["reason"] == ""
    # I(copy; Y) is near H(Y) = 1 bit, I(noise; Y) near 0: copy ranks first
    assert rank_inputs(d) == ["copy", "noise"]


def test_xor_ranks_its_two_relevant_inputs_first():
    """XOR: each input alone carries 0 bits, yet X1 and X2 carry all of H(Y) together; the
    irrelevant bits carry nothing.  Exact (Eqn 3: 1/2 bit each) and sampled alike."""
    exact = prepare_problem(get_problem("xor:relevant=2,irrelevant=3"))
    assert set(rank_inputs(exact)[:2]) == {"X1", "X2"}
    sampled = prepare_problem(get_problem("xor:relevant=2,irrelevant=3"), n_samples=500)
    assert set(rank_inputs(sampled)[:2]) == {"X1", "X2"}


def test_scikit_learn_sets_show_floats_in_their_shortest_form():
    """Fisher's first iris flower is 5.1, 3.5, 1.4, 0.2 cm, a setosa (Fisher 1936): the
    preview shows those numbers as written, never 5.100000 (issue #26), and so does a float32
    column, whose 5.1 is 5.099999904632568 as a double."""
    from varimp_core.api import load_data

    rows = preview(load_data(problem="iris"), rows=1)["rows"]   # all 150 rows, in order
    assert [str(v) for v in rows[0]] == ["5.1", "3.5", "1.4", "0.2", "setosa"]
    assert str(display_cell(np.float32(5.1))) == "5.1"
    assert str(display_cell(np.float64(0.0380759064334241))) == "0.0380759"   # 6 digits
