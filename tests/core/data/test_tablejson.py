"""The JSON table codec restores an upload exactly (values written by hand, not by the code)."""

from __future__ import annotations

import doctest
import json
import math

import numpy as np
import pandas as pd
import pytest

from varimp_core.data import tablejson
from varimp_core.data.tablejson import table_from_json, table_to_json


def test_every_kind_of_column_comes_back_exactly():
    df = pd.DataFrame({
        "int": np.array([1, -2, 3], dtype="int64"),
        "small": np.array([1, 2, 3], dtype="uint8"),
        "flag": [True, False, True],
        "float": [0.1 + 0.2, 1e-300, 123456789.12345678],   # 17 significant digits
        "gaps": [1.5, float("nan"), float("inf")],
        "text": ["a", "=1+1", None],
    })
    back = table_from_json(table_to_json(df))
    assert list(back.columns) == list(df.columns)
    assert back["int"].dtype == np.int64 and back["int"].tolist() == [1, -2, 3]
    assert back["small"].dtype == np.uint8
    assert back["flag"].tolist() == [True, False, True]
    assert back["float"].tolist() == [0.30000000000000004, 1e-300, 123456789.12345678]
    assert back["gaps"][0] == 1.5 and math.isnan(back["gaps"][1]) and back["gaps"][2] == math.inf
    assert back["text"].tolist()[:2] == ["a", "=1+1"] and back["text"].isna().tolist()[2]


def test_the_text_is_plain_json_with_no_infinities():
    obj = json.loads(table_to_json(pd.DataFrame({"x": [float("-inf"), 2.0]})))
    assert obj["format"] == "varimp-table/1" and obj["data"] == [["-inf", 2.0]]


def test_duplicate_names_and_foreign_json_are_refused():
    with pytest.raises(ValueError, match="unique"):
        table_to_json(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(ValueError, match="Not a varimp table"):
        table_from_json('{"format": "pickle", "columns": []}')


def test_docstring_examples_run():
    assert doctest.testmod(tablejson).failed == 0
